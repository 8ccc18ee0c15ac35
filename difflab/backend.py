"""Array backends: NumPy on the CPU, CuPy on a CUDA GPU.

This is the only module of difflab that knows CuPy exists.  Everything else
asks an array for its module (:func:`array_module`) and calls ``xp.sin``,
``xp.matmul`` ... on it, so the same code runs on either backend.

CuPy is imported lazily, the first time a GPU is asked for, so that a machine
without it (or without a GPU) runs everything except the GPU.
"""

from __future__ import annotations

import ctypes
import os
import sys
import types
from typing import Any

import numpy as np


def _keep_freed_memory_for_reuse() -> None:
    """Ask glibc's malloc to keep freed large blocks instead of unmapping them.

    By default a NumPy array of more than a few MB is given its own pages by
    the OS and returned on free, so every temporary of a large computation
    pays for fresh page faults (about as long as the arithmetic itself).
    A backward pass makes many such temporaries.  Keeping freed memory in the
    heap plays the role of PyTorch's caching allocator; it applies to plain
    NumPy code in the same process just as much.  Set DIFFLAB_DEFAULT_MALLOC=1
    to leave the allocator alone.
    """
    if os.environ.get("DIFFLAB_DEFAULT_MALLOC") or not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc (musl, ...): nothing to tune
        return
    m_trim_threshold, m_mmap_threshold = -1, -3
    libc.mallopt(m_mmap_threshold, 32 * 2**20)  # the largest value glibc accepts
    libc.mallopt(m_trim_threshold, 512 * 2**20)


_keep_freed_memory_for_reuse()

_cupy: types.ModuleType | None = None
_cupy_error: str | None = None

GPU_INSTALL_HINT = (
    "Install the GPU extra that matches your CUDA driver: "
    "pip install 'difflab[cuda12]' (CUDA 12) or 'difflab[cuda13]' (CUDA 13)."
)


def _load_cupy() -> types.ModuleType | None:
    """Import CuPy once; remember why it failed if it did."""
    global _cupy, _cupy_error
    if _cupy is None and _cupy_error is None:
        try:
            import cupy

            if cupy.cuda.runtime.getDeviceCount() < 1:
                _cupy_error = "CuPy is installed but found no CUDA device."
            else:
                _cupy = cupy
        except Exception as exc:  # ImportError, or a CUDA driver error
            _cupy_error = f"CuPy is not usable here ({type(exc).__name__}: {exc})."
    return _cupy


def cupy_or_raise() -> types.ModuleType:
    """Return the cupy module, or raise a RuntimeError that says how to get it."""
    cp = _load_cupy()
    if cp is None:
        raise RuntimeError(f"CUDA was asked for, but {_cupy_error} {GPU_INSTALL_HINT}")
    return cp


def _extended(module: types.ModuleType, erf: Any, add_at: Any) -> types.ModuleType:
    """``module``'s namespace plus the few functions the derivative rules need.

    ``erf`` (from scipy / cupyx); ``scatter_add(values, index, shape)``: the
    transpose of indexing, which adds where an index repeats; and
    ``index_adjoint``: the same, left unwritten (a :class:`SliceAdjoint`)
    when the index is a plain slice.
    """
    namespace = types.ModuleType(module.__name__)
    namespace.__dict__.update(vars(module))
    namespace.erf = erf

    def scatter_add(values: Any, index: Any, shape: tuple) -> Any:
        if _is_basic_index(index):  # slices and integers never repeat an element
            return SliceAdjoint(values, index, shape).dense()
        out = module.zeros(shape, dtype=values.dtype)
        add_at(out, index, values)  # an integer array may: those must add up
        return out

    def index_adjoint(values: Any, index: Any, shape: tuple) -> Any:
        if _is_basic_index(index):
            return SliceAdjoint(values, index, shape)
        return scatter_add(values, index, shape)

    namespace.scatter_add = scatter_add
    namespace.index_adjoint = index_adjoint
    return namespace


class SliceAdjoint:
    """The adjoint of ``x[index]`` (a basic index: slices, integers), not yet written out.

    It stands for the array ``zeros(shape)`` with ``values`` at ``[index]``.
    Writing that array costs a pass over all of x just to put zeros down,
    which is wasted when the adjoint is about to be added to another one:
    the backward pass instead adds ``values`` into the other's ``[index]``,
    in place.  (Rosenbrock's f reads ``x[1:]`` once and ``x[:-1]`` twice, so
    three adjoints of slices meet at x.)
    """

    __slots__ = ("values", "index", "shape")

    def __init__(self, values: Any, index: Any, shape: tuple) -> None:
        self.values, self.index, self.shape = values, index, tuple(shape)

    @property
    def dtype(self) -> Any:
        return self.values.dtype

    def dense(self) -> Any:
        """The array itself: zeros, with the values in their slice."""
        out = array_module(self.values).zeros(self.shape, dtype=self.values.dtype)
        out[self.index] = self.values
        return out


def _is_basic_index(index: Any) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return all(isinstance(i, (int, slice, type(None), type(Ellipsis))) for i in items)


def _numpy_erf() -> Any:
    from scipy.special import erf

    return erf


numpy_namespace = _extended(np, None, np.add.at)
numpy_namespace.__dict__.pop("erf")


def _numpy_getattr(name: str) -> Any:
    # scipy is imported only when erf is first used: it is slow to import.
    if name == "erf":
        numpy_namespace.erf = _numpy_erf()
        return numpy_namespace.erf
    raise AttributeError(name)


numpy_namespace.__getattr__ = _numpy_getattr
_cupy_namespace: types.ModuleType | None = None


def array_module(array: Any) -> types.ModuleType:
    """The array namespace that owns ``array``: numpy's, or cupy's on the GPU.

    These are the ``numpy``/``cupy`` modules plus ``erf``, ``scatter_add`` and
    ``index_adjoint``; everything else is the module's own function.
    """
    global _cupy_namespace
    if _cupy is None or not isinstance(array, _cupy.ndarray):
        return numpy_namespace
    if _cupy_namespace is None:
        import cupyx
        from cupyx.scipy.special import erf

        _cupy_namespace = _extended(_cupy, erf, cupyx.scatter_add)
    return _cupy_namespace


def is_gpu_array(array: Any) -> bool:
    return _cupy is not None and isinstance(array, _cupy.ndarray)


class Device:
    """Where a tensor's memory lives: ``Device('cpu')``, ``Device('cuda')``, ``Device('cuda:1')``.

    As in PyTorch, ``'cuda'`` means the current CUDA device and is equal to
    ``'cuda:0'`` on a machine with one GPU.
    """

    __slots__ = ("type", "index")

    def __init__(self, spec: str | Device | int = "cpu", index: int | None = None):
        if isinstance(spec, Device):
            self.type, self.index = spec.type, spec.index
            return
        if isinstance(spec, int):  # torch.device(0) means cuda:0
            spec, index = "cuda", spec
        if not isinstance(spec, str):
            raise TypeError(f"device must be a string like 'cpu' or 'cuda:0', got {spec!r}")
        kind, _, number = spec.strip().lower().partition(":")
        if kind not in ("cpu", "cuda"):
            raise ValueError(f"unknown device {spec!r}: use 'cpu', 'cuda' or 'cuda:N'")
        if number:
            if not number.isdigit():
                raise ValueError(f"bad device index in {spec!r}: use 'cuda:N' with N >= 0")
            index = int(number)
        if kind == "cpu":
            index = None
        elif index is None:
            index = 0
        self.type, self.index = kind, index

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = Device(other)
        return isinstance(other, Device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        return f"device(type='{self.type}'" + (
            ")" if self.index is None else f", index={self.index})"
        )

    @property
    def xp(self) -> types.ModuleType:
        """The array module for this device (numpy for the CPU, cupy for CUDA)."""
        if self.type == "cpu":
            return numpy_namespace
        cp = cupy_or_raise()
        count = cp.cuda.runtime.getDeviceCount()
        if self.index >= count:
            raise RuntimeError(
                f"device {self} does not exist: this machine has {count} CUDA device(s)"
            )
        return array_module(cp.empty(0))


CPU = Device("cpu")


def device(spec: str | Device | int = "cpu", index: int | None = None) -> Device:
    """Make a :class:`Device`; asking for CUDA where there is none raises a clear error."""
    dev = Device(spec, index)
    if dev.type == "cuda":
        dev.xp  # noqa: B018  (checks that CuPy and the device exist)
    return dev


def device_of(array: Any) -> Device:
    """The device that holds ``array``."""
    if is_gpu_array(array):
        return Device("cuda", int(array.device.id))
    return CPU


def to_device(array: Any, dev: Device) -> Any:
    """Copy ``array`` to ``dev`` (no copy when it is already there)."""
    if dev.type == "cpu":
        return array.get() if is_gpu_array(array) else array
    cp = dev.xp
    if is_gpu_array(array) and array.device.id == dev.index:
        return array
    with cp.cuda.Device(dev.index):
        return cp.asarray(array)


def to_numpy(array: Any) -> np.ndarray:
    """A NumPy array with the same values (copied from the GPU if needed)."""
    return array.get() if is_gpu_array(array) else np.asarray(array)
