"""mpmath as an array namespace: a rule's ``forward`` computed to 50 digits.

Every elementwise rule writes its function once, ``forward(xp, x)``, with ``xp``
an array namespace (NumPy, CuPy, difflab's functions, sympy).  Given
:data:`MPMATH` instead, the same line computes the function in mpmath's
arbitrary precision: the references the accuracy harnesses compare against
(``difflab.exprparse``) and the printed values of the generated docstrings'
examples for functions NumPy lacks (``difflab.ops.docstrings``; NumPy's
special functions live in SciPy, which is slow to import).
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Largest binary exponent (log2 of the magnitude) an mpmath power may reach; far beyond
#: any float (2**1024), far below where mpmath's unlimited exponents get slow.
_MP_MAX_EXPONENT = 2**20


def _mpmath_special(name: str) -> Any:
    """The special functions mpmath spells otherwise, or builds from its own (None: none)."""
    import mpmath

    order = {"i0": 0, "i1": 1, "i0e": 0, "i1e": 1, "bessel_j0": 0, "bessel_j1": 1}.get(name)
    if name in ("i0", "i1"):
        return lambda x: mpmath.besseli(order, x)
    if name in ("i0e", "i1e"):
        return lambda x: mpmath.exp(-abs(x)) * mpmath.besseli(order, x)
    if name in ("bessel_j0", "bessel_j1"):
        return lambda x: mpmath.besselj(order, x)
    if name in ("scaled_modified_bessel_k0", "scaled_modified_bessel_k1"):
        order = int(name[-1])
        return lambda x: mpmath.exp(x) * mpmath.besselk(order, x)
    if name == "erfcx":
        return lambda x: mpmath.exp(x * x) * mpmath.erfc(x)
    return None


class _MpmathArrayNamespace:
    """NumPy's function names answered by mpmath: what ``xp`` means in a rule's forward
    when it computes a high-precision reference."""

    def __getattr__(self, name: str) -> Any:
        import mpmath

        spelled = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arctan2": "atan2",
                   "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh", "lgamma": "loggamma",
                   "abs": "fabs", "absolute": "fabs"}.get(name, name)
        special = _mpmath_special(name)
        if special is not None:
            return special
        if name == "power":  # guarded: mpmath's exponents have no limit
            return _mp_power
        if name == "maximum":
            return max
        if name == "minimum":
            return min
        if name == "where":
            return lambda cond, a, b: a if cond else b
        if name == "remainder":  # (Python's %: the sign of b; mpmath has fmod only)
            return lambda a, b: a - b * mpmath.floor(a / b)
        if name == "copysign":  # (mpmath's zero has no sign: b = 0 counts as positive)
            return lambda a, b: -mpmath.fabs(a) if b < 0 else mpmath.fabs(a)
        if name == "nextafter":  # (a float64's neighbour: a question about float64 itself)
            return lambda a, b: mpmath.mpf(float(np.nextafter(float(a), float(b))))
        if name == "heaviside":
            return lambda x, at_zero: mpmath.mpf(1 if x > 0 else 0 if x < 0 else at_zero)
        return getattr(mpmath, spelled)


#: mpmath as an array namespace (``MPMATH.sin``, ``MPMATH.arcsin``, ``MPMATH.where``, ...).
MPMATH = _MpmathArrayNamespace()


def _mp_power(a: Any, b: Any) -> Any:
    """``a**b`` in mpmath, guarded like the integer case: mpmath's exponents have no limit,
    so 2**(9**9**9) would try to build a number of 10**369000000 bits.  A power whose
    magnitude ``|b| * log2|a|`` passes :data:`_MP_MAX_EXPONENT` is infinite (or 0), as in
    floating point."""
    import mpmath

    a, b = mpmath.mpmathify(a), mpmath.mpmathify(b)
    if a != 0 and mpmath.isfinite(a) and mpmath.isfinite(b):
        with mpmath.workprec(53):
            size = abs(b) * abs(mpmath.log(abs(a), 2))
        if size > _MP_MAX_EXPONENT:
            if (abs(a) > 1) == (mpmath.re(b) > 0):  # the magnitude grows without bound
                return mpmath.inf
            return mpmath.mpf(0)
    return mpmath.power(a, b)
