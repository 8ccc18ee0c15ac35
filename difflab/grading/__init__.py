"""Autograding with difflab: teaching checks, points, and a Gradescope-ready grader.

Instructors write ordinary pytest tests and call the ``check_*`` helpers, whose failure
messages say *where* the student's answer differs and *by how much*, with a hint::

    from difflab.grading import check_function, points
    from submission import Legendre3

    @points(2)
    def test_backward():
        check_function(Legendre3, lambda x: (5 * x**3 - 3 * x) / 2, [np.linspace(-1, 1, 5)])

``difflab grade SUBMISSION --tests TESTS_DIR --out results.json`` (or :func:`grade`)
runs those tests against a student's ``.py`` file or notebook in a separate, time- and
memory-limited process and writes Gradescope's results file.  ``difflab assign`` (or
:func:`make_student_version` / :func:`make_instructor_version`) turns a source notebook
with nbgrader ``### BEGIN SOLUTION`` markers into the student and instructor versions,
the student's with the visible tests, which ``difflab check`` (or :func:`check` in a
notebook) runs before submitting.  ``difflab grade FOLDER`` grades a class into a
gradebook (:func:`grade_batch`); ``difflab autograder build`` makes Gradescope's zip
(:func:`build_autograder`).  Partial credit: ``@points(n, partial=True)`` with
:func:`subcheck`; per-student inputs: :func:`student_seed`; :func:`leaderboard`; what the
student's process can use (CUDA): :func:`student_environment`.
Written answers graded by hand: :mod:`difflab.grading.manual` (``difflab manual``);
the gradebook's statistics, fixes and Canvas export: :mod:`difflab.grading.gradebook`
(``difflab gradebook``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: Each public name and the module that defines it.  A name is imported when it is first
#: used (PEP 562), so the grader's processes load only what they need: the student's
#: process needs neither pytest nor nbformat, the test process not nbformat, and each
#: heavy import costs every grading a share of a second of processor time.
_WHERE = {
    "build_autograder": "autograder",
    "grade_batch": "batch",
    "assert_close": "checks",
    "check_dual_rule": "checks",
    "check_function": "checks",
    "check_gradient": "checks",
    "check_module": "checks",
    "check_optimizer_step": "checks",
    "LatePolicy": "context",
    "leaderboard": "context",
    "student_environment": "context",
    "student_seed": "context",
    "subcheck": "credit",
    "GradingFailure": "errors",
    "GradingInputError": "errors",
    "points": "markers",
    "make_instructor_version": "notebooks",
    "make_student_version": "notebooks",
    "visible_tests": "release",
    "format_summary": "results",
    "validate_results": "results",
    "write_results": "results",
    "grade": "runner",
    "check": "selfcheck",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value  # found directly from now on
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})


if TYPE_CHECKING:  # for type checkers and readers: the same names, imported at once
    from difflab.grading.autograder import build_autograder
    from difflab.grading.batch import grade_batch
    from difflab.grading.checks import (
        assert_close,
        check_dual_rule,
        check_function,
        check_gradient,
        check_module,
        check_optimizer_step,
    )
    from difflab.grading.context import (
        LatePolicy,
        leaderboard,
        student_environment,
        student_seed,
    )
    from difflab.grading.credit import subcheck
    from difflab.grading.errors import GradingFailure, GradingInputError
    from difflab.grading.markers import points
    from difflab.grading.notebooks import make_instructor_version, make_student_version
    from difflab.grading.release import visible_tests
    from difflab.grading.results import format_summary, validate_results, write_results
    from difflab.grading.runner import grade
    from difflab.grading.selfcheck import check

__all__ = [
    "assert_close",
    "check_gradient",
    "check_function",
    "check_dual_rule",
    "check_module",
    "check_optimizer_step",
    "points",
    "grade",
    "make_student_version",
    "make_instructor_version",
    "format_summary",
    "validate_results",
    "write_results",
    "GradingFailure",
    "GradingInputError",
    "subcheck",
    "student_seed",
    "student_environment",
    "leaderboard",
    "LatePolicy",
    "check",
    "grade_batch",
    "build_autograder",
    "visible_tests",
]
