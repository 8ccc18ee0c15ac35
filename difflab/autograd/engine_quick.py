"""Speed shortcuts of eager recording and walking, for small tensors.  Skip it.

On a tensor of 16 numbers, NumPy computes ``sin`` in half a microsecond;
:func:`difflab.autograd.engine.apply` and the backward walk spent five times as
long in Python around it (a 200-operation chain, forward and backward, took
6.5 µs per operation, PyTorch 4.9; with these shortcuts 4.8).  Nothing in the
plain path is wasted for a reader, every step is one named job; but most calls
need few of those jobs, and each job checked for is a function call, a loop or
a look-up.  This module does the common call with less Python around the same
NumPy calls:

* :func:`quick_apply` replaces :func:`~difflab.autograd.engine.apply` for a
  call of one or two inputs, each a tensor of a NumPy array (not bfloat16) or
  a Python number, while nothing watches the engine (no ``vmap``, ``autocast``,
  graph tracer, tape recorder or anomaly mode).  It calls the primitive's own
  ``forward`` with the inputs spelled out (Python's ``f(*args)`` builds a
  tuple and a bound method for each call); for an elementwise primitive it
  runs the rule and makes the record itself, noting the saved values' sources
  by position instead of searching the inputs for them.  Everything else
  (another device, a dual number, a third input) returns ``None`` and the
  plain ``apply`` goes on.
* :func:`quick_walk` replaces the loop of
  :func:`~difflab.autograd.engine.run_backward` when nothing reads an adjoint on
  the way (no ``retain_grad``, ``autograd.grad``, tensor or module hooks,
  anomaly mode) and the backward is not recorded: it calls each record's VJP
  and adds the adjoints, with the store's methods, the checks of ``Node.vjp``
  and an elementwise primitive's VJP written inline.

The records made and the arrays computed are the plain path's, bit for bit:
``tests/core/test_core_engine_quick.py`` runs the same programs with
``DIFFLAB_FASTPATH=0`` and compares every result and gradient, and checks that
every case the shortcuts leave to the plain path still gets there.  This module
imports nothing of the engine (the engine imports it): the engine hands itself
to :func:`connect` once, when it is imported.
"""

from __future__ import annotations

import types
from collections.abc import Sequence
from typing import Any

import numpy as np

from difflab import backend
from difflab.autograd.grad_mode import _State
from difflab.autograd.saved_hooks import SavedTensorsHooks
from difflab.dtypes import BFLOAT16
from difflab.fastpath import LARGE, SliceAdjoint, scale
from difflab.ops.elementwise_primitives import BinaryOp, UnaryOp
from difflab.ops.shapes import sum_to_shape

_ndarray = np.ndarray
_generic = np.generic
_numbers = {float, int}
_numpy = backend.numpy_namespace

#: The engine module and its switches, once :func:`connect` was called.
_engine: Any = None
_Batching: Any = None
_Autocast: Any = None
_GraphRecorder: Any = None
_TapeRecorder: Any = None
_AnomalyMode: Any = None
_Tensor: Any = None
_wrap: Any = None
_Node: Any = None
_OUTPUT: Any = None
_sequence: Any = None


def connect(engine: types.ModuleType) -> None:
    """Let the shortcuts read the engine's classes and switches (``engine`` imports this).

    Besides the tape, six things may watch or change ``apply``'s calls: ``vmap``
    (``Batching``), ``autocast``, the graph tracer, the tape recorder, anomaly mode,
    saved-tensor hooks (``autograd.graph.saved_tensors_hooks``: ``apply`` checks those).
    The shortcuts leave every call to the plain path while any of them is on.
    """
    global _engine, _Batching, _Autocast, _GraphRecorder, _TapeRecorder, _AnomalyMode
    global _Tensor, _wrap, _Node, _OUTPUT, _sequence
    _engine = engine
    _Batching, _Autocast = engine.Batching, engine.Autocast
    _GraphRecorder, _TapeRecorder = engine.GraphRecorder, engine.TapeRecorder
    _AnomalyMode = engine.AnomalyMode
    # (looked up once: the engine calls this again when the tensor type is registered)
    _Node, _OUTPUT, _sequence = engine.Node, engine.OUTPUT, engine._sequence
    _Tensor = engine.Tensor if engine.Tensor is not None else type(None)
    _wrap = getattr(engine.Tensor, "_wrap", None)


def quick_apply(op: Any, inputs: tuple, params: dict) -> Any:
    """``engine.apply(op, *inputs, **params)`` for the common call, or ``None`` for the plain.

    The common call: one or two inputs, each a Tensor of a NumPy array that is not
    bfloat16, or a Python ``float``/``int``, and nothing watching (see :func:`connect`).
    An elementwise primitive's record is made here directly (``_record_unary``,
    ``_record_binary``); any other primitive's ``forward`` is called with the
    inputs spelled out (``_record_other``).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.autograd.engine_quick import quick_apply
    >>> from difflab.ops import registry
    >>> x = dl.tensor([0.0, 1.0], requires_grad=True)
    >>> quick_apply(registry.MUL, (x, 2.0), {})
    tensor([0., 2.], grad_fn=<MulBackward0>)
    >>> quick_apply(registry.MUL, (x, x, x), {}) is None   # three inputs: the plain apply's
    True
    """
    if (_Batching.active is not None or _Autocast.active is not None  # (nothing watching)
            or _GraphRecorder.active is not None or _TapeRecorder.active is not None
            or _AnomalyMode.enabled):
        return None
    n = len(inputs)
    if n == 1:
        a, b = inputs[0], 0.0  # (b: a stand-in, not passed on)
    elif n == 2:
        a, b = inputs
    else:
        return None
    # Each input: a Python number (no interpreter of its own), or a NumPy tensor; its
    # parent as Node.parents holds it: its record, itself (a leaf), or None.
    tensor = _Tensor
    if type(a) in _numbers:
        a_data, a_parent = a, None
    elif isinstance(a, tensor) and type(a_data := a.array) is _ndarray \
            and a_data.dtype is not BFLOAT16:
        a_parent = (a if a.grad_fn is None else a.grad_fn) if a._requires_grad else None
    else:
        return None
    if type(b) in _numbers:
        b_data, b_parent = b, None
    elif isinstance(b, tensor) and type(b_data := b.array) is _ndarray \
            and b_data.dtype is not BFLOAT16:
        b_parent = (b if b.grad_fn is None else b.grad_fn) if b._requires_grad else None
    else:
        return None
    kind = type(op)
    if kind is UnaryOp and n == 1:
        return _record_unary(op, a, a_data, a_parent)
    if kind is BinaryOp:
        return _record_binary(op, a, b, a_data, b_data, a_parent, b_parent)
    return _record_other(op, inputs, params, (a_data,) if n == 1 else (a_data, b_data),
                         (a_parent,) if n == 1 else (a_parent, b_parent))


def _record_unary(op: UnaryOp, x: Any, data: Any, parent: Any) -> Any:
    """``UnaryOp.forward`` and the record of ``apply``, for a NumPy tensor ``x``."""
    rule = op.rule
    try:
        y = rule.forward(_numpy, data)
    except (ValueError, IndexError, TypeError) as exc:
        raise _engine._explain(op, (x,), exc) from None
    if type(y) is not _ndarray:
        if not isinstance(y, _generic):
            return None  # (the plain apply runs the rule again: a rule is a pure function)
        y = np.asarray(y)  # (engine._scalar_as_array: NumPy's scalar as a 0-d array)
    if parent is None or not _State.enabled or not op.differentiable or y.dtype.kind in "biu":
        return _wrap(y)
    ctx = _Node(op)
    ctx.parents = (parent,)
    ctx.needs_input_grad = _NEEDED
    version = [0]
    saves = rule.saves
    if saves:
        keep_x, keep_y = "x" in saves, "y" in saves
        ctx.saved = (data if keep_x else None, y if keep_y else None)
        sources, versions = [None, None], []
        if keep_x:  # (the output first, as Node._finish_recording looks: a rule may return x)
            if data is y:
                sources[0] = _OUTPUT
                versions.append((version, 0))
            else:
                sources[0] = x
                versions.append((x._version, x._version[0]))
        if keep_y:
            sources[1] = _OUTPUT
            versions.append((version, 0))
        ctx.saved_sources = sources
        ctx.saved_versions = versions
    ctx.seq = next(_sequence)
    ctx.output_meta = (y.shape, y.dtype)
    return _wrap(y, ctx, version)


_NEEDED = (True,)


def _record_binary(op: BinaryOp, a: Any, b: Any, a_data: Any, b_data: Any, a_parent: Any,
                   b_parent: Any) -> Any:
    """``BinaryOp.forward`` and the record of ``apply``, for NumPy tensors and numbers."""
    rule = op.rule
    try:
        z = rule.forward(_numpy, a_data, b_data)
    except (ValueError, IndexError, TypeError) as exc:
        raise _engine._explain(op, (a, b), exc) from None
    if type(z) is not _ndarray:
        if not isinstance(z, _generic):
            return None  # (the plain apply runs the rule again: a rule is a pure function)
        z = np.asarray(z)
    if (a_parent is None and b_parent is None) or not _State.enabled \
            or not op.differentiable or z.dtype.kind in "biu":
        return _wrap(z)
    ctx = _Node(op)
    ctx.parents = (a_parent, b_parent)
    needs = ctx.needs_input_grad = _NEEDS[a_parent is not None][b_parent is not None]
    ctx.a_shape = () if type(a) in _numbers else a_data.shape
    ctx.b_shape = () if type(b) in _numbers else b_data.shape
    version = [0]
    keep_a, keep_b, keep_z = op.keeps[needs]
    if keep_a or keep_b or keep_z:
        ctx.saved = (a_data if keep_a else None, b_data if keep_b else None,
                     z if keep_z else None)
        _note_binary_saved(ctx, a, b, z, version)
    ctx.seq = next(_sequence)
    ctx.output_meta = (z.shape, z.dtype)
    return _wrap(z, ctx, version)


_NEEDS = ((None, (False, True)), ((True, False), (True, True)))


def _note_binary_saved(ctx: Any, a: Any, b: Any, z: Any, version: list) -> None:
    """``Node._finish_recording``'s sources and versions for ``BinaryOp``'s slots (a, b, z).

    Found by position, as the plain search finds them: the output first, then the first
    input tensor holding the array (``a`` before ``b``: in ``y * y.detach()`` both slots come
    from ``y``), and a number is a constant.
    """
    a_saved, b_saved, z_saved = ctx.saved
    a_tensor, b_tensor = type(a) not in _numbers, type(b) not in _numbers
    sources, versions = [None, None, None], []
    if a_saved is not None:
        if a_saved is z:
            sources[0] = _OUTPUT
            versions.append((version, 0))
        elif a_tensor:
            sources[0] = a
            versions.append((a._version, a._version[0]))
    if b_saved is not None:
        if b_saved is z:
            sources[1] = _OUTPUT
            versions.append((version, 0))
        elif a_tensor and a.array is b_saved:
            sources[1] = a
            versions.append((a._version, a._version[0]))
        elif b_tensor:
            sources[1] = b
            versions.append((b._version, b._version[0]))
    if z_saved is not None:
        sources[2] = _OUTPUT
        versions.append((version, 0))
    ctx.saved_sources = sources
    ctx.saved_versions = versions


def _record_other(op: Any, inputs: tuple, params: dict, arrays: tuple, parents: tuple) -> Any:
    """``apply`` for any other primitive of one or two common inputs."""
    e = _engine
    n = len(inputs)
    needs = tuple([p is not None for p in parents])
    ctx = _Node(op)
    records = True in needs and _State.enabled and op.differentiable
    if records:
        ctx.parents = parents
        ctx.needs_input_grad = needs
    else:
        ctx.needs_input_grad = (False,) * n
    try:
        out = op.forward(ctx, _numpy, *arrays, **params)
    except (ValueError, IndexError, TypeError) as exc:
        if op.user_code:  # (as engine._forward: a user's Function's errors as they are)
            raise
        raise e._explain(op, inputs, exc) from None
    if isinstance(out, _generic):
        out = e._scalar_as_array(out, ctx)
    if records and getattr(out, "dtype", None) is not None and out.dtype.kind in "biu":
        records = False  # (an integer result has no gradient)
    if not records:
        return _wrap(out)
    version = [0]
    ctx._finish_recording(inputs, out, version)
    return _wrap(out, ctx, version)


def quick_record(op: Any, inputs: tuple, out: Any) -> Any:
    """``engine.apply(op, *inputs)`` for a primitive whose ``forward`` hands back ``out``, an
    array computed already, and saves nothing; ``None``, having done nothing, for the plain.

    ``dl.compile``'s replayed output is such a primitive
    (:mod:`difflab.jit.steady`): its graph ran before the record is made.  The
    record is the one ``_record_other`` makes for it (parents, ``needs_input_grad``,
    sequence number, output's shape and dtype), without calling the ``forward``
    that would only hand ``out`` back.  The common call only: every input a
    tensor of a NumPy array (not bfloat16), one of them requiring grad, grad
    mode on, nothing watching (see :func:`connect`), a floating ``out``.

    Parameters
    ----------
    op : Primitive
        The primitive, differentiable, whose ``forward`` would return ``out``.
    inputs : tuple of Tensor
        What ``apply`` would be given (the record's parents come from them).
    out : numpy.ndarray
        The primitive's output, computed already.

    Returns
    -------
    Tensor or None
        ``out`` as a tensor on the tape, as ``apply`` returns it; None where the
        plain ``apply`` must take the call.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.autograd.engine_quick import quick_record
    >>> from difflab.ops.primitive import Primitive
    >>> class Twice(Primitive):
    ...     name = "twice"
    ...     def forward(self, ctx, xp, x):
    ...         return 2 * x
    ...     def vjp(self, ctx, xp, g):
    ...         return (2 * g,)
    >>> x = dl.tensor([1.0, 4.0], requires_grad=True)
    >>> y = quick_record(Twice(), (x,), 2 * x.array)
    >>> y.sum().backward(); y, x.grad
    (tensor([2., 8.], grad_fn=<TwiceBackward0>), tensor([2., 2.]))
    """
    if (_Batching.active is not None or _Autocast.active is not None  # (nothing watching)
            or _GraphRecorder.active is not None or _TapeRecorder.active is not None
            or _AnomalyMode.enabled or not _State.enabled or not op.differentiable
            or type(out) is not _ndarray or out.dtype.kind not in "fc"):
        return None
    parents, needs = [], []
    tensor = _Tensor
    for t in inputs:
        if not isinstance(t, tensor) or type(data := t.array) is not _ndarray \
                or data.dtype is BFLOAT16:
            return None
        parents.append((t if t.grad_fn is None else t.grad_fn) if t._requires_grad else None)
        needs.append(t._requires_grad)
    if True not in needs:
        return None
    ctx = _Node(op)
    ctx.parents = tuple(parents)
    ctx.needs_input_grad = tuple(needs)
    ctx.seq = next(_sequence)
    ctx.output_meta = (out.shape, out.dtype)
    return _wrap(out, ctx, [0])


def quick_walk(order: Sequence[Any], adjoints: Any, retain_graph: bool) -> bool:
    """``run_backward``'s loop over ``order`` (newest first) when nothing reads on the way.

    Returns False, having done nothing, when a record has a module hook
    (``joint``) or tensor hooks, or anomaly mode is on: the plain loop does
    those.  ``adjoints`` is the engine's store (``fastpath.InPlaceAdjoints``).
    The caller has checked that no adjoint is read on the way (``retain_grad``,
    ``autograd.grad``) and that the backward is not recorded.

    Examples
    --------
    >>> import numpy as np, difflab as dl
    >>> from difflab.autograd import engine
    >>> from difflab.autograd.engine_quick import quick_walk
    >>> x = dl.tensor([1.0, 2.0], requires_grad=True)
    >>> y = (x * x).sin()
    >>> store = engine._AdjointStore(); store.add(y.grad_fn, np.ones(2))
    >>> quick_walk([y.grad_fn, y.grad_fn.parents[0]], store, False)   # newest first
    True
    >>> bool(np.allclose(store[x], 2 * np.array([1.0, 2.0]) * np.cos([1.0, 4.0])))
    True
    """
    if _engine.AnomalyMode.enabled or _hooked(order):
        return False
    pop, add = adjoints.pop, adjoints.add
    owned = adjoints.owned
    owned_pop = owned.pop
    for node in order:
        g = pop(node, None)  # complete: every later use has added its share
        if g is None:
            continue
        if type(g) is SliceAdjoint:
            g = g.dense()
        elif owned:  # (the VJP may hand g to several inputs: no longer the store's own buffer)
            owned_pop(id(g), None)
        saved = node.saved
        if saved is None:
            node._check_saved()  # (raises: freed by an earlier backward)
        for box, version in node.saved_versions:
            if box[0] != version:
                node._check_saved()  # (raises: changed in place since it was saved)
        op = node.op
        if type(g) is _ndarray and g.dtype.kind != "c":
            if type(op) is UnaryOp:  # (UnaryOp.vjp, without the call)
                x, y = saved or (None, None)
                factor = op.rule.derivative(_numpy, x, y)
                if type(factor) is _ndarray and g.size < LARGE:  # (scale's small case)
                    input_grads = (g * factor,)
                else:
                    input_grads = (scale(_numpy, g, factor, (x, y)),)
            elif type(op) is BinaryOp:
                input_grads = _binary_vjp(node, op.rule, g, saved or (None, None, None))
            else:
                input_grads = op.vjp(node, _numpy, g, *saved)
        else:  # (another device, or a complex adjoint: the plain step)
            input_grads = node.vjp(g, False)
        for parent, input_grad in zip(node.parents, input_grads):
            if parent is None or input_grad is None:
                continue
            if type(input_grad) is _ndarray and parent not in adjoints:
                adjoints[parent] = input_grad  # (the store's add, for a first adjoint)
            else:
                add(parent, input_grad)
        if not retain_graph:
            node.release()
    return True


def _binary_vjp(node: Any, rule: Any, g: Any, saved: tuple) -> tuple:
    """``BinaryOp.vjp`` for a NumPy adjoint ``g``, without the call through the primitive."""
    a, b, z = saved
    need_a, need_b = node.needs_input_grad
    grad_a = grad_b = None
    if need_a:
        grad_a = scale(_numpy, g, rule.d_da(_numpy, a, b, z), saved)
        if grad_a.shape != node.a_shape:  # (broadcast in the forward: summed back)
            grad_a = sum_to_shape(grad_a, node.a_shape)
    if need_b:
        grad_b = scale(_numpy, g, rule.d_db(_numpy, a, b, z), saved)
        if grad_b.shape != node.b_shape:
            grad_b = sum_to_shape(grad_b, node.b_shape)
    return grad_a, grad_b


def _hooked(order: Sequence[Any]) -> bool:
    """Whether a record has a module hook (``joint``), tensor hooks or packed saved values
    (``autograd.graph.saved_tensors_hooks``): the plain walk's job."""
    packing = SavedTensorsHooks.used
    for node in order:
        if node.joint is not None or node.hooks or packing and node.packed:
            return True
    return False
