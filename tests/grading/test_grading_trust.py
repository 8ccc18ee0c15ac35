"""Issue 26's attacks: points a student gains, or harm done, *around* the process boundary.

Each test is written as the attack (the student's code, or what a student could upload)
against the grader's public entry points, and failed before the fix it names.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from grading_helpers import FAST, by_name, write

from difflab.grading import grade

ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT, reason="a separate uid exists only when the "
                                "grader runs as root (as in CI and on Gradescope)")

# -- 1. partial credit counts every comparison written, made or not ----------------------

PARTIAL_TESTS = '''
import numpy as np
import submission
from difflab.grading import check_function, check_gradient, points, subcheck
from difflab.grading.checks import assert_close

X = np.array([-1.0, -0.5, 0.5, 1.0, 2.0])


@points(4, partial=True)
def test_cube_whose_backward_raises():
    check_function(submission.Cube, lambda x: x ** 3, [X])


@points(2, partial=True)
def test_error_after_one_right_comparison():
    with subcheck("values"):
        assert_close(submission.cube(X), X ** 3, what="cube(x)")
        assert_close(submission.unfinished(X), X ** 2, what="square(x)")
    with subcheck("again"):
        assert_close(submission.cube(X), X ** 3, what="cube(x) again")


@points(4, partial=True)
def test_exit_in_part_two_of_four():
    with subcheck("one"):
        assert_close(submission.cube(X), X ** 3, what="one")
    with subcheck("two"):
        assert_close(submission.leave(X), X, what="two")
    with subcheck("three"):
        assert_close(submission.cube(X), X ** 3, what="three")
    with subcheck("four"):
        assert_close(submission.cube(X), X ** 3, what="four")


@points(2, partial=True)
def test_two_checks_first_fails():
    assert_close(submission.square_mostly(X), X ** 2, what="square(x)")
    assert_close(submission.cube(X), X ** 3, what="cube(x)")


@points(3, partial=True)
def test_gradient_guide_example():
    check_gradient(lambda x: submission.Cube.apply(x).sum(), [X])


@points(3, partial=True)
def test_gradient_with_reference():
    check_gradient(lambda x: submission.Shy.apply(x).sum(), [X],
                   reference=lambda x: np.sum(x ** 3))
'''

PARTIAL_SUB = '''
import os

import numpy as np
from difflab.autograd import Function


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError()


class Shy(Function):
    """Right only when watched: x**3 when x requires grad, zeros otherwise; no backward."""

    @staticmethod
    def forward(ctx, x):
        return x ** 3 if ctx.needs_input_grad[0] else x * 0.0

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 0.0


def cube(x):
    return np.asarray(x) ** 3


def square_mostly(x):
    y = np.asarray(x) ** 2
    y[0] = 7.0  # one of five elements wrong
    return y


def unfinished(x):
    raise NotImplementedError()


def leave(x):
    os._exit(0)
'''


@pytest.fixture(scope="module")
def partial(tmp_path_factory):
    root = tmp_path_factory.mktemp("partial26")
    tests = write(root / "tests" / "test_partial.py", PARTIAL_TESTS)
    sub = write(root / "sub.py", PARTIAL_SUB)
    return by_name(grade(sub, tests.parent, **FAST))


def test_backward_that_raises_is_a_miss_not_a_removal(partial):
    test = partial["test_cube_whose_backward_raises"]
    assert test["status"] == "failed"
    assert test["score"] == pytest.approx(2.0)  # the forward's 5 of 10 elements declared


def test_subcheck_error_after_a_right_comparison_is_a_miss(partial):
    # "values": one of its two comparisons right (1/2 of weight 1); "again": 1
    assert partial["test_error_after_one_right_comparison"]["score"] == pytest.approx(1.5)


def test_parts_never_reached_stay_in_the_total(partial):
    test = partial["test_exit_in_part_two_of_four"]
    assert test["score"] == pytest.approx(1.0), test["output"]


def test_checks_after_a_failing_one_count_as_missed(partial):
    # square: 4 of 5 right; cube: never reached (was 2 * 4/5, the cube left out)
    assert partial["test_two_checks_first_fails"]["score"] == pytest.approx(2 * 0.8 / 2)


def test_check_gradient_cannot_be_steered_by_requires_grad(partial):
    assert partial["test_gradient_guide_example"]["score"] == 0
    test = partial["test_gradient_with_reference"]
    assert test["status"] == "failed"
    assert "gradient of input 0 (analytic vs reference)" in test["output"]
    assert test["score"] == pytest.approx(3 / 6)  # the sum (1 element) right, 5 gradients not


# -- 3. nothing of a student survives the grading, killed or not -------------------------

SIMPLE_TESTS = '''
import submission
from difflab.grading import points


@points(1)
def test_add():
    assert submission.add(20, 22) == 42
'''


@pytest.fixture
def shared():
    """A file the student's uid may write to (to report what it did), removed after.

    The grader's own file: the grader removes the student's files when the grading ends.
    """
    folder = Path(tempfile.mkdtemp(prefix="difflab-test-"))
    os.chmod(folder, 0o755)
    (folder / "made").touch(mode=0o666)
    os.chmod(folder / "made", 0o666)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def simple(tmp_path):
    return write(tmp_path / "tests" / "test_simple.py", SIMPLE_TESTS).parent


@pytest.mark.slow
def test_killed_grading_leaves_no_files_for_the_next_student(tmp_path, simple, shared):
    tag = f"difflab-leak-{os.getpid()}-{time.monotonic_ns()}"
    sub = write(tmp_path / "leave_files.py", f'''
        import os, pathlib, time
        here = pathlib.Path.cwd()
        (here / "answers.txt").write_text("my answers")
        made = [str(here)]
        for place in ("/tmp", "/dev/shm", "/var/tmp"):
            try:
                pathlib.Path(place, {tag!r}).write_text("for the next student")
                made.append(place + "/" + {tag!r})
            except OSError:
                pass
        pathlib.Path({str(shared)!r}, "made").write_text("\\n".join(made))


        def add(a, b):
            time.sleep(600)    # the grading's budget ends first: the parent kills the worker
    ''')
    results = grade(sub, simple, timeout=30.0, memory_mb=1024, total_timeout=32.0)
    assert results["score"] == 0
    made = (shared / "made").read_text().splitlines()
    folder, others = made[0], made[1:]
    assert not os.path.exists(folder), "the student's folder survived the grading"
    if ROOT:
        assert others, "the attack could not write to /tmp"
        left = [p for p in others if os.path.exists(p)]
        assert not left, f"files left for the next holder of the uid: {left}"
    assert "removes that folder and every file of the uid" in results["extra_data"][
        "isolation"] or not ROOT


# -- 4, 6, 9, 10. a class in one batch: links, forged metadata, private files, one row each

BATCH_TESTS = '''
import submission
from difflab.grading import points, student_seed


@points(2)
def test_add():
    assert submission.add(20, 22) == 42


@points(1)
def test_seed():
    assert submission.echo(student_seed()) == SEED
'''

REFERENCE = '''
def add(a, b):
    return a + b


def echo(v):
    return v
'''

EXPORT = '''
submission_1:
  :submitters:
  - :name: A Student
    :sid: s1
    :email: s1@example.org
  :created_at: 2026-11-20T10:00:00-08:00
  :assignment:
    :due_date: 2026-11-19T12:00:00-08:00
'''

FORGED = {  # the student's own upload: someone else's id, submitted in time
    "created_at": "2026-11-18T10:00:00-08:00",
    "assignment": {"due_date": "2026-11-19T12:00:00-08:00"},
    "users": [{"id": "someone-else"}],
}


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    pytest.importorskip("yaml")
    from difflab.grading import LatePolicy, grade_batch
    from difflab.grading.context import seed_for

    root = tmp_path_factory.mktemp("batch26")
    tests = root / "tests"
    write(tests / "test_q.py", BATCH_TESTS.replace("SEED", str(seed_for(["s1"]))))
    write(tests / "reference.py", REFERENCE)
    subs = root / "subs"
    write(subs / "submission_1" / "hw.py", REFERENCE)
    (subs / "submission_1" / "submission_metadata.json").write_text(json.dumps(FORGED))
    (subs / "submission_2").mkdir()
    os.symlink(tests / "reference.py", subs / "submission_2" / "hw.py")
    os.symlink(tests / "reference.py", subs / "linked.py")
    os.mkfifo(subs / "piped.py")
    (subs / "submission_metadata.yml").write_text(EXPORT)
    gradebook = root / "out" / "grades.csv"
    rows = grade_batch(subs, tests, gradebook, jobs=2, late_policy=LatePolicy(
        per_day=0.5, max_days=3), **FAST)
    return {r.student: r for r in rows}, gradebook


@pytest.mark.slow
def test_links_and_pipes_are_refused_not_followed(batch):
    rows, _ = batch
    for student in ("submission_2", "linked", "piped"):
        assert rows[student].score == 0, (student, rows[student])
        assert rows[student].status.startswith("error"), rows[student].status
    assert "is a link" in rows["submission_2"].status
    assert "not a regular file" in rows["piped"].status


@pytest.mark.slow
def test_seed_and_lateness_come_from_the_export_not_the_students_folder(batch):
    rows, _ = batch
    row = rows["submission_1"]
    assert row.status == "late", row
    assert row.tests == {"test_q.py::test_add": 2, "test_q.py::test_seed": 1}, row.tests
    assert row.score == pytest.approx(3 * 0.5)  # one day late, by the export's dates


@pytest.mark.slow
def test_gradebook_and_results_are_private(batch):
    _, gradebook = batch
    assert stat.S_IMODE(gradebook.stat().st_mode) & 0o077 == 0
    results = gradebook.with_name("grades_results")
    assert stat.S_IMODE(results.stat().st_mode) & 0o077 == 0
    files = list(results.iterdir())
    assert {f.suffix for f in files} == {".json", ".md"}  # the feedback quotes the marks too
    assert all(stat.S_IMODE(f.stat().st_mode) & 0o077 == 0 for f in files)


#: Gradescope's "Export Submissions": one folder per submission, named by its id, and
#: one submission_metadata.yml at the top, in Ruby's YAML (symbol keys, with or without
#: the colon at the top level, timestamps with nanoseconds), a group of two included.
#: The export holds each submission's time but not the assignment's due date.
REAL_EXPORT = """\
:submission_1111111:
  :submitters:
  - :name: Ada Lovelace
    :sid: '0001'
    :email: ada@example.edu
  :created_at: 2026-11-20 10:00:00.123456789 -08:00
  :score: 3.0
  :status: processed
submission_2222222:
  :submitters:
  - :name: Grace Hopper
    :sid: '0002'
    :email: grace@example.edu
  - :name: Alan Turing
    :sid: '0003'
    :email: alan@example.edu
  :created_at: 2026-11-19 11:00:00.000000000 -08:00
  :score: 3.0
  :status: processed
"""


@pytest.mark.slow
def test_a_real_gradescope_export_is_regraded_with_its_seeds_names_and_lateness(tmp_path):
    """Issue 25 (9): the export's yml gives each submission_<id> its submitters (their
    seed, their names in the gradebook) and its time; --due gives the due date."""
    pytest.importorskip("yaml")
    from click.testing import CliRunner

    from difflab.grading.batch import read_gradebook
    from difflab.grading.cli import cli
    from difflab.grading.context import seed_for

    tests = tmp_path / "tests"
    seeds = (seed_for(["0001"]), seed_for(["0002", "0003"]))  # the submitters' sids
    write(tests / "test_q.py", BATCH_TESTS.replace("== SEED", f"in {seeds}"))
    export = tmp_path / "assignment_42_export"
    write(export / "submission_1111111" / "hw.py", REFERENCE)
    write(export / "submission_2222222" / "hw.py", REFERENCE)
    (export / "submission_2222222" / "submission_metadata.json").write_text(json.dumps(
        FORGED))  # the student's own upload: never read
    (export / "submission_metadata.yml").write_text(REAL_EXPORT)
    gradebook = tmp_path / "grades.csv"
    runner = CliRunner()
    done = runner.invoke(cli, [
        "grade", str(export), "--tests", str(tests), "--out", str(gradebook),
        "--late-policy", "per_day=0.5,max_days=3", "--due", "2026-11-19T12:00:00-08:00",
        "--timeout", "5", "--jobs", "2"])
    assert done.exit_code == 0, done.output
    assert "submission_1111111 (Ada Lovelace)" in done.output
    rows = {row.student: row for row in read_gradebook(gradebook)}
    ada, pair = rows["submission_1111111"], rows["submission_2222222"]
    assert (ada.name, ada.email, ada.sid) == ("Ada Lovelace", "ada@example.edu", "0001")
    assert pair.name == "Grace Hopper; Alan Turing" and pair.sid == "0002; 0003"
    assert ada.tests["test_q.py::test_seed"] == 1 and pair.tests["test_q.py::test_seed"] == 1
    assert ada.status == "late" and ada.late_days == 1 and ada.score == pytest.approx(1.5)
    assert pair.status == "graded" and pair.score == 3  # an hour early, by the export
    with open(gradebook, newline="") as fh:
        header = next(csv.reader(fh))
    assert header[:4] == ["student", "name", "email", "sid"]
    # Canvas gets the names and logins, not the export's folder names
    canvas = tmp_path / "canvas.csv"
    assert runner.invoke(cli, ["gradebook", "export", str(gradebook), "--canvas", str(canvas),
                               "--assignment", "HW"]).exit_code == 0
    lines = list(csv.reader(canvas.open()))
    assert ["Ada Lovelace", "", "0001", "ada@example.edu", "", "1.5"] in lines
    # regrading one submission into the gradebook keeps everyone's names
    done = runner.invoke(cli, [
        "grade", str(export), "--tests", str(tests), "--out", str(gradebook), "--only",
        "submission_2222222", "--timeout", "5", "--due", "2026-11-19T12:00:00-08:00"])
    assert done.exit_code == 0, done.output
    rows = {row.student: row for row in read_gradebook(gradebook)}
    assert rows["submission_1111111"].name == "Ada Lovelace"
    assert rows["submission_2222222"].email == "grace@example.edu; alan@example.edu"


def test_a_due_date_without_a_time_zone_is_refused(tmp_path):
    from difflab.grading import GradingInputError, grade_batch

    write(tmp_path / "subs" / "submission_1" / "hw.py", REFERENCE)
    write(tmp_path / "tests" / "test_q.py", BATCH_TESTS)
    with pytest.raises(GradingInputError, match="no time zone"):
        grade_batch(tmp_path / "subs", tmp_path / "tests", tmp_path / "g.csv",
                    due="2026-11-19T12:00:00")


def test_a_gradebook_written_before_the_names_is_still_read(tmp_path):
    from difflab.grading.batch import read_gradebook

    old = tmp_path / "grades.csv"
    old.write_text("student,score,max_score,status,score_before_late,late_days,t::a\n"
                   "bob,2,3,late,4,1,2\n")
    (row,) = read_gradebook(old)
    assert (row.student, row.score, row.late_days, row.tests, row.name) == (
        "bob", 2.0, 1, {"t::a": 2.0}, "")


def test_two_entries_for_one_student_are_refused(tmp_path):
    from difflab.grading import GradingInputError
    from difflab.grading.batch import find_submissions

    write(tmp_path / "alice" / "hw.py", REFERENCE)
    write(tmp_path / "alice.py", REFERENCE)
    with pytest.raises(GradingInputError, match="alice.py .* both the submission of 'alice'"):
        find_submissions(tmp_path)


def test_similar_names_get_their_own_results_file(tmp_path):
    from difflab.grading import grade_batch

    tests = write(tmp_path / "tests" / "test_q.py", "def test_nothing():\n    pass\n").parent
    write(tmp_path / "subs" / "o'neil.py", "x = 1\n")
    write(tmp_path / "subs" / "o_neil.py", "x = 2\n")
    rows = grade_batch(tmp_path / "subs", tests, tmp_path / "grades.csv", jobs=1, **FAST)
    assert len(rows) == 2
    files = [f.name for f in (tmp_path / "grades_results").iterdir()]
    assert len([f for f in files if f.endswith(".json")]) == 2, files
    assert len([f for f in files if f.endswith(".md")]) == 2, files  # the feedback too


@needs_root
def test_student_cannot_read_the_graders_command_line(tmp_path):
    token = f"results-{os.getpid()}-{time.monotonic_ns()}"
    tests = write(tmp_path / "tests" / "test_ps.py", f'''
        import submission


        def test_no_grader_in_sight():
            seen = submission.command_lines()
            assert "{token}" not in seen, "the grader's command line is visible"
    ''').parent
    sub = write(tmp_path / "ps.py", '''
        import os


        def command_lines():
            seen = []
            for pid in os.listdir("/proc"):
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as fh:
                        seen.append(fh.read().replace(b"\\0", b" ").decode())
                except (OSError, ValueError):
                    pass
            return "\\n".join(seen)
    ''')
    out = tmp_path / f"{token}.json"
    done = subprocess.run(
        [sys.executable, "-m", "difflab.grading", "grade", str(sub), "--tests", str(tests),
         "--out", str(out), "--timeout", "5", "--memory-mb", "1024"],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    results = json.loads(out.read_text())
    assert results["tests"][0]["status"] == "passed", results["tests"][0]["output"]


# -- 5. the isolation warning checks what the student's uid can reach ---------------------


def _course(root: Path) -> Path:
    """The example course's layout: a source notebook with solutions beside tests/."""
    write(root / "02" / "custom_function.ipynb", '{"cells": [], "solution": "x ** 3"}')
    return write(root / "02" / "tests" / "test_q.py", SIMPLE_TESTS).parent


@pytest.fixture
def reachable():
    """A folder in /tmp that any uid may enter (pytest's own tmp_path is private)."""
    folder = Path(tempfile.mkdtemp(prefix="difflab-test-"))
    os.chmod(folder, 0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@needs_root
def test_isolation_warning_sees_solutions_a_student_can_reach(reachable):
    from difflab.grading.sandbox_users import SandboxUser, exposure_warning

    user = SandboxUser("sandbox uid 64099", 64099, 64099)
    tests = _course(reachable)
    # the guide's advice, taken: the assignment's folder private to root
    subprocess.run(["chmod", "-R", "go-rwx", str(tests.parent)], check=True)
    assert exposure_warning(user, tests) == ""
    # the tests locked, the source notebook one folder up readable
    os.chmod(tests.parent, 0o755)
    os.chmod(tests.parent / "custom_function.ipynb", 0o644)
    warning = exposure_warning(user, tests)
    assert "custom_function.ipynb" in warning and "go-rwx" in warning
    # a traversable tests folder (0711) whose files are readable by name
    os.chmod(tests.parent / "custom_function.ipynb", 0o600)
    os.chmod(tests, 0o711)
    os.chmod(tests / "test_q.py", 0o644)
    assert "test_q.py" in exposure_warning(user, tests)


# -- 12. every wait on a student is bounded; student text reaches a terminal escaped ------


@pytest.mark.slow
def test_closing_both_pipes_and_sleeping_costs_only_the_test(tmp_path, simple):
    sub = write(tmp_path / "hangup.py", '''
        import os, time


        def add(a, b):
            for fd in range(3, 256):  # the pipes to the grader among them
                try:
                    os.close(fd)
                except OSError:
                    pass
            time.sleep(600)
    ''')
    results = grade(sub, simple, **dict(FAST, timeout=8.0))  # room to close, on a busy machine
    test = results["tests"][0]
    assert test["score"] == 0
    # the worker stopped it at the test's limit; before, it waited until the parent
    # killed the worker ("the grader's test process stopped", blaming the test)
    assert "closed its connection to the grader" in test["output"], test["output"]
    assert test["extra_data"]["reason"] == "protocol"


def test_student_text_cannot_repaint_the_instructors_terminal(tmp_path, simple):
    sub = write(tmp_path / "paint.py", '''
        def add(a, b):
            raise ValueError("\\x1b]0;owned\\x07\\x1b[1A\\x1b[2K\\rPASS  test_add (1/1)")
    ''')
    done = subprocess.run(
        [sys.executable, "-m", "difflab.grading", "grade", str(sub), "--tests", str(simple),
         "--timeout", "5", "--memory-mb", "1024"],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "ValueError" in done.stdout
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout
    assert "\\x1b[2K" in done.stdout  # shown, escaped


# -- 8. fair under load: one student's processes cannot take a classmate's processor ------

THREE_TESTS = '''
import submission
from difflab.grading import points


@points(1)
def test_add():
    assert submission.add(20, 22) == 42


@points(1)
def test_add_negative():
    assert submission.add(-1000, -337) == -1337


@points(1)
def test_add_zero():
    assert submission.add(0, 0) == 0
'''

SPINNER = '''
import os
import time

for _ in range(60):  # within the process limit, each within its own CPU limit
    if os.fork() == 0:
        os.setsid()  # a session of its own: the scheduler's per-session groups split
        while True:
            pass


def add(a, b):
    time.sleep(10)  # time out: the spinning goes on as long as the grading
    return a + b
'''


HONEST = '''
def add(a, b):
    total = 0
    for i in range(5_000_000):  # a fraction of a second, alone on a processor
        total += i
    return a + b
'''


@pytest.mark.slow
def test_a_fork_and_spin_student_does_not_move_a_classmates_score(tmp_path):
    from difflab.grading import grade_batch

    tests = write(tmp_path / "tests" / "test_add.py", THREE_TESTS).parent
    write(tmp_path / "subs" / "honest.py", HONEST)
    write(tmp_path / "subs" / "spinner.py", SPINNER)
    rows = grade_batch(tmp_path / "subs", tests, tmp_path / "grades.csv", jobs=2,
                       timeout=3.0, memory_mb=1024, total_timeout=60.0)
    honest = next(r for r in rows if r.student == "honest")
    assert honest.score == 3, honest
    spinner = json.loads((tmp_path / "grades_results" / "spinner.json").read_text())
    assert "processes computing at once" in json.dumps(spinner)


# -- 7. the release strips hidden tests by meaning, not by spelling -----------------------

HIDDEN_BY_MEANING = '''
import pytest
import submission
from difflab.grading import points
from difflab.grading import points as worth

secret = points(2, hidden=True)
HIDE = True


class TestVisible:
    @points(1)
    def test_seen(self):
        assert submission.f(1) == 1

    @points(1, hidden=True)
    def test_method_secret(self):
        assert submission.f(2) == 31337001


@secret
def test_alias_secret():
    assert submission.f(3) == 31337002


@worth(1, hidden=True)
def test_imported_alias_secret():
    assert submission.f(4) == 31337003


@points(1, hidden=HIDE)
def test_computed_secret():
    assert submission.f(5) == 31337004


class TestMarked:
    pytestmark = pytest.mark.points(1, visibility="after_due_date")

    def test_class_marked_secret(self):
        assert submission.f(6) == 31337005


class TestAllHidden:
    @secret
    def test_only_method_secret(self):
        assert submission.f(7) == 31337006
'''


def test_release_strips_hidden_tests_by_meaning(tmp_path):
    from difflab.grading import visible_tests

    write(tmp_path / "tests" / "test_q.py", HIDDEN_BY_MEANING)
    visible_tests(tmp_path / "tests", tmp_path / "student")
    released = (tmp_path / "student" / "test_q.py").read_text()
    compile(released, "test_q.py", "exec")
    assert "test_seen" in released
    for n in range(1, 7):
        assert f"3133700{n}" not in released, released
    assert "secret(self)" not in released and "TestMarked" not in released


#: Lines of the solution, each a secret the student release must not hold anywhere.
SOLUTION_LINES = [
    "return 4 * x ** 3  # SOLUTION-CODE-LINE",
    "The tangent carries the derivative SOLUTION-MARKDOWN-LINE",
    "raw solution text SOLUTION-RAW-LINE",
    "SOLUTION-OUTPUT-LINE 108",
    "SOLUTION-WIDGET-STATE 0.8765",
    "def quartic_reference(x):  # SOLUTION-FILE-LINE",
    "instructor notes: SOLUTION-NOTES-LINE",
    "assert quartic(3) == 108  # HIDDEN-BLOCK-LINE",
]
#: A picture of the solution pasted into the markdown answer: its bytes are secret too.
ANSWER_PNG = b"\x89PNG\r\n\x1a\n" + b"SOLUTION-ATTACHMENT-BYTES" * 8
QUESTION_PNG = b"\x89PNG\r\n\x1a\n" + b"the question's figure" * 8


def _leaky_assignment(folder: Path) -> None:
    """An assignment folder with a solution in every place a notebook can hold one."""
    import base64

    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_raw_cell

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    code = new_code_cell(
        "def quartic(x):\n    ### BEGIN SOLUTION\n    " + SOLUTION_LINES[0]
        + "\n    ### END SOLUTION\n\nquartic(3)", execution_count=4, outputs=[
            nbformat.v4.new_output("execute_result", {"text/plain": SOLUTION_LINES[3]},
                                   execution_count=4),
            nbformat.v4.new_output("display_data", {
                "application/vnd.jupyter.widget-view+json": {
                    "model_id": "abc123", "version_major": 2, "version_minor": 0},
                "text/plain": "FloatSlider(value=" + SOLUTION_LINES[4] + ")"})])
    question = new_markdown_cell("Why? ![figure](attachment:question.png)")
    question.attachments = {"question.png": {"image/png": b64(QUESTION_PNG)}}
    answer = new_markdown_cell("### BEGIN SOLUTION\n" + SOLUTION_LINES[1]
                               + "\n![work](attachment:answer.png)\n### END SOLUTION")
    answer.attachments = {"answer.png": {"image/png": b64(ANSWER_PNG)}}
    raw = new_raw_cell("Given text.\n### BEGIN SOLUTION\n" + SOLUTION_LINES[2]
                       + "\n### END SOLUTION")
    hidden = new_code_cell("### BEGIN HIDDEN TESTS\n" + SOLUTION_LINES[7]
                           + "\n### END HIDDEN TESTS")
    nb = new_notebook(cells=[question, code, answer, raw, hidden])
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {
        "state": {"abc123": {"model_name": "FloatSliderModel",
                             "state": {"value": SOLUTION_LINES[4]}}}, "version_major": 2}}
    folder.mkdir(parents=True)
    nbformat.write(nb, str(folder / "hw.ipynb"))
    write(folder / "solution.py", SOLUTION_LINES[5] + "\n    return 4 * x ** 3\n")
    write(folder / "notes.txt", SOLUTION_LINES[6] + "\n")
    write(folder / "data" / "points.csv", "x,y\n1,2\n")
    write(folder / "tests" / "test_q.py", HIDDEN_BY_MEANING)


def _student_release_bytes(release: Path) -> bytes:
    """Every file of the student release, read as bytes, end to end."""
    files = [p for p in sorted((release / "student").rglob("*")) if p.is_file()]
    assert files, "nothing released"
    return b"\n".join(p.read_bytes() for p in files)


def _assert_nothing_secret(everything: bytes) -> None:
    import base64

    for line in SOLUTION_LINES:  # the line, and its tag alone (the line may be re-wrapped)
        for needle in [line] + [w for w in line.split() if w.isupper() and "-" in w]:
            assert needle.encode() not in everything, needle
    for n in range(1, 7):
        assert f"3133700{n}".encode() not in everything  # the hidden tests' lines
    assert b"test_method_secret" not in everything and b"TestMarked" not in everything
    for form in (ANSWER_PNG, base64.b64encode(ANSWER_PNG), b"SOLUTION-ATTACHMENT-BYTES"):
        assert form not in everything
    assert b"widget-state" not in everything and b"abc123" not in everything


@pytest.mark.parametrize("manifest", [None, "hw.ipynb\ndata/*.csv  # the data they load\n"],
                         ids=["no-manifest", "manifest"])
def test_student_release_holds_no_solution_anywhere(tmp_path, manifest):
    """The release strips by meaning: outputs, widget state, attachments, raw cells,
    hidden tests and files beside the notebook never reach the student folder."""
    import nbformat
    from click.testing import CliRunner

    from difflab.grading.cli import cli

    folder = tmp_path / "hw"
    _leaky_assignment(folder)
    if manifest:
        (folder / "manifest.txt").write_text(manifest)
    release = tmp_path / "release"
    result = CliRunner().invoke(cli, ["assign", str(folder), "--out", str(release),
                                      "--no-validate"])
    assert result.exit_code == 0, result.output
    assert "left out of the student release" in result.output
    assert "solution.py" in result.output and "notes.txt" in result.output
    _assert_nothing_secret(_student_release_bytes(release))
    # what students need is there: the question, its figure, the stub, the visible tests
    student = nbformat.read(release / "student" / "hw.ipynb", as_version=4)
    question = student.cells[0]
    assert question.attachments["question.png"]["image/png"]
    assert "raise NotImplementedError()" in student.cells[1].source
    assert student.cells[2].source.startswith("YOUR ANSWER HERE")
    assert student.cells[3].source.startswith("Given text.")
    assert "test_seen" in (release / "student" / "tests" / "test_q.py").read_text()
    assert (release / "student" / "data" / "points.csv").exists() == bool(manifest)
    # the instructor's version keeps the solution and its picture
    instructor = nbformat.read(release / "instructor" / "hw.ipynb", as_version=4)
    assert "answer.png" in instructor.cells[2].attachments


@pytest.mark.parametrize("line, message", [
    ("../secret.py", "outside the assignment folder"),
    ("tests/test_q.py", "leave tests/ out of the manifest"),
    ("missing.ipynb", "matches no file"),
    ("link.py", "not a regular file"),
])
def test_manifest_cannot_release_what_it_should_not(tmp_path, line, message):
    from difflab.grading import GradingInputError
    from difflab.grading.release import release_files

    folder = tmp_path / "hw"
    _leaky_assignment(folder)
    (folder / "link.py").symlink_to(folder / "solution.py")
    (folder / "manifest.txt").write_text(f"hw.ipynb\n{line}\n")
    with pytest.raises(GradingInputError, match=message):
        release_files(folder)


def test_a_manifest_pattern_matches_files_not_tests_links_or_itself(tmp_path):
    from difflab.grading.release import release_files

    folder = tmp_path / "hw"
    _leaky_assignment(folder)
    (folder / ".secret.py").write_text("x = 1\n")
    (folder / "manifest.txt").write_text("*.ipynb\n**/*.csv\n")
    sources, others, left_out = release_files(folder)
    assert [p.name for p in sources] == ["hw.ipynb"]
    assert [p.name for p in others] == ["points.csv"]
    assert {p.name for p in left_out} == {"solution.py", "notes.txt"}


def test_hidden_tests_in_blocks_and_through_partial_are_found():
    from difflab.grading.release import strip_hidden_tests

    released = strip_hidden_tests(
        "import functools, sys\n"
        "from difflab.grading import points\n"
        "hide = functools.partial(points, hidden=True)\n\n"
        "@points(1)\ndef test_seen():\n    pass\n\n"
        "@hide(2)\ndef test_partial():\n    assert 31337010\n\n"
        "if sys.version_info >= (3, 8):\n"
        "    @points(1)\n    def test_also_seen():\n        pass\n\n"
        "    @points(1, hidden=True)\n    def test_in_if():\n        assert 31337011\n")
    assert "test_seen" in released and "test_also_seen" in released
    assert "31337010" not in released and "31337011" not in released


# -- 13. malformed input: a clear message, exit status 2, and a zero ---------------------


@pytest.mark.parametrize("make, message", [
    (lambda p: p.write_text("[" * 100_000 + "]" * 100_000), "nested too deeply"),
    (lambda p: p.mkdir(), "is a folder, not a .ipynb file"),
], ids=["deeply-nested-notebook", "folder-named-like-a-notebook"])
def test_malformed_submissions_get_a_message_and_exit_status_2(tmp_path, simple, make,
                                                                message):
    work = tmp_path / "hw.ipynb"
    make(work)
    done = subprocess.run(
        [sys.executable, "-m", "difflab.grading", "grade", str(work), "--tests", str(simple),
         "--out", str(tmp_path / "results.json"), "--timeout", "5"],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr


#: A notebook as Jupyter writes it, with one cell replaced by ``bad`` (a value, or the
#: JSON text put in its place): what a student can upload.
def _notebook_text(bad: str) -> str:
    good = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
            "source": "def add(a, b):\n    return a + b\n"}
    text = json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                       "cells": [good, "BAD"]})
    return text.replace('"BAD"', bad)


_CELL = '{"cell_type": "code", "metadata": {}, "outputs": [], "source": %s}'
MALFORMED_NOTEBOOKS = {
    "source-is-a-number": (_CELL % "5", "cell 2: its source is not text"),
    "source-list-of-numbers": (_CELL % "[1, 2]", "cell 2: its source is not text"),
    "markdown-source-object": ('{"cell_type": "markdown", "metadata": {}, "source": {"a": 1}}',
                               "cell 2: its source is not text"),
    "cell-is-a-string": ('"print(1)"', "cell 2 is a str, not a cell"),
    "outputs-not-a-list": ('{"cell_type": "code", "metadata": {}, "source": "", '
                           '"outputs": 7}', "cell 2: its outputs is a int"),
    "number-of-5000-digits": (_CELL % ("1" * 5000), "not a notebook that can be read"),
    "deep-metadata": ('{"cell_type": "raw", "source": "", "metadata": {"a": %s}}'
                      % ("[" * 500 + "]" * 500), "nested too deeply"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(MALFORMED_NOTEBOOKS))
def test_malformed_notebook_cells_get_a_message_and_exit_status_2(tmp_path, simple, case):
    bad, message = MALFORMED_NOTEBOOKS[case]
    work = tmp_path / "hw.ipynb"
    work.write_text(_notebook_text(bad))
    out = tmp_path / "results.json"
    done = subprocess.run(
        [sys.executable, "-m", "difflab.grading", "grade", str(work), "--tests", str(simple),
         "--out", str(out), "--timeout", "5"],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    results = json.loads(out.read_text())
    assert results["score"] == 0 and message in results["output"]
    assert "autograder could not run" not in results["output"]  # the student's file, not us


@pytest.mark.slow
@pytest.mark.parametrize("command", ["check", "assign"])
def test_malformed_notebooks_stop_check_and_assign_with_exit_status_2(tmp_path, simple,
                                                                       command):
    folder = tmp_path / "hw"
    shutil.copytree(simple, folder / "tests")
    for case, (bad, message) in MALFORMED_NOTEBOOKS.items():
        (folder / "hw.ipynb").write_text(_notebook_text(bad))
        args = (["check", str(folder / "hw.ipynb"), "--tests", str(folder / "tests")]
                if command == "check" else
                ["assign", str(folder), "--out", str(tmp_path / "release"), "--no-validate"])
        done = subprocess.run([sys.executable, "-m", "difflab.grading", *args],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, (case, done.stderr)
        assert message in done.stderr and "Traceback" not in done.stderr, (case, done.stderr)


def test_a_folder_named_like_a_notebook_is_refused_where_notebooks_are_read(tmp_path):
    from difflab.grading import GradingInputError, make_student_version
    from difflab.grading.notebooks import read_notebook

    (tmp_path / "x.ipynb").mkdir()
    with pytest.raises(GradingInputError, match="is a folder, not a .ipynb file"):
        read_notebook(tmp_path / "x.ipynb")
    with pytest.raises(GradingInputError, match="not found|folder"):
        make_student_version(tmp_path / "x.ipynb", tmp_path / "out")


#: The student's side of the wire, reached as a student who reads the source would: the
#: server object through the garbage collector, then raw bytes on its reply pipe.  Each
#: forging test's function sends one forged reply and ends the process, so what the
#: grader does with that reply decides the test.
FORGER = '''
import gc, json, os, struct


def _forge(header, blobs=b""):
    server = next(o for o in gc.get_objects() if type(o).__name__ == "_Server")
    header = header if isinstance(header, bytes) else header.encode()
    os.write(server.channel.write_fd, struct.pack(">I", len(header)) + header + blobs)
    os._exit(0)


def square(x):
    return x * x


def digits():
    _forge('{"body": {"ok": ' + "7" * 5000 + '}, "blobs": []}')


def negative_blob():
    _forge(json.dumps({"body": {"ok": 1}, "blobs": [-1]}))


def float_blob():
    _forge(json.dumps({"body": {"ok": 1}, "blobs": [1.5]}))


def huge_blob():
    _forge(json.dumps({"body": {"ok": 1}, "blobs": [2 ** 70]}))


def deep():
    _forge('{"body": {"ok": ' + "[" * 50000 + "]" * 50000 + '}, "blobs": []}')


def huge_array():
    import io
    import numpy as np
    buffer = io.BytesIO()
    np.save(buffer, np.zeros(1))
    blob = buffer.getvalue().replace(b"'shape': (1,)", b"'shape': (99999999999999999,)")
    _forge(json.dumps({"body": {"ok": {"$array": 0}}, "blobs": [len(blob)]}), blob)


def wrong_types():
    _forge(json.dumps({"body": {"ok": {"$tensor": {"$array": 3}, "requires_grad": "yes"}},
                       "blobs": []}))


def report():  # an error report whose every field is out of range or of the wrong type
    _forge(json.dumps({"body": {"error": {
        "type": "SystemExit", "bases": ["SystemExit"], "exit": "9" * 100_000,
        "frames": [[10 ** 18, "f", "x"], [-5, 1, 2], 7], "syntax": [10 ** 30, 1, 2],
        "errno": "27", "text": ["not", "text"]}}, "blobs": []}))


def report_of_wrong_shape():
    _forge(json.dumps({"body": {"error": {"type": "X", "bases": 5, "frames": 7}},
                       "blobs": []}))
'''

FORGED_TESTS = '''
import submission
from difflab.grading import points

@points(1)
def test_honest():
    assert submission.square(3) == 9
''' + "".join(f'''

@points(1)
def test_{name}():
    assert submission.{name}() == 1
''' for name in ("digits", "negative_blob", "float_blob", "huge_blob", "deep", "huge_array",
                 "wrong_types", "report", "report_of_wrong_shape"))


@pytest.mark.slow
def test_out_of_range_values_on_the_wire_score_zero_with_a_message(tmp_path, grade_fast):
    write(tmp_path / "tests" / "test_forged.py", FORGED_TESTS)
    sub = write(tmp_path / "forger.py", FORGER)
    results = grade_fast(sub, tmp_path / "tests", tmp_path / "results.json")
    tests = by_name(results)
    assert tests.pop("test_honest")["score"] == 1
    for name, test in tests.items():
        output = test["output"]
        assert test["score"] == 0, (name, output)
        assert "Traceback" not in output and "grader's test process" not in output, output
        assert "TypeError" not in output and len(output) < 3000, (name, output)
    assert "malformed message" in tests["test_digits"]["output"]
    assert "exit status 9999" in tests["test_report"]["output"]
    assert "9" * 101 not in tests["test_report"]["output"]  # cut to the grader's limit


@pytest.mark.slow
@pytest.mark.parametrize("greeting", [
    '{"$dict": [["loaded", true], ["cell_errors", 5]]}',
    '{"$dict": [["loaded", false], ["error", "nope"]]}',
    '{"$dict": [["loaded", false], ["error", {"$dict": [["bases", 3]]}]]}',
], ids=["cell-errors-not-a-list", "error-not-a-record", "error-fields-wrong"])
def test_forged_greeting_is_a_load_failure_not_a_grader_crash(tmp_path, simple, grade_fast,
                                                             greeting):
    sub = write(tmp_path / "greeting.py", '''
        import gc, os, struct
        server = next(o for o in gc.get_objects() if type(o).__name__ == "_Server")
        header = ('{"body": {"ok": %s}, "blobs": []}' % GREETING).encode()
        os.write(server.channel.write_fd, struct.pack(">I", len(header)) + header)
        os._exit(0)
    '''.replace("GREETING", repr(greeting)))
    results = grade_fast(sub, simple)
    assert results["score"] == 0
    for test in results["tests"]:
        assert "grader's test process stopped" not in test["output"], test["output"]
        assert "could not be loaded" in test["output"], test["output"]
