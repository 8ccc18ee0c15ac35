"""``nn.PixelShuffle`` and ``nn.PixelUnshuffle`` at PyTorch's path ``nn.modules.pixelshuffle``,
and ``nn.ChannelShuffle`` (PyTorch's ``nn.modules.channelshuffle``)."""

from __future__ import annotations

from difflab.nn import functional as F
from difflab.nn.modules.module import Module
from difflab.tensor import Tensor

__all__ = ["ChannelShuffle", "PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    """(N, C·r², H, W) -> (N, C, H·r, W·r) (sub-pixel upsampling, Shi et al.).

    Parameters
    ----------
    upscale_factor : int
        :math:`r`.

    Shape
    -----
    - Input: :math:`(*, C r^2, H, W)`.
    - Output: :math:`(*, C, H r, W r)`.

    Raises
    ------
    RuntimeError
        When called on an input whose channels are not divisible by :math:`r^2`.

    See Also
    --------
    PixelUnshuffle, difflab.nn.functional.pixel_shuffle

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.PixelShuffle(3)(dl.randn(1, 9, 4, 4)).shape
    difflab.Size([1, 1, 12, 12])
    """

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = int(upscale_factor)

    def forward(self, x: Tensor) -> Tensor:
        return F.pixel_shuffle(x, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(N, C, H·r, W·r) -> (N, C·r², H, W), the inverse of :class:`PixelShuffle`.

    Parameters
    ----------
    downscale_factor : int
        :math:`r`.

    Shape
    -----
    - Input: :math:`(*, C, H r, W r)`.
    - Output: :math:`(*, C r^2, H, W)`.

    Raises
    ------
    RuntimeError
        When called on an input whose height or width is not divisible by :math:`r`.

    See Also
    --------
    PixelShuffle, difflab.nn.functional.pixel_unshuffle

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.PixelUnshuffle(2)(dl.randn(1, 1, 4, 4)).shape
    difflab.Size([1, 4, 2, 2])
    """

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = int(downscale_factor)

    def forward(self, x: Tensor) -> Tensor:
        return F.pixel_unshuffle(x, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    r"""Interleave the channels of ``groups`` groups (ShuffleNet's shuffle).

    Parameters
    ----------
    groups : int
        :math:`g`, which must divide the input's channels.

    Shape
    -----
    - Input: :math:`(N, C, *)`, at least 3-D.
    - Output: the same shape, channel :math:`i \cdot (C/g) + k` moved to :math:`k g + i`.

    Raises
    ------
    RuntimeError
        When called on an input of fewer than 3 dimensions, or whose channels ``groups``
        does not divide (or ``groups`` is not positive).

    See Also
    --------
    PixelShuffle, difflab.nn.functional.channel_shuffle

    Examples
    --------
    >>> import difflab as dl
    >>> shuffle = dl.nn.ChannelShuffle(3)
    >>> shuffle
    ChannelShuffle(groups=3)
    >>> shuffle(dl.arange(6.0).reshape(1, 6, 1)).flatten().tolist()
    [0.0, 2.0, 4.0, 1.0, 3.0, 5.0]
    """

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, x: Tensor) -> Tensor:
        return F.channel_shuffle(x, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
