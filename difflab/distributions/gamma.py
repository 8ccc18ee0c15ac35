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

import typing

from difflab import functions as F
from difflab.autograd.engine import apply
from difflab.distributions import constraints
from difflab.distributions.distribution import Distribution, as_parameter, broadcast_all
from difflab.random import Draw
from difflab.tensor import Tensor

__all__ = ["Beta", "Dirichlet", "Gamma"]


def _standard_gamma(concentration: Tensor, shape: tuple) -> Tensor:
    """Gamma(concentration, 1) draws of ``shape`` (no gradient)."""
    alpha = concentration.detach().expand(*shape)
    return apply(Draw, alpha, distribution="standard_gamma", shape=shape)


class Gamma(Distribution):
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
