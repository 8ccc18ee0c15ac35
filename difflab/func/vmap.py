r"""``vmap``: a function of one example run on a whole batch at once, by batching rules.

``vmap(f)(xs)`` equals ``stack([f(x) for x in xs])``, computed *without* the
loop: f runs once, on a :class:`BatchedTensor` per input.  A batched tensor
looks like one example to f (its *logical* shape) and holds the whole batch
(its *physical* tensor, the batch dimensions first).  Every primitive f
applies reaches ``engine.apply``, the one dispatch; while a vmap runs, the
engine hands any call with a batched input to :func:`interpret`, which asks
the primitive's batching rule (:mod:`difflab.ops.batching`) for one call on
the physical tensors.  Those calls are ordinary tensor operations, so the
tape records them: ``vmap(grad(f))`` differentiates through the batch.

Nesting: each vmap is a *level* (a number, growing inward).  A batched tensor
carries the levels it is batched over, one leading physical dimension each,
outermost first; a primitive's inputs are lined up on the union of their
levels (size-1 dimensions where one lacks a level) before its rule runs.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import Any

from difflab import backend
from difflab import random as _random
from difflab.autograd import engine
from difflab.func import _tree
from difflab.ops import batching, structural
from difflab.tensor import Tensor

_levels = itertools.count(1)
#: level -> batch size, for every vmap running now (outermost first).
ACTIVE: dict[int, int] = {}


class _Values:
    """What a batched tensor shows as ``.array``: its logical shape and dtype, no values.

    Code that reaches for the values directly (an in-place write, a conversion
    to NumPy) instead of going through a primitive gets a clear error.
    """

    __slots__ = ("shape", "dtype", "owner")

    def __init__(self, shape: tuple, dtype: Any, owner: BatchedTensor) -> None:
        self.shape, self.dtype, self.owner = shape, dtype, owner

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "vmap: this operation reads or writes a batched tensor's values directly "
            "(an in-place change, a conversion to NumPy, autograd.grad of a batched "
            "output, an index that a function checks in Python), which has no batching "
            "rule. Write it with out-of-place difflab operations, differentiate with "
            "difflab.func.grad or vjp, or pass that argument unbatched (in_dims=None).")

    __array__ = __getitem__ = __setitem__ = __iter__ = _refuse
    __array_ufunc__ = __array_function__ = _refuse

    def __getattr__(self, name: str) -> Any:  # (an AttributeError, so hasattr() says no)
        try:
            self._refuse()
        except RuntimeError as exc:
            raise AttributeError(f"{exc} (it asked for .{name})") from None


class BatchedTensor(Tensor):
    """A tensor inside ``vmap``: one example to the function, the whole batch underneath.

    vmap makes them; a user meets them only as the arguments of the function
    being vmapped.  Shape, ``ndim`` and every operation are the logical ones,
    one example's; reading a value (``.item()``, ``bool()``, NumPy) is an
    error, since it differs from example to example.

    Parameters
    ----------
    value : the physical tensor, whose first ``len(levels)`` dimensions are the
        batch dimensions of the vmaps in ``levels``.
    levels : the vmap levels it is batched over, outermost first.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.func import vmap
    >>> def show(x):
    ...     print(type(x).__name__, tuple(x.shape))
    ...     return x * 2
    >>> vmap(show)(dl.ones(3, 2)).shape
    BatchedTensor (2,)
    difflab.Size([3, 2])
    """

    __slots__ = ("value", "levels")

    def __init__(self, value: Tensor, levels: tuple) -> None:
        k = len(levels)
        self.value, self.levels = value, tuple(levels)
        self.array = _Values(tuple(value.shape[k:]), value.array.dtype, self)
        self.grad = self.grad_fn = self._base = None
        self._requires_grad = False
        self._version = value._version

    @property
    def requires_grad(self) -> bool:
        return self.value.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        if flag:
            raise RuntimeError(
                "vmap: requires_grad cannot be set on a batched tensor; differentiate "
                "inside vmap with difflab.func.grad (vmap(grad(f)) gives per-example "
                "gradients)")

    @property
    def device(self) -> backend.Device:
        return self.value.device

    @property
    def is_cuda(self) -> bool:
        return self.value.is_cuda

    def _value_read(self, what: str) -> None:
        raise RuntimeError(
            f"vmap: {what} needs the value of a batched tensor, which differs from example "
            f"to example. Data-dependent Python control flow cannot be batched: replace "
            f"'if' on a tensor by difflab.where, or call the function in a loop.")

    def detach(self) -> BatchedTensor:
        return BatchedTensor(self.value.detach(), self.levels)

    def _off_tape(self) -> BatchedTensor:
        return BatchedTensor(self.value._off_tape(), self.levels)

    def detach_(self) -> BatchedTensor:
        self.value.detach_()  # (the physical tensor, every example at once)
        self.grad_fn, self._requires_grad = None, False
        return self

    @property
    def data(self) -> BatchedTensor:
        return BatchedTensor(self.value.data, self.levels)

    def backward(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(
            "vmap: backward() called inside vmap is not supported; use difflab.func.grad "
            "or difflab.func.vjp inside the function instead")

    def __repr__(self) -> str:
        return f"BatchedTensor(levels={self.levels}, value={self.value!r})"


def interpret(op: Any, inputs: tuple, params: dict) -> Tensor | None:
    """The engine's batching step: ``op`` on ``inputs`` by its batching rule, or ``None``
    when no input is batched (the engine then applies it as usual)."""
    owners = _marked(params)
    if not owners and not any(type(t) is BatchedTensor or type(t) is _Values
                              for t in inputs):
        return None
    # (a batched tensor a face unwrapped to its .array, where's condition, counts too)
    inputs = tuple(t.owner if type(t) is _Values else t for t in inputs)
    batched = [t for t in inputs if type(t) is BatchedTensor] + owners
    rule = op.batch
    if rule is None:
        raise NotImplementedError(
            f"vmap: the primitive '{op.name}' has no batching rule, so it cannot run under "
            f"vmap. Call it outside vmap or in a Python loop over the examples, or declare "
            f"its rule (primitive.batch, see difflab.ops.batching).")
    levels = sorted(set().union(*[t.levels for t in batched]))
    missing = [lv for lv in levels if lv not in ACTIVE]
    if missing:
        raise RuntimeError("vmap: a batched tensor escaped the vmap that made it (it was "
                           "kept, e.g. in a closure or a global, and used after vmap "
                           "returned); return it from the function instead")
    physical, ids = [], set()
    for t in inputs:
        if type(t) is BatchedTensor:
            t = _align(t, levels)
            ids.add(id(t))
        physical.append(t)
    if owners:  # batched index arrays among the settings: physical, lined up
        params = {name: _unmark(v, levels) for name, v in params.items()}
    b = batching.Batch(len(levels), tuple(ACTIVE[lv] for lv in levels), ids, engine.apply, op)
    return BatchedTensor(rule(b, *physical, **params), tuple(levels))


def _marked(params: dict) -> list:
    """The batched tensors whose arrays a face put among the settings (an index)."""
    found = []
    for v in params.values():
        for item in (v if type(v) is tuple else (v,)):
            if type(item) is _Values:
                found.append(item.owner)
    return found


def _unmark(v: Any, levels: list) -> Any:
    if type(v) is tuple:
        return tuple(_unmark(item, levels) for item in v)
    if type(v) is _Values:
        return batching.BatchedArray(_align(v.owner, levels).array, len(levels))
    return v


def _align(t: BatchedTensor, levels: list) -> Tensor:
    """``t``'s physical tensor with a dimension for each of ``levels`` (1 where it has none)."""
    if t.levels == tuple(levels):
        return t.value
    sizes = iter(t.value.shape)
    shape = [next(sizes) if lv in t.levels else 1 for lv in levels]
    return engine.apply(structural.Reshape, t.value, shape=tuple(shape) + tuple(
        t.value.shape[len(t.levels):]))


def _move(t: Tensor, source: int, destination: int) -> Tensor:
    """Physical dimension ``source`` moved to ``destination`` (no copy)."""
    if source == destination:
        return t
    axes = [a for a in range(t.ndim) if a != source]
    axes.insert(destination, source)
    return engine.apply(structural.Permute, t, axes=tuple(axes))


# ---------------------------------------------------------------------- vmap itself

_RANDOMNESS = ("error", "different", "same")


def vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error",
         *, chunk_size: int | None = None) -> Callable:
    """Vectorize ``func`` over a batch dimension of its inputs, without a Python loop.

    ``vmap(f)(xs)`` returns what ``stack([f(x) for x in xs])`` would, but runs
    f once on the whole batch: every primitive f applies maps over the batch
    by its batching rule (:mod:`difflab.ops.batching`).  It composes with
    itself (a vmap of a vmap maps over two dimensions) and with the other
    transforms of :mod:`difflab.func` (``vmap(grad(f))``: per-example gradients).

    Parameters
    ----------
    func : a function of tensors, returning a tensor or a tuple, list or dict of them.
    in_dims : which dimension of each input is the batch: an int (every input),
        ``None`` (not batched: the same value for every example), or a tuple
        with one entry per positional argument, itself nested like the argument
        (a tuple, list or dict).  Keyword arguments are never batched.
    out_dims : where the batch dimension goes in each output: an int, ``None``
        (an output that does not depend on the batch), or a tuple per output.
    randomness : what a random operation under vmap does: ``'error'`` raises
        (the default), ``'different'`` draws independently for each example,
        ``'same'`` draws once for the whole batch.  Dropout and ``bernoulli``
        of batched probabilities honour all three; the random creation
        functions (``randn``, ``rand``, ...) draw one unbatched value, which
        is ``'same'``, and raise under ``'different'``.
    chunk_size : run the batch in chunks of this many examples (less memory,
        the same result); ``None``: all at once.

    Returns
    -------
    A function taking the same arguments as ``func``, batched along ``in_dims``.

    Raises
    ------
    ValueError
        when ``in_dims`` or ``out_dims`` do not fit the inputs or outputs, a
        batch dimension is out of range, or the batched inputs disagree on the
        batch size.
    NotImplementedError
        when f applies a primitive without a batching rule (its name is in the message).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.func import vmap
    >>> x = dl.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> w = dl.tensor([1.0, -1.0])
    >>> vmap(lambda row: (row * w).sum())(x)      # one dot product per row, no loop
    tensor([-1., -1., -1.])
    >>> vmap(dl.dot, in_dims=(1, None))(x, dl.tensor([1.0, 1.0, 1.0]))   # per column
    tensor([ 9., 12.])
    >>> vmap(vmap(lambda a, b: a * b), in_dims=(0, None))(x, w).shape  # nested: 3 x 2
    difflab.Size([3, 2])
    """
    if not callable(func):
        raise TypeError(f"vmap: func must be callable, got {type(func).__name__}")
    if randomness not in _RANDOMNESS:
        raise ValueError(f"vmap: randomness must be one of {_RANDOMNESS}, got {randomness!r}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"vmap: chunk_size must be a positive int or None, got {chunk_size!r}")
    _check_dims(in_dims, "in_dims")
    _check_dims(out_dims, "out_dims")

    @functools.wraps(func)
    def batched(*args: Any, **kwargs: Any) -> Any:
        leaves, rebuild = _tree.flatten(list(args))
        dims = _tree.broadcast_prefix(
            list(in_dims) if isinstance(in_dims, tuple) else in_dims, list(args),
            f"vmap: in_dims={in_dims!r}")
        size = _batch_size(leaves, dims, in_dims)
        if chunk_size is None or chunk_size >= size:
            return _run(func, leaves, dims, rebuild, kwargs, size, out_dims, randomness)
        parts = []
        for start in range(0, size, chunk_size):
            stop = min(start + chunk_size, size)
            piece = [leaf if d is None else leaf[(slice(None),) * (d % leaf.ndim)
                                                 + (slice(start, stop),)]
                     for leaf, d in zip(leaves, dims)]
            parts.append(_run(func, piece, dims, rebuild, kwargs, stop - start, out_dims,
                              randomness))
        return _concatenate(parts, out_dims)

    return batched


def _check_dims(dims: Any, what: str) -> None:
    leaves = _tree.flatten(dims)[0]
    for d in leaves:
        if d is not None and (not isinstance(d, int) or isinstance(d, bool)):
            raise ValueError(
                f"vmap: {what} must be an int, None, or a (nested) tuple of them, got "
                f"{dims!r} (an entry of type {type(d).__name__})")


def _batch_size(leaves: list, dims: list, in_dims: Any) -> int:
    sizes = []
    for n, (leaf, d) in enumerate(zip(leaves, dims)):
        if d is None:
            continue
        if not isinstance(leaf, Tensor):
            raise ValueError(
                f"vmap: in_dims={in_dims!r} asks to map over dimension {d} of input {n}, "
                f"but that input is a {type(leaf).__name__}, not a tensor; pass None as its "
                f"in_dim (an unbatched value), or make it a tensor")
        if not -leaf.ndim <= d < leaf.ndim:
            raise ValueError(
                f"vmap: in_dim={d} for input {n}, but that input is a tensor of "
                f"dimensionality {leaf.ndim}, so in_dim must satisfy "
                f"{-leaf.ndim} <= in_dim < {leaf.ndim}")
        sizes.append(leaf.shape[d])
    if not sizes:
        raise ValueError(
            f"vmap: at least one input must be batched, but in_dims={in_dims!r} maps over "
            f"no tensor input; give the batched inputs an int in_dim")
    if len(set(sizes)) > 1:
        raise ValueError(
            f"vmap: expected all batched inputs to have the same size along their mapped "
            f"dimension, got sizes {sizes} (in_dims={in_dims!r})")
    return sizes[0]


def _run(func: Callable, leaves: list, dims: list, rebuild: Callable, kwargs: dict,
         size: int, out_dims: Any, randomness: str) -> Any:
    level = next(_levels)
    saved = (engine.Batching.active, batching.Randomness.mode, _random.Draws.check)
    ACTIVE[level] = size
    engine.Batching.active = interpret
    batching.Randomness.mode = randomness
    _random.Draws.check = _draw_check(randomness)
    try:
        args = rebuild([leaf if d is None else _enter(leaf, d, level)
                        for leaf, d in zip(leaves, dims)])
        out = func(*args, **kwargs)
        return _exit(out, level, size, out_dims)
    finally:
        del ACTIVE[level]
        engine.Batching.active, batching.Randomness.mode, _random.Draws.check = saved


def _draw_check(randomness: str) -> Callable:
    def check(what: str) -> None:
        if batching.Randomness.drawing:  # a rule's own per-example draw (dropout's mask)
            return
        batching.Randomness.check(what)
        if randomness == "different":
            raise NotImplementedError(
                "vmap(..., randomness='different'): a random creation function (randn, "
                "rand, ...) draws one unbatched value; draw the batch's values outside "
                "vmap and pass them in, or use randomness='same'")
    return check


def _enter(x: Tensor, dim: int, level: int) -> BatchedTensor:
    """Input ``x`` batched along its logical ``dim`` at ``level`` (the innermost)."""
    if type(x) is BatchedTensor:
        k = len(x.levels)
        return BatchedTensor(_move(x.value, k + dim % x.ndim, k), x.levels + (level,))
    return BatchedTensor(_move(x, dim % x.ndim, 0), (level,))


def _exit(out: Any, level: int, size: int, out_dims: Any) -> Any:
    leaves, rebuild = _tree.flatten(out)
    dims = _tree.broadcast_prefix(out_dims, out, f"vmap: out_dims={out_dims!r}")
    return rebuild([_unbatch(leaf, level, size, d) for leaf, d in zip(leaves, dims)])


def _unbatch(x: Any, level: int, size: int, out_dim: int | None) -> Any:
    """An output of the function, its batch dimension of ``level`` placed at ``out_dim``."""
    if not isinstance(x, Tensor):
        if out_dim is None:
            return x
        raise ValueError(
            f"vmap: the function must return tensors only, got a {type(x).__name__}; set "
            f"out_dims=None for that output if it is the same for every example")
    batched = type(x) is BatchedTensor and level in x.levels
    if out_dim is None:
        if batched:
            raise ValueError(
                "vmap: out_dims=None for an output that differs from example to example "
                "(it is batched); give it an int out_dim")
        return x
    nd = x.ndim + 1
    if not -nd <= out_dim < nd:
        raise ValueError(f"vmap: out_dim={out_dim} is out of range for an output of "
                         f"{x.ndim} dimensions (-{nd} <= out_dim < {nd})")
    out_dim %= nd
    if not batched:  # the same for every example: repeated (a view)
        shape = list(x.shape)
        shape.insert(out_dim, size)
        return x.unsqueeze(out_dim).expand(*shape)
    rest = tuple(lv for lv in x.levels if lv != level)
    moved = _move(x.value, x.levels.index(level), len(rest) + out_dim)
    return BatchedTensor(moved, rest) if rest else moved


def _concatenate(parts: list, out_dims: Any) -> Any:
    from difflab.functions import cat

    first_leaves, rebuild = _tree.flatten(parts[0])
    dims = _tree.broadcast_prefix(out_dims, parts[0], f"vmap: out_dims={out_dims!r}")
    columns = zip(*[_tree.flatten(p)[0] for p in parts])
    return rebuild([col[0] if d is None else cat(list(col), dim=d)
                    for col, d in zip(columns, dims)])
