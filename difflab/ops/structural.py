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

import math
from typing import Any

import numpy as np

from difflab import backend, fastpath
from difflab.dtypes import result_type
from difflab.ops import linalg
from difflab.ops.conversions import Cast, Clone, ToDevice  # noqa: F401  (registered here)
from difflab.ops.primitive import Primitive

# Reductions live in difflab.ops.reductions; their names stay importable from here.
from difflab.ops.reductions import (  # noqa: F401  (re-exported)
    CumSum,
    MaxReduce,
    Mean,
    MinReduce,
    Prod,
    Sum,
    _from_end,
    _keep_reduced_axes,
    _largest,
    _normalize_axis,
    _reduction_arguments,
)
from difflab.ops.shapes import broadcast_shape as _broadcast_shape
from difflab.ops.shapes import copied, shape_args, sum_to_shape
from difflab.ops.shapes import lift as _lift
from difflab.ops.shapes import shape_of as _shape

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
        if np.ndim(a) == 0 or np.ndim(b) == 0:  # (a number too: it has no ndim)
            raise ValueError("matmul: both operands need at least one dimension (got a 0-d "
                             "tensor or a number); use * for scalars")
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
        for i, n in enumerate(shape):  # (NumPy takes any negative size as -1, silently)
            if n < -1:
                raise ValueError(f"invalid shape dimension {n} at index {i} of shape "
                                 f"{tuple(shape)}: a size is 0 or more, or -1 (inferred)")
        if list(shape).count(-1) > 1:
            raise ValueError(f"only one dimension can be inferred (given as -1), got shape "
                             f"{tuple(shape)}")
        if -1 in shape and 0 in shape:  # (NumPy: "is invalid", not why)
            raise ValueError(f"cannot reshape a tensor of {x.size} elements into shape "
                             f"{tuple(shape)}: the size given as -1 could be any value, as "
                             f"another is 0; give every size")
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


def _plain(value: Any) -> bool:
    """A number or a NumPy/CuPy array: not a tensor nor dual numbers."""
    return isinstance(value, (int, float, np.ndarray, np.generic)) or backend.is_gpu_array(value)


class Permute(Primitive):
    """y = x with its axes reordered.  VJP: the inverse permutation."""

    name = "permute"
    tensor_method = dl_function = "permute"  # x.permute(1, 0), dl.permute(x, (1, 0))
    description = "the dimensions of a tensor reordered"
    doc = """
        Parameters
        ----------
        input : Tensor or array
            The values.
        dims : tuple of int
            The new order: dimension i of the result is dimension ``dims[i]`` of
            ``input`` (negative count from the end); also as separate ints.

        Returns
        -------
        Tensor or array
            A view of ``input`` with shape ``[input.shape[d] for d in dims]``.

        Raises
        ------
        ValueError
            If ``dims`` is not a permutation of ``input``'s dimensions.
        TypeError
            If an entry of ``dims`` is not an int.

        See Also
        --------
        difflab.transpose : swap two dimensions.
        difflab.movedim : move some dimensions, keeping the others' order.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.zeros(1, 2, 3, requires_grad=True)
        >>> y = dl.permute(x, (2, 0, 1))
        >>> y.shape, x.permute(2, 0, 1).shape
        (difflab.Size([3, 1, 2]), difflab.Size([3, 1, 2]))
        >>> (y * dl.arange(6.0).reshape(3, 1, 2)).sum().backward()
        >>> x.grad                  # the weights permuted back
        tensor([[[0., 2., 4.],
                 [1., 3., 5.]]])
    """

    @staticmethod
    def arguments(input, *dims):  # noqa: A002
        """``permute(input, dims)``: ``input`` with its dimensions in the order ``dims``
        (``x.permute(1, 0)`` or ``x.permute((1, 0))`` too)."""
        return (input,), {"axes": shape_args(dims, "permute", "dims")}

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


def expanded_shape(shape: tuple, sizes: tuple) -> tuple:
    """The shape ``expand(*sizes)`` gives a tensor of ``shape`` (``-1`` keeps a size), or
    PyTorch's RuntimeError naming both shapes (NumPy's "remapped shapes" named neither)."""
    if len(sizes) < len(shape):
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to "
            f"the number of dimensions in the tensor ({len(shape)}); target sizes {list(sizes)}, "
            f"tensor sizes {list(shape)}")
    lead = len(sizes) - len(shape)
    out = []
    for i, n in enumerate(sizes):
        old = shape[i - lead] if i >= lead else None
        if n == -1 and old is None:
            raise RuntimeError(
                f"expand: the expanded size of the tensor (-1) isn't allowed in a leading, "
                f"non-existing dimension {i}; give its size (target sizes {list(sizes)})")
        if n == -1:
            n = old
        if n < 0:
            raise RuntimeError(f"expand: sizes must be non-negative (or -1 to keep one), got "
                               f"{list(sizes)}")
        if old is not None and old != 1 and n != old:
            raise RuntimeError(
                f"expand: the expanded size of the tensor ({n}) must match the existing size "
                f"({old}) at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  "
                f"Tensor sizes: {list(shape)}; only dimensions of size 1 can be expanded")
        out.append(n)
    return tuple(out)


class Expand(Primitive):
    """y = x broadcast to a larger shape (a view, no copy).

    JVP: broadcast ẋ.  VJP (transpose): sum ȳ over the broadcast axes.
    """

    name = "expand"
    tensor_method = "expand"  # x.expand(2, 3) (-1 keeps a size), dl.broadcast_to(x, (2, 3))
    dl_function = "broadcast_to"
    description = "a tensor repeated to a larger shape without copying (broadcast)"
    doc = """
        Parameters
        ----------
        input : Tensor or array
            The values.
        size : tuple of int
            The shape to broadcast to (also as separate ints): new dimensions on the
            left, and dimensions of size 1 repeated; ``-1`` keeps ``input``'s size there.

        Returns
        -------
        Tensor or array
            A view of shape ``size`` (read-only in effect: its elements share memory).

        Raises
        ------
        RuntimeError
            If ``input``'s shape does not broadcast to ``size`` (as in PyTorch): fewer
            sizes than ``input`` has dimensions, a size that differs from one that is not
            1, a negative size, or ``-1`` in a new leading dimension.

        See Also
        --------
        difflab.Tensor.expand : the method form, ``x.expand(*size)``.
        difflab.broadcast_tensors : several tensors to their common shape.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([1.0, 2.0], requires_grad=True)
        >>> y = dl.broadcast_to(x, (3, 2))
        >>> y
        tensor([[1., 2.],
                [1., 2.],
                [1., 2.]], grad_fn=<...>)
        >>> y.sum().backward()
        >>> x.grad                  # summed over the 3 repeats
        tensor([3., 3.])
        >>> dl.broadcast_to(dl.tensor([[1.0], [2.0]]), (-1, 3))
        tensor([[1., 1., 1.],
                [2., 2., 2.]])
    """

    @staticmethod
    def arguments(input, *sizes):  # noqa: A002
        """``broadcast_to(input, size)``: ``input`` repeated, without copying, to ``size``
        by the broadcasting rules (``-1`` keeps a dimension); ``x.expand(*size)`` too.
        Its gradient sums back over the repeated dimensions."""
        return (input,), {"shape": expanded_shape(tuple(input.shape), shape_args(sizes, "expand"))}

    @staticmethod
    def forward(ctx, xp, x, shape):
        ctx.in_shape, ctx.shape = _shape(x), tuple(shape)
        if math.prod(ctx.shape) == math.prod(ctx.in_shape):
            # (only axes of size 1 added, nothing repeated: a view that can be written
            # into, as PyTorch's; NumPy's broadcast_to is read-only)
            return xp.reshape(x, shape)
        return xp.broadcast_to(x, shape)

    @staticmethod
    def vjp(ctx, xp, g):
        return (sum_to_shape(g, ctx.in_shape),)

    @staticmethod
    def jvp(ctx, xp, dx):
        return xp.broadcast_to(_lift(dx, len(ctx.shape)), dx.shape[:1] + ctx.shape)


def check_on_device(index: Any, shape: tuple) -> None:
    """NumPy's IndexError for an integer index out of ``[-size, size)``, on a GPU array.

    NumPy raises it for ``x[index]``, ``x[index] = v`` and ``np.add.at``; CuPy *wraps* the
    entries out of range instead (its documented difference), so the same program would
    read or write another element silently on the GPU.  One max and one min per index
    array (and a copy of two numbers to the host).
    """
    for array, axis, size in backend.integer_index_arrays(index, shape):
        if array.size and (int(array.min()) < -size or int(array.max()) >= size):
            bad = int(array.max()) if int(array.max()) >= size else int(array.min())
            raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {size}")


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
        if backend.is_gpu_array(x):
            check_on_device(index, x.shape)
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
        if backend.is_gpu_array(v):
            check_on_device(index, ctx.shape)
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
    """y = x reversed along ``axis``.  It is its own transpose: VJP flips ȳ back.

    The result is a copy, as PyTorch's (NumPy's ``flip`` is a view: a write into y
    would change x behind autograd's back)."""

    name = "flip"

    @staticmethod
    def forward(ctx, xp, x, axis):
        ctx.axis, ctx.ndim = axis, x.ndim
        return copied(xp.flip(x, axis))

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

    Dual numbers ``v`` written into plain numbers ``x`` (a scatter into zeros under
    ``jacfwd``) are written by their own handler, which pushes this same rule; sympy
    expressions make x an array of Python objects first.
    """

    name = "index_put"

    @staticmethod
    def forward(ctx, xp, x, v, index):
        ctx.index, ctx.v_shape, ctx.x_shape = index, getattr(v, "shape", ()), x.shape
        if backend.is_gpu_array(x):
            check_on_device(index, x.shape)
        out = copied(x)
        if not _plain(v) and _plain(out):  # (dual numbers written into numbers, as in
            return linalg.BIND(IndexPut, out, v, index=index)  # jacfwd: their handler's write)
        v_kind = getattr(getattr(v, "dtype", None), "kind", "")
        if v_kind == "O" and out.dtype.kind != "O":
            out = out.astype(object)  # (sympy expressions written into numbers)
        out[index] = v
        return out

    @staticmethod
    def jvp(ctx, xp, dx, dv):
        given = dx if dx is not None else dv
        k = given.shape[0]
        out = xp.zeros((k,) + tuple(ctx.x_shape), dtype=given.dtype) if dx is None \
            else copied(dx)
        index = (slice(None),) + (ctx.index if isinstance(ctx.index, tuple) else (ctx.index,))
        # (v̇ broadcasts to the place it goes to, as v did, past the k axis)
        value = 0 if dv is None else _lift(dv, np.zeros(out.shape, bool)[index].ndim - 1)
        if not _plain(value) and _plain(out):  # (v̇ is dual numbers or a tensor, ẋ numbers:
            return xp.record_primitive(IndexPut, out, value, index=index)  # its own write)
        out[index] = value
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

    @staticmethod
    def symbolic(sp, cond, a, b):
        # a condition of symbols (x > 0, isin's Eq) has no truth value to pick by: the
        # choice is sympy's Piecewise, whose derivative is the chosen branch's
        return sp.elementwise(lambda c, u, v: sp.where(sp.truth(c), u, v), cond, a, b)


_NUMBERS = frozenset((int, float, type(None)))


class Clamp(Primitive):
    """y = min(max(x, low), high).  dy/dx = 1 inside [low, high], 0 outside.

    A tensor bound is differentiated too (PyTorch's ``clamp.Tensor``): the gradient
    goes to whichever value was chosen, dy/dlow = 1 where x < low (and low ≤ high),
    dy/dhigh = 1 where max(x, low) > high.  (Where low > high, PyTorch credits low
    for x < low though the result is high; here high gets it, as the value says.)
    """

    name = "clamp"
    tensor_method = dl_function = "clamp"  # x.clamp(min, max), dl.clamp(x, min, max)

    description = "each element limited to an interval"
    doc = """
        Parameters
        ----------
        input : Tensor, array or sequence
            The values.
        min, max : float or Tensor, optional
            The bounds (either may be left out); a tensor bound broadcasts with the
            input and gets the gradient where it was chosen.

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
        >>> low = dl.tensor([0.0, 0.0, 0.0], requires_grad=True)
        >>> dl.clamp(x, min=low).sum().backward()
        >>> low.grad                # the bound where it was chosen
        tensor([1., 0., 0.])
    """

    @staticmethod
    def arguments(input, min=None, max=None):  # noqa: A002
        """``clamp(input, min=None, max=None)``: min(max(x, min), max), elementwise; the
        derivative is 1 inside [min, max], 0 outside, and a tensor bound gets it where it
        was chosen.  The result's dtype follows the promotion rule (an integer tensor
        clamped to a float bound is the default float dtype, as in PyTorch)."""
        if min is None and max is None:
            raise ValueError("clamp needs at least one of min and max (got neither)")
        low, high = (getattr(b, "array", b) for b in (min, max))  # (a tensor bound's values)
        array = getattr(input, "array", None)
        # A tensor: cast (on the tape) to the promoted dtype, unless nothing can change it
        # (a float tensor and Python numbers, the common case, is left as it is).
        numeric = all(getattr(getattr(b, "dtype", None), "kind", "f") != "O" for b in (low, high))
        if array is not None and numeric and not (
                array.dtype.kind in "fc" and type(low) in _NUMBERS and type(high) in _NUMBERS):
            target = result_type(input, *[b for b in (low, high) if b is not None])
            if array.dtype != target.dtype:
                input = input.to(target)  # noqa: A001
        # (the bounds are inputs, not settings: a tensor bound is on the tape and the graph)
        return (input, min, max), {}

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
        if getattr(x, "dtype", None) is not None and x.dtype.kind == "f" and any(
                b is not None and (type(b) not in _NUMBERS or b == 0) for b in (low, high)):
            # A tie with a zero bound: clip(-0.0, 0) gives 0.0, PyTorch's clamp keeps x
            # (it replaces only x < min and x > max), so -0.0 stays -0.0.  Only signed
            # zeros can tie and differ, so only a zero (or a tensor) bound needs this.
            y = xp.where(y == x, x, y)
        # (comparisons: of values for dual numbers, a constant of the graph for tensors)
        inside = x >= low if low is not None else None
        if high is not None:
            inside = x <= high if inside is None else inside & (x <= high)
        # Where an array bound was chosen (a number bound has no derivative to take).
        chose_low = chose_high = None
        if low is not None and type(low) not in _NUMBERS:
            chose_low = x < low if high is None else (x < low) & (low <= high)
        if high is not None and type(high) not in _NUMBERS:
            chose_high = (x if low is None else xp.maximum(x, low)) > high
        ctx.shapes = (_shape(x), _shape(low), _shape(high))
        ctx.save(inside, chose_low, chose_high)
        return y

    @staticmethod
    def vjp(ctx, xp, g, inside, chose_low, chose_high):
        x_shape, low_shape, high_shape = ctx.shapes
        _, need_low, need_high = ctx.needs_input_grad
        return (sum_to_shape(g * inside, x_shape),
                sum_to_shape(g * chose_low, low_shape) if need_low else None,
                sum_to_shape(g * chose_high, high_shape) if need_high else None)

    @staticmethod
    def jvp(ctx, xp, dx, dlow, dhigh, inside, chose_low, chose_high):
        ndim = len(inside.shape)
        terms = [_lift(d, ndim) * mask for d, mask in
                 ((dx, inside), (dlow, chose_low), (dhigh, chose_high)) if d is not None]
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        return total
