"""Numeric: stencils, the step from the error analysis, domain edges, rounding warnings."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

import difflab as dl
from difflab.diff import NumericalWarning, derivative, differentiators
from difflab.diff.numeric import EPS, optimal_step, stencil


def test_stencils_are_the_textbook_ones():
    assert stencil("central", 2) == ([-1, 1], [-0.5, 0.5])
    assert stencil("forward", 1) == ([0, 1], [-1.0, 1.0])
    assert stencil("backward", 1) == ([0, -1], [1.0, -1.0])
    offsets, weights = stencil("central", 4)
    assert offsets == [-2, -1, 1, 2]
    np.testing.assert_allclose(weights, [1 / 12, -2 / 3, 2 / 3, -1 / 12])
    with pytest.raises(ValueError, match="even order"):
        stencil("central", 3)


def test_optimal_steps_follow_the_error_analysis():
    assert optimal_step(1) == pytest.approx(EPS**0.5)
    assert optimal_step(2) == pytest.approx(EPS ** (1 / 3))


@pytest.mark.parametrize("scheme, order, tol", [
    ("forward", 1, 1e-7), ("backward", 1, 1e-7), ("forward", 2, 1e-9), ("central", 2, 1e-10),
    ("central", 4, 1e-12), ("central", 6, 1e-12),
])
def test_error_shrinks_with_order(scheme, order, tol):
    d, cost = derivative(dl.exp, method="numeric", scheme=scheme, order=order)(
        1.0, return_cost=True)
    assert abs(d - np.e) / np.e < tol
    assert cost.evaluations == len(stencil(scheme, order)[0]) + 1 - (0 in stencil(scheme,
                                                                                   order)[0])


def test_step_scales_with_x():
    _, cost = derivative(dl.sin, method="numeric")(1e4, return_cost=True)
    assert cost.step == pytest.approx(1e4 * optimal_step(2), rel=1e-6)


def test_domain_edge_adapts_instead_of_nan():
    # scipy.differentiate's default first step (0.5) reaches x = 0 for x^-1/2 at 0.5
    for scheme in ("central", "richardson"):
        d, cost = derivative(lambda x: x**-0.5, method="numeric", scheme=scheme, step=0.5)(
            0.5, return_cost=True)
        assert np.isfinite(d) and cost.notes
        assert abs(d - (-0.5 * 0.5**-1.5)) < 0.1
    d, cost = derivative(dl.sqrt, method="numeric")(0.0, return_cost=True)
    assert np.isfinite(d) and "forward" in cost.notes[0]  # one-sided, into the domain


def test_step_far_too_small_warns():
    with pytest.warns(NumericalWarning, match="far too small"):
        derivative(dl.sin, method="numeric", step=1e-15)(1.0)


def test_complex_step_needs_complex_arithmetic():
    d = derivative(lambda x: dl.exp(x) / dl.sqrt(dl.sin(x) ** 3 + dl.cos(x) ** 3),
                   method="numeric", scheme="complex")(1.5)
    # Squire & Trapp's example function; reference from mpmath at 50 digits
    with mpmath.workdps(50):
        exact = float(mpmath.diff(
            lambda t: mpmath.exp(t) / mpmath.sqrt(mpmath.sin(t) ** 3 + mpmath.cos(t) ** 3),
            mpmath.mpf(1.5)))
    assert d == pytest.approx(exact, rel=2e-15)
    with pytest.raises(TypeError, match="complex"):
        derivative(lambda x: np.real(x) * 2.0, method="numeric", scheme="complex")(1.0)


def test_bad_options():
    with pytest.raises(ValueError, match="unknown scheme"):
        differentiators.Numeric("sideways")
    with pytest.raises(ValueError, match="positive"):
        differentiators.Numeric(step=-1.0)


@pytest.mark.parametrize("scheme", ["central", "forward", "richardson"])
def test_a_step_below_float_spacing_is_a_clear_error(scheme):
    method = differentiators.Numeric(scheme=scheme, step=1e-17)
    with pytest.raises(ValueError, match="below the spacing of floating-point numbers"):
        derivative(np.sin, method=method)(1.0)


@pytest.mark.parametrize("outer", ["reverse", "forward"])
def test_inside_another_methods_derivative_is_a_clear_error(outer):
    # (it failed deep inside with "'method' object cannot be interpreted as an integer")
    def inner(v):
        return dl.grad(lambda y: (y * y * v).sum(), method="numeric")(v).sum()

    with pytest.raises(TypeError, match="cannot run inside another method's derivative"):
        dl.grad(inner, method=outer)(dl.tensor([1.0, 2.0]))
    # outside, it differentiates the other methods (and itself)
    for method in ("reverse", "numeric"):
        def outer(v, method=method):
            return dl.grad(lambda y: (y * y * v).sum(), method=method)(v).sum()

        g = dl.grad(outer, method="numeric")(dl.tensor([1.0, 2.0]))
        np.testing.assert_allclose(g, [4.0, 8.0], rtol=1e-5)
