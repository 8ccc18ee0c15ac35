"""The operations a graph may hold, found by name: registry primitives and two helpers.

* every primitive of :mod:`difflab.ops.registry` (those without a derivative,
  such as comparisons and ``argmax``, included);
* :class:`VJP`: one primitive's VJP as a single node (``prod_vjp0``), for the
  primitives whose VJP cannot itself be recorded op by op;
* :class:`JVP`: one primitive's JVP as a single node (``conv2d_jvp``), for the
  rules written for arrays only (forward mode of a graph, :func:`difflab.jit.jvp`);
* ``fused``: a kernel made of elementwise rules (:mod:`difflab.jit.fusion`).

:func:`resolve` is the one place a name becomes an operation, so a graph
file can name nothing else: loading never imports or runs anything by name.

The pieces every other jit module shares about applying operations live here
too, at the bottom of the jit's imports (graph, kernels, fusion, passes and
tracing sit above, in that order): :func:`rule_value_reads` and the
``_ContextCatcher`` that sees one ``apply``'s ``ctx``.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

from difflab.autograd import engine
from difflab.autograd.engine import Recorder
from difflab.jit import standins
from difflab.ops import registry
from difflab.ops.primitive import Primitive

_VJP_NAME = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)_vjp(\d+)$")
_JVP_NAME = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)_jvp$")


#: The jit's own operations, by the name graph files give them, besides the registry's
#: primitives: fusion.py adds ``fused`` (it sits above this module, which does not import it).
OPERATIONS: dict[str, Any] = {}


class RuleReading(Recorder):
    """A recorder that can be told a derivative rule is being traced (the jit's Tracer).

    While ``rule_reads`` is a list (inside :func:`rule_value_reads`), the values such a
    rule reads into Python are appended to it instead of warned about.
    """

    rule_reads: list | None = None


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
    if not isinstance(tracer, RuleReading):
        yield []
        return
    outer, tracer.rule_reads = tracer.rule_reads, []
    try:
        yield tracer.rule_reads
    finally:
        tracer.rule_reads = outer


class _ContextCatcher(Recorder):
    """Sees the ``ctx`` of each primitive applied (for its saved arrays), passing it on.

    It stands in ``engine.GraphRecorder`` for one ``apply`` and hands the
    record (and any value read) on to a tracer that was active (so an
    evaluated graph is traced).
    """

    def __init__(self) -> None:
        self.ctx = None
        self.outer = None

    def __enter__(self) -> None:
        from difflab.autograd.engine import GraphRecorder

        self.outer, GraphRecorder.active = GraphRecorder.active, self

    def __exit__(self, *exc: object) -> None:
        from difflab.autograd.engine import GraphRecorder

        GraphRecorder.active = self.outer

    def record(self, op: Any, inputs: Any, params: Any, ctx: Any, result: Any) -> None:
        self.ctx = ctx
        if self.outer is not None:
            self.outer.record(op, inputs, params, ctx, result)

    def value_read(self, tensor: Any, what: str) -> None:
        if self.outer is not None:
            self.outer.value_read(tensor, what)


class VJP(Primitive):
    r"""Input ``index``'s adjoint from a primitive's VJP, as one graph node.

    ``forward(ctx, xp, ȳ, *saved, **attributes)`` rebuilds the ``ctx`` the
    primitive's forward filled in (its attributes are this node's params),
    then calls the primitive's own ``vjp`` on arrays.  The graph backward
    uses it for a primitive whose VJP is first-order only (``prod``): the
    numbers are the rule's own; only a second derivative through it is missing.
    The rule computes the adjoints ``needs_input_grad`` asks for; those of
    the other inputs leave the node as its saved outputs (``v7.s0``, in
    input order), so one node can give them all.
    """

    double_backward = False

    def __init__(self, primitive: Any, index: int) -> None:
        self.primitive = primitive
        self.index = index
        self.name = f"{primitive.name}_vjp{index}"
        self.math = f"the {primitive.name} VJP, adjoint of input {index}"

    def forward(self, ctx: Any, xp: Any, g: Any, *saved: Any, **attributes: Any) -> Any:
        needs = tuple(attributes.pop("needs_input_grad"))
        inner = registry.Context(needs)
        for key, value in attributes.items():
            setattr(inner, key, value)
        adjoints = self.primitive.vjp(inner, xp, g, *saved)
        others = [a for i, a in enumerate(adjoints) if needs[i] and i != self.index]
        if others:
            ctx.save(*others)
        return adjoints[self.index]

    def vjp(self, ctx: Any, xp: Any, g: Any, *saved: Any) -> tuple:
        raise RuntimeError(f"{self.name}: no second derivative through {self.primitive.name}")


class JVP(Primitive):
    r"""A primitive's JVP as one graph node: ``ẏ = J ẋ`` on arrays.

    ``forward(ctx, xp, *tangents, *saved, **attributes)``: the tangents of the
    primitive's inputs (``None`` for an input without one), then the arrays
    its forward saved; the attributes rebuild the ``ctx`` the rule reads.
    Forward mode of a graph uses it where a rule cannot be traced op by op
    (it calls an array method tensors lack).
    """

    def __init__(self, primitive: Any) -> None:
        self.primitive = primitive
        self.name = f"{primitive.name}_jvp"
        self.math = f"the {primitive.name} JVP"

    def forward(self, ctx: Any, xp: Any, *values: Any, **attributes: Any) -> Any:
        needs = tuple(attributes.pop("needs_input_grad"))
        inner = registry.Context(needs)
        for key, value in attributes.items():
            setattr(inner, key, value)
        return self.primitive.jvp(inner, xp, *values)

    def vjp(self, ctx: Any, xp: Any, g: Any, *saved: Any) -> tuple:
        raise RuntimeError(f"{self.name}: no reverse mode through a JVP node; differentiate "
                           f"the graph before taking its jvp")


def _arrays_of_tensors(value: Any) -> Any:
    """A parameter with the tensors in it (a graph value used as an index, replayed as a
    tensor under the graph backward) as their arrays, as the traced call had them: NumPy
    reads a one-element tensor inside an index as an integer, which drops its axis."""
    from difflab.tensor import Tensor

    if isinstance(value, Tensor):
        return value.array
    if isinstance(value, tuple):
        return tuple(_arrays_of_tensors(v) for v in value)
    return value


class Differentiable(Primitive):
    """A primitive whose VJP, under ``create_graph``, becomes :class:`VJP` nodes if needed.

    The graph backward runs the forward graph through this wrapper.  When
    the backward is recorded (``xp`` is difflab's own functions), the
    primitive's VJP is tried op by op; if it is first-order only, uses an
    array function tensors lack, or branches on a value (tracing would bake
    the branch in), each input's adjoint is one ``VJP`` node.  So is a
    traced training step's first-order backward through a primitive whose
    array rule is cheaper (``first_order_is_cheaper``: conv2d reuses its
    saved columns); there one node computes all its adjoints at once (the
    first needed is its value, the others its saved outputs), since no
    second derivative will be taken through them.
    """

    def __init__(self, primitive: Any) -> None:
        self.primitive = primitive
        self.name = primitive.name
        self.traced_as = primitive  # the node in the graph is the primitive itself
        self.user_code = primitive.user_code
        self.complex_vjp = primitive.complex_vjp  # (the engine calls it for complex adjoints)

    def forward(self, ctx: Any, xp: Any, *args: Any, **params: Any) -> Any:
        params = {k: _arrays_of_tensors(v) for k, v in params.items()}
        return self.primitive.forward(ctx, xp, *args, **params)

    def vjp(self, ctx: Any, xp: Any, g: Any, *saved: Any) -> tuple:
        from difflab import functions

        if xp is not functions:
            return self.primitive.vjp(ctx, xp, g, *saved)
        from difflab.autograd.engine import GraphRecorder, apply

        recorder = GraphRecorder.active
        array_rule = recorder is not None and recorder.first_order and \
            self.primitive.first_order_is_cheaper
        if not array_rule and self.primitive.double_backward:
            try:
                with rule_value_reads() as reads:
                    adjoints = self.primitive.vjp(ctx, xp, g, *saved)
                if not reads:
                    return adjoints
                # a branch on a value would be baked in: one node per adjoint decides it
            except (AttributeError, TypeError):
                pass  # a rule written for arrays only: fall back to one node per adjoint
        attributes = {k: v for k, v in vars(ctx).items() if k != "created_at"}
        if getattr(recorder, "stand_ins", False):  # (the settings become the node's own)
            standins.check_settings(attributes)
        needs = tuple(ctx.needs_input_grad)
        if array_rule and any(needs):
            return self._in_one_node(g, saved, needs, attributes)
        # (one node per adjoint, each asking for its own: a second derivative through any
        # of them raises, instead of treating a saved output as a constant)
        return tuple(
            apply(VJP(self.primitive, i), g, *saved,
                  needs_input_grad=tuple(k == i for k in range(len(needs))), **attributes)
            if needed else None
            for i, needed in enumerate(needs)
        )

    def _in_one_node(self, g: Any, saved: tuple, needs: tuple, attributes: dict) -> tuple:
        """Every needed adjoint from one VJP node: its value and its saved outputs."""
        from difflab.autograd.engine import apply
        from difflab.tensor import Tensor

        first = needs.index(True)
        catcher = _ContextCatcher()
        with catcher:
            value = apply(VJP(self.primitive, first), g, *saved, needs_input_grad=needs,
                          **attributes)
        others = iter(catcher.ctx.saved or ())
        adjoints = []
        for i, needed in enumerate(needs):
            if not needed:
                adjoints.append(None)
            elif i == first:
                adjoints.append(value)
            else:
                other = next(others)
                adjoints.append(None if other is None else Tensor._wrap(other))
        return tuple(adjoints)


class NoGradWrite(Primitive):
    r"""A tensor that requires grad after an in-place write made under ``no_grad``.

    Eager autograd records nothing under ``no_grad``: ``t.mul_(0.5)`` there gives ``t``
    the new values but leaves its tape as it was, so a gradient that later reaches ``t``
    goes on to what ``t`` was computed from unchanged (the identity), and none reaches
    what the write read (its factor 0.5, another tensor added).  A graph holds the
    write's value as a node of those reads: this node, ``no_grad_write(old, new)``,
    gives it the tape's derivative instead.

    .. math::
        y = \text{new}, \qquad \bar{\text{old}} = \bar y, \quad
        \bar{\text{new}} = 0, \qquad \dot y = \dot{\text{old}}
    """

    name = "no_grad_write"
    math = "y = new; ∂y/∂old = I, ∂y/∂new = 0 (the tape under no_grad records nothing)"
    description = "an in-place write under no_grad into a tensor that requires grad"

    @staticmethod
    def forward(ctx, xp, old, new):
        ctx.shape = tuple(old.shape)
        return xp.reshape(new, ctx.shape)  # (the written values: a view of them, as detach)

    @staticmethod
    def vjp(ctx, xp, g):
        return g, None

    @staticmethod
    def jvp(ctx, xp, d_old, d_new):
        if d_old is None:  # (only the write's values move: they are cut off)
            return xp.zeros((d_new.shape[0],) + ctx.shape, dtype=d_new.dtype)
        return d_old


NO_GRAD_WRITE = NoGradWrite()
OPERATIONS[NO_GRAD_WRITE.name] = NO_GRAD_WRITE  # (graph files name it: resolve finds it)


#: Names graph files written before the operations without a derivative were primitives
#: gave them (the Tensor operator they were recorded from), and the primitive now.
RENAMED = {"and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
           "invert": "bitwise_not", "floordiv": "floor_divide", "mod": "remainder"}


def resolve(name: str) -> Any:
    """The operation called ``name`` in a graph (a ``KeyError`` naming it if none)."""
    name = RENAMED.get(name, name)
    if name in registry.PRIMITIVES:
        return registry.PRIMITIVES[name]
    if name in OPERATIONS:
        return OPERATIONS[name]
    match = _VJP_NAME.match(name)
    if match and match.group(1) in registry.PRIMITIVES:
        return VJP(registry.PRIMITIVES[match.group(1)], int(match.group(2)))
    match = _JVP_NAME.match(name)
    if match and match.group(1) in registry.PRIMITIVES:
        return JVP(registry.PRIMITIVES[match.group(1)])
    raise KeyError(f"no operation named {name!r}: not a registered primitive, not a "
                   f"primitive's VJP or JVP")
