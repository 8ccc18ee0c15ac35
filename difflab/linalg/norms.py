r"""Norms, condition numbers, ranks and products: ``norm``, ``vector_norm``, ``cond``, ...

All composites of primitives difflab already has (``abs``, ``sum``, ``amax``,
``svdvals``, ``matmul``, ...), so their derivatives follow in every method.
NumPy's own calls (``np.moveaxis``, ``np.squeeze``) move dimensions: they
dispatch on tensors, dual numbers and arrays alike.  The 2-norm of a zero
vector has the subgradient 0 there (as in PyTorch), not the 0/0 of
d√s = 1/(2√s): the square root is taken of a sum that is moved away from 0
where it is 0 (the safe ``where`` of :mod:`difflab.functions_math`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from difflab import backend
from difflab import functions as F  # noqa: N812
from difflab import functions_picking as picking
from difflab.linalg.decompositions import as_input, like, rank_of, svdvals, values
from difflab.linalg.solvers import inv
from difflab.ops.linalg import check_matrix
from difflab.tensor import Tensor
from difflab.tensor_arguments import dim_index, dim_indices

__all__ = ["cond", "cross", "diagonal", "householder_product", "matmul", "matrix_norm",
           "matrix_rank", "multi_dot", "norm", "vander", "vecdot", "vector_norm"]


def _dims(dim: Any, ndim: int, name: str) -> tuple:
    """``dim`` (None: all) as non-negative dims, each checked, none repeated."""
    if dim is None:
        return tuple(range(ndim))
    return dim_indices(dim, ndim, name)


def _root(total: Any, p: float) -> Any:
    """total^(1/p), with the derivative 0 (not 0/0) where total is 0."""
    zero = total == 0
    # (total · 0 is 0 exactly where total is 0: the constants made of total itself, so
    # vmap and the jit see operations, not values)
    safe = F.where(zero, total * 0 + 1, total)
    root = F.sqrt(safe) if p == 2 else safe ** (1.0 / p)
    return F.where(zero, total * 0, root)


def vector_norm(x: Any, ord: Any = 2, dim: Any = None, keepdim: bool = False,  # noqa: A002
                *, dtype: Any = None, out: Any = None) -> Any:
    r"""The vector p-norm (Σ|xᵢ|ᵖ)^(1/p) over ``dim`` (all dimensions: the flattened x).

    Parameters
    ----------
    x : Tensor, array or dual number
    ord : float, inf or -inf
        p: 2 (default), 1, any real; ``inf`` max|xᵢ|, ``-inf`` min|xᵢ|; 0 counts the
        non-zero entries (no gradient).
    dim : int or tuple of int, optional
        The dimensions reduced.
    keepdim : bool
        Keep them with size 1.
    dtype : optional
        Cast x to it first.
    out : Tensor, optional
        Written with the result.

    Returns
    -------
    The norms.

    Raises
    ------
    IndexError
        If a dimension in ``dim`` is out of range.
    TypeError
        If ``dim`` is not an int or a tuple of ints, or ``ord`` is not a number (None).
    RuntimeError
        If ``dim`` names one dimension twice.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.linalg.vector_norm(dl.tensor([3.0, -4.0]))
    tensor(5.)
    >>> dl.linalg.vector_norm(dl.tensor([3.0, -4.0]), ord=float("inf"))
    tensor(4.)
    """
    x = as_input(x)
    if dtype is not None:
        x = x.to(dtype)
    dims = _dims(dim, x.ndim, "linalg.vector_norm")
    if ord is None or isinstance(ord, (bool, str)):  # (float(None) named no argument)
        raise TypeError(f"linalg.vector_norm: ord must be a number (2, 1, inf, ...), got "
                        f"{type(ord).__name__} {ord!r}; the matrix norms ('fro', 'nuc') are "
                        f"linalg.matrix_norm's")
    a = F.abs(x)
    if ord == math.inf:
        result = F.amax(a, dims, keepdim)
    elif ord == -math.inf:
        result = F.amin(a, dims, keepdim)
    elif ord == 0:
        result = F.sum((a != 0) * F.ones_like(a), dim=dims, keepdim=keepdim)
    elif ord == 1:
        result = F.sum(a, dim=dims, keepdim=keepdim)
    elif ord == 2:
        complex_values = getattr(getattr(x, "dtype", None), "kind", "") == "c"
        squares = a * a if complex_values else x * x  # (|z|², not z², for complex z)
        result = _root(F.sum(squares, dim=dims, keepdim=keepdim), 2)
    else:
        result = _root(F.sum(a ** float(ord), dim=dims, keepdim=keepdim), float(ord))
    return result if out is None else F.write_out(out, result)


def _matrix_last(A: Any, dim: tuple) -> tuple:  # noqa: N803
    """A with the two dimensions ``dim`` moved last, and how to put them back."""
    d0, d1 = _dims(dim, A.ndim, "linalg.matrix_norm")
    return np.moveaxis(A, (d0, d1), (-2, -1)), (d0, d1)


def matrix_norm(A: Any, ord: Any = "fro", dim: Any = (-2, -1),  # noqa: A002, N803
                keepdim: bool = False, *, dtype: Any = None, out: Any = None) -> Any:
    r"""A matrix norm over the two dimensions ``dim``.

    ``"fro"``: √Σ aᵢⱼ²; ``"nuc"``: Σ σᵢ; 2 / -2: the largest / smallest singular
    value; 1 / -1: the largest / smallest column sum of |A|; inf / -inf: the
    largest / smallest row sum.

    Parameters
    ----------
    A : Tensor, array or dual number with at least 2 dimensions
    ord : {"fro", "nuc", 2, -2, 1, -1, inf, -inf}
    dim : pair of int
        The matrix dimensions.
    keepdim : bool
        Keep them with size 1.
    dtype : optional
        Cast A to it first.
    out : Tensor, optional
        Written with the result.

    Returns
    -------
    The norms.

    Raises
    ------
    ValueError
        If ``A`` has fewer than 2 dimensions.
    RuntimeError
        If ``dim`` names one dimension twice.
    TypeError
        If ``dim`` is not a tuple of ints.
    IndexError
        If a dimension in ``dim`` is out of range.

    Examples
    --------
    >>> import difflab as dl
    >>> A = dl.tensor([[1.0, -2.0], [3.0, 4.0]])
    >>> dl.linalg.matrix_norm(A, ord=1), dl.linalg.matrix_norm(A, ord=float("inf"))
    (tensor(6.), tensor(7.))
    """
    A = as_input(A)  # noqa: N806
    check_matrix("linalg.matrix_norm", A)
    _dims(dim, A.ndim, "linalg.matrix_norm")  # (the dims checked before any is read)
    if dtype is not None:
        A = A.to(dtype)  # noqa: N806
    if ord == "fro":
        result = vector_norm(A, 2, dim, keepdim)
    elif ord in ("nuc", 2, -2):
        moved, (d0, d1) = _matrix_last(A, dim)
        s = svdvals(moved)
        result = (F.sum(s, dim=-1) if ord == "nuc" else F.amax(s, -1) if ord == 2
                  else F.amin(s, -1))
        if keepdim:
            result = np.expand_dims(result, (min(d0, d1), max(d0, d1)))
    elif ord in (1, -1, math.inf, -math.inf):
        d0, d1 = _dims(dim, A.ndim, "linalg.matrix_norm")
        summed, extreme = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = F.sum(F.abs(A), dim=summed, keepdim=True)
        pick = F.amax if ord in (1, math.inf) else F.amin
        result = pick(sums, extreme, True)
        if not keepdim:
            result = np.squeeze(result, (d0, d1))
    else:
        raise ValueError(f"linalg.matrix_norm: ord must be 'fro', 'nuc', 2, -2, 1, -1, inf "
                         f"or -inf, got {ord!r}")
    return result if out is None else F.write_out(out, result)


def norm(A: Any, ord: Any = None, dim: Any = None, keepdim: bool = False,  # noqa: A002, N803
         *, dtype: Any = None, out: Any = None) -> Any:
    r"""A vector or matrix norm, as ``torch.linalg.norm`` chooses.

    ``dim`` an int (or ``ord=None`` and no ``dim``): :func:`vector_norm` (of the
    flattened A); ``dim`` a pair, or a 2-D A with ``ord`` given: :func:`matrix_norm`
    (``ord=None`` is Frobenius).

    Parameters
    ----------
    A : Tensor, array or dual number
    ord : optional
        The vector or matrix order (see :func:`vector_norm`, :func:`matrix_norm`).
    dim : int or pair of int, optional
    keepdim : bool
    dtype : optional
    out : Tensor, optional

    Returns
    -------
    The norms.

    Examples
    --------
    >>> import difflab as dl
    >>> A = dl.tensor([[3.0, 0.0], [0.0, 4.0]])
    >>> dl.linalg.norm(A), dl.linalg.norm(A, ord=2)
    (tensor(5.), tensor(4.))
    """
    A = as_input(A)  # noqa: N806
    if dim is not None:
        dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
        if len(dims) == 1:
            return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype, out=out)
        if len(dims) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype,
                               out=out)
        raise ValueError(f"linalg.norm: dim must be an int or a pair, got {dim!r}")
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype, out=out)
    if A.ndim == 1:
        return vector_norm(A, ord, None, keepdim, dtype=dtype, out=out)
    if A.ndim == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype, out=out)
    raise ValueError(f"linalg.norm: with ord={ord!r} and no dim, A must be 1-D or 2-D, got "
                     f"shape {tuple(A.shape)}; pass dim")


def cond(A: Any, p: Any = None, *, out: Any = None) -> Any:  # noqa: N803
    r"""The condition number κ(A) = ‖A‖ ‖A⁻¹‖ (p = None or 2: σ_max / σ_min).

    It bounds how much a relative error in A or b grows in the solution of
    A x = b, which is why the tests' tolerances scale with it.

    Parameters
    ----------
    A : Tensor, array or dual number of shape (..., n, n) (any m × n for p = None, 2, -2)
    p : {None, 2, -2, "fro", "nuc", 1, -1, inf, -inf}
    out : Tensor, optional

    Returns
    -------
    The condition numbers.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.linalg.cond(dl.tensor([[1.0, 0.0], [0.0, 100.0]]))
    tensor(100.)
    """
    A = as_input(A)  # noqa: N806
    if p in (None, 2, -2):
        s = svdvals(A)
        big, small = s[..., 0], s[..., -1]
        result = big / small if p != -2 else small / big
    else:
        result = matrix_norm(A, p) * matrix_norm(inv(A), p)
    return result if out is None else F.write_out(out, result)


def matrix_rank(A: Any, *, atol: Any = None, rtol: Any = None,  # noqa: N803
                hermitian: bool = False, out: Any = None) -> Any:
    r"""The numerical rank: how many singular values exceed max(atol, rtol·σ_max).

    With neither tolerance given, rtol = max(m, n)·eps (PyTorch's default).  A count:
    no gradient.

    Parameters
    ----------
    A : Tensor, array or dual number of shape (..., m, n)
    atol, rtol : float, optional
    hermitian : bool
        Accepted for PyTorch's signature.
    out : Tensor, optional

    Returns
    -------
    The ranks, int64.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.linalg.matrix_rank(dl.tensor([[1.0, 2.0], [2.0, 4.0]]))
    tensor(1)
    """
    A = as_input(A)  # noqa: N806
    result = rank_of(A, svdvals(A), atol, rtol)
    return result if out is None else F.write_out(out, result)


def multi_dot(tensors: Any, *, out: Any = None) -> Any:
    r"""The product of two or more matrices, A₁ A₂ ⋯ Aₖ.

    The first may be a row vector and the last a column vector, as in PyTorch.

    Parameters
    ----------
    tensors : sequence of Tensor (or arrays, dual numbers)
    out : Tensor, optional

    Returns
    -------
    The product.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.linalg.multi_dot([dl.ones(3), dl.eye(3) * 2, dl.ones(3)])
    tensor(6.)
    """
    tensors = [as_input(t) for t in tensors]
    if len(tensors) < 2:
        raise ValueError(f"linalg.multi_dot: expected at least 2 tensors, got {len(tensors)}")
    for i, t in enumerate(tensors):
        if t.ndim != 2 and not (t.ndim == 1 and i in (0, len(tensors) - 1)):
            raise ValueError(f"linalg.multi_dot: tensor {i} must be 2-D (only the first and "
                             f"last may be 1-D), got shape {tuple(t.shape)}")
    result = tensors[0]
    for t in tensors[1:]:
        result = F.matmul(result, t)
    return result if out is None else F.write_out(out, result)


def cross(input: Any, other: Any, *, dim: int = -1, out: Any = None) -> Any:  # noqa: A002
    r"""The cross product of 3-vectors along ``dim`` (batch dimensions broadcast).

    Parameters
    ----------
    input, other : Tensor, array or dual number with size 3 along ``dim``
    dim : int
    out : Tensor, optional

    Returns
    -------
    a × b.

    Raises
    ------
    ValueError
        If the inputs do not have size 3 along ``dim``.
    IndexError
        If ``dim`` is out of range for either input.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.linalg.cross(dl.tensor([1.0, 0.0, 0.0]), dl.tensor([0.0, 1.0, 0.0]))
    tensor([0., 0., 1.])
    """
    a, b = as_input(input), as_input(other)
    for t in (a, b):
        dim_index(dim, t.ndim, "linalg.cross", zero_d_has_dim=False)
    if a.shape[dim] != 3 or b.shape[dim] != 3:
        raise ValueError(f"linalg.cross: inputs must have size 3 along dim={dim}, got shapes "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")
    a, b = np.moveaxis(a, dim, -1), np.moveaxis(b, dim, -1)
    x = [a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1], a[..., 2] * b[..., 0]
         - a[..., 0] * b[..., 2], a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]]
    result = np.moveaxis(np.stack(x, axis=-1), -1, dim)
    return result if out is None else F.write_out(out, result)


def vecdot(x: Any, y: Any, *, dim: int = -1, out: Any = None) -> Any:
    r"""The dot product of vectors along ``dim``, Σᵢ xᵢ yᵢ (batch dimensions broadcast).

    Parameters
    ----------
    x, y : Tensor, array or dual number
    dim : int
    out : Tensor, optional

    Returns
    -------
    The dot products.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.linalg.vecdot(dl.tensor([1.0, 2.0]), dl.tensor([3.0, 4.0]))
    tensor(11.)
    """
    result = F.sum(as_input(x) * as_input(y), dim=dim)
    return result if out is None else F.write_out(out, result)


def matmul(input: Any, other: Any, *, out: Any = None) -> Any:  # noqa: A002
    r"""The matrix product (``difflab.matmul``, under ``linalg`` as in PyTorch).

    Parameters
    ----------
    input, other : Tensor, array or dual number
    out : Tensor, optional

    Returns
    -------
    input @ other.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.linalg.matmul(dl.eye(2), dl.tensor([1.0, 2.0]))
    tensor([1., 2.])
    """
    return F.matmul(as_input(input), as_input(other), out=out)


def diagonal(A: Any, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Any:  # noqa: N803
    r"""The diagonals of a stack of matrices.

    ``difflab.diagonal`` with the last two dimensions as default.

    Parameters
    ----------
    A : Tensor
    offset : int
        Above (> 0) or below (< 0) the main diagonal.
    dim1, dim2 : int
        The matrix dimensions.

    Returns
    -------
    The diagonals, in a last dimension.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.linalg.diagonal(dl.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([1., 4.])
    """
    A = as_input(A)  # noqa: N806
    if isinstance(A, Tensor):
        return picking.diagonal(A, offset, dim1, dim2)
    return np.diagonal(A, offset, dim1, dim2)  # (arrays, dual numbers: NumPy's own)


def vander(x: Any, *, N: Any = None) -> Any:  # noqa: N803
    r"""The Vandermonde matrix of x: columns x⁰, x¹, ..., x^(N−1).

    Increasing powers, as ``torch.linalg.vander``; NumPy's ``vander`` decreases.

    Parameters
    ----------
    x : Tensor, array or dual number of shape (..., n)
    N : int, optional
        The number of columns (default n).

    Returns
    -------
    The matrix, (..., n, N).

    Raises
    ------
    IndexError
        If ``x`` is 0-d (the points are its last dimension).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.linalg.vander(dl.tensor([1.0, 2.0, 3.0]))
    tensor([[1., 1., 1.],
            [1., 2., 4.],
            [1., 3., 9.]])
    """
    x = as_input(x)
    dim_index(-1, x.ndim, "linalg.vander", zero_d_has_dim=False)  # (x: a vector or a stack)
    n = x.shape[-1] if N is None else int(N)
    if n < 0:
        raise ValueError(f"linalg.vander: N must be non-negative, got {N}")
    columns = [x * 0 + 1]  # (x⁰ made of x, so vmap and the jit see operations)
    for _ in range(1, n):
        columns.append(columns[-1] * x)
    return F.stack(columns[:n], dim=-1) if n else F.stack([x], dim=-1)[..., :0]


def householder_product(A: Any, tau: Any, *, out: Any = None) -> Any:  # noqa: N803
    r"""The first n columns of H₁ H₂ ⋯ Hₖ, Hᵢ = I − τᵢ vᵢ vᵢᵀ (LAPACK's orgqr).

    vᵢ is column i of A below the diagonal with a 1 on it: the compact form in which
    LAPACK's QR stores Q.  A product of matrices built from A and τ: the derivative
    follows.

    Parameters
    ----------
    A : Tensor, array or dual number of shape (..., m, n), m ≥ n
    tau : the k ≤ n scales, (..., k)
    out : Tensor, optional

    Returns
    -------
    The product's first n columns, (..., m, n).

    Examples
    --------
    >>> import difflab as dl
    >>> H = dl.linalg.householder_product(dl.tensor([[1.0], [1.0]]), dl.tensor([1.0]))
    >>> H   # I − v vᵀ, v = (1, 1): first column
    tensor([[ 0.],
            [-1.]])
    """
    A, tau = as_input(A), as_input(tau)  # noqa: N806
    m, n = A.shape[-2], A.shape[-1]
    k = tau.shape[-1]
    if m < n or k > n:
        raise ValueError(f"linalg.householder_product: A must be m × n with m ≥ n and tau at "
                         f"most n long, got {tuple(A.shape)} and {tuple(tau.shape)}")
    array = values(A)
    xp = backend.array_module(array)
    q = None
    for i in range(k):
        below = xp.zeros(m, dtype=array.dtype)
        below[i + 1:] = 1.0
        unit = xp.zeros(m, dtype=array.dtype)
        unit[i] = 1.0
        v = A[..., :, i] * like(A, below) + like(A, unit)  # (..., m)
        t = tau[..., i][..., None, None]
        if q is None:
            q = like(A, xp.eye(m, dtype=array.dtype)) - t * (v[..., :, None] * v[..., None, :])
        else:  # Q Hᵢ = Q − τ (Q v) vᵀ
            qv = F.matmul(q, v[..., :, None])
            q = q - t * (qv * v[..., None, :])
    if q is None:
        q = A * 0 + like(A, xp.eye(m, n, dtype=array.dtype))
        return q if out is None else F.write_out(out, q)
    result = q[..., :, :n]
    return result if out is None else F.write_out(out, result)

