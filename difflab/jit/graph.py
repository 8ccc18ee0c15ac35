r"""The static graph: a plain list of primitive applications.

The tape (:mod:`difflab.autograd.engine`) is built anew on every call and
thrown away after ``backward``; that is a *dynamic* graph.  A *static* graph
is recorded once, kept, and then run again and again on new numbers::

    graph f(x: (3,) float64, w: (3,) float64 [parameter])
      1  v1 = mul(x, w)          (3,)  float64
      2  v2 = sin(v1)            (3,)  float64
      3  v3 = sum(v2)            ()    float64
      return v3

Each line is one :class:`Node`: a primitive from the registry
(:mod:`difflab.ops.registry`), the values it reads (:class:`Ref` to an
input, a constant or an earlier node; or a literal number), its
non-differentiable settings (``params``: an axis, a shape), and the shape
and dtype of what it computes.  The listing reads like the tape printer's
Wengert list (:mod:`difflab.autograd.tape`), because it *is* one, kept.

A node has one output, ``v3``; a primitive may also have *saved* arrays
for its derivative (the mask of ``relu``, say), and when a backward graph
reads them they are the node's extra outputs ``v3.s0``, ``v3.s1``, ...

Running a graph needs no Tensor and no tape: :func:`interpret` is the
whole idea in a dozen lines (read it next to the tape's backward walk in
:mod:`difflab.autograd.engine`): a dictionary of values by name, and for
each node its primitive's ``forward`` on the values it reads.
:meth:`Graph.run` computes the same with the arrays in a list indexed by
slot numbers worked out once (:class:`difflab.jit.program.Program`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from difflab import backend
from difflab.jit.ops import Differentiable, _ContextCatcher  # noqa: F401  (re-exported)
from difflab.ops import registry


class GraphError(ValueError):
    """A graph that cannot be built, run or transformed as asked; the message says why.

    Raised when a graph is run with the wrong number of arguments, shapes or dtypes, or
    without a parameter; when a pass or a transform is asked for something the graph
    does not have (an unknown pass, a ``wrt`` that is not an input); and when tracing
    meets what a static graph cannot replay (a write through a view, a parameter changed
    outside difflab's operations).  It is a ``ValueError``.

    See Also
    --------
    difflab.jit.GraphBreakError : the error of ``compile(fullgraph=True)``, a subclass.

    Examples
    --------
    >>> import numpy as np, difflab as dl
    >>> from difflab import jit
    >>> f = jit.trace(lambda x, w: (x * w).sum(), (dl.ones(3), dl.ones(3)))
    >>> try:
    ...     f.graph.run(np.ones(3))                  # w is missing
    ... except jit.GraphError as error:
    ...     print(error)
    graph <lambda> takes 2 arguments (x, w), got 1
    """


def replay_error(exc: Exception, where: str) -> GraphError:
    """A node's error while a graph runs, as a :class:`GraphError` naming the node, *and* of
    the error's own class (an ``IndexError`` or a ``TypeError`` stays one): code that
    catches what eager code raises catches what the replay raises."""
    for kind in (IndexError, TypeError):
        if isinstance(exc, kind):
            return _REPLAY_ERRORS[kind](f"{where}: {exc}")
    return GraphError(f"{where}: {exc}")


class GraphIndexError(GraphError, IndexError):
    """A replayed node refused an index (out of range): a GraphError and an IndexError."""


class GraphTypeError(GraphError, TypeError):
    """A replayed node refused a type: a GraphError and a TypeError."""


_REPLAY_ERRORS = {IndexError: GraphIndexError, TypeError: GraphTypeError}


class Ref:
    """A reference to a value of the graph by its name (``x``, ``c0``, ``v3``, ``v3.s0``).

    A :class:`Node`'s arguments are ``Ref`` for arrays (an input, a constant, an earlier
    node's result or saved array) and plain Python values for numbers.  Two refs are
    equal (and hash alike) when their names are; the repr is the bare name, as the
    listing prints it.

    Parameters
    ----------
    name : str
        The value's name: an input's (``x``), a constant's (``c0``), a node's result
        (``v3``) or the k-th array it saved for its derivative (``v3.s0``).

    See Also
    --------
    Node : reads values through refs.
    Graph : where the names are defined.

    Examples
    --------
    >>> from difflab import jit
    >>> ref = jit.Ref("v3")
    >>> ref, ref == jit.Ref("v3"), ref == jit.Ref("v4")
    (v3, True, False)
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Ref) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("Ref", self.name))


@dataclass
class Input:
    """A named input of the graph: an argument, a parameter or a constant.

    A dataclass; equality compares the name, kind, shape and dtype.

    Parameters
    ----------
    name : str
        The name nodes refer to it by (``x``, ``fc.weight``, ``c0``).
    kind : {'input', 'parameter', 'constant'}
        ``"input"``: an argument of the function, passed positionally to
        :meth:`Graph.run`.  ``"parameter"``: a module's weight, passed by name, read at
        each call so that training updates are seen.  ``"constant"``: a value captured
        while tracing; its array is in ``Graph.constants``.
    shape : tuple of int
        The traced shape (a static graph is specialised on it).
    dtype : numpy.dtype
        The traced dtype.
    example : array, optional
        The array seen while tracing (not compared).
    tensor : Tensor, optional
        For a parameter the traced function read from outside (a closure's weight that
        requires grad): the tensor itself, read at each call.

    See Also
    --------
    Graph : holds the inputs, in order.
    Ref : how a node reads an input.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import jit
    >>> model = dl.nn.Linear(2, 1)
    >>> graph = jit.trace(model, dl.ones(4, 2)).graph
    >>> [(i.name, i.kind, i.shape) for i in graph.inputs]
    [('x', 'input', (4, 2)), ('weight', 'parameter', (1, 2)), ('bias', 'parameter', (1,))]
    """

    name: str
    kind: str
    shape: tuple
    dtype: np.dtype
    example: Any = field(default=None, repr=False, compare=False)  # the array seen when tracing
    # A parameter the traced function read from outside (a closure's weight that requires
    # grad): the tensor itself, read at each call as a module's parameters are.
    tensor: Any = field(default=None, repr=False, compare=False)


@dataclass
class Node:
    """One primitive application, ``name = op(*args, **params)``: a line of the listing.

    Running a node calls its primitive's ``forward`` on the values its arguments name.
    A dataclass: tracing makes the nodes, the passes copy and rewrite them.

    Parameters
    ----------
    name : str
        The result's name (``v1``, ``v2``, ...).
    op : Primitive
        The primitive, from the registry (``difflab.ops.registry.get("sin")``).
    args : tuple
        :class:`Ref` for arrays and plain Python values for numbers (and ``None``).
    params : dict
        The primitive's non-differentiable settings (an axis, a shape); may hold
        ``Ref`` too (an index array).
    shape : tuple of int
        The result's shape.
    dtype : numpy.dtype
        The result's dtype.
    needs_input_grad : tuple of bool, default ()
        What the primitive's ``ctx`` said while tracing: it decides what ``forward``
        saves, so a replay that reads the saved arrays (``name.s0``, ...) must pass
        the same (empty: no input needs a gradient).
    saved : tuple, default ()
        One entry per array the primitive saves: its ``(shape, dtype)`` when it is an
        output of this node (``name.s{k}``), ``None`` when it is an input or the result.

    See Also
    --------
    Graph : a list of nodes.
    Ref : what a node's arguments name.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import jit
    >>> graph = jit.trace(lambda x: (x * 2).sum(), dl.ones(3)).graph
    >>> node = graph.nodes[0]
    >>> node.name, node.op_name, node.args, node.shape
    ('v1', 'mul', (x, 2), (3,))
    >>> node.refs(), node.outputs()
    ([x], ['v1'])
    """

    name: str
    op: Any
    args: tuple
    params: dict
    shape: tuple
    dtype: np.dtype
    needs_input_grad: tuple = ()
    # One entry per array the primitive saves (ctx.saved): its (shape, dtype) if it is
    # an output of this node (``name.s{k}``), None if it is an input or the result.
    saved: tuple = ()

    @property
    def op_name(self) -> str:
        return self.op.name

    def refs(self) -> list[Ref]:
        """Every value this node reads, in ``args`` and inside ``params``."""
        found: list[Ref] = []
        _collect_refs(self.args, found)
        _collect_refs(tuple(self.params.values()), found)
        return found

    def outputs(self) -> list[str]:
        """The names this node defines: its result, then its saved arrays."""
        return [self.name] + [f"{self.name}.s{k}" for k, m in enumerate(self.saved)
                              if m is not None]


_SAVED_NAME = re.compile(r"^(v\d+)\.s\d+$")


def saved_owner(name: str) -> str | None:
    """The node whose saved array ``name`` is (``"v3"`` for ``"v3.s0"``), or None."""
    match = _SAVED_NAME.match(name)
    return match.group(1) if match else None


def _collect_refs(value: Any, found: list) -> None:
    if isinstance(value, Ref):
        found.append(value)
    elif isinstance(value, (tuple, list)):
        for v in value:
            _collect_refs(v, found)
    elif isinstance(value, slice):
        _collect_refs((value.start, value.stop, value.step), found)


def substitute(value: Any, mapping: Mapping[str, Any]) -> Any:
    """``value`` with each ``Ref`` whose name is in ``mapping`` replaced (recursively)."""
    if isinstance(value, Ref):
        return mapping.get(value.name, value)
    if isinstance(value, tuple):
        return tuple(substitute(v, mapping) for v in value)
    if isinstance(value, list):
        return [substitute(v, mapping) for v in value]
    if isinstance(value, slice):
        return slice(*(substitute(v, mapping) for v in (value.start, value.stop, value.step)))
    return value


def _resolve(value: Any, env: Mapping[str, Any] | list, slots: Mapping[str, int] | None) -> Any:
    """``value`` with each ``Ref`` replaced by its array (from ``env`` by name or slot)."""
    if isinstance(value, Ref):
        return env[slots[value.name]] if slots is not None else env[value.name]
    if isinstance(value, tuple):
        return tuple(_resolve(v, env, slots) for v in value)
    if isinstance(value, list):
        return [_resolve(v, env, slots) for v in value]
    if isinstance(value, slice):
        return slice(*(_resolve(v, env, slots) for v in (value.start, value.stop, value.step)))
    return value


class Graph:
    """A static graph: named inputs, constants, a list of nodes, the outputs.

    Recorded once (by :func:`difflab.jit.trace`, or built by hand), kept, and run again
    and again on new arrays with :meth:`run`, without a Tensor or a tape.  Printing it
    gives the numbered listing, one line per :class:`Node`.  The passes
    (:func:`difflab.jit.optimize`) and transforms (:func:`difflab.jit.grad`) return new
    graphs; a graph is not changed after it is built.

    Parameters
    ----------
    name : str
        The name shown in the listing (the traced function's).
    inputs : sequence of Input
        The arguments (in call order), parameters and constants.
    constants : mapping of str to array
        The arrays of the constant inputs, by name.
    nodes : sequence of Node
        The primitive applications, in the order they run.
    outputs : sequence
        What the graph returns, flat: a :class:`Ref` or a literal per output.
    output_spec : object, default "T"
        How the flat ``outputs`` nest (a tensor, a tuple of them, ...), so a traced
        function returns what the Python function did.
    updates : sequence of str, default ()
        The inputs the function wrote in place (a BatchNorm's running statistics,
        ``x.add_(1)`` on an argument): their new values are the *last*
        ``len(updates)`` entries of ``outputs``, and whoever runs the graph for a
        caller (:class:`TracedFunction`, an exported module) writes them back into the
        caller's tensors, as the eager call would have.  The passes treat them as
        outputs like any other, so nothing they depend on is dropped.

    Raises
    ------
    GraphError
        From :meth:`run` and :meth:`evaluate`: arguments of the wrong number, shape or
        dtype, or a missing parameter.

    See Also
    --------
    difflab.jit.trace : records a function's graph.
    difflab.jit.interpret : the reference interpreter, a dozen lines.
    difflab.jit.optimize : the graph passes (dce, cse, fold, fuse).

    Examples
    --------
    A graph built by hand, ``sin(x * w)`` with ``w`` a parameter:

    >>> import numpy as np
    >>> from difflab import jit
    >>> from difflab.ops import registry
    >>> f64 = np.dtype("float64")
    >>> x = jit.Input("x", "input", (3,), f64)
    >>> w = jit.Input("w", "parameter", (3,), f64)
    >>> v1 = jit.Node("v1", registry.get("mul"), (jit.Ref("x"), jit.Ref("w")), {}, (3,), f64)
    >>> v2 = jit.Node("v2", registry.get("sin"), (jit.Ref("v1"),), {}, (3,), f64)
    >>> graph = jit.Graph("f", [x, w], {}, [v1, v2], [jit.Ref("v2")])
    >>> print(graph)
    graph f(x: (3,) float64, w: (3,) float64 [parameter])
      1  v1 = mul(x, w)  (3,)      float64
      2  v2 = sin(v1)    (3,)      float64
      return v2
    >>> graph.run(np.array([0.0, 1.0, 2.0]), w=np.full(3, 0.5))
    [array([0.        , 0.47942554, 0.84147098])]
    >>> graph.op_counts()
    {'mul': 1, 'sin': 1}
    >>> graph.run(np.zeros(3))
    Traceback (most recent call last):
        ...
    difflab.jit.graph.GraphError: graph f: no value for parameter 'w' (pass it by name)
    """

    def __init__(self, name: str, inputs: Sequence[Input], constants: Mapping[str, Any],
                 nodes: Sequence[Node], outputs: Sequence[Any], output_spec: Any = "T",
                 updates: Sequence[str] = ()) -> None:
        self.name = name
        self.inputs = list(inputs)
        self.constants = dict(constants)
        self.nodes = list(nodes)
        self.outputs = list(outputs)
        self.output_spec = output_spec
        self.updates = tuple(updates)
        self._program: Any = None

    #: The class that runs a graph fast, :class:`difflab.jit.program.Program` (it puts
    #: itself here when it loads: the IR does not import the runner built on it).
    program_class: ClassVar[Any] = None

    # -------------------------------------------------------------- looking
    def arguments(self) -> list[Input]:
        """The inputs a caller passes, in order (not parameters, not constants)."""
        return [i for i in self.inputs if i.kind == "input"]

    def parameters(self) -> list[Input]:
        return [i for i in self.inputs if i.kind == "parameter"]

    def meta(self) -> dict[str, tuple]:
        """name -> (shape, dtype) for every value of the graph."""
        out = {i.name: (tuple(i.shape), np.dtype(i.dtype)) for i in self.inputs}
        for node in self.nodes:
            out[node.name] = (tuple(node.shape), np.dtype(node.dtype))
            for k, m in enumerate(node.saved):
                if m is not None:
                    out[f"{node.name}.s{k}"] = (tuple(m[0]), np.dtype(m[1]))
        return out

    def __len__(self) -> int:
        return len(self.nodes)

    def op_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for node in self.nodes:
            counts[node.op_name] = counts.get(node.op_name, 0) + 1
        return counts

    def listing(self) -> str:
        """The numbered listing: one line per node, with its shape and dtype."""
        def sig(i: Input) -> str:
            tag = "" if i.kind == "input" else f" [{i.kind}]"
            return f"{i.name}: {_shape(i.shape)} {np.dtype(i.dtype).name}{tag}"

        head = [i for i in self.inputs if i.kind != "constant"]
        lines = [f"graph {self.name}({', '.join(sig(i) for i in head)})"]
        for i in self.inputs:
            if i.kind == "constant":
                lines.append(f"      {i.name} = constant{_preview(self.constants.get(i.name))}"
                             f"  {_shape(i.shape)}  {np.dtype(i.dtype).name}")
        width = len(str(len(self.nodes)))
        exprs = [_expression(n) for n in self.nodes]
        pad = max([len(e) for e in exprs] + [0]) + 2
        shapes = [_shape(n.shape) for n in self.nodes]
        shape_pad = max([len(s) for s in shapes] + [8]) + 2
        for k, (node, expr, shape) in enumerate(zip(self.nodes, exprs, shapes), start=1):
            saved = f"  saves {', '.join(node.outputs()[1:])}" if node.saved else ""
            lines.append(f"  {k:>{width}}  {expr:<{pad}}{shape:<{shape_pad}}"
                         f"{np.dtype(node.dtype).name}{saved}")
        returned = self.outputs[:len(self.outputs) - len(self.updates)]
        lines.append("  return " + ", ".join(_arg(o) for o in returned))
        for name, value in zip(self.updates, self.outputs[len(returned):]):
            lines.append(f"  write {name} = {_arg(value)}")
        return "\n".join(lines)

    __str__ = listing

    def __repr__(self) -> str:
        return f"<Graph {self.name}: {len(self.inputs)} inputs, {len(self.nodes)} nodes>"

    # -------------------------------------------------------------- running
    def program(self) -> Any:
        """The graph compiled to a flat :class:`~difflab.jit.program.Program` (once).

        A pass returns a new graph, so the program of a graph never goes stale.
        """
        if self._program is None:
            self._program = self.program_class(self)
        return self._program

    def run(self, *arrays: Any, **named: Any) -> list:
        """Run on plain arrays: the arguments in order, parameters by name; a list of outputs.

        No Tensor and no tape: each node's ``forward`` on the arrays, as
        :func:`interpret` does, through the graph's flat :meth:`program`.
        """
        return self.program().run(arrays, named)

    def evaluate(self, values: Mapping[str, Any]) -> list:
        """Run the graph *eagerly* on tensors, one ``engine.apply`` per node.

        Slow, but every operation is recorded on the tape (and seen by a
        tracer): this is how a graph is differentiated (:func:`difflab.jit.grad`).
        ``values`` maps each input name to a Tensor (constants are filled in).
        """
        from difflab.autograd import engine
        from difflab.tensor import Tensor

        env: dict[str, Any] = {}
        for i in self.inputs:
            if i.kind == "constant":
                env[i.name] = values.get(i.name, self.constants[i.name])
            else:
                try:
                    env[i.name] = values[i.name]
                except KeyError:
                    raise GraphError(f"graph {self.name}: no value for input {i.name!r}") from None
        catcher = _ContextCatcher()
        for node in self.nodes:
            args = _resolve(node.args, env, None)
            params = {k: _resolve(v, env, None) for k, v in node.params.items()}
            params = {k: v.array if isinstance(v, Tensor) else v for k, v in params.items()}
            # (a primitive without a derivative, a random draw, is applied as it is: the
            # tape records nothing for it)
            op = Differentiable(node.op) if node.op.differentiable else node.op
            with catcher:
                result = engine.apply(op, *args, **params)
            env[node.name] = result
            if node.saved:
                saved = catcher.ctx.saved or ()
                if len(saved) < len(node.saved):  # (forward saved less: no grad needed)
                    raise GraphError(
                        f"{node.name} = {node.op_name}(...): the graph reads {len(node.saved)} "
                        f"saved arrays but the primitive saved {len(saved)} in this run (its "
                        f"inputs need no gradient here); evaluate it with inputs that require grad"
                    )
                for k, m in enumerate(node.saved):
                    if m is not None:
                        env[f"{node.name}.s{k}"] = Tensor._wrap(saved[k])
        return [_resolve(o, env, None) for o in self.outputs]


def interpret(graph: Graph, *arrays: Any, **named: Any) -> list:
    """Run ``graph`` on plain arrays, one node at a time: the reference interpreter.

    The values live in a dictionary by name (``x``, ``c0``, ``v3``,
    ``v3.s0``); each node reads its arguments from it, calls its
    primitive's ``forward`` and writes its result (and the arrays it saved
    for its derivative) back.  That is all a static graph means;
    :meth:`Graph.run` computes the same, faster
    (:class:`~difflab.jit.program.Program`).

    Parameters
    ----------
    graph : Graph
        The graph to run.
    *arrays : array
        Its arguments, in order (NumPy or CuPy arrays of the traced shapes).
    **named : array
        Its parameters, by name.

    Returns
    -------
    list
        The graph's outputs, flat (``graph.output_spec`` says how they nest).

    Examples
    --------
    >>> import numpy as np, difflab as dl
    >>> from difflab import jit
    >>> graph = jit.trace(lambda x: (x * x).sum(), dl.tensor(np.zeros(3))).graph
    >>> jit.interpret(graph, np.array([1.0, 2.0, 3.0]))
    [array(14.)]
    """
    if len(arrays) != len(graph.arguments()):
        raise GraphError(f"graph {graph.name} takes {len(graph.arguments())} arguments, "
                         f"got {len(arrays)}")
    env: dict[str, Any] = dict(graph.constants)
    env.update((i.name, a) for i, a in zip(graph.arguments(), arrays))
    for i in graph.parameters():
        if i.name not in named:
            raise GraphError(f"graph {graph.name}: no value for parameter {i.name!r}")
        env[i.name] = named[i.name]
    first = arrays[0] if arrays else next(iter(graph.constants.values()), None)
    xp = backend.numpy_namespace if first is None else backend.array_module(first)
    for node in graph.nodes:
        args = _resolve(node.args, env, None)
        params = {k: _resolve(v, env, None) for k, v in node.params.items()}
        # (what the node's ctx said while tracing decides what forward saves)
        ctx = registry.Context(node.needs_input_grad or (False,) * len(args))
        y = node.op.forward(ctx, xp, *args, **params)
        env[node.name] = np.asarray(y) if isinstance(y, np.generic) else y  # (0-d: an array)
        for k, meta in enumerate(node.saved):
            if meta is not None:
                env[f"{node.name}.s{k}"] = ctx.saved[k]
    return [_resolve(o, env, None) for o in graph.outputs]


# ------------------------------------------------- helpers of the passes


def _readers(graph: Graph) -> dict[str, int]:
    """How many times each value is read (by nodes; an output counts as a million
    readers, so a pass never folds a returned value into another node)."""
    count: dict[str, int] = {}
    for node in graph.nodes:
        for r in node.refs():
            count[r.name] = count.get(r.name, 0) + 1
    for o in graph.outputs:
        if isinstance(o, Ref):
            count[o.name] = count.get(o.name, 0) + 10**6
    return count


def _add_tree(root: Node, producers: dict, readers: dict,
              leaf: Callable[[Node], Any]) -> tuple[list, list[Node]] | None:
    """The terms a tree of adds sums, for the passes that rewrite such a sum as one step
    (``join_scatters``, ``stack_products``): ``(terms, the nodes inside)`` or None.

    ``root`` is an add of two values; below it, every add of two values read by no
    other node, of root's shape and dtype, is followed down to the nodes that are no
    add: ``leaf(node)`` gives the term each stands for (None: the tree is not one the
    pass rewrites).  The nodes inside, leaves included, are what the rewrite removes.
    """
    if root.op_name != "add" or len(root.args) != 2 or root.saved:
        return None
    inside: list[Node] = []

    def terms_under(ref: Any) -> list | None:
        if not isinstance(ref, Ref) or readers.get(ref.name) != 1:
            return None  # (a value read elsewhere too stays computed: not part of the sum)
        node = producers.get(ref.name)
        if node is None or node.saved or tuple(node.shape) != tuple(root.shape) \
                or np.dtype(node.dtype) != np.dtype(root.dtype):
            return None
        inside.append(node)
        if node.op_name == "add" and len(node.args) == 2:
            left = terms_under(node.args[0])
            right = terms_under(node.args[1]) if left else None
            return left + right if left and right else None
        term = leaf(node)
        return None if term is None else [term]

    terms: list = []
    for arg in root.args:
        found = terms_under(arg)
        if found is None:
            return None
        terms += found
    return terms, inside


def _copy(graph: Graph, nodes: Sequence[Node], outputs: Sequence[Any],
          inputs: Sequence[Input] | None = None, constants: dict | None = None) -> Graph:
    return Graph(graph.name, graph.inputs if inputs is None else inputs,
                 graph.constants if constants is None else constants, nodes, outputs,
                 graph.output_spec, graph.updates)


def _show(name: str, before: Graph, after: Graph, show: bool) -> None:
    if show:
        print(f"--- before {name}: {len(before.nodes)} nodes\n{before.listing()}")
        print(f"--- after {name}: {len(after.nodes)} nodes\n{after.listing()}\n")

    def written(self, tensor: Any, result: Any) -> None:
        if self.outer is not None:
            self.outer.written(tensor, result)


# ------------------------------------------------------------------ printing


def _shape(shape: Sequence[int]) -> str:
    return "(" + ", ".join(str(int(s)) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _preview(value: Any) -> str:
    if value is None or not hasattr(value, "size") or value.size != 1:
        return ""
    return f" {backend.to_numpy(value).reshape(()).item()!r}"


def _arg(value: Any) -> str:
    if isinstance(value, Ref):
        return value.name
    if isinstance(value, tuple):
        return "(" + ", ".join(_arg(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, list):
        return "[" + ", ".join(_arg(v) for v in value) + "]"
    if isinstance(value, slice):
        parts = [("" if v is None else _arg(v)) for v in (value.start, value.stop, value.step)]
        return ":".join(parts[:2] if value.step is None else parts)
    if value is Ellipsis:
        return "..."
    if isinstance(value, np.dtype):
        return value.name
    return repr(value)


def _expression(node: Node) -> str:
    args = [_arg(a) for a in node.args]
    if node.op.describe is not None:  # (a fused kernel lists its rules, not its settings)
        return node.op.describe(node, ", ".join(args))
    args += [f"{k}={_arg(v)}" for k, v in node.params.items()]
    return f"{node.name} = {node.op_name}({', '.join(args)})"
