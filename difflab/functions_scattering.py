"""Writing into copies: scatter with a reduction, index_copy/index_reduce, and the
``*_scatter`` functions that put a tensor where a view would read (PyTorch's names).

Composites of the indexing primitives (``index``, ``index_put``, ``scatter_add``) and
the reductions (``sum``, ``prod``, ``amax``, ``amin``), so every gradient is theirs:

* :func:`scatter_reduce` groups the values by the output position they go to (NumPy
  work on the *index*, which is data the derivative never passes through), lays each
  group out as one row of a table padded with the reduction's identity (1 for a
  product, -inf for a maximum), and reduces the rows with the existing primitive.  So
  the gradients are PyTorch's: a product's rule is exact at zeros, equal maxima share
  the gradient evenly, a mean divides it by the count.  The table has one row per
  position written and as many columns as the largest group; sums and means need no
  table (``scatter_add``).
* :func:`index_copy` and :func:`index_reduce` are the same along one dimension, with
  a 1-D index of slices; :func:`select_scatter`, :func:`slice_scatter` and
  :func:`diagonal_scatter` write ``src`` where ``select``, a slice or ``diagonal``
  would read (``index_put``: the input's gradient is zero there, ``src`` gets the rest).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from difflab import backend
from difflab import functions as F  # noqa: N812  (the primitives' public faces)
from difflab.autograd.engine import apply
from difflab.creation import arange, full, ones, tensor, zeros
from difflab.dtypes import bool_, int64
from difflab.functions_indexing import _check_dim, _crop, _gather_index, scatter
from difflab.functions_joining import _dim, movedim
from difflab.functions_selecting import _index_vector, nonzero
from difflab.ops import structural
from difflab.tensor import Tensor
from difflab.tensor_arguments import tensor_of

__all__ = ["diagonal_scatter", "index_copy", "index_reduce", "scatter_reduce",
           "select_scatter", "slice_scatter"]

_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _identity(reduce: str, dtype: np.dtype) -> Any:
    """The value a padded cell holds: it changes no row's product, maximum or minimum.
    (Only a float row whose maximum is -inf (minimum +inf) ties with its padding, which
    then takes a share of the gradient that PyTorch gives to the row's values.)"""
    if reduce == "prod":
        return 1
    if dtype.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


def _groups(positions: Tensor) -> tuple:
    """Group the values by the flat output ``positions`` (an int64 vector) they go to.

    Returns ``(targets, group, rank, counts)``: the positions written (sorted), each
    value's group (its row in ``targets``), its place in that group (in the order given:
    a stable sort), and each group's size.  All are tensors computed by primitives, so a
    traced graph recomputes them for a new index (their number depends on the index's
    values: tracing warns, as for ``nonzero``).
    """
    n, device = positions.shape[0], positions.device
    order = positions.argsort(stable=True)
    ordered = positions[order]
    starts = F.cat([ones(1, dtype=bool_, device=device), ordered[1:] != ordered[:-1]])
    group_sorted = starts.to(int64).cumsum(0) - 1
    first = nonzero(starts).reshape(-1)
    rank_sorted = arange(n, device=device) - first[group_sorted]
    group = F.scatter(zeros(n, dtype=int64, device=device), 0, order, group_sorted)
    rank = F.scatter(zeros(n, dtype=int64, device=device), 0, order, rank_sorted)
    counts = F.cat([first[1:], full((1,), n, dtype=int64, device=device)]) - first
    return ordered[starts], group, rank, counts


def _reduce_groups(x_flat: Tensor, values: Tensor, reduce: str, include_self: bool,
                   positions: Tensor) -> Tensor:
    """``x_flat`` with each position of ``positions`` replaced by the reduction of the
    ``values`` sent there (and of its own value, with ``include_self``)."""
    targets, group, rank, counts = _groups(positions)
    n_groups, own = targets.shape[0], int(include_self)
    mine = apply(structural.Index, x_flat, index=targets.array) if include_self else None
    if reduce in ("sum", "mean"):
        reduced = apply(structural.ScatterAdd, values, index=group.array, shape=(n_groups,))
        if include_self:
            reduced = reduced + mine
        if reduce == "mean":
            count = (counts + own).to(x_flat.dtype)
            reduced = reduced // count if x_flat.dtype.kind in "iu" else reduced / count
    else:
        width = int(counts.max()) + own  # (a value read: the table's shape)
        table = full((n_groups, width), _identity(reduce, np.dtype(x_flat.dtype)),
                     dtype=x_flat.dtype, device=x_flat.device)
        table = apply(structural.IndexPut, table, values, index=(group.array, (rank + own).array))
        if include_self:
            table = apply(structural.IndexPut, table, mine, index=(slice(None), 0))
        reduced = {"prod": table.prod, "amax": table.amax, "amin": table.amin}[reduce](1)
    return apply(structural.IndexPut, x_flat, reduced, index=targets.array)


def _flat_positions(index: Tensor, dim: int, shape: tuple) -> Tensor:
    """The row-major position in ``shape`` that each entry of a gather-style ``index``
    along ``dim`` names: ``index`` times the stride of ``dim``, plus the offset of the
    entry's place on the other axes (a constant of the index's shape)."""
    strides = np.cumprod((1,) + tuple(shape[::-1]))[:-1][::-1]
    grid = np.indices(tuple(index.shape))
    offset = sum(grid[a] * strides[a] for a in range(index.ndim) if a != dim)
    offset = tensor(np.asarray(offset, dtype=np.int64), device=index.device)
    return (index.to(int64) * int(strides[dim]) + offset).reshape(-1)


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor,  # noqa: A002
                   reduce: str, *, include_self: bool = True) -> Tensor:
    """Reduce the values of ``src`` into ``input`` at the positions ``index`` names.

    For ``dim = 0``, ``src[i][j]`` goes to ``out[index[i][j]][j]`` (likewise for other
    dims); every position that receives values becomes their ``reduce`` (with its own
    value among them when ``include_self``); the others keep ``input``'s value.

    Parameters
    ----------
    input : Tensor
        The tensor to reduce into (not changed: see ``Tensor.scatter_reduce_``).
    dim : int
        The dimension the index runs along.
    index : Tensor
        Integer positions, as for :func:`difflab.scatter`: as many dimensions as
        ``input``, no larger than ``src``.
    src : Tensor
        The values, of ``input``'s dtype.
    reduce : str
        ``"sum"``, ``"prod"``, ``"mean"``, ``"amax"`` or ``"amin"``.
    include_self : bool
        Whether ``input``'s value at a written position takes part.

    Returns
    -------
    Tensor
        A new tensor.  Gradients as PyTorch's: the sum's and the mean's pass through
        (divided by the count); the product's are exact at zeros; equal maxima
        (minima) share the gradient evenly.  An integer mean rounds down.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([1.0, 10.0, 100.0])
    >>> src, i = dl.tensor([2.0, 3.0, 4.0, 5.0]), dl.tensor([0, 0, 2, 2])
    >>> dl.scatter_reduce(x, 0, i, src, "prod").tolist()
    [6.0, 10.0, 2000.0]
    >>> dl.scatter_reduce(x, 0, i, src, "amax", include_self=False).tolist()
    [3.0, 10.0, 5.0]
    """
    x, source = tensor_of(input), tensor_of(src)
    if reduce not in _REDUCTIONS:
        raise ValueError(f"scatter_reduce: reduce must be one of {_REDUCTIONS}, got {reduce!r}")
    if source.dtype != x.dtype:
        raise RuntimeError(f"scatter_reduce(): expected src's dtype ({source.dtype}) to equal "
                           f"input's ({x.dtype}); convert with src.to(input.dtype)")
    if x.dtype.kind not in "fiu":
        raise TypeError(f"scatter_reduce: expected a floating or integer tensor, got {x.dtype}")
    dim = _check_dim("scatter_reduce", dim, x.ndim)
    idx = _gather_index("scatter_reduce", x, dim, index, source)
    if idx.size == 0:
        return x.clone()
    shape = tuple(x.shape) or (1,)
    index_t = (index if isinstance(index, Tensor) else tensor_of(idx)).reshape(idx.shape or (1,))
    positions = _flat_positions(index_t, dim, shape)
    values = (_crop(source, idx.shape) if idx.ndim else source).reshape(-1)
    out = _reduce_groups(x.reshape(-1), values, reduce, include_self, positions)
    return out.reshape(tuple(x.shape))


def _spread(x: Tensor, dim: int, index: Tensor, source: Tensor, name: str) -> Tensor:
    """A 1-D slice index spread to ``source``'s shape (each slice's position, everywhere
    in the slice), after checking the shapes as PyTorch does."""
    expected = tuple(x.shape[:dim]) + (index.shape[0],) + tuple(x.shape[dim + 1:])
    if tuple(source.shape) != expected:
        raise RuntimeError(f"{name}: source must have shape {expected} (input's, with "
                           f"len(index) along dim {dim}), got {tuple(source.shape)}")
    view = [1] * max(x.ndim, 1)
    view[dim] = -1
    return index.reshape(view).expand(*expected) if x.ndim else index


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:  # noqa: A002
    """A copy of ``input`` with slice ``k`` of ``source`` written at position ``index[k]``
    along ``dim``.

    Parameters
    ----------
    input : Tensor
        The tensor (not changed: see ``Tensor.index_copy_``).
    dim : int
        The dimension the index runs along.
    index : Tensor
        1-D integer positions, one per slice of ``source`` (a repeated position keeps
        one of its slices, which one unspecified, as in PyTorch).
    source : Tensor
        ``input``'s shape, except ``len(index)`` along ``dim``.

    Returns
    -------
    Tensor
        A new tensor; the input's gradient is zero at the copied slices, ``source``'s
        is the output's gradient there.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.index_copy(dl.zeros(2, 3), 1, dl.tensor([2, 0]), dl.ones(2, 2)).tolist()
    [[1.0, 0.0, 1.0], [1.0, 0.0, 1.0]]
    """
    x, src = tensor_of(input), tensor_of(source)
    dim = _dim(dim, x.ndim, "index_copy")
    index = _index_vector(index, x.shape[dim] if x.ndim else 1, "index_copy")
    spread = _spread(x, dim, index, src, "index_copy")
    return scatter(x, dim, spread, src.to(x.dtype) if src.dtype != x.dtype else src)


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor,  # noqa: A002
                 reduce: str, *, include_self: bool = True) -> Tensor:
    """Reduce slice ``k`` of ``source`` into position ``index[k]`` of ``input`` along
    ``dim``: :func:`scatter_reduce` with whole slices.

    Parameters
    ----------
    input : Tensor
        The tensor (not changed: see ``Tensor.index_reduce_``).
    dim : int
        The dimension the index runs along.
    index : Tensor
        1-D integer positions, one per slice of ``source``.
    source : Tensor
        ``input``'s shape, except ``len(index)`` along ``dim``.
    reduce : str
        ``"prod"``, ``"mean"``, ``"amax"`` or ``"amin"`` (PyTorch's four).
    include_self : bool
        Whether ``input``'s slices take part in their reductions.

    Returns
    -------
    Tensor
        A new tensor, with :func:`scatter_reduce`'s gradients.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.ones(3)
    >>> dl.index_reduce(x, 0, dl.tensor([0, 0, 2]), dl.tensor([2.0, 3.0, 4.0]), "prod").tolist()
    [6.0, 1.0, 4.0]
    """
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise ValueError(f"index_reduce: reduce must be 'prod', 'mean', 'amax' or 'amin', "
                         f"got {reduce!r}")
    x, src = tensor_of(input), tensor_of(source)
    dim = _dim(dim, x.ndim, "index_reduce")
    index = _index_vector(index, x.shape[dim] if x.ndim else 1, "index_reduce")
    spread = _spread(x, dim, index, src, "index_reduce")
    return scatter_reduce(x, dim, spread, src, reduce, include_self=include_self)


def _put(x: Tensor, src: Any, where: tuple, expected: tuple, name: str) -> Tensor:
    """``x`` with ``src`` (exactly ``expected``'s shape) written at ``x[where]``."""
    src = tensor_of(src)
    if tuple(src.shape) != tuple(expected):
        raise RuntimeError(f"{name}: expected src to have shape {tuple(expected)} (the part "
                           f"of input it replaces), got {tuple(src.shape)}")
    return apply(structural.IndexPut, x, src.to(x.dtype) if src.dtype != x.dtype else src,
                 index=where)


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:  # noqa: A002
    """A copy of ``input`` with ``src`` written where ``input.select(dim, index)`` reads.

    Parameters
    ----------
    input : Tensor
        The tensor.
    src : Tensor
        ``input``'s shape without dimension ``dim``.
    dim : int
        The dimension to select along.
    index : int
        The position along ``dim`` (negative counts from the end).

    Returns
    -------
    Tensor
        A new tensor; the input's gradient is zero where ``src`` went.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.select_scatter(dl.zeros(2, 2), dl.ones(2), 0, 1).tolist()
    [[0.0, 0.0], [1.0, 1.0]]
    """
    x = tensor_of(input)
    dim = _dim(dim, x.ndim, "select_scatter")
    size = x.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"select_scatter: index {index} is out of range for dimension {dim} "
                         f"of size {size}")
    expected = tuple(x.shape[:dim]) + tuple(x.shape[dim + 1:])
    return _put(x, src, (slice(None),) * dim + (int(index) % size,), expected,
                "select_scatter")


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None,  # noqa: A002
                  end: int | None = None, step: int = 1) -> Tensor:
    """A copy of ``input`` with ``src`` written where ``input[..., start:end:step, ...]``
    (along ``dim``) reads.

    Parameters
    ----------
    input : Tensor
        The tensor.
    src : Tensor
        The slice's shape.
    dim : int
        The dimension to slice.
    start, end : int, optional
        The slice's bounds (the whole dimension by default).
    step : int
        A positive step.

    Returns
    -------
    Tensor
        A new tensor; the input's gradient is zero where ``src`` went.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.slice_scatter(dl.zeros(5), dl.ones(2), start=1, step=2).tolist()
    [0.0, 1.0, 0.0, 1.0, 0.0]
    """
    x = tensor_of(input)
    dim = _dim(dim, x.ndim, "slice_scatter")
    if step < 1:
        raise ValueError(f"slice_scatter: step must be positive, got {step}")
    where = (slice(None),) * dim + (slice(start, end, step),)
    expected = np.empty(tuple(x.shape), dtype=bool)[where].shape
    return _put(x, src, where, expected, "slice_scatter")


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,  # noqa: A002
                     dim2: int = 1) -> Tensor:
    """A copy of ``input`` with ``src`` written on a diagonal (``input.diagonal``'s).

    Parameters
    ----------
    input : Tensor
        At least 2-D.
    src : Tensor
        The diagonal's shape: the other dimensions, then the diagonal's length.
    offset : int
        Above the main diagonal (> 0) or below it (< 0).
    dim1, dim2 : int
        The two dimensions the diagonal runs across.

    Returns
    -------
    Tensor
        A new tensor; the input's gradient is zero on the diagonal.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.diagonal_scatter(dl.zeros(2, 3), dl.ones(2), 1).tolist()
    [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    x = tensor_of(input)
    if x.ndim < 2:
        raise RuntimeError(f"diagonal_scatter: expected a tensor of at least 2 dimensions, "
                           f"got {x.ndim}")
    d1, d2 = _dim(dim1, x.ndim, "diagonal_scatter"), _dim(dim2, x.ndim, "diagonal_scatter")
    if d1 == d2:
        raise RuntimeError(f"diagonal_scatter: dim1 and dim2 must differ, both are {dim1}")
    moved = movedim(x, (d1, d2), (-2, -1))  # (the diagonal's two dimensions last)
    rows, cols = moved.shape[-2], moved.shape[-1]
    length = max(0, min(rows + min(offset, 0), cols - max(offset, 0)))
    row = np.arange(length) - min(offset, 0)
    col = np.arange(length) + max(offset, 0)
    xp = backend.array_module(x.array)
    where = (Ellipsis, xp.asarray(row), xp.asarray(col))
    written = _put(moved, src, where, tuple(moved.shape[:-2]) + (length,), "diagonal_scatter")
    return movedim(written, (-2, -1), (d1, d2))


def _scatter_reduce_(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                     include_self: bool = True) -> Tensor:
    """``scatter_reduce`` written into ``x`` (see :func:`scatter_reduce`)."""
    return self._replace_with(
        lambda x: scatter_reduce(x, dim, index, src, reduce, include_self=include_self))


def _index_copy_(self: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """``index_copy`` written into ``x`` (see :func:`index_copy`)."""
    return self._replace_with(lambda x: index_copy(x, dim, index, source))


def _index_reduce_(self: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """``index_reduce`` written into ``x`` (see :func:`index_reduce`)."""
    return self._replace_with(
        lambda x: index_reduce(x, dim, index, source, reduce, include_self=include_self))


# Tensor methods: the functions themselves (attached here: the tensor module does not
# import this one).
_TENSOR_METHODS = {
    "scatter_reduce": scatter_reduce, "index_copy": index_copy, "index_reduce": index_reduce,
    "select_scatter": select_scatter, "slice_scatter": slice_scatter,
    "diagonal_scatter": diagonal_scatter, "scatter_reduce_": _scatter_reduce_,
    "index_copy_": _index_copy_, "index_reduce_": _index_reduce_,
}
for _name, _function in _TENSOR_METHODS.items():
    setattr(Tensor, _name, _function)
