r"""The built-in functions the harnesses measure: families by depth, problems by size.

*Families* (for :func:`difflab.compare.blowup`) are scalar functions that get
deeper with an integer ``n``:

============  ===============================================  =================
name          f_n(x)                                           why
============  ===============================================  =================
logistic      l_1 = x,  l_{k+1} = 4 l_k (1 - l_k),  f_n = l_n  Baydin et al. 2018,
                                                               Table 1
nested-sin    sin(sin(... sin(x)))  (n sines)                  chain rule: the
                                                               derivative repeats
                                                               every inner sine
product       (x + 1)(x + 2) ... (x + n)                       product rule: n
                                                               terms of n-1
                                                               factors
derivative    d^n/dx^n of exp(sin(x))                          derivatives of
                                                               derivatives
============  ===============================================  =================

*Problems* (for :func:`difflab.compare.cost`) take a vector of size ``n``:

=============  ======================================  ================
name           f(x)                                    shape
=============  ======================================  ================
sum-sin        Σ sin(x_i) · x_i                        R^n -> R
logsumexp      log Σ exp(x_i)                          R^n -> R
tanh-layer     tanh(W x), W fixed, m × n               R^n -> R^m
=============  ======================================  ================

Each problem also comes as a function of ``n`` separate scalar arguments,
f(x_1, ..., x_n), the same sum written out term by term.  Differentiated with
respect to all of them (``argnums = (0, ..., n-1)``) it shows what a method
pays per *argument*: forward mode one pass each, reverse mode one forward and
one backward pass for all of them together.

All are written once with difflab's functions, so every differentiator runs
the same code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import difflab.functions as F

__all__ = ["FAMILIES", "PROBLEMS", "Family", "Problem", "family", "problem"]


# -------------------------------------------------------------------- families


@dataclass(frozen=True)
class Family:
    """Scalar functions f_n: R -> R indexed by a depth n >= 1, for :func:`blowup`.

    The built-in ones are in ``FAMILIES`` (``logistic``, ``nested-sin``, ``product``,
    ``derivative``); :func:`blowup` and :func:`estimate` take a name or a family of
    one's own.  A frozen dataclass.

    Parameters
    ----------
    name : str
        Name on the command line.
    formula : str
        The definition, as a person writes it.
    build : callable
        ``build(n)`` returns f_n, a function of one variable.
    point : float, default 0.3
        Where derivatives are evaluated and timed.
    kind : {'depth', 'derivative'}, default 'depth'
        ``"depth"``: f_n is n levels deep and is differentiated once.
        ``"derivative"``: ``build(n)`` is one fixed function and row n is its
        n-th derivative (nested differentiation).

    See Also
    --------
    blowup : measures a family's expression swell by depth.
    Problem : the functions of a vector, for :func:`cost`.

    Examples
    --------
    >>> from difflab.compare import FAMILIES, Family, blowup
    >>> logistic = FAMILIES["logistic"]
    >>> logistic.formula, logistic.point
    ('l_1 = x, l_(n+1) = 4 l_n (1 - l_n)', 0.3)
    >>> round(logistic.build(3)(0.3), 4)               # 4 l2 (1 - l2), l2 = 4 x (1 - x)
    0.5376

    A family of one's own: :math:`x^{2^n}`, whose tape is one record at every depth
    (one ``pow``):

    >>> powers = Family("powers", "x^(2^n)", lambda n: (lambda x: x ** (2 ** n)), point=0.9)
    >>> report = blowup(powers, range(1, 4), evaluate=False)
    >>> [(r["depth"], r["df_ops"], r["tape_length"]) for r in report.records]
    [(1, 1, 1), (2, 2, 1), (3, 2, 1)]
    """

    name: str
    formula: str
    build: Callable[[int], Callable[[Any], Any]]
    point: float = 0.3
    kind: str = "depth"


def _logistic(n: int) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        l = x
        for _ in range(n - 1):
            l = 4 * l * (1 - l)
        return l

    f.__doc__ = f"l_{n}(x): the logistic map l_(k+1) = 4 l_k (1 - l_k) from l_1 = x"
    return f


def _nested_sin(n: int) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        for _ in range(n):
            x = F.sin(x)
        return x

    f.__doc__ = f"sin applied {n} times"
    return f


def _product(n: int) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        p = x + 1
        for i in range(2, n + 1):
            p = p * (x + i)
        return p

    f.__doc__ = f"(x + 1)(x + 2) ... (x + {n})"
    return f


def _exp_sin(n: int) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        return F.exp(F.sin(x))

    f.__doc__ = "exp(sin(x)), differentiated n times by the harness"
    return f


#: The built-in expression families of the blowup harness, by name.
FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family("logistic", "l_1 = x, l_(n+1) = 4 l_n (1 - l_n)", _logistic, 0.3),
        Family("nested-sin", "sin(sin(...sin(x)...)), n sines", _nested_sin, 0.7),
        Family("product", "(x + 1)(x + 2)...(x + n)", _product, 0.5),
        Family("derivative", "d^n/dx^n of exp(sin(x))", _exp_sin, 0.5, kind="derivative"),
    )
}


def family(name: str) -> Family:
    """The family called ``name``; the error lists the known ones."""
    try:
        return FAMILIES[name]
    except KeyError:
        raise ValueError(
            f"unknown family {name!r}; known families: {', '.join(FAMILIES)}"
        ) from None


# -------------------------------------------------------------------- problems


@dataclass(frozen=True)
class Problem:
    """A function of a vector, at sizes chosen by the harness: a :func:`cost` problem.

    The built-in ones are in ``PROBLEMS`` (``sum-sin``, ``logsumexp``, ``tanh-layer``);
    :func:`cost` takes a name or a problem of one's own.  A frozen dataclass.

    Parameters
    ----------
    name : str
        Name on the command line.
    formula : str
        The definition.
    make : callable
        ``make(n, m)`` returns ``(f, x0)``: the function and a point in R^n.
        ``m`` is the output size for vector-valued problems (ignored otherwise).
    make_scalars : callable
        ``make_scalars(n, m)`` returns ``(f, x0)`` with the same f written as a
        function of n scalar arguments, ``f(x0[0], ..., x0[n-1])``.
    scalar_formula : str
        Its definition.
    outputs : {'scalar', 'vector'}, default 'scalar'
        ``"scalar"`` (a gradient is measured) or ``"vector"`` (a Jacobian).

    See Also
    --------
    cost : times each method on a problem, by size.
    Family : the functions of one variable, for :func:`blowup`.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.compare import PROBLEMS
    >>> layer = PROBLEMS["tanh-layer"]
    >>> layer.formula, layer.outputs
    ('tanh(W x), W an m-by-n matrix', 'vector')
    >>> f, x0 = layer.make(3, 2)                       # n = 3 inputs, m = 2 outputs
    >>> x0.shape, f(dl.tensor(x0)).shape
    ((3,), difflab.Size([2]))
    >>> g, x0 = PROBLEMS["sum-sin"].make_scalars(2, 0)  # the same f, of 2 scalars
    >>> round(g(*[dl.tensor(v) for v in x0]).item(), 4)
    0.2787
    """

    name: str
    formula: str
    make: Callable[[int, int], tuple[Callable[[Any], Any], np.ndarray]]
    make_scalars: Callable[[int, int], tuple[Callable[..., Any], np.ndarray]]
    scalar_formula: str
    outputs: str = "scalar"


def _point(n: int) -> np.ndarray:
    return np.random.default_rng(0).uniform(-1.0, 1.0, size=n)


def _sum_sin(n: int, m: int) -> tuple[Callable[[Any], Any], np.ndarray]:
    def f(x: Any) -> Any:
        return F.sum(F.sin(x) * x)

    return f, _point(n)


def _sum_sin_scalars(n: int, m: int) -> tuple[Callable[..., Any], np.ndarray]:
    def f(*xs: Any) -> Any:
        return sum(F.sin(x) * x for x in xs)

    return f, _point(n)


def _logsumexp(n: int, m: int) -> tuple[Callable[[Any], Any], np.ndarray]:
    def f(x: Any) -> Any:
        return F.log(F.sum(F.exp(x)))

    return f, _point(n)


def _logsumexp_scalars(n: int, m: int) -> tuple[Callable[..., Any], np.ndarray]:
    def f(*xs: Any) -> Any:
        return F.log(sum(F.exp(x) for x in xs))

    return f, _point(n)


def _weights(n: int, m: int) -> np.ndarray:
    return np.random.default_rng(1).normal(0.0, 1.0 / np.sqrt(n), size=(m, n))


def _tanh_layer(n: int, m: int) -> tuple[Callable[[Any], Any], np.ndarray]:
    weights = _weights(n, m)

    def f(x: Any) -> Any:
        return F.tanh(weights @ x)

    return f, _point(n)


def _tanh_layer_scalars(n: int, m: int) -> tuple[Callable[..., Any], np.ndarray]:
    weights = _weights(n, m).tolist()  # Python floats: x * w then keeps x's type

    def f(*xs: Any) -> Any:
        return F.stack([F.tanh(sum(x * w for x, w in zip(xs, row))) for row in weights])

    return f, _point(n)


PROBLEMS: dict[str, Problem] = {
    p.name: p
    for p in (
        Problem("sum-sin", "sum_i x_i sin(x_i)", _sum_sin, _sum_sin_scalars,
                "x_1 sin(x_1) + ... + x_n sin(x_n)"),
        Problem("logsumexp", "log(sum_i exp(x_i))", _logsumexp, _logsumexp_scalars,
                "log(exp(x_1) + ... + exp(x_n))"),
        Problem("tanh-layer", "tanh(W x), W an m-by-n matrix", _tanh_layer,
                _tanh_layer_scalars, "tanh(W_j1 x_1 + ... + W_jn x_n), j = 1..m", "vector"),
    )
}


def problem(name: str) -> Problem:
    """The problem called ``name``; the error lists the known ones."""
    try:
        return PROBLEMS[name]
    except KeyError:
        raise ValueError(
            f"unknown function {name!r}; known functions: {', '.join(PROBLEMS)}"
        ) from None
