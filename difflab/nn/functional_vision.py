"""Vision functions beyond ``interpolate`` and ``pixel_shuffle``: ShuffleNet's channel shuffle
and PyTorch's deprecated names of ``interpolate`` (``upsample``, ``upsample_nearest``,
``upsample_bilinear``).  Composites of reshapes and of :func:`interpolate`: no rule of their own.
"""

from __future__ import annotations

from typing import Any

from difflab.nn.functional_core import _check_input
from difflab.nn.functional_sampling import interpolate
from difflab.tensor import Tensor
from difflab.tensor_arguments import integer

__all__ = ["channel_shuffle", "upsample", "upsample_bilinear", "upsample_nearest"]


def channel_shuffle(input: Tensor, groups: int) -> Tensor:  # noqa: A002
    r"""Interleave the channels of ``groups`` groups (ShuffleNet's channel shuffle).

    Channel :math:`i \cdot (C/g) + k` of :math:`(N, C, *)` moves to :math:`k g + i`.  The
    channels, read as a :math:`(g, C/g)` grid, are transposed to :math:`(C/g, g)`: a
    reshape, a transpose and a reshape, so the gradient is the inverse shuffle.

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, *)`, at least 3-D.
    groups : int
        :math:`g`, a positive divisor of :math:`C`.

    Returns
    -------
    Tensor
        The input's shape, its channels reordered.

    Raises
    ------
    RuntimeError
        If the input has fewer than 3 dimensions, ``groups`` is not positive, or it does
        not divide the channels (PyTorch's errors).

    See Also
    --------
    difflab.nn.functional.pixel_shuffle, difflab.nn.ChannelShuffle

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.arange(6.0).reshape(1, 6, 1)
    >>> dl.nn.functional.channel_shuffle(x, 2).flatten().tolist()
    [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    """
    x = _check_input("channel_shuffle", input)
    if x.ndim < 3:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(x.shape)}")
    groups = integer(groups, "channel_shuffle", "groups")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value "
                           f"of groups:{groups}")
    n, c, *rest = x.shape
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    grid = x.reshape(n, groups, c // groups, *rest)
    return grid.transpose(1, 2).reshape(n, c, *rest)


def _deprecated_upsample(name: str) -> None:
    import warnings

    warnings.warn(f"nn.functional.{name} is deprecated. Use nn.functional.interpolate "
                  "instead.", stacklevel=3)


def upsample(input: Tensor, size: Any = None, scale_factor: Any = None,  # noqa: A002
             mode: str = "nearest", align_corners: bool | None = None) -> Tensor:
    """Resize by ``size`` or ``scale_factor``: PyTorch's deprecated name of :func:`interpolate`.

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, L)`, :math:`(N, C, H, W)` or :math:`(N, C, D, H, W)`.
    size : int or tuple, optional
        The output's spatial size.
    scale_factor : float or tuple, optional
        Or the factor of each spatial size.
    mode : str, default 'nearest'
        As in :func:`interpolate`.
    align_corners : bool, optional
        As in :func:`interpolate`.

    Returns
    -------
    Tensor
        The resized input.

    Raises
    ------
    ValueError
        As :func:`interpolate` does.

    Warns
    -----
    UserWarning
        That the name is deprecated (as PyTorch warns).

    See Also
    --------
    interpolate, upsample_nearest, upsample_bilinear

    Examples
    --------
    >>> import warnings
    >>> import difflab as dl
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     dl.nn.functional.upsample(dl.ones(1, 1, 2, 2), scale_factor=2).shape
    difflab.Size([1, 1, 4, 4])
    """
    _deprecated_upsample("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None  # noqa: A002
                     ) -> Tensor:
    """Nearest-neighbour upsampling: :func:`interpolate` with ``mode='nearest'`` (deprecated).

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, *)` with 1 to 3 spatial dimensions.
    size : int or tuple, optional
        The output's spatial size.
    scale_factor : int or tuple, optional
        Or the factor of each spatial size.

    Returns
    -------
    Tensor
        The resized input.

    Raises
    ------
    ValueError
        As :func:`interpolate` does.

    Warns
    -----
    UserWarning
        That the name is deprecated.

    See Also
    --------
    interpolate, difflab.nn.UpsamplingNearest2d

    Examples
    --------
    >>> import warnings
    >>> import difflab as dl
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     dl.nn.functional.upsample_nearest(dl.tensor([[[1.0, 2.0]]]), scale_factor=2).tolist()
    [[[1.0, 1.0, 2.0, 2.0]]]
    """
    _deprecated_upsample("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None  # noqa: A002
                      ) -> Tensor:
    """Bilinear upsampling with the corners aligned (deprecated; :func:`interpolate`).

    The same as ``interpolate(input, size, scale_factor, mode='bilinear',
    align_corners=True)``, as PyTorch's.

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, H, W)`.
    size : int or tuple of 2 ints, optional
        The output's :math:`(H, W)`.
    scale_factor : float or tuple of 2, optional
        Or the factor of each side.

    Returns
    -------
    Tensor
        The resized input.

    Raises
    ------
    ValueError
        As :func:`interpolate` does.

    Warns
    -----
    UserWarning
        That the name is deprecated.

    See Also
    --------
    interpolate, difflab.nn.UpsamplingBilinear2d

    Examples
    --------
    >>> import warnings
    >>> import difflab as dl
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     y = dl.nn.functional.upsample_bilinear(dl.tensor([[[[0.0, 3.0]]]]), size=(1, 4))
    >>> y.flatten().tolist()
    [0.0, 1.0, 2.0, 3.0]
    """
    _deprecated_upsample("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
