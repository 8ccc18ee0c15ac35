"""The forward pre-hooks that recompute a tensor before each call (pruning, the old-style
weight and spectral norms): find the one acting on a tensor, take it out."""

from __future__ import annotations

from typing import Any

from difflab.nn.modules.module import Module


def pre_hooks_on(module: Module, kind: type | tuple, name: str, attribute: str = "name"
                 ) -> list[int]:
    """The ids (keys of ``module._forward_pre_hooks``) of the forward pre-hooks that are
    ``kind`` instances acting on the tensor ``name`` (their ``attribute``)."""
    return [hook_id for hook_id, hook in module.__dict__.get("_forward_pre_hooks", {}).items()
            if isinstance(hook, kind) and getattr(hook, attribute, None) == name]


def drop_pre_hook(module: Module, hook_id: int) -> Any:
    """Take the forward pre-hook ``hook_id`` out of ``module``; return the hook."""
    module.__dict__.get("_forward_pre_hooks_with_kwargs", {}).pop(hook_id, None)
    return module._forward_pre_hooks.pop(hook_id)
