"""The switches :func:`difflab.autograd.engine.apply` and the backward walk read.

Each is a class holding one setting (``enabled``, ``active``), set by the feature it
belongs to while that feature is in effect and ``None`` (or False) otherwise, so the
tape's hot path pays one ``is None`` test per switch: anomaly detection, the
``autograd.tape`` watcher, the graph recorder (``jit.trace``, ``dl.compile``),
vmap's batching, the profiler and autocast.  ``engine.<name>`` is their path too.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any


class AnomalyMode:
    """Global switch for :func:`difflab.autograd.detect_anomaly`."""

    enabled = False


class TapeRecorder:
    """The tape being watched by :func:`difflab.autograd.tape`, if any."""

    active: list | None = None


class Recorder:
    """What watches :func:`apply` besides the tape: the graph tracer of :mod:`difflab.jit`.

    The engine and the code above it tell the active recorder
    (``GraphRecorder.active``) six things, and this class says what each
    means by default (nothing):

    * :meth:`record`: a primitive was applied, with or without a derivative
      (a static graph must replay all of them);
    * :meth:`value_read`: a tensor's value was turned into Python
      (``bool(t)``, ``t.item()``), which a graph cannot replay;
    * :meth:`written`: an in-place operation (``x.add_(y)``, ``x[i] = v``)
      wrote a primitive's result into a tensor's memory;
    * :meth:`viewed`: a recorded result was made a view of another tensor (it
      shares that tensor's version counter, so writes into either one count);
    * :meth:`disabled_call`: a function marked ``torch.compiler.disable`` is
      about to run;
    * :meth:`side_effect`: something is about to change state that no
      primitive records (``backward()`` filling the leaves' ``.grad``, an
      optimizer's step updating the parameters' arrays), which a graph
      cannot replay;
    * ``records_backward``: whether every backward pass is to be recorded
      as operations (``create_graph=True``), as a traced training step needs;
      :meth:`backward` brackets such a pass, told whether it is first order.
    """

    #: Record every backward pass as operations (the tracer: a training step's graph).
    records_backward = False
    #: True for ``dl.compile``'s tracer (``torch.compiler.is_compiling()`` reads it).
    compiles = False
    #: True while recording a backward pass that will not be differentiated again.
    first_order = False

    def record(self, op: Any, inputs: Sequence[Any], params: dict, ctx: Any,
               result: Any) -> None:
        """Primitive ``op`` was applied to ``inputs`` with ``params``, giving ``result``."""

    def value_read(self, tensor: Any, what: str) -> None:
        """``what`` (``"bool()"``, ``".item()"``) turned ``tensor``'s value into Python."""

    def written(self, tensor: Any, result: Any) -> None:
        """An in-place operation wrote ``result`` (a primitive's output) into ``tensor``."""

    def viewed(self, tensor: Any) -> None:
        """``tensor``, a primitive's output, was made a view after it was recorded: it
        shares its base's version counter from now on (``tensor._version``)."""

    def side_effect(self, what: str) -> None:
        """``what`` (``"backward()"``, ``"SGD.step()"``) is about to change state outside
        the primitives: the compiler's tracer makes it a graph break (the call runs
        eagerly), the plain tracer (:func:`difflab.jit.trace`) refuses the trace."""

    def python_hooks(self, what: str) -> None:
        """``what`` (a module's forward or backward hooks) is Python about to run around a
        module's call: the compiler's tracer makes it a graph break (the call runs eagerly,
        hooks and all); the plain tracer records the operations the hooks apply, as
        PyTorch's ``jit.trace`` does."""

    def module_called(self, module: Any) -> None:
        """``module`` (an ``nn.Module``) is being called: the compiler's tracer notes it, so
        a hook registered on it later makes a plain function's graphs trace again."""

    def disabled_call(self, what: str) -> None:
        """``what``, a function marked ``torch.compiler.disable``, is about to run: the
        compiler's tracer makes it a graph break (the call runs eagerly); the plain tracer
        records the operations it applies, as PyTorch's ``jit.trace`` does."""

    def backward(self, first_order: bool) -> Any:
        """A context manager around a recorded backward pass (see ``records_backward``)."""
        return contextlib.nullcontext()


class GraphRecorder:
    """The :class:`Recorder` that sees every primitive applied, if one is (``None``: none)."""

    active: Recorder | None = None


class Batching:
    """vmap's interpreter (:mod:`difflab.func.vmap`) while a vmap runs, else ``None``.

    ``active(op, inputs, params)`` gives the result when an input is batched,
    by the primitive's batching rule, or ``None`` to let :func:`apply` go on.
    """

    active: Any = None


class Profiling:
    """The profiler recording (:mod:`difflab.autograd.profiler`, ``torch.profiler``), else None.

    ``active.primitive(op, inputs, params)`` runs one call of :func:`apply` as one
    timed event (it calls :func:`apply` again, with ``active.timing`` set to ``op``
    so that this second call runs the primitive); ``active.backward_step(node, g,
    create_graph)`` runs one record's VJP of the backward walk as one event.  With
    no profile running this costs one ``is None`` test per call.
    """

    active: Any = None


class Autocast:
    """The autocast region in effect (:mod:`difflab.amp`), else ``None``.

    ``active(op, inputs)`` gives the inputs to use: inside ``autocast`` the matrix
    products' floating inputs are cast to the region's lower precision, the losses'
    back to float32, each cast an operation on the tape like any other.
    """

    active: Any = None
