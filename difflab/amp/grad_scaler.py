r"""``GradScaler``: loss scaling, the half of mixed precision that is plain arithmetic.

In float16 a gradient below 6·10⁻⁸ rounds to zero.  Multiplying the loss by
a scale S multiplies every gradient by S (the chain rule is linear), which
lifts them into range; before the optimizer step they are divided by S again
(*unscaled*).  If any unscaled gradient is inf or NaN the scale was too large:
the step is skipped and S is multiplied by ``backoff_factor``; after
``growth_interval`` steps without overflow S grows by ``growth_factor``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable
from typing import Any

from difflab import backend, cuda
from difflab.tensor import Tensor

_READY, _UNSCALED, _STEPPED = "ready", "unscaled", "stepped"


class GradScaler:
    """Scale the loss, unscale the gradients, skip steps that overflowed (PyTorch's API).

    On ``device='cpu'`` it is enabled; with ``device='cuda'`` and no CUDA it
    warns and disables itself, as PyTorch does: then ``scale`` returns the loss
    unchanged, ``step`` calls ``optimizer.step()``, ``update`` does nothing and
    ``get_scale`` is 1.0, so the training loop still runs.

    Parameters
    ----------
    device : {'cuda', 'cpu'}
    init_scale : float
        The first scale S.
    growth_factor, backoff_factor : float
        S is multiplied by these after ``growth_interval`` good steps / after an overflow.
    growth_interval : int
    enabled : bool

    Examples
    --------
    >>> import difflab as dl
    >>> model = dl.nn.Linear(2, 1)
    >>> opt = dl.optim.SGD(model.parameters(), lr=0.1)
    >>> scaler = dl.amp.GradScaler("cpu", init_scale=1024.0)
    >>> loss = model(dl.ones(4, 2)).pow(2).mean()
    >>> scaler.scale(loss).backward()     # gradients are 1024 times too large ...
    >>> scaler.step(opt)                  # ... and divided by 1024 before the step
    >>> scaler.update()
    >>> scaler.get_scale()
    1024.0
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        if device not in ("cuda", "cpu"):
            raise ValueError(f"GradScaler: device must be 'cuda' or 'cpu', got {device!r}")
        if growth_factor <= 1.0:
            raise ValueError(f"GradScaler: growth_factor should be > 1, got {growth_factor}")
        if not 0.0 < backoff_factor < 1.0:
            raise ValueError(f"GradScaler: backoff_factor should be in (0, 1), got "
                             f"{backoff_factor}")
        if not isinstance(growth_interval, int) or growth_interval <= 0:
            raise ValueError(f"GradScaler: growth_interval should be a positive integer, got "
                             f"{growth_interval!r}")
        self._device, self._enabled = device, bool(enabled)
        if self._enabled and device == "cuda" and not cuda.is_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", UserWarning, stacklevel=2)
            self._enabled = False
        self._scale, self._init_scale = float(init_scale), float(init_scale)
        self._growth_factor, self._backoff_factor = float(growth_factor), float(backoff_factor)
        self._growth_interval, self._growth_tracker = growth_interval, 0
        self._per_optimizer: dict[int, dict] = {}

    def is_enabled(self) -> bool:
        """Whether the scaler scales (False when disabled, e.g. CUDA asked for but absent)."""
        return self._enabled

    def get_scale(self) -> float:
        """The current scale S (1.0 when disabled)."""
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        """The factor S grows by after ``growth_interval`` good steps."""
        return self._growth_factor

    def get_backoff_factor(self) -> float:
        """The factor S is multiplied by after an overflow."""
        return self._backoff_factor

    def get_growth_interval(self) -> int:
        """How many steps without overflow make S grow."""
        return self._growth_interval

    def scale(self, outputs: Any) -> Any:
        """``outputs`` (a tensor, or a list/tuple of them) times S, recorded on the tape."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * self._scale
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError(f"GradScaler.scale: outputs must be a Tensor or an iterable of "
                         f"Tensors, got {type(outputs).__name__}")

    def _state(self, optimizer: Any) -> dict:
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY,
                                                              "found_inf": False})

    def unscale_(self, optimizer: Any) -> None:
        """Divide the gradients of ``optimizer``'s parameters by S, in place, noting any inf/NaN.

        Call it before clipping gradients (``clip_grad_norm_``) so the clipping
        sees their true size; ``step`` then does not unscale again.
        """
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        if state["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inverse, found = 1.0 / self._scale, False
        for p in _parameters(optimizer):
            if p.grad is None:
                continue
            grad = p.grad.array
            grad *= inverse
            xp = backend.array_module(grad)
            found = found or not bool(xp.isfinite(grad).all())
        state.update(stage=_UNSCALED, found_inf=found)

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscale (unless done) and call ``optimizer.step()``, unless a gradient overflowed."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        state = self._state(optimizer)
        if state["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        result = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return result

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Adjust S for the next iteration: back off after an overflow, grow after a run of
        ``growth_interval`` good steps (or set it to ``new_scale``)."""
        if not self._enabled:
            return
        if new_scale is not None:
            value = float(new_scale.item() if isinstance(new_scale, Tensor) else new_scale)
            if not math.isfinite(value) or value <= 0:
                raise ValueError(f"GradScaler.update: new_scale must be a positive finite "
                                 f"number, got {value}")
            self._scale = value
        else:
            if not self._per_optimizer:
                raise RuntimeError("No inf checks were recorded prior to update(): call "
                                   "scaler.step(optimizer) first.")
            if any(s["found_inf"] for s in self._per_optimizer.values()):
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale *= self._growth_factor
                    self._growth_tracker = 0
        self._per_optimizer = {}

    def state_dict(self) -> dict:
        """The scale and its schedule (empty when disabled), for checkpoints."""
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore what :meth:`state_dict` returned."""
        if not self._enabled:
            return
        if not state_dict:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])


def _parameters(optimizer: Any) -> Iterable[Tensor]:
    for group in optimizer.param_groups:
        yield from group["params"]
