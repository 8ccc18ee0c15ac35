r"""Learning-rate schedules: call ``scheduler.step()`` once per epoch, after ``optimizer.step()``.

Each scheduler sets ``group['lr']`` of every parameter group from the
group's initial rate η₀ and the epoch counter t:

* :class:`StepLR`: η₀ · γ^⌊t / step_size⌋;
* :class:`MultiStepLR`: η₀ · γ^(number of milestones ≤ t);
* :class:`ExponentialLR`: η₀ · γᵗ;
* :class:`CosineAnnealingLR`: η_min + (η₀ - η_min)(1 + cos(πt / T_max))/2;
* :class:`LambdaLR`: η₀ · λ(t);
* :class:`OneCycleLR` (call ``step()`` after every *batch*): up from η_max/div_factor
  to η_max, then down to η_max/(div_factor·final_div_factor), cosine or linear;
* :class:`ReduceLROnPlateau` (call ``step(metric)``): η · factor when the metric
  has not improved for ``patience`` epochs;
* :class:`MultiplicativeLR`, :class:`ConstantLR`, :class:`LinearLR` (warm-up),
  :class:`PolynomialLR`: η₀ times a factor of t;
* :class:`CosineAnnealingWarmRestarts` (SGDR) and :class:`CyclicLR` (per batch);
* :class:`ChainedScheduler` (the factors of several multiply) and
  :class:`SequentialLR` (one scheduler after another at milestones).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from difflab.optim.optimizer import Optimizer


class LRScheduler:
    r"""Base class of the epoch schedules: a subclass gives ``lr_at(base_lr, t)``.

    Construction records each group's initial rate (``group["initial_lr"]``) and
    takes the first step, to epoch :math:`t = 0`; every :meth:`step` then
    advances :math:`t` and sets ``group["lr"] = lr_at(initial_lr, t)`` in every
    parameter group.  Call ``scheduler.step()`` once per epoch, after
    ``optimizer.step()``.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose parameter groups' ``lr`` it sets.
    last_epoch : int, default -1
        The index of the last epoch when resuming (then every group must have an
        ``initial_lr``); -1 starts afresh.

    Attributes
    ----------
    base_lrs : list of float
        Each group's initial rate :math:`\eta_0` (``group["initial_lr"]``).
    last_epoch : int
        The epoch counter :math:`t` (0 after construction).

    Raises
    ------
    TypeError
        If ``optimizer`` is not an :class:`~difflab.optim.Optimizer`.
    KeyError
        If ``last_epoch != -1`` and a group has no ``initial_lr``.

    See Also
    --------
    StepLR, CosineAnnealingLR, LambdaLR, ReduceLROnPlateau

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn, optim
    >>> from difflab.optim import lr_scheduler
    >>> class Halving(lr_scheduler.LRScheduler):
    ...     def lr_at(self, base_lr, t):
    ...         return base_lr / 2 ** t
    >>> opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=0.1)
    >>> sched = Halving(opt)
    >>> opt.step(); sched.step()
    >>> sched.get_last_lr(), opt.param_groups[0]["lr"]
    ([0.05], 0.05)
    """

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            if last_epoch == -1:
                group.setdefault("initial_lr", group["lr"])
            elif "initial_lr" not in group:
                raise KeyError("param 'initial_lr' is not specified in param_groups when "
                               "resuming a scheduler (last_epoch != -1)")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()

    def lr_at(self, base_lr: float, t: int) -> float:
        r"""The rate at epoch ``t`` of a group with initial rate ``base_lr`` (subclasses).

        Parameters
        ----------
        base_lr : float
            The group's initial rate :math:`\eta_0`.
        t : int
            The epoch, from 0.

        Returns
        -------
        float
            The rate.

        Raises
        ------
        NotImplementedError
            On the base class.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn, optim
        >>> from difflab.optim import lr_scheduler
        >>> opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=0.1)
        >>> lr_scheduler.StepLR(opt, step_size=2, gamma=0.5).lr_at(0.1, 5)
        0.025
        """
        raise NotImplementedError

    def get_last_lr(self) -> list[float]:
        """The learning rates the last :meth:`step` set, one per parameter group.

        Returns
        -------
        list of float
            A copy (changing it changes nothing).

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn, optim
        >>> from difflab.optim import lr_scheduler
        >>> opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=0.1)
        >>> lr_scheduler.ExponentialLR(opt, gamma=0.5).get_last_lr()
        [0.1]
        """
        return list(self._last_lr)

    def get_lr(self) -> list[float]:
        """The rates at the current epoch ``last_epoch`` (what :meth:`LRScheduler.step` sets).

        Returns
        -------
        list of float
            ``[lr_at(base, last_epoch) for base in base_lrs]``.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn, optim
        >>> from difflab.optim import lr_scheduler
        >>> opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=0.1)
        >>> sched = lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> sched.last_epoch = 3
        >>> sched.get_lr()
        [0.0125]
        """
        return [self.lr_at(base, self.last_epoch) for base in self.base_lrs]

    def step(self) -> None:
        """Advance one epoch and set every group's ``lr`` for it.

        Call it after ``optimizer.step()``, once per epoch (once per batch for
        :class:`OneCycleLR` and :class:`CyclicLR`).

        Returns
        -------
        None

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn, optim
        >>> from difflab.optim import lr_scheduler
        >>> opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=0.1)
        >>> sched = lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> opt.step(); sched.step()
        >>> sched.last_epoch, opt.param_groups[0]["lr"]
        (1, 0.05)
        """
        self.last_epoch += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict:
        """The scheduler's state: every attribute except the optimizer and callables (a lambda).

        Returns
        -------
        dict
            Attribute name -> value (``last_epoch``, ``base_lrs``, the settings).

        See Also
        --------
        LRScheduler.load_state_dict

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn, optim
        >>> from difflab.optim import lr_scheduler
        >>> opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=0.1)
        >>> lr_scheduler.StepLR(opt, step_size=2).state_dict()
        {'step_size': 2, 'gamma': 0.1, 'base_lrs': [0.1], 'last_epoch': 0, '_last_lr': [0.1]}
        """
        return {k: v for k, v in self.__dict__.items()
                if k != "optimizer" and not callable(v)}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore the attributes saved by :meth:`state_dict` (the epoch counter included).

        It does not set the optimizer's rates: load the optimizer's own state dict too.

        Parameters
        ----------
        state_dict : dict
            What :meth:`state_dict` returned.

        Returns
        -------
        None

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn, optim
        >>> from difflab.optim import lr_scheduler
        >>> opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=0.1)
        >>> a = lr_scheduler.StepLR(opt, step_size=2)
        >>> for _ in range(3):
        ...     opt.step(); a.step()
        >>> b = lr_scheduler.StepLR(optim.SGD([nn.Parameter(dl.zeros(1))], lr=0.1), step_size=2)
        >>> b.load_state_dict(a.state_dict())
        >>> b.last_epoch
        3
        """
        self.__dict__.update(state_dict)


class StepLR(LRScheduler):
    r"""Multiply the rate by ``gamma`` every ``step_size`` epochs.

    .. math::
        \eta_t = \eta_0\,\gamma^{\lfloor t/\text{step\_size}\rfloor}

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose parameter groups' ``lr`` it sets.
    step_size : int
        The number of epochs between two decays, >= 1.
    gamma : float, default 0.1
        The factor of each decay.
    last_epoch : int, default -1
        The index of the last epoch when resuming (then every group must have an
        ``initial_lr``); -1 starts afresh.

    Attributes
    ----------
    base_lrs : list of float
        Each group's initial rate :math:`\eta_0` (``group["initial_lr"]``).
    last_epoch : int
        The epoch counter :math:`t` (0 after construction).

    Raises
    ------
    ValueError
        If ``step_size < 1``.
    TypeError
        If ``optimizer`` is not an :class:`~difflab.optim.Optimizer`.
    KeyError
        If ``last_epoch != -1`` and a group has no ``initial_lr``.

    See Also
    --------
    MultiStepLR, ExponentialLR

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn, optim
    >>> from difflab.optim import lr_scheduler
    >>> opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=0.1)
    >>> sched = lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    >>> rates = []
    >>> for epoch in range(6):
    ...     rates.append(round(sched.get_last_lr()[0], 6))
    ...     opt.step()                      # (the epoch's training)
    ...     sched.step()
    >>> rates
    [0.1, 0.1, 0.05, 0.05, 0.025, 0.025]
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        if step_size < 1:
            raise ValueError(f"step_size must be a positive integer, got {step_size}")
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, t: int) -> float:
        r"""The rate at epoch ``t`` of a group with initial rate ``base_lr`` (StepLR).

        Parameters
        ----------
        base_lr : float
            The group's initial rate :math:`\eta_0`.
        t : int
            The epoch, from 0.

        Returns
        -------
        float
            The rate.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn, optim
        >>> from difflab.optim import lr_scheduler
        >>> opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=0.1)
        >>> lr_scheduler.StepLR(opt, step_size=2, gamma=0.5).lr_at(0.1, 5)
        0.025
        """
        return base_lr * self.gamma ** (t // self.step_size)


class MultiStepLR(LRScheduler):
    r"""Multiply the rate by ``gamma`` at each milestone epoch.

    .. math::
        \eta_t = \eta_0\,\gamma^{\#\{m \in \text{milestones} : m \le t\}}

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose parameter groups' ``lr`` it sets.
    milestones : list of int
        The epochs at which to decay (sorted here).
    gamma : float, default 0.1
        The factor of each decay.
    last_epoch : int, default -1
        The index of the last epoch when resuming (then every group must have an
        ``initial_lr``); -1 starts afresh.

    Attributes
    ----------
    base_lrs : list of float
        Each group's initial rate :math:`\eta_0` (``group["initial_lr"]``).
    last_epoch : int
        The epoch counter :math:`t` (0 after construction).

    Raises
    ------
    TypeError
        If ``optimizer`` is not an :class:`~difflab.optim.Optimizer`.
    KeyError
        If ``last_epoch != -1`` and a group has no ``initial_lr``.

    See Also
    --------
    StepLR

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn, optim
    >>> from difflab.optim import lr_scheduler
    >>> opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=0.1)
    >>> sched = lr_scheduler.MultiStepLR(opt, milestones=[2, 4], gamma=0.1)
    >>> rates = []
    >>> for epoch in range(6):
    ...     rates.append(round(sched.get_last_lr()[0], 6))
    ...     opt.step()                      # (the epoch's training)
    ...     sched.step()
    >>> rates
    [0.1, 0.1, 0.01, 0.01, 0.001, 0.001]
    """

    def __init__(self, optimizer: Optimizer, milestones: list[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones, self.gamma = sorted(milestones), gamma
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, t: int) -> float:
        r"""The rate at epoch ``t`` of a group with initial rate ``base_lr`` (MultiStepLR).

        Parameters
        ----------
        base_lr : float
            The group's initial rate :math:`\eta_0`.
        t : int
            The epoch, from 0.

        Returns
        -------
        float
            The rate.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn, optim
        >>> from difflab.optim import lr_scheduler
        >>> opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=0.1)
        >>> lr_scheduler.StepLR(opt, step_size=2, gamma=0.5).lr_at(0.1, 5)
        0.025
        """
        return base_lr * self.gamma ** sum(1 for m in self.milestones if m <= t)


class ExponentialLR(LRScheduler):
    r"""Multiply the rate by ``gamma`` every epoch: :math:`\eta_t = \eta_0\,\gamma^t`.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose parameter groups' ``lr`` it sets.
    gamma : float
        The factor per epoch.
    last_epoch : int, default -1
        The index of the last epoch when resuming (then every group must have an
        ``initial_lr``); -1 starts afresh.

    Attributes
    ----------
    base_lrs : list of float
        Each group's initial rate :math:`\eta_0` (``group["initial_lr"]``).
    last_epoch : int
        The epoch counter :math:`t` (0 after construction).

    Raises
    ------
    TypeError
        If ``optimizer`` is not an :class:`~difflab.optim.Optimizer`.
    KeyError
        If ``last_epoch != -1`` and a group has no ``initial_lr``.

    See Also
    --------
    StepLR, MultiplicativeLR

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn, optim
    >>> from difflab.optim import lr_scheduler
    >>> opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=0.1)
    >>> sched = lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> rates = []
    >>> for epoch in range(4):
    ...     rates.append(round(sched.get_last_lr()[0], 6))
    ...     opt.step()                      # (the epoch's training)
    ...     sched.step()
    >>> rates
    [0.1, 0.05, 0.025, 0.0125]
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, t: int) -> float:
        r"""The rate at epoch ``t`` of a group with initial rate ``base_lr`` (ExponentialLR).

        Parameters
        ----------
        base_lr : float
            The group's initial rate :math:`\eta_0`.
        t : int
            The epoch, from 0.

        Returns
        -------
        float
            The rate.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn, optim
        >>> from difflab.optim import lr_scheduler
        >>> opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=0.1)
        >>> lr_scheduler.StepLR(opt, step_size=2, gamma=0.5).lr_at(0.1, 5)
        0.025
        """
        return base_lr * self.gamma**t


class CosineAnnealingLR(LRScheduler):
    r"""Half a cosine from the initial rate down to ``eta_min`` over ``T_max`` epochs.

    .. math::
        \eta_t = \eta_{min} + \tfrac12(\eta_0 - \eta_{min})
        \left(1 + \cos\frac{\pi t}{T_{max}}\right)

    (the closed form, so past ``T_max`` the rate climbs back along the cosine;
    :class:`CosineAnnealingWarmRestarts` restarts instead).

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose parameter groups' ``lr`` it sets.
    T_max : int
        The number of epochs of the half period, >= 1.
    eta_min : float, default 0.0
        The lowest rate.
    last_epoch : int, default -1
        The index of the last epoch when resuming (then every group must have an
        ``initial_lr``); -1 starts afresh.

    Attributes
    ----------
    base_lrs : list of float
        Each group's initial rate :math:`\eta_0` (``group["initial_lr"]``).
    last_epoch : int
        The epoch counter :math:`t` (0 after construction).

    Raises
    ------
    ValueError
        If ``T_max < 1``.
    TypeError
        If ``optimizer`` is not an :class:`~difflab.optim.Optimizer`.
    KeyError
        If ``last_epoch != -1`` and a group has no ``initial_lr``.

    References
    ----------
    Loshchilov and Hutter, "SGDR: Stochastic Gradient Descent with Warm Restarts", ICLR 2017.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn, optim
    >>> from difflab.optim import lr_scheduler
    >>> opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=0.1)
    >>> sched = lr_scheduler.CosineAnnealingLR(opt, T_max=4)
    >>> rates = []
    >>> for epoch in range(5):
    ...     rates.append(round(sched.get_last_lr()[0], 6))
    ...     opt.step()                      # (the epoch's training)
    ...     sched.step()
    >>> rates
    [0.1, 0.085355, 0.05, 0.014645, 0.0]
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1) -> None:
        if T_max < 1:
            raise ValueError(f"T_max must be a positive integer, got {T_max}")
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, t: int) -> float:
        r"""The rate at epoch ``t`` of a group with initial rate ``base_lr`` (CosineAnnealingLR).

        Parameters
        ----------
        base_lr : float
            The group's initial rate :math:`\eta_0`.
        t : int
            The epoch, from 0.

        Returns
        -------
        float
            The rate.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn, optim
        >>> from difflab.optim import lr_scheduler
        >>> opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=0.1)
        >>> lr_scheduler.StepLR(opt, step_size=2, gamma=0.5).lr_at(0.1, 5)
        0.025
        """
        return self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * t / self.T_max)
                                                          ) / 2


class LambdaLR(LRScheduler):
    r"""The initial rate times a function of the epoch: :math:`\eta_t = \eta_0\,\lambda(t)`.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose parameter groups' ``lr`` it sets.
    lr_lambda : callable
        Epoch :math:`t` (int, from 0) -> factor (float).
    last_epoch : int, default -1
        The index of the last epoch when resuming (then every group must have an
        ``initial_lr``); -1 starts afresh.

    Attributes
    ----------
    base_lrs : list of float
        Each group's initial rate :math:`\eta_0` (``group["initial_lr"]``).
    last_epoch : int
        The epoch counter :math:`t` (0 after construction).

    Raises
    ------
    TypeError
        If ``optimizer`` is not an :class:`~difflab.optim.Optimizer`.
    KeyError
        If ``last_epoch != -1`` and a group has no ``initial_lr``.

    Notes
    -----
    :meth:`LRScheduler.state_dict` leaves the function out (a lambda cannot be saved);
    construct the scheduler with the same function before loading.

    See Also
    --------
    MultiplicativeLR : multiplies the factors of the epochs up to :math:`t`.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn, optim
    >>> from difflab.optim import lr_scheduler
    >>> opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=0.1)
    >>> sched = lr_scheduler.LambdaLR(opt, lambda epoch: 1 / (epoch + 1))
    >>> rates = []
    >>> for epoch in range(4):
    ...     rates.append(round(sched.get_last_lr()[0], 6))
    ...     opt.step()                      # (the epoch's training)
    ...     sched.step()
    >>> rates
    [0.1, 0.05, 0.033333, 0.025]
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float],
                 last_epoch: int = -1) -> None:
        self.lr_lambda = lr_lambda
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, t: int) -> float:
        r"""The rate at epoch ``t`` of a group with initial rate ``base_lr`` (LambdaLR).

        Parameters
        ----------
        base_lr : float
            The group's initial rate :math:`\eta_0`.
        t : int
            The epoch, from 0.

        Returns
        -------
        float
            The rate.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn, optim
        >>> from difflab.optim import lr_scheduler
        >>> opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=0.1)
        >>> lr_scheduler.StepLR(opt, step_size=2, gamma=0.5).lr_at(0.1, 5)
        0.025
        """
        return base_lr * self.lr_lambda(t)


# ---------------------------------------------------------------------------------------
# compat-ops (issue 14): the one-cycle policy and the plateau schedule.


class OneCycleLR(LRScheduler):
    r"""The 1cycle policy: one warm-up and one annealing phase over ``total_steps`` batches.

    Call ``step()`` once per *batch*.  Phase 1 (the first ``pct_start`` of the
    steps): the rate rises from :math:`\eta_{max}/\text{div\_factor}` to
    :math:`\eta_{max}` while the momentum falls from ``max_momentum`` to
    ``base_momentum``.  Phase 2: the rate falls to
    :math:`\eta_{max}/(\text{div\_factor}\cdot\text{final\_div\_factor})`, the
    momentum rises back.  With ``three_phase=True`` the rate first returns to the
    start, then anneals.  Within a phase, at fraction :math:`p` of it,
    ``anneal_strategy='cos'`` interpolates as
    :math:`\text{end} + \tfrac12(\text{start} - \text{end})(1 + \cos \pi p)` and
    ``'linear'`` as :math:`\text{start} + p(\text{end} - \text{start})`.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose parameter groups' ``lr`` it sets.
    max_lr : float or list of float
        :math:`\eta_{max}`, the peak rate (one per group, or one for all).
    total_steps : int, optional
        The number of batches of the cycle; or give ``epochs`` and ``steps_per_epoch``.
    epochs, steps_per_epoch : int, optional
        Their product is ``total_steps`` when that is left out.
    pct_start : float, default 0.3
        The fraction of the cycle spent rising, in :math:`[0, 1]`.
    anneal_strategy : {'cos', 'linear'}, default 'cos'
        How to interpolate within a phase.
    cycle_momentum : bool, default True
        Cycle ``momentum`` (SGD, RMSprop) or Adam's :math:`\beta_1` inversely to the rate.
    base_momentum, max_momentum : float or list of float, default 0.85 and 0.95
        The momentum's range.
    div_factor : float, default 25.0
        The starting rate is :math:`\eta_{max}/\text{div\_factor}`.
    final_div_factor : float, default 1e4
        The final rate is the starting rate divided by this.
    three_phase : bool, default False
        Use three phases (up, back down to the start, then down to the final rate).
    last_epoch : int, default -1
        The index of the last epoch when resuming (then every group must have an
        ``initial_lr``); -1 starts afresh.

    Attributes
    ----------
    total_steps : int
        The length of the cycle.

    Raises
    ------
    ValueError
        If neither ``total_steps`` nor both ``epochs`` and ``steps_per_epoch`` are
        given (or they are not positive), ``pct_start`` is outside :math:`[0, 1]`,
        ``anneal_strategy`` is unknown, momentum is cycled for an optimizer
        without one, a list has the wrong length, or :meth:`LRScheduler.step` is called more
        than ``total_steps`` times.
    TypeError
        If ``optimizer`` is not an Optimizer.

    References
    ----------
    Smith and Topin, "Super-Convergence: Very Fast Training of Neural Networks
    Using Large Learning Rates", 2017.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn, optim
    >>> from difflab.optim import lr_scheduler
    >>> opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=0.1, momentum=0.9)
    >>> sched = lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10)
    >>> rates = []
    >>> for batch in range(10):
    ...     rates.append(round(sched.get_last_lr()[0], 4))
    ...     opt.step()
    ...     sched.step()
    >>> rates
    [0.04, 0.52, 1.0, 0.9505, 0.8117, 0.6113, 0.3887, 0.1883, 0.0495, 0.0]
    """

    def __init__(self, optimizer: Optimizer, max_lr: float | list[float],
                 total_steps: int | None = None, epochs: int | None = None,
                 steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True,
                 base_momentum: float | list[float] = 0.85,
                 max_momentum: float | list[float] = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError("You must define either total_steps OR (epochs AND "
                                 "steps_per_epoch)")
            if epochs <= 0 or steps_per_epoch <= 0:
                raise ValueError(f"epochs and steps_per_epoch must be positive integers, got "
                                 f"{epochs} and {steps_per_epoch}")
            total_steps = epochs * steps_per_epoch
        if total_steps <= 0:
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        if not 0.0 <= pct_start <= 1.0:
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy!r}")
        self.total_steps, self.anneal_strategy = int(total_steps), anneal_strategy
        groups = optimizer.param_groups
        warm = float(pct_start * self.total_steps) - 1
        if three_phase:
            self._phases = [(warm, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                            (2 * warm, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                            (self.total_steps - 1, "initial_lr", "min_lr", "max_momentum",
                             "max_momentum")]
        else:
            self._phases = [(warm, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                            (self.total_steps - 1, "max_lr", "min_lr", "base_momentum",
                             "max_momentum")]
        if last_epoch == -1:
            for group, peak in zip(groups, _per_group(max_lr, groups, "max_lr")):
                group["initial_lr"] = peak / div_factor
                group["max_lr"] = peak
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with "
                                 "`cycle_momentum` option enabled")
            self._use_beta1 = "betas" in optimizer.defaults
            for group, low, high in zip(groups, _per_group(base_momentum, groups, "base_momentum"),
                                        _per_group(max_momentum, groups, "max_momentum")):
                if last_epoch == -1:
                    self._set_momentum(group, high)
                group["base_momentum"], group["max_momentum"] = low, high
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group: dict, value: float) -> None:
        if self._use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def _at(self, group: dict, t: int) -> tuple[float, float | None]:
        """(learning rate, momentum) of ``group`` at step t."""
        start = 0.0
        for i, (end, lr0, lr1, m0, m1) in enumerate(self._phases):
            if t <= end or i == len(self._phases) - 1:
                pct = (t - start) / (end - start)
                lr = self._anneal(group[lr0], group[lr1], pct)
                momentum = (self._anneal(group[m0], group[m1], pct) if self.cycle_momentum
                            else None)
                return lr, momentum
            start = end
        raise AssertionError("unreachable: the last phase takes every step")

    def get_lr(self) -> list[float]:
        """The rates at the current step ``last_epoch`` (with ``cycle_momentum``, set the momentum).

        Returns
        -------
        list of float
            One rate per parameter group.

        Raises
        ------
        ValueError
            When stepped past ``total_steps``.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn, optim
        >>> from difflab.optim import lr_scheduler
        >>> opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=0.1, momentum=0.9)
        >>> sched = lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10)
        >>> [round(lr, 6) for lr in sched.get_lr()], opt.param_groups[0]["momentum"]
        ([0.04], 0.95)
        """
        t = self.last_epoch
        if t > self.total_steps:
            raise ValueError(
                f"Tried to step {t} times. The specified number of total steps is "
                f"{self.total_steps}"
            )
        rates = []
        for group in self.optimizer.param_groups:
            lr, momentum = self._at(group, t)
            if momentum is not None:
                self._set_momentum(group, momentum)
            rates.append(lr)
        return rates


def _per_group(value: Any, groups: list, name: str) -> list:
    """One value per parameter group: a number for all, or a list with one per group."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(groups):
            raise ValueError(f"expected {len(groups)} values for {name}, got {len(value)}")
        return list(value)
    return [value] * len(groups)


class ReduceLROnPlateau:
    r"""Multiply the rate by ``factor`` once a metric stops improving: ``scheduler.step(metric)``.

    An epoch improves on the best so far when, with ``mode='min'`` (a loss),

    .. math::
        \text{current} < \text{best}\,(1 - \text{threshold}) \ \ (\text{rel})
        \quad\text{or}\quad \text{current} < \text{best} - \text{threshold} \ \ (\text{abs})

    (the other way round for ``mode='max'``, an accuracy).  After more than
    ``patience`` epochs without improvement every group's rate becomes
    :math:`\max(\eta\cdot\text{factor}, \text{min\_lr})` (a change smaller than
    ``eps`` is skipped), and ``cooldown`` epochs pass before bad epochs count again.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose groups' ``lr`` it lowers.
    mode : {'min', 'max'}, default 'min'
        Whether a lower or a higher metric is better.
    factor : float, default 0.1
        The factor of each reduction, < 1.
    patience : int, default 10
        How many epochs without improvement are tolerated.
    threshold : float, default 1e-4
        The smallest change that counts as an improvement.
    threshold_mode : {'rel', 'abs'}, default 'rel'
        Relative or absolute threshold.
    cooldown : int, default 0
        Epochs to wait after a reduction before counting bad epochs again.
    min_lr : float or list of float, default 0.0
        The lowest rate (one per group, or one for all).
    eps : float, default 1e-8
        Reductions smaller than this are skipped.

    Attributes
    ----------
    best : float
        The best metric so far.
    num_bad_epochs : int
        Epochs since the last improvement.

    Raises
    ------
    TypeError
        If ``optimizer`` is not an Optimizer.
    ValueError
        If ``factor >= 1``, ``mode`` or ``threshold_mode`` is unknown, or
        ``min_lr`` has the wrong number of entries.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn, optim
    >>> from difflab.optim import lr_scheduler
    >>> opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=0.1)
    >>> sched = lr_scheduler.ReduceLROnPlateau(opt, patience=1, factor=0.5)
    >>> rates = []
    >>> for val_loss in [1.0, 0.9, 0.9, 0.9, 0.9, 0.9]:
    ...     sched.step(val_loss)
    ...     rates.append(sched.get_last_lr()[0])
    >>> rates
    [0.1, 0.1, 0.1, 0.05, 0.05, 0.025]
    """

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr: float | list[float] = 0.0, eps: float = 1e-8) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        if mode not in ("min", "max"):
            raise ValueError(f"mode {mode!r} is unknown! (use 'min' or 'max')")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"threshold mode {threshold_mode!r} is unknown! (use 'rel' or "
                             f"'abs')")
        self.optimizer = optimizer
        self.min_lrs = _per_group(min_lr, optimizer.param_groups, "min_lr")
        self.mode, self.factor, self.patience = mode, factor, patience
        self.threshold, self.threshold_mode = threshold, threshold_mode
        self.cooldown, self.eps = cooldown, eps
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = self.cooldown_counter = self.last_epoch = 0
        self._last_lr = [group["lr"] for group in optimizer.param_groups]

    def is_better(self, current: float, best: float) -> bool:
        """Whether ``current`` improves on ``best`` by more than the threshold (in this mode).

        Parameters
        ----------
        current : float
            This epoch's metric.
        best : float
            The best metric so far.

        Returns
        -------
        bool
            ``True`` when it counts as an improvement.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn, optim
        >>> from difflab.optim import lr_scheduler
        >>> opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=0.1)
        >>> sched = lr_scheduler.ReduceLROnPlateau(opt, threshold=0.01)
        >>> sched.is_better(0.995, 1.0), sched.is_better(0.98, 1.0)
        (False, True)
        """
        if self.mode == "min":
            bound = best * (1.0 - self.threshold) if self.threshold_mode == "rel" \
                else best - self.threshold
            return current < bound
        bound = best * (1.0 + self.threshold) if self.threshold_mode == "rel" \
            else best + self.threshold
        return current > bound

    @property
    def in_cooldown(self) -> bool:
        """Whether the scheduler is waiting out its cooldown after a reduction (a property).

        Returns
        -------
        bool
            ``True`` while bad epochs are not counted.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn, optim
        >>> from difflab.optim import lr_scheduler
        >>> opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=0.1)
        >>> sched = lr_scheduler.ReduceLROnPlateau(opt, patience=0, cooldown=2)
        >>> sched.step(1.0); sched.step(1.0)
        >>> sched.in_cooldown, sched.get_last_lr()
        (True, [0.010000000000000002])
        """
        return self.cooldown_counter > 0

    def step(self, metrics: Any) -> None:
        """Record one epoch's metric and lower the rates if it has stalled for too long.

        Parameters
        ----------
        metrics : float or Tensor
            The epoch's metric (a number or a one-element tensor, e.g. the validation loss).

        Returns
        -------
        None

        Raises
        ------
        TypeError, ValueError
            If ``metrics`` cannot be turned into a float.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn, optim
        >>> from difflab.optim import lr_scheduler
        >>> opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=0.1)
        >>> sched = lr_scheduler.ReduceLROnPlateau(opt, mode="max")
        >>> sched.step(dl.tensor(0.75))
        >>> sched.best
        0.75
        """
        current = float(metrics)
        self.last_epoch += 1
        if self.is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # epochs in cooldown do not count
        if self.num_bad_epochs > self.patience:
            for group, min_lr in zip(self.optimizer.param_groups, self.min_lrs):
                new = max(group["lr"] * self.factor, min_lr)
                if group["lr"] - new > self.eps:
                    group["lr"] = new
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self) -> list[float]:
        """The learning rates after the last :meth:`step`, one per parameter group.

        Returns
        -------
        list of float
            A copy.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn, optim
        >>> from difflab.optim import lr_scheduler
        >>> opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=0.1)
        >>> lr_scheduler.ReduceLROnPlateau(opt).get_last_lr()
        [0.1]
        """
        return list(self._last_lr)

    def state_dict(self) -> dict:
        """The scheduler's state: every attribute except the optimizer.

        Returns
        -------
        dict
            Attribute name -> value (``best``, ``num_bad_epochs``, the settings).

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn, optim
        >>> from difflab.optim import lr_scheduler
        >>> opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=0.1)
        >>> sched = lr_scheduler.ReduceLROnPlateau(opt)
        >>> sched.step(2.0)
        >>> sched.state_dict()["best"]
        2.0
        """
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore the attributes saved by :meth:`state_dict`.

        Parameters
        ----------
        state_dict : dict
            What :meth:`state_dict` returned.

        Returns
        -------
        None

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn, optim
        >>> from difflab.optim import lr_scheduler
        >>> a = lr_scheduler.ReduceLROnPlateau(optim.SGD([nn.Parameter(dl.zeros(1))], lr=0.1))
        >>> a.step(2.0)
        >>> b = lr_scheduler.ReduceLROnPlateau(optim.SGD([nn.Parameter(dl.zeros(1))], lr=0.1))
        >>> b.load_state_dict(a.state_dict())
        >>> b.best, b.last_epoch
        (2.0, 1)
        """
        self.__dict__.update(state_dict)


_LRScheduler = LRScheduler
__all__ = ["CosineAnnealingLR", "ExponentialLR", "LRScheduler", "LambdaLR", "MultiStepLR",
           "OneCycleLR", "ReduceLROnPlateau", "StepLR"]



# ---------------------------------------------------------------------------------------
# breadth (issue 27): the rest of PyTorch's schedulers.  Each one that multiplies the initial
# rate by a factor says so in ``factor``; that is what lets ChainedScheduler combine them.


class _FactorScheduler(LRScheduler):
    """A schedule η₀·f(t): subclasses give the factor f(t)."""

    def factor(self, t: int) -> float:
        raise NotImplementedError

    def lr_at(self, base_lr: float, t: int) -> float:
        return base_lr * self.factor(t)


class MultiplicativeLR(_FactorScheduler):
    r"""Multiply the rate by ``lr_lambda(epoch)`` every epoch.

    .. math::
        \eta_t = \eta_0 \prod_{k=1}^{t} \lambda(k)

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose parameter groups' ``lr`` it sets.
    lr_lambda : callable
        Epoch :math:`k` (int) -> the factor of that epoch.
    last_epoch : int, default -1
        The last epoch when resuming; -1 starts afresh.

    See Also
    --------
    LambdaLR : the initial rate times :math:`\lambda(t)`, not a product.

    Examples
    --------
    >>> import difflab as dl
    >>> opt = dl.optim.SGD([dl.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = dl.optim.lr_scheduler.MultiplicativeLR(opt, lambda epoch: 0.5)
    >>> for _ in range(3):
    ...     opt.step()
    ...     sched.step()
    >>> sched.get_last_lr()
    [0.125]
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float],
                 last_epoch: int = -1) -> None:
        self.lr_lambda = lr_lambda
        self._product, self._product_until = 1.0, 0
        super().__init__(optimizer, last_epoch)

    def factor(self, t: int) -> float:
        r"""The factor :math:`f(t)` of MultiplicativeLR at epoch ``t`` (rate :math:`\eta_0 f(t)`).

        :class:`ChainedScheduler` multiplies these factors.

        Parameters
        ----------
        t : int
            The epoch, from 0.

        Returns
        -------
        float
            The factor.

        Examples
        --------
        >>> import difflab as dl
        >>> opt = dl.optim.SGD([dl.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = dl.optim.lr_scheduler.MultiplicativeLR(opt, lambda epoch: 0.5)
        >>> sched.factor(3)
        0.125
        """
        if t < self._product_until:  # (stepping back: start over)
            self._product, self._product_until = 1.0, 0
        while self._product_until < t:
            self._product_until += 1
            self._product *= self.lr_lambda(self._product_until)
        return self._product


class ConstantLR(_FactorScheduler):
    r"""The rate times ``factor`` for the first ``total_iters`` epochs, then the rate itself.

    .. math::
        \eta_t = \eta_0 \cdot \begin{cases} \text{factor} & t < \text{total\_iters} \\
        1 & \text{otherwise} \end{cases}

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose parameter groups' ``lr`` it sets.
    factor : float, default 1/3
        The factor during the first epochs, in :math:`[0, 1]`.
    total_iters : int, default 5
        How many epochs it lasts.
    last_epoch : int, default -1
        The last epoch when resuming; -1 starts afresh.

    Raises
    ------
    ValueError
        If ``factor`` is outside :math:`[0, 1]`.

    Examples
    --------
    >>> import difflab as dl
    >>> opt = dl.optim.SGD([dl.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = dl.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
    >>> rates = []
    >>> for _ in range(3):
    ...     rates.append(sched.get_last_lr()[0])
    ...     opt.step()
    ...     sched.step()
    >>> rates
    [0.05, 0.05, 0.1]
    """

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if not 0.0 <= factor <= 1.0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor_value, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def factor(self, t: int) -> float:
        r"""The factor :math:`f(t)` of ConstantLR at epoch ``t`` (rate :math:`\eta_0 f(t)`).

        :class:`ChainedScheduler` multiplies these factors.

        Parameters
        ----------
        t : int
            The epoch, from 0.

        Returns
        -------
        float
            The factor.

        Examples
        --------
        >>> import difflab as dl
        >>> opt = dl.optim.SGD([dl.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = dl.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
        >>> sched.factor(1), sched.factor(2)
        (0.5, 1.0)
        """
        return self.factor_value if t < self.total_iters else 1.0


class LinearLR(_FactorScheduler):
    r"""A factor moving linearly from ``start_factor`` to ``end_factor`` in ``total_iters`` epochs.

    .. math::
        \eta_t = \eta_0 \left(s + (e - s)\,\frac{\min(t, T)}{T}\right)

    A warm-up when it rises; it stays at :math:`e` after :math:`T` epochs.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose parameter groups' ``lr`` it sets.
    start_factor : float, default 1/3
        :math:`s`, in :math:`(0, 1]`.
    end_factor : float, default 1.0
        :math:`e`, in :math:`[0, 1]`.
    total_iters : int, default 5
        :math:`T`.
    last_epoch : int, default -1
        The last epoch when resuming; -1 starts afresh.

    Raises
    ------
    ValueError
        If a factor is outside its range.

    Examples
    --------
    >>> import difflab as dl
    >>> opt = dl.optim.SGD([dl.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = dl.optim.lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=3)
    >>> rates = []
    >>> for _ in range(5):
    ...     rates.append(sched.get_last_lr()[0])
    ...     opt.step()
    ...     sched.step()
    >>> rates
    [0.25, 0.5, 0.75, 1.0, 1.0]
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1) -> None:
        if not 0.0 < start_factor <= 1.0 or not 0.0 <= end_factor <= 1.0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and "
                             "less or equal to 1, and the ending factor between 0 and 1.")
        self.start_factor, self.end_factor = start_factor, end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def factor(self, t: int) -> float:
        r"""The factor :math:`f(t)` of LinearLR at epoch ``t`` (rate :math:`\eta_0 f(t)`).

        :class:`ChainedScheduler` multiplies these factors.

        Parameters
        ----------
        t : int
            The epoch, from 0.

        Returns
        -------
        float
            The factor.

        Examples
        --------
        >>> import difflab as dl
        >>> opt = dl.optim.SGD([dl.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = dl.optim.lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=3)
        >>> sched.factor(1), sched.factor(9)
        (0.5, 1.0)
        """
        done = min(t, self.total_iters) / self.total_iters if self.total_iters else 1.0
        return self.start_factor + (self.end_factor - self.start_factor) * done


class PolynomialLR(_FactorScheduler):
    r"""Decay to zero over ``total_iters`` epochs.

    .. math::
        \eta_t = \eta_0\,(1 - \min(t, T)/T)^{\text{power}}

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose parameter groups' ``lr`` it sets.
    total_iters : int, default 5
        :math:`T`, >= 1.
    power : float, default 1.0
        The exponent (1: linear decay).
    last_epoch : int, default -1
        The last epoch when resuming; -1 starts afresh.

    Raises
    ------
    ValueError
        If ``total_iters < 1``.

    Examples
    --------
    >>> import difflab as dl
    >>> opt = dl.optim.SGD([dl.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = dl.optim.lr_scheduler.PolynomialLR(opt, total_iters=4, power=2.0)
    >>> [sched.lr_at(1.0, t) for t in range(6)]
    [1.0, 0.5625, 0.25, 0.0625, 0.0, 0.0]
    """

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1) -> None:
        if total_iters < 1:
            raise ValueError(f"total_iters must be a positive integer, got {total_iters}")
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def factor(self, t: int) -> float:
        r"""The factor :math:`f(t)` of PolynomialLR at epoch ``t`` (rate :math:`\eta_0 f(t)`).

        :class:`ChainedScheduler` multiplies these factors.

        Parameters
        ----------
        t : int
            The epoch, from 0.

        Returns
        -------
        float
            The factor.

        Examples
        --------
        >>> import difflab as dl
        >>> opt = dl.optim.SGD([dl.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = dl.optim.lr_scheduler.PolynomialLR(opt, total_iters=4, power=2.0)
        >>> sched.factor(2)
        0.25
        """
        return (1.0 - min(t, self.total_iters) / self.total_iters) ** self.power


class CosineAnnealingWarmRestarts(LRScheduler):
    r"""Cosine annealing from :math:`\eta_0` to ``eta_min`` that restarts (SGDR).

    .. math::
        \eta_t = \eta_{min} + \tfrac12(\eta_0 - \eta_{min})
        \left(1 + \cos\frac{\pi T_{cur}}{T_i}\right)

    :math:`T_{cur}` counts the epochs since the last restart; the first cycle
    lasts :math:`T_0` epochs, each next one ``T_mult`` times longer.  ``step(epoch)``
    accepts fractional epochs (call it every batch with ``epoch + i / iters``).

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose parameter groups' ``lr`` it sets.
    T_0 : int
        The length of the first cycle, >= 1.
    T_mult : int, default 1
        The growth of each next cycle, >= 1.
    eta_min : float, default 0.0
        The lowest rate.
    last_epoch : int, default -1
        The last epoch when resuming; -1 starts afresh.

    Raises
    ------
    ValueError
        If ``T_0`` is not a positive int or ``T_mult`` not an int >= 1.

    Examples
    --------
    >>> import difflab as dl
    >>> opt = dl.optim.SGD([dl.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = dl.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2)
    >>> [round(sched.lr_at(1.0, t), 3) for t in range(5)]
    [1.0, 0.5, 1.0, 0.5, 1.0]
    """

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1,  # noqa: N803
                 eta_min: float = 0.0, last_epoch: int = -1) -> None:
        if not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        self.T_0, self.T_mult, self.eta_min = T_0, T_mult, eta_min
        super().__init__(optimizer, last_epoch)

    def _cycle(self, t: float) -> tuple[float, float]:
        """(T_cur, T_i): how far into its cycle epoch t is, and the cycle's length."""
        if self.T_mult == 1:
            return t % self.T_0, float(self.T_0)
        n = int(math.log(t / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
        return (t - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1),
                float(self.T_0 * self.T_mult**n))

    def lr_at(self, base_lr: float, t: float) -> float:
        t_cur, t_i = self._cycle(t)
        return self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * t_cur / t_i)) / 2

    def step(self, epoch: float | None = None) -> None:
        """Advance one epoch, or go to ``epoch`` (fractional epochs allowed), and set the rates.

        Parameters
        ----------
        epoch : float, optional
            The epoch to go to; the next one when left out.

        Returns
        -------
        None

        Raises
        ------
        ValueError
            If ``epoch`` is negative.

        Examples
        --------
        >>> import difflab as dl
        >>> opt = dl.optim.SGD([dl.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = dl.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2)
        >>> sched.step(0.5)
        >>> round(sched.get_last_lr()[0], 4)
        0.8536
        """
        if epoch is not None:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            self.last_epoch = epoch - 1
        super().step()


class CyclicLR(LRScheduler):
    r"""Cycle the rate between ``base_lr`` and ``max_lr`` (Smith's cyclical learning rates).

    Call ``step()`` after every batch (not every epoch).  A cycle rises for
    ``step_size_up`` batches and falls for ``step_size_down``;
    the height is scaled by ``mode``: ``'triangular'`` (always 1),
    ``'triangular2'`` (halved each cycle) or ``'exp_range'`` (γ^batch), or by
    ``scale_fn``.  With ``cycle_momentum`` the momentum (or Adam's β₁) cycles
    the other way, between ``max_momentum`` and ``base_momentum``.

    Parameters
    ----------
    optimizer : Optimizer
        The wrapped optimizer; its rates are set to ``base_lr`` at the start.
    base_lr, max_lr : float or list of float
        The bottom and top of the cycle (a list: one per parameter group).
    step_size_up : int, default 2000
        Batches from the bottom to the top.
    step_size_down : int, optional
        Batches from the top back down; defaults to ``step_size_up``.
    mode : {'triangular', 'triangular2', 'exp_range'}, default 'triangular'
        The height's scale (ignored when ``scale_fn`` is given).
    gamma : float, default 1.0
        :math:`\gamma` of ``'exp_range'``.
    scale_fn : callable, optional
        ``scale_fn(x) -> float``, a custom height scale in :math:`[0, 1]`.
    scale_mode : {'cycle', 'iterations'}, default 'cycle'
        Whether ``scale_fn`` gets the cycle number or the batch count.
    cycle_momentum : bool, default True
        Cycle the momentum (or Adam's :math:`\beta_1`) inversely to the rate.
    base_momentum, max_momentum : float or list of float, default 0.8, 0.9
        The momentum's bounds: ``max_momentum`` at the bottom of the rate's cycle.
    last_epoch : int, default -1
        The index of the last batch, to resume a schedule (-1: start).

    Raises
    ------
    TypeError
        If ``optimizer`` is not an :class:`difflab.optim.Optimizer`.
    ValueError
        For an unknown ``mode`` without ``scale_fn``, a list that does not give one
        value per parameter group, or ``cycle_momentum`` with an optimizer that has
        neither ``momentum`` nor ``betas``.

    See Also
    --------
    OneCycleLR : one cycle over the whole training.
    CosineAnnealingWarmRestarts : cosine cycles that restart.

    Notes
    -----
    At batch :math:`t`, with :math:`S = \text{step\_size\_up} + \text{step\_size\_down}`,
    the cycle :math:`c = \lfloor 1 + t/S \rfloor`, the position in it
    :math:`x = 1 + t/S - c` and :math:`r = \text{step\_size\_up}/S`:

    .. math::
        f = \begin{cases} x / r & x \le r \\ (x - 1)/(r - 1) & \text{otherwise}
            \end{cases}, \qquad
        \eta_t = \text{base\_lr} + (\text{max\_lr} - \text{base\_lr})\, f\,
            \operatorname{scale}(c \text{ or } t),

    with :math:`\operatorname{scale}` 1 (``'triangular'``), :math:`2^{1-c}`
    (``'triangular2'``) or :math:`\gamma^t` (``'exp_range'``); the momentum is
    :math:`\text{max\_momentum} - (\text{max\_momentum} - \text{base\_momentum})\, f\,
    \operatorname{scale}`.

    Examples
    --------
    >>> import difflab as dl
    >>> opt = dl.optim.SGD([dl.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
    >>> sched = dl.optim.lr_scheduler.CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2)
    >>> rates, momenta = [], []
    >>> for _ in range(5):
    ...     rates.append(round(sched.get_last_lr()[0], 3))
    ...     momenta.append(round(opt.param_groups[0]["momentum"], 3))
    ...     opt.step()
    ...     sched.step()
    >>> rates                         # up for 2 batches, down for 2
    [0.1, 0.3, 0.5, 0.3, 0.1]
    >>> momenta                       # the other way
    [0.9, 0.85, 0.8, 0.85, 0.9]
    >>> opt = dl.optim.Adagrad([dl.zeros(1, requires_grad=True)])
    >>> dl.optim.lr_scheduler.CyclicLR(opt, 0.1, 0.5)      # no momentum to cycle
    Traceback (most recent call last):
        ...
    ValueError: optimizer must support momentum or beta1 with `cycle_momentum` option enabled
    """

    def __init__(self, optimizer: Optimizer, base_lr: float | list, max_lr: float | list,
                 step_size_up: int = 2000, step_size_down: int | None = None,
                 mode: str = "triangular", gamma: float = 1.0, scale_fn: Callable | None = None,
                 scale_mode: str = "cycle", cycle_momentum: bool = True,
                 base_momentum: float | list = 0.8, max_momentum: float | list = 0.9,
                 last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        groups = optimizer.param_groups
        base_lrs = _per_group(base_lr, groups, "base_lr")
        if last_epoch == -1:
            for lr, group in zip(base_lrs, groups):
                group["lr"] = lr
                group["initial_lr"] = lr
        self.max_lrs = _per_group(max_lr, groups, "max_lr")
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size, self.step_ratio = up + down, up / (up + down)
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma = mode, gamma
        if scale_fn is None:
            self._scale_fn = {"triangular": lambda x: 1.0,
                              "triangular2": lambda x: 1 / (2.0 ** (x - 1)),
                              "exp_range": lambda x: gamma**x}[mode]
            self.scale_mode = "iterations" if mode == "exp_range" else "cycle"
        else:
            self._scale_fn, self.scale_mode = scale_fn, scale_mode
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            defaults = optimizer.defaults
            if "momentum" not in defaults and "betas" not in defaults:
                raise ValueError("optimizer must support momentum or beta1 with "
                                 "`cycle_momentum` option enabled")
            self._use_beta1 = "betas" in defaults
            self.base_momentums = _per_group(base_momentum, groups, "base_momentum")
            self.max_momentums = _per_group(max_momentum, groups, "max_momentum")
            if last_epoch == -1:
                for momentum, group in zip(self.max_momentums, groups):
                    self._set_momentum(group, momentum)
        super().__init__(optimizer, last_epoch)  # (base_lrs: the initial rates, base_lr)

    def _set_momentum(self, group: dict, value: float) -> None:
        if self._use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def scale_fn(self, x: float) -> float:
        r"""The height multiplier at ``x``, a cycle number or a batch count (``scale_mode``).

        Parameters
        ----------
        x : float
            The cycle (``scale_mode='cycle'``) or the batch (``'iterations'``).

        Returns
        -------
        float
            1 for ``'triangular'``, :math:`2^{1-x}` for ``'triangular2'``,
            :math:`\gamma^x` for ``'exp_range'``, or the user's ``scale_fn(x)``.

        Examples
        --------
        >>> import difflab as dl
        >>> opt = dl.optim.SGD([dl.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
        >>> sched = dl.optim.lr_scheduler.CyclicLR(opt, 0.1, 0.5, mode="triangular2")
        >>> sched.scale_fn(1), sched.scale_fn(3)
        (1.0, 0.25)
        """
        return self._scale_fn(x)

    def get_lr(self) -> list[float]:
        t = self.last_epoch
        cycle = math.floor(1 + t / self.total_size)
        x = 1.0 + t / self.total_size - cycle
        scale_factor = x / self.step_ratio if x <= self.step_ratio else \
            (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else t)
        rates = [base + (high - base) * scale_factor * scale
                 for base, high in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, low, high in zip(self.optimizer.param_groups, self.base_momentums,
                                        self.max_momentums):
                self._set_momentum(group, high - (high - low) * scale_factor * scale)
        return rates

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items()
                if k not in ("optimizer", "_scale_fn") and not callable(v)}


class ChainedScheduler:
    """Several schedulers stepped together; their factors multiply.

    Each scheduler of this module sets η₀·f_i(t); chained, the rate is
    η₀·Π f_i(t) (PyTorch composes its schedulers the same way: a warm-up
    ``LinearLR`` chained with an ``ExponentialLR`` gives both at once).

    Parameters
    ----------
    schedulers : list of LRScheduler
        On the same optimizer.
    optimizer : Optimizer, optional

    Examples
    --------
    >>> import difflab as dl
    >>> opt = dl.optim.SGD([dl.zeros(1, requires_grad=True)], lr=1.0)
    >>> warmup = dl.optim.lr_scheduler.ConstantLR(opt, factor=0.1, total_iters=2)
    >>> decay = dl.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> sched = dl.optim.lr_scheduler.ChainedScheduler([warmup, decay])
    >>> rates = []
    >>> for _ in range(4):
    ...     rates.append(sched.get_last_lr()[0])
    ...     opt.step()
    ...     sched.step()
    >>> rates
    [0.1, 0.05, 0.25, 0.125]
    """

    def __init__(self, schedulers: list, optimizer: Optimizer | None = None) -> None:
        schedulers = list(schedulers)
        if not schedulers:
            raise ValueError("ChainedScheduler expects at least one scheduler")
        optimizer = optimizer or schedulers[0].optimizer
        for i, scheduler in enumerate(schedulers):
            if scheduler.optimizer is not optimizer:
                raise ValueError(f"ChainedScheduler expects all schedulers to belong to the "
                                 f"same optimizer, but got scheduler {i} with another one")
        self._schedulers, self.optimizer = schedulers, optimizer
        self._apply()

    def _apply(self) -> None:
        for g, group in enumerate(self.optimizer.param_groups):
            rate = group["initial_lr"]
            for scheduler in self._schedulers:
                base = scheduler.base_lrs[g]
                rate *= scheduler.lr_at(base, scheduler.last_epoch) / base if base else 1.0
            group["lr"] = rate
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def step(self) -> None:
        """Step every scheduler, then set the product of their factors.

        Returns
        -------
        None

        Examples
        --------
        >>> import difflab as dl
        >>> opt = dl.optim.SGD([dl.zeros(1, requires_grad=True)], lr=1.0)
        >>> a = dl.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> b = dl.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> sched = dl.optim.lr_scheduler.ChainedScheduler([a, b])
        >>> sched.step()
        >>> opt.param_groups[0]["lr"]
        0.25
        """
        for scheduler in self._schedulers:
            scheduler.step()
        self._apply()

    def get_last_lr(self) -> list[float]:
        """The learning rates the last :meth:`step` set, one per parameter group.

        Returns
        -------
        list of float
            A copy.

        Examples
        --------
        >>> import difflab as dl
        >>> opt = dl.optim.SGD([dl.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = dl.optim.lr_scheduler.ChainedScheduler(
        ...     [dl.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=1)])
        >>> sched.get_last_lr()
        [0.5]
        """
        return list(self._last_lr)


class SequentialLR:
    """One scheduler after another: ``schedulers[i]`` runs from ``milestones[i - 1]`` on.

    Each scheduler starts its own schedule from its epoch 0 when its turn comes
    (a warm-up followed by a decay, say).

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose parameter groups' ``lr`` it sets.
    schedulers : list of LRScheduler
        On the same optimizer, in order.
    milestones : list of int
        The epochs of the hand-overs; one fewer than the schedulers.
    last_epoch : int, default -1
        The last epoch when resuming; -1 starts afresh.

    Raises
    ------
    ValueError
        If there is no scheduler, one belongs to another optimizer, or the
        number of milestones is not one fewer than the schedulers.

    Examples
    --------
    >>> import difflab as dl
    >>> opt = dl.optim.SGD([dl.zeros(1, requires_grad=True)], lr=1.0)
    >>> warmup = dl.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=2)
    >>> decay = dl.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> sched = dl.optim.lr_scheduler.SequentialLR(opt, [warmup, decay], milestones=[2])
    >>> rates = []
    >>> for _ in range(5):
    ...     rates.append(sched.get_last_lr()[0])
    ...     opt.step()
    ...     sched.step()
    >>> rates
    [0.5, 0.75, 1.0, 0.5, 0.25]
    """

    def __init__(self, optimizer: Optimizer, schedulers: list, milestones: list[int],
                 last_epoch: int = -1) -> None:
        schedulers = list(schedulers)
        if not schedulers:
            raise ValueError("SequentialLR expects at least one scheduler")
        for i, scheduler in enumerate(schedulers):
            if scheduler.optimizer is not optimizer:
                raise ValueError(f"SequentialLR: scheduler {i} belongs to another optimizer")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                f"Sequential Schedulers expects number of schedulers provided to be one more "
                f"than the number of milestone points, but got {len(schedulers)} schedulers "
                f"and {len(milestones)} milestones"
            )
        self.optimizer, self._schedulers = optimizer, schedulers
        self._milestones, self.last_epoch = list(milestones), last_epoch + 1
        first = schedulers[0]
        first.last_epoch = -1
        first.step()  # (the other schedulers' construction set rates; the first one's count)
        self._last_lr = first.get_last_lr()

    def step(self) -> None:
        """Advance one epoch, handing over to the next scheduler at each milestone.

        Returns
        -------
        None

        Examples
        --------
        >>> import difflab as dl
        >>> opt = dl.optim.SGD([dl.zeros(1, requires_grad=True)], lr=1.0)
        >>> a = dl.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=9)
        >>> b = dl.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> sched = dl.optim.lr_scheduler.SequentialLR(opt, [a, b], milestones=[1])
        >>> sched.step()
        >>> sched.get_last_lr()
        [1.0]
        """
        import bisect

        self.last_epoch += 1
        index = bisect.bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            scheduler.last_epoch = -1  # start its schedule from its own epoch 0
        scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def get_last_lr(self) -> list[float]:
        """The learning rates the last :meth:`step` set, one per parameter group.

        Returns
        -------
        list of float
            A copy.

        Examples
        --------
        >>> import difflab as dl
        >>> opt = dl.optim.SGD([dl.zeros(1, requires_grad=True)], lr=1.0)
        >>> a = dl.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=9)
        >>> b = dl.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> dl.optim.lr_scheduler.SequentialLR(opt, [a, b], milestones=[1]).get_last_lr()
        [0.5]
        """
        return list(self._last_lr)
