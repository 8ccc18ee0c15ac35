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
from difflab.functions_indexing import _crop, _gather_index, scatter
from difflab.functions_joining import movedim
from difflab.functions_selecting import _index_vector, nonzero
from difflab.ops import structural
from difflab.tensor import Tensor
from difflab.tensor_arguments import (
    check_same_dtype,
    dim_index,
    refuse_symbols,
    tensor_or_interpreted,
)
from difflab.tensor_inplace import _in_place

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
    r"""Reduce the values of ``src`` into ``input`` at the positions ``index`` names.

    For ``dim = 0``, ``src[i][j]`` goes to ``out[index[i][j]][j]`` (likewise for other
    dims); every position that receives values becomes their ``reduce`` (with its own
    value among them when ``include_self``); the others keep ``input``'s value.

    Parameters
    ----------
    input : Tensor
        The tensor to reduce into (not changed: ``x.scatter_reduce_(...)`` writes
        into ``x``).
    dim : int
        The dimension the index runs along (negative counts from the end).
    index : Tensor
        Integer positions, as for :func:`difflab.scatter`: as many dimensions as
        ``input``, no larger than ``src`` (nor than ``input`` but along ``dim``);
        entries in ``[0, input.shape[dim])``.
    src : Tensor
        The values, of ``input``'s dtype; only the part ``index`` covers is read.
    reduce : str
        ``"sum"``, ``"prod"``, ``"mean"``, ``"amax"`` or ``"amin"``.
    include_self : bool, optional
        Whether ``input``'s value at a written position takes part (default True),
        keyword-only.

    Returns
    -------
    Tensor
        A new tensor, ``input``'s shape and dtype.  An integer mean rounds down.

    Raises
    ------
    ValueError
        When ``reduce`` is not one of the five.
    TypeError
        When ``input`` is not a floating or integer tensor, ``dim`` is not an int,
        or ``index`` is not an integer tensor.
    IndexError
        When ``dim`` is out of range.
    RuntimeError
        When ``src``'s dtype is not ``input``'s, ``index`` has the wrong number of
        dimensions or is too large, or an entry of ``index`` is out of range.

    See Also
    --------
    difflab.scatter : write the values instead of reducing them.
    difflab.scatter_add : the sum, as a primitive.
    difflab.index_reduce : the same with whole slices along one dimension.
    difflab.Tensor.scatter_reduce_ : the in-place form.

    Notes
    -----
    With :math:`S_p` the entries of ``src`` sent to position :math:`p`:

    .. math:: \text{out}_p = \operatorname{reduce}\bigl(\{\text{input}_p\}
              \cup \{\text{src}_q : q \in S_p\}\bigr) \quad (S_p \ne \emptyset),
              \qquad \text{out}_p = \text{input}_p \quad (S_p = \emptyset)

    (without ``include_self``, :math:`\text{input}_p` leaves the set).  The derivative
    rules are PyTorch's, for the output's gradient :math:`g_p`: for ``"sum"`` each
    value gets :math:`g_p`, for ``"mean"`` :math:`g_p / |S_p|` (the count includes
    ``input`` with ``include_self``); for ``"prod"`` each value gets :math:`g_p`
    times the product of the others (exact when some are zero); for ``"amax"`` and
    ``"amin"`` the values equal to the result share :math:`g_p` evenly and the rest
    get zero.  ``input`` gets :math:`g` unchanged where nothing was sent.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([1.0, 10.0, 100.0])
    >>> src, i = dl.tensor([2.0, 3.0, 4.0, 5.0]), dl.tensor([0, 0, 2, 2])
    >>> dl.scatter_reduce(x, 0, i, src, "prod").tolist()
    [6.0, 10.0, 2000.0]
    >>> dl.scatter_reduce(x, 0, i, src, "amax", include_self=False).tolist()
    [3.0, 10.0, 5.0]

    Equal maxima share the gradient:

    >>> v = dl.tensor([2.0, 2.0, 1.0], requires_grad=True)
    >>> out = dl.scatter_reduce(dl.zeros(1), 0, dl.tensor([0, 0, 0]), v, "amax")
    >>> out.backward(dl.ones(1))
    >>> v.grad.tolist()
    [0.5, 0.5, 0.0]
    """
    x, source = tensor_or_interpreted(input), tensor_or_interpreted(src)
    if reduce not in _REDUCTIONS:
        raise ValueError(f"scatter_reduce: reduce must be one of {_REDUCTIONS}, got {reduce!r}")
    check_same_dtype("scatter_reduce", x, source, "src")
    if x.dtype.kind not in "fiuO":  # (O: sympy expressions, real numbers)
        raise TypeError(f"scatter_reduce: expected a floating or integer tensor, got {x.dtype}")
    if reduce in ("amax", "amin"):
        refuse_symbols("scatter_reduce", f"symbols have no order (the {reduce} of a group "
                       f"depends on the values)", x, source)
    dim = dim_index(dim, x.ndim, "scatter_reduce")
    checked = _gather_index("scatter_reduce", x, dim, index, source)
    idx = checked.array
    if idx.size == 0:
        return x.clone()
    shape = tuple(x.shape) or (1,)
    index_t = checked.reshape(idx.shape or (1,))
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
    r"""A copy of ``input`` with slice ``k`` of ``source`` written at slice ``index[k]``.

    The slices run along ``dim``.  ``input`` is not changed: ``x.index_copy_(...)``
    writes into ``x``.

    Parameters
    ----------
    input : Tensor
        The tensor, of any shape :math:`(\dots, n, \dots)` (``n`` along ``dim``).
    dim : int
        The dimension the index runs along (negative counts from the end).
    index : Tensor
        1-D integer positions in ``[0, n)``, shape ``(m,)``, one per slice of
        ``source`` (a repeated position keeps one of its slices, which one
        unspecified, as in PyTorch).
    source : Tensor
        ``input``'s shape, except ``m`` along ``dim``, and ``input``'s dtype.

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
    difflab.index_add : add the slices instead of writing them.
    difflab.index_fill : write one value at the positions.
    difflab.Tensor.index_copy_ : the in-place form.

    Notes
    -----
    Along ``dim``:

    .. math:: \text{out}_j = \begin{cases} \text{source}_k & \text{index}_k = j \\
              \text{input}_j & j \notin \text{index} \end{cases}

    Its derivative rule, for the output's gradient :math:`g`: ``input`` gets
    :math:`g` with zeros at the copied slices; slice :math:`k` of ``source`` gets
    :math:`g_{\text{index}_k}`.  Built on :func:`difflab.scatter`.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.index_copy(dl.zeros(2, 3), 1, dl.tensor([2, 0]), dl.ones(2, 2)).tolist()
    [[1.0, 0.0, 1.0], [1.0, 0.0, 1.0]]

    The gradients:

    >>> x = dl.zeros(3, requires_grad=True)
    >>> src = dl.tensor([1.0, 2.0], requires_grad=True)
    >>> out = dl.index_copy(x, 0, dl.tensor([2, 0]), src)
    >>> (out * dl.tensor([10.0, 20.0, 30.0])).sum().backward()
    >>> x.grad.tolist(), src.grad.tolist()
    ([0.0, 20.0, 0.0], [30.0, 10.0])
    """
    x, src = tensor_or_interpreted(input), tensor_or_interpreted(source)
    check_same_dtype("index_copy", x, src)
    dim = dim_index(dim, x.ndim, "index_copy")
    index = _index_vector(index, x.shape[dim] if x.ndim else 1, "index_copy")
    spread = _spread(x, dim, index, src, "index_copy")
    return scatter(x, dim, spread, src)


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor,  # noqa: A002
                 reduce: str, *, include_self: bool = True) -> Tensor:
    r"""Reduce slice ``k`` of ``source`` into slice ``index[k]`` of ``input``.

    The slices run along ``dim``: :func:`difflab.scatter_reduce` with whole slices.
    ``input`` is not changed: ``x.index_reduce_(...)`` writes into ``x``.

    Parameters
    ----------
    input : Tensor
        The tensor, of any shape :math:`(\dots, n, \dots)` (``n`` along ``dim``).
    dim : int
        The dimension the index runs along (negative counts from the end).
    index : Tensor
        1-D integer positions in ``[0, n)``, shape ``(m,)``, one per slice of
        ``source``.
    source : Tensor
        ``input``'s shape, except ``m`` along ``dim``; ``input``'s dtype.
    reduce : str
        ``"prod"``, ``"mean"``, ``"amax"`` or ``"amin"`` (PyTorch's four; a sum is
        :func:`difflab.index_add`).
    include_self : bool, optional
        Whether ``input``'s slices take part in their reductions (default True),
        keyword-only.

    Returns
    -------
    Tensor
        A new tensor, ``input``'s shape and dtype.

    Raises
    ------
    ValueError
        When ``reduce`` is not one of the four.
    IndexError
        When ``dim`` is out of range, or ``index`` is not a 1-D integer tensor.
    RuntimeError
        When ``source`` has the wrong shape or dtype, or an entry of ``index`` is out
        of range.

    See Also
    --------
    difflab.scatter_reduce : the same with an index per entry.
    difflab.index_add : the sum of slices.
    difflab.Tensor.index_reduce_ : the in-place form.

    Notes
    -----
    Along ``dim``, with :math:`K_j = \{k : \text{index}_k = j\}`:

    .. math:: \text{out}_j = \operatorname{reduce}\bigl(\{\text{input}_j\} \cup
              \{\text{source}_k : k \in K_j\}\bigr) \quad (K_j \ne \emptyset),
              \qquad \text{out}_j = \text{input}_j \quad (K_j = \emptyset)

    elementwise over the slices (without ``include_self``, :math:`\text{input}_j`
    leaves the set).  The derivative rules are :func:`difflab.scatter_reduce`'s:
    the mean divides the gradient by the count, the product's is exact at zeros,
    equal maxima (minima) share it evenly.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.ones(3)
    >>> dl.index_reduce(x, 0, dl.tensor([0, 0, 2]), dl.tensor([2.0, 3.0, 4.0]), "prod").tolist()
    [6.0, 1.0, 4.0]

    A mean of rows, and its gradient:

    >>> src = dl.tensor([[2.0, 4.0], [6.0, 8.0]], requires_grad=True)
    >>> out = dl.index_reduce(dl.zeros(2, 2), 0, dl.tensor([1, 1]), src, "mean",
    ...                       include_self=False)
    >>> out.tolist()
    [[0.0, 0.0], [4.0, 6.0]]
    >>> out.sum().backward()
    >>> src.grad.tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    """
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise ValueError(f"index_reduce: reduce must be 'prod', 'mean', 'amax' or 'amin', "
                         f"got {reduce!r}")
    x, src = tensor_or_interpreted(input), tensor_or_interpreted(source)
    check_same_dtype("index_reduce", x, src)
    dim = dim_index(dim, x.ndim, "index_reduce")
    index = _index_vector(index, x.shape[dim] if x.ndim else 1, "index_reduce")
    spread = _spread(x, dim, index, src, "index_reduce")
    return scatter_reduce(x, dim, spread, src, reduce, include_self=include_self)


def _put(x: Tensor, src: Any, where: tuple, expected: tuple, name: str) -> Tensor:
    """``x`` with ``src`` (exactly ``expected``'s shape) written at ``x[where]``."""
    src = tensor_or_interpreted(src)
    if tuple(src.shape) != tuple(expected):
        raise RuntimeError(f"{name}: expected src to have shape {tuple(expected)} (the part "
                           f"of input it replaces), got {tuple(src.shape)}")
    return apply(structural.IndexPut, x, src.to(x.dtype) if src.dtype != x.dtype else src,
                 index=where)


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:  # noqa: A002
    r"""A copy of ``input`` with ``src`` written where ``input.select(dim, index)`` reads.

    Parameters
    ----------
    input : Tensor
        The tensor, of shape :math:`(\dots, n, \dots)` (``n`` along ``dim``).
    src : Tensor
        Exactly ``input``'s shape without dimension ``dim``; cast to ``input``'s dtype.
    dim : int
        The dimension to select along (negative counts from the end).
    index : int
        The position along ``dim``, in ``[-n, n)`` (negative counts from the end).

    Returns
    -------
    Tensor
        A new tensor, ``input``'s shape and dtype.

    Raises
    ------
    IndexError
        When ``dim`` or ``index`` is out of range.
    RuntimeError
        When ``src``'s shape is not the selected part's.

    See Also
    --------
    difflab.slice_scatter : write where a slice reads.
    difflab.diagonal_scatter : write on a diagonal.

    Notes
    -----
    Along ``dim``, :math:`\text{out}_j = \text{src}` for :math:`j = \text{index}` and
    :math:`\text{input}_j` elsewhere.  Its derivative rule, for the output's gradient
    :math:`g`: ``input`` gets :math:`g` with zeros at ``index``, ``src`` gets
    ``g.select(dim, index)``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.select_scatter(dl.zeros(2, 2), dl.ones(2), 0, 1).tolist()
    [[0.0, 0.0], [1.0, 1.0]]

    A column, and the gradients:

    >>> x = dl.zeros(2, 2, requires_grad=True)
    >>> col = dl.tensor([3.0, 4.0], requires_grad=True)
    >>> out = dl.select_scatter(x, col, 1, 0)
    >>> out.tolist()
    [[3.0, 0.0], [4.0, 0.0]]
    >>> (out * dl.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    >>> x.grad.tolist(), col.grad.tolist()
    ([[0.0, 2.0], [0.0, 4.0]], [1.0, 3.0])
    """
    x = tensor_or_interpreted(input)
    dim = dim_index(dim, x.ndim, "select_scatter")
    size = x.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"select_scatter: index {index} is out of range for dimension {dim} "
                         f"of size {size}")
    expected = tuple(x.shape[:dim]) + tuple(x.shape[dim + 1:])
    return _put(x, src, (slice(None),) * dim + (int(index) % size,), expected,
                "select_scatter")


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None,  # noqa: A002
                  end: int | None = None, step: int = 1) -> Tensor:
    r"""A copy of ``input`` with ``src`` written where a slice along ``dim`` reads.

    The slice is ``input[..., start:end:step, ...]`` with the bounds on dimension
    ``dim`` (Python's slice rules: negative bounds count from the end, bounds past
    the end are cut).

    Parameters
    ----------
    input : Tensor
        The tensor.
    src : Tensor
        Exactly the slice's shape; cast to ``input``'s dtype.
    dim : int, optional
        The dimension to slice (default 0; negative counts from the end).
    start, end : int, optional
        The slice's bounds (the whole dimension by default).
    step : int, optional
        A positive step (default 1).

    Returns
    -------
    Tensor
        A new tensor, ``input``'s shape and dtype.

    Raises
    ------
    IndexError
        When ``dim`` is out of range.
    ValueError
        When ``step`` is not positive.
    RuntimeError
        When ``src``'s shape is not the slice's.

    See Also
    --------
    difflab.select_scatter : write at one position of a dimension.
    difflab.diagonal_scatter : write on a diagonal.
    difflab.index_copy : write slices at listed positions.

    Notes
    -----
    With :math:`S` the positions the slice reads:

    .. math:: \text{out}_p = \begin{cases} \text{src}_p & p \in S \\
              \text{input}_p & p \notin S \end{cases}

    Its derivative rule, for the output's gradient :math:`g`: ``input`` gets
    :math:`g` with zeros on :math:`S`, ``src`` gets :math:`g` read on :math:`S`
    (``g[..., start:end:step, ...]``).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.slice_scatter(dl.zeros(5), dl.ones(2), start=1, step=2).tolist()
    [0.0, 1.0, 0.0, 1.0, 0.0]

    A column of a matrix, and the gradient of ``src``:

    >>> col = dl.tensor([7.0, 8.0], requires_grad=True)
    >>> out = dl.slice_scatter(dl.zeros(2, 3), col.reshape(2, 1), dim=1, start=-1)
    >>> out.tolist()
    [[0.0, 0.0, 7.0], [0.0, 0.0, 8.0]]
    >>> (out * dl.arange(6.0).reshape(2, 3)).sum().backward()
    >>> col.grad.tolist()
    [2.0, 5.0]
    """
    x = tensor_or_interpreted(input)
    dim = dim_index(dim, x.ndim, "slice_scatter")
    if step < 1:
        raise ValueError(f"slice_scatter: step must be positive, got {step}")
    where = (slice(None),) * dim + (slice(start, end, step),)
    expected = np.empty(tuple(x.shape), dtype=bool)[where].shape
    return _put(x, src, where, expected, "slice_scatter")


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,  # noqa: A002
                     dim2: int = 1) -> Tensor:
    r"""A copy of ``input`` with ``src`` written on a diagonal (``input.diagonal``'s).

    Parameters
    ----------
    input : Tensor
        At least 2-D.
    src : Tensor
        The diagonal's shape: the other dimensions, then the diagonal's length;
        cast to ``input``'s dtype.
    offset : int, optional
        Above the main diagonal (> 0) or below it (< 0); default 0.
    dim1, dim2 : int, optional
        The two dimensions the diagonal runs across (default 0 and 1).

    Returns
    -------
    Tensor
        A new tensor, ``input``'s shape and dtype.

    Raises
    ------
    IndexError
        When ``dim1`` or ``dim2`` is out of range.
    RuntimeError
        When ``input`` has fewer than 2 dimensions, ``dim1`` equals ``dim2``, or
        ``src``'s shape is not the diagonal's.

    See Also
    --------
    difflab.Tensor.diagonal : read the diagonal.
    difflab.select_scatter : write at one position of a dimension.
    difflab.slice_scatter : write where a slice reads.

    Notes
    -----
    With :math:`k` the offset, :math:`\text{out}_{i,\,i+k} = \text{src}_i` on the
    diagonal and :math:`\text{out} = \text{input}` elsewhere.  Its derivative rule,
    for the output's gradient :math:`g`: ``input`` gets :math:`g` with zeros on the
    diagonal, ``src`` gets :math:`g`'s diagonal.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.diagonal_scatter(dl.zeros(2, 3), dl.ones(2), 1).tolist()
    [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]

    The gradients:

    >>> x = dl.zeros(2, 2, requires_grad=True)
    >>> d = dl.tensor([3.0, 4.0], requires_grad=True)
    >>> (dl.diagonal_scatter(x, d) * dl.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    >>> x.grad.tolist(), d.grad.tolist()
    ([[0.0, 2.0], [3.0, 0.0]], [1.0, 4.0])
    """
    x = tensor_or_interpreted(input)
    if x.ndim < 2:
        raise RuntimeError(f"diagonal_scatter: expected a tensor of at least 2 dimensions, "
                           f"got {x.ndim}")
    d1, d2 = (dim_index(d, x.ndim, "diagonal_scatter") for d in (dim1, dim2))
    if d1 == d2:
        raise RuntimeError(f"diagonal_scatter: dim1 and dim2 must differ, both are {dim1}")
    moved = movedim(x, (d1, d2), (-2, -1))  # (the diagonal's two dimensions last)
    rows, cols = moved.shape[-2], moved.shape[-1]
    length = max(0, min(rows + min(offset, 0), cols - max(offset, 0)))
    row = np.arange(length) - min(offset, 0)
    col = np.arange(length) + max(offset, 0)
    # (the positions on x's device, as roll's: a Dual or SymbolArray has no .array)
    where = (Ellipsis, backend.to_device(row, x.device), backend.to_device(col, x.device))
    written = _put(moved, src, where, tuple(moved.shape[:-2]) + (length,), "diagonal_scatter")
    return movedim(written, (-2, -1), (d1, d2))


@_in_place("scatter_reduce")
def _scatter_reduce_(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                     include_self: bool = True) -> Tensor:
    """In-place :func:`difflab.scatter_reduce`: reduces ``src`` into ``self`` by ``index``.

    Parameters
    ----------
    dim : int
        The dimension the index runs along.
    index : Tensor
        Integer positions, as many dimensions as ``self``.
    src : Tensor
        The values, of ``self``'s dtype.
    reduce : str
        ``"sum"``, ``"prod"``, ``"mean"``, ``"amax"`` or ``"amin"``.
    include_self : bool, optional
        Whether ``self``'s value at a written position takes part (default True).

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([1.0, 1.0])
    >>> x.scatter_reduce_(0, dl.tensor([1, 1, 1]), dl.tensor([2.0, 9.0, 4.0]), "amax").tolist()
    [1.0, 9.0]
    """
    return self._replace_with(
        lambda x: scatter_reduce(x, dim, index, src, reduce, include_self=include_self),
        "scatter_reduce_")


@_in_place("index_copy")
def _index_copy_(self: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """In-place :func:`difflab.index_copy`: writes slice ``k`` of ``source`` at ``index[k]``.

    Parameters
    ----------
    dim : int
        The dimension the index runs along.
    index : Tensor
        1-D integer positions, one per slice of ``source``.
    source : Tensor
        ``self``'s shape, except ``len(index)`` along ``dim``.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.zeros(3, 2)
    >>> x.index_copy_(0, dl.tensor([2]), dl.tensor([[5.0, 6.0]])).tolist()
    [[0.0, 0.0], [0.0, 0.0], [5.0, 6.0]]
    """
    return self._replace_with(lambda x: index_copy(x, dim, index, source), "index_copy_")


@_in_place("index_reduce")
def _index_reduce_(self: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """In-place :func:`difflab.index_reduce`: reduces slices of ``source`` into ``self``.

    Parameters
    ----------
    dim : int
        The dimension the index runs along.
    index : Tensor
        1-D integer positions, one per slice of ``source``.
    source : Tensor
        ``self``'s shape, except ``len(index)`` along ``dim``.
    reduce : str
        ``"prod"``, ``"mean"``, ``"amax"`` or ``"amin"``.
    include_self : bool, optional
        Whether ``self``'s slices take part in their reductions (default True).

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([5.0, 5.0])
    >>> x.index_reduce_(0, dl.tensor([0, 0]), dl.tensor([1.0, 9.0]), "amin").tolist()
    [1.0, 5.0]
    """
    return self._replace_with(
        lambda x: index_reduce(x, dim, index, source, reduce, include_self=include_self),
        "index_reduce_")


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
