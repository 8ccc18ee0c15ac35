r"""What a compiled call captures: the tracer with graph breaks, one trace, the guards.

:func:`difflab.jit.compile` traces a call with ``_CompileTracer``, the
jit's tracer with value reads turned into graph breaks: a read whose value
stays in a Python decision cuts the trace there (:mod:`difflab.jit.breaks`),
any other stops it (that call runs eagerly).  The *guard* of a call is built
here from its arguments (``_leaf_guard``) and, for a module, its
parameters, buffers and ``training`` flags (``_walk``); so are the
snapshots that put a module's buffers back after a trace.
"""

from __future__ import annotations

import os
import traceback
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from difflab import backend
from difflab.autograd import engine, functional
from difflab.jit import standins
from difflab.jit.breaks import SPLITTING_READS, GraphBreak, Read, read_key
from difflab.jit.graph import Graph, Ref
from difflab.jit.passes import optimize
from difflab.jit.tracing import Tracer, _flatten, _generator_kept, _user_frame, unflatten
from difflab.tensor import Tensor

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _Stop(BaseException):
    """Raised inside the traced function at its first graph break (BaseException: a
    user's ``except Exception`` does not swallow it)."""


class _CompileTracer(Tracer):
    """The tracer, with value reads turned into graph breaks instead of warnings.

    A break that makes the call eager raises :class:`_Stop`: the rest of f
    would be traced for nothing, and the eager call runs all of it (what f
    did before the break runs twice, the tensors it wrote are put back).  A
    splitting read only notes its break.  A tensor from outside that
    requires grad (a model's weight used by a plain function) becomes an
    input, ``captured{k}``, so the graph reads its current value and the
    backward reaches it.
    """

    def __init__(self, name: str, split: bool = True, called: dict | None = None) -> None:
        super().__init__(name)
        self.split = split
        self.called = called  # (id -> module: every module called, for CompiledFunction)
        self.breaks: list[GraphBreak] = []  # every break, splitting or not, in order
        self.reads: list[Read] = []  # the splitting ones: where the trace is cut
        self.writes: list = []  # first writes into tensors from before the call, put back
        self.input_names: set[str] = set()  # (the graph's inputs but its constants)
        self.captured: list[Tensor] = []

    def add_input(self, name: str, value: Any, kind: str = "input",
                  tensor: Tensor | None = None) -> None:
        super().add_input(name, value, kind, tensor)
        self.input_names.add(name)

    def value_read(self, tensor: Tensor, what: str) -> None:
        """A read whose value stays in a Python decision cuts the trace there (a splitting
        graph break: see :mod:`difflab.jit.breaks`); any other is :meth:`_break`."""
        if not self.depends_on_inputs(tensor) or self.rule_reads is not None:
            return super().value_read(tensor, what)
        if self.stand_ins:  # (traced again on the real values: the break is decided there)
            raise standins.NeedsValues(what)
        if not (self.split and what in SPLITTING_READS and tensor.array.size == 1):
            return self.warn_value_read(what)
        ref = self.refs[id(tensor.array)]
        last = self.reads[-1] if self.reads else None
        if last is not None and (last.position, last.ref) == (len(self.nodes), ref):
            return  # (bool() reads .item(): one read)
        where = GraphBreak(f"{what} of a tensor computed from the inputs: Python needs its "
                           f"value (data-dependent control flow); the graph is split here",
                           *_user_frame(), splits=True)
        self.breaks.append(where)
        self.reads.append(Read(len(self.nodes), ref, read_key(tensor.array), len(self.inputs),
                               len(self.captured), where))

    def warn_value_read(self, what: str) -> None:
        if self.rule_reads is not None:  # a derivative rule's own read: decided again later
            self.rule_reads.append(what)
            return
        if self.stand_ins:  # (traced again on the real values: the break is decided there)
            raise standins.NeedsValues(what)
        self._break(f"{what} of a tensor computed from the inputs: Python needs its value "
                    f"(data-dependent control flow), and hands it on where no graph follows "
                    f"it (printed, a list, an array), so this call runs eagerly")

    def _warn(self, message: str) -> None:
        if self.stand_ins:
            raise standins.NeedsValues(message)
        self._break(message)

    def _break(self, reason: str) -> None:
        self.breaks.append(GraphBreak(reason, *_user_frame()))
        raise _Stop

    def side_effect(self, what: str) -> None:
        """State changed outside the primitives (a training step's ``backward()`` or
        ``opt.step()`` inside f): a break before it happens, so the trace changes none
        of it and the eager call does it once."""
        if what == "backward()":
            reason = ("backward() inside the compiled function fills the leaves' .grad, which "
                      "a graph does not replay (nor the optimizer's step that usually "
                      "follows), so this call runs eagerly. Compile the model or the loss "
                      "(dl.compile(model)) and call backward() and opt.step() outside it: "
                      "the compiled forward's backward graph then fills .grad")
        else:
            reason = (f"{what} inside the compiled function updates the parameters and the "
                      f"optimizer's state outside difflab's operations, which a graph does "
                      f"not replay, so this call runs eagerly. Call the optimizer's step "
                      f"outside the compiled function")
        self._break(reason)

    def module_called(self, module: Any) -> None:
        """Note ``module`` in ``called`` (a plain function's modules: their hooks guarded)."""
        if self.called is not None:
            self.called[id(module)] = module

    compiles = True  # (torch.compiler.is_compiling())

    def disabled_call(self, what: str) -> None:
        """A function marked ``torch.compiler.disable`` is Python kept out of graphs: a
        break before it runs, so the call runs eagerly, that function included."""
        self._break(f"{what} is marked torch.compiler.disable: it runs as Python outside "
                    f"any graph, so this call runs eagerly")

    def python_hooks(self, what: str) -> None:
        """A module's hooks are Python a graph does not replay (what they store, print or
        change): a break before they run, so the call runs eagerly, hooks included."""
        self._break(f"{what} run Python code around the module's call that a graph does "
                    f"not replay (what a hook stores, prints or changes), so this call runs "
                    f"eagerly, hooks included (a hook registered after the graphs were made "
                    f"too: the guard notes which modules have hooks). Remove the hooks "
                    f"(handle.remove()) and the graphs replay again")

    def _remember(self, array: Any, ref: Ref, tensor: Tensor | None = None,
                  version: int | None = None) -> None:
        """As the tracer's, but holding each array weakly: one that nothing else holds is
        freed while tracing (its entry goes with it, so its id may be reused safely)."""
        key = id(array)
        self.refs[key] = ref
        self.stale.discard(key)
        if tensor is not None:
            self.versions[key] = (tensor._version,
                                  tensor._version[0] if version is None else version)
        try:
            weakref.finalize(array, self._forget, key, ref)
        except TypeError:  # (not weakly referenceable: kept alive, as the tracer does)
            self.keep.append(array)

    def _forget(self, key: int, ref: Ref) -> None:
        if self.refs.get(key) is ref:
            del self.refs[key]
            self.versions.pop(key, None)
            self.stopped.discard(key)
            self.unrecorded.discard(key)

    def written(self, tensor: Tensor, result: Tensor) -> None:
        """As the tracer's, noting (with a copy) a first write into a tensor from before
        the call: an input of the graph (an argument, a module's parameter or buffer, a
        captured weight) or no input at all (a closure's module's buffer, a tensor the
        function made from NumPy): see :meth:`undo_writes`."""
        old = self.refs.get(id(tensor.array))
        outside = old is None or old.name in self.constants
        if outside or old.name in self.input_names:
            self.writes.append((weakref.ref(tensor), tensor.array, tensor.array.copy(),
                                _user_frame(), outside))
        super().written(tensor, result)

    def undo_writes(self, outputs: list) -> list[GraphBreak]:
        """Put back what the traced run wrote into tensors from before the call: the
        graph's replay (or the eager call) makes those writes, once.  A break for each
        tensor that is no input, outlives the call and is not returned (a closure's
        module's buffer: the graph would not replay that write)."""
        returned = {id(o.array) for o in outputs if isinstance(o, Tensor)}
        breaks = []
        for ref, array, copy, where, outside in self.writes:
            array[...] = copy
            tensor = ref()
            if outside and tensor is not None and id(tensor.array) not in returned:
                breaks.append(GraphBreak(
                    "the function wrote in place into a tensor from outside it (a module's "
                    "buffer read through a closure or a global: BatchNorm's running "
                    "statistics): a graph would not replay that, so this call runs eagerly. "
                    "Compile the module itself (dl.compile(model)): its buffers are inputs "
                    "and their updates are replayed", *where))
        self.writes = []
        return breaks[:1]

    def ref_of(self, x: Any) -> Any:
        if isinstance(x, Tensor) and x._requires_grad and id(x.array) not in self.refs:
            self.add_input(f"captured{len(self.captured)}", x)
            self.captured.append(x)
        return super().ref_of(x)


# ------------------------------------------------------------------ guards


def _leaf_guard(x: Any) -> tuple:
    if isinstance(x, Tensor):
        return ("tensor", tuple(x.array.shape), x.array.dtype.str, str(x.device),
                x._requires_grad)
    if type(x) is np.ndarray:
        return ("array", x.shape, x.dtype.str)
    try:
        hash(x)
    except TypeError:
        return ("repr", type(x), repr(x))
    return ("value", type(x), x)


def _is_traceable_leaf(x: Any) -> bool:
    """A tensor, a NumPy array, or a plain Python value (anything else: run eagerly)."""
    return isinstance(x, (Tensor, np.ndarray, np.generic, int, float, complex, str, bytes,
                          slice, np.dtype, type)) or x is None or x is Ellipsis


def _walk(fn: Any) -> tuple[list[tuple[str, Tensor]], tuple, tuple]:
    """A module's parameters, then buffers, by dotted name (as ``named_parameters`` and
    ``named_buffers`` give them), every submodule's ``training`` flag, and the dotted names
    of the submodules whose calls run hooks (``Module._has_hooks``: a hook added after a
    graph was cached changes the guard, so the call is traced again and runs eagerly, hooks
    included): one walk over the modules, at every call.  ``([], (), ())`` for a plain
    function; a module's bound method (``model.forward``) has its module's."""
    fn = getattr(fn, "__self__", fn)
    named_modules = getattr(fn, "named_modules", None)
    if named_modules is None or not hasattr(fn, "_parameters"):
        return [], (), ()
    params: list = []
    buffers: list = []
    training = []
    hooked = []
    seen_params: set = set()
    seen_buffers: set = set()
    for prefix, module in named_modules():
        training.append(module.training)
        has_hooks = getattr(module, "_has_hooks", None)
        if has_hooks is not None and has_hooks():
            hooked.append(prefix)
        for registry, found, seen in ((module._parameters, params, seen_params),
                                      (module._buffers, buffers, seen_buffers)):
            for name, value in registry.items():
                if value is not None and id(value) not in seen:
                    seen.add(id(value))
                    found.append((f"{prefix}.{name}" if prefix else name, value))
    return params + buffers, tuple(training), tuple(hooked)


def _state_guard(state: list[tuple[str, Tensor]], training: tuple, hooked: tuple = ()
                 ) -> tuple:
    tensors = tuple((name, id(t), t.array.shape, t.array.dtype.str, t._requires_grad)
                    for name, t in state)
    return (tensors, training, hooked) if hooked else (tensors, training)


# ------------------------------------------------------------------ graphs


def _trace(fn: Callable, args: tuple, kwargs: dict, state: list, need_grad: bool,
           split: bool = True, called: dict | None = None
           ) -> tuple[Graph | None, _CompileTracer, Any]:
    """Trace ``fn(*args, **kwargs)``: the joint graph (None at a break that makes the call
    eager), the tracer, and what the traced call returned (an eager result).  The default
    generator is put back afterwards: the graphs' run draws what eager mode would.
    ``called`` collects the modules the call calls (see ``module_called``)."""
    tracer = _CompileTracer(getattr(fn, "__name__", type(fn).__name__), split, called)
    leaves: list = []
    spec = _flatten((list(args), kwargs), leaves)
    call_leaves = []
    for k, x in enumerate(leaves):
        if isinstance(x, (Tensor, np.ndarray)):
            array = x.array if isinstance(x, Tensor) else x
            t = Tensor._wrap(standins.stand_in(array) if standins.active() else array)
            t._requires_grad = bool(isinstance(x, Tensor) and x._requires_grad and need_grad)
            tracer.add_input(f"a{k}", t)
            call_leaves.append(t)
        else:
            call_leaves.append(x)
    for name, t in state:
        tracer.add_input(name, t)
    call_args, call_kwargs = unflatten(spec, call_leaves)
    primals = [t for t in call_leaves if isinstance(t, Tensor)] + [t for _, t in state]
    out_leaves: list = []
    try:
        with tracer, _generator_kept():
            result = fn(*call_args, **call_kwargs)
            out_spec = _flatten(result, out_leaves)
            grads: list = []
            if need_grad:
                grads = _traced_backward(tracer, primals, out_leaves)
    except _Stop:
        return None, tracer, None
    finally:
        outside = tracer.undo_writes(out_leaves)
        tracer.breaks += outside
    if outside:
        return None, tracer, None
    tracer.primal_tensors = primals + tracer.captured  # type: ignore[attr-defined]
    joint = tracer.graph((out_leaves, grads))
    joint.output_spec = out_spec
    joint.n_outputs = len(out_leaves)  # type: ignore[attr-defined]
    first_order = getattr(tracer, "first_order_grads", None)
    if first_order is not None:  # (the graph a replay's first-order backward runs)
        joint = _pruned(joint)
        joint.first_order = _pruned(  # type: ignore[attr-defined]
            tracer.graph((out_leaves, first_order)), out_spec, len(out_leaves))
    return joint, tracer, result


def _pruned(graph: Graph, output_spec: Any = None, n_outputs: int | None = None) -> Graph:
    """``graph`` without the nodes its outputs do not need (the tracer recorded the
    backward twice, so each graph holds the other's nodes too)."""
    pruned = optimize(graph, ("dce",))
    pruned.output_spec = graph.output_spec if output_spec is None else output_spec
    pruned.n_outputs = graph.n_outputs if n_outputs is None else n_outputs  # type: ignore[attr-defined]
    return pruned


def _traced_backward(tracer: _CompileTracer, primals: list, outputs: list) -> list:
    """Record d(outputs)/d(primals) against cotangent inputs ``g0, g1, ...``; the backward
    nodes land in the same graph.  Sets ``tracer.differentiable`` (the outputs that have a
    gradient) and ``tracer.wrt`` (the primals, then captured tensors, that receive one)."""
    wrt = [t for t in primals if t._requires_grad] + tracer.captured
    outs = [(k, o) for k, o in enumerate(outputs) if isinstance(o, Tensor)
            and o._requires_grad and o.array.dtype.kind in "fc" and not _backward_refused(o)]
    tracer.differentiable = [k for k, _ in outs] if wrt else []  # type: ignore[attr-defined]
    tracer.wrt = wrt if outs else []  # type: ignore[attr-defined]
    if not outs or not wrt:
        return []
    cotangents = []
    for _, o in outs:
        ones = backend.array_module(o.array).ones_like(o.array)
        g = Tensor._wrap(standins.stand_in(ones) if tracer.stand_ins else ones)
        g._requires_grad = True  # (a recorded seed: the VJPs' reshapes of it are traced too)
        tracer.add_input(f"g{len(cotangents)}", g)
        cotangents.append(g)
    differentiated = [o for _, o in outs]
    grads = functional.grad(differentiated, wrt, grad_outputs=cotangents, create_graph=True,
                            retain_graph=True, allow_unused=True)
    # The same gradients again, first order only: the backward a replay runs, by each
    # primitive's array rule where that is cheaper (``first_order_is_cheaper``: conv2d's
    # saved columns, a GRU cell's gates), as eager mode's backward does.  The graph of
    # ``grads``, differentiable again, serves a backward with create_graph=True.
    # (Only where such a primitive ran: elsewhere the two are the same graph.  Not for a
    # function split at graph breaks: its stages are cut from one graph.)
    if not tracer.reads and any(n.op.first_order_is_cheaper for n in tracer.nodes):
        first_order = functional.grad(differentiated, wrt, grad_outputs=cotangents,
                                      allow_unused=True)
        tracer.first_order_grads = [  # type: ignore[attr-defined]
            g for g in first_order if g is not None]
    # A tensor the outputs do not depend on gets no gradient (its .grad stays None).
    tracer.wrt = [w for g, w in zip(grads, wrt) if g is not None]  # type: ignore[attr-defined]
    return [g for g in grads if g is not None]


def _backward_refused(output: Tensor) -> bool:
    """Whether eager mode would refuse a backward from ``output``: a value its tape saved
    was changed in place since (the weights a training step updated after computing the
    loss it returns).  Such an output gets no gradient in the graphs either."""
    todo, seen = [output.grad_fn], set()
    while todo:
        node = todo.pop()
        if not isinstance(node, engine.Node) or id(node) in seen:
            continue
        seen.add(id(node))
        if any(box[0] != version for box, version in node.saved_versions):
            return True
        todo.extend(node.parents)
    return False


# ------------------------------------------------------------------ state


def _snapshot(state: list[tuple[str, Tensor]]) -> list:
    """Copies of the buffers (state that needs no grad): tracing must leave them as found."""
    return [(name, t, t.array, t.array.copy(), t._version[0]) for name, t in state
            if not t._requires_grad]


def _restore(fn: Any, snapshot: list) -> list[str]:
    """Put back every buffer the traced call changed; the names of those it changed."""
    now = dict(_walk(fn)[0])
    changed = []
    for name, t, array, copy, version in snapshot:
        current = now.get(name)
        if current is t and t.array is array and t._version[0] == version and \
                _same(array, copy):
            continue
        changed.append(name)
        t.array = copy
        if current is not t and hasattr(getattr(fn, "__self__", fn), "get_submodule"):
            owner, _, leaf = name.rpartition(".")
            module = getattr(fn, "__self__", fn)
            (module.get_submodule(owner) if owner else module)._buffers[leaf] = t
    return changed


def _same(a: Any, b: Any) -> bool:
    """Equal contents (a buffer may be updated in its own memory, version unchanged)."""
    a, b = backend.to_numpy(a), backend.to_numpy(b)
    return np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")


def _frame_of(exc: BaseException) -> tuple[str, int]:
    """The innermost line of the user's code in an exception's traceback."""
    found = ("<unknown>", 0)
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        filename = os.path.abspath(frame.f_code.co_filename)
        if not filename.startswith(_PACKAGE_DIR + os.sep):
            found = (frame.f_code.co_filename, lineno)
    return found
