"""Picking pieces out of tensors, diagonals, and products: PyTorch's names, composed.

Like :mod:`difflab.functions_joining`, every function here is a *composite* of the
primitives difflab already has (indexing, ``gather``, ``eye``, ``cat``, ``matmul``),
so each is differentiable in every method and replayed by the jit without a rule of
its own:

* picking: :func:`narrow`, :func:`select`, :func:`take`, :func:`take_along_dim`;
* diagonals: :func:`diagonal`, :func:`diag`, :func:`diag_embed`, :func:`diagflat`,
  :func:`trace`, :func:`tril_indices`, :func:`triu_indices`;
* products: :func:`tensordot`, :func:`inner`, :func:`vdot`, :func:`kron`,
  :func:`meshgrid`, :func:`cartesian_prod`, :func:`vander`, :func:`addmm` and friends.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from difflab import backend, tensor_views
from difflab import functions as F  # noqa: N812  (the primitives' public faces)
from difflab.creation import arange, eye, zeros
from difflab.functions_joining import broadcast_shapes, movedim
from difflab.tensor import Tensor
from difflab.tensor_arguments import (
    dim_index,
    integer,
    tensor_of,
    tensor_or_interpreted,
    view_of,
)

__all__ = [
    "addbmm", "addmm", "addmv", "addr", "as_strided", "cartesian_prod", "chain_matmul", "diag",
    "diag_embed", "diagflat", "diagonal", "inner", "kron", "meshgrid", "narrow", "select", "take",
    "take_along_dim", "tensordot", "trace", "tril_indices", "triu_indices", "vander", "vdot",
]


# -------------------------------------------------------------------------------- picking


def narrow(input: Tensor, dim: int, start: int, length: int) -> Tensor:  # noqa: A002
    """The slice ``start : start + length`` along ``dim`` (a view).

    Parameters
    ----------
    input : Tensor
        The tensor.
    dim : int
        The dimension to slice.
    start : int
        The first index (negative counts from the end).
    length : int
        How many elements to keep.

    Returns
    -------
    Tensor
        A view of ``input``.

    Raises
    ------
    TypeError
        If ``dim``, ``start`` or ``length`` is not an int.
    IndexError
        If ``dim`` is out of range, or the slice does not fit in that dimension.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.narrow(dl.arange(6), 0, 2, 3).tolist()
    [2, 3, 4]
    """
    x = tensor_or_interpreted(input)
    dim = dim_index(dim, x.ndim, "narrow", zero_d_has_dim=False)
    size = x.shape[dim]
    start, length = integer(start, "narrow", "start"), integer(length, "narrow", "length")
    begin = start + size if start < 0 else start
    if not 0 <= begin <= size or length < 0 or begin + length > size:
        raise IndexError(f"narrow: start {start} and length {length} do not fit in dimension "
                         f"{dim} of size {size}")
    return x[(slice(None),) * dim + (slice(begin, begin + length),)]


def select(input: Tensor, dim: int, index: int) -> Tensor:  # noqa: A002
    """The slice at ``index`` along ``dim``, that dimension removed (``x[:, index]``).

    Parameters
    ----------
    input : Tensor
        The tensor.
    dim : int
        The dimension.
    index : int
        The position along it (negative counts from the end).

    Returns
    -------
    Tensor
        A view with one dimension fewer.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.select(dl.tensor([[1, 2], [3, 4]]), 1, 0).tolist()
    [1, 3]
    """
    x = tensor_or_interpreted(input)
    dim = dim_index(dim, x.ndim, "select")
    if not -x.shape[dim] <= index < x.shape[dim]:
        raise IndexError(f"select: index {index} is out of range for dimension {dim} "
                         f"of size {x.shape[dim]}")
    return x[(slice(None),) * dim + (int(index),)]


def take(input: Tensor, index: Tensor) -> Tensor:  # noqa: A002
    """Elements of the flattened ``input`` at ``index`` (the result has ``index``'s shape).

    Parameters
    ----------
    input : Tensor
        The tensor, read as if flattened.
    index : Tensor
        Integer positions (negative counts from the end).

    Returns
    -------
    Tensor
        ``input.reshape(-1)[index]``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.take(dl.tensor([[4, 3], [5, 7]]), dl.tensor([0, 3])).tolist()
    [4, 7]
    """
    return tensor_or_interpreted(input).reshape(-1)[tensor_of(index)]


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:  # noqa: A002
    """Values at ``indices`` along ``dim``, the other dimensions broadcast (``gather``).

    With ``dim=None`` both tensors are flattened first.  The usual partner of
    ``argsort``/``argmax`` with ``keepdim=True``.

    Parameters
    ----------
    input : Tensor
        The values.
    indices : Tensor
        Integer positions along ``dim``.
    dim : int, optional
        The dimension to pick along.

    Returns
    -------
    Tensor
        The picked values.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([[10, 30, 20], [60, 40, 50]])
    >>> dl.take_along_dim(x, x.argmax(dim=1, keepdim=True), dim=1).tolist()
    [[30], [60]]
    """
    x, index = tensor_or_interpreted(input), tensor_of(indices)
    if dim is None:
        return F.gather(x.reshape(-1), 0, index.reshape(-1))
    dim = dim_index(dim, x.ndim, "take_along_dim")
    if index.ndim != x.ndim:
        raise RuntimeError(f"take_along_dim: input has {x.ndim} dimensions and indices "
                           f"{index.ndim}; they must have the same number")
    x_shape, index_shape = list(x.shape), list(index.shape)
    x_shape[dim] = index_shape[dim] = 1
    common = list(broadcast_shapes(x_shape, index_shape))
    x_target, index_target = list(common), list(common)
    x_target[dim], index_target[dim] = x.shape[dim], index.shape[dim]
    return F.gather(x.broadcast_to(x_target), dim, index.broadcast_to(index_target))


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:  # noqa: A002
    """The diagonal of the plane ``(dim1, dim2)``, as the last dimension.

    ``offset > 0`` takes a diagonal above the main one, ``offset < 0`` below.

    Parameters
    ----------
    input : Tensor
        At least 2-D.
    offset : int
        Which diagonal.
    dim1, dim2 : int
        The plane.

    Returns
    -------
    Tensor
        The diagonal entries, a view of ``input`` (as in PyTorch): a write into it
        writes ``input``'s diagonal (``A.diagonal().add_(eps)``), and a write into
        ``input`` is seen through it.  The gradient puts the entries back in place.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.diagonal(dl.tensor([[1, 2], [3, 4]])).tolist()
    [1, 4]
    >>> a = dl.zeros(2, 3)
    >>> _ = a.diagonal(offset=1).fill_(1.0)
    >>> a
    tensor([[0., 1., 0.],
            [0., 0., 1.]])
    """
    x = tensor_or_interpreted(input)
    d1, d2 = dim_index(dim1, x.ndim, "diagonal"), dim_index(dim2, x.ndim, "diagonal")
    if d1 == d2:
        raise RuntimeError(f"diagonal: dim1 and dim2 must differ, both are {dim1}")
    moved = movedim(x, (d1, d2), (-2, -1))
    rows, cols = moved.shape[-2], moved.shape[-1]
    start_row, start_col = builtins.max(-offset, 0), builtins.max(offset, 0)
    n = builtins.max(builtins.min(rows - start_row, cols - start_col), 0)
    steps = np.arange(n)
    # Recorded as integer indexing (its gradient, its graph and batching rules are
    # Index's), which copies; the tensor holds NumPy's diagonal, the same elements viewed
    # by strides, so that writes reach x (NumPy hands it out read-only: made writeable)
    out = moved[..., start_row + steps, start_col + steps]
    array = getattr(x, "array", None)
    if type(array) is np.ndarray:
        viewed = array.diagonal(offset, d1, d2)
        viewed.flags.writeable = True
    elif backend.is_gpu_array(array):  # (CuPy's diagonal is a view, written into freely)
        viewed = array.diagonal(offset, d1, d2)
    else:  # (dual numbers, sympy arrays, vmap's batched values: never written into)
        return out
    return view_of(x, out, viewed)


_diagonal_of = diagonal  # (diag's own argument is called diagonal, as in PyTorch)


def as_strided(input: Tensor, size: Any, stride: Any,  # noqa: A002
               storage_offset: int | None = None) -> Tensor:
    """A view of ``input``'s storage with the given shape and element strides.

    Element ``[i0, i1, ...]`` of the result is the storage's element number
    ``storage_offset + Σ_k i_k · stride[k]``: windows that overlap share elements
    (``x.as_strided((n - k + 1, k), (1, 1))`` is every window of length k).  The storage is
    the memory of the tensor ``input`` views (its base), read in row-major order; a write
    into the result writes it, as in PyTorch.  The gradient scatters back into
    ``input``'s elements, PyTorch's ``as_strided_backward``: an element read by several
    windows gets their gradients added up, and what the view reads from the storage outside
    ``input``'s own elements gets none.

    Parameters
    ----------
    input : Tensor
        The tensor whose storage is viewed.
    size : sequence of int
        The shape of the result.
    stride : sequence of int
        For each dimension, how many storage elements one step along it moves (>= 0).
    storage_offset : int, optional
        The storage element the result starts at; ``input.storage_offset()`` by default.

    Returns
    -------
    Tensor
        The view, sharing ``input``'s memory and version counter.

    Raises
    ------
    RuntimeError
        When ``size`` and ``stride`` differ in length, a stride or the offset is negative,
        or the view would read past the end of the storage (as PyTorch's ``setStorage``);
        or the storage is not laid out in row-major order (call ``.contiguous()`` first).

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.arange(5.0, requires_grad=True)
    >>> windows = dl.as_strided(x, (3, 3), (1, 1))
    >>> windows.detach()
    tensor([[0., 1., 2.],
            [1., 2., 3.],
            [2., 3., 4.]])
    >>> (windows * dl.arange(9.0).reshape(3, 3)).sum().backward()
    >>> x.grad
    tensor([ 0.,  4., 12., 12.,  8.])
    """
    x = tensor_or_interpreted(input)
    size, stride = _strided_shape(size, stride)
    array = getattr(x, "array", None)
    if type(array) is not np.ndarray and not backend.is_gpu_array(array):
        # (dual numbers, sympy arrays, vmap's batched values: their own elements, in order)
        at = _storage_positions(size, stride, storage_offset or 0, int(np.prod(x.shape)))
        return x.reshape(-1)[at.ravel()].reshape(size)
    storage = (x if x._base is None else x._base).array
    if not storage.flags.c_contiguous:
        raise RuntimeError("as_strided reads the storage in row-major order, but this "
                           "tensor's memory is laid out otherwise: call .contiguous() first")
    itemsize = storage.dtype.itemsize
    own = tensor_views.positions(x.array, storage)  # (x's elements in the storage)
    if storage_offset is None:
        storage_offset = int(own.ravel()[0]) if own.size else 0
    at = _storage_positions(size, stride, storage_offset, storage.size)
    xp = backend.array_module(storage)
    strides, start = tuple(s * itemsize for s in stride), storage_offset if at.size else 0
    if type(storage) is np.ndarray:  # (its .base is the storage: a view in view_of's sense)
        viewed = np.ndarray(size, storage.dtype, storage, start * itemsize, strides)
    else:
        viewed = xp.lib.stride_tricks.as_strided(storage.reshape(-1)[start:], size, strides)
    # Recorded as integer indexing of x's elements (Index's gradient: a scatter-add); what
    # lies outside x (a view) is its base's, read detached: no gradient goes there
    element = np.full(storage.size, -1, dtype=np.int64)
    element[own.ravel()] = np.arange(own.size)
    picked = element[at]
    inside = picked >= 0
    out = x.reshape(-1)[xp.asarray(np.where(inside, picked, 0))]
    if not inside.all():
        rest = x._base.detach().reshape(-1)[xp.asarray(at)]
        out = F.where(tensor_of(xp.asarray(inside)), out, rest)
    return view_of(x, out, viewed)


def _strided_shape(size: Any, stride: Any) -> tuple[tuple, tuple]:
    """``size`` and ``stride`` as tuples of ints, checked as PyTorch checks them."""
    size = tuple(integer(n, "as_strided", "size") for n in size)
    stride = tuple(integer(n, "as_strided", "stride") for n in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"as_strided: mismatch in length of strides and shape: size "
                           f"{list(size)} has {len(size)} dimensions, stride {list(stride)} "
                           f"has {len(stride)}")
    if any(n < 0 for n in size) or any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: sizes and strides must be non-negative (PyTorch "
                           f"supports no negative strides), got size {list(size)}, stride "
                           f"{list(stride)}: flip the result instead")
    return size, stride


def _storage_positions(size: tuple, stride: tuple, offset: int, storage_size: int) -> Any:
    """Each element's index in the storage, ``offset + Σ_k i_k · stride[k]``, checked to lie
    inside a storage of ``storage_size`` elements."""
    offset = integer(offset, "as_strided", "storage_offset")
    at = np.full(size, offset, dtype=np.int64)
    for axis, (n, s) in enumerate(zip(size, stride)):
        at = at + (np.arange(n, dtype=np.int64) * s).reshape(
            (1,) * axis + (n,) + (1,) * (len(size) - axis - 1))
    if offset < 0 or (at.size and int(at.max()) >= storage_size):
        needed = int(at.max()) + 1 if at.size else offset
        raise RuntimeError(f"as_strided: size {list(size)}, stride {list(stride)} and storage "
                           f"offset {offset} need a storage of {needed} elements, but the "
                           f"tensor's storage has {storage_size}: the view would read past "
                           f"its end")
    return at


def trace(input: Tensor) -> Tensor:  # noqa: A002
    """The sum of the main diagonal of a matrix, Σᵢ Aᵢᵢ.

    Parameters
    ----------
    input : Tensor
        A 2-D tensor.

    Returns
    -------
    Tensor
        A scalar; its gradient is the identity matrix.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.trace(dl.tensor([[1.0, 2.0], [3.0, 4.0]])).item()
    5.0
    """
    x = tensor_or_interpreted(input)
    if x.ndim != 2:
        raise RuntimeError(f"trace expects a matrix (2-D), got {x.ndim}-D")
    return diagonal(x).sum()


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:  # noqa: A002
    """Matrices with the last dimension of ``input`` on their diagonal (zeros elsewhere).

    Parameters
    ----------
    input : Tensor
        The diagonals, along the last dimension.
    offset : int
        Which diagonal to fill.
    dim1, dim2 : int
        Where the matrices' two dimensions go in the result.

    Returns
    -------
    Tensor
        One dimension more than ``input``.

    Raises
    ------
    IndexError
        If ``input`` is 0-d (it has no last dimension to put on a diagonal).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.diag_embed(dl.tensor([1, 2])).tolist()
    [[1, 0], [0, 2]]
    """
    x = tensor_or_interpreted(input)
    dim_index(-1, x.ndim, "diag_embed", zero_d_has_dim=False)  # (a 0-d input has no diagonal)
    m, k = x.shape[-1], abs(offset)
    square = x.unsqueeze(-1) * eye(m, dtype=x.dtype, device=x.device)  # (..., m, m)
    if k:  # shift the square off the main diagonal: zero columns and rows around it
        lead = tuple(x.shape[:-1])
        side = zeros(*lead, m, k, dtype=x.dtype, device=x.device)
        square = F.cat([side, square] if offset > 0 else [square, side], -1)
        rows = zeros(*lead, k, m + k, dtype=x.dtype, device=x.device)
        square = F.cat([square, rows] if offset > 0 else [rows, square], -2)
    return movedim(square, (-2, -1), (dim1, dim2)) if (dim1, dim2) != (-2, -1) else square


def diag(input: Tensor, diagonal: int = 0) -> Tensor:  # noqa: A002
    """A vector to a diagonal matrix, or a matrix to its diagonal (as ``numpy.diag``).

    Parameters
    ----------
    input : Tensor
        A 1-D or 2-D tensor.
    diagonal : int
        Which diagonal (above the main one when positive).

    Returns
    -------
    Tensor
        The matrix (for a vector) or the vector (for a matrix).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.diag(dl.tensor([1, 2])).tolist()
    [[1, 0], [0, 2]]
    >>> dl.diag(dl.tensor([[1, 2], [3, 4]])).tolist()
    [1, 4]
    """
    x = tensor_or_interpreted(input)
    if x.ndim == 1:
        return diag_embed(x, diagonal)
    if x.ndim == 2:
        return _diagonal_of(x, diagonal)
    raise RuntimeError(f"diag expects a 1-D or 2-D tensor, got {x.ndim}-D")


def diagflat(input: Tensor, offset: int = 0) -> Tensor:  # noqa: A002
    """The flattened input on the diagonal of a square matrix.

    Parameters
    ----------
    input : Tensor
        Any shape; it is flattened.
    offset : int
        Which diagonal.

    Returns
    -------
    Tensor
        A 2-D tensor.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.diagflat(dl.tensor([[1, 2]])).tolist()
    [[1, 0], [0, 2]]
    """
    return diag_embed(tensor_or_interpreted(input).reshape(-1), offset)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None,
                 device: Any = None) -> Tensor:
    """Row and column indices of the lower triangle of a ``row x col`` matrix.

    Parameters
    ----------
    row, col : int
        The matrix shape.
    offset : int
        The diagonal that bounds the triangle (as :func:`difflab.tril`).
    dtype, device : optional
        Of the result (``int64`` by default).

    Returns
    -------
    Tensor
        Shape ``(2, N)``: first the rows, then the columns, in row-major order.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.tril_indices(2, 2).tolist()
    [[0, 1, 1], [0, 0, 1]]
    """
    return _indices(np.tril_indices(row, offset, col), dtype, device)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None,
                 device: Any = None) -> Tensor:
    """Row and column indices of the upper triangle of a ``row x col`` matrix.

    Parameters
    ----------
    row, col : int
        The matrix shape.
    offset : int
        The diagonal that bounds the triangle (as :func:`difflab.triu`).
    dtype, device : optional
        Of the result (``int64`` by default).

    Returns
    -------
    Tensor
        Shape ``(2, N)``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.triu_indices(2, 2).tolist()
    [[0, 0, 1], [0, 1, 1]]
    """
    return _indices(np.triu_indices(row, offset, col), dtype, device)


def _indices(pair: tuple, dtype: Any, device: Any) -> Tensor:
    from difflab.creation import tensor

    return tensor(np.stack(pair), dtype=dtype or "int64", device=device)


# ------------------------------------------------------------------------------- products


def tensordot(a: Tensor, b: Tensor, dims: Any = 2) -> Tensor:
    """Sum of products over chosen dimensions of ``a`` and ``b`` (a generalised ``@``).

    ``dims=n`` contracts the last ``n`` dimensions of ``a`` with the first ``n``
    of ``b``; ``dims=([i, ...], [j, ...])`` names them.

    Parameters
    ----------
    a, b : Tensor
        The factors.
    dims : int or pair of sequences
        The contracted dimensions.

    Returns
    -------
    Tensor
        The free dimensions of ``a``, then those of ``b``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.tensordot(dl.ones(2, 3), dl.ones(3, 4), dims=1).shape
    difflab.Size([2, 4])
    """
    a, b = tensor_or_interpreted(a), tensor_or_interpreted(b)
    if isinstance(dims, (int, np.integer)):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, got {dims}")
        dims_a, dims_b = list(range(a.ndim - dims, a.ndim)), list(range(int(dims)))
    else:
        dims_a, dims_b = ([d] if isinstance(d, (int, np.integer)) else list(d) for d in dims)
    dims_a = [dim_index(d, a.ndim, "tensordot") for d in dims_a]
    dims_b = [dim_index(d, b.ndim, "tensordot") for d in dims_b]
    if len(dims_a) != len(dims_b) or any(a.shape[i] != b.shape[j]
                                         for i, j in zip(dims_a, dims_b)):
        raise RuntimeError(f"tensordot: contracted dimensions {dims_a} of {tuple(a.shape)} "
                           f"and {dims_b} of {tuple(b.shape)} do not match in size")
    free_a = [d for d in range(a.ndim) if d not in dims_a]
    free_b = [d for d in range(b.ndim) if d not in dims_b]
    inner_size = int(np.prod([a.shape[d] for d in dims_a]))
    left = a.permute(*free_a, *dims_a).reshape(-1, inner_size)
    right = b.permute(*dims_b, *free_b).reshape(inner_size, -1)
    return (left @ right).reshape([a.shape[d] for d in free_a] + [b.shape[d] for d in free_b])


def inner(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """Sum of products over the last dimension of both (a scalar times a tensor for scalars).

    Parameters
    ----------
    input, other : Tensor
        Tensors whose last dimensions match.

    Returns
    -------
    Tensor
        The free dimensions of ``input``, then those of ``other``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.inner(dl.tensor([1.0, 2.0]), dl.tensor([3.0, 4.0])).item()
    11.0
    """
    a, b = tensor_or_interpreted(input), tensor_or_interpreted(other)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return tensordot(a, b, ([-1], [-1]))


def vdot(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The dot product of two vectors, the first conjugated (real tensors: :func:`difflab.dot`).

    Parameters
    ----------
    input, other : Tensor
        1-D tensors of equal length.

    Returns
    -------
    Tensor
        A scalar.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.vdot(dl.tensor([1.0, 2.0]), dl.tensor([3.0, 4.0])).item()
    11.0
    """
    a = tensor_or_interpreted(input)
    if getattr(a.dtype, "kind", "") == "c":  # Σ conj(aᵢ)·bᵢ for complex a
        a = a.conj()
    return F.dot(a, tensor_or_interpreted(other))


def kron(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The Kronecker product: each entry of ``input`` times the whole of ``other``.

    Parameters
    ----------
    input, other : Tensor
        Tensors of any shapes (the shorter is padded with leading ones).

    Returns
    -------
    Tensor
        Shape ``input.shape[i] * other.shape[i]`` in each dimension.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.kron(dl.tensor([1, 2]), dl.tensor([1, 10])).tolist()
    [1, 10, 2, 20]
    """
    a, b = tensor_or_interpreted(input), tensor_or_interpreted(other)
    ndim = builtins.max(a.ndim, b.ndim)
    a = a.reshape((1,) * (ndim - a.ndim) + tuple(a.shape))
    b = b.reshape((1,) * (ndim - b.ndim) + tuple(b.shape))
    # interleave: a's dimension k at 2k, b's at 2k + 1, then merge each pair
    a_shape = [n for size in a.shape for n in (size, 1)]
    b_shape = [n for size in b.shape for n in (1, size)]
    product = a.reshape(a_shape) * b.reshape(b_shape)
    return product.reshape([m * n for m, n in zip(a.shape, b.shape)])


def meshgrid(*tensors: Tensor, indexing: str = "ij") -> tuple:
    """Coordinate grids from 1-D coordinate vectors.

    Parameters
    ----------
    *tensors : Tensor
        1-D coordinates (or one list of them).
    indexing : {"ij", "xy"}
        ``"ij"``: the grid's dimension ``k`` follows input ``k`` (PyTorch's default);
        ``"xy"``: the first two are swapped (NumPy's and MATLAB's default).

    Returns
    -------
    tuple of Tensor
        One grid per input, all of the same shape.

    Examples
    --------
    >>> import difflab as dl
    >>> xs, ys = dl.meshgrid(dl.tensor([1, 2]), dl.tensor([5, 6, 7]))
    >>> xs.shape, ys[0].tolist()
    (difflab.Size([2, 3]), [5, 6, 7])
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    vectors = [tensor_or_interpreted(x).reshape(-1) for x in tensors]
    if indexing == "xy" and len(vectors) >= 2:
        vectors[0], vectors[1] = vectors[1], vectors[0]
    shape = [v.shape[0] for v in vectors]
    grids = []
    for k, v in enumerate(vectors):
        view = [1] * len(vectors)
        view[k] = -1
        grids.append(v.reshape(view).expand(*shape))
    if indexing == "xy" and len(grids) >= 2:  # (each grid back with its own input)
        grids = [grids[1], grids[0], *grids[2:]]
    return tuple(grids)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one element from each 1-D input, as rows.

    Parameters
    ----------
    *tensors : Tensor
        1-D tensors.

    Returns
    -------
    Tensor
        Shape ``(N, len(tensors))`` (the input itself for a single tensor).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.cartesian_prod(dl.tensor([1, 2]), dl.tensor([3, 4])).tolist()
    [[1, 3], [1, 4], [2, 3], [2, 4]]
    """
    if len(tensors) == 1:
        return tensor_or_interpreted(tensors[0])
    grids = meshgrid(*tensors, indexing="ij")
    return F.stack([g.reshape(-1) for g in grids], 1)


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:  # noqa: N803
    """The Vandermonde matrix: columns are powers of ``x``.

    Parameters
    ----------
    x : Tensor
        1-D.
    N : int, optional
        The number of columns (``len(x)`` by default).
    increasing : bool
        Powers ``0, 1, ...`` from the left when true; decreasing (NumPy's default) when false.

    Returns
    -------
    Tensor
        Shape ``(len(x), N)``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.vander(dl.tensor([2, 3]), 3).tolist()
    [[4, 2, 1], [9, 3, 1]]
    """
    x = tensor_or_interpreted(x)
    if x.ndim != 1:
        raise RuntimeError(f"vander expects a 1-D tensor, got {x.ndim}-D")
    n = x.shape[0] if N is None else int(N)
    if n < 0:
        raise RuntimeError(f"vander: N must be non-negative, got {N}")
    powers = arange(n, device=x.device)
    powers = powers if increasing else powers.flip(0)
    return x.reshape(-1, 1) ** powers.reshape(1, -1)


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: float = 1,  # noqa: A002
          alpha: float = 1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``: a linear layer's formula in one call.

    Parameters
    ----------
    input : Tensor
        Broadcastable to the product's shape.
    mat1, mat2 : Tensor
        ``(n, m)`` and ``(m, p)`` matrices.
    beta, alpha : float
        The weights (with ``beta=0``, ``input`` is ignored, nan and inf included).

    Returns
    -------
    Tensor
        Shape ``(n, p)``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.addmm(dl.ones(2, 2), dl.eye(2), dl.eye(2), alpha=3).tolist()
    [[4.0, 1.0], [1.0, 4.0]]
    """
    product = F.mm(tensor_or_interpreted(mat1), tensor_or_interpreted(mat2))
    return _weighted(input, product, beta, alpha)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: float = 1,  # noqa: A002
          alpha: float = 1) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``.

    Parameters
    ----------
    input : Tensor
        Broadcastable to ``(n,)``.
    mat, vec : Tensor
        An ``(n, m)`` matrix and an ``(m,)`` vector.
    beta, alpha : float
        The weights.

    Returns
    -------
    Tensor
        Shape ``(n,)``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.addmv(dl.ones(2), dl.eye(2), dl.tensor([1.0, 2.0])).tolist()
    [2.0, 3.0]
    """
    product = F.mv(tensor_or_interpreted(mat), tensor_or_interpreted(vec))
    return _weighted(input, product, beta, alpha)


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: float = 1,  # noqa: A002
         alpha: float = 1) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``.

    Parameters
    ----------
    input : Tensor
        Broadcastable to ``(n, m)``.
    vec1, vec2 : Tensor
        Vectors of lengths ``n`` and ``m``.
    beta, alpha : float
        The weights.

    Returns
    -------
    Tensor
        Shape ``(n, m)``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.addr(dl.zeros(2, 2), dl.tensor([1.0, 2.0]), dl.tensor([3.0, 4.0])).tolist()
    [[3.0, 4.0], [6.0, 8.0]]
    """
    product = F.outer(tensor_or_interpreted(vec1), tensor_or_interpreted(vec2))
    return _weighted(input, product, beta, alpha)


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: float = 1,  # noqa: A002
           alpha: float = 1) -> Tensor:
    """``beta * input + alpha * Σ_b batch1[b] @ batch2[b]``: batched products, summed.

    Parameters
    ----------
    input : Tensor
        Broadcastable to ``(n, p)``.
    batch1, batch2 : Tensor
        ``(B, n, m)`` and ``(B, m, p)``.
    beta, alpha : float
        The weights.

    Returns
    -------
    Tensor
        Shape ``(n, p)``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.addbmm(dl.zeros(1, 1), dl.ones(3, 1, 2), dl.ones(3, 2, 1)).tolist()
    [[6.0]]
    """
    product = F.bmm(tensor_or_interpreted(batch1), tensor_or_interpreted(batch2)).sum(0)
    return _weighted(input, product, beta, alpha)


def _weighted(input: Any, product: Tensor, beta: float, alpha: float) -> Tensor:  # noqa: A002
    scaled = product if alpha == 1 else product * alpha
    if beta == 0:  # PyTorch: input is ignored, so its nan and inf do not propagate
        return scaled
    x = tensor_or_interpreted(input)
    return (x if beta == 1 else x * beta) + scaled


def chain_matmul(*matrices: Tensor) -> Tensor:
    """The product of several matrices, left to right (PyTorch's older name).

    Parameters
    ----------
    *matrices : Tensor
        2-D tensors whose shapes chain.

    Returns
    -------
    Tensor
        Their product.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.chain_matmul(dl.eye(2), dl.ones(2, 3), dl.ones(3, 1)).tolist()
    [[3.0], [3.0]]
    """
    if not matrices:
        raise RuntimeError("chain_matmul needs at least one matrix")
    out = tensor_or_interpreted(matrices[0])
    for m in matrices[1:]:
        out = F.mm(out, tensor_or_interpreted(m))
    return out


# Tensor methods: the functions themselves (attached here: the tensor module does not
# import this one).
_TENSOR_METHODS = {
    "narrow": narrow, "select": select, "take": take, "take_along_dim": take_along_dim,
    "diag": diag, "diagonal": diagonal, "diag_embed": diag_embed, "trace": trace, "kron": kron,
    "as_strided": as_strided,
    "inner": inner, "addmm": addmm, "addmv": addmv, "addr": addr, "addbmm": addbmm,
}
for _name, _function in _TENSOR_METHODS.items():
    setattr(Tensor, _name, _function)
