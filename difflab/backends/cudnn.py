"""``torch.backends.cudnn``: cuDNN's switches (difflab uses no cuDNN: they are recorded only).

Examples
--------
>>> import difflab as dl
>>> dl.backends.cudnn.benchmark = True
>>> dl.backends.cudnn.deterministic = True
>>> dl.backends.cudnn.is_available()
False
>>> dl.backends.cudnn.benchmark = "yes"
Traceback (most recent call last):
    ...
TypeError: difflab.backends.cudnn.benchmark must be True or False, got str 'yes'
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

from difflab.backends._flags import FlagModule

#: Whether PyTorch would use cuDNN (recorded only).
enabled = True
#: Let cuDNN time several algorithms and keep the fastest (recorded only).
benchmark = False
#: Ask cuDNN for deterministic algorithms (difflab's kernels always are).
deterministic = False
#: Let cuDNN convolutions use TF32 (difflab computes in full float32).
allow_tf32 = True


def is_available() -> bool:
    """Whether cuDNN can be used: never in difflab (convolutions run in NumPy or CuPy).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.backends.cudnn.is_available()
    False
    """
    return False


def version() -> None:
    """cuDNN's version: None, as PyTorch answers when cuDNN is absent.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.backends.cudnn.version() is None
    True
    """
    return None


@contextlib.contextmanager
def flags(enabled: bool = False, benchmark: bool = False, deterministic: bool = False,
          allow_tf32: bool = True) -> Iterator[None]:
    """Set the four switches inside a ``with`` block and restore them after.

    Examples
    --------
    >>> import difflab as dl
    >>> with dl.backends.cudnn.flags(enabled=True, deterministic=True):
    ...     dl.backends.cudnn.deterministic
    True
    """
    module = sys.modules[__name__]
    names = ("enabled", "benchmark", "deterministic", "allow_tf32")
    before = {name: getattr(module, name) for name in names}
    try:
        for name, value in zip(names, (enabled, benchmark, deterministic, allow_tf32)):
            setattr(module, name, value)
        yield
    finally:
        for name, value in before.items():
            setattr(module, name, value)


class _CudnnModule(FlagModule):
    _flags = ("enabled", "benchmark", "deterministic", "allow_tf32")


sys.modules[__name__].__class__ = _CudnnModule
