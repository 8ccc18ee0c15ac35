"""Speed shortcut of ``dl.compile``: the guard of a steady-state call, checked cheaply.  Skip it.

Every call of a :class:`~difflab.jit.compiler.CompiledFunction` computes its
*guard* (:meth:`~difflab.jit.compiler.CompiledFunction.guard`): the nesting of
the arguments flattened and written out with ``repr``, then per argument its
shape, dtype, device and ``requires_grad``, a module's state, the grad mode.
That is general (lists, dicts and numbers among the arguments) and, on a
chain of 200 operations on 16 numbers, a tenth of the call.

The common call is simpler: positional tensors on the CPU, no keywords.
For it the guard says no more than one flat tuple does,

    ((shape, dtype, requires_grad) per argument, module state, grad mode)

(the nesting is "n tensors in a row", fixed by the tuple's length; a NumPy
array's device is the CPU), so :class:`GuardCache` keeps such a *quick key*
beside the full guard it stood for, and a later call with an equal quick key
takes the same graphs (or, for a guard that runs eagerly, a training step with
``backward()`` inside, the eager call) without building the full guard.  Every guard is still
checked: a new shape, dtype, ``requires_grad``, grad mode, parameter (by
identity, shape and dtype) or ``training`` flag is a new quick key, which
misses and takes the plain path (a trace).  Any other call (keywords, a
number or a list among the arguments, a GPU array) is the plain path.

The quick keys are forgotten whenever the cache of guards changes (a new
guard, one dropped because a captured tensor changed shape, a user's
``cache.clear()``), so they can only name graphs the plain path would pick.
``tests/jit/test_compile_steady.py`` checks each of these; ``DIFFLAB_FASTPATH=0``
(:mod:`difflab.fastpath`) switches the shortcut off with the others.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from difflab import fastpath
from difflab.autograd import engine, engine_quick
from difflab.autograd.functional import is_implicit_seed
from difflab.autograd.grad_mode import _State
from difflab.jit.capture import _state_guard, _walk
from difflab.jit.joint import _Call, _CompiledOutput, _Graphs, hand_over
from difflab.tensor import Tensor
from difflab.utils.hooks import hooks_changes


class GuardCache(dict):
    """A compiled function's guards -> graphs (a dict), with its quick keys beside it.

    ``quick`` maps a quick key (:func:`quick_key`) to ``(guard, entry, replay)``: the
    full guard it stood for, what the cache holds for it, and its :class:`SingleOutput`
    (or None).  Any change to the dict
    empties ``quick``, so a quick key never outlives its guard.

    Examples
    --------
    >>> from difflab.jit.steady import GuardCache
    >>> cache = GuardCache()
    >>> cache["guard"] = "graphs"
    >>> cache.quick["quick key"] = ("guard", "graphs", None)
    >>> cache.clear(); cache.quick
    {}
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.quick: dict = {}

    def remember(self, quick: tuple, guard: tuple, entry: Any) -> None:
        """Note that ``quick`` stands for ``guard``, whose entry is ``entry`` (with its
        :class:`SingleOutput` replay where it has one)."""
        if len(self.quick) >= 4 * max(len(self), 1):  # (bounded as the guards are)
            self.quick.clear()
        self.quick[quick] = (guard, entry, SingleOutput.of(entry))

    # (every way to change a dict: each forgets the quick keys)
    def __setitem__(self, key: Any, value: Any) -> None:
        self.quick.clear()
        super().__setitem__(key, value)

    def __delitem__(self, key: Any) -> None:
        self.quick.clear()
        super().__delitem__(key)

    def clear(self) -> None:
        """Forget every graph and every quick key."""
        self.quick.clear()
        super().clear()

    def pop(self, *args: Any) -> Any:
        """``dict.pop``, forgetting the quick keys."""
        self.quick.clear()
        return super().pop(*args)

    def popitem(self) -> tuple:
        """``dict.popitem``, forgetting the quick keys."""
        self.quick.clear()
        return super().popitem()

    def setdefault(self, key: Any, default: Any = None) -> Any:
        """``dict.setdefault``, forgetting the quick keys."""
        self.quick.clear()
        return super().setdefault(key, default)

    def update(self, *args: Any, **kwargs: Any) -> None:
        """``dict.update``, forgetting the quick keys."""
        self.quick.clear()
        super().update(*args, **kwargs)

    def __ior__(self, other: Any) -> GuardCache:
        self.update(other)
        return self


def quick_key(args: tuple, state_guard: tuple) -> tuple | None:
    """The quick key of a call of positional CPU tensors; None for any other call.

    Parameters
    ----------
    args : tuple
        The call's positional arguments (the call has no keywords).
    state_guard : tuple
        The module's state guard (``capture._state_guard``); ``((), ())`` for a function.

    Returns
    -------
    tuple or None
        Equal for two calls exactly when their full guards are equal (both calls
        being of this kind); None when the shortcuts are off or a call is of
        another kind.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.jit.steady import quick_key
    >>> a = quick_key((dl.ones(3),), ((), ()))
    >>> a == quick_key((dl.zeros(3),), ((), ())), a == quick_key((dl.ones(4),), ((), ()))
    (True, False)
    >>> quick_key((dl.ones(3), 2.0), ((), ())) is None     # a number: the full guard
    True
    """
    if not fastpath.ENABLED:
        return None
    parts = []
    for a in args:
        if not isinstance(a, Tensor):
            return None
        array = a.array
        if type(array) is not np.ndarray:
            return None
        parts.append((array.shape, array.dtype, a._requires_grad))
    return tuple(parts), state_guard, _State.enabled  # (is_grad_enabled(), read inline)


class StateWatch:
    """A compiled module's parameters, buffers and ``training`` flags, walked again only
    when its tree of modules changed.

    Every call of a compiled module needs its state (``capture._walk``: every
    parameter and buffer by dotted name, every submodule's ``training`` flag) and
    the state's guard (``capture._state_guard``: per tensor its name, identity,
    shape, dtype and ``requires_grad``).  The walk goes through
    ``named_modules()``, a recursive generator that builds every dotted name
    again: for an attention block, two thirds of the guard's cost.

    The watch keeps, from the last walk, every module with what decided the walk
    there: its ``training`` flag and the items of its ``_modules``,
    ``_parameters`` and ``_buffers`` (names and objects).  When each is still the
    same (the objects compared by identity) the walk would give the same list,
    so :meth:`read` hands out the kept one; the tensors' shapes, dtypes and
    ``requires_grad`` can change without any of that, so they are compared at
    every call, and any change walks again.  So is whether any hook was registered
    or removed with a handle since (``utils.hooks.hooks_changes``: the walk notes
    which modules have hooks, part of the guard; a hook put in a module's hook dict
    by hand, without a handle, is seen at the next walk).  A module class with its own
    ``named_modules`` (it might yield other modules) turns the watch off for that
    module.

    Parameters
    ----------
    fn : callable
        The compiled module's forward (bound method) or the module itself.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.jit.steady import StateWatch
    >>> net = dl.nn.Sequential(dl.nn.Linear(2, 3), dl.nn.Tanh())
    >>> watch = StateWatch(net)
    >>> state, training, guard = watch.read()
    >>> [name for name, _ in state], training
    (['0.weight', '0.bias'], (True, True, True))
    >>> watch.read()[0] is state                    # nothing changed: the same list
    True
    >>> _ = net.eval(); watch.read()[1]             # a flag changed: walked again
    (False, False, False)
    """

    def __init__(self, fn: Any) -> None:
        self.root = getattr(fn, "__self__", fn)
        self.fn = fn
        self.kept: tuple | None = None  # (state, training, guard)
        self.modules: list = []  # every module walked, with its training flag in flags
        self.flags: list = []
        self.holders: list = []  # each module's _modules, _parameters, _buffers (the dicts)
        # each module's _modules, _parameters and _buffers: (dict, length, names, objects)
        self.dicts: list = []
        self.tensors: tuple = ()
        self.meta: tuple = ()
        self.hooks: tuple = ()  # utils.hooks.hooks_changes() at the walk

    def read(self) -> tuple[list, tuple, tuple]:
        """``(state, training, state guard)`` as ``_walk`` and ``_state_guard`` give them now."""
        if self.kept is not None and self._unchanged():
            return self.kept
        state, training, hooked = _walk(self.fn)
        guard = _state_guard(state, training, hooked)
        self.kept = None
        if fastpath.ENABLED and self._remember():
            self.tensors = tuple(t for _, t in state)
            self.meta = _meta(self.tensors)
            self.kept = (state, training, guard)
        return state, training, guard

    def _remember(self) -> bool:
        """Note every module's flag and items; False if a class walks its own way."""
        walk = getattr(type(self.root), "named_modules", None)
        modules, dicts = [], []
        for _, module in self.root.named_modules():
            if getattr(type(module), "named_modules", None) is not walk:
                return False
            modules.append(module)
            for d in (module._modules, module._parameters, module._buffers):
                dicts.append((d, len(d), tuple(d), tuple(d.values())))
        self.modules = modules
        self.flags = [m.training for m in modules]
        self.holders = [(m._modules, m._parameters, m._buffers) for m in modules]
        self.dicts = dicts
        self.hooks = hooks_changes()
        return True

    def _unchanged(self) -> bool:
        if hooks_changes() != self.hooks:  # (a hook registered or removed: anywhere)
            return False
        for m, flag, (children, parameters, buffers) in zip(self.modules, self.flags,
                                                             self.holders):
            if m.training != flag or m._modules is not children \
                    or m._parameters is not parameters or m._buffers is not buffers:
                return False  # (a flag changed, or a dict was replaced by another)
        for d, n, names, values in self.dicts:
            if len(d) != n:
                return False
            if n and not (all(map(operator.is_, d.values(), values)) and tuple(d) == names):
                return False
        return _meta(self.tensors) == self.meta


def _meta(tensors: tuple) -> tuple:
    """Per tensor what the state guard says of it besides name and identity."""
    return tuple([(t.array.shape, t.array.dtype, t._requires_grad) for t in tensors])


def fresh(entry: Any) -> bool:
    """Whether every tensor the graphs captured still has the shape they were traced
    with (else the plain path drops the guard and traces again)."""
    for t, shape in getattr(entry, "captured", ()):
        if t.array.shape != shape:
            return False
    return True


class SingleOutput:
    """The replay of graphs that return one tensor (a loss, a layer's output), prepared.

    ``CompiledFunction._replay`` (:mod:`difflab.jit.compiler`) handles every kind of
    graphs: nested outputs, several of them, in-place updates of buffers, values
    from before a graph break.  Graphs returning one tensor, writing nothing in
    place, need only: the primals' arrays, the forward program, and (training)
    the tape record of :class:`~difflab.jit.joint._CompiledOutput` for output 0,
    the one ``engine.apply`` makes, made directly
    (``engine_quick.quick_record``: the output is computed
    already; ``engine.apply`` itself where that declines); so the result and its
    record are the plain path's.  At the seed 1 of ``loss.backward()`` the
    backward hands over the gradients the forward computed without ``_Call``'s
    chain of calls.  What depends on the graphs alone is looked up once, here.

    Parameters
    ----------
    entry : _Graphs
        The graphs of one guard, of that kind (see :meth:`of`).

    Examples
    --------
    >>> import difflab as dl
    >>> f = dl.compile(lambda x: (x * x).sum())
    >>> x = dl.tensor([1.0, 2.0], requires_grad=True)
    >>> replay = SingleOutput.of(f(x) and next(iter(f.cache.values())))
    >>> loss = replay((x,), [])
    >>> loss.backward(); loss, x.grad
    (tensor(5., grad_fn=<CompiledBackward0>), tensor([2., 4.]))
    """

    __slots__ = ("entry", "program", "n", "wrt", "captured", "differentiable")

    def __init__(self, entry: _Graphs) -> None:
        self.entry = entry
        self.program = entry.forward.program()
        self.n = entry.n_outputs
        self.wrt = tuple(entry.wrt)
        self.captured = [t for t, _ in entry.captured]
        self.differentiable = bool(entry.differentiable)

    @classmethod
    def of(cls, entry: Any) -> SingleOutput | None:
        """The prepared replay of ``entry``; None unless it is graphs returning one tensor
        (``output_spec`` a single leaf), with no in-place update and nothing from an
        earlier graph."""
        if type(entry) is not _Graphs or entry.output_spec != "T" or entry.n_outputs != 1 \
                or entry.n_updates or entry.live or entry.differentiable not in ([], [0]):
            return None
        return cls(entry)

    def __call__(self, args: tuple, state: list) -> Tensor:
        """Replay the graphs on the call's tensors ``args`` and the module's ``state``."""
        primals = list(args)
        if state:
            primals += map(_second, state)
        if self.captured:
            primals += self.captured
        # (map over a C getter: a list comprehension is a function call of its own)
        arrays = list(map(_array, primals))
        results = self.program.run(arrays, check=False)
        out = results[0]
        if not self.differentiable:
            return Tensor._wrap(out) if hasattr(out, "shape") else out
        call = HandingOverCall(self.entry, arrays, results[:1], results[1:], primals)
        op, inputs = _CompiledOutput(call, 0), tuple(map(primals.__getitem__, self.wrt))
        # (apply's record, made directly: the output is computed already; see quick_record)
        y = engine_quick.quick_record(op, inputs, out)
        return y if y is not None else engine.apply(op, *inputs)


_array, _second = operator.attrgetter("array"), operator.itemgetter(1)


class HandingOverCall(_Call):
    """A replayed call whose backward graph's gradients are handed over when nobody else
    holds them, so a leaf keeps one as its ``.grad`` without a copy.

    The plain :class:`~difflab.jit.joint._Call` returns the backward graph's
    results as they are, and the engine copies each before it becomes a ``.grad``
    (a result may be an input of the graph, a constant, a view of either, or the
    same array twice).  A result that is a new array, referred to by nothing but
    the list of results, is the pass's own: :func:`hand_over` marks it so
    (:class:`~difflab.fastpath.FreshAdjoint`, shortcut 6), as PyTorch's
    ``AccumulateGrad`` steals a gradient whose use count is one.  The numbers are
    the same; only a copy is saved (a 784 x 512 float32 weight: 1.6 MB per step).

    Examples
    --------
    >>> import difflab as dl
    >>> f = dl.compile(lambda x, w: (x @ w).tanh())
    >>> x, w = dl.ones(2, 3), dl.ones(3, 4, requires_grad=True)
    >>> y = f(x, w); y = f(x, w)                # the second call: the steady replay
    >>> type(y.grad_fn.op.call).__name__
    'HandingOverCall'
    >>> y.sum().backward(); w.grad.shape
    difflab.Size([3, 4])
    """

    __slots__ = ()

    def backward(self, k: int, g: Any, xp: Any) -> tuple:
        if self.graphs.scaled:
            if self.saved is not None and fastpath.ENABLED and is_implicit_seed(g):
                return self._hand_over_saved()  # (a loss's backward at the seed 1)
            return super().backward(k, g, xp)
        if type(g) is not np.ndarray or not fastpath.ENABLED:
            return super().backward(k, g, xp)
        program = self.graphs.backward.program()  # type: ignore[union-attr]
        results = program.run(self.arrays + self.cotangents(k, g, xp) + self.saved,
                              check=False)
        return tuple(hand_over(results))

    def cotangents(self, k: int, g: Any, xp: Any) -> list:
        """As ``_Call.cotangents`` (:mod:`difflab.jit.joint`); for one output whose adjoint
        ``g`` has its shape and dtype already, the read-only view ``broadcast_to`` would
        make, made directly (``broadcast_to`` costs microseconds of checks)."""
        if len(self.graphs.differentiable) == 1 and type(g) is np.ndarray:
            o = self.outputs[self.graphs.differentiable[0]]
            if g.shape == o.shape and g.dtype == o.dtype:
                view = g.view()
                view.flags.writeable = False
                return [view]
        return super().cotangents(k, g, xp)
