"""Tests for notebook 10's exercises: reading the accuracy and cost reports."""

import submission

from difflab import compare
from difflab.grading import GradingFailure, points
from difflab.grading.checks import assert_close


@points(2, tags=["reports"])
def test_worst_numeric_error():
    value = submission.worst_numeric_error()
    if not isinstance(value, float):
        raise GradingFailure(f"worst_numeric_error() returned a {type(value).__name__}; "
                             "return the relative error as a float")
    rows = compare.accuracy("log(1 + x**2)", at="x=0.5", methods="numeric").to_records()
    worst = max(r["rel_error"] for r in rows)
    assert_close(value, worst, what="the largest relative error of the numeric rows",
                 atol=0, rtol=0.5,
                 hint="Keep the records whose method is 'numeric' (float64 and float32) and "
                      "take the largest rel_error.")


@points(1, tags=["reports"])
def test_evaluation_ratio():
    records = submission.costs.to_records()
    evaluations = {(r["method"], r["n"]): r.get("evaluations") for r in records}
    expected = evaluations[("numeric", 1000)] / evaluations[("reverse", 1000)]
    assert_close(submission.evaluation_ratio(), expected,
                 what="numeric's evaluations over reverse mode's at n = 1000",
                 atol=0, rtol=1e-12,
                 hint="Read 'evaluations' from costs.to_records() for the methods 'numeric' "
                      "and 'reverse' at n = 1000.")
