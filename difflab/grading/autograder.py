"""``difflab autograder build ASSIGNMENT --out autograder.zip``: Gradescope's zip, made.

Gradescope builds an image from the zip (``setup.sh``, run once as root), then for each
submission puts the student's files in ``/autograder/submission``, the metadata in
``/autograder/submission_metadata.json``, runs ``/autograder/source/run_autograder``
and reads ``/autograder/results/results.json``.  The zip holds:

* ``run_autograder``: finds the submission, runs ``difflab grade`` with the limits and
  the late policy chosen at build time, and the metadata (the student's seed);
* ``setup.sh``: installs Python and the dependencies at the versions running here, and
  makes the tests readable by root only (student code runs as another uid);
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

__all__ = ["build_autograder", "DEPENDENCIES"]

#: difflab's dependencies, where its installed metadata cannot be read.
DEPENDENCIES = ("numpy", "scipy", "sympy", "mpmath", "matplotlib", "click", "pytest",
                "nbformat", "nbclient", "ipykernel")

_RUN = """#!/usr/bin/env bash
# Gradescope's entry point, written by `difflab autograder build` (difflab {version}).
# It grades the first .ipynb or .py of the submission with the tests of this zip and
# always writes results/results.json, even when the submission crashes or loops.
set -u
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
# a fixed folder, so Python's import path never holds the student's files
cd "$ROOT/source" || exit 1
SUBMISSION=$(find "$ROOT/submission" -maxdepth 2 \\( -name '*.ipynb' -o -name '*.py' \\) \\
    ! -name '.*' | sort | head -n 1)
if [ -z "$SUBMISSION" ]; then
    SUBMISSION="$ROOT/submission/missing-submission.py"
fi
METADATA=()
if [ -f "$ROOT/submission_metadata.json" ]; then
    METADATA=(--metadata "$ROOT/submission_metadata.json")
fi
mkdir -p "$ROOT/results"
PYTHONPATH="$ROOT/source" exec "${{PYTHON:-python3}}" -m difflab.grading grade "$SUBMISSION" \\
    --tests "$ROOT/source/tests" --out "$ROOT/results/results.json" \\
    {options} "${{METADATA[@]}}"
"""

_SETUP = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image
# (written by `difflab autograder build`, difflab {version}).
set -eu
apt-get update
apt-get install -y python3 python3-pip
python3 -m pip install {requirements}
# Student code runs as an unprivileged uid of the grader's pool (no account needed);
# the tests stay readable by root only.
chmod -R go-rwx /autograder/source/tests
"""


def _requirements() -> list[str]:
    """The names of difflab's required distributions (not its extras)."""
    try:
        required = importlib.metadata.requires("difflab") or []
    except importlib.metadata.PackageNotFoundError:
        return list(DEPENDENCIES)
    names = [re.split(r"[\s;<>=!~\[(]", r, maxsplit=1)[0] for r in required if "extra" not in r]
    return [n for n in names if n] or list(DEPENDENCIES)


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

    Raises
    ------
    GradingInputError
        When the assignment has no ``tests/`` folder with test files.
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
        _add(zf, "setup.sh", _SETUP.format(version=version, requirements=" ".join(
            shlex.quote(p) for p in _pins())), executable=True)
        _add(zf, "DIFFLAB_VERSION", version + "\n")
        for path in test_files:
            zf.write(path, "tests/" + path.relative_to(tests).as_posix())
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
