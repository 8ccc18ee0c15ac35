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
    The module's names (``difflab.float32``, ``difflab.int64``, ...) are the
    instances to use; ``t.dtype`` answers one of them.  It also answers
    PyTorch's questions (``is_floating_point``, ``is_complex``, ``is_signed``,
    ``itemsize``, ``to_complex()``, ``to_real()``) and, for code written against
    NumPy, NumPy's attributes (``name``, ``kind``, ``char``, ...).

    Parameters
    ----------
    name : str, type or dtype
        What ``numpy.dtype`` accepts: ``"float32"``, ``numpy.int64``, a NumPy dtype.

    Attributes
    ----------
    dtype : numpy.dtype
        The NumPy dtype it stands for.

    Raises
    ------
    TypeError
        For a name NumPy does not know as a dtype.

    See Also
    --------
    difflab.promote_types : the dtype two dtypes combine to.
    difflab.get_default_dtype : the dtype of Python floats.

    Examples
    --------
    >>> import difflab as dl
    >>> import numpy as np
    >>> dl.float32, dl.tensor([1, 2]).dtype
    (difflab.float32, difflab.int64)
    >>> dl.float32 == np.float32, dl.float64.itemsize, dl.int64.is_floating_point
    (True, 8, False)
    >>> np.zeros(2, dtype=dl.float64).dtype          # NumPy accepts it
    dtype('float64')
    >>> dl.dtype("int16")
    difflab.int16
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
#: PyTorch's "shell" unsigned dtypes: it stores them and converts to and from them, and
#: computes little on them (no promotion with other dtypes); difflab computes on them
#: by NumPy's rules.
uint16, uint32, uint64 = as_dtype("uint16"), as_dtype("uint32"), as_dtype("uint64")
bool_ = as_dtype("bool")
complex64 = cfloat = as_dtype("complex64")
complex128 = cdouble = as_dtype("complex128")
#: Brain floating point: float32's range with 8 bits of precision (2 bytes).  Stored as
#: ml_dtypes' NumPy type; every operation computes in float32 and rounds its result.
bfloat16: Any = as_dtype(BFLOAT16) if BFLOAT16 is not None else _MissingDtype()


class layout:  # noqa: N801  (PyTorch's name: difflab.layout, as torch.layout)
    """How a tensor's elements lie in memory (PyTorch's ``torch.layout``).

    difflab has one layout, ``difflab.strided``: NumPy's dense arrays with
    strides, which ``t.layout`` answers for every tensor.  PyTorch's sparse
    layouts are not provided; the class is here so that code that names or
    compares layouts runs.

    Parameters
    ----------
    name : str
        The layout's name (``"strided"``); it prints as ``difflab.<name>``.

    See Also
    --------
    difflab.dtype : the other property of a tensor's storage.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.zeros(2).layout
    difflab.strided
    >>> dl.zeros(2).layout is dl.strided
    True
    """

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"difflab.{self.name}"


#: The dense layout every difflab tensor has (``t.layout``).
strided = layout("strided")


class memory_format:  # noqa: N801  (PyTorch's name: difflab.memory_format)
    """An order of a 4-D or 5-D tensor's elements in memory (PyTorch's ``torch.memory_format``).

    PyTorch may store an image batch (N, C, H, W) channel by channel
    (``contiguous_format``) or pixel by pixel (``channels_last``), which only its
    convolution kernels' speed tells apart.  difflab's values never depend on the
    order, and its operations take any NumPy strides, so the formats are accepted
    wherever PyTorch takes ``memory_format=`` (``x.contiguous``, ``x.to``,
    ``x.clone``, ``dl.empty_like`` and the other ``*_like``) and change nothing:
    a tensor keeps its row-major order.

    Parameters
    ----------
    name : str
        The format's name; it prints as ``difflab.<name>``.

    See Also
    --------
    difflab.layout : dense or sparse storage (difflab has ``strided`` only).

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.ones(1, 3, 2, 2)
    >>> dl.channels_last
    difflab.channels_last
    >>> y = x.to(memory_format=dl.channels_last)
    >>> y.shape, bool((y == x).all())
    (difflab.Size([1, 3, 2, 2]), True)
    """

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"difflab.{self.name}"


#: PyTorch's four memory formats (``memory_format=`` arguments; see ``difflab.memory_format``).
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")


def check_memory_format(value: Any, name: str) -> None:
    """Refuse a ``memory_format=`` that is none of PyTorch's (``None`` is the default)."""
    if value is not None and not isinstance(value, memory_format):
        raise TypeError(f"{name}(): memory_format must be a difflab.memory_format "
                        f"(difflab.contiguous_format, channels_last, channels_last_3d or "
                        f"preserve_format), not {type(value).__name__}")


class _Defaults:
    dtype = float32


def set_default_dtype(d: Any) -> None:
    """Set the dtype of floating tensors made from Python numbers (float32 unless changed).

    Only float32 and float64 are allowed, as in PyTorch (float16 defaults make
    most programs lose their precision silently).  It sets what ``tensor(1.5)``,
    ``zeros``, ``rand``, ... make without a ``dtype=``, and what a Python float
    counts as in type promotion (an int64 tensor + 2.5); existing tensors keep
    their dtype.  float64 is the choice for checking derivatives, where the
    rounding error must stay near 1e-16.

    Parameters
    ----------
    d : dtype
        ``difflab.float32`` or ``difflab.float64`` (or their NumPy dtypes or names).

    Returns
    -------
    None

    Raises
    ------
    TypeError
        For any other dtype (float16, an integer dtype, ...).

    See Also
    --------
    difflab.get_default_dtype : the dtype it set.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.set_default_dtype(dl.float64)
    >>> dl.tensor([1.5]).dtype, dl.zeros(1).dtype
    (difflab.float64, difflab.float64)
    >>> dl.set_default_dtype(dl.float32)          # back to PyTorch's default
    >>> dl.tensor([1.5]).dtype
    difflab.float32
    """
    d = as_dtype(d)
    if d.kind != "f" or d.itemsize < 4:
        raise TypeError(
            f"the default dtype must be float32 or float64, got {d}; pass difflab.float32 "
            f"or difflab.float64"
        )
    _Defaults.dtype = d


def get_default_dtype() -> dtype:
    """The dtype of floating tensors made from Python numbers.

    Returns
    -------
    dtype
        ``difflab.float32`` unless :func:`difflab.set_default_dtype` chose float64.

    See Also
    --------
    difflab.set_default_dtype : change it.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.get_default_dtype()
    difflab.float32
    >>> dl.tensor(1.5).dtype == dl.get_default_dtype()
    True
    """
    return _Defaults.dtype


def _dtype_of(t: Any, name: str) -> dtype:
    """The dtype of tensor (or array) ``t``; a clear TypeError for anything else."""
    found = getattr(t, "dtype", None)
    if found is None:
        raise TypeError(f"{name} expects a tensor, got {type(t).__name__}; for a dtype, ask "
                        f"the dtype itself (difflab.float32.is_floating_point)")
    return as_dtype(found)


def is_floating_point(t: Any) -> bool:
    """Whether tensor ``t`` has a floating dtype (float16, bfloat16, float32, float64).

    Parameters
    ----------
    t : Tensor
        The tensor (a NumPy array answers too).

    Returns
    -------
    bool
        True for a floating dtype; False for bool, integer and complex ones.

    Raises
    ------
    TypeError
        When ``t`` has no dtype (a list, a number).

    See Also
    --------
    difflab.is_complex : the complex dtypes.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.is_floating_point(dl.tensor([1.0])), dl.is_floating_point(dl.tensor([1]))
    (True, False)
    >>> dl.tensor([1.0]).is_floating_point()
    True
    """
    return _dtype_of(t, "is_floating_point").kind == "f"


def is_complex(t: Any) -> bool:
    """Whether tensor ``t`` has a complex dtype (complex64, complex128).

    Parameters
    ----------
    t : Tensor
        The tensor (a NumPy array answers too).

    Returns
    -------
    bool
        True for a complex dtype.

    Raises
    ------
    TypeError
        When ``t`` has no dtype (a list, a number).

    See Also
    --------
    difflab.is_floating_point : the real floating dtypes.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.is_complex(dl.tensor([1 + 2j])), dl.is_complex(dl.tensor([1.0]))
    (True, False)
    """
    return _dtype_of(t, "is_complex").kind == "c"


# ------------------------------------------------------------------ promotion

_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def _category(d: dtype) -> int:
    if d.kind not in _CATEGORY:  # (NumPy's object, text or date dtypes: no tensor has them)
        raise TypeError(f"expected tensors or numbers, got values of dtype {d} (a None, a "
                        f"string or another Python object?): difflab computes with "
                        f"booleans, integers, floats and complex numbers")
    return _CATEGORY[d.kind]


def promote_types(a: Any, b: Any) -> dtype:
    """The smallest dtype both ``a`` and ``b`` convert to without losing their category.

    PyTorch's table (``torch.promote_types``): bool gives way to anything; an
    integer meeting a floating dtype becomes that floating dtype (int64 with
    float32 is float32: the float's *kind* is what matters, not its size);
    uint8 with a signed integer needs int16 at least; a complex dtype meeting
    float64 widens to complex128.  It combines two *dtypes*; for the operands of
    an operation (tensors of different dimensions, Python numbers) see
    :func:`difflab.result_type`, which uses it.

    Parameters
    ----------
    a, b : dtype
        difflab or NumPy dtypes, or their names.

    Returns
    -------
    dtype
        The promoted dtype (symmetric: ``promote_types(a, b) == promote_types(b, a)``).

    Raises
    ------
    TypeError
        For something that is not a dtype.

    See Also
    --------
    difflab.result_type : the dtype of an operation on tensors and numbers.
    difflab.can_cast : whether a cast stays in or above the category.

    Notes
    -----
    The categories are ordered bool < integer < floating < complex.  Between two
    categories the higher one wins, as it is; within one, the larger dtype:

    ==============  ==========================  ===================
    ``a``           ``b``                       result
    ==============  ==========================  ===================
    bool            any dtype ``d``             ``d``
    any integer     float16 / float32           float16 / float32
    int32           int64                       int64
    uint8           int8                        int16
    uint8           int16 / int32 / int64       the signed one
    float16         bfloat16                    float32
    float32         float64                     float64
    any real        complex64 (not float64)     complex64
    float64         complex64                   complex128
    ==============  ==========================  ===================

    Examples
    --------
    >>> import difflab as dl
    >>> dl.promote_types(dl.int64, dl.float32)      # NumPy would say float64
    difflab.float32
    >>> dl.promote_types(dl.uint8, dl.int8)
    difflab.int16
    >>> dl.promote_types(dl.complex64, dl.float64)
    difflab.complex128
    >>> dl.promote_types(dl.float16, dl.bfloat16)
    difflab.float32
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
    Python numbers.  The one place difflab decides a result's dtype: operators,
    comparisons, ``where``, ``cat`` and the math functions all ask it.

    Parameters
    ----------
    *operands : Tensor, array or number
        The operation's inputs, one or more.

    Returns
    -------
    dtype
        The dtype the result has (before an operation's own rule, e.g. true division
        of integers giving the default floating dtype).

    Raises
    ------
    TypeError
        Without operands, or for an operand that is neither a tensor, an array nor a
        Python number (a string).

    See Also
    --------
    difflab.promote_types : the rule for two dtypes, which it applies within a tier.
    difflab.can_cast : whether a result can be written into a tensor of a dtype.

    Notes
    -----
    The operands fall into three tiers, strongest first: tensors with at least one
    dimension, zero-dimensional tensors, Python numbers.  Within the strongest tier
    present the dtypes are promoted (:func:`difflab.promote_types`); a weaker tier
    changes the result only when it brings a *higher category* (bool < integer <
    floating < complex), and then the result is the smallest dtype of that
    category holding the operands, a Python float counting as the default dtype.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([1, 2], dtype=dl.int32)
    >>> dl.result_type(x, dl.tensor(5))             # same category: the 1-d tensor wins
    difflab.int32
    >>> dl.result_type(x, 2.5)                      # a float: the default dtype
    difflab.float32
    >>> dl.result_type(x, dl.tensor(1.0, dtype=dl.float64))   # higher category counts
    difflab.float64
    >>> (x + 2.5).dtype
    difflab.float32
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
    """Whether PyTorch casts ``from_`` to ``to`` implicitly (never to a lower category).

    PyTorch's rule for writing a result into a tensor (``out=``, in-place
    operations): a cast may lose precision (float64 to float16) but not go down
    a category (bool < integer < floating < complex: no float to int).

    Parameters
    ----------
    from_ : dtype
        The dtype of the value.
    to : dtype
        The dtype of the destination.

    Returns
    -------
    bool
        True when ``from_``'s category is not above ``to``'s.

    Raises
    ------
    TypeError
        For something that is not a dtype.

    See Also
    --------
    difflab.promote_types : the dtype two dtypes meet at.
    difflab.result_type : the dtype of an operation.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.can_cast(dl.int64, dl.float32), dl.can_cast(dl.float32, dl.int32)
    (True, False)
    >>> dl.can_cast(dl.float64, dl.float16)         # same category: allowed
    True
    """
    return _category(as_dtype(from_)) <= _category(as_dtype(to))


def floating_result(d: Any) -> dtype:
    """The dtype of a floating-only operation (true division, exp, sin, ...) on ``d``:
    ``d`` itself when floating or complex, else the default dtype."""
    d = as_dtype(d)
    return d if d.kind in "fc" else _Defaults.dtype
