"""CUDA events and streams: ``torch.cuda.Event``, ``Stream``, ``current_stream``, ``stream``.

A GPU runs the kernels a program launches in the order they were queued on a
*stream*, while the program goes on: a kernel's launch returns at once.  So
Python's clock cannot time a kernel (it times the launch), and a GPU program
times its work with *events*: marks queued on the stream between kernels,
whose moments the GPU records as it passes them.

>>> import difflab as dl
>>> if dl.cuda.is_available():                       # doctest: +SKIP
...     start = dl.cuda.Event(enable_timing=True)
...     end = dl.cuda.Event(enable_timing=True)
...     start.record(); y = x @ x; end.record()
...     end.synchronize()                              # wait until the GPU passed it
...     print(start.elapsed_time(end), "ms")

These are CuPy's events and streams behind PyTorch's names; without a GPU
they raise (``backend.cupy_or_raise``'s message says how to install one), as
PyTorch's do on a build without CUDA.  On the CuPy stand-in of the tests
nothing runs asynchronously: an event records the host's clock.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from difflab import backend

__all__ = ["Event", "Stream", "current_stream", "default_stream", "stream"]


class Stream:
    """A queue of GPU work, run in order (``torch.cuda.Stream``).

    Kernels queued on different streams may run at the same time.  Work is
    queued on the *current* stream: make this one current with
    ``with dl.cuda.stream(s):``.

    Parameters
    ----------
    device : int, optional
        Accepted for PyTorch's signature (the current device).
    priority : int, default 0
        Accepted for PyTorch's signature.

    Attributes
    ----------
    cupy_stream : cupy.cuda.Stream
        The CuPy stream underneath.

    Raises
    ------
    RuntimeError
        Without a GPU (CuPy not installed, or no device).

    See Also
    --------
    current_stream, stream, Event

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.testing import fake_cupy
    >>> with fake_cupy.installed():
    ...     s = dl.cuda.Stream()
    ...     with dl.cuda.stream(s):
    ...         y = dl.ones(3, device="cuda") * 2
    ...     s.synchronize()
    ...     s.query()
    True
    """

    def __init__(self, device: Any = None, priority: int = 0, *, _wrap: Any = None) -> None:
        cupy = backend.cupy_or_raise()
        self.cupy_stream = _wrap if _wrap is not None else cupy.cuda.Stream(non_blocking=False)

    def synchronize(self) -> None:
        """Wait until every kernel queued on this stream has finished."""
        self.cupy_stream.synchronize()

    def query(self) -> bool:
        """Whether every kernel queued on this stream has finished (without waiting)."""
        return bool(self.cupy_stream.done)

    def wait_event(self, event: Event) -> None:
        """Make work queued on this stream from now on wait for ``event``."""
        self.cupy_stream.wait_event(event.cupy_event)

    def wait_stream(self, other: Stream) -> None:
        """Make work queued on this stream from now on wait for what ``other`` holds now."""
        self.wait_event(other.record_event())

    def record_event(self, event: Event | None = None) -> Event:
        """Queue ``event`` (a new one if None) on this stream; returns it."""
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and other.cupy_stream.ptr == self.cupy_stream.ptr

    def __hash__(self) -> int:
        return hash(self.cupy_stream.ptr)

    def __repr__(self) -> str:
        return f"<difflab.cuda.Stream ptr={self.cupy_stream.ptr:#x}>"


class Event:
    """A mark queued on a stream, recorded when the GPU reaches it (``torch.cuda.Event``).

    Parameters
    ----------
    enable_timing : bool, default False
        Keep the moment, for :meth:`elapsed_time`.
    blocking : bool, default False
        :meth:`synchronize` sleeps instead of spinning.
    interprocess : bool, default False
        Shareable with another process.

    Attributes
    ----------
    cupy_event : cupy.cuda.Event
        The CuPy event underneath.

    Raises
    ------
    RuntimeError
        Without a GPU (CuPy not installed, or no device).

    See Also
    --------
    Stream, difflab.cuda.synchronize

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.testing import fake_cupy
    >>> with fake_cupy.installed():
    ...     start, end = dl.cuda.Event(enable_timing=True), dl.cuda.Event(enable_timing=True)
    ...     start.record()
    ...     y = dl.ones(1000, device="cuda").exp().sum()
    ...     end.record()
    ...     end.synchronize()
    ...     start.elapsed_time(end) >= 0.0
    True
    """

    def __init__(self, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False) -> None:
        cupy = backend.cupy_or_raise()
        self.enable_timing = enable_timing
        self.cupy_event = cupy.cuda.Event(block=blocking, disable_timing=not enable_timing,
                                          interprocess=interprocess)
        self._recorded = False

    def record(self, stream: Stream | None = None) -> None:
        """Queue the mark on ``stream`` (the current stream if None)."""
        self.cupy_event.record(None if stream is None else stream.cupy_stream)
        self._recorded = True

    def wait(self, stream: Stream | None = None) -> None:
        """Make work queued on ``stream`` (the current one) from now on wait for this event."""
        (current_stream() if stream is None else stream).wait_event(self)

    def query(self) -> bool:
        """Whether the GPU has passed the mark (without waiting)."""
        return bool(self.cupy_event.done)

    def synchronize(self) -> None:
        """Wait until the GPU has passed the mark."""
        self.cupy_event.synchronize()

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds from this event to ``end_event``, both recorded and passed.

        Raises
        ------
        RuntimeError
            If either event was made without ``enable_timing=True`` or not recorded yet.
        """
        for event, which in ((self, "start"), (end_event, "end")):
            if not event.enable_timing:
                raise RuntimeError(f"elapsed_time: the {which} event was made without timing: "
                                   f"make both with dl.cuda.Event(enable_timing=True)")
            if not event._recorded:
                raise RuntimeError(f"elapsed_time: the {which} event was never recorded: "
                                   f"call .record() on both first")
        cupy = backend.cupy_or_raise()
        return float(cupy.cuda.get_elapsed_time(self.cupy_event, end_event.cupy_event))

    def __repr__(self) -> str:
        return f"<difflab.cuda.Event timing={self.enable_timing}>"


def current_stream(device: Any = None) -> Stream:
    """The stream work is queued on now (``torch.cuda.current_stream``).

    Parameters
    ----------
    device : int, optional
        Accepted for PyTorch's signature (the current device).

    Returns
    -------
    Stream

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.testing import fake_cupy
    >>> with fake_cupy.installed():
    ...     dl.cuda.current_stream() == dl.cuda.default_stream()
    True
    """
    return Stream(_wrap=backend.cupy_or_raise().cuda.get_current_stream())


def default_stream(device: Any = None) -> Stream:
    """The device's default ("null") stream (``torch.cuda.default_stream``).

    Parameters
    ----------
    device : int, optional
        Accepted for PyTorch's signature (the current device).

    Returns
    -------
    Stream

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.testing import fake_cupy
    >>> with fake_cupy.installed():
    ...     dl.cuda.default_stream().query()
    True
    """
    return Stream(_wrap=backend.cupy_or_raise().cuda.Stream.null)


@contextlib.contextmanager
def stream(s: Stream | None) -> Iterator[None]:
    """Within the block, queue work on stream ``s`` (``torch.cuda.stream``; None: no change).

    Parameters
    ----------
    s : Stream or None

    Yields
    ------
    None

    Examples
    --------
    >>> import difflab as dl
    >>> with dl.cuda.stream(None):     # no change, with or without a GPU (as PyTorch's)
    ...     pass
    """
    if s is None:
        yield
        return
    with s.cupy_stream:
        yield
