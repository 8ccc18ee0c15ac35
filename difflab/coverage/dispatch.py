"""Which public functions do not go through the one dispatch (``engine.apply``)?

Every function and Tensor method that computes on tensor values must reach
the primitives through ``engine.apply``, the one call every interpreter (the
tape, ``Dual``, the graph tracer) listens to; one that computes on raw arrays
instead gives the tracer a silent constant.  :func:`bypassing` checks every
public ``difflab.<name>``, ``Tensor.<name>`` and ``nn.functional.<name>``:

* it needs an entry in the one table of sample inputs
  (:mod:`difflab.testing.samples`: an entry of its own, or found by probing
  it with one float tensor, two, or one and a dim), unless it computes
  nothing (creation, settings, transforms, value reads: each with its reason
  in ``samples.NOT_COMPUTATIONS``) or works in place;
* traced on its sample, none of its results may be a constant of the graph.

``python -m difflab.coverage --dispatch`` prints what is left (a test keeps
the list empty)::

    $ python -m difflab.coverage --dispatch
    every public function goes through the dispatch (277 checked)
"""

from __future__ import annotations

import warnings

import numpy as np

import difflab
from difflab.jit.graph import Ref
from difflab.jit.tracing import trace_graph
from difflab.testing import samples


def checked_cases() -> dict[str, samples.Case]:
    """The table's cases for the public API, by ``dl.<name>``/``Tensor.<name>``/``F.<name>``."""
    return {**samples.function_cases(), **{c.name: c for c in samples.probe_cases()}}


def _constant_result(case: samples.Case) -> bool:
    """Whether tracing ``case`` on its example leaves one of its results a constant."""
    example = samples.variants(case)[0]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        graph = trace_graph(case.call, tuple(difflab.tensor(a) for a in example))
    constants = {i.name for i in graph.inputs if i.kind == "constant"}
    return any(isinstance(r, Ref) and r.name in constants for r in graph.outputs)


def bypassing() -> list[str]:
    """``"name: why"`` for each public function that does not go through the dispatch."""
    cases = checked_cases()
    left = []
    for label, _, name in samples.public_callables():
        if samples.exempt(name):
            continue
        case = cases.get(label)
        if case is None:
            left.append(f"{label}: no entry in the table of sample inputs")
        elif _constant_result(case):
            left.append(f"{label}: a result is a constant of its traced graph (it computes "
                        f"on raw arrays, outside engine.apply)")
    return left


def report() -> tuple[str, int]:
    """The text ``--dispatch`` prints, and its exit status (1 when something bypasses)."""
    left = bypassing()
    if not left:
        return (f"every public function goes through the dispatch "
                f"({len(checked_cases())} checked)\n", 0)
    return "does not go through engine.apply:\n" + "".join(f"  {x}\n" for x in left), 1
