r"""Counting distributions: Geometric, NegativeBinomial, Multinomial.

Like the other discrete distributions they take ``probs`` or ``logits`` and
write their log probabilities with logits (``softplus``), finite where a
probability rounds to 0 or 1; they draw with ``sample`` only.

>>> import difflab as dl
>>> from difflab.distributions import Geometric
>>> Geometric(probs=0.5).log_prob(dl.tensor(2.0)).exp().item()     # (1 - p)² p
0.125
"""

from __future__ import annotations

import typing

from difflab import creation as _creation
from difflab import functions as F
from difflab.autograd.engine import apply
from difflab.autograd.grad_mode import no_grad
from difflab.distributions import constraints
from difflab.distributions.continuous import _standard
from difflab.distributions.discrete import Bernoulli, Categorical, _one_of
from difflab.distributions.distribution import Distribution, broadcast_all
from difflab.distributions.gamma import _standard_gamma
from difflab.dtype_info import finfo
from difflab.nn import functional as NF
from difflab.random import Draw
from difflab.tensor import Tensor

__all__ = ["Geometric", "Multinomial", "NegativeBinomial"]


class Geometric(Distribution):
    """The number of failures before the first success: P(k) = (1 - p)ᵏ p, k = 0, 1, ...

    Parameters
    ----------
    probs : Tensor or float, optional
        The success probability p in (0, 1].
    logits : Tensor or float, optional
        log(p / (1 - p)) (exactly one of probs and logits).
    validate_args : bool, optional
        Check the parameters and values.

    Examples
    --------
    >>> from difflab.distributions import Geometric
    >>> d = Geometric(probs=0.25)
    >>> d.mean.item(), d.variance.item()          # (1 - p)/p, (1 - p)/p²
    (3.0, 12.0)
    """

    arg_constraints = {"probs": constraints.interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs: typing.Any = None, logits: typing.Any = None,
                 validate_args: bool | None = None) -> None:
        self._param = _one_of(probs, logits, "Geometric")
        bernoulli = Bernoulli(probs, logits, validate_args=validate_args)
        self.probs, self.logits = bernoulli.probs, bernoulli.logits
        super().__init__(self.probs.shape, (), validate_args)

    def _given(self) -> tuple[str, ...]:
        return (self._param,)

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return F.zeros_like(self.probs)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape: typing.Any = ()) -> Tensor:
        with no_grad():  # k = floor(log u / log(1 - p)), the inverse of the cdf
            tiny = finfo(self.probs.dtype).tiny
            u = F.clamp(_standard(self, sample_shape, "uniform", self.probs), min=tiny)
            return F.floor(F.log(u) / -NF.softplus(self.logits))

    def log_prob(self, value: typing.Any) -> Tensor:
        k = self._validate_sample(value)
        # k log(1 - p) + log p, with log p = -softplus(-logits), log(1 - p) = -softplus(logits)
        return -k * NF.softplus(self.logits) - NF.softplus(-self.logits)

    def entropy(self) -> Tensor:
        return NF.binary_cross_entropy_with_logits(self.logits, self.probs,
                                                   reduction="none") / self.probs


class NegativeBinomial(Distribution):
    """The number of successes before ``total_count`` failures, each trial a success with p.

    P(k) = C(k + r - 1, k) pᵏ (1 - p)ʳ.

    Parameters
    ----------
    total_count : Tensor or float
        The number of failures r > 0 (not differentiated).
    probs : Tensor or float, optional
        The success probability p.
    logits : Tensor or float, optional
        log(p / (1 - p)) (exactly one of probs and logits).
    validate_args : bool, optional
        Check the parameters and values.

    Notes
    -----
    Drawn as a Poisson of a gamma rate: Poisson(Gamma(r, (1 - p)/p)).

    Examples
    --------
    >>> from difflab.distributions import NegativeBinomial
    >>> NegativeBinomial(3.0, probs=0.5).mean.item()        # r p / (1 - p)
    3.0
    """

    arg_constraints = {"total_count": constraints.nonnegative,
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count: typing.Any, probs: typing.Any = None,
                 logits: typing.Any = None, validate_args: bool | None = None) -> None:
        self._param = _one_of(probs, logits, "NegativeBinomial")
        bernoulli = Bernoulli(probs, logits, validate_args=False)
        self.total_count, self.probs, self.logits = broadcast_all(
            total_count, bernoulli.probs, bernoulli.logits)
        self.total_count = self.total_count.detach()
        super().__init__(self.probs.shape, (), validate_args)

    def _given(self) -> tuple[str, ...]:
        return ("total_count", self._param)

    @property
    def mean(self) -> Tensor:
        return self.total_count * F.exp(self.logits)

    @property
    def mode(self) -> Tensor:
        return F.floor(F.clamp((self.total_count - 1) * F.exp(self.logits), min=0.0))

    @property
    def variance(self) -> Tensor:
        return self.mean / (1 - self.probs)

    def sample(self, sample_shape: typing.Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            rate = _standard_gamma(self.total_count, shape) * F.exp(self.logits)
            return apply(Draw, rate, distribution="poisson", shape=shape)

    def log_prob(self, value: typing.Any) -> Tensor:
        k = self._validate_sample(value)
        r, logits = self.total_count, self.logits
        log_choose = F.lgamma(k + r) - F.lgamma(k + 1) - F.lgamma(r)
        # k log p + r log(1 - p) = k · logits - (k + r) softplus(logits)
        return log_choose + k * logits - (k + r) * NF.softplus(logits)


class Multinomial(Distribution):
    """Counts of ``total_count`` independent Categorical draws (event shape (K,)).

    Parameters
    ----------
    total_count : int
        The number of draws n (one for the whole batch, as in PyTorch).
    probs : Tensor, optional
        Category weights along the last dimension.
    logits : Tensor, optional
        Unnormalized log probabilities (exactly one of probs and logits).
    validate_args : bool, optional
        Check the parameters and values.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import Multinomial
    >>> d = Multinomial(4, probs=dl.tensor([0.5, 0.5]))
    >>> d.mean.tolist(), d.log_prob(dl.tensor([2.0, 2.0])).exp().item()    # 6/16
    ([2.0, 2.0], 0.375)
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count: int = 1, probs: typing.Any = None,
                 logits: typing.Any = None, validate_args: bool | None = None) -> None:
        if isinstance(total_count, bool) or not isinstance(total_count, int) \
                or total_count < 0:
            raise ValueError(f"Multinomial takes total_count as an integer >= 0 (one for the "
                             f"whole batch), got {total_count!r}")
        self.total_count = total_count
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        self._param = self._categorical._param
        self.probs, self.logits = self._categorical.probs, self._categorical.logits
        super().__init__(self._categorical.batch_shape, self.probs.shape[-1:], validate_args)

    def _given(self) -> tuple[str, ...]:
        return (self._param,)

    def _fixed_arguments(self) -> dict:
        return {"total_count": self.total_count}

    @property
    def support(self) -> constraints.Constraint:
        return constraints.independent(constraints.integer_interval(0, self.total_count), 1)

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: typing.Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))[:-1]
        count = _creation.tensor(float(self.total_count), dtype=self.probs.dtype,
                                 device=self.probs.device)
        return apply(Draw, count, self.probs.detach(), distribution="multinomial",
                     shape=shape).to(self.probs.dtype)

    def log_prob(self, value: typing.Any) -> Tensor:
        x = self._validate_sample(value)
        if self._validate_args and not bool(F.all(x.sum(-1) == self.total_count)):
            raise ValueError(f"Multinomial: each value's counts must add up to total_count = "
                             f"{self.total_count}, got {x}")
        low = finfo(self.logits.dtype).min
        terms = F.where(x == 0, 0.0, x * F.clamp(self.logits, min=low))  # (0 · log 0 = 0)
        return (F.lgamma(x.sum(-1) + 1) - F.lgamma(x + 1).sum(-1) + terms.sum(-1))
