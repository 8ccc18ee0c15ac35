"""Command-line entry points: ``difflab grade``, ``check``, ``assign``, ``autograder build``.

Both are click commands meant to be attached to the main ``difflab`` group::

    from difflab.grading.cli import assign_command, grade_command
    main.add_command(grade_command)
    main.add_command(assign_command)

Until then (or without the rest of the CLI) they run as ``python -m difflab.grading grade
...`` and ``python -m difflab.grading assign ...``.

Exit status: 0 when grading finished (whatever the score: the score is in the results
file), 2 for bad usage or bad input (the message is on stderr), 130 when interrupted.
"""

from __future__ import annotations

import re
import shutil
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import click

from difflab.grading.context import LatePolicy
from difflab.grading.errors import GradingInputError
from difflab.grading.notebooks import make_instructor_version, make_student_version
from difflab.grading.release import visible_tests
from difflab.grading.results import format_summary
from difflab.grading.runner import (
    DEFAULT_MEMORY_MB,
    DEFAULT_TIMEOUT,
    DEFAULT_TOTAL_TIMEOUT,
    grade,
)
from difflab.grading.sandbox_users import DEFAULT_UID_BASE, DEFAULT_UID_POOL

__all__ = ["grade_command", "assign_command", "check_command", "autograder_group", "cli"]


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _shown(text: str) -> str:
    """Text for the terminal with control characters escaped (``\\x1b``).

    Results hold students' text (exception messages, printed output); raw, an escape
    sequence could move the cursor and repaint FAIL as PASS on the instructor's screen.
    """
    return _CONTROL.sub(lambda m: m[0].encode("unicode_escape").decode("ascii"), text)


def _fail(prog: str, message: str) -> None:
    click.echo(f"{prog}: error: {_shown(message)}", err=True)
    sys.exit(2)


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"received signal {signum}")


def _late_policy(ctx: click.Context, param: click.Parameter, value: str | None
                 ) -> LatePolicy | None:
    if value is None:
        return None
    try:
        return LatePolicy.parse(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


_LIMITS = [
    click.option("--timeout", type=click.FloatRange(min=0.1), default=DEFAULT_TIMEOUT,
                 show_default=True, help="Seconds each test may run."),
    click.option("--memory-mb", type=click.IntRange(min=64), default=DEFAULT_MEMORY_MB,
                 show_default=True, help="Memory (address space) limit of student code, in MiB."),
    click.option("--total-timeout", type=click.FloatRange(min=1), default=DEFAULT_TOTAL_TIMEOUT,
                 show_default=True,
                 help="Seconds for a whole grading (Gradescope allows 600 by default)."),
]


def _limits(function: Any) -> Any:
    for option in reversed(_LIMITS):
        function = option(function)
    return function


@click.command("grade")
@click.argument("submission", type=click.Path(path_type=Path))
@click.option(
    "--tests", "tests_dir", required=True, type=click.Path(path_type=Path),
    help="Folder of the instructor's pytest tests (test_*.py).",
)
@click.option(
    "--out", type=click.Path(path_type=Path), default=None,
    help="One submission: write Gradescope's results.json here (always written, even on "
         "errors). A folder of submissions: the gradebook CSV (required).",
)
@_limits
@click.option("--metadata", type=click.Path(path_type=Path), default=None,
              help="Gradescope's submission_metadata.json (the student's seed, the "
                   "lateness); for a folder, a JSON/YAML mapping of students to such "
                   "records (default: the export's submission_metadata.yml).")
@click.option("--student-id", default=None,
              help="Use this student's seed (reproduce a student's variant).")
@click.option("--late-policy", callback=_late_policy, default=None,
              help="E.g. per_day=0.1,max_days=3,grace_minutes=15 (needs the metadata).")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="A folder of submissions: gradings at once (default: the cores).")
@click.option("--results-dir", type=click.Path(path_type=Path), default=None,
              help="A folder of submissions: where each student's results JSON goes "
                   "(default: <gradebook>_results beside the gradebook).")
@click.option(
    "--user", default=None,
    help="As root: run student code as this existing account instead of a uid of the pool.",
)
@click.option(
    "--uid-base", type=click.IntRange(min=1000), default=DEFAULT_UID_BASE, show_default=True,
    help="As root: first uid of the pool student code runs as (one uid per grading).",
)
@click.option(
    "--uid-pool", type=click.IntRange(min=1), default=DEFAULT_UID_POOL, show_default=True,
    help="As root: how many uids the pool has (how many gradings may run at once).",
)
def grade_command(
    submission: Path,
    tests_dir: Path,
    out: Path | None,
    timeout: float,
    memory_mb: int,
    total_timeout: float,
    metadata: Path | None,
    student_id: str | None,
    late_policy: LatePolicy | None,
    jobs: int | None,
    results_dir: Path | None,
    user: str | None,
    uid_base: int,
    uid_pool: int,
) -> None:
    """Grade SUBMISSION (a .py file or .ipynb notebook, or a folder of them) with --tests.

    Student code runs in a separate process, as its own uid when run as root, with a
    per-test time limit and a memory limit.  One submission: prints a summary and, with
    --out, writes Gradescope's results.json.  A folder (one file or one folder per
    student): grades them in parallel and writes the gradebook CSV (--out) and one
    results JSON per student.
    """
    options = dict(timeout=timeout, memory_mb=memory_mb, total_timeout=total_timeout,
                   user=user, uid_base=uid_base, uid_pool=uid_pool, late_policy=late_policy)
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        if submission.is_dir() and submission.suffix in (".py", ".ipynb"):
            raise GradingInputError(
                f"{submission} is a folder, not a {submission.suffix} file: a submission is "
                "a file (to grade a class, name the folder that holds the submissions)")
        if submission.is_dir():
            _grade_folder(submission, tests_dir, out, jobs, results_dir,
                          dict(options, metadata=metadata))
            return
        results = grade(submission, tests_dir, out, metadata=metadata, student_id=student_id,
                        **options)
    except GradingInputError as exc:  # grade() has written the results file already
        _fail("difflab grade", str(exc))
    except KeyboardInterrupt:
        click.echo("difflab grade: interrupted; partial results were written", err=True)
        sys.exit(130)
    finally:
        signal.signal(signal.SIGTERM, previous)
    click.echo(_shown(format_summary(results, title=f"difflab grade: {submission.name}")))
    if out is not None:
        click.echo(f"Results written to {out}")


def _grade_folder(folder: Path, tests_dir: Path, out: Path | None, jobs: int | None,
                  results_dir: Path | None, options: dict[str, Any]) -> None:
    from difflab.grading.batch import grade_batch

    if out is None:
        raise GradingInputError("grading a folder of submissions needs --out grades.csv")
    if out.suffix.lower() != ".csv":
        raise GradingInputError(f"--out {out}: the gradebook of a folder is a .csv file")

    def progress(row: Any) -> None:
        click.echo(_shown(f"{row.student}: {row.score:g}/{row.max_score:g} ({row.status})"),
                   err=True)

    rows = grade_batch(folder, tests_dir, out, results_dir=results_dir, jobs=jobs,
                       on_done=progress, **options)
    graded = sum(r.status in ("graded", "late") for r in rows)
    click.echo(f"{len(rows)} submissions, {graded} graded; gradebook written to {out}")


@click.command("check")
@click.argument("work", type=click.Path(path_type=Path))
@click.option("--tests", "tests_dir", type=click.Path(path_type=Path), default=None,
              help="The visible tests (default: tests/ beside WORK).")
@click.option("--question", "-q", default=None,
              help="Only the tests whose file, name or tag contains this (e.g. q1).")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=30.0, show_default=True,
              help="Seconds each test may run.")
def check_command(work: Path, tests_dir: Path | None, question: str | None,
                  timeout: float) -> None:
    """Check WORK (your notebook or .py file) with the visible tests, before submitting.

    Prints each test with the grader's message.  Exit status: 0 when every visible test
    passes, 1 when some fail, 2 for bad input.
    """
    from difflab.grading.selfcheck import check

    try:
        if not work.is_file():
            raise GradingInputError(f"nothing to check: {work} is not a file")
        report = check(question, notebook=work, tests=tests_dir, timeout=timeout, show=False)
    except GradingInputError as exc:
        _fail("difflab check", str(exc))
    click.echo(_shown(str(report)))
    sys.exit(0 if report.passed else 1)


@click.group("autograder")
def autograder_group() -> None:
    """Gradescope autograders."""


@autograder_group.command("build")
@click.argument("assignment", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), required=True,
              help="The zip to write (autograder.zip).")
@_limits
@click.option("--late-policy", callback=_late_policy, default=None,
              help="Applied on Gradescope from the submission's metadata, e.g. "
                   "per_day=0.1,max_days=3,grace_minutes=15.")
def build_command(assignment: Path, out: Path, timeout: float, memory_mb: int,
                  total_timeout: float, late_policy: LatePolicy | None) -> None:
    """Build Gradescope's autograder zip for ASSIGNMENT (a folder with tests/).

    The zip holds setup.sh, run_autograder, the tests (hidden ones included) and this
    difflab, pinned: upload it as the assignment's autograder.
    """
    from difflab.grading.autograder import build_autograder

    try:
        if not assignment.is_dir():
            raise GradingInputError(f"assignment folder not found: {assignment}")
        path = build_autograder(assignment, out, timeout=timeout, memory_mb=memory_mb,
                                total_timeout=total_timeout, late_policy=late_policy)
    except GradingInputError as exc:
        _fail("difflab autograder build", str(exc))
    click.echo(f"wrote {path}")


def _assignment_files(source: Path) -> list[Path]:
    files = [
        p for p in sorted(source.iterdir())
        if p.suffix in (".ipynb", ".py") and not p.name.startswith(("test_", "."))
    ]
    if not files:
        raise GradingInputError(f"no .ipynb or .py assignment files in {source}")
    return files


@click.command("assign")
@click.argument("source", type=click.Path(path_type=Path))
@click.option(
    "--out", type=click.Path(path_type=Path), required=True,
    help="Folder to write student/ and instructor/ versions into.",
)
def assign_command(source: Path, out: Path) -> None:
    """Make the student and instructor versions of SOURCE.

    SOURCE is a notebook or .py file with nbgrader markers (### BEGIN SOLUTION /
    ### END SOLUTION, ### BEGIN HIDDEN TESTS / ### END HIDDEN TESTS), or an assignment
    folder of them.  The student version replaces solutions with
    `raise NotImplementedError()` and drops hidden tests; the instructor version keeps
    the solutions.  A folder's tests/ goes to the instructor version whole, and to the
    student version without its hidden tests (for `difflab check`).
    """
    try:
        if not source.exists():
            raise GradingInputError(f"assignment source not found: {source}")
        files = _assignment_files(source) if source.is_dir() else [source]
        written = []
        for file in files:
            written.append(make_student_version(file, out / "student"))
            written.append(make_instructor_version(file, out / "instructor"))
        if source.is_dir() and (source / "tests").is_dir():
            target = out / "instructor" / "tests"
            shutil.copytree(
                source / "tests", target, dirs_exist_ok=True,
                ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
            )
            written.append(target)
            visible_tests(source / "tests", out / "student" / "tests")
            written.append(out / "student" / "tests")
    except GradingInputError as exc:
        _fail("difflab assign", str(exc))
    for path in written:
        click.echo(f"wrote {path}")


@click.group()
def cli() -> None:
    """difflab grading tools (also available as `difflab grade` / `difflab assign`)."""


cli.add_command(grade_command)
cli.add_command(assign_command)
cli.add_command(check_command)
cli.add_command(autograder_group)
