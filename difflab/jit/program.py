r"""The fast runner of a graph: a flat program over plain arrays.

:func:`difflab.jit.graph.interpret` runs a graph the plainest way: values
in a dictionary by name, each node's arguments looked up one by one.  A
traced function replays its graph thousands of times, so the names are
worked out once here instead: every value of the graph gets a *slot* in one
list, and each node becomes a :class:`Step` that says which slots it reads
and which it writes.  Running is then one loop over the steps::

    for step in steps:
        values = [env[slot] for slot in step.args]
        env[step.out] = step.forward(ctx, xp, *values, **step.params)

plus three things the reference interpreter does not need:

* *liveness*: each step lists the slots it reads for the last time
  (``free``); they are dropped right after it, so a long program holds
  only the arrays still needed;
* *saved arrays* are kept only when a later node reads them
  (``needs_input_grad`` is all False otherwise, so ``forward`` saves less);
* a fused line's forward is *prepared*: its compiled loop and the sizes it
  writes are looked up once (:class:`PreparedKernel`), not at every call.

The two runners must agree bit for bit; the tests compare them.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from difflab import backend, fastpath
from difflab.jit import fusion, kernels, row_loops
from difflab.jit.graph import (
    Graph,
    GraphError,
    Node,
    Ref,
    _collect_refs,
    _expression,
    _resolve,
    _shape,
    replay_error,
    saved_owner,
)
from difflab.jit.prepared_steps import prepared_forward
from difflab.jit.program_source import written_out
from difflab.ops import registry
from difflab.ops.shapes import mean_scale


@dataclass(frozen=True, slots=True)
class Step:
    """One node of a :class:`Program`: what to call, which slots it reads and writes.

    ``args`` holds a slot number for each argument that is a value of the
    graph and the literal itself for the others (``kinds[k]`` says which);
    ``read`` reads them all at once when every argument is a slot (then
    ``single`` says whether there is one).  ``params`` are the node's
    settings (with slots inside when ``params_have_refs``).  ``out`` is the
    result's slot, ``saved_slots`` the ``(k, slot)`` of each saved array a
    later node reads, and ``free`` the slots no later step reads.
    """

    forward: Callable
    needs: tuple
    args: tuple
    kinds: tuple
    params: dict
    params_have_refs: bool
    out: int
    saved_slots: tuple
    node: Node
    free: tuple
    read: Callable | None
    single: bool


class Program:
    """A graph flattened for speed: every value gets a slot in one list.

    Running is one loop over :class:`Step` s with no dictionary look-ups by
    name: the cost per node is the primitive's own ``forward`` plus a few
    list reads.

    Parameters
    ----------
    graph : Graph
        The graph to run (:meth:`Graph.program` makes and keeps its program).
    prepared : bool, optional
        Bind each fused line's settings once (:class:`PreparedKernel`);
        False calls each fused line's plain ``forward`` (the tests compare
        the two ways bit for bit).  By default, whether the speed shortcuts
        are on (:data:`difflab.fastpath.ENABLED`: ``DIFFLAB_FASTPATH=0``
        runs the plain forwards).

    Examples
    --------
    >>> import numpy as np, difflab as dl
    >>> from difflab import jit
    >>> from difflab.jit.program import Program
    >>> graph = jit.trace(lambda x: (x * 2.0).sin(), dl.tensor(np.zeros(3))).graph
    >>> Program(graph).run([np.array([0.0, 0.5, 1.0])])[0].round(4)
    array([0.    , 0.8415, 0.9093])
    """

    def __init__(self, graph: Graph, prepared: bool | None = None) -> None:
        if prepared is None:
            prepared = fastpath.ENABLED
        self.graph = graph
        slots: dict[str, int] = {}
        for i in graph.inputs:
            slots[i.name] = len(slots)
        for node in graph.nodes:
            for name in node.outputs():
                slots[name] = len(slots)
        self.slots = slots
        self.size = len(slots)
        self.constants = [(slots[name], value) for name, value in graph.constants.items()
                          if name in slots]
        # Each run starts from a copy of this list: the constants already in their slots.
        self.initial: list = [None] * self.size
        for slot, value in self.constants:
            self.initial[slot] = value
        self.argument_slots = [slots[i.name] for i in graph.arguments()]
        self.expected = [(tuple(i.shape), np.dtype(i.dtype)) for i in graph.arguments()]
        self.parameter_slots = {i.name: slots[i.name] for i in graph.parameters()}
        self.outputs = [(True, slots[o.name]) if isinstance(o, Ref) else (False, o)
                        for o in graph.outputs]
        read = [r for n in graph.nodes for r in n.refs()]
        read += [o for o in graph.outputs if isinstance(o, Ref)]
        read_saved = {saved_owner(r.name) for r in read} - {None}
        frees = self._frees()
        self.meta = graph.meta() if prepared else {}
        self.steps = [self._step(node, read_saved, frees.get(k, ()), prepared)
                      for k, node in enumerate(graph.nodes)]
        # What run reads of each step, as one tuple (the steps are not changed after).
        # (needs None: a prepared step that takes no ctx, see prepared_steps.prepared_forward;
        # one whose saved arrays a later step reads returns them beside its result,
        # ``(y, saved)``: a prepared fused line, PreparedKernel)
        self.loop = [(s.forward, s.read, s.single, s.params, s.params_have_refs,
                      s.needs if getattr(s.forward, "needs_context", True) else None, s.out,
                      s.saved_slots, s.free, s) for s in self.steps]
        # The steps written out as one function (fastpath shortcut 15: program_source.py),
        # made at the first run: None where the loop runs.
        self.written: Callable | None = None
        self._write = prepared

    def _frees(self) -> dict[int, tuple]:
        """Liveness: step k -> the slots it reads last (and no output is), dropped after it.

        So a value's memory can go back before the program ends (peak memory stays low).
        """
        last_reader: dict[int, int] = {}
        for k, node in enumerate(self.graph.nodes):
            for r in node.refs():
                last_reader[self.slots[r.name]] = k
        keep = {v for is_ref, v in self.outputs if is_ref}
        frees: dict[int, list] = {}
        for slot, k in last_reader.items():
            if slot not in keep:
                frees.setdefault(k, []).append(slot)
        return {k: tuple(slots) for k, slots in frees.items()}

    def _step(self, node: Node, read_saved: set, free: tuple, prepared: bool) -> Step:
        slots = self.slots
        # A literal stays as it is; a Ref becomes its slot number.
        args = tuple(slots[a.name] if isinstance(a, Ref) else a for a in node.args)
        kinds = tuple(isinstance(a, Ref) for a in node.args)
        found: list[Ref] = []
        _collect_refs(tuple(node.params.values()), found)
        saved_slots = (tuple((k, slots[f"{node.name}.s{k}"])
                             for k, m in enumerate(node.saved) if m is not None)
                       if node.name in read_saved else ())
        needs = node.needs_input_grad if saved_slots else (False,) * len(node.args)
        # (arguments that are all values: read with one call)
        read = operator.itemgetter(*args) if args and all(kinds) else None
        forward, params = node.op.forward, node.params
        if prepared and isinstance(node.op, fusion.FusedElementwise) and not found:
            forward = PreparedKernel(node.op, node.params, needs if saved_slots else None)
            params = {}
        elif prepared:  # (fastpath shortcut 14: jit/prepared_steps.py)
            first = node.args[0] if node.args else None
            in_shape = self.meta[first.name][0] if isinstance(first, Ref) else None
            plain = prepared_forward(node, in_shape, bool(saved_slots), bool(found))
            if plain is not None:  # (settings that read values are passed at each call)
                forward, params = plain, params if found else {}
        return Step(forward, needs, args, kinds, params, bool(found), slots[node.name],
                    saved_slots, node, free, read, len(args) == 1)

    def check(self, arrays: Sequence[Any]) -> None:
        """Refuse arguments whose number, shape or dtype differ from the traced ones."""
        if len(arrays) == len(self.expected):
            for a, (shape, dtype) in zip(arrays, self.expected):
                if getattr(a, "shape", None) != shape or getattr(a, "dtype", None) != dtype:
                    break
            else:
                return  # (the common case, checked without building any message)
        expected = self.graph.arguments()
        if len(arrays) != len(expected):
            raise GraphError(
                f"graph {self.graph.name} takes {len(expected)} arguments "
                f"({', '.join(i.name for i in expected)}), got {len(arrays)}"
            )
        for i, a in zip(expected, arrays):
            shape, dtype = tuple(getattr(a, "shape", ())), getattr(a, "dtype", None)
            if shape != tuple(i.shape) or dtype != np.dtype(i.dtype):
                raise GraphError(
                    f"graph {self.graph.name} was traced for {i.name}: {_shape(i.shape)} "
                    f"{np.dtype(i.dtype).name}, but got {_shape(shape)} "
                    f"{getattr(dtype, 'name', type(a).__name__)}. A static graph has fixed "
                    f"shapes and dtypes: trace it again with an example of the new shape "
                    f"(difflab.jit.trace / script re-trace by themselves)."
                )

    def run(self, arrays: Sequence[Any], named: Mapping[str, Any] | None = None,
            check: bool = True) -> list:
        """The outputs for these arguments (in order) and parameters (by name in ``named``)."""
        if check:
            self.check(arrays)
        if self._write:
            self._write = False
            self.written = written_out(self)
        if self.written is not None and len(arrays) >= len(self.argument_slots):
            return self.written(arrays, self._array_module(arrays))
        env, xp = self._environment(arrays, named)
        Context, generic = registry.Context, np.generic
        # (each step's fields unpacked from a plain tuple: at a few µs a step, the
        # attribute reads of the Step records were a tenth of the time)
        for forward, read, single, params, has_refs, needs, out, saved, free, step in self.loop:
            if read is None:
                values = [env[a] if k else a for a, k in zip(step.args, step.kinds)]
            else:
                values = (read(env),) if single else read(env)
            if has_refs:
                params = {k: _resolve(v, env, self.slots) for k, v in params.items()}
            ctx = Context(needs) if needs is not None else None
            try:
                y = forward(ctx, xp, *values, **params) if params else forward(ctx, xp, *values)
            except (ValueError, TypeError, IndexError) as exc:
                raise replay_error(exc, f"graph {self.graph.name}, "
                                        f"{_expression(step.node)}") from None
            if saved:
                if ctx is None:  # (a prepared kernel hands its saved arrays back beside y)
                    y, kept = y
                else:
                    kept = ctx.saved
                for k, slot in saved:
                    env[slot] = kept[k]
            if isinstance(y, generic):  # NumPy gives scalars for 0-d results
                y = np.asarray(y)
            env[out] = y
            if free:
                for slot in free:
                    env[slot] = None
        return [env[v] if is_ref else v for is_ref, v in self.outputs]

    def _environment(self, arrays: Sequence[Any], named: Mapping[str, Any] | None
                     ) -> tuple[list, Any]:
        """The slots filled with the constants, arguments and parameters; the array module."""
        env = self.initial.copy()
        for slot, a in zip(self.argument_slots, arrays):
            env[slot] = a
        for name, slot in self.parameter_slots.items():
            try:
                env[slot] = named[name]  # type: ignore[index]
            except (KeyError, TypeError):
                raise GraphError(
                    f"graph {self.graph.name}: no value for parameter {name!r} "
                    f"(pass it by name)") from None
        return env, self._array_module(arrays)

    def _array_module(self, arrays: Sequence[Any]) -> Any:
        """The array module of the first argument (or constant): NumPy's namespace, CuPy."""
        first = arrays[0] if arrays else next((v for _, v in self.constants), None)
        return (backend.numpy_namespace if first is None or isinstance(first, np.ndarray)
                else backend.array_module(first))


# The IR does not import its runner (no import cycle): the runner tells the IR its name.
Graph.program_class = Program


class KernelPlan(NamedTuple):
    """What a :class:`PreparedKernel` worked out on its first call (unpacked at each call)."""

    reads: list
    """For each input, the number of elements the loop reads (n, or a broadcast's size)."""
    n: int
    """The loop's size."""
    loop: Callable
    """The loop's machine code for this dtype, ``loop(n, *inputs, *outputs)`` on flat,
    aligned arrays, called without numba's dispatch on the types of its arguments
    (:func:`~difflab.jit.kernels.entry_point`)."""
    writes: list
    """For each array the loop writes, its size (n, or 1 for a sum)."""
    dtypes: list
    """The dtype once for each array written (``map(np.empty, writes, dtypes)``)."""
    returns: list
    """For each output, in the line's order: ``(array written, shape)``, shape None where
    the flat array is already the output's shape."""
    means: list
    """``(array written, 1/n)`` for each mean the line returns (scaled after the loop)."""
    dtype: np.dtype
    """The dtype of every array (the first call's; another takes the plain forward)."""
    stacked: tuple | None
    """``(outputs,) + shape`` where the outputs are the rows of one array, else None."""
    kernel: Callable
    """numba's dispatcher of the loop (an input that is not aligned is typed by it)."""


class PreparedKernel:
    """A fused line's forward (:class:`~difflab.jit.fusion.FusedElementwise`), settings bound.

    A line's settings never change, so what depends on them alone (the
    layout, the compiled loop, the sizes of the arrays it writes, how each
    output is shaped) is looked up on the first call and kept.  A call in the
    common case of the numba loop (NumPy arrays of the dtype of the first call,
    float64 or float32, of the sizes the loop reads; no windows, no scatters)
    then costs the loop and the allocation of its outputs.  Every other call
    (a GPU array, another dtype, a window, NumPy kernels) is the plain
    ``forward``.  The tests compare the two, bit for bit.

    At the sizes of teaching models (a GRU's gates are 8 x 32 numbers) the
    loop itself takes a few microseconds, so what the call does around it
    counts as much:

    * the loop's machine code for the plan's dtype is called directly
      (:func:`~difflab.jit.kernels.entry_point`): numba's dispatcher would
      work out the type of every argument again at each call, to find the code
      it already found on the first (an input that is not aligned, which only
      the dispatcher's own code reads, still goes through it);
    * an input that is not contiguous (a column slice of a bigger matmul
      result, as a GRU's gates are) is copied, as the plain forward copies
      it, by ``ravel``: one call that flattens and copies only when it must;
    * an output that is flat already (a 1-d line's) is returned as written,
      with no ``reshape``;
    * it takes no ``ctx`` (the program passes None, saving the making of a
      ``Context``, about 0.3 µs, and its ``save``): where a later step reads
      the line's other outputs (its saved arrays), they are returned beside
      the first, ``(y, saved)``, and the program puts them in their slots;
      where none does they are not kept at all.  The plain forward, where a
      call falls back to it, gets a ``Context`` of its own;
    * a line that reads a bias or a column (a broadcast input) and only computes
      elementwise runs as a loop by rows (:mod:`~difflab.jit.row_loops`, shortcut
      19): the plain loop moves a counter at each element, which keeps it out of
      SIMD lanes;
    * a small line's many outputs (at least :data:`STACKED`, of at most
      :data:`SMALL` elements each, all elementwise outputs of the loop's
      shape) are the rows of one array allocated at once, instead of one
      array each (a GRU's backward kernel writes thirty of them).  The rows
      share that one buffer: a write into one row touches no other, but the
      buffer is freed only when the last row still kept is.

    Parameters
    ----------
    op : FusedElementwise
        The line's operation.
    params : dict
        The line's settings (``body``, ``outputs``, ``shape``, ...).
    needs : tuple of bool or None, optional
        The step's ``needs_input_grad`` where a later step reads its saved arrays:
        then each call returns ``(y, saved)``; None (the default): it returns ``y``.

    Examples
    --------
    >>> import numpy as np, difflab as dl
    >>> from difflab import jit
    >>> from difflab.jit.program import PreparedKernel
    >>> f = lambda x: ((x * 2.0).sin() + 1.0).exp()
    >>> graph = jit.optimize(jit.trace(f, dl.tensor(np.zeros((4, 3)))).graph, ["fuse"])
    >>> (step,) = graph.program().steps
    >>> isinstance(step.forward, PreparedKernel) or not dl.fastpath.ENABLED
    True
    >>> x = np.linspace(0.0, 1.0, 24).reshape(4, 6)[:, ::2]  # (not contiguous)
    >>> plain = Program(graph, prepared=False)  # (each fused line's plain forward)
    >>> bool((graph.run(x)[0] == plain.run([x])[0]).all())
    True
    """

    needs_context = False  # (the program passes None: see above)

    def __init__(self, op: fusion.FusedElementwise, params: dict,
                 needs: tuple | None = None) -> None:
        self.op, self.params, self.needs = op, params, needs
        # None: not made yet, False: these settings never take the common case
        self.plan: KernelPlan | bool | None = None

    def __call__(self, ctx: Any, xp: Any, *inputs: Any) -> Any:
        plan = self.plan
        if plan is None:
            plan = self.plan = self._make_plan(inputs)
        if plan and fusion.USE_NUMBA and len(inputs) == len(plan[0]):
            reads, n, loop, writes, dtypes, returns, means, dtype, stacked, kernel = plan
            flat = []
            # (`a.dtype is dtype`: NumPy's float64 and float32 dtypes are one object each;
            # any other dtype reads take the plain path)
            for a, size in zip(inputs, reads):
                if type(a) is not np.ndarray or a.dtype is not dtype or a.size != size:
                    break
                if not a.flags.aligned:  # (the loop's machine code reads aligned arrays)
                    loop = kernel
                flat.append(a.ravel())  # (flat, contiguous: a view, or an exact copy)
            else:
                if stacked is not None:  # (one allocation for every output; see SMALL)
                    ys = np.empty((len(writes), n), dtype)
                    loop(n, *flat, *ys)
                    results = list(ys.reshape(stacked))
                else:
                    ys = list(map(np.empty, writes, dtypes))
                    loop(n, *flat, *ys)
                    for k, scale in means:
                        ys[k] *= scale
                    results = [ys[k] if shape is None else ys[k].reshape(shape)
                               for k, shape in returns]
                return results[0] if self.needs is None else (results[0], results[1:])
        needs = self.needs
        ctx = registry.Context((False,) * len(inputs) if needs is None else needs)
        y = self.op.forward(ctx, xp, *inputs, **self.params)
        return y if needs is None else (y, ctx.saved)

    def _make_plan(self, inputs: tuple) -> KernelPlan | bool:
        """The common case's plan, for the first call's dtype; False if these settings
        (or that dtype) never take it."""
        params = self.params
        shape = params.get("shape")
        if not fusion.USE_NUMBA or shape is None or params.get("windows") is not None:
            return False
        dtype = inputs[0].dtype if inputs and type(inputs[0]) is np.ndarray else None
        if dtype is None or fusion.loop_dtype(dtype) is None:
            return False
        layout, (kind, kernel) = self.op.kernel(params["body"], params["outputs"], "numba",
                                                params.get("broadcast"), dtype)
        if kind != "numba" or layout.root:  # (no scalar form; scatters zero their arrays)
            return False
        n, shape = math.prod(shape), tuple(shape)
        reads = [n if read is None else read[1] for read in layout.broadcast]
        writes, returns, means, stacked = _outputs(layout, shape, n)
        by_rows = row_loops.row_kernel(layout, dtype, n)  # (shortcut 19: a bias, a column)
        if by_rows is not None:
            kernel = by_rows
        loop = kernels.entry_point(kernel, n, [np.empty(size, dtype)
                                               for size in reads + writes])
        return KernelPlan(reads, n, loop, writes, [dtype] * len(writes), returns, means,
                          dtype, stacked, kernel)


def _outputs(layout: Any, shape: tuple, n: int) -> tuple:
    """A prepared kernel's ``writes``, ``returns``, ``means`` and ``stacked``
    (:class:`KernelPlan`) for a line of ``layout`` and this shape (n elements)."""
    writes = [n if layout.kinds[j] == "elementwise" else 1 for j in layout.parameters]
    returns = [(layout.parameters.index(k),
                shape if layout.kinds[k] == "elementwise" else ())
               for k in layout.outputs]
    means = [(j, mean_scale(n)) for (j, _), k in zip(returns, layout.outputs)
             if layout.body[k][0] == "mean"]
    # The outputs as rows of one array: many, all elementwise, small, written in the
    # order they are returned (and not 0-d: the rows of a 1-d array would be NumPy
    # scalars).
    stacked = ((len(writes),) + shape
               if shape and n <= SMALL and len(writes) >= STACKED
               and all(layout.kinds[j] == "elementwise" for j in layout.parameters)
               and [k for k, _ in returns] == list(range(len(writes))) else None)
    # (a flat output of the loop's size is the output itself when the line is 1-d;
    # an array returned twice is two views of it, as the plain forward gives)
    written = [j for j, _ in returns]
    returns = [(j, None if out_shape == (writes[j],) and written.count(j) == 1
                else out_shape) for j, out_shape in returns]
    return writes, returns, means, stacked


#: Up to this many elements, a prepared kernel's outputs are the rows of one array
#: (:class:`PreparedKernel`): one allocation, where each costs about as much as the loop
#: over a few hundred numbers.  Above it each output has its own memory, so that one kept
#: output does not keep the others' memory.
SMALL = 4096
#: ... and only from this many outputs on: the views of one array's rows cost about
#: 0.1 µs each, and the array and its reshape 0.5 µs, so for fewer outputs one array each
#: measured as fast or faster (32 outputs of 256 numbers: 6.8 µs against 13.7 µs).
STACKED = 6
