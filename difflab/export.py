r"""Export a function as a graph, save it, and run it later without its Python code.

>>> ep = difflab.export.export(model, (x,))   # trace; the weights are copied in
>>> print(ep.graph)                            # the numbered listing
>>> difflab.export.save(ep, "model.dlgraph")
... # later, in another process that has never seen the model's code:
>>> ep = difflab.export.load("model.dlgraph")
>>> ep.module()(x)                            # the same outputs

Named after PyTorch's ``torch.export``: an :class:`ExportedProgram` has a
``.graph`` and a ``.module()`` to call.

The file
    is difflab's safe checkpoint format (:mod:`difflab.serialization`): a
    zip with ``manifest.json`` and one ``.npy`` per array, read back without
    unpickling.  The manifest holds the graph as plain JSON: each node names
    its operation, and loading looks that name up in the registry of
    primitives (:func:`difflab.jit.ops.resolve`); nothing in a file is
    imported or executed.  The graph carries its format version and a
    SHA-256 checksum of its JSON, and is checked node by node on load, so a
    file from a newer difflab or an edited manifest is refused with a clear
    message instead of running something else than was saved.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from difflab import backend, serialization
from difflab.jit.graph import Graph, GraphError, Input, Node, Ref
from difflab.jit.ops import resolve
from difflab.jit.tracing import (
    _captured,
    _module_state,
    _write_updates,
    trace_graph,
    unflatten,
)
from difflab.jsontree import Reader, Tag, TreeCodec, dict_tag, float_tag, tuple_tag
from difflab.tensor import Tensor

FORMAT = "difflab-graph"
#: The newest format this difflab reads.  A graph that writes state back (``updates``: a
#: BatchNorm's running statistics) is saved as version 2, which an older reader refuses
#: rather than run it without those writes; any other graph is still version 1.
VERSION = 2


class GraphFileError(GraphError):
    """A graph file that cannot be loaded: newer format, edited manifest, corrupted.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.export import GraphFileError, graph_from_json
    >>> try:
    ...     graph_from_json({"name": "g", "inputs": [], "nodes": [{"op": "rm_rf"}]}, {})
    ... except GraphFileError as error:
    ...     print(type(error).__name__)
    GraphFileError
    """


class ExportedProgram:
    """A traced graph with the values of its parameters: everything needed to run it.

    ``graph`` is the :class:`~difflab.jit.graph.Graph`; ``state_dict`` maps
    each parameter input to its array (copied at export time).

    Parameters
    ----------
    graph : Graph
        The traced graph.
    state_dict : mapping of str to array
        The parameters' values.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.export import export
    >>> ep = export(dl.nn.Linear(2, 1), (dl.ones(3, 2),))
    >>> sorted(ep.state_dict)
    ['bias', 'weight']
    """

    def __init__(self, graph: Graph, state_dict: Mapping[str, Any]) -> None:
        self.graph = graph
        self.state_dict = dict(state_dict)
        missing = [i.name for i in graph.parameters() if i.name not in self.state_dict]
        if missing:
            raise GraphError(f"no value for the parameters {', '.join(missing)}")

    def module(self) -> ExportedModule:
        """A callable running the graph: arguments in, outputs (tensors) out."""
        return ExportedModule(self)

    def __repr__(self) -> str:
        return (f"<ExportedProgram {self.graph.name}: {len(self.graph.nodes)} nodes, "
                f"{len(self.state_dict)} parameters>")


class ExportedModule:
    """What :meth:`ExportedProgram.module` returns: call it like the exported function.

    Parameters
    ----------
    program : ExportedProgram
        What it runs.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.export import export
    >>> module = export(lambda x: 2 * x, (dl.ones(2),)).module()
    >>> module(dl.tensor([1.0, 3.0]))
    tensor([2., 6.])
    """

    def __init__(self, program: ExportedProgram) -> None:
        self.program = program
        self.graph = program.graph

    def __call__(self, *args: Any) -> Any:
        arrays = [a.array if isinstance(a, Tensor) else a for a in args]
        outputs = self.graph.program().run(arrays, self.program.state_dict)
        # (state written in place, a BatchNorm's running statistics: into the program's
        # state_dict, and into the arguments the function wrote, as the eager call did)
        outputs = _write_updates(self.graph, outputs, args, self.program.state_dict)
        return unflatten(self.graph.output_spec,
                         [Tensor._wrap(o) if hasattr(o, "shape") else o for o in outputs])


def export(fn: Callable, args: Any, passes: Sequence[str] = ()) -> ExportedProgram:
    """Trace ``fn`` (a function or a module) on ``args``; copy its parameters in.

    The result holds everything needed to run ``fn`` again without its Python code:
    the graph and the values of the parameters, ready for :func:`save`.

    Parameters
    ----------
    fn : callable or Module
        A function of tensors, or a module (put it in ``eval()`` mode first).
    args : Tensor or tuple
        Example inputs, whose shapes and dtypes the graph keeps.
    passes : sequence of str, default ()
        Graph passes to run first (``["fold", "cse", "dce"]``).

    Returns
    -------
    ExportedProgram
        ``.graph``, ``.state_dict``; ``.module()`` runs it.

    See Also
    --------
    save, load
    difflab.onnx.export : the same graph as an ONNX file.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.export import export
    >>> ep = export(dl.nn.Linear(2, 1), (dl.ones(3, 2),))
    >>> ep
    <ExportedProgram Linear: 1 nodes, 2 parameters>
    >>> ep.module()(dl.ones(3, 2)).shape
    difflab.Size([3, 1])
    """
    graph = trace_graph(fn, args)
    if passes:
        from difflab.jit.passes import optimize

        graph = optimize(graph, passes)
    state = {name: backend.to_numpy(t.array).copy()
             for name, t in _module_state(fn) + _captured(graph)}
    for i in graph.inputs:  # (the arrays seen while tracing are not part of the program)
        i.example = i.tensor = None
    return ExportedProgram(graph, state)


# ------------------------------------------------------------------ to JSON


def _dtype_tag() -> Tag:
    """A dtype as ``{"dtype": "float32"}``; a numeric one only (:func:`_dtype`)."""
    return Tag("dtype", lambda v: isinstance(v, np.dtype), lambda v, w: {"dtype": v.name},
               lambda e, r, d: _dtype(e["dtype"], r.where or "a value"))


def _string_tag(name: str, kind: type, make: Callable[[str], Any]) -> Tag:
    """A value written as ``{name: "its text"}`` and made again from that text."""
    def read(entry: dict, r: Reader, depth: int) -> Any:
        if not isinstance(entry[name], str):
            raise r.fail(f"{name} must hold a string, got {entry[name]!r:.80}")
        return make(entry[name])

    return Tag(name, lambda v: isinstance(v, kind), lambda v, w: {name: str(v)}, read)


def _slice_tag() -> Tag:
    def read(entry: dict, r: Reader, depth: int) -> slice:
        body = r.items(entry, "slice")
        if len(body) != 3:
            raise r.fail(f"a slice is [start, stop, step], got {body!r:.80}")
        return slice(*(r.read(v, depth + 1) for v in body))

    return Tag("slice", lambda v: isinstance(v, slice),
               lambda v, w: {"slice": [w.write(x) for x in (v.start, v.stop, v.step)]}, read)


def _ellipsis_tag() -> Tag:
    def read(entry: dict, r: Reader, depth: int) -> Any:
        if entry["ellipsis"] is not True:
            raise r.fail("ellipsis must hold true")
        return Ellipsis

    return Tag("ellipsis", lambda v: v is Ellipsis, lambda v, w: {"ellipsis": True}, read)


#: How a node's arguments and settings are written in a graph file (a one-key object
#: tags what JSON lacks): the graph's own spelling of the tree codec's tags.
_CODEC = TreeCodec(
    [_string_tag("ref", Ref, Ref), float_tag("float"), tuple_tag("tuple"), _slice_tag(),
     _ellipsis_tag(), _dtype_tag(), _string_tag("device", backend.Device, backend.device),
     dict_tag("dict", keys=(str,))],
    GraphFileError,
    refuse=lambda value, where: TypeError(
        f"cannot save a value of type {type(value).__name__} in a graph"))


def _encode(value: Any, where: str) -> Any:
    """A node argument or setting as JSON."""
    try:
        return _CODEC.encode(value)
    except TypeError as exc:
        raise GraphError(f"{where}: {exc}") from None


def _decode(value: Any, where: str) -> Any:
    return _CODEC.decode(value, where=where)


def _dtype(name: Any, where: str) -> np.dtype:
    try:
        dtype = np.dtype(name)
    except TypeError:
        raise GraphFileError(f"{where}: {name!r} is not a dtype") from None
    if dtype.kind not in "biufc":  # numbers only: an object dtype could hold anything
        raise GraphFileError(f"{where}: dtype {name!r} is not a numeric dtype")
    return dtype


def _shape(value: Any, where: str) -> tuple:
    if not isinstance(value, list) or not all(
            isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in value):
        raise GraphFileError(f"{where}: the shape {value!r} is not a list of sizes")
    return tuple(value)


def graph_to_json(graph: Graph) -> dict:
    """The graph as a JSON-ready dict (arrays stay out: constants are named only).

    Parameters
    ----------
    graph : Graph
        A traced graph.

    Returns
    -------
    dict
        Names, shapes, dtypes, each node's operation, arguments and settings: JSON-ready.

    See Also
    --------
    graph_from_json : the way back, checked.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.export import graph_from_json, graph_to_json
    >>> graph = dl.jit.trace(lambda x: (x * x).sum(), dl.tensor([1.0, 2.0])).graph
    >>> tree = graph_to_json(graph)
    >>> [(node["name"], node["op"]) for node in tree["nodes"]]
    [('v1', 'mul'), ('v2', 'sum')]
    """
    nodes = []
    for node in graph.nodes:
        where = f"node {node.name} ({node.op_name})"
        if resolve_or_none(node.op_name) is None:
            raise GraphError(
                f"{where}: '{node.op_name}' is not a registered primitive, so a saved graph "
                f"could not name it; register it with difflab.register_primitive"
            )
        if node.op.random and node.params.get("generator") is not None:
            raise GraphError(
                f"{where} draws from a Generator of your own (generator=...), which a file "
                f"cannot name; draw from the default generator (seeded with "
                f"difflab.manual_seed where the graph runs) to save this graph")
        nodes.append({
            "name": node.name, "op": node.op_name,
            "args": [_encode(a, where) for a in node.args],
            "params": {k: _encode(v, where) for k, v in node.params.items()},
            "shape": list(node.shape), "dtype": np.dtype(node.dtype).name,
            "needs_input_grad": [bool(b) for b in node.needs_input_grad],
            "saved": [None if m is None else [list(m[0]), np.dtype(m[1]).name]
                      for m in node.saved],
        })
    return {
        "name": graph.name,
        "inputs": [{"name": i.name, "kind": i.kind, "shape": list(i.shape),
                    "dtype": np.dtype(i.dtype).name} for i in graph.inputs],
        "nodes": nodes,
        "outputs": [_encode(o, "outputs") for o in graph.outputs],
        "output_spec": graph.output_spec,
        "updates": list(graph.updates),
    }


def resolve_or_none(name: str) -> Any:
    """The graph operation called ``name``, or None if there is none.

    Parameters
    ----------
    name : str
        A primitive's name (``"sin"``) or another graph operation's.

    Returns
    -------
    object or None

    Examples
    --------
    >>> from difflab.export import resolve_or_none
    >>> resolve_or_none("sin").name, resolve_or_none("no_such_op")
    ('sin', None)
    """
    try:
        return resolve(name)
    except KeyError:
        return None


def _input_from_json(entry: Any, constants: Mapping[str, Any]) -> Input:
    """One input, checked: a known kind; a constant's array there, of its shape and dtype."""
    name, kind = entry["name"], entry["kind"]
    if kind not in ("input", "parameter", "constant") or not isinstance(name, str):
        raise GraphFileError(f"input {name!r}: unknown kind {kind!r}")
    shape, dtype = _shape(entry["shape"], name), _dtype(entry["dtype"], name)
    if kind == "constant":
        array = constants.get(name)
        if array is None or array.shape != shape or array.dtype != dtype:
            raise GraphFileError(f"constant {name!r}: its array is missing or does not "
                                 f"match {shape} {dtype}")
    return Input(name, kind, shape, dtype)


def _node_from_json(entry: Any, defined: set[str]) -> Node:
    """One node, checked: a known operation, reading only values ``defined`` before it."""
    name = entry["name"]
    where = f"node {name!r}"
    try:
        op = resolve(entry["op"])
    except KeyError as exc:
        raise GraphFileError(f"{where}: {exc.args[0]}") from None
    args = tuple(_decode(a, where) for a in entry["args"])
    params = {str(k): _decode(v, where) for k, v in entry["params"].items()}
    node = Node(name, op, args, params, _shape(entry["shape"], where),
                _dtype(entry["dtype"], where),
                tuple(bool(b) for b in entry["needs_input_grad"]),
                tuple(None if m is None else (_shape(m[0], where), _dtype(m[1], where))
                      for m in entry["saved"]))
    for ref in node.refs():
        if ref.name not in defined:
            raise GraphFileError(f"{where} reads {ref.name!r}, which is not defined before it")
    if name in defined:
        raise GraphFileError(f"{where} is defined twice")
    return node


def graph_from_json(tree: Any, constants: Mapping[str, Any]) -> Graph:
    """Rebuild and check a graph: every name defined before use, every op known.

    Parameters
    ----------
    tree : dict
        What :func:`graph_to_json` wrote (read from a file: untrusted).
    constants : mapping of str to array
        The arrays the tree names.

    Returns
    -------
    Graph

    Raises
    ------
    GraphFileError
        For a name used before it is defined, an unknown operation, a malformed entry.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.export import graph_from_json, graph_to_json
    >>> graph = dl.jit.trace(lambda x: (x * x).sum(), dl.tensor([1.0, 2.0])).graph
    >>> graph_from_json(graph_to_json(graph), graph.constants).run(dl.tensor([3.0, 4.0]))
    [tensor(25.)]
    """
    if not isinstance(tree, dict):
        raise GraphFileError("the graph entry is not an object")
    try:
        inputs = [_input_from_json(entry, constants) for entry in tree["inputs"]]
        defined = {i.name for i in inputs}
        nodes = []
        for entry in tree["nodes"]:
            node = _node_from_json(entry, defined)
            defined.update(node.outputs())
            nodes.append(node)
        outputs = [_decode(o, "outputs") for o in tree["outputs"]]
        for o in outputs:
            if isinstance(o, Ref) and o.name not in defined:
                raise GraphFileError(f"the output {o.name!r} is not defined")
        updates = tree.get("updates", [])
        writable = {i.name for i in inputs if i.kind != "constant"}
        if not isinstance(updates, list) or len(updates) > len(outputs) or any(
                u not in writable for u in updates):
            raise GraphFileError(f"the updates {updates!r:.80} do not name inputs of the graph")
        graph = Graph(str(tree["name"]), inputs, {i.name: constants[i.name] for i in inputs
                                                  if i.kind == "constant"},
                      nodes, outputs, tree["output_spec"], updates)
        unflatten(graph.output_spec, graph.outputs)  # (a spec that does not fit fails here)
    except GraphFileError:
        raise
    except (KeyError, TypeError, ValueError, StopIteration, AttributeError) as exc:
        raise GraphFileError(f"the graph in the manifest is malformed: "
                             f"{type(exc).__name__}: {exc}") from None
    return graph


def _checksum(tree: Any) -> str:
    return hashlib.sha256(json.dumps(tree, sort_keys=True).encode("utf-8")).hexdigest()


# ------------------------------------------------------------ save and load


def save(ep: ExportedProgram, path: str | os.PathLike) -> None:
    """Write ``ep`` to ``path``: the graph as JSON, constants and parameters as .npy.

    The file holds data only (difflab's checkpoint format, never a pickle), with a
    checksum of the graph, so :func:`load` can refuse a damaged or altered file.

    Parameters
    ----------
    ep : ExportedProgram
        What :func:`export` returned.
    path : str or path-like
        Where to write.

    Returns
    -------
    None

    See Also
    --------
    load, export

    Examples
    --------
    >>> import os, tempfile
    >>> import difflab as dl
    >>> from difflab.export import export, load, save
    >>> path = os.path.join(tempfile.mkdtemp(), "linear.dlz")
    >>> save(export(dl.nn.Linear(2, 1), (dl.ones(3, 2),)), path)
    >>> load(path)
    <ExportedProgram Linear: 1 nodes, 2 parameters>
    """
    tree = graph_to_json(ep.graph)
    serialization.save({
        "format": FORMAT,
        "version": 2 if ep.graph.updates else 1,
        "graph": tree,
        "checksum": _checksum(tree),
        "constants": {k: backend.to_numpy(v) for k, v in ep.graph.constants.items()},
        "parameters": {k: backend.to_numpy(v) for k, v in ep.state_dict.items()},
    }, path)


def load(path: str | os.PathLike) -> ExportedProgram:
    """Read what :func:`save` wrote; check it; no code from the file is ever run.

    The graph is checked line by line (known primitives, shapes, dtypes, the
    checksum) before anything runs.

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`save`.

    Returns
    -------
    ExportedProgram
        Run it with ``.module()``.

    Raises
    ------
    FileNotFoundError
        If there is no such file.
    GraphFileError
        If the file is not a saved graph, is damaged, or names an unknown primitive.

    See Also
    --------
    save, export

    Examples
    --------
    >>> import os, tempfile
    >>> import difflab as dl
    >>> from difflab.export import export, load, save
    >>> path = os.path.join(tempfile.mkdtemp(), "square.dlz")
    >>> save(export(lambda x: x * x, (dl.ones(2),)), path)
    >>> load(path).module()(dl.tensor([3.0, 4.0]))
    tensor([ 9., 16.])
    """
    try:
        content = serialization.load(path)
    except serialization.CheckpointError as exc:
        raise GraphFileError(str(exc)) from None
    if not isinstance(content, dict) or content.get("format") != FORMAT:
        raise GraphFileError(f"{os.fspath(path)} is a difflab file but not a saved graph "
                             f"(load it with difflab.load)")
    version = content.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise GraphFileError(
            f"{os.fspath(path)} holds a graph in format version {version}, newer than this "
            f"difflab reads (up to {VERSION}): upgrade difflab to load it"
        )
    tree = content.get("graph")
    if content.get("checksum") != _checksum(tree):
        raise GraphFileError(
            f"{os.fspath(path)}: the graph does not match its checksum; the manifest was "
            f"modified after saving, so it is not run"
        )
    constants, parameters = content.get("constants"), content.get("parameters")
    if not isinstance(constants, dict) or not isinstance(parameters, dict):
        raise GraphFileError(f"{os.fspath(path)}: constants or parameters are missing")
    graph = graph_from_json(tree, constants)
    for i in graph.parameters():
        array = parameters.get(i.name)
        if array is None or array.shape != tuple(i.shape) or array.dtype != i.dtype:
            raise GraphFileError(f"parameter {i.name!r}: its array is missing or does not "
                                 f"match {tuple(i.shape)} {i.dtype}")
    return ExportedProgram(graph, parameters)
