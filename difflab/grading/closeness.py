"""Comparing numbers with a message that teaches: :func:`assert_close` and its reference.

The foundation of :mod:`difflab.grading.checks` (which re-exports both names): an
elementwise comparison that names the worst mismatch, its index, both values, the
errors and the tolerance, with a hint when the error has a recognisable shape (a
constant factor, the wrong sign, zero, a missing upstream gradient); and
:func:`numeric_gradient`, the central-difference reference in float64.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from difflab import finite_differences
from difflab.grading.credit import check_part, record_elements
from difflab.grading.errors import GradingFailure

ATOL = 1e-5
RTOL = 1e-3
EPS = 1e-6

# --------------------------------------------------------------------------------------
# numbers in, numbers out
# --------------------------------------------------------------------------------------
def _to_numpy(x: Any) -> np.ndarray:
    """A float64 copy of a tensor, array or number."""
    if hasattr(x, "detach") and callable(x.detach):
        x = x.detach()
    if hasattr(x, "numpy") and callable(x.numpy):
        x = x.numpy()
    elif hasattr(x, "data") and isinstance(getattr(x, "data", None), np.ndarray):
        x = x.data
    return np.array(x, dtype=np.float64, copy=True)


def _fmt(v: float) -> str:
    return f"{v:.6g}"


def _index(idx: tuple[int, ...]) -> str:
    if len(idx) == 1:
        return f"({idx[0]},)"
    return "(" + ", ".join(str(i) for i in idx) + ")"


def _hint(actual: np.ndarray, expected: np.ndarray, upstream: np.ndarray | None) -> str:
    """Recognise the usual shapes of a wrong derivative."""
    scale = np.max(np.abs(expected)) if expected.size else 0.0
    if scale == 0.0:
        return ""
    if np.allclose(actual, 0.0, atol=1e-12):
        return (
            "Your result is zero everywhere: is the gradient reaching this input at all "
            "(a .detach(), .data, or a missing return in backward)?"
        )
    if np.allclose(actual, -expected, rtol=1e-3, atol=1e-8 * scale):
        return "Your result has the wrong sign everywhere."
    if upstream is not None and np.all(np.abs(upstream - 1.0) > 1e-3):
        if upstream.shape == expected.shape and np.allclose(
            actual * upstream, expected, rtol=1e-3, atol=1e-8 * scale
        ):
            return (
                "Your result equals the expected one divided by the upstream gradient: "
                "did you forget to multiply by grad_output (the chain rule factor)?"
            )
    mask = np.abs(expected) > 1e-8 * scale
    if mask.sum() >= 2:
        ratios = actual[mask] / expected[mask]
        if np.allclose(ratios, ratios[0], rtol=1e-3) and not np.isclose(ratios[0], 1.0):
            return (
                f"Your result is the expected one times {ratios[0]:.4g} everywhere: "
                "check the constant factors (a power rule's exponent, a 1/2, a 1/n)."
            )
    return ""


def assert_close(
    actual: Any,
    expected: Any,
    *,
    what: str = "value",
    atol: float = ATOL,
    rtol: float = RTOL,
    upstream: np.ndarray | None = None,
    hint: str = "",
    point: tuple[str, np.ndarray] | None = None,
) -> None:
    """Compare arrays elementwise and explain the worst mismatch.

    Parameters
    ----------
    actual, expected : array_like
        The student's values and the reference values.
    what : str, optional
        What is being compared, used to start the message (``"gradient of input 0"``).
    atol, rtol : float, optional
        Passes where ``|actual - expected| <= atol + rtol * |expected|``.
    upstream : ndarray, optional
        The upstream gradient used, so a missing chain-rule factor can be recognised.
    hint : str, optional
        Extra advice appended to the message.
    point : (str, ndarray), optional
        A name and an array of the same shape (the input a gradient belongs to) whose
        value at the mismatching element is quoted, e.g. ``("x", x)``.

    Returns
    -------
    None
        The check passed (a failure raises, with the explanation).

    Raises
    ------
    GradingFailure
        With the element index, both values, the errors and the tolerance.

    Examples
    --------
    >>> import numpy as np
    >>> from difflab.grading import GradingFailure, assert_close
    >>> assert_close(np.array([1.0, 2.0]), [1.0, 2.0 + 1e-7])
    >>> try:
    ...     assert_close(np.array([1.0, 2.0]), [1.0, 2.5], what="gradient")
    ... except GradingFailure as failure:
    ...     print(failure)
    gradient differs at element (1,): got 2, expected 2.5 (abs err 0.5, rel err 0.2) (1 of 2
    elements differ); tolerance atol=1e-05 rtol=0.001.
    """
    a, e = _to_numpy(actual), _to_numpy(expected)
    with check_part(e.size):  # one check of a partial-credit test, or part of one
        _compare(a, e, what=what, atol=atol, rtol=rtol, upstream=upstream, hint=hint,
                 point=point)


def _compare(a: np.ndarray, e: np.ndarray, *, what: str, atol: float, rtol: float,
             upstream: np.ndarray | None, hint: str, point: tuple[str, np.ndarray] | None
             ) -> None:
    if a.shape != e.shape:
        record_elements(0, e.size)  # partial credit: nothing of a wrong shape is right
        extra = ""
        if a.ndim == 2 and a.T.shape == e.shape and np.allclose(a.T, e, atol=atol, rtol=rtol):
            extra = " Your values are right but transposed."
        elif a.size == e.size and np.allclose(a.reshape(e.shape), e, atol=atol, rtol=rtol):
            extra = " Your values are right but need reshaping."
        raise GradingFailure(
            f"{what} has shape {a.shape}, expected {e.shape}.{extra} {hint}".rstrip()
        )
    err = np.abs(a - e)
    allowed = atol + rtol * np.abs(e)
    bad = ~(err <= allowed)
    bad_nan = np.isnan(a) & ~np.isnan(e)
    record_elements(a.size - int((bad | bad_nan).sum()), a.size)
    if bad_nan.any():
        idx = tuple(int(i) for i in np.argwhere(bad_nan)[0])
        raise GradingFailure(
            f"{what} is NaN at element {_index(idx)} (expected {_fmt(e[idx])}). "
            "Look for 0/0, log of a negative number or sqrt of a negative number. "
            f"{hint}".rstrip()
        )
    if not bad.any():
        return
    worst = np.unravel_index(np.argmax(np.where(bad, err / allowed, -np.inf)), a.shape)
    idx = tuple(int(i) for i in worst)
    rel = err[idx] / max(abs(e[idx]), 1e-300)
    where = f" at element {_index(idx)}" if a.ndim else ""
    if point is not None and np.shape(point[1]) == a.shape:
        where += f" (where {point[0]} = {_fmt(np.asarray(point[1], dtype=float)[idx])})"
    count = f" ({int(bad.sum())} of {a.size} elements differ)" if a.size > 1 else ""
    hints = " ".join(h for h in (_hint(a, e, upstream), hint) if h)
    message = (
        f"{what} differs{where}: got {_fmt(a[idx])}, expected {_fmt(e[idx])} "
        f"(abs err {err[idx]:.3g}, rel err {rel:.3g}){count}; "
        f"tolerance atol={atol:g} rtol={rtol:g}."
    )
    raise GradingFailure(f"{message} {hints}".rstrip())


def numeric_gradient(
    f: Callable[..., float], xs: Sequence[np.ndarray], index: int, eps: float = EPS
) -> np.ndarray:
    """Central-difference gradient of the scalar ``f(*xs)`` with respect to ``xs[index]``.

    The project's one finite-difference kernel (:func:`difflab.finite_differences.jacobian`)
    with the relative step ``eps``: ``h = eps·max(|xⱼ|, 1)``, rounded so that x + h is exact.
    """
    xs = [np.array(x, dtype=np.float64, copy=True) for x in xs]

    def f_of_one(x: np.ndarray) -> float:
        return float(f(*xs[:index], x, *xs[index + 1:]))

    return finite_differences.jacobian(f_of_one, xs[index], step=eps)
