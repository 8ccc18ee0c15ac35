"""A cheating student's attacks on ``difflab grade``, each rebuilt as a regression test.

Each submission below is what a student tried (or could try) to get marks it did not
earn, to read the hidden tests, or to break the grader.  The grader defends itself
structurally: student code runs in its own process, as its own user when the grader is
root (as on Gradescope and in CI), in a folder holding only the submission; the tests,
the references and the results never exist where it can see them.  Attacks that only a
separate user can stop skip, with that reason, when the suite does not run as root.

These tests use only the grader's public entry points (``grade``, the command line), so
they can be run against older versions of the grader to show that the attacks worked.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from grading_helpers import COURSE, FAST, by_name, write

from difflab.grading import grade, validate_results

ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(
    not ROOT,
    reason="only a separate user keeps student code from the grader's files; the grader "
    "runs student code as another user when it runs as root (as in CI and on Gradescope)",
)

#: The instructor's hidden tests: their lines (and the comment) must never reach a student.
TESTS = '''
import submission
from difflab.grading import points

# secret reference: the magic constant is 31337 and the answer is add(20, 22)


@points(2)
def test_add():
    assert submission.add(20, 22) == 42


@points(1, hidden=True)
def test_add_negative():
    assert submission.add(-1000, -337) == -1337


@points(3)
def test_square():
    assert submission.square(12) == 144
'''

WRONG = '''
def add(a, b):
    return 0


def square(x):
    return 0
'''


def attack(code: str) -> str:
    """An attack followed by wrong answers: the submission loads, and earns nothing."""
    return textwrap.dedent(code).strip("\n") + "\n" + WRONG


def assert_loaded(results: dict) -> None:
    """The submission loaded and every test ran against it (the attack was not a no-op
    because of a syntax error of its own)."""
    assert "could not be loaded" not in json.dumps(results), results["output"]


@pytest.fixture
def shared():
    """A folder with a file ``pid`` the student's user may write to, removed afterwards.

    The file is the test's own: the grader removes the student's files when grading ends.
    """
    folder = Path(tempfile.mkdtemp(prefix="difflab-test-"))
    os.chmod(folder, 0o755)
    (folder / "pid").touch()
    os.chmod(folder / "pid", 0o666)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def suite(tmp_path):
    write(tmp_path / "tests" / "test_hidden.py", TESTS)
    return tmp_path / "tests"


def _forms(secret: str) -> list[str]:
    """A line of a hidden file as it may be smuggled out: plain, reversed, hex, base64."""
    squeezed = re.sub(r"\s+", "", secret)
    raw = secret.encode()
    forms = [squeezed, squeezed[::-1], raw.hex(), raw.hex().upper()]
    for shift in range(3):
        chunk = raw[shift:]
        forms.append(base64.b64encode(chunk[: len(chunk) // 3 * 3]).decode())
    return [f for f in forms if len(f) >= 12]


def assert_nothing_leaked(results: dict, hidden: str = TESTS) -> None:
    """No line of ``hidden`` appears in the results, in any of the forms tried."""
    everything = re.sub(r"\s+", "", json.dumps(results)) + re.sub(
        r"\s+", "", "".join(_all_text(results)))
    for line in hidden.splitlines():
        line = line.strip()
        if len(line) < 12:
            continue
        for form in _forms(line):
            assert form not in everything, f"leaked: {line!r} (as {form[:40]!r}...)"


def _all_text(results: dict) -> list[str]:
    return [results.get("output", "")] + [t.get("output", "") for t in results["tests"]]


def _grade_cli(submission: Path, tests: Path, out: Path, *extra: str, timeout: float = 120):
    """Grade in a separate process (an attack may kill the grader itself)."""
    return subprocess.run(
        [sys.executable, "-m", "difflab.grading", "grade", str(submission), "--tests",
         str(tests), "--out", str(out), "--timeout", "5", "--memory-mb", "1024", *extra],
        capture_output=True, text=True, timeout=timeout,
    )


# -- 1. forged results ----------------------------------------------------------------


FORGE_THROUGH_ARGV = '''
import json, os, sys
try:
    config = json.load(open(sys.argv[1]))
    with open(config["events"], "a") as events:
        for nodeid in config["targets"]:
            events.write(json.dumps({"event": "start", "nodeid": nodeid}) + "\\n")
            events.write(json.dumps({"event": "done", "nodeid": nodeid, "passed": True,
                "reason": "passed", "message": "", "captured": ""}) + "\\n")
    os._exit(0)
except Exception:
    pass
'''


def test_results_record_forged_through_argv_scores_nothing(tmp_path, suite, grade_fast):
    results = grade_fast(write(tmp_path / "forge.py", FORGE_THROUGH_ARGV + WRONG), suite)
    assert results["score"] == 0
    assert_loaded(results)
    assert {t["status"] for t in results["tests"]} == {"failed"}


STUB = '''
"""Full marks without solving anything: report every test as passed, then vanish."""
import json, os, sys
config = json.load(open(sys.argv[1]))
with open(config["events"], "a") as events:
    for nodeid in config["targets"]:
        events.write(json.dumps({"event": "start", "nodeid": nodeid}) + "\\n")
        events.write(json.dumps({"event": "done", "nodeid": nodeid, "passed": True,
                                 "reason": "passed", "message": "", "captured": ""}) + "\\n")
os._exit(0)
'''


def test_nine_line_stub_scores_zero_on_assignment_02(tmp_path):
    stub = STUB.strip() + "\n"
    assert len(stub.splitlines()) == 9
    folder = COURSE / "assignments" / "02_custom_function"
    results = grade(write(tmp_path / "stub.py", stub), folder / "tests", **FAST)
    validate_results(results)
    assert results["score"] == 0
    assert all(t["status"] == "failed" for t in results["tests"])


def test_patching_the_grading_plugin_through_main_scores_nothing(tmp_path, suite, grade_fast):
    sub = write(tmp_path / "patch.py", attack('''
        import sys
        try:
            plugin = sys.modules["__main__"].GradingPlugin

            def report_pass(self, nodeid, location):
                self.events.send("done", nodeid=nodeid, passed=True, reason="passed",
                                 message="", captured="")

            plugin.pytest_runtest_logfinish = report_pass
            plugin.pytest_runtest_makereport = lambda self, item, call: None
        except Exception:
            pass
    '''))
    results = grade_fast(sub, suite)
    assert results["score"] == 0
    assert_loaded(results)


REWRITE_TESTS = '''
import os, pathlib, re
places = [pathlib.Path("tests")]
for cmdline in pathlib.Path("/proc").glob("*/cmdline"):
    try:
        words = cmdline.read_bytes().split(b"\\0")
    except OSError:
        continue
    for i, word in enumerate(words[:-1]):
        if word == b"--tests":
            places.append(pathlib.Path(words[i + 1].decode()))
    try:
        places.append(pathlib.Path(os.readlink(cmdline.parent / "cwd")) / "tests")
    except OSError:
        pass
for place in places:
    try:
        for test in place.glob("test_*.py"):
            test.write_text(re.sub(r"assert ", "assert True or ", test.read_text()))
    except OSError:
        pass
'''


@needs_root
def test_rewriting_the_tests_at_import_scores_nothing(tmp_path, suite):
    before = (suite / "test_hidden.py").read_text()
    out = tmp_path / "results.json"
    done = _grade_cli(write(tmp_path / "rewrite.py", REWRITE_TESTS + WRONG), suite, out)
    results = json.loads(out.read_text())
    assert results["score"] == 0, done.stdout
    assert_loaded(results)
    # the instructor's own tests are untouched, so later gradings are not affected
    assert (suite / "test_hidden.py").read_text() == before
    again = grade(write(tmp_path / "honest.py", WRONG), suite, **FAST)
    assert again["score"] == 0


FORGE_AND_KILL = '''
import json, os, pathlib, signal
for cmdline in pathlib.Path("/proc").glob("*/cmdline"):
    try:
        words = cmdline.read_bytes().split(b"\\0")
    except OSError:
        continue
    if b"--out" in words:
        out = pathlib.Path(words[words.index(b"--out") + 1].decode())
        try:
            out.write_text(json.dumps({"score": 100.0, "output": "forged", "tests": []}))
        except OSError:
            pass
        try:
            os.kill(int(cmdline.parent.name), signal.SIGKILL)
        except (OSError, ValueError):
            pass
'''


@needs_root
def test_writing_results_at_out_and_killing_the_grader_fails(tmp_path, suite):
    out = tmp_path / "results.json"
    done = _grade_cli(write(tmp_path / "kill.py", FORGE_AND_KILL + WRONG), suite, out)
    assert done.returncode == 0, done.stderr
    results = json.loads(out.read_text())
    validate_results(results)
    assert results["score"] == 0 and "forged" not in json.dumps(results)
    assert_loaded(results)


@needs_root
def _still_runs(pid: int) -> bool:
    """Whether process ``pid`` exists and has not ended (a zombie has ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def test_forked_child_cannot_rewrite_results_after_grading(tmp_path, suite, shared):
    sub = write(tmp_path / "fork.py", attack('''
        import json, os, pathlib, sys, time
        targets = []
        for cmdline in pathlib.Path("/proc").glob("*/cmdline"):
            try:
                words = cmdline.read_bytes().split(b"\\0")
            except OSError:
                continue
            if b"--out" in words:
                targets.append(pathlib.Path(words[words.index(b"--out") + 1].decode()))
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                pathlib.Path(SHARED, "pid").write_text(str(os.getpid()))
                time.sleep(4)  # until the grader has finished
                for out in targets:
                    try:
                        out.write_text(json.dumps({"score": 100.0, "tests": []}))
                    except OSError:
                        pass
                os._exit(0)
            os._exit(0)
    '''.replace("SHARED", repr(str(shared)))))
    out = tmp_path / "results.json"
    done = _grade_cli(sub, suite, out)
    assert done.returncode == 0, done.stderr
    pid = int((shared / "pid").read_text())
    # The fork did not outlive the grading: gone, or a zombie (ended; only its exit
    # status waits for a parent to collect it, which may take a moment on a busy machine).
    assert not _still_runs(pid), "the fork still runs after grading"
    time.sleep(5)
    results = json.loads(out.read_text())
    assert results["score"] == 0


# -- 2. hidden tests leaked -------------------------------------------------------------


def test_exception_at_load_does_not_leak_the_tests(tmp_path, suite, grade_fast):
    sub = write(tmp_path / "load.py", '''
        import pathlib
        found = [p.read_text() for p in pathlib.Path("tests").glob("test_*.py")]
        raise RuntimeError("\\n".join(found) or "nothing to read")
    ''')
    results = grade_fast(sub, suite)
    assert results["score"] == 0
    assert "could not be loaded" in results["output"]
    assert_nothing_leaked(results)


def test_notebook_cell_error_does_not_leak_the_tests(tmp_path, suite, grade_fast):
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    nb = new_notebook(cells=[
        new_code_cell("import pathlib\nsource = ''\nfor p in pathlib.Path('tests').glob('*.py'):"
                      "\n    source += p.read_text()"),
        new_code_cell("raise ValueError(source or 'nothing to read')"),
        new_code_cell(WRONG),
    ])
    path = tmp_path / "hw.ipynb"
    nbformat.write(nb, str(path))
    results = grade_fast(path, suite)
    assert "cell 2: ValueError" in results["output"]
    assert_nothing_leaked(results)


ENCODED_SPY = '''
import base64, inspect, os, pathlib, sys

def _hidden():
    """Everything of the tests this process can reach: frames, files, /proc."""
    found = []
    frame = sys._getframe(1)
    while frame is not None:
        if "test_" in frame.f_code.co_filename:
            try:
                found.append(inspect.getsource(frame.f_code))
                found.append(pathlib.Path(frame.f_code.co_filename).read_text())
            except (OSError, TypeError):
                pass
        frame = frame.f_back
    roots = [pathlib.Path("tests"), pathlib.Path("..")]
    for cmdline in pathlib.Path("/proc").glob("*/cmdline"):
        try:
            words = cmdline.read_bytes().split(b"\\0")
            roots.append(pathlib.Path(os.readlink(cmdline.parent / "cwd")))
        except OSError:
            continue
        for word in words:
            if b"/" in word:
                roots.append(pathlib.Path(word.decode(errors="replace")))
                roots.append(pathlib.Path(word.decode(errors="replace")).parent)
    for root in roots:
        try:
            for path in list(root.rglob("*.py"))[:50] + list(root.rglob("*.ipynb"))[:10]:
                text = path.read_text()
                if str(31336 + 1) in text:  # the instructor's tests and solution
                    found.append(text)
        except (OSError, ValueError, RuntimeError):
            pass
    return "\\n".join(found)


def add(a, b):
    text = _hidden()
    print(text.encode().hex())
    print(text[::-1])
    print(base64.b64encode(text.encode()).decode())
    print("\\n".join(text[i:i + 5] for i in range(0, len(text), 5)))
    raise ValueError(text.encode().hex() or "nothing found")


def square(x):
    text = _hidden()
    raise ValueError("# " + text.replace("\\n", "\\n# ") if text else "nothing found")
'''


def test_student_text_redacts_every_encoding_tried():
    """The one function every text passes through, given the hidden file itself."""
    from difflab.grading.results import secret_lines, student_text

    folder = Path(tempfile.mkdtemp(prefix="difflab-test-"))
    try:
        write(folder / "test_hidden.py", TESTS)
        secrets = secret_lines(folder)
    finally:
        shutil.rmtree(folder)
    raw = TESTS.encode()
    for smuggled in [TESTS, TESTS[::-1], raw.hex(), raw.hex().upper(),
                     base64.b64encode(raw).decode(), base64.b64encode(raw[1:]).decode(),
                     "\n".join(TESTS[i:i + 5] for i in range(0, len(TESTS), 5)),
                     "# " + TESTS.replace("\n", "\n# ")]:
        shown = student_text("look: " + smuggled, 100_000, secrets)
        assert_nothing_leaked({"output": shown, "tests": []})


def test_encoded_test_source_never_reaches_the_results(tmp_path, suite, grade_fast):
    (tmp_path / "solution.ipynb").write_text(
        '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5, '
        '"note": "instructor notebook: the solution multiplies by 31337 then adds 42"}')
    results = grade_fast(write(tmp_path / "spy.py", ENCODED_SPY), suite)
    assert results["score"] == 0
    assert_nothing_leaked(results)
    assert_nothing_leaked(results, "the solution multiplies by 31337 then adds 42")


@needs_root
def test_proc_cmdline_names_no_folder_the_student_can_read(tmp_path, suite):
    (tmp_path / "solution.ipynb").write_text('{"secret": "the solution multiplies by 31337"}')
    out = tmp_path / "results.json"
    done = _grade_cli(write(tmp_path / "spy.py", ENCODED_SPY), suite, out)
    assert done.returncode == 0, done.stderr
    results = json.loads(out.read_text())
    assert_nothing_leaked(results)
    assert_nothing_leaked(results, "the solution multiplies by 31337")
    assert "nothing found" in by_name(results)["test_add"]["output"]


# -- 3. the instructor's tests are not writable ------------------------------------------


@needs_root
def test_student_cannot_change_the_instructors_tests(tmp_path, suite):
    before = {p.name: p.read_text() for p in suite.iterdir()}
    out = tmp_path / "results.json"
    _grade_cli(write(tmp_path / "vandal.py", REWRITE_TESTS + WRONG), suite, out)
    assert {p.name: p.read_text() for p in suite.iterdir()} == before


# -- 4. the results path ------------------------------------------------------------------


def test_results_path_replaced_by_a_folder_is_still_written(tmp_path, suite):
    out = tmp_path / "results.json"
    sub = write(tmp_path / "folder.py", attack(f'''
        import os
        try:
            os.makedirs({str(out)!r}, exist_ok=True)
        except OSError:
            pass
    '''))
    done = _grade_cli(sub, suite, out)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    results = json.loads(out.read_text())
    validate_results(results)
    assert len(results["tests"]) == 3


# -- 5. limits, malformed messages, floods ------------------------------------------------


def test_soft_memory_limit_cannot_be_raised(tmp_path, suite, grade_fast):
    sub = write(tmp_path / "raise_limit.py", '''
        import resource


        def add(a, b):
            return a + b


        def square(x):
            soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            try:
                resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
            except (ValueError, OSError):
                pass
            hog = bytearray(1_500_000_000)  # 1.5 GB under a 400 MB limit
            hog[::4096] = b"x" * len(hog[::4096])
            return x * x
    ''')
    results = grade_fast(sub, suite, memory_mb=400)
    square = by_name(results)["test_square"]
    assert square["status"] == "failed"
    assert square["extra_data"]["reason"] == "memory"
    assert "memory limit (400 MB)" in square["output"]
    assert results["score"] == 3


def test_malformed_messages_do_not_crash_the_grader(tmp_path, suite, grade_fast):
    sub = write(tmp_path / "junk.py", '''
        import json, os, sys

        try:  # the old events file, named in the worker's arguments
            config = json.load(open(sys.argv[1]))
            with open(config["events"], "a") as events:
                events.write("this is not json\\n{\\"event\\": 1}\\n[1, 2]\\n")
        except Exception:
            pass


        def add(a, b):
            # every pipe this process has: junk into each
            for fd in range(3, 32):
                try:
                    os.write(fd, b"\\xff\\x00garbage" * 64)
                except OSError:
                    pass
            return a + b


        def square(x):
            return x * x
    ''')
    results = grade_fast(sub, suite)
    validate_results(results)
    tests = by_name(results)
    assert tests["test_square"]["status"] == "passed"
    assert tests["test_add"]["status"] == "failed"


def test_deleted_working_folder_does_not_crash_the_grader(tmp_path, suite, grade_fast):
    sub = write(tmp_path / "delete.py", '''
        import json, os, shutil, sys

        try:
            shutil.rmtree(json.load(open(sys.argv[1]))["workdir"])
        except Exception:
            pass
        shutil.rmtree(os.getcwd(), ignore_errors=True)


        def add(a, b):
            return a + b


        def square(x):
            return x * x
    ''')
    results = grade_fast(sub, suite)
    validate_results(results)
    assert results["score"] == 6


def test_stdout_flood_is_cut_quickly_and_named(tmp_path, suite, grade_fast):
    sub = write(tmp_path / "flood.py", '''
        import sys


        def add(a, b):
            for _ in range(20):
                sys.stdout.write("x\\n" * 1_000_000)  # 20 million short lines
            return a + b


        def square(x):
            while True:
                sys.stdout.write("y" * 1_000_000)
    ''')
    started = time.monotonic()
    results = grade_fast(sub, suite, timeout=20.0)
    assert time.monotonic() - started < 60
    tests = by_name(results)
    assert tests["test_add"]["status"] == "passed"
    assert re.search(r"\[[\d,]+ (bytes of output|characters) cut\]", tests["test_add"]["output"])
    assert len(tests["test_add"]["output"]) < 5000
    square = tests["test_square"]
    assert square["extra_data"]["reason"] == "output"
    assert "printed (or wrote) more than the grader keeps" in square["output"]
    assert "memory" not in square["output"]


def test_printed_output_is_shown_once(tmp_path, suite, grade_fast):
    sub = write(tmp_path / "print.py", '''
        def add(a, b):
            print("debug: adding", a, b)
            return a + b


        def square(x):
            return x * x
    ''')
    results = grade_fast(sub, suite)
    assert by_name(results)["test_add"]["output"].count("debug: adding 20 22") == 1


def test_exit_at_import_is_named_as_such(tmp_path, suite, grade_fast):
    sub = write(tmp_path / "exit.py", "import os\nos._exit(3)\n")
    results = grade_fast(sub, suite)
    assert results["score"] == 0
    message = by_name(results)["test_add"]["output"]
    assert "ended its own process while your submission was being loaded" in message
    assert "exit status 3" in message
    assert "pytest" not in message


def test_fork_does_not_outlive_the_grading(tmp_path, suite, grade_fast, shared):
    sub = write(tmp_path / "fork.py", attack(f'''
        import os, pathlib, time
        if os.fork() == 0:
            pathlib.Path({str(shared)!r}, "pid").write_text(str(os.getpid()))
            time.sleep(600)
            os._exit(0)
    '''))
    grade_fast(sub, suite)
    pid = int((shared / "pid").read_text())
    time.sleep(0.2)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
