r"""Cost: time, memory and function evaluations of a gradient or Jacobian as n grows.

For f: Rⁿ -> R the textbook costs of the gradient, in units of one
evaluation of f, are

==========  =====================================  ==========================
method      passes                                 cost / cost(f)
==========  =====================================  ==========================
forward     n directions (in chunks of c)          grows like n
reverse     one forward + one backward pass        a constant (about 2-5)
numeric     n + 1 (one-sided) or 2n (central)      grows like n
symbolic    compile once, then evaluate            compile grows with the
                                                   expression; evaluation
                                                   like the expression
==========  =====================================  ==========================

and for the Jacobian of f: Rⁿ -> Rᵐ forward needs n directions and reverse m
backward passes: forward wins on tall Jacobians (n < m), reverse on wide
ones (m < n), which is why training (m = 1 loss, n = millions of weights)
uses reverse mode.

:func:`cost` *measures* these (nothing here is assumed): for each method and
size it times the call through the common interface (best of several
repeats), counts evaluations of f and reverse mode's backward passes from the
call's ``Cost``, records peak memory
with :mod:`tracemalloc` (which sees NumPy's allocations) in a separate run,
and times f itself as the baseline.  A least-squares line through
log(time) against log(n) gives each method's growth exponent: time ∝ n^k.
"""

from __future__ import annotations

import functools
import math
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from difflab.compare import methods as M
from difflab.compare.problems import Problem, problem
from difflab.compare.report import (
    Column,
    Report,
    format_bytes,
    format_count,
    format_ratio,
    format_seconds,
    new_figure,
    style,
)

__all__ = ["CostReport", "cost", "fit_exponent"]

#: Forward mode's default chunk: directions pushed through f per pass.
DEFAULT_CHUNK = 64


def fit_exponent(sizes: Sequence[float], values: Sequence[float]) -> float:
    """k in value ∝ size^k, by least squares on log-log axes (NaN with fewer than 2 points).

    Sizes below 100 are left out when at least two larger ones remain: at tiny
    n every method costs its fixed Python overhead, which would flatten the fit.

    Parameters
    ----------
    sizes : sequence of float
        The sizes n.
    values : sequence of float
        What was measured at each size (seconds, bytes).

    Returns
    -------
    float
        The exponent k (NaN with fewer than two usable points).

    Examples
    --------
    >>> from difflab.compare import fit_exponent
    >>> round(fit_exponent([100, 1000, 10000], [1.0, 100.0, 10000.0]), 6)
    2.0
    """
    pairs = [(s, v) for s, v in zip(sizes, values)
             if v is not None and math.isfinite(v) and v > 0 and s > 0]
    large = [p for p in pairs if p[0] >= 100]
    if len({p[0] for p in large}) >= 2:
        pairs = large
    if len({p[0] for p in pairs}) < 2:
        return math.nan
    xs = np.log([p[0] for p in pairs])
    ys = np.log([p[1] for p in pairs])
    slope, _ = np.polyfit(xs, ys, 1)
    return float(slope)


def _best_time(call: Callable[[], Any], min_total: float,
               max_repeats: int) -> tuple[float, int]:
    """Fastest of repeated calls (at least one; more until ``min_total`` seconds are spent)."""
    best, spent, count = math.inf, 0.0, 0
    while count < max_repeats and (count == 0 or spent < min_total):
        start = time.perf_counter()
        call()
        elapsed = time.perf_counter() - start
        best, spent, count = min(best, elapsed), spent + elapsed, count + 1
    return best, count


def _peak_bytes(call: Callable[[], Any]) -> int:
    """Peak bytes allocated (Python and NumPy) during one call, measured by tracemalloc."""
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    before, _ = tracemalloc.get_traced_memory()
    try:
        call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return max(peak - before, 0)


class CostReport(Report):
    r"""Records of :func:`cost`; the plot shows time against size and time relative to f.

    A :class:`Report` with one record per method and size: ``method``, ``n``, ``m``
    (the output size of a Jacobian), ``seconds`` (the median of the repeats),
    ``first_seconds``, ``f_seconds`` (f alone), ``ratio`` (seconds / f_seconds),
    ``evaluations``, ``backward_passes``, ``peak_bytes``, the symbolic method's
    ``compile_seconds`` and ``eval_seconds``, ``tape_length``, ``forward_ops`` and
    ``repeats``.  ``meta`` holds the problem and the fitted growth ``exponents``
    (time :math:`\propto n^k`).  :func:`cost` makes it.

    Parameters
    ----------
    title : str
        One line saying what was measured.
    records : list of dict, optional
        The data, one dict per row (the keys are below).
    columns : list of Column, optional
        Which keys the text table shows, and how.
    notes : list of str, optional
        Lines printed under the table.
    meta : dict, optional
        Settings of the run, kept in JSON (the keys are below).

    See Also
    --------
    cost : the harness that returns it.
    fit_exponent : the least-squares fit of :math:`k`.

    Examples
    --------
    >>> from difflab.compare import CostReport, cost
    >>> report = cost("sum-sin", ns=(10, 100), methods=["forward", "reverse"],
    ...               memory=False, max_repeats=2, min_time=0.001)
    >>> isinstance(report, CostReport), report.meta["problem"]
    (True, 'sum-sin')

    Forward mode takes one pass per 64 input directions (``chunk_size``), reverse mode
    one backward pass whatever :math:`n`:

    >>> [(r["method"], r["n"], r["evaluations"]) for r in report.records]
    [('forward', 10, 1), ('forward', 100, 2), ('reverse', 10, 1), ('reverse', 100, 1)]
    >>> all(r["ratio"] > 1 for r in report.records)      # a gradient costs more than f
    True
    """

    def figure(self) -> Any:
        axis = self.meta.get("axis", "n")
        fig, (ax, ax_r, ax_m) = new_figure(ncols=3, width=5.2, height=4.6)
        exps = self.meta.get("exponents", {})

        def law(key: str) -> str:
            k = exps.get(key, math.nan)
            return f"{axis}^{k:.2f}" if math.isfinite(k) else "one size"

        f_rows: dict = {}
        for r in self.records:
            f_rows.setdefault(r[axis], r.get("f_seconds"))
        sizes = sorted(f_rows)
        ax.plot(sizes, [f_rows[s] for s in sizes], label=f"f itself ({law('f')})",
                **style("f"))
        for m in dict.fromkeys(r["method"] for r in self.records):
            rows = [r for r in self.records if r["method"] == m and r.get("seconds")]
            if rows:
                _plot_method(ax, ax_r, ax_m, m, rows, axis, law(m))
        what = "gradient" if self.meta.get("transform") == "grad" else "Jacobian"
        fixed = {"n": "m", "m": "n"}[axis]
        values = self.meta.get(f"{fixed}s") or []
        extra = f" ({fixed} = {values[0]})" if len(values) == 1 and self.meta.get("ms") else ""
        ax.set_title(f"Time of the {what} of {self.meta.get('problem', '')}{extra}")
        ax.set_ylabel("time (seconds)")
        ax_r.axhline(1.0, color="black", linestyle="--", linewidth=1, label="= f")
        ax_r.set_title(f"{what} time / time of f")
        ax_r.set_ylabel("ratio (dimensionless)")
        ax_m.set_title("Peak memory of one call")
        ax_m.set_ylabel("peak memory (bytes)")
        label = ("input size n (number of variables)" if axis == "n"
                 else "output size m (number of outputs)")
        for a in (ax, ax_r, ax_m):
            _log_axes(a, label)
        return fig


def _plot_method(ax: Any, ax_r: Any, ax_m: Any, m: str, rows: list, axis: str,
                 law: str) -> None:
    """One method's time, time / f and peak memory (and symbolic's compile time)."""
    xs = [r[axis] for r in rows]
    ax.plot(xs, [r["seconds"] for r in rows], label=f"{m} ({law})", **style(m))
    ax_r.plot(xs, [r["ratio"] for r in rows], label=m, **style(m))
    mem = [r for r in rows if r.get("peak_bytes")]
    if mem:
        ax_m.plot([r[axis] for r in mem], [r["peak_bytes"] for r in mem], label=m, **style(m))
    compile_rows = [r for r in rows if r.get("compile_seconds")]
    if m.startswith("symbolic") and compile_rows:
        ax.plot([r[axis] for r in compile_rows], [r["compile_seconds"] for r in compile_rows],
                label="symbolic: compile (once)", color="tab:green", linestyle=":",
                marker="D", markerfacecolor="none")


def _log_axes(a: Any, label: str) -> None:
    """Log-log axes with a grid and a legend (or a note that nothing was measured)."""
    a.set_xscale("log")
    a.set_yscale("log")
    a.set_xlabel(label)
    a.grid(True, which="major", alpha=0.3)
    if a.get_legend_handles_labels()[0]:
        a.legend(fontsize=7)
    else:
        a.text(0.5, 0.5, "not measured (--no-memory)", transform=a.transAxes,
               ha="center", va="center", color="gray")


def _columns(axis_keys: Sequence[str]) -> list[Column]:
    return [
        Column("method", "method"),
        *[Column(k, k) for k in axis_keys],
        Column("seconds", "time", "", format_seconds),
        Column("f_seconds", "time of f", "", format_seconds),
        Column("ratio", "/ f", "", format_ratio),
        Column("evaluations", "f evals", "", format_count),
        Column("backward_passes", "backward", "", format_count),
        Column("peak_bytes", "peak mem", "", format_bytes),
        Column("compile_seconds", "compile", "", format_seconds),
    ]


def cost(
    function: str | Problem = "sum-sin",
    ns: Sequence[int] = (10, 100, 1000, 10_000),
    methods: str | Sequence[str] | None = None,
    ms: Sequence[int] | None = None,
    *,
    chunk_size: int | None = DEFAULT_CHUNK,
    max_seconds: float = 20.0,
    min_time: float = 0.05,
    max_repeats: int = 20,
    memory: bool = True,
    arguments: str = "vector",
    progress: Callable[[int], None] | None = None,
) -> CostReport:
    """Measure the cost of the gradient (or Jacobian) of a built-in problem as it grows.

    Parameters
    ----------
    function : str or Problem
        ``"sum-sin"``, ``"logsumexp"`` (gradients of Rⁿ -> R) or
        ``"tanh-layer"`` (Jacobian of Rⁿ -> Rᵐ); see :mod:`difflab.compare.problems`.
    ns : list of int
        Input sizes n.
    methods : str or list of str, optional
        Default: all four.
    ms : list of int, optional
        Output sizes m, for a vector-valued problem (default ``[10]``).  With
        several m and one n the sweep, fit and plot run over m instead.
    chunk_size : int or None
        Forward mode's directions per pass (``None``: all n in one pass, which
        needs memory ∝ n²).
    max_seconds : float
        A method whose next size is predicted (from its growth so far) to take
        longer than this is skipped at that size and above (noted in the report).
    min_time, max_repeats : float, int
        Each timing is the best of repeated calls, repeated until ``min_time``
        seconds are spent or ``max_repeats`` calls are made.
    memory : bool
        Also measure peak memory (one extra call under tracemalloc; skipped for
        calls slower than ``max_seconds / 4``).
    arguments : {"vector", "scalars"}
        ``"vector"``: f(x) of one argument x in Rⁿ.  ``"scalars"``: the same f
        written as f(x_1, ..., x_n) of n scalar arguments, differentiated with
        respect to all of them (``argnums = (0, ..., n-1)``; each method's cost
        per argument, and Python's overhead per scalar operation, show).
    progress : callable, optional
        Called with 1 after each measurement (for a progress bar).

    Returns
    -------
    CostReport
        One record per method and size; ``meta["exponents"]`` maps each method
        (and ``"f"``) to its fitted growth exponent.

    Examples
    --------
    >>> from difflab.compare import cost
    >>> report = cost("sum-sin", ns=(10, 100), methods=["reverse"], memory=False,
    ...               max_repeats=2, min_time=0.001)
    >>> [(r["method"], r["n"], r["evaluations"], r["backward_passes"]) for r in report.records]
    [('reverse', 10, 1, 1), ('reverse', 100, 1, 1)]
    """
    prob = problem(function) if isinstance(function, str) else function
    if arguments not in ("vector", "scalars"):
        raise ValueError(f"arguments must be 'vector' or 'scalars', got {arguments!r}")
    names = M.parse_methods(methods)
    sweep = _Sweep.of(prob, ns, ms, arguments, chunk_size, max_seconds, min_time,
                      max_repeats, memory, progress)
    records: list[dict[str, Any]] = []
    notes: list[str] = []
    for method in names:
        records += sweep.method(method, notes)
    exponents = _exponents(names, records, sweep)
    return CostReport(
        title=f"Cost of the {sweep.what} of {prob.name}: {sweep.formula()}{sweep.fixed()}",
        records=records,
        columns=_columns(["n", "m"] if sweep.vector else ["n"]),
        notes=_exponent_notes(exponents, sweep.axis) + notes + _setting_notes(names, sweep),
        meta={"problem": prob.name, "formula": prob.formula, "arguments": arguments,
              "transform": sweep.transform,
              "axis": sweep.axis, "ns": sweep.ns, "ms": sweep.ms if sweep.vector else None,
              "exponents": exponents, "chunk_size": chunk_size,
              "max_seconds": max_seconds},
    )


@dataclass
class _Sweep:
    """What :func:`cost` measures: the problem, the sizes, how each call is timed."""

    prob: Problem
    arguments: str
    ns: list[int]
    ms: list[int]
    vector: bool  # f: Rⁿ -> Rᵐ (a Jacobian), not Rⁿ -> R (a gradient)
    axis: str  # the size that grows: "n", or "m" for several m and one n
    chunk_size: int | None
    max_seconds: float
    min_time: float
    max_repeats: int
    memory: bool
    progress: Callable[[int], None] | None
    f_seconds: dict[tuple[int, int], float] = field(default_factory=dict)

    @classmethod
    def of(cls, prob: Problem, ns: Sequence[int], ms: Sequence[int] | None, arguments: str,
           *settings: Any) -> _Sweep:
        """The sweep of ``cost``'s arguments, its sizes checked."""
        ns = sorted({int(n) for n in ns})
        if not ns or ns[0] < 1:
            raise ValueError(f"sizes n must be positive integers, got {ns}")
        vector = prob.outputs == "vector"
        ms = sorted({int(m) for m in (ms or [10])}) if vector else [1]
        if ms[0] < 1:
            raise ValueError(f"sizes m must be positive integers, got {ms}")
        axis = "m" if vector and len(ms) > 1 and len(ns) == 1 else "n"
        return cls(prob, arguments, ns, ms, vector, axis, *settings)

    @property
    def transform(self) -> str:
        return "jacobian" if self.vector else "grad"

    @property
    def what(self) -> str:
        return "Jacobian" if self.vector else "gradient"

    def grid(self) -> list[tuple[int, int]]:
        """Every (n, m) measured, in order of the growing size."""
        if self.axis == "n":
            return [(n, m) for m in self.ms for n in self.ns]
        return [(self.ns[0], m) for m in self.ms]

    def formula(self) -> str:
        return (f"f(x) = {self.prob.formula}" if self.arguments == "vector"
                else f"f(x_1, ..., x_n) = {self.prob.scalar_formula}")

    def fixed(self) -> str:
        """The size that stays fixed, for the title (", m = 10")."""
        if self.vector and self.axis == "n":
            return f", m = {self.ms[0]}"
        return f", n = {self.ns[0]}" if self.axis == "m" else ""

    def method(self, method: str, notes: list[str]) -> list[dict[str, Any]]:
        """One method's records over the grid; it stops at the first size predicted too slow."""
        records: list[dict[str, Any]] = []
        history: list[tuple[int, float]] = []
        for k, (n, m) in enumerate(self.grid()):
            size = n if self.axis == "n" else m
            if _predict(history, size) > self.max_seconds:
                notes.append(f"{method}: skipped {self.axis} >= {size} (predicted over "
                             f"{self.max_seconds:g} s from its growth so far)")
                self._tick(len(self.grid()) - k)
                break
            records.append(self.measure(method, n, m))
            history.append((size, records[-1]["first_seconds"]))
            self._tick(1)
        return records

    def measure(self, method: str, n: int, m: int) -> dict[str, Any]:
        """The record of one method at one size: time (best of repeats), counts, memory."""
        make = self.prob.make if self.arguments == "vector" else self.prob.make_scalars
        f, x0 = make(n, m)
        point = (x0,) if self.arguments == "vector" else tuple(float(v) for v in x0)
        argnums = 0 if self.arguments == "vector" else tuple(range(n))
        if (n, m) not in self.f_seconds:
            self.f_seconds[(n, m)], _ = _best_time(functools.partial(f, *point),
                                                   self.min_time, self.max_repeats)
        options = {"chunk_size": self.chunk_size} if method == "forward" else {}
        call = functools.partial(M.run, self.transform, M.differentiator(method, **options),
                                 f, *point, argnums=argnums)
        first, seconds, last, repeats = self._time(call)
        peak = None
        if self.memory and first["seconds"] < self.max_seconds / 4:
            peak = _peak_bytes(call)
        compiled = first.get("compile_seconds") is not None
        return {
            "method": method, "n": n, "m": m if self.vector else None,
            "seconds": seconds, "first_seconds": first["seconds"],
            "f_seconds": self.f_seconds[(n, m)], "ratio": seconds / self.f_seconds[(n, m)],
            "evaluations": first.get("evaluations"),
            "backward_passes": first.get("backward_passes"),
            "peak_bytes": peak, "compile_seconds": first.get("compile_seconds"),
            "eval_seconds": last.get("eval_seconds") if compiled else None,
            "tape_length": first.get("tape_length"),
            "forward_ops": first.get("forward_ops"),
            "repeats": repeats,
        }

    def _time(self, call: Callable[[], Any]) -> tuple[dict, float, dict, int]:
        """(first call's cost, best time, last call's cost, calls timed).

        Symbolic compiles in its first call, once; its later calls reuse the
        compiled derivative, so its time is theirs (compile time is reported
        apart).  The other methods count the first call too.
        """
        _, first = call()
        compiled = first.get("compile_seconds") is not None
        seconds = math.inf if compiled else first["seconds"]
        last, spent, repeats = first, 0.0 if compiled else first["seconds"], int(not compiled)
        while repeats < self.max_repeats and (spent < self.min_time or repeats < 3 * compiled):
            _, last = call()
            seconds, spent, repeats = (min(seconds, last["seconds"]),
                                       spent + last["seconds"], repeats + 1)
        return first, seconds, last, repeats

    def _tick(self, count: int) -> None:
        if self.progress is not None:
            for _ in range(count):
                self.progress(1)


def _exponents(names: Sequence[str], records: list[dict], sweep: _Sweep) -> dict[str, float]:
    """Growth exponents: f's, each method's time and each method's time / time of f."""
    f_by_size = {(n if sweep.axis == "n" else m): t for (n, m), t in sweep.f_seconds.items()}
    sizes = sorted(f_by_size)
    exponents = {"f": fit_exponent(sizes, [f_by_size[s] for s in sizes])}
    for method in names:
        rows = [r for r in records if r["method"] == method]
        xs = [r[sweep.axis] for r in rows]
        exponents[method] = fit_exponent(xs, [r["seconds"] for r in rows])
        exponents[f"{method}/f"] = fit_exponent(xs, [r["ratio"] for r in rows])
    return exponents


def _exponent_notes(exponents: dict[str, float], axis: str) -> list[str]:
    return [
        "growth exponent k (time ∝ " + axis + "^k, least squares on log-log, "
        + axis + " >= 100 when possible): "
        + ", ".join(f"{k} {v:.2f}" for k, v in exponents.items() if "/" not in k),
        "exponent of time / time of f: "
        + ", ".join(f"{k.split('/')[0]} {v:.2f}" for k, v in exponents.items() if "/" in k),
    ]


def _setting_notes(names: Sequence[str], sweep: _Sweep) -> list[str]:
    notes = []
    if "forward" in names:
        notes.append(f"forward mode pushes {sweep.chunk_size or 'all n'} directions per pass")
    if sweep.arguments == "scalars":
        notes.append("f takes n scalar arguments; each method differentiates with respect "
                     "to all of them (argnums = 0..n-1)")
    return notes


def _predict(history: Sequence[tuple[int, float]], size: int) -> float:
    """Time at ``size`` extrapolated from the last two measurements (power law)."""
    if not history:
        return 0.0
    if len(history) == 1:
        s0, t0 = history[0]
        return t0 * size / s0  # linear growth until a second size is measured
    (s0, t0), (s1, t1) = history[-2], history[-1]
    k = math.log(max(t1, 1e-9) / max(t0, 1e-9)) / math.log(s1 / s0) if s1 != s0 else 2.0
    return t1 * (size / s1) ** max(k, 1.5)  # at least n^1.5: small sizes hide growth
