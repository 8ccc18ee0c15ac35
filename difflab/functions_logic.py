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
from difflab.tensor_arguments import (
    interpreted,
    method_or_primitive,
    reduction_dims,
    tensor_of,
    tensor_or_interpreted,
    values_of,
    write_out,
)


def all(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001, A002
    """Whether every element of ``input`` (along ``dim``) is true, i.e. not zero.

    Parameters
    ----------
    input : Tensor, array or list
        The values: booleans, or numbers (true where not zero).
    dim : int or tuple of int, optional
        The dimensions to reduce; default: all of them (an empty ``[]`` or ``()``
        reduces none, as in PyTorch: each element's truth value).
    keepdim : bool, default False
        Keep the reduced dimensions with size 1.

    Returns
    -------
    Tensor of bool
        0-d for ``dim=None``; else ``input``'s shape without ``dim``.  An empty
        reduction is True.  No gradient.

    Raises
    ------
    ValueError
        If ``dim`` is out of range (PyTorch's "Dimension out of range").

    See Also
    --------
    difflab.any : whether some element is true.
    difflab.allclose : whether all are close.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([[True, False], [True, True]])
    >>> dl.all(x), dl.all(x, dim=1)
    (tensor(False), tensor([False,  True]))
    >>> dl.all(dl.tensor([1.0, 0.5])), bool(dl.all(dl.zeros(0)))
    (tensor(True), True)
    """
    x = tensor_or_interpreted(input)
    if not isinstance(x, Tensor):  # a Dual or a sympy expression: its handler's (And)
        return apply(PRIMITIVES["all"], x, axis=dim, keepdims=keepdim)
    return x.all(dim, keepdim)


def any(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001, A002
    """Whether some element of ``input`` (along ``dim``) is true, i.e. not zero.

    Parameters
    ----------
    input : Tensor, array or list
        The values: booleans, or numbers (true where not zero).
    dim : int or tuple of int, optional
        The dimensions to reduce; default: all of them (an empty ``[]`` or ``()``
        reduces none, as in PyTorch: each element's truth value).
    keepdim : bool, default False
        Keep the reduced dimensions with size 1.

    Returns
    -------
    Tensor of bool
        0-d for ``dim=None``; else ``input``'s shape without ``dim``.  An empty
        reduction is False.  No gradient.

    Raises
    ------
    ValueError
        If ``dim`` is out of range (PyTorch's "Dimension out of range").

    See Also
    --------
    difflab.all : whether every element is true.
    difflab.count_nonzero : how many are.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([[True, False], [False, False]])
    >>> dl.any(x), dl.any(x, 0, keepdim=True)
    (tensor(True), tensor([[ True, False]]))
    >>> dl.any(dl.zeros(3))
    tensor(False)
    """
    x = tensor_or_interpreted(input)
    if not isinstance(x, Tensor):  # a Dual or a sympy expression: its handler's (Or)
        return apply(PRIMITIVES["any"], x, axis=dim, keepdims=keepdim)
    return x.any(dim, keepdim)


def isclose(input: Any, other: Any, rtol: float = 1e-5, atol: float = 1e-8,  # noqa: A002
            equal_nan: bool = False) -> Tensor:
    r"""Where ``input`` and ``other`` are equal within tolerances, elementwise (a bool tensor).

    True where :math:`|\text{input} - \text{other}| \le \text{atol} + \text{rtol} \cdot
    |\text{other}|` (the two broadcast together).  Infinities are close only to the
    same infinity; NaN is close to nothing unless ``equal_nan``.

    Parameters
    ----------
    input : Tensor, array or list
        The values tested.
    other : Tensor, array or number
        The reference values.
    rtol : float, default 1e-05
        The tolerance relative to ``|other|``.
    atol : float, default 1e-08
        The absolute tolerance.
    equal_nan : bool, default False
        Count two NaNs in the same place as close.

    Returns
    -------
    Tensor of bool
        The broadcast shape.  No gradient (tensors that require grad are compared by
        value).

    Raises
    ------
    ValueError
        If the shapes do not broadcast.

    See Also
    --------
    difflab.allclose : whether all of them are close (a Python bool).
    difflab.eq : exact equality.

    Examples
    --------
    >>> import difflab as dl
    >>> nan = float("nan")
    >>> dl.isclose(dl.tensor([1.0, 2.0, nan]), dl.tensor([1.0 + 1e-7, 2.1, nan]))
    tensor([ True, False, False])
    >>> dl.isclose(dl.tensor([1.0, 2.0, nan]), dl.tensor([1.0, 2.1, nan]), atol=0.2, equal_nan=True)
    tensor([True, True, True])
    """
    if interpreted(input, other):  # a Dual or a sympy expression: its handler's
        return apply(PRIMITIVES["isclose"], input, other, rtol=rtol, atol=atol,
                     equal_nan=equal_nan)
    return tensor_of(input).isclose(other, rtol, atol, equal_nan)


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0,  # noqa: A001, A002
          *, out: Tensor | None = None) -> Tensor:
    """A histogram: counts of the elements of ``input`` in ``bins`` equal bins over [min, max].

    The bins split [min, max] into ``bins`` equal intervals, each closed on the left,
    the last also on the right; elements outside [min, max] are left out.  When
    min = max (the default 0, 0), the data's own smallest and largest values are used.

    Parameters
    ----------
    input : Tensor
        The values (floating point), of any shape (flattened).
    bins : int, default 100
        The number of bins.
    min, max : float, default 0
        The range covered.
    out : Tensor, optional, keyword-only
        Written into (and returned).

    Returns
    -------
    Tensor, shape (bins,)
        The counts, in ``input``'s dtype.  No gradient (counts are piecewise constant).

    Raises
    ------
    RuntimeError
        If ``input`` is not floating point.
    ValueError
        If ``bins`` is not a positive int, or min > max.

    See Also
    --------
    difflab.histogram : with the bin edges, weights, a density or edges of your own.
    difflab.bincount : counts of non-negative integers.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([1.0, 2.0, 1.0, 4.0])
    >>> dl.histc(x, bins=4, min=0, max=4)
    tensor([0., 2., 1., 1.])
    >>> dl.histc(x, bins=3)                  # over [1, 4], the data's range
    tensor([2., 1., 1.])
    >>> x.histc(bins=2, min=0, max=2)        # 4.0 is outside: left out
    tensor([0., 3.])
    """
    t = values_of(input, "histc")  # (a Dual's values: the counts have no derivative)
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
    """A histogram of ``input``: (hist, bin_edges), counts (or weight sums, or a density) per bin.

    Parameters
    ----------
    input : Tensor
        The values (floating point), of any shape (flattened).
    bins : int or Tensor, default 100
        A number of equal bins over ``range``, or a 1-D tensor of increasing edges.
    range : (float, float), optional, keyword-only
        The range of equal bins; default: the data's smallest and largest values.
    weight : Tensor, optional, keyword-only
        ``input``'s shape: each element adds its weight instead of 1.
    density : bool, default False, keyword-only
        Divide by the total and the bin widths, so the histogram integrates to 1.

    Returns
    -------
    HistogramResult
        A pair ``(hist, bin_edges)``, readable as ``.hist`` and ``.bin_edges``: hist of
        shape (nbins,), bin_edges of shape (nbins + 1,).  The bins are closed on the left,
        the last also on the right.  No gradient.

    Raises
    ------
    RuntimeError
        If ``input`` is not floating point.
    ValueError
        If ``bins`` is not positive, or its edges do not increase.

    See Also
    --------
    difflab.histc : the counts only, over [min, max].

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([1.0, 2.0, 1.0, 4.0])
    >>> result = dl.histogram(x, bins=3)
    >>> result.hist, result.bin_edges
    (tensor([2., 1., 1.]), tensor([1., 2., 3., 4.]))
    >>> dl.histogram(x, bins=dl.tensor([0.0, 2.0, 5.0])).hist
    tensor([2., 2.])
    >>> dl.histogram(x, bins=2, range=(0.0, 4.0), density=True).hist
    tensor([0.25, 0.25])
    """
    t = values_of(input, "histogram")  # (a Dual's values, as histc's)
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
        if interpreted(input, other):  # a Dual or a sympy expression: its handler's
            return write_out(out, apply(PRIMITIVES[name], input, other))
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
        "Parameters", "----------", "input : Tensor, number, Dual or sympy expression",
        "    The first operand (a sympy expression gives sympy's relation or logic).",
        parameters, "", "Returns", "-------", "Tensor of bool",
        "    The broadcast shape of the operands.", "", "Examples", "--------",
        ">>> import difflab as dl", f">>> dl.{name}({shown_call})", repr(Tensor(expected))])


eq, ne, lt, le, gt, ge = (_comparison(n) for n in ("eq", "ne", "lt", "le", "gt", "ge"))
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def isfinite(input: Tensor) -> Tensor:  # noqa: A002
    """Where the elements are neither inf nor nan.

    Parameters
    ----------
    input : Tensor, array_like, Dual or sympy expression
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
    return method_or_primitive(input, "isfinite")


def isinf(input: Tensor) -> Tensor:  # noqa: A002
    """Where the elements are +inf or -inf.

    Parameters
    ----------
    input : Tensor, array_like, Dual or sympy expression
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
    return method_or_primitive(input, "isinf")


def floor_divide(input: Any, other: Any) -> Tensor:  # noqa: A002
    """⌊input / other⌋ (no gradient), in the common dtype.

    Parameters
    ----------
    input : Tensor, array_like, Dual or sympy expression
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
    if interpreted(input, other):  # a Dual or a sympy expression: its handler's
        return apply(PRIMITIVES["floor_divide"], input, other)
    return tensor_of(input) // other


def _logical(name: str) -> Any:
    def logical(input: Any, other: Any) -> Tensor:  # noqa: A002
        return apply(PRIMITIVES[name], tensor_or_interpreted(input), tensor_or_interpreted(other))

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
    return apply(PRIMITIVES["logical_not"], tensor_or_interpreted(input))


def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:  # noqa: A002
    """How many elements of ``input`` (over ``dim``) are not zero.

    Parameters
    ----------
    input : Tensor, array or list
        The values (False counts as zero).
    dim : int or tuple of int, optional
        The dimensions to count over; default: all of them (an empty ``[]`` or
        ``()`` also means all, as in PyTorch).

    Returns
    -------
    Tensor of int64
        0-d for ``dim=None``; else ``input``'s shape without ``dim``.  No gradient.

    Raises
    ------
    ValueError
        If ``dim`` is out of range (PyTorch's "Dimension out of range").

    See Also
    --------
    difflab.any : whether there is one.
    difflab.nonzero : where they are.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([[0.0, 1.0], [2.0, 3.0]])
    >>> dl.count_nonzero(x), dl.count_nonzero(x, dim=0)
    (tensor(3), tensor([1, 2]))
    >>> x.count_nonzero(1)
    tensor([1, 2])
    """
    return apply(PRIMITIVES["count_nonzero"], tensor_or_interpreted(input),
                 axis=reduction_dims(dim))


def is_nonzero(input: Tensor) -> bool:  # noqa: A002
    """Whether a one-element tensor is not zero, as a Python bool.

    Parameters
    ----------
    input : Tensor, array or list
        Exactly one element (of any shape: ``tensor(0.5)``, ``tensor([0.5])``).

    Returns
    -------
    bool
        ``input.item() != 0``.

    Raises
    ------
    RuntimeError
        If ``input`` has no element or more than one (its truth value is ambiguous:
        use :func:`difflab.any` or :func:`difflab.all`).

    See Also
    --------
    difflab.count_nonzero : how many elements are not zero.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.is_nonzero(dl.tensor([0.5])), dl.is_nonzero(dl.tensor(0.0))
    (True, False)
    >>> dl.is_nonzero(dl.ones(2))
    Traceback (most recent call last):
        ...
    RuntimeError: Boolean value of Tensor with 2 elements is ambiguous: ...needs exactly one element
    """
    t = tensor_of(input)
    if t.numel() != 1:
        raise RuntimeError(
            f"Boolean value of Tensor with {t.numel()} elements is ambiguous: is_nonzero "
            f"needs exactly one element"
        )
    return bool(t.item() != 0)
