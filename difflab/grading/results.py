"""Gradescope's results format: building, writing, validating and summarising it.

Gradescope reads ``results.json`` with, at the top level, ``score``, ``execution_time``,
``output``, ``visibility`` and ``tests``; and for each test ``name``, ``number``,
``score``, ``max_score``, ``status`` (``"passed"``/``"failed"``), ``output``,
``visibility`` and ``tags``.  The JSON Schema transcribed from Gradescope's
documentation ships beside this module as ``gradescope_schema.json``.
"""

from __future__ import annotations

import base64
import json
import os
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from difflab.grading.markers import TestMeta

__all__ = [
    "TestOutcome",
    "student_text",
    "secret_lines",
    "redact",
    "build_results",
    "error_results",
    "write_results",
    "load_schema",
    "validate_results",
    "format_summary",
    "status_mark",
    "SCHEMA_PATH",
]

SCHEMA_PATH = Path(__file__).with_name("gradescope_schema.json")

#: Per-test output shown to the student is cut to this many characters.
MAX_TEST_OUTPUT = 3000
#: What the student's code printed during one test, cut to this many characters.
MAX_CAPTURED = 1500
#: The text above the tests (notes for the whole submission), cut to this many characters.
MAX_SUMMARY = 4000
#: Lines of the instructor's files shorter than this are not treated as secrets
#: (``x = 1`` or ``return y`` would hide ordinary output).
MIN_SECRET = 12
#: Files in the tests folder whose lines are secrets.
SECRET_SUFFIXES = (".py", ".ipynb", ".txt", ".json", ".md", ".csv")
_HIDDEN = "[hidden: this text matches the instructor's tests or solution]"


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
    #: For a partial-credit test that failed: the share of its points earned.
    fraction: float | None = None

    @property
    def score(self) -> float:
        if self.passed:
            return self.meta.max_score
        if self.meta.partial and self.fraction is not None:
            return round(self.meta.max_score * min(max(self.fraction, 0.0), 1.0), 6)
        return 0.0

    def output(self, secrets: list[str] = ()) -> str:
        """The text the student sees for this test, cut and redacted."""
        parts = []
        if self.message:
            parts.append(self.message.strip())
        captured = student_text(self.captured, MAX_CAPTURED, secrets).strip()
        if captured:
            parts.append("Your code printed:\n" + captured)
        return student_text("\n\n".join(parts), MAX_TEST_OUTPUT, secrets)

    def to_json(self, secrets: list[str] = ()) -> dict[str, Any]:
        test = {
            "name": self.meta.name,
            "number": self.meta.number or self.number,
            "score": self.score,
            # Gradescope's extra credit: points that count in the score, not the maximum.
            "max_score": 0.0 if self.meta.extra_credit else self.meta.max_score,
            "status": "passed" if self.passed else "failed",
            "output": self.output(secrets),
            "visibility": self.meta.visibility,
            "tags": list(self.meta.tags),
            "extra_data": {"reason": self.reason, "nodeid": self.meta.nodeid, **self.extra},
        }
        if self.meta.output_format:
            test["output_format"] = self.meta.output_format
        if self.meta.extra_credit:
            test["extra_data"]["extra_credit"] = self.meta.max_score
        if self.meta.partial and not self.passed and self.fraction is not None:
            test["extra_data"]["fraction"] = round(self.fraction, 6)
        return test


def truncate(text: str, limit: int) -> str:
    """Cut ``text`` to about ``limit`` characters, keeping its start and its end."""
    if len(text) <= limit:
        return text
    head = text[: limit * 2 // 3]
    tail = text[-(limit // 3) :]
    return f"{head}\n... [{len(text) - len(head) - len(tail)} characters cut] ...\n{tail}"


def secret_lines(folder: str | Path, limit_files: int = 2000) -> list[str]:
    """Lines of the instructor's files that must never appear in student-visible output.

    Every line of at least :data:`MIN_SECRET` characters counts, comments included.
    """
    secrets: set[str] = set()
    count = 0
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
        for name in files:
            count += 1
            if count > limit_files or not name.endswith(SECRET_SUFFIXES):
                continue
            try:
                text = Path(root, name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            for line in text.splitlines():
                s = line.strip().strip('",').strip()
                if len(s) >= MIN_SECRET:
                    secrets.add(s)
    return sorted(secrets, key=len, reverse=True)


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _encodings(secret: str) -> list[str]:
    """The forms in which a line of a hidden file may come back: as is, reversed, in hex
    (either case) and in base64 (at each of the three alignments), all without spaces."""
    plain = _squeeze(secret)
    raw = secret.encode("utf-8")
    forms = [plain, plain[::-1], raw.hex(), raw.hex().upper()]
    for shift in range(3):
        chunk = raw[shift:]
        whole = len(chunk) // 3 * 3
        if whole >= 9:
            forms.append(base64.b64encode(chunk[:whole]).decode("ascii"))
    return forms


def redact(text: str, secrets: list[str]) -> str:
    """Hide what in ``text`` comes from the instructor's files.

    A line that contains a secret line as is becomes a notice.  When a secret appears
    only in another form (reversed, hex, base64, or split across lines: all compared
    without whitespace), the whole text becomes a notice.
    """
    if not text or not secrets:
        return text
    lines = text.splitlines()
    kept = ["[line hidden: it matches the instructor's test or solution code]"
            if any(s in line for s in secrets) else line for line in lines]
    squeezed = _squeeze("\n".join(kept))
    for secret in secrets:
        if any(form in squeezed for form in _encodings(secret)):
            return _HIDDEN
    return "\n".join(kept)


def student_text(text: str, limit: int, secrets: list[str] = ()) -> str:
    """The one way text reaches a student: cut to ``limit`` characters, then redacted.

    Cutting first keeps the cost of redaction bounded, whatever the student printed.
    """
    return redact(truncate(text or "", limit), list(secrets))


def build_results(
    outcomes: list[TestOutcome],
    *,
    execution_time: float,
    output: str = "",
    visibility: str = "visible",
    secrets: list[str] = (),
) -> dict[str, Any]:
    """Assemble a Gradescope results dictionary from per-test outcomes.

    Parameters
    ----------
    outcomes : list of TestOutcome
        One per collected test, in the order to show them.
    execution_time : float
        Seconds the grading took.
    output : str, optional
        Text shown above the tests.
    visibility : str, optional
        Visibility of the whole result.
    secrets : list of str, optional
        Lines of the instructor's files (:func:`secret_lines`): every text is passed
        through :func:`student_text` with them.

    Returns
    -------
    dict
        A dictionary that validates against ``gradescope_schema.json``.
    """
    return {
        "score": round(sum(o.score for o in outcomes), 6),
        "execution_time": round(execution_time, 3),
        "output": student_text(output, MAX_SUMMARY, secrets),
        "visibility": visibility,
        "stdout_visibility": "hidden",
        "tests": [o.to_json(secrets) for o in outcomes],
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
    """Write ``results`` as JSON atomically (a reader never sees half a file).

    The file is written beside ``path`` under a fresh name and renamed over it, so a
    link planted at ``path`` is replaced, never followed.  Something else in the way (a
    folder) is moved aside to ``path.in-the-way-<time>`` first.  The file is readable by
    its owner only (0600): it holds the student's marks and the hidden tests' output.

    Parameters
    ----------
    results : dict
        Gradescope's results.
    path : str or Path
        The JSON file to write.

    Returns
    -------
    Path
        The file written.

    Examples
    --------
    >>> import json, os, tempfile
    >>> from difflab.grading import write_results
    >>> path = write_results({"score": 2.0, "tests": []},
    ...                      os.path.join(tempfile.mkdtemp(), "results.json"))
    >>> json.loads(path.read_text())["score"], oct(path.stat().st_mode & 0o777)
    (2.0, '0o600')
    """
    return _write_private(json.dumps(results, indent=2) + "\n", path, ".json")


def _write_private(text: str, path: str | Path, suffix: str) -> Path:
    """``text`` to ``path`` atomically, never through a link, readable by its owner only
    (results, and the feedback files that quote them)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".results-", suffix=suffix, dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o600)
        if path.is_dir() and not path.is_symlink():
            path.rename(path.with_name(f"{path.name}.in-the-way-{time.time_ns()}"))
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

    Parameters
    ----------
    results : dict
        Gradescope's results.

    Returns
    -------
    None
        The results follow the format.

    Raises
    ------
    jsonschema.ValidationError
        If the results do not follow the format.

    Examples
    --------
    >>> from difflab.grading import validate_results
    >>> validate_results({"score": 1.0, "tests": [{"name": "t", "score": 1.0, "max_score": 1.0}]})
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


def status_mark(test: dict[str, Any]) -> str:
    """``PASS``, ``PART`` (failed with some points: partial credit) or ``FAIL``: one
    spelling for ``difflab grade``, ``difflab check`` and the feedback."""
    if test["status"] == "passed":
        return "PASS"
    return "PART" if test.get("score", 0) > 0 else "FAIL"


def format_summary(results: dict[str, Any], *, title: str = "") -> str:
    """A readable table of a results dictionary, for the terminal (instructor view).

    Hidden tests are listed too and marked ``[hidden]``; this summary goes to the
    grader's stdout, which Gradescope shows to instructors only.

    Parameters
    ----------
    results : dict
        Gradescope's results, as :func:`difflab.grading.grade` returns them.
    title : str, optional
        A line printed above the table.

    Returns
    -------
    str
        One line per test (PASS, PART or FAIL, points, name, message) and the score.

    Examples
    --------
    >>> from difflab.grading import format_summary
    >>> results = {"score": 1.5, "tests": [{"name": "test_a", "score": 1.5, "max_score": 2.0,
    ...                                      "status": "failed", "output": "off by one"}]}
    >>> print(format_summary(results))
      PART  1.5/2  test_a  off by one
    Score: 1.5/2  (1 tests, 0.0 s)
    """
    lines = [title] if title else []
    tests = results.get("tests", [])
    width = max((len(t["name"]) for t in tests), default=10)
    for t in tests:
        reason = t.get("extra_data", {}).get("reason", t["status"])
        status = status_mark(t) if reason in ("passed", "failed") else _STATUS.get(
            reason, status_mark(t))
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
