"""``difflab.cuda``: the questions PyTorch users ask of ``torch.cuda``.

All of them answer without error on a machine with no GPU or no CuPy
(``is_available()`` is then False and ``device_count()`` is 0), except those
that need a device to answer, which raise a RuntimeError saying how to
install the GPU extra.  The ones PyTorch makes silent no-ops without a GPU
(seeding, ``empty_cache``, the memory counters) are no-ops here too, so a
program written for a GPU runs unchanged on a laptop.

Random numbers: difflab draws every random tensor, on either device, from the
CPU generators of :mod:`difflab.random` (then moves it), so there is no
separate CUDA stream: ``cuda.manual_seed`` and ``manual_seed_all`` have
nothing to seed, and ``difflab.manual_seed`` alone makes a GPU run
repeatable.  ``difflab.cuda.amp`` holds PyTorch's older spelling of
:mod:`difflab.amp` (``import difflab`` loads it: it imports difflab.amp, which
asks this module whether CUDA is available, so this module does not import it).
"""

from __future__ import annotations

from difflab import backend


def is_available() -> bool:
    """True when CuPy is installed and sees at least one CUDA device."""
    return backend._load_cupy() is not None


def device_count() -> int:
    """Number of CUDA devices CuPy can see (0 without CuPy)."""
    cp = backend._load_cupy()
    return 0 if cp is None else int(cp.cuda.runtime.getDeviceCount())


def current_device() -> int:
    """Index of the current CUDA device."""
    return int(backend.cupy_or_raise().cuda.runtime.getDevice())


def get_device_name(index: int = 0) -> str:
    """The device's marketing name, e.g. ``'NVIDIA H100 80GB HBM3'``."""
    cp = backend.cupy_or_raise()
    name = cp.cuda.runtime.getDeviceProperties(index)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def synchronize(device: int | None = None) -> None:
    """Wait until every kernel queued on the device has finished (for honest timings)."""
    cp = backend.cupy_or_raise()
    if device is None:
        cp.cuda.Device().synchronize()
    else:
        cp.cuda.Device(device).synchronize()


class device:  # noqa: N801  (torch.cuda.device is a lower-case context manager)
    """Context manager that makes CUDA device ``index`` current."""

    def __init__(self, index: int):
        self.index = index
        self._ctx = None

    def __enter__(self) -> device:
        self._ctx = backend.cupy_or_raise().cuda.Device(self.index)
        self._ctx.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._ctx.__exit__(*exc)

    def __repr__(self) -> str:
        return f"<difflab.cuda.device index={self.index}>"


# ---------------------------------------------------------------------------------------
# breadth (issue 27): what PyTorch's torch.cuda answers without a GPU, as silent no-ops.


def is_initialized() -> bool:
    """Whether a CUDA device is in use (``is_available()``: CuPy starts it on import).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.cuda.is_initialized() == dl.cuda.is_available()
    True
    """
    return is_available()


def manual_seed(seed: int) -> None:
    """Seed the current GPU's generator: nothing to do in difflab (see the module docstring).

    PyTorch queues the seed until CUDA starts, so the call never fails; here
    GPU tensors draw from the default generator, which :func:`difflab.random.manual_seed`
    seeds.  The seed is still checked, as PyTorch checks it.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.cuda.manual_seed(0)       # no error without a GPU, as in PyTorch
    """
    from difflab.random import _check_seed

    _check_seed(seed)


def manual_seed_all(seed: int) -> None:
    """Seed every GPU's generator: as :func:`manual_seed`, nothing to do in difflab.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.cuda.manual_seed_all(42)
    """
    manual_seed(seed)


def seed() -> None:
    """Seed the current GPU's generator from the clock: nothing to do (see :func:`manual_seed`).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.cuda.seed()
    """


def seed_all() -> None:
    """Seed every GPU's generator from the clock: nothing to do (see :func:`manual_seed`).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.cuda.seed_all()
    """


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

