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
    """Base class of map-style datasets: override ``__getitem__(index)`` and ``__len__()``.

    A dataset is anything with a length whose item ``i`` is one sample (a tensor,
    a tuple ``(input, label)``, a dict...).  A :class:`DataLoader` draws indices,
    fetches the samples and stacks them into batches.  ``a + b`` is
    ``ConcatDataset([a, b])``.

    The base class takes no arguments; a subclass takes what it needs.

    Raises
    ------
    NotImplementedError
        When a subclass leaves out ``__getitem__`` or ``__len__`` and it is used.

    See Also
    --------
    TensorDataset : rows of tensors, without writing a class.
    IterableDataset : a stream, without indexing.

    Examples
    --------
    >>> import difflab as dl
    >>> class Squares(Dataset):
    ...     def __len__(self):
    ...         return 4
    ...     def __getitem__(self, i):
    ...         return dl.tensor(float(i)), dl.tensor(float(i * i))
    >>> len(Squares()), Squares()[3]
    (4, (tensor(3.), tensor(9.)))
    >>> len(Squares() + Squares())
    8
    """

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define __len__")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class TensorDataset(Dataset):
    """A dataset whose samples are rows of tensors: ``dataset[i] = tuple(t[i] for t in tensors)``.

    A batch of rows is fetched with one indexing operation per tensor
    (:meth:`get_batch`, which :class:`DataLoader` uses), not one per sample.

    Parameters
    ----------
    *tensors : Tensor
        At least one; all with the same length (first dimension).

    Attributes
    ----------
    tensors : tuple of Tensor
        As given.

    Raises
    ------
    ValueError
        Without tensors, or when a tensor is 0-d or its length differs from the first's.
    TypeError
        When an argument is not a Tensor.

    Examples
    --------
    >>> import difflab as dl
    >>> ds = TensorDataset(dl.arange(10.0).reshape(5, 2), dl.arange(5))
    >>> len(ds), ds[1]
    (5, (tensor([2., 3.]), tensor(1)))
    >>> TensorDataset(dl.ones(5, 2), dl.ones(4))
    Traceback (most recent call last):
        ...
    ValueError: Size mismatch between tensors: tensor 0 has 5 rows, tensor 1 has shape (4,)
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
        """The rows ``indices`` of every tensor, already stacked (one indexing per tensor).

        Parameters
        ----------
        indices : sequence of int
            The rows of the batch.

        Returns
        -------
        tuple of Tensor
            One tensor per stored tensor, with ``len(indices)`` rows (not tracked by autograd).

        Examples
        --------
        >>> import difflab as dl
        >>> ds = TensorDataset(dl.arange(10.0).reshape(5, 2), dl.arange(5))
        >>> ds.get_batch([0, 3])
        (tensor([[0., 1.],
                [6., 7.]]), tensor([0, 3]))
        """
        idx = np.asarray(indices)
        return tuple(Tensor._wrap(t.array[idx]) for t in self.tensors)


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``: ``subset[i] = dataset[indices[i]]``.

    If ``dataset`` can fetch batches (``get_batch``), so can the subset.

    Parameters
    ----------
    dataset : Dataset
        The whole dataset.
    indices : sequence of int
        The indices kept, in order.

    Attributes
    ----------
    dataset : Dataset
    indices : list of int

    See Also
    --------
    random_split : subsets at random.

    Examples
    --------
    >>> import difflab as dl
    >>> ds = TensorDataset(dl.arange(10.0).reshape(5, 2), dl.arange(5))
    >>> part = Subset(ds, [4, 0])
    >>> len(part), part[0]
    (2, (tensor([8., 9.]), tensor(4)))
    """

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
    """Several datasets one after another: indices run through the first, then the second, ...

    Parameters
    ----------
    datasets : sequence of Dataset
        At least one.

    Attributes
    ----------
    cumulative_sizes : list of int
        The running total of the lengths.

    Raises
    ------
    ValueError
        Without datasets.
    IndexError
        For an index outside :math:`[-n, n)`.

    Examples
    --------
    >>> both = ConcatDataset([range(3), range(10, 12)])
    >>> len(both), both[3], both.cumulative_sizes
    (5, 10, [3, 5])
    """

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
    r"""Split ``dataset`` at random into non-overlapping subsets of the given ``lengths``.

    ``lengths`` are counts that add up to ``len(dataset)``, or fractions that add
    up to 1: each piece then gets :math:`\lfloor f\,n \rfloor` samples and the
    remainder is dealt out one by one, round robin, as in PyTorch.

    Parameters
    ----------
    dataset : Dataset
        What to split.
    lengths : sequence of int or float
        Counts or fractions.
    generator : difflab.Generator, optional
        A seeded generator for a reproducible split; the global one by default.

    Returns
    -------
    list of Subset
        One per length.

    Raises
    ------
    ValueError
        If the lengths are neither counts nor fractions, or the counts do not
        add up to the dataset's length.

    Examples
    --------
    >>> import difflab as dl
    >>> train, test = random_split(range(10), [0.7, 0.3], generator=dl.Generator().manual_seed(0))
    >>> len(train), len(test), sorted(list(train) + list(test)) == list(range(10))
    (7, 3, True)
    >>> [len(piece) for piece in random_split(range(10), [0.33, 0.33, 0.34])]
    [4, 3, 3]
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
    yields, in order (there is no sampler and no ``shuffle``).  ``a + b`` is
    ``ChainDataset([a, b])``.

    A subclass takes what it needs.

    Raises
    ------
    TypeError
        On indexing, or on ``len()`` when the subclass defines no ``__len__``.
    NotImplementedError
        When iterated without a subclass's ``__iter__``.

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
    """Several iterable datasets one after another (a stream of streams).

    Parameters
    ----------
    datasets : sequence of iterables
        Iterated in order; the length is the sum of theirs when they have one.

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
    """Datasets of the same length side by side: sample ``i`` gathers their samples ``i``.

    The samples form a tuple (datasets given by position) or a dict (by name).

    Parameters
    ----------
    *args : Dataset
        Datasets whose samples form a tuple.
    **kwargs : Dataset
        Or datasets by name, whose samples form a dict (not both kinds).

    Raises
    ------
    ValueError
        Without datasets, with both positional and keyword datasets, or when
        the lengths differ.

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
