"""Tracing keeps the program's meaning: random draws, module state, in-place writes, gradients.

Each test is written as a user's program: the eager call and the traced one, under the
same seed, give the same numbers, and the state eager code changes (running statistics,
tensors written in place) changes the same way on every replay.
"""

import copy

import numpy as np
import pytest

import difflab as dl
from difflab import export, jit, nn

F = nn.functional


def _x(*shape, seed=0):
    return dl.tensor(np.random.default_rng(seed).normal(size=shape))


# --------------------------------------------------------------------- random draws

DRAWS = {
    "dropout": lambda x: F.dropout(x, 0.5),
    "nn.Dropout": nn.Dropout(0.3),
    "dropout2d": lambda x: F.dropout2d(x.reshape(1, 4, 5, 1)),
    "alpha_dropout": lambda x: F.alpha_dropout(x, 0.4, training=True),
    "rand_like": lambda x: x * dl.rand_like(x),
    "randn_like": lambda x: x + dl.randn_like(x),
    "randint_like": lambda x: x * dl.randint_like(x, 5),
    "rand": lambda x: x * dl.rand(4, 5, dtype=dl.float64),
    "randn": lambda x: x * dl.randn(4, 5, dtype=dl.float64),
    "randint": lambda x: x + dl.randint(0, 9, (4, 5)),
    "normal": lambda x: dl.normal(x, 0.5),
    "bernoulli": lambda x: dl.bernoulli(dl.sigmoid(x)),
    "bernoulli_p": lambda x: x * dl.bernoulli(x, 0.3),
    "multinomial": lambda x: dl.multinomial(dl.softmax(x, dim=1), 3),
    "randperm": lambda x: x[:, dl.randperm(5)],
    "uniform_": lambda x: x * dl.zeros_like(x).uniform_(),
    "normal_": lambda x: x * dl.zeros_like(x).normal_(),
    "gumbel_softmax": lambda x: F.gumbel_softmax(x, hard=True),
}


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_manual_seed_then_a_replay_equals_manual_seed_then_eager(name):
    f = DRAWS[name]
    x = _x(4, 5)
    traced = jit.trace(f, x)
    dl.manual_seed(0)
    eager = [f(x).numpy() for _ in range(2)]
    dl.manual_seed(0)
    replays = [traced(x).numpy() for _ in range(2)]
    for e, r in zip(eager, replays):
        np.testing.assert_array_equal(r, e)
    assert not np.array_equal(replays[0], replays[1])  # a fresh draw at every replay


def test_the_call_that_traces_draws_what_eager_draws():
    f = jit.script(lambda x: F.dropout(x, 0.5) * 2)
    x = _x(50)
    dl.manual_seed(3)
    first = f(x).numpy()  # (traced on this call)
    dl.manual_seed(3)
    np.testing.assert_array_equal(first, F.dropout(x, 0.5).numpy() * 2)


def test_a_generator_passed_by_the_user_is_read_at_each_replay():
    g = dl.Generator()
    f = lambda x: x * dl.rand(6, dtype=dl.float64, generator=g)  # noqa: E731
    x = _x(6)
    traced = jit.trace(f, x)
    g.manual_seed(7)
    eager = f(x).numpy()
    g.manual_seed(7)
    np.testing.assert_array_equal(traced(x).numpy(), eager)


def test_the_passes_keep_every_draw():
    def f(x):
        dl.rand(3)  # (unread, but it moves the generator on)
        return F.dropout(x, 0.5) + F.dropout(x, 0.5)  # two masks, not one

    x = _x(40)
    traced = jit.trace(f, x, passes=("fold", "cse", "dce"))
    assert traced.graph.op_counts()["dropout_mask"] == 2
    dl.manual_seed(1)
    eager = f(x).numpy()
    dl.manual_seed(1)
    np.testing.assert_array_equal(traced(x).numpy(), eager)


# ------------------------------------------------------------------- module state

NORMS = {
    "BatchNorm1d (N, C)": (lambda: nn.BatchNorm1d(3, dtype=dl.float64), (8, 3)),
    "BatchNorm1d (N, C, L)": (lambda: nn.BatchNorm1d(3, dtype=dl.float64), (4, 3, 5)),
    "BatchNorm2d": (lambda: nn.BatchNorm2d(3, dtype=dl.float64), (4, 3, 2, 2)),
    "BatchNorm2d momentum=None": (lambda: nn.BatchNorm2d(3, momentum=None, dtype=dl.float64),
                                  (4, 3, 2, 2)),
    "InstanceNorm1d tracked": (lambda: nn.InstanceNorm1d(3, track_running_stats=True,
                                                         dtype=dl.float64), (4, 3, 6)),
}


@pytest.mark.parametrize("name", sorted(NORMS))
def test_a_traced_norm_updates_its_running_statistics_as_eager(name):
    make, shape = NORMS[name]
    eager = make()
    module = copy.deepcopy(eager)
    traced = jit.trace(module, _x(*shape))
    for k in range(4):
        x = _x(*shape, seed=k + 1)
        np.testing.assert_array_equal(traced(x).detach().numpy(), eager(x).detach().numpy())
    for (buffer, want), (_, got) in zip(eager.named_buffers(), module.named_buffers()):
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=buffer)
    assert int(module.num_batches_tracked) == 4  # (the trace itself counted no batch)


def test_momentum_none_is_the_cumulative_average_of_the_batches():
    bn = nn.BatchNorm1d(2, momentum=None, dtype=dl.float64)
    batches = [_x(6, 2, seed=k) for k in range(3)]
    for x in batches:
        bn(x)
    means = [x.numpy().mean(0) for x in batches]
    np.testing.assert_allclose(bn.running_mean.numpy(), np.mean(means, axis=0), rtol=1e-12)


def test_a_traced_norm_in_eval_mode_reads_the_running_statistics_of_each_call():
    bn = nn.BatchNorm2d(3, dtype=dl.float64)
    for k in range(3):
        bn(_x(4, 3, 2, 2, seed=k))
    bn.eval()
    x = _x(4, 3, 2, 2, seed=9)
    traced = jit.trace(bn, x)
    assert traced.graph.updates == ()  # (eval mode writes nothing)
    other = nn.BatchNorm2d(3, dtype=dl.float64)
    other.running_mean.fill_(0.5)
    bn.load_state_dict(other.state_dict())  # new statistics after tracing
    np.testing.assert_array_equal(traced(x).detach().numpy(), bn(x).detach().numpy())


# ------------------------------------------------------------------ in-place writes


def test_in_place_writes_are_replayed_as_eager_does_them():
    def f(x):
        y = x * 2
        y.add_(1)
        y[0] = 5.0
        y.clamp_(-1, 3)
        y.mul_(x)
        return y

    x = _x(3, 4)
    traced = jit.trace(f, x)
    other = _x(3, 4, seed=5)
    np.testing.assert_array_equal(traced(other).numpy(), f(other).numpy())


def test_an_argument_written_in_place_is_written_at_every_replay():
    def f(x):
        x.add_(1)
        return x * 2

    traced = jit.trace(f, _x(3))
    assert traced.graph.updates == ("x",)
    a, b = _x(3, seed=2), _x(3, seed=2)
    np.testing.assert_array_equal(traced(a).numpy(), f(b).numpy())
    np.testing.assert_array_equal(a.numpy(), b.numpy())  # (the caller's tensor, written)


def _data_update(w, g):
    w.data.add_(g * -0.1)  # (an optimizer's update, through .data)
    return w * 1.0


def _write_through_detach(w, g):
    d = w.detach()
    d.mul_(2.0)
    return w + d + g


def _write_then_read_detached(w, g):
    d = w.detach()
    w.add_(g)
    return d * 1.0


@pytest.mark.parametrize("f", [_data_update, _write_through_detach, _write_then_read_detached])
def test_a_write_into_a_detached_view_is_a_write_into_the_tensor(f):
    """x.detach() and x.data share x's memory (a `detach` line, a new array on it): an
    in-place write into either is the other's new value too, as in eager code, and an
    argument written through them is written at every replay."""
    traced = jit.trace(f, (_x(3), _x(3, seed=1)))
    assert traced.graph.op_counts()["detach"] >= 1
    for seed in (2, 3):
        a, b, g = _x(3, seed=seed), _x(3, seed=seed), _x(3, seed=seed + 10)
        np.testing.assert_array_equal(traced(a, g).numpy(), f(b, g).numpy())
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_a_value_computed_under_no_grad_is_read_through_a_stop_gradient():
    """A no_grad block in a traced function: its values are off the tape, so the graph
    reads them through one `detach` line where gradients flow, and the graph's gradient
    stops there as the tape's does (before, it went through them)."""
    def f(x):
        with dl.no_grad():
            c = (x * x).exp()
        return (c * x).sum() + (c * x.sin()).sum()

    x = _x(4).double()
    traced = jit.trace(f, x)
    assert traced.graph.op_counts()["detach"] == 1  # (one line for c, read twice)
    leaf = x.clone().requires_grad_()
    f(leaf).backward()
    got = jit.grad(traced.graph).run(x.numpy())[1]
    np.testing.assert_allclose(got, leaf.grad.numpy(), rtol=1e-13)
    np.testing.assert_allclose(got, np.exp(x.numpy() ** 2) * (1 + np.cos(x.numpy())),
                               rtol=1e-13)


def _write_into_computed(x, y):
    buf = x * 1.5  # (requires grad: computed from x)
    with dl.no_grad():
        buf.add_(y * y)  # (off the tape: y gets no gradient, x's is the identity's)
    return (buf * buf).sum()


def _write_into_argument(w, y):
    with dl.no_grad():
        w.mul_(0.5)  # (a leaf that requires grad: an optimizer's update, a decay)
        w.add_(y)
    return (w * y).sum() + (w * w).sum()


@pytest.mark.parametrize("f", [_write_into_computed, _write_into_argument])
def test_a_write_under_no_grad_into_a_tensor_that_requires_grad_keeps_its_derivative(f):
    """Eager autograd records nothing under no_grad: the tensor written takes the new
    values but keeps its tape, so the gradient reaches what it was computed from as if
    nothing were written, and none reaches what the write read.  The graph's value of it
    is a no_grad_write(old, new) line with that derivative (before, the graph
    differentiated the write: y got a gradient, w's was halved), by the replay's backward,
    the backward graph, the graph's forward mode, and after a save and load."""
    def fresh(seed):
        return (_x(3, seed=seed).double().requires_grad_(),
                _x(3, seed=seed + 10).double().requires_grad_())

    traced = jit.trace(f, fresh(0))
    loaded = export.graph_from_json(export.graph_to_json(traced.graph), traced.graph.constants)
    for seed in (1, 2):
        (a, b), (c, d) = fresh(seed), fresh(seed)
        f(a, b).backward()
        traced(c, d).backward()
        np.testing.assert_array_equal(c.detach().numpy(), a.detach().numpy())  # (written)
        np.testing.assert_array_equal(c.grad.numpy(), a.grad.numpy())
        assert (d.grad is None) == (b.grad is None), "y's gradient: eager has none"
        if b.grad is not None:
            np.testing.assert_array_equal(d.grad.numpy(), b.grad.numpy())
        x, y = fresh(seed)
        plain = [x.detach().numpy(), y.detach().numpy()]
        gradients = jit.grad(loaded).run(*(dl.tensor(v) for v in plain))[-2:]
        np.testing.assert_allclose(gradients[0].numpy(), a.grad.numpy(), rtol=1e-13)
        np.testing.assert_allclose(gradients[1].numpy(), 0.0 if b.grad is None
                                   else b.grad.numpy(), rtol=1e-13)
        results = jit.jvp(traced.graph, wrt=[traced.graph.inputs[0].name]).run(
            *(dl.tensor(v) for v in plain), dl.tensor(np.eye(3)[None, 0]))
        tangent = results[len(results) // 2]  # (the loss's: outputs, then their tangents)
        np.testing.assert_allclose(tangent.numpy(), a.grad.numpy()[:1], rtol=1e-13)
    assert traced.graph.op_counts()["no_grad_write"] >= 1
    assert loaded.op_counts() == traced.graph.op_counts()


class _RawWrite(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", dl.zeros(1))

    def forward(self, x):
        self.count.array += 1  # (past difflab's operations: no graph can replay it)
        return x * 2


class _Replace(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(dl.ones(3))

    def forward(self, x):
        self.w.data = self.w * 2
        return x * self.w


@pytest.mark.parametrize("module, match", [(_RawWrite, "outside difflab's operations"),
                                           (_Replace, "replaced the array")])
def test_writes_a_graph_cannot_replay_are_refused_when_tracing(module, match):
    with pytest.raises(jit.GraphError, match=match):
        jit.trace(module(), _x(3))


# ---------------------------------------------------------------------- gradients


def _model():
    dl.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(0.3),
                         nn.Linear(8, 1)).to(dl.float64)


def test_a_traced_modules_output_backpropagates_into_its_parameters():
    eager, module = _model(), _model()
    traced = jit.trace(module, _x(16, 3))
    x = _x(16, 3, seed=4)
    dl.manual_seed(2)
    eager(x).pow(2).sum().backward()
    dl.manual_seed(2)
    traced(x).pow(2).sum().backward()
    for (name, p), q in zip(eager.named_parameters(), module.parameters()):
        np.testing.assert_array_equal(q.grad.numpy(), p.grad.numpy(), err_msg=name)


def test_a_fused_traced_function_backpropagates_as_eager():
    def f(x, w):
        return ((x * w).sin() * 2 + 1).tanh().sum()

    x, w = _x(5, 3), _x(3, seed=1).requires_grad_()
    traced = jit.trace(f, (x, w), passes=["fold", "cse", "dce", "fuse"])
    assert "fused" in traced.graph.op_counts()
    traced(x, w).backward()
    got, w.grad = w.grad.numpy().copy(), None
    f(x, w).backward()
    np.testing.assert_array_equal(got, w.grad.numpy())


def test_parameters_changed_after_tracing_are_read_at_each_call():
    model = _model().eval()
    x = _x(5, 3)
    traced = jit.trace(model, x)
    with dl.no_grad():
        model[0].weight.mul_(0.5)
    np.testing.assert_array_equal(traced(x).detach().numpy(), model(x).detach().numpy())
    model.load_state_dict(_model().state_dict())
    np.testing.assert_array_equal(traced(x).detach().numpy(), model(x).detach().numpy())


def test_a_closures_weight_is_read_and_differentiated_at_each_call():
    w = dl.tensor([1.0, 2.0, 3.0], dtype=dl.float64).requires_grad_()
    traced = jit.trace(lambda x: (x * w).sum(), _x(3))
    with dl.no_grad():
        w.mul_(2.0)
    x = _x(3, seed=1)
    loss = traced(x)
    np.testing.assert_allclose(loss.item(), (x * w).sum().item(), rtol=1e-15)
    loss.backward()
    np.testing.assert_array_equal(w.grad.numpy(), x.numpy())



@pytest.mark.parametrize("derivative", ["grad", "hessian", "jacobian"])
def test_the_compiled_method_reads_a_closures_trainable_weights_at_each_call(derivative):
    # A function of x that closes over a module whose parameters require grad (a user's
    # model, not in training): the derivative graphs take the weights as parameters, read
    # at each call.  They lost them ("no value for parameter 'captured0'").
    lin = nn.Linear(3, 2).double()
    if derivative == "jacobian":
        f = lambda v: dl.tanh(lin(v))  # noqa: E731
    else:
        f = lambda v: dl.tanh(lin(v)).sum()  # noqa: E731
    x = _x(3)
    for _ in range(2):  # (the second call: after the weights change in place)
        got = getattr(dl, derivative)(f, method="compiled")(x)
        want = getattr(dl, derivative)(f, method="reverse")(x)
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
        with dl.no_grad():
            lin.weight.mul_(-2.0)


def test_a_closure_holding_the_example_argument_reads_it_as_a_constant():
    # The closure's x is the example the trace was given: eager code multiplies a new
    # argument by that x, so the replay must too (it replayed y * y: the closure's tensor
    # was taken for the argument because both held one array).
    x = _x(3)
    traced = jit.trace(lambda y: y * x, x)
    y = _x(3, seed=1)
    np.testing.assert_array_equal(traced(y).numpy(), (y * x).numpy())
    # and the compiled gradient differentiates the argument only, as the tape does
    # (x * x * x was differentiated: 3x² in place of 2x·x... and 6x under finite differences)
    f = lambda v: (v * v * x).sum()  # noqa: E731
    np.testing.assert_allclose(dl.grad(f, method="compiled")(x),
                               dl.grad(f, method="reverse")(x), rtol=1e-15)
    outer = lambda v: dl.grad(lambda y: (y * y * v).sum(), method="compiled")(v).sum()  # noqa: E731
    np.testing.assert_allclose(dl.grad(outer, method="numeric")(x), 4 * x.numpy(), rtol=1e-6)


# ------------------------------------------------------------- training, end to end


@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_traced_training_with_dropout_and_batchnorm_equals_eager(optimizer):
    eager, module = _model(), _model()
    traced = jit.trace(module, _x(16, 3))
    make = {"SGD": lambda p: dl.optim.SGD(p, lr=0.1, momentum=0.9),
            "Adam": lambda p: dl.optim.Adam(p, lr=0.01)}[optimizer]
    runs = {}
    for label, model, call in (("eager", eager, eager), ("traced", module, traced)):
        opt = make(model.parameters())
        dl.manual_seed(11)
        losses = []
        for step in range(5):
            x, y = _x(16, 3, seed=100 + step), _x(16, 1, seed=200 + step)
            loss = F.mse_loss(call(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        runs[label] = losses
    np.testing.assert_allclose(runs["traced"], runs["eager"], rtol=0, atol=1e-12)
    for (name, a), (_, b) in zip(eager.state_dict().items(), module.state_dict().items()):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=0, atol=1e-12, err_msg=name)


# ----------------------------------------------------------- saved graphs, compiled


def test_a_loaded_graph_draws_from_the_current_generator(tmp_path):
    f = lambda x: F.dropout(x, 0.5) + dl.randn_like(x)  # noqa: E731
    x = _x(30)
    export.save(export.export(f, (x,)), tmp_path / "f.dlg")
    loaded = export.load(tmp_path / "f.dlg").module()
    dl.manual_seed(5)
    eager = [f(x).numpy() for _ in range(2)]
    dl.manual_seed(5)
    replays = [loaded(x).numpy() for _ in range(2)]
    np.testing.assert_array_equal(replays, eager)
    assert not np.array_equal(*replays)


def test_a_loaded_batchnorm_writes_its_running_statistics(tmp_path):
    eager, module = nn.BatchNorm1d(3, dtype=dl.float64), nn.BatchNorm1d(3, dtype=dl.float64)
    export.save(export.export(module, (_x(8, 3),)), tmp_path / "bn.dlg")
    loaded = export.load(tmp_path / "bn.dlg")
    for k in range(3):
        x = _x(8, 3, seed=k)
        np.testing.assert_array_equal(loaded.module()(x).numpy(), eager(x).detach().numpy())
    for name, want in eager.state_dict().items():
        np.testing.assert_array_equal(loaded.state_dict[name], want.numpy(), err_msg=name)


def test_a_user_generator_cannot_be_saved_in_a_graph(tmp_path):
    g = dl.Generator()
    ep = export.export(lambda x: x * dl.rand(3, generator=g), (_x(3),))
    with pytest.raises(jit.GraphError, match="Generator"):
        export.save(ep, tmp_path / "f.dlg")


@pytest.mark.parametrize("call", range(3))
def test_the_compiled_gradient_of_a_random_function_equals_reverse_mode(call):
    f = lambda x: (F.dropout(x, 0.5) * x.sin()).sum()  # noqa: E731
    x = _x(12)
    dl.manual_seed(call)
    want = dl.grad(f, method="reverse")(x)
    dl.manual_seed(call)
    got = dl.grad(f, method="compiled")(x)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


# ------------------------------------------------------------------ backward and step inside


def _linear():
    dl.manual_seed(0)
    return dl.nn.Linear(2, 1)


def test_tracing_a_function_that_calls_backward_is_refused_before_grad_is_set():
    model = _linear()

    def step(x):
        loss = model(x).pow(2).mean()
        loss.backward()
        return loss

    with pytest.raises(jit.GraphError, match=r"calls backward\(\).*Trace the forward only"):
        jit.trace(step, (dl.ones(4, 2),))
    assert model.weight.grad is None and model.bias.grad is None  # refused before the write


def test_tracing_an_optimizer_step_is_refused_and_the_parameters_are_unchanged():
    model = _linear()
    opt = dl.optim.SGD(model.parameters(), lr=0.1)
    model(dl.ones(4, 2)).sum().backward()
    before = model.weight.detach().clone()

    def step(x):
        opt.step()
        return model(x)

    with pytest.raises(jit.GraphError, match=r"SGD\.step\(\).*outside the traced function"):
        jit.trace(step, (dl.ones(4, 2),))
    assert dl.equal(model.weight, before)


def test_the_forward_traced_alone_fills_grad_on_replay_as_the_error_advises():
    model, eager = _linear(), _linear()
    x = dl.tensor([[1.0, 2.0], [3.0, -1.0]])
    traced = jit.trace(lambda x: model(x).pow(2).mean(), (x,))
    traced(x).backward()
    eager(x).pow(2).mean().backward()
    assert dl.allclose(model.weight.grad, eager.weight.grad)
    assert dl.allclose(model.bias.grad, eager.bias.grad)
