r"""Determinants and decompositions: ``det``, ``slogdet``, ``cholesky``, ``qr``, ``eigh``, ``svd``.

Each function applies one primitive of :mod:`difflab.ops.linalg` (where the
forward, the JVP and the VJP sit side by side, with the math) and hands back
PyTorch's results.  A decomposition with several results is one primitive
whose output packs them: ``eigh`` slices (w; V) into the eigenvalues and the
eigenvectors, so the derivative of whatever the caller does with either is
the packed rule's, and a result left unused gets a zero adjoint.

Every function accepts what difflab's math functions accept: a ``Tensor``
(recorded on the tape), a NumPy or CuPy array (computed), a dual number
(forward mode) or, for the rules with a sympy form, a symbolic matrix.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from difflab import backend
from difflab import functions as F  # noqa: N812
from difflab.ops import linalg as ops
from difflab.ops import linalg_spectral as spectral
from difflab.tensor import Tensor
from difflab.tensor_arguments import tensor_of, write_out

__all__ = ["cholesky", "cholesky_ex", "det", "eigh", "eigvalsh", "qr", "slogdet", "svd",
           "svdvals"]


# --------------------------------------------------------------------- shared steps


def mT(x: Any) -> Any:  # noqa: N802  (PyTorch's name)
    """The last two dimensions swapped (``x.mT``), for any value difflab routes."""
    return F.swapaxes(x, -1, -2)


def values(x: Any) -> Any:
    """The plain array under a tensor or dual number (for settings read from values:
    a rank, the failures of a ``*_ex`` function)."""
    while True:
        if isinstance(x, Tensor):
            x = x.array
        elif hasattr(x, "primal") and hasattr(x, "tangents"):
            x = x.primal
        else:
            return x


def as_input(x: Any) -> Any:
    """A list of numbers as a tensor (as ``difflab.tensor`` reads it); anything else as is,
    but ``None``, a number or a string, which is no matrix: a TypeError (it had none of
    the ``ndim`` and ``shape`` that every linear-algebra function reads)."""
    if isinstance(x, (list, tuple)):
        return tensor_of(x)
    if x is None or isinstance(x, (str, int, float, complex)):
        raise TypeError(f"linalg: expected a tensor (or an array, or nested lists of numbers), "
                        f"got {type(x).__name__} {x!r:.40}")
    return x


def like(x: Any, array: Any) -> Any:
    """``array`` (computed from ``x``'s values) as the kind of value ``x`` is: a tensor
    for a tensor (no gradient: a constant), the array itself otherwise."""
    return Tensor._wrap(array) if isinstance(x, Tensor) else array


def rank_of(A: Any, s: Any, atol: Any, rtol: Any) -> Any:  # noqa: N803
    """How many of the singular values ``s`` exceed max(atol, rtol·σ_max) (computed with
    difflab's operations, so vmap and the jit see them)."""
    m, n = A.shape[-2:]
    if rtol is None:
        rtol = max(m, n) * np.finfo(values(A).dtype).eps if atol is None or atol == 0 else 0.0
    if not s.shape[-1]:
        return F.sum(s, dim=-1) * 0
    tol = F.maximum(s[..., :1] * rtol, s[..., :1] * 0 + (0.0 if atol is None else atol))
    return F.sum(s > tol, dim=-1)


class SlogdetResult(NamedTuple):
    """``(sign, logabsdet)``, as ``torch.linalg.slogdet`` returns them."""

    sign: Any
    logabsdet: Any


class EighResult(NamedTuple):
    """``(eigenvalues, eigenvectors)``, as ``torch.linalg.eigh`` returns them."""

    eigenvalues: Any
    eigenvectors: Any


class QRResult(NamedTuple):
    """``(Q, R)``, as ``torch.linalg.qr`` returns them."""

    Q: Any
    R: Any


class SVDResult(NamedTuple):
    """``(U, S, Vh)``, as ``torch.linalg.svd`` returns them."""

    U: Any
    S: Any
    Vh: Any


class CholeskyExResult(NamedTuple):
    """``(L, info)``: info 0 where the factorization succeeded, k > 0 where the leading
    minor of order k is not positive-definite."""

    L: Any
    info: Any


# ----------------------------------------------------------------------- determinants


def det(A: Any) -> Any:  # noqa: N803  (PyTorch's argument names)
    r"""The determinant of a square matrix (or of each in a stack).

    Its derivative is Jacobi's formula, d(det A) = tr(adj(A) dA): the gradient
    is the cofactor matrix det(A)·A⁻ᵀ, computed from the SVD where A is singular
    (the gradient of det there is not zero).

    Parameters
    ----------
    A : Tensor, array or dual number of shape (..., n, n)

    Returns
    -------
    The determinants, of shape (...).

    Examples
    --------
    >>> import difflab as dl
    >>> A = dl.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
    >>> d = dl.linalg.det(A)
    >>> d
    tensor(5., grad_fn=<LinalgDetBackward0>)
    >>> d.backward(); A.grad   # det(A) A⁻ᵀ: the cofactors
    tensor([[ 3., -1.],
            [-1.,  2.]])
    """
    return F.bind(ops.Det, as_input(A))


def slogdet(A: Any) -> SlogdetResult:  # noqa: N803
    r"""The sign and the log of the absolute value of the determinant.

    ``logabsdet`` has the gradient A⁻ᵀ (d log|det A| = tr(A⁻¹ dA)); ``sign`` has
    none.  At a singular matrix ``logabsdet`` is −inf and its backward raises
    :class:`~difflab.ops.linalg.LinAlgError`, as PyTorch's does.

    Parameters
    ----------
    A : Tensor, array or dual number of shape (..., n, n)

    Returns
    -------
    SlogdetResult
        ``(sign, logabsdet)``, each of shape (...).

    Examples
    --------
    >>> import difflab as dl
    >>> sign, logabsdet = dl.linalg.slogdet(dl.tensor([[0.0, 2.0], [3.0, 0.0]]))
    >>> sign, logabsdet
    (tensor(-1.), tensor(1.7918))
    """
    A = as_input(A)  # noqa: N806
    return SlogdetResult(F.bind(ops.DetSign, A), F.bind(ops.SlogDet, A))


# ---------------------------------------------------------------------------- Cholesky


def cholesky(A: Any, *, upper: bool = False, out: Any = None) -> Any:  # noqa: N803
    r"""The Cholesky factor L of a symmetric positive-definite A = L Lᵀ (``upper``: Lᵀ).

    Reads the lower triangle of A, as LAPACK and PyTorch do; the gradient is
    symmetric (Murray 2016, see :class:`difflab.ops.linalg.Cholesky`).

    Parameters
    ----------
    A : Tensor, array or dual number of shape (..., n, n)
    upper : bool
        Return the upper factor Lᵀ instead.
    out : Tensor, optional
        Written with the result (PyTorch's ``out=``).

    Returns
    -------
    L, lower triangular with a positive diagonal (upper with ``upper=True``).

    Raises
    ------
    LinAlgError
        A is not positive-definite.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.linalg.cholesky(dl.tensor([[4.0, 2.0], [2.0, 5.0]]))
    tensor([[2., 0.],
            [1., 2.]])
    """
    return _out(out, F.bind(ops.Cholesky, as_input(A), upper=upper))


def _out(out: Any, result: Any) -> Any:
    return result if out is None else write_out(out, result)


def _ex(name: str, A: Any, compute: Any, failed: Any, check_errors: bool) -> tuple:  # noqa: N803
    """``*_ex``: ``compute(A)`` with ``info`` instead of an error.  Matrices that fail
    (``failed(matrix) -> info``) are replaced by the identity before the primitive runs
    and their results by NaN, so the others keep their values and gradients."""
    array = values(A)
    xp = backend.array_module(array)
    batch = tuple(array.shape[:-2])
    try:
        return compute(A), like(A, xp.zeros(batch, dtype=np.int32))
    except ops.LinAlgError:
        if check_errors:
            raise
    host = backend.to_numpy(array)
    info = np.zeros(batch, dtype=np.int32)
    for index in np.ndindex(*batch):
        info[index] = failed(host[index])
    bad = xp.asarray(info != 0)[..., None, None]
    eye = xp.eye(array.shape[-1], dtype=array.dtype)
    safe = F.where(like(A, bad), like(A, xp.broadcast_to(eye, array.shape)), A)
    result = compute(safe)
    nan = xp.full((), np.nan, dtype=array.dtype)
    rows = bad if result.ndim == array.ndim else bad[..., 0]
    return F.where(like(A, rows), like(A, nan), result), like(A, xp.asarray(info))


def _first_failing_minor(matrix: np.ndarray) -> int:
    for k in range(1, matrix.shape[-1] + 1):
        try:
            np.linalg.cholesky(matrix[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return 0


def cholesky_ex(A: Any, *, upper: bool = False,  # noqa: N803
                check_errors: bool = False) -> CholeskyExResult:
    r""":func:`cholesky` that reports failure in ``info`` instead of raising.

    Parameters
    ----------
    A : Tensor, array or dual number of shape (..., n, n)
    upper : bool
        Return the upper factor.
    check_errors : bool
        Raise :class:`~difflab.ops.linalg.LinAlgError` as :func:`cholesky` does.

    Returns
    -------
    CholeskyExResult
        ``(L, info)``: info (int32, shape (...)) is 0 where A is positive-definite,
        else the order of its first leading minor that is not (L is NaN there).

    Examples
    --------
    >>> import difflab as dl
    >>> L, info = dl.linalg.cholesky_ex(dl.tensor([[1.0, 2.0], [2.0, 1.0]]))
    >>> info
    tensor(2, dtype=difflab.int32)
    """
    result, info = _ex("cholesky", as_input(A), lambda a: cholesky(a, upper=upper),
                       _first_failing_minor, check_errors)
    return CholeskyExResult(result, info)


# --------------------------------------------------------------------------------- QR


def qr(A: Any, mode: str = "reduced") -> QRResult:  # noqa: N803
    r"""The QR decomposition A = Q R: Q with orthonormal columns, R upper triangular.

    Parameters
    ----------
    A : Tensor, array or dual number of shape (..., m, n)
    mode : {"reduced", "complete", "r"}
        ``reduced``: Q is m × k, R is k × n (k = min(m, n)); ``complete``: Q is
        m × m; ``r``: R only (Q is an empty tensor), as in PyTorch.

    Returns
    -------
    QRResult
        ``(Q, R)``, with LAPACK's signs (R's diagonal may be negative).

    Raises
    ------
    ValueError
        If ``A`` has fewer than 2 dimensions (a vector is no matrix: make it one
        with ``A.reshape(1, -1)`` or ``A.unsqueeze(-1)``).  Also if ``mode`` is
        not one of the three.

    Examples
    --------
    >>> import difflab as dl
    >>> Q, R = dl.linalg.qr(dl.tensor([[3.0, 1.0], [4.0, 2.0]]))
    >>> dl.allclose(Q @ R, dl.tensor([[3.0, 1.0], [4.0, 2.0]]))
    True
    """
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"linalg.qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    A = as_input(A)  # noqa: N806
    ops.check_matrix("linalg.qr", A)
    m = A.shape[-2]
    packed = F.bind(spectral.QR, A, mode="complete" if mode == "complete" else "reduced")
    q, r = packed[..., :m, :], mT(packed[..., m:, :])
    if mode == "r":
        q = like(A, backend.array_module(values(A)).zeros((0,), dtype=values(A).dtype))
    return QRResult(q, r)


# --------------------------------------------------------------------------- eigh, svd


def _lower_of(A: Any, UPLO: str) -> Any:  # noqa: N803
    if UPLO not in ("L", "U"):
        raise ValueError(f"linalg.eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
    return A if UPLO == "L" else mT(A)  # (the upper triangle is the transpose's lower)


def eigh(A: Any, UPLO: str = "L") -> EighResult:  # noqa: N803
    r"""Eigenvalues (ascending) and eigenvectors of a symmetric matrix: A = V diag(w) Vᵀ.

    Reads one triangle (``UPLO``); the gradient is symmetric.  Where
    eigenvalues repeat, the eigenvectors are not unique and their gradient
    is inf or NaN there (as in PyTorch); the eigenvalues' is always finite.

    Parameters
    ----------
    A : Tensor, array or dual number of shape (..., n, n)
    UPLO : {"L", "U"}
        Which triangle of A is read.

    Returns
    -------
    EighResult
        ``(eigenvalues, eigenvectors)``: shapes (..., n) and (..., n, n), the
        eigenvectors in the columns.

    Examples
    --------
    >>> import difflab as dl
    >>> w, V = dl.linalg.eigh(dl.tensor([[2.0, 1.0], [1.0, 2.0]]))
    >>> w
    tensor([1., 3.])
    """
    packed = F.bind(spectral.Eigh, _lower_of(as_input(A), UPLO))
    return EighResult(packed[..., 0, :], packed[..., 1:, :])


def eigvalsh(A: Any, UPLO: str = "L") -> Any:  # noqa: N803
    r"""The eigenvalues of a symmetric matrix, ascending; gradient V diag(w̄) Vᵀ.

    Parameters
    ----------
    A : Tensor, array or dual number of shape (..., n, n)
    UPLO : {"L", "U"}
        Which triangle of A is read.

    Returns
    -------
    The eigenvalues, of shape (..., n).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.linalg.eigvalsh(dl.tensor([[2.0, 0.0], [0.0, -1.0]]))
    tensor([-1.,  2.])
    """
    return F.bind(spectral.EigvalsH, _lower_of(as_input(A), UPLO))


def svd(A: Any, full_matrices: bool = True, *, driver: Any = None) -> SVDResult:  # noqa: N803
    r"""The singular value decomposition A = U diag(S) Vh, S descending.

    Parameters
    ----------
    A : Tensor, array or dual number of shape (..., m, n)
    full_matrices : bool
        True (PyTorch's default): U is m × m and Vh n × n; the columns beyond
        k = min(m, n) span the complement and carry no gradient, as in
        PyTorch.  False: U is m × k, Vh is k × n.
    driver : None
        PyTorch's choice of cuSOLVER routine; accepted and ignored.

    Returns
    -------
    SVDResult
        ``(U, S, Vh)``.

    Raises
    ------
    ValueError
        If ``A`` has fewer than 2 dimensions (a vector is no matrix: make it one
        with ``A.reshape(1, -1)`` or ``A.unsqueeze(-1)``).

    Examples
    --------
    >>> import difflab as dl
    >>> U, S, Vh = dl.linalg.svd(dl.tensor([[3.0, 0.0], [0.0, -4.0]]))
    >>> S
    tensor([4., 3.])
    """
    A = as_input(A)  # noqa: N806
    ops.check_matrix("linalg.svd", A)
    m, n = A.shape[-2], A.shape[-1]
    packed = F.bind(spectral.SVD, A)
    u, s, vh = packed[..., :m, :], packed[..., m, :], mT(packed[..., m + 1:, :])
    k = min(m, n)
    if full_matrices and m > k:  # the complement's columns: no derivative
        u = F.cat([u, F.bind(spectral.SVDComplement, A, side="U")], dim=-1)
    if full_matrices and n > k:
        vh = F.cat([vh, F.bind(spectral.SVDComplement, A, side="Vh")], dim=-2)
    return SVDResult(u, s, vh)


def svdvals(A: Any) -> Any:  # noqa: N803
    r"""The singular values of A, descending; gradient U diag(s̄) Vᵀ.

    Parameters
    ----------
    A : Tensor, array or dual number of shape (..., m, n)

    Returns
    -------
    The singular values, of shape (..., min(m, n)).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.linalg.svdvals(dl.tensor([[0.0, 2.0], [1.0, 0.0]]))
    tensor([2., 1.])
    """
    return F.bind(spectral.SvdVals, as_input(A))
