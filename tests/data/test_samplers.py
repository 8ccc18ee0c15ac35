"""Samplers with PyTorch's names, and a DataLoader that reads its sampler lazily (issue 27)."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest

import difflab as dl
from difflab.utils.data import (
    BatchSampler,
    DataLoader,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
)


def gen(seed=0):
    return dl.Generator().manual_seed(seed)


def test_a_loader_over_ten_billion_samples_starts_at_once_and_reads_lazily():
    dataset = TensorDataset(dl.arange(10.0))
    sampler = RandomSampler(dataset, replacement=True, num_samples=10**10, generator=gen())
    loader = DataLoader(dataset, batch_size=4, sampler=sampler)
    assert len(sampler) == 10**10 and len(loader) == 10**10 // 4
    start = time.perf_counter()
    batches = [b for (b,), _ in zip(loader, range(50))]
    assert time.perf_counter() - start < 2.0  # a list of 10**10 indices would not fit
    values = np.concatenate([b.array for b in batches])
    assert values.shape == (200,) and set(values.tolist()) <= set(range(10))
    assert len(set(values.tolist())) == 10  # with replacement, every value shows up


def test_random_sampler_without_replacement_is_a_permutation_per_pass():
    sampler = RandomSampler(range(7), generator=gen(3))
    first, second = list(sampler), list(sampler)
    assert sorted(first) == sorted(second) == list(range(7)) and first != second
    longer = list(RandomSampler(range(4), num_samples=10, generator=gen()))
    assert len(longer) == 10 and sorted(longer[:4]) == sorted(longer[4:8]) == [0, 1, 2, 3]
    assert list(RandomSampler(range(5), generator=gen(9))) == list(
        RandomSampler(range(5), generator=gen(9)))
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(TypeError, match="replacement should be a boolean"):
        RandomSampler(range(3), replacement=1)


def test_replacement_draws_are_uniform():
    counts = np.bincount(list(RandomSampler(range(4), True, 40_000, gen(1))), minlength=4)
    assert np.allclose(counts / 40_000, 0.25, atol=0.01)


def test_weighted_subset_sequential_and_batch_samplers():
    counts = np.bincount(list(WeightedRandomSampler([1.0, 3.0, 0.0], 20_000, generator=gen())),
                         minlength=3)
    assert counts[2] == 0 and abs(counts[1] / counts[0] - 3.0) < 0.2
    drawn = list(WeightedRandomSampler(dl.tensor([1.0, 1.0, 1.0]), 3, replacement=False,
                                       generator=gen()))
    assert sorted(drawn) == [0, 1, 2]
    with pytest.raises(ValueError, match="cannot draw 4 samples without replacement"):
        list(WeightedRandomSampler([1.0, 1.0], 4, replacement=False))
    assert sorted(SubsetRandomSampler([10, 20, 30], gen())) == [10, 20, 30]
    assert list(SequentialSampler("abc")) == [0, 1, 2]
    batches = BatchSampler(SequentialSampler(range(7)), 3, drop_last=False)
    assert list(batches) == [[0, 1, 2], [3, 4, 5], [6]] and len(batches) == 3
    assert len(BatchSampler(range(7), 3, drop_last=True)) == 2
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        BatchSampler(range(3), 0, False)
    with pytest.raises(NotImplementedError, match="must define __iter__"):
        iter(Sampler())


def test_loader_with_a_batch_sampler_and_an_infinite_sampler():
    dataset = TensorDataset(dl.arange(6.0), dl.arange(6))
    loader = DataLoader(dataset, batch_sampler=BatchSampler(range(6), 4, drop_last=False))
    assert [x.tolist() for x, _ in loader] == [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0]]
    assert len(loader) == 2
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        DataLoader(dataset, batch_size=2, batch_sampler=[[0]])

    class Forever(Sampler):  # no __len__: an endless stream of indices
        def __iter__(self):
            return itertools.cycle(range(6))

    stream = iter(DataLoader(dataset, batch_size=4, sampler=Forever()))
    assert [next(stream)[1].tolist() for _ in range(3)] == [[0, 1, 2, 3], [4, 5, 0, 1],
                                                            [2, 3, 4, 5]]


def test_shuffled_loader_is_unchanged_by_the_lazy_reader():
    dataset = TensorDataset(dl.arange(10))
    order = [int(v) for (b,) in DataLoader(dataset, batch_size=3, shuffle=True,
                                           generator=gen(5)) for v in b.tolist()]
    assert order == dl.random.permutation(10, gen(5)).tolist()
    last = list(DataLoader(dataset, batch_size=3, drop_last=True))
    assert len(last) == 3 and last[-1][0].tolist() == [6, 7, 8]


def test_iterable_chain_and_stack_datasets():
    from difflab.utils.data import (
        ChainDataset,
        IterableDataset,
        StackDataset,
        default_convert,
        get_worker_info,
    )

    class Stream(IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter([(float(i), i % 2) for i in range(self.n)])

    batches = list(DataLoader(Stream(5), batch_size=2))
    assert [b[0].tolist() for b in batches] == [[0.0, 1.0], [2.0, 3.0], [4.0]]
    assert [b[1].tolist() for b in batches][0] == [0, 1]
    assert len(list(DataLoader(Stream(5), batch_size=2, drop_last=True))) == 2
    assert list(DataLoader(Stream(2), batch_size=None)) == [(0.0, 0), (1.0, 1)]
    with pytest.raises(ValueError, match="expected unspecified shuffle"):
        DataLoader(Stream(3), shuffle=True)
    with pytest.raises(TypeError, match="cannot be indexed"):
        Stream(3)[0]
    chained = Stream(2) + Stream(1)
    assert isinstance(chained, ChainDataset) and [x for x, _ in chained] == [0.0, 1.0, 0.0]
    stacked = StackDataset(dl.arange(3.0), dl.arange(3))
    x, y = next(iter(DataLoader(stacked, batch_size=3)))
    assert x.tolist() == [0.0, 1.0, 2.0] and y.tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="Size mismatch"):
        StackDataset(range(2), range(3))
    with pytest.raises(ValueError, match="not both"):
        StackDataset(range(2), y=range(2))
    converted = default_convert([np.arange(3), {"a": np.float32(2.5)}, "text"])
    assert isinstance(converted[0], dl.Tensor) and converted[1]["a"].item() == 2.5
    assert converted[2] == "text" and get_worker_info() is None
