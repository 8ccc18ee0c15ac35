"""The indexing, sorting, product, attention and recurrent functions against PyTorch itself.

Run only where PyTorch is installed (it is never a dependency): the same
inputs, the same parameters and the same output adjoints through both
libraries; values and gradients must agree to rounding.
"""

import numpy as np
import pytest

import difflab as dl
import difflab.nn as nn
import difflab.nn.functional as F
from difflab.optim import lr_scheduler

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(2024)


def agree(ours, theirs, *arrays, ints=(), rtol=1e-10, atol=1e-12):
    """Call ``ours`` on difflab tensors and ``theirs`` on torch tensors made from ``arrays``
    (float64, requiring grad; those at positions ``ints`` are integer constants); compare the
    outputs, then the gradients for one random output adjoint."""
    mine = [dl.tensor(a) if i in ints else dl.tensor(a, dtype=dl.float64, requires_grad=True)
            for i, a in enumerate(arrays)]
    ref = [torch.tensor(a) if i in ints else torch.tensor(a, dtype=torch.float64,
                                                              requires_grad=True)
           for i, a in enumerate(arrays)]
    out, expected = ours(*mine), theirs(*ref)
    if isinstance(expected, tuple):  # (values, indices): compare both, differentiate values
        for o, e in zip(out, expected):
            np.testing.assert_allclose(o.detach().numpy(), e.detach().numpy(), rtol=rtol,
                                       atol=atol)
        out, expected = out[0], expected[0]
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=rtol,
                               atol=atol)
    seed = RNG.normal(size=tuple(expected.shape))
    (out * dl.tensor(seed, dtype=dl.float64)).sum().backward()
    (expected * torch.tensor(seed)).sum().backward()
    for i, (m, r) in enumerate(zip(mine, ref)):
        if i not in ints:
            np.testing.assert_allclose(m.grad.numpy(), r.grad.numpy(), rtol=rtol, atol=atol,
                                       err_msg=f"gradient of input {i}")


def test_indexing_and_sorting_match_pytorch():
    x = RNG.normal(size=(4, 5))
    index = RNG.integers(0, 4, size=(3, 5))
    agree(lambda a, i: a.gather(0, i), lambda a, i: a.gather(0, i), x, index, ints=(1,))
    agree(lambda a, i, s: a.scatter(1, i, s), lambda a, i, s: a.scatter(1, i, s),
          x, np.array([[4, 0], [1, 2], [0, 3], [2, 1]]), RNG.normal(size=(4, 2)), ints=(1,))
    agree(lambda a, i, s: a.scatter_add(0, i, s), lambda a, i, s: a.scatter_add(0, i, s),
          x, index, RNG.normal(size=(3, 5)), ints=(1,))
    agree(lambda a, i: a.index_select(1, i), lambda a, i: a.index_select(1, i),
          x, np.array([4, 0, 4, 2]), ints=(1,))
    ties = np.round(RNG.normal(size=(3, 6)), 0)  # many equal values: the order of ties
    agree(lambda a: dl.sort(a, dim=1, stable=True), lambda a: torch.sort(a, dim=1, stable=True),
          ties)
    agree(lambda a: a.sort(dim=0, descending=True, stable=True),
          lambda a: a.sort(dim=0, descending=True, stable=True), ties)
    agree(lambda a: dl.topk(a, 3, dim=1), lambda a: torch.topk(a, 3, dim=1), x)
    agree(lambda a: a.topk(2, dim=0, largest=False), lambda a: a.topk(2, dim=0, largest=False),
          x)
    agree(lambda a: dl.roll(a, (2, -1), (0, 1)), lambda a: torch.roll(a, (2, -1), (0, 1)), x)
    agree(lambda a: dl.roll(a, 3), lambda a: torch.roll(a, 3), x)
    mask = RNG.random((4, 5)) > 0.5
    agree(lambda a, v: a.masked_fill(dl.tensor(mask), v),
          lambda a, v: a.masked_fill(torch.tensor(mask), v), x, np.array(0.5))


@pytest.mark.parametrize("equation, shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("...ij,...jk", [(2, 3, 4), (4, 2)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]),
    ("i,j->ij", [(3,), (4,)]), ("...ij->j", [(2, 3, 4)]), ("bn,anm,bm->ba", [(2, 5), (3, 5, 4),
                                                                             (2, 4)]),
])
def test_einsum_matches_pytorch(equation, shapes):
    arrays = [RNG.normal(size=s) for s in shapes]
    agree(lambda *a: dl.einsum(equation, *a), lambda *a: torch.einsum(equation, *a), *arrays)


def test_products_match_pytorch():
    agree(lambda a: a.cumprod(1), lambda a: a.cumprod(1), RNG.normal(size=(3, 5)))
    with_zeros = np.array([[2.0, 0.0, 3.0, -1.0], [0.0, 1.5, 0.0, 2.0]])
    agree(lambda a: dl.cumprod(a, 1), lambda a: torch.cumprod(a, 1), with_zeros)
    a, b, c = RNG.normal(size=(3, 2, 4)), RNG.normal(size=(3, 4, 5)), RNG.normal(size=(2, 5))
    agree(dl.bmm, torch.bmm, a, b)
    agree(lambda x, y, z: dl.baddbmm(x, y, z, beta=0.5, alpha=-2.0),
          lambda x, y, z: torch.baddbmm(x, y, z, beta=0.5, alpha=-2.0), c, a, b)
    agree(dl.outer, torch.outer, RNG.normal(size=3), RNG.normal(size=4))


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_matches_pytorch(mode):
    x = RNG.normal(size=(2, 3, 5, 6))
    amounts = (2, 1, 3, -1) if mode == "constant" else (2, 1, 3, 0)
    agree(lambda a: F.pad(a, amounts, mode=mode), lambda a: torch.nn.functional.pad(
        a, amounts, mode=mode), x)


def test_attention_functions_match_pytorch():
    q, k, v = (RNG.normal(size=(2, 3, 4, 8)), RNG.normal(size=(2, 3, 6, 8)),
               RNG.normal(size=(2, 3, 6, 5)))
    sdpa = torch.nn.functional.scaled_dot_product_attention
    agree(F.scaled_dot_product_attention, sdpa, q, k, v)
    agree(lambda *a: F.scaled_dot_product_attention(*a, is_causal=True, scale=0.2),
          lambda *a: sdpa(*a, is_causal=True, scale=0.2), q, k, v)
    keep = RNG.random((4, 6)) > 0.4
    keep[:, 0] = True
    agree(lambda *a: F.scaled_dot_product_attention(*a, attn_mask=dl.tensor(keep)),
          lambda *a: sdpa(*a, attn_mask=torch.tensor(keep)), q, k, v)
    bias = RNG.normal(size=(4, 6))
    agree(lambda *a: F.scaled_dot_product_attention(*a, attn_mask=dl.tensor(bias)),
          lambda *a: sdpa(*a, attn_mask=torch.tensor(bias)), q, k, v)


def _copy_parameters(ours, theirs):
    mine = dict(ours.named_parameters())
    for name, p in theirs.named_parameters():
        mine[name].data = dl.tensor(p.detach().numpy(), dtype=dl.float64)
    assert set(mine) == {name for name, _ in theirs.named_parameters()}


@pytest.mark.parametrize("batch_first", [True, False])
def test_multihead_attention_matches_pytorch(batch_first):
    theirs = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first, dtype=torch.float64)
    with torch.no_grad():
        theirs.in_proj_bias.normal_()
        theirs.out_proj.bias.normal_()
    ours = nn.MultiheadAttention(8, 2, batch_first=batch_first)
    _copy_parameters(ours, theirs)
    shape_q, shape_kv = ((3, 5, 8), (3, 7, 8)) if batch_first else ((5, 3, 8), (7, 3, 8))
    causal = np.triu(np.ones((5, 7), dtype=bool), 1)
    padding = np.zeros((3, 7), dtype=bool)
    padding[0, 5:] = True
    q, kv = RNG.normal(size=shape_q), RNG.normal(size=shape_kv)
    agree(lambda a, b: ours(a, b, b, attn_mask=dl.tensor(causal),
                            key_padding_mask=dl.tensor(padding)),
          lambda a, b: theirs(a, b, b, attn_mask=torch.tensor(causal),
                              key_padding_mask=torch.tensor(padding)), q, kv)
    agree(lambda a: ours(a, a, a, need_weights=False)[0],
          lambda a: theirs(a, a, a, need_weights=False)[0], q)
    agree(lambda a, b: ours(a, b, b, average_attn_weights=False),
          lambda a, b: theirs(a, b, b, average_attn_weights=False), q, kv)
    for m in (ours, theirs):
        m.zero_grad()
    unbatched = RNG.normal(size=(5, 8))
    agree(lambda a: ours(a, a, a), lambda a: theirs(a, a, a), unbatched)


def test_gru_and_layer_norm_match_pytorch():
    theirs = torch.nn.GRU(3, 4, num_layers=2, batch_first=True, dtype=torch.float64)
    ours = nn.GRU(3, 4, num_layers=2, batch_first=True)
    _copy_parameters(ours, theirs)
    agree(lambda x, h: ours(x, h)[0], lambda x, h: theirs(x, h)[0],
          RNG.normal(size=(2, 6, 3)), RNG.normal(size=(2, 2, 4)))
    cell_theirs = torch.nn.GRUCell(3, 4, dtype=torch.float64)
    cell_ours = nn.GRUCell(3, 4)
    _copy_parameters(cell_ours, cell_theirs)
    agree(cell_ours, cell_theirs, RNG.normal(size=(5, 3)), RNG.normal(size=(5, 4)))
    norm_theirs = torch.nn.LayerNorm((3, 4), dtype=torch.float64)
    with torch.no_grad():
        norm_theirs.weight.normal_()
        norm_theirs.bias.normal_()
    norm_ours = nn.LayerNorm((3, 4))
    _copy_parameters(norm_ours, norm_theirs)
    agree(norm_ours, norm_theirs, RNG.normal(size=(2, 3, 4)))


def _both_states(module):
    """The layer's output plus its last cell states c_n (both through the fused cells)."""
    def run(x, h, c):
        out, (_, c_n) = module(x, (h, c))
        return out + c_n.sum(0)
    return run


def test_lstm_and_rnn_match_pytorch():
    x, h0, c0 = (RNG.normal(size=s) for s in ((6, 2, 3), (2, 2, 4), (2, 2, 4)))
    theirs = torch.nn.LSTM(3, 4, num_layers=2, dtype=torch.float64)
    ours = nn.LSTM(3, 4, num_layers=2)
    _copy_parameters(ours, theirs)
    agree(_both_states(ours), _both_states(theirs), x, h0, c0)
    rnn_theirs = torch.nn.RNN(3, 4, num_layers=2, nonlinearity="relu", dtype=torch.float64)
    rnn_ours = nn.RNN(3, 4, num_layers=2, nonlinearity="relu")
    _copy_parameters(rnn_ours, rnn_theirs)
    agree(lambda a, h: rnn_ours(a, h)[0], lambda a, h: rnn_theirs(a, h)[0], x, h0)
    cell_theirs = torch.nn.LSTMCell(3, 4, dtype=torch.float64)
    cell_ours = nn.LSTMCell(3, 4)
    _copy_parameters(cell_ours, cell_theirs)
    agree(lambda a, h, c: cell_ours(a, (h, c))[0] * cell_ours(a, (h, c))[1],
          lambda a, h, c: cell_theirs(a, (h, c))[0] * cell_theirs(a, (h, c))[1],
          RNG.normal(size=(5, 3)), RNG.normal(size=(5, 4)), RNG.normal(size=(5, 4)))


def test_schedulers_match_pytorch():
    def rates(make_optimizer, make_scheduler, steps, metrics=None, key="lr"):
        optimizer = make_optimizer()
        scheduler = make_scheduler(optimizer)
        seen = []
        for t in range(steps):
            seen.append(optimizer.param_groups[0][key])
            optimizer.step()
            scheduler.step(*(() if metrics is None else (metrics[t],)))
        return seen

    def pair(name, **kwargs):
        return (lambda o: getattr(lr_scheduler, name)(o, **kwargs),
                lambda o: getattr(torch.optim.lr_scheduler, name)(o, **kwargs))

    def sgd(lib):
        tensor = dl.zeros(2, requires_grad=True) if lib is dl else torch.zeros(
            2, requires_grad=True)
        return lambda: lib.optim.SGD([tensor], lr=0.1, momentum=0.9)

    cases = [
        (pair("OneCycleLR", max_lr=1.0, total_steps=20), 20, None),
        (pair("OneCycleLR", max_lr=0.3, epochs=3, steps_per_epoch=5, pct_start=0.4,
              anneal_strategy="linear", three_phase=True), 15, None),
    ]
    metrics = [1.0, 0.9, 0.95, 0.91, 0.92, 0.93, 0.8, 0.81, 0.82, 0.83, 0.84, 0.85]
    cases.append((pair("ReduceLROnPlateau", factor=0.5, patience=1, cooldown=1, min_lr=0.02),
                  len(metrics), metrics))
    for (ours, theirs), steps, values in cases:
        for key in ("lr", "momentum"):
            np.testing.assert_allclose(rates(sgd(dl), ours, steps, values, key),
                                       rates(sgd(torch), theirs, steps, values, key),
                                       rtol=1e-12)


def test_embedding_and_clip_grad_norm_match_pytorch():
    table = RNG.normal(size=(6, 3))
    ours = nn.Embedding.from_pretrained(dl.tensor(table), freeze=False, padding_idx=1)
    theirs = torch.nn.Embedding.from_pretrained(torch.tensor(table), freeze=False,
                                                padding_idx=1)
    index = np.array([[0, 1, 5], [1, 1, 2]])
    out, expected = ours(dl.tensor(index)), theirs(torch.tensor(index))
    np.testing.assert_array_equal(out.detach().numpy(), expected.detach().numpy())
    seed = RNG.normal(size=(2, 3, 3))
    (out * dl.tensor(seed)).sum().backward()
    (expected * torch.tensor(seed)).sum().backward()
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-12)
    assert not nn.Embedding.from_pretrained(dl.tensor(table)).weight.requires_grad
    for norm_type in (2.0, 1.0, float("inf")):
        grads = [RNG.normal(size=(3, 2)), RNG.normal(size=4)]
        mine = [dl.zeros(g.shape, dtype=dl.float64, requires_grad=True) for g in grads]
        ref = [torch.zeros(g.shape, dtype=torch.float64, requires_grad=True) for g in grads]
        for m, r, g in zip(mine, ref, grads):
            m.grad, r.grad = dl.tensor(g), torch.tensor(g)
        total = nn.utils.clip_grad_norm_(mine, 0.5, norm_type=norm_type)
        total_ref = torch.nn.utils.clip_grad_norm_(ref, 0.5, norm_type=norm_type)
        assert total.item() == pytest.approx(total_ref.item(), rel=1e-12)
        for m, r in zip(mine, ref):
            np.testing.assert_allclose(m.grad.numpy(), r.grad.numpy(), rtol=1e-12)
