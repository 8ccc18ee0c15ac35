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
So while tracing, the methods that turn a tensor's *value* into Python
(``bool``, ``float``, ``int``, ``item``, ``tolist``, ``numpy``) warn with a
:class:`TracerWarning` naming the file and line.

Two more things happen only while tracing.  The operations with no
derivative (comparisons, ``sign``, ``argmax``), which never reach
``engine.apply``, are recorded too (:class:`NoDerivative`).  And every
backward pass is recorded, as with ``create_graph=True``: the graph of a
training step must hold the backward's operations, not its numbers.
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

from difflab.autograd import engine
from difflab.jit.graph import Graph, GraphError, Input, Node, Ref
from difflab.ops.primitive import Primitive
from difflab.tensor import Tensor

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class TracerWarning(UserWarning):
    """Tracing read a tensor's value into Python: the graph keeps what that value was."""


def _is_array(x: Any) -> bool:
    return hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, Tensor)


class Tracer:
    """Builds a graph from the primitives applied while it is active.

    Use it as a context manager around the computation; register the
    inputs first (:meth:`add_input`), then call :meth:`graph` with the outputs.
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
        self.warned: set = set()
        self.rule_reads: list | None = None  # see rule_value_reads
        self.first_order = False  # recording a backward that is not differentiated again
        self._previous: Any = None
        self._patches: list = []

    # ------------------------------------------------------------ registering
    def _remember(self, array: Any, ref: Ref, tensor: Tensor | None = None) -> None:
        self.refs[id(array)] = ref
        self.keep.append(array)
        if tensor is not None:
            self.versions[id(array)] = (tensor._version, tensor._version[0])

    def add_input(self, name: str, value: Any, kind: str = "input") -> None:
        """Declare ``value`` (a Tensor or an array) as the graph input ``name``."""
        array = value.array if isinstance(value, Tensor) else value
        self.inputs.append(Input(name, kind, tuple(array.shape), np.dtype(array.dtype), array))
        self._remember(array, Ref(name), value if isinstance(value, Tensor) else None)
        self.computed.add(name)

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
            seen = self.versions.get(id(array))
            if seen is not None and seen[0] is x._version and seen[0][0] != seen[1]:
                raise GraphError(
                    "a traced tensor was changed in place (x += ..., x[i] = ..., "
                    "optimizer.step()): a static graph records values, not memory, so it "
                    "cannot replay that. Write the update out of place (x = x + ...), or "
                    "return the new value from the traced function."
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
            ref = self.add_constant(array)
        return ref

    # ------------------------------------------------------------- recording
    def record(self, op: Any, inputs: Sequence[Any], params: dict, ctx: Any,
               result: Tensor) -> None:
        """Called by ``engine.apply`` for every primitive while this tracer is active."""
        op = op.traced_as or op  # (the graph backward's wrapper: its primitive)
        args = tuple(self.ref_of(x) for x in inputs)
        params = {k: self.ref_of(v) for k, v in params.items()}
        name = f"v{len(self.nodes) + 1}"
        out = result.array
        # The arrays forward saved for the derivative that are neither an input nor
        # the output (a mask, a softmax): extra outputs a backward graph may read.
        saved, saved_meta = self._saved_by_position(ctx, inputs, out)
        node = Node(name, op, args, params, tuple(out.shape), np.dtype(out.dtype),
                    tuple(getattr(ctx, "needs_input_grad", ()) or ()), saved_meta)
        self.nodes.append(node)
        self._remember(out, Ref(name), result)
        if op.first_order_is_cheaper and isinstance(ctx, engine.Node):
            from difflab.jit.ops import Differentiable

            ctx.op = Differentiable(op)  # (its backward, if first order, may take the array rule)
        for k, array in saved:
            self._remember(array, Ref(f"{name}.s{k}"))
        if any(r.name in self.computed for r in node.refs()):
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
        """The graph of everything recorded, returning ``outputs`` (nested tensors)."""
        flat: list = []
        spec = _flatten(outputs, flat)
        refs = [self.ref_of(x) if isinstance(x, Tensor) or _is_array(x) else x for x in flat]
        return Graph(self.name, self.inputs, self.constants, self.nodes, refs, spec)

    # --------------------------------------------------------------- activity
    def depends_on_inputs(self, tensor: Tensor) -> bool:
        ref = self.refs.get(id(tensor.array))
        return ref is not None and ref.name in self.computed

    def __enter__(self) -> Tracer:
        self._previous = engine.GraphRecorder.active
        engine.GraphRecorder.active = self
        _watch_value_reads(self)
        return self

    def __exit__(self, *exc: object) -> None:
        engine.GraphRecorder.active = self._previous
        _unwatch_value_reads()

    def warn_value_read(self, what: str) -> None:
        """Warn once per line that the traced function read a tensor's value into Python."""
        if self.rule_reads is not None:  # a derivative rule is traced: its caller decides
            self.rule_reads.append(what)
            return
        filename, lineno = _user_frame()
        if (filename, lineno) in self.warned:
            return
        self.warned.add((filename, lineno))
        warnings.warn_explicit(
            f"{filename}:{lineno}: {what} of a traced tensor turns its value into a Python "
            f"value while tracing; the graph keeps the result as it was for this example "
            f"(a branch on it is baked in and will not be re-decided for other inputs). "
            f"Use dl.where(...) to choose between values inside the graph.",
            TracerWarning, filename, lineno,
        )


@contextlib.contextmanager
def rule_value_reads() -> Iterator[list]:
    """While a derivative rule is traced: the list of the tensor values it reads.

    A rule that branches on a value (``cumprod``'s VJP asks whether any x is 0)
    would have that branch baked into the graph.  The graph transforms trace
    a rule inside this block and, if the list is not empty, use the rule as
    one node instead, which decides the branch again at every run.  (The
    user is not warned: nothing is baked in.)
    """
    tracer = engine.GraphRecorder.active
    if not isinstance(tracer, Tracer):
        yield []
        return
    outer, tracer.rule_reads = tracer.rule_reads, []
    try:
        yield tracer.rule_reads
    finally:
        tracer.rule_reads = outer


def _user_frame() -> tuple[str, int]:
    """The innermost caller outside the difflab package: the line that read the value."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if not filename.startswith(_PACKAGE_DIR + os.sep):
            return frame.f_code.co_filename, frame.f_lineno
        frame = frame.f_back
    return "<unknown>", 0


# Tensor methods that turn a value into Python.  While tracing they warn.
_VALUE_READS = ("__bool__", "__float__", "__int__", "__index__", "item", "tolist", "numpy",
                "__array__")
_watchers: list[Tracer] = []
_patched: list[tuple] = []  # (owner, attribute, original) replaced while tracing


def _watching(name: str, original: Callable) -> Callable:
    label = {"__bool__": "bool()", "__float__": "float()", "__int__": "int()",
             "__index__": "using it as an index", "__array__": "np.asarray()"}.get(
        name, f".{name}()")

    @functools.wraps(original)
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        tracer = _watchers[-1] if _watchers else None
        if tracer is not None and engine.GraphRecorder.active is tracer \
                and tracer.depends_on_inputs(self):
            tracer.warn_value_read(label)
        return original(self, *args, **kwargs)

    return method


class NoDerivative(Primitive):
    """An operation with no derivative (a comparison, ``sign``, ``argmax``) as a graph op.

    These are not primitives of the registry: nothing differentiates through
    them, so they never reach ``engine.apply``.  A graph must still replay
    them (a mask ``x > 0`` depends on x), so while tracing each one records
    a node whose ``forward`` is the Tensor method (or ``difflab`` function)
    itself, run on the arrays: one definition, eager and traced alike.
    """

    double_backward = False

    def __init__(self, owner: Any, attribute: str) -> None:
        self.owner = owner
        self.attribute = attribute
        self.name = attribute.strip("_")
        self.original = owner.__dict__[attribute]
        self.math = "no derivative"

    def forward(self, ctx: Any, xp: Any, x: Any, *args: Any, **params: Any) -> Any:
        args = tuple(Tensor._wrap(a) if _is_array(a) else a for a in args)
        return self.original(Tensor._wrap(x), *args, **params).array

    def vjp(self, ctx: Any, xp: Any, g: Any, *saved: Any) -> tuple:
        raise GraphError(f"{self.name} has no derivative")


def _no_derivative_ops() -> dict[str, NoDerivative]:
    from difflab import functions

    methods = ("__floordiv__", "__mod__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__",
               "__ge__", "__and__", "__or__", "__xor__", "__invert__", "isnan", "isfinite",
               "any", "all", "sign", "round", "floor", "ceil", "argmax", "argmin")
    # (Tensor's methods live on the classes it is made of: patch the one that defines each)
    owners = {m: next((c for c in Tensor.__mro__ if m in c.__dict__), None) for m in methods}
    ops = [NoDerivative(owners[m], m) for m in methods if owners[m] not in (None, object)]
    ops.append(NoDerivative(functions, "heaviside"))  # (maximum's rule)
    return {op.name: op for op in ops}


#: name -> op, for the operations above (a saved graph names them like primitives).
NO_DERIVATIVE: dict[str, NoDerivative] = _no_derivative_ops()


def _recording(op: NoDerivative) -> Callable:
    @functools.wraps(op.original)
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = op.original(self, *args, **kwargs)
        tracer = engine.GraphRecorder.active
        if isinstance(tracer, Tracer) and isinstance(result, Tensor) \
                and id(result.array) not in tracer.refs:  # (eq calls __eq__: record once)
            tracer.record(op, (self, *args), kwargs, None, result)
        return result

    return method


def _recording_backward(original: Callable) -> Callable:
    """``run_backward`` that always records (``create_graph=True``) while tracing.

    A backward pass computed on plain arrays would give the graph only its
    numbers, as constants; recorded, its operations are nodes of the graph.
    Asked without ``create_graph``, the backward is first order
    (``tracer.first_order``): a primitive whose array rule is cheaper
    (``first_order_is_cheaper``) is then recorded as that rule, one node.
    """

    @functools.wraps(original)
    def run_backward(outputs: Any, grad_outputs: Any, retain_graph: bool, create_graph: bool,
                     *args: Any, **kwargs: Any) -> Any:
        tracer = engine.GraphRecorder.active
        if not isinstance(tracer, Tracer):
            return original(outputs, grad_outputs, True, True, *args, **kwargs)
        outer, tracer.first_order = tracer.first_order, not create_graph
        try:
            return original(outputs, grad_outputs, True, True, *args, **kwargs)
        finally:
            tracer.first_order = outer

    return run_backward


def _watch_value_reads(tracer: Tracer) -> None:
    """While tracing: value reads warn, and methods without a derivative are recorded."""
    if not _watchers:
        for name in _VALUE_READS:
            # (the class of Tensor's that defines the method: patched and restored there)
            owner = next((c for c in Tensor.__mro__ if name in c.__dict__), None)
            if owner is not None and owner is not object:
                _patched.append((owner, name, owner.__dict__[name]))
                setattr(owner, name, _watching(name, owner.__dict__[name]))
        for op in NO_DERIVATIVE.values():
            _patched.append((op.owner, op.attribute, op.original))
            setattr(op.owner, op.attribute, _recording(op))
        from difflab.autograd import functional

        _patched.append((functional, "run_backward", functional.run_backward))
        functional.run_backward = _recording_backward(functional.run_backward)
    _watchers.append(tracer)


def _unwatch_value_reads() -> None:
    _watchers.pop()
    if not _watchers:
        for owner, attribute, original in reversed(_patched):
            setattr(owner, attribute, original)
        _patched.clear()


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
    A module's parameters and buffers become parameter inputs.
    """
    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    name = name or getattr(fn, "__name__", type(fn).__name__)
    tracer = Tracer(name)
    names = _argument_names(fn, len(example_inputs))
    call_args = []
    for arg_name, value in zip(names, example_inputs):
        if isinstance(value, Tensor):
            # A fresh tensor on the same array: the function's own use of it is traced,
            # and requires_grad is kept (autograd.grad inside the function works).
            t = Tensor._wrap(value.array)
            t._requires_grad = value.requires_grad
            tracer.add_input(arg_name, t)
            call_args.append(t)
        elif _is_array(value):
            t = Tensor._wrap(value)
            tracer.add_input(arg_name, t)
            call_args.append(t)
        else:
            call_args.append(value)
    for state_name, tensor in _module_state(fn):
        tracer.add_input(state_name, tensor, kind="parameter")
    with tracer:
        outputs = fn(*call_args)
    return tracer.graph(outputs)


class TracedFunction:
    """A function compiled to static graphs: one graph per input signature.

    Calling it looks up the graph for the arguments' shapes and dtypes
    (and the values of non-tensor arguments), tracing ``fn`` again if this
    signature is new, and runs the graph on plain arrays.  With
    ``retrace=False`` a new signature is an error instead.
    """

    def __init__(self, fn: Callable, example_inputs: Sequence[Any] | None = None,
                 retrace: bool = True, passes: Sequence[str] = ()) -> None:
        self.fn = fn
        self.retrace = retrace
        self.passes = tuple(passes)
        self.graphs: dict[tuple, Graph] = {}
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
            graph = trace_graph(self.fn, args)
            if self.passes:
                from difflab.jit.passes import optimize

                graph = optimize(graph, self.passes)
            self.traces += 1
            self.graphs[key] = graph
        self._last = graph
        return graph

    def __call__(self, *args: Any) -> Any:
        graph = self.graph_for(*args)
        arrays = [a.array if isinstance(a, Tensor) else a for a in args
                  if isinstance(a, Tensor) or _is_array(a)]
        state = {name: t.array for name, t in _module_state(self.fn)}
        outputs = graph.program().run(arrays, state)
        return unflatten(graph.output_spec, [Tensor._wrap(o) if _is_array(o) else o
                                             for o in outputs])

    def __repr__(self) -> str:
        return f"<TracedFunction {getattr(self.fn, '__name__', type(self.fn).__name__)}>"


def _as_tuple(x: Any) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def trace(fn: Callable, example_inputs: Any, *, retrace: bool = True,
          passes: Sequence[str] = ()) -> TracedFunction:
    """Trace ``fn`` (a function or a module) on ``example_inputs``: a callable static graph.

    ``example_inputs`` is one tensor or a tuple of arguments.  The result
    runs the graph on new inputs of the same shapes and dtypes; on other
    shapes it traces again (``retrace=False``: raises instead).  Its
    ``.graph`` prints as a numbered listing.  ``passes`` names graph
    passes to apply to each trace (see :mod:`difflab.jit.passes`).
    """
    return TracedFunction(fn, example_inputs, retrace=retrace, passes=passes)


def script(fn: Callable | None = None, *, passes: Sequence[str] = ()) -> Any:
    """Decorator: compile ``fn`` to a static graph on its first call (per input signature).

    Meant for functions without Python control flow that depends on tensor
    values (such a branch warns while tracing, naming the line).  Unlike
    PyTorch's ``torch.jit.script`` it does not read the source: it traces.
    """
    if fn is None:
        return lambda f: TracedFunction(f, passes=passes)
    return TracedFunction(fn, passes=passes)
