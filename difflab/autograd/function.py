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

from difflab.autograd import engine
from difflab.autograd.grad_mode import _State, no_grad
from difflab.tensor import Tensor


class FunctionCtx(engine.Node):
    """The ``ctx`` of a custom Function: what ``forward`` leaves for ``backward``."""

    def save_for_backward(self, *tensors: Any) -> None:
        """Keep these tensors for ``backward`` (checked against later in-place changes)."""
        self.to_save = tensors

    @property
    def saved_tensors(self) -> tuple:
        self._check_saved()
        return self.saved_tensor_values

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        self.non_differentiable = {id(t) for t in tensors}

    # The engine calls vjp(); a custom Function's rule is its backward().
    def vjp(self, grad_output: Any, create_graph: bool) -> tuple:
        self._check_saved()
        if not isinstance(grad_output, Tensor):
            grad_output = Tensor._wrap(grad_output)
        with _grad_mode(create_graph):
            grads = self.op.backward(self, grad_output)
        if not isinstance(grads, tuple):
            grads = (grads,)
        if len(grads) != len(self.parents):
            raise RuntimeError(
                f"function {self.op.__name__}.backward returned {len(grads)} gradient(s), but "
                f"forward took {len(self.parents)} input(s): return one per input (None for "
                f"inputs that need no gradient)"
            )
        checked = []
        for i, (g, parent) in enumerate(zip(grads, self.parents)):
            if g is None or parent is None:
                checked.append(None)
                continue
            if not isinstance(g, Tensor):
                g = Tensor(g, dtype=self.input_meta[i][1])
            if tuple(g.shape) != tuple(self.input_meta[i][0]):
                raise RuntimeError(
                    f"function {self.op.__name__}.backward returned a gradient of shape "
                    f"{tuple(g.shape)} for input {i}, which has shape "
                    f"{tuple(self.input_meta[i][0])}"
                )
            checked.append(g if create_graph else g.array)
        return tuple(checked)

    def release(self) -> None:
        self.saved = None
        self.saved_tensor_values = ()


class _grad_mode:  # noqa: N801
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __enter__(self) -> None:
        self.previous = _State.enabled
        _State.enabled = self.enabled

    def __exit__(self, *exc: object) -> None:
        _State.enabled = self.previous


class Function:
    """Base class of custom differentiable operations (see the module docstring)."""

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
        """Run ``forward`` unrecorded and put one record for the whole call on the tape."""
        ctx = FunctionCtx(cls)
        ctx.to_save = ()
        tensor_args = [a for a in args if isinstance(a, Tensor)]
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        with no_grad():
            output = cls.forward(ctx, *args, **kwargs)
        if not isinstance(output, Tensor):
            raise TypeError(
                f"{cls.__name__}.forward must return a Tensor, got {type(output).__name__}"
            )
        needs_grad = _State.enabled and any(a.requires_grad for a in tensor_args)
        if not needs_grad:
            return output
        result = Tensor._wrap(output.array, ctx)
        ctx.seq = next(engine._sequence)
        ctx.retained = None
        ctx.output_meta = (output.shape, output.dtype)
        ctx.input_meta = [
            (a.shape, a.dtype) if isinstance(a, Tensor) else ((), None) for a in args
        ]
        ctx.parents = tuple(
            (a if a.grad_fn is None else a.grad_fn)
            if isinstance(a, Tensor) and a.requires_grad else None
            for a in args
        )
        # Saved tensors: the output is replaced by `result` (the tensor on the tape).
        saved = tuple(result if t is output else t for t in ctx.to_save)
        ctx.saved_tensor_values = saved
        ctx.saved = saved
        ctx.saved_versions = [
            (t._version, t._version[0]) for t in saved if isinstance(t, Tensor)
        ]
        if engine.TapeRecorder.active is not None:
            engine.TapeRecorder.active.append((ctx, result, args))
        return result
