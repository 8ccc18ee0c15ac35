"""PyTorch's ``torch.utils.checkpoint``: activation checkpointing, memory for time.

A checkpointed block keeps only its inputs during the forward pass, not the
intermediate tensors its backward would read; the backward pass runs the block
a second time, with recording on, and walks that fresh graph.  One record on the
tape (a custom :class:`~difflab.autograd.Function`) stands for the whole block.
"""

from __future__ import annotations

from typing import Any

from difflab.autograd.function import Function, FunctionCtx
from difflab.autograd.functional import backward as _backward
from difflab.autograd.grad_mode import enable_grad, is_grad_enabled
from difflab.random import get_rng_state, set_rng_state
from difflab.tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential"]

class _Checkpoint(Function):
    """The block as one record: forward keeps the inputs, backward recomputes.

    ``apply(run, rng_state, kwargs, anchor, *args)``: ``anchor`` is a tensor
    requiring grad when no input does (so that the block's parameters still
    get gradients); it takes no part in the computation.
    """

    @staticmethod
    def forward(ctx: FunctionCtx, run: Any, rng_state: Any, kwargs: dict, anchor: Any,
                *args: Any) -> Tensor:
        ctx.run, ctx.rng_state, ctx.kwargs, ctx.inputs = run, rng_state, kwargs, args
        output = run(*args, **kwargs)  # (recording is off here: no intermediates kept)
        if not isinstance(output, Tensor):
            raise TypeError(
                f"checkpoint: the function must return one Tensor, got "
                f"{type(output).__name__}; checkpoint each output's computation separately"
            )
        return output

    @staticmethod
    def backward(ctx: FunctionCtx, grad_output: Tensor) -> tuple:
        # Detached copies of the inputs: the recomputed graph ends at them.
        inputs = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a
                  for a in ctx.inputs]
        now = get_rng_state()
        if ctx.rng_state is not None:  # the same random draws as the forward (dropout's mask)
            set_rng_state(ctx.rng_state)
        try:
            with enable_grad():
                output = ctx.run(*inputs, **ctx.kwargs)
        finally:
            set_rng_state(now)  # (the backward leaves the random stream as it found it)
        if output.requires_grad:  # into the parameters' .grad and the copies' .grad
            _backward(output, grad_output)
        grads = [a.grad if isinstance(a, Tensor) and a.requires_grad else None for a in inputs]
        return (None, None, None, None, *grads)


def checkpoint(function: Any, *args: Any, use_reentrant: bool | None = None,
               preserve_rng_state: bool = True, **kwargs: Any) -> Tensor:
    """Run ``function(*args)`` without keeping its intermediates; recompute them in backward.

    The forward pass runs ``function`` with recording off and keeps only its
    inputs.  The backward pass runs it again, with recording on, on detached
    copies of the tensor inputs (each requiring grad as its original does), and
    backpropagates the incoming gradient through that fresh graph, into the
    inputs and into every parameter ``function`` reads (a module's weights get
    their ``.grad`` as without checkpointing).  The gradients are the plain
    computation's; memory holds one block's intermediates at a time instead of
    all of them, at the price of a second forward pass.

    ``use_reentrant=True`` and ``False`` (PyTorch's two implementations) work the
    same here, by recomputation inside the backward; ``None`` is taken as
    ``True``.  As with PyTorch's reentrant version, the parameters' gradients go
    to their ``.grad`` (``difflab.autograd.grad`` sees only the inputs' gradients
    through a checkpoint), and a backward with ``create_graph=True`` does not
    record the recomputed part.

    Parameters
    ----------
    function : callable
        The block (a module, a function); it must return one Tensor.
    *args : Tensor or object
        Its positional arguments; non-tensors pass through unchanged.
    use_reentrant : bool or None, optional
        PyTorch's choice of implementation (default ``None``); both behave alike.
        With ``True`` or ``None`` no keyword arguments may go to ``function``.
    preserve_rng_state : bool, optional
        Save the random state at the forward and restore it for the
        recomputation (default ``True``), so that dropout draws the same mask.
    **kwargs
        With ``use_reentrant=False``: keyword arguments of ``function``.
        PyTorch's ``determinism_check`` (``'default'`` or ``'none'``) and
        ``debug`` are accepted and change nothing.

    Returns
    -------
    Tensor
        ``function(*args, **kwargs)``.

    Raises
    ------
    ValueError
        Keyword arguments for ``function`` with ``use_reentrant`` not ``False``.
    NotImplementedError
        A ``context_fn`` (difflab has no saved-tensor contexts).
    TypeError
        ``function`` not callable, or returning something other than a Tensor.

    See Also
    --------
    checkpoint_sequential : checkpoint a sequence of modules in segments.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.utils.checkpoint import checkpoint
    >>> x = dl.tensor([1.0, 2.0], requires_grad=True)
    >>> y = checkpoint(lambda t: (t.sin() * t).sum(), x, use_reentrant=False)
    >>> y.backward()
    >>> x.grad                                  # sin(t) + t cos(t)
    tensor([1.3818, 0.077 ])
    """
    if not callable(function):
        raise TypeError(f"checkpoint: function must be callable, got {type(function).__name__}")
    context_fn = kwargs.pop("context_fn", None)
    determinism_check = kwargs.pop("determinism_check", "default")
    kwargs.pop("debug", None)  # (PyTorch's logging of the recomputation: nothing to log)
    if context_fn is not None:
        raise NotImplementedError(
            "checkpoint: context_fn is not supported in difflab; leave it out"
        )
    if determinism_check not in ("default", "none"):
        raise ValueError(
            f"checkpoint: determinism_check must be 'default' or 'none', got {determinism_check!r}"
        )
    if use_reentrant is not False and kwargs:
        raise ValueError(
            f"checkpoint: unexpected keyword arguments {sorted(kwargs)}: with "
            f"use_reentrant={use_reentrant} keywords do not go to the function; pass "
            f"use_reentrant=False to hand them to it"
        )
    rng_state = get_rng_state() if preserve_rng_state else None
    needs_anchor = is_grad_enabled() and not any(
        isinstance(a, Tensor) and a.requires_grad for a in args)
    anchor = Tensor(0.0, requires_grad=True) if needs_anchor else None
    return _Checkpoint.apply(function, rng_state, kwargs, anchor, *args)


def checkpoint_sequential(functions: Any, segments: int, input: Any, use_reentrant: bool |  # noqa: A002
                          None = None, **kwargs: Any) -> Tensor:
    """Run a sequence of modules in ``segments`` pieces, checkpointing all but the last.

    The modules (an ``nn.Sequential`` or a list) are cut into ``segments``
    consecutive runs of ``len(functions) // segments`` modules (the last run takes
    the rest); every run but the last is one :func:`checkpoint`, the last runs
    plainly, as PyTorch does.

    Parameters
    ----------
    functions : nn.Sequential or list of callables
        The modules, applied in order.
    segments : int
        How many pieces (at least 1, at most ``len(functions)``).
    input : Tensor
        The first module's input.
    use_reentrant : bool or None, optional
        As for :func:`checkpoint` (both values behave alike).
    **kwargs
        ``preserve_rng_state`` (default ``True``), as for :func:`checkpoint`.

    Returns
    -------
    Tensor
        The last module's output.

    Raises
    ------
    ValueError
        ``segments`` out of range, or other keyword arguments.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.utils.checkpoint import checkpoint_sequential
    >>> _ = dl.manual_seed(0)
    >>> net = dl.nn.Sequential(dl.nn.Linear(2, 2), dl.nn.Tanh(), dl.nn.Linear(2, 1))
    >>> x = dl.ones(3, 2)
    >>> checkpoint_sequential(net, 2, x, use_reentrant=False).sum().backward()
    >>> net[0].weight.grad.shape
    difflab.Size([2, 2])
    """
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError(f"checkpoint_sequential: unexpected keyword arguments {sorted(kwargs)}")
    modules = list(functions.children()) if hasattr(functions, "children") else list(functions)
    if not isinstance(segments, int) or not 1 <= segments <= max(len(modules), 1):
        raise ValueError(
            f"checkpoint_sequential: segments must be an int from 1 to the number of "
            f"modules ({len(modules)}), got {segments!r}"
        )
    size = len(modules) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(_Run(modules[start:end + 1]), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return _Run(modules[end + 1:])(input)


class _Run:
    """Modules applied one after another (one segment of checkpoint_sequential)."""

    def __init__(self, modules: list) -> None:
        self.modules = modules

    def __call__(self, x: Any) -> Any:
        for module in self.modules:
            x = module(x)
        return x
