"""``nn.Unfold`` and ``nn.Fold`` (im2col and col2im) at PyTorch's path ``nn.modules.fold``."""

from __future__ import annotations

from typing import Any

from difflab.nn import functional as F
from difflab.nn.modules.module import Module
from difflab.tensor import Tensor

__all__ = ["Fold", "Unfold"]


class Unfold(Module):
    r"""im2col: every sliding block of an (N, C, H, W) image as one column.

    The module form of :func:`difflab.nn.functional.unfold`: block :math:`l` (the
    :math:`l`-th position of the kernel, row by row) becomes column :math:`l` of the
    output, its :math:`C k_h k_w` values channel first.  A convolution is this followed by
    one matrix product with the flattened weight.

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
    Fold : the adjoint (col2im), which adds the columns back into an image.
    difflab.nn.functional.unfold : the same map as a function.

    Notes
    -----
    With padding :math:`p`, dilation :math:`d` and stride :math:`s` per spatial
    dimension, the number of blocks is

    .. math::
        L = \prod_{i \in \{h, w\}} \left\lfloor
            \frac{\text{size}_i + 2 p_i - d_i (k_i - 1) - 1}{s_i} \right\rfloor + 1 .

    Unfolding is linear; its gradient is :class:`Fold`.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.Unfold(kernel_size=2)(dl.randn(1, 3, 4, 4)).shape   # 3*2*2 rows, 3*3 blocks
    difflab.Size([1, 12, 9])
    >>> x = dl.arange(9.0).reshape(1, 1, 3, 3)
    >>> dl.nn.Unfold(kernel_size=2)(x)[0].tolist()     # column l: the l-th 2x2 block
    [[0.0, 1.0, 3.0, 4.0], [1.0, 2.0, 4.0, 5.0], [3.0, 4.0, 6.0, 7.0], [4.0, 5.0, 7.0, 8.0]]
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
    r"""col2im: add columns of sliding blocks back into an image of ``output_size``.

    The module form of :func:`difflab.nn.functional.fold`, the adjoint of
    :class:`Unfold`: column :math:`l` is written to the :math:`l`-th block position and
    where blocks overlap their values are added up (so ``Fold(Unfold(x))`` multiplies each
    pixel by the number of blocks that cover it).

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
    ValueError
        When called on an input that is not 2-D or 3-D.
    RuntimeError
        When dimension 1 is not divisible by :math:`k_h k_w`, or :math:`L` is not the
        number of blocks that fit ``output_size``.

    See Also
    --------
    Unfold : the adjoint (im2col).
    difflab.nn.functional.fold : the same map as a function.

    Notes
    -----
    :math:`L` must be the number of blocks of :class:`Unfold`'s formula for
    ``output_size``.  Folding is linear; its gradient is :class:`Unfold`.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.Fold(output_size=(4, 4), kernel_size=2)(dl.randn(1, 12, 9)).shape
    difflab.Size([1, 3, 4, 4])
    >>> fold = dl.nn.Fold(output_size=(3, 3), kernel_size=2)
    >>> fold(dl.ones(1, 4, 4))[0, 0].tolist()         # how many blocks cover each pixel
    [[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]
    >>> fold(dl.ones(1, 4, 3))                        # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    RuntimeError: fold: ...
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
