r"""Weight averaging: stochastic weight averaging (SWA) and exponential moving averages (EMA).

SWA (Izmailov et al., 2018) averages the weights that SGD visits late in training,
:math:`\bar w_n = \bar w_{n-1} + (w - \bar w_{n-1}) / n`, at a constant or cyclic
learning rate (:class:`SWALR`); the average lies in a flatter region of the loss and
generalizes better.  An EMA keeps :math:`\bar w \leftarrow d\,\bar w + (1 - d)\,w`
instead.  :class:`AveragedModel` holds the average as a copy of the model;
:func:`update_bn` recomputes its BatchNorm statistics, which an average of weights
does not average.  As in PyTorch::

    swa_model = AveragedModel(model)
    swa_scheduler = SWALR(optimizer, swa_lr=0.05)
    for epoch in range(epochs):
        train_one_epoch(model, optimizer)
        if epoch >= swa_start:
            swa_model.update_parameters(model)
            swa_scheduler.step()
    update_bn(loader, swa_model)

(This module imports ``nn``: the optimizers and the modules share one layer of the
package, and ``nn`` never imports ``optim``.)
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Iterable
from typing import Any

from difflab.autograd.grad_mode import no_grad
from difflab.creation import tensor
from difflab.dtypes import int64
from difflab.functions_math import lerp
from difflab.nn.modules.layers import _BatchNorm
from difflab.nn.modules.module import Module
from difflab.optim.lr_scheduler import LRScheduler, _per_group
from difflab.optim.optimizer import Optimizer
from difflab.tensor import Tensor

__all__ = ["SWALR", "AveragedModel", "get_ema_avg_fn", "get_ema_multi_avg_fn",
           "get_swa_avg_fn", "get_swa_multi_avg_fn", "update_bn"]


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable:
    r"""The EMA update of many tensors at once, in place.

    :math:`\bar w \leftarrow d\,\bar w + (1-d)\,w` for each pair.  For
    :class:`AveragedModel`'s ``multi_avg_fn``: called as ``fn(averaged_list, current_list,
    n_averaged)``, it updates each averaged tensor in place (a linear interpolation
    towards the current one by :math:`1 - d`), outside the tape.

    Parameters
    ----------
    decay : float, default 0.999
        :math:`d`, the weight of the past.

    Returns
    -------
    callable
        ``fn(averaged_list, current_list, n_averaged) -> None``.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.optim.swa_utils import get_ema_multi_avg_fn
    >>> averaged = [dl.tensor([0.0, 10.0])]
    >>> get_ema_multi_avg_fn(0.9)(averaged, [dl.tensor([1.0, 0.0])], 1)
    >>> averaged
    [tensor([0.1, 9. ])]
    """
    def ema_update(ema_param_list: list, current_param_list: list, _: Any) -> None:
        with no_grad():
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                if p_ema.is_floating_point() or p_ema.is_complex():
                    p_ema.copy_(lerp(p_ema, p_model, 1 - decay))
                else:
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn() -> Callable:
    r"""The running mean of many tensors at once, in place.

    :math:`\bar w \leftarrow \bar w + (w - \bar w) / (n + 1)` for each pair.

    Returns
    -------
    callable
        ``fn(averaged_list, current_list, n_averaged) -> None``, ``n_averaged`` the
        number of models averaged so far.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.optim.swa_utils import get_swa_multi_avg_fn
    >>> averaged = [dl.tensor([1.0, 3.0])]
    >>> get_swa_multi_avg_fn()(averaged, [dl.tensor([4.0, 0.0])], 2)
    >>> averaged
    [tensor([2., 2.])]
    """
    def swa_update(averaged_param_list: list, current_param_list: list, num_averaged: Any
                   ) -> None:
        with no_grad():
            for p_avg, p_model in zip(averaged_param_list, current_param_list):
                p_avg.copy_(p_avg + (p_model - p_avg) / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable:
    r"""The EMA of one tensor: :math:`d\,\bar w + (1 - d)\,w`.

    For :class:`AveragedModel`'s ``avg_fn``: called as ``fn(averaged, current,
    n_averaged)``, it returns the new average (outside the tape).

    Parameters
    ----------
    decay : float, default 0.999
        :math:`d`, the weight of the past.

    Returns
    -------
    callable
        ``fn(averaged, current, n_averaged) -> Tensor``.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.optim.swa_utils import get_ema_avg_fn
    >>> get_ema_avg_fn(0.5)(dl.tensor([0.0, 2.0]), dl.tensor([2.0, 2.0]), 3)
    tensor([1., 2.])
    """
    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn() -> Callable:
    r"""The running mean of one tensor: :math:`\bar w + (w - \bar w) / (n + 1)`.

    Returns
    -------
    callable
        ``fn(averaged, current, n_averaged) -> Tensor``, ``n_averaged`` the number of
        models averaged so far.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.optim.swa_utils import get_swa_avg_fn
    >>> get_swa_avg_fn()(dl.tensor([1.0]), dl.tensor([4.0]), 2)
    tensor([2.])
    """
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    r"""A copy of a model that holds the average of its weights over training.

    It deep-copies ``model`` (as ``self.module``) and a buffer ``n_averaged`` (how many
    models it has averaged, 0 at first); each :meth:`update_parameters` folds the
    model's current parameters into the average, by default the running mean
    :math:`\bar w_{n+1} = \bar w_n + (w - \bar w_n)/(n + 1)` (the first update copies).
    Calling it calls the averaged copy.  Buffers (BatchNorm's statistics) are copied
    from the model unless ``use_buffers=True`` averages them too; after training,
    :func:`update_bn` recomputes them for the averaged weights.  The state dict holds
    ``n_averaged`` and ``module.<...>``.

    Parameters
    ----------
    model : Module
        The model to average.
    device : str or difflab.device, optional
        Keep the average there.
    avg_fn : callable, optional
        ``avg_fn(averaged, current, n_averaged) -> Tensor`` for each parameter
        (:func:`get_ema_avg_fn` for an EMA); by default the running mean.
    multi_avg_fn : callable, optional
        ``multi_avg_fn(averaged_list, current_list, n_averaged)`` updating in place
        (:func:`get_ema_multi_avg_fn`); at most one of ``avg_fn`` and ``multi_avg_fn``.
    use_buffers : bool, default False
        Average the buffers with the parameters (instead of copying them).

    Raises
    ------
    ValueError
        If both ``avg_fn`` and ``multi_avg_fn`` are given.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> from difflab.optim.swa_utils import AveragedModel
    >>> model = nn.Linear(1, 1, bias=False)
    >>> swa = AveragedModel(model)
    >>> for value in (1.0, 2.0, 6.0):
    ...     _ = model.weight.data.fill_(value)
    ...     swa.update_parameters(model)
    >>> swa.module.weight.item(), swa.n_averaged.item(), list(swa.state_dict())
    (3.0, 3, ['n_averaged', 'module.weight'])
    """

    def __init__(self, model: Module, device: Any = None, avg_fn: Callable | None = None,
                 multi_avg_fn: Callable | None = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise ValueError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The averaged copy's output: ``self.module(*args, **kwargs)``."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current parameters (and buffers, with ``use_buffers``) into the
        average, and count it in ``n_averaged``.

        Parameters
        ----------
        model : Module
            The model being trained (the same architecture as the average).

        Returns
        -------
        None

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> from difflab.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
        >>> model = nn.Linear(1, 1, bias=False)
        >>> ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.5))
        >>> for value in (4.0, 0.0):
        ...     _ = model.weight.data.fill_(value)
        ...     ema.update_parameters(model)
        >>> ema.module.weight.item()
        2.0
        """
        if self.use_buffers:
            mine: Iterable = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs: Iterable = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.parameters(), model.parameters()
        averaged, current = [], []
        first = self.n_averaged.item() == 0
        with no_grad():
            for p_averaged, p_model in zip(mine, theirs):
                p_model_ = p_model.detach().to(p_averaged.device)
                averaged.append(p_averaged.detach())
                current.append(p_model_)
                if first:
                    p_averaged.detach().copy_(p_model_)
            if not first:
                n = self.n_averaged
                if self.avg_fn is not None:
                    for p_averaged, p_model in zip(averaged, current):
                        p_averaged.copy_(self.avg_fn(p_averaged, p_model, n))
                else:
                    (self.multi_avg_fn or get_swa_multi_avg_fn())(averaged, current, n)
            if not self.use_buffers:  # the buffers follow the model's
                for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                    b_swa.detach().copy_(b_model.detach().to(b_swa.device))
            self.n_averaged += 1


def update_bn(loader: Iterable, model: Module, device: Any = None) -> None:
    """Recompute the BatchNorm running statistics of ``model`` over one pass of ``loader``.

    Averaged weights have no statistics of their own: each ``BatchNorm`` layer's running
    mean and variance are reset, then accumulated as a plain (cumulative) average over
    every batch (``momentum=None`` for the pass), in training mode and without
    gradients; the model's mode and momenta are restored afterwards.  A model without
    BatchNorm is left alone.

    Parameters
    ----------
    loader : iterable
        Batches: tensors, or tuples/lists whose first element is the input.
    model : Module
        The model (an :class:`AveragedModel` too).
    device : str or difflab.device, optional
        Move each input there first.

    Returns
    -------
    None

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> from difflab.optim.swa_utils import update_bn
    >>> model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    >>> loader = [(dl.ones(4, 2), dl.zeros(4)), (dl.ones(4, 2), dl.zeros(4))]
    >>> update_bn(loader, model)
    >>> model[1].num_batches_tracked.item(), model.training
    (2, True)
    """
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    r"""Anneal each group's rate to a constant ``swa_lr`` over ``anneal_epochs``, then hold it.

    At step :math:`s`, with :math:`t = \min(1, s / \text{anneal\_epochs})` and
    :math:`\alpha(t) = (1 - \cos \pi t)/2` (``"cos"``) or :math:`t` (``"linear"``), the
    rate is :math:`\alpha(t)\,\text{swa\_lr} + (1 - \alpha(t))\,\eta_0`, where
    :math:`\eta_0` is the rate the annealing started from (recovered from the current
    rate, so SWALR can take over from another schedule).  ``anneal_epochs=0`` jumps to
    ``swa_lr`` at the first step.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer.
    swa_lr : float or list of float
        The rate to reach, for all groups or one per group.
    anneal_epochs : int, default 10
        Steps of annealing (non-negative).
    anneal_strategy : {"cos", "linear"}, default "cos"
        The shape of :math:`\alpha`.
    last_epoch : int, default -1
        As :class:`~difflab.optim.lr_scheduler.LRScheduler`.

    Raises
    ------
    ValueError
        On an unknown strategy, a negative or non-integer ``anneal_epochs``, or a list of
        ``swa_lr`` of another length than the groups.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn, optim
    >>> from difflab.optim.swa_utils import SWALR
    >>> opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=1.0)
    >>> sched = SWALR(opt, swa_lr=0.1, anneal_epochs=2, anneal_strategy="linear")
    >>> rates = []
    >>> for _ in range(3):
    ...     opt.step(); sched.step(); rates.append(round(sched.get_last_lr()[0], 4))
    >>> rates
    [0.55, 0.1, 0.1]
    """

    def __init__(self, optimizer: Optimizer, swa_lr: float | list, anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        for lr, group in zip(_per_group(swa_lr, optimizer.param_groups, "swa_lr"),
                             optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must by one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else (
            self._linear_anneal)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        self._step_count = 0
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        """The rate the annealing started from, given the rate ``lr`` at weight ``alpha``."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def step(self) -> None:
        """Advance one step and set every group's ``lr`` (see the class).

        Returns
        -------
        None

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn, optim
        >>> from difflab.optim.swa_utils import SWALR
        >>> opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=1.0)
        >>> sched = SWALR(opt, swa_lr=0.5, anneal_epochs=0)
        >>> opt.step(); sched.step()
        >>> opt.param_groups[0]["lr"]
        0.5
        """
        self._step_count += 1
        super().step()

    def get_lr(self) -> list[float]:
        """The rates of the current step (see the class).

        Returns
        -------
        list of float
            One per parameter group.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn, optim
        >>> from difflab.optim.swa_utils import SWALR
        >>> opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=1.0)
        >>> SWALR(opt, swa_lr=0.5).get_lr()
        [1.0]
        """
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        groups = self.optimizer.param_groups
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha) for group, lr in zip(groups, prev_lrs)]
