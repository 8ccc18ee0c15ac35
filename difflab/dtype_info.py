"""The limits of a dtype's numbers, under PyTorch's names: ``difflab.finfo`` and ``difflab.iinfo``.

A floating dtype stores a number as ``± 1.m × 2^e`` with a fixed count of bits for
``m`` and ``e``.  Those counts decide everything these classes report: ``eps`` is the
gap between 1 and the next number (``2^-bits of m``), ``max`` the largest finite
number, ``tiny`` the smallest normal one.  Programs read them to pick a safe epsilon
(``x / (norm + finfo(x.dtype).eps)``) or a value for "minus infinity" in a mask
(``finfo(dtype).min``).  NumPy's ``np.finfo`` / ``np.iinfo`` compute the numbers
(``ml_dtypes.finfo`` for bfloat16, which NumPy does not have).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from difflab import dtypes


def _numpy_dtype(type: Any, kind: str, name: str) -> tuple[dtypes.dtype, np.dtype]:  # noqa: A002
    """difflab's and NumPy's dtype for ``type``, checked to be of ``kind`` ("f" or "i")."""
    d = dtypes.get_default_dtype() if type is None else dtypes.as_dtype(type)
    np_dtype = np.dtype(d.dtype)
    floating = np_dtype.kind in "fc" or np_dtype == dtypes.BFLOAT16
    if (kind == "f") != floating or (kind == "i" and np_dtype.kind not in "iu"):
        wanted = "a floating" if kind == "f" else "an integer"
        other = "iinfo" if kind == "f" else "finfo"
        raise TypeError(f"{name} takes {wanted} dtype, got {d}; use difflab.{other} for "
                        f"{'integer' if kind == 'f' else 'floating'} dtypes (bool has "
                        f"neither)")
    return d, np_dtype


class finfo:  # noqa: N801  (PyTorch's name: torch.finfo)
    """The limits of a floating dtype: its epsilon, largest and smallest numbers.

    For a dtype with ``p`` bits of mantissa, ``eps = 2^-p`` is the distance from 1 to
    the next number; every real ``x`` in the normal range is stored as ``x(1 + δ)``
    with ``|δ| ≤ eps / 2``.  A complex dtype reports the limits of its real parts.

    Parameters
    ----------
    type : difflab.dtype, optional
        A floating or complex dtype (default: the default dtype, ``float32`` unless
        ``set_default_dtype`` changed it).

    Attributes
    ----------
    bits : int
        The number of bits of one number.
    eps : float
        The gap between 1 and the next number of the dtype.
    max, min : float
        The largest finite number and its negation.
    tiny, smallest_normal : float
        The smallest positive normal number (the same value under two names).
    resolution : float
        ``10^-precision``: the decimal resolution.
    dtype : str
        The dtype's name (``"float32"``).

    Raises
    ------
    TypeError
        For an integer or boolean dtype (use ``difflab.iinfo``).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.finfo(dl.float32).eps
    1.1920928955078125e-07
    >>> dl.finfo(dl.float16).max
    65504.0
    >>> dl.finfo(dl.float64).tiny
    2.2250738585072014e-308
    """

    def __init__(self, type: Any = None) -> None:  # noqa: A002  (PyTorch's argument name)
        d, np_dtype = _numpy_dtype(type, "f", "finfo")
        if np_dtype.kind == "c":
            np_dtype = np.dtype(d.to_real().dtype)
        if dtypes.BFLOAT16 is not None and np_dtype == dtypes.BFLOAT16:
            limits = dtypes._ml_dtypes.finfo(np_dtype)
        else:
            limits = np.finfo(np_dtype)
        self.bits = int(limits.bits)
        self.eps = float(limits.eps)
        self.max = float(limits.max)
        self.min = float(limits.min)
        self.tiny = self.smallest_normal = float(limits.smallest_normal)
        self.resolution = float(limits.resolution)
        self.dtype = str(d).removeprefix("difflab.")

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.tiny:g}, tiny={self.tiny:g}, "
                f"dtype={self.dtype})")


class iinfo:  # noqa: N801  (PyTorch's name: torch.iinfo)
    """The limits of an integer dtype: its smallest and largest values.

    An integer of ``b`` bits holds ``-2^(b-1) … 2^(b-1) - 1`` if signed, ``0 … 2^b - 1``
    if not; arithmetic past them wraps around (``int8``: 127 + 1 = -128).

    Parameters
    ----------
    type : difflab.dtype
        An integer dtype (signed or unsigned; ``bool`` is refused, as PyTorch's).

    Attributes
    ----------
    bits : int
        The number of bits of one value.
    max, min : int
        The largest and the smallest value.
    dtype : str
        The dtype's name (``"int64"``).

    Raises
    ------
    TypeError
        For a floating, complex or boolean dtype (use ``difflab.finfo`` for the first two).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.iinfo(dl.int8).min, dl.iinfo(dl.int8).max
    (-128, 127)
    >>> dl.iinfo(dl.uint8).max
    255
    """

    def __init__(self, type: Any) -> None:  # noqa: A002  (PyTorch's argument name)
        d, np_dtype = _numpy_dtype(type, "i", "iinfo")
        limits = np.iinfo(np_dtype)
        self.bits, self.min, self.max = int(limits.bits), int(limits.min), int(limits.max)
        self.dtype = str(d).removeprefix("difflab.")

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"
