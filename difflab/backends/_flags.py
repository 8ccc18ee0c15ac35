"""Boolean switches on a module or object, checked on assignment (PyTorch's flags are)."""

from __future__ import annotations

import types
from typing import Any


def check_flag(owner: str, name: str, value: Any) -> bool:
    """``value`` if it is a bool, else a TypeError naming the switch."""
    if not isinstance(value, bool):
        raise TypeError(f"{owner}.{name} must be True or False, got {type(value).__name__} "
                        f"{value!r}")
    return value


class FlagModule(types.ModuleType):
    """A module whose names in ``_flags`` only take booleans."""

    _flags: tuple = ()

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self._flags:
            value = check_flag(self.__name__, name, value)
        super().__setattr__(name, value)
