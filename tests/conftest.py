"""Shared test settings and fixtures.

Hypothesis runs without deadlines (CI machines are shared and noisy).  Tests that
take ``device`` run on the CPU and on CUDA: a real GPU where CuPy finds one, and
elsewhere the CPU stand-in for CuPy (``difflab.testing.fake_cupy``), which
refuses implicit conversions to NumPy as CuPy does, so the GPU code paths run
on every machine.

A test that measures a speed shortcut itself (its speed, its memory, or that it
ran) carries ``@pytest.mark.fastpath("6. fresh adjoints kept")``, naming the
shortcut as the table in ``difflab/fastpath.py`` does: with ``DIFFLAB_FASTPATH=0``
that shortcut does not exist, so the test is skipped; every other test must pass
on the plain path too.  A test may switch ``fastpath.ENABLED`` off for a while
(``monkeypatch``), never on where the import left it off (the shortcuts hooked in
at import are missing then), and must leave it as the import set it.
"""

import compileall
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

import difflab as dl
from difflab import fastpath
from difflab.testing import fake_cupy

FASTPATH_AT_IMPORT = fastpath.ENABLED  # (DIFFLAB_FASTPATH, read once by difflab's import)

settings.register_profile("ci", deadline=None, max_examples=40, derandomize=True)
settings.register_profile("dev", deadline=None, max_examples=60)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


def pytest_configure(config):
    """Write difflab's compiled modules into its ``__pycache__`` before any test starts.

    Where ``PYTHONDONTWRITEBYTECODE`` is set, a source checkout never gets them, and every
    process that imports difflab compiles its 260 modules again (two to three seconds):
    the xdist workers, and the grading sandboxes, CLI runs, example programs, notebook
    kernels and MPI ranks the tests start.  An installed difflab has them; so does this
    checkout from here on.  Only difflab's own files are written (``.gitignore`` covers
    them); ``compileall`` skips the ones up to date and replaces each file in one step,
    so processes that start together may race.
    """
    compileall.compile_dir(Path(dl.__file__).parent, quiet=2)


@pytest.hookimpl(wrapper=True)
def pytest_collection(session):
    """Collect with bytecode writing on, so that pytest keeps the test modules' rewritten
    code in their ``__pycache__`` (as it does wherever ``PYTHONDONTWRITEBYTECODE`` is
    unset): each worker then reads it instead of rewriting every ``assert`` of every
    module again, half of its collection time.  It is off again before the tests run, so a
    module a test writes and imports is never cached."""
    writes_no_bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        return (yield)
    finally:
        sys.dont_write_bytecode = writes_no_bytecode


#: The tests that build the documentation site (the build alone takes minutes) run first,
#: then the other long ones (marked ``slow`` or ``notebooks``): under xdist a worker starts
#: on them at once, and no long test ends the run alone while the other core idles.
FIRST = "tests/docs/test_docs_build.py::"
LONG = ("slow", "notebooks")


def _start_order(item: pytest.Item) -> int:
    if item.nodeid.startswith(FIRST):
        return 0
    return 1 if any(item.get_closest_marker(name) for name in LONG) else 2


def pytest_collection_modifyitems(config, items):
    """Move the docs build's tests to the front, then the other long tests, each group in
    its order (the others keep theirs)."""
    items[:] = sorted(items, key=_start_order)


def pytest_report_header(config):
    if dl.cuda.is_available():
        return f"cuda tests run on: {dl.cuda.get_device_name(0)}"
    return "cuda tests run on: the CPU stand-in for CuPy (difflab.testing.fake_cupy; no GPU here)"


def pytest_runtest_setup(item):
    """Skip a ``fastpath``-marked test when the shortcuts are off (``DIFFLAB_FASTPATH=0``)."""
    marker = item.get_closest_marker("fastpath")
    if marker is None:
        return
    if len(marker.args) != 1 or not isinstance(marker.args[0], str):
        raise pytest.UsageError(
            f"{item.nodeid}: write @pytest.mark.fastpath(\"<shortcut>\") with the shortcut's "
            f"name from the table in difflab/fastpath.py, e.g. \"6. fresh adjoints kept\"")
    if not FASTPATH_AT_IMPORT:
        pytest.skip(f"measures the speed shortcut '{marker.args[0]}', which DIFFLAB_FASTPATH=0 "
                    f"switches off")


@pytest.hookimpl(trylast=True)  # (after the fixtures' teardown: monkeypatch has undone its work)
def pytest_runtest_teardown(item):
    """A test must leave ``fastpath.ENABLED`` as the import set it: a later test on the
    plain path would otherwise meet a shortcut's values (a FreshAdjoint) it cannot take."""
    if fastpath.ENABLED != FASTPATH_AT_IMPORT:
        fastpath.ENABLED = FASTPATH_AT_IMPORT
        raise AssertionError(
            f"{item.nodeid} left difflab.fastpath.ENABLED = {not FASTPATH_AT_IMPORT} (the import "
            f"set {FASTPATH_AT_IMPORT}): switch it with monkeypatch.setattr, which puts it back")


@pytest.fixture(params=["cpu", "cuda"])
def device(request):
    """The device to run on: the CPU, then CUDA (a real GPU, or the CuPy stand-in)."""
    if request.param == "cpu" or dl.cuda.is_available():
        yield request.param
    else:
        with fake_cupy.installed():
            yield "cuda"


@pytest.fixture
def cuda():
    """CUDA for a test that needs it: a real GPU, or else the CuPy stand-in."""
    if dl.cuda.is_available():
        yield dl.device("cuda")
    else:
        with fake_cupy.installed():
            yield dl.device("cuda")


@pytest.fixture
def shortcuts_on_and_off(tmp_path):
    """Run a program with the speed shortcuts on and off; assert the same arrays, bit for bit.

    The program is a script that saves its arrays with ``np.savez(sys.argv[1], ...)``
    (``sys.argv[2]`` says ``"on"`` or ``"off"``).  It runs in two fresh processes, with
    ``DIFFLAB_FASTPATH=1`` and ``=0`` (the switch is read at import); every array must
    have the same dtype, shape and bytes, and there must be more than ``at_least``.
    """
    def run(switch: str, program: str) -> dict:
        path = tmp_path / f"{switch}.npz"
        env = {**os.environ, "DIFFLAB_FASTPATH": "1" if switch == "on" else "0"}
        subprocess.run([sys.executable, "-c", program, str(path), switch], check=True, env=env)
        with np.load(path) as saved:
            return {name: saved[name] for name in saved.files}

    def compare(program: str, at_least: int) -> None:
        on, off = run("on", program), run("off", program)
        assert on.keys() == off.keys() and len(on) > at_least
        for name in on:
            assert on[name].dtype == off[name].dtype and on[name].shape == off[name].shape, name
            assert on[name].tobytes() == off[name].tobytes(), f"{name} differs"

    return compare
