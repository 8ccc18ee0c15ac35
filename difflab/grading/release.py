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

Hidden-tests blocks may also sit in the assignment itself (the notebook or ``.py`` file
students receive), as nbgrader's autograder-test cells have them::

    ### BEGIN HIDDEN TESTS (2 points)
    assert dual_sin(0.0, 1.0) == (0.0, 1.0)
    ### END HIDDEN TESTS

The student version drops them; :func:`source_block_tests` turns each into a hidden test
of its own (worth the points its BEGIN line names, 1 by default), which
``difflab assign`` writes to the instructor's ``tests/`` and the grader adds when it is
given the assignment folder (:func:`tests_of`).  The block runs in the grader's trusted process:
the names it uses come from the student's submission (as ``submission.name`` would),
Python's built-in names excepted, so ``dual_sin(0.0, 1.0)`` calls the student's function
in the student's process and the comparison happens on the grader's side.
"""

from __future__ import annotations

import ast
import builtins
import json
import re
import shutil
import textwrap
from pathlib import Path
from typing import Any

from difflab.grading.errors import GradingInputError
from difflab.grading.markers import BEGIN_HIDDEN, END_HIDDEN, hidden_blocks

__all__ = ["visible_tests", "strip_hidden_tests", "assignment_files", "release_files",
           "source_block_tests", "run_hidden_block", "tests_of"]

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
        if not isinstance(node, ast.Call):
            return False
        if isinstance(node.func, ast.Name) and node.func.id in self.hiding_names:
            return True  # hide = partial(points, hidden=True), then @hide(1)
        if not (self._is_points(node.func) or any(self._is_points(a) for a in node.args)):
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
        if isinstance(node, (ast.If, ast.Try, ast.With)):  # tests defined in a block
            blocks = [node.body, getattr(node, "orelse", []), getattr(node, "finalbody", [])]
            blocks += [handler.body for handler in getattr(node, "handlers", [])]
            for block in blocks:
                spans += _hidden_spans(block, hiding)
            continue
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
    r"""Copy ``tests_dir`` to ``out_dir`` without its hidden tests; the files written.

    Parameters
    ----------
    tests_dir : str or Path
        The instructor's tests.
    out_dir : str or Path
        Where the students' copy goes.

    Returns
    -------
    list of Path
        The files written (tests marked ``hidden=True`` and hidden-test blocks removed).

    Examples
    --------
    >>> import os, tempfile
    >>> from pathlib import Path
    >>> from difflab.grading import visible_tests
    >>> tests = Path(tempfile.mkdtemp(), "tests")
    >>> tests.mkdir()
    >>> _ = (tests / "test_a.py").write_text(
    ...     "from difflab.grading import points\n\n"
    ...     "@points(1)\ndef test_shown():\n    pass\n\n"
    ...     "@points(1, hidden=True)\ndef test_secret():\n    pass\n")
    >>> [written] = visible_tests(tests, tests.parent / "release")
    >>> "test_shown" in written.read_text(), "test_secret" in written.read_text()
    (True, False)
    """
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


def assignment_files(folder: str | Path) -> list[Path]:
    """The notebooks and ``.py`` files of an assignment folder (not tests, not hidden files)."""
    return [p for p in sorted(Path(folder).iterdir())
            if p.suffix in (".ipynb", ".py") and p.is_file()
            and not p.name.startswith(("test_", "."))]


#: The file that lists what an assignment folder releases to students, one path a line.
MANIFEST = "manifest.txt"
_SOURCE_MARKER = re.compile(r"^\s*(?:#+\s*)?BEGIN\s+(SOLUTION|HIDDEN TESTS)\b", re.MULTILINE)


def _has_markers(path: Path) -> bool:
    """Whether an assignment file fences a solution or hidden tests (it is a source)."""
    if path.suffix == ".ipynb":
        from difflab.grading.notebooks import read_notebook

        return any(_SOURCE_MARKER.search(cell.source) for cell in read_notebook(path).cells)
    return bool(_SOURCE_MARKER.search(path.read_text(encoding="utf-8", errors="replace")))


def _manifest_entries(folder: Path) -> list[str]:
    """The lines of the folder's manifest: paths or glob patterns, comments left out."""
    lines = (folder / MANIFEST).read_text(encoding="utf-8").splitlines()
    return [line.split("#", 1)[0].strip() for line in lines
            if line.split("#", 1)[0].strip()]


def release_files(folder: str | Path) -> tuple[list[Path], list[Path], list[Path]]:
    r"""What the student release of an assignment folder holds, and what it leaves out.

    With a ``manifest.txt`` in the folder, exactly the files it lists (paths relative to
    the folder, one a line, ``*`` patterns allowed, ``#`` comments) are released:
    notebooks and ``.py`` files as their student versions, other files (data, images)
    as they are.  Without one, the sources are released: the notebooks and ``.py``
    files that fence a solution or hidden tests (or the only one there is), never a file
    whose name says ``solution`` or ``hidden``.  The ``tests/`` folder is not listed: its
    visible tests are released by :func:`visible_tests`.

    Parameters
    ----------
    folder : str or Path
        The assignment folder.

    Returns
    -------
    sources, others, left_out : list of Path
        The notebooks and ``.py`` files to release as student versions, the other files
        to copy, and the files of the folder (outside ``tests/``) that stay behind.

    Raises
    ------
    GradingInputError
        When a manifest line matches no file, names a file outside the folder, in
        ``tests/``, hidden (``.name``), or that is not a regular file (a link, a folder).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "hw.py").write_text("def f():\n    ### BEGIN SOLUTION\n"
    ...                                   "    return 1\n    ### END SOLUTION\n")
    >>> _ = (folder / "solution.py").write_text("def f():\n    return 1\n")
    >>> [[p.name for p in part] for part in release_files(folder)]
    [['hw.py'], [], ['solution.py']]
    >>> _ = (folder / "manifest.txt").write_text("hw.py\n")
    >>> [[p.name for p in part] for part in release_files(folder)]
    [['hw.py'], [], ['solution.py']]
    """
    folder = Path(folder)
    everything = [p for p in sorted(folder.rglob("*"))
                  if not p.is_dir() and p.name != MANIFEST
                  and p.relative_to(folder).parts[0] != "tests"
                  and not any(part.startswith(".") or part == "__pycache__"
                              for part in p.relative_to(folder).parts)]
    if (folder / MANIFEST).is_file():
        chosen = _manifest_files(folder)
    else:
        candidates = [p for p in assignment_files(folder)
                      if not any(word in p.name.lower() for word in _LEFT_OUT)]
        chosen = [p for p in candidates if _has_markers(p)]
        if not chosen and len(assignment_files(folder)) == 1:
            chosen = candidates
    sources = [p for p in chosen if p.suffix in (".ipynb", ".py")]
    others = [p for p in chosen if p not in sources]
    return sources, others, [p for p in everything if p not in chosen]


def _manifest_files(folder: Path) -> list[Path]:
    chosen: list[Path] = []
    root = folder.resolve()
    for entry in _manifest_entries(folder):
        where = f"{folder / MANIFEST}: '{entry}'"
        parts = Path(entry).parts
        if Path(entry).is_absolute() or ".." in parts:
            raise GradingInputError(f"{where} is outside the assignment folder; list paths "
                                    "relative to it")
        if parts and parts[0] == "tests":
            raise GradingInputError(f"{where}: the tests are released without their hidden "
                                    "ones on their own; leave tests/ out of the manifest")
        matched = sorted(folder.glob(entry))
        if any(c in entry for c in "*?["):  # a pattern: the files it matches, as listed
            matched = [m for m in matched if m.name != MANIFEST and (
                m.is_symlink() or m.is_file()) and not any(
                part.startswith(".") or part in ("tests", "__pycache__")
                for part in m.relative_to(folder).parts)]
        if not matched:
            raise GradingInputError(f"{where} matches no file of the assignment")
        for path in matched:
            relative = path.relative_to(folder)
            if any(part.startswith(".") for part in relative.parts):
                raise GradingInputError(f"{where}: {relative} is a hidden file; rename it "
                                        "to release it")
            if path.is_symlink() or not path.is_file() or \
                    not path.resolve().is_relative_to(root):
                raise GradingInputError(f"{where}: {relative} is not a regular file of the "
                                        "folder (a link or a folder); list files")
            if path not in chosen:
                chosen.append(path)
    return chosen


_BLOCK_POINTS = re.compile(r"\(?\s*(\d+(?:\.\d+)?)\s*points?\b")
#: Prefix of the test files made from an assignment's hidden-tests blocks.
BLOCK_TESTS_PREFIX = "test_hidden_blocks_"


def _source_blocks(path: Path) -> list[tuple[str, str, float]]:
    """``(where, code, points)`` of each hidden-tests block of a notebook or ``.py`` file."""
    if path.suffix == ".ipynb":
        from difflab.grading.notebooks import read_notebook

        pieces = [(f"{path.name}, cell {n}", cell.source)
                  for n, cell in enumerate(read_notebook(path).cells, start=1)
                  if cell.cell_type == "code"]
    else:
        pieces = [(path.name, path.read_text(encoding="utf-8"))]
    imports = _imports([strip_code(source) for _, source in pieces])
    blocks = []
    for where, source in pieces:
        lines = source.splitlines()
        for first, last in hidden_blocks(source):
            if last == len(lines) and not lines[last - 1].strip().startswith(END_HIDDEN):
                raise GradingInputError(f"{where}, line {first}: '{BEGIN_HIDDEN}' is never "
                                        f"closed by '{END_HIDDEN}'")
            found = _BLOCK_POINTS.search(lines[first - 1].strip()[len(BEGIN_HIDDEN):])
            code = textwrap.dedent("\n".join(lines[first:last - 1]))
            label = where if path.suffix == ".ipynb" else f"{where}, line {first}"
            try:
                ast.parse(code, label)
            except SyntaxError as exc:
                raise GradingInputError(
                    f"{label}: the hidden-tests block is not valid Python on its own "
                    f"(line {exc.lineno}: {exc.msg}); put whole statements between the "
                    "markers") from None
            blocks.append((label, imports + code, float(found[1]) if found else 1.0))
    return blocks


def strip_code(source: str) -> str:
    """Python source without its solutions and hidden blocks (what students are given)."""
    from difflab.grading.notebooks import strip_solutions

    try:
        return strip_solutions(source, student=True)
    except GradingInputError:
        return ""


def _imports(sources: list[str]) -> str:
    """The top-level imports of the assignment's code (``import numpy as np``): a block
    gets them in the grader's process, so ``np`` there is numpy, not the student's."""
    found: list[str] = []
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)) and not (
                    isinstance(node, ast.ImportFrom) and (node.level or node.module in (
                        None, "submission", "__future__"))):
                line = ast.get_source_segment(source, node)
                if line and line not in found:
                    found.append(line)
    return "".join(line + "\n" for line in found)


def source_block_tests(assignment: str | Path) -> dict[str, str]:
    r"""Test files made from the hidden-tests blocks of an assignment's notebooks and files.

    Parameters
    ----------
    assignment : str or Path
        An assignment folder (its notebooks and ``.py`` files are read) or one file.

    Returns
    -------
    dict
        ``{file name: test source}``, one ``test_hidden_blocks_<stem>.py`` per file
        that has blocks; each block is one test marked ``points(n, hidden=True)``.

    Raises
    ------
    GradingInputError
        When a block is not closed or is not valid Python on its own.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "hw.py").write_text(
    ...     "def f(x):\n    return 2 * x\n"
    ...     "### BEGIN HIDDEN TESTS (2 points)\nassert f(3) == 6\n### END HIDDEN TESTS\n")
    >>> print("\n".join(source_block_tests(folder)["test_hidden_blocks_hw.py"].splitlines()[5:])
    ... )
    @points(2, hidden=True, name='hw.py, line 3 (hidden tests)')
    def test_block_1():
        code = [
            "assert f(3) == 6",
        ]
        run_hidden_block('\n'.join(code), 'hw.py, line 3')
    """
    assignment = Path(assignment)
    files = assignment_files(assignment) if assignment.is_dir() else [assignment]
    tests = {}
    for path in files:
        blocks = _source_blocks(path)
        if not blocks:
            continue
        lines = [f'"""The hidden-tests blocks of {path.name}, made by difflab assign."""',
                 "from difflab.grading import points",
                 "from difflab.grading.release import run_hidden_block", ""]
        for number, (where, code, value) in enumerate(blocks, start=1):
            # one line of the block per line of the file, so the grader's redaction
            # knows each of them (it hides lines of the tests from what students see)
            lines += ["", f"@points({value:g}, hidden=True, name={where + ' (hidden tests)'!r})",
                      f"def test_block_{number}():", "    code = [",
                      *(f"        {json.dumps(line)}," for line in code.splitlines()),
                      "    ]", f"    run_hidden_block('\\n'.join(code), {where!r})", ""]
        tests[f"{BLOCK_TESTS_PREFIX}{path.stem}.py"] = "\n".join(lines[:-1]) + "\n"
    return tests


def tests_of(folder: str | Path) -> tuple[Path, dict[str, str]]:
    """The tests folder to grade with, and the tests made from hidden-tests blocks.

    ``folder`` is a tests folder, or an assignment folder that holds ``tests/`` beside
    its notebooks and files: then its sources' hidden-tests blocks are tests too
    (:func:`source_block_tests`), as in the instructor release.

    Raises
    ------
    GradingInputError
        For the ``tests/`` of an assignment whose sources have hidden-tests blocks that
        it does not hold: grading with it would silently leave them out.
    """
    folder = Path(folder)
    if (folder / "tests").is_dir() and folder.is_dir() and assignment_files(folder):
        return folder / "tests", source_block_tests(folder)
    parent = folder.resolve().parent
    if folder.is_dir() and folder.resolve().name == "tests" and assignment_files(parent):
        missing = [name for name in _blocks_beside(parent) if not (folder / name).exists()]
        if missing:
            raise GradingInputError(
                f"the assignment's sources in {parent} have hidden-tests blocks that "
                f"{folder} does not hold ({', '.join(missing)}): grade with the assignment "
                "folder itself (--tests " f"{folder.parent}), which adds them, or with the "
                "instructor release's tests/ (difflab assign)")
    return folder, {}


def _blocks_beside(parent: Path) -> list[str]:
    """The block-test files the sources in ``parent`` would make (files that cannot be
    read as sources, or have no blocks, are not the grader's business here)."""
    names = []
    for path in assignment_files(parent):
        try:
            if BEGIN_HIDDEN in path.read_text(encoding="utf-8", errors="replace"):
                names += list(source_block_tests(path))
        except (GradingInputError, OSError):
            continue
    return names


class _SubmissionNames(dict):
    """A block's globals: a name not set by the block is the submission's (or a builtin)."""

    def __missing__(self, name: str) -> Any:
        if hasattr(builtins, name):
            return getattr(builtins, name)
        import submission  # the grader's proxy of the student's module

        value = getattr(submission, name)
        self[name] = value
        return value


def run_hidden_block(code: str, where: str) -> None:
    """Run one hidden-tests block in the grader's process, against the submission.

    The block's names are looked up in the submission when it uses them (its own
    assignments and imports, and Python's built-ins, come first), so a block written
    in the notebook reads as it did there; its asserts run here, where the student's
    code cannot reach them.

    Parameters
    ----------
    code : str
        The block's statements.
    where : str
        Where the block is in the assignment, for tracebacks (``"hw.ipynb, cell 4"``).
    """
    exec(compile(code, f"<hidden tests: {where}>", "exec"), _SubmissionNames(
        __name__="hidden_tests"))
