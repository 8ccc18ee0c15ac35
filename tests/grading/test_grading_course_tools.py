"""A course end to end: the student release and self-check, partial credit, a class graded
in one batch, the Gradescope zip, per-student seeds, the late policy and the leaderboard.

Each test grades through the public entry points (the command line or ``grade``), on the
trusted-process design: student code only ever runs in the sandbox.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile

import pytest
from click.testing import CliRunner
from grading_helpers import COURSE, FAST, by_name, write

from difflab.grading import LatePolicy, validate_results
from difflab.grading.cli import cli
from difflab.grading.context import lateness, seed_for
from difflab.grading.release import strip_hidden_tests

CUSTOM = COURSE / "assignments" / "02_custom_function"
HIDDEN_NAMES = ("test_legendre3_backward_matrix", "test_sigmoid_inside_a_bigger_graph")


@pytest.fixture
def runner():
    try:
        return CliRunner(mix_stderr=False)  # click < 8.2 mixes stderr into output by default
    except TypeError:
        return CliRunner()


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """``difflab assign`` of assignment 02: student/ (with visible tests) and instructor/."""
    out = tmp_path_factory.mktemp("release")
    result = CliRunner().invoke(cli, ["assign", str(CUSTOM), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


# -- the student release and the self-check ---------------------------------------------


def test_student_release_has_the_visible_tests_and_no_hidden_one(release):
    student = (release / "student" / "tests" / "test_custom_function.py").read_text()
    instructor = (release / "instructor" / "tests" / "test_custom_function.py").read_text()
    for name in HIDDEN_NAMES:
        assert name in instructor
        assert name not in student
    assert "hidden=True" not in student
    assert "def test_legendre3_backward()" in student and "def test_sigmoid_backward()" in student
    compile(student, "test_custom_function.py", "exec")


def test_hidden_test_markers_and_pytestmark_are_left_out():
    source = '''
import submission
from difflab.grading import points

@points(1)
def test_seen():
    assert submission.f() == 1

### BEGIN HIDDEN TESTS
SECRET = 31337
### END HIDDEN TESTS

@points(2, visibility="after_published")
class TestLater:
    def test_it(self):
        assert submission.f() == SECRET
'''
    kept = strip_hidden_tests(source)
    assert "test_seen" in kept and "31337" not in kept and "TestLater" not in kept
    assert strip_hidden_tests("from difflab.grading import points\n"
                              "pytestmark = points(1, hidden=True)\n") is None


def _check(runner, work, tests):
    return runner.invoke(cli, ["check", str(work), "--tests", str(tests), "--timeout", "5"])


def test_check_passes_a_correct_notebook(runner, release):
    correct = release / "instructor" / "custom_function.ipynb"
    result = _check(runner, correct, release / "student" / "tests")
    assert result.exit_code == 0, result.output
    assert "4 of 4 visible tests passed" in result.output
    assert not any(name in result.output for name in HIDDEN_NAMES)


def test_check_explains_what_is_wrong_in_a_wrong_notebook(runner, release, tmp_path):
    import nbformat

    notebook = nbformat.read(release / "instructor" / "custom_function.ipynb", as_version=4)
    for cell in notebook.cells:  # plant the sample's mistake: a backward that forgets a factor
        if cell.cell_type == "code" and "class Sigmoid" in cell.source:
            cell.source = cell.source.replace("* (1 - s)", "")
    wrong = tmp_path / "custom_function.ipynb"
    nbformat.write(notebook, wrong)
    result = _check(runner, wrong, release / "student" / "tests")
    assert result.exit_code == 1, result.output
    assert "FAIL  test_custom_function.py::test_sigmoid_backward" in result.output
    assert "differs at element" in result.output
    assert "PASS  test_custom_function.py::test_legendre3_backward" in result.output


def test_check_by_question_and_without_tests(runner, release, tmp_path):
    correct = release / "instructor" / "custom_function.ipynb"
    result = runner.invoke(cli, ["check", str(correct), "--tests",
                                 str(release / "student" / "tests"), "-q", "sigmoid"])
    assert result.exit_code == 0, result.output
    assert "2 of 2 visible tests passed" in result.output
    lonely = write(tmp_path / "alone" / "hw.py", "x = 1\n")
    result = runner.invoke(cli, ["check", str(lonely)])
    assert result.exit_code == 2
    assert "no tests folder found" in result.stderr


# -- partial credit and Gradescope's fields ----------------------------------------------

PARTIAL_TESTS = '''
import numpy as np
import submission
from difflab.grading import leaderboard, points, student_seed, subcheck
from difflab.grading.checks import assert_close


@points(4, partial=True, number="2.1", tags=["q1"], output_format="md")
def test_elements():
    x = np.arange(8.0)
    assert_close(submission.double(x), 2 * x, what="double(x)")


@points(2)
def test_elements_all_or_nothing():
    x = np.arange(8.0)
    assert_close(submission.double(x), 2 * x, what="double(x)")


@points(3, partial=True)
def test_parts():
    with subcheck("square", weight=2):
        assert submission.square(3) == 9
    with subcheck("cube"):
        assert submission.cube(2) == 8, "cube(2) should be 8"


@points(1, extra_credit=True)
def test_bonus():
    leaderboard("squares per second", 1234.5)
    assert submission.square(2) == 4


@points(1)
def test_seed():
    assert submission.echo(student_seed()) == {seed}
'''

PARTIAL_SUB = '''
import numpy as np


def double(x):
    y = 2 * np.asarray(x)
    y[[1, 5]] = 0.0  # two of eight elements wrong
    return y


def square(x):
    return x * x


def cube(x):
    return 0


def echo(v):
    return v
'''

METADATA = {
    "created_at": "2026-11-20T10:30:00.123456789-08:00",
    "assignment": {"due_date": "2026-11-18T23:59:00.000000-08:00", "id": 5},
    "users": [{"id": 4242, "email": "student@example.org", "name": "A Student"}],
}


@pytest.fixture(scope="module")
def partial(tmp_path_factory):
    root = tmp_path_factory.mktemp("partial")
    seed = seed_for(["4242"])
    tests = write(root / "tests" / "test_partial.py", PARTIAL_TESTS.replace("{seed}", str(seed)))
    sub = write(root / "sub.py", PARTIAL_SUB)
    meta = root / "submission_metadata.json"
    meta.write_text(json.dumps(METADATA))
    from difflab.grading import grade

    return grade(sub, tests.parent, root / "results.json", metadata=meta,
                 late_policy=LatePolicy(per_day=0.1, max_days=3), **FAST)


def test_partial_credit_is_the_fraction_of_elements_right(partial):
    test = by_name(partial)["test_elements"]
    assert test["status"] == "failed"
    assert test["score"] == pytest.approx(4 * 6 / 8)
    assert "2 of 8 elements differ" in test["output"]
    assert by_name(partial)["test_elements_all_or_nothing"]["score"] == 0


def test_partial_credit_by_named_subchecks(partial):
    test = by_name(partial)["test_parts"]
    assert test["status"] == "failed"
    assert test["score"] == pytest.approx(2.0)  # square (weight 2) of 3 shares
    assert "[cube] cube(2) should be 8" in test["output"]


def test_gradescope_fields_extra_credit_seed_late_and_leaderboard(partial):
    validate_results(partial)
    tests = by_name(partial)
    assert tests["test_elements"]["number"] == "2.1"
    assert tests["test_elements"]["tags"] == ["q1"]
    assert tests["test_elements"]["output_format"] == "md"
    assert tests["test_bonus"]["max_score"] == 0 and tests["test_bonus"]["score"] == 1
    assert tests["test_seed"]["status"] == "passed", tests["test_seed"]["output"]
    raw = 3 + 0 + 2 + 1 + 1
    assert partial["extra_data"]["late"]["days"] == 2
    assert partial["score"] == pytest.approx(raw * 0.8)
    assert "2 day(s) late" in partial["output"]
    assert partial["leaderboard"] == [
        {"name": "squares per second", "value": 1234.5, "order": "desc"}]


def test_late_policy_grace_extensions_and_limits():
    policy = LatePolicy.parse("per_day=0.25,max_days=2,grace_minutes=30")
    on_time = dict(METADATA, created_at="2026-11-19T00:20:00-08:00")
    assert policy.factor(lateness(on_time)) == (1.0, 0)
    assert policy.factor(lateness(METADATA)) == (0.5, 2)
    assert policy.factor(lateness(dict(METADATA, created_at="2026-11-22T10:00:00Z")))[0] == 0
    extended = dict(METADATA, users=[{"id": 1, "assignment": {
        "due_date": "2026-11-21T23:59:00-08:00"}}])
    assert policy.factor(lateness(extended)) == (1.0, 0)
    with pytest.raises(ValueError, match="per_day=F"):
        LatePolicy.parse("ten percent")


def test_reproducing_a_students_variant(runner, tmp_path):
    seed = seed_for(["4242"])
    tests = write(tmp_path / "tests" / "test_seed.py", '''
        import submission
        from difflab.grading import student_seed


        def test_seed():
            assert submission.echo(student_seed()) == SEED
    '''.replace("SEED", str(seed)))
    sub = write(tmp_path / "sub.py", "def echo(v):\n    return v\n")
    result = runner.invoke(cli, ["grade", str(sub), "--tests", str(tests.parent),
                                 "--student-id", "4242", "--timeout", "5"])
    assert result.exit_code == 0, result.output
    assert "PASS" in result.output and "Score: 1/1" in result.output


# -- a class in one batch ----------------------------------------------------------------

VALUE_TESTS = '''
import submission
from difflab.grading import points


@points(2)
def test_add():
    assert submission.add(2, 3) == 5


@points(1)
def test_neg():
    assert submission.add(-1, -1) == -2
'''


def test_batch_grades_a_class_into_one_gradebook(runner, tmp_path):
    tests = write(tmp_path / "tests" / "test_add.py", VALUE_TESTS).parent
    subs = tmp_path / "submissions"
    write(subs / "alice.py", "def add(a, b):\n    return a + b\n")
    write(subs / "bob.py", "def add(a, b):\n    return a - b\n")
    write(subs / "carol" / "hw.py", "import os\nos._exit(3)\n")
    write(subs / "dave.py", "def add(a, b):\n    while True:\n        pass\n")
    (subs / "erin").mkdir()  # a folder without a submission
    out = tmp_path / "grades.csv"
    result = runner.invoke(cli, ["grade", str(subs), "--tests", str(tests), "--out", str(out),
                                 "--timeout", "3", "--jobs", "2"])
    assert result.exit_code == 0, (result.output, result.stderr)
    rows = {r["student"]: r for r in csv.DictReader(out.open())}
    assert list(rows) == ["alice", "bob", "carol", "dave", "erin"]
    assert rows["alice"]["score"] == "3" and rows["alice"]["status"] == "graded"
    assert rows["bob"]["score"] == "0"  # a - b: add(2, 3) is -1 and add(-1, -1) is 0
    assert rows["carol"]["status"] == "could not load" and rows["carol"]["score"] == "0"
    assert rows["dave"]["score"] == "0" and rows["dave"]["status"] == "graded"
    assert rows["erin"]["status"] == "no submission"
    assert rows["alice"]["test_add.py::test_add"] == "2"
    for name in rows:
        results = json.loads((tmp_path / "grades_results" / f"{name}.json").read_text())
        validate_results(results)
    dave = json.loads((tmp_path / "grades_results" / "dave.json").read_text())
    assert {t["extra_data"]["reason"] for t in dave["tests"]} == {"timeout"}


def test_batch_needs_a_csv(runner, tmp_path):
    tests = write(tmp_path / "tests" / "test_add.py", VALUE_TESTS).parent
    write(tmp_path / "subs" / "a.py", "x = 1\n")
    result = runner.invoke(cli, ["grade", str(tmp_path / "subs"), "--tests", str(tests)])
    assert result.exit_code == 2 and "--out grades.csv" in result.stderr


# -- the tests folder guard ----------------------------------------------------------------


def test_a_huge_tests_folder_is_refused_without_walking_it(runner, tmp_path):
    big = tmp_path / "big"
    for i in range(30):
        folder = big / f"d{i}"
        folder.mkdir(parents=True)
        for j in range(80):
            (folder / f"f{j}.txt").touch()
    sub = write(tmp_path / "sub.py", "x = 1\n")
    result = runner.invoke(cli, ["grade", str(sub), "--tests", str(big)])
    assert result.exit_code == 2
    assert "more than 2000 files" in result.stderr


def test_a_tests_folder_vanishing_while_read_is_a_clear_error(runner, tmp_path, monkeypatch):
    from difflab.grading import runner as grading_runner

    tests = write(tmp_path / "tests" / "sub" / "test_x.py", "def test_x():\n    pass\n")
    real = os.scandir

    def scandir(path):
        if str(path).endswith("sub"):
            raise FileNotFoundError(path)
        return real(path)

    monkeypatch.setattr(grading_runner.os, "scandir", scandir)
    sub = write(tmp_path / "sub.py", "x = 1\n")
    result = runner.invoke(cli, ["grade", str(sub), "--tests", str(tests.parent.parent)])
    assert result.exit_code == 2
    assert "vanished" in result.stderr


# -- Gradescope's zip -----------------------------------------------------------------------


def test_autograder_zip_grades_a_submission_in_a_mock_gradescope_tree(runner, tmp_path, release):
    zip_path = tmp_path / "autograder.zip"
    result = runner.invoke(cli, ["autograder", "build", str(CUSTOM), "--out", str(zip_path),
                                 "--timeout", "10", "--late-policy", "per_day=0.5,max_days=1"])
    assert result.exit_code == 0, result.output
    root = tmp_path / "autograder"
    with zipfile.ZipFile(zip_path) as zf:
        names = set(zf.namelist())
        assert {"setup.sh", "run_autograder", "DIFFLAB_VERSION",
                "tests/test_custom_function.py", "difflab/__init__.py",
                "difflab/grading/runner.py"} <= names
        zf.extractall(root / "source")
        mode = zf.getinfo("run_autograder").external_attr >> 16
    assert mode & stat.S_IXUSR
    setup = (root / "source" / "setup.sh").read_text()
    import numpy

    assert f"numpy=={numpy.__version__}" in setup and "go-rwx" in setup
    os.chmod(root / "source" / "run_autograder", 0o755)
    (root / "submission").mkdir()
    shutil.copy(release / "instructor" / "custom_function.ipynb", root / "submission")
    (root / "submission_metadata.json").write_text(json.dumps(METADATA))
    done = subprocess.run(
        ["bash", str(root / "source" / "run_autograder")], capture_output=True, text=True,
        env={**os.environ, "AUTOGRADER_ROOT": str(root), "PYTHON": sys.executable,
             "PYTHONPATH": ""}, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    validate_results(results)
    assert sum(t["score"] for t in results["tests"]) == 9  # full marks, hidden tests included
    assert results["score"] == 0  # two days late, one allowed: the policy from the build
    assert str(root / "source") in done.stdout or "difflab grade" in done.stdout


def test_check_in_a_notebook_checks_the_cells_the_kernel_ran(tmp_path, monkeypatch, capsys):
    """``check("q1")`` in a kernel grades the code the kernel executed (not a file)."""
    IPython = pytest.importorskip("IPython")
    from difflab.grading import check

    write(tmp_path / "tests" / "test_q1.py", '''
        import submission


        def test_add():
            assert submission.add(2, 3) == 5
    ''')
    write(tmp_path / "tests" / "test_q2.py", '''
        import submission


        def test_mul():
            assert submission.mul(2, 3) == 6
    ''')

    class Shell:
        user_ns = {"In": ["", "def add(a, b):\n    return a + b", "%time add(1, 2)",
                          "def mul(a, b):\n    return a + b", "check('q1')"]}

    monkeypatch.setattr(IPython, "get_ipython", lambda: Shell())
    monkeypatch.chdir(tmp_path)
    report = check("q1", timeout=5)
    assert report.passed and [t["name"] for t in report.results["tests"]] == [
        "test_q1.py::test_add"]
    assert "1 of 1 visible tests passed" in capsys.readouterr().out
    assert not check("q2", timeout=5, show=False).passed


def test_gradebook_cells_never_start_a_spreadsheet_formula(tmp_path):
    from difflab.grading.batch import BatchRow, write_gradebook

    path = write_gradebook([BatchRow("=HYPERLINK(\"x\")", 1, 2, "graded", {"@t": 1})],
                           tmp_path / "grades.csv")
    rows = list(csv.reader(path.open()))
    assert rows[0][-1] == "'@t" and rows[1][0].startswith("'=")
