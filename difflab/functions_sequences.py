"""Quantiles, running log-sums, repeats, combinations and index arithmetic: PyTorch's names.

Composites of primitives difflab already has, like the other ``functions_*`` modules:

* :func:`quantile` and :func:`nanquantile` sort, pick the two neighbours of the
  position ``q · (n - 1)`` with ``gather`` and interpolate between them, so the
  gradient goes to the two entries the quantile was read from;
* :func:`logcumsumexp` runs :func:`~difflab.functions_math.logaddexp` along the
  dimension, one step per position: exact where ``log(cumsum(exp(x)))`` underflows;
* :func:`repeat_interleave`, :func:`combinations` and :func:`unravel_index` build
  index lists and select with them (or compute with integer division).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from difflab import functions as F  # noqa: N812  (the primitives' public faces)
from difflab.creation import arange, full_like, tensor
from difflab.dtypes import int64
from difflab.functions_indexing import checked_index
from difflab.functions_joining import movedim
from difflab.functions_math import logaddexp
from difflab.tensor import Tensor
from difflab.tensor_arguments import (
    dim_index,
    integer,
    refuse_symbols,
    tensor_of,
    tensor_or_interpreted,
)

__all__ = ["combinations", "logcumsumexp", "nanquantile", "quantile", "renorm",
           "repeat_interleave", "unravel_index"]

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(x: Tensor, q: Any, dim: int | None, keepdim: bool, interpolation: str,
              ignore_nan: bool, name: str) -> Tensor:
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(f"{name}: interpolation must be one of {_INTERPOLATIONS}, "
                         f"got {interpolation!r}")
    qs = tensor_of(q if isinstance(q, Tensor) else np.asarray(q, dtype=np.float64))
    if qs.ndim > 1 or bool(((qs < 0) | (qs > 1)).any()):
        raise ValueError(f"{name}: q must be a number or a 1-D tensor of numbers in [0, 1]")
    refuse_symbols(name, "symbols have no order (which entries are interpolated depends "
                   "on the values)", x)
    if x.dtype.kind != "f":  # (the dtype's kind: a Dual's dtype is NumPy's)
        raise TypeError(f"{name} expects a floating-point input, got {x.dtype}")
    data = x.reshape(-1) if dim is None else movedim(x, dim_index(dim, x.ndim, name), -1)
    if data.shape[-1] == 0:
        raise IndexError(f"{name} of an empty tensor is undefined")
    ordered = F.sort(data, dim=-1).values  # (nan sorts last)
    n = data.shape[-1]
    nan = tensor_of(F.isnan(data))  # (a tensor: a Dual's nan test is a bool array)
    count = (n - nan.sum(-1, keepdim=True)) if ignore_nan else \
        full_like(data[..., :1], n, dtype=int64)
    levels = qs.reshape(-1).to(x.dtype)
    position = (count - 1).clamp(min=0).to(x.dtype) * levels  # (..., Q)
    low, high = position.floor(), position.ceil()
    pick = {"lower": (low, low), "higher": (high, high),
            "nearest": (position.round(), position.round())}.get(interpolation, (low, high))
    below = F.gather(ordered, -1, pick[0].to(int64))
    above = F.gather(ordered, -1, pick[1].to(int64))
    weight = (position - low) if interpolation == "linear" else full_like(position, 0.5)
    out = below if interpolation in ("lower", "higher", "nearest") else \
        below + weight * (above - below)
    missing = (count == 0) if ignore_nan else nan.any(-1, keepdim=True)
    out = F.where(missing, full_like(out, float("nan")), out)
    if keepdim:  # the reduced dimension back, with size 1 (all of them for dim=None)
        out = out.reshape((1,) * x.ndim + out.shape[-1:]) if dim is None else \
            out.unsqueeze(dim_index(dim, x.ndim, name))
    out = movedim(out, -1, 0)  # (Q, ...): the levels first, as PyTorch
    return out[0] if qs.ndim == 0 else out


def quantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,  # noqa: A002
             interpolation: str = "linear") -> Tensor:
    """The ``q``-th quantile(s) along ``dim``: the value ``q`` of the way through the sorted data.

    The position is ``q · (n - 1)``; between its two neighbours the value is
    interpolated (``linear``), or one is taken (``lower``, ``higher``, ``nearest``),
    or their mean (``midpoint``).  A nan in a slice makes its quantile nan.

    Parameters
    ----------
    input : Tensor
        Floating-point values.
    q : float or 1-D Tensor
        Quantile levels in [0, 1].
    dim : int, optional
        The dimension to reduce (all of them, flattened, by default).
    keepdim : bool
        Keep the reduced dimension with size 1.
    interpolation : str
        ``"linear"``, ``"lower"``, ``"higher"``, ``"midpoint"`` or ``"nearest"``.

    Returns
    -------
    Tensor
        For a 1-D ``q``, one leading dimension per level.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.quantile(dl.tensor([1.0, 2.0, 3.0, 4.0]), 0.5).item()
    2.5
    """
    return _quantile(tensor_or_interpreted(input), q, dim, keepdim, interpolation, False,
                     "quantile")


def nanquantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,  # noqa: A002
                interpolation: str = "linear") -> Tensor:
    """:func:`quantile` of the entries that are not nan (nan where all are).

    Parameters
    ----------
    input : Tensor
        Floating-point values.
    q : float or 1-D Tensor
        Quantile levels in [0, 1].
    dim : int, optional
        The dimension to reduce.
    keepdim : bool
        Keep the reduced dimension with size 1.
    interpolation : str
        As :func:`quantile`.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nanquantile(dl.tensor([1.0, float("nan"), 3.0]), 0.5).item()
    2.0
    """
    return _quantile(tensor_or_interpreted(input), q, dim, keepdim, interpolation, True,
                     "nanquantile")


def logcumsumexp(input: Tensor, dim: int) -> Tensor:  # noqa: A002
    """``log(cumsum(exp(x)))`` along ``dim``, without overflow or underflow.

    Each step is ``logaddexp`` of the running value and the next entry, so a
    value far below the others is not lost as ``exp`` underflowing to 0 would.

    Parameters
    ----------
    input : Tensor
        The log-values.
    dim : int
        The dimension to run along.

    Returns
    -------
    Tensor
        Same shape as ``input``.

    Examples
    --------
    >>> import difflab as dl
    >>> [round(v, 4) for v in dl.logcumsumexp(dl.tensor([0.0, 0.0, -1000.0]), 0).tolist()]
    [0.0, 0.6931, 0.6931]
    """
    x = tensor_or_interpreted(input)
    if x.ndim == 0:
        return x.clone()
    dim = dim_index(dim, x.ndim, "logcumsumexp")
    running = x.select(dim, 0)
    steps = [running]
    for k in range(1, x.shape[dim]):
        running = logaddexp(running, x.select(dim, k))
        steps.append(running)
    return F.stack(steps, dim)


def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:  # noqa: A002
    """Each slice along ``dim`` scaled down to p-norm ``maxnorm`` if its norm is larger.

    Parameters
    ----------
    input : Tensor
        The tensor (at least 1-D).
    p : float
        The norm's order.
    dim : int
        The dimension whose slices are measured (``input.select(dim, i)`` each).
    maxnorm : float
        The largest norm a slice keeps.

    Returns
    -------
    Tensor
        The rescaled tensor; the scale is ``maxnorm / (norm + 1e-7)``, as PyTorch's.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.renorm(dl.tensor([[3.0, 4.0], [0.3, 0.4]]), 2, 0, 1.0).tolist()[1]
    [0.30000001192092896, 0.4000000059604645]
    """
    x = tensor_or_interpreted(input)
    if x.ndim < 1:
        raise RuntimeError("renorm needs a tensor with at least 1 dimension")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: maxnorm must be non-negative, got {maxnorm}")
    dim = dim_index(dim, x.ndim, "renorm")
    rows = movedim(x, dim, 0).reshape(x.shape[dim], -1)
    norms = F.norm(rows, p, 1)
    scale = F.where(norms > maxnorm, maxnorm / (norms + 1e-7), F.ones_like(norms))
    view = [1] * x.ndim
    view[dim] = -1
    return x * scale.reshape(view).to(x.dtype)


def repeat_interleave(input: Tensor, repeats: Any = None, dim: int | None = None, *,  # noqa: A002
                      output_size: int | None = None) -> Tensor:
    """Repeat each element (each slice along ``dim``) ``repeats`` times, in place in the order.

    ``repeat_interleave(x, 2)`` turns ``[a, b]`` into ``[a, a, b, b]`` (``repeat``
    and ``tile`` give ``[a, b, a, b]``).  With one argument, a tensor of counts,
    it repeats the indices ``0, 1, ...``.

    Parameters
    ----------
    input : Tensor
        The tensor (flattened when ``dim`` is None).
    repeats : int or Tensor
        One count for all, or one per slice (its values are read: a traced graph
        warns, since the output's length depends on them).
    dim : int, optional
        The dimension to repeat along.
    output_size : int, optional
        The total length, checked when given.

    Returns
    -------
    Tensor

    Raises
    ------
    TypeError
        If ``repeats`` is not an int or a tensor of integers (a float is not rounded).
    RuntimeError
        If a repeat is negative, the repeats do not match the slices, or
        ``output_size`` differs from their total.
    IndexError
        If ``dim`` is out of range.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.repeat_interleave(dl.tensor([1, 2]), 2).tolist()
    [1, 1, 2, 2]
    >>> dl.repeat_interleave(dl.tensor([[1, 2], [3, 4]]), dl.tensor([1, 2]), dim=0).tolist()
    [[1, 2], [3, 4], [3, 4]]
    """
    if repeats is None:  # repeat_interleave(counts): the indices, each count times
        counts = tensor_of(input).reshape(-1)  # (a 0-d count: one index, as in PyTorch)
        return repeat_interleave(arange(counts.shape[0], device=counts.device), counts, 0)
    x = tensor_or_interpreted(input)
    if dim is None:
        x, dim = x.reshape(-1), 0
    dim = dim_index(dim, x.ndim, "repeat_interleave", zero_d_has_dim=False)
    size = x.shape[dim]
    if isinstance(repeats, Tensor) and repeats.dtype.kind not in "iu":  # (1.5: 1 copy)
        raise TypeError(f"repeat_interleave: repeats must be integers, got a {repeats.dtype} "
                        f"tensor; convert it with .long()")
    if isinstance(repeats, Tensor) and repeats.numel() != 1:
        counts = np.asarray(repeats.tolist(), dtype=np.int64).reshape(-1)
        if counts.shape[0] != size:
            raise RuntimeError(f"repeat_interleave: {counts.shape[0]} repeats for a dimension "
                               f"of size {size}; give one per slice or one for all")
    else:
        counts = np.full(size, repeats.item() if isinstance(repeats, Tensor) else
                         integer(repeats, "repeat_interleave", "repeats"))
    if (counts < 0).any():
        raise RuntimeError("repeat_interleave: repeats must be non-negative")
    if output_size is not None and int(counts.sum()) != output_size:
        raise RuntimeError(f"repeat_interleave: output_size {output_size} differs from the "
                           f"total of the repeats, {int(counts.sum())}")
    index = tensor(np.repeat(np.arange(size), counts), device=x.device)
    return F.index_select(x, dim, index)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:  # noqa: A002
    """All length-``r`` combinations of a 1-D tensor's elements, as rows (``itertools``' order).

    Parameters
    ----------
    input : Tensor
        1-D.
    r : int
        The length of each combination.
    with_replacement : bool
        Allow an element more than once.

    Returns
    -------
    Tensor
        Shape ``(number of combinations, r)``; gradients go back to the elements.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.combinations(dl.tensor([1, 2, 3])).tolist()
    [[1, 2], [1, 3], [2, 3]]
    """
    x = tensor_or_interpreted(input)
    if x.ndim != 1:
        raise RuntimeError(f"combinations expects a 1-D tensor, got {x.ndim}-D")
    if r < 0:
        raise RuntimeError(f"combinations: r must be non-negative, got {r}")
    make = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    rows = np.array(list(make(range(x.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    if rows.shape[0] == 0 or r == 0:
        return x[:0].reshape(0) if r == 0 else x.reshape(-1, 1)[:0].expand(0, r)
    return x[tensor(rows, device=x.device)]


def unravel_index(indices: Any, shape: int | Sequence[int]) -> tuple:
    """Flat (row-major) indices as one index tensor per dimension of ``shape``.

    Parameters
    ----------
    indices : Tensor or int
        Flat positions in ``[-N, N)`` for ``N`` elements.
    shape : int or sequence of int
        The shape they index into (an int: one dimension).

    Returns
    -------
    tuple of Tensor
        One int64 tensor per dimension, each of ``indices``' shape.

    Examples
    --------
    >>> import difflab as dl
    >>> [i.tolist() for i in dl.unravel_index(dl.tensor([5, 1]), (2, 3))]
    [[1, 0], [2, 1]]
    """
    flat = tensor_of(indices if isinstance(indices, Tensor) else np.asarray(indices))
    if flat.dtype.kind not in "iu":
        raise TypeError(f"unravel_index expects integer indices, got {flat.dtype}")
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(n) for n in shape)
    total = int(np.prod(shape))
    # (checked by the check_index primitive: a traced graph checks every new index)
    flat = checked_index(flat, max(total, 1), f"unravel_index: index {{value}} is out of "
                         f"range for shape {shape}", low=-total, error="ValueError")
    flat = flat % max(total, 1)
    out = []
    for n in reversed(shape):
        out.append(flat % n)
        flat = flat // n
    return tuple(reversed(out))


# Tensor methods: the functions themselves (attached here: the tensor module does not
# import this one).
_TENSOR_METHODS = {
    "quantile": quantile, "nanquantile": nanquantile, "logcumsumexp": logcumsumexp,
    "renorm": renorm, "repeat_interleave": repeat_interleave,
}
for _name, _function in _TENSOR_METHODS.items():
    setattr(Tensor, _name, _function)
