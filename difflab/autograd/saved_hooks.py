"""Where the tape's saved values go while ``autograd.graph.saved_tensors_hooks`` is on.

The engine (:class:`~difflab.autograd.engine.Node`) packs each array a record
saves for backward when one is active, and unpacks it at backward time; the
public region is :mod:`difflab.autograd.graph`.  This module holds only the state
and the two small loops, below the engine (it imports nothing of the tensor).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class SavedTensorsHooks:
    """The ``(pack_hook, unpack_hook)`` of the innermost ``saved_tensors_hooks`` region, else
    ``None``.

    While it is set, every array a record saves for backward goes to ``pack_hook``
    as a tensor when the record is made, and the record keeps what it returns
    (:class:`Packed`); the backward step reads ``unpack_hook``'s tensor instead.
    """

    active: tuple | None = None
    used = False  # (anything packed yet: only then does the quick walk look for it)


class Packed:
    """A saved value as ``pack_hook`` returned it, beside the ``unpack_hook`` that gives the
    tensor back at backward time."""

    __slots__ = ("value", "unpack")

    def __init__(self, value: Any, unpack: Callable) -> None:
        self.value, self.unpack = value, unpack


def pack(tensors: list) -> tuple:
    """Each entry of ``tensors`` (None: a value that is no tensor, kept as it is) through the
    active pack hook, run with the hooks off (what it computes saves nothing through it).

    Returns the :class:`Packed` values, with None where ``tensors`` has None.
    """
    pack_hook, unpack_hook = SavedTensorsHooks.active  # type: ignore[misc]
    SavedTensorsHooks.active = None
    try:
        packed = tuple(None if t is None else Packed(pack_hook(t), unpack_hook)
                       for t in tensors)
    finally:
        SavedTensorsHooks.active = (pack_hook, unpack_hook)
    SavedTensorsHooks.used = True
    return packed


def unpack(saved: tuple, tensor_type: type, name: str) -> tuple:
    """The saved values, each :class:`Packed` one's array as its unpack hook gives it back
    (a clear error if the hook gives anything but a ``tensor_type``)."""
    values = []
    for value in saved:
        if type(value) is Packed:
            tensor = value.unpack(value.value)
            if not isinstance(tensor, tensor_type):
                raise TypeError(f"unpack_hook must return a Tensor, got {type(tensor).__name__} "
                                f"(for a value '{name}' saved for backward)")
            value = tensor.array
        values.append(value)
    return tuple(values)
