"""PyTorch's functions without a gradient: comparisons, logic, counting, histograms.

Their results are truth values, counts or integers, which no derivative passes through:
each is a primitive without a derivative (:mod:`difflab.ops.logic`), applied through
``engine.apply`` like every other operation, so a traced function replays it.

They are part of :mod:`difflab.functions` (which re-exports them),
so they are ``difflab.eq``, ``difflab.logical_and``, ``difflab.histc``, ...
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from difflab.autograd.engine import apply
from difflab.ops.registry import PRIMITIVES
from difflab.tensor import Tensor
from difflab.tensor_arguments import tensor_of, write_out


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
    low, high = builtins.float(min), builtins.float(max)
    if low > high:
        raise ValueError(f"histc: min ({min}) must not be larger than max ({max})")
    return write_out(out, apply(PRIMITIVES["histc"], t, bins=bins, low=low, high=high))


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
    op = PRIMITIVES["histogram"]
    hist, edges = (apply(op, t, bins, weight, range=range, density=density, part=part)
                   for part in ("hist", "bin_edges"))
    return HistogramResult((hist, edges))



def equal(input: Tensor, other: Tensor) -> bool:  # noqa: A002
    """True when both have the same shape and the same values.

    Parameters
    ----------
    input, other : Tensor or array_like
        The two to compare.

    Returns
    -------
    bool
        A Python bool (not a tensor), False for different shapes.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.equal(dl.tensor([1.0, 2.0]), dl.tensor([1.0, 2.0])), dl.equal(dl.ones(2), dl.ones(3))
    (True, False)
    """
    return tensor_of(input).equal(tensor_of(other))


def _comparison(name: str) -> Any:
    def compare(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
        return write_out(out, getattr(tensor_of(input), name)(other))

    compare.__name__ = compare.__qualname__ = name
    compare.__doc__ = _no_derivative_docstring(
        compare, "other : Tensor or number\n    Compared with ``input``, broadcast.\n"
        "out : Tensor, optional\n    Written into (and returned).",
        "dl.tensor([1.0, 2.0, 3.0]), 2.0", ([1.0, 2.0, 3.0], 2.0))
    return compare


def _no_derivative_docstring(function: Any, parameters: str, shown_call: str,
                             args: tuple) -> str:
    """The numpydoc docstring of a face of a no-derivative primitive: the summary from
    the registry entry's ``description``, and an example on ``args`` whose printed result
    is NumPy's ufunc of the same name (independent of difflab's face, so the doctest
    checks the face)."""
    name = function.__name__
    op = PRIMITIVES[name]
    numpy_name = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
                  "gt": "greater", "ge": "greater_equal"}.get(name, name)
    expected = getattr(np, numpy_name)(*(np.asarray(a) for a in args))
    return "\n".join([
        f"Elementwise ``{op.description}``, as a bool tensor (no derivative).", "",
        f"``{name}`` is a primitive of the registry with no derivative: its result never",
        "requires grad, and forward mode gives it a zero tangent.", "",
        "Parameters", "----------", "input : Tensor or number", "    The first operand.",
        parameters, "", "Returns", "-------", "Tensor of bool",
        "    The broadcast shape of the operands.", "", "Examples", "--------",
        ">>> import difflab as dl", f">>> dl.{name}({shown_call})", repr(Tensor(expected))])


eq, ne, lt, le, gt, ge = (_comparison(n) for n in ("eq", "ne", "lt", "le", "gt", "ge"))
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def isfinite(input: Tensor) -> Tensor:  # noqa: A002
    """Where the elements are neither inf nor nan.

    Parameters
    ----------
    input : Tensor or array_like
        The values.

    Returns
    -------
    Tensor of bool

    Examples
    --------
    >>> import difflab as dl
    >>> dl.isfinite(dl.tensor([1.0, float("inf"), float("nan")]))
    tensor([ True, False, False])
    """
    return tensor_of(input).isfinite()


def isinf(input: Tensor) -> Tensor:  # noqa: A002
    """Where the elements are +inf or -inf.

    Parameters
    ----------
    input : Tensor or array_like
        The values.

    Returns
    -------
    Tensor of bool

    Examples
    --------
    >>> import difflab as dl
    >>> dl.isinf(dl.tensor([1.0, float("inf"), float("nan")]))
    tensor([False,  True, False])
    """
    return tensor_of(input).isinf()


def floor_divide(input: Any, other: Any) -> Tensor:  # noqa: A002
    """⌊input / other⌋ (no gradient), in the common dtype.

    Parameters
    ----------
    input : Tensor or array_like
        The dividend.
    other : Tensor or number
        The divisor.

    Returns
    -------
    Tensor
        Rounded towards minus infinity, as Python's ``//``; no gradient.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.floor_divide(dl.tensor([7.0, -7.0]), 2)
    tensor([ 3., -4.])
    """
    return tensor_of(input) // other


def remainder(input: Any, other: Any) -> Tensor:  # noqa: A002
    """input - ⌊input / other⌋ · other, the sign of ``other`` (as Python's %).

    Parameters
    ----------
    input : Tensor or array_like
        The dividend.
    other : Tensor or number
        The divisor.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import difflab as dl
    >>> dl.remainder(dl.tensor([7.0, -7.0]), 3)
    tensor([1., 2.])
    """
    return tensor_of(input) % other


def _logical(name: str) -> Any:
    def logical(input: Any, other: Any) -> Tensor:  # noqa: A002
        return apply(PRIMITIVES[name], tensor_of(input), tensor_of(other))

    logical.__name__ = logical.__qualname__ = name
    logical.__doc__ = None
    return logical


logical_and = _logical("logical_and")
logical_or = _logical("logical_or")
logical_xor = _logical("logical_xor")
for _function in (logical_and, logical_or, logical_xor):
    _function.__doc__ = _no_derivative_docstring(
        _function, "other : Tensor or bool\n    The second operand.",
        "dl.tensor([True, False, True]), dl.tensor([True, True, False])",
        ([True, False, True], [True, True, False]))


def logical_not(input: Any) -> Tensor:  # noqa: A002
    """Elementwise not of the truth values (a bool tensor).

    Parameters
    ----------
    input : Tensor or array_like
        The values.

    Returns
    -------
    Tensor of bool

    Examples
    --------
    >>> import difflab as dl
    >>> dl.logical_not(dl.tensor([True, False]))
    tensor([False,  True])
    """
    return apply(PRIMITIVES["logical_not"], tensor_of(input))


def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:  # noqa: A002
    """How many elements (over ``dim``) are not zero."""
    return apply(PRIMITIVES["count_nonzero"], tensor_of(input), axis=dim)


def is_nonzero(input: Tensor) -> bool:  # noqa: A002
    """Whether a one-element tensor is not zero (an error for more elements)."""
    t = tensor_of(input)
    if t.numel() != 1:
        raise RuntimeError(
            f"Boolean value of Tensor with {t.numel()} elements is ambiguous: is_nonzero "
            f"needs exactly one element"
        )
    return bool(t.item() != 0)
