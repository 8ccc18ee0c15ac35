"""A GRU step's VJP as one numba loop: the rule's own bits, and compiled GRU training = eager."""

import doctest
import itertools

import numpy as np
import pytest

import difflab as dl
import difflab.nn.functional as F
from difflab.jit import fusion, recurrent_kernels
from difflab.jit.recurrent_kernels import gru_cell_forward, gru_vjp_forward
from difflab.ops.nn_recurrent import GRUCell
from difflab.ops.registry import Context

needs_numba = pytest.mark.skipif(not fusion.USE_NUMBA, reason="the loop needs numba")
rng = np.random.default_rng(28)


def _step(rows, hidden, dtype, scale=3.0):
    """A GRU step's saved arrays (g_i, g_h, h, rz, n) and an output adjoint."""
    gi, gh = (rng.normal(scale=scale, size=(rows, 3 * hidden)).astype(dtype) for _ in "ab")
    h, g = (rng.normal(size=(rows, hidden)).astype(dtype) for _ in "ab")
    ctx = Context((True, True, True))
    GRUCell.forward(ctx, np, gi, gh, h)
    return g, ctx.saved


@needs_numba
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("index,needs", [
    (k, needs) for needs in itertools.product([True, False], repeat=3) for k in range(3)
    if needs[k]])
def test_the_loop_gives_the_rules_bits(dtype, index, needs):
    g, saved = _step(5, 7, dtype)
    forward = gru_vjp_forward(index, needs, np.dtype(dtype), None)
    got_ctx, want_ctx = Context(()), Context(needs)
    got = forward(got_ctx, np, g, *saved)
    want = GRUCell.vjp(want_ctx, np, g, *saved)
    others = [want[k] for k in range(3) if needs[k] and k != index]
    assert got.dtype == want[index].dtype and got.tobytes() == want[index].tobytes()
    assert len(got_ctx.saved) == len(others)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(got_ctx.saved, others))


@needs_numba
def test_views_and_other_arrays_give_the_same_bits():
    """Strided inputs (columns of a bigger array) are read in place; a list is the rule's."""
    g, (gi, gh, h, rz, n) = _step(4, 3, np.float64)
    wide = np.zeros((4, 12))
    wide[:, 1:10] = gh
    strided = wide[:, 1:10]
    forward = gru_vjp_forward(0, (True, True, True), np.dtype(np.float64),
                              lambda ctx, xp, *a: "fallback")
    got = forward(Context(()), np, g, gi, strided, h, rz, n)
    want = GRUCell.vjp(Context((True, True, True)), np, g, gi, gh, h, rz, n)[0]
    assert got.tobytes() == want.tobytes()
    assert forward(Context(()), np, g.tolist(), gi, gh, h, rz, n) == "fallback"
    assert forward(Context(()), np, g[:, :2], gi, gh, h, rz, n) == "fallback"  # (shapes)
    assert forward(Context(()), np, g.astype(np.float32), gi, gh, h, rz, n) == "fallback"


@needs_numba
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("scale", [0.3, 3.0, 40.0])  # (40: saturated gates, tanh = ±1)
def test_the_forward_loops_give_the_primitives_bits(dtype, scale):
    rows, hidden = 6, 5
    gi, gh = (rng.normal(scale=scale, size=(rows, 3 * hidden)).astype(dtype) for _ in "ab")
    h = rng.normal(size=(rows, hidden)).astype(dtype)
    forward = gru_cell_forward(np.dtype(dtype), None)
    got_ctx, want_ctx = Context(()), Context(())
    got, want = forward(got_ctx, np, gi, gh, h), GRUCell.forward(want_ctx, np, gi, gh, h)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    assert len(got_ctx.saved) == len(want_ctx.saved) == 5
    assert all(a.dtype == b.dtype and a.tobytes() == b.tobytes()
               for a, b in zip(got_ctx.saved, want_ctx.saved))


@needs_numba
def test_the_forward_takes_the_primitives_path_for_other_arrays():
    gi, gh, h = rng.normal(size=(2, 9)), rng.normal(size=(2, 9)), rng.normal(size=(2, 3))
    forward = gru_cell_forward(np.dtype(np.float64), lambda ctx, xp, *a: "fallback")
    assert forward(Context(()), np, gi[:, :6], gh, h[:, :2]) == "fallback"  # (shapes)
    assert forward(Context(()), np, gi.astype(np.float32), gh, h) == "fallback"
    assert forward(Context(()), np, gi, gh, h.tolist()) == "fallback"
    assert gru_cell_forward(np.dtype(np.int32), None) is None


def test_no_loop_for_other_dtypes_or_unneeded_adjoints():
    assert gru_vjp_forward(0, (True, True, True), np.dtype(np.int64), None) is None
    assert gru_vjp_forward(1, (True, False, True), np.dtype(np.float64), None) is None


def _train(compiled: bool, steps: int = 3):
    dl.manual_seed(5)
    model = dl.nn.GRU(3, 4, batch_first=True).double()
    head = dl.nn.Linear(4, 2).double()

    class Recurrent(dl.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn, self.head = model, head

        def forward(self, x):
            out, _ = self.rnn(x)
            return self.head(out[:, -1])
    module = Recurrent()
    run = dl.compile(module) if compiled else module
    opt = dl.optim.Adam(module.parameters(), lr=0.05)
    data = np.random.default_rng(1).normal(size=(2, 5, 3))
    x, y = dl.tensor(data), dl.tensor(np.array([0, 1]))
    for _ in range(steps):
        opt.zero_grad()
        F.cross_entropy(run(x), y).backward()
        opt.step()
    return [p.detach().numpy().copy() for p in module.parameters()]


def test_compiled_gru_training_equals_eager_to_1e_12():
    """(To 1e-12, not bit for bit: the stack pass adds the weight's gradient terms in
    another order; the loops themselves give the rule's bits, tested above.)"""
    for got, want in zip(_train(True), _train(False)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


@needs_numba
def test_docstring_examples_run():
    assert doctest.testmod(recurrent_kernels).failed == 0
