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
from difflab.ops.linalg import check_matrix
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
    r"""The singular value decomposition as ``torch.svd`` gives it: ``(U, S, V)``, A = U diag(S) Vᵀ.

    V, not Vᵀ as :func:`difflab.linalg.decompositions.svd` (``dl.linalg.svd``)
    returns it, and the reduced SVD by default, as PyTorch's older ``torch.svd``.
    ``A.svd()`` is the same function.

    Parameters
    ----------
    input : Tensor, array or dual number of shape (..., m, n)
        The matrix, or a stack of them.
    some : bool, default True
        The reduced SVD (U is m × k, V is n × k, k = min(m, n)), or, False, the full one
        (U m × m, V n × n; the columns beyond k carry no gradient, as in PyTorch).
    compute_uv : bool, default True
        False: only S is computed; U and V are zero-filled (m × m and n × n), as in
        PyTorch.

    Returns
    -------
    SvdResult
        The named tuple ``(U, S, V)``: U of shape (..., m, k) (or m × m), S of shape
        (..., k), the singular values in descending order, V of shape (..., n, k) (or
        n × n).

    Raises
    ------
    ValueError
        When ``input`` has fewer than two dimensions.
    LinAlgError
        When the SVD does not converge (a matrix with inf or NaN).

    See Also
    --------
    difflab.linalg.decompositions.svd : the same, returning Vᵀ (``full_matrices``).
    difflab.linalg.decompositions.svdvals : only S, with a gradient that stays finite.
    difflab.pinverse : the pseudo-inverse, from the SVD.

    Notes
    -----
    The factorization is :math:`A = U \operatorname{diag}(s) V^\top` with
    :math:`U^\top U = V^\top V = I` and :math:`s_1 \ge \dots \ge s_k \ge 0`.  The
    reverse-mode rule (the ``linalg_svd`` primitive, Townsend 2016, PyTorch's form),
    with :math:`S = \operatorname{diag}(s)` and
    :math:`F_{ij} = 1 / (s_j^2 - s_i^2)` (:math:`F_{ii} = 0`):

    .. math::

        \bar A = U \left[ \big(F \circ (U^\top \bar U - \bar U^\top U)\big) S
                 + \operatorname{diag}(\bar s)
                 + S \big(F \circ (V^\top \bar V - \bar V^\top V)\big) \right] V^\top
                 + (I - U U^\top) \bar U S^{-1} V^\top
                 + U S^{-1} \bar V^\top (I - V V^\top).

    So the gradient of the singular values alone is :math:`U \operatorname{diag}(\bar s)
    V^\top`.  Repeated singular values (and, for a non-square A, a zero one) make
    :math:`F` infinite: the gradient through U or V is then inf or NaN, as in
    PyTorch; the forward mode (JVP) is the same rule transposed.

    Examples
    --------
    >>> import difflab as dl
    >>> A = dl.tensor([[2.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    >>> U, S, V = dl.svd(A)
    >>> S, dl.allclose(U @ dl.diag(S) @ V.T, A)
    (tensor([2., 1.]), True)
    >>> U.shape, dl.svd(A, some=False).U.shape
    (difflab.Size([3, 2]), difflab.Size([3, 3]))

    The gradient of the sum of the singular values is U Vᵀ:

    >>> B = dl.tensor([[3.0, 0.0], [0.0, -4.0]], requires_grad=True)
    >>> B.svd().S.sum().backward()
    >>> B.grad
    tensor([[ 1.,  0.],
            [ 0., -1.]])
    """
    input = as_input(input)  # noqa: A001
    check_matrix("svd", input)
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
    r"""The LU factorization with partial pivoting, compactly (``torch.lu``): ``(A_LU, pivots)``.

    ``A_LU`` holds L below its diagonal (L's unit diagonal is implied) and U on and
    above it; ``pivots`` (int32, 1-based, LAPACK's ``getrf`` convention) says that
    row i was swapped with row ``pivots[i]``, in order.  ``A.lu()`` is the same
    function; :func:`difflab.linalg.elimination.lu` gives P, L and U as matrices,
    and :func:`difflab.linalg.elimination.lu_solve` solves with the compact form.

    Parameters
    ----------
    A : Tensor, array or dual number of shape (..., m, n)
        The matrix, or a stack of them.
    pivot : bool, default True
        Partial pivoting (the largest entry of each column as the pivot); False: no
        row swaps (a zero pivot then gives inf or NaN).
    get_infos : bool, default False
        Also return LAPACK's ``info``: 0, or 1 + the index of the first zero on U's
        diagonal (A singular), per matrix.

    Returns
    -------
    tuple
        ``(A_LU, pivots)``, or ``(A_LU, pivots, infos)`` with ``get_infos``: A_LU of
        shape (..., m, n), pivots and infos int32 of shapes (..., min(m, n)) and (...).

    Raises
    ------
    ValueError
        When ``A`` has fewer than two dimensions.

    See Also
    --------
    difflab.linalg.elimination.lu_factor : the same, as ``dl.linalg.lu_factor``.
    difflab.linalg.elimination.lu : P, L and U as separate matrices.
    difflab.linalg.elimination.lu_solve : solve A X = B with the factors.

    Notes
    -----
    The factorization is :math:`P A = L U`, P a permutation, L unit lower
    triangular (:math:`|L_{ij}| \le 1` with pivoting), U upper triangular
    (``dl.linalg.lu`` returns :math:`P^\top`, as PyTorch: :math:`A = P^\top L U`).  It is
    Gaussian elimination written with difflab's operations, one column at a time:
    the pivot is an ``argmax`` (no derivative), the row swap a gather, the
    elimination step

    .. math::

        W \leftarrow W - \ell_j\, u_j^\top,
        \qquad \ell_j = W_{:, j} / W_{jj} \ \text{(below the diagonal)},

    each with its own rule.  So the derivative is that of LU *at fixed pivots*:
    reverse mode runs the recorded steps backward, and for a square invertible A it
    equals the closed form

    .. math::

        \dot L = L\, \operatorname{tril}_{-1}(X), \quad
        \dot U = \operatorname{triu}(X)\, U, \quad
        X = L^{-1} P \dot A\, U^{-1}.

    A change of A that changes the pivots has no derivative there (the pivots are
    piecewise constant).

    Examples
    --------
    >>> import difflab as dl
    >>> A_LU, pivots = dl.tensor([[1.0, 2.0], [3.0, 4.0]]).lu()
    >>> A_LU, pivots                 # rows swapped: L = [[1, 0], [1/3, 1]], U = [[3, 4], [0, 2/3]]
    (tensor([[3.    , 4.    ],
            [0.3333, 0.6667]]), tensor([2, 2], dtype=difflab.int32))
    >>> dl.lu(dl.tensor([[1.0, 2.0], [2.0, 4.0]]), get_infos=True)[2]   # singular: U[1, 1] = 0
    tensor(2, dtype=difflab.int32)

    Gradients flow through the factors:

    >>> B = dl.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=dl.float64, requires_grad=True)
    >>> B.lu()[0].sum().backward()
    >>> B.grad
    tensor([[-1.    ,  1.    ],
            [ 1.3333,  0.6667]], dtype=difflab.float64)
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
