"""The two runners of a graph: the reference interpreter and the flat program agree bit for bit."""

import ast
import doctest
from pathlib import Path

import numpy as np
import pytest

import difflab as dl
from difflab import jit
from difflab.jit import graph as graph_module
from difflab.jit import program as program_module
from difflab.jit.program import Program, Step

rng = np.random.default_rng(3)


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert type(g) is type(w) and g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def _graphs():
    """A forward graph, its backward (saved arrays read by later nodes), fused, with params."""
    x, w = dl.tensor(rng.normal(size=(4, 3))), dl.tensor(rng.normal(size=3))
    forward = jit.trace(lambda a, b: ((a * b).sin().sum(dim=1) ** 2).relu(), (x, w)).graph
    backward = jit.grad(jit.trace(lambda a, b: ((a * b).tanh() * 0.5 + a).sum(),
                                  (x, w)).graph)
    fused = jit.optimize(backward, ["fold", "cse", "dce", "fuse"])
    model = dl.nn.Sequential(dl.nn.Linear(3, 5), dl.nn.ReLU(), dl.nn.Linear(5, 2))
    module = jit.trace(model, x).graph
    params = {name: p.array for name, p in model.named_parameters()}
    return [(forward, (x.array, w.array), {}), (backward, (x.array, w.array), {}),
            (fused, (x.array, w.array), {}), (module, (x.array,), params)]


@pytest.mark.parametrize("case", range(4), ids=["forward", "backward", "fused", "module"])
def test_the_reference_interpreter_and_the_program_agree_bit_for_bit(case):
    graph, arrays, named = _graphs()[case]
    for scale in (1.0, -2.5):  # (new values, not the traced ones)
        moved = [a * scale for a in arrays]
        _same(jit.interpret(graph, *moved, **named), graph.run(*moved, **named))
        _same(Program(graph, prepared=False).run(moved, named), graph.run(*moved, **named))


def test_the_reference_interpreter_refuses_a_missing_argument_or_parameter():
    graph, arrays, named = _graphs()[3]
    with pytest.raises(jit.GraphError, match="takes 1 arguments, got 0"):
        jit.interpret(graph)
    with pytest.raises(jit.GraphError, match="no value for parameter"):
        jit.interpret(graph, *arrays)


def test_a_program_step_is_a_named_record_built_whole():
    graph = _graphs()[1][0]
    steps = graph.program().steps
    assert all(isinstance(s, Step) for s in steps)
    assert [s.node for s in steps] == graph.nodes
    with pytest.raises(AttributeError):  # (frozen: nothing patches a step after it is made)
        steps[0].free = ()
    # every value but the outputs is dropped after its last reader
    freed = {slot for s in steps for slot in s.free}
    outputs = {slot for is_ref, slot in graph.program().outputs if is_ref}
    read = {graph.program().slots[r.name] for n in graph.nodes for r in n.refs()}
    assert freed == read - outputs


def test_the_ir_module_does_not_import_its_runner():
    """graph.py holds the IR; program.py imports it, never the other way (no import cycle)."""
    tree = ast.parse(Path(graph_module.__file__).read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "difflab.jit.program" not in imported
    assert jit.Graph.program_class is Program


@pytest.mark.parametrize("obj", [graph_module.interpret, program_module.Program],
                         ids=["interpret", "Program"])
def test_docstring_examples_run(obj):
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(obj, obj.__name__, globs={})
    assert tests and tests[0].examples
    for test in tests:
        runner.run(test)
    assert runner.failures == 0
