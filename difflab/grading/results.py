"""Gradescope's results format: building, writing, validating and summarising it.

Gradescope reads ``results.json`` with, at the top level, ``score``, ``execution_time``,
``output``, ``visibility`` and ``tests``; and for each test ``name``, ``number``,
``score``, ``max_score``, ``status`` (``"passed"``/``"failed"``), ``output``,
``visibility`` and ``tags``.  The JSON Schema transcribed from Gradescope's
documentation ships beside this module as ``gradescope_schema.json``.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from difflab.grading.markers import TestMeta

__all__ = [
    "TestOutcome",
    "build_results",
    "error_results",
    "write_results",
    "load_schema",
    "validate_results",
    "format_summary",
    "SCHEMA_PATH",
]

SCHEMA_PATH = Path(__file__).with_name("gradescope_schema.json")

#: Per-test output shown to the student is cut to this many characters.
MAX_TEST_OUTPUT = 3000


@dataclass
class TestOutcome:
    """The grader's verdict on one test."""

    __test__ = False

    meta: TestMeta
    number: str
    passed: bool = False
    reason: str = "not_run"
    message: str = "This test has not run (grading stopped before it)."
    captured: str = ""
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def score(self) -> float:
        return self.meta.max_score if self.passed else 0.0

    def output(self) -> str:
        parts = []
        if self.message:
            parts.append(self.message.strip())
        if self.captured.strip():
            parts.append("Your code printed:\n" + self.captured.strip())
        return truncate("\n\n".join(parts), MAX_TEST_OUTPUT)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.meta.name,
            "number": self.number,
            "score": self.score,
            "max_score": self.meta.max_score,
            "status": "passed" if self.passed else "failed",
            "output": self.output(),
            "visibility": self.meta.visibility,
            "tags": list(self.meta.tags),
            "extra_data": {"reason": self.reason, "nodeid": self.meta.nodeid, **self.extra},
        }


def truncate(text: str, limit: int) -> str:
    """Cut ``text`` to about ``limit`` characters, keeping its start and its end."""
    if len(text) <= limit:
        return text
    head = text[: limit * 2 // 3]
    tail = text[-(limit // 3) :]
    return f"{head}\n... [{len(text) - len(head) - len(tail)} characters cut] ...\n{tail}"


def build_results(
    outcomes: list[TestOutcome],
    *,
    execution_time: float,
    output: str = "",
    visibility: str = "visible",
) -> dict[str, Any]:
    """Assemble a Gradescope results dictionary from per-test outcomes.

    Parameters
    ----------
    outcomes : list of TestOutcome
        One per collected test, in the order to show them.
    execution_time : float
        Seconds the grading took.
    output : str, optional
        Text shown above the tests (it must not reveal hidden tests).
    visibility : str, optional
        Visibility of the whole result.

    Returns
    -------
    dict
        A dictionary that validates against ``gradescope_schema.json``.
    """
    return {
        "score": round(sum(o.score for o in outcomes), 6),
        "execution_time": round(execution_time, 3),
        "output": output,
        "visibility": visibility,
        "stdout_visibility": "hidden",
        "tests": [o.to_json() for o in outcomes],
    }


def error_results(message: str, *, execution_time: float = 0.0) -> dict[str, Any]:
    """Results for a grading that could not start: zero points and the reason."""
    return {
        "score": 0.0,
        "execution_time": round(execution_time, 3),
        "output": message,
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [],
    }


def write_results(results: dict[str, Any], path: str | Path) -> Path:
    """Write ``results`` as JSON atomically (a reader never sees half a file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".results-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=2)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def load_schema() -> dict[str, Any]:
    """The JSON Schema of Gradescope's results file."""
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def validate_results(results: dict[str, Any]) -> None:
    """Validate ``results`` against Gradescope's schema (needs ``jsonschema``).

    Raises
    ------
    jsonschema.ValidationError
        If the results do not follow the format.
    """
    import jsonschema

    jsonschema.validate(results, load_schema())


_STATUS = {
    "passed": "PASS",
    "timeout": "TIME",
    "memory": "MEM ",
    "crash": "CRSH",
    "import_error": "LOAD",
    "not_run": "SKIP",
}


def format_summary(results: dict[str, Any], *, title: str = "") -> str:
    """A readable table of a results dictionary, for the terminal (instructor view).

    Hidden tests are listed too and marked ``[hidden]``; this summary goes to the
    grader's stdout, which Gradescope shows to instructors only.
    """
    lines = [title] if title else []
    tests = results.get("tests", [])
    width = max((len(t["name"]) for t in tests), default=10)
    for t in tests:
        reason = t.get("extra_data", {}).get("reason", t["status"])
        status = _STATUS.get(reason, "FAIL" if t["status"] == "failed" else "PASS")
        hidden = " [hidden]" if t.get("visibility") not in (None, "visible") else ""
        first = next((ln for ln in t.get("output", "").splitlines() if ln.strip()), "")
        note = f"  {first[:100]}" if t["status"] == "failed" and first else ""
        line = f"  {status}  {t['score']:g}/{t['max_score']:g}  {t['name']:<{width}}{hidden}{note}"
        lines.append(line.rstrip())
    max_total = sum(t["max_score"] for t in tests)
    lines.append(
        f"Score: {results['score']:g}/{max_total:g}  "
        f"({len(tests)} tests, {results.get('execution_time', 0):.1f} s)"
    )
    if results.get("output"):
        lines.append(results["output"].rstrip())
    return "\n".join(lines)
