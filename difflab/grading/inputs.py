"""What the grader accepts as a submission and as tests, checked before anything runs.

A submission is a regular file (never a link, a pipe, a device or a folder),
copied without following links; the tests are the ``test_*.py`` files of a
folder, found without entering linked or tool folders, at most
:data:`MAX_TEST_FILES` of them.  Every refusal is a
:class:`~difflab.grading.errors.GradingInputError` that says what is wrong.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

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
