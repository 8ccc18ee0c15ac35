"""The profiler: where a program's time goes, one primitive (and one backward step) at a time.

PyTorch's ``torch.profiler`` (and the older ``torch.autograd.profiler``)::

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with record_function("model_inference"):
            model(inputs)
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))

How it watches: every primitive goes through one function,
:func:`difflab.autograd.engine.apply`, and every step of the backward pass
through one loop (``engine._walk``).  While a profile records, it is
``engine.Profiling.active``: ``apply`` hands each call to :meth:`profile.primitive`,
which opens an event, runs the call and closes the event; the walk hands each
record's VJP to :meth:`profile.backward_step`.  With no profile running, the
cost is one ``is None`` test per call.  ``record_function`` opens and closes
events of its own; events opened inside another are its children, so the
events of one thread form a tree (a stack of open events per thread).

Names.  A forward event carries difflab's primitive name (``mul``, ``matmul``,
``sum``, ``linear``) where PyTorch writes ``aten::mul``; a backward step
carries PyTorch's name for it (``MulBackward0``); a custom ``Function`` its
class name.  A composite (``F.mse_loss``) shows as the primitives it applies.

What it measures.  Wall-clock time on the CPU (``time.perf_counter_ns``),
including the Python of difflab around each NumPy call.  While it records,
the speed shortcuts of the backward walk step aside (each step must be timed
on its own), so a profiled backward takes the plain walk.  A ``dl.compile``'d
function replays one flat program over arrays, outside ``apply``: its
operations are not events (its backward step is, ``CompiledBackward0``); wrap
the call in ``record_function`` to time it.  No device time is recorded:
``ProfilerActivity.CUDA`` is accepted (with a warning) and the CPU times of
CuPy operations are their launch times.  ``profile_memory`` counts the bytes
of the arrays each event returned (not NumPy's temporaries inside it).
"""

from __future__ import annotations

import contextlib
import enum
import os
import socket
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from difflab.autograd import engine
from difflab.autograd.profiler_util import EventList, FunctionEvent

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class ProfilerActivity(enum.Enum):
    """What a profile records: ``CPU`` (every event); ``CUDA`` is accepted, not measured.

    Parameters
    ----------
    value : str
        ``"CPU"`` or ``"CUDA"`` (an enum: use the members, ``ProfilerActivity.CPU``).

    Examples
    --------
    >>> from difflab.profiler import ProfilerActivity
    >>> ProfilerActivity.CPU.name
    'CPU'
    """

    CPU = "CPU"
    CUDA = "CUDA"


def supported_activities() -> set[ProfilerActivity]:
    """The activities a profile can record here: the CPU's.

    Returns
    -------
    set of ProfilerActivity

    Examples
    --------
    >>> from difflab.profiler import supported_activities
    >>> supported_activities()
    {<ProfilerActivity.CPU: 'CPU'>}
    """
    return {ProfilerActivity.CPU}


class ProfilerAction(enum.Enum):
    """What a profile does at a step, as a :func:`schedule` says.

    ``NONE``: nothing; ``WARMUP``: nothing yet (PyTorch warms its tracer up; difflab's
    has nothing to warm); ``RECORD``: record; ``RECORD_AND_SAVE``: record, then hand
    the cycle's events to ``on_trace_ready``.

    Parameters
    ----------
    value : int
        0 to 3 (an enum: use the members, ``ProfilerAction.RECORD``).

    Examples
    --------
    >>> from difflab.profiler import ProfilerAction, schedule
    >>> schedule(wait=1, warmup=0, active=1)(1) is ProfilerAction.RECORD_AND_SAVE
    True
    """

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0,
             skip_first: int = 0) -> Callable[[int], ProfilerAction]:
    """Which steps a profile records: skip ``skip_first``, then cycles of wait, warmup, active.

    The returned function maps a step number (counted by ``prof.step()``) to
    a :class:`ProfilerAction`; the last active step of each cycle is
    ``RECORD_AND_SAVE``, when ``on_trace_ready`` receives the profile.

    Parameters
    ----------
    wait : int
        Steps not recorded at the start of each cycle.
    warmup : int
        Steps after those, not recorded either.
    active : int
        Steps recorded, at least 1.
    repeat : int, optional
        How many cycles (0: as long as the profile runs).
    skip_first : int, optional
        Steps skipped once, before the first cycle.

    Returns
    -------
    callable
        ``step -> ProfilerAction``.

    Raises
    ------
    ValueError
        For a negative count or ``active < 1``.

    Examples
    --------
    >>> from difflab.profiler import schedule
    >>> s = schedule(wait=1, warmup=1, active=2, repeat=1)
    >>> [s(step).name for step in range(5)]
    ['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE', 'NONE']
    """
    counts = {"wait": wait, "warmup": warmup, "active": active, "repeat": repeat,
              "skip_first": skip_first}
    for name, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"schedule: {name} must be an int >= 0, got {value!r}")
    if active < 1:
        raise ValueError("schedule: active must be at least 1 (the steps to record)")

    def action(step: int) -> ProfilerAction:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        position = step % cycle
        if position < wait:
            return ProfilerAction.NONE
        if position < wait + warmup:
            return ProfilerAction.WARMUP
        if position < cycle - 1:
            return ProfilerAction.RECORD
        return ProfilerAction.RECORD_AND_SAVE

    return action


def _always_record(step: int) -> ProfilerAction:
    """No schedule: every step is recorded (``on_trace_ready`` runs when the profile stops)."""
    return ProfilerAction.RECORD


def _shapes(values: Iterable[Any]) -> list:
    """One shape per value, as a list (``[]`` for a number or anything without a shape)."""
    return [list(v.shape) if hasattr(v, "shape") else [] for v in values]


def _nbytes(value: Any) -> int:
    """Bytes of the arrays in ``value`` (a tensor, an array, or a tuple of them)."""
    if isinstance(value, (tuple, list)):
        return sum(_nbytes(v) for v in value)
    array = getattr(value, "array", value)
    return int(getattr(array, "nbytes", 0))


def _user_stack() -> list[str]:
    """The calling frames outside difflab, innermost first: ``file(line): function``."""
    frames = traceback.extract_stack()[:-1]
    return [f"{f.filename}({f.lineno}): {f.name}" for f in reversed(frames)
            if not os.path.abspath(f.filename).startswith(_PACKAGE_DIR)]


class profile:  # noqa: N801  (PyTorch's name)
    """Record an event per primitive applied and per backward step, with their times.

    A context manager (or ``start()`` / ``stop()``).  While it records, every
    call of a difflab primitive is one event named after the primitive
    (``mul``, ``matmul``; PyTorch writes ``aten::mul``), every step of a
    backward pass one event named as PyTorch names it (``MulBackward0``), and
    every :class:`record_function` one event with its label.  Read them with
    :meth:`key_averages` (a table), :meth:`events` or :meth:`export_chrome_trace`.
    The results of the program are the same, profiled or not.

    Parameters
    ----------
    activities : iterable of ProfilerActivity, optional
        ``ProfilerActivity.CPU`` (the default); ``CUDA`` is accepted with a warning:
        no device time is recorded.
    schedule : callable, optional
        ``step -> ProfilerAction`` (see :func:`schedule`), advanced by :meth:`step`;
        without one every step is recorded.
    on_trace_ready : callable, optional
        Called with the profile at the end of each recorded cycle (and at the end of a
        profile without a schedule), e.g. :func:`tensorboard_trace_handler`.
    record_shapes : bool, optional
        Record each event's input shapes (``key_averages(group_by_input_shape=True)``).
    profile_memory : bool, optional
        Record the bytes of the arrays each event returned (memory columns in the table).
    with_stack : bool, optional
        Record the user's frames calling each event (``key_averages(group_by_stack_n=)``).
    with_flops, with_modules : bool, optional
        Accepted; nothing is recorded for them.
    enabled : bool, optional
        False: record nothing (the old ``torch.autograd.profiler.profile`` argument).
    use_cuda : bool, optional
        The old spelling of ``activities=[CPU, CUDA]``.
    **kwargs
        PyTorch's other arguments (``experimental_config``, ``use_device``, ...) are
        refused with a clear error.

    Returns
    -------
    profile
        Its ``__enter__`` returns itself.

    Raises
    ------
    RuntimeError
        When another profile is already recording.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.profiler import profile, record_function, ProfilerActivity
    >>> w = dl.ones(3, 2, requires_grad=True)
    >>> with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
    ...     with record_function("forward"):
    ...         loss = (dl.ones(4, 3) @ w).relu().sum()
    ...     loss.backward()
    >>> [(e.name, e.cpu_parent.name if e.cpu_parent else None) for e in prof.events()]
    ... # doctest: +NORMALIZE_WHITESPACE
    [('forward', None), ('matmul', 'forward'), ('relu', 'forward'), ('sum', 'forward'),
     ('SumBackward0', None), ('ReluBackward0', None), ('MatmulBackward0', None)]
    >>> [e.input_shapes for e in prof.events()][1]
    [[4, 3], [3, 2]]
    """

    def __init__(self, activities: Iterable[ProfilerActivity] | None = None, *,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[[profile], Any] | None = None,
                 record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, enabled: bool = True, use_cuda: bool = False,
                 **kwargs: Any) -> None:
        unknown = sorted(set(kwargs) - {"acc_events", "use_kineto", "use_cpu"})
        if unknown:
            raise TypeError(f"profile: difflab's profiler has no argument "
                            f"{', '.join(unknown)} (it records CPU events, input shapes, "
                            f"memory and stacks)")
        self.activities = set(activities or [ProfilerActivity.CPU])
        if use_cuda:
            self.activities.add(ProfilerActivity.CUDA)
        for activity in self.activities:
            if not isinstance(activity, ProfilerActivity):
                raise TypeError(f"profile: activities must be ProfilerActivity members, got "
                                f"{activity!r}")
        self.schedule = schedule if schedule is not None else _always_record
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.enabled = enabled
        self.step_num = 0
        self._thread = threading.local()  # .timing: per thread, see primitive
        self._events: list[FunctionEvent] = []
        self._stacks: dict[int, list[FunctionEvent]] = {}  # per thread: the open events
        self._recording = False
        self._step_event: FunctionEvent | None = None
        self._start_ns = time.perf_counter_ns()
        self._start_epoch_us = time.time_ns() / 1000

    @property
    def timing(self) -> Any:
        """The primitive whose next call ``apply`` is to run, in this thread (see
        :meth:`primitive`), or None."""
        return getattr(self._thread, "timing", None)

    # -- starting and stopping ------------------------------------------------
    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Start the profile (``with profile() as prof`` calls it).

        Returns
        -------
        None

        Examples
        --------
        >>> import difflab as dl
        >>> prof = dl.profiler.profile()
        >>> prof.start(); _ = dl.ones(2) * 3; prof.stop()
        >>> [e.name for e in prof.events()]
        ['mul']
        """
        if not self.enabled:
            return
        if ProfilerActivity.CUDA in self.activities:
            warnings.warn("ProfilerActivity.CUDA: difflab's profiler records no device "
                          "time; the CPU times of GPU operations are their launch times",
                          stacklevel=3)
        self.step_num = 0
        if self.schedule(0) is not ProfilerAction.NONE:
            self._begin_cycle()

    def stop(self) -> None:
        """Stop the profile; a cycle still recording is handed to ``on_trace_ready``.

        Returns
        -------
        None

        Examples
        --------
        >>> import difflab as dl
        >>> prof = dl.profiler.profile(); prof.start(); prof.stop()
        >>> len(prof.events())
        0
        """
        if self._recording:
            self._end_cycle()
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)

    def step(self) -> None:
        """Mark the end of a step (a training iteration): the schedule decides what follows.

        Each recorded step is also an event, ``ProfilerStep#<n>``, holding that
        step's events.

        Returns
        -------
        None

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab.profiler import profile, schedule
        >>> with profile(schedule=schedule(wait=1, warmup=0, active=1, repeat=1)) as prof:
        ...     for k in range(3):
        ...         _ = dl.ones(2) * k
        ...         prof.step()
        >>> [e.name for e in prof.events()]      # step 1 only: the schedule's active step
        ['ProfilerStep#1', 'mul']
        """
        if not self.enabled:
            return
        before = self.schedule(self.step_num)
        self.step_num += 1
        after = self.schedule(self.step_num)
        recording_before = before in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if recording_before and (before is ProfilerAction.RECORD_AND_SAVE
                                 or after is ProfilerAction.NONE
                                 or after is ProfilerAction.WARMUP):
            self._end_cycle()
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)
            recording_before = False
        if after in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
            if not recording_before:
                self._begin_cycle()
            else:
                self._next_step_event()

    def _begin_cycle(self) -> None:
        if engine.Profiling.active is not None:
            raise RuntimeError("profile: another profile is recording already; profiles do "
                               "not nest (use record_function to label parts of one)")
        self._events, self._stacks = [], {}
        engine.Profiling.active = self
        self._recording = True
        self._step_event = None
        if self.schedule is not _always_record:
            self._next_step_event()

    def _end_cycle(self) -> None:
        for stack in self._stacks.values():  # (events still open end with the cycle)
            if stack:
                self.close(stack[0])
        self._step_event = None
        engine.Profiling.active = None
        self._recording = False

    def _next_step_event(self) -> None:
        if self._step_event is not None:
            self.close(self._step_event)
        self._step_event = self.open(f"ProfilerStep#{self.step_num}", "user_annotation")

    # -- events ----------------------------------------------------------------
    def open(self, name: str, kind: str, inputs: Iterable[Any] = ()) -> FunctionEvent:
        """Start an event on this thread, inside the event open there (if one is).

        Parameters
        ----------
        name : str
            Its name.
        kind : str
            ``"operator"``, ``"backward"`` or ``"user_annotation"``.
        inputs : iterable, optional
            Its inputs (their shapes are recorded with ``record_shapes``).

        Returns
        -------
        FunctionEvent
            To hand to :meth:`close`.

        Examples
        --------
        >>> import difflab as dl
        >>> with dl.profiler.profile() as prof:
        ...     event = prof.open("mine", "user_annotation")
        ...     prof.close(event)
        >>> [e.name for e in prof.events()]
        ['mine']
        """
        thread = threading.get_ident()
        stack = self._stacks.setdefault(thread, [])
        event = FunctionEvent(len(self._events), name, kind, thread, 0.0,
                              _shapes(inputs) if self.record_shapes else None,
                              _user_stack() if self.with_stack else None)
        if stack:
            event.cpu_parent = stack[-1]
            stack[-1].cpu_children.append(event)
        stack.append(event)
        self._events.append(event)
        event.start_us = (time.perf_counter_ns() - self._start_ns) / 1000
        return event

    def close(self, event: FunctionEvent, output: Any = None) -> None:
        """End ``event`` (and any event left open inside it), noting what it returned.

        Parameters
        ----------
        event : FunctionEvent
            From :meth:`open`.
        output : optional
            What it returned: its arrays' bytes are counted with ``profile_memory``.

        Returns
        -------
        None

        Examples
        --------
        >>> import difflab as dl
        >>> with dl.profiler.profile() as prof:
        ...     prof.close(prof.open("mine", "user_annotation"))
        >>> prof.events()[0].cpu_time_total >= 0
        True
        """
        end = (time.perf_counter_ns() - self._start_ns) / 1000
        stack = self._stacks.get(event.thread, [])
        while event in stack:  # (an event left open inside it ends with it)
            stack.pop().end_us = end
        if self.profile_memory and output is not None:
            event.self_cpu_memory_usage = _nbytes(output)

    def primitive(self, op: Any, inputs: tuple, params: dict) -> Any:
        """``engine.apply(op, *inputs, **params)`` as one event (the engine calls this).

        ``timing = op`` (in this thread) tells ``apply`` that its next call of ``op``
        is this one, to run rather than hand back here; the primitives it applies
        inside (a custom Function's forward) are events of their own, its children.

        Parameters
        ----------
        op : Primitive
            The primitive applied.
        inputs : tuple
            Its inputs.
        params : dict
            Its settings.

        Returns
        -------
        Tensor
            What ``apply`` returns.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab.ops import registry
        >>> with dl.profiler.profile() as prof:
        ...     y = prof.primitive(registry.MUL, (dl.ones(2), 3.0), {})
        >>> y, [e.name for e in prof.events()]
        (tensor([3., 3.]), ['mul'])
        """
        event = self.open(op.name or type(op).__name__, "operator", inputs)
        outer, self._thread.timing = self.timing, op
        output = None
        try:
            output = engine.apply(op, *inputs, **params)
        finally:
            self._thread.timing = outer
            self.close(event, output)
        return output

    def backward_step(self, node: Any, grad_output: Any, create_graph: bool) -> tuple:
        """``node.vjp(grad_output, create_graph)`` as one event (the backward walk calls it).

        Parameters
        ----------
        node : Node
            The record whose VJP runs.
        grad_output : array or Tensor
            Its output's adjoint.
        create_graph : bool
            Whether the backward is recorded.

        Returns
        -------
        tuple
            The inputs' adjoints.

        Examples
        --------
        >>> import numpy as np, difflab as dl
        >>> x = dl.ones(2, requires_grad=True)
        >>> y = x * 3
        >>> with dl.profiler.profile() as prof:
        ...     grads = prof.backward_step(y.grad_fn, np.ones(2), False)
        >>> grads[0], [e.name for e in prof.events()]
        (array([3., 3.]), ['MulBackward0'])
        """
        event = self.open(node.name(), "backward", (grad_output,))
        grads = None
        try:
            grads = node.vjp(grad_output, create_graph)
        finally:
            self.close(event, grads)
        return grads

    # -- reading ---------------------------------------------------------------
    def events(self) -> EventList:
        """The events of the last recorded cycle, in the order they started.

        Returns
        -------
        EventList

        Examples
        --------
        >>> import difflab as dl
        >>> with dl.profiler.profile() as prof:
        ...     _ = dl.ones(2).sin().cos()
        >>> [e.name for e in prof.events()]
        ['sin', 'cos']
        """
        events = EventList(self._events, profile_memory=self.profile_memory,
                           with_shapes=self.record_shapes, with_stack=self.with_stack)
        events.start_epoch_us = self._start_epoch_us
        return events

    function_events = property(events, doc="The events (the old profiler's name).")

    def key_averages(self, group_by_input_shape: bool = False,
                     group_by_stack_n: int = 0) -> EventList:
        """The events added up by name: ``prof.key_averages().table(...)``.

        Parameters
        ----------
        group_by_input_shape : bool, optional
            One row per name and input shapes (needs ``record_shapes=True``).
        group_by_stack_n : int, optional
            One row per name and innermost ``n`` user frames (needs ``with_stack=True``).

        Returns
        -------
        EventList
            Of ``FunctionEventAvg``.

        Raises
        ------
        ValueError
            When grouping by what was not recorded.

        Examples
        --------
        >>> import difflab as dl
        >>> with dl.profiler.profile() as prof:
        ...     for _ in range(3):
        ...         _ = dl.ones(2) + 1
        >>> [(row.key, row.count) for row in prof.key_averages()]
        [('add', 3)]
        """
        if group_by_input_shape and not self.record_shapes:
            raise ValueError("key_averages(group_by_input_shape=True) needs the shapes: "
                             "profile(record_shapes=True)")
        if group_by_stack_n and not self.with_stack:
            raise ValueError("key_averages(group_by_stack_n=...) needs the stacks: "
                             "profile(with_stack=True)")
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def table(self, *args: Any, **kwargs: Any) -> str:
        """The events' table (the old profiler's ``prof.table()``): ``events().table(...)``.

        Parameters
        ----------
        *args, **kwargs
            As ``EventList.table``.

        Returns
        -------
        str

        Examples
        --------
        >>> import difflab as dl
        >>> with dl.profiler.profile() as prof:
        ...     _ = dl.ones(2).exp()
        >>> "exp" in prof.table()
        True
        """
        return self.events().table(*args, **kwargs)

    @property
    def self_cpu_time_total(self) -> float:
        """The time the profile saw, in microseconds (the self times added)."""
        return self.events().self_cpu_time_total

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as a Chrome trace JSON file (chrome://tracing, Perfetto).

        Parameters
        ----------
        path : str
            The file to write (a ``.json``).

        Returns
        -------
        None

        Examples
        --------
        >>> import json, os, tempfile, difflab as dl
        >>> with dl.profiler.profile() as prof:
        ...     _ = dl.ones(2).exp()
        >>> path = os.path.join(tempfile.mkdtemp(), "trace.json")
        >>> prof.export_chrome_trace(path)
        >>> json.load(open(path))["traceEvents"][0]["name"]
        'exp'
        """
        self.events().export_chrome_trace(path)

    def __repr__(self) -> str:
        return f"<profile: {len(self._events)} events, step {self.step_num}>"


class record_function(contextlib.ContextDecorator):  # noqa: N801  (PyTorch's name)
    """Label a range of a program: its operations are the children of one event.

    A context manager or a decorator.  Outside a profile it does nothing.

    Parameters
    ----------
    name : str
        The label, shown in the table and the trace.
    args : str, optional
        Accepted (PyTorch's extra text); not recorded.

    Returns
    -------
    record_function
        Its ``__enter__`` returns itself.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.profiler import profile, record_function
    >>> @record_function("double")
    ... def double(x):
    ...     return x * 2
    >>> with profile() as prof:
    ...     with record_function("outer"):
    ...         _ = double(dl.ones(2))
    >>> [(e.name, e.cpu_parent.name if e.cpu_parent else None) for e in prof.events()]
    [('outer', None), ('double', 'outer'), ('mul', 'double')]
    """

    def __init__(self, name: str, args: str | None = None) -> None:
        if not isinstance(name, str):
            raise TypeError(f"record_function: the label must be a str, got "
                            f"{type(name).__name__}")
        self.name = name
        self.args = args
        self._events: list[tuple[profile, FunctionEvent]] = []

    def __enter__(self) -> record_function:
        prof = engine.Profiling.active
        if prof is not None:
            self._events.append((prof, prof.open(self.name, "user_annotation")))
        else:
            self._events.append((None, None))  # type: ignore[arg-type]
        return self

    def __exit__(self, *exc: object) -> None:
        prof, event = self._events.pop()
        if prof is not None:
            prof.close(event)


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False) -> Callable[[profile], None]:
    """An ``on_trace_ready`` that writes each cycle's Chrome trace into ``dir_name``.

    The files are named as PyTorch's, ``<worker>.<time in ns>.pt.trace.json``,
    which TensorBoard's profiler plugin lists; open one in Perfetto or
    chrome://tracing to see it without TensorBoard.

    Parameters
    ----------
    dir_name : str
        The folder (made if missing).
    worker_name : str, optional
        Default ``<hostname>_<pid>``.
    use_gzip : bool, optional
        Refused: difflab writes plain JSON.

    Returns
    -------
    callable
        ``handler(prof)``.

    Raises
    ------
    ValueError
        For ``use_gzip=True``.

    Examples
    --------
    >>> import os, tempfile, difflab as dl
    >>> from difflab.profiler import profile, tensorboard_trace_handler
    >>> folder = tempfile.mkdtemp()
    >>> with profile(on_trace_ready=tensorboard_trace_handler(folder, "w0")):
    ...     _ = dl.ones(2) * 2
    >>> [name.split(".")[0] for name in os.listdir(folder)]
    ['w0']
    """
    if use_gzip:
        raise ValueError("tensorboard_trace_handler(use_gzip=True): difflab writes plain "
                         "JSON traces; leave use_gzip False")
    worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"

    def handler(prof: profile) -> None:
        os.makedirs(dir_name, exist_ok=True)
        name = f"{worker}.{time.time_ns()}.pt.trace.json"  # (ns: two cycles, two files)
        prof.export_chrome_trace(os.path.join(dir_name, name))

    return handler
