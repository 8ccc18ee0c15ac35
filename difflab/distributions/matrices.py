r"""Distributions of matrices: LKJCholesky (correlations) and Wishart (covariances).

``LKJCholesky(d, η)`` is a prior on d×d correlation matrices, drawn as their
Cholesky factors L (lower triangular, rows of unit length: L Lᵀ has ones on its
diagonal), with density proportional to det(L Lᵀ)^(η-1): η = 1 is uniform over
correlation matrices, η > 1 favours the identity, η < 1 strong correlations.
``Wishart(ν, Σ)`` is the distribution of Σᵢ xᵢxᵢᵀ for ν draws xᵢ ~ N(0, Σ):
a positive definite matrix with mean ν Σ (the conjugate prior of a normal's precision).

Both densities are composites of difflab's operations (``lgamma``,
``multigammaln``, ``linalg.solve_triangular``, ``linalg.slogdet``), so gradients flow
through ``log_prob`` to the parameters and to the value; the Wishart's ``rsample``
(Bartlett's decomposition) is reparameterized in its scale.

>>> import difflab as dl
>>> from difflab.distributions import LKJCholesky
>>> L = LKJCholesky(3, 2.0).sample()
>>> [round(v, 6) for v in (L * L).sum(-1).tolist()]            # unit rows
[1.0, 1.0, 1.0]
"""

from __future__ import annotations

import math
import typing
import warnings

import numpy as np

from difflab import creation as _creation
from difflab import functions as F
from difflab import functions_joining as _joining
from difflab import functions_picking as _picking
from difflab import linalg
from difflab import special as _special
from difflab.autograd.grad_mode import is_grad_enabled, no_grad
from difflab.distributions import constraints
from difflab.distributions.continuous import _standard
from difflab.distributions.distribution import Distribution, ExponentialFamily, as_parameter
from difflab.distributions.gamma import Beta, Chi2
from difflab.dtype_info import finfo
from difflab.tensor import Tensor

__all__ = ["LKJCholesky", "Wishart"]


def _diagonal(matrix: Tensor) -> Tensor:
    return _picking.diagonal(matrix, 0, -2, -1)


def _solve_lower(factor: Tensor, rhs: Tensor) -> Tensor:
    """L⁻¹ B for lower-triangular L, both (..., d, d), their batch dimensions broadcast."""
    return linalg.solve_triangular(factor, rhs, upper=False)


class LKJCholesky(Distribution):
    r"""The LKJ distribution of Cholesky factors of correlation matrices.

    A draw L is lower triangular with a positive diagonal and rows of unit length, so
    that L Lᵀ is a correlation matrix; the density of the correlation matrix is
    proportional to det(L Lᵀ)^(η-1).  η = 1: uniform over correlation matrices;
    η > 1: concentrated near the identity (weak correlations); η < 1: strong ones.
    ``sample`` uses the onion method of Lewandowski, Kurowicka and Joe (2009); there
    is no ``rsample`` (its beta draws are not reparameterized, as in PyTorch).

    Parameters
    ----------
    dim : int
        d >= 2, the size of the matrices.
    concentration : Tensor or float, optional
        η > 0 (1.0), one per distribution of the batch.
    validate_args : bool, optional
        Check the parameters and values.

    Attributes
    ----------
    dim : int
        d.
    concentration : Tensor
        η, of shape ``batch_shape``.

    Raises
    ------
    ValueError
        If ``dim`` is not an integer >= 2; with ``validate_args``, if ``concentration``
        is not positive or a value is not a Cholesky factor of a correlation matrix.

    See Also
    --------
    difflab.distributions.CorrCholeskyTransform : ``biject_to`` of its support.
    difflab.distributions.Wishart : A distribution of covariance matrices.

    Notes
    -----
    Written with the factor's diagonal (the determinant of L Lᵀ is ∏ Lᵢᵢ², and the
    map L ↦ L Lᵀ has Jacobian ∏ Lᵢᵢ^(d-i)),

    .. math::

        \log p(L) = \sum_{i=2}^{d} (2\eta - 2 + d - i) \log L_{ii} - \log c_d(\eta),
        \qquad
        \log c_d(\eta) = \tfrac{d-1}{2}\log\pi + \log\Gamma_{d-1}(\alpha - \tfrac12)
                         - (d-1)\log\Gamma(\alpha),

    with α = η + (d - 1)/2 and Γₚ the multivariate gamma function
    (:func:`difflab.special.multigammaln`).  Every correlation (L Lᵀ)ᵢⱼ is then 2B - 1
    with B ~ Beta(β, β), β = η - 1 + d/2, which the tests check of the draws.

    The onion method draws row i's squared length off the diagonal from
    Beta(i/2, β - (i-1)/2) (β = η + (d - 2)/2).  PyTorch 2.13's sampler uses
    Beta(i - 1/2, ...) there: from d = 3 on its draws do not follow its own ``log_prob``
    (for d = 3, η = 2 the variance of (L Lᵀ)₃₁ comes out 0.215 instead of 1/6); here
    they do, so draws differ from PyTorch's in distribution, not only by the generator.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import LKJCholesky
    >>> d = LKJCholesky(2, concentration=dl.tensor([0.5, 1.0, 3.0]))
    >>> d.batch_shape, d.event_shape
    (difflab.Size([3]), difflab.Size([2, 2]))
    >>> L = dl.tensor([[1.0, 0.0], [0.6, 0.8]])             # correlation 0.6
    >>> [round(v, 6) for v in d.log_prob(L).tolist()]      # η = 1: uniform, log(1/2)
    [-0.921586, -0.693147, -0.957113]
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration: typing.Any = 1.0,
                 validate_args: bool | None = None) -> None:
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 2:
            raise ValueError(f"LKJCholesky's dim must be an integer >= 2 (the size of the "
                             f"correlation matrices), got dim={dim!r}")
        self.dim = int(dim)
        self.concentration = as_parameter(concentration)
        super().__init__(tuple(self.concentration.shape), (self.dim, self.dim), validate_args)

    def _fixed_arguments(self) -> dict:
        return {"dim": self.dim}

    def _beta(self) -> Beta:
        """The onion method's beta distributions, one per row (batch_shape + (d,)).

        Row i (from 0) draws its squared length off the diagonal, y ~ Beta(i/2, β - (i-1)/2)
        with β = η + (d - 2)/2 (row 0 draws a value it does not use).  (PyTorch 2.13 draws
        Beta(i - 1/2, ...): the same for rows 0 and 1, but from row 2 on its correlations
        come out wider than its own density says; see the Notes of the class.)
        """
        offset = np.concatenate([[0.0], np.arange(self.dim - 1)])
        like = self.concentration
        conc1 = _creation.tensor(0.5 * offset + 0.5, dtype=like.dtype, device=like.device)
        marginal = like.detach() + 0.5 * (self.dim - 2)
        conc0 = marginal.unsqueeze(-1) - _creation.tensor(0.5 * offset, dtype=like.dtype,
                                                          device=like.device)
        return Beta(conc1.expand(*conc0.shape), conc0, validate_args=False)

    def sample(self, sample_shape: typing.Any = ()) -> Tensor:
        """Draws by the onion method: a random direction per row, scaled to a beta length.

        Parameters
        ----------
        sample_shape : tuple of int, optional
            Leading dimensions of draws (``()``: one per distribution).

        Returns
        -------
        Tensor
            ``sample_shape + batch_shape + (d, d)``: lower-triangular factors with unit rows.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab.distributions import LKJCholesky
        >>> _ = dl.manual_seed(0)
        >>> LKJCholesky(4, 0.5).sample((10,)).shape
        difflab.Size([10, 4, 4])
        """
        with no_grad():
            y = self._beta().sample(sample_shape).unsqueeze(-1)      # the rows' squared lengths
            u = _standard(self, sample_shape, "normal", self.concentration).tril(-1)
            norm = F.sqrt((u * u).sum(-1, keepdim=True))
            direction = u / F.where(norm > 0, norm, F.ones_like(norm))   # (row 0 stays 0)
            w = F.sqrt(y) * direction
            tiny = finfo(w.dtype).tiny
            diagonal = F.sqrt(F.clamp(1 - (w * w).sum(-1), min=tiny))
            return w + _picking.diag_embed(diagonal)

    def log_prob(self, value: typing.Any) -> Tensor:
        value = self._validate_sample(value)
        d = self.dim
        diagonal = _diagonal(value)[..., 1:]
        order = 2 * (self.concentration - 1).unsqueeze(-1) + d - _creation.arange(
            2, d + 1, dtype=self.concentration.dtype, device=self.concentration.device)
        unnormalized = (order * F.log(diagonal)).sum(-1)
        alpha = self.concentration + 0.5 * (d - 1)
        log_normalizer = (0.5 * (d - 1) * math.log(math.pi)
                          + _special.multigammaln(alpha - 0.5, d - 1)
                          - (d - 1) * F.lgamma(alpha))
        return unnormalized - log_normalizer

    def __repr__(self) -> str:
        return f"LKJCholesky(dim: {self.dim}, concentration: {self.concentration.detach()})"


def _clamp_above_eps(x: Tensor) -> Tensor:
    return F.clamp(x, min=finfo(x.dtype).eps)


def _multidigamma(x: Tensor, p: int) -> Tensor:
    """Σⱼ₌₀..ₚ₋₁ ψ(x - j/2): the derivative of log Γₚ(x)."""
    steps = _creation.arange(p, dtype=x.dtype, device=x.device) / 2
    return F.digamma(x.unsqueeze(-1) - steps).sum(-1)


class Wishart(ExponentialFamily):
    r"""The Wishart distribution of positive definite matrices: ν degrees of freedom, scale Σ.

    The sum Σₖ xₖxₖᵀ of ν independent xₖ ~ N(0, Σ) is Wishart(ν, Σ) (and so, for any real
    ν > d - 1); its mean is ν Σ.  Give Σ as exactly one of ``covariance_matrix``,
    ``precision_matrix`` (Σ⁻¹) or ``scale_tril`` (its Cholesky factor L, Σ = L Lᵀ: the
    cheapest; the other two are factorized by ``linalg.cholesky``).

    Parameters
    ----------
    df : Tensor or float
        ν > d - 1 (below d the draws are singular more often than not: a warning says so).
    covariance_matrix : Tensor, optional
        Σ, symmetric positive definite, (..., d, d).
    precision_matrix : Tensor, optional
        Σ⁻¹, (..., d, d).
    scale_tril : Tensor, optional
        L, lower triangular with a positive diagonal, (..., d, d).
    validate_args : bool, optional
        Check the parameters and values.

    Attributes
    ----------
    df : Tensor
        ν, of shape ``batch_shape``.
    scale_tril, covariance_matrix, precision_matrix : Tensor
        L, Σ and Σ⁻¹, each ``batch_shape + (d, d)``.

    Raises
    ------
    ValueError
        If not exactly one of the three matrices is given, the matrix is not (..., d, d),
        or ``df <= d - 1`` (always checked, as in PyTorch); with ``validate_args``, if
        the matrix breaks its constraint or a value is not positive definite.

    See Also
    --------
    difflab.distributions.LKJCholesky : A distribution of correlation matrices.
    difflab.distributions.MultivariateNormal : The normal whose covariance this draws.

    Notes
    -----
    With p the dimension d,

    .. math::

        \log p(X) = \tfrac{\nu - p - 1}{2}\log\det X - \tfrac12 \operatorname{tr}(\Sigma^{-1}X)
                    - \tfrac{\nu p}{2}\log 2 - \tfrac{\nu}{2}\log\det\Sigma
                    - \log\Gamma_p(\tfrac{\nu}{2}) .

    ``rsample`` is Bartlett's decomposition: X = (L A)(L A)ᵀ with A lower triangular,
    Aᵢᵢ = √cᵢ, cᵢ ~ χ²(ν - i) (i from 0), Aᵢⱼ ~ N(0, 1) below the diagonal.  Gradients
    reach L (and Σ or Σ⁻¹); the chi-square draws are not reparameterized here, so
    ``rsample`` refuses a ``df`` that requires grad (PyTorch differentiates through them).
    A draw that rounds to a singular matrix is drawn again, up to ``max_try_correction``
    times.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.distributions import Wishart
    >>> d = Wishart(dl.tensor(3.0), covariance_matrix=dl.tensor([[2.0, 0.5], [0.5, 1.0]]))
    >>> d.mean.tolist()
    [[6.0, 1.5], [1.5, 3.0]]
    >>> round(d.log_prob(dl.eye(2)).item(), 6)
    -4.227591
    >>> _ = dl.manual_seed(0)
    >>> d.rsample((5,)).shape
    difflab.Size([5, 2, 2])
    """

    support = constraints.positive_definite
    has_rsample = True
    _PARAMETERS = ("covariance_matrix", "precision_matrix", "scale_tril")

    @property
    def arg_constraints(self) -> dict:  # type: ignore[override]
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self._event_shape[-1] - 1)}

    def __init__(self, df: typing.Any, covariance_matrix: typing.Any = None,
                 precision_matrix: typing.Any = None, scale_tril: typing.Any = None,
                 validate_args: bool | None = None) -> None:
        given = {name: value for name, value in zip(
            self._PARAMETERS, (covariance_matrix, precision_matrix, scale_tril))
            if value is not None}
        if len(given) != 1:
            raise ValueError("Wishart takes exactly one of covariance_matrix, "
                             f"precision_matrix and scale_tril, got {sorted(given) or 'none'}")
        (self._param, matrix), = given.items()
        matrix = as_parameter(matrix)
        if matrix.dim() < 2 or matrix.shape[-1] != matrix.shape[-2]:
            raise ValueError(f"Wishart's {self._param} must be (..., d, d), square with "
                             f"optional batch dimensions, got shape {tuple(matrix.shape)}")
        df = df if isinstance(df, Tensor) else _creation.tensor(df, dtype=matrix.dtype,
                                                                device=matrix.device)
        df = as_parameter(df)
        d = matrix.shape[-1]
        batch = _joining.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(df.shape))
        if bool(F.any(df.detach() <= d - 1)):
            raise ValueError(f"Wishart's df must be greater than d - 1 = {d - 1} (d = {d}, "
                             f"the matrices' size), got df = {df.detach().tolist()}")
        if bool(F.any(df.detach() < d)):
            warnings.warn(f"Wishart with df < d = {d}: its draws are singular matrices "
                          f"more often than not", stacklevel=2)
        self.df = df.expand(*batch)
        setattr(self, self._param, matrix.expand(*batch, d, d))
        super().__init__(batch, (d, d), validate_args)
        if self._param == "scale_tril":
            self._tril = matrix
        elif self._param == "covariance_matrix":
            self._tril = linalg.cholesky(matrix)
        else:                                   # Σ = P⁻¹: the factor of the inverse
            self._tril = linalg.cholesky(linalg.inv(matrix))

    def _given(self) -> tuple[str, ...]:
        return ("df", self._param)

    def expand(self, batch_shape: typing.Any, _instance: typing.Any = None) -> Wishart:
        with warnings.catch_warnings():  # (the low-df warning was given once, at construction)
            warnings.simplefilter("ignore", UserWarning)
            return typing.cast(Wishart, super().expand(batch_shape))

    def __getattr__(self, name: str) -> typing.Any:
        if name not in Wishart._PARAMETERS or "_tril" not in self.__dict__:
            raise AttributeError(f"'Wishart' object has no attribute {name!r}")
        shape = tuple(self._batch_shape) + tuple(self._event_shape)
        tril = self.__dict__["_tril"]
        if name == "scale_tril":
            return tril.expand(*shape)
        if name == "covariance_matrix":
            return (tril @ tril.transpose(-1, -2)).expand(*shape)
        identity = _creation.eye(shape[-1], dtype=tril.dtype, device=tril.device).expand(
            *tril.shape)
        inverse = _solve_lower(tril, identity)                     # L⁻¹
        return (inverse.transpose(-1, -2) @ inverse).expand(*shape)  # Σ⁻¹ = L⁻ᵀ L⁻¹

    # -- moments -------------------------------------------------------------------------
    def _df_matrix(self) -> Tensor:
        return self.df.unsqueeze(-1).unsqueeze(-1)

    @property
    def mean(self) -> Tensor:
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self) -> Tensor:
        """(ν - d - 1) Σ where ν > d + 1; NaN elsewhere (no mode: the density is unbounded)."""
        factor = self._df_matrix() - self._event_shape[-1] - 1
        factor = F.where(factor > 0, factor, _creation.full_like(factor, math.nan))
        return factor * self.covariance_matrix

    @property
    def variance(self) -> Tensor:
        covariance = self.covariance_matrix
        diagonal = _diagonal(covariance)
        return self._df_matrix() * (covariance ** 2
                                    + diagonal.unsqueeze(-1) * diagonal.unsqueeze(-2))

    # -- drawing -------------------------------------------------------------------------
    def _bartlett(self, sample_shape: typing.Any) -> Tensor:
        p = self._event_shape[-1]
        df = self.df.detach().unsqueeze(-1) - _creation.arange(p, dtype=self.df.dtype,
                                                               device=self.df.device)
        chi = _clamp_above_eps(F.sqrt(Chi2(df, validate_args=False).sample(sample_shape)))
        noise = _standard(self, sample_shape, "normal", self._tril).tril(-1)
        factor = self._tril @ (noise + _picking.diag_embed(chi))
        return factor @ factor.transpose(-1, -2)

    def rsample(self, sample_shape: typing.Any = (),
                max_try_correction: int | None = None) -> Tensor:
        """Draws by Bartlett's decomposition, differentiable in the scale.

        Parameters
        ----------
        sample_shape : tuple of int, optional
            Leading dimensions of draws.
        max_try_correction : int, optional
            How many times singular draws are drawn again (10).

        Returns
        -------
        Tensor
            ``sample_shape + batch_shape + (d, d)``, positive definite matrices.

        Raises
        ------
        NotImplementedError
            If ``df`` requires grad (its chi-square draws are not reparameterized).

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab.distributions import Wishart
        >>> L = dl.eye(2).requires_grad_()
        >>> _ = dl.manual_seed(0)
        >>> Wishart(4.0, scale_tril=L).rsample().trace().backward()
        >>> L.grad.shape
        difflab.Size([2, 2])
        """
        if self.df.requires_grad and is_grad_enabled():
            raise NotImplementedError(
                "Wishart.rsample cannot differentiate through df: its chi-square draws are "
                "not reparameterized in difflab (Gamma has no rsample). Pass df.detach() to "
                "take gradients through the scale only, or use sample()")
        tries = 10 if max_try_correction is None else max_try_correction
        sample = self._bartlett(sample_shape)
        singular = ~constraints.positive_definite.check(sample.detach())
        if bool(F.any(singular)):
            warnings.warn("Wishart drew a singular matrix; drawing it again", stacklevel=2)
            for _ in range(tries):
                again = self._bartlett(sample_shape)
                sample = F.where(singular.unsqueeze(-1).unsqueeze(-1), again, sample)
                singular = ~constraints.positive_definite.check(sample.detach())
                if not bool(F.any(singular)):
                    break
        return sample

    def sample(self, sample_shape: typing.Any = (),
               max_try_correction: int | None = None) -> Tensor:
        with no_grad():
            return self.rsample(sample_shape, max_try_correction)

    # -- densities -----------------------------------------------------------------------
    def _log_det_scale(self) -> Tensor:
        """½ log det Σ = Σ log Lᵢᵢ."""
        return F.log(_diagonal(self._tril)).sum(-1)

    def log_prob(self, value: typing.Any) -> Tensor:
        value = self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        solved = _solve_lower(self._tril, value)                    # L⁻¹ X
        trace = _diagonal(_solve_lower(self._tril, solved.transpose(-1, -2))).sum(-1)
        return (-nu * (p * math.log(2) / 2 + self._log_det_scale())
                - _special.multigammaln(nu / 2, p)
                + (nu - p - 1) / 2 * linalg.slogdet(value).logabsdet
                - trace / 2)

    def entropy(self) -> Tensor:
        nu, p = self.df, self._event_shape[-1]
        return ((p + 1) * (p * math.log(2) / 2 + self._log_det_scale())
                + _special.multigammaln(nu / 2, p)
                - (nu - p - 1) / 2 * _multidigamma(nu / 2, p)
                + nu * p / 2)

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        nu, p = self.df, self._event_shape[-1]
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-linalg.slogdet(-2 * x).logabsdet + math.log(2) * p)
                + _special.multigammaln(y + (p + 1) / 2, p))

    def __repr__(self) -> str:
        return f"Wishart(df: {self.df.detach()}, {self._param}: {tuple(self.scale_tril.shape)})"
