"""Instance normalisation at PyTorch's path ``nn.modules.instancenorm``."""

from __future__ import annotations

from typing import Any

from difflab.nn import functional as F
from difflab.nn.modules.layers import _NormBase
from difflab.tensor import Tensor

__all__ = ["InstanceNorm1d", "InstanceNorm2d"]


class _InstanceNorm(_NormBase):
    _spatial = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        # (PyTorch's defaults for instance norm: no γ, β and no running statistics)
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)

    def forward(self, x: Tensor) -> Tensor:
        name = type(self).__name__
        if x.ndim not in (self._spatial + 1, self._spatial + 2):
            raise ValueError(f"{name} expects a {self._spatial + 1}-D (unbatched) or "
                             f"{self._spatial + 2}-D input, got shape {tuple(x.shape)}")
        unbatched = x.ndim == self._spatial + 1
        x = x.unsqueeze(0) if unbatched else x
        if x.shape[1] != self.num_features and self.affine:
            raise ValueError(f"{name} expected {self.num_features} channels, got input of "
                             f"shape {tuple(x.shape)}")
        use_input_stats = self.training or not self.track_running_stats
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              use_input_stats, self.momentum, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    r"""Normalise each channel of each (N, C, L) sample over L (style transfer's norm).

    Parameters
    ----------
    num_features : int
        :math:`C`.
    eps : float, default 1e-5
        Added to the variance.
    momentum : float, default 0.1
        The weight of the batch in the running averages.
    affine : bool, default False
        Learn :math:`\gamma, \beta` of shape :math:`(C,)` (ones and zeros at first).
    track_running_stats : bool, default False
        Keep running averages and use them in evaluation.
    device, dtype : optional
        Where the parameters live and their dtype.

    Shape
    -----
    - Input: :math:`(N, C, L)` or :math:`(C, L)`.
    - Output: the same shape.

    Raises
    ------
    ValueError
        When called on an input that is not 2-D or 3-D, or (with ``affine``) with
        other than :math:`C` channels.

    See Also
    --------
    InstanceNorm2d, BatchNorm1d, difflab.nn.functional.instance_norm

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.InstanceNorm1d(3)(dl.randn(2, 3, 10)).shape
    difflab.Size([2, 3, 10])
    """


class InstanceNorm2d(_InstanceNorm):
    r"""Normalise each channel of each (N, C, H, W) sample over H and W.

    Parameters
    ----------
    num_features : int
        :math:`C`.
    eps : float, default 1e-5
        Added to the variance.
    momentum : float, default 0.1
        The weight of the batch in the running averages.
    affine : bool, default False
        Learn :math:`\gamma, \beta` of shape :math:`(C,)` (ones and zeros at first).
    track_running_stats : bool, default False
        Keep running averages and use them in evaluation.
    device, dtype : optional
        Where the parameters live and their dtype.

    Shape
    -----
    - Input: :math:`(N, C, H, W)` or :math:`(C, H, W)`.
    - Output: the same shape.

    Raises
    ------
    ValueError
        When called on an input that is not 3-D or 4-D, or (with ``affine``) with
        other than :math:`C` channels.

    See Also
    --------
    InstanceNorm1d, GroupNorm, difflab.nn.functional.instance_norm

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.InstanceNorm2d(3, affine=True)(dl.randn(2, 3, 4, 4)).shape
    difflab.Size([2, 3, 4, 4])
    """

    _spatial = 2
