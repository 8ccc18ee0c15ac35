r"""Graph breaks that split a compiled call: graphs around the values Python reads.

``if x.sum() > 0:`` needs a tensor's value in Python, which a static graph
cannot hold.  :func:`difflab.jit.compile` traces the function once on real
values anyway (the tracer runs it eagerly while recording), so at such a
*read* it knows the value Python got and goes on.  The trace is then cut at
each read::

    stage 1   the nodes recorded before read 1: returns the value read, then
              every value it made (a later stage or the backward may need any)
    read 1    Python's value of it (True, 3, 0.25) is the *branch key*
    stage 2   the nodes between read 1 and read 2, reading stage 1's values
    ...
    final     the rest, with the backward when something requires grad: the
              usual forward/backward graphs (:mod:`difflab.jit.joint`), taking
              the earlier stages' values as extra inputs ("live" values)

A later call runs stage 1, reads its value, and follows the branch cached
for that key: the next stage, or the final graphs.  A key not seen before
(the other side of the ``if``, one more trip round a ``while``) traces the
function again and grafts the new path onto the tree: the stages before the
new key are shared.  So the cache is a tree of stages, one path per branch
sequence met, bounded by ``config.recompile_limit`` paths per guard.

Only reads whose value stays *inside* Python decisions split the graph:
``bool()`` (``if``, ``while``, ``and``), ``.item()``, ``float()``, ``int()``
and using a tensor as an index; a branch key is exact (``repr`` of the
number), so the replayed path is the one eager Python would take.  Reads
that hand values *out* (printing, ``.tolist()``, ``.numpy()``) cannot be
replayed without running the Python, so they make the call eager, as
before.  Python between the graphs does not run on a replay: like the rest
of a compiled function, its side effects (appending to a list) happen only
while tracing (``CompiledFunction.python_runs`` counts the runs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from difflab import backend
from difflab.jit.graph import Graph, Input, Node, Ref, _collect_refs, substitute
from difflab.jit.joint import _optimize
from difflab.jit.kernels import fusion_kind

#: The reads whose value stays in a Python decision: they split the graph.
SPLITTING_READS = ("bool()", ".item()", "float()", "int()", "using it as an index")


@dataclass(frozen=True)
class GraphBreak:
    """Where and why a traced function needed a tensor's value in Python.

    A dataclass: :func:`difflab.jit.compile` records one per graph break
    (``CompiledFunction.breaks``), :func:`difflab.jit.explain` lists them
    (``ExplainOutput.break_reasons``).  ``str()`` gives ``file:line: reason``.

    Parameters
    ----------
    reason : str
        What read the value (``bool()``, ``.item()``, a value-dependent shape) and why
        it breaks the graph.
    filename : str
        The user's file where it happened.
    lineno : int
        The line in that file.
    splits : bool, default False
        What :func:`difflab.jit.compile` made of it: True, the graph is cut there and
        the value read chooses the next graph; False, the call runs eagerly (a value
        handed out of Python, or untraceable code).

    See Also
    --------
    difflab.jit.explain : lists the breaks of a call.
    difflab.jit.GraphBreakError : a break with ``fullgraph=True``.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.jit.compiler import GraphBreak
    >>> str(GraphBreak("bool() of a tensor computed from the inputs", "model.py", 12))
    'model.py:12: bool() of a tensor computed from the inputs'
    >>> def flip(x):
    ...     y = x.sin()
    ...     return y * 2 if y.sum() > 0 else -y
    >>> f = dl.compile(flip)
    >>> _ = f(dl.ones(3))
    >>> brk = f.breaks[0]
    >>> brk.splits, brk.lineno == flip.__code__.co_firstlineno + 2
    (True, True)
    """

    reason: str
    filename: str
    lineno: int
    splits: bool = False

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno}: {self.reason}"


@dataclass
class Read:
    """A splitting read met while tracing: where the trace is cut, and the value read.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.jit.capture import _trace
    >>> def f(x):
    ...     return x * 2 if x.sum() > 0 else -x
    >>> joint, tracer, _ = _trace(f, (dl.ones(2),), {}, [], False)
    >>> read = tracer.reads[0]
    >>> read.key, read.position, read.ref   # True, after 2 nodes (sum, gt), of node v2
    ('True', 2, v2)
    """

    position: int  # how many nodes were recorded before it
    ref: Ref  # the value read
    key: str  # Python's view of it: the branch taken
    n_inputs: int  # how many graph inputs (arguments, state, captured, constants) existed
    n_captured: int  # how many of them were captured tensors
    where: GraphBreak


def read_key(array: Any) -> str:
    """The branch key of a one-element value: ``repr`` of its number (exact, NaN-safe).

    Examples
    --------
    >>> import numpy as np
    >>> from difflab.jit.breaks import read_key
    >>> read_key(np.array(True)), read_key(np.array([2.5])), read_key(np.array(-0.0))
    ('True', '2.5', '-0.0')
    """
    return repr(backend.to_numpy(array).reshape(()).item())


@dataclass
class Stage:
    """One graph before a splitting read, and the branches after it.

    ``graph`` takes the call's arrays (arguments, module state, the first
    ``len(captured)`` captured tensors, kept as (tensor, traced shape)), then
    ``live`` (earlier stages' values, by name); it returns the value read,
    then ``produced``.

    Examples
    --------
    >>> import difflab as dl
    >>> g = dl.compile(lambda x: x * 2 if x.sum() > 0 else -x)
    >>> _ = g(dl.ones(2)); _ = g(-dl.ones(2))      # both branches, one trace each
    >>> root = next(iter(g.cache.values()))
    >>> root.ops, sorted(root.branches), root.paths
    (('sum', 'gt'), ['False', 'True'], 2)
    """

    graph: Graph
    captured: list
    live: list[str]
    produced: list[str]
    ops: tuple  # the operations it runs (a retrace must find the same ones)
    where: GraphBreak
    random: bool  # draws random numbers (a call that retraces puts the generator back)
    branches: dict = field(default_factory=dict)  # key -> Stage, _Graphs or eager breaks
    paths: int = 1  # (the root's: how many branch paths the tree holds)


def _is_cotangent(i: Input) -> bool:
    return i.name.startswith("g") and i.name[1:].isdigit()


def _live_name(name: str) -> str:
    return "l_" + name.replace(".", "_")


#: Elementwise arithmetic a fused loop recomputes for less than reading the value back
#: from memory.  A transcendental (exp, sin, tanh: some ten times an add) is read back.
RECOMPUTED = frozenset({"neg", "add", "sub", "mul", "div", "abs", "relu", "maximum",
                        "minimum"})


def _recomputable(node: Node | None, passes: tuple) -> bool:
    """Cheap arithmetic, when graphs are fused (where fusion pays: float64, float32 with
    numba): a later graph recomputes it from its inputs (inside its fused loop) rather
    than read it from memory (the same operations: the same bits)."""
    from difflab.jit.fusion import fusion_pays

    return (node is not None and "fuse" in passes and fusion_pays(node.dtype)
            and node.op_name in RECOMPUTED and fusion_kind(node.op) == "elementwise"
            and not node.params and not any(m is not None for m in node.saved))


class _Pieces:
    """Cuts the joint graph's nodes into pieces; what each reads from the earlier ones."""

    def __init__(self, joint: Graph, passes: tuple) -> None:
        self.joint, self.passes = joint, passes
        self.meta = joint.meta()
        self.by_name = {n.name: n for n in joint.nodes}
        self.made: set[str] = set()  # values the earlier pieces computed

    def piece(self, nodes: list[Node], extra: list) -> tuple[list[str], list[Input], list[Node],
                                                             list]:
        """``nodes`` (and the values ``extra``) reading the earlier pieces' values: (live
        names, their inputs, the nodes with the recomputed ones first, ``extra`` renamed)."""
        own = {name for n in nodes for name in n.outputs()}
        found = [r for n in nodes for r in n.refs()]
        _collect_refs(list(extra), found)
        live: list[str] = []
        again: set[str] = set()
        todo = [r.name for r in found if r.name in self.made and r.name not in own]
        while todo:
            name = todo.pop()
            if name in live or name in again:
                continue
            node = self.by_name.get(name)
            if _recomputable(node, self.passes):
                again.add(name)
                todo += [r.name for r in node.refs() if r.name in self.made]
            else:
                live.append(name)
        live.sort(key=list(self.meta).index)  # (in the order they were computed)
        rename = {name: Ref(_live_name(name)) for name in live}
        inputs = [Input(_live_name(name), "input", *self.meta[name]) for name in live]
        nodes = [n for n in self.joint.nodes if n.name in again] + list(nodes)
        rewritten = [type(n)(n.name, n.op, substitute(n.args, rename),
                             {k: substitute(v, rename) for k, v in n.params.items()}, n.shape,
                             n.dtype, n.needs_input_grad, n.saved) for n in nodes]
        return live, inputs, rewritten, substitute(list(extra), rename)

    def kept(self, nodes: list[Node]) -> list[str]:
        """What a stage returns for later pieces: every value it makes that they would not
        recompute (they may need any: the branches after it are not all known yet)."""
        return [name for n in nodes for name in n.outputs()
                if name != n.name or not _recomputable(n, self.passes)]


def cut(joint: Graph, reads: list[Read], captured: list, passes: tuple
        ) -> tuple[list[Stage], Graph]:
    """The stages before each read, chained by their keys, and the final joint graph.

    The final graph's inputs are the joint graph's own (without cotangents),
    then its live values, then the cotangents, so ``_build`` (:mod:`difflab.jit.joint`) makes
    its forward and backward graphs as for an unbroken call; it carries
    ``live`` (the names to feed) and ``n_outputs``.  When graphs are fused,
    cheap float64 arithmetic (``RECOMPUTED``) is recomputed by the graph
    that needs it (in its fused loop) instead of being returned and read
    back: memory traffic is what fusion saves.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.jit.capture import _trace
    >>> def f(x):
    ...     return x * 2 if x.sum() > 0 else -x
    >>> from difflab.jit.breaks import cut
    >>> joint, tracer, _ = _trace(f, (dl.ones(2),), {}, [], False)
    >>> stages, final = cut(joint, tracer.reads, tracer.captured, ())
    >>> [s.graph.outputs for s in stages], [n.op_name for n in final.nodes]
    ([[v2, v1, v2]], ['mul'])
    """
    pieces = _Pieces(joint, passes)
    stages: list[Stage] = []
    start = 0
    for read in reads:
        nodes = joint.nodes[start:read.position]
        live, live_inputs, rewritten, (first,) = pieces.piece(nodes, [read.ref])
        inputs = [i for i in joint.inputs[:read.n_inputs] if not _is_cotangent(i)]
        produced = pieces.kept(nodes)
        graph = Graph(f"{joint.name}_graph{len(stages) + 1}", inputs + live_inputs,
                      joint.constants, rewritten, [first] + [Ref(p) for p in produced])
        stage = Stage(_optimize(graph, passes),
                      [(t, t.array.shape) for t in captured[:read.n_captured]], live, produced,
                      tuple(n.op_name for n in nodes), read.where,
                      any(getattr(n.op, "random", False) for n in nodes))
        if stages:
            stages[-1].branches[reads[len(stages) - 1].key] = stage
        stages.append(stage)
        pieces.made.update(name for n in nodes for name in n.outputs())
        start = read.position
    live, live_inputs, rewritten, outputs = pieces.piece(joint.nodes[start:], joint.outputs)
    inputs = [i for i in joint.inputs if not _is_cotangent(i)] + live_inputs + [
        i for i in joint.inputs if _is_cotangent(i)]
    final = Graph(joint.name, inputs, joint.constants, rewritten, outputs, joint.output_spec,
                  joint.updates)
    final.n_outputs = joint.n_outputs  # type: ignore[attr-defined]
    final.live = live  # type: ignore[attr-defined]
    # (a backward evaluated on tensors, create_graph=True, must reach the arguments through
    # the earlier graphs' values too: it evaluates the whole path's joint graph instead)
    final.whole = joint  # type: ignore[attr-defined]
    return stages, final


def graft(root: Stage, new: Stage) -> bool:
    """Add the path of a new trace (a chain from :func:`cut`) to the tree at ``root``.

    The new chain follows the tree while its keys are known, then hangs its
    rest on the first new key.  False when the two disagree about what ran
    before a key (Python that is not a function of the guard and the values
    read: a global changed, a random branch), which no cache can replay.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.jit.capture import _trace
    >>> def f(x):
    ...     return x * 2 if x.sum() > 0 else -x
    >>> from difflab.jit.breaks import cut, graft
    >>> def chain(x):
    ...     joint, tracer, _ = _trace(f, (x,), {}, [], False)
    ...     stages, final = cut(joint, tracer.reads, tracer.captured, ())
    ...     stages[-1].branches[tracer.reads[-1].key] = final   # (compile: its graphs)
    ...     return stages[0]
    >>> tree = chain(dl.ones(2))
    >>> graft(tree, chain(-dl.ones(2))), sorted(tree.branches), tree.paths
    (True, ['False', 'True'], 2)
    """
    node: Any = root
    chain: Any = new
    while isinstance(node, Stage) and isinstance(chain, Stage):
        if node.ops != chain.ops or node.where != chain.where:
            return False
        ((key, following),) = chain.branches.items()
        if key not in node.branches:
            node.branches[key] = following
            root.paths += 1
            return True
        node, chain = node.branches[key], following
    return False



def graft_eager(root: Stage, keys: list[str], eager: Any) -> bool:
    """Hang ``eager`` (a branch that runs eagerly) on the first new key of ``keys``.

    Examples
    --------
    >>> import difflab as dl
    >>> g = dl.compile(lambda x: x * 2 if x.sum() > 0 else -x)
    >>> _ = g(dl.ones(2))
    >>> root = next(iter(g.cache.values()))
    >>> from difflab.jit.breaks import graft_eager
    >>> graft_eager(root, ["False"], "runs eagerly"), root.branches["False"], root.paths
    (True, 'runs eagerly', 2)
    """
    node: Any = root
    for key in keys:
        if not isinstance(node, Stage):
            return False
        if key not in node.branches:
            node.branches[key] = eager
            root.paths += 1
            return True
        node = node.branches[key]
    return False
