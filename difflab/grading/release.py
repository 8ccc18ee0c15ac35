"""The visible tests of an assignment, for the student release (``difflab assign``).

Students check their work before submitting (``difflab check``) with the tests they may
see; the hidden ones never leave the instructor's folder.  A test is hidden when its
``points`` marker says so (``hidden=True``, or a ``visibility`` other than
``"visible"``), or when it lies between ``### BEGIN HIDDEN TESTS`` and
``### END HIDDEN TESTS`` lines.  This module copies a tests folder without them:

* in each ``.py`` file, every hidden test function, class or method is cut out,
  decorators included, and every hidden-tests block; a file whose module-level
  ``pytestmark`` hides it is left out entirely.  Hidden tests are found by meaning, with
  Python's ``ast`` module (nothing is run): ``points`` under any alias, a hiding marker
  bound to a name (``secret = points(1, hidden=True)``), a class's ``pytestmark``, and
  a ``hidden`` or ``visibility`` whose value is computed (taken as hidden);
* other files are copied, except those whose name says ``hidden`` or ``solution``.

What the hidden tests share with visible ones (a helper, a constant at the top of the
file) stays in the release: put secrets inside the hidden-tests markers.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

from difflab.grading.errors import GradingInputError

__all__ = ["visible_tests", "strip_hidden_tests"]

BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
_LEFT_OUT = ("hidden", "solution")


class _Hiding:
    """What hides a test in one file, found by meaning rather than by spelling.

    A ``points`` marker hides unless its ``hidden`` is literally False and its
    ``visibility`` literally ``"visible"`` (a computed value, ``**options``: hidden, to be
    safe).  ``points`` is recognised under any name it was imported or assigned as
    (``from difflab.grading import points as p``, ``pytest.mark.points``), and so is a
    hiding marker bound to a name (``secret = points(1, hidden=True)``, then
    ``@secret``).
    """

    def __init__(self, tree: ast.Module) -> None:
        self.points_names = {"points"}
        self.hiding_names: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    if alias.name.split(".")[-1] == "points" and alias.asname:
                        self.points_names.add(alias.asname)
        for node in tree.body:  # module-level names, in order
            if isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
                if self._is_points(node.value):
                    self.points_names.update(names)
                elif self.hides(node.value):
                    self.hiding_names.update(names)

    def _is_points(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Name):
            return node.id in self.points_names
        return isinstance(node, ast.Attribute) and node.attr == "points"

    def hides(self, node: ast.expr) -> bool:
        """Whether a decorator (or a ``pytestmark`` value) hides what it marks."""
        if isinstance(node, (ast.List, ast.Tuple)):
            return any(self.hides(e) for e in node.elts)
        if isinstance(node, ast.Name):
            return node.id in self.hiding_names
        if not isinstance(node, ast.Call) or not self._is_points(node.func):
            return False
        for keyword in node.keywords:
            value = keyword.value
            constant = value.value if isinstance(value, ast.Constant) else ...
            if keyword.arg is None:  # **options: cannot tell, so hidden
                return True
            if keyword.arg == "hidden" and constant is not False:
                return True
            if keyword.arg == "visibility" and constant not in (None, "visible"):
                return True
        return False


def _pytestmark(node: ast.stmt) -> ast.expr | None:
    if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
        return node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and \
            node.target.id == "pytestmark":
        return node.value
    return None


def _hidden_spans(body: list[ast.stmt], hiding: _Hiding) -> list[tuple[int, int]]:
    """Line spans (1-based, inclusive) of the hidden tests in ``body``, classes searched."""
    spans = []
    for node in body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        first = min([d.lineno for d in node.decorator_list] + [node.lineno])
        hidden = any(hiding.hides(d) for d in node.decorator_list)
        if isinstance(node, ast.ClassDef) and not hidden:
            marks = [_pytestmark(n) for n in node.body]
            hidden = any(m is not None and hiding.hides(m) for m in marks)
            if not hidden:
                inner = _hidden_spans(node.body, hiding)  # hidden methods
                hidden = bool(inner) and all(  # nothing left of the class but its name
                    any(a <= n.lineno and n.end_lineno <= b for a, b in inner)
                    or (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
                    for n in node.body)
                if not hidden:
                    spans += inner
        if hidden:
            spans.append((first, node.end_lineno))
    return spans


def strip_hidden_tests(source: str, filename: str = "<tests>") -> str | None:
    """``source`` without its hidden tests; None when the whole file is hidden.

    Hidden tests are found with Python's ``ast`` (nothing is run): functions, classes
    and methods marked hidden (through any alias of ``points``), classes whose
    ``pytestmark`` hides them, and the lines between the hidden-tests markers.

    Raises
    ------
    GradingInputError
        When the file is not valid Python, or a hidden-tests block is not closed.

    Examples
    --------
    >>> print(strip_hidden_tests(
    ...     "from difflab.grading import points as p\\n"
    ...     "class TestA:\\n"
    ...     "    def test_seen(self): pass\\n"
    ...     "    @p(1, hidden=True)\\n"
    ...     "    def test_secret(self): pass\\n"), end="")
    from difflab.grading import points as p
    class TestA:
        def test_seen(self): pass
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
    hiding = _Hiding(tree)
    for node in tree.body:
        mark = _pytestmark(node)
        if mark is not None and hiding.hides(mark):
            return None
    for first, last in _hidden_spans(tree.body, hiding):
        drop.update(range(first - 1, last))
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
