r"""Continuous relaxations of discrete draws, and mixtures.

``RelaxedBernoulli`` and ``RelaxedOneHotCategorical`` (the Concrete or
Gumbel-softmax distributions) draw by reparameterization: Gumbel noise added
to the logits, divided by a temperature, squashed by a sigmoid or softmax,
so a discrete choice gets pathwise gradients; as the temperature goes to 0
the draws become 0/1 and one-hot.  ``MixtureSameFamily`` mixes K
distributions of one family with Categorical weights.

>>> import difflab as dl
>>> from difflab.distributions import RelaxedOneHotCategorical
>>> dl.manual_seed(0); y = RelaxedOneHotCategorical(0.5, logits=dl.zeros(3)).rsample()
... # doctest: +ELLIPSIS
<difflab.Generator ...>
>>> round(y.sum().item(), 6)
1.0
"""

from __future__ import annotations

import math
import typing

from difflab import functions as F
from difflab.distributions import constraints
from difflab.distributions.continuous import _standard
from difflab.distributions.discrete import Bernoulli, Categorical, _one_of
from difflab.distributions.distribution import Distribution, as_parameter
from difflab.distributions.transforms import _clamp_open_unit
from difflab.dtype_info import finfo
from difflab.nn import functional as NF
from difflab.tensor import Tensor

__all__ = ["ContinuousBernoulli", "LogitRelaxedBernoulli", "MixtureSameFamily", "RelaxedBernoulli",
           "RelaxedOneHotCategorical"]


def _uniform(d: Distribution, sample_shape: typing.Any, like: Tensor) -> Tensor:
    """u in (0, 1), both ends excluded (logs of u and of 1 - u stay finite)."""
    eps = finfo(like.dtype).eps
    return F.clamp(_standard(d, sample_shape, "uniform", like), eps, 1 - eps)


class LogitRelaxedBernoulli(Distribution):
    """The logit of a RelaxedBernoulli draw: (logits + log u - log(1 - u)) / temperature.

    Parameters
    ----------
    temperature : Tensor or float
        τ > 0.
    probs : Tensor or float, optional
        p of the Bernoulli being relaxed.
    logits : Tensor or float, optional
        log(p / (1 - p)) (exactly one of probs and logits).
    validate_args : bool, optional
        Check the parameters and values.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import LogitRelaxedBernoulli
    >>> round(LogitRelaxedBernoulli(1.0, logits=0.0).log_prob(dl.tensor(0.0)).item(), 6)
    -1.386294
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    has_rsample = True

    def __init__(self, temperature: typing.Any, probs: typing.Any = None,
                 logits: typing.Any = None, validate_args: bool | None = None) -> None:
        self._param = _one_of(probs, logits, type(self).__name__)
        bernoulli = Bernoulli(probs, logits, validate_args=validate_args)
        self.probs, self.logits = bernoulli.probs, bernoulli.logits
        self.temperature = as_parameter(temperature, self.probs)
        super().__init__(self.probs.shape, (), validate_args)

    def _given(self) -> tuple[str, ...]:
        return (self._param,)

    def _fixed_arguments(self) -> dict:
        return {"temperature": self.temperature}

    def rsample(self, sample_shape: typing.Any = ()) -> Tensor:
        u = _uniform(self, sample_shape, self.logits)
        return (self.logits + F.log(u) - F.log1p(-u)) / self.temperature

    def log_prob(self, value: typing.Any) -> Tensor:
        diff = self.logits - self._validate_sample(value) * self.temperature
        return F.log(self.temperature) + diff - 2 * NF.softplus(diff)


class RelaxedBernoulli(LogitRelaxedBernoulli):
    """A Bernoulli relaxed to (0, 1): sigmoid of a :class:`LogitRelaxedBernoulli` draw.

    Parameters
    ----------
    temperature : Tensor or float
        τ > 0 (towards 0 the draws approach 0 and 1).
    probs : Tensor or float, optional
        p.
    logits : Tensor or float, optional
        log(p / (1 - p)) (exactly one of probs and logits).
    validate_args : bool, optional
        Check the parameters and values.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import RelaxedBernoulli
    >>> round(RelaxedBernoulli(1.0, probs=0.5).log_prob(dl.tensor(0.5)).item(), 6)
    0.0
    """

    support = constraints.unit_interval

    def rsample(self, sample_shape: typing.Any = ()) -> Tensor:
        # (kept inside (0, 1) as PyTorch's SigmoidTransform: a draw rounded to 1 has no logit)
        return _clamp_open_unit(F.sigmoid(super().rsample(sample_shape)))

    def log_prob(self, value: typing.Any) -> Tensor:
        y = _clamp_open_unit(self._validate_sample(value))
        logit = F.log(y) - F.log1p(-y)
        # the change of variables y = sigmoid(x): dx/dy = 1/(y (1 - y))
        diff = self.logits - logit * self.temperature
        return (F.log(self.temperature) + diff - 2 * NF.softplus(diff)
                - F.log(y) - F.log1p(-y))


class RelaxedOneHotCategorical(Distribution):
    """A Categorical relaxed to the simplex: softmax((logits + Gumbel noise) / temperature).

    Parameters
    ----------
    temperature : Tensor or float
        τ > 0.
    probs : Tensor, optional
        Category weights along the last dimension.
    logits : Tensor, optional
        Unnormalized log probabilities (exactly one of probs and logits).
    validate_args : bool, optional
        Check the parameters and values.

    Notes
    -----
    The density (the Concrete distribution of Maddison et al. 2017) is
    log p(y) = log (K-1)! + (K-1) log τ + Σᵢ sᵢ - K logsumexp(s) - Σᵢ log yᵢ
    with sᵢ = logitsᵢ - τ log yᵢ.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import RelaxedOneHotCategorical
    >>> d = RelaxedOneHotCategorical(1.0, probs=dl.tensor([0.5, 0.5]))
    >>> round(d.log_prob(dl.tensor([0.5, 0.5])).item(), 6)      # log 1 + 2 log 2 - log 4
    0.0
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature: typing.Any, probs: typing.Any = None,
                 logits: typing.Any = None, validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        self._param = self._categorical._param
        self.probs, self.logits = self._categorical.probs, self._categorical.logits
        self.temperature = as_parameter(temperature, self.probs)
        super().__init__(self._categorical.batch_shape, self.probs.shape[-1:], validate_args)

    def _given(self) -> tuple[str, ...]:
        return (self._param,)

    def _fixed_arguments(self) -> dict:
        return {"temperature": self.temperature}

    def rsample(self, sample_shape: typing.Any = ()) -> Tensor:
        u = _uniform(self, sample_shape, self.logits)
        gumbel = -F.log(-F.log(u))
        return F.softmax((self.logits + gumbel) / self.temperature, -1)

    def log_prob(self, value: typing.Any) -> Tensor:
        y = self._validate_sample(value)
        k = self.probs.shape[-1]
        log_y = F.log(y)
        score = self.logits - log_y * self.temperature.unsqueeze(-1) \
            if self.temperature.dim() else self.logits - log_y * self.temperature
        score = (score - F.logsumexp(score, -1, True)).sum(-1)
        log_scale = math.lgamma(k) + (k - 1) * F.log(self.temperature)
        return score + log_scale - log_y.sum(-1)


class MixtureSameFamily(Distribution):
    """A mixture of K distributions of one family: p(x) = Σₖ πₖ pₖ(x).

    Parameters
    ----------
    mixture_distribution : Categorical
        The weights π over K components (batch shape B).
    component_distribution : Distribution
        The K components, batch shape B + (K,).
    validate_args : bool, optional
        Check the values.

    Notes
    -----
    log p(x) = logsumexp_k(log πₖ + log pₖ(x)); the mean is Σ πₖ μₖ and the
    variance Σ πₖ σₖ² + Σ πₖ (μₖ - μ)² (the law of total variance).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import Categorical, MixtureSameFamily, Normal
    >>> mix = MixtureSameFamily(Categorical(probs=dl.tensor([0.5, 0.5])),
    ...                         Normal(dl.tensor([-1.0, 1.0]), dl.tensor([1.0, 1.0])))
    >>> mix.mean.item(), mix.variance.item()
    (0.0, 2.0)
    """

    arg_constraints: dict = {}
    has_rsample = False

    def __init__(self, mixture_distribution: Categorical,
                 component_distribution: Distribution,
                 validate_args: bool | None = None) -> None:
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError("mixture_distribution must be a Categorical (the weights), got "
                             f"{type(mixture_distribution).__name__}")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("component_distribution must be a Distribution")
        k = mixture_distribution.probs.shape[-1]
        component_batch = tuple(component_distribution.batch_shape)
        if not component_batch or component_batch[-1] != k:
            raise ValueError(f"component_distribution's last batch dimension must be the "
                             f"number of components {k}, got batch shape {component_batch}")
        self.mixture_distribution = mixture_distribution
        self.component_distribution = component_distribution
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(component_batch[:-1], component_distribution.event_shape,
                         validate_args)

    @property
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        return self.component_distribution.support

    def _a_parameter(self) -> Tensor | None:
        return self.component_distribution._a_parameter()

    def expand(self, batch_shape: typing.Any,
               _instance: typing.Any = None) -> MixtureSameFamily:
        """The mixture over ``batch_shape``: the weights and the components expanded (the
        components keep their last batch dimension, the K of the mixture)."""
        batch_shape = tuple(batch_shape)
        k = self.component_distribution.batch_shape[-1]
        return MixtureSameFamily(self.mixture_distribution.expand(batch_shape),
                                 self.component_distribution.expand(batch_shape + (k,)),
                                 validate_args=False)

    def _weights(self) -> Tensor:
        """π, shaped to meet the components' event dimensions."""
        probs = self.mixture_distribution.probs
        return probs.reshape(tuple(probs.shape) + (1,) * self._event_ndims)

    @property
    def mean(self) -> Tensor:
        return (self._weights() * self.component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self) -> Tensor:
        dim = -1 - self._event_ndims
        w, comp = self._weights(), self.component_distribution
        mean = self.mean.unsqueeze(dim)
        return (w * comp.variance).sum(dim) + (w * (comp.mean - mean) ** 2).sum(dim)

    def log_prob(self, value: typing.Any) -> Tensor:
        x = as_parameter(value, self._a_parameter()).unsqueeze(-1 - self._event_ndims)
        log_p = self.component_distribution.log_prob(x)  # (..., B, K)
        log_weights = F.log_softmax(self.mixture_distribution.logits, -1)
        return F.logsumexp(log_p + log_weights, -1)

    def cdf(self, value: typing.Any) -> Tensor:
        x = as_parameter(value, self._a_parameter()).unsqueeze(-1 - self._event_ndims)
        return (self.component_distribution.cdf(x) * self.mixture_distribution.probs).sum(-1)

    def sample(self, sample_shape: typing.Any = ()) -> Tensor:
        sample_shape = tuple(sample_shape)
        which = self.mixture_distribution.sample(sample_shape)  # (S, B)
        drawn = self.component_distribution.sample(sample_shape)  # (S, B, K, E)
        index = which.reshape(tuple(which.shape) + (1,) * (1 + self._event_ndims))
        index = index.expand(*(tuple(which.shape) + (1,)
                               + tuple(self.component_distribution.event_shape)))
        return F.gather(drawn, -1 - self._event_ndims, index).squeeze(-1 - self._event_ndims)


class ContinuousBernoulli(Distribution):
    """The continuous Bernoulli on [0, 1]: density C(p) pˣ (1 - p)^(1-x).

    The normalized form of the Bernoulli likelihood used on data in [0, 1]
    (Loaiza-Ganem and Cunningham 2019).

    Parameters
    ----------
    probs : Tensor or float, optional
        p in [0, 1].
    logits : Tensor or float, optional
        log(p / (1 - p)) (exactly one of probs and logits).
    lims : tuple of float, optional
        Around p = 1/2, where the closed forms divide 0 by 0, Taylor
        expansions are used instead (PyTorch's (0.499, 0.501)).
    validate_args : bool, optional
        Check the parameters and values.

    Notes
    -----
    C(p) = 2 atanh(1 - 2p) / (1 - 2p) (2 at p = 1/2); rsample is the inverse
    distribution function of a uniform draw.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import ContinuousBernoulli
    >>> d = ContinuousBernoulli(probs=0.5)
    >>> d.log_prob(dl.tensor(0.3)).item(), round(d.mean.item(), 6)       # uniform at 1/2
    (0.0, 0.5)
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, probs: typing.Any = None, logits: typing.Any = None,
                 lims: tuple = (0.499, 0.501), validate_args: bool | None = None) -> None:
        self._param = _one_of(probs, logits, "ContinuousBernoulli")
        bernoulli = Bernoulli(probs, logits, validate_args=validate_args)
        self.probs, self.logits = bernoulli.probs, bernoulli.logits
        self._lims = lims
        super().__init__(self.probs.shape, (), validate_args)

    def _given(self) -> tuple[str, ...]:
        return (self._param,)

    def _fixed_arguments(self) -> dict:
        return {"lims": self._lims}

    def _outside(self) -> Tensor:
        return (self.probs <= self._lims[0]) | (self.probs >= self._lims[1])

    def _cut(self) -> Tensor:
        """p away from the unstable region (its own branch: never 0/0)."""
        return F.where(self._outside(), self.probs, self._lims[0])

    def _log_normalizer(self) -> Tensor:
        cut = self._cut()
        below = F.where(cut <= 0.5, cut, 0.0)
        above = F.where(cut >= 0.5, cut, 1.0)
        closed = F.log(F.abs(F.log1p(-cut) - F.log(cut))) - F.where(
            cut <= 0.5, F.log1p(-2.0 * below), F.log(2.0 * above - 1.0))
        x = (self.probs - 0.5) ** 2
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return F.where(self._outside(), closed, taylor)

    @property
    def mean(self) -> Tensor:
        cut = self._cut()
        closed = cut / (2.0 * cut - 1.0) + 1.0 / (F.log1p(-cut) - F.log(cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x * x) * x
        return F.where(self._outside(), closed, taylor)

    @property
    def variance(self) -> Tensor:
        cut = self._cut()
        closed = (cut * (cut - 1.0) / (1.0 - 2.0 * cut) ** 2
                  + 1.0 / (F.log1p(-cut) - F.log(cut)) ** 2)
        x = (self.probs - 0.5) ** 2
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return F.where(self._outside(), closed, taylor)

    def log_prob(self, value: typing.Any) -> Tensor:
        x = self._validate_sample(value)
        return (-NF.binary_cross_entropy_with_logits(
            *_broadcast(self.logits, x), reduction="none") + self._log_normalizer())

    def cdf(self, value: typing.Any) -> Tensor:
        x = self._validate_sample(value)
        cut = self._cut()
        closed = (cut ** x * (1.0 - cut) ** (1.0 - x) + cut - 1.0) / (2.0 * cut - 1.0)
        inside = F.where(self._outside(), closed, x)
        return F.where(x <= 0.0, 0.0 * inside, F.where(x >= 1.0, 0.0 * inside + 1.0, inside))

    def icdf(self, value: typing.Any) -> Tensor:
        cut = self._cut()
        closed = ((F.log1p(-cut + value * (2.0 * cut - 1.0)) - F.log1p(-cut))
                  / (F.log(cut) - F.log1p(-cut)))
        return F.where(self._outside(), closed, value + 0.0 * cut)

    def rsample(self, sample_shape: typing.Any = ()) -> Tensor:
        return self.icdf(_uniform(self, sample_shape, self.probs))

    def entropy(self) -> Tensor:
        log0, log1 = F.log1p(-self.probs), F.log(self.probs)
        return self.mean * (log0 - log1) - self._log_normalizer() - log0


def _broadcast(a: Tensor, b: Tensor) -> tuple:
    from difflab.functions_joining import broadcast_tensors

    return tuple(broadcast_tensors(a, as_parameter(b, a)))
