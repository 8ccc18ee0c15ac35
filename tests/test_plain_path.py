"""The plain path stays tested: a selection of the jit and core tests, run again with
``DIFFLAB_FASTPATH=0`` (the speed shortcuts of ``difflab/fastpath.py`` switched off).

The project promises that the plain path gives the same results; the usual run of
the suite has the shortcuts on, so nothing else would notice a test (or a change of
code) that works only with them.  A test that measures a shortcut itself carries
``@pytest.mark.fastpath("<shortcut>")`` and is skipped there (``tests/conftest.py``);
every other test of the selection must pass.  The selection holds the files whose
tests switch ``fastpath.ENABLED`` or compare the two paths, where such a slip has
happened before, and a few of the plain path's own.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]  # (runs the conftest's marker in a pytest of its own)

ROOT = Path(__file__).resolve().parent.parent

SELECTION = [
    "tests/jit/test_compile_steady.py",
    "tests/jit/test_compiled_steady.py",
    "tests/jit/test_compile.py",
    "tests/jit/test_jit_grad.py",
    "tests/jit/test_jit_standins.py::test_a_compiled_losss_gradient_becomes_the_grad_without_a_copy",
    "tests/jit/test_compile_small_models.py",
    "tests/core/test_core_engine.py",
    "tests/core/test_core_engine_steady.py",
    "tests/core/test_core_engine_quick.py",
    "tests/core/test_core_engine_loss.py",
    "tests/core/test_core_backward_shortcuts.py",
]


@pytest.mark.slow
def test_the_selection_passes_with_the_shortcuts_switched_off():
    env = {**os.environ, "DIFFLAB_FASTPATH": "0"}
    command = [sys.executable, "-m", "pytest", "-n0", "-q", "-rs", "-p", "no:cacheprovider",
               *SELECTION]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    report = done.stdout + done.stderr
    assert done.returncode == 0, f"DIFFLAB_FASTPATH=0 python -m pytest ... failed:\n{report}"
    passed = re.search(r"(\d+) passed", report)
    assert passed and int(passed.group(1)) > 200, report
    # The run really was on the plain path: the shortcut tests were skipped, by name.
    assert "measures the speed shortcut '8. dl.compile's later calls'" in report, report
    assert "failed" not in report.splitlines()[-1], report

_MARKED = '''
import pytest
from difflab import fastpath


@pytest.mark.fastpath("8. dl.compile's later calls")
def test_marked():
    assert fastpath.ENABLED


def test_leaves_the_switch_off():
    fastpath.ENABLED = not fastpath.ENABLED


def test_after_it():
    pass
'''


@pytest.mark.slow
def test_the_marker_skips_by_name_and_a_test_must_leave_the_switch_as_imported(pytester,
                                                                              monkeypatch):
    pytester.makeconftest((ROOT / "tests" / "conftest.py").read_text())
    pytester.makeini("[pytest]\nmarkers =\n    fastpath(shortcut): measures a speed shortcut\n")
    pytester.makepyfile(test_switch=_MARKED)
    monkeypatch.setenv("DIFFLAB_FASTPATH", "1")
    on = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    on.assert_outcomes(passed=3, errors=1)  # (the error: the switch left changed)
    on.stdout.fnmatch_lines(["*test_leaves_the_switch_off left difflab.fastpath.ENABLED*"])
    monkeypatch.setenv("DIFFLAB_FASTPATH", "0")
    off = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rs", "-k", "test_marked")
    off.assert_outcomes(skipped=1)
    off.stdout.fnmatch_lines(["*measures the speed shortcut '8. dl.compile's later calls'*"])
