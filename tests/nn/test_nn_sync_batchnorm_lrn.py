"""nn.SyncBatchNorm (batch statistics over every rank) and nn.CrossMapLRN2d (torch7's
cross-channel LRN): against plain batch normalisation and a direct NumPy formula,
gradchecked, with PyTorch's errors.  The multi-rank run is in
tests/distributed/test_launched.py (a real 2-rank job)."""

import numpy as np
import pytest

import difflab as dl
import difflab.distributed as dist
from difflab import nn
from difflab.autograd import gradcheck

F64 = dl.float64


def _x(*shape, seed=0):
    return dl.tensor(np.random.default_rng(seed).normal(size=shape), dtype=F64)


def _pair(cls_args=(3,), **kwargs):
    sync = nn.SyncBatchNorm(*cls_args, dtype=F64, **kwargs)
    plain = nn.BatchNorm2d(*cls_args, dtype=F64, **kwargs)
    with dl.no_grad():
        for module in (sync, plain):
            if module.weight is not None:
                module.weight.copy_(dl.tensor([0.5, 2.0, -1.0], dtype=F64))
                module.bias.copy_(dl.tensor([0.1, 0.0, 0.3], dtype=F64))
    return sync, plain


@pytest.fixture
def two_ranks(monkeypatch):
    """The "single" backend told it has 2 ranks: all_reduce of one rank is the identity,
    so the synchronised path runs in this process and must equal a plain batch norm."""
    dist.init_process_group("single")
    monkeypatch.setattr(dist, "get_world_size", lambda group=None: 2)
    yield
    dist.destroy_process_group()


@pytest.mark.parametrize("setting", ["no group", "a group of one", "synchronised"])
def test_sync_batch_norm_is_batch_norm_on_one_rank(setting, monkeypatch):
    if setting != "no group":
        dist.init_process_group("single")
    if setting == "synchronised":
        monkeypatch.setattr(dist, "get_world_size", lambda group=None: 2)
    sync, plain = _pair()
    x = _x(4, 3, 2, 5)
    for _ in range(2):  # (the running estimates move the same way)
        xs, xp = x.clone().requires_grad_(), x.clone().requires_grad_()
        ys, yp = sync(xs), plain(xp)
        np.testing.assert_allclose(ys.detach().numpy(), yp.detach().numpy(), rtol=1e-12,
                                   atol=1e-12)
        (ys * ys.detach()).sum().backward()
        (yp * yp.detach()).sum().backward()
        np.testing.assert_allclose(xs.grad.numpy(), xp.grad.numpy(), rtol=1e-10, atol=1e-12)
        for name in ("weight", "bias"):
            np.testing.assert_allclose(getattr(sync, name).grad.numpy(),
                                       getattr(plain, name).grad.numpy(), rtol=1e-10)
        x = x * 1.5 + 0.25
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_allclose(getattr(sync, name).numpy(), getattr(plain, name).numpy(),
                                   rtol=1e-12)
    sync.eval()
    plain.eval()
    np.testing.assert_allclose(sync(x).detach().numpy(), plain(x).detach().numpy(),
                               rtol=1e-12)
    if dist.is_initialized():
        dist.destroy_process_group()


def test_the_synchronised_path_passes_gradcheck_and_takes_any_rank(two_ranks, monkeypatch):
    reduced = []
    all_reduce = dist.all_reduce
    monkeypatch.setattr(dist, "all_reduce", lambda t, **kw: reduced.append(1) or all_reduce(
        t, **kw))
    sync = nn.SyncBatchNorm(2, dtype=F64)
    with dl.no_grad():
        sync.weight.copy_(dl.tensor([1.5, -0.5], dtype=F64))
    for shape in [(5, 2), (3, 2, 4), (2, 2, 2, 3)]:
        x = _x(*shape).requires_grad_()
        assert gradcheck(lambda x, w, b: sync(x) * w.sum() + b.sum(), (
            x, sync.weight, sync.bias))
    assert reduced  # (the sums went through the collective: the synchronised path)
    with pytest.raises(ValueError, match="more than 1 value per channel .* over all ranks"):
        sync(_x(1, 2))


def test_a_cumulative_average_and_no_running_statistics(two_ranks):
    sync, plain = _pair(momentum=None)
    for seed in range(3):
        sync(_x(4, 3, 2, seed=seed))
        plain(_x(4, 3, 2, 1, seed=seed))
    np.testing.assert_allclose(sync.running_var.numpy(), plain.running_var.numpy(), rtol=1e-12)
    untracked = nn.SyncBatchNorm(3, track_running_stats=False, affine=False, dtype=F64)
    y = untracked(_x(4, 3))
    np.testing.assert_allclose(y.mean(dim=0).numpy(), 0.0, atol=1e-12)
    assert untracked.running_mean is None


def test_sync_batch_norm_refuses_what_pytorch_refuses():
    bn = nn.SyncBatchNorm(3)
    with pytest.raises(ValueError, match=r"expected at least 2D input \(got 1D input\)"):
        bn(dl.ones(3))
    with pytest.raises(ValueError, match="number of input channels should be non-zero"):
        nn.SyncBatchNorm(0)(dl.ones(2, 0))
    with pytest.raises(ValueError, match="expected 3 channels"):
        bn(dl.ones(4, 2))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        bn(dl.ones(1, 3))


def test_convert_sync_batchnorm_keeps_parameters_state_and_mode():
    dl.manual_seed(0)
    inner = nn.Sequential(nn.BatchNorm1d(4, momentum=0.3), nn.ReLU())
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2, eps=1e-3), nn.Flatten(),
                          nn.Linear(8, 4), inner)
    model(dl.ones(3, 1, 4, 4) * dl.arange(16.0).reshape(1, 1, 4, 4))  # running statistics
    model.eval()
    old = model[1]
    weight, mean = old.weight, old.running_mean.clone()
    x = dl.arange(32.0).reshape(2, 1, 4, 4)
    before = model(x)
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert converted is model  # (replaced in place, inside)
    new = model[1]
    assert type(new) is nn.SyncBatchNorm and type(model[4][0]) is nn.SyncBatchNorm
    assert new.weight is weight and new.eps == 1e-3 and model[4][0].momentum == 0.3
    assert dl.equal(new.running_mean, mean) and int(new.num_batches_tracked) == 1
    assert not new.training and isinstance(model[4][1], nn.ReLU)
    assert dl.equal(model(x), before)
    assert {name for name, _ in model.named_parameters()} == {
        "0.weight", "0.bias", "1.weight", "1.bias", "3.weight", "3.bias", "4.0.weight",
        "4.0.bias"}
    lone = nn.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm3d(2))
    assert type(lone) is nn.SyncBatchNorm and lone.num_features == 2


# ------------------------------------------------------------------ CrossMapLRN2d


def _lua_lrn(x, size, alpha, beta, k):
    """torch7's SpatialCrossMapLRN: the window c - h .. c + h, h = (size - 1) // 2."""
    h = (size - 1) // 2
    c = x.shape[1]
    squares = x ** 2
    scale = np.stack([squares[:, max(0, i - h):i + h + 1].sum(axis=1) for i in range(c)], 1)
    return x * (k + alpha / size * scale) ** -beta


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 9])
def test_cross_map_lrn2d_is_torch7s_formula(size):
    x = _x(2, 6, 3, 2)
    layer = nn.CrossMapLRN2d(size, alpha=0.3, beta=0.75, k=2.0)
    np.testing.assert_allclose(layer(x).numpy(), _lua_lrn(x.numpy(), size, 0.3, 0.75, 2.0),
                               rtol=1e-12)
    if size % 2:  # an odd window: LocalResponseNorm's
        np.testing.assert_allclose(layer(x).numpy(),
                                   nn.LocalResponseNorm(size, 0.3, 0.75, 2.0)(x).numpy(),
                                   rtol=1e-12)


def test_cross_map_lrn2d_gradcheck_errors_and_repr():
    x = _x(1, 4, 2, 3).requires_grad_()
    assert gradcheck(nn.CrossMapLRN2d(3, alpha=0.5, beta=0.6, k=1.5), (x,))
    assert gradcheck(nn.CrossMapLRN2d(4, alpha=0.5, beta=0.6, k=1.5), (x,))
    with pytest.raises(ValueError, match="Expected input to be 4D, got 3D instead"):
        nn.CrossMapLRN2d(3)(dl.ones(1, 4, 2))
    with pytest.raises(ValueError, match="size must be at least 1"):
        nn.CrossMapLRN2d(0)
    with pytest.raises(TypeError):
        nn.CrossMapLRN2d(2.5)
    assert repr(nn.CrossMapLRN2d(5)) == "CrossMapLRN2d(5, alpha=0.0001, beta=0.75, k=1.0)"
