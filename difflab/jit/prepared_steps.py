r"""Plain steps of a program called straight: NumPy's own function, settings bound once.

Fastpath shortcut 14 (:mod:`difflab.fastpath`).  A primitive's ``forward``
checks its settings and notes, on ``ctx``, what its VJP will need; in a
:class:`~difflab.jit.program.Program` both are known already: the trace
checked the settings, and a step whose saved arrays nothing reads needs no
notes.  At the sizes of teaching models (a GRU's 8 x 96 gates) those checks
cost more than the arithmetic: ``sum`` of an 8 x 96 array took 4.4 µs
through ``Sum.forward`` and 1.1 µs as ``np.add.reduce``.

So for the few primitives in :data:`MAKERS`, :func:`prepared_forward` gives
the step a forward that calls the very NumPy function the primitive's
``forward`` calls, with the same arguments (the axes, shape or index worked
out once, as ``forward`` works them out):

=============  =====================================  =================================
primitive      its forward calls                      the prepared step calls
=============  =====================================  =================================
``sum``        ``np.sum(x, axis=axes, keepdims)``     ``np.add.reduce`` (what np.sum calls)
``mean``       ``np.sum(...) * mean_scale(n)``        ``np.add.reduce(...) * scale``
``linear``     ``y = x @ w.T; y += b``                the same two (32 rows or more of at
                                                      most 128: the bias added by a loop)
``softmax``    ``exp(x - max(x)) / sum``              the same, the max taken across rows
``normalize``  ``(x - mean) / sqrt(var + eps)``       the same lines, as one loop (last axis)
``reshape``    ``np.reshape(x, shape)``               ``x.reshape(shape)``
``permute``    ``np.transpose(x, axes)``              ``x.transpose(axes)``
``matmul``     ``np.matmul(a, b)``                    ``np.matmul(a, b)``
``index``      ``x[index]``                           ``x[index]``
``cat``        ``np.concatenate(xs, axis)``           ``np.concatenate(xs, axis)``
``add``        ``a + b``                              ``np.add(a, b)``
``relu``       ``np.maximum(0, x)``                   one loop, NumPy's bits (shortcut 20:
``sign``       ``np.sign(x)``                         ``sign_loops.py``; large floats)
=============  =====================================  =================================

Two steps read values inside their settings, a loss's ``nll_loss`` (its targets) and a
matrix's ``scatter_add`` of two index arrays (its backward's: the picked indices);
:data:`READING_SETTINGS` gives them
loops that take the settings at each call (:mod:`difflab.jit.row_kernels`: the picks and
NumPy's pairwise sums; ``np.add.at``'s additions in its order).

And a GRU step (``gru_cell``) and its VJP (``gru_cell_vjp0``) are numba
loops computing the rule's own sums and products in the rule's order, the
forward's two ``tanh`` left to NumPy (:mod:`difflab.jit.recurrent_kernels`).
A float64 ``sum``, ``mean``, ``softmax`` or ``normalize`` along the last axis of short rows
(at most 128: an attention layer's scores, a LayerNorm's features) adds each
row in one loop over all the rows, in NumPy's pairwise order
(:mod:`difflab.jit.row_kernels`): NumPy calls its inner loop once per row.

The same call gives the same bits (the tests compare each prepared step with
its primitive's forward).  Anything else takes the primitive's own forward:
an argument that is not a NumPy array of the node's dtype (a GPU array, a
number, another dtype: ``sum`` of integers promotes), or a step whose saved
arrays a later step reads.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from difflab.jit import row_kernels, sign_loops
from difflab.jit.graph import Node
from difflab.jit.ops import VJP
from difflab.jit.recurrent_kernels import gru_cell_forward, gru_vjp_forward
from difflab.ops.nn_recurrent import GRUCell
from difflab.ops.registry import Context
from difflab.ops.shapes import mean_scale


def _plain_arrays(dtype: np.dtype, *arrays: Any) -> bool:
    """Whether every argument is a NumPy array of ``dtype`` (the case prepared for)."""
    for a in arrays:
        if type(a) is not np.ndarray or a.dtype is not dtype:
            return False
    return True


def _sum(node: Node, fallback: Callable, in_shape: tuple | None) -> Callable | None:
    axis, keepdims = node.params.get("axis"), node.params.get("keepdims", False)
    if in_shape is None:
        return None
    ndim = len(in_shape)
    axes = None if axis is None else tuple(
        a % ndim for a in ((axis,) if isinstance(axis, int) else axis))
    dtype, reduce = np.dtype(node.dtype), np.add.reduce

    def forward(ctx: Any, xp: Any, x: Any) -> Any:
        if type(x) is np.ndarray and x.dtype is dtype:
            return reduce(x, axis=axes, keepdims=keepdims)
        return fallback(ctx, xp, x)
    if not _by_rows(axes, in_shape, dtype):
        return forward

    def by_rows(ctx: Any, xp: Any, x: Any) -> Any:  # (the last axis of short rows: one loop)
        if row_kernels.fits(x):
            return row_kernels.row_sums(x, 1.0, keepdims)
        return forward(ctx, xp, x)
    return by_rows


def _by_rows(axes: tuple | None, in_shape: tuple, dtype: np.dtype) -> bool:
    """Whether a sum over ``axes`` of an array of ``in_shape`` is one along its last axis
    that :mod:`~difflab.jit.row_kernels` computes (float64 rows of at most its LONGEST,
    numba there)."""
    from difflab.jit.fusion import USE_NUMBA

    ndim = len(in_shape)
    return (USE_NUMBA and dtype == np.float64 and ndim >= 1 and axes == (ndim - 1,)
            and 0 < in_shape[-1] <= row_kernels.LONGEST)


def _mean(node: Node, fallback: Callable, in_shape: tuple | None) -> Callable | None:
    axis, keepdims = node.params.get("axis"), node.params.get("keepdims", False)
    if in_shape is None:
        return None
    ndim = len(in_shape)
    axes = None if axis is None else tuple(
        a % ndim for a in ((axis,) if isinstance(axis, int) else axis))
    scale = mean_scale(math.prod(in_shape if axes is None else [in_shape[a] for a in axes]))
    dtype, reduce = np.dtype(node.dtype), np.add.reduce

    def forward(ctx: Any, xp: Any, x: Any) -> Any:
        if type(x) is np.ndarray and x.dtype is dtype:
            return reduce(x, axis=axes, keepdims=keepdims) * scale
        return fallback(ctx, xp, x)
    if not _by_rows(axes, in_shape, dtype) or type(scale) is not float:
        return forward

    def by_rows(ctx: Any, xp: Any, x: Any) -> Any:  # (the last axis of short rows: one loop)
        if row_kernels.fits(x):
            return row_kernels.row_sums(x, scale, keepdims)
        return forward(ctx, xp, x)
    return by_rows


def _linear(node: Node, fallback: Callable, in_shape: tuple | None) -> Callable | None:
    """``x @ w.T``, then ``y += b``; where the rows are short (at most 128) and many
    (:data:`~difflab.jit.row_kernels.MANY_ROWS`, 32, or more) the bias is added by one
    loop over the rows (:func:`~difflab.jit.row_kernels.rows_plus`: NumPy adds a
    broadcast row with a call of its inner loop per row)."""
    dtype, matmul, shape = np.dtype(node.dtype), np.matmul, tuple(node.shape)
    rows_plus = row_kernels.rows_plus(shape, dtype)
    row = shape[-1:]  # (the bias's shape, read by the loop)

    def forward(ctx: Any, xp: Any, x: Any, w: Any, b: Any = None) -> Any:
        if _plain_arrays(dtype, x, w) and (b is None or _plain_arrays(dtype, b)):
            y = matmul(x, w.T)
            if b is None:
                return y
            if rows_plus is not None and y.shape == shape and b.shape == row \
                    and b.flags.c_contiguous:
                rows_plus(y, b)
            else:
                y += b
            return y
        return fallback(ctx, xp, x, w, *(() if b is None else (b,)))
    return forward


def _softmax(node: Node, fallback: Callable, in_shape: tuple | None) -> Callable | None:
    """Softmax's own lines, but its shift (the largest entry along ``dim``) taken along the
    first axis of a contiguous copy with ``dim`` moved first: NumPy's maximum over a short
    last axis (12 entries) costs a call per row, 17 µs for 384 rows against 2 µs.

    The largest entry is the same number either way (NaN if one is); only where it is
    a zero may its sign differ, and ``x - 0`` and ``x - (-0)`` then differ only for
    ``x = -0``, where ``exp`` gives 1 for both: the same bits out.
    """
    dim, dtype = node.params.get("dim"), np.dtype(node.dtype)
    if in_shape is None or not isinstance(dim, int) or dtype.kind != "f":
        return None
    dim %= len(in_shape)
    maximum, exp, moveaxis, contiguous = np.maximum.reduce, np.exp, np.moveaxis, \
        np.ascontiguousarray

    def forward(ctx: Any, xp: Any, x: Any) -> Any:
        if type(x) is not np.ndarray or x.dtype is not dtype or x.size == 0:
            return fallback(ctx, xp, x)
        shift = np.expand_dims(maximum(contiguous(moveaxis(x, dim, 0)), axis=0), dim)
        e = exp(x - shift)
        return e / e.sum(axis=dim, keepdims=True)
    if not _by_rows((dim,), in_shape, dtype):
        return forward

    def by_rows(ctx: Any, xp: Any, x: Any) -> Any:  # (the last axis of short rows: loops)
        if row_kernels.fits(x) and x.size:
            return row_kernels.softmax_rows(x)
        return forward(ctx, xp, x)
    return by_rows


def _normalize(node: Node, fallback: Callable, in_shape: tuple | None) -> Callable | None:
    """A LayerNorm's ``normalize`` over the last axis of short float64 rows, as one loop
    (:func:`~difflab.jit.row_kernels.normalized_rows`: ``Normalize.forward``'s bits)."""
    axes, eps = node.params.get("axes"), node.params.get("eps")
    if in_shape is None or len(node.args) != 1 or not isinstance(axes, tuple) \
            or type(eps) is not float:
        return None
    axes = tuple(a % len(in_shape) for a in axes) if in_shape else None
    if not _by_rows(axes, in_shape, np.dtype(node.dtype)):
        return None

    def by_rows(ctx: Any, xp: Any, x: Any) -> Any:
        if row_kernels.fits(x):
            return row_kernels.normalized_rows(x, eps)
        return fallback(ctx, xp, x)
    return by_rows


def _reshape(node: Node, fallback: Callable, in_shape: tuple | None) -> Callable | None:
    shape, dtype = tuple(node.shape), np.dtype(node.dtype)

    def forward(ctx: Any, xp: Any, x: Any) -> Any:
        if type(x) is np.ndarray and x.dtype is dtype:
            return x.reshape(shape)
        return fallback(ctx, xp, x)
    return forward


def _permute(node: Node, fallback: Callable, in_shape: tuple | None) -> Callable | None:
    ndim, dtype = len(node.shape), np.dtype(node.dtype)
    axes = tuple(a % ndim for a in node.params["axes"]) if ndim else ()

    def forward(ctx: Any, xp: Any, x: Any) -> Any:
        if type(x) is np.ndarray and x.dtype is dtype:
            return x.transpose(axes)
        return fallback(ctx, xp, x)
    return forward


def _matmul(node: Node, fallback: Callable, in_shape: tuple | None) -> Callable | None:
    dtype, matmul = np.dtype(node.dtype), np.matmul

    def forward(ctx: Any, xp: Any, a: Any, b: Any) -> Any:
        if _plain_arrays(dtype, a, b):
            return matmul(a, b)
        return fallback(ctx, xp, a, b)
    return forward


def _index(node: Node, fallback: Callable, in_shape: tuple | None) -> Callable | None:
    index, dtype = node.params["index"], np.dtype(node.dtype)
    if not isinstance(index, (int, slice, tuple)) or isinstance(index, tuple) and not all(
            isinstance(i, (int, slice, type(None), type(Ellipsis))) for i in index):
        return None  # (an integer array or a mask: the primitive's own checks)

    def forward(ctx: Any, xp: Any, x: Any) -> Any:
        if type(x) is np.ndarray and x.dtype is dtype:
            return x[index]
        return fallback(ctx, xp, x)
    return forward


def _cat(node: Node, fallback: Callable, in_shape: tuple | None) -> Callable | None:
    axis, dtype, concatenate = node.params.get("axis", 0), np.dtype(node.dtype), np.concatenate

    def forward(ctx: Any, xp: Any, *xs: Any) -> Any:
        if _plain_arrays(dtype, *xs):
            return concatenate(xs, axis=axis)
        return fallback(ctx, xp, *xs)
    return forward


def _add(node: Node, fallback: Callable, in_shape: tuple | None) -> Callable | None:
    dtype, add = np.dtype(node.dtype), np.add

    def forward(ctx: Any, xp: Any, a: Any, b: Any) -> Any:
        if _plain_arrays(dtype, a, b):
            return add(a, b)
        return fallback(ctx, xp, a, b)
    return forward


def _one_loop(node: Node, fallback: Callable, in_shape: tuple | None) -> Callable | None:
    """``relu`` or ``sign`` of a large float array as one numba loop, NumPy's bits
    (:mod:`~difflab.jit.sign_loops`, fastpath shortcut 20)."""
    dtype = np.dtype(node.dtype)
    loop = sign_loops.elementwise_loop(node.op_name, dtype, math.prod(node.shape))
    if loop is None or in_shape is None or tuple(in_shape) != tuple(node.shape):
        return None

    def forward(ctx: Any, xp: Any, x: Any) -> Any:
        if type(x) is np.ndarray and x.dtype is dtype and x.flags.c_contiguous:
            return loop(x)
        return fallback(ctx, xp, x)
    return forward


#: primitive name -> maker of its prepared forward (given the node and the plain forward)
MAKERS: dict[str, Callable[[Node, Callable, Any], Callable | None]] = {
    "sum": _sum,
    "mean": _mean,
    "linear": _linear,
    "softmax": _softmax,
    "normalize": _normalize,
    "reshape": _reshape,
    "permute": _permute,
    "matmul": _matmul,
    "index": _index,
    "cat": _cat,
    "add": _add,
    "relu": _one_loop,
    "sign": _one_loop,
}


def _nll_loss(node: Node, plain: Callable) -> Callable | None:
    """A negative log-likelihood without class weights as loops
    (:func:`~difflab.jit.row_kernels.nll_loss_rows`), saving what ``NLLLoss`` saves;
    ``plain``: the primitive's own forward, settings passed by name."""
    def forward(ctx: Any, xp: Any, z: Any, target: Any, weight: Any, ignore_index: Any,
                reduction: Any) -> Any:
        found = None if weight is not None else row_kernels.nll_loss_rows(
            z, target, ignore_index, reduction)
        if found is None:
            return plain(ctx, xp, z, target=target, weight=weight,
                         ignore_index=ignore_index, reduction=reduction)
        loss, rows, t, w = found
        ctx.reduction, ctx.shape = reduction, z.shape
        ctx.save(rows, t, w)
        return loss
    return forward


def _scatter_add(node: Node, plain: Callable) -> Callable | None:
    """Any ``scatter_add`` of one value per (row, column) into a float64 matrix, its index
    two arrays (a loss's backward is one), as one loop
    (:func:`~difflab.jit.row_kernels.scatter_into_rows`); ``plain`` as for ``_nll_loss``."""
    if len(node.shape) != 2 or np.dtype(node.dtype) != np.float64:
        return None

    def forward(ctx: Any, xp: Any, values: Any, index: Any, shape: Any) -> Any:
        found = row_kernels.scatter_into_rows(values, *index, shape) \
            if type(index) is tuple and len(index) == 2 else None
        if found is None:
            return plain(ctx, xp, values, index=index, shape=shape)
        ctx.index, ctx.shape = index, tuple(shape)
        return found
    return forward


#: primitive name -> maker of the prepared forward of a step that reads values inside its
#: settings (a loss's targets, its backward's indices), given the node and the primitive's
#: own (unbound) forward: the prepared one is called with the settings, each call, as the
#: primitive's own forward is
READING_SETTINGS: dict[str, Callable[[Node, Callable], Callable | None]] = {
    "nll_loss": _nll_loss,
    "scatter_add": _scatter_add,
}


def prepared_forward(node: Node, in_shape: tuple | None,
                     saves_read: bool = False, reads_values: bool = False
                     ) -> Callable | None:
    """A prepared forward for this node's step, or None (the primitive's own forward).

    Parameters
    ----------
    node : Node
        The step's node.
    in_shape : tuple or None
        The shape of its first argument (a ``sum`` needs it for its axes).
    saves_read : bool, default False
        Whether a later step reads the node's saved arrays: then only a prepared
        forward that saves them as the plain one does is given (a GRU step's VJP,
        :mod:`difflab.jit.recurrent_kernels`).
    reads_values : bool, default False
        Whether the node's settings hold values of the graph: then only a forward of
        :data:`READING_SETTINGS` is given, one that takes the settings at each call (the
        step keeps them) and saves what the plain forward saves.

    Returns
    -------
    callable or None
        ``forward(ctx, xp, *arrays)``, the node's settings bound.  One made from
        :data:`MAKERS` has ``needs_context = False``: it reads and writes no
        ``ctx`` (a program passes None).

    Examples
    --------
    >>> import numpy as np, difflab as dl
    >>> from difflab.jit.prepared_steps import prepared_forward
    >>> graph = dl.jit.trace(lambda x: x.sum(0), dl.tensor(np.zeros((2, 3)))).graph
    >>> (node,) = graph.nodes
    >>> forward = prepared_forward(node, (2, 3))
    >>> forward(None, np, np.arange(6.0).reshape(2, 3))
    array([3., 5., 7.])
    """
    plain, params = node.op.forward, node.params
    if reads_values:  # (their loops are numba's: without it, the primitives' forwards)
        from difflab.jit.fusion import USE_NUMBA

        maker = READING_SETTINGS.get(node.op_name) if USE_NUMBA else None
        return None if maker is None else maker(node, plain)

    def fallback(ctx: Any, xp: Any, *arrays: Any) -> Any:
        return plain(ctx, xp, *arrays, **params)
    op = node.op
    if isinstance(op, VJP) and op.primitive is GRUCell:
        return gru_vjp_forward(op.index, tuple(params["needs_input_grad"]),
                               np.dtype(node.dtype), fallback)
    if op is GRUCell:
        return gru_cell_forward(np.dtype(node.dtype), fallback)
    maker = MAKERS.get(node.op_name)
    if maker is None or saves_read:
        return None
    # Nothing reads what these forwards note on ctx: the program passes none (a Context
    # costs 0.3 µs), and their plain forward, where they fall back to it, gets its own.
    needs = (False,) * len(node.args)

    def own_context(ctx: Any, xp: Any, *arrays: Any) -> Any:
        return plain(Context(needs), xp, *arrays, **params)
    forward = maker(node, own_context, in_shape)
    if forward is not None:
        forward.needs_context = False  # type: ignore[attr-defined]
    return forward
