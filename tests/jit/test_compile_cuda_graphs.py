"""dl.compile(mode="reduce-overhead"): each graph replayed on the GPU as a CUDA graph.

Every test runs on the ``cuda`` fixture: the real GPU where one is present, else
the CuPy stand-in, whose graphs run the recorded work again on the same arrays
and refuse host copies as a capturing stream does (difflab/testing/fake_cupy.py).
Each compares with ``mode=None`` (the same graphs, one launch per line), bit for bit.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import difflab as dl
import difflab.nn.functional as F
from difflab.jit.cuda_graphs import CudaGraphWarning, GraphedProgram


def _graphed(compiled) -> list[GraphedProgram]:
    function = compiled.__dict__.get("_compiled", compiled)
    return [entry.graphed for entry in function.cache.values() if entry.graphed is not None]


class _Scaled(dl.nn.Module):
    """Elementwise layers only: CuPy records no matrix product in a graph (see
    test_a_matrix_product_runs_without_a_graph_after_one_warning)."""

    def __init__(self) -> None:
        super().__init__()
        self.w = dl.nn.Parameter(dl.randn(6))
        self.b = dl.nn.Parameter(dl.randn(6))
        self.v = dl.nn.Parameter(dl.randn(6))

    def forward(self, x):
        return (x * self.w + self.b).tanh() * self.v + (x * x).sum(1, keepdim=True) * 0.1


def _model(device, seed=0):
    dl.manual_seed(seed)
    return _Scaled().to(device)


def _host(t) -> np.ndarray:
    return t.detach().cpu().numpy()


def test_graphed_calls_equal_plain_replay_bit_for_bit(cuda):
    rng = np.random.default_rng(0)
    batches = [dl.tensor(rng.standard_normal((5, 6)), device=cuda) for _ in range(5)]
    results = {}
    for mode in (None, "reduce-overhead"):
        f = dl.compile(_model(cuda), mode=mode)
        with dl.no_grad():
            results[mode] = [_host(f(b)) for b in batches]
    for plain, graphed in zip(results[None], results["reduce-overhead"]):
        assert plain.tobytes() == graphed.tobytes()
    (graphed,) = _graphed(f)
    # (the batches are new arrays: the first call ran as the warm-up on the first
    # batch itself, the second captured, on the graph's own buffer, once)
    assert graphed.state == "captured" and graphed.captures == 1


def test_the_same_argument_is_read_where_it_is_and_changes_in_place_are_seen(cuda):
    x = dl.ones(3, 6, device=cuda)
    f = dl.compile(lambda x: (x * 2).sin().sum(1), mode="reduce-overhead")
    for _ in range(4):
        x.mul_(1.5)  # (the same array, new values: the graph reads it at each launch)
        expected = _host((x * 2).sin().sum(1))
        assert _host(f(x)).tobytes() == expected.tobytes()
    (graphed,) = _graphed(f)
    assert graphed.captures == 1 and graphed.own == [False]


def test_results_kept_by_the_caller_are_not_overwritten_by_the_next_launch(cuda):
    f = dl.compile(lambda x: x.exp() + 1, mode="reduce-overhead")
    kept = [f(dl.full((4,), float(k), device=cuda, dtype=dl.float64)) for k in range(5)]
    for k, r in enumerate(kept):
        np.testing.assert_array_equal(_host(r), np.full(4, np.exp(k) + 1.0))


def test_training_through_a_graphed_forward_equals_plain_training(cuda):
    rng = np.random.default_rng(1)
    data = [(dl.tensor(rng.standard_normal((8, 6)), device=cuda),
             dl.tensor(rng.integers(0, 6, 8), device=cuda)) for _ in range(4)]
    final = {}
    for mode in (None, "reduce-overhead"):
        model = _model(cuda)
        net = dl.compile(model, mode=mode)
        opt = dl.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for x, y in data:
            opt.zero_grad()
            F.cross_entropy(net(x), y).backward()
            opt.step()
        final[mode] = [_host(p) for p in model.parameters()]
    for a, b in zip(final[None], final["reduce-overhead"]):
        assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("with_gradient", [False, True])
def test_in_place_updates_equal_plain_replay(cuda, with_gradient):
    """BatchNorm in training mode: the running statistics are the graph's in-place
    updates.  Without a gradient they are written inside the graph into the module's
    own buffers; with one, the backward reads the values from before them, so the
    caller writes them after the launch, as without a graph."""
    rng = np.random.default_rng(2)
    batches = [dl.tensor(rng.standard_normal((16, 3)), device=cuda) for _ in range(4)]
    stats = {}
    for mode in (None, "reduce-overhead"):
        dl.manual_seed(0)
        bn = dl.nn.BatchNorm1d(3).to(cuda)
        f = dl.compile(bn, mode=mode)
        outs = []
        for b in batches:
            if with_gradient:
                y = f(b)
                (y * y).sum().backward()
                outs.append(_host(y))
            else:
                with dl.no_grad():
                    outs.append(_host(f(b)))
        stats[mode] = outs + [_host(bn.running_mean), _host(bn.running_var),
                              _host(bn.num_batches_tracked)]
        if with_gradient:
            stats[mode] += [_host(bn.weight.grad), _host(bn.bias.grad)]
    assert [g.state for g in _graphed(f)] == ["captured"]
    for a, b in zip(stats[None], stats["reduce-overhead"]):
        assert a.tobytes() == b.tobytes()


def test_random_draws_run_without_a_graph_after_one_warning(cuda):
    def noisy(x):
        return F.dropout(x, 0.5, training=True) * 2

    results = {}
    for mode in (None, "reduce-overhead"):
        dl.manual_seed(3)
        f = dl.compile(noisy, mode=mode)
        x = dl.ones(64, device=cuda)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results[mode] = [_host(f(x)) for _ in range(3)]
        graph_warnings = [w for w in caught if issubclass(w.category, CudaGraphWarning)]
        if mode is None:
            assert not graph_warnings
        else:
            assert len(graph_warnings) == 1
            assert "random" in str(graph_warnings[0].message)
    assert not np.array_equal(results[None][0], results[None][1])  # (new draws each call)
    for a, b in zip(results[None], results["reduce-overhead"]):
        assert a.tobytes() == b.tobytes()


def test_a_class_index_out_of_range_is_refused_as_in_eager_mode(cuda):
    """cross_entropy's targets are checked on the GPU inside the graph (no host read
    during the capture) and the error is raised after the launch, with eager's text."""
    logits = dl.zeros(2, 3, device=cuda)
    f = dl.compile(lambda z, t: F.cross_entropy(z, t), mode="reduce-overhead")
    good = dl.tensor([0, 2], device=cuda)
    for _ in range(3):
        assert float(f(logits, good)) == pytest.approx(np.log(3.0))
    (graphed,) = _graphed(f)
    assert graphed.state == "captured" and len(graphed.checks) == 1
    bad = dl.tensor([1, 7], device=cuda)
    with pytest.raises(IndexError) as eager:
        F.cross_entropy(logits, bad)
    with pytest.raises(IndexError) as in_graph:
        f(logits, bad)
    assert str(in_graph.value).startswith(str(eager.value))
    assert "CUDA graph" in str(in_graph.value)
    assert float(f(logits, good)) == pytest.approx(np.log(3.0))  # (and it goes on)


def test_a_host_read_during_the_capture_refuses_the_graph_and_nothing_runs_twice(cuda):
    traced = dl.jit.trace(lambda x: x * 3, dl.ones(4, device=cuda))
    program = traced.graph.program()
    graphed = GraphedProgram(program)
    real_run = program.run
    calls = []

    def reading_run(arrays, named=None, check=True):
        calls.append(float(arrays[0][0]))  # (a value read on the host: a sync)
        return real_run(arrays, named, check)

    program.run = reading_run
    x = dl.ones(4, device=cuda).array
    assert graphed.run([x])[0].get().tolist() == [3.0] * 4  # (the warm-up: no capture yet)
    with pytest.warns(CudaGraphWarning, match="capture failed"):
        assert graphed.run([x]) is None  # (the caller then replays it plainly)
    assert graphed.state == "refused"
    assert graphed.run([x]) is None


def test_on_the_cpu_reduce_overhead_compiles_as_the_default_mode():
    f = dl.compile(lambda x: x.sin() * 2, mode="reduce-overhead")
    x = dl.linspace(0, 1, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            assert _host(f(x)).tobytes() == _host(x.sin() * 2).tobytes()
    assert [g.state for g in _graphed(f)] == ["new"]  # (made, never run as a graph)


def test_the_stand_in_graph_refuses_host_copies_while_it_runs():
    from difflab.testing import fake_cupy

    x = fake_cupy.asarray(np.ones(1))
    graph = fake_cupy.cuda.graph_of(lambda: x.item())
    with pytest.raises(fake_cupy.cuda.runtime.CUDARuntimeError, match="capturing"):
        graph.launch()
    graph = fake_cupy.cuda.graph_of(lambda: fake_cupy.asarray(np.zeros(2)))
    with pytest.raises(fake_cupy.cuda.runtime.CUDARuntimeError, match="capturing"):
        graph.launch()
    graph = fake_cupy.cuda.graph_of(lambda: x @ x)
    with pytest.raises(NotImplementedError, match="cuBLAS"):
        graph.launch()
    assert x.item() == 1.0  # (outside a launch, host copies work again)



def test_a_matrix_product_runs_without_a_graph_after_one_warning(cuda):
    """CuPy refuses to record cuBLAS calls: the capture fails, nothing of that call has
    run, and every call replays the graph line by line, with eager's results."""
    x = dl.tensor(np.random.default_rng(4).standard_normal((5, 6)), device=cuda)
    results = {}
    for mode in (None, "reduce-overhead"):
        dl.manual_seed(0)
        f = dl.compile(dl.nn.Linear(6, 3).to(cuda), mode=mode)
        with warnings.catch_warnings(record=True) as caught, dl.no_grad():
            warnings.simplefilter("always")
            results[mode] = [_host(f(x)) for _ in range(4)]
        graph_warnings = [w for w in caught if issubclass(w.category, CudaGraphWarning)]
        assert len(graph_warnings) == (mode is not None)
    assert "cuBLAS" in str(graph_warnings[0].message)
    assert [g.state for g in _graphed(f)] == ["refused"]
    for a, b in zip(results[None], results["reduce-overhead"]):
        assert a.tobytes() == b.tobytes()


def test_the_backward_of_a_compiled_loss_reads_nothing_on_the_host():
    """The seed 1 of ``loss.backward()`` is known by identity (is_implicit_seed), not by
    reading the GPU's number: the host does not wait for the GPU at the backward."""
    from difflab.testing import fake_cupy

    with fake_cupy.installed():
        x = dl.tensor(np.linspace(-1, 1, 9), device="cuda", requires_grad=True)
        f = dl.compile(lambda x: (100.0 * (x[1:] - x[:-1] ** 2) ** 2).sum())
        expected = None
        for _ in range(3):
            x.grad = None
            loss = f(x)
            # (a stand-in graph's launch refuses every copy to the host)
            fake_cupy.cuda.graph_of(loss.backward).launch()
            expected = expected if expected is not None else _host(x.grad)
            assert _host(x.grad).tobytes() == expected.tobytes()
        x.grad = None
        loss = f(x)
        loss.backward(dl.tensor(2.0, device="cuda"))  # (the user's seed: scaled by 2)
        np.testing.assert_array_equal(_host(x.grad), 2 * expected)
