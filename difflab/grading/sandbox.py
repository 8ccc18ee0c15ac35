"""The trusted side of the sandbox: a process for student code, and proxies that call into it.

The instructor's tests run in the grader's trusted process.  They reach the student's
work through ``submission``, a stand-in module: ``submission.Legendre3`` is a
:class:`RemoteObject`, and using it (getting an attribute, calling it) sends a request
to the student's process and waits for the answer, which is data only
(:mod:`difflab.grading.protocol`).  So the student's code never runs where the tests,
the references and the results are, and cannot reach them:

* **its own process**, started by :class:`Sandbox`, in a new session, with hard and
  soft limits on memory, CPU time, processes, file size and open files;
* **its own user**: when the grader runs as root, the process becomes an unprivileged
  uid before any student code runs, one that no other grading uses at the same time
  (:class:`UidPool`), so ending "every process of that uid" ends this student's alone;
* **its own folder**: a fresh temporary folder holding only ``submission.py``;
* **its own lifetime**: every process it started is killed when a test overruns, when
  the process has to be replaced, and when grading ends.

Gradients cross the boundary too: calling a student's Function or Module with tensors
that require grad goes through ``_Bridge``, an autograd Function of the trusted
process whose forward and backward are the student's, run in the student's process.
``check_function(submission.Legendre3, reference, inputs)`` therefore works unchanged.
"""

from __future__ import annotations

import inspect
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

from difflab.autograd import Function
from difflab.grading.protocol import (
    Channel,
    ChannelClosed,
    ProtocolError,
    decode,
    encode,
)
from difflab.grading.sandbox_users import (
    SandboxUser,
    hide_other_processes,
    kill_descendants,
    kill_user_processes,
    user_process_count,
)

__all__ = [
    "Sandbox",
    "RemoteObject",
    "SubmissionProxy",
    "StudentError",
    "StudentStopped",
]

#: Largest reply accepted from the student's process (arrays included), in bytes.
MAX_REPLY = 64 * 2**20
#: Largest file the student's process may write, its printed output included, in bytes.
MAX_FILE_BYTES = 64 * 2**20
#: Processes (and threads) the student's code may start.
MAX_PROCESSES = 64
#: Files the student's process may have open at once.
MAX_OPEN_FILES = 256



class StudentError(Exception):
    """The student's code raised an exception; ``payload`` describes it (as data)."""

    def __init__(self, payload: dict[str, Any]) -> None:
        self.payload = payload
        super().__init__(f"{payload.get('type')}: {payload.get('text')}")


class StudentAttributeError(StudentError, AttributeError):
    """The student's object (or the submission) has no attribute of that name."""


class StudentStopped(Exception):
    """The student's process had to stop: ``reason`` (timeout, memory, crash, ...) and why."""

    def __init__(self, reason: str, message: str) -> None:
        self.reason, self.message = reason, message
        super().__init__(message)


# --------------------------------------------------------------------------------------
# the student's process
# --------------------------------------------------------------------------------------
def _student_env(workdir: str) -> dict[str, str]:
    """A small environment: none of the grader's variables (they may hold secrets)."""
    package_root = str(Path(__file__).resolve().parents[2])
    paths = [package_root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": workdir,
        "TMPDIR": workdir,
        "LANG": "C.UTF-8",
        "PYTHONPATH": os.pathsep.join(dict.fromkeys(paths)),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "PYTHONNOUSERSITE": "1",
        "MPLBACKEND": "Agg",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


def _limits(memory_mb: int | None, cpu_seconds: float, user: SandboxUser | None) -> Any:
    """The ``preexec_fn`` that sets hard and soft limits alike (so neither can be raised)."""
    import resource

    processes = MAX_PROCESSES
    if user is None:  # the limit counts all of this user's processes, not just the student's
        processes += user_process_count(os.getuid())
    limits = [
        (resource.RLIMIT_CPU, int(cpu_seconds) + 1),
        (resource.RLIMIT_FSIZE, MAX_FILE_BYTES),
        (resource.RLIMIT_NOFILE, MAX_OPEN_FILES),
        (resource.RLIMIT_NPROC, processes),
        (resource.RLIMIT_CORE, 0),
    ]
    if memory_mb:
        limits.append((resource.RLIMIT_AS, int(memory_mb) * 2**20))

    def apply() -> None:
        if user is not None:  # root, about to become the student: hide the grader
            hide_other_processes()
        for which, value in limits:
            _, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY and os.geteuid() != 0:
                value = min(value, hard)
            resource.setrlimit(which, (value, value))

    return apply


def death_message(returncode: int | None, memory_mb: int | None, cpu_seconds: float,
                  *, loading: bool = False) -> tuple[str, str]:
    """``(reason, message)`` for a student process that ended by itself or was killed."""
    limit = f" ({memory_mb} MB)" if memory_mb else ""
    when = "while your submission was being loaded" if loading else "during this test"
    if returncode is not None and returncode < 0:
        number = -returncode
        name = signal.Signals(number).name if number in signal.valid_signals() else number
        if number == signal.SIGKILL:
            return "memory", (
                f"The process running your code was killed {when} ({name}), most likely for "
                f"using more memory than the limit{limit}."
            )
        if number == signal.SIGXCPU:
            return "timeout", (
                f"The process running your code used up its CPU time ({cpu_seconds:g} s) "
                f"{when}."
            )
        return "crash", (
            f"The process running your code crashed {when} ({name}). This can happen when "
            "memory runs out inside a numerical library, or when code writes outside an array."
        )
    return "crash", (
        f"Your code ended its own process {when} (exit status {returncode}). Does it call "
        "exit(), sys.exit() or os._exit()?"
    )


class Sandbox:
    """The student's process: started, called, restarted after a failure, and killed.

    Parameters
    ----------
    submission : Path
        The submission as a Python module (a notebook already turned into one).
    cells : list or None
        The notebook's cell map, so the cells run one by one.
    output_log : Path
        Where the student's printed output goes (in the grader's private folder).
    memory_mb, cpu_seconds : optional
        Limits of the student's process.
    startup : float
        Seconds allowed for starting the process and loading the submission.
    timeout : float
        Seconds each test may run (the caller sets :attr:`deadline` from it).
    user : SandboxUser or None
        Who the student's code runs as (None: the grader's own user).
    on_start : callable, optional
        Called with the new process's pid each time one starts.
    workroot : str, optional
        The folder the student's folders are made in; the grader's parent process
        removes it when the grading ends, even when this process was killed.
    """

    def __init__(self, submission: Path, cells: list | None, output_log: Path, *,
                 memory_mb: int | None, cpu_seconds: float, startup: float, timeout: float,
                 user: SandboxUser | None, on_start: Any = None,
                 workroot: str | None = None) -> None:
        self.submission, self.cells, self.output_log = submission, cells, output_log
        self.workroot = workroot  # the grader's folder for the student's: removed at its end
        self.memory_mb, self.cpu_seconds, self.startup = memory_mb, cpu_seconds, startup
        self.timeout = timeout
        self.user, self.on_start = user, on_start
        self.proc: subprocess.Popen | None = None
        self.channel: Channel | None = None
        self.workdir: str | None = None
        self.generation = 0
        #: ``time.monotonic()`` by which the current call must be answered (None: startup).
        self.deadline: float | None = None
        self.stopped: StudentStopped | None = None
        #: Set (with the message) when the CPU-share watch stopped the student's processes.
        self.overused: str | None = None

    # -- lifetime ---------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.proc is not None and self.stopped is None

    def start(self) -> dict[str, Any]:
        """Start a fresh process and load the submission; returns its hello.

        The hello is ``{"loaded": True, "cell_errors": [...]}`` or ``{"loaded": False,
        "error": payload}``.

        Raises
        ------
        StudentStopped
            When the process ends, overruns the startup time or talks nonsense.
        """
        self.stop()
        self.generation += 1
        self.stopped = self.overused = None
        self.workdir = tempfile.mkdtemp(prefix="difflab-student-", dir=self.workroot)
        target = os.path.join(self.workdir, "submission.py")
        shutil.copyfile(self.submission, target)
        if self.user is not None:
            for path in (self.workdir, target):
                os.chown(path, self.user.uid, self.user.gid)
        request_read, request_write = os.pipe()
        reply_read, reply_write = os.pipe()
        log = os.open(self.output_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "difflab.grading._student", str(request_read),
                 str(reply_write)],
                cwd=self.workdir, env=_student_env(self.workdir), stdin=subprocess.DEVNULL,
                stdout=log, stderr=log, pass_fds=(request_read, reply_write),
                start_new_session=True,
                preexec_fn=_limits(self.memory_mb, self.cpu_seconds, self.user),  # noqa: PLW1509
            )
        finally:
            for fd in (request_read, reply_write, log):
                os.close(fd)
        os.set_blocking(request_write, False)
        self.channel = Channel(reply_read, request_write)
        if self.on_start is not None:
            self.on_start(self.proc.pid)
        start = {
            "submission": target, "cells": self.cells, "workdir": self.workdir,
            "generation": self.generation,
            "uid": self.user.uid if self.user else None,
            "gid": self.user.gid if self.user else None,
        }
        saved, self.deadline = self.deadline, time.monotonic() + self.startup
        try:
            hello = self._exchange(start, loading=True)
        finally:
            self.deadline = saved
        if not isinstance(hello, dict) or not isinstance(hello.get("loaded"), bool):
            self._fail("protocol", "The process running your code sent a malformed greeting.")
        return hello

    def stop(self) -> None:
        """Kill the student's process and everything it started; remove its folder."""
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            if self.user is not None:
                kill_user_processes(self.user.uid)
            self.proc.wait()
            kill_descendants()
            self.proc = None
        if self.channel is not None:
            for fd in (self.channel.read_fd, self.channel.write_fd):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self.channel = None
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None

    def _wait_for_end(self, deadline: float) -> int | None:
        """The exit status of a process whose pipes closed; None if it lives on past
        ``deadline`` (a second at least), as a process that closed them on purpose does."""
        if self.proc is None:
            return None
        try:
            return self.proc.wait(timeout=max(deadline - time.monotonic(), 1.0))
        except subprocess.TimeoutExpired:
            return None

    def _fail(self, reason: str, message: str) -> None:
        self.stopped = StudentStopped(reason, message)
        self.stop()
        raise self.stopped

    # -- calls ------------------------------------------------------------------------
    def call(self, op: str, target: RemoteObject | None = None, **fields: Any) -> Any:
        """Send one request and return the decoded answer (or raise the student's error)."""
        if self.stopped is not None:
            raise StudentStopped(self.stopped.reason, self.stopped.message)
        if self.proc is None:
            raise StudentStopped("crash", "The process running your code is not running.")
        return self._exchange({"op": op, "target": target, **fields})

    def _exchange(self, request: dict[str, Any], *, loading: bool = False) -> Any:
        deadline = self.deadline or time.monotonic() + self.startup
        blobs: list[bytes] = []
        tree = encode(request, blobs, extra=self._encode_extra)
        try:
            self.channel.send(tree, blobs, deadline=deadline)
            reply, reply_blobs = self.channel.receive(deadline, limit=MAX_REPLY)
            if not isinstance(reply, dict) or not ({"ok"} == set(reply) or {"error"} == set(
                    reply)):
                raise ProtocolError("a reply that is neither a result nor an error")
            if "error" in reply:
                payload = reply["error"]
                if not isinstance(payload, dict):
                    raise ProtocolError("an error report that is not a record")
                payload = _clean_payload(payload)
                if payload["type"] == "AttributeError" or payload["missing"]:
                    raise StudentAttributeError(payload)
                raise StudentError(payload)
            return decode(reply["ok"], reply_blobs, self._make)
        except TimeoutError:
            if loading:
                self._fail("timeout", f"Loading your submission took longer than "
                                      f"{self.startup:g} s.")
            self._fail("timeout", (
                f"Stopped at the time limit ({self.timeout:g} s per test). Look for a loop "
                "whose condition never becomes false, or a recursion without a base case."
            ))
        except ChannelClosed:
            if self.overused is not None:  # stopped by the grader's CPU-share watch
                self._fail("cpu", self.overused)
            returncode = self._wait_for_end(deadline)
            if returncode is None:  # closed its pipes but kept running: never waited on
                self._fail("protocol", "The process running your code closed its connection "
                                       "to the grader and kept running; it was stopped.")
            self._fail(*death_message(returncode, self.memory_mb, self.cpu_seconds,
                                      loading=loading))
        except ProtocolError as exc:
            self._fail("protocol", (
                "The process running your code sent the grader a malformed message "
                f"({exc}); did your code write to the grader's pipe?"
            ))
        raise AssertionError("unreachable")  # pragma: no cover

    def _encode_extra(self, value: Any, blobs: list[bytes]) -> Any:
        from difflab.diff.forward import Dual
        from difflab.tensor import Tensor

        if isinstance(value, RemoteObject):
            info = object.__getattribute__(value, "_info")
            return {"$ref": info["$ref"], "gen": info["gen"]}
        if isinstance(value, Tensor):
            return {"$tensor": encode(value.numpy(force=True), blobs, extra=self._encode_extra),
                    "requires_grad": value.requires_grad}
        if isinstance(value, Dual):
            return {"$dual": [encode(value.primal, blobs, extra=self._encode_extra),
                              encode(value.tangent, blobs, extra=self._encode_extra)]}
        return NotImplemented

    def _make(self, tag: str, node: dict, reader: Any, depth: int) -> Any:
        import difflab
        from difflab.diff.forward import Dual

        if tag == "$tensor":
            array = reader.read(node["$tensor"], depth)
            tensor = difflab.tensor(array)
            if node.get("requires_grad") is True and tensor.dtype.kind in "fc":
                tensor.requires_grad = True
            if node.get("grad") is not None:
                tensor.grad = difflab.tensor(reader.read(node["grad"], depth))
            return tensor
        if tag == "$dual":
            parts = node["$dual"]
            if type(parts) is not list or len(parts) != 2:
                raise ProtocolError("a malformed dual number")
            return Dual(reader.read(parts[0], depth), reader.read(parts[1], depth))
        info = {
            "$ref": node.get("$ref"), "gen": node.get("gen"),
            "type": str(node.get("type"))[:100], "callable": node.get("callable") is True,
            "name": node["name"][:100] if isinstance(node.get("name"), str) else None,
            "signature": _clean_signature(node.get("signature")),
        }
        if type(info["$ref"]) is not int or info["gen"] != self.generation:
            raise ProtocolError("a malformed object reference")
        return RemoteObject(self, info)

    # -- calling with gradients ----------------------------------------------------------
    def invoke(self, target: RemoteObject, args: tuple, kwargs: dict) -> Any:
        """Call ``target``; through ``_Bridge`` when a tensor argument requires grad."""
        import difflab
        from difflab.tensor import Tensor

        if difflab.is_grad_enabled() and any(
                isinstance(a, Tensor) and a.requires_grad for a in args):
            return _Bridge.apply((self, target, kwargs), *args)
        return self.call("call", target, args=list(args), kwargs=kwargs)


def _clean_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """The fields of a student's exception report, each of the type it should have."""

    def text(value: Any, limit: int = 2000) -> str:
        return value[:limit] if isinstance(value, str) else ""

    frames = []
    for frame in payload.get("frames") or []:
        if isinstance(frame, list) and len(frame) == 3 and type(frame[0]) is int:
            frames.append([frame[0], text(frame[1], 100), text(frame[2], 200)])
    syntax = payload.get("syntax")
    if not (isinstance(syntax, list) and len(syntax) == 3 and type(syntax[0]) is int):
        syntax = None
    else:
        syntax = [syntax[0], text(syntax[1], 200), text(syntax[2], 200)]
    bases = [text(b, 100) for b in payload.get("bases") or [] if isinstance(b, str)][:20]
    exit_code = payload.get("exit")
    return {
        "type": text(payload.get("type"), 100) or "Exception",
        "text": text(payload.get("text")),
        "frames": frames[-6:],
        "syntax": syntax,
        "exit": exit_code if isinstance(exit_code, (int, str, type(None))) else None,
        "errno": payload.get("errno") if type(payload.get("errno")) is int else None,
        "missing": text(payload.get("missing"), 100) or None,
        "bases": bases,
    }


def _clean_signature(value: Any) -> list | None:
    if not isinstance(value, list):
        return None
    params = []
    for p in value[:50]:
        if not (isinstance(p, list) and len(p) == 3 and isinstance(p[0], str)
                and type(p[1]) is int and 0 <= p[1] <= 4):
            return None
        params.append([p[0][:100], p[1], bool(p[2])])
    return params


class _Bridge(Function):
    """A student's differentiable call seen by the trusted tape as one Function.

    ``forward`` asks the student's process to run the call with its own tensors and keep
    the graph; ``backward`` sends the upstream gradient and receives one gradient per
    input: the vector-Jacobian product the student's code computed.
    """

    @staticmethod
    def forward(ctx: Any, call: tuple, *args: Any) -> Any:
        sandbox, target, kwargs = call
        output, record = sandbox.call("call_grad", target, args=list(args), kwargs=kwargs)
        ctx.call, ctx.record = call, record
        return output

    @staticmethod
    def backward(ctx: Any, grad_output: Any) -> tuple:
        sandbox = ctx.call[0]
        grads = sandbox.call("backward", record=ctx.record, grad=grad_output.numpy(force=True))
        if not isinstance(grads, list) or len(grads) != len(ctx.needs_input_grad) - 1:
            raise StudentStopped("protocol", "The process running your code sent a malformed "
                                 "list of gradients.")
        return (None, *[g.array if hasattr(g, "array") else g for g in grads])


class RemoteObject:
    """An object of the student's process, used from the tests as if it were here.

    Attribute access and calls are requests to the student's process; answers that are
    data (numbers, strings, arrays, tensors' values, lists, dicts) arrive as such, other
    objects as new references.  Comparisons and truth tests are *not* forwarded: a
    student object cannot decide that it equals the expected answer.
    """

    __slots__ = ("_sandbox", "_info")

    def __init__(self, sandbox: Sandbox, info: dict[str, Any]) -> None:
        object.__setattr__(self, "_sandbox", sandbox)
        object.__setattr__(self, "_info", info)

    def __getattr__(self, name: str) -> Any:
        info = object.__getattribute__(self, "_info")
        if name in ("__name__", "__qualname__") and info["name"]:
            return info["name"]
        if name == "__signature__" and info["signature"] is not None:
            return _signature(info["signature"])
        if name.startswith("__"):
            raise AttributeError(name)
        return object.__getattribute__(self, "_sandbox").call("getattr", self, name=name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("objects of the submission cannot be changed from a test")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return object.__getattribute__(self, "_sandbox").invoke(self, args, kwargs)

    def __repr__(self) -> str:
        info = object.__getattribute__(self, "_info")
        name = f" {info['name']}" if info["name"] else ""
        return f"<{info['type']}{name} from the submission>"

    def __bool__(self) -> bool:
        info = object.__getattribute__(self, "_info")
        raise TypeError(
            f"the submission gave a {info['type']} object where a value (a number, a string, "
            "an array) was expected"
        )

    def __mro_entries__(self, bases: tuple) -> tuple:
        """``class Mine(submission.Base)`` in a test: instances are the student's objects."""
        remote_class = self

        class Remote:
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                object.__setattr__(self, "_remote", remote_class(*args, **kwargs))

            def __getattr__(self, name: str) -> Any:
                if name.startswith("__"):
                    raise AttributeError(name)
                return getattr(object.__getattribute__(self, "_remote"), name)

        name = object.__getattribute__(self, "_info")["name"]
        Remote.__name__ = Remote.__qualname__ = name or "Remote"
        return (Remote,)


def _signature(params: list) -> inspect.Signature:
    marker = object()
    return inspect.Signature([
        inspect.Parameter(name, inspect._ParameterKind(kind),
                          default=marker if has_default else inspect.Parameter.empty)
        for name, kind, has_default in params
    ], __validate_parameters__=False)


class SubmissionProxy(types.ModuleType):
    """The ``submission`` module the tests import: each name is fetched from the student."""

    def __init__(self, sandbox: Sandbox) -> None:
        super().__init__("submission", "The student's submission, in its own process.")
        self.__dict__["_sandbox"] = sandbox

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self.__dict__["_sandbox"].call("getattr", None, name=name)
