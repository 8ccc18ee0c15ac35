r"""Reductions: sums, means, products, running sums, maxima and minima over axes.

Each follows the protocol of :mod:`difflab.ops.structural` (forward, VJP and JVP
side by side; tangents stacked on a leading axis, so axes are counted from the
end).  A reduction's VJP broadcasts the adjoint back over the reduced axes (the
transpose of summing); a product or an extremum weights it by the derivative of
the reduced value with respect to each element.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from difflab import backend
from difflab.ops.primitive import Primitive
from difflab.ops.shapes import copied, dim_index, dim_indices, mean_scale, reduction_dims


def _from_end(axes: tuple | None, ndim: int) -> tuple:
    """Axes of an ``ndim``-axis array counted from the end (all of them for ``None``)."""
    return tuple(range(-ndim, 0)) if axes is None else tuple(a - ndim for a in axes)


def _normalize_axis(axis: Any, ndim: int) -> tuple | None:
    """A reduction's ``axis`` (None, an int or a tuple of ints) as sorted non-negative
    axes, checked by :func:`difflab.ops.shapes.dim_indices` (type, range, repeats; the
    engine names the reduction in the error)."""
    if axis is None:
        return None
    axes = dim_indices(axis, ndim, "")
    return tuple(sorted(axes)) if ndim else ()


def _keep_reduced_axes(g: Any, axes: tuple | None, ndim: int) -> Any:
    """Reinsert the summed-away axes (size 1) so ``g`` broadcasts against the input."""
    if axes is None:
        return g.reshape((1,) * ndim)
    shape = list(g.shape)
    for a in axes:
        shape.insert(a, 1)
    return g.reshape(tuple(shape))


class Sum(Primitive):
    """y = Σ x over ``axis``.

    JVP: ẏ = Σ ẋ (the same sum).  VJP: x̄ = broadcast(ȳ) back to x's shape,
    since every element of x contributed with weight 1.
    """

    name = "sum"
    fusion = "reduction"

    @staticmethod
    def forward(ctx, xp, x, axis=None, keepdims=False):
        ctx.axes = _normalize_axis(axis, x.ndim)
        ctx.keepdims, ctx.in_shape = keepdims, x.shape
        return xp.sum(x, axis=ctx.axes, keepdims=keepdims)

    @staticmethod
    def vjp(ctx, xp, g):
        if not ctx.keepdims:
            g = _keep_reduced_axes(g, ctx.axes, len(ctx.in_shape))
        return (xp.broadcast_to(g, ctx.in_shape),)

    @staticmethod
    def jvp(ctx, xp, dx):
        return xp.sum(dx, axis=_from_end(ctx.axes, len(ctx.in_shape)), keepdims=ctx.keepdims)


class Mean(Primitive):
    """y = (1/n) Σ x over ``axis``, n the number of elements each output combines.

    JVP: ẏ = (1/n) Σ ẋ (the same mean).  VJP: x̄ = broadcast(ȳ) / n, since every
    element of x contributed with weight 1/n.  (A primitive of its own rather
    than a sum times 1/n, so that the tape names it: ``MeanBackward0``.)
    """

    name = "mean"
    fusion = "reduction"

    @staticmethod
    def forward(ctx, xp, x, axis=None, keepdims=False):
        ctx.axes = _normalize_axis(axis, x.ndim)
        ctx.keepdims, ctx.in_shape = keepdims, x.shape
        count = 1
        for a in range(x.ndim) if ctx.axes is None else ctx.axes:
            count *= x.shape[a]
        ctx.scale = mean_scale(count)
        return xp.sum(x, axis=ctx.axes, keepdims=keepdims) * ctx.scale

    @staticmethod
    def vjp(ctx, xp, g):
        if not ctx.keepdims:
            g = _keep_reduced_axes(g, ctx.axes, len(ctx.in_shape))
        return (xp.broadcast_to(g * ctx.scale, ctx.in_shape),)

    @staticmethod
    def jvp(ctx, xp, dx):
        axes = _from_end(ctx.axes, len(ctx.in_shape))
        return xp.sum(dx, axis=axes, keepdims=ctx.keepdims) * ctx.scale


class Prod(Primitive):
    """y = Π x over ``axis`` (one axis, or all of them for None).

    ∂y/∂xᵢ = Π_{j≠i} xⱼ, the product of all the others: never y / xᵢ, which
    divides by zero where some xⱼ = 0.  On arrays it is (product of those
    before i) · (product of those after i), two cumulative products.  When the
    backward pass is itself recorded (``create_graph=True``) or runs on dual
    numbers, it is the product of a matrix whose row i is x with xᵢ replaced
    by 1, made of ``where`` and ``prod`` itself, so the tape (and nested
    forward mode) differentiate it again, at zeros too.

    JVP: ẏ = Σᵢ ẋᵢ Π_{j≠i} xⱼ.  VJP: x̄ᵢ = ȳ Π_{j≠i} xⱼ.
    """

    name = "prod"
    tensor_method = dl_function = "prod"
    description = "the product of the elements over a dimension"
    doc = """
        Parameters
        ----------
        input : Tensor, array or sequence
            The values.
        dim : int, optional
            The dimension to multiply along; default: all of them.
        keepdim : bool, default False
            Keep the reduced dimension with size 1.
        dtype : dtype, optional
            Cast the input to it first.

        Returns
        -------
        Tensor or array
            The products (a scalar for ``dim=None``).

        See Also
        --------
        cumprod : the running product.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        >>> y = dl.prod(x, 1)
        >>> y
        tensor([ 2., 12.], grad_fn=<...>)
        >>> y.sum().backward()
        >>> x.grad                  # the product of the others
        tensor([[2., 1.],
                [4., 3.]])
    """
  # x.prod(dim), dl.prod(x, dim), np.prod(dual, axis)
    numpy_function = np.prod
    math = "∂(Π x)/∂xᵢ = Π_{j≠i} xⱼ"

    @staticmethod
    def arguments(input, dim=None, keepdim=False, *, axis=None, keepdims=None, dtype=None):  # noqa: A002
        """``prod(input, dim=None, keepdim=False)``: Π over ``dim`` (one dimension; all of
        them by default).  NumPy's ``axis=``/``keepdims=`` are accepted too, and ``dtype``
        casts the input first (PyTorch's)."""
        asked = axis if dim is None else dim  # (dim=[] too: PyTorch's prod takes one int)
        if asked is not None and not isinstance(asked, (int, np.integer)):
            raise TypeError(f"prod: dim must be one int (or None for all), got {asked!r}")
        (input,), params = _reduction_arguments(input, dim, keepdim, axis=axis, keepdims=keepdims)
        if dtype is not None:
            input = input.astype(dtype) if hasattr(input, "astype") else input.to(dtype)  # noqa: A001
        return (input,), params

    @staticmethod
    def numpy_arguments(a, axis=None, dtype=None, out=None, keepdims=False, **_):
        """``np.prod(a, axis, dtype, out, keepdims)`` (``out`` is refused: duals are immutable)."""
        if out is not None:
            raise TypeError("np.prod(out=) is not supported on dual numbers")
        return Prod.arguments(a, axis, keepdims)

    @staticmethod
    def forward(ctx, xp, x, axis=None, keepdims=False):
        if axis is not None:
            _normalize_axis(axis, x.ndim)  # (PyTorch's IndexError for a dim out of range)
        ctx.axis, ctx.keepdims = axis, keepdims
        ctx.save(x)
        return xp.prod(x, axis=axis, keepdims=keepdims)

    @staticmethod
    def others(xp, x, axis):
        """Π_{j≠i} xⱼ for every i along ``axis`` (all elements for None), shaped as x."""
        along = -1 if axis is None else axis
        flat = x.reshape(-1) if axis is None else x
        if isinstance(x, np.ndarray) or backend.is_gpu_array(x):  # plain arrays
            moved = xp.moveaxis(flat, along, -1)
            ones = xp.ones(moved.shape[:-1] + (1,), dtype=x.dtype)
            before = xp.cumprod(xp.concatenate([ones, moved[..., :-1]], axis=-1), axis=-1)
            after = xp.cumprod(xp.concatenate([ones, moved[..., :0:-1]], axis=-1),
                               axis=-1)[..., ::-1]
            return xp.moveaxis(before * after, -1, along).reshape(x.shape)
        # recorded (tensors), or dual numbers: row i of an n × n matrix is x with xᵢ
        # replaced by 1, whose product every interpreter differentiates again
        moved = xp.swapaxes(flat, along, -1)
        n = moved.shape[-1]
        rows = xp.where(np.eye(n, dtype=bool), 1.0, xp.expand_dims(moved, -2))
        return xp.swapaxes(xp.prod(rows, axis=-1), -1, along).reshape(x.shape)

    @staticmethod
    def vjp(ctx, xp, g, x):
        others = Prod.others(xp, x, ctx.axis)
        if ctx.axis is None:
            g = g.reshape((1,) * x.ndim)
        elif not ctx.keepdims:
            g = xp.expand_dims(g, ctx.axis)
        return (g * others,)

    @staticmethod
    def jvp(ctx, xp, dx, x):
        # ẏ = Σᵢ ẋᵢ · Π_{j≠i} xⱼ
        axes = None if ctx.axis is None else (ctx.axis % x.ndim,)
        terms = dx * Prod.others(xp, x, ctx.axis)
        return xp.sum(terms, axis=_from_end(axes, x.ndim), keepdims=ctx.keepdims)


class CumSum(Primitive):
    """y_i = Σ_{j ≤ i} x_j along ``axis``.

    JVP: the same cumulative sum of ẋ.  VJP (its transpose): x̄_j = Σ_{i ≥ j} ȳ_i,
    a cumulative sum from the other end.
    """

    name = "cumsum"
    tensor_method = dl_function = "cumsum"  # its faces: x.cumsum(dim), dl.cumsum(x, dim),
    numpy_function = np.cumsum  # and np.cumsum(dual, axis) in forward mode

    description = "the running sum along a dimension"
    doc = """
        Parameters
        ----------
        input : Tensor, array or sequence
            The values.
        dim : int, optional
            The dimension to sum along (NumPy's ``axis=`` too); neither: the flattened
            input.

        Returns
        -------
        Tensor or array
            Of ``input``'s shape: y_i = Σ_{j ≤ i} x_j.

        See Also
        --------
        cumprod : the running product.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.cumsum(dl.tensor([1.0, 2.0, 3.0]), 0)
        tensor([1., 3., 6.])
    """

    @staticmethod
    def arguments(input, dim=None, *, axis=None):  # noqa: A002
        """``cumsum(input, dim)`` (NumPy's ``axis=`` too; neither: over the flattened input)."""
        dim = axis if dim is None else dim
        if dim is None:
            return (input.reshape(-1),), {"axis": 0}
        return (input,), {"axis": dim_index(dim, len(input.shape), "cumsum")}

    @staticmethod
    def numpy_arguments(a, axis=None, dtype=None, out=None):
        """``np.cumsum(a, axis)``."""
        return CumSum.arguments(a, axis)

    @staticmethod
    def forward(ctx, xp, x, axis):
        ctx.axis, ctx.ndim = axis, x.ndim
        if x.ndim == 0:  # (one element, its own running sum; NumPy's would be 1-D)
            return copied(x)
        return xp.cumsum(x, axis=axis)

    @staticmethod
    def vjp(ctx, xp, g):
        if ctx.ndim == 0:
            return (g,)
        return (xp.flip(xp.cumsum(xp.flip(g, ctx.axis), axis=ctx.axis), ctx.axis),)

    @staticmethod
    def jvp(ctx, xp, dx):
        if ctx.ndim == 0:
            return dx
        return xp.cumsum(dx, axis=ctx.axis % ctx.ndim - ctx.ndim)


def _largest(x: Any, axis: Any = None, keepdims: bool = False, smallest: bool = False) -> Any:
    """max (or min) of ``x`` over ``axis``: ``x.max(axis=)`` of an array or a dual number,
    ``x.amax(dim)`` of a tensor (reverse over forward: a dual number's values)."""
    if hasattr(x, "amax"):  # (axis=, NumPy's meaning: () reduces over no axis)
        return (x.amin if smallest else x.amax)(axis=axis, keepdims=keepdims)
    if isinstance(x, np.ndarray) and x.size == 0:  # (softmax's shift of no values: ±inf)
        reduce = np.min if smallest else np.max
        return reduce(x, axis=axis, keepdims=keepdims, initial=np.inf if smallest else -np.inf)
    return x.min(axis=axis, keepdims=keepdims) if smallest else x.max(axis=axis, keepdims=keepdims)


def _check_not_empty(name: str, x: Any, axes: tuple | None) -> None:
    """The largest of no values is undefined: a ValueError naming the empty dimension
    (NumPy's said "zero-size array to reduction operation maximum which has no
    identity"; PyTorch refuses it too)."""
    shape = tuple(x.shape)
    empty = [a for a in (range(len(shape)) if axes is None else axes) if shape[a] == 0]
    if empty:
        raise ValueError(
            f"{name}: the {'smallest' if name == 'min' else 'largest'} of no values is "
            f"undefined: dimension {empty[0]} of the input (shape {shape}) is empty; reduce "
            f"over dimensions of nonzero size (with dim=...), or check the input")


def _reduction_arguments(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A002
    """PyTorch's ``(input, dim, keepdim)`` or NumPy's ``axis=``/``keepdims=``, as the
    (inputs, params) of a reduction primitive."""
    if dim is None:  # (NumPy's axis=: () reduces over no axis)
        dim = tuple(axis) if isinstance(axis, list) else axis
    else:  # (PyTorch's dim: [] is every dimension)
        dim = reduction_dims(dim)
    keepdim = keepdims if keepdims is not None else keepdim
    return (input,), {"axis": dim, "keepdims": bool(keepdim)}


class MaxReduce(Primitive):
    """y = max x over ``axis`` (:class:`MinReduce` is the same rule for the minimum).

    The derivative picks the arg-max: x̄ᵢ = ȳ where xᵢ is the maximum, 0 elsewhere;
    equal maxima share ȳ evenly (as ``maximum`` does), and so do the nan entries when
    the maximum is nan (PyTorch's rule).  The share is piecewise
    constant in x, a constant of the graph: the rule is differentiated again as it is.
    """

    name = "max"
    tensor_method = dl_function = "amax"  # x.amax(dim), dl.amax(x, dim); max(dim) adds indices
    math = "∂(max x)/∂xᵢ = 1 at the maximum (shared on ties), 0 elsewhere"
    smallest = False

    description = "the largest values over dimensions"
    doc = """
        Parameters
        ----------
        input : Tensor, array or sequence
            The values.
        dim : int or tuple of int, optional
            The dimensions to reduce; default: all (an empty ``[]`` or ``()``
            also means all, as in PyTorch).
        keepdim : bool, default False
            Keep the reduced dimensions with size 1.

        Returns
        -------
        Tensor or array
            The maxima.

        Raises
        ------
        ValueError
            If a reduced dimension is empty (there is no value to pick, as in PyTorch).
        IndexError
            If a dimension is out of range.

        See Also
        --------
        amin : the smallest values.
        argmax : where the largest value is.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([1.0, 3.0, 3.0], requires_grad=True)
        >>> y = dl.amax(x)
        >>> y.backward()
        >>> y, x.grad               # the tie shares the gradient
        (tensor(3., grad_fn=<...>), tensor([0. , 0.5, 0.5]))
    """

    @staticmethod
    def arguments(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A002
        """``amax(input, dim=None, keepdim=False)``: the largest values over ``dim`` (an int
        or a tuple; all dimensions by default); the gradient is shared evenly among ties.
        NumPy's ``axis=``/``keepdims=`` are accepted too."""
        return _reduction_arguments(input, dim, keepdim, axis=axis, keepdims=keepdims)

    @staticmethod
    def symbolic(sp, x, axis=None, keepdims=False):
        return sp.reduce(sp.maximum, x, axis, keepdims)

    @classmethod
    def forward(cls, ctx, xp, x, axis=None, keepdims=False):
        ctx.axes = _normalize_axis(axis, x.ndim)
        ctx.keepdims = keepdims
        _check_not_empty(cls.name, x, ctx.axes)
        y = _largest(x, ctx.axes, keepdims, cls.smallest)
        y_kept = y if keepdims else _keep_reduced_axes(y, ctx.axes, x.ndim)
        mask = x == y_kept
        if backend.is_gpu_array(y) or (y.dtype.kind in "fc" and xp.isnan(y).any()):
            # (a nan is the maximum and the minimum of what holds it: the gradient goes to
            # the nan entries, as PyTorch's; x == nan alone would mark none and share 0/0.
            # Asked only where a nan is there: on a GPU, always, as asking waits for it)
            mask |= xp.isnan(x) & xp.isnan(y_kept)
        share = mask / mask.sum(axis=ctx.axes, keepdims=True)
        # (in x's dtype: a float32 input keeps float32 tangents; integers have no derivative)
        ctx.save(share.astype(x.dtype) if x.dtype.kind == "f" else share)
        return y

    @staticmethod
    def vjp(ctx, xp, g, share):
        if not ctx.keepdims:
            g = _keep_reduced_axes(g, ctx.axes, share.ndim)
        return (g * share,)

    @staticmethod
    def jvp(ctx, xp, dx, share):
        return xp.sum(dx * share, axis=_from_end(ctx.axes, share.ndim), keepdims=ctx.keepdims)


class MinReduce(MaxReduce):
    """y = min x over ``axis``: the rule of :class:`MaxReduce`, at the minimum."""

    name = "min"
    tensor_method = dl_function = "amin"  # x.amin(dim), dl.amin(x, dim); min(dim) adds indices
    math = "∂(min x)/∂xᵢ = 1 at the minimum (shared on ties), 0 elsewhere"
    smallest = True

    description = "the smallest values over dimensions"
    doc = """
        Parameters
        ----------
        input : Tensor, array or sequence
            The values.
        dim : int or tuple of int, optional
            The dimensions to reduce; default: all (an empty ``[]`` or ``()``
            also means all, as in PyTorch).
        keepdim : bool, default False
            Keep the reduced dimensions with size 1.

        Returns
        -------
        Tensor or array
            The minima.

        Raises
        ------
        ValueError
            If a reduced dimension is empty (there is no value to pick, as in PyTorch).
        IndexError
            If a dimension is out of range.

        See Also
        --------
        amax : the largest values.
        argmin : where the smallest value is.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.amin(dl.tensor([[1.0, 5.0], [4.0, 2.0]]), dim=1)
        tensor([1., 2.])
    """

    @staticmethod
    def arguments(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A002
        """``amin(input, dim=None, keepdim=False)``: the smallest values over ``dim`` (an
        int or a tuple; all dimensions by default); the gradient is shared among ties."""
        return _reduction_arguments(input, dim, keepdim, axis=axis, keepdims=keepdims)

    @staticmethod
    def symbolic(sp, x, axis=None, keepdims=False):
        return sp.reduce(sp.minimum, x, axis, keepdims)
