r"""Stochastic gradient descent with momentum, and the adaptive methods.

Each ``_update`` works in place on raw arrays (``p``, ``g`` and the state
buffers), with the formulas of PyTorch's documentation; g already includes
the sign flip for ``maximize``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from difflab.optim.optimizer import Optimizer, required


def _check(name: str, value: float, low: float = 0.0) -> None:
    if not value >= low:
        raise ValueError(f"Invalid {name}: {value} (must be >= {low})")


class SGD(Optimizer):
    r"""θ ← θ - lr·d, with d the (momentum-averaged) gradient.

    .. math::
        g &\leftarrow g + \lambda\theta \quad (\text{weight\_decay } \lambda) \\
        b &\leftarrow \mu b + (1 - \tau) g \quad (b = g \text{ at the first step}) \\
        d &= g + \mu b \ (\text{nesterov}) \quad\text{or}\quad d = b
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
                 maximize: bool = False) -> None:
        if lr is not required:
            _check("learning rate", lr)
        _check("momentum value", momentum)
        _check("weight_decay value", weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize))

    def _update(self, xp, p, g, state, group):
        lr, mu, wd = group["lr"], group["momentum"], group["weight_decay"]
        if wd:
            g = g + wd * p
        if mu:
            if "momentum_buffer" not in state:
                buf = self._buffer(state, "momentum_buffer", p)
                buf[...] = g
            else:
                buf = state["momentum_buffer"].array
                buf *= mu
                buf += (1.0 - group["dampening"]) * g if group["dampening"] else g
            g = g + mu * buf if group["nesterov"] else buf
        if lr == 1.0:
            p -= g
        else:
            p -= lr * g


class Adam(Optimizer):
    r"""Adaptive moments (Kingma & Ba).

    .. math::
        m &\leftarrow \beta_1 m + (1-\beta_1) g, \qquad v \leftarrow \beta_2 v + (1-\beta_2) g^2 \\
        \theta &\leftarrow \theta - \mathrm{lr}\,
            \frac{m / (1-\beta_1^t)}{\sqrt{v / (1-\beta_2^t)} + \epsilon}

    ``weight_decay`` adds λθ to g (L2 penalty); :class:`AdamW` decays θ directly.
    ``amsgrad`` uses the running maximum of v.
    """

    _decoupled = False

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, amsgrad: bool = False,
                 maximize: bool = False) -> None:
        _check("learning rate", lr)
        _check("epsilon value", eps)
        if not (0.0 <= betas[0] < 1.0 and 0.0 <= betas[1] < 1.0):
            raise ValueError(f"Invalid beta parameters: {betas} (each must be in [0, 1))")
        _check("weight_decay value", weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize))

    def _update(self, xp, p, g, state, group):
        lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        if wd:
            if self._decoupled:
                p *= 1.0 - lr * wd
            else:
                g = g + wd * p
        state["step"] = step = state.get("step", 0) + 1
        m = self._buffer(state, "exp_avg", p)
        v = self._buffer(state, "exp_avg_sq", p)
        m *= b1
        m += (1.0 - b1) * g
        v *= b2
        v += (1.0 - b2) * (g * g)
        if group["amsgrad"]:
            v_max = self._buffer(state, "max_exp_avg_sq", p)
            xp.maximum(v_max, v, out=v_max)
            v = v_max
        bias1, bias2 = 1.0 - b1**step, 1.0 - b2**step
        denom = xp.sqrt(v) * (1.0 / math.sqrt(bias2))
        denom += eps
        p -= (lr / bias1) * (m / denom)


class AdamW(Adam):
    """Adam with *decoupled* weight decay: θ ← θ(1 - lr·λ) before the Adam step."""

    _decoupled = True

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False,
                 maximize: bool = False) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize)


class SparseAdam(Optimizer):
    r"""The lazy Adam of sparse gradients: only the rows a gradient touches are updated.

    PyTorch's ``SparseAdam`` takes the sparse gradients of ``Embedding(sparse=True)``:
    the rows looked up.  difflab's gradients are dense, so a row *present* is a row
    with a non-zero entry (an embedding row nobody looked up has a zero gradient);
    only those rows' moments and values change, the others keep their state (where
    :class:`Adam` would decay every moment).  On the present rows:

    .. math::
        m \leftarrow \beta_1 m + (1-\beta_1) g, \qquad
        v \leftarrow \beta_2 v + (1-\beta_2) g^2, \qquad
        \theta \leftarrow \theta - \mathrm{lr}\,\frac{\sqrt{1-\beta_2^t}}{1-\beta_1^t}
            \,\frac{m}{\sqrt{v} + \epsilon}

    (``t`` counts this parameter's steps; ε is added to √v before the bias correction,
    as PyTorch's).  A row whose gradient is exactly zero everywhere counts as absent,
    where PyTorch would update a looked-up row with a zero gradient.

    Examples
    --------
    >>> import difflab as dl
    >>> table = dl.nn.Embedding(4, 2)
    >>> optimizer = dl.optim.SparseAdam(table.parameters(), lr=0.1)
    >>> before = table.weight.detach().clone()
    >>> table(dl.tensor([1])).sum().backward()
    >>> optimizer.step()
    >>> (table.weight.detach() != before).any(1).tolist()     # only row 1 moved
    [False, True, False, False]
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, maximize: bool = False) -> None:
        _check("learning rate", lr)
        if not eps > 0.0:
            raise ValueError(f"Invalid epsilon value: {eps} (must be > 0)")
        if not (0.0 <= betas[0] < 1.0 and 0.0 <= betas[1] < 1.0):
            raise ValueError(f"Invalid beta parameters: {betas} (each must be in [0, 1))")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, maximize=maximize))

    def _update(self, xp, p, g, state, group):
        lr, (b1, b2), eps = group["lr"], group["betas"], group["eps"]
        state["step"] = step = state.get("step", 0) + 1
        m = self._buffer(state, "exp_avg", p)
        v = self._buffer(state, "exp_avg_sq", p)
        rows = (g != 0).reshape(g.shape[0], -1).any(1) if g.ndim else (g != 0).reshape(1)
        present = rows.reshape((-1,) + (1,) * (g.ndim - 1)) if g.ndim else rows[0]
        m[...] = xp.where(present, b1 * m + (1.0 - b1) * g, m)
        v[...] = xp.where(present, b2 * v + (1.0 - b2) * (g * g), v)
        step_size = lr * math.sqrt(1.0 - b2**step) / (1.0 - b1**step)
        p -= xp.where(present, step_size * m / (xp.sqrt(v) + eps), 0.0).astype(p.dtype)


class RMSprop(Optimizer):
    r"""Divide the gradient by a running root-mean-square of recent gradients.

    .. math::
        v \leftarrow \alpha v + (1-\alpha) g^2, \qquad
        \theta \leftarrow \theta - \mathrm{lr}\, g / (\sqrt{v} + \epsilon)

    ``centered`` subtracts the squared running mean of g from v; ``momentum``
    accumulates the step in a buffer.
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0.0, momentum: float = 0.0,
                 centered: bool = False, maximize: bool = False) -> None:
        _check("learning rate", lr)
        _check("epsilon value", eps)
        _check("momentum value", momentum)
        _check("alpha value", alpha)
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered, maximize=maximize))

    def _update(self, xp, p, g, state, group):
        lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p
        state["step"] = state.get("step", 0) + 1
        v = self._buffer(state, "square_avg", p)
        v *= alpha
        v += (1.0 - alpha) * (g * g)
        if group["centered"]:
            mean = self._buffer(state, "grad_avg", p)
            mean *= alpha
            mean += (1.0 - alpha) * g
            denom = xp.sqrt(v - mean * mean) + eps
        else:
            denom = xp.sqrt(v) + eps
        if group["momentum"] > 0:
            buf = self._buffer(state, "momentum_buffer", p)
            buf *= group["momentum"]
            buf += g / denom
            p -= lr * buf
        else:
            p -= lr * (g / denom)


class Adagrad(Optimizer):
    r"""Per-coordinate learning rates from the sum of all past squared gradients.

    .. math::
        s \leftarrow s + g^2, \qquad
        \theta \leftarrow \theta - \frac{\mathrm{lr}}{1 + (t-1)\,\mathrm{lr\_decay}}
            \frac{g}{\sqrt{s} + \epsilon}
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lr_decay: float = 0.0,
                 weight_decay: float = 0.0, initial_accumulator_value: float = 0.0,
                 eps: float = 1e-10, maximize: bool = False) -> None:
        _check("learning rate", lr)
        _check("lr_decay", lr_decay)
        _check("initial_accumulator_value", initial_accumulator_value)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      eps=eps, maximize=maximize))

    def _update(self, xp, p, g, state, group):
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p
        state["step"] = step = state.get("step", 0) + 1
        s = self._buffer(state, "sum", p, group["initial_accumulator_value"])
        s += g * g
        clr = group["lr"] / (1.0 + (step - 1) * group["lr_decay"])
        p -= clr * (g / (xp.sqrt(s) + group["eps"]))
