"""Datasets and loaders (also importable as ``difflab.utils.data``, as in PyTorch).

``Dataset``, ``TensorDataset``, ``Subset``, ``ConcatDataset``, ``random_split``,
``DataLoader``, the samplers (``Sampler``, ``SequentialSampler``,
``RandomSampler``, ``SubsetRandomSampler``, ``WeightedRandomSampler``,
``BatchSampler``, ``DistributedSampler``: each rank of a data-parallel job its
share), and data that needs no download: the 8x8 handwritten digits
(:func:`load_digits`, :class:`Digits`), :func:`make_moons`, :func:`make_spirals`.
"""

from difflab.data.dataloader import DataLoader, default_collate
from difflab.data.dataset import ConcatDataset, Dataset, Subset, TensorDataset, random_split
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
    "BatchSampler", "ConcatDataset", "DataLoader", "Dataset", "Digits", "DistributedSampler",
    "RandomSampler", "Sampler", "SequentialSampler", "Subset", "SubsetRandomSampler",
    "TensorDataset", "WeightedRandomSampler", "default_collate", "load_digits", "make_moons",
    "make_spirals", "random_split",
]
