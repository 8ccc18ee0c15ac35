"""CUDA graphs: a compiled graph replayed on the GPU as one launch (``mode="reduce-overhead"``).

On a GPU, each line of a graph is a CuPy call that costs the host 10 to 50
microseconds to prepare and launch (a ``sum`` about 25, measured on an
H100), while the GPU often finishes the kernel itself in a few: a graph of
small arrays is *launch-bound*, and the GPU waits for Python.  A CUDA graph
records the kernels of a whole run once, with the addresses of every array
they read and write; the driver then replays them all for one launch.

This is what ``torch.compile(mode="reduce-overhead")`` does, and so does
``dl.compile(fn, mode="reduce-overhead")`` (and ``"max-autotune"``), through
:class:`GraphedProgram`, for each graph of a compiled call on the GPU:

1. **First call: warm up.**  The graph runs as usual, but into buffers kept
   for the graph: the arguments stay where they are (the graph reads the
   caller's arrays), and every result is written into an array of its own.
   Its temporary arrays come from a memory pool private to this graph, so
   the pool now holds blocks of every size a run needs.
2. **Second call: capture, then launch.**  The same run is recorded into a
   CUDA graph (nothing executes while recording); its temporary arrays get
   the pool's blocks, so no memory is allocated during the capture, and no
   other code ever allocates from that pool, so no other array can end up at
   an address the graph writes.
3. **Later calls: launch.**  One launch runs every kernel.  An argument that
   is not the very array of the capture (a new batch) is first copied into
   a buffer of the graph's own (the graph is captured again once, on that
   buffer); the results are copied out, so a result kept by the caller is
   never overwritten by the next launch.

What the graph cannot hold runs as before, each call replayed line by line,
after one :class:`CudaGraphWarning` that names why:

* **random draws** (``dropout``, ``randn``): a graph replays its kernels
  with the numbers it was recorded with, so every launch would draw the
  same numbers;
* **matrix products**: CuPy (14.2) refuses to record cuBLAS calls in a
  graph (``NotImplementedError: calling cuBLAS API during stream capture is
  currently unsupported``), so a graph with ``matmul``, ``Linear`` or a
  convolution runs plainly.  PyTorch records cuBLAS; CuPy may some day.
  What a graph holds here is elementwise work and reductions: simulations,
  losses, an optimizer's update, a fused gradient such as Rosenbrock's;
* anything that makes the host wait for the GPU inside the call (reading a
  value with ``.item()``, a check that needs the host): the driver refuses
  the capture.

The one such check a training step needs is that class indices lie in range
(``cross_entropy``'s targets, ``embedding``'s positions).  Inside a graph,
the ``check_index`` primitive only computes, on the GPU, whether an entry
is out of range and which (:func:`difflab.ops.logic.deferring_index_checks`);
after the launch the host reads those few numbers at once and raises the
same error as eager mode.  Unlike eager mode, the rest of that call (an
optimizer's step) has then run too, on indices the GPU wrapped around.

The CuPy stand-in of the test suite (:mod:`difflab.testing.fake_cupy`)
cannot record kernels: its ``cuda.graph_of(work)`` gives a graph whose launch
runs ``work`` again on the same buffers, refusing host copies as a capturing
stream does.  That is what a CUDA graph computes, so the tests of this
module run in every CI; the real capture runs where a GPU is present.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from difflab import backend
from difflab.ops import logic

__all__ = ["CudaGraphWarning", "GraphedProgram"]


class CudaGraphWarning(UserWarning):
    """A compiled graph runs without a CUDA graph (``mode="reduce-overhead"``), and why.

    Examples
    --------
    >>> import warnings
    >>> from difflab.jit.cuda_graphs import CudaGraphWarning
    >>> issubclass(CudaGraphWarning, UserWarning)
    True
    """


class GraphedProgram:
    """A :class:`~difflab.jit.program.Program` replayed on the GPU as a CUDA graph.

    Parameters
    ----------
    program : Program
        The graph's runner (``graph.program()``).
    writes : sequence of (int, int), optional
        ``(result k, argument j)``: result k is written into argument j inside
        the graph (an in-place update: a BatchNorm's running mean, an
        optimizer's step), and is not returned.

    Attributes
    ----------
    state : str
        ``"new"``, ``"warm"`` (run once, to be captured), ``"captured"`` or
        ``"refused"``.
    reason : str
        Why the graph was refused (``""`` otherwise).
    captures : int
        How many times the run was recorded (once, plus once per argument
        that stopped being the capture's array).

    See Also
    --------
    difflab.compile : ``mode="reduce-overhead"`` uses one per compiled graph on the GPU.

    Examples
    --------
    >>> import numpy as np
    >>> import difflab as dl
    >>> from difflab.testing import fake_cupy
    >>> from difflab.jit.cuda_graphs import GraphedProgram
    >>> with fake_cupy.installed() as cp:
    ...     traced = dl.jit.trace(lambda x: (x * 2).sin().sum(), dl.ones(3))
    ...     graphed = GraphedProgram(traced.graph.program())
    ...     x = cp.asarray(np.ones(3))
    ...     runs = [float(graphed.run([x])[0]) for _ in range(3)]
    >>> [round(r, 4) for r in runs], graphed.state, graphed.captures
    ([2.7279, 2.7279, 2.7279], 'captured', 1)
    """

    def __init__(self, program: Any, writes: Any = ()) -> None:
        self.program = program
        self.writes = list(writes)
        self.state, self.reason, self.captures = "new", "", 0
        self.arguments: list = []  # the arrays the graph reads: the caller's or own copies
        self.own: list[bool] = []  # whether arguments[i] is a buffer of the graph's own
        self.results: list = []  # the arrays the graph writes its results into
        self.checks: list = []  # (error, message) of each deferred index check
        self.flags: Any = None  # (found, value) of each check, written by the graph
        self._launch: Callable[[], None] | None = None
        self._pool: Any = None
        self._stream: Any = None

    def run(self, arrays: list) -> list | None:
        """The results of the program on ``arrays`` (fresh arrays, ``None`` at the
        positions of ``writes``); ``None`` if the program cannot run as a graph (then
        the caller runs it as usual: nothing of this call has run)."""
        if self.state == "refused":
            return None
        xp = backend.array_module(arrays[0]) if arrays else None
        if xp is None or not backend.is_gpu_array(arrays[0]):
            return None
        if self.state == "new":
            random = sorted({n.op.name for n in self.program.graph.nodes if n.op.random})
            if random:
                self._refuse(f"it draws random numbers ({', '.join(random)}), and a CUDA "
                             f"graph would draw the same numbers at every launch")
                return None
            self.arguments, self.own = list(arrays), [False] * len(arrays)
            self._warm_up(xp)
        else:
            self._take_arguments(arrays)
            if self.state == "warm":
                try:
                    self._launch = self._capture(xp)
                    self._launch()
                except Exception as exc:  # noqa: BLE001 (the driver refused: run plainly)
                    self._refuse(f"the capture failed ({type(exc).__name__}: {exc}). CuPy "
                                 f"does not record cuBLAS's matrix products (matmul, Linear, "
                                 f"convolutions), nor anything that makes the host wait for "
                                 f"the GPU (.item(), a value read into Python)")
                    return None
                self.state = "captured"
            else:
                self._launch()  # type: ignore[misc]
        self._raise_failed_checks()
        for j, own in enumerate(self.own):
            if own and any(jj == j for _, jj in self.writes):
                arrays[j][...] = self.arguments[j]  # (an update written into our copy)
        written = {k for k, _ in self.writes}
        return [None if k in written else (r.copy() if hasattr(r, "copy") else r)
                for k, r in enumerate(self.results)]

    # ------------------------------------------------------------ the steps

    def _take_arguments(self, arrays: list) -> None:
        """Copy each argument that is not the capture's array into the graph's own buffer
        (the first time an argument changes, the buffer is new: capture again)."""
        for i, a in enumerate(arrays):
            if a is self.arguments[i]:
                continue
            if not self.own[i]:
                self.arguments[i] = a.copy()
                self.own[i] = True
                self.state = "warm"  # (the graph reads another address now)
            else:
                self.arguments[i][...] = a

    def _work(self) -> None:
        """One run: the program on the graph's arguments, every result into its buffer."""
        with logic.deferring_index_checks() as checks:
            results = self.program.run(self.arguments, check=False)
        if self.state == "new":  # (the warm-up: the buffers are made here, once)
            xp = backend.array_module(self.arguments[0])
            self.results = [xp.empty_like(r) if hasattr(r, "shape") else r for r in results]
            self.checks = [(error, message) for _, _, error, message in checks]
            self.flags = xp.zeros(2 * len(checks), dtype="int64") if checks else None
        for own, r in zip(self.results, results):
            if hasattr(own, "shape"):
                own[...] = r
        for k, j in self.writes:
            self.arguments[j][...] = results[k]
        for c, (found, value, _, _) in enumerate(checks):
            self.flags[2 * c] = found
            self.flags[2 * c + 1] = value

    def _warm_up(self, xp: Any) -> None:
        """The first run, on a stream of its own and from the graph's own memory pool."""
        cupy = backend.cupy_or_raise()
        if getattr(cupy, "IS_STAND_IN", False):
            self._work()
        else:
            self._pool, self._stream = cupy.cuda.MemoryPool(), cupy.cuda.Stream(non_blocking=True)
            self._stream.wait_event(cupy.cuda.get_current_stream().record())
            with cupy.cuda.using_allocator(self._pool.malloc), self._stream:
                self._work()
            cupy.cuda.get_current_stream().wait_event(self._stream.record())
        self.state = "warm"

    def _capture(self, xp: Any) -> Callable[[], None]:
        """The run recorded as a CUDA graph; returns its launch."""
        cupy = backend.cupy_or_raise()
        self.captures += 1
        if getattr(cupy, "IS_STAND_IN", False):
            return cupy.cuda.graph_of(self._work).launch
        with cupy.cuda.using_allocator(self._pool.malloc), self._stream:
            self._stream.begin_capture()
            try:
                self._work()
            finally:
                graph = self._stream.end_capture()
        return lambda: graph.launch(cupy.cuda.get_current_stream())

    def _raise_failed_checks(self) -> None:
        """The deferred index checks: read after the launch, raised as eager mode would."""
        if self.flags is None:
            return
        flags = self.flags.get().tolist()
        for c, (error, message) in enumerate(self.checks):
            if flags[2 * c]:
                logic.raise_index_error(error, message, flags[2 * c + 1],
                                        "; in a CUDA graph (mode='reduce-overhead') the "
                                        "rest of this call has run on wrapped indices")

    def _refuse(self, reason: str) -> None:
        self.state, self.reason = "refused", reason
        warnings.warn(f"dl.compile(mode='reduce-overhead'): graph {self.program.graph.name} "
                      f"runs without a CUDA graph, one kernel launch per line, because "
                      f"{reason}.", CudaGraphWarning, stacklevel=4)
