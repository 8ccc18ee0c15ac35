"""One source, two releases: nbgrader-style markers in notebooks and Python files.

An instructor writes each exercise once, with the solution in place and fenced by the
markers nbgrader uses::

    def dual_sin(a, da):
        ### BEGIN SOLUTION
        return np.sin(a), np.cos(a) * da
        ### END SOLUTION

and, optionally, checks only the grader should see::

    ### BEGIN HIDDEN TESTS
    assert dual_sin(0.0, 1.0) == (0.0, 1.0)
    ### END HIDDEN TESTS

From that source, :func:`make_student_version` writes the version students receive
(each solution replaced by a ``raise NotImplementedError()`` stub at the same
indentation, hidden tests removed, outputs cleared) and :func:`make_instructor_version`
the reference (markers removed, solutions kept).  Markdown cells may use the same
solution markers; their solution text becomes ``YOUR ANSWER HERE``.

:func:`notebook_to_module` turns a submitted notebook into the Python module the grader
imports: its code cells in order, IPython magics (``%matplotlib``, ``!pip``) commented
out, with a map from module lines back to cells for error messages.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from difflab.grading.errors import GradingInputError

if TYPE_CHECKING:  # (imported where a notebook is read or written: see _nbformat)
    import nbformat

__all__ = [
    "make_student_version",
    "make_instructor_version",
    "strip_solutions",
    "read_notebook",
    "notebook_to_module",
    "ModuleSource",
]

_MARKER = re.compile(
    r"^(?P<indent>[ \t]*)#+\s*(?P<kind>BEGIN|END)\s+(?P<what>SOLUTION|HIDDEN TESTS)\b"
)
_MD_MARKER = re.compile(r"^\s*(?:#+\s*)?(?P<kind>BEGIN|END)\s+(?P<what>SOLUTION|HIDDEN TESTS)\b")
#: A written answer graded by hand: ``### BEGIN SOLUTION q3 (2 points)`` in a markdown cell.
_WRITTEN = re.compile(r"^\s*(?:#+\s*)?BEGIN\s+SOLUTION\s+(?:(?P<name>[A-Za-z][\w.-]*)\s*)?"
                      r"\(\s*(?P<points>\d+(?:\.\d+)?)\s*points?\s*\)")
#: Where a notebook cell says which written answer it holds (``{"answer": id}``).
ANSWER_METADATA = "difflab"

STUB = "# YOUR CODE HERE\nraise NotImplementedError()"
MARKDOWN_STUB = "YOUR ANSWER HERE"


def _nbformat() -> ModuleType:
    """nbformat, imported when a notebook is first read or written, not with this module.

    Importing nbformat imports jsonschema, which (with the ``format-nongpl`` extra that
    Jupyter installs) compiles some forty grammars: over a second of processor time.  The
    commands that never open a notebook (``difflab gradebook``, ``difflab manual score``,
    grading a ``.py`` submission) then start without it.

    Of that second, 1.5 s is one optional package, ``rfc3987_syntax``, which jsonschema
    imports to check the ``iri`` string format; notebooks' schema has no such format, and
    nbformat does not check formats anyway.  So when jsonschema is not imported yet, it
    is imported here with that package hidden (jsonschema then leaves the ``iri`` check
    out, as it does where the package is not installed), and the package is visible again
    afterwards.  A process that imported jsonschema first keeps its full set of checks.
    """
    if "jsonschema" not in sys.modules and "rfc3987_syntax" not in sys.modules:
        sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]  (ImportError)
        try:
            import jsonschema  # noqa: F401
        finally:
            del sys.modules["rfc3987_syntax"]
    import nbformat

    return nbformat


def strip_solutions(source: str, *, student: bool, where: str = "source") -> str:
    """Apply the nbgrader markers to one piece of Python source.

    Parameters
    ----------
    source : str
        Python source containing ``### BEGIN/END SOLUTION`` and
        ``### BEGIN/END HIDDEN TESTS`` fences (any number of ``#``).
    student : bool
        True: replace solutions with a stub and drop hidden tests.  False: keep both
        and drop only the marker lines.
    where : str, optional
        Names the source in error messages (e.g. ``"cell 3 of hw.ipynb"``).

    Returns
    -------
    str
        The transformed source.

    Raises
    ------
    GradingInputError
        If the markers are unbalanced or nested.
    """
    out: list[str] = []
    open_kind: str | None = None
    open_line = 0
    for lineno, line in enumerate(source.splitlines(), start=1):
        m = _MARKER.match(line)
        if m is None:
            if open_kind is None or not student:
                out.append(line)
            continue
        kind, what, indent = m["kind"], m["what"], m["indent"]
        if kind == "BEGIN":
            if open_kind is not None:
                raise GradingInputError(
                    f"{where}, line {lineno}: '### BEGIN {what}' inside the "
                    f"'### BEGIN {open_kind}' opened at line {open_line}; close it first "
                    f"with '### END {open_kind}'"
                )
            open_kind, open_line = what, lineno
            if student and what == "SOLUTION":
                out.extend(indent + stub_line for stub_line in STUB.splitlines())
        else:
            if open_kind != what:
                expected = f"'### END {open_kind}'" if open_kind else "no END marker"
                raise GradingInputError(
                    f"{where}, line {lineno}: '### END {what}' without a matching "
                    f"'### BEGIN {what}' (expected {expected})"
                )
            open_kind = None
    if open_kind is not None:
        raise GradingInputError(
            f"{where}, line {open_line}: '### BEGIN {open_kind}' has no matching "
            f"'### END {open_kind}'"
        )
    text = "\n".join(out)
    return text + "\n" if source.endswith("\n") and text else text


def _strip_markdown(source: str, *, student: bool, where: str) -> str:
    """Markdown or raw text with its solution regions (and hidden-tests regions) applied.

    In the student version a solution region becomes ``YOUR ANSWER HERE`` and a
    hidden-tests region disappears; the instructor's keeps both, without the markers.
    """
    out: list[str] = []
    inside: str | None = None
    for lineno, line in enumerate(source.splitlines(), start=1):
        m = _MD_MARKER.match(line)
        if m is None:
            if not (inside and student):
                out.append(line)
            continue
        what = m["what"]
        if m["kind"] == "BEGIN":
            if inside:
                raise GradingInputError(f"{where}, line {lineno}: BEGIN {what} inside the "
                                        f"BEGIN {inside}; close it first with END {inside}")
            inside = what
            if student and what == "SOLUTION":
                out.append(MARKDOWN_STUB)
        else:
            if inside != what:
                raise GradingInputError(f"{where}, line {lineno}: END {what} without "
                                        f"BEGIN {what}")
            inside = None
    if inside:
        raise GradingInputError(f"{where}: BEGIN {inside} has no matching END {inside}")
    return "\n".join(out)


#: How markdown refers to a cell's attachment: ``![plot](attachment:plot.png)``.
_ATTACHMENT_LINK = re.compile(r"attachment:([^)\s\"'>]+)")
#: Notebook metadata that holds the state of the solution's run (ipywidgets' values).
_RUN_STATE = ("widgets",)


def _student_attachments(cell: nbformat.NotebookNode) -> None:
    """Keep only the attachments the student version of a cell still shows.

    An image pasted into a solution (``![](attachment:answer.png)``) is stored in the
    cell's ``attachments``, not in its text: stripping the text alone would ship it.
    """
    attachments = cell.get("attachments")
    if not attachments:
        cell.pop("attachments", None)
        return
    shown = set(_ATTACHMENT_LINK.findall(cell.source)) if cell.cell_type != "code" else set()
    kept = {name: data for name, data in attachments.items() if name in shown}
    if kept:
        cell.attachments = kept
    else:
        del cell["attachments"]


#: The deepest nesting of lists and objects a notebook's JSON may have (Jupyter writes
#: about 6; a deeper file is built to break the reader, not saved by Jupyter).
MAX_NOTEBOOK_DEPTH = 64
_CELL_TYPES = ("code", "markdown", "raw")


def _depth_over(value: object, limit: int) -> bool:
    """Whether ``value`` (parsed JSON) nests lists and objects more than ``limit`` deep.

    Iterative, so a deep file cannot exhaust Python's stack while it is measured.
    """
    stack = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (list, dict)):
            if depth >= limit:
                return True
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, depth + 1) for child in children)
    return False


def _is_text(source: object) -> bool:
    """A cell's source as the format allows it: a string, or a list of strings."""
    return isinstance(source, str) or (
        isinstance(source, list) and all(isinstance(line, str) for line in source))


def _check_cells(name: str, data: object) -> None:
    """Refuse, naming the cell, a notebook whose cells are not what Jupyter writes."""
    if not isinstance(data, dict):
        raise GradingInputError(f"{name} is valid JSON but not a Jupyter notebook: it holds "
                                f"a {type(data).__name__}, not an object with cells")
    if not isinstance(data.get("cells"), list):
        raise GradingInputError(f"{name} is valid JSON but not a Jupyter notebook: it has no "
                                "list of cells (save it again from Jupyter)")
    for number, cell in enumerate(data["cells"], start=1):
        where = f"{name}, cell {number}"
        if not isinstance(cell, dict):
            raise GradingInputError(f"{where} is a {type(cell).__name__}, not a cell; save "
                                    "the notebook again from Jupyter")
        kind = cell.get("cell_type")
        if not isinstance(kind, str):
            raise GradingInputError(f"{where} has no cell_type; save the notebook again "
                                    "from Jupyter")
        if kind in _CELL_TYPES and not _is_text(cell.get("source", "")):
            raise GradingInputError(
                f"{where}: its source is not text (a {type(cell.get('source')).__name__} "
                "where a string or a list of strings belongs); save the notebook again "
                "from Jupyter")
        for key, types in (("metadata", dict), ("attachments", dict), ("outputs", list)):
            if key in cell and not isinstance(cell[key], types):
                raise GradingInputError(f"{where}: its {key} is a "
                                        f"{type(cell[key]).__name__}, not a "
                                        f"{types.__name__}; save the notebook again "
                                        "from Jupyter")


def read_notebook(path: str | Path) -> nbformat.NotebookNode:
    """Read a notebook, turning every way it can be broken into a clear error.

    The structure is checked before nbformat sees it: nesting at most
    ``MAX_NOTEBOOK_DEPTH`` deep, an object with a list of cells, each cell an object
    whose source is text.  A submitted notebook is the student's file, so whatever it
    holds must end in a message that names the problem (and a zero), not in a traceback.

    Raises
    ------
    GradingInputError
        If the file does not exist or is a folder, is not valid JSON, nests too deeply,
        or is JSON but not a notebook (cells that are not cells, sources that are not
        text).
    """
    path = Path(path)
    if path.is_dir():
        raise GradingInputError(f"{path.name} is a folder, not a .ipynb file: submit the "
                                "notebook itself")
    if not path.is_file():
        raise GradingInputError(f"notebook not found: {path}")
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GradingInputError(
            f"{path.name} is not a valid notebook: it is not valid JSON "
            f"(line {exc.lineno}, column {exc.colno}: {exc.msg}). The file may be truncated "
            "or edited by hand; save it again from Jupyter (File > Save) and resubmit."
        ) from None
    except (RecursionError, ValueError) as exc:  # ValueError: a number of 5,000 digits
        why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)[:200]
        raise GradingInputError(f"{path.name} is not a notebook that can be read ({why}); "
                                "save it again from Jupyter") from None
    if _depth_over(data, MAX_NOTEBOOK_DEPTH):
        raise GradingInputError(f"{path.name} is not a notebook that can be read: it is "
                                f"nested too deeply (more than {MAX_NOTEBOOK_DEPTH} levels "
                                "of lists and objects); save it again from Jupyter")
    if not (isinstance(data, dict) and "worksheets" in data and "cells" not in data):
        _check_cells(path.name, data)  # (a version-3 notebook is checked once converted)
    try:
        nb = _nbformat().reads(text, as_version=4)
    except Exception as exc:  # nbformat raises several types for malformed notebooks
        raise GradingInputError(
            f"{path.name} is valid JSON but not a Jupyter notebook ({exc})"
        ) from None
    if not isinstance(nb.get("cells"), list):
        raise GradingInputError(f"{path.name} is valid JSON but has no list of cells")
    for number, cell in enumerate(nb.cells, start=1):  # as converted from older formats
        if not isinstance(cell, dict) or not isinstance(cell.get("source", ""), str):
            raise GradingInputError(f"{path.name}, cell {number} is not a cell of text; "
                                    "save the notebook again from Jupyter")
    return nb


def written_questions(path: str | Path) -> dict[str, float]:
    """The written answers of an assignment notebook graded by hand: ``{id: points}``.

    A markdown cell whose solution marker names points (``### BEGIN SOLUTION q3 (2
    points)``) is one; its id is the name on the marker, or ``answer-K`` for the K-th
    such cell without a name.

    Raises
    ------
    GradingInputError
        When two written answers have the same id.
    """
    questions: dict[str, float] = {}
    for cell in read_notebook(path).cells:
        if cell.cell_type != "markdown":
            continue
        for line in cell.source.splitlines():
            m = _WRITTEN.match(line)
            if m:
                name = m["name"] or f"answer-{len(questions) + 1}"
                if name in questions:
                    raise GradingInputError(f"{Path(path).name}: two written answers are "
                                            f"named {name!r}; give each its own name")
                questions[name] = float(m["points"])
                break
    return questions


def _transform_notebook(path: Path, *, student: bool) -> nbformat.NotebookNode:
    """The student or instructor version of a notebook.

    The student version holds nothing of the solution's run or text: solution regions
    in code, markdown and raw cells replaced, hidden tests removed, every output and
    execution count cleared (widget views included), the attachments the stripped text
    no longer shows dropped, and the notebook's widget state (``metadata.widgets``)
    removed.
    """
    nb = read_notebook(path)
    answers = iter(written_questions(path))
    for index, cell in enumerate(nb.cells, start=1):
        where = f"{path.name}, cell {index}"
        if cell.cell_type == "code":
            cell.source = strip_solutions(cell.source, student=student, where=where)
            cell.outputs = []
            cell.execution_count = None
        elif cell.cell_type in ("markdown", "raw"):
            if cell.cell_type == "markdown" and any(
                    _WRITTEN.match(line) for line in cell.source.splitlines()):
                # the cell keeps its question's id, so answers are found in submissions
                cell.metadata[ANSWER_METADATA] = {"answer": next(answers)}
            cell.source = _strip_markdown(cell.source, student=student, where=where)
        if student:
            _student_attachments(cell)
            for key in _RUN_STATE:
                cell.get("metadata", {}).pop(key, None)
    if student:
        for key in _RUN_STATE:
            nb.metadata.pop(key, None)
    return nb


def _write_version(source: str | Path, out: str | Path, *, student: bool) -> Path:
    source, out = Path(source), Path(out)
    if not source.is_file():
        raise GradingInputError(f"assignment source not found: {source}")
    if out.is_dir() or (not out.suffix and not out.exists()):
        out = out / source.name
    out.parent.mkdir(parents=True, exist_ok=True)
    if source.suffix == ".ipynb":
        nb = _transform_notebook(source, student=student)
        _nbformat().write(nb, str(out))
    elif source.suffix == ".py":
        text = source.read_text(encoding="utf-8")
        out.write_text(strip_solutions(text, student=student, where=source.name), "utf-8")
    else:
        raise GradingInputError(
            f"{source.name}: expected a .ipynb notebook or a .py file, got '{source.suffix}'"
        )
    return out


def make_student_version(source: str | Path, out: str | Path) -> Path:
    """Write the student version of an assignment notebook or Python file.

    Solutions become ``raise NotImplementedError()`` stubs, hidden tests disappear and
    outputs are cleared.

    Parameters
    ----------
    source : str or Path
        A ``.ipynb`` or ``.py`` file with nbgrader markers.
    out : str or Path
        The output file, or a folder to write a file of the same name into.

    Returns
    -------
    Path
        The file written.

    Examples
    --------
    >>> from difflab.grading import make_student_version
    >>> import tempfile
    >>> from pathlib import Path
    >>> folder = Path(tempfile.mkdtemp())
    >>> source = folder / "hw.py"
    >>> _ = source.write_text(
    ...     "import numpy as np\\n\\n\\ndef dual_sin(a, da):\\n"
    ...     "    ### BEGIN SOLUTION\\n    return np.sin(a), np.cos(a) * da\\n"
    ...     "    ### END SOLUTION\\n")
    >>> print(make_student_version(source, folder / "student").read_text())
    import numpy as np
    <BLANKLINE>
    <BLANKLINE>
    def dual_sin(a, da):
        # YOUR CODE HERE
        raise NotImplementedError()
    <BLANKLINE>
    """
    return _write_version(source, out, student=True)


def make_instructor_version(source: str | Path, out: str | Path) -> Path:
    """Write the instructor (reference) version: markers removed, solutions kept.

    Parameters
    ----------
    source : str or Path
        A ``.ipynb`` or ``.py`` file with nbgrader markers.
    out : str or Path
        The output file, or a folder to write a file of the same name into.

    Returns
    -------
    Path
        The file written.

    Examples
    --------
    >>> from difflab.grading import make_instructor_version
    >>> import tempfile
    >>> from pathlib import Path
    >>> folder = Path(tempfile.mkdtemp())
    >>> source = folder / "hw.py"
    >>> _ = source.write_text(
    ...     "import numpy as np\\n\\n\\ndef dual_sin(a, da):\\n"
    ...     "    ### BEGIN SOLUTION\\n    return np.sin(a), np.cos(a) * da\\n"
    ...     "    ### END SOLUTION\\n")
    >>> print(make_instructor_version(source, folder / "instructor").read_text())
    import numpy as np
    <BLANKLINE>
    <BLANKLINE>
    def dual_sin(a, da):
        return np.sin(a), np.cos(a) * da
    <BLANKLINE>
    """
    return _write_version(source, out, student=False)


@dataclass
class ModuleSource:
    """A submitted notebook as one Python module.

    Attributes
    ----------
    code : str
        The module's source: the code cells in order, each after a header comment.
    cells : list of (int, int, int)
        ``(first_line, last_line, cell_number)`` of each code cell in ``code``
        (1-based, inclusive), so each cell can run on its own and errors can name cells.
    """

    code: str
    cells: list[tuple[int, int, int]]

    def locate(self, lineno: int) -> str:
        """Describe module line ``lineno`` as a notebook location, e.g. ``cell 4, line 2``."""
        return locate(self.cells, lineno)


def locate(cells: list[tuple[int, int, int]] | None, lineno: int) -> str:
    """``line N`` of a ``.py`` submission, or ``cell C, line L`` of a notebook."""
    for start, end, cell in cells or ():
        if start <= lineno <= end:
            return f"cell {cell}, line {lineno - start + 1}"
    return f"line {lineno}"


_MAGIC = re.compile(r"^\s*[%!]")


def notebook_to_module(path: str | Path) -> ModuleSource:
    """Turn a notebook's code cells into one Python module, run top to bottom on import.

    This is how ``difflab grade`` executes a notebook headless: the grader runs the cells
    in order, each on its own, in the module's namespace, like *Restart & Run All* with
    errors allowed (as nbgrader does): a cell that raises is reported and the next cells
    still run.  It happens inside the grader's sandboxed process, without a Jupyter
    kernel.
    IPython magics and shell escapes (lines starting with ``%`` or ``!``) are commented
    out, since they are not Python.

    Parameters
    ----------
    path : str or Path
        The notebook.

    Returns
    -------
    ModuleSource
        The module source and its line-to-cell map.
    """
    nb = read_notebook(path)
    lines: list[str] = []
    cells: list[tuple[int, int, int]] = []
    for index, cell in enumerate(nb.cells, start=1):
        if cell.cell_type != "code":
            continue
        lines.append(f"# ---- notebook cell {index} ----")
        start = len(lines) + 1
        for line in cell.source.splitlines():
            lines.append("# (magic) " + line if _MAGIC.match(line) else line)
        if len(lines) >= start:
            cells.append((start, len(lines), index))
        lines.append("")
    return ModuleSource(code="\n".join(lines) + "\n", cells=cells)
