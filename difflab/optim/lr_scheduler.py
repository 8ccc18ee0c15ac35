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
  has not improved for ``patience`` epochs.
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

