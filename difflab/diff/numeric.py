r"""Numeric differentiation: finite differences, Richardson extrapolation, complex step.

Finite differences
------------------
A stencil of offsets s₀, s₁, ... and weights w₀, w₁, ... approximates

    f'(x) ≈ (1/h) Σⱼ wⱼ f(x + sⱼ h)

with the weights chosen so that Taylor's expansion of the sum matches f'(x)
up to h^p (the *order*): Σⱼ wⱼ sⱼ^m = [m = 1] for m = 0 … N-1.  Forward
differences use offsets 0 … p, backward 0 … -p, central -p/2 … p/2.

Choosing the step
-----------------
Two errors pull in opposite directions.  Truncation: the neglected Taylor
terms, about C·h^p.  Rounding: each f(x + sh) carries a relative error of
about ε (machine epsilon, 2.2e-16), and dividing by h magnifies it to
about ε·|f|/h.  Their sum is smallest for

    h ≈ ε^(1/(p+1)) · max(|x|, 1)

(ε^(1/2) ≈ 1.5e-8 for forward differences, ε^(1/3) ≈ 6e-6 for central), and
then the total error is about ε^(p/(p+1)): 1e-8 and 4e-11 relative.  A step
much smaller than that is swamped by rounding: a :class:`NumericalWarning`
says so.

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
from fractions import Fraction
from typing import Any

import numpy as np

from difflab import backend
from difflab.diff.interface import (
    Cost,
    Differentiator,
    NumericalWarning,
    check_output,
    require_scalar,
    with_arg,
)

EPS = float(np.finfo(np.float64).eps)
SCHEMES = ("central", "forward", "backward", "richardson", "complex")
COMPLEX_STEP = 1e-200


def stencil(scheme: str, order: int) -> tuple[list[int], list[float]]:
    """Offsets and weights of a first-derivative difference of accuracy ``order``.

    Solves Σⱼ wⱼ sⱼ^m = [m = 1], m = 0 … N-1, exactly in rational arithmetic.

    >>> stencil("central", 2)
    ([-1, 1], [-0.5, 0.5])
    """
    if scheme == "central":
        if order % 2:
            raise ValueError(f"central differences have even order (2, 4, 6, ...), got {order}")
        half = order // 2
        offsets = [s for s in range(-half, half + 1)]
    elif scheme == "forward":
        offsets = list(range(order + 1))
    elif scheme == "backward":
        offsets = [-s for s in range(order + 1)]
    else:
        raise ValueError(f"no stencil for scheme {scheme!r}")
    n = len(offsets)
    # Gaussian elimination on the (small) Vandermonde system, in exact fractions.
    rows = [[Fraction(s) ** m for s in offsets] + [Fraction(int(m == 1))] for m in range(n)]
    for c in range(n):
        pivot = next(r for r in range(c, n) if rows[r][c] != 0)
        rows[c], rows[pivot] = rows[pivot], rows[c]
        for r in range(n):
            if r != c and rows[r][c] != 0:
                factor = rows[r][c] / rows[c][c]
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[c])]
    weights = [rows[i][n] / rows[i][i] for i in range(n)]
    kept = [(s, float(w)) for s, w in zip(offsets, weights) if w != 0]
    return [s for s, _ in kept], [w for _, w in kept]


def optimal_step(order: int, derivative: int = 1) -> float:
    """ε^(1/(p+d)): the step that balances truncation (h^p) and rounding (ε/h^d)."""
    return EPS ** (1.0 / (order + derivative))


class Numeric(Differentiator):
    """Finite differences, Richardson extrapolation or the complex step.

    Parameters
    ----------
    scheme : "central" (default), "forward", "backward", "richardson" or "complex".
    order : accuracy order p of the difference (central: 2, 4, 6, ...; one-sided:
        1, 2, ...).  Default 2 for central, 1 for one-sided.
    step : the step h, relative to max(|x|, 1).  Default: from the error analysis,
        ε^(1/(p+1)) (Richardson: ``2**-3``, the largest of its steps).
    levels : Richardson only: how many steps h, h/2, h/4, ... (2 evaluations each).
    """

    name = "numeric"

    def __init__(self, scheme: str = "central", order: int | None = None,
                 step: float | None = None, levels: int = 7) -> None:
        if scheme not in SCHEMES:
            raise ValueError(f"unknown scheme {scheme!r}; choose one of {', '.join(SCHEMES)}")
        if order is None:
            order = 2 if scheme in ("central", "richardson") else 1
        if scheme in ("forward", "backward", "central"):
            stencil(scheme, order)  # validates the order
        if step is not None and not step > 0:
            raise ValueError(f"step must be positive, got {step}")
        if levels < 2:
            raise ValueError("Richardson extrapolation needs levels >= 2")
        self.scheme, self.order, self.step, self.levels = scheme, order, step, levels

    # -- helpers ------------------------------------------------------------------------
    def _steps(self, x: Any, relative: float) -> Any:
        """h scaled by max(|x|, 1), rounded so that x + h - x == h exactly."""
        xp = backend.array_module(x)
        h = relative * xp.maximum(xp.abs(x), 1.0)
        return (x + h) - x

    @staticmethod
    def _evaluate(f: Callable, args: list, i: int, x: Any, cost: Cost) -> Any:
        out = f(*with_arg(args, i, x))
        check_output(out, "numeric")
        cost.evaluations += 1
        xp = backend.array_module(out)
        return xp.asarray(out)

    # -- first derivatives ------------------------------------------------------------
    def _jacobian(self, f: Callable, args: list, i: int, cost: Cost,
                  require_scalar_: bool) -> tuple[Any, Any]:
        x = args[i]
        value = self._evaluate(f, args, i, x, cost)
        if require_scalar_:
            require_scalar(value, "grad")
        xp = backend.array_module(x)
        flat = xp.reshape(x, -1)
        columns = []
        for j in range(flat.size):
            def along(t: Any, j: int = j) -> Any:
                # f with coordinate j moved to x_j + t (t real or complex)
                moved = flat.astype(type(t) if isinstance(t, complex) else flat.dtype)
                moved[j] = flat[j] + t
                return self._evaluate(f, args, i, xp.reshape(moved, x.shape), cost)

            columns.append(self._partial(along, value, float(flat[j]), j, cost))
        J = xp.stack(columns, axis=-1) if columns else xp.zeros(value.shape + (0,))
        return value, xp.reshape(J, value.shape + x.shape)

    def _partial(self, along: Callable, value: Any, xj: float, j: int, cost: Cost) -> Any:
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
            return self._richardson(lambda h: self._central(along, h), xj, scale, j, cost)
        p = self.order
        relative = self.step if self.step is not None else optimal_step(p)
        h0 = _representable_step(xj, relative, scale)
        # Where a stencil point leaves f's domain: shrink the step; if that is not enough
        # (x sits on the edge), point a one-sided stencil into the domain.
        tries = [(self.scheme, h0 / 4.0**k) for k in range(13)]
        if self.scheme == "central":
            tries += [(side, h0 / 4.0**k) for side in ("forward", "backward") for k in range(13)]
        for scheme, h in tries:
            estimate, values = self._difference(along, value, scheme, p, h)
            if bool(np.all(np.isfinite(estimate))) or not bool(np.all(np.isfinite(value))):
                break
        if (scheme, h) != tries[0]:
            cost.notes.append(
                f"x[{j}]: a step left f's domain; used a {scheme} difference with h = {h:.3g}"
            )
        cost.step = max(cost.step or 0.0, h)
        self._check_rounding(values, estimate, h, p, scale, scheme)
        return estimate

    def _difference(self, along: Callable, value: Any, scheme: str, p: int,
                    h: float) -> tuple[Any, list]:
        offsets, weights = stencil(scheme, p)
        values = [value if s == 0 else along(s * h) for s in offsets]
        return sum(w * v for w, v in zip(weights, values)) / h, values

    def _check_rounding(self, values: list, estimate: Any, h: float, p: int, scale: float,
                        scheme: str) -> None:
        """Warn when h is far below the optimal step: rounding error then dominates."""
        best = optimal_step(p) * scale
        if h >= 1e-3 * best:
            return
        size = max(float(np.max(np.abs(v))) if np.size(v) else 0.0 for v in values)
        rounding = EPS * size / h
        if rounding > 1e-3 * max(float(np.max(np.abs(estimate))), EPS):
            warnings.warn(
                f"numeric: the step h = {h:.3g} is far too small; rounding error (about "
                f"{rounding:.2g}) swamps the {scheme} difference. The error analysis suggests "
                f"h ≈ {best:.2g} for order {p}.",
                NumericalWarning,
                stacklevel=6,
            )

    @staticmethod
    def _central(along: Callable, h: float) -> Any:
        return (along(h) - along(-h)) / (2.0 * h)

    def _richardson(self, difference: Callable, xj: float, scale: float, j: int,
                    cost: Cost) -> Any:
        r"""Neville's tableau on D(h), D(h/2), ...: T[l][k] = T[l][k-1] + (T[l][k-1] -
        T[l-1][k-1]) / (4^k - 1) removes the h^(2k) term."""
        h = _representable_step(xj, self.step or 2.0**-3, scale)
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
        for level in range(1, self.levels):
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

    # -- second derivatives -----------------------------------------------------------
    def _hessian(self, f: Callable, args: list, i: int, cost: Cost) -> Any:
        r"""Second differences.

        central:  H_ij ≈ [f(x+hᵢ+hⱼ) - f(x+hᵢ-hⱼ) - f(x-hᵢ+hⱼ) + f(x-hᵢ-hⱼ)] / (4 hᵢ hⱼ)
                  (for i = j: [f(x+h) - 2f(x) + f(x-h)] / h²), error O(h²), h ≈ ε^(1/4);
        forward/backward: [f(x+hᵢ+hⱼ) - f(x+hᵢ) - f(x+hⱼ) + f(x)] / (hᵢ hⱼ), O(h), h ≈ ε^(1/3);
        richardson: the central formula, extrapolated over h, h/2, ...;
        complex: the complex step applied to a central-difference gradient.
        """
        x = args[i]
        value = self._evaluate(f, args, i, x, cost)
        require_scalar(value, "hessian")
        xp = backend.array_module(x)
        flat = xp.reshape(x, -1).astype(np.float64)
        n = flat.size
        scale = xp.maximum(xp.abs(flat), 1.0)

        def at(delta: Any) -> Any:
            return self._evaluate(f, args, i, xp.reshape(flat + delta, x.shape), cost)

        if self.scheme == "complex":
            central = Numeric("central")

            def gradient_at(z: Any) -> Any:
                inner = Cost(self.name)
                value_z, J = central._jacobian(f, with_arg(args, i, z), i, inner, False)
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
            sign = -1.0 if self.scheme == "backward" else 1.0
            e = xp.eye(n) * (sign * h)
            if self.scheme in ("central", "richardson"):
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

        if self.scheme == "richardson":
            return self._richardson(second_differences, 0.0, 1.0, 0, cost)
        order = 2 if self.scheme == "central" else 1
        relative = self.step if self.step is not None else optimal_step(order, derivative=2)
        cost.step = relative
        return second_differences(relative)


def _representable_step(xj: float, relative: float, scale: float) -> float:
    """The step h = relative·max(|x|, 1), rounded so that (x + h) - x == h exactly.

    A step below the spacing of floating-point numbers near x rounds to 0: x + h == x,
    and no difference quotient can be formed.  That is a usage error, said plainly.
    """
    h = (xj + relative * scale) - xj
    if h == 0.0:
        smallest = float(np.spacing(max(abs(xj), 1.0)))
        raise ValueError(
            f"numeric: the step {relative:.3g}·max(|x|, 1) is below the spacing of floating-"
            f"point numbers near x = {xj:.6g} (about {smallest:.3g}): x + h == x, so no "
            f"difference can be formed. Use a larger step (the default is chosen from the "
            f"error analysis), e.g. Numeric(step=None)."
        )
    return h
