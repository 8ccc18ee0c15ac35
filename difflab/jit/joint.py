r"""The graphs one guard of :func:`difflab.jit.compile` replays, and how the tape reaches them.

The trace of a compiled call is a *joint* graph: the forward pass and, when
something requires grad, its backward (the registry's VJPs recorded against
cotangent inputs ``g0, g1, ...``).  ``_build`` turns it into what a call
replays:

* a **loss** (one scalar output): the gradient is linear in its cotangent,
  g ∇f(x), so one graph computes f and ∇f together (the cotangent a constant
  1: a single fused loop where it can) and the backward only scales by g;
* other outputs: the joint graph is **cut** (``_split``): the forward
  graph returns the outputs and the forward values the backward reads, the
  backward graph takes those with the cotangents;
* nothing requires grad: the forward graph alone.

On the tape each differentiable output is one record, ``_CompiledOutput``,
whose VJP replays the backward (on tensors, from the joint graph, when the
backward is itself recorded: ``create_graph=True``).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from difflab import backend, fastpath, functions
from difflab.autograd.functional import is_implicit_seed
from difflab.jit.graph import Graph, Input, Ref, saved_owner, substitute
from difflab.jit.passes import optimize
from difflab.ops.primitive import Primitive
from difflab.tensor import Tensor

# (fuse: where it pays, see _optimize; stack reorders a sum: to 1e-12, see passes_stack.py;
# pick again after join and stack, which make cats of reshaped pieces)
DEFAULT_PASSES = ("fold", "cse", "pick", "join", "stack", "pick", "cse", "dce", "fuse")


@dataclass
class _Graphs:
    """What one guard compiled to: forward (and backward) graphs, ready to replay."""

    forward: Graph  # returns the outputs, then (training) the values the backward reads
    n_outputs: int
    output_spec: Any
    differentiable: list[int]  # positions of the outputs that have a gradient
    wrt: list[int]  # positions among the inputs of those that receive one
    backward: Graph | None = None  # (inputs, cotangents, saved) -> one gradient per wrt
    # forward and backward in one graph, evaluated on tensors for create_graph=True (after
    # a graph break: the whole path's, so the gradient reaches back through every graph)
    joint: Graph | None = None
    captured: list = field(default_factory=list)
    trace_seconds: float = 0.0
    scaled: bool = False  # forward also returns the loss's gradients, to be scaled by g
    # In-place writes the call makes (a BatchNorm's running statistics): the forward
    # returns their new values after the outputs; update_targets are the positions, among
    # the inputs, of the tensors they are written into.
    n_updates: int = 0
    update_targets: list[int] = field(default_factory=list)
    live: list[str] = field(default_factory=list)  # earlier graphs' values (graph breaks)
    # the forward replayed as a CUDA graph (dl.compile(mode="reduce-overhead"), made on its
    # first call on the GPU: jit/cuda_graphs.py): it lives and dies with these graphs
    graphed: Any = field(default=None, compare=False, repr=False)


def _ancestors(graph: Graph, refs: Sequence[Any]) -> set[str]:
    """The names of the nodes the values ``refs`` are computed from."""
    by_name = {n.name: n for n in graph.nodes}
    seen: set[str] = set()
    todo = [r.name for r in refs if isinstance(r, Ref)]
    while todo:
        name = todo.pop()
        name = saved_owner(name) or name
        if name in seen or name not in by_name:
            continue
        seen.add(name)
        todo.extend(r.name for r in by_name[name].refs())
    return seen


def _split(joint: Graph, n_outputs: int, passes: tuple) -> tuple[Graph, Graph]:
    """Cut the joint graph: forward = the outputs' ancestors, backward = the rest.

    The forward graph returns the outputs, then every forward value a backward
    node reads (``saved``); the backward graph takes those as inputs ``s_v3``
    (``s_v3_s0`` for ``v3.s0``) after the joint graph's own inputs.
    """
    outputs, grads = joint.outputs[:n_outputs], joint.outputs[n_outputs:]
    forward_names = _ancestors(joint, outputs)
    forward_nodes = [n for n in joint.nodes if n.name in forward_names]
    backward_nodes = [n for n in joint.nodes if n.name not in forward_names]
    produced = {name for n in forward_nodes for name in n.outputs()}
    saved: list[str] = []
    for r in [r for n in backward_nodes for r in n.refs()] + list(grads):
        if isinstance(r, Ref) and r.name in produced and r.name not in saved:
            saved.append(r.name)
    meta = joint.meta()
    rename = {name: Ref("s_" + name.replace(".", "_")) for name in saved}
    cotangent = [i for i in joint.inputs if i.name.startswith("g") and i.name[1:].isdigit()]
    primal = [i for i in joint.inputs if i not in cotangent]
    forward = Graph(joint.name, primal, joint.constants, forward_nodes,
                    list(outputs) + [Ref(name) for name in saved])
    backward_inputs = primal + cotangent + [
        Input(rename[name].name, "input", meta[name][0], meta[name][1]) for name in saved]
    nodes = []
    for n in backward_nodes:
        n = type(n)(n.name, n.op, substitute(n.args, rename),
                    {k: substitute(v, rename) for k, v in n.params.items()}, n.shape, n.dtype,
                    n.needs_input_grad, n.saved)
        nodes.append(n)
    backward = Graph(f"{joint.name}_backward", backward_inputs, joint.constants, nodes,
                     [substitute(g, rename) for g in grads])
    return _optimize(forward, passes), _optimize(backward, passes)


def _seeded(joint: Graph) -> Graph:
    """The joint graph with its one cotangent ``g0`` a constant 1: (outputs, gradients)."""
    inputs, constants = [], dict(joint.constants)
    for i in joint.inputs:
        if i.name == "g0":
            constants["g0"] = i.example  # (the ones traced with, on the outputs' device)
            i = Input("g0", "constant", i.shape, i.dtype)
        inputs.append(i)
    return Graph(joint.name, inputs, constants, joint.nodes, joint.outputs, joint.output_spec)


def _forward_only(joint: Graph, n_outputs: int, passes: tuple) -> Graph:
    graph = Graph(joint.name, joint.inputs, joint.constants, joint.nodes,
                  joint.outputs[:n_outputs])
    return _optimize(graph, passes)


def _optimize(graph: Graph, passes: tuple) -> Graph:
    """The passes; the default backend's ``"fuse"`` only where it pays
    (:func:`~difflab.jit.fusion.fusion_pays`: float64 lines; float32 ones with numba).

    Without numba a float32 group would run the tiled NumPy kernel, which
    measured slower than replaying the lines one by one at the sizes of
    teaching models.
    """
    from difflab.jit.fusion import fusion_pays

    if passes is DEFAULT_PASSES and not all(
            np.dtype(n.dtype).kind not in "fc" or fusion_pays(n.dtype) for n in graph.nodes):
        passes = tuple(p for p in passes if p != "fuse")
    return optimize(graph, passes)


# ------------------------------------------------------------------ the tape


class _Call:
    """One replayed forward pass that the tape may differentiate: what its backward reads."""

    __slots__ = ("graphs", "arrays", "outputs", "saved", "primals")

    def __init__(self, graphs: _Graphs, arrays: list, outputs: list, saved: list,
                 primals: list) -> None:
        self.graphs, self.arrays, self.outputs = graphs, arrays, outputs
        self.saved, self.primals = saved, primals

    def cotangents(self, k: int, g: Any, xp: Any) -> list:
        """The cotangent of every differentiable output: ``g`` for output k, zeros else."""
        out = []
        for j in self.graphs.differentiable:
            o = self.outputs[j]
            if j == k:
                out.append(xp.broadcast_to(xp.asarray(g, dtype=o.dtype), o.shape))
            else:
                out.append(xp.zeros(o.shape, o.dtype))
        return out

    def backward(self, k: int, g: Any, xp: Any) -> tuple:
        if self.graphs.scaled:  # (the gradients at g = 1 are saved: scale them)
            if is_implicit_seed(g) or isinstance(g, np.ndarray) and g.size == 1 \
                    and g.item() == 1:  # (a GPU's g is not read: the host would wait)
                return self._hand_over_saved()
            g = g.reshape(())
            return tuple(_fresh(s * g) for s in self._saved())
        program = self.graphs.backward.program()  # type: ignore[union-attr]
        arrays = self.arrays + self.cotangents(k, g, xp) + self.saved
        return tuple(program.run(arrays, check=False))

    def _saved(self) -> list:
        """The gradients at g = 1: saved, or computed again if handed over already
        (a second backward, ``retain_graph=True``)."""
        if self.saved is None:
            results = self.graphs.forward.program().run(self.arrays, check=False)
            return results[self.graphs.n_outputs:]
        return self.saved

    def _hand_over_saved(self) -> tuple:
        """The saved gradients, given away: nothing here reads them again, so a leaf
        may keep one that nothing else holds as its ``.grad`` without a copy (fastpath
        shortcut 6, :func:`hand_over`: not an input, a constant, a read-only
        broadcast or the same array twice, which a later ``+=`` would write through)."""
        saved = self._saved()
        if not fastpath.ENABLED:
            return tuple(saved)
        self.saved = None
        results = list(saved)
        del saved
        return tuple(hand_over(results))

    def backward_recorded(self, k: int, g: Tensor) -> tuple:
        """create_graph=True: the joint graph on tensors, so the gradient is on the tape."""
        joint = self.graphs.joint
        values: dict[str, Any] = {}
        inputs = [i for i in joint.inputs if i.kind != "constant"]  # type: ignore[union-attr]
        primal = iter(self.primals)
        xp = backend.array_module(self.outputs[k])
        cotangents = iter(Tensor._wrap(c) for c in self.cotangents(k, 0.0, xp))
        for i in inputs:
            if i.name.startswith("g") and i.name[1:].isdigit():
                values[i.name] = next(cotangents)
            else:
                values[i.name] = next(primal)
        position = self.graphs.differentiable.index(k)
        values[f"g{position}"] = g if g.shape == self.outputs[k].shape else \
            functions.broadcast_to(g, self.outputs[k].shape)
        results = joint.evaluate(values)  # type: ignore[union-attr]
        return tuple(results[self.graphs.n_outputs + self.graphs.n_updates:])


def _fresh(array: Any) -> Any:
    """An array made for this backward pass alone, marked so for the adjoint store."""
    return fastpath.FreshAdjoint(array) if fastpath.ENABLED else array


class _CompiledOutput(Primitive):
    """Output k of a replayed compiled call, as one record on the tape.

    Its inputs are the tensors that receive gradients; its forward hands
    back the output the forward graph already computed; its VJP replays the
    backward graph (on tensors when the backward is itself recorded).
    """

    name = "compiled"

    def __init__(self, call: _Call, k: int) -> None:
        self.call, self.k = call, k

    def forward(self, ctx: Any, xp: Any, *arrays: Any) -> Any:
        return self.call.outputs[self.k]

    def vjp(self, ctx: Any, xp: Any, g: Any, *saved: Any) -> tuple:
        if xp is functions:
            grads = self.call.backward_recorded(self.k, g)
        else:
            grads = self.call.backward(self.k, g, xp)
        return tuple(grads)


def _updates_after_outputs(joint: Graph, n: int) -> Graph:
    """The joint graph with its in-place updates (last) moved right after its n outputs."""
    count = len(joint.updates)
    if not count:
        return joint
    rest, written = joint.outputs[:-count], joint.outputs[-count:]
    return Graph(joint.name, joint.inputs, joint.constants, joint.nodes,
                 rest[:n] + written + rest[n:], joint.output_spec)


def _build(joint: Graph, tracer: Any, passes: tuple, seconds: float) -> _Graphs:
    """The graphs of one guard from its joint trace (the tracer says which outputs are
    differentiable, which tensors receive gradients, which were captured).

    The joint graph's in-place updates (last among its outputs) are returned by the
    forward graph right after the outputs: computing them is part of the forward pass.
    """
    n = joint.n_outputs  # type: ignore[attr-defined]
    live = getattr(joint, "live", [])
    n_up = len(joint.updates)
    arguments = [i.name for i in joint.inputs if i.kind != "constant"]
    targets = [arguments.index(name) for name in joint.updates]
    # (outputs, updates, gradients: the updates count as outputs from here on)
    whole = _updates_after_outputs(getattr(joint, "whole", joint), n)
    # The replayed backward is the first-order one (array rules), where the trace has it;
    # ``whole``, differentiable again, serves create_graph=True.
    joint = _updates_after_outputs(getattr(joint, "first_order", joint), n)
    differentiable = getattr(tracer, "differentiable", [])
    wrt_tensors = getattr(tracer, "wrt", [])
    captured = [(t, t.array.shape) for t in tracer.captured]
    extra = {"n_updates": n_up, "update_targets": targets, "live": live}
    if differentiable and wrt_tensors:
        order = {id(t): j for j, t in enumerate(tracer.primal_tensors)}  # type: ignore[attr-defined]
        wrt = [order[id(t)] for t in wrt_tensors]
        meta = joint.meta()
        loss = joint.outputs[differentiable[0]]
        if len(differentiable) == 1 and math.prod(meta[loss.name][0]) == 1:
            # A loss: its gradient is linear in the one cotangent, g ∇f(x).  One pass
            # computes f and ∇f together (a single fused loop where it can); the backward
            # only scales by g.  (It is computed even if no backward follows.)
            forward = _optimize(_seeded(joint), passes)
            return _Graphs(forward, n, joint.output_spec, differentiable, wrt, None, whole,
                           captured, seconds, scaled=True, **extra)
        forward, backward = _split(joint, n + n_up, passes)
        return _Graphs(forward, n, joint.output_spec, differentiable, wrt, backward, whole,
                       captured, seconds, **extra)
    forward = _forward_only(joint, n + n_up, passes)
    return _Graphs(forward, n, joint.output_spec, [], [], None, None, captured, seconds,
                   **extra)


def hand_over(results: list) -> list:
    """``results`` with each array that nothing else refers to marked as the pass's own.

    An array counts as the pass's own when it is a writeable, C-contiguous NumPy
    array referred to only by ``results`` (once), and either owns its memory or is
    a view of an array that only it refers to (the reshape of a fused kernel's
    output).  It is wrapped in :class:`~difflab.fastpath.FreshAdjoint`; every
    other entry is left as it is.  ``sys.getrefcount`` answers "referred to by
    nothing else"; ``HANDS_OVER`` is False, and nothing is marked, where
    this interpreter counts references in another way than the one checked at
    import.

    Examples
    --------
    >>> import numpy as np
    >>> from difflab.jit.joint import hand_over
    >>> kept = np.ones(2)
    >>> [type(r).__name__ for r in hand_over([np.zeros(3), kept, np.zeros(4).reshape(2, 2)])]
    ['FreshAdjoint', 'ndarray', 'FreshAdjoint']
    """
    if not HANDS_OVER:
        return results
    for i in range(len(results)):
        a = results[i]
        if type(a) is np.ndarray and sys.getrefcount(a) == _HELD_ONCE and _own_memory(a):
            results[i] = fastpath.FreshAdjoint(a)
    return results


def _own_memory(a: np.ndarray) -> bool:
    """Whether ``a`` (referred to once) reaches memory nothing else refers to."""
    flags = a.flags
    if not (flags.writeable and flags.c_contiguous):
        return False
    base = a.base
    if base is None:
        return True
    return type(base) is np.ndarray and base.base is None and \
        sys.getrefcount(base) == _BASE_HELD_ONCE


# The reference counts of an array held by the results list alone (in hand_over's loop)
# and of a base held by its one view alone (in _own_memory), as CPython counts them;
# checked at import by _check_counts.
_HELD_ONCE, _BASE_HELD_ONCE = 3, 3
HANDS_OVER = True


def _check_counts() -> bool:
    """Whether :func:`hand_over` marks exactly the arrays held by nothing else here."""
    shared, shared_base = np.ones(2), np.ones(4)
    results = hand_over([np.ones(2), shared, np.ones(4).reshape(2, 2), shared_base.reshape(2, 2),
                         np.ones(3)[::2], np.broadcast_to(np.ones(1), (3,))])
    marked = [type(r) is fastpath.FreshAdjoint for r in results]
    return marked == [True, False, True, False, False, False]


HANDS_OVER = fastpath.ENABLED and _check_counts()  # (the plain store takes no FreshAdjoint)
