"""Reverse mode: one recorded forward pass for every argument, evaluations counted.

Each test counts the calls of the user's function with a counter inside it,
beside what the :class:`Cost` record says, and checks the results against the
other methods.
"""

from __future__ import annotations

import numpy as np
import pytest

import difflab as dl
from difflab.diff import differentiators, grad, hessian, jacobian, jvp, vjp

METHODS = ["forward", "reverse", "symbolic", "numeric"]
TOL = {"forward": 1e-12, "reverse": 1e-12, "symbolic": 1e-12, "numeric": 1e-6}
POINT = tuple(np.linspace(-0.9, 1.3, 10))


class Counted:
    """f, counting its calls."""

    def __init__(self, f):
        self.f, self.calls = f, 0

    def __call__(self, *args):
        self.calls += 1
        return self.f(*args)


def ten_arguments(*xs):
    """Σ sin(x_k) x_{k+1} + x_0 x_9: every argument used, mixed with its neighbours."""
    total = xs[0] * xs[-1]
    for a, b in zip(xs, xs[1:]):
        total = total + dl.sin(a) * b
    return total


def ten_arguments_gradient(xs):
    xs = np.array(xs)
    g = np.zeros(10)
    g[:-1] += np.cos(xs[:-1]) * xs[1:]
    g[1:] += np.sin(xs[:-1])
    g[0] += xs[-1]
    g[-1] += xs[0]
    return g


def three_outputs(x, y, z):
    """R^2 x R x R^3 -> R^3."""
    return dl.stack([dl.sum(x) * y, dl.exp(y) * z[0], dl.sin(x[0]) * z[1] * z[2]])


def scalar_of_three(x, y, z):
    return dl.sum(dl.sin(x) * y) * z[0] + dl.sum(x**2) * y + z[0] * z[1] * dl.exp(z[2])


POINT3 = (np.array([0.3, -0.7]), 1.2, np.array([0.5, 2.0, -1.5]))


def test_gradient_of_ten_arguments_takes_one_forward_and_one_backward_pass():
    f = Counted(ten_arguments)
    g, cost = grad(f, argnums=range(10), method="reverse")(*POINT, return_cost=True)
    assert f.calls == 1
    assert cost.evaluations == 1 and cost.backward_passes == 1
    assert cost.tape_length == 1 + 3 * 9  # one mul, then a sin, a mul and an add per pair
    np.testing.assert_allclose(g, ten_arguments_gradient(POINT), rtol=1e-14, atol=1e-15)


def test_forward_mode_still_needs_a_pass_per_argument():
    f = Counted(ten_arguments)
    g, cost = grad(f, argnums=tuple(range(10)), method="forward")(*POINT, return_cost=True)
    assert f.calls == cost.evaluations == 10 and cost.backward_passes is None
    np.testing.assert_allclose(g, ten_arguments_gradient(POINT), rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("method", METHODS)
def test_every_method_gives_the_same_gradient_of_ten_arguments(method):
    g = grad(ten_arguments, argnums=tuple(range(10)), method=method)(*POINT)
    assert isinstance(g, tuple) and len(g) == 10
    np.testing.assert_allclose(g, ten_arguments_gradient(POINT), rtol=TOL[method],
                               atol=TOL[method])


def test_some_arguments_and_repeated_argnums():
    f = Counted(ten_arguments)
    g = grad(f, argnums=(7, 2, 7, -1), method="reverse")(*POINT)
    assert f.calls == 1
    expected = ten_arguments_gradient(POINT)
    np.testing.assert_allclose(g, expected[[7, 2, 7, 9]], rtol=1e-14)
    (g2,) = grad(ten_arguments, argnums=(2,), method="reverse")(*POINT)
    assert g2 == pytest.approx(expected[2], rel=1e-14)


def test_an_unused_argument_gets_zeros():
    f = Counted(lambda x, y, z: dl.sum(x**2) * z)
    gx, gy, gz = grad(f, argnums=(0, 1, 2), method="reverse")(np.array([1.0, 2.0]),
                                                               np.ones(3), 3.0)
    assert f.calls == 1
    np.testing.assert_allclose(gx, [6.0, 12.0])
    np.testing.assert_array_equal(gy, np.zeros(3))
    assert gz == 5.0


def test_a_constant_function_needs_no_backward_pass():
    g, cost = grad(lambda x, y: 2.0, argnums=(0, 1), method="reverse")(1.0, np.ones(2),
                                                                       return_cost=True)
    assert g[0] == 0.0 and np.array_equal(g[1], np.zeros(2))
    assert cost.evaluations == 1 and not cost.backward_passes


def test_jacobian_of_several_arguments_records_once_and_walks_back_once_per_output():
    f = Counted(three_outputs)
    J, cost = jacobian(f, argnums=(0, 1, 2), method="reverse")(*POINT3, return_cost=True)
    assert f.calls == cost.evaluations == 1
    assert cost.backward_passes == 3  # m = 3 outputs, whatever the number of inputs
    assert [j.shape for j in J] == [(3, 2), (3,), (3, 3)]
    for method in ("forward", "symbolic", "numeric"):
        expected = jacobian(three_outputs, argnums=(0, 1, 2), method=method)(*POINT3)
        for a, b in zip(J, expected):
            np.testing.assert_allclose(a, b, rtol=TOL[method], atol=TOL[method])


def test_vjp_records_once_and_counts_each_backward_pass():
    f = Counted(three_outputs)
    (value, vjp_fn), cost = vjp(f, POINT3, method="reverse", return_cost=True)
    assert f.calls == cost.evaluations == 1 and not cost.backward_passes
    u = np.array([1.0, -2.0, 0.5])
    first = vjp_fn(u)
    second = vjp_fn(2 * u)
    assert f.calls == 1 and cost.backward_passes == 2
    J = jacobian(three_outputs, argnums=(0, 1, 2), method="forward")(*POINT3)
    for got, twice, Jk in zip(first, second, J):
        np.testing.assert_allclose(got, np.tensordot(u, Jk, axes=1), rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(twice, 2 * np.asarray(got), rtol=1e-13, atol=1e-15)


def test_jvp_by_reverse_mode_records_once():
    f = Counted(three_outputs)
    tangents = (np.array([1.0, 0.5]), -1.0, np.array([0.0, 2.0, 1.0]))
    (value, t), cost = jvp(f, POINT3, tangents, method="reverse", return_cost=True)
    assert f.calls == cost.evaluations == 1 and cost.backward_passes == 3
    _, expected = jvp(three_outputs, POINT3, tangents, method="forward")
    np.testing.assert_allclose(t, expected, rtol=1e-13)


@pytest.mark.parametrize("mode, first_order", [("reverse-over-reverse", 1),
                                               ("reverse-over-forward", 0)])
def test_hessian_of_several_arguments_records_f_once(mode, first_order):
    f = Counted(scalar_of_three)
    H, cost = hessian(f, argnums=(0, 1, 2), method=differentiators.Reverse(mode))(
        *POINT3, return_cost=True)
    assert f.calls == cost.evaluations == 1  # no second call to check f's domain either
    # one pass per entry of the gradient (2 + 1 + 3), after the recorded first one
    assert cost.backward_passes == first_order + 6
    expected = hessian(scalar_of_three, argnums=(0, 1, 2), method="forward")(*POINT3)
    for a, b in zip(H, expected):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    assert [np.shape(h) for h in H] == [(2, 2), (), (3, 3)]


@pytest.mark.parametrize("mode", ["reverse-over-reverse", "reverse-over-forward"])
def test_hessian_outside_the_domain_is_nan(mode):
    with pytest.warns(RuntimeWarning, match="not finite"):
        H = hessian(lambda x: dl.sum(dl.log(x)), method=differentiators.Reverse(mode))(
            np.array([-1.0, 2.0]))
    assert np.isnan(H).all()


def test_nested_reverse_follows_arguments_that_are_not_differentiated():
    """d/dy of [∂/∂x (x y²)] at x = 2 is d/dy y² = 2y: the inner y is on the outer tape."""
    inner = Counted(lambda x, y: x * y * y)

    def partial_x(y):
        return grad(inner, argnums=0, method="reverse")(2.0, y)

    assert grad(partial_x, method="reverse")(3.0) == pytest.approx(6.0, rel=1e-15)
    assert inner.calls == 1


def test_nested_reverse_with_several_arguments():
    """d/dz of Σ_k ∂/∂x_k (x_0 x_1 z) at (1, 2) is d/dz (x_1 z + x_0 z) = 3."""
    inner = Counted(lambda a, b, z: a * b * z)

    def summed(z):
        ga, gb = grad(inner, argnums=(0, 1), method="reverse")(1.0, 2.0, z)
        return ga + gb

    assert grad(summed, method="reverse")(5.0) == pytest.approx(3.0, rel=1e-15)
    assert inner.calls == 1
    # the point itself recorded by the outer derivative (perturbation confusion guarded)
    h = grad(lambda y: grad(lambda x, w: x * w, argnums=(0, 1), method="reverse")(y, y)[0],
             method="reverse")(4.0)
    assert h == pytest.approx(1.0, rel=1e-15)


def test_grad_of_ten_arguments_still_requires_a_scalar():
    with pytest.raises(ValueError, match="requires f to return a scalar"):
        grad(lambda *xs: dl.stack(xs), argnums=range(10), method="reverse")(*POINT)
