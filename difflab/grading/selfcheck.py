"""Students check their work before submitting: ``difflab check`` and ``check("q1")``.

Both run the *visible* tests of the student release (``difflab assign`` writes them to
``student/tests/``) against the student's notebook or file, with the grader itself
(:func:`~difflab.grading.runner.grade`): the same sandbox, the same teaching messages.
Hidden tests are not in the release, and tests marked hidden are skipped even when an
instructor's folder is given.

In a notebook::

    from difflab.grading import check
    check("q1")          # the tests whose file, name or tag mentions q1

checks what the kernel has run so far: the code of the cells executed, in order (a
cell that raised is kept, as in the notebook), not the file on disk, which may be
older.  The report shows once under the cell.  Outside a notebook,
``check(notebook="hw1.ipynb")`` checks a file.  When the grader runs the notebook
headless (``difflab grade``, ``difflab check``), ``check(...)`` cells do nothing: the
grading is the check.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from difflab.grading.errors import GradingInputError

__all__ = ["check", "CheckReport", "format_check"]

#: Per-test time limit of a self-check, in seconds.
CHECK_TIMEOUT = 30.0


@dataclass
class CheckReport:
    """The outcome of a self-check: the results and their summary for the student."""

    results: dict[str, Any]
    #: Whether the report was printed already (a notebook then does not show it again).
    shown: bool = False

    @property
    def passed(self) -> bool:
        return all(t["status"] == "passed" for t in self.results["tests"])

    def __str__(self) -> str:
        return format_check(self.results)

    def _ipython_display_(self) -> None:
        """Jupyter shows a returned report once: not again when ``check`` printed it."""
        if not self.shown:
            print(self)
            self.shown = True


def format_check(results: dict[str, Any]) -> str:
    """What the student sees: each test, passed or not, with the teaching message."""
    from difflab.grading.results import status_mark

    lines = []
    said: set[str] = set()  # a message shared by many tests (a load error) is said once
    for test in results["tests"]:
        lines.append(f"{status_mark(test)}  {test['name']}  "
                     f"({test['score']:g}/{test['max_score']:g})")
        output = (test.get("output") or "").strip()
        if test["status"] != "passed" and output:
            if output in said:
                lines.append("      (the same message as above)")
            else:
                said.add(output)
                lines += ["      " + ln for ln in output.splitlines()]
    passed = sum(t["status"] == "passed" for t in results["tests"])
    lines.append(f"{passed} of {len(results['tests'])} visible tests passed.")
    note = (results.get("output") or "").strip()
    if note and not any(note in text for text in said):
        lines.append(note)
    lines.append("(These are the visible tests; the grader may run more.)")
    return "\n".join(lines)


def _find_tests(near: Path | None, tests: str | Path | None) -> Path:
    if tests is not None:
        return Path(tests)
    folder = near if near is not None else Path.cwd()  # beside the work, nowhere else
    if (folder / "tests").is_dir():
        return folder / "tests"
    raise GradingInputError(
        "no tests folder found next to your work: pass tests=... (or --tests) with the "
        "folder of the visible tests (tests/ of the student release)")


def _own_tests(work: Path, tests_dir: Path) -> str | None:
    """The work's own tests in a folder shared by several notebooks: its name, when a
    test file or folder is named after it (``tests/test_hw1.py``, ``tests/hw1/``)."""
    for path in tests_dir.rglob("*.py"):
        if work.stem in path.relative_to(tests_dir).as_posix():
            return work.stem
    return None


def _kernel_cells() -> list[str] | None:
    """The code the running IPython kernel has executed, cell by cell (None: no kernel)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    if shell is None:
        return None
    cells = []
    for code in shell.user_ns.get("In", [])[1:]:
        if re.search(r"\bcheck\s*\(", code):  # the self-check cells themselves
            continue
        lines = [ln for ln in code.splitlines() if not ln.lstrip().startswith(("%", "!"))]
        cells.append("\n".join(lines))
    return cells


def _notebook_from(cells: list[str], folder: Path) -> Path:
    notebook = {
        "nbformat": 4, "nbformat_minor": 5, "metadata": {},
        "cells": [{"cell_type": "code", "metadata": {}, "execution_count": None,
                   "outputs": [], "source": code, "id": f"cell-{i}"}
                  for i, code in enumerate(cells)],
    }
    path = folder / "kernel.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    return path


def _in_headless_grading() -> bool:
    """Whether this is the student's process of a grading (the notebook run headless)."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return getattr(spec, "name", None) == "difflab.grading._student"


def check(question: str | None = None, *, notebook: str | Path | None = None,
          tests: str | Path | None = None, timeout: float = CHECK_TIMEOUT,
          show: bool = True) -> CheckReport | None:
    """Run the visible tests (of ``question``, or all) against the student's work.

    Parameters
    ----------
    question : str, optional
        Only the tests whose file, name or tag contains it (``"q1"``).  When omitted:
        the tests named after the file checked (``test_hw1.py`` or a folder ``hw1/``
        for ``hw1.ipynb``) if the folder has some, else all.
    notebook : str or Path, optional
        The ``.ipynb`` or ``.py`` to check.  Default: in a notebook, the cells the
        kernel has run.
    tests : str or Path, optional
        The visible tests folder (default: ``tests/`` beside the file checked; in a
        notebook, in the current folder).
    timeout : float, optional
        Seconds each test may run.
    show : bool, optional
        Print the report (a notebook shows it under the cell).

    Returns
    -------
    CheckReport or None
        ``.passed``, ``.results`` (Gradescope's format) and the printed text; None
        when the notebook is being graded headless (the check cells do nothing there).

    Raises
    ------
    GradingInputError
        When there is nothing to check or no tests folder.

    See Also
    --------
    grade : the grader it runs (with the visible tests only).

    Examples
    --------
    Outside a notebook, a student checks a file (in a notebook, ``check("q1")`` checks
    the cells run so far); it takes a few seconds, as a grading does:

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
    >>> from difflab.grading import check
    >>> report = check(notebook=hw / "hw1.py", show=False)   # tests/ beside the file
    >>> report.passed
    False
    >>> print(report)                                 # doctest: +ELLIPSIS
    PASS  test_hw1.py::test_add  (2/2)
    FAIL  test_hw1.py::test_add_negative  (0/1)
          assert 0 == -5
    ...
    1 of 2 visible tests passed.
    (These are the visible tests; the grader may run more.)
    >>> tmp.cleanup()
    """
    from difflab.grading.runner import grade

    if notebook is None and _in_headless_grading():
        return None
    with tempfile.TemporaryDirectory(prefix="difflab-check-") as tmp:
        if notebook is not None:
            work = Path(notebook)
            tests_dir = _find_tests(work.parent, tests)
            if question is None:
                question = _own_tests(work, tests_dir)
        else:
            cells = _kernel_cells()
            if cells is None:
                raise GradingInputError(
                    "check() outside a notebook needs notebook=... (the file to check)")
            work = _notebook_from(cells, Path(tmp))
            tests_dir = _find_tests(None, tests)
        results = grade(work, tests_dir, timeout=timeout, total_timeout=max(120.0, timeout),
                        select=question, visible_only=True)
    report = CheckReport(results)
    if show:
        print(report)
        report.shown = True
    return report
