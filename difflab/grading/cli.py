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

import json
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
from difflab.grading.release import (
    MANIFEST,
    assignment_files,
    release_files,
    source_block_tests,
    visible_tests,
)
from difflab.grading.results import format_summary
from difflab.grading.runner import (
    DEFAULT_MEMORY_MB,
    DEFAULT_TIMEOUT,
    DEFAULT_TOTAL_TIMEOUT,
    grade,
)
from difflab.grading.sandbox_users import DEFAULT_UID_BASE, DEFAULT_UID_POOL

__all__ = ["grade_command", "assign_command", "check_command", "autograder_group",
           "manual_group", "gradebook_group", "cli"]


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
@click.option("--due", default=None,
              help="A folder of submissions: the due date (ISO 8601 with a time zone, e.g. "
                   "2026-11-19T23:59:00-08:00) for the late policy where the metadata has "
                   "none (a Gradescope export's submission_metadata.yml has none).")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="A folder of submissions: gradings at once (default: the cores).")
@click.option("--results-dir", type=click.Path(path_type=Path), default=None,
              help="A folder of submissions: where each student's results JSON goes "
                   "(default: <gradebook>_results beside the gradebook).")
@click.option("--only", multiple=True,
              help="A folder of submissions: regrade only this student (repeat for more) "
                   "into the existing gradebook.")
@click.option("--manual", type=click.Path(path_type=Path), default=None,
              help="A folder of submissions: the scores.csv of questions graded by hand "
                   "(difflab manual collect), put into the results and the gradebook.")
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
    due: str | None,
    jobs: int | None,
    results_dir: Path | None,
    only: tuple[str, ...],
    manual: Path | None,
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
            if student_id is not None:
                raise GradingInputError(
                    "--student-id is for one submission; in a folder, each student's seed "
                    "comes from the metadata (--metadata, or the export's "
                    "submission_metadata.yml), and otherwise from the student's file or "
                    "folder name")
            _grade_folder(submission, tests_dir, out, jobs, results_dir,
                          dict(options, manual=manual, only=list(only) or None,
                               metadata=metadata, due=due))
            return
        if manual is not None or only or due is not None:
            raise GradingInputError("--manual, --only and --due are for a folder of "
                                    "submissions (one submission's metadata holds its due "
                                    "date)")
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
        who = f"{row.student} ({row.name})" if row.name else row.student
        click.echo(_shown(f"{who}: {row.score:g}/{row.max_score:g} ({row.status})"), err=True)

    rows = grade_batch(folder, tests_dir, out, results_dir=results_dir, jobs=jobs,
                       on_done=progress, **options)
    graded = sum(r.status in ("graded", "late") for r in rows)
    click.echo(f"{len(rows)} submissions, {graded} graded; gradebook written to {out}")


@click.command("check")
@click.argument("work", type=click.Path(path_type=Path))
@click.option("--tests", "tests_dir", type=click.Path(path_type=Path), default=None,
              help="The visible tests (default: tests/ beside WORK).")
@click.option("--question", "-q", default=None,
              help="Only the tests whose file, name or tag contains this (e.g. q1). "
                   "Default: the tests named after WORK (tests/test_hw1.py or tests/hw1/ "
                   "for hw1.ipynb) when the folder has some, else all.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=30.0, show_default=True,
              help="Seconds each test may run.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the results as JSON (Gradescope's format) instead of the report.")
def check_command(work: Path, tests_dir: Path | None, question: str | None,
                  timeout: float, as_json: bool) -> None:
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
    click.echo(json.dumps(report.results, indent=1) if as_json else _shown(str(report)))
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


def _release_files(source: Path) -> tuple[list[Path], list[Path], list[Path]]:
    if not assignment_files(source) and not (source / MANIFEST).is_file():
        raise GradingInputError(f"no .ipynb or .py assignment files in {source}")
    files, others, left_out = release_files(source)
    if not files:
        raise GradingInputError(
            f"no assignment source in {source}: no notebook or .py file fences a solution "
            f"(### BEGIN SOLUTION) and {MANIFEST} lists none; list the files to release in "
            f"{MANIFEST}")
    return files, others, left_out


@click.command("assign")
@click.argument("source", type=click.Path(path_type=Path))
@click.option(
    "--out", type=click.Path(path_type=Path), required=True,
    help="Folder to write student/ and instructor/ versions into.",
)
@click.option(
    "--no-validate", is_flag=True,
    help="Release without first grading the solution with every test.",
)
def assign_command(source: Path, out: Path, no_validate: bool) -> None:
    """Make the student and instructor versions of SOURCE.

    SOURCE is a notebook or .py file with nbgrader markers (### BEGIN SOLUTION /
    ### END SOLUTION, ### BEGIN HIDDEN TESTS / ### END HIDDEN TESTS), or an assignment
    folder of them.  The student version replaces solutions with
    `raise NotImplementedError()` and drops hidden tests; the instructor version keeps
    the solutions.  A folder's tests/ goes to the instructor version whole, and to the
    student version without its hidden tests (for `difflab check`).  Each hidden-tests
    block of a notebook or file becomes a hidden test in the instructor's tests/
    (test_hidden_blocks_<name>.py), worth the points its BEGIN line names
    ("### BEGIN HIDDEN TESTS (2 points)"; 1 by default).

    A folder releases the files its manifest.txt lists (one path or * pattern a line;
    notebooks and .py files as student versions, other files as they are), or without
    one its sources (the notebooks and .py files that fence a solution or hidden
    tests); every other file, such as a solution.py beside the notebook, stays behind
    and is named.  The student version of a notebook has no outputs, no widget state,
    and no attachments its stripped text does not show.

    Before writing anything, the solution of an assignment folder with one notebook or
    file and a tests/ folder is graded with every test (visible, hidden, and the hidden-
    tests blocks); unless it earns full marks, nothing is released and the failing tests
    are named.
    """
    try:
        if not source.exists():
            raise GradingInputError(f"assignment source not found: {source}")
        files, others, left_out = _release_files(source) if source.is_dir() else (
            [source], [], [])
        if not no_validate and source.is_dir() and (source / "tests").is_dir():
            _validate_release(files, source)
        written = []
        for file in files:
            place = file.parent.relative_to(source) if source.is_dir() else Path()
            written.append(make_student_version(file, out / "student" / place))
            written.append(make_instructor_version(file, out / "instructor" / place))
        for file in others:  # data and images the manifest lists, as they are
            for version in ("student", "instructor"):
                target = out / version / file.relative_to(source)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(file, target)
                written.append(target)
        if source.is_dir() and (source / "tests").is_dir():
            target = out / "instructor" / "tests"
            shutil.copytree(
                source / "tests", target, dirs_exist_ok=True,
                ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
            )
            written.append(target)
            visible_tests(source / "tests", out / "student" / "tests")
            written.append(out / "student" / "tests")
        for name, text in source_block_tests(source).items():  # hidden-tests blocks
            target = out / "instructor" / "tests" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            written.append(target)
    except GradingInputError as exc:
        _fail("difflab assign", str(exc))
    for path in written:
        click.echo(f"wrote {path}")
    if left_out:
        how = (f"not listed in {MANIFEST}" if (source / MANIFEST).is_file() else
               f"not an assignment source; list the files to release in {MANIFEST}")
        click.echo(f"left out of the student release ({how}): "
                   + ", ".join(str(p.relative_to(source)) for p in left_out), err=True)


def _validate_release(files: list[Path], assignment: Path) -> None:
    """Grade the solution with every test; GradingInputError unless it earns full marks.

    The tests are those of the assignment folder (as `difflab grade --tests FOLDER`
    reads them): its tests/ and the tests made from the sources' hidden-tests blocks.
    """
    import tempfile

    from difflab.grading.validation import validate_solution

    tests = assignment / "tests"
    if len(files) != 1:
        click.echo(f"not validated: {len(files)} assignment files share {tests} (grade "
                   "each solution with `difflab grade` to check it)", err=True)
        return
    with tempfile.TemporaryDirectory(prefix="difflab-assign-") as tmp:
        solution = make_instructor_version(files[0], Path(tmp))
        validate_solution(solution, assignment)
    click.echo(f"validated: the solution passes every test in {tests}"
               + (" and the hidden-tests blocks" if source_block_tests(assignment) else ""))


@click.group("manual")
def manual_group() -> None:
    """Questions graded by hand: collect the written answers, enter points, apply them.

    \b
    difflab manual collect submissions/ --assignment assignments/02 --out manual/
    difflab manual score manual/scores.csv alice q3 1.5 --comment "misses the cost"
    difflab manual apply manual/scores.csv --gradebook grades.csv
    """


@manual_group.command("collect")
@click.argument("submissions", type=click.Path(path_type=Path))
@click.option("--assignment", type=click.Path(path_type=Path), required=True,
              help="The assignment's source notebook or folder (the questions, the points).")
@click.option("--out", type=click.Path(path_type=Path), required=True,
              help="Folder for answers.md (to read) and scores.csv (to fill in).")
def manual_collect_command(submissions: Path, assignment: Path, out: Path) -> None:
    """Write every student's written answers to OUT/answers.md and a scores.csv to fill.

    Points already in OUT/scores.csv are kept.
    """
    from difflab.grading.manual import collect_answers

    try:
        answers, scores = collect_answers(submissions, assignment, out)
    except GradingInputError as exc:
        _fail("difflab manual collect", str(exc))
    click.echo(f"wrote {answers}\nwrote {scores} (fill in the points column, or use "
               "difflab manual score)")


@manual_group.command("score")
@click.argument("scores", type=click.Path(path_type=Path))
@click.argument("student")
@click.argument("question")
@click.argument("points", type=float)
@click.option("--comment", default=None, help="Feedback shown to the student.")
def manual_score_command(scores: Path, student: str, question: str, points: float,
                         comment: str | None) -> None:
    """Enter POINTS for STUDENT's answer to QUESTION in the SCORES file (scores.csv)."""
    from difflab.grading.manual import set_score

    try:
        row = set_score(scores, student, question, points, comment)
    except GradingInputError as exc:
        _fail("difflab manual score", str(exc))
    click.echo(f"{row.student} {row.question}: {row.points:g}/{row.max_points:g}")


@manual_group.command("apply")
@click.argument("scores", type=click.Path(path_type=Path))
@click.option("--gradebook", type=click.Path(path_type=Path), required=True,
              help="The class's gradebook (grades.csv of difflab grade FOLDER).")
@click.option("--results-dir", type=click.Path(path_type=Path), default=None,
              help="The students' results (default: <gradebook>_results beside it).")
def manual_apply_command(scores: Path, gradebook: Path, results_dir: Path | None) -> None:
    """Put the points of SCORES into each student's results and into the gradebook.

    Each question becomes a column 'manual: <question>' of the gradebook and a test of
    the student's results; applying again replaces the earlier points.
    """
    from difflab.grading.manual import apply_scores

    try:
        path = apply_scores(scores, gradebook, results_dir)
    except GradingInputError as exc:
        _fail("difflab manual apply", str(exc))
    click.echo(f"gradebook written to {path}")


@click.group("gradebook")
def gradebook_group() -> None:
    """A class's gradebook (grades.csv of difflab grade FOLDER): statistics, fixes, export.

    \b
    difflab gradebook stats grades.csv
    difflab gradebook adjust grades.csv --exclude "test_x.py::test_broken"
    difflab gradebook export grades.csv --canvas canvas.csv --assignment "HW 2"
    """


@gradebook_group.command("stats")
@click.argument("gradebook", type=click.Path(path_type=Path))
def gradebook_stats_command(gradebook: Path) -> None:
    """Mean, median, each test's spread and a histogram of GRADEBOOK's scores."""
    from difflab.grading.gradebook import class_statistics

    try:
        click.echo(class_statistics(gradebook))
    except GradingInputError as exc:
        _fail("difflab gradebook stats", str(exc))


@gradebook_group.command("adjust")
@click.argument("gradebook", type=click.Path(path_type=Path))
@click.option("--exclude", multiple=True, help="A test to drop from every student's "
              "results and the maximum (a broken test); repeat for more.")
@click.option("--give", multiple=True, help="A test every student gets full points for.")
@click.option("--set", "overrides", multiple=True, metavar="STUDENT:TEST=POINTS",
              help="Override one student's points on one test (a regrade request).")
@click.option("--results-dir", type=click.Path(path_type=Path), default=None,
              help="The students' results (default: <gradebook>_results beside it).")
def gradebook_adjust_command(gradebook: Path, exclude: tuple[str, ...], give: tuple[str, ...],
                             overrides: tuple[str, ...], results_dir: Path | None) -> None:
    """Drop broken tests, give their points to everyone, or override one student's points.

    The results and GRADEBOOK are rewritten.
    """
    from difflab.grading.gradebook import adjust_tests

    try:
        if not exclude and not give and not overrides:
            raise GradingInputError("nothing to adjust: give --exclude TEST, --give TEST or "
                                    "--set STUDENT:TEST=POINTS")
        path = adjust_tests(gradebook, exclude=list(exclude), give=list(give),
                            override=dict(map(_override, overrides)), results_dir=results_dir)
    except GradingInputError as exc:
        _fail("difflab gradebook adjust", str(exc))
    click.echo(f"gradebook written to {path}")


def _override(text: str) -> tuple[tuple[str, str], float]:
    student, sep, rest = text.partition(":")
    test, eq, points = rest.rpartition("=")
    try:
        if not (sep and eq and student and test):
            raise ValueError
        return (student, test), float(points)
    except ValueError:
        raise GradingInputError(f"--set {text!r}: expected STUDENT:TEST=POINTS, e.g. "
                                "alice:test_hw.py::test_sin=1.5") from None


@gradebook_group.command("export")
@click.argument("gradebook", type=click.Path(path_type=Path))
@click.option("--canvas", type=click.Path(path_type=Path), required=True,
              help="The CSV to write, in the shape Canvas's gradebook import reads.")
@click.option("--assignment", required=True, help="The assignment's column name in Canvas.")
def gradebook_export_command(gradebook: Path, canvas: Path, assignment: str) -> None:
    """Export GRADEBOOK's totals for an LMS (Canvas's gradebook import)."""
    from difflab.grading.gradebook import canvas_csv

    try:
        path = canvas_csv(gradebook, canvas, assignment)
    except GradingInputError as exc:
        _fail("difflab gradebook export", str(exc))
    click.echo(f"wrote {path}")


@click.group()
def cli() -> None:
    """difflab grading tools (also available as `difflab grade` / `difflab assign`)."""


cli.add_command(grade_command)
cli.add_command(assign_command)
cli.add_command(check_command)
cli.add_command(autograder_group)
cli.add_command(manual_group)
cli.add_command(gradebook_group)
