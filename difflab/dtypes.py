"""Data types, and the one rule that decides the dtype of a result (type promotion).

A difflab dtype (``difflab.float32``, ``difflab.int64``, ...) is a small object
around a NumPy dtype: it prints as PyTorch's does (``difflab.float32``), and
NumPy and CuPy accept it wherever they take a dtype (they read its ``.dtype``),
so ``array.astype(difflab.float32)`` works.  It compares equal to the NumPy
dtype it stands for, so ``t.dtype == np.float32`` holds too.

Floating tensors made from Python numbers are float32 by default, as in
PyTorch (:func:`set_default_dtype` changes that); use float64 for checking
derivatives, where rounding error must stay near 1e-16.

Type promotion follows PyTorch, not NumPy (:func:`result_type`).  The operands
of an operation fall into three tiers, strongest first:

1. tensors with at least one dimension,
2. zero-dimensional tensors,
3. Python numbers (bool, int, float, complex).

Dtypes form four categories, bool < integer < floating < complex.  Within the
strongest tier present, the dtypes are promoted (:func:`promote_types`: the
smallest dtype that holds both).  A weaker tier changes the result only when
it brings a *higher category*: then the result is the smallest dtype of that
category that holds its operands, a Python float counting as the default
dtype.  So::

    float32 tensor + int64 tensor      -> float32   (NumPy says float64)
    float32 tensor + 2.5               -> float32
    int64 tensor   + 2.5               -> float32   (the default dtype)
    int32 tensor   + int64 0-d tensor  -> int32     (same category: the tensor wins)
    int32 tensor   + float64 0-d tensor-> float64   (higher category: it counts)
    int64 tensor   / int64 tensor      -> float32   (true division is floating)
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

try:  # bfloat16: NumPy has none; the ml_dtypes package adds it (pip install difflab[bfloat16])
    import ml_dtypes as _ml_dtypes
except ImportError:  # pragma: no cover  (the extra is part of dev)
    _ml_dtypes = None

#: NumPy's dtype for bfloat16 arrays, or None without ml_dtypes.  Its NumPy kind is "V"
#: (a type NumPy does not know as floating); difflab's dtype answers "f".
BFLOAT16 = np.dtype(_ml_dtypes.bfloat16) if _ml_dtypes is not None else None
_MISSING_BFLOAT16 = (
    "difflab.bfloat16 needs the ml_dtypes package (NumPy has no bfloat16): pip install "
    "ml_dtypes (or difflab[bfloat16]).  Without it, use float16 for half-size storage or "
    "float32 for computing")


class dtype:  # noqa: N801  (PyTorch's name: difflab.dtype, as torch.dtype)
    """A data type: NumPy's dtype under PyTorch's name and printing.

    ``np.dtype(d)``, ``array.astype(d)`` and ``np.zeros(n, dtype=d)`` accept it;
    it equals the NumPy dtype it wraps (``difflab.float32 == np.float32``).
    """

    __slots__ = ("dtype",)

    def __init__(self, name: Any) -> None:
        self.dtype = np.dtype(name)  # (the attribute NumPy reads to convert it)

    # What PyTorch's dtypes answer.
    @property
    def kind(self) -> str:
        """NumPy's kind letter ("f" floating, "i" integer, ...); "f" for bfloat16 too."""
        return "f" if self.dtype == BFLOAT16 else self.dtype.kind

    @property
    def is_floating_point(self) -> bool:
        return self.kind == "f"

    @property
    def is_complex(self) -> bool:
        return self.dtype.kind == "c"

    @property
    def is_signed(self) -> bool:
        return self.dtype.kind in "ifc"

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    def to_complex(self) -> dtype:
        """The complex dtype with this floating dtype's precision."""
        return as_dtype({"float16": "complex64", "bfloat16": "complex64",
                         "float32": "complex64", "float64": "complex128"}.get(
            self.dtype.name, self.dtype))

    def to_real(self) -> dtype:
        """The floating dtype with this complex dtype's precision."""
        return as_dtype({"complex64": "float32", "complex128": "float64"}.get(
            self.dtype.name, self.dtype))

    def __getattr__(self, name: str) -> Any:
        # NumPy's attributes (kind, name, type, char, ...) for code written against NumPy.
        return getattr(object.__getattribute__(self, "dtype"), name)

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, dtype):
            return self.dtype == other.dtype
        try:
            return self.dtype == np.dtype(other)
        except TypeError:
            return False

    def __hash__(self) -> int:
        return hash(self.dtype)

    def __repr__(self) -> str:
        return f"difflab.{_TORCH_NAMES.get(self.dtype.name, self.dtype.name)}"

    __str__ = __repr__

    def __reduce__(self) -> tuple:  # (pickles as the NumPy dtype it wraps)
        return (as_dtype, (self.dtype.name,))


_TORCH_NAMES = {"bool": "bool"}
_FROM_NUMPY: dict[np.dtype, dtype] = {}


class _MissingDtype:
    """``difflab.bfloat16`` without ml_dtypes: it can be named (``if dtype is
    dl.bfloat16``), and using it says what to install."""

    def __repr__(self) -> str:
        return "difflab.bfloat16 (unavailable: pip install ml_dtypes)"

    @property
    def dtype(self) -> Any:  # (what NumPy reads to convert it: the explanation)
        raise TypeError(_MISSING_BFLOAT16)


def as_dtype(value: Any) -> dtype:
    """The difflab dtype for ``value`` (a difflab or NumPy dtype, a type, or a name)."""
    if isinstance(value, dtype):
        return value
    if isinstance(value, _MissingDtype) or (isinstance(value, str) and value == "bfloat16"
                                            and BFLOAT16 is None):
        raise TypeError(_MISSING_BFLOAT16)
    if value is builtins.float:
        return _Defaults.dtype
    if value is builtins.int:
        return int64
    if value is builtins.complex:
        return _Defaults.dtype.to_complex()
    np_dtype = np.dtype(value)
    found = _FROM_NUMPY.get(np_dtype)
    if found is None:
        found = _FROM_NUMPY[np_dtype] = dtype(np_dtype)
    return found


def of_array(array: Any) -> dtype:
    """The difflab dtype of an array (what ``Tensor.dtype`` answers)."""
    found = _FROM_NUMPY.get(array.dtype)
    return found if found is not None else as_dtype(array.dtype)


float16 = half = as_dtype("float16")
float32 = as_dtype("float32")
float64 = double = as_dtype("float64")
int8 = as_dtype("int8")
int16 = short = as_dtype("int16")
int32 = as_dtype("int32")
int64 = long = as_dtype("int64")
uint8 = as_dtype("uint8")
bool_ = as_dtype("bool")
complex64 = cfloat = as_dtype("complex64")
complex128 = cdouble = as_dtype("complex128")
#: Brain floating point: float32's range with 8 bits of precision (2 bytes).  Stored as
#: ml_dtypes' NumPy type; every operation computes in float32 and rounds its result.
bfloat16: Any = as_dtype(BFLOAT16) if BFLOAT16 is not None else _MissingDtype()


class layout:  # noqa: N801  (PyTorch's name: difflab.layout, as torch.layout)
    """How a tensor's elements lie in memory.  difflab has one: :data:`strided`, NumPy's
    dense arrays with strides (PyTorch's sparse layouts are not provided)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"difflab.{self.name}"


#: The dense layout every difflab tensor has (``t.layout``).
strided = layout("strided")


class _Defaults:
    dtype = float32


def set_default_dtype(d: Any) -> None:
    """Set the dtype of floating tensors made from Python numbers (float32 unless changed).

    Only float32 and float64 are allowed, as in PyTorch (float16 defaults make
    most programs lose their precision silently).
    """
    d = as_dtype(d)
    if d.kind != "f" or d.itemsize < 4:
        raise TypeError(
            f"the default dtype must be float32 or float64, got {d}; pass difflab.float32 "
            f"or difflab.float64"
        )
    _Defaults.dtype = d


def get_default_dtype() -> dtype:
    """The dtype of floating tensors made from Python numbers."""
    return _Defaults.dtype


def is_floating_point(t: Any) -> bool:
    """Whether tensor ``t`` has a floating dtype."""
    return as_dtype(t.dtype).kind == "f"


def is_complex(t: Any) -> bool:
    """Whether tensor ``t`` has a complex dtype."""
    return as_dtype(t.dtype).kind == "c"


# ------------------------------------------------------------------ promotion

_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def _category(d: dtype) -> int:
    return _CATEGORY[d.kind]


def promote_types(a: Any, b: Any) -> dtype:
    """The smallest dtype both ``a`` and ``b`` convert to without losing their category.

    PyTorch's table (``torch.promote_types``): bool gives way to anything; an
    integer meeting a floating dtype becomes that floating dtype (int64 with
    float32 is float32: the float's *kind* is what matters, not its size);
    uint8 with a signed integer needs int16 at least; a complex dtype meeting
    float64 widens to complex128.
    """
    a, b = as_dtype(a), as_dtype(b)
    if a == b:
        return a
    ca, cb = _category(a), _category(b)
    if ca != cb:
        high, low = (a, b) if ca > cb else (b, a)
        if high.kind == "c" and low.kind == "f":
            # complex64 with float64 keeps float64's precision: complex128.
            return high if high.itemsize >= 2 * low.itemsize else low.to_complex()
        return high
    if a.kind == "b":
        return a
    if {a.dtype.name, b.dtype.name} == {"bfloat16", "float16"}:
        return float32  # (neither holds the other: PyTorch's answer)
    if {a.kind, b.kind} == {"u", "i"}:  # unsigned with signed: a signed type holding both
        unsigned, signed = (a, b) if a.kind == "u" else (b, a)
        if signed.itemsize > unsigned.itemsize:
            return signed
        return as_dtype(np.promote_types(unsigned.dtype, signed.dtype))
    return a if a.itemsize >= b.itemsize else b


def _scalar_dtype(x: Any) -> dtype:
    """The dtype a Python number stands for in promotion (floats: the default dtype)."""
    if isinstance(x, builtins.bool):
        return bool_
    if isinstance(x, builtins.int):
        return int64
    if isinstance(x, builtins.float):
        return _Defaults.dtype
    if isinstance(x, builtins.complex):
        return _Defaults.dtype.to_complex()
    raise TypeError(
        f"cannot find the dtype of {type(x).__name__} {x!r}: expected a tensor, an array or "
        f"a Python number"
    )


def _combine(higher: dtype | None, lower: dtype | None) -> dtype | None:
    """Join the result of a stronger tier (``higher``) with a weaker one's (``lower``)."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.kind == "c":
        return higher
    if lower.kind == "c":
        # A complex weaker operand keeps a floating operand's precision.
        return higher.to_complex() if higher.kind == "f" else lower
    if higher.kind == "f":
        return higher
    if higher.kind == "b" or lower.kind == "f":
        return promote_types(higher, lower)
    return higher


def result_type(*operands: Any) -> dtype:
    """The dtype of an elementwise operation on ``operands``, as PyTorch computes it.

    Operands are tensors, arrays, NumPy scalars (counted as 0-d tensors) or
    Python numbers; the rule is in this module's docstring.  The one place
    difflab decides a result's dtype: operators, comparisons, ``where``,
    ``cat`` and the math functions all ask it.
    """
    tiers: list[dtype | None] = [None, None, None]  # dimensioned, 0-d, Python numbers
    for x in operands:
        d = getattr(x, "dtype", None)
        if d is None:
            tier, d = 2, _scalar_dtype(x)
        else:
            tier, d = (0 if getattr(x, "ndim", 0) else 1), as_dtype(d)
        tiers[tier] = d if tiers[tier] is None else promote_types(tiers[tier], d)
    out = _combine(tiers[0], _combine(tiers[1], tiers[2]))
    if out is None:
        raise TypeError("result_type() needs at least one operand")
    return out


def can_cast(from_: Any, to: Any) -> bool:
    """Whether PyTorch casts ``from_`` to ``to`` implicitly (never to a lower category)."""
    return _category(as_dtype(from_)) <= _category(as_dtype(to))


def floating_result(d: Any) -> dtype:
    """The dtype of a floating-only operation (true division, exp, sin, ...) on ``d``:
    ``d`` itself when floating or complex, else the default dtype."""
    d = as_dtype(d)
    return d if d.kind in "fc" else _Defaults.dtype
