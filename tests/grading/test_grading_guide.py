"""The instructor's guide, run as written: every command of its ``bash`` blocks, in
order, from a copy of ``examples/course``, and every Python block compiled (the test
files among them graded against the reference solution)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from grading_helpers import COURSE, FAST

from difflab.grading import grade, make_instructor_version

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "grading.md"
ROOT = Path(__file__).resolve().parents[2]


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)


def _commands() -> list[str]:
    commands = []
    for block in _blocks("bash"):
        for command in block.replace("\\\n", " ").splitlines():
            if command.strip() and not command.lstrip().startswith("#"):
                commands.append(command.strip())
    return commands


def test_the_guide_has_commands_for_every_step():
    text = " ".join(_commands())
    for step in ("difflab assign", "difflab check", "difflab grade", "difflab manual collect",
                 "difflab manual score", "difflab manual apply", "difflab autograder build",
                 "run_autograder", "--late-policy", "--student-id", "--only",
                 "difflab gradebook stats", "difflab gradebook adjust",
                 "difflab gradebook export"):
        assert step in text, step


@pytest.mark.slow
def test_every_command_of_the_guide_runs_as_written(tmp_path):
    course = tmp_path / "course"
    shutil.copytree(COURSE, course)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "difflab").write_text(
        f"#!/bin/sh\nexec {sys.executable} -c 'from difflab.cli import main; main()' \"$@\"\n")
    (bin_dir / "difflab").chmod(0o755)
    (bin_dir / "python3").symlink_to(sys.executable)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": str(ROOT)}
    env.pop("PYTHON", None)
    for command in _commands():
        done = subprocess.run(["bash", "-c", command], cwd=course, env=env,
                              capture_output=True, text=True, timeout=400)
        allowed = (0, 1) if command.startswith("difflab check") else (0,)
        assert done.returncode in allowed, f"{command}\n{done.stdout}\n{done.stderr}"
    # what the guide says the commands leave behind
    assert (course / "release/01/instructor/tests/test_hidden_blocks_dual_rules.py").is_file()
    grades = (course / "grades.csv").read_text()
    assert "manual: why_output" in grades
    assert (course / "grades_results" / "bob.md").is_file()
    assert "Assignment 2" in (course / "canvas.csv").read_text()
    mock = json.loads((course / "mock/results/results.json").read_text())
    assert mock["score"] == sum(t["max_score"] for t in mock["tests"])
    assert "late policy was not applied" in mock["output"]
    late = json.loads((course / "results.json").read_text())
    assert late["tests"]


def test_every_python_block_of_the_guide_compiles():
    for block in _blocks("py"):
        compile(block, "guide", "exec")


@pytest.mark.slow
def test_the_guides_test_files_pass_on_the_reference_solution(tmp_path):
    tests = tmp_path / "tests"
    tests.mkdir()
    blocks = [b for b in _blocks("py") if "import submission" in b]
    assert len(blocks) >= 3
    for number, block in enumerate(blocks):
        (tests / f"test_guide_{number}.py").write_text(block)
    reference = make_instructor_version(
        COURSE / "assignments" / "02_custom_function" / "custom_function.ipynb", tmp_path)
    results = grade(reference, tests, **FAST)
    failed = {t["name"]: t["output"] for t in results["tests"] if t["status"] != "passed"}
    written = sum(len(re.findall(r"^def test_", b, re.M)) for b in blocks)
    assert failed == {} and len(results["tests"]) == written
