r"""Transforms: invertible maps y = f(x) with the log of their Jacobian determinant.

``torch.distributions.transforms``.  A transform is what turns one
distribution into another (:class:`~difflab.distributions.transformed.TransformedDistribution`):
if X has density p_X and f is a bijection, then Y = f(X) has density

    p_Y(y) = p_X(f⁻¹(y)) · |det ∂f⁻¹(y)/∂y| ,  so
    log p_Y(y) = log p_X(x) - log |det ∂f(x)/∂x| ,  x = f⁻¹(y).

This *change of variables* is the whole idea: a transform supplies three
things, written next to each other in each class below,

* the forward map ``t(x)``,
* its inverse ``t.inv(y)``,
* ``t.log_abs_det_jacobian(x, y)``, log |det ∂y/∂x|, one number per event.

For an elementwise map (``event_dim = 0``) the Jacobian is diagonal and its log
determinant is log |f'(x)| elementwise; a map of whole vectors (``event_dim = 1``:
stick breaking) returns one number per vector.  ``sign`` is +1 or -1 for a
monotone map of numbers (what ``cdf`` needs: a decreasing f flips it).

Everything is a composite of difflab's primitives, so gradients flow through
the map and its log-determinant in every method; the tests compare each
log-determinant with the log of the Jacobian determinant that difflab's
reverse mode computes, and with finite differences.

>>> import difflab as dl
>>> from difflab.distributions.transforms import ExpTransform
>>> t = ExpTransform()
>>> x = dl.tensor([0.0, 1.0], dtype=dl.float64)
>>> y = t(x)
>>> t.inv(y).tolist(), t.log_abs_det_jacobian(x, y).tolist()    # log|d eˣ/dx| = x
([0.0, 1.0], [0.0, 1.0])
"""

from __future__ import annotations

import math
import numbers
import typing

import numpy as np

from difflab import creation as _creation
from difflab import functions as F
from difflab import functions_joining as _joining
from difflab import functions_picking as _picking
from difflab import functions_shapes as _shapes
from difflab.distributions import constraints
from difflab.distributions.distribution import as_parameter
from difflab.nn import functional as NF
from difflab.tensor import Tensor
from difflab.tensor_arguments import Size

__all__ = [
    "AbsTransform", "AffineTransform", "ComposeTransform", "CumulativeDistributionTransform",
    "ExpTransform", "IndependentTransform", "LowerCholeskyTransform", "PowerTransform",
    "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform", "StickBreakingTransform",
    "TanhTransform", "Transform", "identity_transform",
]


def _sum_rightmost(value: typing.Any, dims: int) -> typing.Any:
    """Sum the ``dims`` rightmost dimensions (per-element log-dets → one per event)."""
    for _ in range(dims):
        value = value.sum(-1)
    return value


def _tensor(value: typing.Any, like: Tensor | None = None) -> Tensor:
    """``value`` as a floating tensor (in ``like``'s dtype when it is a plain number)."""
    if isinstance(value, Tensor) or like is None:
        return as_parameter(value)
    return _creation.tensor(value, dtype=like.dtype)


def _clamp_open_unit(y: Tensor) -> Tensor:
    """y moved into (0, 1) by the dtype's resolution: the inverse of a squashing map
    is infinite at the ends, where a rounded forward value can land."""
    info = np.finfo(y.array.dtype)
    return F.clamp(y, min=float(info.tiny), max=1.0 - float(info.eps))


class Transform:
    """An invertible map with a computable log |det Jacobian| (``torch.distributions.Transform``).

    A subclass defines ``_call`` (the forward map), ``_inverse`` and
    ``log_abs_det_jacobian``, and names its ``domain`` and ``codomain``
    constraints (``event_dim`` is the larger of their event dimensions).  Two
    transforms are equal (``==``) when they are the same map: of one class with the
    same parameters (a subclass with parameters says how in ``_same_map``; by
    default it equals only itself).

    Parameters
    ----------
    cache_size : int, optional
        0 (no caching) or 1: remember the last pair (x, y), so that ``t.inv(t(x))``
        returns the very ``x`` given (no round-off, and no inverse computed, which
        helps when the inverse is unstable: ``atanh`` near ±1).  Caching reverses the
        graph (the returned x *is* the input), as in PyTorch.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions.transforms import TanhTransform
    >>> t = TanhTransform(cache_size=1)
    >>> x = dl.tensor([20.0])
    >>> y = t(x)                      # tanh(20) rounds to 1: atanh would give inf
    >>> t.inv(y) is x
    True
    """

    bijective = False
    domain: constraints.Constraint = constraints.real
    codomain: constraints.Constraint = constraints.real

    def __init__(self, cache_size: int = 0) -> None:
        if cache_size not in (0, 1):
            raise ValueError(f"cache_size must be 0 (no cache) or 1 (the last pair), "
                             f"got {cache_size!r}")
        self._cache_size = cache_size
        self._cached: tuple[typing.Any, typing.Any] | None = None
        self._inv: _InverseTransform | None = None

    @property
    def event_dim(self) -> int:
        """How many rightmost dimensions one application acts on (0: elementwise)."""
        return max(self.domain.event_dim, self.codomain.event_dim)

    @property
    def inv(self) -> Transform:
        """The inverse transform: ``t.inv(t(x)) == x``, with the log-det negated."""
        if self._inv is None:
            self._inv = _InverseTransform(self)
        return self._inv

    @property
    def sign(self) -> typing.Any:
        """+1 for an increasing map of numbers, -1 for a decreasing one."""
        raise NotImplementedError(
            f"{type(self).__name__} is not a monotone map of numbers, so it has no sign "
            f"(cdf and icdf of a TransformedDistribution need one)")

    def with_cache(self, cache_size: int = 1) -> Transform:
        """This transform with ``cache_size`` (the same object when it already has it).

        Parameters
        ----------
        cache_size : int, optional
            0 or 1.

        Returns
        -------
        Transform
            A transform equal to this one, caching as asked.

        Examples
        --------
        >>> from difflab.distributions.transforms import ExpTransform
        >>> ExpTransform().with_cache(1)._cache_size
        1
        """
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self).__name__}.with_cache is not implemented")

    def __call__(self, x: typing.Any) -> Tensor:
        x = _tensor(x)
        if self._cache_size == 0:
            return self._call(x)
        if self._cached is not None and self._cached[0] is x:
            return self._cached[1]
        y = self._call(x)
        self._cached = (x, y)
        return y

    def _inv_call(self, y: typing.Any) -> Tensor:
        y = _tensor(y)
        if self._cache_size == 0:
            return self._inverse(y)
        if self._cached is not None and self._cached[1] is y:
            return self._cached[0]
        x = self._inverse(y)
        self._cached = (x, y)
        return x

    def _call(self, x: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not define its forward map")

    def _inverse(self, y: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not define its inverse")

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """log |det ∂y/∂x| at a pair ``y = t(x)``, one number per event.

        Parameters
        ----------
        x : Tensor
            The input.
        y : Tensor
            ``t(x)`` (passed in so that it is not computed twice).

        Returns
        -------
        Tensor
            Of shape ``x.shape`` less the transform's ``event_dim`` rightmost dimensions.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab.distributions.transforms import AffineTransform
        >>> t = AffineTransform(1.0, -2.0)
        >>> x = dl.tensor([3.0])
        >>> round(t.log_abs_det_jacobian(x, t(x)).item(), 6)          # log|-2|
        0.693147
        """
        raise NotImplementedError(
            f"{type(self).__name__} is not a bijection: it has no log-determinant")

    def forward_shape(self, shape: typing.Any) -> Size:
        """The shape of ``t(x)`` for an ``x`` of ``shape``.

        Parameters
        ----------
        shape : tuple of int
            The input's shape.

        Returns
        -------
        Size
            The output's shape (the same, for most transforms).

        Examples
        --------
        >>> from difflab.distributions.transforms import StickBreakingTransform
        >>> StickBreakingTransform().forward_shape((5, 2))
        difflab.Size([5, 3])
        """
        return Size(shape)

    def inverse_shape(self, shape: typing.Any) -> Size:
        """The shape of ``t.inv(y)`` for a ``y`` of ``shape``.

        Parameters
        ----------
        shape : tuple of int
            The output's shape.

        Returns
        -------
        Size
            The input's shape.

        Examples
        --------
        >>> from difflab.distributions.transforms import StickBreakingTransform
        >>> StickBreakingTransform().inverse_shape((3,))
        difflab.Size([2])
        """
        return Size(shape)

    # -- equality: the same map (what kl_divergence of two transformed distributions asks) --
    _stateless = False  # (a transform with no parameters: any two of its class are equal)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(self) is not type(other):
            return False
        return self._same_map(other)

    def _same_map(self, other: typing.Any) -> bool:
        """Whether ``other`` (of this class) is the same map: by default only itself."""
        return self._stateless

    def __hash__(self) -> int:
        return hash(type(self))  # (equal transforms share a class; parameters may be tensors)

    def __repr__(self) -> str:
        return type(self).__name__ + "()"


def _same_value(a: typing.Any, b: typing.Any) -> bool:
    """Two parameters (numbers or tensors) equal everywhere."""
    if a is b:
        return True
    if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
        return a == b
    a, b = _tensor(a), _tensor(b)
    try:
        return bool(F.all(a == b))
    except (ValueError, RuntimeError):  # (shapes that do not broadcast)
        return False


class _InverseTransform(Transform):
    """t⁻¹: forward and inverse swapped, the log-det negated (log|det J⁻¹| = -log|det J|)."""

    def __init__(self, transform: Transform) -> None:
        super().__init__(transform._cache_size)
        self._inv = transform  # (t.inv.inv is t)

    @property
    def domain(self):  # type: ignore[override]
        return self._inv.codomain

    @property
    def codomain(self):  # type: ignore[override]
        return self._inv.domain

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self._inv.bijective

    @property
    def sign(self) -> typing.Any:
        return self._inv.sign

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self._inv.with_cache(cache_size).inv

    def __call__(self, x: typing.Any) -> Tensor:
        return self._inv._inv_call(x)

    def _inv_call(self, y: typing.Any) -> Tensor:
        return self._inv(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -self._inv.log_abs_det_jacobian(y, x)

    def _same_map(self, other):
        return self._inv == other._inv

    def forward_shape(self, shape: typing.Any) -> Size:
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape: typing.Any) -> Size:
        return self._inv.forward_shape(shape)

    def __repr__(self) -> str:
        return f"{self._inv!r}.inv"


# -- elementwise bijections: forward, inverse, log|f'(x)| ---------------------------------

class ExpTransform(Transform):
    r"""y = exp(x), from the real line onto (0, ∞).

    forward y = eˣ;  inverse x = log y;  log|dy/dx| = x.  ``LogNormal(μ, σ)`` is
    ``Normal(μ, σ)`` pushed through this map.

    Parameters
    ----------
    cache_size : int, optional
        0 or 1 (see :class:`Transform`).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions.transforms import ExpTransform
    >>> ExpTransform()(dl.tensor([0.0])).tolist()
    [1.0]
    """

    bijective = True
    domain = constraints.real
    codomain = constraints.positive
    sign = 1
    _stateless = True

    def _call(self, x):
        return F.exp(x)

    def _inverse(self, y):
        return F.log(y)

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    r"""y = xᵃ on (0, ∞).

    forward y = xᵃ;  inverse x = y^(1/a);  log|dy/dx| = log|a xᵃ⁻¹| = log|a y / x|.
    Decreasing (sign -1) for a < 0.

    Parameters
    ----------
    exponent : Tensor or float
        a, not 0.
    cache_size : int, optional
        0 or 1 (see :class:`Transform`).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions.transforms import PowerTransform
    >>> t = PowerTransform(2.0)
    >>> t(dl.tensor([3.0])).tolist(), t.inv(dl.tensor([16.0])).tolist()
    ([9.0], [4.0])
    """

    bijective = True
    domain = constraints.positive
    codomain = constraints.positive

    def __init__(self, exponent: typing.Any, cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.exponent = exponent
        if not bool(F.all(_tensor(exponent) != 0)):
            raise ValueError("PowerTransform's exponent must not be 0 (x⁰ = 1 is not "
                             "invertible)")

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self if cache_size == self._cache_size else PowerTransform(self.exponent,
                                                                          cache_size)

    @property
    def sign(self) -> typing.Any:
        if isinstance(self.exponent, numbers.Number):
            return 1 if self.exponent > 0 else -1
        return F.sign(self.exponent)

    def _same_map(self, other):
        return _same_value(self.exponent, other.exponent)

    def _call(self, x):
        return x ** self.exponent

    def _inverse(self, y):
        return y ** (1 / _tensor(self.exponent, y))

    def log_abs_det_jacobian(self, x, y):
        return F.log(F.abs(self.exponent * y / x))

    def __repr__(self) -> str:
        return f"PowerTransform(exponent={self.exponent})"


class SigmoidTransform(Transform):
    r"""y = σ(x) = 1/(1 + e⁻ˣ), from the real line onto (0, 1).

    forward y = σ(x);  inverse x = logit y = log y - log(1 - y);
    log|dy/dx| = log σ(x)(1 - σ(x)) = -softplus(-x) - softplus(x)
    (written with softplus: finite for large |x|, where σ(x)(1 - σ(x)) rounds to 0).

    Parameters
    ----------
    cache_size : int, optional
        0 or 1 (see :class:`Transform`).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions.transforms import SigmoidTransform
    >>> SigmoidTransform()(dl.tensor([0.0])).tolist()
    [0.5]
    """

    bijective = True
    domain = constraints.real
    codomain = constraints.unit_interval
    sign = 1
    _stateless = True

    def _call(self, x):
        return F.sigmoid(x)

    def _inverse(self, y):
        y = _clamp_open_unit(y)
        return F.log(y) - F.log1p(-y)

    def log_abs_det_jacobian(self, x, y):
        return -NF.softplus(-x) - NF.softplus(x)


class TanhTransform(Transform):
    r"""y = tanh(x), from the real line onto (-1, 1): the squashing of SAC's actions.

    forward y = tanh x;  inverse x = atanh y;
    log|dy/dx| = log(1 - tanh²x) = 2 (log 2 - x - softplus(-2x))
    (the second form is finite for large |x|, where 1 - tanh²x rounds to 0).
    The inverse is infinite at y = ±1, where tanh of a large x rounds: pass
    ``cache_size=1`` to get the x back instead.

    Parameters
    ----------
    cache_size : int, optional
        0 or 1 (see :class:`Transform`).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions.transforms import TanhTransform
    >>> t = TanhTransform()
    >>> x = dl.tensor([0.0])
    >>> t(x).tolist(), t.log_abs_det_jacobian(x, t(x)).tolist()
    ([0.0], [0.0])
    """

    bijective = True
    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    sign = 1
    _stateless = True

    def _call(self, x):
        return F.tanh(x)

    def _inverse(self, y):
        return F.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (math.log(2.0) - x - NF.softplus(-2.0 * x))


class SoftplusTransform(Transform):
    r"""y = softplus(x) = log(1 + eˣ), from the real line onto (0, ∞).

    forward y = log(1 + eˣ);  inverse x = log(eʸ - 1) = y + log(1 - e⁻ʸ);
    log|dy/dx| = log σ(x) = -softplus(-x).

    Parameters
    ----------
    cache_size : int, optional
        0 or 1 (see :class:`Transform`).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions.transforms import SoftplusTransform
    >>> round(SoftplusTransform()(dl.tensor([0.0])).item(), 6)       # log 2
    0.693147
    """

    bijective = True
    domain = constraints.real
    codomain = constraints.positive
    sign = 1
    _stateless = True

    def _call(self, x):
        return NF.softplus(x)

    def _inverse(self, y):
        return y + F.log(-F.expm1(-y))

    def log_abs_det_jacobian(self, x, y):
        return -NF.softplus(-x)


class AffineTransform(Transform):
    r"""y = loc + scale · x, elementwise (events of ``event_dim`` dimensions).

    forward y = loc + scale·x;  inverse x = (y - loc)/scale;
    log|det ∂y/∂x| = Σ log|scale| over the event's elements.

    Parameters
    ----------
    loc : Tensor or float
        The shift.
    scale : Tensor or float
        The factor, not 0 (negative: a decreasing map, ``sign`` -1).
    event_dim : int, optional
        How many rightmost dimensions form one event (its log-det is summed over them).
    cache_size : int, optional
        0 or 1 (see :class:`Transform`).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions.transforms import AffineTransform
    >>> t = AffineTransform(1.0, 2.0, event_dim=1)
    >>> x = dl.tensor([0.0, 1.0, 2.0])
    >>> t(x).tolist(), round(t.log_abs_det_jacobian(x, t(x)).item(), 6)     # 3 log 2
    ([1.0, 3.0, 5.0], 2.079442)
    """

    bijective = True

    def __init__(self, loc: typing.Any, scale: typing.Any, event_dim: int = 0,
                 cache_size: int = 0) -> None:
        super().__init__(cache_size)
        if not isinstance(event_dim, int) or event_dim < 0:
            raise ValueError(f"event_dim must be an int >= 0, got {event_dim!r}")
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    def with_cache(self, cache_size: int = 1) -> Transform:
        if cache_size == self._cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size)

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @property
    def domain(self):  # type: ignore[override]
        return constraints.independent(constraints.real, self._event_dim) if self._event_dim \
            else constraints.real

    codomain = domain

    @property
    def sign(self) -> typing.Any:
        if isinstance(self.scale, numbers.Number):
            return 1 if self.scale > 0 else -1 if self.scale < 0 else 0
        return F.sign(self.scale)

    def _same_map(self, other):
        return (self._event_dim == other._event_dim and _same_value(self.loc, other.loc)
                and _same_value(self.scale, other.scale))

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        log_scale = F.log(F.abs(_tensor(self.scale, x)))
        log_scale = _joining.broadcast_tensors(log_scale, x)[0]
        return _sum_rightmost(log_scale, self._event_dim)

    def forward_shape(self, shape):
        loc, scale = _tensor(self.loc), _tensor(self.scale)
        return Size(_joining.broadcast_shapes(tuple(shape), tuple(loc.shape),
                                               tuple(scale.shape)))

    inverse_shape = forward_shape

    def __repr__(self) -> str:
        return f"AffineTransform(loc={self.loc}, scale={self.scale}, event_dim={self._event_dim})"


class CumulativeDistributionTransform(Transform):
    r"""y = F(x), a distribution's cdf: from its support onto (0, 1).

    forward y = cdf(x);  inverse x = icdf(y);  log|dy/dx| = log p(x), the density.
    Pushes a distribution to the uniform (the probability integral transform).

    Parameters
    ----------
    distribution : Distribution
        A distribution of numbers with ``cdf``, ``icdf`` and ``log_prob``.
    cache_size : int, optional
        0 or 1 (see :class:`Transform`).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import Normal
    >>> from difflab.distributions.transforms import CumulativeDistributionTransform
    >>> CumulativeDistributionTransform(Normal(0.0, 1.0))(dl.tensor([0.0])).tolist()
    [0.5]
    """

    bijective = True
    codomain = constraints.unit_interval
    sign = 1

    def __init__(self, distribution: typing.Any, cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.distribution = distribution

    @property
    def domain(self):  # type: ignore[override]
        return self.distribution.support

    def with_cache(self, cache_size: int = 1) -> Transform:
        if cache_size == self._cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size)

    def _same_map(self, other):
        return self.distribution is other.distribution

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)


# -- maps that are not bijections of numbers ----------------------------------------------

class AbsTransform(Transform):
    """y = |x|: not a bijection (x and -x meet); its ``inv`` picks the positive root.

    Parameters
    ----------
    cache_size : int, optional
        0 or 1 (see :class:`Transform`).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions.transforms import AbsTransform
    >>> AbsTransform()(dl.tensor([-2.0, 3.0])).tolist()
    [2.0, 3.0]
    """

    domain = constraints.real
    codomain = constraints.nonnegative
    _stateless = True

    def _call(self, x):
        return F.abs(x)

    def _inverse(self, y):
        return y


class SoftmaxTransform(Transform):
    """y = softmax(x) along the last dimension, onto the simplex: not a bijection.

    Adding a constant to x leaves y unchanged, so ``inv`` returns one preimage,
    log y, and there is no log-determinant (:class:`StickBreakingTransform` is the
    bijection onto the simplex).

    Parameters
    ----------
    cache_size : int, optional
        0 or 1 (see :class:`Transform`).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions.transforms import SoftmaxTransform
    >>> SoftmaxTransform()(dl.tensor([0.0, 0.0])).tolist()
    [0.5, 0.5]
    """

    domain = constraints.real_vector
    codomain = constraints.simplex
    _stateless = True

    def _call(self, x):
        return F.softmax(x, -1)

    def _inverse(self, y):
        return F.log(y)


class StickBreakingTransform(Transform):
    r"""A bijection from ℝᴷ⁻¹ onto the K-simplex, by breaking a stick.

    forward: zₖ = σ(xₖ - log(K - k)) (k = 1 … K-1) is the fraction of the stick
    left that piece k takes: yₖ = zₖ ∏_{j<k}(1 - zⱼ), and y_K is what is left.
    The shift by log(K - k) sends x = 0 to the simplex's centre.
    inverse: zₖ = yₖ / (1 - Σ_{j<k} yⱼ), xₖ = logit zₖ + log(K - k).
    log|det ∂y₁..ₖ₋₁/∂x| = Σₖ log zₖ(1 - zₖ) ∏_{j<k}(1 - zⱼ)
    = Σₖ (-x'ₖ + log σ(x'ₖ) + log yₖ), x'ₖ = xₖ - log(K - k)
    (the Jacobian of the first K-1 outputs is triangular; y_K is determined by them).

    Parameters
    ----------
    cache_size : int, optional
        0 or 1 (see :class:`Transform`).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions.transforms import StickBreakingTransform
    >>> [round(v, 6) for v in StickBreakingTransform()(dl.zeros(2)).tolist()]
    [0.333333, 0.333333, 0.333333]
    """

    bijective = True
    domain = constraints.real_vector
    codomain = constraints.simplex
    _stateless = True

    def _offset(self, x: Tensor, k: int) -> Tensor:
        """log(K - k) for k = 1 … K-1, with K - 1 = ``k``."""
        return F.log(_creation.arange(k, 0, -1, dtype=x.dtype))

    def _call(self, x):
        shifted = x - self._offset(x, x.shape[-1])
        z = F.sigmoid(shifted)
        left = F.cumprod(1 - z, -1)                               # ∏_{j<=k}(1 - zⱼ)
        ones = _creation.ones_like(z[..., :1])
        return _shapes.cat([z, ones], -1) * _shapes.cat([ones, left], -1)

    def _inverse(self, y):
        pieces = y[..., :-1]
        k = pieces.shape[-1]
        left = 1 - F.cumsum(pieces, -1) + pieces                  # 1 - Σ_{j<k} yⱼ
        z = _clamp_open_unit(pieces / left)
        return F.log(z) - F.log1p(-z) + self._offset(y, k)

    def log_abs_det_jacobian(self, x, y):
        shifted = x - self._offset(x, x.shape[-1])
        return (-shifted + NF.logsigmoid(shifted) + F.log(y[..., :-1])).sum(-1)

    def forward_shape(self, shape):
        shape = tuple(shape)
        if not shape:
            raise ValueError("StickBreakingTransform acts on vectors: its input needs at "
                             "least one dimension")
        return Size(shape[:-1] + (shape[-1] + 1,))

    def inverse_shape(self, shape):
        shape = tuple(shape)
        if not shape:
            raise ValueError("StickBreakingTransform's inverse acts on vectors: its input "
                             "needs at least one dimension")
        return Size(shape[:-1] + (shape[-1] - 1,))


class LowerCholeskyTransform(Transform):
    r"""A square matrix onto a lower-triangular one with a positive diagonal (a Cholesky factor).

    forward: keep the strictly lower triangle, exponentiate the diagonal, drop the upper
    triangle: L = tril(x, -1) + diag(exp(diag x));  inverse: tril(L, -1) + diag(log(diag L)).
    Not a bijection of square matrices (the upper triangle is forgotten), so there is
    no log-determinant; it is ``transform_to(constraints.lower_cholesky)``, the way to
    optimize a covariance's ``scale_tril`` freely.

    Parameters
    ----------
    cache_size : int, optional
        0 or 1 (see :class:`Transform`).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions.transforms import LowerCholeskyTransform
    >>> LowerCholeskyTransform()(dl.tensor([[0.0, 5.0], [2.0, 0.0]])).tolist()
    [[1.0, 0.0], [2.0, 1.0]]
    """

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky
    _stateless = True

    def _call(self, x):
        diagonal = _picking.diagonal(x, 0, -2, -1)
        return x.tril(-1) + _picking.diag_embed(F.exp(diagonal))

    def _inverse(self, y):
        diagonal = _picking.diagonal(y, 0, -2, -1)
        return y.tril(-1) + _picking.diag_embed(F.log(diagonal))


# -- building transforms from transforms --------------------------------------------------

def _check_transform(t: typing.Any, where: str) -> Transform:
    if not isinstance(t, Transform):
        raise TypeError(f"{where} must be a Transform (difflab.distributions.transforms), "
                        f"got {type(t).__name__}: {t!r}")
    return t


class ComposeTransform(Transform):
    r"""The transforms one after another: y = f_n(… f_2(f_1(x))).

    forward: apply the parts in order;  inverse: their inverses in reverse order;
    log|det ∂y/∂x| = Σᵢ log|det ∂xᵢ/∂xᵢ₋₁| (the chain rule: the determinant of a
    product of Jacobians is the product of their determinants), each part's term
    summed over the dimensions that are events for the whole but not for it.

    Parameters
    ----------
    parts : list of Transform
        The transforms, first applied first.  An empty list is the identity.
    cache_size : int, optional
        0 or 1 (see :class:`Transform`).

    Returns
    -------
    Tensor
        Called, ``t(x)``: the parts applied in order (the empty composition,
        ``identity_transform``, returns x).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions.transforms import (AffineTransform, ComposeTransform,
    ...                                               ExpTransform)
    >>> t = ComposeTransform([AffineTransform(0.0, 2.0), ExpTransform()])   # y = e^(2x)
    >>> x = dl.tensor([1.0])
    >>> round(t.log_abs_det_jacobian(x, t(x)).item(), 6)       # log 2 + 2x
    2.693147
    """

    def __init__(self, parts: typing.Sequence[Transform], cache_size: int = 0) -> None:
        if isinstance(parts, Transform) or not isinstance(parts, (list, tuple)):
            raise TypeError(f"ComposeTransform takes a list of Transforms, got "
                            f"{type(parts).__name__}")
        self.parts = [_check_transform(p, f"ComposeTransform's part {i}")
                      for i, p in enumerate(parts)]
        if cache_size:
            self.parts = [p.with_cache(cache_size) for p in self.parts]
        super().__init__(cache_size)

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self if cache_size == self._cache_size else ComposeTransform(self.parts,
                                                                            cache_size)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(p.bijective for p in self.parts)

    @property
    def domain(self):  # type: ignore[override]
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim = max(event_dim + part.domain.event_dim - part.codomain.event_dim,
                            part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @property
    def codomain(self):  # type: ignore[override]
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim = max(event_dim + part.codomain.event_dim - part.domain.event_dim,
                            part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def sign(self) -> typing.Any:
        result: typing.Any = 1
        for part in self.parts:
            result = result * part.sign
        return result

    def _same_map(self, other):
        return self.parts == other.parts

    def _call(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def _inverse(self, y):
        for part in reversed(self.parts):
            y = part.inv(y)
        return y

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return _sum_rightmost(_creation.zeros_like(x), self.domain.event_dim)
        intermediates = [x]
        for part in self.parts[:-1]:
            intermediates.append(part(intermediates[-1]))
        intermediates.append(y)
        total: typing.Any = 0.0
        event_dim = self.domain.event_dim
        for part, before, after in zip(self.parts, intermediates[:-1], intermediates[1:]):
            term = part.log_abs_det_jacobian(before, after)
            total = total + _sum_rightmost(term, event_dim - part.domain.event_dim)
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return total

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return Size(shape)

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return Size(shape)

    def __repr__(self) -> str:
        return "ComposeTransform([" + ", ".join(repr(p) for p in self.parts) + "])"


class IndependentTransform(Transform):
    """A transform whose ``reinterpreted_batch_ndims`` rightmost dimensions become events.

    forward and inverse: the base transform's;  log|det|: the base's, summed over
    those dimensions (one number per event, as :class:`~difflab.distributions.Independent`
    sums log-densities).

    Parameters
    ----------
    base_transform : Transform
        The transform applied.
    reinterpreted_batch_ndims : int
        How many more rightmost dimensions form one event.
    cache_size : int, optional
        0 or 1 (see :class:`Transform`).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions.transforms import ExpTransform, IndependentTransform
    >>> t = IndependentTransform(ExpTransform(), 1)
    >>> x = dl.tensor([1.0, 2.0])
    >>> t.log_abs_det_jacobian(x, t(x)).item()
    3.0
    """

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int,
                 cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.base_transform = _check_transform(base_transform, "base_transform")
        if cache_size:
            self.base_transform = self.base_transform.with_cache(cache_size)
        if not isinstance(reinterpreted_batch_ndims, int) or reinterpreted_batch_ndims < 0:
            raise ValueError(f"reinterpreted_batch_ndims must be an int >= 0, got "
                             f"{reinterpreted_batch_ndims!r}")
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size: int = 1) -> Transform:
        if cache_size == self._cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self.base_transform.bijective

    @property
    def domain(self):  # type: ignore[override]
        return constraints.independent(self.base_transform.domain,
                                       self.reinterpreted_batch_ndims)

    @property
    def codomain(self):  # type: ignore[override]
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    @property
    def sign(self) -> typing.Any:
        return self.base_transform.sign

    def _same_map(self, other):
        return (self.reinterpreted_batch_ndims == other.reinterpreted_batch_ndims
                and self.base_transform == other.base_transform)

    def _call(self, x):
        return self.base_transform(x)

    def _inverse(self, y):
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y),
                              self.reinterpreted_batch_ndims)

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)

    def __repr__(self) -> str:
        return f"IndependentTransform({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


#: The identity map (an empty composition): y = x, log|det| = 0.
identity_transform = ComposeTransform([])
