"""PyTorch's functions without a gradient: comparisons, logic, counting, histograms.

Their results are truth values, counts or integers, which no derivative passes through
(``no_grad_result``).  They are part of :mod:`difflab.functions` (which re-exports them),
so they are ``difflab.eq``, ``difflab.logical_and``, ``difflab.histc``, ...
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from difflab import backend
from difflab.tensor import Tensor
from difflab.tensor_arguments import no_grad_result, tensor_of, unwrap, write_out


def all(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001, A002
    """Whether every element (along ``dim``) is true (non-zero)."""
    return tensor_of(input).all(dim, keepdim)


def any(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001, A002
    """Whether some element (along ``dim``) is true (non-zero)."""
    return tensor_of(input).any(dim, keepdim)


def isclose(input: Any, other: Any, rtol: float = 1e-5, atol: float = 1e-8,  # noqa: A002
            equal_nan: bool = False) -> Tensor:
    """Where |input - other| ≤ atol + rtol·|other|, elementwise (a bool tensor)."""
    return tensor_of(input).isclose(other, rtol, atol, equal_nan)


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0,  # noqa: A001, A002
          *, out: Tensor | None = None) -> Tensor:
    """Counts of the elements in ``bins`` equal bins over [min, max] (elements outside are
    left out); when min = max, the data's own smallest and largest values.  No gradient."""
    t = tensor_of(input)
    if t.dtype.kind not in "f":
        raise RuntimeError(f"histc: input must be a floating tensor, got {t.dtype}")
    if not isinstance(bins, int) or bins <= 0:
        raise ValueError(f"histc: bins must be a positive integer, got {bins!r}")
    values = backend.to_numpy(t.detach().array).ravel()
    low, high = builtins.float(min), builtins.float(max)
    if low > high:
        raise ValueError(f"histc: min ({min}) must not be larger than max ({max})")
    if low == high:
        low, high = ((builtins.float(values.min()), builtins.float(values.max()))
                     if values.size else (0.0, 0.0))
    if low == high:
        low, high = low - 1, high + 1  # (all values equal: one unit either side, as PyTorch)
    counts, _ = np.histogram(values, bins=bins, range=(low, high))
    result = Tensor._wrap(backend.to_device(counts.astype(t.array.dtype), t.device))
    return write_out(out, result)


class HistogramResult(tuple):
    """(hist, bin_edges), readable by name as in PyTorch."""

    @property
    def hist(self) -> Tensor:
        return self[0]

    @property
    def bin_edges(self) -> Tensor:
        return self[1]


def histogram(input: Tensor, bins: Any = 100, *, range: Any = None,  # noqa: A002
              weight: Tensor | None = None, density: bool = False) -> HistogramResult:
    """(hist, bin_edges): counts (or weight sums, or a density) in ``bins`` bins.

    ``bins`` is a number of equal bins over ``range`` (the data's range by
    default) or a 1-D tensor of increasing edges.  No gradient.
    """
    t = tensor_of(input)
    if t.dtype.kind not in "f":
        raise RuntimeError(f"histogram: input must be a floating tensor, got {t.dtype}")
    values = backend.to_numpy(t.detach().array).ravel()
    edges = backend.to_numpy(unwrap(bins)) if isinstance(bins, Tensor) else bins
    weights = None if weight is None else backend.to_numpy(unwrap(weight)).ravel()
    hist, edges = np.histogram(values, bins=edges, range=range, weights=weights,
                               density=density)
    dtype = t.array.dtype
    return HistogramResult((Tensor._wrap(hist.astype(dtype)), Tensor._wrap(edges.astype(dtype))))



def equal(input: Tensor, other: Tensor) -> bool:  # noqa: A002
    """True when both have the same shape and the same values."""
    return tensor_of(input).equal(tensor_of(other))


def _comparison(name: str) -> Any:
    def compare(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
        return write_out(out, getattr(tensor_of(input), name)(other))

    compare.__name__ = compare.__qualname__ = name
    compare.__doc__ = f"Elementwise ``input {name} other`` (a bool tensor, no gradient)."
    return compare


eq, ne, lt, le, gt, ge = (_comparison(n) for n in ("eq", "ne", "lt", "le", "gt", "ge"))
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def isfinite(input: Tensor) -> Tensor:  # noqa: A002
    """Where the elements are neither inf nor nan."""
    return tensor_of(input).isfinite()


def isinf(input: Tensor) -> Tensor:  # noqa: A002
    """Where the elements are +inf or -inf."""
    t = tensor_of(input)
    return no_grad_result(backend.array_module(t.array).isinf(t.array))


def floor_divide(input: Any, other: Any) -> Tensor:  # noqa: A002
    """⌊input / other⌋ (no gradient), in the common dtype."""
    return tensor_of(input) // other


def remainder(input: Any, other: Any) -> Tensor:  # noqa: A002
    """input - ⌊input / other⌋ · other, the sign of ``other`` (as Python's %)."""
    return tensor_of(input) % other


def _logical(name: str, op: Any) -> Any:
    def logical(input: Any, other: Any) -> Tensor:  # noqa: A002
        a, b = (unwrap(tensor_of(t)) for t in (input, other))
        return no_grad_result(op(a.astype(bool), b.astype(bool)))

    logical.__name__ = logical.__qualname__ = name
    logical.__doc__ = f"Elementwise {name.split('_')[1]} of the truth values (a bool tensor)."
    return logical


logical_and = _logical("logical_and", lambda a, b: a & b)
logical_or = _logical("logical_or", lambda a, b: a | b)
logical_xor = _logical("logical_xor", lambda a, b: a ^ b)


def logical_not(input: Any) -> Tensor:  # noqa: A002
    """Elementwise not of the truth values (a bool tensor)."""
    return no_grad_result(~unwrap(tensor_of(input)).astype(bool))


def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:  # noqa: A002
    """How many elements (over ``dim``) are not zero."""
    t = tensor_of(input)
    xp = backend.array_module(t.array)
    return no_grad_result(xp.count_nonzero(t.array, axis=dim).astype(np.int64))


def is_nonzero(input: Tensor) -> bool:  # noqa: A002
    """Whether a one-element tensor is not zero (an error for more elements)."""
    t = tensor_of(input)
    if t.numel() != 1:
        raise RuntimeError(
            f"Boolean value of Tensor with {t.numel()} elements is ambiguous: is_nonzero "
            f"needs exactly one element"
        )
    return bool(t.item() != 0)
