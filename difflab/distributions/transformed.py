r"""TransformedDistribution: a base distribution pushed through transforms.

Y = f(X) with X ~ base and f a composition of
:mod:`~difflab.distributions.transforms`.  Drawing is applying f to a draw of
X (so ``rsample`` is reparameterized when the base's is); the density is the
change of variables (:mod:`difflab.distributions.transforms` writes it out),
one log-determinant subtracted per transform, walked backwards from y to x.

>>> import difflab as dl
>>> from difflab.distributions import LogNormal, Normal, TransformedDistribution
>>> from difflab.distributions.transforms import ExpTransform
>>> d = TransformedDistribution(Normal(0.0, 1.0), [ExpTransform()])   # a log-normal
>>> y = dl.tensor(2.0)
>>> round(d.log_prob(y).item(), 6) == round(LogNormal(0.0, 1.0).log_prob(y).item(), 6)
True
"""

from __future__ import annotations

import typing

from difflab.autograd.grad_mode import no_grad
from difflab.distributions import constraints
from difflab.distributions.distribution import Distribution, as_parameter
from difflab.distributions.multivariate import Independent
from difflab.distributions.transform_base import ComposeTransform, Transform, _sum_rightmost
from difflab.tensor import Tensor

__all__ = ["LogisticNormal", "TransformedDistribution"]


class TransformedDistribution(Distribution):
    r"""The distribution of f(X), X ~ ``base_distribution``, f the ``transforms`` in order.

    ``sample``/``rsample`` apply the transforms to the base's draw; ``log_prob``
    inverts them and subtracts each log|det J|; ``cdf``/``icdf`` exist when every
    transform is a monotone map of numbers (a decreasing one flips the cdf:
    P(f(X) <= y) = 1 - P(X <= f⁻¹(y))).  Moments and entropy have no general
    formula and are not defined.

    ``LogNormal(μ, σ)`` is ``TransformedDistribution(Normal(μ, σ), [ExpTransform()])``
    (difflab's :class:`~difflab.distributions.LogNormal` writes the same density
    directly, with its mean and entropy in closed form); a SAC policy is
    ``TransformedDistribution(Normal(μ, σ), [TanhTransform()])``.

    Parameters
    ----------
    base_distribution : Distribution
        The distribution of X.
    transforms : Transform or list of Transform
        Applied first to last.  Their input event dimension may exceed the base's
        event dimensions (the base's rightmost batch dimensions then become events,
        as :class:`~difflab.distributions.Independent` does), never its shape.
    validate_args : bool, optional
        Check values against the support (the last transform's codomain).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import Normal, TransformedDistribution
    >>> from difflab.distributions.transforms import AffineTransform
    >>> d = TransformedDistribution(Normal(0.0, 1.0), [AffineTransform(3.0, 2.0)])  # N(3, 2²)
    >>> round(d.log_prob(dl.tensor(3.0)).item(), 6), d.cdf(dl.tensor(3.0)).item()
    (-1.612086, 0.5)
    """

    arg_constraints: dict = {}

    def __init__(self, base_distribution: Distribution,
                 transforms: Transform | typing.Sequence[Transform],
                 validate_args: bool | None = None) -> None:
        if not isinstance(base_distribution, Distribution):
            raise TypeError(f"base_distribution must be a Distribution, got "
                            f"{type(base_distribution).__name__}")
        if isinstance(transforms, Transform):
            transforms = [transforms]
        elif not isinstance(transforms, (list, tuple)):
            raise TypeError(f"transforms must be a Transform or a list of Transforms, got "
                            f"{type(transforms).__name__}")
        # (ComposeTransform checks each part and names the one that is not a Transform)
        transform = ComposeTransform(list(transforms))
        self.transforms = transform.parts

        base_shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        base_event_dim = len(base_distribution.event_shape)
        domain_event_dim = transform.domain.event_dim
        if len(base_shape) < domain_event_dim:
            raise ValueError(
                f"the transforms act on events of {domain_event_dim} dimension(s), but a "
                f"draw of {type(base_distribution).__name__} has shape {base_shape}: give a "
                f"base distribution with at least {domain_event_dim} dimension(s) (a batch "
                f"of them, expand(...), or a vector distribution)")
        forward_shape = tuple(transform.forward_shape(base_shape))
        expanded = tuple(transform.inverse_shape(forward_shape))
        if expanded != base_shape:  # (an AffineTransform with a larger loc broadcasts)
            base_distribution = base_distribution.expand(
                expanded[:len(expanded) - base_event_dim])
        if domain_event_dim > base_event_dim:
            base_distribution = Independent(base_distribution, domain_event_dim - base_event_dim)
        self.base_dist = base_distribution

        event_dim = transform.codomain.event_dim + max(base_event_dim - domain_event_dim, 0)
        cut = len(forward_shape) - event_dim
        super().__init__(forward_shape[:cut], forward_shape[cut:], validate_args)

    def _given(self) -> tuple[str, ...]:
        return ()

    def _a_parameter(self) -> Tensor | None:
        return self.base_dist._a_parameter()

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        return self.base_dist.has_rsample

    @property
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support, len(self.event_shape) - support.event_dim)
        return support

    def expand(self, batch_shape: typing.Any,
               _instance: typing.Any = None) -> TransformedDistribution:
        shape = tuple(batch_shape) + tuple(self.event_shape)
        for t in reversed(self.transforms):
            shape = tuple(t.inverse_shape(shape))
        base_batch = shape[:len(shape) - len(self.base_dist.event_shape)]
        return TransformedDistribution(self.base_dist.expand(base_batch), self.transforms,
                                       validate_args=False)

    # -- drawing: x ~ base, then y = f(x) ------------------------------------------------
    def sample(self, sample_shape: typing.Any = ()) -> Tensor:
        with no_grad():
            x = self.base_dist.sample(sample_shape)
            for t in self.transforms:
                x = t(x)
            return x

    def rsample(self, sample_shape: typing.Any = ()) -> Tensor:
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    # -- the density: change of variables, walked backwards ------------------------------
    def log_prob(self, value: typing.Any) -> Tensor:
        y = self._validate_sample(value)
        event_dim = len(self.event_shape)
        result: typing.Any = 0.0
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            result = result - _sum_rightmost(t.log_abs_det_jacobian(x, y),
                                             event_dim - t.domain.event_dim)
            y = x
        base = self.base_dist.log_prob(y)
        return result + _sum_rightmost(base, event_dim - len(self.base_dist.event_shape))

    # -- the distribution function: monotone maps of numbers only ------------------------
    def _sign(self) -> typing.Any:
        sign: typing.Any = 1
        for t in self.transforms:
            if t.event_dim != 0:
                raise NotImplementedError(
                    f"cdf and icdf need monotone maps of numbers, but {t!r} acts on "
                    f"events of {t.event_dim} dimension(s)")
            sign = sign * t.sign
        return sign

    def _monotonize(self, probability: Tensor) -> Tensor:
        """P(X <= x) as P(Y <= y): flipped (1 - p) where the composed map decreases."""
        sign = self._sign()
        if isinstance(sign, int) and sign == 1:
            return probability
        return sign * (probability - 0.5) + 0.5

    def cdf(self, value: typing.Any) -> Tensor:
        self._sign()  # (checks that every transform is monotone before inverting any)
        x = self._validate_sample(value)
        for t in reversed(self.transforms):
            x = t.inv(x)
        return self._monotonize(self.base_dist.cdf(x))

    def icdf(self, value: typing.Any) -> Tensor:
        value = as_parameter(value, self._a_parameter())
        y = self.base_dist.icdf(self._monotonize(value))
        for t in self.transforms:
            y = t(y)
        return y

    def __repr__(self) -> str:
        return f"TransformedDistribution({self.base_dist!r}, {self.transforms!r})"


class LogisticNormal(TransformedDistribution):
    r"""A normal pushed onto the simplex by stick breaking: a probability vector.

    Y = StickBreakingTransform(X), X ~ Normal(loc, scale) (independent coordinates),
    so Y has K = d + 1 positive entries summing to 1; inversely
    log(Yₖ / (1 - Σ_{j<k} Yⱼ)) + log(K - k) are the normal's coordinates.  Unlike a
    Dirichlet it has a reparameterized ``rsample`` and can correlate the entries (as a
    transformed multivariate normal).

    Parameters
    ----------
    loc : Tensor or float
        The base normal's mean, (..., d) (a number: d = 1).
    scale : Tensor or float
        Its standard deviation, > 0.
    validate_args : bool, optional
        Check the parameters and values.

    See Also
    --------
    difflab.distributions.StickBreakingTransform : The map onto the simplex.
    difflab.distributions.Dirichlet : The other distribution of probability vectors.

    Notes
    -----
    log p(y) = log N(x; loc, scale) - log|det ∂y₁..ₖ₋₁/∂x| with x = f⁻¹(y), the change of
    variables of :class:`~difflab.distributions.TransformedDistribution`.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import LogisticNormal
    >>> d = LogisticNormal(dl.zeros(2), dl.ones(2))
    >>> d.batch_shape, d.event_shape
    (difflab.Size([]), difflab.Size([3]))
    >>> round(d.log_prob(dl.tensor([0.2, 0.5, 0.3])).item(), 6)
    1.297983
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex  # type: ignore[assignment]

    def __init__(self, loc: typing.Any, scale: typing.Any,
                 validate_args: bool | None = None) -> None:
        from difflab.distributions.continuous import Normal
        from difflab.distributions.transforms import StickBreakingTransform

        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:  # (a number: a 1-vector, onto the 2-simplex)
            base = base.expand((1,))
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    @property
    def loc(self) -> Tensor:
        """The base normal's mean."""
        return self.base_dist.base_dist.loc

    @property
    def scale(self) -> Tensor:
        """The base normal's standard deviation."""
        return self.base_dist.base_dist.scale

    def expand(self, batch_shape: typing.Any, _instance: typing.Any = None) -> LogisticNormal:
        shape = tuple(batch_shape) + (self.event_shape[-1] - 1,)
        return LogisticNormal(self.loc.expand(*shape), self.scale.expand(*shape),
                              validate_args=False)

    def __repr__(self) -> str:
        return f"LogisticNormal(loc: {tuple(self.loc.shape)}, scale: {tuple(self.scale.shape)})"
