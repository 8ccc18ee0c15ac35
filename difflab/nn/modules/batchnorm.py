"""``torch.nn.modules.batchnorm``'s layers, at PyTorch's path (1-D and 2-D defined in
:mod:`.layers`)."""

from difflab.nn.modules.layers import BatchNorm1d, BatchNorm2d, _BatchNorm

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]


class BatchNorm3d(_BatchNorm):
    r"""Batch normalisation of :math:`(N, C, D, H, W)` volumes, per channel :math:`C`.

    .. math::
        y = \frac{x - \mathrm E[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} \cdot \gamma + \beta

    The mean and variance are taken per channel (dimension 1) over the batch and
    the three spatial dimensions, as :class:`BatchNorm2d` does over two: the
    batch's in training mode (the running estimates updated with ``momentum``,
    the variance unbiased there), the running estimates in evaluation mode.

    Parameters
    ----------
    num_features : int
        :math:`C`, the number of channels.
    eps : float, default 1e-5
        Added to the variance for numerical stability.
    momentum : float or None, default 0.1
        The weight of the new batch in the running estimates; ``None`` keeps a
        cumulative average.
    affine : bool, default True
        Learn :math:`\gamma` and :math:`\beta`.
    track_running_stats : bool, default True
        Keep running estimates; ``False`` uses the batch's statistics in both modes.
    device, dtype : optional
        Where the parameters and buffers live and their dtype.

    Attributes
    ----------
    weight, bias : Parameter or None
        :math:`\gamma` (ones) and :math:`\beta` (zeros), shape :math:`(C,)`.
    running_mean, running_var : Tensor or None
        Buffers of shape :math:`(C,)`, initialised to zeros and ones.
    num_batches_tracked : Tensor or None
        A 0-d int64 buffer, the number of training batches seen.

    Shape
    -----
    - Input: :math:`(N, C, D, H, W)`.
    - Output: the same shape.

    Raises
    ------
    ValueError
        When called on an input that is not 5-D, whose dimension 1 is not
        ``num_features``, or (training) with a single value per channel.

    See Also
    --------
    BatchNorm2d, InstanceNorm3d, difflab.nn.functional.batch_norm

    Examples
    --------
    >>> import difflab as dl
    >>> bn = dl.nn.BatchNorm3d(2)
    >>> x = dl.arange(16.0).reshape(1, 2, 2, 2, 2)
    >>> y = bn(x)
    >>> y.shape, [round(v, 4) for v in y[0, 0].flatten().tolist()[:2]]
    (difflab.Size([1, 2, 2, 2, 2]), [-1.5275, -1.0911])
    >>> bn.running_mean
    tensor([0.35, 1.15])
    """

    _expected_ndim = (5,)
