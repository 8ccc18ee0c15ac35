"""``DataLoader``: batches from a dataset, shuffled with a seeded generator if asked."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from difflab import backend
from difflab import random as _random
from difflab.data.dataset import Dataset, IterableDataset
from difflab.tensor import Tensor


def default_collate(batch: Sequence[Any]) -> Any:
    """Stack a list of samples into a batch, keeping the structure of one sample.

    Tensors and NumPy arrays are stacked along a new first dimension; Python
    ints become an int64 tensor, floats a tensor of the default dtype, bools a
    bool tensor; strings stay a list; tuples, lists and dicts are collated field
    by field (a namedtuple stays that namedtuple).

    Parameters
    ----------
    batch : sequence
        The samples, all of the same structure.

    Returns
    -------
    Any
        The batch: a tensor, or the samples' structure with batched fields.

    Raises
    ------
    RuntimeError
        If tuple or list samples have different lengths.
    TypeError
        For a type it does not know how to batch (pass a ``collate_fn``).

    Examples
    --------
    >>> import difflab as dl
    >>> default_collate([(dl.ones(2), 1), (dl.zeros(2), 0)])
    (tensor([[1., 1.],
            [0., 0.]]), tensor([1, 0]))
    >>> default_collate([{"a": 1.5}, {"a": 2.0}])
    {'a': tensor([1.5, 2. ])}
    """
    first = batch[0]
    if isinstance(first, Tensor):
        xp = backend.array_module(first.array)
        return Tensor._wrap(xp.stack([b.array for b in batch]))
    if isinstance(first, np.ndarray):
        return Tensor._wrap(np.stack(batch))
    if isinstance(first, bool):
        return Tensor._wrap(np.array(batch, dtype=bool))
    if isinstance(first, int):
        return Tensor._wrap(np.array(batch, dtype=np.int64))
    if isinstance(first, float):
        from difflab.dtypes import _Defaults

        return Tensor._wrap(np.array(batch, dtype=_Defaults.dtype))
    if isinstance(first, (str, bytes)):
        return list(batch)
    if isinstance(first, dict):
        return {key: default_collate([b[key] for b in batch]) for key in first}
    if isinstance(first, (tuple, list)):
        if any(len(b) != len(first) for b in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        fields = [default_collate(list(field)) for field in zip(*batch)]
        if isinstance(first, tuple) and hasattr(first, "_fields"):  # a namedtuple stays one
            return type(first)(*fields)
        return tuple(fields) if isinstance(first, tuple) else fields
    raise TypeError(f"default_collate: don't know how to batch {type(first).__name__}")


class DataLoader:
    """Iterate over ``dataset`` in batches, shuffled each epoch if asked.

    Each epoch draws indices (in order, shuffled, or from a sampler), groups them
    into batches of ``batch_size``, fetches the samples and stacks them with
    ``collate_fn``.  A dataset with ``get_batch`` (:class:`TensorDataset`,
    :class:`Digits`) is asked for the whole batch at once.  Loading happens in
    the main process.

    Parameters
    ----------
    dataset : Dataset or IterableDataset
        Where the samples come from.
    batch_size : int or None, default 1
        Samples per batch; None yields the samples one at a time, not stacked (each
        through ``collate_fn``, or :func:`default_convert`: NumPy arrays become tensors).
    shuffle : bool, default False
        A new random order every epoch (from ``generator``, or the global
        generator that ``dl.manual_seed`` seeds).
    sampler : iterable of int, optional
        The indices to read instead of 0..n-1 or a shuffle (a :class:`RandomSampler`,
        a :class:`DistributedSampler`...).  Read lazily, one batch at a time.
    batch_sampler : iterable of lists of int, optional
        One list of indices per batch; excludes ``batch_size``, ``shuffle``,
        ``sampler`` and ``drop_last``.
    num_workers : int, default 0
        Accepted for PyTorch compatibility; loading stays in the main process.
    collate_fn : callable, optional
        Turns a list of samples into a batch (:func:`default_collate` by default).
    drop_last : bool, default False
        Skip the last batch if it is smaller than ``batch_size``.
    generator : difflab.Generator, optional
        The source of the shuffle.
    **kwargs
        Other PyTorch options (``pin_memory``, ...) are accepted and ignored.

    Raises
    ------
    ValueError
        For a non-positive ``batch_size``, ``sampler`` with ``shuffle``,
        ``batch_sampler`` with the options it excludes, or an IterableDataset with
        ``shuffle``, ``sampler`` or ``batch_sampler``.

    See Also
    --------
    TensorDataset, RandomSampler, BatchSampler

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.utils.data import TensorDataset
    >>> ds = TensorDataset(dl.arange(10.0).reshape(5, 2), dl.arange(5))
    >>> loader = DataLoader(ds, batch_size=2, shuffle=True, generator=dl.Generator().manual_seed(0))
    >>> len(loader)
    3
    >>> [tuple(x.shape) for x, y in loader]
    [(2, 2), (2, 2), (1, 2)]
    >>> sorted(int(i) for _, y in loader for i in y)
    [0, 1, 2, 3, 4]
    """

    def __init__(self, dataset: Dataset, batch_size: int | None = 1, shuffle: bool = False,
                 sampler: Any = None, batch_sampler: Any = None, num_workers: int = 0,
                 collate_fn: Callable | None = None, drop_last: bool = False,
                 generator: Any = None, **_ignored: Any) -> None:
        if batch_size is not None and (not isinstance(batch_size, int) or batch_size < 1):
            raise ValueError(f"batch_size should be a positive integer, got {batch_size!r}")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if isinstance(dataset, IterableDataset) and (shuffle or sampler is not None
                                                     or batch_sampler is not None):
            raise ValueError(
                "DataLoader with IterableDataset: expected unspecified shuffle, sampler and "
                "batch_sampler options (a stream is read in its own order; shuffle inside "
                "the dataset's __iter__)"
            )
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None
                                          or drop_last):
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                             "shuffle, sampler, and drop_last")
        self.dataset, self.batch_size, self.shuffle = dataset, batch_size, shuffle
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self.collate_fn = collate_fn
        self.drop_last, self.generator = drop_last, generator
        self.num_workers = num_workers

    def _indices(self) -> Iterator[int]:
        if isinstance(self.dataset, IterableDataset):
            return iter(self.dataset)  # (the samples themselves, see __iter__)
        if self.sampler is not None:
            return iter(self.sampler)
        n = len(self.dataset)
        if self.shuffle:
            return iter(_random.permutation(n, self.generator).tolist())
        return iter(range(n))

    def _batches(self) -> Iterator[list]:
        """Lists of indices, one per batch, read from the sampler as they are needed."""
        if self.batch_sampler is not None:
            yield from self.batch_sampler
            return
        batch: list = []
        for i in self._indices():
            batch.append(i)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __iter__(self) -> Iterator[Any]:
        collate = self.collate_fn or default_collate
        # (unbatched, each sample goes through collate_fn, or default_convert: PyTorch's rule)
        convert = self.collate_fn or default_convert
        if isinstance(self.dataset, IterableDataset):  # the batches hold samples, not indices
            if self.batch_size is None:
                for sample in self.dataset:
                    yield convert(sample)
                return
            for samples in self._batches():
                yield collate(samples)
            return
        if self.batch_size is None and self.batch_sampler is None:
            for i in self._indices():
                yield convert(self.dataset[i])
            return
        fast = self.collate_fn is None and hasattr(self.dataset, "get_batch")
        for batch in self._batches():
            if fast:
                yield self.dataset.get_batch(batch)
            else:
                yield collate([self.dataset[i] for i in batch])

    def __len__(self) -> int:
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        n = len(self.sampler) if self.sampler is not None else len(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


def default_convert(data: Any) -> Any:
    """NumPy arrays and numbers to tensors, inside lists, tuples and dicts; the rest unchanged.

    This is what a PyTorch DataLoader with ``batch_size=None`` applies to each sample.

    Parameters
    ----------
    data : Any
        A sample: an array, a number, or a (nested) list, tuple, namedtuple or dict of them.

    Returns
    -------
    Any
        The same structure, with numeric arrays as tensors (their dtype kept).

    Examples
    --------
    >>> import numpy as np
    >>> default_convert({"x": np.array([1.0, 2.0]), "name": "a"})
    {'x': tensor([1., 2.], dtype=difflab.float64), 'name': 'a'}
    """
    if isinstance(data, np.ndarray) and data.dtype.kind in "biufc":
        return Tensor._wrap(data)
    if isinstance(data, np.generic) and data.dtype.kind in "biufc":
        return Tensor._wrap(np.asarray(data))
    if isinstance(data, dict):
        return {key: default_convert(value) for key, value in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (list, tuple)):
        return type(data)(default_convert(d) for d in data)
    return data


def get_worker_info() -> None:
    """Information about the loader worker process running this code: always None.

    PyTorch returns None in the main process; difflab's DataLoader loads in the
    main process whatever ``num_workers`` says, so an ``IterableDataset`` that
    splits its work by worker sees one worker.

    Returns
    -------
    None

    Examples
    --------
    >>> get_worker_info() is None
    True
    """
    return None
