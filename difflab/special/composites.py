r"""The composite functions of ``difflab.special``: short formulas over the primitives.

Where a formula would divide 0 by 0 or overflow in a branch that is not taken
(``sinc`` at 0, ``xlogy`` at x = 0, ``log_ndtr`` far in a tail), the
argument of that branch is replaced by a harmless value first, so that
neither the value nor the gradient picks up a NaN from it.
"""

from __future__ import annotations

import math
import typing

from difflab import functions as F
from difflab.special.primitives import _tensor

if typing.TYPE_CHECKING:
    from difflab.tensor import Tensor

__all__ = [
    "entr",
    "exp2",
    "expit",
    "expm1",
    "log1p",
    "log_ndtr",
    "log_softmax",
    "logit",
    "logsumexp",
    "ndtr",
    "ndtri",
    "round",
    "sinc",
    "softmax",
    "spherical_bessel_j0",
    "xlog1py",
    "xlogy",
]

_SQRT_HALF = math.sqrt(0.5)


def _where_zero(x: typing.Any, value: typing.Any) -> typing.Any:
    """``x`` with its zeros replaced by ``value`` (a branch that must stay finite)."""
    return F.where(x == 0, value, x)


def sinc(input: Tensor) -> Tensor:  # noqa: A002
    """The normalized sinc function sin(πx)/(πx), 1 at x = 0.

    Parameters
    ----------
    input : Tensor
        Any real values.

    Returns
    -------
    Tensor
        sinc(x); the gradient at 0 is 0.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([0.0, 0.5, 1.0], dtype=dl.float64)
    >>> dl.special.sinc(x).numpy().round(6).tolist()
    [1.0, 0.63662, 0.0]
    """
    x = _tensor(input)
    scaled = _where_zero(x, 1.0) * math.pi
    return F.where(x == 0, 1.0, F.sin(scaled) / scaled)


def spherical_bessel_j0(input: Tensor) -> Tensor:  # noqa: A002
    """The spherical Bessel function of the first kind of order 0, j₀(x) = sin(x)/x.

    Parameters
    ----------
    input : Tensor
        Any real values (1 at x = 0).

    Returns
    -------
    Tensor
        sin(x)/x.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([0.0, 2.0], dtype=dl.float64)
    >>> dl.special.spherical_bessel_j0(x).numpy().round(6).tolist()
    [1.0, 0.454649]
    """
    x = _tensor(input)
    safe = _where_zero(x, 1.0)
    return F.where(x == 0, 1.0, F.sin(safe) / safe)


def entr(input: Tensor) -> Tensor:  # noqa: A002
    """The entropy term -x log x: 0 at x = 0, -inf for x < 0.

    Parameters
    ----------
    input : Tensor
        Any real values (NaN stays NaN).

    Returns
    -------
    Tensor
        -x log x where x > 0.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([0.0, 0.5, -1.0], dtype=dl.float64)
    >>> dl.special.entr(x).numpy().round(6).tolist()
    [0.0, 0.346574, -inf]
    """
    x = _tensor(input)
    positive = x > 0
    safe = F.where(positive, x, 1.0)
    zero = x * 0.0  # (the branches keep x's dtype)
    value = F.where(positive, -safe * F.log(safe), F.where(x == 0, zero, zero - math.inf))
    return F.where(F.isnan(x), x, value)


def exp2(input: Tensor) -> Tensor:  # noqa: A002
    """2 to the power x, elementwise.

    Parameters
    ----------
    input : Tensor
        Any real values.

    Returns
    -------
    Tensor
        2ˣ; its derivative is 2ˣ · log 2.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.special.exp2(dl.tensor([0.0, 3.0])).tolist()
    [1.0, 8.0]
    """
    return 2.0 ** _tensor(input)


def expit(input: Tensor) -> Tensor:  # noqa: A002
    """The logistic sigmoid 1/(1 + exp(-x)) (``sigmoid``), elementwise.

    Parameters
    ----------
    input : Tensor
        Any real values.

    Returns
    -------
    Tensor
        Values in (0, 1).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.special.expit(dl.tensor([0.0])).tolist()
    [0.5]
    """
    return F.sigmoid(_tensor(input))


def expm1(input: Tensor) -> Tensor:  # noqa: A002
    """exp(x) - 1, accurate for small x, elementwise.

    Parameters
    ----------
    input : Tensor
        Any real values.

    Returns
    -------
    Tensor
        exp(x) - 1.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.special.expm1(dl.tensor([1e-10], dtype=dl.float64)).tolist()
    [1.00000000005e-10]
    """
    return F.expm1(_tensor(input))


def log1p(input: Tensor) -> Tensor:  # noqa: A002
    """log(1 + x), accurate for small x, elementwise.

    Parameters
    ----------
    input : Tensor
        Values greater than -1.

    Returns
    -------
    Tensor
        log(1 + x).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.special.log1p(dl.tensor([1e-10], dtype=dl.float64)).item()     # log(1 + x) ≈ x - x²/2
    9.9999999995...e-11
    """
    return F.log1p(_tensor(input))


def logit(input: Tensor, eps: float | None = None) -> Tensor:  # noqa: A002
    """The log-odds log(p / (1 - p)), the inverse of :func:`expit`.

    Parameters
    ----------
    input : Tensor
        Probabilities p in [0, 1].
    eps : float, optional
        If given, p is first clamped to [eps, 1 - eps] (finite at 0 and 1).

    Returns
    -------
    Tensor
        log(p) - log(1 - p).

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([0.5, 0.75, 1.0], dtype=dl.float64)
    >>> dl.special.logit(x, eps=1e-6).numpy().round(6).tolist()
    [0.0, 1.098612, 13.81551]
    """
    p = _tensor(input)
    if eps is not None:
        p = F.clamp(p, eps, 1.0 - eps)
    return F.log(p) - F.log1p(-p)


def xlogy(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """x · log(y), with 0 where x = 0 (unless y is NaN), elementwise with broadcasting.

    The term of an entropy or a cross-entropy where a probability is 0.

    Parameters
    ----------
    input : Tensor or float
        The factor x.
    other : Tensor or float
        The argument y of the logarithm.

    Returns
    -------
    Tensor
        x log y; d/dx = log y, d/dy = x/y.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([0.0, 2.0], dtype=dl.float64)
    >>> y = dl.tensor([0.0, 3.0], dtype=dl.float64)
    >>> dl.special.xlogy(x, y).numpy().round(6).tolist()
    [0.0, 2.197225]
    """
    x, y = _tensor(input), _tensor(other)
    # (only where log y is not finite: at x = 0 the gradient in x stays log y, as PyTorch's)
    return x * F.log(F.where((x == 0) & (y <= 0), 1.0, y))


def xlog1py(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """x · log(1 + y), with 0 where x = 0 (unless y is NaN), elementwise with broadcasting.

    Parameters
    ----------
    input : Tensor or float
        The factor x.
    other : Tensor or float
        y, greater than -1.

    Returns
    -------
    Tensor
        x log1p(y).

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([0.0, 2.0], dtype=dl.float64)
    >>> y = dl.tensor([-1.0, 1.0], dtype=dl.float64)
    >>> dl.special.xlog1py(x, y).numpy().round(6).tolist()
    [0.0, 1.386294]
    """
    x, y = _tensor(input), _tensor(other)
    return x * F.log1p(F.where((x == 0) & (y <= -1), 0.0, y))


def ndtr(input: Tensor) -> Tensor:  # noqa: A002
    """The standard normal distribution function Φ(x) = (1 + erf(x/√2))/2.

    Written as erfc(-x/√2)/2, which keeps its relative accuracy in the lower tail.

    Parameters
    ----------
    input : Tensor
        Any real values.

    Returns
    -------
    Tensor
        Φ(x), in [0, 1].

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([0.0, 1.96], dtype=dl.float64)
    >>> dl.special.ndtr(x).numpy().round(6).tolist()
    [0.5, 0.975002]
    """
    return 0.5 * F.erfc(-_SQRT_HALF * _tensor(input))


def ndtri(input: Tensor) -> Tensor:  # noqa: A002
    """The inverse of :func:`ndtr`: the quantile function of the standard normal.

    Φ⁻¹(p) = √2 · erfinv(2p - 1).

    Parameters
    ----------
    input : Tensor
        Probabilities p in [0, 1] (-inf at 0, +inf at 1).

    Returns
    -------
    Tensor
        Φ⁻¹(p).

    Examples
    --------
    >>> import difflab as dl
    >>> print(f"{dl.special.ndtri(dl.tensor(0.975, dtype=dl.float64)).item():.6f}")
    1.959964
    """
    return math.sqrt(2.0) * F.erfinv(2.0 * _tensor(input) - 1.0)


def log_ndtr(input: Tensor) -> Tensor:  # noqa: A002
    """log Φ(x), the log of the standard normal distribution function, accurate in both tails.

    For x < 0 it is log(erfcx(-x/√2)/2) - x²/2 (no underflow of Φ far in the lower
    tail); for x >= 0 it is log1p(-erfc(x/√2)/2).

    Parameters
    ----------
    input : Tensor
        Any real values.

    Returns
    -------
    Tensor
        log Φ(x) <= 0.

    Examples
    --------
    >>> import difflab as dl
    >>> print(f"{dl.special.log_ndtr(dl.tensor(-40.0, dtype=dl.float64)).item():.4f}")
    -804.6084
    """
    x = _tensor(input)
    lower = F.minimum(x, 0.0)  # (each branch sees only its own side: nothing overflows)
    upper = F.maximum(x, 0.0)
    low = F.log(0.5 * F.erfcx(-_SQRT_HALF * lower)) - 0.5 * lower * lower
    high = F.log1p(-0.5 * F.erfc(_SQRT_HALF * upper))
    return F.where(x < 0, low, high)


def round(input: Tensor, *, decimals: int = 0) -> Tensor:  # noqa: A001, A002
    """Round to the nearest integer (ties to even), or to ``decimals`` decimal places.

    Parameters
    ----------
    input : Tensor
        Any values.
    decimals : int, optional
        Decimal places to keep (negative: to tens, hundreds, ...).

    Returns
    -------
    Tensor
        The rounded values; the gradient is 0 (piecewise constant).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.special.round(dl.tensor([0.5, 1.5, 2.345]), decimals=0).tolist()
    [0.0, 2.0, 2.0]
    """
    x = _tensor(input)
    if decimals == 0:
        return F.round(x)
    scale = 10.0 ** decimals
    return F.round(x * scale) / scale


def softmax(input: Tensor, dim: int, *, dtype: typing.Any = None) -> Tensor:  # noqa: A002
    """exp(x) normalized to sum 1 along ``dim``.

    Parameters
    ----------
    input : Tensor
        Scores.
    dim : int
        The dimension that sums to 1.
    dtype : difflab dtype, optional
        Cast the input to this dtype first.

    Returns
    -------
    Tensor
        Probabilities.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.special.softmax(dl.tensor([0.0, 0.0]), 0).tolist()
    [0.5, 0.5]
    """
    x = _tensor(input)
    return F.softmax(x if dtype is None else x.to(dtype), dim)


def log_softmax(input: Tensor, dim: int, *, dtype: typing.Any = None) -> Tensor:  # noqa: A002
    """log(softmax(x)) along ``dim``, computed without forming the softmax.

    Parameters
    ----------
    input : Tensor
        Scores.
    dim : int
        The dimension normalized over.
    dtype : difflab dtype, optional
        Cast the input to this dtype first.

    Returns
    -------
    Tensor
        Log-probabilities.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([0.0, 0.0], dtype=dl.float64)
    >>> dl.special.log_softmax(x, 0).numpy().round(6).tolist()
    [-0.693147, -0.693147]
    """
    x = _tensor(input)
    return F.log_softmax(x if dtype is None else x.to(dtype), dim)


def logsumexp(input: Tensor, dim: typing.Any, keepdim: bool = False) -> Tensor:  # noqa: A002
    """log Σ exp(x) over ``dim``, without overflow (the maximum is shifted out first).

    Parameters
    ----------
    input : Tensor
        Values.
    dim : int or tuple of int
        The dimensions summed over.
    keepdim : bool, optional
        Keep them, with size 1.

    Returns
    -------
    Tensor
        log Σ exp(x).

    Examples
    --------
    >>> import difflab as dl
    >>> print(f"{dl.special.logsumexp(dl.tensor([1000.0, 1000.0]), 0).item():.4f}")
    1000.6932
    """
    return F.logsumexp(_tensor(input), dim, keepdim)
