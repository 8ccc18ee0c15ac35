"""The 1-D layers, Hardtanh/ReLU6, the robust losses, the Transformer and the recurrent
layers' dropout (issue 27): values against NumPy formulas, gradients against central
differences (all are composites of primitives that already have rules)."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest

import difflab as dl
from difflab.autograd import gradcheck

F = dl.nn.functional
rng = np.random.default_rng(0)


def t64(*shape, requires_grad=True):
    return dl.tensor(rng.standard_normal(shape), dtype=dl.float64, requires_grad=requires_grad)


# ------------------------------------------------------------------ conv1d and 1-D pooling


def conv1d_reference(x, w, b, stride, padding, dilation):
    n, c, length = x.shape
    o, _, k = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding)))
    out_len = (length + 2 * padding - dilation * (k - 1) - 1) // stride + 1
    out = np.zeros((n, o, out_len))
    for i in range(out_len):
        window = xp[:, :, i * stride:i * stride + dilation * (k - 1) + 1:dilation]
        out[:, :, i] = np.einsum("nck,ock->no", window, w)
    return out + (0 if b is None else b[None, :, None])


@pytest.mark.parametrize("stride,padding,dilation", [(1, 0, 1), (2, 1, 1), (1, 2, 2)])
def test_conv1d_matches_the_sliding_dot_product(stride, padding, dilation):
    x, w, b = t64(2, 3, 9), t64(4, 3, 3), t64(4)
    out = F.conv1d(x, w, b, stride, padding, dilation)
    expected = conv1d_reference(x.array, w.array, b.array, stride, padding, dilation)
    assert np.allclose(out.array, expected)
    assert gradcheck(lambda x, w, b: F.conv1d(x, w, b, stride, padding, dilation), (x, w, b))


def test_conv1d_layer_groups_unbatched_and_errors():
    layer = dl.nn.Conv1d(4, 6, 3, padding="same", groups=2, bias=False).double()
    x = t64(4, 7, requires_grad=False)
    assert layer(x).shape == (6, 7)  # unbatched (C, L)
    assert layer.weight.shape == (6, 2, 3) and "groups=2" in repr(layer)
    assert np.allclose(layer(x).array, layer(x.unsqueeze(0)).array[0])
    with pytest.raises(ValueError, match="expects a 2-D \\(C, L\\) or 3-D"):
        layer(t64(1, 4, 7, 1))
    with pytest.raises(ValueError, match="divisible by groups"):
        dl.nn.Conv1d(3, 6, 3, groups=2)
    with pytest.raises(ValueError, match="kernel_size must be an int or a 1-tuple"):
        dl.nn.Conv1d(3, 6, (3, 3))


def test_pool1d_match_numpy_and_have_gradients():
    x = t64(2, 3, 8)
    windows = x.array.reshape(2, 3, 4, 2)
    assert np.allclose(F.max_pool1d(x, 2).array, windows.max(-1))
    assert np.allclose(F.avg_pool1d(x, 2).array, windows.mean(-1))
    assert np.allclose(dl.nn.MaxPool1d(3, 1)(x).array,
                       np.stack([x.array[..., i:i + 3].max(-1) for i in range(6)], -1))
    assert gradcheck(lambda x: F.max_pool1d(x, 3, 2, 1), (x,))
    assert gradcheck(lambda x: F.avg_pool1d(x, 3, 2, 1), (x,))
    assert F.avg_pool1d(t64(3, 8), 4).shape == (3, 2)
    with pytest.raises(NotImplementedError, match="ceil_mode=True"):
        F.max_pool1d(x, 3, ceil_mode=True)


# ------------------------------------------------------------- activations and losses


def test_hardtanh_and_relu6():
    x = dl.tensor([-7.0, -1.0, -0.3, 0.0, 0.4, 5.0, 8.0], dtype=dl.float64)
    assert np.allclose(F.hardtanh(x).array, np.clip(x.array, -1, 1))
    assert np.allclose(dl.nn.ReLU6()(x).array, np.clip(x.array, 0, 6))
    assert np.allclose(dl.nn.Hardtanh(-2, 3)(x).array, np.clip(x.array, -2, 3))
    away = dl.tensor([-1.5, -0.5, 0.5, 1.5], dtype=dl.float64, requires_grad=True)
    assert gradcheck(F.hardtanh, (away,))
    with pytest.raises(ValueError, match="cannot be less than min_val"):
        F.hardtanh(x, 2.0, 1.0)


def smooth_l1_reference(d, beta):
    a = np.abs(d)
    return np.where(a < beta, 0.5 * d * d / beta, a - 0.5 * beta)


@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0])
def test_smooth_l1_and_huber_match_their_formulas(beta):
    x, y = t64(4, 5), t64(4, 5, requires_grad=False)
    d = x.array - y.array
    expected = smooth_l1_reference(d, beta)
    assert np.allclose(F.smooth_l1_loss(x, y, beta=beta, reduction="none").array, expected)
    assert np.isclose(F.smooth_l1_loss(x, y, beta=beta).item(), expected.mean())
    assert np.isclose(dl.nn.SmoothL1Loss(reduction="sum", beta=beta)(x, y).item(), expected.sum())
    # Huber with delta = beta is beta times smooth L1 with that beta
    assert np.allclose(F.huber_loss(x, y, delta=beta, reduction="none").array, beta * expected)
    assert np.isclose(dl.nn.HuberLoss(delta=beta)(x, y).item(), beta * expected.mean())
    assert gradcheck(lambda x: F.smooth_l1_loss(x, y, beta=beta), (x,))
    assert gradcheck(lambda x: F.huber_loss(x, y, delta=beta, reduction="sum"), (x,))


def test_smooth_l1_edge_cases_and_errors():
    x, y = t64(6), t64(6, requires_grad=False)
    assert np.isclose(F.smooth_l1_loss(x, y, beta=0.0).item(), np.abs(x.array - y.array).mean())
    assert F.smooth_l1_loss(x, y, reduce=False).shape == (6,)  # PyTorch's legacy flags
    assert np.isclose(F.smooth_l1_loss(x, y, size_average=False).item(),
                      smooth_l1_reference(x.array - y.array, 1.0).sum())
    w = dl.tensor(np.arange(6.0))
    assert np.isclose(F.huber_loss(x, y, weight=w, reduction="sum").item(),
                      (smooth_l1_reference(x.array - y.array, 1.0) * np.arange(6.0)).sum())
    with pytest.raises(ValueError, match="beta must be non-negative"):
        F.smooth_l1_loss(x, y, beta=-1.0)
    with pytest.raises(ValueError, match="delta must be positive"):
        dl.nn.HuberLoss(delta=0.0)
    with pytest.raises(ValueError, match="target shape"):
        F.huber_loss(x, t64(5))


# --------------------------------------------------------------------------- Transformer


def _np_layer_norm(x, ln):
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + ln.eps) * ln.weight.array + ln.bias.array


def _np_attention(q_in, k_in, v_in, mha, mask=None):
    """PyTorch's multi-head attention on (N, L, E) arrays, from the layer's weights."""
    e, h = mha.embed_dim, mha.num_heads
    w, b = mha.in_proj_weight.array, mha.in_proj_bias.array
    q, k, v = (x @ w[i * e:(i + 1) * e].T + b[i * e:(i + 1) * e]
               for i, x in enumerate((q_in, k_in, v_in)))

    def split(a):
        return a.reshape(a.shape[0], a.shape[1], h, e // h).transpose(0, 2, 1, 3)

    scores = split(q) @ split(k).transpose(0, 1, 3, 2) / np.sqrt(e // h)
    if mask is not None:
        scores = scores + mask
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    out = (weights @ split(v)).transpose(0, 2, 1, 3).reshape(q.shape)
    return out @ mha.out_proj.weight.array.T + mha.out_proj.bias.array


def _np_feed_forward(x, layer):
    hidden = np.maximum(x @ layer.linear1.weight.array.T + layer.linear1.bias.array, 0)
    return hidden @ layer.linear2.weight.array.T + layer.linear2.bias.array


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_decoder_layers_match_a_numpy_transformer(norm_first):
    dl.manual_seed(0)
    kw = dict(d_model=8, nhead=2, dim_feedforward=12, dropout=0.0, batch_first=True,
              norm_first=norm_first)
    enc = dl.nn.TransformerEncoderLayer(**kw).double().eval()
    dec = dl.nn.TransformerDecoderLayer(**kw).double().eval()
    src, tgt = t64(2, 5, 8, requires_grad=False), t64(2, 4, 8, requires_grad=False)
    mask = dl.nn.Transformer.generate_square_subsequent_mask(4, dtype=dl.float64)

    s = src.array
    if norm_first:
        s = s + _np_attention(*(3 * (_np_layer_norm(s, enc.norm1),)), enc.self_attn)
        s = s + _np_feed_forward(_np_layer_norm(s, enc.norm2), enc)
    else:
        s = _np_layer_norm(s + _np_attention(s, s, s, enc.self_attn), enc.norm1)
        s = _np_layer_norm(s + _np_feed_forward(s, enc), enc.norm2)
    assert np.allclose(enc(src).array, s)

    m, t = s, tgt.array
    if norm_first:
        n1 = _np_layer_norm(t, dec.norm1)
        t = t + _np_attention(n1, n1, n1, dec.self_attn, mask.array)
        t = t + _np_attention(_np_layer_norm(t, dec.norm2), m, m, dec.multihead_attn)
        t = t + _np_feed_forward(_np_layer_norm(t, dec.norm3), dec)
    else:
        t = _np_layer_norm(t + _np_attention(t, t, t, dec.self_attn, mask.array), dec.norm1)
        t = _np_layer_norm(t + _np_attention(t, m, m, dec.multihead_attn), dec.norm2)
        t = _np_layer_norm(t + _np_feed_forward(t, dec), dec.norm3)
    assert np.allclose(dec(tgt, dl.tensor(m), tgt_mask=mask).array, t)


def test_transformer_stacks_gradients_and_masks():
    dl.manual_seed(1)
    model = dl.nn.Transformer(d_model=4, nhead=2, num_encoder_layers=2, num_decoder_layers=1,
                              dim_feedforward=6, dropout=0.0).double()
    # the stacks are deep copies: equal at first, separate parameters
    first, second = model.encoder.layers
    assert first.linear1.weight is not second.linear1.weight
    assert len(list(model.parameters())) == len({id(p) for p in model.parameters()})
    src, tgt = t64(3, 2, 4), t64(2, 2, 4)
    mask = dl.nn.Transformer.generate_square_subsequent_mask(2, dtype=dl.float64)
    assert gradcheck(lambda s, t: model(s, t, tgt_mask=mask), (src, tgt))
    # a causal mask: the first target position does not see the second
    changed = tgt.detach().clone()
    changed.array[1] += 1.0
    out_a, out_b = model(src, tgt, tgt_mask=mask), model(src, changed, tgt_mask=mask)
    assert np.allclose(out_a.array[0], out_b.array[0])
    assert not np.allclose(out_a.array[1], out_b.array[1])
    with pytest.raises(RuntimeError, match="batch number of src"):
        model(t64(3, 2, 4), t64(2, 3, 4))
    with pytest.raises(RuntimeError, match="activation should be relu/gelu"):
        dl.nn.TransformerEncoderLayer(4, 2, activation="swish")
    gelu = dl.nn.TransformerEncoderLayer(4, 2, activation="gelu", dim_feedforward=6)
    assert gelu.activation is F.gelu and gelu(t64(3, 2, 4)).shape == (3, 2, 4)
    padded = model.encoder(src, src_key_padding_mask=dl.tensor([[False, False, True],
                                                                 [False, False, False]]))
    assert padded.shape == src.shape


def test_transformer_encoder_deep_copies_its_layer():
    layer = dl.nn.TransformerEncoderLayer(4, 2, dim_feedforward=6)
    encoder = dl.nn.TransformerEncoder(layer, 3, norm=dl.nn.LayerNorm(4))
    assert all(m.linear1.weight is not layer.linear1.weight for m in encoder.layers)
    assert np.array_equal(encoder.layers[2].linear1.weight.array, layer.linear1.weight.array)
    with pytest.raises(ValueError, match="num_layers must be a positive integer"):
        dl.nn.TransformerEncoder(layer, 0)
    assert copy.deepcopy(encoder).num_layers == 3


# -------------------------------------------------------------------- recurrent dropout


@pytest.mark.parametrize("cls", [dl.nn.RNN, dl.nn.LSTM, dl.nn.GRU])
def test_recurrent_dropout_acts_between_layers_in_training_only(cls):
    dl.manual_seed(0)
    net = cls(3, 5, num_layers=2, dropout=0.5).double()
    x = t64(4, 2, 3, requires_grad=False)
    net.eval()
    evaluated = net(x)[0].array
    assert np.allclose(net(x)[0].array, evaluated)  # no randomness in evaluation
    plain = cls(3, 5, num_layers=2).double()
    plain.load_state_dict(net.state_dict())
    assert np.allclose(plain(x)[0].array, evaluated)
    net.train()
    assert not np.allclose(net(x)[0].array, evaluated)  # dropped between the layers
    net.dropout = 0.0
    assert np.allclose(net(x)[0].array, evaluated)
    assert "dropout=0.5" in repr(cls(3, 5, 2, dropout=0.5))


def test_recurrent_dropout_checks_and_warns_like_pytorch():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        dl.nn.LSTM(3, 4, dropout=0.2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dl.nn.GRU(3, 4, num_layers=2, dropout=0.2)
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        dl.nn.RNN(3, 4, 2, dropout=1.5)
    with pytest.raises(NotImplementedError, match="bidirectional=True"):
        dl.nn.LSTM(3, 4, bidirectional=True)
    lstm = dl.nn.LSTM(3, 4, num_layers=3, batch_first=True, dropout=0.1)
    assert lstm.flatten_parameters() is None
    out, (h, c) = lstm(dl.randn(2, 5, 3))
    assert out.shape == (2, 5, 4) and h.shape == c.shape == (3, 2, 4)
    dl.manual_seed(2)
    deep = dl.nn.LSTM(2, 3, 2, dropout=0.3).double().eval()
    assert gradcheck(lambda x: deep(x)[0], (t64(3, 1, 2),))


def test_pad_and_unpad_sequences_for_a_recurrent_batch():
    from difflab.nn.utils.rnn import pad_sequence, unpad_sequence

    seqs = [t64(3, 2), t64(1, 2), t64(4, 2)]
    batch = pad_sequence(seqs, padding_value=-1.0)
    assert batch.shape == (4, 3, 2)
    assert np.array_equal(batch.array[:3, 0], seqs[0].array)
    assert np.all(batch.array[1:, 1] == -1.0)
    left = pad_sequence(seqs, batch_first=True, padding_side="left")
    assert np.array_equal(left.array[1, -1], seqs[1].array[0]) and np.all(left.array[1, :3] == 0)
    back = unpad_sequence(batch, dl.tensor([3, 1, 4]))
    assert all(np.array_equal(a.array, b.array) for a, b in zip(back, seqs))
    assert gradcheck(lambda a, b, c: pad_sequence([a, b, c], batch_first=True), tuple(seqs))
    out, _ = dl.nn.GRU(2, 3).double()(batch)
    assert out.shape == (4, 3, 3)
    with pytest.raises(ValueError, match="every sequence must be"):
        pad_sequence([t64(3, 2), t64(3, 4)])
