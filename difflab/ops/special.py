r"""The special functions as primitives: log-gamma, digamma, polygamma, erfc, erfinv.

Each is written as the rules of :mod:`difflab.ops.elementwise` are (the
function next to its local derivative), so registration gives it every face
and every method.  They form a chain, which is why they come together:

    d lgamma(x)/dx = digamma(x) = ψ(x)
    d ψ(x)/dx      = polygamma(1, x) = ψ⁽¹⁾(x)
    d ψ⁽ⁿ⁾(x)/dx   = ψ⁽ⁿ⁺¹⁾(x)

A derivative rule calls the next function of the chain through ``xp``, so on
tensors it is itself recorded (``create_graph=True``), on dual numbers
pushed, on sympy symbols ``polygamma(n + 1, x)``: every order comes from one
line.  ``polygamma`` has a setting (the order n, a non-negative integer that
is not differentiated), so it is a :class:`Primitive` with faces rather than
a plain rule.

The values come from scipy.special on NumPy (cupyx.scipy.special on CuPy:
``backend.SPECIAL_FUNCTIONS``), sympy's ``loggamma``/``polygamma``/``erfc``/
``erfinv`` in symbolic form, mpmath's for 50-digit references.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from difflab import backend
from difflab.ops.elementwise import Unary, refuse_complex
from difflab.ops.primitive import Primitive
from difflab.ops.shapes import broadcast_shape, lift, shape_of, sum_to_shape

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


class Lgamma(Unary):
    name, math = "lgamma", "d log|Γ(x)|/dx = ψ(x)  (digamma)"
    description = "logarithm of the absolute value of the gamma function"
    kinks = "+inf at x = 0, -1, -2, ... (the poles of Γ), where no derivative exists"
    domain = (0.3, 4.0)

    @staticmethod
    def forward(xp, x):
        return xp.lgamma(x)

    @staticmethod
    def derivative(xp, x, y):
        return xp.digamma(x)


class Digamma(Unary):
    name, math = "digamma", "d ψ(x)/dx = ψ⁽¹⁾(x) = polygamma(1, x)"
    description = "digamma function ψ(x) = Γ'(x)/Γ(x)"
    kinks = "poles at x = 0, -1, -2, ... (where PyTorch gives -inf at 0)"
    domain = (0.3, 4.0)

    @staticmethod
    def forward(xp, x):
        refuse_complex("digamma", "its derivative, polygamma, has none for them here", x)
        return xp.digamma(x)

    @staticmethod
    def derivative(xp, x, y):
        return xp.polygamma(1, x)


class Erfc(Unary):
    name, math = "erfc", "d erfc(x)/dx = -2/sqrt(pi) · exp(-x²)"
    numpy_name, description = "erfc", "complementary error function 1 - erf(x)"

    @staticmethod
    def forward(xp, x):
        return xp.erfc(x)

    @staticmethod
    def derivative(xp, x, y):
        return -_TWO_OVER_SQRT_PI * xp.exp(-(x * x))


class Erfinv(Unary):
    name, math = "erfinv", "d erfinv(x)/dx = sqrt(pi)/2 · exp(erfinv(x)²)  (reuses the output)"
    saves = "y"
    numpy_name, description = "erfinv", "inverse error function (|x| < 1)"
    kinks = "±inf at x = ±1"
    domain = (-0.9, 0.9)

    @staticmethod
    def forward(xp, x):
        return xp.erfinv(x)

    @staticmethod
    def derivative(xp, x, y):
        # The inverse function's derivative: 1 / erf'(y) at y = erfinv(x).
        return xp.exp(y * y) / _TWO_OVER_SQRT_PI


class Erfcx(Unary):
    name, math = "erfcx", "d erfcx(x)/dx = 2x · erfcx(x) - 2/sqrt(pi)  (reuses the output)"
    saves = "xy"
    description = "scaled complementary error function exp(x²) · erfc(x)"

    @staticmethod
    def forward(xp, x):
        return xp.erfcx(x)

    @staticmethod
    def derivative(xp, x, y):
        return 2.0 * x * y - _TWO_OVER_SQRT_PI


def _over_x(xp, x, value, at_zero):
    """``value / x``, with its limit ``at_zero`` where x = 0 (never 0/0: both branches of
    the ``where`` stay finite, so its own derivative is finite too)."""
    zero = x == 0
    return xp.where(zero, at_zero, value / xp.where(zero, 1.0, x))


class BesselI0(Unary):
    name, math = "i0", "d I₀(x)/dx = I₁(x)"
    numpy_name, description = "i0", "modified Bessel function of the first kind, order 0"

    @staticmethod
    def forward(xp, x):
        return xp.i0(x)

    @staticmethod
    def derivative(xp, x, y):
        return xp.i1(x)


class BesselI1(Unary):
    name, math = "i1", "d I₁(x)/dx = I₀(x) - I₁(x)/x  (1/2 at x = 0)"
    saves = "xy"
    numpy_name, description = "i1", "modified Bessel function of the first kind, order 1"

    @staticmethod
    def forward(xp, x):
        return xp.i1(x)

    @staticmethod
    def derivative(xp, x, y):
        return xp.i0(x) - _over_x(xp, x, y, 0.5)


class BesselI0e(Unary):
    name, math = "i0e", "d (e^-|x| I₀(x))/dx = i1e(x) - sign(x) · i0e(x)  (reuses the output)"
    saves = "xy"
    numpy_name, description = "i0e", "exponentially scaled modified Bessel function, order 0"
    kinks = "derivative 0 at x = 0 (|x| has a kink there; its two sides are ±1)"

    @staticmethod
    def forward(xp, x):
        return xp.i0e(x)

    @staticmethod
    def derivative(xp, x, y):
        return xp.i1e(x) - xp.sign(x) * y


class BesselI1e(Unary):
    name, math = "i1e", "d i1e(x)/dx = i0e(x) - i1e(x) · (sign(x) + 1/x)  (1/2 at x = 0)"
    saves = "xy"
    numpy_name, description = "i1e", "exponentially scaled modified Bessel function, order 1"

    @staticmethod
    def forward(xp, x):
        return xp.i1e(x)

    @staticmethod
    def derivative(xp, x, y):
        return xp.i0e(x) - xp.sign(x) * y - _over_x(xp, x, y, 0.5)


class BesselJ0(Unary):
    name, math = "bessel_j0", "d J₀(x)/dx = -J₁(x)"
    description = "Bessel function of the first kind, order 0"
    domain = (-4.0, 4.0)

    @staticmethod
    def forward(xp, x):
        return xp.bessel_j0(x)

    @staticmethod
    def derivative(xp, x, y):
        return -xp.bessel_j1(x)


class BesselJ1(Unary):
    name, math = "bessel_j1", "d J₁(x)/dx = J₀(x) - J₁(x)/x  (1/2 at x = 0)"
    saves = "xy"
    description = "Bessel function of the first kind, order 1"
    domain = (-4.0, 4.0)

    @staticmethod
    def forward(xp, x):
        return xp.bessel_j1(x)

    @staticmethod
    def derivative(xp, x, y):
        return xp.bessel_j0(x) - _over_x(xp, x, y, 0.5)


class ScaledBesselK0(Unary):
    name = "scaled_modified_bessel_k0"
    math = "d (eˣ K₀(x))/dx = k0e(x) - k1e(x)  (reuses the output)"
    saves = "xy"
    description = "exponentially scaled modified Bessel function of the second kind, order 0"
    kinks = "+inf at x = 0; NaN for x < 0"
    domain = (0.3, 4.0)

    @staticmethod
    def forward(xp, x):
        return xp.scaled_modified_bessel_k0(x)

    @staticmethod
    def derivative(xp, x, y):
        return y - xp.scaled_modified_bessel_k1(x)


class ScaledBesselK1(Unary):
    name = "scaled_modified_bessel_k1"
    math = "d (eˣ K₁(x))/dx = k1e(x) (1 - 1/x) - k0e(x)  (reuses the output)"
    saves = "xy"
    description = "exponentially scaled modified Bessel function of the second kind, order 1"
    kinks = "+inf at x = 0; NaN for x < 0"
    domain = (0.3, 4.0)

    @staticmethod
    def forward(xp, x):
        return xp.scaled_modified_bessel_k1(x)

    @staticmethod
    def derivative(xp, x, y):
        return y - y / x - xp.scaled_modified_bessel_k0(x)


class Polygamma(Primitive):
    r"""y = ψ⁽ⁿ⁾(x), the n-th derivative of the digamma function (n = 0: digamma).

    dy/dx = ψ⁽ⁿ⁺¹⁾(x): the same primitive one order up, so the JVP ẏ = ψ⁽ⁿ⁺¹⁾(x) · ẋ
    and the VJP x̄ = ψ⁽ⁿ⁺¹⁾(x) · ȳ (elementwise: the Jacobian is diagonal, its own
    transpose).  The order n is a setting, not an input: it has no derivative.

    .. math:: \psi^{(n)}(x) = \frac{d^{n+1}}{dx^{n+1}} \log \Gamma(x), \qquad
              \frac{d}{dx} \psi^{(n)}(x) = \psi^{(n+1)}(x)
    """

    name = "polygamma"
    math = "d ψ⁽ⁿ⁾(x)/dx = ψ⁽ⁿ⁺¹⁾(x)"
    description = "n-th derivative of the digamma function"
    dl_function = "polygamma"  # dl.polygamma(n, x); x.polygamma(n) is attached by hand
    doc = """
        Parameters
        ----------
        n : int
            The order, n >= 0 (0: digamma, 1: trigamma, ...).  Not differentiable.
        input : Tensor, array, float, Dual or sympy expressions
            The points x (poles at 0, -1, -2, ...).

        Returns
        -------
        Tensor, array, float, Dual or sympy expressions
            ψ⁽ⁿ⁾(x), elementwise, in ``input``'s floating dtype.

        Raises
        ------
        TypeError
            If ``n`` is not an integer (the order comes first, as in PyTorch).
        ValueError
            If ``n`` is negative.

        See Also
        --------
        difflab.digamma : ψ = ψ⁽⁰⁾.
        difflab.lgamma : log Γ, whose derivative is ψ.
        difflab.Tensor.polygamma : ``x.polygamma(n)``.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([1.0, 2.0], requires_grad=True)
        >>> y = dl.polygamma(1, x)          # ψ'(1) = π²/6
        >>> y
        tensor([1.6449, 0.6449], grad_fn=<...>)
        >>> y.sum().backward()
        >>> x.grad                          # ψ''(x), one order up
        tensor([-2.4041, -0.4041])
    """
    fusion = None

    @staticmethod
    def arguments(n, input):  # noqa: A002
        """``polygamma(n, input)``: ψ⁽ⁿ⁾(input), the n-th derivative of the digamma
        function (n = 0 is digamma itself), elementwise; n is a non-negative integer."""
        if isinstance(n, bool) or not isinstance(n, int):
            try:
                n = operator.index(n)
            except TypeError:
                raise TypeError(f"polygamma(n, input) takes the order n as a non-negative "
                                f"integer first, got {type(n).__name__} {n!r}") from None
        if n < 0:
            raise ValueError(f"polygamma(n, input) needs an order n >= 0, got n = {n}")
        return (input,), {"n": int(n)}

    @staticmethod
    def symbolic(sp, x, n):
        return sp.elementwise(lambda v: sp.polygamma(n, v), x)

    @staticmethod
    def forward(ctx, xp, x, n):
        ctx.n = n
        ctx.save(x)
        y = xp.polygamma(n, x)
        dtype = getattr(x, "dtype", None)  # (scipy answers in float64 for float32 input)
        if getattr(dtype, "kind", "") == "f" and y.dtype != dtype:
            return y.astype(dtype)
        return y

    @staticmethod
    def vjp(ctx, xp, g, x):
        return (g * xp.polygamma(ctx.n + 1, x),)

    @staticmethod
    def jvp(ctx, xp, dx, x):
        return dx * xp.polygamma(ctx.n + 1, x)


class _InSecondArgument(Primitive):
    """y = f(a, x), elementwise with broadcasting, differentiable in x only (as in PyTorch).

    VJP: x̄ = sum_to_shape(ȳ · ∂f/∂x); JVP: ẏ = ∂f/∂x · ẋ.  A gradient in ``a`` is
    refused with a clear error instead of a silent zero.
    """

    fusion = None
    first: str = "a"

    @classmethod
    def d_dx(cls, xp, a, x):
        raise NotImplementedError

    @classmethod
    def _refuse(cls) -> NotImplementedError:
        return NotImplementedError(
            f"{cls.name}: the derivative in its first argument ({cls.first}) is not "
            f"implemented (PyTorch has none either); pass {cls.first} as a constant (no "
            f"requires_grad), or detach it")

    @staticmethod
    def arguments(input, other):  # noqa: A002
        """``f(input, other)``, elementwise with broadcasting; differentiable in ``other``."""
        return (input, other), {}

    @classmethod
    def forward(cls, ctx, xp, a, x):
        ctx.a_shape, ctx.x_shape = shape_of(a), shape_of(x)
        if ctx.needs_input_grad and ctx.needs_input_grad[0]:
            raise cls._refuse()
        ctx.save(a, x)
        return _in_dtype(cls.value(xp, a, x), a, x)

    @classmethod
    def vjp(cls, ctx, xp, g, a, x):
        return None, sum_to_shape(g * cls.d_dx(xp, a, x), ctx.x_shape)

    @classmethod
    def jvp(cls, ctx, xp, da, dx, a, x):
        if da is not None:
            raise cls._refuse()
        out_shape = broadcast_shape(ctx.a_shape, ctx.x_shape)
        out = lift(dx, len(out_shape)) * cls.d_dx(xp, a, x)
        if out.shape[1:] != out_shape:
            out = xp.broadcast_to(out, out.shape[:1] + out_shape)
        return out


def _in_dtype(y: Any, a: Any, x: Any) -> Any:
    """``y`` in the floating dtype PyTorch gives f(a, x): a 0-d operand (a Python number,
    made a 0-d float64 array on the way in) does not widen a float32 tensor, as in
    PyTorch's type promotion (SciPy's ufuncs would answer in float64)."""
    if not isinstance(y, (np.ndarray, np.generic)) and not backend.is_gpu_array(y):
        return y  # (dual numbers, sympy expressions: their own types)
    floats = [v for v in (a, x) if getattr(getattr(v, "dtype", None), "kind", "") == "f"]
    ranked = [v for v in floats if v.ndim] or floats
    if not ranked or y.dtype.kind != "f":
        return y
    dtype = np.result_type(*(v.dtype for v in ranked))
    return y if y.dtype == dtype else y.astype(dtype)


class Zeta(_InSecondArgument):
    r"""The Hurwitz zeta function ζ(s, q) = Σₖ₌₀^∞ (k + q)^(-s), for s > 1.

    ∂ζ/∂q = -s ζ(s + 1, q): the same primitive again, so every order comes from it.
    """

    name, first = "zeta", "s"
    math = "∂ζ(s, q)/∂q = -s · ζ(s + 1, q)"
    description = "Hurwitz zeta function"
    dl_function = "zeta"
    doc = """
        Parameters
        ----------
        input : Tensor, array or float
            The exponent s > 1 (a constant: no gradient in it).
        other : Tensor, array, float, Dual or sympy expressions
            The shift q > 0 (broadcast against ``input``).

        Returns
        -------
        Tensor, array, float, Dual or sympy expressions
            ζ(s, q), elementwise, of the broadcast shape.  ζ(s, 1) is Riemann's ζ(s).

        Raises
        ------
        NotImplementedError
            When a gradient in s is asked for (s requires grad, or has a tangent):
            PyTorch has none either.
        ValueError
            If the shapes do not broadcast.

        See Also
        --------
        difflab.polygamma : ψ⁽ⁿ⁾(x) = (-1)ⁿ⁺¹ n! ζ(n + 1, x).

        Examples
        --------
        >>> import difflab as dl
        >>> q = dl.tensor([1.0, 2.0], requires_grad=True)
        >>> y = dl.zeta(2.0, q)             # ζ(2) = π²/6, then ζ(2) - 1
        >>> y
        tensor([1.6449, 0.6449], grad_fn=<...>)
        >>> y.sum().backward()
        >>> q.grad                          # -2 ζ(3, q)
        tensor([-2.4041, -0.4041])
    """

    @staticmethod
    def arguments(input, other):  # noqa: A002
        """``zeta(input, other)``: ζ(s, q) = Σₖ (k + q)^(-s) with s = ``input`` and
        q = ``other``, elementwise with broadcasting; differentiable in q only."""
        return (input, other), {}

    @staticmethod
    def value(xp, a, x):
        return xp.zeta(a, x)

    @classmethod
    def d_dx(cls, xp, a, x):
        return -a * xp.zeta(a + 1.0, x)

    @staticmethod
    def symbolic(sp, a, x):
        return sp.elementwise(sp.zeta, a, x)


class Gammainc(_InSecondArgument):
    r"""The regularized lower incomplete gamma function P(a, x) = γ(a, x)/Γ(a).

    ∂P/∂x = x^(a-1) e^(-x) / Γ(a), the gamma density (written with ``lgamma``).
    """

    name = "gammainc"
    math = "∂P(a, x)/∂x = x^(a-1) e^(-x) / Γ(a)"
    description = "regularized lower incomplete gamma function"
    dl_function = "gammainc"
    doc = """
        Parameters
        ----------
        input : Tensor, array or float
            The shape a > 0 (a constant: no gradient in it).
        other : Tensor, array, float, Dual or sympy expressions
            The point x >= 0 (broadcast against ``input``).

        Returns
        -------
        Tensor, array, float, Dual or sympy expressions
            P(a, x) in [0, 1], elementwise, of the broadcast shape: the probability
            that a Gamma(a, 1) variable is at most x.

        Raises
        ------
        NotImplementedError
            When a gradient in a is asked for (PyTorch has none either).
        ValueError
            If the shapes do not broadcast.

        See Also
        --------
        difflab.gammaincc : the upper one, Q = 1 - P.
        difflab.lgamma : log Γ.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([0.5, 2.0], requires_grad=True)
        >>> y = dl.gammainc(1.0, x)         # a = 1: 1 - e^(-x)
        >>> y
        tensor([0.3935, 0.8647], grad_fn=<...>)
        >>> y.sum().backward()
        >>> x.grad                          # the Gamma(1) density e^(-x)
        tensor([0.6065, 0.1353])
    """

    @staticmethod
    def arguments(input, other):  # noqa: A002
        """``gammainc(input, other)``: P(a, x) = γ(a, x) / Γ(a) with a = ``input`` and
        x = ``other``, elementwise with broadcasting; differentiable in x only."""
        return (input, other), {}

    @staticmethod
    def value(xp, a, x):
        return xp.gammainc(a, x)

    @classmethod
    def d_dx(cls, xp, a, x):
        return xp.exp((a - 1.0) * xp.log(x) - x - xp.lgamma(a))

    @staticmethod
    def symbolic(sp, a, x):
        return sp.elementwise(sp.gammainc, a, x)


class Gammaincc(Gammainc):
    r"""The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""

    name = "gammaincc"
    math = "∂Q(a, x)/∂x = -x^(a-1) e^(-x) / Γ(a)"
    description = "regularized upper incomplete gamma function"
    dl_function = "gammaincc"
    doc = """
        Parameters
        ----------
        input : Tensor, array or float
            The shape a > 0 (a constant: no gradient in it).
        other : Tensor, array, float, Dual or sympy expressions
            The point x >= 0 (broadcast against ``input``).

        Returns
        -------
        Tensor, array, float, Dual or sympy expressions
            Q(a, x) = 1 - P(a, x) in [0, 1], elementwise: the probability that a
            Gamma(a, 1) variable exceeds x.

        Raises
        ------
        NotImplementedError
            When a gradient in a is asked for (PyTorch has none either).
        ValueError
            If the shapes do not broadcast.

        See Also
        --------
        difflab.gammainc : the lower one, P.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([0.5, 2.0], requires_grad=True)
        >>> y = dl.gammaincc(1.0, x)        # a = 1: e^(-x)
        >>> y
        tensor([0.6065, 0.1353], grad_fn=<...>)
        >>> y.sum().backward()
        >>> x.grad                          # minus the Gamma(1) density
        tensor([-0.6065, -0.1353])
        >>> dl.gammainc(2.0, dl.tensor([1.0])) + dl.gammaincc(2.0, dl.tensor([1.0]))
        tensor([1.])
    """

    @staticmethod
    def arguments(input, other):  # noqa: A002
        """``gammaincc(input, other)``: Q(a, x) = Γ(a, x) / Γ(a) = 1 - P(a, x) with
        a = ``input`` and x = ``other``, elementwise with broadcasting; differentiable in
        x only."""
        return (input, other), {}

    @staticmethod
    def value(xp, a, x):
        return xp.gammaincc(a, x)

    @classmethod
    def d_dx(cls, xp, a, x):
        return -Gammainc.d_dx(xp, a, x)

    @staticmethod
    def symbolic(sp, a, x):
        return sp.elementwise(sp.gammaincc, a, x)


#: The special-function rules, in the order the registry lists them.
UNARY_RULES: tuple[type[Unary], ...] = (Lgamma, Digamma, Erfc, Erfinv, Erfcx, BesselI0, BesselI1,
                                        BesselI0e, BesselI1e, BesselJ0, BesselJ1,
                                        ScaledBesselK0, ScaledBesselK1)
