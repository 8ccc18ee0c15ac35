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
    """Records of :func:`cost`; the plot shows time against size and time relative to f."""

    def figure(self) -> Any:
        axis = self.meta.get("axis", "n")
        fig, (ax, ax_r, ax_m) = new_figure(ncols=3, width=5.2, height=4.6)
        methods = list(dict.fromkeys(r["method"] for r in self.records))
        exps = self.meta.get("exponents", {})
        f_rows = {}
        for r in self.records:
            f_rows.setdefault(r[axis], r.get("f_seconds"))
        sizes = sorted(f_rows)
        def law(key: str) -> str:
            k = exps.get(key, math.nan)
            return f"{axis}^{k:.2f}" if math.isfinite(k) else "one size"

        ax.plot(sizes, [f_rows[s] for s in sizes], label=f"f itself ({law('f')})",
                **style("f"))
        for m in methods:
            rows = [r for r in self.records if r["method"] == m and r.get("seconds")]
            if not rows:
                continue
            xs = [r[axis] for r in rows]
            ax.plot(xs, [r["seconds"] for r in rows], label=f"{m} ({law(m)})", **style(m))
            ax_r.plot(xs, [r["ratio"] for r in rows], label=m, **style(m))
            mem = [r for r in rows if r.get("peak_bytes")]
            if mem:
                ax_m.plot([r[axis] for r in mem], [r["peak_bytes"] for r in mem], label=m,
                          **style(m))
            if m.startswith("symbolic"):
                compile_rows = [r for r in rows if r.get("compile_seconds")]
                if compile_rows:
                    ax.plot([r[axis] for r in compile_rows],
                            [r["compile_seconds"] for r in compile_rows],
                            label="symbolic: compile (once)", color="tab:green",
                            linestyle=":", marker="D", markerfacecolor="none")
        what = "gradient" if self.meta.get("transform") == "grad" else "Jacobian"
        name = self.meta.get("problem", "")
        fixed = {"n": "m", "m": "n"}[axis]
        values = self.meta.get(f"{fixed}s") or []
        extra = f" ({fixed} = {values[0]})" if len(values) == 1 and self.meta.get("ms") else ""
        ax.set_title(f"Time of the {what} of {name}{extra}")
        ax.set_ylabel("time (seconds)")
        ax_r.axhline(1.0, color="black", linestyle="--", linewidth=1, label="= f")
        ax_r.set_title(f"{what} time / time of f")
        ax_r.set_ylabel("ratio (dimensionless)")
        ax_m.set_title("Peak memory of one call")
        ax_m.set_ylabel("peak memory (bytes)")
        label = ("input size n (number of variables)" if axis == "n"
                 else "output size m (number of outputs)")
        for a in (ax, ax_r, ax_m):
            a.set_xscale("log")
            a.set_yscale("log")
            a.set_xlabel(label)
            a.grid(True, which="major", alpha=0.3)
            if a.get_legend_handles_labels()[0]:
                a.legend(fontsize=7)
            else:
                a.text(0.5, 0.5, "not measured (--no-memory)", transform=a.transAxes,
                       ha="center", va="center", color="gray")
        return fig


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
    """
    prob = problem(function) if isinstance(function, str) else function
    if arguments not in ("vector", "scalars"):
        raise ValueError(f"arguments must be 'vector' or 'scalars', got {arguments!r}")
    make = prob.make if arguments == "vector" else prob.make_scalars
    names = M.parse_methods(methods)
    ns = sorted({int(n) for n in ns})
    if not ns or ns[0] < 1:
        raise ValueError(f"sizes n must be positive integers, got {ns}")
    vector = prob.outputs == "vector"
    ms = sorted({int(m) for m in (ms or [10])}) if vector else [1]
    if ms[0] < 1:
        raise ValueError(f"sizes m must be positive integers, got {ms}")
    axis = "m" if vector and len(ms) > 1 and len(ns) == 1 else "n"
    transform = "jacobian" if vector else "grad"
    grid = [(n, m) for m in ms for n in ns] if axis == "n" else [(ns[0], m) for m in ms]

    f_seconds: dict[tuple[int, int], float] = {}
    records: list[dict[str, Any]] = []
    notes: list[str] = []
    for method in names:
        options = {"chunk_size": chunk_size} if method == "forward" else {}
        history: list[tuple[int, float]] = []
        skipped = False
        for n, m in grid:
            size = n if axis == "n" else m
            if skipped or _predict(history, size) > max_seconds:
                if not skipped:
                    notes.append(f"{method}: skipped {axis} >= {size} (predicted over "
                                 f"{max_seconds:g} s from its growth so far)")
                skipped = True
                if progress is not None:
                    progress(1)
                continue
            f, x0 = make(n, m)
            point = (x0,) if arguments == "vector" else tuple(float(v) for v in x0)
            argnums = 0 if arguments == "vector" else tuple(range(n))
            if (n, m) not in f_seconds:
                f_seconds[(n, m)], _ = _best_time(functools.partial(f, *point), min_time,
                                                  max_repeats)
            diff = M.differentiator(method, **options)
            call = functools.partial(M.run, transform, diff, f, *point, argnums=argnums)
            _, first = call()  # symbolic compiles here, once
            # Symbolic's later calls reuse the compiled derivative: its time is theirs
            # (compile time is reported apart); other methods count the first call too.
            compiled = first.get("compile_seconds") is not None
            seconds = math.inf if compiled else first["seconds"]
            last, spent, repeats = first, 0.0 if compiled else first["seconds"], int(not compiled)
            while repeats < max_repeats and (spent < min_time or repeats < 3 * compiled):
                _, last = call()
                seconds, spent, repeats = min(seconds, last["seconds"]), \
                    spent + last["seconds"], repeats + 1
            peak = None
            if memory and first["seconds"] < max_seconds / 4:
                peak = _peak_bytes(call)
            record = {
                "method": method, "n": n, "m": m if vector else None,
                "seconds": seconds, "first_seconds": first["seconds"],
                "f_seconds": f_seconds[(n, m)], "ratio": seconds / f_seconds[(n, m)],
                "evaluations": first.get("evaluations"),
                "backward_passes": first.get("backward_passes"),
                "peak_bytes": peak, "compile_seconds": first.get("compile_seconds"),
                "eval_seconds": last.get("eval_seconds") if compiled else None,
                "tape_length": first.get("tape_length"),
                "forward_ops": first.get("forward_ops"),
                "repeats": repeats,
            }
            records.append(record)
            history.append((size, first["seconds"]))
            if progress is not None:
                progress(1)
    f_by_size = {(n if axis == "n" else m): t for (n, m), t in f_seconds.items()}
    sizes = sorted(f_by_size)
    exponents = {"f": fit_exponent(sizes, [f_by_size[s] for s in sizes])}
    for method in names:
        rows = [r for r in records if r["method"] == method]
        exponents[method] = fit_exponent([r[axis] for r in rows], [r["seconds"] for r in rows])
        exponents[f"{method}/f"] = fit_exponent([r[axis] for r in rows],
                                                [r["ratio"] for r in rows])
    what = "gradient" if transform == "grad" else "Jacobian"
    fixed = f", m = {ms[0]}" if vector and axis == "n" else (
        f", n = {ns[0]}" if axis == "m" else "")
    notes.insert(0, "growth exponent k (time ∝ " + axis + "^k, least squares on log-log, "
                 + axis + " >= 100 when possible): "
                 + ", ".join(f"{k} {v:.2f}" for k, v in exponents.items() if "/" not in k))
    notes.insert(1, "exponent of time / time of f: "
                 + ", ".join(f"{k.split('/')[0]} {v:.2f}" for k, v in exponents.items()
                             if "/" in k))
    if "forward" in names:
        notes.append(f"forward mode pushes {chunk_size or 'all n'} directions per pass")
    axis_keys = ["n", "m"] if vector else ["n"]
    formula = (f"f(x) = {prob.formula}" if arguments == "vector"
               else f"f(x_1, ..., x_n) = {prob.scalar_formula}")
    if arguments == "scalars":
        notes.append("f takes n scalar arguments; each method differentiates with respect "
                     "to all of them (argnums = 0..n-1)")
    return CostReport(
        title=f"Cost of the {what} of {prob.name}: {formula}{fixed}",
        records=records,
        columns=_columns(axis_keys),
        notes=notes,
        meta={"problem": prob.name, "formula": prob.formula, "arguments": arguments,
              "transform": transform,
              "axis": axis, "ns": ns, "ms": ms if vector else None,
              "exponents": exponents, "chunk_size": chunk_size,
              "max_seconds": max_seconds},
    )


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
