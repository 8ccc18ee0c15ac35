r"""Finite differences on plain arrays: the one kernel every numeric derivative in difflab uses.

A stencil of offsets s₀, s₁, ... and weights w₀, w₁, ... approximates

    f'(x) ≈ (1/h) Σⱼ wⱼ f(x + sⱼ h)

with the weights chosen so that Taylor's expansion of the sum matches f'(x)
up to h^p (the *order*): Σⱼ wⱼ sⱼ^m = [m = 1] for m = 0 … N-1.  Forward
differences use offsets 0 … p, backward 0 … -p, central -p/2 … p/2.

The step balances two errors.  Truncation: the neglected Taylor terms, about
C·h^p.  Rounding: each f(x + sh) carries a relative error of about ε, the
machine epsilon *of the precision f computes in* (2.2e-16 in float64, 1.2e-7
in float32), and dividing by h magnifies it to ε·|f|/h.  Their sum is
smallest for

    h ≈ ε^(1/(p+d)) · max(|x|, 1)        (d = 1 for f', 2 for f'')

(float64: ε^(1/2) ≈ 1.5e-8 forward, ε^(1/3) ≈ 6e-6 central; float32: 3.5e-4 and
4.9e-3), and the total error is then about ε^(p/(p+d)).

This module knows nothing of tensors or of the differentiators: it works on
NumPy (or CuPy) arrays and on callables.  :class:`difflab.diff.numeric.Numeric`
builds its schemes on :func:`difference`; ``autograd.gradcheck``,
``nn.utils.compute_gradients(method="numeric")`` and the grading checks call
:func:`difference` or :func:`jacobian` instead of writing their own loop.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from difflab import backend

__all__ = [
    "EPS",
    "along_coordinate",
    "difference",
    "epsilon",
    "jacobian",
    "optimal_step",
    "representable_step",
    "stencil",
]

EPS = float(np.finfo(np.float64).eps)


def epsilon(dtype: Any = np.float64) -> float:
    """Machine epsilon of a floating dtype; float64's for integer, complex128's part, etc."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        dtype = np.finfo(dtype).dtype  # complex64 -> float32
    if dtype.kind != "f":
        dtype = np.dtype(np.float64)
    return float(np.finfo(dtype).eps)


def stencil(scheme: str, order: int) -> tuple[list[int], list[float]]:
    """Offsets and weights of a first-derivative difference of accuracy ``order``.

    Solves Σⱼ wⱼ sⱼ^m = [m = 1], m = 0 … N-1, exactly in rational arithmetic.

    >>> stencil("central", 2)
    ([-1, 1], [-0.5, 0.5])
    """
    if scheme == "central":
        if order % 2 or order < 2:
            raise ValueError(f"central differences have even order (2, 4, 6, ...), got {order}")
        half = order // 2
        offsets = list(range(-half, half + 1))
    elif scheme in ("forward", "backward"):
        if order < 1:
            raise ValueError(f"{scheme} differences have order 1, 2, ..., got {order}")
        sign = 1 if scheme == "forward" else -1
        offsets = [sign * s for s in range(order + 1)]
    else:
        raise ValueError(f"no stencil for scheme {scheme!r}; use central, forward or backward")
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


def optimal_step(order: int, derivative: int = 1, dtype: Any = np.float64) -> float:
    """ε^(1/(p+d)): the relative step that balances truncation (h^p) and rounding (ε/h^d).

    ``dtype`` is the precision f computes in: float32 values need a far larger step
    (4.9e-3 for central differences) than float64 ones (6.1e-6).
    """
    return epsilon(dtype) ** (1.0 / (order + derivative))


def representable_step(x: float, relative: float, dtype: Any = np.float64) -> float:
    """The step h = relative·max(|x|, 1), rounded so that (x + h) - x == h exactly in ``dtype``.

    Rounding the step removes one error source: x + h is stored rounded, so the step
    f actually sees is (x + h) - x, not h.  A step below the spacing of floating-point
    numbers near x rounds to 0: x + h == x, and no difference quotient can be
    formed.  That is a usage error, said plainly.
    """
    kind = np.dtype(dtype).type if np.dtype(dtype).kind == "f" else np.float64
    x_ = kind(x)
    h = float((x_ + kind(relative * max(abs(float(x)), 1.0))) - x_)
    if h == 0.0:
        smallest = float(np.spacing(kind(max(abs(float(x)), 1.0))))
        raise ValueError(
            f"numeric: the step {relative:.3g}·max(|x|, 1) is below the spacing of "
            f"floating-point numbers ({np.dtype(kind).name}) near x = {float(x):.6g} (about "
            f"{smallest:.3g}): "
            f"x + h == x, so no difference can be formed. Use a larger step (the default is "
            f"chosen from the error analysis)."
        )
    return h


def difference(along: Callable[[float], Any], h: float, scheme: str = "central",
               order: int = 2, value: Any = None) -> tuple[Any, list]:
    r"""The difference quotient (1/h) Σⱼ wⱼ·along(sⱼ h) of a stencil.

    ``along(t)`` is f moved a distance t along one coordinate, t ↦ f(x + t·eⱼ); it
    may return a number or an array (then every element gets its partial).  ``value``,
    f(x) when the caller already has it, saves the evaluation at offset 0 of one-sided
    stencils.  Returns the estimate of ∂f/∂xⱼ and the values of f it used.

    >>> float(difference(lambda t: (2.0 + t) ** 2, 0.5)[0])  # d(x²)/dx at 2, exact for x²
    4.0
    """
    offsets, weights = stencil(scheme, order)
    values = [value if (s == 0 and value is not None) else along(s * h) for s in offsets]
    return sum(w * v for w, v in zip(weights, values)) / h, values


def along_coordinate(flat: Any, j: int, evaluate: Callable[[], Any]) -> Callable[[float], Any]:
    """t ↦ ``evaluate()`` with ``flat[j]`` moved to flat[j] + t in place, then put back.

    For callers whose function reads the array itself (a tensor's storage, a model's
    parameters) rather than taking x as an argument: ``flat`` is a flat view of it.
    """
    original = flat[j].item()

    def along(t: float) -> Any:
        flat[j] = original + t
        try:
            return evaluate()
        finally:
            flat[j] = original

    return along


def jacobian(f: Callable[[Any], Any], x: Any, step: float | None = None,
             scheme: str = "central", order: int = 2) -> Any:
    """J[..., j] = ∂f/∂xⱼ by finite differences, with shape f(x).shape + x.shape.

    ``f`` maps an array shaped like ``x`` to a number or an array.  ``step`` is
    relative to max(|xⱼ|, 1) (default: :func:`optimal_step` for the dtype f returns).
    Cost: one evaluation of f(x) (its shape and dtype), then each coordinate the
    stencil's points other than 0: 2 per coordinate for central differences.

    >>> jacobian(lambda v: (v ** 2).sum(), np.array([1.0, 2.0])).round(6)
    array([2., 4.])
    """
    xp = backend.array_module(x)
    x = xp.asarray(x, dtype=np.float64)
    flat = x.reshape(-1)
    value = xp.asarray(f(x))
    relative = step if step is not None else optimal_step(order, dtype=value.dtype)
    columns = []
    for j in range(flat.size):
        def along(t: float, j: int = j) -> Any:
            moved = flat.copy()
            moved[j] += t
            return xp.asarray(f(moved.reshape(x.shape)), dtype=np.float64)

        h = representable_step(float(flat[j]), relative)
        columns.append(difference(along, h, scheme, order, value=value)[0])
    if not columns:
        return xp.zeros(value.shape + x.shape)
    return xp.reshape(xp.stack(columns, axis=-1), value.shape + x.shape)

