r"""Distributions of vectors built from others: MultivariateNormal and Independent.

The multivariate normal is parameterized by a lower-triangular ``scale_tril``
L with covariance Σ = L Lᵀ; given ``covariance_matrix`` it takes the
Cholesky factor by the Cholesky-Banachiewicz recurrence written with
difflab's operations (d² batched steps), so gradients reach Σ too.  Its
log density solves L z = x - μ by forward substitution (d batched steps).
Both loops run over the event's d dimensions, never over the elements of a
batch; for large d they wait for ``linalg.cholesky`` and
``linalg.solve_triangular``.

>>> import difflab as dl
>>> from difflab.distributions import MultivariateNormal
>>> d = MultivariateNormal(dl.zeros(2), covariance_matrix=dl.tensor([[4.0, 0.0], [0.0, 1.0]]))
>>> d.scale_tril.tolist()
[[2.0, 0.0], [0.0, 1.0]]
"""

from __future__ import annotations

import math
import typing

from difflab import creation as _creation
from difflab import functions as F
from difflab import functions_joining as _joining
from difflab import functions_picking as _picking
from difflab.distributions import constraints
from difflab.distributions.continuous import _standard
from difflab.distributions.distribution import Distribution, as_parameter
from difflab.tensor import Tensor

__all__ = ["Independent", "LowRankMultivariateNormal", "MultivariateNormal"]


def cholesky(a: Tensor) -> Tensor:
    """The lower Cholesky factor L of symmetric positive definite matrices a = L Lᵀ.

    Lᵢⱼ = (aᵢⱼ - Σₖ<ⱼ Lᵢₖ Lⱼₖ) / Lⱼⱼ below the diagonal, Lⱼⱼ = √(aⱼⱼ - Σₖ<ⱼ Lⱼₖ²).
    """
    d = a.shape[-1]
    rows: list[list[Tensor]] = [[] for _ in range(d)]
    zero = a[..., 0, 0] * 0.0
    for j in range(d):
        pivot = a[..., j, j] - sum((rows[j][k] ** 2 for k in range(j)), zero)
        if not bool(F.all(pivot.detach() > 0)):
            raise ValueError("covariance_matrix must be positive definite (its Cholesky "
                             f"factorization found a pivot <= 0 at row {j})")
        rows[j].append(F.sqrt(pivot))
        for i in range(j + 1, d):
            below = a[..., i, j] - sum((rows[i][k] * rows[j][k] for k in range(j)), zero)
            rows[i].append(below / rows[j][j])
    full = [row + [zero] * (d - len(row)) for row in rows]
    return F.stack([F.stack(row, -1) for row in full], -2)


def _solve_lower(scale_tril: Tensor, b: Tensor) -> Tensor:
    """z with L z = b, by forward substitution over the d rows (batched)."""
    zs: list[Tensor] = []
    for i in range(scale_tril.shape[-1]):
        acc = b[..., i]
        if zs:
            acc = acc - (scale_tril[..., i, :i] * F.stack(zs, -1)).sum(-1)
        zs.append(acc / scale_tril[..., i, i])
    return F.stack(zs, -1)


class MultivariateNormal(Distribution):
    """The normal distribution of vectors: mean μ, covariance Σ = L Lᵀ.

    Parameters
    ----------
    loc : Tensor
        The mean, of shape (..., d).
    covariance_matrix : Tensor, optional
        Σ, symmetric positive definite, (..., d, d).
    scale_tril : Tensor, optional
        L, lower triangular with a positive diagonal (give exactly one of the two;
        ``precision_matrix`` waits for ``linalg.inv``).
    validate_args : bool, optional
        Check the parameters and values.

    Notes
    -----
    rsample: x = μ + L ε with ε ~ N(0, I), so gradients reach μ and L (and Σ).
    log p(x) = -½|z|² - Σᵢ log Lᵢᵢ - (d/2) log 2π with L z = x - μ.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import MultivariateNormal
    >>> d = MultivariateNormal(dl.zeros(2), scale_tril=dl.eye(2))
    >>> round(d.log_prob(dl.zeros(2)).item(), 6), round(d.entropy().item(), 6)
    (-1.837877, 2.837877)
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: typing.Any, covariance_matrix: typing.Any = None,
                 precision_matrix: typing.Any = None, scale_tril: typing.Any = None,
                 validate_args: bool | None = None) -> None:
        if precision_matrix is not None:
            raise NotImplementedError("MultivariateNormal(precision_matrix=...) waits for "
                                      "linalg.inv; pass covariance_matrix or scale_tril")
        if (covariance_matrix is None) == (scale_tril is None):
            raise ValueError("MultivariateNormal takes exactly one of covariance_matrix and "
                             "scale_tril")
        loc = as_parameter(loc, scale_tril if scale_tril is not None else covariance_matrix)
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional (the vector's d entries)")
        self._param = "scale_tril" if scale_tril is not None else "covariance_matrix"
        matrix = as_parameter(scale_tril if scale_tril is not None else covariance_matrix)
        if matrix.dim() < 2 or matrix.shape[-1] != matrix.shape[-2] \
                or matrix.shape[-1] != loc.shape[-1]:
            raise ValueError(f"{self._param} must be (..., d, d) with d = loc's last size "
                             f"{loc.shape[-1]}, got shape {tuple(matrix.shape)}")
        batch = _joining.broadcast_shapes(tuple(loc.shape[:-1]), tuple(matrix.shape[:-2]))
        d = loc.shape[-1]
        self.loc = loc.expand(*batch, d)
        if scale_tril is not None:
            self.scale_tril = matrix.expand(*batch, d, d)
        else:
            self.covariance_matrix = matrix.expand(*batch, d, d)
        super().__init__(batch, (d,), validate_args)
        if scale_tril is None:
            self.scale_tril = cholesky(self.covariance_matrix)

    def _given(self) -> tuple[str, ...]:
        return ("loc", self._param)

    def __getattr__(self, name: str) -> typing.Any:
        if name == "covariance_matrix":  # (from L when built from it)
            tril = self.__dict__["scale_tril"]
            return tril @ tril.transpose(-1, -2)
        raise AttributeError(f"'MultivariateNormal' object has no attribute {name!r}")

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return (self.scale_tril ** 2).sum(-1)

    def rsample(self, sample_shape: typing.Any = ()) -> Tensor:
        eps = _standard(self, sample_shape, "normal", self.loc)
        return self.loc + (self.scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self) -> Tensor:
        return F.log(_picking.diagonal(self.scale_tril, 0, -2, -1)).sum(-1)

    def log_prob(self, value: typing.Any) -> Tensor:
        value = self._validate_sample(value)
        z = _solve_lower(self.scale_tril, value - self.loc)
        d = self._event_shape[0]
        return -0.5 * (z * z).sum(-1) - self._half_log_det() - 0.5 * d * math.log(2 * math.pi)

    def entropy(self) -> Tensor:
        d = self._event_shape[0]
        return 0.5 * d * (1.0 + math.log(2 * math.pi)) + self._half_log_det()


class Independent(Distribution):
    """Reinterprets batch dimensions of a distribution as event dimensions.

    ``Independent(Normal(loc, scale), 1)`` with loc of shape (b, d) is a
    distribution of d-vectors (a diagonal normal): ``log_prob`` sums the d
    independent log densities.

    Parameters
    ----------
    base_distribution : Distribution
        The distribution whose rightmost batch dimensions become events.
    reinterpreted_batch_ndims : int
        How many.
    validate_args : bool, optional
        Check the values.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import Independent, Normal
    >>> d = Independent(Normal(dl.zeros(3), 1.0), 1)
    >>> d.batch_shape, d.event_shape, round(d.log_prob(dl.zeros(3)).item(), 6)
    (difflab.Size([]), difflab.Size([3]), -2.756815)
    """

    arg_constraints: dict = {}

    def __init__(self, base_distribution: Distribution, reinterpreted_batch_ndims: int,
                 validate_args: bool | None = None) -> None:
        batch = tuple(base_distribution.batch_shape)
        if not 0 <= reinterpreted_batch_ndims <= len(batch):
            raise ValueError(f"reinterpreted_batch_ndims must be in [0, {len(batch)}] (the "
                             f"base's batch dimensions), got {reinterpreted_batch_ndims}")
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = n = reinterpreted_batch_ndims
        split = len(batch) - n
        super().__init__(batch[:split], batch[split:] + tuple(base_distribution.event_shape),
                         validate_args)

    def _a_parameter(self) -> Tensor | None:
        return self.base_dist._a_parameter()

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self) -> bool:  # type: ignore[override]
        return False

    @property
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(self.base_dist.support, self.reinterpreted_batch_ndims)

    def expand(self, batch_shape: typing.Any, _instance: typing.Any = None) -> Independent:
        batch_shape = tuple(batch_shape)
        tail = tuple(self.base_dist.batch_shape)[len(self.base_dist.batch_shape)
                                                 - self.reinterpreted_batch_ndims:]
        return Independent(self.base_dist.expand(batch_shape + tail),
                           self.reinterpreted_batch_ndims, validate_args=False)

    def _sum_rightmost(self, value: Tensor) -> Tensor:
        for _ in range(self.reinterpreted_batch_ndims):
            value = value.sum(-1)
        return value

    @property
    def mean(self) -> Tensor:
        return self.base_dist.mean

    @property
    def mode(self) -> Tensor:
        return self.base_dist.mode

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance

    def sample(self, sample_shape: typing.Any = ()) -> Tensor:
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape: typing.Any = ()) -> Tensor:
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value: typing.Any) -> Tensor:
        return self._sum_rightmost(self.base_dist.log_prob(value))

    def entropy(self) -> Tensor:
        return self._sum_rightmost(self.base_dist.entropy())

    def __repr__(self) -> str:
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"


class LowRankMultivariateNormal(MultivariateNormal):
    """A multivariate normal whose covariance is low rank plus diagonal: Σ = W Wᵀ + diag(D).

    Parameters
    ----------
    loc : Tensor
        The mean, (..., d).
    cov_factor : Tensor
        W, (..., d, r).
    cov_diag : Tensor
        D > 0, (..., d).
    validate_args : bool, optional
        Check the parameters and values.

    Notes
    -----
    rsample: x = μ + W ε₁ + √D ε₂ with ε₁ ~ N(0, I_r), ε₂ ~ N(0, I_d); the density is
    the multivariate normal's with the covariance formed (d² steps: for small d).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import LowRankMultivariateNormal
    >>> d = LowRankMultivariateNormal(dl.zeros(2), dl.tensor([[1.0], [1.0]]), dl.ones(2))
    >>> d.covariance_matrix.tolist()
    [[2.0, 1.0], [1.0, 2.0]]
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}

    def __init__(self, loc: typing.Any, cov_factor: typing.Any, cov_diag: typing.Any,
                 validate_args: bool | None = None) -> None:
        self.cov_factor = as_parameter(cov_factor, loc)
        self.cov_diag = as_parameter(cov_diag, loc)
        if self.cov_factor.dim() < 2 or self.cov_diag.shape[-1:] != self.cov_factor.shape[-2:-1]:
            raise ValueError(f"cov_factor must be (..., d, r) and cov_diag (..., d), got "
                             f"{tuple(self.cov_factor.shape)} and {tuple(self.cov_diag.shape)}")
        covariance = (self.cov_factor @ self.cov_factor.transpose(-1, -2)
                      + _picking.diag_embed(self.cov_diag))
        super().__init__(loc, covariance_matrix=covariance, validate_args=validate_args)
        self._param = "cov_factor"

    def _given(self) -> tuple[str, ...]:
        return ("loc", "cov_factor", "cov_diag")

    def rsample(self, sample_shape: typing.Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        rank = self.cov_factor.shape[-1]
        eps_w = _creation.randn(*(shape[:-1] + (rank,)), dtype=self.loc.dtype,
                                device=self.loc.device)
        eps_d = _standard(self, sample_shape, "normal", self.loc)
        return (self.loc + (self.cov_factor @ eps_w.unsqueeze(-1)).squeeze(-1)
                + F.sqrt(self.cov_diag) * eps_d)
