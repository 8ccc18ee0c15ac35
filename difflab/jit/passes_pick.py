r"""Graph pass ``pick``: a slice of a concatenation reads its piece; zeros added are dropped.

A recurrent layer returns its whole output sequence, one ``cat`` of its
steps' states; a model that reads only the last state (``out[:, -1]``)
leaves the rest of that array unread::

    v43 = cat(v33, v34, ..., v42, axis=0)            (10, 8, 32): ten steps' states
    v44 = permute(v43, axes=(1, 0, 2))               (8, 10, 32)
    v47 = index(v44, index=(:, -1))                  (8, 32): the last step's, v32

and its backward writes the adjoint of that slice into an array of zeros
(``scatter_add``), to cut it into ten slices again, nine of them zeros that
are then added to the other steps' adjoints.  The pass follows a basic
index (integers and slices of step 1) back through the views between it and
the array it cuts, and reads the elements it picks where they are made:

* ``permute``: the index's items move to the axes they came from (only when
  the axes it keeps stay in their order, so the elements do too);
* ``reshape`` that only inserts or drops axes of length 1: those items go;
* ``cat``: an index inside one piece picks from that piece;
* ``scatter_add`` of values into zeros: an index inside the written region
  picks from the values; one that misses it picks **zeros**.

The node becomes an ``index`` of what it picks from (none when it picks all
of it), and a ``reshape`` when the shape differs only by axes of length 1;
the ``cat``, ``permute`` and ``scatter_add`` it read are left to ``dce``
when nothing else reads them.  A value known to be zeros (picked from
outside a scatter's region, or a reshape, permute or slice of such a value)
added to another of the sum's own shape and dtype is dropped:
:math:`x + 0 = x`.  So are a reshape of a reshape (it reads the first one's
input) and a reshape to the shape its input has.  Last, a reshape that
merges the first two axes of a ``cat`` along axis 0 of pieces that each
added that axis of length 1 (``reshape(p, (1, 8, 96))``) is the ``cat`` of
the pieces themselves.

Every value picked is the same number (indexing copies no arithmetic): the
results are the same bits, but for one case the ``join`` pass shares:
:math:`-0 + 0` is :math:`+0`, so an add of zeros dropped keeps a
:math:`-0` the add made :math:`+0` (equal as numbers, ``==``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from difflab.jit.graph import Graph, Node, Ref, _copy, _show, substitute
from difflab.ops import registry

_ZEROS = "zeros"


def _items(index: Any, shape: tuple) -> list | None:
    """A basic index as one item per axis (integers made non-negative, slices of step 1
    as ``slice(start, stop)``), or None for any other index (arrays, steps, None, ...)."""
    items = index if isinstance(index, tuple) else (index,)
    if len(items) > len(shape):
        return None
    out: list = []
    for item, size in zip(items, shape):
        if type(item) is int:
            if not -size <= item < size:
                return None
            out.append(item % size)
        elif isinstance(item, slice) and item.step in (None, 1) and all(
                b is None or type(b) is int for b in (item.start, item.stop)):
            start, stop, _ = item.indices(size)
            if stop <= start:
                return None  # (picks nothing)
            out.append(slice(start, stop))
        else:
            return None
    out += [slice(0, size) for size in shape[len(items):]]
    return out


def _span(item: Any) -> tuple[int, int]:
    return (item, item + 1) if type(item) is int else (item.start, item.stop)


def _through_permute(items: list, node: Node) -> list | None:
    """The index on a permute's input that picks the same elements in the same order."""
    ndim = len(items)
    axes = [a % ndim for a in node.params["axes"]]
    before: list = [None] * ndim
    for j, a in enumerate(axes):
        before[a] = items[j]
    # The axes kept (slices of more than one element) must keep their order.
    kept = [axes[j] for j, item in enumerate(items)
            if type(item) is not int and item.stop - item.start > 1]
    return before if kept == sorted(kept) else None


def _through_reshape(items: list, shape: tuple, source: tuple) -> list | None:
    """The index on a reshape's input, when the reshape only adds or drops axes of length 1."""
    if [s for s in shape if s != 1] != [s for s in source if s != 1]:
        return None
    long_items = iter(item for item, size in zip(items, shape) if size != 1)
    return [next(long_items) if size != 1 else slice(0, 1) for size in source]


def _through_cat(items: list, node: Node, meta: dict) -> tuple[Ref, list] | None:
    """The piece of a cat the index lies in, with the index on that piece."""
    axis = node.params.get("axis", 0) % len(items)
    lo, hi = _span(items[axis])
    offset = 0
    for piece in node.args:
        if not isinstance(piece, Ref) or meta[piece.name][1] != np.dtype(node.dtype):
            return None  # (a piece the cat converts)
        size = meta[piece.name][0][axis]
        if offset <= lo and hi <= offset + size and hi > lo:
            moved = list(items)
            item = items[axis]
            moved[axis] = item - offset if type(item) is int else slice(lo - offset, hi - offset)
            return piece, moved
        offset += size
    return None


def _through_scatter(items: list, node: Node, meta: dict) -> tuple[Ref, list] | str | None:
    """What the index picks from a scatter of values into zeros: from the values (the
    index on them), zeros (it misses the written region), or None (partly both)."""
    values = node.args[0]
    region = _items(node.params.get("index"), tuple(node.shape))
    if region is None or not isinstance(values, Ref):
        return None
    spans = [(_span(i), _span(r)) for i, r in zip(items, region)]
    if any(hi <= r_lo or r_hi <= lo for (lo, hi), (r_lo, r_hi) in spans):
        return _ZEROS
    if not all(r_lo <= lo and hi <= r_hi for (lo, hi), (r_lo, r_hi) in spans):
        return None
    picked = []
    for item, r in zip(items, region):
        if type(r) is int:
            continue  # (the values have no such axis: the index picks their one element)
        picked.append(item - r.start if type(item) is int else
                      slice(item.start - r.start, item.stop - r.start))
    written = tuple(r.stop - r.start for r in region if type(r) is not int)
    if meta[values.name] != (written, np.dtype(node.dtype)):
        return None  # (values broadcast into the region, or of another dtype)
    return values, picked


def _follow(node: Node, producers: dict, meta: dict) -> tuple[Ref, list] | str | None:
    """Where the elements ``node`` (a basic index) picks are made: ``(value, its index)``,
    ``_ZEROS``, or None when the index is better left as it is (it reads no piece of a
    cat or a scatter: looking through views alone saves nothing)."""
    source = node.args[0]
    items = _items(node.params.get("index"), meta[source.name][0])
    if items is None:
        return None
    found, useful = None, False
    while True:
        made = producers.get(source.name)
        if made is None or made.saved or not made.args or not isinstance(made.args[0], Ref):
            return found
        step: Any = None
        through = False  # (a cat or a scatter passed: the pick saves something)
        if made.op_name == "permute" and len(made.args) == 1:
            moved = _through_permute(items, made)
            step = None if moved is None else (made.args[0], moved)
        elif made.op_name == "reshape" and len(made.args) == 1:
            moved = _through_reshape(items, tuple(made.shape), meta[made.args[0].name][0])
            step = None if moved is None else (made.args[0], moved)
        elif made.op_name == "cat":
            step = _through_cat(items, made, meta)
            through = True
        elif made.op_name == "scatter_add" and len(made.args) == 1:
            step = _through_scatter(items, made, meta)
            through = True
        if step is None:
            return found
        if step == _ZEROS:
            return _ZEROS
        source, items = step
        useful = useful or through
        if useful:
            found = step


def _picked(node: Node, source: Ref, items: list, meta: dict) -> list[Node] | Ref:
    """The nodes that compute ``node``'s value from ``source`` (index, then reshape where
    the shape differs by axes of length 1), or ``source`` itself."""
    shape = tuple(meta[source.name][0])
    whole = all(type(i) is slice and (i.start, i.stop) == (0, size)
                for i, size in zip(items, shape))
    picked_shape = tuple(i.stop - i.start for i in items if type(i) is slice)
    if whole and shape == tuple(node.shape):
        return source
    nodes: list[Node] = []
    value = source
    last = node.name if picked_shape == tuple(node.shape) else f"{node.name}_p"
    if not whole:
        index = tuple(i if type(i) is int else slice(i.start, i.stop) for i in items)
        nodes.append(Node(last, registry.PRIMITIVES["index"], (source,), {"index": index},
                          picked_shape, node.dtype, (False,)))
        value = Ref(last)
    if value is source or picked_shape != tuple(node.shape):
        nodes.append(Node(node.name, registry.PRIMITIVES["reshape"], (value,),
                          {"shape": tuple(node.shape)}, tuple(node.shape), node.dtype,
                          (False,)))
    return nodes


def _unit_pieces(node: Node, producers: dict, meta: dict) -> list | None:
    """For ``reshape(cat(reshape(p, (1,) + s), ..., axis=0), (n * s[0],) + s[1:])``:
    the pieces ``p`` (whose cat along axis 0 is the same array), else None."""
    cat = producers.get(node.args[0].name) if isinstance(node.args[0], Ref) else None
    if cat is None or cat.op_name != "cat" or cat.saved or cat.params.get("axis", 0) != 0:
        return None
    pieces = []
    for arg in cat.args:
        made = producers.get(arg.name) if isinstance(arg, Ref) else None
        if made is None or made.op_name != "reshape" or made.saved \
                or not isinstance(made.args[0], Ref):
            return None
        inner = tuple(meta[made.args[0].name][0])
        if not inner or tuple(made.shape) != (1,) + inner:
            return None
        pieces.append((made.args[0], inner))
    inner = pieces[0][1]
    if any(s != inner for _, s in pieces) or \
            tuple(node.shape) != (len(pieces) * inner[0],) + inner[1:]:
        return None
    return [p for p, _ in pieces]


class _Picking:
    """One walk of :func:`pick_pieces` over a graph: the nodes kept so far, the names
    that now stand for another value, and the values known to be all zeros."""

    def __init__(self, graph: Graph) -> None:
        self.meta = graph.meta()
        self.producers: dict[str, Node] = {}
        self.zeros: set[str] = set()
        self.renamed: dict[str, Ref] = {}
        self.nodes: list[Node] = []

    def keep(self, n: Node) -> None:
        self.nodes.append(n)
        self.producers[n.name] = n
        self.meta[n.name] = (tuple(n.shape), np.dtype(n.dtype))

    def visit(self, node: Node) -> None:
        """Keep ``node`` (its inputs renamed), or replace it by what it picks."""
        if self.renamed:
            node = Node(node.name, node.op, substitute(node.args, self.renamed),
                        {k: substitute(v, self.renamed) for k, v in node.params.items()},
                        node.shape, node.dtype, node.needs_input_grad, node.saved)
        first = node.args[0] if node.args else None
        if node.saved or not isinstance(first, Ref):
            self.keep(node)
            return
        op, unary = node.op_name, len(node.args) == 1
        if op in ("index", "reshape", "permute") and first.name in self.zeros and unary:
            self.zeros.add(node.name)  # (zeros, cut or moved: still zeros)
        if op == "index" and unary and first.name not in self.zeros and self._index(node):
            return
        if op == "reshape" and unary:
            node = self._reshape(node, first)
            if node is None:
                return
        if op == "add" and len(node.args) == 2 and all(isinstance(a, Ref) for a in node.args):
            self._add(node)
            return
        self.keep(node)

    def _index(self, node: Node) -> bool:
        """A slice read where its elements are made; False: the node stays."""
        found = _follow(node, self.producers, self.meta)
        if found == _ZEROS:
            self.zeros.add(node.name)
            return False
        if found is None:
            return False
        made = _picked(node, *found, self.meta)
        if isinstance(made, Ref):
            self.renamed[node.name] = made
        else:
            for n in made:
                self.keep(n)
        return True

    def _reshape(self, node: Node, first: Ref) -> Node | None:
        """A reshape of unit pieces, of its own shape or of a reshape: None if handled."""
        before = self.producers.get(first.name)
        if before is not None and before.op_name == "reshape" and not before.saved:
            first = before.args[0]  # (a reshape of a reshape: of the first's input)
        pieces = _unit_pieces(node, self.producers, self.meta)
        if pieces is not None:
            self.keep(Node(node.name, registry.PRIMITIVES["cat"], tuple(pieces), {"axis": 0},
                           node.shape, node.dtype, (False,) * len(pieces)))
            return None
        if isinstance(first, Ref) and tuple(self.meta[first.name][0]) == tuple(node.shape):
            self.renamed[node.name] = first
            if first.name in self.zeros:
                self.zeros.add(node.name)
            return None
        if first is not node.args[0]:
            node = Node(node.name, node.op, (first,), node.params, node.shape,
                        node.dtype, node.needs_input_grad, node.saved)
        return node

    def _add(self, node: Node) -> None:
        """An add of zeros is its other term (of the add's shape and dtype)."""
        a, b = node.args
        for zero, other in ((a, b), (b, a)):
            if zero.name in self.zeros and self.meta[other.name] == (
                    tuple(node.shape), np.dtype(node.dtype)):
                self.renamed[node.name] = other
                return
        self.keep(node)


def pick_pieces(graph: Graph, show: bool = False) -> Graph:
    """Read the elements a slice picks where they are made; drop adds of zeros.

    Parameters
    ----------
    graph : Graph
        The graph.
    show : bool, default False
        Print the listing before and after.

    Returns
    -------
    Graph
        A graph computing the same numbers (an add of zeros dropped may keep a
        ``-0.0`` that it made ``+0.0``).

    Examples
    --------
    >>> import numpy as np, difflab as dl
    >>> f = lambda x: dl.stack([x.sin(), x.cos(), x.exp()], dim=1)[:, -1] * 2.0
    >>> traced = dl.jit.trace(f, dl.tensor(np.ones(3)))
    >>> picked = dl.jit.optimize(traced.graph, ["pick", "dce"])
    >>> sorted(traced.graph.op_counts()), sorted(picked.op_counts())
    (['cat', 'cos', 'exp', 'index', 'mul', 'reshape', 'sin'], ['exp', 'mul'])
    >>> x = np.arange(3.0)
    >>> bool((picked.run(x)[0] == traced.graph.run(x)[0]).all())
    True
    """
    walk = _Picking(graph)
    for node in graph.nodes:
        walk.visit(node)
    nodes, renamed = walk.nodes, walk.renamed
    if not renamed and len(nodes) == len(graph.nodes) and all(
            m is n for m, n in zip(nodes, graph.nodes)):
        return graph
    outputs = [substitute(o, renamed) for o in graph.outputs]
    result = _copy(graph, nodes, outputs)
    _show("pick pieces", graph, result, show)
    return result


