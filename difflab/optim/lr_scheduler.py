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
    """Base class: subclasses give ``lr_at(base_lr, t)``."""

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
        raise NotImplementedError

    def get_last_lr(self) -> list[float]:
        """The learning rates set by the last ``step()``."""
        return list(self._last_lr)

    def get_lr(self) -> list[float]:
        return [self.lr_at(base, self.last_epoch) for base in self.base_lrs]

    def step(self) -> None:
        """Advance one epoch and set the new learning rates."""
        self.last_epoch += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items()
                if k != "optimizer" and not callable(v)}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)


class StepLR(LRScheduler):
    """Multiply the rate by ``gamma`` every ``step_size`` epochs."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        if step_size < 1:
            raise ValueError(f"step_size must be a positive integer, got {step_size}")
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, t: int) -> float:
        return base_lr * self.gamma ** (t // self.step_size)


class MultiStepLR(LRScheduler):
    """Multiply the rate by ``gamma`` at each epoch listed in ``milestones``."""

    def __init__(self, optimizer: Optimizer, milestones: list[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones, self.gamma = sorted(milestones), gamma
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, t: int) -> float:
        return base_lr * self.gamma ** sum(1 for m in self.milestones if m <= t)


class ExponentialLR(LRScheduler):
    """Multiply the rate by ``gamma`` every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, t: int) -> float:
        return base_lr * self.gamma**t


class CosineAnnealingLR(LRScheduler):
    """Half a cosine from the initial rate down to ``eta_min`` over ``T_max`` epochs."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1) -> None:
        if T_max < 1:
            raise ValueError(f"T_max must be a positive integer, got {T_max}")
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, t: int) -> float:
        return self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * t / self.T_max)
                                                          ) / 2


class LambdaLR(LRScheduler):
    """The initial rate times ``lr_lambda(epoch)``."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float],
                 last_epoch: int = -1) -> None:
        self.lr_lambda = lr_lambda
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, t: int) -> float:
        return base_lr * self.lr_lambda(t)


# ---------------------------------------------------------------------------------------
# compat-ops (issue 14): the one-cycle policy and the plateau schedule.


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin): one warm-up and one annealing phase over
    ``total_steps`` batches; ``step()`` once per batch.

    Phase 1 (the first ``pct_start`` of the steps): η from η_max/div_factor up
    to η_max, momentum from ``max_momentum`` down to ``base_momentum``.  Phase 2:
    η down to η_max/(div_factor · final_div_factor), momentum back up.  With
    ``three_phase=True`` η first returns to the start and then anneals.
    Between the phases' ends, ``anneal_strategy`` 'cos' interpolates as
    end + (start - end)(1 + cos(π p))/2, 'linear' as start + p(end - start).
    Momentum (or Adam's β₁) is cycled when ``cycle_momentum`` is True.
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
    """Multiply the rate by ``factor`` once the metric stops improving: ``step(metric)``.

    ``mode='min'`` (a loss) or ``'max'`` (an accuracy).  An epoch improves on
    the best so far by more than ``threshold``: relatively (best·(1 ∓ threshold),
    ``threshold_mode='rel'``) or absolutely (best ∓ threshold, ``'abs'``).
    After more than ``patience`` epochs without improvement every group's rate
    becomes max(η · factor, min_lr) (changes smaller than ``eps`` are skipped),
    then ``cooldown`` epochs pass before counting again.
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
        if self.mode == "min":
            bound = best * (1.0 - self.threshold) if self.threshold_mode == "rel" \
                else best - self.threshold
            return current < bound
        bound = best * (1.0 + self.threshold) if self.threshold_mode == "rel" \
            else best + self.threshold
        return current > bound

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def step(self, metrics: Any) -> None:
        """Record one epoch's metric (a number or a one-element tensor)."""
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
        return list(self._last_lr)

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
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
    """Multiply the rate by ``lr_lambda(epoch)`` every epoch: η_t = η₀ · Π_{k=1..t} λ(k).

    Parameters
    ----------
    optimizer : Optimizer
    lr_lambda : callable
        Epoch -> factor.
    last_epoch : int

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
        if t < self._product_until:  # (stepping back: start over)
            self._product, self._product_until = 1.0, 0
        while self._product_until < t:
            self._product_until += 1
            self._product *= self.lr_lambda(self._product_until)
        return self._product


class ConstantLR(_FactorScheduler):
    """The rate times ``factor`` for the first ``total_iters`` epochs, then the rate itself.

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
        return self.factor_value if t < self.total_iters else 1.0


class LinearLR(_FactorScheduler):
    """A factor that moves linearly from ``start_factor`` to ``end_factor`` over
    ``total_iters`` epochs (a warm-up when it rises), then stays.

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
        done = min(t, self.total_iters) / self.total_iters if self.total_iters else 1.0
        return self.start_factor + (self.end_factor - self.start_factor) * done


class PolynomialLR(_FactorScheduler):
    """Decay to zero over ``total_iters`` epochs: η₀ (1 - min(t, T)/T)^power.

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
        return (1.0 - min(t, self.total_iters) / self.total_iters) ** self.power


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from η₀ to ``eta_min`` that restarts: first after ``T_0`` epochs,
    each next cycle ``T_mult`` times longer (SGDR, Loshchilov & Hutter).

    ``step(epoch)`` accepts fractional epochs (call it every batch with
    ``epoch + i / iters``), as in PyTorch.

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
        """Advance one epoch, or go to ``epoch`` (fractional epochs allowed)."""
        if epoch is not None:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            self.last_epoch = epoch - 1
        super().step()


class CyclicLR(LRScheduler):
    """Cycle the rate between ``base_lr`` and ``max_lr`` (Smith's cyclical learning rates);
    call ``step()`` after every batch.

    A cycle rises for ``step_size_up`` batches and falls for ``step_size_down``;
    the height is scaled by ``mode``: ``'triangular'`` (always 1),
    ``'triangular2'`` (halved each cycle) or ``'exp_range'`` (γ^batch), or by
    ``scale_fn``.  With ``cycle_momentum`` the momentum (or Adam's β₁) cycles
    the other way, between ``max_momentum`` and ``base_momentum``.

    Parameters
    ----------
    optimizer : Optimizer
    base_lr, max_lr : float or list of float
    step_size_up : int
    step_size_down : int, optional
        Defaults to ``step_size_up``.
    mode : {'triangular', 'triangular2', 'exp_range'}
    gamma : float
    scale_fn : callable, optional
    scale_mode : {'cycle', 'iterations'}
    cycle_momentum : bool
    base_momentum, max_momentum : float or list of float
    last_epoch : int

    Examples
    --------
    >>> import difflab as dl
    >>> opt = dl.optim.SGD([dl.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
    >>> sched = dl.optim.lr_scheduler.CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2)
    >>> rates = []
    >>> for _ in range(5):
    ...     rates.append(round(sched.get_last_lr()[0], 3))
    ...     opt.step()
    ...     sched.step()
    >>> rates
    [0.1, 0.3, 0.5, 0.3, 0.1]
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
        """The height multiplier at cycle (or batch) ``x``."""
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
        """Step every scheduler and set the product of their factors."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._apply()

    def get_last_lr(self) -> list[float]:
        """The learning rates set by the last ``step()``."""
        return list(self._last_lr)


class SequentialLR:
    """One scheduler after another: ``schedulers[i]`` from ``milestones[i - 1]`` on, each
    starting its own schedule from its epoch 0.

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
        """Advance one epoch, handing over to the next scheduler at each milestone."""
        import bisect

        self.last_epoch += 1
        index = bisect.bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            scheduler.last_epoch = -1  # start its schedule from its own epoch 0
        scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def get_last_lr(self) -> list[float]:
        """The learning rates set by the last ``step()``."""
        return list(self._last_lr)
