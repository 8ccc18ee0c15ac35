"""The forward pre-hooks that recompute a tensor before each call (pruning, the old-style
weight and spectral norms): find the one acting on a tensor, take it out."""

from __future__ import annotations

from typing import Any

from difflab.nn.modules.module import Module


def pre_hooks_on(module: Module, kind: type | tuple, name: str, attribute: str = "name"
                 ) -> list[tuple]:
    """The registry entries ``(hook, with_kwargs)`` of ``module``'s forward pre-hooks that
    are ``kind`` instances acting on the tensor ``name`` (their ``attribute``)."""
    return [entry for entry in module.__dict__.get("_forward_pre_hooks", [])
            if isinstance(entry[0], kind) and getattr(entry[0], attribute, None) == name]


def drop_pre_hook(module: Module, entry: tuple) -> Any:
    """Take ``entry`` out of ``module``'s forward pre-hooks (by identity); return its hook."""
    hooks = module._forward_pre_hooks
    hooks.pop(next(i for i, e in enumerate(hooks) if e is entry))
    return entry[0]
