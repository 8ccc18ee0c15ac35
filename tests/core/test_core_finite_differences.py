"""difflab.finite_differences: the one difference kernel, and the step chosen from the dtype."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import difflab as dl
from difflab import finite_differences as fd
from difflab.diff import derivative
from difflab.diff import numeric as numeric_module
from difflab.nn.utils import gradients

gc = importlib.import_module("difflab.autograd.gradcheck")  # the module, not the function


def test_every_numeric_derivative_uses_the_one_kernel():
    # gradcheck, compute_gradients(method="numeric") and Numeric share one difference
    assert gc.difference is fd.difference
    assert gradients.difference is fd.difference
    assert numeric_module.difference is fd.difference
    assert numeric_module.stencil is fd.stencil


def test_numerical_jacobian_matches_the_kernel_on_several_outputs():
    x = dl.tensor([0.3, -1.2, 2.0], dtype="float64", requires_grad=True)
    (j_sin, j_sq) = gc.numerical_jacobian(lambda t: (dl.sin(t), (t * t).sum()), [x], eps=1e-6)
    a = np.array([0.3, -1.2, 2.0])
    np.testing.assert_allclose(j_sin[0], np.diag(np.cos(a)), atol=1e-9)
    np.testing.assert_allclose(j_sq[0], 2 * a[None, :], atol=1e-8)
    # the input is left exactly as it was
    np.testing.assert_array_equal(x.detach().numpy(), a)


def test_jacobian_of_a_plain_numpy_function():
    J = fd.jacobian(lambda v: np.array([v[0] * v[1], np.sin(v[1])]), np.array([2.0, 0.5]))
    np.testing.assert_allclose(J, [[0.5, 2.0], [0.0, np.cos(0.5)]], rtol=1e-9, atol=1e-12)


def test_along_coordinate_restores_the_array_even_when_f_raises():
    flat = np.array([1.0, 2.0])

    def boom():
        raise RuntimeError("f failed")

    with pytest.raises(RuntimeError):
        fd.along_coordinate(flat, 1, boom)(0.5)
    np.testing.assert_array_equal(flat, [1.0, 2.0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_optimal_step_follows_the_dtype(dtype):
    eps = np.finfo(dtype).eps
    assert fd.optimal_step(2, dtype=dtype) == pytest.approx(eps ** (1 / 3))
    assert fd.optimal_step(1, dtype=dtype) == pytest.approx(eps ** 0.5)
    assert fd.optimal_step(2, derivative=2, dtype=dtype) == pytest.approx(eps ** 0.25)


def test_representable_step_is_exact_in_the_dtype():
    for dtype in (np.float32, np.float64):
        h = fd.representable_step(1.3, 1e-3, dtype)
        x = dtype(1.3)
        assert float((x + dtype(h)) - x) == h
    with pytest.raises(ValueError, match="float32"):
        fd.representable_step(1.0, 1e-9, np.float32)  # below float32's spacing near 1


def test_stencil_rejects_bad_orders():
    with pytest.raises(ValueError, match="even order"):
        fd.stencil("central", 0)
    with pytest.raises(ValueError, match="order 1, 2"):
        fd.stencil("forward", 0)
    with pytest.raises(ValueError, match="no stencil"):
        fd.stencil("sideways", 1)


def in_float32(f):
    return lambda x: f(np.asarray(x, dtype=np.float32))


@pytest.mark.parametrize("scheme", ["central", "forward"])
def test_a_float32_function_gets_a_float32_step(scheme):
    exact = np.exp(1.3)
    d, cost = derivative(in_float32(dl.exp), method="numeric", scheme=scheme)(
        1.3, return_cost=True)
    p = 2 if scheme == "central" else 1
    assert cost.step == pytest.approx(fd.optimal_step(p, dtype=np.float32) * 1.3, rel=1e-3)
    # float64's step (6e-6 relative) gave about 1e-2 here; float32's reaches eps^(p/(p+1))
    tolerance = 3e-5 if scheme == "central" else 1e-3
    assert abs(d - exact) / exact < tolerance
    # and float64 keeps float64's step and accuracy
    d64, cost64 = derivative(dl.exp, method="numeric", scheme=scheme)(1.3, return_cost=True)
    assert cost64.step == pytest.approx(fd.optimal_step(p) * 1.3, rel=1e-6)
    assert abs(d64 - exact) / exact < (1e-10 if scheme == "central" else 1e-7)


def test_float32_hessian_step():
    H = dl.diff.hessian(lambda x: dl.sum(np.asarray(x, dtype=np.float32) ** 3),
                        method="numeric")(np.array([0.7, 1.1]))
    np.testing.assert_allclose(H, np.diag([4.2, 6.6]), rtol=5e-3, atol=5e-3)


def test_compute_gradients_numeric_in_float32_and_float64():
    for dtype, tol in (("float32", 2e-3), ("float64", 1e-8)):
        dl.manual_seed(0)
        model = dl.nn.Linear(3, 2).to(getattr(dl, dtype))
        x = dl.randn(5, 3).to(getattr(dl, dtype))
        y = dl.randn(5, 2).to(getattr(dl, dtype))
        loss = dl.nn.MSELoss()
        dl.nn.utils.compute_gradients(model, loss, x, y, method="reverse")
        want = [p.grad.numpy().copy() for p in model.parameters()]
        dl.nn.utils.compute_gradients(model, loss, x, y, method="numeric")
        for p, w in zip(model.parameters(), want):
            np.testing.assert_allclose(p.grad.numpy(), w, rtol=tol, atol=tol)
