"""What the grader accepts as a submission and as tests, checked before anything runs.

A submission is a regular file (never a link, a pipe, a device or a folder),
copied without following links; the tests are the ``test_*.py`` files of a
folder, found without entering linked or tool folders, at most
:data:`MAX_TEST_FILES` of them.  Every refusal is a
:class:`~difflab.grading.errors.GradingInputError` that says what is wrong.

A class's submissions folder is read here as well (:func:`find_submissions`: one
submission per student), for the batch and the manual scores alike.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from difflab.grading.errors import GradingInputError

#: Files in a tests folder the grader will look at.
MAX_TEST_FILES = 2000


def is_test_file(path: Path) -> bool:
    return path.suffix == ".py" and (path.name.startswith("test_") or path.stem.endswith("_test"))


def check_inputs(submission: Path, tests_dir: Path) -> None:
    try:
        kind = os.lstat(submission).st_mode
    except FileNotFoundError:
        raise GradingInputError(f"submission not found: {submission}") from None
    except OSError as exc:
        raise GradingInputError(f"cannot read the submission {submission}: {exc}") from None
    if stat.S_ISLNK(kind):
        raise GradingInputError(
            f"the submission {submission} is a link, not a file: a submission must be the "
            "student's own file (a link could point at the tests or the solution); "
            "it scores 0")
    if not stat.S_ISREG(kind):
        what = "a folder" if stat.S_ISDIR(kind) else "not a regular file (a device or a pipe)"
        raise GradingInputError(f"the submission {submission} is {what}: expected a .py file "
                                "or a .ipynb notebook; it scores 0")
    if submission.suffix not in (".py", ".ipynb"):
        raise GradingInputError(
            f"submission {submission.name}: expected a .py file or a .ipynb notebook"
        )
    if not tests_dir.is_dir():
        raise GradingInputError(f"tests folder not found: {tests_dir}")
    if not any(is_test_file(p) for p in tests_files(tests_dir)):
        raise GradingInputError(
            f"no tests in {tests_dir}: expected files named test_*.py or *_test.py "
            "containing test functions"
        )


SKIPPED_FOLDERS = {"__pycache__", ".git", ".hg", ".svn", ".venv", "venv", "node_modules",
                    ".tox", ".mypy_cache", ".pytest_cache", ".ipynb_checkpoints"}


def tests_files(tests_dir: Path) -> list[Path]:
    """The files of a tests folder, walked without following links and within limits.

    Raises
    ------
    GradingInputError
        For a folder with more than :data:`MAX_TEST_FILES` files (``--tests /tmp`` or a
        home folder, by mistake), or one that vanishes while it is read.
    """
    files: list[Path] = []
    todo = [tests_dir]
    while todo:
        folder = todo.pop()
        try:
            entries = list(os.scandir(folder))
        except FileNotFoundError:
            raise GradingInputError(f"the tests folder changed while it was read: {folder} "
                                    "vanished") from None
        except PermissionError:
            raise GradingInputError(f"cannot read {folder} in the tests folder") from None
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in SKIPPED_FOLDERS:
                    todo.append(Path(entry.path))
            elif entry.is_file(follow_symlinks=False):
                files.append(Path(entry.path))
            if len(files) + len(todo) > MAX_TEST_FILES:
                raise GradingInputError(
                    f"{tests_dir} holds more than {MAX_TEST_FILES} files: is it really the "
                    "folder of the instructor's tests? Pass the folder that holds the "
                    "test_*.py files of this assignment."
                )
    return files


def copy_regular_file(source: Path, target: Path) -> None:
    """Copy ``source`` only if it is a regular file and not a link (never followed)."""
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise GradingInputError(f"the submission {source} cannot be read as a file "
                                f"({exc.strerror}); it scores 0") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise GradingInputError(f"the submission {source} is not a regular file; "
                                    "it scores 0")
        with open(target, "wb") as out:
            shutil.copyfileobj(fh, out)


# ---------------------------------------------------------------------- a class's submissions

#: Submissions a folder may hold (a guard against pointing at the wrong folder).
MAX_SUBMISSIONS = 5000
_SUFFIXES = (".py", ".ipynb")


@dataclass
class Submission:
    """One student's work in a submissions folder."""

    student: str
    path: Path | None  # None: the student's folder holds no .py or .ipynb
    metadata: dict[str, Any] | None = None  # from the instructor's side only


def _is_candidate(entry: os.DirEntry) -> bool:
    return Path(entry.name).suffix in _SUFFIXES and not entry.name.startswith(".") and not (
        entry.is_dir(follow_symlinks=False))


def _first_submission(folder: Path) -> Path | None:
    """The first .ipynb/.py of a student's folder or its real (not linked) sub-folders.

    A link (or a device, a pipe) named like a submission is returned as it is, so that
    grading refuses it with a message; links to folders are never entered.
    """
    levels = [folder] + sorted(
        Path(e.path) for e in os.scandir(folder)
        if e.is_dir(follow_symlinks=False) and not e.name.startswith("."))
    for level in levels:
        found = sorted(Path(e.path) for e in os.scandir(level) if _is_candidate(e))
        if found:
            return found[0]
    return None


def find_submissions(folder: str | Path) -> list[Submission]:
    """The submissions of ``folder``, one per student, sorted by student.

    Raises
    ------
    GradingInputError
        When the folder does not exist, holds no submission or too many entries, or two
        entries name the same student.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise GradingInputError(f"submissions folder not found: {folder}")
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        raise GradingInputError(f"cannot read the submissions folder {folder}: {exc}") from None
    if len(entries) > MAX_SUBMISSIONS:
        raise GradingInputError(f"{folder} holds more than {MAX_SUBMISSIONS} entries: is it "
                                "the folder of the submissions?")
    found: dict[str, Submission] = {}
    names: dict[str, str] = {}
    for entry in entries:
        if entry.name.startswith(".") or entry.name == "__pycache__":
            continue
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            try:
                first = _first_submission(path)
            except OSError:
                first = None
            sub = Submission(path.name, first)
        elif path.suffix in _SUFFIXES:  # a file, or a link or device to be refused
            sub = Submission(path.stem, path)
        else:
            continue
        if sub.student in found:
            raise GradingInputError(
                f"{names[sub.student]} and {entry.name} in {folder} are both the submission "
                f"of '{sub.student}': one grading would overwrite the other. Keep one "
                "entry per student (rename or remove the other).")
        found[sub.student], names[sub.student] = sub, entry.name
    if not found:
        raise GradingInputError(f"no submissions in {folder}: expected .py or .ipynb files, "
                                "or one folder per student")
    return [found[k] for k in sorted(found)]
