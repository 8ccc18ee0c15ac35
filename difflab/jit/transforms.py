r"""Graph to graph: the backward pass of a graph is another graph, and so is forward mode.

Reverse mode on the tape walks the records newest first and calls each
primitive's VJP, :math:`\bar x \mathrel{+}= \bar y\, \partial y/\partial x`.
With ``create_graph=True`` those VJPs are computed *with tensors*
(``xp = difflab.functions``), so every multiplication of the backward pass
is itself a primitive applied, recorded like any other.

That gives the graph transform for free: run the forward graph eagerly
(:meth:`Graph.evaluate`, one ``engine.apply`` per node), take
``autograd.grad(..., create_graph=True)``, and trace all of it.  The result
is one graph holding the forward nodes, then the backward nodes made by the
primitives' VJPs; the values the VJPs read (a ``relu`` mask, a softmax)
are the forward nodes' saved outputs ``v3.s0``.  Nothing here knows a
single derivative: they all come from the registry.

Forward mode (:func:`jvp`) walks the graph the other way round, first node
first, and for each node calls its primitive's ``forward`` *and* its
``jvp``, :math:`\dot y = \partial y/\partial x\,\dot x`, with tensors, so
the tangent's operations are traced as nodes too.  A tangent may carry
``k`` directions at once, a leading axis of length ``k`` (the layout of
:class:`difflab.diff.dual.Dual`): every JVP rule is written for it, so one
pass pushes all ``k`` directions, each primitive applied once to a
``(k, ...)`` array instead of ``k`` times: the graph is *batched* over the
directions (what ``jax.vmap`` or ``torch.func.vmap`` does to a JVP).
Compositions give the vectorized derivatives (:mod:`difflab.diff.compiled`):

* the Jacobian of f: Rⁿ → Rᵐ: ``jvp`` of f's graph with the n directions
  of the identity: one pass;
* the Hessian of a scalar f: ``jvp`` of the *backward* graph
  (``grad(f)``) with the identity: forward over reverse, one pass;
* uᵀJ for m cotangents at once (a batched reverse pass): the backward graph
  of ``sum(f(x) * u)`` is linear in u, so its ``jvp`` in u with the m
  directions of the identity gives the m rows of J.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from difflab import backend, functions
from difflab.autograd import engine, functional
from difflab.jit import standins
from difflab.jit.graph import Graph, GraphError, Input, Ref, _ContextCatcher, _resolve
from difflab.jit.ops import JVP
from difflab.jit.tracing import Tracer, _generator_kept, rule_value_reads
from difflab.ops.primitive import Primitive
from difflab.tensor import Tensor


def _example(i: Input) -> Any:
    """A value to trace with: the one seen when tracing, or a harmless stand-in."""
    if i.example is not None:
        return i.example
    dtype = np.dtype(i.dtype)
    # 0.5: inside the domain of every rule (log, sqrt, asin, ...); 0 is a valid index.
    return np.full(i.shape, 0.5 if dtype.kind in "fc" else 0, dtype=dtype)


def _check_wrt(graph: Graph, wrt: Sequence[str] | None, transform: str) -> list[str]:
    """The input names to differentiate by (default: every floating one), checked."""
    inputs = [i for i in graph.inputs if i.kind != "constant"]
    if wrt is None:
        wrt = [i.name for i in inputs if np.dtype(i.dtype).kind == "f"]
    known = {i.name: i for i in inputs}
    for name in wrt:
        if name not in known:
            raise GraphError(f"{transform}: {name!r} is not an input of graph {graph.name} "
                             f"(inputs: {', '.join(known)})")
        if np.dtype(known[name].dtype).kind not in "fc":
            raise GraphError(f"{transform}: input {name!r} has dtype "
                             f"{np.dtype(known[name].dtype)}; only floating inputs have "
                             f"derivatives")
    return list(wrt)


def grad(graph: Graph, wrt: Sequence[str] | None = None, output: int = 0) -> Graph:
    """The graph of ``(outputs..., d outputs[output] / d wrt...)``.

    ``wrt`` names the inputs to differentiate by (default: every floating
    argument and parameter); ``outputs[output]`` must be a scalar (a loss).
    The new graph has the same inputs and returns the original outputs
    followed by one gradient per name in ``wrt``.

    Parameters
    ----------
    graph : Graph
        A traced graph (``dl.jit.trace(f, x).graph``).
    wrt : sequence of str, optional
        The inputs to differentiate by (default: every floating argument and parameter).
    output : int, default 0
        Which output is differentiated (a scalar).

    Returns
    -------
    Graph
        Reverse mode as a graph: the VJP of each node, in reverse order, as new nodes.

    Raises
    ------
    GraphError
        If the output is not a scalar or a name in ``wrt`` is not an input.

    See Also
    --------
    jvp : forward mode as a graph.
    optimize : fold, share and drop what the transform made redundant.

    Examples
    --------
    >>> import difflab as dl
    >>> traced = dl.jit.trace(lambda x: (x * x).sum(), dl.tensor([1.0, 2.0]))
    >>> g = dl.jit.grad(traced.graph)
    >>> g.run(dl.tensor([1.0, 2.0]))          # the value and ∇(Σx²) = 2x
    [tensor(5.), tensor([2., 4.])]
    """
    inputs = [i for i in graph.inputs if i.kind != "constant"]
    wrt = _check_wrt(graph, wrt, "grad")
    if not 0 <= output < len(graph.outputs):
        raise GraphError(f"grad: graph {graph.name} has {len(graph.outputs)} outputs")
    meta = graph.meta()
    target = graph.outputs[output]
    shape = meta[target.name][0] if hasattr(target, "name") else ()
    if int(np.prod(shape)) != 1:
        raise GraphError(
            f"grad: output {output} of graph {graph.name} has shape {shape}; the gradient of "
            f"a graph is taken of a scalar (a loss). Sum it in the function, or pick another "
            f"output."
        )

    tracer = Tracer(f"grad_{graph.name}")
    values: dict[str, Tensor] = {}
    for i in inputs:
        t = Tensor._wrap(_example(i))
        t._requires_grad = i.name in wrt
        # (tensor: a captured weight stays read at each call)
        tracer.add_input(i.name, t, kind=i.kind, tensor=i.tensor)
        values[i.name] = t
    for name, array in graph.constants.items():
        tracer.add_constant(array, name)  # the same arrays, so evaluate's uses find them
    with tracer, _generator_kept():  # (a random node's draws here are not the run's)
        outs = graph.evaluate(values)
        y = outs[output]
        if not isinstance(y, Tensor) or not y.requires_grad:
            grads = [None] * len(wrt)
        else:
            loss = y.reshape(()) if y.shape != () else y
            # The seed ȳ = 1 as a tensor, so every adjoint is one: a rule that meets a traced
            # mask or index with an adjoint (where, embedding's scatter) is then recorded,
            # never computed aside on arrays and baked in as this example's constant.
            seed = Tensor._wrap(backend.array_module(loss.array).ones_like(loss.array))
            seed._requires_grad = True  # (the engine keeps a seed that requires grad a tensor)
            name = "seed"
            while name in tracer.constants:  # (a graph's own gradient graph has one already)
                name += "_"
            tracer.add_constant(seed.array, name)  # (a constant: passes fold it away)
            grads = list(functional.grad(loss, [values[n] for n in wrt], grad_outputs=seed,
                                         create_graph=True, allow_unused=True))
        # An input the output does not depend on has gradient zero.
        grads = [g if g is not None else values[n] * 0.0 for g, n in zip(grads, wrt)]
    result = tracer.graph(tuple(outs) + tuple(grads))
    return result


class _TangentsKnown(Primitive):
    """A node's primitive, told which of its inputs carry tangents.

    ``forward`` saves what the derivatives will read according to
    ``ctx.needs_input_grad``; forward mode needs the same arrays as reverse
    mode, for the inputs that have a tangent.  (The tracer records the
    primitive itself: ``traced_as``.)
    """

    def __init__(self, primitive: Any, needs: tuple) -> None:
        self.primitive = self.traced_as = primitive
        self.name = primitive.name
        self.needs = needs

    def forward(self, ctx: Any, xp: Any, *args: Any, **params: Any) -> Any:
        ctx.needs_input_grad = self.needs
        return self.primitive.forward(ctx, xp, *args, **params)


def _tangent(node: Any, ctx: Any, dots: list, needs: tuple) -> Any:
    """The node's output tangent, from its primitive's JVP rule, traced.

    The rule runs on tensors (``xp`` = difflab's functions), so each of its
    operations becomes a node that later passes can fold and merge.  A rule
    written for arrays only (it calls a method tensors lack), or one that
    branches on a value (it would be baked in), becomes one
    :class:`~difflab.jit.ops.JVP` node instead.
    """
    if node.op.jvp is None:
        raise GraphError(
            f"jvp: {node.name} = {node.op_name}(...) has no forward-mode rule (jvp)"
            + ("; take jvp of the graph before fusing it" if node.op_name == "fused" else
               "; differentiate this function in reverse mode"))
    saved = [Tensor._wrap(s) if hasattr(s, "shape") and not isinstance(
        s, (Tensor, np.generic)) else s for s in (ctx.saved or ())]
    tracer = engine.GraphRecorder.active
    try:
        with rule_value_reads() as reads:
            dy = node.op.jvp(ctx, functions, *dots, *saved)
        if not reads:
            return dy
    except (AttributeError, TypeError, ValueError):
        if getattr(tracer, "stand_ins", False):  # (a ValueError may be a stand-in's doing)
            raise standins.NeedsValues("a forward-mode rule failed on stand-ins") from None
    # (the operations recorded before are read by nothing: dce drops them)
    attributes = {k: v for k, v in vars(ctx).items() if k != "created_at"}
    if getattr(tracer, "stand_ins", False):
        standins.check_settings(attributes)
    return engine.apply(JVP(node.op), *dots, *saved, needs_input_grad=needs, **attributes)


def _jvp_inputs(graph: Graph, tracer: Tracer, wrt: list, seeds: dict, directions: int,
                meta: dict) -> tuple[dict[str, Any], dict[str, Tensor]]:
    """The tangent graph's inputs: the graph's own, its constants, a tangent per ``wrt``.

    Each tangent is a new argument ``{name}_dot``, or a constant when ``seeds`` gives it.
    """
    env: dict[str, Any] = {}
    tangents: dict[str, Tensor] = {}
    for i in graph.inputs:
        if i.kind != "constant":
            env[i.name] = Tensor._wrap(_example(i))
            tracer.add_input(i.name, env[i.name], kind=i.kind,
                             tensor=i.tensor)  # (as grad's: a captured weight)
    for name, array in graph.constants.items():
        env[name] = array
        tracer.add_constant(array, name)  # the same arrays, so the nodes' uses find them
    for name in wrt:
        shape, dtype = (directions,) + tuple(meta[name][0]), meta[name][1]
        if name in seeds:
            seed = seeds[name]
            if tuple(seed.shape) != shape:
                raise GraphError(f"jvp: the seed for {name!r} has shape {tuple(seed.shape)}; "
                                 f"expected (directions, *{name}.shape) = {shape}")
            tracer.add_constant(seed, f"{name}_dot")
        else:
            seed = backend.array_module(env[name].array).zeros(shape, dtype=dtype)
            tracer.add_input(f"{name}_dot", seed)
        tangents[name] = Tensor._wrap(seed)
    return env, tangents


def _push(node: Any, env: dict, tangents: dict, catcher: _ContextCatcher,
          directions: int) -> None:
    """Apply one node to its values (recorded) and its JVP to their tangents (recorded too)."""
    args = _resolve(node.args, env, None)
    params = {k: _resolve(v, env, None) for k, v in node.params.items()}
    params = {k: v.array if isinstance(v, Tensor) else v for k, v in params.items()}
    dots = [tangents.get(a.name) if isinstance(a, Ref) else None for a in node.args]
    needs = tuple(d is not None for d in dots)
    with catcher:
        y = engine.apply(_TangentsKnown(node.op, needs), *args, **params)
    env[node.name] = y
    ctx = catcher.ctx
    for k, m in enumerate(node.saved):
        if m is not None:
            env[f"{node.name}.s{k}"] = Tensor._wrap(ctx.saved[k])
    if not any(needs) or not node.op.differentiable:
        return  # a constant to the tangents (or a comparison, an argmax: no derivative)
    dy = _tangent(node, ctx, dots, needs)
    if dy is not None:
        want = (directions,) + tuple(y.shape)
        if not isinstance(dy, Tensor):
            dy = Tensor._wrap(backend.array_module(y.array).asarray(dy))
        if tuple(dy.shape) != want:
            dy = functions.broadcast_to(dy, want)
        tangents[node.name] = dy


def _output_tangent(graph: Graph, o: Any, outs: list, tangents: dict, meta: dict,
                    directions: int) -> Tensor:
    """An output's tangent; zero for an output that does not depend on ``wrt``."""
    dot = tangents.get(o.name) if isinstance(o, Ref) else None
    if dot is not None:
        return dot
    shape = meta[o.name][0] if isinstance(o, Ref) else ()
    xp = backend.array_module(outs[0].array if outs and isinstance(outs[0], Tensor)
                              else _example(graph.inputs[0]))
    return Tensor._wrap(xp.zeros((directions,) + tuple(shape)))


def jvp(graph: Graph, wrt: Sequence[str] | None = None, directions: int = 1,
        seeds: dict[str, Any] | None = None) -> Graph:
    r"""Forward mode as a graph: ``(outputs..., tangent of each output...)``.

    Each input named in ``wrt`` (default: every floating argument and
    parameter) gets a tangent of shape ``(directions, *shape)``: a new
    argument ``{name}_dot`` after the graph's own, or, if ``seeds`` gives its
    array, a constant (so constant folding can work on it: a matrix times the
    identity seed is folded away).  The new graph returns the original
    outputs followed by one tangent per output, shape
    ``(directions, *output.shape)``: :math:`\dot y_d = J\,\dot x_d` for
    each direction d.

    Values the primitives saved for their derivative (``v3.s0``: a mask, an
    index) are constants to the tangents, as they are to a recorded backward
    pass.  A node with no forward-mode rule (a first-order-only VJP node
    such as ``prod_vjp0``, a fused kernel) is a :class:`GraphError` naming
    it: take ``jvp`` before fusing.

    Parameters
    ----------
    graph : Graph
        A traced graph.
    wrt : sequence of str, optional
        The inputs that get a tangent (default: every floating argument and parameter).
    directions : int, default 1
        How many tangent directions are pushed at once.
    seeds : dict of str to array, optional
        Fixed tangents, kept as constants instead of new arguments.

    Returns
    -------
    Graph

    See Also
    --------
    grad : reverse mode as a graph.

    Examples
    --------
    >>> import difflab as dl
    >>> traced = dl.jit.trace(lambda x: (x * x).sum(), dl.tensor([1.0, 2.0]))
    >>> t = dl.jit.jvp(traced.graph)
    >>> t.run(dl.tensor([1.0, 2.0]), dl.tensor([[1.0, 0.0]]))   # x, then the tangent x_dot
    [tensor(5.), tensor([2.])]
    """
    wrt = _check_wrt(graph, wrt, "jvp")
    if not isinstance(directions, int) or directions < 1:
        raise GraphError(f"jvp: directions must be a positive integer, got {directions!r}")
    seeds = dict(seeds or {})
    for name in seeds:
        if name not in wrt:
            raise GraphError(f"jvp: a seed for {name!r}, which is not in wrt ({wrt})")
    meta = graph.meta()
    tracer = Tracer(f"jvp_{graph.name}")
    env, tangents = _jvp_inputs(graph, tracer, wrt, seeds, directions, meta)
    catcher = _ContextCatcher()
    with tracer, _generator_kept():  # (a random node's draws here are not the run's)
        for node in graph.nodes:
            if np.dtype(node.dtype).kind == "c":
                raise NotImplementedError(
                    f"jvp: forward mode does not follow complex values ({node.name} = "
                    f"{node.op.name}(...) is {np.dtype(node.dtype)}): the JVP of a "
                    f"primitive that is not holomorphic (abs, real, angle) would be wrong on "
                    f"it; take the graph's grad (reverse mode) instead")
            _push(node, env, tangents, catcher, directions)
        outs = [_resolve(o, env, None) for o in graph.outputs]
        dots_out = [_output_tangent(graph, o, outs, tangents, meta, directions)
                    for o in graph.outputs]
    return tracer.graph(tuple(outs) + tuple(dots_out))
