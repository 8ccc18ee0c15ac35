"""What a profile found: its events, their averages by name, the table, the Chrome trace.

PyTorch's ``torch.autograd.profiler_util``.  A :class:`FunctionEvent` is one
span of time on one thread, ``[start_us, end_us)``: one primitive applied, one
step of the backward walk, or a range the user labelled with
``record_function``.  Events nest; an event's *self* time is its total time
less the totals of the events directly inside it, so the self times of all
events add up to the time the profile saw.  :class:`EventList` holds them in
the order they started; :meth:`EventList.key_averages` adds up the events of
one name (:class:`FunctionEventAvg`), and :meth:`EventList.table` prints
those as PyTorch does.  Nothing here imports the rest of difflab: the
recording is :mod:`difflab.autograd.profiler`.
"""

from __future__ import annotations

import json
import os
from typing import Any

#: The columns ``table(sort_by=...)`` can sort by, with the attribute each reads.
SORT_KEYS = ("cpu_time_total", "self_cpu_time_total", "cpu_time", "count",
             "cpu_memory_usage", "self_cpu_memory_usage")


class FunctionEvent:
    """One event of a profile: a span of time in which one thing ran.

    Made by the profiler (:class:`difflab.profiler.profile`); read by the table
    and the Chrome trace.  Times are in microseconds from the profile's start.

    Parameters
    ----------
    id : int
        Its number, in the order events started.
    name : str
        A primitive's name (``"mul"``, ``"matmul"``), a backward step's
        (``"MulBackward0"``) or the label given to ``record_function``.
    kind : str
        ``"operator"`` (a primitive applied), ``"backward"`` (one record's VJP in the
        backward walk) or ``"user_annotation"`` (``record_function``, a profiler step).
    thread : int
        The thread it ran on (``threading.get_ident()``).
    start_us : float
        When it started.
    input_shapes : list of list of int, optional
        One shape per input (``[]`` for a number); empty unless ``record_shapes``.
    stack : list of str, optional
        The user's frames that called it, innermost first (``with_stack``).

    Attributes
    ----------
    end_us : float
        When it ended.
    cpu_children : list of FunctionEvent
        The events directly inside it.
    cpu_parent : FunctionEvent or None
        The event it is directly inside.
    self_cpu_memory_usage : int
        Bytes of the arrays it returned itself (``profile_memory``; 0 otherwise).

    Examples
    --------
    >>> from difflab.autograd.profiler_util import FunctionEvent
    >>> e = FunctionEvent(0, "mul", "operator", thread=1, start_us=2.0)
    >>> e.end_us = 5.0
    >>> e.cpu_time_total, e.self_cpu_time_total, e.count
    (3.0, 3.0, 1)
    """

    def __init__(self, id: int, name: str, kind: str, thread: int, start_us: float,
                 input_shapes: list | None = None, stack: list | None = None) -> None:
        self.id = id
        self.name = name
        self.kind = kind
        self.thread = thread
        self.start_us = start_us
        self.end_us = start_us
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.stack = stack if stack is not None else []
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None
        self.self_cpu_memory_usage = 0

    key = property(lambda self: self.name, doc="The name events are averaged under.")
    count = 1

    @property
    def cpu_time_total(self) -> float:
        """Its duration in microseconds, the events inside it included."""
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self) -> float:
        """Its duration less the durations of the events directly inside it."""
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    cpu_time = cpu_time_total

    @property
    def cpu_memory_usage(self) -> int:
        """Bytes returned by it and by every event inside it (``profile_memory``)."""
        return self.self_cpu_memory_usage + sum(c.cpu_memory_usage for c in self.cpu_children)

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} kind={self.kind} "
                f"cpu_time_total={self.cpu_time_total:.3f}us "
                f"input_shapes={self.input_shapes}>")


class FunctionEventAvg:
    """The events of one name (one name and input shapes, one name and stack) added up.

    Made by :meth:`EventList.key_averages`; a row of the table.

    Parameters
    ----------
    key : str
        The name of the events it adds up.

    Attributes
    ----------
    key : str
        The name.
    count : int
        How many events were added.
    cpu_time_total, self_cpu_time_total : float
        Their total and self times added, in microseconds.
    cpu_memory_usage, self_cpu_memory_usage : int
        Their bytes added.
    input_shapes : list
        The input shapes of the first event (the group's, when grouped by them).
    stack : list of str
        The stack of the first event (the group's, when grouped by it).

    Examples
    --------
    >>> from difflab.autograd.profiler_util import FunctionEvent, FunctionEventAvg
    >>> avg = FunctionEventAvg("mul")
    >>> for start in (0.0, 10.0):
    ...     e = FunctionEvent(0, "mul", "operator", 1, start)
    ...     e.end_us = start + 4.0
    ...     avg.add(e)
    >>> avg.count, avg.cpu_time_total, avg.cpu_time
    (2, 8.0, 4.0)
    """

    def __init__(self, key: str) -> None:
        self.key = key
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.input_shapes: list | None = None
        self.stack: list | None = None

    def add(self, event: FunctionEvent) -> None:
        """Add one event (or another average) to the group."""
        if self.input_shapes is None:
            self.input_shapes, self.stack = event.input_shapes, event.stack
        self.count += event.count
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        self.cpu_memory_usage += event.cpu_memory_usage
        self.self_cpu_memory_usage += event.self_cpu_memory_usage

    @property
    def cpu_time(self) -> float:
        """The mean total time of one event, in microseconds."""
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} count={self.count} "
                f"cpu_time_total={self.cpu_time_total:.3f}us "
                f"self_cpu_time_total={self.self_cpu_time_total:.3f}us>")


class EventList(list):
    """A profile's events (or their averages), in the order they started; prints as a table.

    Parameters
    ----------
    events : iterable of FunctionEvent or FunctionEventAvg
        The rows.
    profile_memory : bool, optional
        Whether memory was recorded: the table then shows its columns.
    with_shapes : bool, optional
        Whether the table shows an "Input Shapes" column.
    with_stack : bool, optional
        Whether the table shows a "Source Location" column.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.ones(3, requires_grad=True)
    >>> with dl.profiler.profile() as prof:
    ...     (x * x).sum().backward()
    >>> events = prof.events()
    >>> [e.name for e in events]
    ['mul', 'sum', 'SumBackward0', 'MulBackward0']
    >>> [(a.key, a.count) for a in events.key_averages()]
    [('mul', 1), ('sum', 1), ('SumBackward0', 1), ('MulBackward0', 1)]
    """

    def __init__(self, events: Any = (), *, profile_memory: bool = False,
                 with_shapes: bool = False, with_stack: bool = False) -> None:
        super().__init__(events)
        self.profile_memory = profile_memory
        self.with_shapes = with_shapes
        self.with_stack = with_stack

    @property
    def self_cpu_time_total(self) -> float:
        """The self times of all the events added: the time the profile saw, in µs."""
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape: bool = False,
                     group_by_stack_n: int = 0) -> EventList:
        """The events added up by name (and input shapes, and the innermost stack frames).

        Parameters
        ----------
        group_by_input_shape : bool, optional
            One row per name and input shapes (needs ``record_shapes=True``).
        group_by_stack_n : int, optional
            One row per name and its ``n`` innermost user frames (needs ``with_stack=True``).

        Returns
        -------
        EventList
            Of :class:`FunctionEventAvg`, in the order each group first appeared.

        Examples
        --------
        >>> import difflab as dl
        >>> with dl.profiler.profile(record_shapes=True) as prof:
        ...     _ = dl.ones(2) * 2, dl.ones(3) * 2, dl.ones(2) * 3
        >>> [(a.key, a.count) for a in prof.key_averages()]
        [('mul', 3)]
        >>> [(a.input_shapes, a.count) for a in prof.key_averages(group_by_input_shape=True)]
        [([[2], []], 2), ([[3], []], 1)]
        """
        groups: dict[tuple, FunctionEventAvg] = {}
        for event in self:
            name = "ProfilerStep*" if event.key.startswith("ProfilerStep#") else event.key
            key: tuple = (name,)  # (the steps as one row, as PyTorch's)
            if group_by_input_shape:
                key += (str(event.input_shapes),)
            if group_by_stack_n > 0:
                key += (tuple(event.stack[:group_by_stack_n]),)
            if key not in groups:
                groups[key] = FunctionEventAvg(name)
            groups[key].add(event)
        return EventList(groups.values(), profile_memory=self.profile_memory,
                         with_shapes=group_by_input_shape, with_stack=group_by_stack_n > 0)

    def total_average(self) -> FunctionEventAvg:
        """All the events added up into one row (key ``"Total"``).

        Returns
        -------
        FunctionEventAvg

        Examples
        --------
        >>> import difflab as dl
        >>> with dl.profiler.profile() as prof:
        ...     _ = dl.ones(2) + 1, dl.ones(2) - 1
        >>> prof.events().total_average().count
        2
        """
        total = FunctionEventAvg("Total")
        for event in self:
            total.add(event)
        return total

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_name_column_width: int = 55, max_shapes_column_width: int = 80,
              header: str | None = None, top_level_events_only: bool = False) -> str:
        """The rows as PyTorch's profiler table: self and total times, calls, shares.

        Parameters
        ----------
        sort_by : str, optional
            A column to sort by, largest first: ``"cpu_time_total"``,
            ``"self_cpu_time_total"``, ``"cpu_time"``, ``"count"``,
            ``"cpu_memory_usage"`` or ``"self_cpu_memory_usage"``.  None keeps the order.
        row_limit : int, optional
            At most this many rows (default 100; -1: all).
        max_name_column_width, max_shapes_column_width : int, optional
            Longer names and shapes are cut, ending in ``...``.
        header : str, optional
            A line printed above the table.
        top_level_events_only : bool, optional
            Only events with no parent (events, not averages).

        Returns
        -------
        str

        Raises
        ------
        ValueError
            For a ``sort_by`` of device time (no device time is recorded) or an unknown one.

        Examples
        --------
        >>> import difflab as dl
        >>> with dl.profiler.profile() as prof:
        ...     _ = dl.ones(4).sin()
        >>> lines = prof.key_averages().table().splitlines()
        >>> [column.strip() for column in lines[1].split("  ") if column]
        ['Name', 'Self CPU %', 'Self CPU', 'CPU total %', 'CPU total', 'CPU time avg',
         '# of Calls']
        >>> lines[3].split()[0], lines[3].split()[-1]      # one row: sin, called once
        ('sin', '1')
        """
        rows = list(self)
        if top_level_events_only:
            rows = [e for e in rows if getattr(e, "cpu_parent", None) is None]
        if sort_by is not None:
            rows.sort(key=lambda e: getattr(e, _sort_key(sort_by)), reverse=True)
        if row_limit is not None and row_limit >= 0:
            rows = rows[:row_limit]
        return _Table(self, max_name_column_width, max_shapes_column_width).render(rows, header)

    def __str__(self) -> str:
        return self.table()

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as a Chrome trace (JSON), for chrome://tracing or Perfetto.

        Each event is a complete event (``"ph": "X"``) with its start ``ts`` and
        duration ``dur`` in microseconds, its thread as ``tid`` and, where
        recorded, its input shapes and stack under ``args``.

        Parameters
        ----------
        path : str
            The file to write.

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
        >>> [e["name"] for e in json.load(open(path))["traceEvents"] if e["ph"] == "X"]
        ['exp']
        """
        with open(path, "w") as file:
            json.dump(chrome_trace(self), file, indent=1)


def chrome_trace(events: list, start_epoch_us: float = 0.0) -> dict:
    """The Chrome trace of ``events``: ``{"traceEvents": [...], "displayTimeUnit": "ms"}``.

    Parameters
    ----------
    events : list of FunctionEvent
        The events.
    start_epoch_us : float, optional
        Added to every start time (the profile's start since the epoch, in µs).

    Returns
    -------
    dict
        Ready for ``json.dump``.

    Examples
    --------
    >>> from difflab.autograd.profiler_util import FunctionEvent, chrome_trace
    >>> e = FunctionEvent(0, "sin", "operator", thread=7, start_us=1.0)
    >>> e.end_us = 3.5
    >>> [(t["name"], t["ts"], t["dur"], t["tid"]) for t in chrome_trace([e])["traceEvents"]]
    [('sin', 1.0, 2.5, 7)]
    """
    start = getattr(events, "start_epoch_us", start_epoch_us)
    pid = os.getpid()
    trace = []
    for e in events:
        args: dict[str, Any] = {"External id": e.id}
        if e.input_shapes:
            args["Input Dims"] = e.input_shapes
        if e.stack:
            args["Call stack"] = ";".join(e.stack)
        if e.self_cpu_memory_usage:
            args["Self CPU Mem (bytes)"] = e.self_cpu_memory_usage
        category = {"operator": "cpu_op", "backward": "cpu_op"}.get(e.kind, e.kind)
        trace.append({"ph": "X", "cat": category, "name": e.name, "pid": pid,
                      "tid": e.thread, "ts": start + e.start_us, "dur": e.cpu_time_total,
                      "args": args})
    return {"traceEvents": trace, "displayTimeUnit": "ms"}


def _sort_key(sort_by: str) -> str:
    """The attribute a ``sort_by`` reads, or a clear error."""
    if sort_by in SORT_KEYS:
        return sort_by
    if "cuda" in sort_by or "device" in sort_by or "xpu" in sort_by:
        raise ValueError(
            f"table(sort_by={sort_by!r}): difflab's profiler records no device time (on "
            f"CuPy the CPU times of GPU operations are their launch times). Sort by one of "
            f"{', '.join(SORT_KEYS)}.")
    raise ValueError(f"table(sort_by={sort_by!r}): expected one of {', '.join(SORT_KEYS)}")


def format_time(us: float) -> str:
    """A time in microseconds as PyTorch's table writes it: ``12.300us``, ``4.560ms``, ``1.200s``.

    Parameters
    ----------
    us : float
        Microseconds.

    Returns
    -------
    str

    Examples
    --------
    >>> from difflab.autograd.profiler_util import format_time
    >>> format_time(12.3), format_time(4560.0), format_time(1.2e6)
    ('12.300us', '4.560ms', '1.200s')
    """
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def format_memory(nbytes: int) -> str:
    """Bytes as PyTorch's table writes them: ``512 b``, ``1.50 Kb``, ``2.00 Mb``.

    Parameters
    ----------
    nbytes : int
        Bytes.

    Returns
    -------
    str

    Examples
    --------
    >>> from difflab.autograd.profiler_util import format_memory
    >>> format_memory(512), format_memory(1536), format_memory(2 * 1024 ** 2)
    ('512 b', '1.50 Kb', '2.00 Mb')
    """
    for unit, size in (("Gb", 1024 ** 3), ("Mb", 1024 ** 2), ("Kb", 1024)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} b"


class _Table:
    """The layout of :meth:`EventList.table`: which columns, how wide, one line per row."""

    WIDTH = 12  # (each number column, as PyTorch's)

    def __init__(self, events: EventList, max_name: int, max_shapes: int) -> None:
        self.total = events.self_cpu_time_total  # (the 100% of the shares)
        self.name_width = min(max([len(e.key) for e in events] + [4]) + 4, max_name)
        self.columns = [("Name", self.name_width), ("Self CPU %", self.WIDTH),
                        ("Self CPU", self.WIDTH), ("CPU total %", self.WIDTH),
                        ("CPU total", self.WIDTH), ("CPU time avg", self.WIDTH)]
        self.memory = events.profile_memory
        if self.memory:
            self.columns += [("CPU Mem", self.WIDTH), ("Self CPU Mem", self.WIDTH)]
        self.columns.append(("# of Calls", self.WIDTH))
        self.shapes = events.with_shapes
        if self.shapes:
            widest = max([len(str(e.input_shapes)) for e in events] + [12])
            self.columns.append(("Input Shapes", min(widest + 2, max_shapes)))
        self.stack = events.with_stack
        if self.stack:
            self.columns.append(("Source Location", max_name))

    def line(self, cells: list[str]) -> str:
        parts = []
        for text, (_, width) in zip(cells, self.columns):
            if len(text) > width:
                text = text[:width - 3] + "..."
            parts.append(text.rjust(width))
        return "  ".join(parts) + "  "

    def row(self, e: Any) -> list[str]:
        share = 100 / self.total if self.total > 0 else 0.0
        cells = [e.key, f"{share * e.self_cpu_time_total:.2f}%",
                 format_time(e.self_cpu_time_total), f"{share * e.cpu_time_total:.2f}%",
                 format_time(e.cpu_time_total), format_time(e.cpu_time)]
        if self.memory:
            cells += [format_memory(e.cpu_memory_usage), format_memory(e.self_cpu_memory_usage)]
        cells.append(str(e.count))
        if self.shapes:
            cells.append(str(e.input_shapes))
        if self.stack:
            cells.append(e.stack[0] if e.stack else "")
        return cells

    def render(self, rows: list, header: str | None) -> str:
        rule = "  ".join("-" * width for _, width in self.columns) + "  "
        lines = [header] if header else []
        lines += [rule, self.line([name for name, _ in self.columns]), rule]
        lines += [self.line(self.row(e)) for e in rows]
        lines += [rule, f"Self CPU time total: {format_time(self.total)}", ""]
        return "\n".join(lines)
