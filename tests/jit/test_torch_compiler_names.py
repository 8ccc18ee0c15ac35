"""torch.compiler and torch._dynamo under ``import difflab as torch``: disable (a graph
break whose call gives eager's results), reset, is_compiling, allow_in_graph, explain,
config.cache_size_limit, graph_break."""

from __future__ import annotations

import numpy as np
import pytest

import difflab as dl
from difflab import _dynamo, compiler


@compiler.disable
def scale_by_norm(x):
    # Python on values: a float read, a branch, a NumPy call
    n = float(np.linalg.norm(x.detach().numpy()))
    return x / n if n > 1 else x * 2


def model(x, w):
    h = (x @ w).tanh()
    return scale_by_norm(h).sum() + (h * h).mean()


def data():
    rng = np.random.default_rng(1)
    x = dl.tensor(rng.standard_normal((3, 4)))
    w = dl.tensor(rng.standard_normal((4, 2)), requires_grad=True)
    return x, w


def test_disable_inside_a_compiled_function_is_a_graph_break_with_eager_results():
    x, w = data()
    eager = model(x, w)
    eager.backward()
    g_eager = w.grad.clone()
    w.grad = None
    f = dl.compile(model)
    for _ in range(3):  # first call (traced), then replays of what the trace decided
        w.grad = None
        out = f(x, w)
        out.backward()
        assert out.item() == eager.item()
        np.testing.assert_array_equal(w.grad.numpy(), g_eager.numpy())
    assert len(f.breaks) == 1 and "scale_by_norm() is marked torch.compiler.disable" in \
        f.breaks[0].reason
    report = _dynamo.explain(model)(x, w)
    assert report.graph_break_count == 1
    assert "torch.compiler.disable" in report.break_reasons[0].reason


def test_disable_outside_compile_changes_nothing_and_keeps_the_name():
    x = dl.tensor([3.0, 4.0])
    assert scale_by_norm(x).tolist() == pytest.approx([0.6, 0.8])
    assert scale_by_norm.__name__ == "scale_by_norm"
    assert scale_by_norm._torchdynamo_disable is True


def test_disable_as_a_decorator_with_arguments_and_on_the_compiled_function_itself():
    @compiler.disable(recursive=False, reason="logs values")
    def noted(x):
        return x * 3

    f = dl.compile(lambda x: noted(x) + 1)
    assert f(dl.ones(2)).tolist() == [4.0, 4.0]
    assert "(logs values)" in f.breaks[0].reason
    g = dl.compile(compiler.disable(lambda x: x.sin()))
    x = dl.tensor([0.5, 1.0])
    np.testing.assert_array_equal(g(x).numpy(), x.sin().numpy())


def test_disable_under_the_plain_tracer_is_traced_through():
    traced = dl.jit.trace(lambda x: compiler.disable(lambda v: v * 2)(x) + 1, (dl.ones(2),))
    assert traced(np.array([1.0, 2.0])).tolist() == [3.0, 5.0]


def test_graph_break_in_dynamo():
    def f(x):
        y = x.exp()
        _dynamo.graph_break()
        return y.sum()

    x = dl.tensor([0.0, 1.0])
    assert dl.compile(f)(x).item() == f(x).item()
    assert _dynamo.explain(f)(x).graph_break_count == 1


def test_reset_forgets_every_compiled_function():
    f = dl.compile(lambda x: x + 1)
    g = dl.compile(lambda x: x - 1)
    f(dl.ones(2)), g(dl.ones(2))
    assert (f.traces, g.traces) == (1, 1)
    compiler.reset()
    assert len(f.cache) == 0 and len(g.cache) == 0
    f(dl.ones(2)), g(dl.ones(2))
    assert (f.traces, g.traces) == (2, 2)
    _dynamo.reset()
    f(dl.ones(2))
    assert f.traces == 3


def test_is_compiling_is_true_only_while_compile_traces():
    seen = []

    def f(x):
        seen.append(compiler.is_compiling())
        return x * 2

    f(dl.ones(1))
    dl.compile(f)(dl.ones(1))
    dl.jit.trace(f, (dl.ones(1),))  # the plain tracer is not torch.compile
    assert seen == [False, True, False]
    assert compiler.is_dynamo_compiling is compiler.is_compiling
    assert _dynamo.is_compiling is compiler.is_compiling


def test_allow_in_graph_returns_the_function():
    def f(x):
        return x.cos()

    assert compiler.allow_in_graph(f) is f
    assert _dynamo.allow_in_graph(f) is f


def test_config_cache_size_limit_is_the_recompile_limit():
    config = _dynamo.config
    before = config.recompile_limit
    try:
        config.cache_size_limit = 2
        assert config.recompile_limit == 2
        f = dl.compile(lambda x, k: x * k)
        with pytest.warns(dl.jit.RecompileLimitWarning):
            for k in range(3):
                assert f(dl.ones(1), k).item() == k
        assert f.traces == 2
    finally:
        config.recompile_limit = before
    with pytest.raises(AttributeError, match="no such setting"):
        config.cache_size_limt = 64  # a typo is not silently kept


def test_explain_is_the_compilers():
    assert _dynamo.explain is dl.jit.explain
    out = _dynamo.explain(lambda x: x.sin().sum())(dl.ones(3))
    assert out.graph_count == 1 and out.graph_break_count == 0


def test_paths_as_pytorch():
    import importlib

    for path in ("difflab.compiler", "difflab._dynamo", "difflab.profiler",
                 "difflab.autograd.profiler", "difflab.utils.benchmark"):
        assert importlib.import_module(path).__name__ == path
    assert dl.compiler.disable is compiler.disable and dl._dynamo is _dynamo
