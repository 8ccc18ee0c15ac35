"""What each of the grader's processes starts and loads (issue 25: fast feedback).

A grading runs three processes: the caller (``difflab check`` / ``difflab grade``), one
trusted worker that lists the tests and then runs them, and the student's process.
These tests check that structure and the modules each process leaves out (sympy,
pytest, nbformat, installed pytest plugins), never how long anything takes.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from grading_helpers import by_name, write

from difflab.grading import runner

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("sympy", "pytest", "nbformat", "jsonschema", "numba", "matplotlib", "scipy")


def loaded_after(module: str) -> list[str]:
    """The HEAVY modules a fresh interpreter holds after ``import module``."""
    code = textwrap.dedent(f"""
        import sys
        import {module}
        print(" ".join(m for m in {HEAVY!r} if m in sys.modules))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_each_process_loads_only_what_it_needs():
    # the command reads the notebook (nbformat); the test process runs pytest
    assert set(loaded_after("difflab.cli")) <= {"nbformat", "jsonschema"}
    assert loaded_after("difflab.grading._worker") == ["pytest"]
    assert loaded_after("difflab.grading._student") == []  # runs the student's code only


def test_nbformat_is_loaded_only_to_open_a_notebook():
    """nbformat brings jsonschema, over a second of processor time to import: the commands
    that open no notebook (``difflab gradebook``, ``difflab manual score``) go without."""
    for module in ("difflab.cli", "difflab.grading.runner", "difflab.grading.gradebook",
                   "difflab.grading.manual", "difflab.grading.notebooks"):
        assert not {"nbformat", "jsonschema"} & set(loaded_after(module)), module


def test_difflab_grading_names_still_import():
    code = ("from difflab.grading import *\nimport difflab.grading as g\n"
            "print(sorted(g.__all__) == sorted(n for n in g.__all__ if n in globals()),"
            " 'grade' in dir(g))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.stdout.split() == ["True", "True"], done.stderr


TESTS = '''
from importlib.metadata import entry_points

from submission import add  # bound when the file is imported: the real one must be bound

from difflab.grading import points

INSTALLED = {e.name for e in entry_points(group="pytest11")}


@points(1)
def test_add_bound_at_import():
    assert add(2, 3) == 5


@points(1)
def test_no_installed_plugin_is_loaded(request):
    loaded = {name for name, _ in request.config.pluginmanager.list_name_plugin()}
    assert not loaded & INSTALLED, loaded & INSTALLED
'''


def test_one_worker_and_one_student_process_per_grading(tmp_path, grade_fast, monkeypatch):
    workers, students = [], []
    real_popen, real_end = runner.subprocess.Popen, runner._Stage._end_student

    def popen(args, *rest, **kwargs):
        workers.append(args[args.index("-m") + 1])
        return real_popen(args, *rest, **kwargs)

    def end_student(stage, run):
        students.extend(run.students)
        real_end(stage, run)

    monkeypatch.setattr(runner.subprocess, "Popen", popen)
    monkeypatch.setattr(runner._Stage, "_end_student", end_student)
    write(tmp_path / "tests" / "test_add.py", TESTS)
    submission = write(tmp_path / "submission.py", "def add(a, b):\n    return a + b\n")
    results = grade_fast(submission, tmp_path / "tests")
    assert {n: t["score"] for n, t in by_name(results).items()} == {
        "test_add_bound_at_import": 1.0, "test_no_installed_plugin_is_loaded": 1.0}
    assert workers == ["difflab.grading._worker"]  # lists the tests, then runs them
    assert len(students) == 1


def run_fresh(code: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_opening_a_notebook_skips_jsonschemas_iri_grammars_and_hides_nothing_after():
    """jsonschema's optional ``rfc3987_syntax`` (1.5 s of grammars) is hidden while
    nbformat's jsonschema is imported: afterwards it imports as before, and a process
    that imported jsonschema first keeps its ``iri`` format check."""
    pytest.importorskip("rfc3987_syntax", reason="jsonschema's format-nongpl extra absent")
    fresh = run_fresh("""
        import sys
        from difflab.grading import notebooks
        notebooks._nbformat()
        hidden = "rfc3987_syntax" not in sys.modules
        import rfc3987_syntax  # (visible again)
        print(hidden, "rfc3987_syntax" in sys.modules)
    """)
    assert fresh == ["True", "True"]
    first = run_fresh("""
        import jsonschema
        from difflab.grading import notebooks
        notebooks._nbformat()
        print("iri" in jsonschema.FormatChecker.checkers)
    """)
    assert first == ["True"]


def test_a_malformed_notebook_is_still_refused_by_nbformats_validation(tmp_path):
    from difflab.grading import notebooks

    nbformat = notebooks._nbformat()
    bad = nbformat.v4.new_notebook()
    bad.cells.append(nbformat.v4.new_code_cell("x = 1"))
    del bad.cells[0]["outputs"]  # (a code cell must have outputs)
    with pytest.raises(nbformat.ValidationError):
        nbformat.validate(bad)
