r"""Graph passes: rewrite a graph into a smaller one that computes the same outputs.

Once the whole computation is a list, a compiler can improve it before it
runs: the advantage of a static graph.  Each pass here takes a graph and
returns a new one (the original is left as it was), and with ``show=True``
prints the listing before and after, so you can switch them on one at a
time and see what each does.

``dce``  dead-code elimination
    A node is *live* if an output reads it, directly or through other live
    nodes (a random draw and a check of values are always live).  Walking the
    list backwards, keep the live nodes, drop the rest.
    (After a backward graph is built, the forward values that no derivative
    reads are dead, for instance.)

``cse``  common-subexpression elimination
    Two nodes applying the same primitive with the same settings to the same
    values compute the same array: keep the first, point the readers of the
    second to it.  ``x.sin() * x.sin()`` computes ``sin`` once.  (Equal
    constants are merged the same way.)

``fold``  constant folding
    A node that reads only constants has the same value on every run:
    compute it now, once, and store the result as a constant.  And a
    multiplication by a constant of ones (x · 1 = x exactly) is dropped.

``join``  scatters of disjoint slices, summed, joined into one concatenation
    (:mod:`difflab.jit.passes_scatter`): the adjoint of ``x`` read slice by
    slice (``x[t]`` at every step of a loop) is the slices' adjoints side by
    side, not a sum of arrays of zeros with one slice written each.

``pick``  a slice of a concatenation reads its piece
    (:mod:`difflab.jit.passes_pick`): ``stack(states)[:, -1]`` reads the
    last state, and the backward's slices of a scatter into zeros are the
    scattered values or zeros, which an add then drops (x + 0 = x).

``stack``  a sum of products aₜᵀ bₜ over a loop's steps made one product
    of the stacked terms (:mod:`difflab.jit.passes_stack`): **to 1e-12**, as
    the same products are added in another order.

The other passes change no number: each node left computes exactly what it
did (tests/jit/test_jit_passes.py checks it on random graphs; ``join`` may
keep a ``-0.0`` that the adds it removes made ``+0.0``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from difflab import backend
from difflab.jit.graph import Graph, GraphError, Input, Node, Ref, _copy, _show, substitute
from difflab.ops import registry

# ------------------------------------------------------------------------ dce


def dead_code_elimination(graph: Graph, show: bool = False) -> Graph:
    """Drop the nodes (and constants) that no output depends on.

    A random draw stays even when nothing reads it: it moves the generator on,
    so dropping it would change every later draw.  So does a check of values
    (``check_index``): eager code raises there whether or not the result is used.

    Parameters
    ----------
    graph : Graph
        The graph.
    show : bool, default False
        Print the listing before and after.

    Returns
    -------
    Graph

    Examples
    --------
    >>> import difflab as dl
    >>> traced = dl.jit.trace(lambda x: (x * x).sum(), dl.tensor([1.0, 2.0]))
    >>> g = dl.jit.grad(traced.graph)
    >>> len(dl.jit.dead_code_elimination(g).nodes) <= len(g.nodes)
    True
    """
    live = {o.name for o in graph.outputs if isinstance(o, Ref)}
    kept = []
    for node in reversed(graph.nodes):
        kept_anyway = node.op.random or node.op.validates  # (a draw, a check of values)
        if kept_anyway or any(name in live for name in node.outputs()):
            kept.append(node)
            live.update(r.name for r in node.refs())
    kept.reverse()
    # Arguments and parameters stay (the signature does not change); unread constants go.
    inputs = [i for i in graph.inputs if i.kind != "constant" or i.name in live]
    constants = {k: v for k, v in graph.constants.items() if k in live}
    result = _copy(graph, kept, graph.outputs, inputs, constants)
    _show("dead-code elimination", graph, result, show)
    return result


# ------------------------------------------------------------------------ cse


def _key(value: Any) -> Any:
    """A hashable description of an argument or setting; 2, 2.0 and True stay different."""
    if isinstance(value, Ref):
        return ("ref", value.name)
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, _key(v)) for k, v in value.items()))
    if isinstance(value, slice):
        return ("slice", _key((value.start, value.stop, value.step)))
    if isinstance(value, np.dtype):
        return ("dtype", value.str)
    if hasattr(value, "shape"):  # (an array left in the params: compare by identity)
        return ("array", id(value))
    return (type(value).__name__, repr(value))


def common_subexpression_elimination(graph: Graph, show: bool = False) -> Graph:
    """Compute each distinct (primitive, settings, inputs) once.

    Random draws are never merged: two dropout masks of one input differ.

    Parameters
    ----------
    graph : Graph
        The graph.
    show : bool, default False
        Print the listing before and after.

    Returns
    -------
    Graph

    Examples
    --------
    >>> import difflab as dl
    >>> traced = dl.jit.trace(lambda x: (x * x).sum(), dl.tensor([1.0, 2.0]))
    >>> g = dl.jit.grad(traced.graph)
    >>> len(g.nodes), len(dl.jit.common_subexpression_elimination(g).nodes)  # mul(v4, x) once
    (7, 6)
    """
    renamed: dict[str, Ref] = {}
    # Equal constants (same dtype, shape and bytes) first: then their readers match too.
    seen_constants: dict[tuple, str] = {}
    for i in graph.inputs:
        if i.kind == "constant":
            array = backend.to_numpy(graph.constants[i.name])
            # (one number broadcast: its bytes are that number's, not n copies of it)
            data = array.reshape(-1)[:1].tobytes() if array.size and not any(array.strides) \
                else array.tobytes()
            key = (array.dtype.str, array.shape, not any(array.strides), data)
            if key in seen_constants:
                renamed[i.name] = Ref(seen_constants[key])
            else:
                seen_constants[key] = i.name
    seen: dict[tuple, Node] = {}
    kept = []
    for node in graph.nodes:
        args = substitute(node.args, renamed)
        params = {k: substitute(v, renamed) for k, v in node.params.items()}
        # What forward saved depends on needs_input_grad; the result does not.  So the
        # needs tell two nodes apart only when the node has saved arrays of its own.
        key = (node.op_name, _key(args), _key(params),
               node.needs_input_grad if node.saved else None)
        first = None if node.op.random else seen.get(key)
        if first is not None and first.saved == node.saved:
            for mine, theirs in zip(node.outputs(), first.outputs()):
                renamed[mine] = Ref(theirs)
            continue
        rewritten = Node(node.name, node.op, args, params, node.shape, node.dtype,
                         node.needs_input_grad, node.saved)
        seen.setdefault(key, rewritten)
        kept.append(rewritten)
    outputs = [substitute(o, renamed) for o in graph.outputs]
    inputs = [i for i in graph.inputs if i.name not in renamed]
    constants = {k: v for k, v in graph.constants.items() if k not in renamed}
    result = _copy(graph, kept, outputs, inputs, constants)
    _show("common-subexpression elimination", graph, result, show)
    return result


# ----------------------------------------------------------------------- fold


def _times_one(node: Node, constants: dict, meta: dict) -> Ref | None:
    """The other factor, if ``node`` multiplies a value by a constant of ones.

    x · 1 is x exactly (NaN and ±0 included), so the node can go, provided the
    product has x's own shape and dtype (no broadcasting, no promotion).  The
    graph backward makes many: the seed ȳ = 1 of a sum, spread over its input.
    """
    if node.op_name != "mul" or node.saved or len(node.args) != 2:
        return None
    for one, other in (node.args, node.args[::-1]):
        if not (isinstance(other, Ref) and meta.get(other.name) == (
                tuple(node.shape), np.dtype(node.dtype))):
            continue
        if isinstance(one, Ref) and one.name in constants:
            array = constants[one.name]
            if np.dtype(array.dtype) == np.dtype(node.dtype) and bool(
                    (backend.to_numpy(array) == 1).all()):
                return other
        elif type(one) in (int, float) and one == 1:
            return other
    return None


def _reshape_source(node: Node, producers: dict, meta: dict) -> Ref | None:
    """What a ``reshape`` reshapes, looking through a reshape before it; None if not one.

    ``reshape(reshape(x, s1), s2)`` is ``reshape(x, s2)``: the elements keep
    their order whatever the shape in between (the VJPs of ``matmul`` and
    ``linear`` make such pairs).
    """
    if node.op_name != "reshape" or node.saved or len(node.args) != 1 \
            or not isinstance(node.args[0], Ref):
        return None
    source = node.args[0]
    before = producers.get(source.name)
    if before is not None and before.op_name == "reshape" and not before.saved \
            and len(before.args) == 1 and isinstance(before.args[0], Ref):
        source = before.args[0]
    return source if source.name in meta else None


def _simplified(node: Node, constants: dict, meta: dict, producers: dict) -> Node | Ref:
    """The value ``node`` computes when it needs no line (x * ones, a reshape to x's shape),
    else the node, a reshape of a reshape reading the first one's input."""
    factor = _times_one(node, constants, meta)
    if factor is not None:
        return factor
    source = _reshape_source(node, producers, meta)
    if source is not None and meta[source.name][0] == tuple(node.shape):
        return source  # (the same elements, in the same shape)
    if source is not None and source != node.args[0]:
        return Node(node.name, node.op, (source,), node.params, node.shape, node.dtype,
                    node.needs_input_grad, node.saved)
    return node


def _evaluate(node: Node, constants: dict, constant_names: set) -> list[tuple[str, Any]]:
    """Run a node whose inputs are all constants, once, here: ``(name, array)`` per output."""
    known = {n: constants[n] for n in constant_names}
    args = substitute(node.args, known)
    params = {k: substitute(v, known) for k, v in node.params.items()}
    sample = next(iter(constants.values()), None)
    xp = (backend.numpy_namespace if sample is None or isinstance(sample, np.ndarray)
          else backend.array_module(sample))
    ctx = registry.Context(node.needs_input_grad or (False,) * len(args))
    value = node.op.forward(ctx, xp, *args, **params)
    values = [value] + [ctx.saved[k] for k, m in enumerate(node.saved) if m is not None]
    return [(name, _one_number_broadcast(np.asarray(array) if isinstance(array, np.generic)
                                         else array))
            for name, array in zip(node.outputs(), values)]


def _one_number_broadcast(array: Any) -> Any:
    """A folded NumPy constant that holds one number everywhere, as that number broadcast
    (no memory: a loss's seed times 100 is n copies of 100.0; fusion reads it as a number)."""
    if type(array) is not np.ndarray or array.size <= 1 or not any(array.strides):
        return array
    first = array.reshape(-1)[0]
    if not bool((array == first).all()) or (array.dtype.kind in "fc" and np.isnan(first)):
        return array
    return np.broadcast_to(np.array(first), array.shape)


def constant_folding(graph: Graph, show: bool = False) -> Graph:
    """Compute now every node whose inputs are all constants; keep its value as a constant.

    A random draw is not folded: it is drawn anew at every run.

    Also drop multiplications by a constant of ones (``_times_one``) and
    reshapes to the shape a value already has (a reshape of a reshape reads
    the first one's input: ``_reshape_source``).

    Parameters
    ----------
    graph : Graph
        The graph.
    show : bool, default False
        Print the listing before and after.

    Returns
    -------
    Graph

    Examples
    --------
    >>> import difflab as dl
    >>> traced = dl.jit.trace(lambda x: (x * x).sum(), dl.tensor([1.0, 2.0]))
    >>> folded = dl.jit.constant_folding(dl.jit.grad(traced.graph))
    >>> len(folded.nodes) <= len(dl.jit.grad(traced.graph).nodes)
    True
    """
    constants = dict(graph.constants)
    constant_names = {i.name for i in graph.inputs if i.kind == "constant"}
    inputs = list(graph.inputs)
    meta = graph.meta()
    renamed: dict[str, Ref] = {}
    producers: dict[str, Node] = {}
    kept = []
    for node in graph.nodes:
        if renamed:
            node = Node(node.name, node.op, substitute(node.args, renamed),
                        {k: substitute(v, renamed) for k, v in node.params.items()},
                        node.shape, node.dtype, node.needs_input_grad, node.saved)
        refs = node.refs()
        if refs and not node.op.random and all(r.name in constant_names for r in refs):
            for name, array in _evaluate(node, constants, constant_names):
                constants[name] = array
                constant_names.add(name)
                inputs.append(Input(name, "constant", tuple(array.shape), np.dtype(array.dtype)))
            continue
        simpler = _simplified(node, constants, meta, producers)
        if isinstance(simpler, Ref):
            renamed[node.name] = simpler
        else:
            kept.append(simpler)
            producers[node.name] = simpler
    outputs = [substitute(o, renamed) for o in graph.outputs]
    result = _copy(graph, kept, outputs, inputs, constants)
    # The constants the folded nodes read may now be unread: dce tidies them.
    used = {r.name for n in kept for r in n.refs()} | {
        o.name for o in outputs if isinstance(o, Ref)}
    result.inputs = [i for i in result.inputs if i.kind != "constant" or i.name in used]
    result.constants = {k: v for k, v in result.constants.items() if k in used}
    _show("constant folding", graph, result, show)
    return result


#: The passes by short name, in the order :func:`optimize` applies them by default.
PASSES: dict[str, Callable[..., Graph]] = {
    "fold": constant_folding,
    "cse": common_subexpression_elimination,
    "dce": dead_code_elimination,
}


def _fuse(graph: Graph, show: bool = False) -> Graph:
    from difflab.jit.fusion import fuse

    return fuse(graph, show=show)


PASSES["fuse"] = _fuse


def _join(graph: Graph, show: bool = False) -> Graph:
    from difflab.jit.passes_scatter import join_scatters

    return join_scatters(graph, show=show)


PASSES["join"] = _join


def _stack(graph: Graph, show: bool = False) -> Graph:
    from difflab.jit.passes_stack import stack_products

    return stack_products(graph, show=show)


PASSES["stack"] = _stack


def _pick(graph: Graph, show: bool = False) -> Graph:
    from difflab.jit.passes_pick import pick_pieces

    return pick_pieces(graph, show=show)


PASSES["pick"] = _pick


def optimize(graph: Graph, passes: Sequence[str] = ("fold", "cse", "dce"),
             show: bool = False) -> Graph:
    """Apply the named passes in order (each printing before/after with ``show=True``).

    Parameters
    ----------
    graph : Graph
        The graph.
    passes : sequence of str, default ("fold", "cse", "dce")
        Names of :data:`PASSES` (``"fuse"`` too), applied in order.
    show : bool, default False
        Print each pass's listing before and after.

    Returns
    -------
    Graph
        A new graph with the same outputs (to rounding).

    Raises
    ------
    GraphError
        For an unknown pass name (the message lists the passes).

    Examples
    --------
    >>> import difflab as dl
    >>> traced = dl.jit.trace(lambda x: (x * x).sum(), dl.tensor([1.0, 2.0]))
    >>> print(dl.jit.optimize(dl.jit.grad(traced.graph)))
    graph grad_<lambda>(x: (2,) float32)
      1  v1 = mul(x, x)                           (2,)      float32
      2  v2 = sum(v1, axis=None, keepdims=False)  ()        float32
      3  v7 = add(x, x)                           (2,)      float32
      return v2, v7
    """
    if isinstance(passes, str):
        passes = [passes]
    for name in passes:
        if name not in PASSES:
            raise GraphError(f"no graph pass named {name!r}; the passes are "
                             f"{', '.join(PASSES)}")
        graph = PASSES[name](graph, show=show)
    return graph
