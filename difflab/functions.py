"""The math functions of difflab: ``difflab.sin``, ``difflab.exp``, ``difflab.matmul``, ...

Each function looks at what flows through it and does the right thing:

=====================  ==================================================
argument               what ``sin(x)`` does
=====================  ==================================================
float, NumPy/CuPy      computes sin(x) with NumPy or CuPy
``Tensor``             computes and records the step on the tape (reverse)
``Dual``               computes sin(a) + cos(a)·b ε (forward mode)
sympy expression       builds the expression sin(x) (symbolic)
=====================  ==================================================

so a function written once with them works with every differentiator.  The
rule for each elementwise function lives in :mod:`difflab.ops.elementwise`;
this module only routes.

The module doubles as an *array namespace* with NumPy's names (``arcsin``,
``heaviside``, ``swapaxes``, ``axis=``/``keepdims=``): when a backward pass
is itself recorded (``create_graph=True``), derivative rules receive this
module as ``xp`` and so build differentiable tensors instead of arrays.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from difflab import backend
from difflab.autograd.engine import apply
from difflab.ops import elementwise, nn_ops, registry, structural
from difflab.ops.structural import BinaryOp, UnaryOp
from difflab.tensor import Tensor
from difflab.tensor_arguments import (
    MinMax,
    index_arrays,
    no_grad_result,
    promote,
    promote_all,
    unary_operand,
    unwrap,
)

#: Record a primitive on the tape: ``record_primitive(primitive, *inputs, **params)``.  Rules
#: that call other primitives (``nn_ops.im2col``) use it when their backward is itself
#: recorded (``create_graph=True``), since this module is then their ``xp``.
record_primitive = apply

# ------------------------------------------------------------------- dispatch


class TypeHandler:
    """How a number-like type (``Dual``, sympy expressions) runs elementwise primitives.

    Register one with :func:`register_type`; difflab's own forward and
    symbolic differentiators do.  ``op`` is the registry's primitive; its
    ``rule`` holds the forward, the derivative and the math.
    """

    def unary(self, op: UnaryOp, x: Any) -> Any:
        raise NotImplementedError

    def binary(self, op: BinaryOp, a: Any, b: Any) -> Any:
        raise NotImplementedError

    def where(self, cond: Any, a: Any, b: Any) -> Any:
        raise TypeError(f"where() is not supported for {type(self).__name__}")


_handlers: dict[type, TypeHandler | None] = {}  # None: looked up, no handler


def register_type(cls: type, handler: TypeHandler) -> None:
    """Route difflab's math functions on instances of ``cls`` (and subclasses) to ``handler``."""
    for looked_up in [c for c, h in _handlers.items() if h is None]:
        del _handlers[looked_up]  # a type found without a handler may be a subclass of cls
    _handlers[cls] = handler


def _handler_for(x: Any) -> TypeHandler | None:
    cls = type(x)
    if cls in _handlers:
        return _handlers[cls]
    handler = next((h for registered, h in list(_handlers.items())
                    if h is not None and isinstance(x, registered)), None)
    _handlers[cls] = handler  # remembered, also when there is none
    return handler


def _plain(x: Any) -> Any:
    if isinstance(x, (list, tuple)):
        return np.asarray(x, dtype=float)
    return x


def _unary(op: UnaryOp, x: Any) -> Any:
    if isinstance(x, Tensor):
        return apply(op, unary_operand(op, x))
    handler = _handler_for(x)
    if handler is not None:
        return handler.unary(op, x)
    x = _plain(x)
    try:
        return op.rule.forward(backend.array_module(x), x)
    except TypeError:
        raise TypeError(
            f"difflab.{op.name} got an unsupported input of type {type(x).__name__}: expected "
            f"a number, an array, a Tensor, a Dual or a sympy expression (call "
            f"difflab.diff.symbolic's functions once to enable sympy)"
        ) from None


def _binary(op: BinaryOp, a: Any, b: Any) -> Any:
    # The handler first: a dual number (or sympy expression) with a Tensor constant is
    # the dual number's operation, so that its tangents are carried, never dropped.
    handler = _handler_for(a) or _handler_for(b)
    if handler is not None:
        return handler.binary(op, a, b)
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return apply(op, *promote(a, b, not op.rule.keeps_integers))
    a, b = _plain(a), _plain(b)
    return op.rule.forward(backend.array_module(a), a, b)


# ------------------------------------------------------ elementwise functions


def elementwise_function(op: UnaryOp | BinaryOp) -> Any:
    """``difflab.<name>`` for an elementwise primitive: one function that routes on
    what flows through it (see the table at the top of this module)."""
    rule = op.rule
    if isinstance(op, UnaryOp):
        def function(input: Any, *, out: Tensor | None = None) -> Any:  # noqa: A002
            return _into(out, _unary(op, input))
    else:
        def function(input: Any, other: Any, *, out: Tensor | None = None) -> Any:  # noqa: A002
            return _into(out, _binary(op, input, other))
    function.__name__ = function.__qualname__ = op.name
    function.__module__ = __name__
    kinks = f"  At kinks: {rule.kinks}." if rule.kinks else ""
    function.__doc__ = f"{rule.description or op.name}.  {rule.math}.{kinks}"
    return function


#: The names each elementwise function is published under here: its own and NumPy's
#: (``asin`` and ``arcsin``), so that this module also serves as an array namespace.
ELEMENTWISE: dict[str, Any] = {}
for _op in registry.elementwise_ops():
    ELEMENTWISE[_op.name] = elementwise_function(_op)
    if _op.rule.numpy_name:
        ELEMENTWISE.setdefault(_op.rule.numpy_name, ELEMENTWISE[_op.name])
globals().update(ELEMENTWISE)  # difflab.sin, difflab.exp, ... (one per registered rule)
true_divide = ELEMENTWISE["div"]


def register_primitive(rule: Any, *, replace: bool = False) -> Any:
    """Teach difflab a new elementwise primitive; returns its function (``difflab.<name>``).

    ``rule`` is a subclass of :class:`difflab.ops.elementwise.Unary` (or
    ``Binary``) with a ``name``, a ``forward`` and a ``derivative`` (or
    ``d_da``/``d_db``).  From then on the function works on floats, arrays,
    tensors (the tape and ``backward``), ``Dual`` numbers (forward mode) and
    sympy expressions (symbolic), so all four methods, ``gradcheck``, the tape
    printer, ``Tensor.<name>`` and expressions (``difflab compare``) know it::

        class Cube(dl.ops.elementwise.Unary):
            name, math = "cube", "d x³/dx = 3x²"

            @staticmethod
            def forward(xp, x):
                return x * x * x

            @staticmethod
            def derivative(xp, x, y):
                return 3.0 * x * x

        cube = dl.register_primitive(Cube)
        dl.derivative(lambda x: cube(dl.sin(x)), method="symbolic")(1.0)

    ``replace=True`` redefines a primitive registered before under that name.
    """
    from difflab.tensor import add_elementwise_methods

    if isinstance(rule, type) and issubclass(rule, elementwise.Unary):
        op: Any = UnaryOp(rule)
    elif isinstance(rule, type) and issubclass(rule, elementwise.Binary):
        op = BinaryOp(rule)
    else:
        raise TypeError(
            f"register_primitive takes a subclass of difflab.ops.elementwise.Unary or Binary "
            f"(a rule: name, forward, derivative), got {rule!r}"
        )
    registry.register(op, replace=replace)
    ELEMENTWISE[op.name] = elementwise_function(op)
    add_elementwise_methods()
    return ELEMENTWISE[op.name]


def square(x: Any) -> Any:
    """x²."""
    return x * x


def clamp(input: Any, min: Any = None, max: Any = None) -> Any:  # noqa: A002
    """min(max(x, min), max).  Derivative: 1 inside the interval, 0 outside."""
    if isinstance(input, Tensor):
        return input.clamp(min, max)
    return backend.array_module(input).clip(input, min, max)


clip = clamp


def sign(x: Any) -> Any:
    """-1, 0 or 1 (piecewise constant: no gradient flows)."""
    if isinstance(x, Tensor):
        return x.sign()
    handler = _handler_for(x)
    if handler is not None:
        return handler.unary(UnaryOp(_Sign), x)
    return backend.array_module(x).sign(x)


def heaviside(x: Any, value_at_zero: Any) -> Any:
    """1 for x > 0, 0 for x < 0, ``value_at_zero`` at 0 (no gradient flows)."""
    if isinstance(x, Tensor):
        xp = backend.array_module(x.array)
        return no_grad_result(xp.heaviside(x.array, unwrap(value_at_zero)).astype(x.dtype))
    handler = _handler_for(x)
    if handler is not None:
        return handler.unary(UnaryOp(_heaviside_rule(value_at_zero)), x)
    return backend.array_module(x).heaviside(x, value_at_zero)


class _Sign(elementwise.Unary):
    name, math, saves = "sign", "d sign(x)/dx = 0 (almost everywhere)", ""

    @staticmethod
    def forward(xp, x):
        return xp.sign(x)

    @staticmethod
    def derivative(xp, x, y):
        return 0.0


def _heaviside_rule(value_at_zero: Any) -> type[elementwise.Unary]:
    class Heaviside(elementwise.Unary):
        name, math, saves = "heaviside", "d H(x)/dx = 0 (almost everywhere)", ""

        @staticmethod
        def forward(xp, x):
            return xp.heaviside(x, value_at_zero)

        @staticmethod
        def derivative(xp, x, y):
            return 0.0

    return Heaviside


def where(condition: Any, input: Any, other: Any, *,  # noqa: A002
          out: Tensor | None = None) -> Any:
    """``input`` where ``condition`` is true, else ``other`` (gradient flows to the chosen
    one); the two are promoted to their common dtype."""
    result = _where(condition, input, other)
    return result if out is None else _into(out, result)


def _where(cond: Any, a: Any, b: Any) -> Any:
    cond = unwrap(cond)
    handler = _handler_for(a) or _handler_for(b)  # first, as in _binary
    if handler is not None:
        return handler.where(cond, a, b)
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return apply(structural.Where, cond, *promote(a, b))
    return backend.array_module(cond).where(cond, a, b)


# ------------------------------------------------------ tensor-level functions


def _as_tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor._wrap(backend.array_module(x).asarray(x))


def sum(input: Any, dim: Any = None, keepdim: bool = False, *, axis: Any = None,  # noqa: A001, A002
        keepdims: bool | None = None) -> Any:
    """Σ x over ``dim`` (``axis``/``keepdims`` accepted too)."""
    dim = axis if dim is None else dim
    keepdim = keepdims if keepdims is not None else keepdim
    if isinstance(input, Tensor) or hasattr(input, "sum") and not isinstance(input, np.ndarray):
        return input.sum(axis=dim, keepdims=keepdim)
    return backend.array_module(input).sum(input, axis=dim, keepdims=keepdim)


def mean(input: Any, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A002
    """Σx / n over ``dim``."""
    if isinstance(input, Tensor):
        return input.mean(dim, keepdim)
    return backend.array_module(input).mean(input, axis=dim, keepdims=keepdim)


def matmul(input: Any, other: Any, *, out: Tensor | None = None) -> Any:  # noqa: A002
    """Matrix product input @ other (batched, with NumPy's rules for vectors)."""
    return input @ other if out is None else _into(out, input @ other)


def mm(a: Tensor, b: Tensor) -> Tensor:
    """Product of two matrices."""
    return _as_tensor(a).mm(b)


def mv(a: Tensor, v: Tensor) -> Tensor:
    """Matrix-vector product."""
    return _as_tensor(a).mv(v)


def dot(a: Tensor, b: Tensor) -> Tensor:
    """Dot product of two vectors."""
    return _as_tensor(a).dot(b)


def swapaxes(input: Any, axis0: int, axis1: int) -> Any:  # noqa: A002
    """x with two axes exchanged."""
    if isinstance(input, Tensor):
        return input.transpose(axis0, axis1)
    return backend.array_module(input).swapaxes(input, axis0, axis1)


def transpose(input: Any, dim0: Any = None, dim1: Any = None) -> Any:  # noqa: A002
    """``transpose(x, d0, d1)`` swaps two axes (PyTorch); ``transpose(x, axes)`` permutes."""
    if dim1 is not None:
        return swapaxes(input, dim0, dim1)
    if isinstance(input, Tensor):
        return input.permute(*(dim0 if dim0 is not None else range(input.ndim - 1, -1, -1)))
    return backend.array_module(input).transpose(input, dim0)


def permute(input: Tensor, dims: Sequence[int]) -> Tensor:  # noqa: A002
    """x with its axes in the order ``dims``."""
    return input.permute(*dims)


def reshape(input: Any, shape: Any) -> Any:  # noqa: A002
    """The same values in another shape."""
    if isinstance(input, (int, float)):  # a plain number has no .reshape method
        return backend.array_module(input).reshape(input, shape)
    return input.reshape(shape)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:  # noqa: A002
    """Merge dimensions ``start_dim`` to ``end_dim`` into one."""
    return input.flatten(start_dim, end_dim)


def squeeze(input: Tensor, dim: Any = None) -> Tensor:  # noqa: A002
    """Remove dimensions of size 1."""
    return input.squeeze(dim)


def unsqueeze(input: Tensor, dim: int) -> Tensor:  # noqa: A002
    """Insert a dimension of size 1 at ``dim``."""
    return input.unsqueeze(dim)


def expand_dims(x: Any, axis: int) -> Any:
    """NumPy's name for :func:`unsqueeze`."""
    if isinstance(x, Tensor):
        return x.unsqueeze(axis)
    return backend.array_module(x).expand_dims(x, axis)


def broadcast_to(x: Any, shape: Any) -> Any:
    """x repeated (without copying) to ``shape``."""
    if isinstance(x, Tensor):
        return x.expand(*shape)
    return backend.array_module(x).broadcast_to(x, shape)


def flip(input: Any, dims: Any) -> Any:  # noqa: A002  (PyTorch's keyword)
    """``input`` reversed along ``dims``."""
    if isinstance(input, Tensor):
        return input.flip(dims)
    return backend.array_module(input).flip(input, dims)


def cumsum(input: Any, dim: int = None, *, axis: int = None) -> Any:  # noqa: A002
    """Cumulative sum along ``dim``."""
    dim = axis if dim is None else dim
    if isinstance(input, Tensor):
        return input.cumsum(dim)
    return backend.array_module(input).cumsum(input, axis=dim)


def zeros(shape: Any, dtype: Any = None) -> Any:
    """NumPy's ``zeros`` (a plain array, a constant), for rules that use this module as ``xp``."""
    return np.zeros(shape, dtype=dtype)


def zeros_like(x: Any) -> Any:
    """Zeros with x's shape, dtype and device."""
    if isinstance(x, Tensor):
        return Tensor._wrap(backend.array_module(x.array).zeros_like(x.array))
    return backend.array_module(x).zeros_like(x)


def ones_like(x: Any) -> Any:
    """Ones with x's shape, dtype and device."""
    if isinstance(x, Tensor):
        return Tensor._wrap(backend.array_module(x.array).ones_like(x.array))
    return backend.array_module(x).ones_like(x)


def cat(tensors: Sequence[Any], dim: int = 0, *, out: Tensor | None = None) -> Tensor:
    """Join tensors along an existing dimension ``dim`` (promoted to their common dtype)."""
    if out is not None:
        return _into(out, cat(tensors, dim))
    tensors = list(tensors)
    if not tensors:
        raise ValueError("cat() needs a non-empty sequence of tensors")
    if not builtins.any(isinstance(t, Tensor) for t in tensors):  # arrays or Duals: no tape
        return backend.array_module(tensors[0]).concatenate(tensors, axis=dim)
    ndim = _as_tensor(tensors[0]).ndim
    for i, t in enumerate(tensors[1:], 1):
        t = _as_tensor(t)
        if t.ndim != ndim or builtins.any(
            a != b for k, (a, b) in enumerate(zip(t.shape, _as_tensor(tensors[0]).shape))
            if k != dim % ndim
        ):
            raise ValueError(
                f"cat: sizes of tensors must match except in dimension {dim}; tensor 0 has "
                f"shape {tuple(_as_tensor(tensors[0]).shape)}, tensor {i} has shape "
                f"{tuple(t.shape)}"
            )
    return apply(structural.Concatenate, *promote_all(tensors), axis=dim % ndim)


concatenate = cat


def stack(tensors: Sequence[Any], dim: int = 0, *, out: Tensor | None = None) -> Tensor:
    """Join tensors of equal shape along a new dimension ``dim``."""
    if out is not None:
        return _into(out, stack(tensors, dim))
    tensors = list(tensors)
    if tensors and not builtins.any(isinstance(t, Tensor) for t in tensors):  # arrays or Duals
        return backend.array_module(tensors[0]).stack(tensors, axis=dim)
    tensors = [_as_tensor(t) for t in tensors]
    if not tensors:
        raise ValueError("stack() needs a non-empty sequence of tensors")
    shape = tensors[0].shape
    for i, t in enumerate(tensors):
        if t.shape != shape:
            raise ValueError(
                f"stack expects each tensor to be equal size, but got {tuple(shape)} at "
                f"entry 0 and {tuple(t.shape)} at entry {i}"
            )
    dim = dim % (len(shape) + 1)
    return cat([t.unsqueeze(dim) for t in tensors], dim)


def split(x: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple:
    """Cut ``x`` into pieces of a given size (the last may be smaller) or given sizes."""
    length = x.shape[dim]
    if isinstance(split_size_or_sections, int):
        if split_size_or_sections <= 0:
            raise ValueError("split size must be positive")
        sizes = [split_size_or_sections] * (length // split_size_or_sections)
        if length % split_size_or_sections:
            sizes.append(length % split_size_or_sections)
    else:
        sizes = list(split_size_or_sections)
        if builtins.sum(sizes) != length:
            raise ValueError(
                f"split sizes {sizes} add up to {builtins.sum(sizes)}, but dimension {dim} "
                f"has length {length}"
            )
    pieces, start = [], 0
    index = [slice(None)] * x.ndim
    for size in sizes:
        index[dim] = slice(start, start + size)
        pieces.append(x[tuple(index)])
        start += size
    return tuple(pieces)


def chunk(x: Tensor, chunks: int, dim: int = 0) -> tuple:
    """Cut ``x`` into ``chunks`` nearly equal pieces."""
    size = -(-x.shape[dim] // chunks)
    return split(x, size, dim)


def softmax(input: Tensor, dim: int) -> Tensor:  # noqa: A002
    """exp(xᵢ) / Σⱼ exp(xⱼ) along ``dim`` (shifted by the max: no overflow).

    On a tensor it is one primitive (``nn_ops.Softmax``, ``SoftmaxBackward0`` on the
    tape); on arrays and dual numbers the same formula is composed.
    """
    if isinstance(input, Tensor):
        return apply(nn_ops.Softmax, input, dim=_checked_dim(dim, input, "softmax"))
    # an array or a dual number: NumPy's functions route it (a Dual has no detach)
    e = np.exp(input - np.max(input, axis=dim, keepdims=True))
    return e / np.sum(e, axis=dim, keepdims=True)


def log_softmax(input: Tensor, dim: int) -> Tensor:  # noqa: A002
    """xᵢ - log Σⱼ exp(xⱼ) along ``dim`` (one primitive on a tensor, as :func:`softmax`)."""
    if isinstance(input, Tensor):
        return apply(nn_ops.LogSoftmax, input, dim=_checked_dim(dim, input, "log_softmax"))
    return input - input.logsumexp(dim, keepdim=True)


def _checked_dim(dim: int, x: Tensor, name: str) -> int:
    ndim = builtins.max(x.ndim, 1)
    if not isinstance(dim, int) or not -ndim <= dim < ndim:
        raise IndexError(f"{name}: dim {dim!r} is out of range for a {x.ndim}-D input")
    return dim % ndim


def logsumexp(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """log Σ exp(x) without overflow."""
    return input.logsumexp(dim, keepdim)


def var(input: Tensor, dim: Any = None, keepdim: bool = False, unbiased: bool = True) -> Tensor:  # noqa: A002
    """Variance (unbiased by default, as in PyTorch)."""
    return input.var(dim, keepdim, unbiased)


def std(input: Tensor, dim: Any = None, keepdim: bool = False, unbiased: bool = True) -> Tensor:  # noqa: A002
    """Standard deviation (unbiased by default)."""
    return input.std(dim, keepdim, unbiased)


def prod(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """Π x over ``dim``."""
    return input.prod(dim, keepdim)


def norm(input: Tensor, p: Any = 2, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """Vector p-norm."""
    return input.norm(p, dim, keepdim)


def max(input: Any, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A001, A002
    """Maximum (with ``dim``: values and indices); ``max(a, b)`` is elementwise."""
    return _as_tensor(input).max(dim, keepdim)


def min(input: Any, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A001, A002
    """Minimum (with ``dim``: values and indices); ``min(a, b)`` is elementwise."""
    return _as_tensor(input).min(dim, keepdim)


def argmax(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """Index of the maximum."""
    return _as_tensor(input).argmax(dim, keepdim)


def argmin(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """Index of the minimum."""
    return _as_tensor(input).argmin(dim, keepdim)


def t(input: Tensor) -> Tensor:  # noqa: A002
    """Transpose of a matrix (≤ 2 dimensions)."""
    return input.t()


def numel(input: Tensor) -> int:  # noqa: A002
    """Number of elements."""
    return input.numel()


def clone(input: Tensor) -> Tensor:  # noqa: A002
    """A copy in new memory (gradients flow back)."""
    return input.clone()


def allclose(input: Any, other: Any, rtol: float = 1e-5, atol: float = 1e-8,  # noqa: A002
             equal_nan: bool = False) -> bool:
    """True when every |input - other| ≤ atol + rtol·|other| (tensors that require grad
    are compared by value)."""
    a, b = (backend.to_numpy(unwrap(x.detach() if isinstance(x, Tensor) else x))
            for x in (input, other))
    return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def isnan(input: Tensor) -> Tensor:  # noqa: A002
    """Where x is NaN."""
    return _as_tensor(input).isnan()


# ======================================================================== compat-core
# PyTorch functions teaching programs reach for (issue 14, compat-core block).


def _into(out: Tensor | None, result: Any) -> Any:
    """The ``out=`` keyword: copy ``result`` into ``out`` (resized if its shape differs,
    as PyTorch does) and return ``out``."""
    if out is None:
        return result
    from difflab.autograd.grad_mode import is_grad_enabled
    from difflab.dtypes import can_cast

    if not isinstance(out, Tensor):
        raise TypeError(f"out= must be a Tensor, got {type(out).__name__}")
    result = result if isinstance(result, Tensor) else _as_tensor(result)
    if is_grad_enabled() and (result.requires_grad or out.requires_grad):
        raise RuntimeError(
            "functions with out=... arguments don't support automatic differentiation, but "
            "one of the arguments requires grad: drop out= (use the result), or work under "
            "difflab.no_grad()"
        )
    if not can_cast(result.dtype, out.dtype):
        raise RuntimeError(
            f"result type {result.dtype} can't be cast to the desired output type "
            f"{out.dtype} of out="
        )
    if out.shape != result.shape:  # resized, as PyTorch does
        xp = backend.array_module(out.array)
        out.array = xp.zeros(result.shape, dtype=out.array.dtype)
    out.copy_(result)
    return out


def all(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001, A002
    """Whether every element (along ``dim``) is true (non-zero)."""
    return _as_tensor(input).all(dim, keepdim)


def any(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001, A002
    """Whether some element (along ``dim``) is true (non-zero)."""
    return _as_tensor(input).any(dim, keepdim)


def isclose(input: Any, other: Any, rtol: float = 1e-5, atol: float = 1e-8,  # noqa: A002
            equal_nan: bool = False) -> Tensor:
    """Where |input - other| ≤ atol + rtol·|other|, elementwise (a bool tensor)."""
    return _as_tensor(input).isclose(other, rtol, atol, equal_nan)


def tril(input: Tensor, diagonal: int = 0, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The lower triangle of the last two dimensions (entries with j ≤ i + diagonal)."""
    return _into(out, _as_tensor(input).tril(diagonal))


def triu(input: Tensor, diagonal: int = 0, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The upper triangle of the last two dimensions (entries with j ≥ i + diagonal)."""
    return _into(out, _as_tensor(input).triu(diagonal))


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0,  # noqa: A001, A002
          *, out: Tensor | None = None) -> Tensor:
    """Counts of the elements in ``bins`` equal bins over [min, max] (elements outside are
    left out); when min = max, the data's own smallest and largest values.  No gradient."""
    t = _as_tensor(input)
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
    return _into(out, result)


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
    t = _as_tensor(input)
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
    return _as_tensor(input).equal(_as_tensor(other))


def _comparison(name: str) -> Any:
    def compare(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
        return _into(out, getattr(_as_tensor(input), name)(other))

    compare.__name__ = compare.__qualname__ = name
    compare.__doc__ = f"Elementwise ``input {name} other`` (a bool tensor, no gradient)."
    return compare


eq, ne, lt, le, gt, ge = (_comparison(n) for n in ("eq", "ne", "lt", "le", "gt", "ge"))
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def isfinite(input: Tensor) -> Tensor:  # noqa: A002
    """Where the elements are neither inf nor nan."""
    return _as_tensor(input).isfinite()


def isinf(input: Tensor) -> Tensor:  # noqa: A002
    """Where the elements are +inf or -inf."""
    t = _as_tensor(input)
    return no_grad_result(backend.array_module(t.array).isinf(t.array))


def amax(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """The largest values over ``dim`` (gradient shared evenly among ties)."""
    return _as_tensor(input).amax(dim, keepdim)


def amin(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """The smallest values over ``dim``."""
    return _as_tensor(input).amin(dim, keepdim)


def floor(input: Tensor) -> Tensor:  # noqa: A002
    """⌊x⌋ (piecewise constant: no gradient)."""
    return _as_tensor(input).floor()


def ceil(input: Tensor) -> Tensor:  # noqa: A002
    """⌈x⌉ (piecewise constant: no gradient)."""
    return _as_tensor(input).ceil()


def round(input: Tensor) -> Tensor:  # noqa: A001, A002
    """x rounded to the nearest integer, halves to even (no gradient)."""
    return _as_tensor(input).round()


def rsqrt(input: Tensor) -> Tensor:  # noqa: A002
    """1/√x."""
    return _as_tensor(input).rsqrt()


def reciprocal(input: Tensor) -> Tensor:  # noqa: A002
    """1/x."""
    return _as_tensor(input).reciprocal()


def floor_divide(input: Any, other: Any) -> Tensor:  # noqa: A002
    """⌊input / other⌋ (no gradient), in the common dtype."""
    return _as_tensor(input) // other


def remainder(input: Any, other: Any) -> Tensor:  # noqa: A002
    """input - ⌊input / other⌋ · other, the sign of ``other`` (as Python's %)."""
    return _as_tensor(input) % other


def _logical(name: str, op: Any) -> Any:
    def logical(input: Any, other: Any) -> Tensor:  # noqa: A002
        a, b = (unwrap(_as_tensor(t)) for t in (input, other))
        return no_grad_result(op(a.astype(bool), b.astype(bool)))

    logical.__name__ = logical.__qualname__ = name
    logical.__doc__ = f"Elementwise {name.split('_')[1]} of the truth values (a bool tensor)."
    return logical


logical_and = _logical("logical_and", lambda a, b: a & b)
logical_or = _logical("logical_or", lambda a, b: a | b)
logical_xor = _logical("logical_xor", lambda a, b: a ^ b)


def logical_not(input: Any) -> Tensor:  # noqa: A002
    """Elementwise not of the truth values (a bool tensor)."""
    return no_grad_result(~unwrap(_as_tensor(input)).astype(bool))


def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:  # noqa: A002
    """How many elements (over ``dim``) are not zero."""
    t = _as_tensor(input)
    xp = backend.array_module(t.array)
    return no_grad_result(xp.count_nonzero(t.array, axis=dim).astype(np.int64))


def is_nonzero(input: Tensor) -> bool:  # noqa: A002
    """Whether a one-element tensor is not zero (an error for more elements)."""
    t = _as_tensor(input)
    if t.numel() != 1:
        raise RuntimeError(
            f"Boolean value of Tensor with {t.numel()} elements is ambiguous: is_nonzero "
            f"needs exactly one element"
        )
    return bool(t.item() != 0)


def unbind(input: Tensor, dim: int = 0) -> tuple:  # noqa: A002
    """The slices along ``dim``, as a tuple (gradients flow back to each)."""
    return _as_tensor(input).unbind(dim)

# ==================================================================== end compat-core


# ---------------------------------------------------------------------------------------
# compat-ops (issue 14): indexing along a dimension, sorting, products.  PyTorch's names,
# keywords and errors.  gather, scatter, index_select, sort and roll are indexing (the
# ``index``, ``scatter_add`` and ``index_put`` primitives, so their derivatives are the
# indexing rules: scattering the adjoint back); einsum and cumprod are primitives of
# their own (difflab.ops.products).


def _check_dim(name: str, dim: Any, ndim: int) -> int:
    """``dim`` as a non-negative axis of an ``ndim``-axis tensor (a 0-d one has axis 0)."""
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise TypeError(f"{name}: dim must be an int, got {type(dim).__name__}")
    n = builtins.max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"{name}: Dimension out of range (expected to be in range of [{-n}, {n - 1}], but "
            f"got {dim})"
        )
    return int(dim) % n


def _integer_index(name: str, index: Any) -> Any:
    """The raw integer array of an index tensor (an error naming the dtype otherwise)."""
    array = index.array if isinstance(index, Tensor) else index
    if isinstance(array, (list, tuple, int)):
        array = np.asarray(array)
    if getattr(array, "dtype", np.dtype(float)).kind not in "iu":
        raise TypeError(
            f"{name}(): expected an index tensor of an integer dtype (int64), got "
            f"{getattr(array, 'dtype', type(array).__name__)}; use index.long()"
        )
    return array


def _check_range(name: str, index: Any, size: int, dim: int) -> None:
    """Every entry of ``index`` in [0, size): PyTorch does not wrap negative indices here."""
    if index.size == 0:
        return
    low, high = int(index.min()), int(index.max())
    if low < 0 or high >= size:
        raise RuntimeError(
            f"{name}(): index {high if high >= size else low} is out of bounds for dimension "
            f"{dim} with size {size} (valid: 0 .. {size - 1})"
        )


def _along(index: Any, dim: int) -> tuple:
    """The NumPy index that picks ``x[i₀, .., index[i], .., iₙ]`` for every position i of
    ``index``: ``index`` itself on axis ``dim``, a broadcast ``arange`` on every other axis."""
    xp = backend.array_module(index)
    ndim = index.ndim
    grid = []
    for axis, n in enumerate(index.shape):
        if axis == dim:
            grid.append(index)
        else:
            shape = [1] * ndim
            shape[axis] = n
            grid.append(xp.arange(n).reshape(shape))
    return tuple(grid)


def _gather_index(name: str, x: Tensor, dim: int, index: Any, src: Any = None) -> Any:
    """Check an index for gather/scatter along ``dim`` of ``x`` and return its array.

    PyTorch's rules: the index has as many dimensions as ``x``; it is no longer than
    ``x`` on every other axis (and than ``src``, on every axis); its entries lie in
    [0, x.size(dim)).
    """
    array = _integer_index(name, index)
    if array.ndim != x.ndim and not (x.ndim <= 1 and array.ndim <= 1):
        raise RuntimeError(
            f"{name}(): index has {array.ndim} dimension{'s' * (array.ndim != 1)} but the input "
            f"has {x.ndim}; Index tensor must have the same number of dimensions as input "
            f"tensor (shape {tuple(array.shape)} vs input {tuple(x.shape)}: add or remove "
            f"dimensions with unsqueeze/squeeze)"
        )
    for axis, (n, m) in enumerate(zip(array.shape, x.shape)):
        if axis != dim and n > m:
            raise RuntimeError(
                f"{name}(): Size does not match at dimension {axis}: expected index "
                f"{tuple(array.shape)} to be no larger than the input {tuple(x.shape)} apart "
                f"from dimension {dim}"
            )
    if src is not None and isinstance(src, Tensor):
        if src.ndim != array.ndim or builtins.any(
                n > m for n, m in zip(array.shape, src.shape)):
            raise RuntimeError(
                f"{name}(): expected index {tuple(array.shape)} to be no larger than src "
                f"{tuple(src.shape)} in every dimension (and to have as many dimensions)"
            )
    _check_range(name, array, x.shape[dim] if x.ndim else 1, dim)
    return array


def _crop(src: Tensor, shape: tuple) -> Tensor:
    """The leading block of ``src`` with ``shape`` (what scatter reads of a larger src)."""
    if tuple(src.shape) == tuple(shape):
        return src
    return src[tuple(slice(0, n) for n in shape)]


def gather(input: Any, dim: int, index: Any, *, sparse_grad: bool = False) -> Tensor:  # noqa: A002
    """out[i][j][k] = input[index[i][j][k]][j][k] for dim = 0 (and likewise for other dims).

    The output has the index's shape.  Gradient: the adjoint is scattered back,
    *added* where the index repeats an element (the transpose of picking).
    """
    x = _as_tensor(input)
    dim = _check_dim("gather", dim, x.ndim)
    idx = _gather_index("gather", x, dim, index)
    if x.ndim == 0:  # a 0-d input behaves as one element
        return x.reshape(1)[idx.reshape(-1)].reshape(idx.shape)
    return x[_along(idx, dim)]


def scatter(input: Any, dim: int, index: Any, src: Any = None, *, value: Any = None,  # noqa: A002
            reduce: str | None = None) -> Tensor:
    """A copy of ``input`` with out[index[i][j]][j] = src[i][j] (dim = 0; likewise others).

    ``src`` may be a tensor (only its leading block of the index's shape is
    read) or a number (PyTorch's ``value``).  Where the index repeats a
    position, which write wins is unspecified (as in PyTorch), and so is the
    gradient of ``src`` there.  ``reduce='add'`` is :func:`scatter_add`.
    Gradients: the input's adjoint with zeros where it was overwritten; src's
    adjoint gathered from the output's.
    """
    x = _as_tensor(input)
    if src is None:
        src = value
    if src is None:
        raise TypeError("scatter() needs src (a tensor) or value (a number)")
    if reduce is not None:
        if reduce != "add":
            raise ValueError(f"scatter(): reduce must be None or 'add', got {reduce!r}")
        src = src if isinstance(src, Tensor) else full_like_index(x, index, src)
        return scatter_add(x, dim, index, src)
    dim = _check_dim("scatter", dim, x.ndim)
    idx = _gather_index("scatter", x, dim, index, src)
    if isinstance(src, Tensor):
        src = _crop(src, idx.shape)
        if src.dtype != x.dtype:
            src = src.to(x.dtype)
    return apply(structural.IndexPut, x, src, index=_along(idx, dim))


def full_like_index(x: Tensor, index: Any, value: Any) -> Tensor:
    """A tensor shaped like ``index`` filled with ``value``, in ``x``'s dtype and device."""
    xp = backend.array_module(x.array)
    return Tensor._wrap(xp.full(_integer_index("scatter", index).shape, value, dtype=x.dtype))


def scatter_add(input: Any, dim: Any, index: Any, src: Any = None) -> Any:  # noqa: A002
    """``scatter_add(input, dim, index, src)``: a copy of ``input`` with
    out[index[i][j]][j] += src[i][j] (dim = 0), adding up where the index repeats.

    Gradients: the input's adjoint passes through; src's adjoint is gathered.

    Called with three arguments, ``scatter_add(values, index, shape)`` is the
    array-namespace form the derivative rules use: zeros(shape) with
    ``[index] += values``, the transpose of indexing.
    """
    if src is None:  # scatter_add(values, index, shape): the derivative rules' form
        values, array_index, shape = input, dim, index
        if isinstance(values, Tensor):
            return apply(structural.ScatterAdd, values, index=index_arrays(array_index),
                         shape=tuple(shape))
        return backend.array_module(values).scatter_add(values, array_index, shape)
    x = _as_tensor(input)
    dim = _check_dim("scatter_add", dim, x.ndim)
    idx = _gather_index("scatter_add", x, dim, index, src)
    src = _crop(_as_tensor(src), idx.shape)
    added = apply(structural.ScatterAdd, src.to(x.dtype) if src.dtype != x.dtype else src,
                  index=_along(idx, dim), shape=tuple(x.shape))
    return x + added


def index_select(input: Any, dim: int, index: Any) -> Tensor:  # noqa: A002
    """The entries of ``input`` at ``index`` (a 1-D integer tensor) along ``dim``.

    Gradient: scattered back, added where ``index`` repeats.
    """
    x = _as_tensor(input)
    dim = _check_dim("index_select", dim, x.ndim)
    idx = _integer_index("index_select", index)
    if idx.ndim > 1:
        raise RuntimeError(
            f"index_select(): index must be a vector (1-D) or a scalar, got shape "
            f"{tuple(idx.shape)}"
        )
    _check_range("index_select", idx, x.shape[dim] if x.ndim else 1, dim)
    if x.ndim == 0 and idx.size != 1:
        raise RuntimeError(
            f"index_select(): Index to scalar can have only 1 value, got {idx.size} value(s)")
    if x.ndim == 0:
        return x.reshape(1)[idx.reshape(-1)].reshape(())
    return x[(slice(None),) * dim + (idx.reshape(-1),)]


def masked_fill(input: Any, mask: Any, value: Any) -> Tensor:  # noqa: A002
    """``input`` with ``value`` where the boolean ``mask`` (broadcast to it) is True."""
    return _as_tensor(input).masked_fill(mask, value)


def argsort(input: Any, dim: int = -1, descending: bool = False,  # noqa: A002
            stable: bool = False) -> Tensor:
    """The indices that sort ``input`` along ``dim`` (ties keep their order: a stable sort).

    NaN sorts as the largest value, as in PyTorch.  No gradient (indices).
    """
    x = _as_tensor(input)
    dim = _check_dim("argsort", dim, x.ndim)
    a = x.array if x.ndim else x.array.reshape(1)
    while hasattr(a, "primal"):  # forward mode's Dual arrays: the order of the values
        a = a.primal
    xp = backend.array_module(a)
    if descending:
        if a.dtype.kind == "f":
            key = xp.where(xp.isnan(a), -np.inf, -a)  # NaN first, as the largest
        elif a.dtype.kind == "b":
            key = ~a
        else:
            key = -a.astype(np.int64) if a.dtype.kind == "u" else -a
    else:
        key = a
    out = xp.argsort(key, axis=dim, kind="stable").astype(np.int64)
    return no_grad_result(out if x.ndim else out.reshape(()))


def sort(input: Any, dim: int = -1, descending: bool = False,  # noqa: A002
         stable: bool = False) -> tuple:
    """(values, indices) of ``input`` sorted along ``dim``.

    values = gather(input, dim, indices), so the gradient goes back to where
    each value came from.
    """
    x = _as_tensor(input)
    indices = argsort(x, dim, descending, stable)
    return MinMax((gather(x, dim, indices), indices))


def topk(input: Any, k: int, dim: int = -1, largest: bool = True,  # noqa: A002
         sorted: bool = True) -> tuple:  # noqa: A002
    """(values, indices) of the ``k`` largest (or smallest) entries along ``dim``.

    The values come out in sorted order (``sorted=False`` is accepted and
    gives them sorted too).  Gradient: to the chosen entries only.
    """
    x = _as_tensor(input)
    dim = _check_dim("topk", dim, x.ndim)
    size = x.shape[dim] if x.ndim else 1
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k <= size:
        raise RuntimeError(
            f"topk(): selected index k={k!r} is out of range: k must be an int in [0, {size}] "
            f"(the size of dimension {dim})"
        )
    order = argsort(x, dim, descending=largest)
    if x.ndim:
        order = order[(slice(None),) * dim + (slice(0, k),)]
    return MinMax((gather(x, dim, order), order))


def roll(input: Any, shifts: Any, dims: Any = None) -> Tensor:  # noqa: A002
    """``input`` shifted circularly by ``shifts`` along ``dims`` (flattened if ``dims`` is None).

    out[(i + s) mod n] = x[i]: a permutation, so the gradient is rolled back.
    """
    x = _as_tensor(input)
    if dims is None:
        if not isinstance(shifts, (int, np.integer)) and len(shifts) != 1:
            raise RuntimeError("roll(): with dims=None, shifts must be one number")
        s = shifts if isinstance(shifts, (int, np.integer)) else shifts[0]
        return roll(x.flatten(), s, 0).reshape(x.shape)
    shifts = (shifts,) if isinstance(shifts, (int, np.integer)) else tuple(shifts)
    dims = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(
            f"roll(): shifts and dims must have the same length, got {len(shifts)} shifts and "
            f"{len(dims)} dims"
        )
    out = x
    for s, d in zip(shifts, dims):
        d = _check_dim("roll", d, x.ndim)
        n = x.shape[d] if x.ndim else 1
        if n:
            xp = backend.array_module(x.array)
            out = index_select(out, d, (xp.arange(n) - int(s)) % n)
    return out


def cumprod(input: Any, dim: int, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """yᵢ = Π_{j≤i} xⱼ along ``dim`` (the ``cumprod`` primitive)."""
    from difflab.ops import products

    x = _as_tensor(input)
    if dtype is not None:
        x = x.to(dtype)
    dim = _check_dim("cumprod", dim, x.ndim)
    if x.ndim == 0:  # one element: its own cumulative product
        return apply(products.CumProd, x.reshape(1), axis=0).reshape(())
    return apply(products.CumProd, x, axis=dim)


def einsum(equation: str, *operands: Any) -> Any:
    """Sum of products over named axes: ``einsum("ij,jk->ik", a, b)`` is ``a @ b``.

    The operands may also come as one list (``einsum("ii", [a])``).  ``...``
    stands for the broadcast axes; without ``->`` the output has the letters
    used once, in alphabetical order.  A malformed equation raises a
    ``ValueError`` that says what is wrong.  Gradients: the ``einsum``
    primitive (linear in each operand, so each adjoint is another einsum).
    """
    from difflab.ops import products

    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    operands = tuple(x if isinstance(x, Tensor) else _plain(x) for x in operands)
    # (parsed here first, so that a malformed equation is reported as it is)
    parsed = products.EinsumEquation(equation, [tuple(np.shape(x)) if not isinstance(x, Tensor)
                                                else tuple(x.shape) for x in operands])
    if not any(isinstance(x, Tensor) for x in operands):  # arrays: computed, not recorded
        return backend.array_module(operands[0]).einsum(
            parsed.text(parsed.inputs, parsed.output), *operands)
    return apply(products.Einsum, *operands, equation=equation)


def bmm(input: Any, mat2: Any) -> Tensor:  # noqa: A002
    """Batched matrix product: (b, n, m) @ (b, m, p) -> (b, n, p), with no broadcasting."""
    a, b = _as_tensor(input), _as_tensor(mat2)
    if a.ndim != 3 or b.ndim != 3:
        raise RuntimeError(
            f"bmm(): batch1 and batch2 must be 3-D tensors, got shapes {tuple(a.shape)} and "
            f"{tuple(b.shape)} (use matmul to broadcast)"
        )
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise RuntimeError(
            f"bmm(): shapes {tuple(a.shape)} and {tuple(b.shape)} cannot be multiplied: "
            f"expected (b, n, m) and (b, m, p) with the same b and m"
        )
    return a @ b


def baddbmm(input: Any, batch1: Any, batch2: Any, *, beta: Any = 1,  # noqa: A002
            alpha: Any = 1) -> Tensor:
    """β · input + α · bmm(batch1, batch2) (``input`` broadcast; ignored when β = 0)."""
    product = bmm(batch1, batch2)
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return product
    return product + (input if beta == 1 else _as_tensor(input) * beta)


def outer(input: Any, vec2: Any) -> Tensor:  # noqa: A002
    """Outer product of two vectors: out[i, j] = input[i] · vec2[j]."""
    a, b = _as_tensor(input), _as_tensor(vec2)
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(
            f"outer(): expected two 1-D tensors, got shapes {tuple(a.shape)} and "
            f"{tuple(b.shape)}"
        )
    return a.reshape(-1, 1) * b.reshape(1, -1)


ger = outer
