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
from difflab.jit.ops import RuleReading, rule_value_reads  # noqa: F401  (re-exported)
from difflab.tensor import Tensor

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class TracerWarning(UserWarning):
    """Tracing read a tensor's value into Python: the graph keeps what that value was."""


def _is_array(x: Any) -> bool:
    return hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, Tensor)


class Tracer(RuleReading):
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

    records_backward = True  # a traced backward leaves its operations in the graph

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
            self._check_not_a_view_of_a_computed_value(array)
            ref = self.add_constant(array)
        return ref

    def _check_not_a_view_of_a_computed_value(self, array: Any) -> None:
        """An unknown array that views a computed one was made from a traced value outside
        the primitives (``t.array.reshape(-1)``): as a constant it would be silently stale."""
        base = getattr(array, "base", None)
        while base is not None:
            ref = self.refs.get(id(base))
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
        for array in op.shape_read_from(tuple(inputs), params):
            ref = self.refs.get(id(array.array if isinstance(array, Tensor) else array))
            if ref is not None and ref.name in self.computed:
                self._warn(f"{op.name}: the output's shape depends on the values of a traced "
                           f"tensor (a boolean mask selects as many elements as are true); "
                           f"the graph keeps this example's shape, so other inputs give "
                           f"wrong shapes or errors. Use dl.where(mask, x, 0) to keep the "
                           f"shape fixed")
                break
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

    def value_read(self, tensor: Tensor, what: str) -> None:
        """The engine's hook: ``what`` turned a tensor's value into Python."""
        if self.depends_on_inputs(tensor):
            self.warn_value_read(what)

    def warn_value_read(self, what: str) -> None:
        """Warn once per line that the traced function read a tensor's value into Python."""
        if self.rule_reads is not None:  # a derivative rule is traced: its caller decides
            self.rule_reads.append(what)
            return
        self._warn(f"{what} of a traced tensor turns its value into a Python value while "
                   f"tracing; the graph keeps the result as it was for this example (a branch "
                   f"on it is baked in and will not be re-decided for other inputs). Use "
                   f"dl.where(...) to choose between values inside the graph.")

    def _warn(self, message: str) -> None:
        """A :class:`TracerWarning` naming the user's line (once per line)."""
        filename, lineno = _user_frame()
        if (filename, lineno) in self.warned:
            return
        self.warned.add((filename, lineno))
        warnings.warn_explicit(f"{filename}:{lineno}: {message}", TracerWarning, filename,
                               lineno)


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
