"""dl.frexp, dl.ldexp and dl.cumulative_trapezoid: PyTorch's values (recorded from PyTorch
2.13 on the CPU), the derivatives from every method, the edges, and clear errors."""

import numpy as np
import pytest

import difflab as dl
from difflab.autograd import gradcheck

METHODS = ("reverse", "forward", "symbolic", "numeric", "compiled")


def test_frexp_matches_pytorch_at_the_edges_in_float32():
    x = dl.tensor([0.0, -0.0, 1.0, 3.0, float("inf"), float("nan"), 1e-40, 3e38],
                  dtype=dl.float32)
    mantissa, exponent = dl.frexp(x)
    assert mantissa.dtype == dl.float32 and exponent.dtype == dl.int32
    assert exponent.tolist() == [0, 0, 1, 2, 0, 0, -132, 128]  # (PyTorch's)
    m = mantissa.numpy()
    np.testing.assert_array_equal(m[[0, 1, 2, 3, 4]], [0.0, -0.0, 0.5, 0.75, np.inf])
    assert np.signbit(m[1]) and np.isnan(m[5])
    np.testing.assert_allclose(m[6:], [0.5444, 0.8816], atol=1e-4)
    np.testing.assert_array_equal(np.ldexp(m, exponent.numpy()), x.numpy())  # exact


def test_frexp_is_exact_for_the_largest_and_the_subnormal_float64():
    values = np.array([1e-310, 1.7e308, -5e-324, np.finfo(np.float64).max,
                       np.finfo(np.float64).tiny])
    mantissa, exponent = dl.frexp(dl.tensor(values))
    want_m, want_e = np.frexp(values)
    np.testing.assert_array_equal(mantissa.numpy(), want_m)
    np.testing.assert_array_equal(exponent.numpy(), want_e)
    assert exponent.tolist()[:3] == [-1029, 1024, -1073]  # (PyTorch's)


def test_frexp_result_reads_by_name_and_numpys_frexp_gives_the_same():
    x = dl.tensor([8.0, -0.75])
    result = dl.frexp(x)
    assert result.mantissa is result[0] and result.exponent is result[1]
    m, e = np.frexp(x)
    assert m.tolist() == [0.5, -0.75] and e.tolist() == [4, 0]


@pytest.mark.parametrize("method", METHODS)
def test_frexp_mantissa_has_the_derivative_two_to_minus_the_exponent(method):
    x = dl.tensor([3.0, 5.0, -0.3, 1000.0], dtype=dl.float64)
    g = dl.grad(lambda v: (dl.frexp(v).mantissa * v).sum(), method=method)(x)
    m, e = np.frexp(x.numpy())
    np.testing.assert_allclose(np.asarray(g), 2.0 ** -e * x.numpy() + m, rtol=1e-7)


def test_frexp_traced_reads_the_exponent_of_each_call():
    compiled = dl.compile(lambda v: dl.frexp(v).mantissa * 1.0)
    compiled(dl.tensor([3.0, 5.0]))
    np.testing.assert_array_equal(compiled(dl.tensor([300.0, 0.1])).numpy(),
                                  np.frexp(np.float32([300.0, 0.1]))[0])
    batched = dl.func.vmap(lambda v: dl.frexp(v).mantissa)(dl.tensor([[3.0, 5.0], [300.0, 0.1]]))
    np.testing.assert_array_equal(batched.numpy(),
                                  np.frexp(np.float32([[3.0, 5.0], [300.0, 0.1]]))[0])


def test_frexp_refuses_integers():
    with pytest.raises(TypeError, match="only supports floating-point dtypes"):
        dl.frexp(dl.tensor([1, 2]))


def test_ldexp_matches_pytorch_dtypes_and_values():
    assert dl.ldexp(dl.tensor([1.0, 3.0]), dl.tensor([3, -1])).tolist() == [8.0, 1.5]
    assert dl.ldexp(dl.tensor([1, 2]), dl.tensor([1, 2])).dtype == dl.float32  # (PyTorch's)
    assert dl.ldexp(dl.tensor([1.0], dtype=dl.float64), dl.tensor([2])).dtype == dl.float64
    out = dl.empty(2)
    assert dl.ldexp(dl.tensor([1.0, 1.0]), dl.tensor([1, 2]), out=out) is out
    assert out.tolist() == [2.0, 4.0]


@pytest.mark.parametrize("method", METHODS)
def test_ldexp_derivatives_in_both_arguments(method):
    x = dl.tensor([0.7, -1.2], dtype=dl.float64)
    e = dl.tensor([2.0, -1.0], dtype=dl.float64)
    gx = dl.grad(lambda v: dl.ldexp(v, e).sum(), method=method)(x)
    ge = dl.grad(lambda v: dl.ldexp(x, v).sum(), method=method)(e)
    np.testing.assert_allclose(np.asarray(gx), [4.0, 0.5], rtol=1e-7)
    np.testing.assert_allclose(np.asarray(ge), x.numpy() * 2.0 ** e.numpy() * np.log(2),
                               rtol=1e-7)


def test_cumulative_trapezoid_matches_pytorch():
    assert dl.cumulative_trapezoid(dl.tensor([1.0, 2.0, 4.0])).tolist() == [1.5, 4.5]
    assert dl.cumulative_trapezoid(dl.tensor([1.0])).shape == (0,)
    got = dl.cumulative_trapezoid(dl.tensor([1.0, 2.0, 4.0]), dl.tensor([0.0, 1.0, 3.0]))
    assert got.tolist() == [1.5, 7.5]
    assert dl.cumulative_trapezoid(dl.ones(2, 3), dx=2, dim=0).tolist() == [[2.0, 2.0, 2.0]]


def test_cumulative_trapezoid_ends_at_trapezoid_along_any_dim():
    rng = np.random.default_rng(0)
    y = dl.tensor(rng.normal(size=(3, 5, 4)))
    x = dl.tensor(np.sort(rng.normal(size=5)))
    for kwargs in (dict(dim=1), dict(x=x, dim=1), dict(dx=0.3, dim=-1)):
        running = dl.cumulative_trapezoid(y, **kwargs)
        dim = kwargs["dim"]
        np.testing.assert_allclose(running.select(dim, -1).numpy(),
                                   dl.trapezoid(y, **kwargs).numpy(), rtol=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_cumulative_trapezoid_derivatives_agree_across_methods(method):
    rng = np.random.default_rng(1)
    y = dl.tensor(rng.normal(size=6))
    x = dl.tensor(np.cumsum(rng.uniform(0.1, 1.0, size=6)))
    weights = dl.tensor(np.arange(1.0, 6.0))
    gy = dl.grad(lambda v: (dl.cumulative_trapezoid(v, x) * weights).sum(), method=method)(y)
    gx = dl.grad(lambda v: (dl.cumulative_trapezoid(y, v) * weights).sum(), method=method)(x)
    ref_y = dl.grad(lambda v: (dl.cumulative_trapezoid(v, x) * weights).sum())(y)
    ref_x = dl.grad(lambda v: (dl.cumulative_trapezoid(y, v) * weights).sum())(x)
    np.testing.assert_allclose(np.asarray(gy), np.asarray(ref_y), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gx), np.asarray(ref_x), rtol=1e-6)


def test_gradcheck_of_all_three():
    rng = np.random.default_rng(2)
    y = dl.tensor(rng.normal(size=(2, 4)), requires_grad=True)
    assert gradcheck(lambda v: dl.cumulative_trapezoid(v, dx=0.5, dim=1), (y,))
    assert gradcheck(lambda v: dl.frexp(v).mantissa, (y,))
    assert gradcheck(lambda v: dl.ldexp(v, dl.tensor([1, -2, 0, 3])), (y,))


@pytest.mark.parametrize("call, error, match", [
    (lambda: dl.cumulative_trapezoid(dl.ones(3), dl.ones(3), dx=1.0), TypeError, "x or dx"),
    (lambda: dl.cumulative_trapezoid(dl.ones(3), 0.5), TypeError, "pass dx=0.5"),
    (lambda: dl.cumulative_trapezoid(dl.tensor(1.0)), IndexError, "no dimensions"),
    (lambda: dl.cumulative_trapezoid(dl.ones(3), dim=2), IndexError, "out of range"),
])
def test_cumulative_trapezoid_bad_arguments(call, error, match):
    with pytest.raises(error, match=match):
        call()
