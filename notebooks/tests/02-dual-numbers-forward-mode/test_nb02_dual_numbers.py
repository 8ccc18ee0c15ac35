"""Tests for notebook 2's exercises: the dual-number rule of tan; a Jacobian column."""

import numpy as np
import submission

from difflab.grading import check_dual_rule, points
from difflab.grading.checks import assert_close


@points(2, tags=["forward mode"])
def test_tan_rule():
    check_dual_rule(submission.tan_rule, np.tan, points=[-1.0, -0.3, 0.0, 0.4, 1.2])


@points(1, hidden=True, tags=["forward mode"])
def test_tan_rule_on_arrays():
    check_dual_rule(
        submission.tan_rule, np.tan,
        points=[np.linspace(-1.3, 1.3, 7)], tangents=[np.linspace(0.5, 2.5, 7)],
    )


def jacobian(x):
    """The Jacobian of F(x) = (x0 x1, sin x0, x1**3), worked out by hand."""
    return np.array([[x[1], x[0]], [np.cos(x[0]), 0.0], [0.0, 3 * x[1] ** 2]])


SEED = "Seed the input's tangent with the unit vector e_j (np.eye(2)[j]) and read .tangent."


@points(2, tags=["Jacobian"])
def test_jacobian_column():
    x = np.array([2.0, 3.0])
    assert_close(submission.jacobian_column(x, 1), jacobian(x)[:, 1],
                 what="jacobian_column([2, 3], 1)", atol=1e-12, rtol=1e-12, hint=SEED)


@points(2, hidden=True, tags=["Jacobian"])
def test_jacobian_columns_elsewhere():
    for x in (np.array([0.5, -1.2]), np.array([-2.0, 0.25])):
        for j in (0, 1):
            assert_close(submission.jacobian_column(x, j), jacobian(x)[:, j],
                         what=f"jacobian_column({x.tolist()}, {j})", atol=1e-12, rtol=1e-12,
                         hint=SEED)
