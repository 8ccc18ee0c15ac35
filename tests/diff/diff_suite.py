"""The test-function suite: one definition per function, run on every number type.

Each function is written once with difflab's math functions.  Evaluated on
``mpmath.mpf`` numbers (through the small handler below, registered with
``difflab.functions.register_type``) it gives the 50-digit reference
derivative with ``mpmath.diff``; evaluated by the four differentiators it
gives the derivatives under test.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import mpmath
import numpy as np

import difflab as dl
from difflab.functions import TypeHandler, register_type

DIGITS = 50


# ------------------------------------------------------------- mpmath as a backend


def _heaviside(x: Any, at_zero: Any) -> Any:
    return mpmath.mpf(1) if x > 0 else mpmath.mpf(0) if x < 0 else mpmath.mpf(at_zero)


# NumPy's names answered by mpmath, for the rule table's ``forward``.
MP = SimpleNamespace(
    exp=mpmath.exp, expm1=mpmath.expm1, log=mpmath.log, log1p=mpmath.log1p, sqrt=mpmath.sqrt,
    sin=mpmath.sin, cos=mpmath.cos, tan=mpmath.tan, arcsin=mpmath.asin, arccos=mpmath.acos,
    arctan=mpmath.atan, arctan2=mpmath.atan2, sinh=mpmath.sinh, cosh=mpmath.cosh,
    tanh=mpmath.tanh, erf=mpmath.erf, abs=abs, sign=mpmath.sign, maximum=max, minimum=min,
    heaviside=_heaviside, where=lambda cond, a, b: a if cond else b,
)



class MpArray(np.ndarray):
    """An object array of mpf numbers: vectors for the references."""

    def __new__(cls, values: Any) -> MpArray:
        return np.asarray(values, dtype=object).view(cls)


def _map(function: Callable, *operands: Any) -> Any:
    if any(isinstance(o, np.ndarray) for o in operands):
        out = np.frompyfunc(function, len(operands), 1)(
            *(np.asarray(o, dtype=object) if isinstance(o, np.ndarray) else o for o in operands)
        )
        return MpArray(out) if isinstance(out, np.ndarray) else out
    return function(*operands)


class _MpHandler(TypeHandler):
    def unary(self, op: Any, x: Any) -> Any:
        return _map(lambda v: op.rule.forward(MP, mpmath.mpf(v)), x)

    def binary(self, op: Any, a: Any, b: Any) -> Any:
        return _map(lambda u, v: op.rule.forward(MP, mpmath.mpf(u), mpmath.mpf(v)), a, b)

    def where(self, cond: Any, a: Any, b: Any) -> Any:
        return _map(MP.where, cond, a, b)


register_type(mpmath.mpf, _MpHandler())
register_type(MpArray, _MpHandler())


def reference_gradient(f: Callable, args: tuple, argnum: int = 0) -> np.ndarray:
    """∂f/∂args[argnum] with mpmath.diff at 50 digits, rounded to float64."""
    with mpmath.workdps(DIGITS):
        mp_args = [
            MpArray([mpmath.mpf(float(v)) for v in np.ravel(a)]).reshape(np.shape(a))
            if np.ndim(a) else mpmath.mpf(float(a))
            for a in args
        ]
        x = mp_args[argnum]
        if np.ndim(args[argnum]) == 0:
            def g(t: Any) -> Any:
                return f(*[t if k == argnum else a for k, a in enumerate(mp_args)])

            return np.float64(float(mpmath.diff(g, x)))
        flat = list(np.ravel(x))
        out = []
        for j in range(len(flat)):
            def g(t: Any, j: int = j) -> Any:
                moved = MpArray(flat[:j] + [t] + flat[j + 1:]).reshape(np.shape(x))
                return f(*[moved if k == argnum else a for k, a in enumerate(mp_args)])

            out.append(float(mpmath.diff(g, flat[j])))
        return np.array(out).reshape(np.shape(x))


# ------------------------------------------------------------------ the functions


def logistic_map(n: int) -> Callable:
    def f(x: Any) -> Any:
        l = x
        for _ in range(n):
            l = 4.0 * l * (1.0 - l)
        return l

    f.__name__ = f"logistic_map_{n}"
    return f


def deep_sin_cos(x: Any) -> Any:
    for _ in range(10):
        x = dl.sin(dl.cos(x))
    return x


def deep_softplus_sin(x: Any) -> Any:
    for _ in range(8):
        x = dl.log(1.0 + dl.exp(dl.sin(x)))
    return x


def rosenbrock(x: Any) -> Any:
    return dl.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


_rng = np.random.default_rng(7)
_INPUTS = _rng.normal(size=(4, 2))
_TARGETS = _rng.normal(size=4)


def mlp_loss(params: Any) -> Any:
    """A 2-3-1 tanh network's mean squared error on four fixed samples (13 parameters)."""
    w1 = params[0:6].reshape((3, 2))
    b1 = params[6:9]
    w2 = params[9:12]
    b2 = params[12]
    hidden = dl.tanh(_INPUTS @ w1.T + b1)
    error = hidden @ w2 + b2 - _TARGETS
    return dl.sum(error * error) * 0.25


def two_args(x: Any, y: Any) -> Any:
    return dl.sin(x * y) + x / y


@dataclass
class Case:
    name: str
    f: Callable
    args: tuple
    # documented exceptions: tolerance for the exact methods on ill-conditioned functions
    ad_tol: float = 1e-13
    analytic: bool = True  # complex step applies
    tags: set = field(default_factory=set)


CASES = [
    Case("exp", dl.exp, (1.3,)),
    Case("sin", dl.sin, (0.7,)),
    Case("inv_sqrt", lambda x: x ** -0.5, (0.5,)),
    Case("exp_sin", lambda x: dl.exp(dl.sin(x)), (1.1,)),
    Case("sin_exp_plus_square", lambda x: dl.sin(x) * dl.exp(x) + x**2, (0.5,)),
    Case("log_1p_square", lambda x: dl.log(1.0 + x * x), (0.8,)),
    Case("tanh", dl.tanh, (0.4,)),
    Case("sqrt_times_cos", lambda x: dl.sqrt(1.0 + x * x) * dl.cos(x), (2.0,)),
    Case("logistic_function", lambda x: 1.0 / (1.0 + dl.exp(-x)), (-0.7,)),
    Case("sigmoid", dl.sigmoid, (0.3,)),
    Case("atan_over_x", lambda x: dl.atan(x) / x, (0.9,)),
    Case("deep_sin_cos", deep_sin_cos, (0.6,)),
    Case("deep_softplus_sin", deep_softplus_sin, (0.2,)),
    Case("logistic_map_5", logistic_map(5), (0.3,)),
    # 10 iterates of a chaotic map: each step multiplies rounding errors by up to 4, so
    # the value (and any derivative computed in float64) carries up to 4^10·eps relative error.
    Case("logistic_map_10", logistic_map(10), (0.3,), ad_tol=1e-12),
    Case("x_to_the_x", lambda x: x**x, (1.5,)),
    Case("erf", dl.erf, (0.6,)),
    Case("asin", dl.asin, (0.3,)),
    Case("sinh_times_cosh", lambda x: dl.sinh(x) * dl.cosh(x), (0.9,)),
    Case("log1p_of_expm1", lambda x: dl.log1p(dl.expm1(x)), (0.25,)),
    Case("rational", lambda x: (x**3 - 2.0 * x) / (1.0 + x**4), (1.7,)),
    Case("gaussian", lambda x: dl.exp(-0.5 * x * x), (1.2,)),
    Case("rosenbrock_6d", rosenbrock, (np.array([0.3, 0.7, 1.2, -0.4, 0.9, 1.1]),)),
    Case("mlp_loss", mlp_loss, (_rng.normal(size=13) * 0.7,)),
    Case("sin_xy_plus_x_over_y", two_args, (0.7, 1.9)),
]
