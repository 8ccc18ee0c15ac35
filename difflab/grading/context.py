"""What a grading knows about the submission: the student's seed, lateness, a leaderboard.

Gradescope writes ``submission_metadata.json`` beside the submission: who submitted
(``users``, each with an ``id``), when (``created_at``), and the assignment's dates
(``assignment.due_date``, and per user an extended ``due_date`` where one was granted).
The grader reads it in its trusted process (``difflab grade --metadata FILE``) for:

* **per-student variants.**  :func:`student_seed` in a test gives a number derived from
  the students' ids, the same at every grading of that student, so each student gets
  their own inputs and the instructor reproduces them with ``difflab grade ...
  --student-id ID``::

      rng = np.random.default_rng([student_seed(), 2])   # 2: this assignment
      x = rng.normal(size=5)

  The seed is ``int(sha256("difflab:<sorted student ids, comma-separated>")[:16], 16)``.

* **a late policy** (:class:`LatePolicy`): the score is multiplied by a factor that
  falls with each day (or part of a day) past the due date, after a grace period.

* **a leaderboard**: :func:`leaderboard` in a test adds an entry to Gradescope's
  ``leaderboard`` (a value the *test* computed, never one the student's code reports).

* **what the student's code can use**: :func:`student_environment` says whether CUDA
  is available in the student's process, which may differ from the test's own process
  (the student's runs under a memory limit, under which CUDA cannot start).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

__all__ = ["student_seed", "seed_for", "leaderboard", "LatePolicy", "read_metadata",
           "lateness", "student_environment"]

#: The environment variable through which the grader hands a test process its seed.
SEED_VARIABLE = "DIFFLAB_STUDENT_SEED"

_board: list[dict[str, Any]] = []

#: The grading's student process (a :class:`~difflab.grading.sandbox.Sandbox`, with its
#: ``environment``), set by the grader's test process; None outside a grading.
_student_process: Any = None


def seed_for(student_ids: list[str]) -> int:
    """The seed of a submission by ``student_ids`` (order does not matter), a 64-bit int."""
    key = f"difflab:{','.join(sorted(str(s) for s in student_ids))}"
    return int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:16], 16)


def student_seed() -> int:
    """The seed of the submission being graded (0 outside a grading with metadata).

    Use it for a test's inputs so each student gets their own variant; the instructor
    reproduces one with ``difflab grade SUB --tests T --student-id ID``.

    Returns
    -------
    int
        A seed derived from the submission's student id (0 without one).

    Examples
    --------
    >>> import numpy as np
    >>> from difflab.grading import student_seed
    >>> student_seed()                    # outside a grading run
    0
    >>> x = np.random.default_rng(student_seed()).normal(size=3)   # this student's inputs
    """
    value = os.environ.get(SEED_VARIABLE, "0")
    return int(value) if value.isdigit() else 0


def leaderboard(name: str, value: float | str, order: str = "desc") -> None:
    """Put ``value`` on Gradescope's leaderboard under ``name`` (``order``: desc or asc).

    Call it from a test, with a value the test measured; it is reported only when the
    test that calls it runs in ``difflab grade``.

    Parameters
    ----------
    name : str
        The column of the leaderboard.
    value : float or str
        What the test measured.
    order : {"desc", "asc"}, default "desc"
        Whether larger values rank higher.

    Returns
    -------
    None
        The entry is added to the results ``difflab grade`` writes.

    Raises
    ------
    ValueError
        For an ``order`` other than "desc" or "asc".

    Examples
    --------
    >>> from difflab.grading import leaderboard
    >>> leaderboard("accuracy", 0.93)            # outside a grading run: nothing to report
    """
    if order not in ("asc", "desc"):
        raise ValueError(f"leaderboard order must be 'asc' or 'desc', got {order!r}")
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TypeError(f"a leaderboard value is a number or a string, got {type(value).__name__}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"a leaderboard value must be finite, got {value}")
    _board.append({"name": str(name)[:100], "value": value if not isinstance(value, str)
                   else value[:100], "order": order})


def student_environment() -> dict[str, bool]:
    """What the student's code can use where it runs: ``{"cuda": bool}``.

    In ``difflab grade`` the student's code runs in a process of its own, under a memory
    limit, as another user, with a small environment; what it can use may differ from
    what the test's process can.  CUDA in particular cannot start under the memory limit,
    so on a machine with a GPU ``difflab.cuda.is_available()`` is True in the test and
    False in the student's code.  A test of code that chooses a device compares with
    this answer, not with its own.

    The answer is measured in the student's process before the submission is imported,
    and read by the grader before any student code runs, so the submission cannot change
    it (patching ``difflab.cuda.is_available``, writing to the grader's pipe).  Each
    fresh start of the student's process (after a crash or a time limit) measures again.
    Outside a grading (the tests run with plain pytest, the student's code in the same
    process) it is measured in this process.

    Returns
    -------
    dict
        ``{"cuda": bool}``: whether ``difflab.cuda.is_available()`` is True in the
        student's process.  A new dict at each call.

    Raises
    ------
    RuntimeError
        In a grading, before the student's process has started (at the top level of a
        test file, while the tests are being collected): call it inside a test.

    See Also
    --------
    difflab.grading.student_seed : the student's seed, the other fact a test may ask.

    Examples
    --------
    In a test of a student's ``pick_device()``:

    >>> import difflab as dl
    >>> from difflab.grading import student_environment
    >>> env = student_environment()       # outside a grading: measured in this process
    >>> sorted(env), type(env["cuda"]).__name__
    (['cuda'], 'bool')
    >>> want = "cuda" if env["cuda"] else "cpu"
    >>> dl.device(want).type == want
    True
    """
    if _student_process is None:
        import difflab

        return {"cuda": difflab.cuda.is_available()}
    environment = _student_process.environment
    if environment is None:
        raise RuntimeError(
            "student_environment() was called before the student's process started (at "
            "the top level of a test file, while the tests are collected); call it inside "
            "a test function")
    return dict(environment)


def use_student_process(process: Any) -> None:
    """Make :func:`student_environment` answer for ``process`` (None: this process).

    ``process`` has an ``environment`` attribute (None until it has started), as
    :class:`~difflab.grading.sandbox.Sandbox` does; the grader's test process sets it.
    """
    global _student_process
    _student_process = process


def take_leaderboard() -> list[dict[str, Any]]:
    """The entries added since the last call (the grading plugin reports them)."""
    entries = list(_board)
    _board.clear()
    return entries


def read_metadata(path: str | Path) -> dict[str, Any]:
    """Gradescope's ``submission_metadata.json`` (or a file of the same shape).

    Raises
    ------
    ValueError
        When the file cannot be read or is not a JSON object.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read the submission metadata {path}: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"the submission metadata {path} is not a JSON object")
    return data


def metadata_students(metadata: dict[str, Any]) -> list[str]:
    """The ids of the students of a submission (Gradescope's ``users[].id``)."""
    users = metadata.get("users")
    if not isinstance(users, list):
        return []
    return [str(u.get("id") if u.get("id") is not None else u.get("email", ""))
            for u in users if isinstance(u, dict)]


def _time(value: Any, what: str) -> datetime:
    if not isinstance(value, str):
        raise ValueError(f"the submission metadata has no {what}")
    text = re.sub(r"Z$", "+00:00", value.strip())
    text = re.sub(r"(\.\d{6})\d+", r"\1", text)  # Gradescope writes nanoseconds
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"the submission metadata's {what} is not a date: {value!r}") from None
    if moment.tzinfo is None:
        raise ValueError(f"the submission metadata's {what} has no time zone: {value!r}")
    return moment


def lateness(metadata: dict[str, Any]) -> timedelta:
    """How long after its due date the submission came (negative: on time).

    A user's own ``assignment.due_date`` (an extension) wins over the assignment's.
    """
    due = None
    for user in metadata.get("users") or []:
        if isinstance(user, dict) and isinstance(user.get("assignment"), dict):
            own = user["assignment"].get("due_date")
            if own:
                due = max(due, _time(own, "user's due_date")) if due else _time(
                    own, "user's due_date")
    if due is None:
        assignment = metadata.get("assignment")
        due = _time(assignment.get("due_date") if isinstance(assignment, dict) else None,
                    "assignment.due_date")
    return _time(metadata.get("created_at"), "created_at") - due


@dataclass(frozen=True)
class LatePolicy:
    """Late submissions lose ``per_day`` of their score for each day or part of a day.

    After ``grace_minutes`` past the due date the clock starts; more than ``max_days``
    days late scores 0.  Spelled on the command line as ``per_day=0.1,max_days=3,grace_minutes=15``.

    Parameters
    ----------
    per_day : float, default 0.1
        The share of the score lost per day (or part of a day) late.
    max_days : int, default 3
        Later than this many days scores 0.
    grace_minutes : float, default 0
        Minutes after the due date before the clock starts.

    Examples
    --------
    >>> from datetime import timedelta
    >>> from difflab.grading import LatePolicy
    >>> policy = LatePolicy(per_day=0.1, max_days=3, grace_minutes=15)
    >>> policy.factor(timedelta(hours=30))        # (multiplier, days counted)
    (0.8, 2)
    >>> policy.factor(timedelta(minutes=10)), policy.factor(timedelta(days=5))
    ((1.0, 0), (0.0, 5))
    >>> LatePolicy.parse("per_day=0.2,max_days=2")
    LatePolicy(per_day=0.2, max_days=2, grace_minutes=0.0)
    """

    per_day: float = 0.1
    max_days: int = 3
    grace_minutes: float = 0.0

    def __post_init__(self) -> None:
        if not 0 <= self.per_day <= 1:
            raise ValueError(f"late policy: per_day is a fraction in [0, 1], got {self.per_day}")
        if self.max_days < 0 or self.grace_minutes < 0:
            raise ValueError("late policy: max_days and grace_minutes must be >= 0")

    @classmethod
    def parse(cls, spec: str) -> LatePolicy:
        """``"per_day=0.1,max_days=3,grace_minutes=15"`` (any subset) as a policy."""
        fields: dict[str, Any] = {}
        for part in filter(None, (p.strip() for p in spec.split(","))):
            key, sep, value = part.partition("=")
            key = key.strip()
            if not sep or key not in ("per_day", "max_days", "grace_minutes"):
                raise ValueError(f"late policy {spec!r}: expected per_day=F, max_days=N, "
                                 f"grace_minutes=M separated by commas; got {part!r}")
            try:
                fields[key] = int(value) if key == "max_days" else float(value)
            except ValueError:
                raise ValueError(f"late policy {spec!r}: {key} needs a number") from None
        return cls(**fields)

    def spec(self) -> str:
        """The policy in the command line's spelling (``parse`` reads it back)."""
        return (f"per_day={self.per_day:g},max_days={self.max_days},"
                f"grace_minutes={self.grace_minutes:g}")

    def factor(self, late: timedelta) -> tuple[float, int]:
        """``(multiplier of the score, days late counted)`` for a submission ``late``."""
        late -= timedelta(minutes=self.grace_minutes)
        if late <= timedelta(0):
            return 1.0, 0
        days = math.ceil(late / timedelta(days=1))
        if days > self.max_days:
            return 0.0, days
        return max(0.0, 1.0 - self.per_day * days), days
