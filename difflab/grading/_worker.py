"""The trusted child of ``difflab grade``: runs the instructor's tests.

The parent (:mod:`difflab.grading.runner`) starts ``python -m difflab.grading._worker
CONFIG.json`` in a fresh process with its own session, from the grader's private folder.
This process runs no student code.  It

1. in mode ``grade``, first lists the tests and their points with a stand-in for the
   submission (:func:`collect`), before any student code has run, then forgets the
   imported test modules and goes on as in mode ``run`` with the tests it listed;
2. in mode ``run`` (also the parent's restart after a test stopped this process), starts
   the student's process (:class:`~difflab.grading.sandbox.Sandbox`), which loads the
   submission, and installs :class:`~difflab.grading.sandbox.SubmissionProxy` as the
   ``submission`` module the tests import;
3. runs pytest with :class:`GradingPlugin`, which appends one JSON line per event to the
   events file named in the config, and turns what went wrong into messages for the
   student.

Collecting and running in one process saves a Python start (numpy, difflab, pytest:
about a second of processor time on every grading); the student's code still runs only
in its own process, started after the list of tests is final.

The per-test time limit is enforced on every call into the student's process; the
parent watches this process too, with a margin, in case an instructor's test hangs.
"""

from __future__ import annotations

import errno
import json
import os
import re
import sys
import time
import types
from pathlib import Path
from typing import Any

import pytest

SUBMISSION_MODULE = "submission"
_MAX_MESSAGE = 4000


class _Events:
    """Append-only JSON-lines channel to the parent."""

    def __init__(self, path: str) -> None:
        self._fh = open(path, "a", encoding="utf-8")  # noqa: SIM115 (lives as long as the run)

    def send(self, event: str, **fields: Any) -> None:
        self._fh.write(json.dumps({"event": event, **fields}) + "\n")
        self._fh.flush()


class _CellMap:
    """Maps submission.py line numbers back to notebook cells (empty for .py files)."""

    def __init__(self, cells: list[list[int]] | None) -> None:
        self.cells = [tuple(c) for c in (cells or [])]

    def where(self, lineno: int) -> str:
        from difflab.grading.notebooks import locate

        return locate(self.cells, lineno)


def _student_frames(payload: dict[str, Any], cells: _CellMap) -> str:
    """The traceback lines of the student's own file, from a student's exception report."""
    lines = [
        f"  your code, {cells.where(lineno)}, in {name}" + (f": {code}" if code else "")
        for lineno, name, code in payload["frames"]
    ]
    return "Where it happened:\n" + "\n".join(lines) if lines else ""


def describe_student_error(payload: dict[str, Any], cells: _CellMap, memory_mb: int | None
                           ) -> tuple[str, str]:
    """``(reason, message)`` for an exception raised by the student's code during a test."""
    where = _student_frames(payload, cells)
    bases = payload["bases"] or [payload["type"]]
    if "NotImplementedError" in bases:
        frames = payload["frames"]
        name = f"`{frames[-1][1]}`" if frames else "a function this test calls"
        return "not_implemented", (
            f"Not implemented yet: {name} still raises NotImplementedError. "
            "Replace the `raise NotImplementedError()` stub with your solution."
        )
    if payload["missing"]:
        return "missing_name", missing_name_message(payload["missing"])
    if "MemoryError" in bases:
        limit = f" ({memory_mb} MB)" if memory_mb else ""
        return "memory", (
            f"Stopped by the memory limit{limit}: your code asked for more memory than "
            "the grader allows. Look for arrays that grow in a loop or shapes that are "
            "much larger than intended."
        )
    if payload["errno"] == errno.EFBIG:
        return "output", _flood_message()
    if "SystemExit" in bases:
        return "crash", (
            f"Your code called exit() or sys.exit() during this test (exit status "
            f"{payload['exit']}); return a value instead."
        )
    message = f"Your code raised {payload['type']}: {payload['text']}"
    return "error", message + ("\n" + where if where else "")


def _flood_message() -> str:
    from difflab.grading.sandbox import MAX_FILE_BYTES

    return (
        f"Your code printed (or wrote) more than the grader keeps ({MAX_FILE_BYTES // 2**20} "
        "MB), so it was stopped. Remove the print statements inside loops."
    )


def describe_exception(exc: BaseException, cells: _CellMap, memory_mb: int | None
                       ) -> tuple[str, str]:
    """Turn an exception raised in a test into ``(reason, message for the student)``.

    ``reason`` is a short machine-readable word (``failed``, ``error``,
    ``not_implemented``, ``missing_name``, ``memory``, ``timeout``, ``crash``, ...).
    """
    from difflab.grading.errors import GradingFailure
    from difflab.grading.sandbox import StudentError, StudentStopped

    if isinstance(exc, GradingFailure):
        reason, message = "failed", str(exc)
    elif isinstance(exc, StudentStopped):
        reason, message = exc.reason, exc.message
    elif isinstance(exc, StudentError):
        reason, message = describe_student_error(exc.payload, cells, memory_mb)
    elif isinstance(exc, AssertionError):
        reason, message = "failed", str(exc) or "An assertion in the test failed."
    else:
        reason = "error"
        message = f"The test stopped with {type(exc).__name__}: {exc}"
    return reason, message[:_MAX_MESSAGE]


def missing_name_message(name: str) -> str:
    """The message for a test that needs a name the submission does not define."""
    return (
        f"Your submission does not define `{name}`, which this test needs. Check the "
        "spelling and capitalisation of the name, and that the cell or file defining it "
        "is part of your submission."
    )


def describe_collect_error(text: str) -> str:
    """Explain why a test file could not even be loaded with this submission."""
    m = re.search(rf"cannot import name '(\w+)' from '{SUBMISSION_MODULE}'", text)
    if m:
        return missing_name_message(m[1])
    errors = [ln[1:].strip() for ln in text.splitlines() if ln.startswith("E ")]
    detail = errors[-1] if errors else text.strip().splitlines()[-1:]
    return f"The tests could not be loaded together with your submission: {detail}"


class GradingPlugin:
    """pytest plugin that reports each test to the parent through the events file.

    In mode ``run`` it also looks after the student's process: restarts it before a test
    if an earlier test stopped it, gives each test its time limit, and collects what the
    student's code printed during the test (once per test).
    """

    def __init__(self, events: _Events, mode: str, config: dict[str, Any],
                 sandbox: Any = None) -> None:
        self.events = events
        self.mode = mode
        self.sandbox = sandbox
        self.cells = _CellMap(config.get("cells"))
        self.memory_mb = config.get("memory_mb")
        self.timeout = float(config.get("timeout") or 0)
        self.output_log = config.get("output_log")
        self.visible_only = bool(config.get("visible_only"))
        self.select = config.get("select") or None
        self._failure: dict[str, tuple[str, str]] = {}
        self._out_start = 0
        #: Mode ``collect``: the node ids of the tests kept, and whether a file failed.
        self.kept: list[str] = []
        self.collect_failed = False

    # -- collection ---------------------------------------------------------------
    def pytest_configure(self, config: Any) -> None:
        from difflab.grading.markers import MARKER_HELP

        config.addinivalue_line("markers", MARKER_HELP)

    def pytest_collection_modifyitems(self, session: Any, config: Any, items: list) -> None:
        if self.mode != "collect":
            return
        from difflab.grading.markers import read_marker

        kept = []
        for item in items:
            meta = read_marker(item)
            if self.visible_only and meta.visibility != "visible":
                continue  # a self-check runs the tests a student may see, only
            if self.select and not (self.select in item.nodeid or self.select in meta.tags):
                continue
            kept.append(item)
            self.kept.append(item.nodeid)
            self.events.send("item", **meta.to_json())
        if len(kept) != len(items):
            config.hook.pytest_deselected(items=[i for i in items if i not in kept])
            items[:] = kept

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            self.collect_failed = True
            text = str(report.longrepr)
            self.events.send(
                "collect_error",
                nodeid=report.nodeid,
                message=describe_collect_error(text),
                detail=text[-_MAX_MESSAGE:],
            )

    # -- running --------------------------------------------------------------------
    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        self.events.send("start", nodeid=nodeid)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: Any) -> None:
        from difflab.grading.credit import begin_test
        from difflab.grading.markers import read_marker

        # a partial-credit test's source declares the checks that count (made or not)
        begin_test(getattr(item, "function", None) if read_marker(item).partial else None)
        if self.sandbox is None:
            return
        _empty(self.output_log)  # each test (and a restart's load) has its own budget
        if not self.sandbox.running:
            hello = self.sandbox.start()
            if not hello["loaded"]:
                from difflab.grading.sandbox import StudentStopped

                raise StudentStopped("import_error", import_error_message(
                    hello["error"], self.cells))
            _empty(self.output_log)
        self._out_start = _size(self.output_log)
        self.sandbox.deadline = time.monotonic() + self.timeout

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_teardown(self, item: Any) -> None:
        if self.sandbox is not None:
            self.sandbox.deadline = None
            self.sandbox.end_test()  # the test's objects and functions are its own

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_makereport(self, item: Any, call: Any) -> None:
        if call.excinfo is None or item.nodeid in self._failure:
            return
        exc = call.excinfo.value
        if isinstance(exc, pytest.skip.Exception):
            self._failure[item.nodeid] = ("skipped", f"Test skipped (no points): {exc}")
            return
        from difflab.grading.credit import stop_test

        stop_test(exc)  # what the test did not reach counts as missed, never as removed

        reason, message = describe_exception(exc, self.cells, self.memory_mb)
        if call.when != "call" and reason not in ("import_error", "timeout", "memory", "crash"):
            message = f"(during test {call.when}) {message}"
        self._failure[item.nodeid] = (reason, message)

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        from difflab.grading.context import take_leaderboard
        from difflab.grading.credit import end_test

        reason, message = self._failure.pop(nodeid, ("passed", ""))
        credit = end_test()
        failed_parts = credit.failures(
            lambda exc: describe_exception(exc, self.cells, self.memory_mb)[1])
        if failed_parts and reason in ("passed", "failed"):
            # failed sub-checks let the test go on; it fails at its end with each message
            extra = [] if reason == "passed" else [message]
            reason, message = "failed", "\n\n".join(failed_parts + extra)[:_MAX_MESSAGE]
        captured = ""
        if self.sandbox is not None:
            captured = _read_slice(self.output_log, self._out_start)
        self.events.send(
            "done",
            nodeid=nodeid,
            passed=reason == "passed",
            reason=reason,
            message=message,
            captured=captured,
            fraction=credit.fraction(),
            leaderboard=take_leaderboard(),
        )


def _empty(path: str | None) -> None:
    """Empty the student's output log: its size limit is then a budget of its own.

    The student's process writes with O_APPEND, so its next line goes to the new end.
    """
    if path:
        try:
            os.truncate(path, 0)
        except OSError:
            pass


def _size(path: str | None) -> int:
    try:
        return os.stat(path).st_size if path else 0
    except OSError:
        return 0


#: Bytes of a test's printed output read back (its start and its end).
_OUTPUT_HEAD, _OUTPUT_TAIL = 4000, 2000


def _read_slice(path: str | None, start: int) -> str:
    """What the student printed since ``start``: its beginning and end, never all of it."""
    end = _size(path)
    if not path or end <= start:
        return ""
    try:
        with open(path, "rb") as fh:
            fh.seek(start)
            if end - start <= _OUTPUT_HEAD + _OUTPUT_TAIL:
                data = fh.read(end - start)
                return data.decode("utf-8", errors="replace")
            head = fh.read(_OUTPUT_HEAD)
            fh.seek(end - _OUTPUT_TAIL)
            tail = fh.read(_OUTPUT_TAIL)
    except OSError:
        return ""
    cut = end - start - len(head) - len(tail)
    return (head.decode("utf-8", errors="replace")
            + f"\n... [{cut:,} bytes of output cut] ...\n"
            + tail.decode("utf-8", errors="replace"))


class _AnyMeta(type):
    """Class-level attribute access on a stand-in (``Legendre3.apply``) gives a stand-in."""

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Anything()


class _Anything(metaclass=_AnyMeta):
    """Accepts any construction, call or attribute access; can be subclassed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Anything()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _Anything()


def _stand_in_submission() -> types.ModuleType:
    """A module that claims to define every name, so tests can be collected unseen.

    Collection therefore never runs student code, and module-level uses of the
    submission in a test file (``class Mine(submission.Base)``, ``submission.f(1)``) do
    not break it.
    """
    module = types.ModuleType(SUBMISSION_MODULE)

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return type(name, (_Anything,), {})

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    return module


def import_error_message(payload: dict[str, Any], cells: _CellMap) -> str:
    """Explain, for the student, why their submission could not be imported."""
    kind = payload["type"]
    bases = payload["bases"] or [kind]
    if payload["syntax"] is not None:
        lineno, msg, code = payload["syntax"]
        detail = f"{kind} at {cells.where(lineno)}: {msg}" + (f"\n    {code}" if code else "")
    elif payload.get("errno") == errno.EFBIG:
        detail = _flood_message().replace("Your code printed", "While it was loaded, your "
                                          "code printed")
    elif "SystemExit" in bases:
        detail = "your code called exit() / sys.exit() while being loaded"
    else:
        detail = f"{kind}: {payload['text']}"
        frames = _student_frames(payload, cells)
        if frames:
            detail += "\n" + frames
    if "ModuleNotFoundError" in bases:
        detail += "\n(Only the packages the course uses are installed in the grader.)"
    return (
        "Your submission could not be loaded, so no test could run and every test scores 0.\n"
        f"{detail}\n"
        "Run your whole file or notebook from a fresh start (Kernel > Restart & Run All) "
        "to see the same error."
    )


def _start_student(events: _Events, config: dict[str, Any]) -> Any:
    """Start the student's process and load the submission; None if that failed."""
    from difflab.grading.context import use_student_process
    from difflab.grading.sandbox import Sandbox, StudentStopped
    from difflab.grading.sandbox_users import CPU_SHARE, CpuShare, SandboxUser, become_subreaper

    become_subreaper()
    user = SandboxUser(**config["user"]) if config.get("user") else None
    sandbox = Sandbox(
        Path(config["submission_file"]), config.get("cells"), Path(config["output_log"]),
        memory_mb=config.get("memory_mb"), cpu_seconds=config["cpu_seconds"],
        startup=config["startup"], timeout=config["timeout"], user=user,
        on_start=lambda pid: events.send("student", pid=pid),
        workroot=config.get("student_root"),
    )
    use_student_process(sandbox)  # student_environment() answers what it measured
    cells = _CellMap(config.get("cells"))

    def overused(cpus: float) -> None:
        sandbox.overused = (
            f"Your code kept {cpus:.1f} processes computing at once, more than the "
            f"{CPU_SHARE} each submission may use (processors are shared with other "
            "students), so it was stopped. Compute in one process: do not start processes "
            "or threads that run in parallel.")

    CpuShare(overused).start()  # one grading cannot take a classmate's processor
    try:
        hello = sandbox.start()
    except StudentStopped as exc:
        if exc.reason == "timeout":
            message = (
                f"Loading your submission took longer than {config['startup']:g} s, so no "
                "test could run and every test scores 0. Is there an infinite loop, input() "
                "call or long computation at the top level of your file?"
            )
        else:
            message = (
                "Your submission could not be loaded, so no test could run and every test "
                f"scores 0.\n{exc.message}"
            )
        events.send("import_error", message=message, reason=exc.reason)
        return None
    if not hello["loaded"]:
        from difflab.grading.sandbox import _clean_payload

        payload = _clean_payload(hello["error"])
        reason = "memory" if "MemoryError" in payload["bases"] else "import_error"
        events.send("import_error", message=import_error_message(payload, cells), reason=reason)
        sandbox.stop()
        return None
    cell_errors = [f"{str(e).split(':', 1)[0]}: {_flood_message()}" if "[Errno 27]" in str(e)
                   else str(e)[:500] for e in hello.get("cell_errors") or []][:50]
    events.send("ready", cell_errors=cell_errors)
    return sandbox


#: pytest plugins the grader does without: the cache writes files, and the report of
#: exceptions raised in ``__del__`` runs five full garbage collections at the end of
#: each pytest run (half a second of processor time with numpy and difflab loaded).
_PLUGINS_OFF = ("cacheprovider", "unraisableexception")


def _pytest_args(config: dict[str, Any], targets: list[str]) -> list[str]:
    off = [arg for name in _PLUGINS_OFF for arg in ("-p", f"no:{name}")]
    return [*targets, "-c", config["ini"], "--rootdir", config["workdir"], *off, "-q",
            "--tb=short"]


def collect(events: _Events, config: dict[str, Any]) -> list[str] | None:
    """List the tests with a stand-in submission: their node ids, or None if that failed.

    Sends an ``item`` event per test kept (``select``, ``visible_only``) and a
    ``collect_error`` per file that could not be loaded; on success, a ``collected``
    event, and the test modules are forgotten (removed from ``sys.modules``), so that
    running imports them again with the real submission.
    """
    sys.modules[SUBMISSION_MODULE] = _stand_in_submission()
    plugin = GradingPlugin(events, "collect", config)
    pytest.main([*_pytest_args(config, config["targets"]), "--collect-only"], plugins=[plugin])
    del sys.modules[SUBMISSION_MODULE]
    _forget_modules_under(Path(config["workdir"]))
    if plugin.collect_failed or not plugin.kept:
        return None
    events.send("collected", count=len(plugin.kept))
    return plugin.kept


def _forget_modules_under(folder: Path) -> None:
    """Remove from ``sys.modules`` the modules loaded from ``folder`` (tests, conftest)."""
    roots = (str(folder) + os.sep, os.path.realpath(folder) + os.sep)
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and file.startswith(roots):
            del sys.modules[name]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    config = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    os.chdir(config["workdir"])
    from difflab.grading.context import SEED_VARIABLE, use_student_process

    os.environ[SEED_VARIABLE] = str(int(config.get("seed") or 0))  # student_seed() reads it
    # no student process yet: student_environment() refuses to answer while collecting
    use_student_process(types.SimpleNamespace(environment=None))
    events = _Events(config["events"])
    targets = config["targets"]
    if config["mode"] == "grade":
        targets = collect(events, config)
        if targets is None:  # the parent explains what went wrong; no student code ran
            events.send("finished", exit_code=0)
            return 0
    from difflab.grading.sandbox import SubmissionProxy

    sandbox = _start_student(events, config)
    if sandbox is None:
        return 0
    sys.modules[SUBMISSION_MODULE] = SubmissionProxy(sandbox)
    plugin = GradingPlugin(events, "run", config, sandbox)
    try:
        code = pytest.main([*_pytest_args(config, targets), "--continue-on-collection-errors"],
                           plugins=[plugin])
    finally:
        sandbox.stop()
    events.send("finished", exit_code=int(code))
    return 0


if __name__ == "__main__":
    sys.exit(main())
