"""``Tensor.backward`` and ``autograd.grad``: the two ways to start the backward walk."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from difflab import backend
from difflab.autograd import engine  # (engine.Tensor: the registered tensor type)
from difflab.autograd.engine import (
    GraphRecorder,
    accumulate_grad,
    run_backward,
    run_queued_callbacks,
)
from difflab.tensor_arguments import to_array

if TYPE_CHECKING:
    from difflab.tensor import Tensor


def _seed(output: Tensor, gradient: Any, who: str) -> Any:
    """The adjoint ȳ that starts the walk: 1 for a scalar, else the user's ``gradient``."""
    if gradient is None:
        if output.array.size != 1:
            raise RuntimeError(
                f"grad can be implicitly created only for scalar outputs, but this output has "
                f"shape {tuple(output.shape)}. Pass {who}(gradient=...) with a tensor of that "
                f"shape (the v in the vector-Jacobian product vᵀJ), or reduce the output "
                f"first (e.g. .sum())."
            )
        return backend.array_module(output.array).ones_like(output.array)
    if isinstance(gradient, engine.Tensor) and gradient.requires_grad:
        seed = gradient  # a recorded seed, for create_graph
    else:
        seed = to_array(gradient, output.dtype, output.device)
    if tuple(seed.shape) != tuple(output.shape):
        raise RuntimeError(
            f"gradient has shape {tuple(seed.shape)} but the output has shape "
            f"{tuple(output.shape)}: they must match"
        )
    return seed


def _walk(outputs: list, seeds: list, retain_graph: bool, create_graph: bool,
          capture: list | None = None) -> list | None:
    """``engine.run_backward``, recorded as operations when the active recorder asks.

    A traced training step must hold the backward's operations, not its
    numbers, so while tracing (``Recorder.records_backward``) every backward
    is recorded (``create_graph=True``); the recorder is told whether the
    caller asked for first order only.
    """
    recorder = GraphRecorder.active
    if recorder is None or not recorder.records_backward:
        return run_backward(outputs, seeds, retain_graph, create_graph, capture)
    with recorder.backward(first_order=not create_graph):
        return run_backward(outputs, seeds, True, True, capture)


def _check_differentiable(output: Tensor) -> None:
    if not output.requires_grad:
        raise RuntimeError(
            "element 0 of tensors does not require grad and does not have a grad_fn: nothing "
            "was recorded. Create the inputs with requires_grad=True (and not inside no_grad())."
        )


def backward(
    tensors: Tensor | Sequence[Tensor],
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Sequence[Tensor] | None = None,
) -> None:
    """Accumulate d(tensors)/d(leaf) into the ``.grad`` of the leaves.

    Gradients *add up* across calls: call ``zero_grad()`` (or set
    ``.grad = None``) between optimisation steps.  The saved values are freed
    after the walk unless ``retain_graph=True``.
    """
    outputs = [tensors] if isinstance(tensors, engine.Tensor) else list(tensors)
    if grad_tensors is None or isinstance(grad_tensors, engine.Tensor) or not isinstance(
        grad_tensors, (list, tuple)
    ):
        grad_tensors = [grad_tensors] * len(outputs)
    for out in outputs:
        _check_differentiable(out)
    seeds = [_seed(out, g, "backward") for out, g in zip(outputs, grad_tensors)]
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        grads = _walk(outputs, seeds, retain_graph, create_graph, capture=list(inputs))
        for t, g in zip(inputs, grads):
            if g is not None:
                accumulate_grad(t, g, create_graph)
        run_queued_callbacks()
        return
    _walk(outputs, seeds, retain_graph, create_graph)


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool = False,
) -> tuple:
    """Return d(outputs)/d(inputs) without touching any ``.grad``.

    With ``create_graph=True`` the results are themselves on the tape, so
    they can be differentiated again (Hessians, gradient penalties).
    """
    outputs = [outputs] if isinstance(outputs, engine.Tensor) else list(outputs)
    single = isinstance(inputs, engine.Tensor)
    inputs = [inputs] if single else list(inputs)
    if grad_outputs is None or not isinstance(grad_outputs, (list, tuple)):
        grad_outputs = [grad_outputs] * len(outputs)
    for out in outputs:
        _check_differentiable(out)
    for i, t in enumerate(inputs):
        if not isinstance(t, engine.Tensor) or not t.requires_grad:
            raise RuntimeError(f"input {i} to grad() does not require grad")
    seeds = [_seed(out, g, "grad") for out, g in zip(outputs, grad_outputs)]
    if retain_graph is None:
        retain_graph = create_graph
    results = _walk(outputs, seeds, retain_graph, create_graph, capture=inputs)
    for i, g in enumerate(results):
        if g is None and not allow_unused:
            raise RuntimeError(
                f"one of the differentiated tensors (input {i}, shape {tuple(inputs[i].shape)}) "
                f"appears not to have been used in the graph. Set allow_unused=True if this "
                f"is what you want (its gradient is then None)."
            )
        if g is not None and g.shape != inputs[i].shape:
            results[i] = g.expand(*inputs[i].shape) if create_graph else engine.Tensor._wrap(
                backend.array_module(g.array).broadcast_to(g.array, inputs[i].shape).copy()
            )
    return tuple(results)
