"""``nn.CosineSimilarity`` and ``nn.PairwiseDistance`` at PyTorch's path ``nn.modules.distance``."""

from __future__ import annotations

from difflab.nn import functional as F
from difflab.nn.modules.module import Module
from difflab.tensor import Tensor

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class CosineSimilarity(Module):
    r"""The cosine of the angle between x₁ and x₂ along ``dim``.

    Parameters
    ----------
    dim : int, default 1
        The dimension of the vectors.
    eps : float, default 1e-8
        The smallest norm used.

    Shape
    -----
    - Input: ``x1``, ``x2`` broadcastable, with the vectors along ``dim``.
    - Output: the common shape without ``dim``.

    See Also
    --------
    PairwiseDistance, difflab.nn.functional.cosine_similarity

    Notes
    -----
    .. math::
        \cos(x_1, x_2) = \frac{x_1 \cdot x_2}{\max(\|x_1\|_2, \epsilon)\,\max(\|x_2\|_2, \epsilon)}

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
    r"""‖x₁ - x₂ + ε‖_p along the last dimension, row by row.

    Parameters
    ----------
    p : float, default 2.0
        The norm.
    eps : float, default 1e-6
        Added to the difference (no infinite gradient at 0).
    keepdim : bool, default False
        Keep the last dimension, of size 1.

    Shape
    -----
    - Input: ``x1``, ``x2`` :math:`(N, D)` or :math:`(D)`.
    - Output: :math:`(N)` or :math:`()` (:math:`(N, 1)` with ``keepdim``).

    See Also
    --------
    CosineSimilarity, difflab.nn.functional.pairwise_distance

    Notes
    -----
    .. math::
        d(x_1, x_2) = \|x_1 - x_2 + \epsilon\|_p

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
