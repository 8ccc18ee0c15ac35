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
from difflab.functions_indexing import checked_index
from difflab.functions_picking import meshgrid
from difflab.tensor import Tensor
from difflab.tensor_arguments import (
    check_same_dtype,
    dim_index,
    refuse_symbols,
    require_tensor,
    tensor_of,
    tensor_or_interpreted,
)
from difflab.tensor_inplace import _in_place

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
    x = tensor_or_interpreted(input)
    mask = x != 0
    if x.ndim == 0:
        found = mask.reshape(1)
        rows = arange(1, device=x.device)[found]  # (0 or 1 entries: PyTorch's (N, 0) rows)
        return (rows,) if as_tuple else rows.reshape(-1, 1)[:, :0]
    grids = meshgrid(*[arange(n, device=x.device) for n in x.shape], indexing="ij")
    picked = tuple(g[mask] for g in grids)
    return picked if as_tuple else F.stack(picked, 1)


def where(condition: Any, input: Any = None, other: Any = None, *,  # noqa: A002
          out: Tensor | None = None) -> Any:
    """``input`` where ``condition`` is true, else ``other``; or the condition's indices.

    ``where(condition, input, other)`` chooses elementwise (the gradient flows to the
    chosen one; the two are promoted to their common dtype).  ``where(condition)``
    alone is ``nonzero(condition, as_tuple=True)``, as in PyTorch and NumPy: the
    indices of the true entries, one tensor per dimension.

    Parameters
    ----------
    condition : Tensor of bool
        Where to take ``input``.
    input, other : Tensor or number, optional
        The values chosen between (broadcast together); both or neither.
    out : Tensor, optional
        Written into (and returned).

    Returns
    -------
    Tensor or tuple of Tensor
        ``input`` where ``condition`` holds, else ``other``; with ``condition`` alone,
        a tuple of int64 index tensors.

    Raises
    ------
    TypeError
        With only one of ``input`` and ``other``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.where(dl.tensor([True, False]), dl.tensor([1.0, 2.0]), 10.0)
    tensor([ 1., 10.])
    >>> dl.where(dl.tensor([[True, False], [False, True]]))
    (tensor([0, 1]), tensor([0, 1]))
    """
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if input is None or other is None:
        raise TypeError(
            "where(condition, input, other) takes both input and other (the values "
            "chosen between), or neither: where(condition) gives the indices of the true "
            "entries")
    return F.where(condition, input, other, out=out)


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
    x = tensor_or_interpreted(input)  # (a Dual: its selected values and tangents)
    refuse_symbols("masked_select", "which entries it selects depends on the values of "
                   "the mask, and a condition on symbols has none", mask)
    m = tensor_of(mask)  # (a dual number's comparison is a bool array)
    if m.dtype != bool_:
        raise TypeError(f"masked_select expects a bool mask, got {m.dtype}; compare first "
                        f"(mask = x > 0)")
    shape = tuple(np.broadcast_shapes(tuple(x.shape), tuple(m.shape)))
    m = m.broadcast_to(shape)
    return x.broadcast_to(shape)[m if isinstance(x, Tensor) else m.array]


def _index_vector(index: Any, size: int, name: str) -> Tensor:
    index = tensor_of(index)
    if index.dtype.kind not in "iu" or index.ndim > 1:
        raise IndexError(f"{name}: index must be a 1-D integer tensor, got {index.ndim}-D "
                         f"{index.dtype}")
    return index.reshape(-1)


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *,  # noqa: A002
              alpha: float = 1) -> Tensor:
    r"""Add ``alpha · source`` into the slices ``index`` of ``input`` along ``dim``.

    ``source``'s slice ``k`` goes to position ``index[k]``; repeated positions add up
    (a histogram of slices).  ``input`` is not changed: ``x.index_add_(...)`` writes
    into ``x``.

    Parameters
    ----------
    input : Tensor
        The tensor to add into, of any shape :math:`(\dots, n, \dots)` (``n`` along
        ``dim``).
    dim : int
        The dimension the index runs along (negative counts from the end).
    index : Tensor
        1-D integer positions in ``[0, n)``, shape ``(m,)``: one per slice of
        ``source``.
    source : Tensor
        ``input``'s shape, except ``m`` along ``dim``.
    alpha : float, optional
        The scale of ``source`` (default 1), keyword-only.

    Returns
    -------
    Tensor
        A new tensor, ``input``'s shape and dtype.

    Raises
    ------
    IndexError
        When ``dim`` is out of range, or ``index`` is not a 1-D integer tensor.
    RuntimeError
        When ``source`` has the wrong shape or a dtype other than ``input``'s (as in
        PyTorch: convert it with ``source.to(input.dtype)``), or an entry of ``index``
        is out of range.

    See Also
    --------
    difflab.index_copy : write the slices instead of adding them.
    difflab.scatter_add : the same with an index per entry, not per slice.
    difflab.Tensor.index_add_ : the in-place form.

    Notes
    -----
    Along ``dim`` (the other dimensions unchanged), for each position :math:`j`:

    .. math:: \text{out}_j = \text{input}_j + \alpha \sum_{k:\ \text{index}_k = j}
              \text{source}_k

    Its derivative rule, for the gradient :math:`g` of the output: ``input`` gets
    :math:`g` unchanged, and slice :math:`k` of ``source`` gets
    :math:`\alpha\, g_{\text{index}_k}` (a gather: a position used twice sends its
    gradient to both slices).  Built on :func:`difflab.scatter_add`.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.index_add(dl.zeros(3), 0, dl.tensor([0, 2, 0]), dl.tensor([1.0, 2.0, 3.0])).tolist()
    [4.0, 0.0, 2.0]

    Rows of a matrix, and the gradient that reaches ``source``:

    >>> src = dl.ones(2, 2, requires_grad=True)
    >>> out = dl.index_add(dl.zeros(3, 2), 0, dl.tensor([2, 2]), src, alpha=0.5)
    >>> out.tolist()
    [[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]]
    >>> (out * dl.tensor([[1.0], [2.0], [3.0]])).sum().backward()
    >>> src.grad.tolist()
    [[1.5, 1.5], [1.5, 1.5]]
    """
    x, src = tensor_or_interpreted(input), tensor_or_interpreted(source)
    check_same_dtype("index_add", x, src)
    dim = dim_index(dim, x.ndim, "index_add")
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
    r"""A copy of ``input`` with the slices ``index`` along ``dim`` set to ``value``.

    A position may be listed more than once; a negative one counts from the end.
    ``input`` is not changed: ``x.index_fill_(...)`` writes into ``x``.

    Parameters
    ----------
    input : Tensor
        The tensor, of any shape :math:`(\dots, n, \dots)` (``n`` along ``dim``).
    dim : int
        The dimension the index runs along (negative counts from the end).
    index : Tensor
        1-D integer positions in ``[-n, n)``.
    value : float or 0-d Tensor
        The fill value, cast to ``input``'s dtype.

    Returns
    -------
    Tensor
        A new tensor, ``input``'s shape and dtype.

    Raises
    ------
    IndexError
        When ``dim`` is out of range, ``index`` is not a 1-D integer tensor, or an
        entry of ``index`` is out of range.

    See Also
    --------
    difflab.index_copy : write a slice of another tensor at each position.
    difflab.Tensor.masked_fill : fill where a mask is true.
    difflab.Tensor.index_fill_ : the in-place form.

    Notes
    -----
    Along ``dim``, with :math:`S` the set of positions in ``index``:

    .. math:: \text{out}_j = \begin{cases} \text{value} & j \in S \\
              \text{input}_j & j \notin S \end{cases}

    Its derivative rule: ``input`` gets the output's gradient :math:`g` outside
    :math:`S` and zero in it; a ``value`` tensor gets the sum of :math:`g` over
    every filled entry.  Built on :func:`difflab.where`.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.index_fill(dl.ones(2, 3), 1, dl.tensor([0, -1]), -1.0).tolist()
    [[-1.0, 1.0, -1.0], [-1.0, 1.0, -1.0]]

    The gradients: none to the filled entries, their sum to the value:

    >>> x = dl.ones(3, requires_grad=True)
    >>> v = dl.tensor(5.0, requires_grad=True)
    >>> dl.index_fill(x, 0, dl.tensor([1, 2]), v).sum().backward()
    >>> x.grad.tolist(), v.grad.item()
    ([1.0, 0.0, 0.0], 2.0)
    """
    x = tensor_or_interpreted(input)
    dim = dim_index(dim, x.ndim, "index_fill")
    size = x.shape[dim] if x.ndim else 1
    index = _check_range(_index_vector(index, size, "index_fill"), size, "index_fill", dim)
    # position j along dim is filled when it equals some index: a comparison table
    hit = (arange(size, device=x.device).reshape(1, -1) == (index % size).reshape(-1, 1)).any(0)
    view = [1] * max(x.ndim, 1)
    view[dim] = -1
    fill = value.to(x.dtype) if isinstance(value, Tensor) else full_like(x, value)
    return F.where(hit.reshape(view) if x.ndim else hit.reshape(()), fill, x)


def _check_range(index: Tensor, size: int, name: str, dim: int) -> Tensor:
    """``index`` checked to lie in ``[-size, size)`` (an IndexError naming the first entry
    outside), as a graph replays it too: read the index from the result."""
    return checked_index(index, size, f"{name}: index {{value}} is out of range for "
                         f"dimension {dim} of size {size} (valid: {-size} .. {size - 1})",
                         low=-size)


def index_put(input: Tensor, indices: Sequence[Any], values: Any,  # noqa: A002
              accumulate: bool = False) -> Tensor:
    r"""A copy of ``input`` with ``values`` written at ``input[indices]``.

    ``index_put(x, (i, j), v)`` is ``y = x.clone(); y[i, j] = v``.  With
    ``accumulate=True`` the values add up, a repeated position too (where ``+=``
    would keep only one of them).  ``input`` is not changed: ``x.index_put_(...)``
    writes into ``x``.  As in PyTorch, a ``values`` tensor must have ``input``'s
    dtype (float64 values are not rounded into a float32 tensor without a word);
    the assignment ``y[i, j] = v`` converts ``v`` instead.

    Parameters
    ----------
    input : Tensor
        The tensor.
    indices : sequence
        One index per leading dimension, as in ``x[...]``: integer tensors (which
        broadcast together; negative entries count from the end), or with
        ``accumulate=False`` also slices and ints.
    values : Tensor
        Broadcast to the selected shape (the indices' broadcast shape, then the
        dimensions not indexed), of ``input``'s dtype.  A Python number is refused,
        as in PyTorch: pass ``difflab.tensor(1.0, dtype=input.dtype)`` (the
        assignment ``y[i, j] = 1.0`` takes numbers).
    accumulate : bool, optional
        Add into the existing values instead of replacing them (default False).

    Returns
    -------
    Tensor
        A new tensor, ``input``'s shape and dtype.

    Raises
    ------
    TypeError
        When ``values`` is not a tensor (a number, a list), or ``indices`` is one
        tensor rather than a tuple of them (write ``(i,)``), as in PyTorch.
    IndexError
        When an index entry is out of range, or with ``accumulate=True`` when an
        index is not an integer tensor (a slice).
    RuntimeError
        When ``values`` is a tensor whose dtype is not ``input``'s (convert it with
        ``values.to(input.dtype)``).

    See Also
    --------
    difflab.index_add : add whole slices along one dimension.
    difflab.Tensor.index_put_ : the in-place form.

    Notes
    -----
    With :math:`P` the positions selected by ``indices``:

    .. math:: \text{out}_p = \begin{cases} v_p & p \in P \\ \text{input}_p & p \notin P
              \end{cases} \qquad \text{or, accumulating,} \qquad
              \text{out}_p = \text{input}_p + \sum_{q \mapsto p} v_q

    Its derivative rule, for the output's gradient :math:`g`: ``values`` gets
    :math:`g` read at the selected positions (summed over what it was broadcast to);
    ``input`` gets :math:`g`, zero at the positions written unless accumulating.
    Built on :func:`difflab.scatter` and :func:`difflab.scatter_add`.

    Examples
    --------
    >>> import difflab as dl
    >>> i = (dl.tensor([0, 0, 1]),)
    >>> dl.index_put(dl.zeros(2), i, dl.tensor([1.0, 2.0, 3.0]), accumulate=True).tolist()
    [3.0, 3.0]

    Entries of a matrix, and the gradients:

    >>> x = dl.zeros(2, 2, requires_grad=True)
    >>> v = dl.tensor([5.0, 7.0], requires_grad=True)
    >>> out = dl.index_put(x, (dl.tensor([0, 1]), dl.tensor([1, -1])), v)
    >>> out.tolist()
    [[0.0, 5.0], [0.0, 7.0]]
    >>> (out * dl.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    >>> x.grad.tolist(), v.grad.tolist()
    ([[1.0, 0.0], [3.0, 0.0]], [2.0, 4.0])

    ``values`` of another dtype are refused (the assignment converts them):

    >>> y = dl.zeros(3, dtype=dl.float64)
    >>> dl.index_put(y, (dl.tensor([0]),), dl.tensor(1.5))
    Traceback (most recent call last):
    ...
    RuntimeError: index_put(): expected values's dtype (difflab.float32) to equal input's ...
    >>> y[dl.tensor([0])] = dl.tensor(1.5)
    >>> y.tolist()
    [1.5, 0.0, 0.0]

    ``values`` is a tensor, not a number (as in PyTorch):

    >>> dl.index_put(y, (dl.tensor([1]),), 2.0)
    Traceback (most recent call last):
    ...
    TypeError: index_put(): argument 'values' must be a Tensor, not float; make one with ...
    >>> dl.index_put(y, (dl.tensor([1]),), dl.tensor(2.0, dtype=y.dtype)).tolist()
    [1.5, 2.0, 0.0]
    """
    x = tensor_or_interpreted(input)
    indices = _index_put_arguments("index_put", indices, values)
    if isinstance(values, Tensor):  # (x[i] = v still casts, and takes numbers)
        check_same_dtype("index_put", x, values, "values")
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
    positions = [_check_range(tensor_of(i), size, "index_put", dim)
                 for dim, (size, i) in enumerate(zip(x.shape[:k], indices))]
    flat = positions[0] * 0
    for size, position in zip(x.shape[:k], positions):
        flat = flat * size + (position % size)
    flat = flat.reshape(-1)
    rest = tuple(x.shape[k:])
    selected = (flat.shape[0], *rest)
    picked_shape = tuple(np.broadcast_shapes(*[tuple(p.shape) for p in positions]))
    updates = tensor_or_interpreted(values).to(x.dtype).broadcast_to(picked_shape + rest)
    updates = updates.reshape(selected)
    spread = flat.reshape((-1,) + (1,) * len(rest)).expand(*selected)
    write = F.scatter_add if accumulate else F.scatter
    return write(x.reshape((-1,) + rest), 0, spread, updates).reshape(tuple(x.shape))


@_in_place("index_add")
def _index_add_(self: Tensor, dim: int, index: Tensor, source: Tensor, *,
                alpha: float = 1) -> Tensor:
    """In-place :func:`difflab.index_add`: adds ``alpha · source`` into slices of ``self``.

    Parameters
    ----------
    dim : int
        The dimension the index runs along.
    index : Tensor
        1-D integer positions, one per slice of ``source``.
    source : Tensor
        ``self``'s shape, except ``len(index)`` along ``dim``.
    alpha : float, optional
        The scale of ``source`` (default 1).

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.zeros(2, 3)
    >>> x.index_add_(1, dl.tensor([0, 0]), dl.ones(2, 2)).tolist()
    [[2.0, 0.0, 0.0], [2.0, 0.0, 0.0]]
    """
    return self._replace_with(lambda x: index_add(x, dim, index, source, alpha=alpha),
                              "index_add_")


@_in_place("index_fill")
def _index_fill_(self: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """In-place :func:`difflab.index_fill`: sets the slices ``index`` of ``self`` to ``value``.

    Parameters
    ----------
    dim : int
        The dimension the index runs along.
    index : Tensor
        1-D integer positions.
    value : float or 0-d Tensor
        The fill value.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.zeros(2, 2)
    >>> x.index_fill_(0, dl.tensor([1]), 9.0).tolist()
    [[0.0, 0.0], [9.0, 9.0]]
    """
    return self._replace_with(lambda x: index_fill(x, dim, index, value), "index_fill_")


def _index_put_arguments(name: str, indices: Any, values: Any) -> tuple:
    """``indices`` as a tuple, after PyTorch's TypeErrors: ``values`` must be a tensor (a
    number or a list is refused: ``x[indices] = 1.0`` takes one), and ``indices`` a
    sequence of indices, not one tensor (whose rows would be read as one index per
    dimension: ``x.index_put_(i, v)`` means ``x.index_put_((i,), v)``)."""
    require_tensor(values, name, "values")
    if isinstance(indices, Tensor):
        raise TypeError(f"{name}(): argument 'indices' must be a tuple of Tensors, not "
                        "Tensor; write (i,) for one index tensor i")
    return tuple(indices)


@_in_place("index_put")
def _index_put_(self: Tensor, indices: Sequence[Any], values: Any,
                accumulate: bool = False) -> Tensor:
    """In-place :func:`difflab.index_put`: writes ``values`` at ``self[indices]``.

    Parameters
    ----------
    indices : sequence
        One index per leading dimension (integer tensors; slices and ints too
        without ``accumulate``).
    values : Tensor
        Broadcast to the selected shape, of ``self``'s dtype (a Python number is
        refused, as in PyTorch: ``x[indices] = 1.0`` takes one).
    accumulate : bool, optional
        Add into the existing values, repeated positions too (default False).

    Raises
    ------
    TypeError
        When ``values`` is not a tensor, or ``indices`` is one tensor rather than a
        tuple of them (write ``(i,)``); ``self`` is then left unwritten.
    IndexError
        When an index entry is out of range, or with ``accumulate=True`` when an
        index is not an integer tensor (a slice).
    RuntimeError
        When ``values`` is a tensor whose dtype is not ``self``'s (convert it with
        ``values.to(self.dtype)``); ``self`` is then left unwritten.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.ones(3)
    >>> x.index_put_((dl.tensor([2, 2]),), dl.tensor([1.0, 4.0]), accumulate=True).tolist()
    [1.0, 1.0, 6.0]
    """
    _index_put_arguments("index_put_", indices, values)  # (its errors name index_put_)
    return self._replace_with(lambda x: index_put(x, indices, values, accumulate),
                              "index_put_")


# Tensor methods: the functions themselves (attached here: the tensor module does not
# import this one).
_TENSOR_METHODS = {
    "nonzero": nonzero, "argwhere": argwhere, "masked_select": masked_select,
    "index_add": index_add, "index_fill": index_fill, "index_put": index_put,
    "index_add_": _index_add_, "index_fill_": _index_fill_, "index_put_": _index_put_,
}
for _name, _function in _TENSOR_METHODS.items():
    setattr(Tensor, _name, _function)
