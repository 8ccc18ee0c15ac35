"""Tests for notebook 1's exercises: a second difference and its best step; three methods.

The notebook runs in its own process; tests reach its names through ``submission``.  A
function cannot travel between the processes, so the functions handed to the student's
``second_difference`` are the notebook's own (``submission.f``, ``submission.np.sin``).
"""

import mpmath
import numpy as np
import submission

from difflab.grading import GradingFailure, points
from difflab.grading.checks import assert_close

SECOND_DIFFERENCE = (
    "The central second difference is (g(x + h) - 2 g(x) + g(x - h)) / h**2: "
    "h is squared in the denominator."
)


def f_second(x):
    """f''(x) for f(x) = exp(x) sin(x)."""
    return 2 * np.exp(x) * np.cos(x)


@points(2, tags=["finite differences"])
def test_second_difference():
    for x in (0.3, 1.0, 2.0):
        assert_close(
            submission.second_difference(submission.f, x, 1e-4), f_second(x),
            what=f"second_difference(f, {x}, 1e-4) against f''({x})",
            atol=1e-8, rtol=1e-5, hint=SECOND_DIFFERENCE,
        )


@points(1, hidden=True, tags=["finite differences"])
def test_second_difference_on_arrays_and_other_steps():
    x = np.linspace(-1.0, 1.0, 5)
    for h in (1e-3, 1e-4):
        assert_close(
            submission.second_difference(submission.np.sin, x, h), -np.sin(x),
            what=f"second_difference(np.sin, x, {h}) against -sin(x)",
            atol=1e-6, rtol=1e-4, point=("x", x), hint=SECOND_DIFFERENCE,
        )


@points(2, tags=["step size"])
def test_best_step():
    best = float(submission.find_best_h())
    steps = np.logspace(-16, -1, 61)
    errors = [abs(f_difference(h) / f_second(1.0) - 1) for h in steps]
    truth = steps[int(np.argmin(errors))]
    if not np.isclose(steps, best, rtol=1e-9).any():
        raise GradingFailure(
            f"find_best_h() returned {best:.3g}, which is not one of the steps in `steps`: "
            "return the h from `steps` whose error is smallest."
        )
    if not truth / 10 <= best <= truth * 10:
        raise GradingFailure(
            f"find_best_h() returned {best:.1e}, but the smallest error of the second "
            f"difference at x0 = 1 is at h = {truth:.1e} (theory: eps**(1/4) ~ 1e-4). Measure "
            "the relative error against exact_second for every h and take the argmin."
        )


def f_difference(h, x=1.0):
    def f(t):
        return np.exp(t) * np.sin(t)

    return (f(x + h) - 2 * f(x) + f(x - h)) / h**2


@points(1, tags=["automatic differentiation"])
def test_g():
    x = np.array([-1.0, 0.0, 0.7, 2.0])
    assert_close(
        submission.g(x), np.sqrt(1 + x**2) * np.cos(3 * x), what="g(x)", point=("x", x),
        atol=1e-12, rtol=1e-10,
    )


@points(2, tags=["automatic differentiation"])
def test_three_derivatives():
    d = submission.three_derivatives()
    if not isinstance(d, dict):
        raise GradingFailure(
            f"three_derivatives() returned a {type(d).__name__}; return a dict "
            "{'forward': ..., 'reverse': ..., 'numeric': ...}"
        )
    mpmath.mp.dps = 50
    exact = float(mpmath.diff(lambda t: mpmath.sqrt(1 + t**2) * mpmath.cos(3 * t),
                              mpmath.mpf("0.7")))
    for method, rtol in (("forward", 1e-13), ("reverse", 1e-13), ("numeric", 1e-7)):
        if method not in d:
            raise GradingFailure(f"the dict has no '{method}' entry (keys: {sorted(d)})")
        assert_close(d[method], exact, what=f"g'(0.7) by the {method} method", atol=0,
                     rtol=rtol)
