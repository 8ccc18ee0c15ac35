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
    """A check found the student's answer wrong; the message explains where and why.

    An ``AssertionError``, so pytest reports it as a failed test.

    Examples
    --------
    >>> from difflab.grading import GradingFailure, assert_close
    >>> try:
    ...     assert_close([1.0, -2.0], [1.0, 2.0], what="gradient")
    ... except GradingFailure as failure:
    ...     print(isinstance(failure, AssertionError), str(failure)[:40])
    True gradient differs at element (1,): got -2
    """


class GradingInputError(ValueError):
    """The grader was given input it cannot work with; the message says what to fix.

    A ``ValueError``; ``difflab grade`` prints its message and exits with status 2.

    Examples
    --------
    >>> from difflab.grading import GradingInputError, grade
    >>> try:
    ...     grade("no_such_submission.py", "no_such_tests")
    ... except GradingInputError as error:
    ...     print(error)
    submission not found: no_such_submission.py
    """
