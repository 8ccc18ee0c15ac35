"""The ``pick`` pass: a slice of a concatenation reads its piece; zeros added are dropped."""

import doctest

import numpy as np
import pytest

import difflab as dl
from difflab import jit
from difflab.jit import passes_pick

rng = np.random.default_rng(11)


def _ops(graph):
    return [n.op_name for n in graph.nodes]


def _same(graph, other, args):
    for p, q in zip(graph.run(*args), other.run(*args)):
        assert p.shape == q.shape and p.dtype == q.dtype
        np.testing.assert_array_equal(q, p)


def _picked(graph):
    return jit.optimize(graph, ["pick", "dce"])


def steps(x):
    """Four "time steps" of x (3, 2), stacked along axis 1 as a batch-first RNN does."""
    return dl.stack([(x * (t + 1.0)).sin() for t in range(4)], dim=1)


PICKED = {
    "the last step (out[:, -1])": (lambda x: steps(x)[:, -1] * 2.0, (3, 2)),
    "a middle step, kept as a slice": (lambda x: steps(x)[:, 1:2] * 2.0, (3, 2)),
    "a row of a cat": (lambda x: dl.cat([x.sin(), x.cos(), x.exp()])[4] * 2.0, (3, 2)),
    "a slice inside one piece": (lambda x: dl.cat([x.sin(), x.cos()])[3:5] * 2.0, (3, 2)),
    "through a transpose": (lambda x: steps(x).permute(1, 0, 2)[2] * 2.0, (3, 2)),
}


@pytest.mark.parametrize("case", list(PICKED))
def test_a_slice_of_a_concatenation_reads_its_piece_with_the_same_bits(case):
    fn, shape = PICKED[case]
    x = rng.normal(size=shape)
    graph = jit.trace(fn, dl.tensor(x)).graph
    picked = _picked(graph)
    assert "cat" in _ops(graph) and "cat" not in _ops(picked)
    assert len(picked.nodes) < len(graph.nodes)
    _same(graph, picked, [x])
    np.testing.assert_array_equal(picked.run(x)[0], fn(dl.tensor(x)).numpy())


LEFT = {
    "a slice across two pieces": lambda x: dl.cat([x.sin(), x.cos()])[2:4] * 2.0,
    "a step": lambda x: dl.cat([x.sin(), x.cos()])[::2] * 2.0,
    "an index array": lambda x: dl.cat([x.sin(), x.cos()])[[0, 4]] * 2.0,
    # the kept axes change their order: the piece's elements would come out transposed
    "axes reordered": lambda x: steps(x).permute(2, 1, 0)[:, 1] * 2.0,
}


@pytest.mark.parametrize("case", list(LEFT))
def test_a_slice_that_is_not_inside_one_piece_in_order_is_left_as_it_is(case):
    x = rng.normal(size=(3, 2))
    graph = jit.trace(LEFT[case], dl.tensor(x)).graph
    picked = _picked(graph)
    assert _ops(picked) == _ops(graph)
    _same(graph, picked, [x])


def _backward(fn, shape):
    x = rng.normal(size=shape)
    graph = jit.optimize(jit.grad(jit.trace(fn, dl.tensor(x)).graph), ["fold", "cse", "dce"])
    return graph, x


def recurrence(x):
    """Four states of a recurrence, each read by the next and by the stack; the last one
    picked (``out[:, -1]``), as a GRU's output."""
    h, states = x, []
    for _ in range(4):
        h = (h * 0.5).sin()
        states.append(h)
    return dl.stack(states, dim=1)[:, -1] * 3.0


def _compiled_backward(fn, shape):
    """The backward graph ``dl.compile`` cuts from ``fn``'s trace, before the passes (its
    cotangent an input, as in training), and arguments for it."""
    f = dl.compile(fn, backend="aot_eager")
    f(dl.tensor(rng.normal(size=shape), requires_grad=True))
    graph = next(iter(f.cache.values())).backward
    return graph, [rng.normal(size=i.shape) for i in graph.arguments()]


def test_the_backward_of_a_picked_step_reads_the_adjoint_and_drops_the_zeros():
    # out[:, -1] of the stacked states: its adjoint scattered into zeros and cut into
    # four states' again, three of them zeros added to the adjoint from the next state
    graph, args = _compiled_backward(recurrence, (3, 2))
    picked = jit.optimize(graph, ["pick", "dce"])
    assert "scatter_add" in _ops(graph) and "scatter_add" not in _ops(picked)
    assert _ops(graph).count("add") == 3 and "add" not in _ops(picked)
    _same(graph, picked, args)


def test_a_slice_partly_inside_a_scatter_s_region_is_left_as_it_is():
    # the cat's adjoint cut in halves [0:2], [2:4]: each straddles the scattered [1:3]
    graph, x = _backward(lambda x: (dl.cat([x, x])[1:3] * 3.0).sin().sum(), (2, 2))
    left = jit.optimize(graph, ["pick", "dce"])
    assert _ops(left) == _ops(graph)
    _same(graph, left, [x])


def test_a_negative_zero_added_to_zeros_stays_negative_equal_as_a_number():
    graph, _ = _compiled_backward(recurrence, (2,))
    # the cotangent -0 in x̄[0] (the states 0.5, where cos > 0): each state's adjoint
    # is -0 there, which the adds of the zeros made +0
    names = [i.name for i in graph.arguments()]
    args = [np.array([-0.0, 1.0]) if name == "g0" else np.full(2, 0.5) for name in names]
    before, after = graph.run(*args)[0], jit.optimize(graph, ["pick", "dce"]).run(*args)[0]
    assert (before == after).all()
    assert not np.signbit(before[0]) and np.signbit(after[0])


def test_reshapes_of_reshapes_and_a_cat_of_unit_pieces_merged_by_a_reshape():
    def fn(x):
        pieces = [(x * (t + 1.0)).tanh().reshape(1, 3, 2) for t in range(3)]
        return dl.cat(pieces, 0).reshape(9, 2).reshape(9, 2) * 2.0
    x = rng.normal(size=(3, 2))
    graph = jit.trace(fn, dl.tensor(x)).graph
    picked = _picked(graph)
    assert "reshape" in _ops(graph) and "reshape" not in _ops(picked)
    assert _ops(picked).count("cat") == 1
    _same(graph, picked, [x])


def test_the_pass_is_named_pick_and_a_default_of_compile():
    from difflab.jit.joint import DEFAULT_PASSES
    assert "pick" in DEFAULT_PASSES
    assert DEFAULT_PASSES.index("pick") < DEFAULT_PASSES.index("dce")


def _gru_graphs():
    dl.manual_seed(2)

    class Recurrent(dl.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn, self.head = dl.nn.GRU(3, 4, batch_first=True), dl.nn.Linear(4, 2)

        def forward(self, x):
            out, _ = self.rnn(x)
            return self.head(out[:, -1])
    net = dl.compile(Recurrent().double())
    net(dl.tensor(rng.normal(size=(2, 5, 3))))
    return next(iter(net._compiled.cache.values()))


def test_a_compiled_gru_that_reads_its_last_state_builds_no_output_sequence():
    entry = _gru_graphs()
    forward, backward = _ops(entry.forward), _ops(entry.backward)
    assert "cat" not in forward and "permute" not in forward[1:]
    assert "scatter_add" not in backward and "index" not in backward


def test_docstring_examples_run():
    assert doctest.testmod(passes_pick).failed == 0
