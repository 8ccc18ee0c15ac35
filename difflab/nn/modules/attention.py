r"""Multi-head attention, as ``torch.nn.MultiheadAttention`` computes it.

Each of h heads projects the inputs to queries, keys and values of size
d = embed_dim / h and attends with scaled dot products:

    head_i = softmax(Q_i K_iᵀ / √d + mask) V_i,    Q_i = q W_qᵢᵀ + b_qᵢ (and K, V alike)
    out    = concat(head_1, ..., head_h) W_oᵀ + b_o

Nothing here needs a rule of its own: projections, reshapes, matmuls, a
softmax and a mask, all recorded on the tape, so the gradient is the chain
of their rules.
"""

from __future__ import annotations

from typing import Any

from difflab.dtypes import _Defaults
from difflab.nn import functional as F
from difflab.nn import init
from difflab.nn.modules.layers import Linear
from difflab.nn.modules.module import Module
from difflab.nn.parameter import Parameter
from difflab.tensor import Tensor


class MultiheadAttention(Module):
    r"""Attention of ``num_heads`` heads over ``embed_dim`` features (PyTorch's layer).

    .. math::
        \text{head}_i &= \operatorname{softmax}\!\Big(\frac{Q_i K_i^\top}{\sqrt d} + M\Big) V_i,
        \qquad Q_i = q W_{q,i}^\top + b_{q,i} \ (\text{and } K_i, V_i \text{ alike}) \\
        \text{out} &= \operatorname{concat}(\text{head}_1, \ldots, \text{head}_h)\, W_o^\top + b_o

    with :math:`d = \text{embed\_dim} / h`.  Called as ``mha(query, key, value,
    key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False)``; returns ``(output, weights)``.

    Masks follow PyTorch's convention for this layer, the opposite of
    :func:`~difflab.nn.functional.scaled_dot_product_attention`'s: in a boolean
    ``attn_mask`` :math:`(L, S)` or :math:`(N h, L, S)` and ``key_padding_mask``
    :math:`(N, S)`, **True means "may not attend"**; float masks are added to the
    scores.  ``is_causal=True`` is only a hint: the causal mask must still be given.

    Self-attention (``query``, ``key`` and ``value`` the very same tensor, with
    ``in_proj_weight``) projects once, with the whole packed weight, and cuts
    the result into :math:`Q`, :math:`K` and :math:`V`, as PyTorch does: one
    matrix product instead of three (the same numbers to rounding).

    Parameters
    ----------
    embed_dim : int
        :math:`E`, the features of the query (and of the output).
    num_heads : int
        :math:`h`, dividing ``embed_dim``.
    dropout : float, default 0.0
        Dropout on the attention weights, in training.
    bias : bool, default True
        Learn the projection biases.
    add_bias_kv, add_zero_attn : bool, default False
        Not supported (``True`` raises).
    kdim, vdim : int, optional
        The features of key and value (``embed_dim`` by default).
    batch_first : bool, default False
        Inputs and output are :math:`(N, L, E)` instead of :math:`(L, N, E)`.
    device, dtype : optional
        Where the parameters live and their dtype.

    Attributes
    ----------
    in_proj_weight : Parameter or None
        :math:`(3E, E)`, :math:`W_q, W_k, W_v` stacked (when ``kdim == vdim == E``),
        Xavier-uniform.
    q_proj_weight, k_proj_weight, v_proj_weight : Parameter or None
        :math:`(E, E)`, :math:`(E, k_{dim})`, :math:`(E, v_{dim})` otherwise, Xavier-uniform.
    in_proj_bias : Parameter or None
        :math:`(3E,)`, zeros.
    out_proj : Linear
        :math:`E \to E`, its bias zeros.

    Shape
    -----
    - Input: ``query`` :math:`(L, N, E)`, ``key`` :math:`(S, N, k_{dim})`, ``value``
      :math:`(S, N, v_{dim})` (batch first with ``batch_first``), or unbatched
      :math:`(L, E)`, :math:`(S, k_{dim})`, :math:`(S, v_{dim})`.
    - Output: ``output`` shaped like the query; ``weights`` :math:`(N, L, S)`
      averaged over the heads, :math:`(N, h, L, S)` with
      ``average_attn_weights=False``, or None with ``need_weights=False``.

    Raises
    ------
    ValueError
        For non-positive sizes, ``embed_dim`` not divisible by ``num_heads``, a
        dropout outside :math:`[0, 1]`, or inputs of mismatched dimensions.
    NotImplementedError
        With ``add_bias_kv`` or ``add_zero_attn``.
    RuntimeError
        With ``is_causal=True`` and no ``attn_mask``.

    See Also
    --------
    difflab.nn.functional.scaled_dot_product_attention, TransformerEncoderLayer

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> mha = nn.MultiheadAttention(16, num_heads=4, batch_first=True)
    >>> x = dl.randn(2, 5, 16)
    >>> output, weights = mha(x, x, x)
    >>> output.shape, weights.shape, mha.in_proj_weight.shape
    (difflab.Size([2, 5, 16]), difflab.Size([2, 5, 5]), difflab.Size([48, 16]))
    >>> causal = nn.Transformer.generate_square_subsequent_mask(5)   # -inf above the diagonal
    >>> _, weights = mha(x, x, x, attn_mask=causal)
    >>> bool((weights[:, 0, 1:] == 0).all())                          # step 0 sees itself only
    True
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False,
                 kdim: int | None = None, vdim: int | None = None, batch_first: bool = False,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be positive, got {embed_dim} and "
                             f"{num_heads}")
        if embed_dim % num_heads:
            raise ValueError(f"embed_dim ({embed_dim}) must be divisible by num_heads "
                             f"({num_heads})")
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError(
                "MultiheadAttention: add_bias_kv and add_zero_attn are not supported in "
                "difflab; append the extra key/value rows to key and value yourself"
            )
        F._probability("MultiheadAttention", dropout, "dropout")
        from difflab.creation import empty

        self.embed_dim, self.num_heads = int(embed_dim), int(num_heads)
        self.head_dim = self.embed_dim // self.num_heads
        self.kdim = self.embed_dim if kdim is None else int(kdim)
        self.vdim = self.embed_dim if vdim is None else int(vdim)
        self._qkv_same_embed_dim = self.kdim == self.embed_dim and self.vdim == self.embed_dim
        self.dropout, self.batch_first = dropout, batch_first
        dtype = dtype or _Defaults.dtype

        def parameter(*shape: int) -> Parameter:
            return Parameter(empty(*shape, dtype=dtype, device=device))

        e = self.embed_dim
        if self._qkv_same_embed_dim:
            self.in_proj_weight = parameter(3 * e, e)
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = parameter(e, e)
            self.k_proj_weight = parameter(e, self.kdim)
            self.v_proj_weight = parameter(e, self.vdim)
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = parameter(3 * e)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(e, e, bias=bias, device=device, dtype=dtype)
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """PyTorch's initialisation: Xavier-uniform projections, zero biases."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)

    def _projections(self) -> tuple:
        """(W_q, W_k, W_v) and (b_q, b_k, b_v) (biases None without bias)."""
        e = self.embed_dim
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            weights = (w[:e], w[e:2 * e], w[2 * e:])
        else:
            weights = (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)
        b = self.in_proj_bias
        biases = (None, None, None) if b is None else (b[:e], b[e:2 * e], b[2 * e:])
        return weights, biases

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        if is_causal and attn_mask is None:
            raise RuntimeError(
                "MultiheadAttention: Need attn_mask if specifying the is_causal hint (pass "
                "the causal mask, e.g. difflab.ones(L, L).triu(1).bool(), True above the "
                "diagonal)"
            )
        batched = query.ndim == 3
        packed = query is key and key is value and self._qkv_same_embed_dim
        if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
            raise ValueError(
                f"MultiheadAttention expects query, key and value of 3 dimensions (batched) or "
                f"2 (unbatched) alike, got shapes {tuple(query.shape)}, {tuple(key.shape)} and "
                f"{tuple(value.shape)}"
            )
        if not batched:  # one sequence: a batch of one, in the (N, L, E) layout
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif not self.batch_first:  # (L, N, E) -> (N, L, E)
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        n, length, e = query.shape
        self._check_features(query, key, value)
        (wq, wk, wv), (bq, bk, bv) = self._projections()
        h, d = self.num_heads, self.head_dim

        def heads(x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
            """(N, T, ·) -> projected and split into heads: (N, h, T, d)."""
            return F.linear(x, w, b).reshape(n, x.shape[1], h, d).transpose(1, 2)

        if packed:  # self-attention: q, k and v from one product, as PyTorch's packed path
            qkv = F.linear(query, self.in_proj_weight, self.in_proj_bias)  # (N, L, 3E)
            qkv = qkv.reshape(n, length, 3, h, d).permute(2, 0, 3, 1, 4)  # (3, N, h, L, d)
            q, k, v = qkv[0], qkv[1], qkv[2]
        else:
            q, k, v = heads(query, wq, bq), heads(key, wk, bk), heads(value, wv, bv)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / d**0.5)  # (N, h, L, S)
        scores = self._apply_masks(scores, attn_mask, key_padding_mask)
        # (as in PyTorch, the weights handed back are the ones used: after dropout)
        weights = F.dropout(F.softmax(scores, -1), self.dropout, training=self.training)
        attended = weights @ v  # (N, h, L, d)
        out = self.out_proj(attended.transpose(1, 2).reshape(n, length, e))
        if not batched:
            out = out.squeeze(0)
        elif not self.batch_first:
            out = out.transpose(0, 1)
        if not need_weights:
            return out, None
        if average_attn_weights:
            weights = weights.mean(1)
        return out, weights if batched else weights.squeeze(0)

    def _check_features(self, query: Tensor, key: Tensor, value: Tensor) -> None:
        """Refuse query, key and value (in the (N, T, E) layout) the projections cannot take."""
        n, e = query.shape[0], query.shape[-1]
        if e != self.embed_dim:
            raise ValueError(f"MultiheadAttention: query has {e} features, expected "
                             f"embed_dim={self.embed_dim}")
        if key.shape[-1] != self.kdim or value.shape[-1] != self.vdim:
            raise ValueError(
                f"MultiheadAttention: key and value need {self.kdim} and {self.vdim} features "
                f"(kdim, vdim), got {key.shape[-1]} and {value.shape[-1]}"
            )
        if key.shape[:2] != value.shape[:2] or key.shape[0] != n:
            raise ValueError(
                f"MultiheadAttention: key and value must have the same batch and length, and "
                f"the query's batch; got key {tuple(key.shape)}, value {tuple(value.shape)}"
            )

    def _apply_masks(self, scores: Tensor, attn_mask: Any, key_padding_mask: Any) -> Tensor:
        """The scores (N, h, L, S) with -inf where ``attn_mask`` or ``key_padding_mask`` say."""
        from difflab.functions import where

        n, h, length, source = scores.shape
        if attn_mask is not None:
            mask = attn_mask if isinstance(attn_mask, Tensor) else Tensor._wrap(attn_mask)
            if mask.shape == (length, source):
                mask = mask.reshape(1, 1, length, source)
            elif mask.shape == (n * h, length, source):
                mask = mask.reshape(n, h, length, source)
            else:
                raise ValueError(
                    f"MultiheadAttention: attn_mask must have shape {(length, source)} or "
                    f"{(n * h, length, source)}, got {tuple(mask.shape)}"
                )
            scores = _masked(scores, mask, where)
        if key_padding_mask is not None:
            mask = key_padding_mask if isinstance(key_padding_mask, Tensor) else Tensor._wrap(
                key_padding_mask)
            if mask.shape != (n, source):
                raise ValueError(
                    f"MultiheadAttention: key_padding_mask must have shape {(n, source)} "
                    f"(batch, source length), got {tuple(mask.shape)}"
                )
            scores = _masked(scores, mask.reshape(n, 1, 1, source), where)
        return scores

    def extra_repr(self) -> str:
        return (f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, "
                f"dropout={self.dropout}, batch_first={self.batch_first}")


def _masked(scores: Tensor, mask: Tensor, where: Any) -> Tensor:
    """Scores with a mask applied: -inf where a boolean mask is True, else the float mask added."""
    if mask.dtype.kind == "b":
        return where(mask.array, float("-inf"), scores)
    return scores + mask.to(scores.dtype)
