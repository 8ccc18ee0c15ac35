"""Tests for notebook 10's exercises: reading the accuracy and cost reports."""

import submission

from difflab import compare
from difflab.grading import GradingFailure, points
from difflab.grading.checks import assert_close

WORST = ("Keep the records whose method is 'numeric' (one in float64, one in float32) and "
         "return the largest rel_error.")


def check_worst(expression, at):
    value = submission.worst_numeric_error(expression, at)
    if not isinstance(value, float):
        raise GradingFailure(f"worst_numeric_error returned a {type(value).__name__}; "
                             "return the relative error as a float")
    rows = compare.accuracy(expression, at=at, methods="numeric").to_records()
    # rtol 0.5: the float64 and float32 rows differ by orders of magnitude, and this
    # leaves room for a float32 rounding that differs between two processes
    assert_close(value, max(r["rel_error"] for r in rows),
                 what=f"the largest numeric relative error for {expression} at {at}",
                 atol=0, rtol=0.5, hint=WORST)


@points(2, tags=["reports"])
def test_worst_numeric_error():
    check_worst("log(1 + x**2)", "x=0.5")


@points(1, hidden=True, tags=["reports"])
def test_worst_numeric_error_other_expression():
    check_worst("sin(x) * exp(-x**2)", "x=1.3")


def expected_ratio(n):
    records = submission.costs.to_records()  # the report the notebook measured
    evaluations = {(r["method"], r["n"]): r.get("evaluations") for r in records}
    return evaluations[("numeric", n)] / evaluations[("reverse", n)]


RATIO = ("Read 'evaluations' from costs.to_records() for the methods 'numeric' and "
         "'reverse' at the given n, and divide.")


@points(1, tags=["reports"])
def test_evaluation_ratio():
    assert_close(submission.evaluation_ratio(1000), expected_ratio(1000),
                 what="numeric's evaluations over reverse mode's at n = 1000",
                 atol=0, rtol=1e-12, hint=RATIO)


@points(1, hidden=True, tags=["reports"])
def test_evaluation_ratio_other_sizes():
    for n in (10, 100):
        assert_close(submission.evaluation_ratio(n), expected_ratio(n),
                     what=f"numeric's evaluations over reverse mode's at n = {n}",
                     atol=0, rtol=1e-12, hint=RATIO)
