r"""Tracing: run a function once on example inputs and keep what it did as a graph.

Every operation on tensors ends in one call, ``engine.apply(primitive,
...)``.  While a :class:`Tracer` is active (``engine.GraphRecorder``), that
call also hands the tracer the primitive, its inputs, its settings and its
result, and the tracer writes a :class:`~difflab.jit.graph.Node`.  How does
the tracer know *which* value an input is?  Each array it has seen (an
input's, a node's result) is remembered by identity: ``id(array) -> Ref``.
An array it has never seen was made outside the traced computation (a
``dl.tensor([1., 2.])`` inside the function, an ``np.ones``): it becomes a
*constant* of the graph.

What tracing cannot see is Python itself.  ``if x.sum() > 0:`` runs one
branch while tracing, and the graph keeps that branch for every later input.
So while tracing, a tensor's *value* turned into Python (``bool``, ``float``,
``int``, ``item``, ``tolist``, ``numpy``) warns with a :class:`TracerWarning`
naming the file and line: the Tensor tells the engine's active recorder
(:meth:`Tracer.value_read`).  So does an operation whose output's *shape*
depends on values (a boolean mask ``x[x > 0]``), which a static graph cannot
replay.

Operations with no derivative (comparisons, ``argmax``, ``isinf``) are
primitives like any other and reach the tracer the same way: the tracer
patches nothing and keeps no list of operations.  While tracing, every
backward pass is recorded, as with ``create_graph=True``
(``records_backward``): the graph of a training step must hold the
backward's operations, not its numbers.

State, too, is replayed as eager code changes it.  A random draw
(``dropout``, ``randn_like``) is a primitive, drawn anew at every run from
the generator in effect then.  An in-place write (``x.add_(1)``,
``x[0] = v``, a BatchNorm's running statistics) is recorded as the
out-of-place primitive plus a note that the tensor's memory now holds its
result (:meth:`Tracer.written`); when the tensor is an argument or a
module's parameter or buffer, the graph lists it in ``updates`` and every
replay writes the new value back.  What the tracer cannot replay it
refuses with a :class:`GraphError`: a write through a view (another array
sharing the memory would keep its old value), a parameter replaced or
changed outside difflab's operations (``p.data = ...``, ``p.array[...]``),
a tensor that requires grad computed on a tape outside the function.  (A
*leaf* that requires grad read from outside, a closure's weight, becomes a
parameter input, ``captured0``, read and differentiated at each call.)
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from difflab import backend, dtypes, random
from difflab.autograd import engine
from difflab.autograd.grad_mode import is_grad_enabled
from difflab.jit import fusion, standins
from difflab.jit.graph import Graph, GraphError, Input, Node, Ref, _collect_refs
from difflab.jit.ops import NO_GRAD_WRITE, RuleReading, rule_value_reads  # noqa: F401  (re-exported)
from difflab.tensor import Tensor

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class TracerWarning(UserWarning):
    """Tracing read a tensor's value into Python: the graph keeps what that value was.

    Warned (once per line, naming the file and line) when a traced function turns a
    value computed from its inputs into Python (``bool``, ``float``, ``int``,
    ``.item()``, ``.tolist()``, ``.numpy()``), or runs an operation whose output's
    shape depends on values (``x[x > 0]``).  The graph keeps the branch taken and the
    number read for this example, for every later input: the fix is to keep the choice
    inside the graph (``difflab.where``), or to use :func:`difflab.jit.compile`, which
    splits the graph there instead.

    See Also
    --------
    difflab.jit.trace : warns it.
    difflab.jit.GraphBreak : what :func:`difflab.jit.compile` makes of the same read.

    Examples
    --------
    >>> import warnings
    >>> import difflab as dl
    >>> from difflab import jit
    >>> def double_if_positive(x):
    ...     return x * 2 if x.sum().item() > 0 else x
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     f = jit.trace(double_if_positive, dl.ones(2))
    >>> caught[0].category is jit.TracerWarning
    True
    >>> f(-dl.ones(2))                   # the branch of the example, baked in
    tensor([-2., -2.])
    """


def _same_memory(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two arrays are one memory seen alike (a view of all of it, as detach makes)."""
    return (a.shape == b.shape and a.strides == b.strides and a.dtype == b.dtype
            and backend.data_address(a) == backend.data_address(b))


def _is_array(x: Any) -> bool:
    # (a dtype has .shape and .dtype too, but is a setting: float32, not an array)
    return (hasattr(x, "shape") and hasattr(x, "dtype")
            and not isinstance(x, (Tensor, np.dtype, dtypes.dtype, type)))


class Tracer(RuleReading):
    """Builds a graph from the primitives applied while it is active.

    Use it as a context manager around the computation; register the
    inputs first (:meth:`add_input`), then call :meth:`graph` with the outputs.
    While it is active, every ``engine.apply`` also hands it the primitive, its inputs
    and settings and its result, and it writes a :class:`Node`; an array it has never
    seen becomes a constant.  :func:`difflab.jit.trace` does all this for a function
    (and restores the random generator and the state the function wrote).

    Parameters
    ----------
    name : str, default "f"
        The graph's name.

    Attributes
    ----------
    inputs : list of Input
        Registered so far (arguments, parameters, constants met).
    nodes : list of Node
        Recorded so far.
    constants : dict
        The constants' arrays by name.

    Raises
    ------
    GraphError
        When the traced code does what a static graph cannot replay: a write through a
        view of an input, a parameter changed outside difflab's operations, a tensor
        that requires grad computed on a tape outside the trace, ``backward()`` or an
        optimizer's ``step()`` (refused before they change ``.grad`` or a parameter).

    Warns
    -----
    TracerWarning
        When the traced code reads a value computed from the inputs into Python.

    See Also
    --------
    difflab.jit.trace : trace a function (the usual way).
    Graph : what :meth:`graph` returns.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import jit
    >>> x = dl.tensor([1.0, 2.0])
    >>> tracer = jit.Tracer("double_exp")
    >>> tracer.add_input("x", x)
    >>> with tracer:
    ...     y = (x * 2).exp()
    >>> graph = tracer.graph(y)
    >>> print(graph)
    graph double_exp(x: (2,) float32)
      1  v1 = mul(x, 2)  (2,)      float32
      2  v2 = exp(v1)    (2,)      float32
      return v2
    >>> graph.run(x.numpy() * 0)
    [array([1., 1.], dtype=float32)]
    """

    def __init__(self, name: str = "f") -> None:
        self.name = name
        self.refs: dict[int, Ref] = {}  # id(array) -> the value it is
        self.keep: list = []  # every array seen, kept alive so that no id is reused
        self.versions: dict[int, tuple] = {}  # id(array) -> (tensor version box, version)
        self.inputs: list[Input] = []
        self.constants: dict[str, Any] = {}
        self.nodes: list[Node] = []
        self.computed: set[str] = set()  # values that depend on inputs (not constants)
        self.viewed_inputs: dict[int, Ref] = {}  # id(the caller's array) -> its input
        self.warned: set = set()
        self.stale: set[int] = set()  # arrays whose memory a write through a view changed
        self.written_arrays: set[int] = set()  # arrays an in-place operation wrote into
        self.stopped: set[int] = set()  # arrays a stop-gradient (detach) made
        self.unrecorded: set[int] = set()  # arrays computed under no_grad (off the tape)
        self.stops: dict[str, Ref] = {}  # value name -> its stop-gradient line
        self.rule_reads: list | None = None  # see rule_value_reads
        self.first_order = False  # recording a backward that is not differentiated again
        # (an input is a stand-in: the values are not kept, see difflab.jit.standins)
        self.stand_ins = False
        self._previous: Any = None

    records_backward = True  # a traced backward leaves its operations in the graph

    # ------------------------------------------------------------ registering
    def _remember(self, array: Any, ref: Ref, tensor: Tensor | None = None,
                  version: int | None = None) -> None:
        self.refs[id(array)] = ref
        self.keep.append(array)
        self.stale.discard(id(array))
        if tensor is not None:
            self.versions[id(array)] = (tensor._version,
                                        tensor._version[0] if version is None else version)

    def add_input(self, name: str, value: Any, kind: str = "input",
                  tensor: Tensor | None = None) -> None:
        """Declare ``value`` (a Tensor or an array) as the graph input ``name``; ``tensor``:
        the tensor each call reads it from (a captured weight: ``Input.tensor``)."""
        array = value.array if isinstance(value, Tensor) else value
        if standins.active() and standins.is_stand_in(array):
            self.stand_ins = True
        self.inputs.append(Input(name, kind, tuple(array.shape), np.dtype(array.dtype), array,
                                 tensor))
        self._remember(array, Ref(name), value if isinstance(value, Tensor) else None)
        self.computed.add(name)
        if getattr(array, "base", None) is not None:
            # (an argument arrives as a view of the caller's array: a view the function
            # takes of its .array has that array as its base, and is the input's values)
            self.viewed_inputs[id(array.base)] = Ref(name)

    def add_constant(self, array: Any, name: str | None = None) -> Ref:
        """A constant of the graph (an array made outside the traced computation)."""
        if isinstance(array, np.generic):
            array = np.asarray(array)
        name = name or f"c{len(self.constants)}"
        self.constants[name] = array
        self.inputs.append(Input(name, "constant", tuple(array.shape), np.dtype(array.dtype)))
        ref = Ref(name)
        self._remember(array, ref)
        return ref

    def ref_of(self, x: Any) -> Any:
        """What an operation's input is in the graph: a ``Ref``, or a literal number."""
        if isinstance(x, Tensor):
            array = x.array
            if x._requires_grad and id(array) not in self.refs:
                self._capture(x)
            seen = self.versions.get(id(array))
            if seen is not None and seen[0] is x._version and seen[0][0] != seen[1]:
                raise GraphError(
                    "a traced tensor was changed in place in a way the graph cannot replay "
                    "(through a view sharing its memory, x[0].add_(1), or outside difflab's "
                    "operations): a static graph records values, not memory. Write into the "
                    "tensor itself (x[0] = x[0] + 1, x.add_(...)), or out of place."
                )
        elif _is_array(x):
            array = x
        elif isinstance(x, np.generic):
            # A NumPy scalar keeps its dtype in arithmetic (a Python float would not).
            return self.add_constant(np.asarray(x))
        elif isinstance(x, (tuple, list)):
            return type(x)(self.ref_of(v) for v in x)
        elif isinstance(x, slice):
            return slice(self.ref_of(x.start), self.ref_of(x.stop), self.ref_of(x.step))
        else:
            return x  # a number, None, a string, an Ellipsis, a dtype: part of the program
        ref = self.refs.get(id(array))
        if ref is None:
            self._check_not_a_view_of_a_computed_value(array)
            ref = self.add_constant(array)
        elif id(array) in self.stale:
            raise GraphError(
                f"a traced value ({ref.name}) was changed by an in-place write into another "
                f"tensor sharing its memory (a view: x[0].add_(1), x.view(...).zero_()); a "
                f"static graph records values, not memory, so it cannot replay that. Write "
                f"into the tensor itself (x[0] = x[0] + 1) or write out of place"
            )
        return ref

    def _capture(self, tensor: Tensor) -> None:
        """A tensor that requires grad, made outside the traced function.

        A leaf (a closure's weight, a module's parameter read by a function)
        becomes a parameter input that holds the tensor itself: each call
        reads its value then, and a loss backpropagates into it.  Anything
        else was computed on a tape outside the function, which the graph
        cannot continue: refused.
        """
        if tensor.grad_fn is not None:
            raise GraphError(
                "the traced function reads a tensor that requires grad and was computed "
                "outside it (its tape lies outside the graph, so the gradient would stop "
                "there). Pass it as an argument, or detach() it if it is a constant"
            )
        name = f"captured{sum(1 for i in self.inputs if i.tensor is not None)}"
        self.add_input(name, tensor, kind="parameter", tensor=tensor)

    def written(self, tensor: Tensor, result: Tensor) -> None:
        """The engine's hook, before an in-place write of ``result`` into ``tensor``.

        From now on ``tensor``'s memory holds ``result``'s value: reads of it
        are reads of that node.  A constant about to be overwritten keeps its
        old value (a copy); another array sharing the memory (a view) would
        now be stale, and is refused if it is read again.
        """
        if self.stand_ins:
            raise standins.NeedsValues("an in-place write")
        array = tensor.array
        ref = self.refs.get(id(result.array))
        if ref is None:  # (a write of a value made outside the primitives: a constant)
            ref = self.ref_of(result)
        old = self.refs.get(id(array))
        if old is not None and old.name in self.constants:
            self.constants[old.name] = array.copy()
        if old is not None and tensor._requires_grad and not is_grad_enabled():
            ref = self._no_grad_write(old, ref, array)
        aliases = []
        if isinstance(array, np.ndarray):
            for other in self.keep:
                if (other is not array and isinstance(other, np.ndarray)
                        and id(other) in self.refs and np.may_share_memory(other, array)):
                    if _same_memory(other, array):
                        aliases.append(other)
                    else:
                        self.stale.add(id(other))
        self._remember(array, ref, tensor, version=tensor._version[0] + 1)
        self.written_arrays.add(id(array))
        # A value written under no_grad is off the tape, as the result written; but a
        # tensor that requires grad stays differentiable (an optimizer's p.add_(u))
        self._mark(self.unrecorded, array, id(result.array) in self.unrecorded
                   and not tensor._requires_grad)
        for other in aliases:
            self._alias_written(other, array, ref)

    def viewed(self, tensor: Tensor) -> None:
        """The engine's hook: a recorded result now shares its base's version counter
        (``tensor_arguments.view_of``), so a later write into either one makes the
        other's recorded value stale (``ref_of`` refuses to read it then)."""
        if id(tensor.array) in self.refs:
            self.versions[id(tensor.array)] = (tensor._version, tensor._version[0])

    def _alias_written(self, alias: Any, array: Any, ref: Ref) -> None:
        """``alias`` is ``array``'s memory exactly (``x.detach()``, ``x.data`` view all of x):
        the write just made into ``array`` is its new value too (``p.data.add_(u)`` updates
        ``p``).  A stop-gradient's view stays one: it reads a new ``detach`` of the value."""
        if id(alias) in self.stopped:
            ref = self._stop_node(ref, array)
        self.refs[id(alias)] = ref
        self.stale.discard(id(alias))
        if id(array) in self.versions:
            self.versions[id(alias)] = self.versions[id(array)]
        self.written_arrays.add(id(alias))

    def _arguments(self, op: Any, inputs: Sequence[Any], grad_enabled: bool) -> tuple:
        """The graph's values for an operation's inputs (see :meth:`_past_no_grad`)."""
        args = tuple(self.ref_of(x) for x in inputs)
        if grad_enabled and op.differentiable and self.unrecorded:
            args = tuple(self._past_no_grad(x, a) for x, a in zip(inputs, args))
        return args

    @staticmethod
    def _mark(marks: set, array: Any, on: bool) -> None:
        if on:
            marks.add(id(array))
        else:
            marks.discard(id(array))

    def _no_grad_write(self, old: Ref, new: Ref, array: Any) -> Ref:
        """A new line ``no_grad_write(old, new)``: the value written under ``no_grad`` into
        a tensor that requires grad, with the derivative its tape keeps (the old value's:
        eager autograd records nothing there; ``jit.ops.NoGradWrite``)."""
        return self._added_line(NO_GRAD_WRITE, (old, new), array)

    def _stop_node(self, ref: Ref, array: Any) -> Ref:
        """A new line ``detach(ref)`` (``array``: ref's value, for its shape and dtype)."""
        from difflab.ops.registry import PRIMITIVES

        return self._added_line(PRIMITIVES["detach"], (ref,), array)

    def _added_line(self, op: Any, args: tuple[Ref, ...], array: Any) -> Ref:
        """A line the tracer adds itself (no primitive ran it): ``op(*args)``, of
        ``array``'s shape and dtype, computed where any of its inputs is."""
        name = f"v{len(self.nodes) + 1}"
        self.nodes.append(Node(name, op, args, {}, tuple(array.shape), np.dtype(array.dtype)))
        if any(a.name in self.computed for a in args):
            self.computed.add(name)
        return Ref(name)

    def _past_no_grad(self, x: Any, ref: Any) -> Any:
        """The graph's value for ``x`` read where gradients flow: a value computed under
        ``no_grad`` (off eager autograd's tape) is read through a stop-gradient line (one
        per value), so the graph's derivative stops there as the tape's does."""
        if not isinstance(ref, Ref) or not isinstance(x, Tensor) \
                or id(x.array) not in self.unrecorded:
            return ref
        if ref.name not in self.stops:
            self.stops[ref.name] = self._stop_node(ref, x.array)
        return self.stops[ref.name]

    def _check_not_a_view_of_a_computed_value(self, array: Any) -> None:
        """An unknown array that views a computed one was made from a traced value outside
        the primitives (``t.array.reshape(-1)``): as a constant it would be silently stale."""
        base = getattr(array, "base", None)
        while base is not None:
            ref = self.refs.get(id(base)) or self.viewed_inputs.get(id(base))
            if ref is not None and ref.name in self.computed:
                self._warn("an array made from a traced tensor's values outside difflab's "
                           "operations (a view of its .array) becomes a constant of the "
                           "graph: other inputs will not change it. Compute it with tensor "
                           "operations instead")
                return
            base = getattr(base, "base", None)

    # ------------------------------------------------------------- recording
    def record(self, op: Any, inputs: Sequence[Any], params: dict, ctx: Any,
               result: Tensor) -> None:
        """Called by ``engine.apply`` for every primitive while this tracer is active."""
        op = op.traced_as or op  # (the graph backward's wrapper: its primitive)
        if self.stand_ins and op.shape_read_from(tuple(inputs), params):
            raise standins.NeedsValues(f"{op.name}: a shape read from values")
        for array in op.shape_read_from(tuple(inputs), params):
            ref = self.refs.get(id(array.array if isinstance(array, Tensor) else array))
            if ref is not None and ref.name in self.computed:
                self._warn(f"{op.name}: the output's shape depends on the values of a traced "
                           f"tensor (a boolean mask selects as many elements as are true); "
                           f"the graph keeps this example's shape, so other inputs give "
                           f"wrong shapes or errors. Use dl.where(mask, x, 0) to keep the "
                           f"shape fixed")
                break
        grad_enabled = is_grad_enabled()
        args = self._arguments(op, inputs, grad_enabled)
        params = {k: self.ref_of(v) for k, v in params.items()}
        name = f"v{len(self.nodes) + 1}"
        reads: list[Ref] = []
        _collect_refs(args + tuple(params.values()), reads)
        computed = op.random or any(r.name in self.computed for r in reads)
        if self.stand_ins and computed:  # (the values are not kept: stand-ins instead)
            standins.shrink(ctx, result, inputs)
        out = result.array
        # The arrays forward saved for the derivative that are neither an input nor
        # the output (a mask, a softmax): extra outputs a backward graph may read.
        saved, saved_meta = self._saved_by_position(ctx, inputs, out)
        node = Node(name, op, args, params, tuple(out.shape), np.dtype(out.dtype),
                    tuple(getattr(ctx, "needs_input_grad", ()) or ()), saved_meta)
        self.nodes.append(node)
        self._remember(out, Ref(name), result)
        # (marks by array: a user's Function returns the array its own lines made)
        self._mark(self.stopped, out, getattr(op, "stops_gradient", False))
        self._mark(self.unrecorded, out,  # (computed under no_grad: see _past_no_grad)
                   not grad_enabled and op.differentiable and computed)
        if op.first_order_is_cheaper and isinstance(ctx, engine.Node):
            from difflab.jit.ops import Differentiable

            ctx.op = Differentiable(op)  # (its backward, if first order, may take the array rule)
        for k, array in saved:
            self._remember(array, Ref(f"{name}.s{k}"))
        if computed:
            self.computed.add(name)
            self.computed.update(f"{name}.s{k}" for k, _ in saved)

    @staticmethod
    def _saved_by_position(ctx: Any, inputs: Sequence[Any], out: Any) -> tuple[list, tuple]:
        """The saved arrays that are the primitive's own, as (position, array).

        Also one entry per position of ``ctx.saved``: (shape, dtype) for an own
        array, ``None`` for the rest, so that ``v3.s{k}`` is ``ctx.saved[k]`` when
        the graph is replayed.
        """
        own, meta = [], []
        for k, array in enumerate(getattr(ctx, "saved", None) or ()):
            if not _is_array(array) or array is out or any(
                    (x.array if isinstance(x, Tensor) else x) is array for x in inputs):
                meta.append(None)
                continue
            own.append((k, array))
            meta.append((tuple(array.shape), np.dtype(array.dtype)))
        return own, tuple(meta) if own else ()

    def graph(self, outputs: Any) -> Graph:
        """The graph of everything recorded, returning ``outputs`` (nested tensors).

        An argument or parameter written in place is an *update*: its last
        value is appended to the outputs and named in ``Graph.updates``.
        """
        flat: list = []
        spec = _flatten(outputs, flat)
        refs = [self._past_no_grad(x, self.ref_of(x)) if isinstance(x, Tensor) or _is_array(x)
                else x for x in flat]
        updates = []
        for i in self.inputs:
            if i.kind == "constant" or i.example is None:
                continue
            if id(i.example) in self.stale:
                raise GraphError(
                    f"{i.name} was changed by an in-place write into a view of it (x[0].add_"
                    f"(1), x.view(...).zero_()); a static graph cannot replay a write through "
                    f"a view. Write into {i.name} itself (x[0] = x[0] + 1)")
            ref = self.refs.get(id(i.example))
            if id(i.example) in self.written_arrays and ref is not None and ref.name != i.name:
                updates.append(i.name)
                refs.append(ref)
        return Graph(self.name, self.inputs, self.constants, self.nodes, refs, spec, updates)

    # --------------------------------------------------------------- activity
    def depends_on_inputs(self, tensor: Tensor) -> bool:
        ref = self.refs.get(id(tensor.array))
        return ref is not None and ref.name in self.computed

    def __enter__(self) -> Tracer:
        self._previous = engine.GraphRecorder.active
        engine.GraphRecorder.active = self
        return self

    def __exit__(self, *exc: object) -> None:
        engine.GraphRecorder.active = self._previous

    @contextlib.contextmanager
    def backward(self, first_order: bool) -> Iterator[None]:
        """Around a recorded backward pass: ``first_order`` says it is not differentiated
        again, so a primitive whose array rule is cheaper is recorded as that rule."""
        outer, self.first_order = self.first_order, first_order
        try:
            yield
        finally:
            self.first_order = outer

    def side_effect(self, what: str) -> None:
        """The engine's hook: ``what`` (``backward()``, an optimizer's ``step()``) is about
        to change state that no primitive records.  A graph would drop it (a replay would
        leave ``.grad`` or the parameters as they were), so the trace is refused before the
        change: a :class:`GraphError` saying what to trace instead."""
        if what == "backward()":
            raise GraphError(
                f"graph {self.name}: the traced function calls backward(), which fills the "
                f"leaves' .grad outside the tensor operations a graph records, so a replay "
                f"would not set .grad. Trace the forward only (the loss) and call "
                f"backward() on the traced function's result (its graph has a backward), "
                f"or use difflab.compile, which runs such a call eagerly (a graph break "
                f"before backward())")
        raise GraphError(
            f"graph {self.name}: the traced function calls {what}, which updates the "
            f"parameters' arrays and the optimizer's state outside the tensor operations a "
            f"graph records, so a replay would not update them. Trace the forward only and "
            f"call backward() and the optimizer's step() outside the traced function")

    def value_read(self, tensor: Tensor, what: str) -> None:
        """The engine's hook: ``what`` turned a tensor's value into Python."""
        if self.depends_on_inputs(tensor):
            self.warn_value_read(what)

    def warn_value_read(self, what: str) -> None:
        """Warn once per line that the traced function read a tensor's value into Python."""
        if self.rule_reads is not None:  # a derivative rule is traced: its caller decides
            self.rule_reads.append(what)
            return
        if self.stand_ins:  # (a stand-in's value is no value: read the real one)
            raise standins.NeedsValues(what)
        self._warn(f"{what} of a traced tensor turns its value into a Python value while "
                   f"tracing; the graph keeps the result as it was for this example (a branch "
                   f"on it is baked in and will not be re-decided for other inputs). Use "
                   f"dl.where(...) to choose between values inside the graph.")

    def _warn(self, message: str) -> None:
        """A :class:`TracerWarning` naming the user's line (once per line)."""
        if self.stand_ins:  # (what it warns about may depend on the values)
            raise standins.NeedsValues(message)
        filename, lineno = _user_frame()
        if (filename, lineno) in self.warned:
            return
        self.warned.add((filename, lineno))
        warnings.warn_explicit(f"{filename}:{lineno}: {message}", TracerWarning, filename,
                               lineno)


@contextlib.contextmanager
def _generator_kept() -> Iterator[None]:
    """Run a block that builds a graph (a trace, a transform) without using up random
    numbers: the default generator's state is put back afterwards, so the graph's first
    run draws what the eager call would have."""
    generator = random.default_generator
    rng, state = generator.rng, generator.rng.bit_generator.state
    try:
        yield
    finally:
        generator.rng = rng
        rng.bit_generator.state = state


def _user_frame() -> tuple[str, int]:
    """The innermost caller outside the difflab package: the line that read the value."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if not filename.startswith(_PACKAGE_DIR + os.sep):
            return frame.f_code.co_filename, frame.f_lineno
        frame = frame.f_back
    return "<unknown>", 0


# ----------------------------------------------------------- nested outputs


def _flatten(value: Any, flat: list) -> Any:
    """Collect the leaves of nested tuples/lists/dicts into ``flat``; return the nesting."""
    if isinstance(value, tuple):
        return ["tuple", [_flatten(v, flat) for v in value]]
    if isinstance(value, list):
        return ["list", [_flatten(v, flat) for v in value]]
    if isinstance(value, dict):
        return ["dict", [[k, _flatten(v, flat)] for k, v in value.items()]]
    flat.append(value)
    return "T"


def unflatten(spec: Any, leaves: Sequence[Any]) -> Any:
    """Inverse of ``_flatten``: nest ``leaves`` as ``spec`` says."""
    it = iter(leaves)

    def build(s: Any) -> Any:
        if s == "T":
            return next(it)
        kind, items = s
        if kind == "dict":
            return {k: build(v) for k, v in items}
        built = [build(v) for v in items]
        return tuple(built) if kind == "tuple" else built

    return build(spec)


# ------------------------------------------------------------ trace and script


def _argument_names(fn: Callable, count: int) -> list[str]:
    try:
        target = fn.forward if hasattr(fn, "forward") and hasattr(fn, "parameters") else fn
        params = [p for p in inspect.signature(target).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        names = [p.name for p in params][:count]
    except (TypeError, ValueError):
        names = []
    names += [f"x{i}" for i in range(len(names), count)]
    return [n if n.isidentifier() else f"x{i}" for i, n in enumerate(names)]


def _module_state(fn: Any) -> list[tuple[str, Tensor]]:
    """A module's parameters and buffers by name (they become parameter inputs)."""
    if not (hasattr(fn, "named_parameters") and hasattr(fn, "named_buffers")):
        return []
    state = list(fn.named_parameters()) + list(fn.named_buffers())
    return [(name, t) for name, t in state if t is not None]


def _captured(graph: Graph) -> list[tuple[str, Tensor]]:
    """The tensors a traced function read from outside (parameters of the graph, by name)."""
    return [(i.name, i.tensor) for i in graph.inputs if i.tensor is not None]


def _signature(args: Sequence[Any]) -> tuple:
    """What a compiled graph depends on: shapes and dtypes of arrays, values of the rest."""
    key = []
    for a in args:
        array = a.array if isinstance(a, Tensor) else a
        if _is_array(array):
            key.append((tuple(array.shape), np.dtype(array.dtype).str,
                        bool(getattr(a, "requires_grad", False))))
        else:
            key.append(("value", repr(a)))
    return tuple(key)


def trace_graph(fn: Callable, example_inputs: Sequence[Any], name: str | None = None) -> Graph:
    """Run ``fn(*example_inputs)`` once under a tracer and return its graph.

    Tensors and arrays among the inputs become the graph's arguments;
    anything else (a number, a string) is passed as it is and baked in.
    A module's parameters and buffers become parameter inputs.  Tracing
    leaves no trace of its run: the default generator and the arguments and
    buffers the function writes in place are restored afterwards (the
    graph's runs draw and write).
    """
    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    name = name or getattr(fn, "__name__", type(fn).__name__)
    tracer = Tracer(name)
    names = _argument_names(fn, len(example_inputs))
    # (the first build of a graph may trace on stand-ins: see difflab.jit.standins)
    shape_only = standins.stand_in if standins.active() else (lambda a: a)
    call_args = []
    for arg_name, value in zip(names, example_inputs):
        if isinstance(value, Tensor):
            # A fresh tensor on a fresh view of the same memory: the function's own use of
            # it is traced, and requires_grad is kept (autograd.grad inside the function
            # works).  The view is a new array object, so a closure that holds the caller's
            # tensor too reads a constant, as in eager code and every other method (a
            # replay on new arguments must not change what the closure holds).
            t = Tensor._wrap(shape_only(value.array.view()))
            t._requires_grad = value.requires_grad
            tracer.add_input(arg_name, t)
            call_args.append(t)
        elif _is_array(value):
            t = Tensor._wrap(shape_only(value.view()))
            tracer.add_input(arg_name, t)
            call_args.append(t)
        else:
            call_args.append(value)
    state = _module_state(fn)
    for state_name, tensor in state:
        tracer.add_input(state_name, tensor, kind="parameter")
    # (a stand-in cannot be written: nothing to put back)
    before = [(i.name, i.example, backend.to_numpy(i.example).copy()) for i in tracer.inputs
              if not standins.is_stand_in(i.example)]
    try:
        # Tracing runs the function once, but only the graph's runs count: the default
        # generator draws, and the arguments and buffers written, are as before the trace
        # (so `manual_seed(0); traced(x)` equals `manual_seed(0); fn(x)`, even on the call
        # that traced, and a BatchNorm's statistics move once per call).
        with tracer, _generator_kept():
            outputs = fn(*call_args)
        graph = tracer.graph(outputs)
        _check_state_unchanged(tracer, before, state)
    finally:
        for _, example, copy in before:
            if id(example) in tracer.written_arrays:
                example[...] = backend.to_device(copy, backend.device_of(example))
    return graph


def _check_state_unchanged(tracer: Tracer, before: list, state: list) -> None:
    """Refuse a trace whose arguments or module state changed in ways the graph misses.

    Writes through difflab's operations are updates the graph replays; a
    parameter replaced (``p.array = ...``) or changed through its raw array
    (``p.array[...] = 0``, NumPy on ``.numpy()``) is not, and a replay would
    silently differ from the eager call.
    """
    for name, tensor in state:
        example = next(e for n, e, _ in before if n == name)
        if tensor.array is not example:
            raise GraphError(
                f"the traced function replaced the array of {name} (p.data = ..., "
                f"p.array = ...); a graph cannot replay that. Write the new values in place "
                f"with difflab's operations (with difflab.no_grad(): p.copy_(value))")
    for name, example, copy in before:
        ref = tracer.refs.get(id(example))
        unchanged = backend.to_numpy(example)
        if ref is not None and ref.name == name and not np.array_equal(
                copy, unchanged, equal_nan=copy.dtype.kind in "fc"):
            raise GraphError(
                f"the traced function changed {name} outside difflab's operations (through "
                f".array, .numpy() or NumPy); the graph cannot replay that write. Use "
                f"difflab's in-place operations (x.add_(...), x[i] = ..., x.copy_(...)), "
                f"which the graph replays")


class TracedFunction:
    """A function compiled to static graphs: one graph per input signature.

    Calling it looks up the graph for the arguments' shapes and dtypes
    (and the values of non-tensor arguments), tracing ``fn`` again if this
    signature is new, and runs the graph on plain arrays.  With
    ``retrace=False`` a new signature is an error instead.  When an argument or a
    parameter requires grad, the graph's nodes are applied on the tape instead, so the
    result can be differentiated.  :func:`difflab.jit.trace` and
    :func:`difflab.jit.script` return one.

    Parameters
    ----------
    fn : callable
        A function of tensors (or a module).
    example_inputs : tuple, optional
        Arguments to trace the first graph with now (else: on the first call).
    retrace : bool, default True
        Trace again for a new signature; False: raise :class:`GraphError`.
    passes : sequence of str, default ()
        Graph passes run on each new graph (see :func:`difflab.jit.optimize`).

    Attributes
    ----------
    graphs : dict
        Signature -> the graph for it.
    traces : int
        How many times ``fn`` was traced.
    graph : Graph
        The graph traced or used most recently.

    Raises
    ------
    GraphError
        When called with a new signature and ``retrace=False`` (the message gives the
        traced and the new shapes), or when ``graph`` is read before any trace.

    See Also
    --------
    difflab.jit.trace : makes one from an example.
    difflab.jit.CompiledFunction : guarded graphs that also split at graph breaks.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import jit
    >>> f = jit.TracedFunction(lambda x: (x * x).sum())
    >>> f(dl.ones(3)), f.traces
    (tensor(3.), 1)
    >>> f(dl.full((3,), 2.0)), f.traces          # same signature: replayed
    (tensor(12.), 1)
    >>> f(dl.ones(4)), f.traces                  # a new shape: traced again
    (tensor(4.), 2)
    >>> fixed = jit.TracedFunction(lambda x: x.sum(), (dl.ones(3),), retrace=False)
    >>> fixed(dl.ones(4))                        # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    difflab.jit.graph.GraphError: graph <lambda> was traced for x: (3,) float32, but got (4,)...
    """

    def __init__(self, fn: Callable, example_inputs: Sequence[Any] | None = None,
                 retrace: bool = True, passes: Sequence[str] = ()) -> None:
        self.fn = fn
        self.retrace = retrace
        self.passes = tuple(passes)
        self.graphs: dict[tuple, Graph] = {}
        # (each graph as traced, before the passes: what a differentiable call evaluates,
        # since a fused kernel has no derivative rule)
        self._as_traced: dict[tuple, Graph] = {}
        self.traces = 0  # how many times fn was traced
        self._last: Graph | None = None
        functools.update_wrapper(self, fn, updated=()) if callable(fn) and hasattr(
            fn, "__name__") else None
        if example_inputs is not None:
            self.graph_for(*_as_tuple(example_inputs))

    @property
    def graph(self) -> Graph:
        """The graph traced most recently."""
        if self._last is None:
            raise GraphError(f"{self!r} has not been traced yet: call it once first")
        return self._last

    def graph_for(self, *args: Any) -> Graph:
        """The graph for these arguments (traced now if their signature is new)."""
        key = _signature(args)
        graph = self.graphs.get(key)
        if graph is None:
            if self.graphs and not self.retrace:
                known = next(iter(self.graphs.values()))
                known.program().check([a.array if isinstance(a, Tensor) else a
                                       for a in args if isinstance(a, Tensor) or _is_array(a)])
                raise GraphError(f"no graph for arguments {key}; traced for {list(self.graphs)}")
            graph = self._as_traced[key] = trace_graph(self.fn, args)
            if self.passes:
                from difflab.jit.passes import optimize

                with fusion.fusing_for(args):  # (kernels for the arguments' device)
                    graph = optimize(graph, self.passes)
            self.traces += 1
            self.graphs[key] = graph
        self._last = graph
        return graph

    def __call__(self, *args: Any) -> Any:
        graph = self.graph_for(*args)
        arrays = [a.array if isinstance(a, Tensor) else a for a in args
                  if isinstance(a, Tensor) or _is_array(a)]
        state = _module_state(self.fn) + _captured(graph)
        if is_grad_enabled() and any(
                t.requires_grad for t in [*args, *(t for _, t in state)]
                if isinstance(t, Tensor)):
            # Differentiable: each node applied on the tape, as the eager call would be, so
            # a loss of the outputs backpropagates into the arguments and parameters.
            graph.program().check(arrays)
            values = {i.name: (a if isinstance(a, Tensor) else Tensor._wrap(a))
                      for i, a in zip(graph.arguments(), [a for a in args
                                                          if isinstance(a, Tensor)
                                                          or _is_array(a)])}
            values.update(state)
            outputs = self._as_traced[_signature(args)].evaluate(values)
        else:
            outputs = graph.program().run(arrays, {name: t.array for name, t in state})
        outputs = _write_updates(graph, outputs, args, dict(state))
        return unflatten(graph.output_spec, [Tensor._wrap(o) if _is_array(o) else o
                                             for o in outputs])

    def __repr__(self) -> str:
        return f"<TracedFunction {getattr(self.fn, '__name__', type(self.fn).__name__)}>"


def _write_updates(graph: Graph, outputs: list, args: Sequence[Any],
                  state: dict[str, Any]) -> list:
    """Write a run's new values of ``graph.updates`` into the caller's tensors; the rest.

    ``outputs`` is what the graph returned (its updates last), ``args`` the
    call's arguments, ``state`` the parameters and buffers by name (tensors
    or arrays).  As the eager call wrote them in place, so does this: the
    caller's memory, with its version bumped.
    """
    count = len(graph.updates)
    if not count:
        return outputs
    given = [a for a in args if isinstance(a, Tensor) or _is_array(a)]
    targets = dict(zip((i.name for i in graph.arguments()), given))
    targets.update(state)
    for name, value in zip(graph.updates, outputs[-count:]):
        target = targets[name]
        value = value.array if isinstance(value, Tensor) else value
        if isinstance(target, Tensor):
            target.array[...] = value
            target._version[0] += 1
        else:
            target[...] = value
    return outputs[:-count]


def _as_tuple(x: Any) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def trace(fn: Callable, example_inputs: Any, *, retrace: bool = True,
          passes: Sequence[str] = ()) -> TracedFunction:
    """Trace ``fn`` (a function or a module) on ``example_inputs``: a callable static graph.

    ``fn`` runs once under a tracer; every primitive it reaches becomes a numbered
    line of the graph (Python control flow is taken as it went for the example:
    a branch on a tensor's value warns, naming the line).  The result runs the
    graph on new inputs of the same shapes and dtypes, without Python.

    Parameters
    ----------
    fn : callable or Module
        A function of tensors, or a module (its parameters are read at each call).
    example_inputs : Tensor or tuple
        One tensor or a tuple of arguments, whose shapes and dtypes the graph keeps.
    retrace : bool, default True
        On inputs of other shapes or dtypes, trace again (False: raise instead).
    passes : sequence of str, default ()
        Graph passes applied to each trace (``"fold"``, ``"cse"``, ``"dce"``,
        ``"fuse"``; :data:`difflab.jit.PASSES`).

    Returns
    -------
    TracedFunction
        Callable like ``fn``; ``.graph`` prints as a numbered listing.

    Raises
    ------
    GraphError
        With ``retrace=False``, for inputs of another shape or dtype.  When ``fn``
        calls ``backward()`` or an optimizer's ``step()``: a graph records tensor
        operations, not the ``.grad`` or parameter writes (trace the forward, call
        ``backward()`` on the result; or use :func:`difflab.compile`).

    See Also
    --------
    script : trace on the first call instead.
    difflab.compile : the same machinery with guards and graph breaks.
    difflab.export.export : a graph with its parameters, to save.

    Examples
    --------
    >>> import difflab as dl
    >>> f = dl.jit.trace(lambda x: dl.sin(x) * x, dl.tensor([1.0, 2.0]))
    >>> print(f.graph)
    graph <lambda>(x: (2,) float32)
      1  v1 = sin(x)      (2,)      float32
      2  v2 = mul(v1, x)  (2,)      float32
      return v2
    >>> f(dl.tensor([0.5, 1.5]))
    tensor([0.2397, 1.4962])
    """
    return TracedFunction(fn, example_inputs, retrace=retrace, passes=passes)


def script(fn: Callable | None = None, *, passes: Sequence[str] = ()) -> Any:
    """Decorator: compile ``fn`` to a static graph on its first call (per input signature).

    Meant for functions without Python control flow that depends on tensor
    values (such a branch warns while tracing, naming the line).  Unlike
    PyTorch's ``torch.jit.script`` it does not read the source: it traces.

    Parameters
    ----------
    fn : callable, optional
        The function; without it, ``script(passes=...)`` returns the decorator.
    passes : sequence of str, default ()
        Graph passes applied to each trace, as for :func:`trace`.

    Returns
    -------
    TracedFunction or callable
        The function, traced anew for each new input signature (shapes, dtypes).

    See Also
    --------
    trace : trace now, on example inputs.

    Examples
    --------
    >>> import difflab as dl
    >>> @dl.jit.script
    ... def energy(x):
    ...     return (x * x).sum()
    >>> energy(dl.tensor([1.0, 2.0]))
    tensor(5.)
    >>> energy(dl.tensor([1.0, 2.0, 3.0]))      # a new shape: traced again
    tensor(14.)
    """
    if fn is None:
        return lambda f: TracedFunction(f, passes=passes)
    return TracedFunction(fn, passes=passes)
