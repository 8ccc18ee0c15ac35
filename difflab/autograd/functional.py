"""``Tensor.backward`` and ``autograd.grad``: the two ways to start the backward walk."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

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

# (difflab.autograd adds PyTorch's jacobian, hessian, vjp, jvp, hvp and vhp from
# functional_transforms, which sits a layer above this module.)
__all__ = ["backward", "grad"]


def is_implicit_seed(g: Any) -> bool:
    """Whether ``g`` is a seed 1 that the running ``backward()``/``grad()`` made itself.

    A compiled graph whose backward was computed with its forward, at the seed
    1 (``jit.joint``), may hand those gradients over as they are when its
    adjoint is that seed.  Asking the array ``g == 1`` would copy a number
    from a GPU to the host, and the host would wait for the GPU there; the
    walk knows it by identity instead.

    Parameters
    ----------
    g : array
        An adjoint reaching a record during the backward walk.

    Returns
    -------
    bool
        True only for the very array the walk started from, for an output
        given no ``gradient`` (a scalar loss's ``loss.backward()``).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.autograd.functional import is_implicit_seed
    >>> seen = []
    >>> x = dl.tensor(2.0, requires_grad=True)
    >>> y = x * 3
    >>> _ = y.register_hook(lambda g: seen.append(is_implicit_seed(g.array)))
    >>> y.backward(); seen
    [True]
    >>> y = x * 3
    >>> _ = y.register_hook(lambda g: seen.append(is_implicit_seed(g.array)))
    >>> y.backward(dl.tensor(1.0)); seen         # the user's gradient, even if 1
    [True, False]
    >>> is_implicit_seed(dl.tensor(1.0).array)   # outside a walk
    False
    """
    for seed in engine._implicit_seeds.get():  # (a loop, not any(...): this runs at every backward)
        if g is seed:
            return True
    return False


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
        array = output.array
        if array.dtype.kind == "c":
            raise RuntimeError(
                f"grad can be implicitly created only for real scalar outputs, but this "
                f"output is {output.dtype}: take a real loss of it (z.abs(), z.real) or "
                f"pass {who}(gradient=...)")
        if type(array) is np.ndarray and array.ndim == 0:  # (a loss: ones_like's very array,
            return np.array(1, array.dtype)  # made without NumPy's Python layer, 0.9 µs)
        return backend.array_module(array).ones_like(array)
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
          capture: list | None = None, implicit: tuple = ()) -> list | None:
    """``engine.run_backward``, recorded as operations when the active recorder asks.

    A traced training step must hold the backward's operations, not its
    numbers, so while tracing (``Recorder.records_backward``) every backward
    is recorded (``create_graph=True``); the recorder is told whether the
    caller asked for first order only.  ``implicit``: the seeds 1 the caller made
    itself, known as such during the walk (:func:`is_implicit_seed`).
    """
    recorder = GraphRecorder.active
    token = engine._implicit_seeds.set(implicit)
    try:
        if recorder is None or not recorder.records_backward:
            return run_backward(outputs, seeds, retain_graph, create_graph, capture)
        with recorder.backward(first_order=not create_graph):
            return run_backward(outputs, seeds, True, True, capture)
    finally:
        engine._implicit_seeds.reset(token)


def _implicit(seeds: list, given: list) -> tuple:
    """The seeds made for outputs given no gradient (``None``): each a fresh 1."""
    return tuple(s for s, g in zip(seeds, given) if g is None)


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
    r"""Accumulate the gradient of ``tensors`` into the ``.grad`` of every leaf they reach.

    For outputs y_k seeded with v_k (``grad_tensors``; 1 for a scalar), each leaf x
    that requires grad receives

    .. math:: x.\text{grad} \mathrel{+}= \sum_k v_k^\top \frac{\partial y_k}{\partial x}

    by one walk back over the tape, in reverse order of recording.

    Parameters
    ----------
    tensors : Tensor or sequence of Tensor
        The outputs to differentiate.
    grad_tensors : Tensor, array, float or sequence of them, optional
        The seed v of each output, of its shape; required for an output that is not
        a scalar (``None``: 1 for a scalar).
    retain_graph : bool, optional
        Keep the values the tape saved, so a second backward may walk it again
        (default: ``create_graph``).
    create_graph : bool, default False
        Record the backward walk itself, so the gradients can be differentiated
        again (Hessian-vector products, gradient penalties).
    inputs : sequence of Tensor, optional
        Accumulate into these leaves only.

    Returns
    -------
    None
        The gradients go into ``.grad``; they *add up* across calls: call
        ``optimizer.zero_grad()`` (or set ``.grad = None``) between steps.

    Raises
    ------
    RuntimeError
        If an output does not require grad (nothing recorded it), a non-scalar output
        has no seed, or the graph was already freed by an earlier backward.

    See Also
    --------
    grad : the gradients returned instead of accumulated.
    difflab.Tensor.backward : the same, as a method.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([1.0, 2.0], requires_grad=True)
    >>> dl.autograd.backward((x ** 2).sum())
    >>> x.grad
    tensor([2., 4.])
    >>> dl.autograd.backward((x ** 2).sum())   # accumulates
    >>> x.grad
    tensor([4., 8.])
    """
    outputs = [tensors] if isinstance(tensors, engine.Tensor) else list(tensors)
    if grad_tensors is None or isinstance(grad_tensors, engine.Tensor) or not isinstance(
        grad_tensors, (list, tuple)
    ):
        grad_tensors = [grad_tensors] * len(outputs)
    for out in outputs:
        _check_differentiable(out)
    seeds = [_seed(out, g, "backward") for out, g in zip(outputs, grad_tensors)]
    if GraphRecorder.active is not None:  # (.grad is set, not recorded: a compiled call breaks)
        GraphRecorder.active.side_effect("backward()")
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        grads = _walk(outputs, seeds, retain_graph, create_graph, capture=list(inputs),
                      implicit=_implicit(seeds, grad_tensors))
        for t, g in zip(inputs, grads):
            if g is not None:
                accumulate_grad(t, g, create_graph)
        run_queued_callbacks()
        return
    _walk(outputs, seeds, retain_graph, create_graph,
          implicit=_implicit(seeds, grad_tensors))


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple:
    r"""The gradients of ``outputs`` with respect to ``inputs``, without touching any ``.grad``.

    .. math:: g_j = \sum_k v_k^\top \frac{\partial y_k}{\partial x_j}

    with v_k the seed of output y_k (``grad_outputs``; 1 for a scalar).

    Parameters
    ----------
    outputs : Tensor or sequence of Tensor
        The outputs y_k.
    inputs : Tensor or sequence of Tensor
        The tensors x_j (each requiring grad) to differentiate with respect to.
    grad_outputs : Tensor, array, float or sequence of them, optional
        The seed of each output, of its shape (``None``: 1, for scalar outputs).
    retain_graph : bool, optional
        Keep the tape's saved values for another walk (default: ``create_graph``).
    create_graph : bool, default False
        Record the walk, so the results can be differentiated again (Hessians,
        gradient penalties).
    only_inputs : bool, default True
        PyTorch's deprecated flag, accepted (only the inputs' gradients are computed).
    allow_unused : bool, optional
        Give ``None`` for an input the outputs do not depend on, instead of an error
        (default: False, or True with ``materialize_grads``).
    is_grads_batched : bool, default False
        Only False: for a batch of seeds, map this over them with ``difflab.func.vmap``
        of ``difflab.func.vjp``.
    materialize_grads : bool, default False
        Give zeros instead of ``None`` for an unused input.

    Returns
    -------
    tuple of Tensor
        One gradient per input, of its shape (``None`` for an unused input with
        ``allow_unused=True``, zeros with ``materialize_grads=True``).

    Raises
    ------
    RuntimeError
        If an input does not require grad, an output was not recorded, or an input is
        unused and ``allow_unused`` is False.
    ValueError
        For ``materialize_grads=True`` with ``allow_unused=False``, or
        ``is_grads_batched=True``.

    See Also
    --------
    backward : accumulate into ``.grad`` instead.
    difflab.grad : the same gradient by any of the four methods.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([1.0, 2.0], requires_grad=True)
    >>> (g,) = dl.autograd.grad((x ** 3).sum(), x, create_graph=True)
    >>> g
    tensor([ 3., 12.], grad_fn=<...>)
    >>> dl.autograd.grad(g.sum(), x)      # the second derivative, 6x
    (tensor([ 6., 12.]),)
    >>> x.grad is None
    True
    """
    if materialize_grads and allow_unused is False:
        raise ValueError("grad(): materialize_grads=True gives zeros for unused inputs, which "
                         "needs allow_unused=True (or left out), got allow_unused=False")
    if is_grads_batched:
        raise ValueError("grad(is_grads_batched=True) is not supported: map the seeds with "
                         "difflab.func.vmap over difflab.func.vjp instead")
    allow_unused = materialize_grads if allow_unused is None else allow_unused
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
    results = _walk(outputs, seeds, retain_graph, create_graph, capture=inputs,
                    implicit=_implicit(seeds, grad_outputs))
    for i, g in enumerate(results):
        if g is None and not allow_unused:
            raise RuntimeError(
                f"one of the differentiated tensors (input {i}, shape {tuple(inputs[i].shape)}) "
                f"appears not to have been used in the graph. Set allow_unused=True if this "
                f"is what you want (its gradient is then None)."
            )
        if g is None and materialize_grads:
            results[i] = engine.Tensor._wrap(backend.array_module(inputs[i].array).zeros_like(
                inputs[i].array))
            results[i].requires_grad = create_graph  # (a leaf, as PyTorch's, to go on from)
        elif g is not None and g.shape != inputs[i].shape:
            results[i] = g.expand(*inputs[i].shape) if create_graph else engine.Tensor._wrap(
                backend.array_module(g.array).broadcast_to(g.array, inputs[i].shape).copy()
            )
    return tuple(results)
