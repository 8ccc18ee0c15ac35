"""The documentation site, built once per test session for every test that reads it.

Building the site is the slowest step of the test suite, so the tests that check the
build (``test_docs_build.py``) and the ones that open its pages in a browser
(``test_docs_in_a_browser.py``) share one build.  Under pytest-xdist each worker is a
process of its own: the first worker that asks builds the site into a folder all the
workers of the session share, behind a file lock, and writes down how the build
went; the others wait for the lock and read that.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

# A generous bound, well above a build on a loaded 2-core machine (a few minutes since the
# build was made faster: docs/_ext/difflab_docs.py, items 6 to 8).
BUILD_TIMEOUT_S = 600


def build_command(out: Path) -> list[str]:
    """The test suite's build: nitpicky, warnings are errors, notebooks not executed."""
    return [
        sys.executable, "-m", "sphinx",
        "-b", "html",
        "-W", "--keep-going",  # every warning is reported, then the build fails
        "-n",  # nitpicky: unresolved references are warnings
        "-q",  # only warnings and errors on stderr
        "-E",  # fresh environment: no state from an earlier build
        # Read and write in parallel, one process per core; not under pytest-xdist, whose
        # other worker keeps the second core busy: there a second Sphinx process only adds
        # the pickling of every page between the processes (a seventh of the build's CPU).
        "-j", "1" if os.environ.get("PYTEST_XDIST_WORKER") else "auto",
        "-D", "nb_execution_mode=off",
        "-d", str(out / "doctrees"),
        str(DOCS), str(out / "html"),
    ]


@dataclass(frozen=True)
class DocsBuild:
    """One build of the site: where it is and what Sphinx said."""

    out: Path  # holds html/ (the site) and doctrees/
    returncode: int
    output: str  # Sphinx's stdout and stderr
    seconds: float

    @property
    def html(self) -> Path:
        return self.out / "html"

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def _build(out: Path) -> DocsBuild:
    env = {**os.environ, "MPLBACKEND": "Agg", "NO_COLOR": "1"}
    start = time.perf_counter()
    try:
        result = subprocess.run(build_command(out), cwd=ROOT, env=env, capture_output=True,
                                text=True, timeout=BUILD_TIMEOUT_S)
        returncode, output = result.returncode, result.stdout + result.stderr
    except subprocess.TimeoutExpired as exc:
        returncode = -1
        output = f"sphinx-build ran past {BUILD_TIMEOUT_S} s and was stopped\n{exc.stderr or ''}"
    return DocsBuild(out, returncode, output, time.perf_counter() - start)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (POSIX); elsewhere, nothing to hold."""
    try:
        import fcntl
    except ImportError:  # (Windows: each worker then builds into a folder of its own)
        yield
        return
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def docs_build(tmp_path_factory: pytest.TempPathFactory) -> DocsBuild:
    """The site, built once per session (shared by the xdist workers of the session)."""
    for module in ("sphinx", "myst_nb", "numpydoc", "furo"):
        pytest.importorskip(module, reason="the docs need the 'docs' extra: "
                                           "pip install -e '.[docs]'")
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    try:
        import fcntl  # noqa: F401
        shared = worker is not None
    except ImportError:
        shared = False
    # the session's base folder holds one folder per worker: its parent is the session's
    root = tmp_path_factory.getbasetemp()
    root = root.parent if shared else root
    out, record = root / "docs-build", root / "docs-build.json"
    with _locked(root / "docs-build.lock"):
        if record.is_file():
            saved = json.loads(record.read_text())
            return DocsBuild(out, saved["returncode"], saved["output"], saved["seconds"])
        build = _build(out)
        record.write_text(json.dumps({"returncode": build.returncode, "output": build.output,
                                      "seconds": build.seconds}))
        return build
