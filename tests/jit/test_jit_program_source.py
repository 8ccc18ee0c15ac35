"""A program written out as one function (jit.program_source) runs the loop's steps: the
same bits, the same errors; and which programs are written out."""

import doctest

import numpy as np
import pytest

import difflab as dl
import difflab.nn.functional as F
from difflab import backend, jit
from difflab.jit import program_source
from difflab.jit.graph import GraphError
from difflab.jit.program import Program
from difflab.jit.program_source import written_out

rng = np.random.default_rng(6)


def _loop(graph):
    program = Program(graph)
    program._write = False  # (the loop, as before the first run writes the function)
    return program


def _same(graph, arrays):
    want = _loop(graph).run(arrays)
    run = written_out(Program(graph))
    assert run is not None
    got = run(arrays, backend.numpy_namespace)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert type(g) is type(w) and g.dtype == w.dtype and g.shape == w.shape
        assert g.tobytes() == w.tobytes()


def _compiled_graphs(make, shape):
    dl.manual_seed(0)
    model = make().double()
    net = dl.compile(model)
    x = dl.tensor(rng.normal(size=shape))
    F.cross_entropy(net(x), dl.tensor(np.array([0, 1]))).backward()
    entry = next(iter(net._compiled.cache.values()))
    return entry.forward, entry.backward


class _Recurrent(dl.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn, self.head = dl.nn.GRU(3, 4, batch_first=True), dl.nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.rnn(x)[0][:, -1])


class _Attention(dl.nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = dl.nn.MultiheadAttention(8, 2, batch_first=True)
        self.norm, self.head = dl.nn.LayerNorm(8), dl.nn.Linear(8, 2)

    def forward(self, x):
        return self.head(self.norm(x + self.attention(x, x, x, need_weights=False)[0]).mean(1))


@pytest.mark.parametrize("make, shape", [(_Recurrent, (2, 5, 3)), (_Attention, (2, 6, 8))],
                         ids=["gru", "attention"])
def test_a_compiled_training_step_s_graphs_give_the_loop_s_bits(make, shape):
    for graph in _compiled_graphs(make, shape):  # (forward, then backward: saved arrays)
        arrays = [rng.normal(size=i.shape) for i in graph.arguments()]
        _same(graph, arrays)


@pytest.mark.parametrize("fn", [
    lambda x: ((x * 2.0).sin() + 1.0).exp().sum(),  # (literals among the arguments)
    lambda x: x[1:].cumsum(0).max() * x.mean(),  # (a 0-d result NumPy gives as a scalar)
    lambda x: (x[:2] * x[2:]).tanh().sum(),  # (slices: scatters in the backward)
])
def test_small_graphs_and_their_gradients_give_the_loop_s_bits(fn):
    x = rng.normal(size=(4, 3))
    graph = jit.trace(fn, dl.tensor(x)).graph
    _same(graph, [x])
    _same(jit.grad(graph), [x])
    _same(jit.trace(lambda t: (t, t.T @ t), dl.tensor(x)).graph, [x])  # (an input returned)


@pytest.mark.parametrize("loss", [
    lambda z, y: F.cross_entropy(z, y),
    lambda z, y: F.cross_entropy(z, y, weight=dl.tensor([0.5, 2.0, 1.0]).double(),
                                 ignore_index=1),
    lambda z, y: F.nll_loss(F.log_softmax(z, 1), y, reduction="sum"),
], ids=["mean", "weighted", "sum"])
def test_a_step_that_reads_values_in_its_settings_is_written_out_with_the_loop_s_bits(loss):
    """A compiled loss reads its targets inside ``nll_loss``'s settings, and its backward's
    ``scatter_add`` the picked indices: those steps are written with the values' locals."""
    w = dl.tensor(rng.normal(size=(3, 5)), requires_grad=True)
    z, y = rng.normal(size=(6, 5)), np.array([0, 2, 1, 1, 0, 2])
    compiled = dl.compile(lambda x, t: loss(x @ w.T, t))
    compiled(dl.tensor(z), dl.tensor(y)).backward()
    (entry,) = compiled.cache.values()
    graph = entry.forward
    reading = {s.node.op_name for s in Program(graph).steps if s.params_have_refs}
    assert reading == {"nll_loss", "scatter_add"}
    # (written out, not the loop; other targets give the loop's bits: read at each call)
    for targets in (y, np.array([1, 1, 0, 2, 2, 1])):
        _same(graph, [z, targets, w.detach().numpy()][:len(graph.arguments())])


def test_settings_of_tuples_lists_and_slices_are_built_as_the_loop_builds_them():
    """``_resolve`` builds each tuple, list and slice again, the values read from their
    slots; anything else is the very object."""
    from difflab.jit.graph import Ref, _resolve
    from difflab.jit.program_source import _namer, _resolved

    setting = (Ref("a"), [1.5, slice(None, Ref("b"), 2)], (), (Ref("a"),), "text")
    slots, a, b = {"a": 3, "b": 7}, object(), object()
    env = [None] * 8
    env[3], env[7] = a, b  # (the loop's slots)
    namespace = {"s3": a, "s7": b}  # (the written function's locals)
    got = eval(_resolved(setting, slots, _namer(namespace, "c")), namespace)
    want = _resolve(setting, env, slots)
    assert got == want and repr(got) == repr(want)  # (repr: a tuple is no list)
    assert got[0] is a and got[3][0] is a and got[1][1].stop is b and got[4] is setting[4]
    assert got[1] is not setting[1] and got[3] is not setting[3]  # (built anew)


def test_a_step_s_error_names_its_line_as_the_loop_s_does():
    graph = jit.trace(lambda a, b: (a @ b).sum(), (dl.ones(2, 3, dtype=dl.float64),
                                                    dl.ones(3, 2, dtype=dl.float64))).graph
    bad = [np.ones((2, 3)), np.ones((4, 2))]  # (unchecked: the matrix product refuses it)
    errors = []
    for run in (lambda: _loop(graph).run(bad, check=False),
                lambda: written_out(Program(graph))(bad, backend.numpy_namespace)):
        with pytest.raises(GraphError) as caught:
            run()
        errors.append((type(caught.value), str(caught.value)))
    assert errors[0] == errors[1] and "matmul" in errors[0][1]


def test_what_is_not_written_out_runs_the_loop():
    model = dl.nn.Linear(3, 2)
    module = jit.trace(model, dl.ones(4, 3)).graph  # (parameters passed by name)
    assert written_out(Program(module)) is None
    assert Program(module).run([np.ones((4, 3), np.float32)], {
        n: p.array for n, p in model.named_parameters()})[0].shape == (4, 2)
    plain = Program(jit.trace(lambda x: x.sin(), dl.ones(3)).graph, prepared=False)
    plain.run([np.ones(3, np.float32)])
    assert plain.written is None  # (the shortcuts off: the loop)


@pytest.mark.fastpath("15. programs written out")
def test_a_program_writes_its_function_at_the_first_run():
    program = Program(jit.trace(lambda x: x.sin().sum(), dl.ones(3)).graph)
    assert program.written is None
    program.run([np.ones(3, np.float32)])
    assert program.written is not None and "def run(arrays, xp):" in program.written.source
    empty = Program(jit.trace(lambda x: x, dl.ones(3)).graph)  # (no step at all)
    assert empty.run([np.arange(3.0, dtype=np.float32)])[0].tolist() == [0.0, 1.0, 2.0]


def test_docstring_examples_run():
    assert doctest.testmod(program_source).failed == 0
