"""Linear layers at PyTorch's path ``nn.modules.linear``: ``Identity``, ``Linear`` (defined in
:mod:`.layers`) and ``Bilinear``."""

from __future__ import annotations

import math
from typing import Any

from difflab.nn import functional as F
from difflab.nn import init
from difflab.nn.modules.layers import Identity, Linear, _empty
from difflab.nn.modules.module import Module
from difflab.tensor import Tensor

__all__ = ["Bilinear", "Identity", "Linear"]


class Bilinear(Module):
    r"""y = x₁ᵀ A x₂ + b, one matrix A_o per output feature.

    Parameters
    ----------
    in1_features, in2_features, out_features : int
    bias : bool

    Attributes
    ----------
    weight : Parameter
        (out_features, in1_features, in2_features), U(±1/√in1_features) as in PyTorch.
    bias : Parameter or None

    Shape
    -----
    - Input: ``input1`` :math:`(*, H_{in1})`, ``input2`` :math:`(*, H_{in2})`.
    - Output: :math:`(*, H_{out})`.

    Notes
    -----
    .. math::
        y_o = x_1^\top A_o\, x_2 + b_o

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.Bilinear(3, 4, 2)(dl.randn(5, 3), dl.randn(5, 4)).shape
    difflab.Size([5, 2])
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in1_features, self.in2_features = int(in1_features), int(in2_features)
        self.out_features = int(out_features)
        self.weight = _empty(out_features, in1_features, in2_features, dtype=dtype,
                             device=device)
        if bias:
            self.bias = _empty(out_features, dtype=dtype, device=device)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        r"""Draw new weights and bias from PyTorch's default, :math:`\mathcal U(-k, k)`.

        Here :math:`\text{fan\_in} = \text{in1\_features}`.
        Then :math:`k = 1/\sqrt{\text{fan\_in}}`.

        Returns
        -------
        None

        Examples
        --------
        >>> from difflab import nn
        >>> layer = nn.Bilinear(3, 4, 2)
        >>> _ = nn.init.zeros_(layer.weight)
        >>> layer.reset_parameters()
        >>> bool((layer.weight != 0).all())
        True
        """
        bound = 1 / math.sqrt(self.in1_features)
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.bilinear(x1, x2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
