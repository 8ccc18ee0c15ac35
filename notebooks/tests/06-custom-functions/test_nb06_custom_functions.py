"""Tests for notebook 6's exercises: the Functions LegendrePolynomial4 and Softplus."""

import numpy as np
import submission

from difflab.grading import check_function, points


def p4(x):
    return (35 * x**4 - 30 * x**2 + 3) / 8


def softplus(x):
    return np.log1p(np.exp(x))


@points(1, tags=["custom Function"])
def test_legendre4_forward():
    check_function(submission.LegendrePolynomial4, p4, [np.linspace(-1, 1, 9)],
                   check_backward=False)


@points(2, tags=["custom Function"])
def test_legendre4_backward():
    check_function(submission.LegendrePolynomial4, p4, [np.linspace(-1, 1, 9)],
                   check_forward=False)


@points(1, hidden=True, tags=["custom Function"])
def test_legendre4_on_a_matrix():
    check_function(submission.LegendrePolynomial4, p4,
                   [np.linspace(-1.5, 1.5, 12).reshape(3, 4)], seed=1)


@points(2, tags=["custom Function"])
def test_softplus():
    check_function(submission.Softplus, softplus, [np.linspace(-4, 4, 9)])


@points(1, hidden=True, tags=["custom Function"])
def test_softplus_wide_range():
    check_function(submission.Softplus, softplus, [np.linspace(-20, 20, 11)], seed=2)
