"""Working with a class's gradebook: feedback, statistics, fixes and an LMS export.

After ``difflab grade FOLDER --tests T --out grades.csv`` the gradebook ``grades.csv``
has a row per student, and ``grades_results/<student>.json`` each student's results.
This module works from those two:

* :func:`feedback_markdown`: a readable feedback file per student (each test, its
  points, its message), written beside each results file by the batch;
* :func:`class_statistics`: mean, median, the spread of each test, a text histogram;
* :func:`adjust_tests`: drop a broken test from everyone's results, or give its points
  to everyone (the results, their scores and the gradebook rewritten);
* :func:`canvas_csv`: the totals in the shape Canvas's gradebook import reads.
"""

from __future__ import annotations

import csv
import json
import statistics
from pathlib import Path
from typing import Any

from difflab.grading.errors import GradingInputError

__all__ = ["feedback_markdown", "class_statistics", "adjust_tests", "canvas_csv", "rescore"]


def rescore(results: dict[str, Any]) -> dict[str, Any]:
    """The results with ``score`` recomputed from their tests (and the late factor).

    ``extra_data["late"]["score_before"]`` becomes the sum of the tests; the score is
    that sum times the late factor, when a late policy applied.
    """
    total = sum(float(t.get("score", 0.0)) for t in results.get("tests", []))
    late = dict((results.get("extra_data") or {}).get("late") or {})
    results = dict(results)
    if late:
        late["score_before"] = round(total, 6)
        results["extra_data"] = dict(results["extra_data"], late=late)
        total *= float(late.get("factor", 1.0))
    results["score"] = round(total, 6)
    return results


def feedback_markdown(results: dict[str, Any], student: str = "") -> str:
    """A student's results as Markdown: the score, then each test with its message.

    Parameters
    ----------
    results : dict
        Results in Gradescope's format (as :func:`~difflab.grading.runner.grade`
        returns them).
    student : str, optional
        The student's name, for the title.

    Returns
    -------
    str
        The feedback, ready to send (the texts are those of the results: already cut
        and redacted by the grader).

    Examples
    --------
    >>> text = feedback_markdown({"score": 1.0, "tests": [
    ...     {"name": "t", "score": 1.0, "max_score": 2.0, "status": "failed",
    ...      "output": "off by one"}]}, "ada")
    >>> print(text.splitlines()[0])
    # Feedback for ada: 1/2
    """
    from difflab.grading.results import status_mark

    tests = results.get("tests", [])
    maximum = sum(float(t.get("max_score", 0.0)) for t in tests)
    title = f"# Feedback for {student}" if student else "# Feedback"
    lines = [f"{title}: {float(results.get('score', 0.0)):g}/{maximum:g}", ""]
    late = (results.get("extra_data") or {}).get("late")
    if late:
        lines += [f"Submitted {late.get('days')} day(s) late: {late.get('score_before', 0):g} "
                  f"points before the late policy, times {late.get('factor', 1):g}.", ""]
    if results.get("output"):
        lines += [results["output"].strip(), ""]
    for test in tests:
        lines.append(f"## {status_mark(test)} {test['name']}: "
                     f"{float(test['score']):g}/{float(test['max_score']):g}")
        if test.get("output"):
            lines += ["", "```", test["output"].strip().replace("```", "'''"), "```"]
        lines.append("")
    return "\n".join(lines)


def _results_of(gradebook: Path, results_dir: Path | None) -> Path:
    return Path(results_dir) if results_dir else gradebook.with_name(gradebook.stem + "_results")


def class_statistics(gradebook: str | Path, *, bins: int = 10) -> str:
    """Mean, median and spread of a class's scores, per test, and a text histogram.

    Raises
    ------
    GradingInputError
        When the gradebook cannot be read or has no graded student.
    """
    from difflab.grading.batch import read_gradebook

    rows = [r for r in read_gradebook(gradebook) if r.status != "no submission"]
    if not rows:
        raise GradingInputError(f"{gradebook} has no graded student")
    scores = [r.score for r in rows]
    top = max(r.max_score for r in rows) or 1.0
    lines = [f"{len(rows)} students: mean {statistics.fmean(scores):.4g}, median "
             f"{statistics.median(scores):.4g}, min {min(scores):g}, max {max(scores):g} "
             f"(out of {top:g})", "", "per test: mean, and how many got full / some / no points"]
    tests: dict[str, None] = {}
    for row in rows:
        tests.update(dict.fromkeys(row.tests))
    for name in tests:
        got = [r.tests.get(name, 0.0) for r in rows]
        best = max(got)
        full = sum(g == best and g > 0 for g in got)
        none = sum(g == 0 for g in got)
        lines.append(f"  {name}: mean {statistics.fmean(got):.3g}; {full} / "
                     f"{len(got) - full - none} / {none}")
    lines += ["", "histogram of the scores:"]
    width = top / bins
    for k in range(bins):
        low, high = k * width, (k + 1) * width
        count = sum(low <= s < high or (k == bins - 1 and s >= high) for s in scores)
        lines.append(f"  {low:6.3g} - {high:<6.3g} {'#' * count} {count}")
    return "\n".join(lines)


def adjust_tests(gradebook: str | Path, *, exclude: list[str] = (), give: list[str] = (),
                 override: dict[tuple[str, str], float] | None = None,
                 results_dir: str | Path | None = None) -> Path:
    """Drop broken tests, give their points to everyone, or override one student's.

    Parameters
    ----------
    gradebook : str or Path
        The batch's gradebook (rewritten).
    exclude : list of str
        Names of tests (as the gradebook's columns name them) removed from every
        student's results: they count neither in the score nor in the maximum.
    give : list of str
        Names of tests every student gets full points for.
    override : dict, optional
        ``{(student, test): points}``: a grader's decision on one student's test (say,
        after a regrade request), within ``[0, max_score]``; the test's output says so.
    results_dir : str or Path, optional
        The batch's results folder (default: ``<gradebook stem>_results``).

    Returns
    -------
    Path
        The gradebook.

    Raises
    ------
    GradingInputError
        When a name is not a test of the gradebook.
    """
    from difflab.grading.batch import _row, _safe_name, read_gradebook, write_gradebook
    from difflab.grading.results import write_results

    gradebook = Path(gradebook)
    rows = read_gradebook(gradebook)
    known = {name for row in rows for name in row.tests}
    override = dict(override or {})
    unknown = [n for n in [*exclude, *give, *(t for _, t in override)] if n not in known]
    if unknown:
        raise GradingInputError(f"not tests of {gradebook.name}: {', '.join(unknown)} (the "
                                "names are the gradebook's column headers)")
    strangers = sorted({s for s, _ in override} - {row.student for row in rows})
    if strangers:
        raise GradingInputError(f"not students of {gradebook.name}: {', '.join(strangers)}")
    folder = _results_of(gradebook, results_dir)
    updated = []
    for row in rows:
        path = folder / f"{_safe_name(row.student)}.json"
        try:
            results = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            updated.append(row)  # no results (no submission): nothing to adjust
            continue
        tests = []
        for test in results.get("tests", []):
            if test["name"] in exclude:
                continue
            if test["name"] in give:
                test = dict(test, score=test["max_score"], status="passed", output=(
                    test.get("output", "") + "\n\nFull points given to everyone.").strip())
            points = override.get((row.student, test["name"]))
            if points is not None:
                if not 0 <= points <= float(test["max_score"]):
                    raise GradingInputError(
                        f"{points:g} points for {row.student}'s {test['name']}: expected a "
                        f"number from 0 to {float(test['max_score']):g}")
                test = dict(test, score=float(points), status="passed" if points == float(
                    test["max_score"]) else "failed", output=(test.get("output", "") + (
                        f"\n\nScore set by the grader to {points:g}.")).strip())
            tests.append(test)
        results = rescore(dict(results, tests=tests))
        write_results(results, path)
        updated.append(_row(row.student, results, row.status).same_student(row))
    return write_gradebook(updated, gradebook)


def canvas_csv(gradebook: str | Path, out: str | Path, assignment: str) -> Path:
    """The gradebook's totals as a Canvas gradebook import (``Student, ID, ..., <assignment>``).

    The students are the gradebook's: their name, SIS user id and login (the email)
    from the instructor's metadata where it gave them (a Gradescope export), else the
    file or folder name, which should then be Canvas's SIS login id.  Canvas matches
    rows by ``SIS Login ID``.  The second row holds the points possible.

    Raises
    ------
    GradingInputError
        When the gradebook cannot be read.
    """
    from difflab.grading.batch import _cell, read_gradebook

    rows = read_gradebook(gradebook)
    top = max((r.max_score for r in rows), default=0.0)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                         _cell(assignment)])
        writer.writerow(["Points Possible", "", "", "", "", f"{top:g}"])
        for row in rows:
            login = row.email.split("; ")[0] if row.email else row.student
            writer.writerow([_cell(row.name or row.student), "", _cell(row.sid),
                             _cell(login), "", f"{row.score:g}"])
    return out
