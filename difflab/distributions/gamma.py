r"""The gamma family: Gamma, Beta, Dirichlet.

Their densities are written with ``lgamma`` and their entropies with
``digamma``, so gradients of ``log_prob`` and ``entropy`` reach every
parameter.  Draws come from NumPy's gamma sampler (through the ``draw``
primitive and difflab's generator); they are *not* reparameterized here
(``has_rsample = False``: PyTorch differentiates them implicitly, which
needs the derivative of the gamma distribution function in its shape, not
yet a primitive).  Beta and Dirichlet normalize independent gamma draws.

>>> import difflab as dl
>>> from difflab.distributions import Gamma
>>> Gamma(2.0, 4.0).mean.item()
0.5
"""

from __future__ import annotations

import math
import typing

from difflab import functions as F
from difflab.autograd.engine import apply
from difflab.distributions import constraints
from difflab.distributions.continuous import _standard
from difflab.distributions.distribution import (
    Distribution,
    ExponentialFamily,
    as_parameter,
    broadcast_all,
)
from difflab.random import Draw
from difflab.tensor import Tensor

__all__ = ["Beta", "Chi2", "Dirichlet", "FisherSnedecor", "Gamma", "InverseGamma", "StudentT"]


def _standard_gamma(concentration: Tensor, shape: tuple) -> Tensor:
    """Gamma(concentration, 1) draws of ``shape`` (no gradient)."""
    alpha = concentration.detach().expand(*shape)
    return apply(Draw, alpha, distribution="standard_gamma", shape=shape)


class Gamma(ExponentialFamily):
    """The gamma distribution: density βᵅ x^(α-1) e^(-βx) / Γ(α) on x > 0.

    Parameters
    ----------
    concentration : Tensor or float
        The shape α > 0.
    rate : Tensor or float
        The rate β > 0 (the mean is α/β).
    validate_args : bool, optional
        Check the parameters and values.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import Gamma
    >>> round(Gamma(2.0, 1.0).log_prob(dl.tensor(1.0)).item(), 6)     # log e⁻¹
    -1.0
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive

    def __init__(self, concentration: typing.Any, rate: typing.Any,
                 validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.rate.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return F.clamp((self.concentration - 1) / self.rate, min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate ** 2

    def sample(self, sample_shape: typing.Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        return _standard_gamma(self.concentration, shape) / self.rate.detach()

    def log_prob(self, value: typing.Any) -> Tensor:
        value = self._validate_sample(value)
        a, b = self.concentration, self.rate
        return a * F.log(b) + (a - 1) * F.log(value) - b * value - F.lgamma(a)

    def entropy(self) -> Tensor:
        a = self.concentration
        return a - F.log(self.rate) + F.lgamma(a) + (1.0 - a) * F.digamma(a)

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return F.lgamma(x + 1) + (x + 1) * F.log(-1.0 / y)


class Beta(Distribution):
    """The beta distribution on (0, 1): density x^(α-1) (1-x)^(β-1) / B(α, β).

    Parameters
    ----------
    concentration1 : Tensor or float
        α > 0.
    concentration0 : Tensor or float
        β > 0 (the mean is α / (α + β)).
    validate_args : bool, optional
        Check the parameters and values.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import Beta
    >>> d = Beta(2.0, 2.0)
    >>> d.mean.item(), round(d.log_prob(dl.tensor(0.5)).item(), 6)     # log 1.5
    (0.5, 0.405465)
    """

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval

    def __init__(self, concentration1: typing.Any, concentration0: typing.Any,
                 validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        super().__init__(self.concentration1.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        return (a - 1) / (a + b - 2)

    @property
    def variance(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        total = a + b
        return a * b / (total ** 2 * (total + 1))

    def sample(self, sample_shape: typing.Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        x = _standard_gamma(self.concentration1, shape)
        y = _standard_gamma(self.concentration0, shape)
        return x / (x + y)

    def _log_beta(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        return F.lgamma(a) + F.lgamma(b) - F.lgamma(a + b)

    def log_prob(self, value: typing.Any) -> Tensor:
        value = self._validate_sample(value)
        a, b = self.concentration1, self.concentration0
        return (a - 1) * F.log(value) + (b - 1) * F.log1p(-value) - self._log_beta()

    def entropy(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        return (self._log_beta() - (a - 1) * F.digamma(a) - (b - 1) * F.digamma(b)
                + (a + b - 2) * F.digamma(a + b))


class Dirichlet(Distribution):
    """The Dirichlet distribution on the probability simplex (event shape (K,)).

    Parameters
    ----------
    concentration : Tensor
        α > 0 along the last dimension (K >= 1 categories).
    validate_args : bool, optional
        Check the parameters and values.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import Dirichlet
    >>> d = Dirichlet(dl.tensor([1.0, 1.0, 2.0]))
    >>> d.mean.tolist(), round(d.log_prob(dl.tensor([0.25, 0.25, 0.5])).item(), 6)
    ([0.25, 0.25, 0.5], 1.098612)
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex

    def __init__(self, concentration: typing.Any, validate_args: bool | None = None) -> None:
        self.concentration = as_parameter(concentration)
        if self.concentration.dim() < 1:
            raise ValueError("Dirichlet's concentration needs at least one dimension (the "
                             "categories), got a number")
        shape = self.concentration.shape
        super().__init__(shape[:-1], shape[-1:], validate_args)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Tensor:
        a = self.concentration
        return (a - 1) / (a.sum(-1, keepdim=True) - a.shape[-1])

    @property
    def variance(self) -> Tensor:
        a = self.concentration
        total = a.sum(-1, keepdim=True)
        return a * (total - a) / (total ** 2 * (total + 1))

    def sample(self, sample_shape: typing.Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        g = _standard_gamma(self.concentration, shape)
        return g / g.sum(-1, keepdim=True)

    def log_prob(self, value: typing.Any) -> Tensor:
        value = self._validate_sample(value)
        a = self.concentration
        return (((a - 1) * F.log(value)).sum(-1) + F.lgamma(a.sum(-1))
                - F.lgamma(a).sum(-1))

    def entropy(self) -> Tensor:
        a = self.concentration
        k = a.shape[-1]
        total = a.sum(-1)
        log_b = F.lgamma(a).sum(-1) - F.lgamma(total)
        return log_b + (total - k) * F.digamma(total) - ((a - 1) * F.digamma(a)).sum(-1)


class Chi2(Gamma):
    """The chi-squared distribution with ``df`` degrees of freedom: Gamma(df/2, 1/2).

    Parameters
    ----------
    df : Tensor or float
        The degrees of freedom, > 0.
    validate_args : bool, optional
        Check the parameters and values.

    Examples
    --------
    >>> from difflab.distributions import Chi2
    >>> d = Chi2(4.0)
    >>> d.mean.item(), d.variance.item()          # df, 2 df
    (4.0, 8.0)
    """

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df: typing.Any, validate_args: bool | None = None) -> None:
        (df,) = broadcast_all(df)
        super().__init__(0.5 * df, F.ones_like(df.detach()) * 0.5, validate_args)

    def _given(self) -> tuple[str, ...]:
        return ("df",)

    @property
    def df(self) -> Tensor:
        """The degrees of freedom, 2 × concentration."""
        return self.concentration * 2


class InverseGamma(Distribution):
    """1/X for X ~ Gamma(concentration, rate): density βᵅ x^(-α-1) e^(-β/x) / Γ(α).

    Parameters
    ----------
    concentration : Tensor or float
        α > 0.
    rate : Tensor or float
        β > 0 (the scale of the inverse gamma).
    validate_args : bool, optional
        Check the parameters and values.

    Examples
    --------
    >>> from difflab.distributions import InverseGamma
    >>> InverseGamma(3.0, 2.0).mean.item()          # β / (α - 1)
    1.0
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive

    def __init__(self, concentration: typing.Any, rate: typing.Any,
                 validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.rate.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        a = self.concentration
        return F.where(a > 1, self.rate / F.clamp(a - 1, min=1e-30), math.inf)

    @property
    def mode(self) -> Tensor:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Tensor:
        a = F.clamp(self.concentration, min=2.0 + 1e-12)
        value = self.rate ** 2 / ((a - 1) ** 2 * (a - 2))
        return F.where(self.concentration > 2, value, math.inf)

    def sample(self, sample_shape: typing.Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        return self.rate.detach() / _standard_gamma(self.concentration, shape)

    def log_prob(self, value: typing.Any) -> Tensor:
        x = self._validate_sample(value)
        a, b = self.concentration, self.rate
        return a * F.log(b) - F.lgamma(a) - (a + 1) * F.log(x) - b / x

    def entropy(self) -> Tensor:
        a = self.concentration
        return a + F.log(self.rate) + F.lgamma(a) - (1 + a) * F.digamma(a)


class StudentT(Distribution):
    """Student's t distribution with ``df`` degrees of freedom, location and scale.

    Parameters
    ----------
    df : Tensor or float
        ν > 0.
    loc : Tensor or float, optional
        μ (default 0).
    scale : Tensor or float, optional
        σ > 0 (default 1).
    validate_args : bool, optional
        Check the parameters and values.

    Notes
    -----
    Drawn as μ + σ Z / √(G/ν) with Z normal and G ~ χ²(ν): sample only.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import StudentT
    >>> round(StudentT(1.0).log_prob(dl.tensor(0.0)).item(), 6)     # ν = 1: Cauchy, -log π
    -1.14473
    """

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real

    def __init__(self, df: typing.Any, loc: typing.Any = 0.0, scale: typing.Any = 1.0,
                 validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        super().__init__(self.df.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return F.where(self.df > 1, self.loc, math.nan)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        nu = F.clamp(self.df, min=2.0 + 1e-12)
        value = self.scale ** 2 * nu / (nu - 2)
        return F.where(self.df > 2, value, F.where(self.df > 1, math.inf, math.nan))

    def sample(self, sample_shape: typing.Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        chi2 = 2.0 * _standard_gamma(0.5 * self.df, shape)
        z = _standard(self, sample_shape, "normal", self.df)
        return (self.loc + self.scale * z * F.sqrt(self.df / chi2)).detach()

    def log_prob(self, value: typing.Any) -> Tensor:
        z = (self._validate_sample(value) - self.loc) / self.scale
        nu = self.df
        return (F.lgamma((nu + 1) / 2) - F.lgamma(nu / 2) - 0.5 * F.log(nu * math.pi)
                - F.log(self.scale) - (nu + 1) / 2 * F.log1p(z * z / nu))

    def entropy(self) -> Tensor:
        nu = self.df
        log_beta = F.lgamma(nu / 2) + 0.5 * math.log(math.pi) - F.lgamma((nu + 1) / 2)
        return (F.log(self.scale) + (nu + 1) / 2 * (F.digamma((nu + 1) / 2) - F.digamma(nu / 2))
                + 0.5 * F.log(nu) + log_beta)



class FisherSnedecor(Distribution):
    """The F distribution: (X₁/d₁)/(X₂/d₂) for independent χ²(d₁) and χ²(d₂).

    Parameters
    ----------
    df1, df2 : Tensor or float
        The degrees of freedom d₁, d₂ > 0.
    validate_args : bool, optional
        Check the parameters and values.

    Examples
    --------
    >>> from difflab.distributions import FisherSnedecor
    >>> FisherSnedecor(4.0, 6.0).mean.item()        # d₂ / (d₂ - 2)
    1.5
    """

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive

    def __init__(self, df1: typing.Any, df2: typing.Any,
                 validate_args: bool | None = None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        super().__init__(self.df1.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        d2 = F.clamp(self.df2, min=2.0 + 1e-12)
        return F.where(self.df2 > 2, d2 / (d2 - 2), math.nan)

    @property
    def variance(self) -> Tensor:
        d1, d2 = self.df1, F.clamp(self.df2, min=4.0 + 1e-12)
        value = 2 * d2 ** 2 * (d1 + d2 - 2) / (d1 * (d2 - 2) ** 2 * (d2 - 4))
        return F.where(self.df2 > 4, value, math.nan)

    def sample(self, sample_shape: typing.Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        x1 = _standard_gamma(0.5 * self.df1, shape) / self.df1.detach()
        x2 = _standard_gamma(0.5 * self.df2, shape) / self.df2.detach()
        return x1 / x2

    def log_prob(self, value: typing.Any) -> Tensor:
        x = self._validate_sample(value)
        d1, d2 = self.df1, self.df2
        log_beta = F.lgamma(d1 / 2) + F.lgamma(d2 / 2) - F.lgamma((d1 + d2) / 2)
        return (0.5 * d1 * F.log(d1 / d2) + (0.5 * d1 - 1) * F.log(x)
                - 0.5 * (d1 + d2) * F.log1p(d1 * x / d2) - log_beta)
