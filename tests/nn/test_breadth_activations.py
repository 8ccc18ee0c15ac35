"""The rest of PyTorch's activations (issue 27): values against NumPy formulas, gradients
against central differences away from the kinks, finite gradients at extreme inputs."""

from __future__ import annotations

import numpy as np
import pytest

import difflab as dl
from difflab.autograd import gradcheck

F = dl.nn.functional
nn = dl.nn
A, S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def softplus(x, beta=1.0, threshold=20.0):
    return np.where(beta * x > threshold, x, np.log1p(np.exp(beta * x)) / beta)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


CASES = [  # (function, kwargs, NumPy reference, layer)
    (F.elu, {"alpha": 0.7}, lambda x: np.where(x > 0, x, 0.7 * np.expm1(x)), nn.ELU(0.7)),
    (F.selu, {}, lambda x: S * np.where(x > 0, x, A * np.expm1(x)), nn.SELU()),
    (F.celu, {"alpha": 1.5}, lambda x: np.maximum(x, 0) + np.minimum(0, 1.5 * np.expm1(x / 1.5)),
     nn.CELU(1.5)),
    (F.softplus, {"beta": 2.0}, lambda x: softplus(x, 2.0), nn.Softplus(beta=2.0)),
    (F.logsigmoid, {}, lambda x: np.log(sigmoid(x)), nn.LogSigmoid()),
    (F.silu, {}, lambda x: x * sigmoid(x), nn.SiLU()),
    (F.mish, {}, lambda x: x * np.tanh(np.log1p(np.exp(x))), nn.Mish()),
    (F.hardsigmoid, {}, lambda x: np.clip(x / 6 + 0.5, 0, 1), nn.Hardsigmoid()),
    (F.hardswish, {}, lambda x: x * np.clip(x / 6 + 0.5, 0, 1), nn.Hardswish()),
    (F.hardshrink, {"lambd": 0.3}, lambda x: np.where(np.abs(x) > 0.3, x, 0), nn.Hardshrink(0.3)),
    (F.softshrink, {"lambd": 0.3},
     lambda x: np.where(x > 0.3, x - 0.3, np.where(x < -0.3, x + 0.3, 0)), nn.Softshrink(0.3)),
    (F.tanhshrink, {}, lambda x: x - np.tanh(x), nn.Tanhshrink()),
    (F.softsign, {}, lambda x: x / (1 + np.abs(x)), nn.Softsign()),
    (F.threshold, {"threshold": 0.1, "value": -2.0}, lambda x: np.where(x > 0.1, x, -2.0),
     nn.Threshold(0.1, -2.0)),
]


@pytest.mark.parametrize("function,kwargs,reference,layer", CASES,
                         ids=[c[0].__name__ for c in CASES])
def test_activation_values_gradients_and_layer(function, kwargs, reference, layer):
    rng = np.random.default_rng(0)
    values = rng.uniform(-3, 3, size=(4, 5))
    values = values[np.abs(np.abs(values) - 0.3) > 0.05]  # away from the kinks at ±0.3
    values = values[np.abs(values - 0.1) > 0.05][:12]
    values = values[np.abs(values) > 0.05]
    x = dl.tensor(values, dtype=dl.float64, requires_grad=True)
    assert np.allclose(function(x, **kwargs).array, reference(values), rtol=1e-12, atol=1e-12)
    assert np.array_equal(layer(x).array, function(x, **kwargs).array)
    assert gradcheck(lambda t: function(t, **kwargs), (x,))
    assert "(" in repr(layer)


@pytest.mark.parametrize("function", [F.elu, F.selu, F.celu, F.softplus, F.logsigmoid, F.mish,
                                      F.silu])
def test_gradients_stay_finite_at_extreme_inputs(function):
    x = dl.tensor([-1000.0, -50.0, 50.0, 1000.0], dtype=dl.float64, requires_grad=True)
    with np.errstate(over="raise", invalid="raise"):
        function(x).sum().backward()
    assert np.isfinite(x.grad.array).all() and np.isfinite(function(x).array).all()


def test_softmin_glu_prelu_and_gumbel_softmax():
    rng = np.random.default_rng(1)
    values = rng.standard_normal((3, 4))
    x = dl.tensor(values, dtype=dl.float64, requires_grad=True)
    e = np.exp(-values)
    assert np.allclose(F.softmin(x, dim=1).array, e / e.sum(1, keepdims=True))
    assert np.allclose(nn.Softmin(0)(x).array, e / e.sum(0, keepdims=True))
    assert np.allclose(F.glu(x, 1).array, values[:, :2] * sigmoid(values[:, 2:]))
    assert gradcheck(lambda t: F.glu(t, 0 if t.shape[0] % 2 == 0 else 1), (x,))
    with pytest.raises(RuntimeError, match="Halving dimension must be even"):
        F.glu(x, 0)
    layer = nn.PReLU(4, init=0.1).double()
    expected = np.where(values >= 0, values, 0.1 * values)
    assert np.allclose(layer(x).array, expected)
    w = dl.tensor([0.1, 0.2, 0.3, 0.4], dtype=dl.float64, requires_grad=True)
    assert gradcheck(F.prelu, (x, w))
    with pytest.raises(ValueError, match="weight has 3 slopes but the input has 4 channels"):
        F.prelu(x, dl.ones(3))
    dl.manual_seed(3)
    soft = F.gumbel_softmax(x, tau=0.5)
    assert np.allclose(soft.array.sum(1), 1.0)
    dl.manual_seed(3)
    hard = F.gumbel_softmax(x, tau=0.5, hard=True)
    assert np.array_equal(hard.array.argmax(1), soft.array.argmax(1))
    assert set(np.unique(hard.array)) == {0.0, 1.0}
    hard.sum().backward()  # straight-through: the soft sample's gradient
    assert x.grad is not None and np.allclose(x.grad.array, 0.0, atol=1e-12)


@pytest.mark.parametrize("fn", [
    lambda x: F.threshold(x, 0.1, -2.0), lambda x: F.softplus(x, beta=2.0, threshold=1.0),
    lambda x: F.prelu(x, dl.tensor([0.25])), F.elu, F.celu, F.selu, F.hardshrink, F.softshrink,
    lambda x: F.huber_loss(x, dl.zeros(2, 3), reduction="none", delta=0.5),
    lambda x: F.smooth_l1_loss(x, dl.zeros(2, 3), reduction="none", beta=0.5),
])
def test_a_traced_activation_compares_the_values_of_each_run(fn):
    """The branches are chosen by tensor comparisons, which a traced graph records (a
    comparison of the example's raw array was a constant: replays took its branches)."""
    example = dl.tensor([[1.0, -1.0, 0.3], [-0.2, 2.0, -3.0]])
    traced = dl.jit.trace(fn, (example,))
    other = dl.tensor([[0.2, -0.6, 1.5], [-2.0, 0.05, 0.7]])  # (other signs, sizes)
    np.testing.assert_allclose(traced(other).array, fn(other).array, rtol=1e-12)


def test_a_traced_channel_or_alpha_dropout_draws_a_new_mask_each_run():
    x = dl.ones(64, 8, 1)
    for fn in (lambda v: F.dropout1d(v, 0.5), lambda v: F.alpha_dropout(v, 0.5, training=True)):
        traced = dl.jit.trace(fn, (x,))
        dl.manual_seed(3)
        first = traced(x).array
        dl.manual_seed(3)
        assert np.array_equal(fn(x).array, first)  # the eager draws, from the same seed
        assert not np.array_equal(traced(x).array, first)  # and a new mask next run
