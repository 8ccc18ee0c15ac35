r"""Elementwise primitives: each one's forward next to its local derivative.

This file is the table every differentiator reads.  A unary primitive
y = f(x) states two things:

* ``forward(xp, x)``: the value f(x);
* ``derivative(xp, x, y)``: the local derivative f'(x), allowed to reuse the
  output y (exp' = exp, tanh' = 1 - tanh², ...).

Forward mode multiplies a tangent by it:   ẏ = f'(x) · ẋ
Reverse mode multiplies an adjoint by it:  x̄ += f'(x) · ȳ

The same chain rule, read in two directions.  A binary primitive z = f(a, b)
states its two partial derivatives ∂z/∂a and ∂z/∂b in the same way.

``xp`` is an *array namespace*: anything with numpy's function names.  Passed
``numpy`` or ``cupy`` (with arrays), a rule computes numbers: the fast path.
Passed ``difflab.functions`` (with Tensors or Duals), the same rule is
itself recorded or differentiated, which is how difflab gets higher-order
derivatives without writing any rule twice.  The symbolic differentiator
passes a sympy namespace to ``forward`` to build expressions.

Conventions at kinks (documented, tested): the derivative of ``abs`` and
``relu`` at 0 is 0 (a valid subgradient, and what PyTorch returns);
``maximum``/``minimum`` split the gradient evenly between equal inputs.
"""

from __future__ import annotations

import cmath
import math
from typing import Any

from difflab import fastpath

Array = Any



def refuse_complex(name: str, why: str, *values: Any) -> None:
    """Refuse complex values where PyTorch does, saying why (a silent number would be wrong)."""
    for value in values:
        if getattr(getattr(value, "dtype", None), "kind", "") == "c":
            raise TypeError(f"{name} is not defined for complex values ({why}), as in "
                            f"PyTorch; apply it to z.real and z.imag, or to z.abs()")

class Unary:
    """A primitive y = f(x) of one argument, applied elementwise.

    Besides ``forward`` and ``derivative``, a rule carries what every other
    part of difflab needs to know about it, so nothing else lists primitives:

    * ``name``: ``difflab.<name>``, ``Tensor.<name>``, the name in expressions
      (``difflab compare "sin(x)"``) and on the tape;
    * ``numpy_name``: the NumPy ufunc it mirrors (``arcsin`` for ``asin``), so
      that ``np.arcsin(dual)`` reaches it too; ``""`` for none;
    * ``math``: the rule as a student writes it (the tape printer shows it);
    * ``description``: a few words for command-line help;
    * ``kinks``: the convention where f is not differentiable, if anywhere;
      ``not_differentiable(xp, x)`` says where (a boolean array; ``None``: nowhere), so
      that the comparisons can say "no derivative here" at such a point;
    * ``domain``: an interval inside f's domain where tests sample inputs.
    """

    name: str = ""
    numpy_name: str = ""
    math: str = ""  # the rule as a student would write it, shown by the tape printer
    description: str = ""
    kinks: str = ""
    domain: tuple[float, float] = (-2.0, 2.0)
    # Which of x, y the derivative reads: the engine keeps only those for backward.
    saves: str = "x"
    # Whether f maps integers to integers (neg, abs, relu).  If not, a tensor of
    # integers is made floating (the default dtype) before f runs, as in PyTorch.
    keeps_integers: bool = False

    @staticmethod
    def forward(xp, x):
        raise NotImplementedError

    @staticmethod
    def derivative(xp, x, y):
        """f'(x), given x and the already computed y = f(x)."""
        raise NotImplementedError

    @staticmethod
    def not_differentiable(xp, x):
        """Where f has no derivative (its kinks), as booleans; ``None``: f is smooth."""
        return None

    @classmethod
    def symbolic(cls, sp, x):
        """f(x) as a sympy expression (``sp`` is sympy's array namespace).

        The forward rule itself, unless sympy's own derivative of it would break
        the convention at a kink (see ``Relu``).
        """
        return cls.forward(sp, x)


class Binary:
    """A primitive z = f(a, b) of two arguments, applied elementwise with broadcasting.

    It carries the same description as :class:`Unary` (``name``, ``numpy_name``,
    ``math``, ``description``, ``kinks``, ``domain``).
    """

    name: str = ""
    numpy_name: str = ""
    math: str = ""
    description: str = ""
    kinks: str = ""
    domain: tuple[float, float] = (-2.0, 2.0)
    # What a face with a keyword of its own (``div``'s ``rounding_mode``) adds to its
    # docstring: numpydoc entries for Parameters, Raises, and more Examples.
    options: str = ""
    raises: str = ""
    examples: str = ""

    @staticmethod
    def forward(xp, a, b):
        raise NotImplementedError

    # Which of a, b, z each partial reads.  Backward keeps only what the partials it
    # will need read: for 100 * x, where only x needs a gradient, nothing of x is kept.
    needs_for_a: str = "abz"
    needs_for_b: str = "abz"
    # Whether two integers give an integer (a + b does; a / b and atan2 do not: their
    # integer operands are made floating, the default dtype, as in PyTorch).
    keeps_integers: bool = True

    @staticmethod
    def d_da(xp, a, b, z):
        """∂z/∂a, given a, b and z = f(a, b)."""
        raise NotImplementedError

    @staticmethod
    def d_db(xp, a, b, z):
        """∂z/∂b, given a, b and z = f(a, b)."""
        raise NotImplementedError

    @staticmethod
    def not_differentiable(xp, a, b):
        """Where f has no derivative (its kinks), as booleans; ``None``: f is smooth."""
        return None

    @classmethod
    def symbolic(cls, sp, a, b):
        """f(a, b) as a sympy expression (see :meth:`Unary.symbolic`)."""
        return cls.forward(sp, a, b)


# --------------------------------------------------------------------------- unary


class Neg(Unary):
    name, math = "neg", "d(-x)/dx = -1"
    saves = ""
    numpy_name, description = "negative", "minus x"
    keeps_integers = True

    @staticmethod
    def forward(xp, x):
        return -x

    @staticmethod
    def derivative(xp, x, y):
        return -1.0


class Exp(Unary):
    name, math = "exp", "d exp(x)/dx = exp(x)  (reuses the output)"
    saves = "y"
    numpy_name, description = "exp", "e to the x"

    @staticmethod
    def forward(xp, x):
        return xp.exp(x)

    @staticmethod
    def derivative(xp, x, y):
        return y


class Expm1(Unary):
    name, math = "expm1", "d (exp(x) - 1)/dx = exp(x) = y + 1"
    saves = "y"
    numpy_name, description = "expm1", "exp(x) - 1, accurate near 0"

    @staticmethod
    def forward(xp, x):
        return xp.expm1(x)

    @staticmethod
    def derivative(xp, x, y):
        return y + 1.0


class Log(Unary):
    name, math = "log", "d log(x)/dx = 1/x"
    numpy_name, description = "log", "natural logarithm"
    domain = (0.2, 3.0)

    @staticmethod
    def forward(xp, x):
        return xp.log(x)

    @staticmethod
    def derivative(xp, x, y):
        return 1.0 / x


class Log1p(Unary):
    name, math = "log1p", "d log(1 + x)/dx = 1/(1 + x)"
    numpy_name, description = "log1p", "log(1 + x), accurate near 0"
    domain = (-0.5, 3.0)

    @staticmethod
    def forward(xp, x):
        return xp.log1p(x)

    @staticmethod
    def derivative(xp, x, y):
        return 1.0 / (1.0 + x)


class Log10(Unary):
    name, math = "log10", "d log₁₀(x)/dx = 1/(x · ln 10)"
    numpy_name, description = "log10", "logarithm to base 10"
    domain = (0.2, 3.0)

    @staticmethod
    def forward(xp, x):
        return xp.log10(x)

    @staticmethod
    def derivative(xp, x, y):
        return 1.0 / (x * math.log(10.0))

    @classmethod
    def symbolic(cls, sp, x):
        # log₁₀ x = ln x / ln 10: the form every symbolic namespace has.
        return sp.log(x) / sp.log(10)


class Log2(Unary):
    name, math = "log2", "d log₂(x)/dx = 1/(x · ln 2)"
    numpy_name, description = "log2", "logarithm to base 2"
    domain = (0.2, 3.0)

    @staticmethod
    def forward(xp, x):
        if not hasattr(xp, "log2"):  # (mpmath, for high-precision references, has no log2)
            return xp.log(x) / xp.log(2.0)
        return xp.log2(x)

    @staticmethod
    def derivative(xp, x, y):
        return 1.0 / (x * math.log(2.0))

    @classmethod
    def symbolic(cls, sp, x):
        return sp.log(x) / sp.log(2)


class Sqrt(Unary):
    name, math = "sqrt", "d sqrt(x)/dx = 1/(2 sqrt(x))  (reuses the output)"
    saves = "y"
    numpy_name, description = "sqrt", "square root"
    domain = (0.2, 3.0)

    @staticmethod
    def forward(xp, x):
        return xp.sqrt(x)

    @staticmethod
    def derivative(xp, x, y):
        return 0.5 / y


class Sin(Unary):
    name, math = "sin", "d sin(x)/dx = cos(x)"
    numpy_name, description = "sin", "sine"
    domain = (-3.0, 3.0)

    @staticmethod
    def forward(xp, x):
        return xp.sin(x)

    @staticmethod
    def derivative(xp, x, y):
        return xp.cos(x)


class Cos(Unary):
    name, math = "cos", "d cos(x)/dx = -sin(x)"
    numpy_name, description = "cos", "cosine"
    domain = (-3.0, 3.0)

    @staticmethod
    def forward(xp, x):
        return xp.cos(x)

    @staticmethod
    def derivative(xp, x, y):
        return -xp.sin(x)


class Tan(Unary):
    name, math = "tan", "d tan(x)/dx = 1 + tan²(x)  (reuses the output)"
    saves = "y"
    numpy_name, description = "tan", "tangent"
    domain = (-1.2, 1.2)

    @staticmethod
    def forward(xp, x):
        return xp.tan(x)

    @staticmethod
    def derivative(xp, x, y):
        return 1.0 + y * y


class Arcsin(Unary):
    name, math = "asin", "d asin(x)/dx = 1/sqrt(1 - x²)"
    numpy_name, description = "arcsin", "inverse sine"
    domain = (-0.9, 0.9)

    @staticmethod
    def forward(xp, x):
        return xp.arcsin(x)

    @staticmethod
    def derivative(xp, x, y):
        return 1.0 / xp.sqrt(1.0 - x * x)


class Arccos(Unary):
    name, math = "acos", "d acos(x)/dx = -1/sqrt(1 - x²)"
    numpy_name, description = "arccos", "inverse cosine"
    domain = (-0.9, 0.9)

    @staticmethod
    def forward(xp, x):
        return xp.arccos(x)

    @staticmethod
    def derivative(xp, x, y):
        return -1.0 / xp.sqrt(1.0 - x * x)


class Arctan(Unary):
    name, math = "atan", "d atan(x)/dx = 1/(1 + x²)"
    numpy_name, description = "arctan", "inverse tangent"
    domain = (-3.0, 3.0)

    @staticmethod
    def forward(xp, x):
        return xp.arctan(x)

    @staticmethod
    def derivative(xp, x, y):
        return 1.0 / (1.0 + x * x)


class Arcsinh(Unary):
    name, math = "asinh", "d asinh(x)/dx = 1/sqrt(x² + 1)"
    numpy_name, description = "arcsinh", "inverse hyperbolic sine"

    @staticmethod
    def forward(xp, x):
        return xp.arcsinh(x)

    @staticmethod
    def derivative(xp, x, y):
        return 1.0 / xp.sqrt(x * x + 1.0)


class Arccosh(Unary):
    name, math = "acosh", "d acosh(x)/dx = 1/sqrt(x² - 1)  (x > 1)"
    numpy_name, description = "arccosh", "inverse hyperbolic cosine"
    domain = (1.2, 3.0)

    @staticmethod
    def forward(xp, x):
        return xp.arccosh(x)

    @staticmethod
    def derivative(xp, x, y):
        # (√(x-1)·√(x+1), not √(x²-1): the same for real x ≥ 1, and for complex x the
        # principal branch's derivative, whose sign √(x²-1) gets wrong for Re x < 0)
        return 1.0 / (xp.sqrt(x - 1.0) * xp.sqrt(x + 1.0))


class Arctanh(Unary):
    name, math = "atanh", "d atanh(x)/dx = 1/(1 - x²)  (|x| < 1)"
    numpy_name, description = "arctanh", "inverse hyperbolic tangent"
    domain = (-0.9, 0.9)

    @staticmethod
    def forward(xp, x):
        return xp.arctanh(x)

    @staticmethod
    def derivative(xp, x, y):
        return 1.0 / (1.0 - x * x)


class Sinh(Unary):
    name, math = "sinh", "d sinh(x)/dx = cosh(x)"
    numpy_name, description = "sinh", "hyperbolic sine"

    @staticmethod
    def forward(xp, x):
        return xp.sinh(x)

    @staticmethod
    def derivative(xp, x, y):
        return xp.cosh(x)


class Cosh(Unary):
    name, math = "cosh", "d cosh(x)/dx = sinh(x)"
    numpy_name, description = "cosh", "hyperbolic cosine"

    @staticmethod
    def forward(xp, x):
        return xp.cosh(x)

    @staticmethod
    def derivative(xp, x, y):
        return xp.sinh(x)


class Tanh(Unary):
    name, math = "tanh", "d tanh(x)/dx = 1 - tanh²(x)  (reuses the output)"
    saves = "y"
    numpy_name, description = "tanh", "hyperbolic tangent"

    @staticmethod
    def forward(xp, x):
        return xp.tanh(x)

    @staticmethod
    def derivative(xp, x, y):
        return 1.0 - y * y


class Sigmoid(Unary):
    name, math = "sigmoid", "d σ(x)/dx = σ(x)(1 - σ(x))  (reuses the output)"
    saves = "y"
    numpy_name, description = "", "logistic function 1/(1 + exp(-x))"
    domain = (-4.0, 4.0)

    @staticmethod
    def forward(xp, x):
        # 1/(1 + e^-x) overflows e^-x for very negative x; (1 + tanh(x/2))/2 never does.
        return 0.5 + 0.5 * xp.tanh(0.5 * x)

    @staticmethod
    def derivative(xp, x, y):
        return y * (1.0 - y)


class Relu(Unary):
    name, math = "relu", "d max(x, 0)/dx = 1 if x > 0 else 0  (0 at the kink x = 0)"
    saves = "y"
    numpy_name, description = "", "max(x, 0)"
    keeps_integers = True
    kinks = "derivative 0 at x = 0 (a subgradient; what PyTorch returns)"
    domain = (0.1, 2.0)

    @staticmethod
    def not_differentiable(xp, x):
        return x == 0

    @staticmethod
    def forward(xp, x):
        # 0, not 0.0: an integer tensor stays integer (keeps_integers).  The bound first:
        # NumPy's maximum gives its second argument on a tie, so relu(-0.0) is -0.0, x
        # itself, as PyTorch's (which replaces only x < 0); maximum(x, 0) gave 0.0.
        refuse_complex("relu", "they have no order", x)
        return xp.maximum(0, x)

    @staticmethod
    def derivative(xp, x, y):
        # sign(y) is 1 where the output y = max(x, 0) is positive and 0 elsewhere: the
        # same as "1 if x > 0 else 0", read off the output with a fast vectorized sign
        # (+ 0 turns sign(-0.0) = -0.0 into 0.0: the gradient at -0.0 is 0, as PyTorch's).
        return xp.sign(y) + 0

    @classmethod
    def symbolic(cls, sp, x):
        # sympy's Max(x, 0) has derivative Heaviside(x), undefined at 0; the piecewise
        # form has derivative 0 at the kink, the convention above.
        return sp.where(x > 0, x, 0)


class Abs(Unary):
    name, math = "abs", "d |x|/dx = sign(x)  (0 at the kink x = 0)"
    numpy_name, description = "absolute", "absolute value"
    keeps_integers = True
    kinks = "derivative 0 at x = 0 (a subgradient; what PyTorch returns)"
    domain = (0.1, 2.0)

    @staticmethod
    def not_differentiable(xp, x):
        return x == 0

    @staticmethod
    def forward(xp, x):
        return xp.abs(x)

    @staticmethod
    def derivative(xp, x, y):
        # a complex x: z̄ = ȳ·z/|z| (0 at 0), PyTorch's rule for |z|, written with operations
        # a recorded backward has (sign refuses complex values, as PyTorch's)
        if getattr(getattr(x, "dtype", None), "kind", "") == "c":
            size = xp.abs(x)
            return xp.where(size == 0, 0, x / xp.where(size == 0, 1, size))
        return xp.sign(x)


class Erf(Unary):
    name, math = "erf", "d erf(x)/dx = 2/sqrt(pi) · exp(-x²)"
    numpy_name, description = "erf", "error function"

    @staticmethod
    def forward(xp, x):
        return xp.erf(x)

    @staticmethod
    def derivative(xp, x, y):
        return (2.0 / math.sqrt(math.pi)) * xp.exp(-(x * x))


# -------------------------------------------------------------------------- binary


# The faces' own keyword (PyTorch's), ``difflab.add(a, b, alpha=2)``: b is scaled first.
_ALPHA = """
        alpha : number, optional
            The scale of ``other`` (PyTorch's keyword, default 1): ``input {} alpha * other``.
            A float ``alpha`` with integer operands is a RuntimeError, as in PyTorch.
"""


class Add(Binary):
    name, math = "add", "∂(a + b)/∂a = 1,  ∂(a + b)/∂b = 1"
    needs_for_a, needs_for_b = "", ""
    numpy_name, description = "add", "a + b"
    options = _ALPHA.format("+")

    @staticmethod
    def forward(xp, a, b):
        return a + b

    @staticmethod
    def d_da(xp, a, b, z):
        return 1.0

    @staticmethod
    def d_db(xp, a, b, z):
        return 1.0


class Sub(Binary):
    name, math = "sub", "∂(a - b)/∂a = 1,  ∂(a - b)/∂b = -1"
    needs_for_a, needs_for_b = "", ""
    numpy_name, description = "subtract", "a - b"
    options = _ALPHA.format("-")
    examples = """
        ``alpha`` scales ``other`` first, as in PyTorch:

        >>> dl.sub(dl.tensor([1.0, 2.0]), dl.tensor([10.0, 20.0]), alpha=2)
        tensor([-19., -38.])
    """

    @staticmethod
    def forward(xp, a, b):
        return a - b

    @staticmethod
    def d_da(xp, a, b, z):
        return 1.0

    @staticmethod
    def d_db(xp, a, b, z):
        return -1.0


class Mul(Binary):
    name, math = "mul", "∂(a·b)/∂a = b,  ∂(a·b)/∂b = a"
    needs_for_a, needs_for_b = "b", "a"
    numpy_name, description = "multiply", "a * b"

    @staticmethod
    def forward(xp, a, b):
        return a * b

    @staticmethod
    def d_da(xp, a, b, z):
        return b

    @staticmethod
    def d_db(xp, a, b, z):
        return a


class Div(Binary):
    name, math = "div", "∂(a/b)/∂a = 1/b,  ∂(a/b)/∂b = -a/b² = -z/b"
    needs_for_a, needs_for_b = "b", "bz"
    numpy_name, description = "divide", "a / b"
    keeps_integers = False
    domain = (0.5, 2.0)
    # The face's own keyword (PyTorch's): a rounded quotient is another primitive, with
    # no derivative (``floor_divide``, ``trunc_divide``), which ``difflab.div`` applies.
    options = """
        rounding_mode : {None, "trunc", "floor"}, optional
            None (the default): true division, this rule (integers are made floating).
            ``"trunc"``: the quotient rounded towards zero (C's integer ``/``);
            ``"floor"``: rounded down, as :func:`difflab.floor_divide` (Python's
            ``//``).  A rounded quotient keeps integers integers and has no derivative:
            nothing is recorded (PyTorch records a zero gradient), as for ``floor``.
    """
    raises = """
        RuntimeError
            For a ``rounding_mode`` string other than ``"trunc"`` and ``"floor"`` (one
            that is no string nor None: a TypeError).
        ZeroDivisionError
            With a ``rounding_mode``, for integers divided by 0 (the error is also a
            RuntimeError, as PyTorch's); floats give inf or nan.
    """
    examples = """
        A rounding mode rounds the quotient; integers stay integers:

        >>> dl.div(dl.tensor([7, -7]), 2, rounding_mode="trunc")
        tensor([ 3, -3])
        >>> dl.div(dl.tensor([7.0, -7.0]), 2, rounding_mode="floor")
        tensor([ 3., -4.])
    """

    @staticmethod
    def forward(xp, a, b):
        return a / b

    @staticmethod
    def d_da(xp, a, b, z):
        return 1.0 / b

    @staticmethod
    def d_db(xp, a, b, z):
        return -z / b


class Pow(Binary):
    name, math = "pow", "∂(aᵇ)/∂a = b·aᵇ⁻¹,  ∂(aᵇ)/∂b = aᵇ·log(a)"
    needs_for_a, needs_for_b = "ab", "az"
    numpy_name, description = "power", "pow(a, b) = a**b"
    kinks = "∂/∂b is taken as 0 where a ≤ 0 (log a is undefined there; complex a: at 0)"
    domain = (0.5, 2.0)

    @staticmethod
    def forward(xp, a, b):
        return a**b

    @staticmethod
    @fastpath.square_shortcut  # (with the shortcuts on: 2·a for b = 2, in one pass)
    def d_da(xp, a, b, z):
        return b * a ** (b - 1.0)

    @staticmethod
    def d_db(xp, a, b, z):
        # log(a) is NaN for a < 0 even where b is an integer and aᵇ is fine;
        # ∂/∂b is only meaningful for a > 0, so it is set to 0 elsewhere.
        # A complex a has a logarithm (the principal one, PyTorch's) everywhere but at 0.
        if not hasattr(a, "shape"):  # a number, as in 2 ** x (CuPy's where takes arrays only)
            if isinstance(a, complex):
                return z * (cmath.log(a) if a != 0 else 0.0)
            return z * (math.log(a) if a > 0 else 0.0)
        if getattr(a.dtype, "kind", None) == "c":
            return z * xp.log(xp.where(a == 0, 1.0, a))
        return z * xp.log(xp.where(a > 0, a, 1.0))


class Maximum(Binary):
    name, math = "maximum", "∂max(a,b)/∂a = 1 if a > b, 0 if a < b, 1/2 on ties"
    needs_for_a, needs_for_b = "ab", "ab"
    numpy_name, description = "maximum", "larger of two values"
    kinks = "equal inputs share the gradient: 1/2 each"

    @staticmethod
    def not_differentiable(xp, a, b):
        return a == b

    @staticmethod
    def forward(xp, a, b):
        refuse_complex("maximum", "they have no order", a, b)
        return xp.maximum(a, b)

    @staticmethod
    def d_da(xp, a, b, z):
        return xp.heaviside(a - b, 0.5)

    @staticmethod
    def d_db(xp, a, b, z):
        return xp.heaviside(b - a, 0.5)


class Minimum(Binary):
    name, math = "minimum", "∂min(a,b)/∂a = 1 if a < b, 0 if a > b, 1/2 on ties"
    needs_for_a, needs_for_b = "ab", "ab"
    numpy_name, description = "minimum", "smaller of two values"
    kinks = "equal inputs share the gradient: 1/2 each"

    @staticmethod
    def not_differentiable(xp, a, b):
        return a == b

    @staticmethod
    def forward(xp, a, b):
        refuse_complex("minimum", "they have no order", a, b)
        return xp.minimum(a, b)

    @staticmethod
    def d_da(xp, a, b, z):
        return xp.heaviside(b - a, 0.5)

    @staticmethod
    def d_db(xp, a, b, z):
        return xp.heaviside(a - b, 0.5)


class Arctan2(Binary):
    name, math = "atan2", "∂atan2(a,b)/∂a = b/(a²+b²),  ∂atan2(a,b)/∂b = -a/(a²+b²)"
    needs_for_a, needs_for_b = "ab", "ab"
    numpy_name, description = "arctan2", "angle of the point (b, a)"
    keeps_integers = False
    domain = (0.5, 2.0)

    @staticmethod
    def forward(xp, a, b):
        return xp.arctan2(a, b)

    @staticmethod
    def d_da(xp, a, b, z):
        return b / (a * a + b * b)

    @staticmethod
    def d_db(xp, a, b, z):
        return -a / (a * a + b * b)


#: Every elementwise rule difflab ships, in the order the registry lists them.
UNARY_RULES: tuple[type[Unary], ...] = (
    Neg, Exp, Expm1, Log, Log1p, Log10, Log2, Sqrt, Sin, Cos, Tan, Arcsin, Arccos, Arctan,
    Arcsinh, Arccosh, Arctanh, Sinh, Cosh, Tanh, Sigmoid, Relu, Abs, Erf,
)
BINARY_RULES: tuple[type[Binary], ...] = (Add, Sub, Mul, Div, Pow, Maximum, Minimum, Arctan2)
