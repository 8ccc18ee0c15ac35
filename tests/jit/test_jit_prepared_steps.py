"""Prepared plain steps (fastpath shortcut 14): the same bits as each primitive's forward."""

import doctest

import numpy as np
import pytest

import difflab as dl
from difflab import jit
from difflab.jit import prepared_steps
from difflab.jit.fusion import USE_NUMBA
from difflab.jit.program import Program

rng = np.random.default_rng(12)

# name -> (function traced, argument shapes): each graph holds the primitive named
CASES = {
    "sum": (lambda x: x.sum(dim=(0, 2)), [(3, 4, 5)]),
    "sum_all": (lambda x: x.sum(), [(3, 4)]),
    "sum_keepdims": (lambda x: x.sum(dim=-1, keepdim=True), [(3, 4)]),
    "mean": (lambda x: x.mean(dim=(0, 2)), [(3, 4, 5)]),
    "mean_all": (lambda x: x.mean(), [(3, 4)]),
    "mean_keepdims": (lambda x: x.mean(dim=1, keepdim=True), [(3, 7)]),
    "linear": (lambda x, w, b: dl.nn.functional.linear(x, w, b), [(2, 3, 4), (5, 4), (5,)]),
    "linear_nobias": (lambda x, w: dl.nn.functional.linear(x, w), [(3, 4), (5, 4)]),
    # (96 rows: the bias added by row_kernels' loop, where numba is loaded)
    "linear_rows": (lambda x, w, b: dl.nn.functional.linear(x, w, b), [(8, 12, 32), (96, 32),
                                                                       (96,)]),
    "softmax": (lambda x: dl.softmax(x, -1), [(2, 3, 12)]),
    "softmax_middle": (lambda x: dl.softmax(x, 1), [(2, 5, 3)]),
    "reshape": (lambda x: x.reshape(-1, 2), [(3, 4)]),
    "permute": (lambda x: x.permute(2, 0, 1), [(2, 3, 4)]),
    "matmul": (lambda a, b: a @ b, [(2, 3, 4), (4, 5)]),
    "index": (lambda x: x[:, -1], [(3, 4, 2)]),
    "add": (lambda a, b: a + b, [(3, 4), (4,)]),
    "cat": (lambda a, b, c: dl.cat([a, b, c], 1), [(3, 4), (3, 2), (3, 5)]),
}


def _graph(case, dtype=np.float64):
    fn, shapes = CASES[case]
    arrays = [rng.normal(size=s).astype(dtype) for s in shapes]
    graph = jit.trace(fn, tuple(dl.tensor(a) for a in arrays)).graph
    return graph, arrays


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_prepared_step_gives_its_primitives_bits(case):
    graph, arrays = _graph(case)
    prepared, plain = Program(graph, prepared=True), Program(graph, prepared=False)
    # (the test exercises a prepared forward: one step has one)
    primitive = case.split("_")[0]
    (step,) = [s for s in prepared.steps if s.node.op_name == primitive]
    assert step.forward is not step.node.op.forward and step.params == {}
    # it takes no ctx: the program passes None (no Context made for it)
    (entry,) = [e for e in prepared.loop if e[-1] is step]
    assert step.forward.needs_context is False and entry[5] is None
    for got, want in zip(prepared.run(arrays), plain.run(arrays)):
        assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape
        assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("case", ["sum", "mean", "add", "matmul", "linear", "linear_nobias",
                                  "linear_rows", "cat"])
def test_another_dtype_takes_the_primitives_own_forward(case):
    """A program traced for float64 fed float32 (run unchecked) gives the plain result."""
    graph, arrays = _graph(case)
    prepared, plain = Program(graph, prepared=True), Program(graph, prepared=False)
    small = [a.astype(np.float32) for a in arrays]
    for got, want in zip(prepared.run(small, check=False), plain.run(small, check=False)):
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def test_softmax_of_special_values_gives_the_primitives_bits():
    """NaN, ±inf, rows whose largest entry is +0 or -0 (either may be the shift)."""
    graph, _ = _graph("softmax")
    x = rng.normal(size=(2, 3, 12))
    x[0, 0, 3] = np.nan
    x[0, 1, :] = -np.inf
    x[0, 2, 5] = np.inf
    x[1, 0, :] = -1.0
    x[1, 0, [2, 7]] = [0.0, -0.0]
    x[1, 1, :] = -0.0
    x[1, 2, :] = 0.0
    x[1, 2, ::2] = -0.0
    with np.errstate(invalid="ignore"):  # (inf - inf: NaN, in both)
        got = Program(graph, prepared=True).run([x])[0]
        want = Program(graph, prepared=False).run([x])[0]
    assert got.tobytes() == want.tobytes()


def test_integer_sums_keep_numpys_promotion():
    """np.sum of int8 gives int64: the prepared step is made for the node's dtype only."""
    x = np.arange(12, dtype=np.int8).reshape(3, 4)
    graph = jit.trace(lambda t: t.sum(dim=0), dl.tensor(x)).graph
    got = Program(graph, prepared=True).run([x])[0]
    want = Program(graph, prepared=False).run([x])[0]
    assert got.dtype == want.dtype and (got == want).all()


def test_a_step_whose_saved_arrays_are_read_keeps_the_primitives_forward():
    """A graph that returns matmul's saved operand: that step must save it, so it keeps
    the primitive's forward."""
    graph, arrays = _graph("matmul")
    (node,) = graph.nodes
    a, b = graph.arguments()
    saving = type(node)(node.name, node.op, node.args, node.params, node.shape, node.dtype,
                        (True, True), ((tuple(a.shape), a.dtype), (tuple(b.shape), b.dtype)))
    graph = jit.Graph(graph.name, graph.inputs, graph.constants, [saving],
                      [jit.graph.Ref(node.name), jit.graph.Ref(f"{node.name}.s1")])
    (step,) = Program(graph, prepared=True).steps
    assert step.saved_slots and step.forward is node.op.forward
    got = Program(graph, prepared=True).run(arrays)
    assert got[0].tobytes() == (arrays[0] @ arrays[1]).tobytes() and got[1] is arrays[1]


def test_an_index_by_an_array_is_not_prepared():
    graph, _ = _graph("index")
    (node,) = [n for n in graph.nodes if n.op_name == "index"]
    assert prepared_steps.prepared_forward(node, (3, 4, 2)) is not None
    by_array = type(node)(node.name, node.op, node.args, {"index": np.array([0, 2])},
                          node.shape, node.dtype, node.needs_input_grad, node.saved)
    assert prepared_steps.prepared_forward(by_array, (3, 4, 2)) is None


@pytest.mark.parametrize("loss", [
    lambda z, y: dl.nn.functional.cross_entropy(z, y),
    lambda z, y: dl.nn.functional.cross_entropy(z, y, reduction="sum", ignore_index=2),
    lambda z, y: dl.nn.functional.cross_entropy(z, y, weight=dl.tensor([1.0, 2.0, 0.5])),
], ids=["mean", "sum_ignored", "weighted"])
def test_a_compiled_loss_s_steps_that_read_values_give_their_primitives_bits(loss):
    """``nll_loss`` reads its targets inside its settings, the backward's ``scatter_add``
    its indices: prepared too (a weighted loss takes the primitive's own forward)."""
    w = dl.tensor(rng.normal(size=(3, 5)), requires_grad=True)
    compiled = dl.compile(lambda x, t: loss(x @ w.T, t))
    x, y = rng.normal(size=(6, 5)), np.array([0, 2, 1, 1, 0, 2])
    compiled(dl.tensor(x), dl.tensor(y)).backward()
    (entry,) = compiled.cache.values()
    prepared = Program(entry.forward, prepared=True)
    reading = [s for s in prepared.steps if s.params_have_refs]
    assert {s.node.op_name for s in reading} == {"nll_loss", "scatter_add"}
    # (their loops are numba's: without it, the primitives' own forwards)
    assert [s.forward is not s.node.op.forward for s in reading] == [USE_NUMBA] * 2
    arrays = [x, y, w.detach().numpy()]
    for targets in (y, np.array([2, 2, 2, 0, 1, 0])):
        arrays[1] = targets
        got, want = prepared.run(arrays), Program(entry.forward, prepared=False).run(arrays)
        for a, b in zip(got, want):
            assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    with pytest.raises(IndexError, match="holds class 3"):  # (out of range: the check's
        prepared.run([x, np.array([0, 1, 2, 3, 0, 1]), arrays[2]])  # own error)


def test_docstring_examples_run():
    assert doctest.testmod(prepared_steps).failed == 0
