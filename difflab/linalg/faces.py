r"""PyTorch's older names for the linear algebra: ``torch.inverse``, ``torch.svd``, ...

``difflab.inverse(A)`` is ``difflab.linalg.inv(A)`` and ``A.inverse()`` the same
function (attached to ``Tensor`` when this module is imported, as
``difflab.functions`` attaches its methods), so the math is written once, in
:mod:`difflab.linalg`.  Two differ from their ``linalg`` namesakes as they do in
PyTorch: :func:`svd` returns V, not Vᵀ (and ``some=True``, the reduced SVD, by
default), and :func:`qr` takes ``some`` instead of ``mode``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from difflab import backend
from difflab import functions as F  # noqa: N812
from difflab.linalg import decompositions, elimination, solvers
from difflab.linalg.decompositions import as_input, like, mT, values
from difflab.tensor import Tensor

__all__ = ["cholesky", "det", "inverse", "logdet", "lu", "matrix_exp", "matrix_power",
           "pinverse", "qr", "slogdet", "svd"]


class SvdResult(NamedTuple):
    """``(U, S, V)``, as ``torch.svd`` returns them (V, not Vᵀ)."""

    U: Any
    S: Any
    V: Any


def inverse(input: Any, *, out: Any = None) -> Any:  # noqa: A002
    r"""The inverse of a square matrix (``torch.inverse``; see :func:`difflab.linalg.solvers.inv`).

    Parameters
    ----------
    input : Tensor, array or dual number of shape (..., n, n)
    out : Tensor, optional

    Returns
    -------
    input⁻¹.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.tensor([[2.0, 0.0], [0.0, 4.0]]).inverse()
    tensor([[0.5 , 0.  ],
            [0.  , 0.25]])
    """
    return solvers.inv(input, out=out)


def det(input: Any) -> Any:  # noqa: A002
    r"""The determinant (``torch.det``; see :func:`difflab.linalg.decompositions.det`).

    Parameters
    ----------
    input : Tensor, array or dual number of shape (..., n, n)

    Returns
    -------
    det(input), of shape (...).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.tensor([[1.0, 2.0], [3.0, 4.0]]).det()
    tensor(-2.)
    """
    return decompositions.det(input)


def slogdet(input: Any) -> decompositions.SlogdetResult:  # noqa: A002
    r"""``(sign, logabsdet)`` of the determinant (``torch.slogdet``).

    Parameters
    ----------
    input : Tensor, array or dual number of shape (..., n, n)

    Returns
    -------
    SlogdetResult

    Examples
    --------
    >>> import difflab as dl
    >>> dl.tensor([[2.0, 0.0], [0.0, 3.0]]).slogdet().logabsdet
    tensor(1.7918)
    """
    return decompositions.slogdet(input)


def logdet(input: Any) -> Any:  # noqa: A002
    r"""log det A (``torch.logdet``): NaN where det A < 0, −inf where it is 0.

    log|det A| where the sign is not negative (it is −inf where det A = 0), a NaN
    constant where it is: the gradient is A⁻ᵀ where the result is finite.

    Parameters
    ----------
    input : Tensor, array or dual number of shape (..., n, n)

    Returns
    -------
    log det(input), of shape (...).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.logdet(dl.tensor([[2.0, 0.0], [0.0, 3.0]]))
    tensor(1.7918)
    >>> dl.logdet(dl.tensor([[0.0, 1.0], [1.0, 0.0]]))
    tensor(nan)
    """
    sign, logabsdet = decompositions.slogdet(input)
    array = values(logabsdet)
    nan = like(logabsdet, backend.array_module(array).full((), float("nan"), dtype=array.dtype))
    return F.where(sign < 0, nan, logabsdet)


def cholesky(input: Any, upper: bool = False, *, out: Any = None) -> Any:  # noqa: A002
    r"""The Cholesky factor (``torch.cholesky``).

    See :func:`difflab.linalg.decompositions.cholesky`.

    Parameters
    ----------
    input : Tensor, array or dual number of shape (..., n, n), positive-definite
    upper : bool
        Return the upper factor.
    out : Tensor, optional

    Returns
    -------
    L (or Lᵀ).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.tensor([[4.0, 2.0], [2.0, 5.0]]).cholesky(upper=True)
    tensor([[2., 1.],
            [0., 2.]])
    """
    return decompositions.cholesky(input, upper=upper, out=out)


def qr(input: Any, some: bool = True) -> decompositions.QRResult:  # noqa: A002
    r"""The QR decomposition (``torch.qr``): ``some=True`` the reduced one, False complete.

    Parameters
    ----------
    input : Tensor, array or dual number of shape (..., m, n)
    some : bool

    Returns
    -------
    QRResult
        ``(Q, R)``.

    Examples
    --------
    >>> import difflab as dl
    >>> Q, R = dl.qr(dl.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    >>> Q.shape, R.shape
    (difflab.Size([3, 2]), difflab.Size([2, 2]))
    """
    return decompositions.qr(input, mode="reduced" if some else "complete")


def svd(input: Any, some: bool = True, compute_uv: bool = True) -> SvdResult:  # noqa: A002
    r"""The SVD as ``torch.svd`` gives it: ``(U, S, V)`` with A = U diag(S) Vᵀ — V, not
    Vᵀ as :func:`difflab.linalg.decompositions.svd` returns — and the reduced SVD by default.

    Parameters
    ----------
    input : Tensor, array or dual number of shape (..., m, n)
    some : bool
        The reduced SVD (True) or the full one.
    compute_uv : bool
        False: only S, and U, V zero-filled (m × m and n × n), as in PyTorch.

    Returns
    -------
    SvdResult
        ``(U, S, V)``.

    Examples
    --------
    >>> import difflab as dl
    >>> A = dl.tensor([[2.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    >>> U, S, V = dl.svd(A)
    >>> S, dl.allclose(U @ dl.diag(S) @ V.T, A)
    (tensor([2., 1.]), True)
    """
    input = as_input(input)  # noqa: A001
    if not compute_uv:
        array = values(input)
        m, n = array.shape[-2:]
        xp = backend.array_module(array)
        batch = tuple(array.shape[:-2])
        return SvdResult(like(input, xp.zeros(batch + (m, m), dtype=array.dtype)),
                         decompositions.svdvals(input),
                         like(input, xp.zeros(batch + (n, n), dtype=array.dtype)))
    u, s, vh = decompositions.svd(input, full_matrices=not some)
    return SvdResult(u, s, mT(vh))


def lu(A: Any, pivot: bool = True, get_infos: bool = False) -> tuple:  # noqa: N803
    r"""The compact LU factorization (``torch.lu``): ``(A_LU, pivots)``, with ``infos``
    too when ``get_infos`` (see :func:`difflab.linalg.elimination.lu_factor`).

    Parameters
    ----------
    A : Tensor, array or dual number of shape (..., m, n)
    pivot : bool
        Partial pivoting.
    get_infos : bool
        Also return LAPACK's info (0, or where U's diagonal has a zero).

    Returns
    -------
    tuple
        ``(A_LU, pivots)`` or ``(A_LU, pivots, infos)``.

    Examples
    --------
    >>> import difflab as dl
    >>> A_LU, pivots = dl.tensor([[1.0, 2.0], [3.0, 4.0]]).lu()
    >>> pivots
    tensor([2, 2], dtype=difflab.int32)
    """
    factors, pivots, info = elimination.lu_factor_ex(A, pivot=pivot)
    return (factors, pivots, info) if get_infos else (factors, pivots)


def pinverse(input: Any, rcond: float = 1e-15) -> Any:  # noqa: A002
    r"""The pseudo-inverse (``torch.pinverse``): singular values below rcond·σ_max are zero.

    Parameters
    ----------
    input : Tensor, array or dual number of shape (..., m, n)
    rcond : float

    Returns
    -------
    input⁺, of shape (..., n, m).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.tensor([[1.0, 1.0]]).pinverse()
    tensor([[0.5],
            [0.5]])
    """
    return solvers.pinv(input, rtol=rcond)


def matrix_power(input: Any, n: int) -> Any:  # noqa: A002
    r"""inputⁿ for an integer n (``torch.matrix_power``).

    See :func:`difflab.linalg.solvers.matrix_power`.

    Parameters
    ----------
    input : Tensor, array or dual number of shape (..., m, m)
    n : int

    Returns
    -------
    inputⁿ.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.tensor([[0.0, 1.0], [1.0, 0.0]]).matrix_power(2)
    tensor([[1., 0.],
            [0., 1.]])
    """
    return solvers.matrix_power(input, n)


def matrix_exp(input: Any) -> Any:  # noqa: A002
    r"""The matrix exponential (``torch.matrix_exp``).

    See :func:`difflab.linalg.solvers.matrix_exp`.

    Parameters
    ----------
    input : Tensor, array or dual number of shape (..., n, n)

    Returns
    -------
    exp(input).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.tensor([[0.0, 0.0], [0.0, 0.0]]).matrix_exp()
    tensor([[1., 0.],
            [0., 1.]])
    """
    return solvers.matrix_exp(input)


#: Tensor methods that are these functions (``A.inverse()`` is ``inverse(A)``).
_TENSOR_METHODS = {
    "inverse": inverse, "det": det, "logdet": logdet, "slogdet": slogdet,
    "cholesky": cholesky, "qr": qr, "svd": svd, "pinverse": pinverse,
    "matrix_power": matrix_power, "matrix_exp": matrix_exp, "lu": lu,
}
for _name, _function in _TENSOR_METHODS.items():
    setattr(Tensor, _name, _function)
