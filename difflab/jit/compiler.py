r"""``dl.compile``: PyTorch's ``torch.compile``, built from the tracer and the graph runner.

A compiled function is a cache of static graphs with a *guard* on each::

    first call, f(x)           trace f once (jit's Tracer) -> forward and backward graphs,
                               optimized and fused; remember the guard; replay them
    later call, same guard     replay: no Python of f runs, no tape is built inside f
    later call, guard fails    trace again (a *recompile*), up to ``recompile_limit``
                               graphs; past it, run f eagerly (one warning)

**The guard** is everything a graph was specialised on: the shape, dtype,
device and ``requires_grad`` of each tensor argument, the value of each other
argument (a Python number is baked into the graph), whether grad mode is on,
and for a module the identity, shape and dtype of each parameter and buffer
and the ``training`` flag of every submodule.  A new shape is a new graph, as
with ``torch.compile(dynamic=False)``.

**A graph break** is Python that needs a tensor's *value*: ``if x.sum() > 0:``,
``.item()``, ``.tolist()``, ``print(x)``.  A graph cannot hold that decision,
so tracing stops there (the tracer's value-read hook), the break is noted with
its file and line, and this guard of f runs eagerly from then on: always the
eager result, never a branch baked in.  (PyTorch's dynamo goes further: it
splits f into a graph before the break and one after by rewriting the
bytecode; here the whole call is eager.  :func:`explain` says where and why.)
``fullgraph=True`` makes a break an error (:class:`GraphBreakError`).

**Training**: when an argument or a parameter requires grad, the trace holds
the forward pass *and* its backward (the registry's VJPs, recorded as with
``create_graph=True``).  That joint graph is cut in two: the forward graph
returns the outputs and the values the backward reads; the backward graph
takes them with the output's cotangent (a loss: one graph for both, see
:mod:`difflab.jit.joint`).  On the tape, each output is one record whose VJP
replays the backward graph, so ``loss.backward()`` fills ``.grad`` as eager
mode does and optimizers step on it.
"""

from __future__ import annotations

import functools
import os
import time
import traceback
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from difflab import backend
from difflab.autograd import engine, functional
from difflab.autograd.grad_mode import is_grad_enabled
from difflab.jit import standins
from difflab.jit.graph import Graph, GraphError, Ref
from difflab.jit.joint import DEFAULT_PASSES, _build, _Call, _CompiledOutput, _Graphs
from difflab.jit.tracing import (
    Tracer,
    _flatten,
    _user_frame,
    unflatten,
)
from difflab.tensor import Tensor

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: ``backend=`` names: which graph passes each runs (None: no graph, f eagerly).
BACKENDS: dict[str, tuple[str, ...] | None] = {
    "difflab": DEFAULT_PASSES,
    "inductor": DEFAULT_PASSES,  # PyTorch's default name: the same here
    "aot_eager": ("dce",),  # graphs replayed as traced, no fusion (to bisect a difference)
    "eager": None,  # guards and explain only; every call eager (PyTorch's debugging backend)
}
MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


class Config:
    """Settings of :func:`compile` shared by every compiled function (``torch._dynamo.config``).

    Attributes
    ----------
    recompile_limit : int
        How many graphs (guards) one compiled function keeps; a call whose
        guard fails past that runs eagerly, with one warning.  8, PyTorch's.
        ``cache_size_limit`` is its older name.

    Examples
    --------
    >>> from difflab.jit.compiler import config
    >>> config.recompile_limit
    8
    >>> config.cache_size_limit = 8   # PyTorch's older name for the same setting
    """

    recompile_limit: int = 8

    @property
    def cache_size_limit(self) -> int:
        return self.recompile_limit

    @cache_size_limit.setter
    def cache_size_limit(self, value: int) -> None:
        self.recompile_limit = value


config = Config()


class GraphBreakError(GraphError):
    """``fullgraph=True`` and the function needs a tensor's value in Python (a graph break).

    Examples
    --------
    >>> import difflab as dl
    >>> @dl.compile(fullgraph=True)
    ... def f(x):
    ...     return x if x.sum() > 0 else -x
    >>> try:
    ...     f(dl.ones(3))
    ... except dl.jit.GraphBreakError as e:
    ...     print("graph break" in str(e))
    True
    """


class RecompileLimitWarning(UserWarning):
    """A compiled function met more guards than ``recompile_limit``: it runs eagerly.

    Examples
    --------
    >>> import warnings, difflab as dl
    >>> f = dl.compile(lambda x, k: x * k)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     for k in range(10):             # each k is a new guard (a number is baked in)
    ...         _ = f(dl.ones(2), k)
    >>> [w.category.__name__ for w in caught]
    ['RecompileLimitWarning']
    """


@dataclass(frozen=True)
class GraphBreak:
    """Where and why a traced function needed a tensor's value in Python.

    Examples
    --------
    >>> from difflab.jit.compiler import GraphBreak
    >>> str(GraphBreak("bool() of a tensor computed from the inputs", "model.py", 12))
    'model.py:12: bool() of a tensor computed from the inputs'
    """

    reason: str
    filename: str
    lineno: int

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno}: {self.reason}"


class _Stop(BaseException):
    """Raised inside the traced function at its first graph break (BaseException: a
    user's ``except Exception`` does not swallow it)."""


class _CompileTracer(Tracer):
    """The tracer, with value reads turned into graph breaks instead of warnings.

    ``stop``: raise :class:`_Stop` at the first break (compiling: the rest of f
    would be traced for nothing); otherwise note every break and go on
    (:func:`explain`).  A tensor from outside that requires grad (a model's
    weight used by a plain function) becomes an input, ``captured{k}``, so
    the graph reads its current value and the backward reaches it.
    """

    def __init__(self, name: str, stop: bool) -> None:
        super().__init__(name)
        self.stop = stop
        self.breaks: list[GraphBreak] = []
        self.captured: list[Tensor] = []

    def warn_value_read(self, what: str) -> None:
        if self.rule_reads is not None:  # a derivative rule's own read: decided again later
            self.rule_reads.append(what)
            return
        if self.stand_ins:  # (traced again on the real values: the break is decided there)
            raise standins.NeedsValues(what)
        self._break(f"{what} of a tensor computed from the inputs: Python needs its value "
                    f"(data-dependent control flow)")

    def _warn(self, message: str) -> None:
        if self.stand_ins:
            raise standins.NeedsValues(message)
        self._break(message)

    def _break(self, reason: str) -> None:
        filename, lineno = _user_frame()
        if any((b.filename, b.lineno) == (filename, lineno) for b in self.breaks):
            return  # (bool() reads .item(): one break per line)
        self.breaks.append(GraphBreak(reason, filename, lineno))
        if self.stop:
            raise _Stop

    def _remember(self, array: Any, ref: Ref, tensor: Tensor | None = None,
                  version: int | None = None) -> None:
        """As the tracer's, but holding each array weakly: one that nothing else holds is
        freed while tracing (its entry goes with it, so its id may be reused safely)."""
        key = id(array)
        self.refs[key] = ref
        self.stale.discard(key)
        if tensor is not None:
            self.versions[key] = (tensor._version,
                                  tensor._version[0] if version is None else version)
        try:
            weakref.finalize(array, self._forget, key, ref)
        except TypeError:  # (not weakly referenceable: kept alive, as the tracer does)
            self.keep.append(array)

    def _forget(self, key: int, ref: Ref) -> None:
        if self.refs.get(key) is ref:
            del self.refs[key]
            self.versions.pop(key, None)

    def ref_of(self, x: Any) -> Any:
        if isinstance(x, Tensor) and x._requires_grad and id(x.array) not in self.refs:
            self.add_input(f"captured{len(self.captured)}", x)
            self.captured.append(x)
        return super().ref_of(x)


# ------------------------------------------------------------------ guards


def _leaf_guard(x: Any) -> tuple:
    if isinstance(x, Tensor):
        return ("tensor", tuple(x.array.shape), x.array.dtype.str, str(x.device),
                x._requires_grad)
    if type(x) is np.ndarray:
        return ("array", x.shape, x.dtype.str)
    try:
        hash(x)
    except TypeError:
        return ("repr", type(x), repr(x))
    return ("value", type(x), x)


def _is_traceable_leaf(x: Any) -> bool:
    """A tensor, a NumPy array, or a plain Python value (anything else: run eagerly)."""
    return isinstance(x, (Tensor, np.ndarray, np.generic, int, float, complex, str, bytes,
                          slice, np.dtype, type)) or x is None or x is Ellipsis


def _walk(fn: Any) -> tuple[list[tuple[str, Tensor]], tuple]:
    """A module's parameters, then buffers, by dotted name (as ``named_parameters`` and
    ``named_buffers`` give them), and every submodule's ``training`` flag: one walk over
    the modules, at every call.  ``([], ())`` for a plain function; a module's bound
    method (``model.forward``) has its module's."""
    fn = getattr(fn, "__self__", fn)
    named_modules = getattr(fn, "named_modules", None)
    if named_modules is None or not hasattr(fn, "_parameters"):
        return [], ()
    params: list = []
    buffers: list = []
    training = []
    seen_params: set = set()
    seen_buffers: set = set()
    for prefix, module in named_modules():
        training.append(module.training)
        for registry, found, seen in ((module._parameters, params, seen_params),
                                      (module._buffers, buffers, seen_buffers)):
            for name, value in registry.items():
                if value is not None and id(value) not in seen:
                    seen.add(id(value))
                    found.append((f"{prefix}.{name}" if prefix else name, value))
    return params + buffers, tuple(training)


def _state_guard(state: list[tuple[str, Tensor]], training: tuple) -> tuple:
    tensors = tuple((name, id(t), t.array.shape, t.array.dtype.str, t._requires_grad)
                    for name, t in state)
    return tensors, training


# ------------------------------------------------------------------ graphs


@dataclass
class _Eager:
    """A guard whose function runs eagerly: the graph breaks that decided it."""

    breaks: list


def _trace(fn: Callable, args: tuple, kwargs: dict, state: list, need_grad: bool,
           stop: bool) -> tuple[Graph | None, _CompileTracer, Any]:
    """Trace ``fn(*args, **kwargs)``: the joint graph (None at a stopping break), the
    tracer, and what the traced call returned (an eager result)."""
    tracer = _CompileTracer(getattr(fn, "__name__", type(fn).__name__), stop)
    leaves: list = []
    spec = _flatten((list(args), kwargs), leaves)
    call_leaves = []
    for k, x in enumerate(leaves):
        if isinstance(x, (Tensor, np.ndarray)):
            array = x.array if isinstance(x, Tensor) else x
            t = Tensor._wrap(standins.stand_in(array) if standins.active() else array)
            t._requires_grad = bool(isinstance(x, Tensor) and x._requires_grad and need_grad)
            tracer.add_input(f"a{k}", t)
            call_leaves.append(t)
        else:
            call_leaves.append(x)
    for name, t in state:
        tracer.add_input(name, t)
    call_args, call_kwargs = unflatten(spec, call_leaves)
    primals = [t for t in call_leaves if isinstance(t, Tensor)] + [t for _, t in state]
    try:
        with tracer:
            result = fn(*call_args, **call_kwargs)
            out_leaves: list = []
            out_spec = _flatten(result, out_leaves)
            grads: list = []
            if need_grad:
                grads = _traced_backward(tracer, primals, out_leaves)
    except _Stop:
        return None, tracer, None
    tracer.primal_tensors = primals + tracer.captured  # type: ignore[attr-defined]
    joint = tracer.graph((out_leaves, grads))
    joint.output_spec = out_spec
    joint.n_outputs = len(out_leaves)  # type: ignore[attr-defined]
    return joint, tracer, result


def _traced_backward(tracer: _CompileTracer, primals: list, outputs: list) -> list:
    """Record d(outputs)/d(primals) against cotangent inputs ``g0, g1, ...``; the backward
    nodes land in the same graph.  Sets ``tracer.differentiable`` (the outputs that have a
    gradient) and ``tracer.wrt`` (the primals, then captured tensors, that receive one)."""
    wrt = [t for t in primals if t._requires_grad] + tracer.captured
    outs = [(k, o) for k, o in enumerate(outputs) if isinstance(o, Tensor)
            and o._requires_grad and o.array.dtype.kind in "fc"]
    tracer.differentiable = [k for k, _ in outs] if wrt else []  # type: ignore[attr-defined]
    tracer.wrt = wrt if outs else []  # type: ignore[attr-defined]
    if not outs or not wrt:
        return []
    cotangents = []
    for _, o in outs:
        ones = backend.array_module(o.array).ones_like(o.array)
        g = Tensor._wrap(standins.stand_in(ones) if tracer.stand_ins else ones)
        g._requires_grad = True  # (a recorded seed: the VJPs' reshapes of it are traced too)
        tracer.add_input(f"g{len(cotangents)}", g)
        cotangents.append(g)
    grads = functional.grad([o for _, o in outs], wrt, grad_outputs=cotangents,
                            create_graph=True, allow_unused=True)
    # A tensor the outputs do not depend on gets no gradient (its .grad stays None).
    tracer.wrt = [w for g, w in zip(grads, wrt) if g is not None]  # type: ignore[attr-defined]
    return [g for g in grads if g is not None]


# ------------------------------------------------------------------ state


def _snapshot(state: list[tuple[str, Tensor]]) -> list:
    """Copies of the buffers (state that needs no grad): tracing must leave them as found."""
    return [(name, t, t.array, t.array.copy(), t._version[0]) for name, t in state
            if not t._requires_grad]


def _restore(fn: Any, snapshot: list) -> list[str]:
    """Put back every buffer the traced call changed; the names of those it changed."""
    now = dict(_walk(fn)[0])
    changed = []
    for name, t, array, copy, version in snapshot:
        current = now.get(name)
        if current is t and t.array is array and t._version[0] == version and \
                _same(array, copy):
            continue
        changed.append(name)
        t.array = copy
        if current is not t and hasattr(getattr(fn, "__self__", fn), "get_submodule"):
            owner, _, leaf = name.rpartition(".")
            module = getattr(fn, "__self__", fn)
            (module.get_submodule(owner) if owner else module)._buffers[leaf] = t
    return changed


def _same(a: Any, b: Any) -> bool:
    """Equal contents (a buffer may be updated in its own memory, version unchanged)."""
    a, b = backend.to_numpy(a), backend.to_numpy(b)
    return np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")


def _frame_of(exc: BaseException) -> tuple[str, int]:
    """The innermost line of the user's code in an exception's traceback."""
    found = ("<unknown>", 0)
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        filename = os.path.abspath(frame.f_code.co_filename)
        if not filename.startswith(_PACKAGE_DIR + os.sep):
            found = (frame.f_code.co_filename, lineno)
    return found


# ------------------------------------------------------------------ compiled functions


class CompiledFunction:
    """What :func:`compile` returns for a function: guarded graphs, replayed.

    Attributes
    ----------
    fn : the original function (``_orig_mod`` of a module).
    traces : how many times ``fn`` was traced (one per guard compiled).
    breaks : every :class:`GraphBreak` met so far.
    cache : guard -> the graphs for it (or the breaks that made it eager).

    Examples
    --------
    >>> import difflab as dl
    >>> f = dl.compile(lambda x: (x * 2).sin().sum())
    >>> float(f(dl.zeros(3))), round(float(f(dl.ones(3))), 4), f.traces
    (0.0, 2.7279, 1)
    >>> _ = f(dl.ones(5)); f.traces          # a new shape fails the guard: traced again
    2
    """

    def __init__(self, fn: Callable, *, fullgraph: bool = False,
                 passes: tuple[str, ...] | None = BACKENDS["difflab"]) -> None:
        self.fn = fn
        self.fullgraph = fullgraph
        self.passes = passes
        self.cache: dict[tuple, _Graphs | _Eager] = {}
        self.traces = 0
        self.breaks: list[GraphBreak] = []
        self._warned = False
        if hasattr(fn, "__name__") and not hasattr(fn, "named_parameters"):
            functools.update_wrapper(self, fn, updated=())

    def __repr__(self) -> str:
        return f"<CompiledFunction {getattr(self.fn, '__name__', type(self.fn).__name__)}>"

    def guard(self, *args: Any, **kwargs: Any) -> tuple:
        """The guard of a call with these arguments: equal guards share one graph."""
        leaves: list = []
        spec = _flatten((list(args), kwargs), leaves)
        return (repr(spec), tuple(_leaf_guard(x) for x in leaves),
                _state_guard(*_walk(self.fn)), is_grad_enabled())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.passes is None or engine.GraphRecorder.active is not None:
            return self.fn(*args, **kwargs)  # (inside another trace: traced inline)
        leaves: list = []
        spec = _flatten((list(args), kwargs), leaves)
        if not all(_is_traceable_leaf(x) for x in leaves):
            return self.fn(*args, **kwargs)  # (a dual number, a custom object: eager)
        state, training = _walk(self.fn)
        key = (repr(spec), tuple(_leaf_guard(x) for x in leaves),
               _state_guard(state, training), is_grad_enabled())
        entry = self.cache.get(key)
        if entry is not None and isinstance(entry, _Graphs) and not all(
                t.array.shape == shape for t, shape in entry.captured):
            del self.cache[key]  # (a captured tensor changed shape: trace again)
            entry = None
        if entry is None:
            if len(self.cache) >= config.recompile_limit:
                self._warn_limit()
                return self.fn(*args, **kwargs)
            entry = self.cache[key] = self._compile(args, kwargs, state, leaves)
        if isinstance(entry, _Eager):
            return self.fn(*args, **kwargs)
        return self._replay(entry, leaves, state)

    def _warn_limit(self) -> None:
        if not self._warned:
            self._warned = True
            warnings.warn(
                f"{self!r} was compiled for {len(self.cache)} different guards (shapes, "
                f"dtypes, argument values, training flags), config.recompile_limit: new "
                f"guards run eagerly from now on. Pass tensors instead of changing Python "
                f"numbers, or raise difflab.jit.compiler.config.recompile_limit.",
                RecompileLimitWarning, stacklevel=3)

    def _compile(self, args: tuple, kwargs: dict, state: list, leaves: list
                 ) -> _Graphs | _Eager:
        start = time.perf_counter()
        built = self._compile_shape_only(args, kwargs, state, leaves)
        if built is not None:
            built.trace_seconds = time.perf_counter() - start
            return built
        snapshot = _snapshot(state)
        # (the arguments too: an in-place change of one is not replayed by a graph)
        arguments = [x.array if isinstance(x, Tensor) else x for x in leaves
                     if isinstance(x, (Tensor, np.ndarray))]
        copies = [a.copy() for a in arguments]
        joint, breaks, tracer = None, [], None
        try:
            joint, tracer, _ = _trace(self.fn, args, kwargs, state, is_grad_enabled(),
                                      stop=True)
            breaks = list(tracer.breaks)
        except Exception as exc:  # noqa: BLE001 (tracing failed: the eager call decides)
            what = "" if isinstance(exc, GraphError) else "tracing failed: "
            breaks = [GraphBreak(f"{what}{type(exc).__name__}: {exc}", *_frame_of(exc))]
        changed = _restore(self.fn, snapshot)
        changed_arguments = [k for k, (a, c) in enumerate(zip(arguments, copies))
                             if not _same(a, c)]
        for k in changed_arguments:
            arguments[k][...] = copies[k]
        if joint is not None and changed_arguments:
            joint = None
            breaks = [GraphBreak(
                f"the function changed its tensor argument(s) {changed_arguments} in place "
                f"(x += ..., x.clamp_(...)): a graph returns values and would not replay "
                f"that, so this guard runs eagerly. Return the new value instead",
                *_user_frame())]
        if joint is not None and changed:
            joint = None
            breaks = [GraphBreak(
                f"the module changed its buffers {', '.join(changed)} in place while running "
                f"(BatchNorm's running statistics in training mode): a graph would not "
                f"replay that, so this guard runs eagerly (in eval() mode it compiles)",
                *_user_frame())]
        if joint is None:
            self.breaks.extend(breaks)
            if self.fullgraph:
                raise GraphBreakError(
                    f"graph break in {self!r} with fullgraph=True: {breaks[0]}. Compute the "
                    f"choice inside the graph (dl.where(cond, a, b)) instead of reading the "
                    f"value into Python, or drop fullgraph=True to run this eagerly.")
            return _Eager(breaks)
        self.traces += 1
        return _build(joint, tracer, self.passes or (), time.perf_counter() - start)

    def _compile_shape_only(self, args: tuple, kwargs: dict, state: list, leaves: list
                            ) -> _Graphs | None:
        """The graphs traced on stand-ins (:mod:`difflab.jit.standins`): no value held, no
        argument copied; None if anything needed the values (a graph break among them),
        then :meth:`_compile` traces on the real arrays as before."""
        if not standins.ENABLED:
            return None
        snapshot = _snapshot(state)

        def trace() -> tuple:
            joint, tracer, _ = _trace(self.fn, args, kwargs, state, is_grad_enabled(),
                                      stop=True)
            if joint is None or tracer.breaks or _restore(self.fn, snapshot):
                raise standins.NeedsValues("a graph break, or a buffer written")
            return joint, tracer

        try:
            nbytes = sum(getattr(x.array if isinstance(x, Tensor) else x, "nbytes", 0)
                         for x in leaves if isinstance(x, (Tensor, np.ndarray)))
            traced = standins.build_on_stand_ins(trace, lambda traced: [traced[0]], nbytes)
        finally:
            _restore(self.fn, snapshot)
        if traced is None:
            return None
        self.traces += 1
        return _build(*traced, self.passes or (), 0.0)

    def _replay(self, entry: _Graphs, leaves: list, state: list) -> Any:
        primals = [x if isinstance(x, Tensor) else Tensor._wrap(x) for x in leaves
                   if isinstance(x, (Tensor, np.ndarray))]
        primals += [t for _, t in state] + [t for t, _ in entry.captured]
        arrays = [t.array for t in primals]
        results = entry.forward.program().run(arrays, check=False)
        n = entry.n_outputs
        outs = results[:n]
        if not entry.differentiable:
            return unflatten(entry.output_spec, [
                Tensor._wrap(o) if isinstance(o, np.ndarray) or hasattr(o, "shape") else o
                for o in outs])
        call = _Call(entry, arrays, outs, results[n:], primals)
        wrt = [primals[j] for j in entry.wrt]
        wrapped = []
        for k, o in enumerate(outs):
            if k in entry.differentiable:
                wrapped.append(engine.apply(_CompiledOutput(call, k), *wrt))
            else:
                wrapped.append(Tensor._wrap(o) if hasattr(o, "shape") else o)
        return unflatten(entry.output_spec, wrapped)


# ------------------------------------------------------------------ the faces

_module_wrapper: type | None = None


def register_module_wrapper(cls: type) -> None:
    """Tell :func:`compile` which class wraps a compiled module (the jit layer is below nn).

    ``difflab.nn`` registers its ``OptimizedModule`` when it is imported, as
    ``difflab.tensor`` registers the tensor type with the engine.

    Parameters
    ----------
    cls : type
        Called as ``cls(module, compiled_function)``.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.jit import compiler
    >>> compiler.register_module_wrapper(dl.nn.OptimizedModule)   # (what difflab.nn does)
    >>> type(dl.compile(dl.nn.Linear(2, 2))).__name__
    'OptimizedModule'
    """
    global _module_wrapper
    _module_wrapper = cls


def _is_module(x: Any) -> bool:
    return hasattr(x, "named_parameters") and hasattr(x, "forward") and hasattr(x, "training")


def compile(model: Callable | None = None, *, fullgraph: bool = False,  # noqa: A001
            dynamic: bool | None = None, backend: str = "inductor", mode: str | None = None,
            options: dict | None = None, disable: bool = False) -> Any:
    """Compile a function or a module to guarded static graphs: PyTorch's ``torch.compile``.

    The first call traces ``model`` and builds its forward graph (and, when
    something requires grad, its backward graph), optimized and fused; later
    calls with the same *guard* (shapes, dtypes, devices, ``requires_grad``,
    the values of non-tensor arguments, grad mode, a module's parameters and
    ``training`` flags) replay the graphs without running ``model``'s Python.
    A new guard traces again, up to ``config.recompile_limit`` (8) graphs; past
    that, calls run eagerly with one :class:`RecompileLimitWarning`.  Python
    that needs a tensor's value (``if x.sum() > 0:``, ``.item()``, ``print``)
    is a *graph break*: that guard runs eagerly (:func:`explain` says where).
    Results equal eager mode's (to rounding where kernels are fused).

    Parameters
    ----------
    model : callable or Module, optional
        What to compile.  Omitted: a decorator (``@dl.compile(fullgraph=True)``).
        A module gives an ``OptimizedModule`` whose ``forward`` is compiled and
        whose parameters, buffers and ``state_dict`` are the module's own
        (under ``_orig_mod.``, as PyTorch's).
    fullgraph : bool
        Make a graph break an error (:class:`GraphBreakError`) naming the line.
    dynamic : bool or None
        None or False: each new shape is a new graph.  True (symbolic shapes)
        is not supported: static graphs here are specialised on shapes.
    backend : str
        ``"inductor"`` or ``"difflab"``: graphs with the passes fold, cse, dce
        and, for float64 graphs, fuse (generated kernels: numba when
        installed, tiled NumPy otherwise; float32 graphs replay line by line,
        which measured faster than the NumPy kernels).
        ``"aot_eager"``: graphs, no fusion.  ``"eager"``: no graphs at all.
    mode : str or None
        PyTorch's modes are accepted (``"reduce-overhead"``, ``"max-autotune"``,
        ...); they all compile the same way here.
    options : dict, optional
        ``{"passes": (...)}``: the graph passes to run instead of the backend's.
    disable : bool
        Return ``model`` itself, uncompiled (PyTorch's switch for debugging).

    Returns
    -------
    CompiledFunction or OptimizedModule

    Raises
    ------
    ValueError
        An unknown ``backend``, ``mode`` or option, or ``dynamic=True``.
    TypeError
        ``model`` is not callable.

    Examples
    --------
    >>> import difflab as dl
    >>> @dl.compile
    ... def f(x, w):
    ...     return (x * w).tanh().sum()
    >>> w = dl.tensor([0.5, -1.0], requires_grad=True)
    >>> loss = f(dl.tensor([1.0, 2.0]), w)
    >>> loss.backward()                    # the backward graph, replayed
    >>> [round(g, 4) for g in w.grad.tolist()]
    [0.7864, 0.1413]
    >>> model = dl.compile(dl.nn.Linear(2, 1))
    >>> tuple(model(dl.ones(4, 2)).shape)
    (4, 1)
    """
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                 mode=mode, options=options, disable=disable)
    if not callable(model):
        raise TypeError(f"dl.compile compiles a function or a module, got "
                        f"{type(model).__name__}: pass the function itself (dl.compile(f)), "
                        f"or use @dl.compile as a decorator")
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}: the backends are "
                         f"{', '.join(map(repr, BACKENDS))}")
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}: the modes are {', '.join(map(repr, MODES))}")
    if dynamic:
        raise ValueError("dynamic=True (symbolic shapes) is not supported: difflab's graphs "
                         "are specialised on shapes, and a new shape is traced again (up to "
                         "config.recompile_limit graphs). Leave dynamic=None.")
    passes = BACKENDS[backend]
    for key, value in (options or {}).items():
        if key != "passes":
            raise ValueError(f"unknown option {key!r}: the only option is 'passes' "
                             f"(a tuple of graph passes: fold, cse, dce, fuse)")
        from difflab.jit.passes import PASSES

        unknown = [p for p in value if p not in PASSES]
        if unknown:
            raise ValueError(f"unknown graph passes {unknown}: the passes are "
                             f"{', '.join(PASSES)}")
        passes = tuple(value)
    if disable:
        return model
    if _is_module(model):
        if _module_wrapper is None:
            raise TypeError("dl.compile(module) needs difflab.nn (import difflab)")
        return _module_wrapper(model, CompiledFunction(model, fullgraph=fullgraph,
                                                       passes=passes))
    return CompiledFunction(model, fullgraph=fullgraph, passes=passes)


# ------------------------------------------------------------------ explain


@dataclass
class ExplainOutput:
    """What :func:`explain` found: graphs, graph breaks and their reasons (dynamo's names).

    Attributes
    ----------
    graphs : list of Graph
        The graphs a compiled call would replay (forward, and backward when
        something requires grad); empty when a break makes the call eager.
    graph_count, graph_break_count, op_count : int
    break_reasons : list of GraphBreak
        Every break in the call, in order, each with its file and line.
    ops_per_graph : list of int
    compile_seconds : float
        Tracing and optimizing, in seconds.

    Examples
    --------
    >>> import difflab as dl
    >>> out = dl.compile.explain(lambda x: x.sin().sum())(dl.ones(3))
    >>> out.graph_count, out.graph_break_count
    (1, 0)
    """

    graphs: list
    graph_count: int
    graph_break_count: int
    break_reasons: list
    op_count: int
    ops_per_graph: list
    compile_seconds: float

    def __str__(self) -> str:
        lines = [f"Graph Count: {self.graph_count}",
                 f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        for k, b in enumerate(self.break_reasons, start=1):
            lines += [f"  Break Reason {k}:", f"    Reason: {b.reason}",
                      f"    User Stack: {b.filename}:{b.lineno}"]
        if self.graph_break_count:
            lines.append("  (a call with a graph break runs eagerly: no graph is replayed)")
        lines.append("Ops per Graph: " + ", ".join(map(str, self.ops_per_graph)))
        lines.append(f"Compile Time: {self.compile_seconds:.4f} s")
        return "\n".join(lines)


def explain(fn: Callable) -> Callable[..., ExplainOutput]:
    """``explain(fn)(*args)``: trace one call of ``fn`` and report graphs and graph breaks.

    Like ``torch._dynamo.explain``: it does not stop at the first break
    but notes every one (the tensor values are real while tracing, so the
    function runs to its end), each with its reason and its file and line.
    ``fn`` may be a function, a module, or what :func:`compile` returned.

    Parameters
    ----------
    fn : callable or Module

    Returns
    -------
    callable
        Taking ``fn``'s arguments and returning an :class:`ExplainOutput`.

    Examples
    --------
    >>> import difflab as dl
    >>> def f(x):
    ...     if x.sum() > 0:               # Python reads a value: a graph break
    ...         return x.exp()
    ...     return x
    >>> out = dl.jit.explain(f)(dl.ones(3))
    >>> out.graph_count, out.graph_break_count
    (0, 1)
    >>> print(out.break_reasons[0].reason.split(":")[0])
    bool() of a tensor computed from the inputs
    """
    target = fn.fn if isinstance(fn, CompiledFunction) else getattr(fn, "_orig_mod", fn)

    def run(*args: Any, **kwargs: Any) -> ExplainOutput:
        start = time.perf_counter()
        state = _walk(target)[0]
        snapshot = _snapshot(state)
        try:
            joint, tracer, _ = _trace(target, args, kwargs, state, is_grad_enabled(),
                                      stop=False)
        finally:
            changed = _restore(target, snapshot)
        breaks = list(tracer.breaks)
        if changed:
            breaks.append(GraphBreak(f"the module changed its buffers {', '.join(changed)} "
                                     f"in place while running", *_user_frame()))
        graphs: list = []
        if not breaks:
            built = _build(joint, tracer, BACKENDS["difflab"], 0.0)  # type: ignore[arg-type]
            graphs = [g for g in (built.forward, built.backward) if g is not None]
        sizes = [len(g.nodes) for g in graphs]
        return ExplainOutput(graphs, len(graphs), len(breaks), breaks, sum(sizes), sizes,
                             time.perf_counter() - start)

    return run


compile.explain = explain  # type: ignore[attr-defined]  (dl.compile.explain, as dynamo's)
