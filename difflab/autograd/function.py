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
        """Run the user's ``forward`` unrecorded, on the call's tensors; return its array."""
        args, self.args = self.args, None
        outer = ctx
        if args is None:  # (run again from a static graph, which holds arrays)
            args = tuple(Tensor._wrap(a) if hasattr(a, "shape") else a for a in arrays)
            if not isinstance(ctx, FunctionCtx):  # (a replay's plain context: the user's
                ctx = FunctionCtx(self)          # forward gets the ctx it knows)
                ctx.needs_input_grad = outer.needs_input_grad
        ctx.input_meta = [(a.shape, a.dtype) if isinstance(a, Tensor) else None for a in args]
        # (its own derivative: a detach inside computes values, it stops nothing)
        with no_grad(), stops_not_held():
            output = self.function.forward(ctx, *args, **kwargs)
        if ctx is not outer:
            outer.save(*ctx.saved)
        if not isinstance(output, Tensor):
            raise TypeError(
                f"{self.name}.forward must return a Tensor, got {type(output).__name__}"
            )
        ctx.output_is_differentiable = id(output) not in getattr(ctx, "non_differentiable", ())
        return output.array

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
