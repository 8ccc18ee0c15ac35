"""The remainders, elementwise rules with a derivative: ``fmod`` and ``remainder``; and
two functions of a float's bits, ``copysign`` and ``nextafter``.

``fmod(a, b)`` is C's remainder, ``a - b·trunc(a / b)``, with the sign of ``a``;
``remainder(a, b)`` is Python's ``a % b``, ``a - b·floor(a / b)``, with the sign of
``b``.  Both are NumPy's own functions (exact: no ``a - b·q`` computed in floating point,
whose cancellation loses every digit once the quotient is large), and both have
PyTorch's derivative: 1 in ``a``, minus the rounded quotient in ``b``, which the rules
read from the saved result as ``(z - a) / b`` (only arithmetic: the same line runs on
arrays, recorded tensors and dual numbers).  Where the result is not finite (``b = 0``,
an infinite ``a``, ``remainder(-4.0, inf)`` = inf) that gradient is nan, where PyTorch
gives ``-trunc(a / 0)`` = ∓inf, or 1.  A zero result's sign is NumPy's: ``fmod(-4.0,
2.0)`` is -0.0 (the dividend's), ``remainder(-4.0, 2.0)`` is 0.0 (the divisor's; PyTorch
gives -0.0 there).  The rounded quotients themselves
(``floor_divide``, ``div(..., rounding_mode="trunc")``) have no derivative: they are in
:mod:`difflab.ops.logic`, and share this module's check of an integer division by zero.

``copysign(a, b)`` is ``|a|`` with the sign bit of ``b`` (of ``-0.0`` and ``-nan`` too):
PyTorch's derivative is ``z / a`` in ``a`` (±1; 0 at ``a = 0``, nan where ``a`` is inf or
nan) and 0 in ``b``, whose gradient is zeros (a sign is piecewise constant).
``nextafter(a, b)`` is the float next to ``a`` in the direction of ``b`` (``b`` itself
where they are equal): one unit in the last place from ``a``, so PyTorch differentiates
it as ``a`` itself, 1 in ``a`` where ``a != b`` and 0 where they are equal, 0 in ``b``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from difflab.ops.elementwise import Binary


class IntegerDivisionError(ZeroDivisionError, RuntimeError):
    """An integer divided by zero (``//``, ``%``, ``fmod``, ``div`` with a ``rounding_mode``).

    Both a ``ZeroDivisionError``, as Python's ``1 // 0``, and a ``RuntimeError``, what
    PyTorch raises there (with the message ``ZeroDivisionError``): code written for
    either catches it.
    """


def _integer_kind(x: Any) -> bool:
    if isinstance(x, (bool, int, np.integer, np.bool_)):
        return True
    kind = getattr(getattr(x, "dtype", None), "kind", None)
    return kind is not None and kind in "iub"  # (a sympy or jit expression: not checked)


def check_integer_divisor(a: Any, b: Any) -> None:
    """Raise :class:`IntegerDivisionError` where integers ``a`` are divided by a ``b`` of
    0, as PyTorch does (NumPy would warn and give 0); floats give inf or nan, and an
    empty result divides nothing."""
    if not (_integer_kind(a) and _integer_kind(b)):
        return
    if 0 in np.broadcast_shapes(np.shape(a), np.shape(b)):
        return
    zero = b == 0
    if bool(zero.any() if hasattr(zero, "any") else zero):
        raise IntegerDivisionError(
            "integer division or modulo by zero: a divisor is 0 (make the tensor "
            "floating with .float() to get inf or nan instead)")


_RAISES = """
    ZeroDivisionError
        For integers divided by 0 (the error is also a RuntimeError, as PyTorch's);
        floats give nan.
"""


class Fmod(Binary):
    name = "fmod"
    math = "∂fmod(a,b)/∂a = 1,  ∂fmod(a,b)/∂b = -trunc(a/b) = (z - a)/b"
    needs_for_a, needs_for_b = "", "abz"
    numpy_name, description = "fmod", "C's remainder a - b·trunc(a / b), the sign of a"
    kinks = "z jumps where a / b is an integer (b divides a)"
    domain = (0.5, 2.0)
    raises = _RAISES
    examples = """
        The sign is the dividend's (:func:`difflab.remainder`'s is the divisor's);
        integers stay integers, and the values are exact:

        >>> dl.fmod(dl.tensor([-7, 7]), 3), dl.remainder(dl.tensor([-7, 7]), 3)
        (tensor([-1,  1]), tensor([2, 1]))
        >>> dl.fmod(dl.tensor([5.5]), float("inf"))
        tensor([5.5])
    """

    @staticmethod
    def forward(xp, a, b):
        check_integer_divisor(a, b)
        return xp.fmod(a, b)

    @staticmethod
    def d_da(xp, a, b, z):
        return 1.0

    @staticmethod
    def d_db(xp, a, b, z):
        return (z - a) / b  # (the integer -trunc(a / b), from the saved z)

    @staticmethod
    def not_differentiable(xp, a, b):
        return xp.fmod(a, b) == 0


class Remainder(Binary):
    name = "remainder"
    math = "∂rem(a,b)/∂a = 1,  ∂rem(a,b)/∂b = -floor(a/b) = (z - a)/b"
    needs_for_a, needs_for_b = "", "abz"
    numpy_name, description = "remainder", "Python's a % b = a - b·floor(a / b), the sign of b"
    kinks = "z jumps where a / b is an integer (b divides a)"
    domain = (0.5, 2.0)
    raises = _RAISES
    examples = """
        ``a % b`` is this function; the sign is the divisor's, and a zero result is
        0.0 with the divisor's sign, as NumPy's (PyTorch keeps the dividend's there):

        >>> dl.tensor([-7.0, 7.0]) % 3, dl.remainder(dl.tensor([-7, 7]), -3)
        (tensor([2., 1.]), tensor([-1, -2]))
    """

    @staticmethod
    def forward(xp, a, b):
        check_integer_divisor(a, b)
        return xp.remainder(a, b)

    @staticmethod
    def d_da(xp, a, b, z):
        return 1.0

    @staticmethod
    def d_db(xp, a, b, z):
        return (z - a) / b  # (the integer -floor(a / b), from the saved z)

    @staticmethod
    def not_differentiable(xp, a, b):
        return xp.remainder(a, b) == 0


class Copysign(Binary):
    name = "copysign"
    math = "∂copysign(a,b)/∂a = z/a (±1; 0 at a = 0),  ∂copysign(a,b)/∂b = 0"
    needs_for_a, needs_for_b = "az", ""
    numpy_name, description = "copysign", "|a| with the sign bit of b"
    keeps_integers = False
    kinks = "the derivative in a is 0 at a = 0, PyTorch's (the sign of |a| turns there)"
    domain = (0.5, 2.0)
    examples = """
        The sign bit is read, so ``-0.0`` and a nan written ``-nan`` give a minus sign;
        integers give the default float dtype, as in PyTorch:

        >>> dl.copysign(dl.tensor([1.0, 2.0, 3.0]), dl.tensor([-0.0, 0.0, -float("nan")]))
        tensor([-1.,  2., -3.])
        >>> dl.copysign(dl.tensor([1, 2]), -1)
        tensor([-1., -2.])
    """

    @staticmethod
    def forward(xp, a, b):
        return xp.copysign(a, b)

    @staticmethod
    def d_da(xp, a, b, z):
        return xp.where(a == 0, 0.0, z / xp.where(a == 0, 1.0, a))  # (PyTorch's z/a, 0 at 0)

    @staticmethod
    def d_db(xp, a, b, z):
        return 0.0

    @staticmethod
    def not_differentiable(xp, a, b):
        return a == 0

    @classmethod
    def symbolic(cls, sp, a, b):
        if isinstance(b, (int, float, np.integer, np.floating)):  # (a constant's own sign
            return sp.abs(a) * math.copysign(1.0, b)                # bit, that of -0.0 too)
        return sp.where(b < 0, -sp.abs(a), sp.abs(a))


class Nextafter(Binary):
    name = "nextafter"
    math = "∂nextafter(a,b)/∂a = 1 where a ≠ b (0 where a = b),  ∂nextafter(a,b)/∂b = 0"
    needs_for_a, needs_for_b = "ab", ""
    numpy_name, description = "nextafter", "the float next to a towards b (b where a = b)"
    kinks = "the derivative in a is 0 where a = b (the result is b there), PyTorch's"
    domain = (0.5, 2.0)
    raises = """
    NotImplementedError
        For integer, bool or complex operands (only real floats have a next float), as
        PyTorch's: convert with ``.float()`` or ``.double()`` first.
"""
    examples = """
        One unit in the last place of the dtype, up or down; ``-0.0`` and ``0.0`` are
        next to the smallest subnormal, and equal operands give ``b``:

        >>> x = dl.tensor([1.0, 0.0, 2.0])
        >>> (dl.nextafter(x, dl.tensor([2.0, -1.0, 2.0])) - x).tolist()
        [1.1920928955078125e-07, -1.401298464324817e-45, 0.0]
        >>> x.double().nextafter(dl.tensor([2.0, 1.0, 0.0], dtype=dl.float64)).tolist()
        [1.0000000000000002, 5e-324, 1.9999999999999998]
    """

    @staticmethod
    def forward(xp, a, b):
        kinds = {getattr(getattr(v, "dtype", None), "kind", "") for v in (a, b)} - {""}
        if "c" in kinds or (kinds and kinds <= set("iub")):  # (a kernel's text: no dtype)
            raise NotImplementedError("nextafter is defined for real floating-point values "
                                      "only, got integer, bool or complex operands (as in "
                                      "PyTorch): "
                                      "convert with .float() or .double() first")
        return xp.nextafter(a, b)

    @staticmethod
    def d_da(xp, a, b, z):
        return xp.where(a != b, 1.0, 0.0 * a)  # (0·a: a's dtype, as the adjoint's)

    @staticmethod
    def d_db(xp, a, b, z):
        return 0.0

    @staticmethod
    def not_differentiable(xp, a, b):
        return a == b

    @classmethod
    def symbolic(cls, sp, a, b):
        return a  # (one unit in the last place away: the same derivative, away from a = b)


BINARY_RULES: tuple[type[Binary], ...] = (Fmod, Remainder, Copysign, Nextafter)
