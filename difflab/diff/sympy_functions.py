"""The functions the symbolic method gives sympy where sympy's own will not do.

Each is a ``sympy.Function`` printed by name, so ``sympy.lambdify`` calls the array
function of that name (NumPy's, SciPy's, CuPy's), and each knows its derivative (its
``fdiff``), the rule's: the incomplete gamma functions (sympy's ``lowergamma(a, x) /
gamma(a)`` has no NumPy printing), the remainders ``fmod`` and ``remainder``
(sympy's ``Mod`` has no derivative), rounding to even (``rint``: sympy has no
symbolic round) and the float tests ``isnan``, ``isinf``, ``isfinite`` (truth values,
so that ``where`` makes a ``Piecewise`` of them).  :func:`clean_derivative` takes the
derivative of sympy's own steps (``floor``, ``ceiling``, ``sign``, ``Heaviside``) as 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import sympy
from sympy.logic.boolalg import BooleanFunction


class gammainc(sympy.Function):  # noqa: N801  (printed by name: the array function's)
    """The regularized lower incomplete gamma function P(a, x) as a sympy function.

    sympy's own ``lowergamma(a, x)/gamma(a)`` has no NumPy printing; this one is
    printed as ``gammainc(a, x)`` and knows its derivative in x, the gamma density
    (in a: not defined, as in PyTorch).
    """

    nargs = 2

    def fdiff(self, argindex: int = 2) -> Any:
        a, x = self.args
        if argindex != 2:
            raise sympy.ArgumentIndexError(self, argindex)
        return sympy.exp((a - 1) * sympy.log(x) - x - sympy.loggamma(a))


class fmod(sympy.Function):  # noqa: N801  (printed by name: the array function's)
    """C's remainder ``fmod(a, b)``, the sign of ``a``, as a sympy function.

    sympy's ``Mod`` is Python's ``%`` and has no derivative; this one (and
    :class:`remainder`) knows the rule's: 1 in ``a``, ``-trunc(a / b)`` in ``b``, written
    ``(fmod(a, b) - a) / b`` as the rule ``Fmod`` writes it.  Numbers evaluate.
    """

    nargs = 2

    @classmethod
    def eval(cls, a: Any, b: Any) -> Any:
        if a.is_Number and b.is_Number and b != 0:
            return sympy.sign(a) * sympy.Mod(abs(a), abs(b))
        return None

    def fdiff(self, argindex: int = 1) -> Any:
        a, b = self.args
        return sympy.S.One if argindex == 1 else (self - a) / b


class remainder(sympy.Function):  # noqa: N801
    """Python's ``a % b``, the sign of ``b``, as a sympy function whose derivative is the
    rule's (1 in ``a``, ``-floor(a / b)`` in ``b``); see :class:`fmod`."""

    nargs = 2

    @classmethod
    def eval(cls, a: Any, b: Any) -> Any:
        if a.is_Number and b.is_Number and b != 0:
            return sympy.Mod(a, b)
        return None

    def fdiff(self, argindex: int = 1) -> Any:
        a, b = self.args
        return sympy.S.One if argindex == 1 else (self - a) / b


class gammaincc(sympy.Function):  # noqa: N801
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""

    nargs = 2

    def fdiff(self, argindex: int = 2) -> Any:
        return -gammainc(*self.args).fdiff(argindex)


class rint(sympy.Function):  # noqa: N801  (printed by name: the array function's)
    """x rounded to the nearest integer, halves to even (``numpy.rint``, difflab's
    ``round``), as a sympy function: piecewise constant, so its derivative is 0 (away
    from the half-integers, where it jumps).  Finite numbers evaluate."""

    nargs = 1

    @classmethod
    def eval(cls, x: Any) -> Any:
        if x.is_Number and x.is_finite:
            return sympy.Integer(int(np.rint(float(x))))
        return None

    def fdiff(self, argindex: int = 1) -> Any:
        return sympy.S.Zero


class detached(sympy.Function):  # noqa: N801  (as rint's)
    """``x.detach()`` of an expression: its value, cut from differentiation (derivative
    0), as reverse mode's ``detach`` cuts the tape and forward mode's drops the tangent
    (``dl.hypot`` and ``dl.logaddexp`` shift by one).  Printed as ``x`` itself; numbers
    evaluate."""

    nargs = 1

    @classmethod
    def eval(cls, x: Any) -> Any:
        return x if x.is_Number else None

    def fdiff(self, argindex: int = 1) -> Any:
        return sympy.S.Zero

    def _print_value(self, printer: Any) -> str:
        """The value's own printing, in parentheses (compiled code computes ``x``)."""
        return f"({printer._print(self.args[0])})"

    def _print_held(self, printer: Any) -> str:
        """Compiled NumPy or CuPy code: ``stop_gradient_value(x)``, the value of ``x``, or
        the one a finite-difference derivative around this evaluation holds (lambdify
        imports the function the printer names)."""
        call = printer._module_format("difflab.ops.logic.stop_gradient_value")
        return f"{call}({printer._print(self.args[0])})"

    _numpycode = _cupycode = _print_held
    _pythoncode = _lambdacode = _print_value


class _FloatTest(BooleanFunction):
    """A test of a float's class (``isnan``, ``isinf``, ``isfinite``) as a sympy truth
    value, printed by name (NumPy's function of that name).  A number evaluates; a symbol
    or an expression stays, to be tested on the values when the compiled expression
    runs.  A symbol is real for sympy (finite by its assumptions), but it stands for the
    value the derivative is taken at, which may be nan or ±inf: deciding the test from the
    assumptions made ``where(isnan(x), 0, x * x)`` the square everywhere, nan at a nan
    (and so was its gradient).  Likewise sympy calls ``log(x)`` finite for a real x (a
    complex number below 0), where NumPy's log gives nan."""

    nargs = 1
    #: The answer for nan, for ±inf and for a finite value.
    answers: tuple[bool, bool, bool] = (False, False, False)

    @classmethod
    def eval(cls, x: Any) -> Any:
        """The truth value of a number, else None (a test on the values)."""
        nan, infinite, finite = cls.answers
        if x is sympy.nan:
            return sympy.sympify(nan)
        if not x.is_Number:
            return None
        if x.is_infinite:
            return sympy.sympify(infinite)
        if x.is_finite:
            return sympy.sympify(finite)
        return None

    def _print_by_name(self, printer: Any) -> str:
        """``isnan(x)`` in compiled code: the array function of that name (sympy's own
        printing of a truth value would rewrite it into and/or/not, forever)."""
        return f"{type(self).__name__}({printer._print(self.args[0])})"

    # (the printers of lambdify's modules: NumPy's, CuPy's, plain Python's)
    _numpycode = _cupycode = _pythoncode = _lambdacode = _print_by_name


class isnan(_FloatTest):  # noqa: N801
    """Whether x is nan (see ``_FloatTest``)."""

    answers = (True, False, False)


class isinf(_FloatTest):  # noqa: N801
    """Whether x is +inf or -inf (see ``_FloatTest``)."""

    answers = (False, True, False)


class isfinite(_FloatTest):  # noqa: N801
    """Whether x is neither inf nor nan (see ``_FloatTest``)."""

    answers = (False, False, True)


def truth(x: Any) -> Any:
    """x as a sympy truth value: a relation or logic as it is, a number ``x ≠ 0``."""
    if isinstance(x, (bool, np.bool_)):
        return sympy.sympify(bool(x))
    return x if isinstance(x, sympy.logic.boolalg.Boolean) else sympy.Ne(x, 0)


def number(x: Any) -> Any:
    """A truth value as the number 1 or 0, as a bool tensor is in arithmetic: a relation
    or logic (``x > 0``, ``Eq(x, 2) | Eq(x, 3)``) as ``Piecewise((1, c), (0, True))``, a
    bool as an int; anything else as it is."""
    if isinstance(x, (bool, np.bool_)):
        return int(x)
    if getattr(x, "is_Relational", False) or getattr(x, "is_Boolean", False):
        return sympy.Piecewise((1, x), (0, True))
    return x


def as_numbers(operands: Any) -> list:
    """The operands of ``+ - * / **`` with every truth value a number (:func:`number`):
    ``x * (x > 0)`` or ``x * dl.isin(x, t)`` of symbols, as of tensors, where sympy's own
    operators refuse to multiply a relation."""
    mapped = np.frompyfunc(number, 1, 1)
    return [mapped(v) if isinstance(v, np.ndarray) and v.dtype.kind in "bO" else number(v)
            for v in operands]


def trunc(x: Any) -> Any:
    """x rounded towards 0: ⌈x⌉ below 0, ⌊x⌋ above (sympy has no trunc)."""
    return sympy.Piecewise((sympy.ceiling(x), x < 0), (sympy.floor(x), True))


#: sympy's piecewise-constant functions, whose derivative sympy leaves unevaluated.
_STEPS = (sympy.floor, sympy.ceiling, sympy.frac)


def _is_step_derivative(e: Any) -> bool:
    """``Derivative(floor(x), x)``, or ``Subs(Derivative(floor(ξ), ξ), ξ, g(x))`` (the
    chain rule's form for ``floor(g(x))``)."""
    if isinstance(e, sympy.Subs):  # (its inner derivative may be replaced by 0 already)
        return e.expr == 0 or _is_step_derivative(e.expr)
    return isinstance(e, sympy.Derivative) and isinstance(e.expr, _STEPS)


def clean_derivative(e: Any) -> Any:
    """The derivative of a step is 0 almost everywhere: drop sympy's DiracDelta (of
    ``sign``, ``Heaviside``) and its unevaluated ``Derivative(floor(x), x)`` (of ``floor``,
    ``ceiling``: nothing could compile it), as forward and reverse mode give 0 there."""
    if e.has(sympy.DiracDelta):
        e = e.replace(sympy.DiracDelta, lambda *args: sympy.S.Zero)
    if e.has(sympy.Derivative):
        e = e.replace(_is_step_derivative, lambda d: sympy.S.Zero)
    return e


# ---------------------------------------- the Bessel functions of order 0 and 1, scaled
# (as sympy writes them: what the symbolic trace's namespace calls i0, i1e, erfcx, ...)


def i0(x: Any) -> Any:
    return sympy.besseli(0, x)


def i1(x: Any) -> Any:
    return sympy.besseli(1, x)


def i0e(x: Any) -> Any:
    return sympy.exp(-sympy.Abs(x)) * sympy.besseli(0, x)


def i1e(x: Any) -> Any:
    return sympy.exp(-sympy.Abs(x)) * sympy.besseli(1, x)


def bessel_j0(x: Any) -> Any:
    return sympy.besselj(0, x)


def bessel_j1(x: Any) -> Any:
    return sympy.besselj(1, x)


def scaled_modified_bessel_k0(x: Any) -> Any:
    return sympy.exp(x) * sympy.besselk(0, x)


def scaled_modified_bessel_k1(x: Any) -> Any:
    return sympy.exp(x) * sympy.besselk(1, x)


def erfcx(x: Any) -> Any:
    return sympy.exp(x * x) * sympy.erfc(x)
