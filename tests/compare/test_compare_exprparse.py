"""The safe expression parser: math in, anything else out with a clear message."""

from __future__ import annotations

import math
import time

import mpmath
import numpy as np
import pytest
import sympy

import difflab
from difflab.exprparse import FUNCTIONS, ExpressionError, parse, parse_assignments


def test_evaluates_math_with_variables_in_order_of_appearance():
    e = parse("x*sin(y) + 1")
    assert e.variables == ("x", "y")
    assert e.functions == ("sin",)
    assert e(2.0, 0.5) == pytest.approx(2.0 * math.sin(0.5) + 1)
    assert e.evaluate({"x": 2.0, "y": 0.5}) == pytest.approx(2.0 * math.sin(0.5) + 1)


@pytest.mark.parametrize("text, value", [
    ("2**3 - 4/8", 7.5),
    ("-x + +x", 0.0),
    ("pi + e", math.pi + math.e),
    ("pow(x, 2) + max(x, 3) + min(x, 3)", 4.0 + 3.0 + 2.0),
    ("sigmoid(0) + relu(-x) + abs(-x)", 0.5 + 0.0 + 2.0),
    ("atan2(1, 1)", math.pi / 4),
    ("log1p(expm1(x))", 2.0),
])
def test_known_functions_and_operators(text, value):
    assert float(parse(text).evaluate({"x": 2.0})) == pytest.approx(value)


def test_every_listed_function_is_callable_in_both_namespaces():
    from difflab.ops import registry

    for name, (arity, _) in FUNCTIONS.items():
        rule = getattr(registry.PRIMITIVES.get(name), "rule", None)
        low, high = getattr(rule, "domain", (0.5, 0.5))
        point = 0.5 if low <= 0.5 <= high else (low + high) / 2  # (acosh: x > 1)
        args = ", ".join([repr(point)] * arity)
        e = parse(f"{name}({args})")
        low = float(e.evaluate({}))
        with mpmath.workdps(30):
            high = float(e.evaluate({}, namespace="mpmath"))
        assert low == pytest.approx(high, rel=1e-12, abs=1e-15), name


def test_same_expression_runs_on_tensors_and_sympy():
    e = parse("x*exp(-x**2)")
    x = difflab.tensor(0.7, dtype=difflab.float64, requires_grad=True)
    e(x).backward()
    assert float(x.grad) == pytest.approx(math.exp(-0.49) * (1 - 2 * 0.49))
    s = sympy.Symbol("x")
    assert sympy.simplify(e(s) - s * sympy.exp(-s**2)) == 0


def test_mpmath_reads_decimal_literals_exactly():
    with mpmath.workdps(50):
        assert parse("0.1").evaluate({}, namespace="mpmath") == mpmath.mpf("0.1")
        assert parse("0.1").evaluate({}, namespace="mpmath") != mpmath.mpf(0.1)


def test_rejects_code_injection_without_running_it(monkeypatch):
    called = []
    monkeypatch.setattr("builtins.__import__", lambda *a, **k: called.append(a))
    with pytest.raises(ExpressionError) as info:
        parse("__import__('os').system('ls')")
    monkeypatch.undo()
    assert not called
    message = str(info.value)
    assert "attribute access ('.system')" in message
    assert info.value.column == 17  # the dot before "system"
    assert message.splitlines()[-1].index("^") == 4 + 16


@pytest.mark.parametrize("text, fragment", [
    ("x.real", "attribute access"),
    ("x[0]", "subscripts"),
    ("lambda: 1", "lambda"),
    ("[x for x in y]", "comprehensions"),
    ("'rm -rf'", "str literals"),
    ("x if x else 1", "conditional"),
    ("x == 1", "comparisons"),
    ("x and y", "boolean"),
    ("1j * x", "complex numbers"),
    ("True + x", "the constant True"),
    ("_secret + 1", "names starting with '_'"),
    ("sin", "is a function: call it"),
    ("sin(x=1)", "keyword arguments"),
    ("sin(x, y)", "sin takes 1 argument, got 2"),
    ("x^2", "'^' is not a power here"),
    ("x // 2", "floor division"),
    ("(sin(x))(2)", "only calls of known functions"),
])
def test_rejects_everything_but_math(text, fragment):
    with pytest.raises(ExpressionError, match=None) as info:
        parse(text)
    assert fragment in str(info.value)


def test_unknown_function_lists_the_known_ones():
    with pytest.raises(ExpressionError) as info:
        parse("2 * foo(x)")
    message = str(info.value)
    assert "unknown function 'foo'" in message
    assert "sin" in message and "log1p" in message and "sigmoid" in message
    assert info.value.column == 5


def test_syntax_error_shows_the_position():
    with pytest.raises(ExpressionError) as info:
        parse("sin(x")
    message = str(info.value)
    assert message.startswith("syntax error")
    assert info.value.column == 4
    lines = message.splitlines()
    assert lines[-2].strip() == "sin(x"
    assert lines[-1].index("^") == lines[-2].index("(")


def test_variable_without_value_is_named():
    with pytest.raises(ExpressionError, match="variable 'y' has no value"):
        parse("x + y").evaluate({"x": 1.0})


def test_huge_powers_fail_fast_instead_of_hanging():
    start = time.perf_counter()
    with pytest.raises(OverflowError):
        parse("9**9**9**9").evaluate({})
    assert time.perf_counter() - start < 1.0


def test_empty_and_overlong_input():
    with pytest.raises(ExpressionError, match="empty"):
        parse("   ")
    with pytest.raises(ExpressionError, match="longer than"):
        parse("x+" * 6000 + "x")


def test_parse_assignments():
    assert parse_assignments("x=1.3, y=-2") == {"x": 1.3, "y": -2.0}
    assert parse_assignments({"x": np.float32(1.5)}) == {"x": 1.5}
    with pytest.raises(ExpressionError, match="must be a number, got 'abc'"):
        parse_assignments("x=abc")
    with pytest.raises(ExpressionError, match="expected name=number"):
        parse_assignments("1.3")
    with pytest.raises(ExpressionError, match="finite"):
        parse_assignments("x=inf")
