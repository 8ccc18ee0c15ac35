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

import csv
import hashlib
import json
import os
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from difflab.grading.errors import GradingInputError
from difflab.grading.gradebook import feedback_markdown
from difflab.grading.results import _write_private, error_results, write_results

__all__ = ["grade_batch", "find_submissions", "Submission", "BatchRow", "write_gradebook",
           "read_gradebook", "identity"]

#: Submissions a folder may hold (a guard against pointing at the wrong folder).
MAX_SUBMISSIONS = 5000
_SUFFIXES = (".py", ".ipynb")


@dataclass
class Submission:
    """One student's work in a submissions folder."""

    student: str
    path: Path | None  # None: the student's folder holds no .py or .ipynb
    metadata: dict[str, Any] | None = None  # from the instructor's side only


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


def _is_candidate(entry: os.DirEntry) -> bool:
    return Path(entry.name).suffix in _SUFFIXES and not entry.name.startswith(".") and not (
        entry.is_dir(follow_symlinks=False))


def _first_submission(folder: Path) -> Path | None:
    """The first .ipynb/.py of a student's folder or its real (not linked) sub-folders.

    A link (or a device, a pipe) named like a submission is returned as it is, so that
    grading refuses it with a message; links to folders are never entered.
    """
    levels = [folder] + sorted(
        Path(e.path) for e in os.scandir(folder)
        if e.is_dir(follow_symlinks=False) and not e.name.startswith("."))
    for level in levels:
        found = sorted(Path(e.path) for e in os.scandir(level) if _is_candidate(e))
        if found:
            return found[0]
    return None


def find_submissions(folder: str | Path) -> list[Submission]:
    """The submissions of ``folder``, one per student, sorted by student.

    Raises
    ------
    GradingInputError
        When the folder does not exist, holds no submission or too many entries, or two
        entries name the same student.
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
    found: dict[str, Submission] = {}
    names: dict[str, str] = {}
    for entry in entries:
        if entry.name.startswith(".") or entry.name == "__pycache__":
            continue
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            try:
                first = _first_submission(path)
            except OSError:
                first = None
            sub = Submission(path.name, first)
        elif path.suffix in _SUFFIXES:  # a file, or a link or device to be refused
            sub = Submission(path.stem, path)
        else:
            continue
        if sub.student in found:
            raise GradingInputError(
                f"{names[sub.student]} and {entry.name} in {folder} are both the submission "
                f"of '{sub.student}': one grading would overwrite the other. Keep one "
                "entry per student (rename or remove the other).")
        found[sub.student], names[sub.student] = sub, entry.name
    if not found:
        raise GradingInputError(f"no submissions in {folder}: expected .py or .ipynb files, "
                                "or one folder per student")
    return [found[k] for k in sorted(found)]


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


def _safe_name(student: str) -> str:
    """The student's results file name: readable, and different for different students."""
    safe = re.sub(r"[^A-Za-z0-9_.@-]", "_", student)[:100] or "student"
    if safe != student or safe.startswith("."):
        safe += "-" + hashlib.sha256(student.encode("utf-8")).hexdigest()[:8]
    return safe


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
