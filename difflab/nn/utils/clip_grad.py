"""Gradient clipping: keep one bad batch from throwing the weights far away."""

from __future__ import annotations

import math
from collections.abc import Iterable

from difflab import backend
from difflab.tensor import Tensor


def _with_grads(parameters: Iterable[Tensor] | Tensor) -> list:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters: Iterable[Tensor] | Tensor, max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False) -> Tensor:
    r"""Scale all gradients together so that their joint norm is at most ``max_norm``.

    The norm is taken over all gradients as if concatenated into one vector,
    ‖g‖_p = (Σᵢ ‖gᵢ‖_pᵖ)^{1/p}; if it exceeds ``max_norm`` every gradient is
    multiplied by max_norm / (‖g‖ + 1e-6).  The direction is unchanged.
    Returns the norm before clipping.
    """
    params = _with_grads(parameters)
    if not params:
        from difflab.creation import tensor

        return tensor(0.0)
    norm_type = float(norm_type)
    xp = backend.array_module(params[0].grad.array)
    if math.isinf(norm_type):
        total = max(float(xp.abs(p.grad.array).max()) for p in params)
    else:
        total = sum(float((xp.abs(p.grad.array) ** norm_type).sum()) for p in params) ** (
            1.0 / norm_type)
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients is non-finite ({total}), so "
            f"it cannot be clipped. Set error_if_nonfinite=False to skip this check."
        )
    coef = max_norm / (total + 1e-6)
    if coef < 1.0:
        for p in params:
            p.grad.array *= coef
    from difflab.creation import tensor

    # (in the gradients' dtype and on their device, as PyTorch returns it)
    return tensor(total, dtype=params[0].grad.dtype, device=params[0].grad.device)


def clip_grad_value_(parameters: Iterable[Tensor] | Tensor, clip_value: float) -> None:
    """Clamp every gradient element into [-clip_value, clip_value]."""
    for p in _with_grads(parameters):
        xp = backend.array_module(p.grad.array)
        xp.clip(p.grad.array, -clip_value, clip_value, out=p.grad.array)
