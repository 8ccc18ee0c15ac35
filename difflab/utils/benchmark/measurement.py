"""What a :class:`~difflab.utils.benchmark.Timer` measured: times per run and their summary.

PyTorch's ``torch.utils.benchmark.Measurement``.  A measurement holds the raw
times of several *blocks* (each block runs the statement ``number_per_run``
times back to back) and reports the time of one run: the median over the
blocks and the interquartile range (IQR, the 75th percentile less the 25th),
which says how steady the machine was.  Medians, not means: one slow block (a
shared machine's other work, a garbage collection) moves a mean far more.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: An IQR above this share of the median is worth a warning (PyTorch's threshold).
IQR_WARN_THRESHOLD = 0.1
_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # seconds: no figure finer than the timer's resolution


@dataclass(frozen=True)
class TaskSpec:
    """What was timed and how it is labelled: the statement, its setup and the labels.

    Parameters
    ----------
    stmt : str
        The statement timed (a callable's name for a callable).
    setup : str
        Run once before timing.
    label, sub_label, description : str, optional
        How :class:`~difflab.utils.benchmark.Compare` groups it: a table per ``label``,
        a row per ``sub_label``, a column per ``description``.
    env : str, optional
        Which environment (a checkout, a version) ran it.
    num_threads : int
        The thread count asked for.

    Examples
    --------
    >>> from difflab.utils.benchmark.measurement import TaskSpec
    >>> TaskSpec("x * 2", "pass", label="scale", sub_label="float64").title
    'scale: float64'
    """

    stmt: str
    setup: str = "pass"
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label (and sub-label) if given, else the statement."""
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {self.sub_label}" if self.sub_label else "")
        return (f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n"
                f"{textwrap.indent(self.stmt, '  ')}")

    def setup_str(self) -> str:
        """``setup: ...`` unless the setup is ``pass``."""
        if not self.setup or self.setup == "pass":
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """The lines that name the task in a measurement's ``repr``."""
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join(f"{s}\n" if "\n" in s else s for s in sections if s)


def select_unit(seconds: float) -> tuple[str, float]:
    """The unit to print a time in, and its size in seconds: ``("us", 1e-6)``.

    Parameters
    ----------
    seconds : float
        A time.

    Returns
    -------
    tuple of (str, float)

    Examples
    --------
    >>> from difflab.utils.benchmark import select_unit
    >>> select_unit(3.2e-6), select_unit(0.5), select_unit(2e-9)
    (('us', 1e-06), ('ms', 0.001), ('ns', 1e-09))
    """
    if seconds <= 0 or not math.isfinite(seconds):
        return "s", 1.0
    power = int(math.log10(seconds) // 3)  # (-3: nanoseconds; anything smaller too)
    unit = "ns" if power <= -3 else {-2: "us", -1: "ms"}.get(power, "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


class Measurement:
    """The times of one timed statement, per run, and their summary.

    Parameters
    ----------
    number_per_run : int
        How many times the statement ran in each block.
    raw_times : sequence of float
        Each block's time in seconds.
    task_spec : TaskSpec
        What was timed.
    metadata : dict, optional
        Anything to keep with it.

    Attributes
    ----------
    times : list of float
        The time of one run, per block (``raw_times / number_per_run``).

    Examples
    --------
    >>> from difflab.utils.benchmark import Measurement
    >>> from difflab.utils.benchmark.measurement import TaskSpec
    >>> m = Measurement(10, [1e-5, 2e-5, 3e-5, 4e-5], TaskSpec("x + 1"))
    >>> round(m.median * 1e6, 3), round(m.mean * 1e6, 3), round(m.iqr * 1e6, 3)
    (2.5, 2.5, 1.5)
    >>> print(m)                                       # doctest: +ELLIPSIS
    <difflab.utils.benchmark.Measurement object at 0x...>
    x + 1
      Median: 2.50 us
      IQR:    1.50 us (1.75 to 3.25)
      4 measurements, 10 runs per measurement, 1 thread
      WARNING: Interquartile range is 60.0% of the median measurement.
               This suggests significant environmental influence.
    """

    def __init__(self, number_per_run: int, raw_times: Sequence[float], task_spec: TaskSpec,
                 metadata: dict | None = None) -> None:
        if not raw_times:
            raise ValueError("Measurement: no times (raw_times is empty)")
        self.number_per_run = number_per_run
        self.raw_times = list(raw_times)
        self.task_spec = task_spec
        self.metadata = metadata
        self.times = [t / number_per_run for t in self.raw_times]
        ordered = np.sort(np.asarray(self.times, dtype=np.float64))
        self._sorted = ordered
        self._p25, self._median, self._p75 = (float(v) for v in
                                              np.percentile(ordered, [25, 50, 75]))

    # -- the summary ----------------------------------------------------------------
    median = property(lambda self: self._median, doc="The median time of one run (s).")
    iqr = property(lambda self: self._p75 - self._p25,
                   doc="The interquartile range of one run's time (s).")

    @property
    def mean(self) -> float:
        """The mean time of one run (seconds)."""
        return float(np.mean(self._sorted))

    def meets_confidence(self, threshold: float = IQR_WARN_THRESHOLD) -> bool:
        """Whether the IQR is below ``threshold`` times the median (a steady measurement).

        Parameters
        ----------
        threshold : float, optional
            The largest acceptable IQR / median (default 0.1).

        Returns
        -------
        bool

        Examples
        --------
        >>> from difflab.utils.benchmark import Measurement
        >>> from difflab.utils.benchmark.measurement import TaskSpec
        >>> Measurement(1, [1.0, 1.01, 1.02, 1.0], TaskSpec("f()")).meets_confidence()
        True
        """
        return self.iqr / self._median < threshold if self._median > 0 else False

    @property
    def has_warnings(self) -> bool:
        """Whether the measurement was unsteady (IQR above 10% of the median)."""
        return len(self._sorted) >= 4 and not self.meets_confidence()

    @property
    def significant_figures(self) -> int:
        """How many figures of the median the spread supports (1 to 4), as PyTorch estimates.

        From the middle half of the times: a 90% interval of their mean, 1.645 σ/√n.
        """
        n = len(self._sorted)
        middle = self._sorted[n // 4:math.ceil(3 * n / 4)]
        interval = max(1.645 * float(np.std(middle)) / math.sqrt(len(middle)),
                       _MIN_CONFIDENCE_INTERVAL)
        figures = math.floor(math.log10(self._median / interval)) if self._median > 0 else 1
        return min(max(figures, 1), _MAX_SIGNIFICANT_FIGURES)

    # -- the task's labels ------------------------------------------------------------
    title = property(lambda self: self.task_spec.title, doc="The task's title.")
    stmt = property(lambda self: self.task_spec.stmt, doc="The statement timed.")
    setup = property(lambda self: self.task_spec.setup, doc="Its setup.")
    label = property(lambda self: self.task_spec.label, doc="Compare's table.")
    sub_label = property(lambda self: self.task_spec.sub_label, doc="Compare's row.")
    description = property(lambda self: self.task_spec.description, doc="Compare's column.")
    env = property(lambda self: self.task_spec.env, doc="The environment label.")
    num_threads = property(lambda self: self.task_spec.num_threads, doc="Threads asked for.")

    @staticmethod
    def merge(measurements: Sequence[Measurement]) -> list[Measurement]:
        """Join measurements of the same task into one each (their times pooled per run).

        Parameters
        ----------
        measurements : sequence of Measurement

        Returns
        -------
        list of Measurement
            One per task, in the order each task first appears.

        Examples
        --------
        >>> from difflab.utils.benchmark import Measurement
        >>> from difflab.utils.benchmark.measurement import TaskSpec
        >>> a = Measurement(1, [1.0, 2.0], TaskSpec("f()"))
        >>> b = Measurement(2, [6.0], TaskSpec("f()"))
        >>> [m.times for m in Measurement.merge([a, b])]
        [[1.0, 2.0, 3.0]]
        """
        groups: dict[TaskSpec, list[float]] = {}
        for m in measurements:
            groups.setdefault(m.task_spec, []).extend(m.times)
        return [Measurement(1, times, spec) for spec, times in groups.items()]

    def __repr__(self) -> str:
        n = len(self._sorted)
        unit, scale = select_unit(self._median)
        lines = [f"<difflab.utils.benchmark.Measurement object at {hex(id(self))}>",
                 self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} "
                         f"({self._p25 / scale:.2f} to {self._p75 / scale:.2f})")
        threads = self.task_spec.num_threads
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {threads} "
                     f"thread{'s' if threads > 1 else ''}")
        if self.has_warnings:
            lines.append(f"  WARNING: Interquartile range is "
                         f"{100 * self.iqr / self._median:.1f}% of the median measurement.\n"
                         f"           This suggests significant environmental influence.")
        return "\n".join(lines)
