"""The ``difflab`` command: the comparison harnesses in a terminal.

::

    difflab tour                                   # everything, in under a minute
    difflab compare "sin(x)*exp(-x**2)" --at x=1.3 # one table: values, errors, cost
    difflab steps "exp(x)" --at x=1.0 --plot steps.png
    difflab blowup logistic --depth 1..10
    difflab cost sum-sin --n 10,100,1000 --json

Conventions: data goes to stdout (a table, or only JSON with ``--json``, or
only CSV with ``--csv``); messages, warnings and progress bars go to stderr;
progress bars and colour appear only on a terminal (and colour not under
``NO_COLOR``).  Exit status 0 on success, 2 on bad usage or bad input, with
a message that names the problem.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from difflab.grading.cli import (
    assign_command,
    autograder_group,
    check_command,
    grade_command,
    gradebook_group,
    manual_group,
)

__all__ = ["main"]


# ---------------------------------------------------------------- terminal helpers


def _stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


def _color() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


def _heading(text: str) -> str:
    return click.style(text, bold=True) if _color() else text


@contextlib.contextmanager
def _progress(label: str, total: int) -> Iterator[Callable[[int], None]]:
    """A progress bar on stderr (only on a terminal); yields ``update(n)``."""
    if not _stderr_is_terminal() or total <= 0:
        yield lambda n: None
        return
    with click.progressbar(length=total, label=label, file=sys.stderr,
                           show_eta=True) as bar:
        yield bar.update


@contextlib.contextmanager
def _warnings_to_stderr(ignore: tuple[type[Warning], ...] = ()) -> Iterator[None]:
    """Show Python warnings as one 'warning: ...' line each (no file paths)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for category in ignore:
            warnings.simplefilter("ignore", category)
        yield
    seen = set()
    for w in caught:
        text = str(w.message)
        if text not in seen:
            seen.add(text)
            click.echo(f"warning: {text}", err=True)


def _bad_input(exc: Exception, param: str | None = None) -> click.UsageError:
    """A usage error (exit 2) from a library error, keeping its message."""
    if param:
        return click.BadParameter(str(exc), param_hint=param)
    return click.UsageError(str(exc))


def _check_output_flags(as_json: bool, as_csv: bool) -> None:
    if as_json and as_csv:
        raise click.UsageError("--json and --csv cannot be used together: choose one")


def _emit(report: Any, as_json: bool, as_csv: bool, plot: Path | None) -> None:
    """Print a report in the chosen format and draw its plot if asked."""
    if as_json:
        click.echo(report.to_json())
    elif as_csv:
        click.echo(report.to_csv(), nl=False)
    else:
        text = report.to_text()
        title, _, rest = text.partition("\n")
        click.echo(_heading(title) + ("\n" + rest if rest else ""))
    if plot is not None:
        report.save_plot(plot)
        click.echo(f"plot written to {plot}", err=True)


def _check_plot_path(plot: Path | None) -> None:
    if plot is not None and plot.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise click.BadParameter(
            f"the plot file must end in .png, .svg or .pdf, got {plot.name!r}",
            param_hint="--plot")


def output_options(command: Callable) -> Callable:
    """``--json``, ``--csv`` and ``--plot FILE``, shared by every harness command."""
    command = click.option("--plot", type=click.Path(path_type=Path, dir_okay=False),
                           default=None, metavar="FILE",
                           help="Also draw the plot into FILE (.png, .svg or .pdf).")(command)
    command = click.option("--csv", "as_csv", is_flag=True,
                           help="Print the records as CSV (and nothing else).")(command)
    command = click.option("--json", "as_json", is_flag=True,
                           help="Print the records as JSON (and nothing else).")(command)
    return command


def _parse_expression(text: str) -> Any:
    from difflab.exprparse import ExpressionError, parse

    try:
        return parse(text)
    except ExpressionError as exc:
        raise _bad_input(exc, "EXPR") from None


def _parse_point(expr: Any, at: str) -> dict[str, float]:
    from difflab.compare.accuracy import _point
    from difflab.exprparse import ExpressionError

    try:
        return _point(expr, at)
    except ExpressionError as exc:
        raise _bad_input(exc, "--at") from None


def _int_list(text: str, name: str) -> list[int]:
    """``"10,100,1000"`` or ``"1..10"`` (or a mix: ``"1..4,8"``) as a list of integers."""
    values: list[int] = []
    try:
        for part in (p.strip() for p in text.split(",")):
            if not part:
                continue
            if ".." in part:
                low, _, high = part.partition("..")
                lo, hi = int(low), int(high)
                if hi < lo:
                    raise ValueError
                values.extend(range(lo, hi + 1))
            else:
                values.append(int(float(part)) if "e" in part.lower() else int(part))
    except ValueError:
        raise click.BadParameter(
            f"expected integers like 10,100,1000 or a range like 1..10, got {text!r}",
            param_hint=name) from None
    if not values or min(values) < 1:
        raise click.BadParameter(f"expected positive integers, got {text!r}", param_hint=name)
    return sorted(set(values))


def _methods(text: str | None) -> list[str]:
    from difflab.compare.methods import parse_methods

    try:
        return parse_methods(text)
    except ValueError as exc:
        raise _bad_input(exc, "--methods") from None


def _dtypes(text: str) -> list[str]:
    items = [d.strip() for d in text.split(",") if d.strip()]
    for d in items:
        if d not in ("float64", "float32"):
            raise click.BadParameter(f"unknown dtype {d!r}; choose from float64, float32",
                                     param_hint="--dtypes")
    return items or ["float64"]


# ------------------------------------------------------------------------ the group


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="difflab", prog_name="difflab")
def main() -> None:
    """difflab: four ways to differentiate a function, side by side.

    Forward mode (dual numbers), reverse mode (a tape), symbolic (sympy) and
    numeric (finite differences), compared on accuracy, expression size and
    cost.  Start with `difflab tour`.
    """


main.add_command(grade_command)
main.add_command(assign_command)
main.add_command(check_command)
main.add_command(autograder_group)
main.add_command(manual_group)
main.add_command(gradebook_group)


# ---------------------------------------------------------------------- functions


@main.command("functions")
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON.")
def functions_command(as_json: bool) -> None:
    """The functions an expression may call: every elementwise primitive.

    Each comes with its derivative rule and its convention at kinks, read from
    difflab's registry of primitives (one registered at run time is listed too).
    """
    from difflab.exprparse import ALIASES
    from difflab.ops import registry

    rows = []
    for op in registry.elementwise_ops():
        arity = 1 if isinstance(op, registry.UnaryOp) else 2
        aliases = [a for a, name in ALIASES.items() if name == op.name]
        rows.append({"name": op.name, "arguments": arity, "aliases": aliases,
                     "meaning": op.rule.description, "rule": op.math, "kinks": op.rule.kinks})
    if as_json:
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    for row in rows:
        names = ", ".join([row["name"], *row["aliases"]])
        args = "(x)" if row["arguments"] == 1 else "(a, b)"
        click.echo(f"{names + args:<22} {row['meaning']}")
        click.echo(f"{'':<22}   {row['rule']}")
        if row["kinks"]:
            click.echo(f"{'':<22}   at kinks: {row['kinks']}")


# ------------------------------------------------------------------------ compare


@main.command("compare")
@click.argument("expr")
@click.option("--at", "at", required=True, metavar="x=VALUE[,y=VALUE]",
              help="The point, e.g. x=1.3 or x=1,y=2.")
@click.option("--methods", default="forward,reverse,symbolic,numeric", show_default=True,
              help="Comma-separated methods; numeric also as numeric:richardson, "
                   "numeric:complex, numeric:forward, ...")
@click.option("--dtypes", default="float64,float32", show_default=True,
              help="Precisions to run each method in.")
@output_options
def compare_command(expr: str, at: str, methods: str, dtypes: str, as_json: bool,
                    as_csv: bool, plot: Path | None) -> None:
    """The derivative of EXPR by each method: value, error, evaluations, time.

    EXPR is plain math in the variables you name: numbers, + - * / **, and the
    functions that `difflab functions` lists (sin, exp, log, sqrt, pow, max,
    ...).  Errors are against mpmath at 50 digits.  Example:

        difflab compare "sin(x)*exp(-x**2)" --at x=1.3
    """
    from difflab.compare import accuracy

    _check_output_flags(as_json, as_csv)
    _check_plot_path(plot)
    parsed = _parse_expression(expr)
    point = _parse_point(parsed, at)
    chosen, kinds = _methods(methods), _dtypes(dtypes)
    try:
        with _warnings_to_stderr():
            report = accuracy(parsed, point, chosen, kinds)
    except (ValueError, ArithmeticError) as exc:
        raise _bad_input(exc) from None
    _emit(report, as_json, as_csv, plot)


# ------------------------------------------------------------------------ steps


@main.command("steps")
@click.argument("expr")
@click.option("--at", "at", required=True, metavar="x=VALUE", help="The point, e.g. x=1.0.")
@click.option("--schemes", default="forward,central", show_default=True,
              help="Finite-difference schemes: forward, backward, central, richardson.")
@click.option("--dtypes", default="float64,float32", show_default=True,
              help="Precisions.")
@click.option("--per-decade", type=click.IntRange(1, 20), default=2, show_default=True,
              help="Steps per decade between 1e-16 and 1.")
@output_options
def steps_command(expr: str, at: str, schemes: str, dtypes: str, per_decade: int,
                  as_json: bool, as_csv: bool, plot: Path | None) -> None:
    """Finite-difference error of EXPR against the step h (the V on log-log axes).

    Shows the truncation branch (error ∝ h^p) and the rounding branch
    (error ∝ 1/h), and the theoretical optimum step h*.  Example:

        difflab steps "exp(x)" --at x=1.0 --plot steps.png
    """
    import numpy as np

    from difflab.compare import step_sweep
    from difflab.diff import NumericalWarning

    _check_output_flags(as_json, as_csv)
    _check_plot_path(plot)
    parsed = _parse_expression(expr)
    point = _parse_point(parsed, at)
    kinds = _dtypes(dtypes)
    chosen = [s.strip() for s in schemes.split(",") if s.strip()]
    for s in chosen:
        if s not in ("forward", "backward", "central", "richardson"):
            raise click.BadParameter(
                f"unknown scheme {s!r}; choose from forward, backward, central, richardson",
                param_hint="--schemes")
    if len(parsed.variables) != 1:
        raise click.BadParameter(
            f"steps needs a function of one variable; {parsed.text!r} has "
            f"{len(parsed.variables)}", param_hint="EXPR")
    steps = list(np.logspace(-16, 0, 16 * per_decade + 1))
    try:
        with _warnings_to_stderr(ignore=(NumericalWarning,)):
            report = step_sweep(parsed, point, steps, chosen, kinds)
    except (ValueError, ArithmeticError) as exc:
        raise _bad_input(exc) from None
    _emit(report, as_json, as_csv, plot)


# ------------------------------------------------------------------------ blowup


@main.command("blowup")
@click.argument("family")
@click.option("--depth", "depth", default="1..10", show_default=True, metavar="RANGE",
              help="Depths, e.g. 1..10 or 1,2,4,8.")
@click.option("--force", is_flag=True,
              help="Run even if the estimated time is over --max-seconds.")
@click.option("--max-seconds", type=click.FloatRange(min=0), default=10.0, show_default=True,
              help="Refuse (exit 2, with an estimate) runs estimated to take longer.")
@click.option("--no-eval", "no_eval", is_flag=True,
              help="Only sizes: do not time the differentiators.")
@click.option("--table1/--no-table1", default=True, show_default=True,
              help="For the logistic map, also print Table 1 of Baydin et al. (n = 1..4).")
@output_options
def blowup_command(family: str, depth: str, force: bool, max_seconds: float, no_eval: bool,
                   table1: bool, as_json: bool, as_csv: bool, plot: Path | None) -> None:
    """Expression swell of FAMILY by depth, beside the reverse-mode tape.

    FAMILY is one of: logistic (l_(n+1) = 4 l_n (1 - l_n), Baydin et al.'s
    Table 1), nested-sin, product, derivative (n-th derivative of
    exp(sin(x))).  Example:

        difflab blowup logistic --depth 1..10 --plot blowup.png
    """
    from difflab.compare import FAMILIES, TooExpensiveError, blowup, logistic_table

    _check_output_flags(as_json, as_csv)
    _check_plot_path(plot)
    if family not in FAMILIES:
        raise click.BadParameter(
            f"unknown family {family!r}; known families: {', '.join(FAMILIES)}",
            param_hint="FAMILY")
    depths = _int_list(depth, "--depth")
    try:
        with _progress(f"blowup {family}", len(depths)) as update:
            report = blowup(family, depths, evaluate=not no_eval, max_seconds=max_seconds,
                            force=force, progress=update)
    except TooExpensiveError as exc:
        click.echo(f"warning: {exc}.", err=True)
        click.echo("Pass --force to run it anyway, or choose smaller depths.", err=True)
        sys.exit(2)
    table = logistic_table(4) if table1 and family == "logistic" else None
    if as_json:
        data = report.to_dict()
        if table is not None:
            data["table1"] = table.to_dict()
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    elif as_csv:
        click.echo(report.to_csv(), nl=False)
    else:
        if table is not None:
            text = table.to_text()
            title, _, rest = text.partition("\n")
            click.echo(_heading(title) + "\n" + rest + "\n")
        _emit(report, False, False, None)
    if plot is not None:
        report.save_plot(plot)
        click.echo(f"plot written to {plot}", err=True)


# ------------------------------------------------------------------------ cost


@main.command("cost")
@click.argument("function")
@click.option("--n", "n", default="10,100,1000", show_default=True, metavar="SIZES",
              help="Input sizes n, e.g. 10,100,1000,10000.")
@click.option("--m", "m", default="10", show_default=True, metavar="SIZES",
              help="Output sizes m (tanh-layer only); several m with one n sweeps m.")
@click.option("--methods", default="forward,reverse,symbolic,numeric", show_default=True,
              help="Comma-separated methods.")
@click.option("--chunk-size", type=click.IntRange(min=1), default=64, show_default=True,
              help="Forward mode: directions per pass.")
@click.option("--max-seconds", type=click.FloatRange(min=0.01), default=5.0,
              show_default=True,
              help="Skip a method's larger sizes once one is predicted to take longer.")
@click.option("--no-memory", "no_memory", is_flag=True,
              help="Do not measure peak memory (saves one call per size).")
@click.option("--arguments", type=click.Choice(["vector", "scalars"]), default="vector",
              show_default=True,
              help="vector: f(x) of one x in R^n; scalars: f(x_1, ..., x_n) of n "
                   "arguments, differentiated with respect to all of them.")
@output_options
def cost_command(function: str, n: str, m: str, methods: str, chunk_size: int,
                 max_seconds: float, no_memory: bool, arguments: str, as_json: bool,
                 as_csv: bool, plot: Path | None) -> None:
    """Time, memory and evaluations of the gradient (or Jacobian) of FUNCTION as n grows.

    FUNCTION is one of: sum-sin, logsumexp (gradients of R^n -> R),
    tanh-layer (Jacobian of R^n -> R^m).  Prints each method's fitted growth
    exponent (time ∝ n^k).  Examples:

        difflab cost sum-sin --n 10,100,1000,10000 --plot cost.png

        difflab cost sum-sin --n 10 --arguments scalars
    """
    from difflab.compare import PROBLEMS, cost

    _check_output_flags(as_json, as_csv)
    _check_plot_path(plot)
    if function not in PROBLEMS:
        raise click.BadParameter(
            f"unknown function {function!r}; known functions: {', '.join(PROBLEMS)}",
            param_hint="FUNCTION")
    ns, ms, chosen = _int_list(n, "--n"), _int_list(m, "--m"), _methods(methods)
    if PROBLEMS[function].outputs != "vector":
        total = len(chosen) * len(ns)
    elif len(ns) == 1:
        total = len(chosen) * len(ms)
    else:
        total = len(chosen) * len(ns) * len(ms)
    with _progress(f"cost {function}", total) as update, _warnings_to_stderr():
        report = cost(function, ns, chosen, ms, chunk_size=chunk_size,
                      max_seconds=max_seconds, memory=not no_memory, arguments=arguments,
                      progress=update)
    _emit(report, as_json, as_csv, plot)


# ------------------------------------------------------------------------ tour


@main.command("tour")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False),
              default=Path("difflab-tour"), show_default=True,
              help="Folder for the plots (PNG and SVG) and data (CSV and JSON).")
@click.option("--quick", is_flag=True, help="Smaller sizes: a few seconds in all.")
def tour_command(out: Path, quick: bool) -> None:
    """A short run of every comparison on built-in functions (under a minute).

    Prints the tables (accuracy, step sweep, Baydin et al.'s Table 1, expression
    swell, cost of gradients and Jacobians) and writes every plot into --out.
    """
    from difflab.compare import tour

    try:  # fail before any work if the folder cannot be written
        out.mkdir(parents=True, exist_ok=True)
        (out / ".difflab-write-test").touch()
        (out / ".difflab-write-test").unlink()
    except OSError as error:
        raise click.BadParameter(f"cannot write into {out}: {error.strerror or error}. "
                                 f"Choose a folder you can write to.", param_hint="--out") from None
    start = time.perf_counter()
    click.echo(_heading("difflab tour: four ways to differentiate, side by side") + "\n")
    with _warnings_to_stderr():
        result = tour(out, echo=click.echo, progress=_progress, quick=quick)
    plots = [f for f in result["files"] if f.suffix in (".png", ".svg")]
    click.echo(f"wrote {len(plots)} plots and their data to {out}/ "
               f"({time.perf_counter() - start:.1f} s)", err=True)
    for f in plots:
        click.echo(f"  {f}", err=True)


if __name__ == "__main__":  # pragma: no cover
    main()
