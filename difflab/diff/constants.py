"""Constants among dual numbers: the values of an operation that has no derivative."""

from __future__ import annotations

from typing import Any

import numpy as np

from difflab.tensor import Tensor


class Constant(np.ndarray):
    """The values of an operation on dual numbers that has no derivative (``x > 0``,
    ``dl.floor(x)``, ``dl.isnan(x)``): a NumPy array, with a constant tensor's methods.

    In f, ``(x > 0).float() * x`` is PyTorch's way to write a mask as a factor: the
    comparison must have Tensor's methods (``.float()``, ``.to(x.dtype)``,
    ``.type(...)``), as in reverse mode, where it is a tensor.  It stays an array
    (the rules compare the values of nested dual numbers, and an array inside a tensor
    is compared in ``jacfwd``); any other name is Tensor's, run on a constant tensor of
    the values, whose tangent is zero.  NumPy's operations on it give plain arrays.
    """

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # (NumPy and copy ask for protocols: not Tensor's)
            raise AttributeError(name)
        return getattr(Tensor._wrap(self.view(np.ndarray)), name)

    def __array_wrap__(self, array: Any, context: Any = None, return_scalar: bool = False
                       ) -> Any:
        plain = array.view(np.ndarray) if isinstance(array, np.ndarray) else array
        return plain[()] if return_scalar else plain


def constant_values(values: Any) -> Any:
    """``values`` (an array or a number without a derivative) as a :class:`Constant`:
    what a comparison of dual numbers or a piecewise-constant primitive of them gives."""
    if isinstance(values, np.ndarray) and type(values) is not np.ndarray:
        return values  # (a CuPy array, a Constant already: as they are)
    if isinstance(values, (np.ndarray, np.generic, bool, int, float)):
        return np.asarray(values).view(Constant)
    return values
