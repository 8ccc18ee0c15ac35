"""nbgrader-style markers: student and instructor versions, notebooks as modules."""

from __future__ import annotations

import json

import nbformat
import pytest
from grading_helpers import write
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from difflab.grading import GradingInputError, make_instructor_version, make_student_version
from difflab.grading.notebooks import notebook_to_module, read_notebook, strip_solutions

SOURCE = '''\
import numpy as np


def dual_sin(a, da):
    """The rule for sin."""
    ### BEGIN SOLUTION
    return np.sin(a), np.cos(a) * da
    ### END SOLUTION


class Square:
    def backward(self, x, g):
        if x is not None:
            ## BEGIN SOLUTION
            return 2 * x * g
            ## END SOLUTION

### BEGIN HIDDEN TESTS
assert dual_sin(0.0, 1.0) == (0.0, 1.0)
### END HIDDEN TESTS
'''


def test_student_version_stubs_solutions_at_their_indentation():
    student = strip_solutions(SOURCE, student=True)
    assert "np.cos(a) * da" not in student and "2 * x * g" not in student
    assert "    # YOUR CODE HERE\n    raise NotImplementedError()" in student
    assert "            # YOUR CODE HERE\n            raise NotImplementedError()" in student
    assert "assert dual_sin" not in student and "HIDDEN" not in student
    compile(student, "student.py", "exec")  # still valid Python


def test_instructor_version_keeps_solutions_and_drops_markers():
    instructor = strip_solutions(SOURCE, student=False)
    assert "return np.sin(a), np.cos(a) * da" in instructor
    assert "assert dual_sin(0.0, 1.0) == (0.0, 1.0)" in instructor
    assert "BEGIN" not in instructor and "END" not in instructor
    compile(instructor, "instructor.py", "exec")


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("### BEGIN SOLUTION\nx = 1\n", "line 1: '### BEGIN SOLUTION' has no matching"),
        ("x = 1\n### END SOLUTION\n", "line 2: '### END SOLUTION' without a matching"),
        (
            "### BEGIN SOLUTION\n### BEGIN HIDDEN TESTS\n",
            "line 2: '### BEGIN HIDDEN TESTS' inside the '### BEGIN SOLUTION'",
        ),
        (
            "### BEGIN SOLUTION\n### END HIDDEN TESTS\n",
            "'### END HIDDEN TESTS' without a matching",
        ),
    ],
)
def test_unbalanced_markers_are_clear_errors(source, message):
    with pytest.raises(GradingInputError, match=message):
        strip_solutions(source, student=True, where="hw.py")


def _source_notebook(path):
    code = new_code_cell(
        "def f(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION",
        execution_count=3,
        outputs=[new_output("stream", name="stdout", text="secret output\n")],
    )
    nb = new_notebook(cells=[
        new_markdown_cell("Explain:\n### BEGIN SOLUTION\nBecause 2x.\n### END SOLUTION"),
        code,
        new_code_cell("assert f(1) == 2\n### BEGIN HIDDEN TESTS\nassert f(3) == 6\n"
                      "### END HIDDEN TESTS"),
    ])
    nbformat.write(nb, str(path))
    return path


def test_notebook_versions(tmp_path):
    source = _source_notebook(tmp_path / "hw.ipynb")
    student = read_notebook(make_student_version(source, tmp_path / "student"))
    instructor = read_notebook(make_instructor_version(source, tmp_path / "instructor"))
    assert (tmp_path / "student" / "hw.ipynb").is_file()
    md, code, check = student.cells
    assert md.source == "Explain:\nYOUR ANSWER HERE"
    assert "raise NotImplementedError()" in code.source and "2 * x" not in code.source
    assert code.outputs == [] and code.execution_count is None
    assert check.source == "assert f(1) == 2"
    assert "return 2 * x" in instructor.cells[1].source
    assert "assert f(3) == 6" in instructor.cells[2].source
    assert "secret output" not in json.dumps(instructor) + json.dumps(student)
    nbformat.validate(student)


def test_python_file_versions(tmp_path):
    source = write(tmp_path / "hw.py", SOURCE)
    out = make_student_version(source, tmp_path / "release" / "hw_student.py")
    assert out.name == "hw_student.py"
    assert "raise NotImplementedError()" in out.read_text()


def test_versions_of_missing_or_unknown_files_are_clear_errors(tmp_path):
    with pytest.raises(GradingInputError, match="not found"):
        make_student_version(tmp_path / "nope.ipynb", tmp_path / "out")
    with pytest.raises(GradingInputError, match="expected a .ipynb notebook or a .py file"):
        make_student_version(write(tmp_path / "hw.txt", "x"), tmp_path / "out")


def test_invalid_json_notebook_is_a_clear_error(tmp_path):
    bad = tmp_path / "hw.ipynb"
    bad.write_text('{"cells": [}', encoding="utf-8")
    with pytest.raises(GradingInputError, match=r"not valid JSON \(line 1, column 12"):
        read_notebook(bad)
    bad.write_text('{"hello": "world"}', encoding="utf-8")
    with pytest.raises(GradingInputError, match="valid JSON but not a Jupyter notebook"):
        read_notebook(bad)


def test_notebook_to_module_comments_magics_and_maps_cells(tmp_path):
    nb = new_notebook(cells=[
        new_markdown_cell("# title"),
        new_code_cell("%matplotlib inline\n!pip install nothing\nx = 1"),
        new_code_cell(""),
        new_code_cell("def f():\n    return x"),
    ])
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, str(path))
    module = notebook_to_module(path)
    namespace: dict = {}
    exec(compile(module.code, "nb.py", "exec"), namespace)
    assert namespace["f"]() == 1
    assert "# (magic) %matplotlib inline" in module.code
    assert [cell for _, _, cell in module.cells] == [2, 4]  # the empty cell has no lines
    line = module.code.splitlines().index("    return x") + 1
    assert module.locate(line) == "cell 4, line 2"
