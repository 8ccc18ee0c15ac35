"""nn.utils.fusion (a batch norm folded into the convolution or linear layer before it) and
Module.to_empty, against PyTorch's numbers (pinned below from PyTorch 2.13; compared
live when torch is installed)."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import difflab as dl
from difflab import nn
from difflab.nn.utils.fusion import (
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)

CASES = '''
import numpy as np
import LIB as torch
from LIB import nn
from LIB.nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval

def fill(module):
    with torch.no_grad():
        for k, (name, t) in enumerate(sorted(module.state_dict().items())):
            if t.dtype.is_floating_point:
                vals = np.cos(np.arange(t.numel()) * 0.7 + k) * 0.5
                if "running_var" in name:
                    vals = 0.5 + np.abs(vals)
                t.copy_(torch.tensor(vals.reshape(tuple(t.shape)), dtype=t.dtype))
    return module

def case(layer, bn, x, **kw):
    fill(layer); fill(bn); layer.eval(); bn.eval()
    fuse = fuse_linear_bn_eval if isinstance(layer, nn.Linear) else fuse_conv_bn_eval
    fused = fuse(layer, bn, **kw)
    y = fused(x)
    same = bool(torch.allclose(y, bn(layer(x)), atol=1e-5))
    return [round(float(fused.weight.detach().sum()), 6),
            [round(float(v), 6) for v in fused.bias.tolist()], round(float(y.sum()), 5), same]

x2 = torch.tensor(np.sin(np.arange(100)).reshape(2, 2, 5, 5), dtype=torch.float32)
x1 = torch.tensor(np.sin(np.arange(28)).reshape(2, 2, 7), dtype=torch.float32)
xl = torch.tensor(np.sin(np.arange(20)).reshape(5, 4), dtype=torch.float32)
print("conv2d", case(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), x2))
print("convT", case(nn.ConvTranspose2d(2, 3, 2), nn.BatchNorm2d(3), x2, transpose=True))
print("conv1d", case(nn.Conv1d(2, 3, 3, bias=False), nn.BatchNorm1d(3, affine=False), x1))
print("linear", case(nn.Linear(4, 3), nn.BatchNorm1d(3), xl))
print("linear1", case(nn.Linear(4, 3), nn.BatchNorm1d(1), xl.reshape(5, 1, 4)))
'''
# what PyTorch 2.13 prints (the fused weight's sum, the fused bias, the output's sum, and
# whether the fused layer's output equals bn(layer(x)))
PYTORCH = """\
conv2d [0.000712, [0.268006, 0.377044, 0.30808], 16.50521, True]
convT [0.035836, [0.268006, 0.377044, 0.30808], 68.62399, True]
conv1d [0.002579, [-0.321044, 0.066025, 0.371794], 1.36045, True]
linear [0.330056, [0.268006, 0.377044, 0.30808], 4.71309, True]
linear1 [0.05712, [0.268006, 0.30653, 0.403983], 5.07045, True]
"""
ROOT = Path(__file__).resolve().parents[2]


def _run(library: str, python: str = sys.executable) -> str:
    done = subprocess.run([python, "-W", "ignore", "-c", CASES.replace("LIB", library)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_fused_layers_give_pytorchs_numbers():
    assert _run("difflab") == PYTORCH


def test_pytorch_still_prints_the_pinned_numbers():
    python = os.environ.get("DIFFLAB_TORCH_PYTHON")  # (PyTorch in another interpreter)
    if not python:
        pytest.importorskip("torch")
        python = sys.executable
    assert _run("torch", python) == PYTORCH


def _eval(*modules):
    for m in modules:
        m.eval()
    return modules


def test_the_originals_are_left_as_they_were_and_flags_kept():
    conv, bn = _eval(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3))
    weight = conv.weight.detach().clone()
    conv.weight.requires_grad_(False)
    fused = fuse_conv_bn_eval(conv, bn)
    assert fused is not conv and dl.equal(conv.weight, weight)
    assert isinstance(fused.weight, nn.Parameter) and not fused.weight.requires_grad
    assert fused.bias.requires_grad


def test_float64_layers_stay_float64():
    linear, bn = _eval(nn.Linear(3, 2).double(), nn.BatchNorm1d(2).double())
    fused = fuse_linear_bn_eval(linear, bn)
    assert fused.weight.dtype == fused.bias.dtype == dl.float64
    x = dl.randn(4, 3, dtype=dl.float64)
    np.testing.assert_allclose(fused(x).detach().numpy(), bn(linear(x)).detach().numpy(),
                               rtol=1e-12, atol=1e-14)


def test_a_layer_in_training_mode_is_refused():
    conv, bn = nn.Conv2d(1, 2, 1), nn.BatchNorm2d(2)
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        fuse_conv_bn_eval(conv, bn)
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        fuse_linear_bn_eval(nn.Linear(2, 2).eval(), nn.BatchNorm1d(2))


def test_a_batch_norm_without_running_statistics_is_refused():
    conv, bn = _eval(nn.Conv2d(1, 2, 1), nn.BatchNorm2d(2, track_running_stats=False))
    with pytest.raises(AssertionError, match="no running statistics"):
        fuse_conv_bn_eval(conv, bn)


def test_a_linear_and_batch_norm_of_other_sizes_are_refused():
    linear, bn = _eval(nn.Linear(4, 3), nn.BatchNorm1d(2))
    with pytest.raises(AssertionError, match="out_features == bn.num_features"):
        fuse_linear_bn_eval(linear, bn)


def test_the_weight_functions_with_missing_bias_and_affine():
    w, b = fuse_conv_bn_weights(dl.ones(2, 1, 1, 1), None, dl.tensor([1.0, 0.0]),
                                dl.tensor([3.0, 0.0]), 1.0, None, None)
    assert w.flatten().tolist() == [0.5, 1.0] and b.tolist() == [-0.5, 0.0]
    w, b = fuse_linear_bn_weights(dl.ones(2, 2), None, dl.zeros(2), dl.ones(2), 0.0,
                                  dl.tensor([1.0, -0.0]), dl.zeros(2))
    assert w.tolist() == [[1.0, 1.0], [-0.0, -0.0]] and b.tolist() == [0.0, 0.0]
    assert np.signbit(w.detach().numpy()[1]).all()  # (-0.0 kept, as PyTorch's)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_zero_variance_without_eps_gives_pytorchs_inf_and_nan():
    w, b = fuse_linear_bn_weights(dl.ones(2, 2), None, dl.zeros(2), dl.zeros(2), 0.0,
                                  dl.tensor([1.0, -0.0]), dl.zeros(2))
    got = w.detach().numpy()
    assert np.isposinf(got[0]).all() and np.isnan(got[1]).all()  # PyTorch: inf, nan
    assert np.isnan(b.detach().numpy()).all()


# ------------------------------------------------------------------------- to_empty


def test_to_empty_keeps_the_objects_shapes_and_flags_and_loads_a_checkpoint():
    source = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    net = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    weight, buffer = net[0].weight, net[1].running_mean
    net[0].weight.grad = dl.ones(4, 3)
    assert net.to_empty(device="cpu") is net
    assert net[0].weight is weight and net[1].running_mean is buffer
    assert net[0].weight.shape == (4, 3) and net[0].weight.requires_grad
    assert net[1].num_batches_tracked.dtype == dl.int64
    assert net[0].weight.grad.shape == (4, 3)
    net.load_state_dict(source.state_dict())
    assert all(dl.equal(a, b) for a, b in zip(net.state_dict().values(),
                                              source.state_dict().values()))


def test_to_empty_without_recursing_leaves_the_children():
    class Holder(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(dl.ones(2))
            self.child = nn.Linear(2, 2)

    m = Holder()
    with dl.no_grad():
        m.child.weight.fill_(3.0)
    m.to_empty(device=None, recurse=False)
    assert m.scale.shape == (2,) and m.child.weight.tolist() == [[3.0, 3.0], [3.0, 3.0]]


def test_to_empty_takes_its_device_by_keyword_only():
    with pytest.raises(TypeError):
        nn.Linear(2, 2).to_empty("cpu")
