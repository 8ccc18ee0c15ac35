"""The ``join`` pass: sums of scatters of disjoint slices become one concatenation."""

import doctest

import numpy as np
import pytest

import difflab as dl
import difflab.nn.functional as F
from difflab import jit
from difflab.jit import passes_scatter
from difflab.jit.passes_scatter import join_scatters

rng = np.random.default_rng(7)


def _backward(fn, shape):
    x = rng.normal(size=shape)
    graph = jit.optimize(jit.grad(jit.trace(fn, dl.tensor(x)).graph), ["fold", "cse", "dce"])
    return graph, x


def _ops(graph):
    return [n.op_name for n in graph.nodes]


def b_args(graph):
    return [rng.normal(size=i.shape) for i in graph.arguments()]


JOINED = {
    "rows (integers)": (lambda x: (x[0] * x[1] * x[2]).sum(), (3, 4)),
    "columns (integers)": (lambda x: (x[:, 0] * x[:, 1].sin()).sum(), (4, 2)),
    "thirds (slices)": (lambda x: (x[:2] * x[2:4] * x[4:].exp()).sum(), (6, 3)),
    "time steps": (lambda x: sum((x[:, t] * (t + 1.0)).tanh() for t in range(5)).sum(),
                   (2, 5, 3)),
}


@pytest.mark.parametrize("case", list(JOINED))
def test_disjoint_scatters_become_one_concatenation_with_the_same_numbers(case):
    graph, _ = _backward(*JOINED[case])
    joined = join_scatters(graph)
    assert "scatter_add" in _ops(graph) and "scatter_add" not in _ops(joined)
    assert _ops(joined).count("cat") == 1
    args = b_args(graph)
    for p, q in zip(graph.run(*args), joined.run(*args)):
        assert p.shape == q.shape and p.dtype == q.dtype
        np.testing.assert_array_equal(p, q)


LEFT = {
    "overlapping slices add up": (lambda x: (x[:3] * x[1:].sin()).sum(), (4, 2)),
    "a gap is zeros": (lambda x: (x[0] * x[2]).sum(), (3, 2)),
    "two axes indexed": (lambda x: (x[0, 1:] * x[1, :2]).sum(), (2, 3)),
    "a step": (lambda x: (x[::2] * x[1::2]).sum(), (4, 2)),
}


@pytest.mark.parametrize("case", list(LEFT))
def test_other_scatters_are_left_as_they_are(case):
    graph, _ = _backward(*LEFT[case])
    assert "scatter_add" in _ops(graph)
    assert join_scatters(graph) is graph


def test_a_partial_sum_read_elsewhere_is_not_joined():
    """The sum of two scatters is an output too: its adds must stay."""
    graph, _ = _backward(lambda x: (x[0] * x[1] * x[2]).sum(), (3, 4))
    (first_add,) = [n for n in graph.nodes if n.op_name == "add"][:1]
    also = jit.Graph(graph.name, graph.inputs, graph.constants, graph.nodes,
                     list(graph.outputs) + [jit.graph.Ref(first_add.name)])
    joined = join_scatters(also)
    assert first_add in joined.nodes
    args = b_args(also)
    for p, q in zip(also.run(*args), joined.run(*args)):
        np.testing.assert_array_equal(p, q)


def test_a_negative_zero_stays_negative_equal_as_a_number():
    graph, _ = _backward(lambda x: (x[0] * x[1] * x[2]).sum(), (3, 2))
    x = np.array([[1.0, -0.0], [1.0, 1.0], [-0.0, 1.0]])
    before, after = graph.run(x)[1], join_scatters(graph).run(x)[1]
    assert (before == after).all()
    # x̄[0, 0] = x[1, 0] · x[2, 0] = 1 · -0: the adds made it +0, the concatenation keeps -0
    assert after[0, 0] == 0 and np.signbit(after[0, 0]) and not np.signbit(before[0, 0])


def test_the_pass_is_named_join_and_a_default_of_compile():
    graph, _ = _backward(*JOINED["rows (integers)"])
    assert "scatter_add" not in _ops(jit.optimize(graph, ["join"]))
    from difflab.jit.joint import DEFAULT_PASSES
    assert "join" in DEFAULT_PASSES


def _attention_training(compiled, steps=3):
    dl.manual_seed(3)
    attention = dl.nn.MultiheadAttention(8, 2, batch_first=True).double()
    head = dl.nn.Linear(8, 3).double()

    class Block(dl.nn.Module):
        def __init__(self):
            super().__init__()
            self.attention, self.head = attention, head

        def forward(self, x):
            a, _ = self.attention(x, x, x, need_weights=False)
            return self.head((x + a).mean(1))
    block = Block()
    run = dl.compile(block) if compiled else block
    opt = dl.optim.Adam(block.parameters(), lr=0.05)
    x = dl.tensor(np.random.default_rng(2).normal(size=(2, 4, 8)))
    y = dl.tensor(np.array([0, 2]))
    for _ in range(steps):
        opt.zero_grad()
        F.cross_entropy(run(x), y).backward()
        opt.step()
    if compiled:  # (the test exercises the pass: the thirds' scatters were joined)
        (graphs,) = run._compiled.cache.values()
        assert "cat" in _ops(graphs.backward) and "scatter_add" not in _ops(graphs.backward)
    return [p.detach().numpy().copy() for p in block.parameters()]


def test_compiled_attention_training_equals_eager():
    """The packed projection's adjoint is joined from its thirds (a concatenation)."""
    for got, want in zip(_attention_training(True), _attention_training(False)):
        np.testing.assert_array_equal(got, want)


def test_docstring_examples_run():
    assert doctest.testmod(passes_scatter).failed == 0


def test_a_slice_of_other_numbers_is_left():
    """A slice bound that is not a Python int (a stand-in's, a NumPy integer) is not read."""
    graph, _ = _backward(*JOINED["thirds (slices)"])
    nodes = [type(n)(n.name, n.op, n.args, {**n.params, "index": slice(np.int64(0),
                                                                      np.int64(2))},
                     n.shape, n.dtype, n.needs_input_grad, n.saved)
             if n.op_name == "scatter_add" and n.params["index"] == slice(None, 2) else n
             for n in graph.nodes]
    odd = jit.Graph(graph.name, graph.inputs, graph.constants, nodes, graph.outputs)
    assert join_scatters(odd) is odd
