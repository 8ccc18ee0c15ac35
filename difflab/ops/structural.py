r"""Tensor primitives for the tape: forward, VJP and JVP side by side.

Every class here follows one protocol, read by ``difflab.autograd.engine``:

``forward(ctx, xp, *inputs, **params) -> output``
    Computes on raw arrays; stores on ``ctx`` what the derivative needs.
``vjp(ctx, xp, g, *saved) -> (x̄₁, x̄₂, ...)``
    Reverse mode: one adjoint per input from the output adjoint ``g``.
``jvp(ctx, xp, *tangents, *saved) -> ẏ``
    Forward mode: the output tangent from the input tangents.  Tangents come
    k at a time, stacked on a leading axis: ẋ has shape ``(k, *x.shape)``,
    one row per direction (that is how ``Dual`` carries them), and the JVP
    applies its linear map to every row.  So a JVP counts axes from the end
    (``axis - ndim``), where the leading axis never shifts them.  A tangent
    ``None`` is an input held constant: its tangent is zero.

For a linear map (sum, reshape, transpose, indexing, ...) the JVP is the map
itself applied to the tangent, and the VJP is its *transpose*: the VJP of a
sum is a broadcast, the VJP of a broadcast is a sum, the VJP of indexing is
scattering into zeros.  Each docstring says which map is which.

``xp`` is numpy or cupy on the fast path, or ``difflab.functions`` when
the backward pass is itself recorded (``create_graph=True``); so the rules
use only functions and array methods that both provide.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from difflab import backend, fastpath
from difflab.dtypes import result_type
from difflab.ops.primitive import Primitive
from difflab.ops.shapes import broadcast_shape as _broadcast_shape
from difflab.ops.shapes import lift as _lift
from difflab.ops.shapes import mean_scale, sum_to_shape
from difflab.ops.shapes import shape_of as _shape

# -------------------------------------------------------------------- reductions


def _from_end(axes: tuple | None, ndim: int) -> tuple:
    """Axes of an ``ndim``-axis array counted from the end (all of them for ``None``)."""
    return tuple(range(-ndim, 0)) if axes is None else tuple(a - ndim for a in axes)


def _normalize_axis(axis: Any, ndim: int) -> tuple | None:
    if axis is None:
        return None
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    for a in axes:
        if not -max(ndim, 1) <= a < max(ndim, 1):
            raise IndexError(
                f"Dimension out of range (expected to be in range of "
                f"[{-max(ndim, 1)}, {max(ndim, 1) - 1}], but got {a})"
            )
    return tuple(sorted(a % max(ndim, 1) for a in axes)) if ndim else ()


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
        (input,), params = _reduction_arguments(input, dim, keepdim, axis=axis, keepdims=keepdims)
        if params["axis"] is not None and not isinstance(params["axis"], (int, np.integer)):
            raise TypeError(f"prod: dim must be one int (or None for all), got {dim!r}")
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
        return (input,), {"axis": dim}

    @staticmethod
    def numpy_arguments(a, axis=None, dtype=None, out=None):
        """``np.cumsum(a, axis)``."""
        return CumSum.arguments(a, axis)

    @staticmethod
    def forward(ctx, xp, x, axis):
        ctx.axis, ctx.ndim = axis, x.ndim
        return xp.cumsum(x, axis=axis)

    @staticmethod
    def vjp(ctx, xp, g):
        return (xp.flip(xp.cumsum(xp.flip(g, ctx.axis), axis=ctx.axis), ctx.axis),)

    @staticmethod
    def jvp(ctx, xp, dx):
        return xp.cumsum(dx, axis=ctx.axis % ctx.ndim - ctx.ndim)


def _largest(x: Any, axis: Any = None, keepdims: bool = False, smallest: bool = False) -> Any:
    """max (or min) of ``x`` over ``axis``: ``x.max(axis=)`` of an array or a dual number,
    ``x.amax(dim)`` of a tensor (reverse over forward: a dual number's values)."""
    if hasattr(x, "amax"):
        return x.amin(axis, keepdims) if smallest else x.amax(axis, keepdims)
    return x.min(axis=axis, keepdims=keepdims) if smallest else x.max(axis=axis, keepdims=keepdims)


def _reduction_arguments(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A002
    """PyTorch's ``(input, dim, keepdim)`` or NumPy's ``axis=``/``keepdims=``, as the
    (inputs, params) of a reduction primitive."""
    dim = axis if dim is None else dim
    keepdim = keepdims if keepdims is not None else keepdim
    dim = tuple(dim) if isinstance(dim, list) else dim
    return (input,), {"axis": dim, "keepdims": bool(keepdim)}


class MaxReduce(Primitive):
    """y = max x over ``axis`` (:class:`MinReduce` is the same rule for the minimum).

    The derivative picks the arg-max: x̄ᵢ = ȳ where xᵢ is the maximum, 0 elsewhere;
    equal maxima share ȳ evenly (as ``maximum`` does).  The share is piecewise
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
            The dimensions to reduce; default: all.
        keepdim : bool, default False
            Keep the reduced dimensions with size 1.

        Returns
        -------
        Tensor or array
            The maxima.

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
        y = _largest(x, ctx.axes, keepdims, cls.smallest)
        y_kept = y if keepdims else _keep_reduced_axes(y, ctx.axes, x.ndim)
        mask = x == y_kept
        ctx.save(mask / mask.sum(axis=ctx.axes, keepdims=True))
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
            The dimensions to reduce; default: all.
        keepdim : bool, default False
            Keep the reduced dimensions with size 1.

        Returns
        -------
        Tensor or array
            The minima.

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


# ---------------------------------------------------------------- linear algebra


class MatMul(Primitive):
    """C = A @ B (with NumPy's rules for 1-D operands and batch broadcasting).

    JVP: Ċ = Ȧ @ B + A @ Ḃ.
    VJP (the transpose of the JVP): Ā = C̄ @ Bᵀ,  B̄ = Aᵀ @ C̄,
    summed over broadcast batch dimensions.
    """

    name = "matmul"

    @staticmethod
    def forward(ctx, xp, a, b):
        if a.ndim == 0 or b.ndim == 0:
            raise ValueError("matmul needs tensors of at least one dimension; use * for scalars")
        inner_a = a.shape[-1]
        inner_b = b.shape[-2] if b.ndim > 1 else b.shape[0]
        if inner_a != inner_b:
            raise ValueError(
                f"shapes {tuple(a.shape)} and {tuple(b.shape)} cannot be multiplied "
                f"({inner_a} != {inner_b})"
            )
        ctx.save(a, b)
        out = xp.matmul(a, b)
        ctx.out_shape = _shape(out)
        return out

    @staticmethod
    def vjp(ctx, xp, g, a, b):
        need_a, need_b = ctx.needs_input_grad
        # Lift 1-D operands to matrices so one formula covers every case.
        a2 = a.reshape((1, -1)) if a.ndim == 1 else a
        b2 = b.reshape((-1, 1)) if b.ndim == 1 else b
        if a.ndim == 1 and b.ndim == 1:
            g2 = g.reshape((1, 1))
        elif a.ndim == 1:
            g2 = xp.expand_dims(g, -2)
        elif b.ndim == 1:
            g2 = xp.expand_dims(g, -1)
        else:
            g2 = g
        grad_a = grad_b = None
        if need_a:
            grad_a = sum_to_shape(xp.matmul(g2, xp.swapaxes(b2, -1, -2)), _batch_shape(a2, g2))
            grad_a = grad_a.reshape(a.shape)
        if need_b:
            grad_b = sum_to_shape(xp.matmul(xp.swapaxes(a2, -1, -2), g2), _batch_shape(b2, g2))
            grad_b = grad_b.reshape(b.shape)
        return grad_a, grad_b

    @staticmethod
    def jvp(ctx, xp, da, db, a, b):
        # NumPy's rules for 1-D operands (a vector is a row on the left, a column on the
        # right) decide where the k axis of the tangents must go for matmul to batch over it.
        na, nb = a.ndim, b.ndim
        k = (da if da is not None else db).shape[0]
        # With a matrix on the other side, all k products are one matrix product:
        # the rows of every ȧ times b, or every ḃ times aᵀ.
        out = None
        if da is not None:  # ȧ @ b
            if nb == 2:
                da = da.reshape((-1, a.shape[-1]))
            elif na == 1:
                da = da.reshape((k,) + (1,) * (nb - 2) + (1, a.shape[0]))
            else:
                da = _lift(da, max(na, nb))
            out = xp.matmul(da, b).reshape((k,) + ctx.out_shape)
        if db is not None:  # a @ ḃ
            if nb == 1 and na <= 2:
                term = xp.matmul(db, a if na == 1 else xp.swapaxes(a, -1, -2))
            elif na == 2 and nb == 2 and b.shape[1] == 1:
                # k columns ḃ: the rows of ḃᵀ times aᵀ, one matrix product (not k of them)
                term = xp.matmul(db.reshape((k, b.shape[0])), xp.swapaxes(a, -1, -2))
            elif na == 2 and nb == 2:
                # a @ [ḃ₁ ḃ₂ … ḃₖ], the k matrices side by side: one matrix product
                wide = xp.swapaxes(db, 0, 1).reshape((b.shape[0], k * b.shape[1]))
                term = xp.swapaxes(xp.matmul(a, wide).reshape((a.shape[0], k, b.shape[1])),
                                   0, 1)
            else:
                if nb == 1:
                    db = db.reshape((k,) + (1,) * max(na - 2, 0) + (b.shape[0], 1))
                elif na > 1:
                    db = _lift(db, max(na, nb))
                term = xp.matmul(a, db)
            term = term.reshape((k,) + ctx.out_shape)
            out = term if out is None else out + term
        return out


def _batch_shape(operand: Any, g: Any) -> tuple:
    """The shape an adjoint must be summed to: the operand's, as a matrix stack."""
    return tuple(operand.shape)


# ------------------------------------------------------------------ shape and views


class Reshape(Primitive):
    """y = x viewed with another shape.  JVP: reshape ẋ.  VJP: reshape ȳ back."""

    name = "reshape"

    @staticmethod
    def forward(ctx, xp, x, shape):
        ctx.in_shape, ctx.shape = _shape(x), shape
        try:
            return xp.reshape(x, shape)
        except ValueError:
            raise ValueError(
                f"shape {tuple(shape)} is invalid for input of size {x.size} "
                f"(shape {tuple(x.shape)})"
            ) from None

    @staticmethod
    def vjp(ctx, xp, g):
        return (g.reshape(ctx.in_shape),)

    @staticmethod
    def jvp(ctx, xp, dx):
        return dx.reshape(dx.shape[:1] + tuple(ctx.shape))


class Permute(Primitive):
    """y = x with its axes reordered.  VJP: the inverse permutation."""

    name = "permute"

    @staticmethod
    def forward(ctx, xp, x, axes):
        ctx.axes = tuple(a % x.ndim for a in axes) if x.ndim else ()
        if sorted(ctx.axes) != list(range(x.ndim)):
            raise ValueError(f"permute: {tuple(axes)} is not a permutation of {x.ndim} axes")
        return xp.transpose(x, ctx.axes)

    @staticmethod
    def vjp(ctx, xp, g):
        inverse = [0] * len(ctx.axes)
        for i, a in enumerate(ctx.axes):
            inverse[a] = i
        return (xp.transpose(g, tuple(inverse)),)

    @staticmethod
    def jvp(ctx, xp, dx):
        return xp.transpose(dx, (0,) + tuple(a + 1 for a in ctx.axes))


class Expand(Primitive):
    """y = x broadcast to a larger shape (a view, no copy).

    JVP: broadcast ẋ.  VJP (transpose): sum ȳ over the broadcast axes.
    """

    name = "expand"

    @staticmethod
    def forward(ctx, xp, x, shape):
        ctx.in_shape, ctx.shape = _shape(x), tuple(shape)
        return xp.broadcast_to(x, shape)

    @staticmethod
    def vjp(ctx, xp, g):
        return (sum_to_shape(g, ctx.in_shape),)

    @staticmethod
    def jvp(ctx, xp, dx):
        return xp.broadcast_to(_lift(dx, len(ctx.shape)), dx.shape[:1] + ctx.shape)


class Index(Primitive):
    """y = x[index] (slices, integers, integer arrays, boolean masks).

    JVP: ẏ = ẋ[index].  VJP (transpose): scatter ȳ into zeros shaped like x,
    *adding* where an integer index repeats an element.
    """

    name = "index"
    fusion = "window"

    @staticmethod
    def forward(ctx, xp, x, index):
        ctx.index, ctx.in_shape = index, x.shape
        return x[index]

    @staticmethod
    def shape_read_from(inputs, params):
        """A boolean mask: how many elements it selects depends on its values."""
        index = params["index"] if isinstance(params["index"], tuple) else (params["index"],)
        return tuple(i for i in index if getattr(i, "ndim", 0) > 0 and i.dtype.kind == "b")

    @staticmethod
    @fastpath.unwritten_slices  # (with the shortcuts on: a slice's scatter is left unwritten)
    def vjp(ctx, xp, g):
        return (xp.scatter_add(g, ctx.index, ctx.in_shape),)

    @staticmethod
    def jvp(ctx, xp, dx):
        index = ctx.index if isinstance(ctx.index, tuple) else (ctx.index,)
        return dx[(slice(None),) + index]


class ScatterAdd(Primitive):
    """y = zeros(shape) with y[index] += v: the transpose of indexing.

    VJP: v̄ = ȳ[index] (indexing again: the pair closes under differentiation).
    """

    name = "scatter_add"
    fusion = "scatter"

    @staticmethod
    def forward(ctx, xp, v, index, shape):
        ctx.index, ctx.shape = index, tuple(shape)
        return xp.scatter_add(v, index, shape)

    @staticmethod
    def vjp(ctx, xp, g):
        return (g[ctx.index],)

    @staticmethod
    def jvp(ctx, xp, dv):
        # Linear in v: each of the k tangents is scattered the same way, into its own zeros.
        index = ctx.index if isinstance(ctx.index, tuple) else (ctx.index,)
        return xp.scatter_add(dv, (slice(None),) + index, (dv.shape[0],) + ctx.shape)


class Flip(Primitive):
    """y = x reversed along ``axis``.  It is its own transpose: VJP flips ȳ back."""

    name = "flip"

    @staticmethod
    def forward(ctx, xp, x, axis):
        ctx.axis, ctx.ndim = axis, x.ndim
        return xp.flip(x, axis)

    @staticmethod
    def vjp(ctx, xp, g):
        return (xp.flip(g, ctx.axis),)

    @staticmethod
    def jvp(ctx, xp, dx):
        return xp.flip(dx, ctx.axis % ctx.ndim - ctx.ndim)


class IndexPut(Primitive):
    """y = x with y[index] = v (the out-of-place form of ``x[index] = v``).

    Linear in (x, v).  JVP: ẏ = ẋ with ẏ[index] = v̇.  VJP (its transpose):
    x̄ = ȳ with zeros at ``index`` (those elements were overwritten);
    v̄ = ȳ[index], summed to v's shape.
    """

    name = "index_put"

    @staticmethod
    def forward(ctx, xp, x, v, index):
        ctx.index, ctx.v_shape, ctx.x_shape = index, getattr(v, "shape", ()), x.shape
        out = x.copy()
        out[index] = v
        return out

    @staticmethod
    def jvp(ctx, xp, dx, dv):
        given = dx if dx is not None else dv
        k = given.shape[0]
        out = xp.zeros((k,) + tuple(ctx.x_shape), dtype=given.dtype) if dx is None \
            else dx.copy()
        index = (slice(None),) + (ctx.index if isinstance(ctx.index, tuple) else (ctx.index,))
        # (v̇ broadcasts to the place it goes to, as v did, past the k axis)
        out[index] = 0 if dv is None else _lift(dv, out[index].ndim - 1)
        return out

    @staticmethod
    def vjp(ctx, xp, g):
        need_x, need_v = ctx.needs_input_grad
        grad_x = grad_v = None
        if need_x:
            keep = xp.ones_like(g)  # (on g's device; a constant when the backward is recorded)
            keep[ctx.index] = 0
            grad_x = g * keep
        if need_v:
            grad_v = sum_to_shape(g[ctx.index], ctx.v_shape)
        return grad_x, grad_v


class Concatenate(Primitive):
    """y = [x₁, x₂, ...] joined along ``axis``.  VJP: ȳ cut back into pieces."""

    name = "cat"

    @staticmethod
    def forward(ctx, xp, *xs, axis=0):
        ctx.axis = axis
        ctx.sizes = [x.shape[axis] for x in xs]
        ctx.shapes = [x.shape for x in xs]
        return xp.concatenate(xs, axis=axis)

    @staticmethod
    def vjp(ctx, xp, g):
        grads, start = [], 0
        for size, needed in zip(ctx.sizes, ctx.needs_input_grad):
            index = [slice(None)] * g.ndim
            index[ctx.axis] = slice(start, start + size)
            grads.append(g[tuple(index)] if needed else None)
            start += size
        return tuple(grads)

    @staticmethod
    def jvp(ctx, xp, *dxs):
        given = next(dx for dx in dxs if dx is not None)
        k, ndim = given.shape[0], len(ctx.shapes[0])
        # a constant piece has tangent zero
        dxs = [dx if dx is not None else xp.zeros((k,) + shape, dtype=given.dtype)
               for dx, shape in zip(dxs, ctx.shapes)]
        return xp.concatenate(dxs, axis=ctx.axis % ndim - ndim)


class Where(Primitive):
    """y = a where cond else b.  VJP: ā = ȳ masked by cond, b̄ = ȳ masked by not cond."""

    name = "where"

    @staticmethod
    def forward(ctx, xp, cond, a, b):
        ctx.a_shape, ctx.b_shape = _shape(a), _shape(b)
        ctx.save(cond)
        return xp.where(cond, a, b)

    @staticmethod
    def vjp(ctx, xp, g, cond):
        _, need_a, need_b = ctx.needs_input_grad
        zero = xp.zeros_like(g)
        grad_a = sum_to_shape(xp.where(cond, g, zero), ctx.a_shape) if need_a else None
        grad_b = sum_to_shape(xp.where(cond, zero, g), ctx.b_shape) if need_b else None
        return None, grad_a, grad_b

    @staticmethod
    def jvp(ctx, xp, dcond, da, db, cond):
        shape = _broadcast_shape(_shape(cond), ctx.a_shape, ctx.b_shape)
        k = (da if da is not None else db).shape[0]
        da = 0.0 if da is None else _lift(da, len(shape))
        db = 0.0 if db is None else _lift(db, len(shape))
        return xp.broadcast_to(xp.where(cond, da, db), (k,) + shape)


_NUMBERS = frozenset((int, float, type(None)))


class Clamp(Primitive):
    """y = min(max(x, low), high).  dy/dx = 1 inside [low, high], 0 outside."""

    name = "clamp"
    tensor_method = dl_function = "clamp"  # x.clamp(min, max), dl.clamp(x, min, max)

    description = "each element limited to an interval"
    doc = """
        Parameters
        ----------
        input : Tensor, array or sequence
            The values.
        min, max : float or Tensor, optional
            The bounds (either may be left out).

        Returns
        -------
        Tensor or array
            min(max(x, min), max), elementwise.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([-2.0, 0.5, 3.0], requires_grad=True)
        >>> y = dl.clamp(x, -1, 1)
        >>> y.sum().backward()
        >>> y, x.grad               # derivative 1 inside, 0 outside
        (tensor([-1. ,  0.5,  1. ], grad_fn=<...>), tensor([0., 1., 0.]))
    """

    @staticmethod
    def arguments(input, min=None, max=None):  # noqa: A002
        """``clamp(input, min=None, max=None)``: min(max(x, min), max), elementwise; the
        derivative is 1 inside [min, max], 0 outside.  The result's dtype follows the
        promotion rule (an integer tensor clamped to a float bound is the default float
        dtype, as in PyTorch)."""
        if min is None and max is None:
            raise ValueError("clamp needs at least one of min and max (got neither)")
        low, high = (getattr(b, "array", b) for b in (min, max))  # (a tensor bound's values)
        array = getattr(input, "array", None)
        # A tensor: cast (on the tape) to the promoted dtype, unless nothing can change it
        # (a float tensor and Python numbers, the common case, is left as it is).
        if array is not None and not (array.dtype.kind in "fc" and type(low) in _NUMBERS
                                      and type(high) in _NUMBERS):
            target = result_type(input, *[b for b in (low, high) if b is not None])
            if array.dtype != target.dtype:
                input = input.to(target)  # noqa: A001
        return (input,), {"low": low, "high": high}

    @staticmethod
    def symbolic(sp, x, low=None, high=None):
        if low is not None:
            x = sp.elementwise(sp.maximum, x, low)
        if high is not None:
            x = sp.elementwise(sp.minimum, x, high)
        return x

    @staticmethod
    def forward(ctx, xp, x, low=None, high=None):
        y = xp.clip(x, low, high)
        # (comparisons: of values for dual numbers, a constant of the graph for tensors)
        inside = x >= low if low is not None else None
        if high is not None:
            inside = x <= high if inside is None else inside & (x <= high)
        ctx.save(inside)
        return y

    @staticmethod
    def vjp(ctx, xp, g, inside):
        return (g * inside,)

    @staticmethod
    def jvp(ctx, xp, dx, inside):
        return dx * inside


class Cast(Primitive):
    """y = x converted to another dtype.  VJP: ȳ converted back to x's dtype."""

    name = "to_dtype"

    @staticmethod
    def forward(ctx, xp, x, dtype):
        ctx.in_dtype, ctx.dtype = x.dtype, dtype
        return x.astype(dtype)

    @staticmethod
    def vjp(ctx, xp, g):
        return (g.astype(ctx.in_dtype),)

    @staticmethod
    def jvp(ctx, xp, dx):
        return dx.astype(ctx.dtype)


class ToDevice(Primitive):
    """y = x copied to another device.  JVP: ẋ copied there too.  VJP: ȳ copied back."""

    name = "to_device"

    @staticmethod
    def forward(ctx, xp, x, device):
        from difflab import backend

        ctx.source, ctx.target = backend.device_of(x), device
        return backend.to_device(x, device)

    @staticmethod
    def _moved(value, device):
        """A tangent or adjoint on ``device``: a tensor by ``.to`` (recorded), else its array."""
        from difflab import backend

        if hasattr(value, "to"):
            return value.to(device)
        return backend.to_device(value, device)

    @staticmethod
    def jvp(ctx, xp, dx):
        return ToDevice._moved(dx, ctx.target)

    @staticmethod
    def vjp(ctx, xp, g):
        return (ToDevice._moved(g, ctx.source),)


class Clone(Primitive):
    """y = a copy of x in new memory.  The identity map: VJP and JVP pass through."""

    name = "clone"

    @staticmethod
    def forward(ctx, xp, x):
        return x.copy()

    @staticmethod
    def vjp(ctx, xp, g):
        return (g,)

    @staticmethod
    def jvp(ctx, xp, dx):
        return dx
