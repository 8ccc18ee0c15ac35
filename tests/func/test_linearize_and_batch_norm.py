"""torch.func's linearize (J·t from one recorded evaluation, checked against jvp and
finite differences) and replace_all_batch_norm_modules_ (batch norm under vmap)."""

from __future__ import annotations

import numpy as np
import pytest

import difflab as dl
from difflab.func import jvp, linearize, replace_all_batch_norm_modules_, vmap

RNG = np.random.default_rng(8)


def _f64(shape):
    return dl.tensor(RNG.normal(size=shape), dtype=dl.float64)


def test_linearize_equals_jvp_and_does_not_call_f_again():
    A, x, y = _f64((4, 4)), _f64((3, 4)), _f64((4,))
    calls = []

    def f(a, b):
        calls.append(1)
        return (dl.tanh(a @ A) * b).sum(1), {"norm": (a * a).sum() + b.exp().sum()}

    out, jvp_fn = linearize(f, x, y)
    assert len(calls) == 1 and not out[0].requires_grad
    for _ in range(3):
        t, s = _f64((3, 4)), _f64((4,))
        before = len(calls)
        got = jvp_fn(t, s)
        assert len(calls) == before  # (f is not called again)
        _, want = jvp(f, (x, y), (t, s))
        np.testing.assert_allclose(got[0].numpy(), want[0].numpy(), rtol=1e-12)
        np.testing.assert_allclose(got[1]["norm"].numpy(), want[1]["norm"].numpy(), rtol=1e-12)
        eps = 1e-6  # and against central differences
        plus, minus = f(x + eps * t, y + eps * s)[0], f(x - eps * t, y - eps * s)[0]
        np.testing.assert_allclose(got[0].numpy(), ((plus - minus) / (2 * eps)).numpy(),
                                   rtol=1e-6)


def test_linearize_of_an_output_that_does_not_depend_on_the_input_and_bad_tangents():
    x = _f64((2,))
    out, jvp_fn = linearize(lambda a: (a * 2, dl.ones(3)), x)
    got = jvp_fn(dl.ones(2, dtype=dl.float64))
    assert got[0].tolist() == [2.0, 2.0] and got[1].tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="shaped like its primal"):
        jvp_fn(dl.ones(3))
    with pytest.raises(ValueError, match="one per primal"):
        jvp_fn()
    with pytest.raises(TypeError, match="floating"):
        linearize(lambda a: a, dl.tensor([1, 2]))


def test_batch_norm_under_vmap_after_replacing_its_running_statistics():
    model = dl.nn.Sequential(dl.nn.Linear(3, 4), dl.nn.BatchNorm1d(4), dl.nn.ReLU())
    xs = dl.randn(2, 5, 3)
    with pytest.raises(RuntimeError, match="vmap"):  # (it would write running buffers)
        vmap(model)(xs)
    assert replace_all_batch_norm_modules_(model) is model
    bn = model[1]
    assert bn.running_mean is None and bn.running_var is None and not bn.track_running_stats
    assert bn.num_batches_tracked is None and "running_mean" not in dict(model.named_buffers())
    got = vmap(model)(xs)
    want = dl.stack([model(xs[i]) for i in range(2)])  # each example: its own statistics
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6)
    model.eval()  # (no running statistics: eval uses the batch's, as PyTorch)
    np.testing.assert_allclose(model(xs[0]).detach().numpy(), want[0].detach().numpy(),
                               rtol=1e-6)
