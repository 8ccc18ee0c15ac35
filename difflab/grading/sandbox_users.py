"""Who runs a student's code, and how every process it started ends.

When the grader runs as root, each grading takes a numeric uid of its own from a pool
(:class:`UidPool`): root may become any uid, no account is needed, and ending "every
process of that uid" when the grading ends reaches this student's processes alone,
wherever they hid (another session, another parent), never a concurrent grading's.
Not root, student code runs as the grader's own user, and the output says so.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import pwd
import shutil
import signal
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from difflab.grading.errors import GradingInputError

#: A named account for student code, when the instructor asks for one (``user=``).
DEFAULT_USER = "difflab-student"
#: First uid of the pool the grader takes a uid from for each grading, when root.
DEFAULT_UID_BASE = 64000
#: How many uids the pool has: how many gradings may run at once.
DEFAULT_UID_POOL = 64
#: Where the pool's lock files live (writable by root only).
UID_LOCK_DIR = "/run/difflab-sandbox"
#: The world-writable places where student code can leave files for the next holder of
#: its uid; the grader removes the uid's files there after each grading.
SHARED_PLACES = ("/tmp", "/var/tmp", "/dev/shm")

_PR_SET_CHILD_SUBREAPER = 36


@dataclass
class SandboxUser:
    """The account student code runs as (only when the grader runs as root).

    A uid of the grader's pool (:class:`UidPool`) needs no account: root may become any
    numeric uid, and ``name`` is then only how messages call it.
    """

    name: str
    uid: int
    gid: int


def resolve_user(name: str | None) -> SandboxUser | None:
    """A named account as the sandbox user, or None when the grader is not root.

    Raises
    ------
    LookupError
        When running as root and the user does not exist, or is root itself.
    """
    if os.geteuid() != 0:
        return None
    name = name or DEFAULT_USER
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise LookupError(
            f"the sandbox user '{name}' does not exist. Leave the user out, and the grader "
            "runs each submission as a uid of its own pool (no account needed), or create "
            f"the account (useradd --system --no-create-home --shell /usr/sbin/nologin "
            f"{name})."
        ) from None
    if entry.pw_uid == 0:
        raise LookupError(f"the sandbox user '{name}' is root; name an unprivileged user")
    return SandboxUser(name, entry.pw_uid, entry.pw_gid)


class UidPool:
    """Numeric uids for student code, one per grading running at the same time.

    The grader kills "every process of the sandbox user" when a grading ends (the only
    way to reach processes that left the student's session).  With one shared user,
    two gradings running at once killed each other's student processes; so each grading
    takes a uid of its own from ``base .. base + size - 1`` and holds it while it runs.

    A uid is held through an exclusive ``flock`` on ``slot-<uid>.lock`` in
    ``lock_dir``, a folder only root may write to.  The kernel drops the lock when the
    holder ends, however it ends, so a crashed grading never keeps a uid.  Uids that
    belong to an account on this machine are never used: killing "every process" of
    such a uid would reach that account's processes.

    Parameters
    ----------
    base, size : int
        The first uid and how many there are (at most ``size`` gradings at once).
    lock_dir : str
        Where the lock files live (created, mode 700, when missing).
    """

    def __init__(self, base: int = DEFAULT_UID_BASE, size: int = DEFAULT_UID_POOL,
                 lock_dir: str = UID_LOCK_DIR) -> None:
        if not (isinstance(base, int) and isinstance(size, int)) or base < 1000 or size < 1 \
                or base + size > 2**31:
            raise ValueError(
                f"uid pool {base}+{size}: the base must be 1000 or more (uids below belong "
                "to the system), the size at least 1, and the last uid below 2**31"
            )
        self.base, self.size, self.lock_dir = base, size, lock_dir

    def _folder(self) -> None:
        try:
            os.mkdir(self.lock_dir, 0o700)
        except FileExistsError:
            pass
        info = os.lstat(self.lock_dir)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0 or info.st_mode & 0o022:
            raise LookupError(
                f"{self.lock_dir} (the grader's uid locks) must be a folder owned by root "
                "that no one else may write to"
            )

    def acquire(self, wait: float = 600.0) -> tuple[SandboxUser, int]:
        """Take a free uid: ``(user, lock_fd)``; close ``lock_fd`` (:meth:`release`) to free it.

        Waits up to ``wait`` seconds while every uid is taken.  Processes left over by an
        earlier holder of the uid are killed before it is handed out.

        Raises
        ------
        LookupError
            When no uid became free in time, or the lock folder is not safe.
        """
        self._folder()
        give_up = time.monotonic() + wait
        while True:
            for uid in range(self.base, self.base + self.size):
                if _has_account(uid):
                    continue
                path = os.path.join(self.lock_dir, f"slot-{uid}.lock")
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    continue
                kill_user_processes(uid)
                remove_user_files(uid)  # a crashed grading's files never reach the next
                return SandboxUser(f"sandbox uid {uid}", uid, uid), fd
            if time.monotonic() > give_up:
                raise LookupError(
                    f"all {self.size} sandbox uids ({self.base}-{self.base + self.size - 1}) "
                    f"stayed in use for {wait:g} s; allow more gradings at once with a "
                    "larger uid pool"
                )
            time.sleep(0.2)

    def hold(self, user: SandboxUser, wait: float = 600.0) -> int:
        """Hold a named account's uid (gradings with the same account take turns)."""
        self._folder()
        path = os.path.join(self.lock_dir, f"slot-{user.uid}.lock")
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        give_up = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                kill_user_processes(user.uid)
                remove_user_files(user.uid)
                return fd
            except BlockingIOError:
                if time.monotonic() > give_up:
                    os.close(fd)
                    raise LookupError(f"the sandbox user '{user.name}' stayed in use by "
                                      f"another grading for {wait:g} s") from None
                time.sleep(0.2)

    @staticmethod
    def release(fd: int) -> None:
        """Give the uid back (after its processes were killed)."""
        os.close(fd)


def _has_account(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
    except KeyError:
        return False
    return True


def isolation_summary(user: SandboxUser | None) -> str:
    """One paragraph for the instructor: what separates student code from the tests."""
    if user is not None:
        return (
            f"Isolation: student code runs in its own process as "
            f"{user.name if str(user.uid) in user.name else f'{user.name} (uid {user.uid})'}"
            ", which no other grading uses meanwhile, in a fresh folder holding "
            "only the submission, with limits on memory, CPU time, processes, file size and "
            "open files; the tests, the references and the results stay in the grader's "
            "process. When the grading ends (however it ends) the grader removes that "
            "folder and every file of the uid in /tmp, /var/tmp and /dev/shm before the uid "
            "is used again."
        )
    return (
        "Isolation: student code runs in its own process, with limits on memory, CPU time, "
        "file size and open files, and reaches the tests only as data; but it runs as your "
        "own user (the grader is not root), so it can read and write any file your user "
        "can. Run the grader as root (as Gradescope does) for a separate user."
    )


# --------------------------------------------------------------------------------------
# ending every process of the student
# --------------------------------------------------------------------------------------
def kill_user_processes(uid: int) -> None:
    """Kill every process of ``uid`` (the sandbox user's, when the grader is root).

    A child that becomes ``uid`` and calls ``kill(-1, SIGKILL)`` reaches exactly the
    processes that user may signal: its own, wherever they hid (another session,
    another parent).  Twice, for processes forked during the first round.
    """
    for _ in range(2):
        pid = os.fork()
        if pid == 0:  # pragma: no cover -- the child ends in this branch
            try:
                os.setgroups([])
                os.setuid(uid)
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
    # A signal is delivered, not yet acted on, when kill returns: wait (briefly) until
    # none of them runs any more, so that grading ends after the student's processes.
    deadline = time.monotonic() + _KILL_WAIT_S
    while running_processes(uid) and time.monotonic() < deadline:
        time.sleep(0.01)


#: How long :func:`kill_user_processes` waits for the killed processes to end.
_KILL_WAIT_S = 5.0


def running_processes(uid: int) -> list[int]:
    """The processes of ``uid`` that still run: not ended (a zombie has ended; only its
    exit status waits for its parent).  Read from ``/proc`` (empty where there is none).

    Parameters
    ----------
    uid : int
        The user whose processes are wanted.

    Returns
    -------
    list of int
        Their process ids.

    Examples
    --------
    >>> import os
    >>> os.getpid() in running_processes(os.getuid())
    True
    """
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines()
                          if ":" in line)
        except OSError:  # (ended while we looked)
            continue
        owner = int(fields.get("Uid", "-1").split()[0])
        state = fields.get("State", "").strip()[:1]
        if owner == uid and state not in ("Z", "X"):
            found.append(int(status.parent.name))
    return found


def remove_user_files(uid: int, places: tuple[str, ...] = SHARED_PLACES) -> int:
    """Remove every file and folder of ``uid`` from the shared writable ``places``.

    Student code can leave files only where its uid may write: its own folders and the
    world-writable ones (``/tmp``, ``/dev/shm``, ``/var/tmp`` and world-writable folders
    inside them).  So the walk descends only into world-writable folders, removes what
    ``uid`` owns there (a folder with all it holds), and never follows a link.  Run it
    after the uid's processes are killed, before the uid is handed to another grading.
    Returns how many entries were removed.
    """
    if uid == 0:
        raise ValueError("refusing to remove root's files")
    removed, todo = 0, [p for p in places if os.path.isdir(p)]
    while todo:
        folder = todo.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            is_dir = stat.S_ISDIR(info.st_mode)
            if info.st_uid == uid:
                try:
                    if is_dir:
                        shutil.rmtree(entry.path)
                    else:
                        os.unlink(entry.path)
                    removed += 1
                except OSError:
                    pass
            elif is_dir and info.st_mode & 0o002:
                todo.append(entry.path)
    return removed


_CLONE_NEWNS, _MS_REC, _MS_PRIVATE = 0x00020000, 0x4000, 0x40000
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 0x2, 0x4, 0x8


def hide_other_processes() -> bool:
    """In a child about to run student code (as root): see only its own processes.

    Gives the process a mount namespace of its own and mounts a ``/proc`` there with
    ``hidepid=2``, so once it is an unprivileged uid it cannot read the grader's command
    line (the results path) or anyone's environment.  Returns False where the kernel or
    the container does not allow it (nothing is changed then).
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(_CLONE_NEWNS) != 0:
            return False
        if libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
            return False
        return libc.mount(b"proc", b"/proc", b"proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC,
                          b"hidepid=2") == 0
    except (OSError, AttributeError):
        return False


def _descendants(root: int) -> list[int]:
    """Processes below ``root`` in the process tree (from /proc; empty where it is absent)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else ():
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def kill_descendants() -> None:
    """Kill every process below this one; orphans of the student's process end up here."""
    for _ in range(5):
        pids = _descendants(os.getpid())
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        _reap()


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def become_subreaper() -> None:
    """Adopt the orphans of this process's descendants (Linux), so none can slip away."""
    try:
        ctypes.CDLL(None).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


#: How many of a grading's student processes (and threads) may compute at once.
CPU_SHARE = 1
#: Over how many seconds the share is measured (bursts shorter than this are allowed).
CPU_WINDOW = 1.0


def _running_tasks(pid: int) -> int:
    """How many threads of ``pid`` are running or ready to run (state R)."""
    count = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/stat", "rb") as fh:
                state = fh.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        count += state == b"R"
    return count


def _subtree(root: int) -> list[int]:
    """Processes below ``root``, read from its children lists (cheap: only its own tree).

    Falls back to scanning all of ``/proc`` where the kernel has no children lists.
    """
    if not os.path.exists(f"/proc/{root}/task/{root}/children"):
        return _descendants(root)
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{pid}/task/{task}/children", "rb") as fh:
                    children = [int(c) for c in fh.read().split()]
            except (OSError, ValueError):
                continue
            found += children
            todo += children
    return found


class CpuShare:
    """Keeps a grading's student code to :data:`CPU_SHARE` processor at a time.

    Limits per process (``RLIMIT_CPU``) let a student fork many processes that each spin
    within their own limit, and so starve a classmate graded beside them: the kernel
    shares the processors by process, not by student.  This watch, a thread of the
    trusted process, counts every ``period`` seconds the threads below it that are
    running or waiting to run (the student's processes, wherever they were started: the
    trusted process adopts orphans, :func:`become_subreaper`).  A count is a share of the
    machine whatever its load; when more than ``share`` were busy on average over the last
    ``window`` seconds, it kills them all and calls ``on_overuse`` with that average.  The
    next test starts a fresh student process.

    Parameters
    ----------
    on_overuse : callable
        Called (from the watch's thread) with the average count, before the kill.
    share : int, optional
        Threads allowed to compute at once.
    window, period : float, optional
        Over how many seconds the average is taken, and how often it is sampled.
    """

    def __init__(self, on_overuse: Callable[[float], None], *, share: int = CPU_SHARE,
                 window: float = CPU_WINDOW, period: float = 0.2) -> None:
        self.on_overuse, self.share, self.window, self.period = (
            on_overuse, share, window, period)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="difflab-cpu-share",
                                        daemon=True)

    def start(self) -> CpuShare:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def busy(self) -> int:
        """Threads below this process running or ready to run, now."""
        return sum(_running_tasks(pid) for pid in _subtree(os.getpid()))

    def _watch(self) -> None:
        samples: list[int] = []
        needed = max(int(self.window / self.period), 1)
        while not self._stop.wait(self.period):
            samples = (samples + [self.busy()])[-needed:]
            average = sum(samples) / len(samples)
            if len(samples) == needed and average > self.share + 0.5:
                self.on_overuse(average)
                _kill_subtree(os.getpid())
                samples = []


def _kill_subtree(root: int) -> None:
    """Kill every process below ``root``, round after round until none is left running.

    One round is not enough: the kernel's children lists may miss a child while its
    parent is forking (and one forked after its parent's list was read is not in it), and
    a single survivor, computing within the share, held the student's pipe open until the
    grading's time ran out.
    """
    deadline = time.monotonic() + _KILL_WAIT_S
    while time.monotonic() < deadline:
        alive = [pid for pid in _subtree(root) if not _has_ended(pid)]
        if not alive:
            return
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:  # (ended meanwhile)
                pass
        time.sleep(0.01)


def _has_ended(pid: int) -> bool:
    """Whether ``pid`` has ended: gone, or a zombie whose exit status waits for its parent."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in (b"Z", b"X")


def user_process_count(uid: int) -> int:
    count = 0
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else ():
        if entry.name.isdigit():
            try:
                count += entry.stat().st_uid == uid
            except OSError:
                pass
    return count


def take_user(user: str | None, uid_base: int, uid_pool: int
               ) -> tuple[SandboxUser | None, int | None]:
    """The user for this grading's student code, held for it alone: ``(user, lock)``.

    Not root: ``(None, None)``, student code runs as the grader's user.
    """
    if os.geteuid() != 0:
        return None, None
    try:
        pool = UidPool(uid_base, uid_pool)
        if user is not None:
            named = resolve_user(user)
            return named, pool.hold(named)
        return pool.acquire()
    except (LookupError, ValueError) as exc:
        raise GradingInputError(str(exc)) from None


#: Files beside the tests (and one folder further up) that may hold a solution.
_SOLUTION_SUFFIXES = (".py", ".ipynb", ".md", ".txt", ".json", ".csv", ".npy", ".npz")
#: Entries of a tests folder looked at by the exposure check (a guard for huge folders).
_MAX_EXPOSURE_ENTRIES = 4000


def _exposure_candidates(tests_dir: Path) -> tuple[list[str], list[str]]:
    """``(files, folders)`` the student's uid must not read (files) or change (folders)."""
    files, folders = [], []
    for folder, _dirs, names in os.walk(tests_dir):
        folders.append(folder)
        files += [os.path.join(folder, n) for n in names]
        if len(files) + len(folders) > _MAX_EXPOSURE_ENTRIES:
            break
    for above in (tests_dir.parent, tests_dir.parent.parent):
        if above == tests_dir or str(above) == above.anchor:
            continue
        try:
            entries = list(os.scandir(above))
        except OSError:
            continue
        files += [e.path for e in entries if e.is_file(follow_symlinks=False) and (
            e.name.endswith(_SOLUTION_SUFFIXES) or "solution" in e.name.lower())]
    return files, folders


def exposure_warning(user: SandboxUser | None, tests_dir: Path) -> str:
    """A warning naming what the sandbox user could read or change of the instructor's.

    Checked as that uid (a child process that becomes it), by opening each file:
    every file of the tests folder (a folder that is only traversable, ``0711``, still
    lets a file be read by name), the folders of the tests (writable?), and the files
    beside the tests folder and one folder further up that may hold a solution (the
    source notebook of a course laid out as ``assignment/notebook.ipynb`` +
    ``assignment/tests/``).
    """
    if user is None:
        return ""
    tests_dir = tests_dir.resolve()
    files, folders = _exposure_candidates(tests_dir)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover -- the child only reports through the pipe
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(user.gid)
            os.setuid(user.uid)
            exposed = []
            for path in files:
                try:
                    os.close(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK))
                    exposed.append(path)
                except OSError:
                    pass
            exposed += [f + os.sep for f in folders if os.access(f, os.W_OK)]
            os.write(write_end, "\n".join(exposed[:20]).encode("utf-8", "replace")[:60000])
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as fh:
        report = fh.read().decode("utf-8", "replace")
    os.waitpid(pid, 0)
    if not report:
        return ""
    shown = "\n".join(f"  {p}" for p in report.splitlines()[:10])
    return (
        f"\nWarning: {user.name} can read or change these files of yours (from outside "
        f"the sandbox's folder):\n{shown}\nMake the folder holding the tests and the "
        "solutions private to root, e.g. chmod -R go-rwx on it (setup.sh of the "
        "Gradescope zip does this for the tests)."
    )
