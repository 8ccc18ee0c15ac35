"""Loss modules: each wraps the function of the same name in :mod:`difflab.nn.functional`.

``reduction`` is 'mean' (default), 'sum' or 'none' (one loss per element or sample).
"""

from __future__ import annotations

from typing import Any

from difflab.nn import functional as F
from difflab.nn.modules.module import Module
from difflab.tensor import Tensor


class _Loss(Module):
    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
        self.reduction = reduction

    def extra_repr(self) -> str:
        return "" if self.reduction == "mean" else f"reduction='{self.reduction}'"


class MSELoss(_Loss):
    """(x - y)²."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.mse_loss(input, target, self.reduction)


class L1Loss(_Loss):
    """|x - y|."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.l1_loss(input, target, self.reduction)


class NLLLoss(_Loss):
    """-log p[target] from log-probabilities (N, C) and integer class targets (N,)."""

    def __init__(self, weight: Tensor | None = None, ignore_index: int = -100,
                 reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.weight, self.ignore_index = weight, ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.nll_loss(input, target, self.weight, self.ignore_index, self.reduction)


class CrossEntropyLoss(_Loss):
    """Softmax cross-entropy from logits (N, C) and integer class targets (N,)
    (or class probabilities of shape (N, C))."""

    def __init__(self, weight: Tensor | None = None, ignore_index: int = -100,
                 reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(reduction)
        self.weight, self.ignore_index = weight, ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.cross_entropy(input, target, self.weight, self.ignore_index, self.reduction,
                               self.label_smoothing)


class BCELoss(_Loss):
    """Binary cross-entropy of probabilities in [0, 1]."""

    def __init__(self, weight: Tensor | None = None, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.weight = weight

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.binary_cross_entropy(input, target, self.weight, self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross-entropy of σ(logits), computed stably."""

    def __init__(self, weight: Tensor | None = None, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.weight = weight

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.binary_cross_entropy_with_logits(input, target, self.weight, self.reduction)


class SmoothL1Loss(_Loss):
    """Quadratic below ``beta``, absolute above (see :func:`difflab.nn.functional.smooth_l1_loss`).

    Parameters
    ----------
    size_average, reduce : optional
        PyTorch's deprecated spelling of ``reduction``.
    reduction : {'mean', 'sum', 'none'}
    beta : float
        Where the loss turns linear (>= 0; 0 is the L1 loss).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.SmoothL1Loss()(dl.tensor([0.5, 3.0]), dl.tensor([0.0, 0.0]))
    tensor(1.3125)
    """

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 beta: float = 1.0) -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction))
        if beta < 0:
            raise ValueError(f"SmoothL1Loss: beta must be non-negative, got {beta}")
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Quadratic within ``delta``, linear beyond (see :func:`difflab.nn.functional.huber_loss`).

    Parameters
    ----------
    reduction : {'mean', 'sum', 'none'}
    delta : float
        Where the loss turns linear (> 0).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.HuberLoss(delta=2.0)(dl.tensor([0.5, 3.0]), dl.tensor([0.0, 0.0]))
    tensor(2.0625)
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction)
        if delta <= 0:
            raise ValueError(f"HuberLoss: delta must be positive, got {delta}")
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)
