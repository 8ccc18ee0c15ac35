"""Tests for notebook 5's exercises: distances by broadcasting; a broadcast gradient."""

import numpy as np
import submission

import difflab as dl
from difflab.grading import check_gradient, points
from difflab.grading.checks import assert_close

RNG = np.random.default_rng(5)


def loops(P, Q):
    return np.array([[((p - q) ** 2).sum() for q in Q] for p in P])


@points(2, tags=["broadcasting"])
def test_squared_distances():
    P, Q = RNG.standard_normal((5, 2)), RNG.standard_normal((7, 2))
    D = submission.squared_distances(dl.tensor(P), dl.tensor(Q))
    assert_close(D, loops(P, Q), what="squared_distances(P, Q)", atol=1e-10, rtol=1e-10,
                 hint="P.unsqueeze(1) - Q.unsqueeze(0) has shape (n, m, 2); sum its squares "
                      "over the last dimension.")


@points(1, hidden=True, tags=["broadcasting"])
def test_squared_distances_is_differentiable():
    P, Q = RNG.standard_normal((3, 2)), RNG.standard_normal((4, 2))
    check_gradient(submission.squared_distances, [P, Q])


def backward_a_grad(a, c):
    a_ = dl.tensor(a, dtype=dl.float64, requires_grad=True)
    ((a_ * dl.tensor(c, dtype=dl.float64)) ** 2).sum().backward()
    return a_.grad.numpy()


@points(2, tags=["broadcast gradients"])
def test_predicted_a_grad():
    a, c = np.array([[0.5], [-2.0]]), np.array([1.0, 2.0, 3.0])
    assert_close(submission.predicted_a_grad(a, c), backward_a_grad(a, c),
                 what="predicted_a_grad(a, c)", atol=1e-12, rtol=1e-12, point=("a", a),
                 hint="dL/da_i = sum_j 2 a_i c_j²: sum over the dimension a was broadcast "
                      "along; the result keeps a's shape (2, 1).")


@points(1, hidden=True, tags=["broadcast gradients"])
def test_predicted_a_grad_other_values():
    a, c = np.array([[1.5], [0.25]]), np.array([-1.0, 0.5, 4.0])
    assert_close(submission.predicted_a_grad(a, c), backward_a_grad(a, c),
                 what="predicted_a_grad(a, c)", atol=1e-12, rtol=1e-12, point=("a", a))
