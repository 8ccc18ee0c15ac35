r"""``grad``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian`` and friends, as torch.func.

Each takes a function and returns a function, so they nest and compose with
:func:`~difflab.func.vmap`.  The reverse-mode ones run f on fresh copies of
the inputs that require grad and read the tape back with
:func:`difflab.autograd.grad`; the forward-mode ones put dual numbers
(:class:`difflab.diff.Dual`) in the inputs' arrays.  Under vmap an input is a
:class:`~difflab.func.BatchedTensor`: the transform works on its physical
tensor, whose examples are independent, so one backward pass gives every
example's gradient (``vmap(grad(f))``).  An input is first spread over every
running vmap level, so a function that mixes it with a batched value from a
closure still gets one gradient per example.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from difflab import autograd
from difflab.autograd import engine
from difflab.diff.dual import Dual, new_tag
from difflab.func import _tree
from difflab.func.vmap import ACTIVE, BatchedTensor, _align
from difflab.ops import structural
from difflab.tensor import Tensor


class _Reverse:
    """How many reverse-mode transforms are running (an inner one keeps its graph)."""

    depth = 0


# ------------------------------------------------------------ physical tensors


def _levels() -> tuple:
    return tuple(sorted(ACTIVE))


def _physical(x: Tensor, levels: tuple) -> Tensor:
    """``x`` as a physical tensor batched over every level of ``levels``, full size."""
    if type(x) is BatchedTensor:
        p = _align(x, list(levels)) if x.levels != levels else x.value
    else:
        p = engine.apply(structural.Reshape, x, shape=(1,) * len(levels) + tuple(x.shape)) \
            if levels else x
    sizes = tuple(ACTIVE[lv] for lv in levels)
    if tuple(p.shape[:len(levels)]) != sizes:
        p = engine.apply(structural.Expand, p, shape=sizes + tuple(p.shape[len(levels):]))
    return p


def _logical(p: Tensor, levels: tuple) -> Tensor:
    return BatchedTensor(p, levels) if levels else p


def _check_tensor(x: Any, transform: str, what: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{transform}: {what} must be tensors (or tuples, lists, dicts of "
                        f"them), got a {type(x).__name__}; wrap numbers with difflab.tensor")


def _differentiable(x: Tensor, levels: tuple, transform: str) -> Tensor:
    """A fresh physical copy of input ``x`` that requires grad (connected to ``x``'s tape)."""
    _check_tensor(x, transform, "the differentiated inputs")
    if not x.dtype.is_floating_point:
        raise TypeError(f"{transform}: can only differentiate with respect to floating "
                        f"tensors, got one of dtype {x.dtype}; convert it with .double()")
    p = _physical(x, levels)
    if p.requires_grad:  # an outer transform differentiates it too: stay on its tape
        return engine.apply(structural.Clone, p)
    return engine.apply(structural.Clone, p._off_tape()).requires_grad_()


def _argnums(argnums: Any, nargs: int, transform: str) -> tuple:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums or any(not isinstance(i, int) or not -nargs <= i < nargs for i in nums):
        raise ValueError(f"{transform}: argnums={argnums!r} must be an int or a tuple of ints "
                         f"in range for {nargs} positional argument(s)")
    return tuple(i % nargs for i in nums)


def _prepare(args: tuple, argnums: Any, transform: str) -> tuple:
    """(new args, the physical inputs that require grad, rebuilders, levels, create_graph)."""
    if not args:
        raise ValueError(f"{transform}: the function needs at least one positional argument")
    nums = _argnums(argnums, len(args), transform)
    levels = _levels()
    args = list(args)
    wanted, rebuilds = [], []
    keep_graph = _Reverse.depth > 0
    for i in nums:
        leaves, rebuild = _tree.flatten(args[i])
        physical = []
        for leaf in leaves:
            _check_tensor(leaf, transform, "the differentiated inputs")
            keep_graph = keep_graph or leaf.requires_grad
            physical.append(_differentiable(leaf, levels, transform))
        args[i] = rebuild([_logical(p, levels) for p in physical])
        wanted.append(physical)
        rebuilds.append(rebuild)
    return args, nums, wanted, rebuilds, levels, keep_graph and autograd.is_grad_enabled()


def _results(grads: list, wanted: list, rebuilds: list, levels: tuple, keep: bool,
             single: bool) -> Any:
    out, start = [], 0
    for physical, rebuild in zip(wanted, rebuilds):
        part = []
        for p in physical:
            g = grads[start]
            start += 1
            if g is None:
                g = engine.apply(structural.Clone, p._off_tape()) * 0.0
            part.append(_logical(g if keep else g._off_tape(), levels))
        out.append(rebuild(part))
    return out[0] if single else tuple(out)


def _finish(x: Any, keep: bool) -> Any:
    """An output handed back: off the tape unless an outer transform differentiates it."""
    leaves, rebuild = _tree.flatten(x)
    return rebuild([leaf._off_tape() if isinstance(leaf, Tensor) and not keep else leaf
                    for leaf in leaves])


def _split_aux(out: Any, has_aux: bool, transform: str) -> tuple:
    if not has_aux:
        return out, None
    if not isinstance(out, tuple) or len(out) != 2:
        raise ValueError(f"{transform}(f, has_aux=True): f must return a pair "
                         f"(output, aux), got {type(out).__name__}")
    return out


# ----------------------------------------------------------------------- grad


def grad_and_value(func: Callable, argnums: int | Sequence[int] = 0,
                   has_aux: bool = False) -> Callable:
    """The gradient of a scalar function and its value, from one evaluation.

    Parameters
    ----------
    func : a function returning a scalar tensor (or ``(scalar, aux)`` with ``has_aux``).
    argnums : which positional argument(s) to differentiate: an int or a tuple
        of ints.  An argument may be a tuple, list or dict of tensors; its
        gradient has the same structure.
    has_aux : func returns ``(output, aux)``; aux is passed through untouched.

    Returns
    -------
    A function returning ``(gradient, value)``, or ``(gradient, (value, aux))``
    with ``has_aux``; the gradient is a tuple when ``argnums`` is a tuple.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.func import grad_and_value
    >>> g, value = grad_and_value(lambda x: (x ** 2).sum())(dl.tensor([1.0, 2.0]))
    >>> g, value
    (tensor([2., 4.]), tensor(5.))
    """
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with autograd.enable_grad():
            args, nums, wanted, rebuilds, levels, keep = _prepare(args, argnums, "grad")
            _Reverse.depth += 1
            try:
                out, aux = _split_aux(func(*args, **kwargs), has_aux, "grad")
            finally:
                _Reverse.depth -= 1
            if not isinstance(out, Tensor) or out.numel() != 1:
                raise ValueError(
                    f"grad: expected f(*args) to return a scalar tensor, got "
                    f"{_describe(out)}; reduce it (.sum(), .mean()) or use jacrev for a "
                    f"Jacobian")
            flat = [p for physical in wanted for p in physical]
            value = _physical(out.reshape(()) if out.ndim else out, levels)
            grads = autograd.grad(value, flat, grad_outputs=_ones(value), create_graph=keep,
                                  retain_graph=keep, allow_unused=True) \
                if value.requires_grad else [None] * len(flat)
        result = _results(list(grads), wanted, rebuilds, levels, keep,
                          isinstance(argnums, int))
        value = _finish(out, keep)
        return (result, (value, aux)) if has_aux else (result, value)

    return wrapper


def grad(func: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Callable:
    """The gradient of a scalar function: ``grad(f)(x)`` is ∇f(x), shaped like ``x``.

    It composes: ``grad(grad(f))`` is a second derivative, ``vmap(grad(f))``
    gives one gradient per example (per-example gradients, without a loop).

    Parameters
    ----------
    func : a function returning a scalar tensor (or ``(scalar, aux)`` with ``has_aux``).
    argnums : which positional argument(s) to differentiate: an int or a tuple of ints.
    has_aux : func returns ``(output, aux)``; the result is then ``(gradient, aux)``.

    Returns
    -------
    A function with func's arguments returning the gradient (a tuple of them
    when ``argnums`` is a tuple).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.func import grad, vmap
    >>> grad(lambda x: (x ** 3).sum())(dl.tensor([1.0, 2.0]))
    tensor([ 3., 12.])
    >>> grad(grad(lambda x: x.sin()))(dl.tensor(0.0))          # -sin(0)
    tensor(-0.)
    >>> xs = dl.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> vmap(grad(lambda x: (x * x).sum()))(xs)              # one gradient per row
    tensor([[2., 4.],
            [6., 8.]])
    """
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, value = inner(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def _ones(p: Tensor) -> Tensor:
    return Tensor._wrap(np.ones(p.shape, dtype=p.array.dtype)) if not p.is_cuda else \
        Tensor._wrap(p.array * 0 + 1)


def _describe(x: Any) -> str:
    if isinstance(x, Tensor):
        return f"a tensor of shape {tuple(x.shape)}"
    return f"a {type(x).__name__}"


# ------------------------------------------------------------------------ vjp


def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """f's output and a function giving vector-Jacobian products: ``vjp_fn(v) = vᵀ J``.

    Parameters
    ----------
    func : a function of tensors returning a tensor or a tuple/list/dict of them.
    *primals : the point: the positional arguments of func (tensors or trees of them).
    has_aux : func returns ``(output, aux)``.

    Returns
    -------
    ``(output, vjp_fn)`` (``(output, vjp_fn, aux)`` with ``has_aux``).
    ``vjp_fn(cotangents)`` takes a tree shaped like the output and returns a
    tuple with one entry per primal; it may be called many times.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.func import vjp
    >>> out, vjp_fn = vjp(lambda x: x ** 2, dl.tensor([1.0, 3.0]))
    >>> vjp_fn(dl.tensor([1.0, 1.0]))
    (tensor([2., 6.]),)
    """
    with autograd.enable_grad():
        args, nums, wanted, rebuilds, levels, keep = _prepare(
            primals, tuple(range(len(primals))), "vjp")
        _Reverse.depth += 1
        try:
            out, aux = _split_aux(func(*args), has_aux, "vjp")
        finally:
            _Reverse.depth -= 1
    outs, _ = _tree.flatten(out)
    for o in outs:
        _check_tensor(o, "vjp", "the outputs of f")
    flat = [p for physical in wanted for p in physical]

    def vjp_fn(cotangents: Any) -> tuple:
        cots, _ = _tree.flatten(cotangents)
        if len(cots) != len(outs):
            raise ValueError(f"vjp_fn: expected cotangents shaped like f's output "
                             f"({len(outs)} tensor(s)), got {len(cots)}")
        now = _levels()
        extra = tuple(lv for lv in now if lv not in levels)  # vmaps around vjp_fn itself
        live, seeds = [], []
        for o, c in zip(outs, cots):
            _check_tensor(c, "vjp_fn", "the cotangents")
            if tuple(c.shape) != tuple(o.shape):
                raise ValueError(f"vjp_fn: a cotangent has shape {tuple(c.shape)} but the "
                                 f"output it belongs to has shape {tuple(o.shape)}")
            if o.requires_grad:
                live.append(_physical(o, levels))
                seeds.append(_over(c, levels, extra) if extra else _physical(c, levels))
        graph = keep or _Reverse.depth > 0
        with autograd.enable_grad():
            if not live:
                grads = [None] * len(flat)
            elif not extra:
                grads = autograd.grad(live, flat, grad_outputs=seeds, retain_graph=True,
                                      create_graph=graph, allow_unused=True)
            else:  # a batched cotangent (vmap(vjp_fn), as jacrev): the backward pass is
                # recorded, so each rule runs through the batching interpreter
                grads = [None if g is None else _back(g, levels, extra)
                         for g in engine.run_backward(live, seeds, True, True, flat)]
        return _results(list(grads), wanted, rebuilds, now, graph, False)

    value = _finish(out, keep)
    return (value, vjp_fn, aux) if has_aux else (value, vjp_fn)


def _over(c: Tensor, levels: tuple, extra: tuple) -> BatchedTensor:
    """A cotangent batched by the vmaps ``extra`` around vjp_fn, as a seed for the output's
    physical tensor (batched over ``levels``): logically that tensor, batched over extra."""
    p = _physical(c, levels + extra)  # (levels..., extra..., *out)
    k, e = len(levels), len(extra)
    axes = tuple(range(k, k + e)) + tuple(range(k)) + tuple(range(k + e, p.ndim))
    return BatchedTensor(engine.apply(structural.Permute, p, axes=axes), extra)


def _back(g: Tensor, levels: tuple, extra: tuple) -> Tensor:
    """The inverse of :func:`_over` on a gradient: physical over ``levels + extra``."""
    p = _physical(g, extra)  # (extra..., levels..., *x)
    k, e = len(levels), len(extra)
    axes = tuple(range(e, e + k)) + tuple(range(e)) + tuple(range(e + k, p.ndim))
    return engine.apply(structural.Permute, p, axes=axes)


# ------------------------------------------------------------------ forward mode


def jvp(func: Callable, primals: Any, tangents: Any, *, strict: bool = False,
        has_aux: bool = False) -> tuple:
    """f's output and its Jacobian-vector product ``J·t``, in one forward pass (dual numbers).

    Parameters
    ----------
    func : a function of tensors returning a tensor or a tuple/list/dict of them.
    primals : a tuple of the positional arguments of func.
    tangents : a tuple shaped like ``primals``: the direction t.
    strict : accepted for torch.func's signature (difflab checks shapes always).
    has_aux : func returns ``(output, aux)``.

    Returns
    -------
    ``(output, jvp_out)`` (``(output, jvp_out, aux)`` with ``has_aux``).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.func import jvp
    >>> jvp(lambda x: x.sin(), (dl.tensor([0.0, 1.0]),), (dl.tensor([1.0, 1.0]),))
    (tensor([0.    , 0.8415]), tensor([1.    , 0.5403]))
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primals and tangents must be tuples (one entry per argument of "
                        "func), e.g. jvp(f, (x,), (t,))")
    p_leaves, rebuild = _tree.flatten(list(primals))
    t_leaves, _ = _tree.flatten(list(tangents))
    if len(p_leaves) != len(t_leaves):
        raise ValueError(f"jvp: expected tangents with the structure of primals "
                         f"({len(p_leaves)} tensor(s)), got {len(t_leaves)}")
    levels, tag = _levels(), new_tag()
    duals = []
    for p, t in zip(p_leaves, t_leaves):
        _check_tensor(p, "jvp", "primals")
        _check_tensor(t, "jvp", "tangents")
        if tuple(p.shape) != tuple(t.shape):
            raise ValueError(f"jvp: a tangent has shape {tuple(t.shape)} but its primal has "
                             f"shape {tuple(p.shape)}")
        pp, tp = _physical(p, levels), _physical(t, levels)
        _cpu_only(pp, "jvp")
        dual = Dual._make(pp.array, tp.array.reshape((1,) + tuple(tp.shape)), tag)
        duals.append(_logical(Tensor._wrap(dual), levels))
    out, aux = _split_aux(func(*rebuild(duals)), has_aux, "jvp")
    leaves, rebuild_out = _tree.flatten(out)
    values, tangents_out = [], []
    for o in leaves:
        _check_tensor(o, "jvp", "the outputs of f")
        po = _physical(o, levels)
        value, t = _split_dual(po.array, tag, 1)
        values.append(_logical(Tensor._wrap(value), levels))
        tangents_out.append(_logical(Tensor._wrap(t[0]), levels))
    result = (rebuild_out(values), rebuild_out(tangents_out))
    return (*result, aux) if has_aux else result


def _cpu_only(p: Tensor, transform: str) -> None:
    """Forward mode's limits: CPU arrays, and no reverse-mode transform around it."""
    if p.requires_grad and _Reverse.depth > 0:  # (its result would be off that tape)
        raise RuntimeError(
            f"{transform}: its input is being differentiated in reverse mode (grad, vjp or "
            f"jacrev around {transform}); reverse over forward "
            f"is not supported: use jacrev inside instead (jacrev(jacrev(f)), or "
            f"jacfwd(jacrev(f)) for forward over reverse), or .detach() the input")
    if p.is_cuda:
        raise RuntimeError(f"{transform}: forward mode runs on dual numbers, which hold CPU "
                           f"arrays only; use jacrev/vjp on the GPU, or .cpu() the inputs")


def _split_dual(array: Any, tag: int, k: int) -> tuple:
    if isinstance(array, Dual) and array.tag == tag:
        return array.primal, array.tangents
    return array, np.zeros((k,) + tuple(np.shape(array)))


def jacfwd(func: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:
    """The Jacobian by forward mode: one pass pushing every input direction at once.

    ``jacfwd(f)(x)`` has shape ``f(x).shape + x.shape``.  Forward mode costs
    one pass per *input* element (here all in one vectorized pass), so it
    suits functions with fewer inputs than outputs; :func:`jacrev` the others.

    Parameters
    ----------
    func : a function of tensors returning a tensor (or ``(tensor, aux)``).
    argnums : which positional argument(s) to differentiate: an int or a tuple.
    has_aux : func returns ``(output, aux)``; the result is then ``(jacobian, aux)``.
    randomness : accepted for torch.func's signature ('error', 'different', 'same').

    Returns
    -------
    A function returning the Jacobian (a tuple of them when ``argnums`` is a tuple).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.func import jacfwd
    >>> jacfwd(lambda x: x ** 2)(dl.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    @functools.wraps(func)
    def wrapper(*args: Any) -> Any:
        nums = _argnums(argnums, len(args), "jacfwd")
        levels, tag = _levels(), new_tag()
        args = list(args)
        seeded = []
        for i in nums:
            x = args[i]
            _check_tensor(x, "jacfwd", "the differentiated inputs")
            p = _physical(x, levels)
            _cpu_only(p, "jacfwd")
            n = max(int(np.prod(tuple(x.shape), dtype=int)), 1)
            eye = np.eye(n, dtype=p.array.dtype).reshape((n,) + (1,) * len(levels)
                                                          + tuple(x.shape))
            tangents = np.broadcast_to(eye, (n,) + tuple(p.shape))
            args[i] = _logical(Tensor._wrap(Dual._make(p.array, np.ascontiguousarray(
                tangents), tag)), levels)
            seeded.append((i, n, tuple(x.shape)))
        # every argument gets its own block of directions: one pass each
        return _call_each(func, args, seeded, tag)

    def _call_each(f: Callable, args: list, seeded: list, tag: int) -> Any:
        levels = _levels()
        blocks, aux = [], None
        for i, n, shape in seeded:
            call = list(args)
            for j, _, _ in seeded:  # the other arguments as plain values this time
                if j != i:
                    call[j] = _primal(args[j], levels)
            out, aux = _split_aux(f(*call), has_aux, "jacfwd")
            _check_tensor(out, "jacfwd", "the output of f")
            po = _physical(out, levels)
            _, t = _split_dual(po.array, tag, n)
            t = np.moveaxis(np.asarray(t) if not isinstance(t, Dual) else t, 0, -1)
            J = t.reshape(tuple(po.shape) + shape)
            blocks.append(_logical(Tensor._wrap(J), levels))
        jac = blocks[0] if isinstance(argnums, int) else tuple(blocks)
        return (jac, aux) if has_aux else jac

    return wrapper


def _primal(x: Tensor, levels: tuple) -> Tensor:
    p = x.value if type(x) is BatchedTensor else x
    array = p.array.primal if isinstance(p.array, Dual) else p.array
    return _logical(Tensor._wrap(array), levels) if type(x) is BatchedTensor else \
        Tensor._wrap(array)


# ------------------------------------------------------------------ Jacobians


def jacrev(func: Callable, argnums: int | Sequence[int] = 0, *, has_aux: bool = False,
           chunk_size: int | None = None) -> Callable:
    """The Jacobian by reverse mode: one backward pass per *output* element.

    ``jacrev(f)(x)`` has shape ``f(x).shape + x.shape``; one forward pass,
    then a backward pass for each output element (the tape is kept between
    them).  Suits functions with fewer outputs than inputs; see :func:`jacfwd`.

    Parameters
    ----------
    func : a function of tensors returning a tensor (or ``(tensor, aux)``).
    argnums : which positional argument(s) to differentiate: an int or a tuple.
    has_aux : func returns ``(output, aux)``; the result is then ``(jacobian, aux)``.
    chunk_size : accepted for torch.func's signature (the rows are computed one
        backward pass at a time).

    Returns
    -------
    A function returning the Jacobian (a tuple of them when ``argnums`` is a tuple).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.func import jacrev
    >>> jacrev(lambda x: x.sin())(dl.tensor([0.0, 0.0]))
    tensor([[1., 0.],
            [0., 1.]])
    """
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"jacrev: chunk_size must be a positive int or None, got {chunk_size}")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with autograd.enable_grad():
            args, nums, wanted, rebuilds, levels, keep = _prepare(args, argnums, "jacrev")
            _Reverse.depth += 1
            try:
                out, aux = _split_aux(func(*args, **kwargs), has_aux, "jacrev")
            finally:
                _Reverse.depth -= 1
            _check_tensor(out, "jacrev", "the output of f")
            flat = [p for physical in wanted for p in physical]
            po = _physical(out, levels)
            k, m = len(levels), max(int(np.prod(tuple(out.shape), dtype=int)), 1)
            rows: list[list] = [[] for _ in flat]
            eye = np.eye(m, dtype=po.array.dtype)
            for i in range(m):  # a loop over output elements (never over the batch)
                seed = np.broadcast_to(eye[i].reshape((1,) * k + tuple(out.shape)),
                                       tuple(po.shape))
                grads = autograd.grad(po, flat, grad_outputs=Tensor._wrap(seed.copy()),
                                      retain_graph=True, create_graph=keep,
                                      allow_unused=True) if po.requires_grad \
                    else [None] * len(flat)
                for r, g, p in zip(rows, grads, flat):
                    r.append(g if g is not None else _zeros(p))
        from difflab.functions import stack

        jacobians = []
        for r, p in zip(rows, flat):
            J = stack(r, dim=k)  # (batch..., m, *x.shape)
            J = J.reshape(*(tuple(po.shape[:k]) + tuple(out.shape) + tuple(p.shape[k:])))
            jacobians.append(_logical(J if keep else J._off_tape(), levels))
        out_j, start = [], 0
        for physical, rebuild in zip(wanted, rebuilds):
            out_j.append(rebuild(jacobians[start:start + len(physical)]))
            start += len(physical)
        jac = out_j[0] if isinstance(argnums, int) else tuple(out_j)
        return (jac, aux) if has_aux else jac

    return wrapper


def _zeros(p: Tensor) -> Tensor:
    return Tensor._wrap(np.zeros(p.shape, dtype=p.array.dtype)) if not p.is_cuda \
        else Tensor._wrap(p.array * 0)


def hessian(func: Callable, argnums: int | Sequence[int] = 0) -> Callable:
    """The Hessian of a scalar function: ``jacrev(jacrev(func))``, reverse over reverse.

    ``hessian(f)(x)`` has shape ``x.shape + x.shape``.  (torch.func takes
    forward over reverse; here the inner backward pass is recorded on the tape
    instead, which every primitive with a recordable derivative supports, where
    dual numbers cannot run the in-place scatter-adds of indexing's backward.)

    Parameters
    ----------
    func : a function returning a scalar tensor.
    argnums : which positional argument(s) to differentiate: an int or a tuple.

    Returns
    -------
    A function returning the Hessian.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.func import hessian
    >>> hessian(lambda x: (x ** 3).sum())(dl.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    return jacrev(jacrev(func, argnums), argnums)
