"""A fused line that reads a bias or a column, looped by rows (fastpath shortcut 19): which
lines take the form, and that a program running them gives the plain loop's bits."""

import doctest

import numpy as np
import pytest

import difflab as dl
from difflab import jit
from difflab.jit import fusion, row_loops
from difflab.jit.kernels import Layout
from difflab.jit.program import PreparedKernel, Program

pytestmark = pytest.mark.skipif(not fusion.USE_NUMBA, reason="numba not installed")

rng = np.random.default_rng(19)
BODY = [("mul", ("in0", "in1")), ("sub", ("t0", "in2"))]


def test_the_module_s_examples_run():
    assert doctest.testmod(row_loops).failed == 0


@pytest.mark.parametrize("broadcast, n, length", [
    ((None, (1, 32), (32, 96)), 96 * 32, 32),  # a bias and a column (a LayerNorm's)
    ((None, (12, 384), None), 384 * 12, 12),  # a column alone: rows of its step
    ((None, (25, 16), (1, 1)), 2 * 16 * 25, 25),  # a channel's bias (C, 1, 1), one number
    ((None, (24, 4), (48, 2)), 96, 24),  # two columns, one moving every other row
    ((None, (1, 32), (1, 16)), 96 * 32, None),  # two biases of different lengths
    ((None, (1, 4), None), 96 * 4, None),  # rows shorter than SHORTEST
    ((None, (1, 32), None), 100, None),  # not whole rows
    ((None, (12, 8), (1, 24)), 96 * 24, None),  # a column moving inside the bias's row
    ((None, None, None), 96, None),  # nothing broadcast: the plain loop is as fast
    ((None, (1, 1), None), 96, None),  # one number: nothing to gain
])
def test_which_lines_are_looped_by_rows(broadcast, n, length):
    assert row_loops.row_length(Layout(BODY, [1], broadcast), n) == length


def test_a_line_with_a_sum_or_a_scatter_keeps_the_plain_loop():
    summed = [("mul", ("in0", "in1")), ("sum", ("t0",))]
    assert row_loops.row_length(Layout(summed, [1], (None, (1, 32))), 96 * 32) is None
    scattered = [("mul", ("in0", "in1")), ("scatter_add", ("t0", slice(0, 64), (64,)))]
    assert row_loops.row_length(Layout(scattered, [1], (None, (1, 32))), 64) is None


def test_a_row_loop_is_written_for_float64_and_float32_only():
    layout = Layout(BODY, [1], (None, (1, 8), None))
    assert "float32" in row_loops.row_source(layout, np.float32, 8)
    assert "f32(" not in row_loops.row_source(layout, np.float64, 8)
    with pytest.raises(ValueError, match="float64 or float32"):
        row_loops.row_source(layout, np.float16, 8)
    assert row_loops.row_kernel(layout, np.int64, 16) is None


def _values(shape, dtype):
    """Random values over many magnitudes with the edges a stranger brings: infinities,
    NaN, zeros of both signs (not in a divisor's place only: any place)."""
    x = rng.standard_normal(shape) * 10.0 ** rng.integers(-6, 6, shape)
    flat = x.reshape(-1)
    specials = [np.inf, -np.inf, np.nan, 0.0, -0.0]
    picks = rng.choice(flat.size, min(flat.size, 2 * len(specials)), replace=False)
    flat[picks] = (specials * 2)[:len(picks)]
    return x.astype(dtype)


# (each: the function, the shapes of its arguments; the first argument sets the loop)
PROGRAMS = {
    "bias and column": (lambda x, b, c: (x * b + 1.0) * (x - c), [(8, 12, 32), (32,),
                                                                    (8, 12, 1)]),
    "layer norm's backward": (lambda x, g, m, s: (x * g - m) / (s + 1e-5).sqrt(),
                              [(96, 32), (32,), (96, 1), (96, 1)]),
    "channel bias": (lambda x, b: dl.relu(x + b) * 0.5 - b, [(2, 16, 5, 5), (16, 1, 1)]),
    "softmax's backward": (lambda g, s, y: (g - s) * y, [(8, 4, 12, 12), (8, 4, 12, 1),
                                                         (8, 4, 12, 12)]),
    "a column moving every other row": (lambda x, b, c: x * b - c, [(4, 6, 2, 8), (8,),
                                                                    (4, 6, 1, 1)]),
    "short rows": (lambda x, b: x * b - x, [(96, 4), (4,)]),  # (the plain loop: too short)
}


@pytest.mark.fastpath("19. fused lines by rows")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_a_program_s_lines_by_rows_give_the_plain_loop_s_bits(name, dtype):
    fn, shapes = PROGRAMS[name]
    arrays = [_values(shape, dtype) for shape in shapes]
    with np.errstate(all="ignore"):
        traced = jit.trace(fn, tuple(dl.tensor(a) for a in arrays))
    graph = jit.optimize(traced.graph, ["fuse"])
    prepared, plain = Program(graph), Program(graph, prepared=False)
    for trial in range(3):
        with np.errstate(all="ignore"):
            got, want = prepared.run(arrays), plain.run(arrays)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
            assert g.tobytes() == w.tobytes(), (name, trial)
        arrays = [_values(shape, dtype) for shape in shapes]
    kernels = [s.forward for s in prepared.steps if isinstance(s.forward, PreparedKernel)]
    assert kernels and all(k.plan for k in kernels)  # (each took the prepared path)
    by_rows = [k for k in kernels if k.plan.kernel in row_loops._COMPILED.values()]
    assert (len(by_rows) == 0) == (name == "short rows")


_TRAINING = """
import sys
import numpy as np
import difflab as dl
import difflab.nn as nn
import difflab.nn.functional as F


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = nn.MultiheadAttention(32, 4, batch_first=True)
        self.norm, self.head = nn.LayerNorm(32), nn.Linear(32, 4)

    def forward(self, x):
        a, _ = self.attention(x, x, x, need_weights=False)
        return self.head(self.norm(x + a).mean(1))


models = {
    "mlp": (lambda: nn.Sequential(nn.Linear(64, 48), nn.ReLU(), nn.Linear(48, 10)),
            (32, 64), 10, np.float32, "SGD"),
    "attention": (Attention, (8, 12, 32), 4, np.float64, "Adam"),
    "cnn": (lambda: nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Flatten(),
                                  nn.Linear(4 * 8 * 8, 3)), (16, 1, 8, 8), 3, np.float32, "SGD"),
}
rng, out = np.random.default_rng(0), {}
for name, (make, shape, classes, dtype, optimizer) in models.items():
    dl.manual_seed(0)
    model = make().double() if dtype == np.float64 else make()
    x = dl.tensor(rng.standard_normal(shape).astype(dtype))
    y = dl.tensor(rng.integers(0, classes, shape[0]))
    loss_of = dl.compile(lambda inputs, targets: F.cross_entropy(model(inputs), targets))
    opt = getattr(dl.optim, optimizer)(model.parameters(), lr=0.01)
    for step in range(3):
        opt.zero_grad()
        loss = loss_of(x, y)
        loss.backward()
        opt.step()
        out[f"{name}.loss{step}"] = loss.detach().numpy()
    for key, value in model.state_dict().items():
        out[f"{name}.{key}"] = value.numpy()
np.savez(sys.argv[1], **out)
"""


def test_compiled_training_steps_give_the_same_parameters_with_shortcuts_on_and_off(
        shortcuts_on_and_off):
    """An MLP's and a CNN's ReLU and its mask (shortcut 20), an attention block's LayerNorm
    and softmax backward lines and a loss's backward line (shortcut 19), trained three
    steps each."""
    shortcuts_on_and_off(_TRAINING, at_least=20)
