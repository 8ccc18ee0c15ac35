"""Padding, attention and the GRU, against PyTorch's documented formulas.

F.pad against NumPy's pad, scaled_dot_product_attention against its reference
formula, MultiheadAttention against the same computation written out in
NumPy from the layer's own parameters, the GRU cell against its equations;
gradients against central differences; and a one-block causal self-attention
language model that learns a tiny text.
"""

import math

import numpy as np
import pytest

import difflab as dl
import difflab.nn as nn
import difflab.nn.functional as F
from difflab.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(3)


def make(shape, device="cpu"):
    return dl.tensor(RNG.uniform(-1, 1, size=shape), dtype=dl.float64, device=device,
                     requires_grad=True)


def host(t):
    return t.detach().cpu().numpy()


# --------------------------------------------------------------------------- pad


@pytest.mark.parametrize("mode, numpy_mode", [("constant", "constant"), ("reflect", "reflect"),
                                              ("replicate", "edge"), ("circular", "wrap")])
def test_pad_matches_numpy(mode, numpy_mode, device):
    x = make((2, 3, 4, 5), device)
    out = F.pad(x, (1, 2, 3, 0), mode=mode)
    expected = np.pad(host(x), ((0, 0), (0, 0), (3, 0), (1, 2)), mode=numpy_mode)
    np.testing.assert_array_equal(host(out), expected)
    assert gradcheck(lambda a: F.pad(a, (1, 2, 3, 0), mode=mode), (x,))
    assert gradgradcheck(lambda a: F.pad(a, (2, 1), mode=mode), (x,))


def test_pad_constant_value_and_negative_padding_crops():
    x = dl.arange(6.0).reshape(2, 3)
    assert F.pad(x, (1, 1), value=-1.0).tolist() == [[-1, 0, 1, 2, -1], [-1, 3, 4, 5, -1]]
    assert F.pad(x, (-1, 0)).tolist() == [[1, 2], [4, 5]]
    assert F.pad(x, (0, 0, 1, -1)).tolist() == [[0, 0, 0], [0, 1, 2]]
    y = dl.arange(6.0).reshape(2, 3).requires_grad_()
    F.pad(y, (-1, 2)).sum().backward()
    assert y.grad.tolist() == [[0, 1, 1], [0, 1, 1]]


def test_pad_errors():
    x = dl.randn(2, 3)
    with pytest.raises(ValueError, match="pairs"):
        F.pad(x, (1, 2, 3))
    with pytest.raises(ValueError, match="mode must be one of"):
        F.pad(x, (1, 1), mode="mirror")
    with pytest.raises(ValueError, match="must be smaller than the size of dimension 1"):
        F.pad(x, (3, 0), mode="reflect")
    with pytest.raises(ValueError, match="negative size"):
        F.pad(x, (-2, -2))


# ------------------------------------------------------------ scaled dot products


def _reference_attention(q, k, v, mask=None, scale=None):
    """PyTorch's documented reference: softmax(q kᵀ · scale + bias) v."""
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ np.swapaxes(k, -1, -2) * scale
    if mask is not None:
        scores = np.where(mask, scores, -np.inf) if mask.dtype == bool else scores + mask
    scores = scores - scores.max(-1, keepdims=True)
    w = np.exp(scores)
    return (w / w.sum(-1, keepdims=True)) @ v


def test_scaled_dot_product_attention_matches_the_reference(device):
    q, k, v = make((2, 3, 4, 8), device), make((2, 3, 6, 8), device), make((2, 3, 6, 5), device)
    out = F.scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(host(out), _reference_attention(host(q), host(k), host(v)),
                               rtol=1e-12)
    keep = RNG.random((4, 6)) > 0.3
    keep[:, 0] = True  # every query attends somewhere
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=dl.tensor(keep, device=device),
                                         scale=0.3)
    np.testing.assert_allclose(host(out), _reference_attention(host(q), host(k), host(v), keep,
                                                               0.3), rtol=1e-12)
    bias = RNG.normal(size=(4, 6))
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=dl.tensor(bias, device=device))
    np.testing.assert_allclose(host(out), _reference_attention(host(q), host(k), host(v), bias),
                               rtol=1e-12)
    assert gradcheck(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True),
                     (q[:1, :1], k[:1, :1, :4], v[:1, :1, :4]))


def test_is_causal_lets_each_position_see_only_the_past():
    x = make((1, 5, 4))
    causal = F.scaled_dot_product_attention(x, x, x, is_causal=True)
    explicit = F.scaled_dot_product_attention(
        x, x, x, attn_mask=dl.tensor(np.tril(np.ones((5, 5), dtype=bool))))
    np.testing.assert_array_equal(host(causal), host(explicit))
    np.testing.assert_allclose(host(causal)[0, 0], host(x)[0, 0])  # the first sees itself only
    causal[0, 2].sum().backward()
    assert np.all(x.grad.numpy()[0, 3:] == 0.0)  # no gradient from the future
    with pytest.raises(ValueError, match="either attn_mask or is_causal"):
        F.scaled_dot_product_attention(x, x, x, attn_mask=dl.ones(5, 5).bool(), is_causal=True)
    with pytest.raises(ValueError, match="expected query"):
        F.scaled_dot_product_attention(x, x[..., :3], x)


# ------------------------------------------------------------ multi-head attention


def _numpy_mha(m, q, k, v, mask=None):
    """The layer written out in NumPy from its parameters (inputs (N, L, E))."""
    e, h = m.embed_dim, m.num_heads
    w, b = host(m.in_proj_weight), host(m.in_proj_bias)
    heads = []
    for x, i in ((q, 0), (k, 1), (v, 2)):
        y = x @ w[i * e:(i + 1) * e].T + b[i * e:(i + 1) * e]
        heads.append(y.reshape(y.shape[0], y.shape[1], h, e // h).transpose(0, 2, 1, 3))
    scores = heads[0] @ heads[1].transpose(0, 1, 3, 2) / math.sqrt(e // h)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    scores = scores - scores.max(-1, keepdims=True)
    weights = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
    out = (weights @ heads[2]).transpose(0, 2, 1, 3).reshape(q.shape[0], q.shape[1], e)
    return out @ host(m.out_proj.weight).T + host(m.out_proj.bias), weights.mean(1)


def test_multihead_attention_matches_its_formula_in_every_layout(device):
    dl.manual_seed(0)
    m = nn.MultiheadAttention(8, 2, batch_first=True).double().to(device)
    with dl.no_grad():
        m.in_proj_bias.copy_(dl.randn(24, dtype=dl.float64, device=device))
    x, mem = make((3, 5, 8), device), make((3, 7, 8), device)
    causal = np.triu(np.ones((5, 5), dtype=bool), 1)  # True = may not attend (this layer)
    out, weights = m(x, x, x, attn_mask=dl.tensor(causal, device=device))
    expected_out, expected_w = _numpy_mha(m, host(x), host(x), host(x), causal)
    np.testing.assert_allclose(host(out), expected_out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(host(weights), expected_w, rtol=1e-10, atol=1e-12)
    out, weights = m(x, mem, mem)  # cross-attention: (N, L, S) weights
    assert out.shape == (3, 5, 8) and weights.shape == (3, 5, 7)
    np.testing.assert_allclose(host(out), _numpy_mha(m, host(x), host(mem), host(mem))[0],
                               rtol=1e-10, atol=1e-12)
    # sequence first (PyTorch's default), unbatched, per-head weights, no weights
    m.batch_first = False
    seq_first, _ = m(x.transpose(0, 1), mem.transpose(0, 1), mem.transpose(0, 1))
    np.testing.assert_allclose(host(seq_first.transpose(0, 1)), host(out), rtol=1e-12)
    single, w1 = m(x[0], mem[0], mem[0])
    np.testing.assert_allclose(host(single), host(out[0]), rtol=1e-12)
    assert w1.shape == (5, 7)
    _, per_head = m(x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1),
                    average_attn_weights=False)
    assert per_head.shape == (3, 2, 5, 5)
    assert m(x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1), need_weights=False)[1] \
        is None


@pytest.mark.parametrize("batch_first", [True, False])
def test_self_attention_projects_once_and_equals_three_projections(batch_first):
    # query is key is value: one product with the packed weight (PyTorch's packed path),
    # cut into q, k and v; the same values as three products with its thirds
    def run(self_attention):
        dl.manual_seed(4)
        m = nn.MultiheadAttention(8, 2, batch_first=batch_first).double()
        with dl.no_grad():
            m.in_proj_bias.copy_(dl.randn(24, dtype=dl.float64))
        x = dl.tensor(np.random.default_rng(5).normal(size=(3, 5, 8)), requires_grad=True)
        k, v = (x, x) if self_attention else (x * 1.0, x * 1.0)  # (equal, other tensors)
        out, weights = m(x, k, v)
        (out.sin().sum() + weights.cos().sum()).backward()
        return [out, weights, x.grad] + [p.grad for p in m.parameters()]

    for a, b in zip(run(True), run(False)):
        np.testing.assert_allclose(host(a), host(b), rtol=1e-12, atol=1e-14)
    m, x = nn.MultiheadAttention(8, 2, batch_first=True).double(), make((3, 5, 8))
    assert dl.jit.trace(lambda a: m(a, a, a)[0], x).graph.op_counts()["linear"] == 2
    assert dl.jit.trace(lambda a: m(a, a * 1.0, a)[0], x).graph.op_counts()["linear"] == 4


def test_multihead_attention_parameters_masks_and_gradients():
    m = nn.MultiheadAttention(4, 2, batch_first=True).double()
    assert [(n, p.shape) for n, p in m.named_parameters()] == [
        ("in_proj_weight", (12, 4)), ("in_proj_bias", (12,)), ("out_proj.weight", (4, 4)),
        ("out_proj.bias", (4,))]
    assert not m.in_proj_bias.detach().numpy().any()  # zero biases, as in PyTorch
    x = make((2, 3, 4))
    padding = dl.tensor([[False, False, True], [False, False, False]])
    _, weights = m(x, x, x, key_padding_mask=padding)
    assert np.all(weights.detach().numpy()[0, :, 2] == 0.0)  # the padded key gets no weight
    np.testing.assert_allclose(weights.detach().numpy().sum(-1), 1.0)
    assert gradcheck(lambda a: m(a, a, a, key_padding_mask=padding)[0], (x,))
    m(x, x, x)[0].sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    kv = nn.MultiheadAttention(4, 2, kdim=3, vdim=5, batch_first=True)
    assert kv.k_proj_weight.shape == (4, 3) and kv.in_proj_weight is None
    out, _ = kv(dl.randn(2, 3, 4), dl.randn(2, 6, 3), dl.randn(2, 6, 5))
    assert out.shape == (2, 3, 4)


def test_multihead_attention_errors():
    with pytest.raises(ValueError, match="divisible by num_heads"):
        nn.MultiheadAttention(6, 4)
    m = nn.MultiheadAttention(4, 2)
    x = dl.randn(3, 2, 4)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m(x, x, x, is_causal=True)
    with pytest.raises(ValueError, match="attn_mask must have shape"):
        m(x, x, x, attn_mask=dl.ones(2, 2).bool())
    with pytest.raises(ValueError, match="key_padding_mask must have shape"):
        m(x, x, x, key_padding_mask=dl.ones(3, 2).bool())
    with pytest.raises(ValueError, match="query has 5 features"):
        m(dl.randn(3, 2, 5), x, x)


# --------------------------------------------------------------------------- GRU


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def test_gru_cell_follows_pytorchs_equations(device):
    cell = nn.GRUCell(3, 4).double().to(device)
    assert cell.weight_ih.shape == (12, 3) and cell.weight_hh.shape == (12, 4)
    x, h = make((2, 3), device), make((2, 4), device)
    wi, wh = host(cell.weight_ih), host(cell.weight_hh)
    bi, bh = host(cell.bias_ih), host(cell.bias_hh)
    gi, gh = host(x) @ wi.T + bi, host(h) @ wh.T + bh
    r = _sigmoid(gi[:, :4] + gh[:, :4])
    z = _sigmoid(gi[:, 4:8] + gh[:, 4:8])
    n = np.tanh(gi[:, 8:] + r * gh[:, 8:])
    np.testing.assert_allclose(host(cell(x, h)), (1 - z) * n + z * host(h), rtol=1e-12)
    assert gradcheck(cell, (x, h))
    assert gradgradcheck(cell, (x, h))


def test_gru_layers_and_layouts():
    dl.manual_seed(1)
    gru = nn.GRU(3, 5, num_layers=2, batch_first=True)
    assert sorted(n for n, _ in gru.named_parameters()) == sorted(
        f"{w}_l{i}" for i in range(2) for w in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))
    x = dl.randn(4, 6, 3)
    out, h_n = gru(x)
    assert out.shape == (4, 6, 5) and h_n.shape == (2, 4, 5)
    np.testing.assert_array_equal(out[:, -1].detach().numpy(), h_n[-1].detach().numpy())
    gru.batch_first = False
    again, _ = gru(x.transpose(0, 1), h_n * 0)
    np.testing.assert_allclose(again.transpose(0, 1).detach().numpy(), out.detach().numpy(),
                               rtol=1e-6)
    out.sum().backward()
    assert all(p.grad is not None for p in gru.parameters())


# ---------------------------------------------------------------- small functions


def test_one_hot_range_errors():
    assert F.one_hot(dl.tensor([0, 2]), 3).tolist() == [[1, 0, 0], [0, 0, 1]]
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        F.one_hot(dl.tensor([0, 3]), 3)
    with pytest.raises(RuntimeError, match="non-negative"):
        F.one_hot(dl.tensor([-1, 0]))


def test_clip_grad_norm_returns_the_norm_before_clipping():
    a, b = dl.zeros(2, requires_grad=True), dl.zeros(3, requires_grad=True)
    a.grad, b.grad = dl.tensor([3.0, 0.0]), dl.tensor([0.0, 4.0, 0.0])
    assert nn.utils.clip_grad_norm_([a, b], 1.0).item() == pytest.approx(5.0)
    assert math.hypot(*a.grad.tolist(), *b.grad.tolist()) == pytest.approx(1.0, rel=1e-5)
    a.grad = dl.tensor([-7.0, 1.0])
    assert nn.utils.clip_grad_norm_([a, b], 100.0, norm_type="inf").item() == 7.0


# ------------------------------------------------------ a tiny causal transformer


class CausalSelfAttentionLM(nn.Module):
    """One transformer block over characters: embeddings, causal attention, an MLP."""

    def __init__(self, vocab: int, context: int, width: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.token = nn.Embedding(vocab, width)
        self.position = nn.Embedding(context, width)
        self.ln1, self.ln2, self.ln_f = nn.LayerNorm(width), nn.LayerNorm(width), nn.LayerNorm(
            width)
        self.attention = nn.MultiheadAttention(width, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                 nn.Linear(4 * width, width))
        self.head = nn.Linear(width, vocab)
        # True above the diagonal: position i may not attend to j > i
        self.register_buffer("mask", dl.tensor(np.triu(np.ones((context, context), bool), 1)))

    def forward(self, idx):
        t = idx.shape[1]
        x = self.token(idx) + self.position(dl.arange(t))
        h = self.ln1(x)
        x = x + self.attention(h, h, h, attn_mask=self.mask[:t, :t], need_weights=False)[0]
        x = x + self.mlp(self.ln2(x))
        return self.head(self.ln_f(x))


def test_a_one_block_causal_self_attention_model_learns_a_tiny_text():
    text = "hello world, hello difflab. " * 8
    chars = sorted(set(text))
    data = dl.tensor([chars.index(c) for c in text])
    context = 8
    dl.manual_seed(0)
    model = CausalSelfAttentionLM(len(chars), context)
    optimizer = dl.optim.AdamW(model.parameters(), lr=1e-2)
    starts = np.arange(len(text) - context - 1)

    def batch(rng):
        rows = rng.choice(starts, size=16)
        x = dl.stack([data[s:s + context] for s in rows])
        y = dl.stack([data[s + 1:s + context + 1] for s in rows])
        return x, y

    rng = np.random.default_rng(0)
    losses = []
    for _ in range(80):
        x, y = batch(rng)
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, len(chars)), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
    assert losses[0] > 0.9 * math.log(len(chars))  # starts near chance
    assert np.mean(losses[-10:]) < 0.35 * losses[0]  # and learns the text
    # causality: changing a later character leaves the earlier predictions unchanged
    model.eval()
    with dl.no_grad():
        x, _ = batch(rng)
        changed = x.clone()
        changed[:, -1] = (changed[:, -1] + 1) % len(chars)
        np.testing.assert_allclose(model(x)[:, :-1].numpy(), model(changed)[:, :-1].numpy(),
                                   rtol=1e-5, atol=1e-6)


def test_forward_mode_gradients_equal_reverse_mode_through_the_new_layers():
    """compute_gradients by dual numbers and by the tape agree through attention, GRU,
    padding, gather, sort, topk and roll."""

    class Mixed(nn.Module):
        def __init__(self):
            super().__init__()
            self.project = nn.Linear(4, 4)
            self.attention = nn.MultiheadAttention(4, 2, batch_first=True)
            self.gru = nn.GRU(4, 3, batch_first=True)

        def forward(self, x):
            y = self.attention(*(self.project(x),) * 3, need_weights=False)[0]
            y = F.pad(y, (1, 1), mode="reflect")[..., :4] + F.pad(y, (0, 1))[..., 1:]
            index = dl.tensor([[[0, 1, 1, 3]] * 3] * 2)
            y = y.gather(2, index) + y.sort(-1).values + y.roll(1, 1) + y.topk(4, -1).values
            y = y + F.scaled_dot_product_attention(y, y, y)
            return self.gru(y)[0].sum(1)

    dl.manual_seed(0)
    model = Mixed().double()
    x, target = dl.randn(2, 3, 4, dtype=dl.float64), dl.randn(2, 3, dtype=dl.float64)
    grads = {}
    for method in ("forward", "reverse"):
        model.zero_grad()
        nn.utils.compute_gradients(model, F.mse_loss, x, target, method=method)
        grads[method] = [p.grad.numpy().copy() for p in model.parameters()]
    for fwd, rev in zip(grads["forward"], grads["reverse"]):
        np.testing.assert_allclose(fwd, rev, rtol=1e-10, atol=1e-12)
