"""``DistributedSampler``: each rank of a data-parallel job its own share of a dataset.

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
from collections.abc import Iterator
from typing import Any

from difflab import random as _random


class DistributedSampler:
    """The indices of rank ``rank``'s share of ``dataset`` (PyTorch's semantics).

    Parameters
    ----------
    num_replicas, rank : the world size and this rank; by default read from
        the process group (:func:`~difflab.distributed.process_group.init_process_group`).
    shuffle : a new permutation every epoch; call :meth:`set_epoch` at the
        start of each epoch, or every epoch repeats the first one's order.
    seed : the same on every rank.
    drop_last : drop the tail that does not divide evenly instead of padding.

    Pass it to ``DataLoader(dataset, batch_size=..., sampler=sampler)``;
    ``batch_size`` is then the batch of one rank.
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
        """Use the permutation of this epoch (the same on every rank that calls it)."""
        self.epoch = epoch
