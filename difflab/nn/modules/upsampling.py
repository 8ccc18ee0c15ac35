"""``nn.Upsample`` and its two fixed-mode forms at PyTorch's path ``nn.modules.upsampling``."""

from __future__ import annotations

from typing import Any

from difflab.nn import functional as F
from difflab.nn.modules.module import Module
from difflab.tensor import Tensor

__all__ = ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]


class Upsample(Module):
    r"""Resize by ``size`` or ``scale_factor`` (see :func:`difflab.nn.functional.interpolate`).

    Parameters
    ----------
    size : int or tuple, optional
        The output's spatial size.
    scale_factor : float or tuple, optional
        Or the factor of each spatial size.
    mode : {'nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear', 'area'}
        As in :func:`difflab.nn.functional.interpolate` (default 'nearest').
    align_corners : bool, optional
        Linear and bicubic modes: map the corner pixels' centres onto each other.
    recompute_scale_factor : bool, optional
        Compute the source positions from the output size instead of the factor.

    Shape
    -----
    - Input: :math:`(N, C, L)`, :math:`(N, C, H, W)` or :math:`(N, C, D, H, W)`.
    - Output: the same with the spatial sizes changed.

    Notes
    -----
    .. math::
        L_{out} = \lfloor L_{in} \cdot \text{scale\_factor} \rfloor \quad \text{(or the given size)}

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.Upsample(scale_factor=2, mode="bilinear")(dl.randn(1, 3, 4, 5)).shape
    difflab.Size([1, 3, 8, 10])
    >>> up = dl.nn.Upsample(size=(1, 3), mode="bicubic", align_corners=True)
    >>> up(dl.tensor([[[[0.0, 2.0]]]]))[0, 0].tolist()
    [[0.0, 1.0, 2.0]]
    """

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def forward(self, x: Tensor) -> Tensor:
        return F.interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners,
                             self.recompute_scale_factor)

    def extra_repr(self) -> str:
        what = f"scale_factor={self.scale_factor}" if self.size is None else f"size={self.size}"
        return f"{what}, mode='{self.mode}'"


class UpsamplingNearest2d(Upsample):
    r"""Nearest-neighbour upsampling of (N, C, H, W) images: ``Upsample(mode='nearest')``.

    Parameters
    ----------
    size : int or tuple of 2 ints, optional
        The output's :math:`(H, W)`.
    scale_factor : float or tuple of 2, optional
        Or the factor of each side.

    Shape
    -----
    - Input: :math:`(N, C, H_{in}, W_{in})`.
    - Output: :math:`(N, C, H_{out}, W_{out})`, the given size or
      :math:`\lfloor H_{in} \cdot \text{scale\_factor} \rfloor` (and :math:`W` alike).

    Raises
    ------
    ValueError
        When called, as :func:`difflab.nn.functional.interpolate` does (neither or both
        of ``size`` and ``scale_factor``).

    See Also
    --------
    Upsample, UpsamplingBilinear2d, difflab.nn.functional.interpolate

    Examples
    --------
    >>> import difflab as dl
    >>> up = dl.nn.UpsamplingNearest2d(scale_factor=2)
    >>> up
    UpsamplingNearest2d(scale_factor=2, mode='nearest')
    >>> up(dl.tensor([[[[1.0, 2.0]]]])).tolist()
    [[[[1.0, 1.0, 2.0, 2.0], [1.0, 1.0, 2.0, 2.0]]]]
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    r"""Bilinear upsampling of (N, C, H, W) images with the corners aligned.

    ``Upsample(mode='bilinear', align_corners=True)``: the corner pixels of the input
    and of the output coincide, and the others are spread evenly between them.

    Parameters
    ----------
    size : int or tuple of 2 ints, optional
        The output's :math:`(H, W)`.
    scale_factor : float or tuple of 2, optional
        Or the factor of each side.

    Shape
    -----
    - Input: :math:`(N, C, H_{in}, W_{in})`.
    - Output: :math:`(N, C, H_{out}, W_{out})`.

    Raises
    ------
    ValueError
        When called, as :func:`difflab.nn.functional.interpolate` does.

    See Also
    --------
    Upsample, UpsamplingNearest2d, difflab.nn.functional.interpolate

    Examples
    --------
    >>> import difflab as dl
    >>> up = dl.nn.UpsamplingBilinear2d(size=(1, 4))
    >>> up
    UpsamplingBilinear2d(size=(1, 4), mode='bilinear')
    >>> up(dl.tensor([[[[0.0, 3.0]]]])).flatten().tolist()
    [0.0, 1.0, 2.0, 3.0]
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
