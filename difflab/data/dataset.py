"""``Dataset``, ``TensorDataset``, ``Subset``, ``ConcatDataset`` and ``random_split``.

A dataset is anything with ``__len__`` and ``__getitem__(i)`` returning one
sample.  A :class:`~difflab.data.DataLoader` draws indices, fetches the
samples and stacks them into batches.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from difflab import random as _random
from difflab.tensor import Tensor


class Dataset:
    """Base class: override ``__getitem__(index)`` and ``__len__()``."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define __len__")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class TensorDataset(Dataset):
    """Samples are rows: ``dataset[i] = (t[i] for t in tensors)``.

    All tensors must have the same length (first dimension).  A batch of rows
    is fetched with one indexing operation per tensor (:meth:`get_batch`),
    not one per sample.
    """

    def __init__(self, *tensors: Tensor) -> None:
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        n = tensors[0].shape[0] if tensors[0].ndim else None
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset: argument {i} is a {type(t).__name__}, "
                                f"not a Tensor")
            if t.ndim == 0 or t.shape[0] != n:
                raise ValueError(
                    f"Size mismatch between tensors: tensor 0 has {n} rows, tensor {i} has "
                    f"shape {tuple(t.shape)}"
                )
        self.tensors = tensors

    def __getitem__(self, index: int) -> tuple:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]

    def get_batch(self, indices: Any) -> tuple:
        """The rows ``indices`` of every tensor, already stacked."""
        idx = np.asarray(indices)
        return tuple(Tensor._wrap(t.array[idx]) for t in self.tensors)


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, index: int) -> Any:
        if isinstance(index, list):
            return [self.dataset[self.indices[i]] for i in index]
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)

    def __getattr__(self, name: str) -> Any:
        if name == "get_batch" and hasattr(self.dataset, "get_batch"):
            indices = np.asarray(self.indices)
            return lambda batch: self.dataset.get_batch(indices[np.asarray(batch)])
        raise AttributeError(name)


class ConcatDataset(Dataset):
    """Several datasets one after another."""

    def __init__(self, datasets: Sequence[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset needs at least one dataset")
        self.cumulative_sizes = np.cumsum([len(d) for d in self.datasets]).tolist()

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int) -> Any:
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"index {index} out of range for a dataset of length {len(self)}")
        d = int(np.searchsorted(self.cumulative_sizes, index, side="right"))
        start = 0 if d == 0 else self.cumulative_sizes[d - 1]
        return self.datasets[d][index - start]


def random_split(dataset: Dataset, lengths: Sequence[float], generator: Any = None
                 ) -> list[Subset]:
    """Split ``dataset`` at random into pieces of the given ``lengths``.

    ``lengths`` are counts that add up to ``len(dataset)``, or fractions that
    add up to 1 (each piece gets ⌊fraction·n⌋ and the remainder is dealt out
    one by one, round robin, as in PyTorch).  Pass a seeded
    :class:`difflab.Generator` for a reproducible split.
    """
    n = len(dataset)
    lengths = list(lengths)
    if lengths and all(0 <= f <= 1 for f in lengths) and math.isclose(sum(lengths), 1) \
            and sum(lengths) != n:
        counts = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if any(int(k) != k or k < 0 for k in lengths):
        raise ValueError(f"random_split: lengths must be counts or fractions, got {lengths}")
    if sum(lengths) != n:
        raise ValueError(
            f"Sum of input lengths ({sum(lengths)}) does not equal the length of the input "
            f"dataset ({n})"
        )
    perm = _random.permutation(n, generator).tolist()
    out, start = [], 0
    for k in lengths:
        out.append(Subset(dataset, perm[start:start + int(k)]))
        start += int(k)
    return out


# ---------------------------------------------------------------------------------------
# breadth (issue 27): datasets that are streams, chains of them, and columns side by side.


class IterableDataset(Dataset):
    """A dataset that is a stream: define ``__iter__`` (no indexing, maybe no length).

    A :class:`~difflab.data.DataLoader` over it batches what the iterator
    yields, in order (there is no sampler and no ``shuffle``).

    Examples
    --------
    >>> class Squares(IterableDataset):
    ...     def __iter__(self):
    ...         return (i * i for i in range(5))
    >>> from difflab.data import DataLoader
    >>> [batch.tolist() for batch in DataLoader(Squares(), batch_size=2)]
    [[0, 1], [4, 9], [16]]
    """

    def __iter__(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")

    def __getitem__(self, index: int) -> Any:
        raise TypeError(f"{type(self).__name__} is an IterableDataset: iterate over it, it "
                        "cannot be indexed")

    def __len__(self) -> int:
        # (a TypeError, as for any object without a length: list() and len() expect it)
        raise TypeError(f"{type(self).__name__} is a stream without a length; define "
                        "__len__ if it has one")

    def __add__(self, other: Any) -> ChainDataset:
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """Several iterable datasets one after another.

    Examples
    --------
    >>> list(ChainDataset([range(2), range(10, 12)]))
    [0, 1, 10, 11]
    """

    def __init__(self, datasets: Sequence[Any]) -> None:
        self.datasets = list(datasets)

    def __iter__(self) -> Any:
        for dataset in self.datasets:
            yield from dataset

    def __len__(self) -> int:
        return sum(len(d) for d in self.datasets)


class StackDataset(Dataset):
    """Datasets of the same length side by side: sample i is the tuple (or dict) of their
    samples i.

    Examples
    --------
    >>> pairs = StackDataset(range(3), "abc")
    >>> pairs[1]
    (1, 'b')
    >>> StackDataset(x=range(3), label="abc")[2]
    {'x': 2, 'label': 'c'}
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args and kwargs:
            raise ValueError("StackDataset takes datasets as positional arguments (samples are "
                             "tuples) or as keywords (samples are dicts), not both")
        if not args and not kwargs:
            raise ValueError("StackDataset needs at least one dataset")
        self.datasets: Any = args if args else kwargs
        sizes = {len(d) for d in (args or kwargs.values())}
        if len(sizes) != 1:
            raise ValueError(f"Size mismatch between datasets: lengths {sorted(sizes)}")
        self._length = sizes.pop()

    def __getitem__(self, index: int) -> Any:
        if isinstance(self.datasets, dict):
            return {key: d[index] for key, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length
