"""Custom autograd operations: subclass :class:`Function`, as in PyTorch.

>>> class Sigmoid(Function):
...     @staticmethod
...     def forward(ctx, input):
...         output = 1 / (1 + difflab.exp(-input))
...         ctx.save_for_backward(output)
...         return output
...     @staticmethod
...     def backward(ctx, grad_output):
...         output, = ctx.saved_tensors
...         return grad_output * output * (1 - output)
>>> y = Sigmoid.apply(x)       # one record on the tape, whatever forward did inside

``forward`` runs with recording switched off, on tensors; ``backward``
receives the output adjoint(s) as tensors and returns one adjoint per input
of ``forward`` (``None`` for inputs that need none).
"""

from __future__ import annotations

from typing import Any

from difflab import functions
from difflab.autograd import engine
from difflab.autograd.grad_mode import _State, no_grad
from difflab.ops.logic import stops_not_held
from difflab.ops.primitive import Primitive
from difflab.tensor import Tensor

# The ctx of a custom Function is the record itself, as for every primitive.
FunctionCtx = engine.Node


class _FunctionPrimitive(Primitive):
    """A user's Function seen as a primitive: the same ``forward``/``vjp`` protocol as
    the built-in ones, so that ``engine.apply`` records it like any other.

    One is made per call: ``forward`` needs the call's own arguments (the
    tensors, not only their arrays: ``save_for_backward`` and identity
    checks see the user's objects), and lets go of them once it has run.
    """

    user_code = True  # errors raised by the user's forward pass through unchanged

    def __init__(self, function: type[Function], args: tuple) -> None:
        self.function = function
        self.name = function.__name__
        self.args: tuple | None = args

    def forward(self, ctx: FunctionCtx, xp: Any, *arrays: Any, **kwargs: Any) -> Any:
        """Run the user's ``forward`` unrecorded, on the call's tensors; return its array.

        On dual numbers (forward mode) a Function that defines ``jvp`` runs on the
        values and its ``jvp`` gives the tangent (``_forward_with_tangents``)."""
        args, self.args = self.args, None
        outer = ctx
        if args is None:  # (run again from a static graph, which holds arrays)
            args = tuple(Tensor._wrap(a) if hasattr(a, "shape") else a for a in arrays)
            if not isinstance(ctx, FunctionCtx):  # (a replay's plain context: the user's
                ctx = FunctionCtx(self)          # forward gets the ctx it knows)
                ctx.needs_input_grad = outer.needs_input_grad
        dual = _newest_dual(args)
        if dual is not None and _defines(self.function, "jvp"):
            return _forward_with_tangents(self, ctx, outer, args, kwargs, dual)
        if dual is not None and dual.tag in ForwardAD.tags:
            raise NotImplementedError(
                f"You must implement the jvp function for custom autograd.Function to use it "
                f"with forward mode AD: {self.name} defines no jvp(ctx, *input_tangents)")
        return self.run(ctx, outer, args, kwargs).array

    def run(self, ctx: FunctionCtx, outer: Any, args: tuple, kwargs: dict) -> Tensor:
        """The user's ``forward`` (and ``setup_context``, if defined) on ``args``, checked."""
        ctx.input_meta = [(a.shape, a.dtype) if isinstance(a, Tensor) else None for a in args]
        # (its own derivative: a detach inside computes values, it stops nothing)
        with no_grad(), stops_not_held():
            if _defines(self.function, "setup_context"):  # PyTorch's newer style: no ctx
                output = self.function.forward(*args, **kwargs)
                self.function.setup_context(ctx, args, output)
            else:
                output = self.function.forward(ctx, *args, **kwargs)
        if ctx is not outer:
            outer.save(*ctx.saved)
        if not isinstance(output, Tensor):
            raise TypeError(
                f"{self.name}.forward must return a Tensor, got {type(output).__name__}"
            )
        ctx.output_is_differentiable = id(output) not in getattr(ctx, "non_differentiable", ())
        return output

    def vjp(self, ctx: FunctionCtx, xp: Any, grad_output: Any, *saved: Any) -> tuple:
        """The user's ``backward``, checked: one adjoint per input, each of its input's shape.

        ``xp`` is ``difflab.functions`` exactly when the backward pass is
        itself recorded (``create_graph=True``); then ``backward`` runs with
        recording on and its results stay tensors.
        """
        create_graph = xp is functions
        if not isinstance(grad_output, Tensor):
            grad_output = Tensor._wrap(grad_output)
        with _grad_mode(create_graph):
            grads = self.function.backward(ctx, grad_output)
        if not isinstance(grads, tuple):
            grads = (grads,)
        if len(grads) != len(ctx.parents):
            raise RuntimeError(
                f"function {self.name}.backward returned {len(grads)} gradient(s), but "
                f"forward took {len(ctx.parents)} input(s): return one per input (None for "
                f"inputs that need no gradient)"
            )
        checked = []
        for i, (g, parent) in enumerate(zip(grads, ctx.parents)):
            if g is None or parent is None:
                checked.append(None)
                continue
            shape, dtype = ctx.input_meta[i]
            if not isinstance(g, Tensor):
                g = Tensor(g, dtype=dtype)
            if tuple(g.shape) != tuple(shape):
                raise RuntimeError(
                    f"function {self.name}.backward returned a gradient of shape "
                    f"{tuple(g.shape)} for input {i}, which has shape {tuple(shape)}"
                )
            checked.append(g if create_graph else g.array)
        return tuple(checked)


class ForwardAD:
    """The tags of the running ``torch.autograd.forward_ad`` levels, kept by
    ``difflab.func.forward_ad`` (a layer above).  A Function without ``jvp`` meeting
    dual numbers of such a tag raises PyTorch's error; inside ``jacfwd`` or the
    ``forward`` differentiator its ``forward`` is pushed through as written."""

    tags: set[int] = set()


def _defines(function: type, name: str) -> bool:
    """Whether a Function subclass writes its own ``jvp`` (or ``setup_context``)."""
    return getattr(function, name) is not getattr(Function, name)


def _newest_dual(args: tuple) -> Any:
    """The dual array of the newest tag among the tensors ``args`` (None without one).
    Forward mode's dual numbers are known by their fields: this layer sits below them."""
    newest = None
    for a in args:
        array = a.array if isinstance(a, Tensor) else None
        if hasattr(array, "tangents") and (newest is None or array.tag > newest.tag):
            newest = array
    return newest


def _forward_with_tangents(primitive: _FunctionPrimitive, ctx: FunctionCtx, outer: Any,
                           args: tuple, kwargs: dict, dual: Any) -> Any:
    r"""A Function with ``jvp`` on dual numbers of ``dual``'s tag: ``forward`` on the
    values, then ``jvp(ctx, *input_tangents)`` once per tangent direction,

    .. math:: \dot y = \sum_j \frac{\partial y}{\partial x_j} \dot x_j,

    an input without a tangent getting zeros (a non-tensor: None).  The result is a
    dual number of the same tag."""
    tag, count = dual.tag, dual.tangents.shape[0]
    at_tag = [isinstance(a, Tensor) and hasattr(a.array, "tangents") and a.array.tag == tag
              for a in args]
    values = tuple(Tensor._wrap(a.array.primal) if d else a for a, d in zip(args, at_tag))
    output = primitive.run(ctx, outer, values, kwargs)
    forward_ctx = _ForwardContext(ctx)
    directions = []
    for k in range(count):
        tangents = tuple(Tensor._wrap(a.array.tangents[k]) if d else
                         functions.zeros_like(a) if isinstance(a, Tensor) else None
                         for a, d in zip(args, at_tag))
        with no_grad():
            tangent = primitive.function.jvp(forward_ctx, *tangents)
        directions.append(_checked_tangent(primitive.name, tangent, output))
    return type(dual)._make(output.array, functions.stack(directions).array, tag)


def _checked_tangent(name: str, tangent: Any, output: Tensor) -> Tensor:
    """One tangent of a Function's output, as its ``jvp`` returned it: a tensor of the
    output's shape (PyTorch's messages)."""
    if isinstance(tangent, tuple):
        if len(tangent) != 1:
            raise RuntimeError(f"Function's jvp returned an invalid number of forward "
                               f"gradients (expected 1 but got {len(tangent)}): {name}.jvp "
                               f"must return one tangent per output of forward")
        tangent = tangent[0]
    if not isinstance(tangent, Tensor):
        raise TypeError(f"{name}.jvp must return a Tensor (the output's tangent), got "
                        f"{type(tangent).__name__}")
    if tuple(tangent.shape) != tuple(output.shape):
        raise RuntimeError(
            f"Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size "
            f"{list(output.shape)} while the given forward gradient is of size "
            f"{list(tangent.shape)}. ({name}.jvp returned it)")
    return tangent


class _ForwardContext:
    """The ``ctx`` a Function's ``jvp`` receives: the forward's own (``del ctx.result``
    deletes there), whose ``saved_tensors`` are those kept by ``ctx.save_for_forward``."""

    __slots__ = ("_ctx",)

    def __init__(self, ctx: FunctionCtx) -> None:
        object.__setattr__(self, "_ctx", ctx)

    @property
    def saved_tensors(self) -> tuple:
        return tuple(getattr(self._ctx, "saved_for_forward", ()))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ctx, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._ctx, name, value)

    def __delattr__(self, name: str) -> None:
        delattr(self._ctx, name)


class _grad_mode:  # noqa: N801
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __enter__(self) -> None:
        self.previous = _State.enabled
        _State.enabled = self.enabled

    def __exit__(self, *exc: object) -> None:
        _State.enabled = self.previous


class Function:
    r"""Base class of custom differentiable operations: your own forward and backward.

    A subclass writes two static methods; :meth:`apply` runs them and puts *one*
    record on the tape for the whole call, whatever ``forward`` did inside:

    * ``forward(ctx, *inputs)``: the value, computed with recording off; it keeps
      what the backward needs with ``ctx.save_for_backward(*tensors)`` (or plain
      attributes, ``ctx.k = 3``), and may call ``ctx.mark_non_differentiable(out)``;
    * ``backward(ctx, *grad_outputs)``: the vector-Jacobian product, one adjoint
      per input of ``forward`` (``None`` for an input that needs none), each of its
      input's shape:

    .. math:: \bar x_j = \sum_i \bar y_i \, \frac{\partial y_i}{\partial x_j}

    With ``create_graph=True`` the backward runs with recording on, so a backward
    written with difflab's operations can be differentiated again.

    Forward mode (``difflab.autograd.forward_ad``, ``difflab.func.jvp``) reads a third:

    * ``jvp(ctx, *input_tangents)``: the Jacobian-vector product, the output's tangent
      :math:`\dot y = \sum_j \partial y / \partial x_j \, \dot x_j` (an input
      without a tangent gets zeros, a non-tensor None), with what ``forward`` kept
      (``ctx.save_for_forward(*tensors)``, read back as ``ctx.saved_tensors``).  Under a
      ``dual_level`` a Function without ``jvp`` raises PyTorch's NotImplementedError.

    PyTorch's newer style works too: ``forward(*inputs)`` without ``ctx``, and a
    ``setup_context(ctx, inputs, output)`` that saves.

    Raises
    ------
    TypeError
        If ``forward`` returns something other than a Tensor.
    RuntimeError
        If ``backward`` returns the wrong number of adjoints or an adjoint of the
        wrong shape (the message names the input).

    See Also
    --------
    gradcheck : check a backward against finite differences.
    difflab.register_primitive : a new primitive with a rule for every method.

    Examples
    --------
    >>> import difflab as dl
    >>> class Cube(dl.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x ** 3
    ...     @staticmethod
    ...     def backward(ctx, grad_output):
    ...         (x,) = ctx.saved_tensors
    ...         return grad_output * 3 * x ** 2
    >>> x = dl.tensor([1.0, 2.0], requires_grad=True)
    >>> y = Cube.apply(x)
    >>> y
    tensor([1., 8.], grad_fn=<...>)
    >>> y.sum().backward()
    >>> x.grad
    tensor([ 3., 12.])

    With a ``jvp``, the same Function in forward mode:

    >>> class Square(dl.autograd.Function):
    ...     @staticmethod
    ...     def forward(x):
    ...         return x * x
    ...     @staticmethod
    ...     def setup_context(ctx, inputs, output):
    ...         ctx.save_for_forward(inputs[0])
    ...     @staticmethod
    ...     def jvp(ctx, x_tangent):
    ...         (x,) = ctx.saved_tensors
    ...         return 2 * x * x_tangent
    >>> dl.func.jvp(Square.apply, (dl.tensor([1.0, 2.0]),), (dl.tensor([1.0, 1.0]),))
    (tensor([1., 4.]), tensor([2., 4.]))
    """

    name = "Function"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.name = cls.__name__  # how the tape printer and error messages call it

    @staticmethod
    def forward(ctx: FunctionCtx, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("a Function subclass must define forward(ctx, ...)")

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        raise NotImplementedError("a Function subclass must define backward(ctx, grad_output)")

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Any) -> None:
        """PyTorch's newer style: ``forward(*inputs)`` without ctx, then this saves."""
        raise NotImplementedError("setup_context is not overridden")

    @staticmethod
    def jvp(ctx: FunctionCtx, *grad_inputs: Any) -> Any:
        """Forward mode: the output's tangent from the inputs' (one per input)."""
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run ``forward`` unrecorded and put one record for the whole call on the tape.

        The record is made by ``engine.apply``, the same path as every
        built-in primitive's: ``forward`` and ``backward`` are the
        primitive's forward and VJP.
        """
        result = engine.apply(_FunctionPrimitive(cls, args), *args, **kwargs)
        record = result.grad_fn
        if record is not None and not record.output_is_differentiable:
            return result.detach()
        return result
