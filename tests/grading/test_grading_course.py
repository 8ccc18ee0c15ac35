"""The example course, graded end to end.

For each assignment the source notebook is split into its student and instructor
versions (as `difflab assign` does), then graded like a student's submission:

* the reference solution (the instructor version) scores full marks;
* the untouched student version scores zero, each test saying what is not implemented;
* planted mistakes cost exactly the tests that check them, with messages that name the
  input and the element that differ;
* a loop, a memory bomb and a failed import are contained.

Every results file must validate against Gradescope's schema.
"""

from __future__ import annotations

import pytest
from grading_helpers import COURSE, FAST, by_name

from difflab.grading import grade, make_instructor_version, make_student_version, validate_results

ASSIGNMENTS = COURSE / "assignments"
NOTEBOOKS = {
    "01_dual_rule": "dual_rules.ipynb",
    "02_custom_function": "custom_function.ipynb",
    "03_layer": "linear_layer.ipynb",
}
FULL_MARKS = {"01_dual_rule": 8, "02_custom_function": 9, "03_layer": 8}
#: Points the untouched student version earns: the forwards the assignments hand out.
GIVEN = {"01_dual_rule": 0, "02_custom_function": 1, "03_layer": 1}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Grade (assignment, which) once per module; which is a version or a sample file."""
    cache: dict = {}
    root = tmp_path_factory.mktemp("course")

    def run(assignment: str, which: str, **limits) -> dict:
        key = (assignment, which)
        if key not in cache:
            folder = ASSIGNMENTS / assignment
            if which in ("student", "instructor"):
                make = make_student_version if which == "student" else make_instructor_version
                submission = make(folder / NOTEBOOKS[assignment], root / assignment / which)
            else:
                submission = folder / "sample_submissions" / which
            out = root / assignment / f"{which}.results.json"
            # the assignment folder: its tests/ and the notebook's hidden-tests blocks
            cache[key] = grade(submission, folder, out, **{**FAST, **limits})
            assert out.is_file()
            validate_results(cache[key])
        return cache[key]

    return run


@pytest.mark.parametrize("assignment", sorted(NOTEBOOKS))
def test_reference_solution_scores_full_marks(graded, assignment):
    results = graded(assignment, "instructor")
    failed = {t["name"]: t["output"] for t in results["tests"] if t["status"] != "passed"}
    assert failed == {}
    assert results["score"] == FULL_MARKS[assignment]
    assert results["output"] == ""  # every notebook cell ran without error
    assert any(t["visibility"] == "after_due_date" for t in results["tests"])


@pytest.mark.parametrize("assignment", sorted(NOTEBOOKS))
def test_unsolved_student_version_scores_only_the_given_code(graded, assignment):
    results = graded(assignment, "student")
    assert results["score"] == GIVEN[assignment]
    failed = [t["output"] for t in results["tests"] if t["status"] == "failed"]
    assert failed and all("Not implemented yet" in o for o in failed)


def test_forgotten_tangent_costs_only_the_sin_tests(graded):
    results = graded("01_dual_rule", "forgot_tangent.py")
    tests = by_name(results)
    lost = {name for name, t in tests.items() if t["status"] == "failed"}
    assert lost == {"test_sin_rule", "test_sin_rule_on_arrays", "test_composed_rule"}
    assert results["score"] == 4  # the notebook's hidden block (sin at pi/2) still passes
    assert "multiply by the incoming tangent" in tests["test_sin_rule"]["output"]


def test_wrong_backward_loses_exactly_its_points_and_names_input_and_element(graded):
    results = graded("02_custom_function", "wrong_backward.py")
    tests = by_name(results)
    lost = {name for name, t in tests.items() if t["status"] == "failed"}
    assert lost == {"test_legendre3_backward", "test_legendre3_backward_matrix"}
    assert results["score"] == FULL_MARKS["02_custom_function"] - 4
    output = tests["test_legendre3_backward"]["output"]
    assert "Legendre3.backward: gradient for input 0 differs at element (" in output
    assert "times 2 everywhere" in output  # the missing 1/2, recognised
    assert tests["test_legendre3_backward_matrix"]["visibility"] == "after_due_date"


def test_infinite_loop_is_stopped_and_costs_only_the_looping_tests(graded):
    results = graded("02_custom_function", "infinite_loop.py", timeout=1.5)
    tests = by_name(results)
    looped = {name for name, t in tests.items() if t["extra_data"]["reason"] == "timeout"}
    assert looped == {"test_legendre3_backward", "test_legendre3_backward_matrix"}
    output = tests["test_legendre3_backward"]["output"]
    assert "Stopped at the time limit (1.5 s per test)" in output
    assert results["score"] == FULL_MARKS["02_custom_function"] - 4
    assert results["execution_time"] < 60


def test_memory_bomb_is_stopped_by_the_memory_limit(graded):
    results = graded("02_custom_function", "memory_bomb.py", memory_mb=512)
    tests = by_name(results)
    bombed = {name for name, t in tests.items() if t["extra_data"]["reason"] == "memory"}
    assert bombed == {"test_legendre3_backward", "test_legendre3_backward_matrix"}
    assert "memory limit (512 MB)" in tests["test_legendre3_backward"]["output"]
    assert results["score"] == FULL_MARKS["02_custom_function"] - 4


def test_import_failure_is_a_clear_message_and_zero(graded):
    results = graded("02_custom_function", "import_error.py")
    assert results["score"] == 0
    for test in results["tests"]:
        assert test["extra_data"]["reason"] == "import_error"
        assert test["output"].startswith("Your submission could not be loaded")
        assert "No module named 'difflabb'" in test["output"]
        assert "line 6" in test["output"]
        assert "Traceback" not in test["output"] and "difflab/grading" not in test["output"]


def test_wrong_bias_gradient_names_the_bias_input(graded):
    results = graded("03_layer", "bias_grad_mean.py")
    tests = by_name(results)
    lost = {name for name, t in tests.items() if t["status"] == "failed"}
    # with a batch of one, mean and sum agree: the single-example test still passes
    assert lost == {"test_function_backward", "test_module_matches_nn_linear"}
    output = tests["test_function_backward"]["output"]
    assert "LinearFunction.backward: gradient for input 2 differs at element (" in output
    assert "times 0.2 everywhere" in output  # mean over a batch of 5 instead of sum
