"""``grade()``: run an instructor's tests against a student's submission, safely.

How a submission is graded
--------------------------
1. **Stage.** A private temporary folder (readable by the grader only) gets a copy of
   the instructor's tests (as ``tests/``) and the submission as ``submission.py``.  A
   ``.py`` submission is copied as is; a ``.ipynb`` notebook becomes a module of its code
   cells, which run one by one when it loads (headless, with no Jupyter kernel; see
   :func:`~difflab.grading.notebooks.notebook_to_module`).
2. **Collect.** A trusted child process (the worker) lists the tests and their points
   with a stand-in for the submission, before any student code runs, so the list, and
   the maximum score, never depend on student code.
3. **Run.** The same worker then runs the tests under pytest (one Python start less than
   a process of its own for each step).  The student's code runs in a process of its
   own, started once the list is final (:mod:`difflab.grading.sandbox`): its own user
   when the grader is root, a fresh folder holding only the submission, hard limits on
   memory, CPU time, processes, file size and open files.  Tests reach it through the ``submission``
   module, a proxy that exchanges data only (never pickle).  A test that overruns its
   time, or a student process that dies, costs only that test; the student's process
   is started afresh for the next one.
4. **Report.** Only the grader writes results: a Gradescope ``results.json``, written
   atomically after collection, after each test, and at the end, so a file is there even
   if grading is cut short.  Every text in it is cut to a size limit and then redacted
   by one function (:func:`~difflab.grading.results.student_text`).

What this guarantees, and under which deployment, is the threat model in the
instructor's guide (``docs/guides/grading.md``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from difflab.grading.context import (
    LatePolicy,
    lateness,
    metadata_students,
    read_metadata,
    seed_for,
)
from difflab.grading.errors import GradingInputError
from difflab.grading.inputs import (  # noqa: F401  (MAX_TEST_FILES: read by callers)
    MAX_TEST_FILES,
    SKIPPED_FOLDERS,
    check_inputs,
    copy_regular_file,
    tests_files,
)
from difflab.grading.markers import MARKER_HELP, OUTPUT_FORMATS, VISIBILITIES, TestMeta
from difflab.grading.notebooks import notebook_to_module
from difflab.grading.release import tests_of
from difflab.grading.results import (
    TestOutcome,
    build_results,
    error_results,
    secret_lines,
    write_results,
)
from difflab.grading.sandbox_users import (
    DEFAULT_UID_BASE,
    DEFAULT_UID_POOL,
    SandboxUser,
    UidPool,
    exposure_warning,
    isolation_summary,
    kill_user_processes,
    remove_user_files,
    take_user,
)

__all__ = ["grade", "DEFAULT_TIMEOUT", "DEFAULT_MEMORY_MB", "DEFAULT_TOTAL_TIMEOUT"]

#: Seconds one test may run.  Gradescope's default limit is 10 minutes for the whole
#: run, so a handful of runaway tests must still fit well inside it.
DEFAULT_TIMEOUT = 20.0
#: Address-space limit of the process that runs student code, in MiB.
DEFAULT_MEMORY_MB = 2048
#: Seconds for the whole grading; tests not reached by then score 0 ("not run").
DEFAULT_TOTAL_TIMEOUT = 480.0
#: Extra seconds a child process gets to start Python, numpy and pytest.
STARTUP_ALLOWANCE = 15.0
#: Extra seconds the trusted process gets on top of a test's limit before the parent
#: stops it (the student's process is stopped at the limit itself).
TRUSTED_MARGIN = 10.0
#: Captured stdout/stderr of one test kept for the student.
MAX_CAPTURED = 1500
_POLL = 0.02


def _child_env() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_", "PYTHONWARNINGS", "COV_CORE"))
    }
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (package_root, env.get("PYTHONPATH", "")) if p
    )
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    env["MPLBACKEND"] = "Agg"
    # pytest's own plugins only, not those installed beside it (hypothesis's plugin alone
    # costs each grading a second of processor time): the same grading on every machine
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    return env


@dataclass
class _ChildRun:
    """What one child process reported."""

    events: list[dict[str, Any]] = field(default_factory=list)
    killed: str | None = None  # "timeout", "startup", "budget"
    running: str | None = None  # nodeid of the test running when the child ended
    returncode: int | None = None
    seconds: dict[str, float] = field(default_factory=dict)
    log_tail: str = ""
    students: list[int] = field(default_factory=list)  # pids of the student's processes


class _Stage:
    """The grader's private folder for one submission (tests, events, logs)."""

    def __init__(self, root: Path, submission: Path, tests_dir: Path, memory_mb: int | None,
                 *, timeout: float, total_timeout: float, user: SandboxUser | None,
                 seed: int = 0, select: str | None = None, visible_only: bool = False):
        self.root = root
        self.seed, self.select, self.visible_only = seed, select, visible_only
        self.memory_mb = memory_mb
        self.timeout = timeout
        self.total_timeout = total_timeout
        self.user = user
        os.chmod(root, 0o700)
        try:
            shutil.copytree(
                tests_dir, root / "tests", symlinks=True,
                ignore=shutil.ignore_patterns("__pycache__", "*.pyc", *SKIPPED_FOLDERS),
            )
        except (shutil.Error, OSError) as exc:
            raise GradingInputError(f"could not copy the tests folder {tests_dir}: {exc}"
                                    ) from None
        self.ini = root / "pytest.ini"
        self.ini.write_text(
            "[pytest]\nmarkers =\n    " + MARKER_HELP + "\n", encoding="utf-8"
        )
        self.submission_file = root / "submission.py"
        self.cells: list[tuple[int, int]] | None = None
        # read through O_NOFOLLOW: a link swapped in after the check is refused too
        copy = self.submission_file
        if submission.suffix == ".ipynb":
            (root / "notebook").mkdir()
            copy = root / "notebook" / submission.name  # messages name the student's file
        copy_regular_file(submission, copy)
        if submission.suffix == ".ipynb":
            try:
                module = notebook_to_module(copy)
            except (RecursionError, MemoryError, TypeError, AttributeError) as exc:
                raise GradingInputError(
                    f"{submission.name} is not a notebook that can be read "
                    f"({type(exc).__name__}: nested too deeply or malformed); it scores 0"
                ) from None
            self.submission_file.write_text(module.code, encoding="utf-8")
            self.cells = module.cells
        self._count = 0
        #: Where the student's folders are made: outside this private folder (the
        #: student's uid must reach its own), removed by :func:`grade` at the end.
        self.student_root: str | None = None

    def run_child(
        self,
        mode: str,
        targets: list[str],
        *,
        timeout: float,
        deadline: float,
        on_event: Callable[[dict[str, Any], _ChildRun], None] | None = None,
    ) -> _ChildRun:
        """Run one worker process and watch it until it ends or a limit is hit.

        ``on_event`` sees each event as it arrives, so results are recorded (and the
        results file rewritten) test by test, not only when the process ends.
        """
        self._count += 1
        events_path = self.root / f".events-{self._count}.jsonl"
        config_path = self.root / f".config-{self._count}.json"
        config = {
            "mode": mode,
            "targets": targets,
            "workdir": str(self.root),
            "ini": str(self.ini),
            "events": str(events_path),
            "memory_mb": self.memory_mb,
            "submission_file": str(self.submission_file),
            "cells": self.cells,
            "timeout": timeout,
            "startup": timeout + STARTUP_ALLOWANCE,
            "cpu_seconds": self.total_timeout,
            "output_log": str(self.root / "student-output.log"),
            "user": vars(self.user) if self.user else None,
            "seed": self.seed,
            "select": self.select,
            "visible_only": self.visible_only,
            "student_root": self.student_root,
        }
        config_path.write_text(json.dumps(config), encoding="utf-8")
        events_path.touch()
        log = open(self.root / f".child-{self._count}.log", "wb")  # noqa: SIM115
        proc = subprocess.Popen(
            [sys.executable, "-m", "difflab.grading._worker", str(config_path)],
            cwd=self.root,
            env=_child_env(),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        run = _ChildRun()
        startup_limit = timeout + STARTUP_ALLOWANCE
        test_limit = timeout + STARTUP_ALLOWANCE + TRUSTED_MARGIN
        last_progress = time.monotonic()
        test_started = 0.0
        offset = 0
        buffer = ""
        try:
            with open(events_path, encoding="utf-8") as fh:
                while True:
                    finished = proc.poll() is not None
                    fh.seek(offset)
                    chunk = fh.read()
                    offset += len(chunk.encode("utf-8"))
                    buffer += chunk
                    *complete, buffer = buffer.split("\n")
                    now = time.monotonic()
                    for line in complete:
                        event = _parse_event(line)
                        if event is None:
                            continue
                        run.events.append(event)
                        last_progress = now
                        if event["event"] == "student":
                            run.students.append(event["pid"])
                        elif event["event"] == "start":
                            run.running, test_started = event["nodeid"], now
                        elif event["event"] == "done":
                            run.seconds[event["nodeid"]] = now - test_started
                            run.running = None
                        if on_event is not None:
                            on_event(event, run)
                    if finished:
                        break
                    if now > deadline:
                        run.killed = "budget"
                    elif run.running is not None and now - test_started > test_limit:
                        run.killed = "timeout"
                    elif run.running is None and now - last_progress > startup_limit:
                        run.killed = "startup"
                    if run.killed:
                        if run.running is not None:
                            run.seconds[run.running] = now - test_started
                        _kill(proc)
                        break
                    time.sleep(_POLL)
        except OSError:  # the private folder vanished: end this child, report what we have
            run.killed = run.killed or "vanished"
        finally:
            if proc.poll() is None:
                _kill(proc)
            log.close()
            self._end_student(run)
        run.returncode = proc.returncode
        try:
            with open(log.name, "rb") as fh:
                fh.seek(0, os.SEEK_END)
                fh.seek(max(0, fh.tell() - 4000))
                run.log_tail = fh.read().decode("utf-8", errors="replace")
        except OSError:
            run.log_tail = ""
        return run

    def _end_student(self, run: _ChildRun) -> None:
        """Kill whatever the student's processes left, even if the trusted child could not."""
        for pid in run.students:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        if self.user is not None:
            kill_user_processes(self.user.uid)


_EVENT_FIELDS = {
    "student": {"pid": int},
    "start": {"nodeid": str},
    "done": {"nodeid": str, "passed": bool, "reason": str, "message": str, "captured": str},
    "item": {"nodeid": str, "name": str, "max_score": (int, float), "visibility": str,
             "tags": list},
    "collect_error": {"nodeid": str, "message": str, "detail": str},
    "import_error": {"message": str, "reason": str},
    "collected": {"count": int},
    "ready": {"cell_errors": list},
    "finished": {"exit_code": int},
}


def _parse_event(line: str) -> dict[str, Any] | None:
    """One line of the events file, or None for a line that is not a well-formed event."""
    if not line.strip():
        return None
    try:
        event = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(event, dict):
        return None
    fields = _EVENT_FIELDS.get(event.get("event"))
    if fields is None or not all(isinstance(event.get(k), t) for k, t in fields.items()):
        return None
    return event


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def _death_message(returncode: int | None) -> tuple[str, str]:
    """The trusted process (not the student's) ended during a test."""
    return "error", (
        f"The grader's test process stopped during this test (exit status {returncode}); "
        "this is a problem of the test, not of your code. Tell your instructor."
    )


def _collected_tests(stage: _Stage, events: list[dict[str, Any]], killed: str | None
                     ) -> list[TestMeta]:
    """The tests listed by the worker's collection (its ``item`` and ``collect_error``
    events), or the instructor's error that explains why there are none."""
    errors = [e for e in events if e["event"] == "collect_error"]
    if errors:
        first = errors[0]
        raise GradingInputError(
            f"the tests in {first['nodeid'] or 'the tests folder'} could not be collected, "
            f"even without running the submission:\n{first['detail']}"
        )
    if killed:
        raise GradingInputError("collecting the tests took too long; do they run code on import?")
    items = [e for e in events if e["event"] == "item"]
    if not items:
        if stage.select or stage.visible_only:
            raise GradingInputError(
                "no visible tests" + (f" match {stage.select!r}" if stage.select else "")
                + " in the tests folder")
        raise GradingInputError(
            "no tests in the tests folder: the test files define no test functions "
            "(names must start with 'test')"
        )
    return [
        TestMeta(
            nodeid=e["nodeid"],
            name=e["name"] if e["name"] != e["nodeid"].split("::")[-1] else _display(e["nodeid"]),
            max_score=e["max_score"],
            visibility=e["visibility"],
            tags=e["tags"],
            partial=e.get("partial") is True,
            number=e["number"] if isinstance(e.get("number"), str) else None,
            output_format=e["output_format"] if e.get("output_format") in OUTPUT_FORMATS
            else None,
            extra_credit=e.get("extra_credit") is True,
        )
        for e in items
    ]


def _display(nodeid: str) -> str:
    return re.sub(r"^tests/", "", nodeid)


def _numbered(metas: list[TestMeta]) -> list[TestOutcome]:
    outcomes, files = [], {}
    for meta in metas:
        file = meta.nodeid.split("::")[0]
        files.setdefault(file, []).append(meta)
        number = f"{list(files).index(file) + 1}.{len(files[file])}"
        outcomes.append(TestOutcome(meta=meta, number=number))
    return outcomes


class _Grading:
    """Book-keeping for one call of :func:`grade`."""

    def __init__(self, out: Path | None, visibility: str):
        self.out = out
        self.visibility = visibility
        self.secrets: list[str] = []
        self.started = time.monotonic()
        self.outcomes: list[TestOutcome] = []
        self.notes: list[str] = []
        self.cell_errors: list[str] = []
        self.isolation = ""
        self.write_error: str | None = None
        self.seed: int | None = None
        self.late: dict[str, Any] | None = None  # days, factor, policy
        self.leaderboard: dict[str, dict[str, Any]] = {}

    def results(self) -> dict[str, Any]:
        notes = list(self.notes)
        if self.late is not None:
            notes.append(
                f"Submitted {self.late['days']} day(s) late: the score is multiplied by "
                f"{self.late['factor']:g} (late policy: {self.late['policy']}).")
        results = build_results(
            self.outcomes,
            execution_time=time.monotonic() - self.started,
            output="\n".join(notes),
            visibility=self.visibility,
            secrets=self.secrets,
        )
        extra: dict[str, Any] = {}
        if self.isolation:
            extra["isolation"] = self.isolation
        if self.seed is not None:
            extra["seed"] = str(self.seed)
        if self.late is not None:
            extra["late"] = dict(self.late, score_before=results["score"])
            results["score"] = round(results["score"] * self.late["factor"], 6)
        if self.leaderboard:
            results["leaderboard"] = list(self.leaderboard.values())
        if extra:
            results["extra_data"] = extra
        return results

    def add_leaderboard(self, entries: Any) -> None:
        """Entries a test reported (validated: the trusted process sent them)."""
        for entry in entries if isinstance(entries, list) else []:
            if (isinstance(entry, dict) and isinstance(entry.get("name"), str)
                    and isinstance(entry.get("value"), (int, float, str))
                    and not isinstance(entry.get("value"), bool)
                    and entry.get("order") in ("asc", "desc")):
                self.leaderboard[entry["name"]] = {
                    k: entry[k] for k in ("name", "value", "order")}

    def save(self) -> dict[str, Any]:
        results = self.results()
        if self.out is not None:
            try:
                write_results(results, self.out)
                self.write_error = None
            except OSError as exc:  # reported once grading ends; grading goes on
                self.write_error = f"could not write the results file {self.out}: {exc}"
        return results

    def settle(self, outcome: TestOutcome, *, passed: bool, reason: str, message: str,
               captured: str = "", seconds: float = 0.0, fraction: float | None = None
               ) -> None:
        if not passed and self.cell_errors and reason != "import_error":
            message += "\n\nNote: these notebook cells raised errors when your notebook ran:\n"
            message += "\n".join(f"  {e}" for e in self.cell_errors)
        outcome.passed = passed
        outcome.reason = reason
        outcome.message = message
        outcome.captured = captured
        outcome.seconds = seconds
        outcome.fraction = fraction
        outcome.extra = {"seconds": round(seconds, 3)}


def grade(
    submission: str | Path,
    tests_dir: str | Path,
    out: str | Path | None = None,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    memory_mb: int | None = DEFAULT_MEMORY_MB,
    total_timeout: float = DEFAULT_TOTAL_TIMEOUT,
    visibility: str = "visible",
    user: str | None = None,
    uid_base: int = DEFAULT_UID_BASE,
    uid_pool: int = DEFAULT_UID_POOL,
    metadata: str | Path | dict | None = None,
    student_id: str | None = None,
    late_policy: LatePolicy | None = None,
    select: str | None = None,
    visible_only: bool = False,
) -> dict[str, Any]:
    """Grade a student's submission with an instructor's pytest tests.

    Parameters
    ----------
    submission : str or Path
        The student's ``.py`` file or ``.ipynb`` notebook.
    tests_dir : str or Path
        The instructor's tests folder (``test_*.py`` files using ``@points``).
    out : str or Path, optional
        Where to write Gradescope's ``results.json``.  It is written after the tests are
        collected, after every child process, and at the end, even when grading stops
        early (time budget, interruption).
    timeout : float, optional
        Seconds each test may run before it is stopped and scored 0.
    memory_mb : int or None, optional
        Address-space limit for the process running student code, in MiB (Linux).
        ``None`` disables it.
    total_timeout : float, optional
        Seconds for the whole grading; keep it inside the grading service's own limit
        (Gradescope: 10 minutes by default).  Tests not reached score 0.
    visibility : str, optional
        Gradescope visibility of the overall result.
    user : str, optional
        When the grader runs as root: a named account to run student code as (it must
        exist; gradings naming the same account take turns).  By default each grading
        takes a uid of its own from the pool below, so gradings can run at once.
        Ignored when not root.
    uid_base, uid_pool : int, optional
        When the grader runs as root: the pool of numeric uids for student code
        (``uid_base`` to ``uid_base + uid_pool - 1``; no accounts needed, and uids that
        belong to an account are skipped).  At most ``uid_pool`` gradings run at once.
    metadata : str, Path or dict, optional
        Gradescope's ``submission_metadata.json`` (or its contents): the students' ids
        give the seed of :func:`~difflab.grading.context.student_seed`, the dates the
        lateness for ``late_policy``.
    student_id : str, optional
        The seed of this student instead (to reproduce a student's variant).
    late_policy : LatePolicy, optional
        Multiply the score by the policy's factor for the lateness in ``metadata``;
        without metadata it is not applied, and the results say so.
    select : str, optional
        Only the tests whose node id (file, name) or tags contain this text.
    visible_only : bool, optional
        Only the tests a student may see (``difflab check``).

    Returns
    -------
    dict
        The results, in Gradescope's format; ``extra_data["isolation"]`` says how student
        code was kept apart from the tests.

    Raises
    ------
    GradingInputError
        For a submission that does not exist or is not a valid notebook, a tests folder
        without tests, a missing sandbox user, or a results file that cannot be written.
        Student mistakes (a crash, a loop, a missing function) are *not*
        errors: they cost the tests they affect, with a message in the results.

    See Also
    --------
    grade_batch : grade a folder of submissions into a gradebook.
    check : the students' own run of the visible tests.
    points : the decorator that gives a test its points.

    Notes
    -----
    The tests run in the grader's process; the student's code runs in a child process
    (as a sandbox uid of its own when the grader is root), in a fresh folder, with
    limits on time, memory, processes and files.  A grading therefore takes a few
    seconds even for a tiny assignment (the child imports Python, NumPy and difflab).

    Examples
    --------
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
    >>> _ = (hw / "hw1.py").write_text("def add(a, b):\\n    return a + b if a > 0 else 0\\n")
    >>> from difflab.grading import GradingInputError, grade
    >>> results = grade(hw / "hw1.py", hw / "tests")
    >>> results["score"], [(t["name"], t["score"], t["max_score"]) for t in results["tests"]]
    (2.0, [('test_hw1.py::test_add', 2.0, 2.0), ('test_hw1.py::test_add_negative', 0.0, 1.0)])
    >>> grade(hw / "missing.py", hw / "tests")       # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    difflab.grading.errors.GradingInputError: ...missing.py...
    >>> tmp.cleanup()
    """
    submission, tests_dir = Path(submission), Path(tests_dir)
    out = Path(out) if out is not None else None
    job = _Grading(out, visibility)
    try:
        if not 0 < timeout <= total_timeout:
            raise GradingInputError(
                f"the per-test time limit ({timeout:g} s) must be positive and within the "
                f"whole grading's time limit ({total_timeout:g} s)"
            )
        if visibility not in VISIBILITIES:
            raise GradingInputError(f"visibility must be one of {VISIBILITIES}")
        tests_dir, block_tests = tests_of(tests_dir)
        check_inputs(submission, tests_dir)
        job.seed, job.late = _submission_context(metadata, student_id, late_policy)
        if late_policy is not None and metadata is None:
            job.notes.append("No submission metadata (submission_metadata.json) was given, "
                             "so the late policy was not applied.")
        sandbox_user, lock = take_user(user, uid_base, uid_pool)
        student_root = None
        try:
            job.isolation = isolation_summary(sandbox_user) + exposure_warning(sandbox_user,
                                                                        tests_dir)
            job.secrets = secret_lines(tests_dir)
            student_root = _student_root(sandbox_user)
            with tempfile.TemporaryDirectory(prefix="difflab-grade-") as tmp:
                stage = _Stage(Path(tmp), submission, tests_dir, memory_mb, timeout=timeout,
                               total_timeout=total_timeout, user=sandbox_user,
                               seed=job.seed or 0, select=select, visible_only=visible_only)
                for name, text in block_tests.items():  # the sources' hidden-tests blocks
                    (stage.root / "tests" / name).write_text(text, encoding="utf-8")
                    job.secrets = secret_lines(stage.root / "tests")
                stage.student_root = student_root
                deadline = job.started + total_timeout
                _run_tests(stage, job, timeout=timeout, deadline=deadline)
        finally:
            # the trusted side cleans up, whether or not the worker was killed: nothing
            # of this student is left for the next holder of the uid
            if lock is not None:
                kill_user_processes(sandbox_user.uid)
            if student_root is not None:
                shutil.rmtree(student_root, ignore_errors=True)
            if lock is not None:
                remove_user_files(sandbox_user.uid)
                UidPool.release(lock)
    except GradingInputError as exc:
        if out is not None:
            elapsed = time.monotonic() - job.started
            write_results(
                error_results(f"Not graded, every test scores 0: {exc}", execution_time=elapsed),
                out,
            )
        raise
    except BaseException:
        job.notes.append("Grading was interrupted; tests that had not run score 0.")
        job.save()
        raise
    results = job.save()
    if job.write_error:
        raise GradingInputError(job.write_error)
    return results


def _student_root(user: SandboxUser | None) -> str:
    """A folder for this grading's student folders: traversable, not listable, root's."""
    root = tempfile.mkdtemp(prefix="difflab-sandbox-")
    os.chmod(root, 0o711 if user is not None else 0o700)
    return root


def _submission_context(metadata: str | Path | dict | None, student_id: str | None,
                        policy: LatePolicy | None) -> tuple[int | None, dict | None]:
    """``(seed, lateness record)`` of a submission from its metadata (None: not given)."""
    try:
        if metadata is not None and not isinstance(metadata, dict):
            metadata = read_metadata(metadata)
        students = [student_id] if student_id else metadata_students(metadata or {})
        seed = seed_for(students) if students else None
        late = None
        if policy is not None and metadata is not None:
            factor, days = policy.factor(lateness(metadata))
            if days:
                late = {"days": days, "factor": factor, "policy": policy.spec()}
    except ValueError as exc:
        raise GradingInputError(str(exc)) from None
    return seed, late


class _Progress:
    """What the worker's events have said so far: the tests it listed, those not yet run."""

    def __init__(self, stage: _Stage, job: _Grading) -> None:
        self.stage, self.job = stage, job
        self.collection: list[dict[str, Any]] = []  # the listing's item/collect_error events
        self.by_id: dict[str, TestOutcome] = {}
        self.pending: list[str] | None = None  # None until the worker has listed the tests
        self.progressed = False  # a test was settled by the current worker

    def record(self, event: dict[str, Any], run: _ChildRun) -> None:
        """Handle one event as it arrives (the results file is rewritten at once)."""
        job = self.job
        if self.pending is None:  # the worker is listing the tests, with a stand-in
            if event["event"] in ("item", "collect_error"):
                self.collection.append(event)
            elif event["event"] == "collected":
                job.outcomes = _numbered(_collected_tests(self.stage, self.collection, None))
                self.by_id = {o.meta.nodeid: o for o in job.outcomes}
                self.pending = list(self.by_id)
                job.save()
            return
        if event["event"] == "done" and event["nodeid"] in self.pending:
            self.progressed = True
            fraction = event.get("fraction")
            job.settle(self.by_id[event["nodeid"]], passed=event["passed"],
                       reason=event["reason"], message=event["message"],
                       captured=event["captured"],
                       seconds=run.seconds.get(event["nodeid"], 0.0),
                       fraction=float(fraction) if isinstance(fraction, (int, float))
                       and not isinstance(fraction, bool) else None)
            job.add_leaderboard(event.get("leaderboard"))
            self.pending.remove(event["nodeid"])
            job.save()


def _run_tests(stage: _Stage, job: _Grading, *, timeout: float, deadline: float) -> None:
    """Collect the tests, then run them, in one worker (mode ``grade``).

    The results file is written once the list of tests is final, before any student code
    runs, and after each test.  A worker stopped during a test (its time limit, a crash)
    is followed by a fresh one (mode ``run``) for the tests not yet run.
    """
    progress = _Progress(stage, job)
    while progress.pending is None or progress.pending:
        if progress.pending is not None and time.monotonic() >= deadline:
            _give_up(job, progress.pending, "budget")
            return
        progress.progressed = False
        if progress.pending is None:
            run = stage.run_child("grade", ["tests"], timeout=timeout, deadline=deadline,
                                  on_event=progress.record)
        else:
            run = stage.run_child("run", list(progress.pending), timeout=timeout,
                                  deadline=deadline, on_event=progress.record)
        if progress.pending is None:  # the worker ended, or was stopped, before the list
            _collected_tests(stage, progress.collection, run.killed)
            raise GradingInputError(
                f"the grader's test process stopped while listing the tests (exit status "
                f"{run.returncode}):\n{run.log_tail[-1500:]}")
        by_id, pending = progress.by_id, progress.pending
        collect_errors = _loading_events(job, run, pending, by_id)
        if collect_errors is None:  # the submission could not be loaded: every test is 0
            return
        if run.running in by_id and run.running in pending:
            nodeid = run.running
            progress.progressed = True
            if run.killed == "timeout":
                reason, message = "timeout", (
                    f"Stopped at the time limit ({timeout:g} s per test). Look for a loop "
                    "whose condition never becomes false, or a recursion without a base case."
                )
            elif run.killed == "budget":
                reason, message = "not_run", "Grading ran out of time during this test."
            else:
                reason, message = _death_message(run.returncode)
            job.settle(by_id[nodeid], passed=False, reason=reason, message=message,
                       seconds=run.seconds.get(nodeid, 0.0))
            pending.remove(nodeid)
        elif run.killed == "startup" and not progress.progressed:
            message = (
                f"Loading your submission took longer than {timeout + STARTUP_ALLOWANCE:g} s, "
                "so no test could run and every test scores 0. Is there an infinite loop, "
                "input() call or long computation at the top level of your file?"
            )
            for nodeid in pending:
                job.settle(by_id[nodeid], passed=False, reason="timeout", message=message)
            job.notes.append(message)
            job.save()
            return
        for nodeid in list(pending):
            file = nodeid.split("::")[0]
            if file in collect_errors:
                job.settle(by_id[nodeid], passed=False, reason="missing_name"
                           if "does not define" in collect_errors[file] else "error",
                           message=collect_errors[file])
                pending.remove(nodeid)
                progress.progressed = True
        job.save()
        if run.killed == "budget":
            _give_up(job, pending, "budget")
            return
        if not progress.progressed:
            for nodeid in pending:
                job.settle(by_id[nodeid], passed=False, reason="error",
                           message="This test did not run: the grader's test process "
                                   "stopped before reaching it.")
            return


def _loading_events(job: _Grading, run: _ChildRun, pending: list[str],
                    by_id: dict[str, TestOutcome]) -> dict[str, str] | None:
    """Record how the submission loaded; the test files that failed to load with it
    (file -> message), or None when it could not be loaded at all (the tests settled)."""
    collect_errors: dict[str, str] = {}
    for event in run.events:
        kind = event["event"]
        if kind == "import_error":
            for nodeid in pending:
                job.settle(by_id[nodeid], passed=False, reason=event["reason"],
                           message=event["message"])
            job.notes.append(event["message"])
            job.save()
            return None
        if kind == "ready" and event["cell_errors"] and not job.cell_errors:
            job.cell_errors = event["cell_errors"]
            job.notes.append(
                "Some cells of your notebook raised errors when it ran (the cells after "
                "them still ran):\n" + "\n".join(f"  {e}" for e in job.cell_errors)
            )
        if kind == "collect_error":
            collect_errors[event["nodeid"]] = event["message"]
    return collect_errors


def _give_up(job: _Grading, pending: list[str], why: str) -> None:
    by_id = {o.meta.nodeid: o for o in job.outcomes}
    for nodeid in pending:
        job.settle(by_id[nodeid], passed=False, reason="not_run",
                   message="Not run: the grading time budget was used up before this test.")
    job.notes.append(
        f"Grading stopped at its time budget; {len(pending)} test(s) did not run and score 0."
    )
    job.save()
