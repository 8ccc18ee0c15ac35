"""``RemovableHandle``: what registering a hook returns (``torch.utils.hooks``)."""

from __future__ import annotations

from typing import Any


class RemovableHandle:
    """Unregisters one hook: ``handle.remove()``; also a context manager.

    A module keeps its hooks as PyTorch does, in dicts keyed by the handle's
    ``id`` (``module._forward_hooks: OrderedDict[int, hook]``); a
    tensor keeps them in a list, where the handle finds its hook by identity
    (two registrations of one function are two entries).  Removing twice,
    or after the dict was cleared, is harmless.

    Parameters
    ----------
    hooks : dict or list
        Where the hook was registered: a dict (its key is ``id``) or a list.
    hook : object, optional
        The entry to remove from a list (not used with a dict).
    extra_dict : dict or list of dicts, optional
        Dicts that keep something more under the same id (whether a forward hook
        takes keyword arguments, ``_forward_hooks_with_kwargs``): cleared with it.

    Attributes
    ----------
    id : int
        A number no other handle has (``RemovableHandle.next_id`` counts them).

    Examples
    --------
    >>> import difflab as dl
    >>> lin = dl.nn.Linear(2, 2)
    >>> handle = lin.register_forward_hook(lambda m, args, out: None)
    >>> list(lin._forward_hooks) == [handle.id]
    True
    >>> handle.remove(); handle.remove(); len(lin._forward_hooks)
    0
    >>> with lin.register_forward_pre_hook(lambda m, args: None):
    ...     len(lin._forward_pre_hooks)
    1
    >>> len(lin._forward_pre_hooks)
    0
    """

    #: The id of the next handle (PyTorch's class attribute).
    next_id: int = 0
    #: How many hooks handles have removed: with ``next_id``, what a compiled module's
    #: guard watches to know whether any module's hooks may have changed.
    removals: int = 0

    def __init__(self, hooks: dict | list, hook: Any = None, *,
                 extra_dict: dict | list | None = None) -> None:
        self._hooks = hooks
        self._hook = hook
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        if extra_dict is None:
            extra_dict = []
        self._extra = [extra_dict] if isinstance(extra_dict, dict) else list(extra_dict)

    def remove(self) -> None:
        """Unregister the hook (nothing happens if it is gone already).

        Returns
        -------
        None

        Examples
        --------
        >>> import difflab as dl
        >>> t = dl.ones(2, requires_grad=True)
        >>> handle = t.register_hook(lambda g: g * 2)
        >>> handle.remove(); (t * 1).sum().backward(); t.grad
        tensor([1., 1.])
        """
        hooks = self._hooks
        if isinstance(hooks, dict):
            hooks.pop(self.id, None)
        else:  # (a list: by identity, the first of equal entries)
            for i, registered in enumerate(hooks):
                if registered is self._hook:
                    del hooks[i]
                    break
        for extra in self._extra:
            extra.pop(self.id, None)
        self._hook = None
        RemovableHandle.removals += 1

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.remove()


def hooks_changes() -> tuple[int, int]:
    """How many hooks were registered and removed through handles so far, as one key.

    A compiled module reads it at every call: while it stays equal, no hook was
    added or removed with a handle, and the module's hooks need no new look.

    Returns
    -------
    tuple of int
        ``(RemovableHandle.next_id, RemovableHandle.removals)``.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.utils.hooks import hooks_changes
    >>> before = hooks_changes()
    >>> handle = dl.nn.ReLU().register_forward_hook(lambda m, a, o: None)
    >>> hooks_changes() != before
    True
    """
    return RemovableHandle.next_id, RemovableHandle.removals
