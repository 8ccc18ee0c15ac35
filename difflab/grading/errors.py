"""Exceptions raised by the grading subsystem.

Two kinds of things go wrong while grading, and they deserve different treatment:

* :class:`GradingFailure` -- the *student's* work is wrong.  It subclasses
  :class:`AssertionError`, so pytest reports it as an ordinary test failure, and its
  message is written for the student: where the answer differs, by how much, and a hint.
* :class:`GradingInputError` -- the *grader was called wrongly* (a submission path that
  does not exist, a tests folder without tests, a notebook that is not valid JSON,
  unbalanced ``### BEGIN SOLUTION`` markers).  The command line turns it into a one-line
  message on stderr and exit status 2.
"""

from __future__ import annotations

__all__ = ["GradingFailure", "GradingInputError"]


class GradingFailure(AssertionError):
    """A check found the student's answer wrong; the message explains where and why."""


class GradingInputError(ValueError):
    """The grader was given input it cannot work with; the message says what to fix."""
