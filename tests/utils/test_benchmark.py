"""torch.utils.benchmark under ``import difflab as torch``: Timer's three ways to measure,
Measurement's summary and repr, Compare's table.  No timing value is asserted beyond
sanity (positive, finite): the statistics are checked on made-up times instead."""

from __future__ import annotations

import math
import pickle

import pytest

import difflab as dl
from difflab.utils.benchmark import Compare, Measurement, TaskSpec, Timer, select_unit


def sane(m: Measurement) -> bool:
    return all(t > 0 and math.isfinite(t) for t in m.times) and m.median > 0


def test_timeit_runs_the_statement_number_times_in_one_block():
    calls = []
    m = Timer("calls.append(1)", globals={"calls": calls}).timeit(300)
    assert len(calls) == 300 + 3  # and the warm-up block of number // 100
    assert m.number_per_run == 300 and len(m.raw_times) == 1 and sane(m)
    assert m.times == [m.raw_times[0] / 300]


def test_setup_and_globals_and_a_callable_statement():
    x = dl.ones(4)
    m = Timer("y = x * k", setup="k = 2.0", globals={"x": x}).timeit(10)
    assert sane(m) and m.setup == "k = 2.0"
    m = Timer(lambda: x.sum()).timeit(10)
    assert sane(m) and m.stmt == "<lambda>"


def test_blocked_autorange_spends_at_least_min_run_time():
    seen = []
    m = Timer("sum(range(20))").blocked_autorange(
        callback=lambda number, seconds: seen.append((number, seconds)), min_run_time=0.02)
    assert sane(m) and len(seen) == len(m.raw_times) >= 1
    assert sum(m.raw_times) >= 0.02
    assert all(number == m.number_per_run for number, _ in seen)


def test_adaptive_autorange_takes_at_least_four_blocks_and_stops_at_the_maximum():
    m = Timer("sum(range(20))").adaptive_autorange(threshold=0.0, max_run_time=0.05)
    # threshold 0 is never met: it stops past max_run_time
    assert sane(m) and sum(m.raw_times) > 0.05
    m = Timer("sum(range(20))").adaptive_autorange(threshold=10.0)  # met at once
    assert sane(m) and len(m.times) >= 4


def test_num_threads_is_set_while_timing_and_put_back():
    before = dl.get_num_threads()
    seen = []
    Timer("seen.append(get())", globals={"seen": seen, "get": dl.get_num_threads},
          num_threads=3).timeit(2)
    assert set(seen) == {3} and dl.get_num_threads() == before
    assert Timer("pass", num_threads=2).timeit(5).num_threads == 2


def test_measurement_statistics_on_known_times():
    m = Measurement(10, [40e-6, 10e-6, 30e-6, 20e-6], TaskSpec("f(x)"))
    assert m.times == pytest.approx([4e-6, 1e-6, 3e-6, 2e-6])
    assert (m.median, m.mean, m.iqr) == pytest.approx((2.5e-6, 2.5e-6, 1.5e-6))
    assert m.has_warnings and not m.meets_confidence()
    steady = Measurement(1, [1.00, 1.01, 0.99, 1.00, 1.00], TaskSpec("f(x)"))
    assert steady.meets_confidence() and not steady.has_warnings
    assert 1 <= steady.significant_figures <= 4
    with pytest.raises(ValueError, match="empty"):
        Measurement(1, [], TaskSpec("f()"))


def test_measurement_repr_as_pytorch_writes_it():
    one = Measurement(100, [379.29e-6 * 100], TaskSpec("dot(x, x)", setup="from m import dot"))
    lines = repr(one).splitlines()
    assert lines[0].startswith("<difflab.utils.benchmark.Measurement object at 0x")
    assert lines[1:] == ["dot(x, x)", "setup: from m import dot", "  379.29 us",
                         "  1 measurement, 100 runs , 1 thread"]
    many = Measurement(10, [1e-3, 1.01e-3, 0.99e-3, 1e-3], TaskSpec(
        "x + y", label="add", sub_label="4x8", description="broadcast", num_threads=4))
    lines = repr(Measurement(1, [1.0, 2.0], TaskSpec("f()\ng()", sub_label="s"))).splitlines()
    assert lines[1:] == ["stmt: (s)", "  f()", "  g()", "", "  Median: 1.50 s",
                         "  2 measurements, 1 runs per measurement, 1 thread"]
    assert repr(many).splitlines()[1:] == [
        "add: 4x8", "broadcast", "  Median: 100.00 us", "  IQR:    0.50 us (99.75 to 100.25)",
        "  4 measurements, 10 runs per measurement, 4 threads"]


def test_select_unit():
    assert [select_unit(t)[0] for t in (5e-10, 5e-7, 5e-4, 5.0, 0.0)] == [
        "ns", "ns", "us", "s", "s"]


def test_measurements_pickle_and_merge():
    m = Timer("pass", label="noop").timeit(5)
    back = pickle.loads(pickle.dumps(m))
    assert back.times == m.times and back.title == "noop"
    merged = Measurement.merge([m, back])
    assert len(merged) == 1 and merged[0].times == m.times + back.times


def test_compare_groups_by_label_rows_by_sub_label_and_threads_columns_by_description():
    def m(seconds, label, row, column, threads=1):
        spec = TaskSpec("f()", label=label, sub_label=row, description=column,
                        num_threads=threads)
        return Measurement(1, [seconds], spec)

    results = [m(2e-6, "dot", "n=1", "mul/sum"), m(4e-6, "dot", "n=1", "bmm"),
               m(3e-6, "dot", "n=1", "mul/sum", 2), m(1e-3, "other", "n=9", "x")]
    text = str(Compare(results))
    dot, other = text.split("Times are in microseconds (us).")[:2]
    assert "dot" in dot.splitlines()[0] and "other" in other
    assert "1 threads:" in dot and "2 threads:" in dot
    row = next(line for line in dot.splitlines() if line.strip().startswith("n=1"))
    assert row.split("|")[1].strip() == "2.0" and row.split("|")[2].strip() == "4.0"
    assert "Times are in milliseconds (ms)." in text  # the other table's unit
    compare = Compare(results)
    compare.colorize()
    assert "\033[32m2.0\033[0m" in str(compare)
    with pytest.raises(TypeError, match="Measurement"):
        Compare([1.5])


def test_compare_lays_out_a_table_as_pytorch_does():
    def m(seconds, row, column, threads):
        return Measurement(1, [seconds], TaskSpec("f()", label="Batched dot", sub_label=row,
                                                  description=column, num_threads=threads))

    results = [m(5.9e-6, "[1, 1]", "mul/sum", 1), m(11.2e-6, "[1, 1]", "bmm", 1),
               m(6.4e-6, "[1, 64]", "mul/sum", 1), m(11.4e-6, "[1, 64]", "bmm", 1),
               m(6.0e-6, "[1, 1]", "mul/sum", 4), m(11.5e-6, "[1, 1]", "bmm", 4)]
    assert str(Compare(results)).splitlines() == [  # PyTorch 2's, trailing spaces cut
        "[--------- Batched dot ----------]",
        "               |  mul/sum  |  bmm",
        "1 threads: -----------------------",
        "      [1, 1]   |    5.9    |  11.2",
        "      [1, 64]  |    6.4    |  11.4",
        "4 threads: -----------------------",
        "      [1, 1]   |    6.0    |  11.5",
        "",
        "Times are in microseconds (us)."]


def test_compare_trims_figures_and_highlights_unsteady_cells():
    spec = TaskSpec("f()", label="t", sub_label="r", description="c")
    unsteady = Measurement(1, [1e-6, 2e-6, 3e-6, 9e-6], spec)
    compare = Compare([unsteady])
    compare.trim_significant_figures()
    compare.highlight_warnings()
    row = next(line for line in str(compare).splitlines() if line.strip().startswith("r "))
    # IQR 4.5 - 1.75 us of a median 2.5 us: 110%; one figure supported
    assert row.split("|")[1].strip() == "2 (! 110%)"


def test_refusals_are_clear():
    with pytest.raises(ValueError, match="Python statements"):
        Timer("x", language="c++")
    with pytest.raises(ValueError, match="num_threads"):
        Timer("x", num_threads=0)
    with pytest.raises(NotImplementedError, match="Valgrind"):
        Timer("pass").collect_callgrind()


def test_paths_as_pytorch():
    assert dl.utils.benchmark.Timer is Timer
    from difflab.utils import benchmark

    assert benchmark.Compare is Compare
