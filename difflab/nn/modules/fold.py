"""``nn.Unfold`` and ``nn.Fold`` (im2col and col2im) at PyTorch's path ``nn.modules.fold``."""

from __future__ import annotations

from typing import Any

from difflab.nn import functional as F
from difflab.nn.modules.module import Module
from difflab.tensor import Tensor

__all__ = ["Fold", "Unfold"]


class Unfold(Module):
    """Every sliding block of (N, C, H, W) as a column (see
    :func:`difflab.nn.functional.unfold`).

    Parameters
    ----------
    kernel_size : int or tuple of 2 ints
        :math:`(k_h, k_w)`.
    dilation, padding, stride : int or tuple of 2 ints
        As in :class:`Conv2d` (defaults 1, 0, 1).

    Shape
    -----
    - Input: :math:`(N, C, H, W)` or :math:`(C, H, W)`.
    - Output: :math:`(N, C k_h k_w, L)`, :math:`L` the number of block positions.

    Raises
    ------
    ValueError
        When called on an input that is not 3-D or 4-D.

    See Also
    --------
    Fold, difflab.nn.functional.unfold

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.Unfold(kernel_size=2)(dl.randn(1, 3, 4, 4)).shape
    difflab.Size([1, 12, 9])
    """

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, x: Tensor) -> Tensor:
        return F.unfold(x, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Fold(Module):
    """Sum columns back into an image of ``output_size`` (see
    :func:`difflab.nn.functional.fold`).

    Parameters
    ----------
    output_size : int or tuple of 2 ints
        :math:`(H, W)`.
    kernel_size : int or tuple of 2 ints
        :math:`(k_h, k_w)`.
    dilation, padding, stride : int or tuple of 2 ints
        As in :class:`Conv2d` (defaults 1, 0, 1).

    Shape
    -----
    - Input: :math:`(N, C k_h k_w, L)` or :math:`(C k_h k_w, L)`.
    - Output: :math:`(N, C, H, W)` or :math:`(C, H, W)`, overlapping blocks added.

    Raises
    ------
    ValueError, RuntimeError
        When called on an input of the wrong dimensions or sizes.

    See Also
    --------
    Unfold, difflab.nn.functional.fold

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.Fold(output_size=(4, 4), kernel_size=2)(dl.randn(1, 12, 9)).shape
    difflab.Size([1, 3, 4, 4])
    """

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, x: Tensor) -> Tensor:
        return F.fold(x, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")
