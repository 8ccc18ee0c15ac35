"""Static graphs: trace a function once, look at the graph, optimize it, replay it, save it.

>>> from difflab import jit
>>> f = jit.trace(lambda x, w: (x * w).sin().sum(), (x, w))
>>> print(f.graph)                      # the numbered listing
>>> f(x2, w2)                           # replayed on plain arrays, no tape
>>> g = jit.grad(f.graph)               # the backward pass, as another graph
>>> jit.optimize(g, ["dce", "cse", "fold"], show=True)

>>> fast = jit.compile(model)          # torch.compile: guarded graphs, traced on first call

See docs/guides/static-graphs.md.
"""

from difflab.jit.compiler import (
    CompiledFunction,
    ExplainOutput,
    GraphBreak,
    GraphBreakError,
    RecompileLimitWarning,
    compile,
    explain,
)
from difflab.jit.graph import Graph, GraphError, Input, Node, Ref, interpret
from difflab.jit.passes import (
    PASSES,
    common_subexpression_elimination,
    constant_folding,
    dead_code_elimination,
    optimize,
)
from difflab.jit.program import Program
from difflab.jit.tracing import TracedFunction, Tracer, TracerWarning, script, trace
from difflab.jit.transforms import grad, jvp

__all__ = ["CompiledFunction", "ExplainOutput", "Graph", "GraphBreak", "GraphBreakError",
           "GraphError", "Input", "Node", "PASSES", "Program", "RecompileLimitWarning",
           "Ref", "TracedFunction", "Tracer", "TracerWarning",
           "common_subexpression_elimination", "compile", "constant_folding",
           "dead_code_elimination", "explain", "grad", "interpret", "jvp", "optimize",
           "script", "trace"]
