"""The lazy layers (LazyLinear, LazyConv*, LazyConvTranspose*, LazyBatchNorm*,
LazyInstanceNorm*) and their placeholders: sized at the first call like PyTorch's, the
placeholders materialized in place (an optimizer built before the call trains them), the
state_dict before and after, and the errors."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import difflab as dl
from difflab.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy

nn = dl.nn


def test_lazy_linear_becomes_the_linear_it_would_have_been():
    x = dl.randn(4, 5)
    dl.manual_seed(3)
    eager = nn.Linear(5, 2)
    dl.manual_seed(3)
    lazy = nn.LazyLinear(2)  # (draws nothing until its first call)
    assert repr(lazy) == "LazyLinear(in_features=0, out_features=2, bias=True)"
    y = lazy(x)
    assert type(lazy) is nn.Linear and lazy.in_features == 5
    assert repr(lazy) == "Linear(in_features=5, out_features=2, bias=True)"
    assert dl.equal(lazy.weight, eager.weight) and dl.equal(lazy.bias, eager.bias)
    assert dl.allclose(y, eager(x))
    assert not lazy._forward_pre_hooks  # the sizing hook is gone after the first call
    assert nn.LazyLinear(3, bias=False)(x).shape == (4, 3)


def test_an_optimizer_built_before_the_first_call_trains_the_materialized_parameters():
    model = nn.Sequential(nn.LazyLinear(4), nn.ReLU(), nn.LazyLinear(1))
    params = list(model.parameters())
    assert len(params) == 4 and all(isinstance(p, UninitializedParameter) for p in params)
    opt = dl.optim.SGD(model.parameters(), lr=0.1)
    x, target = dl.randn(8, 3), dl.randn(8, 1)
    loss = ((model(x) - target) ** 2).mean()
    assert [type(p) for p in params] == [nn.Parameter] * 4  # the same objects, materialized
    before = params[0].detach().clone()
    loss.backward()
    opt.step()
    assert not dl.equal(params[0], before)
    assert model[0].weight is params[0] and model[0].weight.shape == (4, 3)


def test_state_dict_before_and_after_the_first_call():
    lazy = nn.LazyLinear(2)
    state = lazy.state_dict()
    assert list(state) == ["weight", "bias"] and all(is_lazy(v) for v in state.values())
    # a trained layer's checkpoint sizes the placeholders (PyTorch's names and shapes)
    trained = nn.Linear(3, 2)
    other = nn.LazyLinear(2)
    result = other.load_state_dict(trained.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert other.weight.shape == (2, 3) and dl.equal(other.weight, trained.weight)
    assert dl.allclose(other(dl.ones(1, 3)), trained(dl.ones(1, 3)))
    assert type(other) is nn.Linear and other.in_features == 3
    # a lazy checkpoint into a lazy layer leaves it lazy; a wrong shape still fails
    fresh = nn.LazyLinear(2)
    fresh.load_state_dict(nn.LazyLinear(2).state_dict())
    assert fresh.has_uninitialized_params()
    sized = nn.Linear(3, 2)
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        sized.load_state_dict(nn.Linear(4, 2).state_dict())
    # whole models: a lazy network loads a trained network's state_dict
    net = nn.Sequential(nn.LazyConv2d(4, 3), nn.ReLU(), nn.LazyBatchNorm2d())
    ref = nn.Sequential(nn.Conv2d(2, 4, 3), nn.ReLU(), nn.BatchNorm2d(4))
    net.load_state_dict(ref.state_dict())
    x = dl.randn(2, 2, 5, 5)
    assert dl.allclose(net(x), ref(x))
    assert type(net[0]) is nn.Conv2d and type(net[2]) is nn.BatchNorm2d


@pytest.mark.parametrize("make,x,become,weight", [
    (lambda: nn.LazyConv1d(4, 3), (2, 3, 8), nn.Conv1d, (4, 3, 3)),
    (lambda: nn.LazyConv2d(4, 3, groups=2), (2, 6, 5, 5), nn.Conv2d, (4, 3, 3, 3)),
    (lambda: nn.LazyConv3d(4, 2, stride=2), (1, 2, 4, 4, 4), nn.Conv3d, (4, 2, 2, 2, 2)),
    (lambda: nn.LazyConvTranspose1d(4, 3, stride=2), (2, 3, 5), nn.ConvTranspose1d, (3, 4, 3)),
    (lambda: nn.LazyConvTranspose2d(4, 3, groups=2), (1, 6, 2, 2), nn.ConvTranspose2d,
     (6, 2, 3, 3)),
    (lambda: nn.LazyConvTranspose3d(4, 2), (1, 2, 2, 2, 2), nn.ConvTranspose3d,
     (2, 4, 2, 2, 2)),
])
def test_lazy_convolutions(make, x, become, weight):
    dl.manual_seed(1)
    layer = make()
    assert type(layer).__name__.startswith("Lazy") and layer.in_channels == 0
    y = layer(dl.randn(*x))
    assert type(layer) is become and layer.weight.shape == weight
    assert layer.in_channels == x[1] and layer.bias.shape == (4,)
    assert y.shape[1] == 4
    assert sorted(layer.state_dict()) == ["bias", "weight"]


def test_lazy_conv_errors():
    with pytest.raises(ValueError, match="out_channels \\(3\\) must be divisible by groups"):
        nn.LazyConv2d(3, 3, groups=2)
    with pytest.raises(ValueError, match="channels must be divisible by groups"):
        nn.LazyConv2d(4, 3, groups=2)(dl.ones(1, 3, 5, 5))
    with pytest.raises(ValueError, match="expects a 3-D \\(unbatched\\) or 4-D input"):
        nn.LazyConv2d(4, 3)(dl.ones(5, 5))
    with pytest.raises(TypeError):
        nn.LazyLinear(2.5)
    w = nn.LazyLinear(2).weight
    with pytest.raises(RuntimeError, match="shape of an uninitialized parameter"):
        _ = w.shape
    with pytest.raises(RuntimeError, match="uninitialized"):
        nn.LazyLinear(2).weight.size()


@pytest.mark.parametrize("make,x,become", [
    (nn.LazyBatchNorm1d, (4, 3), nn.BatchNorm1d),
    (nn.LazyBatchNorm2d, (4, 3, 2, 2), nn.BatchNorm2d),
    (nn.LazyBatchNorm3d, (2, 3, 2, 2, 2), nn.BatchNorm3d),
    (nn.LazyInstanceNorm1d, (2, 3, 5), nn.InstanceNorm1d),
    (nn.LazyInstanceNorm2d, (3, 4, 4), nn.InstanceNorm2d),  # unbatched (C, H, W)
    (nn.LazyInstanceNorm3d, (1, 3, 2, 2, 2), nn.InstanceNorm3d),
])
def test_lazy_norms_become_their_layers_with_the_same_state(make, x, become):
    lazy = make()
    assert isinstance(lazy.running_mean, UninitializedBuffer)
    x = dl.randn(*x)
    y = lazy(x)
    ref = become(3, affine=True, track_running_stats=True)  # (the lazy defaults, PyTorch's)
    assert type(lazy) is become and lazy.num_features == 3
    assert dl.allclose(y, ref(x))
    for name, value in ref.state_dict().items():
        assert dl.allclose(lazy.state_dict()[name], value), name


def test_placeholders_follow_the_module_and_copy():
    layer = nn.LazyLinear(2).double()
    assert layer(dl.ones(1, 3, dtype=dl.float64)).dtype == dl.float64
    lazy = nn.LazyConv1d(2, 2)
    twin = copy.deepcopy(lazy)
    twin(dl.ones(1, 3, 4))
    assert lazy.has_uninitialized_params() and not is_lazy(twin.weight)
    p = UninitializedParameter()
    p.materialize((2, 3))
    assert type(p) is nn.Parameter and p.requires_grad and p.shape == (2, 3)
    b = UninitializedBuffer(dtype=dl.float64)
    b.materialize(4)
    assert type(b) is dl.Tensor and b.dtype == dl.float64 and not b.requires_grad
    assert repr(UninitializedParameter()) == "<UninitializedParameter>"


def test_lazy_layers_on_cuda(cuda):
    layer = nn.LazyLinear(3).to(cuda)
    y = layer(dl.ones(2, 4, device=cuda))
    assert y.device == cuda and layer.weight.device == cuda and layer.weight.shape == (3, 4)
    bn = nn.LazyBatchNorm1d().to(cuda)
    out = bn(dl.tensor(np.arange(8.0).reshape(4, 2), device=cuda))
    assert bn.running_mean.device == cuda
    assert np.allclose(out.detach().cpu().numpy()[:, 0], [-1.341641, -0.447214, 0.447214,
                                                          1.341641])
    ref = nn.LazyLinear(2)
    target = nn.LazyLinear(2).to(cuda)
    ref(dl.ones(1, 3))
    target.load_state_dict(ref.state_dict())
    assert target.weight.device == cuda and np.allclose(target.weight.detach().cpu().numpy(),
                                                        ref.weight.detach().numpy())
