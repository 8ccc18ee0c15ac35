"""The common interface: shapes, argnums, jvp/vjp, Hessians, costs, registry, bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import difflab as dl
from difflab.diff import (
    Cost,
    Differentiator,
    DomainWarning,
    derivative,
    differentiators,
    grad,
    hessian,
    jacobian,
    jvp,
    vjp,
)

METHODS = ["forward", "reverse", "symbolic", "numeric"]
# numeric is approximate: compare it loosely, the others to rounding
TOL = {"forward": 1e-12, "reverse": 1e-12, "symbolic": 1e-12, "numeric": 1e-6}


def f_vec(x):
    return dl.sin(x) * x[::-1] + dl.exp(x[0])


def scalar_of_two(x, y):
    return dl.sum(dl.sin(x) * y) + dl.sum(x**2) * y[0]


@pytest.mark.parametrize("method", METHODS)
def test_shapes_and_values_match_analytic(method):
    x = np.array([0.3, -0.5, 1.1])
    J = jacobian(f_vec, method=method)(x)
    expected = np.diag(np.cos(x) * x[::-1]) + np.diag(np.sin(x))[:, ::-1]
    expected[:, 0] += np.exp(x[0])
    np.testing.assert_allclose(J, expected, rtol=TOL[method], atol=TOL[method])
    y = np.array([2.0, -1.0, 0.5])
    gx, gy = grad(scalar_of_two, method=method, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, np.cos(x) * y + 2 * x * y[0], rtol=TOL[method])
    np.testing.assert_allclose(gy, np.sin(x) + np.array([np.sum(x**2), 0, 0]),
                               rtol=TOL[method])


@pytest.mark.parametrize("method", METHODS)
def test_hessian(method):
    x = np.array([0.4, -0.3])

    def f(v):
        return dl.exp(v[0] * v[1]) + dl.sin(v[0]) * v[1] ** 3

    a, b = x
    e = np.exp(a * b)
    expected = np.array([
        [b * b * e - np.sin(a) * b**3, e + a * b * e + 3 * np.cos(a) * b**2],
        [e + a * b * e + 3 * np.cos(a) * b**2, a * a * e + 6 * np.sin(a) * b],
    ])
    tol = 1e-6 if method == "numeric" else 1e-12
    np.testing.assert_allclose(hessian(f, method=method)(x), expected, rtol=tol, atol=tol)


def test_reverse_hessian_modes_agree():
    from diff_suite import rosenbrock

    x = np.array([0.3, 0.7, 1.2, -0.4])
    h1 = hessian(rosenbrock, method=differentiators.Reverse("reverse-over-forward"))(x)
    h2 = hessian(rosenbrock, method=differentiators.Reverse("reverse-over-reverse"))(x)
    np.testing.assert_allclose(h1, h2, rtol=1e-14)
    np.testing.assert_allclose(h1, hessian(rosenbrock, method="symbolic")(x), rtol=1e-13)


@pytest.mark.parametrize("method", METHODS)
def test_jvp_and_vjp_as_in_jax(method):
    x, y = np.array([0.3, -0.5, 1.1]), np.array([2.0, -1.0, 0.5])
    tx, ty = np.array([1.0, 0.5, -2.0]), np.array([0.0, 1.0, 1.0])
    value, tangent = jvp(scalar_of_two, (x, y), (tx, ty), method=method)
    gx, gy = grad(scalar_of_two, method="forward", argnums=(0, 1))(x, y)
    assert value == pytest.approx(scalar_of_two(x, y), rel=1e-15)
    assert tangent == pytest.approx(gx @ tx + gy @ ty, rel=TOL[method])
    value, vjp_fn = vjp(f_vec, (x,), method=method)
    u = np.array([1.0, -2.0, 0.5])
    (back,) = vjp_fn(u)
    np.testing.assert_allclose(back, u @ jacobian(f_vec, method="forward")(x),
                               rtol=TOL[method], atol=TOL[method])


@pytest.mark.parametrize("method", METHODS)
def test_cost_reports(method):
    x = np.linspace(0.1, 1.0, 5)
    g, cost = grad(lambda v: dl.sum(dl.sin(v) ** 2), method=method)(x, return_cost=True)
    assert isinstance(cost, Cost) and cost.method == method
    assert cost.evaluations >= 1 and cost.seconds > 0
    d = cost.as_dict()
    assert d["method"] == method and set(d) >= {"tape_length", "forward_ops", "step"}
    if method == "reverse":
        # one forward pass (recorded), one backward pass
        assert cost.evaluations == 1 and cost.backward_passes == 1 and cost.tape_length >= 3
    else:
        assert cost.backward_passes is None
    if method == "forward":
        assert cost.evaluations == 1 and cost.forward_ops >= 3
    if method == "symbolic":
        assert cost.expression_ops > 0 and cost.tree_size > 0
        assert cost.compile_seconds is not None and cost.eval_seconds > 0
    if method == "numeric":
        assert cost.evaluations == 2 * 5 + 1 and cost.step > 0


def test_each_method_is_an_object_with_options():
    objects = [differentiators.Forward(chunk_size=2), differentiators.Reverse(),
               differentiators.Symbolic(simplify=True), differentiators.Numeric("forward")]
    for d in objects:
        assert isinstance(d, Differentiator)
        assert d.derivative(dl.sin)(0.3) == pytest.approx(np.cos(0.3), rel=1e-7)
    assert differentiators.get("numeric", scheme="complex").scheme == "complex"
    assert derivative(dl.exp, method="numeric", scheme="richardson")(1.0) == pytest.approx(
        np.e, rel=1e-12)


def test_register_a_new_method():
    class Central4(differentiators.Numeric):
        name = "central4"

        def __init__(self):
            super().__init__("central", order=4)

    differentiators.register("central4", Central4)
    assert "central4" in differentiators.available()
    assert derivative(dl.sin, method="central4")(0.4) == pytest.approx(np.cos(0.4), rel=1e-11)


# ------------------------------------------------------------------------- bad input


def test_not_callable():
    with pytest.raises(TypeError, match="not callable"):
        grad(3.0)


def test_wrong_number_of_arguments():
    with pytest.raises(TypeError, match="cannot be called with 2 argument"):
        grad(lambda x: x * x)(1.0, 2.0)
    with pytest.raises(TypeError, match="cannot be called with 1 argument"):
        grad(lambda x, y: x * y)(1.0)


@pytest.mark.parametrize("method", METHODS)
def test_grad_of_non_scalar(method):
    with pytest.raises(ValueError, match="requires f to return a scalar"):
        grad(lambda x: x * 2.0, method=method)(np.ones(3))


@pytest.mark.parametrize("bad", ["1.0", {"x": 1}, None, [1, "a"], 1 + 2j])
def test_unsupported_input_type(bad):
    with pytest.raises(TypeError, match="argument 0"):
        grad(lambda x: x * x)(bad)


def test_derivative_of_array_input_is_refused():
    with pytest.raises(ValueError, match="scalar input"):
        derivative(dl.sin)(np.ones(2))


@pytest.mark.parametrize("method", METHODS)
def test_point_outside_the_domain_gives_nan_with_a_warning(method):
    with pytest.warns(DomainWarning, match="outside the domain"):
        value = derivative(dl.log, method=method)(-1.0)
    assert np.isnan(value)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # inside the domain: no warning at all
        derivative(dl.log, method=method)(2.0)


def test_unknown_method_lists_the_known_ones():
    with pytest.raises(ValueError, match="forward, numeric, reverse, symbolic"):
        grad(dl.sin, method="magic")


def test_bad_argnums_and_cotangent():
    with pytest.raises(ValueError, match="argnums"):
        grad(lambda x: x * x, argnums=1)(1.0)
    _, vjp_fn = vjp(lambda x: x * 2.0, (np.ones(3),))
    with pytest.raises(ValueError, match="cotangent has shape"):
        vjp_fn(np.ones(2))
    with pytest.raises(ValueError, match="tangent 0 has shape"):
        jvp(lambda x: x, (np.ones(3),), (np.ones(2),))


@pytest.mark.parametrize("method", ["forward", "reverse", "symbolic", "numeric"])
def test_hessian_outside_the_domain_is_nan_with_a_warning(method):
    with pytest.warns(dl.diff.DomainWarning, match="hessian.*domain"):
        value = dl.hessian(dl.log, method=method)(-1.0)
    assert np.isnan(value)


@pytest.mark.parametrize("method", ["forward", "reverse", "symbolic", "numeric"])
@pytest.mark.parametrize("x0", [-1.3, 0.0, 2.0])
def test_nested_derivatives_without_perturbation_confusion(method, x0):
    """d/dx [x · d/dy (x + y)] = 1 for every x; a naive nested dual gives 2."""
    inner = dl.derivative

    def f(x):
        return x * inner(lambda y: x + y, method=method)(1.0)

    tolerance = 1e-6 if method == "numeric" else 1e-14
    assert abs(dl.derivative(f, method=method)(x0) - 1.0) < tolerance

    # the inner variable evaluated at the outer one: d/dx [d/dy (x·y) at y = x] = 1, not 2
    def g(x):
        return inner(lambda y: x * y, method=method)(x)

    assert abs(dl.derivative(g, method=method)(x0) - 1.0) < tolerance


@pytest.mark.parametrize("method", ["forward", "reverse", "symbolic", "numeric"])
def test_derivative_of_a_derivative_and_gradient_of_gradients(method):
    tolerance = 1e-5 if method == "numeric" else 1e-13
    second = dl.derivative(dl.derivative(dl.sin, method=method), method=method)(0.5)
    assert abs(second + np.sin(0.5)) < tolerance

    def sum_of_gradient(v):  # Σ 2v² whose gradient is 4v
        return dl.grad(lambda w: (w * w * v).sum(), method=method)(v).sum()

    result = dl.grad(sum_of_gradient, method=method)(np.array([1.0, 2.0]))
    assert np.allclose(result, [4.0, 8.0], atol=1e-4 if method == "numeric" else 1e-12)


@pytest.mark.parametrize("method", [*METHODS, "compiled"])
def test_parameters_f_closes_over_leave_no_graph_on_the_result(method):
    """A tensor f closes over that requires grad (a model's weight) is a constant of
    dl.grad, dl.jacobian, dl.hessian and dl.jvp by every method: the result is plain
    numbers, with no tape to the weight (forward mode's tangents were recorded on it and
    came back as a Tensor with a grad_fn), as PyTorch's torch.autograd.functional."""
    weight = dl.tensor([0.5, -1.0, 2.0], dtype=dl.float64, requires_grad=True)
    x = np.array([1.0, 2.0, 3.0])
    results = {
        "grad": grad(lambda v: dl.sum(dl.sin(v) * weight), method=method)(x),
        "jacobian": jacobian(lambda v: dl.sin(v) * weight, method=method)(x),
        "hessian": hessian(lambda v: dl.sum(dl.sin(v) * weight), method=method)(x),
        "jvp": jvp(lambda v: dl.sin(v) * weight, (x,), (np.ones(3),), method=method)[1],
    }
    w = weight.detach().numpy()
    expected = {"grad": np.cos(x) * w, "jacobian": np.diag(np.cos(x) * w),
                "hessian": np.diag(-np.sin(x) * w), "jvp": np.cos(x) * w}
    for transform, result in results.items():
        assert type(result) is np.ndarray, f"{method} {transform}: {type(result).__name__}"
        np.testing.assert_allclose(result, expected[transform], rtol=1e-5, atol=1e-6,
                                   err_msg=f"{method} {transform}")


@pytest.mark.parametrize("inner", ["forward", "reverse"])
def test_reverse_differentiates_through_an_inner_derivative_of_what_f_closes_over(inner):
    """Inside a reverse-mode derivative the inner one keeps its graph: d/dw Σ ∇ₓ Σ sin(x) w
    = cos x, whether w is an argument of the inner f or a tensor it closes over (the inner
    reverse gave 0 before: its result left the outer tape)."""
    x = np.array([1.0, 2.0, 3.0])

    def through_the_closure(w):
        return dl.grad(lambda v: dl.sum(dl.sin(v) * w), method=inner)(x).sum()

    def through_an_argument(w):
        return dl.grad(lambda v, u: dl.sum(dl.sin(v) * u), method=inner)(x, w).sum()

    for g in (through_the_closure, through_an_argument):
        np.testing.assert_allclose(grad(g, method="reverse")(np.array([0.5, -1.0, 2.0])),
                                   np.cos(x), rtol=1e-13)


INNER_TRANSFORMS = {
    "grad": lambda g, m: grad(g, method=m),
    "jacobian": lambda g, m: lambda v: jacobian(g, method=m)(v).sum(axis=0),
    "hessian": lambda g, m: lambda v: hessian(g, method=m)(v).sum(axis=0),
    "jvp": lambda g, m: lambda v: jvp(g, (v,), (np.ones_like(v),), method=m)[1],
    "vjp": lambda g, m: lambda v: vjp(g, (v,), method=m)[1](np.array(1.0))[0],
}


@pytest.mark.parametrize("transform", list(INNER_TRANSFORMS))
@pytest.mark.parametrize("enclosing", ["reverse", "symbolic"])
@pytest.mark.parametrize("inner", differentiators.available())
def test_an_inner_derivative_of_a_closure_is_right_or_refused_never_silently_zero(
        inner, enclosing, transform):
    """d/dw Σ (an inner derivative in x of w Σ x³): an inner method that keeps the
    enclosing record gives the derivative; the others (symbolic, numeric, compiled
    inside a reverse derivative; reverse, numeric, compiled inside a symbolic one)
    read w as a number and gave 0 silently: they now raise ConstantClosureError.
    Every registered method is asked, so a new one is covered by registering it."""
    from difflab.diff.interface import ConstantClosureError

    x = np.array([1.0, 3.0])
    expected = {"grad": 3 * x**2, "jacobian": 3 * x**2, "hessian": 6 * x,
                "jvp": np.array(3 * x @ x), "vjp": 3 * x**2}[transform]
    make = INNER_TRANSFORMS[transform]

    def outer(w):
        cube = (lambda v: dl.sum(w * v**3)) if transform in ("grad", "hessian", "vjp") \
            else (lambda v: w * v**3)
        return dl.sum(make(cube, inner)(x))

    if (inner, enclosing, transform) == ("forward", "symbolic", "hessian"):
        # (nested dual numbers of sympy expressions: sympy converts a dual to a float; an
        # error that says so, not a wrong number)
        with pytest.raises(TypeError, match="float\\(\\) of a Dual"):
            grad(outer, method=enclosing)(np.array(2.0))
    elif enclosing in differentiators.get(inner).keeps_enclosing:
        result = grad(outer, method=enclosing)(np.array(2.0))
        tolerance = 1e-5 if inner == "numeric" else 1e-10
        np.testing.assert_allclose(result, expected.sum(), rtol=tolerance)
    else:
        with pytest.raises(ConstantClosureError, match=f"method='{inner}'"):
            grad(outer, method=enclosing)(np.array(2.0))


@pytest.mark.parametrize("inner", ["symbolic", "numeric", "compiled"])
def test_an_inner_derivative_that_reads_no_enclosing_value_is_not_refused(inner):
    """Inside a reverse derivative, an inner derivative of a function of x alone, or of one
    closing over a model's weight that the outer derivative does not differentiate, is a
    constant rightly: d/dw w Σ ∇(p Σ x²) = Σ 2 p x."""
    x = np.array([1.0, 3.0])
    weight = dl.tensor(3.0, dtype=dl.float64, requires_grad=True)
    tolerance = 1e-6 if inner == "numeric" else 1e-12
    for p, closure in ((1.0, lambda v: dl.sum(v**2)), (3.0, lambda v: dl.sum(weight * v**2))):
        result = grad(lambda w, g=closure: w * grad(g, method=inner)(x).sum())(np.array(2.0))
        np.testing.assert_allclose(result, 2 * p * x.sum(), rtol=tolerance)


def test_numpy_conversion_of_a_recorded_tensor_is_refused():
    x = dl.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="detach"):
        np.asarray(x * 2)


@pytest.mark.parametrize("method", METHODS)
def test_every_transform_at_a_point_on_each_device(method, device):
    """A point on the GPU gives derivatives on the GPU, equal to those at the point on the CPU."""
    from difflab import backend

    x = np.array([0.3, -0.5, 1.1])
    xd = backend.to_device(x, dl.device(device))
    ones = backend.to_device(np.ones(3), dl.device(device))
    transforms = {
        "jacobian": lambda p, t: jacobian(f_vec, method=method)(p),
        "grad": lambda p, t: grad(scalar_of_two, method=method, argnums=(0, 1))(p, p * 2.0),
        "hessian": lambda p, t: hessian(lambda v: dl.sum(dl.exp(v) * v[0]), method=method)(p),
        "derivative": lambda p, t: derivative(lambda s: dl.sin(s) * s, method=method)(p[1]),
        "jvp": lambda p, t: jvp(f_vec, (p,), (t,), method=method)[1],
        "vjp": lambda p, t: vjp(f_vec, (p,), method=method)[1](t)[0],
    }
    for name, transform in transforms.items():
        on_device, on_cpu = transform(xd, ones), transform(x, np.ones(3))
        if not isinstance(on_cpu, tuple):
            on_device, on_cpu = (on_device,), (on_cpu,)
        for got, want in zip(on_device, on_cpu):
            assert device == "cpu" or backend.device_of(got) == dl.device(device), name
            np.testing.assert_allclose(backend.to_numpy(got), want, rtol=TOL[method],
                                       atol=TOL[method], err_msg=name)
