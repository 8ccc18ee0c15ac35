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
from difflab.dtypes import check_memory_format
from difflab.ops import registry as _ops
from difflab.ops import structural as _structural
from difflab.tensor_arguments import (
    as_axes,
    dim_index,
    dim_indices,
    element_count,
    fill_number,
    index_arrays,
    integer,
    is_tensor,
    new_shape,
    operand,
    promote,
    reduction_dims,
    require_tensor,
    rounded_division,
    shape_args,
    times_alpha,
    truth_values,
    unwrap,
    unwrap_operand,
    view_of,
    wrap,
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
    """``a // b``, ``a % b`` or ``a / b`` rounded towards 0 (``name``: the primitive) in
    the common dtype, integers staying integers (PyTorch floors, as Python does)."""
    return _apply(_ops.PRIMITIVES[name], *promote(unwrap_operand(a), unwrap_operand(b)))


def _correction(unbiased: bool | None, correction: Any) -> Any:
    """The c of var's n - c from PyTorch's two spellings: ``correction`` (1 by default)
    or the older ``unbiased`` (True: 1, False: 0); both at once are refused, as there."""
    if unbiased is not None and correction is not None:
        raise TypeError("var/std: give correction or unbiased, not both (unbiased=True is "
                        "correction=1, unbiased=False is correction=0)")
    if correction is not None:
        return correction
    return 0 if unbiased is False else 1


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
        """True when ``x`` and ``other`` have the same shape and the same values.

        A Python bool, not a tensor: different shapes give False (no broadcasting), and NaN
        is not equal to itself.  No gradient (use it in tests and checks, not in a loss).

        Parameters
        ----------
        other : Tensor
            The tensor to compare with.

        Returns
        -------
        bool
            Whether the shapes match and every pair of elements is equal.

        See Also
        --------
        difflab.equal : the same, as a function.
        difflab.Tensor.allclose : equal within a tolerance.
        difflab.eq : the elementwise comparison (a bool tensor).

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([1.0, 2.0])
        >>> x.equal(dl.tensor([1.0, 2.0])), x.equal(dl.tensor([1.0, 3.0]))
        (True, False)
        >>> x.equal(dl.tensor([[1.0, 2.0]]))  # another shape, even if it broadcasts
        False
        """
        if self.shape != require_tensor(other, "equal").shape:
            return False
        same = _apply(_ops.PRIMITIVES["eq"], self, other)
        return bool(_apply(_ops.PRIMITIVES["all"], same))

    def allclose(self, other: Any, rtol: float = 1e-5, atol: float = 1e-8,
                 equal_nan: bool = False) -> bool:
        """Whether every element of ``x`` is close to ``other`` (a Python bool).

        See :func:`difflab.allclose`.
        """
        return bool(self.isclose(other, rtol, atol, equal_nan).all())

    def isnan(self) -> Tensor:
        """Where ``x`` is NaN, elementwise: a bool tensor (no gradient).

        See :func:`difflab.isnan`.
        """
        return _apply(_ops.PRIMITIVES["isnan"], self)

    def isinf(self) -> Tensor:
        """Where ``x`` is +inf or -inf, elementwise: a bool tensor (no gradient).

        See :func:`difflab.isinf`.
        """
        return _apply(_ops.PRIMITIVES["isinf"], self)

    def isfinite(self) -> Tensor:
        """Where ``x`` is neither inf nor NaN, elementwise: a bool tensor (no gradient).

        See :func:`difflab.isfinite`.
        """
        return _apply(_ops.PRIMITIVES["isfinite"], self)

    def any(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        """Whether any element is nonzero (along ``dim``, if given): a bool tensor.

        See :func:`difflab.any`.
        """
        return _apply(_ops.PRIMITIVES["any"], self, axis=dim, keepdims=keepdim)

    def all(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        """Whether every element is nonzero (along ``dim``, if given): a bool tensor.

        See :func:`difflab.all`.
        """
        return _apply(_ops.PRIMITIVES["all"], self, axis=dim, keepdims=keepdim)

    def sign(self) -> Tensor:
        """The sign of ``x``, elementwise: -1, 0 or 1 (derivative 0: its gradient is zeros).

        See :func:`difflab.sign`.
        """
        return _apply(_ops.PRIMITIVES["sign"], self)

    def round(self, *, decimals: int = 0) -> Tensor:
        """``x`` rounded to the nearest integer (or to ``decimals`` places), halves to even.

        Its derivative is 0 (its gradient is zeros).  See :func:`difflab.round`.
        """
        if not decimals:
            return _apply(_ops.PRIMITIVES["round"], self)
        if isinstance(decimals, bool) or not isinstance(decimals, (int, np.integer)):
            raise TypeError(f"round(): decimals must be an int, got {type(decimals).__name__}")
        if self.dtype.kind not in "fO":  # (PyTorch: "round_cpu" not implemented; the kind:
            # a Dual's dtype is NumPy's, symbols' object, real numbers)
            raise RuntimeError(f"round(decimals={decimals}) needs a floating-point tensor, "
                               f"got {self.dtype}: convert it first with .float()")
        scale = 10.0 ** decimals  # (as PyTorch and numpy.around: not the nearest decimal)
        return _apply(_ops.PRIMITIVES["round"], self * scale) / scale

    def floor(self) -> Tensor:
        """The largest integer <= ``x``, elementwise (no gradient flows through it).

        See :func:`difflab.floor`.
        """
        return _apply(_ops.PRIMITIVES["floor"], self)

    def ceil(self) -> Tensor:
        """The smallest integer >= ``x``, elementwise (no gradient flows through it).

        See :func:`difflab.ceil`.
        """
        return _apply(_ops.PRIMITIVES["ceil"], self)

    # ---------------------------------------------------- elementwise functions
    def rsqrt(self) -> Tensor:
        """The reciprocal square root ``1 / sqrt(x)``, elementwise.

        See :func:`difflab.rsqrt`.
        """
        return 1.0 / self.sqrt()

    def square(self) -> Tensor:
        """The square ``x * x``, elementwise.

        See :func:`difflab.square`.
        """
        return self * self

    def reciprocal(self) -> Tensor:
        """The reciprocal ``1 / x``, elementwise.

        See :func:`difflab.reciprocal`.
        """
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
        return self + times_alpha(other, alpha, self, "add")

    def sub(self, other: Any, alpha: Any = 1) -> Tensor:
        """Difference, elementwise: ``x - alpha * other`` (PyTorch's ``alpha``, default 1).

        See :func:`difflab.sub` for the parameters, the derivative rule and examples.
        """
        return self - times_alpha(other, alpha, self, "sub")

    def mul(self, other: Any) -> Tensor:
        """Product, elementwise: ``x * other``.

        See :func:`difflab.mul` for the parameters, the derivative rule and examples.
        """
        return self * other

    def div(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        """Quotient, elementwise: ``x / other``, or rounded (``rounding_mode``).

        See :func:`difflab.div` for the parameters, the derivative rule and examples.
        """
        name = rounded_division(rounding_mode)
        return self / other if name is None else _integer_division(name, self, other)

    divide = true_divide = div  # (NumPy's and PyTorch's other names)

    def floor_divide(self, other: Any) -> Tensor:
        """``x // other``: the quotient rounded down, no derivative.

        See :func:`difflab.floor_divide` for the parameters and examples.
        """
        return _integer_division("floor_divide", self, other)

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
        dim = axis if dim is None else reduction_dims(dim)  # (dim=[]: all, as PyTorch's)
        keepdim = keepdims if keepdims is not None else keepdim
        out = _apply(_structural.Sum, self, axis=as_axes(dim, "sum"), keepdims=keepdim)
        return out if dtype is None else out.to(dtype)

    def mean(self, dim: Any = None, keepdim: bool = False, *, axis: Any = None,
             keepdims: bool | None = None) -> Tensor:
        """Σx / n over ``dim`` (all elements by default).

        See :func:`difflab.mean` for the parameters and examples.
        """
        dim = axis if dim is None else reduction_dims(dim)  # (dim=[]: all, as PyTorch's)
        keepdim = keepdims if keepdims is not None else keepdim
        if self.dtype.kind not in "fcO":  # (O: sympy expressions, real numbers)
            raise RuntimeError(
                f"mean() needs a floating point tensor, got {self.dtype}: call .float() first"
            )
        return _apply(_structural.Mean, self, axis=as_axes(dim, "mean"), keepdims=keepdim)

    def var(self, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
            correction: Any = None) -> Tensor:
        r"""The variance of the elements (over ``dim``, if given).

        See :func:`difflab.var` (the same arguments: ``x.var(1, False)`` is the
        variance along dim 1 with ``unbiased=False``, as in PyTorch).
        """
        if isinstance(dim, bool) and unbiased is None:  # var(unbiased): PyTorch's oldest form
            dim, unbiased = None, dim
        correction = _correction(unbiased, correction)
        dim = reduction_dims(dim)  # (dim=[]: every element, as PyTorch's)
        if self.dtype.kind not in "fcO":  # (O: sympy expressions, real numbers)
            raise RuntimeError(f"var() and std() need a floating point tensor, got "
                               f"{self.dtype}: call .float() first")
        centered = self - self.mean(dim, keepdim=True)  # (the mean checks the dims)
        count = element_count(self.shape, as_axes(dim, "var"))
        if self.dtype.kind == "c":  # |z - mean|², real (PyTorch's variance of complex values)
            squares = (centered.conj() * centered).real
        else:
            squares = centered * centered
        return squares.sum(dim, keepdim) / max(count - correction, 0)

    def std(self, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
            correction: Any = None) -> Tensor:
        r"""The standard deviation of the elements (over ``dim``, if given).

        See :func:`difflab.std` (the square root of :meth:`difflab.Tensor.var`, the same
        arguments).
        """
        return self.var(dim, unbiased, keepdim, correction=correction).sqrt()

    # amax, amin, argmax, argmin and prod are generated from their primitives' faces; max
    # and min are difflab.max and difflab.min (functions._TENSOR_METHODS)

    def norm(self, p: Any = 2, dim: Any = None, keepdim: bool = False) -> Tensor:
        """The vector p-norm of ``x`` (over ``dim``, if given); p = 2 by default.

        See :func:`difflab.norm`.
        """
        if self.dtype.kind == "c":  # (the norm of the moduli, real, as PyTorch's)
            return self.abs().norm(p, dim, keepdim)
        if p is None or p in (2, "fro"):  # (None: PyTorch's default, the 2-norm)
            return (self * self).sum(dim, keepdim).sqrt()
        if p == 1:
            return self.abs().sum(dim, keepdim)
        if p in (float("inf"), "inf"):
            return self.abs().amax(dim, keepdim)
        if p in (float("-inf"), "-inf"):
            return self.abs().amin(dim, keepdim)
        if isinstance(p, str):
            raise ValueError(f"norm: p must be a number, 'fro' or 'inf', got {p!r}; for the "
                             f"nuclear norm use difflab.linalg.matrix_norm(x, 'nuc')")
        if p == 0:  # (the count of nonzero entries: 1/p would divide by zero)
            return (self != 0).to(self.dtype).sum(dim, keepdim)
        return (self.abs() ** p).sum(dim, keepdim) ** (1.0 / p)

    # ----------------------------------------------------------- linear algebra
    def matmul(self, other: Any) -> Tensor:
        """Matrix product ``x @ other``.

        See :func:`difflab.matmul` for the parameters and examples.
        """
        return self @ other

    def mm(self, other: Tensor) -> Tensor:
        """The matrix product of two matrices (2-d only; :meth:`difflab.Tensor.matmul` for batches).

        See :func:`difflab.mm`.
        """
        if require_tensor(other, "mm", "mat2").ndim != 2 or self.ndim != 2:
            raise RuntimeError(
                f"mm expects two matrices, got shapes {tuple(self.shape)} and "
                f"{tuple(other.shape)} (use matmul for batches and vectors)"
            )
        return self @ other

    def mv(self, vec: Tensor) -> Tensor:
        """The product of this matrix and the vector ``vec``.

        See :func:`difflab.mv`.
        """
        if require_tensor(vec, "mv", "vec").ndim != 1 or self.ndim != 2:
            raise RuntimeError(
                f"mv expects a matrix and a vector, got shapes {tuple(self.shape)} and "
                f"{tuple(vec.shape)}"
            )
        return self @ vec

    def dot(self, other: Tensor) -> Tensor:
        """The inner product of two 1-d tensors (a 0-d tensor).

        See :func:`difflab.dot`.
        """
        if require_tensor(other, "dot", "tensor").ndim != 1 or self.ndim != 1:
            raise RuntimeError(
                f"1D tensors expected, but got {self.ndim}D and {other.ndim}D tensors"
            )
        return self @ other

    def t(self) -> Tensor:
        """The transpose of a matrix (a tensor of at most 2 dimensions).

        See :func:`difflab.t`.
        """
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, got {self.ndim}")
        return self.T

    # ------------------------------------------------------------ shape & views
    def reshape(self, *shape: Any) -> Tensor:
        """The same values in another shape: ``x.reshape(2, 3)`` or ``x.reshape((2, 3))``.

        See :func:`difflab.reshape` for the parameters and examples.
        """
        shape = shape_args(shape, "reshape")
        return view_of(self, _apply(_structural.Reshape, self, shape=shape))

    def view(self, *shape: Any) -> Tensor:
        """The same elements in another shape, sharing this tensor's memory.

        ``x.view(2, 3)`` or ``x.view((2, 3))``; one size may be -1 (inferred from the
        others).  A write into the view changes ``x`` and the other way round, and the
        gradient flows back through it as through :meth:`difflab.Tensor.reshape`.  As in
        PyTorch, the new shape must be reachable from ``x``'s strides without copying:
        ``x.t().view(-1)`` raises (a copy would not be a view); use
        :meth:`difflab.Tensor.reshape`, or ``x.t().contiguous().view(-1)``.

        ``x.view(dtype)`` reads the same bytes as ``dtype``, as PyTorch does (float32's
        1.0 is the int32 1065353216; :meth:`difflab.Tensor.to` converts the values
        instead): a view, through which no gradient flows.  A dtype of another size
        changes the last dimension's size by the ratio of the two.

        Parameters
        ----------
        *shape : int, tuple of int, or a dtype
            The new shape (its product must be ``x.numel()``), or a dtype.

        Returns
        -------
        Tensor
            A view of ``x`` with that shape (or, given a dtype, its bytes as that dtype).

        Raises
        ------
        ValueError
            If the shape does not hold exactly ``x.numel()`` elements, a size is below -1,
            or -1 is given twice.
        TypeError
            If a size is not an int.
        RuntimeError
            If ``x``'s strides cannot give the new shape without a copy (PyTorch's
            error; ``reshape`` copies there), or a dtype of another size does not
            divide a last dimension that is contiguous.

        See Also
        --------
        difflab.Tensor.reshape : the same for a shape.
        difflab.Tensor.view_as : the shape of another tensor.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.arange(6.0)
        >>> v = x.view(2, -1)
        >>> v.shape
        difflab.Size([2, 3])
        >>> v[0, 0] = 10.0  # a view: x changes too
        >>> x
        tensor([10.,  1.,  2.,  3.,  4.,  5.])
        >>> dl.tensor([1.0, 2.0]).view(dl.int32)   # the bytes of float32's 1 and 2
        tensor([1065353216, 1073741824], dtype=difflab.int32)
        """
        if shape and not isinstance(shape[0], (tuple, list)) and not isinstance(shape[0], int):
            return self._view_bytes(shape[0]) if is_tensor(self) else self.to(shape[0])
        out = self.reshape(*shape)
        # (reshape copies where the strides do not allow the shape; a view never does.
        # Only arrays have strides: vmap's batched values, dual numbers have none)
        plain = type(self.array) is np.ndarray or backend.is_gpu_array(self.array)
        if plain and out._version is not self._version and self.numel():
            raise RuntimeError(
                f"view size is not compatible with input tensor's size and stride (at least "
                f"one dimension spans across two contiguous subspaces): shape "
                f"{tuple(self.shape)} with strides {self.stride()} cannot be viewed as "
                f"{tuple(out.shape)}. Use .reshape(...) instead (it copies where needed), "
                f"or .contiguous() first")
        return out

    def _view_bytes(self, dtype: Any) -> Tensor:
        """``x.view(dtype)``: the memory read as ``dtype`` (no gradient: bits are no
        differentiable function of the values)."""
        try:
            array = self.array.view(np.dtype(dtype))
        except (TypeError, ValueError) as exc:
            raise RuntimeError(f"view({dtype}): cannot view a tensor of {self.dtype} and "
                               f"shape {tuple(self.shape)} as {dtype}: {exc}") from None
        return view_of(self, wrap(array))

    def view_as(self, other: Tensor) -> Tensor:
        """This tensor viewed in the shape of ``other``: ``x.view(other.shape)``.

        Only ``other``'s shape is used (not its dtype or values).

        Parameters
        ----------
        other : Tensor
            The tensor whose shape to take; it must have as many elements as ``x``.

        Returns
        -------
        Tensor
            A view of ``x`` (sharing its memory) of shape ``other.shape``.

        Raises
        ------
        ValueError
            If ``other`` does not have as many elements as ``x``.
        TypeError
            If ``other`` is not a tensor (a number or a list has no shape to take).

        See Also
        --------
        difflab.Tensor.view : view in a given shape.
        difflab.Tensor.reshape_as : the same.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.arange(6.0).view_as(dl.zeros(2, 3))
        tensor([[0., 1., 2.],
                [3., 4., 5.]])
        """
        return self.reshape(require_tensor(other, "view_as").shape)

    def reshape_as(self, other: Tensor) -> Tensor:
        """This tensor in the shape of ``other``: ``x.reshape(other.shape)``.

        Only ``other``'s shape is used.  As :meth:`difflab.Tensor.reshape`, the result
        shares ``x``'s memory, and the gradient is reshaped back.

        Parameters
        ----------
        other : Tensor
            The tensor whose shape to take; it must have as many elements as ``x``.

        Returns
        -------
        Tensor
            ``x``'s elements in ``other.shape``.

        Raises
        ------
        ValueError
            If ``other`` does not have as many elements as ``x``.
        TypeError
            If ``other`` is not a tensor (a number or a list has no shape to take).

        See Also
        --------
        difflab.Tensor.reshape : reshape to a given shape.
        difflab.Tensor.view_as : the same.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([[1.0, 2.0], [3.0, 4.0]]).reshape_as(dl.zeros(4))
        tensor([1., 2., 3., 4.])
        """
        return self.reshape(require_tensor(other, "reshape_as").shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        """Dimensions ``start_dim`` to ``end_dim`` merged into one.

        See :func:`difflab.flatten` for the parameters and examples.
        """
        start, end = (dim_index(d, self.ndim, "flatten") for d in (start_dim, end_dim))
        if self.ndim == 0:
            return self.reshape(1)
        if start > end:
            raise RuntimeError(f"flatten: start_dim ({start_dim}) cannot come after end_dim "
                               f"({end_dim})")
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
            dims = dim_indices(dim, self.ndim, "squeeze")
            shape = tuple(n for i, n in enumerate(self.shape) if not (i in dims and n == 1))
        return self.reshape(shape)

    def unsqueeze(self, dim: int) -> Tensor:
        """A dimension of size 1 inserted at ``dim``.

        See :func:`difflab.unsqueeze` for the parameters and examples.
        """
        dim = dim_index(dim, self.ndim + 1, "unsqueeze")
        return self.reshape(self.shape[:dim] + (1,) + self.shape[dim:])

    def permute(self, *dims: Any) -> Tensor:
        """The axes in the order ``dims``: ``x.permute(2, 0, 1)`` or ``x.permute((2, 0, 1))``.

        See :func:`difflab.permute` for the parameters and examples.
        """
        axes = shape_args(dims, "permute", "dims")
        return view_of(self, _apply(_structural.Permute, self, axes=axes))

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        """Axes ``dim0`` and ``dim1`` swapped (a view).

        See :func:`difflab.transpose` for the parameters and examples.
        """
        axes = list(range(self.ndim))
        axes[dim0], axes[dim1] = axes[dim1], axes[dim0]
        return self.permute(*axes)

    swapaxes = transpose

    def expand(self, *sizes: Any) -> Tensor:
        r"""This tensor repeated along dimensions of size 1, without copying (a view).

        Broadcasting made explicit: each dimension of size 1 may grow to any size, and new
        dimensions may be added in front; -1 keeps a dimension's size.  The elements are
        shared, not copied: ``x.expand(1000, 3)`` costs no memory.  The gradient is the
        transpose of the broadcast, summed over the expanded dimensions:

        .. math::
            \frac{\partial L}{\partial x_j} = \sum_{i} \frac{\partial L}{\partial y_{ij}}
            \quad\text{for } y = x\text{.expand}(m, n),\ x \text{ of shape } (1, n).

        Parameters
        ----------
        *sizes : int or tuple of int
            The new shape: ``x.expand(2, 3)`` or ``x.expand((2, 3))``.  Each size equals
            ``x``'s in that dimension, or ``x``'s is 1; -1 keeps ``x``'s size (not in an added
            leading dimension).

        Returns
        -------
        Tensor
            A view of ``x`` of shape ``sizes``.

        Raises
        ------
        RuntimeError
            If a size differs from a dimension of ``x`` that is not 1, if ``sizes`` has fewer
            dimensions than ``x``, if a size is negative, or if -1 is given for an added
            dimension (PyTorch's class).
        TypeError
            If a size is not an int.

        See Also
        --------
        difflab.Tensor.expand_as : expand to another tensor's shape.
        difflab.broadcast_to : the same, as a function.
        difflab.Tensor.repeat : tiles the data (copies).

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([[1.0], [2.0]], requires_grad=True)
        >>> y = x.expand(2, 3)
        >>> y
        tensor([[1., 1., 1.],
                [2., 2., 2.]], grad_fn=<ExpandBackward0>)
        >>> x.expand(4, -1, -1).shape
        difflab.Size([4, 2, 1])
        >>> y.sum().backward()
        >>> x.grad  # each element was used 3 times
        tensor([[3.],
                [3.]])
        """
        shape = _structural.expanded_shape(tuple(self.shape), shape_args(sizes, "expand"))
        return view_of(self, _apply(_structural.Expand, self, shape=shape))

    def expand_as(self, other: Tensor) -> Tensor:
        """This tensor expanded to the shape of ``other``: ``x.expand(other.shape)``.

        Only ``other``'s shape is used.  A view, with the gradient summed over the expanded
        dimensions, as :meth:`difflab.Tensor.expand`.

        Parameters
        ----------
        other : Tensor
            The tensor whose shape to take; ``x``'s shape must broadcast to it.

        Returns
        -------
        Tensor
            A view of ``x`` of shape ``other.shape``.

        Raises
        ------
        RuntimeError
            If ``x``'s shape does not broadcast to ``other``'s.
        TypeError
            If ``other`` is not a tensor (a number or a list has no shape to take).

        See Also
        --------
        difflab.Tensor.expand : expand to a given shape.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([1.0, 2.0]).expand_as(dl.zeros(3, 2))
        tensor([[1., 2.],
                [1., 2.],
                [1., 2.]])
        """
        return self.expand(require_tensor(other, "expand_as").shape)

    def broadcast_to(self, shape: Any) -> Tensor:
        """The tensor broadcast to ``shape`` (a view; the gradient is summed back).

        See :func:`difflab.broadcast_to` for the parameters and examples.
        """
        return self.expand(*shape)

    def repeat(self, *sizes: Any) -> Tensor:
        """This tensor tiled ``sizes[i]`` times along each dimension (a copy).

        ``x.repeat(2, 3)`` of a matrix stacks 2 copies down and 3 across.  With more sizes
        than ``x`` has dimensions, ``x`` is first given leading dimensions of size 1.  Each
        repeat is an expand of a new dimension followed by a reshape, so the gradient of an
        element is the sum of the gradients of its copies.

        Parameters
        ----------
        *sizes : int or tuple of int
            How many times to repeat each dimension: ``x.repeat(2, 3)`` or
            ``x.repeat((2, 3))``; at least as many as ``x`` has dimensions.

        Returns
        -------
        Tensor
            Of shape ``sizes[i] * x.shape[i]`` in each dimension (``x.shape`` padded with
            leading 1s).

        Raises
        ------
        RuntimeError
            If fewer sizes are given than ``x`` has dimensions, or a size is negative.
        TypeError
            If a size is not an int.

        See Also
        --------
        difflab.Tensor.expand : repeats dimensions of size 1 without copying.
        difflab.tile : NumPy's name, which pads missing sizes with 1.
        difflab.repeat_interleave : repeats each element in place.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([1.0, 2.0], requires_grad=True)
        >>> x.repeat(3)
        tensor([1., 2., 1., 2., 1., 2.], grad_fn=<ReshapeBackward0>)
        >>> x.repeat(2, 2)
        tensor([[1., 2., 1., 2.],
                [1., 2., 1., 2.]], grad_fn=<ReshapeBackward0>)
        >>> x.repeat(2, 2).sum().backward()
        >>> x.grad  # 4 copies of each
        tensor([4., 4.])
        """
        sizes = shape_args(sizes, "repeat", "the counts")
        if any(n < 0 for n in sizes):
            raise RuntimeError(f"repeat: the counts must be non-negative (0 gives an empty "
                               f"dimension), got {tuple(sizes)}")
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

    def flip(self, *dims: Any) -> Tensor:
        """The elements in reverse order along ``dims`` (a copy).

        ``x.flip(0, 1)`` or ``x.flip((0, 1))``.  See :func:`difflab.flip`.
        """
        if not dims:
            raise TypeError("flip() missing the dims to reverse: x.flip(0) or x.flip((0, 1))")
        dims = dim_indices(dims[0] if len(dims) == 1 else dims, self.ndim, "flip")
        if self.ndim == 0 or not dims:  # (nothing to reverse: a copy all the same)
            return self.clone()
        out = self
        for d in dims:
            out = _apply(_structural.Flip, out, axis=d)
        return out



    def unbind(self, dim: int = 0) -> tuple:
        """The slices along ``dim``, as a tuple of tensors with that dimension removed.

        See :func:`difflab.unbind`.
        """
        dim = dim_index(dim, self.ndim, "unbind", zero_d_has_dim=False)
        index = [slice(None)] * self.ndim
        pieces = []
        for i in range(self.shape[dim]):
            index[dim] = i
            pieces.append(self[tuple(index)])
        return tuple(pieces)

    # ------------------------------------------- PyTorch's questions about storage and kind
    @property
    def is_cpu(self) -> bool:
        """Whether the values live in CPU memory (a NumPy array), not on a GPU.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.zeros(2).is_cpu
        True
        """
        return not backend.is_gpu_array(self.array)

    def get_device(self) -> int:
        """The CUDA index of the GPU holding the values, or -1 on the CPU (as PyTorch's).

        Returns
        -------
        int

        Examples
        --------
        >>> import difflab as dl
        >>> dl.zeros(2).get_device()
        -1
        """
        device = backend.device_of(self.array)
        return -1 if device.type == "cpu" else (device.index or 0)

    def is_signed(self) -> bool:
        """Whether the dtype holds negative numbers (floats, complex, signed ints; not uint8, bool).

        Returns
        -------
        bool

        Examples
        --------
        >>> import difflab as dl
        >>> dl.zeros(2).is_signed(), dl.zeros(2, dtype=dl.uint8).is_signed()
        (True, False)
        """
        return np.dtype(self.array.dtype).kind in "fcib" and self.array.dtype != np.bool_

    def is_same_size(self, other: Any) -> bool:
        """Whether ``other`` has this tensor's shape.

        Parameters
        ----------
        other : Tensor
            The tensor compared.

        Returns
        -------
        bool

        Examples
        --------
        >>> import difflab as dl
        >>> dl.zeros(2, 3).is_same_size(dl.ones(2, 3)), dl.zeros(2).is_same_size(dl.ones(3))
        (True, False)
        """
        return tuple(self.shape) == tuple(other.shape)

    def share_memory_(self) -> Tensor:
        """Return ``self``: PyTorch moves the storage to shared memory, difflab does not.

        PyTorch's ``torch.multiprocessing`` hands a tensor in shared memory to other
        processes without a copy.  A difflab tensor's memory is a NumPy (or CuPy)
        array owned by this process; the call is accepted so that PyTorch programs run,
        and :meth:`difflab.Tensor.is_shared` keeps answering False: another process gets a copy.

        Returns
        -------
        Tensor
            ``self``.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.zeros(2)
        >>> x.share_memory_() is x, x.is_shared()
        (True, False)
        """
        return self

    def is_shared(self) -> bool:
        """Whether the values are in memory shared between processes: never in difflab.

        Returns
        -------
        bool
            False (see :meth:`difflab.Tensor.share_memory_`).

        Examples
        --------
        >>> import difflab as dl
        >>> dl.zeros(2).is_shared()
        False
        """
        return False

    def conj(self) -> Tensor:
        """The complex conjugate; for a real dtype the tensor itself (as PyTorch's).

        Returns
        -------
        Tensor
            ``self`` when real; else the conjugates (:func:`difflab.conj`, with its
            gradient).

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([1.0])
        >>> x.conj() is x, dl.tensor([1 + 2j]).conj()
        (True, tensor([1.-2.j], dtype=difflab.complex64))
        """
        return _apply(_ops.PRIMITIVES["conj"], self) if self.dtype.kind == "c" else self

    def resolve_conj(self) -> Tensor:
        """``self``: difflab's conjugates are computed, never lazy bits to resolve.

        Returns
        -------
        Tensor
            ``self``.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([1.0])
        >>> x.resolve_conj() is x, x.is_conj()
        (True, False)
        """
        return self

    def resolve_neg(self) -> Tensor:
        """``self``: difflab's negations are computed, never lazy bits to resolve.

        Returns
        -------
        Tensor
            ``self``.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([1.0])
        >>> x.resolve_neg() is x, x.is_neg()
        (True, False)
        """
        return self

    def is_conj(self) -> bool:
        """False: no difflab tensor carries PyTorch's lazy conjugate bit.

        Returns
        -------
        bool

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([1 + 2j]).conj().is_conj()
        False
        """
        return False

    def is_neg(self) -> bool:
        """False: no difflab tensor carries PyTorch's lazy negation bit.

        Returns
        -------
        bool

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([1.0]).is_neg()
        False
        """
        return False

    def new(self, *args: Any) -> Tensor:
        """PyTorch's legacy constructor: a tensor of ``self``'s dtype and device.

        ``x.new(2, 3)`` (or a size) is ``x.new_empty((2, 3))``, ``x.new([1, 2])`` is
        ``x.new_tensor([1, 2])``, ``x.new()`` an empty 1-D tensor.

        Parameters
        ----------
        *args : ints, a size, or data
            A shape, or the values.

        Returns
        -------
        Tensor
            ``self``'s dtype and device.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.zeros(2, dtype=dl.float64)
        >>> x.new(2, 3).shape, x.new([1, 2])
        (difflab.Size([2, 3]), tensor([1., 2.], dtype=difflab.float64))
        """
        if not args:
            return self.new_empty((0,))
        if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
            return self.new_empty(tuple(args))
        if len(args) == 1 and type(args[0]).__name__ == "Size":
            return self.new_empty(tuple(args[0]))
        if len(args) == 1:
            return self.new_tensor(args[0])
        raise TypeError(f"new(): expected sizes (ints) or one sequence of values, got {args!r}")

    def __dlpack__(self, **kwargs: Any) -> Any:
        """The DLPack capsule of this tensor's memory (``np.from_dlpack(x)``,
        ``torch.from_dlpack(x)``): the array's own, shared, not copied."""
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple:
        """Where the memory lives, as DLPack's (device type, index)."""
        return self.array.__dlpack_device__()

    def contiguous(self, memory_format: Any = None) -> Tensor:
        """This tensor with its elements in row-major order in memory: itself, or a copy.

        After ``transpose``, ``permute`` or a strided slice the elements are not in
        row-major order; ``contiguous()`` then copies them (recorded, as ``clone``), as
        PyTorch does.  So a write into the result reaches ``self`` exactly when the
        result is ``self``: code that relies on the copy (``y = x.t().contiguous();
        y.zero_()``) leaves ``x`` as it was, as in PyTorch.

        Parameters
        ----------
        memory_format : difflab.memory_format, optional
            Accepted for PyTorch's signature (``difflab.channels_last``, ...): difflab's
            values do not depend on the order in memory (one layout: row-major).

        Returns
        -------
        Tensor
            ``self`` (the same object) if :meth:`difflab.Tensor.is_contiguous`, else a
            contiguous copy.

        See Also
        --------
        difflab.Tensor.clone : a copy, always.
        difflab.Tensor.view : which needs a layout it can view without copying.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.ones(2, 3)
        >>> x.contiguous() is x
        True
        >>> y = x.t().contiguous()
        >>> y.is_contiguous(), y.view(6).shape
        (True, difflab.Size([6]))
        >>> _ = y.zero_()
        >>> x.sum().item()   # (y is a copy: x keeps its ones)
        6.0
        """
        check_memory_format(memory_format, "contiguous")
        array = getattr(self, "array", None)  # (vmap's batched values, dual numbers: no
        if not (type(array) is np.ndarray or backend.is_gpu_array(array)):  # layout: as is)
            return self
        return self if self.is_contiguous() else self.clone()

    def masked_fill(self, mask: Any, value: Any) -> Tensor:
        """A copy with ``value`` where the boolean ``mask`` is True.

        See :func:`difflab.masked_fill`.
        """
        mask_dtype = getattr(unwrap(mask), "dtype", None)
        if mask_dtype is None or mask_dtype.kind != "b" and not truth_values(unwrap(mask)):
            raise RuntimeError(
                f"masked_fill only supports boolean masks, but got mask with dtype "
                f"{mask_dtype}; compare to get one (mask = x > 0) or use mask.bool()"
            )
        if is_tensor(value) and value.ndim != 0:
            raise RuntimeError(
                f"masked_fill only supports a 0-dimensional value tensor, but got tensor with "
                f"{value.ndim} dimension(s); use difflab.where(mask, values, x) for many values"
            )
        # (symbols, a SymbolArray of dtype object, have no dtype to promote: the symbolic
        # form of where, sympy's Piecewise, chooses between them as they are)
        symbols = getattr(unwrap(self), "dtype", None) == np.dtype(object)
        return _apply(_structural.Where, unwrap(mask), *((value, self) if symbols
                                                         else promote(value, self)))

    # ---------------------------------------------------------------- indexing
    def __getitem__(self, index: Any) -> Tensor:
        index = index_arrays(index)
        return view_of(self, _apply(_structural.Index, self, index=index))

    # ===================================================================== compat-core
    # PyTorch behaviour that teaching programs reach for (issue 14, compat-core block).

    def nelement(self) -> int:
        """The number of elements (PyTorch's older name for :meth:`difflab.Tensor.numel`).

        The product of the sizes: 1 for a 0-d tensor, 0 when a size is 0.

        Returns
        -------
        int
            ``x.numel()``, a Python int.

        See Also
        --------
        difflab.Tensor.numel : the same.
        difflab.numel : the same, as a function.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.zeros(2, 3).nelement(), dl.tensor(5.0).nelement(), dl.zeros(0, 4).nelement()
        (6, 1, 0)
        """
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
        # (reads only ndim and shape: it runs on a Dual or a SymbolArray too, see
        # numpy_protocol.method_face)
        diagonal = integer(diagonal, name, "diagonal")  # (1.5 was a diagonal of its own)
        if self.ndim < 2:
            raise RuntimeError(
                f"{name}: input tensor must have at least 2 dimensions (got shape "
                f"{tuple(self.shape)}); make a matrix first, e.g. x.unsqueeze(0)"
            )
        xp = backend.array_module(self.array) if hasattr(self, "array") else np
        rows, cols = self.shape[-2:]
        keep = (xp.tri(rows, cols, diagonal, dtype=bool) if lower
                else ~xp.tri(rows, cols, diagonal - 1, dtype=bool))
        return _apply(_structural.Where, keep, *promote(self, 0))

    def tril(self, diagonal: int = 0) -> Tensor:
        """The lower triangle of the last two dimensions (j <= i + diagonal); zeros above.

        The method has no ``out`` keyword.

        See :func:`difflab.tril`.
        """
        return self._triangle(diagonal, True, "tril")

    def triu(self, diagonal: int = 0) -> Tensor:
        """The upper triangle of the last two dimensions (j >= i + diagonal); zeros below.

        The method has no ``out`` keyword.

        See :func:`difflab.triu`.
        """
        return self._triangle(diagonal, False, "triu")

    def isclose(self, other: Any, rtol: float = 1e-5, atol: float = 1e-8,
                equal_nan: bool = False) -> Tensor:
        """Where ``x`` and ``other`` are close, elementwise: a bool tensor (no gradient).

        See :func:`difflab.isclose`.
        """
        a, b = promote(self._off_tape(), unwrap_operand(other._off_tape() if is_tensor(other)
                                                     else other))
        return _apply(_ops.PRIMITIVES["isclose"], a, b, rtol=rtol, atol=atol,
                      equal_nan=equal_nan)

    def new_zeros(self, *size: Any, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:
        """A tensor of zeros of ``size``, with this tensor's dtype and device.

        The ``new_*`` methods make a new tensor "like this one" without naming its dtype and
        device (useful in code that runs on CPU and GPU, in float32 and float64).  The
        result is a new leaf, not connected to ``x``'s graph.

        Parameters
        ----------
        *size : int or tuple of int
            The shape: ``x.new_zeros(2, 3)`` or ``x.new_zeros((2, 3))``.
        dtype : difflab.dtype, optional, keyword-only
            The dtype; this tensor's by default.
        device : str or difflab.device, optional, keyword-only
            The device; this tensor's by default.
        requires_grad : bool, default False, keyword-only
            Whether autograd records operations on the result (a new leaf).

        Returns
        -------
        Tensor
            Zeros of shape ``size``.

        See Also
        --------
        difflab.zeros : zeros in the default dtype.
        difflab.Tensor.new_ones : ones.
        difflab.zeros_like : zeros of another tensor's shape.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([1, 2], dtype=dl.int32)
        >>> z = x.new_zeros(2, 3)
        >>> z.dtype, z.shape
        (difflab.int32, difflab.Size([2, 3]))
        >>> x.new_zeros((2,), dtype=dl.float64)
        tensor([0., 0.], dtype=difflab.float64)
        """
        return self._new(np.zeros(new_shape(size, "new_zeros")), dtype, device, requires_grad)

    def new_ones(self, *size: Any, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False) -> Tensor:
        """A tensor of ones of ``size``, with this tensor's dtype and device.

        As :meth:`difflab.Tensor.new_zeros`, filled with ones: a new leaf, not connected to
        ``x``'s graph.

        Parameters
        ----------
        *size : int or tuple of int
            The shape: ``x.new_ones(2, 3)`` or ``x.new_ones((2, 3))``.
        dtype : difflab.dtype, optional, keyword-only
            The dtype; this tensor's by default.
        device : str or difflab.device, optional, keyword-only
            The device; this tensor's by default.
        requires_grad : bool, default False, keyword-only
            Whether autograd records operations on the result (a new leaf).

        Returns
        -------
        Tensor
            Ones of shape ``size``.

        See Also
        --------
        difflab.ones : ones in the default dtype.
        difflab.Tensor.new_zeros : zeros.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.zeros(3, dtype=dl.float64)
        >>> x.new_ones(2)
        tensor([1., 1.], dtype=difflab.float64)
        >>> x.new_ones(2, dtype=dl.int64)
        tensor([1, 1])
        """
        return self._new(np.ones(new_shape(size, "new_ones")), dtype, device, requires_grad)

    def new_full(self, size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False) -> Tensor:
        """A tensor of ``size`` filled with ``fill_value``, with this tensor's dtype and device.

        As :meth:`difflab.Tensor.new_zeros`, but ``size`` is one argument (a tuple), as in
        PyTorch, and the value is converted to this tensor's dtype unless ``dtype`` is given.

        Parameters
        ----------
        size : int or tuple of int
            The shape.
        fill_value : number
            The value of every element.
        dtype : difflab.dtype, optional, keyword-only
            The dtype; this tensor's by default.
        device : str or difflab.device, optional, keyword-only
            The device; this tensor's by default.
        requires_grad : bool, default False, keyword-only
            Whether autograd records operations on the result (a new leaf).

        Returns
        -------
        Tensor
            ``fill_value`` everywhere, of shape ``size``.

        Raises
        ------
        TypeError
            If ``fill_value`` is not a number or a 0-d tensor (None), or a size is no int.
        ValueError
            If a size is negative.

        See Also
        --------
        difflab.full : the same in the default dtype.
        difflab.Tensor.new_zeros : zeros.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([1.0, 2.0])
        >>> x.new_full((2, 2), 7)
        tensor([[7., 7.],
                [7., 7.]])
        >>> dl.tensor([1, 2]).new_full((3,), 2.9)  # converted to x's int64
        tensor([2, 2, 2])
        """
        fill_number(fill_value, "new_full")
        return self._new(np.full(new_shape((size,), "new_full"), fill_value), dtype, device,
                         requires_grad)

    def new_empty(self, *size: Any, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:
        """A tensor of ``size`` to be filled, with this tensor's dtype and device.

        PyTorch leaves the memory uninitialised; difflab fills it with zeros, so a program
        that reads it before writing gets zeros rather than garbage (do not rely on it).

        Parameters
        ----------
        *size : int or tuple of int
            The shape: ``x.new_empty(2, 3)`` or ``x.new_empty((2, 3))``.
        dtype : difflab.dtype, optional, keyword-only
            The dtype; this tensor's by default.
        device : str or difflab.device, optional, keyword-only
            The device; this tensor's by default.
        requires_grad : bool, default False, keyword-only
            Whether autograd records operations on the result (a new leaf).

        Returns
        -------
        Tensor
            A tensor of shape ``size`` (its values are zeros in difflab).

        See Also
        --------
        difflab.empty : the same in the default dtype.
        difflab.Tensor.new_zeros : zeros, said so.

        Examples
        --------
        >>> import difflab as dl
        >>> e = dl.ones(1, dtype=dl.float64).new_empty(2, 3)
        >>> e.shape, e.dtype
        (difflab.Size([2, 3]), difflab.float64)
        """
        return self.new_zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)

    def new_tensor(self, data: Any, *, dtype: Any = None, device: Any = None,
                   requires_grad: bool = False) -> Tensor:
        """A new tensor holding a copy of ``data``, with this tensor's dtype and device.

        ``data`` is converted to this tensor's dtype unless ``dtype`` is given.  A tensor
        given as ``data`` is copied and detached: the result is a new leaf, not connected to
        its graph (PyTorch's ``data.detach().clone()``).

        Parameters
        ----------
        data : array_like or Tensor
            The values: a number, nested lists, a NumPy array or a tensor.
        dtype : difflab.dtype, optional, keyword-only
            The dtype; this tensor's by default.
        device : str or difflab.device, optional, keyword-only
            The device; this tensor's by default.
        requires_grad : bool, default False, keyword-only
            Whether autograd records operations on the result (a new leaf).

        Returns
        -------
        Tensor
            A copy of ``data``.

        See Also
        --------
        difflab.tensor : a tensor from data, in its inferred dtype.
        difflab.Tensor.new_zeros : zeros.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.zeros(1, dtype=dl.float64)
        >>> x.new_tensor([1, 2])
        tensor([1., 2.], dtype=difflab.float64)
        >>> w = dl.tensor([3.0], requires_grad=True)
        >>> x.new_tensor(w).requires_grad  # detached
        False
        """
        data = data.detach() if is_tensor(data) else data
        return self._new(data, dtype, device, requires_grad)


    # ================================================================= end compat-core

    # -----------------------------------------------------------------------------------
    # compat-ops (issue 14): indexing along a dimension, sorting, products.  ``x.gather``,
    # ``x.sort``, ``x.topk``, ... are the functions of difflab.functions themselves (where
    # the math and errors are), attached to Tensor there (functions._TENSOR_METHODS).
    def scatter_(self, dim: int, index: Any, src: Any = None, *, value: Any = None,
                 reduce: str | None = None) -> Tensor:
        """In-place :meth:`difflab.Tensor.scatter`: ``src`` written at ``index``.

        In place, as PyTorch's trailing underscore says: the result is written into this
        tensor's memory, its version counter goes up, and while recording, a leaf that requires
        grad may not be changed (update it under :class:`difflab.no_grad`).  Returns this
        tensor.

        See :func:`difflab.scatter`.
        """
        self[...] = self.scatter(dim, index, src, value=value, reduce=reduce)
        return self

    def scatter_add_(self, dim: int, index: Any, src: Any) -> Tensor:
        """In-place :meth:`difflab.Tensor.scatter_add`: ``src`` added at ``index`` along ``dim``.

        In place, as PyTorch's trailing underscore says: the result is written into this
        tensor's memory, its version counter goes up, and while recording, a leaf that requires
        grad may not be changed (update it under :class:`difflab.no_grad`).  Returns this
        tensor.

        See :func:`difflab.scatter_add`.
        """
        self[...] = self.scatter_add(dim, index, src)
        return self

    def masked_fill_(self, mask: Any, value: Any) -> Tensor:
        """In-place :meth:`difflab.Tensor.masked_fill`: ``value`` written where ``mask`` is True.

        In place, as PyTorch's trailing underscore says: the result is written into this
        tensor's memory, its version counter goes up, and while recording, a leaf that requires
        grad may not be changed (update it under :class:`difflab.no_grad`).  Returns this
        tensor.

        See :func:`difflab.masked_fill`.
        """
        self[...] = self.masked_fill(mask, value)
        return self
