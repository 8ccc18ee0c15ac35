"""``torch.utils.data.dataset``: the dataset classes of :mod:`difflab.data`."""

from difflab.data.dataset import ConcatDataset, Dataset, Subset, TensorDataset, random_split

__all__ = ["ConcatDataset", "Dataset", "Subset", "TensorDataset", "random_split"]
