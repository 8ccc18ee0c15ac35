"""``difflab.cuda``: the questions PyTorch users ask of ``torch.cuda``.

All of them answer without error on a machine with no GPU or no CuPy
(``is_available()`` is then False and ``device_count()`` is 0), except those
that need a device to answer, which raise a RuntimeError saying how to
install the GPU extra.  The ones PyTorch makes silent no-ops without a GPU
(seeding, ``empty_cache``, the memory counters) are no-ops here too, so a
program written for a GPU runs unchanged on a laptop.  Events and streams, to
time GPU work, are in :mod:`difflab.cuda.streams`; the memory counters and
their peaks in :mod:`difflab.cuda.memory`; both are names of this module too.

Random numbers: difflab draws every random tensor, on either device, from the
CPU generators of :mod:`difflab.random` (then moves it), so there is no
separate CUDA stream: ``cuda.manual_seed`` and ``manual_seed_all`` have
nothing to seed, and ``difflab.manual_seed`` alone makes a GPU run
repeatable.  ``difflab.cuda.amp`` holds PyTorch's older spelling of
:mod:`difflab.amp` (``import difflab`` loads it: it imports difflab.amp, which
asks this module whether CUDA is available, so this module does not import it).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from difflab import backend
from difflab.cuda.memory import (
    empty_cache,
    max_memory_allocated,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_reserved,
    reset_max_memory_allocated,
    reset_peak_memory_stats,
    set_per_process_memory_fraction,
)
from difflab.cuda.streams import Event, Stream, current_stream, default_stream, stream

__all__ = [
    "is_available", "device_count", "current_device", "get_device_name", "synchronize",
    "device", "is_initialized", "manual_seed", "manual_seed_all", "seed", "seed_all",
    "get_device_properties", "get_device_capability", "set_device", "is_bf16_supported",
    "get_rng_state", "set_rng_state", "init", "ipc_collect",
    "empty_cache", "memory_allocated", "memory_reserved", "max_memory_allocated",
    "max_memory_reserved", "reset_peak_memory_stats", "reset_max_memory_allocated",
    "mem_get_info", "set_per_process_memory_fraction",
    "Event", "Stream", "current_stream", "default_stream", "stream",
]


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


class _CudaDeviceProperties(NamedTuple):
    """What :func:`get_device_properties` reports (PyTorch's names)."""

    name: str
    major: int
    minor: int
    total_memory: int
    multi_processor_count: int

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // 2**20}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def _index(device: Any) -> int:
    """A device index from ``0``, ``'cuda:1'``, ``dl.device('cuda', 1)`` or None (current)."""
    if device is None:
        return current_device()
    if isinstance(device, str) or hasattr(device, "type"):
        found = backend.device(device) if isinstance(device, str) else device
        if found.type != "cuda":
            raise ValueError(f"expected a CUDA device, got {device!r}")
        return current_device() if found.index is None else int(found.index)
    return int(device)


def get_device_properties(device: Any = None) -> _CudaDeviceProperties:
    """The device's name, compute capability, memory and multiprocessors.

    Parameters
    ----------
    device : int, str or device, optional
        The device (the current one if None).

    Returns
    -------
    _CudaDeviceProperties
        With ``name``, ``major``, ``minor``, ``total_memory`` (bytes) and
        ``multi_processor_count``.

    Raises
    ------
    RuntimeError
        Without a GPU, saying how to install one (PyTorch raises too).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.testing import fake_cupy
    >>> with fake_cupy.installed():
    ...     p = dl.cuda.get_device_properties(0)
    ...     (p.major, p.minor), p.total_memory > 0
    ((9, 0), True)
    """
    index = _index(device)
    found = backend.cupy_or_raise().cuda.runtime.getDeviceProperties(index)
    name = found["name"]
    return _CudaDeviceProperties(name.decode() if isinstance(name, bytes) else str(name),
                                 int(found["major"]), int(found["minor"]),
                                 int(found["totalGlobalMem"]),
                                 int(found.get("multiProcessorCount", 0)))


def get_device_capability(device: Any = None) -> tuple[int, int]:
    """The device's compute capability (major, minor): (9, 0) for an H100.

    Parameters
    ----------
    device : int, str or device, optional
        The device (the current one if None).

    Returns
    -------
    tuple of int

    Raises
    ------
    RuntimeError
        Without a GPU, saying how to install one.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.testing import fake_cupy
    >>> with fake_cupy.installed():
    ...     dl.cuda.get_device_capability()
    (9, 0)
    """
    properties = get_device_properties(device)
    return properties.major, properties.minor


def set_device(device: Any) -> None:
    """Make ``device`` the current CUDA device (where ``'cuda'`` tensors go).

    Parameters
    ----------
    device : int, str or device

    Raises
    ------
    RuntimeError
        Without a GPU, or for a device that does not exist.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.testing import fake_cupy
    >>> with fake_cupy.installed():
    ...     dl.cuda.set_device("cuda:0"); dl.cuda.current_device()
    0
    """
    backend.cupy_or_raise().cuda.Device(_index(device)).use()


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether bfloat16 tensors work on the GPU: never here (CuPy has no bfloat16 dtype).

    difflab's bfloat16 (:mod:`difflab.amp`) computes on the CPU.

    Parameters
    ----------
    including_emulation : bool, default True
        Accepted for PyTorch's signature.

    Returns
    -------
    bool
        False.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.cuda.is_bf16_supported()
    False
    """
    return False


def get_rng_state(device: Any = None) -> Any:
    """The state of the generator GPU tensors draw from: the default generator's.

    difflab has no separate CUDA generator (see the module docstring), so this is
    :func:`difflab.get_rng_state`, and :func:`set_rng_state` puts it back.

    Parameters
    ----------
    device : int, str or device, optional
        Accepted for PyTorch's signature.

    Returns
    -------
    Tensor
        A uint8 tensor.

    Examples
    --------
    >>> import difflab as dl
    >>> state = dl.cuda.get_rng_state()
    >>> a = dl.rand(2); dl.cuda.set_rng_state(state); bool((dl.rand(2) == a).all())
    True
    """
    from difflab.random import get_rng_state as _get

    return _get()


def set_rng_state(new_state: Any, device: Any = None) -> None:
    """Put back a state from :func:`get_rng_state` (the default generator's).

    Parameters
    ----------
    new_state : Tensor
        From :func:`get_rng_state`.
    device : int, str or device, optional
        Accepted for PyTorch's signature.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.cuda.set_rng_state(dl.cuda.get_rng_state())
    """
    from difflab.random import set_rng_state as _set

    _set(new_state)


def init() -> None:
    """Start CUDA now rather than at the first GPU tensor (``torch.cuda.init``).

    Raises
    ------
    RuntimeError
        Without a GPU, saying how to install one (PyTorch raises too).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.testing import fake_cupy
    >>> with fake_cupy.installed():
    ...     dl.cuda.init()
    """
    backend.cupy_or_raise().cuda.Device().use()


def ipc_collect() -> None:
    """Free GPU memory shared with other processes that they released: nothing to do.

    difflab does not share GPU memory between processes.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.cuda.ipc_collect()
    """


class _OutOfMemoryWithoutGpu(RuntimeError):
    """What :data:`OutOfMemoryError` is without CuPy (nothing raises it then)."""


def __getattr__(name: str) -> Any:
    # OutOfMemoryError is CuPy's own class, looked up when first asked for, so that
    # ``except dl.cuda.OutOfMemoryError`` catches what CuPy raises (a MemoryError).
    if name == "OutOfMemoryError":
        cp = backend._load_cupy()
        return _OutOfMemoryWithoutGpu if cp is None else cp.cuda.memory.OutOfMemoryError
    raise AttributeError(f"module 'difflab.cuda' has no attribute {name!r}")
