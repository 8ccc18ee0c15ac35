r"""More of PyTorch's optimizers: Adadelta, Adamax, NAdam, RAdam, Rprop and ASGD.

Each ``_update`` works in place on raw arrays (``p``, ``g`` and the state
buffers) with the formulas of PyTorch's documentation, like those of
:mod:`difflab.optim.sgd`; ``g`` already has the sign flip for ``maximize``.
Nothing here is differentiated: an update is arithmetic on arrays.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from difflab.optim.optimizer import Optimizer, check_implementation
from difflab.optim.sgd import _check


def _betas(betas: Any) -> tuple:
    if not (0.0 <= betas[0] < 1.0 and 0.0 <= betas[1] < 1.0):
        raise ValueError(f"Invalid beta parameters: {betas} (each must be in [0, 1))")
    return tuple(betas)


class Adadelta(Optimizer):
    r"""Step sizes from running averages of squared gradients *and* squared steps (Zeiler).

    .. math::
        v &\leftarrow \rho v + (1-\rho) g^2, \qquad
        \Delta = \frac{\sqrt{u + \epsilon}}{\sqrt{v + \epsilon}}\, g, \qquad
        u \leftarrow \rho u + (1-\rho) \Delta^2, \qquad
        \theta \leftarrow \theta - \mathrm{lr}\,\Delta

    The ratio has the units of θ, so ``lr=1.0`` (the default) needs no tuning.

    Parameters
    ----------
    params : iterable of Tensor or dict
    lr : float
    rho : float
        Decay of both running averages.
    eps : float
    weight_decay : float
        Adds λθ to g.
    maximize : bool
        Maximise the objective instead of minimising it.
    foreach, fused : bool, optional
        PyTorch's choices of implementation; accepted (the same numbers).
    capturable : bool, default False
        Accepted (PyTorch's CUDA-graph switch).
    differentiable : bool, default False
        Only False (see ``difflab.optim.optimizer.check_implementation``).

    Examples
    --------
    >>> import difflab as dl
    >>> w = dl.tensor([3.0], requires_grad=True)
    >>> opt = dl.optim.Adadelta([w])
    >>> (w ** 2).sum().backward()
    >>> opt.step()
    >>> round(w.item(), 5)        # Δ = √ε/√(0.1·36 + ε) · 6 at the first step
    2.99684
    """

    def __init__(self, params: Iterable[Any], lr: float = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0.0, maximize: bool = False, *,
                 foreach: bool | None = None, fused: bool | None = None,
                 capturable: bool = False, differentiable: bool = False) -> None:
        check_implementation(foreach, fused, capturable, differentiable)
        _check("learning rate", lr)
        _check("epsilon value", eps)
        _check("weight_decay value", weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho} (must be in [0, 1])")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize))

    def _update(self, xp, p, g, state, group):
        rho, eps = group["rho"], group["eps"]
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p
        state["step"] = state.get("step", 0) + 1
        v = self._buffer(state, "square_avg", p)
        u = self._buffer(state, "acc_delta", p)
        v *= rho
        v += (1.0 - rho) * (g * g)
        delta = xp.sqrt(u + eps) / xp.sqrt(v + eps) * g
        u *= rho
        u += (1.0 - rho) * (delta * delta)
        p -= group["lr"] * delta


class Adamax(Optimizer):
    r"""Adam with the infinity norm: the second moment becomes a running maximum of \|g\|.

    .. math::
        m \leftarrow \beta_1 m + (1-\beta_1) g, \qquad
        u \leftarrow \max(\beta_2 u,\ |g| + \epsilon), \qquad
        \theta \leftarrow \theta - \frac{\mathrm{lr}}{1-\beta_1^t}\,\frac{m}{u}

    Parameters
    ----------
    params : iterable of Tensor or dict
    lr : float
    betas : (float, float)
    eps : float
    weight_decay : float
    maximize : bool
        Maximise the objective instead of minimising it.
    foreach, fused : bool, optional
        PyTorch's choices of implementation; accepted (the same numbers).
    capturable : bool, default False
        Accepted (PyTorch's CUDA-graph switch).
    differentiable : bool, default False
        Only False (see ``difflab.optim.optimizer.check_implementation``).

    Examples
    --------
    >>> import difflab as dl
    >>> w = dl.tensor([3.0], requires_grad=True)
    >>> opt = dl.optim.Adamax([w], lr=0.1)
    >>> (w ** 2).sum().backward()
    >>> opt.step()
    >>> round(w.item(), 6)        # the first step is lr · sign(g), less ε
    2.9
    """

    def __init__(self, params: Iterable[Any], lr: float = 2e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, maximize: bool = False, *,
                 foreach: bool | None = None, fused: bool | None = None,
                 capturable: bool = False, differentiable: bool = False) -> None:
        check_implementation(foreach, fused, capturable, differentiable)
        _check("learning rate", lr)
        _check("epsilon value", eps)
        _check("weight_decay value", weight_decay)
        super().__init__(params, dict(lr=lr, betas=_betas(betas), eps=eps,
                                      weight_decay=weight_decay, maximize=maximize))

    def _update(self, xp, p, g, state, group):
        (b1, b2), eps = group["betas"], group["eps"]
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p
        state["step"] = step = state.get("step", 0) + 1
        m = self._buffer(state, "exp_avg", p)
        u = self._buffer(state, "exp_inf", p)
        m *= b1
        m += (1.0 - b1) * g
        u *= b2
        xp.maximum(u, xp.abs(g) + eps, out=u)
        p -= (group["lr"] / (1.0 - b1**step)) * (m / u)


class NAdam(Optimizer):
    r"""Adam with Nesterov momentum (Dozat), with PyTorch's momentum schedule.

    .. math::
        \mu_t &= \beta_1\,(1 - \tfrac12\, 0.96^{t\psi}), \qquad
        \Pi_t = \textstyle\prod_{i\le t} \mu_i \\
        \theta &\leftarrow \theta - \mathrm{lr}\,\frac{1-\mu_t}{1-\Pi_t}\,\frac{g}{d}
            - \mathrm{lr}\,\frac{\mu_{t+1}}{1-\Pi_t\mu_{t+1}}\,\frac{m}{d},
            \qquad d = \sqrt{v/(1-\beta_2^t)} + \epsilon

    with m, v Adam's moment estimates and ψ = ``momentum_decay``.

    Parameters
    ----------
    params : iterable of Tensor or dict
    lr : float
    betas : (float, float)
    eps : float
    weight_decay : float
    momentum_decay : float
    decoupled_weight_decay : bool
        Decay θ directly (as AdamW) instead of adding λθ to g.
    maximize : bool
        Maximise the objective instead of minimising it.
    foreach, fused : bool, optional
        PyTorch's choices of implementation; accepted (the same numbers).
    capturable : bool, default False
        Accepted (PyTorch's CUDA-graph switch).
    differentiable : bool, default False
        Only False (see ``difflab.optim.optimizer.check_implementation``).

    Examples
    --------
    >>> import difflab as dl
    >>> w = dl.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = dl.optim.NAdam([w], lr=0.1)
    >>> for _ in range(100):
    ...     opt.zero_grad()
    ...     (w ** 2).sum().backward()
    ...     opt.step()
    >>> bool((w.abs() < 0.1).all())
    True
    """

    def __init__(self, params: Iterable[Any], lr: float = 2e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, maximize: bool = False, *,
                 foreach: bool | None = None, fused: bool | None = None,
                 capturable: bool = False, differentiable: bool = False) -> None:
        check_implementation(foreach, fused, capturable, differentiable)
        _check("learning rate", lr)
        _check("epsilon value", eps)
        _check("weight_decay value", weight_decay)
        _check("momentum_decay value", momentum_decay)
        super().__init__(params, dict(lr=lr, betas=_betas(betas), eps=eps,
                                      weight_decay=weight_decay, momentum_decay=momentum_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize))

    def _update(self, xp, p, g, state, group):
        lr, (b1, b2), eps = group["lr"], group["betas"], group["eps"]
        if group["weight_decay"]:
            if group["decoupled_weight_decay"]:
                p *= 1.0 - lr * group["weight_decay"]
            else:
                g = g + group["weight_decay"] * p
        state["step"] = step = state.get("step", 0) + 1
        psi = group["momentum_decay"]
        mu = b1 * (1.0 - 0.5 * 0.96 ** (step * psi))
        mu_next = b1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * psi))
        state["mu_product"] = product = state.get("mu_product", 1.0) * mu
        m = self._buffer(state, "exp_avg", p)
        v = self._buffer(state, "exp_avg_sq", p)
        m *= b1
        m += (1.0 - b1) * g
        v *= b2
        v += (1.0 - b2) * (g * g)
        denom = xp.sqrt(v / (1.0 - b2**step)) + eps
        p -= (lr * (1.0 - mu) / (1.0 - product)) * (g / denom)
        p -= (lr * mu_next / (1.0 - product * mu_next)) * (m / denom)


class RAdam(Optimizer):
    r"""Rectified Adam (Liu et al., 2020): Adam that waits until its variance estimate is reliable.

    In the first steps the running average :math:`v` of :math:`g^2` rests on a few
    gradients and Adam's step is erratic (which is why Adam needs a warm-up).  RAdam takes
    plain momentum-SGD steps while the estimate's degrees of freedom :math:`\rho_t` are at
    most 5, then Adam's step scaled by a rectification factor :math:`r_t` that grows to 1.

    Parameters
    ----------
    params : iterable of Tensor or of dict
        The parameters, or parameter groups (see :class:`Optimizer`).
    lr : float, default 1e-3
        The learning rate, >= 0.
    betas : tuple of 2 floats, default (0.9, 0.999)
        :math:`(\beta_1, \beta_2)`, each in :math:`[0, 1)`.
    eps : float, default 1e-8
        :math:`\epsilon`, added to :math:`\sqrt v`, >= 0.
    weight_decay : float, default 0.0
        :math:`\lambda`, an L2 penalty added to the gradient, >= 0.
    decoupled_weight_decay : bool, default False
        Decay the weights directly, :math:`\theta \leftarrow \theta(1 - \mathrm{lr}\,\lambda)`,
        as :class:`AdamW` does, instead of adding :math:`\lambda\theta` to the gradient.
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
        (:math:`v`).

    Raises
    ------
    ValueError
        For a negative ``lr``, ``eps`` or ``weight_decay``, or a beta outside :math:`[0, 1)`.

    See Also
    --------
    Adam : without the rectification.
    AdamW : the decoupled weight decay.

    Notes
    -----
    With :math:`m, v` Adam's moments and :math:`\hat m = m / (1 - \beta_1^t)`:

    .. math::
        \rho_\infty = \tfrac{2}{1-\beta_2} - 1, \qquad
        \rho_t = \rho_\infty - \tfrac{2t\beta_2^t}{1-\beta_2^t} \\
        \theta \leftarrow \theta - \mathrm{lr}\,\hat m\ \text{ if } \rho_t \le 5, \quad
        \text{else}\ \theta - \mathrm{lr}\,\hat m\,
            \frac{\sqrt{1-\beta_2^t}}{\sqrt{v} + \epsilon}\, r_t, \quad
        r_t = \sqrt{\tfrac{(\rho_t-4)(\rho_t-2)\rho_\infty}{(\rho_\infty-4)(\rho_\infty-2)\rho_t}}

    With the default :math:`\beta_2 = 0.999` the first 5 steps are momentum SGD.

    Examples
    --------
    >>> import difflab as dl
    >>> w = dl.tensor([3.0], requires_grad=True)
    >>> opt = dl.optim.RAdam([w], lr=0.1)
    >>> path = []
    >>> for _ in range(7):
    ...     opt.zero_grad()
    ...     (w ** 2).sum().backward()
    ...     opt.step()
    ...     path.append(round(w.item(), 4))
    >>> path     # 5 momentum-SGD steps (the first: 3 - 0.1 * 6), then small rectified ones
    [2.4, 1.8632, 1.3869, 0.9685, 0.6049, 0.6028, 0.6003]
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0,
                 decoupled_weight_decay: bool = False, maximize: bool = False, *,
                 foreach: bool | None = None, fused: bool | None = None,
                 capturable: bool = False, differentiable: bool = False) -> None:
        check_implementation(foreach, fused, capturable, differentiable)
        _check("learning rate", lr)
        _check("epsilon value", eps)
        _check("weight_decay value", weight_decay)
        super().__init__(params, dict(lr=lr, betas=_betas(betas), eps=eps,
                                      weight_decay=weight_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize))

    def _update(self, xp, p, g, state, group):
        lr, (b1, b2), eps = group["lr"], group["betas"], group["eps"]
        if group["weight_decay"]:
            if group["decoupled_weight_decay"]:
                p *= 1.0 - lr * group["weight_decay"]
            else:
                g = g + group["weight_decay"] * p
        state["step"] = step = state.get("step", 0) + 1
        m = self._buffer(state, "exp_avg", p)
        v = self._buffer(state, "exp_avg_sq", p)
        m *= b1
        m += (1.0 - b1) * g
        v *= b2
        v += (1.0 - b2) * (g * g)
        bias1, bias2 = 1.0 - b1**step, 1.0 - b2**step
        rho_inf = 2.0 / (1.0 - b2) - 1.0
        rho_t = rho_inf - 2.0 * step * b2**step / bias2
        if rho_t > 5.0:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                             / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            p -= (lr / bias1 * rect * math.sqrt(bias2)) * (m / (xp.sqrt(v) + eps))
        else:
            p -= (lr / bias1) * m


class Rprop(Optimizer):
    r"""Resilient backpropagation (Riedmiller and Braun, 1993): per-weight step sizes, signs only.

    Each weight has its own step size, grown while its gradient keeps its sign and shrunk
    when the sign flips (the last step jumped over a minimum); the step moves the weight
    by that size against the gradient's sign, whatever the gradient's magnitude.  Meant
    for full-batch training (the sign of a noisy gradient says little).

    Parameters
    ----------
    params : iterable of Tensor or of dict
        The parameters, or parameter groups (see :class:`Optimizer`).
    lr : float, default 1e-2
        The initial step size of every weight, >= 0.
    etas : tuple of 2 floats, default (0.5, 1.2)
        :math:`(\eta_-, \eta_+)`: the shrink and growth factors,
        :math:`0 < \eta_- < 1 < \eta_+`.
    step_sizes : tuple of 2 floats, default (1e-6, 50.0)
        :math:`(\eta_{\min}, \eta_{\max})`, the bounds of each step size.
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
        Per parameter: ``"step"`` (int), ``"prev"`` (the previous gradient, 0 after a sign
        flip) and ``"step_size"`` (:math:`\eta_i`).

    Raises
    ------
    ValueError
        For a negative ``lr``, or ``etas`` not :math:`0 < \eta_- < 1 < \eta_+`.

    See Also
    --------
    SGD : steps proportional to the gradient.
    Adam : also nearly scale-free steps, from the moments.

    Notes
    -----
    The update rule, per weight :math:`i`:

    .. math::
        \eta_i \leftarrow \begin{cases}
            \min(\eta_i \eta_+, \eta_{\max}) & g_i g_i^{\text{prev}} > 0 \\
            \max(\eta_i \eta_-, \eta_{\min}) & g_i g_i^{\text{prev}} < 0
                \ (\text{then } g_i = 0)\\
            \eta_i & \text{otherwise} \end{cases}, \qquad
        \theta_i \leftarrow \theta_i - \eta_i\,\mathrm{sign}(g_i)

    After a sign flip the weight waits one step (:math:`g_i = 0` is stored as the
    previous gradient).

    Examples
    --------
    >>> import difflab as dl
    >>> w = dl.tensor([3.0, -1.0], requires_grad=True)
    >>> opt = dl.optim.Rprop([w], lr=0.5)
    >>> (w ** 2).sum().backward()
    >>> opt.step()
    >>> w.tolist()                # each weight moved by lr against its gradient's sign
    [2.5, -0.5]
    >>> opt.zero_grad()
    >>> (w ** 2).sum().backward()
    >>> opt.step()                # same signs: both steps grow to 0.5 * 1.2
    >>> [round(v, 4) for v in w.tolist()]
    [1.9, 0.1]
    >>> dl.optim.Rprop([w], etas=(1.5, 1.2))
    Traceback (most recent call last):
        ...
    ValueError: Invalid eta values: (1.5, 1.2) (need 0 < etaminus < 1 < etaplus)
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, etas: tuple = (0.5, 1.2),
                 step_sizes: tuple = (1e-6, 50.0), maximize: bool = False, *,
                 foreach: bool | None = None, fused: bool | None = None,
                 capturable: bool = False, differentiable: bool = False) -> None:
        check_implementation(foreach, fused, capturable, differentiable)
        _check("learning rate", lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas} (need 0 < etaminus < 1 < etaplus)")
        super().__init__(params, dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes),
                                      maximize=maximize))

    def _update(self, xp, p, g, state, group):
        (shrink, grow), (smallest, largest) = group["etas"], group["step_sizes"]
        state["step"] = state.get("step", 0) + 1
        prev = self._buffer(state, "prev", p)
        size = self._buffer(state, "step_size", p, group["lr"])
        agreement = g * prev
        size *= xp.where(agreement > 0, grow, xp.where(agreement < 0, shrink, 1.0)
                         ).astype(size.dtype)
        xp.clip(size, smallest, largest, out=size)
        g = xp.where(agreement < 0, 0, g)  # after a sign flip, wait one step
        p -= xp.sign(g) * size
        prev[...] = g


class ASGD(Optimizer):
    r"""Averaged SGD (Polyak and Juditsky): SGD with a decaying rate and an average of the iterates.

    A plain SGD step with a rate :math:`\eta_t` that decays with the step count, and a
    running average ``ax`` of the iterates :math:`\bar\theta` (kept in the state), which
    for a convex problem converges at the optimal rate even when the iterates themselves
    jitter.  Use ``opt.state[p]["ax"]`` as the trained value.

    Parameters
    ----------
    params : iterable of Tensor or of dict
        The parameters, or parameter groups (see :class:`Optimizer`).
    lr : float, default 1e-2
        The initial rate :math:`\mathrm{lr}`, >= 0.
    lambd : float, default 1e-4
        :math:`\lambda`, the decay term (it shrinks :math:`\theta` and the rate).
    alpha : float, default 0.75
        :math:`\alpha`, the power of the rate's decay.
    t0 : float, default 1e6
        :math:`t_0`, the step after which averaging starts (before it,
        :math:`\bar\theta = \theta`).
    weight_decay : float, default 0.0
        An L2 penalty added to the gradient, >= 0.
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
        Per parameter: ``"step"`` (int), ``"eta"`` (the next rate), ``"mu"`` (the next
        averaging weight) and ``"ax"`` (:math:`\bar\theta`).

    Raises
    ------
    ValueError
        For a negative ``lr`` or ``weight_decay``.

    See Also
    --------
    SGD : without the decay or the average.

    Notes
    -----
    The update rule, :math:`t` the step count, :math:`\eta_1 = \mathrm{lr}`,
    :math:`\mu_1 = 1`:

    .. math::
        \theta &\leftarrow \theta(1 - \lambda\eta_t) - \eta_t g, \qquad
        \bar\theta \leftarrow \bar\theta + \mu_t(\theta - \bar\theta) \\
        \eta_{t+1} &= \mathrm{lr} / (1 + \lambda\,\mathrm{lr}\,t)^\alpha, \qquad
        \mu_{t+1} = 1 / \max(1, t - t_0)

    so :math:`\bar\theta` is the mean of the iterates from step :math:`t_0 + 2` on.

    Examples
    --------
    >>> import difflab as dl
    >>> w = dl.tensor([2.0], requires_grad=True)
    >>> opt = dl.optim.ASGD([w], lr=0.1, lambd=0.0, t0=1)
    >>> for _ in range(4):
    ...     opt.zero_grad()
    ...     (w ** 2).sum().backward()
    ...     opt.step()
    >>> round(w.item(), 4)                        # 2 * 0.8**4
    0.8192
    >>> round(opt.state[w]["ax"].item(), 4)       # the mean of steps 3 and 4: 1.024, 0.8192
    0.9216
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0.0,
                 maximize: bool = False, *,
                 foreach: bool | None = None, fused: bool | None = None,
                 capturable: bool = False, differentiable: bool = False) -> None:
        check_implementation(foreach, fused, capturable, differentiable)
        _check("learning rate", lr)
        _check("weight_decay value", weight_decay)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                                      weight_decay=weight_decay, maximize=maximize))

    def _update(self, xp, p, g, state, group):
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p
        state["step"] = step = state.get("step", 0) + 1
        eta, mu = state.get("eta", group["lr"]), state.get("mu", 1.0)
        ax = self._buffer(state, "ax", p)
        p *= 1.0 - group["lambd"] * eta
        p -= eta * g
        if mu != 1.0:
            ax += (p - ax) * mu
        else:
            ax[...] = p
        state["eta"] = group["lr"] / (1.0 + group["lambd"] * group["lr"] * step) ** group["alpha"]
        state["mu"] = 1.0 / max(1.0, step - group["t0"])
