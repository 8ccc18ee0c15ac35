"""The visible tests of an assignment, for the student release (``difflab assign``).

Students check their work before submitting (``difflab check``) with the tests they may
see; the hidden ones never leave the instructor's folder.  A test is hidden when its
``points`` marker says so (``hidden=True``, or a ``visibility`` other than
``"visible"``), or when it lies between ``### BEGIN HIDDEN TESTS`` and
``### END HIDDEN TESTS`` lines.  This module copies a tests folder without them:

* in each ``.py`` file, every hidden test function or class is cut out, decorators
  included (found with Python's ``ast`` module, so nothing of it is run), and every hidden-tests
  block; a file whose module-level ``pytestmark`` hides it is left out entirely;
* other files are copied, except those whose name says ``hidden`` or ``solution``.

What the hidden tests share with visible ones (a helper, a constant at the top of the
file) stays in the release: put secrets inside the hidden-tests markers.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

from difflab.grading.errors import GradingInputError
from difflab.grading.markers import VISIBILITIES

__all__ = ["visible_tests", "strip_hidden_tests"]

BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
_LEFT_OUT = ("hidden", "solution")


def _hides(decorator: ast.expr) -> bool:
    """Whether a decorator (or a ``pytestmark`` value) is a ``points`` marker that hides."""
    if not isinstance(decorator, ast.Call):
        return False
    func = decorator.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name != "points":
        return False
    for keyword in decorator.keywords:
        value = keyword.value
        if keyword.arg == "hidden" and isinstance(value, ast.Constant) and value.value:
            return True
        if keyword.arg == "visibility" and isinstance(value, ast.Constant) and \
                value.value in VISIBILITIES and value.value != "visible":
            return True
    return False


def strip_hidden_tests(source: str, filename: str = "<tests>") -> str | None:
    """``source`` without its hidden tests; None when the whole file is hidden.

    Raises
    ------
    GradingInputError
        When the file is not valid Python, or a hidden-tests block is not closed.
    """
    lines = source.splitlines(keepends=True)
    drop: set[int] = set()  # 0-based line numbers
    start = None
    for i, line in enumerate(lines):
        text = line.strip()
        if text.startswith(BEGIN_HIDDEN):
            start = i
        elif text.startswith(END_HIDDEN) and start is not None:
            drop.update(range(start, i + 1))
            start = None
    if start is not None:
        raise GradingInputError(f"{filename}: '{BEGIN_HIDDEN}' at line {start + 1} is never "
                                f"closed by '{END_HIDDEN}'")
    try:
        tree = ast.parse(source, filename)
    except SyntaxError as exc:
        raise GradingInputError(f"{filename} is not valid Python (line {exc.lineno}): "
                                f"{exc.msg}") from None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            marks = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [
                node.value]
            if any(_hides(m) for m in marks):
                return None
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and any(
                _hides(d) for d in node.decorator_list):
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            drop.update(range(first - 1, node.end_lineno))
    kept = "".join(line for i, line in enumerate(lines) if i not in drop)
    try:
        ast.parse(kept, filename)
    except SyntaxError as exc:
        raise GradingInputError(
            f"{filename}: without its hidden tests the file is no longer valid Python "
            f"(line {exc.lineno}: {exc.msg}); put whole statements between the hidden-tests "
            "markers") from None
    return kept


def visible_tests(tests_dir: str | Path, out_dir: str | Path) -> list[Path]:
    """Copy ``tests_dir`` to ``out_dir`` without its hidden tests; the files written."""
    tests_dir, out_dir = Path(tests_dir), Path(out_dir)
    written = []
    for path in sorted(tests_dir.rglob("*")):
        relative = path.relative_to(tests_dir)
        if path.is_dir() or path.is_symlink() or any(
                part.startswith(".") or part == "__pycache__" for part in relative.parts):
            continue
        if any(word in path.name.lower() for word in _LEFT_OUT):
            continue
        target = out_dir / relative
        if path.suffix == ".py":
            kept = strip_hidden_tests(path.read_text(encoding="utf-8"), str(relative))
            if kept is None:
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(kept, encoding="utf-8")
        elif path.suffix != ".pyc":
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        else:
            continue
        written.append(target)
    return written
