r"""More loss functions of ``torch.nn.functional``, each a composite of tensor operations.

Every loss takes ``reduction`` ('mean', 'sum' or 'none') as PyTorch does, and
the gradient is the chain of the operations' rules.  Logarithms of
probabilities are written stably (softplus for log(1 + e^z), a clamped log
where a target may be zero).
"""

from __future__ import annotations

import math
from typing import Any

from difflab.nn.functional import _REDUCTIONS, _check_tensor, _legacy_reduction, _reduce
from difflab.nn.functional_activations import softplus
from difflab.tensor import Tensor

__all__ = ["cosine_embedding_loss", "gaussian_nll_loss", "hinge_embedding_loss", "kl_div",
           "margin_ranking_loss", "multilabel_soft_margin_loss", "poisson_nll_loss",
           "soft_margin_loss", "triplet_margin_loss"]


def _where(condition: Any, a: Any, b: Any) -> Tensor:
    from difflab.functions import where

    return where(condition, a, b)


def _reduction(name: str, reduction: str, size_average: Any = None, reduce: Any = None) -> str:
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{name}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    return reduction


def _same_shape(name: str, *tensors: Tensor) -> None:
    shapes = {tuple(t.shape) for t in tensors}
    if len(shapes) != 1:
        raise ValueError(f"{name}: the inputs must have the same shape, got "
                         f"{[tuple(t.shape) for t in tensors]}")


def kl_div(input: Tensor, target: Tensor, size_average: Any = None,  # noqa: A002
           reduce: Any = None, reduction: str = "mean", log_target: bool = False) -> Tensor:
    """Kullback-Leibler divergence KL(target ‖ exp(input)) from log-probabilities ``input``.

    Pointwise ℓ = y (log y - x), with 0 where y = 0 (or, with ``log_target``,
    e^y (y - x)).  ``reduction='batchmean'`` divides the sum by the batch
    size, which is the true KL divergence ('mean' divides by every element,
    as PyTorch's default does).

    Parameters
    ----------
    input : Tensor
        Log-probabilities (e.g. ``log_softmax``).
    target : Tensor
        Probabilities (or log-probabilities with ``log_target=True``).
    reduction : {'mean', 'batchmean', 'sum', 'none'}
    log_target : bool

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import difflab as dl
    >>> p = dl.tensor([[0.5, 0.5]])
    >>> q = dl.tensor([[0.25, 0.75]])
    >>> round(dl.nn.functional.kl_div(q.log(), p, reduction="batchmean").item(), 4)
    0.1438
    """
    x, y = _check_tensor("kl_div", input), _check_tensor("kl_div", target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if log_target:
        pointwise = y.exp() * (y - x)
    else:
        pointwise = y * y.clamp(min=1e-45).log() - y * x  # (y log y is 0 at y = 0)
    if reduction == "batchmean":
        return pointwise.sum() / (x.shape[0] if x.ndim else 1)
    return _reduce(pointwise, _reduction("kl_div", reduction), "kl_div")


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """max(0, -y (x₁ - x₂) + margin): y = 1 asks for x₁ to rank above x₂, y = -1 below.

    Examples
    --------
    >>> import difflab as dl
    >>> F = dl.nn.functional
    >>> F.margin_ranking_loss(dl.tensor([1.0, 1.0]), dl.tensor([0.0, 0.0]),
    ...                       dl.tensor([1.0, -1.0]), reduction="none").tolist()
    [0.0, 1.0]
    """
    reduction = _reduction("margin_ranking_loss", reduction, size_average, reduce)
    _same_shape("margin_ranking_loss", input1, input2, target)
    return _reduce((-target * (input1 - input2) + margin).relu(), reduction,
                   "margin_ranking_loss")


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,  # noqa: A002
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    """x where y = 1, max(0, margin - x) where y = -1 (x: a distance, y: similar or not).

    Examples
    --------
    >>> import difflab as dl
    >>> F = dl.nn.functional
    >>> F.hinge_embedding_loss(dl.tensor([0.3, 0.3]), dl.tensor([1.0, -1.0]),
    ...                        reduction="none").tolist()
    [0.30000001192092896, 0.699999988079071]
    """
    reduction = _reduction("hinge_embedding_loss", reduction, size_average, reduce)
    _same_shape("hinge_embedding_loss", input, target)
    y = target.array
    losses = _where(y == 1, input, 0.0) + _where(y == -1, (margin - input).relu(), 0.0)
    return _reduce(losses, reduction, "hinge_embedding_loss")


def soft_margin_loss(input: Tensor, target: Tensor, size_average: Any = None,  # noqa: A002
                     reduce: Any = None, reduction: str = "mean") -> Tensor:
    """log(1 + e^{-y x}) for labels y = ±1 (the logistic loss), computed as softplus(-y x).

    Examples
    --------
    >>> import difflab as dl
    >>> round(dl.nn.functional.soft_margin_loss(dl.tensor([0.0]), dl.tensor([1.0])).item(), 4)
    0.6931
    """
    reduction = _reduction("soft_margin_loss", reduction, size_average, reduce)
    _same_shape("soft_margin_loss", input, target)
    return _reduce(softplus(-target * input, 1.0, float("inf")), reduction, "soft_margin_loss")


def multilabel_soft_margin_loss(input: Tensor, target: Tensor,  # noqa: A002
                                weight: Tensor | None = None, size_average: Any = None,
                                reduce: Any = None, reduction: str = "mean") -> Tensor:
    """Binary cross-entropy of σ(x) for each of C labels, averaged over the labels.

    ℓ = -(1/C) Σ_c [y_c log σ(x_c) + (1 - y_c) log σ(-x_c)], one per sample.

    Examples
    --------
    >>> import difflab as dl
    >>> F = dl.nn.functional
    >>> round(F.multilabel_soft_margin_loss(dl.zeros(1, 3), dl.tensor([[1.0, 0.0, 1.0]])
    ...       ).item(), 4)
    0.6931
    """
    reduction = _reduction("multilabel_soft_margin_loss", reduction, size_average, reduce)
    _same_shape("multilabel_soft_margin_loss", input, target)
    inf = float("inf")
    losses = target * softplus(-input, 1.0, inf) + (1.0 - target) * softplus(input, 1.0, inf)
    if weight is not None:
        losses = losses * weight
    return _reduce(losses.mean(-1), reduction, "multilabel_soft_margin_loss")


def _cosine(x1: Tensor, x2: Tensor, eps: float = 1e-12) -> Tensor:
    """Cosine of the angle between the rows (last dimension), as PyTorch's embedding loss
    computes it: x₁·x₂ / √((|x₁|² + ε)(|x₂|² + ε))."""
    return (x1 * x2).sum(-1) / (((x1 * x1).sum(-1) + eps) * ((x2 * x2).sum(-1) + eps)).sqrt()


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor,
                          margin: float = 0.0, size_average: Any = None, reduce: Any = None,
                          reduction: str = "mean") -> Tensor:
    """1 - cos(x₁, x₂) where y = 1, max(0, cos(x₁, x₂) - margin) where y = -1.

    Examples
    --------
    >>> import difflab as dl
    >>> F = dl.nn.functional
    >>> x = dl.tensor([[1.0, 0.0], [1.0, 0.0]])
    >>> F.cosine_embedding_loss(x, dl.tensor([[0.0, 1.0], [1.0, 0.0]]),
    ...                         dl.tensor([1.0, -1.0]), reduction="none").tolist()
    [1.0, 1.0]
    """
    reduction = _reduction("cosine_embedding_loss", reduction, size_average, reduce)
    _same_shape("cosine_embedding_loss", input1, input2)
    cos = _cosine(input1, input2)
    y = target.array
    losses = _where(y == 1, 1.0 - cos, 0.0) + _where(y == -1, (cos - margin).relu(), 0.0)
    return _reduce(losses, reduction, "cosine_embedding_loss")


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                        swap: bool = False, size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """max(d(a, p) - d(a, n) + margin, 0), d the p-norm distance: pull the positive close,
    push the negative a margin further.  ``swap`` uses min(d(a, n), d(p, n)).

    Examples
    --------
    >>> import difflab as dl
    >>> F = dl.nn.functional
    >>> a, pos, neg = dl.tensor([[0.0, 0.0]]), dl.tensor([[3.0, 4.0]]), dl.tensor([[0.0, 1.0]])
    >>> round(F.triplet_margin_loss(a, pos, neg, margin=1.0).item(), 4)   # 5 - 1 + 1
    5.0
    """
    from difflab.nn.functional_layers import pairwise_distance

    reduction = _reduction("triplet_margin_loss", reduction, size_average, reduce)
    _same_shape("triplet_margin_loss", anchor, positive, negative)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_swap = pairwise_distance(positive, negative, p, eps)
        d_neg = _where(d_swap.array < d_neg.array, d_swap, d_neg)
    return _reduce((d_pos - d_neg + margin).relu(), reduction, "triplet_margin_loss")


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float,  # noqa: A002
                      full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """The negative log-likelihood of ``target`` under N(input, var).

    ℓ = ½ (log max(var, ε) + (x - y)² / max(var, ε)) (+ ½ log 2π with ``full``).
    ``var`` has the input's shape, or one dimension fewer / a last dimension
    of 1 (one variance per sample), or is a number.  As in PyTorch, the clamp
    at ε changes the value only: the gradient flows to ``var`` as if unclamped.

    Examples
    --------
    >>> import difflab as dl
    >>> F = dl.nn.functional
    >>> round(F.gaussian_nll_loss(dl.tensor([1.0]), dl.tensor([3.0]), dl.tensor([4.0])).item(), 4)
    1.1931
    """
    if reduction not in _REDUCTIONS:
        raise ValueError(f"gaussian_nll_loss: reduction must be one of {_REDUCTIONS}, got "
                         f"{reduction!r}")
    if not isinstance(var, Tensor):
        var = Tensor._wrap(input.array * 0 + float(var))
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1):
            raise ValueError(f"gaussian_nll_loss: var of shape {tuple(var.shape)} does not fit "
                             f"the input's {tuple(input.shape)}")
    if (var.array < 0).any():
        raise ValueError("gaussian_nll_loss: var has negative entry/entries")
    clamped = var + (var.clamp(min=eps) - var).detach()  # value clamped, gradient straight
    losses = 0.5 * (clamped.log() + (input - target) ** 2 / clamped)
    if full:
        losses = losses + 0.5 * math.log(2 * math.pi)
    return _reduce(losses, reduction, "gaussian_nll_loss")


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True,  # noqa: A002
                     full: bool = False, size_average: Any = None, eps: float = 1e-8,
                     reduce: Any = None, reduction: str = "mean") -> Tensor:
    """The negative log-likelihood of counts ``target`` under Poisson(λ).

    With ``log_input`` (λ = eˣ): ℓ = eˣ - y x; otherwise ℓ = x - y log(x + ε).
    ``full`` adds Stirling's approximation of log y! (for y > 1).

    Examples
    --------
    >>> import difflab as dl
    >>> F = dl.nn.functional
    >>> round(F.poisson_nll_loss(dl.tensor([0.0]), dl.tensor([2.0])).item(), 4)   # e⁰ - 0
    1.0
    """
    reduction = _reduction("poisson_nll_loss", reduction, size_average, reduce)
    _same_shape("poisson_nll_loss", input, target)
    if log_input:
        losses = input.exp() - target * input
    else:
        losses = input - target * (input + eps).log()
    if full:
        y = target.array
        safe = y.clip(min=1)
        stirling = y * _log(safe) - y + 0.5 * _log(2 * math.pi * safe)
        losses = losses + Tensor._wrap((stirling * (y > 1)).astype(losses.dtype))
    return _reduce(losses, reduction, "poisson_nll_loss")


def _log(array: Any) -> Any:
    from difflab.backend import array_module

    return array_module(array).log(array)
