"""``student_environment()``: what the student's process can use, from a source it cannot forge.

The student's code runs in a process of its own, under a memory limit (under which CUDA
cannot start), so on a machine with a GPU ``dl.cuda.is_available()`` was True in the
test and False in the student's code, and notebook 9's own solution lost its point.
The student's process now measures its environment before the submission is imported
and the grader reads it before any student code runs; tests ask
:func:`difflab.grading.student_environment`.

CUDA is played by the CPU stand-in for CuPy (``DIFFLAB_FAKE_CUDA=1``, which the grader
passes on to the student's process) so that every case runs on a machine without a GPU.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from grading_helpers import FAST, by_name, write

import difflab as dl
from difflab import backend
from difflab.grading import context, grade, student_environment
from difflab.grading.sandbox import Sandbox, StudentError, StudentStopped
from difflab.testing import fake_cupy

#: An instructor's test: what the student's process reports, and what its code sees now.
TESTS = '''
import submission
import difflab as dl
from difflab import backend
from difflab.grading import points, student_environment
from difflab.testing import fake_cupy

HIDE = {hide!r}    # the test hides CUDA from its own process ("", "real", "fake")


@points(1)
def test_environment():
    if HIDE == "real":      # the test's process sees no CUDA, whatever the student's does
        backend.use_cupy_module(None, "hidden by the test")
    elif HIDE == "fake":    # the test's process sees CUDA, whatever the student's does
        backend.use_cupy_module(fake_cupy)
    seen = {{"report": student_environment(), "test": dl.cuda.is_available(),
             "student_now": submission.cuda_now()}}
    assert seen == {expected!r}, f"SEEN {{seen}}"
'''

STUDENT = '''
import difflab as dl


def cuda_now():
    return dl.cuda.is_available()
'''


def _grade(tmp_path: Path, submission: str, *, report: bool, test: bool, student_now: bool,
           hide: str = "") -> None:
    """Grade ``submission``; the test passes when student_environment() said ``report``,
    the test's process saw CUDA as ``test`` and the student's code as ``student_now``."""
    expected = {"report": {"cuda": report}, "test": test, "student_now": student_now}
    tests = write(tmp_path / "tests" / "test_env.py", TESTS.format(hide=hide, expected=expected))
    sub = write(tmp_path / "sub.py", submission)
    results = grade(sub, tests.parent, **dict(FAST, timeout=20.0))
    test_result = by_name(results)["test_environment"]
    assert test_result["score"] == 1.0, test_result["output"]


# -- without a GPU and without the stand-in --------------------------------------------


def test_outside_a_grading_it_is_this_processes_answer():
    assert student_environment() == {"cuda": dl.cuda.is_available()}
    with fake_cupy.installed():
        assert student_environment() == {"cuda": True}


def test_in_a_grading_before_the_student_started_it_says_to_ask_inside_a_test(monkeypatch):
    class NotStarted:
        environment = None

    monkeypatch.setattr(context, "_student_process", NotStarted())
    with pytest.raises(RuntimeError, match="inside a test function"):
        student_environment()


def test_no_gpu_no_cupy_the_student_process_sees_no_cuda(tmp_path, monkeypatch):
    monkeypatch.delenv(backend.STAND_IN_VARIABLE, raising=False)
    if dl.cuda.is_available():
        pytest.skip("a GPU here: the memory limit is what hides it (test_hidden_by_the_limit)")
    _grade(tmp_path, STUDENT, report=False, test=False, student_now=False)


def test_a_gpu_of_the_test_process_is_not_the_students(tmp_path, monkeypatch):
    """The bug: the test's process sees CUDA, the student's does not; the test must say
    False (it said True, from ``dl.cuda.is_available()`` in the test's process)."""
    monkeypatch.delenv(backend.STAND_IN_VARIABLE, raising=False)
    _grade(tmp_path, STUDENT, report=False, test=True, student_now=False, hide="fake")


def test_measured_in_the_students_process(tmp_path, monkeypatch):
    """The converse: CUDA (the stand-in) in the student's process only."""
    monkeypatch.setenv(backend.STAND_IN_VARIABLE, "1")  # the grader passes it on
    _grade(tmp_path, STUDENT, report=True, test=False, student_now=True, hide="real")


def test_measured_before_the_submission_is_imported(tmp_path, monkeypatch):
    """A submission that hides CUDA at its top level: the report is from before."""
    monkeypatch.setenv(backend.STAND_IN_VARIABLE, "1")
    hides = "from difflab import backend\nbackend.use_cupy_module(None, 'hidden')\n" + STUDENT
    _grade(tmp_path, hides, report=True, test=True, student_now=False)


# -- attacks: a submission that tries to make the grader believe it has CUDA -----------


@pytest.fixture
def shared():
    """A file the student's uid may write to (to report what it saw), removed after."""
    folder = Path(tempfile.mkdtemp(prefix="difflab-test-"))
    os.chmod(folder, 0o755)
    (folder / "seen").touch(mode=0o666)
    os.chmod(folder / "seen", 0o666)
    yield folder / "seen"
    shutil.rmtree(folder, ignore_errors=True)


PATCHES = '''
import sys, types
import difflab as dl
import difflab.cuda
from difflab import backend
from difflab.testing import fake_cupy

backend.use_cupy_module(fake_cupy)                  # CUDA is the stand-in from now on
difflab.cuda.is_available = lambda: True            # and every way of asking says yes
forged = types.ModuleType("difflab.cuda")
forged.is_available = lambda: True
sys.modules["difflab.cuda"] = forged
dl.cuda = forged
for name in ("difflab.grading._student", "__main__"):   # the start-up code's own module
    module = sys.modules.get(name)
    if module is not None and hasattr(module, "measure_environment"):
        module.measure_environment = lambda: {"cuda": True}
''' + STUDENT


def test_patching_cuda_at_import_does_not_change_the_report(tmp_path, monkeypatch):
    monkeypatch.delenv(backend.STAND_IN_VARIABLE, raising=False)
    if dl.cuda.is_available():
        pytest.skip("a real GPU here: the attack would claim what is true in the test")
    # the attack worked in the student's process (its code sees CUDA), not on the grader
    _grade(tmp_path, PATCHES, report=False, test=False, student_now=True)


FORGER = '''
import os, stat
from difflab.grading.protocol import Channel, encode

def message(fd, body):  # the grader's own wire format
    Channel(-1, fd).send({{"ok": encode(body, [])}}, [])

pipes, stolen = [], 0
for fd in range(3, 64):
    try:
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            pipes.append(fd)
    except OSError:
        pass
for fd in pipes:  # each pipe's read side, opened again: the grader's unread messages
    try:
        reader = os.open(f"/proc/self/fd/{{fd}}", os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        continue
    try:
        stolen += len(os.read(reader, 1 << 16))
    except BlockingIOError:
        pass
    os.close(reader)
with open({seen!r}, "w") as report:
    report.write(f"{{len(pipes)}} {{stolen}}")
for fd in pipes:  # a hello the grader accepts, then every spelling of "I have CUDA"
    try:
        message(fd, {{"loaded": True, "cell_errors": []}})
        message(fd, {{"cuda": True}})
        message(fd, {{"environment": {{"cuda": True}}}})
    except Exception:
        pass
'''


def test_forged_messages_on_the_pipe_do_not_change_the_report(tmp_path, monkeypatch, shared):
    monkeypatch.delenv(backend.STAND_IN_VARIABLE, raising=False)
    if dl.cuda.is_available():
        pytest.skip("a real GPU here: the forgery would claim what is true in the test")
    tests = write(tmp_path / "tests" / "test_env.py", '''
        from difflab.grading import points, student_environment

        @points(1)
        def test_environment():
            assert student_environment() == {"cuda": False}
    ''')
    sub = write(tmp_path / "forger.py", FORGER.format(seen=str(shared)))
    results = grade(sub, tests.parent, **dict(FAST, timeout=20.0))
    # it found the two pipes and nothing unread in them: the report was read before
    assert shared.read_text() == "2 0", results
    assert results["score"] == 1.0, results


# -- the trusted side reads the report strictly -----------------------------------------


def _sandbox(tmp_path: Path) -> Sandbox:
    sub = write(tmp_path / "sub.py", STUDENT)
    return Sandbox(sub, None, tmp_path / "log", memory_mb=1024, cpu_seconds=20.0,
                   startup=20.0, timeout=5.0, user=None)


@pytest.mark.parametrize("report", [{"cuda": 1}, {"cuda": "yes"}, {"cuda": True, "x": 1},
                                    {}, [True], True, None])
def test_a_malformed_report_stops_the_process(tmp_path, report):
    """What reaches the grader is checked for its exact shape and type (``bool``)."""
    box = _sandbox(tmp_path)
    box._exchange = _replying(box, report)
    with pytest.raises(StudentStopped, match="malformed description of its environment"):
        box.start()
    assert box.proc is None  # stopped


def _replying(box: Sandbox, report: object):
    """The sandbox's first exchange answered with ``report`` (an exception: raised)."""
    def exchange(request: dict, *, loading: bool = False) -> object:
        assert loading and "submission" in request
        if isinstance(report, Exception):
            raise report
        return report
    return exchange


def test_an_error_instead_of_a_report_stops_the_process(tmp_path):
    box = _sandbox(tmp_path)
    payload = {"type": "MemoryError", "text": "", "frames": [], "syntax": None, "exit": None,
               "errno": None, "missing": None, "bases": ["MemoryError"]}
    box._exchange = _replying(box, StudentError(payload))
    with pytest.raises(StudentStopped, match=r"environment \(MemoryError\)"):
        box.start()
    assert box.proc is None and box.environment is None


def test_a_started_sandbox_keeps_the_report(tmp_path, monkeypatch):
    monkeypatch.delenv(backend.STAND_IN_VARIABLE, raising=False)
    box = _sandbox(tmp_path)
    assert box.environment is None
    try:
        hello = box.start()
        assert hello == {"loaded": True, "cell_errors": []}
        # (on a GPU machine too: CUDA cannot start under the memory limit)
        assert box.environment == {"cuda": False}
        assert box.call("getattr", name="cuda_now")() is box.environment["cuda"]
        box.start()  # a fresh process measures again
        assert box.environment == {"cuda": False} and box.generation == 2
    finally:
        box.stop()


# -- the bug itself, on a machine without a GPU --------------------------------------------

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def test_notebook_9s_solution_scores_full_marks_where_only_the_test_sees_cuda(tmp_path,
                                                                              monkeypatch):
    """As on a GPU machine: the test's process sees CUDA (here the stand-in, installed by
    a conftest), the student's does not.  ``pick_device()`` rightly chooses "cpu" where
    it runs; the test used to compare with its own process's answer and took the point."""
    pytest.importorskip("nbformat")
    monkeypatch.delenv(backend.STAND_IN_VARIABLE, raising=False)
    tests = tmp_path / "tests"
    shutil.copytree(NOTEBOOKS / "tests" / "09-cpu-and-gpu", tests)
    write(tests / "conftest.py", """
        from difflab import backend
        from difflab.testing import fake_cupy

        backend.use_cupy_module(fake_cupy)    # the test's process has a "GPU"
    """)
    results = grade(NOTEBOOKS / "09-cpu-and-gpu.ipynb", tests, timeout=60.0)
    lost = {t["name"]: t["output"] for t in results["tests"] if t["status"] != "passed"}
    assert lost == {} and results["score"] == 4.0, lost
