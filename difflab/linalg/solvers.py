r"""Inverses and solvers: ``solve``, ``inv``, ``pinv``, ``lstsq``, ``solve_triangular``, ...

``solve``, ``inv``, ``pinv`` and ``matrix_exp`` are primitives of
:mod:`difflab.ops.linalg` (their rules there); the others are composites of
them (``lstsq`` is the pseudo-inverse applied to B, ``solve_triangular`` a
solve with the other triangle masked away, ``matrix_power`` repeated
squaring), so their derivatives follow in every method.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from difflab import backend
from difflab import functions as F  # noqa: N812
from difflab.linalg.decompositions import _ex, _out, as_input, like, mT, rank_of, svdvals, values
from difflab.ops import linalg as ops

__all__ = ["inv", "inv_ex", "lstsq", "matrix_exp", "matrix_power", "pinv", "solve",
           "solve_ex", "solve_triangular", "tensorinv", "tensorsolve"]


class InvExResult(NamedTuple):
    """``(inverse, info)``: info 0 where A is invertible, > 0 where it is singular."""

    inverse: Any
    info: Any


class SolveExResult(NamedTuple):
    """``(result, info)``: info 0 where A is invertible, > 0 where it is singular."""

    result: Any
    info: Any


class LstsqResult(NamedTuple):
    """``(solution, residuals, rank, singular_values)``, as ``torch.linalg.lstsq``."""

    solution: Any
    residuals: Any
    rank: Any
    singular_values: Any


def _is_vector_rhs(A: Any, B: Any) -> bool:  # noqa: N803
    """PyTorch's rule: B is a vector (or a batch of them) when it is 1-D, or has one
    dimension fewer than A and A's shape without its last dimension."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def solve(A: Any, B: Any, *, left: bool = True, out: Any = None) -> Any:  # noqa: N803
    r"""The solution X of A X = B (``left=False``: X A = B) for square, invertible A.

    Derivatives (Giles 2008): Ẋ = A⁻¹(Ḃ − ȦX); B̄ = A⁻ᵀX̄, Ā = −B̄Xᵀ.  Batch
    dimensions broadcast.

    Parameters
    ----------
    A : Tensor, array or dual number of shape (..., n, n)
    B : right-hand sides, (..., n, k), or vectors (..., n) (PyTorch's rule)
    left : bool
        Solve A X = B (True) or X A = B (False).
    out : Tensor, optional
        Written with the result.

    Returns
    -------
    X, shaped like B (broadcast over the batch).

    Raises
    ------
    LinAlgError
        A is singular.

    Examples
    --------
    >>> import difflab as dl
    >>> A = dl.tensor([[3.0, 1.0], [1.0, 2.0]])
    >>> dl.linalg.solve(A, dl.tensor([9.0, 8.0]))
    tensor([2., 3.])
    """
    A, B = as_input(A), as_input(B)  # noqa: N806
    if not left:  # X A = B  ⇔  Aᵀ Xᵀ = Bᵀ
        return _out(out, mT(solve(mT(A), mT(B))))
    if _is_vector_rhs(A, B):
        return _out(out, F.bind(ops.Solve, A, B[..., None])[..., 0])
    return _out(out, F.bind(ops.Solve, A, B))


def _singular(matrix: np.ndarray) -> int:
    return int(np.linalg.matrix_rank(matrix) < matrix.shape[-1])


def solve_ex(A: Any, B: Any, *, left: bool = True,  # noqa: N803
             check_errors: bool = False) -> SolveExResult:
    r""":func:`solve` that reports a singular A in ``info`` instead of raising.

    Parameters
    ----------
    A, B, left : as for :func:`solve`
    check_errors : bool
        Raise :class:`~difflab.ops.linalg.LinAlgError` as :func:`solve` does.

    Returns
    -------
    SolveExResult
        ``(result, info)``: info (int32, shape (...)) is 0 where A is invertible and
        positive where it is singular (the result is NaN there).

    Examples
    --------
    >>> import difflab as dl
    >>> X, info = dl.linalg.solve_ex(dl.eye(2), dl.ones(2))
    >>> X, info
    (tensor([1., 1.]), tensor(0, dtype=difflab.int32))
    """
    B = as_input(B)  # noqa: N806
    result, info = _ex("solve", as_input(A), lambda a: solve(a, B, left=left), _singular,
                       check_errors)
    return SolveExResult(result, info)


def inv(A: Any, *, out: Any = None) -> Any:  # noqa: N803
    r"""The inverse A⁻¹ of a square, invertible matrix.

    Derivatives (Giles 2008): d(A⁻¹) = −A⁻¹ dA A⁻¹; Ā = −A⁻ᵀ Ȳ A⁻ᵀ.

    Parameters
    ----------
    A : Tensor, array or dual number of shape (..., n, n)
    out : Tensor, optional
        Written with the result.

    Returns
    -------
    A⁻¹, of shape (..., n, n).

    Raises
    ------
    LinAlgError
        A is singular.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.linalg.inv(dl.tensor([[2.0, 0.0], [0.0, 4.0]]))
    tensor([[0.5 , 0.  ],
            [0.  , 0.25]])
    """
    return _out(out, F.bind(ops.Inv, as_input(A)))


def inv_ex(A: Any, *, check_errors: bool = False) -> InvExResult:  # noqa: N803
    r""":func:`inv` that reports a singular A in ``info`` instead of raising.

    Parameters
    ----------
    A : Tensor, array or dual number of shape (..., n, n)
    check_errors : bool
        Raise :class:`~difflab.ops.linalg.LinAlgError` as :func:`inv` does.

    Returns
    -------
    InvExResult
        ``(inverse, info)``: info (int32) 0 where A is invertible, positive where it is
        singular (the inverse is NaN there).

    Examples
    --------
    >>> import difflab as dl
    >>> inverse, info = dl.linalg.inv_ex(dl.tensor([[1.0, 2.0], [2.0, 4.0]]))
    >>> info
    tensor(1, dtype=difflab.int32)
    """
    result, info = _ex("inv", as_input(A), inv, _singular, check_errors)
    return InvExResult(result, info)


def pinv(A: Any, *, atol: Any = None, rtol: Any = None,  # noqa: N803
         hermitian: bool = False, out: Any = None) -> Any:
    r"""The Moore-Penrose pseudo-inverse A⁺ (the least-squares inverse), from the SVD.

    Singular values at or below max(atol, rtol·σ_max) count as zero; with neither
    given, rtol = max(m, n)·eps, as in PyTorch.  The derivative (Golub & Pereyra
    1973) holds where the rank does not change.

    Parameters
    ----------
    A : Tensor, array or dual number of shape (..., m, n)
    atol, rtol : float, optional
        Absolute and relative tolerances.
    hermitian : bool
        Accepted for PyTorch's signature (the SVD serves symmetric A too).
    out : Tensor, optional
        Written with the result.

    Returns
    -------
    A⁺, of shape (..., n, m).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.linalg.pinv(dl.tensor([[1.0], [1.0]]))
    tensor([[0.5, 0.5]])
    """
    return _out(out, F.bind(ops.Pinv, as_input(A), atol=0.0 if atol is None else float(atol),
                            rtol=None if rtol is None else float(rtol)))


def lstsq(A: Any, B: Any, rcond: Any = None, *, driver: Any = None) -> LstsqResult:  # noqa: N803
    r"""The least-squares solution X minimizing ‖A X − B‖ (the pseudo-inverse's A⁺B).

    Parameters
    ----------
    A : Tensor, array or dual number of shape (..., m, n)
    B : right-hand sides, (..., m, k)
    rcond : float, optional
        Singular values below rcond·σ_max count as zero (default: max(m, n)·eps).
    driver : {None, "gelsy", "gelsd", "gelss", "gels"}
        PyTorch's LAPACK driver: it decides which extra results are filled, as
        PyTorch documents (``rank`` except for gels, ``singular_values`` for
        gelsd and gelss, ``residuals`` when m > n and A has full rank).

    Returns
    -------
    LstsqResult
        ``(solution, residuals, rank, singular_values)``; the ones a driver does
        not compute are empty.

    Examples
    --------
    >>> import difflab as dl
    >>> A = dl.tensor([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
    >>> dl.linalg.lstsq(A, dl.tensor([[1.0], [2.0], [3.0]])).solution
    tensor([[1.],
            [1.]])
    """
    driver = "gelsy" if driver is None else driver
    if driver not in ("gelsy", "gelsd", "gelss", "gels"):
        raise ValueError(f"linalg.lstsq: driver must be one of 'gels', 'gelsy', 'gelsd', "
                         f"'gelss', got {driver!r}")
    A, B = as_input(A), as_input(B)  # noqa: N806
    if B.ndim < 2 or B.shape[-2] != A.shape[-2]:
        raise ValueError(f"linalg.lstsq: A and B must have the same number of rows (A is "
                         f"{tuple(A.shape)}, B is {tuple(B.shape)}); B is (..., m, k)")
    solution = F.matmul(pinv(A, rtol=rcond), B)
    array = values(A)
    m, n = A.shape[-2:]
    empty = like(A, backend.array_module(array).zeros((0,), dtype=np.float64))
    s = svdvals(A)
    symbolic = array.dtype == object  # (symbols: no numerical rank to count)
    rank = empty if symbolic else rank_of(A, s, None, rcond)
    residuals = empty
    if m > n and driver != "gelsy" and bool((rank == n).all()):  # (reads the ranks)
        residuals = F.sum((F.matmul(A, solution) - B) ** 2, dim=-2)
    return LstsqResult(solution, residuals, empty if driver == "gels" else rank,
                       s if driver in ("gelsd", "gelss") else empty)


def solve_triangular(A: Any, B: Any, *, upper: bool, left: bool = True,  # noqa: N803
                     unitriangular: bool = False, out: Any = None) -> Any:
    r"""The solution of a triangular system A X = B (``left=False``: X A = B).

    Only the triangle named by ``upper`` is read (the other is masked away, so
    it gets no gradient, as in PyTorch); ``unitriangular`` takes the diagonal
    as ones.

    Parameters
    ----------
    A : Tensor, array or dual number of shape (..., n, n)
    B : right-hand sides, (..., n, k) (``left=False``: (..., k, n))
    upper : bool
        A is upper (True) or lower (False) triangular.
    left, unitriangular : bool
        As above.
    out : Tensor, optional
        Written with the result.

    Returns
    -------
    X, shaped like B.

    Examples
    --------
    >>> import difflab as dl
    >>> A = dl.tensor([[2.0, 0.0], [1.0, 1.0]])
    >>> dl.linalg.solve_triangular(A, dl.tensor([[2.0], [3.0]]), upper=False)
    tensor([[1.],
            [2.]])
    """
    A, B = as_input(A), as_input(B)  # noqa: N806
    n = A.shape[-1]
    xp = backend.array_module(values(A))
    dtype = values(A).dtype
    ones = xp.ones((n, n), dtype=dtype)
    mask = xp.triu(ones) if upper else xp.tril(ones)
    eye = xp.eye(n, dtype=dtype)
    if unitriangular:
        mask = mask - eye
    triangle = A * like(A, mask)
    if unitriangular:
        triangle = triangle + like(A, eye)
    if B.ndim < 2:
        raise ValueError(f"linalg.solve_triangular: B must be a matrix or a batch of them, "
                         f"got shape {tuple(B.shape)}")
    if B.ndim == A.ndim - 1:  # a matrix with one batch dimension fewer, broadcast: never
        B = B[None]  # noqa: N806  (the batch of vectors that solve would read it as)
    return _out(out, solve(triangle, B, left=left))


def tensorinv(A: Any, ind: int = 2, *, out: Any = None) -> Any:  # noqa: N803
    r"""The inverse of A seen as a linear map from its last dimensions to its first ``ind``.

    Parameters
    ----------
    A : Tensor, array or dual number whose first ``ind`` dimensions have as many
        entries as the others
    ind : int
        How many leading dimensions are the map's output.
    out : Tensor, optional
        Written with the result.

    Returns
    -------
    The inverse, of shape ``A.shape[ind:] + A.shape[:ind]``.

    Examples
    --------
    >>> import difflab as dl
    >>> A = dl.eye(4).reshape(4, 2, 2) * 2
    >>> dl.linalg.tensorinv(A, ind=1).shape
    difflab.Size([2, 2, 4])
    """
    A = as_input(A)  # noqa: N806
    if ind <= 0:
        raise ValueError(f"linalg.tensorinv: ind must be a positive integer, got {ind}")
    rows, cols = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    m, n = int(np.prod(rows)), int(np.prod(cols))
    if m != n:
        raise ValueError(f"linalg.tensorinv: the product of the first ind dimensions ({m}) "
                         f"must equal that of the others ({n}); shape {tuple(A.shape)}")
    return _out(out, F.reshape(inv(F.reshape(A, (m, n))), cols + rows))


def tensorsolve(A: Any, B: Any, dims: Any = None, *, out: Any = None) -> Any:  # noqa: N803
    r"""The X with ``tensordot(A, X, X.ndim) = B``: A seen as a linear map.

    Parameters
    ----------
    A : Tensor, array or dual number of shape ``B.shape + X.shape``
    B : the right-hand side
    dims : tuple of int, optional
        Dimensions of A moved to the end first (PyTorch's ``dims``).
    out : Tensor, optional
        Written with the result.

    Returns
    -------
    X, of shape ``A.shape[B.ndim:]``.

    Examples
    --------
    >>> import difflab as dl
    >>> A = dl.eye(6).reshape(2, 3, 6) * 3
    >>> dl.linalg.tensorsolve(A, dl.ones(2, 3)).shape
    difflab.Size([6])
    """
    A, B = as_input(A), as_input(B)  # noqa: N806
    if dims is not None:
        dims = [d % A.ndim for d in dims]
        A = F.permute(A, [d for d in range(A.ndim) if d not in dims] + dims)  # noqa: N806
    rest = tuple(A.shape[B.ndim:])
    m, n = int(np.prod(B.shape)), int(np.prod(rest))
    if tuple(A.shape[:B.ndim]) != tuple(B.shape) or m != n:
        raise ValueError(f"linalg.tensorsolve: A's shape {tuple(A.shape)} must be B's "
                         f"{tuple(B.shape)} followed by as many entries as B has")
    x = solve(F.reshape(A, (m, n)), F.reshape(B, (m,)))
    return _out(out, F.reshape(x, rest))


def matrix_exp(A: Any) -> Any:  # noqa: N803
    r"""The matrix exponential exp(A) = Σₖ Aᵏ/k!, by scaling and squaring (Higham 2005).

    Its derivative is the Fréchet derivative: the top-right block of
    exp([[A, Ȧ], [0, A]]) (Najfeld & Havel 1995).

    Parameters
    ----------
    A : Tensor, array or dual number of shape (..., n, n)

    Returns
    -------
    exp(A), of shape (..., n, n).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.linalg.matrix_exp(dl.tensor([[0.0, 1.0], [0.0, 0.0]]))
    tensor([[1., 1.],
            [0., 1.]])
    """
    return F.bind(ops.MatrixExp, as_input(A))


def matrix_power(A: Any, n: int, *, out: Any = None) -> Any:  # noqa: N803
    r"""Aⁿ for an integer n: repeated squaring (n < 0: of A⁻¹; n = 0: the identity).

    Parameters
    ----------
    A : Tensor, array or dual number of shape (..., m, m)
    n : int
        The exponent.
    out : Tensor, optional
        Written with the result.

    Returns
    -------
    Aⁿ, of shape (..., m, m).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.linalg.matrix_power(dl.tensor([[1.0, 1.0], [0.0, 1.0]]), 3)
    tensor([[1., 3.],
            [0., 1.]])
    """
    A = as_input(A)  # noqa: N806
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"linalg.matrix_power: n must be an integer, got {type(n).__name__}")
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"linalg.matrix_power: A must be batches of square matrices, got "
                         f"shape {tuple(A.shape)}")
    if n < 0:
        A, n = inv(A), -n  # noqa: N806
    result = None
    while n:
        if n & 1:
            result = A if result is None else F.matmul(result, A)
        n >>= 1
        if n:
            A = F.matmul(A, A)  # noqa: N806
    if result is None:  # n = 0: the identity, with A's batch shape
        array = values(A)
        eye = backend.array_module(array).eye(A.shape[-1], dtype=array.dtype)
        result = A * 0 + like(A, eye)
    return _out(out, result)
