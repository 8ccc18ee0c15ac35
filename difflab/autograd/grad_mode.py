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
    """Whether operations on tensors that require grad are being recorded now.

    Returns
    -------
    bool
        False inside ``no_grad``, ``inference_mode`` or ``set_grad_enabled(False)``.

    See Also
    --------
    no_grad, enable_grad, set_grad_enabled

    Examples
    --------
    >>> import difflab as dl
    >>> dl.is_grad_enabled()
    True
    >>> with dl.no_grad():
    ...     print(dl.is_grad_enabled())
    False
    """
    return _State.enabled


class set_grad_enabled:  # noqa: N801  (PyTorch's name)
    """Turn recording on or off: a plain call, a context manager or a decorator.

    Called plainly it switches at once (``dl.set_grad_enabled(False)``); as a ``with``
    block or a decorator it restores the previous state afterwards.

    Parameters
    ----------
    mode : bool
        True to record operations on tensors that require grad, False not to.

    See Also
    --------
    no_grad : ``set_grad_enabled(False)`` for a block.
    is_grad_enabled : the current state.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([1.0], requires_grad=True)
    >>> with dl.set_grad_enabled(False):
    ...     y = x * 2
    >>> y.requires_grad
    False
    >>> (x * 2).requires_grad
    True
    """

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
    """Do not record: results of operations inside do not require grad.

    For evaluation and for updating weights in place; a context manager or a decorator
    (``@dl.no_grad()``).  Nothing inside is on the tape, so nothing is saved for a
    backward pass.

    See Also
    --------
    enable_grad : record again inside.
    inference_mode : the same under PyTorch's newer name.

    Examples
    --------
    >>> import difflab as dl
    >>> w = dl.tensor([1.0, 2.0], requires_grad=True)
    >>> (w ** 2).sum().backward()
    >>> with dl.no_grad():
    ...     w -= 0.1 * w.grad          # an update, not recorded
    >>> w, w.requires_grad
    (tensor([0.8, 1.6], requires_grad=True), True)
    """

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
    """Record again inside a ``no_grad`` block (a context manager or a decorator).

    See Also
    --------
    no_grad, set_grad_enabled

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([1.0], requires_grad=True)
    >>> with dl.no_grad():
    ...     with dl.enable_grad():
    ...         y = x * 2
    >>> y.requires_grad
    True
    """

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
    flag).  The tensors made inside are inference tensors
    (:meth:`difflab.Tensor.is_inference`); PyTorch additionally refuses to record them
    in training later, difflab uses them as tensors that do not require grad.

    Parameters
    ----------
    mode : bool, default True
        True: do not record inside; False: record as usual.

    See Also
    --------
    no_grad, is_inference_mode_enabled

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([1.0], requires_grad=True)
    >>> with dl.inference_mode():
    ...     y = x * 2
    >>> y.requires_grad
    False
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


class InferenceVersion(list):
    """The version counter of a tensor made inside ``inference_mode()``, and its mark.

    :meth:`difflab.Tensor.is_inference` asks whether a tensor's counter is one of these.
    A view, or ``detach()``, shares its base's counter, so a view of an inference tensor is
    one too and a view made inside the block of an ordinary tensor is not, as in PyTorch.
    """

    __slots__ = ()


def new_version() -> list:
    """A new tensor's version counter ``[0]``: an :class:`InferenceVersion` inside an
    enabled ``inference_mode()`` block (the tensor is then an inference tensor)."""
    return InferenceVersion((0,)) if inference_mode.depth else [0]


def is_inference_mode_enabled() -> bool:
    """True inside an ``inference_mode()`` block (``no_grad`` alone does not count).

    Returns
    -------
    bool
        Whether an enabled ``inference_mode()`` is in effect (in this thread).

    See Also
    --------
    difflab.inference_mode : the block it asks about.
    difflab.is_grad_enabled : whether operations are recorded (False in both blocks).

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
