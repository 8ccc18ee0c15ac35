r"""A program written out as one Python function (fastpath shortcut 15).  Skip it on a first read.

:meth:`Program.run <difflab.jit.program.Program.run>` is one loop over the
steps: per step it unpacks the step's fields, reads the arguments from the
list of slots, calls the step's forward, stores the result, drops the slots
read for the last time.  At the sizes of teaching models a step's arithmetic
takes a microsecond or two, and the loop around it about 0.4 µs, so a GRU
step's 75 lines spent about 30 µs in the loop alone.

Here the same steps are written out once as the source of one function, a
local variable per slot::

    def run(arrays, xp):
        s0, s1, s2 = arrays
        k = 0
        s3 = f0(None, xp, s0, s1)          # (a step whose forward reads no context)
        k = 1
        ctx = Context(n1)                  # (one that saves arrays for a later step)
        y = f1(ctx, xp, s3, **p1)
        s5 = ctx.saved[0]
        s4 = y
        k = 2
        y, kept = f2(None, xp, s4)         # (a prepared fused line that hands its saved
        s7 = kept[0]                       # arrays back beside its result: PreparedKernel)
        s6 = y
        s3 = None                          # (read for the last time)
        ...
        return [s4, s6]

and compiled with Python's ``compile``: the same forwards called with the same
arguments in the same order, so the same results, bit for bit (each step's
result that NumPy hands back as a scalar is made a 0-d array, as the loop does;
an error of a step names its line as the loop's does).  A step that reads values
inside its settings (``params_have_refs``: a loss's targets, ``nll_loss(z,
target=v50)``, the indices of its backward's ``scatter_add``) gets them written
into its call, the tuples, lists and slices around them built again at each
call as the loop's ``_resolve`` builds them::

        y = f7(ctx, xp, s12, **{'target': s9, 'weight': c7_0, 'reduction': c7_1})

:func:`written_out` writes any program that takes no parameters by name; one
that does runs the loop.  ``tests/jit/test_jit_program_source.py`` compares the two on the
compiled GRU and attention steps and on random graphs.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from difflab.jit.graph import Ref, _expression, replay_error
from difflab.ops import registry

#: The longest program written out (a function of many thousand lines takes long to
#: compile, and its loop's cost is small beside its arithmetic anyway).
LONGEST = 2000


def written_out(program: Any) -> Callable | None:
    """The program as one function ``run(arrays, xp) -> outputs``, or None (the loop runs).

    Parameters
    ----------
    program : Program
        A :class:`~difflab.jit.program.Program` (its steps, slots and outputs).

    Returns
    -------
    callable or None
        ``run(arrays, xp)``: the arguments in order, the array module; returns the
        outputs as :meth:`~difflab.jit.program.Program.run` does.  None when the
        program takes parameters by name or has more than :data:`LONGEST` steps.

    Examples
    --------
    >>> import numpy as np, difflab as dl
    >>> from difflab import backend
    >>> from difflab.jit.program import Program
    >>> from difflab.jit.program_source import written_out
    >>> graph = dl.jit.trace(lambda x: (x * 2.0).sin().sum(), dl.tensor(np.zeros(3))).graph
    >>> program = Program(graph)
    >>> run = written_out(program)
    >>> x = np.array([0.0, 0.5, 1.0])
    >>> run([x], backend.numpy_namespace)[0].tobytes() == program.run([x])[0].tobytes()
    True
    """
    steps = program.steps
    if program.parameter_slots or len(steps) > LONGEST:
        return None
    namespace: dict[str, Any] = {"Context": registry.Context, "generic": np.generic,
                                 "asarray": np.asarray, "initial": program.initial,
                                 "_failed": _failed, "steps": steps, "graph": program.graph}
    lines = ["def run(arrays, xp):"]
    for j, slot in enumerate(program.argument_slots):
        lines.append(f"    s{slot} = arrays[{j}]")
    for slot, _ in program.constants:
        lines.append(f"    s{slot} = initial[{slot}]")
    lines.append("    k = -1")
    lines.append("    try:")
    for k, (forward, _, _, params, has_refs, needs, out, saved, free, step) in enumerate(
            program.loop):
        namespace[f"f{k}"] = forward
        values = []
        for j, (arg, is_slot) in enumerate(zip(step.args, step.kinds)):
            if is_slot:
                values.append(f"s{arg}")
            else:
                namespace[f"a{k}_{j}"] = arg
                values.append(f"a{k}_{j}")
        body = [f"k = {k}"]
        if needs is not None:
            namespace[f"n{k}"] = needs
            body.append(f"ctx = Context(n{k})")
            context = "ctx"
        else:
            context = "None"
        call = ", ".join([context, "xp"] + values)
        if has_refs:  # (the values read inside the settings: the loop's _resolve, written)
            constant = _namer(namespace, f"c{k}_")
            items = [f"{name!r}: {_resolved(value, program.slots, constant)}"
                     for name, value in params.items()]
            call += ", **{" + ", ".join(items) + "}"
        elif params:
            namespace[f"p{k}"] = params
            call += f", **p{k}"
        if saved and needs is None:  # (a prepared kernel: its saved arrays beside y)
            body.append(f"y, kept = f{k}({call})")
            kept = "kept"
        else:
            body.append(f"y = f{k}({call})")
            kept = "ctx.saved"
        for index, slot in saved:
            body.append(f"s{slot} = {kept}[{index}]")
        body.append("if isinstance(y, generic):")
        body.append("    y = asarray(y)")
        body.append(f"s{out} = y")
        for slot in free:
            body.append(f"s{slot} = None")
        lines += ["        " + line for line in body]
    if not steps:
        lines.append("        pass  # (a graph that returns its inputs or constants)")
    lines.append("    except (ValueError, TypeError, IndexError) as exc:")
    lines.append("        raise _failed(exc, graph, steps, k) from None")
    outputs = []
    for j, (is_slot, value) in enumerate(program.outputs):
        if is_slot:
            outputs.append(f"s{value}")
        else:
            namespace[f"o{j}"] = value
            outputs.append(f"o{j}")
    lines.append(f"    return [{', '.join(outputs)}]")
    source = "\n".join(lines)
    exec(compile(source, f"<program {program.graph.name}>", "exec"), namespace)  # noqa: S102
    run = namespace["run"]
    run.source = source
    return run


def _namer(namespace: dict, prefix: str) -> Callable[[Any], str]:
    """``constant(value)``: puts ``value`` into ``namespace`` under the next free name of
    ``prefix0``, ``prefix1``, ... and returns that name."""
    numbers = itertools.count()

    def constant(value: Any) -> str:
        name = f"{prefix}{next(numbers)}"
        namespace[name] = value
        return name
    return constant


def _resolved(value: Any, slots: dict, constant: Callable[[Any], str]) -> str:
    """The source of ``value`` with each ``Ref`` read from its slot's local variable, as
    :func:`~difflab.jit.graph._resolve` gives it: tuples, lists and slices built anew,
    anything else the very object (``constant(value)`` names it in the namespace)."""
    if isinstance(value, Ref):
        return f"s{slots[value.name]}"
    if isinstance(value, (tuple, list)):
        items = [_resolved(v, slots, constant) for v in value]
        if isinstance(value, list):
            return "[" + ", ".join(items) + "]"
        return "(" + "".join(item + ", " for item in items) + ")"
    if isinstance(value, slice):
        return "slice(" + ", ".join(_resolved(v, slots, constant)
                                    for v in (value.start, value.stop, value.step)) + ")"
    return constant(value)


def _failed(exc: Exception, graph: Any, steps: list, k: int) -> Exception:
    """The loop's error for step k (naming its line), or the error itself before any step."""
    if k < 0:
        return exc
    return replay_error(exc, f"graph {graph.name}, {_expression(steps[k].node)}")
