"""PyTorch's ``torch.utils.benchmark.Compare``: measurements side by side in a table.

One table per ``label``; in it, a column per ``description`` and a row per
``sub_label`` (the statement where there is none), the rows grouped by
thread count.  Each cell is a median, all in one unit (the one that suits
the table's smallest median)::

    [--------- Batched dot ----------]
                   |  mul/sum  |  bmm
    1 threads: -----------------------
          [1, 1]   |    5.9    |  11.2
          [1, 64]  |    6.4    |  11.4

    Times are in microseconds (us).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from difflab.utils.benchmark.measurement import Measurement, select_unit

_UNIT_NAMES = {"ns": "nanoseconds", "us": "microseconds", "ms": "milliseconds", "s": "seconds"}
_BEST, _RESET = "\033[1m\033[32m", "\033[0m"


class Compare:
    """A table of measurements: a column per description, a row per sub-label.

    Parameters
    ----------
    results : iterable of Measurement
        What to show; measurements of the same task are merged.

    Returns
    -------
    Compare

    Examples
    --------
    >>> from difflab.utils.benchmark import Compare, Measurement
    >>> from difflab.utils.benchmark.measurement import TaskSpec
    >>> def m(seconds, row, column):
    ...     spec = TaskSpec("f()", label="dot", sub_label=row, description=column)
    ...     return Measurement(1, [seconds], spec)
    >>> Compare([m(5.9e-6, "[1, 1]", "mul/sum"), m(11.2e-6, "[1, 1]", "bmm"),
    ...          m(6.4e-6, "[1, 64]", "mul/sum"), m(11.4e-6, "[1, 64]", "bmm")]).print()
    [------------- dot --------------]
                   |  mul/sum  |  bmm
    1 threads: -----------------------
          [1, 1]   |    5.9    |  11.2
          [1, 64]  |    6.4    |  11.4
    <BLANKLINE>
    Times are in microseconds (us).
    <BLANKLINE>
    """

    def __init__(self, results: Iterable[Measurement]) -> None:
        self._results: list[Measurement] = []
        self._trim = False
        self._colorize: str | None = None
        self._highlight = False
        self.extend_results(results)

    def extend_results(self, results: Iterable[Measurement]) -> None:
        """Add measurements to the table.

        Parameters
        ----------
        results : iterable of Measurement

        Returns
        -------
        None

        Raises
        ------
        TypeError
            For anything but a Measurement.

        Examples
        --------
        >>> from difflab.utils.benchmark import Compare
        >>> Compare([]).extend_results(["1 us"])
        Traceback (most recent call last):
            ...
        TypeError: Compare: expected Measurement objects (from Timer), got str
        """
        for r in results:
            if not isinstance(r, Measurement):
                raise TypeError(f"Compare: expected Measurement objects (from Timer), got "
                                f"{type(r).__name__}")
            self._results.append(r)

    def trim_significant_figures(self) -> None:
        """Print each cell with only the figures its spread supports.

        Returns
        -------
        None

        Examples
        --------
        >>> from difflab.utils.benchmark import Compare
        >>> Compare([]).trim_significant_figures()
        """
        self._trim = True

    def colorize(self, rowwise: bool = False) -> None:
        """Print the fastest cell of each column (or of each row) in bold green.

        Parameters
        ----------
        rowwise : bool, optional
            Compare along rows instead of columns.

        Returns
        -------
        None

        Examples
        --------
        >>> from difflab.utils.benchmark import Compare
        >>> Compare([]).colorize(rowwise=True)
        """
        self._colorize = "row" if rowwise else "column"

    def highlight_warnings(self) -> None:
        """Mark an unsteady cell (IQR above 10% of its median) with ``(! NN%)``.

        Returns
        -------
        None

        Examples
        --------
        >>> from difflab.utils.benchmark import Compare
        >>> Compare([]).highlight_warnings()
        """
        self._highlight = True

    def print(self) -> None:
        """Print the tables.

        Returns
        -------
        None

        Examples
        --------
        >>> from difflab.utils.benchmark import Compare
        >>> Compare([]).print()
        <BLANKLINE>
        """
        print(str(self))

    def __str__(self) -> str:
        labels: dict[str | None, list[Measurement]] = {}
        for m in Measurement.merge(self._results):
            labels.setdefault(m.label, []).append(m)
        return "\n".join(self._table(label, group) for label, group in labels.items())

    def _table(self, label: str | None, group: list[Measurement]) -> str:
        """One label's table."""
        unit, scale = select_unit(min(m.median for m in group))
        columns = list(dict.fromkeys(m.description or "" for m in group))
        rows = sorted(dict.fromkeys((m.num_threads, m.sub_label or m.stmt) for m in group),
                      key=lambda row: row[0])  # (stable: in order of appearance per count)
        cell = {(m.num_threads, m.sub_label or m.stmt, m.description or ""): m for m in group}
        texts = {key: self._cell(m, scale) for key, m in cell.items()}
        best = self._best(cell)
        name_width = max(len(row) for _, row in rows) + 8
        # a column: its values right-aligned among themselves, centred under the header
        numbers = [max([len(texts[(t, r, c)]) for t, r in rows if (t, r, c) in texts] + [0])
                   for c in columns]
        widths = [max(len(c), n) for c, n in zip(columns, numbers)]
        head = " " * name_width + "|" + "|".join(
            f"  {c:^{w}}  " for c, w in zip(columns, widths))[:-2]
        width = len(head)
        title = f" {label} " if label else ""
        lines = [f"[{title:-^{width - 2}}]", head]
        threads = None
        for t, r in rows:
            if t != threads:
                threads = t
                lines.append(f"{t} threads: ".ljust(width, "-"))
            parts = []
            for c, w, n in zip(columns, widths, numbers):
                text = texts.get((t, r, c), "")
                padded = f"  {text.rjust(n):^{w}}  "
                parts.append(padded.replace(text, f"{_BEST}{text}{_RESET}")
                             if (t, r, c) in best and text else padded)
            lines.append(f"      {r:<{name_width - 6}}|" + "|".join(parts))
        lines += ["", f"Times are in {_UNIT_NAMES[unit]} ({unit}).", ""]
        return "\n".join(line.rstrip() for line in lines)

    def _cell(self, m: Measurement, scale: float) -> str:
        """A median in the table's unit, trimmed to its figures if asked."""
        value = m.median / scale
        digits = 1
        if self._trim:
            leading = math.floor(math.log10(abs(value))) + 1 if value > 0 else 1
            digits = max(m.significant_figures - leading, 0)
        text = f"{value:.{digits}f}"
        if self._highlight and m.has_warnings:
            text += f" (! {100 * m.iqr / m.median:.0f}%)"
        return text

    def _best(self, cell: dict) -> set:
        """The cells to colour: the fastest of each column (or row), if asked."""
        if self._colorize is None:
            return set()
        lines: dict = {}
        for key, m in cell.items():
            along = key[2] if self._colorize == "column" else key[:2]
            lines.setdefault(along, []).append((m.median, key))
        return {min(entries)[1] for entries in lines.values()}
