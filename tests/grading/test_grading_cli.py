"""`difflab grade` and `difflab assign` as commands: exit codes, messages, files."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner
from grading_helpers import COURSE, write

from difflab.grading import validate_results
from difflab.grading.cli import assign_command, cli, grade_command

DUAL = COURSE / "assignments" / "01_dual_rule"


@pytest.fixture
def runner():
    try:
        return CliRunner(mix_stderr=False)  # click < 8.2 mixes stderr into output by default
    except TypeError:
        return CliRunner()


def test_grade_prints_summary_and_writes_results(runner, tmp_path):
    out = tmp_path / "results.json"
    sub = DUAL / "sample_submissions" / "forgot_tangent.py"
    result = runner.invoke(
        grade_command,
        [str(sub), "--tests", str(DUAL), "--out", str(out), "--timeout", "5"],
    )
    assert result.exit_code == 0, result.output
    assert "FAIL  0/1  test_dual_rules.py::test_sin_rule" in result.stdout
    assert "PASS  2/2  test_dual_rules.py::test_mul_rule" in result.stdout
    assert "Score: 4/8" in result.stdout  # the notebook's hidden block: 1 point
    results = json.loads(out.read_text())
    validate_results(results)
    assert results["score"] == 4


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "missing.py", "submission not found"),
        (lambda p: write(p / "hw.ipynb", "{ not json"), "is not valid JSON"),
    ],
)
def test_bad_submission_exits_2_with_message_and_still_writes_results(
    runner, tmp_path, make, message
):
    out = tmp_path / "results.json"
    result = runner.invoke(
        grade_command, [str(make(tmp_path)), "--tests", str(DUAL), "--out", str(out)]
    )
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stderr.startswith("difflab grade: error: ")
    assert "Traceback" not in result.output
    results = json.loads(out.read_text())
    validate_results(results)
    assert results["score"] == 0 and message in results["output"]


def test_empty_tests_folder_exits_2(runner, tmp_path):
    (tmp_path / "tests").mkdir()
    sub = write(tmp_path / "s.py", "x = 1\n")
    result = runner.invoke(grade_command, [str(sub), "--tests", str(tmp_path / "tests")])
    assert result.exit_code == 2
    assert "no tests in" in result.stderr


def test_missing_tests_option_is_usage_error(runner, tmp_path):
    result = runner.invoke(grade_command, [str(tmp_path / "s.py")])
    assert result.exit_code == 2
    assert "--tests" in result.output


def test_assign_writes_student_and_instructor_versions(runner, tmp_path):
    result = runner.invoke(assign_command, [str(DUAL), "--out", str(tmp_path / "release"),
                                            "--no-validate"])
    assert result.exit_code == 0, result.output
    student = (tmp_path / "release" / "student" / "dual_rules.ipynb").read_text()
    instructor = (tmp_path / "release" / "instructor" / "dual_rules.ipynb").read_text()
    assert "raise NotImplementedError()" in student and "np.cos(a) * da" not in student
    assert "np.cos(a) * da" in instructor and "BEGIN SOLUTION" not in instructor
    assert (tmp_path / "release" / "instructor" / "tests" / "test_dual_rules.py").is_file()
    visible = (tmp_path / "release" / "student" / "tests" / "test_dual_rules.py").read_text()
    assert "hidden=True" not in visible  # the student release has the visible tests only


def test_assign_bad_source_exits_2(runner, tmp_path):
    result = runner.invoke(assign_command, [str(tmp_path / "nope.ipynb"), "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "assignment source not found" in result.stderr
    bad = write(tmp_path / "hw.py", "### BEGIN SOLUTION\nx = 1\n")
    result = runner.invoke(assign_command, [str(bad), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "has no matching '### END SOLUTION'" in result.stderr


def test_module_entry_point_runs(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "difflab.grading", "assign", str(DUAL / "dual_rules.ipynb"),
         "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "student" / "dual_rules.ipynb").is_file()
    assert "grade" in cli.commands and "assign" in cli.commands


def test_terminated_grading_still_leaves_a_valid_results_file(tmp_path):
    import signal
    import time

    write(tmp_path / "tests" / "test_slow.py", '''
        import submission


        def test_fast():
            assert submission.ok()


        def test_forever():
            submission.forever()
    ''')
    sub = write(tmp_path / "sub.py", '''
        def ok():
            return True


        def forever():
            while True:
                pass
    ''')
    out = tmp_path / "results.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "difflab.grading", "grade", str(sub), "--tests",
         str(tmp_path / "tests"), "--out", str(out), "--timeout", "60"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + 120  # generous: a loaded machine starts Python slowly
    while time.monotonic() < deadline:  # wait until test_fast has a result
        if out.exists() and '"status": "passed"' in out.read_text():
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert "partial results were written" in stderr
    results = json.loads(out.read_text())
    validate_results(results)
    assert results["score"] == 1
    assert "interrupted" in results["output"]
