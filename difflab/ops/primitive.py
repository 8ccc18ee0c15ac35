r"""What a primitive is: every attribute the engine, the jit, export and ``Dual`` read.

A primitive is one operation of the registry (``sin``, ``matmul``, ``sum``,
``eq``, ``argmax``, ...).  Every interpreter reads the same few attributes
of it, and all of them are declared here once, with their defaults, so a
reader sees in one screen what "a primitive" means to the rest of difflab
and no consumer has to guess with ``getattr``:

================================  =================================================
the tape (``engine.apply``)       ``forward``, ``vjp``, ``differentiable``,
                                  ``double_backward``, ``user_code``, ``complex_vjp``
``Dual`` (forward mode)           ``forward``, ``jvp``, ``differentiable``
the sympy trace (symbolic)        ``symbolic`` (or ``forward`` on object arrays)
the graph tracer (``jit``)        ``traced_as``, ``first_order_is_cheaper``,
                                  ``shape_read_from``, ``random``, ``validates``
graph replay and printing         ``prepare``, ``describe``
the fusion pass                   ``fusion``, ``rule``
``vmap`` (``difflab.func``)       ``batch`` (:mod:`difflab.ops.batching`)
the tape printer, the CLI         ``name``, ``math``, ``description``
its faces (generated)             ``tensor_method``, ``dl_function``, ``numpy_function``,
                                  ``arguments``, ``numpy_arguments``
================================  =================================================

The built-in primitives are subclasses whose rules are static methods
(``structural.Sum.forward(ctx, xp, x, axis=None)``) and are registered as the
class itself; the elementwise ones are instances of
:class:`~difflab.ops.elementwise_primitives.UnaryOp` / ``BinaryOp`` made from a rule.
Either way a primitive *is a* ``Primitive``: ``registry.register`` refuses
anything else.

A primitive with no derivative (a comparison, ``argmax``, ``isnan``) sets
``differentiable = False``: its result never requires grad, so the tape
records nothing for it; forward mode gives it a zero tangent; and a
gradient asked of it explicitly is an error that says why.
"""

from __future__ import annotations

from typing import Any


class NoDerivativeError(RuntimeError):
    """A gradient was asked of an operation that has none (``argmax``, a comparison)."""


class Primitive:
    """The base of every primitive: its attributes, each with a default.

    Subclasses override what they have.  ``forward`` is required; ``vjp``
    is required unless ``differentiable`` is False; ``jvp`` is optional
    (``None``: no forward-mode rule, an error in forward mode).
    """

    #: How the primitive is called everywhere: ``difflab.<name>``, the tape, a graph file.
    name: str = ""
    #: The derivative rule as a student writes it (the tape printer shows it).
    math: str = ""
    #: A few words for command-line help and listings.
    description: str = ""
    #: The numpydoc sections of its faces' docstring (Parameters, Returns, Examples):
    #: :mod:`difflab.ops.docstrings` adds the summary (``description``), the call
    #: (``arguments``) and the derivative rule (this class's docstring), so the primitive
    #: is documented once, for ``difflab.<name>`` and ``Tensor.<name>`` alike.
    doc: str = ""
    #: False for an operation with no derivative: never recorded, zero tangent.
    differentiable: bool = True
    #: True when the derivative is 0 (wherever it exists: a comparison, a rounding, an
    #: index; or by decree: ``detach``): forward mode and the symbolic method compute it on
    #: the values alone.  Every ``NoDerivative``; a ``logic.StepFunction`` is differentiable
    #: too, its tape derivative zeros, as PyTorch's ``round``.
    zero_derivative: bool = False
    #: False when the VJP works on arrays only, so ``create_graph=True`` cannot record it.
    double_backward: bool = True
    #: True when a first-order backward is faster as the array rule (conv2d's saved columns).
    first_order_is_cheaper: bool = False
    #: True for a user's own ``autograd.Function`` (or a value check, ``check_index``, whose
    #: message is already the calling function's): its errors pass through unchanged.
    user_code: bool = False
    #: True for a check of values (``check_index``): no pass drops it, even when nothing
    #: reads its result, since eager code raises there too.
    validates: bool = False
    #: True for a draw from a random generator (``rand``, a dropout mask): a graph draws it
    #: anew at every run, and no pass folds it, merges two of them or drops an unread one
    #: (each draw moves the generator on, as eager code does).
    random: bool = False
    #: True for the stop-gradient (``detach``): the identity on values, derivative zero by
    #: decree.  Passes keep it while a graph may still be differentiated; fusion, after
    #: which nothing is, reads its input instead (an identity must not cut a kernel).
    stops_gradient: bool = False
    #: The primitive a wrapper stands for, which the tracer records instead (or None).
    traced_as: Any = None
    #: The elementwise rule the primitive was built from (elementwise primitives only).
    rule: Any = None
    #: How the fusion pass may fuse it: "elementwise", "reduction", "window", "scatter", None.
    fusion: str | None = None
    #: ``prepare(params) -> forward``: a replay's forward specialised once for its settings.
    prepare: Any = None
    #: ``describe(node, args) -> str``: how a graph listing shows the node (default: settings).
    describe: Any = None
    #: ``complex_vjp(ctx, xp, g, *saved)``: the VJP for a complex adjoint ``g``, for a
    #: primitive that is not holomorphic (``conj``); None: the engine conjugates around
    #: ``vjp`` (``conj(vjp(conj(g)))``, right for every holomorphic primitive and every
    #: linear map with real coefficients).  See :mod:`difflab.ops.complex_numbers`.
    complex_vjp: Any = None
    #: ``jvp(ctx, xp, *tangents, *saved) -> ẏ``: forward mode (None: no forward-mode rule).
    jvp: Any = None
    #: ``batch(b, *inputs, **params)``: how it maps over vmap's batch dimensions (None: an
    #: error under vmap).  See :mod:`difflab.ops.batching`.
    batch: Any = None
    #: Its face ``Tensor.<tensor_method>``, generated from ``arguments`` (None: none or by hand).
    tensor_method: str | None = None
    #: Its face ``difflab.<dl_function>``, generated from ``arguments`` (None: none or by hand).
    dl_function: str | None = None
    #: The NumPy function it mirrors, so ``np.<f>(dual)`` reaches it (``numpy_arguments``).
    numpy_function: Any = None
    #: ``symbolic(sp, *inputs, **params)``: its value on sympy expressions (object arrays),
    #: ``sp`` sympy's functions under NumPy's names; None: ``forward`` with NumPy, which
    #: sums, products and reshapes object arrays as they are.
    symbolic: Any = None

    @staticmethod
    def forward(ctx: Any, xp: Any, *inputs: Any, **params: Any) -> Any:
        """The value from plain arrays; saves on ``ctx`` what the derivative reads."""
        raise NotImplementedError("a primitive defines forward(ctx, xp, *inputs, **params)")

    @staticmethod
    def vjp(ctx: Any, xp: Any, g: Any, *saved: Any) -> tuple:
        """Reverse mode: one adjoint per input from the output's adjoint ``g``."""
        raise NoDerivativeError("this operation has no derivative (no vjp)")

    @staticmethod
    def arguments(*args: Any, **kwargs: Any) -> tuple[tuple, dict]:
        """A call of its faces (PyTorch's signature) as the primitive's (inputs, params)."""
        raise TypeError("this primitive declares no faces (tensor_method, dl_function)")

    @staticmethod
    def numpy_arguments(*args: Any, **kwargs: Any) -> tuple[tuple, dict]:
        """A call of ``numpy_function`` (NumPy's signature) as (inputs, params)."""
        raise TypeError("this primitive mirrors no NumPy function")

    @staticmethod
    def shape_read_from(inputs: tuple, params: dict) -> tuple:
        """The inputs (arrays) whose *values* decide the output's shape: a boolean mask.

        Only the graph tracer asks, since a static graph cannot replay such a
        shape; ``inputs`` and ``params`` are the call's.  Most primitives: none.
        """
        return ()


class NoDerivative(Primitive):
    """A primitive without a derivative: a comparison, a mask, an index, a count.

    Its result never requires grad (nothing is recorded on the tape); in
    forward mode its tangent is zero; the graph tracer records it like any
    other primitive, so a traced function replays it on new values.
    """

    differentiable = False
    zero_derivative = True
    double_backward = False
    math = "no derivative"

    @staticmethod
    def vjp(ctx: Any, xp: Any, g: Any, *saved: Any) -> tuple:
        raise NoDerivativeError("this operation has no derivative: its result is a truth "
                                "value, an index or a count, constant almost everywhere")

    @staticmethod
    def jvp(ctx: Any, xp: Any, *tangents_and_saved: Any) -> Any:
        return None  # a zero tangent
