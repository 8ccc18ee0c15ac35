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
    r"""The sum, mean or max of bags of embeddings: a bag-of-words encoder in one layer.

    The module form of :func:`difflab.nn.functional.embedding_bag`, holding the table
    ``weight``.  Calling it with indices (and, for a 1-D input, the ``offsets`` where each
    bag starts) gives one vector per bag, without forming the bags' rows one by one.
    ``forward(input, offsets=None, per_sample_weights=None)``: ``per_sample_weights``
    (``mode='sum'`` only) weighs each index.

    Parameters
    ----------
    num_embeddings : int
        The size of the vocabulary (rows of the table).
    embedding_dim : int
        The size of each embedding vector.
    max_norm, norm_type, scale_grad_by_freq, sparse
        PyTorch options that are not supported (leave the defaults: calling the layer
        otherwise raises ``NotImplementedError``).
    mode : {'mean', 'sum', 'max'}, default 'mean'
        How a bag's rows are reduced.
    include_last_offset : bool, default False
        ``offsets`` ends with the total length (:math:`B + 1` entries).
    padding_idx : int, optional
        Its row is zero, untrained, and left out of the bags (negative: counted from
        the end).
    device : str or difflab.device, optional
        Where the table lives (the CPU by default).
    dtype : difflab dtype, optional
        The table's dtype (the default dtype by default).

    Attributes
    ----------
    weight : Parameter
        :math:`(\text{num\_embeddings}, \text{embedding\_dim})`, drawn from
        :math:`\mathcal N(0, 1)`.

    Shape
    -----
    - Input: :math:`(B, L)` indices, or 1-D with ``offsets`` of :math:`(B)`.
    - Output: :math:`(B, \text{embedding\_dim})`; an empty bag gives zeros.

    Raises
    ------
    ValueError
        When called with another mode, a 2-D input with offsets, a 1-D input without, or
        offsets that do not fit.
    NotImplementedError
        When called with the unsupported options, or per-sample weights outside
        ``mode='sum'``.

    See Also
    --------
    Embedding : one row per index, no reduction.
    difflab.nn.functional.embedding_bag : the same map with an explicit table.

    Notes
    -----
    .. math::
        \text{out}_b = \operatorname{reduce}_{i \in \text{bag}_b} W[\text{idx}_i],
        \quad \operatorname{reduce} \in \{\text{sum}, \text{mean}, \max\}

    The gradient adds :math:`\bar{\text{out}}_b` (divided by the bag's size for
    ``'mean'``; only into the row of the maximum, per column, for ``'max'``) to the row
    of each index in bag :math:`b`; rows no bag uses get zero.

    Examples
    --------
    >>> import difflab as dl
    >>> _ = dl.manual_seed(0)
    >>> bag = dl.nn.EmbeddingBag(10, 3, mode="sum")
    >>> words, starts = dl.tensor([1, 2, 4, 5, 4]), dl.tensor([0, 2])   # bags [1, 2], [4, 5, 4]
    >>> out = bag(words, starts)
    >>> out.shape
    difflab.Size([2, 3])
    >>> dl.allclose(out[0], bag.weight[1] + bag.weight[2])
    True
    >>> out.sum().backward()
    >>> bag.weight.grad[:, 0].tolist()                 # each row's count over the bags
    [0.0, 1.0, 1.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0, 0.0]
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
