"""The GRU and attention training steps of ``benchmarks/bench_compile.py`` under
``dl.compile``, both ways a user writes them: the model compiled (the loss, the backward
walk and the optimizer eager) and the model with its loss in one compiled function.
Adam's steps equal eager training to 1e-12, and the speed shortcuts change no bit."""

import numpy as np
import pytest

import difflab as dl
import difflab.nn as nn
import difflab.nn.functional as F
from difflab import fastpath


class Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn, self.head = nn.GRU(16, 32, batch_first=True), nn.Linear(32, 4)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out[:, -1])


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = nn.MultiheadAttention(32, 4, batch_first=True)
        self.norm, self.head = nn.LayerNorm(32), nn.Linear(32, 4)

    def forward(self, x):
        a, _ = self.attention(x, x, x, need_weights=False)
        return self.head(self.norm(x + a).mean(1))


MODELS = {"gru": (Recurrent, (8, 10, 16)), "attention": (Attention, (8, 12, 32))}


def train(kind, how, steps=4):
    """The parameters after ``steps`` Adam steps, and the losses; ``how``: "eager",
    "model" (``dl.compile(model)``) or "loss" (the model and the loss compiled together)."""
    make, shape = MODELS[kind]
    dl.manual_seed(0)
    model = make().double()
    if how == "loss":
        loss_of = dl.compile(lambda x, y: F.cross_entropy(model(x), y))
    else:
        net = dl.compile(model) if how == "model" else model

        def loss_of(x, y):
            return F.cross_entropy(net(x), y)
    opt = dl.optim.Adam(model.parameters(), lr=0.01)
    rng = np.random.default_rng(3)
    losses = []
    for _ in range(steps):  # (a new batch each step: each call replays the same graphs)
        x, y = dl.tensor(rng.standard_normal(shape)), dl.tensor(rng.integers(0, 4, shape[0]))
        opt.zero_grad()
        loss = loss_of(x, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(model.named_parameters()), losses


@pytest.mark.parametrize("how", ["model", "loss"])
@pytest.mark.parametrize("kind", sorted(MODELS))
def test_compiled_training_equals_eager_training_to_1e_12(kind, how):
    """(To 1e-12, not bit for bit: the compiled graphs add some sums in another order.)

    One entry is held to less: the attention's key bias (``in_proj_bias[32:64]``). Its
    gradient is zero in exact arithmetic (a constant added to every score of a row does
    not change the row's softmax), so both ways compute rounding noise there, about
    1e-17, and Adam divides the noise by its own size (plus eps = 1e-8): the bias moves
    by up to lr · 1e-17 / 1e-8 a step, differently in each."""
    got, got_losses = train(kind, how)
    want, want_losses = train(kind, "eager")
    np.testing.assert_allclose(got_losses, want_losses, rtol=1e-12)
    for name, p in want.items():
        a, b = got[name].detach().numpy(), p.detach().numpy()
        if name == "attention.in_proj_bias":
            np.testing.assert_allclose(a[32:64], b[32:64], rtol=0, atol=1e-10)
            a, b = np.delete(a, np.s_[32:64]), np.delete(b, np.s_[32:64])
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14, err_msg=name)


@pytest.mark.parametrize("how", ["model", "loss"])
@pytest.mark.parametrize("kind", sorted(MODELS))
def test_compiled_training_takes_one_trace_and_replays(kind, how):
    """Four steps of new batches: one trace, the rest replays of its graphs."""
    make, shape = MODELS[kind]
    model = make().double()
    compiled = dl.compile(lambda x, y: F.cross_entropy(model(x), y)) if how == "loss" \
        else dl.compile(model)
    rng = np.random.default_rng(5)
    for _ in range(4):
        x = dl.tensor(rng.standard_normal(shape))
        out = compiled(x, dl.tensor(rng.integers(0, 4, shape[0]))) if how == "loss" \
            else compiled(x)
        out.sum().backward()
    traces = compiled.traces if how == "loss" else compiled._compiled.traces
    assert traces == 1


@pytest.mark.fastpath("14. prepared plain steps")
@pytest.mark.parametrize("how", ["model", "loss"])
@pytest.mark.parametrize("kind", sorted(MODELS))
def test_compiled_training_equals_the_plain_path_bit_for_bit(kind, how):
    """The prepared steps (numba's GRU loops, the loops over rows, ``cat``, ...) and every
    other shortcut on, against the plain path (each primitive's own forward)."""
    results = []
    for enabled in (True, False):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(fastpath, "ENABLED", enabled)
            results.append(train(kind, how, steps=3))
    (on, on_losses), (off, off_losses) = results
    assert on_losses == off_losses
    for name, p in off.items():
        assert on[name].detach().numpy().tobytes() == p.detach().numpy().tobytes(), name
