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
with ``torch.compile(dynamic=False)``.  The guard also notes which modules run
hooks (a module's own submodules, or those a plain function's traces called):
a hook registered after the graphs were made is a new guard, whose call runs
eagerly with its hooks (a graph break that says so); once removed, the graphs
replay again.  (PyTorch's dynamo skips such guards by default,
``skip_nnmodule_hook_guards``, and replays without the new hook.)

**A graph break** is Python that needs a tensor's *value*: ``if x.sum() > 0:``,
``.item()``, ``while err > tol:``.  A graph cannot hold that decision, so the
trace is *split* there (:mod:`difflab.jit.breaks`): graph 1 ends with the
value read, Python's value of it is the branch key, and the graphs after it
are cached per key.  A later call runs graph 1, reads the value and replays
the graphs cached for it, or traces the new branch (up to
``recompile_limit`` branch paths).  Results equal eager mode's on every
branch.  (PyTorch's dynamo rewrites the bytecode to resume the function
after the break; here the trace is cut, so the Python between graphs runs
only while tracing.)  A read that hands the value *out* of Python's
decisions (``print(x)``, ``.tolist()``, ``.numpy()``) cannot be replayed:
that call runs eagerly.  :func:`explain` says where, why and which.
``fullgraph=True`` makes a break an error (:class:`GraphBreakError`).

**Side effects.**  ``torch.compile`` runs a Python side effect (a list
append, a print) once per call.  Here the function's Python runs while
tracing and not on a replay; a first call whose trace stops at a break that
makes it eager runs the Python before that break twice (traced, then
eagerly), and arguments of 1 MiB or more are traced on stand-ins first
(:mod:`difflab.jit.standins`).  ``CompiledFunction.python_runs`` and
:func:`explain` count those runs.

**Training**: when an argument or a parameter requires grad, the trace holds
the forward pass *and* its backward (the registry's VJPs, recorded as with
``create_graph=True``).  That joint graph is cut in two: the forward graph
returns the outputs and the values the backward reads; the backward graph
takes them with the output's cotangent (a loss: one graph for both, see
:mod:`difflab.jit.joint`).  On the tape, each output is one record whose VJP
replays the backward graph, so ``loss.backward()`` fills ``.grad`` as eager
mode does and optimizers step on it.  ``backward()`` or an optimizer's
``step()`` *inside* the compiled function is a graph break (no graph sets
``.grad`` or replays an update of raw arrays): the call runs eagerly.
"""

from __future__ import annotations

import functools
import time
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from difflab import random
from difflab.autograd import engine
from difflab.autograd.grad_mode import is_grad_enabled
from difflab.autograd.saved_hooks import SavedTensorsHooks
from difflab.jit import fusion, standins, steady
from difflab.jit.breaks import GraphBreak, Stage, cut, graft, graft_eager, read_key
from difflab.jit.capture import (
    _frame_of,
    _is_traceable_leaf,
    _leaf_guard,
    _restore,
    _same,
    _snapshot,
    _state_guard,
    _trace,
    _walk,
)
from difflab.jit.cuda_graphs import GraphedProgram
from difflab.jit.graph import Graph, GraphError
from difflab.jit.joint import DEFAULT_PASSES, _build, _Call, _CompiledOutput, _Graphs
from difflab.jit.tracing import _flatten, _user_frame, unflatten
from difflab.tensor import Tensor
from difflab.utils.hooks import hooks_changes

#: ``backend=`` names: which graph passes each runs (None: no graph, f eagerly).
BACKENDS: dict[str, tuple[str, ...] | None] = {
    "difflab": DEFAULT_PASSES,
    "inductor": DEFAULT_PASSES,  # PyTorch's default name: the same here
    "aot_eager": ("dce",),  # graphs replayed as traced, no fusion (to bisect a difference)
    "eager": None,  # guards and explain only; every call eager (PyTorch's debugging backend)
}
MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
CUDA_GRAPH_MODES = ("reduce-overhead", "max-autotune")  # (as PyTorch's: CUDA graphs on a GPU)


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
    >>> try:
    ...     config.suppress_errors = True     # a setting of dynamo's that difflab has not
    ... except AttributeError as error:
    ...     print(str(error).split(" (")[0])
    config.suppress_errors: difflab's compiler has no such setting
    """

    recompile_limit: int = 8

    @property
    def cache_size_limit(self) -> int:
        return self.recompile_limit

    @cache_size_limit.setter
    def cache_size_limit(self, value: int) -> None:
        self.recompile_limit = value

    def __setattr__(self, name: str, value: Any) -> None:
        if not hasattr(type(self), name):  # (a setting dynamo has and difflab has not)
            raise AttributeError(
                f"config.{name}: difflab's compiler has no such setting (its settings: "
                f"recompile_limit, and cache_size_limit, its older name); explain(fn)(*args) "
                f"reports the graphs and graph breaks")
        object.__setattr__(self, name, value)


config = Config()

#: Every compiled function alive, for ``torch.compiler.reset()`` (:func:`reset`).
COMPILED: weakref.WeakSet = weakref.WeakSet()


def reset() -> None:
    """Forget every compiled function's graphs: each traces again at its next call.

    PyTorch's ``torch.compiler.reset()`` (and ``torch._dynamo.reset()``).

    Returns
    -------
    None

    Examples
    --------
    >>> import difflab as dl
    >>> f = dl.compile(lambda x: x * 2)
    >>> _ = f(dl.ones(2)); f.traces
    1
    >>> dl.jit.compiler.reset()
    >>> _ = f(dl.ones(2)); f.traces       # traced again
    2
    """
    for compiled in list(COMPILED):
        compiled.cache = steady.GuardCache()
        compiled.breaks = []
        compiled._warned = False


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


@dataclass
class _Eager:
    """A guard (or a branch) whose function runs eagerly: the graph breaks that decided
    it, and the keys of the splitting reads met before them (the branch it hangs on)."""

    breaks: list
    keys: list = field(default_factory=list)



# ------------------------------------------------------------------ compiled functions


def _stale(entry: Any) -> bool:
    """Graphs (or a stage) that read a captured tensor whose shape changed since tracing."""
    return isinstance(entry, (_Graphs, Stage)) and not all(
        t.array.shape == shape for t, shape in entry.captured)


def _unreplayed_writes(joint: Graph, changed_arguments: list[int], changed: list[str]
                       ) -> list[GraphBreak]:
    """The traced call's in-place writes that its graphs would not replay, as breaks."""
    if changed_arguments:
        return [GraphBreak(
            f"the function changed its tensor argument(s) {changed_arguments} in place "
            f"(x += ..., x.clamp_(...)): a graph returns values and would not replay "
            f"that, so this guard runs eagerly. Return the new value instead",
            *_user_frame())]
    unreplayed = [name for name in changed if name not in joint.updates]
    if unreplayed:
        return [GraphBreak(
            f"the module changed its buffers {', '.join(unreplayed)} outside difflab's "
            f"operations (through .array or NumPy) while running: a graph would not "
            f"replay that, so this guard runs eagerly. Write them with difflab's "
            f"in-place operations (buffer.mul_(...), buffer.copy_(...))",
            *_user_frame())]
    return []


class CompiledFunction:
    """What :func:`compile` returns for a function: guarded graphs, replayed.

    Each call computes the call's *guard* (:meth:`guard`: shapes, dtypes, devices,
    ``requires_grad``, non-tensor values, grad mode, a module's state); a known guard
    replays its graphs, a new one traces ``fn`` again (up to ``config.recompile_limit``
    guards; past that, calls run eagerly with one :class:`RecompileLimitWarning`).  A
    graph break splits the graphs where Python reads a value, and that value picks the
    graphs that follow.  Build it with :func:`difflab.compile`, not directly.

    Parameters
    ----------
    fn : callable
        The function (or a module's forward) to compile.
    fullgraph : bool, default False, keyword-only
        Make a graph break an error (:class:`GraphBreakError`).
    passes : tuple of str or None, keyword-only
        The graph passes run on each graph (the ``"difflab"`` backend's by default);
        ``None``: every call runs eagerly (the ``"eager"`` backend).
    cuda_graphs : bool, default False, keyword-only
        Replay each graph on the GPU as a CUDA graph, one launch per call
        (:mod:`difflab.jit.cuda_graphs`; ``mode="reduce-overhead"``).

    Attributes
    ----------
    fn : callable
        The original function (``_orig_mod`` of a module).
    traces : int
        How many times ``fn`` was traced (one per guard compiled, and one per
        branch of a graph break).
    python_runs : int
        How many times ``fn``'s Python has run, over all calls: each trace and
        each eager call.  A replay runs none of it, so a side effect in ``fn``
        (appending to a list, printing, a global counter) happens only while
        tracing, unlike ``torch.compile``, which runs it once per call.  A first
        call may run it more than once: a break that makes the call eager stops
        the trace there and runs ``fn`` again eagerly (what came before the
        break runs twice), and arguments of 1 MiB or more are first traced on
        stand-ins (:mod:`difflab.jit.standins`: twice, or once up to a graph
        break) before the values decide.  :func:`explain` reports it per call.
    compile_seconds : float
        The time spent tracing and building graphs, every trace together
        (traces that ended in a break that makes the call eager included).
    breaks : list of GraphBreak
        Every :class:`GraphBreak` met so far.
    cache : dict
        Guard -> the graphs for it; for a function split at graph breaks, the first
        stage of its tree of graphs; or the breaks that made it eager.

    Raises
    ------
    GraphBreakError
        When called, with ``fullgraph=True``, on a function that reads a tensor's
        value into Python.

    See Also
    --------
    difflab.compile : makes one (PyTorch's ``torch.compile``).
    difflab.jit.explain : what a call would compile to, and why it breaks.
    TracedFunction : one graph per signature, no graph breaks.

    Examples
    --------
    >>> import difflab as dl
    >>> f = dl.compile(lambda x: (x * 2).sin().sum())
    >>> float(f(dl.zeros(3))), round(float(f(dl.ones(3))), 4), f.traces
    (0.0, 2.7279, 1)
    >>> _ = f(dl.ones(5)); f.traces          # a new shape fails the guard: traced again
    2

    A graph break: the value read picks the graph that follows.

    >>> def flip(x):
    ...     y = x.sin()
    ...     return y * 2 if y.sum() > 0 else -y
    >>> g = dl.compile(flip)
    >>> g(dl.ones(2)), g(-dl.ones(2)), len(g.breaks)
    (tensor([1.6829, 1.6829]), tensor([0.8415, 0.8415]), 1)

    The function's Python runs while tracing, not on a replay:

    >>> g.python_runs, g.traces                # one trace per branch
    (2, 2)
    >>> _ = g(dl.ones(2)); g.python_runs       # replayed: no Python of flip ran
    2
    """

    def __init__(self, fn: Callable, *, fullgraph: bool = False,
                 passes: tuple[str, ...] | None = BACKENDS["difflab"],
                 cuda_graphs: bool = False) -> None:
        self.fn = fn
        self.fullgraph = fullgraph
        self.passes = passes
        # (a dict; it keeps the quick keys of :mod:`difflab.jit.steady` beside the guards)
        self.cache: dict[tuple, _Graphs | Stage | _Eager] = steady.GuardCache()
        target = getattr(fn, "__self__", fn)
        self._stateless = not (hasattr(target, "named_modules") and hasattr(target, "_parameters"))
        self._watch = None if self._stateless else steady.StateWatch(fn)
        self.traces = 0
        self.python_runs = 0
        # (a plain function: the modules its traces called, id -> module, whose hooks its
        # guard holds; and (utils.hooks.hooks_changes(), that guard) as last computed)
        self.called_modules: dict = {}
        self._hooks_seen: tuple = ((), ((), ()))
        self.compile_seconds = 0.0
        self.breaks: list[GraphBreak] = []
        self._warned = False
        self.cuda_graphs = cuda_graphs
        COMPILED.add(self)
        if hasattr(fn, "__name__") and not hasattr(fn, "named_parameters"):
            functools.update_wrapper(self, fn, updated=())

    def __repr__(self) -> str:
        return f"<CompiledFunction {getattr(self.fn, '__name__', type(self.fn).__name__)}>"

    def guard(self, *args: Any, **kwargs: Any) -> tuple:
        """The guard of a call with these arguments: equal guards share one graph."""
        leaves: list = []
        spec = _flatten((list(args), kwargs), leaves)
        state_guard = self._called_guard() if self._stateless else _state_guard(*_walk(self.fn))
        return (repr(spec), tuple(_leaf_guard(x) for x in leaves), state_guard,
                is_grad_enabled())

    def _called_guard(self) -> tuple:
        """A plain function's state guard: ``((), ())``, and the positions (among the
        modules its traces called) of the modules that have hooks now, if any: a hook
        registered on a model after its graphs were made traces the call again (it then
        runs eagerly, hooks included)."""
        if not self.called_modules:
            return (), ()
        changes, guard = self._hooks_seen
        if changes != hooks_changes():
            hooked = tuple(k for k, m in enumerate(self.called_modules.values())
                           if m._has_hooks())
            guard = ((), (), hooked) if hooked else ((), ())
            self._hooks_seen = (hooks_changes(), guard)
        return guard

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.passes is None or engine.GraphRecorder.active is not None \
                or SavedTensorsHooks.active is not None:  # (a graph's values are not packed)
            return self._run_eagerly(*args, **kwargs)  # (inside another trace: traced inline)
        if self._stateless:
            state, training, state_guard = [], (), self._called_guard()
        else:  # (the walk and its guard; steady.StateWatch skips both when nothing changed)
            state, training, state_guard = self._watch.read()
        quick = None
        if not kwargs:  # (the speed shortcut: a call of positional tensors, see steady)
            quick = steady.quick_key(args, state_guard)
            found = self.cache.quick.get(quick) if quick is not None else None  # type: ignore[attr-defined]
            if found is not None and steady.fresh(found[1]):
                key, entry, replay = found
                if replay is not None:
                    return replay(args, state)
                if isinstance(entry, _Eager):  # (a guard that runs eagerly, known as such)
                    return self._run_eagerly(*args)
                if isinstance(entry, Stage):
                    return self._follow(key, entry, args, kwargs, state, list(args))
                return self._replay(entry, args, state)
        leaves: list = []
        spec = _flatten((list(args), kwargs), leaves)
        if not all(_is_traceable_leaf(x) for x in leaves):
            return self._run_eagerly(*args, **kwargs)  # (a dual number, a custom object: eager)
        key = (repr(spec), tuple(_leaf_guard(x) for x in leaves), state_guard,
               is_grad_enabled())
        entry = self.cache.get(key)
        if _stale(entry):
            del self.cache[key]  # (a captured tensor changed shape: trace again)
            entry = None
        if entry is None:
            if len(self.cache) >= config.recompile_limit:
                self._warn_limit()
                return self._run_eagerly(*args, **kwargs)
            entry = self.cache[key] = self._compile(args, kwargs, state, leaves)
        if quick is not None:
            self.cache.remember(quick, key, entry)  # type: ignore[attr-defined]
        if isinstance(entry, _Eager):
            return self._run_eagerly(*args, **kwargs)
        if isinstance(entry, Stage):
            return self._follow(key, entry, args, kwargs, state, leaves)
        return self._replay(entry, leaves, state)

    def _run_eagerly(self, *args: Any, **kwargs: Any) -> Any:
        """``fn`` itself, untraced (counted in :attr:`python_runs`)."""
        self.python_runs += 1
        return self.fn(*args, **kwargs)

    def _graphed(self, entry: _Graphs) -> GraphedProgram:
        """The CUDA graph of ``entry``'s forward (``mode="reduce-overhead"``): made on first
        use.  Its in-place updates are written inside the graph, unless a backward reads
        the values before them (then the caller writes them, as without a graph)."""
        if entry.graphed is None:
            n = entry.n_outputs
            writes = [] if entry.differentiable else list(
                zip(range(n, n + entry.n_updates), entry.update_targets))
            entry.graphed = GraphedProgram(entry.forward.program(), writes)
        return entry.graphed

    def _follow(self, key: tuple, root: Stage, args: tuple, kwargs: dict, state: list,
                leaves: list) -> Any:
        """A split call: run each stage's graph, read its value, take the branch for it."""
        arrays = [x.array if isinstance(x, Tensor) else x for x in leaves
                  if isinstance(x, (Tensor, np.ndarray))] + [t.array for _, t in state]
        values: dict[str, Any] = {}
        generator = random.default_generator
        drawn = None  # (the generator's state before the first stage that draws)
        node: Any = root
        while isinstance(node, Stage):
            if node.random and drawn is None:
                drawn = (generator.rng, generator.rng.bit_generator.state)
            results = node.graph.program().run(
                arrays + [t.array for t, _ in node.captured] + [values[n] for n in node.live],
                check=False)
            values.update(zip(node.produced, results[1:]))
            following = node.branches.get(read_key(results[0]))
            if following is None or isinstance(following, _Eager):
                if drawn is not None:  # (what eager mode will draw, from the call's start)
                    generator.rng = drawn[0]
                    generator.rng.bit_generator.state = drawn[1]
                if following is None:
                    return self._new_branch(key, root, args, kwargs, state, leaves)
                return self._run_eagerly(*args, **kwargs)
            if _stale(following):  # (a captured tensor changed shape: trace the guard again)
                del self.cache[key]
                return self(*args, **kwargs)
            node = following
        return self._replay(node, leaves, state, [values[n] for n in node.live])

    def _new_branch(self, key: tuple, root: Stage, args: tuple, kwargs: dict, state: list,
                    leaves: list) -> Any:
        """A value read took a branch not seen yet: trace again, graft the new path."""
        if root.paths >= config.recompile_limit:
            self._warn_limit(root)
            return self._run_eagerly(*args, **kwargs)
        entry = self._compile(args, kwargs, state, leaves)
        if isinstance(entry, Stage) and graft(root, entry) or isinstance(
                entry, _Eager) and graft_eager(root, entry.keys, entry):
            return self._follow(key, root, args, kwargs, state, leaves)
        root.paths += 1  # (Python not decided by the values read: eager, counted)
        return self._run_eagerly(*args, **kwargs)

    def _warn_limit(self, root: Stage | None = None) -> None:
        if self._warned:
            return
        self._warned = True
        if root is not None:  # (too many branches of one guard's graph breaks)
            message = (
                f"{self!r} met {root.paths} different sequences of values read at its graph "
                f"breaks ({root.where}), config.recompile_limit: new ones run eagerly from "
                f"now on. A number read with .item() is a branch key, so one that changes "
                f"at every call is a new branch each time: keep it a tensor (x / x.max(), "
                f"not x / x.max().item()), or raise the limit.")
        else:
            message = (
                f"{self!r} was compiled for {len(self.cache)} different guards (shapes, "
                f"dtypes, argument values, training flags), config.recompile_limit: new "
                f"guards run eagerly from now on. Pass tensors instead of changing Python "
                f"numbers, or raise difflab.jit.compiler.config.recompile_limit.")
        warnings.warn(message, RecompileLimitWarning, stacklevel=5 if root else 3)

    def _compile(self, args: tuple, kwargs: dict, state: list, leaves: list
                 ) -> _Graphs | Stage | _Eager:
        start = time.perf_counter()
        try:
            with fusion.fusing_for([*leaves, *state]):  # (kernels for the arrays' device)
                return self._compile_here(args, kwargs, state, leaves)
        finally:
            self.compile_seconds += time.perf_counter() - start

    def _compile_here(self, args: tuple, kwargs: dict, state: list, leaves: list
                      ) -> _Graphs | Stage | _Eager:
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
            self.python_runs += 1
            joint, tracer, _ = _trace(self.fn, args, kwargs, state, is_grad_enabled(),
                                      split=True,  # (fullgraph refuses the splits after)
                                      called=self._called_sink())
            breaks = list(tracer.breaks)
        except Exception as exc:  # noqa: BLE001 (tracing failed: the eager call decides)
            what = "" if isinstance(exc, GraphError) else "tracing failed: "
            breaks = [GraphBreak(f"{what}{type(exc).__name__}: {exc}", *_frame_of(exc))]
        changed = _restore(self.fn, snapshot)
        written = tracer.written_arrays if tracer is not None else set()  # (put back)
        changed_arguments = [k for k, (a, c) in enumerate(zip(arguments, copies))
                             if id(a) in written or not _same(a, c)]
        for k in changed_arguments:
            arguments[k][...] = copies[k]
        if joint is not None:
            refused = _unreplayed_writes(joint, changed_arguments, changed)
            if refused:
                joint, breaks = None, refused
        self._note_breaks(breaks)
        if joint is None:
            return _Eager([b for b in breaks if not b.splits],
                          [r.key for r in tracer.reads] if tracer is not None else [])
        self.traces += 1
        passes = self.passes or ()
        if not tracer.reads:
            return _build(joint, tracer, passes, time.perf_counter() - start)
        stages, final = cut(joint, tracer.reads, tracer.captured, passes)
        stages[-1].branches[tracer.reads[-1].key] = _build(final, tracer, passes,
                                                           time.perf_counter() - start)
        return stages[0]

    def _called_sink(self) -> dict | None:
        """Where a trace notes the modules called: a plain function's ``called_modules``
        (a module's own walk guards its submodules' hooks already)."""
        if not self._stateless:
            return None
        self._hooks_seen = ((), ((), ()))  # (computed again at the next call)
        return self.called_modules

    def _note_breaks(self, breaks: list[GraphBreak]) -> None:
        """Remember a trace's breaks (for :func:`explain`); with ``fullgraph``, refuse them."""
        for b in breaks:
            if b not in self.breaks:
                self.breaks.append(b)
        if breaks and self.fullgraph:
            hint = (" Compute the choice inside the graph (dl.where(cond, a, b)) instead of "
                    "reading the value into Python, or drop fullgraph=True to split the "
                    "function there." if breaks[0].splits else
                    " Or drop fullgraph=True to let such a call run eagerly.")
            raise GraphBreakError(f"graph break in {self!r} with fullgraph=True: "
                                  f"{breaks[0]}.{hint}")

    def _compile_shape_only(self, args: tuple, kwargs: dict, state: list, leaves: list
                            ) -> _Graphs | None:
        """The graphs traced on stand-ins (:mod:`difflab.jit.standins`): no value held, no
        argument copied; None if anything needed the values (a graph break among them,
        splitting or not), then :meth:`_compile` traces on the real arrays as before."""
        if not standins.ENABLED:
            return None
        snapshot = _snapshot(state)

        def trace() -> tuple:
            self.python_runs += 1
            joint, tracer, _ = _trace(self.fn, args, kwargs, state, is_grad_enabled(),
                                      split=False, called=self._called_sink())
            if joint is None or tracer.breaks or tracer.reads or _restore(self.fn, snapshot):
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

    def _replay(self, entry: _Graphs, leaves: list, state: list, live: list = ()) -> Any:
        primals = [x if isinstance(x, Tensor) else Tensor._wrap(x) for x in leaves
                   if isinstance(x, (Tensor, np.ndarray))]
        primals += [t for _, t in state] + [t for t, _ in entry.captured]
        primals += [Tensor._wrap(a) for a in live]  # (earlier graphs' values: graph breaks)
        arrays = [t.array for t in primals]
        results = self._graphed(entry).run(arrays) if self.cuda_graphs else None
        if results is None:
            results = entry.forward.program().run(arrays, check=False)
        n = entry.n_outputs
        outs = results[:n]
        if entry.n_updates:  # (in-place writes: a BatchNorm's running statistics)
            for j, value in zip(entry.update_targets, results[n:n + entry.n_updates]):
                target = primals[j]
                if value is not None:  # (None: a CUDA graph has written it)
                    if entry.differentiable:  # (a backward reads the value the forward read)
                        arrays[j] = target.array.copy()
                    target.array[...] = value
                target._version[0] += 1
        if not entry.differentiable:
            return unflatten(entry.output_spec, [
                Tensor._wrap(o) if isinstance(o, np.ndarray) or hasattr(o, "shape") else o
                for o in outs])
        call = _Call(entry, arrays, outs, results[n + entry.n_updates:], primals)
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
    the values of non-tensor arguments, grad mode, a module's parameters,
    ``training`` flags and which modules have hooks) replay the graphs without
    running ``model``'s Python.
    A new guard traces again, up to ``config.recompile_limit`` (8) graphs; past
    that, calls run eagerly with one :class:`RecompileLimitWarning`.  Python
    that needs a tensor's value (``if x.sum() > 0:``, ``.item()``) is a
    *graph break*: the graph is split there and the value read picks the
    graphs that follow; one that prints it or makes a list of it runs that
    call eagerly (:func:`explain` says where and which).
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
        ``"inductor"`` or ``"difflab"``: graphs with the passes fold, cse, join,
        stack (to 1e-12: it reorders a weight's sum of products over a loop's
        steps), cse, dce and fuse (generated kernels: numba when installed, tiled NumPy
        otherwise; without numba, float32 graphs replay line by line, which
        measured faster than the NumPy kernels: ``jit.fusion.fusion_pays``).
        ``"aot_eager"``: graphs, no fusion.  ``"eager"``: no graphs at all.
    mode : str or None
        PyTorch's modes.  ``"reduce-overhead"`` and ``"max-autotune"`` replay
        each graph on the GPU as a CUDA graph: one launch for all its kernels
        (:mod:`difflab.jit.cuda_graphs`; a graph that draws random numbers, or
        reads a value on the host, runs without one, after a
        :class:`~difflab.jit.cuda_graphs.CudaGraphWarning`).  On the CPU, and
        in the other modes, every mode compiles the same way.
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
                             f"(a tuple of graph passes: fold, cse, join, stack, dce, "
                             f"fuse)")
        from difflab.jit.passes import PASSES

        unknown = [p for p in value if p not in PASSES]
        if unknown:
            raise ValueError(f"unknown graph passes {unknown}: the passes are "
                             f"{', '.join(PASSES)}")
        passes = tuple(value)
    if disable:
        return model
    graphs = mode in CUDA_GRAPH_MODES
    if _is_module(model):
        if _module_wrapper is None:
            raise TypeError("dl.compile(module) needs difflab.nn (import difflab)")
        return _module_wrapper(model, CompiledFunction(
            model, fullgraph=fullgraph, passes=passes, cuda_graphs=graphs))
    return CompiledFunction(model, fullgraph=fullgraph, passes=passes, cuda_graphs=graphs)


# ------------------------------------------------------------------ explain


@dataclass
class ExplainOutput:
    """What :func:`explain` found: graphs, graph breaks and their reasons (dynamo's names).

    A dataclass, made by :func:`explain`; its fields are its constructor's parameters.
    ``str()`` gives the report as ``torch._dynamo.explain`` prints it.

    Parameters
    ----------
    graphs : list of Graph
        The graphs a compiled call would replay: one per graph break that
        splits (ending at the value read), then the forward, and the
        backward when something requires grad; empty when a break makes
        the call eager.
    graph_count : int
        ``len(graphs)``.
    graph_break_count : int
        ``len(break_reasons)``.
    break_reasons : list of GraphBreak
        The breaks met, each with its file and line: every one that splits,
        then what makes the call eager (the trace stops at the first break
        of that kind; buffers of a closure's module it wrote are one more).
    op_count : int
        The nodes of all the graphs.
    ops_per_graph : list of int
        The nodes of each graph.
    compile_seconds : float
        Tracing and building the graphs, in seconds (not the call's run).
    python_runs : int, default 1
        How many times the function's Python ran in the call (traces and an
        eager run together): 1 for a call traced once and replayed; 2 when a
        break that makes the call eager stopped the trace (the Python before
        it ran twice, traced, then eagerly); more for arguments of 1 MiB or
        more, traced on stand-ins first.  ``torch.compile`` runs it once per
        call, so a side effect in the function (a list append, a print)
        happens ``python_runs`` times in a first call here.

    See Also
    --------
    explain : makes it.
    GraphBreak : one entry of ``break_reasons``.

    Examples
    --------
    >>> import difflab as dl
    >>> out = dl.compile.explain(lambda x: x.sin().sum())(dl.ones(3))
    >>> out.graph_count, out.graph_break_count
    (1, 0)
    >>> def flip(x):
    ...     y = x.sin()
    ...     return y * 2 if y.sum() > 0 else -y
    >>> out = dl.compile.explain(flip)(dl.ones(3))
    >>> out.graph_count, out.graph_break_count, out.ops_per_graph
    (2, 1, [3, 1])
    >>> print(out)                                    # doctest: +ELLIPSIS
    Graph Count: 2
    Graph Break Count: 1
    Op Count: 4
    Break Reasons:
      Break Reason 1:
        Reason: bool() of a tensor computed from the inputs: ...
        User Stack: ...
        Splits: the graph ends here; the value read picks the next graph
    Ops per Graph: 3, 1
    Python Runs: 1
    Compile Time: ... s
    """

    graphs: list
    graph_count: int
    graph_break_count: int
    break_reasons: list
    op_count: int
    ops_per_graph: list
    compile_seconds: float
    python_runs: int = 1

    def __str__(self) -> str:
        lines = [f"Graph Count: {self.graph_count}",
                 f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        for k, b in enumerate(self.break_reasons, start=1):
            lines += [f"  Break Reason {k}:", f"    Reason: {b.reason}",
                      f"    User Stack: {b.filename}:{b.lineno}",
                      "    Splits: the graph ends here; the value read picks the next graph"
                      if b.splits else "    Eager: the call runs eagerly (no graph replayed)"]
        lines.append("Ops per Graph: " + ", ".join(map(str, self.ops_per_graph)))
        lines.append(f"Python Runs: {self.python_runs}" + (
            " (the function's Python before the first break ran more than once in this "
            "call: side effects there repeat; torch.compile runs them once)"
            if self.python_runs > 1 else ""))
        lines.append(f"Compile Time: {self.compile_seconds:.4f} s")
        return "\n".join(lines)


def explain(fn: Callable) -> Callable[..., ExplainOutput]:
    """``explain(fn)(*args)``: run one call as :func:`compile` would; report graphs and breaks.

    Like ``torch._dynamo.explain``, it *runs* the call, by the path a first
    call of ``dl.compile(fn)`` takes (a fresh compiled function, so nothing
    is cached yet): ``fn`` is traced, every tensor the trace wrote is put
    back, then the graphs are replayed or, past a break that makes the call
    eager, ``fn`` runs itself.  So the call's effects happen once, as in one
    eager call: a training step moves the parameters and the optimizer's
    state by one step.  The report lists every break that splits the graph
    and, the trace stopping there, the first that makes the call eager (what
    follows it runs in the eager call, untraced), each with its reason, file
    and line.

    Parameters
    ----------
    fn : callable or Module
        A function, a module, or what :func:`compile` returned (its
        backend's graph passes are used; its cache is left alone).

    Returns
    -------
    callable
        Taking ``fn``'s arguments: it runs the call and returns an
        :class:`ExplainOutput` (not ``fn``'s result).

    Raises
    ------
    Exception
        Whatever ``fn`` raises when it runs eagerly (a trace that fails makes
        the call eager, as in :func:`compile`).

    See Also
    --------
    compile : what is explained.
    ExplainOutput : the report.

    Examples
    --------
    >>> import difflab as dl
    >>> def f(x):
    ...     if x.sum() > 0:               # Python reads a value: a graph break
    ...         return x.exp()
    ...     return x
    >>> out = dl.jit.explain(f)(dl.ones(3))
    >>> out.graph_count, out.graph_break_count    # the graph before the read, the one after
    (2, 1)
    >>> print(out.break_reasons[0].reason.split(":")[0])
    bool() of a tensor computed from the inputs
    >>> out.break_reasons[0].splits               # (False: the call would run eagerly)
    True
    >>> out.python_runs                           # traced once, its graphs replayed
    1

    A training step with ``backward()`` inside runs eagerly (``.grad`` is set,
    not computed by a graph), and steps once:

    >>> model = dl.nn.Linear(2, 1)
    >>> opt = dl.optim.SGD(model.parameters(), lr=0.1)
    >>> def step(x):
    ...     opt.zero_grad()
    ...     loss = model(x).pow(2).mean()
    ...     loss.backward()
    ...     opt.step()
    ...     return loss
    >>> before = model.bias.item()
    >>> out = dl.jit.explain(step)(dl.ones(4, 2))
    >>> out.graph_count, out.graph_break_count, out.break_reasons[0].splits
    (0, 1, False)
    >>> print(out.break_reasons[0].reason.split(" inside")[0])
    backward()
    >>> out.python_runs        # traced up to backward(), then run eagerly: the loss twice
    2
    >>> abs(model.bias.item() - (before - 0.1 * model.bias.grad.item())) < 1e-6  # one step
    True
    """
    if isinstance(fn, CompiledFunction):
        target, passes = fn.fn, fn.passes
    else:
        target = getattr(fn, "_orig_mod", fn)
        passes = getattr(getattr(fn, "_compiled", None), "passes", None)

    def run(*args: Any, **kwargs: Any) -> ExplainOutput:
        compiled = CompiledFunction(target, passes=passes or BACKENDS["difflab"])
        compiled(*args, **kwargs)
        breaks = list(compiled.breaks)
        if not compiled.cache:  # (no trace: compile runs such a call eagerly as it is)
            breaks.append(GraphBreak(
                "an argument is not a tensor, an array or a plain Python value (a dual "
                "number, a custom object), or the call is inside another trace: dl.compile "
                "runs such a call eagerly, untraced", *_user_frame()))
        graphs = _graphs_of(next(iter(compiled.cache.values()), None))
        sizes = [len(g.nodes) for g in graphs]
        return ExplainOutput(graphs, len(graphs), len(breaks), breaks, sum(sizes), sizes,
                             compiled.compile_seconds, compiled.python_runs)

    return run


def _graphs_of(entry: Any) -> list[Graph]:
    """The graphs along the path traced first (each stage's first branch), ending in the
    forward and backward graphs; none when the path ends eagerly."""
    graphs = []
    while isinstance(entry, Stage):
        graphs.append(entry.graph)
        entry = next(iter(entry.branches.values()))
    if not isinstance(entry, _Graphs):
        return []
    return graphs + [g for g in (entry.forward, entry.backward) if g is not None]


compile.explain = explain  # type: ignore[attr-defined]  (dl.compile.explain, as dynamo's)
