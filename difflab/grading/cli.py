"""Command-line entry points: ``difflab grade`` and ``difflab assign``.

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

import shutil
import signal
import sys
from pathlib import Path
from types import FrameType

import click

from difflab.grading.errors import GradingInputError
from difflab.grading.notebooks import make_instructor_version, make_student_version
from difflab.grading.results import format_summary
from difflab.grading.runner import (
    DEFAULT_MEMORY_MB,
    DEFAULT_TIMEOUT,
    DEFAULT_TOTAL_TIMEOUT,
    grade,
)
from difflab.grading.sandbox import DEFAULT_UID_BASE, DEFAULT_UID_POOL

__all__ = ["grade_command", "assign_command", "cli"]


def _fail(prog: str, message: str) -> None:
    click.echo(f"{prog}: error: {message}", err=True)
    sys.exit(2)


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"received signal {signum}")


@click.command("grade")
@click.argument("submission", type=click.Path(path_type=Path))
@click.option(
    "--tests", "tests_dir", required=True, type=click.Path(path_type=Path),
    help="Folder of the instructor's pytest tests (test_*.py).",
)
@click.option(
    "--out", type=click.Path(path_type=Path), default=None,
    help="Write Gradescope's results.json here (always written, even on errors).",
)
@click.option(
    "--timeout", type=click.FloatRange(min=0.1), default=DEFAULT_TIMEOUT, show_default=True,
    help="Seconds each test may run.",
)
@click.option(
    "--memory-mb", type=click.IntRange(min=64), default=DEFAULT_MEMORY_MB, show_default=True,
    help="Memory (address space) limit of student code, in MiB.",
)
@click.option(
    "--total-timeout", type=click.FloatRange(min=1), default=DEFAULT_TOTAL_TIMEOUT,
    show_default=True,
    help="Seconds for the whole grading (Gradescope allows 600 by default).",
)
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
    user: str | None,
    uid_base: int,
    uid_pool: int,
) -> None:
    """Grade SUBMISSION (a .py file or .ipynb notebook) with the tests in --tests.

    Student code runs in a separate process with a per-test time limit and a memory
    limit.  Prints a summary; with --out, writes Gradescope's results.json.
    """
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        results = grade(
            submission, tests_dir, out, timeout=timeout, memory_mb=memory_mb,
            total_timeout=total_timeout, user=user, uid_base=uid_base, uid_pool=uid_pool,
        )
    except GradingInputError as exc:  # grade() has written the results file already
        _fail("difflab grade", str(exc))
    except KeyboardInterrupt:
        click.echo("difflab grade: interrupted; partial results were written", err=True)
        sys.exit(130)
    finally:
        signal.signal(signal.SIGTERM, previous)
    click.echo(format_summary(results, title=f"difflab grade: {submission.name}"))
    if out is not None:
        click.echo(f"Results written to {out}")


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
    the solutions.  A folder's tests/ is copied to the instructor version only.
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
    except GradingInputError as exc:
        _fail("difflab assign", str(exc))
    for path in written:
        click.echo(f"wrote {path}")


@click.group()
def cli() -> None:
    """difflab grading tools (also available as `difflab grade` / `difflab assign`)."""


cli.add_command(grade_command)
cli.add_command(assign_command)
