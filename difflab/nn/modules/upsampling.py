"""``nn.Upsample`` at PyTorch's path ``nn.modules.upsampling``."""

from __future__ import annotations

from typing import Any

from difflab.nn import functional as F
from difflab.nn.modules.module import Module
from difflab.tensor import Tensor

__all__ = ["Upsample"]


class Upsample(Module):
    r"""Resize by ``size`` or ``scale_factor`` (see :func:`difflab.nn.functional.interpolate`).

    Parameters
    ----------
    size : int or tuple, optional
    scale_factor : float or tuple, optional
    mode : {'nearest', 'linear', 'bilinear', 'trilinear'}
    align_corners : bool, optional
    recompute_scale_factor : bool, optional

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
