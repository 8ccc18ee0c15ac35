r"""Expression swell: how big the symbolic derivative gets, beside the tape.

Symbolic differentiation returns an *expression*; applying the product and
chain rules to an expression that repeats a subexpression copies it, so the
derivative's expression tree can grow exponentially with the depth of f.
Baydin et al. (2018, "Automatic differentiation in machine learning: a
survey", Table 1) show this for the logistic map

.. math:: l_1 = x, \qquad l_{n+1} = 4 l_n (1 - l_n).

Common-subexpression elimination (CSE) shares the repeats and turns the tree
back into a graph, which is what the reverse-mode tape was all along: its
length grows *linearly* with n.

:func:`blowup` measures, for a family of functions f_n by depth n:

* ``count_ops`` and tree size of f_n and of f_n', with and without CSE;
* the reverse-mode tape length and the forward-mode operation count of f_n;
* the time to differentiate and to evaluate, per method.

:func:`logistic_table` reproduces Table 1 of the paper (the expressions
themselves, for small n).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from difflab.compare import methods as M
from difflab.compare.problems import FAMILIES, Family, family
from difflab.compare.report import (
    Column,
    Report,
    format_count,
    format_seconds,
    new_figure,
    style,
)

__all__ = [
    "BlowupReport",
    "Estimate",
    "Table1Report",
    "TooExpensiveError",
    "blowup",
    "estimate",
    "logistic_table",
    "measure_depth",
]

#: Depths measured to extrapolate the cost of deeper ones (cheap for every family).
PROBE_DEPTHS: tuple[int, ...] = (3, 4, 5, 6, 7)


class TooExpensiveError(RuntimeError):
    """A blowup run would take longer than allowed; the message gives the estimate.

    :func:`blowup` raises it *before* starting, when :func:`estimate` (a fit over the
    probe depths 3 to 7) says that the depths asked for would take more than
    ``max_seconds``; ``force=True`` runs them anyway.  ``difflab blowup`` prints it
    and exits with status 2, suggesting ``--force`` or smaller depths.

    Parameters
    ----------
    message : str
        What would take how long, and the limit.
    estimate : Estimate
        The extrapolated cost.

    Attributes
    ----------
    estimate : Estimate
        The extrapolated cost.

    See Also
    --------
    blowup : raises it.
    estimate : the extrapolation.

    Examples
    --------
    >>> from difflab.compare import TooExpensiveError, blowup
    >>> try:
    ...     blowup("logistic", range(1, 30), evaluate=False, max_seconds=1.0)
    ... except TooExpensiveError as error:
    ...     print(error.estimate.model, error.estimate.depths[-1])
    ...     print(str(error).split(" would take ")[0])
    geometric 29
    logistic at depths 1..29
    """

    def __init__(self, message: str, estimate: Estimate) -> None:
        super().__init__(message)
        self.estimate = estimate


# ------------------------------------------------------------------ one depth


def _time_call(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def measure_depth(fam: Family | str, n: int, evaluate: bool = True) -> dict[str, Any]:
    """Every blowup measurement of one family member f_n.

    Parameters
    ----------
    fam : Family or str
        The family (see :data:`difflab.compare.problems.FAMILIES`).
    n : int
        The depth.
    evaluate : bool
        Also run the differentiators at the family's point through the common
        interface (their times, the forward-mode operation count, the symbolic
        compile and evaluation times).  The sizes alone need only the trace.

    Returns
    -------
    dict
        One record; sizes in operations (``count_ops``) and tree nodes, times in
        seconds.
    """
    fam = family(fam) if isinstance(fam, str) else fam
    if fam.kind == "derivative":
        return _measure_order(fam, n)
    f, x = fam.build(n), fam.point
    # f_n traced, and d f_n/dx by sympy.diff; small ones timed best of 3 (less noise)
    found, symbolic_diff_seconds = _time_call(lambda: M.expressions(f, x))
    if symbolic_diff_seconds < 0.05:
        for _ in range(2):
            symbolic_diff_seconds = min(symbolic_diff_seconds,
                                        _time_call(lambda: M.expressions(f, x))[1])
    expr, d_expr = found.function[0], found.derivative[0]
    record = _sizes(fam, n, expr, d_expr)
    record["tape_length"] = M.tape_length(f, x)
    record["symbolic_diff_seconds"] = symbolic_diff_seconds
    if evaluate:
        _, fwd = M.run("derivative", "forward", f, x)
        _, rev = M.run("derivative", "reverse", f, x)
        _, sym = M.run("derivative", "symbolic", f, x)
        record.update(
            forward_ops=fwd.get("forward_ops"),
            forward_seconds=fwd.get("seconds"),
            reverse_seconds=rev.get("seconds"),
            symbolic_compile_seconds=sym.get("compile_seconds"),
            symbolic_eval_seconds=sym.get("eval_seconds"),
        )
    return record


def _sizes(fam: Family, n: int, expr: Any, d_expr: Any) -> dict[str, Any]:
    f_size = M.expression_size(expr, cse=False)
    d_size = M.expression_size(d_expr, cse=False)
    d_size_cse = M.expression_size(d_expr, cse=True)
    return {
        "family": fam.name,
        "depth": n,
        "f_ops": f_size["ops"],
        "f_tree": f_size["tree"],
        "df_ops": d_size["ops"],
        "df_tree": d_size["tree"],
        "df_ops_cse": d_size_cse["ops"],
        "df_tree_cse": d_size_cse["tree"],
    }


def _measure_order(fam: Family, n: int) -> dict[str, Any]:
    """Row n of a ``derivative`` family: f = g^(n-1) and its derivative g^(n).

    The symbolic side differentiates the traced expression n times; the tape
    side is reverse over reverse: ``autograd.grad(..., create_graph=True)``
    n times, every backward pass recorded on the tape so the next one can
    differentiate it.  The tape column counts every record made.
    """
    import difflab
    from difflab.autograd import grad, tape

    g = fam.build(n)
    start = time.perf_counter()
    base = M.trace(g)
    expr = M.symbolic_derivative(base, n - 1) if n > 1 else base
    d_expr = M.symbolic_derivative(expr, 1)
    symbolic_diff_seconds = time.perf_counter() - start
    record = _sizes(fam, n, expr, d_expr)
    x = difflab.tensor(fam.point, dtype=difflab.float64, requires_grad=True)
    start = time.perf_counter()
    with tape() as t:
        value = g(x)
        for _ in range(n):
            (value,) = grad(value, x, create_graph=True)
    record["reverse_seconds"] = time.perf_counter() - start
    record["tape_length"] = len(t)
    record["symbolic_diff_seconds"] = symbolic_diff_seconds
    return record


# ------------------------------------------------------------------ estimate


@dataclass(frozen=True)
class Estimate:
    r"""Extrapolated size and time of deeper family members.

    What :func:`estimate` returns (a dataclass): a least-squares fit of the derivative's
    size over the probe depths 3 to 7, :math:`\text{ops}(n) \approx c\, q^n n^p`, and of
    the time likewise, carried to the depths asked for.  ``total_seconds`` is the whole
    run; ``describe()`` says it in one sentence.

    Parameters
    ----------
    depths : tuple of int
        The depths asked for.
    seconds : tuple of float
        Estimated time of each.
    ops : tuple of float
        Estimated ``count_ops`` of each derivative.
    model : str
        ``"geometric"`` (q > 1.05: exponential growth) or ``"power"``.
    growth : float
        q: the size grows like qⁿ · nᵖ.
    power : float, default 0.0
        p.

    See Also
    --------
    estimate : makes it.
    TooExpensiveError : carries it when a run is too long.

    Examples
    --------
    >>> from difflab.compare import Estimate, estimate
    >>> guess = estimate("logistic", range(1, 4), evaluate=False)
    >>> guess.model, guess.depths, [round(ops) for ops in guess.ops]
    ('geometric', (1, 2, 3), [0, 4, 21])
    >>> by_hand = Estimate(depths=(10, 20), seconds=(0.5, 90.0), ops=(1e4, 1e7),
    ...                    model="geometric", growth=2.0, power=1.0)
    >>> by_hand.total_seconds
    90.5
    >>> by_hand.describe()                                 # doctest: +ELLIPSIS
    'about 1.51 minutes in all, and a derivative of ~10,000,000 operations at depth 20 ...'
    """

    depths: tuple[int, ...]
    seconds: tuple[float, ...]
    ops: tuple[float, ...]
    model: str
    growth: float
    power: float = 0.0

    @property
    def total_seconds(self) -> float:
        """Estimated time of the whole run."""
        return float(sum(self.seconds))

    def describe(self) -> str:
        """One sentence: the estimate and how it was made."""
        law = (f"growing like {self.growth:.2g}^n · n^{self.power:.2g}"
               if self.model == "geometric" else f"growing like n^{self.power:.2g}")
        return (f"about {_human_seconds(self.total_seconds)} in all, and a derivative of "
                f"~{_human_count(max(self.ops))} operations at depth {max(self.depths)} "
                f"(extrapolated from depths {PROBE_DEPTHS[0]}-{PROBE_DEPTHS[-1]}, {law})")


def _human_seconds(s: float) -> str:
    if not math.isfinite(s):
        return "forever"
    for unit, size in (("years", 3.15e7), ("days", 86400), ("hours", 3600), ("minutes", 60)):
        if s >= size:
            return f"{s / size:.3g} {unit}"
    return f"{s:.2g} seconds"


def _human_count(x: float) -> str:
    if not math.isfinite(x):
        return "inf"
    return f"{x:,.0f}" if x < 1e9 else f"{x:.2g}"


def estimate(fam: Family | str, depths: Iterable[int], evaluate: bool = True) -> Estimate:
    """Extrapolate the time of :func:`blowup` at ``depths`` from cheap probes.

    The derivative's size is measured at the probe depths (3-7) and fitted
    by size ∝ qⁿ · nᵖ: the growth from one depth to the next,
    r_n = log(ops_(n+1) / ops_n), is then log q + p log((n+1)/n), a straight
    line fitted by least squares (q, p >= 1, 0).  A geometric family (the
    logistic map) has q > 1; a polynomial one (the product) has q = 1.  Time
    is taken proportional to size (sympy's work is about linear in it):
    ``seconds(n) = seconds(7) · ops(n) / ops(7)``.

    Parameters
    ----------
    fam : Family or str
        The family (``"logistic"``, ``"nested-sin"``, ``"product"``, ``"derivative"``).
    depths : iterable of int
        The depths whose cost is wanted.
    evaluate : bool, default True
        Whether :func:`blowup` would also time the differentiators.

    Returns
    -------
    Estimate
        ``depths``, ``seconds`` and ``ops`` per depth, the ``model`` (``"geometric"`` or
        ``"polynomial"``) and its ``growth`` q and ``power`` p.

    Examples
    --------
    >>> from difflab.compare import estimate
    >>> guess = estimate("logistic", range(1, 4), evaluate=False)
    >>> guess.model, guess.depths, [round(ops) for ops in guess.ops]
    ('geometric', (1, 2, 3), [0, 4, 21])
    """
    fam = family(fam) if isinstance(fam, str) else fam
    depths = tuple(depths)
    ops, times = [], []
    for n in PROBE_DEPTHS:
        record, seconds = _time_call(lambda n=n: measure_depth(fam, n, evaluate))
        ops.append(max(record["df_ops"], 1))
        times.append(seconds)
    ns = np.array(PROBE_DEPTHS[:-1], dtype=float)
    r = np.diff(np.log(np.array(ops, dtype=float)))
    u = np.log((ns + 1) / ns)
    p, log_q = np.polyfit(u, r, 1)
    if log_q < 0:  # no geometric part: a pure power law through the origin
        log_q, p = 0.0, float(r @ u / (u @ u))
    p = max(float(p), 0.0)
    last_n, last_ops, last_seconds = PROBE_DEPTHS[-1], float(ops[-1]), times[-1]

    def predicted_ops(n: int) -> float:
        if n in PROBE_DEPTHS:
            return float(ops[PROBE_DEPTHS.index(n)])
        exponent = (n - last_n) * log_q + p * math.log(n / last_n)
        return last_ops * math.exp(min(exponent, 700.0))

    est_ops = tuple(predicted_ops(n) for n in depths)
    est_seconds = tuple(last_seconds * o / last_ops for o in est_ops)
    model = "geometric" if log_q > 0.05 else "power"
    return Estimate(depths, est_seconds, est_ops, model, float(math.exp(log_q)), p)


# ------------------------------------------------------------------ harness


class BlowupReport(Report):
    """Records of :func:`blowup`; the plot shows sizes by depth on a log axis.

    A :class:`Report` with one record per depth :math:`n` (the keys of
    :func:`measure_depth`): the sizes of :math:`f_n` and of its symbolic derivative
    (``f_ops``, ``df_ops``, ``df_tree``, with and without common-subexpression
    elimination), the reverse-mode tape's length, and with ``evaluate`` the
    differentiators' times.  :func:`blowup` makes it.

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
    blowup : the harness that returns it.
    logistic_table : the same sizes as the paper's Table 1.

    Examples
    --------
    >>> from difflab.compare import blowup
    >>> report = blowup("logistic", range(1, 5), evaluate=False)
    >>> [(r["depth"], r["df_ops"], r["tape_length"]) for r in report.records]
    [(1, 0, 0), (2, 2, 3), (3, 21, 6), (4, 82, 9)]
    >>> print(report.title)     # the symbolic derivative swells; the tape grows by 3
    Expression swell: logistic, f_n = l_1 = x, l_(n+1) = 4 l_n (1 - l_n)
    """

    def figure(self) -> Any:
        fam = self.meta.get("family", "")
        fig, (ax, ax_t) = new_figure(ncols=2)
        depth = [r["depth"] for r in self.records]

        def series(key: str) -> list[float]:
            return [_positive(r.get(key)) for r in self.records]

        ax.plot(depth, series("df_ops"), label="symbolic f' (no CSE)", **style("symbolic"))
        ax.plot(depth, series("df_ops_cse"), label="symbolic f' (with CSE)",
                color="tab:green", marker="D", linestyle=":", markerfacecolor="none")
        ax.plot(depth, series("f_ops"), label="symbolic f", color="gray", marker=".",
                linestyle="--")
        ax.plot(depth, series("tape_length"), label="reverse-mode tape of f (records)",
                **style("reverse"))
        if any(r.get("forward_ops") for r in self.records):
            ax.plot(depth, series("forward_ops"), label="forward mode (dual-number ops)",
                    **style("forward"))
        ax.set_yscale("log")
        ax.set_xlabel("depth n")
        ax.set_ylabel("size (operations)")
        ax.set_title(f"{fam}: expression swell vs. the tape")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8)

        ax_t.plot(depth, series("symbolic_diff_seconds"), label="symbolic: differentiate",
                  **style("symbolic"))
        if any(r.get("symbolic_eval_seconds") for r in self.records):
            ax_t.plot(depth, series("symbolic_eval_seconds"),
                      label="symbolic: evaluate compiled f'", color="tab:green", marker="D",
                      linestyle=":", markerfacecolor="none")
            ax_t.plot(depth, series("reverse_seconds"), label="reverse: f' at a point",
                      **style("reverse"))
            ax_t.plot(depth, series("forward_seconds"), label="forward: f' at a point",
                      **style("forward"))
        ax_t.set_yscale("log")
        ax_t.set_xlabel("depth n")
        ax_t.set_ylabel("time (seconds)")
        ax_t.set_title(f"{fam}: time to differentiate and evaluate")
        ax_t.grid(True, which="major", alpha=0.3)
        ax_t.legend(fontsize=8)
        for a in (ax, ax_t):
            a.xaxis.get_major_locator().set_params(integer=True)
        return fig


def _positive(value: Any) -> float:
    """Values for a log axis: missing or zero become NaN (a gap, not a crash)."""
    if value is None:
        return float("nan")
    value = float(value)
    return value if value > 0 else float("nan")


_COLUMNS = [
    Column("depth", "n"),
    Column("f_ops", "f ops", "ops", format_count),
    Column("df_ops", "f' ops", "ops", format_count),
    Column("df_tree", "f' tree", "nodes", format_count),
    Column("df_ops_cse", "f' ops CSE", "ops", format_count),
    Column("df_tree_cse", "f' tree CSE", "nodes", format_count),
    Column("tape_length", "tape", "records", format_count),
    Column("forward_ops", "fwd ops", "ops", format_count),
    Column("symbolic_diff_seconds", "sym diff", "", format_seconds),
    Column("symbolic_eval_seconds", "sym eval", "", format_seconds),
    Column("reverse_seconds", "reverse", "", format_seconds),
    Column("forward_seconds", "forward", "", format_seconds),
]


def blowup(
    fam: Family | str = "logistic",
    depths: Iterable[int] = range(1, 11),
    *,
    evaluate: bool = True,
    max_seconds: float | None = 10.0,
    force: bool = False,
    progress: Callable[[int], None] | None = None,
) -> BlowupReport:
    """Measure expression swell against the tape for a family of functions, by depth.

    Parameters
    ----------
    fam : Family or str
        ``"logistic"``, ``"nested-sin"``, ``"product"`` or ``"derivative"``
        (see :mod:`difflab.compare.problems`).
    depths : iterable of int
        The depths n (each >= 1).
    evaluate : bool
        Also time the differentiators at the family's point (see
        :func:`measure_depth`).
    max_seconds : float or None
        If the run is estimated (:func:`estimate`) to take longer than this,
        raise :class:`TooExpensiveError` before starting, unless ``force``.
        ``None`` skips the estimate.
    force : bool
        Run however long it takes.
    progress : callable, optional
        Called with 1 after each depth (for a progress bar).

    Returns
    -------
    BlowupReport
        One record per depth (see :func:`measure_depth` for the keys).

    Examples
    --------
    >>> from difflab.compare import blowup
    >>> report = blowup("logistic", range(1, 5), evaluate=False)
    >>> [(r["depth"], r["df_ops"], r["tape_length"]) for r in report.records]
    [(1, 0, 0), (2, 2, 3), (3, 21, 6), (4, 82, 9)]
    """
    fam = family(fam) if isinstance(fam, str) else fam
    depths = sorted(set(int(n) for n in depths))
    if not depths or depths[0] < 1:
        raise ValueError(f"depths must be integers >= 1, got {depths}")
    est = None
    if max_seconds is not None and not force and depths[-1] > PROBE_DEPTHS[-1]:
        est = estimate(fam, depths, evaluate)
        if est.total_seconds > max_seconds:
            raise TooExpensiveError(
                f"{fam.name} at depths {depths[0]}..{depths[-1]} would take "
                f"{est.describe()}; the limit is {max_seconds:g} s", est)
    records = []
    for n in depths:
        records.append(measure_depth(fam, n, evaluate))
        if progress is not None:
            progress(1)
    report = BlowupReport(
        title=f"Expression swell: {fam.name}, f_n = {fam.formula}",
        records=records,
        columns=[c for c in _COLUMNS if evaluate or c.key in records[0]],
        notes=[
            "ops: sympy count_ops; tree: nodes of the expression tree; CSE: after common-"
            "subexpression elimination",
            "tape: records on the reverse-mode tape for f; fwd ops: dual-number operations",
        ],
        meta={"family": fam.name, "formula": fam.formula, "point": fam.point,
              "depths": depths},
    )
    if est is not None:
        report.meta["estimate_seconds"] = est.total_seconds
    return report


# ------------------------------------------------------------------ Table 1


class Table1Report(Report):
    """Table 1 of Baydin et al.: printed one block per n (the expressions are long)."""

    def to_text(self, records: Iterable[dict[str, Any]] | None = None) -> str:
        rows = list(self.records if records is None else records)
        out = [self.title]
        for r in rows:
            out.append(f"n = {r['n']}   (tape: {r['tape']} records; dl_n/dx: "
                       f"{r['dl_n/dx ops']:,} ops, {r['dl_n/dx ops CSE']:,} after CSE)")
            out.append(f"    l_n        = {r['l_n']}")
            out.append(f"    dl_n/dx    = {r['dl_n/dx']}")
            out.append(f"    simplified = {r['dl_n/dx simplified']}")
        out += self.notes
        return "\n".join(out)


def logistic_table(n_max: int = 4) -> Report:
    """Baydin et al. (2018), Table 1: l_n, dl_n/dx and its simplified form, with sizes.

    The expressions are the ones the symbolic differentiator builds from the
    plain Python loop ``l = 4*l*(1 - l)`` (sympy keeps products unexpanded, as
    in the paper); "simplified" is the derivative expanded and factored.

    Parameters
    ----------
    n_max : int, default 4
        The deepest iterate shown.

    Returns
    -------
    Report
        Printable (``to_text()``); one record per n with the expressions and their sizes.

    Examples
    --------
    >>> from difflab.compare import logistic_table
    >>> print(logistic_table(2).to_text())
    Baydin et al. (2018), Table 1: ...
    n = 2   (tape: 3 records; dl_n/dx: 2 ops, 2 after CSE)
        l_n        = -4*x*(x - 1)
        dl_n/dx    = 4 - 8*x
        simplified = -4*(2*x - 1)
    ...
    """
    import sympy

    fam = FAMILIES["logistic"]
    records = []
    for n in range(1, n_max + 1):
        found = M.expressions(fam.build(n), fam.point)
        expr, d_expr = found.function[0], found.derivative[0]
        simple = sympy.factor(sympy.expand(d_expr))
        records.append({
            "n": n,
            "l_n": str(sympy.factor(expr)),
            "dl_n/dx": str(d_expr),
            "dl_n/dx simplified": str(simple),
            "l_n ops": M.expression_size(expr, cse=False)["ops"],
            "dl_n/dx ops": M.expression_size(d_expr, cse=False)["ops"],
            "dl_n/dx ops CSE": M.expression_size(d_expr, cse=True)["ops"],
            "tape": M.tape_length(fam.build(n), fam.point),
        })
    columns = [
        Column("n", "n"),
        Column("l_n", "l_n"),
        Column("dl_n/dx", "dl_n/dx"),
        Column("dl_n/dx simplified", "simplified"),
        Column("dl_n/dx ops", "ops", "", format_count),
        Column("dl_n/dx ops CSE", "CSE", "", format_count),
        Column("tape", "tape", "", format_count),
    ]
    return Table1Report(
        title="Baydin et al. (2018), Table 1: the logistic map l_(n+1) = 4 l_n (1 - l_n), "
              "l_1 = x",
        records=records, columns=columns,
        notes=["l_n is shown factored; dl_n/dx is what symbolic differentiation returns"],
        meta={"family": "logistic", "n_max": n_max},
    )

