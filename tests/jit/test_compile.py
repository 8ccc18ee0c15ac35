"""dl.compile: guards and re-tracing, the recompile limit, graph breaks, explain, training
through compiled modules, fusion by default, and the errors for bad arguments."""

import doctest
import inspect
import warnings

import numpy as np
import pytest

import difflab as dl
import difflab.nn as nn
import difflab.nn.functional as F
from difflab.diff.compiled import Compiled
from difflab.jit import compiler
from difflab.jit.compiler import GraphBreakError, RecompileLimitWarning

rng = np.random.default_rng(0)


def t(*shape, requires_grad=False):
    return dl.tensor(rng.standard_normal(shape), requires_grad=requires_grad)


def counted(fn):
    """fn, counting how often its Python body runs."""
    calls = []

    def wrapper(*args, **kwargs):
        calls.append(1)
        return fn(*args, **kwargs)

    wrapper.calls = calls
    return wrapper


# ------------------------------------------------------------------ trace once, replay


def test_the_first_call_traces_and_later_calls_replay_without_running_python():
    body = counted(lambda x, w: (x * w).sin().sum())
    f = dl.compile(body)
    x, w = t(5), t(5)
    want = float((x * w).sin().sum())
    assert float(f(x, w)) == pytest.approx(want, abs=1e-12)
    for _ in range(3):
        x2, w2 = t(5), t(5)
        assert float(f(x2, w2)) == pytest.approx(float((x2 * w2).sin().sum()), abs=1e-12)
    assert f.traces == 1 and len(body.calls) == 1


@pytest.mark.parametrize("change", ["shape", "dtype", "requires_grad", "number", "grad_mode"])
def test_a_failed_guard_traces_again_and_an_equal_guard_does_not(change):
    f = dl.compile(lambda x, k: (x * k).exp().sum())
    x = t(4)
    f(x, 2.0)
    f(t(4), 2.0)
    assert f.traces == 1
    if change == "shape":
        y, k = t(6), 2.0
    elif change == "dtype":
        y, k = x.float(), 2.0
    elif change == "requires_grad":
        y, k = t(4, requires_grad=True), 2.0
    elif change == "number":
        y, k = x, 3.0
    if change == "grad_mode":
        y, k = t(4, requires_grad=True), 2.0
        f(y, k)
        with dl.no_grad():
            out = f(y, k)
        assert f.traces == 3 and not out.requires_grad
        return
    out = f(y, k)
    assert f.traces == 2
    assert float(out) == pytest.approx(float((y * k).exp().sum()), rel=1e-6)


def test_keyword_and_nested_tensor_arguments_are_inputs_of_the_graph():
    def f(xs, *, scale, bias=None):
        return (xs[0] * xs[1] * scale + bias).sum()

    g = dl.compile(f)
    for _ in range(3):
        a, b, c = t(4), t(4), t(4)
        assert float(g([a, b], scale=2.0, bias=c)) == pytest.approx(
            float(f([a, b], scale=2.0, bias=c)), abs=1e-12)
    assert g.traces == 1
    g([a, b], scale=3.0, bias=c)
    assert g.traces == 2


def test_a_module_is_guarded_on_its_training_flag_and_on_its_parameters_identity():
    model = nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.5), nn.Linear(4, 2)).double()
    fast = dl.compile(model)
    x = t(8, 3)
    model.eval()
    np.testing.assert_allclose(fast(x).detach().numpy(), model(x).detach().numpy(),
                               rtol=1e-12)
    fast(x)
    assert fast._compiled.traces == 1
    model.train()
    fast(x)  # dropout active: another guard (it runs eagerly: random masks are values)
    model.eval()
    model[0].weight = nn.Parameter(model[0].weight.detach() * 2)  # a new Parameter
    np.testing.assert_allclose(fast(x).detach().numpy(), model(x).detach().numpy(),
                               rtol=1e-12)
    assert len(fast._compiled.cache) == 3


def test_a_module_s_bound_method_is_guarded_on_the_module_s_state():
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)).double()
    forward = dl.compile(model.forward)
    x = t(6, 3)
    forward(x)  # training: BatchNorm updates its statistics (runs eagerly)
    model.eval()
    np.testing.assert_allclose(forward(x).detach().numpy(), model(x).detach().numpy(),
                               rtol=1e-12)
    model[1].running_mean.array[...] = 5.0  # a buffer read at every call, not baked in
    np.testing.assert_allclose(forward(x).detach().numpy(), model(x).detach().numpy(),
                               rtol=1e-12)


def test_past_the_recompile_limit_calls_run_eagerly_with_one_warning(monkeypatch):
    monkeypatch.setattr(compiler.config, "recompile_limit", 2)
    f = dl.compile(lambda x: x.cos().sum())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(2, 7):
            x = t(n)
            assert float(f(x)) == pytest.approx(float(x.cos().sum()), abs=1e-12)
    assert [w.category for w in caught] == [RecompileLimitWarning]
    assert "recompile_limit" in str(caught[0].message)
    assert f.traces == 2


def test_cache_size_limit_is_the_recompile_limit_s_older_name(monkeypatch):
    monkeypatch.setattr(compiler.config, "recompile_limit", 8)
    compiler.config.cache_size_limit = 3
    assert compiler.config.recompile_limit == 3


# ------------------------------------------------------------------ graph breaks


def branchy(x):
    if x.sum() > 0:  # a graph break: Python needs the value
        return x.exp()
    return -x


def reads_item(x):
    scale = x.max().item()
    return x / scale


def reads_tolist(x):
    return x * len([v for v in x.tolist() if v > 0])


@pytest.mark.parametrize("fn", [branchy, reads_item])
def test_a_value_read_splits_the_graph_and_every_call_equals_eager(fn):
    body = counted(fn)
    f = dl.compile(body)
    inputs = [t(4).abs(), -t(4).abs(), t(4)]
    for x in inputs:
        np.testing.assert_array_equal(f(x).numpy(), fn(x).numpy())
    assert f.breaks[0].splits and f.breaks[0].filename == __file__
    runs = len(body.calls)
    for x in inputs[:2]:  # both branches are cached now: replayed, no Python runs
        np.testing.assert_array_equal(f(x).numpy(), fn(x).numpy())
    if fn is branchy:
        assert len(body.calls) == runs and f.traces == 2


def test_a_read_that_hands_values_out_of_python_runs_the_call_eagerly():
    f = dl.compile(reads_tolist)
    for x in (t(4).abs(), -t(4).abs(), t(4)):
        np.testing.assert_array_equal(f(x).numpy(), reads_tolist(x).numpy())
    assert f.traces == 0 and not f.breaks[0].splits
    assert "runs eagerly" in f.breaks[0].reason and f.breaks[0].filename == __file__


def halve_until_small(x):
    steps = 0
    while x.abs().max() > 1:  # a data-dependent trip count: one read per trip
        x = x / 2
        steps += 1
    return x * steps + x.sin()


@pytest.mark.parametrize("backend", ["inductor", "aot_eager"])
def test_a_loop_with_a_data_dependent_trip_count_shares_its_first_graphs(backend):
    body = counted(halve_until_small)
    f = dl.compile(body, backend=backend)
    trips = set()
    for scale in (3.0, 20.0, 0.5, 20.0, 3.0, 100.0, 0.5):
        x = dl.tensor(np.linspace(-1, 1, 5) * scale)
        np.testing.assert_array_equal(f(x).numpy(), halve_until_small(x).numpy())
        trips.add(int(np.ceil(np.log2(max(scale, 1)))))
    root = next(iter(f.cache.values()))
    # one trace per new trip count; the graphs before each read are shared
    assert root.paths == f.traces == len(body.calls) == len(trips) == 4


def test_a_fused_graph_after_a_break_recomputes_elementwise_values_instead_of_reading_them():
    def f(x):
        y = (x * 2).sin().tanh() + x
        if y.sum() > 0:
            y = y * 3
        return (y.exp() * x).sum()

    for backend in ("inductor", "aot_eager"):
        g = dl.compile(f, backend=backend)
        x = t(50, requires_grad=True)
        x2 = dl.tensor(x.detach().numpy(), requires_grad=True)
        g(x).backward()
        f(x2).backward()
        np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-12)
        root = next(iter(g.cache.values()))
        # the value read, then what later graphs may read back: with fusion not the
        # arithmetic (mul, add: recomputed in their own loop), without it every value
        assert len(root.graph.outputs) == 1 + len(root.produced)
        assert root.ops == ("mul", "sin", "tanh", "add", "sum", "gt")
        assert len(root.produced) == (4 if backend == "inductor" else 6)


def test_past_the_recompile_limit_a_new_branch_runs_eagerly(monkeypatch):
    monkeypatch.setattr(compiler.config, "recompile_limit", 2)
    f = dl.compile(halve_until_small)
    with pytest.warns(RecompileLimitWarning, match="values read at its graph breaks"):
        for scale in (0.5, 3.0, 50.0, 500.0):
            x = dl.tensor(rng.standard_normal(5) * scale)
            np.testing.assert_array_equal(f(x).numpy(), halve_until_small(x).numpy())
    assert f.traces == 2


def item_in_the_middle(x, w):
    h = (x * w).tanh()
    scale = h.abs().max().item()  # a number read into Python, used after
    return (h / scale).pow(2).sum()


def test_gradients_through_an_item_in_the_middle_equal_the_tape_s():
    f = dl.compile(item_in_the_middle)
    x = t(6)
    for _ in range(2):
        w1 = t(6, requires_grad=True)
        w2 = dl.tensor(w1.detach().numpy(), requires_grad=True)
        f(x, w1).backward()
        item_in_the_middle(x, w2).backward()
        np.testing.assert_allclose(w1.grad.numpy(), w2.grad.numpy(), rtol=0, atol=1e-12)


def test_reads_of_an_argument_of_an_int_and_a_returned_number_equal_eager():
    pick = dl.compile(lambda flag, y: y * 2 if flag else y * 3)  # (an argument read)
    for flag in (1.0, 0.0, 2.0):
        np.testing.assert_array_equal(pick(dl.tensor(flag), dl.ones(2)).numpy(),
                                      [2.0, 2.0] if flag else [3.0, 3.0])

    def sines(x):
        for _ in range(int(x.abs().sum())):  # an int() trip count
            x = x.sin()
        return x

    f = dl.compile(sines)
    for values in ([0.5, 0.2], [1.5, 1.2], [0.5, 0.2], [0.1, 0.3]):
        np.testing.assert_array_equal(f(dl.tensor(values)).numpy(),
                                      sines(dl.tensor(values)).numpy())
    assert f.traces == 3
    total = dl.compile(lambda x: x.sum().item())  # (the number returned is the branch key)
    assert (total(dl.ones(2)), total(dl.ones(2) * 2), total(dl.ones(2))) == (2.0, 4.0, 2.0)


def test_a_captured_weight_and_second_derivatives_reach_back_through_a_break():
    w = dl.tensor([0.5, -1.0, 2.0], requires_grad=True)

    def f(x):
        h = (x * w).tanh()  # (w read from outside: a captured input of graph 1)
        if h.sum() > 0:
            return (h * h).sum()
        return (h * w).sum()

    g = dl.compile(f)
    for values in ([1.0, 1.0, 1.0], [-1.0, 1.0, -1.0], [1.0, 1.0, 1.0]):
        w.grad = None
        g(dl.tensor(values)).backward()
        compiled = w.grad.numpy().copy()
        w.grad = None
        f(dl.tensor(values)).backward()
        np.testing.assert_allclose(compiled, w.grad.numpy(), rtol=0, atol=1e-12)
        # create_graph=True: the gradient's own gradient goes through graph 1's values too
        x1, x2 = (dl.tensor(values, requires_grad=True) for _ in range(2))
        for fn, x in ((g, x1), (f, x2)):
            (first,) = dl.autograd.grad(fn(x), x, create_graph=True)
            first.sum().backward()
        np.testing.assert_allclose(x1.grad.numpy(), x2.grad.numpy(), rtol=0, atol=1e-12)


def test_a_captured_weight_that_changes_shape_retraces_a_split_function():
    w = dl.ones(3, requires_grad=True)

    def f(x):
        h = x.sum() * w
        if h.sum() > 0:
            return (h * w).sum()
        return h.sum()

    g = dl.compile(f)
    for n in (3, 3, 5, 5):
        w.data = dl.ones(n)  # (the same tensor, a new shape: p.data = ... as in pruning)
        for sign in (1.0, -1.0):
            x = dl.tensor([sign, 2 * sign])
            assert float(g(x)) == float(f(x))
    assert g.traces == 4  # (both branches, at each shape of w)


def test_a_branch_whose_side_runs_eagerly_keeps_the_other_side_compiled():
    def f(x):
        y = x * 2
        if y.sum() > 0:
            return y.exp()
        return y * len(x.tolist())  # (a list: this side runs eagerly)

    body = counted(f)
    g = dl.compile(body)
    pos, neg = t(3).abs(), -t(3).abs()
    for x in (pos, neg, pos, neg):
        np.testing.assert_array_equal(g(x).numpy(), f(x).numpy())
    # pos: traced; neg: traced, then run eagerly; pos: replayed; neg: eager
    assert len(body.calls) == 4
    assert [b.splits for b in g.breaks] == [True, False]


def test_random_draws_around_a_break_are_the_eager_draws():
    def f(x):
        y = F.dropout(x, 0.5, training=True)
        if y.sum() > 0:
            return y + dl.randn_like(x)
        return y - dl.randn_like(x)

    g = dl.compile(f)
    for k, x in enumerate((t(8).abs(), -t(8).abs(), t(8).abs(), -t(8).abs())):
        dl.manual_seed(k)
        got = g(x).numpy()
        dl.manual_seed(k)
        np.testing.assert_array_equal(got, f(x).numpy())


class Gated(nn.Module):
    """A module whose forward branches on a value: a graph break in the middle."""

    def __init__(self):
        super().__init__()
        self.inner, self.outer = nn.Linear(4, 8), nn.Linear(8, 2)

    def forward(self, x):
        h = self.inner(x).tanh()
        if h.mean() > 0:
            h = h * 2
        return self.outer(h)


@pytest.mark.parametrize("backend", ["inductor", "aot_eager"])
@pytest.mark.parametrize("optimizer", [dl.optim.SGD, dl.optim.Adam])
def test_training_a_module_with_a_graph_break_equals_eager_training(optimizer, backend):
    dl.manual_seed(1)
    eager = Gated().double()
    dl.manual_seed(1)
    model = Gated().double()
    fast = dl.compile(model, backend=backend)
    opts = [optimizer(net.parameters(), lr=0.1) for net in (eager, fast)]
    inputs = np.random.default_rng(3)  # (its own draws: which branch runs must not
    for step in range(6):              # depend on the tests run before in this process)
        x = dl.tensor(inputs.standard_normal((5, 4)) + (0.8 if step % 2 else -0.8))
        for net, opt in zip((eager, fast), opts):
            opt.zero_grad()
            (net(x) ** 2).mean().backward()
            opt.step()
    for p, q in zip(eager.parameters(), model.parameters()):
        if backend == "aot_eager":  # the graphs as traced: eager's operations, bit for bit
            np.testing.assert_array_equal(q.detach().numpy(), p.detach().numpy())
        else:  # fused and folded: the same to rounding
            np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=0,
                                       atol=1e-12)
    assert fast._compiled.traces == 2 and fast._compiled.breaks[0].splits


def test_printing_a_tensor_is_a_graph_break_so_it_prints_at_every_call(capsys):
    def f(x):
        y = x * 2
        print(y)
        return y.sum()

    g = dl.compile(f)
    g(dl.ones(2))
    g(dl.ones(2))
    assert capsys.readouterr().out.count("tensor(") == 2
    assert "printing it" in g.breaks[0].reason


def test_fullgraph_makes_a_graph_break_an_error_naming_the_line():
    f = dl.compile(branchy, fullgraph=True)
    with pytest.raises(GraphBreakError, match="graph break") as info:
        f(t(3))
    line = inspect.getsourcelines(branchy)[1] + 1
    assert f"{__file__}:{line}" in str(info.value)
    # (a value read: the graph would be split there, nothing is "printed")
    assert "dl.where" in str(info.value) and "printed" not in str(info.value)


def test_fullgraph_names_what_to_do_for_a_break_that_is_no_value_read():
    w = dl.ones(2, requires_grad=True)

    def step(x):
        loss = (w * x).sum()
        loss.backward()
        return loss

    with pytest.raises(GraphBreakError, match=r"backward\(\) inside") as info:
        dl.compile(step, fullgraph=True)(dl.ones(2))
    assert "dl.where" not in str(info.value)
    assert "drop fullgraph=True" in str(info.value)
    assert w.grad is None  # (refused before the backward ran)



def test_a_compiled_backward_takes_the_array_rules_eager_mode_takes():
    """conv2d and max_pool2d have array rules cheaper than their recorded VJPs (conv2d
    reuses its saved columns): the replayed backward runs them as one node each, with
    eager's numbers bit for bit; create_graph=True still differentiates through them."""
    def make():
        dl.manual_seed(3)
        return nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                             nn.Linear(18, 3)).double()

    x = dl.tensor(rng.normal(size=(2, 1, 8, 8)), requires_grad=True)
    eager, model = make(), make()
    compiled = dl.compile(model)
    for net in (eager, compiled):
        for _ in range(2):
            (net(x) ** 2).sum().backward()
    for a, b in zip(eager.parameters(), model.parameters()):
        assert a.grad.numpy().tobytes() == b.grad.numpy().tobytes()
    (entry,) = compiled.__dict__["_compiled"].cache.values()
    counts = entry.backward.op_counts()
    # (one node each, named after the first adjoint it gives: x's, as x requires grad)
    assert counts.get("conv2d_vjp0") == 1 and counts.get("max_pool2d_vjp0") == 1
    assert "im2col" not in counts and "col2im" not in counts
    # a gradient penalty: the differentiable backward, through the same compiled module
    penalties = []
    for net in (eager, compiled):
        (gx,) = dl.autograd.grad((net(x) ** 2).sum(), [x], create_graph=True)
        penalties.append(dl.autograd.grad((gx ** 2).sum(), list(net.parameters())))
    for a, b in zip(*penalties):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)


def test_batchnorm_in_training_mode_compiles_and_updates_its_statistics_as_eager():
    dl.manual_seed(0)
    eager = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Tanh()).double()
    dl.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Tanh()).double()
    fast = dl.compile(model)
    opts = [dl.optim.SGD(net.parameters(), lr=0.1) for net in (eager, fast)]
    for _ in range(4):
        x = t(6, 3)
        for net, opt in zip((eager, fast), opts):
            opt.zero_grad()
            net(x).pow(2).sum().backward()
            opt.step()
    for name in ("running_mean", "running_var"):
        np.testing.assert_allclose(getattr(model[1], name).numpy(),
                                   getattr(eager[1], name).numpy(), rtol=0, atol=1e-12)
    assert int(model[1].num_batches_tracked) == int(eager[1].num_batches_tracked) == 4
    for p, q in zip(eager.parameters(), model.parameters()):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=0, atol=1e-12)
    assert fast._compiled.traces == 1 and not fast._compiled.breaks
    model.eval(), eager.eval()  # (eval mode: the statistics read, a new guard)
    x = t(6, 3)
    np.testing.assert_allclose(fast(x).detach().numpy(), eager(x).detach().numpy(), atol=1e-12)


def test_a_function_that_updates_a_closure_s_batchnorm_runs_eagerly_and_updates_it_once():
    dl.manual_seed(0)
    eager = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)).double()
    dl.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)).double()
    step = dl.compile(lambda x: model(x).pow(2).sum())  # (the module read from outside)
    for _ in range(3):
        x = t(6, 3)
        np.testing.assert_allclose(float(step(x)), float(eager(x).pow(2).sum()), rtol=1e-12)
    np.testing.assert_array_equal(model[1].running_mean.numpy(), eager[1].running_mean.numpy())
    assert int(model[1].num_batches_tracked) == 3
    assert "dl.compile(model)" in step.breaks[0].reason and step.traces == 0


def test_a_buffer_changed_outside_difflab_s_operations_still_runs_eagerly():
    class Counter(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("seen", dl.zeros(1))

        def forward(self, x):
            self.seen.array[...] += 1  # (raw NumPy: no graph can replay it)
            return x * 2

    module = Counter()
    fast = dl.compile(module)
    for _ in range(3):
        fast(t(2))
    assert float(module.seen) == 3 and "outside difflab" in fast._compiled.breaks[0].reason


def test_a_function_that_changes_its_argument_in_place_runs_eagerly_and_changes_it_once():
    def f(x):
        x.mul_(2.0)
        return x.sum()

    g = dl.compile(f)
    a, b = dl.tensor([1.0, 2.0]), dl.tensor([1.0, 2.0])
    for _ in range(2):
        assert float(g(a)) == float(f(b))
    np.testing.assert_array_equal(a.numpy(), b.numpy())  # [4, 8]: twice, not three times
    assert "in place" in g.breaks[0].reason


# ------------------------------------------------------------------ explain


def test_explain_counts_graphs_and_breaks_with_their_file_and_line():
    out = dl.compile.explain(branchy)(t(3))
    assert (out.graph_count, out.graph_break_count) == (2, 1)  # before and after the read
    line = inspect.getsourcelines(branchy)[1] + 1
    assert (out.break_reasons[0].filename, out.break_reasons[0].lineno) == (__file__, line)
    assert out.break_reasons[0].splits
    text = str(out)
    assert "Graph Break Count: 1" in text and f"{__file__}:{line}" in text
    assert "Splits: the graph ends here" in text

    def two_breaks(x):
        a = x.sum().item()
        b = x.max().item()
        return x * (a + b)

    assert dl.jit.explain(two_breaks)(t(3)).graph_count == 3
    eager = dl.jit.explain(reads_tolist)(t(3))
    assert (eager.graph_count, eager.graph_break_count) == (0, 1)
    assert "Eager: the call runs eagerly" in str(eager)


def test_explain_of_a_call_that_compile_runs_untraced_says_so():
    class Scale:  # (an argument compile cannot guard: that call runs eagerly, untraced)
        k = 2.0

    out = dl.jit.explain(lambda x, s: x * s.k)(t(3), Scale())
    assert (out.graph_count, out.graph_break_count) == (0, 1)
    assert "not a tensor" in out.break_reasons[0].reason
    assert out.break_reasons[0].filename == __file__


def test_explain_of_a_clean_function_shows_its_forward_and_backward_graphs():
    f = dl.compile(lambda x: x.sin() * x)
    assert dl.compile.explain(f)(t(3)).graph_count == 1
    out = dl.compile.explain(f)(t(3, requires_grad=True))
    assert (out.graph_count, out.graph_break_count) == (2, 0)
    assert out.op_count == sum(out.ops_per_graph) > 0
    # A loss: one graph computes it and its gradient together (the backward scales them).
    loss = dl.compile.explain(lambda x: (x.sin() * x).sum())(t(3, requires_grad=True))
    assert loss.graph_count == 1


def test_a_loss_s_backward_scales_its_gradient_by_the_cotangent():
    x1, x2 = t(4, requires_grad=True), None
    x2 = dl.tensor(x1.detach().numpy(), requires_grad=True)
    f = lambda x: (x.sin() * x).sum()  # noqa: E731
    dl.compile(f)(x1).backward(dl.tensor(3.0, dtype=dl.float64))
    f(x2).backward(dl.tensor(3.0, dtype=dl.float64))
    np.testing.assert_allclose(x1.grad.numpy(), x2.grad.numpy(), rtol=1e-12)


def test_explain_takes_a_compiled_module_and_a_compiled_function_is_inlined_in_a_trace():
    model = mlp()
    out = dl.compile.explain(dl.compile(model))(t(4, 6))
    assert (out.graph_count, out.graph_break_count) == (2, 0)  # (parameters require grad)
    inner = dl.compile(lambda v: v.exp())
    traced = dl.jit.trace(lambda v: inner(v).sum(), t(3))
    assert "exp" in traced.graph.op_counts() and inner.traces == 0


# ------------------------------------------------------------------ training


def mlp():
    dl.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3)).double()


@pytest.mark.parametrize("optimizer", [dl.optim.SGD, dl.optim.Adam])
def test_training_a_compiled_module_equals_eager_training(optimizer):
    eager, model = mlp(), mlp()
    fast = dl.compile(model)
    x, y = t(10, 6), dl.tensor(rng.integers(0, 3, 10))
    opt_eager = optimizer(eager.parameters(), lr=0.05)
    opt_fast = optimizer(fast.parameters(), lr=0.05)
    for _ in range(5):
        for net, opt in ((eager, opt_eager), (fast, opt_fast)):
            opt.zero_grad()
            loss = F.cross_entropy(net(x), y)
            loss.backward()
            opt.step()
    for p, q in zip(eager.parameters(), model.parameters()):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=0, atol=1e-12)
    assert fast._compiled.traces == 1


def test_a_compiled_function_reaches_the_parameters_it_uses_from_outside():
    eager, model = mlp(), mlp()
    x, y = t(10, 6), dl.tensor(rng.integers(0, 3, 10))
    step = dl.compile(lambda x, y: F.cross_entropy(model(x), y))
    step(x, y).backward()
    F.cross_entropy(eager(x), y).backward()
    for p, q in zip(eager.parameters(), model.parameters()):
        np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=0, atol=1e-12)


def test_gradients_of_several_outputs_and_of_inputs_equal_the_tape_s():
    def f(a, b):
        return (a * b).sin(), (a @ b.T).tanh().sum()

    g = dl.compile(f)
    a1, b1 = t(3, 4, requires_grad=True), t(3, 4, requires_grad=True)
    a2, b2 = (dl.tensor(v.detach().numpy(), requires_grad=True) for v in (a1, b1))
    for fn, a, b in ((g, a1, b1), (f, a2, b2)):
        u, s = fn(a, b)
        (u.sum() * 2 + s).backward()
    np.testing.assert_allclose(a1.grad.numpy(), a2.grad.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(b1.grad.numpy(), b2.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_an_argument_the_outputs_do_not_depend_on_gets_no_gradient():
    def f(x, unused):
        return (x * x).sum(), x.exp()

    x, unused = t(3, requires_grad=True), t(3, requires_grad=True)
    g = dl.compile(f)
    for _ in range(2):
        loss, e = g(x, unused)
        (loss + e.sum()).backward()
    assert unused.grad is None
    np.testing.assert_allclose(x.grad.numpy(), 2 * (2 * x + x.exp()).detach().numpy(),
                               rtol=1e-12)


def test_a_second_derivative_through_a_compiled_function_is_recorded():
    x1, x2 = dl.tensor([0.3, 0.7], requires_grad=True), dl.tensor([0.3, 0.7],
                                                                    requires_grad=True)
    f = lambda x: (x.sin() * x).sum()  # noqa: E731
    for fn, x in ((dl.compile(f), x1), (f, x2)):
        (g,) = dl.autograd.grad(fn(x), x, create_graph=True)
        g.sum().backward()
    np.testing.assert_allclose(x1.grad.numpy(), x2.grad.numpy(), rtol=1e-12)


def test_a_compiled_module_trains_on_the_gpu_and_the_device_is_part_of_the_guard(cuda):
    eager, model = mlp(), mlp()
    eager.to(cuda)
    model.to(cuda)
    fast = dl.compile(model)
    x, y = t(10, 6).to(cuda), dl.tensor(rng.integers(0, 3, 10)).to(cuda)
    for net in (eager, fast):
        F.cross_entropy(net(x), y).backward()
    for p, q in zip(eager.parameters(), model.parameters()):
        assert q.grad.device.type == "cuda"
        np.testing.assert_allclose(q.grad.cpu().numpy(), p.grad.cpu().numpy(), atol=1e-12)
    model.to("cpu")
    fast(x.cpu())
    assert fast._compiled.traces == 2


class NormedGate(nn.Module):
    """BatchNorm, then a branch on a value: statistics to update and a graph break."""

    def __init__(self):
        super().__init__()
        self.linear, self.norm = nn.Linear(4, 8), nn.BatchNorm1d(8)

    def forward(self, x):
        h = self.norm(self.linear(x))
        if h.max() > 1.5:  # a graph break, read from the device
            h = h * 0.5
        return h.pow(2).sum()


def test_a_graph_break_and_batchnorm_statistics_on_the_gpu(cuda):
    dl.manual_seed(1)
    eager = NormedGate().double().to(cuda)
    dl.manual_seed(1)
    model = NormedGate().double().to(cuda)
    fast = dl.compile(model)
    for k in range(4):
        x = (t(6, 4) * (1 + 2 * (k % 2))).to(cuda)
        a, b = fast(x), eager(x)
        a.backward(), b.backward()
        np.testing.assert_allclose(float(a), float(b), rtol=1e-12)
    for p, q in zip(eager.parameters(), model.parameters()):
        np.testing.assert_allclose(q.grad.cpu().numpy(), p.grad.cpu().numpy(), atol=1e-12)
    np.testing.assert_allclose(model.norm.running_var.cpu().numpy(),
                               eager.norm.running_var.cpu().numpy(), atol=1e-12)
    assert model.norm.running_var.device.type == "cuda"
    assert [b.splits for b in fast._compiled.breaks] == [True]


# ------------------------------------------------------------------ fusion by default


def rosenbrock(x):
    a, b = x[:-1], x[1:]
    return (100.0 * (b - a * a) ** 2 + (1.0 - a) ** 2).sum()


def test_fusion_is_on_by_default_and_equals_the_unfused_graphs():
    x = t(1000)
    fused = dl.compile(rosenbrock)
    unfused = dl.compile(rosenbrock, backend="aot_eager")
    xs = [dl.tensor(x.numpy(), requires_grad=True) for _ in range(2)]
    for fn, xi in zip((fused, unfused), xs):
        fn(xi)  # (trace)
        fn(xi).backward()
    np.testing.assert_allclose(xs[0].grad.numpy(), xs[1].grad.numpy(), rtol=1e-12)
    entry = next(iter(fused.cache.values()))
    assert "fused" in entry.forward.op_counts()  # (a loss: f and its gradient in one graph)


def test_the_compiled_method_fuses_by_default_and_equals_the_unfused_method():
    assert "fuse" in Compiled().passes
    x = rng.uniform(-1.5, 1.5, 1000)
    got = dl.grad(rosenbrock, method="compiled")(x)
    want = dl.grad(rosenbrock, method=Compiled(("fold", "cse", "dce")))(x)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_the_first_call_lets_the_traced_run_free_what_it_no_longer_needs():
    import tracemalloc

    x = dl.tensor(rng.uniform(-1.5, 1.5, 100_000), requires_grad=True)
    f = dl.compile(rosenbrock, backend="aot_eager")  # (no kernels: the trace's memory alone)
    tracemalloc.start()
    f(x).backward()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 16 * x.numpy(force=True).nbytes  # (24x while the tracer kept every array)


# ------------------------------------------------------------------ faces and errors


def test_decorator_forms_and_disable():
    @dl.compile
    def a(x):
        return x * 2

    @dl.compile(fullgraph=True, mode="reduce-overhead")
    def b(x):
        return x * 3

    assert a.__name__ == "a" and float(a(dl.ones(1))) == 2 and float(b(dl.ones(1))) == 3

    def c(x):
        return x

    assert dl.compile(c, disable=True) is c


def test_a_compiled_module_shares_parameters_and_state_dict_with_the_original():
    model = mlp()
    fast = dl.compile(model)
    assert isinstance(fast, nn.Module) and fast._orig_mod is model
    assert [p is q for p, q in zip(fast.parameters(), model.parameters())] == [True] * 4
    assert list(fast.state_dict()) == ["_orig_mod." + k for k in model.state_dict()]
    model.note = "kept"
    assert fast.note == "kept"  # (other attributes reach the original)


@pytest.mark.parametrize("kwargs, match", [
    ({"backend": "xla"}, "unknown backend 'xla'"),
    ({"mode": "fastest"}, "unknown mode 'fastest'"),
    ({"dynamic": True}, "dynamic=True"),
    ({"options": {"triton.cudagraphs": True}}, "unknown option"),
    ({"options": {"passes": ("fold", "unroll")}}, "unknown graph passes"),
])
def test_bad_arguments_are_clear_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        dl.compile(lambda x: x, **kwargs)


def test_compiling_something_that_is_not_callable_says_what_to_pass():
    with pytest.raises(TypeError, match="compiles a function or a module"):
        dl.compile(dl.ones(3))


def test_the_examples_in_the_docstrings_run():
    from difflab.jit import breaks
    from difflab.nn import optimized

    for module in (compiler, breaks, optimized):
        finder = doctest.DocTestFinder(exclude_empty=True)
        runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
        for test in finder.find(module, module.__name__, globs={}):
            runner.run(test)
        assert runner.failures == 0, f"{module.__name__}: {runner.failures} failed"
