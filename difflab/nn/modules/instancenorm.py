"""Instance normalisation at PyTorch's path ``nn.modules.instancenorm``."""

from __future__ import annotations

import warnings
from typing import Any

from difflab.nn import functional as F
from difflab.nn.modules.layers import _NormBase
from difflab.tensor import Tensor

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


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
        self._check_channels(x)
        unbatched = x.ndim == self._spatial + 1
        x = x.unsqueeze(0) if unbatched else x
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
        # (momentum None is 0 for PyTorch's instance norm: the running averages stay)
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats,
                              self.momentum if self.momentum is not None else 0.0, self.eps)
        return out.squeeze(0) if unbatched else out

    def _check_channels(self, x: Tensor) -> None:
        """PyTorch's rule: with ``affine`` the channels must be ``num_features`` (γ and β
        have that many); without, ``num_features`` is not used and a mismatch only warns
        (and then fails in ``F.instance_norm`` if running statistics are tracked)."""
        dim = x.ndim - (self._spatial + 1)  # (0 unbatched, 1 batched)
        channels = x.shape[dim]
        if channels == self.num_features:
            return
        if self.affine:
            raise ValueError(f"expected input's size at dim={dim} to match num_features "
                             f"({self.num_features}), but got: {channels}.")
        # (the message begins as PyTorch's: warning filters written for it match it)
        warnings.warn(f"input's size at dim={dim} does not match num_features. You can "
                      f"silence this warning by not passing in num_features, which is not "
                      f"used because affine=False ({type(self).__name__}({self.num_features}) "
                      f"got {channels} channels)", stacklevel=4)


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
    RuntimeError
        With ``track_running_stats`` and other than :math:`C` channels (the running
        statistics have :math:`C` entries).

    Warns
    -----
    UserWarning
        Without ``affine``, for an input with other than :math:`C` channels
        (``num_features`` is then unused, as in PyTorch).

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
    RuntimeError
        With ``track_running_stats`` and other than :math:`C` channels (the running
        statistics have :math:`C` entries).

    Warns
    -----
    UserWarning
        Without ``affine``, for an input with other than :math:`C` channels
        (``num_features`` is then unused, as in PyTorch).

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


class InstanceNorm3d(_InstanceNorm):
    r"""Normalise each channel of each (N, C, D, H, W) sample over D, H and W.

    Parameters
    ----------
    num_features : int
        :math:`C`.
    eps : float, default 1e-5
        Added to the variance.
    momentum : float or None, default 0.1
        The weight of the batch in the running averages (None: 0, as PyTorch).
    affine : bool, default False
        Learn :math:`\gamma, \beta` of shape :math:`(C,)` (ones and zeros at first).
    track_running_stats : bool, default False
        Keep running averages and use them in evaluation.
    device, dtype : optional
        Where the parameters live and their dtype.

    Shape
    -----
    - Input: :math:`(N, C, D, H, W)` or :math:`(C, D, H, W)`.
    - Output: the same shape.

    Raises
    ------
    ValueError
        When called on an input that is not 4-D or 5-D, or (with ``affine``) with
        other than :math:`C` channels.
    RuntimeError
        With ``track_running_stats`` and other than :math:`C` channels (the running
        statistics have :math:`C` entries).

    Warns
    -----
    UserWarning
        Without ``affine``, for an input with other than :math:`C` channels
        (``num_features`` is then unused, as in PyTorch).

    See Also
    --------
    InstanceNorm2d, GroupNorm, difflab.nn.functional.instance_norm

    Notes
    -----
    .. math::
        y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} \gamma + \beta

    with the mean and (biased) variance over D, H and W of each channel of each sample.

    Examples
    --------
    >>> import difflab as dl
    >>> norm = dl.nn.InstanceNorm3d(2)
    >>> y = norm(dl.randn(3, 2, 4, 5, 6))
    >>> y.shape
    difflab.Size([3, 2, 4, 5, 6])
    >>> bool(y.mean(dim=(2, 3, 4)).abs().max() < 1e-5)
    True
    """

    _spatial = 3
