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
import importlib
import sys
from typing import Any

import numpy as np

from difflab import backend
from difflab.autograd import engine as _engine
from difflab.autograd.engine import apply, register_recording_namespace
from difflab.ops import docstrings, elementwise, registry, structural
from difflab.ops import linalg as linalg_ops
from difflab.ops.elementwise_primitives import BinaryOp, UnaryOp
from difflab.tensor import Tensor
from difflab.tensor_arguments import (
    MinMax,
    promote,
    tensor_of,
    unary_operand,
    unwrap,
    view_of,
    write_out,
)

#: Record a primitive on the tape: ``record_primitive(primitive, *inputs, **params)``.  Rules
#: that call other primitives (``nn_conv.im2col``) use it when their backward is itself
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

    def primitive(self, op: Any, *inputs: Any, **params: Any) -> Any:
        """Any other primitive, called through its faces (``dl.prod(dual)``): by default
        its ``forward`` on the values, with NumPy's functions (which such types implement)."""
        return op.forward(registry.Context(), backend.numpy_namespace, *inputs, **params)


_handlers: dict[type, TypeHandler | None] = {}  # None: looked up, no handler
#: package of a foreign type -> the module that registers its handler when imported
_handler_modules: dict[str, str] = {}


def register_type(cls: type, handler: TypeHandler) -> None:
    """Route difflab's math functions on instances of ``cls`` (and subclasses) to ``handler``."""
    for looked_up in [c for c, h in _handlers.items() if h is None]:
        del _handlers[looked_up]  # a type found without a handler may be a subclass of cls
    _handlers[cls] = handler


def register_type_module(package: str, module: str) -> None:
    """Import ``module`` the first time a value of a ``package`` type meets a math function.

    A handler for a heavy library's types (sympy takes half a second to import) is then
    registered only when such a value is used, not by ``import difflab``: the first
    value whose class, or one of its bases, comes from ``package`` imports ``module``,
    which calls :func:`register_type`.

    Parameters
    ----------
    package : str
        The top-level package of the types (``"sympy"``).
    module : str
        The module that registers their handler on import (``"difflab.diff.symbolic"``).

    Examples
    --------
    difflab's symbolic differentiator is registered this way, so a sympy expression
    works with ``dl.sin`` even though ``import difflab`` does not import sympy:

    >>> import sympy, difflab as dl
    >>> dl.sin(sympy.Symbol("x"))
    sin(x)
    """
    _handler_modules[package] = module


def _handler_for(x: Any) -> TypeHandler | None:
    cls = type(x)
    if cls in _handlers:
        return _handlers[cls]
    handler = next((h for registered, h in list(_handlers.items())
                    if h is not None and isinstance(x, registered)), None)
    if handler is None and _handler_modules:
        packages = {getattr(c, "__module__", "").partition(".")[0] for c in cls.__mro__}
        for package in packages & _handler_modules.keys():
            importlib.import_module(_handler_modules.pop(package))
            return _handler_for(x)  # the module registered its types
    _handlers[cls] = handler  # remembered, also when there is none
    return handler


_engine.interpreter_for = _handler_for  # (engine.apply hands such values to their handler)


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
            f"a number, an array, a Tensor, a Dual or a sympy expression"
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
    if isinstance(op, UnaryOp):
        def function(input: Any, *, out: Tensor | None = None) -> Any:  # noqa: A002
            return write_out(out, _unary(op, input))
    else:
        def function(input: Any, other: Any, *, out: Tensor | None = None) -> Any:  # noqa: A002
            return write_out(out, _binary(op, input, other))
    function.__name__ = function.__qualname__ = op.name
    function.__module__ = __name__
    function.__doc__ = docstrings.function_docstring(op, show_float32)
    return function


def show_float32(values: Any) -> str:
    """How a generated example prints float32 values: as a Tensor of them."""
    return repr(Tensor(np.asarray(values, dtype=np.float32)))


#: The names each elementwise function is published under here: its own and NumPy's
#: (``asin`` and ``arcsin``), so that this module also serves as an array namespace.
ELEMENTWISE: dict[str, Any] = {}
for _op in registry.elementwise_ops():
    ELEMENTWISE[_op.name] = elementwise_function(_op)
    if _op.rule.numpy_name:
        ELEMENTWISE.setdefault(_op.rule.numpy_name, ELEMENTWISE[_op.name])
globals().update(ELEMENTWISE)  # difflab.sin, difflab.exp, ... (one per registered rule)
true_divide = ELEMENTWISE["div"]


def bind(op: Any, *inputs: Any, **params: Any) -> Any:
    """Primitive ``op`` applied to whatever flows in: a registered number type's handler
    runs it (``Dual``, sympy expressions), tensors record it (``engine.apply``), arrays get
    its forward with NumPy or CuPy.  The one routing of every face (and of
    ``difflab.linalg``, whose functions slice the packed results of its primitives)."""
    handler = None
    for x in inputs:  # (as in _binary: a Dual beside a Tensor is the Dual's operation)
        handler = handler or _handler_for(x)
    if handler is not None:
        return handler.primitive(op, *inputs, **params)
    if builtins.any(isinstance(x, Tensor) for x in inputs):
        return apply(op, *inputs, **params)
    xp = backend.array_module(inputs[0])
    return op.forward(registry.Context(), xp, *inputs, **params)


linalg_ops.register_bind(bind)  # (the linear-algebra rules apply primitives inside rules)


def face_function(op: Any) -> Any:
    """``difflab.<op.dl_function>``: the call as ``op.arguments`` reads it; on tensors the
    op is applied (recorded), on a registered number type (``Dual``, sympy expressions)
    its handler runs the primitive, on arrays its forward runs on them."""
    def function(input: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A002
        if isinstance(input, (list, tuple)):  # a list of numbers: a tensor, as tensor_of reads
            input = tensor_of(input)  # noqa: A001
        inputs, params = op.arguments(input, *args, **kwargs)
        out = bind(op, *inputs, **params)
        # (a result that shares the input's memory, as permute's does, is its view)
        if isinstance(inputs[0], Tensor) and isinstance(out, Tensor):
            return view_of(inputs[0], out)
        return out

    function.__name__ = function.__qualname__ = op.dl_function
    function.__module__ = __name__
    function.__doc__ = docstrings.face_docstring(op)
    return function


def _publish_face(op: Any) -> None:
    """``difflab.<name>`` for a primitive that declares ``dl_function`` (now and later)."""
    if op.dl_function:
        function = face_function(op)
        globals()[op.dl_function] = function
        package = sys.modules.get("difflab")
        if package is not None:
            setattr(package, op.dl_function, function)


registry.on_register(_publish_face)


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


clip = globals()["clamp"]  # (clamp itself is generated from its primitive: _publish_face)


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
        return apply(registry.PRIMITIVES["heaviside"], x, value_at_zero)
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
    """``input`` where ``condition`` is true, else ``other``, elementwise.

    The gradient flows to the chosen one; the two are promoted to their common dtype.

    Parameters
    ----------
    condition : Tensor of bool
        Where to take ``input``.
    input, other : Tensor or number
        The values chosen between (broadcast together).
    out : Tensor, optional
        Written into (and returned).

    Returns
    -------
    Tensor
        ``input`` where ``condition`` holds, else ``other``; each gets the adjoint where it
        was chosen, 0 elsewhere.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.where(dl.tensor([True, False]), dl.tensor([1.0, 2.0]), dl.tensor([10.0, 20.0]))
    tensor([ 1., 20.])
    """
    result = _where(condition, input, other)
    return result if out is None else write_out(out, result)


def _where(cond: Any, a: Any, b: Any) -> Any:
    # A Tensor condition makes the result a Tensor even between two arrays: a traced
    # condition must reach the graph (a backward's masks are where(cond, ḡ, 0) with ḡ
    # a constant array; computed aside, they would be baked in as this input's mask).
    any_tensor = builtins.any(isinstance(v, Tensor) for v in (cond, a, b))
    cond = unwrap(cond)
    handler = _handler_for(a) or _handler_for(b)  # first, as in _binary
    if handler is not None:
        return handler.where(cond, a, b)
    if any_tensor:
        return apply(structural.Where, cond, *promote(a, b))
    return backend.array_module(cond).where(cond, a, b)


# ------------------------------------------------------ tensor-level functions


def sum(input: Any, dim: Any = None, keepdim: bool = False, *, axis: Any = None,  # noqa: A001, A002
        keepdims: bool | None = None) -> Any:
    """Σ x over ``dim`` (``axis``/``keepdims`` accepted too).

    Parameters
    ----------
    input : Tensor, array, float or Dual
        The values (a Tensor is recorded on the tape).
    dim : int or tuple of int, optional
        The dimensions to reduce (``axis``: NumPy's name); default: all.
    keepdim : bool, default False
        Keep the reduced dimensions with size 1 (``keepdims``: NumPy's name).

    Returns
    -------
    Tensor, array or float
        The sums; the gradient of a sum broadcasts ȳ back to every summed element.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> dl.sum(x), dl.sum(x, dim=0)
    (tensor(10.), tensor([4., 6.]))
    >>> dl.sum(x, 1, keepdim=True)
    tensor([[3.],
            [7.]])
    """
    dim = axis if dim is None else dim
    keepdim = keepdims if keepdims is not None else keepdim
    if isinstance(input, Tensor) or hasattr(input, "sum") and not isinstance(input, np.ndarray):
        return input.sum(axis=dim, keepdims=keepdim)
    return backend.array_module(input).sum(input, axis=dim, keepdims=keepdim)


def mean(input: Any, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A002
    """Σx / n over ``dim``.

    Parameters
    ----------
    input : Tensor, array, float or Dual
        The values (a Tensor is recorded on the tape).
    dim : int or tuple of int, optional
        The dimensions to reduce (``axis``: NumPy's name); default: all.
    keepdim : bool, default False
        Keep the reduced dimensions with size 1 (``keepdims``: NumPy's name).

    Returns
    -------
    Tensor, array or float
        The means.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> dl.mean(x), dl.mean(x, dim=1)
    (tensor(2.5), tensor([1.5, 3.5]))
    """
    if isinstance(input, Tensor):
        return input.mean(dim, keepdim)
    return backend.array_module(input).mean(input, axis=dim, keepdims=keepdim)


def matmul(input: Any, other: Any, *, out: Tensor | None = None) -> Any:  # noqa: A002
    r"""Matrix product input @ other (batched, with NumPy's rules for vectors).

    Parameters
    ----------
    input, other : Tensor or array
        Matrices (or vectors, or batches of matrices: the leading dimensions broadcast).
    out : Tensor, optional
        Written into (and returned).

    Returns
    -------
    Tensor or array
        ``input @ other``.

    Raises
    ------
    ValueError
        When the inner dimensions differ (the message gives both shapes).

    See Also
    --------
    einsum : any sum of products over named axes.

    Notes
    -----
    .. math:: C_{ik} = \sum_j A_{ij} B_{jk}, \qquad \bar A = \bar C B^\top, \quad
              \bar B = A^\top \bar C

    Examples
    --------
    >>> import difflab as dl
    >>> a = dl.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> y = dl.matmul(a, dl.tensor([1.0, 1.0]))
    >>> y
    tensor([3., 7.], grad_fn=<...>)
    >>> y.sum().backward()
    >>> a.grad                   # ȳ bᵀ
    tensor([[1., 1.],
            [1., 1.]])
    """
    return input @ other if out is None else write_out(out, input @ other)


def mm(a: Tensor, b: Tensor) -> Tensor:
    """Product of two matrices."""
    return tensor_of(a).mm(b)


def mv(a: Tensor, v: Tensor) -> Tensor:
    """Matrix-vector product."""
    return tensor_of(a).mv(v)


def dot(a: Tensor, b: Tensor) -> Tensor:
    """Dot product of two vectors."""
    return tensor_of(a).dot(b)


from difflab.functions_shapes import (  # noqa: E402, F401  (re-exported)
    cat,
    chunk,
    concatenate,
    expand_dims,
    flatten,
    flip,
    reshape,
    split,
    squeeze,
    stack,
    swapaxes,
    transpose,
    unsqueeze,
)


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


def var(input: Tensor, dim: Any = None, keepdim: bool = False, unbiased: bool = True) -> Tensor:  # noqa: A002
    """Variance (unbiased by default, as in PyTorch)."""
    return input.var(dim, keepdim, unbiased)


def std(input: Tensor, dim: Any = None, keepdim: bool = False, unbiased: bool = True) -> Tensor:  # noqa: A002
    """Standard deviation (unbiased by default)."""
    return input.std(dim, keepdim, unbiased)


def norm(input: Tensor, p: Any = 2, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """Vector p-norm."""
    return input.norm(p, dim, keepdim)


def max(input: Any, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A001, A002
    """The maximum of ``input`` (the primitive :func:`amax`); with an int ``dim``, a pair
    (values, indices) as in PyTorch; ``max(a, b)`` is elementwise (:func:`maximum`).

    Routed as the primitives' faces are: tensors are recorded, dual numbers carry their
    tangents, sympy expressions become ``sympy.Max``.

    Examples
    --------
    >>> import difflab as dl
    >>> values, indices = dl.max(dl.tensor([[1.0, 5.0], [4.0, 2.0]]), dim=1)
    >>> values, indices
    (tensor([5., 4.]), tensor([1, 0]))
    """
    return _extreme(input, dim, keepdim, "amax", "argmax", "maximum")


def min(input: Any, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A001, A002
    """The minimum of ``input`` (see :func:`max`): :func:`amin` and :func:`argmin`."""
    return _extreme(input, dim, keepdim, "amin", "argmin", "minimum")


def _extreme(x: Any, dim: Any, keepdim: bool, values_of: str, indices_of: str,
             elementwise_of: str) -> Any:
    # (the functions by name: generated from the registry into this module's globals)
    values, indices = globals()[values_of], globals()[indices_of]
    elementwise = ELEMENTWISE[elementwise_of]
    if isinstance(x, (list, tuple)):
        x = tensor_of(x)
    if dim is not None and not isinstance(dim, (int, np.integer, tuple, list)):
        return elementwise(x, dim)  # max(a, b): a tensor, array or dual number as dim
    if dim is None:
        return values(x)
    return MinMax((values(x, dim, keepdim), indices(x, dim, keepdim)))


def t(input: Tensor) -> Tensor:  # noqa: A002
    """Transpose of a matrix (≤ 2 dimensions)."""
    return input.t()


def numel(input: Tensor) -> int:  # noqa: A002
    """Number of elements."""
    return input.numel()


def allclose(input: Any, other: Any, rtol: float = 1e-5, atol: float = 1e-8,  # noqa: A002
             equal_nan: bool = False) -> bool:
    """True when every |input - other| ≤ atol + rtol·|other| (tensors that require grad
    are compared by value)."""
    close = tensor_of(input).isclose(tensor_of(other), rtol, atol, equal_nan)
    return bool(close.all())


def isnan(input: Tensor) -> Tensor:  # noqa: A002
    """Where x is NaN."""
    return tensor_of(input).isnan()


# ======================================================================== compat-core
# PyTorch functions teaching programs reach for (issue 14, compat-core block).


def tril(input: Tensor, diagonal: int = 0, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The lower triangle of the last two dimensions (entries with j ≤ i + diagonal)."""
    return write_out(out, tensor_of(input).tril(diagonal))


def triu(input: Tensor, diagonal: int = 0, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The upper triangle of the last two dimensions (entries with j ≥ i + diagonal)."""
    return write_out(out, tensor_of(input).triu(diagonal))


def floor(input: Tensor) -> Tensor:  # noqa: A002
    """⌊x⌋ (piecewise constant: no gradient)."""
    return tensor_of(input).floor()


def ceil(input: Tensor) -> Tensor:  # noqa: A002
    """⌈x⌉ (piecewise constant: no gradient)."""
    return tensor_of(input).ceil()


def round(input: Tensor) -> Tensor:  # noqa: A001, A002
    """x rounded to the nearest integer, halves to even (no gradient)."""
    return tensor_of(input).round()


def rsqrt(input: Tensor) -> Tensor:  # noqa: A002
    """1/√x."""
    return tensor_of(input).rsqrt()


def reciprocal(input: Tensor) -> Tensor:  # noqa: A002
    """1/x."""
    return tensor_of(input).reciprocal()


def unbind(input: Tensor, dim: int = 0) -> tuple:  # noqa: A002
    """The slices along ``dim``, as a tuple (gradients flow back to each)."""
    return tensor_of(input).unbind(dim)

# ==================================================================== end compat-core


# Two families in modules of their own, part of this one: functions along a dimension
# (gather, scatter, sort, einsum, ...) and functions without a gradient (comparisons, logic).
from difflab.functions_indexing import (  # noqa: E402, F401  (re-exported)
    argsort,
    baddbmm,
    bmm,
    einsum,
    full_like_index,
    gather,
    ger,
    index_select,
    masked_fill,
    outer,
    roll,
    scatter,
    scatter_add,
    sort,
    topk,
)
from difflab.functions_logic import (  # noqa: E402, F401  (re-exported)
    HistogramResult,
    all,
    any,
    count_nonzero,
    eq,
    equal,
    floor_divide,
    ge,
    greater,
    greater_equal,
    gt,
    histc,
    histogram,
    is_nonzero,
    isclose,
    isfinite,
    isinf,
    le,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    lt,
    ne,
    not_equal,
    remainder,
)

# The engine computes a recorded backward (create_graph=True) with this module as xp.
register_recording_namespace(sys.modules[__name__])


# ---------------------------------------------------------------- Tensor methods


def _scatter_add_method(self: Tensor, dim: int, index: Any, src: Any) -> Tensor:
    """``x.scatter_add(dim, index, src)``: :func:`scatter_add` with ``src`` required (its
    three-argument array form is the derivative rules', not a method's)."""
    return scatter_add(self, dim, index, src)


#: Tensor methods that *are* these functions: ``x.gather(dim, index)`` is
#: ``gather(x, dim, index)``.  The math is written once, here.  tensor.py sits below this
#: module and does not import it (no import cycle), so the functions are attached to
#: Tensor when this module is imported (``import difflab`` does).  Direct references,
#: not wrappers: the method call costs what the function call costs.
def _polygamma_method(self: Tensor, n: int) -> Tensor:
    """``x.polygamma(n)``: ``difflab.polygamma(n, x)`` (the order first there, as in PyTorch)."""
    op = registry.get("polygamma")
    inputs, params = op.arguments(n, self)
    return apply(op, *inputs, **params)


_TENSOR_METHODS = {
    "split": split, "chunk": chunk,
    "gather": gather, "scatter": scatter, "scatter_add": _scatter_add_method,
    "index_select": index_select, "sort": sort, "argsort": argsort, "topk": topk,
    "roll": roll, "bmm": bmm, "baddbmm": baddbmm, "outer": outer,
    "ger": outer, "histc": histc, "polygamma": _polygamma_method,
}
for _name, _function in _TENSOR_METHODS.items():
    setattr(Tensor, _name, _function)
