"""The tape: how reverse mode records a computation and walks it backwards.

Recording (the forward pass)
    Every differentiable operation on tensors that require grad leaves one
    record, a :class:`Node`: which primitive ran (``op``), where its inputs
    came from (``parents``), what it saved for later (``saved``), and a
    sequence number ``seq`` that grows with time.  The records *are* the
    Wengert list: ``v3 = mul(v1, v2)``, ``v4 = sin(v3)``, ...

Walking (the backward pass)
    ``backward`` gathers the records the output depends on, sorts them by
    ``seq``, newest first, and visits each once: it hands the record's
    accumulated output adjoint ȳ to the primitive's ``vjp``, which returns
    one adjoint per input, and *adds* those into the inputs' adjoints.

    Two properties every small autodiff engine must get right, and this one
    gets by construction:

    * a loop, not recursion, so a graph a million operations deep is fine;
    * adjoints of a value used several times are summed, never overwritten,
      because a record is visited only after every later record that used it
      (newest first is a valid reverse topological order: a record's inputs
      always existed before it).

    :func:`run_backward` runs that loop (``_walk``).  Around it, each other job is one
    named step: seeding the outputs' adjoints (``_seed``), reading adjoints on
    the way for ``autograd.grad`` and ``retain_grad`` (``_Taps``), the NaN
    check of ``detect_anomaly`` (``_check_anomaly``), and the delivery into
    the leaves' ``.grad`` with their post-accumulate hooks
    (:func:`accumulate_grad`).  Sums of adjoints happen in one place,
    :meth:`Adjoints.add`.  A tensor's own hooks (``Tensor.register_hook``) see
    its complete adjoint first and may replace it (:func:`run_tensor_hooks`).

Nothing here knows about a particular primitive.  See ``difflab/ops`` for
the primitives, each with its forward next to its derivative rule.  User
``Function`` subclasses are recorded by the same :func:`apply`.  Speed
shortcuts that change no result (adding adjoints in place, say) live in
``difflab/fastpath.py`` and can be skipped on a first read.
"""

from __future__ import annotations

import itertools
import operator
import re
import sys
import traceback
import warnings
from collections.abc import Sequence
from contextvars import ContextVar
from typing import Any

import numpy as np

from difflab import backend, fastpath
from difflab.autograd import engine_quick, engine_steady, saved_hooks
from difflab.autograd.grad_mode import _State
from difflab.dtypes import BFLOAT16
from difflab.ops.complex_numbers import complex_adjoints
from difflab.ops.shapes import dim_out_of_range

_sequence = itertools.count()
OUTPUT = object()  # marks a saved array that is the record's own output
# The seeds 1 that backward() and grad() made themselves, while their walk runs (see
# autograd.functional.is_implicit_seed): set by functional.backward/grad and engine_loss.
_implicit_seeds: ContextVar[tuple] = ContextVar("implicit_seeds", default=())


# The switches apply and the backward walk read (who is watching, which interpreter is
# in effect) live in engine_state; engine.<name> stays their path.
from difflab.autograd.engine_state import (  # noqa: E402, F401  (Recorder: engine's path)
    AnomalyMode,
    Autocast,
    Batching,
    GraphRecorder,
    Profiling,
    Recorder,
    TapeRecorder,
)


class Node:
    """One record on the tape, ``output = op(inputs)``; also the ``ctx`` of an operation.

    It is the ``ctx`` handed to the primitive's ``forward`` and
    ``vjp``: a primitive stores on it what its derivative rule needs, with
    ``ctx.save(...)`` for arrays and plain attributes for the rest
    (``ctx.axis = 1``).  A user-defined :class:`difflab.autograd.Function`
    gets the same ``ctx`` (exported as ``difflab.autograd.FunctionCtx``), with
    PyTorch's names for saving tensors (``ctx.save_for_backward``,
    ``ctx.saved_tensors``).  A recorded output's ``grad_fn`` is its record.

    The engine makes the records (``engine.apply``, once per recorded call); user code
    receives them, it does not construct them.

    Parameters
    ----------
    op : Primitive
        The operation recorded (it has ``name``, ``forward`` and ``vjp``); a custom
        Function's calls are wrapped as one.

    Attributes
    ----------
    op : Primitive
        The operation, as given.
    parents : tuple
        One entry per input: the input's own ``Node`` (it was computed),
        the input ``Tensor`` itself (a leaf that requires grad: its ``.grad``
        receives the adjoint), or ``None`` (a constant: no adjoint needed).
    needs_input_grad : tuple of bool
        Per input, whether it needs an adjoint (PyTorch's ``ctx.needs_input_grad``).
    saved : tuple or None
        The arrays ``forward`` saved; ``None`` once backward freed them.
    seq : int
        Position on the tape (creation order).
    joint : object or None
        Set on records made together whose adjoints a hook reads together (a
        module's backward hooks, :mod:`difflab.autograd.backward_hook`): the
        walk calls ``joint.run(node, adjoints, reachable, create_graph)`` at
        each of them, and at the first one reached the joint hands all their
        adjoints (complete by then) to the hooks, which may replace them.
    hooks : list or None
        The hooks registered with ``Tensor.register_hook`` on the tensor this
        record made (a leaf keeps its own): the walk hands them the record's
        complete adjoint before anything reads it (:func:`run_tensor_hooks`); for a
        member of a ``joint``, the joint does, before its own callback (PyTorch's
        order: a tensor's hooks before a module's).

    Raises
    ------
    RuntimeError
        From ``saved_tensors`` (and the backward pass) when the saved values were freed
        by a first backward (pass ``retain_graph=True``), or a saved tensor was changed
        in place since.

    See Also
    --------
    difflab.autograd.Function : custom operations, whose ``ctx`` this is.
    difflab.Tensor.backward : runs the records' rules in reverse order.

    Examples
    --------
    A custom Function saves its input on the ``ctx`` for its backward:

    >>> import difflab as dl
    >>> from difflab.autograd import Function, FunctionCtx
    >>> class Cube(Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x ** 3
    ...     @staticmethod
    ...     def backward(ctx, grad_output):
    ...         x, = ctx.saved_tensors
    ...         return grad_output * 3 * x ** 2
    >>> x = dl.tensor(2.0, requires_grad=True)
    >>> y = Cube.apply(x)
    >>> isinstance(y.grad_fn, FunctionCtx), y.grad_fn.name(), y.grad_fn.needs_input_grad
    (True, 'CubeBackward', (True,))
    >>> y.backward()
    >>> x.grad
    tensor(12.)
    >>> y.backward()                   # the saved x was freed by the first backward
    Traceback (most recent call last):
        ...
    RuntimeError: Trying to backward through the graph a second time: ...
    """

    packed = False  # (True: saved holds Packed values, see SavedTensorsHooks)
    # The engine's own fields; primitives add theirs (ctx.axis = ...) to __dict__.
    __slots__ = ("op", "saved", "parents", "needs_input_grad", "seq", "retained", "joint",
                 "hooks", "output_meta", "saved_sources", "saved_versions",
                 "__dict__", "__weakref__")

    def __init__(self, op: Any) -> None:
        self.op = op
        self.saved: tuple = ()
        self.parents: tuple = ()
        self.needs_input_grad: tuple = ()
        self.saved_versions: list | tuple = ()
        self.retained = None  # a tensor whose .grad should be kept (retain_grad)
        self.joint = None  # records whose adjoints a hook reads together (module hooks)
        self.hooks = None  # the output tensor's hooks (Tensor.register_hook)

    # -- used by primitives -------------------------------------------------
    def save(self, *arrays: Any) -> None:
        """Keep these arrays for the backward pass (inputs, the output, or masks)."""
        self.saved = arrays

    # -- used by user-defined Functions (PyTorch's names) ----------------------
    def save_for_backward(self, *tensors: Any) -> None:
        """Keep these tensors for ``backward`` (checked against later in-place changes)."""
        self.save(*[t.array if isinstance(t, Tensor) else t for t in tensors])

    def save_for_forward(self, *tensors: Any) -> None:
        """Keep these tensors for a Function's ``jvp`` (there, ``ctx.saved_tensors``)."""
        self.saved_for_forward = tensors

    @property
    def saved_tensors(self) -> tuple:
        """What ``save_for_backward`` kept: the tensors themselves, on the graph."""
        self._check_saved()
        return self.saved_as_tensors(self) if self.saved else ()

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Declare outputs that have no derivative (an argmax, a mask): they need no grad."""
        self.non_differentiable = {id(t) for t in tensors}

    # -- bookkeeping ----------------------------------------------------------
    def _finish_recording(self, inputs: Sequence[Any], output: Any, out_version: list) -> None:
        """Called by :func:`apply` once the output exists: number the record, note versions."""
        self.seq = next(_sequence)
        self.output_meta = (output.shape, output.dtype)
        if self.saved:
            # Where each saved array came from: an input tensor, the OUTPUT, or
            # elsewhere (None).  Needed to check versions at backward time and to
            # rebuild tensors for create_graph.
            sources, versions = [], []
            for array in self.saved:
                source = None
                if array is output:
                    source = OUTPUT
                    versions.append((out_version, 0))
                elif hasattr(array, "shape"):  # (None or a number: a constant)
                    for t in inputs:
                        if isinstance(t, Tensor) and t.array is array:
                            source = t
                            versions.append((t._version, t._version[0]))
                            break
                sources.append(source)
            self.saved_sources = sources
            self.saved_versions = versions
            if saved_hooks.SavedTensorsHooks.active is not None:
                self._pack()
        if AnomalyMode.enabled:
            self.created_at = "".join(traceback.format_stack(limit=12)[:-3])

    def _pack(self) -> None:
        """Hand each saved array, as a tensor (an input's own, the output, or a constant),
        to the active pack hook and keep what it returns (``saved_hooks``; a traced
        record keeps its arrays: the graph holds the values)."""
        if GraphRecorder.active is not None:
            return
        tensors = [None if not hasattr(a, "shape") or isinstance(a, np.generic)  # (a number)
                   else s if isinstance(s, Tensor) else Tensor._wrap(a, self) if s is OUTPUT
                   else Tensor._wrap(a) for a, s in zip(self.saved, self.saved_sources)]
        packed = saved_hooks.pack(tensors)
        self.saved = tuple(a if p is None else p for a, p in zip(self.saved, packed))
        self.packed = True

    def _unpacked(self) -> tuple:
        """The saved values, each packed one as its unpack hook gives it back."""
        return saved_hooks.unpack(self.saved, Tensor, self.op.name)

    def name(self) -> str:
        """PyTorch's name for this step: ``MulBackward0``, ``LogSoftmaxBackward0``, ..."""
        return backward_name(self.op)

    @property
    def next_functions(self) -> tuple:
        """One pair (record, 0) per input, as PyTorch gives: the input's own record, an
        :class:`AccumulateGrad` for a leaf that requires grad, or ``None`` for a constant."""
        return tuple(
            (AccumulateGrad(p) if isinstance(p, Tensor) else p, 0) for p in self.parents
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name()} seq={getattr(self, 'seq', '?')}>"

    def _check_saved(self) -> None:
        """Refuse to run a backward step whose saved values are gone or were changed."""
        if self.saved is None:
            raise RuntimeError(
                f"Trying to backward through the graph a second time: the values that "
                f"'{self.op.name}' saved for backward were already freed by the first "
                f"backward. Call .backward(retain_graph=True) (or autograd.grad(..., "
                f"retain_graph=True)) the first time if you need to backward twice."
            )
        for box, version in self.saved_versions:
            if box[0] != version:
                raise RuntimeError(
                    f"One of the tensors that '{self.op.name}' saved for backward was "
                    f"modified by an in-place operation (its version is now {box[0]}, "
                    f"it was {version} when saved). Its gradient would be wrong. Use an "
                    f"out-of-place operation (x = x + 1 instead of x += 1), or .clone() the "
                    f"tensor before modifying it."
                )

    def saved_as_tensors(self, output_grad_fn: Node) -> tuple:
        """The saved arrays as tensors connected to the graph (for create_graph)."""
        lifted = []
        for array, source in zip(self._unpacked() if self.packed else self.saved,
                                 self.saved_sources):
            if source is None:
                # A number, a mask or an index: a constant of the graph.  A NumPy scalar
                # stays a number (as a host array it could not meet a GPU array).
                is_array = hasattr(array, "shape") and not isinstance(array, (Tensor, np.generic))
                lifted.append(Tensor._wrap(array) if is_array else array)
            elif source is OUTPUT:
                lifted.append(Tensor._wrap(array, output_grad_fn))
            else:  # (an input; unpacked as another array: that one, a constant)
                lifted.append(source if not self.packed or source.array is array
                              else Tensor._wrap(array))
        return tuple(lifted)

    # -- the backward step ----------------------------------------------------
    def vjp(self, grad_output: Any, create_graph: bool) -> tuple:
        """Adjoints of the inputs from the adjoint of the output (one tape step)."""
        if self.saved is None or self.saved_versions:
            self._check_saved()
        if create_graph:
            xp = RECORDING_NAMESPACE  # (difflab.functions: each rule's operations recorded)
            if not self.op.double_backward:
                raise RuntimeError(
                    f"'{self.op.name}' supports first derivatives only: its backward cannot "
                    f"be recorded (create_graph=True)."
                )

            saved = self.saved_as_tensors(self) if self.saved else ()
        else:
            xp = (backend.numpy_namespace if type(grad_output) is np.ndarray
                  else backend.array_module(grad_output))
            saved = self._unpacked() if self.packed else self.saved
        if grad_output.dtype.kind == "c":  # (a complex adjoint: PyTorch's conjugate rule)
            return complex_adjoints(self.op, self, xp, grad_output, saved)
        return self.op.vjp(self, xp, grad_output, *saved)

    def release(self) -> None:
        """Free what forward saved (backward without retain_graph)."""
        self.saved = None
        self.saved_sources = None


# -------------------------------------------------------------------- recording


def backward_name(op: Any) -> str:
    """The name of a primitive's backward step as PyTorch spells it: ``log_softmax`` ->
    ``LogSoftmaxBackward0`` (a user Function keeps its class name: ``MyFnBackward``)."""
    name = op.name or type(op).__name__
    if not name.islower():
        return f"{name}Backward"
    return "".join(part.capitalize() for part in name.split("_")) + "Backward0"


class AccumulateGrad:
    """What ``next_functions`` shows for a leaf: the step that adds into its ``.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable

    def name(self) -> str:
        return "AccumulateGrad"

    next_functions = ()

    def __repr__(self) -> str:
        return "<AccumulateGrad>"


#: ``interpreter_for(value)``: the handler of a number type with its own interpreter of
#: primitives (forward mode's ``Dual``, sympy expressions), or None; set by
#: ``difflab.functions.register_type``, so that this layer imports neither.
interpreter_for: Any = None


def _interpreter(value: Any) -> Any:
    """The handler of ``value``'s type if it interprets primitives itself, else None."""
    if interpreter_for is None or value is None:
        return None
    return interpreter_for(value)


def apply(op: Any, *inputs: Any, **params: Any) -> Any:
    """Run primitive ``op`` on ``inputs`` and, if needed, record it on the tape.

    ``inputs`` are tensors or plain numbers; ``params`` are non-differentiable
    settings (an axis, a shape, an index).  The primitive sees raw arrays.
    An input of a type with its own interpreter (a dual number, a sympy
    expression) hands the primitive to that interpreter instead: ``F.gelu(dual)``
    pushes GELU's JVP, as ``dl.sin(dual)`` pushes sin's.
    """
    if Profiling.active is not None and Profiling.active.timing is not op:
        return Profiling.active.primitive(op, inputs, params)  # (torch.profiler: one event)
    if _quick_apply is not None and saved_hooks.SavedTensorsHooks.active is None:
        # (speed shortcut: the common call, see engine_quick; it packs no saved value)
        result = _quick_apply(op, inputs, params)
        if result is not None:
            return result
    if Batching.active is not None:  # inside vmap: batched inputs go by the batching rule
        batched = Batching.active(op, inputs, params)
        if batched is not None:
            return batched
    if Autocast.active is not None:  # inside autocast: some operations change precision
        inputs = Autocast.active(op, inputs)
    read = _read_inputs(op, inputs)
    if read is None:  # (an input with its own interpreter: a dual number, an expression)
        handler = next(h for h in map(_interpreter, inputs) if h is not None)
        return handler.primitive(op, *inputs, **params)
    arrays, parents, needs_grad, low_precision, first_array = read
    records = needs_grad and _State.enabled and op.differentiable
    ctx = Node(op)
    if records:
        # Before forward, so that forward can read needs_input_grad and save only
        # what the needed derivatives will read.
        ctx.parents = tuple(parents)
        ctx.needs_input_grad = tuple([p is not None for p in parents])
    else:
        ctx.needs_input_grad = (False,) * len(inputs)
    out = _forward(op, ctx, arrays, params, inputs, first_array, low_precision)
    records = records and _has_gradient(out)
    if not records:
        result = Tensor._wrap(out)
    else:
        version = [0]
        ctx._finish_recording(inputs, out, version)
        result = Tensor._wrap(out, ctx, version)
        if TapeRecorder.active is not None:
            TapeRecorder.active.append((ctx, result, inputs))
    if GraphRecorder.active is not None:
        GraphRecorder.active.record(op, inputs, params, ctx, result)
    return result


def _read_inputs(op: Any, inputs: tuple) -> tuple | None:
    """The raw arrays of ``inputs``, each one's parent on the tape (its record, itself: a
    leaf needing grad, or None), whether any needs grad, whether any is bfloat16, and the
    first array; None when an input has its own interpreter (``_interpreter``)."""
    arrays = []
    parents = []  # per input: its Node, itself (a leaf needing grad), or None
    needs_grad = low_precision = False
    array_type = first_array = None
    for t in inputs:
        if isinstance(t, Tensor):
            data = t.array
            low_precision = low_precision or data.dtype is BFLOAT16
            if t._requires_grad:
                needs_grad = True
                parents.append(t if t.grad_fn is None else t.grad_fn)
            else:
                parents.append(None)
            if array_type is None:
                array_type, first_array = type(data), data
            elif type(data) is not array_type and (
                backend.is_gpu_array(data) != backend.is_gpu_array(first_array)
            ):
                # (Other array-likes, such as forward mode's Dual arrays, mix freely.)
                _raise_device_mismatch(op, inputs)
            arrays.append(data)
        else:
            if _interpreter(t) is not None:
                return None
            parents.append(None)
            arrays.append(t)
    return arrays, parents, needs_grad, low_precision, first_array


def _has_gradient(out: Any) -> bool:
    """Whether a result can carry a gradient: an integer or bool one has none (PyTorch's
    rule: a cast to int is a rounding, not a path for the gradient to pass through)."""
    dtype = getattr(out, "dtype", None)
    return dtype is None or dtype.kind not in "biu"


def _forward(op: Any, ctx: Node, arrays: list, params: dict, inputs: tuple, first_array: Any,
             low_precision: bool) -> Any:
    """The primitive's forward on the raw arrays, with NumPy or CuPy as ``xp``: errors
    explained, a NumPy scalar made a 0-d array, bfloat16 computed in float32."""
    round_result = False
    if low_precision and op.name not in _KEEPS_DTYPES:
        arrays, round_result = _widen_bfloat16(arrays)
    if type(first_array) is np.ndarray:
        xp = backend.numpy_namespace
    else:
        xp = backend.array_module(arrays[0] if first_array is None else first_array)
    try:
        out = op.forward(ctx, xp, *arrays, **params)
    except (ValueError, IndexError, TypeError) as exc:
        if op.user_code:  # a user's own Function: its errors as they are
            raise
        raise _explain(op, inputs, exc) from None
    if isinstance(out, np.generic):
        out = _scalar_as_array(out, ctx)
    if round_result and out.dtype == np.float32:
        out = out.astype(BFLOAT16)  # (rounded to bfloat16, as a CPU's bfloat16 kernel)
    return out


#: Primitives that set their result's dtype themselves (a cast): no rounding after them.
_KEEPS_DTYPES = frozenset({"to_dtype"})


def _widen_bfloat16(arrays: list) -> tuple[list, bool]:
    """bfloat16 inputs as float32 (NumPy has no bfloat16 arithmetic of its own: each
    operation computes in float32 and its result is rounded back, as CPUs do), and
    whether to round the result: not when a float32 or float64 input makes it wider,
    as PyTorch's promotion does."""
    wider = any(getattr(a, "dtype", None) is not BFLOAT16 and getattr(a, "ndim", None)
                is not None and a.dtype.kind == "f" and a.dtype.itemsize >= 4 for a in arrays)
    return [a.astype(np.float32) if getattr(a, "dtype", None) is BFLOAT16 else a
            for a in arrays], not wider


def _scalar_as_array(scalar: np.generic, ctx: Node) -> np.ndarray:
    """NumPy returns a scalar, not a 0-d array, from operations on 0-d arrays: the 0-d
    array, also in place of the scalar among what the forward saved."""
    out = np.asarray(scalar)
    if ctx.saved:
        ctx.saved = tuple(out if s is scalar else s for s in ctx.saved)
    return out


def _raise_device_mismatch(op: Any, inputs: Sequence[Any]) -> None:
    devices = sorted({str(t.device) for t in inputs if isinstance(t, Tensor)})
    raise RuntimeError(
        f"Expected all tensors to be on the same device, but '{op.name}' got tensors on "
        f"{' and '.join(devices)}. Move them with .to(device), .cuda() or .cpu() first."
    )


#: The start of an error message that names its function already: "permute: ",
#: "linalg.svd: ", "index_put(): ".
_NAMED = re.compile(r"[A-Za-z_][\w.]*(\(\))?: ")


def _explain(op: Any, inputs: Sequence[Any], exc: Exception) -> Exception:
    """Turn a NumPy error deep inside a primitive into one that names the op and shapes.

    A primitive that words its own error begins it with the name the user called
    (``"permute: ..."``, ``"linalg.slogdet: ..."``): no second name is added then.
    """
    shapes = ", ".join(
        str(tuple(t.shape)) if isinstance(t, Tensor) else type(t).__name__ for t in inputs
    )
    message = str(exc)
    if isinstance(exc, _AxisError) and getattr(exc, "ndim", None) is not None:
        return IndexError(f"{op.name}: {dim_out_of_range(exc.axis, exc.ndim)} (input shapes: "
                          f"{shapes})")
    if not _NAMED.match(message):
        message = f"{op.name}: {message}"
    return type(exc)(f"{message} (input shapes: {shapes})")


_AxisError = getattr(np, "exceptions", np).AxisError


# ---------------------------------------------------------------------- walking


_by_sequence = operator.attrgetter("seq")


def reachable(roots: Sequence[Node]) -> set:
    """Every record the ``roots`` depend on, themselves included (a loop, no recursion)."""
    seen = set(roots)
    stack = list(roots)
    while stack:
        node = stack.pop()
        for parent in node.parents:
            if isinstance(parent, Node) and parent not in seen:
                seen.add(parent)
                stack.append(parent)
    return seen


class Adjoints(dict):
    """The adjoints found so far: a record (``Node``) or a leaf ``Tensor`` -> its x̄.

    This is the plain version, all a reader needs.  With the speed shortcuts
    on (the default) the engine uses ``difflab.fastpath.InPlaceAdjoints``
    instead: the same sums, written in place where that is safe.
    """

    def add(self, key: Any, g: Any) -> None:
        """x̄ += g: a value used several times gets the sum of all its adjoints.

        This is the engine's one accumulation; ``x̄ = x̄ + g`` makes a new
        array, so no adjoint that a VJP handed out is ever changed.
        """
        old = self.get(key)
        self[key] = g if old is None else old + g

    def take(self, key: Any) -> Any:
        """Remove and return ``key``'s adjoint, complete (``None`` if nothing reached it)."""
        return self.pop(key, None)

    def total(self, key: Any) -> tuple[Any, bool]:
        """A leaf's total adjoint, and whether this pass allocated it for that leaf alone.

        A leaf may keep a private array as its ``.grad``; any other must be
        copied first (it may be shared, or be the user's ``gradient``).  The
        plain store does not keep track, so it always says no.
        """
        return self.get(key), False


# With the shortcuts on, the same store adding in place (difflab/fastpath.py).
_AdjointStore = fastpath.InPlaceAdjoints if fastpath.ENABLED else Adjoints


def run_backward(outputs: Sequence[Tensor], grad_outputs: Sequence[Any], retain_graph: bool,
                 create_graph: bool, capture: Sequence[Tensor] | None = None) -> list | None:
    """Walk the tape from ``outputs`` back to the leaves: reverse mode's backward pass.

    ``capture=None`` (``Tensor.backward``) adds into the ``.grad`` of each leaf requiring
    grad; a list of tensors (``autograd.grad``) returns their adjoints, touching no ``.grad``.
    """
    if capture is None and _walked_one_record(outputs, grad_outputs, retain_graph, create_graph):
        return None  # (a speed shortcut took it: a tape of one record, see engine_steady)
    adjoints = _AdjointStore()
    roots = _seed(adjoints, outputs, grad_outputs)
    order = sorted(nodes := reachable(roots), key=_by_sequence, reverse=True)  # newest first
    taps = _Taps(order, capture)  # adjoints read on the way (autograd.grad, retain_grad)
    if not _walked_quickly(order, adjoints, taps, retain_graph, create_graph):
        _walk(order, nodes, adjoints, taps, retain_graph, create_graph)
    if capture is not None:
        return taps.results(adjoints, create_graph)
    _deliver_to_leaves(adjoints, create_graph)
    run_queued_callbacks()
    return None


def _walk(order: Sequence[Node], nodes: set, adjoints: Adjoints, taps: _Taps,
          retain_graph: bool, create_graph: bool) -> None:
    """The walk itself: each record's VJP, newest first, its adjoints added to its inputs'."""
    for node in order:
        if node.joint is not None:  # (a hooked module's inputs or outputs: Node.joint)
            node.joint.run(node, adjoints, nodes, create_graph)
        g = adjoints.take(node)  # complete: every later use has added its share
        if g is None:
            continue  # no adjoint reached this record (its only use was not differentiated)
        if node.hooks and node.joint is None:  # (Tensor.register_hook; a joint runs them)
            g = run_tensor_hooks(node.hooks, g, create_graph, node.output_meta[0])
        if node in taps.at:
            taps.read(node, g)
        if Profiling.active is None:
            input_grads = node.vjp(g, create_graph)
        else:  # (torch.profiler: this step timed as one event)
            input_grads = Profiling.active.backward_step(node, g, create_graph)
        if AnomalyMode.enabled:
            _check_anomaly(node, input_grads)
        for parent, input_grad in zip(node.parents, input_grads):
            if parent is not None and input_grad is not None:
                adjoints.add(parent, input_grad)
        if not retain_graph:
            node.release()


def _walked_quickly(order: Sequence[Node], adjoints: Adjoints, taps: _Taps, retain_graph: bool,
                    create_graph: bool) -> bool:
    """Speed shortcut (:mod:`~difflab.autograd.engine_quick`; skip it on a first read): the
    walk as ``_walk`` does it when nothing reads an adjoint on the way; False, having
    done nothing, for any other walk or with the shortcuts off."""
    if (not fastpath.ENABLED or create_graph or taps.at or taps.capture is not None
            or Profiling.active is not None):
        return False
    return engine_quick.quick_walk(order, adjoints, retain_graph)


def _walked_one_record(outputs: Sequence[Tensor], grad_outputs: Sequence[Any],
                       retain_graph: bool, create_graph: bool) -> bool:
    """Speed shortcut (:mod:`~difflab.autograd.engine_steady`; skip it on a first read): the
    whole backward of a tape of one record into ``.grad``, as :func:`run_backward` would;
    False, having done nothing, for any other tape or with the shortcuts off."""
    if (not fastpath.ENABLED or create_graph or len(outputs) != 1 or AnomalyMode.enabled
            or Profiling.active is not None):
        return False
    node = outputs[0].grad_fn
    if node is None or not engine_steady.has_one_record(node, Node):
        return False
    adjoints = _AdjointStore()
    engine_steady.walk_one_record(node, grad_outputs[0], retain_graph, adjoints)
    _deliver_to_leaves(adjoints, False)
    run_queued_callbacks()
    return True


def _seed(adjoints: Adjoints, outputs: Sequence[Tensor], grad_outputs: Sequence[Any]) -> list:
    """Step 1: each output's adjoint ȳ (1 for a scalar loss); returns the records to start from."""
    roots = []
    for out, g in zip(outputs, grad_outputs):
        if out.grad_fn is not None:
            adjoints.add(out.grad_fn, g)
            roots.append(out.grad_fn)
        elif out.requires_grad:  # backward on a leaf: its gradient is g itself
            adjoints.add(out, g)
    return roots


class _Taps:
    """Adjoints read as the walk passes: ``autograd.grad``'s inputs, ``retain_grad`` tensors.

    ``at`` maps a record to what reads its complete adjoint when the walk
    reaches it: positions in ``capture`` (with ``autograd.grad``) or the
    record itself (its output asked for ``retain_grad``, with ``backward``).
    """

    def __init__(self, order: Sequence[Node], capture: Sequence[Tensor] | None) -> None:
        self.capture = capture
        self.captured: list = [None] * len(capture) if capture is not None else []
        self.at: dict = {}
        if capture is not None:
            for i, t in enumerate(capture):
                if t.grad_fn is not None:
                    self.at.setdefault(t.grad_fn, []).append(i)
        else:
            for node in order:
                if node.retained is not None:
                    self.at[node] = [node]

    def read(self, node: Node, g: Any) -> None:
        for reader in self.at[node]:
            if reader is node:
                _set_retained_grad(node, g)
            else:
                self.captured[reader] = g

    def results(self, adjoints: Adjoints, create_graph: bool) -> list:
        """The captured adjoints as tensors (``None`` where no path reached an input)."""
        for i, t in enumerate(self.capture):
            if t.grad_fn is None:
                g = adjoints.total(t)[0]
                if g is not None and getattr(t, "_backward_hooks", None):
                    g = run_tensor_hooks(t._backward_hooks, g, create_graph, t.shape)
                self.captured[i] = g
        return [None if g is None else _as_tensor(g, create_graph) for g in self.captured]


def _set_retained_grad(node: Node, g: Any) -> None:
    """``retain_grad``: a non-leaf's ``.grad`` receives its adjoint too."""
    tensor = node.retained()
    if tensor is None:
        return
    g = g._off_tape() if isinstance(g, Tensor) else Tensor._wrap(g)
    tensor.grad = g if tensor.grad is None else tensor.grad + g


def _check_anomaly(node: Node, input_grads: tuple) -> None:
    """``detect_anomaly``: name the record whose VJP returned NaN, and where it was made."""
    for i, g in enumerate(input_grads):
        if g is None:
            continue
        data = g.array if isinstance(g, Tensor) else g
        data = getattr(data, "values", data)  # (a slice's adjoint left unwritten by fastpath)
        xp = backend.array_module(data)
        if bool(xp.isnan(xp.asarray(data)).any()):
            where = getattr(node, "created_at", "")
            raise RuntimeError(
                f"Function '{node.name()}' returned nan values in its {i}th output."
                + (f"\nThe forward call that created it:\n{where}" if where else "")
            )


def _deliver_to_leaves(adjoints: Adjoints, create_graph: bool) -> None:
    """The last step of ``backward``: what is left in the store are the leaves' adjoints."""
    if fastpath.ENABLED and not create_graph:  # (speed shortcut for plain leaves: engine_steady)
        engine_steady.deliver_to_leaves(adjoints, Tensor._wrap, _deliver_to_leaf)
        return
    for leaf in list(adjoints):
        g, private = adjoints.total(leaf)
        _deliver_to_leaf(leaf, g, private, create_graph)


def _deliver_to_leaf(leaf: Tensor, g: Any, private: bool, create_graph: bool = False) -> None:
    """One leaf's total adjoint ``g`` through its hooks into its ``.grad``."""
    if getattr(leaf, "_backward_hooks", None):  # (Tensor.register_hook on a leaf)
        g = run_tensor_hooks(leaf._backward_hooks, g, create_graph, leaf.shape)
        private = False
    accumulate_grad(leaf, g, create_graph, private)


def run_tensor_hooks(hooks: Sequence[Any], g: Any, create_graph: bool,
                     shape: Sequence[int]) -> Any:
    """The hooks of ``Tensor.register_hook`` on a tensor's complete adjoint ``g``, in order.

    Each is called as ``hook(grad)`` with the adjoint as a Tensor (on the
    graph with ``create_graph=True``, so a hook's operations are differentiated
    again); one that returns a Tensor replaces the adjoint for the next hooks
    and for the rest of the pass.  Returns the adjoint as the store keeps it
    (an array, or a Tensor with ``create_graph=True``).

    Examples
    --------
    >>> import numpy as np
    >>> from difflab.autograd.engine import run_tensor_hooks
    >>> hooks = [lambda grad: grad * 2, lambda grad: print("then:", grad)]
    >>> run_tensor_hooks(hooks, np.array([1.0, 3.0]), False, (2,))
    then: tensor([2., 6.], dtype=difflab.float64)
    array([2., 6.])
    """
    if GraphRecorder.active is not None:
        warnings.warn("a tensor hook (Tensor.register_hook) ran while difflab.jit traced: "
                      "the replayed graph will not call it, as it is Python code; run the "
                      "function uncompiled to call its hooks", stacklevel=2)
    for hook in tuple(hooks):  # (a copy: a hook may remove itself)
        new = hook(_as_tensor(g, create_graph))
        if new is None:
            continue
        if not isinstance(new, Tensor):
            raise TypeError(f"a tensor hook must return a Tensor or None, got "
                            f"{type(new).__name__} from {_hook_name(hook)}")
        if tuple(new.shape) != tuple(shape):
            raise RuntimeError(
                f"hook {_hook_name(hook)} has changed the size of value: it returned a "
                f"gradient of shape {tuple(new.shape)} for a tensor of shape {tuple(shape)}; "
                f"return one of the shape of the gradient it was given"
            )
        if new.array.dtype != (given := getattr(g, "array", g).dtype):
            raise RuntimeError(
                f"hook {_hook_name(hook)} has changed the type of value: it was given a "
                f"{given} gradient and returned a {new.array.dtype} one; return one of "
                f"the gradient's dtype (.to(grad.dtype))"
            )
        g = new if create_graph else new.array
    return g


def _hook_name(hook: Any) -> str:
    return repr(getattr(hook, "__name__", type(hook).__name__))


class LeafGradValues:
    """What a new ``.grad`` keeps of dual numbers: ``strip`` (set by
    ``difflab.func.forward_ad``, a layer above) drops the tangent of a running
    ``forward_ad`` level from the adjoint, as PyTorch's new ``.grad`` (a detached copy)
    has none; accumulated into an existing ``.grad``, the tangent stays, as there.  None
    while no level runs."""

    strip: Any = None


def accumulate_grad(leaf: Tensor, g: Any, create_graph: bool = False,
                    private: bool = False) -> None:
    """``leaf.grad += g`` (shaped and typed like the leaf), then the leaf's hooks.

    This is the one place where a backward pass writes a ``.grad``.  ``g``
    is the leaf's total adjoint for this pass; ``private`` says that nothing
    else holds ``g``'s array, so it may become the ``.grad`` without a copy
    (a later in-place ``w.grad.zero_()`` must not touch anything else).
    Once the ``.grad`` is final for this pass, each hook registered with
    ``leaf.register_post_accumulate_grad_hook`` is called with the leaf
    (as in PyTorch: data-parallel training starts reducing the gradient then).
    """
    if LeafGradValues.strip is not None and leaf.grad is None and not create_graph:
        g = LeafGradValues.strip(g)  # (a new .grad: PyTorch's is a detached copy)
    g = _as_tensor(g, create_graph)
    if g.shape != leaf.shape:  # a scalar adjoint for a broadcast leaf, say (a read-only view)
        g = Tensor._wrap(backend.array_module(leaf.array).broadcast_to(g.array, leaf.shape))
        private = False
    if g.dtype != leaf.dtype:
        g, private = g.to(leaf.dtype), True  # (a new array)
    if leaf.grad is None:
        leaf.grad = g if create_graph or private else Tensor._wrap(g.array.copy())
    elif create_graph:
        leaf.grad = leaf.grad + g
    elif hasattr(g.array, "tangents"):  # dual numbers (forward over reverse): immutable
        leaf.grad.array = leaf.grad.array + g.array
    else:
        leaf.grad.array += g.array
    for hook in tuple(getattr(leaf, "_post_accumulate_grad_hooks", None) or ()):
        hook(leaf)  # (a copy: a hook may remove itself)


_queued_callbacks: list = []


def queue_callback(callback: Any) -> None:
    """Run ``callback()`` once the running backward pass has filled every ``.grad``.

    PyTorch's ``Variable._execution_engine.queue_callback``; meant to be called
    from a hook during backward (data-parallel training waits for its last
    gradient exchange this way).
    """
    _queued_callbacks.append(callback)


def run_queued_callbacks() -> None:
    """The last step of a backward pass: the callbacks its hooks queued, in order."""
    if not _queued_callbacks:  # (the common pass: none queued)
        return
    callbacks = _queued_callbacks[:]
    _queued_callbacks.clear()
    for callback in callbacks:
        callback()


def _as_tensor(g: Any, create_graph: bool) -> Tensor:
    if isinstance(g, Tensor):
        return g if create_graph else g._off_tape()
    return Tensor._wrap(g)


#: The tensor type the engine wraps results in and recognises among inputs.  The engine
#: does not import it (``Tensor`` needs ``apply``): ``difflab.tensor`` registers it.
Tensor: Any = None


def register_tensor_type(cls: type) -> None:
    """Make ``cls`` the type :func:`apply` reads inputs from and wraps results in.

    It needs ``.array``, ``._requires_grad``, ``.grad_fn``, ``._version`` and
    ``cls._wrap(array, grad_fn=None, version=None)``; ``difflab.tensor``
    registers :class:`~difflab.tensor.Tensor` when it is imported.
    """
    global Tensor
    Tensor = cls
    engine_quick.connect(sys.modules[__name__])  # (the speed shortcuts read it too)


#: The array namespace whose functions record on the tape (``difflab.functions``): a
#: VJP computed with it under ``create_graph=True`` is itself recorded.  Registered by it.
#:
#: :meta hide-value:
RECORDING_NAMESPACE: Any = None


def register_recording_namespace(namespace: Any) -> None:
    """Make ``namespace`` the ``xp`` of a recorded backward (``difflab.functions`` does)."""
    global RECORDING_NAMESPACE
    RECORDING_NAMESPACE = namespace


# With the shortcuts on, apply and the walk take engine_quick's common call (difflab/fastpath.py).
engine_quick.connect(sys.modules[__name__])
_quick_apply = engine_quick.quick_apply if fastpath.ENABLED else None
