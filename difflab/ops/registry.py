r"""The registry: every primitive difflab knows, each in one place.

A *primitive* is an operation whose derivative difflab knows by a rule rather
than by taking it apart: ``sin``, ``mul``, ``matmul``, ``sum``, ``reshape``,
``conv2d``, ...  Each is one object with

* ``name``: how it is called everywhere (``difflab.sin``, ``Tensor.sin``,
  ``"sin(x)"`` on the command line, ``sinBackward`` on the tape);
* ``forward(ctx, xp, *inputs, **params)``: the value, from plain arrays;
* ``vjp(ctx, xp, ȳ, *saved)``: reverse mode, one adjoint per input;
* ``jvp(ctx, xp, *tangents, *saved)``: forward mode, the output's tangent;
* ``math``: the rule as a student writes it.

Elementwise primitives are built from a rule in :mod:`difflab.ops.elementwise`
(the forward f and the local derivative f′ side by side); their VJP and JVP
are both generated from f′.  Structural primitives (:mod:`difflab.ops.structural`)
write a JVP and a VJP side by side, the VJP the transpose of the JVP; the
neural-network primitives (:mod:`difflab.ops.nn_ops`) give a VJP.

Who reads this table, and nothing else lists primitives:

=========================  ==================================================
the tape (reverse mode)    ``engine.apply(primitive, ...)`` records, ``vjp`` walks back
``Dual`` (forward mode)    ``jvp`` pushes tangents forward
``vmap`` (difflab.func)    ``batch`` maps it over a batch (:mod:`difflab.ops.batching`)
sympy (symbolic)           the elementwise rule's ``symbolic`` form
``difflab.<name>``         one dispatching function per elementwise primitive
``Tensor.<name>``          one method per elementwise primitive
expressions and the CLI    the names an expression may call, with descriptions
the tests                  parametrized over :func:`elementwise`
=========================  ==================================================

A new primitive is added by writing its rule and calling
:func:`difflab.register_primitive` (see docs/primitives.md), at run time too.
"""

from __future__ import annotations

from typing import Any

from difflab.ops import (
    batching,
    complex_numbers,
    division,
    elementwise,
    fourier,
    linalg,
    linalg_spectral,
    logic,
    nn_conv,
    nn_ops,
    nn_recurrent,
    products,
    reductions,
    special,
    structural,
)
from difflab.ops.elementwise_primitives import BinaryOp, UnaryOp
from difflab.ops.primitive import Primitive


class Context:
    """The ``ctx`` a primitive's forward gets when no tape records it (forward mode).

    On the tape, the record itself (``autograd.engine.Node``) plays this part.
    """

    __slots__ = ("needs_input_grad", "saved", "__dict__")

    def __init__(self, needs_input_grad: tuple = ()) -> None:
        self.needs_input_grad = needs_input_grad
        self.saved: tuple = ()

    def save(self, *arrays: Any) -> None:
        """Keep these arrays for the derivative (handed to ``jvp`` after the tangents)."""
        self.saved = arrays


#: name -> primitive, for every primitive difflab knows.
PRIMITIVES: dict[str, Any] = {}

#: Called with each primitive registered, now and later (``on_register``): the faces.
_LISTENERS: list = []

#: NumPy ufunc name -> elementwise primitive (filled by ``register``; forward mode
#: looks every ufunc called on a Dual up here).
_BY_NUMPY_NAME: dict[str, Any] = {}

#: Tensor method name -> the primitive whose face it is (``tensor_method``), so that the
#: other array types (``Dual``, sympy's ``SymbolArray``) give the same methods.
_BY_TENSOR_METHOD: dict[str, Any] = {}


def register(primitive: Any, *, replace: bool = False) -> Any:
    """Add ``primitive`` to the registry under its ``name``; returns it.

    Raises ``ValueError`` if the name is taken (pass ``replace=True`` to
    redefine a primitive you registered yourself) or is not an identifier,
    and ``TypeError`` if the object lacks ``forward`` or ``vjp`` or is not a
    :class:`~difflab.ops.primitive.Primitive` (an instance or a subclass).
    """
    name = getattr(primitive, "name", "")  # (anything may be offered: checked here)
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(
            f"a primitive needs a name that is a Python identifier (it is called as "
            f"difflab.<name> and in expressions), got {name!r}"
        )
    needed = ("forward", "vjp") if getattr(primitive, "differentiable", True) else ("forward",)
    missing = [m for m in needed if not callable(getattr(primitive, m, None))
               or getattr(primitive, m) in (Primitive.forward, Primitive.vjp)]
    if missing:
        raise TypeError(f"primitive {name!r} has no {' or '.join(missing)} method")
    if not isinstance(primitive, Primitive) and not (
            isinstance(primitive, type) and issubclass(primitive, Primitive)):
        raise TypeError(
            f"primitive {name!r} must derive from difflab.ops.primitive.Primitive (which "
            f"declares, with defaults, every attribute the engine and the jit read)"
        )
    if name in PRIMITIVES and not replace:
        raise ValueError(
            f"a primitive named {name!r} is already registered; choose another name, or pass "
            f"replace=True to redefine your own"
        )
    PRIMITIVES[name] = primitive
    if getattr(primitive, "tensor_method", None):
        _BY_TENSOR_METHOD[primitive.tensor_method] = primitive
    for listener in _LISTENERS:
        listener(primitive)
    if isinstance(primitive, (UnaryOp, BinaryOp)):
        for key in {name, primitive.rule.numpy_name} - {None, ""}:
            current = _BY_NUMPY_NAME.get(key)  # a NumPy name keeps its first primitive
            if current is None or current.name == name or key == name:
                _BY_NUMPY_NAME[key] = primitive
    return primitive


def on_register(listener: Any) -> None:
    """Call ``listener(primitive)`` for every primitive registered, now and later.

    This is how a primitive's faces appear: ``Tensor`` adds its
    ``tensor_method``, ``difflab.functions`` its ``dl_function`` and forward
    mode its ``numpy_function``, each generated from the primitive's
    ``arguments``, so a primitive is written in one place.
    """
    _LISTENERS.append(listener)
    for primitive in list(PRIMITIVES.values()):
        listener(primitive)


def get(name: str) -> Any:
    """The primitive called ``name`` (a ``KeyError`` listing the known names if none)."""
    try:
        return PRIMITIVES[name]
    except KeyError:
        raise KeyError(
            f"no primitive named {name!r}; registered: {', '.join(sorted(PRIMITIVES))}"
        ) from None


def elementwise_ops(arity: int | None = None) -> list:
    """The elementwise primitives (``arity`` 1 or 2 for unary or binary only)."""
    kinds = {1: (UnaryOp,), 2: (BinaryOp,), None: (UnaryOp, BinaryOp)}[arity]
    return [p for p in PRIMITIVES.values() if isinstance(p, kinds)]


def by_tensor_method(method: str) -> Any:
    """The primitive whose face is ``Tensor.<method>`` (``tensor_method``), or ``None``."""
    return _BY_TENSOR_METHOD.get(method)


def by_numpy_name(numpy_name: str) -> Any:
    """The elementwise primitive that mirrors NumPy's ufunc ``numpy_name``, or ``None``."""
    return _BY_NUMPY_NAME.get(numpy_name)


# -------------------------------------------------------------- difflab's own

for _rule in elementwise.UNARY_RULES + special.UNARY_RULES:
    register(UnaryOp(_rule))
for _rule in elementwise.BINARY_RULES + division.BINARY_RULES:
    register(BinaryOp(_rule))
for _primitive in (
    # structural: reductions, linear algebra, shapes and views, indexing
    reductions.Sum, reductions.Mean, reductions.Prod, reductions.CumSum, reductions.MaxReduce,
    reductions.MinReduce,
    structural.MatMul, structural.Reshape, structural.Permute, structural.Expand,
    structural.Index, structural.ScatterAdd, structural.Flip, structural.IndexPut,
    structural.Concatenate, structural.Where, structural.Clamp, structural.Cast,
    structural.ToDevice, structural.Clone,
    # products of many factors
    products.Einsum, products.CumProd,
    # the special functions' family with a setting (the order n)
    special.Polygamma, special.Zeta, special.Gammainc, special.Gammaincc,
    # neural networks
    nn_ops.Linear, nn_conv.Im2Col, nn_conv.Col2Im, nn_conv.Conv2d, nn_conv.MaxPool2d,
    nn_conv.AvgPool2d, nn_ops.LogSoftmax, nn_ops.Softmax, nn_ops.LogSumExp, nn_ops.NLLLoss,
    nn_ops.BCEWithLogits, nn_ops.MSELoss, nn_ops.Normalize, nn_ops.GELU, nn_ops.LeakyReLU,
    nn_ops.Embedding,
    # one step of a recurrent layer's gates (its projections are linear)
    *nn_recurrent.PRIMITIVES,
    # linear algebra (difflab.linalg's primitives)
    *linalg.PRIMITIVES, *linalg_spectral.PRIMITIVES,
    # complex numbers: parts, conjugate, angle (difflab.ops.complex_numbers)
    *complex_numbers.PRIMITIVES,
    # the discrete Fourier transforms (difflab.fft's primitives)
    *fourier.PRIMITIVES,
):
    register(_primitive)
# without a derivative: comparisons, logic, rounding, indices, counts
for _primitive in logic.NO_DERIVATIVE:
    register(_primitive)

# How each maps over vmap's batch dimensions (elementwise ones have theirs already).
batching.declare(PRIMITIVES)
on_register(batching.attach_rule)

# Short names for the primitives Tensor's operators call most.
ADD, SUB, MUL, DIV, POW = (PRIMITIVES[n] for n in ("add", "sub", "mul", "div", "pow"))
