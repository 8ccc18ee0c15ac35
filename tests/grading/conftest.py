"""Fixtures for the grading tests.

Grading starts child processes, so each call costs about a second; tests that look at the
same grading share it through module-scoped fixtures, and time limits are short.
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
