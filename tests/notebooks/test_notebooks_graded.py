"""The teaching notebooks as graded assignments.

``difflab assign notebooks/`` splits every notebook into its student version (each
solution fenced by ``### BEGIN SOLUTION`` / ``### END SOLUTION`` replaced by a
``raise NotImplementedError()`` stub) and its instructor version, and copies the tests
of ``notebooks/tests/<notebook>/`` next to the instructor versions.  Then each notebook
is graded as a student's submission would be (``difflab grade``: the notebook runs
headless, cell by cell, in the grader's sandboxed process):

* the instructor version scores full marks, every notebook cell runs without an error,
  and grading it (the whole notebook executed start to end, then the tests) takes less
  than two minutes;
* the untouched student version still runs to its end without a cell raising (the
  notebook's own checks print "not attempted yet"), and scores less than full marks,
  each failing test saying what is not implemented yet.

Each grading executes a whole notebook, so these tests are marked ``slow`` and
``notebooks`` like the plain execution tests (``-m "not slow"`` leaves them out).
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import time
from pathlib import Path

import pytest

pytest.importorskip("nbformat")
from click.testing import CliRunner  # noqa: E402

from difflab.cli import main  # noqa: E402
from difflab.grading import grade, validate_results  # noqa: E402
from difflab.grading.notebooks import read_notebook  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "notebooks"
NOTEBOOKS = sorted(p.stem for p in SOURCE.glob("*.ipynb"))
#: Per-test limit of the grader; the notebook itself must load within it plus the
#: grader's start-up allowance.  Generous: a loaded CI machine is slower than a laptop.
TIMEOUT = 90.0
NOTEBOOK_BUDGET_S = 120.0  # the promise: each notebook graded in under two minutes
#: Under root the grader runs student code as an unprivileged user, and after each run it
#: ends every process of that user.  These gradings use a user of their own, so that they
#: cannot end (or be ended by) the grading tests running beside them on the same machine.
SANDBOX_USER = "difflab-notebooks"

pytestmark = [pytest.mark.notebooks, pytest.mark.slow]


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``difflab assign notebooks/ --out RELEASE``, once for the module."""
    if os.geteuid() == 0:  # created as the course's setup.sh creates the grader's user
        try:
            pwd.getpwnam(SANDBOX_USER)
        except KeyError:
            useradd = shutil.which("useradd")
            if useradd is None:
                pytest.skip(f"grading as root needs the user {SANDBOX_USER} (no useradd here)")
            subprocess.run([useradd, "--system", "--no-create-home", "--shell",
                            "/usr/sbin/nologin", SANDBOX_USER], check=True)
    out = tmp_path_factory.mktemp("release")
    result = CliRunner().invoke(main, ["assign", str(SOURCE), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def graded(release: Path):
    """Grade (notebook, version) once; returns (results, seconds)."""
    cache: dict[tuple[str, str], tuple[dict, float]] = {}

    def run(stem: str, version: str) -> tuple[dict, float]:
        if (stem, version) not in cache:
            out = release / f"{version}-{stem}.json"
            start = time.perf_counter()
            results = grade(release / version / f"{stem}.ipynb",
                            release / "instructor" / "tests" / stem, out,
                            timeout=TIMEOUT, total_timeout=4 * NOTEBOOK_BUDGET_S,
                            user=SANDBOX_USER)
            cache[stem, version] = results, time.perf_counter() - start
            assert out.is_file()
            validate_results(results)
        return cache[stem, version]

    return run


def test_there_are_twelve_notebooks_each_with_tests() -> None:
    assert len(NOTEBOOKS) == 12
    for stem in NOTEBOOKS:
        tests = list((SOURCE / "tests" / stem).glob("test_*.py"))
        assert tests, f"notebooks/tests/{stem}/ has no test_*.py file"


@pytest.mark.parametrize("stem", NOTEBOOKS)
def test_assign_writes_both_versions_and_the_tests(release: Path, stem: str) -> None:
    student = read_notebook(release / "student" / f"{stem}.ipynb")
    instructor = read_notebook(release / "instructor" / f"{stem}.ipynb")
    assert (release / "instructor" / "tests" / stem).is_dir()
    student_code = "\n".join(c.source for c in student.cells if c.cell_type == "code")
    instructor_code = "\n".join(c.source for c in instructor.cells if c.cell_type == "code")
    assert "raise NotImplementedError()" in student_code
    for code in (student_code, instructor_code):
        assert "BEGIN SOLUTION" not in code and "END SOLUTION" not in code
    assert "raise NotImplementedError()" not in instructor_code
    assert len(student.cells) == len(instructor.cells)


@pytest.mark.parametrize("stem", NOTEBOOKS)
def test_instructor_version_scores_full_marks(graded, stem: str) -> None:
    results, seconds = graded(stem, "instructor")
    failed = {t["name"]: t["output"] for t in results["tests"] if t["status"] != "passed"}
    assert failed == {}
    full = sum(t["max_score"] for t in results["tests"])
    assert results["score"] == full > 0
    assert results["output"] == ""  # every cell of the notebook ran without an error
    visibilities = {t["visibility"] for t in results["tests"]}
    assert "visible" in visibilities
    print(f"{stem}: instructor version graded {results['score']:g}/{full:g} in {seconds:.1f} s")
    assert seconds < NOTEBOOK_BUDGET_S, (
        f"grading {stem} took {seconds:.0f} s; a notebook must execute and grade in under "
        f"{NOTEBOOK_BUDGET_S:.0f} s"
    )


@pytest.mark.parametrize("stem", NOTEBOOKS)
def test_student_version_runs_to_the_end_and_scores_less(graded, stem: str) -> None:
    results, seconds = graded(stem, "student")
    full = sum(t["max_score"] for t in results["tests"])
    assert results["score"] < full
    assert results["output"] == ""  # the stubs stop no cell: the notebook runs to its end
    failed = [t["output"] for t in results["tests"] if t["status"] == "failed"]
    assert failed and all("Not implemented yet" in o for o in failed), failed
    print(f"{stem}: student version graded {results['score']:g}/{full:g} in {seconds:.1f} s")


def test_a_planted_mistake_costs_exactly_its_points(release: Path) -> None:
    """Notebook 2 answered with tan's rule missing the incoming tangent (a .py file)."""
    stem = "02-dual-numbers-forward-mode"
    results = grade(ROOT / "tests" / "notebooks" / "planted" / "nb02_forgot_tangent.py",
                    release / "instructor" / "tests" / stem, timeout=30,
                    total_timeout=NOTEBOOK_BUDGET_S, user=SANDBOX_USER)
    validate_results(results)
    tests = {t["name"].split("::")[-1]: t for t in results["tests"]}
    lost = {name for name, t in tests.items() if t["status"] != "passed"}
    assert lost == {"test_tan_rule", "test_tan_rule_on_arrays"}
    assert results["score"] == sum(t["max_score"] for t in results["tests"]) - 3
    output = tests["test_tan_rule"]["output"]
    assert "tangent of tan_rule at a=-0.3, da=2 differs" in output
    assert "multiply by the incoming tangent" in output
    assert "multiply by the incoming tangent" in tests["test_tan_rule_on_arrays"]["output"]
