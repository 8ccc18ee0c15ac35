"""Making tensors: ``tensor``, ``zeros``, ``arange``, ``randn``, ... (PyTorch's names)."""

from __future__ import annotations

from typing import Any

import numpy as np

from difflab import backend, random
from difflab.dtypes import _Defaults, int64
from difflab.tensor import Tensor
from difflab.tensor_arguments import shape_args, to_array


def _finish(array: Any, device: Any, requires_grad: bool) -> Tensor:
    if device is not None:
        array = backend.to_device(array, backend.device(device))
    t = Tensor._wrap(array)
    if requires_grad:
        t.requires_grad = True
    return t


def _float(dtype: Any) -> np.dtype:
    return _Defaults.dtype if dtype is None else np.dtype(dtype)


def tensor(data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
           ) -> Tensor:
    """A new tensor with a *copy* of ``data`` (numbers, nested lists, an array or a tensor).

    Python floats become float32 (the default dtype), ints int64; a NumPy
    array keeps its dtype.
    """
    array = to_array(data, dtype)
    array = array.copy() if isinstance(data, (np.ndarray, Tensor)) else array
    return _finish(array, device, requires_grad)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """A tensor that shares memory with ``data`` when it can (a NumPy array of the right dtype)."""
    if isinstance(data, Tensor) and dtype is None and device is None:
        return data
    return _finish(to_array(data, dtype), device, False)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor that *shares memory* with a NumPy array: changing one changes the other."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy expects a numpy.ndarray, got {type(array).__name__}")
    return Tensor._wrap(array)


def zeros(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
          ) -> Tensor:
    """A tensor of zeros of shape ``size``."""
    return _finish(np.zeros(shape_args(size), _float(dtype)), device, requires_grad)


def ones(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
         ) -> Tensor:
    """A tensor of ones of shape ``size``."""
    return _finish(np.ones(shape_args(size), _float(dtype)), device, requires_grad)


def full(size: Any, fill_value: Any, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """A tensor of shape ``size`` filled with ``fill_value``."""
    if dtype is None:
        dtype = np.asarray(fill_value).dtype
        dtype = _Defaults.dtype if dtype.kind == "f" else int64 if dtype.kind in "iu" else dtype
    return _finish(np.full(shape_args((size,)), fill_value, dtype), device, requires_grad)


def empty(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
          ) -> Tensor:
    """An uninitialised tensor (here: zeros, so results never depend on stale memory)."""
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def eye(n: int, m: int | None = None, dtype: Any = None, device: Any = None,
        requires_grad: bool = False) -> Tensor:
    """The identity matrix (n × m)."""
    return _finish(np.eye(n, m, dtype=_float(dtype)), device, requires_grad)


def arange(start: Any, end: Any = None, step: Any = 1, dtype: Any = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """Values from ``start`` up to, not including, ``end`` in steps of ``step``."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueError("arange: step must be nonzero")
    is_float = any(isinstance(v, float) for v in (start, end, step))
    dtype = (_Defaults.dtype if is_float else int64) if dtype is None else dtype
    return _finish(np.arange(start, end, step).astype(dtype), device, requires_grad)


def range(start: Any, end: Any, step: Any = 1, dtype: Any = None, device: Any = None,  # noqa: A001
          requires_grad: bool = False) -> Tensor:
    """Like :func:`arange` but *including* ``end`` (deprecated in PyTorch; float by default)."""
    count = int(np.floor((end - start) / step)) + 1
    values = start + step * np.arange(count)
    return _finish(values.astype(_float(dtype)), device, requires_grad)


def linspace(start: float, end: float, steps: int, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    return _finish(np.linspace(start, end, steps).astype(_float(dtype)), device, requires_grad)


def logspace(start: float, end: float, steps: int, base: float = 10.0, dtype: Any = None,
             device: Any = None) -> Tensor:
    """``steps`` values from base**start to base**end, evenly spaced in the exponent."""
    return _finish(np.logspace(start, end, steps, base=base).astype(_float(dtype)), device, False)


def rand(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
         generator: random.Generator | None = None) -> Tensor:
    """Uniform random numbers in [0, 1)."""
    array = random.uniform_array(0.0, 1.0, shape_args(size), _float(dtype), None, generator)
    return _finish(array, device, requires_grad)


def randn(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          generator: random.Generator | None = None) -> Tensor:
    """Standard normal random numbers (mean 0, variance 1)."""
    array = random.normal_array(0.0, 1.0, shape_args(size), _float(dtype), None, generator)
    return _finish(array, device, requires_grad)


def randint(low: int, high: int | None = None, size: Any = None, dtype: Any = None,
            device: Any = None, generator: random.Generator | None = None) -> Tensor:
    """Random integers in [low, high); ``randint(high, size)`` starts at 0."""
    if size is None:
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint needs a size, e.g. randint(0, 10, (3,))")
    array = random.integers_array(low, high, shape_args((size,)), dtype or int64, None,
                                  generator)
    return _finish(array, device, False)


def randperm(n: int, dtype: Any = None, device: Any = None,
             generator: random.Generator | None = None) -> Tensor:
    """A random permutation of 0 .. n-1."""
    return _finish(random.permutation(n, generator).astype(dtype or int64), device, False)


def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, dtype: Any = None,
           device: Any = None, generator: random.Generator | None = None) -> Tensor:
    """Normal random numbers with the given mean and standard deviation (numbers or tensors)."""
    mean_a = mean.array if isinstance(mean, Tensor) else mean
    std_a = std.array if isinstance(std, Tensor) else std
    if size is None:
        size = np.broadcast_shapes(np.shape(mean_a), np.shape(std_a))
    size = shape_args((size,))
    array = random._rng(generator).normal(mean_a, std_a, size=size)
    return _finish(array.astype(_float(dtype)), device, False)


def _like(t: Tensor, dtype: Any) -> tuple:
    return t.shape, (t.dtype if dtype is None else dtype), t.device


def zeros_like(t: Tensor, dtype: Any = None, device: Any = None, requires_grad: bool = False
               ) -> Tensor:
    """Zeros with ``t``'s shape, dtype and device."""
    shape, dtype, dev = _like(t, dtype)
    return zeros(shape, dtype=dtype, device=device or dev, requires_grad=requires_grad)


def ones_like(t: Tensor, dtype: Any = None, device: Any = None, requires_grad: bool = False
              ) -> Tensor:
    """Ones with ``t``'s shape, dtype and device."""
    shape, dtype, dev = _like(t, dtype)
    return ones(shape, dtype=dtype, device=device or dev, requires_grad=requires_grad)


def full_like(t: Tensor, fill_value: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """``fill_value`` with ``t``'s shape, dtype and device."""
    shape, dtype, dev = _like(t, dtype)
    return full(shape, fill_value, dtype=dtype, device=device or dev)


def empty_like(t: Tensor, dtype: Any = None, device: Any = None) -> Tensor:
    return zeros_like(t, dtype, device)


def rand_like(t: Tensor, dtype: Any = None, device: Any = None) -> Tensor:
    shape, dtype, dev = _like(t, dtype)
    return rand(shape, dtype=dtype, device=device or dev)


def randn_like(t: Tensor, dtype: Any = None, device: Any = None) -> Tensor:
    shape, dtype, dev = _like(t, dtype)
    return randn(shape, dtype=dtype, device=device or dev)


def randint_like(t: Tensor, low: int, high: int | None = None, dtype: Any = None) -> Tensor:
    if high is None:
        low, high = 0, low
    return randint(low, high, t.shape, dtype=dtype or t.dtype, device=t.device)
