"""GPU memory: what ``torch.cuda``'s memory functions report, from CuPy's memory pool.

CuPy keeps the GPU memory that arrays give back in a *pool*, for the next
array of that size (asking the driver for memory is slow), as PyTorch's
caching allocator does.  So "allocated" (held by tensors now) and "reserved"
(held by the pool, in use or cached) differ, and ``empty_cache`` hands the
cached part back.

CuPy's pool does not keep the *peak* in use.  The first call of
:func:`max_memory_allocated`, :func:`max_memory_reserved` or
:func:`reset_peak_memory_stats` puts a counter in front of the pool
(``cupy.cuda.set_allocator``): from then on every allocation updates the
peaks (about a microsecond each).  So the peak counts from that first call:
call ``reset_peak_memory_stats()`` before the code to measure, as PyTorch's
documentation advises anyway.  Without a GPU every count is 0, as in PyTorch.
"""

from __future__ import annotations

from typing import Any

from difflab import backend

__all__ = ["empty_cache", "memory_allocated", "memory_reserved", "max_memory_allocated",
           "max_memory_reserved", "reset_peak_memory_stats", "reset_max_memory_allocated",
           "mem_get_info", "set_per_process_memory_fraction"]


def _memory_pool():  # noqa: ANN202  (CuPy's pool, or None without a GPU)
    cp = backend._load_cupy()
    return None if cp is None else cp.get_default_memory_pool()


def empty_cache() -> None:
    """Give the GPU memory that CuPy keeps for reuse back to the driver (no-op without a GPU).

    Tensors in use are untouched; only cached blocks are freed, so other
    programs (``nvidia-smi``) see the memory as free.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.cuda.empty_cache()
    """
    pool = _memory_pool()
    if pool is not None:
        pool.free_all_blocks()


def memory_allocated(device: int | None = None) -> int:
    """Bytes of GPU memory held by tensors now (0 without a GPU, as in PyTorch).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.cuda.memory_allocated() if dl.cuda.is_available() else 0
    0
    """
    pool = _memory_pool()
    return 0 if pool is None else int(pool.used_bytes())


def memory_reserved(device: int | None = None) -> int:
    """Bytes of GPU memory held by the allocator, in use or cached (0 without a GPU).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.cuda.memory_reserved() >= dl.cuda.memory_allocated()
    True
    """
    pool = _memory_pool()
    return 0 if pool is None else int(pool.total_bytes())


class _Peaks:
    """The largest bytes in use and held since the last reset: an allocator in front of
    CuPy's pool, which asks it for every block and notes the pool's counts after."""

    def __init__(self, pool: Any) -> None:
        self.pool = pool
        self.reset()

    def reset(self) -> None:
        self.used, self.held = int(self.pool.used_bytes()), int(self.pool.total_bytes())

    def malloc(self, size: int) -> Any:
        memory = self.pool.malloc(size)
        self.update()
        return memory

    def update(self) -> _Peaks:
        """The peaks with the pool's counts now taken in (they were noted at the last
        block asked for; what was freed since lowers nothing)."""
        self.used = max(self.used, int(self.pool.used_bytes()))
        self.held = max(self.held, int(self.pool.total_bytes()))
        return self


_peaks: _Peaks | None = None


def _counting() -> _Peaks | None:
    """The peak counter, put in front of CuPy's pool on first use (None without a GPU)."""
    global _peaks
    pool = _memory_pool()
    if pool is None:
        return None
    if _peaks is None or _peaks.pool is not pool:
        _peaks = _Peaks(pool)
        backend.cupy_or_raise().cuda.set_allocator(_peaks.malloc)
    return _peaks


def max_memory_allocated(device: int | None = None) -> int:
    """The most bytes held by tensors at once since :func:`reset_peak_memory_stats`.

    Counted from the first call of this function or of the reset (see the
    module docstring); 0 without a GPU.

    Parameters
    ----------
    device : int, optional
        Accepted for PyTorch's signature (the current device).

    Returns
    -------
    int

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.testing import fake_cupy
    >>> with fake_cupy.installed():
    ...     dl.cuda.reset_peak_memory_stats()
    ...     x = dl.zeros(1000, device="cuda")
    ...     dl.cuda.max_memory_allocated() >= 4000      # 1000 float32
    True
    """
    peaks = _counting()
    return 0 if peaks is None else peaks.update().used


def max_memory_reserved(device: int | None = None) -> int:
    """The most bytes held by the allocator at once since :func:`reset_peak_memory_stats`.

    Parameters
    ----------
    device : int, optional
        Accepted for PyTorch's signature (the current device).

    Returns
    -------
    int
        0 without a GPU.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.cuda.max_memory_reserved() >= dl.cuda.memory_reserved()
    True
    """
    peaks = _counting()
    return 0 if peaks is None else peaks.update().held


def reset_peak_memory_stats(device: int | None = None) -> None:
    """Start the peaks of :func:`max_memory_allocated` and :func:`max_memory_reserved` again
    from the counts now (a no-op without a GPU, where PyTorch's raises).

    Parameters
    ----------
    device : int, optional
        Accepted for PyTorch's signature (the current device).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.cuda.reset_peak_memory_stats()
    >>> dl.cuda.max_memory_allocated() == dl.cuda.memory_allocated()
    True
    """
    peaks = _counting()
    if peaks is not None:
        peaks.reset()


def reset_max_memory_allocated(device: int | None = None) -> None:
    """PyTorch's older name of :func:`reset_peak_memory_stats`.

    Parameters
    ----------
    device : int, optional
        Accepted for PyTorch's signature.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.cuda.reset_max_memory_allocated()
    """
    reset_peak_memory_stats(device)


def mem_get_info(device: int | None = None) -> tuple[int, int]:
    """(free, total) bytes of the device's memory, as the driver reports them.

    Memory that CuPy's pool caches counts as used here (the driver lent it).

    Parameters
    ----------
    device : int, optional
        Accepted for PyTorch's signature (the current device).

    Returns
    -------
    tuple of int

    Raises
    ------
    RuntimeError
        Without a GPU, saying how to install one (PyTorch raises too).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.testing import fake_cupy
    >>> with fake_cupy.installed():
    ...     free, total = dl.cuda.mem_get_info()
    ...     0 <= free <= total
    True
    """
    free, total = backend.cupy_or_raise().cuda.runtime.memGetInfo()
    return int(free), int(total)


def set_per_process_memory_fraction(fraction: float, device: int | None = None) -> None:
    """Let CuPy's pool hold at most ``fraction`` of the device's memory.

    An allocation past the limit raises ``OutOfMemoryError``, as in PyTorch.

    Parameters
    ----------
    fraction : float
        In ``[0, 1]``.
    device : int, optional
        Accepted for PyTorch's signature (the current device).

    Raises
    ------
    ValueError
        If ``fraction`` is outside ``[0, 1]``.
    RuntimeError
        Without a GPU, saying how to install one.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.cuda.set_per_process_memory_fraction(1.5)
    Traceback (most recent call last):
    ...
    ValueError: set_per_process_memory_fraction: fraction must lie in [0, 1], got 1.5
    """
    if not 0.0 <= float(fraction) <= 1.0:
        raise ValueError(f"set_per_process_memory_fraction: fraction must lie in [0, 1], "
                         f"got {fraction}")
    backend.cupy_or_raise()
    _memory_pool().set_limit(fraction=float(fraction))
