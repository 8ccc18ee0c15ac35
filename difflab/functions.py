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
from difflab.ops import elementwise, registry, structural
from difflab.ops.structural import BinaryOp, UnaryOp
from difflab.tensor import Tensor
from difflab.tensor_arguments import index_arrays, no_grad_result, unwrap

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
        return apply(op, x)
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
        return apply(op, a, b)
    a, b = _plain(a), _plain(b)
    return op.rule.forward(backend.array_module(a), a, b)


# ------------------------------------------------------ elementwise functions


def elementwise_function(op: UnaryOp | BinaryOp) -> Any:
    """``difflab.<name>`` for an elementwise primitive: one function that routes on
    what flows through it (see the table at the top of this module)."""
    rule = op.rule
    if isinstance(op, UnaryOp):
        def function(x: Any) -> Any:
            return _unary(op, x)
    else:
        def function(a: Any, b: Any) -> Any:
            return _binary(op, a, b)
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


def clamp(x: Any, min: Any = None, max: Any = None) -> Any:  # noqa: A002
    """min(max(x, min), max).  Derivative: 1 inside the interval, 0 outside."""
    if isinstance(x, Tensor):
        return x.clamp(min, max)
    return backend.array_module(x).clip(x, min, max)


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


def where(cond: Any, a: Any, b: Any) -> Any:
    """``a`` where ``cond`` is true, else ``b`` (gradient flows to the chosen one)."""
    cond = unwrap(cond)
    handler = _handler_for(a) or _handler_for(b)  # first, as in _binary
    if handler is not None:
        return handler.where(cond, a, b)
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return apply(structural.Where, cond, a, b)
    return backend.array_module(cond).where(cond, a, b)


# ------------------------------------------------------ tensor-level functions


def _as_tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor._wrap(backend.array_module(x).asarray(x))


def sum(x: Any, dim: Any = None, keepdim: bool = False, *, axis: Any = None,  # noqa: A001
        keepdims: bool | None = None) -> Any:
    """Σ x over ``dim`` (``axis``/``keepdims`` accepted too)."""
    dim = axis if dim is None else dim
    keepdim = keepdims if keepdims is not None else keepdim
    if isinstance(x, Tensor) or hasattr(x, "sum") and not isinstance(x, np.ndarray):
        return x.sum(axis=dim, keepdims=keepdim)
    return backend.array_module(x).sum(x, axis=dim, keepdims=keepdim)


def mean(x: Any, dim: Any = None, keepdim: bool = False) -> Any:
    """Σx / n over ``dim``."""
    if isinstance(x, Tensor):
        return x.mean(dim, keepdim)
    return backend.array_module(x).mean(x, axis=dim, keepdims=keepdim)


def matmul(a: Any, b: Any) -> Any:
    """Matrix product a @ b (batched, with NumPy's rules for vectors)."""
    return a @ b


def mm(a: Tensor, b: Tensor) -> Tensor:
    """Product of two matrices."""
    return _as_tensor(a).mm(b)


def mv(a: Tensor, v: Tensor) -> Tensor:
    """Matrix-vector product."""
    return _as_tensor(a).mv(v)


def dot(a: Tensor, b: Tensor) -> Tensor:
    """Dot product of two vectors."""
    return _as_tensor(a).dot(b)


def swapaxes(x: Any, axis0: int, axis1: int) -> Any:
    """x with two axes exchanged."""
    if isinstance(x, Tensor):
        return x.transpose(axis0, axis1)
    return backend.array_module(x).swapaxes(x, axis0, axis1)


def transpose(x: Any, dim0: Any = None, dim1: Any = None) -> Any:
    """``transpose(x, d0, d1)`` swaps two axes (PyTorch); ``transpose(x, axes)`` permutes."""
    if dim1 is not None:
        return swapaxes(x, dim0, dim1)
    if isinstance(x, Tensor):
        return x.permute(*(dim0 if dim0 is not None else range(x.ndim - 1, -1, -1)))
    return backend.array_module(x).transpose(x, dim0)


def permute(x: Tensor, dims: Sequence[int]) -> Tensor:
    """x with its axes in the order ``dims``."""
    return x.permute(*dims)


def reshape(x: Any, shape: Any) -> Any:
    """The same values in another shape."""
    if isinstance(x, (int, float)):  # a plain number has no .reshape method
        return backend.array_module(x).reshape(x, shape)
    return x.reshape(shape)


def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dimensions ``start_dim`` to ``end_dim`` into one."""
    return x.flatten(start_dim, end_dim)


def squeeze(x: Tensor, dim: Any = None) -> Tensor:
    """Remove dimensions of size 1."""
    return x.squeeze(dim)


def unsqueeze(x: Tensor, dim: int) -> Tensor:
    """Insert a dimension of size 1 at ``dim``."""
    return x.unsqueeze(dim)


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


def flip(x: Any, dims: Any) -> Any:
    """x reversed along ``dims``."""
    if isinstance(x, Tensor):
        return x.flip(dims)
    return backend.array_module(x).flip(x, dims)


def cumsum(x: Any, dim: int = None, *, axis: int = None) -> Any:
    """Cumulative sum along ``dim``."""
    dim = axis if dim is None else dim
    if isinstance(x, Tensor):
        return x.cumsum(dim)
    return backend.array_module(x).cumsum(x, axis=dim)


def scatter_add(values: Any, index: Any, shape: tuple) -> Any:
    """zeros(shape) with ``[index] += values``: the transpose of indexing."""
    if isinstance(values, Tensor):
        return apply(structural.ScatterAdd, values, index=index_arrays(index), shape=tuple(shape))
    return backend.array_module(values).scatter_add(values, index, shape)


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


def cat(tensors: Sequence[Any], dim: int = 0) -> Tensor:
    """Join tensors along an existing dimension ``dim``."""
    tensors = list(tensors)
    if not tensors:
        raise ValueError("cat() needs a non-empty sequence of tensors")
    if not any(isinstance(t, Tensor) for t in tensors):  # arrays or Duals: no tape
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
    return apply(structural.Concatenate, *tensors, axis=dim % ndim)


concatenate = cat


def stack(tensors: Sequence[Any], dim: int = 0) -> Tensor:
    """Join tensors of equal shape along a new dimension ``dim``."""
    tensors = list(tensors)
    if tensors and not any(isinstance(t, Tensor) for t in tensors):  # arrays or Duals
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


def softmax(x: Tensor, dim: int) -> Tensor:
    """exp(xᵢ) / Σⱼ exp(xⱼ) along ``dim`` (shifted by the max: no overflow)."""
    if not isinstance(x, Tensor):  # an array or a dual number: NumPy's functions route it
        e = np.exp(x - np.max(x, axis=dim, keepdims=True))
        return e / np.sum(e, axis=dim, keepdims=True)
    shifted = x - x.detach().amax(dim, keepdim=True)
    e = shifted.exp()
    return e / e.sum(dim, keepdim=True)


def log_softmax(x: Tensor, dim: int) -> Tensor:
    """xᵢ - log Σⱼ exp(xⱼ) along ``dim``."""
    return x - x.logsumexp(dim, keepdim=True)


def logsumexp(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """log Σ exp(x) without overflow."""
    return x.logsumexp(dim, keepdim)


def var(x: Tensor, dim: Any = None, keepdim: bool = False, unbiased: bool = True) -> Tensor:
    """Variance (unbiased by default, as in PyTorch)."""
    return x.var(dim, keepdim, unbiased)


def std(x: Tensor, dim: Any = None, keepdim: bool = False, unbiased: bool = True) -> Tensor:
    """Standard deviation (unbiased by default)."""
    return x.std(dim, keepdim, unbiased)


def prod(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """Π x over ``dim``."""
    return x.prod(dim, keepdim)


def norm(x: Tensor, p: Any = 2, dim: Any = None, keepdim: bool = False) -> Tensor:
    """Vector p-norm."""
    return x.norm(p, dim, keepdim)


def max(x: Any, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A001
    """Maximum (with ``dim``: values and indices); ``max(a, b)`` is elementwise."""
    return _as_tensor(x).max(dim, keepdim)


def min(x: Any, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A001
    """Minimum (with ``dim``: values and indices); ``min(a, b)`` is elementwise."""
    return _as_tensor(x).min(dim, keepdim)


def argmax(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """Index of the maximum."""
    return _as_tensor(x).argmax(dim, keepdim)


def argmin(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """Index of the minimum."""
    return _as_tensor(x).argmin(dim, keepdim)


def t(x: Tensor) -> Tensor:
    """Transpose of a matrix (≤ 2 dimensions)."""
    return x.t()


def numel(x: Tensor) -> int:
    """Number of elements."""
    return x.numel()


def clone(x: Tensor) -> Tensor:
    """A copy in new memory (gradients flow back)."""
    return x.clone()


def allclose(a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-8) -> bool:
    """True when every |a - b| ≤ atol + rtol·|b|."""
    return bool(np.allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol))


def isnan(x: Tensor) -> Tensor:
    """Where x is NaN."""
    return _as_tensor(x).isnan()
