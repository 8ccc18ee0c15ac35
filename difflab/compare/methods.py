"""The harnesses' one door to the differentiators: names, options and costs.

Every measurement in :mod:`difflab.compare` goes through the common
interface of :mod:`difflab.diff` (``derivative``, ``grad``, ``jacobian``
with ``return_cost=True``); nothing here differentiates by itself.  This
module only turns a method *name* as a person types it into a differentiator
object:

=====================  ==================================================
name                   differentiator
=====================  ==================================================
``forward``            ``Forward()``: dual numbers
``reverse``            ``Reverse()``: the tape
``symbolic``           ``Symbolic()``: sympy, with common subexpressions
``numeric``            ``Numeric("central")``
``numeric:SCHEME``     ``Numeric(SCHEME)``: forward, backward, central,
                       richardson, adaptive, complex
=====================  ==================================================
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from difflab.diff.numeric import SCHEMES

__all__ = ["METHODS", "cost_dict", "differentiator", "parse_methods", "run"]

#: The four methods, in the order tables list them.
METHODS: tuple[str, ...] = ("forward", "reverse", "symbolic", "numeric")

#: Numeric's schemes, as the differentiator lists them.
NUMERIC_SCHEMES: tuple[str, ...] = SCHEMES


def parse_methods(spec: str | Sequence[str] | None) -> list[str]:
    """``"forward,numeric:richardson"`` -> ``["forward", "numeric:richardson"]``, checked.

    Parameters
    ----------
    spec : str, list of str or None
        Comma-separated names (``"forward,numeric:richardson"``), a list of them, or
        ``None`` for the four methods.

    Returns
    -------
    list of str
        The method names, each checked.

    Raises
    ------
    ValueError
        For an unknown method or numeric scheme (the message lists the known ones).

    Examples
    --------
    >>> from difflab.compare import parse_methods
    >>> parse_methods("forward,numeric:richardson")
    ['forward', 'numeric:richardson']
    >>> parse_methods(None)
    ['forward', 'reverse', 'symbolic', 'numeric']
    """
    if spec is None:
        return list(METHODS)
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    methods = [m.strip().lower() for m in items if m.strip()]
    if not methods:
        raise ValueError(f"no method given; known methods: {', '.join(METHODS)}")
    for m in methods:
        base, _, scheme = m.partition(":")
        if base not in METHODS:
            raise ValueError(
                f"unknown method {m!r}; known methods: {', '.join(METHODS)} "
                f"(numeric also as numeric:SCHEME with SCHEME one of {', '.join(NUMERIC_SCHEMES)})"
            )
        if scheme and (base != "numeric" or scheme not in NUMERIC_SCHEMES):
            raise ValueError(
                f"unknown variant {m!r}: only numeric has schemes "
                f"({', '.join('numeric:' + s for s in NUMERIC_SCHEMES)})"
            )
    return methods


def differentiator(method: str, **options: Any) -> Any:
    """The differentiator object for a method name (see the module docstring).

    ``options`` go to its constructor (``step=1e-6`` for numeric,
    ``chunk_size=64`` for forward, ...).
    """
    from difflab.diff.differentiators import Forward, Numeric, Reverse, Symbolic

    base, _, scheme = method.partition(":")
    if base == "forward":
        return Forward(**options)
    if base == "reverse":
        return Reverse(**options)
    if base == "symbolic":
        return Symbolic(**options)
    if base == "numeric":
        return Numeric(scheme=scheme or options.pop("scheme", "central"), **options)
    raise ValueError(f"unknown method {method!r}; known methods: {', '.join(METHODS)}")


def run(transform: str, method: str | Any, f: Callable[..., Any], *args: Any,
        argnums: int | Sequence[int] = 0, **options: Any) -> tuple[Any, dict[str, Any]]:
    """Differentiate through the common interface and return the result and its cost.

    ``run("grad", "reverse", f, x)`` is ``Reverse().grad(f)(x, return_cost=True)``.

    Parameters
    ----------
    transform : {"derivative", "grad", "jacobian", "hessian"}
        Which transform of the common interface.
    method : str or differentiator
        A name understood by :func:`differentiator`, or a differentiator object.
    f : callable
        The function.
    *args
        The point (one argument per parameter of ``f``).
    argnums : int or tuple of int
        The arguments to differentiate with respect to (``grad``, ``jacobian``,
        ``hessian``; a tuple gives a tuple of results).
    **options
        Passed to the differentiator's constructor when ``method`` is a name.

    Returns
    -------
    (result, cost)
        ``cost`` is the call's ``Cost`` as a plain dict.
    """
    obj = differentiator(method, **options) if isinstance(method, str) else method
    transform_of_f = (obj.derivative(f) if transform == "derivative"
                      else getattr(obj, transform)(f, argnums=argnums))
    result, cost = transform_of_f(*args, return_cost=True)
    return result, cost_dict(cost)


def run_grad(method: str | Any, f: Callable[..., Any], args: Sequence[Any],
             **options: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The partial derivatives of a scalar f of several scalar arguments, with the cost.

    ``run_grad("forward", f, [x, y])`` is
    ``Forward().grad(f, argnums=(0, 1))(x, y, return_cost=True)``.
    """
    obj = differentiator(method, **options) if isinstance(method, str) else method
    argnums = tuple(range(len(args)))
    result, cost = obj.grad(f, argnums=argnums)(*args, return_cost=True)
    return tuple(result), cost_dict(cost)


def cost_dict(cost: Any) -> dict[str, Any]:
    """A ``Cost`` (or anything with ``as_dict``) as a plain dict."""
    if cost is None:
        return {}
    if hasattr(cost, "as_dict"):
        return dict(cost.as_dict())
    return dict(vars(cost))


# ------------------------------------------------------------- sizes of things


def tape_length(f: Callable[..., Any], *args: Any) -> int:
    """Records on the reverse-mode tape while f runs on ``args`` (Tensors that require grad).

    This is the length of the Wengert list a backward pass walks: one record
    per primitive operation of f.
    """
    import difflab
    from difflab.autograd import tape

    inputs = [difflab.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)
              for a in args]
    with tape() as t:
        f(*inputs)
    return len(t)


def trace(f: Callable[..., Any], *example_args: Any) -> Any:
    """The sympy expression of f, from the symbolic differentiator's tracer.

    With no example arguments f is traced as a function of one scalar ``x``.
    """
    from difflab.diff import symbolic

    _, expr = symbolic.trace(f, *(example_args or (0.0,)))
    return expr


def symbolic_derivative(expr: Any, order: int = 1) -> Any:
    """d^order expr / dx^order for an expression of one free symbol, as sympy builds it."""
    import sympy

    free = sorted(expr.free_symbols, key=str)
    if not free:
        return sympy.S.Zero
    return sympy.diff(expr, free[0], order)


def expressions(f: Callable[..., Any], x: Any) -> Any:
    """f and its derivative as sympy objects (``Symbolic().expressions``)."""
    from difflab.diff.differentiators import Symbolic

    return Symbolic().expressions(f, x)


def expression_size(expr: Any, cse: bool = False) -> dict[str, int]:
    """``{"ops": count_ops, "tree": nodes}`` of a sympy expression, optionally after CSE."""
    from difflab.diff import symbolic

    size = symbolic.expression_size(expr, cse=cse)
    return {"ops": size["ops"], "tree": size["tree_size"]}
