"""difflab.special (torch.special): values against scipy.special, gradients against finite
differences (gradcheck, which also runs the second derivative), and the edges where a
naive formula gives NaN or underflows."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sc

import difflab as dl
from difflab import special

X = np.array([0.3, 0.9, 1.7, 2.5, 3.8])
SIGNED = np.array([-2.2, -0.7, 0.4, 1.1, 3.0])
PROB = np.array([0.02, 0.3, 0.5, 0.81, 0.97])

#: name -> (difflab.special function, scipy reference, inputs)
UNARY = {
    "gammaln": (special.gammaln, sc.gammaln, X),
    "digamma": (special.digamma, sc.digamma, X),
    "psi": (special.psi, sc.psi, X),
    "erf": (special.erf, sc.erf, SIGNED),
    "erfc": (special.erfc, sc.erfc, SIGNED),
    "erfcx": (special.erfcx, sc.erfcx, SIGNED),
    "erfinv": (special.erfinv, sc.erfinv, PROB * 2 - 1),
    "i0": (special.i0, sc.i0, SIGNED),
    "i0e": (special.i0e, sc.i0e, SIGNED),
    "i1": (special.i1, sc.i1, SIGNED),
    "i1e": (special.i1e, sc.i1e, SIGNED),
    "bessel_j0": (special.bessel_j0, sc.j0, SIGNED),
    "bessel_j1": (special.bessel_j1, sc.j1, SIGNED),
    "scaled_modified_bessel_k0": (special.scaled_modified_bessel_k0, sc.k0e, X),
    "scaled_modified_bessel_k1": (special.scaled_modified_bessel_k1, sc.k1e, X),
    "spherical_bessel_j0": (special.spherical_bessel_j0,
                            lambda x: sc.spherical_jn(0, x), SIGNED),
    "sinc": (special.sinc, np.sinc, SIGNED),
    "entr": (special.entr, sc.entr, X),
    "exp2": (special.exp2, np.exp2, SIGNED),
    "expit": (special.expit, sc.expit, SIGNED),
    "expm1": (special.expm1, np.expm1, SIGNED),
    "log1p": (special.log1p, np.log1p, X),
    "logit": (special.logit, sc.logit, PROB),
    "ndtr": (special.ndtr, sc.ndtr, SIGNED),
    "ndtri": (special.ndtri, sc.ndtri, PROB),
    "log_ndtr": (special.log_ndtr, sc.log_ndtr, SIGNED),
    "polygamma2": (lambda x: special.polygamma(2, x), lambda x: sc.polygamma(2, x), X),
    "multigammaln3": (lambda x: special.multigammaln(x, 3),
                      lambda x: sc.multigammaln(x, 3), X + 1.2),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_values_match_scipy_and_gradients_match_finite_differences(name):
    f, reference, x = UNARY[name]
    got = f(dl.tensor(x, dtype=dl.float64)).numpy()
    np.testing.assert_allclose(got, reference(x), rtol=1e-10, atol=1e-12)
    t = dl.tensor(x, dtype=dl.float64, requires_grad=True)
    assert dl.autograd.gradcheck(f, (t,))
    assert dl.autograd.gradgradcheck(f, (t,))


@pytest.mark.parametrize("name,reference", [("xlogy", sc.xlogy), ("xlog1py", sc.xlog1py)])
def test_binary_composites_match_scipy_with_zero_factors(name, reference):
    x = np.array([0.0, 0.0, 1.5, 2.0, 0.0])
    y = np.array([0.0, -1.0, 0.7, 3.0, np.nan])
    got = getattr(special, name)(dl.tensor(x, dtype=dl.float64), dl.tensor(y, dtype=dl.float64))
    np.testing.assert_allclose(got.numpy(), reference(x, y), equal_nan=True)
    a = dl.tensor([0.5, 1.5], dtype=dl.float64, requires_grad=True)
    b = dl.tensor([0.7, 2.0], dtype=dl.float64, requires_grad=True)
    assert dl.autograd.gradcheck(getattr(special, name), (a, b))


def test_log_ndtr_stays_accurate_far_in_both_tails():
    x = np.array([-60.0, -30.0, -8.0, 8.0, 30.0])
    got = special.log_ndtr(dl.tensor(x, dtype=dl.float64))
    np.testing.assert_allclose(got.numpy(), sc.log_ndtr(x), rtol=1e-12, atol=1e-300)
    t = dl.tensor(x, dtype=dl.float64, requires_grad=True)
    special.log_ndtr(t).sum().backward()
    assert np.all(np.isfinite(t.grad.numpy()))  # (no 0 · inf from the branch not taken)
    # d log Φ/dx = φ(x)/Φ(x) = sqrt(2/π) / erfcx(-x/√2), which stays finite
    np.testing.assert_allclose(t.grad.numpy(), np.sqrt(2 / np.pi) / sc.erfcx(-x / np.sqrt(2)),
                               rtol=1e-8)


def test_sinc_and_spherical_bessel_at_zero_have_value_one_and_gradient_zero():
    for f in (special.sinc, special.spherical_bessel_j0):
        t = dl.tensor([0.0], dtype=dl.float64, requires_grad=True)
        y = f(t)
        y.backward()
        assert y.item() == 1.0 and t.grad.item() == 0.0


def test_bessel_derivatives_at_zero_are_the_limits():
    t = dl.tensor([0.0, 0.0, 0.0], dtype=dl.float64, requires_grad=True)
    (special.i1(t[0]) + special.i1e(t[1]) + special.bessel_j1(t[2])).backward()
    np.testing.assert_allclose(t.grad.numpy(), [0.5, 0.5, 0.5])


def test_the_functions_keep_float32():
    x = dl.tensor([0.5, 1.5])
    for f in (special.gammaln, special.entr, special.sinc, special.log_ndtr, special.ndtr,
              lambda v: special.polygamma(1, v), special.erfinv):
        assert f(x * 0.5).dtype == dl.float32


def test_polygamma_reads_the_order_as_pytorch_does_and_refuses_a_bad_one():
    x = dl.tensor([1.0, 2.0], dtype=dl.float64)
    np.testing.assert_allclose(dl.polygamma(3, x).numpy(), sc.polygamma(3, [1.0, 2.0]))
    np.testing.assert_allclose(x.polygamma(1).numpy(), sc.polygamma(1, [1.0, 2.0]))
    with pytest.raises(ValueError, match="order n >= 0"):
        dl.polygamma(-1, x)
    with pytest.raises(TypeError, match="non-negative integer first"):
        dl.polygamma(x, 1)


def test_polygamma_derivatives_climb_the_orders():
    # d/dx ψ⁽ⁿ⁾ = ψ⁽ⁿ⁺¹⁾: three backward passes of polygamma(1) reach polygamma(4)
    x = dl.tensor([1.3], dtype=dl.float64, requires_grad=True)
    y = dl.polygamma(1, x)
    for _ in range(3):
        (y,) = dl.autograd.grad(y.sum(), x, create_graph=True)
    np.testing.assert_allclose(y.detach().numpy(), sc.polygamma(4, [1.3]))


def test_scipy_functions_on_dual_numbers_reach_the_primitives():
    # forward mode hands Duals to scipy's ufuncs (gammaln, psi, zeta): they must carry tangents
    d = dl.grad(lambda v: dl.sum(dl.lgamma(v) + dl.polygamma(2, v)), method="forward")
    np.testing.assert_allclose(d(np.array([1.5, 2.5])), sc.digamma([1.5, 2.5])
                               + sc.polygamma(3, [1.5, 2.5]))


def test_multigammaln_refuses_values_outside_its_domain():
    with pytest.raises(ValueError, match=r"greater than \(p - 1\)/2 = 1.0"):
        special.multigammaln(dl.tensor([0.9, 3.0]), 3)
    with pytest.raises(ValueError, match="p >= 1"):
        special.multigammaln(dl.tensor([2.0]), 0)


def test_softmax_family_and_round():
    x = dl.tensor([[1.0, 2.0], [0.5, -1.0]], dtype=dl.float64)
    np.testing.assert_allclose(special.softmax(x, 1).numpy(), sc.softmax(x.numpy(), axis=1))
    np.testing.assert_allclose(special.log_softmax(x, 0).numpy(),
                               sc.log_softmax(x.numpy(), axis=0))
    np.testing.assert_allclose(special.logsumexp(x, 1).numpy(), sc.logsumexp(x.numpy(), 1))
    assert special.round(dl.tensor([1.2345, -2.5]), decimals=2).tolist() == pytest.approx(
        [1.23, -2.5])


@pytest.mark.parametrize("name,reference", [("zeta", sc.zeta), ("gammainc", sc.gammainc),
                                            ("gammaincc", sc.gammaincc)])
def test_second_argument_functions_match_scipy_and_refuse_a_gradient_in_the_first(name,
                                                                                  reference):
    f = getattr(special, name)
    a, x = np.array([2.5, 3.0, 1.5]), np.array([0.4, 1.7, 3.2])
    np.testing.assert_allclose(f(t64(a), t64(x)).numpy(), reference(a, x), rtol=1e-12)
    q = dl.tensor(x, dtype=dl.float64, requires_grad=True)
    assert dl.autograd.gradcheck(lambda v: f(t64(a), v), (q,))
    assert dl.autograd.gradgradcheck(lambda v: f(t64(a), v), (q,))
    with pytest.raises(NotImplementedError, match="derivative in its first argument"):
        f(dl.tensor(a, dtype=dl.float64, requires_grad=True), q)


def t64(values):
    return dl.tensor(values, dtype=dl.float64)


@pytest.mark.parametrize("name,args", [("lgamma", ()), ("digamma", ()), ("polygamma", (2,)),
                                       ("erfc", ()), ("erfinv", ())])
def test_in_place_forms_write_the_value_and_keep_the_gradient(name, args):
    x = dl.tensor([0.3, 0.6], dtype=dl.float64, requires_grad=True)
    want = getattr(x, name)(*args)
    y = x * 1.0
    getattr(y, name + "_")(*args)
    np.testing.assert_allclose(y.detach().numpy(), want.detach().numpy())
    (g_want,) = dl.autograd.grad(want.sum(), x)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), g_want.numpy())


@pytest.mark.parametrize("name", ["zeta", "gammainc", "gammaincc"])
def test_second_argument_functions_keep_float32_beside_a_number(name):
    # A Python number (a 0-d float64 on the way in) does not widen a float32 tensor, as in
    # PyTorch: gammainc(1.0, float32) came out float64 (SciPy's loop), zeta did not.
    f = getattr(dl, name)
    x = dl.tensor([0.5, 2.0], requires_grad=True)
    y = f(2.0, x)
    assert y.dtype == dl.float32 and f(dl.tensor([2.0, 3.0]), 1.5).dtype == dl.float32
    y.sum().backward()
    assert x.grad.dtype == dl.float32
    assert f(t64([2.0]), dl.tensor([1.0])).dtype == dl.float64  # a float64 tensor widens
    np.testing.assert_allclose(y.detach().numpy(), getattr(sc, name)(2.0, [0.5, 2.0]),
                               rtol=1e-6)


# ------------------------------------------------ the table of faces, and what flows through

COMPOSITES = {"entr", "exp2", "log_ndtr", "logit", "multigammaln", "ndtr", "ndtri", "round",
              "sinc", "spherical_bessel_j0", "xlog1py", "xlogy"}

#: How each name is called on one float input (the others as in the tests above).
CALL = {
    "polygamma": lambda f, v: f(2, v), "multigammaln": lambda f, v: f(v + 1.0, 3),
    "zeta": lambda f, v: f(2.5, v), "gammainc": lambda f, v: f(1.5, v),
    "gammaincc": lambda f, v: f(1.5, v), "softmax": lambda f, v: f(v, 0),
    "log_softmax": lambda f, v: f(v, 0), "logsumexp": lambda f, v: f(v, 0),
    "xlogy": lambda f, v: f(v, v + 1.0), "xlog1py": lambda f, v: f(v, v),
    "round": lambda f, v: f(v, decimals=1), "logit": lambda f, v: f(v * 0.25, eps=0.01),
    "erfinv": lambda f, v: f(v * 0.25), "ndtri": lambda f, v: f(v * 0.25),
}
POINTS = np.array([0.3, 0.9, 1.7, 2.5, 3.8])


def call(name, f, v):
    return CALL.get(name, lambda g, u: g(u))(f, v)


def test_every_name_is_a_registry_face_or_a_composite_never_both():
    from difflab.ops import registry
    from difflab.special import FACES, composites

    assert set(special.__all__) == set(FACES) | set(composites.__all__)
    assert set(composites.__all__) == COMPOSITES and not COMPOSITES & set(FACES)
    for name, face in FACES.items():
        assert face in registry.PRIMITIVES, f"{name}: {face} is not a registry primitive"
        assert getattr(special, name) is getattr(dl, face), f"special.{name} wraps dl.{face}"


@pytest.mark.parametrize("name", sorted(special.FACES))
@pytest.mark.parametrize("dtype", [dl.float32, dl.float64])
def test_a_torch_special_name_computes_what_its_registry_face_does(name, dtype):
    # the value bit for bit, the gradient, the dtype (float32 stays float32)
    face = getattr(dl, special.FACES[name])
    x_special = dl.tensor(POINTS, dtype=dtype, requires_grad=True)
    x_face = dl.tensor(POINTS, dtype=dtype, requires_grad=True)
    y_special, y_face = call(name, getattr(special, name), x_special), call(name, face, x_face)
    assert y_special.dtype == y_face.dtype == dtype
    np.testing.assert_array_equal(y_special.detach().numpy(), y_face.detach().numpy())
    y_special.sum().backward()
    y_face.sum().backward()
    assert x_special.grad.dtype == dtype
    np.testing.assert_array_equal(x_special.grad.numpy(), x_face.grad.numpy())


@pytest.mark.parametrize("name", sorted(special.__all__))
def test_what_flows_in_flows_through_arrays_give_arrays(name):
    # One rule, the faces': a NumPy array gives a NumPy array of the tensor's values, a
    # number a NumPy number, a Tensor a Tensor (of the input's dtype).
    f = getattr(special, name)
    from_tensor = call(name, f, dl.tensor(POINTS, dtype=dl.float64))
    from_array = call(name, f, POINTS.copy())
    assert isinstance(from_tensor, dl.Tensor) and from_tensor.dtype == dl.float64
    assert isinstance(from_array, (np.ndarray, np.generic)), type(from_array)
    np.testing.assert_allclose(from_array, from_tensor.numpy(), rtol=1e-15, atol=0)
    if name not in ("softmax", "log_softmax", "logsumexp"):  # (these need a dimension)
        number = call(name, f, 0.9)
        assert not isinstance(number, dl.Tensor)
        np.testing.assert_allclose(number, from_tensor.numpy()[1], rtol=1e-15, atol=0)
    assert call(name, f, dl.tensor(POINTS, dtype=dl.float32)).dtype == dl.float32


MODES = ("forward", "symbolic", "numeric")


@pytest.mark.parametrize("name", sorted(special.__all__))
def test_every_name_differentiates_in_every_mode(name):
    # the composites too (multigammaln, entr, xlogy, xlog1py did not run on dual numbers
    # or sympy expressions): each mode's gradient is the tape's
    f = getattr(special, name)
    x = np.array([0.3, 0.9])
    want = dl.grad(lambda v: dl.sum(call(name, f, v)), method="reverse")(x)
    for method in MODES:
        if name == "round" and method == "symbolic":
            continue  # (piecewise constant: sympy has no derivative rule for the rounding)
        got = dl.grad(lambda v: dl.sum(call(name, f, v)), method=method)(x)
        np.testing.assert_allclose(np.asarray(got, dtype=float), want, rtol=1e-6, atol=1e-9,
                                   err_msg=method)


def test_multigammaln_on_arrays_and_its_gradient():
    np.testing.assert_allclose(special.multigammaln(np.array([2.5, 4.0]), 3),
                               sc.multigammaln(np.array([2.5, 4.0]), 3), rtol=1e-14)
    with pytest.raises(ValueError, match=r"greater than \(p - 1\)/2 = 1.0"):
        special.multigammaln(np.array([0.9, 3.0]), 3)
    # d log Γ₃(a)/da = ψ(a) + ψ(a - 1/2) + ψ(a - 1)
    got = dl.derivative(lambda a: special.multigammaln(a, 3), method="forward")(2.5)
    np.testing.assert_allclose(float(got), sum(sc.digamma(2.5 - j / 2) for j in range(3)))


def test_entr_matches_scipy_at_its_edges():
    # -inf gives -inf (it gave NaN), -0.0 gives +0.0 (as scipy and PyTorch)
    x = np.array([-np.inf, -1.0, -0.0, 0.0, 0.5, np.inf, np.nan])
    got = special.entr(dl.tensor(x, dtype=dl.float64)).numpy()
    np.testing.assert_array_equal(got, sc.entr(x))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(sc.entr(x)))
