"""``autocast``: regions where PyTorch runs some operations in lower precision.

In difflab the region changes no dtype (there are no float16/bfloat16
kernels), so it is an explicit no-op that still answers
:func:`is_autocast_enabled` as PyTorch would, and checks its arguments as
PyTorch does.
"""

from __future__ import annotations

import functools
import threading
import warnings
from collections.abc import Callable
from typing import Any

from difflab import cuda
from difflab.dtypes import as_dtype, float16

_DEVICE_TYPES = ("cpu", "cuda")


class _State(threading.local):
    def __init__(self) -> None:
        self.enabled = {"cpu": False, "cuda": False}


_state = _State()


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether code runs inside an enabled ``autocast`` region for ``device_type``.

    Examples
    --------
    >>> import difflab as dl
    >>> with dl.amp.autocast("cpu"):
    ...     dl.amp.is_autocast_enabled("cpu")
    True
    >>> dl.amp.is_autocast_enabled("cpu")
    False
    """
    if device_type not in _DEVICE_TYPES:
        raise RuntimeError(f"is_autocast_enabled: device_type must be one of {_DEVICE_TYPES}, "
                           f"got {device_type!r}")
    return _state.enabled[device_type]


class autocast:  # noqa: N801  (PyTorch's name)
    """A region (``with``) or function (decorator) where PyTorch would use lower precision.

    In difflab every operation keeps its inputs' dtype inside the region: there
    are no float16/bfloat16 kernels, so the region is a documented no-op (the
    results are those of full precision).  As in PyTorch, ``device_type='cuda'``
    on a machine without CUDA warns and disables the region.

    Parameters
    ----------
    device_type : {'cpu', 'cuda'}
    dtype : dtype, optional
        PyTorch's lower-precision type (float16 for CUDA, bfloat16 for the CPU);
        recorded as ``fast_dtype`` (None for bfloat16, which difflab lacks).
    enabled : bool
        False makes the region inactive (nested regions can switch it off).
    cache_enabled : bool, optional
        Accepted for PyTorch's signature.

    Examples
    --------
    >>> import difflab as dl
    >>> model = dl.nn.Linear(3, 1)
    >>> with dl.amp.autocast(device_type="cpu"):
    ...     out = model(dl.randn(2, 3))
    >>> out.dtype                       # unchanged: float32
    difflab.float32
    """

    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type not in _DEVICE_TYPES:
            raise RuntimeError(f"User specified an unsupported autocast device_type "
                               f"'{device_type}' (difflab supports {_DEVICE_TYPES})")
        self.device = device_type
        self.fast_dtype = None if dtype is None and device_type == "cpu" else (
            float16 if dtype is None else _low_precision(dtype))
        self._enabled = bool(enabled)
        if device_type == "cuda" and self._enabled and not cuda.is_available():
            warnings.warn("User provided device_type of 'cuda', but CUDA is not available. "
                          "Disabling", UserWarning, stacklevel=2)
            self._enabled = False
        self._previous: list[bool] = []

    def __enter__(self) -> autocast:
        self._previous.append(_state.enabled[self.device])
        _state.enabled[self.device] = self._enabled
        return self

    def __exit__(self, *exc: object) -> None:
        _state.enabled[self.device] = self._previous.pop()

    def __call__(self, func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return wrapper


def _low_precision(dtype: Any) -> Any:
    """float16 as difflab's dtype; bfloat16 (which difflab lacks) and others refused clearly."""
    if isinstance(dtype, str) and dtype.endswith("bfloat16"):
        return None
    d = as_dtype(dtype)
    if d != float16:
        raise ValueError(f"autocast: dtype must be a lower-precision floating type (float16 or "
                         f"bfloat16), got {d}")
    return d
