"""``RemovableHandle``: what registering a hook returns (``torch.utils.hooks``)."""

from __future__ import annotations

from typing import Any


class RemovableHandle:
    """Unregisters one hook from the list it was added to: ``handle.remove()``.

    Also a context manager, so ``with t.register_..._hook(f):`` scopes the hook.
    Removing twice is harmless.
    """

    def __init__(self, hooks: list, hook: Any) -> None:
        self._hooks = hooks
        self._hook = hook

    def remove(self) -> None:
        # By identity: two registrations of the same function are two entries.
        for i, registered in enumerate(self._hooks):
            if registered is self._hook:
                del self._hooks[i]
                break
        self._hook = None

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.remove()
