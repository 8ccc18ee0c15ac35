r"""The functions of ``difflab.special`` that are formulas over difflab's primitives.

They are what is left of ``torch.special`` once the names that *are* registry
faces (``gammaln`` is ``difflab.lgamma``: the table ``FACES`` in
:mod:`difflab.special`) are taken out: each is a short composite of those
faces, so the four differentiators and the jit know it, and its
derivative is the chain rule over them.

Where a formula would divide 0 by 0 or overflow in a branch that is not taken
(``sinc`` at 0, ``xlogy`` at x = 0, ``log_ndtr`` far in a tail), the
argument of that branch is replaced by a harmless value first, so that
neither the value nor the gradient picks up a NaN from it.

What flows in flows through, as with the faces: a Tensor gives a Tensor (on the
tape), a NumPy array or a number a NumPy result, a dual number a dual number, a
sympy expression an expression; a list is read as a NumPy array of floats.
"""

from __future__ import annotations

import math
import typing

import numpy as np

from difflab import functions as F
from difflab.ops import registry

if typing.TYPE_CHECKING:
    from difflab.tensor import Tensor

__all__ = [
    "entr",
    "exp2",
    "log_ndtr",
    "logit",
    "multigammaln",
    "ndtr",
    "ndtri",
    "round",
    "sinc",
    "spherical_bessel_j0",
    "xlog1py",
    "xlogy",
]

_SQRT_HALF = math.sqrt(0.5)
_ROUND = registry.get("round")  # (the primitive, routed as a face routes it: arrays stay arrays)


def _operand(x: typing.Any) -> typing.Any:
    """``x`` as the faces read it: a list or tuple of numbers becomes a NumPy array of
    floats (what ``difflab.erfc([...])`` computes on); anything else passes unchanged."""
    return np.asarray(x, dtype=float) if isinstance(x, (list, tuple)) else x


def _where_zero(x: typing.Any, value: typing.Any) -> typing.Any:
    """``x`` with its zeros replaced by ``value`` (a branch that must stay finite)."""
    return F.where(x == 0, value, x)


def sinc(input: Tensor) -> Tensor:  # noqa: A002
    """The normalized sinc function sin(πx)/(πx), 1 at x = 0.

    Parameters
    ----------
    input : Tensor, array or float
        Any real values.

    Returns
    -------
    Tensor, array or float
        sinc(x); the gradient at 0 is 0.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([0.0, 0.5, 1.0], dtype=dl.float64)
    >>> dl.special.sinc(x).numpy().round(6).tolist()
    [1.0, 0.63662, 0.0]
    """
    x = _operand(input)
    scaled = _where_zero(x, 1.0) * math.pi
    return F.where(x == 0, 1.0, F.sin(scaled) / scaled)


def spherical_bessel_j0(input: Tensor) -> Tensor:  # noqa: A002
    """The spherical Bessel function of the first kind of order 0, j₀(x) = sin(x)/x.

    Parameters
    ----------
    input : Tensor, array or float
        Any real values (1 at x = 0).

    Returns
    -------
    Tensor, array or float
        sin(x)/x.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([0.0, 2.0], dtype=dl.float64)
    >>> dl.special.spherical_bessel_j0(x).numpy().round(6).tolist()
    [1.0, 0.454649]
    """
    x = _operand(input)
    safe = _where_zero(x, 1.0)
    return F.where(x == 0, 1.0, F.sin(safe) / safe)


def entr(input: Tensor) -> Tensor:  # noqa: A002
    """The entropy term -x log x: 0 at x = 0 (also at -0.0), -inf for x < 0 (also at -inf).

    Parameters
    ----------
    input : Tensor, array or float
        Any real values (NaN stays NaN).

    Returns
    -------
    Tensor, array or float
        -x log x where x > 0.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([0.0, 0.5, -1.0], dtype=dl.float64)
    >>> dl.special.entr(x).numpy().round(6).tolist()
    [0.0, 0.346574, -inf]
    """
    x = _operand(input)
    positive = x > 0
    safe = F.where(positive, x, 1.0)
    zero = safe * 0.0  # (0 where x <= 0, in x's dtype; x * 0 would be NaN at -inf)
    value = F.where(positive, -safe * F.log(safe), F.where(x == 0, zero, zero - math.inf))
    return F.where(x != x, x, value)  # (NaN stays NaN: the one value unequal to itself)


def exp2(input: Tensor) -> Tensor:  # noqa: A002
    """2 to the power x, elementwise.

    Parameters
    ----------
    input : Tensor, array or float
        Any real values.

    Returns
    -------
    Tensor, array or float
        2ˣ; its derivative is 2ˣ · log 2.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.special.exp2(dl.tensor([0.0, 3.0])).tolist()
    [1.0, 8.0]
    """
    return 2.0 ** _operand(input)


def logit(input: Tensor, eps: float | None = None) -> Tensor:  # noqa: A002
    """The log-odds log(p / (1 - p)), the inverse of :func:`expit`.

    Parameters
    ----------
    input : Tensor, array or float
        Probabilities p in [0, 1].
    eps : float, optional
        If given, p is first clamped to [eps, 1 - eps] (finite at 0 and 1).

    Returns
    -------
    Tensor, array or float
        log(p) - log(1 - p).

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([0.5, 0.75, 1.0], dtype=dl.float64)
    >>> dl.special.logit(x, eps=1e-6).numpy().round(6).tolist()
    [0.0, 1.098612, 13.81551]
    """
    p = _operand(input)
    if eps is not None:
        p = F.clamp(p, eps, 1.0 - eps)
    return F.log(p) - F.log1p(-p)


def xlogy(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """x · log(y), with 0 where x = 0 (unless y is NaN), elementwise with broadcasting.

    The term of an entropy or a cross-entropy where a probability is 0.

    Parameters
    ----------
    input : Tensor, array or float
        The factor x.
    other : Tensor, array or float
        The argument y of the logarithm.

    Returns
    -------
    Tensor, array or float
        x log y; d/dx = log y, d/dy = x/y.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([0.0, 2.0], dtype=dl.float64)
    >>> y = dl.tensor([0.0, 3.0], dtype=dl.float64)
    >>> dl.special.xlogy(x, y).numpy().round(6).tolist()
    [0.0, 2.197225]
    """
    x, y = _operand(input), _operand(other)
    # (only where log y is not finite: at x = 0 the gradient in x stays log y, as PyTorch's)
    return x * F.log(F.where(x == 0, F.where(y <= 0, 1.0, y), y))


def xlog1py(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """x · log(1 + y), with 0 where x = 0 (unless y is NaN), elementwise with broadcasting.

    Parameters
    ----------
    input : Tensor, array or float
        The factor x.
    other : Tensor, array or float
        y, greater than -1.

    Returns
    -------
    Tensor, array or float
        x log1p(y).

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([0.0, 2.0], dtype=dl.float64)
    >>> y = dl.tensor([-1.0, 1.0], dtype=dl.float64)
    >>> dl.special.xlog1py(x, y).numpy().round(6).tolist()
    [0.0, 1.386294]
    """
    x, y = _operand(input), _operand(other)
    return x * F.log1p(F.where(x == 0, F.where(y <= -1, 0.0, y), y))


def ndtr(input: Tensor) -> Tensor:  # noqa: A002
    """The standard normal distribution function Φ(x) = (1 + erf(x/√2))/2.

    Written as erfc(-x/√2)/2, which keeps its relative accuracy in the lower tail.

    Parameters
    ----------
    input : Tensor, array or float
        Any real values.

    Returns
    -------
    Tensor, array or float
        Φ(x), in [0, 1].

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([0.0, 1.96], dtype=dl.float64)
    >>> dl.special.ndtr(x).numpy().round(6).tolist()
    [0.5, 0.975002]
    """
    return 0.5 * F.erfc(-_SQRT_HALF * _operand(input))


def ndtri(input: Tensor) -> Tensor:  # noqa: A002
    """The inverse of :func:`ndtr`: the quantile function of the standard normal.

    Φ⁻¹(p) = √2 · erfinv(2p - 1).

    Parameters
    ----------
    input : Tensor, array or float
        Probabilities p in [0, 1] (-inf at 0, +inf at 1).

    Returns
    -------
    Tensor, array or float
        Φ⁻¹(p).

    Examples
    --------
    >>> import difflab as dl
    >>> print(f"{dl.special.ndtri(dl.tensor(0.975, dtype=dl.float64)).item():.6f}")
    1.959964
    """
    return math.sqrt(2.0) * F.erfinv(2.0 * _operand(input) - 1.0)


def log_ndtr(input: Tensor) -> Tensor:  # noqa: A002
    """log Φ(x), the log of the standard normal distribution function, accurate in both tails.

    For x < 0 it is log(erfcx(-x/√2)/2) - x²/2 (no underflow of Φ far in the lower
    tail); for x >= 0 it is log1p(-erfc(x/√2)/2).

    Parameters
    ----------
    input : Tensor, array or float
        Any real values.

    Returns
    -------
    Tensor, array or float
        log Φ(x) <= 0.

    Examples
    --------
    >>> import difflab as dl
    >>> print(f"{dl.special.log_ndtr(dl.tensor(-40.0, dtype=dl.float64)).item():.4f}")
    -804.6084
    """
    x = _operand(input)
    lower = F.minimum(x, 0.0)  # (each branch sees only its own side: nothing overflows)
    upper = F.maximum(x, 0.0)
    low = F.log(0.5 * F.erfcx(-_SQRT_HALF * lower)) - 0.5 * lower * lower
    high = F.log1p(-0.5 * F.erfc(_SQRT_HALF * upper))
    return F.where(x < 0, low, high)


def round(input: Tensor, *, decimals: int = 0) -> Tensor:  # noqa: A001, A002
    """Round to the nearest integer (ties to even), or to ``decimals`` decimal places.

    Parameters
    ----------
    input : Tensor, array or float
        Any values.
    decimals : int, optional
        Decimal places to keep (negative: to tens, hundreds, ...).

    Returns
    -------
    Tensor, array or float
        The rounded values; the gradient is 0 (piecewise constant).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.special.round(dl.tensor([0.5, 1.5, 2.345]), decimals=0).tolist()
    [0.0, 2.0, 2.0]
    """
    x = _operand(input)
    if decimals == 0:
        return F.bind(_ROUND, x)
    scale = 10.0 ** decimals
    return F.bind(_ROUND, x * scale) / scale




def multigammaln(input: Tensor, p: int) -> Tensor:  # noqa: A002
    """The multivariate log-gamma function of dimension p, elementwise.

    log Γₚ(a) = p(p - 1)/4 · log π + Σⱼ₌₀..ₚ₋₁ log Γ(a - j/2), defined for a > (p - 1)/2
    (the normalizer of the Wishart distribution).  A sum of ``lgamma`` terms, so its
    derivative is Σⱼ ψ(a - j/2).

    Parameters
    ----------
    input : Tensor, array or float
        The values a, each greater than (p - 1)/2.
    p : int
        The dimension, p >= 1.

    Returns
    -------
    Tensor, array or float
        log Γₚ(a), of the shape and kind of ``input``.

    Raises
    ------
    ValueError
        If p is not an integer >= 1, or some a <= (p - 1)/2.

    See Also
    --------
    difflab.lgamma : log Γ, the case p = 1.

    Examples
    --------
    >>> import difflab as dl
    >>> print(f"{dl.special.multigammaln(dl.tensor(2.5), 1).item():.6f}")   # p = 1: log Γ(2.5)
    0.284683
    >>> a = dl.tensor([2.0, 3.0], dtype=dl.float64, requires_grad=True)
    >>> dl.special.multigammaln(a, 2).sum().backward()
    >>> a.grad                       # ψ(a) + ψ(a - 1/2)
    tensor([0.4593, 1.6259], dtype=difflab.float64)
    """
    x = _operand(input)
    if isinstance(p, bool) or not isinstance(p, int) or p < 1:
        raise ValueError(f"multigammaln needs a dimension p >= 1 (an integer), got {p!r}")
    values = getattr(x, "primal", x)  # (a dual number's values)
    numbers = isinstance(values, (int, float)) or getattr(
        getattr(values, "dtype", None), "kind", "O") in "biuf"  # (not sympy's symbols)
    if numbers and bool(F.any(F.le(values, (p - 1) / 2.0))):
        raise ValueError(f"multigammaln of dimension p = {p} needs every element of input "
                         f"greater than (p - 1)/2 = {(p - 1) / 2}")
    total = F.lgamma(x)
    for j in range(1, p):
        total = total + F.lgamma(x - 0.5 * j)
    return total + p * (p - 1) / 4.0 * math.log(math.pi)
