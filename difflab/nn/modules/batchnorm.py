"""``torch.nn.modules.batchnorm``'s layers, at PyTorch's path (1-D and 2-D defined in
:mod:`.layers`), and ``SyncBatchNorm``, whose batch statistics are all ranks' together."""

from __future__ import annotations

from typing import Any

import numpy as np

from difflab import distributed as dist
from difflab.autograd.function import Function
from difflab.autograd.grad_mode import no_grad
from difflab.nn.modules.layers import BatchNorm1d, BatchNorm2d, _BatchNorm
from difflab.nn.modules.module import Module
from difflab.tensor import Tensor

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"]



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


class _AllReducedSum(Function):
    """The sum over the group's ranks, differentiable: the backward sums the gradients
    over the ranks too (each rank's result depends on every rank's input)."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, group: Any) -> Tensor:
        ctx.group = group
        total = x.detach().clone()
        dist.all_reduce(total, group=group)
        return total

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple:
        total = grad.detach().clone()
        dist.all_reduce(total, group=ctx.group)
        return total, None


class SyncBatchNorm(_BatchNorm):
    r"""Batch normalisation whose statistics are taken over every rank's batch together.

    In data-parallel training (:mod:`difflab.distributed`) each rank sees its share
    of the batch; a :class:`BatchNorm2d` there normalises with the statistics of
    that share only.  ``SyncBatchNorm`` all-reduces the per-channel sums over the
    ranks in training mode, so every rank normalises with the mean and variance of
    the whole batch (the running estimates too), as one process would; the backward
    all-reduces the gradient sums the same way.  Any input :math:`(N, C, *)`; the
    ranks' batch sizes may differ.  Where nothing is to be synchronised (evaluation
    mode, no process group initialised, or a group of one process) it is the plain
    batch normalisation, as PyTorch's.

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
    process_group : ProcessGroup, optional
        The ranks to synchronise over (default: all of them, the default group).
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
    process_group : ProcessGroup or None
        The group given.

    Shape
    -----
    - Input: :math:`(N, C, *)`, at least 2-D.
    - Output: the same shape.

    Raises
    ------
    ValueError
        When called on an input with fewer than 2 dimensions or no channels (PyTorch's
        messages), whose dimension 1 is not ``num_features``, or (training) with a
        single value per channel over all ranks.
    RuntimeError
        From the collectives, when the ranks' inputs disagree in their channels or
        dtype (every rank raises).

    See Also
    --------
    BatchNorm2d : the same without synchronisation.
    difflab.nn.parallel.DistributedDataParallel : the data-parallel wrapper it goes with.
    difflab.distributed.all_reduce : the collective it uses.

    Notes
    -----
    With :math:`n = \sum_r n_r` values per channel over the ranks :math:`r`:

    .. math::
        \mu = \frac{1}{n}\sum_r \sum_i x_{r,i}, \qquad
        \sigma^2 = \frac{1}{n}\sum_r \sum_i (x_{r,i} - \mu)^2, \qquad
        y = \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}}\,\gamma + \beta

    (two all-reduces, the sums then the squared deviations: no cancellation in
    :math:`E[x^2] - \mu^2`); the running variance is updated with the unbiased
    :math:`\sigma^2 n / (n - 1)`.  PyTorch synchronises on GPUs only (it raises for
    CPU tensors); difflab's collectives run on any device.

    Examples
    --------
    >>> import difflab as dl
    >>> bn = dl.nn.SyncBatchNorm(2)
    >>> x = dl.tensor([[1.0, 10.0], [3.0, 30.0]])
    >>> bn(x)                                  # no process group: a batch norm
    tensor([[-1., -1.],
            [ 1.,  1.]], grad_fn=<AddBackward0>)
    >>> bn.running_mean
    tensor([0.2, 2. ])

    A model's batch norms become synchronised ones, their state kept:

    >>> model = dl.nn.Sequential(dl.nn.Conv2d(1, 2, 3), dl.nn.BatchNorm2d(2), dl.nn.ReLU())
    >>> synced = dl.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    >>> type(synced[1]).__name__, synced[1].weight is model[1].weight
    ('SyncBatchNorm', True)
    """

    _expected_ndim = range(2, 33)  # (N, C, *): any input of at least 2 dimensions

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 process_group: Any = None, device: Any = None, dtype: Any = None) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats,
                         device=device, dtype=dtype)
        self.process_group = process_group

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim < 2:
            raise ValueError(f"expected at least 2D input (got {x.ndim}D input)")
        if x.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        if not self._synchronised():
            return super().forward(x)
        if x.shape[1] != self.num_features:
            raise ValueError(
                f"SyncBatchNorm expected {self.num_features} channels (num_features) in "
                f"dimension 1, got input of shape {tuple(x.shape)}")
        factor = self.momentum
        if self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # the cumulative average: 1 / batches seen
                factor = 1.0 / self.num_batches_tracked.to(np.float64)
        return self._normalise_over_ranks(x, factor)

    def _synchronised(self) -> bool:
        """Whether this call takes its statistics over several ranks (PyTorch's rule)."""
        use_batch = self.training or not self.track_running_stats
        return (use_batch and self.training and dist.is_initialized()
                and dist.get_world_size(self.process_group) > 1)

    def _normalise_over_ranks(self, x: Tensor, factor: Any) -> Tensor:
        from difflab import functions as fn

        c = x.shape[1]
        axes = (0,) + tuple(range(2, x.ndim))
        shape = (1, c) + (1,) * (x.ndim - 2)
        count = x.new_tensor([x.numel() // c if c else 0])
        sums = _AllReducedSum.apply(fn.cat([x.sum(dim=axes), count.to(x.dtype)]),
                                    self.process_group)
        n = int(sums[c].item())
        if n <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got "
                             f"{n} over all ranks (this rank's input: {tuple(x.shape)})")
        mean = sums[:c] / n
        centered = x - mean.reshape(shape)
        var = _AllReducedSum.apply((centered * centered).sum(dim=axes),
                                   self.process_group) / n
        out = centered / (var.reshape(shape) + self.eps).sqrt()
        if self.weight is not None:
            out = out * self.weight.reshape(shape)
        if self.bias is not None:
            out = out + self.bias.reshape(shape)
        if self.track_running_stats:
            with no_grad():
                self.running_mean.mul_(1.0 - factor)
                self.running_mean.add_(factor * mean.detach().to(self.running_mean.dtype))
                self.running_var.mul_(1.0 - factor)
                self.running_var.add_((factor * n / (n - 1)) * var.detach().to(
                    self.running_var.dtype))
        return out

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """Replace every batch norm in ``module`` by a :class:`SyncBatchNorm`, state kept.

        The new layers take the old ones' settings, parameters (the same
        :class:`~difflab.nn.Parameter` objects, so an optimizer made before still
        updates them), running statistics and ``training`` flag.  ``module`` itself is
        returned converted when it is a batch norm; otherwise its children are
        replaced in place.

        Parameters
        ----------
        module : Module
            A model holding :class:`BatchNorm1d`, :class:`BatchNorm2d` or
            :class:`BatchNorm3d` layers, or one of them.
        process_group : ProcessGroup, optional
            The group the new layers synchronise over (default: all ranks).

        Returns
        -------
        Module
            ``module`` with its batch norms replaced (a new :class:`SyncBatchNorm`
            when ``module`` is a batch norm itself).

        Examples
        --------
        >>> import difflab as dl
        >>> net = dl.nn.Sequential(dl.nn.Linear(3, 4), dl.nn.BatchNorm1d(4))
        >>> net = dl.nn.SyncBatchNorm.convert_sync_batchnorm(net)
        >>> net
        Sequential(
          (0): Linear(in_features=3, out_features=4, bias=True)
          (1): SyncBatchNorm(4, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)
        )
        """
        converted = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            converted = cls(module.num_features, module.eps, module.momentum, module.affine,
                            module.track_running_stats, process_group)
            if module.affine:
                converted.weight = module.weight
                converted.bias = module.bias
            converted.running_mean = module.running_mean
            converted.running_var = module.running_var
            converted.num_batches_tracked = module.num_batches_tracked
            converted.training = module.training
        for name, child in module.named_children():
            converted.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return converted
