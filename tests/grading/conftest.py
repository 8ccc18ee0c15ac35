"""Fixtures for the grading tests.

Grading starts child processes, so each call costs about a second; tests that look at the
same grading share it through module-scoped fixtures, and time limits are short.

Run as root (as CI is), the grader runs each grading's student code as a uid of its own
pool (no account needed), so the suite can grade in parallel (``pytest -n 2``).
"""

from __future__ import annotations

import pytest
from grading_helpers import FAST

from difflab.grading import grade


@pytest.fixture
def grade_fast():
    """``grade`` with the suite's short limits."""

    def run(submission, tests_dir, out=None, **overrides):
        return grade(submission, tests_dir, out, **{**FAST, **overrides})

    return run
