"""Embedding layers at PyTorch's path ``nn.modules.sparse``: ``Embedding`` (defined in
:mod:`.layers`) and ``EmbeddingBag``."""

from __future__ import annotations

from typing import Any

from difflab.nn import functional as F
from difflab.nn import init
from difflab.nn.modules.layers import Embedding, _empty
from difflab.nn.modules.module import Module
from difflab.tensor import Tensor

__all__ = ["Embedding", "EmbeddingBag"]


class EmbeddingBag(Module):
    r"""The sum, mean or max of bags of embeddings (see
    :func:`difflab.nn.functional.embedding_bag`): a bag-of-words text encoder in one layer.

    Parameters
    ----------
    num_embeddings, embedding_dim : int
    mode : {'mean', 'sum', 'max'}
    include_last_offset : bool
    padding_idx : int, optional
        Its row is zero, untrained, and left out of the bags' means.

    Shape
    -----
    - Input: :math:`(B, L)` indices, or 1-D with ``offsets`` of :math:`(B)`.
    - Output: :math:`(B, \text{embedding\_dim})`.

    Notes
    -----
    .. math::
        \text{out}_b = \operatorname{reduce}_{i \in \text{bag}_b} W[\text{idx}_i],
        \quad \operatorname{reduce} \in \{\text{sum}, \text{mean}, \max\}

    Examples
    --------
    >>> import difflab as dl
    >>> bag = dl.nn.EmbeddingBag(10, 3, mode="sum")
    >>> bag(dl.tensor([1, 2, 4, 5, 4]), dl.tensor([0, 2])).shape
    difflab.Size([2, 3])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, include_last_offset: bool = False,
                 padding_idx: int | None = None, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        self.mode, self.include_last_offset = mode, include_last_offset
        self.max_norm, self.scale_grad_by_freq, self.sparse = max_norm, scale_grad_by_freq, sparse
        if padding_idx is not None and padding_idx < 0:
            padding_idx += num_embeddings
        self.padding_idx = padding_idx
        self.weight = _empty(num_embeddings, embedding_dim, dtype=dtype, device=device)
        init.normal_(self.weight)
        if padding_idx is not None:
            self.weight.array[padding_idx] = 0

    def forward(self, input: Tensor, offsets: Tensor | None = None,  # noqa: A002
                per_sample_weights: Tensor | None = None) -> Tensor:
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, 2.0,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}, mode='{self.mode}'"
