"""Fixtures for the grading tests.

Grading starts child processes, so each call costs about a second; tests that look at the
same grading share it through module-scoped fixtures, and time limits are short.

Run as root (as CI is), the grader runs student code as the unprivileged user
``difflab-student``; the suite creates that user once, as the course's setup.sh does.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess

import pytest
from grading_helpers import FAST

from difflab.grading import grade

DEFAULT_USER = "difflab-student"  # the grader's default sandbox user


def _ensure_sandbox_user() -> None:
    if os.geteuid() != 0:
        return
    try:
        pwd.getpwnam(DEFAULT_USER)
    except KeyError:
        useradd = shutil.which("useradd")
        if useradd is None:
            pytest.exit(f"running as root needs the user {DEFAULT_USER} (no useradd here)")
        subprocess.run([useradd, "--system", "--no-create-home", "--shell",
                        "/usr/sbin/nologin", DEFAULT_USER], check=True)


_ensure_sandbox_user()


@pytest.fixture
def grade_fast():
    """``grade`` with the suite's short limits."""

    def run(submission, tests_dir, out=None, **overrides):
        return grade(submission, tests_dir, out, **{**FAST, **overrides})

    return run
