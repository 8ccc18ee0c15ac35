r"""A fused line with broadcast inputs, looped row by row (fastpath shortcut 19).  Skip it
on a first read.

The numba loop of a fused line (:func:`~difflab.jit.kernels.scalar_source`) reads a
broadcast input, a bias ``(C,)`` against ``(N, C)`` or a column ``(N, 1)``, through a
counter it moves on at each element (``j0 += 1; if j0 == 32: j0 = 0``).  That branch
in the loop keeps the compiler from running it several elements at a time (SIMD): a
LayerNorm's backward line over (8, 12, 32) reading a weight and a column took 12.9 µs
in its loop, and 3.5 µs written as below.

Here the same line is written as a loop over rows of ``L`` elements, ``L`` the length
of the bias (or, with only columns, the distance between their steps): inside a row a
bias of length ``L`` is read at the row's own index, a column is one number read once
per row, and the inner loop has no branch::

    def kernel(n, in0, in1, in2, y0):
        for r in range(n // 32):
            lo = r * 32
            v0 = in0[lo:lo + 32]
            w0 = y0[lo:lo + 32]
            a2 = in2[r // 1 % 96]          # a column: one number per row
            for k in range(32):
                a0 = v0[k]
                a1 = in1[k]                # a bias of the row's length
                t0 = (a0 * a1)
                t1 = (t0 - a2)
                w0[k] = t1

Each element is computed by the same lines, the same operations in the same order,
as in the plain loop, so the results are the same bits (an addition or product of
two numbers has one correctly rounded result, however many lanes compute it at
once).  Only lines that are all elementwise are written this way: a sum's running
total (its order) and a scatter's windows stay with the plain loop.

:func:`row_length` says whether a line takes this form; :func:`row_kernel` compiles
it (once per line's settings and dtype, kept on disk as the plain kernels are).
:class:`~difflab.jit.program.PreparedKernel` calls it where the shortcuts are on;
``tests/jit/test_jit_row_loops.py`` compares it with the plain loop bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from difflab.jit.kernels import (
    Layout,
    ScalarSource,
    SingleExpr,
    _lines,
    _scalar_local,
    _source_file,
    _text32,
    loop_dtype,
)

#: The shortest row looped this way: a shorter inner loop is too short to run in SIMD
#: lanes, and the counters of the plain loop cost about as much as a row's set-up.
SHORTEST = 8


def row_length(layout: Layout, n: int) -> int | None:
    """The length of the rows a loop of ``n`` elements of this line takes, or None.

    Every broadcast input must be read the same way in every row: one of the row's
    length repeated along the loop (``(every, size) = (1, L)``, a bias), or one
    number per row (``every`` a multiple of ``L``, a column), or one number (size 1).
    The line must be all elementwise (no sums, no scatters), read at least one
    broadcast input of more than one number, and ``n`` must be whole rows of at
    least :data:`SHORTEST` elements.

    Parameters
    ----------
    layout : Layout
        The line's layout (:class:`~difflab.jit.kernels.Layout`).
    n : int
        The number of elements of the loop.

    Returns
    -------
    int or None
        ``L``, or None where the line keeps the plain loop.

    Examples
    --------
    >>> from difflab.jit.kernels import Layout
    >>> from difflab.jit.row_loops import row_length
    >>> body = [("mul", ("in0", "in1")), ("sub", ("t0", "in2"))]
    >>> row_length(Layout(body, [1], [None, (1, 32), (32, 96)]), 96 * 32)  # bias, column
    32
    >>> row_length(Layout(body, [1], [None, (1, 4), None]), 96 * 4) is None  # rows too short
    True
    """
    if layout.root or any(kind != "elementwise" for kind in layout.kinds):
        return None
    spreads = [read for read in layout.broadcast if read is not None and read[1] > 1]
    if not spreads:
        return None
    biases = {size for every, size in spreads if every == 1}
    if len(biases) > 1:
        return None
    length = biases.pop() if biases else min(every for every, _ in spreads)
    if length < SHORTEST or n % length or not all(
            (every == 1 and size == length) or (every > 1 and every % length == 0)
            for every, size in spreads):
        return None
    return length


def row_source(layout: Layout, dtype: Any, length: int) -> str:
    """The source of the line's loop by rows of ``length`` (see the module's text).

    Parameters
    ----------
    layout : Layout
        The line's layout; :func:`row_length` gave ``length`` for it.
    dtype : dtype-like
        float64 or float32 (a float32 line computes in float32, as the plain loop does).
    length : int
        The row length.

    Returns
    -------
    str
        ``def kernel(n, in0, ..., y0, ...)``: the plain loop's arguments.

    Examples
    --------
    >>> from difflab.jit.kernels import Layout
    >>> from difflab.jit.row_loops import row_source
    >>> layout = Layout([("add", ("in0", "in1"))], [0], [None, (1, 8)])
    >>> print(row_source(layout, "float64", 8))  # doctest: +NORMALIZE_WHITESPACE
    # a float64 loop by rows of 8
    def kernel(n, in0, in1, y0):
        for r in range(n // 8):
            lo = r * 8
            v0 = in0[lo:lo + 8]
            w0 = y0[lo:lo + 8]
            for k in range(8):
                a0 = v0[k]
                a1 = in1[k]
                t0 = (a0 + a1)
                w0[k] = t0
    """
    dtype = loop_dtype(dtype)
    if dtype is None:
        raise ValueError("numba kernels are written for float64 or float32 loops")
    single = dtype == np.float32
    params = ", ".join(["n"] + [f"in{k}" for k in range(layout.n_inputs)]
                       + [f"y{j}" for j in layout.parameters])
    row, inner = [], []  # (lines once per row; lines once per element)
    for k, read in enumerate(layout.broadcast):
        if read is None:
            row.append(f"v{k} = in{k}[lo:lo + {length}]")
            inner.append(f"a{k} = v{k}[k]")
        elif read[1] == 1:
            row.append(f"a{k} = in{k}[0]")
        elif read[0] == 1:
            inner.append(f"a{k} = in{k}[k]")
        else:
            row.append(f"a{k} = in{k}[r // {read[0] // length} % {read[1]}]")
    row += [f"w{j} = y{j}[lo:lo + {length}]" for j in layout.parameters]
    inner += (_lines(layout.body, layout.kinds, ScalarSource(True), _scalar_local,
                     SingleExpr, _text32) if single
              else _lines(layout.body, layout.kinds, ScalarSource(), _scalar_local))
    inner += [f"w{j}[k] = t{j}" for j in layout.parameters]
    return (f"# a {dtype.name} loop by rows of {length}\n"
            + f"def kernel({params}):\n"
            + f"    for r in range(n // {length}):\n"
            + f"        lo = r * {length}\n"
            + "".join(f"        {line}\n" for line in row)
            + f"        for k in range({length}):\n"
            + "".join(f"            {line}\n" for line in inner))


_COMPILED: dict = {}  # (source text) -> numba's dispatcher


def row_kernel(layout: Layout, dtype: Any, n: int) -> Callable | None:
    """The line's loop by rows, compiled by numba: ``kernel(n, *inputs, *outputs)`` as the
    plain loop takes them; None where :func:`row_length` says no.

    Parameters
    ----------
    layout : Layout
        The line's layout.
    dtype : dtype-like
        The arrays' dtype, float64 or float32.
    n : int
        The loop's number of elements (each call's: a line has one shape).

    Returns
    -------
    numba dispatcher or None

    Examples
    --------
    >>> import numpy as np
    >>> from difflab.jit import fusion
    >>> from difflab.jit.kernels import Layout
    >>> from difflab.jit.row_loops import row_kernel
    >>> layout = Layout([("mul", ("in0", "in1"))], [0], [None, (1, 8)])
    >>> kernel = row_kernel(layout, np.float64, 16) if fusion.USE_NUMBA else None
    >>> x, b, y = np.arange(16.0), np.arange(8.0), np.empty(16)
    >>> _ = kernel(16, x, b, y) if kernel is not None else np.multiply(x, np.tile(b, 2), y)
    >>> bool((y == x * np.tile(b, 2)).all())
    True
    """
    length = row_length(layout, n)
    if length is None or loop_dtype(dtype) is None:
        return None
    source = row_source(layout, dtype, length)
    kernel = _COMPILED.get(source)
    if kernel is None:
        import numba

        filename = _source_file(source)
        namespace: dict = {"math": math, "np": np, "f32": np.float32, "__name__": __name__}
        exec(compile(source, filename or "<difflab row loop>", "exec"),  # noqa: S102
             namespace)
        # (as the plain loops: error_model="numpy" gives inf for 1/0; cached on disk)
        kernel = _COMPILED[source] = numba.njit(
            error_model="numpy", cache=filename is not None)(namespace["kernel"])
    return kernel
