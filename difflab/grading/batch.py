"""Grading a whole class: ``difflab grade SUBMISSIONS_DIR --tests DIR --out grades.csv``.

Each submission is graded by :func:`~difflab.grading.runner.grade`, sandboxed as a
single one is (its own process, its own uid when the grader is root); several run at
once, up to the number of cores.  A submission that crashes, loops or cannot be read
costs only its own row.  The outputs:

* ``<name>.json`` per student, in Gradescope's format, in the results folder (by default
  ``grades_results/`` beside ``grades.csv``), and ``<name>.md`` beside it, the
  student's feedback (each test, its points, its message) to send as it is;
* the gradebook ``grades.csv``: ``student, score, max_score, status``, then one column
  per test with the points it earned (``status``: ``graded``, ``late``, or what
  stopped the grading).

A submissions folder holds either one file per student (``alice.py``,
``bob.ipynb``: the student is the file's name) or one folder per student (as
Gradescope's export: the student is the folder's name, the submission the first
``.ipynb`` or ``.py`` in it, and a ``submission_metadata.json`` there is read for the
seed and the late policy).  Without metadata, the student's name (the file's stem or
the folder's name) is the id :func:`~difflab.grading.context.student_seed` derives the
seed from, as ``difflab grade FILE --student-id NAME`` would, and no late policy
applies.
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from difflab.grading.errors import GradingInputError
from difflab.grading.gradebook import feedback_markdown
from difflab.grading.results import error_results, write_results

__all__ = ["grade_batch", "find_submissions", "Submission", "BatchRow", "write_gradebook",
           "read_gradebook"]

#: Submissions a folder may hold (a guard against pointing at the wrong folder).
MAX_SUBMISSIONS = 5000
_SUFFIXES = (".py", ".ipynb")


@dataclass
class Submission:
    """One student's work in a submissions folder."""

    student: str
    path: Path | None  # None: the student's folder holds no .py or .ipynb
    metadata: Path | None = None


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


def _first_submission(folder: Path) -> Path | None:
    found = []
    for depth in (folder, *sorted(p for p in folder.iterdir() if p.is_dir()
                                  and not p.name.startswith("."))):
        found += sorted(p for p in depth.iterdir() if p.suffix in _SUFFIXES
                        and p.is_file() and not p.name.startswith("."))
        if found:
            return found[0]
    return None


def find_submissions(folder: str | Path) -> list[Submission]:
    """The submissions of ``folder``, one per student, sorted by student.

    Raises
    ------
    GradingInputError
        When the folder does not exist, holds no submission or too many entries.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise GradingInputError(f"submissions folder not found: {folder}")
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        raise GradingInputError(f"cannot read the submissions folder {folder}: {exc}") from None
    if len(entries) > MAX_SUBMISSIONS:
        raise GradingInputError(f"{folder} holds more than {MAX_SUBMISSIONS} entries: is it "
                                "the folder of the submissions?")
    found = []
    for entry in entries:
        if entry.name.startswith(".") or entry.name == "__pycache__":
            continue
        path = Path(entry.path)
        if entry.is_file(follow_symlinks=False) and path.suffix in _SUFFIXES:
            found.append(Submission(path.stem, path))
        elif entry.is_dir(follow_symlinks=False):
            metadata = path / "submission_metadata.json"
            try:
                first = _first_submission(path)
            except OSError:
                first = None
            found.append(Submission(path.name, first,
                                    metadata if metadata.is_file() else None))
    if not found:
        raise GradingInputError(f"no submissions in {folder}: expected .py or .ipynb files, "
                                "or one folder per student")
    return found


def _safe_name(student: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.@-]", "_", student)[:100] or "student"


def _row(student: str, results: dict[str, Any], status: str) -> BatchRow:
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
    return BatchRow(student, float(results.get("score", 0.0)),
                    float(sum(t["max_score"] for t in results.get("tests", []))), status, tests,
                    score_before_late=late.get("score_before") if late else None,
                    late_days=late.get("days") if late else None, tags=tags)


def grade_batch(
    submissions_dir: str | Path,
    tests_dir: str | Path,
    gradebook: str | Path,
    *,
    results_dir: str | Path | None = None,
    jobs: int | None = None,
    on_done: Callable[[BatchRow], None] | None = None,
    manual: str | Path | None = None,
    only: list[str] | None = None,
    **grade_options: Any,
) -> list[BatchRow]:
    """Grade every submission of ``submissions_dir``; write the results and the gradebook.

    Parameters
    ----------
    submissions_dir : str or Path
        One ``.py``/``.ipynb`` per student, or one folder per student.
    tests_dir : str or Path
        The instructor's tests.
    gradebook : str or Path
        The CSV to write (rewritten after every submission, so an interrupted batch
        keeps the rows done).
    results_dir : str or Path, optional
        Where each student's results JSON goes (default: ``<gradebook stem>_results``
        beside the gradebook).
    jobs : int, optional
        Gradings at once (default: the number of cores).
    on_done : callable, optional
        Called with each row as its grading ends (for progress).
    only : list of str, optional
        Regrade only these students, into the existing gradebook (the other rows are
        kept as they are).
    manual : str or Path, optional
        A ``scores.csv`` of points graded by hand, put into the results and the
        gradebook once grading ends (:func:`~difflab.grading.manual.apply_scores`).
    grade_options
        Passed to :func:`~difflab.grading.runner.grade` (``timeout``, ``memory_mb``,
        ``late_policy``, ...).

    Returns
    -------
    list of BatchRow
        One per student, sorted by student.
    """
    from difflab.grading.runner import grade

    gradebook = Path(gradebook)
    results_dir = Path(results_dir) if results_dir else gradebook.with_name(
        gradebook.stem + "_results")
    submissions = find_submissions(submissions_dir)
    rows: dict[str, BatchRow] = {}
    if only:
        missing = sorted(set(only) - {s.student for s in submissions})
        if missing:
            raise GradingInputError(f"no submission of {', '.join(missing)} in "
                                    f"{submissions_dir}")
        if gradebook.exists():
            rows = {row.student: row for row in read_gradebook(gradebook)}
        submissions = [s for s in submissions if s.student in only]
    if not Path(tests_dir).is_dir():
        raise GradingInputError(f"tests folder not found: {tests_dir}")
    results_dir.mkdir(parents=True, exist_ok=True)
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(submissions)))

    def one(sub: Submission) -> BatchRow:
        out = results_dir / f"{_safe_name(sub.student)}.json"
        if sub.path is None:
            results = error_results(f"No .py or .ipynb file in the submission of {sub.student}.")
            write_results(results, out)
            return _row(sub.student, results, "no submission")
        try:
            # the seed is the metadata's (Gradescope's user ids), else the student's name
            results = grade(sub.path, tests_dir, out, metadata=sub.metadata,
                            student_id=None if sub.metadata else sub.student, **grade_options)
            out.with_suffix(".md").write_text(feedback_markdown(results, sub.student),
                                              encoding="utf-8")
        except GradingInputError as exc:
            return _row(sub.student, {}, f"error: {exc}"[:300])
        except Exception as exc:  # noqa: BLE001 -- one student's problem ends only their row
            write_results(error_results(f"The grader failed on this submission: {exc}"), out)
            return _row(sub.student, {}, f"grader error: {type(exc).__name__}: {exc}"[:300])
        return _row(sub.student, results, "graded")

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for row in pool.map(one, submissions):
            rows[row.student] = row
            write_gradebook(sorted(rows.values(), key=lambda r: r.student), gradebook)
            if on_done is not None:
                on_done(row)
    if manual is not None:
        from difflab.grading.manual import apply_scores

        apply_scores(manual, gradebook, results_dir)
        return read_gradebook(gradebook)
    return sorted(rows.values(), key=lambda r: r.student)


def _cell(text: str) -> str:
    """Text a spreadsheet shows as text: a leading = + - @ would start a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


#: The columns of a gradebook before its tags and tests.
GRADEBOOK_COLUMNS = ("student", "score", "max_score", "status", "score_before_late",
                     "late_days")
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

    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow([*GRADEBOOK_COLUMNS, *(_cell(_TAG + t) for t in tags),
                         *map(_cell, tests)])
        for row in rows:
            writer.writerow([_cell(row.student), f"{row.score:g}", f"{row.max_score:g}",
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
    if not table or tuple(table[0][:len(GRADEBOOK_COLUMNS)]) != GRADEBOOK_COLUMNS:
        raise GradingInputError(f"{path} is not a difflab gradebook (its first columns are "
                                f"not {', '.join(GRADEBOOK_COLUMNS)})")
    names = table[0][len(GRADEBOOK_COLUMNS):]
    rows = []
    for line in table[1:]:
        line = line + [""] * (len(table[0]) - len(line))
        try:
            values = {name: float(value) for name, value in zip(
                names, line[len(GRADEBOOK_COLUMNS):]) if value}
            rows.append(BatchRow(
                line[0], float(line[1] or 0), float(line[2] or 0), line[3],
                {n: v for n, v in values.items() if not n.startswith(_TAG)},
                score_before_late=float(line[4]) if line[4] else None,
                late_days=int(float(line[5])) if line[5] else None,
                tags={n[len(_TAG):]: v for n, v in values.items() if n.startswith(_TAG)}))
        except ValueError:
            raise GradingInputError(f"{path}: the row of {line[0]!r} has a score that is "
                                    "not a number") from None
    return rows
