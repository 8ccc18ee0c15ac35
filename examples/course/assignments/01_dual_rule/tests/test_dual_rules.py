"""Instructor tests for assignment 1 (dual-number rules).

Tests reach the student's work through the ``submission`` module, one attribute per test,
so a missing or broken function costs only the tests that use it.
"""

import numpy as np
import submission

from difflab.grading import check_dual_rule, points


@points(1, tags=["forward mode"])
def test_sin_rule():
    check_dual_rule(submission.dual_sin, np.sin)


@points(1, hidden=True, tags=["forward mode"])
def test_sin_rule_on_arrays():
    check_dual_rule(
        submission.dual_sin,
        np.sin,
        points=[np.linspace(-3.0, 3.0, 7)],
        tangents=[np.linspace(0.5, 2.0, 7)],
    )


@points(2, tags=["product rule"])
def test_mul_rule():
    check_dual_rule(submission.dual_mul, np.multiply)


@points(1, tags=["forward mode"])
def test_exp_rule():
    check_dual_rule(submission.dual_exp, np.exp)


@points(2, hidden=True, tags=["composition"])
def test_composed_rule():
    def f(x):
        return np.sin(x) * np.exp(x)

    check_dual_rule(submission.f_dual, f, points=[-1.0, 0.0, 0.7, 2.0])
