"""`difflab compare` on expressions that used to hang or crash it."""

from __future__ import annotations

import subprocess
import sys

import mpmath
import pytest

from difflab.compare.accuracy import reference
from difflab.exprparse import parse


@pytest.mark.parametrize("text", ["x**9**9**9", "x+9**9**9**9", "pow(x, 9**9**9)"])
def test_tower_of_powers_is_a_clear_error_at_once(text):
    # These ran for over 5 minutes (the mpmath reference built a number of 10**369000000
    # bits); a separate process with a time limit keeps a regression from hanging the suite.
    done = subprocess.run([sys.executable, "-m", "difflab.cli", "compare", text, "--at", "x=2"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "too large for a floating-point number" in done.stderr
    assert "Traceback" not in done.stderr


def test_mpmath_reference_guards_huge_powers():
    # The high-precision reference overflows to inf as floats do, instead of hanging.
    assert reference("x**(2**30)", {"x": 2.0}, 0)["f"] != reference("x", {"x": 2.0}, 0)["f"]
    assert mpmath.isnan(reference("x**(2**30)", {"x": 2.0}, 0)["f"])  # no finite value
    assert reference("x**(-(2**30))", {"x": 2.0}, 0)["f"] == 0  # underflows to 0: defined
    value = parse("x**y").evaluate({"x": mpmath.mpf(2), "y": mpmath.mpf(9) ** 9 ** 9},
                                   "mpmath")
    assert value == mpmath.inf
    assert reference("x**3", {"x": 2.0})["x"] == 12  # ordinary powers are untouched


def test_python_float_overflow_names_the_power():
    with pytest.raises(OverflowError, match=r"10\*\*400 is too large"):
        parse("x + 10.0**400").evaluate({"x": 1.0})


@pytest.mark.parametrize("text, at", [("sqrt(x)", "x=0"), ("x**0.5", "x=0"),
                                      ("acos(x)", "x=1"), ("asin(x)", "x=-1")])
def test_domain_edge_gives_a_table_not_a_traceback(text, at):
    done = subprocess.run([sys.executable, "-m", "difflab.cli", "compare", text, "--at", at],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "reference (mpmath, 50 digits): d/dx = nan" in done.stdout
    assert "Traceback" not in done.stderr
