"""The checks of ``nn.functional``'s arguments, one per kind of argument.

A kernel size, a stride, a padding, a dilation or a number of groups (``_window``), a
number such as an ``alpha`` or a slope (``_number``), a dropout probability
(``_probability``), a ``normalized_shape``, an adaptive pooling's ``output_size`` and
what ``pad`` can make in each mode (``_check_pad_amounts``): each is read in one place,
so that every function and layer that takes one gives the same error, in PyTorch's
terms, naming the call and the argument, instead of NumPy's or Python's words (a
ZeroDivisionError, ``int()`` of None) or a float truncated without a word.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from difflab.tensor_arguments import shape_args

#: The least value of each window argument of a convolution, a pooling, unfold or fold:
#: a kernel, a stride or a dilation of 0 makes no windows (or divides by zero: NumPy's
#: and Python's bare ZeroDivisionError before), a negative padding crops (PyTorch
#: refuses it).
_LEAST = {"kernel_size": 1, "stride": 1, "dilation": 1, "padding": 0, "output_padding": 0,
          "groups": 1, "output_size": 0, "size": 1}


def _window(name: str, value: Any, what: str, n: int = 2) -> tuple:
    """A window argument (``kernel_size``, ``stride``, ``padding``, ``dilation``, ...) as
    ``n`` ints, from one int or a sequence of ``n``: the one check of them, PyTorch's.

    A float is refused rather than truncated (``kernel_size=2.5`` was a 2), as a value
    below :data:`_LEAST`'s.
    """
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,) * n
    kinds = f"an int or a tuple of {n} ints" if n > 1 else "an int or a 1-tuple"
    if len(values) != n:
        raise ValueError(f"{name}: {what} must be {kinds}, got {value!r}")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{name}: {what} must be {kinds}, got {type(v).__name__} {v!r}")
        if v < _LEAST.get(what, 0):
            least = _LEAST.get(what, 0)
            raise ValueError(f"{name}: {what} must be {'positive' if least else 'non-negative'}"
                             f", got {value!r}")
    return tuple(int(v) for v in values)


def _single(name: str, value: Any, what: str) -> int:
    """One int from ``3`` or ``(3,)`` (PyTorch accepts both for 1-D layers), checked by
    :func:`_window`."""
    return _window(name, value, what, 1)[0]


def _number(name: str, value: Any, what: str) -> Any:
    """``value`` itself unless it is None or a string, where a number (an ``alpha``, a
    ``p``, a slope) goes: then a TypeError naming the function and the argument (Python's
    was "unsupported operand type(s) for *: 'NoneType' and 'Tensor'", naming neither)."""
    if value is None or isinstance(value, (str, bytes)):
        raise TypeError(f"{name}: {what} must be a number, got {type(value).__name__} "
                        f"{value!r}")
    return value


def _probability(name: str, p: Any, what: str = "p") -> float:
    """A dropout probability: a number in [0, 1] (PyTorch's words for one outside; None
    was "'<=' not supported between instances of 'float' and 'NoneType'")."""
    _number(name, p, what)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return p


def _normalized_shape(name: str, normalized_shape: Any) -> tuple:
    """A normalisation's ``normalized_shape``: an int or a tuple of ints (None was
    "'NoneType' object is not iterable", a float size was truncated)."""
    if not isinstance(normalized_shape, (tuple, list)):
        normalized_shape = (normalized_shape,)
    return shape_args((normalized_shape,), name, "normalized_shape")


def _adaptive_sizes(name: str, output_size: Any, sides: tuple) -> tuple:
    """An adaptive pooling's ``output_size`` as one int per side of ``sides`` (the input's).

    PyTorch's rule: an int for every side, or one entry per side where ``None``
    keeps the input's size (``(3, None)``); difflab also reads a plain ``None``
    as "keep every side".
    """
    n = len(sides)
    if 0 in sides:  # (no cells to average or take the maximum of: nan, or a ZeroDivisionError)
        raise RuntimeError(f"{name}: expected the input to have a non-zero size in the "
                           f"dimensions it pools, but they are {tuple(sides)}")
    if output_size is None:
        return tuple(sides)
    if not isinstance(output_size, (tuple, list)):
        output_size = (output_size,) * n
    if len(output_size) != n:
        raise ValueError(f"{name}: output_size must be an int or {n} entries (int or None), "
                         f"got {output_size!r}")
    sizes = []
    for size, side in zip(output_size, sides):
        if size is None:
            size = side
        elif isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
            raise ValueError(f"{name}: each entry of output_size must be a positive int or "
                             f"None (keep the input's size), got {output_size!r}")
        sizes.append(int(size))
    return tuple(sizes)


def _check_pad_amounts(mode: str, dim: int, left: int, right: int, n: int) -> None:
    """Refuse padding (left, right) of a dimension of size n that ``mode`` cannot make."""
    if n + left + right < 0:
        raise ValueError(
            f"pad: padding ({left}, {right}) of dimension {dim} (size {n}) would leave "
            f"a negative size"
        )
    if mode == "reflect" and (left >= n or right >= n):
        raise ValueError(
            f"pad: reflect padding ({left}, {right}) must be smaller than the size of "
            f"dimension {dim} ({n}): a mirror image has at most {n - 1} elements"
        )
    if mode == "circular" and (left > n or right > n):
        raise ValueError(
            f"pad: circular padding ({left}, {right}) may not exceed the size of "
            f"dimension {dim} ({n})"
        )
    if mode in ("replicate", "circular") and n == 0 and (left > 0 or right > 0):
        raise ValueError(f"pad: {mode} padding needs a non-empty dimension {dim}")
