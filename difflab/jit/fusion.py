r"""Elementwise fusion: a run of elementwise lines becomes one generated kernel.

``y = tanh(sin(x) * 2 + 1)`` replayed line by line makes four passes over
memory and three temporary arrays, and pays Python's dispatch four times.
The *fused* version computes all of it in one loop, element by element:

.. code-block:: python

    for i in range(n):
        t0 = math.sin(in0[i])
        t1 = t0 * 2.0
        t2 = t1 + 1
        out0[i] = math.tanh(t2)

Nothing here writes that code by hand.  Each elementwise primitive already
is a rule, ``forward(xp, x)`` written with NumPy's names (see
:mod:`difflab.ops.elementwise`).  Called with ``xp`` a namespace that builds
*source text* instead of numbers (as the symbolic method calls the same rule
with SymPy), the rule writes its own line of the kernel: ``xp.sin(x)``
becomes ``math.sin(a)`` for the scalar loop, or ``xp.sin(a)`` on arrays.

Three kernels come from the same generated code:

* with **numba** installed (the ``jit`` extra), the scalar loop is compiled to
  machine code: one pass, no temporaries.  The machine code is cached on
  disk (``DIFFLAB_CACHE_DIR``, default ``~/.cache/difflab``), so a new
  process does not compile the same kernel again.  A loop is written for
  float64 or for float32 arrays (training runs in float32): a float32 loop
  computes in float32, rounding where NumPy's float32 lines round (see
  :func:`~difflab.jit.kernels.scalar_source` for what that guarantees);
* on the GPU, for float64 and float32 CuPy arrays, the same lines in C
  become one CUDA kernel that also computes the sums and writes the
  scatters (:mod:`difflab.jit.cuda_kernels`): one pass over memory;
* without numba (or for a dtype other than float64 and float32) the array version runs in
  NumPy, *tiled*: on blocks of 16384 elements, so the temporaries stay in
  the CPU cache.  It computes what the unfused lines compute.

A kernel takes in more than elementwise lines: the whole loop of a
gradient.  The Rosenbrock function ``sum(100 (x[1:] - x[:-1]²)² + (1 - x[:-1])²)``
and its gradient become one line,

.. code-block:: text

    v23 = fused[mul · sub · ... · sum · ... · scatter_add · scatter_add · add](x[:-1], x[1:])

one pass that reads x and writes the loss and the gradient:

* **windows**: ``x[1:]``, a slice that is one contiguous piece of x, is
  read in place by the loop (element i of it is element i + 1 of x);
* **sums**: ``sum``/``mean`` of a whole value of the loop is a running
  total (NumPy's ``sum`` adds pairwise, the kernel block by block: the two
  agree to rounding, not bit for bit);
* **scatters**: ``scatter_add`` into a window (the VJP of a slice) writes
  its values into that window of its array, and an ``add`` of such
  scatters makes them write one array (see :class:`~difflab.jit.kernels.Layout`);
* **broadcast operands**: a bias ``(C,)`` against a loop over ``(N, C)``, a
  column ``(N, 1)``, is read in place, element ``(k // every) % size`` at
  step k (:func:`~difflab.jit.kernels.broadcast_read`; the ``broadcast``
  setting of the line).

The pass (:func:`fuse`, ``"fuse"`` in :func:`difflab.jit.optimize`) first
orders the lines so that the lines of one loop (shape and dtype) stand
together (:func:`schedule`), then makes each run of them one kernel; values
a later line or an output reads leave the kernel as its outputs (the first
one the node's result, the others ``v9.s0``, ...).  :func:`kernel_source`
shows the generated text.  The text itself is written in
:mod:`difflab.jit.kernels`.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib.util
import math
import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from difflab import backend
from difflab.jit.cuda_kernels import CudaKernel, cuda_source
from difflab.jit.graph import Graph, GraphError, Node, Ref, _copy, _show, substitute
from difflab.jit.kernels import (  # noqa: F401  (check_body, _source_file: read here too)
    SIMD_FLOAT64_MIN,
    TILE,
    Layout,
    NotScalar,
    _source_file,
    array_source,
    broadcast_read,
    check_body,
    compile_kernel,
    flat_window,
    fusion_kind,
    loop_dtype,
    scalar_source,
    vectorized_elsewhere,
)
from difflab.jit.ops import OPERATIONS
from difflab.ops.primitive import Primitive
from difflab.ops.shapes import mean_scale

FLOAT64 = np.dtype(np.float64)
FLOAT32 = np.dtype(np.float32)


def _numba_importable() -> bool:
    if os.environ.get("DIFFLAB_JIT_NUMBA", "1").strip().lower() in ("0", "off", "false", "no"):
        return False
    # (found, not imported: numba's import takes a tenth of a second and tens of thousands of
    # objects, paid only when the first kernel is compiled)
    return importlib.util.find_spec("numba") is not None


#: Whether fused kernels are compiled with numba: it is installed (the ``jit`` extra) and
#: not switched off with DIFFLAB_JIT_NUMBA=0.  Set it to False to use the NumPy kernels.
USE_NUMBA: bool = _numba_importable()


def kernel_backend() -> str:
    """Which kernels fusion makes here, in words (the fused listing prints it)."""
    if USE_NUMBA:
        return "numba (float64 and float32 groups; other dtypes run the NumPy kernel)"
    if os.environ.get("DIFFLAB_JIT_NUMBA", "1").strip().lower() in ("0", "off", "false", "no"):
        return "NumPy, tiled (numba switched off by DIFFLAB_JIT_NUMBA=0)"
    return ("NumPy, tiled (numba is not installed: pip install 'difflab[jit]' compiles "
            "fused kernels to machine code; the results are the same)")


#: Whether the graphs being optimized now will run on a GPU (:func:`fusing_for`).
_FOR_GPU: contextvars.ContextVar[bool] = contextvars.ContextVar("difflab_fusing_for_gpu",
                                                                default=False)


@contextlib.contextmanager
def fusing_for(values: Iterable[Any]) -> Iterator[bool]:
    """Inside the block, the fuse pass makes kernels for the device of ``values``.

    The pass sees a graph, not where it will run, and two of its choices
    are the CPU's: a float32 ``tanh`` (and, where NumPy has AVX-512 loops,
    a big float64 one) stays NumPy's own line, faster there than a call per
    element in numba's loop (:func:`~difflab.jit.kernels.vectorized_elsewhere`);
    and float32 groups fuse only with numba (:func:`fusion_pays`).  On a
    GPU one CUDA kernel computes every line at the speed of memory, so every
    line that can join a kernel does.  ``dl.compile``, ``jit.trace`` and
    ``method="compiled"`` optimize their graphs inside this block, with the
    arrays (or tensors) they trace.

    Parameters
    ----------
    values : iterable
        Tensors, arrays or anything else (ignored): a GPU array among them
        means the graphs run on the GPU.

    Yields
    ------
    bool
        Whether the block fuses for a GPU.

    Examples
    --------
    >>> import numpy as np
    >>> from difflab.jit import fusion
    >>> with fusion.fusing_for([np.zeros(3)]) as on_gpu:
    ...     on_gpu, fusion.fusion_pays(np.float64)
    (False, True)
    """
    on_gpu = any(backend.is_gpu_array(getattr(v, "array", v)) for v in values)
    token = _FOR_GPU.set(on_gpu)
    try:
        yield on_gpu
    finally:
        _FOR_GPU.reset(token)


def fusion_pays(dtype: Any) -> bool:
    """Whether fusing a graph's lines of this dtype makes it faster (``dl.compile`` asks).

    float64 lines always gain (numba's loop, or the tiled NumPy kernel); float32
    lines gain where numba writes their loop (:data:`USE_NUMBA`): the tiled
    NumPy kernel measured slower than replaying float32 lines one by one at
    the sizes of teaching models.  Any other dtype: no.  For a GPU
    (:func:`fusing_for`), float64 and float32 lines always gain (one CUDA kernel).

    Parameters
    ----------
    dtype : dtype-like
        The dtype of a graph's float lines.

    Returns
    -------
    bool

    Examples
    --------
    >>> import numpy as np
    >>> from difflab.jit import fusion
    >>> fusion.fusion_pays(np.float64), fusion.fusion_pays(np.float16)
    (True, False)
    >>> fusion.fusion_pays(np.float32) == fusion.USE_NUMBA
    True
    """
    dtype = np.dtype(dtype)
    if _FOR_GPU.get():  # (one CUDA kernel, numba or not: see fusing_for)
        return loop_dtype(dtype) is not None
    return dtype == FLOAT64 or (USE_NUMBA and loop_dtype(dtype) is not None)


# ------------------------------------------------------------------ the kernel


class FusedElementwise(Primitive):
    """The operation of a fused line: ``forward`` runs the group's generated kernel.

    Its settings say everything, so a saved graph stores them as JSON and
    the kernel is generated again after loading: ``body`` (the lines, as
    ``(primitive, arguments)`` with local names ``in0``/``t3`` or numbers;
    see :mod:`difflab.jit.kernels`), ``outputs`` (the lines that leave it,
    the line's result first), ``shape`` (the loop's shape), ``windows``
    (for each input, the slice of it the loop reads, or None: the whole)
    and ``broadcast`` (for each input, None or ``(every, size)``).
    """

    name = "fused"
    math = "several elementwise rules, sums and scatters, one loop"
    double_backward = False

    def __init__(self) -> None:
        # (id(body), kind) -> (body, outputs, layout, kernel); body kept, so the id stays its own
        self._kernels: dict[tuple, tuple] = {}

    def describe(self, node: Node, arguments: str) -> str:
        from difflab.jit.graph import _arg

        ops = " · ".join(op for op, _ in node.params["body"])
        windows = node.params.get("windows") or (None,) * len(node.args)
        broadcast = node.params.get("broadcast") or (None,) * len(node.args)
        reads = []
        for a, window, spread in zip(node.args, windows, broadcast):
            items = window if isinstance(window, tuple) else (window,)
            reads.append(f"{_arg(a)}[{', '.join(_arg(i) for i in items)}]"
                         if window is not None
                         else f"{_arg(a)} (broadcast)" if spread is not None else _arg(a))
        return f"{node.name} = fused[{ops}]({', '.join(reads)})"

    def kernel(self, body: tuple, outputs: tuple, kind: str, broadcast: tuple | None = None,
               dtype: Any = FLOAT64) -> tuple[Layout, Any]:
        """The layout and the compiled kernel for these settings (made once, then kept).

        ``kind`` is ``"numba"``, ``"numpy"`` or ``"cuda"``; a numba kernel
        that cannot be written (a rule with no scalar form) comes back as
        the NumPy kernel, a CUDA one as None.  ``dtype``: the arrays' (numba
        writes one loop per dtype, float64 or float32; the others ignore it).
        """
        key = (id(body), kind, np.dtype(dtype) if kind == "numba" else None)
        cached = self._kernels.get(key)
        if cached is not None and cached[0] is body and cached[1] is outputs \
                and cached[2] is broadcast:
            return cached[3], cached[4]
        layout = Layout(body, outputs, broadcast)
        if kind == "cuda":
            compiled = _cuda_kernel(layout)
        else:
            made, compiled = compile_kernel(body, outputs, kind == "numba", layout, dtype)
            compiled = (made, compiled)
        self._kernels[key] = (body, outputs, broadcast, layout, compiled)
        return layout, compiled

    def forward(self, ctx: Any, xp: Any, *inputs: Any, body: tuple, outputs: tuple,
                shape: tuple | None = None, windows: tuple | None = None,
                broadcast: tuple | None = None) -> Any:
        """Run the kernel on these inputs: the first output returned, the others saved.

        numba's loop for float64 or float32 arrays on the CPU, one CUDA kernel
        (:mod:`difflab.jit.cuda_kernels`) for float64 or float32 arrays on a GPU,
        and the NumPy kernel, block by block, for everything else.
        """
        if shape is None:  # (a graph saved before fused lines kept their loop's shape)
            shape = max((a.shape for a in inputs), key=len, default=())
        n = math.prod(shape)
        if windows is not None and len(windows) != len(inputs):
            raise GraphError(f"a fused kernel got {len(inputs)} inputs and {len(windows)} "
                             f"windows")
        flat = [_flat(xp, a, w) for a, w in zip(inputs, windows or (None,) * len(inputs))]
        dtype = flat[0].dtype if flat else FLOAT64
        on_cpu = all(type(a) is np.ndarray for a in flat)
        if _cupy_kernels_for(flat):
            layout, kernel = self.kernel(body, outputs, "cuda", broadcast)
            if kernel is not None:
                _check_sizes(layout, flat, windows, n)
                ran = kernel.run(xp, flat, n, dtype)
                if ran is not None:
                    return _finish(ctx, layout, *ran, shape, n)
        use_numba = USE_NUMBA and on_cpu and loop_dtype(dtype) is not None \
            and all(a.dtype == dtype for a in flat)
        layout, (kind, kernel) = self.kernel(body, outputs, "numba" if use_numba else "numpy",
                                             broadcast, dtype)
        _check_sizes(layout, flat, windows, n)
        arrays, ys = _allocate(xp, layout, n, dtype)
        _run_cpu_kernel(kind, kernel, layout, xp, flat, ys, n, on_cpu)
        return _finish(ctx, layout, arrays, ys, shape, n)

    def vjp(self, ctx: Any, xp: Any, g: Any, *saved: Any) -> tuple:
        raise RuntimeError("a fused kernel has no VJP: differentiate the graph before fusing")


FUSED = FusedElementwise()
OPERATIONS[FUSED.name] = FUSED  # (graph files name it: ops.resolve finds it there)


def kernel_source(node: Node, language: str = "numba") -> str:
    """The generated source of a fused line's kernel, to read.

    ``language``: ``"numba"`` (the loop compiled on the CPU), ``"numpy"``
    (the elementwise lines on blocks, without numba) or ``"cuda"`` (the
    CUDA kernel, for inputs of the loop's size in the line's dtype).
    """
    layout = Layout(node.params["body"], node.params["outputs"], node.params.get("broadcast"))
    if language == "numba":
        return scalar_source(layout, node.dtype if loop_dtype(node.dtype) else FLOAT64)
    if language == "numpy":
        return array_source(layout)
    if language == "cuda":
        reads = tuple(read or "each" for read in layout.broadcast)
        return cuda_source(layout, node.dtype if loop_dtype(node.dtype) else FLOAT64, reads)
    raise ValueError(f"no kernel language {language!r}: numba, numpy or cuda")


def _flat(xp: Any, array: Any, window: Any) -> Any:
    """An input as the loop reads it: its window (if any), flat, contiguous."""
    if window is not None:
        array = array[window]
    if array.ndim != 1 or not array.flags.c_contiguous:
        array = xp.ascontiguousarray(array).reshape(-1)
    return array


def _check_sizes(layout: Layout, flat: Sequence[Any], windows: Any, n: int) -> None:
    """Refuse inputs the loop would read past: n elements, a number, or a broadcast's size.

    (The compiled loop does not check its indices: settings edited in a
    graph file must not make it read outside an array.)
    """
    if layout.n_inputs != len(flat):
        raise GraphError(f"a fused kernel reading {layout.n_inputs} inputs got {len(flat)}")
    if n < 0:
        raise GraphError(f"a fused kernel's loop has {n} elements (its shape has a negative "
                         f"length)")
    for k, (a, read) in enumerate(zip(flat, layout.broadcast)):
        window = windows[k] if windows is not None else None
        if read is not None:
            if a.size != read[1] or window is not None:
                raise GraphError(f"a fused kernel reads input {k} broadcast from {read[1]} "
                                 f"elements, got {a.size} (window {window!r})")
        elif a.size != n and (a.size != 1 or window is not None):
            raise GraphError(f"a fused kernel over {n} elements got an input of {a.size} "
                             f"elements (window {window!r})")


def _allocate(xp: Any, layout: Layout, n: int, dtype: Any) -> tuple[dict, dict]:
    """The arrays the kernel writes: ``y{j}`` for each parameter, and each scatter's array.

    A scatter writes a window of its array (a view of it); the parts of the
    array that the first-writing scatter does not cover are set to zero
    here, the rest is written by the loop.
    """
    arrays = {}  # root line -> the whole array its scatters write
    for root, first in layout.first.items():
        size = math.prod(layout.shape[root])
        array = xp.empty(size, dtype=dtype)
        array[:layout.start[first]] = 0
        array[layout.start[first] + n:] = 0
        arrays[root] = array
    ys = {}
    for j in layout.parameters:
        if layout.kinds[j] == "scatter":
            start = layout.start[j]
            ys[j] = arrays[layout.root[j]][start:start + n]
            if ys[j].size != n:
                raise GraphError(f"a fused kernel over {n} elements scatters into "
                                 f"{ys[j].size} elements of an array of shape "
                                 f"{layout.shape[j]}")
        else:
            ys[j] = xp.empty(n if layout.kinds[j] == "elementwise" else 1, dtype=dtype)
    return arrays, ys


def run_blocks(elementwise: Any, layout: Layout, xp: Any, inputs: Sequence[Any], ys: dict,
               n: int, tile: int) -> None:
    """Run a kernel block by block (``tile`` elements) on arrays, NumPy's or CuPy's.

    ``elementwise(*inputs of the block)`` computes the values of the
    elementwise lines (``layout.delivered``); then each goes where the body
    says: into an output, into a sum (each block's sum added to the total),
    into a scatter's window (``=`` for the first writer, ``+=`` for the
    others).  Elementwise lines give each element the same value whatever
    the blocks are; a sum of several blocks adds in another order than
    NumPy's one ``sum``: equal to rounding.
    """
    totals = {j: 0.0 for j, kind in enumerate(layout.kinds) if kind == "reduction"}
    writes = [(j, layout.reads[j], layout.first[layout.root[j]] == j)
              for j in layout.root]
    writes.sort(key=lambda write: not write[2])  # (first writers first)
    for lo in range(0, n, tile):
        hi = min(lo + tile, n)
        block = [a[lo:hi] if read is None and a.size == n
                 else a if read is None  # (a number)
                 else a[(xp.arange(lo, hi) // read[0]) % read[1]]  # (a broadcast input)
                 for a, read in zip(inputs, layout.broadcast)]
        values = {f"in{k}": a for k, a in enumerate(block)}
        values.update((f"t{j}", v) for j, v in zip(layout.delivered, elementwise(*block)))
        for j in layout.parameters:
            if layout.kinds[j] == "elementwise":
                ys[j][lo:hi] = values[f"t{j}"]
        for j in totals:  # (a line of numbers alone is one number: as many as the block)
            terms = values[layout.reads[j]]
            if getattr(terms, "shape", ()) != (hi - lo,):
                terms = xp.broadcast_to(xp.asarray(terms), (hi - lo,))
            totals[j] = totals[j] + xp.sum(terms)
        for j, name, first in writes:
            if first:
                ys[j][lo:hi] = values[name]
            else:
                ys[j][lo:hi] += values[name]
    for j, total in totals.items():
        ys[j][0] = total


def _run_cpu_kernel(kind: str, kernel: Any, layout: Layout, xp: Any, flat: list, ys: dict,
                    n: int, on_cpu: bool) -> None:
    """Run the numba loop (once over all n) or the NumPy kernel (block by block)."""
    if kind == "numba":  # (a number is read as n equal elements; a broadcast one in place)
        kernel(n, *[a if a.size == n or read is not None else np.broadcast_to(a, (n,))
                    for a, read in zip(flat, layout.broadcast)],
               *[ys[j] for j in layout.parameters])
    else:  # (in cache-sized blocks on the CPU; on a GPU, in one)
        tile = TILE if on_cpu else max(n, 1)
        run_blocks(lambda *block: kernel(xp, *block), layout, xp, flat, ys, n, tile)


def _finish(ctx: Any, layout: Layout, arrays: dict, ys: dict, shape: tuple, n: int) -> Any:
    """The outputs in their shapes (a mean scaled); the first is returned, the others saved."""
    results = []
    for k in layout.outputs:
        kind = layout.kinds[k]
        if kind == "elementwise":
            results.append(ys[k].reshape(shape))
        elif kind == "reduction":
            if layout.body[k][0] == "mean":
                ys[k] *= mean_scale(n)
            results.append(ys[k].reshape(()))
        else:
            results.append(arrays[k].reshape(layout.shape[k]))
    ctx.save(*results[1:])
    return results[0]


def _cupy_kernels_for(inputs: Sequence[Any]) -> bool:
    """Whether these are CuPy arrays of one dtype, float64 or float32, and CuPy can
    compile CUDA kernels."""
    if not inputs or not all(type(a).__module__.startswith("cupy") for a in inputs):
        return False
    if inputs[0].dtype not in (FLOAT64, FLOAT32) or any(a.dtype != inputs[0].dtype
                                                         for a in inputs):
        return False
    try:
        import cupy
    except ImportError:
        return False
    return hasattr(cupy, "RawKernel")


def _cuda_kernel(layout: Layout) -> CudaKernel | None:
    """The group's CUDA kernel (:mod:`difflab.jit.cuda_kernels`); None if a rule has no C
    form (then the array kernel runs on the GPU's arrays)."""
    try:
        cuda_source(layout, FLOAT64, ("each",) * layout.n_inputs)
    except NotScalar:
        return None
    return CudaKernel(layout)


# -------------------------------------------------------------------- the pass


def _elementwise(node: Node, meta: dict) -> bool:
    """A line that may join a kernel: an elementwise rule on inputs of its shape, numbers,
    or inputs the loop reads broadcast (:func:`~difflab.jit.kernels.broadcast_read`)."""
    if node.params:
        return False
    for a in node.args:
        if isinstance(a, Ref):
            shape, dtype = meta[a.name]
            if np.dtype(dtype) != np.dtype(node.dtype) or shape not in (
                    tuple(node.shape), ()) and broadcast_read(shape, node.shape) is None:
                return False
        elif not isinstance(a, (int, float)) or isinstance(a, bool):
            return False
    return True


def _whole(axis: Any, ndim: int) -> bool:
    """Whether a reduction over ``axis`` takes in every axis of an ``ndim``-axis array."""
    if axis is None:
        return True
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    if not all(isinstance(a, int) and not isinstance(a, bool) and -ndim <= a < ndim
               for a in axes):
        return False
    return sorted({a % ndim for a in axes}) == list(range(ndim)) == sorted(a % ndim for a in axes)


def _roles(graph: Graph) -> list[tuple[str, tuple] | None]:
    """For each line, what it can be in a kernel and which loop: ``(kind, (shape, dtype))``.

    The loop of a kernel is the shape it runs over.  An elementwise line
    runs over its own shape; so does a window (``x[1:]``: read at an
    offset); a whole-array ``sum``/``mean`` and a ``scatter_add`` into a
    window run over their input's shape; an ``add`` of two scatters into
    one array (a *merge*), read by nothing else, over theirs.
    """
    meta = graph.meta()
    readers: dict[str, int] = {}
    for node in graph.nodes:
        for name in {r.name for r in node.refs()}:
            readers[name] = readers.get(name, 0) + 1
    returned = {o.name for o in graph.outputs if isinstance(o, Ref)}
    by_name: dict[str, tuple | None] = {}
    roles = []
    for node in graph.nodes:
        role = _role(node, meta, by_name, readers, returned)
        by_name[node.name] = role
        roles.append(role)
    return roles


def _role(node: Node, meta: dict, roles: dict, readers: dict, returned: set
          ) -> tuple[str, tuple] | None:
    """What ``node`` can be in a kernel, and over which loop: ``(role, (shape, dtype))``.

    The role is the primitive's fusion kind (:func:`~difflab.jit.kernels.fusion_kind`),
    or ``"merge"``; None if the line cannot join a kernel.
    """
    dtype = np.dtype(node.dtype)
    if dtype.kind != "f" or any(m is not None for m in node.saved):
        return None
    merged = _merge_loop(node, meta, roles, readers, returned)
    if merged is not None:
        return "merge", merged
    kind = fusion_kind(node.op)
    if kind == "elementwise":
        if USE_NUMBA and not _FOR_GPU.get() \
                and (dtype == FLOAT32 or math.prod(node.shape) >= SIMD_FLOAT64_MIN) \
                and vectorized_elsewhere(node.op_name, [None if isinstance(a, Ref) else a
                                                        for a in node.args], dtype):
            return None  # (NumPy's SIMD tanh beats numba's call of the C library's)
        return ("elementwise", (tuple(node.shape), dtype.str)) if _elementwise(node, meta) \
            else None
    refs = node.refs()
    if kind is None or len(refs) != 1 or node.args != (refs[0],) \
            or meta[refs[0].name][1] != dtype:
        return None  # (the others read one array, and nothing else, as Refs)
    loop = _LOOP_OF[kind](node, meta[refs[0].name][0])
    return None if loop is None else (kind, (loop, dtype.str))


def _merge_loop(node: Node, meta: dict, roles: dict, readers: dict, returned: set
                ) -> tuple | None:
    """The loop of an ``add`` of two scatters (or merges) into one array, read by nothing else."""
    refs = node.refs()
    if node.op_name != "add" or not len(refs) == 2 == len(node.args) or node.params:
        return None
    taken = [roles.get(r.name) for r in refs]
    if all(t is not None and t[0] in ("scatter", "merge") for t in taken) \
            and taken[0][1] == taken[1][1] and refs[0] != refs[1] \
            and meta[refs[0].name] == meta[refs[1].name] \
            and all(readers[r.name] == 1 and r.name not in returned for r in refs):
        return taken[0][1]
    return None


def _window_loop(node: Node, shape: tuple) -> tuple | None:
    """``x[index]``, one contiguous piece of x: the loop runs over the window's shape."""
    window = flat_window(node.params.get("index"), shape)
    return tuple(node.shape) if window is not None and window[1] == tuple(node.shape) else None


def _reduction_loop(node: Node, shape: tuple) -> tuple | None:
    """A sum (or mean) of every element, not empty: the loop runs over its input's shape."""
    params = node.params
    if set(params) <= {"axis", "keepdims"} and _whole(params.get("axis"), len(shape)) \
            and not params.get("keepdims") and math.prod(shape) > 0:
        return shape
    return None


def _scatter_loop(node: Node, shape: tuple) -> tuple | None:
    """Values added into a window of a ``shape`` array: the loop runs over the values' shape."""
    window = flat_window(node.params.get("index"), tuple(node.params.get("shape", ())))
    return shape if window is not None and window[1] == shape else None


#: fusion kind -> the loop a line of that kind (reading one array of ``shape``) runs over.
_LOOP_OF = {"window": _window_loop, "reduction": _reduction_loop, "scatter": _scatter_loop}


def schedule(graph: Graph) -> list[Node]:
    """The nodes reordered so that the lines of one loop (shape and dtype) stand together.

    Any order in which each line comes after the lines it reads computes the
    same values (every primitive is a pure function).  So, among the lines
    ready to run, keep taking those of the current group's loop (see
    ``_roles``); when none is left, run the other ready lines (a
    ``matmul``), then start the next group.  A backward graph's first VJP
    lines do not wait for the loss's ``sum``: forward and backward fuse into
    one kernel.  Ties go to the original order.
    """
    import heapq

    nodes = graph.nodes
    index = {}
    for k, node in enumerate(nodes):
        for name in node.outputs():
            index[name] = k
    waiting = [0] * len(nodes)
    users: list[list[int]] = [[] for _ in nodes]
    for k, node in enumerate(nodes):
        for dep in {index[r.name] for r in node.refs() if r.name in index}:
            waiting[k] += 1
            users[dep].append(k)
    roles = _roles(graph)
    ready_fusible: dict[tuple, list[int]] = {}
    ready_other: list[int] = []

    def make_ready(k: int) -> None:
        if roles[k] is not None:
            heapq.heappush(ready_fusible.setdefault(roles[k][1], []), k)
        else:
            heapq.heappush(ready_other, k)

    for k in range(len(nodes)):
        if waiting[k] == 0:
            make_ready(k)
    order: list[int] = []
    current = None
    while len(order) < len(nodes):
        if current is not None and ready_fusible.get(current):
            k = heapq.heappop(ready_fusible[current])
        elif ready_other:
            k = heapq.heappop(ready_other)
            current = None
        else:
            current = min((h[0], key) for key, h in ready_fusible.items() if h)[1]
            k = heapq.heappop(ready_fusible[current])
        order.append(k)
        for user in users[k]:
            waiting[user] -= 1
            if waiting[user] == 0:
                make_ready(user)
    return [nodes[k] for k in order]


def _joins(node: Node, kind: str, members: dict) -> bool:
    """Whether ``node`` can join the kernel whose lines (name -> kind) are ``members``.

    A loop value is there at every step; a sum or a scatter only after the
    loop: so an elementwise line, a sum or a scatter reads loop values (or
    values from outside), a merge reads the kernel's own scatters, and a
    window reads an array from outside.
    """
    read = [members.get(r.name) for r in node.refs()]
    if kind == "merge":
        return all(k in ("scatter", "merge") for k in read)
    if kind == "window":
        return read == [None]
    return all(k in (None, "elementwise", "window") for k in read)


def _runs(graph: Graph, roles: list, min_size: int) -> list[list[int]]:
    """The groups to fuse: consecutive lines of one loop that can share a kernel."""
    runs: list[list[int]] = []
    members: dict[str, str] = {}
    key = None
    for k, (node, role) in enumerate(zip(graph.nodes, roles)):
        if role is not None and role[1] == key and _joins(node, role[0], members):
            runs[-1].append(k)
        elif role is not None and role[0] != "merge":
            runs.append([k])
            members, key = {}, role[1]
        else:
            key = None
            continue
        members[node.name] = role[0]
    for run in runs:  # (a window no line after it reads is no part of the kernel)
        while roles[run[-1]][0] == "window":
            run.pop()
            if not run:
                break
    return [run for run in runs if len(run) >= min_size
            and any(roles[k][0] == "elementwise" for k in run)]


def _one_number(graph: Graph, name: str) -> float | None:
    """The number a float64 or float32 constant holds in every element, or None.

    (Written as a number in the kernel's text, it is converted to the loop's
    dtype as NumPy converts a Python number: a float32 constant's value exactly.)
    """
    from difflab import backend

    if name not in graph.constants:
        return None
    array = backend.to_numpy(graph.constants[name])
    if loop_dtype(array.dtype) is None or array.size == 0:
        return None
    first = array.reshape(-1)[0]
    return float(first) if bool((array == first).all()) else None


class _Names:
    """The local names of one kernel's body: its lines ``t0``... and its inputs ``in0``....

    An input is an array read whole, or read through a window (``x[1:]``:
    the window's line is not a line of the body); the same array through the
    same window is one input.
    """

    def __init__(self, graph: Graph, lines: list[int], windows: dict[str, Node]) -> None:
        self.graph = graph
        self.local = {graph.nodes[k].name: f"t{j}" for j, k in enumerate(lines)}
        self.windows = windows
        self.inputs: list[tuple[Ref, Any]] = []  # (array, its window or None)

    def of(self, ref: Ref) -> str:
        """The local name of a value the body reads."""
        if ref.name in self.local:
            return self.local[ref.name]
        node = self.windows.get(ref.name)
        read = (node.args[0], node.params["index"]) if node is not None else (ref, None)
        for k, (r, w) in enumerate(self.inputs):
            if r == read[0] and repr(w) == repr(read[1]):
                return f"in{k}"
        self.inputs.append(read)
        return f"in{len(self.inputs) - 1}"

    def argument(self, a: Any) -> Any:
        """An elementwise argument: a constant that is one number everywhere is that number."""
        if not isinstance(a, Ref):
            return a
        number = _one_number(self.graph, a.name)
        return self.of(a) if number is None else number

    def line(self, node: Node, kind: str) -> tuple[str, tuple]:
        """The body line ``(primitive, arguments)`` of ``node``."""
        if kind == "elementwise":
            return node.op_name, tuple(self.argument(a) for a in node.args)
        if kind == "scatter":
            return node.op_name, (self.of(node.args[0]), node.params["index"],
                                  tuple(node.params["shape"]))
        return node.op_name, tuple(self.of(a) for a in node.args)


def _leaving(graph: Graph, lines: list[int], roles: list, used_after: Any) -> list[int]:
    """The body lines that leave the kernel, the node's result first, then the saved.

    What is read after the run (or returned) leaves, and every sum and every
    scatter's array (a merge takes in its scatters); the last line always.
    """
    merged = {r.name for k in lines if roles[k][0] == "merge" for r in graph.nodes[k].refs()}
    leaving = [j for j, k in enumerate(lines)
               if used_after(k) or roles[k][0] == "reduction"
               or roles[k][0] in ("scatter", "merge") and graph.nodes[k].name not in merged]
    last = len(lines) - 1
    if not leaving or leaving[-1] != last:
        leaving = [j for j in leaving if j != last] + [last]
    return [leaving[-1]] + leaving[:-1]


def _kernel_node(graph: Graph, run: list[int], roles: list, used_after: Any
                 ) -> tuple[Node, list[str], list[int]]:
    """The ``fused`` line of one run; the names that leave it as ``name.s0``...; lines gone.

    ``used_after(k)``: whether line k's value is read after the run or returned.
    """
    windows = {graph.nodes[k].name: graph.nodes[k] for k in run if roles[k][0] == "window"}
    lines = [k for k in run if roles[k][0] != "window"]
    names = _Names(graph, lines, windows)
    body = tuple(names.line(graph.nodes[k], roles[k][0]) for k in lines)
    order = _leaving(graph, lines, roles, used_after)
    loop = roles[run[0]][1][0]
    params = {"body": body, "outputs": tuple(order), "shape": loop}
    if any(w is not None for _, w in names.inputs):
        params["windows"] = tuple(w for _, w in names.inputs)
    # An input of another shape than the loop's (not a number) is read broadcast.
    meta = graph.meta()
    broadcast = tuple(None if w is not None or meta[r.name][0] in (loop, ())
                      else broadcast_read(meta[r.name][0], loop) for r, w in names.inputs)
    if any(b is not None for b in broadcast):
        params["broadcast"] = broadcast
    main = graph.nodes[lines[order[0]]]
    extra = [graph.nodes[lines[j]] for j in order[1:]]
    fused = Node(main.name, FUSED, tuple(r for r, _ in names.inputs), params, main.shape,
                 main.dtype, (False,) * len(names.inputs),
                 tuple((tuple(n.shape), np.dtype(n.dtype)) for n in extra))
    # (a window read elsewhere too stays: it is a view, no copy)
    gone = lines + [k for k in run if k not in lines and not used_after(k)]
    return fused, [n.name for n in extra], gone


def _past_stop_gradients(graph: Graph) -> Graph:
    """The graph with every reader of a stop-gradient line (``detach``) reading its input.

    A stop-gradient is the identity on values; it only matters to a derivative, and a
    fused graph is not differentiated again (a kernel has no VJP).  So here, and only
    here, the line goes (kept if the graph returns it): it would otherwise cut a chain
    of elementwise lines into two kernels.
    """
    renamed: dict[str, Ref] = {}
    returned = {o.name for o in graph.outputs if isinstance(o, Ref)}
    nodes = []
    for node in graph.nodes:
        args = substitute(node.args, renamed)
        if getattr(node.op, "stops_gradient", False) and isinstance(args[0], Ref):
            renamed[node.name] = args[0]
            if node.name not in returned:
                continue
        nodes.append(node if not renamed else Node(
            node.name, node.op, args, {p: substitute(v, renamed) for p, v in
                                       node.params.items()},
            node.shape, node.dtype, node.needs_input_grad, node.saved))
    return _copy(graph, nodes, graph.outputs) if renamed else graph


def fuse(graph: Graph, show: bool = False, min_size: int = 2) -> Graph:
    """Replace each group of lines over one loop by one kernel.

    The lines are first put in an order that keeps each group together
    (:func:`schedule`); then each run of consecutive lines that can share a
    kernel (``_joins``) becomes one ``fused`` line: elementwise lines,
    the windows they read (``x[1:]``, read at an offset), the sums of their
    values and their scatters into windows of bigger arrays.  Results equal
    the unfused lines' to rounding: a fused sum adds block by block, in the
    loop's order, where NumPy's ``sum`` adds pairwise.
    """
    original = graph
    graph = _past_stop_gradients(graph)
    graph = _copy(graph, schedule(graph), graph.outputs)
    readers: dict[str, set] = {}
    for k, node in enumerate(graph.nodes):
        for r in node.refs():
            readers.setdefault(r.name, set()).add(k)
    returned = {o.name for o in graph.outputs if isinstance(o, Ref)}
    roles = _roles(graph)
    renamed: dict[str, Ref] = {}
    replaced: dict[int, Node | None] = {}
    for run in _runs(graph, roles, min_size):
        def used_after(k: int, run: list = run) -> bool:
            name = graph.nodes[k].name
            return name in returned or bool(readers.get(name, set()) - set(run))

        fused, extra, gone = _kernel_node(graph, run, roles, used_after)
        for s, name in enumerate(extra):
            renamed[name] = Ref(f"{fused.name}.s{s}")
        replaced.update(dict.fromkeys(gone))
        replaced[run[-1]] = fused
    nodes = []
    for k, node in enumerate(graph.nodes):
        if k in replaced:
            fused = replaced[k]
            if fused is not None:  # (its inputs may be an earlier kernel's extra outputs)
                fused.args = substitute(fused.args, renamed)
                nodes.append(fused)
            continue
        nodes.append(Node(node.name, node.op, substitute(node.args, renamed),
                          {p: substitute(v, renamed) for p, v in node.params.items()},
                          node.shape, node.dtype, node.needs_input_grad, node.saved))
    outputs = [substitute(o, renamed) for o in graph.outputs]
    # A constant that became a number in a kernel's text may be read no more.
    read = {r.name for n in nodes for r in n.refs()} | {o.name for o in outputs
                                                        if isinstance(o, Ref)}
    result = _copy(graph, nodes, outputs,
                   [i for i in graph.inputs if i.kind != "constant" or i.name in read],
                   {k: v for k, v in graph.constants.items() if k in read})
    if show:
        print(f"(fused kernels: {kernel_backend()})")
    _show("elementwise fusion", original, result, show)
    return result
