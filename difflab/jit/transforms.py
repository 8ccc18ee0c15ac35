r"""Graph to graph: the backward pass of a graph is another graph.

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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from difflab.autograd import functional
from difflab.jit.graph import Graph, GraphError, Input
from difflab.jit.tracing import Tracer
from difflab.tensor import Tensor


def _example(i: Input) -> Any:
    """A value to trace with: the one seen when tracing, or a harmless stand-in."""
    if i.example is not None:
        return i.example
    dtype = np.dtype(i.dtype)
    # 0.5: inside the domain of every rule (log, sqrt, asin, ...); 0 is a valid index.
    return np.full(i.shape, 0.5 if dtype.kind in "fc" else 0, dtype=dtype)


def grad(graph: Graph, wrt: Sequence[str] | None = None, output: int = 0) -> Graph:
    """The graph of ``(outputs..., d outputs[output] / d wrt...)``.

    ``wrt`` names the inputs to differentiate by (default: every floating
    argument and parameter); ``outputs[output]`` must be a scalar (a loss).
    The new graph has the same inputs and returns the original outputs
    followed by one gradient per name in ``wrt``.
    """
    inputs = [i for i in graph.inputs if i.kind != "constant"]
    if wrt is None:
        wrt = [i.name for i in inputs if np.dtype(i.dtype).kind == "f"]
    known = {i.name: i for i in inputs}
    for name in wrt:
        if name not in known:
            raise GraphError(f"grad: {name!r} is not an input of graph {graph.name} "
                             f"(inputs: {', '.join(known)})")
        if np.dtype(known[name].dtype).kind not in "fc":
            raise GraphError(f"grad: input {name!r} has dtype {np.dtype(known[name].dtype)}; "
                             f"only floating inputs have gradients")
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
        tracer.add_input(i.name, t, kind=i.kind)
        values[i.name] = t
    for name, array in graph.constants.items():
        tracer.add_constant(array, name)  # the same arrays, so evaluate's uses find them
    with tracer:
        outs = graph.evaluate(values)
        y = outs[output]
        if not isinstance(y, Tensor) or not y.requires_grad:
            grads = [None] * len(wrt)
        else:
            grads = list(functional.grad(y.reshape(()) if y.shape != () else y,
                                         [values[n] for n in wrt], create_graph=True,
                                         allow_unused=True))
        # An input the output does not depend on has gradient zero.
        grads = [g if g is not None else values[n] * 0.0 for g, n in zip(grads, wrt)]
    result = tracer.graph(tuple(outs) + tuple(grads))
    return result
