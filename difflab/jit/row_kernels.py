r"""Sums along the last axis, added as NumPy adds them, as numba loops (fastpath shortcut 14).

NumPy sums a row of a C-contiguous array (``x.sum(axis=-1)``) with one call
of its inner loop per row.  For short rows, an attention layer's 12 scores
or a LayerNorm's 32 features, that call costs more than the additions: a
softmax over (8, 4, 12, 12) scores spent 9 of its 31 µs in ``e.sum(-1)``.
Here one loop does every row.

The loop adds in NumPy's own order, so the bits are the same.  NumPy's inner
loop sums a row of ``n`` elements *pairwise* (``pairwise_sum`` in its
``loops_utils.h``): fewer than 8 one after the other; up to 128 in eight
running sums (elements ``k``, ``k + 8``, ``k + 16``, ... into the k-th), which
are then added as ``((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))``, the
elements after the last full block of 8 one by one; and the reduction starts
from ``+0.0``.  :func:`row_sums` computes exactly that for rows of at most
:data:`LONGEST` elements (longer rows, which NumPy splits in halves, take
NumPy's own sum).  ``tests/jit/test_jit_row_kernels.py`` compares the loops with
NumPy on random rows of every length up to :data:`LONGEST`, with zeros of both
signs, infinities and NaN.

The sums, softmax, normalized rows and losses take float64 rows only: NumPy's
float32 sum keeps float32 running sums, which a loop could do as well, but
nothing measured here needs it.  The bias loop below takes float32 as well.

A bias added to every row (a ``linear``'s ``y += b``) is a loop here too
(:func:`rows_plus`): NumPy broadcasts ``b`` with a call of its inner loop per
row as well (an attention layer's projections of 96 rows of 96: 34 µs for the product
and the bias, 29 µs with the loop).  Each sum is one IEEE
addition of the same two numbers, so any float dtype gives NumPy's bits.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

#: The longest row summed by the loops; NumPy cuts longer rows in halves first.
LONGEST = 128


def _row_sum(row, n):  # pragma: no cover (numba compiles it)
    """NumPy's pairwise sum of ``row[:n]`` (n <= 128), then ``+0.0 + sum`` as its reduce."""
    if n < 8:
        total = -0.0
        for i in range(n):
            total += row[i]
        return 0.0 + total
    r0, r1, r2, r3 = row[0], row[1], row[2], row[3]
    r4, r5, r6, r7 = row[4], row[5], row[6], row[7]
    i = 8
    end = n - n % 8
    while i < end:
        r0 += row[i]
        r1 += row[i + 1]
        r2 += row[i + 2]
        r3 += row[i + 3]
        r4 += row[i + 4]
        r5 += row[i + 5]
        r6 += row[i + 6]
        r7 += row[i + 7]
        i += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        total += row[i]
        i += 1
    return 0.0 + total


def _sums(x, out, scale):  # pragma: no cover (numba compiles it)
    """out[r] = (sum of row r) * scale, for the rows of a 2-d array (scale 1: the sum)."""
    rows, n = x.shape
    for r in range(rows):
        out[r] = _row_sum(x[r], n) * scale if scale != 1.0 else _row_sum(x[r], n)


def _shifted(x, y):  # pragma: no cover (numba compiles it)
    """y = x - (the largest entry of x's row), NaN where the row has one (np.maximum's)."""
    rows, n = x.shape
    for r in range(rows):
        top = x[r, 0]
        for j in range(1, n):
            v = x[r, j]
            if v > top or v != v:
                top = v
        for j in range(n):
            y[r, j] = x[r, j] - top


def _divided(e):  # pragma: no cover (numba compiles it)
    """Each row of e divided by its sum, in place."""
    rows, n = e.shape
    for r in range(rows):
        total = _row_sum(e[r], n)
        for j in range(n):
            e[r, j] = e[r, j] / total


def _normalized(x, y, eps):  # pragma: no cover (numba compiles it)
    """y = (x - μ) / √(σ² + ε) along each row, as ``Normalize.forward``'s NumPy lines:
    μ = sum / n (``x.mean``), σ² the mean of the squared centred values, 1 / √(σ² + ε)."""
    rows, n = x.shape
    squares = np.empty(n, x.dtype)
    for r in range(rows):
        mean = _row_sum(x[r], n) / n
        for j in range(n):
            c = x[r, j] - mean
            squares[j] = c * c
        invstd = 1.0 / np.sqrt(_row_sum(squares, n) / n + eps)
        for j in range(n):
            y[r, j] = (x[r, j] - mean) * invstd


def _plus_row(y, b):  # pragma: no cover (numba compiles it)
    """y[r] += b for every row r of a 2-d array (``y[r, j] + b[j]``, as NumPy's add)."""
    rows, n = y.shape
    for r in range(rows):
        for j in range(n):
            y[r, j] = y[r, j] + b[j]


def _picked(z, target, ignore, t, w, losses):  # pragma: no cover (numba compiles it)
    """``nll_loss``'s lines row by row: t = target (0 where ignored), w = 1 (0 where
    ignored), losses = -z[row, t] w; False (nothing trusted) for a class out of range."""
    rows, classes = z.shape
    for r in range(rows):
        k = target[r]
        if k == ignore:
            k = 0
            w[r] = 0.0
        else:
            w[r] = 1.0
        t[r] = k
        if k < 0:  # (NumPy's index from the end)
            k += classes
        if k < 0 or k >= classes:
            return False
        losses[r] = -z[r, k] * w[r]
    return True


def _scattered(values, rows, columns, out):  # pragma: no cover (numba compiles it)
    """``np.add.at(out, (rows, columns), values)`` in its order; False for an index out of
    range (before any write)."""
    n, m = out.shape
    for i in range(values.shape[0]):
        if not (-n <= rows[i] < n and -m <= columns[i] < m):
            return False
    for i in range(values.shape[0]):
        out[rows[i], columns[i]] += values[i]
    return True


class _Loops(NamedTuple):
    """The compiled loops, one per function above of the same name."""

    sums: Callable  # row sums (times a scale)
    shifted: Callable  # the softmax's shift by the row's largest entry
    divided: Callable  # ... and its division by the row's sum
    normalized: Callable  # a LayerNorm's row
    plus_row: Callable  # a bias added to every row
    picked: Callable  # a negative log-likelihood's picks
    scattered: Callable  # ... and its backward's scatter


_KERNEL: list[_Loops] = []  # the compiled loops, made on first use


def _kernels() -> _Loops:
    """The compiled loops (made by numba on the first call)."""
    global _row_sum
    if not _KERNEL:
        import numba

        jit = numba.njit(error_model="numpy", cache=True)
        _row_sum = jit(_row_sum)  # (the loops below call it compiled)
        _KERNEL.append(_Loops(jit(_sums), jit(_shifted), jit(_divided), jit(_normalized),
                              jit(_plus_row), jit(_picked), jit(_scattered)))
    return _KERNEL[0]


def fits(x: Any) -> bool:
    """Whether the loops take ``x``: a C-contiguous float64 NumPy array of at least one
    dimension, with rows of 1 to :data:`LONGEST` elements."""
    return (type(x) is np.ndarray and x.dtype is _FLOAT64 and x.ndim >= 1
            and 0 < x.shape[-1] <= LONGEST and x.flags.c_contiguous)


_FLOAT64 = np.dtype(np.float64)


def row_sums(x: np.ndarray, scale: float = 1.0, keepdims: bool = False) -> np.ndarray:
    """``np.add.reduce(x, axis=-1, keepdims=keepdims) * scale``, the same bits, in one loop.

    Parameters
    ----------
    x : numpy.ndarray
        Where :func:`fits` says so (else NumPy's own reduce is called).
    scale : float, default 1.0
        A factor each sum is multiplied by (a mean's ``1 / n``); 1 multiplies nothing.
    keepdims : bool, default False
        Keep the summed axis, of length 1.

    Returns
    -------
    numpy.ndarray
        The sums, of ``x.shape[:-1]`` (``+ (1,)`` with ``keepdims``).

    Examples
    --------
    >>> import numpy as np
    >>> from difflab.jit.row_kernels import row_sums
    >>> x = np.random.default_rng(0).normal(size=(4, 3, 12))
    >>> row_sums(x).tobytes() == np.add.reduce(x, axis=-1).tobytes()
    True
    >>> row_sums(x, 0.5, keepdims=True).shape
    (4, 3, 1)
    """
    if not fits(x):
        total = np.add.reduce(x, axis=-1, keepdims=keepdims)
        return total * scale if scale != 1.0 else total
    out = np.empty(x.shape[:-1] + ((1,) if keepdims else ()), x.dtype)
    _kernels().sums(x.reshape(-1, x.shape[-1]), out.reshape(-1), scale)
    return out


def softmax_rows(x: np.ndarray) -> np.ndarray:
    """Softmax along the last axis, as ``difflab.softmax`` computes it: the same bits.

    ``exp(x - max) / sum(exp(x - max))`` along each row: the shift and the division
    as loops, the exponential NumPy's own (a loop's ``exp`` is the C library's,
    which need not round as NumPy's does).

    Parameters
    ----------
    x : numpy.ndarray
        Where :func:`fits` says so.

    Returns
    -------
    numpy.ndarray
        Of ``x``'s shape.

    Examples
    --------
    >>> import numpy as np, difflab as dl
    >>> from difflab.jit.row_kernels import softmax_rows
    >>> x = np.random.default_rng(1).normal(size=(2, 5, 12))
    >>> softmax_rows(x).tobytes() == dl.softmax(dl.tensor(x), -1).numpy().tobytes()
    True
    """
    loops, flat = _kernels(), x.reshape(-1, x.shape[-1])
    e = np.empty(flat.shape, x.dtype)
    loops.shifted(flat, e)
    np.exp(e, out=e)
    loops.divided(e)
    return e.reshape(x.shape)


def normalized_rows(x: np.ndarray, eps: float) -> np.ndarray:
    """Each row centred and scaled to unit variance, as ``difflab.ops.nn_ops.Normalize``'s
    forward computes it over the last axis (a LayerNorm's): the same bits.

    Parameters
    ----------
    x : numpy.ndarray
        Where :func:`fits` says so.
    eps : float
        Added to the variance before its square root.

    Returns
    -------
    numpy.ndarray
        Of ``x``'s shape.

    Examples
    --------
    >>> import numpy as np, difflab as dl
    >>> from difflab.jit.row_kernels import normalized_rows
    >>> x = np.random.default_rng(2).normal(size=(3, 4, 32))
    >>> want = dl.nn.functional.layer_norm(dl.tensor(x), (32,)).numpy()
    >>> normalized_rows(x, 1e-5).tobytes() == want.tobytes()
    True
    """
    flat = x.reshape(-1, x.shape[-1])
    y = np.empty(flat.shape, x.dtype)
    _kernels().normalized(flat, y, eps)
    return y.reshape(x.shape)


_ROW_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))
#: The fewest rows :func:`rows_plus` adds a bias to by its loop: (8, 96) took 7.1 µs
#: either way, (96, 96) 34 µs with NumPy's ``y += b`` and 29 µs with the loop.
MANY_ROWS = 32


def rows_plus(shape: tuple, dtype: np.dtype) -> Callable | None:
    """``add(y, b)``: ``y += b`` in place, ``b`` added to each row (last axis) of a
    C-contiguous ``y`` of this shape and dtype, in one loop: NumPy's bits.  None where
    it does not pay or apply: no numba, another dtype, rows longer than :data:`LONGEST`
    (NumPy's inner loop then runs long enough) or fewer than :data:`MANY_ROWS` of them
    (NumPy's calls then cost about as much as calling the loop).

    Parameters
    ----------
    shape : tuple of int
        The shape of every ``y`` (a ``linear`` node's: ``x @ w.T`` just computed).
    dtype : numpy.dtype
        Their dtype (float64 or float32), and ``b``'s.

    Returns
    -------
    callable or None
        ``add(y, b)`` for C-contiguous NumPy arrays ``y`` of ``shape`` and ``b`` of
        ``(shape[-1],)``, both of ``dtype`` (the caller checks).

    Examples
    --------
    >>> import numpy as np
    >>> from difflab.jit.row_kernels import rows_plus
    >>> rng = np.random.default_rng(3)
    >>> y, b = rng.normal(size=(4, 12, 5)), rng.normal(size=5)
    >>> want = y + b
    >>> add = rows_plus(y.shape, y.dtype)
    >>> add(y, b)
    >>> y.tobytes() == want.tobytes()
    True
    """
    from difflab.jit.fusion import USE_NUMBA

    shape = tuple(shape)
    if not USE_NUMBA or np.dtype(dtype) not in _ROW_DTYPES or not shape \
            or not 0 < shape[-1] <= LONGEST or math.prod(shape[:-1]) < MANY_ROWS:
        return None
    kernel, flat = _kernels().plus_row, (math.prod(shape[:-1]), shape[-1])

    def add(y: np.ndarray, b: np.ndarray) -> None:
        kernel(y.reshape(flat), b)
    return add


_INT64 = np.dtype(np.int64)


def nll_loss_rows(z: np.ndarray, target: np.ndarray, ignore_index: int, reduction: str
                  ) -> tuple | None:
    """``NLLLoss.forward`` without class weights, as loops: the loss and the saved
    ``(rows, t, w)``, the same bits; None where the loops do not apply.

    They apply to a C-contiguous float64 ``z`` of at most :data:`LONGEST` rows, an int64
    ``target`` of one entry per row, every class in range (else None: the primitive's
    own forward raises), reduction ``"mean"`` or ``"sum"``, an ``ignore_index`` that
    is an int64 (a larger Python int is left to the primitive).  The sums are NumPy's
    pairwise ones (:func:`row_sums`' loop).

    Parameters
    ----------
    z : numpy.ndarray
        Log-probabilities, ``(N, C)``.
    target : numpy.ndarray
        Class indices, ``(N,)``.
    ignore_index : int
        A target that counts for nothing.
    reduction : str
        ``"mean"`` (over the targets not ignored) or ``"sum"``.

    Returns
    -------
    tuple or None
        ``(loss, rows, t, w)``: the 0-d loss; ``arange(N)``, the targets with 0 where
        ignored, and the weights (1 or 0), as ``NLLLoss.forward`` saves them.

    Examples
    --------
    >>> import numpy as np
    >>> from difflab.jit.row_kernels import nll_loss_rows
    >>> z = np.log(np.array([[0.5, 0.25, 0.25], [0.1, 0.8, 0.1]]))
    >>> loss, rows, t, w = nll_loss_rows(z, np.array([0, -100]), -100, "mean")
    >>> bool(loss == -np.log(0.5)), t.tolist(), w.tolist()
    (True, [0, 0], [1.0, 0.0])
    """
    if not (type(z) is np.ndarray and type(target) is np.ndarray and z.dtype is _FLOAT64
            and target.dtype is _INT64 and z.ndim == 2 and target.shape == z.shape[:1]
            and 0 < z.shape[0] <= LONGEST and z.flags.c_contiguous
            and reduction in ("mean", "sum") and type(ignore_index) is int
            and -2**63 <= ignore_index < 2**63):  # (an int64: numba types no other int)
        return None
    loops, n = _kernels(), z.shape[0]
    t, losses_and_weights = np.empty(n, _INT64), np.empty((2, n), _FLOAT64)
    losses, w = losses_and_weights  # (two rows: both summed by one call below)
    if not loops.picked(z, target, ignore_index, t, w, losses):
        return None
    sums = np.empty(2, _FLOAT64)
    loops.sums(losses_and_weights, sums, 1.0)
    loss = sums[0] / sums[1] if reduction == "mean" else sums[0]
    return np.asarray(loss), np.arange(n), t, w


def scatter_into_rows(values: np.ndarray, rows: np.ndarray, columns: np.ndarray,
                      shape: tuple) -> np.ndarray | None:
    """``scatter_add(values, (rows, columns), shape)`` of a matrix (zeros, then
    ``np.add.at``) as one loop, the same bits; None where it does not apply (not float64
    values of one entry per index, indices out of range: the primitive then raises).

    Parameters
    ----------
    values : numpy.ndarray
        ``(K,)`` float64.
    rows, columns : numpy.ndarray
        ``(K,)`` int64 indices (negative ones from the end, as NumPy's).
    shape : tuple of int
        The matrix, ``(N, C)``.

    Returns
    -------
    numpy.ndarray or None
        The matrix: zeros, each value added at its place, in order.

    Examples
    --------
    >>> import numpy as np
    >>> from difflab.jit.row_kernels import scatter_into_rows
    >>> v, r, c = np.array([1.0, 2.0, 3.0]), np.array([0, 1, 0]), np.array([2, 0, -1])
    >>> scatter_into_rows(v, r, c, (2, 3)).tolist()
    [[0.0, 0.0, 4.0], [2.0, 0.0, 0.0]]
    """
    if not (type(values) is np.ndarray and type(rows) is np.ndarray
            and type(columns) is np.ndarray and values.dtype is _FLOAT64
            and rows.dtype is _INT64 and columns.dtype is _INT64 and values.ndim == 1
            and rows.shape == values.shape == columns.shape and len(shape) == 2):
        return None
    out = np.zeros(shape, _FLOAT64)
    return out if _kernels().scattered(values, rows, columns, out) else None
