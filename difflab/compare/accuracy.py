r"""Accuracy: each method's derivative against a 50-digit reference.

For an expression f and a point, :func:`accuracy` asks every differentiator
for the derivative (the gradient, for several variables) and compares it
with mpmath's, computed at 50 significant digits on an mpmath version of the
*same* parsed expression:

.. math:: \text{abs error} = |d - d^*|, \qquad
          \text{rel error} = |d - d^*| / |d^*|.

Forward and reverse mode are exact up to rounding in the arithmetic they
replay; symbolic is exact up to rounding in evaluating its expression;
finite differences add a *truncation* error that depends on the step h.
:func:`step_sweep` shows that trade-off: the error of a finite difference
against h is a V on log-log axes,

.. math:: E(h) \approx \underbrace{C h^p}_{\text{truncation}} +
          \underbrace{\varepsilon |f| / h}_{\text{rounding}},

with p = 1 for the one-sided difference (C = |f''|/2) and p = 2 for the
central one (C = |f'''|/6).  The bottom of the V is at
h* = (ε|f| / (p C))^{1/(p+1)}: about √ε ≈ 1e-8 and ε^{1/3} ≈ 6e-6 in float64.

Every run is repeated in float32 (ε ≈ 1.2e-7) beside float64: the function
casts its input to float32, so the whole computation, not just its result,
runs in single precision.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from difflab.compare import methods as M
from difflab.compare.report import (
    Column,
    Report,
    format_count,
    format_sci,
    format_seconds,
    format_value,
    new_figure,
)
from difflab.diff import DomainWarning, NumericalWarning
from difflab.exprparse import Expression, parse, parse_assignments

__all__ = ["AccuracyReport", "StepReport", "accuracy", "kinks_at", "reference", "step_sweep"]

DTYPES: dict[str, Any] = {"float64": np.float64, "float32": np.float32}


def _expression(expr: str | Expression) -> Expression:
    return parse(expr) if isinstance(expr, str) else expr


def _point(expr: Expression, at: str | Mapping[str, float]) -> dict[str, float]:
    from difflab.exprparse import ExpressionError

    values = parse_assignments(at)
    missing = [v for v in expr.variables if v not in values]
    if missing:
        raise ExpressionError(
            f"variable {missing[0]!r} of {expr.text!r} has no value: add it to the point, "
            f"e.g. {', '.join(f'{v}=1.0' for v in expr.variables)}"
        )
    extra = [k for k in values if k not in expr.variables]
    if extra:
        raise ExpressionError(
            f"{extra[0]!r} is not a variable of {expr.text!r} (its variables: "
            f"{', '.join(expr.variables) or 'none'})"
        )
    return values


def _cast(x: Any, dtype: Any) -> Any:
    """x in ``dtype``, whatever it is: a float, an array, a Dual or a Tensor (sympy: as is)."""
    from difflab.tensor import Tensor

    if dtype is np.float64:
        return x
    if isinstance(x, Tensor):
        return x.to(dtype)
    if isinstance(x, (np.ndarray, np.generic, complex)) and np.iscomplexobj(x):
        dtype = np.complex64  # the complex step: keep the imaginary part
    if hasattr(x, "astype"):
        return x.astype(dtype)
    if isinstance(x, (int, float, complex)):
        return dtype(x)
    return x


def in_dtype(f: Callable[..., Any], dtype: Any) -> Callable[..., Any]:
    """f with every argument cast to ``dtype`` first, so f computes in that precision."""
    if dtype is np.float64:
        return f

    def f_in_dtype(*args: Any) -> Any:
        return f(*(_cast(a, dtype) for a in args))

    f_in_dtype.__name__ = getattr(f, "__name__", "f")
    return f_in_dtype


# ------------------------------------------------------------------ reference


def reference(expr: str | Expression, at: str | Mapping[str, float], order: int = 1,
              digits: int = 50) -> dict[str, Any]:
    """∂ᵏf/∂vᵏ for each variable v at the point, by mpmath at ``digits`` significant digits.

    Parameters
    ----------
    expr : str or Expression
        The function, e.g. ``"sin(x)*y"``.
    at : str or mapping
        The point, ``"x=1,y=2"`` or ``{"x": 1.0, "y": 2.0}``.
    order : int, default 1
        The order k of the derivative (0: the value).
    digits : int, default 50
        Significant digits mpmath works with.

    Returns
    -------
    dict
        ``{variable: mpmath.mpf}`` (order 0 gives f itself under the key ``"f"``).

    Examples
    --------
    >>> from difflab.compare import reference
    >>> reference("sin(x)", "x=0")
    {'x': mpf('1.0')}
    >>> reference("x**3", "x=2", order=2)
    {'x': mpf('12.0')}
    """
    import mpmath

    expr = _expression(expr)
    values = _point(expr, at)
    f_mp = expr.function("mpmath")
    with mpmath.workdps(digits):
        point = [mpmath.mpf(repr(values[v])) for v in expr.variables]
        try:
            value = +f_mp(*point)
            defined = mpmath.isfinite(value) and not isinstance(value, mpmath.mpc)
        except (ZeroDivisionError, ValueError, ArithmeticError):
            defined = False
        if not defined:  # outside f's domain: no derivative to compare with
            return {k: mpmath.mpf("nan") for k in (["f"] if order == 0 else expr.variables)}
        if order == 0:
            return {"f": value}
        out = {}
        for k, v in enumerate(expr.variables):
            orders = [0] * len(point)
            orders[k] = order
            try:
                d = +mpmath.diff(f_mp, point, tuple(orders)) if len(point) > 1 else \
                    +mpmath.diff(f_mp, point[0], order)
            except (ZeroDivisionError, ValueError, ArithmeticError):
                d = mpmath.mpf("nan")
            # At a domain edge (sqrt, acos at 1) the difference steps outside the domain
            # and comes back complex: there is no real derivative to compare with.
            out[v] = d if isinstance(d, mpmath.mpf) else mpmath.mpf("nan")
        return out


# ------------------------------------------------------------------ accuracy


class AccuracyReport(Report):
    """Records of :func:`accuracy`; the plot shows each method's error as bars (log scale).

    A :class:`Report` whose records have one row per method, dtype and variable, with
    the keys ``method``, ``dtype``, ``variable``, ``value`` (the derivative computed),
    ``reference`` (mpmath's, to 50 digits), ``abs_error``, ``rel_error``,
    ``evaluations`` (of f), ``backward_passes`` and ``seconds``.  ``meta`` holds the
    ``expression``, the ``point``, its ``values``, the ``reference`` and its ``digits``.
    :func:`accuracy` makes it.

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
    accuracy : the harness that returns it.
    Report : the methods (text, CSV, JSON, plots).

    Examples
    --------
    >>> from difflab.compare import AccuracyReport, accuracy
    >>> report = accuracy("sin(x)*exp(x)", "x=1", methods=["forward", "reverse"],
    ...                   dtypes=["float64"])
    >>> isinstance(report, AccuracyReport), report.meta["expression"]
    (True, 'sin(x)*exp(x)')
    >>> [(r["method"], r["evaluations"], r["backward_passes"]) for r in report.records]
    [('forward', 1, None), ('reverse', 1, 1)]
    >>> all(r["rel_error"] < 1e-15 for r in report.records)   # both exact to rounding
    True
    """

    def figure(self) -> Any:
        fig, ax = new_figure(width=7.0)
        methods = list(dict.fromkeys(r["method"] for r in self.records))
        dtypes = list(dict.fromkeys(r["dtype"] for r in self.records))
        floor = 1e-20
        width = 0.8 / max(len(dtypes), 1)
        for j, dtype in enumerate(dtypes):
            errors = []
            for m in methods:
                rows = [r for r in self.records if r["method"] == m and r["dtype"] == dtype]
                errs = [r["rel_error"] for r in rows if r["rel_error"] is not None]
                errors.append(max(errs) if errs else float("nan"))
            xs = np.arange(len(methods)) + (j - (len(dtypes) - 1) / 2) * width
            shown = [max(e, floor) if math.isfinite(e) else float("nan") for e in errors]
            bars = ax.bar(xs, shown, width=width * 0.95, label=dtype,
                          color="tab:blue" if dtype == "float64" else "tab:orange",
                          alpha=0.85)
            for bar, e in zip(bars, errors):
                text = "exact" if e == 0 else (f"{e:.0e}" if math.isfinite(e) else "n/a")
                ax.annotate(text, (bar.get_x() + bar.get_width() / 2,
                                   bar.get_height() if math.isfinite(bar.get_height())
                                   else floor),
                            ha="center", va="bottom", fontsize=7)
        for dtype, ls in (("float64", "--"), ("float32", ":")):
            if dtype in dtypes:
                ax.axhline(np.finfo(DTYPES[dtype]).eps, color="gray", linestyle=ls,
                           linewidth=1, label=f"machine epsilon ({dtype})")
        ax.set_xticks(np.arange(len(methods)), methods, rotation=15)
        ax.set_yscale("log")
        ax.set_ylim(floor / 2, 10)
        ax.set_ylabel("relative error |d - d*| / |d*| (dimensionless)")
        ax.set_xlabel("method")
        ax.set_title(f"Accuracy of f' for f = {self.meta.get('expression', '')} "
                     f"at {self.meta.get('point', '')}\n(reference: mpmath, 50 digits; "
                     f"worst over variables)")
        ax.grid(True, axis="y", which="major", alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
        return fig


_ACCURACY_COLUMNS = [
    Column("method", "method"),
    Column("dtype", "dtype"),
    Column("variable", "d/d"),
    Column("value", "derivative", "", format_value),
    Column("abs_error", "abs error", "", format_sci),
    Column("rel_error", "rel error", "", format_sci),
    Column("evaluations", "f evals", "", format_count),
    Column("backward_passes", "backward", "", format_count),
    Column("seconds", "time", "", format_seconds),
]


def kinks_at(expr: str | Expression, at: str | Mapping[str, float]) -> list[str]:
    """Where ``expr`` meets a kink of one of its primitives at this point: "no derivative here".

    ``expr`` is evaluated once on the tape, in float64; each recorded primitive whose rule
    declares its kinks (``not_differentiable`` in :mod:`difflab.ops.elementwise`:
    ``abs`` and ``relu`` at 0, ``maximum`` and ``minimum`` at ties) is asked whether its
    inputs sit on one.  There the derivative does not exist: each method reports a
    convention or a one-sided value, and an "error" against the reference measures
    nothing.

    Parameters
    ----------
    expr : str or Expression
        The function, e.g. ``"abs(x-1)*exp(x)"``.
    at : str or mapping
        The point, ``"x=1"`` or ``{"x": 1.0}``.

    Returns
    -------
    list of str
        One sentence per primitive at a kink (empty where f is differentiable).

    Examples
    --------
    >>> from difflab.compare.accuracy import kinks_at
    >>> for note in kinks_at("abs(x-1)*exp(x)", "x=1"):
    ...     print(note)
    no derivative here: abs is not differentiable at 0 (difflab takes derivative 0 at
    x = 0 (a subgradient; what PyTorch returns))
    >>> kinks_at("abs(x-1)*exp(x)", "x=2")
    []
    """
    from difflab import autograd, float64, tensor  # (the tensor layer: only when asked)

    expr = _expression(expr)
    values = _point(expr, at)
    args = [tensor(values[v], dtype=float64, requires_grad=True) for v in expr.variables]
    with warnings.catch_warnings(), autograd.tape() as tape:
        warnings.simplefilter("ignore")  # (a NaN or an overflow is reported elsewhere)
        expr.function("difflab")(*args)
    found = []
    for node, _, inputs in tape:
        rule = getattr(node.op, "rule", None)
        where = getattr(rule, "not_differentiable", None)
        arrays = [np.asarray(x.detach().numpy() if hasattr(x, "detach") else x, float)
                  for x in inputs]
        hit = where(np, *arrays) if where is not None else None
        if hit is not None and np.any(hit):
            shown = ", ".join(f"{float(a.reshape(-1)[0]):g}" for a in arrays)
            line = (f"no derivative here: {node.op.name} is not differentiable at {shown} "
                    f"(difflab takes {rule.kinks})")
            if line not in found:
                found.append(line)
    return found


def accuracy(
    expr: str | Expression,
    at: str | Mapping[str, float],
    methods: str | Sequence[str] | None = None,
    dtypes: Sequence[str] = ("float64", "float32"),
    digits: int = 50,
) -> AccuracyReport:
    """Each method's derivative of ``expr`` at a point, with its error against mpmath.

    Parameters
    ----------
    expr : str or Expression
        The function, e.g. ``"sin(x)*exp(-x**2)"`` (parsed safely, see
        :mod:`difflab.exprparse`).
    at : str or mapping
        The point, ``"x=1.3"`` or ``{"x": 1.3}``; every variable needs a value.
    methods : str or list of str, optional
        Names as in :func:`difflab.compare.methods.parse_methods`; default all four.
    dtypes : list of {"float64", "float32"}
        Precisions to run each method in.
    digits : int
        Significant digits of the mpmath reference.

    Returns
    -------
    AccuracyReport
        One record per method, dtype and variable: value, reference, abs and rel
        error, function evaluations, backward passes (reverse mode), seconds.  The
        partial derivatives of a function of several variables come from one call
        (``argnums`` = all), so its rows share that call's counts and time.

    Examples
    --------
    >>> from difflab.compare import accuracy
    >>> report = accuracy("sin(x)*exp(x)", "x=1", methods=["forward", "reverse", "numeric"],
    ...                   dtypes=["float64"])
    >>> [(r["method"], r["rel_error"] < 1e-8) for r in report.records]
    [('forward', True), ('reverse', True), ('numeric', True)]
    >>> print(report.notes[0])
    reference (mpmath, 50 digits): d/dx = 3.7560492270947275483
    """
    expr = _expression(expr)
    values = _point(expr, at)
    names = M.parse_methods(methods)
    for d in dtypes:
        if d not in DTYPES:
            raise ValueError(f"unknown dtype {d!r}; expected one of {', '.join(DTYPES)}")
    ref = reference(expr, values, 1, digits)
    overflows = _overflows(reference(expr, values, 0, digits)["f"], ref)
    f = expr.function("difflab")
    args = [values[v] for v in expr.variables]
    nvars = len(args)
    records = []
    notes = []
    notes = kinks_at(expr, values)
    if notes:
        notes.append("so the errors above compare conventions with mpmath's value, "
                     "not derivatives")
    for method in names:
        for dtype in dtypes:
            if method == "symbolic" and dtype != "float64":
                # sympy's expression is exact; its compiled form always runs in float64.
                notes.append(f"symbolic: no {dtype} row (the compiled expression always "
                             f"evaluates in float64)")
                continue
            g = in_dtype(f, DTYPES[dtype])
            largest = float(np.finfo(DTYPES[dtype]).max)
            overflow = overflows > largest
            if overflow and not any(n.startswith(f"overflow in {dtype}") for n in notes):
                notes.append(
                    f"overflow in {dtype}: f or its derivative reaches "
                    f"{mpmath_str(overflows, 3)}, beyond the largest {dtype} ({largest:.3g}); the "
                    f"NaN/inf there is an overflow, not a point outside f's domain")
            with warnings.catch_warnings():
                if overflow:  # the domain warning would blame the domain
                    warnings.simplefilter("ignore", DomainWarning)
                if nvars == 1:
                    result, cost = M.run("derivative", method, g, *args)
                elif nvars == 0:
                    results, cost = [], {}
                else:
                    result, cost = M.run_grad(method, g, args)
            if nvars == 1:
                results = [result]
            elif nvars > 0:
                results = list(result)
            for v, value in zip(expr.variables, results):
                exact = ref[v]
                value = float(value)
                if math.isfinite(value) and mpmath_isfinite(exact):
                    abs_error = float(abs(value - exact))
                    rel_error = abs_error / abs(float(exact)) if exact != 0 else abs_error
                else:
                    abs_error = rel_error = math.nan
                records.append({
                    "method": method, "dtype": dtype, "variable": v, "value": value,
                    "reference": float(exact), "abs_error": abs_error,
                    "rel_error": rel_error, "evaluations": cost.get("evaluations"),
                    "backward_passes": cost.get("backward_passes"),
                    "seconds": cost.get("seconds"),
                })
    point_text = ", ".join(f"{k}={v:g}" for k, v in values.items())
    return AccuracyReport(
        title=f"Derivative of f = {expr.text} at {point_text}",
        records=records,
        columns=_ACCURACY_COLUMNS,
        notes=[f"reference (mpmath, {digits} digits): "
               + ", ".join(f"d/d{v} = {mpmath_str(ref[v])}" for v in expr.variables)]
        + notes,
        meta={"expression": expr.text, "point": point_text, "values": values,
              "reference": {v: str(ref[v]) for v in expr.variables}, "digits": digits},
    )


def _overflows(value: Any, derivatives: Mapping[str, Any]) -> Any:
    """The largest magnitude among f and its derivatives (the finite ones, in mpmath)."""
    return max((abs(v) for v in [value, *derivatives.values()] if mpmath_isfinite(v)),
               default=0)


def mpmath_isfinite(x: Any) -> bool:
    """True for a finite mpmath (or Python) number."""
    import mpmath

    return bool(mpmath.isfinite(x))


def mpmath_str(x: Any, digits: int = 20) -> str:
    """An mpmath number with ``digits`` significant digits."""
    import mpmath

    return mpmath.nstr(x, digits)


# ------------------------------------------------------------------ step sweep


class StepReport(Report):
    r"""Records of :func:`step_sweep`; the plot is the V of error against step on log-log axes.

    The text table is pivoted (one row per step, one error column per scheme and
    dtype) so the V reads down the page; CSV and JSON keep one record per run, with
    the keys ``scheme``, ``dtype``, ``step``, ``value``, ``abs_error``, ``rel_error``
    and ``evaluations``.  ``meta`` holds the ``expression``, the ``point``, the
    ``exact`` derivative, per scheme and dtype the ``theory`` (order, truncation and
    rounding constants, the best step :math:`h^*` and its error) and the ``best``
    step measured.  :func:`step_sweep` makes it.

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
    step_sweep : the harness that returns it.
    Report : the methods (text, CSV, JSON, plots).

    Notes
    -----
    For a scheme of order :math:`p` in a dtype of unit roundoff :math:`u`, the error
    is about :math:`C h^p + u |f| / h`: truncation falls with :math:`h`, rounding grows
    as :math:`h` shrinks, and the bottom of the V is near
    :math:`h^* = (u |f| / (p C))^{1/(p+1)}`.

    Examples
    --------
    >>> from difflab.compare import step_sweep
    >>> report = step_sweep("exp(x)", "x=1", schemes=["central"], dtypes=["float64"],
    ...                     steps=[1e-2, 1e-5, 1e-8])
    >>> print(report)                                      # doctest: +ELLIPSIS
    Finite-difference error against step h: f = exp(x) at x=1  (absolute error |D_h f - f'|)
           h  central float64
    --------  ---------------
    1.00e-08         1.23e-08
    1.00e-05         6.30e-11
    1.00e-02         4.53e-05
    central/float64: best measured h = 1.0e-05 (error 6.3e-11); theory h* = 8.7e-06 ...
    >>> f'{report.meta["best"]["central/float64"]["step"]:.0e}'      # the bottom of the V
    '1e-05'
    """

    def to_text(self, records: Iterable[dict[str, Any]] | None = None) -> str:
        rows = list(self.records if records is None else records)
        keys = list(dict.fromkeys((r["scheme"], r["dtype"]) for r in rows))
        table: dict[float, dict[tuple[str, str], float]] = {}
        for r in rows:
            table.setdefault(float(f"{r['step']:.3g}"), {})[(r["scheme"], r["dtype"])] = \
                r["abs_error"]
        pivot = Report(
            title=self.title + "  (absolute error |D_h f - f'|)",
            records=[{"step": h, **{f"{s} {d}": errs.get((s, d)) for s, d in keys}}
                     for h, errs in sorted(table.items())],
            columns=[Column("step", "h", "", format_sci)]
            + [Column(f"{s} {d}", f"{s} {d}", "", format_sci) for s, d in keys],
            notes=self.notes,
        )
        return pivot.to_text()

    def figure(self) -> Any:
        fig, ax = new_figure(width=7.5, height=5.0)
        schemes = list(dict.fromkeys(r["scheme"] for r in self.records))
        dtypes = list(dict.fromkeys(r["dtype"] for r in self.records))
        colors = {"forward": "tab:red", "central": "tab:blue", "backward": "tab:purple",
                  "richardson": "tab:green", "complex": "tab:brown"}
        theory = self.meta.get("theory", {})
        for scheme in schemes:
            for dtype in dtypes:
                rows = [r for r in self.records
                        if r["scheme"] == scheme and r["dtype"] == dtype]
                hs = np.array([r["step"] for r in rows])
                errs = np.array([r["abs_error"] if r["abs_error"] else np.nan for r in rows],
                                dtype=float)
                errs = np.where(errs > 0, errs, np.nan)
                ls = "-" if dtype == "float64" else "--"
                color = colors.get(scheme, None)
                ax.plot(hs, errs, linestyle=ls, marker="o", markersize=3, color=color,
                        label=f"{scheme}, {dtype}: measured")
                t = theory.get(f"{scheme}/{dtype}")
                if t:
                    model = [t["truncation"] * h ** t["order"] + t["rounding"] / h for h in hs]
                    ax.plot(hs, model, linestyle=":", color=color, linewidth=1,
                            alpha=0.8, label=f"{scheme}, {dtype}: model")
                    ax.axvline(t["h_opt"], color=color, linestyle=ls, alpha=0.35, linewidth=1)
                    ax.annotate(f"h* = {t['h_opt']:.1e}", (t["h_opt"], t["error_opt"]),
                                textcoords="offset points", xytext=(4, -12), fontsize=7,
                                color=color)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("step h (same units as x)")
        ax.set_ylabel("absolute error |D_h f - f'| (units of f')")
        ax.set_title(f"Finite differences: error against step for f = "
                     f"{self.meta.get('expression', '')} at {self.meta.get('point', '')}\n"
                     f"left: rounding (∝ 1/h); right: truncation (∝ h^p); "
                     f"vertical lines: optimum h*", fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=7, ncol=2, loc="upper center")
        finite = [r["abs_error"] for r in self.records if r["abs_error"]]
        if finite:
            ax.set_ylim(max(min(finite) / 10, 1e-18), max(finite) * 1e3)
        return fig


_ORDERS = {"forward": 1, "backward": 1, "central": 2}


def step_sweep(
    expr: str | Expression,
    at: str | Mapping[str, float],
    steps: Sequence[float] | None = None,
    schemes: Sequence[str] = ("forward", "central"),
    dtypes: Sequence[str] = ("float64", "float32"),
) -> StepReport:
    """Error of finite differences against the step h, with the theoretical V.

    Parameters
    ----------
    expr : str or Expression
        A function of **one** variable.
    at : str or mapping
        The point.
    steps : list of float, optional
        Steps to try, relative to max(|x|, 1) as :class:`~difflab.diff.numeric.Numeric`
        takes them; default 10^-16 ... 10^0, four per decade.  Steps too small to
        change x in float64 are left out (noted).
    schemes : list of str
        Numeric schemes (``forward``, ``backward``, ``central``, ``richardson``).
    dtypes : list of {"float64", "float32"}
        Precisions.

    Returns
    -------
    StepReport
        One record per scheme, dtype and step; ``meta["theory"]`` holds the error
        model (truncation constant, order, rounding constant) and the optimum h*
        per scheme and dtype.

    Examples
    --------
    >>> from difflab.compare import step_sweep
    >>> report = step_sweep("exp(x)", "x=1", schemes=["central"], dtypes=["float64"])
    >>> best = report.meta["best"]["central/float64"]
    >>> 1e-7 < best["step"] < 1e-4, best["abs_error"] < 1e-9      # the bottom of the V
    (True, True)
    """
    expr = _expression(expr)
    values = _point(expr, at)
    if len(expr.variables) != 1:
        raise ValueError(f"step_sweep needs a function of one variable; {expr.text!r} has "
                         f"{len(expr.variables)} ({', '.join(expr.variables)})")
    (var,) = expr.variables
    x = values[var]
    steps = list(np.logspace(-16, 0, 65) if steps is None else steps)
    exact = float(reference(expr, values, 1)[var])
    f0 = abs(float(reference(expr, values, 0)["f"]))
    f2 = abs(float(reference(expr, values, 2)[var]))
    f3 = abs(float(reference(expr, values, 3)[var]))
    f = expr.function("difflab")
    records, theory = [], {}
    skipped: dict[str, set[float]] = {}  # dtype -> the steps that round to 0 in it
    for scheme in schemes:
        for dtype in dtypes:
            g = in_dtype(f, DTYPES[dtype])
            for relative in steps:
                # Numeric takes the step relative to max(|x|, 1) and rounds it so that
                # x + h is exact in f's dtype; a step below the spacing of that dtype's
                # numbers near x rounds to 0.
                t = DTYPES[dtype]
                h = float((t(x) + t(float(relative) * max(abs(x), 1.0))) - t(x))
                if h == 0:
                    skipped.setdefault(dtype, set()).add(float(relative))
                    continue
                with warnings.catch_warnings():
                    # Steps far too small are the point of the sweep: no warning each.
                    warnings.simplefilter("ignore", NumericalWarning)
                    value, cost = M.run("derivative", f"numeric:{scheme}", g, x,
                                        step=float(relative))
                value = float(value)
                err = abs(value - exact) if math.isfinite(value) else math.nan
                records.append({"scheme": scheme, "dtype": dtype,
                                "step": cost.get("step") or h, "value": value,
                                "abs_error": err,
                                "rel_error": err / abs(exact) if exact else err,
                                "evaluations": cost.get("evaluations")})
            order = _ORDERS.get(scheme)
            if order:
                eps = float(np.finfo(DTYPES[dtype]).eps)
                c = f2 / 2 if order == 1 else f3 / 6
                # rounding: each of the two values of f is off by ~eps|f|; one-sided
                # differences divide by h, central by 2h.
                rounding = (2 if order == 1 else 1) * eps * max(f0, 1e-300)
                h_opt = (rounding / (order * c)) ** (1 / (order + 1)) if c > 0 else math.nan
                theory[f"{scheme}/{dtype}"] = {
                    "order": order, "truncation": c, "rounding": rounding, "h_opt": h_opt,
                    "error_opt": c * h_opt**order + rounding / h_opt if c > 0 else math.nan,
                }
    best = {}
    for key in {f"{r['scheme']}/{r['dtype']}" for r in records}:
        rows = [r for r in records if f"{r['scheme']}/{r['dtype']}" == key
                and math.isfinite(r["abs_error"])]
        if rows:
            b = min(rows, key=lambda r: r["abs_error"])
            best[key] = {"step": b["step"], "abs_error": b["abs_error"]}
    notes = kinks_at(expr, values)
    for key in sorted(best):
        line = f"{key}: best measured h = {best[key]['step']:.1e} (error " \
               f"{best[key]['abs_error']:.1e})"
        if key in theory:
            line += f"; theory h* = {theory[key]['h_opt']:.1e} (error " \
                    f"{theory[key]['error_opt']:.1e})"
        notes.append(line)
    for dtype, small in sorted(skipped.items()):
        spacing = float(np.spacing(np.abs(DTYPES[dtype](x))))
        notes.append(f"{dtype}: steps {', '.join(f'{h:.0e}' for h in sorted(small))} left "
                     f"out: too small against the spacing of {dtype} numbers near {var}={x:g} "
                     f"({spacing:.1e}): x + h rounds to x in {dtype}")
    point_text = f"{var}={x:g}"
    return StepReport(
        title=f"Finite-difference error against step h: f = {expr.text} at {point_text}",
        records=records,
        columns=[Column("scheme", "scheme"), Column("dtype", "dtype"),
                 Column("step", "h", "", format_sci),
                 Column("value", "D_h f", "", format_value),
                 Column("abs_error", "abs error", "", format_sci)],
        notes=notes,
        meta={"expression": expr.text, "point": point_text, "exact": exact,
              "theory": theory, "best": best},
    )
