"""Selecting by masks and writing by index lists: PyTorch's names, composed.

* :func:`nonzero`, :func:`argwhere` and :func:`masked_select` return as many values as
  the data says: their *shape* depends on the values.  They are built on boolean-mask
  indexing (``x[mask]``), which the tracer announces with a ``TracerWarning`` (a traced
  graph cannot know how many values a later input will select).
* :func:`index_add`, :func:`index_fill` and :func:`index_put` write into copies along a
  dimension or at listed positions; ``x.index_add_(...)`` and friends write in place.
  Repeated indices *accumulate* in ``index_add`` (and in ``index_put`` with
  ``accumulate=True``): they are built on ``scatter_add``, whose gradient gathers back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from difflab import functions as F  # noqa: N812  (the primitives' public faces)
from difflab.creation import arange, full_like
from difflab.dtypes import bool_
from difflab.functions_joining import _dim
from difflab.functions_picking import meshgrid
from difflab.tensor import Tensor
from difflab.tensor_arguments import tensor_of

__all__ = ["argwhere", "index_add", "index_fill", "index_put", "masked_select", "nonzero"]


def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:  # noqa: A002
    """The indices of the non-zero entries, one row per entry (row-major order).

    Parameters
    ----------
    input : Tensor
        Any tensor.
    as_tuple : bool
        Return one index tensor per dimension instead (ready for ``x[...]``).

    Returns
    -------
    Tensor or tuple of Tensor
        Shape ``(N, ndim)`` of int64, or ``ndim`` tensors of shape ``(N,)``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nonzero(dl.tensor([[0, 3], [5, 0]])).tolist()
    [[0, 1], [1, 0]]
    """
    x = tensor_of(input)
    mask = x != 0
    if x.ndim == 0:
        found = mask.reshape(1)
        rows = arange(1, device=x.device)[found]  # (0 or 1 entries: PyTorch's (N, 0) rows)
        return (rows,) if as_tuple else rows.reshape(-1, 1)[:, :0]
    grids = meshgrid(*[arange(n, device=x.device) for n in x.shape], indexing="ij")
    picked = tuple(g[mask] for g in grids)
    return picked if as_tuple else F.stack(picked, 1)


def argwhere(input: Tensor) -> Tensor:  # noqa: A002
    """The indices of the non-zero entries as rows: :func:`nonzero`'s ``(N, ndim)`` form.

    Parameters
    ----------
    input : Tensor
        Any tensor.

    Returns
    -------
    Tensor
        Shape ``(N, ndim)``, int64.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.argwhere(dl.tensor([0.0, 2.0, 0.0, 1.0])).tolist()
    [[1], [3]]
    """
    return nonzero(input)


def masked_select(input: Tensor, mask: Tensor) -> Tensor:  # noqa: A002
    """The entries where ``mask`` is true, as a 1-D tensor (the two broadcast together).

    Parameters
    ----------
    input : Tensor
        The values.
    mask : Tensor
        Booleans, broadcastable with ``input``.

    Returns
    -------
    Tensor
        1-D; the gradient goes back to the selected entries.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([[1.0, -2.0], [3.0, -4.0]])
    >>> dl.masked_select(x, x > 0).tolist()
    [1.0, 3.0]
    """
    x, m = tensor_of(input), tensor_of(mask)
    if m.dtype != bool_:
        raise TypeError(f"masked_select expects a bool mask, got {m.dtype}; compare first "
                        f"(mask = x > 0)")
    shape = tuple(np.broadcast_shapes(tuple(x.shape), tuple(m.shape)))
    return x.broadcast_to(shape)[m.broadcast_to(shape)]


def _index_vector(index: Any, size: int, name: str) -> Tensor:
    index = tensor_of(index)
    if index.dtype.kind not in "iu" or index.ndim > 1:
        raise IndexError(f"{name}: index must be a 1-D integer tensor, got {index.ndim}-D "
                         f"{index.dtype}")
    return index.reshape(-1)


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *,  # noqa: A002
              alpha: float = 1) -> Tensor:
    """Add ``alpha · source`` into the slices ``index`` of ``input`` along ``dim``.

    ``source``'s slice ``k`` goes to position ``index[k]``; repeated positions add up.

    Parameters
    ----------
    input : Tensor
        The tensor to add into (it is not changed: see ``Tensor.index_add_``).
    dim : int
        The dimension the index runs along.
    index : Tensor
        1-D integer positions, one per slice of ``source``.
    source : Tensor
        ``input``'s shape, except ``len(index)`` along ``dim``.
    alpha : float
        The scale of ``source``.

    Returns
    -------
    Tensor
        A new tensor.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.index_add(dl.zeros(3), 0, dl.tensor([0, 2, 0]), dl.tensor([1.0, 2.0, 3.0])).tolist()
    [4.0, 0.0, 2.0]
    """
    x, src = tensor_of(input), tensor_of(source)
    dim = _dim(dim, x.ndim, "index_add")
    index = _index_vector(index, x.shape[dim] if x.ndim else 1, "index_add")
    expected = tuple(x.shape[:dim]) + (index.shape[0],) + tuple(x.shape[dim + 1:])
    if tuple(src.shape) != expected:
        raise RuntimeError(f"index_add: source must have shape {expected} (input's, with "
                           f"len(index) along dim {dim}), got {tuple(src.shape)}")
    view = [1] * max(x.ndim, 1)
    view[dim] = -1
    spread = index.reshape(view).expand(*expected) if x.ndim else index
    return F.scatter_add(x, dim, spread, src if alpha == 1 else src * alpha)


def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:  # noqa: A002
    """A copy of ``input`` with the slices ``index`` along ``dim`` set to ``value``.

    Parameters
    ----------
    input : Tensor
        The tensor.
    dim : int
        The dimension the index runs along.
    index : Tensor
        1-D integer positions.
    value : float or 0-d Tensor
        The fill value.

    Returns
    -------
    Tensor
        A new tensor; no gradient flows to the filled entries.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.index_fill(dl.ones(2, 3), 1, dl.tensor([0, 2]), -1.0).tolist()
    [[-1.0, 1.0, -1.0], [-1.0, 1.0, -1.0]]
    """
    x = tensor_of(input)
    dim = _dim(dim, x.ndim, "index_fill")
    index = _index_vector(index, x.shape[dim], "index_fill")
    # position j along dim is filled when it equals some index: a comparison table
    hit = (arange(x.shape[dim], device=x.device).reshape(1, -1) == index.reshape(-1, 1)).any(0)
    view = [1] * x.ndim
    view[dim] = -1
    fill = value.to(x.dtype) if isinstance(value, Tensor) else full_like(x, value)
    return F.where(hit.reshape(view), fill, x)


def index_put(input: Tensor, indices: Sequence[Any], values: Any,  # noqa: A002
              accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``values`` written at ``input[indices]``.

    With ``accumulate=True`` repeated positions add up (``+=`` would keep only one).

    Parameters
    ----------
    input : Tensor
        The tensor.
    indices : sequence
        One index per leading dimension (integer tensors, slices or ints), as in ``x[...]``.
    values : Tensor or number
        Broadcast to the selected shape.
    accumulate : bool
        Add into the existing values instead of replacing them.

    Returns
    -------
    Tensor
        A new tensor.

    Examples
    --------
    >>> import difflab as dl
    >>> i = (dl.tensor([0, 0, 1]),)
    >>> dl.index_put(dl.zeros(2), i, dl.tensor([1.0, 2.0, 3.0]), accumulate=True).tolist()
    [3.0, 3.0]
    """
    x = tensor_of(input)
    indices = tuple(indices)
    if not all(isinstance(i, Tensor) or np.ndim(i) for i in indices) or len(indices) > x.ndim:
        if accumulate:
            raise IndexError("index_put with accumulate=True takes one integer tensor per "
                             "leading dimension (no slices); use x[...] += v for plain slices")
        out = x.clone()  # (slices: an in-place write of a copy, which tracing refuses)
        out[indices] = values
        return out
    # One integer tensor per leading dimension: each selected position as a row-major
    # number in those dimensions, then scatter (or scatter_add) the rows of ``values``.
    k = len(indices)
    positions = [tensor_of(i) for i in indices]
    flat = positions[0] * 0
    for size, position in zip(x.shape[:k], positions):
        flat = flat * size + (position % size)
    flat = flat.reshape(-1)
    rest = tuple(x.shape[k:])
    selected = (flat.shape[0], *rest)
    picked_shape = tuple(np.broadcast_shapes(*[tuple(p.shape) for p in positions]))
    updates = tensor_of(values).to(x.dtype).broadcast_to(picked_shape + rest).reshape(selected)
    spread = flat.reshape((-1,) + (1,) * len(rest)).expand(*selected)
    write = F.scatter_add if accumulate else F.scatter
    return write(x.reshape((-1,) + rest), 0, spread, updates).reshape(tuple(x.shape))


def _index_add_(self: Tensor, dim: int, index: Tensor, source: Tensor, *,
                alpha: float = 1) -> Tensor:
    """``index_add`` written into ``x`` (see :func:`index_add`)."""
    return self._replace_with(lambda x: index_add(x, dim, index, source, alpha=alpha))


def _index_fill_(self: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """``index_fill`` written into ``x`` (see :func:`index_fill`)."""
    return self._replace_with(lambda x: index_fill(x, dim, index, value))


def _index_put_(self: Tensor, indices: Sequence[Any], values: Any,
                accumulate: bool = False) -> Tensor:
    """``index_put`` written into ``x`` (see :func:`index_put`)."""
    return self._replace_with(lambda x: index_put(x, indices, values, accumulate))


# Tensor methods: the functions themselves (attached here: the tensor module does not
# import this one).
_TENSOR_METHODS = {
    "nonzero": nonzero, "argwhere": argwhere, "masked_select": masked_select,
    "index_add": index_add, "index_fill": index_fill, "index_put": index_put,
    "index_add_": _index_add_, "index_fill_": _index_fill_, "index_put_": _index_put_,
}
for _name, _function in _TENSOR_METHODS.items():
    setattr(Tensor, _name, _function)
