r"""The Transformer of "Attention Is All You Need", as ``torch.nn.Transformer`` builds it.

Every piece is a layer difflab already has: :class:`MultiheadAttention`,
:class:`Linear`, :class:`LayerNorm`, :class:`Dropout`.  An encoder layer is

    x ← norm1(x + dropout1(self_attn(x, x, x)))
    x ← norm2(x + dropout2(linear2(dropout(activation(linear1(x))))))

(``norm_first=True`` normalises before each block instead: x ← x + block(norm(x))).
A decoder layer adds, between the two, attention from the target to the
encoder's output (the *memory*).  Stacks of N layers are deep copies of one
layer; :class:`Transformer` joins an encoder stack and a decoder stack, each
ending in a LayerNorm.  The gradient is the chain of the pieces' rules.

Shapes follow PyTorch: (S, N, E) source and (T, N, E) target, or (N, S, E) and
(N, T, E) with ``batch_first=True``.  In masks, boolean True means "may not
attend"; a float mask is added to the attention scores
(:meth:`Transformer.generate_square_subsequent_mask` gives the causal one).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from difflab.nn import functional as F
from difflab.nn import init
from difflab.nn.modules.attention import MultiheadAttention
from difflab.nn.modules.container import ModuleList
from difflab.nn.modules.layers import Dropout, LayerNorm, Linear
from difflab.nn.modules.module import Module
from difflab.tensor import Tensor

__all__ = ["Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
           "TransformerEncoderLayer"]


def _activation(activation: str | Callable) -> Callable:
    if callable(activation):
        return activation
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation!r}")


def _clones(layer: Module, n: int) -> ModuleList:
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"num_layers must be a positive integer, got {n!r}")
    return ModuleList([copy.deepcopy(layer) for _ in range(n)])


class TransformerEncoderLayer(Module):
    r"""Self-attention then a feed-forward block, each with a residual and a LayerNorm.

    Parameters
    ----------
    d_model : int
        Features per position (E).
    nhead : int
        Attention heads (must divide ``d_model``).
    dim_feedforward : int
        Width of the feed-forward block.
    dropout : float
        Dropout after the attention, inside and after the feed-forward block.
    activation : 'relu', 'gelu' or a callable
    layer_norm_eps : float
    batch_first : bool
        (N, S, E) inputs instead of (S, N, E).
    norm_first : bool
        Pre-norm (x + block(norm(x))) instead of post-norm.
    bias : bool
        Biases in the linear layers, the attention and the LayerNorms.

    Shape
    -----
    - Input: :math:`(S, N, E)`, or :math:`(N, S, E)` with ``batch_first``.
    - Output: the same shape.

    Notes
    -----
    .. math::
        x &\leftarrow \text{norm}_1(x + \text{SelfAttention}(x)) \\
        x &\leftarrow \text{norm}_2(x + W_2\,\text{dropout}(\text{act}(W_1 x + b_1)) + b_2)

    With ``norm_first`` each norm moves inside its residual: :math:`x +
    \text{block}(\text{norm}(x))`.

    Examples
    --------
    >>> import difflab as dl
    >>> layer = dl.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16)
    >>> layer(dl.randn(5, 3, 8)).shape            # (S, N, E)
    difflab.Size([5, 3, 8])
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable = "relu",
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1, self.dropout2 = Dropout(dropout), Dropout(dropout)
        self.activation = _activation(activation)
        self.batch_first = batch_first

    def forward(self, src: Tensor, src_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None, is_causal: bool = False) -> Tensor:
        r"""Encode ``src``: self-attention, then the feed-forward block.

        Each block has a residual connection and a LayerNorm.

        Post-norm (the default): :math:`x \leftarrow \text{norm}_1(x + \text{SA}(x))`,
        :math:`x \leftarrow \text{norm}_2(x + \text{FF}(x))`; with ``norm_first``:
        :math:`x \leftarrow x + \text{SA}(\text{norm}_1(x))`,
        :math:`x \leftarrow x + \text{FF}(\text{norm}_2(x))`.

        Parameters
        ----------
        src : Tensor
            :math:`(S, N, E)`, or :math:`(N, S, E)` with ``batch_first``.
        src_mask : Tensor, optional
            :math:`(S, S)` attention mask, as :class:`MultiheadAttention`'s (True or
            :math:`-\infty`: may not attend).
        src_key_padding_mask : Tensor, optional
            :math:`(N, S)`, True at padding positions.
        is_causal : bool, default False
            A hint that ``src_mask`` is the causal mask (which must be given).

        Returns
        -------
        Tensor
            ``src``'s shape.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16)
        >>> mask = nn.Transformer.generate_square_subsequent_mask(5)
        >>> layer(dl.randn(5, 3, 8), src_mask=mask, is_causal=True).shape
        difflab.Size([5, 3, 8])
        """
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))

    def _sa_block(self, x: Tensor, mask: Any, padding: Any, is_causal: bool) -> Tensor:
        out = self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=padding,
                             need_weights=False, is_causal=is_causal and mask is not None)[0]
        return self.dropout1(out)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoderLayer(Module):
    r"""Self-attention over the target, attention to the memory, then a feed-forward block.

    Parameters are those of :class:`TransformerEncoderLayer`.

    Called as ``layer(tgt, memory, tgt_mask=None, memory_mask=None,
    tgt_key_padding_mask=None, memory_key_padding_mask=None, tgt_is_causal=False,
    memory_is_causal=False)``; masks as :class:`MultiheadAttention`'s (True: may not attend).

    Parameters
    ----------
    d_model : int
        :math:`E`, features per position.
    nhead : int
        Attention heads (dividing ``d_model``).
    dim_feedforward : int, default 2048
        Width of the feed-forward block.
    dropout : float, default 0.1
        Dropout after each attention, inside and after the feed-forward block.
    activation : {'relu', 'gelu'} or callable, default 'relu'
        The feed-forward block's activation.
    layer_norm_eps : float, default 1e-5
        The LayerNorms' epsilon.
    batch_first : bool, default False
        :math:`(N, T, E)` inputs instead of :math:`(T, N, E)`.
    norm_first : bool, default False
        Pre-norm (:math:`x + \text{block}(\text{norm}(x))`) instead of post-norm.
    bias : bool, default True
        Biases in the linear layers, the attentions and the LayerNorms.
    device, dtype : optional
        Where the parameters live and their dtype.

    Shape
    -----
    - Input: ``tgt`` :math:`(T, N, E)`, ``memory`` :math:`(S, N, E)` (batch first with
      ``batch_first``).
    - Output: ``tgt``'s shape.

    See Also
    --------
    TransformerDecoder, TransformerEncoderLayer

    Examples
    --------
    >>> import difflab as dl
    >>> layer = dl.nn.TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=16)
    >>> memory, tgt = dl.randn(5, 3, 8), dl.randn(4, 3, 8)
    >>> layer(tgt, memory).shape                  # (T, N, E)
    difflab.Size([4, 3, 8])
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable = "relu",
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **kw)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1, self.dropout2, self.dropout3 = (Dropout(dropout), Dropout(dropout),
                                                       Dropout(dropout))
        self.activation = _activation(activation)
        self.batch_first = batch_first

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        """Decode ``tgt`` attending to ``memory``: self-attention, cross-attention, feed-forward.

        ``memory`` is the encoder's output.

        Each block has a residual and a LayerNorm (before the block with ``norm_first``).

        Parameters
        ----------
        tgt : Tensor
            :math:`(T, N, E)`, or :math:`(N, T, E)` with ``batch_first``.
        memory : Tensor
            :math:`(S, N, E)`.
        tgt_mask : Tensor, optional
            :math:`(T, T)`, the self-attention mask (the causal mask, usually).
        memory_mask : Tensor, optional
            :math:`(T, S)`, the cross-attention mask.
        tgt_key_padding_mask, memory_key_padding_mask : Tensor, optional
            :math:`(N, T)` and :math:`(N, S)`, True at padding positions.
        tgt_is_causal, memory_is_causal : bool, default False
            Hints that the masks are causal (the masks must be given).

        Returns
        -------
        Tensor
            ``tgt``'s shape.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> layer = nn.TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=16)
        >>> mask = nn.Transformer.generate_square_subsequent_mask(4)
        >>> layer(dl.randn(4, 3, 8), dl.randn(5, 3, 8), tgt_mask=mask).shape
        difflab.Size([4, 3, 8])
        """
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask,
                                    memory_is_causal)
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                           memory_is_causal))
        return self.norm3(x + self._ff_block(x))

    def _sa_block(self, x: Tensor, mask: Any, padding: Any, is_causal: bool) -> Tensor:
        out = self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=padding,
                             need_weights=False, is_causal=is_causal and mask is not None)[0]
        return self.dropout1(out)

    def _mha_block(self, x: Tensor, mem: Tensor, mask: Any, padding: Any, is_causal: bool
                   ) -> Tensor:
        out = self.multihead_attn(x, mem, mem, attn_mask=mask, key_padding_mask=padding,
                                  need_weights=False, is_causal=is_causal and mask is not None)[0]
        return self.dropout2(out)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoder(Module):
    r"""``num_layers`` copies of ``encoder_layer`` applied in turn, then ``norm`` if given.

    Parameters
    ----------
    encoder_layer : TransformerEncoderLayer
        Deep-copied: the layers start equal and train separately.
    num_layers : int
    norm : Module, optional
        Applied to the last layer's output (a LayerNorm in :class:`Transformer`).
    enable_nested_tensor, mask_check : bool
        Accepted for PyTorch's signature (PyTorch's fast paths; no effect here).

    Shape
    -----
    - Input: :math:`(S, N, E)` (or batch first).
    - Output: the same shape.

    Notes
    -----
    .. math::
        x \leftarrow \text{layer}_L(\cdots \text{layer}_1(x)), \quad \text{then norm}(x) \text{
        if given}

    Examples
    --------
    >>> import difflab as dl
    >>> layer = dl.nn.TransformerEncoderLayer(d_model=8, nhead=2, batch_first=True)
    >>> encoder = dl.nn.TransformerEncoder(layer, num_layers=2)
    >>> encoder(dl.randn(3, 5, 8)).shape           # (N, S, E)
    difflab.Size([3, 5, 8])
    """

    def __init__(self, encoder_layer: Module, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers, self.norm = num_layers, norm

    def forward(self, src: Tensor, mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None, is_causal: bool | None = None
                ) -> Tensor:
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                      is_causal=bool(is_causal))
        return x if self.norm is None else self.norm(x)


class TransformerDecoder(Module):
    """``num_layers`` copies of ``decoder_layer`` applied in turn, then ``norm`` if given.

    Called as ``decoder(tgt, memory, tgt_mask=None, memory_mask=None, ...)`` with
    the masks of :class:`TransformerDecoderLayer`, passed to every layer.

    Parameters
    ----------
    decoder_layer : TransformerDecoderLayer
        The layer to copy (each copy has its own parameters, initialised as the original's).
    num_layers : int
        How many copies.
    norm : Module, optional
        Applied to the last layer's output (a LayerNorm, for pre-norm layers).

    Shape
    -----
    - Input: ``tgt`` :math:`(T, N, E)`, ``memory`` :math:`(S, N, E)`.
    - Output: ``tgt``'s shape.

    See Also
    --------
    TransformerEncoder, Transformer

    Examples
    --------
    >>> import difflab as dl
    >>> layer = dl.nn.TransformerDecoderLayer(d_model=8, nhead=2)
    >>> decoder = dl.nn.TransformerDecoder(layer, num_layers=2)
    >>> decoder(dl.randn(4, 3, 8), dl.randn(5, 3, 8)).shape
    difflab.Size([4, 3, 8])
    """

    def __init__(self, decoder_layer: Module, num_layers: int, norm: Module | None = None
                 ) -> None:
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers, self.norm = num_layers, norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask,
                      tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        return x if self.norm is None else self.norm(x)


class Transformer(Module):
    r"""An encoder-decoder Transformer (PyTorch's defaults: 6 + 6 layers of width 512, 8 heads).

    ``forward(src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
    src_key_padding_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None)`` encodes ``src`` and decodes ``tgt`` against it.
    There is no embedding or output projection: add them around it, as in PyTorch.
    Parameters of more than one dimension are initialised Xavier-uniform.

    Parameters
    ----------
    d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
    norm_first, bias :
        As in :class:`TransformerEncoderLayer`.
    num_encoder_layers, num_decoder_layers : int
    custom_encoder, custom_decoder : Module, optional
        Used instead of the stacks built here.

    Shape
    -----
    - Input: ``src`` :math:`(S, N, E)`, ``tgt`` :math:`(T, N, E)` (or batch first).
    - Output: :math:`(T, N, E)`.

    Notes
    -----
    .. math::
        \text{out} = \text{Decoder}(\text{tgt}, \text{Encoder}(\text{src}))

    Examples
    --------
    >>> import difflab as dl
    >>> model = dl.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1,
    ...                           num_decoder_layers=1, dim_feedforward=16, batch_first=True)
    >>> src, tgt = dl.randn(3, 6, 8), dl.randn(3, 4, 8)
    >>> mask = dl.nn.Transformer.generate_square_subsequent_mask(4)
    >>> model(src, tgt, tgt_mask=mask).shape
    difflab.Size([3, 4, 8])
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable = "relu", custom_encoder: Module | None = None,
                 custom_decoder: Module | None = None, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        kw = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
                  layer_norm_eps=layer_norm_eps, batch_first=batch_first,
                  norm_first=norm_first, bias=bias, device=device, dtype=dtype)
        norm = dict(eps=layer_norm_eps, bias=bias, device=device, dtype=dtype)
        self.encoder = custom_encoder if custom_encoder is not None else TransformerEncoder(
            TransformerEncoderLayer(d_model, nhead, **kw), num_encoder_layers,
            LayerNorm(d_model, **norm))
        self.decoder = custom_decoder if custom_decoder is not None else TransformerDecoder(
            TransformerDecoderLayer(d_model, nhead, **kw), num_decoder_layers,
            LayerNorm(d_model, **norm))
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None,
                tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, src_is_causal: bool | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        batch = 0 if self.batch_first else 1
        if src.ndim == 3 and tgt.ndim == 3 and src.shape[batch] != tgt.shape[batch]:
            raise RuntimeError(f"the batch number of src ({src.shape[batch]}) and tgt "
                               f"({tgt.shape[batch]}) must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError(f"the feature number of src and tgt must be equal to d_model "
                               f"({self.d_model}), got {src.shape[-1]} and {tgt.shape[-1]}")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None
                                        ) -> Tensor:
        r"""The causal mask (sz, sz): 0 on and below the diagonal, -inf above.

        Added to the attention scores, it stops position i from attending to
        positions after i.

        Parameters
        ----------
        sz : int
            The sequence length.
        device : str or difflab.device, optional
            Where the mask lives.
        dtype : difflab dtype, optional
            Its floating dtype (the default dtype by default).

        Returns
        -------
        Tensor
            :math:`(sz, sz)`, 0 on and below the diagonal and :math:`-\infty` above.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.nn.Transformer.generate_square_subsequent_mask(3)
        tensor([[  0., -inf, -inf],
                [  0.,   0., -inf],
                [  0.,   0.,   0.]])
        """
        from difflab.creation import full

        return full((sz, sz), float("-inf"), dtype=dtype, device=device).triu(1)
