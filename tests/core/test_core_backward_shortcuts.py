"""The speed shortcuts (``difflab/fastpath.py``) must never change a result.

1. The adjoint of a slice ``x[a:b]`` is a ``SliceAdjoint`` that the adjoint
   store adds into ``x̄[a:b]`` in place, rather than an array of zeros
   written out first; sums of adjoints go into buffers the pass owns.
2. For large arrays, an adjoint that is one number broadcast (what a sum hands
   back) is multiplied as that number (``fastpath.scale``).
3. ``x ** 2`` has the derivative ``2·x`` in one pass.

Each test compares with a gradient computed another way: by hand, by
scattering into zeros with NumPy, by finite differences, or with the
shortcuts switched off (``DIFFLAB_FASTPATH=0``), bit for bit.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import difflab as dl
from difflab import fastpath
from difflab.autograd import engine, gradcheck, gradgradcheck
from difflab.fastpath import LARGE as _LARGE
from difflab.ops import elementwise, elementwise_primitives


def leaf(values, device="cpu", dtype=dl.float64):
    return dl.tensor(values, dtype=dtype, device=device, requires_grad=True)


def rosenbrock(x):
    return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum()


def rosenbrock_gradient_by_hand(x):
    a, b = x[:-1], x[1:]
    g = np.zeros_like(x)
    g[1:] += 200.0 * (b - a * a)
    g[:-1] += -400.0 * (b - a * a) * a - 2.0 * (1.0 - a)
    return g


# ------------------------------------------------------------------ slices


@given(st.data())
def test_slices_of_a_tensor_add_up_like_a_scatter_into_zeros(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=5))
    x_values = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) / 7.0
    x = leaf(x_values)
    # Through an intermediate (a Node's adjoint) or straight from the leaf.
    through_node = data.draw(st.booleans())
    source = x * 2.0 if through_node else x
    dense_too = data.draw(st.booleans())  # also a use of the whole tensor, before or after

    indices = data.draw(st.lists(hnp.basic_indices(shape, allow_newaxis=True), min_size=1,
                                 max_size=4))
    expected = np.zeros(shape)
    total = (source * 0.5).sum() if dense_too else 0.0
    for k, index in enumerate(indices):
        weights = np.full(np.empty(shape)[index].shape, float(k + 1))
        total = total + (source[index] * dl.tensor(weights, dtype=dl.float64)).sum()
        expected[index] += weights
    if dense_too:
        expected += 0.5
    if through_node:
        expected *= 2.0
    total.backward()
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("order", ["slice, slice, slice", "dense, slice", "slice, dense",
                                   "shared, slice", "slice, shared"])
def test_slice_adjoints_meet_other_adjoints_in_any_order(order, device):
    x = leaf(np.linspace(-1.0, 1.0, 7), device)
    uses = {
        "slice": lambda t: (t[1:] * 3.0).sum(),
        "dense": lambda t: (t * t).sum(),
        # an add hands the same adjoint to both inputs: not a buffer to write into
        "shared": lambda t: (t + t).sum(),
    }
    total = sum(uses[name](x) for name in order.split(", "))
    total.backward()
    values = np.linspace(-1.0, 1.0, 7)
    expected = np.zeros(7)
    for name in order.split(", "):
        expected += {"slice": np.r_[0.0, np.full(6, 3.0)], "dense": 2.0 * values,
                     "shared": np.full(7, 2.0)}[name]
    np.testing.assert_allclose(x.grad.cpu().numpy(), expected, atol=1e-12)


def test_slice_adjoints_of_different_dtypes_sum_in_the_wider_one():
    x = leaf(np.arange(5.0), dtype=dl.float32)
    # x * float64 array: a float64 adjoint; x[1:]: a float32 adjoint of a slice.
    total = (x * np.full(5, 0.25)).sum() + x[1:].sum() * 2.0
    total.backward()
    assert x.grad.dtype == dl.float32
    np.testing.assert_allclose(x.grad.numpy(), [0.25, 2.25, 2.25, 2.25, 2.25])


def test_slices_into_existing_grad_and_through_autograd_grad():
    x = leaf(np.arange(6.0))
    for _ in range(2):  # the second pass adds into the .grad of the first
        (x[:-1] * x[1:]).sum().backward()
    expected = np.r_[np.arange(1.0, 6.0), 0.0] + np.r_[0.0, np.arange(0.0, 5.0)]
    np.testing.assert_allclose(x.grad.numpy(), 2 * expected)
    (captured,) = dl.autograd.grad((x[:-1] * x[1:]).sum(), [x])
    np.testing.assert_allclose(captured.numpy(), expected)
    captured.zero_()  # the returned gradient is its own array
    np.testing.assert_allclose(x.grad.numpy(), 2 * expected)


def test_retained_grad_and_anomaly_mode_see_whole_arrays():
    x = leaf(np.arange(4.0))
    y = x * 2.0
    y.retain_grad()
    with dl.autograd.detect_anomaly():
        (y[1:] + y[:-1]).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), [1.0, 2.0, 2.0, 1.0])
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0, 4.0, 2.0])


def test_second_derivatives_through_slices():
    x = leaf(np.linspace(0.1, 0.9, 5))
    assert gradcheck(lambda t: (t[1:] * t[:-1]).sin().sum(), (x,))
    assert gradgradcheck(lambda t: (t[1:] * t[:-1]).sin().sum(), (x,))
    assert gradgradcheck(rosenbrock, (x,))


# ------------------------------------------------------- large-array shortcuts


@pytest.mark.parametrize("dtype", [dl.float64, dl.float32])
def test_large_rosenbrock_gradient_matches_the_hand_written_one(dtype, device):
    n = 4 * _LARGE + 3  # large enough for every shortcut
    values = np.random.default_rng(0).uniform(-2, 2, n)
    x = leaf(values, device, dtype)
    rosenbrock(x).backward()
    expected = rosenbrock_gradient_by_hand(values)
    rtol = 1e-12 if dtype == dl.float64 else 1e-5
    np.testing.assert_allclose(x.grad.cpu().numpy(), expected, rtol=rtol, atol=rtol * 1e3)


@pytest.mark.parametrize("scale", [1.0, 3.0])
def test_a_broadcast_adjoint_times_a_saved_array_is_a_new_array(scale):
    """exp's derivative is its saved output y: the gradient must not be y itself."""
    x = leaf(np.linspace(-1, 1, 2 * _LARGE))
    y = x.exp()
    (scale * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), scale * np.exp(x.detach().numpy()))
    x.grad.zero_()
    np.testing.assert_allclose(y.detach().numpy(), np.exp(x.detach().numpy()))


def test_large_and_small_arrays_give_the_same_gradients():
    """Each element's gradient does not depend on whether the shortcuts ran."""
    values = np.random.default_rng(1).uniform(0.5, 1.5, 2 * _LARGE)

    def f(t):
        return (3.0 * t.sin() ** 2 + (2.0 - t).sqrt().exp() * 0.5 + t.tanh() / 4.0).sum()

    large = leaf(values)
    f(large).backward()
    piecewise = np.concatenate([_small_gradient(f, part) for part in np.split(values, 64)])
    np.testing.assert_allclose(large.grad.numpy(), piecewise, rtol=1e-15, atol=0)


def _small_gradient(f, values):
    x = leaf(values)
    assert x.numel() < _LARGE
    f(x).backward()
    return x.grad.numpy()


# ----------------------------------------------------- with and without shortcuts

_GRADIENTS = r"""
import sys
import numpy as np
import difflab as dl
from difflab import fastpath

assert fastpath.ENABLED == (sys.argv[2] == "on"), "the switch was not read"
rng = np.random.default_rng(7)
results = {}


def grad_of(name, f, *values, dtype=dl.float64):
    xs = [dl.tensor(v, dtype=dtype, requires_grad=True) for v in values]
    f(*xs).backward()
    for i, x in enumerate(xs):
        results[f"{name}{i}"] = x.grad.numpy()


n = 3 * fastpath.LARGE + 5
x0 = rng.uniform(-2, 2, n)
rosenbrock = lambda x: (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum()
grad_of("rosenbrock64_", rosenbrock, x0)
grad_of("rosenbrock32_", rosenbrock, x0, dtype=dl.float32)
grad_of("small", rosenbrock, x0[:50])
grad_of("slices", lambda x: (x[2:, 1:] * x[:-2, :-1]).sum() + (x[1] ** 3).sum() + x.exp().sum(),
        rng.normal(size=(90, 70)))
grad_of("shared", lambda x, w: ((x + w) * (x - w)).sum() + (x * w).mean(),
        rng.normal(size=(80, 80)), rng.normal(size=(80, 80)))
grad_of("broadcast", lambda x, b: ((x * b).tanh() ** 2).sum() + (b ** 2).sum(),
        rng.normal(size=(100, 60)), rng.normal(size=(1, 60)))
grad_of("pow", lambda x: (x ** 2 + x ** 3 + 2.0 ** x).sum(), rng.uniform(0.1, 2, 5000))

w = dl.tensor(rng.normal(size=(64, 32)), requires_grad=True)
(g,) = dl.autograd.grad(((w[:, 1:] * w[:, :-1]).sin() ** 2).sum(), [w], create_graph=True)
(g * g).sum().backward()
results["second_order"] = w.grad.numpy()

model = dl.nn.Sequential(dl.nn.Linear(20, 64), dl.nn.ReLU(), dl.nn.Linear(64, 3))
for p, v in zip(model.parameters(), [rng.normal(size=tuple(p.shape)) * 0.3
                                     for p in model.parameters()]):
    p.array[...] = v
data = dl.tensor(rng.normal(size=(256, 20)).astype(np.float32))
dl.nn.functional.cross_entropy(model(data), dl.tensor(rng.integers(0, 3, 256))).backward()
for i, p in enumerate(model.parameters()):
    results[f"mlp{i}"] = p.grad.numpy()

dl.manual_seed(3)  # (the convolutions' weight gradients: shortcut 16; one with groups)
cnn = dl.nn.Sequential(dl.nn.Conv2d(2, 8, 3, padding=1), dl.nn.ReLU(), dl.nn.MaxPool2d(2),
                       dl.nn.Conv2d(8, 6, 3, padding=1, groups=2), dl.nn.Flatten(),
                       dl.nn.Linear(6 * 5 * 5, 4))
images = dl.tensor(rng.normal(size=(8, 2, 10, 10)).astype(np.float32))
dl.nn.functional.cross_entropy(cnn(images), dl.tensor(rng.integers(0, 4, 8))).backward()
for i, p in enumerate(cnn.parameters()):
    results[f"cnn{i}"] = p.grad.numpy()
np.savez(sys.argv[1], **results)
"""


def test_shortcuts_on_and_off_give_the_same_gradients_bit_for_bit(shortcuts_on_and_off):
    shortcuts_on_and_off(_GRADIENTS, at_least=10)


@pytest.mark.fastpath("2.-5. (adjoints in place, slices unwritten, scaling, the square)")
def test_the_shortcuts_are_in_place_and_fire(monkeypatch):
    """Guards the tests above: a shortcut that silently stopped running proves nothing."""
    assert elementwise_primitives._scale is fastpath.scale
    assert engine._AdjointStore is fastpath.InPlaceAdjoints
    assert elementwise.Pow.d_da.__wrapped__ is not None
    made, written, single = [], [], []
    monkeypatch.setattr(fastpath.SliceAdjoint, "__init__", _spy(fastpath.SliceAdjoint.__init__,
                                                                 made))
    monkeypatch.setattr(fastpath.SliceAdjoint, "dense", _spy(fastpath.SliceAdjoint.dense,
                                                             written))
    monkeypatch.setattr(fastpath, "single_value", _spy(fastpath.single_value, single))
    x = leaf(np.linspace(-1, 1, 2 * _LARGE))
    rosenbrock(x).backward()
    assert len(made) == 3  # x[1:], and x[:-1] twice
    assert len(written) == 1  # only the first; the others were added into its slice
    assert single  # the sum's broadcast adjoint was used as a number


def _spy(function, calls):
    def spy(*args, **kwargs):
        calls.append(1)
        return function(*args, **kwargs)

    return spy
