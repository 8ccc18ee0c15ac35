"""PyTorch's ``torch.utils.benchmark.Timer``: Python's ``timeit`` with the habits of a benchmark.

``Timer(stmt, setup, globals=...)`` wraps ``timeit.Timer`` (the
statement compiled into a loop, the garbage collector off while timing) and
returns a :class:`~difflab.utils.benchmark.Measurement` instead of bare
seconds.  Three ways to measure:

* :meth:`Timer.timeit` runs the statement ``number`` times as one block (after a
  warm-up block a hundredth as long);
* :meth:`Timer.blocked_autorange` picks a block size large enough that the
  timer's own cost is negligible, then times blocks until ``min_run_time``;
* :meth:`Timer.adaptive_autorange` times blocks until the IQR falls below
  ``threshold`` times the median (or ``max_run_time`` is spent).

``num_threads`` is set with ``difflab.set_num_threads`` while timing and put
back after, as PyTorch's Timer does with ``torch.set_num_threads``; difflab
computes with NumPy, whose BLAS keeps its own threads (set
``OMP_NUM_THREADS`` before Python starts to change those).
"""

from __future__ import annotations

import timeit
from collections.abc import Callable
from typing import Any

from difflab.backends.settings import get_num_threads, set_num_threads
from difflab.utils.benchmark.measurement import Measurement, TaskSpec


class Timer:
    """Time a Python statement (or a callable) and return a :class:`Measurement`.

    Parameters
    ----------
    stmt : str or callable, optional
        What to time (default ``"pass"``).
    setup : str or callable, optional
        Run once before timing (default ``"pass"``).
    global_setup : str, optional
        PyTorch's C++ option: must be empty.
    timer : callable, optional
        The clock (default ``timeit.default_timer``, ``time.perf_counter``).
    globals : dict, optional
        The names ``stmt`` and ``setup`` see (copied).
    label, sub_label, description : str, optional
        How :class:`Compare` groups the measurement: a table per label, a row per
        sub-label, a column per description.
    env : str, optional
        A label of the environment (a checkout, a version).
    num_threads : int, optional
        Threads to ask for while timing (default 1).
    language : str, optional
        ``"python"``; C++ statements are refused.

    Returns
    -------
    Timer

    Raises
    ------
    ValueError
        For a C++ ``language`` or ``global_setup``, or a ``num_threads`` below 1.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.utils.benchmark import Timer
    >>> x = dl.ones(8)
    >>> t = Timer(stmt="x * 2", globals={"x": x}, label="scale", description="mul")
    >>> m = t.timeit(100)
    >>> m.number_per_run, len(m.times), m.median > 0, m.title
    (100, 1, True, 'scale')
    """

    def __init__(self, stmt: str | Callable = "pass", setup: str | Callable = "pass",
                 global_setup: str = "", timer: Callable[[], float] = timeit.default_timer,
                 globals: dict[str, Any] | None = None, label: str | None = None,
                 sub_label: str | None = None, description: str | None = None,
                 env: str | None = None, num_threads: int = 1,
                 language: str = "python") -> None:
        if language not in ("python", "py"):
            raise ValueError(f"Timer(language={language!r}): difflab times Python statements "
                             f"only; write stmt in Python")
        if global_setup:
            raise ValueError("Timer(global_setup=...) is PyTorch's C++ option; put Python "
                             "setup in setup=")
        if isinstance(num_threads, bool) or not isinstance(num_threads, int) or num_threads < 1:
            raise ValueError(f"Timer(num_threads={num_threads!r}): expected an int >= 1")
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer,
                                   globals=dict(globals or {}))
        self._task_spec = TaskSpec(
            stmt=stmt if isinstance(stmt, str) else getattr(stmt, "__name__", repr(stmt)),
            setup=setup if isinstance(setup, str) else getattr(setup, "__name__", repr(setup)),
            label=label, sub_label=sub_label, description=description, env=env,
            num_threads=num_threads)

    def _timeit(self, number: int) -> float:
        """Seconds for one block of ``number`` runs, at the asked thread count."""
        before = get_num_threads()
        set_num_threads(self._task_spec.num_threads)
        try:
            return self._timer.timeit(number)
        finally:
            set_num_threads(before)

    def _measurement(self, number: int, times: list[float]) -> Measurement:
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def timeit(self, number: int = 1000000) -> Measurement:
        """One block of ``number`` runs (after a warm-up block of ``number // 100``).

        Parameters
        ----------
        number : int, optional
            Runs in the block (default a million, as ``timeit``'s).

        Returns
        -------
        Measurement
            One time.

        Examples
        --------
        >>> from difflab.utils.benchmark import Timer
        >>> m = Timer("sum(range(10))").timeit(50)
        >>> m.number_per_run, len(m.raw_times)
        (50, 1)
        """
        self._timeit(max(number // 100, 2))  # (warm-up: caches, the first call's imports)
        return self._measurement(number, [self._timeit(number)])

    def _block_size(self, min_run_time: float) -> int:
        """Runs per block: ×10 until the timer's own cost is under 1e-4 of a block and a
        block lasts min_run_time / 1000 (or a block alone exceeds min_run_time)."""
        overhead = sorted(self._timeit(0) for _ in range(5))[2]
        number = 1
        while True:
            taken = self._timeit(number)
            if taken > min_run_time or number >= 10**9 or (overhead <= 1e-4 * taken
                                                           and taken >= min_run_time / 1000):
                return number
            number *= 10

    def _loop(self, number: int, stop: Callable[[list[float]], bool], min_run_time: float,
              max_run_time: float | None, callback: Callable | None) -> list[float]:
        """Time blocks until ``min_run_time`` is spent and ``stop`` agrees (or the maximum)."""
        total, times = 0.0, []
        while True:
            taken = self._timeit(number)
            times.append(taken)
            total += taken
            if callback is not None:
                callback(number, taken)
            if total >= min_run_time and stop(times):
                return times
            if max_run_time is not None and total > max_run_time:
                return times

    def blocked_autorange(self, callback: Callable[[int, float], Any] | None = None,
                          min_run_time: float = 0.2) -> Measurement:
        """Blocks of a size chosen so the timer's cost is negligible, for ``min_run_time``.

        Parameters
        ----------
        callback : callable, optional
            Called as ``callback(number, seconds)`` after each block.
        min_run_time : float, optional
            Seconds to spend timing, at least (default 0.2).

        Returns
        -------
        Measurement
            One time per block.

        Examples
        --------
        >>> from difflab.utils.benchmark import Timer
        >>> m = Timer("sum(range(10))").blocked_autorange(min_run_time=0.01)
        >>> len(m.times) >= 1 and m.number_per_run >= 1
        True
        """
        number = self._block_size(min_run_time)
        times = self._loop(number, lambda times: True, min_run_time, None, callback)
        return self._measurement(number, times)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01,
                           max_run_time: float = 10.0,
                           callback: Callable[[int, float], Any] | None = None) -> Measurement:
        """Time blocks until the IQR is below ``threshold`` times the median.

        At least four blocks and ``min_run_time`` seconds, unless ``max_run_time``
        is spent first (then what was timed by then).

        Parameters
        ----------
        threshold : float, optional
            The IQR / median to reach (default 0.1).
        min_run_time, max_run_time : float, optional
            Seconds to spend, at least and at most.
        callback : callable, optional
            Called as ``callback(number, seconds)`` after each block.

        Returns
        -------
        Measurement

        Examples
        --------
        >>> from difflab.utils.benchmark import Timer
        >>> m = Timer("sum(range(10))").adaptive_autorange(threshold=10.0)  # met at 4 blocks
        >>> len(m.times) >= 4 and m.meets_confidence(10.0)
        True
        """
        number = self._block_size(0.05)

        def steady(times: list[float]) -> bool:
            return len(times) > 3 and self._measurement(number, times).meets_confidence(
                threshold)

        times = self._loop(number, steady, min_run_time, max_run_time, callback)
        return self._measurement(number, times)

    def collect_callgrind(self, *args: Any, **kwargs: Any) -> None:
        """PyTorch counts instructions with Valgrind here; refused: difflab has no such tool.

        Parameters
        ----------
        *args, **kwargs
            PyTorch's.

        Returns
        -------
        None

        Raises
        ------
        NotImplementedError
            Always.

        Examples
        --------
        >>> from difflab.utils.benchmark import Timer
        >>> Timer("pass").collect_callgrind()
        Traceback (most recent call last):
            ...
        NotImplementedError: Timer.collect_callgrind: ...
        """
        raise NotImplementedError(
            "Timer.collect_callgrind: difflab has no Valgrind instruction counts; time with "
            "blocked_autorange() or adaptive_autorange(), or profile with difflab.profiler")
