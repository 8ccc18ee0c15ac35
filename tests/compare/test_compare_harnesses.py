"""The three harnesses: accuracy (and the step sweep), expression blowup, cost."""

from __future__ import annotations

import csv
import io
import json
import math
import warnings

import mpmath
import numpy as np
import pytest
import sympy

from difflab import compare
from difflab.compare import (
    TooExpensiveError,
    accuracy,
    blowup,
    cost,
    fit_exponent,
    logistic_table,
    reference,
    step_sweep,
)
from difflab.compare.blowup import measure_depth
from difflab.exprparse import ExpressionError

# --------------------------------------------------------------------- helpers


def check_plots(report, tmp_path, name):
    """Write PNG and SVG; both must be real, non-trivial images with the title in them."""
    png, svg = report.save_plots(tmp_path / name)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 20_000
    text = svg.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text
    assert len(text) > 20_000
    fig = report.figure()
    for ax in fig.axes:
        assert ax.get_title(), "every panel has a title"
        assert ax.get_xlabel() and ax.get_ylabel(), "every axis is labelled"
        assert ax.get_legend() is not None, "every panel has a legend"
    return fig


# --------------------------------------------------------------------- accuracy


def test_reference_is_exact_to_many_digits():
    with mpmath.workdps(50):
        d = reference("sin(x)", "x=0.5")["x"]
        assert abs(d - mpmath.cos(mpmath.mpf("0.5"))) < mpmath.mpf(10) ** -40
        d2 = reference("exp(2*x)", "x=0.25", order=2)["x"]
        assert abs(d2 - 4 * mpmath.exp(mpmath.mpf("0.5"))) < mpmath.mpf(10) ** -35


def test_accuracy_orders_the_methods():
    report = accuracy("exp(sin(x)) / (1 + x**2)", "x=1.3")
    by = {(r["method"], r["dtype"]): r for r in report.records}
    for method in ("forward", "reverse", "symbolic"):
        assert by[(method, "float64")]["rel_error"] < 1e-14
    assert 1e-14 < by[("numeric", "float64")]["rel_error"] < 1e-8
    # float32 carries its own rounding, ~1e-7, through the whole computation
    for method in ("forward", "reverse"):
        assert 1e-10 < by[(method, "float32")]["rel_error"] < 1e-5
    assert by[("numeric", "float32")]["rel_error"] > by[("numeric", "float64")]["rel_error"]
    assert ("symbolic", "float32") not in by
    assert any("float64" in n for n in report.notes)
    assert by[("forward", "float64")]["evaluations"] == 1
    assert by[("numeric", "float64")]["evaluations"] == 3


def test_accuracy_of_a_gradient_and_numeric_variants():
    report = accuracy("x*y + sin(x*y)", {"x": 1.0, "y": 2.0},
                      methods="reverse,numeric:richardson,numeric:complex", dtypes=["float64"])
    assert {r["variable"] for r in report.records} == {"x", "y"}
    exact = {"x": 2 * (1 + math.cos(2.0)), "y": 1 + math.cos(2.0)}
    for r in report.records:
        assert r["reference"] == pytest.approx(exact[r["variable"]], rel=1e-15)
        assert r["rel_error"] < 1e-12


def test_accuracy_bad_points():
    with pytest.raises(ExpressionError, match="'y' .* has no value"):
        accuracy("x + y", "x=1")
    with pytest.raises(ExpressionError, match="'z' is not a variable"):
        accuracy("x", "x=1,z=2")
    with pytest.raises(ValueError, match="unknown method 'backprop'"):
        accuracy("x", "x=1", methods="backprop")


def test_records_export_as_csv_and_json(tmp_path):
    report = accuracy("sin(x)", "x=0.5", methods="forward,numeric", dtypes=["float64"])
    rows = list(csv.DictReader(io.StringIO(report.to_csv(tmp_path / "a.csv"))))
    assert len(rows) == 2 and {"method", "value", "abs_error"} <= set(rows[0])
    assert float(rows[0]["value"]) == pytest.approx(math.cos(0.5))
    data = json.loads((tmp_path / "a.csv").read_text() and report.to_json(tmp_path / "a.json"))
    assert data["records"][0]["method"] == "forward"
    assert json.loads((tmp_path / "a.json").read_text()) == data
    assert "derivative" in report.to_text()


def test_accuracy_plot(tmp_path):
    check_plots(accuracy("sin(x)*exp(-x)", "x=0.3"), tmp_path, "accuracy")


def test_step_sweep_draws_the_v(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = step_sweep("exp(x)", "x=1.0")
    best = report.meta["best"]
    theory = report.meta["theory"]
    for scheme in ("forward", "central"):
        rows = [r for r in report.records
                if r["scheme"] == scheme and r["dtype"] == "float64"]
        err = {round(math.log10(r["step"])): r["abs_error"] for r in rows}
        b = best[f"{scheme}/float64"]
        # both branches of the V rise well above its bottom
        assert err[-13] > 100 * b["abs_error"] and err[0] > 100 * b["abs_error"]
        # and the bottom is near the theoretical optimum (within 1.5 decades)
        h_opt = theory[f"{scheme}/float64"]["h_opt"]
        assert abs(math.log10(b["step"]) - math.log10(h_opt)) < 1.5
    # central beats forward; float32's optimum step is larger
    assert best["central/float64"]["abs_error"] < best["forward/float64"]["abs_error"]
    assert best["central/float32"]["step"] > 100 * best["central/float64"]["step"]
    assert "left out" in " ".join(report.notes)  # 1e-16 cannot move x = 1
    text = report.to_text()
    assert "central float32" in text.splitlines()[1]
    check_plots(report, tmp_path, "steps")


def test_step_sweep_needs_one_variable():
    with pytest.raises(ValueError, match="one variable"):
        step_sweep("x*y", "x=1,y=1")


# --------------------------------------------------------------------- blowup


def test_logistic_map_matches_the_numbers_of_the_issue():
    report = blowup("logistic", [4, 5, 9], max_seconds=None)
    by = {r["depth"]: r for r in report.records}
    assert [by[n]["df_ops"] for n in (4, 5, 9)] == [82, 264, 13_824]
    assert [by[n]["df_ops_cse"] for n in (4, 5, 9)] == [27, 45, 157]
    assert [by[n]["tape_length"] for n in (4, 5, 9)] == [9, 12, 24]  # 3 per level
    for r in report.records:
        assert r["forward_ops"] > 0 and r["reverse_seconds"] > 0
        assert r["symbolic_eval_seconds"] > 0


def test_logistic_table_is_baydin_table_1():
    table = logistic_table(4)
    x = sympy.Symbol("x", real=True)
    paper = {  # Baydin et al. (2018), Table 1, "simplified form" column
        2: 4 - 8 * x,
        3: 16 * (1 - 10 * x + 24 * x**2 - 16 * x**3),
        4: 64 * (1 - 42 * x + 504 * x**2 - 2640 * x**3 + 7040 * x**4 - 9984 * x**5
                 + 7168 * x**6 - 2048 * x**7),
    }
    for r in table.records[1:]:
        ours = sympy.sympify(r["dl_n/dx simplified"], locals={"x": x})
        assert sympy.expand(ours - paper[r["n"]]) == 0
        raw = sympy.sympify(r["dl_n/dx"], locals={"x": x})
        assert sympy.expand(raw - paper[r["n"]]) == 0
    l4 = sympy.sympify(table.records[3]["l_n"], locals={"x": x})
    assert sympy.expand(l4 - 64 * x * (1 - x) * (1 - 2 * x)**2 * (1 - 8 * x + 8 * x**2)**2) == 0
    text = table.to_text()
    assert "n = 4" in text and "82 ops, 27 after CSE" in text


def test_cse_keeps_nested_sin_linear_while_the_tree_grows_faster():
    report = blowup("nested-sin", range(1, 9), evaluate=False, max_seconds=None)
    cse = [r["df_ops_cse"] for r in report.records]
    plain = [r["df_ops"] for r in report.records]
    steps = {b - a for a, b in zip(cse[2:], cse[3:])}
    assert len(steps) == 1  # constant growth: linear
    assert plain[-1] - plain[-2] > plain[3] - plain[2]  # growing growth
    assert [r["tape_length"] for r in report.records] == list(range(1, 9))


def test_derivative_family_nests_reverse_mode():
    report = blowup("derivative", range(1, 5), max_seconds=None)
    tapes = [r["tape_length"] for r in report.records]
    assert tapes == sorted(tapes) and tapes[-1] > 4 * tapes[0]
    rec = measure_depth("derivative", 2)
    x = sympy.Symbol("x", real=True)
    first = sympy.diff(sympy.exp(sympy.sin(x)), x)
    assert rec["f_ops"] == sympy.count_ops(first)
    assert rec["df_ops"] == sympy.count_ops(sympy.diff(first, x))


def test_blowup_refuses_a_run_that_would_take_very_long():
    with pytest.raises(TooExpensiveError) as info:
        blowup("logistic", range(1, 26), max_seconds=10)
    est = info.value.estimate
    assert est.total_seconds > 10 and est.model == "geometric"
    assert est.growth > 1.5  # count_ops of the derivative grows ~2.5x per level
    assert "extrapolated" in str(info.value)
    # the product family grows like a power of n instead
    assert compare.estimate("product", [20], evaluate=False).model == "power"


def test_blowup_plot(tmp_path):
    report = blowup("logistic", range(1, 8), max_seconds=None)
    check_plots(report, tmp_path, "blowup")
    assert "f' ops CSE" in report.to_text()


def test_unknown_family():
    with pytest.raises(ValueError, match="known families: logistic, nested-sin"):
        blowup("fibonacci", [1])


# --------------------------------------------------------------------- cost


def test_fit_exponent():
    assert fit_exponent([10, 100, 1000], [2e-3, 2e-1, 2e1]) == pytest.approx(2.0)
    assert fit_exponent([10, 100, 1000], [1.0, 1.0, 1.0]) == pytest.approx(0.0, abs=1e-12)
    # tiny sizes are left out when enough large ones remain
    assert fit_exponent([1, 100, 1000], [5.0, 1.0, 10.0]) == pytest.approx(1.0)
    assert math.isnan(fit_exponent([10], [1.0]))


def test_cost_measures_forward_growing_and_reverse_flat(tmp_path):
    report = cost("sum-sin", (100, 1000, 3000), methods="forward,reverse", min_time=0.02)
    exps = report.meta["exponents"]
    # measured, not assumed: forward / f grows with n, reverse / f does not
    assert exps["forward/f"] > 0.6
    assert exps["reverse/f"] < 0.3
    assert exps["forward/f"] - exps["reverse/f"] > 0.6
    by = {(r["method"], r["n"]): r for r in report.records}
    assert [by[("forward", n)]["evaluations"] for n in (100, 1000, 3000)] == [2, 16, 47]
    assert {by[("reverse", n)]["evaluations"] for n in (100, 1000, 3000)} == {1}
    assert {by[("reverse", n)]["backward_passes"] for n in (100, 1000, 3000)} == {1}
    assert {by[("forward", n)]["backward_passes"] for n in (100, 1000, 3000)} == {None}
    assert by[("forward", 3000)]["peak_bytes"] > by[("reverse", 3000)]["peak_bytes"] > 0
    assert "growth exponent" in report.to_text()
    check_plots(report, tmp_path, "cost")


def test_cost_of_a_jacobian_over_m():
    report = cost("tanh-layer", ns=(50,), ms=(1, 10, 40), methods="forward,reverse,numeric",
                  min_time=0.0, max_repeats=1, memory=False)
    assert report.meta["axis"] == "m"
    by = {(r["method"], r["m"]): r for r in report.records}
    # one recorded forward pass, one backward pass per output (row of the Jacobian)
    assert {by[("reverse", m)]["evaluations"] for m in (1, 10, 40)} == {1}
    assert [by[("reverse", m)]["backward_passes"] for m in (1, 10, 40)] == [1, 10, 40]
    assert {by[("forward", m)]["evaluations"] for m in (1, 10, 40)} == {1}
    assert {by[("numeric", m)]["evaluations"] for m in (1, 10, 40)} == {101}


@pytest.mark.parametrize("name", ["sum-sin", "logsumexp", "tanh-layer"])
def test_each_problem_of_n_scalar_arguments_is_the_same_function(name):
    prob = compare.problems.problem(name)
    f, x = prob.make(7, 3)
    g, point = prob.make_scalars(7, 3)
    assert np.array_equal(point, x)
    np.testing.assert_allclose(g(*point), f(x), rtol=1e-14)


def test_cost_of_n_arguments_one_pass_for_reverse_n_for_forward():
    report = cost("sum-sin", (10, 30), methods="forward,reverse,numeric",
                  arguments="scalars", min_time=0.0, max_repeats=1, memory=False)
    by = {(r["method"], r["n"]): r for r in report.records}
    for n in (10, 30):
        assert by[("reverse", n)]["evaluations"] == 1
        assert by[("reverse", n)]["backward_passes"] == 1
        assert by[("forward", n)]["evaluations"] == n  # one pass per argument
        assert by[("numeric", n)]["evaluations"] >= 2 * n  # two per argument at least
    assert report.meta["arguments"] == "scalars"
    assert "x_1 sin(x_1) + ... + x_n sin(x_n)" in report.title
    assert "backward" in report.to_text()


def test_cost_of_a_jacobian_of_n_arguments():
    report = cost("tanh-layer", ns=(8,), ms=(1, 4), methods="reverse,forward",
                  arguments="scalars", min_time=0.0, max_repeats=1, memory=False)
    by = {(r["method"], r["m"]): r for r in report.records}
    assert [by[("reverse", m)]["backward_passes"] for m in (1, 4)] == [1, 4]
    assert {by[("reverse", m)]["evaluations"] for m in (1, 4)} == {1}
    assert {by[("forward", m)]["evaluations"] for m in (1, 4)} == {8}


def test_cost_rejects_an_unknown_argument_layout():
    with pytest.raises(ValueError, match="'vector' or 'scalars'"):
        cost("sum-sin", (10,), methods="reverse", arguments="matrix")


def test_cost_skips_what_would_take_too_long():
    report = cost("sum-sin", (10, 100, 100_000), methods="numeric", max_seconds=0.5,
                  min_time=0.0, max_repeats=1, memory=False)
    assert [r["n"] for r in report.records] == [10, 100]
    assert "numeric: skipped n >= 100000" in " ".join(report.notes)


def test_symbolic_compile_time_is_reported_apart():
    report = cost("logsumexp", (5, 20), methods="symbolic", min_time=0.0, memory=False)
    for r in report.records:
        assert r["compile_seconds"] > r["seconds"] > 0
        assert r["eval_seconds"] > 0


def test_unknown_cost_function():
    with pytest.raises(ValueError, match="known functions: sum-sin, logsumexp, tanh-layer"):
        cost("rosenbrock", (10,))


def test_accuracy_outside_the_domain_reports_nan_not_garbage():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = accuracy("1/x", "x=0", methods="forward", dtypes=["float64"])
    (row,) = report.records
    assert math.isnan(row["reference"]) and math.isnan(row["rel_error"])
    assert "nan" in report.to_text()


def test_a_kink_at_the_point_is_noted_as_no_derivative_here():
    """abs(x-1)*exp(x) has no derivative at x = 1: the table says so (issue 31)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        at_kink = compare.accuracy("abs(x-1)*exp(x)", "x=1", methods=["reverse", "numeric"])
        smooth = compare.accuracy("abs(x-1)*exp(x)", "x=2", methods=["reverse"])
        tie = compare.accuracy("maximum(x, 2*x)", "x=0", methods=["forward"])
    assert any(n.startswith("no derivative here: abs") for n in at_kink.notes)
    assert "no derivative here" in at_kink.to_text()
    assert not any("no derivative" in n for n in smooth.notes)
    assert any(n.startswith("no derivative here: maximum") for n in tie.notes)
    steps = step_sweep("abs(x-1)", "x=1", schemes=["central"], dtypes=["float64"])
    assert any(n.startswith("no derivative here: abs") for n in steps.notes)


def test_the_steps_left_out_name_their_dtype_and_its_spacing():
    """Steps below 1e-8 vanish in float32, not float64: the note says which dtype (issue 31)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = step_sweep("exp(x)", "x=1.0", schemes=["central"])
    notes = {n.split(":")[0]: n for n in report.notes if "left out" in n}
    assert set(notes) == {"float32", "float64"}
    assert "1e-08" in notes["float32"] and "1e-08" not in notes["float64"]
    assert f"{np.spacing(np.float32(1)):.1e}" in notes["float32"]
    assert "x + h rounds to x in float32" in notes["float32"]
