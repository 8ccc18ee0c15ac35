r"""Stochastic gradient descent with momentum, and the adaptive methods.

Each ``_update`` works in place on raw arrays (``p``, ``g`` and the state
buffers), with the formulas of PyTorch's documentation; g already includes
the sign flip for ``maximize``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from difflab.optim import foreach
from difflab.optim.optimizer import Optimizer, check_implementation, required


def _check(name: str, value: float, low: float = 0.0) -> None:
    if not value >= low:
        raise ValueError(f"Invalid {name}: {value} (must be >= {low})")


class SGD(Optimizer):
    r"""Stochastic gradient descent, with momentum, Nesterov momentum and weight decay.

    .. math::
        g &\leftarrow g + \lambda\theta \quad (\text{weight\_decay } \lambda) \\
        b &\leftarrow \mu b + (1 - \tau) g \quad (b = g \text{ at the first step}) \\
        d &= g + \mu b \ (\text{nesterov}), \quad d = b, \quad\text{or } d = g \ (\mu = 0) \\
        \theta &\leftarrow \theta - \text{lr} \cdot d

    (:math:`g` is negated first when ``maximize``.)

    Parameters
    ----------
    params : iterable of Tensor or of dict
        The parameters, or parameter groups (see :class:`Optimizer`).
    lr : float, default 1e-3
        The learning rate, >= 0.
    momentum : float, default 0.0
        :math:`\mu`, the momentum factor, >= 0.
    dampening : float, default 0.0
        :math:`\tau`, the dampening of the momentum.
    weight_decay : float, default 0.0
        :math:`\lambda`, an L2 penalty added to the gradient, >= 0.
    nesterov : bool, default False
        Nesterov momentum (needs ``momentum > 0`` and ``dampening == 0``).
    maximize : bool, default False
        Maximise the objective instead of minimising it.
    foreach, fused : bool, optional
        PyTorch's choices of implementation; accepted (the same numbers).
    capturable : bool, default False
        Accepted (PyTorch's CUDA-graph switch).
    differentiable : bool, default False
        Only False (see ``difflab.optim.optimizer.check_implementation``).

    Attributes
    ----------
    state : dict
        Per parameter: ``"momentum_buffer"`` (:math:`b`) when ``momentum > 0``.

    Raises
    ------
    ValueError
        For a negative ``lr``, ``momentum`` or ``weight_decay``, or Nesterov without
        momentum or with dampening.

    See Also
    --------
    Adam, RMSprop, ASGD

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn, optim
    >>> p = nn.Parameter(dl.tensor([1.0, 2.0]))
    >>> opt = optim.SGD([p], lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (p ** 2).sum().backward()       # gradient 2p
    ...     opt.step()
    >>> p.detach()                          # 0.8p, then 0.8p - 0.1(0.9·2p + 1.6p)
    tensor([0.46, 0.92])
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
                 maximize: bool = False, *,
                 foreach: bool | None = None, fused: bool | None = None,
                 capturable: bool = False, differentiable: bool = False) -> None:
        check_implementation(foreach, fused, capturable, differentiable)
        if lr is not required:
            _check("learning rate", lr)
        _check("momentum value", momentum)
        _check("weight_decay value", weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize))

    _flat_step = staticmethod(foreach.sgd_step)  # (speed shortcut: optim/foreach.py)

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
    r"""Adam: adaptive moment estimation (Kingma and Ba, 2015).

    .. math::
        g &\leftarrow g + \lambda\theta \quad (\text{weight\_decay } \lambda) \\
        m &\leftarrow \beta_1 m + (1-\beta_1) g, \qquad v \leftarrow \beta_2 v + (1-\beta_2) g^2 \\
        \theta &\leftarrow \theta - \mathrm{lr}\,
            \frac{m / (1-\beta_1^t)}{\sqrt{v / (1-\beta_2^t)} + \epsilon}

    with :math:`t` the step count.  The bias corrections make the first step
    :math:`\approx \text{lr} \cdot \operatorname{sign}(g)`, whatever the gradient's
    scale.  ``amsgrad`` uses the running maximum of :math:`v` instead of :math:`v`.

    Parameters
    ----------
    params : iterable of Tensor or of dict
        The parameters, or parameter groups (see :class:`Optimizer`).
    lr : float, default 1e-3
        The learning rate, >= 0.
    betas : tuple of 2 floats, default (0.9, 0.999)
        :math:`(\beta_1, \beta_2)`, each in :math:`[0, 1)`.
    eps : float, default 1e-8
        :math:`\epsilon`, added to the denominator, >= 0.
    weight_decay : float, default 0.0
        :math:`\lambda`, an L2 penalty added to the gradient (see :class:`AdamW`
        for the decoupled decay).
    amsgrad : bool, default False
        The AMSGrad variant.
    maximize : bool, default False
        Maximise the objective.
    foreach, fused : bool, optional
        PyTorch's choices of implementation; accepted (the same numbers).
    capturable : bool, default False
        Accepted (PyTorch's CUDA-graph switch).
    differentiable : bool, default False
        Only False (see ``difflab.optim.optimizer.check_implementation``).

    Attributes
    ----------
    state : dict
        Per parameter: ``"step"`` (int), ``"exp_avg"`` (:math:`m`), ``"exp_avg_sq"``
        (:math:`v`) and, with ``amsgrad``, ``"max_exp_avg_sq"``.

    Raises
    ------
    ValueError
        For a negative ``lr``, ``eps`` or ``weight_decay``, or a beta outside :math:`[0, 1)`.

    See Also
    --------
    AdamW, NAdam, RAdam, Adamax

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn, optim
    >>> p = nn.Parameter(dl.tensor([1.0, 2.0]))
    >>> opt = optim.Adam([p], lr=0.1)
    >>> (p ** 2).sum().backward()
    >>> opt.step()
    >>> p.detach()                          # each coordinate moved by lr, whatever its gradient
    tensor([0.9, 1.9])
    >>> opt.state[p]["step"]
    1
    """

    _decoupled = False
    _flat_step = staticmethod(foreach.adam_step)  # (speed shortcut: optim/foreach.py)

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, amsgrad: bool = False,
                 maximize: bool = False, *,
                 foreach: bool | None = None, fused: bool | None = None,
                 capturable: bool = False, differentiable: bool = False) -> None:
        check_implementation(foreach, fused, capturable, differentiable)
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
    r"""Adam with *decoupled* weight decay (Loshchilov and Hutter, 2019).

    .. math::
        \theta \leftarrow \theta\,(1 - \mathrm{lr}\cdot\lambda), \quad\text{then Adam's step}

    The decay shrinks the weights directly instead of adding :math:`\lambda\theta`
    to the gradient (where Adam's normalisation would scale it away).

    Parameters
    ----------
    params : iterable of Tensor or of dict
        The parameters, or parameter groups.
    lr : float, default 1e-3
        The learning rate.
    betas : tuple of 2 floats, default (0.9, 0.999)
        :math:`(\beta_1, \beta_2)`.
    eps : float, default 1e-8
        Added to the denominator.
    weight_decay : float, default 1e-2
        :math:`\lambda`, the decoupled decay.
    amsgrad : bool, default False
        The AMSGrad variant.
    maximize : bool, default False
        Maximise the objective.
    foreach, fused : bool, optional
        PyTorch's choices of implementation; accepted (the same numbers).
    capturable : bool, default False
        Accepted (PyTorch's CUDA-graph switch).
    differentiable : bool, default False
        Only False (see ``difflab.optim.optimizer.check_implementation``).

    Attributes
    ----------
    state : dict
        As :class:`Adam`'s.

    Raises
    ------
    ValueError
        As :class:`Adam`.

    See Also
    --------
    Adam

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn, optim
    >>> p = nn.Parameter(dl.tensor([1.0, 2.0]))
    >>> opt = optim.AdamW([p], lr=0.1, weight_decay=0.5)
    >>> (p ** 2).sum().backward()
    >>> opt.step()
    >>> p.detach()                          # 0.95·p, then the Adam step of 0.1
    tensor([0.85, 1.8 ])
    """

    _decoupled = True
    _flat_step = staticmethod(foreach.adam_step)  # (speed shortcut: optim/foreach.py)

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False,
                 maximize: bool = False, *,
                 foreach: bool | None = None, fused: bool | None = None,
                 capturable: bool = False, differentiable: bool = False) -> None:
        check_implementation(foreach, fused, capturable, differentiable)
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

    Parameters
    ----------
    params : iterable of Tensor or of dict
        The parameters (typically an embedding table's), or parameter groups (see
        :class:`Optimizer`).
    lr : float, default 1e-3
        The learning rate, >= 0.
    betas : tuple of 2 floats, default (0.9, 0.999)
        :math:`(\beta_1, \beta_2)`, each in :math:`[0, 1)`.
    eps : float, default 1e-8
        :math:`\epsilon`, added to :math:`\sqrt v`; must be > 0.
    maximize : bool, default False
        Maximise the objective.
    foreach, fused : bool, optional
        PyTorch's choices of implementation; accepted (the same numbers).
    capturable : bool, default False
        Accepted (PyTorch's CUDA-graph switch).
    differentiable : bool, default False
        Only False (see ``difflab.optim.optimizer.check_implementation``).

    Attributes
    ----------
    state : dict
        Per parameter: ``"step"`` (int), ``"exp_avg"`` (:math:`m`) and ``"exp_avg_sq"``
        (:math:`v`); the rows of absent gradients keep their values.

    Raises
    ------
    ValueError
        For a negative ``lr``, an ``eps`` that is not > 0, or a beta outside
        :math:`[0, 1)`.

    See Also
    --------
    Adam : updates every row, decaying every moment.
    difflab.nn.Embedding : the table whose rows this updates.

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
                 eps: float = 1e-8, maximize: bool = False, *,
                 foreach: bool | None = None, fused: bool | None = None,
                 capturable: bool = False, differentiable: bool = False) -> None:
        check_implementation(foreach, fused, capturable, differentiable)
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
    r"""RMSprop: divide the gradient by a running root-mean-square of recent gradients (Hinton).

    .. math::
        v &\leftarrow \alpha v + (1-\alpha) g^2 \\
        \theta &\leftarrow \theta - \mathrm{lr}\, \frac{g}{\sqrt{v} + \epsilon}

    ``centered`` subtracts the square of the running mean of :math:`g` from
    :math:`v` (an estimate of the variance); ``momentum`` :math:`\mu` accumulates
    the step: :math:`b \leftarrow \mu b + g/(\sqrt v + \epsilon)`,
    :math:`\theta \leftarrow \theta - \text{lr}\, b`.

    Parameters
    ----------
    params : iterable of Tensor or of dict
        The parameters, or parameter groups.
    lr : float, default 1e-2
        The learning rate, >= 0.
    alpha : float, default 0.99
        :math:`\alpha`, the smoothing constant, >= 0.
    eps : float, default 1e-8
        Added to the denominator, >= 0.
    weight_decay : float, default 0.0
        An L2 penalty added to the gradient.
    momentum : float, default 0.0
        :math:`\mu`, >= 0.
    centered : bool, default False
        Normalise by the estimated variance instead of the second moment.
    maximize : bool, default False
        Maximise the objective.
    foreach, fused : bool, optional
        PyTorch's choices of implementation; accepted (the same numbers).
    capturable : bool, default False
        Accepted (PyTorch's CUDA-graph switch).
    differentiable : bool, default False
        Only False (see ``difflab.optim.optimizer.check_implementation``).

    Attributes
    ----------
    state : dict
        Per parameter: ``"step"``, ``"square_avg"`` (:math:`v`), and
        ``"grad_avg"`` (centered) and ``"momentum_buffer"`` when used.

    Raises
    ------
    ValueError
        For a negative ``lr``, ``eps``, ``momentum`` or ``alpha``.

    See Also
    --------
    Adam, Adagrad, Adadelta

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn, optim
    >>> p = nn.Parameter(dl.tensor([1.0, 2.0]))
    >>> opt = optim.RMSprop([p], lr=0.01)
    >>> (p ** 2).sum().backward()
    >>> opt.step()
    >>> p.detach()                          # g / sqrt(0.01 g²) = 10 sign(g)
    tensor([0.9, 1.9])
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0.0, momentum: float = 0.0,
                 centered: bool = False, maximize: bool = False, *,
                 foreach: bool | None = None, fused: bool | None = None,
                 capturable: bool = False, differentiable: bool = False) -> None:
        check_implementation(foreach, fused, capturable, differentiable)
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
    r"""Adagrad: per-coordinate learning rates from the sum of the past squared gradients.

    .. math::
        s &\leftarrow s + g^2 \\
        \theta &\leftarrow \theta - \frac{\mathrm{lr}}{1 + (t-1)\,\mathrm{lr\_decay}}
            \frac{g}{\sqrt{s} + \epsilon}

    Coordinates with large past gradients take smaller steps; the steps shrink
    over time, as :math:`s` only grows.

    Parameters
    ----------
    params : iterable of Tensor or of dict
        The parameters, or parameter groups.
    lr : float, default 1e-2
        The learning rate, >= 0.
    lr_decay : float, default 0.0
        The decay of the learning rate with the step count :math:`t`, >= 0.
    weight_decay : float, default 0.0
        An L2 penalty added to the gradient.
    initial_accumulator_value : float, default 0.0
        The starting value of :math:`s`, >= 0.
    eps : float, default 1e-10
        Added to the denominator.
    maximize : bool, default False
        Maximise the objective.
    foreach, fused : bool, optional
        PyTorch's choices of implementation; accepted (the same numbers).
    capturable : bool, default False
        Accepted (PyTorch's CUDA-graph switch).
    differentiable : bool, default False
        Only False (see ``difflab.optim.optimizer.check_implementation``).

    Attributes
    ----------
    state : dict
        Per parameter: ``"step"`` and ``"sum"`` (:math:`s`).

    Raises
    ------
    ValueError
        For a negative ``lr``, ``lr_decay`` or ``initial_accumulator_value``.

    See Also
    --------
    RMSprop, Adadelta, Adam

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn, optim
    >>> p = nn.Parameter(dl.tensor([1.0, 2.0]))
    >>> opt = optim.Adagrad([p], lr=0.1)
    >>> (p ** 2).sum().backward()
    >>> opt.step()
    >>> p.detach()                          # g / sqrt(g²): a step of lr per coordinate
    tensor([0.9, 1.9])
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lr_decay: float = 0.0,
                 weight_decay: float = 0.0, initial_accumulator_value: float = 0.0,
                 eps: float = 1e-10, maximize: bool = False, *,
                 foreach: bool | None = None, fused: bool | None = None,
                 capturable: bool = False, differentiable: bool = False) -> None:
        check_implementation(foreach, fused, capturable, differentiable)
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
