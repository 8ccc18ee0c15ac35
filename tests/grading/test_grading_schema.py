"""The results file follows Gradescope's documented format (as a JSON Schema)."""

from __future__ import annotations

import copy

import jsonschema
import pytest

from difflab.grading import validate_results
from difflab.grading.markers import TestMeta
from difflab.grading.results import (
    TestOutcome,
    build_results,
    error_results,
    format_summary,
    load_schema,
    truncate,
)

DOCUMENTED_EXAMPLE = {
    # The example of Gradescope's "Autograder Specifications", comments removed.
    "score": 44.0,
    "execution_time": 136,
    "output": "Text relevant to the entire submission",
    "output_format": "simple_format",
    "test_output_format": "text",
    "test_name_format": "text",
    "visibility": "after_due_date",
    "stdout_visibility": "visible",
    "extra_data": {},
    "tests": [
        {
            "score": 2.0,
            "max_score": 2.0,
            "status": "passed",
            "name": "Your name here",
            "name_format": "text",
            "number": "1.1",
            "output": "Giant multiline string that will be placed in a <pre> tag",
            "output_format": "text",
            "tags": ["tag1", "tag2"],
            "visibility": "visible",
            "extra_data": {},
        }
    ],
    "leaderboard": [
        {"name": "Accuracy", "value": 0.926},
        {"name": "Time", "value": 15.1, "order": "asc"},
        {"name": "Stars", "value": "*****"},
    ],
}


def _outcomes():
    passed = TestOutcome(TestMeta("tests/test_a.py::test_one", "test_a.py::test_one", 2.0),
                         "1.1", passed=True, reason="passed", message="")
    failed = TestOutcome(TestMeta("tests/test_a.py::test_two", "test_a.py::test_two", 3.0,
                                  "after_due_date", ["chain rule"]),
                         "1.2", passed=False, reason="failed", message="wrong\nsecond line")
    return [passed, failed]


def test_documented_example_validates():
    validate_results(DOCUMENTED_EXAMPLE)


def test_built_results_validate_and_add_up():
    results = build_results(_outcomes(), execution_time=1.234, output="hello")
    validate_results(results)
    assert results["score"] == 2.0
    assert [t["status"] for t in results["tests"]] == ["passed", "failed"]
    assert results["tests"][1]["visibility"] == "after_due_date"
    validate_results(error_results("could not run"))


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("tests", 0, "status"), "ok"),
        (("tests", 0, "visibility"), "secret"),
        (("visibility",), "public"),
        (("tests", 0, "score"), "2"),
        (("tests", 0, "number"), 1.1),
        (("tests", 0, "tags"), "tag1"),
        (("tests", 0, "unknown_key"), 1),
        (("leaderboard", 1, "order"), "up"),
    ],
)
def test_schema_rejects_what_gradescope_rejects(path, value):
    broken = copy.deepcopy(DOCUMENTED_EXAMPLE)
    target = broken
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(jsonschema.ValidationError):
        validate_results(broken)


def test_schema_needs_a_score_somewhere():
    no_score = copy.deepcopy(DOCUMENTED_EXAMPLE)
    del no_score["score"]
    validate_results(no_score)  # every test has a score: fine
    del no_score["tests"][0]["score"]
    with pytest.raises(jsonschema.ValidationError):
        validate_results(no_score)


def test_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(load_schema())


def test_summary_lists_every_test_and_the_total():
    results = build_results(_outcomes(), execution_time=1.0, output="note")
    summary = format_summary(results, title="grading hw.py")
    lines = summary.splitlines()
    assert lines[0] == "grading hw.py"
    assert lines[1].split() == ["PASS", "2/2", "test_a.py::test_one"]
    assert "FAIL  0/3  test_a.py::test_two [hidden]  wrong" in lines[2]
    assert "Score: 2/5" in lines[3]
    assert lines[-1] == "note"


def test_truncate_keeps_both_ends():
    text = "start " + "x" * 5000 + " end"
    cut = truncate(text, 300)
    assert cut.startswith("start ") and cut.endswith(" end")
    assert "characters cut" in cut and len(cut) < 400
    assert truncate("short", 300) == "short"
