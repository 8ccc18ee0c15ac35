r"""Discrete distributions: Bernoulli, Categorical, OneHotCategorical, Poisson, Binomial.

Each takes ``probs`` or ``logits`` (exactly one) where PyTorch does; the other
is computed from it (``probs = sigmoid(logits)`` / ``softmax``), and the log
probabilities are written with logits so they stay finite where a
probability rounds to 0 or 1.  Their draws have no pathwise derivative
(``has_rsample = False``): ``sample`` only.

>>> import difflab as dl
>>> from difflab.distributions import Bernoulli
>>> Bernoulli(probs=0.25).log_prob(dl.tensor(1.0)).exp().item()
0.25
"""

from __future__ import annotations

import typing

import numpy as np

from difflab import creation as _creation
from difflab import functions as F
from difflab.autograd.engine import apply
from difflab.distributions import constraints
from difflab.distributions.distribution import (
    Distribution,
    ExponentialFamily,
    as_parameter,
    broadcast_all,
)
from difflab.dtype_info import finfo
from difflab.nn import functional as NF
from difflab.random import Draw
from difflab.tensor import Tensor

__all__ = ["Bernoulli", "Binomial", "Categorical", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "Poisson"]


def _one_of(probs: typing.Any, logits: typing.Any, name: str) -> str:
    if (probs is None) == (logits is None):
        raise ValueError(f"{name} takes exactly one of probs and logits, got "
                         f"{'both' if probs is not None else 'neither'}")
    return "probs" if probs is not None else "logits"


def _draw(distribution: str, *params: Tensor, shape: tuple) -> Tensor:
    """Draws from NumPy's named distribution through the ``draw`` primitive (no gradient)."""
    return apply(Draw, *(p.detach() for p in params), distribution=distribution, shape=shape)


class Bernoulli(ExponentialFamily):
    """1 with probability p, 0 with probability 1 - p.

    Parameters
    ----------
    probs : Tensor or float, optional
        p in [0, 1].
    logits : Tensor or float, optional
        log(p / (1 - p)) (give exactly one of probs and logits).
    validate_args : bool, optional
        Check the parameters and values.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import Bernoulli
    >>> d = Bernoulli(logits=dl.tensor([0.0]))
    >>> d.probs.tolist(), round(d.entropy().item(), 6)       # log 2
    ([0.5], 0.693147)
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs: typing.Any = None, logits: typing.Any = None,
                 validate_args: bool | None = None) -> None:
        self._param = _one_of(probs, logits, "Bernoulli")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            eps = finfo(self.probs.dtype).eps  # (as PyTorch's probs_to_logits)
            clamped = F.clamp(self.probs, eps, 1 - eps)
            self.logits = F.log(clamped) - F.log1p(-clamped)
        else:
            (self.logits,) = broadcast_all(logits)
            self.probs = F.sigmoid(self.logits)
        super().__init__(self.probs.shape, (), validate_args)

    def _given(self) -> tuple[str, ...]:
        return (self._param,)

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        return (self.probs > 0.5).to(self.probs.dtype)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: typing.Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        return _creation.bernoulli(self.probs.detach().expand(*shape)) if shape else \
            _creation.bernoulli(self.probs.detach())

    def log_prob(self, value: typing.Any) -> Tensor:
        value = self._validate_sample(value)
        return -NF.binary_cross_entropy_with_logits(
            *_broadcast_pair(self.logits, value), reduction="none")

    def entropy(self) -> Tensor:
        return NF.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        return (self.logits,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return NF.softplus(x)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = _creation.tensor([0.0, 1.0], dtype=self.probs.dtype, device=self.probs.device)
        values = values.reshape((2,) + (1,) * len(self._batch_shape))
        return values.expand(2, *self._batch_shape) if expand else values


def _broadcast_pair(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    from difflab.functions_joining import broadcast_tensors

    return tuple(broadcast_tensors(a, as_parameter(b, a)))


class Categorical(Distribution):
    """One of K categories, 0 .. K-1, with probabilities ``probs`` (the last dimension).

    Parameters
    ----------
    probs : Tensor, optional
        Non-negative weights along the last dimension (normalized to sum 1).
    logits : Tensor, optional
        Unnormalized log probabilities (give exactly one of probs and logits).
    validate_args : bool, optional
        Check the parameters and values.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import Categorical
    >>> d = Categorical(probs=dl.tensor([0.2, 0.3, 0.5]))
    >>> round(d.log_prob(dl.tensor(2)).item(), 6), d.enumerate_support().tolist()
    (-0.693147, [0, 1, 2])
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs: typing.Any = None, logits: typing.Any = None,
                 validate_args: bool | None = None) -> None:
        self._param = _one_of(probs, logits, type(self).__name__)
        if probs is not None:
            probs = as_parameter(probs)
            if probs.dim() < 1:
                raise ValueError("probs must have at least one dimension (the categories)")
            self.probs = probs / probs.sum(-1, keepdim=True)
            tiny = finfo(self.probs.dtype).tiny
            self.logits = F.log(F.clamp(self.probs, min=tiny))
        else:
            logits = as_parameter(logits)
            if logits.dim() < 1:
                raise ValueError("logits must have at least one dimension (the categories)")
            self.logits = logits - F.logsumexp(logits, -1, True)
            self.probs = F.softmax(self.logits, -1)
        self._num_events = self.probs.shape[-1]
        super().__init__(self.probs.shape[:-1], (), validate_args)

    def _given(self) -> tuple[str, ...]:
        return (self._param,)

    @property
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def param_shape(self) -> tuple:
        return tuple(self.probs.shape)

    @property
    def mean(self) -> Tensor:
        return _creation.full(tuple(self._batch_shape), float("nan"), dtype=self.probs.dtype,
                              device=self.probs.device)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)

    @property
    def variance(self) -> Tensor:
        return self.mean

    def sample(self, sample_shape: typing.Any = ()) -> Tensor:
        n = 1
        for size in tuple(sample_shape if isinstance(sample_shape, tuple) else
                          tuple(sample_shape)):
            n *= size
        rows = self.probs.detach().reshape(-1, self._num_events)
        drawn = _creation.multinomial(rows, n, replacement=True)  # (rows, n)
        drawn = drawn.T.reshape(*tuple(sample_shape), *self._batch_shape)
        return drawn

    def log_prob(self, value: typing.Any) -> Tensor:
        value = self._validate_sample(as_parameter(value).long() if not isinstance(
            value, Tensor) else value)
        index = value.long().unsqueeze(-1)
        logits = self.logits
        shape = _broadcast_shape(tuple(index.shape[:-1]), tuple(logits.shape[:-1]))
        index = index.expand(*shape, 1)
        logits = logits.expand(*shape, self._num_events)
        return F.gather(logits, -1, index).squeeze(-1)

    def entropy(self) -> Tensor:
        # p · log p with p = 0: log p is clamped to the smallest finite value (0 · finite = 0)
        low = finfo(self.logits.dtype).min
        return -(self.probs * F.clamp(self.logits, min=low)).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = _creation.arange(self._num_events, device=self.probs.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand(self._num_events, *self._batch_shape) if expand else values

    def _validate_sample(self, value: typing.Any) -> Tensor:
        if not self._validate_args:
            return value
        inside = self.support.check(value)
        if not bool(F.all(inside)):
            raise ValueError(f"Expected value argument to be within the support "
                             f"({self.support!r}) of {type(self).__name__}, but found "
                             f"invalid values:\n{value}")
        return value


def _broadcast_shape(a: tuple, b: tuple) -> tuple:
    return tuple(np.broadcast_shapes(a, b))


class OneHotCategorical(Distribution):
    """A Categorical draw written as a one-hot vector of length K (event shape (K,)).

    Parameters
    ----------
    probs : Tensor, optional
        Weights along the last dimension.
    logits : Tensor, optional
        Unnormalized log probabilities (exactly one of the two).
    validate_args : bool, optional
        Check the parameters and values.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import OneHotCategorical
    >>> d = OneHotCategorical(probs=dl.tensor([0.0, 1.0, 0.0]))
    >>> d.sample().tolist(), d.event_shape
    ([0.0, 1.0, 0.0], difflab.Size([3]))
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs: typing.Any = None, logits: typing.Any = None,
                 validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        self._param = self._categorical._param
        self.probs, self.logits = self._categorical.probs, self._categorical.logits
        super().__init__(self._categorical.batch_shape, self.probs.shape[-1:], validate_args)

    def _given(self) -> tuple[str, ...]:
        return (self._param,)

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        return NF.one_hot(self.probs.argmax(-1), self.probs.shape[-1]).to(self.probs.dtype)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: typing.Any = ()) -> Tensor:
        index = self._categorical.sample(sample_shape)
        return NF.one_hot(index, self.probs.shape[-1]).to(self.probs.dtype)

    def log_prob(self, value: typing.Any) -> Tensor:
        value = self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        k = self.probs.shape[-1]
        values = _creation.eye(k, dtype=self.probs.dtype, device=self.probs.device)
        values = values.reshape((k,) + (1,) * len(self._batch_shape) + (k,))
        return values.expand(k, *self._batch_shape, k) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    r"""A one-hot categorical whose ``rsample`` passes gradients straight through to ``probs``.

    The draw is a one-hot vector, as :class:`OneHotCategorical`'s; ``rsample`` returns
    ``x + (p - p.detach())``: the same values, but a gradient as if x were p (the
    straight-through estimator of Bengio et al., 2013).  It is biased, yet it lets a
    discrete choice sit inside a network trained by backpropagation.

    Parameters
    ----------
    probs : Tensor, optional
        Event probabilities (..., k), normalized along the last dimension.
    logits : Tensor, optional
        Unnormalized log probabilities (give exactly one of the two).
    validate_args : bool, optional
        Check the parameters and values.

    Notes
    -----
    Forward: x ~ OneHotCategorical(p).  Backward: ∂x/∂p is taken as the identity, so
    ∂L/∂p = ∂L/∂x (and through p to the logits by the softmax's rule).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import OneHotCategoricalStraightThrough
    >>> p = dl.tensor([0.2, 0.5, 0.3], requires_grad=True)
    >>> _ = dl.manual_seed(0)
    >>> x = OneHotCategoricalStraightThrough(probs=p).rsample()
    >>> sorted(x.tolist())                         # one-hot
    [0.0, 0.0, 1.0]
    >>> (x * dl.tensor([1.0, 2.0, 3.0])).sum().backward()
    >>> [round(g, 6) for g in p.grad.tolist()]     # w - Σ pᵢwᵢ (p normalized)
    [-1.1, -0.1, 0.9]
    """

    has_rsample = True

    def rsample(self, sample_shape: typing.Any = ()) -> Tensor:
        """A one-hot draw whose gradient flows to ``probs`` as if it were ``probs``.

        Parameters
        ----------
        sample_shape : tuple of int, optional
            Leading dimensions of draws.

        Returns
        -------
        Tensor
            ``sample_shape + batch_shape + (k,)``: one-hot values, differentiable.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab.distributions import OneHotCategoricalStraightThrough
        >>> d = OneHotCategoricalStraightThrough(logits=dl.zeros(2, 4, requires_grad=True))
        >>> x = d.rsample((3,))
        >>> x.shape, x.requires_grad, x.sum(-1).tolist()[0]
        (difflab.Size([3, 2, 4]), True, [1.0, 1.0])
        """
        samples = self.sample(sample_shape)
        return samples + (self.probs - self.probs.detach())


class Poisson(Distribution):
    """The Poisson distribution of rate λ: P(k) = λᵏ e^(-λ) / k!.

    Parameters
    ----------
    rate : Tensor or float
        λ >= 0, the mean and the variance.
    validate_args : bool, optional
        Check the parameters and values.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import Poisson
    >>> round(Poisson(2.0).log_prob(dl.tensor(3.0)).exp().item(), 6)    # 8 e⁻² / 6
    0.180447
    """

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate: typing.Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return F.floor(self.rate)

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape: typing.Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        return _draw("poisson", self.rate.expand(*shape), shape=shape)

    def log_prob(self, value: typing.Any) -> Tensor:
        value = self._validate_sample(value)
        rate, value = _broadcast_pair(self.rate, value)
        # k log λ with 0 log 0 = 0 (λ = 0 puts all mass on k = 0)
        k_log_rate = value * F.log(F.where((value == 0) & (rate == 0), 1.0, rate))
        return k_log_rate - rate - F.lgamma(value + 1)


class Binomial(Distribution):
    """The number of successes in ``total_count`` independent trials of probability p.

    Parameters
    ----------
    total_count : Tensor or int
        The number of trials n >= 0 (not differentiated).
    probs : Tensor or float, optional
        The success probability p.
    logits : Tensor or float, optional
        log(p / (1 - p)) (exactly one of probs and logits).
    validate_args : bool, optional
        Check the parameters and values.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import Binomial
    >>> d = Binomial(4, probs=0.5)
    >>> d.mean.item(), d.log_prob(dl.tensor(2.0)).exp().item()     # 6/16
    (2.0, 0.375)
    """

    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count: typing.Any = 1, probs: typing.Any = None,
                 logits: typing.Any = None, validate_args: bool | None = None) -> None:
        self._param = _one_of(probs, logits, "Binomial")
        bernoulli = Bernoulli(probs, logits, validate_args=validate_args)
        self.total_count, self.probs, self.logits = broadcast_all(
            total_count, bernoulli.probs, bernoulli.logits)
        self.total_count = self.total_count.detach()
        super().__init__(self.probs.shape, (), validate_args)

    def _given(self) -> tuple[str, ...]:
        return ("total_count", self._param)

    @property
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, float(self.total_count.max()))

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return F.minimum(F.floor((self.total_count + 1) * self.probs), self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: typing.Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        return _draw("binomial", self.total_count.expand(*shape), self.probs.expand(*shape),
                     shape=shape)

    def log_prob(self, value: typing.Any) -> Tensor:
        value = self._validate_sample(value)
        if self._validate_args and not bool(F.all(value <= self.total_count)):
            raise ValueError(f"Binomial: every value must be at most total_count "
                             f"({self.total_count}), got {value}")
        n, logits = self.total_count, self.logits
        log_choose = F.lgamma(n + 1) - F.lgamma(value + 1) - F.lgamma(n - value + 1)
        # k log p + (n - k) log(1 - p) = k · logits - n · log(1 + e^logits), stable for any logits
        return log_choose + value * logits - n * NF.softplus(logits)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = int(self.total_count.max())
        if not bool(F.all(self.total_count == n)):
            raise NotImplementedError("enumerate_support of a Binomial needs one total_count "
                                      "for the whole batch")
        values = _creation.arange(n + 1, dtype=self.probs.dtype, device=self.probs.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand(n + 1, *self._batch_shape) if expand else values

    def entropy(self) -> Tensor:
        """-Σₖ P(k) log P(k) over k = 0 .. max(total_count) (terms past each n left out)."""
        n_max = int(self.total_count.max())
        values = _creation.arange(n_max + 1, dtype=self.probs.dtype, device=self.probs.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        inside = values <= self.total_count
        safe = F.where(inside, values, 0.0)  # (lgamma of n - k + 1 <= 0 is a pole)
        n, logits = self.total_count, self.logits
        log_p = (F.lgamma(n + 1) - F.lgamma(safe + 1) - F.lgamma(n - safe + 1)
                 + safe * logits - n * NF.softplus(logits))
        return -F.where(inside, F.exp(log_p) * log_p, 0.0).sum(0)
