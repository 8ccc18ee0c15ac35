"""The plain data every harness returns: records that become a table, CSV, JSON or a plot.

A :class:`Report` is a list of *records* (one ``dict`` per row, plain Python
numbers and strings) plus the description of its columns (header, unit, how
to print a value).  Each harness subclasses it and adds :meth:`Report.figure`,
a matplotlib drawing of the same records.

Plots are drawn on a bare :class:`matplotlib.figure.Figure` (no ``pyplot``
state, no display needed) and saved as PNG or SVG, chosen by the file's
suffix.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "Column",
    "Report",
    "format_bytes",
    "format_count",
    "format_seconds",
    "format_sci",
]


# ------------------------------------------------------------------ formatting


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def format_seconds(value: Any) -> str:
    """``0.00123`` -> ``'1.23 ms'``: a time with the unit that keeps 3 significant digits."""
    if _missing(value):
        return "-"
    value = float(value)
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if abs(value) >= scale or unit == "ns":
            return f"{value / scale:.3g} {unit}"
    return f"{value:.3g} s"  # pragma: no cover  (the loop always returns)


def format_bytes(value: Any) -> str:
    """``2_500_000`` -> ``'2.5 MB'`` (decimal units)."""
    if _missing(value):
        return "-"
    value = float(value)
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.0f} B"


def format_sci(value: Any) -> str:
    """An error or any value spanning decades: ``1.2e-16``; exact zero prints ``0``."""
    if _missing(value):
        return "-"
    value = float(value)
    if value == 0:
        return "0"
    return f"{value:.2e}"


def format_count(value: Any) -> str:
    """An integer count with thousands separators: ``13,824``."""
    if _missing(value):
        return "-"
    return f"{int(value):,}"


def format_value(value: Any) -> str:
    """A derivative's value: enough digits to see where methods disagree."""
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    return f"{float(value):.16g}"  # nan and inf print as such: a method's honest answer


def format_ratio(value: Any) -> str:
    """A ratio such as time(method) / time(f): ``3.2x``."""
    if _missing(value):
        return "-"
    return f"{float(value):.3g}x"


@dataclass(frozen=True)
class Column:
    """How one record key is shown in the text table.

    Parameters
    ----------
    key : str
        The record key.
    header : str
        Column title; the unit, if any, is shown after it in brackets.
    unit : str
        The unit of the *record's* value (``"s"``, ``"bytes"``, ``"ops"``).
    format : callable
        Value -> text for the terminal table (CSV and JSON keep full precision).

    Examples
    --------
    >>> from difflab.compare import Column
    >>> column = Column("seconds", "time", "s", lambda v: f"{v * 1e3:.1f} ms")
    >>> column.format(0.0123)
    '12.3 ms'
    """

    key: str
    header: str
    unit: str = ""
    format: Callable[[Any], str] = str


# ---------------------------------------------------------------------- report


def _plain(value: Any) -> Any:
    """A JSON/CSV-friendly version of a value: NumPy scalars to Python, NaN to None."""
    if hasattr(value, "item") and callable(value.item) and getattr(value, "size", 1) == 1:
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


@dataclass
class Report:
    """Records from one harness run, printable, exportable and drawable.

    The plain data every harness returns (each harness's subclass adds
    :meth:`figure`): ``str(report)`` is the aligned text table with the title above and
    the notes below, :meth:`to_csv` and :meth:`to_json` keep every key at full
    precision (NaN as an empty cell or ``null``), :meth:`save_plots` draws the figure
    once and writes it as PNG and SVG.  A dataclass: its fields are its parameters and
    attributes.

    Parameters
    ----------
    title : str
        One line saying what was measured.
    records : list of dict, optional
        The data, one dict per row; the keys are the same in every row (plain Python
        numbers and strings).
    columns : list of Column, optional
        Which keys the text table shows, and how.
    notes : list of str, optional
        Lines printed under the table (how to read it, what was skipped).
    meta : dict, optional
        Settings of the run (function, point, machine facts), kept in JSON.

    Raises
    ------
    NotImplementedError
        From :meth:`figure` of a plain ``Report`` (only the harnesses' reports draw).
    ValueError
        From :meth:`save_plot`, for a file name that does not end in ``.png``, ``.svg``
        or ``.pdf``.

    See Also
    --------
    Column : one column of the text table.
    AccuracyReport, StepReport, BlowupReport, CostReport : the harnesses' reports.

    Examples
    --------
    >>> from difflab.compare import Column, Report
    >>> report = Report("Squares", records=[{"x": 1, "y": 1.0}, {"x": 2, "y": 4.0}],
    ...                 columns=[Column("x", "x"), Column("y", "x squared", "m^2")],
    ...                 notes=["measured by hand"])
    >>> print(report)
    Squares
    x  x squared [m^2]
    -  ---------------
    1              1.0
    2              4.0
    measured by hand
    >>> print(report.to_csv())
    x,y
    1,1.0
    2,4.0
    <BLANKLINE>
    >>> Report("NaN is not JSON", records=[{"y": float("nan")}]).to_records()
    [{'y': None}]
    """

    title: str
    records: list[dict[str, Any]] = field(default_factory=list)
    columns: list[Column] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    # ------------------------------------------------------------- as data

    def to_records(self) -> list[dict[str, Any]]:
        """The records as plain Python values (NaN becomes ``None``)."""
        return [_plain(r) for r in self.records]

    def keys(self) -> list[str]:
        """All record keys, in first-seen order."""
        seen: dict[str, None] = {}
        for record in self.records:
            seen.update(dict.fromkeys(record))
        return list(seen)

    def to_csv(self, path: str | Path | None = None) -> str:
        """The records as CSV (every key, full precision); also written to ``path`` if given."""
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=self.keys(), lineterminator="\n")
        writer.writeheader()
        for record in self.to_records():
            writer.writerow({k: "" if v is None else v for k, v in record.items()})
        text = buffer.getvalue()
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    def to_dict(self) -> dict[str, Any]:
        """Title, settings, notes and records in one JSON-ready dict."""
        return {
            "title": self.title,
            "meta": _plain(self.meta),
            "notes": list(self.notes),
            "records": self.to_records(),
        }

    def to_json(self, path: str | Path | None = None, indent: int = 2) -> str:
        """:meth:`to_dict` as JSON text; also written to ``path`` if given."""
        text = json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)
        if path is not None:
            Path(path).write_text(text + "\n", encoding="utf-8")
        return text

    # ------------------------------------------------------------- as text

    def to_text(self, records: Iterable[dict[str, Any]] | None = None) -> str:
        """An aligned text table with the title above and the notes below."""
        rows = list(self.records if records is None else records)
        headers = [c.header + (f" [{c.unit}]" if c.unit else "") for c in self.columns]
        cells = [[c.format(r.get(c.key)) for c in self.columns] for r in rows]
        widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(headers)]
        numeric = [
            all(_is_number(r.get(c.key)) for r in rows if not _missing(r.get(c.key)))
            for c in self.columns
        ]

        def line(values: Sequence[str]) -> str:
            parts = [
                v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)
            ]
            return "  ".join(parts).rstrip()

        out = [self.title, line(headers), "  ".join("-" * w for w in widths)]
        out += [line(row) for row in cells]
        out += self.notes
        return "\n".join(out)

    def __str__(self) -> str:
        return self.to_text()

    # ------------------------------------------------------------- as plot

    def figure(self) -> Any:
        """A matplotlib Figure of the records (each harness draws its own)."""
        raise NotImplementedError(f"{type(self).__name__} has no plot")

    def save_plot(self, path: str | Path, figure: Any = None) -> Path:
        """Draw and write the plot; the format follows the suffix (``.png``, ``.svg``, ``.pdf``).

        Returns
        -------
        Path
            The file written.
        """
        path = Path(path)
        suffix = path.suffix.lower().lstrip(".")
        if suffix not in {"png", "svg", "pdf"}:
            raise ValueError(f"plot file must end in .png, .svg or .pdf, got {path.name!r}")
        path.parent.mkdir(parents=True, exist_ok=True)
        fig = self.figure() if figure is None else figure
        fig.savefig(path, format=suffix, dpi=120)
        return path

    def save_plots(self, stem: str | Path, formats: Sequence[str] = ("png", "svg")) -> list[Path]:
        """Draw once and write the plot in each format: ``stem.png``, ``stem.svg``."""
        stem = Path(stem)
        fig = self.figure()
        return [self.save_plot(stem.with_name(f"{stem.name}.{fmt}"), fig) for fmt in formats]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) or hasattr(
        value, "dtype"
    )


def new_figure(ncols: int = 1, width: float = 6.4, height: float = 4.4) -> tuple[Any, Any]:
    """A bare Figure with ``ncols`` axes side by side (no pyplot, no display)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width * ncols, height), layout="constrained")
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, (axes[0] if ncols == 1 else list(axes))


#: One colour and marker per method, so every plot reads the same way.
STYLE: dict[str, dict[str, Any]] = {
    "f": {"color": "black", "marker": "o", "linestyle": "--"},
    "forward": {"color": "tab:blue", "marker": "s"},
    "reverse": {"color": "tab:orange", "marker": "^"},
    "symbolic": {"color": "tab:green", "marker": "D"},
    "numeric": {"color": "tab:red", "marker": "v"},
}


def style(method: str) -> dict[str, Any]:
    """Plot keywords for a method name (``"numeric (central)"`` uses numeric's)."""
    base = method.split()[0].split(":")[0]
    return dict(STYLE.get(base, {"marker": "o"}))
