"""Gradient clipping: keep one bad batch from throwing the weights far away."""

from __future__ import annotations

import math
import warnings
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
    grads = [p.grad for p in _with_grads(parameters)]
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def get_total_norm(tensors: Iterable[Tensor] | Tensor, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    r"""The p-norm of all ``tensors`` together, as if concatenated into one vector.

    .. math::
        \|t\|_p = \Big\|\big(\|t_1\|_p, \|t_2\|_p, \dots\big)\Big\|_p

    (any p: ``inf``, ``-inf`` and 0 too; a nan anywhere makes it nan).  The first half
    of :func:`clip_grad_norm_`; pass the gradients (``[p.grad for p in params]``).

    Parameters
    ----------
    tensors : Tensor or iterable of Tensor
        The tensors (``None`` entries are skipped).
    norm_type : float, default 2.0
        :math:`p`.
    error_if_nonfinite : bool, default False
        Raise when the norm is nan or inf.
    foreach : bool, optional
        PyTorch's choice of implementation; accepted (the result is the same).

    Returns
    -------
    Tensor
        0-d, in the first tensor's dtype and on its device (``tensor(0.)`` for none).

    Raises
    ------
    RuntimeError
        With ``error_if_nonfinite`` when the norm is not finite.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> nn.utils.get_total_norm([dl.tensor([3.0]), dl.tensor([4.0])])
    tensor(5.)
    """
    from difflab.creation import tensor

    tensors = [tensors] if isinstance(tensors, Tensor) else [t for t in tensors
                                                             if t is not None]
    if not tensors:
        return tensor(0.0)
    norm_type = float(norm_type)
    xp = backend.array_module(tensors[0].array)
    with np.errstate(over="ignore", invalid="ignore"):  # (inf and nan are reported below)
        each = [float(xp.linalg.norm(t.array.reshape(-1), ord=norm_type)) for t in tensors]
        total = float(np.linalg.norm(np.array(each), ord=norm_type))
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients is non-finite ({total}), so "
            f"it cannot be clipped. Set error_if_nonfinite=False to skip this check."
        )
    # (in the tensors' dtype and on their device, as PyTorch returns it)
    return tensor(total, dtype=tensors[0].dtype, device=tensors[0].device)


def clip_grads_with_norm_(parameters: Iterable[Tensor] | Tensor, max_norm: float,
                          total_norm: Tensor | float, foreach: bool | None = None) -> None:
    """Scale the gradients in place by ``max_norm / (total_norm + 1e-6)`` where that is below 1.

    The second half of :func:`clip_grad_norm_`, given a norm computed already (by
    :func:`get_total_norm`, perhaps over more gradients than these).  A nan norm makes
    every gradient nan, as in PyTorch.

    Parameters
    ----------
    parameters : Tensor or iterable of Tensor
        Whose ``.grad`` to scale (parameters without one are skipped).
    max_norm : float
        The largest norm allowed.
    total_norm : Tensor or float
        The norm of the gradients.
    foreach : bool, optional
        PyTorch's choice of implementation; accepted (the result is the same).

    Returns
    -------
    None

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> p = nn.Parameter(dl.zeros(2))
    >>> p.grad = dl.tensor([3.0, 4.0])
    >>> nn.utils.clip_grads_with_norm_([p], 1.0, dl.tensor(10.0))
    >>> p.grad
    tensor([0.3, 0.4])
    """
    coef = max_norm / (float(total_norm) + 1e-6)
    if coef < 1.0 or math.isnan(coef):
        with np.errstate(invalid="ignore"):  # (an inf gradient times 0 is nan, as in PyTorch)
            for p in _with_grads(parameters):
                p.grad.array *= coef


def clip_grad_norm(parameters: Iterable[Tensor] | Tensor, max_norm: float,
                   norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """Deprecated name of :func:`clip_grad_norm_` (a FutureWarning, as in PyTorch).

    Parameters
    ----------
    parameters : Tensor or iterable of Tensor
        Usually ``model.parameters()``.
    max_norm : float
        The largest norm allowed.
    norm_type : float, default 2.0
        :math:`p`.
    error_if_nonfinite : bool, default False
        Raise when the norm is nan or inf.
    foreach : bool, optional
        Accepted.

    Returns
    -------
    Tensor
        The total norm before clipping.

    Examples
    --------
    >>> import warnings
    >>> import difflab as dl
    >>> from difflab import nn
    >>> p = nn.Parameter(dl.zeros(2))
    >>> p.grad = dl.tensor([3.0, 4.0])
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     nn.utils.clip_grad_norm([p], 1.0)
    tensor(5.)
    """
    warnings.warn("`difflab.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`difflab.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


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
