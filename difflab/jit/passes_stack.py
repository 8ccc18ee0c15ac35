r"""Graph pass ``stack``: a sum of matrix products over time steps becomes one product.

A weight used at every step of a loop (a recurrent layer's :math:`W_{hh}`,
read once per time step) gets one gradient term per step in the backward,
and its gradient is their sum:

.. math::
    \bar W = \sum_{t=1}^{T} A_t^\top B_t, \qquad \bar b = \sum_t \sum_i (A_t)_{i,:},

written as T small products and T sums, each ``(8, 96)ᵀ (8, 32)`` for a GRU
of 32 hidden units and batch 8, with T - 1 additions after them.  It is
also one product of the terms stacked along the rows, as each entry of
:math:`A^\top B` sums over the rows:

.. math::
    \bar W = \begin{pmatrix} A_1 \\ \vdots \\ A_T \end{pmatrix}^\top
             \begin{pmatrix} B_1 \\ \vdots \\ B_T \end{pmatrix},
    \qquad \bar b = \sum_i \begin{pmatrix} A_1 \\ \vdots \\ A_T \end{pmatrix}_{i,:}.

Three calls instead of 2T (one ``cat`` of each operand and one ``matmul``),
on arrays large enough for the matrix library to work well.

**The numbers change in the last bits**: the same products are added in
another order (BLAS's, over all the rows at once, instead of each step's
sum, then the steps' sums in turn).  The results agree to the rounding of
a sum, a few units in the last place (the tests compare with a relative
tolerance of 1e-12).  So ``stack`` is not among the passes that change no
number (:mod:`difflab.jit.passes`); ``dl.compile`` applies it by default,
as its training may differ from eager training to 1e-12 (the issue's
bound), and :func:`~difflab.jit.optimize` only when named.

A group is stacked when it is a tree of ``add`` nodes of one shape and
dtype whose leaves are all ``matmul(permute(a, (1, 0)), b)`` with ``a`` and
``b`` matrices, or all ``sum(a, axis=0)`` of matrices, at least two, and
every value inside the tree read by its parent alone.  (A ``cse`` after it
merges the two concatenations of the same terms that a weight's and its
bias's gradients make.)
"""

from __future__ import annotations

from difflab.jit.graph import Graph, Node, Ref, _add_tree, _copy, _readers, _show
from difflab.ops import registry


def _term(node: Node, producers: dict, meta: dict) -> tuple[str, tuple] | None:
    """("product", (a, b)) for aᵀ b of matrices, ("sum", (a,)) for a row sum, else None."""
    if node.saved or node.params.keys() - {"axis", "keepdims"}:
        return None
    if node.op_name == "matmul" and len(node.args) == 2 and all(
            isinstance(r, Ref) for r in node.args):
        left, b = node.args
        permute = producers.get(left.name)
        if permute is None or permute.op_name != "permute" or permute.saved \
                or tuple(permute.params.get("axes", ())) not in ((1, 0), (-1, -2), (1, -2),
                                                                  (-1, 0)):
            return None
        (a,) = permute.args if len(permute.args) == 1 else (None,)
        if not isinstance(a, Ref) or len(meta[a.name][0]) != 2 or len(meta[b.name][0]) != 2:
            return None
        return "product", (a, b)
    if node.op_name == "sum" and len(node.args) == 1 and isinstance(node.args[0], Ref):
        axis = node.params.get("axis")
        if axis in (0, (0,), -2, (-2,)) and not node.params.get("keepdims") \
                and len(meta[node.args[0].name][0]) == 2:
            return "sum", (node.args[0],)
    return None


def stack_products(graph: Graph, show: bool = False) -> Graph:
    """Replace sums of products ``aₜᵀ bₜ`` (and of row sums of ``aₜ``) by one product of
    the stacked terms (to 1e-12: the additions are done in another order).

    Parameters
    ----------
    graph : Graph
        The graph.
    show : bool, default False
        Print the listing before and after.

    Returns
    -------
    Graph
        A graph computing the same sums, to the rounding of their order.

    Examples
    --------
    >>> import numpy as np, difflab as dl
    >>> from difflab.jit.passes_stack import stack_products
    >>> w = dl.tensor(np.full((3, 3), 0.1))
    >>> def f(w, h=dl.tensor(np.ones((4, 3)))):
    ...     for _ in range(3):
    ...         h = (h @ w).tanh()
    ...     return h.sum()
    >>> g = dl.jit.optimize(dl.jit.grad(dl.jit.trace(f, w).graph), ["fold", "cse", "dce"])
    >>> stacked = stack_products(g)
    >>> [n.op_name for n in g.nodes].count("matmul") > [n.op_name for n in
    ...                                                 stacked.nodes].count("matmul")
    True
    >>> w0 = np.random.default_rng(0).normal(size=(3, 3))
    >>> bool(np.allclose(g.run(w0)[1], stacked.run(w0)[1], rtol=1e-12, atol=0))
    True
    """
    producers = {n.name: n for n in graph.nodes}
    readers, meta = _readers(graph), graph.meta()
    replaced: dict[str, list[Node]] = {}
    gone: set[str] = set()
    for root in reversed(graph.nodes):
        tree = None if root.name in gone else _add_tree(
            root, producers, readers, lambda node: _term(node, producers, meta))
        if tree is None or len({kind for kind, _ in tree[0]}) != 1:
            continue
        terms, inside = tree
        replaced[root.name] = _stacked(root, terms, meta)
        for node in inside:
            replaced[node.name] = []
        gone.update(n.name for n in inside)
    if not replaced:
        return graph
    nodes = [m for n in graph.nodes for m in replaced.get(n.name, [n])]
    result = _copy(graph, nodes, graph.outputs)
    _show("stack products", graph, result, show)
    return result


def _stacked(root: Node, terms: list, meta: dict) -> list[Node]:
    """The nodes computing ``root`` from the stacked terms (the last one named as root)."""
    cat, dtype = registry.PRIMITIVES["cat"], root.dtype

    def stacked(name: str, refs: tuple) -> Node:
        shapes = [meta[r.name][0] for r in refs]
        shape = (sum(s[0] for s in shapes), shapes[0][1])
        return Node(name, cat, refs, {"axis": 0}, shape, dtype, (False,) * len(refs))
    a = stacked(f"{root.name}_a", tuple(args[0] for _, args in terms))
    if terms[0][0] == "sum":
        return [a, Node(root.name, registry.PRIMITIVES["sum"], (Ref(a.name),),
                        {"axis": 0, "keepdims": False}, root.shape, dtype, (False,))]
    b = stacked(f"{root.name}_b", tuple(args[1] for _, args in terms))
    t = Node(f"{root.name}_t", registry.PRIMITIVES["permute"], (Ref(a.name),),
             {"axes": (1, 0)}, a.shape[::-1], dtype, (False,))
    return [a, b, t, Node(root.name, registry.PRIMITIVES["matmul"], (Ref(t.name), Ref(b.name)),
                          {}, root.shape, dtype, (False, False))]
