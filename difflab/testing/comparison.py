"""PyTorch's ``torch.testing``: :func:`assert_close` and :func:`make_tensor`.

The public face of :mod:`difflab.testing` (its other modules are difflab's own
test support): ``import difflab as torch; torch.testing.assert_close(a, b)``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from difflab import dtypes
from difflab.creation import as_tensor, full_like, rand, randint
from difflab.dtype_info import finfo
from difflab.functions import where
from difflab.functions_counting import complex as complex_from_parts
from difflab.tensor import Tensor

__all__ = ["assert_close", "make_tensor"]

#: PyTorch's default (rtol, atol) per floating dtype; a complex dtype goes by its
#: real dtype, integers and bool compare exactly.
TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}

_NUMBER_DTYPES = {bool: "bool", int: "int64", float: "float64", complex: "complex128"}


def _default_tolerance(*names: str) -> tuple[float, float]:
    pairs = [TOLERANCES.get(name, (0.0, 0.0)) for name in names]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def assert_close(actual: Any, expected: Any, *, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_dtype: bool = True,
                 check_device: bool = True, msg: Any = None) -> None:
    r"""Raise ``AssertionError`` unless ``actual`` and ``expected`` are close, as PyTorch's.

    Two values are close where

    .. math:: |a - e| \le \mathrm{atol} + \mathrm{rtol} \cdot |e|

    elementwise (infinities must be equal; ``nan`` equals ``nan`` only with
    ``equal_nan``).  Without ``rtol`` and ``atol``, PyTorch's defaults for the
    dtype apply: float16 ``1e-3, 1e-5``; bfloat16 ``1.6e-2, 1e-5``; float32
    ``1.3e-6, 1e-5``; float64 ``1e-7, 1e-7``; complex as its real dtype;
    integers and bool must be equal.  Tensors must also agree in shape, and in
    dtype and device unless told not to check.  Sequences and mappings are
    compared item by item (same length, same keys).

    Parameters
    ----------
    actual, expected : Tensor, NumPy array, number, or sequence or mapping of them
        What to compare (both of the same kind).
    rtol, atol : float, optional
        Relative and absolute tolerance; give both or neither.
    equal_nan : bool, optional
        Whether ``nan`` equals ``nan`` (default ``False``).
    check_dtype : bool, optional
        Require equal dtypes (default ``True``); when ``False`` the looser
        dtype's default tolerances apply.
    check_device : bool, optional
        Require the same device (default ``True``).
    msg : str or callable, optional
        A message to raise instead; a callable gets the generated message and
        returns the one to raise.

    Returns
    -------
    None

    Raises
    ------
    AssertionError
        Where they differ: the message says how many elements are out of
        tolerance, the greatest absolute and relative differences and at which
        index, and which item of a nested input failed.
    ValueError
        Only one of ``rtol`` and ``atol`` given.
    TypeError
        Inputs of kinds that cannot be compared (a tensor with a list).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.testing.assert_close(dl.tensor([1.0, 2.0]), dl.tensor([1.0, 2.000001]))
    >>> dl.testing.assert_close(dl.tensor([1.0, 2.0, 3.0]), dl.tensor([1.0, 2.0, 4.0]))
    Traceback (most recent call last):
    ...
    AssertionError: Tensor-likes are not close!
    <BLANKLINE>
    Mismatched elements: 1 / 3 (33.3%)
    Greatest absolute difference: 1.0 at index (2,) (up to 1e-05 allowed)
    Greatest relative difference: 0.25 at index (2,) (up to 1.3e-06 allowed)
    """
    if (rtol is None) != (atol is None):
        raise ValueError(
            f"Both 'rtol' and 'atol' must be either specified or omitted, but got "
            f"{'no rtol' if rtol is None else f'rtol={rtol}'} and "
            f"{'no atol' if atol is None else f'atol={atol}'}."
        )
    settings = (rtol, atol, equal_nan, check_dtype, check_device)
    failure = _compare(actual, expected, settings, path="")
    if failure is not None:
        if callable(msg):
            failure = msg(failure)
        elif msg is not None:
            failure = msg
        raise AssertionError(failure)


def _compare(actual: Any, expected: Any, settings: tuple, path: str) -> str | None:
    """The failure message for one pair (``None``: close), recursing into containers."""
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            return _at(f"The keys of the mappings do not match: {sorted(map(repr, actual))} "
                       f"!= {sorted(map(repr, expected))}.", path)
        for key in expected:
            failure = _compare(actual[key], expected[key], settings, f"{path}[{key!r}]")
            if failure is not None:
                return failure
        return None
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            return _at(f"The length of the sequences mismatch: {len(actual)} != "
                       f"{len(expected)}", path)
        for i, (a, e) in enumerate(zip(actual, expected)):
            failure = _compare(a, e, settings, f"{path}[{i}]")
            if failure is not None:
                return failure
        return None
    kinds = (_kind(actual), _kind(expected))
    if None in kinds or kinds[0] != kinds[1]:
        raise TypeError(
            f"assert_close: cannot compare {type(actual).__name__} with "
            f"{type(expected).__name__} (pass two tensors, two numbers, or sequences or "
            f"mappings of them{'' if not path else f'; at item {path}'})"
        )
    if kinds[0] == "array":  # (NumPy arrays compare as tensor-likes, as in PyTorch)
        actual, expected = as_tensor(actual), as_tensor(expected)
    failure = (_compare_numbers if kinds[0] == "number" else _compare_tensors)(
        actual, expected, settings)
    return None if failure is None else _at(failure, path)


def _is_sequence(x: Any) -> bool:
    return isinstance(x, Sequence) and not isinstance(x, (str, bytes))


def _kind(x: Any) -> str | None:
    if isinstance(x, Tensor):
        return "tensor"
    if isinstance(x, np.ndarray):
        return "array"
    if isinstance(x, (bool, int, float, complex, np.number, np.bool_)):
        return "number"
    return None


def _at(failure: str, path: str) -> str:
    return failure if not path else f"{failure}\n\nThe failure occurred for item {path}"


def _compare_numbers(actual: Any, expected: Any, settings: tuple) -> str | None:
    rtol, atol, equal_nan, check_dtype, _ = settings
    kinds = (type(actual), type(expected))
    if check_dtype and kinds[0] is not kinds[1]:
        return (f"The values for attribute 'type' do not match: {kinds[0].__name__} != "
                f"{kinds[1].__name__}.")
    names = [_NUMBER_DTYPES.get(k, np.asarray(x).dtype.name) for k, x in
             zip(kinds, (actual, expected))]
    if rtol is None:
        rtol, atol = _default_tolerance(*names)
    a, e = np.asarray(actual), np.asarray(expected)
    close = _close(a, e, rtol, atol, equal_nan)
    if close.all():
        return None
    abs_diff = abs(actual - expected)
    rel_diff = abs_diff / abs(expected) if expected != 0 else math.inf
    exact = rtol == 0 and atol == 0
    lines = [f"Scalars are not {'equal' if exact else 'close'}!", "",
             f"Expected {expected} but got {actual}.",
             f"Absolute difference: {abs_diff}"
             + ("" if exact else f" (up to {atol} allowed)"),
             f"Relative difference: {rel_diff}"
             + ("" if exact else f" (up to {rtol} allowed)")]
    return "\n".join(lines)


def _compare_tensors(actual: Tensor, expected: Tensor, settings: tuple) -> str | None:
    rtol, atol, equal_nan, check_dtype, check_device = settings
    if tuple(actual.shape) != tuple(expected.shape):
        return f"The values for attribute 'shape' do not match: {actual.shape} != {expected.shape}."
    if check_device and actual.device != expected.device:
        return (f"The values for attribute 'device' do not match: {actual.device} != "
                f"{expected.device}.")
    if check_dtype and actual.dtype != expected.dtype:
        return f"The values for attribute 'dtype' do not match: {actual.dtype} != {expected.dtype}."
    if rtol is None:
        rtol, atol = _default_tolerance(str(actual.dtype).split(".")[-1],
                                        str(expected.dtype).split(".")[-1])
    a, e = _numpy(actual), _numpy(expected)
    close = _close(a, e, rtol, atol, equal_nan)
    if close.all():
        return None
    abs_diff, rel_diff = _differences(a, e, close)
    total, bad = close.size, int(close.size - np.count_nonzero(close))
    exact = rtol == 0 and atol == 0
    lines = [f"Tensor-likes are not {'equal' if exact else 'close'}!", "",
             f"Mismatched elements: {bad} / {total} ({100 * bad / total:.1f}%)"]
    for what, diff, allowed in (("absolute", abs_diff, atol), ("relative", rel_diff, rtol)):
        index = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.ndim else ()
        line = f"Greatest {what} difference: {diff[index].item()} at index " \
               f"{tuple(map(int, index))}"
        lines.append(line if exact else f"{line} (up to {allowed} allowed)")
    return "\n".join(lines)


def _numpy(t: Tensor) -> np.ndarray:
    """The values as a NumPy array of a dtype NumPy computes in (bfloat16 widened)."""
    array = np.asarray(t.detach().cpu().numpy()) if hasattr(t, "numpy") else np.asarray(t)
    if array.dtype.kind not in "biufc":  # (bfloat16 and other extension types)
        array = array.astype(np.float32)
    return array


def _close(a: np.ndarray, e: np.ndarray, rtol: float, atol: float, equal_nan: bool) -> np.ndarray:
    if a.dtype.kind in "biu" and e.dtype.kind in "biu" and rtol == 0 and atol == 0:
        return np.asarray(a.astype(np.int64) == e.astype(np.int64))
    with np.errstate(invalid="ignore", over="ignore"):
        a = a.astype(np.complex128 if "c" in (a.dtype.kind, e.dtype.kind) else np.float64)
        e = e.astype(a.dtype)
        return np.asarray(np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan))


def _differences(a: np.ndarray, e: np.ndarray, close: np.ndarray) -> tuple:
    """|a - e| and |a - e| / |e| as PyTorch's message computes them: in the inputs' dtype
    (integers and bool as int64, their quotient in float32), 0 where the two are close."""
    if a.dtype.kind in "biu" and e.dtype.kind in "biu":
        a, e = a.astype(np.int64), e.astype(np.int64)
    else:
        common = np.result_type(a, e)
        a, e = a.astype(common), e.astype(common)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        abs_diff = np.abs(a - e)
        rel_diff = abs_diff / np.abs(e)
        if rel_diff.dtype == np.float64 and a.dtype.kind == "i":
            rel_diff = rel_diff.astype(np.float32)
    return np.where(close, 0, abs_diff).astype(abs_diff.dtype), \
        np.where(close, 0, rel_diff).astype(rel_diff.dtype)


def make_tensor(*shape: Any, dtype: Any, device: Any = None, low: float | None = None,
                high: float | None = None, requires_grad: bool = False,
                noncontiguous: bool = False, exclude_zero: bool = False) -> Tensor:
    """A tensor of the given shape and dtype filled with random values in ``[low, high)``.

    As PyTorch's: floating and complex values are uniform in ``[low, high)``
    (default ``[-9, 9)``; a complex tensor draws real and imaginary parts);
    integers uniform in ``[low, high)`` (default ``[-9, 10)``, for unsigned ones
    ``[0, 10)``), bool values true or false.  The draws come from the default
    generator, so ``manual_seed`` repeats them.

    Parameters
    ----------
    *shape : int or sequence of int
        The shape (``make_tensor(2, 3, ...)`` or ``make_tensor((2, 3), ...)``).
    dtype : difflab.dtype
        The dtype (keyword only, required).
    device : str or difflab.device, optional
        Where to place it (default the CPU).
    low, high : float, optional
        The range of the values, clamped to the dtype's range.
    requires_grad : bool, optional
        Make it a leaf requiring grad (floating and complex dtypes only).
    noncontiguous : bool, optional
        Accepted as PyTorch's; difflab's tensors have no strides to break.
    exclude_zero : bool, optional
        Replace exact zeros by the dtype's smallest positive value (or 1).

    Returns
    -------
    Tensor
        The new tensor.

    Raises
    ------
    ValueError
        ``low`` not below ``high``, or ``requires_grad`` with an integer dtype.

    Examples
    --------
    >>> import difflab as dl
    >>> t = dl.testing.make_tensor(2, 3, dtype=dl.float32, device="cpu", low=0, high=1)
    >>> t.shape, t.dtype
    (difflab.Size([2, 3]), difflab.float32)
    >>> bool(((0 <= t) & (t < 1)).all())
    True
    """
    if len(shape) == 1 and _is_sequence(shape[0]):
        shape = tuple(shape[0])
    dtype = dtypes.as_dtype(dtype)
    name = str(dtype).split(".")[-1]
    floating = name.startswith(("float", "bfloat", "complex"))
    if requires_grad and not floating:
        raise ValueError(f"make_tensor: requires_grad=True needs a floating or complex dtype, "
                         f"got {dtype}")
    if name == "bool":
        values = randint(0, 2, shape) != 0
    else:
        default = (-9, 9) if floating else ((0, 10) if name.startswith("uint") else (-9, 10))
        lo = default[0] if low is None else low
        hi = default[1] if high is None else high
        if not lo < hi:
            raise ValueError(f"make_tensor: low must be below high, got low={lo} and high={hi}")
        if floating:
            real = "float64" if name == "complex128" else "float32"
            draw = rand(shape, dtype=dtypes.as_dtype(real)) * (hi - lo) + lo
            if name.startswith("complex"):
                draw = complex_from_parts(draw, rand(shape, dtype=dtypes.as_dtype(real))
                                       * (hi - lo) + lo)
            values = draw.to(dtype)
        else:
            values = randint(int(np.ceil(lo)), int(np.ceil(hi)), shape, dtype=dtype)
        if exclude_zero:
            tiny = float(finfo(dtype).tiny) if floating else 1
            values = where(values == 0, full_like(values, tiny), values)
    values = values.to(dtype)
    if device is not None:
        values = values.to(device)
    return values.requires_grad_() if requires_grad else values
