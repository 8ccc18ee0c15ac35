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

Tests are written as if the student's objects were local (:mod:`difflab.grading.crossing`):
operators on a :class:`RemoteObject` run in the student's process, comparisons and truth
here; the test's functions passed to student code are called back (the student's
process sends ``{"call": ...}`` while a request is pending, and gets the result as
data); and the lists, dicts, arrays and tensors a test passes are mirrored, so what the
student's code changes in place is changed in the test's objects.  A request is
``{"forget": [...], "sync": [...], "request": ...}``; an answer ``{"ok": ...}`` or
``{"error": ...}``, with the student's ``"sync"``.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import weakref
from pathlib import Path
from typing import Any

from difflab.backend import STAND_IN_VARIABLE
from difflab.grading.crossing import MAX_CALLBACK_DEPTH, Mirrors, is_function, mirrorable
from difflab.grading.protocol import (
    Channel,
    ChannelClosed,
    ProtocolError,
    decode,
    encode,
)
from difflab.grading.remote import (  # noqa: F401  (re-exported: the tests' names)
    RemoteObject,
    StudentAttributeError,
    StudentError,
    StudentStopped,
    SubmissionProxy,
    _Bridge,
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



def _student_env(workdir: str) -> dict[str, str]:
    """A small environment: none of the grader's variables (they may hold secrets).

    One is passed on: ``DIFFLAB_FAKE_CUDA=1`` (CUDA is the CPU stand-in for CuPy), so a
    course tested with the stand-in has it in the student's process too.
    """
    package_root = str(Path(__file__).resolve().parents[2])
    paths = [package_root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    stand_in = {STAND_IN_VARIABLE: "1"} if os.environ.get(STAND_IN_VARIABLE) == "1" else {}
    return {
        **stand_in,
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
        #: The test's lists, dicts, arrays and tensors the student's process holds copies of.
        self.mirrors = Mirrors(makes_slots=True)
        #: The test's functions the student's code may call, by number (never reused).
        self.callbacks: dict[int, Any] = {}
        self._callback_numbers: dict[int, int] = {}
        self._next_callback = 0
        self._forgotten: list[int] = []
        self._depth = 0
        self._remotes: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        #: Set (with the message) when the CPU-share watch stopped the student's processes.
        self.overused: str | None = None
        #: What the student's process can use (``{"cuda": bool}``), measured there before
        #: the submission loaded; None before the first start.
        self.environment: dict[str, Any] | None = None

    def end_test(self) -> None:
        """Forget the test's mirrored objects and functions (the next test has its own)."""
        self._forgotten += self.mirrors.clear()
        self.callbacks.clear()
        self._callback_numbers.clear()

    # -- lifetime ---------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.proc is not None and self.stopped is None

    def start(self) -> dict[str, Any]:
        """Start a fresh process and load the submission; returns its hello.

        The hello is ``{"loaded": True, "cell_errors": [...]}`` or ``{"loaded": False,
        "error": payload}``.  Before the submission loads, the process says what the
        student's code will be able to use; it is kept in :attr:`environment`.

        Raises
        ------
        StudentStopped
            When the process ends, overruns the startup time or talks nonsense.
        """
        self.stop()
        self.generation += 1
        self.stopped = self.overused = self.environment = None
        self.mirrors.clear()
        self._forgotten = []
        self.workdir = tempfile.mkdtemp(prefix="difflab-student-", dir=self.workroot)
        target = os.path.join(self.workdir, "submission.py")
        shutil.copyfile(self.submission, target)
        if self.user is not None:
            for path in (self.workdir, target):
                os.chown(path, self.user.uid, self.user.gid)
        request_read, request_write = os.pipe()
        reply_read, reply_write = os.pipe()
        # a fresh process starts a fresh output budget (MAX_FILE_BYTES limits the log)
        log = os.open(self.output_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_TRUNC,
                      0o600)
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
            # measured there before any student code ran, and read whole here before the
            # submission may load: the student's code cannot come before it or replace it
            self.environment = self._read_environment(start)
            hello = self._exchange({"op": "load"}, loading=True)
        finally:
            self.deadline = saved
        if not isinstance(hello, dict) or not isinstance(hello.get("loaded"), bool) or not (
                isinstance(hello.get("cell_errors"), list) if hello["loaded"]
                else isinstance(hello.get("error"), dict)):
            self._fail("protocol", "The process running your code sent a malformed greeting.")
        if not hello["loaded"]:
            hello["error"] = _clean_payload(hello["error"])
        return hello

    def _read_environment(self, start: dict[str, Any]) -> dict[str, Any]:
        """Send the start message; the environment the process measured, checked."""
        try:
            return _clean_environment(self._exchange(start, loading=True))
        except (ProtocolError, StudentError) as exc:
            detail = exc if isinstance(exc, ProtocolError) else exc.payload["type"]
            self._fail("protocol", "The process running your code sent a malformed "
                                   f"description of its environment ({detail}).")
            raise  # (not reached: _fail raises)

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
        raised: list[BaseException] = []  # what the test's functions raised in this call
        try:
            self._send(request, deadline)
            while True:
                reply, reply_blobs = self.channel.receive(deadline, limit=MAX_REPLY)
                kind = _reply_kind(reply)
                if "sync" in reply:
                    self.mirrors.apply(reply["sync"], functools.partial(
                        self._decode, blobs=reply_blobs))
                if kind == "call":
                    self._call_back(reply["call"], reply_blobs, deadline, raised)
                    continue
                if kind == "ok":
                    return self._decode(reply["ok"], reply_blobs)
                payload = reply["error"]
                if not isinstance(payload, dict):
                    raise ProtocolError("an error report that is not a record")
                payload = _clean_payload(payload)
                break
        except TimeoutError:
            if self.overused is not None:  # the CPU-share watch stopped it: say why
                self._fail("cpu", self.overused)
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
        if raised and payload["type"] == _TEST_FUNCTION_ERROR:
            raise raised[-1]  # the test's own function failed: the test sees its exception
        if payload["type"] == "AttributeError" or payload["missing"]:
            raise StudentAttributeError(payload)
        raise StudentError(payload)

    def _send(self, fields: dict[str, Any], deadline: float) -> None:
        """Send a request: the objects forgotten, the changes to the mirrored ones, then
        ``fields`` (encoded in this order, the order the student's process reads them).

        ``args``, ``kwargs`` and ``value`` may hold the test's objects (mirrored, or
        functions); the other fields are plain data.
        """
        blobs: list[bytes] = []
        mirror, plain = self._encode_extra, functools.partial(self._encode_extra, plain=True)
        mark = self.mirrors.next_slot
        forget = self._forgotten + self.mirrors.unreachable()
        sync = self.mirrors.changed(blobs, mirror)
        try:
            tree = {"$dict": [[key, self._field(key, value, blobs, mirror, plain)]
                              for key, value in fields.items()]}
        except BaseException:
            self.mirrors.rollback(mark, [slot for slot, _ in sync])
            self._forgotten = forget
            raise
        self._forgotten = []
        body = {"forget": forget, "sync": sync, "request": tree}
        self.channel.send(body, blobs, deadline=deadline)

    @staticmethod
    def _field(key: str, value: Any, blobs: list, mirror: Any, plain: Any) -> Any:
        if key == "args":
            return encode(tuple(value), blobs, extra=mirror)
        if key == "kwargs":
            return {"$dict": [[k, encode(v, blobs, extra=mirror)] for k, v in value.items()]}
        return encode(value, blobs, extra=mirror if key == "value" else plain)

    def _decode(self, tree: Any, blobs: list[bytes]) -> Any:
        return decode(tree, blobs, self._make)

    def _call_back(self, tree: Any, blobs: list[bytes], deadline: float,
                   raised: list[BaseException]) -> None:
        """Run the test's function the student's code called, and answer with data.

        The student's process says which function (a number it was given) and the
        arguments (data, or its own objects, which the function gets as
        :class:`RemoteObject`).  The function's exception stays here (the student's
        code is told only its type); the test sees it if the student's call fails.
        """
        call = self._decode(tree, blobs)
        if not (isinstance(call, dict) and type(call.get("id")) is int
                and isinstance(call.get("args"), tuple) and isinstance(call.get("kwargs"), dict)
                and all(isinstance(k, str) for k in call["kwargs"])):
            raise ProtocolError("a malformed call of the test's function")
        function = self.callbacks.get(call["id"])
        answer: dict[str, Any]
        if function is None:
            answer = {"op": "raise", "type": "LookupError",
                      "text": "a function of an earlier test was called"}
        elif self._depth >= MAX_CALLBACK_DEPTH:
            answer = {"op": "raise", "type": "RecursionError",
                      "text": f"the test's function and your code called each other more "
                              f"than {MAX_CALLBACK_DEPTH} levels deep"}
        else:
            self._depth += 1
            try:
                answer = {"op": "return", "value": function(*call["args"], **call["kwargs"])}
                self._send(answer, deadline)
                return
            except StudentStopped:
                raise
            except Exception as exc:  # noqa: BLE001 -- the test's function failed
                if self.stopped is not None:
                    raise
                raised.append(exc)
                answer = {"op": "raise", "type": type(exc).__name__[:100],
                          "text": "the function the test passed raised " +
                                  type(exc).__name__[:100]}
            finally:
                self._depth -= 1
        self._send(answer, deadline)

    def _encode_extra(self, value: Any, blobs: list[bytes], plain: bool = False) -> Any:
        """Trees of the test's objects: references, mirrored data, duals, functions."""
        from difflab.diff.forward import Dual

        if isinstance(value, RemoteObject):
            info = object.__getattribute__(value, "_info")
            return {"$ref": info["$ref"], "gen": info["gen"]}
        if plain:
            return NotImplemented
        if mirrorable(value):
            return self.mirrors.ref(value, blobs, self._encode_extra)
        if isinstance(value, Dual):
            return {"$dual": [encode(value.primal, blobs, extra=self._encode_extra),
                              encode(value.tangent, blobs, extra=self._encode_extra)]}
        if is_function(value):
            number = self._callback_numbers.get(id(value))
            if number is None or self.callbacks.get(number) is not value:
                number = self._callback_numbers[id(value)] = self._next_callback
                self._next_callback += 1
                self.callbacks[number] = value
            return {"$callback": number}
        if isinstance(value, tuple):
            return NotImplemented
        kind = type(value).__name__
        raise TypeError(
            f"a {kind} (an object of the test) cannot be passed to the student's code: "
            "only data crosses between the processes (numbers, strings, arrays, tensors, "
            "lists, dicts, tuples) and the test's functions, which the student's code calls "
            f"back. Pass the {kind}'s data, or make it with the submission's own classes."
        )

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
        if tag == "$slot":
            return self.mirrors.decode_slot(node, reader, depth)
        if tag == "$callback":
            function = self.callbacks.get(node["$callback"])
            if function is None:
                raise ProtocolError("a reference to a function the test did not pass")
            return function
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
        remote = self._remotes.get((info["$ref"], info["gen"]))
        if remote is None:  # one stand-in per object, so `is` means what it means there
            remote = self._remotes[info["$ref"], info["gen"]] = RemoteObject(self, info)
        return remote

    # -- calling with gradients ----------------------------------------------------------
    def invoke(self, target: RemoteObject, args: tuple, kwargs: dict) -> Any:
        """Call ``target``; through ``_Bridge`` when a tensor argument requires grad."""
        import difflab
        from difflab.tensor import Tensor

        if difflab.is_grad_enabled() and any(
                isinstance(a, Tensor) and a.requires_grad for a in args):
            output, record = self.call("call_grad", target, args=list(args), kwargs=kwargs)
            if record is None:  # not a tensor on the student's tape: a plain result
                return output
            if not isinstance(output, Tensor) or type(record) is not int:
                self._fail("protocol", "The process running your code sent a malformed "
                                       "result of a differentiable call.")
            return _Bridge.apply((self, record, output), *args)
        return self.call("call", target, args=list(args), kwargs=kwargs)


#: The type of the exception the student's process raises where a test's function failed.
_TEST_FUNCTION_ERROR = "TestFunctionError"


def _reply_kind(reply: Any) -> str:
    """``ok``, ``error`` or ``call`` (the student's code calls a test's function)."""
    if isinstance(reply, dict):
        keys = set(reply) - {"sync"}
        if len(keys) == 1 and keys <= {"ok", "error", "call"}:
            return keys.pop()
    raise ProtocolError("a reply that is neither a result, an error nor a call")


def _clean_environment(value: Any) -> dict[str, Any]:
    """The student's process's environment report, checked field by field.

    Written before any student code ran, but still read as untrusted data: exactly the
    fields expected, each of its type, or a :class:`ProtocolError`.
    """
    if type(value) is not dict or set(value) != {"cuda"} or type(value["cuda"]) is not bool:
        raise ProtocolError("an environment report other than {'cuda': True or False}")
    return {"cuda": value["cuda"]}


#: The largest line number a student's report may name (a file is not longer).
_MAX_LINE = 10_000_000


def _clean_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """The fields of a student's exception report, each of the type it should have."""

    def text(value: Any, limit: int = 2000) -> str:
        return value[:limit] if isinstance(value, str) else ""

    def line(value: Any) -> bool:  # a line number a file can have
        return type(value) is int and 0 <= value <= _MAX_LINE

    def items(value: Any) -> list:
        return value[:1000] if isinstance(value, list) else []

    frames = []
    for frame in items(payload.get("frames")):
        if isinstance(frame, list) and len(frame) == 3 and line(frame[0]):
            frames.append([frame[0], text(frame[1], 100), text(frame[2], 200)])
    syntax = payload.get("syntax")
    if not (isinstance(syntax, list) and len(syntax) == 3 and line(syntax[0])):
        syntax = None
    else:
        syntax = [syntax[0], text(syntax[1], 200), text(syntax[2], 200)]
    bases = [text(b, 100) for b in items(payload.get("bases")) if isinstance(b, str)][:20]
    exit_code = payload.get("exit")
    if isinstance(exit_code, str):
        exit_code = text(exit_code, 100)
    elif not (exit_code is None or type(exit_code) is int and abs(exit_code) < 2**31):
        exit_code = None
    return {
        "type": text(payload.get("type"), 100) or "Exception",
        "text": text(payload.get("text")),
        "frames": frames[-6:],
        "syntax": syntax,
        "exit": exit_code,
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
