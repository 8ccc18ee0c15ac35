"""What ``dl.compile(module)`` returns: the module, its ``forward`` compiled.

As PyTorch's ``OptimizedModule``: the original module is the child
``_orig_mod``, so the parameters, buffers and ``state_dict`` are the
original's own (keys under ``_orig_mod.``), an optimizer built on either
steps both, and ``train()``/``eval()`` reach the original (the compiled
forward guards on the ``training`` flags and traces again when they change).
"""

from __future__ import annotations

import warnings
from typing import Any

from difflab.jit import compiler
from difflab.nn.modules.module import Module


class OptimizedModule(Module):
    """A module whose ``forward`` is a :class:`~difflab.jit.compiler.CompiledFunction`.

    Parameters
    ----------
    mod : Module
        The original module (``_orig_mod``).
    compiled : CompiledFunction
        ``mod`` compiled (what ``forward`` calls).

    Examples
    --------
    >>> import difflab as dl
    >>> net = dl.nn.Linear(3, 2)
    >>> fast = dl.compile(net)
    >>> fast._orig_mod is net, fast.weight is net.weight
    (True, True)
    >>> list(fast.state_dict())
    ['_orig_mod.weight', '_orig_mod.bias']
    """

    def __init__(self, mod: Module, compiled: compiler.CompiledFunction) -> None:
        super().__init__()
        self._orig_mod = mod
        object.__setattr__(self, "_compiled", compiled)
        self.training = mod.training

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.__dict__["_compiled"](*args, **kwargs)

    def _call_with_hooks(self, args: tuple, kwargs: dict) -> Any:
        """The call with hooks; every module's hooks also run for this wrapper (PyTorch's
        warning, as its ``OptimizedModule``'s)."""
        from difflab.nn.modules import module as module_module

        if any((module_module._global_forward_pre_hooks, module_module._global_forward_hooks,
                module_module._global_backward_pre_hooks,
                module_module._global_backward_hooks)):
            warnings.warn("Using `torch.compile(module)` when there are global hooks on "
                          "modules (e.g., from `register_module_forward_hook`); this will cause "
                          "the hooks to fire an extra time for the `OptimizedModule` created "
                          "by `torch.compile(module)`. If this causes undesired behavior, "
                          "please try using `module.compile()`, or use the per-module hooks "
                          "instead", stacklevel=3)
        return super()._call_with_hooks(args, kwargs)

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)

    def __repr__(self) -> str:
        return f"OptimizedModule({self._orig_mod!r})"


compiler.register_module_wrapper(OptimizedModule)
