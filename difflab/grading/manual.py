"""Questions graded by hand: written answers collected, points entered, kept in the gradebook.

A written answer is a markdown cell of the assignment notebook whose solution marker
names its points (and, optionally, its id)::

    **Q3.** Why does forward mode cost one pass per input?

    ### BEGIN SOLUTION q3 (2 points)
    Each pass carries one tangent, the derivative along one input direction.
    ### END SOLUTION

``difflab assign`` replaces the answer with ``YOUR ANSWER HERE`` and tags the cell with
its id, so the student's answer is found wherever the cell moves.  Then, after the
autograded batch (``difflab grade FOLDER ... --out grades.csv``):

1. :func:`collect_answers` (``difflab manual collect``) writes ``answers.md``, every
   student's answer to each question, for the grader to read, and ``scores.csv``, one
   row per student and question with an empty ``points`` column;
2. the grader fills ``points`` (and ``comment``) in ``scores.csv`` by hand, or with
   :func:`set_score` (``difflab manual score``);
3. :func:`apply_scores` (``difflab manual apply``) puts the points into each student's
   results (one test per question, marked ``manual``) and into the gradebook (one
   column per question, the totals updated), so they are exported with the autograded
   ones.  Applying again replaces the earlier manual points; regrading a student keeps
   them when ``--manual scores.csv`` is given to ``difflab grade``.

A question without points yet counts 0 and the gradebook's ``status`` says
``manual pending``.
"""

from __future__ import annotations

import csv
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from difflab.grading.errors import GradingInputError

__all__ = ["collect_answers", "read_scores", "set_score", "apply_scores", "ManualScore",
           "SCORE_COLUMNS"]

#: The columns of ``scores.csv``.
SCORE_COLUMNS = ("student", "question", "points", "max_points", "comment")


@dataclass
class ManualScore:
    """One student's points on one question graded by hand (``points`` None: not yet)."""

    student: str
    question: str
    points: float | None
    max_points: float
    comment: str = ""


def _answers(notebook: Path) -> dict[str, str]:
    """The written answers of a submitted notebook, by question id."""
    from difflab.grading.notebooks import ANSWER_METADATA, read_notebook

    found: dict[str, str] = {}
    try:
        cells = read_notebook(notebook).cells
    except GradingInputError:
        return found
    for cell in cells:
        tag = cell.get("metadata", {}).get(ANSWER_METADATA)
        if cell.cell_type == "markdown" and isinstance(tag, dict) and isinstance(
                tag.get("answer"), str):
            found.setdefault(tag["answer"], cell.source.strip())
    return found


def collect_answers(submissions_dir: str | Path, assignment: str | Path,
                    out_dir: str | Path) -> tuple[Path, Path]:
    """Gather every student's written answers for grading by hand.

    Parameters
    ----------
    submissions_dir : str or Path
        The class's submissions, as :func:`~difflab.grading.batch.grade_batch` reads
        them (one file or folder per student).
    assignment : str or Path
        The assignment's source notebook, or its folder: the questions and their points
        come from it (never from the students' files).
    out_dir : str or Path
        Where ``answers.md`` and ``scores.csv`` go.  Rows already in ``scores.csv``
        keep their points and comments.

    Returns
    -------
    (Path, Path)
        ``answers.md`` and ``scores.csv``.

    Raises
    ------
    GradingInputError
        When the assignment has no written answers, or the folders cannot be read.

    Examples
    --------
    >>> import nbformat, pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(
    ...     "Why?\\n### BEGIN SOLUTION q1 (2 points)\\nBecause.\\n### END SOLUTION")])
    >>> nbformat.write(nb, root / "hw.ipynb")
    >>> from difflab.grading import make_student_version
    >>> alice = make_student_version(root / "hw.ipynb", root / "subs" / "alice.ipynb")
    >>> answers, scores = collect_answers(root / "subs", root / "hw.ipynb", root / "manual")
    >>> print(scores.read_text().splitlines()[1])
    alice,q1,,2,
    """
    from difflab.grading.inputs import find_submissions
    from difflab.grading.notebooks import MARKDOWN_STUB, written_questions
    from difflab.grading.release import assignment_files

    assignment = Path(assignment)
    sources = [p for p in (assignment_files(assignment) if assignment.is_dir() else [assignment])
               if p.suffix == ".ipynb"]
    questions: dict[str, float] = {}
    for source in sources:
        questions.update(written_questions(source))
    if not questions:
        raise GradingInputError(
            f"{assignment} has no written answers graded by hand: mark one in a markdown "
            "cell with '### BEGIN SOLUTION q1 (2 points)' ... '### END SOLUTION'")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    scores_path = out_dir / "scores.csv"
    kept = {(s.student, s.question): s for s in read_scores(scores_path)} \
        if scores_path.exists() else {}
    lines = [f"# Written answers of {assignment.name}", ""]
    rows: list[ManualScore] = []
    submissions = find_submissions(submissions_dir)
    for question, points in questions.items():
        lines += [f"## {question} ({points:g} points)", ""]
        for sub in submissions:
            answers = _answers(sub.path) if sub.path and sub.path.suffix == ".ipynb" else {}
            text = answers.get(question, "").strip()
            if not text or MARKDOWN_STUB in text:  # the cell as handed out
                text = "*(no answer)*"
            lines += [f"### {sub.student}", "", text, ""]
            old = kept.get((sub.student, question))
            rows.append(ManualScore(sub.student, question, old.points if old else None,
                                    points, old.comment if old else ""))
    answers_path = out_dir / "answers.md"
    answers_path.write_text("\n".join(lines), encoding="utf-8")
    _write_scores(rows, scores_path)
    return answers_path, scores_path


def _number(text: str, what: str) -> float | None:
    if not text.strip():
        return None
    try:
        value = float(text)
    except ValueError:
        raise GradingInputError(f"{what} is not a number: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise GradingInputError(f"{what} must be a number >= 0, got {text!r}")
    return value


def read_scores(path: str | Path) -> list[ManualScore]:
    """The rows of a ``scores.csv`` (points checked: numbers within 0 and the maximum).

    Raises
    ------
    GradingInputError
        For a missing file, missing columns, or points that are not a number within
        ``[0, max_points]`` (the message names the row).
    """
    path = Path(path)
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            missing = set(SCORE_COLUMNS[:4]) - set(reader.fieldnames or ())
            if missing:
                raise GradingInputError(f"{path} lacks the columns {sorted(missing)}; "
                                        f"expected {', '.join(SCORE_COLUMNS)}")
            rows = list(reader)
    except OSError as exc:
        raise GradingInputError(f"cannot read the manual scores {path}: {exc}") from None
    scores = []
    for number, row in enumerate(rows, start=2):
        where = f"{path.name}, row {number} ({row['student']}, {row['question']})"
        maximum = _number(row["max_points"] or "", f"{where}: max_points")
        if maximum is None:
            raise GradingInputError(f"{where}: max_points is empty")
        points = _number(row["points"] or "", f"{where}: points")
        if points is not None and points > maximum:
            raise GradingInputError(f"{where}: {points:g} points is more than the "
                                    f"question's {maximum:g}")
        scores.append(ManualScore(row["student"], row["question"], points, maximum,
                                  row.get("comment") or ""))
    return scores


def _write_scores(rows: list[ManualScore], path: Path) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(SCORE_COLUMNS)
        for s in rows:
            writer.writerow([s.student, s.question, "" if s.points is None else f"{s.points:g}",
                             f"{s.max_points:g}", s.comment])
    os.replace(tmp, path)


def set_score(path: str | Path, student: str, question: str, points: float,
              comment: str | None = None) -> ManualScore:
    """Enter one student's points on one question in ``scores.csv``.

    Raises
    ------
    GradingInputError
        When the file has no row for that student and question (collect first), or the
        points are outside ``[0, max_points]``.
    """
    path = Path(path)
    rows = read_scores(path)
    for row in rows:
        if row.student == student and row.question == question:
            if not 0 <= points <= row.max_points:
                raise GradingInputError(f"{points:g} points for {student}'s {question}: "
                                        f"expected a number from 0 to {row.max_points:g}")
            row.points = float(points)
            if comment is not None:
                row.comment = comment
            _write_scores(rows, path)
            return row
    known = sorted({r.question for r in rows})
    raise GradingInputError(f"no row for student {student!r} and question {question!r} in "
                            f"{path} (questions: {', '.join(known)}); run difflab manual "
                            "collect first")


def merge_results(results: dict[str, Any], scores: list[ManualScore]) -> dict[str, Any]:
    """One student's results with their manual scores as tests (earlier ones replaced).

    The score is the sum of the tests, times the late factor when a late policy applied
    (``extra_data["late"]["score_before"]`` is the sum before it).
    """
    tests = [t for t in results.get("tests", [])
             if not (t.get("extra_data") or {}).get("manual")]
    for s in scores:
        tests.append({
            "name": f"{s.question} (graded by hand)",
            "score": s.points or 0.0,
            "max_score": s.max_points,
            "status": "passed" if s.points == s.max_points else "failed",
            "output": s.comment if s.points is not None else "Not graded yet.",
            "visibility": "after_published",
            "extra_data": {"manual": True, "question": s.question,
                           "pending": s.points is None},
        })
    from difflab.grading.gradebook import rescore

    results = rescore(dict(results, tests=tests))
    return results


def apply_scores(scores_path: str | Path, gradebook: str | Path,
                 results_dir: str | Path | None = None) -> Path:
    """Put the manual scores into each student's results and into the gradebook.

    Parameters
    ----------
    scores_path : str or Path
        The ``scores.csv`` of :func:`collect_answers`.
    gradebook : str or Path
        The batch's gradebook CSV, rewritten with a ``manual: <question>`` column per
        question and the totals updated.
    results_dir : str or Path, optional
        The batch's results folder (default: ``<gradebook stem>_results``).

    Returns
    -------
    Path
        The gradebook.

    Raises
    ------
    GradingInputError
        When the scores, the gradebook or a student's results cannot be read, or the
        scores name a student the gradebook does not have.
    """
    from difflab.grading.gradebook import _row, _safe_name, read_gradebook, write_gradebook
    from difflab.grading.results import write_results

    gradebook = Path(gradebook)
    results_dir = Path(results_dir) if results_dir else gradebook.with_name(
        gradebook.stem + "_results")
    scores = read_scores(scores_path)
    rows = {row.student: row for row in read_gradebook(gradebook)}
    unknown = sorted({s.student for s in scores} - set(rows))
    if unknown:
        raise GradingInputError(f"{Path(scores_path).name} names students the gradebook "
                                f"{gradebook.name} does not have: {', '.join(unknown)}")
    for student, row in rows.items():
        mine = [s for s in scores if s.student == student]
        path = results_dir / f"{_safe_name(student)}.json"
        if not mine:
            continue
        try:
            results = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:  # not graded (no submission): the written answers count
            results = {"score": 0.0, "tests": [], "output": ""}
        except (OSError, ValueError) as exc:
            raise GradingInputError(f"cannot read {student}'s results {path}: {exc}") from None
        results = merge_results(results, mine)
        write_results(results, path)
        rows[student] = _row(student, results, row.status).same_student(row)
    return write_gradebook(sorted(rows.values(), key=lambda r: r.student), gradebook)
