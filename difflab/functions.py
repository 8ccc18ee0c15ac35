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
    method_or_primitive,
    promote,
    reduction_dims,
    rounded_division,
    tensor_of,
    tensor_or_interpreted,
    times_alpha,
    unary_operand,
    unwrap,
    unwrap_operand,
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

    def values(self, x: Any) -> Any:
        """``x``'s values as an array, for a function of ``x`` whose result has no
        derivative (a histogram, a bucket index, a count: piecewise constant in ``x``);
        ``None`` for a type that has no values (sympy's symbols).  See
        ``tensor_arguments.values_of``."""
        return None

    def primitive(self, op: Any, *inputs: Any, **params: Any) -> Any:
        """Any other primitive, called through its faces (``dl.prod(dual)``): by default
        its ``forward`` on the values, with NumPy's functions (which such types implement)."""
        return op.forward(registry.Context(), backend.numpy_namespace, *inputs, **params)


_handlers: dict[type, TypeHandler | None] = {}  # None: looked up, no handler
#: package of a foreign type -> the module that registers its handler when imported
_handler_modules: dict[str, str] = {}


def register_type(cls: type, handler: TypeHandler) -> None:
    """Route difflab's math functions on instances of ``cls`` (and subclasses) to ``handler``.

    After this, ``difflab.sin(v)``, ``difflab.add(v, w)``, ``difflab.where`` and every
    primitive's face, given a ``cls`` value, call the handler's ``unary``, ``binary``,
    ``where`` or ``primitive`` method instead of computing on arrays.  This is how dual
    numbers (forward mode) and sympy expressions (symbolic mode) run the same functions
    as tensors.  Registering again replaces the handler; a type looked up earlier without
    a handler is looked up anew (it may be a subclass of ``cls``).

    Parameters
    ----------
    cls : type
        The number-like type (its subclasses are routed too).
    handler : TypeHandler
        An instance of a ``difflab.functions.TypeHandler`` subclass: ``unary(op, x)``,
        ``binary(op, a, b)`` (``op.rule`` holds the forward and the derivative), and
        optionally ``where`` and ``primitive``.

    Returns
    -------
    None

    See Also
    --------
    difflab.register_primitive : teach difflab a new elementwise function instead.

    Examples
    --------
    A handler that runs every elementwise rule on the value of a tiny wrapper type:

    >>> import difflab as dl
    >>> from difflab.functions import TypeHandler
    >>> class Boxed:
    ...     def __init__(self, value):
    ...         self.value = value
    >>> class Unbox(TypeHandler):
    ...     def unary(self, op, x):
    ...         return Boxed(op.rule.forward(np, x.value))
    >>> dl.register_type(Boxed, Unbox())
    >>> float(dl.exp(Boxed(0.0)).value)
    1.0
    """
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


def div(input: Any, other: Any, *, rounding_mode: str | None = None,  # noqa: A002
        out: Tensor | None = None) -> Any:
    # (the generated face of the rule ``div``, with PyTorch's rounding_mode: a rounded
    # quotient is the primitive floor_divide or trunc_divide, in the operands' common
    # dtype, so integers stay integers; the docstring is the rule's, see Div)
    name = rounded_division(rounding_mode)
    if name is None:
        return write_out(out, _binary(registry.DIV, input, other))
    if _handler_for(input) is None and _handler_for(other) is None and (
            isinstance(input, Tensor) or isinstance(other, Tensor)):
        input, other = promote(unwrap_operand(input), unwrap_operand(other))
    return write_out(out, bind(registry.PRIMITIVES[name], _plain(input), _plain(other)))


div.__doc__ = ELEMENTWISE["div"].__doc__
ELEMENTWISE["div"] = ELEMENTWISE["divide"] = divide = true_divide = div


def add(input: Any, other: Any, *, alpha: Any = 1, out: Tensor | None = None) -> Any:  # noqa: A002
    # (the generated face of the rule ``add``, with PyTorch's alpha: input + alpha·other;
    # the docstring is the rule's, see Add)
    return write_out(out, _binary(registry.ADD, input, times_alpha(other, alpha, input, "add")))


def sub(input: Any, other: Any, *, alpha: Any = 1, out: Tensor | None = None) -> Any:  # noqa: A002
    # (the generated face of the rule ``sub``, with PyTorch's alpha: input - alpha·other)
    return write_out(out, _binary(registry.SUB, input, times_alpha(other, alpha, input, "sub")))


add.__doc__, sub.__doc__ = ELEMENTWISE["add"].__doc__, ELEMENTWISE["sub"].__doc__
ELEMENTWISE["add"] = add
ELEMENTWISE["sub"] = ELEMENTWISE["subtract"] = subtract = sub


linalg_ops.register_bind(bind)  # (the linear-algebra rules apply primitives inside rules)


def face_function(op: Any) -> Any:
    """``difflab.<op.dl_function>``: the call as ``op.arguments`` reads it; on tensors the
    op is applied (recorded), on a registered number type (``Dual``, sympy expressions)
    its handler runs the primitive, on arrays its forward runs on them."""
    def function(input: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A002
        if input is None or isinstance(input, (list, tuple, str)):  # a list of numbers: a
            input = tensor_of(input)  # noqa: A001  (tensor, as tensor_of reads; None: refused)
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
    r"""Teach difflab a new elementwise primitive; returns its function.

    ``rule`` is a subclass of ``difflab.ops.elementwise.Unary`` (or ``Binary``) with a
    ``name``, a ``forward`` and a ``derivative`` (``d_da``/``d_db`` for a binary one),
    both written with an array namespace ``xp``.  From then on the function works on
    floats, arrays, tensors (the tape and ``backward``), ``Dual`` numbers (forward mode)
    and sympy expressions (symbolic), so all four methods, ``gradcheck``, the tape
    printer, ``Tensor.<name>`` and expressions (``difflab compare``) know it.

    Parameters
    ----------
    rule : type
        A subclass of ``difflab.ops.elementwise.Unary`` or ``Binary``: ``name`` (an
        identifier), ``math`` (the derivative rule as text), ``forward(xp, x)`` and
        ``derivative(xp, x, y)`` (``y`` is the forward's output, for rules that reuse it).
    replace : bool, default False, keyword-only
        Redefine a primitive registered before under the same name.

    Returns
    -------
    callable
        The new function (also reachable as ``Tensor.<name>``), routed like ``difflab.sin``.

    Raises
    ------
    TypeError
        If ``rule`` is not a subclass of ``Unary`` or ``Binary``, or lacks ``forward``.
    ValueError
        If ``rule.name`` is not an identifier, or is taken and ``replace`` is False.

    See Also
    --------
    difflab.register_type : route the functions on a new number type instead.

    Notes
    -----
    One rule feeds every differentiator: reverse mode multiplies the adjoint by
    ``derivative`` (:math:`\bar x = \bar y\, f'(x)`), forward mode the tangent
    (:math:`\dot y = f'(x)\, \dot x`), and the symbolic mode runs ``forward`` and
    ``derivative`` on sympy expressions.

    Examples
    --------
    >>> import difflab as dl
    >>> class Cube(dl.ops.elementwise.Unary):
    ...     name, math = "cube", "d x³/dx = 3x²"
    ...     @staticmethod
    ...     def forward(xp, x):
    ...         return x * x * x
    ...     @staticmethod
    ...     def derivative(xp, x, y):
    ...         return 3.0 * x * x
    >>> cube = dl.register_primitive(Cube, replace=True)
    >>> cube(2.0)
    8.0
    >>> x = dl.tensor([1.0, 2.0], requires_grad=True)
    >>> cube(x).sum().backward()
    >>> x.grad
    tensor([ 3., 12.])
    >>> float(dl.derivative(lambda v: cube(v) + v, method="symbolic")(2.0))    # 3x² + 1
    13.0

    Taking it out again (what a test does after using one):

    >>> from difflab.ops import registry
    >>> _ = registry.PRIMITIVES.pop("cube"), ELEMENTWISE.pop("cube")
    >>> delattr(dl.Tensor, "cube")
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
    r"""The square x², elementwise (``x * x``).

    Parameters
    ----------
    x : Tensor, array, float, Dual or sympy expression
        The values; on a Tensor the product is recorded on the tape.

    Returns
    -------
    Tensor, array, float, Dual or sympy expression
        ``x * x``, of the kind and shape given.

    See Also
    --------
    difflab.pow : any power.
    difflab.sqrt : its inverse on x ≥ 0.

    Notes
    -----
    It is the product ``x * x``, so its derivative is the product rule's:
    :math:`\frac{d}{dx} x^2 = 2x`, and :math:`\bar x = 2 x \bar y`.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.square(3.0)
    9.0
    >>> x = dl.tensor([2.0, -3.0], requires_grad=True)
    >>> dl.square(x).sum().backward()
    >>> x.grad                     # 2x
    tensor([ 4., -6.])
    """
    return x * x


clip = globals()["clamp"]  # (clamp itself is generated from its primitive: _publish_face)


def sign(x: Any) -> Any:
    r"""The sign of x, elementwise: -1, 0 or 1 (piecewise constant, no gradient).

    Parameters
    ----------
    x : Tensor, array, float, Dual or sympy expression
        The values.

    Returns
    -------
    Tensor, array, float, Dual or sympy expression
        -1.0 where x < 0, 0.0 where x = 0, 1.0 where x > 0; of the kind and shape given.

    See Also
    --------
    difflab.abs : |x|, whose derivative is sign(x).
    difflab.heaviside : the step function.

    Notes
    -----
    .. math:: \operatorname{sign}(x) = \begin{cases} -1 & x < 0 \\ 0 & x = 0 \\
              1 & x > 0 \end{cases}

    It is piecewise constant: its derivative is 0 almost everywhere (and undefined at
    0).  On a Tensor it is a primitive without a derivative, so its result does not
    require grad and no gradient flows through it; a dual number gets a zero tangent.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.sign(dl.tensor([-2.0, 0.0, 3.0]))
    tensor([-1.,  0.,  1.])
    >>> x = dl.tensor([-2.0, 3.0], requires_grad=True)
    >>> (x * dl.sign(x)).sum().backward()     # |x|: sign(x) is a constant factor
    >>> x.grad
    tensor([-1.,  1.])
    """
    if isinstance(x, Tensor):
        return x.sign()
    handler = _handler_for(x)
    if handler is not None:  # the primitive: a zero tangent, or sympy's sign
        return handler.primitive(registry.PRIMITIVES["sign"], x)
    return backend.array_module(x).sign(x)


def heaviside(x: Any, value_at_zero: Any) -> Any:
    """1 for x > 0, 0 for x < 0, ``value_at_zero`` at 0 (no gradient flows)."""
    if isinstance(x, Tensor):
        return apply(registry.PRIMITIVES["heaviside"], x, value_at_zero)
    handler = _handler_for(x)
    if handler is not None:  # the primitive: a zero tangent, or sympy's Heaviside
        return handler.primitive(registry.PRIMITIVES["heaviside"], x, value_at_zero)
    return backend.array_module(x).heaviside(x, value_at_zero)


def where(condition: Any, input: Any, other: Any, *,  # noqa: A002
          out: Tensor | None = None) -> Any:
    """``input`` where ``condition`` is true, else ``other``, elementwise.

    The gradient flows to the chosen one; the two are promoted to their common dtype.
    (``difflab.where`` is :func:`difflab.functions_selecting.where`, which also takes
    the condition alone.)

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
    # (first, as in _binary; then the condition's: x == 0 of symbols is an equation,
    # which only sympy's Piecewise can choose by, between two tensor constants)
    handler = _handler_for(a) or _handler_for(b) or _handler_for(cond)
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
        The dimensions to reduce; default: all (an empty ``[]`` or ``()`` also means
        all, as in PyTorch; NumPy's ``axis=``, accepted too, keeps NumPy's meaning:
        ``axis=()`` reduces none).
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

    An empty ``dim`` is every dimension (PyTorch's meaning; NumPy's ``axis=()`` is none):

    >>> dl.sum(x, dim=[]), tuple(dl.sum(x, axis=()).shape)
    (tensor(10.), (2, 2))
    """
    dim = axis if dim is None else reduction_dims(dim)  # (dim=[]: all; NumPy's axis=(): none)
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
        The dimensions to reduce; default: all (an empty ``[]`` or ``()`` also means
        all, as in PyTorch).
    keepdim : bool, default False
        Keep the reduced dimensions with size 1.

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
    return backend.array_module(input).mean(input, axis=reduction_dims(dim), keepdims=keepdim)


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
    r"""The product of two matrices, ``a @ b`` (no broadcasting, no vectors).

    Parameters
    ----------
    a : Tensor, shape (n, m)
        The left matrix (a list or array is made a tensor).
    b : Tensor, shape (m, p)
        The right matrix.

    Returns
    -------
    Tensor, shape (n, p)
        The product.

    Raises
    ------
    RuntimeError
        If either is not 2-D (use :func:`difflab.matmul` for batches and vectors).
    ValueError
        If the inner sizes differ.

    See Also
    --------
    difflab.matmul : with broadcasting, batches and vectors.
    difflab.bmm : a batch of matrix products.
    difflab.mv : matrix times vector.

    Notes
    -----
    .. math:: C_{ik} = \sum_j A_{ij} B_{jk}, \qquad \bar A = \bar C B^\top, \quad
              \bar B = A^\top \bar C

    Examples
    --------
    >>> import difflab as dl
    >>> a = dl.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> c = dl.mm(a, dl.tensor([[1.0], [10.0]]))
    >>> c
    tensor([[21.],
            [43.]], grad_fn=<...>)
    >>> c.sum().backward()
    >>> a.grad                  # C̄ Bᵀ
    tensor([[ 1., 10.],
            [ 1., 10.]])
    """
    return tensor_or_interpreted(a).mm(b)


def mv(a: Tensor, v: Tensor) -> Tensor:
    r"""The product of a matrix and a vector, ``a @ v``.

    Parameters
    ----------
    a : Tensor, shape (n, m)
        The matrix (a list or array is made a tensor).
    v : Tensor, shape (m,)
        The vector.

    Returns
    -------
    Tensor, shape (n,)
        The product.

    Raises
    ------
    RuntimeError
        If ``a`` is not 2-D or ``v`` not 1-D.
    ValueError
        If the sizes do not fit (m differs).

    See Also
    --------
    difflab.mm : matrix times matrix.
    difflab.matmul : with broadcasting.

    Notes
    -----
    .. math:: y_i = \sum_j A_{ij} v_j, \qquad \bar A = \bar y\, v^\top, \quad
              \bar v = A^\top \bar y

    Examples
    --------
    >>> import difflab as dl
    >>> v = dl.tensor([1.0, 1.0], requires_grad=True)
    >>> y = dl.mv(dl.tensor([[1.0, 2.0], [3.0, 4.0]]), v)
    >>> y
    tensor([3., 7.], grad_fn=<...>)
    >>> y.sum().backward()
    >>> v.grad                  # Aᵀ ȳ
    tensor([4., 6.])
    """
    return tensor_or_interpreted(a).mv(v)


def dot(a: Tensor, b: Tensor) -> Tensor:
    r"""The dot product of two vectors, Σᵢ aᵢ bᵢ (a 0-d tensor).

    Parameters
    ----------
    a, b : Tensor, shape (n,)
        The two vectors (a list or array is made a tensor).

    Returns
    -------
    Tensor, shape ()
        Their dot product.

    Raises
    ------
    RuntimeError
        If either is not 1-D.
    ValueError
        If their lengths differ.

    See Also
    --------
    difflab.matmul : the general product.
    difflab.outer : the outer product of two vectors.

    Notes
    -----
    .. math:: y = \sum_i a_i b_i, \qquad \bar a = \bar y\, b, \quad \bar b = \bar y\, a

    Examples
    --------
    >>> import difflab as dl
    >>> a = dl.tensor([1.0, 2.0], requires_grad=True)
    >>> y = dl.dot(a, dl.tensor([3.0, 4.0]))
    >>> y
    tensor(11., grad_fn=<...>)
    >>> y.backward()
    >>> a.grad
    tensor([3., 4.])
    """
    return tensor_or_interpreted(a).dot(b)


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


def var(input: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,  # noqa: A002
        *, correction: Any = None) -> Tensor:
    r"""The variance of ``input`` over ``dim``: Σ(x - mean)² / (n - 1) by default.

    PyTorch's signature: ``var(input, dim=None, *, correction=1, keepdim=False)``, and its
    older one, ``var(input, dim, unbiased, keepdim=False)``: a third positional argument
    is ``unbiased`` (not ``keepdim``), and ``var(input, False)`` is
    ``var(input, unbiased=False)``.

    Parameters
    ----------
    input : Tensor, array or list
        The values (floating point).
    dim : int or tuple of int, optional
        The dimensions to reduce; default (None): all of them (an empty ``[]`` or
        ``()`` also means all, as in PyTorch).
    unbiased : bool, optional
        PyTorch's older spelling of ``correction``: True is ``correction=1``, False is
        ``correction=0``.
    keepdim : bool, default False
        Keep the reduced dimensions with size 1.
    correction : int or float, optional, keyword-only
        The c of :math:`n - c` that divides the sum of squares: 1 by default (Bessel's
        correction, the unbiased estimate of a population's variance from a sample);
        0 is the mean of the squared deviations.

    Returns
    -------
    Tensor
        The variances (0-d for ``dim=None``).  Where n - c ≤ 0 (one element, c = 1),
        the division by 0 gives inf or nan, as in PyTorch.

    Raises
    ------
    RuntimeError
        If ``input`` is not floating point (call ``.float()``), or ``dim`` repeats a
        dimension.
    TypeError
        If ``dim`` is not an int or a tuple of ints, or both ``unbiased`` and
        ``correction`` are given.
    IndexError
        If a dimension of ``dim`` is out of range.

    See Also
    --------
    difflab.std : its square root.
    difflab.var_mean : the variance and the mean in one call.
    difflab.mean : the mean it centres on.

    Notes
    -----
    It is built from recorded steps (a mean, a subtraction, a square, a sum), so its
    gradient is theirs:

    .. math:: \sigma^2 = \frac{1}{n - c} \sum_i (x_i - \bar x)^2, \qquad
              \frac{\partial \sigma^2}{\partial x_i} = \frac{2 (x_i - \bar x)}{n - c}

    with c the ``correction``.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([1.0, 2.0, 4.0], requires_grad=True)
    >>> v = dl.var(x)
    >>> v, dl.var(x, correction=0), dl.var(x, unbiased=False)
    (tensor(2.3333, grad_fn=<...>), tensor(1.5556, grad_fn=<...>), tensor(1.5556, grad_fn=<...>))
    >>> v.backward()
    >>> x.grad                        # 2 (x - mean) / (n - 1)
    tensor([-1.3333, -0.3333,  1.6667])
    >>> rows = dl.tensor([[1.0, 3.0], [2.0, 2.0]])
    >>> dl.var(rows, dim=1), dl.var(rows, 1, False, True)   # (dim, unbiased, keepdim)
    (tensor([2., 0.]), tensor([[1.],
            [0.]]))
    """
    return tensor_or_interpreted(input).var(dim, unbiased, keepdim, correction=correction)


def std(input: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,  # noqa: A002
        *, correction: Any = None) -> Tensor:
    r"""The standard deviation of ``input`` over ``dim``: √var (unbiased by default).

    PyTorch's signatures, as :func:`difflab.var`'s: ``std(input, dim=None, *,
    correction=1, keepdim=False)`` and ``std(input, dim, unbiased, keepdim=False)``.

    Parameters
    ----------
    input : Tensor, array or list
        The values (floating point).
    dim : int or tuple of int, optional
        The dimensions to reduce; default (None): all of them (an empty ``[]`` or
        ``()`` also means all, as in PyTorch).
    unbiased : bool, optional
        PyTorch's older spelling of ``correction``: True is 1, False is 0.
    keepdim : bool, default False
        Keep the reduced dimensions with size 1.
    correction : int or float, optional, keyword-only
        The c of :math:`n - c` (1 by default, Bessel's correction).

    Returns
    -------
    Tensor
        The standard deviations (0-d for ``dim=None``).

    Raises
    ------
    RuntimeError
        If ``input`` is not floating point, or ``dim`` repeats a dimension.
    TypeError
        If ``dim`` is not an int or a tuple of ints, or both ``unbiased`` and
        ``correction`` are given.
    IndexError
        If a dimension of ``dim`` is out of range.

    See Also
    --------
    difflab.var : the variance it is the root of.
    difflab.std_mean : the standard deviation and the mean in one call.

    Notes
    -----
    .. math:: \sigma = \sqrt{\frac{1}{n - c} \sum_i (x_i - \bar x)^2}, \qquad
              \frac{\partial \sigma}{\partial x_i} = \frac{x_i - \bar x}{(n - c)\, \sigma}

    (c the ``correction``).  Where all the values are equal, σ = 0 and the
    gradient divides by it: nan, as in PyTorch.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([1.0, 3.0], requires_grad=True)
    >>> s = dl.std(x)
    >>> s, dl.std(x, correction=0)
    (tensor(1.4142, grad_fn=<...>), tensor(1., grad_fn=<...>))
    >>> s.backward()
    >>> x.grad
    tensor([-0.7071,  0.7071])
    """
    return tensor_or_interpreted(input).std(dim, unbiased, keepdim, correction=correction)


def norm(input: Tensor, p: Any = 2, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    r"""The vector p-norm of ``input`` (over ``dim``, or over all its elements).

    Parameters
    ----------
    input : Tensor
        The values.
    p : float, str or None, default 2
        The order: 2, ``"fro"`` or None (Euclidean), 1 (sum of magnitudes), ``float("inf")``
        or ``"inf"`` (largest magnitude), ``-inf`` (smallest), 0 (how many entries are
        nonzero), any other number p for (Σ|x|ᵖ)^(1/p).
    dim : int or tuple of int, optional
        The dimensions to reduce; default: all of them (a matrix's Frobenius norm;
        an empty ``[]`` or ``()`` also means all, as in PyTorch).
    keepdim : bool, default False
        Keep the reduced dimensions with size 1.

    Returns
    -------
    Tensor
        The norms (0-d for ``dim=None``).

    Raises
    ------
    ValueError
        If ``p`` is a string other than ``"fro"``, ``"inf"`` and ``"-inf"`` (the
        nuclear norm is :func:`difflab.linalg.matrix_norm`'s).

    See Also
    --------
    difflab.linalg.vector_norm, difflab.linalg.matrix_norm : the ``torch.linalg`` forms.

    Notes
    -----
    .. math:: \|x\|_p = \Big(\sum_i \lvert x_i \rvert^p\Big)^{1/p}, \qquad
              \frac{\partial \|x\|_2}{\partial x_i} = \frac{x_i}{\|x\|_2}

    Built from recorded steps (for p = 2: square, sum, sqrt), so the gradient at
    x = 0 divides by zero (nan), as √ does; the inf-norm's gradient goes to the
    largest magnitude.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([3.0, -4.0], requires_grad=True)
    >>> n = dl.norm(x)
    >>> n, dl.norm(x, 1), dl.norm(x, float("inf"))
    (tensor(5., grad_fn=<...>), tensor(7., grad_fn=<...>), tensor(4., grad_fn=<...>))
    >>> n.backward()
    >>> x.grad                  # x / ‖x‖
    tensor([ 0.6, -0.8])
    """
    return input.norm(p, dim, keepdim)


def max(input: Any, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A001, A002
    r"""The largest value of ``input``; with ``dim``, the (values, indices) along it.

    Three calls, as in PyTorch:

    * ``max(input)``: the largest element (the primitive :func:`difflab.amax`), 0-d;
    * ``max(input, dim, keepdim=False)``: a pair ``(values, indices)`` along ``dim``,
      readable by name as ``.values`` and ``.indices``;
    * ``max(input, other)``: the elementwise maximum (:func:`difflab.maximum`).

    Routed as the primitives' faces are: tensors are recorded, dual numbers carry their
    tangents, sympy expressions become ``sympy.Max``.

    Parameters
    ----------
    input : Tensor, array, list, Dual or sympy expression
        The values (a list is made a tensor).
    dim : int or Tensor, optional
        The dimension to reduce; or a tensor (or array, dual number): the ``other`` of an
        elementwise maximum.
    keepdim : bool, default False
        Keep the reduced dimension with size 1 (both values and indices).

    Returns
    -------
    Tensor, or (Tensor, Tensor)
        The largest element; with an int ``dim``, ``(values, indices)`` (the indices
        int64, of the first largest); with a tensor, the elementwise maximum.

    Raises
    ------
    IndexError
        If ``dim`` is out of range.
    TypeError
        If ``dim`` is a float or a bool (not a dim; for the elementwise maximum with a
        number, :func:`difflab.maximum` with a tensor, or :meth:`difflab.Tensor.clamp`).

    See Also
    --------
    difflab.amax : the values only, over several dimensions.
    difflab.argmax : the indices only.
    difflab.maximum : the elementwise maximum of two tensors.
    difflab.min : the smallest.

    Notes
    -----
    The gradient of :math:`y = \max_i x_i` is an indicator: :math:`\bar x_i = \bar y` at
    the largest element and 0 elsewhere; where several tie, ``amax``'s rule shares
    :math:`\bar y` equally among them.  The indices are integers: no gradient.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([[1.0, 5.0], [4.0, 2.0]], requires_grad=True)
    >>> values, indices = dl.max(x, dim=1)
    >>> values, indices
    (tensor([5., 4.], grad_fn=<...>), tensor([1, 0]))
    >>> values.sum().backward()
    >>> x.grad                      # 1 where each row's maximum is
    tensor([[0., 1.],
            [1., 0.]])
    >>> dl.max(dl.tensor([1.0, 5.0])), dl.max(dl.tensor([1.0, 5.0]), dl.tensor([3.0, 3.0]))
    (tensor(5.), tensor([3., 5.]))
    """
    return _extreme(input, dim, keepdim, "amax", "argmax", "maximum")


def min(input: Any, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A001, A002
    r"""The smallest value of ``input``; with ``dim``, the (values, indices) along it.

    The mirror of :func:`difflab.max`: ``min(input)`` is :func:`difflab.amin`,
    ``min(input, dim, keepdim=False)`` a pair ``(values, indices)`` (``.values``,
    ``.indices``), and ``min(input, other)`` the elementwise :func:`difflab.minimum`.

    Parameters
    ----------
    input : Tensor, array, list, Dual or sympy expression
        The values (a list is made a tensor).
    dim : int or Tensor, optional
        The dimension to reduce; or the ``other`` of an elementwise minimum.
    keepdim : bool, default False
        Keep the reduced dimension with size 1.

    Returns
    -------
    Tensor, or (Tensor, Tensor)
        The smallest element; with an int ``dim``, ``(values, indices)``; with a tensor,
        the elementwise minimum.

    Raises
    ------
    IndexError
        If ``dim`` is out of range.
    TypeError
        If ``dim`` is a float or a bool (not a dim; for the elementwise minimum with a
        number, :func:`difflab.minimum` with a tensor, or :meth:`difflab.Tensor.clamp`).

    See Also
    --------
    difflab.amin : the values only.
    difflab.argmin : the indices only.
    difflab.minimum : the elementwise minimum.
    difflab.max : the largest.

    Notes
    -----
    As for max: :math:`\bar x_i = \bar y` at the smallest element, 0 elsewhere (shared
    equally among ties); the indices have no gradient.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([[1.0, 5.0], [4.0, 2.0]])
    >>> dl.min(x)
    tensor(1.)
    >>> result = dl.min(x, 0, keepdim=True)
    >>> result.values, result.indices
    (tensor([[1., 2.]]), tensor([[0, 1]]))
    """
    return _extreme(input, dim, keepdim, "amin", "argmin", "minimum")


def _extreme(x: Any, dim: Any, keepdim: bool, values_of: str, indices_of: str,
             elementwise_of: str) -> Any:
    # (the functions by name: generated from the registry into this module's globals)
    values, indices = globals()[values_of], globals()[indices_of]
    elementwise = ELEMENTWISE[elementwise_of]
    if isinstance(x, (list, tuple)):
        x = tensor_of(x)
    if isinstance(dim, (float, bool, np.floating, np.bool_)):  # (PyTorch refuses them too)
        name = values_of[1:]
        raise TypeError(f"{name}: dim must be an int, got {type(dim).__name__} {dim!r}; for "
                        f"the elementwise {elementwise_of} with a number use "
                        f"difflab.{elementwise_of}(x, difflab.tensor({dim!r})) or x.clamp()")
    if dim is not None and not isinstance(dim, (int, np.integer, tuple, list)):
        return elementwise(x, dim)  # max(a, b): a tensor, array or dual number as dim
    if dim is None:
        return values(x)
    return MinMax((values(x, dim, keepdim), indices(x, dim, keepdim)))


def t(input: Tensor) -> Tensor:  # noqa: A002
    """The transpose of a matrix (a vector or a 0-d tensor is returned as it is).

    Parameters
    ----------
    input : Tensor
        At most 2-D.

    Returns
    -------
    Tensor
        ``input`` with its two dimensions swapped (a view); the gradient is transposed back.

    Raises
    ------
    RuntimeError
        If ``input`` has more than 2 dimensions (use :func:`difflab.transpose`).

    See Also
    --------
    difflab.transpose : swap any two dimensions.
    difflab.permute : reorder all of them.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.t(dl.tensor([[1.0, 2.0, 3.0]]))
    tensor([[1.],
            [2.],
            [3.]])
    >>> dl.t(dl.tensor([1.0, 2.0]))
    tensor([1., 2.])
    """
    return input.t()


def numel(input: Tensor) -> int:  # noqa: A002
    """The number of elements of ``input``, the product of its shape.

    Parameters
    ----------
    input : Tensor
        Any tensor.

    Returns
    -------
    int
        A Python int (1 for a 0-d tensor, 0 if a dimension is 0).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.numel(dl.zeros(2, 3)), dl.numel(dl.tensor(1.0)), dl.numel(dl.zeros(0, 4))
    (6, 1, 0)
    """
    return input.numel()


def allclose(input: Any, other: Any, rtol: float = 1e-5, atol: float = 1e-8,  # noqa: A002
             equal_nan: bool = False) -> bool:
    r"""Whether two tensors are equal within tolerances, elementwise (a Python bool).

    True when every :math:`|\text{input} - \text{other}| \le \text{atol} + \text{rtol}
    \cdot |\text{other}|` (broadcasting the two): the test of :func:`difflab.isclose`,
    for all the elements.  Tensors that require grad are compared by value.

    Parameters
    ----------
    input : Tensor, array or list
        The values tested.
    other : Tensor, array, list or number
        The reference values (broadcast against ``input``).
    rtol : float, default 1e-05
        The tolerance relative to ``|other|``.
    atol : float, default 1e-08
        The absolute tolerance.
    equal_nan : bool, default False
        Count two NaNs in the same place as equal.

    Returns
    -------
    bool
        A Python bool, not a tensor.

    Raises
    ------
    ValueError
        If the shapes do not broadcast.

    See Also
    --------
    difflab.isclose : the same test, element by element.
    difflab.equal : exact equality, shapes included.

    Notes
    -----
    Not symmetric: the tolerance scales with ``|other|``, the reference.  No gradient.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.allclose(dl.tensor([1.0, 2.0]), dl.tensor([1.0, 2.000001]))
    True
    >>> dl.allclose(dl.tensor([1.0]), dl.tensor([1.1])), dl.allclose([1.0], [1.1], atol=0.2)
    (False, True)
    >>> nan = float("nan")
    >>> dl.allclose(dl.tensor([nan]), dl.tensor([nan])), dl.allclose([nan], [nan], equal_nan=True)
    (False, True)
    """
    close = tensor_of(input).isclose(tensor_of(other), rtol, atol, equal_nan)
    return bool(close.all())


def isnan(input: Tensor) -> Tensor:  # noqa: A002
    """Where the elements of ``input`` are NaN (not a number), as a bool tensor.

    Parameters
    ----------
    input : Tensor, array, list, Dual or sympy expression
        The values (of a symbol or an expression, ``isnan(x)`` stays a test on the
        values the symbolic derivative is evaluated at).

    Returns
    -------
    Tensor of bool
        ``input``'s shape; True where the value is NaN (NaN is the only value not equal
        to itself).  No gradient.

    See Also
    --------
    difflab.isfinite, difflab.isinf : the other float classes.
    difflab.nan_to_num : replace them.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.isnan(dl.tensor([1.0, float("nan"), float("inf")]))
    tensor([False,  True, False])
    >>> bool(dl.isnan(dl.tensor([1.0, float("nan")])).any())
    True
    """
    return method_or_primitive(input, "isnan")


# ======================================================================== compat-core
# PyTorch functions teaching programs reach for (issue 14, compat-core block).


def tril(input: Tensor, diagonal: int = 0, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    r"""The lower triangle of the last two dimensions (j ≤ i + ``diagonal``), zeros above.

    Parameters
    ----------
    input : Tensor, shape (..., n, m)
        At least 2-D; leading dimensions are batches.
    diagonal : int, default 0
        Which diagonal bounds the triangle: 0 the main one, k > 0 that many above it,
        k < 0 below it.
    out : Tensor, optional, keyword-only
        Written into (and returned).

    Returns
    -------
    Tensor, shape (..., n, m)
        A copy with the entries above the diagonal set to 0.

    Raises
    ------
    RuntimeError
        If ``input`` has fewer than 2 dimensions.
    TypeError
        If ``diagonal`` is not an int.

    See Also
    --------
    difflab.triu : the upper triangle.

    Notes
    -----
    A mask, :math:`y_{ij} = x_{ij}\, [j \le i + k]`: the gradient is the same mask on
    the adjoint, so gradients flow to the kept entries only.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.ones(3, 3, requires_grad=True)
    >>> dl.tril(x)
    tensor([[1., 0., 0.],
            [1., 1., 0.],
            [1., 1., 1.]], grad_fn=<...>)
    >>> dl.tril(x, diagonal=-1).sum().backward()
    >>> x.grad
    tensor([[0., 0., 0.],
            [1., 0., 0.],
            [1., 1., 0.]])
    """
    return write_out(out, tensor_or_interpreted(input).tril(diagonal))


def triu(input: Tensor, diagonal: int = 0, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    r"""The upper triangle of the last two dimensions (j ≥ i + ``diagonal``), zeros below.

    Parameters
    ----------
    input : Tensor, shape (..., n, m)
        At least 2-D; leading dimensions are batches.
    diagonal : int, default 0
        Which diagonal bounds the triangle: 0 the main one, k > 0 that many above it,
        k < 0 below it.
    out : Tensor, optional, keyword-only
        Written into (and returned).

    Returns
    -------
    Tensor, shape (..., n, m)
        A copy with the entries below the diagonal set to 0.

    Raises
    ------
    RuntimeError
        If ``input`` has fewer than 2 dimensions.
    TypeError
        If ``diagonal`` is not an int.

    See Also
    --------
    difflab.tril : the lower triangle.

    Notes
    -----
    A mask, :math:`y_{ij} = x_{ij}\, [j \ge i + k]`: gradients flow to the kept
    entries only.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    >>> dl.triu(x)
    tensor([[1., 2., 3.],
            [0., 5., 6.]])
    >>> dl.triu(x, 1)
    tensor([[0., 2., 3.],
            [0., 0., 6.]])
    """
    return write_out(out, tensor_or_interpreted(input).triu(diagonal))


def floor(input: Tensor) -> Tensor:  # noqa: A002
    r"""The floor ⌊x⌋ of each element: the largest integer ≤ x (derivative 0).

    Parameters
    ----------
    input : Tensor, array, list, Dual or sympy expression
        The values.

    Returns
    -------
    Tensor, Dual's values or sympy expression
        ``input``'s shape and dtype (floats stay floats); for a ``Dual`` its values
        rounded (a constant: no tangent), for a sympy expression ``sympy.floor`` of it.

    See Also
    --------
    difflab.ceil : rounding up.
    difflab.round : to the nearest integer.
    difflab.trunc : towards zero.

    Notes
    -----
    Piecewise constant: :math:`\frac{d}{dx}\lfloor x \rfloor = 0` almost everywhere
    (undefined at the integers).  It is the registry's primitive ``floor``, a
    ``StepFunction``: on a Tensor that requires grad its result requires grad and its
    gradient is zeros, as in PyTorch (a factor ⌊x⌋ in a product acts as a constant);
    forward mode gives it a zero tangent; the symbolic method differentiates
    ``sympy.floor``, whose derivative it takes as 0.  So every method gives the same
    derivative away from the integers.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.floor(dl.tensor([-1.5, 0.5, 2.0]))
    tensor([-2.,  0.,  2.])
    >>> x = dl.tensor([1.5, 2.5], requires_grad=True)
    >>> dl.floor(x).requires_grad                 # (its gradient: zeros)
    True
    >>> (x * dl.floor(x)).sum().backward()      # ⌊x⌋ acts as a constant factor
    >>> x.grad
    tensor([1., 2.])
    >>> f = lambda v: dl.floor(v) * v            # d/dv = ⌊v⌋ away from the integers
    >>> [float(dl.grad(f, method=m)(dl.tensor(2.5))) for m in ("forward", "symbolic")]
    [2.0, 2.0]
    """
    return method_or_primitive(input, "floor")


def ceil(input: Tensor) -> Tensor:  # noqa: A002
    r"""The ceiling ⌈x⌉ of each element: the smallest integer ≥ x (derivative 0).

    Parameters
    ----------
    input : Tensor, array, list, Dual or sympy expression
        The values.

    Returns
    -------
    Tensor, Dual's values or sympy expression
        ``input``'s shape and dtype (floats stay floats); ``sympy.ceiling`` of an
        expression.

    See Also
    --------
    difflab.floor : rounding down.
    difflab.round : to the nearest integer.

    Notes
    -----
    Piecewise constant: :math:`\frac{d}{dx}\lceil x \rceil = 0` almost everywhere
    (undefined at the integers).  On a Tensor that requires grad its result requires
    grad too and its gradient is zeros, as in PyTorch.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.ceil(dl.tensor([-1.5, 0.5, 2.0]))
    tensor([-1.,  1.,  2.])
    >>> x = dl.tensor([0.2], requires_grad=True)
    >>> dl.ceil(x).sum().backward()
    >>> x.grad
    tensor([0.])
    """
    return method_or_primitive(input, "ceil")


def round(input: Tensor, *, decimals: int = 0) -> Tensor:  # noqa: A001, A002
    r"""Each element rounded to the nearest integer, or to ``decimals`` places; halves to even.

    Its derivative is 0: the gradient through it is zeros.

    Parameters
    ----------
    input : Tensor, array, list, Dual or sympy expression
        The values (a sympy expression gives ``rint(x)``, NumPy's rounding to even, with
        derivative 0).
    decimals : int, default 0
        The number of decimal places to keep; negative rounds to tens, hundreds, ...
        (``decimals=-2``: to the nearest hundred).

    Returns
    -------
    Tensor
        ``input``'s shape and dtype.

    Raises
    ------
    TypeError
        If ``decimals`` is not an int.
    RuntimeError
        If ``decimals`` is not 0 and ``input`` is not floating-point (as PyTorch).

    See Also
    --------
    difflab.floor, difflab.ceil : rounding down and up.
    difflab.Tensor.round_ : in place.

    Notes
    -----
    Ties go to the even integer (banker's rounding, as ``numpy.round`` and PyTorch):
    0.5 → 0, 1.5 → 2, 2.5 → 2.  With ``decimals`` the rule is PyTorch's (and
    ``numpy.around``'s): :math:`\operatorname{round}(x \cdot 10^d) / 10^d`, fast but
    not exact, since most decimals have no exact binary float (and low precisions
    overflow: ``x · 10^d`` must fit).  Piecewise constant: the derivative is 0 almost
    everywhere; on a Tensor that requires grad its result requires grad and its
    gradient is zeros, as in PyTorch.  A straight-through estimator is
    ``x + (dl.round(x) - x).detach()``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.round(dl.tensor([0.5, 1.5, 2.5, -1.7]))
    tensor([ 0.,  2.,  2., -2.])
    >>> dl.round(dl.tensor([0.1234567, 2.71828]), decimals=3)
    tensor([0.123, 2.718])
    >>> dl.tensor([1234.5, -1250.0]).round(decimals=-2)
    tensor([ 1200., -1200.])
    >>> x = dl.tensor([0.7], requires_grad=True)
    >>> (x + (dl.round(x) - x).detach()).sum().backward()     # straight through
    >>> x.grad
    tensor([1.])
    """
    x = tensor_or_interpreted(input)
    if isinstance(x, Tensor):
        return x.round(decimals=decimals)
    # a Dual or a sympy expression: the same steps as Tensor.round's
    if isinstance(decimals, bool) or not isinstance(decimals, (int, np.integer)):
        raise TypeError(f"round(): decimals must be an int, got {type(decimals).__name__}")
    if not decimals:
        return apply(registry.PRIMITIVES["round"], x)
    scale = 10.0 ** decimals
    return apply(registry.PRIMITIVES["round"], x * scale) / scale


def rsqrt(input: Tensor) -> Tensor:  # noqa: A002
    r"""The reciprocal square root 1/√x of each element.

    Parameters
    ----------
    input : Tensor, array or list
        The values (x > 0; 0 gives inf, x < 0 nan).

    Returns
    -------
    Tensor
        ``input``'s shape.

    See Also
    --------
    difflab.sqrt : √x.
    difflab.reciprocal : 1/x.

    Notes
    -----
    Recorded as ``1 / sqrt(x)``, so the gradient is the chain rule's:

    .. math:: \frac{d}{dx} x^{-1/2} = -\tfrac{1}{2} x^{-3/2}

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([1.0, 4.0], requires_grad=True)
    >>> y = dl.rsqrt(x)
    >>> y
    tensor([1. , 0.5], grad_fn=<...>)
    >>> y.sum().backward()
    >>> x.grad                  # -x^(-3/2) / 2
    tensor([-0.5   , -0.0625])
    """
    return tensor_or_interpreted(input).rsqrt()


def reciprocal(input: Tensor) -> Tensor:  # noqa: A002
    r"""The reciprocal 1/x of each element.

    Parameters
    ----------
    input : Tensor, array or list
        The values (0 gives inf).

    Returns
    -------
    Tensor
        ``input``'s shape (floating point).

    See Also
    --------
    difflab.div : a / b.
    difflab.rsqrt : 1/√x.

    Notes
    -----
    Recorded as the division ``1 / x``:

    .. math:: \frac{d}{dx} \frac{1}{x} = -\frac{1}{x^2}

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([2.0, 4.0], requires_grad=True)
    >>> y = dl.reciprocal(x)
    >>> y
    tensor([0.5 , 0.25], grad_fn=<...>)
    >>> y.sum().backward()
    >>> x.grad                  # -1/x²
    tensor([-0.25  , -0.0625])
    """
    return tensor_or_interpreted(input).reciprocal()


def unbind(input: Tensor, dim: int = 0) -> tuple:  # noqa: A002
    """The slices of ``input`` along ``dim``, as a tuple (the dimension removed).

    Parameters
    ----------
    input : Tensor
        The values (a list or array is made a tensor).
    dim : int, default 0
        The dimension to take apart.

    Returns
    -------
    tuple of Tensor
        ``input.shape[dim]`` tensors, each ``input``'s shape without ``dim``: the views
        ``input[..., i, ...]``.

    Raises
    ------
    IndexError
        If ``dim`` is out of range.

    See Also
    --------
    difflab.split, difflab.chunk : pieces that keep the dimension.
    difflab.stack : the inverse, joining along a new dimension.

    Notes
    -----
    Each slice is an indexing step: its gradient is scattered back into its row of
    ``input``'s gradient, so gradients from all of them add up there.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> rows = dl.unbind(x)
    >>> rows
    (tensor([1., 2.], grad_fn=<...>), tensor([3., 4.], grad_fn=<...>))
    >>> (2 * rows[0] + rows[1]).sum().backward()
    >>> x.grad
    tensor([[2., 2.],
            [1., 1.]])
    >>> dl.unbind(x, dim=1)[0]
    tensor([1., 3.], grad_fn=<...>)
    """
    return tensor_or_interpreted(input).unbind(dim)

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
)

# The engine computes a recorded backward (create_graph=True) with this module as xp.
register_recording_namespace(sys.modules[__name__])


# ---------------------------------------------------------------- Tensor methods


def _scatter_add_method(self: Tensor, dim: int, index: Any, src: Any) -> Tensor:
    """A copy with ``src`` added at ``index`` along ``dim``: ``x.scatter_add(dim, index, src)``.

    ``x.scatter_add(dim, index, src)`` is ``difflab.scatter_add(x, dim, index, src)``,
    with ``src`` required.  See :func:`difflab.scatter_add` for the parameters, the
    gradients and examples.

    Parameters
    ----------
    dim : int
        The dimension to write along.
    index : Tensor of int64
        Where each element of ``src`` goes along ``dim``.
    src : Tensor
        The values added.

    Returns
    -------
    Tensor
        A copy of ``x`` with the sums (``x`` itself is unchanged).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.zeros(3).scatter_add(0, dl.tensor([0, 2, 0]), dl.tensor([1.0, 2.0, 3.0]))
    tensor([4., 0., 2.])
    """
    return scatter_add(self, dim, index, src)


#: Tensor methods that *are* these functions: ``x.gather(dim, index)`` is
#: ``gather(x, dim, index)``.  The math is written once, here.  tensor.py sits below this
#: module and does not import it (no import cycle), so the functions are attached to
#: Tensor when this module is imported (``import difflab`` does).  Direct references,
#: not wrappers: the method call costs what the function call costs.
def _polygamma_method(self: Tensor, n: int) -> Tensor:
    """ψ⁽ⁿ⁾(x), the n-th derivative of the digamma function: ``x.polygamma(n)``.

    ``x.polygamma(n)`` is ``difflab.polygamma(n, x)`` (the order first there, as in
    PyTorch).  See :func:`difflab.polygamma` for the derivative rule and examples.

    Parameters
    ----------
    n : int
        The order, n ≥ 0 (0: digamma itself).

    Returns
    -------
    Tensor
        ψ⁽ⁿ⁾ of each element.

    Raises
    ------
    TypeError
        If ``n`` is not an integer.
    ValueError
        If ``n`` is negative.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.tensor([1.0, 2.0]).polygamma(1)           # π²/6 and π²/6 - 1
    tensor([1.6449, 0.6449])
    """
    op = registry.get("polygamma")
    inputs, params = op.arguments(n, self)
    return apply(op, *inputs, **params)


_TENSOR_METHODS = {
    "split": split, "chunk": chunk,
    "gather": gather, "scatter": scatter, "scatter_add": _scatter_add_method,
    "index_select": index_select, "sort": sort, "argsort": argsort, "topk": topk,
    "roll": roll, "bmm": bmm, "baddbmm": baddbmm, "outer": outer,
    "ger": outer, "histc": histc, "polygamma": _polygamma_method,
    # (x.max(other): the elementwise maximum for any kind of other, a dual number too)
    "max": max, "min": min,
}
for _name, _function in _TENSOR_METHODS.items():
    setattr(Tensor, _name, _function)
