r"""Batching rules: how each primitive maps over a batch dimension (``difflab.func.vmap``).

``vmap(f)(xs)`` runs f *once* on the whole stack of examples, never a Python
loop over them.  Each input carries its examples along leading *batch
dimensions* (the physical layout: batch dimensions first, then the dimensions
f sees, its *logical* shape).  When f applies a primitive, vmap's interpreter
(:mod:`difflab.func.vmap`) hands the primitive's ``batch`` rule the physical
tensors, and the rule answers with one call of ordinary primitives that does
all examples at once.  That is JAX's design (``primitive_batchers``), and the
rules fall in a few families:

==============================  ============================================================
elementwise (``sin``, ``+``)    broadcast: pad the logical dimensions of batched inputs to
                                one rank, apply the primitive as it is
reductions, ``cumsum``,         the same primitive with every ``axis`` shifted past the
``softmax``, ``flip``, FFTs     batch dimensions (a 0-d example's dim 0 / -1: a one-element
                                axis added, then dropped)
shapes (``reshape``,            the batch dimensions prefixed to the shape / kept in front
``permute``, ``expand``)        of the permutation
``matmul``, ``einsum``          matmul broadcasts leading dimensions already; einsum gets a
                                fresh letter per batch dimension
indexing (``index``,            ``slice(None)`` per batch dimension in front of the index
``scatter_add``,                (NumPy's rule moves separated advanced indices to the
``index_put``)                  front); a batched index array gets an ``arange`` per batch
                                dimension
``cat``                         every input lifted to the full batch, axis shifted
convolution, pooling            the batch dimensions folded into the sample dimension N,
                                unfolded afterwards
whole-tensor losses             reduction 'none', then each example reduced alone
recurrent cells (``gru_cell``,  every input lifted to the full batch at one logical rank (the
``lstm_cell_state``, ...)       gates are along the last axis, the rows are the examples)
==============================  ============================================================

A rule is ``batch(b, *inputs, **params) -> Tensor``: ``inputs`` are the
primitive's inputs as physical tensors (those that carry batch dimensions
have exactly ``b.k`` of them in front, of size ``b.sizes`` or 1), ``params``
its settings as the user gave them (logical axes, logical shapes), and ``b``
a :class:`Batch`: the helpers and ``b.apply``, the one dispatch, so what a
rule computes is recorded on the tape like any other operation (that is why
``vmap(grad(f))`` works).  The result has the ``b.k`` batch dimensions in
front.  A primitive without a rule (``batch = None``) is an error under vmap
that names it.
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np

from difflab import backend
from difflab.ops import elementwise_primitives, logic, nn_conv, nn_ops, products, structural
from difflab.ops.shapes import dim_index, dim_indices


class Batch:
    """What a batching rule is given besides its inputs: the batch and the dispatch.

    Attributes
    ----------
    k : the number of batch dimensions in front of every batched input (nested
        vmaps stack theirs; one vmap has ``k = 1``).
    sizes : the size of each batch dimension.
    apply : ``apply(primitive, *inputs, **params)``: the engine's dispatch.
    op : the primitive being batched (for error messages).
    """

    def __init__(self, k: int, sizes: tuple, batched: set, apply: Any, op: Any) -> None:
        self.k, self.sizes, self.apply, self.op = k, tuple(sizes), apply, op
        self._batched = batched  # ids of the physical inputs that carry batch dimensions

    def batched(self, x: Any) -> bool:
        """Whether input ``x`` carries the batch dimensions."""
        return id(x) in self._batched

    def ndim(self, x: Any) -> int:
        """The logical rank of input ``x`` (what f sees)."""
        return x.ndim - self.k if self.batched(x) else getattr(x, "ndim", 0)

    def axis(self, axis: Any, ndim: int) -> Any:
        """A logical axis (an int, a tuple, or None: all) as a physical one, checked against
        the logical rank ``ndim`` as eager checks it (a dim the example does not have is an
        error naming the dim f gave, never one wrapped around or counted past the batch).
        A 0-d example's dim 0 / -1 comes out as ``k``: see :meth:`one_element`."""
        if axis is None:
            return tuple(range(self.k, self.k + ndim))
        if isinstance(axis, (tuple, list)):
            return tuple(self.k + a for a in dim_indices(axis, ndim, self.op.name))
        return self.k + dim_index(axis, ndim, self.op.name)

    def one_element(self, x: Any, run: Any) -> Any:
        """``run`` on a 0-d example seen as a one-element 1-D one, that axis dropped after.

        A 0-d tensor takes dim 0 or -1 (PyTorch: ``x.sum(0)``, ``x.cumsum(-1)`` of a 0-d
        x give x's own value), but its batched form has no axis ``k`` to name: the
        physical (B,) becomes (B, 1), ``run(x)`` works along axis ``k``, and the result
        is reshaped back to the batch shape (a reduction of one element, a running sum,
        a flip, a softmax of one element all keep that one element's place).
        """
        shape = tuple(x.shape)
        out = run(self.apply(structural.Reshape, x, shape=shape + (1,)))
        return self.apply(structural.Reshape, out, shape=shape)

    def pad(self, x: Any, rank: int) -> Any:
        """A batched ``x`` with size-1 dimensions after the batch ones, up to logical ``rank``
        (so NumPy's right-aligned broadcasting lines up logical dimensions)."""
        missing = rank - self.ndim(x)
        if not self.batched(x) or missing <= 0:
            return x
        shape = tuple(x.shape[:self.k]) + (1,) * missing + tuple(x.shape[self.k:])
        return self.apply(structural.Reshape, x, shape=shape)

    def lift(self, x: Any) -> Any:
        """``x`` with the full batch in front: a plain input repeated (a view, no copy)."""
        if not self.batched(x):
            x = self.apply(structural.Reshape, x, shape=(1,) * self.k + tuple(x.shape))
        if tuple(x.shape[:self.k]) == self.sizes:
            return x
        return self.apply(structural.Expand, x, shape=self.sizes + tuple(x.shape[self.k:]))

    def fold(self, x: Any) -> Any:
        """The batch dimensions folded into the first logical one: (B, N, ...) -> (B·N, ...)."""
        x = self.lift(x)
        return self.apply(structural.Reshape, x, shape=(-1,) + tuple(x.shape[self.k + 1:]))

    def unfold(self, y: Any) -> Any:
        """The inverse of :meth:`fold` on a result: (B·N, ...) -> (B, N, ...)."""
        return self.apply(structural.Reshape, y, shape=self.sizes + (-1,) + tuple(y.shape[1:]))

    def move_batch(self, x: Any, to: int) -> Any:
        """The batch dimensions moved from the front to start at physical position ``to``."""
        axes = list(range(self.k, self.k + to)) + list(range(self.k)) + list(
            range(self.k + to, x.ndim))
        return self.apply(structural.Permute, x, axes=tuple(axes))

    def to_front(self, y: Any, at: int) -> Any:
        """The batch dimensions, found at position ``at`` of ``y``, moved to the front."""
        axes = list(range(at, at + self.k)) + [a for a in range(y.ndim)
                                               if not at <= a < at + self.k]
        return self.apply(structural.Permute, y, axes=tuple(axes))

    def unsupported(self, why: str) -> Exception:
        return NotImplementedError(f"vmap: '{self.op.name}' {why}")


# ------------------------------------------------------------------- the families


def elementwise_rule(b: Batch, *inputs: Any, **params: Any) -> Any:
    """Broadcasting: pad batched inputs to one logical rank, then the primitive as it is."""
    rank = max((b.ndim(x) for x in inputs if hasattr(x, "shape")), default=0)
    return b.apply(b.op, *[b.pad(x, rank) for x in inputs], **params)


def _axis_rule(name: str = "axis", none_means_all: bool = True) -> Any:
    """The primitive again with its axis parameter ``name`` shifted past the batch."""

    def rule(b: Batch, x: Any, **params: Any) -> Any:
        nd = b.ndim(x)
        axis = params.get(name)
        if axis is None and not none_means_all:
            return b.apply(b.op, x, **params)
        params[name] = b.axis(axis, nd)
        if nd == 0 and axis is not None:
            return b.one_element(x, lambda x1: b.apply(b.op, x1, **params))
        return b.apply(b.op, x, **params)

    return rule


def _flattened_reduction(b: Batch, x: Any, axis: Any = None, keepdims: bool = False,
                         **params: Any) -> Any:
    """prod, argmax, argmin: one axis at a time, so "all" is the flattened example."""
    nd = b.ndim(x)
    if axis is not None:
        physical = b.axis(axis, nd)
        if nd == 0:
            return b.one_element(x, lambda x1: b.apply(b.op, x1, axis=physical,
                                                       keepdims=keepdims, **params))
        return b.apply(b.op, x, axis=physical, keepdims=keepdims, **params)
    flat = b.apply(structural.Reshape, b.lift(x), shape=b.sizes + (-1,))
    out = b.apply(b.op, flat, axis=b.k, keepdims=False, **params)
    if keepdims:
        out = b.apply(structural.Reshape, out, shape=b.sizes + (1,) * nd)
    return out


def _reshape(b: Batch, x: Any, shape: Any) -> Any:
    return b.apply(structural.Reshape, b.lift(x), shape=b.sizes + tuple(shape))


def _permute(b: Batch, x: Any, axes: Any) -> Any:
    nd = b.ndim(x)
    return b.apply(structural.Permute, x, axes=tuple(range(b.k)) + tuple(
        b.k + a % nd for a in axes))


def _expand(b: Batch, x: Any, shape: Any) -> Any:
    x = b.pad(x, len(shape))
    return b.apply(structural.Expand, x, shape=tuple(x.shape[:b.k]) + tuple(shape))


def _matmul(b: Batch, a: Any, c: Any) -> Any:
    # A vector becomes a matrix (as matmul itself reads it), then the batched operands
    # share one logical rank so that matmul's own broadcasting lines them up.
    squeeze = []
    if b.ndim(a) == 1:
        a, squeeze = _insert(b, a, -2), squeeze + [-2]
    if b.ndim(c) == 1:
        c, squeeze = _insert(b, c, -1), squeeze + [-1]
    rank = max(b.ndim(a), b.ndim(c))
    out = b.apply(structural.MatMul, b.pad(a, rank), b.pad(c, rank))
    if squeeze:  # the vector's unit dimension out again
        shape = tuple(out.shape[:-2]) + (() if -2 in squeeze else (out.shape[-2],)) + (
            () if -1 in squeeze else (out.shape[-1],))
        out = b.apply(structural.Reshape, out, shape=shape)
    return out


def _insert(b: Batch, x: Any, where: int) -> Any:
    """A size-1 dimension at ``where`` (-1: last, -2: before last), keeping batch marks."""
    shape = list(x.shape)
    shape.insert(len(shape) + 1 + where, 1)
    out = b.apply(structural.Reshape, x, shape=tuple(shape))
    if b.batched(x):
        b._batched.add(id(out))
    return out


def _einsum(b: Batch, *operands: Any, equation: str) -> Any:
    inputs, _, output = equation.replace(" ", "").partition("->")
    terms = inputs.split(",")
    if "->" not in equation:  # the implicit output: the letters used once, sorted
        letters = "".join(terms)
        output = ("..." if "..." in letters else "") + "".join(
            sorted(c for c in set(letters) if c.isalpha() and letters.count(c) == 1))
    free = [c for c in string.ascii_letters if c not in equation][:b.k]
    prefix = "".join(free)
    lifted, new_terms = [], []
    for x, term in zip(operands, terms):
        if b.batched(x):
            lifted.append(b.lift(x))
            new_terms.append(prefix + term)
        else:
            lifted.append(x)
            new_terms.append(term)
    return b.apply(products.Einsum, *lifted,
                   equation=",".join(new_terms) + "->" + prefix + output)


def _advanced_first(index: tuple) -> tuple[bool, int]:
    """NumPy's rule: advanced indices separated by a slice (or ..., None) put their
    dimensions first.  Returns (whether they do, how many dimensions they make)."""
    arrays = [i for i in index if getattr(i, "ndim", 0) > 0 or isinstance(i, (list,))]
    if not arrays:
        return False, 0
    positions = [n for n, i in enumerate(index)
                 if isinstance(i, (int, np.integer, list)) or hasattr(i, "ndim")]
    separated = positions != list(range(positions[0], positions[0] + len(positions)))
    shapes = [np.asarray(i).shape if not hasattr(i, "dtype") or i.dtype.kind != "b"
              else (int(np.count_nonzero(np.asarray(i))),) for i in index
              if isinstance(i, (int, np.integer, list)) or hasattr(i, "ndim")]
    return separated, len(np.broadcast_shapes(*shapes))


def _as_tuple(index: Any) -> tuple:
    return index if isinstance(index, tuple) else (index,)


class BatchedArray:
    """An index array that differs from example to example (``x[idx]`` with ``idx`` batched).

    ``array`` is physical: the batch dimensions (size or 1) in front of the
    logical ``shape``.  The interpreter hands these to rules in place of the
    arrays a face unwrapped; the indexing rule reads them, others refuse.
    """

    def __init__(self, array: Any, k: int) -> None:
        self.array, self.k = array, k
        self.shape = tuple(array.shape[k:])
        self.ndim = len(self.shape)
        self.dtype = array.dtype

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "vmap: this operation has no batching rule for an index or target tensor that "
            "differs from example to example; pass it unbatched (in_dims=None)")


def _index(b: Batch, x: Any, index: Any) -> Any:
    index = _as_tuple(index)
    if any(isinstance(i, BatchedArray) for i in index):
        return _batched_index(b, x, index)
    out = b.apply(structural.Index, x, index=(slice(None),) * b.k + index)
    separated, n = _advanced_first(index)
    return b.to_front(out, n) if separated else out


def _is_advanced(i: Any) -> bool:
    return isinstance(i, (int, np.integer, BatchedArray)) or getattr(i, "ndim", 0) > 0


def _batched_index(b: Batch, x: Any, index: tuple) -> Any:
    """``x[index]`` where an index array is batched: each batch dimension becomes an
    ``arange`` index of its own, so NumPy picks example b's indices in example b."""
    if any(getattr(i, "dtype", None) is not None and i.dtype.kind == "b" for i in index):
        raise b.unsupported("has no batching rule for a batched boolean mask (its result's "
                            "shape would differ between examples); use difflab.where")
    shapes = [i.shape if hasattr(i, "shape") else () for i in index if _is_advanced(i)]
    adv = len(np.broadcast_shapes(*shapes))
    out = b.apply(structural.Index, b.lift(x), index=_example_by_example(b, x, index, adv))
    # NumPy put every advanced dimension first: (batch, adv, rest).  Where the user's
    # advanced indices sit together after p plain ones, the logical result has them there.
    positions = [n for n, i in enumerate(index) if _is_advanced(i)]
    together = positions == list(range(positions[0], positions[0] + len(positions)))
    if not together or positions[0] == 0:
        return out
    before = 0
    for i in index[:positions[0]]:
        if i is Ellipsis:
            consumed = sum(1 for j in index if j is not None and j is not Ellipsis)
            before += b.ndim(x) - consumed
        else:
            before += 1  # a slice or None makes one dimension
    axes = (tuple(range(b.k)) + tuple(range(b.k + adv, b.k + adv + before))
            + tuple(range(b.k, b.k + adv)) + tuple(range(b.k + adv + before, out.ndim)))
    return b.apply(structural.Permute, out, axes=axes)


def _example_by_example(b: Batch, x: Any, index: tuple, adv: int) -> tuple:
    """The physical index that applies example b's index arrays to example b: an
    ``arange`` for each batch dimension in front (``adv``: the advanced indices' rank)."""
    xp = backend.array_module(x.array)
    ranges = []
    for j, size in enumerate(b.sizes):
        shape = [1] * (b.k + adv)
        shape[j] = size
        ranges.append(xp.arange(size).reshape(shape))
    return tuple(ranges) + tuple(
        i.array.reshape(i.array.shape[:b.k] + (1,) * (adv - i.ndim) + i.shape)
        if isinstance(i, BatchedArray) else i for i in index)


def _scatter_add(b: Batch, v: Any, index: Any, shape: Any) -> Any:
    index = _as_tuple(index)
    if any(isinstance(i, BatchedArray) for i in index):
        _all_index_arrays(b, index)
        adv = len(np.broadcast_shapes(*[i.shape for i in index]))
        return b.apply(structural.ScatterAdd, b.pad(v, adv) if b.batched(v) else v,
                       index=_example_by_example(b, v, index, adv),
                       shape=b.sizes + tuple(shape))
    v = b.lift(v)
    separated, n = _advanced_first(index)
    if separated:
        v = b.move_batch(v, n)
    else:
        target = np.broadcast_to(np.empty((), dtype=np.int8), tuple(shape))[index].shape
        v = b.pad(v, len(target))
        v = b.apply(structural.Expand, v, shape=b.sizes + target)
    return b.apply(structural.ScatterAdd, v, index=(slice(None),) * b.k + index,
                   shape=b.sizes + tuple(shape))


def _index_put(b: Batch, x: Any, v: Any, index: Any) -> Any:
    index = _as_tuple(index)
    if any(isinstance(i, BatchedArray) for i in index):
        return _batched_index_put(b, x, v, index)
    x = b.lift(x)
    target = np.broadcast_to(np.empty((), dtype=np.int8), tuple(x.shape[b.k:]))[index].shape
    if b.batched(v):
        v = b.pad(v, len(target))
        separated, n = _advanced_first(index)
        if separated:
            v = b.move_batch(b.apply(structural.Expand, v, shape=b.sizes + target), n)
    return b.apply(structural.IndexPut, x, v, index=(slice(None),) * b.k + index)


def _all_index_arrays(b: Batch, index: tuple) -> None:
    """Refuse a batched index beside slices or masks (the rules below take arrays only)."""
    if not all(hasattr(i, "ndim") and getattr(i, "dtype", None) is not None
               and i.dtype.kind in "iu" for i in index):
        raise b.unsupported("has no batching rule for an index that differs from example to "
                            "example beside slices or masks; pass it unbatched "
                            "(in_dims=None)")


def _batched_index_put(b: Batch, x: Any, v: Any, index: tuple) -> Any:
    """``x[index] = v`` where an index array is batched (a scatter at indices computed
    from the values, as max_unpool's): every entry an index array, so the values line up
    with the indices' broadcast shape, after the batch dimensions."""
    _all_index_arrays(b, index)
    adv = len(np.broadcast_shapes(*[i.shape for i in index]))
    return b.apply(structural.IndexPut, b.lift(x), b.pad(v, adv) if b.batched(v) else v,
                   index=_example_by_example(b, x, index, adv))


def _cat(b: Batch, *xs: Any, axis: int = 0) -> Any:
    nd = max(b.ndim(x) for x in xs)
    return b.apply(structural.Concatenate, *[b.lift(x) for x in xs], axis=b.axis(axis, nd))


def _linear(b: Batch, x: Any, w: Any, bias: Any = None) -> Any:
    if not b.batched(w) and (bias is None or not b.batched(bias)):
        return b.apply(nn_ops.Linear, x, w, bias)  # x @ wᵀ broadcasts over leading dims
    wt = _permute(b, w, (1, 0)) if b.batched(w) else b.apply(structural.Permute, w,
                                                                axes=(1, 0))
    if b.batched(w):
        b._batched.add(id(wt))
    y = _matmul(b, x, wt)
    b._batched.add(id(y))
    return y if bias is None else elementwise_rule(_with_op(b, ADD), y, bias)


def _with_op(b: Batch, op: Any) -> Batch:
    other = Batch(b.k, b.sizes, b._batched, b.apply, op)
    return other


def _folded(b: Batch, x: Any, **params: Any) -> Any:
    """An operation over (N, ...) samples: the batch folded into N, unfolded after."""
    return b.unfold(b.apply(b.op, b.fold(x), **params))


def _conv2d(b: Batch, x: Any, w: Any, bias: Any = None, stride: Any = (1, 1),
            padding: Any = (0, 0), dilation: Any = (1, 1), groups: int = 1) -> Any:
    settings = {"stride": stride, "padding": padding, "dilation": dilation}
    if not b.batched(w) and (bias is None or not b.batched(bias)):
        return b.unfold(b.apply(nn_conv.Conv2d, b.fold(x), w, bias, groups=groups,
                                **settings))
    # One weight per example: the examples become groups of one convolution,
    # x (B, N, C, H, W) -> (N, B·C, H, W), w (B, O, C/g, kh, kw) -> (B·O, C/g, kh, kw).
    total = int(np.prod(b.sizes))
    x, w = b.lift(x), b.lift(w)
    n, c, height, width = x.shape[b.k:]
    o = w.shape[b.k]
    x = b.apply(structural.Reshape, x, shape=(total, n, c, height, width))
    x = b.apply(structural.Permute, x, axes=(1, 0, 2, 3, 4))
    x = b.apply(structural.Reshape, x, shape=(n, total * c, height, width))
    w = b.apply(structural.Reshape, w, shape=(total * o,) + tuple(w.shape[b.k + 1:]))
    if bias is not None:
        bias = b.apply(structural.Reshape, b.lift(bias), shape=(total * o,))
    y = b.apply(nn_conv.Conv2d, x, w, bias, groups=groups * total, **settings)
    y = b.apply(structural.Reshape, y, shape=(n, total, o) + tuple(y.shape[2:]))
    y = b.apply(structural.Permute, y, axes=(1, 0, 2, 3, 4))
    return b.apply(structural.Reshape, y, shape=b.sizes + tuple(y.shape[1:]))


def _col2im(b: Batch, win: Any, x_shape: Any, **params: Any) -> Any:
    x_shape = (-1,) + tuple(x_shape[1:])
    folded = b.fold(win)
    x_shape = (folded.shape[0],) + x_shape[1:]
    return b.unfold(b.apply(nn_conv.Col2Im, folded, x_shape=x_shape, **params))


def _nll_loss(b: Batch, z: Any, target: Any, weight: Any, ignore_index: int,
              reduction: str) -> Any:
    t = np.asarray(target)
    valid = t != ignore_index
    w = valid if weight is None else np.asarray(weight)[np.where(valid, t, 0)] * valid
    tiled = np.broadcast_to(t, (int(np.prod(b.sizes)),) + t.shape).reshape(-1)
    losses = b.unfold(b.apply(nn_ops.NLLLoss, b.fold(z), target=tiled, weight=weight,
                              ignore_index=ignore_index, reduction="none"))
    if reduction == "none":
        return losses
    total = b.apply(structural.Sum, losses, axis=b.k)
    return total if reduction == "sum" else b.apply(DIV, total, float(w.sum()))


def _mse_loss(b: Batch, x: Any, y: Any, reduction: str = "mean") -> Any:
    rank = max(b.ndim(x), b.ndim(y))
    out = b.apply(nn_ops.MSELoss, b.pad(x, rank), b.pad(y, rank), reduction="none")
    if reduction == "none":
        return out
    reduce = structural.Sum if reduction == "sum" else structural.Mean
    return b.apply(reduce, out, axis=tuple(range(b.k, out.ndim)))


def _normalize(b: Batch, x: Any, axes: Any, eps: float, mean: Any = None,
               var: Any = None) -> Any:
    nd = b.ndim(x)
    return b.apply(nn_ops.Normalize, x, axes=b.axis(axes, nd), eps=eps, mean=mean, var=var)


def _recurrent_cell(b: Batch, *inputs: Any) -> Any:
    """A GRU or LSTM step (gates along the last axis): every input at the full batch and one
    logical rank, so that the examples line up row by row as the primitive asks."""
    rank = max(b.ndim(x) for x in inputs)
    return b.apply(b.op, *[b.lift(b.pad(x, rank)) for x in inputs])


def _embedding(b: Batch, w: Any, idx: Any, padding_idx: Any = None) -> Any:
    if not b.batched(w):
        return b.apply(nn_ops.Embedding, w, idx=idx, padding_idx=padding_idx)
    if padding_idx is not None:
        raise b.unsupported("has no batching rule for a batched weight table with a "
                            "padding_idx; pass the table unbatched (in_dims=None)")
    return b.apply(structural.Index, w, index=(slice(None),) * b.k + (idx,))  # w[b][idx]


def _one_hot(b: Batch, x: Any, num_classes: int = -1) -> Any:
    if num_classes < 0:
        raise b.unsupported("with num_classes=-1 reads the number of classes from the "
                            "values of the whole batch; pass num_classes under vmap")
    return b.apply(b.op, x, num_classes=num_classes)


def _dropout_mask(b: Batch, x: Any, p: float = 0.5, generator: Any = None) -> Any:
    """A mask per example ('different') or one for all ('same'): see ``Randomness``."""
    Randomness.check("dropout")
    Randomness.drawing = True
    try:
        if Randomness.mode == "same" and b.batched(x):
            one = b.apply(structural.Index, x, index=(0,) * b.k)
            mask = b.apply(b.op, one, p=p, generator=generator)
            return b.lift(mask)  # the one mask, repeated over the batch
        return b.apply(b.op, b.lift(x), p=p, generator=generator)
    finally:
        Randomness.drawing = False


def _bernoulli(b: Batch, probs: Any, shape: Any = None, dtype: Any = None,
               device: Any = None, generator: Any = None) -> Any:
    """Draws from probabilities that differ from example to example.

    'different': one draw over the whole batch, example after example (the
    batch dimensions in front), so the generator gives each example what a
    Python loop over the examples would draw, in the same order.  'same':
    one example's uniform numbers, shared by the batch, each example
    comparing them with its own probabilities.
    """
    Randomness.check("bernoulli")
    logical = tuple(probs.shape[b.k:])
    if shape is not None and tuple(shape) != logical:
        raise b.unsupported("with batched probabilities draws their shape; pass no shape")
    Randomness.drawing = True
    try:
        if Randomness.mode == "different":
            return b.apply(b.op, b.lift(probs), dtype=dtype, device=device,
                           generator=generator)
        checked = probs.array
        if ((checked < 0) | (checked > 1) | (checked != checked)).any():
            raise ValueError("bernoulli: probabilities must lie in [0, 1]")
        uniform = b.apply(PRIMITIVES["uniform"], 0.0, 1.0, shape=logical,
                          dtype=probs.array.dtype, device=device or probs.device,
                          generator=generator)
        drawn = b.apply(PRIMITIVES["lt"], uniform, b.lift(probs))
        return b.apply(PRIMITIVES["to_dtype"], drawn,
                       dtype=np.dtype(dtype if dtype is not None else probs.array.dtype))
    finally:
        Randomness.drawing = False


class Randomness:
    """vmap's ``randomness`` while it runs: 'error', 'different' or 'same'."""

    mode: str = "error"
    #: True while a rule draws per example on purpose (dropout's masks): the draw check of
    #: the random creation functions (one unbatched value) does not apply to it.
    drawing: bool = False

    @classmethod
    def check(cls, what: str) -> None:
        if cls.mode == "error":
            raise RuntimeError(
                f"vmap: called a random operation ({what}) under vmap(..., "
                f"randomness='error'). Pass randomness='different' for independent draws "
                f"per example or 'same' for one draw shared by the batch.")


def _matrix_stack(b: Batch, *inputs: Any, **params: Any) -> Any:
    """linalg (solve, inv, eigh, ...): the primitive maps over leading dimensions already;
    every input gets one logical rank (solve broadcasts A's and B's batch dimensions) and
    the full batch in front."""
    rank = max(b.ndim(x) for x in inputs)
    lifted = []
    for x in inputs:
        if b.batched(x):
            x = b.pad(x, rank)
        elif x.ndim < rank:
            x = b.apply(structural.Reshape, x, shape=(1,) * (rank - x.ndim) + tuple(x.shape))
        lifted.append(b.lift(x))
    return b.apply(b.op, *lifted, **params)


DIV = ADD = None  # (set by declare(): the registry's div and add)
PRIMITIVES: dict = {}  # (set by declare(): the registry, looked up when a rule runs)

#: name -> batching rule, for every built-in primitive that is not plainly elementwise.
RULES: dict[str, Any] = {
    "sum": _axis_rule(), "mean": _axis_rule(), "max": _axis_rule(), "min": _axis_rule(),
    "logsumexp": _axis_rule(),
    "prod": _flattened_reduction, "argmax": _flattened_reduction,
    "argmin": _flattened_reduction,
    "any": _axis_rule(), "all": _axis_rule(), "count_nonzero": _axis_rule(),
    "cumsum": _axis_rule(), "cumprod": _axis_rule(), "flip": _axis_rule(),
    "argsort": _axis_rule(), "log_softmax": _axis_rule("dim"),
    "softmax": _axis_rule("dim"),
    "matmul": _matmul, "einsum": _einsum, "linear": _linear,
    "reshape": _reshape, "permute": _permute, "expand": _expand,
    "index": _index, "scatter_add": _scatter_add, "index_put": _index_put, "cat": _cat,
    "where": elementwise_rule, "clamp": elementwise_rule, "to_dtype": elementwise_rule,
    "to_device": elementwise_rule, "clone": elementwise_rule, "gelu": elementwise_rule,
    "leaky_relu": elementwise_rule, "bce_with_logits": elementwise_rule,
    "polygamma": elementwise_rule, "zeta": elementwise_rule, "gammainc": elementwise_rule,
    "gammaincc": elementwise_rule,
    # complex numbers: elementwise, or a last axis of two added or read (past the batch)
    "real": elementwise_rule, "imag": elementwise_rule, "conj": elementwise_rule,
    "angle": elementwise_rule, "view_as_real": elementwise_rule,
    "view_as_complex": elementwise_rule,
    # the Fourier transforms: along one axis, shifted past the batch
    "fft_c2c": _axis_rule(), "fft_r2c": _axis_rule(), "fft_c2r": _axis_rule(),
    "conv2d": _conv2d, "im2col": _folded, "col2im": _col2im, "max_pool2d": _folded,
    "avg_pool2d": _folded, "nll_loss": _nll_loss, "mse_loss": _mse_loss,
    "normalize": _normalize, "embedding": _embedding,
    "gru_cell": _recurrent_cell, "gru_cell_backward": _recurrent_cell,
    "lstm_cell_state": _recurrent_cell, "lstm_cell_state_backward": _recurrent_cell,
    "lstm_hidden_state_backward": _recurrent_cell,
    "lstm_hidden_state": _recurrent_cell, "one_hot": _one_hot,
    "dropout_mask": _dropout_mask, "bernoulli": _bernoulli,
    "check_index": elementwise_rule,  # (each example's entries checked: all entries are)
    **{f"linalg_{name}": _matrix_stack for name in (
        "solve", "inv", "det", "slogdet", "det_sign", "cholesky", "qr", "eigh", "eigvalsh",
        "svd", "svd_complement", "svdvals", "pinv", "matrix_exp")},
    # histc and histogram have none: their bins depend on the whole batch's values.
}

# Elementwise primitives get their rule for free, those registered later too.
elementwise_primitives.UnaryOp.batch = staticmethod(elementwise_rule)
elementwise_primitives.BinaryOp.batch = staticmethod(elementwise_rule)
logic.Pointwise.batch = staticmethod(elementwise_rule)


def declare(primitives: dict) -> None:
    """Note the registry (its div and add, which several rules build with)."""
    global DIV, ADD, PRIMITIVES
    DIV, ADD, PRIMITIVES = primitives["div"], primitives["add"], primitives


def attach_rule(primitive: Any) -> None:
    """Give a built-in primitive its rule from :data:`RULES` when it is registered (the
    registry calls this for every primitive, also those registered later, such as the
    random draws of :mod:`difflab.random`)."""
    rule = RULES.get(primitive.name)
    if rule is None:
        return
    if isinstance(primitive, type):
        primitive.batch = staticmethod(rule)
    else:
        primitive.batch = rule
