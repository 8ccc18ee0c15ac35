"""The Tensor's operations: arithmetic, comparisons, reductions, shapes, indexing.

:class:`~difflab.tensor.Tensor` inherits these methods.  Each is one call:
it turns its arguments into what a primitive takes (``tensor_arguments``)
and applies the primitive through ``engine.apply``, which computes on the
arrays and records the step on the tape.  The elementwise functions without
extra arguments (``x.sin()``, ``x.exp()``, ...) are not written here: they
come from the registry (``tensor.add_elementwise_methods``), and those
that are a function of ``difflab.functions`` (``x.gather``, ``x.sort``, ...)
are attached by it (``functions._TENSOR_METHODS``): this module sits below
the tensor and imports neither.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from difflab import backend
from difflab.autograd.engine import apply as _apply
from difflab.ops import registry as _ops
from difflab.ops import structural as _structural
from difflab.tensor_arguments import (
    MinMax,
    as_axes,
    element_count,
    index_arrays,
    is_tensor,
    operand,
    promote,
    shape_args,
    unwrap,
    unwrap_operand,
    view_of,
)

if TYPE_CHECKING:
    from difflab.tensor import Tensor


_P = _ops.PRIMITIVES  # (by name: the comparisons and logic below)


def _no_grad_binary(op: Any, a: Any, b: Any) -> Any:
    """The primitive ``op`` (a comparison, logic) on a and b in their common dtype."""
    try:
        b = unwrap_operand(b)
    except TypeError:
        return NotImplemented  # (t == None is False, as for any other object)
    return _apply(op, *promote(a, b))


def _integer_division(name: str, a: Any, b: Any) -> Tensor:
    """``a // b`` or ``a % b`` in the common dtype (PyTorch floors, as Python does)."""
    return _apply(_ops.PRIMITIVES[name], *promote(unwrap_operand(a), unwrap_operand(b)))


class TensorMethods:
    """Operations on tensors, as PyTorch names them (mixed into :class:`~difflab.tensor.Tensor`)."""

    __slots__ = ()

    # ------------------------------------------------------------- arithmetic
    # An operand of a type difflab does not know (a dual number) gives NotImplemented, so
    # that Python asks the other operand: t * dual is the dual number's product.
    def __add__(self, other: Any) -> Tensor:
        if (other := operand(other)) is NotImplemented:
            return NotImplemented
        return _apply(_ops.ADD, *promote(self, other))

    def __radd__(self, other: Any) -> Tensor:
        if (other := operand(other)) is NotImplemented:
            return NotImplemented
        return _apply(_ops.ADD, *promote(other, self))

    def __sub__(self, other: Any) -> Tensor:
        if (other := operand(other)) is NotImplemented:
            return NotImplemented
        return _apply(_ops.SUB, *promote(self, other))

    def __rsub__(self, other: Any) -> Tensor:
        if (other := operand(other)) is NotImplemented:
            return NotImplemented
        return _apply(_ops.SUB, *promote(other, self))

    def __mul__(self, other: Any) -> Tensor:
        if (other := operand(other)) is NotImplemented:
            return NotImplemented
        return _apply(_ops.MUL, *promote(self, other))

    def __rmul__(self, other: Any) -> Tensor:
        if (other := operand(other)) is NotImplemented:
            return NotImplemented
        return _apply(_ops.MUL, *promote(other, self))

    def __truediv__(self, other: Any) -> Tensor:
        if (other := operand(other)) is NotImplemented:
            return NotImplemented
        return _apply(_ops.DIV, *promote(self, other, True))

    def __rtruediv__(self, other: Any) -> Tensor:
        if (other := operand(other)) is NotImplemented:
            return NotImplemented
        return _apply(_ops.DIV, *promote(other, self, True))

    def __pow__(self, other: Any) -> Tensor:
        if (other := operand(other)) is NotImplemented:
            return NotImplemented
        return _apply(_ops.POW, *promote(self, other))

    def __rpow__(self, other: Any) -> Tensor:
        if (other := operand(other)) is NotImplemented:
            return NotImplemented
        return _apply(_ops.POW, *promote(other, self))

    def __matmul__(self, other: Any) -> Tensor:
        if (other := operand(other)) is NotImplemented:
            return NotImplemented
        return _apply(_structural.MatMul, *promote(self, other))

    def __rmatmul__(self, other: Any) -> Tensor:
        if (other := operand(other)) is NotImplemented:
            return NotImplemented
        return _apply(_structural.MatMul, *promote(other, self))

    def __neg__(self) -> Tensor:
        return _apply(_ops.PRIMITIVES["neg"], self)

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        return self.abs()

    def __floordiv__(self, other: Any) -> Tensor:
        return _integer_division("floor_divide", self, other)

    def __rfloordiv__(self, other: Any) -> Tensor:
        return _integer_division("floor_divide", other, self)

    def __mod__(self, other: Any) -> Tensor:
        return _integer_division("remainder", self, other)

    def __rmod__(self, other: Any) -> Tensor:
        return _integer_division("remainder", other, self)

    # comparisons and logic: no gradient flows through them; both sides are compared
    # in their common dtype (int64 < 2.5 in float32, as PyTorch does)
    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _no_grad_binary(_P["eq"], self, other)

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _no_grad_binary(_P["ne"], self, other)

    def __lt__(self, other: Any) -> Tensor:
        return _no_grad_binary(_P["lt"], self, other)

    def __le__(self, other: Any) -> Tensor:
        return _no_grad_binary(_P["le"], self, other)

    def __gt__(self, other: Any) -> Tensor:
        return _no_grad_binary(_P["gt"], self, other)

    def __ge__(self, other: Any) -> Tensor:
        return _no_grad_binary(_P["ge"], self, other)

    def __and__(self, other: Any) -> Tensor:
        return _no_grad_binary(_P["bitwise_and"], self, other)

    def __or__(self, other: Any) -> Tensor:
        return _no_grad_binary(_P["bitwise_or"], self, other)

    def __xor__(self, other: Any) -> Tensor:
        return _no_grad_binary(_P["bitwise_xor"], self, other)

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    def __invert__(self) -> Tensor:
        return _apply(_ops.PRIMITIVES["bitwise_not"], self)

    def eq(self, other: Any) -> Tensor:
        """Elementwise ``x == other``, as a bool tensor (no derivative).

        See :func:`difflab.eq` for the parameters and examples.
        """
        return self == other

    def ne(self, other: Any) -> Tensor:
        """Elementwise ``x != other``, as a bool tensor (no derivative).

        See :func:`difflab.ne` for the parameters and examples.
        """
        return self != other

    def lt(self, other: Any) -> Tensor:
        """Elementwise ``x < other``, as a bool tensor (no derivative).

        See :func:`difflab.lt` for the parameters and examples.
        """
        return self < other

    def le(self, other: Any) -> Tensor:
        """Elementwise ``x <= other``, as a bool tensor (no derivative).

        See :func:`difflab.le` for the parameters and examples.
        """
        return self <= other

    def gt(self, other: Any) -> Tensor:
        """Elementwise ``x > other``, as a bool tensor (no derivative).

        See :func:`difflab.gt` for the parameters and examples.
        """
        return self > other

    def ge(self, other: Any) -> Tensor:
        """Elementwise ``x >= other``, as a bool tensor (no derivative).

        See :func:`difflab.ge` for the parameters and examples.
        """
        return self >= other

    def equal(self, other: Tensor) -> bool:
        """True when both have the same shape and the same values (a Python bool)."""
        if self.shape != other.shape:
            return False
        same = _apply(_ops.PRIMITIVES["eq"], self, other)
        return bool(_apply(_ops.PRIMITIVES["all"], same))

    def allclose(self, other: Any, rtol: float = 1e-5, atol: float = 1e-8,
                 equal_nan: bool = False) -> bool:
        """Whether every |self - other| ≤ atol + rtol·|other| (a Python bool)."""
        return bool(self.isclose(other, rtol, atol, equal_nan).all())

    def isnan(self) -> Tensor:
        return _apply(_ops.PRIMITIVES["isnan"], self)

    def isinf(self) -> Tensor:
        return _apply(_ops.PRIMITIVES["isinf"], self)

    def isfinite(self) -> Tensor:
        return _apply(_ops.PRIMITIVES["isfinite"], self)

    def any(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        return _apply(_ops.PRIMITIVES["any"], self, axis=dim, keepdims=keepdim)

    def all(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        return _apply(_ops.PRIMITIVES["all"], self, axis=dim, keepdims=keepdim)

    def sign(self) -> Tensor:
        return _apply(_ops.PRIMITIVES["sign"], self)

    def round(self) -> Tensor:
        return _apply(_ops.PRIMITIVES["round"], self)

    def floor(self) -> Tensor:
        return _apply(_ops.PRIMITIVES["floor"], self)

    def ceil(self) -> Tensor:
        return _apply(_ops.PRIMITIVES["ceil"], self)

    # ---------------------------------------------------- elementwise functions
    def rsqrt(self) -> Tensor:
        return 1.0 / self.sqrt()

    def square(self) -> Tensor:
        return self * self

    def reciprocal(self) -> Tensor:
        return 1.0 / self

    def neg(self) -> Tensor:
        """Minus x, elementwise: ``-x``.

        See :func:`difflab.neg` for the parameters, the derivative rule and examples.
        """
        return -self

    def add(self, other: Any, alpha: Any = 1) -> Tensor:
        """Sum, elementwise: ``x + alpha * other`` (PyTorch's ``alpha``, default 1).

        See :func:`difflab.add` for the parameters, the derivative rule and examples.
        """
        return self + (other if alpha == 1 else other * alpha)

    def sub(self, other: Any, alpha: Any = 1) -> Tensor:
        """Difference, elementwise: ``x - alpha * other`` (PyTorch's ``alpha``, default 1).

        See :func:`difflab.sub` for the parameters, the derivative rule and examples.
        """
        return self - (other if alpha == 1 else other * alpha)

    def mul(self, other: Any) -> Tensor:
        """Product, elementwise: ``x * other``.

        See :func:`difflab.mul` for the parameters, the derivative rule and examples.
        """
        return self * other

    def div(self, other: Any) -> Tensor:
        """Quotient, elementwise: ``x / other``.

        See :func:`difflab.div` for the parameters, the derivative rule and examples.
        """
        return self / other

    def pow(self, exponent: Any) -> Tensor:
        """Power, elementwise: ``x ** exponent``.

        See :func:`difflab.pow` for the parameters, the derivative rule and examples.
        """
        return self**exponent

    def clip(self, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
        """``clamp`` under NumPy's name (``clamp`` is generated from its primitive).

        See :func:`difflab.clamp` for the parameters, the derivative rule and examples.
        """
        return self.clamp(min, max)

    # --------------------------------------------------------------- reductions
    def sum(self, dim: Any = None, keepdim: bool = False, *, axis: Any = None,
            keepdims: bool | None = None, dtype: Any = None) -> Tensor:
        """Σ over ``dim`` (all elements by default); ``axis``/``keepdims`` accepted too.

        ``dtype`` casts the result.  See :func:`difflab.sum` for the parameters and
        examples.
        """
        dim = axis if dim is None else dim
        keepdim = keepdims if keepdims is not None else keepdim
        out = _apply(_structural.Sum, self, axis=as_axes(dim), keepdims=keepdim)
        return out if dtype is None else out.to(dtype)

    def mean(self, dim: Any = None, keepdim: bool = False, *, axis: Any = None,
             keepdims: bool | None = None) -> Tensor:
        """Σx / n over ``dim`` (all elements by default).

        See :func:`difflab.mean` for the parameters and examples.
        """
        dim = axis if dim is None else dim
        keepdim = keepdims if keepdims is not None else keepdim
        if self.dtype.kind not in "fc":
            raise RuntimeError(
                f"mean() needs a floating point tensor, got {self.dtype}: call .float() first"
            )
        return _apply(_structural.Mean, self, axis=as_axes(dim), keepdims=keepdim)

    def var(self, dim: Any = None, keepdim: bool = False, unbiased: bool = True, *,
            correction: Any = None) -> Tensor:
        """Σ(x - mean)² / (n - correction); correction = 1 (unbiased) by default."""
        correction = (1 if unbiased else 0) if correction is None else correction
        centered = self - self.mean(dim, keepdim=True)
        count = element_count(self.shape, as_axes(dim))
        return (centered * centered).sum(dim, keepdim) / max(count - correction, 0)

    def std(self, dim: Any = None, keepdim: bool = False, unbiased: bool = True, *,
            correction: Any = None) -> Tensor:
        return self.var(dim, keepdim, unbiased, correction=correction).sqrt()

    # amax, amin, argmax, argmin and prod are generated from their primitives' faces
    def max(self, dim: Any = None, keepdim: bool = False) -> Any:
        """The maximum; with ``dim``, a pair (values, indices) as in PyTorch; with a
        tensor, the elementwise maximum."""
        if is_tensor(dim):
            return self.maximum(dim)
        if dim is None:
            return self.amax()
        return MinMax((self.amax(dim, keepdim), self.argmax(dim, keepdim)))

    def min(self, dim: Any = None, keepdim: bool = False) -> Any:
        """The minimum (see :meth:`max`)."""
        if is_tensor(dim):
            return self.minimum(dim)
        if dim is None:
            return self.amin()
        return MinMax((self.amin(dim, keepdim), self.argmin(dim, keepdim)))

    def norm(self, p: Any = 2, dim: Any = None, keepdim: bool = False) -> Tensor:
        """The vector p-norm (p = 2 by default; 1, inf and 'fro' also)."""
        if p in (2, "fro"):
            return (self * self).sum(dim, keepdim).sqrt()
        if p == 1:
            return self.abs().sum(dim, keepdim)
        if p in (float("inf"), "inf"):
            return self.abs().amax(dim, keepdim)
        return (self.abs() ** p).sum(dim, keepdim) ** (1.0 / p)

    # ----------------------------------------------------------- linear algebra
    def matmul(self, other: Any) -> Tensor:
        """Matrix product ``x @ other``.

        See :func:`difflab.matmul` for the parameters and examples.
        """
        return self @ other

    def mm(self, other: Tensor) -> Tensor:
        if self.ndim != 2 or other.ndim != 2:
            raise RuntimeError(
                f"mm expects two matrices, got shapes {tuple(self.shape)} and "
                f"{tuple(other.shape)} (use matmul for batches and vectors)"
            )
        return self @ other

    def mv(self, vec: Tensor) -> Tensor:
        if self.ndim != 2 or vec.ndim != 1:
            raise RuntimeError(
                f"mv expects a matrix and a vector, got shapes {tuple(self.shape)} and "
                f"{tuple(vec.shape)}"
            )
        return self @ vec

    def dot(self, other: Tensor) -> Tensor:
        if self.ndim != 1 or other.ndim != 1:
            raise RuntimeError(
                f"1D tensors expected, but got {self.ndim}D and {other.ndim}D tensors"
            )
        return self @ other

    def t(self) -> Tensor:
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, got {self.ndim}")
        return self.T

    # ------------------------------------------------------------ shape & views
    def reshape(self, *shape: Any) -> Tensor:
        """The same values in another shape: ``x.reshape(2, 3)`` or ``x.reshape((2, 3))``.

        See :func:`difflab.reshape` for the parameters and examples.
        """
        shape = shape_args(shape)
        return view_of(self, _apply(_structural.Reshape, self, shape=shape))

    def view(self, *shape: Any) -> Tensor:
        if shape and not isinstance(shape[0], (tuple, list)) and not isinstance(shape[0], int):
            return self.to(shape[0])  # view(dtype)
        return self.reshape(*shape)

    def view_as(self, other: Tensor) -> Tensor:
        return self.reshape(other.shape)

    def reshape_as(self, other: Tensor) -> Tensor:
        return self.reshape(other.shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        """Dimensions ``start_dim`` to ``end_dim`` merged into one.

        See :func:`difflab.flatten` for the parameters and examples.
        """
        if self.ndim == 0:
            return self.reshape(1)
        start, end = start_dim % self.ndim, end_dim % self.ndim
        shape = self.shape[:start] + (-1,) + self.shape[end + 1:]
        return self.reshape(shape)

    def ravel(self) -> Tensor:
        """The elements as a 1-D tensor (``reshape(-1)``).

        See :func:`difflab.reshape` for the parameters and examples.
        """
        return self.reshape(-1)

    def squeeze(self, dim: Any = None) -> Tensor:
        """The dimensions of size 1 removed (only ``dim``, if given).

        See :func:`difflab.squeeze` for the parameters and examples.
        """
        if dim is None:
            shape = tuple(n for n in self.shape if n != 1)
        else:
            dims = {d % max(self.ndim, 1) for d in ((dim,) if isinstance(dim, int) else dim)}
            shape = tuple(n for i, n in enumerate(self.shape) if not (i in dims and n == 1))
        return self.reshape(shape)

    def unsqueeze(self, dim: int) -> Tensor:
        """A dimension of size 1 inserted at ``dim``.

        See :func:`difflab.unsqueeze` for the parameters and examples.
        """
        dim = dim % (self.ndim + 1)
        return self.reshape(self.shape[:dim] + (1,) + self.shape[dim:])

    def permute(self, *dims: Any) -> Tensor:
        """The axes in the order ``dims``: ``x.permute(2, 0, 1)`` or ``x.permute((2, 0, 1))``.

        See :func:`difflab.permute` for the parameters and examples.
        """
        return view_of(self, _apply(_structural.Permute, self, axes=shape_args(dims)))

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        """Axes ``dim0`` and ``dim1`` swapped (a view).

        See :func:`difflab.transpose` for the parameters and examples.
        """
        axes = list(range(self.ndim))
        axes[dim0], axes[dim1] = axes[dim1], axes[dim0]
        return self.permute(*axes)

    swapaxes = transpose

    def expand(self, *sizes: Any) -> Tensor:
        sizes = shape_args(sizes)
        lead = len(sizes) - self.ndim
        shape = tuple(
            self.shape[i - lead] if (n == -1 and i >= lead) else n for i, n in enumerate(sizes)
        )
        return view_of(self, _apply(_structural.Expand, self, shape=shape))

    def expand_as(self, other: Tensor) -> Tensor:
        return self.expand(other.shape)

    def broadcast_to(self, shape: Any) -> Tensor:
        """The tensor broadcast to ``shape`` (a view; the gradient is summed back).

        See :func:`difflab.broadcast_to` for the parameters and examples.
        """
        return self.expand(*shape)

    def repeat(self, *sizes: Any) -> Tensor:
        """Tile the tensor ``sizes[i]`` times along each dimension (copies)."""
        sizes = shape_args(sizes)
        if len(sizes) < self.ndim:
            padded = (1,) * (self.ndim - len(sizes)) + tuple(sizes)
            raise RuntimeError(
                f"repeat: {len(sizes)} size(s) {tuple(sizes)} for a tensor of {self.ndim} "
                f"dimensions (shape {tuple(self.shape)}): give one count per dimension, "
                f"e.g. x.repeat{padded}"
            )
        x = self.reshape((1,) * (len(sizes) - self.ndim) + self.shape)
        # Each repeat is an expand of a new axis followed by a reshape: no new rule needed.
        expanded_shape, final_shape, view_shape = [], [], []
        for n, r in zip(x.shape, sizes):
            view_shape += [1, n]
            expanded_shape += [r, n]
            final_shape.append(r * n)
        return x.reshape(view_shape).expand(expanded_shape).reshape(final_shape)

    def flip(self, dims: Any) -> Tensor:
        out = self
        for d in (dims,) if isinstance(dims, int) else dims:
            out = _apply(_structural.Flip, out, axis=d)
        return out



    def unbind(self, dim: int = 0) -> tuple:
        index = [slice(None)] * self.ndim
        pieces = []
        for i in range(self.shape[dim]):
            index[dim] = i
            pieces.append(self[tuple(index)])
        return tuple(pieces)

    def contiguous(self) -> Tensor:
        return self

    def masked_fill(self, mask: Any, value: Any) -> Tensor:
        """``value`` where the boolean ``mask`` (broadcast to this shape) is True."""
        mask_dtype = getattr(unwrap(mask), "dtype", None)
        if mask_dtype is None or mask_dtype.kind != "b":
            raise RuntimeError(
                f"masked_fill only supports boolean masks, but got mask with dtype "
                f"{mask_dtype}; compare to get one (mask = x > 0) or use mask.bool()"
            )
        if is_tensor(value) and value.ndim != 0:
            raise RuntimeError(
                f"masked_fill only supports a 0-dimensional value tensor, but got tensor with "
                f"{value.ndim} dimension(s); use difflab.where(mask, values, x) for many values"
            )
        return _apply(_structural.Where, unwrap(mask), *promote(value, self))

    # ---------------------------------------------------------------- indexing
    def __getitem__(self, index: Any) -> Tensor:
        index = index_arrays(index)
        return view_of(self, _apply(_structural.Index, self, index=index))

    # ===================================================================== compat-core
    # PyTorch behaviour that teaching programs reach for (issue 14, compat-core block).

    def nelement(self) -> int:
        """The number of elements (PyTorch's older name for ``numel``)."""
        return self.array.size

    def __format__(self, spec: str) -> str:
        """``f"{loss:.4f}"``: a 0-d tensor formats as its number, as in PyTorch."""
        if self.array.ndim == 0:
            return format(self.item(), spec)
        if spec:
            raise TypeError(
                f"unsupported format string {spec!r} for a tensor of shape "
                f"{tuple(self.array.shape)}: only 0-d tensors format as numbers (use .item(), "
                f"or index one element)"
            )
        return repr(self)

    def _triangle(self, diagonal: int, lower: bool, name: str) -> Tensor:
        if self.array.ndim < 2:
            raise RuntimeError(
                f"{name}: input tensor must have at least 2 dimensions (got shape "
                f"{tuple(self.array.shape)}); make a matrix first, e.g. x.unsqueeze(0)"
            )
        xp = backend.array_module(self.array)
        rows, cols = self.array.shape[-2:]
        keep = (xp.tri(rows, cols, diagonal, dtype=bool) if lower
                else ~xp.tri(rows, cols, diagonal - 1, dtype=bool))
        return _apply(_structural.Where, keep, *promote(self, 0))

    def tril(self, diagonal: int = 0) -> Tensor:
        """The lower triangle of the last two dimensions (j ≤ i + diagonal); zeros above.
        Gradients flow to the kept entries only."""
        return self._triangle(diagonal, True, "tril")

    def triu(self, diagonal: int = 0) -> Tensor:
        """The upper triangle of the last two dimensions (j ≥ i + diagonal); zeros below."""
        return self._triangle(diagonal, False, "triu")

    def isclose(self, other: Any, rtol: float = 1e-5, atol: float = 1e-8,
                equal_nan: bool = False) -> Tensor:
        """Where |self - other| ≤ atol + rtol·|other| (no gradient; tensors that require
        grad are fine)."""
        a, b = promote(self.detach(), unwrap_operand(other.detach() if is_tensor(other)
                                                     else other))
        return _apply(_ops.PRIMITIVES["isclose"], a, b, rtol=rtol, atol=atol,
                      equal_nan=equal_nan)

    def new_zeros(self, *size: Any, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:
        """Zeros of ``size``, with this tensor's dtype and device unless given."""
        return self._new(np.zeros(shape_args(size)), dtype, device, requires_grad)

    def new_ones(self, *size: Any, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False) -> Tensor:
        """Ones of ``size``, with this tensor's dtype and device unless given."""
        return self._new(np.ones(shape_args(size)), dtype, device, requires_grad)

    def new_full(self, size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False) -> Tensor:
        """``fill_value`` everywhere in ``size``, with this tensor's dtype and device."""
        return self._new(np.full(shape_args((size,)), fill_value), dtype, device,
                         requires_grad)

    def new_empty(self, *size: Any, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:
        """A tensor of ``size`` to be filled (difflab fills it with zeros)."""
        return self.new_zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)

    def new_tensor(self, data: Any, *, dtype: Any = None, device: Any = None,
                   requires_grad: bool = False) -> Tensor:
        """A copy of ``data`` with this tensor's dtype and device unless given."""
        data = data.detach() if is_tensor(data) else data
        return self._new(data, dtype, device, requires_grad)


    # ================================================================= end compat-core

    # -----------------------------------------------------------------------------------
    # compat-ops (issue 14): indexing along a dimension, sorting, products.  ``x.gather``,
    # ``x.sort``, ``x.topk``, ... are the functions of difflab.functions themselves (where
    # the math and errors are), attached to Tensor there (functions._TENSOR_METHODS).
    def scatter_(self, dim: int, index: Any, src: Any = None, *, value: Any = None,
                 reduce: str | None = None) -> Tensor:
        self[...] = self.scatter(dim, index, src, value=value, reduce=reduce)
        return self

    def scatter_add_(self, dim: int, index: Any, src: Any) -> Tensor:
        self[...] = self.scatter_add(dim, index, src)
        return self

    def masked_fill_(self, mask: Any, value: Any) -> Tensor:
        self[...] = self.masked_fill(mask, value)
        return self
