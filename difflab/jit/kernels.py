r"""The text of a fused kernel, written by the primitives' own rules, and its compilation.

A fused line of a graph (:mod:`difflab.jit.fusion`) keeps its kernel as data:
``body``, one ``(primitive, arguments)`` per line, and ``outputs``, the
lines that leave it.  For ``loss = sum((x[1:] - x[:-1]) ** 2)`` and its
gradient the body reads

.. code-block:: text

    t0 = sub(in1, in0)              in0, in1: the kernel's inputs (x[:-1], x[1:])
    t1 = pow(t0, 2)
    t2 = sum(t1)                    a sum over the loop
    t3 = mul(2.0, t0)
    t4 = scatter_add(t3, 1:, (n,))  t3 added into an array of shape (n,) at [1:]
    t5 = neg(t3)
    t6 = scatter_add(t5, :-1, (n,))
    t7 = add(t4, t6)                both into the same array

Four kinds of line: *elementwise* (a rule of :mod:`difflab.ops.elementwise`,
one element at a time), *reductions* (``sum``, ``mean``: a running total),
*scatters* (``scatter_add`` with a slice: the element goes to a place of a
bigger array) and *merges* (``add`` of scatters: they write one array).
From this one description come three kernels:

* :func:`scalar_source`, for numba: one loop over the elements, every line
  inside it (``p2 += t1``, ``y4[i] = t3``, ``y6[i] += t5``);
* :func:`array_source`, for NumPy (and CuPy without a GPU compiler): the
  elementwise lines on whole blocks of elements; the runner in
  :mod:`difflab.jit.fusion` adds each block into the sums and scatters;
* the CUDA kernel (:mod:`difflab.jit.cuda_kernels`), for CuPy arrays: the
  elementwise lines in C (:class:`CSource`), the sums and scatters too.

The settings come from graph files too, and they become source code, so
:class:`Layout` checks every name before any text is written.
"""

from __future__ import annotations

import hashlib
import inspect
import math
import os
import re
import stat
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

TILE = 16384  # elements per block of the NumPy kernel: 128 KiB of float64, cache-sized
# Elements per block of the numba kernel: its inputs', outputs' and buffers' pieces of a
# block stay in the L1 cache (the Rosenbrock gradient's five of 4 KiB each; at 2048
# elements, 80 KiB, it ran twice as slow on a 32 KiB L1).
BLOCK = 512

def fusion_kind(op: Any) -> str | None:
    """How the primitive ``op`` fuses: ``"elementwise"``, ``"reduction"``, ``"window"``,
    ``"scatter"``, or None (it does not).

    ``"elementwise"``: a rule of :mod:`difflab.ops.elementwise`, one element at a
    time; ``"reduction"``: a whole-array ``sum``/``mean``, a running total;
    ``"window"``: ``x[index]`` for an ``index`` that is one contiguous piece of
    x, read in place; ``"scatter"``: ``scatter_add`` of the loop's values into
    such a window of an array.

    The primitive's own ``fusion`` attribute (declared by
    :class:`~difflab.ops.primitive.Primitive`, None by default).  Everything in
    the jit that asks how an operation fuses asks here, never by testing its
    name.

    Parameters
    ----------
    op : primitive
        An operation of a graph (a registry primitive, or any other node's operation).

    Returns
    -------
    str or None

    Examples
    --------
    >>> from difflab.jit.kernels import fusion_kind
    >>> from difflab.ops import registry
    >>> fusion_kind(registry.get("sin")), fusion_kind(registry.get("mean"))
    ('elementwise', 'reduction')
    >>> fusion_kind(registry.get("matmul")) is None
    True
    """
    return op.fusion


# --------------------------------------------------------- writing source text


class Expr:
    """A piece of source code that arithmetic operators combine into bigger pieces."""

    def __init__(self, text: str) -> None:
        self.text = text

    def _op(self, symbol: str, other: Any, reverse: bool = False) -> Expr:
        left, right = (_text(other), self.text) if reverse else (self.text, _text(other))
        return type(self)(f"({left} {symbol} {right})")

    def __add__(self, o: Any) -> Expr: return self._op("+", o)
    def __radd__(self, o: Any) -> Expr: return self._op("+", o, True)
    def __sub__(self, o: Any) -> Expr: return self._op("-", o)
    def __rsub__(self, o: Any) -> Expr: return self._op("-", o, True)
    def __mul__(self, o: Any) -> Expr: return self._op("*", o)
    def __rmul__(self, o: Any) -> Expr: return self._op("*", o, True)
    def __truediv__(self, o: Any) -> Expr: return self._op("/", o)
    def __rtruediv__(self, o: Any) -> Expr: return self._op("/", o, True)
    def __pow__(self, o: Any) -> Expr:
        # a ** 2 is written a * a: what NumPy computes for it (its square), and no call
        # of pow() in a compiled loop
        if type(o) in (int, float) and o == 2:
            return self._op("*", self)
        return self._op("**", o)

    def __rpow__(self, o: Any) -> Expr: return self._op("**", o, True)
    def __neg__(self) -> Expr: return type(self)(f"(-{self.text})")


def _text(value: Any) -> str:
    if isinstance(value, Expr):
        return value.text
    if isinstance(value, float) and not math.isfinite(value):
        # (repr gives inf and nan, which are no Python names)
        return "math.nan" if math.isnan(value) else ("math.inf" if value > 0 else "(-math.inf)")
    return repr(value)


class SingleExpr(Expr):
    """Source text of a float32 loop: every number in it is a float32 (``f32(2.0)``).

    numba types a Python number as int64 or float64, and ``float32 * float64``
    as float64: ``x * 2.0`` would be computed in double precision and the
    line's value rounded to float32 only where it is stored, not where NumPy
    rounds it.  NumPy converts a Python number to the array's dtype first
    (NEP 50), so writing each number as ``f32(number)`` makes every
    operation of the loop the float32 operation NumPy does, rounded where
    NumPy rounds.
    """

    def _op(self, symbol: str, other: Any, reverse: bool = False) -> Expr:
        left, right = (_text32(other), self.text) if reverse else (self.text, _text32(other))
        return SingleExpr(f"({left} {symbol} {right})")


def _text32(value: Any) -> str:
    """A value of a float32 loop's text: a number becomes ``f32(number)`` (NumPy's rounding)."""
    if isinstance(value, Expr):
        return value.text
    return f"f32({_text(float(value))})"


class ArraySource:
    """``xp`` for a rule writing array code: ``xp.sin(a)`` stays ``xp.sin(a)``."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args: Expr(f"xp.{name}({', '.join(_text(a) for a in args)})")


class NotScalar(Exception):
    """A rule used an array function with no scalar equivalent here."""


class ScalarSource:
    """``xp`` for a rule writing scalar code (one element): ``xp.sin(a)`` -> ``math.sin(a)``.

    ``single``: the loop is float32; numbers are written ``f32(...)``
    (:class:`SingleExpr`), and numba's ``math`` functions of a float32 are
    float32 (``sinf``), so no value of the loop is promoted to float64.
    """

    MATH = {"exp": "exp", "expm1": "expm1", "log": "log", "log1p": "log1p", "sqrt": "sqrt",
            "sin": "sin", "cos": "cos", "tan": "tan", "arcsin": "asin", "arccos": "acos",
            "arctan": "atan", "arctan2": "atan2", "sinh": "sinh", "cosh": "cosh",
            "tanh": "tanh", "erf": "erf", "log10": "log10", "log2": "log2", "arcsinh": "asinh",
            "arccosh": "acosh", "arctanh": "atanh", "erfc": "erfc", "lgamma": "lgamma",
            "copysign": "copysign"}

    def __init__(self, single: bool = False) -> None:
        self._expr, self._text = (SingleExpr, _text32) if single else (Expr, _text)

    def __getattr__(self, name: str) -> Any:
        expr, text = self._expr, self._text
        if name in self.MATH:
            return lambda *args: expr(f"math.{self.MATH[name]}"
                                      f"({', '.join(text(a) for a in args)})")
        if name == "abs":
            return lambda a: expr(f"abs({text(a)})")
        if name in ("maximum", "minimum"):
            # NumPy's rules: a NaN on either side gives NaN (a + b is NaN then), and a tie
            # gives the second argument (relu's maximum(0, -0.0) is -0.0, as eager).
            wins = ">" if name == "maximum" else "<"
            loses = ">=" if name == "maximum" else "<="
            return lambda a, b: expr(
                f"({text(a)} if {text(a)} {wins} {text(b)} else ({text(b)} if "
                f"{text(b)} {loses} {text(a)} else {text(a)} + {text(b)}))")
        raise NotScalar(name)


class CExpr(Expr):
    """Source text in C (the CUDA kernel): ``a ** b`` is ``pow(a, b)``, numbers are doubles."""

    def _op(self, symbol: str, other: Any, reverse: bool = False) -> CExpr:
        number = type(self).number
        left, right = (number(other), self.text) if reverse else (self.text, number(other))
        if symbol == "**":
            return type(self)(f"pow({left}, {right})")
        return type(self)(f"({left} {symbol} {right})")

    def __neg__(self) -> CExpr:
        return type(self)(f"(-{self.text})")

    @staticmethod
    def number(value: Any) -> str:
        return _c(value)


class SingleCExpr(CExpr):
    """C text of a float32 kernel: numbers are ``(float)2.0``, so ``x * 2.0`` is the
    float32 product CuPy's float32 arrays compute (a bare ``2.0`` is a double in C,
    and ``float * double`` would be computed in double precision)."""

    @staticmethod
    def number(value: Any) -> str:
        return _c32(value)


def _c(value: Any) -> str:
    if isinstance(value, Expr):
        return value.text
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise NotScalar(repr(value))
    number = float(value)  # (always a double literal: in C, 1 / 2 would be 0)
    if math.isnan(number):
        return "NAN"
    if math.isinf(number):
        return "INFINITY" if number > 0 else "(-INFINITY)"
    return repr(number)


def _c32(value: Any) -> str:
    text = _c(value)
    return text if isinstance(value, Expr) else f"((float){text})"


class CSource:
    """``xp`` for a rule writing one element's C code: ``xp.arcsin(a)`` -> ``asin(a)``.

    ``single``: a float32 kernel (:class:`SingleCExpr`); C++'s float overloads
    of ``sin``, ``exp``... are the float32 functions (``sinf``).  ``expr`` and
    ``number`` are the text class and the number writer the lines are written with.
    """

    MATH = {**ScalarSource.MATH, "abs": "fabs", "bessel_j0": "j0",
            "bessel_j1": "j1",  # (Python's math module has no Bessel functions)
            "fmod": "fmod",  # (numba has no math.fmod: a numba kernel runs it as array code)
            "nextafter": "nextafter"}  # (nor math.nextafter; C++'s float overload is float32)

    def __init__(self, single: bool = False) -> None:
        self.expr: type[CExpr] = SingleCExpr if single else CExpr
        self.number = self.expr.number

    def __getattr__(self, name: str) -> Any:
        expr, c = self.expr, self.number
        if name in self.MATH:
            return lambda *args: expr(f"{self.MATH[name]}({', '.join(c(a) for a in args)})")
        if name in ("maximum", "minimum"):  # (NumPy's rules, as ScalarSource's)
            wins = ">" if name == "maximum" else "<"
            loses = ">=" if name == "maximum" else "<="
            return lambda a, b: expr(
                f"({c(a)} {wins} {c(b)} ? {c(a)} : ({c(b)} {loses} {c(a)} ? {c(b)} : "
                f"{c(a)} + {c(b)}))")
        raise NotScalar(name)


def vectorized_elsewhere(op_name: str, numbers: Sequence[Any] | None = None,
                         dtype: Any = np.float32) -> bool:
    """Whether a line of ``op_name`` runs faster as NumPy's own call than in a numba loop.

    float32: NumPy's float32 ``tanh``, ``exp``, ``sin``... are SIMD loops
    (several elements per instruction, about 1-2 ns an element); in a numba
    loop each element calls the C library's scalar function (``tanhf``: some
    50 ns on this project's machine).  Fusing saves one pass over memory,
    about 1 ns an element: less than such a call costs.  So a float32 line
    whose scalar text calls a C library function (``math.*`` but ``sqrt``,
    which compiles to one instruction; ``**`` but a square) or has no scalar
    form stays a NumPy line between kernels (the fusion pass asks here);
    arithmetic, ``abs``, ``maximum``, ``sqrt``, ``x ** 2`` fuse.

    float64: NumPy has SIMD float64 loops for some functions only, and only on
    CPUs with AVX-512 (Intel's SVML, NumPy's ``AVX512_SKX`` loops): ``exp``,
    ``log``, ``tanh``, ``arctan``, ``sinh``... (:data:`SIMD_FLOAT64`).  There
    a float64 line calling one of them stays NumPy's (measured on this
    project's machine, 4096 elements: ``tanh`` 1.7 ns an element in NumPy,
    9.3 in numba's loop; ``exp`` 1.0 against 5.6); elsewhere, and for
    ``sin``, ``cos``, ``erf``, float64 lines fuse.  (The fusion pass asks
    only for loops of :data:`SIMD_FLOAT64_MIN` elements or more: below, a
    NumPy call's own cost, about a microsecond, is more than fusing saves.)

    Parameters
    ----------
    op_name : str
        An elementwise primitive's name.
    numbers : sequence, optional
        The line's arguments: a number where it reads a number, None where it
        reads an array (``pow(x, 2)`` is a product, ``pow(x, y)`` is ``powf``).
        Default: arrays only.
    dtype : dtype-like
        The line's dtype: float32 (the default) or float64; any other: False.

    Returns
    -------
    bool

    Examples
    --------
    >>> import numpy as np
    >>> from difflab.jit.kernels import vectorized_elsewhere, numpy_simd_float64
    >>> vectorized_elsewhere("tanh"), vectorized_elsewhere("mul"), vectorized_elsewhere("sqrt")
    (True, False, False)
    >>> vectorized_elsewhere("pow", (None, 2)), vectorized_elsewhere("pow")
    (False, True)
    >>> vectorized_elsewhere("tanh", dtype=np.float64) == numpy_simd_float64()
    True
    >>> vectorized_elsewhere("sin", dtype=np.float64), vectorized_elsewhere("mul", dtype=np.float64)
    (False, False)
    """
    from difflab.ops.registry import get

    dtype = np.dtype(dtype)
    if dtype not in _LOOP_DTYPES:
        return False
    rule = get(op_name).rule
    if numbers is None:
        numbers = (None,) * (len(inspect.signature(rule.forward).parameters) - 1)
    key = (op_name, tuple(numbers), dtype)
    cached = _VECTORIZED.get(key)
    if cached is None:
        single = dtype == np.float32
        expr, text = (SingleExpr, _text32) if single else (Expr, _text)
        try:
            source = text(rule.forward(ScalarSource(single), *[
                expr(f"a{k}") if v is None else v for k, v in enumerate(numbers)]))
        except NotScalar:
            cached = single  # (no scalar form: float32 stays NumPy's; float64 never fused it)
        else:
            if single:
                cached = bool(re.search(r"math\.(?!sqrt\()", source)) or "**" in source
            else:
                cached = numpy_simd_float64() and any(
                    name in SIMD_FLOAT64 for name in re.findall(r"math\.(\w+)\(", source))
        _VECTORIZED[key] = cached
    return cached


#: The ``math`` functions whose float64 NumPy loop is SIMD on CPUs with AVX-512
#: (NumPy's AVX512_SKX loops), each 2 to 7 times faster than numba's per-element call
#: of the C library's function (measured, 4096 elements, one thread).  ``sin``, ``cos``,
#: ``erf``, ``erfc``, ``lgamma`` and ``sqrt`` are not among them (no faster in NumPy).
SIMD_FLOAT64 = frozenset({"exp", "expm1", "log", "log1p", "log2", "log10", "tan", "asin",
                          "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh"})
#: Loops of fewer elements fuse those functions anyway: NumPy's call costs about 1 µs, and
#: the SIMD loop saves 3 to 9 ns an element.
SIMD_FLOAT64_MIN = 1024


def numpy_simd_float64() -> bool:
    """Whether this NumPy runs its AVX-512 (SVML) float64 loops here (:data:`SIMD_FLOAT64`).

    Returns
    -------
    bool
        NumPy's own report of the CPU (``__cpu_features__["AVX512_SKX"]``); False
        where NumPy does not say.

    Examples
    --------
    >>> from difflab.jit.kernels import numpy_simd_float64
    >>> isinstance(numpy_simd_float64(), bool)
    True
    """
    if not _SIMD64:
        try:
            from numpy._core._multiarray_umath import __cpu_features__ as features
        except ImportError:  # (NumPy 1.x)
            try:
                from numpy.core._multiarray_umath import __cpu_features__ as features
            except ImportError:
                features = {}
        _SIMD64.append(bool(features.get("AVX512_SKX", False)))
    return _SIMD64[0]


_SIMD64: list = []
_VECTORIZED: dict[tuple, bool] = {}


# ------------------------------------------------------------------ windows


def flat_window(index: Any, shape: Sequence[int]) -> tuple[int, tuple] | None:
    """Where ``x[index]`` lies in x's elements in memory order, if in one piece.

    For ``x`` of ``shape`` (C order), ``(start, result shape)`` when the
    elements of ``x[index]`` are the flat elements ``start, start + 1, ...``
    of x; None otherwise.  Integers first, then at most one slice of step 1,
    then whole axes: ``x[1:]``, ``x[:-1]``, ``x[2]``, ``x[2, 1:3]``, ``x[1:, :]``
    are windows; ``x[::2]`` and ``x[:, 1:]`` are not.
    """
    items = index if isinstance(index, tuple) else (index,)
    if any(i is Ellipsis for i in items):
        if sum(i is Ellipsis for i in items) > 1:
            return None
        k = next(j for j, i in enumerate(items) if i is Ellipsis)
        items = items[:k] + (slice(None),) * (len(shape) - len(items) + 1) + items[k + 1:]
    if len(items) > len(shape):
        return None
    items = items + (slice(None),) * (len(shape) - len(items))
    start, result = 0, []
    for axis, (item, n) in enumerate(zip(items, shape)):
        stride = math.prod(shape[axis + 1:])
        if isinstance(item, slice):
            if not all(v is None or _is_int(v) for v in (item.start, item.stop, item.step)):
                return None
            if item.step is not None and item.step == 0:
                return None
            lo, hi, step = item.indices(n)
            length = len(range(lo, hi, step))
            if (step != 1 and length > 1) or (result and length != n):
                return None  # (a stride, or an axis cut after a sliced one: not one piece)
            start += lo * stride if length else 0
            result.append(length)
        elif _is_int(item) and not result:
            if not -n <= item < n:
                return None
            start += (item % n) * stride
        else:
            return None  # (an integer after a slice, None, a list, an array: not a window)
    return start, tuple(result)


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


# -------------------------------------------------------------- broadcasting


def broadcast_read(shape: Sequence[int], loop: Sequence[int]) -> tuple[int, int] | None:
    """How a loop over ``loop`` reads an input of ``shape`` broadcast to it, if it can.

    ``(every, size)``: element k of the loop (C order) is element
    ``(k // every) % size`` of the input.  That holds when the input's axes
    that are not 1 are consecutive axes of the loop, of the same lengths: a
    bias ``(C,)`` against ``(N, C)`` is ``(1, C)`` (it repeats every row), a
    column ``(N, 1)`` is ``(C, N)`` (each element C times in a row), a
    channel bias ``(C, 1, 1)`` against ``(N, C, H, W)`` is ``(H·W, C)``.
    None for any other shape (``(N, 1, W)`` against ``(N, C, W)``).
    """
    shape, loop = tuple(shape), tuple(loop)
    if len(shape) > len(loop):
        return None
    padded = (1,) * (len(loop) - len(shape)) + shape
    axes = [i for i, n in enumerate(padded) if n != 1]
    if any(padded[i] != loop[i] for i in axes):
        return None
    if not axes:
        return 1, 1
    first, last = axes[0], axes[-1]
    if any(loop[i] != 1 for i in range(first, last + 1) if i not in axes):
        return None  # (an axis broadcast between two that are not: not one stride)
    return math.prod(loop[last + 1:]), math.prod(loop[first:last + 1])


def _check_broadcast(broadcast: Any, n_inputs: int) -> tuple:
    """The ``broadcast`` setting (per input, None or (every, size)), checked."""
    if broadcast is None:
        return (None,) * n_inputs
    if not isinstance(broadcast, (tuple, list)) or len(broadcast) != n_inputs:
        raise _bad(f"broadcast must give each of the {n_inputs} inputs None or "
                   f"(every, size), got {broadcast!r}")
    checked = []
    for k, read in enumerate(broadcast):
        if read is not None and not (isinstance(read, (tuple, list)) and len(read) == 2
                                     and all(_is_int(v) and v >= 1 for v in read)):
            raise _bad(f"broadcast of input {k}: {read!r} is not None or two positive "
                       f"integers (every, size)")
        checked.append(None if read is None else (int(read[0]), int(read[1])))
    return tuple(checked)


# ------------------------------------------------------------------- layout


_LOCAL = re.compile(r"^(in|t)(\d{1,6})$")


class Layout:
    """A fused kernel's settings, checked, and what its runners need to know.

    ``kinds[j]`` is line j's kind: ``"elementwise"``, ``"reduction"`` (sum,
    mean), ``"scatter"`` or ``"merge"``.  Each scatter writes a window of one
    array: the array of its *root*, the merge that takes it in (or itself).
    In each array the scatter whose window starts last writes first (``=``),
    the others add (``+=``); element e of the window starting at a is
    written at step e - a of the loop, so the largest a comes first, and
    what it does not cover is set to zero before the loop.

    The settings come from graph files too, and they become source code:
    every name must be a known line kind, every argument a local name
    (``in3``, or ``t2`` of an earlier line) or a number, every output a line.
    Nothing else ever reaches the generated text.
    """

    def __init__(self, body: Any, outputs: Any, broadcast: Any = None) -> None:
        from difflab.ops import registry

        if not isinstance(body, (tuple, list)) or not body:
            raise _bad("body must be a non-empty list of (primitive, arguments)")
        self.body = body
        self.kinds: list[str] = []
        self.n_inputs = 0
        self.reads: dict[int, str] = {}  # sink line -> the name it reads
        self.root: dict[int, int] = {}  # scatter line -> the line of its array
        self.start: dict[int, int] = {}  # scatter line -> where its window starts
        self.shape: dict[int, tuple] = {}  # scatter or merge line -> its array's shape
        self.merged: set[int] = set()  # scatter or merge lines an add took in
        for j, line in enumerate(body):
            if not (isinstance(line, (tuple, list)) and len(line) == 2
                    and isinstance(line[0], str) and isinstance(line[1], (tuple, list))):
                raise _bad(f"line {j} is not (primitive, arguments)")
            name, args = line
            op = registry.PRIMITIVES.get(name)  # (a name from a file may be no primitive)
            kind = None if op is None else fusion_kind(op)
            if name == "add" and len(args) == 2 and any(
                    self._kind_of(a) in ("scatter", "merge") for a in args):
                self._merge(j, args)
                kind = "merge"
            elif kind == "reduction":
                self._expect(j, name, args, 1)
                self.reads[j] = self._vector(j, args[0])
            elif kind == "scatter":
                self._scatter(j, name, args)
            elif kind == "elementwise":
                self._elementwise(j, name, args)
            else:
                raise _bad(f"line {j}: {name!r} is not a primitive that fuses (elementwise, "
                           f"a reduction or a scatter)")
            self.kinds.append(kind)
        self._check_outputs(outputs)
        self.broadcast = _check_broadcast(broadcast, self.n_inputs)

    # (checking, line by line)
    def _scatter(self, j: int, name: str, args: Sequence) -> None:
        """``scatter_add(value, index, shape)``: index must be one window of that shape."""
        self._expect(j, name, args, 3)
        self.reads[j] = self._vector(j, args[0])
        shape = args[2]
        if not (isinstance(shape, (tuple, list)) and all(_is_int(s) and s >= 0 for s in shape)):
            raise _bad(f"line {j}: {name}'s shape {shape!r} is not a shape")
        window = flat_window(args[1], tuple(shape))
        if window is None:
            raise _bad(f"line {j}: {name}'s index {args[1]!r} is not one contiguous window "
                       f"of an array of shape {tuple(shape)}")
        self.start[j], self.shape[j] = window[0], tuple(int(s) for s in shape)
        self.root[j] = j

    def _elementwise(self, j: int, name: str, args: Sequence) -> None:
        """An elementwise rule's arguments: as many as it takes, each a name or a number."""
        from difflab.ops import registry

        # (a rule's forward takes xp, then its arguments)
        arity = len(inspect.signature(registry.get(name).rule.forward).parameters) - 1
        self._expect(j, name, args, arity)
        for a in args:
            if isinstance(a, str):
                self._vector(j, a)
            elif isinstance(a, bool) or not isinstance(a, (int, float)):
                raise _bad(f"line {j}: argument {a!r} is not a name or a number")

    def _expect(self, j: int, name: str, args: Sequence, count: int) -> None:
        if len(args) != count:
            raise _bad(f"line {j}: {name} takes {count} arguments, got {len(args)}")

    def _kind_of(self, name: Any) -> str | None:
        match = _LOCAL.match(name) if isinstance(name, str) else None
        if match is None or match.group(1) == "in" or int(match.group(2)) >= len(self.kinds):
            return None
        return self.kinds[int(match.group(2))]

    def _vector(self, j: int, name: Any) -> str:
        """Check that ``name`` is a value of the loop: an input or an earlier elementwise line."""
        match = _LOCAL.match(name) if isinstance(name, str) else None
        if match is None or (match.group(1) == "t" and int(match.group(2)) >= j):
            raise _bad(f"line {j}: argument {name!r} is neither an input (in0, in1, ...) "
                       f"nor an earlier line (t0 ... t{j - 1})")
        if match.group(1) == "in":
            self.n_inputs = max(self.n_inputs, int(match.group(2)) + 1)
        elif self.kinds[int(match.group(2))] != "elementwise":
            raise _bad(f"line {j} reads {name}, a {self.kinds[int(match.group(2))]} line, "
                       f"whose value exists only after the loop")
        return name

    def _merge(self, j: int, args: Sequence) -> None:
        """``add`` of two scatters: from now on they write one array, line j's."""
        if not all(self._kind_of(a) in ("scatter", "merge") for a in args):
            raise _bad(f"line {j}: add of {args[0]!r} and {args[1]!r} mixes a scatter "
                       f"with a value of the loop")
        lines = [int(a[1:]) for a in args]
        if lines[0] == lines[1] or any(line in self.merged for line in lines):
            raise _bad(f"line {j}: t{lines[0]} or t{lines[1]} is already added elsewhere")
        if self.shape[lines[0]] != self.shape[lines[1]]:
            raise _bad(f"line {j}: add of scatters into arrays of different shapes")
        self.merged.update(lines)
        for k, root in self.root.items():
            if root in lines:
                self.root[k] = j
        self.shape[j] = self.shape[lines[0]]

    def _check_outputs(self, outputs: Any) -> None:
        if not isinstance(outputs, (tuple, list)) or not outputs or not all(
                _is_int(k) and 0 <= k < len(self.body) for k in outputs):
            raise _bad(f"outputs must be line numbers 0 ... {len(self.body) - 1}, "
                       f"got {outputs!r}")
        outputs = tuple(int(k) for k in outputs)
        if len(set(outputs)) != len(outputs):
            raise _bad(f"outputs {outputs!r} name a line twice")
        for k in outputs:
            if k in self.merged:
                raise _bad(f"output t{k} is added into another scatter's array; the "
                           f"output is that array")
        for j, kind in enumerate(self.kinds):
            if (kind == "reduction" or kind in ("scatter", "merge") and j not in self.merged) \
                    and j not in outputs:
                raise _bad(f"line {j} ({self.body[j][0]}) computes an array that is not "
                           f"among the outputs")
        self.outputs = outputs
        # The arrays the loop writes, one parameter y{j} each: the elementwise and reduced
        # outputs (in the order of `outputs`), then each scatter's window.
        self.parameters = [k for k in outputs if self.kinds[k] in ("elementwise", "reduction")]
        self.parameters += [j for j, kind in enumerate(self.kinds) if kind == "scatter"]
        # In each array, the scatter whose window starts last writes first.
        self.first = {}
        for j in sorted(self.root, key=lambda j: (-self.start[j], j)):
            self.first.setdefault(self.root[j], j)
        # The values of the loop that the elementwise part hands on (lines, not inputs).
        wanted = [k for k in outputs if self.kinds[k] == "elementwise"]
        wanted += [int(n[1:]) for n in self.reads.values() if n[0] == "t"]
        self.delivered = list(dict.fromkeys(wanted))


def _bad(why: str) -> Exception:
    from difflab.jit.graph import GraphError

    return GraphError(f"a fused kernel's settings are not valid: {why}")


def check_body(body: Any, outputs: Any) -> int:
    """Refuse settings that are not a fused kernel; the number of its inputs if they are."""
    return Layout(body, outputs).n_inputs


# --------------------------------------------------------------- the kernels


def _lines(body: Sequence[tuple], kinds: Sequence[str], xp: Any, read: Any,
           expr: type = Expr, text: Any = _text) -> list[str]:
    """One assignment per elementwise line, written by the primitives' own rules."""
    from difflab.ops.registry import get

    lines = []
    for j, (op_name, args) in enumerate(body):
        if kinds[j] == "elementwise":
            rule = get(op_name).rule
            values = [expr(read(a)) if isinstance(a, str) else a for a in args]
            lines.append(f"t{j} = {text(rule.forward(xp, *values))}")
    return lines


def array_source(layout: Layout) -> str:
    """The NumPy (or CuPy) kernel: the elementwise lines on one block of elements.

    It returns the values the outputs, sums and scatters need
    (``layout.delivered``); the runner writes them where they go.
    """
    lines = _lines(layout.body, layout.kinds, ArraySource(), lambda name: name)
    inputs = ", ".join(["xp"] + [f"in{k}" for k in range(layout.n_inputs)])
    return (f"def kernel({inputs}):\n"
            + "".join(f"    {line}\n" for line in lines)
            + f"    return [{', '.join(f't{j}' for j in layout.delivered)}]\n")


def loop_dtype(dtype: Any) -> np.dtype | None:
    """The dtype a numba loop is written for: float64 or float32; None for any other.

    Parameters
    ----------
    dtype : dtype-like
        The dtype of a fused kernel's inputs and outputs.

    Returns
    -------
    numpy.dtype or None
        ``dtype`` itself if numba kernels are written for it, else None (the
        NumPy kernel runs it: float16, complex, integers).

    Examples
    --------
    >>> import numpy as np
    >>> from difflab.jit.kernels import loop_dtype
    >>> loop_dtype(np.float32), loop_dtype("float64"), loop_dtype(np.float16)
    (dtype('float32'), dtype('float64'), None)
    """
    dtype = np.dtype(dtype)
    return dtype if dtype in _LOOP_DTYPES else None


_LOOP_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))


def scalar_source(layout: Layout, dtype: Any = np.float64) -> str:
    """The numba kernel: a loop over the elements, block by block (BLOCK elements).

    In each block, one loop runs the elementwise lines for each element and
    writes the outputs and the first scatter of each array (``w5[k] = t4``);
    a sum's terms and the other scatters' values wait in small buffers
    (``b2[k] = t1``), then the block's terms are summed (:func:`block_sum`)
    and the scatters added (``w7[k] += b7[k]``).  So the main loop writes
    nothing it reads again and the compiler can run it several elements at a
    time (SIMD).  A sum adds in another order than NumPy's pairwise ``sum``:
    the two agree to rounding, not bit for bit.  A broadcast input (a bias)
    is read where :func:`broadcast_read` says, through a counter (``a1 = in1[j0]``).

    ``dtype`` (float64 or float32, :func:`loop_dtype`) is the dtype of the
    arrays.  A float32 loop computes in float32: its numbers are written
    ``f32(...)`` (:class:`SingleExpr`), so each ``+ - * /`` and ``sqrt`` is
    the correctly rounded float32 operation NumPy's float32 loops do (the
    same bits); ``sin``, ``exp``... are the C library's float32 functions
    (``sinf``), which differ from NumPy's own float32 ones by a few units in
    the last place.  A sum's running total is kept in float64 (rounded to
    float32 once, at the end): more accurate than NumPy's float32 pairwise
    sum, equal to it to its rounding.  The text names the dtype in its first
    line, so the disk cache (keyed by the text) keeps each dtype's kernel apart.
    """
    dtype = loop_dtype(dtype)
    if dtype is None:
        raise ValueError("numba kernels are written for float64 or float32 loops")
    single = dtype == np.float32
    sums = [j for j, kind in enumerate(layout.kinds) if kind == "reduction"]
    adds = [j for j in layout.root if layout.first[layout.root[j]] != j]
    # One counter per way of broadcasting: element j of the input, moved on at each step.
    spreads = list(dict.fromkeys(read for read in layout.broadcast
                                 if read is not None and read[1] > 1))
    after = ([f"s{j} += block_sum(b{j}[:hi - lo])" for j in sums]
             + [f"for k in range(hi - lo):\n            w{j}[k] += b{j}[k]" for j in adds])
    params = ", ".join(["n"] + [f"in{k}" for k in range(layout.n_inputs)]
                       + [f"y{j}" for j in layout.parameters])
    return (f"# a {dtype.name} loop\n"
            + f"def kernel({params}):\n"
            + "".join(f"    s{j} = 0.0\n" for j in sums)
            + "".join(f"    b{j} = np.empty({BLOCK}, np.{dtype.name})\n" for j in sums + adds)
            + f"    for lo in range(0, n, {BLOCK}):\n"
            + f"        hi = min(lo + {BLOCK}, n)\n"
            + "".join(f"        {line}\n" for line in _block_start(layout, spreads))
            + "        for k in range(hi - lo):\n"
            + "".join(f"            {line}\n" for line in _loop_body(layout, spreads, single))
            + "".join(f"        {line}\n" for line in after)
            + "".join(f"    y{j}[0] = s{j}\n" for j in sums))


def _scalar_local(name: str) -> str:
    """The scalar loop's name of a value: input ``in3``'s element is ``a3``."""
    return "a" + name[2:] if name.startswith("in") else name


def _block_start(layout: Layout, spreads: list) -> list[str]:
    """A block's views: each plain input's piece, each written array's, the counters' start."""
    firsts = [j for j in layout.root if layout.first[layout.root[j]] == j]
    written = ([j for j in layout.parameters if layout.kinds[j] == "elementwise"] + firsts
               + [j for j in layout.root if j not in firsts])
    return ([f"v{k} = in{k}[lo:hi]" for k, read in enumerate(layout.broadcast) if read is None]
            + [f"w{j} = y{j}[lo:hi]" for j in written]
            + [line for q, read in enumerate(spreads) for line in _counter_start(q, *read)])


def _loop_body(layout: Layout, spreads: list, single: bool = False) -> list[str]:
    """One element: read the inputs, the elementwise lines, write outputs, sums' and scatters'."""
    sums = [j for j, kind in enumerate(layout.kinds) if kind == "reduction"]
    firsts = [j for j in layout.root if layout.first[layout.root[j]] == j]
    adds = [j for j in layout.root if j not in firsts]
    reads = [f"a{k} = v{k}[k]" if read is None
             else f"a{k} = in{k}[{'0' if read[1] == 1 else f'j{spreads.index(read)}'}]"
             for k, read in enumerate(layout.broadcast)]
    return (reads
            + (_lines(layout.body, layout.kinds, ScalarSource(True), _scalar_local,
                      SingleExpr, _text32) if single
               else _lines(layout.body, layout.kinds, ScalarSource(), _scalar_local))
            + [f"w{j}[k] = t{j}" for j in layout.parameters
               if layout.kinds[j] == "elementwise"]
            + [f"w{j}[k] = {_scalar_local(layout.reads[j])}" for j in firsts]
            + [f"b{j}[k] = {_scalar_local(layout.reads[j])}" for j in sums + adds]
            + [line for q, read in enumerate(spreads) for line in _counter_step(q, *read)])


def _counter_start(q: int, every: int, size: int) -> list[str]:
    """Where broadcast counter q starts in the block from ``lo``: element (lo // every) % size.

    (Counting up costs a compare per step; ``(lo + k) // every % size`` at
    every step would cost an integer division, several times slower.)
    """
    if every == 1:
        return [f"j{q} = lo % {size}"]
    return [f"j{q} = lo // {every} % {size}", f"r{q} = lo % {every}"]


def _counter_step(q: int, every: int, size: int) -> list[str]:
    """Counter q moved on by one element of the loop (its next element every ``every``)."""
    wrap = f"if j{q} == {size}:\n                j{q} = 0"
    if every == 1:
        return [f"j{q} += 1", wrap]
    return [f"r{q} += 1",
            f"if r{q} == {every}:\n                r{q} = 0\n                j{q} += 1\n"
            f"                if j{q} == {size}:\n                    j{q} = 0"]


def block_sum(terms: Any) -> float:
    """Σ terms, added in whatever order is fastest (numba: several lanes at once).

    Compiled with ``fastmath={"reassoc"}`` and for this sum alone: the
    compiler may reorder these additions (and run them in SIMD lanes), but
    no line of a kernel, whose values must stay what NumPy computes.
    """
    total = 0.0
    for k in range(terms.size):
        total += terms[k]
    return total


def compile_kernel(body: Sequence[tuple], outputs: Sequence[int], use_numba: bool,
                   layout: Layout | None = None, dtype: Any = np.float64) -> tuple[str, Any]:
    """("numba", compiled loop) or ("numpy", the array function), from the generated source.

    ``dtype``: the loop's (float64 or float32) for numba, which writes a loop
    for each (:func:`scalar_source`); any other dtype gets the NumPy kernel,
    which is one function for every dtype (it calls NumPy on the arrays).
    """
    layout = layout or Layout(body, outputs)
    if use_numba and loop_dtype(dtype) is not None:
        try:
            source = scalar_source(layout, dtype)
        except NotScalar:
            pass  # (an array function with no scalar twin: the NumPy kernel does it)
        else:
            import numba

            # (numba's disk cache would not see a change of block_sum: its text goes along)
            source += _BLOCK_SUM_TEXT
            filename = _source_file(source)
            # (__name__: numba's disk cache finds the kernel's globals through it)
            namespace: dict = {"math": math, "np": np, "f32": np.float32,
                               "block_sum": _compiled_block_sum(),
                               "__name__": __name__}
            exec(compile(source, filename or "<difflab fused kernel>", "exec"),  # noqa: S102
                 namespace)
            # error_model="numpy": 1/0 gives inf, as in NumPy, instead of raising.
            # cache=True needs the source in a file: then numba keeps the machine code
            # beside it and a new process loads it instead of compiling again.
            return "numba", numba.njit(error_model="numpy", cache=filename is not None)(
                namespace["kernel"])
    namespace = {"math": math}
    exec(compile(array_source(layout), "<difflab fused kernel>", "exec"),  # noqa: S102
         namespace)
    return "numpy", namespace["kernel"]


def entry_point(kernel: Any, n: int, arrays: Sequence[np.ndarray]) -> Callable:
    """The machine code of a numba loop for these arguments, called without dispatch.

    A numba dispatcher works out the type of each of its arguments at every call
    (NumPy dtype, number of axes, layout, alignment) to find the machine code
    compiled for them: about 0.15 µs an argument, around a loop that takes a few
    microseconds at the sizes of teaching models.  A caller that has checked the
    types itself can call that machine code's entry point instead, the same code the
    dispatcher would pick, so the same results.  Nothing checks the arguments then:
    each call must pass an ``int`` and arrays exactly like ``arrays`` (their dtypes,
    1-d, C-contiguous, aligned).

    Parameters
    ----------
    kernel : numba dispatcher
        A compiled loop (:func:`compile_kernel`'s ``"numba"`` kind).
    n : int
        An example of the loop's size (its first argument).
    arrays : sequence of numpy.ndarray
        Examples of the arrays it reads and writes, in the order it takes them.

    Returns
    -------
    callable
        ``loop(n, *arrays)``: the machine code for these types (compiled now, or
        loaded from numba's disk cache, where the dispatcher has not met them yet).

    Examples
    --------
    >>> import numpy as np
    >>> from difflab.jit import fusion, kernels
    >>> body = [("sin", ("in0",)), ("mul", ("t0", 2.0))]  # y = sin(x) * 2
    >>> kind, kernel = kernels.compile_kernel(body, [1], fusion.USE_NUMBA)
    >>> x, y = np.linspace(0.0, 1.0, 3), np.empty(3)
    >>> loop = kernels.entry_point(kernel, 3, [x, y]) if kind == "numba" else kernel
    >>> _ = loop(3, x, y) if kind == "numba" else None
    >>> bool((y == np.sin(x) * 2.0).all()) or kind != "numba"
    True
    """
    import numba

    return kernel.compile(tuple(numba.typeof(v) for v in (n, *arrays)))


_BLOCK_SUM: list = []
_BLOCK_SUM_TEXT = "\n# with\n" + "".join(
    f"# {line}\n" for line in inspect.getsource(block_sum).splitlines())


def _compiled_block_sum() -> Any:
    """:func:`block_sum` compiled by numba (once), reordering its additions alone."""
    if not _BLOCK_SUM:
        import numba

        _BLOCK_SUM.append(numba.njit(fastmath={"reassoc"}, error_model="numpy",
                                     cache=True)(block_sum))
    return _BLOCK_SUM[0]


# ------------------------------------------------------------ the disk cache


def cache_directory() -> str:
    """Where compiled kernels are kept: ``$DIFFLAB_CACHE_DIR`` or ``~/.cache/difflab``."""
    root = os.environ.get("DIFFLAB_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "difflab")
    return os.path.join(root, "kernels")


def _private_directory(path: str) -> bool:
    """Create ``path`` (mode 700) if needed; True if it is ours alone.

    numba's cache index is a pickle: whoever can write to the folder could
    make the next process run their code.  So a folder another user owns, or
    that others may write to, is not used (the kernel is compiled in memory).
    """
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        info = os.lstat(path)
    except OSError:
        return False
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        return False
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return False
    return not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _source_file(source: str) -> str | None:
    """The kernel's source in the cache folder (named by its hash), or None if no cache.

    The code that runs is always ``source`` itself (compiled from this
    string); the file is only what numba's disk cache is keyed to.
    """
    directory = cache_directory()
    if not _private_directory(directory):
        warnings.warn(f"fused kernels are not cached on disk: {directory} is not a folder "
                      f"only you can write to (set DIFFLAB_CACHE_DIR to one)", stacklevel=4)
        return None
    digest = hashlib.sha256(source.encode()).hexdigest()[:24]
    path = os.path.join(directory, f"kernel_{digest}.py")
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == source:
                return path
    except OSError:
        pass
    try:  # (written whole, then renamed: a process reading it never sees half a file)
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as f:
            f.write(source)
        os.replace(temporary, path)
    except OSError:
        return None
    return path
