"""Datasets and loaders (also importable as ``difflab.utils.data``, as in PyTorch).

``Dataset``, ``IterableDataset``, ``TensorDataset``, ``StackDataset``, ``Subset``,
``ConcatDataset``, ``ChainDataset``, ``random_split``,
``DataLoader``, the samplers (``Sampler``, ``SequentialSampler``,
``RandomSampler``, ``SubsetRandomSampler``, ``WeightedRandomSampler``,
``BatchSampler``, ``DistributedSampler``: each rank of a data-parallel job its
share), and data that needs no download: the 8x8 handwritten digits
(:func:`load_digits`, :class:`Digits`), :func:`make_moons`, :func:`make_spirals`.
"""

from difflab.data.dataloader import DataLoader, default_collate, default_convert, get_worker_info
from difflab.data.dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from difflab.data.datasets import Digits, load_digits, make_moons, make_spirals
from difflab.data.sampler import (
    BatchSampler,
    DistributedSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "Digits",
    "DistributedSampler", "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler",
    "StackDataset", "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler",
    "default_collate", "default_convert", "get_worker_info", "load_digits", "make_moons",
    "make_spirals", "random_split",
]
