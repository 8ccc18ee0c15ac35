"""``autocast``: regions where some operations run in lower precision, as PyTorch's.

Inside a CPU region (bfloat16 by default, float16 if asked) the matrix products
(``matmul``, ``linear``, convolutions, ``einsum``) cast their floating inputs to
the lower precision, and the losses and log-softmax cast them back to float32:
PyTorch's CPU lists, shortened to difflab's primitives.  Each cast is a
``to_dtype`` on the tape, so gradients come back to float32 parameters in
float32.  bfloat16 needs the ml_dtypes package (``pip install ml_dtypes``, in
the ``bfloat16`` extra); without it a bfloat16 region warns once and runs in
full precision.  ``device_type='cuda'`` without a GPU warns and disables the
region, as PyTorch does.
"""

from __future__ import annotations

import functools
import threading
import warnings
from collections.abc import Callable
from typing import Any

from difflab import cuda
from difflab.autograd import engine
from difflab.dtypes import BFLOAT16, as_dtype, bfloat16, float16, float32

_DEVICE_TYPES = ("cpu", "cuda")


class _State(threading.local):
    def __init__(self) -> None:
        self.enabled = {"cpu": False, "cuda": False}


#: Primitives run in the region's lower precision (PyTorch's ``lower_precision_fp`` list).
LOWER_PRECISION = frozenset({"matmul", "linear", "conv2d", "einsum", "im2col"})
#: Primitives run in float32 (PyTorch's ``fp32`` list: losses, log-softmax).
FLOAT32 = frozenset({"nll_loss", "mse_loss", "bce_with_logits", "log_softmax"})


def _cast_inputs(fast_dtype: Any, device: str) -> Any:
    """The engine's hook for a region of ``fast_dtype`` on ``device``: its floating
    tensors to ``fast_dtype`` before a matrix product, and to float32 before a loss."""

    def cast(op: Any, inputs: tuple) -> tuple:
        if op.name in LOWER_PRECISION:
            target, which = fast_dtype, ("float32", "float64")
        elif op.name in FLOAT32:
            target, which = float32, ("float16", "bfloat16")
        else:
            return inputs
        return tuple(t.to(target) if isinstance(t, engine.Tensor) and t.dtype.name in which
                     and t.device.type == device else t for t in inputs)

    return cast


_state = _State()


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether code runs inside an enabled ``autocast`` region for ``device_type``.

    Parameters
    ----------
    device_type : {"cuda", "cpu"}, default "cuda"
        The device whose autocast region is asked about (PyTorch's default).

    Returns
    -------
    bool
        True inside an enabled :class:`difflab.autocast` region for that device.

    Raises
    ------
    RuntimeError
        For a device type other than "cuda" or "cpu".

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
    """A region (``with``) or decorator where matrix products run in lower precision.

    PyTorch's ``torch.autocast`` (mixed precision).  Inside, ``matmul``,
    ``linear``, the convolutions and ``einsum`` cast their float32/float64 inputs
    on ``device_type`` to ``dtype`` (so their results are in ``dtype``); the
    losses and ``log_softmax`` cast float16/bfloat16 inputs to float32.
    Every other operation keeps its inputs' dtype.  The casts are on the tape: the
    gradients of float32 parameters come back in float32.  As in PyTorch,
    ``device_type='cuda'`` on a machine without CUDA warns and disables the region.

    Parameters
    ----------
    device_type : {'cpu', 'cuda'}
        The device whose operations the region casts.
    dtype : dtype, optional
        The lower-precision type: bfloat16 for the CPU (it needs ml_dtypes: without
        it, a warning and full precision) and float16 for CUDA by default; recorded as
        ``fast_dtype``.
    enabled : bool
        False makes the region inactive (nested regions can switch it off).
    cache_enabled : bool, optional
        Accepted for PyTorch's signature.

    Raises
    ------
    ValueError
        When ``device_type`` is not a string, or ``dtype`` is not float16 or bfloat16.
    RuntimeError
        For a ``device_type`` other than ``'cpu'`` and ``'cuda'``.

    Warns
    -----
    UserWarning
        bfloat16 without the ml_dtypes package (the region runs in full precision), or
        ``'cuda'`` on a machine without CUDA (the region is disabled).

    See Also
    --------
    difflab.amp.is_autocast_enabled : whether a region is active.
    difflab.amp.GradScaler : scales float16 losses so small gradients do not underflow.

    Examples
    --------
    >>> import difflab as dl
    >>> model = dl.nn.Linear(3, 1)
    >>> with dl.amp.autocast(device_type="cpu"):
    ...     out = model(dl.randn(2, 3))
    >>> out.dtype                       # the product ran in bfloat16
    difflab.bfloat16
    >>> model(dl.randn(2, 3)).dtype     # outside: float32 again
    difflab.float32

    As a decorator:

    >>> @dl.autocast("cpu")
    ... def predict(x):
    ...     return model(x)
    >>> predict(dl.randn(2, 3)).dtype
    difflab.bfloat16
    """

    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type not in _DEVICE_TYPES:
            raise RuntimeError(f"User specified an unsupported autocast device_type "
                               f"'{device_type}' (difflab supports {_DEVICE_TYPES})")
        self.device = device_type
        default = bfloat16 if device_type == "cpu" else float16
        self.fast_dtype = _low_precision(default if dtype is None else dtype)
        self._enabled = bool(enabled)
        if self._enabled and self.fast_dtype is None:
            warnings.warn("autocast: bfloat16 needs the ml_dtypes package (pip install "
                          "ml_dtypes); this region runs in full precision", UserWarning,
                          stacklevel=2)
        if device_type == "cuda" and self._enabled and not cuda.is_available():
            warnings.warn("User provided device_type of 'cuda', but CUDA is not available. "
                          "Disabling", UserWarning, stacklevel=2)
            self._enabled = False
        self._previous: list[bool] = []

    def __enter__(self) -> autocast:
        self._previous.append((_state.enabled[self.device], engine.Autocast.active))
        _state.enabled[self.device] = self._enabled
        if self.device == "cpu" or cuda.is_available():  # (a disabled region changes nothing)
            engine.Autocast.active = _cast_inputs(self.fast_dtype, self.device) \
                if self._enabled and self.fast_dtype is not None else None
        return self

    def __exit__(self, *exc: object) -> None:
        _state.enabled[self.device], engine.Autocast.active = self._previous.pop()

    def __call__(self, func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return wrapper


def _low_precision(dtype: Any) -> Any:
    """float16 or bfloat16 as difflab's dtype (None: bfloat16 without ml_dtypes); other
    dtypes refused clearly."""
    if (isinstance(dtype, str) and dtype.endswith("bfloat16")) or dtype is bfloat16:
        return None if BFLOAT16 is None else bfloat16
    d = as_dtype(dtype)
    if d != float16:
        raise ValueError(f"autocast: dtype must be a lower-precision floating type (float16 or "
                         f"bfloat16), got {d}")
    return d
