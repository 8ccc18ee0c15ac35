"""NaN-aware reductions, order statistics, distances and covariances: PyTorch's names, composed.

As in :mod:`difflab.functions_math`, each function is a composite of primitives, so its
derivative follows in every method and the jit replays it.  Order statistics
(:func:`median`, :func:`kthvalue`) pick from ``sort``, whose gradient goes back to where
each value came from; :func:`cdist` uses the safe ``where`` so that a zero distance has
gradient 0, as in PyTorch.
"""

from __future__ import annotations

import math
from typing import Any

from difflab import functions as F  # noqa: N812  (the primitives' public faces)
from difflab.creation import full, full_like, ones_like, zeros_like
from difflab.dtypes import float64, get_default_dtype, int64
from difflab.functions_picking import diagonal
from difflab.tensor import Tensor
from difflab.tensor_arguments import (
    MinMax,
    dim_index,
    integer,
    refuse_symbols,
    tensor_of,
    tensor_or_interpreted,
    values_of,
)

__all__ = [
    "aminmax", "bucketize", "cdist", "corrcoef", "cov", "cummax", "cummin", "dist", "kthvalue",
    "median", "msort", "nanmean", "nanmedian", "nansum", "searchsorted", "std_mean",
    "cumulative_trapezoid", "trapezoid", "var_mean",
]


# ---------------------------------------------------------------------------- reductions


def nansum(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """The sum, counting nan as 0.

    Parameters
    ----------
    input : Tensor
        The values.
    dim : int or tuple of int, optional
        The dimensions to sum (all by default; an empty ``[]`` or ``()`` also means
        all, as in PyTorch).
    keepdim : bool
        Keep the summed dimensions with size 1.

    Returns
    -------
    Tensor
        The sum; no gradient flows to the nan entries.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nansum(dl.tensor([1.0, float("nan"), 2.0])).item()
    3.0
    """
    x = tensor_or_interpreted(input)
    return F.where(F.isnan(x), zeros_like(x), x).sum(dim, keepdim)


def nanmean(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """The mean of the entries that are not nan (nan where all are).

    Parameters
    ----------
    input : Tensor
        Floating-point values.
    dim : int or tuple of int, optional
        The dimensions to average (all by default; an empty ``[]`` or ``()`` also
        means all, as in PyTorch).
    keepdim : bool
        Keep the averaged dimensions with size 1.

    Returns
    -------
    Tensor
        The mean.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nanmean(dl.tensor([1.0, float("nan"), 2.0])).item()
    1.5
    """
    x = tensor_or_interpreted(input)
    # (symbols' dtype is object: the count is made numbers, not sympy's True)
    counted = F.logical_not(F.isnan(x)).to(x.dtype if x.dtype.kind != "O" else float64)
    counted = counted.sum(dim, keepdim)
    return nansum(x, dim, keepdim) / counted


def var_mean(input: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,  # noqa: A002
             *, correction: Any = None) -> tuple:
    """The variance and the mean in one call: ``(var, mean)``.

    Parameters
    ----------
    input : Tensor
        The values.
    dim : int or tuple of int, optional
        The dimensions to reduce (all by default; an empty ``[]`` or ``()`` also
        means all, as in PyTorch).
    unbiased : bool, optional
        PyTorch's older spelling of ``correction`` (1 when true, 0 when false).
    keepdim : bool
        Keep the reduced dimensions with size 1.
    correction : int, optional
        Divide by ``n - correction`` (1 by default: the unbiased estimate).

    Returns
    -------
    tuple of Tensor
        ``(variance, mean)``.

    Examples
    --------
    >>> import difflab as dl
    >>> v, m = dl.var_mean(dl.tensor([1.0, 2.0, 3.0, 4.0]))
    >>> round(v.item(), 4), m.item()
    (1.6667, 2.5)
    """
    x = tensor_or_interpreted(input)
    return x.var(dim, unbiased, keepdim, correction=correction), x.mean(dim, keepdim)


def std_mean(input: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,  # noqa: A002
             *, correction: Any = None) -> tuple:
    """The standard deviation and the mean in one call: ``(std, mean)``.

    Parameters
    ----------
    input : Tensor
        The values.
    dim : int or tuple of int, optional
        The dimensions to reduce (all by default; an empty ``[]`` or ``()`` also
        means all, as in PyTorch).
    unbiased : bool, optional
        PyTorch's older spelling of ``correction``.
    keepdim : bool
        Keep the reduced dimensions with size 1.
    correction : int, optional
        Divide by ``n - correction`` (1 by default).

    Returns
    -------
    tuple of Tensor
        ``(standard deviation, mean)``.

    Examples
    --------
    >>> import difflab as dl
    >>> s, m = dl.std_mean(dl.tensor([[1.0, 3.0]]), dim=1, correction=0)
    >>> s.tolist(), m.tolist()
    ([1.0], [2.0])
    """
    variance, mean = var_mean(input, dim, unbiased, keepdim, correction=correction)
    return variance.sqrt(), mean


class AMinMax(tuple):
    """``(min, max)``, readable as ``.min`` and ``.max`` as in PyTorch."""

    @property
    def min(self) -> Tensor:
        return self[0]

    @property
    def max(self) -> Tensor:
        return self[1]


def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False) -> AMinMax:  # noqa: A002
    """The minimum and the maximum in one call.

    Parameters
    ----------
    input : Tensor
        The values.
    dim : int, optional
        The dimension to reduce (all by default).
    keepdim : bool
        Keep it with size 1.

    Returns
    -------
    AMinMax
        ``(min, max)``, also as ``.min`` and ``.max``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.aminmax(dl.tensor([3, 1, 2])).max.item()
    3
    """
    x = tensor_or_interpreted(input)
    if dim is not None:  # (one int: dim=[] is refused, as in PyTorch, not a reduction of all)
        dim = dim_index(dim, x.ndim, "aminmax")
    if x.numel() == 0:
        raise RuntimeError("aminmax of an empty tensor has no minimum or maximum")
    return AMinMax((x.amin(dim, keepdim), x.amax(dim, keepdim)))


def msort(input: Tensor) -> Tensor:  # noqa: A002
    """Sorted along dimension 0 (``sort(input, dim=0).values``).

    Parameters
    ----------
    input : Tensor
        The values.

    Returns
    -------
    Tensor
        The sorted values.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.msort(dl.tensor([[3, 1], [2, 4]])).tolist()
    [[2, 1], [3, 4]]
    """
    return F.sort(tensor_or_interpreted(input), dim=0).values


def _pick_sorted(x: Tensor, dim: Any, keepdim: bool, position: Any, name: str) -> Any:
    """The ``position``-th smallest along ``dim`` (all dims flattened when None), with its
    index: ``position(sorted_values, size)`` gives the position, possibly per slice."""
    refuse_symbols(name, "symbols have no order (which entry is picked depends on the "
                   "values)", x)
    if dim is None:
        flat = x.reshape(-1)
        if flat.shape[0] == 0:  # no middle value: nan, as PyTorch (still on the tape)
            if not flat.is_floating_point():
                raise RuntimeError(f"{name}: the median of an empty {flat.dtype} tensor has "
                                   f"no value to give (an empty float tensor gives nan)")
            return flat.sum() + float("nan")
        ordered = F.sort(flat, dim=0)
        where = position(ordered.values.unsqueeze(0), flat.shape[0], 1).reshape(1)
        return F.gather(ordered.values, 0, where).reshape(())
    dim = dim_index(dim, x.ndim, name)
    if x.ndim == 0:  # (one value: it is its own median, at index 0, as in PyTorch)
        return MinMax((x.clone(), full_like(x, 0, dtype=int64)))
    if x.shape[dim] == 0:
        raise IndexError(f"{name}: cannot pick an order statistic along dimension {dim} of "
                         f"size 0 (it has no entries; reduce along another dimension)")
    ordered = F.sort(x, dim=dim)
    where = position(ordered.values, x.shape[dim], dim)
    values = F.gather(ordered.values, dim, where)
    indices = F.gather(ordered.indices, dim, where)
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return MinMax((values, indices))


def _median_position(ignore_nan: bool) -> Any:
    def position(ordered: Tensor, size: int, dim: int) -> Tensor:
        nan = tensor_of(F.isnan(ordered))  # (sort puts nan last; a Dual's: a bool array)
        if ignore_nan:  # the lower median of the numbers; the last slot if all are nan
            count = size - nan.sum(dim, keepdim=True)
            return F.where(count > 0, (count - 1) // 2, full_like(count, size - 1))
        lower = full_like(nan.sum(dim, keepdim=True), (size - 1) // 2)
        return F.where(nan.any(dim, keepdim=True), full_like(lower, size - 1), lower)
    return position


def median(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:  # noqa: A002
    """The lower median (the smaller middle value for an even count), as PyTorch.

    A nan anywhere in a slice makes its median nan (:func:`nanmedian` ignores them).

    Parameters
    ----------
    input : Tensor
        The values.
    dim : int, optional
        The dimension to reduce; without it, the median of all entries.
    keepdim : bool
        Keep the reduced dimension with size 1.

    Returns
    -------
    Tensor or (values, indices)
        Without ``dim`` a scalar; with it, values and the indices they came from.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.median(dl.tensor([4.0, 1.0, 3.0, 2.0])).item()
    2.0
    >>> dl.median(dl.tensor([[1, 5, 3]]), dim=1).indices.tolist()
    [2]
    >>> dl.median(dl.tensor([]))             # no entries: nan, as PyTorch
    tensor(nan)
    """
    return _pick_sorted(tensor_or_interpreted(input), dim, keepdim,
                        _median_position(ignore_nan=False), "median")


def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:  # noqa: A002
    """The lower median of the entries that are not nan (nan where all are).

    Parameters
    ----------
    input : Tensor
        The values.
    dim : int, optional
        The dimension to reduce.
    keepdim : bool
        Keep the reduced dimension with size 1.

    Returns
    -------
    Tensor or (values, indices)
        As :func:`median`.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nanmedian(dl.tensor([float("nan"), 3.0, 1.0])).item()
    1.0
    """
    return _pick_sorted(tensor_or_interpreted(input), dim, keepdim,
                        _median_position(ignore_nan=True), "nanmedian")


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> Any:  # noqa: A002
    """The ``k``-th smallest value along ``dim`` (``k`` counts from 1), with its index.

    Parameters
    ----------
    input : Tensor
        The values.
    k : int
        Which order statistic, from 1 to the size of ``dim``.
    dim : int
        The dimension.
    keepdim : bool
        Keep it with size 1.

    Returns
    -------
    (values, indices)
        Readable as ``.values`` and ``.indices``.

    Raises
    ------
    TypeError
        If ``k`` or ``dim`` is not an int.
    IndexError
        If ``dim`` is out of range.
    RuntimeError
        If ``k`` is not in [1, the size of ``dim``].

    Examples
    --------
    >>> import difflab as dl
    >>> dl.kthvalue(dl.tensor([5.0, 1.0, 4.0]), 2).values.item()
    4.0
    """
    x = tensor_or_interpreted(input)
    size = x.shape[dim_index(dim, x.ndim, "kthvalue")] if x.ndim else 1
    k = integer(k, "kthvalue", "k")  # (k=2.0 was taken, k=2.5 picked a position 1.5)
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue: k = {k} is out of range for a dimension of size {size} "
                           f"(k counts from 1)")

    def position(ordered: Tensor, size: int, dim: int) -> Tensor:
        shape = list(ordered.shape)
        shape[dim] = 1
        return full(shape, k - 1, dtype=int64, device=ordered.device)

    return _pick_sorted(x if x.ndim else x.reshape(1), dim, keepdim, position, "kthvalue")


# ----------------------------------------------------------------------------- distances


def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:  # noqa: A002
    """The p-norm of ``input - other``.

    Parameters
    ----------
    input, other : Tensor
        Broadcastable tensors.
    p : float
        The norm's order.

    Returns
    -------
    Tensor
        A scalar.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.dist(dl.tensor([0.0, 0.0]), dl.tensor([3.0, 4.0])).item()
    5.0
    """
    return F.norm(tensor_or_interpreted(input) - other, p)


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0) -> Tensor:
    """Pairwise p-norm distances between the rows of ``x1`` and the rows of ``x2``.

    The gradient at a zero distance is 0 (the safe ``where``), as in PyTorch.

    Parameters
    ----------
    x1 : Tensor
        Shape ``(..., P, M)``.
    x2 : Tensor
        Shape ``(..., R, M)``.
    p : float
        The norm's order (``0``: count of differing coordinates; ``inf``: the largest).

    Returns
    -------
    Tensor
        Shape ``(..., P, R)``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.cdist(dl.tensor([[0.0, 0.0]]), dl.tensor([[3.0, 4.0], [0.0, 1.0]])).tolist()
    [[5.0, 1.0]]
    """
    a, b = tensor_or_interpreted(x1), tensor_or_interpreted(x2)
    if a.ndim < 2 or b.ndim < 2 or a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"cdist expects (..., P, M) and (..., R, M) with the same M, got "
                           f"{tuple(a.shape)} and {tuple(b.shape)}")
    if p < 0:
        raise RuntimeError(f"cdist: p must be non-negative, got {p}")
    gap = (a.unsqueeze(-2) - b.unsqueeze(-3)).abs()
    if p == 0:
        return (gap != 0).to(gap.dtype).sum(-1)
    if p == math.inf:
        return gap.amax(-1)
    total = (gap ** p).sum(-1)
    zero = total == 0
    return F.where(zero, zeros_like(total), F.where(zero, ones_like(total), total) ** (1 / p))


def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None,  # noqa: A002
        aweights: Tensor | None = None) -> Tensor:
    """The covariance matrix of the variables in the rows of ``input`` (observations in columns).

    With weights, as NumPy's ``cov``: ``fweights`` are integer repeat counts,
    ``aweights`` relative importances.

    Parameters
    ----------
    input : Tensor
        Shape ``(variables, observations)``, or one variable as a vector.
    correction : int
        Subtract from the (weighted) number of observations: 1 gives the unbiased estimate.
    fweights, aweights : Tensor, optional
        One weight per observation.

    Returns
    -------
    Tensor
        ``(variables, variables)``, or a scalar for one variable.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.cov(dl.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    x = tensor_or_interpreted(input)
    if x.ndim > 2:
        raise RuntimeError(f"cov expects a 1-D or 2-D tensor, got {x.ndim}-D")
    rows = x.reshape(1, -1) if x.ndim < 2 else x
    # (kind: a Dual's dtype is NumPy's; "O": sympy expressions, real numbers)
    rows = rows if rows.dtype.kind in "fO" else rows.to(get_default_dtype())
    n = rows.shape[1]
    weights = None
    for given in (fweights, aweights):
        if given is not None:
            # (beside expressions, the weights stay numbers: a constant tensor)
            given = tensor_of(given).to(rows.dtype if rows.dtype.kind != "O" else float64)
            if given.shape != (n,):
                raise RuntimeError(f"cov: weights need one value per observation ({n}), "
                                   f"got shape {tuple(given.shape)}")
            weights = given if weights is None else weights * given
    if weights is None:
        mean = rows.mean(1, keepdim=True)
        centered = rows - mean
        result = centered @ centered.T / max(n - correction, 0)
    else:
        total = weights.sum()
        centered = rows - (rows * weights).sum(1, keepdim=True) / total
        if correction == 0:
            norm = total
        elif aweights is None:
            norm = total - correction
        else:
            squares = (weights * tensor_of(aweights).to(weights.dtype)).sum()
            norm = total - correction * squares / total
        result = (centered * weights) @ centered.T / F.clamp(norm, min=0)
    return result.reshape(()) if x.ndim < 2 else result


def corrcoef(input: Tensor) -> Tensor:  # noqa: A002
    """Pearson correlation coefficients of the variables in the rows (clamped to [-1, 1]).

    Parameters
    ----------
    input : Tensor
        Shape ``(variables, observations)``.

    Returns
    -------
    Tensor
        ``(variables, variables)``: ``cov[i, j] / √(cov[i, i] · cov[j, j])``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.corrcoef(dl.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    c = cov(input)
    if c.ndim == 0:
        return c / c
    spread = F.sqrt(diagonal(c))
    return F.clamp(c / spread.unsqueeze(1) / spread.unsqueeze(0), -1.0, 1.0)


def _trapezoid_intervals(name: str, y: Any, x: Any, dx: float | None, dim: int) -> Any:
    """The pieces of the trapezoid rule along ``dim``: ``(left, right, steps, n)``, the
    samples before and after each interval and the intervals' widths (None for a
    constant spacing); the arguments checked for ``trapezoid`` and ``cumulative_trapezoid``."""
    if x is not None and dx is not None:
        raise TypeError(f"{name} takes x or dx, not both")
    if x is not None and not hasattr(x, "shape"):
        raise TypeError(f"{name}: x must be a tensor of sample points, got "
                        f"{type(x).__name__}; for an even spacing pass dx={x!r}")
    n = y.shape[dim_index(dim, y.ndim, name, zero_d_has_dim=False)]
    if x is not None:
        x = tensor_or_interpreted(x)
        points = x.shape[-1 if x.ndim == 1 else dim_index(dim, x.ndim, name)] if x.ndim else 0
        if points != n:
            raise RuntimeError(f"{name}: there must be one x value for each sample point: y has "
                               f"{n} along dim {dim}, x has {points}")
    if n < 2:
        return None, None, None, n
    left, right = y.narrow(dim, 0, n - 1), y.narrow(dim, 1, n - 1)
    if x is None:
        return left, right, None, n
    steps = x.narrow(-1 if x.ndim == 1 else dim, 1, n - 1) - x.narrow(
        -1 if x.ndim == 1 else dim, 0, n - 1)
    if x.ndim == 1 and y.ndim > 1:  # one grid for every slice: along dim
        view = [1] * y.ndim
        view[dim] = n - 1
        steps = steps.reshape(view)
    return left, right, steps, n


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float | None = None,
              dim: int = -1) -> Tensor:
    """The integral of ``y`` along ``dim`` by the trapezoid rule: Σ (yₖ + yₖ₊₁)/2 · Δxₖ.

    Parameters
    ----------
    y : Tensor
        Samples of the integrand.
    x : Tensor, optional
        Where they were taken (spacing 1, or ``dx``, without it).
    dx : float, optional
        A constant spacing.
    dim : int
        The dimension to integrate along.

    Returns
    -------
    Tensor
        ``y`` with ``dim`` integrated away; differentiable in ``y`` and ``x``.

    Raises
    ------
    TypeError
        If both ``x`` and ``dx`` are given, or ``x`` is a number (pass it as ``dx``).
    IndexError
        If ``dim`` is out of range, or ``y`` is 0-d.
    RuntimeError
        If ``x`` has not one value for each sample point of ``y``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.trapezoid(dl.tensor([1.0, 2.0, 3.0]), dx=0.5).item()
    2.0
    """
    y = tensor_or_interpreted(y)
    left, right, steps, n = _trapezoid_intervals("trapezoid", y, x, dx, dim)
    if n < 2:
        return (y * 0).sum(dim)
    if steps is None:
        return (left + right).sum(dim) * (0.5 * (1.0 if dx is None else dx))
    return ((left + right) * steps).sum(dim) * 0.5


def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float | None = None,
                         dim: int = -1) -> Tensor:
    r"""The running integral of ``y`` along ``dim`` by the trapezoid rule.

    Entry k is :math:`\sum_{j \le k} (y_j + y_{j+1})/2 \cdot \Delta x_j`: the
    integral from the first sample to sample k + 1, so there is one entry fewer than
    samples (none for one sample).  The last entry is :func:`trapezoid`'s result.

    Parameters
    ----------
    y : Tensor
        Samples of the integrand.
    x : Tensor, optional
        Where they were taken (spacing 1, or ``dx``, without it).
    dx : float, optional
        A constant spacing.
    dim : int
        The dimension to integrate along.

    Returns
    -------
    Tensor
        ``y``'s shape with ``dim`` one shorter; differentiable in ``y`` and ``x``.

    Raises
    ------
    TypeError
        If both ``x`` and ``dx`` are given, or ``x`` is a number (pass it as ``dx``).
    IndexError
        If ``dim`` is out of range, or ``y`` is 0-d.
    RuntimeError
        If ``x`` has not one value for each sample point of ``y``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.cumulative_trapezoid(dl.tensor([1.0, 2.0, 4.0]))
    tensor([1.5, 4.5])
    """
    y = tensor_or_interpreted(y)
    left, right, steps, n = _trapezoid_intervals("cumulative_trapezoid", y, x, dx, dim)
    if n < 2:
        return y.narrow(dim, 0, 0) * 1.0
    if steps is None:
        return (left + right).cumsum(dim) * (0.5 * (1.0 if dx is None else dx))
    return ((left + right) * steps).cumsum(dim) * 0.5


def searchsorted(sorted_sequence: Tensor, values: Any, *, right: bool = False,
                 side: str | None = None) -> Tensor:
    """Where each value would go in a sorted sequence to keep it sorted (its last dimension).

    The index is the count of entries below the value (``right=True``: at or below).
    Computed as that count, a comparison of every value with every entry: simple, and
    fine for the teaching sizes it is meant for (O(n·m), not a binary search).

    Parameters
    ----------
    sorted_sequence : Tensor
        Sorted along its last dimension (1-D, or one sequence per leading index of values).
    values : Tensor or number
        The values to place.
    right : bool
        Place a value equal to an entry after it instead of before.
    side : {"left", "right"}, optional
        The same as ``right`` (NumPy's spelling).

    Returns
    -------
    Tensor
        int64 indices, ``values``' shape; no gradient.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.searchsorted(dl.tensor([1, 3, 5, 7]), dl.tensor([3, 6, 9])).tolist()
    [1, 3, 4]
    """
    if side is not None:
        if side not in ("left", "right"):
            raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
        right = side == "right"
    # (a Dual's values: the positions have no derivative)
    sequence = values_of(sorted_sequence, "searchsorted")
    scalar = not isinstance(values, Tensor) and not hasattr(values, "shape")
    v = values_of(values if not scalar else [values], "searchsorted")
    if sequence.ndim > 1 and sequence.shape[:-1] != v.shape[:-1]:
        raise RuntimeError(f"searchsorted: a sorted sequence of shape {tuple(sequence.shape)} "
                           f"needs values with the same leading shape, got {tuple(v.shape)}")
    entries = sequence.unsqueeze(-2) if sequence.ndim > 1 else sequence
    below = entries <= v.unsqueeze(-1) if right else entries < v.unsqueeze(-1)
    if v.dtype.kind in "fc":  # (nan sorts last, as in PyTorch: after every entry, not first)
        below = below | v.unsqueeze(-1).isnan()
    counts = below.sum(-1).to(int64)
    return counts.reshape(()) if scalar else counts


def bucketize(input: Any, boundaries: Tensor, *, right: bool = False) -> Tensor:  # noqa: A002
    """The bucket of each value: i with ``boundaries[i-1] < x <= boundaries[i]``.

    ``right=True`` gives ``boundaries[i-1] <= x < boundaries[i]`` instead.

    Parameters
    ----------
    input : Tensor or number
        The values.
    boundaries : Tensor
        1-D, increasing.
    right : bool
        Which side of a boundary a value equal to it falls on.

    Returns
    -------
    Tensor
        int64 bucket indices, ``input``'s shape.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.bucketize(dl.tensor([0.5, 1.0, 2.5]), dl.tensor([1.0, 2.0])).tolist()
    [0, 0, 2]
    """
    edges = values_of(boundaries, "bucketize")
    if edges.ndim != 1:
        raise RuntimeError(f"bucketize expects 1-D boundaries, got {edges.ndim}-D")
    return searchsorted(edges, input, right=right)


def _cumulative_extreme(x: Tensor, dim: int, better: Any, name: str) -> MinMax:
    """Running maximum or minimum along ``dim`` with the index where it was reached:
    one step per position (values_k = pick(values_{k-1}, x_k)), so the gradient goes to
    the entry that is the running extreme, as in PyTorch."""
    x = tensor_or_interpreted(x)
    refuse_symbols(name, "symbols have no order (the running extreme depends on the values)",
                   x)
    dim = dim_index(dim, x.ndim, name)
    if x.ndim == 0:
        return MinMax((x.clone(), full_like(x, 0, dtype=int64)))
    if x.shape[dim] == 0:  # (no running extreme: empty, as in PyTorch; select(dim, 0) failed)
        return MinMax((x.clone(), full_like(x, 0, dtype=int64)))
    values, indices = [], []
    best = x.select(dim, 0)
    where_best = full_like(best, 0, dtype=int64)
    for k in range(x.shape[dim]):
        current = x.select(dim, k)
        if k:
            take = better(current, best) | (current == best) | current.isnan()
            take = take & ~best.isnan()  # (a nan, once met, stays the extreme)
            best = F.where(take, current, best)
            where_best = F.where(take, full_like(where_best, k), where_best)
        values.append(best)
        indices.append(where_best)
    return MinMax((F.stack(values, dim), F.stack(indices, dim)))


def cummax(input: Tensor, dim: int) -> MinMax:  # noqa: A002
    """The running maximum along ``dim`` and the index where each was reached.

    Parameters
    ----------
    input : Tensor
        The values.
    dim : int
        The dimension to run along.

    Returns
    -------
    (values, indices)
        Readable as ``.values`` and ``.indices``; ties take the later index, and a nan
        stays the maximum once met, as in PyTorch.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.cummax(dl.tensor([1.0, 3.0, 2.0, 5.0]), 0).values.tolist()
    [1.0, 3.0, 3.0, 5.0]
    """
    return _cumulative_extreme(input, dim, lambda a, b: a > b, "cummax")


def cummin(input: Tensor, dim: int) -> MinMax:  # noqa: A002
    """The running minimum along ``dim`` and the index where each was reached.

    Parameters
    ----------
    input : Tensor
        The values.
    dim : int
        The dimension to run along.

    Returns
    -------
    (values, indices)
        Readable as ``.values`` and ``.indices``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.cummin(dl.tensor([3.0, 1.0, 2.0]), 0).indices.tolist()
    [0, 1, 1]
    """
    return _cumulative_extreme(input, dim, lambda a, b: a < b, "cummin")


# Tensor methods: the functions themselves (attached here: the tensor module does not
# import this one).
_TENSOR_METHODS = {
    "median": median, "nanmedian": nanmedian, "kthvalue": kthvalue, "msort": msort,
    "aminmax": aminmax, "nansum": nansum, "nanmean": nanmean, "count_nonzero": F.count_nonzero,
    "dist": dist, "cummax": cummax, "cummin": cummin,
}
for _name, _function in _TENSOR_METHODS.items():
    setattr(Tensor, _name, _function)
