"""Gradient clipping: keep one bad batch from throwing the weights far away."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from difflab import backend
from difflab.tensor import Tensor


def _with_grads(parameters: Iterable[Tensor] | Tensor) -> list:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters: Iterable[Tensor] | Tensor, max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: bool | None = None) -> Tensor:
    r"""Scale all gradients together, in place, so that their joint norm is at most ``max_norm``.

    The norm is taken over all gradients as if concatenated into one vector,

    .. math::
        \|g\|_p = \Big(\sum_i \|g_i\|_p^p\Big)^{1/p} \quad (\|g\|_\infty = \max_i \max |g_i|)

    and if it exceeds ``max_norm`` every gradient is multiplied by
    :math:`\text{max\_norm} / (\|g\|_p + 10^{-6})`.  The direction of the update is
    unchanged; only its length is capped (keeping one bad batch from throwing
    the weights far away).  Parameters without a gradient are skipped.

    Parameters
    ----------
    parameters : Tensor or iterable of Tensor
        Usually ``model.parameters()``.
    max_norm : float
        The largest norm allowed.
    norm_type : float, default 2.0
        :math:`p`; ``float('inf')`` for the largest absolute entry.
    error_if_nonfinite : bool, default False
        Raise when the norm is nan or inf instead of scaling by it (a nan norm then
        makes every gradient nan, as in PyTorch: the step is visibly broken).
    foreach : bool, optional
        PyTorch's choice of implementation; accepted (the result is the same).

    Returns
    -------
    Tensor
        The total norm *before* clipping, a 0-d tensor in the gradients' dtype
        (``tensor(0.)`` when no parameter has a gradient).

    Raises
    ------
    RuntimeError
        With ``error_if_nonfinite`` when the norm is not finite.

    See Also
    --------
    clip_grad_value_ : clamp each entry instead.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> p = nn.Parameter(dl.zeros(2))
    >>> p.grad = dl.tensor([3.0, 4.0])
    >>> nn.utils.clip_grad_norm_([p], max_norm=1.0)
    tensor(5.)
    >>> p.grad
    tensor([0.6, 0.8])
    """
    params = _with_grads(parameters)
    if not params:
        from difflab.creation import tensor

        return tensor(0.0)
    norm_type = float(norm_type)
    xp = backend.array_module(params[0].grad.array)
    with np.errstate(over="ignore", invalid="ignore"):  # (inf and nan are reported below)
        # As PyTorch: the norm of the parameters' norms (any p: inf, -inf and 0 too; a nan
        # anywhere makes it nan)
        each = [float(xp.linalg.norm(p.grad.array.reshape(-1), ord=norm_type)) for p in params]
        total = float(np.linalg.norm(np.array(each), ord=norm_type))
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients is non-finite ({total}), so "
            f"it cannot be clipped. Set error_if_nonfinite=False to skip this check."
        )
    coef = max_norm / (total + 1e-6)
    if coef < 1.0 or math.isnan(coef):
        with np.errstate(invalid="ignore"):  # (an inf gradient times 0 is nan, as in PyTorch)
            for p in params:
                p.grad.array *= coef
    from difflab.creation import tensor

    # (in the gradients' dtype and on their device, as PyTorch returns it)
    return tensor(total, dtype=params[0].grad.dtype, device=params[0].grad.device)


def clip_grad_value_(parameters: Iterable[Tensor] | Tensor, clip_value: float,
                     foreach: bool | None = None) -> None:
    """Clamp every gradient entry, in place, into :math:`[-c, c]`, c = ``clip_value``.

    Unlike :func:`clip_grad_norm_` this changes the direction of the update.

    Parameters
    ----------
    parameters : Tensor or iterable of Tensor
        Usually ``model.parameters()``; those without a gradient are skipped.
    clip_value : float
        The bound, > 0.
    foreach : bool, optional
        PyTorch's choice of implementation; accepted (the result is the same).

    Returns
    -------
    None

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> p = nn.Parameter(dl.zeros(3))
    >>> p.grad = dl.tensor([3.0, -4.0, 0.5])
    >>> nn.utils.clip_grad_value_([p], 1.0)
    >>> p.grad
    tensor([ 1. , -1. ,  0.5])
    """
    for p in _with_grads(parameters):
        xp = backend.array_module(p.grad.array)
        xp.clip(p.grad.array, -clip_value, clip_value, out=p.grad.array)
