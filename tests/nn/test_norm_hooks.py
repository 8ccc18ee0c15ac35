"""The hook-based nn.utils.weight_norm / remove_weight_norm and spectral_norm /
remove_spectral_norm (PyTorch's older forms): parameters, buffers and checkpoint keys
as PyTorch names them, the hook recomputing the weight, removal, errors."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import difflab as dl
import difflab.nn as nn
from difflab.autograd import gradcheck
from difflab.nn.utils.weight_norm import WeightNorm


def weight_norm(*args, **kwargs):
    with pytest.warns(FutureWarning, match="parametrizations.weight_norm"):
        return nn.utils.weight_norm(*args, **kwargs)


def test_weight_norm_splits_the_weight_and_the_hook_recomputes_it():
    dl.manual_seed(0)
    m = nn.Linear(3, 2).double()
    before = m.weight.detach().clone()
    weight_norm(m)
    assert list(m.state_dict()) == ["bias", "weight_g", "weight_v"]
    assert m.weight_g.shape == (2, 1) and bool(dl.allclose(m.weight, before))
    with dl.no_grad():
        m.weight_g.mul_(2.0)
    m(dl.ones(1, 3, dtype=dl.float64)).sum().backward()  # the hook runs before forward
    assert bool(dl.allclose(m.weight, 2 * before))
    assert m.weight_g.grad is not None and m.weight_v.grad is not None
    fn = WeightNorm("weight", 0)
    g = m.weight_g.detach().clone().requires_grad_()
    v = m.weight_v.detach().clone().requires_grad_()

    def compute(g, v):
        return fn.compute_weight(SimpleNamespace(weight_g=g, weight_v=v))
    assert gradcheck(compute, (g, v))


def test_weight_norm_dim_none_is_one_magnitude_and_removal_restores_a_parameter():
    m = weight_norm(nn.Linear(3, 2), dim=None)
    assert m.weight_g.shape == ()
    value = m.weight.detach().clone()
    nn.utils.remove_weight_norm(m)
    assert list(m.state_dict()) == ["bias", "weight"] and not m._forward_pre_hooks
    assert isinstance(m.weight, nn.Parameter) and bool(dl.allclose(m.weight, value))


def test_weight_norm_errors():
    m = weight_norm(nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
        weight_norm(m)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        nn.utils.remove_weight_norm(nn.Linear(2, 2))
    with pytest.raises(ValueError, match="weight_norm of 'bias' not found"):
        nn.utils.remove_weight_norm(m, "bias")
    with pytest.raises(ValueError, match="uninitialized"):
        weight_norm(nn.LazyLinear(2))


def test_spectral_norm_hook_normalizes_in_training_and_freezes_in_eval():
    dl.manual_seed(1)
    m = nn.utils.spectral_norm(nn.Linear(4, 3).double(), n_power_iterations=30)
    assert list(m.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    assert bool(dl.equal(m.weight, m.weight_orig)), "the raw weight until the first call"
    x = dl.ones(2, 4, dtype=dl.float64)
    m(x)
    sigma = np.linalg.svd(m.weight.detach().numpy(), compute_uv=False)[0]
    assert sigma == pytest.approx(1.0, abs=1e-8)
    m.eval()
    u = m.weight_u.clone()
    m(x).sum().backward()
    assert bool(dl.equal(m.weight_u, u)) and m.weight_orig.grad is not None
    assert m.weight_u.grad is None and not m.weight_u.requires_grad


def test_spectral_norm_state_dict_round_trip_and_removal():
    dl.manual_seed(2)
    a = nn.utils.spectral_norm(nn.Conv2d(2, 3, 2))
    b = nn.utils.spectral_norm(nn.Conv2d(2, 3, 2))
    b.load_state_dict(a.state_dict())
    x = dl.randn(1, 2, 4, 4)
    a.eval(), b.eval()
    assert bool(dl.equal(a(x), b(x)))
    weight = a.weight.detach().clone()
    nn.utils.remove_spectral_norm(a)
    assert list(a.state_dict()) == ["bias", "weight"] and bool(dl.allclose(a.weight, weight))
    t = nn.utils.spectral_norm(nn.ConvTranspose2d(2, 5, 3))
    assert t.weight_u.shape == (5,), "ConvTranspose: dim 1 by default"


def test_spectral_norm_errors():
    m = nn.utils.spectral_norm(nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        nn.utils.spectral_norm(m)
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
        nn.utils.remove_spectral_norm(nn.Linear(2, 2))
    with pytest.raises(ValueError, match="n_power_iterations to be positive"):
        nn.utils.spectral_norm(nn.Linear(2, 2), n_power_iterations=-1)
    with pytest.raises(ValueError, match="cannot be applied as parameter `bias` is None"):
        nn.utils.spectral_norm(nn.Linear(2, 2, bias=False), "bias")
