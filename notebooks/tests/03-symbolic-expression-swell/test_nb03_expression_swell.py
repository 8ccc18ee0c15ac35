"""Tests for notebook 3's exercises: the logistic map's derivative by recurrence; dl.where."""

import numpy as np
import submission

import difflab as dl
from difflab.grading import check_gradient, points
from difflab.grading.checks import assert_close


def logistic(x, n):
    l = x
    for _ in range(n - 1):
        l = 4 * l * (1 - l)
    return l


def reference_derivative(x, n):
    """d l_n/dx by difflab's forward mode, in this (trusted) process."""
    return float(dl.derivative(lambda t: logistic(t, n), method="forward")(x))


RECURRENCE = (
    "Update the value and the derivative together, each from the *old* l: "
    "l, d = 4 l (1 - l), 4 d (1 - 2 l); at n = 1 the derivative is 1."
)


@points(2, tags=["forward mode"])
def test_logistic_derivative():
    for n in (1, 2, 5):
        for x in (0.1, 0.3):
            assert_close(submission.logistic_derivative(x, n), reference_derivative(x, n),
                         what=f"logistic_derivative({x}, {n})", atol=1e-12, rtol=1e-10,
                         hint=RECURRENCE)


@points(1, hidden=True, tags=["forward mode"])
def test_logistic_derivative_deep():
    for n in (12, 20):
        for x in (0.77, 0.31):
            assert_close(submission.logistic_derivative(x, n), reference_derivative(x, n),
                         what=f"logistic_derivative({x}, {n})", atol=1e-9, rtol=1e-6,
                         hint=RECURRENCE)


@points(2, tags=["symbolic"])
def test_clipped_where_differentiates_symbolically():
    # The symbolic method has to trace the student's function with SymPy symbols, which
    # only the student's process can do: the derivative is built there and called here.
    derivative = submission.dl.derivative(submission.clipped_where, method="symbolic")
    for x in (0.5, 2.0, 3.0):
        assert_close(derivative(x), 1 / x if x > 1 else 1.0,
                     what=f"the symbolic derivative of clipped_where at x = {x}",
                     hint="Select between the branches with dl.where(x > 1, dl.log(x), x - 1).")


@points(1, hidden=True, tags=["symbolic"])
def test_clipped_where_values_and_gradient():
    x = np.array([0.25, 0.9, 1.5, 2.0, 4.0])
    assert_close(submission.clipped_where(x), np.where(x > 1, np.log(x), x - 1),
                 what="clipped_where(x)", point=("x", x))
    check_gradient(submission.clipped_where, [x])
