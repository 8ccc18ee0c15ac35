"""Graph passes: each one alone, and all together, change no number (random graphs)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import difflab as dl
from difflab import jit

UNARY = ["sin", "tanh", "neg", "abs", "relu", "cos"]
BINARY = ["add", "sub", "maximum", "mul_sin"]  # mul_sin: sin(a * b), bounded


def _apply(op, a, b):
    if op in UNARY:
        return getattr(dl, op)(a) if op != "neg" else -a
    if op == "add":
        return a + b
    if op == "sub":
        return a - b
    if op == "maximum":
        return dl.maximum(a, b)
    if op == "sum":
        return a.sum(dim=0, keepdim=True) * b
    if op == "sum_all":  # a whole-array sum (a fused kernel's running total)
        return a.sum() * b
    if op == "mean":
        return (a * 2.0).mean() + b
    if op == "window":  # slices (read in place by a kernel; scatter_add in the backward)
        return (a[1:] * b[:-1]).tanh().sum() + a[2:].sin().mean() * b
    return dl.sin(a * b)


REDUCING = ["sum", "sum_all", "mean", "window"]
step = st.tuples(st.sampled_from(UNARY + BINARY + REDUCING + ["const"]),
                 st.integers(0, 100), st.integers(0, 100), st.floats(-2, 2))


@st.composite
def programs(draw):
    steps = draw(st.lists(step, min_size=1, max_size=25))
    # Repeat some steps word for word: common subexpressions for cse to find.
    repeats = draw(st.lists(st.integers(0, len(steps) - 1), max_size=5))
    steps += [steps[i] for i in repeats]
    outputs = draw(st.lists(st.integers(0, 100), min_size=1, max_size=3))
    return steps, outputs


def build(steps, outputs):
    """A function of x, y running the program; constants are captured tensors."""
    constants = {}

    def fn(x, y):
        values = [x, y]
        for k, (op, i, j, c) in enumerate(steps):
            a, b = values[i % len(values)], values[j % len(values)]
            if op == "const":
                # a captured tensor (so fold has something to fold), the same each call
                const = constants.setdefault(k, dl.tensor(np.full(3, c)))
                values.append(const * 0.5 + c)
            else:
                values.append(_apply(op, a, b))
        return tuple(values[o % len(values)] for o in outputs)

    return fn


@pytest.mark.parametrize("passes", [["dce"], ["cse"], ["fold"], ["fold", "cse", "dce"],
                                    ["cse", "fold", "dce", "cse"], ["pick", "dce"]])
@given(program=programs(), seed=st.integers(0, 2**31))
def test_passes_preserve_results_on_random_graphs(passes, program, seed):
    fn = build(*program)
    rng = np.random.default_rng(seed)
    x, y = (dl.tensor(rng.uniform(-2, 2, 3)) for _ in range(2))
    graph = jit.trace(fn, (x, y)).graph
    optimized = jit.optimize(graph, passes)
    assert len(optimized.nodes) <= len(graph.nodes)
    for _ in range(2):
        a, b = rng.uniform(-2, 2, 3), rng.uniform(-2, 2, 3)
        want = graph.run(a, b)
        got = optimized.run(a, b)
        for w, g in zip(want, got):
            np.testing.assert_array_equal(g, w)  # the same operations: the same bits
        eager = fn(dl.tensor(a), dl.tensor(b))
        for e, g in zip(eager, got):
            np.testing.assert_array_equal(g, e.numpy())


def test_each_pass_does_its_job_and_shows_before_and_after(capsys):
    c = dl.tensor(np.array([1.0, 2.0, 3.0]))  # float64, as x: no cast in the graph

    def f(x):
        unused = x.cos()  # noqa: F841  (dead code)
        return x.sin() * x.sin() + (c * 2).exp()

    graph = jit.trace(f, dl.tensor(np.ones(3))).graph
    assert graph.op_counts() == {"cos": 1, "sin": 2, "mul": 2, "exp": 1, "add": 1}
    assert "cos" not in jit.dead_code_elimination(graph).op_counts()
    assert jit.common_subexpression_elimination(graph).op_counts()["sin"] == 1
    folded = jit.constant_folding(graph, show=True)
    assert "exp" not in folded.op_counts() and folded.op_counts()["mul"] == 1
    out = capsys.readouterr().out
    assert "--- before constant folding: 7 nodes" in out
    assert "--- after constant folding: 5 nodes" in out
    assert len(graph.nodes) == 7  # the original is untouched


def test_optimize_rejects_an_unknown_pass():
    graph = jit.trace(lambda x: x + 1, dl.tensor(np.ones(2))).graph
    with pytest.raises(jit.GraphError,
                       match="no graph pass named 'vectorize'.*fold, cse, dce, fuse"):
        jit.optimize(graph, ["vectorize"])


def test_passes_shrink_a_backward_graph_and_keep_its_numbers():
    # tanh(x @ w) is written twice: its forward and its derivative repeat
    f = jit.trace(lambda x, w: (dl.tanh(x @ w) * dl.tanh(x @ w)).sum(),
                  (dl.tensor(np.ones((4, 3))), dl.tensor(np.ones((3, 2)))))
    g = jit.grad(f.graph)
    small = jit.optimize(g)
    assert len(small.nodes) < len(g.nodes)
    rng = np.random.default_rng(3)
    args = rng.normal(size=(4, 3)), rng.normal(size=(3, 2))
    for a, b in zip(g.run(*args), small.run(*args)):
        np.testing.assert_array_equal(a, b)


def test_traced_function_applies_passes_to_each_trace():
    f = jit.trace(lambda x: x.sin() + x.sin(), dl.tensor(np.ones(2)), passes=["cse"])
    assert f.graph.op_counts() == {"sin": 1, "add": 1}
    np.testing.assert_allclose(f(dl.tensor([0.5, 1.0])).numpy(), 2 * np.sin([0.5, 1.0]))


def test_fold_drops_multiplications_by_ones_only_where_nothing_changes():
    x0 = np.array([0.3, -1.2, 2.0])
    f = jit.trace(lambda x, w: (x * w).sin().sum(),
                  (dl.tensor(x0).requires_grad_(), dl.tensor(x0).requires_grad_()))
    backward = jit.grad(f.graph)  # its sum's adjoint is a constant of ones times cos(x w)
    folded = jit.constant_folding(backward)
    assert backward.op_counts()["mul"] - folded.op_counts()["mul"] == 1
    x, w = np.array([0.5, np.nan, -0.0]), np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(folded.run(x, w)[1], backward.run(x, w)[1])
    # Kept: a product that broadcasts (its shape is not x's).
    ones = jit.trace(lambda v: v * dl.ones(2, 3, dtype=dl.float64),
                     dl.tensor(np.ones(3))).graph
    assert jit.constant_folding(ones).op_counts() == {"mul": 1}


def test_fold_drops_reshapes_to_the_shape_a_value_has_and_joins_reshapes_of_reshapes():
    x = np.arange(6.0).reshape(2, 3)
    round_trip = jit.trace(lambda v: v.reshape(2, 3, 1).reshape(2, 3).sin(),
                           dl.tensor(x)).graph
    folded = jit.optimize(round_trip, ["fold", "dce"])
    assert folded.op_counts() == {"sin": 1}  # (dce drops the first, read by nothing now)
    np.testing.assert_array_equal(folded.run(x)[0], round_trip.run(x)[0])
    twice = jit.trace(lambda v: v.reshape(6).reshape(3, 2).sin(), dl.tensor(x)).graph
    joined = jit.optimize(twice, ["fold", "dce"])
    assert joined.op_counts() == {"reshape": 1, "sin": 1}
    (reshape,) = [n for n in joined.nodes if n.op_name == "reshape"]
    assert reshape.args[0].name == "v"  # (it reads x itself)
    np.testing.assert_array_equal(joined.run(x)[0], np.sin(x.reshape(3, 2)))
    # Not joined: a reshape of a transposed value (the elements are in another order).
    kept = jit.trace(lambda v: v.reshape(3, 2).T.reshape(6), dl.tensor(x)).graph
    assert jit.constant_folding(kept).op_counts() == kept.op_counts()
