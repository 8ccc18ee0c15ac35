"""``difflab autograder build ASSIGNMENT --out autograder.zip``: Gradescope's zip, made.

Gradescope builds an image from the zip (``setup.sh``, run once as root), then for each
submission puts the student's files in ``/autograder/submission``, the metadata in
``/autograder/submission_metadata.json``, runs ``/autograder/source/run_autograder``
and reads ``/autograder/results/results.json``.  The zip holds:

* ``run_autograder``: finds the submission, runs ``difflab grade`` with the limits and
  the late policy chosen at build time, and the metadata (the student's seed);
* ``setup.sh``: installs Python and, in a virtual environment (``/autograder/venv``),
  the dependencies at the versions running here (or, where those do not exist for
  the image's Python, the newest difflab accepts), and makes the tests readable by
  root only (student code runs as another uid);
* ``tests/``: the assignment's tests, hidden ones included;
* ``difflab/``: this very difflab (the running version's code), so the grader on
  Gradescope is the one the tests were written against; ``DIFFLAB_VERSION`` names it.

``run_autograder`` honours ``AUTOGRADER_ROOT`` (default ``/autograder``), so the zip can
be tried in a mock tree before it is uploaded.
"""

from __future__ import annotations

import importlib.metadata
import re
import shlex
import stat
import zipfile
from pathlib import Path

from difflab.grading.context import LatePolicy
from difflab.grading.errors import GradingInputError
from difflab.grading.release import source_block_tests

__all__ = ["build_autograder", "DEPENDENCIES"]

#: difflab's dependencies, where its installed metadata cannot be read.
DEPENDENCIES = ("numpy", "scipy", "sympy", "mpmath", "matplotlib", "click", "pytest",
                "nbformat", "nbclient", "ipykernel")

_RUN = """#!/usr/bin/env bash
# Gradescope's entry point, written by `difflab autograder build` (difflab {version}).
# It grades the first .ipynb or .py of the submission with the tests of this zip and
# always writes results/results.json, even when the submission crashes or loops.
# Without submission_metadata.json (a mock run) it grades with seed 0 and no late policy.
set -u
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
# a fixed folder, so Python's import path never holds the student's files
cd "$ROOT/source" || exit 1
# Hidden files and folders (Jupyter's .ipynb_checkpoints autosaves) are never graded;
# a file at the top of the submission comes before one in a folder.
SUBMISSION=$(cd "$ROOT/submission" 2>/dev/null && find . -maxdepth 2 -name '.?*' -prune -o \\
    -type f \\( -name '*.ipynb' -o -name '*.py' \\) -printf '%d %p\\n' | sort | head -n 1 \\
    | cut -d' ' -f2-)
if [ -n "$SUBMISSION" ]; then
    SUBMISSION="$ROOT/submission/${{SUBMISSION#./}}"
fi
if [ -z "$SUBMISSION" ]; then
    SUBMISSION="$ROOT/submission/missing-submission.py"
fi
METADATA=()
if [ -f "$ROOT/submission_metadata.json" ]; then
    METADATA=(--metadata "$ROOT/submission_metadata.json")
fi
mkdir -p "$ROOT/results"
if [ -z "${{PYTHON:-}}" ]; then  # the virtual environment of setup.sh
    PYTHON="$ROOT/venv/bin/python"
    [ -x "$PYTHON" ] || PYTHON=python3
fi
PYTHONPATH="$ROOT/source" exec "$PYTHON" -m difflab.grading grade "$SUBMISSION" \\
    --tests "$ROOT/source/tests" --out "$ROOT/results/results.json" \\
    {options} "${{METADATA[@]}}"
"""

_SETUP = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image
# (written by `difflab autograder build`, difflab {version}).
# It works on Gradescope's Ubuntu 22.04 and 24.04 images: difflab and its dependencies go
# into a virtual environment ($ROOT/venv), never into the system's Python (24.04 refuses
# that), with a Python that difflab supports (>= 3.10; 22.04's python3 is 3.10).
set -eu
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
PYTHON="${{SETUP_PYTHON:-python3}}"
if [ "${{SETUP_APT:-1}}" = 1 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y python3 python3-venv python3-pip
fi
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
    echo "setup.sh: $PYTHON is older than Python 3.10, which difflab needs" >&2
    exit 1
fi
"$PYTHON" -m venv ${{SETUP_VENV_OPTIONS:-}} "$ROOT/venv"
PIP=("$ROOT/venv/bin/python" -m pip install --disable-pip-version-check)
# The versions the tests were written against; where they do not exist for this Python
# (numpy 2.3 and later need 3.11), the newest that difflab accepts.
"${{PIP[@]}}" {pins} || "${{PIP[@]}}" {ranges}
"$ROOT/venv/bin/python" -c "import numpy, scipy, pytest, nbformat"
# Student code runs as an unprivileged uid of the grader's pool (no account needed);
# the tests stay readable by root only.
chmod -R go-rwx "$ROOT/source/tests"
"""


def _requirements() -> list[str]:
    """The names of difflab's required distributions (not its extras)."""
    try:
        required = importlib.metadata.requires("difflab") or []
    except importlib.metadata.PackageNotFoundError:
        return list(DEPENDENCIES)
    names = [re.split(r"[\s;<>=!~\[(]", r, maxsplit=1)[0] for r in required if "extra" not in r]
    return [n for n in names if n] or list(DEPENDENCIES)


def _ranges() -> list[str]:
    """difflab's required distributions with the versions it accepts (``numpy>=1.24``)."""
    try:
        required = importlib.metadata.requires("difflab") or []
    except importlib.metadata.PackageNotFoundError:
        return list(DEPENDENCIES)
    return [r.split(";")[0].strip() for r in required if "extra" not in r] or list(
        DEPENDENCIES)


def _pins() -> list[str]:
    """Each dependency at the version running here (``name==version``)."""
    pins = []
    for name in _requirements():
        try:
            pins.append(f"{name}=={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            pins.append(name)
    return pins


def _version() -> str:
    import difflab

    return getattr(difflab, "__version__", "unknown")


def build_autograder(
    assignment: str | Path,
    out: str | Path,
    *,
    timeout: float = 20.0,
    memory_mb: int = 2048,
    total_timeout: float = 480.0,
    late_policy: LatePolicy | None = None,
) -> Path:
    """Write Gradescope's autograder zip for ``assignment`` (a folder with ``tests/``).

    The zip holds ``run_autograder`` (Gradescope's entry point: it runs :func:`grade`
    with the limits and late policy chosen here), ``setup.sh`` (installs Python and
    difflab's dependencies at the versions running here, in a virtual environment),
    the tests (hidden ones too, and the hidden-tests blocks of the assignment's
    sources) and this very difflab, so the grader on Gradescope is the one the tests
    were written against.

    Parameters
    ----------
    assignment : str or Path
        The assignment's folder, with a ``tests/`` folder of ``test_*.py`` files (or
        the tests folder itself).
    out : str or Path
        The zip to write (its folder is created if needed).
    timeout : float, default 20.0, keyword-only
        Seconds each test may run (``grade``'s ``timeout``).
    memory_mb : int, default 2048, keyword-only
        The memory limit of the student's process, in MiB.
    total_timeout : float, default 480.0, keyword-only
        Seconds for the whole grading; keep it under Gradescope's limit (10 minutes
        by default).
    late_policy : LatePolicy, optional, keyword-only
        Applied to the lateness in Gradescope's submission metadata.

    Returns
    -------
    Path
        ``out``.

    Raises
    ------
    GradingInputError
        When the assignment has no ``tests/`` folder with test files.

    See Also
    --------
    grade : what ``run_autograder`` runs for each submission.

    Examples
    --------
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
    >>> from difflab.grading import GradingInputError, build_autograder
    >>> import zipfile
    >>> zip_path = build_autograder(hw, hw / "autograder.zip", timeout=10)
    >>> names = zipfile.ZipFile(zip_path).namelist()
    >>> [n for n in names if not n.startswith("difflab/")]
    ['run_autograder', 'setup.sh', 'DIFFLAB_VERSION', 'tests/test_hw1.py']
    >>> "difflab/grading/runner.py" in names          # the grader travels with the tests
    True
    >>> "--timeout 10" in zipfile.ZipFile(zip_path).read("run_autograder").decode()
    True
    >>> (hw / "draft").mkdir()
    >>> build_autograder(hw / "draft", hw / "draft.zip")       # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    difflab.grading.errors.GradingInputError: no tests in ...
    >>> tmp.cleanup()
    """
    assignment, out = Path(assignment), Path(out)
    tests = assignment / "tests" if (assignment / "tests").is_dir() else assignment
    test_files = [p for p in sorted(tests.rglob("*")) if p.is_file()
                  and "__pycache__" not in p.parts and p.suffix != ".pyc"]
    if not any(p.name.startswith("test_") and p.suffix == ".py" for p in test_files):
        raise GradingInputError(f"no tests in {tests}: expected a tests/ folder with "
                                "test_*.py files")
    options = [f"--timeout {timeout:g}", f"--memory-mb {int(memory_mb)}",
               f"--total-timeout {total_timeout:g}"]
    if late_policy is not None:
        options.append(f"--late-policy {shlex.quote(late_policy.spec())}")
    version = _version()
    package = Path(__file__).resolve().parents[1]
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        _add(zf, "run_autograder", _RUN.format(version=version, options=" ".join(options)),
             executable=True)
        _add(zf, "setup.sh", _SETUP.format(
            version=version, pins=" ".join(shlex.quote(p) for p in _pins()),
            ranges=" ".join(shlex.quote(r) for r in _ranges())), executable=True)
        _add(zf, "DIFFLAB_VERSION", version + "\n")
        for path in test_files:
            zf.write(path, "tests/" + path.relative_to(tests).as_posix())
        if tests != assignment:  # the sources' hidden-tests blocks, as tests
            for name, text in source_block_tests(assignment).items():
                _add(zf, "tests/" + name, text)
        for path in sorted(package.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                zf.write(path, "difflab/" + path.relative_to(package).as_posix())
    return out


def _add(zf: zipfile.ZipFile, name: str, text: str, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name)
    mode = 0o755 if executable else 0o644
    info.external_attr = (stat.S_IFREG | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(info, text)
