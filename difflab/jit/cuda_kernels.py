r"""A fused line on an NVIDIA GPU: the whole loop of its group in one CUDA kernel.

On the CPU a fused group is one numba loop (:mod:`difflab.jit.kernels`).  On
the GPU it is one CUDA kernel written from the same rules: it reads the
inputs once and writes every output, the partial sums of every ``sum`` and
every scatter's array, in one pass over memory.  For the Rosenbrock gradient
that is x read once and the gradient written once, where running the lines
one by one reads and writes some fifteen arrays of x's size.

Each GPU thread takes positions ``p``, ``p + stride``, ... of the loop (a
grid-stride loop), and the text has two parts:

* ``difflab_body(i, ...)``: the group's elementwise lines for element ``i``
  of the loop, in C, each written by its primitive's rule
  (:class:`~difflab.jit.kernels.CSource`); it hands on the values the
  outputs, sums and scatters need;
* ``difflab_fused``: for position ``p``, the elementwise outputs at ``p``,
  the sums' terms (added into the thread's own running total; each thread's
  total is written to its own element of a *partials* array, which CuPy then
  sums: the order is fixed, so the result is the same at every run), and the
  scatters' arrays.

Scatters are *gathered*, not scattered.  Several scatters write one array
(the VJP of ``x[1:]`` and of ``x[:-1]``, added); if thread ``i`` added its
value at ``i + 1`` and thread ``i + 1`` at ``i + 1`` too, two threads would
write one element at once.  Instead the thread of element ``p`` of the array
computes what each scatter puts there: scatter ``w`` with its window starting
at ``d`` puts the value of loop step ``p - d``, if that step exists.  It
adds them in the order the CPU kernels do (the scatter whose window starts
last first, then the others in line order, an element no window covers
being 0): where at most one other window adds into the first's (the
gradient of ``x[1:]`` and ``x[:-1]``), the same sums, the same bits.  With
three windows or more (a stencil), the CPU kernels' own order depends on
their blocks: equal to rounding.  The price is computing the body at
a few neighbouring steps, which is arithmetic on values already in cache:
on a GPU, memory is the cost.

The kernel is compiled with ``--fmad=false``: the compiler would otherwise
turn ``a * b + c`` into one fused multiply-add, which rounds once where
CuPy's separate ``*`` and ``+`` round twice.  So each elementwise value is
CuPy's own, bit for bit (the same C functions, the same roundings); only
the sums add in another order than CuPy's ``sum`` (equal to rounding).
float32 groups compute in float32 (``(float)2.0``, ``sinf``), as CuPy's
float32 arrays do; their sums run in float64, rounded once at the end.

Nothing here needs a GPU to be read, or to be tested: the text is also
valid C++, and the tests compile it for the CPU and run every thread of the
grid one after another (``tests/jit/test_jit_fusion.py``).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from difflab.jit.graph import GraphError
from difflab.jit.kernels import CSource, Layout, _lines, _scalar_local

THREADS = 256  # threads per block
MAX_BLOCKS = 1024  # blocks at most: then each thread takes several positions (grid-stride)

FLOAT64 = np.dtype(np.float64)
FLOAT32 = np.dtype(np.float32)


def input_reads(layout: Layout, sizes: list[int], n: int) -> tuple:
    """How the kernel reads each input: ``"each"`` (element i), ``"one"`` (a number) or
    ``(every, size)`` (broadcast: element ``(i // every) % size``)."""
    return tuple(read if read is not None else "one" if size != n else "each"
                 for read, size in zip(layout.broadcast, sizes))


def _read(k: int, read: Any) -> str:
    if read == "each":
        return f"in{k}[i]"
    if read == "one":
        return f"in{k}[0]"
    every, size = read
    return f"in{k}[(i / {every}LL) % {size}LL]"


def cuda_source(layout: Layout, dtype: Any, reads: tuple) -> str:
    """The CUDA C++ text of a fused group's kernel (``extern "C" difflab_fused``).

    Parameters
    ----------
    layout : Layout
        The group's checked settings (:class:`difflab.jit.kernels.Layout`).
    dtype : dtype-like
        float64 or float32: the type of every input and output.
    reads : tuple
        Per input, how it is read (:func:`input_reads`).

    Returns
    -------
    str
        The source: ``difflab_body`` and ``difflab_fused(n, total, in0, ...,
        y.., r..)``, with one ``y{j}`` per elementwise output (n elements) or
        sum (one partial per thread), then one ``r{j}`` per array the
        scatters write (its whole size).

    Raises
    ------
    NotScalar
        A rule of the group has no C form (the array kernel runs it instead).
    ValueError
        ``dtype`` is neither float64 nor float32.

    Examples
    --------
    >>> from difflab.jit.kernels import Layout
    >>> from difflab.jit.cuda_kernels import cuda_source
    >>> layout = Layout((("mul", ("in0", 2.0)), ("sum", ("t0",))), (1, 0))
    >>> text = cuda_source(layout, "float32", ("each",))
    >>> print(text.splitlines()[9])
        const float t0 = (a0 * ((float)2.0));
    >>> "partial" in text and "--fmad" not in text
    True
    """
    dtype = np.dtype(dtype)
    if dtype not in (FLOAT64, FLOAT32):
        raise ValueError(f"CUDA kernels are written for float64 or float32, not {dtype}")
    real = "double" if dtype == FLOAT64 else "float"
    values = _values(layout)
    source = CSource(single=dtype == FLOAT32)
    body = _lines(layout.body, layout.kinds, source, _scalar_local, source.expr, source.number)
    inputs = "".join(f", const {real}* __restrict__ in{k}" for k in range(layout.n_inputs))
    names = "".join(f", in{k}" for k in range(layout.n_inputs))
    text = list(_NUMBERS)
    text += [f"__device__ __forceinline__ void difflab_body(const long long i{inputs}, "
            f"{real}* v) {{"]
    text += [f"    const {real} a{k} = {_read(k, read)};" for k, read in enumerate(reads)]
    text += [f"    const {real} {line};" for line in body]
    text += [f"    v[{q}] = {_scalar_local(name)};" for q, name in enumerate(values)]
    text += ["}", ""]
    text += _main(layout, real, values, inputs, names)
    return "\n".join(text) + "\n"


#: NVRTC compiles without <math.h>: the names the C text of a number may use (``_c``).
_NUMBERS = ("#ifndef INFINITY", "#define INFINITY __int_as_float(0x7f800000)", "#endif",
            "#ifndef NAN", "#define NAN __int_as_float(0x7fc00000)", "#endif", "")


def _values(layout: Layout) -> list[str]:
    """The names the body hands on: the elementwise outputs, then what sums and scatters read."""
    wanted = [f"t{k}" for k in layout.outputs if layout.kinds[k] == "elementwise"]
    wanted += list(layout.reads.values())
    return list(dict.fromkeys(wanted))


def _offsets(layout: Layout) -> list[int]:
    """The loop steps a thread evaluates the body at, as ``p - d``: d = 0 for its own
    outputs and sums, then each scatter window's start."""
    own = any(layout.kinds[j] in ("elementwise", "reduction") for j in layout.parameters)
    starts = [layout.start[j] for j in _writers_in_order(layout)]
    return list(dict.fromkeys(([0] if own else []) + starts))


def _writers_in_order(layout: Layout) -> list[int]:
    """Scatter lines in the order the CPU kernels write them: each array's first writer
    (``=``), then the others (``+=``) in line order."""
    firsts = [j for j in layout.root if layout.first[layout.root[j]] == j]
    return firsts + [j for j in layout.root if j not in firsts]


def _written(layout: Layout) -> tuple[list[int], list[int]]:
    """The lines whose values the kernel writes, in the order of its parameters: the
    elementwise outputs, then the sums (their partials); the scatters' arrays follow,
    in the order of ``layout.first``."""
    outs = [j for j in layout.parameters if layout.kinds[j] == "elementwise"]
    sums = [j for j in layout.parameters if layout.kinds[j] == "reduction"]
    return outs, sums


def _main(layout: Layout, real: str, values: list[str], inputs: str, names: str) -> list[str]:
    where = {name: q for q, name in enumerate(values)}
    offsets = _offsets(layout)
    outs, sums = _written(layout)
    params = ([f"{real}* __restrict__ y{j}" for j in outs]
              + [f"double* __restrict__ y{j}" for j in sums]
              + [f"{real}* __restrict__ r{root}" for root in layout.first])
    text = [f'extern "C" __global__ void difflab_fused(const long long n, '
            f'const long long total{inputs}, {", ".join(params)}) {{',
            "    const long long thread = (long long)blockIdx.x * blockDim.x + threadIdx.x;",
            "    const long long stride = (long long)blockDim.x * gridDim.x;"]
    text += [f"    double s{j} = 0.0;" for j in sums]
    text += ["    for (long long p = thread; p < total; p += stride) {"]
    for q, d in enumerate(offsets):
        text += [f"        {real} v{q}[{len(values)}];",
                 f"        const bool ok{q} = p - {d}LL >= 0 && p - {d}LL < n;",
                 f"        if (ok{q}) difflab_body(p - {d}LL{names}, v{q});"]
    if outs or sums:
        text += ["        if (ok0) {"]
        text += [f"            y{j}[p] = v0[{where[f't{j}']}];" for j in outs]
        text += [f"            s{j} += (double)v0[{where[layout.reads[j]]}];" for j in sums]
        text += ["        }"]
    for root, first in layout.first.items():
        size = math.prod(layout.shape[root])
        writers = [j for j in _writers_in_order(layout) if layout.root[j] == root]
        text += [f"        if (p < {size}LL) {{",
                 f"            {real} acc = ({real})0;"]
        for j in writers:
            q, value = offsets.index(layout.start[j]), where[layout.reads[j]]
            text += [f"            if (ok{q}) acc = acc + v{q}[{value}];" if j != first
                     else f"            if (ok{q}) acc = v{q}[{value}];"]
        text += [f"            r{root}[p] = acc;", "        }"]
    text += ["    }"]
    text += [f"    y{j}[thread] = s{j};  // this thread's partial sum" for j in sums]
    text += ["}"]
    return text


class CudaKernel:
    """A fused group's CUDA kernel: its text per dtype and way of reading the inputs,
    compiled once each, and the launch that runs it over a loop of n elements.

    Parameters
    ----------
    layout : Layout
        The group's checked settings.
    compile_source : callable, optional
        ``compile_source(text) -> launch``, where ``launch(blocks, threads, args)``
        runs the kernel.  Default: CuPy's ``RawKernel`` with ``--fmad=false``
        (CuPy keeps the compiled code in its own disk cache).  The tests pass
        one that compiles the text for the CPU.
    """

    def __init__(self, layout: Layout, compile_source: Any = None) -> None:
        self.layout = layout
        self.compile_source = compile_source or _cupy_raw_kernel
        self._compiled: dict[tuple, Any] = {}
        self._outs, self._sums = _written(layout)  # (what each launch allocates)
        self._sizes = {root: math.prod(layout.shape[root]) for root in layout.first}

    def _compile(self, text: str) -> Any:
        """The launch of ``text``, or False if the GPU's compiler refuses it (a C function
        this CUDA version lacks): the group then runs as CuPy array code, with a warning."""
        try:
            return self.compile_source(text)
        except Exception as error:  # noqa: BLE001  (CuPy's CompileException, and the like)
            warnings.warn(f"a fused kernel did not compile for the GPU; its lines run as "
                          f"CuPy array code instead (the same results, slower): {error}",
                          RuntimeWarning, stacklevel=2)
            return False

    def run(self, xp: Any, flat: list, n: int, dtype: Any) -> tuple[dict, dict] | None:
        """Run the kernel on the flat inputs: ``(arrays, ys)`` as the CPU runners return
        them (each scatter root's whole array; each output's n values or sum's total);
        None if it could not be compiled."""
        layout, dtype = self.layout, np.dtype(dtype)
        reads = input_reads(layout, [a.size for a in flat], n)
        key = (dtype, reads)
        launch = self._compiled.get(key)
        if launch is None:
            launch = self._compiled[key] = self._compile(cuda_source(layout, dtype, reads))
        if launch is False:
            return None
        for j, start in layout.start.items():  # (settings from a file: each window must fit)
            if start + n > self._sizes[layout.root[j]]:
                raise GraphError(f"a fused kernel over {n} elements scatters into "
                                 f"elements {start}...{start + n - 1} of an array of shape "
                                 f"{layout.shape[j]}")
        total = max([n, *self._sizes.values()])
        blocks = max(1, min(-(-total // THREADS), MAX_BLOCKS))
        ys = {j: xp.empty(n, dtype=dtype) for j in self._outs}
        partials = {j: xp.empty(blocks * THREADS, dtype=FLOAT64) for j in self._sums}
        arrays = {root: xp.empty(size, dtype=dtype) for root, size in self._sizes.items()}
        # (the order of the kernel's parameters: inputs, outputs, partial sums, arrays)
        launch(blocks, THREADS, (np.int64(n), np.int64(total), *flat, *ys.values(),
                                 *partials.values(), *arrays.values()))
        for j, terms in partials.items():
            ys[j] = terms.sum().astype(dtype).reshape(1)
        return arrays, ys


def _cupy_raw_kernel(text: str) -> Any:
    import cupy

    kernel = cupy.RawKernel(text, "difflab_fused", options=("--fmad=false",))

    kernel.compile()  # (now, so that a compiler error is seen here, not at the launch)

    def launch(blocks: int, threads: int, args: tuple) -> None:
        kernel((blocks,), (threads,), args)

    return launch
