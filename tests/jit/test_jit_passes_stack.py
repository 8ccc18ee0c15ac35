"""The ``stack`` pass: sums of products aₜᵀ bₜ (and row sums) become one product, to 1e-12."""

import doctest

import numpy as np
import pytest

import difflab as dl
from difflab import jit
from difflab.jit import passes_stack
from difflab.jit.passes_stack import stack_products

rng = np.random.default_rng(11)


def _backward(fn, *shapes):
    xs = [dl.tensor(rng.normal(size=s)) for s in shapes]
    return jit.optimize(jit.grad(jit.trace(fn, tuple(xs)).graph), ["fold", "cse", "dce"])


def _ops(graph):
    return [n.op_name for n in graph.nodes]


def _close(before, after):
    args = [rng.normal(size=i.shape) for i in before.arguments()]
    for p, q in zip(before.run(*args), after.run(*args)):
        assert p.shape == q.shape and p.dtype == q.dtype
        np.testing.assert_allclose(q, p, rtol=1e-12, atol=1e-15)


def _recurrent(w, b, steps=4):
    h = dl.tensor(np.linspace(-1.0, 1.0, 15).reshape(5, 3))
    for _ in range(steps):
        h = (h @ w + b).tanh()
    return h.sum()


STACKED = {
    "recurrent weight and bias": (_recurrent, (3, 3), (3,)),
    "a linear layer on three inputs": (
        lambda w, b: sum(dl.nn.functional.linear(dl.tensor(np.full((2, 3), k)), w, b).sin()
                         .sum() for k in (0.1, 0.2, 0.3)), (4, 3), (4,)),
}


@pytest.mark.parametrize("case", list(STACKED))
def test_a_sum_over_steps_becomes_one_product_to_1e_12(case):
    fn, *shapes = STACKED[case]
    graph = _backward(fn, *shapes)
    stacked = stack_products(graph)
    assert _ops(stacked).count("matmul") < _ops(graph).count("matmul")
    assert "cat" in _ops(stacked) and len(stacked.nodes) < len(graph.nodes)
    _close(graph, stacked)


def test_a_linear_layers_bias_gradient_is_one_row_sum():
    fn, *shapes = STACKED["a linear layer on three inputs"]
    graph = _backward(fn, *shapes)
    stacked = jit.optimize(stack_products(graph), ["cse", "dce"])
    sums = [n for n in stacked.nodes if n.op_name == "sum" and n.params["axis"] == 0]
    assert len([n for n in graph.nodes if n.op_name == "sum" and n.params["axis"] == 0]) == 3
    assert len(sums) == 1
    # the weight's and the bias's stacked adjoints are one concatenation after cse
    (cat,) = [n for n in stacked.nodes if n.op_name == "cat" and n.args == sums[0].args
              or jit.graph.Ref(n.name) in sums[0].args]
    assert sum(jit.graph.Ref(cat.name) in n.args for n in stacked.nodes) == 2
    _close(graph, stacked)


LEFT = {
    "one step": (lambda w, b: (dl.tensor(np.ones((2, 3))) @ w + b).tanh().sum(), (3, 3), (3,)),
    "products and sums mixed": (lambda w, b: ((dl.tensor(np.ones((2, 3))) @ w).tanh() @ b)
                                .sum() + (w.sum(dim=0) @ b).sum(), (3, 3), (3, 3)),
}


@pytest.mark.parametrize("case", list(LEFT))
def test_other_sums_are_left_as_they_are(case):
    fn, *shapes = LEFT[case]
    graph = _backward(fn, *shapes)
    stacked = stack_products(graph)
    _close(graph, stacked)
    if case == "one step":
        assert stacked is graph


def test_a_partial_sum_read_elsewhere_is_not_stacked():
    graph = _backward(_recurrent, (3, 3), (3,))
    adds = [n for n in graph.nodes if n.op_name == "add" and tuple(n.shape) == (3, 3)]
    also = jit.Graph(graph.name, graph.inputs, graph.constants, graph.nodes,
                     list(graph.outputs) + [jit.graph.Ref(adds[0].name)])
    stacked = stack_products(also)
    # (the first two terms are still stacked into that partial sum; the adds after it stay)
    assert adds[0].name in [n.name for n in stacked.nodes]
    assert all(a in stacked.nodes for a in adds[1:])
    _close(also, stacked)


def test_the_pass_is_named_stack_and_a_default_of_compile():
    from difflab.jit.joint import DEFAULT_PASSES

    graph = _backward(_recurrent, (3, 3), (3,))
    assert "cat" in _ops(jit.optimize(graph, ["stack"]))
    assert "stack" in DEFAULT_PASSES and "cse" in DEFAULT_PASSES[DEFAULT_PASSES.index("stack"):]


def test_docstring_examples_run():
    assert doctest.testmod(passes_stack).failed == 0
