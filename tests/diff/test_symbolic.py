"""Symbolic: tracing, the static-graph error, sizes with and without CSE, compile cache."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy

import difflab as dl
from difflab import functions
from difflab.diff import SymbolicTraceError, derivative, differentiators, grad, sympy_functions
from difflab.diff.symbolic import SymbolArray, expression_size, trace


def test_trace_scalar_and_vector():
    symbols, expr = trace(lambda x: dl.sin(x) * dl.exp(x) + x**2, 0.5)
    x = symbols[0]
    assert sympy.simplify(expr - (sympy.sin(x) * sympy.exp(x) + x**2)) == 0
    symbols, expr = trace(lambda v: dl.sum(v * v), np.ones(3))
    assert isinstance(symbols[0], SymbolArray) and symbols[0].shape == (3,)
    assert expr == sum(s**2 for s in symbols[0])
    symbols, expr = trace(lambda a, b: dl.atan2(a, b), n_inputs=2)
    assert expr == sympy.atan2(*symbols)


def test_rule_table_maps_to_sympy():
    x = sympy.Symbol("x", real=True)
    assert dl.asin(x) == sympy.asin(x)
    assert dl.maximum(x, 1.0) == sympy.Max(x, 1.0)
    assert dl.erf(x) == sympy.erf(x)
    assert isinstance(dl.where(x > 0, x, -x), sympy.Piecewise)
    assert functions.heaviside(x, 0.5) == sympy.Heaviside(x, 0.5)


def test_control_flow_on_the_input_is_the_static_graph_lesson():
    def f(x):
        if x > 0:
            return x**2
        return -x

    with pytest.raises(SymbolicTraceError, match="static") as info:
        derivative(f, method="symbolic")(1.0)
    assert "dynamic" in str(info.value) and "dl.where" in str(info.value)
    assert derivative(f, method="reverse")(1.0) == 2.0  # a dynamic graph has no problem
    # the same function written as data traces fine
    assert derivative(lambda x: dl.where(x > 0, x**2, -x), method="symbolic")(1.0) == 2.0


def test_operation_sympy_cannot_represent_is_named():
    def f(x):
        return math.exp(x) * 2.0

    with pytest.raises(SymbolicTraceError, match=r"math\.exp"):
        derivative(f, method="symbolic")(1.0)


def test_expression_size_with_and_without_cse():
    def f(x):
        for _ in range(4):
            x = dl.sin(x) * dl.cos(x) + x
        return x

    d = differentiators.Symbolic().expressions(f, 0.3)
    plain, cse = expression_size(d.derivative), expression_size(d.derivative, cse=True)
    assert plain["ops"] > cse["ops"] > 0 and plain["tree_size"] > cse["tree_size"]
    assert d.size()["derivative"] == plain
    assert "\\sin" in d._repr_latex_()
    g, cost = grad(f, method="symbolic")(0.3, return_cost=True)
    assert cost.expression_ops == plain["ops"] and cost.expression_ops_cse == cse["ops"]


def test_compiled_derivative_is_cached_per_shape_and_constants():
    sym = differentiators.Symbolic()

    def f(x, c):
        return dl.sum(dl.exp(x) * c)

    _, first = sym.grad(f)(np.ones(3), 2.0, return_cost=True)
    _, again = sym.grad(f)(np.zeros(3), 2.0, return_cost=True)
    _, other = sym.grad(f)(np.zeros(3), 5.0, return_cost=True)
    assert first.evaluations == 1 and again.evaluations == 0 and other.evaluations == 1
    np.testing.assert_allclose(sym.grad(f)(np.zeros(3), 5.0), 5.0 * np.ones(3))


def test_simplify_option_and_matrix_functions():
    sym = differentiators.Symbolic(simplify=True, cse=False)
    w = np.array([[1.0, 2.0], [0.5, -1.0]])
    g = sym.grad(lambda x: dl.sum(dl.tanh(w @ x)))(np.array([0.1, 0.2]))
    expected = w.T @ (1 - np.tanh(w @ np.array([0.1, 0.2])) ** 2)
    np.testing.assert_allclose(g, expected, rtol=1e-14)


def test_deep_nesting_is_a_clear_error_with_the_depth():
    def nested(x):
        for _ in range(2000):
            x = dl.sin(x)
        return x

    with pytest.raises(RecursionError, match=r"nested [1-9]\d* operations deep.*forward or rev"):
        dl.derivative(nested, method="symbolic")(0.3)


#: f of a float test, and a point where the test is true for one entry.
FLOAT_TESTS = {
    "isnan": (lambda x: dl.where(dl.isnan(x), 0.0, x * x), [1.0, math.nan, 3.0]),
    "isinf": (lambda x: dl.where(dl.isinf(x), 0.0, x * x), [1.0, -math.inf, 3.0]),
    "isfinite": (lambda x: dl.where(dl.isfinite(x), x * x, 0.0), [1.0, math.inf, 3.0]),
}


@pytest.mark.parametrize("name", FLOAT_TESTS)
def test_float_tests_of_a_symbol_are_tested_on_the_values(name):
    """A symbol is real for sympy, finite by its assumptions, but it stands for the value
    the derivative is taken at, which may be nan or ±inf: ``isnan(x)`` of a symbol stays a
    test (sympy decided it False, so ``where(isnan(x), 0, x²)`` was x² everywhere: its
    value nan at a nan, and every entry of the gradient poisoned to nan).  Symbolic now
    gives forward mode's derivative (and PyTorch's forward AD): 0 where the constant is
    picked; reverse mode's 0 · 2x = nan there is PyTorch's backward too."""
    make, point = FLOAT_TESTS[name]
    s = sympy.Symbol("s", real=True)
    test = getattr(dl, name)(s).item()
    assert isinstance(test, getattr(sympy_functions, name)), test   # (a test, not a truth)
    assert getattr(dl, name)(sympy.Float(2.0)).item() is sympy.sympify(name == "isfinite")

    def f(x):
        return dl.sum(make(x))

    x = np.array(point)
    expected = np.where(np.isfinite(x), 2 * x, 0.0)
    np.testing.assert_array_equal(grad(f, method="symbolic")(x), expected)
    np.testing.assert_array_equal(grad(f, method="forward")(x), expected)
    np.testing.assert_array_equal(dl.func.jacfwd(f)(dl.tensor(x)).numpy(), expected)
    found = differentiators.Symbolic().expressions(f, x)   # (it was Σ x², nan at the nan)
    assert found.function[0].has(getattr(sympy_functions, name)), found.function
    reverse = grad(f, method="reverse")(x)
    assert np.isnan(reverse[1]) and reverse[[0, 2]].tolist() == [2.0, 6.0]
