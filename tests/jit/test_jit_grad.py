"""The backward of a graph is a graph: equal to autograd.grad on every primitive.

Each case is traced at one input and its graph backward replayed at
*another*, so a value baked in while tracing (a mask, a saved array) would
show up as a wrong gradient.
"""

import numpy as np
import pytest

import difflab as dl
from difflab import jit
from difflab.ops.registry import PRIMITIVES
from difflab.testing import samples

INT = samples.INT  # an input of class indices (no gradient)

# name -> (function of tensors, [(shape, (low, high) or (INT, n))]): every primitive with a
# derivative, from the one table of sample inputs (difflab/testing/samples.py).
CASES = {name: (case.call, list(case.specs)) for name, case in samples.primitive_cases().items()
         if PRIMITIVES[name].differentiable}


def _inputs(specs, rng):
    out = []
    for shape, (low, high) in specs:
        if low == INT:
            out.append(dl.tensor(rng.integers(0, high, size=shape)))
        else:
            out.append(dl.tensor(rng.uniform(low, high, size=shape)).requires_grad_())
    return out


# The registry as the package defines it (other tests register primitives at run time);
# those without a derivative have no backward (their replay: tests/jit/test_jit_replay.py).
BUILT_IN = {name for name, p in PRIMITIVES.items() if p.differentiable}


def test_every_primitive_has_a_case():
    assert set(CASES) == BUILT_IN


@pytest.mark.parametrize("name", sorted(CASES))
def test_graph_backward_equals_autograd_grad(name):
    fn, specs = CASES[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    weights = {}

    def loss(*xs):
        y = fn(*xs)
        if y.shape not in weights:  # a fixed random cotangent, so ȳ is not all ones
            weights[y.shape] = dl.tensor(rng.uniform(0.5, 1.5, size=y.shape))
        return (y * weights[y.shape]).sum()

    traced = jit.trace(loss, _inputs(specs, rng))
    backward = jit.grad(traced.graph)
    assert backward.nodes[: len(traced.graph.nodes)] != []
    for _ in range(2):  # replayed at new inputs, not the traced ones
        xs = _inputs(specs, rng)
        got = backward.run(*[x.array for x in xs])
        floats = [x for x in xs if x.requires_grad]
        want = dl.autograd.grad(loss(*xs), floats)
        np.testing.assert_allclose(got[0], loss(*xs).detach().numpy(), rtol=1e-12)
        for g, w in zip(got[1:], want):
            np.testing.assert_allclose(g, w.numpy(), rtol=1e-10, atol=1e-12)


def test_second_derivative_is_the_backward_of_the_backward():
    f = jit.trace(lambda x: (x.sin() * x).sum(), dl.tensor(np.ones(3)).requires_grad_())
    g = jit.grad(f.graph)  # returns (f, f')
    h = jit.grad(g, output=0)  # the same, through the new graph
    x = np.array([0.3, -1.2, 2.0])
    value, d1 = g.run(x)
    np.testing.assert_allclose(d1, np.sin(x) + x * np.cos(x))
    # d/dx of sum(f'(x)): the trace of the Hessian, elementwise f''(x)
    s = jit.trace(lambda x: dl.autograd.grad((x.sin() * x).sum(), x, create_graph=True)[0].sum(),
                  dl.tensor(np.ones(3)).requires_grad_())
    hess_diag = jit.grad(s.graph).run(x)[1]
    np.testing.assert_allclose(hess_diag, 2 * np.cos(x) - x * np.sin(x), rtol=1e-12)
    assert len(h.run(x)) == 3


def test_a_training_step_is_one_graph():
    rng = np.random.default_rng(1)
    x, y = dl.tensor(rng.normal(size=(8, 3))), dl.tensor(rng.normal(size=(8, 1)))
    w0, b0 = rng.normal(size=(3, 1)), np.zeros(1)

    def step(x, y, w, b):
        loss = ((x @ w + b - y) ** 2).mean()
        gw, gb = dl.autograd.grad(loss, [w, b])  # recorded: tracing records every backward
        return loss, w - 0.1 * gw, b - 0.1 * gb

    traced = jit.trace(step, (x, y, dl.tensor(w0).requires_grad_(),
                              dl.tensor(b0).requires_grad_()))
    names = set(traced.graph.op_counts())
    assert {"matmul", "pow", "sub", "mul"} <= names
    w, b = dl.tensor(w0).requires_grad_(), dl.tensor(b0).requires_grad_()
    wg, bg = w0, b0
    for _ in range(5):
        loss_e, w_e, b_e = step(x, y, w, b)
        loss_g, wg, bg = traced.graph.run(x.array, y.array, wg, bg)
        np.testing.assert_allclose(loss_g, loss_e.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(wg, w_e.detach().numpy(), rtol=1e-12)
        w, b = w_e.detach().requires_grad_(), b_e.detach().requires_grad_()


def test_grad_of_a_non_scalar_output_or_unknown_input_is_a_clear_error():
    f = jit.trace(lambda x: x * 2, dl.tensor(np.ones(3)))
    with pytest.raises(jit.GraphError, match="scalar"):
        jit.grad(f.graph)
    g = jit.trace(lambda x: (x * 2).sum(), dl.tensor(np.ones(3)))
    with pytest.raises(jit.GraphError, match="'w' is not an input"):
        jit.grad(g.graph, wrt=["w"])


def _conv_model():
    import difflab.nn as nn

    dl.manual_seed(0)
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.Tanh(), nn.Conv2d(4, 3, 3, stride=2),
                         nn.Flatten(), nn.Linear(3 * 3 * 3, 2))


def test_a_first_order_backward_through_conv2d_reuses_the_saved_columns():
    # A training step's backward (no create_graph) is recorded first order: conv2d's
    # weight adjoint is its array rule on the columns saved by the forward node (v.s2),
    # not a second copy of the windows (im2col) as a twice-differentiable record needs;
    # one node per layer gives all its adjoints (the first, then the others as v.s0, ...).
    model = _conv_model()
    rng = np.random.default_rng(3)
    x0, x1 = rng.normal(size=(2, 2, 7, 7)), rng.normal(size=(2, 2, 7, 7))

    def step(x):
        loss = (model(x) ** 2).sum()
        return (loss,) + dl.autograd.grad(loss, list(model.parameters()))

    traced = jit.trace(step, dl.tensor(x0))
    counts = traced.graph.op_counts()
    assert counts.get("im2col", 0) == 0
    # (the first layer's input x needs no adjoint: its node starts at the weight's)
    assert counts["conv2d_vjp0"] == 1 and counts["conv2d_vjp1"] == 1
    assert sum(len(n.saved) for n in traced.graph.nodes if n.op_name.startswith("conv2d_vjp")) == 3
    named = {i.name: i.example for i in traced.graph.parameters()}
    replayed = traced.graph.run(x1, **named)  # at another input: nothing was baked in
    for got, want in zip(replayed, step(dl.tensor(x1))):
        np.testing.assert_allclose(got, want.detach().numpy(), rtol=1e-12, atol=1e-14)


def test_a_recorded_backward_through_conv2d_stays_twice_differentiable():
    # With create_graph the gradient is differentiated again (a gradient penalty):
    # the weight adjoint must remain a function of x, so the columns are copied again.
    model = _conv_model()
    rng = np.random.default_rng(4)
    x0, x1 = rng.normal(size=(2, 2, 7, 7)), rng.normal(size=(2, 2, 7, 7))
    w = model[0].weight

    def penalty(x):
        (gw,) = dl.autograd.grad((model(x) ** 2).sum(), [w], create_graph=True)
        return (gw ** 2).sum()

    traced = jit.trace(penalty, dl.tensor(x0).requires_grad_())
    assert traced.graph.op_counts().get("im2col", 0) >= 1
    assert not any(name.startswith("conv2d_vjp") for name in traced.graph.op_counts())
    d = jit.grad(traced.graph, wrt=["x"])
    named = {i.name: i.example for i in traced.graph.parameters()}
    got = d.run(x1, **named)[1]
    x = dl.tensor(x1).requires_grad_()
    (want,) = dl.autograd.grad(penalty(x), [x])
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-10, atol=1e-12)


def test_a_first_order_conv_step_survives_save_and_load(tmp_path):
    from difflab import export

    model = _conv_model()
    x = np.random.default_rng(5).normal(size=(2, 2, 7, 7))

    def step(x):
        loss = (model(x) ** 2).sum()
        return (loss,) + dl.autograd.grad(loss, list(model.parameters()))

    ep = export.export(step, (dl.tensor(x),))
    assert any(n.op_name.startswith("conv2d_vjp") and n.saved for n in ep.graph.nodes)
    export.save(ep, tmp_path / "step.dlg")
    loaded = export.load(tmp_path / "step.dlg")
    named = ep.state_dict  # (the model's weights: parameters the step read from outside)
    for got, want in zip(loaded.graph.run(x, **named), ep.graph.run(x, **named)):
        np.testing.assert_array_equal(got, want)


def test_a_traced_weighted_cross_entropy_step_reads_each_batchs_labels():
    # The mean of a weighted NLL divides by Σ w[t]: it depends on the labels, so the
    # backward graph must compute it from them, not keep the traced batch's number.
    F = dl.nn.functional
    weights = dl.tensor(np.array([1.0, 5.0, 0.2]))

    def loss_and_grad(z, t):
        loss = F.cross_entropy(z, t, weight=weights)
        return loss, dl.autograd.grad(loss, [z])[0]

    rng = np.random.default_rng(6)
    traced = jit.trace(loss_and_grad, (dl.tensor(rng.normal(size=(4, 3))).requires_grad_(),
                                       dl.tensor(np.array([0, 0, 0, 0]))))
    z, t = rng.normal(size=(4, 3)), dl.tensor(np.array([1, 1, 2, 1]))
    got = traced(dl.tensor(z).requires_grad_(), t)
    want = loss_and_grad(dl.tensor(z).requires_grad_(), t)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-12)
