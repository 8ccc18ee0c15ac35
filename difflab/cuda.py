"""``difflab.cuda``: the questions PyTorch users ask of ``torch.cuda``.

All of them answer without error on a machine with no GPU or no CuPy
(``is_available()`` is then False and ``device_count()`` is 0), except those
that need a device to answer, which raise a RuntimeError saying how to
install the GPU extra.
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
