"""Activation layers at PyTorch's path ``nn.modules.activation`` (``MultiheadAttention`` too,
as in PyTorch), and ``Hardtanh``/``ReLU6``."""

from __future__ import annotations

from difflab.nn import functional as F
from difflab.nn.modules.attention import MultiheadAttention
from difflab.nn.modules.layers import (
    GELU,
    LeakyReLU,
    LogSoftmax,
    ReLU,
    Sigmoid,
    Softmax,
    Tanh,
)
from difflab.nn.modules.module import Module
from difflab.tensor import Tensor

__all__ = ["GELU", "Hardtanh", "LeakyReLU", "LogSoftmax", "MultiheadAttention", "ReLU", "ReLU6",
           "Sigmoid", "Softmax", "Tanh"]


class Hardtanh(Module):
    """x clipped to [``min_val``, ``max_val``] (see :func:`difflab.nn.functional.hardtanh`).

    Parameters
    ----------
    min_val, max_val : float
        The interval, [-1, 1] by default.
    inplace : bool
        Accepted for PyTorch's signature; the result is a new tensor.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.Hardtanh(-2.0, 2.0)(dl.tensor([-5., 1., 5.]))
    tensor([-2.,  1.,  2.])
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
                 ) -> None:
        super().__init__()
        if max_val < min_val:
            raise ValueError(f"Hardtanh: max_val ({max_val}) cannot be less than min_val "
                             f"({min_val})")
        self.min_val, self.max_val, self.inplace = float(min_val), float(max_val), inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.hardtanh(x, self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"


class ReLU6(Hardtanh):
    """min(max(x, 0), 6) (MobileNet's activation): :class:`Hardtanh` on [0, 6].

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.ReLU6()(dl.tensor([-1., 3., 9.]))
    tensor([0., 3., 6.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return ""
