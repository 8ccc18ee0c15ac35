"""Tests for notebook 12's exercises: the VJP of the inverse, the JVP of tr(A⁻¹), the VJP
of a solve.  The expected answers come from difflab's own rules in this process."""

import numpy as np
import submission

import difflab as dl
from difflab.grading import points
from difflab.grading.checks import assert_close

la = dl.linalg
RNG = np.random.default_rng(12)


def well_conditioned(n, seed):
    return np.random.default_rng(seed).normal(size=(n, n)) + n * np.eye(n)


INV = ("Ā = −Yᵀ Ȳ Yᵀ with Y = A⁻¹ (differentiate A Y = I, then move the factors around "
       "the trace). Check the transposes: Ȳ sits between two Yᵀ.")


def check_inv_vjp(A, Ybar):
    t = dl.tensor(A, requires_grad=True)
    (la.inv(t) * dl.tensor(Ybar)).sum().backward()
    assert_close(submission.inv_vjp(A, Ybar), t.grad.numpy(), what="inv_vjp(A, Ȳ)",
                 rtol=1e-9, atol=1e-12, hint=INV)


@points(2, tags=["matrix calculus"])
def test_inv_vjp():
    check_inv_vjp(well_conditioned(3, 0), RNG.normal(size=(3, 3)))


@points(1, hidden=True, tags=["matrix calculus"])
def test_inv_vjp_non_symmetric_adjoint_on_a_larger_matrix():
    check_inv_vjp(well_conditioned(5, 1), np.triu(np.ones((5, 5))))


TRACE = "ḟ = tr(dY) with dY = −Y Ȧ Y: −tr(A⁻¹ Ȧ A⁻¹), a number."


def check_trace_inv_jvp(A, Adot):
    n = A.shape[0]
    f = lambda z: dl.sum(la.inv(z.reshape(n, n)) * np.eye(n))  # noqa: E731
    _, want = dl.jvp(f, (A.ravel(),), (Adot.ravel(),), method="forward")
    assert_close(submission.trace_inv_jvp(A, Adot), float(want), what="trace_inv_jvp(A, Ȧ)",
                 rtol=1e-9, atol=1e-12, hint=TRACE)


@points(2, tags=["matrix calculus"])
def test_trace_inv_jvp():
    check_trace_inv_jvp(well_conditioned(2, 2), np.array([[0.3, -1.0], [2.0, 0.1]]))


@points(1, hidden=True, tags=["matrix calculus"])
def test_trace_inv_jvp_4x4():
    check_trace_inv_jvp(well_conditioned(4, 3), RNG.normal(size=(4, 4)))


SOLVE = ("B̄ = A⁻ᵀ X̄ (a solve with Aᵀ) and Ā = −B̄ Xᵀ with X = A⁻¹B; return the pair "
         "(Ā, B̄).")


def check_solve_vjp(A, B, Xbar):
    a, b = dl.tensor(A, requires_grad=True), dl.tensor(B, requires_grad=True)
    (la.solve(a, b) * dl.tensor(Xbar)).sum().backward()
    got = submission.solve_vjp(A, B, Xbar)
    assert_close(got[0], a.grad.numpy(), what="Ā of solve_vjp", rtol=1e-9, atol=1e-12,
                 hint=SOLVE)
    assert_close(got[1], b.grad.numpy(), what="B̄ of solve_vjp", rtol=1e-9, atol=1e-12,
                 hint=SOLVE)


@points(2, tags=["matrix calculus"])
def test_solve_vjp():
    check_solve_vjp(well_conditioned(3, 4), RNG.normal(size=(3, 2)), RNG.normal(size=(3, 2)))


@points(1, hidden=True, tags=["matrix calculus"])
def test_solve_vjp_one_right_hand_side():
    check_solve_vjp(well_conditioned(4, 5), RNG.normal(size=(4, 1)), RNG.normal(size=(4, 1)))
