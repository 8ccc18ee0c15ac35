r"""Learning-rate schedules: call ``scheduler.step()`` once per epoch, after ``optimizer.step()``.

Each scheduler sets ``group['lr']`` of every parameter group from the
group's initial rate η₀ and the epoch counter t:

* :class:`StepLR`: η₀ · γ^⌊t / step_size⌋;
* :class:`MultiStepLR`: η₀ · γ^(number of milestones ≤ t);
* :class:`ExponentialLR`: η₀ · γᵗ;
* :class:`CosineAnnealingLR`: η_min + (η₀ - η_min)(1 + cos(πt / T_max))/2;
* :class:`LambdaLR`: η₀ · λ(t).
"""

from __future__ import annotations

import math
from collections.abc import Callable

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


_LRScheduler = LRScheduler
__all__ = ["CosineAnnealingLR", "ExponentialLR", "LRScheduler", "LambdaLR", "MultiStepLR",
           "StepLR"]

