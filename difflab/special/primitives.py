r"""The functions of ``difflab.special`` that are registry primitives (and multigammaln).

The primitives are ``lgamma``, ``digamma``, ``polygamma``, ``erf``, ``erfc``,
``erfinv``, ``erfcx``, ``i0``, ``i1``, ``i0e``, ``i1e``, ``bessel_j0`` and
``bessel_j1`` (:mod:`difflab.ops.special`); the functions here give them
PyTorch's names and signatures.
"""

from __future__ import annotations

import math
import typing

from difflab import creation as _creation
from difflab import functions as F
from difflab import tensor_arguments as _arguments

if typing.TYPE_CHECKING:
    from difflab.tensor import Tensor

__all__ = [
    "bessel_j0",
    "bessel_j1",
    "digamma",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "gammaln",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "multigammaln",
    "polygamma",
    "psi",
    "zeta",
    "gammainc",
    "gammaincc",
    "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
]


def _tensor(x: typing.Any) -> typing.Any:
    """A number or a list becomes a tensor; tensors, dual numbers and symbols pass."""
    return _arguments.tensor_of(x) if isinstance(x, (int, float, list, tuple)) else x

# ----------------------------------------------------------------- the primitives


def gammaln(input: Tensor) -> Tensor:  # noqa: A002
    """Logarithm of the absolute value of the gamma function, log|Γ(x)|, elementwise.

    The primitive ``lgamma``; its derivative is the digamma function ψ(x).

    Parameters
    ----------
    input : Tensor
        Any real values; +inf at 0, -1, -2, ... (the poles of Γ).

    Returns
    -------
    Tensor
        log|Γ(x)|.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([3.0], requires_grad=True)
    >>> y = dl.special.gammaln(x); y.backward()
    >>> print(f"{y.item():.6f} {x.grad.item():.6f}")      # log 2!, ψ(3) = 3/2 - γ
    0.693147 0.922784
    """
    return F.lgamma(_tensor(input))


def digamma(input: Tensor) -> Tensor:  # noqa: A002
    """The digamma function ψ(x) = d log Γ(x)/dx, elementwise (``psi`` is the same).

    Its derivative is the trigamma function ``polygamma(1, x)``.

    Parameters
    ----------
    input : Tensor
        Any real values; poles at 0, -1, -2, ...

    Returns
    -------
    Tensor
        ψ(x).

    Examples
    --------
    >>> import difflab as dl
    >>> print(f"{dl.special.digamma(dl.tensor(1.0)).item():.6f}")    # -γ (Euler's constant)
    -0.577216
    """
    return F.digamma(_tensor(input))


def psi(input: Tensor) -> Tensor:  # noqa: A002
    """The digamma function ψ(x): another name of :func:`digamma`.

    Parameters
    ----------
    input : Tensor
        Any real values.

    Returns
    -------
    Tensor
        ψ(x).

    Examples
    --------
    >>> import difflab as dl
    >>> print(f"{dl.special.psi(dl.tensor(2.0)).item():.6f}")    # 1 - γ
    0.422784
    """
    return F.digamma(_tensor(input))


def polygamma(n: int, input: Tensor) -> Tensor:  # noqa: A002
    """ψ⁽ⁿ⁾(x), the n-th derivative of the digamma function, elementwise.

    Parameters
    ----------
    n : int
        The order, n >= 0 (0 is digamma itself).  Not differentiated.
    input : Tensor
        Any real values.

    Returns
    -------
    Tensor
        ψ⁽ⁿ⁾(x); its derivative is ψ⁽ⁿ⁺¹⁾(x).

    Examples
    --------
    >>> import difflab as dl
    >>> print(f"{dl.special.polygamma(1, dl.tensor(1.0)).item():.6f}")    # π²/6
    1.644934
    """
    return F.polygamma(n, _tensor(input))


def multigammaln(input: Tensor, p: int) -> Tensor:  # noqa: A002
    """The multivariate log-gamma function of dimension p, elementwise.

    log Γₚ(a) = p(p - 1)/4 · log π + Σⱼ₌₀..ₚ₋₁ log Γ(a - j/2), defined for a > (p - 1)/2
    (the normalizer of the Wishart distribution).

    Parameters
    ----------
    input : Tensor
        The values a, each greater than (p - 1)/2.
    p : int
        The dimension, p >= 1.

    Returns
    -------
    Tensor
        log Γₚ(a), of the shape of ``input``.

    Raises
    ------
    ValueError
        If p < 1 or some a <= (p - 1)/2.

    Examples
    --------
    >>> import difflab as dl
    >>> print(f"{dl.special.multigammaln(dl.tensor(2.5), 1).item():.6f}")   # p = 1: log Γ(2.5)
    0.284683
    """
    x = _tensor(input)
    if isinstance(p, bool) or not isinstance(p, int) or p < 1:
        raise ValueError(f"multigammaln needs a dimension p >= 1 (an integer), got {p!r}")
    if bool(F.any(F.le(x.detach(), (p - 1) / 2.0))):
        raise ValueError(f"multigammaln of dimension p = {p} needs every element of input "
                         f"greater than (p - 1)/2 = {(p - 1) / 2}")
    shifts = _creation.arange(p, dtype=x.dtype) * 0.5
    terms = F.lgamma(x.unsqueeze(-1) - shifts)
    return terms.sum(dim=-1) + p * (p - 1) / 4.0 * math.log(math.pi)


def erf(input: Tensor) -> Tensor:  # noqa: A002
    """The error function erf(x) = 2/√π ∫₀ˣ exp(-t²) dt, elementwise.

    Parameters
    ----------
    input : Tensor
        Any real values.

    Returns
    -------
    Tensor
        erf(x), in (-1, 1).

    Examples
    --------
    >>> import difflab as dl
    >>> print(f"{dl.special.erf(dl.tensor(1.0)).item():.6f}")
    0.842701
    """
    return F.erf(_tensor(input))


def erfc(input: Tensor) -> Tensor:  # noqa: A002
    """The complementary error function erfc(x) = 1 - erf(x), accurate where erf(x) ≈ 1.

    Parameters
    ----------
    input : Tensor
        Any real values.

    Returns
    -------
    Tensor
        erfc(x), in (0, 2).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.special.erfc(dl.tensor([0.0, 10.0], dtype=dl.float64)).tolist()  # 1 - erf(10): 0
    [1.0, 2.08848758376...e-45]
    """
    return F.erfc(_tensor(input))


def erfcx(input: Tensor) -> Tensor:  # noqa: A002
    """The scaled complementary error function exp(x²) · erfc(x), elementwise.

    Finite where erfc(x) underflows (large x), which makes it the stable way to
    write the normal distribution's far tail.

    Parameters
    ----------
    input : Tensor
        Any real values (it overflows for x below about -26).

    Returns
    -------
    Tensor
        exp(x²) · erfc(x).

    Examples
    --------
    >>> import difflab as dl
    >>> print(f"{dl.special.erfcx(dl.tensor(30.0, dtype=dl.float64)).item():.6f}")  # ≈ 1/(x√π)
    0.018796
    """
    return F.erfcx(_tensor(input))


def erfinv(input: Tensor) -> Tensor:  # noqa: A002
    """The inverse error function: erf(erfinv(x)) = x for -1 < x < 1.

    Parameters
    ----------
    input : Tensor
        Values in [-1, 1] (±inf at ±1, NaN outside).

    Returns
    -------
    Tensor
        erfinv(x).

    Examples
    --------
    >>> import difflab as dl
    >>> print(f"{dl.special.erfinv(dl.special.erf(dl.tensor(0.3, dtype=dl.float64))).item():.12f}")
    0.300000000000
    """
    return F.erfinv(_tensor(input))


def i0(input: Tensor) -> Tensor:  # noqa: A002
    """The modified Bessel function of the first kind of order 0, I₀(x), elementwise.

    Parameters
    ----------
    input : Tensor
        Any real values.

    Returns
    -------
    Tensor
        I₀(x) >= 1; its derivative is I₁(x).

    Examples
    --------
    >>> import difflab as dl
    >>> print(f"{dl.special.i0(dl.tensor(1.0)).item():.6f}")
    1.266066
    """
    return F.i0(_tensor(input))


def i0e(input: Tensor) -> Tensor:  # noqa: A002
    """The exponentially scaled modified Bessel function of order 0, exp(-|x|) I₀(x).

    Parameters
    ----------
    input : Tensor
        Any real values (finite where I₀ itself overflows).

    Returns
    -------
    Tensor
        exp(-|x|) I₀(x).

    Examples
    --------
    >>> import difflab as dl
    >>> print(f"{dl.special.i0e(dl.tensor(1.0)).item():.6f}")
    0.465760
    """
    return F.i0e(_tensor(input))


def i1(input: Tensor) -> Tensor:  # noqa: A002
    """The modified Bessel function of the first kind of order 1, I₁(x), elementwise.

    Parameters
    ----------
    input : Tensor
        Any real values.

    Returns
    -------
    Tensor
        I₁(x); its derivative is I₀(x) - I₁(x)/x (1/2 at x = 0).

    Examples
    --------
    >>> import difflab as dl
    >>> print(f"{dl.special.i1(dl.tensor(1.0)).item():.6f}")
    0.565159
    """
    return F.i1(_tensor(input))


def i1e(input: Tensor) -> Tensor:  # noqa: A002
    """The exponentially scaled modified Bessel function of order 1, exp(-|x|) I₁(x).

    Parameters
    ----------
    input : Tensor
        Any real values.

    Returns
    -------
    Tensor
        exp(-|x|) I₁(x).

    Examples
    --------
    >>> import difflab as dl
    >>> print(f"{dl.special.i1e(dl.tensor(1.0)).item():.6f}")
    0.207910
    """
    return F.i1e(_tensor(input))


def bessel_j0(input: Tensor) -> Tensor:  # noqa: A002
    """The Bessel function of the first kind of order 0, J₀(x), elementwise.

    Parameters
    ----------
    input : Tensor
        Any real values.

    Returns
    -------
    Tensor
        J₀(x); its derivative is -J₁(x).

    Examples
    --------
    >>> import difflab as dl
    >>> print(f"{dl.special.bessel_j0(dl.tensor(1.0)).item():.6f}")
    0.765198
    """
    return F.bessel_j0(_tensor(input))


def bessel_j1(input: Tensor) -> Tensor:  # noqa: A002
    """The Bessel function of the first kind of order 1, J₁(x), elementwise.

    Parameters
    ----------
    input : Tensor
        Any real values.

    Returns
    -------
    Tensor
        J₁(x); its derivative is J₀(x) - J₁(x)/x (1/2 at x = 0).

    Examples
    --------
    >>> import difflab as dl
    >>> print(f"{dl.special.bessel_j1(dl.tensor(1.0)).item():.6f}")
    0.440051
    """
    return F.bessel_j1(_tensor(input))


def zeta(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The Hurwitz zeta function ζ(s, q) = Σₖ₌₀^∞ (k + q)^(-s), elementwise with broadcasting.

    Differentiable in q (∂ζ/∂q = -s ζ(s + 1, q)); a gradient in s is refused, as in
    PyTorch.

    Parameters
    ----------
    input : Tensor or float
        The exponent s > 1 (a constant).
    other : Tensor or float
        q > 0.

    Returns
    -------
    Tensor
        ζ(s, q); ζ(s, 1) is Riemann's zeta.

    Examples
    --------
    >>> import difflab as dl
    >>> print(f"{dl.special.zeta(2.0, dl.tensor(1.0, dtype=dl.float64)).item():.6f}")  # π²/6
    1.644934
    """
    return F.zeta(_tensor(input), _tensor(other))


def gammainc(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The regularized lower incomplete gamma function P(a, x) = γ(a, x) / Γ(a).

    The distribution function of Gamma(a, 1) at x; differentiable in x (its
    derivative is the gamma density), a gradient in a is refused, as in PyTorch.

    Parameters
    ----------
    input : Tensor or float
        a > 0 (a constant).
    other : Tensor or float
        x >= 0.

    Returns
    -------
    Tensor
        P(a, x) in [0, 1].

    Examples
    --------
    >>> import difflab as dl
    >>> print(f"{dl.special.gammainc(1.0, dl.tensor(1.0, dtype=dl.float64)).item():.6f}")
    0.632121
    """
    return F.gammainc(_tensor(input), _tensor(other))


def gammaincc(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x).

    Parameters
    ----------
    input : Tensor or float
        a > 0 (a constant).
    other : Tensor or float
        x >= 0.

    Returns
    -------
    Tensor
        Q(a, x) in [0, 1], accurate where P(a, x) is close to 1.

    Examples
    --------
    >>> import difflab as dl
    >>> print(f"{dl.special.gammaincc(1.0, dl.tensor(1.0, dtype=dl.float64)).item():.6f}")
    0.367879
    """
    return F.gammaincc(_tensor(input), _tensor(other))


def scaled_modified_bessel_k0(input: Tensor) -> Tensor:  # noqa: A002
    """The exponentially scaled modified Bessel function of the second kind, eˣ K₀(x).

    Parameters
    ----------
    input : Tensor
        x > 0 (+inf at 0, NaN below).

    Returns
    -------
    Tensor
        eˣ K₀(x); its derivative is eˣ K₀(x) - eˣ K₁(x).

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor(1.0, dtype=dl.float64)
    >>> print(f"{dl.special.scaled_modified_bessel_k0(x).item():.6f}")
    1.144463
    """
    return F.scaled_modified_bessel_k0(_tensor(input))


def scaled_modified_bessel_k1(input: Tensor) -> Tensor:  # noqa: A002
    """The exponentially scaled modified Bessel function of the second kind, eˣ K₁(x).

    Parameters
    ----------
    input : Tensor
        x > 0 (+inf at 0, NaN below).

    Returns
    -------
    Tensor
        eˣ K₁(x); its derivative is eˣ K₁(x) (1 - 1/x) - eˣ K₀(x).

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor(1.0, dtype=dl.float64)
    >>> print(f"{dl.special.scaled_modified_bessel_k1(x).item():.6f}")
    1.636153
    """
    return F.scaled_modified_bessel_k1(_tensor(input))
