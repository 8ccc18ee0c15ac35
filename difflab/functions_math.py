"""Pointwise formulas, NaN-aware reductions and order statistics: PyTorch's names, composed.

Each function is a *composite* of primitives difflab already has, so its derivative
follows from theirs in every method, and the jit replays it.  Two patterns recur:

* **The safe ``where``.**  ``where(c, a, b)`` sends no gradient into the branch it
  did not pick, but the branch is still *computed*, and ``0 * inf`` in its derivative
  is ``nan``.  So a formula that is undefined somewhere (``log y`` at ``y = 0`` in
  :func:`xlogy`, ``sin(πx)/(πx)`` at 0 in :func:`sinc`) first replaces the bad inputs
  with harmless ones, then picks: the value and the gradient are both right.
* **A detached shift.**  :func:`logaddexp` subtracts the larger argument before
  ``exp`` (no overflow).  The result does not depend on the shift, so its gradient
  through the shift is zero and the shift is detached: exact, and cheaper.

NaN-aware reductions, order statistics and distances are in
:mod:`difflab.functions_statistics`.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from difflab import functions as F  # noqa: N812  (the primitives' public faces)
from difflab.creation import full_like, ones_like, zeros_like
from difflab.dtypes import bool_
from difflab.numpy_protocol import frexp_parts
from difflab.ops.registry import PRIMITIVES
from difflab.tensor import Tensor
from difflab.tensor_arguments import (
    dim_index,
    interpreted,
    promote,
    tensor_of,
    tensor_or_interpreted,
    write_out,
)

__all__ = [  # (and diff, reached as difflab.diff(...): see difflab/diff/__init__.py)
    "addcdiv", "addcmul", "bitwise_not", "deg2rad", "exp2", "fmax", "fmin", "frac", "frexp",
    "heaviside", "hypot", "isin", "isneginf", "isposinf", "isreal", "ldexp", "lerp", "logaddexp",
    "logaddexp2", "logit", "masked_scatter", "masked_scatter_", "nan_to_num", "positive",
    "rad2deg", "sgn", "signbit", "sinc", "trunc", "xlogy",
]


# ---------------------------------------------------------------------------- pointwise


def positive(input: Tensor) -> Tensor:  # noqa: A002
    """``+input``: the tensor itself (PyTorch refuses booleans, and so does this).

    Parameters
    ----------
    input : Tensor
        A numeric tensor.

    Returns
    -------
    Tensor
        ``input``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.positive(dl.tensor([-1.0, 2.0])).tolist()
    [-1.0, 2.0]
    """
    x = tensor_or_interpreted(input)
    if x.dtype == bool_:
        raise TypeError("positive does not support bool tensors; use x.int() first")
    return x


def deg2rad(input: Tensor) -> Tensor:  # noqa: A002
    """Degrees to radians: ``input · π / 180``.

    Parameters
    ----------
    input : Tensor
        Angles in degrees (integers become the default float dtype).

    Returns
    -------
    Tensor
        Angles in radians.

    Examples
    --------
    >>> import difflab as dl
    >>> round(dl.deg2rad(dl.tensor(180.0)).item(), 6)
    3.141593
    """
    return tensor_or_interpreted(input) * (math.pi / 180.0)


def rad2deg(input: Tensor) -> Tensor:  # noqa: A002
    """Radians to degrees: ``input · 180 / π``.

    Parameters
    ----------
    input : Tensor
        Angles in radians.

    Returns
    -------
    Tensor
        Angles in degrees.

    Examples
    --------
    >>> import difflab as dl
    >>> round(dl.rad2deg(dl.tensor(3.141592653589793)).item(), 6)
    180.0
    """
    return tensor_or_interpreted(input) * (180.0 / math.pi)


def exp2(input: Tensor) -> Tensor:  # noqa: A002
    """2 to the power ``input``: d/dx 2ˣ = 2ˣ ln 2.

    Parameters
    ----------
    input : Tensor
        Exponents.

    Returns
    -------
    Tensor
        ``2 ** input`` (a float tensor).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.exp2(dl.tensor([0.0, 3.0])).tolist()
    [1.0, 8.0]
    """
    return 2.0 ** tensor_or_interpreted(input)


def trunc(input: Tensor) -> Tensor:  # noqa: A002
    """Round towards zero (``-1.7 → -1``, ``1.7 → 1``); derivative 0, as for ``floor``.

    Parameters
    ----------
    input : Tensor
        The values.

    Returns
    -------
    Tensor
        The integer parts, in ``input``'s dtype.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.trunc(dl.tensor([-1.7, 1.7])).tolist()
    [-1.0, 1.0]
    """
    x = tensor_or_interpreted(input)  # (a Dual or a sympy expression: as it is)
    return F.where(x < 0, F.ceil(x), F.floor(x))


def frac(input: Tensor) -> Tensor:  # noqa: A002
    """The fractional part, ``input - trunc(input)`` (the sign of ``input``); gradient 1.

    Parameters
    ----------
    input : Tensor
        The values.

    Returns
    -------
    Tensor
        Values in (-1, 1); nan for ±inf and nan, 0.0 (no sign) for a whole number.

    Raises
    ------
    NotImplementedError
        For an integer, bool or complex tensor, as in PyTorch (the fractional part of an
        integer is 0): convert with ``.float()`` first.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.frac(dl.tensor([-1.5, 2.25])).tolist()
    [-0.5, 0.25]
    """
    x = tensor_or_interpreted(input)
    if np.dtype(x.dtype).kind not in "fO":  # ("O": sympy's symbols)
        raise NotImplementedError(f"frac is defined for floating-point tensors only, got "
                                  f"{x.dtype} (as in PyTorch): convert with .float() first "
                                  f"(a complex z: apply it to z.real and z.imag)")
    return x - trunc(x)


def lerp(input: Tensor, end: Any, weight: Any) -> Tensor:  # noqa: A002
    """Linear interpolation: ``input + weight · (end - input)``.

    Parameters
    ----------
    input, end : Tensor
        The two ends (``weight = 0`` gives ``input``, ``1`` gives ``end``).
    weight : float or Tensor
        Where between them.

    Returns
    -------
    Tensor
        The interpolated values.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.lerp(dl.tensor([0.0, 10.0]), dl.tensor([10.0, 20.0]), 0.25).tolist()
    [2.5, 12.5]
    """
    start = tensor_or_interpreted(input)
    return start + weight * (end - start)


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *,  # noqa: A002
            value: float = 1) -> Tensor:
    """``input + value · tensor1 · tensor2`` (the step of many optimizers).

    Parameters
    ----------
    input, tensor1, tensor2 : Tensor
        Broadcastable tensors.
    value : float
        The scale of the product.

    Returns
    -------
    Tensor
        The sum.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.addcmul(dl.ones(2), dl.tensor([1.0, 2.0]), dl.tensor([3.0, 4.0]), value=0.5).tolist()
    [2.5, 5.0]
    """
    return tensor_or_interpreted(input) + value * (tensor1 * tensor2)


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *,  # noqa: A002
            value: float = 1) -> Tensor:
    """``input + value · tensor1 / tensor2`` (Adam's update has this shape).

    Parameters
    ----------
    input, tensor1, tensor2 : Tensor
        Broadcastable tensors.
    value : float
        The scale of the quotient.

    Returns
    -------
    Tensor
        The sum.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.addcdiv(dl.zeros(2), dl.tensor([1.0, 2.0]), dl.tensor([4.0, 4.0]), value=2).tolist()
    [0.5, 1.0]
    """
    return tensor_or_interpreted(input) + value * (tensor1 / tensor2)


def logaddexp(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """``log(eˣ + eʸ)`` without overflow: ``m + log(e^(x-m) + e^(y-m))``, ``m = max(x, y)``.

    The derivative with respect to ``x`` is ``eˣ / (eˣ + eʸ)``, a softmax weight.

    Parameters
    ----------
    input, other : Tensor
        Broadcastable tensors of log-values.

    Returns
    -------
    Tensor
        The log of the sum of their exponentials.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([1000.0, 0.0], dtype=dl.float64)
    >>> dl.logaddexp(x, x).tolist()
    [1000.6931471805599, 0.6931471805599453]
    """
    x, y = tensor_or_interpreted(input), tensor_or_interpreted(other)
    shift = F.maximum(x, y).detach()
    shift = F.where(F.isfinite(shift), shift, zeros_like(shift))  # (±inf: no shift)
    return shift + F.log(F.exp(x - shift) + F.exp(y - shift))


def logaddexp2(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """``log₂(2ˣ + 2ʸ)`` without overflow (:func:`logaddexp` in base 2).

    Parameters
    ----------
    input, other : Tensor
        Broadcastable tensors of base-2 log-values.

    Returns
    -------
    Tensor
        The base-2 log of the sum of their powers of two.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.logaddexp2(dl.tensor([3.0]), dl.tensor([3.0])).tolist()
    [4.0]
    """
    ln2 = math.log(2.0)
    return logaddexp(tensor_or_interpreted(input) * ln2, tensor_of(other) * ln2) / ln2


def hypot(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """``√(x² + y²)`` without overflow or underflow of the squares.

    Computed as ``m · √((x/m)² + (y/m)²)`` with ``m = max(|x|, |y|)`` (detached: the
    result does not depend on it).  The gradient is ``(x, y) / hypot``, ``nan`` at
    the origin as in PyTorch.

    Parameters
    ----------
    input, other : Tensor
        Broadcastable legs of a right triangle.

    Returns
    -------
    Tensor
        The hypotenuse.

    Examples
    --------
    >>> import difflab as dl
    >>> big = dl.hypot(dl.tensor([3e200], dtype=dl.float64), dl.tensor([4e200], dtype=dl.float64))
    >>> round(big.item() / 1e200, 12)   # the squares alone would overflow to inf
    5.0
    """
    x, y = tensor_or_interpreted(input), tensor_or_interpreted(other)
    scale = F.maximum(x.abs(), y.abs()).detach()
    scale = F.where((scale > 0) & F.isfinite(scale), scale, ones_like(scale))
    return scale * F.sqrt((x / scale) ** 2 + (y / scale) ** 2)


def xlogy(input: Any, other: Any) -> Tensor:  # noqa: A002
    """``x · log(y)``, and 0 where ``x = 0`` (unless ``y`` is nan): entropy's term.

    The safe ``where``: ``y`` is replaced by 1 where ``x = 0`` *before* the log, so
    neither the value nor the gradient sees ``0 · log 0``.

    Parameters
    ----------
    input : Tensor or number
        The factors ``x``.
    other : Tensor or number
        The arguments of the log.

    Returns
    -------
    Tensor
        ``x log y`` with the convention ``0 log 0 = 0``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.xlogy(dl.tensor([0.0, 2.0]), dl.tensor([0.0, 1.0])).tolist()
    [0.0, 0.0]
    """
    x = tensor_or_interpreted(input)
    y = (other if isinstance(other, Tensor) or interpreted(other)
         else tensor_of(np.asarray(other, dtype=float)))
    safe_y = F.where(x == 0, ones_like(y), y)
    return F.where(F.isnan(y), y + x * 0, x * F.log(safe_y))


def logit(input: Tensor, eps: float | None = None) -> Tensor:  # noqa: A002
    """The inverse of the sigmoid: ``log(p / (1 - p))``.

    Parameters
    ----------
    input : Tensor
        Probabilities.
    eps : float, optional
        When given, ``p`` is first clamped to ``[eps, 1 - eps]`` (finite at 0 and 1).

    Returns
    -------
    Tensor
        The log-odds.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.logit(dl.tensor([0.5, 0.0]), eps=1e-6).tolist()[0]
    0.0
    """
    p = tensor_or_interpreted(input)
    if eps is not None:
        p = F.clamp(p, eps, 1.0 - eps)
    return F.log(p) - F.log1p(-p)


def sinc(input: Tensor) -> Tensor:  # noqa: A002
    """The normalised sinc, ``sin(πx) / (πx)``, and 1 at ``x = 0``.

    Parameters
    ----------
    input : Tensor
        The values.

    Returns
    -------
    Tensor
        The sinc; its derivative at 0 is 0.

    Examples
    --------
    >>> import difflab as dl
    >>> [round(v, 6) for v in dl.sinc(dl.tensor([0.0, 0.5, 1.5])).tolist()]
    [1.0, 0.63662, -0.212207]
    """
    x = tensor_or_interpreted(input)
    at_zero = x == 0
    scaled = math.pi * F.where(at_zero, ones_like(x), x)  # (the safe where: no 0/0)
    return F.where(at_zero, ones_like(scaled), F.sin(scaled) / scaled)


def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None,  # noqa: A002
               neginf: float | None = None) -> Tensor:
    """Replace nan, inf and -inf by numbers (by default 0 and the dtype's extremes).

    Parameters
    ----------
    input : Tensor
        The values.
    nan : float
        The replacement of nan.
    posinf, neginf : float, optional
        The replacements of inf and -inf (the largest and smallest finite values).

    Returns
    -------
    Tensor
        Finite values; the gradient is 1 where ``input`` was finite, 0 elsewhere.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nan_to_num(dl.tensor([float("nan"), 1.0, float("inf")]), posinf=9.0).tolist()
    [0.0, 1.0, 9.0]
    """
    x = tensor_or_interpreted(input)  # (a Dual or a sympy expression: as it is)
    kind = np.dtype(x.dtype).kind  # ("O": sympy expressions, real numbers of float64)
    if kind not in "fcO":
        return x.clone()
    largest = float(np.finfo(np.float64 if kind == "O" else np.dtype(x.dtype)).max)
    posinf = largest if posinf is None else posinf
    neginf = -largest if neginf is None else neginf
    out = F.where(F.isnan(x), nan, x)  # (scalars: the result keeps x's dtype)
    out = F.where(x == math.inf, posinf, out)
    return F.where(x == -math.inf, neginf, out)


def fmax(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The elementwise maximum, ignoring nan (nan only where both are nan).

    Parameters
    ----------
    input, other : Tensor
        Broadcastable tensors.

    Returns
    -------
    Tensor
        ``maximum`` where both are numbers, else the one that is.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.fmax(dl.tensor([1.0, float("nan")]), dl.tensor([float("nan"), 2.0])).tolist()
    [1.0, 2.0]
    """
    return _ignoring_nan(F.maximum, input, other)


def fmin(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The elementwise minimum, ignoring nan (nan only where both are nan).

    Parameters
    ----------
    input, other : Tensor
        Broadcastable tensors.

    Returns
    -------
    Tensor
        ``minimum`` where both are numbers, else the one that is.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.fmin(dl.tensor([1.0, float("nan")]), dl.tensor([3.0, 2.0])).tolist()
    [1.0, 2.0]
    """
    return _ignoring_nan(F.minimum, input, other)


def _ignoring_nan(pick: Any, input: Any, other: Any) -> Tensor:  # noqa: A002
    x, y = tensor_or_interpreted(input), tensor_or_interpreted(other)
    return F.where(F.isnan(x), y, F.where(F.isnan(y), x, pick(x, y)))


def isposinf(input: Tensor) -> Tensor:  # noqa: A002
    """True where ``input`` is +inf.

    Parameters
    ----------
    input : Tensor
        The values.

    Returns
    -------
    Tensor
        A bool tensor.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.isposinf(dl.tensor([float("inf"), -float("inf"), 1.0])).tolist()
    [True, False, False]
    """
    x = tensor_or_interpreted(input)
    return F.logical_and(F.isinf(x), x > 0)


def isneginf(input: Tensor) -> Tensor:  # noqa: A002
    """True where ``input`` is -inf.

    Parameters
    ----------
    input : Tensor
        The values.

    Returns
    -------
    Tensor
        A bool tensor.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.isneginf(dl.tensor([float("inf"), -float("inf"), 1.0])).tolist()
    [False, True, False]
    """
    x = tensor_or_interpreted(input)
    return F.logical_and(F.isinf(x), x < 0)


def isreal(input: Tensor) -> Tensor:  # noqa: A002
    """True where the imaginary part is 0: everywhere for a real tensor.

    Parameters
    ----------
    input : Tensor
        The values.

    Returns
    -------
    Tensor
        A bool tensor of ``input``'s shape.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.isreal(dl.tensor([1.0, 2.0])).tolist()
    [True, True]
    """
    x = tensor_or_interpreted(input)
    if x.dtype.kind == "c":  # (the kind: a Dual's dtype is NumPy's)
        return tensor_of(x.detach().numpy().imag == 0)
    return F.logical_or(x == x, x != x)  # (true everywhere, nan included; a graph step)


def isin(elements: Any, test_elements: Any, *, invert: bool = False) -> Tensor:
    """True where an element of ``elements`` occurs in ``test_elements``.

    Parameters
    ----------
    elements : Tensor or number
        The values to look up.
    test_elements : Tensor or number
        The values to look for (any shape; flattened).
    invert : bool
        True where the element does *not* occur.

    Returns
    -------
    Tensor
        A bool tensor of ``elements``' shape.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.isin(dl.tensor([1, 2, 3]), dl.tensor([3, 1])).tolist()
    [True, False, True]
    """
    # (a Dual or symbols stay themselves: the result is piecewise constant, so forward mode
    # gives it a zero tangent and symbolic an Or of Eq relations, as dl.where reads it)
    x = tensor_or_interpreted(elements)
    table = tensor_or_interpreted(test_elements).reshape(-1)
    found = F.any(x.unsqueeze(-1) == table, -1)
    return F.logical_not(found) if invert else found


def sgn(input: Tensor) -> Tensor:  # noqa: A002
    """The sign: -1, 0 or 1 of real values (:func:`difflab.sign`), ``z/|z|`` of complex ones.

    Parameters
    ----------
    input : Tensor
        Real or complex values.

    Returns
    -------
    Tensor
        The signs; for a real input the gradient is zeros (the derivative is 0 away from 0);
        for a complex one ``z/|z|`` (0 at 0), with the gradient of that quotient,
        PyTorch's ``(ȳ - conj(ȳ)·sgn(z)²) / (2|z|)``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.sgn(dl.tensor([-2.0, 0.0, 3.0])).tolist()
    [-1.0, 0.0, 1.0]
    >>> dl.sgn(dl.tensor([3 + 4j, 0j]))
    tensor([0.6+0.8j, 0. +0.j ], dtype=difflab.complex64)
    """
    x = tensor_or_interpreted(input)
    if isinstance(x, Tensor) and x.dtype.is_complex:  # z / |z|, 0 at 0 (and its gradient)
        size = x.abs()
        zero = size == 0
        return F.where(zero, 0, x / F.where(zero, 1, size))
    return F.sign(x)


def ldexp(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    r"""``input`` times two to the power ``other``: :math:`y = x \cdot 2^{e}`.

    Computed as PyTorch does, ``input * 2.0 ** other`` in the dtype of the result
    (float32 for half precision; so it overflows as that product does), which also
    gives its derivatives:
    :math:`\partial y/\partial x = 2^{e}`, :math:`\partial y/\partial e = y \ln 2`.

    Parameters
    ----------
    input : Tensor
        The numbers to scale (integers become floats).
    other : Tensor
        The exponents (usually integers), broadcast against ``input``.
    out : Tensor, optional
        Where to write the result.

    Returns
    -------
    Tensor
        ``input * 2 ** other``, of floating dtype: ``input``'s for integer exponents.

    See Also
    --------
    difflab.frexp : the inverse split into mantissa and exponent.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.ldexp(dl.tensor([1.0, 3.0]), dl.tensor([3, -1]))
    tensor([8. , 1.5])
    """
    x, e = tensor_or_interpreted(input), tensor_or_interpreted(other)
    if "O" not in (np.dtype(x.dtype).kind, np.dtype(e.dtype).kind):  # (sympy's: as they are)
        x, e = promote(x, e, floating=True)
    if np.dtype(x.dtype).itemsize == 2:  # (2**-25 underflows in float16: float32, as PyTorch)
        return write_out(out, (x.float() * (2.0 ** e.float())).to(x.dtype))
    return write_out(out, x * (2.0 ** e))  # (2**e in x's dtype: float64 reaches 2**-1074)


class Frexp(NamedTuple):
    """(mantissa, exponent), readable as ``.mantissa`` and ``.exponent`` as in PyTorch."""

    mantissa: Tensor
    exponent: Tensor


def frexp(input: Tensor) -> Frexp:  # noqa: A002
    r"""Split floats into mantissa and exponent: :math:`x = m \cdot 2^{e}`, :math:`0.5 \le |m| < 1`.

    The exponent is read from the values (the primitive ``frexp_exponent``, NumPy's
    ``frexp``: 0 for zeros, inf and nan, whose mantissa is the value itself).  The
    mantissa is then :math:`x \cdot 2^{-e}`, exact, with the derivative :math:`2^{-e}`
    (the exponent is piecewise constant: no derivative, as in PyTorch).
    ``np.frexp`` of a tensor gives the same.

    Parameters
    ----------
    input : Tensor
        Floating-point values.

    Returns
    -------
    Frexp
        ``(mantissa, exponent)``: the mantissa of ``input``'s dtype, the exponent
        int32.

    Raises
    ------
    TypeError
        For an integer or bool tensor (only floats have a mantissa).

    See Also
    --------
    difflab.ldexp : put them back together.

    Examples
    --------
    >>> import difflab as dl
    >>> mantissa, exponent = dl.frexp(dl.tensor([8.0, -0.75, 0.0]))
    >>> mantissa, exponent
    (tensor([ 0.5 , -0.75,  0.  ]), tensor([4, 0, 0], dtype=difflab.int32))
    """
    x = tensor_or_interpreted(input)
    if np.dtype(x.dtype).kind not in "fO":  # ("O": sympy's symbols)
        raise TypeError(f"frexp only supports floating-point dtypes, got {x.dtype}: "
                        f"convert with .float() first")
    return Frexp(*frexp_parts(x))


def signbit(input: Tensor) -> Tensor:  # noqa: A002
    """True where the sign bit is set: negative numbers, -0.0, -inf and a nan written -nan.

    The bit itself is read (the primitive ``signbit``, NumPy's), so ``-0.0 < 0``, which is
    false, does not hide the sign of a zero, and a nan keeps the sign it was written with,
    as in PyTorch.  Integers are signed by ``x < 0``; bools have no sign bit.

    Parameters
    ----------
    input : Tensor
        Real values (integer, bool or floating point).

    Returns
    -------
    Tensor
        A bool tensor.

    Raises
    ------
    NotImplementedError
        For a complex tensor (as PyTorch's): take the sign bit of ``z.real`` or ``z.imag``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.signbit(dl.tensor([-1.0, -0.0, 0.0, 2.0])).tolist()
    [True, True, False, False]
    >>> nan = dl.tensor([float("nan")])
    >>> dl.signbit(-nan), dl.signbit(nan)
    (tensor([True]), tensor([False]))
    """
    return F.bind(PRIMITIVES["signbit"], tensor_or_interpreted(input))


def heaviside(input: Tensor, values: Any) -> Tensor:  # noqa: A002
    """The step function: 0 for ``input < 0``, ``values`` at 0, 1 for ``input > 0``.

    Parameters
    ----------
    input : Tensor
        The values.
    values : Tensor or number
        What the step is at 0 (broadcast against ``input``).

    Returns
    -------
    Tensor
        The steps; no gradient flows to ``input`` (the derivative is 0 away from 0).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.heaviside(dl.tensor([-1.5, 0.0, 2.0]), dl.tensor(0.5)).tolist()
    [0.0, 0.5, 1.0]
    """
    x = tensor_or_interpreted(input)
    if not isinstance(x, Tensor):  # a Dual or a sympy expression: the primitive's rule
        return F.heaviside(x, values)  # (the array namespace's: the primitive, routed)
    at_zero = values if isinstance(values, Tensor) else full_like(x, values)
    step = (x > 0).to(x.dtype if x.dtype.is_floating_point else at_zero.dtype)
    return F.where(x == 0, at_zero.to(step.dtype), step)


def bitwise_not(input: Tensor) -> Tensor:  # noqa: A002
    """Every bit flipped: ``~x`` (``not`` for booleans, ``-x - 1`` for integers).

    Parameters
    ----------
    input : Tensor
        Booleans or integers (floats have no bits to flip: a TypeError).

    Returns
    -------
    Tensor
        The same dtype; no gradient.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.bitwise_not(dl.tensor([0, 5, -1])).tolist()
    [-1, -6, 0]
    """
    x = tensor_or_interpreted(input)
    if x.dtype.kind in "fc":  # (the kind: a Dual's dtype is NumPy's; symbols' truths: object)
        raise TypeError(f"bitwise_not expects a bool or integer tensor, got {x.dtype}")
    return ~x


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,  # noqa: A002
         append: Tensor | None = None) -> Tensor:
    r"""The n-th forward difference along ``dim``: :math:`y_k = x_{k+1} - x_k`, n times.

    PyTorch's ``torch.diff`` (``difflab.diff`` is also the package of the four
    differentiators; called, it is this function).  ``prepend`` and ``append``
    are joined to ``input`` along ``dim`` first; each difference makes ``dim`` one
    shorter.  Booleans differ where neighbours differ (``x[k+1] != x[k]``).  The
    derivative is that of a subtraction: +1 and -1 at each pair.

    Parameters
    ----------
    input : Tensor
        At least 1-D.
    n : int, default 1
        How many times to take the difference (0 gives ``input`` back).
    dim : int, default -1
        The dimension along which to take it.
    prepend, append : Tensor or number, optional
        Values put before and after ``input`` along ``dim`` (a number or a 0-d tensor:
        one slice of it).

    Returns
    -------
    Tensor
        ``dim`` shortened by ``n`` (never below 0).

    Raises
    ------
    TypeError
        For an ``n`` that is not an int.
    ValueError
        For a negative ``n``.
    RuntimeError
        For a ``prepend`` or ``append`` of another number of dimensions than ``input``.
    IndexError
        For a 0-d input or a ``dim`` out of range.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.diff(dl.tensor([1.0, 3.0, 6.0, 10.0]))
    tensor([2., 3., 4.])
    >>> dl.diff(dl.tensor([1.0, 3.0, 6.0]), n=2, prepend=dl.tensor([0.0]))
    tensor([1., 1.])
    """
    x = tensor_or_interpreted(input)
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"diff: order n must be an int, got {type(n).__name__} {n!r}")
    if n < 0:
        raise ValueError(f"diff: order n must be a non-negative integer, got {n!r}")
    axis = dim_index(dim, x.ndim, "diff", zero_d_has_dim=False)
    if prepend is not None or append is not None:
        def along_dim(values: Any) -> Any:  # (a number: one slice of it, as NumPy takes it)
            if getattr(values, "ndim", 0):
                if values.ndim != x.ndim:
                    raise RuntimeError(f"diff: prepend and append must have input's {x.ndim} "
                                       f"dimensions (or be a number), got shape "
                                       f"{tuple(values.shape)}")
                return values
            shape = list(x.shape)
            shape[axis] = 1
            if hasattr(values, "shape"):  # (0-d: repeated, its gradient the slice's sum)
                return tensor_or_interpreted(values).reshape([1] * x.ndim).expand(shape)
            return full_like(x.narrow(axis, 0, 1) if x.shape[axis] else x, values).expand(shape)
        pieces = [along_dim(prepend)] if prepend is not None else []
        pieces += [x] + ([along_dim(append)] if append is not None else [])
        x = F.cat(pieces, axis)
    for _ in range(n):
        length = x.shape[axis]
        if length == 0:
            break
        after, before = x.narrow(axis, 1, length - 1), x.narrow(axis, 0, length - 1)
        x = after != before if x.dtype == bool_ else after - before
    return x


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:  # noqa: A002
    r"""``input`` with the places where ``mask`` is True filled from ``source``, in order.

    The k-th True place of ``mask`` (in row-major order, ``mask`` and ``input``
    broadcast together) takes ``source``'s k-th element (``source`` flattened); the others keep
    ``input``'s.  Written with differentiable operations: the k-th place's index
    into ``source`` is the running count of True places, so the gradient reaches
    ``input`` where ``mask`` is False and ``source``'s first elements where it is True.

    Parameters
    ----------
    input : Tensor
        The values to start from.
    mask : Tensor of bool
        Where to write, broadcast with ``input``.
    source : Tensor
        At least as many elements as ``mask`` has True places, of ``input``'s dtype.

    Returns
    -------
    Tensor
        A new tensor of ``input``'s dtype, of the shape ``input`` and ``mask`` broadcast to.

    Raises
    ------
    TypeError
        If ``mask`` is not boolean.
    ValueError
        If ``source`` has fewer elements than ``mask`` has True places.
    RuntimeError
        If ``source``'s dtype is not ``input``'s (convert it first).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.zeros(4).masked_scatter(dl.tensor([True, False, True, True]),
    ...                            dl.tensor([1.0, 2.0, 3.0, 4.0]))
    tensor([1., 0., 2., 3.])
    """
    x, source = tensor_or_interpreted(input), tensor_or_interpreted(source)
    mask = tensor_of(mask)
    if mask.dtype != bool_:
        raise TypeError(f"masked_scatter: mask must be a bool tensor, got {mask.dtype}")
    kinds = np.dtype(x.dtype).kind + np.dtype(source.dtype).kind
    if x.dtype != source.dtype and "O" not in kinds:  # (as PyTorch: no silent rounding)
        raise RuntimeError(f"masked_scatter: expected input and source to have the same dtype, "
                           f"got {x.dtype} and {source.dtype}; convert source with "
                           f".to({x.dtype})")
    shape = np.broadcast_shapes(tuple(x.shape), tuple(mask.shape))  # (as PyTorch: both)
    x, mask = x.expand(shape), mask.expand(shape)
    places = mask.reshape(-1)
    if source.numel() < places.numel():  # (only then can source be too short: count)
        needed = int(places.sum())
        if needed > source.numel():
            raise ValueError(f"masked_scatter: mask has {needed} True places but source has "
                             f"only {source.numel()} elements")
        if source.numel() == 0:
            return F.where(mask, x, x)
    order = (places.cumsum(0) - 1).clamp(min=0)  # (the k-th True place reads source[k])
    picked = source.reshape(-1)[order].reshape(x.shape)
    return F.where(mask, picked, x)


def masked_scatter_(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:  # noqa: A002
    """In-place :func:`masked_scatter`: ``source``'s elements written where ``mask`` is True.

    In place, as PyTorch's trailing underscore says: the result is written into this
    tensor's memory and its version counter goes up (see ``Tensor.masked_fill_``).

    Parameters
    ----------
    input : Tensor
        The tensor to write into.
    mask : Tensor of bool
        Where to write, broadcastable to ``input``.
    source : Tensor
        At least as many elements as ``mask`` has True places, of ``input``'s dtype.

    Returns
    -------
    Tensor
        ``input`` itself.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.zeros(3)
    >>> _ = x.masked_scatter_(dl.tensor([False, True, True]), dl.tensor([5.0, 6.0]))
    >>> x
    tensor([0., 5., 6.])
    """
    input[...] = masked_scatter(input, mask, source)
    return input


# Tensor methods: the functions themselves (x.trunc() is trunc(x)).  The tensor module does
# not import this one (no import cycle), so they are attached when it is imported.
_TENSOR_METHODS = {
    "trunc": trunc, "frac": frac, "lerp": lerp, "addcmul": addcmul,
    "addcdiv": addcdiv, "logit": logit, "nan_to_num": nan_to_num,
    "hypot": hypot, "xlogy": xlogy, "logaddexp": logaddexp, "sinc": sinc, "exp2": exp2,
    "deg2rad": deg2rad, "rad2deg": rad2deg, "fmax": fmax, "fmin": fmin, "isposinf": isposinf,
    "isneginf": isneginf, "positive": positive, "sgn": sgn, "signbit": signbit,
    "heaviside": heaviside, "bitwise_not": bitwise_not, "frexp": frexp, "ldexp": ldexp,
    "diff": diff, "masked_scatter": masked_scatter, "masked_scatter_": masked_scatter_,
}
for _name, _function in _TENSOR_METHODS.items():
    setattr(Tensor, _name, _function)
