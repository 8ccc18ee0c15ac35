r"""Tracing on stand-ins: a graph's first build without holding the values.  A speed
(and memory) shortcut: skip it on a first read.

A graph records *what* is computed, not the numbers: each node's primitive,
its arguments, its settings, and the shape and dtype of its result.  Tracing
runs the function on real arrays only because that is how the primitives
report what they do.  On a big input that costs memory: the tracer keeps
every value it has seen, and a traced backward (``create_graph=True``)
keeps every forward value its VJPs read.  Tracing the Rosenbrock gradient
at n = 10^6 used to peak at 20 times the input.

So the first build of a graph traces on **stand-ins** instead.  A stand-in
has the shape and dtype of the array it replaces and one number in every
element: ``np.broadcast_to(x.min(), x.shape)``, a zero-stride view of 8
bytes.  The primitives run on them as NumPy lets them (an operation makes one
full-size result); the tracer writes its node and then swaps that result,
and the arrays its forward saved, for stand-ins (:func:`shrink`).  At any
moment the trace holds one operation's result, not the whole tape.

Why the graph is the same as on the real values: until the function turns
a value into Python (``bool``, ``item``, a branch on ``x.sum() > 0``),
nothing it does depends on the numbers, only on shapes and dtypes, which the
stand-ins keep.  Everything that could depend on them stops this trace
(:class:`NeedsValues`), and the caller traces again on the real arrays, as
before:

* a computed value read into Python (the tracer's value-read hook);
* anything the tracer would warn about (a mask's data-dependent shape, ...);
* an in-place write (a stand-in cannot be written; the graph of a write is
  replayed with the real arrays' copies checked);
* a derivative rule's settings that are arrays computed from the values
  (``ctx.invstd`` of a normalisation): they would become constants of the
  graph (:func:`check_settings`);
* any error at all (a singular stand-in matrix, an index out of range):
  the real values decide whether it is the function's own;
* two traces that disagree.  Code that computes on a traced value's raw
  array outside the primitives (``np.where`` on tensors builds its gradient's
  masks so) is not seen by the tracer, and its result would become a
  constant holding the stand-in's number.  So :func:`build_on_stand_ins`
  traces twice, on each array's smallest element and then its largest, and
  keeps the graph only if both traces give the same listing and constants.

Values not computed from the inputs (a module's weights, a constant made
inside the function) stay real: Python may read them freely.  Only NumPy
arrays are replaced (a GPU trace keeps its arrays), and only when the
arguments hold at least :data:`MIN_BYTES` (1 MiB): the function's Python runs
twice while tracing on stand-ins, so small calls trace once, on their values.  Set
``DIFFLAB_JIT_STANDINS=0`` (or :data:`ENABLED` = False) to trace on the real
values only: the graphs are the same (``tests/jit/test_jit_standins.py``
checks it), the first call just holds more memory.
"""

from __future__ import annotations

import contextlib
import os
import warnings
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

#: Whether a graph's first build traces on stand-ins (``DIFFLAB_JIT_STANDINS=0``: never).
ENABLED: bool = os.environ.get("DIFFLAB_JIT_STANDINS", "1").strip().lower() not in (
    "0", "off", "false", "no")

#: Arguments smaller than this (bytes, all together) are traced on their values, once: the
#: memory saved would be small, and the function's Python runs once, not twice.
MIN_BYTES: int = 1 << 20

#: Set inside :func:`tracing_on_stand_ins`: ``trace_graph`` then replaces its arguments.
_ACTIVE: list[bool] = [False]
#: Which number the stand-ins of this trace hold: each array's "min" or "max".
_FILL: list[str] = ["min"]


class NeedsValues(BaseException):
    """A trace on stand-ins met something the values decide: trace on the real arrays.

    A BaseException, as the tracer's graph-break signal: a function's own
    ``except Exception`` must not swallow it and go on with stand-in numbers.
    """


def stand_in(array: Any) -> Any:
    """An array of ``array``'s shape and dtype holding its first element everywhere.

    A zero-stride view of one number: no memory, read-only (a write raises).
    Only NumPy arrays are replaced; anything else comes back as it is.

    Examples
    --------
    >>> import numpy as np
    >>> s = stand_in(np.arange(6.0).reshape(2, 3))
    >>> s.shape, s.strides, float(s[1, 2])
    ((2, 3), (0, 0), 0.0)
    """
    if type(array) is not np.ndarray or array.size <= 1 or is_stand_in(array):
        return array
    made = np.broadcast_to(np.array(_fill(array)), array.shape)  # (its own 0-d array)
    _MADE[id(made)] = made
    return made


def _fill(array: np.ndarray) -> Any:
    """The number a stand-in holds: the array's smallest element, or its largest in the
    second trace of :func:`build_on_stand_ins` (NaNs aside; the first element if none)."""
    flat = array.reshape(-1)
    if array.dtype.kind not in "biuf":
        return flat[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (all NaN)
        found = np.nanmax(array) if _FILL[0] == "max" else np.nanmin(array)
    return flat[0] if array.dtype.kind == "f" and np.isnan(found) else found


#: id -> every stand-in alive (held weakly): a user's own zero-stride array is no stand-in.
_MADE: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def is_stand_in(array: Any) -> bool:
    """Whether ``array`` is a stand-in :func:`stand_in` made (and not a user's own array).

    Examples
    --------
    >>> import numpy as np
    >>> is_stand_in(stand_in(np.arange(4.0))), is_stand_in(np.broadcast_to(1.0, (4,)))
    (True, False)
    """
    return _MADE.get(id(array)) is array


def active() -> bool:
    """Whether a trace starting now should run on stand-ins."""
    return _ACTIVE[0] and ENABLED


@contextlib.contextmanager
def tracing_on_stand_ins(fill: str = "min") -> Iterator[None]:
    """Within this block, :func:`difflab.jit.tracing.trace_graph` traces on stand-ins.

    The caller catches :class:`NeedsValues` (and any error) and builds again
    outside the block, on the real values.  NumPy's floating-point warnings
    are off: a stand-in's number may be outside a function's domain.
    """
    outer, _ACTIVE[0] = _ACTIVE[0], True
    outer_fill, _FILL[0] = _FILL[0], fill
    try:
        with np.errstate(all="ignore"):
            yield
    finally:
        _ACTIVE[0], _FILL[0] = outer, outer_fill


def build_on_stand_ins(build: Callable[[], Any], graphs: Callable[[Any], list],
                       nbytes: int) -> Any:
    """``build()`` traced on stand-ins, or None if the values are needed (or if the
    arguments, ``nbytes`` in all, are smaller than :data:`MIN_BYTES`).

    Traced twice: the stand-ins hold each array's smallest element, then its
    largest.  What a trace keeps of the numbers (a constant a rule computed
    from them outside the primitives, a mask, a number in a line) differs
    between the two, and then the real values decide (None).  ``graphs(built)``
    lists the graphs to compare.
    """
    if not ENABLED or nbytes < MIN_BYTES:
        return None
    # (each trace draws what one trace on the values would; the random generator is left
    # as that one trace leaves it, or as found when the values must decide)
    before = _generator_state()
    built, after = [], before
    try:
        for fill in ("min", "max"):
            _set_generator_state(before)
            with tracing_on_stand_ins(fill):
                built.append(build())
            if fill == "min":
                after = _generator_state()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # noqa: BLE001 (NeedsValues, or an error the values decide)
        _set_generator_state(before)
        return None
    if not all(_same(a, b) for a, b in zip(graphs(built[0]), graphs(built[1]), strict=True)):
        _set_generator_state(before)
        return None
    _set_generator_state(after)
    return built[0]


def _generator_state() -> tuple:
    from difflab import random

    rng = random.default_generator.rng
    return rng, rng.bit_generator.state


def _set_generator_state(saved: tuple) -> None:
    from difflab import random

    rng, state = saved
    random.default_generator.rng = rng
    rng.bit_generator.state = state


def _same(a: Any, b: Any) -> bool:
    """Two graphs alike: the same listing (numbers in lines included) and constants."""
    if str(a) != str(b) or set(a.constants) != set(b.constants):
        return False
    for name, x in a.constants.items():
        x, y = np.asarray(x), np.asarray(b.constants[name])
        if x.shape != y.shape or not np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"):
            return False
    return True


def shrink(ctx: Any, result: Any, inputs: Any) -> None:
    """Swap a recorded operation's result, and the arrays its forward saved, for stand-ins.

    Called by the tracer before it remembers them, so it knows the stand-ins.
    A saved array that is the result becomes the result's stand-in (the tape
    tells the two apart by identity); one that is an input's stays.
    """
    out = result.array
    small = stand_in(out)
    if small is out and not getattr(ctx, "saved", None):
        return
    result.array = small
    saved = getattr(ctx, "saved", None)
    if saved:
        own = {id(x.array if hasattr(x, "array") else x) for x in inputs}
        ctx.saved = tuple(
            small if s is out else s if id(s) in own or not hasattr(s, "shape")
            else stand_in(s) for s in saved)


def check_settings(settings: dict) -> None:
    """Stop a stand-in trace if a rule's settings hold arrays (computed from the values).

    A VJP or JVP node keeps its primitive's ``ctx`` attributes as settings;
    an array among them (``ctx.invstd``) would be recorded as a constant of
    the graph, so it must be the real one.
    """
    if any(isinstance(v, (np.ndarray, np.generic)) or hasattr(v, "__array_interface__")
           for v in settings.values()):
        raise NeedsValues("a derivative rule's settings hold an array")
