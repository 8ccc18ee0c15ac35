"""Before a release: the solution must earn full marks (``difflab assign``).

A test that cannot run against a correct solution would cost every student its points:
one that passes one of the test's objects the student's code cannot be given (a layer,
an optimizer: only data and functions cross between the processes), one whose
reference is wrong, one that is too slow for the time limit.  ``difflab assign`` grades
the instructor's solution with every test, visible and hidden, in the same sandbox as
a student's submission, and refuses to release when a test does not pass, as
``otter assign`` and ``nbgrader validate`` do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from difflab.grading.errors import GradingInputError

__all__ = ["validate_solution"]

#: Lines of each failing test's message quoted in the refusal.
_MESSAGE_LINES = 6


def validate_solution(solution: str | Path, tests_dir: str | Path, **limits: Any
                      ) -> dict[str, Any]:
    """Grade ``solution`` with every test of ``tests_dir``; refuse anything but full marks.

    Parameters
    ----------
    solution : str or Path
        The instructor's version (solutions in place), a notebook or ``.py`` file.
    tests_dir : str or Path
        The assignment's tests folder, hidden tests included, or the assignment folder
        itself: then the tests made from its sources' hidden-tests blocks are graded too.
    **limits
        Passed to :func:`~difflab.grading.runner.grade` (``timeout``, ``memory_mb``, ...).

    Returns
    -------
    dict
        The results of the grading, every test passed.

    Raises
    ------
    GradingInputError
        Naming each test the solution does not pass, with the grader's message (for a
        test that passes what cannot cross to the student's process, the reason).

    Examples
    --------
    >>> import tempfile, textwrap
    >>> from pathlib import Path
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "hw.py").write_text("def double(x):\\n    return 2 * x\\n")
    >>> (folder / "tests").mkdir()
    >>> _ = (folder / "tests" / "test_hw.py").write_text(textwrap.dedent('''
    ...     import submission
    ...     def test_double():
    ...         assert submission.double(21) == 42
    ... '''))
    >>> validate_solution(folder / "hw.py", folder / "tests", timeout=10)["score"]
    1.0
    """
    from difflab.grading.runner import grade

    results = grade(solution, tests_dir, **limits)
    failed = [t for t in results["tests"] if t.get("status") != "passed"]
    if not failed and results["tests"]:
        return results
    lines = [f"the solution {Path(solution).name} does not pass every test, so nothing was "
             "released:"]
    if not results["tests"]:
        lines.append("  " + (results.get("output") or "no test ran").strip())
    for test in failed:
        message = "\n      ".join(str(test.get("output", "")).strip().splitlines()
                                  [:_MESSAGE_LINES])
        lines.append(f"  {test['name']} ({test.get('score', 0):g}/{test['max_score']:g}): "
                     f"{message}")
    lines.append("Fix the tests or the solution (a test may pass only data and functions to "
                 "the student's code: see 'What crosses between the processes' in the "
                 "grading guide), or release anyway with --no-validate.")
    raise GradingInputError("\n".join(lines))
