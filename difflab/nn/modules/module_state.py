"""A module's state: ``state_dict``, ``load_state_dict``, and PyTorch's four hooks on them.

:class:`StateDict` is a part of :class:`difflab.nn.Module` (its base class), kept in a
file of its own.  The hooks run where PyTorch runs them, module by module:

* ``state_dict``: each module's pre-hooks ``hook(module, prefix, keep_vars)`` before it
  writes its own entries, its post-hooks ``hook(module, state_dict, prefix,
  local_metadata)`` after its children have written theirs;
* ``load_state_dict``: each module's pre-hooks ``hook(module, state_dict, prefix,
  local_metadata, strict, missing_keys, unexpected_keys, error_msgs)`` before its own keys
  are read (a parent's first; a child gets the parent's entries under its prefix, after
  the parent's hooks), its post-hooks ``hook(module, incompatible_keys)`` after its
  children's, once the values are copied.  ``strict=True`` raises on the missing and
  unexpected keys left after every post-hook, as in PyTorch.

difflab's load is all or nothing: every value is checked before any is copied, and a
strict load that fails after the post-hooks puts the old values back.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

import numpy as np

from difflab import backend
from difflab.nn.parameter import is_lazy
from difflab.tensor import Tensor
from difflab.utils.hooks import RemovableHandle


class _IncompatibleKeys(NamedTuple):
    missing_keys: list
    unexpected_keys: list


def _to_array_like(value: Any, like: Tensor) -> Any:
    """``value`` (Tensor or array) as an array with ``like``'s dtype and device."""
    array = value.array if isinstance(value, Tensor) else value
    if not hasattr(array, "shape"):
        array = np.asarray(array)
    array = backend.to_device(array, like.device) if like.is_cuda else backend.to_numpy(array)
    return array.astype(like.dtype, copy=False)


def _hooks(module: Any, registry: str) -> list:
    """The hooks of one registry, in their order (none on a module restored without
    ``__init__``); a list, so a hook may register or remove hooks while they run."""
    return list(module.__dict__.get(registry, {}).values())


class _Load:
    """One ``load_state_dict`` call: PyTorch's three lists, and what is to be copied."""

    def __init__(self, metadata: Any) -> None:
        self.metadata = metadata
        self.missing: list = []
        self.unexpected: list = []
        self.errors: list = []
        self.copies: list = []  # (target tensor, converted array)
        self.lazy: list = []  # (placeholder, the checkpoint's shape)
        self.post_hooks: list = []  # (module, hook), children's before their parent's

    def walk(self, module: Any, local: dict, prefix: str) -> None:
        """PyTorch's order: this module's pre-hooks, its own keys, its children, then (in
        :attr:`post_hooks`) its post-hooks."""
        local_metadata = {} if self.metadata is None else self.metadata.get(prefix[:-1], {})
        for hook in _hooks(module, "_load_state_dict_pre_hooks"):
            hook(module, local, prefix, local_metadata, True, self.missing, self.unexpected,
                 self.errors)
        own = dict(module._own_state())
        for name, target in own.items():
            if prefix + name in local:
                self.check(prefix + name, local[prefix + name], target)
            else:
                self.missing.append(prefix + name)
        for key in local:
            first, dot, _ = key[len(prefix):].partition(".") if key.startswith(prefix) else (
                "", "", "")
            if first and first not in (module._modules if dot else own):
                self.unexpected.append(key)
        for name, child in module._modules.items():
            if child is not None:
                start = f"{prefix}{name}."
                self.walk(child, {k: v for k, v in local.items() if k.startswith(start)}, start)
        for hook in _hooks(module, "_load_state_dict_post_hooks"):
            self.post_hooks.append((module, hook))

    def check(self, key: str, value: Any, target: Tensor) -> None:
        """Convert ``value`` for ``target`` (to be copied), or say in :attr:`errors` why not."""
        if is_lazy(value):  # (a lazy layer's placeholder: nothing to copy)
            return
        try:
            shape = tuple(getattr(value, "shape", np.shape(value)))
        except (TypeError, ValueError) as exc:
            self.errors.append(f"the value for {key} is not an array ({exc}).")
            return
        if is_lazy(target):  # a lazy layer's placeholder takes the checkpoint's shape
            self.lazy.append((target, shape))
            xp = backend.array_module(target.array)
            like = Tensor._wrap(xp.empty(shape, dtype=target.array.dtype))
        else:
            like = target
        if shape != tuple(like.shape):
            self.errors.append(f"size mismatch for {key}: copying a param with shape {shape} "
                               f"from checkpoint, the shape in current model is "
                               f"{tuple(like.shape)}.")
            return
        try:
            self.copies.append((target, _to_array_like(value, like)))
        except (TypeError, ValueError) as exc:
            kind = getattr(getattr(value, "dtype", None), "name", type(value).__name__)
            self.errors.append(f"cannot copy {key} ({kind}) into a {like.dtype} "
                               f"parameter: {exc}.")

    def key_errors(self) -> list:
        """The strict load's complaints about the keys, PyTorch's two messages."""
        return [f"{what} key(s) in state_dict: " + ", ".join(f'"{k}"' for k in keys) + "."
                for what, keys in (("Missing", self.missing), ("Unexpected", self.unexpected))
                if keys]

    def copy(self) -> list:
        """Copy every value in (materializing lazy placeholders); the old values, to undo."""
        for target, shape in self.lazy:
            target.materialize(shape)
        # (only a post-hook can make a load fail once copied: keep the old values then)
        undo = [(t, t.array.copy()) for t, _ in self.copies] if self.post_hooks else []
        for target, array in self.copies:
            target.array[...] = array
            target._version[0] += 1
        return undo


def _raise(module: Any, errors: list) -> None:
    raise RuntimeError(f"Error(s) in loading state_dict for {type(module).__name__}:\n\t"
                       + "\n\t".join(errors))


class StateDict:
    """``state_dict``, ``load_state_dict`` and their hooks: a part of ``Module``."""

    #: The version written in each module's metadata (``state_dict()._metadata``), PyTorch's.
    _version: int = 1

    def _own_state(self, keep_vars: bool = True) -> Iterator[tuple[str, Tensor]]:
        """``(name, tensor)`` of this module's own parameters and persistent buffers."""
        for name, p in self._parameters.items():
            if p is not None:  # (a lazy layer's placeholder stays one, as in PyTorch)
                yield name, p if keep_vars or is_lazy(p) else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent:
                yield name, b if keep_vars or is_lazy(b) else b.detach()

    def state_dict(self, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> OrderedDict:
        """A dictionary ``dotted name -> tensor`` of every parameter and persistent buffer.

        The tensors share memory with the module's (as in PyTorch): save them with
        :func:`difflab.serialization.save`, or copy them, before training further.  The
        hooks of :meth:`register_state_dict_pre_hook` and
        :meth:`register_state_dict_post_hook` run module by module, as in PyTorch.

        Parameters
        ----------
        destination : dict, optional
            A dict to fill (used by the recursion); a new ``OrderedDict`` by default,
            with PyTorch's ``_metadata`` (each module's ``{"version": ...}`` by prefix).
        prefix : str, default ''
            Put in front of every key.
        keep_vars : bool, default False
            ``True`` returns the parameters themselves; ``False`` returns detached
            tensors (same memory, no gradient recording).

        Returns
        -------
        collections.OrderedDict
            The state, in the order of :meth:`named_parameters` then the buffers, module by module.

        Raises
        ------
        RuntimeError
            When a hook of :meth:`register_state_dict_post_hook` returns something.

        See Also
        --------
        load_state_dict : the inverse.
        difflab.serialization.save, difflab.serialization.load : write it to a file, read it back.

        Examples
        --------
        >>> from difflab import nn
        >>> net = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
        >>> list(net.state_dict())  # doctest: +NORMALIZE_WHITESPACE
        ['0.weight', '0.bias', '1.weight', '1.bias', '1.running_mean', '1.running_var',
         '1.num_batches_tracked']
        """
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in _hooks(self, "_state_dict_pre_hooks"):
            hook(self, prefix, keep_vars)
        for name, tensor in self._own_state(keep_vars):
            destination[prefix + name] = tensor
        for name, child in self._modules.items():
            if child is not None:
                child.state_dict(destination, prefix + name + ".", keep_vars)
        for hook in _hooks(self, "_state_dict_hooks"):
            if hook(self, destination, prefix, local_metadata) is not None:
                raise RuntimeError("state_dict post-hook must return None (as in PyTorch): "
                                   "change the state_dict it is given in place")
        return destination

    def load_state_dict(self, state_dict: Mapping, strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy the values of ``state_dict`` into this module's parameters and buffers, in place.

        Every value is checked (and converted to the target's dtype and device)
        before anything is copied, so a failed load leaves the module as it was.  A lazy
        layer's placeholder (:class:`difflab.nn.UninitializedParameter`) takes the
        checkpoint's shape, as in PyTorch; a placeholder in the checkpoint copies nothing.
        The hooks of :meth:`register_load_state_dict_pre_hook` and
        :meth:`register_load_state_dict_post_hook` run in PyTorch's order (see
        ``difflab.nn.modules.module_state``) on a copy of ``state_dict``.

        Parameters
        ----------
        state_dict : dict
            ``dotted name -> tensor or array``, as :meth:`state_dict` returns.
        strict : bool, default True
            ``True``: the keys must match exactly (once the post-hooks have run); every
            missing or unexpected key is listed in the error.  ``False``: copy the keys
            that match and report the rest.
        assign : bool, default False
            Accepted for PyTorch compatibility and ignored: the values are always
            copied into the existing tensors (so optimizers keep working).

        Returns
        -------
        NamedTuple
            ``(missing_keys, unexpected_keys)``, two lists of names.

        Raises
        ------
        TypeError
            If ``state_dict`` is not a mapping.
        RuntimeError
            On a missing or unexpected key (when ``strict``), a shape mismatch, a value
            that cannot be converted, or a message a pre-hook put in ``error_msgs``; one
            message lists every problem.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> a, b = nn.Linear(2, 1), nn.Linear(2, 1)
        >>> b.load_state_dict(a.state_dict())
        _IncompatibleKeys(missing_keys=[], unexpected_keys=[])
        >>> bool((a.weight == b.weight).all())
        True
        >>> b.load_state_dict({"weight": dl.zeros(1, 2)}, strict=False)
        _IncompatibleKeys(missing_keys=['bias'], unexpected_keys=[])
        >>> b.load_state_dict({"weight": dl.zeros(3, 2), "bias": dl.zeros(1)})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
            ...
        RuntimeError: Error(s) in loading state_dict for Linear:...size mismatch for weight...
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"expected a dict (a state_dict), got {type(state_dict).__name__}")
        load = _Load(getattr(state_dict, "_metadata", None))
        load.walk(self, OrderedDict(state_dict), "")  # (a copy: the hooks may change it)
        if load.errors:  # (nothing copied: the module stays as it was)
            _raise(self, (load.key_errors() if strict else []) + load.errors)
        undo = load.copy()
        result = _IncompatibleKeys(load.missing, load.unexpected)
        for module, hook in load.post_hooks:
            if hook(module, result) is not None:
                raise AssertionError(
                    "Hooks registered with ``register_load_state_dict_post_hook`` are not "
                    "expected to return new values, if incompatible_keys need to be "
                    "modified, it should be done inplace.")
        if strict and load.key_errors():
            for target, array in undo:
                target.array[...] = array
                target._version[0] += 1
            _raise(self, load.key_errors())
        return result

    # ------------------------------------------------------------------- the hooks
    def register_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, prefix, keep_vars)`` before :meth:`state_dict` writes this
        module's entries (its return value is ignored).

        Parameters
        ----------
        hook : callable
            As above; ``prefix`` is this module's, ``"0."`` for the first of a Sequential.

        Returns
        -------
        difflab.utils.hooks.RemovableHandle
            ``handle.remove()`` unregisters it.

        Raises
        ------
        TypeError
            If ``hook`` is not callable.

        Examples
        --------
        >>> from difflab import nn
        >>> net = nn.Sequential(nn.Linear(2, 1))
        >>> seen = []
        >>> handle = net[0].register_state_dict_pre_hook(
        ...     lambda module, prefix, keep_vars: seen.append(prefix))
        >>> _ = net.state_dict()
        >>> seen
        ['0.']
        """
        return self._add_hook("_state_dict_pre_hooks", hook, False)

    def register_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata)`` after :meth:`state_dict`
        has written this module's entries and its children's.

        The hook changes ``state_dict`` in place (rename, drop or add entries) and returns
        None, as in PyTorch; ``local_metadata`` is this module's ``{"version": ...}``.

        Parameters
        ----------
        hook : callable
            As above.

        Returns
        -------
        difflab.utils.hooks.RemovableHandle
            ``handle.remove()`` unregisters it.

        Raises
        ------
        TypeError
            If ``hook`` is not callable (a hook that returns something makes
            :meth:`state_dict` raise a RuntimeError).

        Examples
        --------
        >>> from difflab import nn
        >>> layer = nn.Linear(2, 1)
        >>> def drop_bias(module, state, prefix, local_metadata):
        ...     del state[prefix + "bias"]
        >>> handle = layer.register_state_dict_post_hook(drop_bias)
        >>> list(layer.state_dict())
        ['weight']
        """
        return self._add_hook("_state_dict_hooks", hook, False)

    def register_load_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before :meth:`load_state_dict` reads this module's keys.

        ``state_dict`` is the load's own copy (this module's part of it, for a child): the
        hook may rename or convert entries in place (an old checkpoint's names), or append
        a message to ``error_msgs`` to fail the load.  ``strict`` is always True here, as
        in PyTorch (the keys are collected either way).

        Parameters
        ----------
        hook : callable
            As above.

        Returns
        -------
        difflab.utils.hooks.RemovableHandle
            ``handle.remove()`` unregisters it.

        Raises
        ------
        TypeError
            If ``hook`` is not callable.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> layer = nn.Linear(2, 1)
        >>> def old_names(module, state, prefix, *rest):
        ...     for old, new in (("w", "weight"), ("b", "bias")):
        ...         if prefix + old in state:
        ...             state[prefix + new] = state.pop(prefix + old)
        >>> handle = layer.register_load_state_dict_pre_hook(old_names)
        >>> layer.load_state_dict({"w": dl.ones(1, 2), "b": dl.zeros(1)})
        _IncompatibleKeys(missing_keys=[], unexpected_keys=[])
        >>> layer.weight.tolist()
        [[1.0, 1.0]]
        """
        return self._add_hook("_load_state_dict_pre_hooks", hook, False)

    def register_load_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, incompatible_keys)`` after :meth:`load_state_dict` has loaded
        this module and its children.

        ``incompatible_keys`` is the ``(missing_keys, unexpected_keys)`` pair of lists the
        load returns; the hook may change them in place, and ``strict=True`` judges the
        keys left after every post-hook (clearing both avoids the error).  It must return
        None (anything else is an AssertionError, as in PyTorch).

        Parameters
        ----------
        hook : callable
            As above.

        Returns
        -------
        difflab.utils.hooks.RemovableHandle
            ``handle.remove()`` unregisters it.

        Raises
        ------
        TypeError
            If ``hook`` is not callable.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> layer = nn.Linear(2, 1)
        >>> def bias_optional(module, keys):
        ...     if "bias" in keys.missing_keys:
        ...         keys.missing_keys.remove("bias")
        >>> handle = layer.register_load_state_dict_post_hook(bias_optional)
        >>> layer.load_state_dict({"weight": dl.ones(1, 2)})
        _IncompatibleKeys(missing_keys=[], unexpected_keys=[])
        """
        return self._add_hook("_load_state_dict_post_hooks", hook, False)
