"""A module's backward hooks on the tape: identity records around its inputs and outputs.

``Module.register_full_backward_hook(hook)`` asks for ``hook(module,
grad_input, grad_output)`` once the gradients of the module's inputs are
known.  The tape has no notion of a module, so, as PyTorch does, each call
of a hooked module puts *identity* records on the tape:

* one per input tensor, before ``forward`` (``forward`` works on their
  outputs, so every use inside the module goes through them);
* one per output tensor, after ``forward`` (the caller gets their outputs).

The adjoints reaching the output records are ``grad_output``; those reaching
the input records are ``grad_input``.  The records of one side are made
together and share a :class:`Joint`: when the backward walk reaches the first
of them, all of their adjoints are complete (everything that used them was
made later, so the walk has passed it), and the joint hands them to the hooks
at once.  What the hooks return replaces the adjoints before the identity
records pass them on, so a hook's new ``grad_input`` is what the layers
before the module receive.

The tape around a hooked module, for ``y = layer(x)``::

    x ──BackwardHookFunction──▶ x' ──forward──▶ y' ──BackwardHookFunction──▶ y
          (joint: grad_input)                          (joint: grad_output)

The tensors ``x'`` and ``y`` are views of ``x`` and ``y'`` (one version
counter), so changing one in place is refused, as in PyTorch.  A graph
replayed by ``difflab.jit`` (``dl.compile``, ``jit.trace``) does not call
the hooks: they are Python, which a replay does not run.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from difflab import tensor_views
from difflab.autograd import engine
from difflab.autograd.grad_mode import _State
from difflab.ops.primitive import Primitive
from difflab.tensor import Tensor

__all__ = ["BackwardHook", "BackwardHookFunction", "Joint"]


class BackwardHookFunction(Primitive):
    """The identity, recorded so that a module's hooks can see and replace an adjoint.

    Its VJP passes the adjoint on unchanged; what makes it useful is the
    :class:`Joint` its records share (PyTorch's ``BackwardHookFunction``).

    Examples
    --------
    The output of a module with a backward hook comes from one of its records:

    >>> import difflab as dl
    >>> layer = dl.nn.Linear(2, 1)
    >>> handle = layer.register_full_backward_hook(lambda module, gi, go: None)
    >>> y = layer(dl.ones(1, 2))
    >>> y.grad_fn.name()
    'BackwardHookFunctionBackward'
    >>> y.grad_fn.next_functions[0][0].name()        # the layer's own last step
    'LinearBackward0'
    """

    name = "BackwardHookFunction"  # (its records print as BackwardHookFunctionBackward)
    math = "x̄ = ȳ (the hooks may replace ȳ first)"

    @staticmethod
    def forward(ctx: Any, xp: Any, x: Any) -> Any:
        return x

    @staticmethod
    def vjp(ctx: Any, xp: Any, g: Any) -> tuple:
        return (g,)


_IDENTITY = BackwardHookFunction()


class Joint:
    """Records made together whose adjoints one callback reads and may replace together.

    ``members`` holds, per position of the module's inputs (or outputs), the
    identity record of the tensor there, or ``None`` (not a tensor, or no
    gradient needed).  ``callback(grads)`` gets one entry per position (a
    Tensor or ``None``) and returns ``None`` (keep them) or the new entries.
    A member's tensor hooks (``Tensor.register_hook`` on the tensor it made) run
    on its adjoint before the callback sees it, as PyTorch orders them.

    Parameters
    ----------
    members : sequence of Node or None
        The records (each becomes ``node.joint = self``).
    callback : callable
        ``callback(grads) -> None or new grads``, as above.

    Raises
    ------
    TypeError, RuntimeError
        During ``backward``, from :meth:`run`: the callback returned something
        that is not a Tensor, or a gradient of the wrong shape.

    Examples
    --------
    Two identity records read together: the callback swaps their adjoints.

    >>> import difflab as dl
    >>> from difflab.autograd import engine
    >>> a = dl.tensor([1.0], requires_grad=True)
    >>> b = dl.tensor([1.0], requires_grad=True)
    >>> a2, b2 = (engine.apply(BackwardHookFunction(), t) for t in (a, b))
    >>> joint = Joint([a2.grad_fn, b2.grad_fn], lambda grads: grads[::-1])
    >>> (2 * a2 + 3 * b2).sum().backward()
    >>> a.grad, b.grad
    (tensor([3.]), tensor([2.]))
    """

    def __init__(self, members: Sequence[Any], callback: Callable) -> None:
        self.members = list(members)
        self.callback = callback
        for node in self.members:
            if node is not None:
                node.joint = self

    def run(self, node: Any, adjoints: Any, reachable: set, create_graph: bool) -> None:
        """At the first member the backward walk reaches: hand the members' adjoints
        to the callback, and put back what it returns.

        The walk goes newest record first, so the first member reached is the
        newest of those it reaches; everything that used any member was made
        after all of them, so every member's adjoint is complete by then.
        """
        first = max((m for m in self.members if m in reachable), key=_by_sequence)
        if node is not first:
            return
        grads = []
        for node in self.members:
            g = None if node is None else adjoints.take(node)
            if g is not None and node.hooks:  # the tensor's own hooks first, as in PyTorch
                g = engine.run_tensor_hooks(node.hooks, g, create_graph, node.output_meta[0])
            grads.append(None if g is None else engine._as_tensor(g, create_graph))
        new = self.callback(tuple(grads))
        if new is not None:
            grads = list(new)
        for node, g in zip(self.members, grads):
            if node is None or g is None or node not in reachable:
                continue  # (a record the walk never reaches would keep its adjoint forever)
            if not isinstance(g, Tensor):
                raise TypeError(f"a backward hook must return Tensors or None, got "
                                f"{type(g).__name__}")
            if tuple(g.shape) != tuple(node.output_meta[0]):
                raise RuntimeError(
                    f"a backward hook returned a gradient of shape {tuple(g.shape)} for a "
                    f"tensor of shape {tuple(node.output_meta[0])}: return one of the shape "
                    f"of the gradient it was given"
                )
            adjoints.add(node, g if create_graph else g.array)


class BackwardHook:
    """One call of a module with backward hooks: wraps its inputs and outputs, runs the hooks.

    PyTorch's ``torch.utils.hooks.BackwardHook``.  ``Module.__call__`` makes
    one per call: ``args = bw.setup_input_hook(args)`` before ``forward``,
    ``output = bw.setup_output_hook(output)`` after it.

    Parameters
    ----------
    module : Module
        Passed to each hook as its first argument.
    user_hooks : list of callable
        ``hook(module, grad_input, grad_output) -> new grad_input or None``.
    user_pre_hooks : list of callable
        ``hook(module, grad_output) -> new grad_output or None``.

    Raises
    ------
    RuntimeError
        During ``backward``: a hook returned a tuple of the wrong length, or
        (no input requiring grad) a hook returned gradients for the inputs.

    Warns
    -----
    UserWarning
        From :meth:`setup_output_hook`, if the output is neither a Tensor nor a
        tuple (its hooks cannot be called).

    Examples
    --------
    What ``Module.__call__`` does for a module with backward hooks:

    >>> import difflab as dl
    >>> relu = dl.nn.ReLU()
    >>> hook = BackwardHook(relu, [lambda m, gi, go: print(gi, go)], [])
    >>> x = dl.tensor([-1.0, 2.0], requires_grad=True)
    >>> (x_seen,) = hook.setup_input_hook((x,))
    >>> y = hook.setup_output_hook(relu.forward(x_seen))
    >>> y.sum().backward()
    (tensor([0., 1.]),) (tensor([1., 1.]),)
    """

    def __init__(self, module: Any, user_hooks: list, user_pre_hooks: list) -> None:
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs: tuple | None = None
        self.n_inputs = 0
        self.inputs_need_grad = False

    @staticmethod
    def _wrap(values: tuple) -> tuple[tuple, list] | None:
        """``values`` with each tensor that requires grad passed through the identity,
        and the identity records (None elsewhere); None if no gradient is recorded."""
        if not _State.enabled or not any(isinstance(v, Tensor) and v.requires_grad
                                         for v in values):
            return None
        new, members = [], []
        for v in values:
            if isinstance(v, Tensor) and v.requires_grad:
                seen = engine.apply(_IDENTITY, v)
                # The same memory: a view of v, with v's version counter.  So an in-place
                # change of either is seen by the records that saved v, and one of the
                # view is refused (as PyTorch does: the hooks' gradients would be wrong).
                seen._version, seen._base = v._version, v if v._base is None else v._base
                tensor_views.forbid_writes(seen)
                members.append(seen.grad_fn)
                v = seen
            else:
                members.append(None)
            new.append(v)
        return tuple(new), members

    def setup_input_hook(self, args: tuple) -> tuple:
        """The positional arguments with each tensor that requires grad behind an identity."""
        if engine.GraphRecorder.active is not None:
            warnings.warn(f"{type(self.module).__name__} has backward hooks, which the traced "
                          f"graph (difflab.jit) will not call when it is replayed: they are "
                          f"Python code; call the module uncompiled to run them",
                          stacklevel=3)
        self.n_inputs = len(args)
        wrapped = self._wrap(args)
        if wrapped is None:
            return args
        args, members = wrapped
        self.inputs_need_grad = True
        Joint(members, self._input_grads)
        return args

    def setup_output_hook(self, output: Any) -> Any:
        """The output (a Tensor or a tuple) with each tensor that requires grad behind one."""
        is_tuple = isinstance(output, tuple)
        if not is_tuple and not isinstance(output, Tensor):
            warnings.warn(f"For backward hooks to be called, module output should be a Tensor "
                          f"or a tuple of Tensors but received {type(output).__name__}",
                          stacklevel=3)
            return output
        wrapped = self._wrap(output if is_tuple else (output,))
        if wrapped is None:
            return output
        outputs, members = wrapped
        Joint(members, self._output_grads)
        return outputs if is_tuple else outputs[0]

    def _output_grads(self, grad_outputs: tuple) -> tuple:
        """The output records' joint: the pre-hooks, then (no input needing grad) the hooks."""
        for hook in self.user_pre_hooks:
            result = hook(self.module, grad_outputs)
            if result is None:
                continue
            result = _as_tuple(result)
            if len(result) != len(grad_outputs):
                raise RuntimeError(f"Backward pre hook returned an invalid number of "
                                   f"grad_output, got {len(result)}, but expected "
                                   f"{len(grad_outputs)}")
            grad_outputs = result
        self.grad_outputs = grad_outputs
        if not self.inputs_need_grad:  # no input record will call them: call them now
            grad_input = (None,) * self.n_inputs
            for hook in self.user_hooks:
                result = hook(self.module, grad_input, grad_outputs)
                if result is not None and any(g is not None for g in _as_tuple(result)):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
            self.grad_outputs = None
        return grad_outputs

    def _input_grads(self, grad_input: tuple) -> tuple | None:
        """The input records' joint: the hooks, each may replace ``grad_input``."""
        if self.grad_outputs is None:
            return None  # (the gradient reached the inputs without passing the outputs)
        for hook in self.user_hooks:
            result = hook(self.module, grad_input, self.grad_outputs)
            if result is None:
                continue
            result = _as_tuple(result)
            if len(result) != len(grad_input):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, "
                                   f"got {len(result)}, but expected {len(grad_input)}")
            grad_input = result
        self.grad_outputs = None
        return grad_input


def _by_sequence(node: Any) -> int:
    return node.seq


def _as_tuple(value: Any) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)
