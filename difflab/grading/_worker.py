"""The child side of ``difflab grade``: runs instructor tests against student code.

The parent (:mod:`difflab.grading.runner`) starts ``python -m difflab.grading._worker
CONFIG.json`` in a fresh process with its own session.  This module

1. caps the process's address space (``RLIMIT_AS``) so a memory bomb raises
   :class:`MemoryError` or kills only this process;
2. imports the submission (mode ``run``) or a stand-in for it (mode ``collect``, which
   lists the tests and their points without running any student code);
3. runs pytest with :class:`GradingPlugin`, which appends one JSON line per event to the
   events file named in the config.

The parent reads results from that events file only, never from this process's
stdout, which student code can write to freely.  The parent also enforces the wall-clock
limits: it sees a ``start`` event for every test and kills this process if a test
overruns.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
import traceback
import types
from contextlib import redirect_stderr, redirect_stdout
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


def _student_frames(tb: types.TracebackType | None, submission: str, cells: _CellMap) -> str:
    """Format only the traceback frames that are in the student's own file."""
    lines = []
    for frame in traceback.extract_tb(tb):
        if os.path.abspath(frame.filename) != submission:
            continue
        code = f": {frame.line.strip()}" if frame.line else ""
        lines.append(f"  your code, {cells.where(frame.lineno)}, in {frame.name}{code}")
    if not lines:
        return ""
    return "Where it happened:\n" + "\n".join(lines[-6:])


def describe_exception(
    exc: BaseException, submission: str, cells: _CellMap, memory_mb: int | None
) -> tuple[str, str]:
    """Turn an exception raised in a test into ``(reason, message for the student)``.

    ``reason`` is a short machine-readable word (``failed``, ``error``,
    ``not_implemented``, ``missing_name``, ``memory``).
    """
    from difflab.grading.errors import GradingFailure

    where = _student_frames(exc.__traceback__, submission, cells)
    if isinstance(exc, GradingFailure):
        reason, message = "failed", str(exc)
    elif isinstance(exc, NotImplementedError):
        frames = traceback.extract_tb(exc.__traceback__)
        mine = [f for f in frames if os.path.abspath(f.filename) == submission]
        name = f"`{mine[-1].name}`" if mine else "a function this test calls"
        reason = "not_implemented"
        message = (
            f"Not implemented yet: {name} still raises NotImplementedError. "
            "Replace the `raise NotImplementedError()` stub with your solution."
        )
    elif isinstance(exc, MemoryError):
        limit = f" ({memory_mb} MB)" if memory_mb else ""
        reason = "memory"
        message = (
            f"Stopped by the memory limit{limit}: your code asked for more memory than "
            "the grader allows. Look for arrays that grow in a loop or shapes that are "
            "much larger than intended."
        )
    elif isinstance(exc, AttributeError) and re.search(
        rf"module '{SUBMISSION_MODULE}' has no attribute '(\w+)'", str(exc)
    ):
        name = re.search(r"has no attribute '(\w+)'", str(exc))[1]  # type: ignore[index]
        reason = "missing_name"
        message = missing_name_message(name)
        where = ""
    elif isinstance(exc, AssertionError):
        reason, message = "failed", str(exc) or "An assertion in the test failed."
    elif where:
        reason = "error"
        message = f"Your code raised {type(exc).__name__}: {exc}"
    else:
        reason = "error"
        message = f"The test stopped with {type(exc).__name__}: {exc}"
    if where:
        message += "\n" + where
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
    """pytest plugin that reports each test to the parent through the events file."""

    def __init__(self, events: _Events, mode: str, config: dict[str, Any]) -> None:
        self.events = events
        self.mode = mode
        self.submission = os.path.abspath(config.get("submission_file", ""))
        self.cells = _CellMap(config.get("cells"))
        self.memory_mb = config.get("memory_mb")
        self._failure: dict[str, tuple[str, str]] = {}
        self._out: dict[str, list[str]] = {}

    # -- collection ---------------------------------------------------------------
    def pytest_configure(self, config: Any) -> None:
        from difflab.grading.markers import MARKER_HELP

        config.addinivalue_line("markers", MARKER_HELP)

    def pytest_collection_modifyitems(self, session: Any, config: Any, items: list) -> None:
        if self.mode != "collect":
            return
        from difflab.grading.markers import read_marker

        for item in items:
            self.events.send("item", **read_marker(item).to_json())

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            text = str(report.longrepr)
            self.events.send(
                "collect_error",
                nodeid=report.nodeid,
                message=describe_collect_error(text),
                detail=text[-_MAX_MESSAGE:],
            )

    # -- running --------------------------------------------------------------------
    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        self._out[nodeid] = []
        self.events.send("start", nodeid=nodeid)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_makereport(self, item: Any, call: Any) -> None:
        if call.excinfo is None or item.nodeid in self._failure:
            return
        exc = call.excinfo.value
        if isinstance(exc, MemoryError):
            # The frames of the failed call still hold what was allocated: free it now,
            # before pytest needs memory to build its report.
            traceback.clear_frames(exc.__traceback__)
        if isinstance(exc, pytest.skip.Exception):
            self._failure[item.nodeid] = ("skipped", f"Test skipped (no points): {exc}")
            return
        reason, message = describe_exception(exc, self.submission, self.cells, self.memory_mb)
        if call.when != "call":
            message = f"(during test {call.when}) {message}"
        self._failure[item.nodeid] = (reason, message)

    def pytest_runtest_logreport(self, report: Any) -> None:
        out = self._out.setdefault(report.nodeid, [])
        for label, text in (("stdout", report.capstdout), ("stderr", report.capstderr)):
            if text:
                out.append(f"[{label} during {report.when}]\n{text}")

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        reason, message = self._failure.pop(nodeid, ("passed", ""))
        self.events.send(
            "done",
            nodeid=nodeid,
            passed=reason == "passed",
            reason=reason,
            message=message,
            captured="\n".join(self._out.pop(nodeid, [])),
        )


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


def _limit_memory(memory_mb: int | None) -> None:
    if not memory_mb:
        return
    try:
        import resource
    except ImportError:  # not on POSIX: no memory limit
        return
    limit = int(memory_mb) * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _import_submission(events: _Events, config: dict[str, Any]) -> list[str] | None:
    """Import the student's module; None if that failed (and was reported)."""
    sys.path.insert(0, config["workdir"])
    buffer = io.StringIO()
    cells = _CellMap(config.get("cells"))
    try:
        with redirect_stdout(buffer), redirect_stderr(buffer):
            if cells.cells:
                return _run_notebook_cells(config["submission_file"], cells)
            __import__(SUBMISSION_MODULE)
    except BaseException as exc:  # noqa: BLE001 -- any failure here is the student's
        events.send(
            "import_error",
            message=import_error_message(exc, config["submission_file"], cells),
            reason="memory" if isinstance(exc, MemoryError) else "import_error",
        )
        return None
    return []


def _run_notebook_cells(path: str, cells: _CellMap) -> list[str]:
    """Run a notebook's cells one by one in a module; a failing cell does not stop the rest.

    Each cell is compiled with the module's file name and its own line numbers, so
    tracebacks point into ``submission.py`` and map back to cells.
    """
    module = types.ModuleType(SUBMISSION_MODULE)
    module.__file__ = path
    sys.modules[SUBMISSION_MODULE] = module
    lines = Path(path).read_text(encoding="utf-8").splitlines(keepends=True)
    errors = []
    for start, end, cell in cells.cells:
        code = "\n" * (start - 1) + "".join(lines[start - 1 : end])
        try:
            exec(compile(code, path, "exec"), module.__dict__)  # noqa: S102
        except (Exception, SystemExit) as exc:
            errors.append(f"cell {cell}: {_one_line(exc, path, cells)}")
    return errors


def _one_line(exc: BaseException, path: str, cells: _CellMap) -> str:
    if isinstance(exc, SyntaxError):
        return f"SyntaxError at {cells.where(exc.lineno or 0)}: {exc.msg}"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
    where = f" (at {cells.where(frames[-1].lineno)})" if frames else ""
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return f"{text}{where}"


def import_error_message(exc: BaseException, submission_file: str, cells: _CellMap) -> str:
    """Explain, for the student, why their submission could not be imported."""
    kind = type(exc).__name__
    if isinstance(exc, SyntaxError):
        where = cells.where(exc.lineno or 0)
        code = (exc.text or "").rstrip()
        detail = f"{kind} at {where}: {exc.msg}" + (f"\n    {code.strip()}" if code else "")
    elif isinstance(exc, SystemExit):
        detail = "your code called exit() / sys.exit() while being loaded"
    else:
        detail = f"{kind}: {exc}"
        frames = _student_frames(exc.__traceback__, os.path.abspath(submission_file), cells)
        if frames:
            detail += "\n" + frames
    if isinstance(exc, ModuleNotFoundError):
        detail += "\n(Only the packages the course uses are installed in the grader.)"
    return (
        "Your submission could not be loaded, so no test could run and every test scores 0.\n"
        f"{detail}\n"
        "Run your whole file or notebook from a fresh start (Kernel > Restart & Run All) "
        "to see the same error."
    )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    config = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    _limit_memory(config.get("memory_mb"))
    os.chdir(config["workdir"])
    events = _Events(config["events"])
    mode = config["mode"]
    if mode == "collect":
        sys.modules[SUBMISSION_MODULE] = _stand_in_submission()
        events.send("ready", cell_errors=[])
    else:
        cell_errors = _import_submission(events, config)
        if cell_errors is None:
            return 0
        events.send("ready", cell_errors=cell_errors)

    args = [
        *config["targets"],
        "-c",
        config["ini"],
        "--rootdir",
        config["workdir"],
        "-p",
        "no:cacheprovider",
        "-q",
        "--tb=short",
    ]
    if mode == "collect":
        args.append("--collect-only")
    else:
        args.append("--continue-on-collection-errors")
    plugin = GradingPlugin(events, mode, config)
    code = pytest.main(args, plugins=[plugin])
    events.send("finished", exit_code=int(code))
    return 0


if __name__ == "__main__":
    sys.exit(main())
