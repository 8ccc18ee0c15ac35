"""Dual numbers: the rule table, NumPy's protocols, vector mode, tags, kinks, tensors."""

from __future__ import annotations

import numpy as np
import pytest

import difflab as dl
from difflab.diff import Dual, derivative, differentiators, grad, hessian, jacobian
from difflab.diff.forward import new_tag, seed, tangents_of


def test_scalar_dual_follows_the_rule_table():
    d = Dual(0.5, 1.0)
    y = dl.sin(d) * dl.exp(d) + d**2
    assert y.primal == pytest.approx(np.sin(0.5) * np.exp(0.5) + 0.25)
    assert y.tangent == pytest.approx(np.exp(0.5) * (np.sin(0.5) + np.cos(0.5)) + 1.0)


@pytest.mark.parametrize("ufunc, expected", [
    (np.sin, np.cos), (np.exp, np.exp), (np.tanh, lambda x: 1 - np.tanh(x) ** 2),
    (np.sqrt, lambda x: 0.5 / np.sqrt(x)), (np.arctan, lambda x: 1 / (1 + x * x)),
    (np.log1p, lambda x: 1 / (1 + x)), (np.square, lambda x: 2 * x),
    (np.reciprocal, lambda x: -1 / x**2), (np.log10, lambda x: 1 / (x * np.log(10))),
])
def test_numpy_ufuncs_on_dual_arrays(ufunc, expected):
    x = np.array([0.3, 0.9, 1.7])
    y = ufunc(Dual(x, np.ones(3)))
    np.testing.assert_allclose(y.primal, ufunc(x), rtol=1e-15)
    np.testing.assert_allclose(y.tangent, expected(x), rtol=1e-14)


def test_binary_ufuncs_broadcast_tangents():
    a = Dual(np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 2.0]))
    b = np.array([[2.0], [5.0]])  # a constant of shape (2, 1)
    z = np.multiply(a, b)
    assert z.shape == (2, 3) and z.tangents.shape == (1, 2, 3)
    np.testing.assert_allclose(z.tangent, b * np.array([1.0, 0.0, 2.0]))
    m = np.maximum(a, 2.0)  # tie at a = 2 shares the tangent evenly
    np.testing.assert_allclose(m.tangent, [0.0, 0.0, 2.0])


def test_array_functions_are_linear_maps_on_tangents():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3))
    t = rng.normal(size=(2, 3))
    d = Dual(x, t)
    checks = {
        "sum": (np.sum(d, axis=1), t.sum(axis=1)),
        "sum_keepdims": (d.sum(axis=0, keepdims=True), t.sum(axis=0, keepdims=True)),
        "mean": (np.mean(d), t.mean()),
        "reshape": (np.reshape(d, (3, 2)), t.reshape(3, 2)),
        "transpose": (d.T, t.T),
        "moveaxis": (np.moveaxis(d, 0, -1), np.moveaxis(t, 0, -1)),
        "expand_dims": (np.expand_dims(d, 1), np.expand_dims(t, 1)),
        "broadcast": (np.broadcast_to(d, (4, 2, 3)), np.broadcast_to(t, (4, 2, 3))),
        "concatenate": (np.concatenate([d, x], axis=1), np.concatenate([t, 0 * x], axis=1)),
        "stack": (np.stack([d, d]), np.stack([t, t])),
        "where": (np.where(x > 0, d, 0.0), np.where(x > 0, t, 0.0)),
        "index": (d[1, ::2], t[1, ::2]),
        "cumsum": (np.cumsum(d, axis=1), np.cumsum(t, axis=1)),
        "flip": (np.flip(d, 0), np.flip(t, 0)),
        "swapaxes": (np.swapaxes(d, 0, 1), np.swapaxes(t, 0, 1)),
    }
    for name, (out, expected) in checks.items():
        assert isinstance(out, Dual), name
        np.testing.assert_allclose(out.tangent, expected, err_msg=name, atol=1e-15)


@pytest.mark.parametrize("shape_a, shape_b", [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
    ((2, 3), (5, 3, 4)), ((3,), (5, 3, 4)), ((5, 2, 3), (3,)),
])
def test_matmul_jvp_all_shape_cases(shape_a, shape_b):
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=shape_a), rng.normal(size=shape_b)
    ta, tb = rng.normal(size=(2,) + shape_a), rng.normal(size=(2,) + shape_b)
    y = Dual(a, ta, vector=True) @ Dual(b, tb, vector=True)
    for k in range(2):
        np.testing.assert_allclose(y.tangents[k], ta[k] @ b + a @ tb[k], rtol=1e-13)
    z = np.matmul(a, Dual(b, tb, vector=True))  # constant on the left
    np.testing.assert_allclose(z.tangents[1], a @ tb[1], rtol=1e-13)


def test_vector_mode_jacobian_in_one_pass_and_in_chunks():
    def f(x):
        return dl.sin(x) * x[::-1] + dl.sum(x**2)

    x = np.linspace(0.1, 1.0, 7)
    J1, cost1 = jacobian(f, method="forward")(x, return_cost=True)
    J3, cost3 = jacobian(f, method=differentiators.Forward(chunk_size=3))(x, return_cost=True)
    assert cost1.evaluations == 1 and cost3.evaluations == 3
    np.testing.assert_allclose(J1, J3, rtol=1e-15)
    np.testing.assert_allclose(J1, jacobian(f, method="reverse")(x), rtol=1e-14)
    assert cost1.forward_ops > 0


def test_no_perturbation_confusion():
    """d/dx [x · d/dy (x + y)] = 1 for every x; untagged (naive) nesting gives 2."""

    def outer(x):
        return x * derivative(lambda y: x + y, method="forward")(1.0)

    for x in (0.5, 2.0, -3.0):
        assert derivative(outer, method="forward")(x) == 1.0
    # the naive version: both ε's share a tag, so the inner derivative sees x's tangent
    x = Dual(2.0, 1.0)
    inner = (x + Dual(1.0, 1.0)).tangent  # d/dy (x + y) computed as 2
    assert (x * inner).tangent == 2.0


def test_nested_duals_give_exact_second_derivatives():
    f = lambda x: dl.exp(dl.sin(x))  # noqa: E731
    x = 0.7
    exact = np.exp(np.sin(x)) * (np.cos(x) ** 2 - np.sin(x))
    assert hessian(f, method="forward")(x) == pytest.approx(exact, rel=1e-14)
    second = derivative(derivative(f, method="forward"), method="forward")(x)
    assert second == pytest.approx(exact, rel=1e-14)


@pytest.mark.parametrize("f, x, expected", [
    (dl.abs, 0.0, 0.0), (dl.relu, 0.0, 0.0), (dl.relu, 1e-3, 1.0), (dl.abs, -2.0, -1.0),
    (lambda x: dl.maximum(x, 0.0), 0.0, 0.5), (lambda x: dl.minimum(x, x), 1.0, 1.0),
])
def test_kink_conventions(f, x, expected):
    for method in ("forward", "reverse", "symbolic"):
        assert derivative(f, method=method)(x) == expected, method


def test_control_flow_follows_the_path_taken():
    def f(x):
        return x**3 if x > 1 else -x

    assert derivative(f, method="forward")(2.0) == 12.0
    assert derivative(f, method="forward")(0.5) == -1.0


def test_assigning_into_a_dual_is_index_put():
    # x[index] = v as on a tensor: the value and the tangent written in; the original of
    # a copy, and a value taken before, keep what they had
    x = Dual(np.ones(3), np.array([1.0, 2.0, 3.0]))
    y, before = x.copy(), x[0:2]
    y[1:] = Dual(np.array([5.0, 6.0]), np.array([-1.0, -2.0]))
    assert y.primal.tolist() == [1.0, 5.0, 6.0] and y.tangents.tolist() == [[1.0, -1.0, -2.0]]
    y[0] = 7.0  # a constant: tangent 0 there
    assert y.primal.tolist() == [7.0, 5.0, 6.0] and y.tangents.tolist() == [[0.0, -1.0, -2.0]]
    assert x.primal.tolist() == [1.0, 1.0, 1.0] and before.tangents.tolist() == [[1.0, 2.0]]


def test_a_one_element_tensor_index_keeps_its_axis():
    """``index_select`` of one column (interpolate to a width of 1 does it): NumPy reads a
    one-element tensor in an index as an integer and drops the axis, so forward mode
    broadcast the (3,) tangent against a (3, 1) result and summed every row into each."""
    def f(t):
        picked = dl.index_select(t, 1, dl.tensor([0]))
        return (picked * dl.tensor([[1.0], [10.0], [100.0]])).sum() + t[:, dl.tensor([1])].sum()

    x = dl.tensor(np.arange(6.0).reshape(3, 2))
    expected = [[1.0, 1.0], [10.0, 1.0], [100.0, 1.0]]
    for method in ("forward", "reverse"):
        np.testing.assert_array_equal(grad(f, method=method)(x), expected)
    dual = Dual(x.numpy(), np.ones((3, 2)))
    assert dual[:, dl.tensor([0])].primal.shape == (3, 1)


def test_dual_refuses_silent_loss_of_the_tangent():
    import math

    with pytest.raises(TypeError, match="drop"):
        math.sin(Dual(1.0, 1.0))
    with pytest.raises(TypeError, match="drop its tangents"):
        np.asarray(Dual(np.ones(2), np.ones(2)))
    with pytest.raises(TypeError, match="no derivative rule"):
        np.cbrt(Dual(1.0, 1.0))


def test_dual_arrays_run_through_tensor_ops():
    """What forward-mode training does: duals inside tensors, under no_grad."""
    rng = np.random.default_rng(3)
    w = rng.normal(size=(4, 3))
    data = rng.normal(size=(5, 3))
    tag = new_tag()
    with dl.no_grad():
        weight = dl.tensor(w, dtype=dl.float64)
        weight.array = seed(w, tag)  # 12 tangents: one per weight
        hidden = (dl.tensor(data) @ weight.T).tanh()
        loss = (hidden * hidden).mean()
    value, tangents = tangents_of(loss.array, tag, 12)

    def plain(w_):
        h = dl.tanh(data @ w_.T)
        return dl.sum(h * h) / 20.0

    np.testing.assert_allclose(value, plain(w), rtol=1e-14)
    np.testing.assert_allclose(tangents.reshape(4, 3), grad(plain, method="reverse")(w),
                               rtol=1e-12)


def test_a_dual_whose_tangent_is_a_dual():
    inner = Dual(0.5, 1.0, tag=1)
    d = Dual(inner, Dual(1.0, 0.0, tag=1), tag=2)
    out = dl.sin(d)  # sin(a) + cos(a)·b ε₂ with a, b themselves duals in ε₁
    assert np.isclose(out.primal.primal, np.sin(0.5))
    assert np.isclose(out.primal.tangent, np.cos(0.5))
    assert np.isclose(out.tangent.primal, np.cos(0.5))
    assert np.isclose(out.tangent.tangent, -np.sin(0.5))


def test_stack_and_cat_of_duals_keep_their_tangents():
    s = dl.stack([Dual(1.0, 1.0), Dual(2.0, 0.0)])
    assert s.primal.tolist() == [1.0, 2.0] and s.tangent.tolist() == [1.0, 0.0]
    c = dl.cat([Dual(np.ones(2), np.ones(2)), Dual(np.zeros(1), np.full(1, 3.0))])
    assert c.primal.tolist() == [1.0, 1.0, 0.0] and c.tangent.tolist() == [1.0, 1.0, 3.0]


# ------------------------------------------------ Tensor constants and -inf in forward mode


MASK = np.array([True, False, True])


@pytest.mark.parametrize("build", [
    pytest.param(lambda v: dl.softmax(dl.where(dl.tensor(MASK), v, dl.tensor(-np.inf)), 0)[0],
                 id="softmax-of-masked-scores"),
    pytest.param(lambda v: dl.where(dl.tensor(MASK), v, dl.tensor(-np.inf)).max() * v[1],
                 id="max-over-minus-inf"),
    pytest.param(lambda v: (dl.maximum(dl.tensor([0.5, 0.5, 0.5]), v) * v).sum(),
                 id="maximum-with-a-tensor-constant"),
    pytest.param(lambda v: (dl.tensor([2.0, 3.0, 4.0]) * dl.sin(v)).sum(),
                 id="tensor-constant-times-dual"),
])
def test_forward_mode_carries_tangents_past_tensor_constants(build):
    # A Tensor constant inside f (dl.tensor(-inf) for a masked score) once turned the dual
    # number into a Tensor holding it, and forward mode returned zeros; -inf times the
    # weight 0 in max's rule gave NaN.
    x = np.array([0.3, 1.0, 2.0])
    forward = dl.grad(build, method="forward")(x)
    reverse = dl.grad(build, method="reverse")(x)
    assert np.all(np.isfinite(forward))
    np.testing.assert_allclose(forward, reverse, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("layer", ["softmax0", "log_softmax1", "linear", "embedding"])
def test_forward_mode_rules_with_k_tangents_equal_reverse_mode(layer):
    # Regressions: a layer's output (a Tensor holding dual numbers) gave zero tangents,
    # and these rules treated forward mode's k axis as one of the data's axes.
    F = dl.nn.functional
    rng = np.random.default_rng(0)
    x, w, b = rng.normal(size=(3, 4)), rng.normal(size=(3, 4)), rng.normal(size=4)
    f = {"softmax0": lambda x: F.softmax(x, dim=0),
         "log_softmax1": lambda x: F.log_softmax(x, dim=1),
         "linear": lambda x: F.linear(dl.tensor(w), x, dl.tensor(b)),
         "embedding": lambda x: F.embedding(dl.tensor(np.array([2, 0, 2])), x)}[layer]
    arg = x if layer != "linear" else rng.normal(size=(4, 4))
    np.testing.assert_allclose(dl.jacobian(f, method="forward")(arg), dl.jacobian(f)(arg),
                               rtol=1e-12, atol=1e-14)
