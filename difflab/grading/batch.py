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
``.ipynb`` or ``.py`` in it).  Two entries that name the same student (``alice/`` and
``alice.py``) are refused before anything is graded.  Submissions are files: a link, a
device or a pipe where a submission should be scores 0 with a message, and is never
followed (the grader runs as root; a link could point at the solution).

Seeds and lateness come only from metadata the instructor controls: Gradescope's export
(``submission_metadata.yml`` at the top of the folder, keyed by the students' folders)
or a mapping passed as ``metadata`` (JSON or YAML, student -> Gradescope's
``submission_metadata.json`` record).  A ``submission_metadata.json`` inside a
student's folder is the student's upload, and is ignored.  Without metadata, the
student's name (the file's stem or the folder's name) is the id
:func:`~difflab.grading.context.student_seed` derives the seed from, as
``difflab grade FILE --student-id NAME`` would, and no late policy applies.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from difflab.grading.errors import GradingInputError
from difflab.grading.gradebook import (  # noqa: F401  (re-exported: batch's names)
    GRADEBOOK_COLUMNS,
    BatchRow,
    _row,
    _safe_name,
    feedback_markdown,
    identity,
    read_gradebook,
    write_gradebook,
)
from difflab.grading.inputs import (  # noqa: F401  (re-exported: batch's names)
    MAX_SUBMISSIONS,
    Submission,
    find_submissions,
)
from difflab.grading.results import _write_private, error_results, write_results

__all__ = ["grade_batch", "find_submissions", "Submission", "BatchRow", "write_gradebook",
           "read_gradebook", "identity"]



def read_roster_metadata(path: str | Path) -> dict[str, dict[str, Any]]:
    """Per-student metadata the instructor controls: ``{student: metadata record}``.

    Reads Gradescope's export ``submission_metadata.yml`` (``{folder: {":submitters":
    [{":sid", ":email", ...}], ":created_at": ...}}``, needs PyYAML) or a JSON/YAML
    mapping from each student to a record shaped as ``submission_metadata.json``.

    Raises
    ------
    GradingInputError
        When the file cannot be read or is not such a mapping.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix in (".yml", ".yaml"):
            try:
                import yaml
            except ImportError:
                raise GradingInputError(f"reading {path} needs PyYAML (pip install pyyaml), "
                                        "or pass the metadata as JSON") from None
            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except (OSError, ValueError) as exc:
        raise GradingInputError(f"cannot read the metadata {path}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 -- yaml's own errors
        raise GradingInputError(f"cannot read the metadata {path}: {exc}") from None
    if not isinstance(data, dict):
        raise GradingInputError(f"the metadata {path} is not a mapping of students to records")
    # Gradescope's keys are Ruby symbols (":submission_123") in some exports
    return {str(k).lstrip(":"): _gradescope_record(v) for k, v in data.items()
            if isinstance(v, dict)}


def _gradescope_record(record: dict[str, Any]) -> dict[str, Any]:
    """An export entry (Ruby-style ``:keys``) as a ``submission_metadata.json`` record."""
    plain = _plain(record)
    if "submitters" in plain and "users" not in plain:
        plain["users"] = [
            {"id": who.get("sid") or who.get("email"), "email": who.get("email"),
             "name": who.get("name"), "sid": who.get("sid")}
            for who in plain["submitters"] or [] if isinstance(who, dict)]
    return plain


def _plain(value: Any) -> Any:
    """YAML's Ruby-style ``:keys`` without the colon, and its dates as ISO text."""
    if isinstance(value, dict):
        return {str(k).lstrip(":"): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


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
    metadata: str | Path | None = None,
    due: str | None = None,
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
        Where each student's results JSON and feedback (``<student>.md``) go (default:
        ``<gradebook stem>_results`` beside the gradebook).
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
    metadata : str or Path, optional
        Each student's metadata (seed, lateness): a JSON or YAML mapping from student to
        a ``submission_metadata.json`` record (:func:`read_roster_metadata`).  By
        default Gradescope's export ``submission_metadata.yml`` at the top of
        ``submissions_dir``, when there is one; never a file in a student's folder.
    due : str, optional
        The due date (ISO 8601 with a time zone, ``2026-11-19T23:59:00-08:00``) for the
        records that hold none: a Gradescope export's ``submission_metadata.yml`` has each
        submission's time (``:created_at:``) but not the assignment's due date.  A
        record's own due date (an extension) wins.
    grade_options
        Passed to :func:`~difflab.grading.runner.grade` (``timeout``, ``memory_mb``,
        ``late_policy``, ...).

    Returns
    -------
    list of BatchRow
        One per student, sorted by student.

    Raises
    ------
    GradingInputError
        Before any student is graded: for a submissions or tests folder that does not
        exist or cannot be read, two entries naming the same student, ``only`` naming
        a student without a submission, or a ``due`` date that cannot be read.  A
        submission that cannot be graded is not an error: its row's ``status`` says
        what happened.

    See Also
    --------
    grade : grades one submission.
    leaderboard : ranks the rows of a gradebook.

    Examples
    --------
    Two students, graded two at a time (each grading takes a few seconds):

    >>> import tempfile, textwrap
    >>> from pathlib import Path
    >>> tmp = tempfile.TemporaryDirectory()
    >>> hw = Path(tmp.name) / "hw1"                    # a tiny assignment: tests + work
    >>> (hw / "tests").mkdir(parents=True)
    >>> _ = (hw / "tests" / "test_hw1.py").write_text(textwrap.dedent('''
    ...     import submission
    ...     from difflab.grading import points
    ...
    ...     @points(2)
    ...     def test_add():
    ...         assert submission.add(2, 3) == 5
    ...
    ...     @points(1)
    ...     def test_add_negative():
    ...         assert submission.add(-2, -3) == -5
    ...     '''))
    >>> students = hw / "submissions"
    >>> students.mkdir()
    >>> _ = (students / "alice.py").write_text("def add(a, b):\\n    return a + b\\n")
    >>> _ = (students / "bob.py").write_text("def add(a, b):\\n    return 0\\n")
    >>> from difflab.grading import grade_batch
    >>> rows = grade_batch(students, hw / "tests", hw / "gradebook.csv", jobs=2)
    >>> [(row.student, row.score, row.max_score, row.status) for row in rows]
    [('alice', 3.0, 3.0, 'graded'), ('bob', 0.0, 3.0, 'graded')]
    >>> print((hw / "gradebook.csv").read_text().splitlines()[1])
    alice,,,,3,3,graded,,,2,1
    >>> sorted(p.name for p in (hw / "gradebook_results").iterdir())   # results, feedback
    ['alice.json', 'alice.md', 'bob.json', 'bob.md']
    >>> tmp.cleanup()
    """
    from difflab.grading.runner import grade

    gradebook = Path(gradebook)
    results_dir = Path(results_dir) if results_dir else gradebook.with_name(
        gradebook.stem + "_results")
    submissions = find_submissions(submissions_dir)
    export = Path(submissions_dir) / "submission_metadata.yml"
    if metadata is None and export.is_file() and not export.is_symlink():
        metadata = export
    roster = read_roster_metadata(metadata) if metadata is not None else {}
    if due is not None:
        from difflab.grading.context import _time

        try:
            _time(due, "due date (--due)")
        except ValueError as exc:
            raise GradingInputError(str(exc).replace("the submission metadata's ", "the ")
                                    ) from None
        for record in roster.values():
            assignment = record.get("assignment")
            if not isinstance(assignment, dict):
                assignment = record["assignment"] = {}
            assignment.setdefault("due_date", due)
    for sub in submissions:
        sub.metadata = roster.get(sub.student)
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
    if not results_dir.is_dir():
        results_dir.mkdir(parents=True, mode=0o700)  # students' results: instructor only
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(submissions)))

    def one(sub: Submission) -> BatchRow:
        out = results_dir / f"{_safe_name(sub.student)}.json"
        record = sub.metadata
        if sub.path is None:
            results = error_results(f"No .py or .ipynb file in the submission of {sub.student}.")
            write_results(results, out)
            return _row(sub.student, results, "no submission", record)
        try:
            # the seed is the metadata's (Gradescope's user ids), else the student's name
            results = grade(sub.path, tests_dir, out, metadata=sub.metadata,
                            student_id=None if sub.metadata else sub.student, **grade_options)
            who = identity(record)[0] or sub.student
            _write_private(feedback_markdown(results, who), out.with_suffix(".md"), ".md")
        except GradingInputError as exc:
            return _row(sub.student, {}, f"error: {exc}"[:300], record)
        except Exception as exc:  # noqa: BLE001 -- one student's problem ends only their row
            write_results(error_results(f"The grader failed on this submission: {exc}"), out)
            return _row(sub.student, {}, f"grader error: {type(exc).__name__}: {exc}"[:300],
                        record)
        return _row(sub.student, results, "graded", record)

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
