"""Hidden-tests blocks: written in the test files or in the assignment itself, hidden
everywhere a ``hidden=True`` test is, and run at grading (issues 25 and 30).

An instructor writes, as nbgrader's autograder-test cells have them::

    ### BEGIN HIDDEN TESTS (2 points)
    assert square(3) == 9
    ### END HIDDEN TESTS

in the assignment notebook or file, or around tests in ``tests/test_*.py``.
"""

from __future__ import annotations

import json
import zipfile

import nbformat
import pytest
from click.testing import CliRunner
from grading_helpers import FAST, by_name, write

from difflab.grading import grade
from difflab.grading.cli import cli
from difflab.grading.errors import GradingInputError
from difflab.grading.release import source_block_tests

TESTS = '''
import submission
from difflab.grading import points


@points(1)
def test_square_visible():
    assert submission.square(2) == 4

### BEGIN HIDDEN TESTS
@points(2)
def test_square_in_a_block():
    assert submission.square(-5) == 25
### END HIDDEN TESTS
'''

SOLUTION_CELL = '''def square(x):
    ### BEGIN SOLUTION
    return x * x
    ### END SOLUTION'''
BLOCK_CELL = '''assert square(3) == 9   # students may see this one
### BEGIN HIDDEN TESTS (2 points)
import math
assert square(0.5) == 0.25
assert math.isclose(square(1e3), 1e6)
### END HIDDEN TESTS'''
SECOND_BLOCK_CELL = '''### BEGIN HIDDEN TESTS
values = [square(k) for k in range(4)]
assert values == [0, 1, 4, 9], values
### END HIDDEN TESTS'''


@pytest.fixture(scope="module")
def assignment(tmp_path_factory):
    """An assignment folder: a notebook with solutions and hidden blocks, and tests/."""
    root = tmp_path_factory.mktemp("hw")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell("# Squares"),
                      nbformat.v4.new_code_cell(SOLUTION_CELL),
                      nbformat.v4.new_code_cell(BLOCK_CELL),
                      nbformat.v4.new_code_cell(SECOND_BLOCK_CELL)]
    nbformat.write(notebook, root / "squares.ipynb")
    write(root / "tests" / "test_squares.py", TESTS)
    out = root / "release"
    result = CliRunner().invoke(cli, ["assign", str(root), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return root


def _notebook(path, square_body):
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(f"def square(x):\n    {square_body}\n")]
    nbformat.write(notebook, path)
    return path


def test_a_test_in_a_hidden_block_of_a_test_file_is_hidden_like_hidden_true(
        assignment, tmp_path):
    right = _notebook(tmp_path / "right.ipynb", "return x * x")
    results = grade(right, assignment / "release" / "instructor" / "tests", **FAST)
    tests = by_name(results)
    assert tests["test_square_in_a_block"]["visibility"] == "after_due_date"
    assert tests["test_square_visible"]["visibility"] == "visible"
    # difflab check, even given the instructor's full folder, leaves it out
    result = CliRunner().invoke(cli, ["check", str(right), "--tests",
                                      str(assignment / "release" / "instructor" / "tests")])
    assert "test_square_in_a_block" not in result.output
    assert "test_square_visible" in result.output


def test_blocks_of_the_notebook_leave_the_student_version_and_become_hidden_tests(assignment):
    student = (assignment / "release" / "student" / "squares.ipynb").read_text()
    assert "square(0.5)" not in student and "range(4)" not in student
    assert "students may see this one" in student
    assert not any("hidden" in p.name for p in (assignment / "release" / "student" / "tests"
                                                 ).iterdir())
    made = assignment / "release" / "instructor" / "tests" / "test_hidden_blocks_squares.py"
    assert "square(0.5)" in made.read_text()


@pytest.mark.parametrize("tests", ["release/instructor/tests", "."])
def test_blocks_of_the_notebook_run_at_grading(assignment, tmp_path, tests):
    """Through the instructor release's tests, or the assignment folder itself."""
    right = _notebook(tmp_path / "right.ipynb", "return x * x")
    wrong = _notebook(tmp_path / "wrong.ipynb", "return x * abs(x)")  # wrong for x < 0
    half = _notebook(tmp_path / "half.ipynb", "return x * x if x < 100 else 0")
    good = grade(right, assignment / tests, **FAST)
    assert good["score"] == 1 + 2 + 2 + 1, good
    blocks = [t for t in good["tests"] if "hidden tests" in t["name"]]
    assert [(t["name"], t["max_score"], t["visibility"]) for t in blocks] == [
        ("squares.ipynb, cell 3 (hidden tests)", 2.0, "after_due_date"),
        ("squares.ipynb, cell 4 (hidden tests)", 1.0, "after_due_date")]
    assert grade(wrong, assignment / tests, **FAST)["score"] == 1 + 0 + 2 + 1
    failed = by_name(grade(half, assignment / tests, **FAST))
    assert failed["squares.ipynb, cell 3 (hidden tests)"]["score"] == 0
    assert "assert" in failed["squares.ipynb, cell 3 (hidden tests)"]["output"].lower()


def test_a_block_using_a_name_the_student_did_not_define_says_so(assignment, tmp_path):
    other = tmp_path / "other.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("def cube(x):\n    return x ** 3\n")]
    nbformat.write(nb, other)
    tests = by_name(grade(other, assignment, **FAST))
    message = tests["squares.ipynb, cell 3 (hidden tests)"]["output"]
    assert "does not define `square`" in message


def test_grading_with_the_sources_tests_folder_would_skip_the_blocks_so_it_is_refused(
        assignment, tmp_path):
    right = _notebook(tmp_path / "right.ipynb", "return x * x")
    with pytest.raises(GradingInputError, match="hidden-tests blocks"):
        grade(right, assignment / "tests", **FAST)


def test_block_runs_in_the_graders_process_not_the_students(tmp_path):
    """A student who redefines ``AssertionError`` or patches builtins changes nothing."""
    source = write(tmp_path / "hw" / "hw.py", '''
        def f(x):
            ### BEGIN SOLUTION
            return x + 1
            ### END SOLUTION

        ### BEGIN HIDDEN TESTS
        assert f(1) == 2
        assert f(-1) == 0
        ### END HIDDEN TESTS
    ''')
    write(tmp_path / "hw" / "tests" / "test_hw.py", '''
        import submission


        def test_f():
            assert submission.f(0) == 1
    ''')
    cheat = write(tmp_path / "cheat.py", '''
        import builtins
        builtins.AssertionError = type("Nothing", (Exception,), {})
        class Yes:
            def __eq__(self, other):
                return True
        def f(x):
            return Yes()
    ''')
    results = grade(cheat, source.parent, **FAST)
    assert results["score"] == 0, results


def test_unclosed_or_broken_blocks_are_refused_at_assign(tmp_path):
    write(tmp_path / "a" / "hw.py", "### BEGIN HIDDEN TESTS\nassert True\n")
    with pytest.raises(GradingInputError, match="never closed"):
        source_block_tests(tmp_path / "a")
    write(tmp_path / "b" / "hw.py",
          "if True:\n    ### BEGIN HIDDEN TESTS\n    assert (\n    ### END HIDDEN TESTS\n")
    with pytest.raises(GradingInputError, match="not valid Python on its own"):
        source_block_tests(tmp_path / "b")


def test_the_autograder_zip_holds_the_blocks_as_hidden_tests(assignment, tmp_path):
    zip_path = tmp_path / "autograder.zip"
    result = CliRunner().invoke(cli, ["autograder", "build", str(assignment), "--out",
                                      str(zip_path)])
    assert result.exit_code == 0, result.output
    with zipfile.ZipFile(zip_path) as zf:
        assert "square(0.5)" in zf.read("tests/test_hidden_blocks_squares.py").decode()


# -- check("q1") cells -------------------------------------------------------------------

CHECK_TESTS = '''
import submission


def test_add_q1():
    assert submission.add(2, 3) == 5
'''


def test_check_cells_do_nothing_when_the_notebook_is_graded_headless(tmp_path):
    write(tmp_path / "tests" / "test_q1.py", CHECK_TESTS)
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("from difflab.grading import check"),
                      nbformat.v4.new_code_cell("def add(a, b):\n    return a + b"),
                      nbformat.v4.new_code_cell('check("q1")')]
    nbformat.write(notebook, tmp_path / "hw.ipynb")
    results = grade(tmp_path / "hw.ipynb", tmp_path / "tests", **FAST)
    assert results["score"] == 1
    assert "raised errors" not in results["output"] and "GradingInputError" not in results[
        "output"]
    assert "raised errors" not in json.dumps(results["tests"])
    result = CliRunner().invoke(cli, ["check", str(tmp_path / "hw.ipynb")])
    assert result.exit_code == 0 and "raised errors" not in result.output, result.output


def test_check_in_jupyter_prints_its_report_once(tmp_path, monkeypatch, capsys):
    """The report is printed under the cell, and the returned report adds nothing more
    (a kernel displays a cell's value in every format it knows)."""
    interactiveshell = pytest.importorskip("IPython.core.interactiveshell")
    write(tmp_path / "tests" / "test_q1.py", CHECK_TESTS)
    monkeypatch.chdir(tmp_path)
    shell = interactiveshell.InteractiveShell.instance()
    try:
        shell.display_formatter.active_types = shell.display_formatter.format_types
        shell.run_cell("def add(a, b):\n    return a + b", store_history=True)
        capsys.readouterr()
        cell = shell.run_cell("from difflab.grading import check\ncheck('q1', timeout=5)",
                              store_history=True)
        shown_again = shell.display_formatter.format(cell.result)
    finally:
        interactiveshell.InteractiveShell.clear_instance()
    out = capsys.readouterr().out
    assert out.count("1 of 1 visible tests passed") == 1, out
    assert shown_again == ({}, {})


def test_each_line_of_a_block_is_a_secret_the_grader_redacts(assignment, tmp_path):
    """A student who learns a block's line (and prints it) sees it hidden."""
    from difflab.grading.results import secret_lines

    secrets = secret_lines(assignment / "release" / "instructor" / "tests")
    assert "assert math.isclose(square(1e3), 1e6)" in secrets
    printer = tmp_path / "printer.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "def square(x):\n    print('assert math.isclose(square(1e3), 1e6)')\n    return x * x")]
    nbformat.write(nb, printer)
    results = grade(printer, assignment, **FAST)
    assert "isclose(square(1e3)" not in json.dumps(results)


def test_unreadable_files_beside_the_tests_folder_do_not_stop_grading(tmp_path):
    """Only sources with hidden blocks matter next to a tests/ folder: a broken notebook
    or a student's file there is none of the grader's business."""
    write(tmp_path / "tests" / "test_sq.py", TESTS)
    (tmp_path / "notes.ipynb").write_text('{"not": "a notebook"}')
    right = _notebook(tmp_path / "right.ipynb", "return x * x")
    assert grade(right, tmp_path / "tests", **FAST)["score"] == 3
