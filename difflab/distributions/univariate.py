r"""More reparameterized distributions of one number: Cauchy, HalfNormal, HalfCauchy, Gumbel,
Pareto, Weibull, Kumaraswamy.

Each ``rsample`` is its inverse distribution function (``icdf``) at a
uniform draw u, a differentiable map of the parameters.

>>> from difflab.distributions import Gumbel
>>> round(Gumbel(0.0, 1.0).mean.item(), 6)      # Euler's γ
0.577216
"""

from __future__ import annotations

import math
import typing

from difflab import functions as F
from difflab.distributions import constraints
from difflab.distributions.continuous import Normal, _standard
from difflab.distributions.distribution import Distribution, as_parameter, broadcast_all
from difflab.dtype_info import finfo
from difflab.tensor import Tensor

__all__ = ["Cauchy", "GeneralizedPareto", "Gumbel", "HalfCauchy", "HalfNormal", "Kumaraswamy",
           "Pareto", "VonMises", "Weibull"]

_EULER = 0.5772156649015329


def _open_uniform(d: Distribution, sample_shape: typing.Any, like: Tensor) -> Tensor:
    """u in (0, 1): the uniform draw moved off 0, where logarithms would be infinite."""
    tiny = finfo(like.dtype).tiny
    return F.clamp(_standard(d, sample_shape, "uniform", like), min=tiny)


class _ByInverse(Distribution):
    """A distribution whose rsample is icdf(u) for a uniform u."""

    has_rsample = True

    def rsample(self, sample_shape: typing.Any = ()) -> Tensor:
        first = getattr(self, self._given()[0])
        return self.icdf(_open_uniform(self, sample_shape, first))


class Cauchy(_ByInverse):
    """The Cauchy distribution: density 1 / (π b (1 + ((x - μ)/b)²)); no mean, no variance.

    Parameters
    ----------
    loc : Tensor or float
        The median μ.
    scale : Tensor or float
        The half width b > 0.
    validate_args : bool, optional
        Check the parameters and values.

    Examples
    --------
    >>> from difflab.distributions import Cauchy
    >>> d = Cauchy(0.0, 1.0)
    >>> d.cdf(1.0).item(), round(d.entropy().item(), 6)          # log 4π
    (0.75, 2.531024)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc: typing.Any, scale: typing.Any,
                 validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc * math.nan

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return self.scale * 0.0 + math.inf

    def log_prob(self, value: typing.Any) -> Tensor:
        z = (self._validate_sample(value) - self.loc) / self.scale
        return -math.log(math.pi) - F.log(self.scale) - F.log1p(z * z)

    def cdf(self, value: typing.Any) -> Tensor:
        return F.atan((self._validate_sample(value) - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value: typing.Any) -> Tensor:
        return self.loc + self.scale * F.tan(math.pi * (value - 0.5))

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + F.log(self.scale)


class HalfNormal(_ByInverse):
    """|X| for X ~ N(0, scale²): density √(2/π)/σ · exp(-x²/(2σ²)) on x >= 0.

    Parameters
    ----------
    scale : Tensor or float
        σ > 0.
    validate_args : bool, optional
        Check the parameters and values.

    Examples
    --------
    >>> from difflab.distributions import HalfNormal
    >>> round(HalfNormal(1.0).mean.item(), 6)        # √(2/π)
    0.797885
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative

    def __init__(self, scale: typing.Any, validate_args: bool | None = None) -> None:
        (self.scale,) = broadcast_all(scale)
        self.base_dist = Normal(0.0 * self.scale, self.scale, validate_args=False)
        super().__init__(self.scale.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self) -> Tensor:
        return 0.0 * self.scale

    @property
    def variance(self) -> Tensor:
        return self.scale ** 2 * (1 - 2 / math.pi)

    def log_prob(self, value: typing.Any) -> Tensor:
        return self.base_dist.log_prob(self._validate_sample(value)) + math.log(2)

    def cdf(self, value: typing.Any) -> Tensor:
        return F.erf(self._validate_sample(value) / (self.scale * math.sqrt(2)))

    def icdf(self, value: typing.Any) -> Tensor:
        return self.scale * math.sqrt(2) * F.erfinv(value)

    def entropy(self) -> Tensor:
        return 0.5 * math.log(math.pi / 2) + F.log(self.scale) + 0.5


class HalfCauchy(_ByInverse):
    """|X| for X ~ Cauchy(0, scale): density 2 / (π b (1 + (x/b)²)) on x >= 0.

    Parameters
    ----------
    scale : Tensor or float
        b > 0.
    validate_args : bool, optional
        Check the parameters and values.

    Examples
    --------
    >>> from difflab.distributions import HalfCauchy
    >>> HalfCauchy(1.0).cdf(1.0).item()
    0.5
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative

    def __init__(self, scale: typing.Any, validate_args: bool | None = None) -> None:
        (self.scale,) = broadcast_all(scale)
        super().__init__(self.scale.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.scale * 0.0 + math.inf

    @property
    def mode(self) -> Tensor:
        return 0.0 * self.scale

    @property
    def variance(self) -> Tensor:
        return self.scale * 0.0 + math.inf

    def log_prob(self, value: typing.Any) -> Tensor:
        z = self._validate_sample(value) / self.scale
        return math.log(2 / math.pi) - F.log(self.scale) - F.log1p(z * z)

    def cdf(self, value: typing.Any) -> Tensor:
        return 2 / math.pi * F.atan(self._validate_sample(value) / self.scale)

    def icdf(self, value: typing.Any) -> Tensor:
        return self.scale * F.tan(math.pi / 2 * value)

    def entropy(self) -> Tensor:
        return math.log(2 * math.pi) + F.log(self.scale)


class Gumbel(_ByInverse):
    """The Gumbel (extreme value) distribution: cdf exp(-exp(-(x - μ)/β)).

    Parameters
    ----------
    loc : Tensor or float
        The location μ.
    scale : Tensor or float
        β > 0.
    validate_args : bool, optional
        Check the parameters and values.

    Examples
    --------
    >>> from difflab.distributions import Gumbel
    >>> round(Gumbel(0.0, 1.0).entropy().item(), 6)       # 1 + γ
    1.577216
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc: typing.Any, scale: typing.Any,
                 validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * _EULER

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return (math.pi * self.scale) ** 2 / 6

    def log_prob(self, value: typing.Any) -> Tensor:
        z = (self._validate_sample(value) - self.loc) / self.scale
        return -(z + F.exp(-z)) - F.log(self.scale)

    def cdf(self, value: typing.Any) -> Tensor:
        return F.exp(-F.exp(-(self._validate_sample(value) - self.loc) / self.scale))

    def icdf(self, value: typing.Any) -> Tensor:
        return self.loc - self.scale * F.log(-F.log(value))

    def entropy(self) -> Tensor:
        return F.log(self.scale) + 1 + _EULER


class Pareto(_ByInverse):
    """The Pareto distribution: density α xₘᵅ / x^(α+1) on x >= xₘ.

    Parameters
    ----------
    scale : Tensor or float
        The minimum xₘ > 0.
    alpha : Tensor or float
        The tail index α > 0.
    validate_args : bool, optional
        Check the parameters and values.

    Examples
    --------
    >>> from difflab.distributions import Pareto
    >>> Pareto(1.0, 3.0).mean.item()           # α xₘ / (α - 1)
    1.5
    """

    arg_constraints = {"scale": constraints.positive, "alpha": constraints.positive}

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.greater_than_eq(self.scale)

    def __init__(self, scale: typing.Any, alpha: typing.Any,
                 validate_args: bool | None = None) -> None:
        self.scale, self.alpha = broadcast_all(scale, alpha)
        super().__init__(self.scale.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        a = self.alpha
        return F.where(a > 1, a * self.scale / F.clamp(a - 1, min=1e-30), math.inf)

    @property
    def mode(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        a = self.alpha
        safe = F.clamp(a, min=2.0 + 1e-12)
        return F.where(a > 2, self.scale ** 2 * safe / ((safe - 1) ** 2 * (safe - 2)), math.inf)

    def _validate_sample(self, value: typing.Any) -> Tensor:
        value = super()._validate_sample(value)
        if self._validate_args and not bool(F.all(value >= self.scale)):
            raise ValueError(f"Expected value argument to be within the support [scale, inf) "
                             f"of Pareto, but found invalid values:\n{value}")
        return value

    def log_prob(self, value: typing.Any) -> Tensor:
        value = self._validate_sample(value)
        a = self.alpha
        return F.log(a) + a * F.log(self.scale) - (a + 1) * F.log(value)

    def cdf(self, value: typing.Any) -> Tensor:
        return 1 - (self.scale / self._validate_sample(value)) ** self.alpha

    def icdf(self, value: typing.Any) -> Tensor:
        return self.scale * F.exp(-F.log1p(-value) / self.alpha)

    def entropy(self) -> Tensor:
        return F.log(self.scale / self.alpha) + 1 / self.alpha + 1


class GeneralizedPareto(_ByInverse):
    r"""The generalized Pareto distribution: the law of exceedances over a high threshold.

    With z = (x - μ)/σ its survival function is (1 + ξz)^(-1/ξ) (e^(-z) at ξ = 0), on
    z >= 0, and for ξ < 0 only up to z = -1/ξ.  ξ = 0 is the exponential, ξ = -1 the
    uniform on [μ, μ + σ], ξ > 0 a Pareto tail (μ = σ/ξ: :class:`Pareto`).

    Parameters
    ----------
    loc : Tensor or float
        μ, the lower end.
    scale : Tensor or float
        σ > 0.
    concentration : Tensor or float
        ξ, the shape (the tail index; any real).
    validate_args : bool, optional
        Check the parameters, and that values lie in [μ, μ - σ/ξ] (ξ < 0) or [μ, ∞).

    Raises
    ------
    ValueError
        With ``validate_args``: a scale that is not positive, or a value outside the
        support.

    See Also
    --------
    difflab.distributions.Pareto : The Pareto distribution (ξ > 0).
    difflab.distributions.Exponential : The case ξ = 0.

    Notes
    -----
    .. math::

        \log p(x) = -\log\sigma - (1/\xi + 1)\,\log(1 + \xi z), \qquad
        F^{-1}(u) = \mu + \frac{\sigma}{\xi}\big((1 - u)^{-\xi} - 1\big),

    (-log σ - z and μ - σ log(1 - u) at ξ = 0, where |ξ| < 1e-8 counts as 0, as in
    PyTorch); ``rsample`` is F⁻¹(u) for a uniform u, reparameterized in all three
    parameters.  The mean μ + σ/(1 - ξ) exists for ξ < 1, the variance
    σ²/((1 - ξ)²(1 - 2ξ)) for ξ < 1/2 (NaN elsewhere); the entropy is log σ + ξ + 1.
    ``support`` is ``constraints.dependent`` (PyTorch's is an interval with tensor
    bounds); :attr:`upper` is its upper end.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import GeneralizedPareto
    >>> d = GeneralizedPareto(0.0, 1.0, dl.tensor([0.0, -1.0]))      # exponential, uniform
    >>> [round(v, 6) for v in d.cdf(dl.tensor(0.5)).tolist()]
    [0.393469, 0.5]
    >>> [round(v, 6) for v in d.log_prob(dl.tensor(0.5)).exp().tolist()]   # e^(-1/2), 1
    [0.606531, 1.0]
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.interval(self.loc, self.upper)  # (upper: ∞ unless ξ < 0)

    def __init__(self, loc: typing.Any, scale: typing.Any, concentration: typing.Any,
                 validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(self.loc.shape, (), validate_args)

    def _safe(self) -> tuple[Tensor, Tensor]:
        """(whether ξ counts as 0, ξ with those replaced by 1): both branches stay finite."""
        xi = self.concentration
        zero = F.abs(xi) < 1e-8
        return zero, F.where(zero, F.ones_like(xi), xi)

    @property
    def upper(self) -> Tensor:
        """The upper end of the support: μ - σ/ξ for ξ < 0, ∞ otherwise."""
        xi = self.concentration
        negative = xi < 0
        safe = F.where(negative, xi, -F.ones_like(xi))
        return F.where(negative, self.loc - self.scale / safe, math.inf)

    @property
    def mean(self) -> Tensor:
        xi = self.concentration
        valid = xi < 1
        safe = F.where(valid, xi, F.ones_like(xi) * 0.5)
        return F.where(valid, self.loc + self.scale / (1 - safe), math.nan)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        xi = self.concentration
        valid = xi < 0.5
        safe = F.where(valid, xi, F.ones_like(xi) * 0.25)
        return F.where(valid, self.scale ** 2 / ((1 - safe) ** 2 * (1 - 2 * safe)), math.nan)

    def _validate_sample(self, value: typing.Any) -> Tensor:
        value = super()._validate_sample(value)
        if self._validate_args and not bool(F.all((value >= self.loc) & (value <= self.upper))):
            raise ValueError(f"Expected value argument to be within the support [loc, loc - "
                             f"scale/concentration] (concentration < 0) or [loc, inf) of "
                             f"GeneralizedPareto, but found invalid values:\n{value}")
        return value

    def _log_survival(self, value: Tensor) -> Tensor:
        z = (value - self.loc) / self.scale
        zero, xi = self._safe()
        return F.where(zero, -z, -F.log1p(xi * z) / xi)

    def log_prob(self, value: typing.Any) -> Tensor:
        value = self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, xi = self._safe()
        power = 1 / xi + 1                     # (0 at ξ = -1: the uniform, flat)
        tail = F.where(power == 0, power, power * F.log1p(xi * z))
        return -F.log(self.scale) - F.where(zero, z, tail)

    def cdf(self, value: typing.Any) -> Tensor:
        return -F.expm1(self._log_survival(self._validate_sample(value)))

    def icdf(self, value: typing.Any) -> Tensor:
        zero, xi = self._safe()
        log_u = F.log1p(-as_parameter(value, self.loc))
        return F.where(zero, self.loc - self.scale * log_u,
                       self.loc + self.scale / xi * F.expm1(-xi * log_u))

    def entropy(self) -> Tensor:
        return F.log(self.scale) + self.concentration + 1


class Weibull(_ByInverse):
    """The Weibull distribution: cdf 1 - exp(-(x/λ)ᵏ) on x >= 0.

    Parameters
    ----------
    scale : Tensor or float
        λ > 0.
    concentration : Tensor or float
        The shape k > 0.
    validate_args : bool, optional
        Check the parameters and values.

    Examples
    --------
    >>> from difflab.distributions import Weibull
    >>> Weibull(2.0, 1.0).mean.item()          # k = 1: the exponential of mean λ
    2.0
    """

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.nonnegative

    def __init__(self, scale: typing.Any, concentration: typing.Any,
                 validate_args: bool | None = None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        super().__init__(self.scale.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.scale * F.exp(F.lgamma(1 + 1 / self.concentration))

    @property
    def mode(self) -> Tensor:
        k = self.concentration
        return self.scale * F.clamp((k - 1) / k, min=0.0) ** (1 / k)

    @property
    def variance(self) -> Tensor:
        k = self.concentration
        return self.scale ** 2 * (F.exp(F.lgamma(1 + 2 / k)) - F.exp(2 * F.lgamma(1 + 1 / k)))

    def log_prob(self, value: typing.Any) -> Tensor:
        z = self._validate_sample(value) / self.scale
        k = self.concentration
        return F.log(k / self.scale) + (k - 1) * F.log(z) - z ** k

    def cdf(self, value: typing.Any) -> Tensor:
        return -F.expm1(-(self._validate_sample(value) / self.scale) ** self.concentration)

    def icdf(self, value: typing.Any) -> Tensor:
        return self.scale * (-F.log1p(-value)) ** (1 / self.concentration)

    def entropy(self) -> Tensor:
        k = self.concentration
        return _EULER * (1 - 1 / k) + F.log(self.scale / k) + 1


class Kumaraswamy(_ByInverse):
    """The Kumaraswamy distribution on (0, 1): density a b x^(a-1) (1 - xᵃ)^(b-1).

    Like a Beta, but with a closed-form distribution function, so it draws
    by reparameterization.

    Parameters
    ----------
    concentration1 : Tensor or float
        a > 0.
    concentration0 : Tensor or float
        b > 0.
    validate_args : bool, optional
        Check the parameters and values.

    Examples
    --------
    >>> from difflab.distributions import Kumaraswamy
    >>> Kumaraswamy(1.0, 1.0).log_prob(0.3).item()      # a = b = 1: uniform
    0.0
    """

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval

    def __init__(self, concentration1: typing.Any, concentration0: typing.Any,
                 validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        super().__init__(self.concentration1.shape, (), validate_args)

    def _moment(self, n: int) -> Tensor:
        a, b = self.concentration1, self.concentration0
        return b * F.exp(F.lgamma(1 + n / a) + F.lgamma(b) - F.lgamma(1 + n / a + b))

    @property
    def mean(self) -> Tensor:
        return self._moment(1)

    @property
    def variance(self) -> Tensor:
        return self._moment(2) - self._moment(1) ** 2

    def log_prob(self, value: typing.Any) -> Tensor:
        x = self._validate_sample(value)
        a, b = self.concentration1, self.concentration0
        return F.log(a) + F.log(b) + (a - 1) * F.log(x) + (b - 1) * F.log1p(-(x ** a))

    def cdf(self, value: typing.Any) -> Tensor:
        x = self._validate_sample(value)
        return 1 - (1 - x ** self.concentration1) ** self.concentration0

    def icdf(self, value: typing.Any) -> Tensor:
        a, b = self.concentration1, self.concentration0
        return (-F.expm1(F.log1p(-value) / b)) ** (1 / a)

    def entropy(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        harmonic = F.digamma(b + 1) + _EULER  # H_b, the b-th harmonic number
        return (1 - 1 / b) + (1 - 1 / a) * harmonic - F.log(a * b)


class VonMises(Distribution):
    """The von Mises distribution of an angle: density exp(κ cos(x - μ)) / (2π I₀(κ)).

    Parameters
    ----------
    loc : Tensor or float
        The mean direction μ.
    concentration : Tensor or float
        κ > 0 (0 would be uniform on the circle; large κ: close to N(μ, 1/κ)).
    validate_args : bool, optional
        Check the parameters and values.

    Notes
    -----
    log I₀(κ) is written log i0e(κ) + κ, finite for any κ.  Draws use the
    rejection sampler of Best and Fisher (1979): each round draws for every
    element still rejected (rounds over the batch, never a loop over
    elements); sample only, as its acceptance step has no derivative.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import VonMises
    >>> d = VonMises(0.0, 2.0)
    >>> round(d.log_prob(dl.tensor(0.0)).item(), 6), round(d.variance.item(), 6)
    (-0.661871, 0.302225)
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.interval(-math.pi, math.pi)

    def __init__(self, loc: typing.Any, concentration: typing.Any,
                 validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        """The circular variance 1 - I₁(κ)/I₀(κ) (PyTorch's)."""
        k = self.concentration
        return 1 - F.i1e(k) / F.i0e(k)

    def log_prob(self, value: typing.Any) -> Tensor:
        x = self._validate_sample(value)
        k = self.concentration
        return k * F.cos(x - self.loc) - math.log(2 * math.pi) - (F.log(F.i0e(k)) + k)

    def sample(self, sample_shape: typing.Any = ()) -> Tensor:
        from difflab.autograd.grad_mode import no_grad
        from difflab.dtypes import float64

        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():  # (in float64, on the parameters' device)
            k = self.concentration.detach().expand(*shape).to(float64)
            tau = 1 + F.sqrt(1 + 4 * k * k)
            rho = (tau - F.sqrt(2 * tau)) / (2 * k)
            r = (1 + rho * rho) / (2 * rho)
            out = F.zeros_like(k)
            todo = F.ones_like(k) > 0
            while bool(F.any(todo)):  # each round: every element not yet accepted draws again
                u1, u2, u3 = (_standard(self, sample_shape, "uniform", self.loc).to(float64)
                              for _ in range(3))
                z = F.cos(math.pi * u1)
                f = (1 + r * z) / (r + z)
                c = k * (r - f)
                accept = todo & ((c * (2 - c) - u2 > 0) | (F.log(c / u2) + 1 - c >= 0))
                out = F.where(accept, F.sign(u3 - 0.5) * F.arccos(f), out)
                todo = todo & ~accept
            angle = self.loc.detach() + out.to(self.loc.dtype)
            return (angle + math.pi) % (2 * math.pi) - math.pi
