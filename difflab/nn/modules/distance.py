"""``nn.CosineSimilarity`` and ``nn.PairwiseDistance`` at PyTorch's path ``nn.modules.distance``."""

from __future__ import annotations

from difflab.nn import functional as F
from difflab.nn.modules.module import Module
from difflab.tensor import Tensor

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class CosineSimilarity(Module):
    """The cosine of the angle between x₁ and x₂ along ``dim``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.CosineSimilarity(dim=0)(dl.tensor([1.0, 0.0]), dl.tensor([0.0, 2.0])).item()
    0.0
    """

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """‖x₁ - x₂ + ε‖_p along the last dimension, row by row.

    Examples
    --------
    >>> import difflab as dl
    >>> d = dl.nn.PairwiseDistance()(dl.tensor([[0.0, 0.0]]), dl.tensor([[3.0, 4.0]]))
    >>> round(d.item(), 4)
    5.0
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
