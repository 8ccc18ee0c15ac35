"""Samplers: which indices a :class:`~difflab.data.DataLoader` reads, in which order.

``SequentialSampler`` (0, 1, ..., n-1), ``RandomSampler`` (a shuffle, or draws
with replacement, read lazily so ``num_samples=10**10`` costs nothing up
front), ``SubsetRandomSampler``, ``WeightedRandomSampler``, ``BatchSampler``
(indices grouped into lists), all with PyTorch's names and arguments, and
``DistributedSampler``: each rank of a data-parallel job its own share of a dataset.

Every rank draws the same permutation of 0..n-1 (seeded by ``seed + epoch``,
so it changes each epoch and agrees across ranks) and keeps every
``num_replicas``-th index starting at its rank:

    rank r gets  perm[r], perm[r + N], perm[r + 2N], ...

The shares are disjoint and, together, cover the dataset.  When n is not a
multiple of N, the permutation is padded with its own first indices
(a few samples are seen twice per epoch) so that every rank gets the same
number of samples and takes the same number of steps; ``drop_last=True``
drops the tail instead.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from difflab import random as _random

#: How many indices a sampler draws from the generator at a time (PyTorch draws 32).
CHUNK = 32


class Sampler:
    """Base class of samplers: an iterable of dataset indices, with a length if known.

    Subclass it and define ``__iter__`` (and ``__len__`` when the number of
    indices is known).  A :class:`~difflab.data.DataLoader` reads the indices
    one at a time, so a sampler may be as long as it likes.

    Parameters
    ----------
    data_source : Dataset, optional
        Accepted for PyTorch compatibility and ignored by the base class.

    Raises
    ------
    NotImplementedError
        When iterated without a subclass's ``__iter__``.

    Examples
    --------
    >>> class EvenIndices(Sampler):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __iter__(self):
    ...         return iter(range(0, self.n, 2))
    ...     def __len__(self):
    ...         return (self.n + 1) // 2
    >>> list(EvenIndices(5))
    [0, 2, 4]
    """

    def __init__(self, data_source: Any = None) -> None:
        pass

    def __iter__(self) -> Iterator[int]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class SequentialSampler(Sampler):
    """The indices 0, 1, ..., ``len(data_source) - 1`` in order (a DataLoader without shuffle).

    Parameters
    ----------
    data_source : Sequence
        The dataset; only its length is used.

    Examples
    --------
    >>> list(SequentialSampler(range(4)))
    [0, 1, 2, 3]
    """

    def __init__(self, data_source: Sequence) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _count(name: str, value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"{name}: {what} should be a positive integer value, but got "
                         f"{what}={value!r}")
    return int(value)


class RandomSampler(Sampler):
    """Indices in random order: a shuffle, or ``num_samples`` draws with replacement.

    Indices are drawn while the loader reads them, :data:`CHUNK` at a time
    (with replacement) or one permutation of the dataset at a time (without),
    never as one list: ``RandomSampler(data, replacement=True,
    num_samples=10**10)`` starts at once and holds 32 indices.

    Parameters
    ----------
    data_source : Sequence
        The dataset (only its length is used).
    replacement : bool
        Draw each index independently (True) or go through shuffles of the
        dataset (False; ``num_samples`` beyond its length starts a new shuffle).
    num_samples : int, optional
        How many indices (default: the dataset's length).
    generator : Generator, optional
        Where the randomness comes from (default: the global generator seeded
        by :func:`difflab.random.manual_seed`).

    Examples
    --------
    >>> import difflab as dl
    >>> sampler = RandomSampler(range(10), generator=dl.Generator().manual_seed(0))
    >>> sorted(sampler)
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    >>> huge = RandomSampler(range(10), replacement=True, num_samples=10**10)
    >>> len(huge), all(0 <= i < 10 for i, _ in zip(huge, range(100)))
    (10000000000, True)
    """

    def __init__(self, data_source: Sequence, replacement: bool = False,
                 num_samples: int | None = None, generator: Any = None) -> None:
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got "
                            f"replacement={replacement!r}")
        self.data_source, self.replacement = data_source, replacement
        self._num_samples, self.generator = num_samples, generator
        if num_samples is not None:
            _count("RandomSampler", num_samples, "num_samples")
        elif len(data_source) == 0:
            raise ValueError("RandomSampler: num_samples should be a positive integer value, "
                             "but the dataset is empty")

    @property
    def num_samples(self) -> int:
        """How many indices one pass yields: the dataset's length unless ``num_samples`` was given.

        Returns
        -------
        int
            The number of indices (a property).

        Examples
        --------
        >>> RandomSampler(range(10)).num_samples
        10
        """
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n, left = len(self.data_source), self.num_samples
        if n == 0:
            raise ValueError("RandomSampler: cannot draw indices from an empty dataset")
        rng = _random._rng(self.generator)
        while left > 0:
            if self.replacement:
                chunk = rng.integers(0, n, size=min(CHUNK, left))
            else:
                chunk = rng.permutation(n)[:left]
            left -= len(chunk)
            yield from chunk.tolist()

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order, a new one every pass (e.g. a validation split).

    Parameters
    ----------
    indices : sequence of int
        The indices to draw from.
    generator : difflab.Generator, optional
        The source of the order; the global generator by default.

    Examples
    --------
    >>> import difflab as dl
    >>> sorted(SubsetRandomSampler([7, 3, 5], generator=dl.Generator().manual_seed(1)))
    [3, 5, 7]
    """

    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        self.indices, self.generator = indices, generator

    def __iter__(self) -> Iterator[int]:
        for i in _random._rng(self.generator).permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    r"""``num_samples`` indices drawn with probability proportional to ``weights``.

    Index :math:`i` is drawn with probability :math:`w_i / \sum_j w_j` (with
    replacement, each draw independent; without, an index is drawn at most once).
    Over-sampling a rare class is the usual use.

    Parameters
    ----------
    weights : sequence of float or Tensor
        One non-negative weight per index (need not sum to 1), 1-D.
    num_samples : int
        How many indices per pass, > 0.
    replacement : bool, default True
        Draw with replacement.
    generator : difflab.Generator, optional
        The source of randomness; the global generator by default.

    Raises
    ------
    ValueError
        If ``weights`` is not 1-D, ``num_samples`` is not a positive int, or
        ``replacement`` is not a bool.

    Examples
    --------
    >>> import difflab as dl
    >>> sampler = WeightedRandomSampler([0.0, 1.0, 0.0], 4,
    ...                                 generator=dl.Generator().manual_seed(0))
    >>> list(sampler)
    [1, 1, 1, 1]
    """

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: Any = None) -> None:
        from difflab.tensor import Tensor

        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got "
                             f"replacement={replacement!r}")
        array = weights.array if isinstance(weights, Tensor) else weights
        self.weights = np.asarray(array, dtype=np.float64)
        if self.weights.ndim != 1:
            raise ValueError(f"WeightedRandomSampler: weights should be a 1-D sequence, got "
                             f"shape {self.weights.shape}")
        self.num_samples = _count("WeightedRandomSampler", num_samples, "num_samples")
        self.replacement, self.generator = replacement, generator

    def __iter__(self) -> Iterator[int]:
        drawn = _random.multinomial_array(self.weights, self.num_samples, self.replacement,
                                          self.generator)
        return iter(drawn.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Indices from ``sampler`` grouped into lists of ``batch_size`` (the last may be shorter).

    Pass it as a DataLoader's ``batch_sampler``; it reads ``sampler`` lazily.

    Parameters
    ----------
    sampler : iterable of int
        The indices (a Sampler, or any iterable).
    batch_size : int
        Indices per list, > 0.
    drop_last : bool
        Drop the last list if it is shorter than ``batch_size``.

    Raises
    ------
    ValueError
        If ``batch_size`` is not a positive int or ``drop_last`` not a bool.

    Examples
    --------
    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    >>> list(BatchSampler(range(5), 2, drop_last=True))
    [[0, 1], [2, 3]]
    """

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        self.batch_size = _count("BatchSampler", batch_size, "batch_size")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got "
                             f"drop_last={drop_last!r}")
        self.sampler, self.drop_last = sampler, drop_last

    def __iter__(self) -> Iterator[list]:
        batch: list = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


class DistributedSampler(Sampler):
    """The indices of rank ``rank``'s share of ``dataset`` in data-parallel training.

    Every rank draws the same permutation of :math:`0..n-1` (seeded by
    ``seed + epoch``) and keeps every ``num_replicas``-th index from its rank on:
    rank :math:`r` gets ``perm[r], perm[r + N], perm[r + 2N], ...``.  The shares
    are disjoint and together cover the dataset; when :math:`n` is not a multiple
    of :math:`N` the permutation is padded with its own first indices (so every
    rank takes the same number of steps), or the tail is dropped with ``drop_last``.
    Pass it to ``DataLoader(dataset, batch_size=..., sampler=sampler)``;
    ``batch_size`` is then one rank's batch.

    Parameters
    ----------
    dataset : Dataset
        Only its length is used.
    num_replicas : int, optional
        :math:`N`, the number of ranks; the process group's world size by default.
    rank : int, optional
        This rank, in :math:`[0, N)`; the process group's rank by default.
    shuffle : bool, default True
        A new permutation every epoch (call :meth:`set_epoch`); False keeps 0..n-1.
    seed : int, default 0
        The same on every rank.
    drop_last : bool, default False
        Drop the tail that does not divide evenly instead of padding.

    Attributes
    ----------
    num_samples : int
        The number of indices of each rank.
    total_size : int
        ``num_samples * num_replicas``.

    Raises
    ------
    RuntimeError
        If ``num_replicas`` or ``rank`` is left out and no process group is initialised.
    ValueError
        If ``num_replicas`` is not a positive int or ``rank`` is outside :math:`[0, N)`.

    Examples
    --------
    >>> shares = [list(DistributedSampler(range(10), num_replicas=3, rank=r, shuffle=False))
    ...           for r in range(3)]
    >>> shares
    [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
    """

    def __init__(self, dataset: Any, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            from difflab import distributed as dist

            if not dist.is_initialized():
                raise RuntimeError(
                    "DistributedSampler: num_replicas and rank default to the process group's "
                    "world size and rank, but init_process_group() has not been called. Call "
                    "it first, or pass num_replicas= and rank=."
                )
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if not isinstance(num_replicas, int) or num_replicas < 1:
            raise ValueError(f"num_replicas must be a positive integer, got {num_replicas!r}")
        if not isinstance(rank, int) or not 0 <= rank < num_replicas:
            raise ValueError(
                f"Invalid rank {rank!r}, rank should be in the interval [0, {num_replicas - 1}] "
                f"(there are num_replicas={num_replicas} ranks)"
            )
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.shuffle, self.seed, self.drop_last = shuffle, seed, drop_last
        self.epoch = 0
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            generator = _random.Generator().manual_seed(self.seed + self.epoch)
            indices = _random.permutation(n, generator).tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        elif len(indices) < self.total_size:  # pad with the first indices, repeated if needed
            padding = self.total_size - len(indices)
            indices += (indices * math.ceil(padding / len(indices)))[:padding]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Use the permutation of ``epoch`` (the same on every rank that calls it).

        Call it at the start of every epoch when shuffling; otherwise every epoch
        repeats the first one's order.

        Parameters
        ----------
        epoch : int
            The epoch number; the permutation is seeded by ``seed + epoch``.

        Returns
        -------
        None

        Examples
        --------
        >>> sampler = DistributedSampler(range(10), num_replicas=2, rank=0)
        >>> first = list(sampler)
        >>> sampler.set_epoch(1)
        >>> sampler.epoch, len(list(sampler)), list(sampler) != first
        (1, 5, True)
        """
        self.epoch = epoch
