"""``Module``: the base class of every layer and model.

A module keeps three ordered registries, filled by plain attribute
assignment in ``__init__``:

* ``_parameters``: :class:`~difflab.nn.Parameter` objects (trained);
* ``_buffers``: tensors that are state but not trained (BatchNorm's
  running averages), registered with :meth:`Module.register_buffer`;
* ``_modules``: child modules.

Everything else (``parameters()``, ``state_dict()``, ``to()``, ``train()``,
the ``repr``) walks these registries recursively.  ``model(x)`` calls
``model.forward(x)``; the tape records whatever ``forward`` does, Python
control flow included (a *dynamic* graph).
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from difflab import backend
from difflab.autograd.backward_hook import BackwardHook
from difflab.autograd.engine import GraphRecorder
from difflab.dtypes import as_dtype, bfloat16
from difflab.nn.modules.module_state import StateDict
from difflab.nn.parameter import Buffer, Parameter
from difflab.tensor import Tensor
from difflab.tensor_arguments import to_arguments
from difflab.utils.hooks import RemovableHandle

#: The registries of hooks: code the module runs on every call, never state (a checkpoint
#: does not write them and refuses a file that sets them).  As PyTorch's, each is an
#: ``OrderedDict[int, hook]`` keyed by the handle's id (``RemovableHandle.id``), run in
#: its order; the ``_with_kwargs`` and ``_always_called`` dicts hold ``id: True`` for the
#: hooks registered so.  ``_is_full_backward_hook`` (None until a backward hook is
#: registered) says which kind the module's backward hooks are.
HOOK_REGISTRIES = ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks",
                   "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
                   "_backward_pre_hooks", "_backward_hooks", "_state_dict_pre_hooks",
                   "_state_dict_hooks", "_load_state_dict_pre_hooks",
                   "_load_state_dict_post_hooks")

# The hooks of every module (``nn.modules.module.register_module_forward_hook``...), run
# before each module's own: PyTorch's names and dicts.
_global_forward_pre_hooks: OrderedDict = OrderedDict()
_global_forward_hooks: OrderedDict = OrderedDict()
_global_forward_hooks_with_kwargs: OrderedDict = OrderedDict()
_global_forward_hooks_always_called: OrderedDict = OrderedDict()
_global_backward_pre_hooks: OrderedDict = OrderedDict()
_global_backward_hooks: OrderedDict = OrderedDict()


def zero_grads(parameters: Iterable[Tensor], set_to_none: bool = True) -> None:
    """Forget the gradients of ``parameters`` before the next backward (which would add to them).

    Parameters
    ----------
    parameters : iterable of Tensor
        The tensors whose ``.grad`` is cleared; those without a gradient are skipped.
    set_to_none : bool, default True
        ``True`` sets ``.grad = None`` (the next backward allocates a fresh one);
        ``False`` fills the existing gradient with zeros in place.

    Returns
    -------
    None

    See Also
    --------
    Module.zero_grad, difflab.optim.Optimizer.zero_grad : the methods that call it.

    Examples
    --------
    >>> import difflab as dl
    >>> w = dl.ones(2, requires_grad=True)
    >>> (w * 3).sum().backward()
    >>> zero_grads([w], set_to_none=False)
    >>> w.grad
    tensor([0., 0.])
    >>> zero_grads([w])
    >>> w.grad is None
    True
    """
    for p in parameters:
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None
        else:
            p.grad.array[...] = 0


class Module(StateDict):
    """Base class for all layers and models: subclass it and write ``forward``.

    A module keeps three ordered registries, filled by plain attribute assignment:
    a :class:`~difflab.nn.Parameter` goes to the parameters, a ``Module`` to the
    children, and :meth:`register_buffer` adds state that is not trained.  Every
    other method (``parameters()``, ``state_dict()``, ``to()``, ``train()``, the
    ``repr``) walks these registries recursively.  Calling the module,
    ``model(x)``, runs ``model.forward(x)``; the tape records whatever
    ``forward`` does, Python control flow included (a *dynamic* graph).

    ``Module.__init__`` takes no arguments; a subclass must call
    ``super().__init__()`` before it assigns a parameter or a child.

    Attributes
    ----------
    training : bool
        ``True`` in training mode (the default), ``False`` after :meth:`eval`.
        Dropout and batch normalisation read it.

    Raises
    ------
    AttributeError
        Assigning a parameter or a module before ``super().__init__()`` ran.
    TypeError
        Assigning something other than a ``Parameter`` (or None) to a name that holds
        a parameter, or other than a ``Module`` to a name that holds a child.

    See Also
    --------
    Sequential : a module made of a list of modules, without writing ``forward``.
    Parameter : the tensor type a module trains.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> class TwoLayerNet(nn.Module):
    ...     def __init__(self, d_in, h, d_out):
    ...         super().__init__()
    ...         self.fc1, self.fc2 = nn.Linear(d_in, h), nn.Linear(h, d_out)
    ...     def forward(self, x):
    ...         return self.fc2(self.fc1(x).relu())
    >>> _ = dl.manual_seed(0)
    >>> net = TwoLayerNet(4, 8, 2)
    >>> net(dl.ones(5, 4)).shape
    difflab.Size([5, 2])
    >>> net
    TwoLayerNet(
      (fc1): Linear(in_features=4, out_features=8, bias=True)
      (fc2): Linear(in_features=8, out_features=2, bias=True)
    )
    >>> net.num_parameters()
    58
    """

    training: bool

    def __init__(self) -> None:
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", OrderedDict())
        # (as HOOK_REGISTRIES says, called in order by __call__)
        for registry in HOOK_REGISTRIES:
            object.__setattr__(self, registry, OrderedDict())
        object.__setattr__(self, "_is_full_backward_hook", None)

    # ------------------------------------------------------------- calling
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The computation of the module: override it in every subclass.

        Parameters
        ----------
        *args, **kwargs
            Whatever the subclass's computation takes (usually one input tensor).

        Returns
        -------
        Any
            Whatever the subclass computes (usually a tensor).

        Raises
        ------
        NotImplementedError
            When the subclass did not define ``forward``.

        Notes
        -----
        Call the module (``model(x)``), not ``model.forward(x)``: :meth:`__call__` is
        the one entry point, so wrappers such as ``dl.compile`` see every call.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> class Double(nn.Module):
        ...     def forward(self, x):
        ...         return 2 * x
        >>> Double()(dl.tensor([1.0, 2.0]))
        tensor([2., 4.])
        >>> nn.Module()(dl.ones(1))
        Traceback (most recent call last):
            ...
        NotImplementedError: Module has no forward(): define forward(self, ...) in your Module
        """
        raise NotImplementedError(
            f"{type(self).__name__} has no forward(): define forward(self, ...) in your Module"
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the module on its inputs: ``model(x)`` is ``model.forward(x)``, between its hooks.

        The forward pre-hooks run first (they may replace the arguments), then
        :meth:`forward`, then the forward hooks (they may replace the output);
        the hooks of every module (``register_module_forward_hook``...) run before
        the module's own.  With backward hooks, the tensor arguments and the
        outputs also pass through identity records on the tape, where the
        backward pass calls them (:meth:`register_full_backward_hook`).

        Parameters
        ----------
        *args, **kwargs
            Passed to :meth:`forward` (after the pre-hooks).

        Returns
        -------
        Any
            What :meth:`forward` returns (after the forward hooks).

        See Also
        --------
        register_forward_pre_hook, register_forward_hook, register_full_backward_hook

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> nn.ReLU()(dl.tensor([-1.0, 2.0]))
        tensor([0., 2.])
        """
        d = self.__dict__
        compiled = d.get("_compiled_call")  # (set by Module.compile)
        if compiled is not None:
            return compiled(*args, **kwargs)
        if not (d.get("_forward_pre_hooks") or d.get("_forward_hooks")
                or d.get("_backward_hooks") or d.get("_backward_pre_hooks")
                or _global_forward_pre_hooks or _global_forward_hooks
                or _global_backward_hooks or _global_backward_pre_hooks
                or GraphRecorder.active is not None):
            return self.forward(*args, **kwargs)  # (no hooks, no recorder: _has_hooks inline)
        return self._call_with_hooks(args, kwargs)

    def _has_hooks(self) -> bool:
        """Whether a call runs hooks: this module's own or every module's (a compiled
        module's guard asks each module: a hook added after a graph was cached)."""
        d = self.__dict__
        return bool(d.get("_forward_pre_hooks") or d.get("_forward_hooks")
                    or d.get("_backward_hooks") or d.get("_backward_pre_hooks")
                    or _global_forward_pre_hooks or _global_forward_hooks
                    or _global_backward_hooks or _global_backward_pre_hooks)

    def _call_uncompiled(self, *args: Any, **kwargs: Any) -> Any:
        """The call as :meth:`compile` found it (forward between the hooks): what the
        compiled call traces, and runs where it falls back to eager code."""
        saved = self.__dict__.pop("_compiled_call", None)
        try:
            return self(*args, **kwargs)
        finally:
            if saved is not None:
                self.__dict__["_compiled_call"] = saved

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """Compile this module's calls in place with :func:`difflab.compile` (PyTorch's).

        ``model.compile()`` is ``dl.compile(model)`` without a new object: later calls
        of ``model(x)`` (its hooks included) replay the compiled graphs, guarded on the
        shapes, the parameters and the ``training`` flags as ``dl.compile``'s.  The
        module stays itself (its ``state_dict`` keys, ``repr`` and type are unchanged),
        and a copy or a saved module is not compiled (as in PyTorch).

        Parameters
        ----------
        *args, **kwargs
            :func:`difflab.compile`'s options (``fullgraph``, ``mode``, ``backend``...).

        Returns
        -------
        None

        Examples
        --------
        >>> import difflab as dl
        >>> net = dl.nn.Sequential(dl.nn.Linear(3, 4), dl.nn.ReLU())
        >>> x = dl.ones(2, 3)
        >>> before = net(x)
        >>> net.compile()
        >>> bool((net(x) == before).all()), list(net.state_dict())[0]
        (True, '0.weight')
        """
        from difflab.jit.compiler import compile as compile_function

        self.__dict__["_compiled_call"] = compile_function(self._call_uncompiled, *args,
                                                           **kwargs)

    def __getstate__(self) -> dict:
        """The module's attributes for ``pickle`` and ``copy``, without a compiled call
        (:meth:`compile`; its graphs belong to this object)."""
        state = self.__dict__.copy()
        state.pop("_compiled_call", None)
        return state

    def _call_with_hooks(self, args: tuple, kwargs: dict) -> Any:
        """``__call__`` with hooks: every module's (global) first, then this module's own
        (and any call while a graph is recorded: the recorder is told of the module)."""
        recorder = GraphRecorder.active
        if recorder is not None:  # (traced: dl.compile notes the module; hooks: a graph break)
            recorder.module_called(self)
            if not self._has_hooks():
                return self.forward(*args, **kwargs)
            recorder.python_hooks(self._hooks_named())
        d = self.__dict__
        forward_hooks = [*_global_forward_hooks.items(), *d.get("_forward_hooks", {}).items()]
        with_kwargs = {**_global_forward_hooks_with_kwargs,
                       **d.get("_forward_hooks_with_kwargs", {})} if forward_hooks else {}
        always_called = {**_global_forward_hooks_always_called,
                         **d.get("_forward_hooks_always_called", {})} if forward_hooks else {}
        result = None
        called = set()  # the always_call hooks already run (not run again after an error)
        try:
            args, kwargs = self._run_forward_pre_hooks(args, kwargs)
            backward = self._backward_hooks_to_run()
            if backward is not None:
                backward = BackwardHook(self, *backward)
                args = backward.setup_input_hook(args)
            result = self.forward(*args, **kwargs)
            for hook_id, hook in forward_hooks:
                if hook_id in always_called:
                    called.add(hook_id)
                new = (hook(self, args, kwargs, result) if hook_id in with_kwargs
                       else hook(self, args, result))
                if new is not None:
                    result = new
            if backward is not None:
                result = backward.setup_output_hook(result)
            return result
        except Exception:
            for hook_id, hook in forward_hooks:  # always_call: run even when forward failed
                if hook_id not in always_called or hook_id in called:
                    continue
                try:
                    new = (hook(self, args, kwargs, result) if hook_id in with_kwargs
                           else hook(self, args, result))
                    result = result if new is None else new
                except Exception as exc:
                    warnings.warn(f"module forward hook with ``always_call=True`` raised an "
                                  f"exception that was silenced as another error was raised "
                                  f"in forward: {exc}", stacklevel=2)
            raise

    def _run_forward_pre_hooks(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """Every module's forward pre-hooks, then this one's: the arguments they leave."""
        d = self.__dict__
        with_kwargs = d.get("_forward_pre_hooks_with_kwargs", {})
        for hook_id, hook in [*_global_forward_pre_hooks.items(),
                              *d.get("_forward_pre_hooks", {}).items()]:
            if hook_id in with_kwargs:
                new = hook(self, args, kwargs)
                if new is not None:
                    if not (isinstance(new, tuple) and len(new) == 2):
                        raise RuntimeError(
                            f"forward pre-hook must return None or a tuple of (new_args, "
                            f"new_kwargs), but got {new!r:.60}.")
                    args, kwargs = new
                    args = args if isinstance(args, tuple) else (args,)
            else:
                new = hook(self, args)
                if new is not None:
                    args = new if isinstance(new, tuple) else (new,)
        return args, kwargs

    def _backward_hooks_to_run(self) -> tuple[list, list] | None:
        """The (full hooks, pre-hooks) for this call, every module's first; None if none."""
        d = self.__dict__
        hooks = [*_global_backward_hooks.values(), *d.get("_backward_hooks", {}).values()]
        pre = [*_global_backward_pre_hooks.values(), *d.get("_backward_pre_hooks", {}).values()]
        return (hooks, pre) if hooks or pre else None

    def _hooks_named(self) -> str:
        """Which hooks a call of this module runs, in words (a compiled call's graph break)."""
        d = self.__dict__
        kinds = [words for words, own, every in (
            ("forward pre-hooks", "_forward_pre_hooks", _global_forward_pre_hooks),
            ("forward hooks", "_forward_hooks", _global_forward_hooks),
            ("backward pre-hooks", "_backward_pre_hooks", _global_backward_pre_hooks),
            ("backward hooks", "_backward_hooks", _global_backward_hooks))
            if d.get(own) or every]
        own = any(d.get(name) for name in ("_forward_pre_hooks", "_forward_hooks",
                                           "_backward_pre_hooks", "_backward_hooks"))
        where = f"of {type(self).__name__}" if own else "registered on every module"
        return f"the {', '.join(kinds)} {where}"

    def _add_hook(self, registry: str, hook: Callable, prepend: bool, *flags: str
                  ) -> RemovableHandle:
        """Register ``hook`` in ``registry`` (first, with ``prepend``), with ``id: True`` in
        each of the registries ``flags`` (``"_forward_hooks_with_kwargs"``)."""
        _check_hook(hook)
        d = self.__dict__
        for name in (registry, *flags):
            if name not in d:  # (a module restored without __init__)
                object.__setattr__(self, name, OrderedDict())
        return _add_entry(d[registry], hook, prepend, [d[name] for name in flags])

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Call ``hook`` before every :meth:`forward`; it may replace the inputs.

        ``hook(module, args)`` gets the positional arguments as a tuple and
        returns None (keep them) or the new arguments (a tuple, or one value).
        With ``with_kwargs=True`` it is ``hook(module, args, kwargs)`` and returns
        None or a pair ``(args, kwargs)``.  Hooks run in registration order.

        Parameters
        ----------
        hook : callable
            As above.
        prepend : bool, default False
            Run it before the hooks already registered.
        with_kwargs : bool, default False
            Pass (and let it replace) the keyword arguments too.

        Returns
        -------
        difflab.utils.hooks.RemovableHandle
            ``handle.remove()`` unregisters it; also a context manager.

        Raises
        ------
        TypeError
            If ``hook`` is not callable.

        See Also
        --------
        register_forward_hook

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> relu = nn.ReLU()
        >>> with relu.register_forward_pre_hook(lambda module, args: (args[0] + 10,)):
        ...     relu(dl.tensor([-1.0]))
        tensor([9.])
        >>> relu(dl.tensor([-1.0]))
        tensor([0.])
        """
        flags = ["_forward_pre_hooks_with_kwargs"] if with_kwargs else []
        return self._add_hook("_forward_pre_hooks", hook, prepend, *flags)

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False,
                              with_kwargs: bool = False, always_call: bool = False
                              ) -> RemovableHandle:
        """Call ``hook`` after every :meth:`forward`; it may replace the output.

        ``hook(module, args, output)`` returns None (keep the output) or a new
        output; with ``with_kwargs=True`` it is ``hook(module, args, kwargs,
        output)``.  The usual use is to record intermediate activations.
        Hooks run in registration order, on the module's own calls only (a
        hook on a child runs when the parent calls the child).

        Parameters
        ----------
        hook : callable
            As above.
        prepend : bool, default False
            Run it before the hooks already registered.
        with_kwargs : bool, default False
            Pass the keyword arguments too.
        always_call : bool, default False
            Run it even when :meth:`forward` (or an earlier hook) raises, with
            ``output=None`` (to close what a pre-hook opened); the error is then
            raised again, and an error of the hook itself becomes a warning.

        Returns
        -------
        difflab.utils.hooks.RemovableHandle
            ``handle.remove()`` unregisters it; also a context manager.

        Raises
        ------
        TypeError
            If ``hook`` is not callable.

        See Also
        --------
        register_forward_pre_hook, register_full_backward_hook

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
        >>> seen = {}
        >>> handle = net[1].register_forward_hook(
        ...     lambda module, args, output: seen.update(relu=output.shape))
        >>> net(dl.ones(4, 2)).shape, seen["relu"]
        (difflab.Size([4, 1]), difflab.Size([4, 3]))
        >>> handle.remove()

        With ``always_call=True`` the hook also sees a failed call (``output`` is None):

        >>> calls = []
        >>> handle = net[0].register_forward_hook(
        ...     lambda module, args, output: calls.append(output is None), always_call=True)
        >>> net(dl.ones(4, 5))
        Traceback (most recent call last):
            ...
        ValueError: Linear expected input with 2 features ...
        >>> calls
        [True]
        """
        flags = ["_forward_hooks_with_kwargs"] * bool(with_kwargs) \
            + ["_forward_hooks_always_called"] * bool(always_call)
        return self._add_hook("_forward_hooks", hook, prepend, *flags)

    def register_full_backward_pre_hook(self, hook: Callable, *, prepend: bool = False
                                        ) -> RemovableHandle:
        """Call ``hook(module, grad_output)`` when the gradients of the outputs are known.

        Runs during ``backward``, before the gradients pass into the module.
        ``grad_output`` is a tuple with one entry per output (one output: a
        1-tuple): the gradient of the loss with respect to it, or ``None`` (not
        a tensor, or no gradient reached it).  The hook returns ``None`` (keep
        them) or a new tuple of the same length, which then flows through the
        module instead.  It must not change its arguments in place.

        Parameters
        ----------
        hook : callable
            As above.
        prepend : bool, default False
            Run it before the backward pre-hooks already registered.

        Returns
        -------
        difflab.utils.hooks.RemovableHandle
            ``handle.remove()`` unregisters it; also a context manager.

        Raises
        ------
        TypeError
            If ``hook`` is not callable.
        RuntimeError
            During ``backward``, if the hook returns a tuple of the wrong length,
            or a gradient of the wrong shape.

        See Also
        --------
        register_full_backward_hook : after the module, with the inputs' gradients.

        Notes
        -----
        How it works: the module's outputs pass through an identity record on the
        tape (``BackwardHookFunctionBackward``); the backward pass hands its
        gradients to the hooks before the record passes them on
        (:mod:`difflab.autograd.backward_hook`).  The caller therefore gets new
        tensor objects for the outputs: views (same values, same storage) that
        may not be changed in place (``clone()`` them first), as in PyTorch.

        Examples
        --------
        Scale the gradient entering a layer by 10:

        >>> import difflab as dl
        >>> from difflab import nn
        >>> layer = nn.Linear(2, 1)
        >>> handle = layer.register_full_backward_pre_hook(
        ...     lambda module, grad_output: (10 * grad_output[0],))
        >>> layer(dl.ones(1, 2)).sum().backward()
        >>> layer.bias.grad
        tensor([10.])
        >>> handle.remove()
        """
        return self._add_hook("_backward_pre_hooks", hook, prepend)

    def register_full_backward_hook(self, hook: Callable, *, prepend: bool = False
                                    ) -> RemovableHandle:
        """Call ``hook(module, grad_input, grad_output)`` once the inputs' gradients are known.

        Runs during ``backward``.  ``grad_input`` has one entry per positional
        argument of the call (keyword arguments are not seen): the gradient of
        the loss with respect to it, or ``None`` (not a tensor, or it does not
        require grad); ``grad_output`` has one per output, as
        :meth:`register_full_backward_pre_hook` gives it.  The hook returns
        ``None`` or a new ``grad_input`` tuple of the same length, which is what
        the layers before the module then receive.  The module's parameters'
        gradients are not part of ``grad_input`` (they are computed by then).
        When no input requires grad, ``grad_input`` is all ``None`` and the hook
        runs as soon as ``grad_output`` is known; it must then return ``None``.

        Parameters
        ----------
        hook : callable
            As above.
        prepend : bool, default False
            Run it before the backward hooks already registered.

        Returns
        -------
        difflab.utils.hooks.RemovableHandle
            ``handle.remove()`` unregisters it; also a context manager.

        Raises
        ------
        TypeError
            If ``hook`` is not callable.
        RuntimeError
            If the module already has a hook from the deprecated
            :meth:`register_backward_hook`; during ``backward``, if the hook returns
            a tuple of the wrong length or a gradient of the wrong shape.

        See Also
        --------
        register_full_backward_pre_hook : before the module, with the outputs' gradients.
        difflab.Tensor.register_post_accumulate_grad_hook : a parameter's finished ``.grad``.

        Notes
        -----
        As in PyTorch, the module's positional tensor arguments and its outputs pass
        through identity records on the tape (``BackwardHookFunctionBackward``);
        :mod:`difflab.autograd.backward_hook` hands their gradients to the hooks,
        and what a hook returns replaces them before the records pass them on.
        So ``forward`` receives (and the caller gets back) new tensor objects: views
        with the same values, storage and version counter.  Changing one in place
        is refused (a RuntimeError, as in PyTorch): ``clone()`` it first.

        Examples
        --------
        Look at the gradients around a layer, then clip the one it passes back:

        >>> import difflab as dl
        >>> from difflab import nn
        >>> layer = nn.Linear(2, 1)
        >>> with dl.no_grad():
        ...     _ = layer.weight.copy_(dl.tensor([[3.0, -4.0]]))
        >>> def clip(module, grad_input, grad_output):
        ...     print("in:", grad_input[0], "out:", grad_output[0])
        ...     return (grad_input[0].clamp(-1, 1),)
        >>> handle = layer.register_full_backward_hook(clip)
        >>> x = dl.ones(1, 2, requires_grad=True)
        >>> layer(x).sum().backward()
        in: tensor([[ 3., -4.]]) out: tensor([[1.]])
        >>> x.grad
        tensor([[ 1., -1.]])
        >>> handle.remove()
        """
        self._refuse_mixed_backward_hooks(full=True)
        return self._add_hook("_backward_hooks", hook, prepend)

    def register_backward_hook(self, hook: Callable) -> RemovableHandle:
        """Deprecated: :meth:`register_full_backward_hook`, which difflab runs it as.

        PyTorch deprecates it: its old behaviour passed the gradients of the
        *last operation* inside the module, not of the module's inputs.  difflab
        warns and registers ``hook`` as a full backward hook, whose
        ``grad_input`` is the module's inputs' gradients (the documented meaning).

        Parameters
        ----------
        hook : callable
            ``hook(module, grad_input, grad_output) -> new grad_input or None``.

        Returns
        -------
        difflab.utils.hooks.RemovableHandle
            ``handle.remove()`` unregisters it.

        Raises
        ------
        RuntimeError
            If the module already has a full backward hook (as PyTorch: one kind
            per module).

        Warns
        -----
        FutureWarning
            Always: use :meth:`register_full_backward_hook`.

        See Also
        --------
        register_full_backward_hook

        Examples
        --------
        >>> import warnings
        >>> import difflab as dl
        >>> from difflab import nn
        >>> relu = nn.ReLU()
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     handle = relu.register_backward_hook(lambda m, gi, go: print(gi[0]))
        >>> caught[0].category.__name__
        'FutureWarning'
        >>> relu(dl.tensor([-1.0, 2.0], requires_grad=True)).sum().backward()
        tensor([0., 1.])
        """
        self._refuse_mixed_backward_hooks(full=False)
        warnings.warn("Module.register_backward_hook is deprecated (in PyTorch it sees only the "
                      "last operation inside the module); difflab runs it as "
                      "register_full_backward_hook: call that instead.", FutureWarning,
                      stacklevel=2)
        return self._add_hook("_backward_hooks", hook, False)

    def _refuse_mixed_backward_hooks(self, full: bool) -> None:
        d = self.__dict__
        if d.get("_backward_hooks") and d.get("_is_full_backward_hook") not in (None, full):
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        object.__setattr__(self, "_is_full_backward_hook", full)

    # ----------------------------------------------------- attribute routing
    def _check_init(self) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                f"cannot assign parameters or modules before Module.__init__() call: call "
                f"super().__init__() first in {type(self).__name__}.__init__"
            )

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        if isinstance(value, Parameter):
            self._check_init()
            if isinstance(getattr(type(self), name, None), property):  # (a parametrized one)
                raise KeyError(f"attribute '{name}' already exists")
            self._remove_from(name, d["_buffers"], d["_modules"])
            d.pop(name, None)
            d["_parameters"][name] = value
        elif isinstance(value, Module):
            self._check_init()
            self._remove_from(name, d["_parameters"], d["_buffers"])
            d.pop(name, None)
            d["_modules"][name] = value
        elif isinstance(value, Buffer):  # (nn.Buffer: registers itself, as in PyTorch)
            self._check_init()
            self._remove_from(name, d["_parameters"], d["_modules"])
            d.pop(name, None)
            self.register_buffer(name, value, persistent=value.persistent)
        elif "_parameters" in d and name in d["_parameters"]:
            if value is not None:
                raise TypeError(
                    f"cannot assign {type(value).__name__} as parameter '{name}' "
                    f"(a Parameter or None expected; wrap it: nn.Parameter(value))"
                )
            d["_parameters"][name] = None
        elif "_modules" in d and name in d["_modules"]:
            if value is not None:
                raise TypeError(
                    f"cannot assign {type(value).__name__} as child module '{name}' "
                    f"(a Module or None expected)"
                )
            d["_modules"][name] = None
        elif "_buffers" in d and name in d["_buffers"]:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign {type(value).__name__} as buffer '{name}'")
            d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    @staticmethod
    def _remove_from(name: str, *registries: dict) -> None:
        for registry in registries:
            registry.pop(name, None)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            if registry in d and name in d[registry]:
                return d[registry][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            if name in d.get(registry, {}):
                del d[registry][name]
                d["_non_persistent"].discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list:
        extra = list(self._parameters) + list(self._buffers) + list(self._modules)
        return sorted(set(super().__dir__()) | set(extra))

    # ----------------------------------------------------------- registering
    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter under ``name`` (or None: a declared but absent one, like a missing bias).

        Assigning ``self.name = nn.Parameter(...)`` does the same; this method is
        for names computed at run time and for registering ``None``.

        Parameters
        ----------
        name : str
            The attribute name; non-empty and without ``'.'`` (dots separate levels in
            :meth:`named_parameters`).
        param : Parameter or None
            The parameter; ``None`` keeps the name declared (``self.bias is None``)
            without a tensor.

        Returns
        -------
        None

        Raises
        ------
        TypeError
            If ``param`` is not a ``Parameter`` (wrap a tensor: ``nn.Parameter(t)``).
        KeyError
            If ``name`` is empty or contains ``'.'``.
        AttributeError
            If ``Module.__init__`` has not run yet.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> m = nn.Module()
        >>> m.register_parameter("scale", nn.Parameter(dl.ones(3)))
        >>> m.register_parameter("shift", None)
        >>> [name for name, _ in m.named_parameters()], m.shift is None
        (['scale'], True)
        """
        self._check_init()
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot register {type(param).__name__} as parameter '{name}' "
                            f"(nn.Parameter or None required)")
        if "." in name or not name:
            raise KeyError(f"parameter name can't contain '.' or be empty, got {name!r}")
        self.__dict__.pop(name, None)
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is state but not trained (BatchNorm's running averages).

        A buffer moves with :meth:`to`, is listed by :meth:`buffers`, and is saved by
        :meth:`state_dict` when persistent; optimizers never see it because
        :meth:`parameters` does not list it.

        Parameters
        ----------
        name : str
            The attribute name; non-empty and without ``'.'``.
        tensor : Tensor or None
            The state.  ``None`` declares the name without a tensor.
        persistent : bool, default True
            Whether :meth:`state_dict` includes it.  A non-persistent buffer is a
            cache that can be recomputed (a precomputed mask, say).

        Returns
        -------
        None

        Raises
        ------
        TypeError
            If ``tensor`` is not a Tensor (or None).
        KeyError
            If ``name`` is empty or contains ``'.'``.
        AttributeError
            If ``Module.__init__`` has not run yet.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> m = nn.Module()
        >>> m.register_buffer("count", dl.zeros(1))
        >>> m.register_buffer("cache", dl.ones(2), persistent=False)
        >>> list(m.state_dict()), [name for name, _ in m.named_buffers()]
        (['count'], ['count', 'cache'])
        >>> list(m.parameters())
        []
        """
        self._check_init()
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot register {type(tensor).__name__} as buffer '{name}' "
                            f"(a Tensor or None required)")
        if "." in name or not name:
            raise KeyError(f"buffer name can't contain '.' or be empty, got {name!r}")
        self.__dict__.pop(name, None)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under ``name`` (``register_module`` is the same method).

        ``self.name = module`` does the same; this method is for names computed at run
        time (``Sequential`` uses ``"0"``, ``"1"``, ...).

        Parameters
        ----------
        name : str
            The attribute name of the child.
        module : Module or None
            The child; ``None`` declares the name without a module.

        Returns
        -------
        None

        Raises
        ------
        TypeError
            If ``module`` is not a Module (or None).

        Examples
        --------
        >>> from difflab import nn
        >>> m = nn.Module()
        >>> for i in range(2):
        ...     m.add_module(f"layer{i}", nn.Linear(2, 2))
        >>> [name for name, _ in m.named_children()]
        ['layer0', 'layer1']
        """
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_init()
        self.__dict__.pop(name, None)
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        """The module at the dotted path ``target`` (``""`` is the module itself).

        Parameters
        ----------
        target : str
            Names of children separated by dots, as :meth:`named_modules` prints them
            (``"encoder.layers.0"``).

        Returns
        -------
        Module
            The submodule.

        Raises
        ------
        AttributeError
            If a part of the path is not a child; the message names the part.

        Examples
        --------
        >>> from difflab import nn
        >>> net = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.ReLU(), nn.Linear(3, 1)))
        >>> net.get_submodule("1.1")
        Linear(in_features=3, out_features=1, bias=True)
        >>> net.get_submodule("1.7")
        Traceback (most recent call last):
            ...
        AttributeError: Sequential has no submodule '7'
        """
        module = self
        for part in target.split(".") if target else []:
            if part not in module._modules:
                raise AttributeError(f"{type(module).__name__} has no submodule '{part}'")
            module = module._modules[part]
        return module

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at the dotted path ``target`` (as :meth:`named_parameters` names it).

        Parameters
        ----------
        target : str
            The path of the submodule, a dot, and the parameter's name (``"0.weight"``).

        Returns
        -------
        Parameter
            The parameter itself (not a copy).

        Raises
        ------
        AttributeError
            If the submodule does not exist or has no parameter of that name.

        Examples
        --------
        >>> from difflab import nn
        >>> net = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
        >>> net.get_parameter("0.bias").shape
        difflab.Size([3])
        """
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if name not in module._parameters:
            raise AttributeError(f"{type(module).__name__} has no parameter '{name}'")
        return module._parameters[name]

    # ---------------------------------------------------------------- walking
    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """Iterate over ``(dotted name, module)`` for this module and every descendant, depth first.

        Parameters
        ----------
        memo : set, optional
            Ids of modules already yielded (used by the recursion; leave it out).
        prefix : str, default ''
            Put in front of every name (the module itself is named ``prefix``).
        remove_duplicate : bool, default True
            Yield a module reached twice (shared between two parents) only once.

        Returns
        -------
        Iterator[tuple[str, Module]]
            The name (``''`` for the module itself) and the module, for each.

        Examples
        --------
        >>> from difflab import nn
        >>> net = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.ReLU()))
        >>> [(name, type(m).__name__) for name, m in net.named_modules()]
        [('', 'Sequential'), ('0', 'Linear'), ('1', 'Sequential'), ('1.0', 'ReLU')]
        """
        memo = set() if memo is None else memo
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, child in self._modules.items():
            if child is None:
                continue
            yield from child.named_modules(memo, f"{prefix}.{name}" if prefix else name,
                                           remove_duplicate)

    def modules(self) -> Iterator[Module]:
        """Iterate over this module and every descendant (each once), depth first.

        Returns
        -------
        Iterator[Module]
            The modules of :meth:`named_modules`, without their names.

        Examples
        --------
        >>> from difflab import nn
        >>> net = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
        >>> [type(m).__name__ for m in net.modules()]
        ['Sequential', 'Linear', 'ReLU']
        """
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """Iterate over ``(name, child)`` for the direct children only (each once).

        Returns
        -------
        Iterator[tuple[str, Module]]
            The children in the order they were registered; ``None`` entries are skipped.

        Examples
        --------
        >>> from difflab import nn
        >>> net = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.ReLU()))
        >>> [name for name, _ in net.named_children()]
        ['0', '1']
        """
        seen = set()
        for name, child in self._modules.items():
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                yield name, child

    def children(self) -> Iterator[Module]:
        """Iterate over the direct children (not the grandchildren; see :meth:`modules`).

        Returns
        -------
        Iterator[Module]
            The children of :meth:`named_children`, without their names.

        Examples
        --------
        >>> from difflab import nn
        >>> net = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.ReLU()))
        >>> [type(m).__name__ for m in net.children()]
        ['Linear', 'Sequential']
        """
        for _, child in self.named_children():
            yield child

    def _named_members(self, registry: str, prefix: str, recurse: bool,
                       remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        seen = set()
        modules = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in getattr(module, registry).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield (f"{module_prefix}.{name}" if module_prefix else name), value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """Iterate over ``(dotted name, parameter)`` for this module and its descendants.

        The names are the keys of :meth:`state_dict`; a parameter shared by two
        layers (tied weights) appears once, under its first name.

        Parameters
        ----------
        prefix : str, default ''
            Put in front of every name.
        recurse : bool, default True
            ``False``: only this module's own parameters, not its children's.
        remove_duplicate : bool, default True
            ``False``: yield a shared parameter under every name.

        Returns
        -------
        Iterator[tuple[str, Parameter]]
            The pairs, in registration order, depth first.

        Examples
        --------
        >>> from difflab import nn
        >>> net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1, bias=False))
        >>> [(name, tuple(p.shape)) for name, p in net.named_parameters()]
        [('0.weight', (3, 2)), ('0.bias', (3,)), ('2.weight', (1, 3))]
        """
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Iterate over every parameter of this module and its descendants (each once).

        This is what an optimizer is given: ``optim.SGD(model.parameters(), lr=0.1)``.

        Parameters
        ----------
        recurse : bool, default True
            ``False``: only this module's own parameters.

        Returns
        -------
        Iterator[Parameter]
            The parameters of :meth:`named_parameters`, without their names.

        Examples
        --------
        >>> from difflab import nn
        >>> net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
        >>> sum(p.numel() for p in net.parameters())
        13
        >>> list(net.parameters(recurse=False))
        []
        """
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """Iterate over ``(dotted name, buffer)`` for this module and its descendants.

        Parameters
        ----------
        prefix : str, default ''
            Put in front of every name.
        recurse : bool, default True
            ``False``: only this module's own buffers.
        remove_duplicate : bool, default True
            ``False``: yield a shared buffer under every name.

        Returns
        -------
        Iterator[tuple[str, Tensor]]
            The pairs, non-persistent buffers included (unlike :meth:`state_dict`).

        Examples
        --------
        >>> from difflab import nn
        >>> net = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
        >>> [name for name, _ in net.named_buffers()]
        ['1.running_mean', '1.running_var', '1.num_batches_tracked']
        """
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """Iterate over every buffer of this module and its descendants (each once).

        Parameters
        ----------
        recurse : bool, default True
            ``False``: only this module's own buffers.

        Returns
        -------
        Iterator[Tensor]
            The buffers of :meth:`named_buffers`, without their names.

        Examples
        --------
        >>> from difflab import nn
        >>> [tuple(b.shape) for b in nn.BatchNorm1d(3).buffers()]
        [(3,), (3,), ()]
        """
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # --------------------------------------------------------------- modes
    def train(self, mode: bool = True) -> Module:
        """Set training (``True``) or evaluation (``False``) mode here and in every descendant.

        In training mode dropout drops and batch normalisation uses the statistics of
        the batch (and updates its running averages); in evaluation mode dropout is
        the identity and batch normalisation uses the running averages.  Gradients
        are recorded in both modes (use ``dl.no_grad()`` to stop that).

        Parameters
        ----------
        mode : bool, default True
            The mode to set.

        Returns
        -------
        Module
            ``self``, so that ``model.train().to("cuda")`` chains.

        Raises
        ------
        ValueError
            If ``mode`` is not a bool.

        See Also
        --------
        eval : ``train(False)``.

        Examples
        --------
        >>> from difflab import nn
        >>> net = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))
        >>> net.train(False)[1].training
        False
        >>> net.train()[1].training
        True
        """
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> Module:
        """Set evaluation mode: ``train(False)`` (dropout off, running statistics in batch norm).

        Returns
        -------
        Module
            ``self``.

        See Also
        --------
        train, difflab.no_grad : evaluation mode does not stop the recording of gradients.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> drop = nn.Dropout(0.5).eval()
        >>> drop.training, drop(dl.ones(3))
        (False, tensor([1., 1., 1.]))
        """
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` on every parameter, in place: ``False`` freezes the module.

        Parameters
        ----------
        requires_grad : bool, default True
            Whether backward should compute the parameters' gradients.

        Returns
        -------
        Module
            ``self``.

        Examples
        --------
        >>> from difflab import nn
        >>> net = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
        >>> _ = net[0].requires_grad_(False)
        >>> [p.requires_grad for p in net.parameters()]
        [False, False, True, True]
        >>> net.num_parameters(trainable_only=True)
        4
        """
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the parameters' gradients before the next backward (which would add to them).

        Parameters
        ----------
        set_to_none : bool, default True
            ``True`` sets ``p.grad = None``; ``False`` fills the gradients with zeros.

        Returns
        -------
        None

        See Also
        --------
        difflab.optim.Optimizer.zero_grad : the same for an optimizer's parameters.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> lin = nn.Linear(2, 1)
        >>> lin(dl.ones(1, 2)).sum().backward()
        >>> lin.bias.grad
        tensor([1.])
        >>> lin.zero_grad()
        >>> lin.bias.grad is None
        True
        """
        zero_grads(self.parameters(), set_to_none)

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call ``fn`` on every child (recursively, children first) and then on ``self``.

        The usual use is a custom initialisation of every layer of one kind.

        Parameters
        ----------
        fn : callable
            Called as ``fn(module)``; its return value is ignored.

        Returns
        -------
        Module
            ``self``.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> def init(m):
        ...     if isinstance(m, nn.Linear):
        ...         nn.init.ones_(m.weight)
        ...         nn.init.zeros_(m.bias)
        >>> net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)).apply(init)
        >>> net(dl.ones(1, 2))
        tensor([[6.]], grad_fn=<LinearBackward0>)
        """
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # --------------------------------------------------------- devices, dtypes
    def _convert(self, convert: Callable[[Any], Any], floating_only: bool,
                 recurse: bool = True) -> Module:
        """Replace every parameter's and buffer's array in place (the objects stay the same,
        so an optimizer built before ``to()`` still holds the right tensors); with
        ``recurse=False`` this module's own only."""
        for m in self.modules() if recurse else (self,):
            for registry in (m._parameters, m._buffers):
                for t in registry.values():
                    if t is None or (floating_only and t.dtype.kind not in "fc"):
                        continue
                    t.array = convert(t.array)
                    if t.grad is not None:
                        t.grad.array = convert(t.grad.array)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Move the parameters and buffers to a device and/or change their floating dtype, in place.

        The arrays are replaced inside the same ``Parameter`` objects, so an optimizer
        built before ``to()`` still holds the right tensors.  Gradients move with
        their parameters.  A dtype applies to floating (and complex) tensors only:
        integer buffers such as ``num_batches_tracked`` keep theirs.

        Parameters
        ----------
        device : str or difflab.device, optional
            ``"cpu"``, ``"cuda"`` or ``"cuda:1"``.
        dtype : difflab dtype, optional
            A floating dtype such as ``dl.float64``.

        Returns
        -------
        Module
            ``self``.

        Raises
        ------
        TypeError
            If ``dtype`` is not floating (``Module.to(dl.int64)`` would break training).

        See Also
        --------
        cpu, cuda, double, float, half : shorthands.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> bn = nn.BatchNorm1d(2).to(dl.float64)
        >>> bn.weight.dtype, bn.num_batches_tracked.dtype
        (difflab.float64, difflab.int64)
        >>> bn.to(dl.int32)
        Traceback (most recent call last):
            ...
        TypeError: Module.to only accepts floating dtypes, got difflab.int32
        """
        device, dtype = to_arguments(args, kwargs)
        if device is not None:
            dev = backend.device(device)
            self._convert(lambda a: backend.to_device(a, dev), floating_only=False)
        if dtype is not None:
            dtype = as_dtype(dtype)
            if dtype.kind not in "fc":
                raise TypeError(f"Module.to only accepts floating dtypes, got {dtype}")
            self._convert(lambda a: a.astype(dtype.dtype), floating_only=True)
        return self

    def to_empty(self, *, device: Any, recurse: bool = True) -> Module:
        """Give every parameter and buffer new memory on ``device``, its values unset, in place.

        PyTorch's way to materialise a module built without memory (on its "meta"
        device) before loading a checkpoint or calling ``reset_parameters()``.
        The values are not to be relied on (difflab fills them with zeros, as
        :func:`difflab.empty_like`); shapes, dtypes, ``requires_grad`` and the
        ``Parameter`` objects stay, and a ``.grad`` is emptied the same way.

        Parameters
        ----------
        device : str, difflab.device or None
            Where the new memory is (``"cpu"``, ``"cuda:0"``); None keeps each
            tensor's device.
        recurse : bool, default True
            Also the submodules' parameters and buffers (False: this module's own).

        Returns
        -------
        Module
            ``self``.

        See Also
        --------
        to : moves the values.

        Examples
        --------
        >>> import difflab as dl
        >>> lin = dl.nn.Linear(2, 2)
        >>> weight = lin.weight
        >>> lin.to_empty(device="cpu").weight is weight, lin.weight.shape
        (True, difflab.Size([2, 2]))
        >>> with dl.no_grad():
        ...     lin.reset_parameters()              # then give it values
        """
        dev = None if device is None else backend.device(device)

        def empty(array: Any) -> Any:
            xp = backend.array_module(array)
            new = xp.zeros(array.shape, array.dtype)
            return new if dev is None else backend.to_device(new, dev)

        return self._convert(empty, floating_only=False, recurse=recurse)

    def cuda(self, device: Any = None) -> Module:
        """Move the parameters and buffers to a GPU: ``to("cuda")`` or ``to("cuda:<device>")``.

        Parameters
        ----------
        device : int, optional
            The index of the GPU; the current one when left out.

        Returns
        -------
        Module
            ``self``.

        Raises
        ------
        RuntimeError
            If CUDA is not available (the message says how to check: ``dl.cuda.is_available()``).

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> lin = nn.Linear(2, 1)
        >>> if dl.cuda.is_available():
        ...     lin = lin.cuda()
        >>> lin.weight.shape
        difflab.Size([1, 2])
        """
        return self.to("cuda" if device is None else backend.Device("cuda", int(device)))

    def cpu(self) -> Module:
        """Move the parameters and buffers to the CPU: ``to("cpu")``.

        Returns
        -------
        Module
            ``self``.

        Examples
        --------
        >>> from difflab import nn
        >>> nn.Linear(2, 1).cpu().weight.device
        device(type='cpu')
        """
        return self.to("cpu")

    def double(self) -> Module:
        """Turn the floating parameters and buffers into float64: ``to(dl.float64)``.

        Returns
        -------
        Module
            ``self``.

        Examples
        --------
        >>> from difflab import nn
        >>> nn.Linear(2, 1).double().weight.dtype
        difflab.float64
        """
        return self.to(np.float64)

    def float(self) -> Module:
        """Turn the floating parameters and buffers into float32: ``to(dl.float32)``.

        Returns
        -------
        Module
            ``self``.

        Examples
        --------
        >>> from difflab import nn
        >>> nn.Linear(2, 1).double().float().weight.dtype
        difflab.float32
        """
        return self.to(np.float32)

    def half(self) -> Module:
        """Turn the floating parameters and buffers into float16: ``to(dl.float16)``.

        Returns
        -------
        Module
            ``self``.

        Examples
        --------
        >>> from difflab import nn
        >>> nn.Linear(2, 1).half().weight.dtype
        difflab.float16
        """
        return self.to(np.float16)

    def bfloat16(self) -> Module:
        """Floating parameters and buffers as bfloat16 (needs ml_dtypes, as
        ``difflab.bfloat16``)."""
        return self.to(bfloat16)

    def type(self, dst_type: Any) -> Module:
        """Turn the floating parameters and buffers into ``dst_type``: ``to(dst_type)``.

        Parameters
        ----------
        dst_type : difflab dtype
            A floating dtype.

        Returns
        -------
        Module
            ``self``.

        Raises
        ------
        TypeError
            If ``dst_type`` is not floating.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> nn.Linear(2, 1).type(dl.float64).bias.dtype
        difflab.float64
        """
        return self.to(dst_type)

    # ----------------------------------------------------------------- repr
    def extra_repr(self) -> str:
        """The text inside the parentheses of the module's ``repr``; override it to show settings.

        Returns
        -------
        str
            ``''`` for the base class; layers return their arguments
            (``"in_features=2, out_features=3, bias=True"``).

        Examples
        --------
        >>> from difflab import nn
        >>> class Scale(nn.Module):
        ...     def __init__(self, factor):
        ...         super().__init__()
        ...         self.factor = factor
        ...     def extra_repr(self):
        ...         return f"factor={self.factor}"
        >>> Scale(3)
        Scale(factor=3)
        """
        return ""

    def __repr__(self) -> str:
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, child in self._modules.items():
            child_repr = repr(child).replace("\n", "\n  ")
            lines.append(f"({name}): {child_repr}")
        main = type(self).__name__ + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def num_parameters(self, trainable_only: bool = False) -> int:
        """How many numbers the parameters hold (a shared parameter counted once).

        Parameters
        ----------
        trainable_only : bool, default False
            Count only the parameters with ``requires_grad=True``.

        Returns
        -------
        int
            The sum of ``p.numel()``.

        Examples
        --------
        >>> from difflab import nn
        >>> nn.Linear(10, 5).num_parameters()
        55
        """
        return sum(int(p.numel()) for p in self.parameters()
                   if p.requires_grad or not trainable_only)


# ------------------------------------------------------------ hooks of every module


def _add_entry(hooks: OrderedDict, hook: Callable, prepend: bool, flags: list = ()
               ) -> RemovableHandle:
    """Put ``hook`` in a registry under a new handle's id (first, with ``prepend``), and
    ``id: True`` in each dict of ``flags``; the handle removes all of them."""
    handle = RemovableHandle(hooks, extra_dict=list(flags))
    hooks[handle.id] = hook
    for flag in flags:
        flag[handle.id] = True
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def _check_hook(hook: Any) -> None:
    if not callable(hook):
        raise TypeError(f"a hook must be callable, got {type(hook).__name__}")


def register_module_forward_pre_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(module, args)`` before the ``forward`` of *every* module; it may replace args.

    A global :meth:`Module.register_forward_pre_hook`: it runs for every module
    call, before the module's own pre-hooks.  Meant for debugging and profiling
    (it also runs for each child a model calls).

    Parameters
    ----------
    hook : callable
        ``hook(module, args) -> None or new args``, as for the module method.

    Returns
    -------
    difflab.utils.hooks.RemovableHandle
        ``handle.remove()`` unregisters it; also a context manager.

    Raises
    ------
    TypeError
        If ``hook`` is not callable.

    See Also
    --------
    register_module_forward_hook, Module.register_forward_pre_hook

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> from difflab.nn.modules.module import register_module_forward_pre_hook
    >>> names = []
    >>> with register_module_forward_pre_hook(lambda m, args: names.append(type(m).__name__)):
    ...     _ = nn.Sequential(nn.Linear(2, 2), nn.ReLU())(dl.ones(1, 2))
    >>> names
    ['Sequential', 'Linear', 'ReLU']
    """
    _check_hook(hook)
    return _add_entry(_global_forward_pre_hooks, hook, False)


def register_module_forward_hook(hook: Callable, *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """Call ``hook(module, args, output)`` after the ``forward`` of *every* module.

    A global :meth:`Module.register_forward_hook`: it runs for every module
    call, before the module's own forward hooks, and may replace the output.

    Parameters
    ----------
    hook : callable
        ``hook(module, args, output) -> None or new output``.
    with_kwargs : bool, default False
        Call it as ``hook(module, args, kwargs, output)``.
    always_call : bool, default False
        Run it even when the call raises (with ``output=None``).

    Returns
    -------
    difflab.utils.hooks.RemovableHandle
        ``handle.remove()`` unregisters it; also a context manager.

    Raises
    ------
    TypeError
        If ``hook`` is not callable.

    See Also
    --------
    register_module_forward_pre_hook, Module.register_forward_hook

    Examples
    --------
    Record the output shape of every layer of a model:

    >>> import difflab as dl
    >>> from difflab import nn
    >>> from difflab.nn.modules.module import register_module_forward_hook
    >>> shapes = []
    >>> net = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    >>> with register_module_forward_hook(lambda m, args, out: shapes.append(tuple(out.shape))):
    ...     _ = net(dl.ones(2, 4))
    >>> shapes
    [(2, 3), (2, 3), (2, 3)]
    """
    _check_hook(hook)
    flags = [_global_forward_hooks_with_kwargs] * bool(with_kwargs) \
        + [_global_forward_hooks_always_called] * bool(always_call)
    return _add_entry(_global_forward_hooks, hook, False, flags)


def register_module_full_backward_pre_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(module, grad_output)`` for *every* module, as gradients reach its outputs.

    A global :meth:`Module.register_full_backward_pre_hook`, run before each
    module's own; it may return a new ``grad_output`` tuple.

    Parameters
    ----------
    hook : callable
        ``hook(module, grad_output) -> None or new grad_output``.

    Returns
    -------
    difflab.utils.hooks.RemovableHandle
        ``handle.remove()`` unregisters it; also a context manager.

    Raises
    ------
    TypeError
        If ``hook`` is not callable.

    See Also
    --------
    register_module_full_backward_hook, Module.register_full_backward_pre_hook

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> from difflab.nn.modules.module import register_module_full_backward_pre_hook
    >>> seen = []
    >>> net = nn.Sequential(nn.Linear(2, 2), nn.Tanh())
    >>> with register_module_full_backward_pre_hook(
    ...         lambda m, grad_output: seen.append(type(m).__name__)):
    ...     net(dl.ones(1, 2)).sum().backward()
    >>> seen                     # the outer module's outputs get their gradient first
    ['Sequential', 'Tanh', 'Linear']
    """
    _check_hook(hook)
    return _add_entry(_global_backward_pre_hooks, hook, False)


def register_module_full_backward_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(module, grad_input, grad_output)`` for *every* module during backward.

    A global :meth:`Module.register_full_backward_hook`, run before each
    module's own; it may return a new ``grad_input`` tuple.

    Parameters
    ----------
    hook : callable
        ``hook(module, grad_input, grad_output) -> None or new grad_input``.

    Returns
    -------
    difflab.utils.hooks.RemovableHandle
        ``handle.remove()`` unregisters it; also a context manager.

    Raises
    ------
    TypeError
        If ``hook`` is not callable.

    See Also
    --------
    register_module_full_backward_pre_hook, Module.register_full_backward_hook

    Examples
    --------
    The order in which the modules' hooks run, and whether each module's input got a
    gradient.  The model's input does not require one, so ``grad_input`` is
    ``(None,)`` for the model and its first layer, and their hooks run as soon
    as their outputs' gradients are known:

    >>> import difflab as dl
    >>> from difflab import nn
    >>> from difflab.nn.modules.module import register_module_full_backward_hook
    >>> _ = dl.manual_seed(0)
    >>> net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    >>> seen = []
    >>> def norms(module, grad_input, grad_output):
    ...     seen.append((type(module).__name__, grad_input[0] is None))
    >>> with register_module_full_backward_hook(norms):
    ...     net(dl.ones(1, 2)).sum().backward()
    >>> seen
    [('Sequential', True), ('Linear', False), ('ReLU', False), ('Linear', True)]
    """
    _check_hook(hook)
    return _add_entry(_global_backward_hooks, hook, False)


def register_module_backward_hook(hook: Callable) -> RemovableHandle:
    """Deprecated: :func:`register_module_full_backward_hook`, which difflab runs it as.

    Parameters
    ----------
    hook : callable
        ``hook(module, grad_input, grad_output) -> None or new grad_input``.

    Returns
    -------
    difflab.utils.hooks.RemovableHandle
        ``handle.remove()`` unregisters it; also a context manager.

    Raises
    ------
    TypeError
        If ``hook`` is not callable.

    Warns
    -----
    FutureWarning
        Always: use :func:`register_module_full_backward_hook`.

    See Also
    --------
    Module.register_backward_hook

    Examples
    --------
    >>> import warnings
    >>> from difflab.nn.modules.module import register_module_backward_hook
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     register_module_backward_hook(print).remove()
    >>> caught[0].category.__name__
    'FutureWarning'
    """
    _check_hook(hook)
    warnings.warn("register_module_backward_hook is deprecated; difflab runs it as "
                  "register_module_full_backward_hook: call that instead.", FutureWarning,
                  stacklevel=2)
    return _add_entry(_global_backward_hooks, hook, False)
