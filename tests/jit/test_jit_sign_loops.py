"""A ReLU and its backward's mask as one numba loop each (fastpath shortcut 20): NumPy's bits
for every edge value in every position, and a compiled MLP's steps take them."""

import doctest

import numpy as np
import pytest

import difflab as dl
from difflab import jit
from difflab.jit import fusion, sign_loops
from difflab.jit.program import Program

pytestmark = pytest.mark.skipif(not fusion.USE_NUMBA, reason="numba not installed")

rng = np.random.default_rng(20)
PLAIN = {"relu": lambda x: np.maximum(0, x), "sign": np.sign}


def test_the_module_s_examples_run():
    assert doctest.testmod(sign_loops).failed == 0


def _edges(size, dtype):
    """Random values with NaNs of both signs and payloads (a signalling one too), zeros of
    both signs, infinities and the smallest subnormals, at random places (the SIMD body
    and the tail alike)."""
    x = (rng.standard_normal(size) * 10.0 ** rng.integers(-40, 38, size)).astype(dtype)
    bits = np.uint32 if dtype == np.float32 else np.uint64
    quiet = np.array([np.nan], dtype).view(bits)[0]
    signalling = np.array([np.inf], dtype).view(bits)[0] | 1  # (the quiet bit clear)
    nans = np.array([quiet, quiet | 1, quiet | (1 << (31 if dtype == np.float32 else 63)),
                     signalling], bits).view(dtype)
    tiny = np.finfo(dtype).smallest_subnormal
    specials = np.concatenate([nans, np.array([0.0, -0.0, np.inf, -np.inf, tiny, -tiny],
                                              dtype)])
    picks = rng.choice(size, min(size, 4 * len(specials)), replace=False)
    x[picks] = np.resize(specials, len(picks))
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["relu", "sign"])
@pytest.mark.parametrize("size", [1024, 1025, 1031, 4099, 128 * 512])
def test_the_loops_give_numpy_s_bits(name, dtype, size):
    forward = sign_loops.elementwise_loop(name, dtype, size)
    for _ in range(3):
        x = _edges(size, dtype).reshape(-1, 1) if size % 2 else _edges(size, dtype).reshape(2, -1)
        got, want = forward(x), PLAIN[name](x)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.tobytes() == want.tobytes()


def test_what_the_loops_do_not_take():
    assert sign_loops.elementwise_loop("relu", np.float64, sign_loops.LARGE - 1) is None
    assert sign_loops.elementwise_loop("relu", np.int64, 4096) is None
    assert sign_loops.elementwise_loop("relu", np.float16, 4096) is None
    assert sign_loops.elementwise_loop("tanh", np.float64, 4096) is None


def _mlp(x, w1, b1, w2):
    return (dl.relu(dl.nn.functional.linear(x, w1, b1)) @ w2).sum()


@pytest.mark.fastpath("20. relu and sign loops")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_compiled_relu_and_its_gradient_give_the_plain_program_s_bits(dtype):
    shapes = [(64, 48), (40, 48), (40,), (40, 3)]
    arrays = [_edges(int(np.prod(s)), dtype).reshape(s) for s in shapes]
    arrays[0][0, :8] = [-0.0, 0.0, np.nan, -np.nan, np.inf, -np.inf, 1.0, -1.0]
    with np.errstate(all="ignore"):
        tensors = [dl.tensor(a, requires_grad=k > 0) for k, a in enumerate(arrays)]
        graph = jit.trace(lambda *t: dl.autograd.grad(_mlp(*t), t[1:]), tuple(tensors)).graph
    graph = jit.optimize(graph, ["fuse"])
    ops = {node.op_name for node in graph.nodes}
    assert {"relu", "sign"} <= ops
    prepared, plain = Program(graph), Program(graph, prepared=False)
    looped = [s for s in prepared.steps if s.node.op_name in ("relu", "sign")]
    assert looped and all(s.forward.__qualname__.startswith("_one_loop") for s in looped)
    with np.errstate(all="ignore"):
        got, want = prepared.run(arrays), plain.run(arrays)
    assert len(got) == 3
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.tobytes() == w.tobytes()
