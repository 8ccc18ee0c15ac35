r"""Numeric differentiation: finite differences, Richardson extrapolation, complex step.

Finite differences
------------------
A stencil of offsets s₀, s₁, ... and weights w₀, w₁, ... approximates

    f'(x) ≈ (1/h) Σⱼ wⱼ f(x + sⱼ h)

with the weights chosen so that Taylor's expansion of the sum matches f'(x)
up to h^p (the *order*).  The stencils, the step rule and the difference
kernel live in :mod:`difflab.finite_differences`, the one implementation that
gradcheck, ``nn.utils.compute_gradients`` and the grading checks share.

Choosing the step
-----------------
Two errors pull in opposite directions.  Truncation: the neglected Taylor
terms, about C·h^p.  Rounding: each f(x + sh) carries a relative error of
about ε (machine epsilon of the precision f computes in), and dividing by h
magnifies it to about ε·|f|/h.  Their sum is smallest for

    h ≈ ε^(1/(p+1)) · max(|x|, 1)

and then the total error is about ε^(p/(p+1)).  In float64 (ε = 2.2e-16)
that is h ≈ 1.5e-8 for forward differences and 6e-6 for central ones; a
function that computes in float32 (ε = 1.2e-7; its value f(x) says so) needs
h ≈ 3.5e-4 and 4.9e-3.  A step much smaller than that is swamped by
rounding: a :class:`NumericalWarning` says so.

Richardson extrapolation
------------------------
The central difference D(h) = f'(x) + c₂h² + c₄h⁴ + … has an error that is
a series in h².  Evaluated at h, h/2, h/4, ..., the combination

    D'(h) = (4 D(h/2) - D(h)) / 3

cancels the h² term; repeating cancels h⁴, h⁶, ... (Neville's tableau).
Differences between neighbouring entries of the tableau estimate the error;
the entry with the smallest estimate is returned, with its estimate in
``cost.error_estimate``.  Seven steps (14 evaluations) reach about 1e-13
for well-behaved functions.

Adaptive step
-------------
No single step suits every function: the logistic map's 7th iterate varies
on the scale 2⁻⁷, where Richardson's fixed first step 1/8 is far too large.
``scheme="adaptive"`` walks down the steps ¼, ⅛, ... (times max(|x|, 1)),
extrapolating as it goes, and stops when its error estimate says that
smaller steps cannot help (``Numeric._adaptive`` has the details).  Typical cost: 11
to 15 evaluations; the logistic maps take 23 to 35.

Complex step
------------
For f analytic and real on the real axis,

    f(x + ih) = f(x) + ih f'(x) - h² f''(x)/2 - …,   so  f'(x) ≈ Im f(x + ih) / h

with no subtraction, hence no cancellation: h = 1e-200 gives f'(x) to
machine precision in one evaluation.  It needs f to accept complex input
(difflab's math functions do, through NumPy) and to be analytic: ``abs``,
``maximum``, comparisons break it.

Domain edges
------------
Where a stencil point falls outside f's domain (√x at x = 1e-9 with a
step of 1e-5 to the left), the differentiator switches that coordinate to
a one-sided stencil pointing into the domain, and shrinks the step if it
has to, instead of returning NaN; ``cost.notes`` records it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from difflab import backend
from difflab.diff.interface import (
    Cost,
    Differentiator,
    NumericalWarning,
    check_output,
    is_plain,
    require_scalar,
    with_arg,
)
from difflab.finite_differences import (
    EPS,
    difference,
    epsilon,
    optimal_step,
    representable_step,
    stencil,
)
from difflab.ops.logic import FrozenStops
from difflab.tensor import Tensor

__all__ = ["Numeric", "EPS", "optimal_step", "stencil"]
SCHEMES = ("central", "forward", "backward", "richardson", "adaptive", "complex")
COMPLEX_STEP = 1e-200
# The adaptive scheme's settings, tuned on the accuracy suite of the tests against
# numdifftools (benchmarks/bench_numeric.py prints the comparison).
ADAPTIVE_FIRST_STEP = 0.25  # the largest step, relative to max(|x|, 1)
ADAPTIVE_RATIO = 2.0  # each step is the previous one divided by this
ADAPTIVE_COLUMNS = 5  # Richardson columns kept: h², h⁴, ..., h¹⁰ removed
ADAPTIVE_ROUNDING = 10.0  # stop once this many times ε·|f|/h exceeds the best error estimate
ADAPTIVE_PATIENCE = 1  # steps without improvement before a converged walk stops
ADAPTIVE_LEVELS = 30  # the most steps the walk takes


def _a_point(x: Any) -> Any:
    """The point to take differences at: numbers, refused if an enclosing derivative
    tracks it (finite differences compute on values, so they would cut that derivative
    off: the outer method would see a constant where the inner derivative depends on x)."""
    if isinstance(x, Tensor) and x.requires_grad or not (is_plain(x) or isinstance(x, Tensor)):
        raise TypeError(
            f"method='numeric' cannot run inside another method's derivative: its argument "
            f"is a {type(x).__name__} that the enclosing derivative tracks, and finite "
            f"differences see values only. Put the numeric derivative outside "
            f"(dl.grad(..., method='numeric') around the other), or use method='reverse', "
            f"'forward' or 'symbolic' inside")
    return x.array if isinstance(x, Tensor) else x


class Numeric(Differentiator):
    """Finite differences, Richardson extrapolation, an adaptive step, or the complex step.

    Parameters
    ----------
    scheme : "central" (default), "forward", "backward", "richardson", "adaptive" or
        "complex".
    order : accuracy order p of the difference (central: 2, 4, 6, ...; one-sided:
        1, 2, ...).  Default 2 for central, 1 for one-sided.
    step : the step h, relative to max(|x|, 1).  Default: from the error analysis,
        ε^(1/(p+1)) with ε the machine epsilon of the dtype f returns (Richardson:
        ``2**-3``, adaptive: ``2**-2``, the largest of their steps).
    levels : Richardson: how many steps h, h/2, h/4, ... (2 evaluations each);
        adaptive: the most steps it may take (default 30).
    """

    name = "numeric"

    def __init__(self, scheme: str = "central", order: int | None = None,
                 step: float | None = None, levels: int | None = None) -> None:
        if scheme not in SCHEMES:
            raise ValueError(f"unknown scheme {scheme!r}; choose one of {', '.join(SCHEMES)}")
        if order is None:
            order = 2 if scheme in ("central", "richardson", "adaptive") else 1
        if scheme in ("forward", "backward", "central"):
            stencil(scheme, order)  # validates the order
        if step is not None and not step > 0:
            raise ValueError(f"step must be positive, got {step}")
        if levels is None:
            levels = ADAPTIVE_LEVELS if scheme == "adaptive" else 7
        if levels < 2:
            raise ValueError("Richardson extrapolation needs levels >= 2")
        self.scheme, self.order, self.step, self.levels = scheme, order, step, levels

    # -- helpers ------------------------------------------------------------------------
    @staticmethod
    def _evaluate(f: Callable, args: list, i: int, x: Any, cost: Cost,
                  stops: FrozenStops) -> Any:
        """f at the point ``x`` for argument i, as an array.

        A plain array point (real, or complex for the complex step) reaches f as a
        constant tensor, which needs no grad: f sees a tensor by every method, so
        ``x.exp()`` and ``x.detach()`` work here as they do in reverse mode.
        ``stops`` holds f's stop-gradients at their values at the unperturbed point, the
        first point one derivative evaluates f at (:class:`~difflab.ops.logic.FrozenStops`).
        """
        out = stops.evaluate(f, *with_arg(args, i, Tensor._wrap(x) if is_plain(x) else x))
        check_output(out, "numeric")
        cost.evaluations += 1
        if isinstance(out, Tensor):
            out = out.array
        xp = backend.array_module(out)
        return xp.asarray(out)

    @staticmethod
    def _precision(value: Any) -> Any:
        """The dtype f computes in, read from its value: it sets ε, hence the step."""
        dtype = getattr(value, "dtype", np.dtype(np.float64))
        return dtype if dtype.kind == "f" else np.dtype(np.float64)

    # -- first derivatives ------------------------------------------------------------
    def _jacobian(self, f: Callable, args: list, i: int, cost: Cost,
                  require_scalar_: bool, stops: FrozenStops | None = None) -> tuple[Any, Any]:
        """f(args) and ∂f/∂args[i], a column per coordinate; ``stops``: the held values of
        f's stop-gradients when an enclosing derivative recorded them (the complex-step
        Hessian's), else this call records them at ``args``."""
        stops = FrozenStops() if stops is None else stops
        x = _a_point(args[i])
        value = self._evaluate(f, args, i, x, cost, stops)
        if require_scalar_:
            require_scalar(value, "grad")
        xp = backend.array_module(x)
        flat = xp.reshape(x, -1)
        precision = self._precision(value)
        columns = []
        for j in range(flat.size):
            def along(t: Any, j: int = j) -> Any:
                # f with coordinate j moved to x_j + t (t real or complex)
                moved = flat.astype(type(t) if isinstance(t, complex) else flat.dtype)
                moved[j] = flat[j] + t
                return self._evaluate(f, args, i, xp.reshape(moved, x.shape), cost, stops)

            columns.append(self._partial(along, value, float(flat[j]), j, cost, precision))
        J = xp.stack(columns, axis=-1) if columns else xp.zeros(value.shape + (0,))
        return value, xp.reshape(J, value.shape + x.shape)

    def _partial(self, along: Callable, value: Any, xj: float, j: int, cost: Cost,
                 precision: Any = np.float64) -> Any:
        """∂f/∂x_j from evaluations of t ↦ f(x + t e_j)."""
        scale = max(abs(xj), 1.0)
        if self.scheme == "complex":
            out = along(complex(0.0, COMPLEX_STEP))
            if not np.iscomplexobj(out):
                raise TypeError(
                    "the complex step needs f to accept and return complex numbers, but f "
                    "returned real values for complex input"
                )
            cost.step = COMPLEX_STEP
            return out.imag / COMPLEX_STEP
        if self.scheme == "richardson":
            return self._richardson(lambda h: difference(along, h)[0], xj, scale, j, cost)
        if self.scheme == "adaptive":
            estimate = self._adaptive(along, value, xj, j, cost, precision)
            if estimate is not None:
                return estimate
            scheme = "central"  # no central step fits in f's domain: go one-sided below
        else:
            scheme = self.scheme
        p = self.order
        relative = self.step if self.step is not None else optimal_step(p, dtype=precision)
        h0 = representable_step(xj, relative, precision)
        # Where a stencil point leaves f's domain: shrink the step; if that is not enough
        # (x sits on the edge), point a one-sided stencil into the domain.
        tries = [(scheme, h0 / 4.0**k) for k in range(13)]
        if scheme == "central":
            tries += [(side, h0 / 4.0**k) for side in ("forward", "backward") for k in range(13)]
        for scheme, h in tries:
            estimate, values = difference(along, h, scheme, p, value)
            if bool(np.all(np.isfinite(estimate))) or not bool(np.all(np.isfinite(value))):
                break
        if (scheme, h) != tries[0]:
            cost.notes.append(
                f"x[{j}]: a step left f's domain; used a {scheme} difference with h = {h:.3g}"
            )
        cost.step = max(cost.step or 0.0, h)
        self._check_rounding(values, estimate, h, p, scale, scheme, precision)
        return estimate

    def _check_rounding(self, values: list, estimate: Any, h: float, p: int, scale: float,
                        scheme: str, precision: Any = np.float64) -> None:
        """Warn when h is far below the optimal step: rounding error then dominates."""
        best = optimal_step(p, dtype=precision) * scale
        if h >= 1e-3 * best:
            return
        eps = epsilon(precision)
        size = max(float(np.max(np.abs(v))) if np.size(v) else 0.0 for v in values)
        rounding = eps * size / h
        if rounding > 1e-3 * max(float(np.max(np.abs(estimate))), eps):
            warnings.warn(
                f"numeric: the step h = {h:.3g} is far too small; rounding error (about "
                f"{rounding:.2g}) swamps the {scheme} difference. The error analysis suggests "
                f"h ≈ {best:.2g} for order {p}.",
                NumericalWarning,
                stacklevel=6,
            )

    def _richardson(self, difference: Callable, xj: float, scale: float, j: int,
                    cost: Cost) -> Any:
        r"""Neville's tableau on D(h), D(h/2), ...: T[l][k] = T[l][k-1] + (T[l][k-1] -
        T[l-1][k-1]) / (4^k - 1) removes the h^(2k) term."""
        h = representable_step(xj, self.step or 2.0**-3)
        first = difference(h)
        shrunk = 0
        while not bool(np.all(np.isfinite(first))) and shrunk < 30:
            h, shrunk = h / 4.0, shrunk + 1
            first = difference(h)
        if shrunk:
            cost.notes.append(f"x[{j}]: the first Richardson step left f's domain; h = {h:.3g}")
        cost.step = max(cost.step or 0.0, h)
        rows = [[first]]
        best, best_error = first, None
        levels = self.levels if self.scheme == "richardson" else 7  # adaptive: Hessians
        for level in range(1, levels):
            row = [difference(h / 2.0**level)]
            for k in range(1, level + 1):
                row.append(row[k - 1] + (row[k - 1] - rows[level - 1][k - 1]) / (4.0**k - 1.0))
            for k in range(1, level + 1):
                error = np.abs(row[k] - row[k - 1]) + np.abs(row[k] - rows[level - 1][k - 1])
                if best_error is None:
                    best, best_error = row[k], error
                else:
                    better = error < best_error
                    best = np.where(better, row[k], best)
                    best_error = np.where(better, error, best_error)
            rows.append(row)
        estimate = float(np.max(best_error)) if best_error is not None else None
        cost.error_estimate = max(cost.error_estimate or 0.0, estimate or 0.0)
        return best

    def _adaptive(self, along: Callable, value: Any, xj: float, j: int, cost: Cost,
                  precision: Any) -> Any:
        r"""Richardson on a geometric sequence of steps, stopped by its own error estimate.

        Central differences D(h) for h = h₀, h₀/2, h₀/4, ... (h₀ = ¼·max(|x|, 1)); each
        new D(h) starts a row of Neville's tableau,

            T[l][k] = T[l][k-1] + (T[l][k-1] - T[l-1][k-1]) / (4^k - 1),   k ≤ 5,

        whose k-th column has the error terms h², ..., h^(2k) removed.  Each entry's
        error is estimated by its distance to its two neighbours,
        |T[l][k] - T[l][k-1]| + |T[l][k] - T[l-1][k-1]|, and the entry with the
        smallest estimate is the answer.

        Large steps see a function that varies on a scale far below h (the logistic
        map's iterates vary on the scale 2⁻ⁿ): there the entries disagree and the
        estimates are large, so the walk goes on to smaller steps.  It stops when
        smaller steps cannot help, because the rounding error of D(h), about
        ε·|f|/h, has grown to a tenth of the best estimate; or when the estimates have stopped
        improving for :data:`ADAPTIVE_PATIENCE` steps after the best one had already
        converged to √ε relative.  A step that leaves f's domain is skipped.
        Returns None when no central step fits in the domain (x on its edge).
        """
        eps = epsilon(precision)
        h = representable_step(xj, self.step or ADAPTIVE_FIRST_STEP, precision)
        previous, best, best_error, best_level = None, None, None, 0
        skipped = 0
        for level in range(self.levels):
            estimate, values = difference(along, h)
            if not bool(np.all(np.isfinite(estimate))) and bool(np.all(np.isfinite(value))):
                skipped, previous, h = skipped + 1, None, h / ADAPTIVE_RATIO
                continue
            row = [estimate]
            for k in range(1, min(len(previous or []), ADAPTIVE_COLUMNS) + 1):
                factor = ADAPTIVE_RATIO ** (2 * k) - 1.0
                row.append(row[k - 1] + (row[k - 1] - previous[k - 1]) / factor)
                error = np.abs(row[k] - row[k - 1]) + np.abs(row[k] - previous[k - 1])
                if best is None:
                    best, best_error, best_level = row[k], error, level
                else:
                    better = error < best_error
                    if bool(np.any(better)):
                        best_level = level
                    best = np.where(better, row[k], best)
                    best_error = np.where(better, error, best_error)
            previous = row
            if best is not None:
                rounding = eps * np.maximum(np.abs(values[0]), np.abs(values[1])) / h
                if bool(np.all(ADAPTIVE_ROUNDING * rounding >= best_error)):
                    break  # smaller steps only add rounding error
                if level - best_level >= ADAPTIVE_PATIENCE and bool(
                        np.all(best_error <= np.sqrt(eps) * np.abs(best))):
                    break  # converged, and no longer improving
            h /= ADAPTIVE_RATIO
        if skipped:
            cost.notes.append(f"x[{j}]: {skipped} adaptive step(s) left f's domain; skipped")
        if best is None:
            return None
        cost.step = max(cost.step or 0.0, h)
        cost.error_estimate = max(cost.error_estimate or 0.0, float(np.max(best_error)))
        return best

    # -- second derivatives -----------------------------------------------------------
    def _hessian(self, f: Callable, args: list, i: int, cost: Cost) -> Any:
        r"""Second differences.

        central:  H_ij ≈ [f(x+hᵢ+hⱼ) - f(x+hᵢ-hⱼ) - f(x-hᵢ+hⱼ) + f(x-hᵢ-hⱼ)] / (4 hᵢ hⱼ)
                  (for i = j: [f(x+h) - 2f(x) + f(x-h)] / h²), error O(h²), h ≈ ε^(1/4);
        forward/backward: [f(x+hᵢ+hⱼ) - f(x+hᵢ) - f(x+hⱼ) + f(x)] / (hᵢ hⱼ), O(h), h ≈ ε^(1/3);
        richardson (and adaptive): the central formula, extrapolated over h, h/2, ...;
        complex: the complex step applied to a central-difference gradient.
        """
        x = _a_point(args[i])
        stops = FrozenStops()  # (held at x for every second difference, as for gradients)
        value = self._evaluate(f, args, i, x, cost, stops)
        require_scalar(value, "hessian")
        xp = backend.array_module(x)
        flat = xp.reshape(x, -1).astype(np.float64)
        n = flat.size
        scale = xp.maximum(xp.abs(flat), 1.0)

        def at(delta: Any) -> Any:
            return self._evaluate(f, args, i, xp.reshape(flat + delta, x.shape), cost,
                                  stops)

        scheme = "richardson" if self.scheme == "adaptive" else self.scheme
        if scheme == "complex":
            central = Numeric("central")

            def gradient_at(z: Any) -> Any:
                inner = Cost(self.name)
                value_z, J = central._jacobian(f, with_arg(args, i, z), i, inner, False,
                                               stops)
                cost.evaluations += inner.evaluations
                return xp.reshape(J, -1)

            rows = []
            for j in range(n):
                z = flat.astype(complex)
                z[j] += complex(0.0, COMPLEX_STEP)
                rows.append(gradient_at(xp.reshape(z, x.shape)).imag / COMPLEX_STEP)
            cost.step = COMPLEX_STEP
            H = xp.stack(rows)
            return (H + H.T) / 2.0

        def second_differences(relative: float) -> Any:
            h = (flat + relative * scale) - flat
            H = xp.zeros((n, n))
            sign = -1.0 if scheme == "backward" else 1.0
            e = xp.eye(n) * (sign * h)
            if scheme in ("central", "richardson"):
                f0 = value
                for a in range(n):
                    plus, minus = at(e[a]), at(-e[a])
                    H[a, a] = (plus - 2.0 * f0 + minus) / h[a] ** 2
                    for b in range(a):
                        H[a, b] = H[b, a] = (
                            at(e[a] + e[b]) - at(e[a] - e[b]) - at(-e[a] + e[b])
                            + at(-e[a] - e[b])
                        ) / (4.0 * h[a] * h[b])
            else:
                single = [at(e[a]) for a in range(n)]
                for a in range(n):
                    for b in range(a + 1):
                        H[a, b] = H[b, a] = (
                            at(e[a] + e[b]) - single[a] - single[b] + value
                        ) / (h[a] * h[b])
            return H

        if scheme == "richardson":
            return self._richardson(second_differences, 0.0, 1.0, 0, cost)
        order = 2 if scheme == "central" else 1
        relative = self.step if self.step is not None else optimal_step(
            order, derivative=2, dtype=self._precision(value))
        cost.step = relative
        return second_differences(relative)

