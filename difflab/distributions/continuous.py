r"""Distributions of one real number: Normal, LogNormal, Uniform, Exponential, Laplace.

Each draws by reparameterization (``rsample``): a standard draw ε (normal or
uniform, from difflab's generator, so ``manual_seed`` repeats it) pushed
through a differentiable map of the parameters, so pathwise gradients reach
them.  Every formula is a composite of the registry's primitives.

>>> import difflab as dl
>>> from difflab.distributions import Normal
>>> round(Normal(0.0, 1.0).log_prob(dl.tensor(0.0)).item(), 6)   # -log √(2π)
-0.918939
"""

from __future__ import annotations

import math
import typing

from difflab import creation as _creation
from difflab import functions as F
from difflab.distributions import constraints
from difflab.distributions.distribution import Distribution, ExponentialFamily, broadcast_all
from difflab.dtype_info import finfo
from difflab.tensor import Tensor

__all__ = ["Exponential", "Laplace", "LogNormal", "Normal", "Uniform"]

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _standard(d: Distribution, sample_shape: typing.Any, kind: str, like: Tensor) -> Tensor:
    """ε of the sample's shape: standard normal (``kind='normal'``) or uniform in [0, 1)."""
    shape = tuple(d._extended_shape(sample_shape))
    draw = _creation.randn if kind == "normal" else _creation.rand
    return draw(*shape, dtype=like.dtype, device=like.device) if shape else draw(
        (), dtype=like.dtype, device=like.device)


class Normal(ExponentialFamily):
    """The normal (Gaussian) distribution N(loc, scale²).

    Parameters
    ----------
    loc : Tensor or float
        The mean μ.
    scale : Tensor or float
        The standard deviation σ > 0.
    validate_args : bool, optional
        Check the parameters and values (see :class:`Distribution`).

    Notes
    -----
    rsample: x = μ + σ ε with ε ~ N(0, 1), so ∂x/∂μ = 1 and ∂x/∂σ = ε.
    log p(x) = -(x - μ)²/(2σ²) - log σ - log √(2π); entropy ½ + log(σ √(2π)).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import Normal
    >>> mu = dl.tensor(1.0, requires_grad=True)
    >>> dl.manual_seed(0); x = Normal(mu, 2.0).rsample((1000,))   # doctest: +ELLIPSIS
    <difflab.Generator ...>
    >>> x.mean().backward(); round(mu.grad.item(), 5)        # ∂x/∂μ = 1 for every draw
    1.0
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: typing.Any, scale: typing.Any,
                 validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.scale ** 2

    def rsample(self, sample_shape: typing.Any = ()) -> Tensor:
        return self.loc + self.scale * _standard(self, sample_shape, "normal", self.loc)

    def log_prob(self, value: typing.Any) -> Tensor:
        value = self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -0.5 * z * z - F.log(self.scale) - _LOG_SQRT_2PI

    def cdf(self, value: typing.Any) -> Tensor:
        value = self._validate_sample(value)
        return 0.5 * F.erfc((self.loc - value) / (self.scale * math.sqrt(2.0)))

    def icdf(self, value: typing.Any) -> Tensor:
        return self.loc + self.scale * math.sqrt(2.0) * F.erfinv(2.0 * value - 1.0)

    def entropy(self) -> Tensor:
        return 0.5 + _LOG_SQRT_2PI + F.log(self.scale)

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        return (self.loc / self.scale ** 2, -0.5 / self.scale ** 2)

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return -0.25 * x * x / y + 0.5 * F.log(-math.pi / y)


class LogNormal(Distribution):
    """The log-normal distribution: exp(X) for X ~ N(loc, scale²).

    Parameters
    ----------
    loc : Tensor or float
        The mean of log X.
    scale : Tensor or float
        The standard deviation of log X, > 0.
    validate_args : bool, optional
        Check the parameters and values.

    Notes
    -----
    PyTorch defines it as ``TransformedDistribution(Normal(loc, scale), [ExpTransform()])``;
    this class writes the same density directly, log p(y) = log N(log y; μ, σ²) - log y
    (the change of variables with log|d eˣ/dx| = x), and adds the closed-form mean,
    mode, variance and entropy, which a general transformed distribution lacks.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import LogNormal, Normal, TransformedDistribution
    >>> from difflab.distributions.transforms import ExpTransform
    >>> round(LogNormal(0.0, 1.0).mean.item(), 6)      # exp(μ + σ²/2)
    1.648721
    >>> pushed = TransformedDistribution(Normal(0.0, 1.0), [ExpTransform()])
    >>> y = dl.tensor(2.0)
    >>> abs(pushed.log_prob(y).item() - LogNormal(0.0, 1.0).log_prob(y).item()) < 1e-6
    True
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc: typing.Any, scale: typing.Any,
                 validate_args: bool | None = None) -> None:
        self.base_dist = Normal(loc, scale, validate_args=validate_args)
        self.loc, self.scale = self.base_dist.loc, self.base_dist.scale
        super().__init__(self.loc.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return F.exp(self.loc + self.scale ** 2 / 2)

    @property
    def mode(self) -> Tensor:
        return F.exp(self.loc - self.scale ** 2)

    @property
    def variance(self) -> Tensor:
        s2 = self.scale ** 2
        return F.expm1(s2) * F.exp(2 * self.loc + s2)

    def rsample(self, sample_shape: typing.Any = ()) -> Tensor:
        return F.exp(self.base_dist.rsample(sample_shape))

    def log_prob(self, value: typing.Any) -> Tensor:
        value = self._validate_sample(value)
        log_value = F.log(value)
        return self.base_dist.log_prob(log_value) - log_value

    def cdf(self, value: typing.Any) -> Tensor:
        return self.base_dist.cdf(F.log(self._validate_sample(value)))

    def icdf(self, value: typing.Any) -> Tensor:
        return F.exp(self.base_dist.icdf(value))

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() + self.loc


class Uniform(Distribution):
    """The uniform distribution on [low, high).

    Parameters
    ----------
    low, high : Tensor or float
        The interval, low < high.
    validate_args : bool, optional
        Check the parameters and values.

    Attributes
    ----------
    support : Constraint
        ``constraints.interval(low, high)``, its bounds the parameters (PyTorch's):
        ``support.check(x)`` is True where low <= x <= high.  With ``validate_args``
        a value outside it is an error; ``log_prob(high)`` is -inf (the density's
        interval is half-open).  On the class it is a dependent constraint.

    Notes
    -----
    rsample: x = low + (high - low) u with u ~ U[0, 1).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import Uniform
    >>> d = Uniform(0.0, 4.0)
    >>> d.mean.item(), d.variance.item(), d.cdf(1.0).item()
    (2.0, 1.3333333730697632, 0.25)
    >>> d.support
    Interval(lower_bound=0.0, upper_bound=4.0)
    >>> d.support.check(dl.tensor([-1.0, 0.0, 4.0, 5.0])).tolist()
    [False, True, True, False]
    """

    arg_constraints = {"low": constraints.dependent, "high": constraints.dependent}
    has_rsample = True

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.interval(self.low, self.high)

    def __init__(self, low: typing.Any, high: typing.Any,
                 validate_args: bool | None = None) -> None:
        self.low, self.high = broadcast_all(low, high)
        super().__init__(self.low.shape, (), validate_args)
        if self._validate_args and not bool(F.all(self.low < self.high)):
            raise ValueError(f"Uniform needs low < high everywhere, got low={self.low} and "
                             f"high={self.high}")

    @property
    def mean(self) -> Tensor:
        return (self.low + self.high) / 2

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low) ** 2 / 12

    def rsample(self, sample_shape: typing.Any = ()) -> Tensor:
        u = _standard(self, sample_shape, "uniform", self.low)
        return self.low + (self.high - self.low) * u

    def log_prob(self, value: typing.Any) -> Tensor:
        value = self._validate_sample(value)
        inside = (value >= self.low) & (value < self.high)
        return F.where(inside, -F.log(self.high - self.low), -math.inf)

    def cdf(self, value: typing.Any) -> Tensor:
        value = self._validate_sample(value)
        return F.clamp((value - self.low) / (self.high - self.low), 0.0, 1.0)

    def icdf(self, value: typing.Any) -> Tensor:
        return self.low + value * (self.high - self.low)

    def entropy(self) -> Tensor:
        return F.log(self.high - self.low)


class Exponential(ExponentialFamily):
    """The exponential distribution of rate λ: density λ e^(-λx) on x >= 0.

    Parameters
    ----------
    rate : Tensor or float
        λ > 0 (the mean is 1/λ).
    validate_args : bool, optional
        Check the parameters and values.

    Notes
    -----
    rsample: x = -log(1 - u)/λ with u ~ U[0, 1) (the inverse distribution function).

    Examples
    --------
    >>> from difflab.distributions import Exponential
    >>> d = Exponential(2.0)
    >>> d.mean.item(), round(d.cdf(0.5).item(), 6)
    (0.5, 0.632121)
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate: typing.Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.rate

    @property
    def mode(self) -> Tensor:
        return F.zeros_like(self.rate)

    @property
    def variance(self) -> Tensor:
        return self.rate ** -2

    def rsample(self, sample_shape: typing.Any = ()) -> Tensor:
        u = _standard(self, sample_shape, "uniform", self.rate)
        return -F.log1p(-u) / self.rate

    def log_prob(self, value: typing.Any) -> Tensor:
        value = self._validate_sample(value)
        return F.log(self.rate) - self.rate * value

    def cdf(self, value: typing.Any) -> Tensor:
        value = self._validate_sample(value)
        return -F.expm1(-self.rate * value)

    def icdf(self, value: typing.Any) -> Tensor:
        return -F.log1p(-value) / self.rate

    def entropy(self) -> Tensor:
        return 1.0 - F.log(self.rate)

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        return (-self.rate,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return -F.log(-x)


class Laplace(Distribution):
    """The Laplace distribution: density exp(-|x - μ|/b)/(2b).

    Parameters
    ----------
    loc : Tensor or float
        The location μ.
    scale : Tensor or float
        The scale b > 0.
    validate_args : bool, optional
        Check the parameters and values.

    Notes
    -----
    rsample: x = μ - b sign(u) log(1 - |u|) with u ~ U(-1, 1).

    Examples
    --------
    >>> from difflab.distributions import Laplace
    >>> d = Laplace(0.0, 1.0)
    >>> d.variance.item(), round(d.entropy().item(), 6)      # 2b², 1 + log 2b
    (2.0, 1.693147)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: typing.Any, scale: typing.Any,
                 validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale ** 2

    def rsample(self, sample_shape: typing.Any = ()) -> Tensor:
        # u in (-1, 1): the smallest step above -1 keeps log(1 - |u|) finite
        tiny = finfo(self.loc.dtype).eps
        u = _standard(self, sample_shape, "uniform", self.loc) * (2.0 - tiny) - (1.0 - tiny)
        return self.loc - self.scale * F.sign(u) * F.log1p(-F.abs(u))

    def log_prob(self, value: typing.Any) -> Tensor:
        value = self._validate_sample(value)
        return -F.log(2 * self.scale) - F.abs(value - self.loc) / self.scale

    def cdf(self, value: typing.Any) -> Tensor:
        value = self._validate_sample(value)
        d = value - self.loc
        return 0.5 - 0.5 * F.sign(d) * F.expm1(-F.abs(d) / self.scale)

    def icdf(self, value: typing.Any) -> Tensor:
        term = value - 0.5
        return self.loc - self.scale * F.sign(term) * F.log1p(-2 * F.abs(term))

    def entropy(self) -> Tensor:
        return 1 + F.log(2 * self.scale)
