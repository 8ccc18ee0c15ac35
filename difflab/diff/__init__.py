"""Four ways to differentiate one function: forward, reverse, symbolic, numeric.

>>> import difflab as dl
>>> def f(x):
...     return dl.sin(x) * dl.exp(x) + x**2
>>> dl.derivative(f, method="forward")(0.5)
>>> dl.grad(rosenbrock, method="reverse")(np.ones(5))
>>> dl.hessian(f, method=dl.differentiators.Numeric(scheme="richardson"))(0.5)
>>> gradient, cost = dl.grad(f, method="symbolic")(0.5, return_cost=True)
>>> dl.hessian(rosenbrock, method="compiled")(np.ones(5))   # traced once, replayed

``method`` is a name from :func:`differentiators.available` or a
differentiator object (:class:`~differentiators.Forward`, ``Reverse``,
``Symbolic``, ``Numeric``, and ``Compiled``: forward and reverse mode as
graph transforms of a static graph, :mod:`difflab.diff.compiled`) with its
own options.  Options may also be given
by keyword with a name: ``dl.grad(f, method="numeric", scheme="complex")``.
See :mod:`difflab.diff.interface` for the shapes of the results and
:class:`Cost` for what ``return_cost=True`` reports.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from difflab.diff import differentiators
from difflab.diff.forward import Dual
from difflab.diff.interface import Cost, Differentiator, DomainWarning, NumericalWarning


def __getattr__(name: str) -> Any:
    """``SymbolicTraceError``, from the symbolic module, imported (with sympy) when asked for."""
    if name == "SymbolicTraceError":
        from difflab.diff.symbolic import SymbolicTraceError

        return SymbolicTraceError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "Cost", "Differentiator", "DomainWarning", "Dual", "NumericalWarning",
    "SymbolicTraceError", "derivative", "differentiators", "grad", "hessian", "jacobian",
    "jvp", "vjp",
]



def derivative(f: Callable, method: str | Differentiator = "reverse",
               **options: Any) -> Callable[..., Any]:
    """f'(x) for a scalar x: ``derivative(f)(x, return_cost=False)``."""
    return differentiators.get(method, **options).derivative(f)


def grad(f: Callable, method: str | Differentiator = "reverse",
         argnums: int | Sequence[int] = 0, **options: Any) -> Callable[..., Any]:
    """∇f with respect to ``args[argnums]``, for a scalar-valued f."""
    return differentiators.get(method, **options).grad(f, argnums)


def jacobian(f: Callable, method: str | Differentiator = "reverse",
             argnums: int | Sequence[int] = 0, **options: Any) -> Callable[..., Any]:
    """∂f/∂x with shape f(x).shape + x.shape."""
    return differentiators.get(method, **options).jacobian(f, argnums)


def hessian(f: Callable, method: str | Differentiator = "reverse",
            argnums: int | Sequence[int] = 0, **options: Any) -> Callable[..., Any]:
    """∂²f/∂x² with shape x.shape + x.shape, for a scalar-valued f."""
    return differentiators.get(method, **options).hessian(f, argnums)


def jvp(f: Callable, primals: Sequence[Any], tangents: Sequence[Any],
        method: str | Differentiator = "reverse", return_cost: bool = False,
        **options: Any) -> Any:
    """``(f(*primals), J·tangents)``, as ``jax.jvp``."""
    return differentiators.get(method, **options).jvp(f, primals, tangents, return_cost)


def vjp(f: Callable, primals: Sequence[Any], method: str | Differentiator = "reverse",
        return_cost: bool = False, **options: Any) -> Any:
    """``(f(*primals), vjp_fn)`` with ``vjp_fn(u)`` = uᵀJ for each primal, as ``jax.vjp``."""
    return differentiators.get(method, **options).vjp(f, primals, return_cost)
