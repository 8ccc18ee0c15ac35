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
The base class and the two ways to combine transforms (``ComposeTransform``,
``IndependentTransform``) are in :mod:`difflab.distributions.transform_base`, and
importable from here, as from PyTorch's module.

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
from difflab.distributions.transform_base import (
    CatTransform,
    ComposeTransform,
    IndependentTransform,
    StackTransform,
    Transform,
    _same_value,
    _sum_rightmost,
    _tensor,
    identity_transform,
)
from difflab.dtype_info import finfo
from difflab.nn import functional as NF
from difflab.tensor import Tensor
from difflab.tensor_arguments import Size

__all__ = [
    "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
    "CorrCholeskyTransform", "CumulativeDistributionTransform", "ExpTransform",
    "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
    "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
    "SoftplusTransform", "StackTransform", "StickBreakingTransform", "TanhTransform",
    "Transform", "identity_transform",
]


def _clamp_open_unit(y: Tensor) -> Tensor:
    """y moved into (0, 1) by the dtype's resolution: the inverse of a squashing map
    is infinite at the ends, where a rounded forward value can land."""
    info = finfo(y.dtype)
    return F.clamp(y, min=info.tiny, max=1.0 - info.eps)


def _tril_matrix_to_vec(matrix: Tensor, diag: int = 0) -> Tensor:
    """The entries of (..., n, n) on and below the ``diag``-th diagonal, row by row (..., N)."""
    rows, cols = np.tril_indices(matrix.shape[-1], diag)
    return matrix[..., rows, cols]


def _vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The inverse of ``_tril_matrix_to_vec``: the vector's entries placed row by row
    on and below the ``diag``-th diagonal of an (..., n, n) matrix, zeros elsewhere
    (a gather from the vector with a zero appended, so gradients reach every entry)."""
    count = vec.shape[-1]   # n is the positive root of n² + (1 + 2 diag) n - ... = 2 count
    b = 1 + 2 * diag
    n = round((-b + math.sqrt(b * b + 8 * count + 4 * abs(diag) * (diag + 1))) / 2)
    if len(np.tril_indices(n, diag)[0]) != count:
        raise ValueError(f"a vector of {count} entries is not the part on and below "
                         f"diagonal {diag} of a square matrix")
    index = np.full((n, n), count)                 # (points at the appended zero)
    index[np.tril_indices(n, diag)] = np.arange(count)
    zero = _creation.zeros(tuple(vec.shape[:-1]) + (1,), dtype=vec.dtype, device=vec.device)
    padded = _shapes.cat([vec, zero], -1)
    return padded[..., index]

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
        return _clamp_open_unit(F.sigmoid(x))   # (as PyTorch's: 1 is no value of the inverse)

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
        return F.log(_creation.arange(k, 0, -1, dtype=x.dtype, device=x.device))

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


class PositiveDefiniteTransform(Transform):
    r"""A square matrix onto a symmetric positive definite one: y = L Lᵀ, L its Cholesky factor.

    forward: L = :class:`LowerCholeskyTransform` (x), y = L Lᵀ;  inverse: the Cholesky
    factor of y (``linalg.cholesky``) mapped back by ``LowerCholeskyTransform``'s inverse.
    Like ``LowerCholeskyTransform`` it forgets x's upper triangle, so it is not a
    bijection and has no log-determinant; it is ``transform_to(constraints.positive_definite)``
    (and of ``positive_semidefinite``): the way to optimize a covariance matrix freely.

    Parameters
    ----------
    cache_size : int, optional
        0 or 1 (see :class:`Transform`).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions.transforms import PositiveDefiniteTransform
    >>> t = PositiveDefiniteTransform()
    >>> y = t(dl.tensor([[0.0, 7.0], [2.0, 0.0]]))        # L = [[1, 0], [2, 1]]
    >>> y.tolist(), t.inv(y).tolist()
    ([[1.0, 2.0], [2.0, 5.0]], [[0.0, 0.0], [2.0, 0.0]])
    """

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite
    _stateless = True

    def _call(self, x):
        factor = LowerCholeskyTransform()(x)
        return factor @ factor.transpose(-1, -2)

    def _inverse(self, y):
        from difflab import linalg

        return LowerCholeskyTransform().inv(linalg.cholesky(y))


class CorrCholeskyTransform(Transform):
    r"""A vector of D(D-1)/2 reals onto the Cholesky factor of a D×D correlation matrix.

    The factor L is lower triangular with a positive diagonal and rows of unit length, so
    L Lᵀ has ones on its diagonal.  forward: rᵢⱼ = tanh xₖ fills the strict lower
    triangle row by row (k counts the entries); row i is a *signed* stick breaking:
    each entry takes its share rᵢⱼ of the length still left,

    .. math::

        L_{ij} = r_{ij} \sqrt{\textstyle\prod_{k<j} (1 - r_{ik}^2)}, \qquad
        L_{ii} = \sqrt{\textstyle\prod_{k<i} (1 - r_{ik}^2)} ,

    inverse: rᵢⱼ = Lᵢⱼ / √(1 - Σ_{k<j} Lᵢₖ²), x = atanh r.  The Jacobian of x onto the
    strict lower triangle of L is triangular, so

    .. math::

        \log|\det J| = \sum_{i>j} \Big[\tfrac12 \log\big(1 - \textstyle\sum_{k<j} L_{ik}^2\big)
                       + \log(1 - \tanh^2 x_{ij})\Big]

    (the diagonal is fixed by the rest, as stick breaking's last piece).  It is
    ``biject_to(constraints.corr_cholesky)``, the support of
    :class:`~difflab.distributions.LKJCholesky`.

    Parameters
    ----------
    cache_size : int, optional
        0 or 1 (see :class:`Transform`).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions.transforms import CorrCholeskyTransform
    >>> t = CorrCholeskyTransform()
    >>> L = t(dl.tensor([0.5, -1.0, 2.0], dtype=dl.float64))
    >>> tuple(L.shape), [round(v, 6) for v in (L * L).sum(-1).tolist()]   # unit rows
    ((3, 3), [1.0, 1.0, 1.0])
    >>> [round(v, 6) for v in t.inv(L).tolist()]
    [0.5, -1.0, 2.0]
    """

    bijective = True
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    _stateless = True

    def _call(self, x):
        self.forward_shape(x.shape)                             # (the clear error first)
        eps = finfo(x.dtype).eps
        r = _vec_to_tril_matrix(F.clamp(F.tanh(x), min=-1 + eps, max=1 - eps), diag=-1)
        left = F.cumprod(F.sqrt(1 - r * r), -1)                 # √∏_{k<=j}(1 - rᵢₖ²)
        shifted = _shapes.cat([_creation.ones_like(left[..., :1]), left[..., :-1]], -1)
        identity = _creation.eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return (r + identity) * shifted

    def _inverse(self, y):
        self.inverse_shape(y.shape)
        left = 1 - F.cumsum(y * y, -1)                           # 1 - Σ_{k<=j} Lᵢₖ²
        shifted = _shapes.cat([_creation.ones_like(left[..., :1]), left[..., :-1]], -1)
        r = _tril_matrix_to_vec(y, -1) / F.sqrt(_tril_matrix_to_vec(shifted, -1))
        return F.atanh(r)

    def log_abs_det_jacobian(self, x, y):
        left = 1 - F.cumsum(y * y, -1)
        stick_breaking = 0.5 * F.log(_tril_matrix_to_vec(left, -2)).sum(-1)
        tanh = -2.0 * (x + NF.softplus(-2.0 * x) - math.log(2.0)).sum(-1)
        return stick_breaking + tanh

    def forward_shape(self, shape):
        shape = tuple(shape)
        if not shape:
            raise ValueError("CorrCholeskyTransform acts on vectors: its input needs at "
                             "least one dimension")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError(f"CorrCholeskyTransform takes vectors of D(D-1)/2 entries (0, 1, "
                             f"3, 6, 10, ...: the strict lower triangle of a DxD matrix), "
                             f"got {n}")
        return Size(shape[:-1] + (d, d))

    def inverse_shape(self, shape):
        shape = tuple(shape)
        if len(shape) < 2 or shape[-1] != shape[-2]:
            raise ValueError(f"CorrCholeskyTransform's inverse takes square matrices "
                             f"(..., D, D), got shape {shape}")
        d = shape[-1]
        return Size(shape[:-2] + (d * (d - 1) // 2,))


class ReshapeTransform(Transform):
    r"""The rightmost dimensions reshaped: events of ``in_shape`` become events of ``out_shape``.

    forward: ``x.reshape(batch + out_shape)``;  inverse: back to ``batch + in_shape``;
    log|det| = 0 (a reshape only renames the coordinates: its Jacobian is a permutation
    of the identity).  A flow uses it between layers that want different shapes.

    Parameters
    ----------
    in_shape : tuple of int
        The shape of one input event.
    out_shape : tuple of int
        The shape of one output event, with as many elements.
    cache_size : int, optional
        0 or 1 (see :class:`Transform`).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions.transforms import ReshapeTransform
    >>> t = ReshapeTransform((2, 3), (6,))
    >>> x = dl.zeros(4, 2, 3)
    >>> tuple(t(x).shape), tuple(t.log_abs_det_jacobian(x, t(x)).shape)
    ((4, 6), (4,))
    """

    bijective = True

    def __init__(self, in_shape: typing.Any, out_shape: typing.Any,
                 cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.in_shape, self.out_shape = Size(in_shape), Size(out_shape)
        if math.prod(self.in_shape) != math.prod(self.out_shape):
            raise ValueError(f"ReshapeTransform's shapes must hold as many elements: "
                             f"{tuple(self.in_shape)} has {math.prod(self.in_shape)}, "
                             f"{tuple(self.out_shape)} has {math.prod(self.out_shape)}")

    def with_cache(self, cache_size: int = 1) -> Transform:
        if cache_size == self._cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size)

    @property
    def domain(self):  # type: ignore[override]
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self):  # type: ignore[override]
        return constraints.independent(constraints.real, len(self.out_shape))

    def _same_map(self, other):
        return self.in_shape == other.in_shape and self.out_shape == other.out_shape

    def _batch(self, shape: typing.Any, event: Size, name: str) -> tuple[int, ...]:
        shape, n = tuple(shape), len(event)
        if len(shape) < n or tuple(shape[len(shape) - n:]) != tuple(event):
            raise ValueError(f"ReshapeTransform expects a {name} whose rightmost dimensions "
                             f"are {tuple(event)}, got shape {shape}")
        return shape[:len(shape) - n]

    def _call(self, x):
        return x.reshape(self._batch(x.shape, self.in_shape, "input") + tuple(self.out_shape))

    def _inverse(self, y):
        return y.reshape(self._batch(y.shape, self.out_shape, "value") + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        return _creation.zeros(self._batch(x.shape, self.in_shape, "input"), dtype=x.dtype,
                               device=x.device)

    def forward_shape(self, shape):
        return Size(self._batch(shape, self.in_shape, "input") + tuple(self.out_shape))

    def inverse_shape(self, shape):
        return Size(self._batch(shape, self.out_shape, "value") + tuple(self.in_shape))

    def __repr__(self) -> str:
        return f"ReshapeTransform({tuple(self.in_shape)}, {tuple(self.out_shape)})"
