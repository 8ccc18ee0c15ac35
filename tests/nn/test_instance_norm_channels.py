"""InstanceNorm1d/2d/3d and the channel count, as PyTorch: with ``affine`` a mismatch is a
ValueError; without, ``num_features`` is unused and a mismatch warns; with tracked running
statistics the mismatch then fails in ``F.instance_norm`` (which checks its tensors' sizes
before moving any running average)."""

import warnings

import numpy as np
import pytest

import difflab as dl
import difflab.nn as nn
import difflab.nn.functional as F

SHAPES = {nn.InstanceNorm1d: (2, 3, 6), nn.InstanceNorm2d: (2, 3, 4, 5),
          nn.InstanceNorm3d: (2, 3, 2, 3, 4)}


@pytest.mark.parametrize("cls", list(SHAPES))
def test_affine_needs_the_channel_count(cls):
    x = dl.randn(*SHAPES[cls])
    with pytest.raises(ValueError, match=r"size at dim=1 to match num_features \(5\), but got: 3"):
        cls(5, affine=True)(x)
    with pytest.raises(ValueError, match=r"size at dim=0 to match num_features \(5\), but got: 3"):
        cls(5, affine=True)(x[0])  # unbatched: the channels are dim 0
    assert cls(3, affine=True)(x).shape == x.shape


@pytest.mark.parametrize("cls", list(SHAPES))
def test_without_affine_a_mismatch_warns_and_normalises_anyway(cls):
    x = dl.randn(*SHAPES[cls], dtype=dl.float64)
    with pytest.warns(UserWarning, match=r"^input's size at dim=1 does not match num_features"):
        out = cls(5)(x)
    np.testing.assert_allclose(out.numpy(), F.instance_norm(x).numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cls(3)(x)  # the right count: no warning


@pytest.mark.parametrize("cls", list(SHAPES))
def test_tracked_running_statistics_with_a_mismatch_fail_and_stay_unchanged(cls):
    x = dl.randn(*SHAPES[cls])
    layer = cls(5, track_running_stats=True)
    with pytest.warns(UserWarning), pytest.raises(RuntimeError,
                                                  match="running_mean should contain 3 elements"):
        layer(x)
    assert layer.running_mean.tolist() == [0.0] * 5 and layer.running_var.tolist() == [1.0] * 5
    layer.eval()
    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="should contain 3"):
        layer(x)


def test_instance_norm_checks_its_weight_and_bias_sizes():
    x = dl.randn(2, 3, 4)
    with pytest.raises(RuntimeError, match="weight should contain 3 elements"):
        F.instance_norm(x, weight=dl.ones(4))
    with pytest.raises(RuntimeError, match="bias should contain 3 elements"):
        F.instance_norm(x, bias=dl.ones(2))


def test_momentum_none_keeps_the_running_statistics_as_pytorch():
    x = dl.randn(4, 3, 5, dtype=dl.float64)
    layer = nn.InstanceNorm1d(3, track_running_stats=True, momentum=None).double()
    layer(x)
    assert layer.running_mean.tolist() == [0.0] * 3  # momentum None: 0 for instance norm
    tracked = nn.InstanceNorm1d(3, track_running_stats=True).double()
    tracked(x)
    np.testing.assert_allclose(tracked.running_mean.numpy(),
                               0.1 * x.numpy().mean(-1).mean(0))


def test_instance_norm_3d_normalises_over_d_h_w():
    x = dl.randn(2, 3, 2, 3, 4, dtype=dl.float64)
    a = x.numpy()
    expected = (a - a.mean((2, 3, 4), keepdims=True)) / np.sqrt(
        a.var((2, 3, 4), keepdims=True) + 1e-5)
    np.testing.assert_allclose(nn.InstanceNorm3d(3)(x).numpy(), expected, atol=1e-12)
    np.testing.assert_allclose(nn.InstanceNorm3d(3)(x[0]).numpy(), expected[0], atol=1e-12)
    with pytest.raises(ValueError, match="4-D \\(unbatched\\) or 5-D"):
        nn.InstanceNorm3d(3)(x[0, 0])
