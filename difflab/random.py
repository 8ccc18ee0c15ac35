"""Random numbers: one seeded NumPy generator (and CuPy's, on the GPU)."""

from __future__ import annotations

from typing import Any

import numpy as np

from difflab import backend


class _State:
    generator = np.random.default_rng(0)
    seed = 0


def manual_seed(seed: int) -> Generator:
    """Seed every random function of difflab (and CuPy's generator, if loaded)."""
    _State.generator = np.random.default_rng(seed)
    _State.seed = seed
    if backend._cupy is not None:
        backend._cupy.random.seed(seed)
    return Generator().manual_seed(seed)


def initial_seed() -> int:
    return _State.seed


class Generator:
    """A seeded source of random numbers, e.g. for ``DataLoader(shuffle=True, generator=g)``."""

    def __init__(self, device: Any = "cpu") -> None:
        self.rng = np.random.default_rng()
        self._seed: int | None = None

    def manual_seed(self, seed: int) -> Generator:
        self.rng = np.random.default_rng(seed)
        self._seed = seed
        return self

    def initial_seed(self) -> int | None:
        return self._seed


def _rng(generator: Generator | None) -> np.random.Generator:
    return _State.generator if generator is None else generator.rng


def _place(array: np.ndarray, dtype: Any, device: Any) -> Any:
    array = array.astype(dtype, copy=False)
    if device is not None and backend.Device(device).type == "cuda":
        array = backend.to_device(array, backend.device(device))
    return array


def normal_array(mean: float, std: float, shape: tuple, dtype: Any, device: Any = None,
                 generator: Generator | None = None) -> Any:
    return _place(_rng(generator).normal(mean, std, size=shape), dtype, device)


def uniform_array(low: float, high: float, shape: tuple, dtype: Any, device: Any = None,
                  generator: Generator | None = None) -> Any:
    return _place(_rng(generator).uniform(low, high, size=shape), dtype, device)


def integers_array(low: int, high: int, shape: tuple, dtype: Any, device: Any = None,
                   generator: Generator | None = None) -> Any:
    return _place(_rng(generator).integers(low, high, size=shape), dtype, device)


def permutation(n: int, generator: Generator | None = None) -> np.ndarray:
    return _rng(generator).permutation(n)
