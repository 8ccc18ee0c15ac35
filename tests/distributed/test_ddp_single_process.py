"""DistributedDataParallel, DataParallel and DistributedSampler in this process (world of one).

The launched tests (test_launched.py) check the same against real ranks.
"""

import gc

import numpy as np
import pytest

import difflab as dl
import difflab.distributed as dist
import difflab.nn as nn
import difflab.nn.functional as F
from difflab.data import DataLoader, DistributedSampler, TensorDataset
from difflab.nn.parallel import DataParallel, DistributedDataParallel
from difflab.nn.parallel.distributed import _build_buckets


def mlp():
    dl.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 3)).double()


def batches(n=3):
    rng = np.random.default_rng(1)
    return [(dl.tensor(rng.standard_normal((5, 4))), dl.tensor(rng.integers(0, 3, 5)))
            for _ in range(n)]


def train(model, params, steps):
    opt = dl.optim.SGD(params, lr=0.5, momentum=0.9)
    for x, y in steps:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()


def test_ddp_needs_a_process_group():
    with pytest.raises(RuntimeError, match=r"DistributedDataParallel: the default process group "
                                           r"has not been initialized"):
        DistributedDataParallel(mlp())


def test_ddp_on_one_rank_trains_exactly_like_the_module():
    dist.init_process_group("single")
    plain, wrapped = mlp(), DistributedDataParallel(mlp(), bucket_cap_mb=1e-4)
    train(plain, plain.parameters(), batches())
    train(wrapped, wrapped.parameters(), batches())
    for p, q in zip(plain.parameters(), wrapped.module.parameters()):
        np.testing.assert_array_equal(p.array, q.array)
    assert list(wrapped.state_dict()) == ["module." + k for k in plain.state_dict()]


def test_buckets_fill_in_reverse_order_one_dtype_each_never_splitting_a_parameter():
    dist.init_process_group("single")
    model = mlp()  # weights 6x4, 6, 3x6, 3 (float64: 192, 48, 144, 24 bytes)
    params = list(model.parameters())
    tiny = _build_buckets(params, 1)
    assert [b.indices for b in tiny] == [[3], [2], [1], [0]]
    assert [b.indices for b in _build_buckets(params, 10**9)] == [[3, 2, 1, 0]]
    assert [b.indices for b in _build_buckets(params, 150)] == [[3, 2], [1, 0]]
    mixed = params[:2] + [nn.Parameter(dl.ones(3, dtype=dl.float32))]
    buckets = _build_buckets(mixed, 10**9)
    assert sorted((b.flat.dtype.name, b.indices) for b in buckets) == [
        ("float32", [2]), ("float64", [1, 0])]


def test_no_sync_accumulates_and_the_next_backward_averages_the_sum():
    dist.init_process_group("single")
    model = DistributedDataParallel(mlp())
    (x1, y1), (x2, y2) = batches(2)
    with model.no_sync():
        F.cross_entropy(model(x1), y1).backward()
    F.cross_entropy(model(x2), y2).backward()
    reference = mlp()
    F.cross_entropy(reference(x1), y1).backward()
    F.cross_entropy(reference(x2), y2).backward()
    for p, q in zip(model.module.parameters(), reference.parameters()):
        np.testing.assert_allclose(p.grad.array, q.grad.array, rtol=0, atol=1e-15)
    assert model.require_backward_grad_sync


def test_a_parameter_without_gradient_is_an_error_unless_allowed():
    dist.init_process_group("single")
    model = nn.ModuleDict({"used": nn.Linear(2, 1), "unused": nn.Linear(2, 1)})
    ddp = DistributedDataParallel(model)
    with pytest.raises(RuntimeError, match=r"2 parameter\(s\) received no gradient.*"
                                           r"unused.weight, unused.bias.*find_unused_parameters"):
        model["used"](dl.ones(1, 2)).sum().backward()
    ddp = DistributedDataParallel(model, find_unused_parameters=True)
    model["used"].weight.grad = None
    model["used"](dl.ones(1, 2)).sum().backward()
    assert model["unused"].weight.grad is None  # unused everywhere: left alone
    assert model["used"].weight.grad.tolist() == [[1.0, 1.0]]
    del ddp


def test_a_dropped_wrapper_leaves_no_working_hooks():
    dist.init_process_group("single")
    module = mlp()
    DistributedDataParallel(module)
    gc.collect()
    x, y = batches(1)[0]
    F.cross_entropy(module(x), y).backward()  # no wrapper: no missing-gradient checks, no error
    assert all(p.grad is not None for p in module.parameters())


def test_bad_construction_arguments():
    dist.init_process_group("single")
    with pytest.raises(TypeError, match="wraps an nn.Module"):
        DistributedDataParallel(lambda x: x)
    with pytest.raises(ValueError, match="bucket_cap_mb must be positive"):
        DistributedDataParallel(mlp(), bucket_cap_mb=0)
    with pytest.raises(ValueError, match="one device per process"):
        DistributedDataParallel(mlp(), device_ids=[0, 1])


def test_forward_passes_arguments_through():
    class TwoInputs(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(dl.tensor(2.0))

        def forward(self, a, b=0.0):
            return self.scale * a + b

    dist.init_process_group("single")
    model = DistributedDataParallel(TwoInputs())
    assert model(dl.tensor(3.0), b=dl.tensor(1.0)).item() == 7.0


def test_data_parallel_runs_the_module_without_a_process_group():
    assert not dist.is_initialized()
    model = nn.DataParallel(mlp(), device_ids=[0, 1])
    assert isinstance(model, DistributedDataParallel) and isinstance(model, DataParallel)
    x, y = batches(1)[0]
    F.cross_entropy(model(x), y).backward()
    reference = mlp()
    F.cross_entropy(reference(x), y).backward()
    for p, q in zip(model.module.parameters(), reference.parameters()):
        np.testing.assert_array_equal(p.grad.array, q.grad.array)


# ------------------------------------------------------------------- the sampler


def shares(n, replicas, **kw):
    dataset = TensorDataset(dl.arange(n))
    return [list(DistributedSampler(dataset, num_replicas=replicas, rank=r, **kw))
            for r in range(replicas)]


def test_sampler_shares_are_disjoint_and_cover_the_dataset():
    parts = shares(12, 4)
    assert all(len(p) == 3 for p in parts)
    assert sorted(i for p in parts for i in p) == list(range(12))


def test_sampler_pads_with_the_first_indices_or_drops_the_tail():
    assert shares(10, 4, shuffle=False) == [[0, 4, 8], [1, 5, 9], [2, 6, 0], [3, 7, 1]]
    assert shares(10, 4, shuffle=False, drop_last=True) == [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert shares(2, 5, shuffle=False) == [[0], [1], [0], [1], [0]]  # padding repeats
    assert len(DistributedSampler(range(10), num_replicas=4, rank=0, drop_last=True)) == 2


def test_sampler_order_is_seeded_and_changes_with_set_epoch():
    dataset = TensorDataset(dl.arange(20))
    a = DistributedSampler(dataset, num_replicas=2, rank=0, seed=5)
    b = DistributedSampler(dataset, num_replicas=2, rank=0, seed=5)
    assert list(a) == list(b) and list(a) != list(range(0, 20, 2))
    first = list(a)
    a.set_epoch(1)
    assert list(a) != first
    b.set_epoch(1)
    assert list(a) == list(b)


def test_sampler_with_a_data_loader_and_the_process_group():
    dist.init_process_group("single")
    dataset = TensorDataset(dl.arange(7))
    sampler = DistributedSampler(dataset, shuffle=False)
    assert (sampler.num_replicas, sampler.rank) == (1, 0)
    loader = DataLoader(dataset, batch_size=3, sampler=sampler)
    assert [b.tolist() for (b,) in loader] == [[0, 1, 2], [3, 4, 5], [6]]


@pytest.mark.parametrize("rank", [2, 3, -1])
def test_sampler_rank_outside_the_world_is_refused(rank):
    with pytest.raises(ValueError, match=r"Invalid rank .*interval \[0, 1\]"):
        DistributedSampler(range(10), num_replicas=2, rank=rank)


def test_sampler_defaults_need_a_process_group():
    with pytest.raises(RuntimeError, match=r"init_process_group\(\) has not been called"):
        DistributedSampler(range(10))
    with pytest.raises(ValueError, match="num_replicas must be a positive integer"):
        DistributedSampler(range(10), num_replicas=0, rank=0)
