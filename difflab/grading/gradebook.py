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

The gradebook file itself is written and read here too (:class:`BatchRow`,
:func:`write_gradebook`, :func:`read_gradebook`; the batch re-exports them), so
that the batch, the manual scores and these tools all sit above it.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import statistics
from dataclasses import dataclass, field
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


# ---------------------------------------------------------------------- the gradebook file


@dataclass
class BatchRow:
    """One line of the gradebook."""

    student: str
    score: float = 0.0
    max_score: float = 0.0
    status: str = "graded"
    tests: dict[str, float] = field(default_factory=dict)
    #: The score before a late policy, and the days late it counted (None: on time).
    score_before_late: float | None = None
    late_days: int | None = None
    #: Points per Gradescope tag (a question, a concept), summed over its tests.
    tags: dict[str, float] = field(default_factory=dict)
    #: Who the submission is from, by the instructor's metadata (a Gradescope export's
    #: ``submission_<id>`` folder is not a name); several submitters joined by "; ".
    name: str = ""
    email: str = ""
    sid: str = ""

    def same_student(self, row: BatchRow) -> BatchRow:
        """This row with ``row``'s name, email and sid (a regrade keeps who it is)."""
        self.name, self.email, self.sid = row.name, row.email, row.sid
        return self


def _safe_name(student: str) -> str:
    """The student's results file name: readable, and different for different students."""
    safe = re.sub(r"[^A-Za-z0-9_.@-]", "_", student)[:100] or "student"
    if safe != student or safe.startswith("."):
        safe += "-" + hashlib.sha256(student.encode("utf-8")).hexdigest()[:8]
    return safe


def identity(record: dict[str, Any] | None) -> tuple[str, str, str]:
    """``(name, email, sid)`` of a metadata record's submitters ("; " between several).

    Examples
    --------
    >>> identity({"users": [{"name": "Ada L", "email": "ada@u.edu", "sid": "7"},
    ...                     {"name": "Bob K", "email": "bob@u.edu", "sid": "8"}]})
    ('Ada L; Bob K', 'ada@u.edu; bob@u.edu', '7; 8')
    >>> identity(None)
    ('', '', '')
    """
    users = [u for u in (record or {}).get("users") or [] if isinstance(u, dict)]

    def joined(key: str) -> str:
        return "; ".join(str(u[key]) for u in users if u.get(key) not in (None, ""))[:300]

    return joined("name"), joined("email"), joined("sid")


def _row(student: str, results: dict[str, Any], status: str,
         record: dict[str, Any] | None = None) -> BatchRow:
    """A student's gradebook row from their results (the one way rows are made).

    ``status`` is what the grading said (``graded``, ``no submission``, an error); a
    ``graded`` row becomes ``late`` or ``could not load`` when the results say so.
    """
    status = status.replace(", manual pending", "")
    if status in ("late", "could not load"):
        status = "graded"
    tests: dict[str, float] = {}
    tags: dict[str, float] = {}
    for test in results.get("tests", []):
        extra = test.get("extra_data") or {}
        name = f"manual: {extra['question']}" if extra.get("manual") and extra.get(
            "question") else test["name"]
        tests[name] = test["score"]
        for tag in test.get("tags") or []:
            tags[tag] = tags.get(tag, 0.0) + float(test["score"])
    reasons = {t.get("extra_data", {}).get("reason") for t in results.get("tests", [])}
    output = results.get("output", "")
    late = (results.get("extra_data") or {}).get("late") or {}
    if status == "graded":
        if "import_error" in reasons or "could not be loaded" in output or \
                "Loading your submission took longer" in output:
            status = "could not load"
        elif late:
            status = "late"
    if any((t.get("extra_data") or {}).get("pending") for t in results.get("tests", [])):
        status += ", manual pending"
    name, email, sid = identity(record)
    return BatchRow(student, float(results.get("score", 0.0)),
                    float(sum(t["max_score"] for t in results.get("tests", []))), status, tests,
                    score_before_late=late.get("score_before") if late else None,
                    late_days=late.get("days") if late else None, tags=tags,
                    name=name, email=email, sid=sid)


def _cell(text: str) -> str:
    """Text a spreadsheet shows as text: a leading = + - @ would start a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _uncell(text: str) -> str:
    """The text ``_cell`` wrote (its quote, added before a formula sign, removed)."""
    return text[1:] if text[:1] == "'" and text[1:2] in ("=", "+", "-", "@", "\t", "\r") \
        else text


#: The columns of a gradebook before its tags and tests.
GRADEBOOK_COLUMNS = ("student", "name", "email", "sid", "score", "max_score", "status",
                     "score_before_late", "late_days")
#: Those of a gradebook written before it named the students (still read).
_OLD_COLUMNS = ("student", "score", "max_score", "status", "score_before_late", "late_days")
_TAG = "tag: "


def write_gradebook(rows: list[BatchRow], path: str | Path) -> Path:
    """The gradebook CSV: a row per student; the score before a late policy and the days
    late; the points per tag (``tag: <name>``); a column per test (in order of
    appearance)."""
    tests: dict[str, None] = {}
    tags: dict[str, None] = {}
    for row in rows:
        tests.update(dict.fromkeys(row.tests))
        tags.update(dict.fromkeys(row.tags))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")

    def number(value: float | None) -> str:
        return "" if value is None else f"{value:g}"

    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with open(fd, "w", newline="", encoding="utf-8") as fh:  # the instructor's eyes only
        writer = csv.writer(fh)
        writer.writerow([*GRADEBOOK_COLUMNS, *(_cell(_TAG + t) for t in tags),
                         *map(_cell, tests)])
        for row in rows:
            writer.writerow([_cell(row.student), _cell(row.name), _cell(row.email),
                             _cell(row.sid), f"{row.score:g}", f"{row.max_score:g}",
                             _cell(row.status), number(row.score_before_late),
                             number(row.late_days),
                             *(number(row.tags.get(t)) for t in tags),
                             *(number(row.tests.get(t)) for t in tests)])
    os.replace(tmp, path)
    return path


def read_gradebook(path: str | Path) -> list[BatchRow]:
    """The rows of a gradebook CSV written by :func:`write_gradebook`.

    Raises
    ------
    GradingInputError
        When the file cannot be read or is not a gradebook.
    """
    path = Path(path)
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            table = list(csv.reader(fh))
    except OSError as exc:
        raise GradingInputError(f"cannot read the gradebook {path}: {exc}") from None
    columns = next((c for c in (GRADEBOOK_COLUMNS, _OLD_COLUMNS)
                    if table and tuple(table[0][:len(c)]) == c), None)
    if columns is None:
        raise GradingInputError(f"{path} is not a difflab gradebook (its first columns are "
                                f"not {', '.join(GRADEBOOK_COLUMNS)})")
    names = table[0][len(columns):]
    rows = []
    for line in table[1:]:
        line = line + [""] * (len(table[0]) - len(line))
        fields = dict(zip(columns, line))
        try:
            values = {name: float(value) for name, value in zip(
                names, line[len(columns):]) if value}
            rows.append(BatchRow(
                line[0], float(fields["score"] or 0), float(fields["max_score"] or 0),
                fields["status"], {n: v for n, v in values.items() if not n.startswith(_TAG)},
                score_before_late=float(fields["score_before_late"])
                if fields["score_before_late"] else None,
                late_days=int(float(fields["late_days"])) if fields["late_days"] else None,
                tags={n[len(_TAG):]: v for n, v in values.items() if n.startswith(_TAG)},
                **{k: _uncell(fields.get(k, "")) for k in ("name", "email", "sid")}))
        except ValueError:
            raise GradingInputError(f"{path}: the row of {line[0]!r} has a score that is "
                                    "not a number") from None
    return rows
