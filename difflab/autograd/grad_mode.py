"""Switching the tape on and off: ``no_grad``, ``enable_grad``, ``set_grad_enabled``.

Each works as a context manager and as a decorator, as in PyTorch:

>>> with no_grad():            # update weights without recording the update
...     w -= lr * w.grad
>>> @no_grad()
... def evaluate(model, x): ...
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any


class _State:
    """One flag, read on every operation: is the tape recording?"""

    enabled: bool = True


def is_grad_enabled() -> bool:
    """True when operations on tensors that require grad are being recorded."""
    return _State.enabled


class set_grad_enabled:  # noqa: N801  (PyTorch's name)
    """Turn recording on or off: a plain call, a context manager or a decorator."""

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self.previous = _State.enabled
        _State.enabled = self.mode  # takes effect at once, as torch.set_grad_enabled(False)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        _State.enabled = self.previous

    def __call__(self, function: Callable) -> Callable:
        mode = self.mode
        _State.enabled = self.previous  # used as a decorator: undo the eager switch

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with set_grad_enabled(mode):
                return function(*args, **kwargs)

        return wrapper


class no_grad(set_grad_enabled):  # noqa: N801
    """Do not record: results of operations inside do not require grad."""

    def __init__(self) -> None:
        self.mode = False
        self.previous = _State.enabled

    def __enter__(self) -> None:
        self.previous = _State.enabled
        _State.enabled = False

    def __call__(self, function: Callable) -> Callable:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with no_grad():
                return function(*args, **kwargs)

        return wrapper


class enable_grad(no_grad):  # noqa: N801
    """Record again inside a ``no_grad`` block."""

    def __enter__(self) -> None:
        self.previous = _State.enabled
        _State.enabled = True

    def __call__(self, function: Callable) -> Callable:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with enable_grad():
                return function(*args, **kwargs)

        return wrapper


class inference_mode(no_grad):  # noqa: N801
    """``no_grad`` under PyTorch's newer name: nothing inside is recorded.

    ``inference_mode(False)`` records as usual (a switch for code that takes a
    flag).  PyTorch additionally makes the results unusable in training later;
    difflab's results are ordinary tensors that do not require grad.
    """

    def __init__(self, mode: bool = True) -> None:
        self.mode = not mode
        self.previous = _State.enabled
        self.inference = bool(mode)

    #: How many inference_mode(True) blocks are open (is_inference_mode_enabled reads it).
    depth: int = 0

    def __enter__(self) -> None:
        self.previous = _State.enabled
        self.previous_depth = inference_mode.depth
        if self.inference:
            _State.enabled = False
            inference_mode.depth += 1
        else:  # inference_mode(False) switches it off inside, as PyTorch's does
            inference_mode.depth = 0

    def __exit__(self, *exc: Any) -> None:
        _State.enabled = self.previous
        inference_mode.depth = self.previous_depth

    def __call__(self, function: Callable) -> Callable:
        inference = self.inference

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with inference_mode(inference):
                return function(*args, **kwargs)

        return wrapper


def is_inference_mode_enabled() -> bool:
    """True inside an ``inference_mode()`` block (``no_grad`` alone does not count).

    Examples
    --------
    >>> import difflab as dl
    >>> with dl.inference_mode():
    ...     print(dl.is_inference_mode_enabled())
    True
    >>> dl.is_inference_mode_enabled()
    False
    """
    return inference_mode.depth > 0
