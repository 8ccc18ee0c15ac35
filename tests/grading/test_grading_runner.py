"""The grader's sandbox and bookkeeping, on small synthetic assignments.

Each test writes a tiny tests folder and submission into tmp_path, grades it in child
processes and looks at the results: what passed, what each failure says, and that one
test's crash, loop or memory bomb costs that test only.
"""

from __future__ import annotations

import json

import pytest
from grading_helpers import by_name, write

from difflab.grading import GradingInputError, grade, validate_results

TESTS = '''
import submission
from difflab.grading import points


@points(2)
def test_add():
    assert submission.add(2, 3) == 5


@points(1, hidden=True)
def test_add_negative():
    assert submission.add(-2, -3) == -5


@points(3, tags=["loops"])
def test_square():
    assert submission.square(4) == 16


def test_unmarked_is_worth_one():
    assert submission.add(0, 0) == 0
'''

GOOD = '''
def add(a, b):
    return a + b


def square(x):
    return x * x
'''


@pytest.fixture
def suite(tmp_path):
    write(tmp_path / "tests" / "test_basic.py", TESTS)
    return tmp_path / "tests"


def test_correct_submission_scores_full_marks_and_validates(tmp_path, suite, grade_fast):
    sub = write(tmp_path / "good.py", GOOD)
    out = tmp_path / "out" / "results.json"
    results = grade_fast(sub, suite, out)
    assert results["score"] == 7
    assert [t["status"] for t in results["tests"]] == ["passed"] * 4
    tests = by_name(results)
    assert tests["test_add"]["max_score"] == 2
    assert tests["test_unmarked_is_worth_one"]["max_score"] == 1
    assert tests["test_add_negative"]["visibility"] == "after_due_date"
    assert tests["test_add"]["visibility"] == "visible"
    assert tests["test_square"]["tags"] == ["loops"]
    assert [t["number"] for t in results["tests"]] == ["1.1", "1.2", "1.3", "1.4"]
    assert json.loads(out.read_text()) == results
    validate_results(results)


def test_loop_costs_only_the_looping_test(tmp_path, suite, grade_fast):
    sub = write(tmp_path / "loop.py", '''
        def add(a, b):
            return a + b


        def square(x):
            while True:
                x = x + 0
    ''')
    results = grade_fast(sub, suite, timeout=1.5)
    tests = by_name(results)
    assert tests["test_square"]["status"] == "failed"
    assert tests["test_square"]["extra_data"]["reason"] == "timeout"
    assert "time limit (1.5 s per test)" in tests["test_square"]["output"]
    assert results["score"] == 4  # everything but square's 3 points


def test_memory_bomb_stopped_by_memory_limit(tmp_path, suite, grade_fast):
    sub = write(tmp_path / "bomb.py", '''
        def add(a, b):
            return a + b


        def square(x):
            hog = []
            while True:
                hog.append(bytearray(50_000_000))
    ''')
    results = grade_fast(sub, suite, memory_mb=400)
    tests = by_name(results)
    assert tests["test_square"]["extra_data"]["reason"] == "memory"
    assert "memory limit (400 MB)" in tests["test_square"]["output"]
    assert results["score"] == 4


def test_hard_crash_costs_only_that_test(tmp_path, suite, grade_fast):
    sub = write(tmp_path / "crash.py", '''
        import os


        def add(a, b):
            if a < 0:
                os._exit(3)  # the process vanishes mid-test
            return a + b


        def square(x):
            return x * x
    ''')
    results = grade_fast(sub, suite)
    tests = by_name(results)
    assert tests["test_add_negative"]["extra_data"]["reason"] == "crash"
    assert "exit status 3" in tests["test_add_negative"]["output"]
    assert results["score"] == 6  # the tests after the crash ran in a fresh process


def test_warnings_on_stderr_never_cost_points(tmp_path, suite, grade_fast):
    sub = write(tmp_path / "noisy.py", '''
        import sys
        import warnings

        warnings.warn("deprecated thing", DeprecationWarning)
        print("loading...", file=sys.stderr)


        def add(a, b):
            warnings.warn("watch out", UserWarning)
            print("debug: adding", a, b, file=sys.stderr)
            return a + b


        def square(x):
            warnings.warn("old", DeprecationWarning)
            return x * x
    ''')
    results = grade_fast(sub, suite)
    assert results["score"] == 7
    assert "debug: adding 2 3" in by_name(results)["test_add"]["output"]


def test_import_failure_is_a_clear_message_and_zero(tmp_path, suite, grade_fast):
    sub = write(tmp_path / "broken.py", '''
        def add(a, b)
            return a + b
    ''')
    results = grade_fast(sub, suite)
    assert results["score"] == 0
    message = by_name(results)["test_add"]["output"]
    assert message.startswith("Your submission could not be loaded")
    assert "SyntaxError at line 1" in message
    assert "Traceback" not in message and "_worker" not in message
    assert "could not be loaded" in results["output"]


def test_missing_function_fails_only_tests_that_use_it(tmp_path, suite, grade_fast):
    sub = write(tmp_path / "partial.py", '''
        def add(a, b):
            return a + b
    ''')
    results = grade_fast(sub, suite)
    square = by_name(results)["test_square"]
    assert square["extra_data"]["reason"] == "missing_name"
    assert "does not define `square`" in square["output"]
    assert results["score"] == 4


def test_from_import_of_missing_name_fails_that_file_clearly(tmp_path, grade_fast):
    write(tmp_path / "tests" / "test_from.py", '''
        from submission import cube


        def test_cube():
            assert cube(2) == 8
    ''')
    write(tmp_path / "tests" / "test_other.py", '''
        import submission


        def test_add():
            assert submission.add(1, 1) == 2
    ''')
    sub = write(tmp_path / "sub.py", GOOD)
    results = grade_fast(sub, tmp_path / "tests")
    tests = by_name(results)
    assert tests["test_cube"]["status"] == "failed"
    assert "does not define `cube`" in tests["test_cube"]["output"]
    assert tests["test_add"]["status"] == "passed"


def test_student_output_never_reveals_test_source(tmp_path, suite, grade_fast):
    sub = write(tmp_path / "spy.py", '''
        import pathlib


        def add(a, b):
            for path in pathlib.Path("tests").glob("*.py"):
                print(path.read_text())
            return a + b


        def square(x):
            raise ValueError(pathlib.Path("tests/test_basic.py").read_text())
    ''')
    results = grade_fast(sub, suite)
    everything = json.dumps(results)
    assert "assert submission.add(-2, -3) == -5" not in everything
    assert "assert submission.square(4) == 16" not in everything
    # The tests are not in the student's folder at all: there is nothing to print.
    assert by_name(results)["test_add"]["status"] == "passed"
    assert "FileNotFoundError" in by_name(results)["test_square"]["output"]


def test_failed_plain_assert_does_not_show_hidden_source(tmp_path, suite, grade_fast):
    sub = write(tmp_path / "wrong.py", '''
        def add(a, b):
            return a - b


        def square(x):
            return x * x
    ''')
    results = grade_fast(sub, suite)
    tests = by_name(results)
    assert tests["test_add"]["status"] == "failed"
    assert "assert -1 == 5" in tests["test_add"]["output"]
    assert "submission.add(-2, -3) == -5" not in json.dumps(results)
    assert results["score"] == 4  # square + unmarked (add(0, 0) == 0 still holds)


def test_time_budget_cut_short_still_writes_results(tmp_path, grade_fast):
    write(tmp_path / "tests" / "test_slow.py", '''
        import submission


        def test_one():
            assert submission.quick()


        def test_two():
            submission.slow()


        def test_three():
            submission.slow()
    ''')
    sub = write(tmp_path / "slow.py", '''
        import time


        def quick():
            return True


        def slow():
            time.sleep(60)
    ''')
    out = tmp_path / "results.json"
    # A budget well above collection's time on a loaded machine, well below test_two's.
    results = grade_fast(sub, tmp_path / "tests", out, timeout=25.0, total_timeout=25.0)
    assert results["execution_time"] < 45
    written = json.loads(out.read_text())
    assert written == results
    reasons = [t["extra_data"]["reason"] for t in results["tests"]]
    assert reasons == ["passed", "not_run", "not_run"]
    assert "ran out of time during this test" in results["tests"][1]["output"]
    assert "time budget was used up" in results["tests"][2]["output"]
    assert "time budget" in results["output"]
    validate_results(results)


def test_notebook_submission_runs_cells_and_maps_errors_to_cells(tmp_path, suite, grade_fast):
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    nb = new_notebook(cells=[
        new_markdown_cell("# Homework"),
        new_code_cell("%matplotlib inline\nimport math"),
        new_code_cell("def add(a, b):\n    return a + b"),
        new_code_cell("print(undefined_name)"),  # a broken scratch cell
        new_code_cell("def square(x):\n    return math.pow(x, 2)"),
    ])
    path = tmp_path / "hw.ipynb"
    nbformat.write(nb, str(path))
    results = grade_fast(path, suite)
    assert results["score"] == 7
    assert "cell 4: NameError" in results["output"]


# -- bad input: each a clear error ----------------------------------------------------


def test_missing_submission_is_a_clear_error(tmp_path, suite):
    with pytest.raises(GradingInputError, match="submission not found: .*nope.py"):
        grade(tmp_path / "nope.py", suite)


def test_tests_folder_without_tests_is_a_clear_error(tmp_path):
    sub = write(tmp_path / "good.py", GOOD)
    (tmp_path / "empty").mkdir()
    with pytest.raises(GradingInputError, match="no tests in"):
        grade(sub, tmp_path / "empty")
    write(tmp_path / "notests" / "test_nothing.py", "X = 1\n")
    with pytest.raises(GradingInputError, match="define no test functions"):
        grade(sub, tmp_path / "notests")
    with pytest.raises(GradingInputError, match="tests folder not found"):
        grade(sub, tmp_path / "missing")


def test_invalid_notebook_json_is_a_clear_error(tmp_path, suite):
    bad = tmp_path / "hw.ipynb"
    bad.write_text('{"cells": [ {"cell_type": "code", "source": "x = 1"', encoding="utf-8")
    with pytest.raises(GradingInputError, match=r"hw.ipynb is not a valid notebook: .*JSON"):
        grade(bad, suite)


def test_wrong_file_type_is_a_clear_error(tmp_path, suite):
    with pytest.raises(GradingInputError, match="expected a .py file or a .ipynb"):
        grade(write(tmp_path / "answer.txt", "42"), suite)


def test_broken_instructor_tests_are_reported_as_such(tmp_path):
    write(tmp_path / "tests" / "test_typo.py", "def test_x(:\n    pass\n")
    with pytest.raises(GradingInputError, match="could not be collected"):
        grade(write(tmp_path / "good.py", GOOD), tmp_path / "tests")


def test_module_level_use_of_submission_does_not_break_collection(tmp_path, grade_fast):
    write(tmp_path / "tests" / "test_module_level.py", '''
        import submission

        DOUBLED = submission.double(21)


        class Sub(submission.Base):
            pass


        def test_double():
            assert DOUBLED == 42


        def test_subclass():
            assert Sub().name() == "base"
    ''')
    sub = write(tmp_path / "sub.py", '''
        def double(x):
            return 2 * x


        class Base:
            def name(self):
                return "base"
    ''')
    results = grade_fast(sub, tmp_path / "tests")
    assert results["score"] == 2


def test_input_errors_still_write_the_results_file(tmp_path, suite):
    out = tmp_path / "results.json"
    with pytest.raises(GradingInputError):
        grade(tmp_path / "missing.py", suite, out)
    results = json.loads(out.read_text())
    validate_results(results)
    assert results["score"] == 0 and "submission not found" in results["output"]


def test_per_test_limit_must_fit_in_the_whole_limit(tmp_path, suite):
    sub = write(tmp_path / "good.py", GOOD)
    with pytest.raises(GradingInputError, match="per-test time limit"):
        grade(sub, suite, timeout=700, total_timeout=600)
