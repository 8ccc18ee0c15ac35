"""difflab.linalg: values against NumPy/SciPy (LAPACK), gradients against finite differences
on random and ill-conditioned matrices, the four methods (and compiled) against each other,
the degenerate cases (singular, not positive-definite, repeated eigenvalues), CuPy.

Second derivatives of every linear-algebra primitive in every method are in
tests/diff/test_second_order.py (PRIMITIVE_CASES), replay/export/graph backward and
vmap through the sample table (difflab/testing/samples.py).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import difflab as dl
from difflab.autograd import gradcheck

la = dl.linalg
RNG = np.random.default_rng(2026)


def _t(a, grad=False):
    return dl.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def _with_singular_values(s, m=None, seed=0):
    """An m × n matrix with singular values s (n = len(s)) and random singular vectors."""
    rng = np.random.default_rng(seed)
    n = len(s)
    m = n if m is None else m
    u, _ = np.linalg.qr(rng.standard_normal((m, n)))
    v, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return (u * np.asarray(s, dtype=float)) @ v.T


def _symmetric_with(w, seed=0):
    """A symmetric matrix with eigenvalues w."""
    v, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((len(w), len(w))))
    return (v * np.asarray(w, dtype=float)) @ v.T


# ------------------------------------------------------------------ values vs LAPACK

A3 = RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3)
B32 = RNG.standard_normal((2, 3, 2))
SPD = A3 @ np.swapaxes(A3, -1, -2) + np.eye(3)
TALL = RNG.standard_normal((2, 4, 3))
M6 = RNG.standard_normal((6, 6)) + 6 * np.eye(6)


@pytest.mark.parametrize("name,got,want", [
    ("solve", lambda: la.solve(_t(A3), _t(B32)), lambda: np.linalg.solve(A3, B32)),
    ("solve vector", lambda: la.solve(_t(A3[0]), _t(B32[0, :, 0])),
     lambda: np.linalg.solve(A3[0], B32[0, :, 0])),
    ("solve left=False", lambda: la.solve(_t(A3), _t(np.swapaxes(B32, -1, -2)), left=False),
     lambda: np.swapaxes(np.linalg.solve(np.swapaxes(A3, -1, -2), B32), -1, -2)),
    ("inv", lambda: la.inv(_t(A3)), lambda: np.linalg.inv(A3)),
    ("det", lambda: la.det(_t(A3)), lambda: np.linalg.det(A3)),
    ("slogdet", lambda: la.slogdet(_t(-A3)).logabsdet, lambda: np.linalg.slogdet(-A3)[1]),
    ("slogdet sign", lambda: la.slogdet(_t(-A3)).sign, lambda: np.linalg.slogdet(-A3)[0]),
    ("cholesky", lambda: la.cholesky(_t(SPD)), lambda: np.linalg.cholesky(SPD)),
    ("cholesky upper", lambda: la.cholesky(_t(SPD), upper=True),
     lambda: np.swapaxes(np.linalg.cholesky(SPD), -1, -2)),
    ("qr Q", lambda: la.qr(_t(TALL)).Q, lambda: np.linalg.qr(TALL)[0]),
    ("qr R", lambda: la.qr(_t(TALL)).R, lambda: np.linalg.qr(TALL)[1]),
    ("qr complete", lambda: la.qr(_t(TALL), mode="complete").Q,
     lambda: np.linalg.qr(TALL, mode="complete")[0]),
    ("eigh w", lambda: la.eigh(_t(SPD)).eigenvalues, lambda: np.linalg.eigh(SPD)[0]),
    ("eigh V", lambda: la.eigh(_t(SPD)).eigenvectors, lambda: np.linalg.eigh(SPD)[1]),
    ("eigh UPLO=U", lambda: la.eigvalsh(_t(np.triu(SPD)), UPLO="U"),
     lambda: np.linalg.eigvalsh(SPD)),
    ("eigvalsh", lambda: la.eigvalsh(_t(SPD)), lambda: np.linalg.eigvalsh(SPD)),
    ("svd U", lambda: la.svd(_t(TALL), full_matrices=False).U,
     lambda: np.linalg.svd(TALL, full_matrices=False)[0]),
    ("svd S", lambda: la.svd(_t(TALL)).S, lambda: np.linalg.svd(TALL)[1]),
    ("svd Vh", lambda: la.svd(_t(TALL)).Vh, lambda: np.linalg.svd(TALL)[2]),
    ("svd full U", lambda: la.svd(_t(TALL)).U[..., 3:] ** 2,
     lambda: np.linalg.svd(TALL)[0][..., 3:] ** 2),
    ("dl.svd V", lambda: dl.svd(_t(TALL)).V,
     lambda: np.swapaxes(np.linalg.svd(TALL)[2], -1, -2)),
    ("svdvals", lambda: la.svdvals(_t(TALL)), lambda: np.linalg.svd(TALL, compute_uv=False)),
    ("pinv", lambda: la.pinv(_t(TALL)), lambda: np.linalg.pinv(TALL)),
    ("pinv of rank 1", lambda: la.pinv(_t(np.ones((3, 2)))),
     lambda: np.linalg.pinv(np.ones((3, 2)))),
    ("lstsq", lambda: la.lstsq(_t(TALL), _t(TALL[..., :2])).solution,
     lambda: np.stack([np.linalg.lstsq(a, b, rcond=None)[0]
                       for a, b in zip(TALL, TALL[..., :2])])),
    ("matrix_exp", lambda: la.matrix_exp(_t(A3 * 2)), lambda: scipy.linalg.expm(A3 * 2)),
    ("matrix_exp large norm", lambda: la.matrix_exp(_t(A3[0] * 9)) / 1e10,
     lambda: scipy.linalg.expm(A3[0] * 9) / 1e10),
    ("matrix_power -3", lambda: la.matrix_power(_t(A3), -3),
     lambda: np.linalg.matrix_power(np.linalg.inv(A3), 3)),
    ("matrix_power 5", lambda: la.matrix_power(_t(A3), 5), lambda: np.linalg.matrix_power(A3, 5)),
    ("norm", lambda: la.norm(_t(A3)), lambda: np.linalg.norm(A3.reshape(-1))),
    ("norm nuc", lambda: la.norm(_t(A3[0]), "nuc"), lambda: np.linalg.norm(A3[0], "nuc")),
    ("matrix_norm 2", lambda: la.matrix_norm(_t(A3), 2),
     lambda: np.linalg.norm(A3, 2, (-2, -1))),
    ("matrix_norm -inf", lambda: la.matrix_norm(_t(A3), -np.inf),
     lambda: np.linalg.norm(A3, -np.inf, (-2, -1))),
    ("matrix_norm dims", lambda: la.matrix_norm(_t(A3), 1, dim=(0, 2), keepdim=True),
     lambda: np.linalg.norm(A3, 1, (0, 2), keepdims=True)),
    ("vector_norm 3", lambda: la.vector_norm(_t(A3), 3, dim=(1, 2)),
     lambda: (np.abs(A3) ** 3).sum((1, 2)) ** (1 / 3)),
    ("vector_norm 0", lambda: la.vector_norm(_t([0.0, 2.0, -1.0]), 0), lambda: 2.0),
    ("cond", lambda: la.cond(_t(A3)), lambda: np.linalg.cond(A3)),
    ("cond fro", lambda: la.cond(_t(A3), "fro"), lambda: np.linalg.cond(A3, "fro")),
    ("matrix_rank", lambda: la.matrix_rank(_t(_with_singular_values([1, 1e-3, 0]))),
     lambda: 2),
    ("multi_dot", lambda: la.multi_dot([_t(A3[0]), _t(A3[1]), _t(B32[0])]),
     lambda: np.linalg.multi_dot([A3[0], A3[1], B32[0]])),
    ("cross", lambda: la.cross(_t(A3), _t(A3[::-1]), dim=1),
     lambda: np.cross(A3, A3[::-1], axis=1)),
    ("vecdot", lambda: la.vecdot(_t(A3), _t(A3)), lambda: (A3 * A3).sum(-1)),
    ("vander", lambda: la.vander(_t([1.0, 2.0, 3.0]), N=4),
     lambda: np.vander([1.0, 2.0, 3.0], 4, increasing=True)),
    ("tensorinv", lambda: la.tensorinv(_t(M6.reshape(6, 2, 3)), ind=1),
     lambda: np.linalg.tensorinv(M6.reshape(6, 2, 3), ind=1)),
    ("tensorsolve", lambda: la.tensorsolve(_t(M6.reshape(2, 3, 2, 3)), _t(B32[0].T)),
     lambda: np.linalg.tensorsolve(M6.reshape(2, 3, 2, 3), B32[0].T)),
    ("diagonal", lambda: la.diagonal(_t(A3), offset=-1), lambda: np.diagonal(A3, -1, -2, -1)),
    ("lu_factor", lambda: la.lu_factor(_t(A3[0])).LU, lambda: scipy.linalg.lu_factor(A3[0])[0]),
    ("lu_factor pivots", lambda: la.lu_factor(_t(A3[0])).pivots,
     lambda: scipy.linalg.lu_factor(A3[0])[1] + 1),
    ("lu P L U", lambda: la.lu(_t(TALL[0])).L, lambda: scipy.linalg.lu(TALL[0])[1]),
    ("lu_solve", lambda: la.lu_solve(*la.lu_factor(_t(A3)), _t(B32)),
     lambda: np.linalg.solve(A3, B32)),
    ("ldl_solve", lambda: la.ldl_solve(*la.ldl_factor(_t(SPD)), _t(B32)),
     lambda: np.linalg.solve(SPD, B32)),
    ("logdet", lambda: dl.logdet(_t(SPD)), lambda: np.linalg.slogdet(SPD)[1]),
    ("inverse", lambda: _t(A3).inverse(), lambda: np.linalg.inv(A3)),
    ("pinverse", lambda: dl.pinverse(_t(TALL)), lambda: np.linalg.pinv(TALL)),
])
def test_values_equal_lapack(name, got, want):
    value = got()
    value = value.detach() if isinstance(value, dl.Tensor) else value
    np.testing.assert_allclose(np.asarray(value), want(), rtol=1e-10, atol=1e-12, err_msg=name)


def test_householder_product_rebuilds_lapacks_q():
    a = TALL[0]
    qr, tau, _, _ = scipy.linalg.lapack.dgeqrf(a)
    q = la.householder_product(_t(qr), _t(tau))
    np.testing.assert_allclose(np.asarray(q), np.linalg.qr(a)[0], rtol=1e-12, atol=1e-12)


def test_logdet_is_nan_for_a_negative_determinant_and_minus_inf_for_zero():
    assert np.isnan(float(dl.logdet(_t([[0.0, 1.0], [1.0, 0.0]]))))
    assert float(dl.logdet(_t([[1.0, 2.0], [2.0, 4.0]]))) == -np.inf


def test_arrays_give_arrays_and_lists_are_read_as_tensors():
    out = la.inv(np.eye(2) * 2)
    assert isinstance(out, np.ndarray)
    np.testing.assert_allclose(out, np.eye(2) / 2)
    assert isinstance(la.det([[1.0, 2.0], [3.0, 4.0]]), dl.Tensor)


# ---------------------------------------------------- gradients vs finite differences
#
# Why the tolerances: gradcheck compares the rule's Jacobian with central differences
# of step h = 1e-6, whose error is about h²/6·|f'''| (truncation) + ε|f|/h (rounding).
# For f = A⁻¹ with ‖A‖ = 1 and condition number κ, |f| ~ κ, the Jacobian ~ κ² and
# f''' ~ 6κ⁴, so the error *relative to the Jacobian* is about h²κ² + ε/(hκ): 1e-8 for
# κ = 100, 1e-4 for κ = 1e4.  Solves, determinants (through A⁻¹) and the Cholesky
# factor (κ of A) behave alike.  For eigenvectors and singular vectors the role of κ is
# played by 1/gap (F_ij = 1/(w_j − w_i)): the same bound with κ = 1/gap.  The test uses
# rtol = 10·(h²κ² + ε/(hκ)) + 1e-7 (a safety factor of 10 and a floor for the
# rounding of the rule itself), atol the same times the largest Jacobian entry.

H = 1e-6


def _rtol(kappa):
    return 10 * (H * H * kappa * kappa + np.finfo(float).eps / (H * kappa)) + 1e-7


def _check(f, a, kappa):
    tol = _rtol(kappa)
    assert gradcheck(f, (_t(a, grad=True),), eps=H, atol=tol * max(1.0, kappa ** 2), rtol=tol)


RANDOM = _with_singular_values([1.0, 0.6, 0.2], seed=1)            # κ = 5
ILL = _with_singular_values([1.0, 1e-2, 1e-4], seed=2)              # κ = 1e4
ILL_SPD = _symmetric_with([1.0, 1e-2, 1e-4], seed=3)                # κ = 1e4
CLOSE = _symmetric_with([1.0, 1.001, 2.0], seed=4)                  # eigenvalue gap 1e-3
SPD_OF = (lambda a: a @ a.mT + dl.eye(3, dtype=dl.float64) * 0.5)  # noqa: E731

GRAD_CASES = {
    "inv": lambda a: la.inv(a),
    "solve": lambda a: la.solve(a, _t(B32[0])),
    "det": lambda a: la.det(a),
    "slogdet": lambda a: la.slogdet(a).logabsdet,
    "pinv": lambda a: la.pinv(a),
    "matrix_power -2": lambda a: la.matrix_power(a, -2),
    "lu_solve": lambda a: la.lu_solve(*la.lu_factor(a), _t(B32[0])),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
@pytest.mark.parametrize("matrix,kappa", [(RANDOM, 5.0), (ILL, 1e4)], ids=["random", "ill"])
def test_gradients_match_finite_differences(name, matrix, kappa):
    _check(GRAD_CASES[name], matrix, kappa)


@pytest.mark.parametrize("matrix,kappa", [(ILL_SPD, 1e4), (_symmetric_with([3, 2, 1]), 3.0)],
                         ids=["ill", "random"])
def test_symmetric_gradients_match_finite_differences(matrix, kappa):
    # (through a symmetrization, as the rules read symmetric inputs)
    sym = (lambda a: (a + a.mT) / 2)  # noqa: E731
    _check(lambda a: la.cholesky(sym(a)), matrix, kappa)
    _check(lambda a: la.eigvalsh(sym(a)), matrix, kappa)


def test_eigenvectors_with_close_eigenvalues_match_finite_differences():
    # κ's role is played by 1/gap = 1e3; V ∘ V is free of the eigenvectors' signs
    _check(lambda a: la.eigh((a + a.mT) / 2).eigenvectors ** 2, CLOSE, 1e3)


def test_decompositions_match_finite_differences():
    tall = _with_singular_values([2.0, 1.0, 0.5], m=4, seed=5)
    _check(lambda a: la.qr(a).Q * la.qr(a).R[..., :1, :], tall, 4.0)
    _check(lambda a: la.svd(a, full_matrices=False).U ** 2 * la.svd(a).S, tall, 4.0)
    _check(lambda a: la.svd(a.mT, full_matrices=False).Vh ** 2, tall, 4.0)
    _check(lambda a: la.matrix_exp(a), RANDOM * 2, 10.0)
    _check(lambda a: la.lu_factor(a).LU, RANDOM, 5.0)
    _check(lambda a: la.ldl_factor(SPD_OF(a)).LD, RANDOM, 10.0)
    _check(lambda a: la.matrix_norm(a, "nuc") + la.cond(a) + la.norm(a, 2), RANDOM, 5.0)


def test_the_tolerance_is_needed_for_ill_conditioned_matrices():
    """The ill-conditioned checks are not loose for nothing: the finite differences there
    really do differ from the exact Jacobian by more than a well-conditioned tolerance."""
    with pytest.raises(AssertionError):
        assert gradcheck(lambda a: la.inv(a), (_t(ILL, grad=True),), eps=H,
                         atol=_rtol(5.0), rtol=_rtol(5.0))


# ------------------------------------------------------------- the four methods

ONE = np.array([0.3, -0.7, 0.2, 0.5])
SIX = np.array([0.3, -0.7, 0.2, 0.5, 1.1, -0.4])
E32 = np.array([[3.0, 0.0], [0.0, -2.0], [0.5, 0.5]])


def _sq(z):
    return z.reshape(2, 2) + 3.0 * np.eye(2)


def _spd(z):
    a = z.reshape(2, 2)
    return a @ dl.swapaxes(a, 0, 1) + np.eye(2)


#: name -> (f: R^n -> R, x, the methods that apply)
ALL = ("forward", "reverse", "compiled", "symbolic", "numeric")
NO_SYMBOLIC = ("forward", "reverse", "compiled", "numeric")
METHOD_CASES = {
    "solve": (lambda z: dl.sum(la.solve(_sq(z[:4]), z[4:]) ** 2), SIX, ALL),
    "inv": (lambda z: dl.sum(la.inv(_sq(z)) * z.reshape(2, 2)), ONE, ALL),
    "det": (lambda z: la.det(_sq(z)), ONE, ALL),
    "logdet": (lambda z: la.slogdet(_sq(z)).logabsdet, ONE, ALL),
    "cholesky": (lambda z: dl.sum(la.cholesky(_spd(z)) ** 2 * np.arange(4.0).reshape(2, 2)),
                 ONE, ALL),
    "eigvalsh": (lambda z: dl.sum(la.eigvalsh(_spd(z)) * np.array([1.0, 3.0])), ONE, ALL),
    "svdvals": (lambda z: dl.sum(la.svdvals(z.reshape(3, 2) + E32) * np.array([1.0, 3.0])),
                SIX, ALL),
    "pinv": (lambda z: dl.sum(la.pinv(z.reshape(3, 2) + E32) ** 2), SIX, ALL),
    "qr": (lambda z: dl.sum(la.qr(z.reshape(3, 2) + E32).R ** 3), SIX, NO_SYMBOLIC),
    "eigh": (lambda z: dl.sum(la.eigh(_spd(z)).eigenvectors ** 2
                              * np.arange(4.0).reshape(2, 2)), ONE, NO_SYMBOLIC),
    "svd": (lambda z: dl.sum(la.svd(z.reshape(3, 2) + E32, False).U ** 2 * E32), SIX,
            NO_SYMBOLIC),
    "matrix_exp": (lambda z: dl.sum(la.matrix_exp(z.reshape(2, 2)) * np.eye(2)), ONE,
                   NO_SYMBOLIC),
    "norm": (lambda z: la.matrix_norm(z.reshape(2, 2), "fro") + la.vector_norm(z, 3), ONE, ALL),
    "matrix_power": (lambda z: dl.sum(la.matrix_power(z.reshape(2, 2), 3)), ONE, ALL),
    "lstsq": (lambda z: dl.sum(la.lstsq(z.reshape(3, 2) + E32, np.ones((3, 1))).solution ** 2),
              SIX, ALL),
}


#: sympy's pseudo-inverse of a symbolic 3 × 2 matrix takes seconds
SLOW_SYMBOLIC = {"lstsq", "pinv"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_SYMBOLIC
                                  else n for n in sorted(METHOD_CASES)])
def test_forward_reverse_compiled_symbolic_numeric_agree(name):
    f, x, methods = METHOD_CASES[name]
    want = dl.grad(f, method="reverse")(x)
    for method in methods:
        got = dl.grad(f, method=method)(x)
        loose = method == "numeric"
        np.testing.assert_allclose(got, want, rtol=1e-6 if loose else 1e-10,
                                   atol=1e-7 if loose else 1e-12, err_msg=method)


def test_the_decompositions_refuse_symbols_with_a_reason():
    with pytest.raises(Exception, match="no symbolic form"):
        dl.grad(METHOD_CASES["qr"][0], method="symbolic")(SIX)


def test_second_derivative_of_logdet_is_the_known_result():
    """d²/dA² log det A [H, K] = −tr(A⁻¹ H A⁻¹ K): the Hessian in the basis of entries
    is −(A⁻ᵀ ⊗ A⁻¹) with the transpose's index order (Giles 2008)."""
    a = _sq(ONE)
    inv = np.linalg.inv(a)
    want = -np.einsum("li,jk->ijkl", inv, inv).reshape(4, 4)
    for method in ("forward", "reverse", "symbolic"):
        got = dl.hessian(lambda z: la.slogdet(_sq(z)).logabsdet, method=method)(ONE)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=method)


# -------------------------------------------------------------- degenerate cases

SINGULAR = [[1.0, 2.0], [2.0, 4.0]]


@pytest.mark.parametrize("call", [lambda: la.inv(_t(SINGULAR)),
                                  lambda: la.solve(_t(SINGULAR), _t([1.0, 1.0])),
                                  lambda: _t(SINGULAR).inverse()])
def test_a_singular_matrix_raises_linalg_error(call):
    with pytest.raises(la.LinAlgError, match="singular"):
        call()


def test_linalg_error_is_a_runtime_error_as_in_pytorch():
    assert issubclass(la.LinAlgError, RuntimeError)


def test_not_positive_definite_raises_and_ex_reports_the_minor():
    with pytest.raises(la.LinAlgError, match="positive-definite"):
        la.cholesky(_t([[1.0, 2.0], [2.0, 1.0]]))
    stack = _t(np.stack([np.eye(3), np.diag([1.0, 1.0, -1.0])]))
    L, info = la.cholesky_ex(stack)
    assert info.tolist() == [0, 3]
    np.testing.assert_allclose(np.asarray(L.detach())[0], np.eye(3))
    assert np.isnan(np.asarray(L.detach())[1]).all()
    with pytest.raises(la.LinAlgError):
        la.cholesky_ex(stack, check_errors=True)


def test_inv_ex_and_solve_ex_keep_the_good_matrices_and_their_gradients():
    a = _t(np.stack([np.eye(2) * 2, np.array(SINGULAR)]), grad=True)
    inverse, info = la.inv_ex(a)
    assert info.tolist() == [0, 1]
    np.testing.assert_allclose(np.asarray(inverse.detach())[0], np.eye(2) / 2)
    inverse[0].sum().backward()
    np.testing.assert_allclose(a.grad.numpy()[0], -np.ones((2, 2)) / 4)
    assert (a.grad.numpy()[1] == 0).all()
    assert la.solve_ex(_t(SINGULAR), _t([1.0, 1.0])).info.item() == 1


def test_det_gradient_at_a_singular_matrix_is_the_adjugate():
    a = _t(SINGULAR, grad=True)
    la.det(a).backward()
    np.testing.assert_allclose(a.grad.numpy(), [[4.0, -2.0], [-2.0, 1.0]], atol=1e-12)
    d = dl.grad(lambda z: la.det(z.reshape(2, 2)), method="forward")(np.ravel(SINGULAR))
    np.testing.assert_allclose(d, [4.0, -2.0, -2.0, 1.0], atol=1e-12)


def test_slogdet_backward_at_a_singular_matrix_raises():
    a = _t(SINGULAR, grad=True)
    out = la.slogdet(a).logabsdet
    assert float(out) == -np.inf
    with pytest.raises(la.LinAlgError, match="singular"):
        out.backward()


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning",
                            "ignore:invalid value:RuntimeWarning")
def test_repeated_eigenvalues_eigenvalues_stay_finite_eigenvectors_do_not():
    """PyTorch's behaviour: the eigenvalues' gradient is V diag(w̄) Vᵀ, finite at repeated
    eigenvalues; the eigenvectors' gradient divides by the gap 0 and is not finite."""
    a = _t(np.diag([2.0, 2.0, 5.0]), grad=True)
    (la.eigvalsh(a) * _t([1.0, 1.0, 3.0])).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.diag([1.0, 1.0, 3.0]), atol=1e-12)
    b = _t(np.diag([2.0, 2.0, 5.0]), grad=True)
    la.eigh(b).eigenvalues.sum().backward()  # (eigh, eigenvalues only: finite as well)
    np.testing.assert_allclose(b.grad.numpy(), np.eye(3), atol=1e-12)
    c = _t(np.diag([2.0, 2.0, 5.0]), grad=True)  # (exactly repeated: a gap of exactly 0)
    (la.eigh(c).eigenvectors * _t(RNG.standard_normal((3, 3)))).sum().backward()
    assert not np.isfinite(c.grad.numpy()).all()


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning",
                            "ignore:invalid value:RuntimeWarning")
def test_repeated_singular_values_svdvals_stays_finite():
    a = _t(np.eye(3)[:, :2] * 2, grad=True)
    la.svdvals(a).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.eye(3)[:, :2], atol=1e-12)
    b = _t(np.eye(3)[:, :2] * 2, grad=True)
    (la.svd(b, full_matrices=False).U * _t(RNG.standard_normal((3, 2)))).sum().backward()
    assert not np.isfinite(b.grad.numpy()).all()


def test_zero_vector_norm_has_gradient_zero():
    x = _t([0.0, 0.0], grad=True)
    la.vector_norm(x).backward()
    assert x.grad.tolist() == [0.0, 0.0]


def test_bad_shapes_and_settings_are_explained():
    with pytest.raises(ValueError, match="square"):
        la.inv(_t(np.ones((2, 3))))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        la.det(_t([1.0, 2.0]))
    with pytest.raises(ValueError, match="Incompatible shapes"):
        la.solve(_t(np.eye(3)), _t(np.ones((2, 2))))
    with pytest.raises(ValueError, match="mode"):
        la.qr(_t(np.eye(2)), mode="full")
    with pytest.raises(ValueError, match="UPLO"):
        la.eigh(_t(np.eye(2)), UPLO="X")
    with pytest.raises(ValueError, match="ord"):
        la.matrix_norm(_t(np.eye(2)), ord=3)
    with pytest.raises(TypeError, match="integer"):
        la.matrix_power(_t(np.eye(2)), 1.5)
    with pytest.raises(ValueError, match="pivots"):
        la.ldl_solve(_t(np.eye(2)), _t([2, 2]).to(dl.int32), _t(np.ones((2, 1))))


def test_complete_qr_of_a_tall_matrix_has_no_derivative():
    a = _t(TALL[0], grad=True)
    with pytest.raises(RuntimeError, match="mode='complete'"):
        la.qr(a, mode="complete").Q.sum().backward()


# ------------------------------------------------------------------------ devices


@pytest.mark.parametrize("name", ["solve", "inv", "det", "slogdet", "cholesky", "qr", "eigh",
                                  "svd", "pinv", "matrix_exp", "lu"])
def test_devices_give_the_cpus_values_and_gradients(device, name):
    a = A3[0] * 0.5
    calls = {
        "solve": lambda t: la.solve(t, t[:, :1] * 2),
        "inv": la.inv, "det": la.det, "slogdet": lambda t: la.slogdet(t).logabsdet,
        "cholesky": lambda t: la.cholesky(t @ t.mT),
        "qr": lambda t: la.qr(t).R, "eigh": lambda t: la.eigh(t + t.mT).eigenvectors ** 2,
        "svd": lambda t: la.svd(t).S, "pinv": la.pinv, "matrix_exp": la.matrix_exp,
        "lu": lambda t: la.lu_factor(t).LU,
    }
    results = []
    for dev in ("cpu", device):
        t = dl.tensor(a, device=dev, requires_grad=True)
        out = calls[name](t)
        out.sum().backward()
        results.append((out.detach().cpu().numpy(), t.grad.cpu().numpy()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-12, atol=1e-12)


def test_a_singular_matrix_on_the_device_raises_too(cuda):
    with pytest.raises(la.LinAlgError):
        la.inv(dl.tensor(SINGULAR, device=cuda))


# ------------------------------------------------------------- against PyTorch


def test_values_and_gradients_against_pytorch():
    torch = pytest.importorskip("torch")
    a = A3[0]
    cases = {
        "inv": (la.inv, torch.linalg.inv), "det": (la.det, torch.linalg.det),
        "cholesky": (lambda t: la.cholesky(t @ t.mT), lambda t: torch.linalg.cholesky(t @ t.mT)),
        "eigvalsh": (lambda t: la.eigvalsh(t + t.mT), lambda t: torch.linalg.eigvalsh(t + t.mT)),
        "svdvals": (la.svdvals, torch.linalg.svdvals), "pinv": (la.pinv, torch.linalg.pinv),
        "matrix_exp": (la.matrix_exp, torch.linalg.matrix_exp),
        "slogdet": (lambda t: la.slogdet(t).logabsdet, lambda t: torch.linalg.slogdet(t)[1]),
    }
    for name, (mine, theirs) in cases.items():
        x = _t(a, grad=True)
        y = torch.tensor(a, requires_grad=True)
        out, ref = mine(x), theirs(y)
        out.sum().backward()
        ref.sum().backward()
        np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-10,
                                   err_msg=name)
        np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-8, atol=1e-10,
                                   err_msg=name)


# ------------------------------------------------------------- NumPy's functions


def test_numpy_linalg_functions_reach_the_rules_in_every_method():
    """np.linalg.inv / det / cholesky on tensors, dual numbers and symbols are the
    primitives (their numpy_function): plain NumPy code is differentiable four ways."""
    def f(z):
        a = np.reshape(z, (2, 2)) + 3 * np.eye(2)
        return np.linalg.det(a) + np.sum(np.linalg.inv(a) * np.arange(4.0).reshape(2, 2))

    want = dl.grad(f, method="reverse")(ONE)
    for method in ALL:
        np.testing.assert_allclose(dl.grad(f, method=method)(ONE), want,
                                   rtol=1e-6 if method == "numeric" else 1e-10, err_msg=method)
    t = _t(SPD[0], grad=True)
    np.testing.assert_allclose(np.linalg.cholesky(t).detach().numpy(),
                               np.linalg.cholesky(SPD[0]), rtol=1e-12)
    assert np.linalg.cholesky(t).grad_fn is not None


def test_svd_face_refuses_a_vector():
    # Before: IndexError (tuple index out of range) from dl.svd of a 1-D tensor.
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        dl.svd(dl.tensor([1.0, 2.0]))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        dl.tensor([1.0, 2.0]).svd(compute_uv=False)


def test_solve_triangular_broadcasts_a_matrix_with_fewer_batch_dimensions():
    # B (2, 2) against A (2, 2, 2) is one matrix for both (PyTorch), not two vectors as
    # linalg.solve would read it
    lower = np.array([[2.0, 0.0], [1.0, 3.0]])
    a = np.stack([lower, 2 * lower])
    b = np.array([[1.0, 2.0], [3.0, 4.0]])
    x = dl.linalg.solve_triangular(_t(a), _t(b), upper=False)
    assert tuple(x.shape) == (2, 2, 2)
    np.testing.assert_allclose(x.numpy(), [np.linalg.solve(m, b) for m in a], rtol=1e-12)
    right = dl.linalg.solve_triangular(_t(a), _t(b), upper=False, left=False)
    np.testing.assert_allclose(right.numpy(), [b @ np.linalg.inv(m) for m in a], rtol=1e-12)


def test_solve_broadcasts_batches_on_the_gpu_too(cuda):
    """CuPy's solve does not broadcast a's batch against b's (NumPy's does): the primitive
    broadcasts them first, so the two devices agree, gradients included."""
    rng_ = np.random.default_rng(5)
    a0, b0 = rng_.normal(size=(2, 2)) + 3 * np.eye(2), rng_.normal(size=(3, 2, 2))
    results = []
    for device in ("cpu", cuda):
        a = dl.tensor(a0, device=device, requires_grad=True)
        b = dl.tensor(b0, device=device, requires_grad=True)
        x = dl.linalg.solve(a, b)
        (x * x).sum().backward()
        results.append([t.detach().cpu().numpy() for t in (x, a.grad, b.grad)])
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
