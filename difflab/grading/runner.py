"""``grade()``: run an instructor's tests against a student's submission, safely.

How a submission is graded
--------------------------
1. **Stage.** A fresh temporary folder gets a copy of the instructor's tests (as
   ``tests/``) and the submission as ``submission.py``.  A ``.py`` submission is copied as
   is; a ``.ipynb`` notebook becomes a module of its code cells, which run top to bottom
   when the module is imported (headless, with no Jupyter kernel; see
   :func:`~difflab.grading.notebooks.notebook_to_module`).  Tests import the student's
   work with ``import submission`` or ``from submission import name``.
2. **Collect.** A child process lists the tests and their points with a stand-in for the
   submission, so the list, and the maximum score, never depend on student code.
3. **Run.** A child process with an address-space limit (``RLIMIT_AS``, the memory
   limit) imports the submission and runs the tests under pytest.  A small plugin reports
   each test's start and result through an events file (never through stdout, which the
   student's code controls).  The parent watches the clock: a test that runs past the
   per-test time limit, or a process that dies (segfault, memory), costs only the test
   that was running; a fresh child then runs the tests that remain.
4. **Report.** A Gradescope ``results.json`` is written after collection and after every
   child, so a file is there even if grading is cut short, and once more at the end.

Limits
------
The child's memory limit is virtual address space (Linux ``RLIMIT_AS``; not enforced on
macOS or Windows).  The sandbox contains *mistakes*: infinite loops, memory bombs,
crashes, ``sys.exit``.  It is not a security boundary against a determined adversary
(student code runs in the same process as the tests); run the grader inside the
course service's container, as Gradescope does.
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

from difflab.grading.errors import GradingInputError
from difflab.grading.markers import MARKER_HELP, VISIBILITIES, TestMeta
from difflab.grading.notebooks import notebook_to_module
from difflab.grading.results import (
    TestOutcome,
    build_results,
    error_results,
    truncate,
    write_results,
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
#: Captured stdout/stderr of one test kept for the student.
MAX_CAPTURED = 1500

_POLL = 0.02


def _is_test_file(path: Path) -> bool:
    return path.suffix == ".py" and (path.name.startswith("test_") or path.stem.endswith("_test"))


def _check_inputs(submission: Path, tests_dir: Path) -> None:
    if not submission.exists():
        raise GradingInputError(f"submission not found: {submission}")
    if not submission.is_file():
        raise GradingInputError(f"submission is not a file: {submission}")
    if submission.suffix not in (".py", ".ipynb"):
        raise GradingInputError(
            f"submission {submission.name}: expected a .py file or a .ipynb notebook"
        )
    if not tests_dir.is_dir():
        raise GradingInputError(f"tests folder not found: {tests_dir}")
    if not any(_is_test_file(p) for p in tests_dir.rglob("*.py")):
        raise GradingInputError(
            f"no tests in {tests_dir}: expected files named test_*.py or *_test.py "
            "containing test functions"
        )


def _secret_lines(tests_dir: Path) -> list[str]:
    """Lines of the instructor's files that must never appear in student-visible output."""
    secrets: set[str] = set()
    for path in tests_dir.rglob("*"):
        if not path.is_file() or path.suffix not in (".py", ".ipynb", ".txt", ".json"):
            continue
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            s = line.strip().strip('",').strip()
            if len(s) >= 12 and not s.startswith(("import ", "from ", "#", "@", '"""')):
                secrets.add(s)
    return sorted(secrets, key=len, reverse=True)


def redact(text: str, secrets: list[str]) -> str:
    """Replace each line of ``text`` that contains an instructor line by a notice."""
    if not text or not secrets:
        return text
    out = []
    for line in text.splitlines():
        if any(s in line for s in secrets):
            out.append("[line hidden: it matches the instructor's test or solution code]")
        else:
            out.append(line)
    return "\n".join(out)


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


class _Stage:
    """The temporary folder in which one submission is graded."""

    def __init__(self, root: Path, submission: Path, tests_dir: Path, memory_mb: int | None):
        self.root = root
        self.memory_mb = memory_mb
        shutil.copytree(
            tests_dir, root / "tests", ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
        self.ini = root / "pytest.ini"
        self.ini.write_text(
            "[pytest]\nmarkers =\n    " + MARKER_HELP + "\n", encoding="utf-8"
        )
        self.submission_file = root / "submission.py"
        self.cells: list[tuple[int, int]] | None = None
        if submission.suffix == ".ipynb":
            module = notebook_to_module(submission)
            self.submission_file.write_text(module.code, encoding="utf-8")
            self.cells = module.cells
        else:
            shutil.copyfile(submission, self.submission_file)
        self._count = 0

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
                        if not line.strip():
                            continue
                        event = json.loads(line)
                        run.events.append(event)
                        last_progress = now
                        if event["event"] == "start":
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
                    elif run.running is not None and now - test_started > timeout:
                        run.killed = "timeout"
                    elif run.running is None and now - last_progress > startup_limit:
                        run.killed = "startup"
                    if run.killed:
                        if run.running is not None:
                            run.seconds[run.running] = now - test_started
                        _kill(proc)
                        break
                    time.sleep(_POLL)
        finally:
            if proc.poll() is None:
                _kill(proc)
            log.close()
        run.returncode = proc.returncode
        with open(log.name, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 4000))
            run.log_tail = fh.read().decode("utf-8", errors="replace")
        return run


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def _death_message(
    returncode: int | None, memory_mb: int | None, log_tail: str = ""
) -> tuple[str, str]:
    limit = f" ({memory_mb} MB)" if memory_mb else ""
    if "MemoryError" in log_tail:
        return "memory", (
            f"Stopped by the memory limit{limit}: your code asked for more memory than the "
            "grader allows, and the process running it could not recover."
        )
    if returncode is not None and returncode < 0:
        sig = signal.Signals(-returncode).name if -returncode in signal.valid_signals() else ""
        if -returncode == signal.SIGKILL:
            return "memory", (
                f"The process running your code was killed during this test ({sig}), "
                f"most likely for using more memory than the limit{limit}."
            )
        return "crash", (
            f"The process running your code crashed during this test ({sig or returncode}). "
            "This can happen when memory runs out inside a numerical library, or when "
            "code writes outside an array."
        )
    return "crash", (
        f"The process running your code stopped during this test (exit status {returncode}). "
        "Does your code call exit(), sys.exit() or os._exit()?"
    )


def _collect(stage: _Stage, timeout: float, deadline: float) -> list[TestMeta]:
    run = stage.run_child("collect", ["tests"], timeout=timeout, deadline=deadline)
    errors = [e for e in run.events if e["event"] == "collect_error"]
    if errors:
        first = errors[0]
        raise GradingInputError(
            f"the tests in {first['nodeid'] or 'the tests folder'} could not be collected, "
            f"even without running the submission:\n{first['detail']}"
        )
    if run.killed:
        raise GradingInputError("collecting the tests took too long; do they run code on import?")
    items = [e for e in run.events if e["event"] == "item"]
    if not items:
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

    def results(self) -> dict[str, Any]:
        return build_results(
            self.outcomes,
            execution_time=time.monotonic() - self.started,
            output="\n".join(self.notes),
            visibility=self.visibility,
        )

    def save(self) -> dict[str, Any]:
        results = self.results()
        if self.out is not None:
            write_results(results, self.out)
        return results

    def settle(self, outcome: TestOutcome, *, passed: bool, reason: str, message: str,
               captured: str = "", seconds: float = 0.0) -> None:
        if not passed and self.cell_errors and reason != "import_error":
            message += "\n\nNote: these notebook cells raised errors when your notebook ran:\n"
            message += "\n".join(f"  {e}" for e in self.cell_errors)
        outcome.passed = passed
        outcome.reason = reason
        outcome.message = redact(message, self.secrets)
        outcome.captured = truncate(redact(captured, self.secrets), MAX_CAPTURED)
        outcome.seconds = seconds
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

    Returns
    -------
    dict
        The results, in Gradescope's format.

    Raises
    ------
    GradingInputError
        For a submission that does not exist or is not a valid notebook, or a tests folder
        without tests.  Student mistakes (a crash, a loop, a missing function) are *not*
        errors: they cost the tests they affect, with a message in the results.
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
        _check_inputs(submission, tests_dir)
        job.secrets = _secret_lines(tests_dir)
        with tempfile.TemporaryDirectory(prefix="difflab-grade-") as tmp:
            stage = _Stage(Path(tmp), submission, tests_dir, memory_mb)
            deadline = job.started + total_timeout
            job.outcomes = _numbered(_collect(stage, timeout, deadline))
            job.save()
            _run_tests(stage, job, timeout=timeout, deadline=deadline)
    except GradingInputError as exc:
        if out is not None:
            elapsed = time.monotonic() - job.started
            write_results(
                error_results(f"The autograder could not run: {exc}", execution_time=elapsed),
                out,
            )
        raise
    except BaseException:
        job.notes.append("Grading was interrupted; tests that had not run score 0.")
        job.save()
        raise
    return job.save()


def _run_tests(stage: _Stage, job: _Grading, *, timeout: float, deadline: float) -> None:
    by_id = {o.meta.nodeid: o for o in job.outcomes}
    pending = list(by_id)
    while pending:
        if time.monotonic() >= deadline:
            _give_up(job, pending, "budget")
            return
        progressed = False

        def record(event: dict[str, Any], run: _ChildRun) -> None:
            nonlocal progressed
            if event["event"] == "done" and event["nodeid"] in pending:
                progressed = True
                job.settle(by_id[event["nodeid"]], passed=event["passed"],
                           reason=event["reason"], message=event["message"],
                           captured=event["captured"],
                           seconds=run.seconds.get(event["nodeid"], 0.0))
                pending.remove(event["nodeid"])
                job.save()

        run = stage.run_child(
            "run", list(pending), timeout=timeout, deadline=deadline, on_event=record
        )
        collect_errors: dict[str, str] = {}
        for event in run.events:
            kind = event["event"]
            if kind == "import_error":
                for nodeid in pending:
                    job.settle(by_id[nodeid], passed=False, reason=event["reason"],
                               message=event["message"])
                job.notes.append(event["message"])
                job.save()
                return
            if kind == "ready" and event["cell_errors"] and not job.cell_errors:
                job.cell_errors = event["cell_errors"]
                job.notes.append(
                    "Some cells of your notebook raised errors when it ran (the cells after "
                    "them still ran):\n" + "\n".join(f"  {e}" for e in job.cell_errors)
                )
            if kind == "collect_error":
                collect_errors[event["nodeid"]] = event["message"]
        if run.running in by_id and run.running in pending:
            nodeid = run.running
            progressed = True
            if run.killed == "timeout":
                reason, message = "timeout", (
                    f"Stopped at the time limit ({timeout:g} s per test). Look for a loop "
                    "whose condition never becomes false, or a recursion without a base case."
                )
            elif run.killed == "budget":
                reason, message = "not_run", "Grading ran out of time during this test."
            else:
                reason, message = _death_message(run.returncode, stage.memory_mb, run.log_tail)
            job.settle(by_id[nodeid], passed=False, reason=reason, message=message,
                       seconds=run.seconds.get(nodeid, 0.0))
            pending.remove(nodeid)
        elif run.killed == "startup" and not progressed:
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
                progressed = True
        job.save()
        if run.killed == "budget":
            _give_up(job, pending, "budget")
            return
        if not progressed:
            for nodeid in pending:
                job.settle(by_id[nodeid], passed=False, reason="error",
                           message="This test did not run (pytest could not run it).")
            return


def _give_up(job: _Grading, pending: list[str], why: str) -> None:
    by_id = {o.meta.nodeid: o for o in job.outcomes}
    for nodeid in pending:
        job.settle(by_id[nodeid], passed=False, reason="not_run",
                   message="Not run: the grading time budget was used up before this test.")
    job.notes.append(
        f"Grading stopped at its time budget; {len(pending)} test(s) did not run and score 0."
    )
    job.save()
