"""A course as an instructor runs it, beyond one grading: Gradescope's zip in a mock tree,
batch grading that matches single grading, the output budget of each test, and points
entered by hand (issues 25 and 30)."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner
from grading_helpers import FAST, write

from difflab.grading import grade
from difflab.grading.cli import cli
from difflab.grading.context import seed_for

SEED_TESTS = '''
import submission
from difflab.grading import points, student_seed


@points(2)
def test_twice():
    assert submission.twice(21) == 42


@points(1)
def test_seeded():
    k = student_seed() % 1000
    assert submission.twice(k) == 2 * k
'''


@pytest.fixture
def runner():
    try:
        return CliRunner(mix_stderr=False)
    except TypeError:
        return CliRunner()


@pytest.fixture
def course(tmp_path):
    root = tmp_path / "hw"
    write(root / "twice.py", '''
        def twice(x):
            ### BEGIN SOLUTION
            return 2 * x
            ### END SOLUTION
    ''')
    write(root / "tests" / "test_twice.py", SEED_TESTS)
    return root


def _mock_gradescope(runner, course, tmp_path, *build_options):
    zip_path = tmp_path / "autograder.zip"
    result = runner.invoke(cli, ["autograder", "build", str(course), "--out", str(zip_path),
                                 "--timeout", "10", *build_options])
    assert result.exit_code == 0, result.output
    root = tmp_path / "autograder"
    shutil.unpack_archive(zip_path, root / "source")
    (root / "submission").mkdir()
    return root


def _run_autograder(root):
    done = subprocess.run(
        ["bash", str(root / "source" / "run_autograder")], capture_output=True, text=True,
        env={**os.environ, "AUTOGRADER_ROOT": str(root), "PYTHON": sys.executable,
             "PYTHONPATH": ""}, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads((root / "results" / "results.json").read_text())


def test_a_mock_run_without_metadata_ignores_the_late_policy_with_a_note(
        runner, course, tmp_path):
    """The guide's two snippets together: built with --late-policy, run without
    submission_metadata.json."""
    root = _mock_gradescope(runner, course, tmp_path, "--late-policy", "per_day=0.1")
    shutil.copy(course / "twice.py", root / "submission")
    results = _run_autograder(root)
    assert results["score"] == 3, results
    assert "late policy was not applied" in results["output"]


def test_run_autograder_never_grades_jupyters_autosave_copy(runner, course, tmp_path):
    root = _mock_gradescope(runner, course, tmp_path)
    (root / "submission" / "twice.py").write_text("def twice(x):\n    return 2 * x\n")
    checkpoints = root / "submission" / ".ipynb_checkpoints"
    checkpoints.mkdir()
    (checkpoints / "twice-checkpoint.py").write_text("def twice(x):\n    return x\n")
    (root / "submission" / ".hidden.py").write_text("def twice(x):\n    return 0\n")
    assert _run_autograder(root)["score"] == 3


def test_batch_seeds_each_student_as_single_grading_does(runner, course, tmp_path):
    """Plain files: the file's name is the student's id for the seed."""
    folder = tmp_path / "subs"
    for name in ("alice", "bob"):
        write(folder / f"{name}.py", "def twice(x):\n    return 2 * x\n")
    gradebook = tmp_path / "grades.csv"
    result = runner.invoke(cli, ["grade", str(folder), "--tests", str(course / "tests"),
                                 "--out", str(gradebook), "--timeout", "5",
                                 "--late-policy", "per_day=0.5"])
    assert result.exit_code == 0, result.output + result.stderr
    rows = {r["student"]: r for r in csv.DictReader(gradebook.open())}
    assert rows["alice"]["score"] == "3" and rows["alice"]["status"] == "graded"
    for name in ("alice", "bob"):
        batch = json.loads((tmp_path / "grades_results" / f"{name}.json").read_text())
        single = grade(folder / f"{name}.py", course / "tests", student_id=name, **FAST)
        assert batch["extra_data"]["seed"] == str(seed_for([name])) == single[
            "extra_data"]["seed"]
        assert "late policy was not applied" in batch["output"]


def test_student_id_on_a_folder_is_refused_and_metadata_is_the_roster(runner, course,
                                                                      tmp_path):
    write(tmp_path / "subs" / "alice.py", "def twice(x):\n    return 2 * x\n")
    args = ["grade", str(tmp_path / "subs"), "--tests", str(course / "tests"), "--out",
            str(tmp_path / "g.csv")]
    result = runner.invoke(cli, [*args, "--student-id", "alice"])
    assert result.exit_code == 2 and "for one submission" in result.stderr
    # for a folder, --metadata is the instructor's mapping of students to records
    result = runner.invoke(cli, [*args, "--metadata", str(tmp_path / "m.json")])
    assert result.exit_code == 2 and "cannot read the metadata" in result.stderr


# -- output budgets ----------------------------------------------------------------------

FLOOD_TESTS = '''
import submission
from difflab.grading import points


@points(1)
def test_1_floods():
    submission.flood()


@points(1)
def test_2_prints_a_little():
    assert submission.square(3) == 9


@points(1)
def test_3_loops():
    submission.spin()


@points(2)
def test_4_after_a_restart():
    assert submission.square(4) == 16
'''

FLOODER = '''
import sys

for _ in range(50):                      # about 50 MB while the file loads
    sys.stdout.write("x" * 2**20 + "\\n")


def flood():
    while True:
        print("y" * 10_000)


def square(x):
    print("squaring", x)
    return x * x


def spin():
    while True:
        pass
'''


@pytest.mark.slow
def test_a_50_mb_printer_that_loops_once_loses_only_that_test(tmp_path):
    """Each test, and each load of the submission, has its own output budget."""
    write(tmp_path / "tests" / "test_flood.py", FLOOD_TESTS)
    student = write(tmp_path / "flood.py", FLOODER)
    results = grade(student, tmp_path / "tests", **FAST)
    tests = {t["name"].split("::")[-1]: t for t in results["tests"]}
    assert tests["test_1_floods"]["score"] == 0
    assert "printed (or wrote) more than the grader keeps" in tests["test_1_floods"]["output"]
    assert tests["test_2_prints_a_little"]["score"] == 1, tests["test_2_prints_a_little"]
    assert "squaring 3" in tests["test_2_prints_a_little"]["output"] or tests[
        "test_2_prints_a_little"]["status"] == "passed"
    assert tests["test_3_loops"]["extra_data"]["reason"] == "timeout"
    assert tests["test_4_after_a_restart"]["score"] == 2, tests["test_4_after_a_restart"]
    assert results["score"] == 3
    assert len(json.dumps(results)) < 60_000  # what is kept stays small


def test_printing_too_much_while_loading_says_so(tmp_path):
    write(tmp_path / "tests" / "test_flood.py", FLOOD_TESTS)
    student = write(tmp_path / "huge.py", '''
        import sys
        for _ in range(80):
            sys.stdout.write("x" * 2**20 + "\\n")
    ''')
    results = grade(student, tmp_path / "tests", **{**FAST, "total_timeout": 60})
    assert "printed (or wrote) more than the grader keeps" in results["output"], results[
        "output"]
    assert "Errno 27" not in json.dumps(results)


# -- questions graded by hand ---------------------------------------------------------

WRITTEN = ("**Q2.** Why does forward mode need one pass per input?\n\n"
           "### BEGIN SOLUTION q2 (2 points)\nEach pass carries one tangent.\n"
           "### END SOLUTION")


def test_written_answers_are_collected_scored_and_kept_in_the_gradebook(runner, tmp_path):
    import nbformat

    source = tmp_path / "hw" / "forward.ipynb"
    source.parent.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("def twice(x):\n    ### BEGIN SOLUTION\n"
                                          "    return 2 * x\n    ### END SOLUTION"),
                nbformat.v4.new_markdown_cell(WRITTEN)]
    nbformat.write(nb, source)
    write(tmp_path / "hw" / "tests" / "test_twice.py", SEED_TESTS)
    release = tmp_path / "release"
    assert runner.invoke(cli, ["assign", str(tmp_path / "hw"), "--out",
                               str(release)]).exit_code == 0
    student_nb = nbformat.read(release / "student" / "forward.ipynb", as_version=4)
    assert "Each pass carries" not in student_nb.cells[1].source
    subs = tmp_path / "subs"
    for name, answer in (("alice", "One tangent per pass, so n passes."), ("bob", None)):
        mine = nbformat.read(release / "student" / "forward.ipynb", as_version=4)
        mine.cells[0].source = "def twice(x):\n    return 2 * x"
        mine.cells.insert(0, nbformat.v4.new_markdown_cell("my notes"))  # cells move
        if answer:
            mine.cells[2].source = answer
        (subs / name).mkdir(parents=True)
        nbformat.write(mine, subs / name / "forward.ipynb")
    grades = tmp_path / "grades.csv"
    result = runner.invoke(cli, ["grade", str(subs), "--tests", str(tmp_path / "hw"),
                                 "--out", str(grades), "--timeout", "5"])
    assert result.exit_code == 0, result.output + result.stderr

    result = runner.invoke(cli, ["manual", "collect", str(subs), "--assignment",
                                 str(tmp_path / "hw"), "--out", str(tmp_path / "manual")])
    assert result.exit_code == 0, result.output + result.stderr
    answers = (tmp_path / "manual" / "answers.md").read_text()
    assert "One tangent per pass" in answers and "*(no answer)*" in answers
    scores = tmp_path / "manual" / "scores.csv"
    assert scores.read_text().splitlines() == ["student,question,points,max_points,comment",
                                               "alice,q2,,2,", "bob,q2,,2,"]
    # points through the command, and one too many refused
    result = runner.invoke(cli, ["manual", "score", str(scores), "alice", "q2", "1.5",
                                 "--comment", "Say why a pass carries one tangent."])
    assert result.exit_code == 0, result.stderr
    result = runner.invoke(cli, ["manual", "score", str(scores), "bob", "q2", "3"])
    assert result.exit_code == 2 and "from 0 to 2" in result.stderr
    result = runner.invoke(cli, ["manual", "apply", str(scores), "--gradebook", str(grades)])
    assert result.exit_code == 0, result.stderr
    rows = {r["student"]: r for r in csv.DictReader(grades.open())}
    assert rows["alice"]["manual: q2"] == "1.5" and rows["alice"]["score"] == "4.5"
    assert rows["alice"]["max_score"] == "5" and rows["alice"]["status"] == "graded"
    assert rows["bob"]["status"] == "graded, manual pending"
    alice = json.loads((tmp_path / "grades_results" / "alice.json").read_text())
    written = [t for t in alice["tests"] if t["extra_data"].get("manual")]
    assert [(t["name"], t["score"], t["max_score"]) for t in written] == [
        ("q2 (graded by hand)", 1.5, 2.0)]
    assert alice["score"] == 4.5 and "one tangent" in written[0]["output"]
    # entered in the file by hand, applied again: replaced, not added twice
    scores.write_text(scores.read_text().replace("bob,q2,,2,", "bob,q2,2,2,Good."))
    assert runner.invoke(cli, ["manual", "apply", str(scores), "--gradebook",
                               str(grades)]).exit_code == 0
    rows = {r["student"]: r for r in csv.DictReader(grades.open())}
    assert rows["bob"]["score"] == "5" and rows["bob"]["status"] == "graded"
    assert rows["alice"]["score"] == "4.5"
    # a regrade of the class with --manual keeps the points
    result = runner.invoke(cli, ["grade", str(subs), "--tests", str(tmp_path / "hw"),
                                 "--out", str(grades), "--timeout", "5",
                                 "--manual", str(scores)])
    assert result.exit_code == 0, result.stderr
    rows = {r["student"]: r for r in csv.DictReader(grades.open())}
    assert rows["alice"]["score"] == "4.5" and rows["bob"]["manual: q2"] == "2"


def test_bad_manual_scores_name_the_row(tmp_path):
    from difflab.grading.errors import GradingInputError
    from difflab.grading.manual import read_scores

    path = tmp_path / "scores.csv"
    path.write_text("student,question,points,max_points,comment\nalice,q2,lots,2,\n")
    with pytest.raises(GradingInputError, match=r"row 2 \(alice, q2\): points is not a number"):
        read_scores(path)
    path.write_text("student,question,points\n")
    with pytest.raises(GradingInputError, match="lacks the columns"):
        read_scores(path)


# -- messages -------------------------------------------------------------------------


def test_check_runs_the_works_own_tests_says_a_load_error_once_and_speaks_json(
        runner, tmp_path):
    for name in ("hw1", "hw2"):
        write(tmp_path / "tests" / f"test_{name}.py", f'''
            import submission
            from difflab.grading import points, subcheck


            def test_{name}_a():
                assert submission.f(1) == 2


            def test_{name}_b():
                assert submission.f(2) == 4


            @points(2, partial=True)
            def test_{name}_parts():
                with subcheck("one"):
                    assert submission.f(3) == 6
                with subcheck("two"):
                    assert submission.f(4) == 0
        ''')
    work = write(tmp_path / "hw1.py", "def f(x):\n    return 2 * x\n")
    result = runner.invoke(cli, ["check", str(work)])
    assert "of 3 visible tests passed" in result.output and "hw2" not in result.output
    assert "PART  test_hw1.py::test_hw1_parts  (1/2)" in result.output
    summary = runner.invoke(cli, ["grade", str(work), "--tests", str(tmp_path / "tests"),
                                  "--timeout", "5"])
    assert "PART  1/2" in summary.output and "FAIL  1/2" not in summary.output
    broken = write(tmp_path / "hw2.py", "raise RuntimeError('at import')\n")
    result = runner.invoke(cli, ["check", str(broken)])
    assert result.exit_code == 1
    assert result.output.count("RuntimeError: at import") == 1, result.output
    result = runner.invoke(cli, ["check", str(work), "--json"])
    assert json.loads(result.output)["score"] == 3


@pytest.mark.slow
def test_setup_sh_installs_into_a_venv_and_run_autograder_uses_it(runner, course, tmp_path):
    """Gradescope's layout, a fresh venv from the system's Python (seeing its packages, so
    no download is needed here), then a submission graded with that venv."""
    root = _mock_gradescope(runner, course, tmp_path)
    done = subprocess.run(
        ["bash", str(root / "source" / "setup.sh")], capture_output=True, text=True,
        env={**os.environ, "AUTOGRADER_ROOT": str(root), "SETUP_APT": "0",
             "SETUP_PYTHON": sys.executable, "PIP_NO_INDEX": "1",
             "SETUP_VENV_OPTIONS": "--system-site-packages"}, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (root / "venv" / "bin" / "python").exists()
    assert not os.stat(root / "source" / "tests").st_mode & 0o077
    shutil.copy(course / "twice.py", root / "submission")
    env = {k: v for k, v in os.environ.items() if k != "PYTHON"}
    done = subprocess.run(["bash", str(root / "source" / "run_autograder")],
                          capture_output=True, text=True, timeout=300,
                          env={**env, "AUTOGRADER_ROOT": str(root), "PYTHONPATH": ""})
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads((root / "results" / "results.json").read_text())["score"] == 3


def test_setup_sh_never_installs_into_the_system_python(runner, course, tmp_path):
    root = _mock_gradescope(runner, course, tmp_path)
    setup = (root / "source" / "setup.sh").read_text()
    installs = [line for line in setup.splitlines() if "pip" in line and "install" in line
                and not line.lstrip().startswith("#")]
    assert installs and all("venv" in line or "PIP[@]" in line for line in installs), installs
    assert "python3-venv" in setup and "numpy>=" in setup  # the fallback to ranges


# -- the gradebook: feedback, regrading one student, fixes, statistics, export -----------

ADD_TESTS = '''
import submission
from difflab.grading import points


@points(2)
def test_add():
    assert submission.add(2, 3) == 5


@points(1)
def test_broken():
    assert submission.add(1, 1) == 3   # the instructor's mistake
'''


def test_gradebook_feedback_regrade_adjust_stats_and_canvas(runner, tmp_path):
    tests = write(tmp_path / "tests" / "test_add.py", ADD_TESTS).parent
    subs = tmp_path / "subs"
    write(subs / "alice.py", "def add(a, b):\n    return a + b\n")
    write(subs / "bob.py", "def add(a, b):\n    return a - b\n")
    grades = tmp_path / "grades.csv"
    assert runner.invoke(cli, ["grade", str(subs), "--tests", str(tests), "--out",
                               str(grades), "--timeout", "5"]).exit_code == 0
    feedback = (tmp_path / "grades_results" / "bob.md").read_text()
    assert feedback.startswith("# Feedback for bob: 0/3")
    assert "## FAIL test_add.py::test_add: 0/2" in feedback
    # bob fixes his file: regrade him alone, alice's row stays as it was
    write(subs / "bob.py", "def add(a, b):\n    return b + a\n")
    alice_before = (tmp_path / "grades_results" / "alice.json").stat().st_mtime_ns
    result = runner.invoke(cli, ["grade", str(subs), "--tests", str(tests), "--out",
                                 str(grades), "--timeout", "5", "--only", "bob"])
    assert result.exit_code == 0, result.stderr
    rows = {r["student"]: r for r in csv.DictReader(grades.open())}
    assert rows["bob"]["score"] == "2" and rows["alice"]["score"] == "2"
    assert (tmp_path / "grades_results" / "alice.json").stat().st_mtime_ns == alice_before
    # the broken test: dropped for everyone (or given to everyone)
    result = runner.invoke(cli, ["gradebook", "adjust", str(grades), "--give",
                                 "test_add.py::test_broken"])
    assert result.exit_code == 0, result.stderr
    rows = {r["student"]: r for r in csv.DictReader(grades.open())}
    assert rows["alice"]["score"] == "3" and rows["alice"]["max_score"] == "3"
    result = runner.invoke(cli, ["gradebook", "adjust", str(grades), "--exclude",
                                 "test_add.py::test_broken"])
    assert result.exit_code == 0, result.stderr
    rows = {r["student"]: r for r in csv.DictReader(grades.open())}
    assert rows["alice"]["score"] == "2" and rows["alice"]["max_score"] == "2"
    assert "test_add.py::test_broken" not in rows["alice"]
    alice = json.loads((tmp_path / "grades_results" / "alice.json").read_text())
    assert alice["score"] == 2 and len(alice["tests"]) == 1
    result = runner.invoke(cli, ["gradebook", "adjust", str(grades), "--set",
                                 "bob:test_add.py::test_add=1.5"])
    assert result.exit_code == 0, result.stderr
    bob = json.loads((tmp_path / "grades_results" / "bob.json").read_text())
    assert bob["score"] == 1.5 and "set by the grader to 1.5" in bob["tests"][0]["output"]
    result = runner.invoke(cli, ["gradebook", "adjust", str(grades), "--set",
                                 "bob:test_add.py::test_add=9"])
    assert result.exit_code == 2 and "from 0 to 2" in result.stderr
    result = runner.invoke(cli, ["gradebook", "adjust", str(grades), "--exclude", "nope"])
    assert result.exit_code == 2 and "not tests of grades.csv: nope" in result.stderr
    stats = runner.invoke(cli, ["gradebook", "stats", str(grades)])
    assert "2 students: mean 1.75, median 1.75" in stats.output, stats.output
    assert "test_add.py::test_add: mean 1.75" in stats.output
    result = runner.invoke(cli, ["gradebook", "export", str(grades), "--canvas",
                                 str(tmp_path / "canvas.csv"), "--assignment", "HW 2"])
    assert result.exit_code == 0, result.stderr
    canvas = list(csv.reader((tmp_path / "canvas.csv").open()))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "HW 2"]
    assert canvas[1][0] == "Points Possible" and canvas[1][-1] == "2"
    assert ["alice", "", "", "alice", "", "2"] in canvas
    assert ["bob", "", "", "bob", "", "1.5"] in canvas


def test_gradebook_has_tag_totals_and_the_score_before_the_late_penalty(tmp_path):
    from difflab.grading import LatePolicy
    from difflab.grading.batch import grade_batch, read_gradebook

    write(tmp_path / "tests" / "test_tags.py", '''
        import submission
        from difflab.grading import points


        @points(2, tags=["q1"])
        def test_a():
            assert submission.add(1, 2) == 3


        @points(1, tags=["q1", "edge"])
        def test_b():
            assert submission.add(0, 0) == 1
    ''')
    subs = tmp_path / "subs"
    write(subs / "ada" / "hw.py", "def add(a, b):\n    return a + b\n")
    roster = tmp_path / "metadata.json"  # the instructor's, never the student's folder's
    roster.write_text(json.dumps({"ada": {
        "created_at": "2026-03-04T10:00:00+00:00", "users": [{"id": 7}],
        "assignment": {"due_date": "2026-03-03T10:00:00+00:00"}}}))
    rows = grade_batch(subs, tmp_path / "tests", tmp_path / "grades.csv", metadata=roster,
                       late_policy=LatePolicy(per_day=0.5), **FAST)
    (ada,) = rows
    assert ada.status == "late" and ada.late_days == 1 and ada.score_before_late == 2
    assert ada.score == 1 and ada.tags == {"q1": 2.0, "edge": 0.0}
    header = (tmp_path / "grades.csv").read_text().splitlines()[0]
    assert header.startswith("student,name,email,sid,score,max_score,status,"
                             "score_before_late,late_days,tag: q1,tag: edge,")
    assert read_gradebook(tmp_path / "grades.csv") == rows
