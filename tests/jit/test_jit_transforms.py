"""Forward mode as a graph (jit.jvp), and the compiled method built on the transforms.

Every primitive's tangent graph is replayed at inputs other than the traced
ones and compared with J·ṫ from the tape (the Jacobian row by row with
autograd.grad); the compiled Hessian, Jacobian and gradient are compared
with the tape's and forward mode's, on random points (hypothesis).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import difflab as dl
from difflab import jit
from difflab.diff import differentiators
from difflab.ops.registry import PRIMITIVES
from difflab.testing.samples_complex import complex_table
from tests.jit.test_jit_grad import CASES, _inputs

COMPLEX_PRIMITIVES = set(complex_table(dl, ((3, 4), (-2, 2))))


def _tape_jacobians(fn, xs):
    """∂y/∂x for every floating input, from the tape, shape (y.size, x.size)."""
    floats = [x for x in xs if x.requires_grad]
    y = fn(*xs)
    flat = y.reshape(-1)
    rows = [[] for _ in floats]
    for j in range(flat.shape[0]):
        grads = dl.autograd.grad(flat[j], floats, retain_graph=True, allow_unused=True)
        for row, g, x in zip(rows, grads, floats):
            row.append(np.zeros(x.numel()) if g is None else g.numpy().reshape(-1))
    return y, [np.array(r) for r in rows]


@pytest.mark.parametrize("name", sorted(CASES))
def test_graph_forward_mode_equals_the_tape_on_every_primitive(name):
    if name == "prod":
        pytest.skip("prod's derivative rule is first order only (no jvp through its VJP node)")
    if name in COMPLEX_PRIMITIVES:  # (tests/core/test_core_complex.py checks the refusal)
        pytest.skip("forward mode refuses complex values (abs's JVP is not written for them)")
    fn, specs = CASES[name]
    rng = np.random.default_rng(sum(map(ord, name)) + 1)
    traced = jit.trace(fn, _inputs(specs, rng))
    k = 3
    if getattr(PRIMITIVES[name], "jvp", None) is None:  # (the method then uses the tape)
        with pytest.raises(jit.GraphError, match=f"= {name}.*no forward-mode rule"):
            jit.jvp(traced.graph, directions=k)
        return
    tangents = jit.jvp(traced.graph, directions=k)
    # (a float32 round trip rounds tangents and cotangents at different places)
    rtol = 1e-6 if name == "to_dtype" else 1e-10
    n_outputs = len(traced.graph.outputs)
    for _ in range(2):  # replayed at new inputs, not the traced ones
        xs = _inputs(specs, rng)
        floats = [x for x in xs if x.requires_grad]
        dots = [rng.normal(size=(k,) + tuple(x.shape)) for x in floats]
        got = tangents.run(*[x.array for x in xs], *dots)
        y, jacobians = _tape_jacobians(fn, xs)
        np.testing.assert_allclose(got[0], y.detach().numpy(), rtol=1e-12)
        want = sum(d.reshape(k, -1) @ J.T for d, J in zip(dots, jacobians))
        np.testing.assert_allclose(got[n_outputs].reshape(k, -1), want, rtol=rtol,
                                   atol=1e-12)


def test_jvp_listing_and_seeds_as_constants():
    f = jit.trace(lambda x: (x.sin() * x).sum(), dl.tensor(np.ones(3)).requires_grad_())
    g = jit.jvp(f.graph, directions=3)
    assert [i.name for i in g.arguments()] == ["x", "x_dot"]
    assert "x_dot: (3, 3) float64" in g.listing()
    hess = jit.optimize(jit.jvp(jit.grad(f.graph), directions=3, seeds={"x": np.eye(3)}))
    assert [i.name for i in hess.arguments()] == ["x"]
    x = np.array([0.5, 0.1, -0.7])
    np.testing.assert_allclose(hess.run(x)[-1], np.diag(2 * np.cos(x) - x * np.sin(x)),
                               rtol=1e-14, atol=1e-15)


def test_jvp_bad_input_is_a_clear_error():
    f = jit.trace(lambda x: (x * x).sum(), dl.tensor(np.ones(3)))
    with pytest.raises(jit.GraphError, match="'w' is not an input"):
        jit.jvp(f.graph, wrt=["w"])
    with pytest.raises(jit.GraphError, match="positive integer"):
        jit.jvp(f.graph, directions=0)
    with pytest.raises(jit.GraphError, match=r"seed for 'x' has shape \(3,\)"):
        jit.jvp(f.graph, directions=3, seeds={"x": np.ones(3)})
    fused = jit.optimize(jit.trace(lambda x: (x.sin() * 2 + 1).tanh(), dl.tensor(np.ones(3))
                                   ).graph, ["fuse"])
    assert "fused" in fused.op_counts()
    with pytest.raises(jit.GraphError, match="fused.*before fusing"):
        jit.jvp(fused)
    i = jit.trace(lambda x, n: x * n, (dl.tensor(np.ones(3)), dl.tensor(np.arange(3))))
    with pytest.raises(jit.GraphError, match="int64; only floating"):
        jit.jvp(i.graph, wrt=["n"])


# ------------------------------------------------------------------ method="compiled"

A = np.random.default_rng(3).normal(size=(5, 5)) / 2


def scalar(v):
    return (dl.sin(v) * v).sum() + (dl.tanh(dl.tensor(A) @ v) ** 2).sum()


def two_arguments(x, y):
    return (dl.exp(x * y[0]) + x ** 3 * y[1]).sum()


def wide(v):  # R⁵ -> R²: fewer outputs than inputs (the batched reverse pass)
    return dl.stack([(v ** 2).sum(), (dl.sin(v) * dl.arange(5.0)).sum()])


def tall(v):  # R⁵ -> R^(3x5): more outputs (forward mode)
    return dl.stack([dl.tanh(dl.tensor(A) @ v), v * v, dl.cos(v)])


vectors = st.lists(st.floats(-2, 2), min_size=5, max_size=5).map(np.array)


@settings(max_examples=25, deadline=None)
@given(vectors)
def test_compiled_hessian_equals_reverse_and_forward(x):
    want = dl.hessian(scalar)(x)
    np.testing.assert_allclose(dl.hessian(scalar, method="compiled")(x), want,
                               rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(dl.hessian(scalar, method="forward")(x), want,
                               rtol=1e-12, atol=1e-13)


@settings(max_examples=25, deadline=None)
@given(vectors, vectors)
def test_compiled_jacobians_and_gradients_equal_the_tape(x, u):
    for f in (wide, tall):
        np.testing.assert_allclose(dl.jacobian(f, method="compiled")(x), dl.jacobian(f)(x),
                                   rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(dl.grad(scalar, method="compiled")(x), dl.grad(scalar)(x),
                               rtol=1e-12, atol=1e-13)
    value, dot = dl.jvp(tall, [x], [u], method="compiled")
    want_value, want_dot = dl.jvp(tall, [x], [u], method="forward")
    np.testing.assert_allclose(value, want_value, rtol=1e-14)
    np.testing.assert_allclose(dot, want_dot, rtol=1e-12, atol=1e-13)


def test_compiled_with_several_arguments_and_blocks():
    x, y = np.array([0.3, -0.2, 0.9]), np.array([0.5, 1.5])
    for transform in (dl.grad, dl.hessian, dl.jacobian):
        got = transform(two_arguments, method="compiled", argnums=(0, 1))(x, y)
        want = transform(two_arguments, argnums=(0, 1))(x, y)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-13)


def test_compiled_traces_once_per_shape_and_reports_its_cost():
    method = differentiators.Compiled()
    h = dl.hessian(scalar, method=method)
    _, first = h(np.ones(5), return_cost=True)
    _, second = h(np.full(5, 0.5), return_cost=True)
    assert len(method._cache[scalar]) == 1
    assert second.compile_seconds < first.compile_seconds
    assert second.evaluations == 1 and second.graph_nodes > 0
    g = dl.grad(lambda v: (v ** 2).sum(), method=method)
    np.testing.assert_allclose(g(np.ones(2)), [2.0, 2.0])
    np.testing.assert_allclose(g(np.ones(4)), [2.0] * 4)  # a new shape: traced again


def test_compiled_inside_another_derivative_uses_forward_mode():
    # d/dx of the compiled derivative: the inner point is a dual number, not an array
    inner = dl.derivative(lambda x: dl.sin(x) * x, method="compiled")
    outer = dl.derivative(inner, method="forward")
    x = 0.7
    np.testing.assert_allclose(outer(x), 2 * np.cos(x) - x * np.sin(x), rtol=1e-12)


def test_compiled_is_one_of_the_methods():
    assert "compiled" in differentiators.available()
    with pytest.raises(ValueError, match="unknown graph pass 'nope'"):
        differentiators.Compiled(passes=("nope",))
    with pytest.raises(ValueError, match="scalar"):
        dl.grad(lambda v: v * 2, method="compiled")(np.ones(3))
    with pytest.raises(TypeError, match="must return a number or an array.*tuple"):
        dl.jacobian(lambda v: (v, v), method="compiled")(np.ones(3))


def test_compiled_on_the_gpu_path(device):
    x = dl.tensor([0.3, -0.2, 0.9, 1.1, -1.4], device=device).array
    got = dl.hessian(scalar_on(device), method="compiled")(x)
    assert dl.backend.device_of(got).type == device.split(":")[0]
    want = dl.hessian(scalar)(dl.backend.to_numpy(x))
    np.testing.assert_allclose(dl.backend.to_numpy(got), want, rtol=1e-12, atol=1e-13)


def scalar_on(device):
    a = dl.tensor(A, device=device)
    return lambda v: (dl.sin(v) * v).sum() + (dl.tanh(a @ v) ** 2).sum()


class Cube(dl.autograd.Function):
    """A user's Function with a backward and no forward-mode rule."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x ** 2


def test_every_primitive_has_a_forward_mode_rule():
    assert [name for name, p in PRIMITIVES.items() if getattr(p, "jvp", None) is None] == []


def test_compiled_without_a_forward_rule_uses_the_tape_and_says_so():
    def loss(x):  # Cube has no forward-mode rule: no graph Hessian
        return (Cube.apply(x) * x.sin()).sum()

    x = np.random.default_rng(0).normal(size=16)
    got, cost = dl.hessian(loss, method="compiled")(x, return_cost=True)
    np.testing.assert_allclose(got, dl.hessian(loss)(x), rtol=1e-12)
    assert any("Cube" in note and "tape" in note for note in cost.notes)


def test_a_classifiers_hessian_is_one_graph_pass_through_its_losses_and_norms():
    F = dl.nn.functional
    rng = np.random.default_rng(5)
    labels, targets = dl.tensor(np.array([0, 2, 1])), dl.tensor(rng.uniform(0, 1, (3, 4)))
    weights = dl.tensor(np.array([1.0, 3.0, 0.5, 2.0]))

    def f(v):
        z = F.layer_norm(v.reshape(3, 4), (4,)) * 2.0
        return (F.cross_entropy(z, labels, weight=weights)
                + F.binary_cross_entropy_with_logits(z, targets))

    x = rng.normal(size=12)
    got, cost = dl.hessian(f, method="compiled")(x, return_cost=True)
    assert not any("tape" in note for note in cost.notes)
    np.testing.assert_allclose(got, dl.hessian(f)(x), rtol=1e-9, atol=1e-12)


def test_a_cnn_hessian_is_one_graph_pass_through_conv_and_pools():
    F = dl.nn.functional
    rng = np.random.default_rng(3)
    w = dl.tensor(rng.normal(size=(4, 1, 3, 3)) / 3)
    b = dl.tensor(rng.normal(size=4))

    def f(v):
        y = F.conv2d(v.reshape(1, 2, 4, 4), w, b, padding=1, groups=2).tanh()
        return (F.max_pool2d(y, 2, padding=1).sin() + F.avg_pool2d(y, 2, stride=1)
                .sum()).sum()

    x = rng.normal(size=32)
    got, cost = dl.hessian(f, method="compiled")(x, return_cost=True)
    assert not any("tape" in note for note in cost.notes)  # (every rule has a JVP now)
    np.testing.assert_allclose(got, dl.hessian(f)(x), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("which", ["x", "w", "b", "all"])
def test_conv2d_tangents_of_each_input_with_groups_stride_dilation(which):
    rng = np.random.default_rng(4)
    specs = {"x": (2, 4, 7, 7), "w": (6, 2, 3, 3), "b": (6,)}
    xs = [dl.tensor(rng.normal(size=s)).requires_grad_(which in (name, "all"))
          for name, s in specs.items()]

    def conv(x, w, b):
        return dl.nn.functional.conv2d(x, w, b, stride=2, padding=1, dilation=2, groups=2)

    tangents = jit.jvp(jit.trace(conv, xs).graph, wrt=None if which == "all" else [which],
                       directions=2)
    dots = [rng.normal(size=(2,) + tuple(x.shape)) for x in xs if x.requires_grad]
    got = tangents.run(*[x.array for x in xs], *dots)
    _, jacobians = _tape_jacobians(conv, xs)
    want = sum(d.reshape(2, -1) @ J.T for d, J in zip(dots, jacobians))
    np.testing.assert_allclose(got[1].reshape(2, -1), want, rtol=1e-10, atol=1e-12)


def test_a_rule_that_branches_on_a_value_is_not_baked_in():
    # cumprod's rules on arrays ask whether any x is 0 (then they take another formula);
    # recorded into a graph they take the formula that is right everywhere (made of where
    # and cumprod itself): traced at a point without zeros, the graphs must still be right
    # at a point with one.
    def f(x):
        return (dl.cumprod(x, dim=0) * dl.arange(1.0, 5.0)).sum()

    traced = jit.trace(f, dl.tensor([0.5, 1.5, 2.0, 0.7], dtype=dl.float64).requires_grad_())
    backward = jit.grad(traced.graph)
    tangents = jit.jvp(traced.graph, directions=4, seeds={"x": np.eye(4)})
    assert "where" in tangents.op_counts() and "where" in backward.op_counts()
    for point in ([0.3, 0.0, 2.0, -1.0], [0.0, 0.0, 1.0, 2.0], [1.0, 2.0, 3.0, 4.0]):
        x = dl.tensor(point, dtype=dl.float64).requires_grad_()
        want = dl.autograd.grad(f(x), x)[0].numpy()
        np.testing.assert_allclose(backward.run(np.array(point))[1], want, rtol=1e-12)
        np.testing.assert_allclose(tangents.run(np.array(point))[1], want, rtol=1e-12)


def test_a_users_function_replays_from_a_graph_and_its_gradient_is_compiled():
    def f(x):
        return (Cube.apply(x) * x.sin()).sum()

    traced = jit.trace(f, dl.tensor(np.ones(3)))
    x = np.array([0.5, -1.5, 2.0])  # (a replay at new numbers runs the user's forward again)
    np.testing.assert_allclose(traced.graph.run(x)[0], f(dl.tensor(x)).item(), rtol=1e-15)
    np.testing.assert_allclose(dl.grad(f, method="compiled")(x), dl.grad(f)(x), rtol=1e-14)


def test_a_linear_layer_without_bias_has_its_tangents_in_place():
    # F.linear passes bias=None as an input too: the rule gets ẋ, Ẇ, ḃ, then x and W
    # (without it, x was read as ḃ and the tangent graph failed).
    rng = np.random.default_rng(7)
    w = dl.tensor(rng.normal(size=(3, 4)))

    def f(x):
        return dl.nn.functional.linear(x, w).tanh()

    x = rng.normal(size=(2, 4))
    tangents = jit.jvp(jit.trace(f, dl.tensor(x)).graph, directions=2)
    dots = rng.normal(size=(2, 2, 4))
    _, (jacobian,) = _tape_jacobians(f, [dl.tensor(x).requires_grad_()])
    np.testing.assert_allclose(tangents.run(x, dots)[1].reshape(2, -1),
                               dots.reshape(2, -1) @ jacobian.T, rtol=1e-12, atol=1e-14)


def test_conv2d_weight_tangents_without_saved_columns_copy_them_from_x():
    # The forward keeps x's columns only when W needs a derivative; a weight tangent
    # without them takes the columns from x, with the same result.
    from difflab.ops import nn_conv
    from difflab.ops.registry import Context

    rng = np.random.default_rng(8)
    x, w = rng.normal(size=(2, 4, 6, 6)), rng.normal(size=(6, 2, 3, 3))
    dw = rng.normal(size=(3, 6, 2, 3, 3))
    settings = {"stride": (2, 2), "padding": (1, 1), "dilation": (1, 1), "groups": 2}
    tangents = []
    for needs in [(True, True, False), (True, False, False)]:
        ctx = Context(needs)
        nn_conv.Conv2d.forward(ctx, np, x, w, None, **settings)
        assert (ctx.saved[2] is None) == (not needs[1])
        tangents.append(nn_conv.Conv2d.jvp(ctx, np, None, dw, None, *ctx.saved))
    np.testing.assert_array_equal(tangents[0], tangents[1])
