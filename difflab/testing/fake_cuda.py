"""The CuPy stand-in's ``cupy.cuda``: one device, its runtime errors, streams and events,
the memory pool, and CUDA graphs.

Part of :mod:`difflab.testing.fake_cupy` (read that first): what it needs of
``cupy.cuda``.  The device is device 0, the only one (``Device(1)`` raises as a
missing GPU does).

A stand-in cannot record kernels, so ``cuda.graph_of(work)`` (not a CuPy name)
gives a graph whose ``launch()`` runs ``work`` again, on the same arrays, as a
recorded graph would (:mod:`difflab.jit.cuda_graphs`).  While it runs, what a
capturing stream refuses is refused: every copy between host and device
(``CUDARuntimeError``), and a matrix product (``matmul``, ``dot``,
``tensordot``, ``einsum``: cuBLAS's), with CuPy's own ``NotImplementedError``,
since CuPy does not record cuBLAS calls in a graph.
"""

from __future__ import annotations

import time
import types
from typing import Any

__all__ = ["CUDARuntimeError", "DEVICE_NAME", "Device", "Event", "MemoryPool", "Stream",
           "cuda", "refuse_while_capturing",
           "refuse_blas_while_capturing"]

DEVICE_NAME = "CuPy stand-in on the CPU (difflab.testing.fake_cupy)"


class CUDARuntimeError(RuntimeError):
    """``cupy.cuda.runtime.CUDARuntimeError``: what the CUDA runtime refused.

    Examples
    --------
    >>> from difflab.testing.fake_cuda import cuda
    >>> cuda.Device(1).use()
    Traceback (most recent call last):
    ...
    difflab.testing.fake_cuda.CUDARuntimeError: cudaErrorInvalidDevice: invalid device ordinal
    """


class Device:
    """``cupy.cuda.Device``: a context manager that makes a device current."""

    _stack: list[int] = [0]

    def __init__(self, device: Any = None) -> None:
        self.id = Device._stack[-1] if device is None else int(getattr(device, "id", device))

    def _check(self) -> None:
        if self.id != 0:
            raise CUDARuntimeError("cudaErrorInvalidDevice: invalid device ordinal")

    def use(self) -> None:
        self._check()
        Device._stack[-1] = self.id

    def __enter__(self) -> Device:
        self._check()
        Device._stack.append(self.id)
        return self

    def __exit__(self, *exc: object) -> None:
        Device._stack.pop()

    def synchronize(self) -> None:
        """Nothing runs asynchronously on the CPU."""

    @property
    def compute_capability(self) -> str:
        return "90"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    def __int__(self) -> int:
        return self.id

    def __repr__(self) -> str:
        return f"<CUDA Device {self.id}>"


# --------------------------------------------------------------------------- CUDA graphs

_running_graphs: list = []  # the stand-in graphs being launched (host copies refused)


def refuse_while_capturing() -> None:
    """A capturing stream refuses copies between host and device: so does a stand-in graph."""
    if _running_graphs:
        raise CUDARuntimeError("cudaErrorStreamCaptureUnsupported: operation not permitted "
                                "when stream is capturing")


# What CuPy computes with cuBLAS, whose calls it refuses to record in a CUDA graph.
_CUBLAS = {"matmul", "dot", "vdot", "inner", "tensordot", "einsum"}


def refuse_blas_while_capturing(name: str) -> None:
    """CuPy does not record cuBLAS calls in a graph: nor does a stand-in graph (``name``:
    the NumPy function about to run)."""
    if _running_graphs and name in _CUBLAS:
        raise NotImplementedError("calling cuBLAS API during stream capture is currently "
                                  "unsupported")


class _Graph:
    """A stand-in CUDA graph: ``launch`` runs the recorded work again, on the same arrays."""

    def __init__(self, work: Any) -> None:
        self._work = work

    def launch(self, stream: Any = None) -> None:
        _running_graphs.append(self)
        try:
            self._work()
        finally:
            _running_graphs.pop()


# --------------------------------------------------------------------------- streams, events

class Stream:
    """``cupy.cuda.Stream``: on the CPU nothing is queued, so every stream is done."""

    def __init__(self, null: bool = False, non_blocking: bool = False, ptds: bool = False
                 ) -> None:
        Stream._count += 1
        self.ptr = 0 if null else Stream._count

    _count = 0
    done = True

    def synchronize(self) -> None:
        """Nothing runs asynchronously on the CPU."""

    def wait_event(self, event: Event) -> None:
        """Nothing to wait for."""

    def record(self, event: Event | None = None) -> Event:
        event = Event() if event is None else event
        event.record(self)
        return event

    def __enter__(self) -> Stream:
        Stream._current.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        Stream._current.pop()

    _current: list = []


Stream.null = Stream(null=True)


class Event:
    """``cupy.cuda.Event``: recorded at once, with the host's clock."""

    def __init__(self, block: bool = False, disable_timing: bool = False,
                 interprocess: bool = False) -> None:
        self.disable_timing, self.moment = disable_timing, None

    done = True

    def record(self, stream: Any = None) -> None:
        self.moment = time.perf_counter()

    def synchronize(self) -> None:
        """Recorded already: nothing runs asynchronously on the CPU."""


def _elapsed_time(start: Event, end: Event) -> float:
    """``cupy.cuda.get_elapsed_time``: milliseconds between two recorded events."""
    if start.disable_timing or end.disable_timing or start.moment is None or end.moment is None:
        raise CUDARuntimeError("cudaErrorInvalidResourceHandle: invalid resource handle")
    return (end.moment - start.moment) * 1e3


# --------------------------------------------------------------------------- memory

TOTAL_MEMORY = 16 * 2**30  # (the pretend device's memory)


class OutOfMemoryError(MemoryError):
    """``cupy.cuda.memory.OutOfMemoryError``."""


class MemoryPool:
    """``cupy.cuda.MemoryPool``: its counts are the bytes of the device arrays alive
    (``live_bytes``, given by the stand-in), all of them in use, none cached."""

    def __init__(self, live_bytes: Any) -> None:
        self._live_bytes, self.limit = live_bytes, None

    def used_bytes(self) -> int:
        return self._live_bytes()

    total_bytes = used_bytes

    def free_all_blocks(self) -> None:
        """Nothing is cached."""

    def set_limit(self, size: int | None = None, fraction: float | None = None) -> None:
        self.limit = size if fraction is None else int(fraction * TOTAL_MEMORY)

    def malloc(self, size: int) -> None:
        """The stand-in's arrays are NumPy's: nothing to allocate here."""


_allocator: list = [None]


# --------------------------------------------------------------------------- cupy.cuda

# cupy.cuda: one device, device 0.
cuda = types.ModuleType("difflab.testing.fake_cupy.cuda", "The one (pretend) CUDA device.")
cuda.Device = Device
cuda.graph_of = _Graph
cuda.Stream, cuda.Event, cuda.get_elapsed_time = Stream, Event, _elapsed_time
cuda.get_current_stream = lambda: Stream._current[-1] if Stream._current else Stream.null
cuda.set_allocator = lambda allocator=None: _allocator.__setitem__(0, allocator)
cuda.memory = types.ModuleType("difflab.testing.fake_cupy.cuda.memory")
cuda.memory.OutOfMemoryError = OutOfMemoryError
cuda.runtime = types.ModuleType("difflab.testing.fake_cupy.cuda.runtime")
cuda.runtime.CUDARuntimeError = CUDARuntimeError
cuda.runtime.getDeviceCount = lambda: 1
cuda.runtime.getDevice = lambda: Device._stack[-1]
cuda.runtime.getDeviceProperties = lambda index: {
    "name": DEVICE_NAME.encode(), "totalGlobalMem": TOTAL_MEMORY, "major": 9, "minor": 0,
    "multiProcessorCount": 132}
