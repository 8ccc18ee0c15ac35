"""The `difflab` command: output formats, exit codes, and clear messages for bad input."""

from __future__ import annotations

import csv
import io
import json

import pytest
from click.testing import CliRunner

from difflab.cli import main


@pytest.fixture
def run():
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(main, list(args), catch_exceptions=False)

    return invoke


@pytest.mark.parametrize("command", [
    [], ["compare"], ["steps"], ["blowup"], ["cost"], ["tour"], ["grade"], ["assign"],
    ["check"], ["manual"], ["manual", "collect"], ["manual", "score"], ["manual", "apply"],
    ["gradebook"], ["gradebook", "stats"], ["gradebook", "adjust"], ["gradebook", "export"],
])
def test_every_command_has_help(run, command):
    result = run(*command, "--help")
    assert result.exit_code == 0
    assert "Usage:" in result.output
    if command in (["compare"], ["steps"], ["blowup"], ["cost"]):
        assert "--json" in result.output and "--csv" in result.output
        assert "--plot" in result.output


def test_compare_prints_one_table(run):
    result = run("compare", "sin(x)*exp(-x**2)", "--at", "x=1.3")
    assert result.exit_code == 0, result.output
    for word in ("forward", "reverse", "symbolic", "numeric", "rel error", "f evals", "time"):
        assert word in result.stdout
    assert "reference (mpmath, 50 digits)" in result.stdout


def test_compare_json_csv_and_plot(run, tmp_path):
    result = run("compare", "x*y", "--at", "x=2,y=3", "--methods", "forward,numeric:complex",
                 "--dtypes", "float64", "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)  # only JSON on stdout
    values = {(r["method"], r["variable"]): r["value"] for r in data["records"]}
    assert values[("forward", "x")] == pytest.approx(3.0)
    assert values[("numeric:complex", "y")] == pytest.approx(2.0)
    result = run("compare", "exp(x)", "--at", "x=0", "--csv", "--plot",
                 str(tmp_path / "c.svg"))
    assert result.exit_code == 0
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert {r["method"] for r in rows} == {"forward", "reverse", "symbolic", "numeric"}
    assert (tmp_path / "c.svg").stat().st_size > 10_000


@pytest.mark.parametrize("args, fragments", [
    (["compare", "foo(x)", "--at", "x=1"],
     ["unknown function 'foo'", "known functions:", "sin", "sigmoid"]),
    (["compare", "sin(x", "--at", "x=1"], ["syntax error", "column 4", "^"]),
    (["compare", "x*y", "--at", "x=1"], ["variable 'y'", "has no value", "y=1.0"]),
    (["compare", "sin(x)", "--at", "x=abc"], ["must be a number, got 'abc'"]),
    (["compare", "sin(x)", "--at", "1.3"], ["expected name=number"]),
    (["compare", "__import__('os').system('ls')", "--at", "x=1"],
     ["attribute access ('.system') not allowed"]),
    (["compare", "x.__class__", "--at", "x=1"], ["attribute access"]),
    (["compare", "sin(x)", "--at", "x=1", "--methods", "magic"],
     ["unknown method 'magic'", "forward, reverse, symbolic, numeric"]),
    (["compare", "sin(x)", "--at", "x=1", "--json", "--csv"], ["cannot be used together"]),
    (["compare", "sin(x)", "--at", "x=1", "--plot", "out.txt"], [".png, .svg or .pdf"]),
    (["compare", "sin(x)"], ["Missing option '--at'"]),
    (["steps", "x*y", "--at", "x=1,y=2"], ["one variable"]),
    (["steps", "exp(x)", "--at", "x=1", "--schemes", "sideways"], ["unknown scheme"]),
    (["blowup", "fibonacci"], ["unknown family 'fibonacci'", "logistic, nested-sin"]),
    (["blowup", "logistic", "--depth", "a..b"], ["expected integers"]),
    (["blowup", "logistic", "--depth", "0..3"], ["positive integers"]),
    (["cost", "rosenbrock"], ["unknown function 'rosenbrock'", "sum-sin"]),
    (["cost", "sum-sin", "--n", "ten"], ["expected integers"]),
])
def test_bad_usage_exits_2_with_a_clear_message(run, args, fragments):
    result = run(*args)
    assert result.exit_code == 2
    assert result.stdout == "" or "Usage" in result.output
    for fragment in fragments:
        assert fragment in result.output, (fragment, result.output)
    assert "Traceback" not in result.output


def test_blowup_warns_before_a_long_run_and_asks_for_force(run):
    result = run("blowup", "logistic", "--depth", "1..22", "--no-eval")
    assert result.exit_code == 2
    assert "warning:" in result.stderr and "would take about" in result.stderr
    assert "--force" in result.stderr
    assert result.stdout == ""


def test_blowup_prints_table1_and_sizes(run, tmp_path):
    # --force: the estimate of the run's time (a few seconds on a quiet machine) passes the
    # 10 s limit on a loaded one (13-16 s measured), and the command then stops instead; the
    # refusal is tested above
    result = run("blowup", "logistic", "--depth", "1..9", "--force",
                 "--plot", str(tmp_path / "b.png"))
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Table 1" in out and "82 ops, 27 after CSE" in out
    assert "13,824" in out and "157" in out
    assert (tmp_path / "b.png").stat().st_size > 20_000
    data = json.loads(run("blowup", "nested-sin", "--depth", "1,2,3", "--json").stdout)
    assert [r["depth"] for r in data["records"]] == [1, 2, 3]


def test_steps_json(run):
    result = run("steps", "exp(x)", "--at", "x=1.0", "--per-decade", "1", "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["meta"]["best"]["central/float64"]["abs_error"] < 1e-9
    assert {r["scheme"] for r in data["records"]} == {"forward", "central"}


def test_cost_prints_exponents(run, tmp_path):
    result = run("cost", "sum-sin", "--n", "10,100,1000", "--methods", "forward,reverse",
                 "--no-memory", "--plot", str(tmp_path / "cost.png"))
    assert result.exit_code == 0, result.output
    assert "growth exponent" in result.stdout and "forward" in result.stdout
    data = json.loads(run("cost", "tanh-layer", "--n", "20", "--m", "1,5",
                          "--methods", "reverse", "--json").stdout)
    assert data["meta"]["axis"] == "m"
    assert [r["evaluations"] for r in data["records"]] == [1, 1]
    assert [r["backward_passes"] for r in data["records"]] == [1, 5]


def test_cost_of_n_scalar_arguments(run):
    data = json.loads(run("cost", "sum-sin", "--n", "10", "--arguments", "scalars",
                          "--methods", "forward,reverse", "--no-memory", "--json").stdout)
    by = {r["method"]: r for r in data["records"]}
    assert (by["reverse"]["evaluations"], by["reverse"]["backward_passes"]) == (1, 1)
    assert (by["forward"]["evaluations"], by["forward"]["backward_passes"]) == (10, None)
    result = run("cost", "sum-sin", "--arguments", "matrix")
    assert result.exit_code == 2 and "'matrix' is not one of" in result.output


def test_compare_counts_one_pass_of_reverse_mode_for_all_variables(run):
    result = run("compare", "x*y*z + sin(x)", "--at", "x=1,y=2,z=3", "--dtypes", "float64")
    assert result.exit_code == 0, result.output
    header, _, *rows = result.stdout.splitlines()[1:]
    assert "f evals" in header and "backward" in header
    reverse = [row.split() for row in rows if row.startswith("reverse")]
    forward = [row.split() for row in rows if row.startswith("forward")]
    assert [r[2] for r in reverse] == ["x", "y", "z"]
    # columns: method dtype d/d derivative abs rel evals backward time unit
    assert {(r[6], r[7]) for r in reverse} == {("1", "1")}
    assert {(r[6], r[7]) for r in forward} == {("3", "-")}
    data = json.loads(run("compare", "x*y*z + sin(x)", "--at", "x=1,y=2,z=3",
                          "--dtypes", "float64", "--json").stdout)
    for r in data["records"]:
        counts = (r["evaluations"], r["backward_passes"])
        assert counts == {"forward": (3, None), "reverse": (1, 1), "symbolic": (3, None),
                          "numeric": (9, None)}[r["method"]]


@pytest.mark.slow
def test_tour_quick_writes_its_plots(run, tmp_path):
    out = tmp_path / "tour"
    result = run("tour", "--quick", "--out", str(out))
    assert result.exit_code == 0, result.output
    for name in ("accuracy", "steps", "blowup-logistic", "blowup-nested-sin", "cost-sum-sin",
                 "cost-tanh-layer"):
        for suffix in (".png", ".svg", ".csv", ".json"):
            assert (out / (name + suffix)).stat().st_size > 500, name + suffix
    assert (out / "table1.json").exists()
    assert "Table 1" in result.stdout and "Cost of the Jacobian" in result.stdout
    assert f"to {out}" in result.stderr


@pytest.mark.slow
def test_full_tour_in_default_folder(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("tour")
    assert result.exit_code == 0, result.output
    assert len(list((tmp_path / "difflab-tour").glob("*.png"))) == 6
    assert "exponent of time / time of f: forward" in result.stdout


def test_tour_into_an_unwritable_place_is_a_clear_usage_error(run, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    result = run("tour", "--quick", "--out", str(blocker / "tour"))
    assert result.exit_code == 2
    assert "cannot write into" in result.output and "--out" in result.output
    assert "Traceback" not in result.output


def test_compare_says_overflow_not_domain(run):
    result = run("compare", "1e308*x*x", "--at", "x=2")
    assert result.exit_code == 0
    assert "overflow in float64" in result.output and "4.0e+308" in result.output
    assert "outside the domain" not in result.output
    # a real domain error still says domain
    result = run("compare", "log(x)", "--at", "x=-1")
    assert "outside the domain" in result.output and "overflow" not in result.output
