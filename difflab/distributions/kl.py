r"""KL divergence between distributions: a table of closed forms, keyed by pairs of types.

``kl_divergence(p, q)`` = E_p[log p(x) - log q(x)] looks up the rule
registered for ``(type(p), type(q))`` (with ``register_kl``), or for the
closest pair of base classes; every rule is written with difflab's
operations, so its gradient reaches both distributions' parameters.

>>> import difflab as dl
>>> from difflab.distributions import Bernoulli, kl_divergence
>>> round(kl_divergence(Bernoulli(0.5), Bernoulli(0.25)).item(), 6)
0.143841
"""

from __future__ import annotations

import math
import typing

from difflab import functions as F
from difflab.distributions.continuous import Exponential, Laplace, LogNormal, Normal, Uniform
from difflab.distributions.discrete import Bernoulli, Categorical, OneHotCategorical, Poisson
from difflab.distributions.distribution import Distribution
from difflab.distributions.gamma import Beta, Dirichlet, Gamma
from difflab.distributions.multivariate import Independent, MultivariateNormal, _solve_lower
from difflab.distributions.transformed import TransformedDistribution
from difflab.tensor import Tensor

__all__ = ["kl_divergence", "register_kl"]

#: (type of p, type of q) -> the rule computing KL(p || q).
_KL_RULES: dict[tuple[type, type], typing.Callable] = {}


def register_kl(type_p: type, type_q: type) -> typing.Callable:
    """Register ``rule(p, q)`` as KL(p || q) for ``p`` of ``type_p`` and ``q`` of ``type_q``.

    Used as a decorator; a rule for base classes covers their subclasses, and
    the most specific registered pair wins.

    Parameters
    ----------
    type_p, type_q : type
        Subclasses of :class:`Distribution`.

    Returns
    -------
    callable
        The decorator (it returns the rule unchanged).

    Examples
    --------
    >>> from difflab.distributions import Normal, kl_divergence, register_kl
    >>> class Standard(Normal):
    ...     pass
    >>> @register_kl(Standard, Standard)
    ... def _kl_standard(p, q):
    ...     return (p.loc - q.loc) ** 2 / 2
    >>> kl_divergence(Standard(0.0, 1.0), Standard(2.0, 1.0)).item()
    2.0
    """
    for t in (type_p, type_q):
        if not (isinstance(t, type) and issubclass(t, Distribution)):
            raise TypeError(f"register_kl takes two Distribution subclasses, got {t!r}")

    def decorator(rule: typing.Callable) -> typing.Callable:
        _KL_RULES[type_p, type_q] = rule
        return rule

    return decorator


def _lookup(type_p: type, type_q: type) -> typing.Callable | None:
    """The rule of the closest registered pair (smallest total distance in the MROs)."""
    best, best_distance = None, None
    for (p, q), rule in _KL_RULES.items():
        if issubclass(type_p, p) and issubclass(type_q, q):
            distance = type_p.__mro__.index(p) + type_q.__mro__.index(q)
            if best_distance is None or distance < best_distance:
                best, best_distance = rule, distance
    return best


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q) = E_p[log p(x) - log q(x)], of shape ``batch_shape``.

    Parameters
    ----------
    p, q : Distribution
        Two distributions whose pair of types has a rule (:func:`register_kl`).

    Returns
    -------
    Tensor
        The divergence (inf where q gives 0 probability to p's support).

    Raises
    ------
    NotImplementedError
        If no rule is registered for the pair (the message names it).

    Examples
    --------
    >>> from difflab.distributions import Exponential, kl_divergence
    >>> round(kl_divergence(Exponential(1.0), Exponential(2.0)).item(), 6)   # log ½ + 1
    0.306853
    """
    rule = _lookup(type(p), type(q))
    if rule is None:
        raise NotImplementedError(
            f"no KL divergence is registered for ({type(p).__name__}, {type(q).__name__}); "
            f"register one with @difflab.distributions.register_kl({type(p).__name__}, "
            f"{type(q).__name__})")
    return rule(p, q)


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Tensor:
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + t1 - 1 - F.log(var_ratio))


@register_kl(LogNormal, LogNormal)
def _kl_lognormal_lognormal(p: LogNormal, q: LogNormal) -> Tensor:
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    # Σₓ p(x) (log p(x) - log q(x)) over x in {0, 1}, with logsigmoid for stability
    from difflab.nn import functional as NF

    t1 = p.probs * (NF.logsigmoid(p.logits) - NF.logsigmoid(q.logits))
    t2 = (1 - p.probs) * (NF.logsigmoid(-p.logits) - NF.logsigmoid(-q.logits))
    return F.where(p.probs == 0, 0.0, t1) + F.where(p.probs == 1, 0.0, t2)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    terms = p.probs * (p.logits - q.logits)
    terms = F.where(p.probs == 0, 0.0, terms)  # (0 · log 0 = 0; q = 0 where p > 0: inf)
    return terms.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehot_onehot(p: OneHotCategorical, q: OneHotCategorical) -> Tensor:
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Uniform, q: Uniform) -> Tensor:
    value = F.log((q.high - q.low) / (p.high - p.low))
    inside = (q.low <= p.low) & (q.high >= p.high)
    return F.where(inside, value, math.inf)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Exponential, q: Exponential) -> Tensor:
    ratio = q.rate / p.rate
    return ratio - 1 - F.log(ratio)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p: Laplace, q: Laplace) -> Tensor:
    ratio = p.scale / q.scale
    shift = F.abs(p.loc - q.loc)
    return -F.log(ratio) + shift / q.scale + ratio * F.exp(-shift / p.scale) - 1


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p: Gamma, q: Gamma) -> Tensor:
    a1, b1, a2, b2 = p.concentration, p.rate, q.concentration, q.rate
    return ((a1 - a2) * F.digamma(a1) - F.lgamma(a1) + F.lgamma(a2)
            + a2 * (F.log(b1) - F.log(b2)) + a1 * (b2 - b1) / b1)


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Beta, q: Beta) -> Tensor:
    a1, b1, a2, b2 = p.concentration1, p.concentration0, q.concentration1, q.concentration0
    total = a1 + b1
    return (q._log_beta() - p._log_beta() + (a1 - a2) * F.digamma(a1)
            + (b1 - b2) * F.digamma(b1) + (a2 - a1 + b2 - b1) * F.digamma(total))


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p: Dirichlet, q: Dirichlet) -> Tensor:
    a, b = p.concentration, q.concentration
    a0 = a.sum(-1)
    return (F.lgamma(a0) - F.lgamma(a).sum(-1) - F.lgamma(b.sum(-1)) + F.lgamma(b).sum(-1)
            + ((a - b) * (F.digamma(a) - F.digamma(a0).unsqueeze(-1))).sum(-1))


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p: Poisson, q: Poisson) -> Tensor:
    return p.rate * (F.log(p.rate) - F.log(q.rate)) - (p.rate - q.rate)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p: MultivariateNormal, q: MultivariateNormal) -> Tensor:
    # ½ [tr(Σq⁻¹ Σp) + (μq - μp)ᵀ Σq⁻¹ (μq - μp) - d + log det Σq - log det Σp]
    d = p.event_shape[0]
    trace = 0.0
    for j in range(d):  # ‖Lq⁻¹ Lp‖²_F, one column of Lp at a time
        column = _solve_lower(q.scale_tril, p.scale_tril[..., :, j])
        trace = trace + (column * column).sum(-1)
    z = _solve_lower(q.scale_tril, q.loc - p.loc)
    return 0.5 * (trace + (z * z).sum(-1) - d) + q._half_log_det() - p._half_log_det()


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Independent, q: Independent) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("KL between Independent distributions needs the same "
                                  "reinterpreted_batch_ndims on both")
    return p._sum_rightmost(kl_divergence(p.base_dist, q.base_dist))


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p: TransformedDistribution,
                                q: TransformedDistribution) -> Tensor:
    # The same bijection applied to both: KL is unchanged by it (the log-determinants cancel
    # in log p - log q), so it is the bases' KL.
    if p.transforms != q.transforms:
        raise NotImplementedError("KL between TransformedDistributions needs the same "
                                  "transforms on both (then it is the bases' KL)")
    if p.event_shape != q.event_shape:
        raise NotImplementedError("KL between TransformedDistributions needs the same "
                                  "event shape on both")
    if not all(t.bijective for t in p.transforms):
        raise NotImplementedError("KL between TransformedDistributions needs bijective "
                                  "transforms")
    return kl_divergence(p.base_dist, q.base_dist)
