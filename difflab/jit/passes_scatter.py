r"""Graph pass ``join``: adjoints of disjoint slices, summed, become one concatenation.

The VJP of indexing, ``y = x[t]``, scatters :math:`\bar y` into zeros shaped
like ``x`` (``scatter_add``).  A loop that reads ``x`` slice by slice (a
recurrent layer reading its inputs ``x[t]`` one time step at a time; an
attention layer cutting its packed projection weight into thirds) gets one
such scatter per slice in its backward, and the adjoint of ``x`` is their sum::

    v272 = scatter_add(v263, index=9, shape=(10, 8, 96))
    v284 = scatter_add(v273, index=8, shape=(10, 8, 96))
    v285 = add(v272, v284)
    ...                                     (ten scatters, nine adds)

Each scatter makes a whole array of zeros to write one slice, and each add
reads two whole arrays: ten steps make twenty passes over the whole array
to write it once.  When the slices are disjoint, every element of the sum
is one slice's element plus zeros, so the sum is the slices laid side by
side along their axis, one ``cat``::

    v272 = reshape(v263, shape=(1, 8, 96))  (an integer index: its axis back)
    ...
    v386 = cat(v385, v375, ..., v272, axis=0)

The numbers are the same: :math:`v + 0 = v` exactly, for every :math:`v`
but one: the adds turn :math:`-0` into :math:`+0`, the concatenation keeps
:math:`-0` (equal as numbers, ``==``; only the sign bit of a zero can differ).

A group is joined only when it is a tree of ``add`` nodes of the one shape
and dtype (no broadcasting) whose leaves are ``scatter_add`` nodes of that
shape, each index one integer or one slice of step 1 along the same axis
(the others whole: ``(:, t)``), pairwise disjoint and together the whole
axis, and every value inside the tree read by its parent alone.  Anything
else is left as it is.  (Gaps would need constants of zeros, made here on
the host: a graph replayed on a GPU could not concatenate them.)
"""

from __future__ import annotations

from typing import Any

from difflab.jit.graph import Graph, Node, Ref, _add_tree, _copy, _readers, _show
from difflab.ops import registry

_WHOLE = slice(None)


def _piece(node: Node, shape: tuple) -> tuple[int, int, int, bool] | None:
    """(axis, start, stop, integer) of a scatter's index along one axis, else None."""
    index = node.params.get("index")
    items = index if isinstance(index, tuple) else (index,)
    if len(items) > len(shape):
        return None
    found = None
    for axis, item in enumerate(items):
        if isinstance(item, slice) and item == _WHOLE:
            continue
        if found is not None:
            return None  # (two axes indexed)
        size = shape[axis]
        if type(item) is int and -size <= item < size:
            start = item % size
            found = (axis, start, start + 1, True)
        elif isinstance(item, slice) and item.step in (None, 1) and all(
                b is None or type(b) is int for b in (item.start, item.stop)):
            start, stop, _ = item.indices(size)
            if stop <= start:
                return None
            found = (axis, start, stop, False)
        else:
            return None  # (an index array, a step, None, ...)
    return found


def _scatter_leaf(root: Node) -> Any:
    """The leaves of a sum ``join_scatters`` rewrites: scatters of one slice into a zero
    tensor of ``root``'s shape (``graph._add_tree``'s ``leaf``)."""
    def leaf(node: Node) -> Node | None:
        if node.op_name == "scatter_add" and len(node.args) == 1 \
                and tuple(node.params.get("shape", ())) == tuple(root.shape):
            return node
        return None
    return leaf


def join_scatters(graph: Graph, show: bool = False) -> Graph:
    """Replace sums of scatters of disjoint slices by one concatenation of the slices.

    Parameters
    ----------
    graph : Graph
        The graph.
    show : bool, default False
        Print the listing before and after.

    Returns
    -------
    Graph
        A graph computing the same numbers (a ``-0.0`` the adds made ``+0.0``
        may stay ``-0.0``).

    Examples
    --------
    >>> import numpy as np, difflab as dl
    >>> x = dl.tensor(np.ones((3, 4)))
    >>> traced = dl.jit.trace(lambda x: (x[0] * x[1] * x[2]).sum(), x)
    >>> g = dl.jit.optimize(dl.jit.grad(traced.graph), ["fold", "cse", "dce"])
    >>> joined = dl.jit.passes_scatter.join_scatters(g)
    >>> sorted({n.op_name for n in g.nodes} - {n.op_name for n in joined.nodes})
    ['add', 'scatter_add']
    >>> bool((joined.run(np.arange(12.0).reshape(3, 4))[1]
    ...       == g.run(np.arange(12.0).reshape(3, 4))[1]).all())
    True
    """
    producers = {n.name: n for n in graph.nodes}
    readers = _readers(graph)
    replaced: dict[str, list[Node]] = {}  # a node's name -> what stands in its place
    gone: set[str] = set()
    for root in reversed(graph.nodes):
        tree = None if root.name in gone else _add_tree(root, producers, readers,
                                                        _scatter_leaf(root))
        joined = _joined(root, tree[0]) if tree else None
        if joined is not None:
            inside = tree[1]
            replaced.update(joined)
            replaced.update((node.name, []) for node in inside if node.op_name == "add")
            gone.update(n.name for n in inside)
    if not replaced:
        return graph
    nodes = [m for n in graph.nodes for m in replaced.get(n.name, [n])]
    result = _copy(graph, nodes, graph.outputs)
    _show("join scatters", graph, result, show)
    return result


def _joined(root: Node, leaves: list[Node]) -> dict[str, list[Node]] | None:
    """What stands in the place of each scatter and of the root (a ``cat``), or None when
    the scatters' slices are not the whole axis, once each."""
    pieces = [_piece(leaf, tuple(root.shape)) for leaf in leaves]
    if any(p is None for p in pieces) or len({p[0] for p in pieces}) != 1:
        return None
    order = sorted(range(len(leaves)), key=lambda k: pieces[k][1])
    axis = pieces[0][0]
    spans = [pieces[k][1:3] for k in order]
    if spans[0][0] != 0 or spans[-1][1] != root.shape[axis] or any(
            a[1] != b[0] for a, b in zip(spans, spans[1:])):
        return None  # (overlaps add up; gaps are zeros: neither is a concatenation)
    replaced: dict[str, list[Node]] = {}
    args: list[Any] = []
    for k in order:
        leaf = leaves[k]
        if pieces[k][3]:  # (an integer index dropped the axis: put it back)
            shape = tuple(root.shape[:axis]) + (1,) + tuple(root.shape[axis + 1:])
            replaced[leaf.name] = [Node(leaf.name, registry.PRIMITIVES["reshape"], leaf.args,
                                        {"shape": shape}, shape, root.dtype, (False,))]
            args.append(Ref(leaf.name))
        else:
            replaced[leaf.name] = []
            args.append(leaf.args[0])
    replaced[root.name] = [Node(root.name, registry.PRIMITIVES["cat"], tuple(args),
                                {"axis": axis}, root.shape, root.dtype, (False,) * len(args))]
    return replaced
