r"""LU with partial pivoting and LDLᵀ: ``lu_factor``, ``lu``, ``lu_solve``, ``ldl_factor``, ...

Gaussian elimination written with difflab's operations, one column at a time
(a loop over the n columns, each step on whole stacks of matrices): the pivot
is the largest entry of the column (an ``argmax``, no derivative), the row
swap a product with a permutation matrix built from it, the elimination an
outer product.  Every step is an operation with its own rule, so the factors
are differentiable in every method (the derivative of LU at fixed pivots),
and a traced graph re-pivots on new values.  The factors and pivots are
LAPACK's (``getrf``): PyTorch's.

``ldl_factor`` is LDLᵀ *without* pivoting (PyTorch's LAPACK ``sytrf`` pivots
with 2 × 2 blocks where it must): its pivots are 1, ..., n, a valid input of
:func:`ldl_solve`; a zero pivot gives inf or NaN (``info`` says where).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from difflab import backend
from difflab import functions as F  # noqa: N812
from difflab.linalg.decompositions import as_input, like, mT, values
from difflab.linalg.solvers import solve_triangular
from difflab.ops.linalg import LinAlgError, check_matrix

__all__ = ["ldl_factor", "ldl_factor_ex", "ldl_solve", "lu", "lu_factor", "lu_factor_ex",
           "lu_solve"]


class LUFactorResult(NamedTuple):
    """``(LU, pivots)``: L below the diagonal (its unit diagonal implied), U on and above;
    pivots (int32, 1-based): row i was swapped with row pivots[i]."""

    LU: Any
    pivots: Any


class LUFactorExResult(NamedTuple):
    """``(LU, pivots, info)``: info 0, or k > 0 where U's k-th diagonal entry is 0."""

    LU: Any
    pivots: Any
    info: Any


class LUResult(NamedTuple):
    """``(P, L, U)`` with A = P L U."""

    P: Any
    L: Any
    U: Any


class LDLFactorResult(NamedTuple):
    """``(LD, pivots)``: L below the diagonal (unit diagonal implied), D on it."""

    LD: Any
    pivots: Any


class LDLFactorExResult(NamedTuple):
    """``(LD, pivots, info)``: info 0, or k > 0 where the k-th pivot of D is 0."""

    LD: Any
    pivots: Any
    info: Any


def _constants(A: Any) -> tuple:  # noqa: N803
    """(xp, dtype) of A's values: the namespace and type of the rule's constant masks."""
    array = values(A)
    return backend.array_module(array), array.dtype


def _unit(xp: Any, dtype: Any, n: int, j: int) -> Any:
    e = xp.zeros(n, dtype=dtype)
    e[j] = 1.0
    return e


def _beyond(xp: Any, dtype: Any, n: int, j: int) -> Any:
    """1 at the indices after j, 0 elsewhere."""
    mask = xp.zeros(n, dtype=dtype)
    mask[j + 1:] = 1.0
    return mask


def _safe_divide(x: Any, d: Any) -> Any:
    """x / d, 0 where d is 0 (LAPACK leaves a column below a zero pivot unscaled)."""
    zero = d == 0
    return F.where(zero, x * 0, x / F.where(zero, d * 0 + 1, d))


def _swapped(order: Any, j: int, p: Any) -> Any:
    """The row order (b, m) after swapping positions j and p (b,): integer arithmetic on
    the pivot indices, so a traced graph swaps by the pivots of new values."""
    index = _swap_index(order.shape[-1], j, p)
    return order[np.arange(order.shape[0])[:, None], index]


def _swap_index(m: int, j: int, p: Any) -> Any:
    """The rows 0..m−1 with j and p (b,) exchanged, (b, m): i + [i = j](p − j) + [i = p](j − p)."""
    rows = like(p, backend.array_module(values(p)).arange(m))  # (on p's device)
    return rows + (rows == j) * (p[:, None] - j) + (rows == p[:, None]) * (j - p[:, None])


def _factor(A: Any, pivot: bool) -> tuple:  # noqa: N803
    """Gaussian elimination with partial pivoting: (LU, pivots, P) with P A = L U.

    The batch is flattened to one dimension (b, m, n) so that a row swap is one
    gather, ``w[arange(b)[:, None], order]``: O(mn) per column, O(mn·min(m, n)) in all,
    as LAPACK's getrf."""
    m, n = A.shape[-2], A.shape[-1]
    batch = tuple(A.shape[:-2])
    xp, dtype = _constants(A)
    w = F.reshape(A, (-1, m, n))
    b = w.shape[0]
    lanes = np.arange(b)[:, None]
    order = like(A, xp.broadcast_to(xp.arange(m), (b, m)).copy())  # P's rows, as indices
    pivots = []
    for j in range(min(m, n)):
        if pivot:  # the row of the largest |entry| of column j, at or below row j
            p = F.argmax(F.abs(w[:, j:, j]), dim=-1) + j
            w = _swapped_rows(w, lanes, j, p)
            order = _swapped(order, j, p)
            pivots.append(p + 1)
        else:
            pivots.append(w[:, 0, 0] * 0 + (j + 1))
        below = like(A, _beyond(xp, dtype, m, j))
        factors = _safe_divide(w[:, :, j] * below, w[:, j, j][:, None])
        row = w[:, j, :] * like(A, _beyond(xp, dtype, n, j))
        column_j = like(A, _unit(xp, dtype, n, j))
        w = (w - factors[:, :, None] * row[:, None, :]
             - (w * (below[:, None] * column_j)) + factors[:, :, None] * column_j)
    k = min(m, n)
    stacked = F.stack(pivots, dim=-1) if pivots else F.reshape(order[:, :0], (b, 0))
    pivots = stacked.to(np.int32) if hasattr(stacked, "to") else stacked.astype(np.int32)
    swaps = (order[:, :, None] == like(A, xp.arange(m))) * 1.0  # row i is e_order[i]
    return (F.reshape(w, batch + (m, n)), F.reshape(pivots, batch + (k,)),
            F.reshape(swaps, batch + (m, m)))


def _swapped_rows(w: Any, lanes: np.ndarray, j: int, p: Any) -> Any:
    """The matrices w (b, m, n) with rows j and p (b,) swapped: one gather."""
    return w[lanes, _swap_index(w.shape[-2], j, p)]


def lu_factor(A: Any, *, pivot: bool = True, out: Any = None) -> LUFactorResult:  # noqa: N803
    r"""The LU factorization with partial pivoting, compactly (LAPACK's ``getrf``).

    Parameters
    ----------
    A : Tensor, array or dual number of shape (..., m, n)
    pivot : bool
        Partial pivoting (True, PyTorch's default) or none.
    out : tuple, optional
        Accepted for PyTorch's signature; must be None.

    Returns
    -------
    LUFactorResult
        ``(LU, pivots)``, for :func:`lu_solve`.

    Raises
    ------
    ValueError
        If ``A`` has fewer than 2 dimensions (a vector is no matrix: make it one
        with ``A.reshape(1, -1)`` or ``A.unsqueeze(-1)``).
    TypeError
        If ``out`` is given.

    Examples
    --------
    >>> import difflab as dl
    >>> LU, pivots = dl.linalg.lu_factor(dl.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> LU, pivots
    (tensor([[3.    , 4.    ],
            [0.3333, 0.6667]]), tensor([2, 2], dtype=difflab.int32))
    """
    if out is not None:
        raise TypeError("linalg.lu_factor: out= is not supported; assign the result")
    A = as_input(A)  # noqa: N806
    check_matrix("linalg.lu_factor", A)
    factors, pivots, _ = _factor(A, pivot)
    return LUFactorResult(factors, pivots)


def _first_zero(matrix: Any) -> Any:
    """0, or 1 + the index of the first zero on each diagonal of ``matrix`` (int32):
    LAPACK's info, computed with difflab's operations (vmap and the jit see them)."""
    k = min(matrix.shape[-2:])
    xp, dtype = _constants(matrix)
    zero = (F.sum(matrix[..., :k, :k] * like(matrix, xp.eye(k, dtype=dtype)), dim=-1) == 0) * 1.0
    info = F.where(F.amax(zero, -1) > 0, F.argmax(zero, dim=-1) + 1, F.argmax(zero, dim=-1) * 0)
    return info.to(np.int32) if hasattr(info, "to") else info.astype(np.int32)


def lu_factor_ex(A: Any, *, pivot: bool = True,  # noqa: N803
                 check_errors: bool = False) -> LUFactorExResult:
    r""":func:`lu_factor` with ``info``: where U has a zero on its diagonal (A singular).

    Parameters
    ----------
    A : Tensor, array or dual number of shape (..., m, n)
    pivot : bool
        Partial pivoting or none.
    check_errors : bool
        Raise :class:`~difflab.ops.linalg.LinAlgError` where info is not 0.

    Returns
    -------
    LUFactorExResult
        ``(LU, pivots, info)``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.linalg.lu_factor_ex(dl.tensor([[1.0, 2.0], [2.0, 4.0]])).info
    tensor(2, dtype=difflab.int32)
    """
    factors, pivots = lu_factor(A, pivot=pivot)
    info = _first_zero(factors)
    if check_errors and bool((values(info) != 0).any()):
        raise LinAlgError("linalg.lu_factor_ex: U has a zero on its diagonal (A is singular)")
    return LUFactorExResult(factors, pivots, info)


def _triangles(factors: Any) -> tuple:
    """L (unit lower, m × k) and U (upper, k × n) out of the compact LU."""
    m, n = factors.shape[-2], factors.shape[-1]
    k = min(m, n)
    xp, dtype = _constants(factors)
    lower = factors[..., :, :k] * like(factors, xp.tril(xp.ones((m, k), dtype=dtype), -1))
    lower = lower + like(factors, xp.eye(m, k, dtype=dtype))
    upper = factors[..., :k, :] * like(factors, xp.triu(xp.ones((k, n), dtype=dtype)))
    return lower, upper


def lu(A: Any, *, pivot: bool = True, out: Any = None) -> LUResult:  # noqa: N803
    r"""A = P L U: a permutation, a unit lower triangular and an upper triangular factor.

    Parameters
    ----------
    A : Tensor, array or dual number of shape (..., m, n)
    pivot : bool
        Partial pivoting (P is then the identity when False).
    out : tuple, optional
        Accepted for PyTorch's signature; must be None.

    Returns
    -------
    LUResult
        ``(P, L, U)``: P (m × m), L (m × k), U (k × n), k = min(m, n).

    Raises
    ------
    ValueError
        If ``A`` has fewer than 2 dimensions (a vector is no matrix: make it one
        with ``A.reshape(1, -1)`` or ``A.unsqueeze(-1)``).
    TypeError
        If ``out`` is given.

    Examples
    --------
    >>> import difflab as dl
    >>> A = dl.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> P, L, U = dl.linalg.lu(A)
    >>> dl.allclose(P @ L @ U, A)
    True
    """
    if out is not None:
        raise TypeError("linalg.lu: out= is not supported; assign the result")
    A = as_input(A)  # noqa: N806
    check_matrix("linalg.lu", A)
    factors, _, swaps = _factor(A, pivot)
    lower, upper = _triangles(factors)
    return LUResult(mT(swaps), lower, upper)


def _permutation(pivots: Any, m: int, like_value: Any) -> Any:
    """The row permutation P (P A = L U) that LAPACK's pivots describe: the swaps applied
    in order to the row indices (integer arithmetic, no value read into Python), then
    P's rows as one-hot vectors."""
    xp, _ = _constants(like_value)
    batch = tuple(pivots.shape[:-1])
    flat = F.reshape(pivots, (-1, pivots.shape[-1]))
    b = flat.shape[0]
    order = like(like_value, xp.broadcast_to(xp.arange(m), (b, m)).copy())
    for j in range(flat.shape[-1]):
        order = _swapped(order, j, flat[:, j] - 1)
    perm = (order[:, :, None] == like(like_value, xp.arange(m))) * 1.0
    return F.reshape(perm, batch + (m, m))


def lu_solve(LU: Any, pivots: Any, B: Any, *, left: bool = True,  # noqa: N803
             adjoint: bool = False, out: Any = None) -> Any:
    r"""The solution of A X = B from A's :func:`lu_factor`.

    ``adjoint=True`` solves Aᵀ X = B; ``left=False`` solves X A = B.

    Parameters
    ----------
    LU, pivots : from :func:`lu_factor` of a square A
    B : right-hand sides, (..., n, k)
    left, adjoint : bool
    out : Tensor, optional

    Returns
    -------
    X.

    Examples
    --------
    >>> import difflab as dl
    >>> A = dl.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> LU, pivots = dl.linalg.lu_factor(A)
    >>> dl.linalg.lu_solve(LU, pivots, dl.tensor([[5.0], [11.0]]))
    tensor([[1.],
            [2.]])
    """
    LU, B = as_input(LU), as_input(B)  # noqa: N806
    if not left:  # X A = B  ⇔  Aᵀ Xᵀ = Bᵀ
        result = mT(lu_solve(LU, pivots, mT(B), adjoint=not adjoint))
        return result if out is None else F.write_out(out, result)
    n = LU.shape[-1]
    if LU.shape[-2] != n:
        raise ValueError(f"linalg.lu_solve: LU must be square, got shape {tuple(LU.shape)}")
    perm = _permutation(as_input(pivots), n, LU)
    lower, upper = _triangles(LU)
    if not adjoint:  # L U X = P B
        y = solve_triangular(lower, F.matmul(perm, B), upper=False, unitriangular=True)
        result = solve_triangular(upper, y, upper=True)
    else:  # Uᵀ Lᵀ P X = B
        z = solve_triangular(mT(upper), B, upper=False)
        w = solve_triangular(mT(lower), z, upper=True, unitriangular=True)
        result = F.matmul(mT(perm), w)
    return result if out is None else F.write_out(out, result)


# ---------------------------------------------------------------------------- LDLᵀ


def _ldl(A: Any) -> tuple:  # noqa: N803
    """(LD, D's diagonal): symmetric elimination without pivoting, from A's lower triangle."""
    n = A.shape[-1]
    xp, dtype = _constants(A)
    lower = like(A, xp.tril(xp.ones((n, n), dtype=dtype), -1))
    w = A * (lower + like(A, xp.eye(n, dtype=dtype))) + mT(A * lower)  # (the lower triangle)
    columns, pivots = [], []
    for j in range(n):
        d = w[..., j, j]
        below = like(A, _beyond(xp, dtype, n, j))
        column = _safe_divide(w[..., :, j] * below, d[..., None])
        w = w - d[..., None, None] * (column[..., :, None] * column[..., None, :])
        columns.append(column)
        pivots.append(d)
    ld = F.stack(columns, dim=-1) + F.stack(pivots, dim=-1)[..., None, :] * like(
        A, xp.eye(n, dtype=dtype))
    return ld, F.stack(pivots, dim=-1)


def ldl_factor(A: Any, *, hermitian: bool = False,  # noqa: N803
               out: Any = None) -> LDLFactorResult:
    r"""A = L D Lᵀ for symmetric A (its lower triangle), L unit lower triangular, D diagonal.

    Without pivoting (see the module notes): the pivots are 1, ..., n.

    Parameters
    ----------
    A : Tensor, array or dual number of shape (..., n, n)
    hermitian : bool
        Accepted for PyTorch's signature (real matrices: the same).
    out : tuple, optional
        Must be None.

    Returns
    -------
    LDLFactorResult
        ``(LD, pivots)``, for :func:`ldl_solve`.

    Examples
    --------
    >>> import difflab as dl
    >>> LD, pivots = dl.linalg.ldl_factor(dl.tensor([[4.0, 2.0], [2.0, 5.0]]))
    >>> LD
    tensor([[4. , 0. ],
            [0.5, 4. ]])
    """
    if out is not None:
        raise TypeError("linalg.ldl_factor: out= is not supported; assign the result")
    A = as_input(A)  # noqa: N806
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"linalg.ldl_factor: A must be batches of square matrices, got "
                         f"shape {tuple(A.shape)}")
    ld, _ = _ldl(A)
    xp, _ = _constants(A)
    pivots = xp.broadcast_to(xp.arange(1, A.shape[-1] + 1, dtype=np.int32), A.shape[:-1])
    return LDLFactorResult(ld, like(A, xp.ascontiguousarray(pivots)))


def ldl_factor_ex(A: Any, *, hermitian: bool = False,  # noqa: N803
                  check_errors: bool = False) -> LDLFactorExResult:
    r""":func:`ldl_factor` with ``info``: the first zero pivot of D (1-based), or 0.

    Parameters
    ----------
    A : Tensor, array or dual number of shape (..., n, n)
    hermitian : bool
    check_errors : bool
        Raise :class:`~difflab.ops.linalg.LinAlgError` where info is not 0.

    Returns
    -------
    LDLFactorExResult
        ``(LD, pivots, info)``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.linalg.ldl_factor_ex(dl.tensor([[0.0, 1.0], [1.0, 0.0]])).info
    tensor(1, dtype=difflab.int32)
    """
    ld, pivots = ldl_factor(A, hermitian=hermitian)
    info = _first_zero(ld)
    if check_errors and bool((values(info) != 0).any()):
        raise LinAlgError("linalg.ldl_factor_ex: a zero pivot (this LDLᵀ does not pivot)")
    return LDLFactorExResult(ld, pivots, info)


def ldl_solve(LD: Any, pivots: Any, B: Any, *, hermitian: bool = False,  # noqa: N803
              out: Any = None) -> Any:
    r"""The solution of A X = B from A's :func:`ldl_factor`: L y = B, D z = y, Lᵀ X = z.

    Parameters
    ----------
    LD, pivots : from :func:`ldl_factor` (pivots 1, ..., n)
    B : right-hand sides, (..., n, k)
    hermitian : bool
    out : Tensor, optional

    Returns
    -------
    X.

    Examples
    --------
    >>> import difflab as dl
    >>> A = dl.tensor([[4.0, 2.0], [2.0, 5.0]])
    >>> LD, pivots = dl.linalg.ldl_factor(A)
    >>> dl.linalg.ldl_solve(LD, pivots, dl.tensor([[6.0], [7.0]]))
    tensor([[1.],
            [1.]])
    """
    LD, B = as_input(LD), as_input(B)  # noqa: N806
    n = LD.shape[-1]
    given = backend.to_numpy(values(as_input(pivots)))
    if not (given == np.arange(1, n + 1)).all():
        raise ValueError("linalg.ldl_solve: pivots with row interchanges or 2 × 2 blocks "
                         "(LAPACK's sytrf) are not supported; factor with "
                         "difflab.linalg.ldl_factor, which does not pivot")
    xp, dtype = _constants(LD)
    eye = like(LD, xp.eye(n, dtype=dtype))
    lower = LD * like(LD, xp.tril(xp.ones((n, n), dtype=dtype), -1)) + eye
    d = F.sum(LD * eye, dim=-1)
    y = solve_triangular(lower, B, upper=False, unitriangular=True)
    result = solve_triangular(mT(lower), y / d[..., :, None], upper=True, unitriangular=True)
    return result if out is None else F.write_out(out, result)
