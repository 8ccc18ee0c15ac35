r"""Compiled: reverse and forward mode on a static graph, traced once and replayed.

The tape (:mod:`difflab.diff.reverse`) records f anew at every call and
walks the record one primitive at a time.  This method traces f once per
input shape (:func:`difflab.jit.trace`), builds the derivative *as another
graph* from the same registry rules, optimizes it (constant folding,
common subexpressions, dead code) and replays it on plain arrays:

=============  ===================================================================
derivative     graph
=============  ===================================================================
``grad``       ``jit.grad(f)``: the backward graph (reverse mode)
``jacobian``   n ≤ m: ``jit.jvp(f)`` with the n directions of the identity, one
               pass (forward mode, batched); n > m: ``jit.jvp`` in u of the
               backward graph of ``sum(f(x) * u)`` with the m directions of the
               identity: all m rows uᵀJ in one pass (a batched reverse pass)
``hessian``    ``jit.jvp(jit.grad(f))`` with the identity: forward over reverse,
               every column of H in one pass
``jvp``        ``jit.jvp(f)`` with the tangent as an argument
``vjp``        ``jit.grad`` of ``sum(f(x) * u)`` with u as an argument
=============  ===================================================================

The seeds (the identity) are constants of the graph, so constant folding
does the algebra a hand-written Hessian would: ``A @ I`` becomes ``A``
before the first run.  The numbers are the registry's rules, the same as
forward and reverse mode give, to rounding.

What tracing cannot see is Python control flow on values: a branch on
``x > 0`` is traced once and baked in (tracing warns, naming the line).
Use this method for functions without value-dependent branches (the
tape-based methods follow every branch).  A derivative nested inside
another one (f's argument is itself a dual number or a recorded tensor) is
taken by reverse mode on the tape.
"""

from __future__ import annotations

import math
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from difflab import backend, fastpath, jit
from difflab.diff import compiled_steady
from difflab.diff.forward import Dual, Forward
from difflab.diff.interface import (
    Cost,
    Differentiator,
    check_output,
    is_plain,
    poison,
    require_scalar,
)
from difflab.diff.reverse import Reverse
from difflab.jit import fusion, standins
from difflab.jit.tracing import (
    _captured,
    _is_array,
    _module_state,
    _signature,
    trace_graph,
    unflatten,
)
from difflab.tensor import Tensor


class _Compiled:
    """One derivative graph ready to replay, with what its caller needs to read it."""

    def __init__(self, graph: jit.Graph, f: Callable, **info: Any) -> None:
        self.graph = graph
        self.program = graph.program()
        self.f = f
        self.info = info
        self.captured = _captured(graph)  # (a closure's weights, read at each call)

    def run(self, arrays: list) -> list:
        state = {name: t.array for name, t in _module_state(self.f) + self.captured}
        return self.program.run(arrays, state, check=False)

    def jacobian_blocks(self, arrays: list, shapes: list) -> tuple[Any, list]:
        """f's value and its Jacobian with respect to each argument (a Jacobian graph's).

        The blocks have the shapes ``f(x).shape + shape`` of each argument's ``shape``.
        """
        out_shape = self.info["out_shape"]
        if self.info["mode"] == "forward":
            value, dots = self.run(arrays)
            # dots[d] = ∂f/∂(entry d); a Jacobian puts the output axes first.
            J = dots.reshape((-1, _size(out_shape))).T
            blocks, start = [], 0
            for s in shapes:
                blocks.append(J[:, start:start + _size(s)].reshape(out_shape + s))
                start += _size(s)
            return value, blocks
        u = backend.array_module(arrays[0]).zeros(out_shape)
        value, *rows = self.run(arrays + [u])
        return value, [r.reshape(out_shape + s) for r, s in zip(rows, shapes)]


def _graph_input(a: Any) -> bool:
    """Whether tracing makes this argument a graph input (a tensor or an array)."""
    return isinstance(a, Tensor) or _is_array(a)


def _arrays(args: list) -> list:
    """The arrays a graph traced on ``args`` takes, in order."""
    return [a.array if isinstance(a, Tensor) else a for a in args if _graph_input(a)]


def _input_names(graph: jit.Graph, args: list, nums: tuple) -> list[str]:
    """The graph's names for the arguments ``nums`` (tensors and arrays became inputs in order)."""
    names = iter(i.name for i in graph.arguments())
    position = {j: next(names) for j, a in enumerate(args) if _graph_input(a)}
    return [position[i] for i in nums]


def _output_shape(graph: jit.Graph, k: int = 0) -> tuple:
    out = graph.outputs[k]
    return tuple(graph.meta()[out.name][0]) if isinstance(out, jit.Ref) else ()


def _size(shape: tuple) -> int:
    return math.prod(shape)


def _identity_seeds(like: Any, names: list[str], shapes: list[tuple]) -> dict:
    """The rows of the N x N identity, N = Σ sizes, one block of columns per argument.

    Direction d moves entry d of the arguments laid end to end, so the tangents
    of one pass are the derivatives along every entry of every argument.
    """
    sizes = [_size(s) for s in shapes]
    eye = backend.array_module(like).eye(sum(sizes))
    seeds, start = {}, 0
    for name, shape, size in zip(names, shapes, sizes):
        seeds[name] = eye[:, start:start + size].reshape((sum(sizes),) + tuple(shape))
        start += size
    return seeds


def _keep(graph: jit.Graph, outputs: list[int]) -> jit.Graph:
    """The graph returning only the outputs at these positions (dce drops the rest)."""
    kept = jit.Graph(graph.name, graph.inputs, graph.constants, graph.nodes,
                     [graph.outputs[k] for k in outputs], ["tuple", ["T"] * len(outputs)])
    return jit.dead_code_elimination(kept)


def _traced(f: Callable, args: list, transform: str) -> jit.Graph:
    """f's graph at these arguments; f must return one array (as for every method)."""
    graph = trace_graph(f, args)
    if graph.output_spec != "T":
        check_output(unflatten(graph.output_spec, graph.outputs), transform)
    return graph


def _require_scalar_output(graph: jit.Graph, transform: str) -> None:
    require_scalar(np.empty(_output_shape(graph)), transform)


def _build_shape_only(build: Callable[[], tuple], arrays: list) -> tuple:
    """``build()`` traced on stand-ins (:mod:`difflab.jit.standins`): the same graph without
    holding the values; on the real arrays if anything there needs them (or fails)."""
    nbytes = sum(getattr(a, "nbytes", 0) for a in arrays)
    built = standins.build_on_stand_ins(build, lambda built: [built[0]], nbytes)
    return build() if built is None else built


class Compiled(Differentiator):
    """Derivatives as static graphs: traced once per input signature, replayed after.

    Parameters
    ----------
    passes : the graph passes applied to each derivative graph
        (:data:`difflab.jit.PASSES`).  The default ends with ``"fuse"``: runs of
        elementwise lines become one generated kernel (numba when installed, tiled
        NumPy otherwise), which equals the unfused graph to rounding and makes
        fewer passes over memory; pass ``("fold", "cse", "dce")`` to replay the
        graph line by line.
    """

    name = "compiled"

    def __init__(self, passes: tuple[str, ...] = ("fold", "cse", "dce", "fuse")) -> None:
        for name in passes:
            if name not in jit.PASSES:
                raise ValueError(f"unknown graph pass {name!r}; the passes are "
                                 f"{', '.join(jit.PASSES)}")
        self.passes = tuple(passes)
        # f -> {(what, argnums, signature of the arguments): _Compiled}; gone with f.
        self._cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._forward, self._reverse = Forward(), Reverse()  # for nested derivatives

    def _compiled(self, what: str, f: Callable, args: list, nums: tuple, cost: Cost,
                  build: Callable[[], tuple]) -> _Compiled | None:
        """The graph for (what, f, nums, the arguments' signature): built on first use.

        None if no graph can be built (an operation of f has no forward-mode rule):
        the caller then uses the tape, and the cost's notes say why.
        """
        try:
            per_f = self._cache.setdefault(f, {})
        except TypeError:  # (f cannot be weakly referenced: no caching)
            per_f = {}
        key = (what, nums, _signature(args))
        found = per_f.get(key)
        start = time.perf_counter()
        if found is None:
            try:
                graph, info = _build_shape_only(build, _arrays(args))
            except jit.GraphError as exc:
                found = per_f[key] = str(exc)
            else:
                with fusion.fusing_for(_arrays(args)):  # (kernels for the arrays' device)
                    optimized = jit.optimize(graph, self.passes)
                found = per_f[key] = _Compiled(optimized, f, **info)
        if isinstance(found, str):
            cost.notes.append(f"no graph for this derivative ({found}): computed on the tape")
            return None
        cost.add("compile_seconds", time.perf_counter() - start)
        cost.evaluations += 1
        cost.graph_nodes = len(found.graph.nodes)
        return found

    def grad(self, f: Callable, argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
        """∇f, as every method's; later calls like the first replay its graph directly."""
        plain = super().grad(f, argnums)
        if not fastpath.ENABLED:
            return plain
        return compiled_steady.SteadyGradient(self, f, argnums, plain)

    def jacobian(self, f: Callable, argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
        """∂f/∂x, as every method's; later calls like the first replay its graph directly."""
        plain = super().jacobian(f, argnums)
        if not fastpath.ENABLED:
            return plain
        return compiled_steady.SteadyGradient(self, f, argnums, plain, "jacobian")

    def hessian(self, f: Callable, argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
        """∇²f, as every method's; later calls like the first replay its graph directly."""
        plain = super().hessian(f, argnums)
        if not fastpath.ENABLED:
            return plain
        return compiled_steady.SteadyGradient(self, f, argnums, plain, "hessian")

    def _taped(self, args: list) -> Differentiator | None:
        """The tape-based method to use if f's arguments belong to an enclosing derivative.

        Dual numbers of an outer forward-mode derivative: forward mode; tensors an
        outer reverse-mode derivative records: reverse mode.  None for plain values.
        """
        if any(isinstance(a, Dual) for a in args):
            return self._forward
        if any(not (is_plain(a) or isinstance(a, (Tensor, str)) or a is None)
               or (isinstance(a, Tensor) and a.requires_grad) for a in args):
            return self._reverse
        return None

    # ------------------------------------------------------------------ hooks
    def _jacobian(self, f: Callable, args: list, i: int, cost: Cost,
                  require_scalar_: bool) -> tuple[Any, Any]:
        value, (J,) = self._jacobians(f, args, (i,), cost, require_scalar_)
        return value, J

    def _jacobians(self, f: Callable, args: list, nums: tuple, cost: Cost,
                   require_scalar_: bool) -> tuple[Any, list]:
        taped = self._taped(args)
        if taped is not None:
            return taped._jacobians(f, args, nums, cost, require_scalar_)
        shapes = [tuple(args[i].shape) for i in nums]
        arrays = _arrays(args)
        if require_scalar_:
            compiled = self._compiled("grad", f, args, nums, cost,
                                      lambda: self._gradient(f, args, nums))
            if compiled is None:
                return self._reverse._jacobians(f, args, nums, cost, require_scalar_)
            value, *grads = compiled.run(arrays)
            return value, [g.reshape(s) for g, s in zip(grads, shapes)]
        compiled = self._compiled("jacobian", f, args, nums, cost,
                                  lambda: self._jacobian_graph(f, args, nums, shapes))
        if compiled is None:
            return self._reverse._jacobians(f, args, nums, cost, require_scalar_)
        value, blocks = compiled.jacobian_blocks(arrays, shapes)
        return value, [poison(value, J) for J in blocks]

    def _gradient(self, f: Callable, args: list, nums: tuple) -> tuple:
        graph = _traced(f, args, "grad")
        _require_scalar_output(graph, "grad")
        return jit.grad(graph, wrt=_input_names(graph, args, nums)), {}

    def _jacobian_graph(self, f: Callable, args: list, nums: tuple, shapes: list) -> tuple:
        """Forward mode if the inputs are no more than the outputs, else batched reverse."""
        graph = _traced(f, args, "jacobian")
        out_shape = _output_shape(graph)
        n, m = sum(_size(s) for s in shapes), _size(out_shape)
        if n <= m:
            names = _input_names(graph, args, nums)
            seeds = _identity_seeds(_arrays(args)[0], names, shapes)
            tangents = jit.jvp(graph, wrt=names, directions=n, seeds=seeds)
            # Outputs: f's outputs, then their tangents.
            return (_keep(tangents, [0, len(graph.outputs)]),
                    {"mode": "forward", "out_shape": out_shape})

        def weighted(*xs_and_u: Any) -> Any:  # uᵀ f(x), and f(x) itself
            *xs, u = xs_and_u
            y = f(*xs)
            return (y * u).sum(), y

        u = backend.array_module(_arrays(args)[0]).zeros(out_shape)
        pullback = trace_graph(weighted, list(args) + [u], name=f"vjp_{graph.name}")
        names = _input_names(pullback, list(args) + [u], nums + (len(args),))
        backward = jit.grad(pullback, wrt=names[:-1])  # (uᵀf, f, the gradients uᵀJ)
        seeds = {names[-1]: backend.array_module(u).eye(m).reshape((m,) + out_shape)}
        rows = jit.jvp(backward, wrt=names[-1:], directions=m, seeds=seeds)
        # uᵀJ is linear in u: its tangent along e_j is row j of J, for every j at once.
        k = len(nums)
        first_tangent = 2 + k
        gradient_tangents = list(range(first_tangent + 2, first_tangent + 2 + k))
        return _keep(rows, [1] + gradient_tangents), {"mode": "reverse", "out_shape": out_shape}

    def _hessian(self, f: Callable, args: list, i: int, cost: Cost) -> Any:
        return self._hessians(f, args, (i,), cost)[1][0]

    def _hessians(self, f: Callable, args: list, nums: tuple, cost: Cost) -> tuple[Any, list]:
        """Forward over reverse: the backward graph's tangents along the identity."""
        taped = self._taped(args)
        if taped is not None:
            return taped._hessians(f, args, nums, cost)
        shapes = [tuple(args[i].shape) for i in nums]

        def build() -> tuple:
            graph = _traced(f, args, "hessian")
            _require_scalar_output(graph, "hessian")
            names = _input_names(graph, args, nums)
            backward = jit.grad(graph, wrt=names)  # (f, the gradients)
            seeds = _identity_seeds(_arrays(args)[0], names, shapes)
            both = jit.jvp(backward, wrt=names, directions=sum(_size(s) for s in shapes),
                           seeds=seeds)
            k = len(nums)  # outputs: f, k gradients, their k + 1 tangents
            return _keep(both, [0] + list(range(k + 2, 2 * k + 2))), {}

        compiled = self._compiled("hessian", f, args, nums, cost, build)
        if compiled is None:
            return self._reverse._hessians(f, args, nums, cost)
        value, *tangents = compiled.run(_arrays(args))
        hessians, start = [], 0
        for t, s in zip(tangents, shapes):
            # Row d of the tangent of ∇ᵢf is ∂(∇ᵢf)/∂(entry d): argument i's own block.
            hessians.append(t[start:start + _size(s)].reshape(s + s))
            start += _size(s)
        return value, hessians

    def _jvp(self, f: Callable, primals: list, tangents: list, cost: Cost) -> tuple[Any, Any]:
        taped = self._taped(primals)
        if taped is not None:
            return taped._jvp(f, primals, tangents, cost)
        nums = tuple(range(len(primals)))

        def build() -> tuple:
            graph = _traced(f, primals, "jvp")
            both = jit.jvp(graph, wrt=_input_names(graph, primals, nums), directions=1)
            return _keep(both, [0, len(graph.outputs)]), {}

        xp = backend.array_module(_arrays(primals)[0])
        dots = [xp.asarray(t, dtype=np.float64).reshape((1,) + tuple(np.shape(p)))
                for p, t in zip(primals, tangents)]
        compiled = self._compiled("jvp", f, primals, nums, cost, build)
        if compiled is None:
            return self._forward._jvp(f, primals, tangents, cost)
        value, dot = compiled.run(_arrays(primals) + dots)
        return value, dot[0]
