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

import importlib
import sys
import types
from collections.abc import Callable, Sequence
from typing import Any

from difflab import functions_math
from difflab.diff import differentiators
from difflab.diff.forward import Dual
from difflab.diff.interface import (
    ConstantClosureError,
    Cost,
    Differentiator,
    DomainWarning,
    NumericalWarning,
)


def __getattr__(name: str) -> Any:
    """``SymbolicTraceError``, from the symbolic module, imported (with sympy) when asked for."""
    if name == "SymbolicTraceError":
        from difflab.diff.symbolic import SymbolicTraceError

        return SymbolicTraceError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "ConstantClosureError", "Cost", "Differentiator", "DomainWarning", "Dual", "NumericalWarning",
    "SymbolicTraceError", "derivative", "differentiators", "grad", "hessian", "jacobian",
    "jvp", "vjp",
]



def derivative(f: Callable, method: str | Differentiator = "reverse",
               **options: Any) -> Callable[..., Any]:
    r"""The derivative f'(x) of a function of one scalar, by any of the methods.

    .. math:: f'(x) = \lim_{h \to 0} \frac{f(x + h) - f(x)}{h}

    Parameters
    ----------
    f : callable
        ``f(x, *rest)``, written with difflab's functions (``dl.sin``, ``+``, ``**``)
        or NumPy's; it may return a scalar or an array (then f'(x) has its shape).
    method : str or Differentiator, default "reverse"
        ``"forward"``, ``"reverse"``, ``"symbolic"``, ``"numeric"`` or ``"compiled"``
        (see :func:`grad` for what each does and costs), or a differentiator object
        with its options (:class:`~difflab.diff.differentiators.Numeric`, ...).
    **options
        The method's options by keyword, with a method name:
        ``derivative(f, method="numeric", scheme="complex")``.

    Returns
    -------
    callable
        ``df(x, *rest, return_cost=False)``: f'(x) (a float for a scalar f, else an
        array of f(x)'s shape); with ``return_cost=True`` the pair ``(f'(x), cost)``,
        ``cost`` a :class:`~difflab.diff.Cost`.

    Raises
    ------
    TypeError
        If f is not callable, or is called with arguments it does not take.
    ValueError
        For an unknown method name or option.

    See Also
    --------
    grad : the gradient of a function of a vector.
    jacobian, hessian, jvp, vjp : the other transforms.

    Notes
    -----
    At a kink (``abs`` or ``relu`` at 0, ``maximum`` at a tie) f has no derivative;
    forward, reverse, symbolic and compiled return the rule's convention (0 for
    ``abs`` and ``relu``, 1/2 for each side of a tie), numeric the central
    difference, the mean of the one-sided slopes (1/2 for ``relu`` at 0).

    Examples
    --------
    >>> import difflab as dl
    >>> print(dl.derivative(dl.sin)(0.0))
    1.0
    >>> for method in ("forward", "reverse", "symbolic", "numeric"):
    ...     print(method, round(float(dl.derivative(dl.exp, method=method)(1.0)), 8))
    forward 2.71828183
    reverse 2.71828183
    symbolic 2.71828183
    numeric 2.71828183
    >>> print(dl.derivative(dl.relu, method="reverse")(0.0),
    ...       dl.derivative(dl.relu, method="numeric")(0.0))   # a kink: convention vs mean
    0.0 0.5
    """
    return differentiators.get(method, **options).derivative(f)


def grad(f: Callable, method: str | Differentiator = "reverse",
         argnums: int | Sequence[int] = 0, **options: Any) -> Callable[..., Any]:
    r"""The gradient ∇f of a scalar-valued f with respect to ``args[argnums]``.

    .. math:: (\nabla f)_i = \frac{\partial f}{\partial x_i}, \qquad
              f : \mathbb{R}^n \to \mathbb{R}

    Every method computes the same gradient (to rounding, or to the truncation error
    of finite differences); they differ in how, and in what it costs:

    ============  =====================================  ==================================
    method        how                                    cost of a gradient, n inputs
    ============  =====================================  ==================================
    "forward"     dual numbers a + b·ε, ε² = 0           one pass carrying n tangents
    "reverse"     a tape recorded forwards, walked back  one forward + one backward pass
    "symbolic"    sympy builds and differentiates f      the expression (cached, compiled)
    "numeric"     finite differences                     n + 1 or 2n + 1 evaluations of f
    "compiled"    forward/reverse as graph transforms    one trace, then one replay a call
    ============  =====================================  ==================================

    Parameters
    ----------
    f : callable
        ``f(*args)`` returning a scalar (a float, a 0-d array or Tensor).
    method : str or Differentiator, default "reverse"
        A name above or a differentiator object with its options:
        ``Forward(chunk_size=None, hessian="forward-over-forward")``,
        ``Reverse(hessian="reverse-over-reverse")``,
        ``Symbolic(simplify=False, cse=True, backend="numpy", cache=True)``,
        ``Numeric(scheme="central", order=None, step=None, levels=None)`` (scheme
        ``"forward"``, ``"backward"``, ``"central"``, ``"richardson"``, ``"adaptive"``
        or ``"complex"``), ``Compiled(passes=("fold", "cse", "dce", "fuse"))``; see
        :mod:`difflab.diff.differentiators`.
    argnums : int or tuple of int, default 0
        Which arguments to differentiate; a tuple gives a tuple of gradients.
    **options
        The method's options by keyword: ``grad(f, method="numeric", scheme="complex")``.

    Returns
    -------
    callable
        ``g(*args, return_cost=False)``: the gradient, an array of ``args[argnums]``'s
        shape (a float for a scalar argument); with ``return_cost=True`` the pair
        ``(gradient, cost)``, where ``cost`` (:class:`~difflab.diff.Cost`) reports what
        the call spent: ``evaluations``, ``seconds``, ``tape_length`` and
        ``backward_passes`` (reverse), ``forward_ops`` (forward), ``expression_ops``
        (symbolic), ``step`` and ``error_estimate`` (numeric), ``graph_nodes``
        (compiled).

    Raises
    ------
    TypeError
        If f is not callable, takes other arguments, or gets an input that is not a
        number, array or Tensor.
    ValueError
        If f does not return a scalar (use :func:`jacobian`), for an ``argnums``
        out of range, or an unknown method or option.

    See Also
    --------
    derivative : f' of a function of one scalar.
    jacobian : every partial derivative of a vector-valued f.
    hessian : second derivatives.
    difflab.func.grad : the composable transform (``vmap(grad(f))``).

    Notes
    -----
    At a point where f is not differentiable (``abs`` or ``relu`` at 0, ``maximum``
    or ``minimum`` at a tie) no gradient exists.  Forward, reverse, symbolic and
    compiled return the convention of the primitive's rule (0 for ``abs`` and
    ``relu``, which is a subgradient and what PyTorch returns; 1/2 to each input of a
    tie); numeric returns its difference quotient, for central differences the mean
    of the one-sided slopes.  ``difflab compare`` says "no derivative here" at such
    a point.  Outside f's domain the result is NaN with a
    :class:`~difflab.diff.DomainWarning`.

    Every method hands ``f`` a value with a tensor's methods, for an array or tensor
    argument: a recorded tensor (reverse), a dual number (forward), sympy expressions
    (symbolic), a traced tensor (compiled) or a constant tensor (numeric).  A
    stop-gradient in f (``x.detach()``, ``x.data``) gives the same gradient by every
    method: numeric holds each one at its value at the unperturbed point (a perturbed
    point that applies other stops is an error); a ``no_grad()`` block stops only the
    tape (reverse, compiled), as PyTorch's does.

    Examples
    --------
    >>> import numpy as np
    >>> import difflab as dl
    >>> f = lambda v: (v ** 2).sum()
    >>> dl.grad(f)(np.array([1.0, 2.0]))
    array([2., 4.])
    >>> stopped = lambda v: (v.detach() * v).sum()          # d/dv = v.detach() = v
    >>> [dl.grad(stopped, method=m)(np.array([1.0, 2.0])).tolist()
    ...  for m in ("reverse", "forward", "symbolic", "compiled")]
    [[1.0, 2.0], [1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]
    >>> np.round(dl.grad(stopped, method="numeric")(np.array([1.0, 2.0])), 6)  # held at x
    array([1., 2.])
    >>> gradient, cost = dl.grad(f, method="reverse")(np.array([1.0, 2.0]),
    ...                                                return_cost=True)
    >>> gradient, cost.evaluations, cost.backward_passes
    (array([2., 4.]), 1, 1)
    >>> gradient, cost = dl.grad(f, method="numeric")(np.array([1.0, 2.0]),
    ...                                                return_cost=True)
    >>> np.round(gradient, 6), cost.evaluations      # f(x) and 2 per input
    (array([2., 4.]), 5)
    >>> [float(d) for d in dl.grad(lambda x, y: x * y, argnums=(0, 1))(2.0, 3.0)]
    [3.0, 2.0]
    """
    return differentiators.get(method, **options).grad(f, argnums)


def jacobian(f: Callable, method: str | Differentiator = "reverse",
             argnums: int | Sequence[int] = 0, **options: Any) -> Callable[..., Any]:
    r"""The Jacobian ∂f/∂x of f with respect to ``args[argnums]``, shape f(x).shape + x.shape.

    .. math:: J_{ij} = \frac{\partial f_i}{\partial x_j}

    Parameters
    ----------
    f : callable
        ``f(*args)`` returning a scalar or an array.
    method : str or Differentiator, default "reverse"
        As for :func:`grad`.  Reverse mode costs one backward pass per output
        element, forward mode one pass per chunk of input directions: the cheaper
        one depends on whether f has more outputs or inputs.
    argnums : int or tuple of int, default 0
        Which arguments; a tuple gives a tuple of Jacobians.
    **options
        The method's options by keyword.

    Returns
    -------
    callable
        ``J(*args, return_cost=False)``: an array of shape ``f(x).shape + x.shape``;
        with ``return_cost=True``, ``(J, cost)``.

    Raises
    ------
    TypeError
        If f is not callable or takes other arguments.
    ValueError
        For an ``argnums`` out of range or an unknown method or option.

    See Also
    --------
    grad : the gradient, for a scalar f.
    jvp : J·t without forming J.
    vjp : uᵀJ without forming J.

    Notes
    -----
    At a kink the convention of :func:`grad` applies to each entry.

    Examples
    --------
    >>> import numpy as np
    >>> import difflab as dl
    >>> dl.jacobian(lambda v: v ** 2)(np.array([1.0, 2.0]))
    array([[2., 0.],
           [0., 4.]])
    >>> dl.jacobian(lambda v: v ** 2, method="forward")(np.array([1.0, 2.0])).shape
    (2, 2)
    """
    return differentiators.get(method, **options).jacobian(f, argnums)


def hessian(f: Callable, method: str | Differentiator = "reverse",
            argnums: int | Sequence[int] = 0, **options: Any) -> Callable[..., Any]:
    r"""The Hessian ∂²f/∂x² of a scalar-valued f, shape x.shape + x.shape.

    .. math:: H_{ij} = \frac{\partial^2 f}{\partial x_i \, \partial x_j}

    Parameters
    ----------
    f : callable
        ``f(*args)`` returning a scalar.
    method : str or Differentiator, default "reverse"
        As for :func:`grad`.  Reverse mode takes ``Reverse(hessian=
        "reverse-over-reverse" | "reverse-over-forward")``, forward mode
        ``Forward(hessian="forward-over-forward" | "forward-over-reverse")``; numeric
        differences the gradient; compiled replays one forward-over-reverse graph.
    argnums : int or tuple of int, default 0
        Which arguments; a tuple gives a tuple of Hessians.
    **options
        The method's options by keyword: ``hessian(f, method="forward",
        hessian="forward-over-reverse")``.

    Returns
    -------
    callable
        ``H(*args, return_cost=False)``: a symmetric array of shape
        ``x.shape + x.shape``; with ``return_cost=True``, ``(H, cost)``.

    Raises
    ------
    TypeError
        If f is not callable or takes other arguments.
    ValueError
        If f does not return a scalar, or for an unknown method or option.

    See Also
    --------
    grad, jacobian
    difflab.func.hessian : the composable transform.

    Notes
    -----
    At a kink the second derivative is taken as the rule's (0 for ``abs`` and
    ``relu``); numeric differences give a large spurious value there.

    Examples
    --------
    >>> import numpy as np
    >>> import difflab as dl
    >>> dl.hessian(lambda v: (v ** 3).sum())(np.array([1.0, 2.0]))
    array([[ 6.,  0.],
           [ 0., 12.]])
    """
    return differentiators.get(method, **options).hessian(f, argnums)


def jvp(f: Callable, primals: Sequence[Any], tangents: Sequence[Any],
        method: str | Differentiator = "reverse", return_cost: bool = False,
        **options: Any) -> Any:
    r"""The value f(x) and the directional derivative J·t, as ``jax.jvp``.

    .. math:: \dot y = J\,t = \frac{d}{d\varepsilon} f(x + \varepsilon t)\Big|_{\varepsilon=0}

    Parameters
    ----------
    f : callable
        ``f(*primals)``.
    primals : sequence
        The point x, one entry per argument of f.
    tangents : sequence
        The direction t, one entry per primal, each of its primal's shape.
    method : str or Differentiator, default "reverse"
        As for :func:`grad`; forward mode computes J·t in one pass without J.
    return_cost : bool, default False
        Also return a :class:`~difflab.diff.Cost`.
    **options
        The method's options by keyword.

    Returns
    -------
    tuple
        ``(f(*primals), J·t)``, the second of f's output shape; with
        ``return_cost=True``, ``((f(*primals), J·t), cost)``.

    Raises
    ------
    TypeError
        If primals and tangents are not tuples (or lists) of arguments.
    ValueError
        If there are not as many tangents as primals, or a tangent's shape differs
        from its primal's.

    See Also
    --------
    vjp : the transpose, uᵀJ.
    difflab.func.jvp : the composable transform.

    Examples
    --------
    >>> import numpy as np
    >>> import difflab as dl
    >>> dl.jvp(lambda v: v ** 2, (np.array([1.0, 2.0]),), (np.array([1.0, 0.0]),))
    (array([1., 4.]), array([2., 0.]))
    """
    return differentiators.get(method, **options).jvp(f, primals, tangents, return_cost)


def vjp(f: Callable, primals: Sequence[Any], method: str | Differentiator = "reverse",
        return_cost: bool = False, **options: Any) -> Any:
    r"""The value f(x) and a function u ↦ uᵀJ, one result per primal, as ``jax.vjp``.

    .. math:: \bar x = u^\top J = \sum_i u_i \frac{\partial f_i}{\partial x}

    Parameters
    ----------
    f : callable
        ``f(*primals)``.
    primals : sequence
        The point x, one entry per argument of f.
    method : str or Differentiator, default "reverse"
        As for :func:`grad`; reverse mode computes each uᵀJ in one backward pass.
    return_cost : bool, default False
        Also return a :class:`~difflab.diff.Cost` (``backward_passes`` counts the calls
        of ``vjp_fn`` made so far).
    **options
        The method's options by keyword.

    Returns
    -------
    tuple
        ``(f(*primals), vjp_fn)``, ``vjp_fn(u)`` a tuple with one array per primal;
        with ``return_cost=True``, ``((f(*primals), vjp_fn), cost)``.

    Raises
    ------
    ValueError
        If ``vjp_fn`` gets a cotangent u whose shape differs from f's output.

    See Also
    --------
    jvp : the transpose, J·t.
    difflab.func.vjp : the composable transform.

    Examples
    --------
    >>> import numpy as np
    >>> import difflab as dl
    >>> value, vjp_fn = dl.vjp(lambda v: v ** 2, (np.array([1.0, 2.0]),))
    >>> value
    array([1., 4.])
    >>> vjp_fn(np.array([1.0, 1.0]))
    (array([2., 4.]),)
    """
    return differentiators.get(method, **options).vjp(f, primals, return_cost)


class _CallableDiffPackage(types.ModuleType):
    """``difflab.diff`` is this package and, called, PyTorch's ``torch.diff``.

    PyTorch programs (``import difflab as torch``) call ``torch.diff(x)`` for the
    forward differences of a tensor; here that name already belongs to the package of
    the differentiators.  A module's class may be replaced by a subclass of
    ``ModuleType`` (the Python reference, "Customizing module attribute access"),
    so the package also answers a call, with :func:`difflab.functions_math.diff`.
    """

    def __call__(self, input: Any, n: int = 1, dim: int = -1, prepend: Any = None,  # noqa: A002
                 append: Any = None) -> Any:
        return functions_math.diff(input, n=n, dim=dim, prepend=prepend, append=append)

    def __reduce__(self) -> tuple:
        # Pickled (a ``functools.partial(torch.diff, n=2)`` sent to a worker) and copied as
        # a function is: by name, importing the package again.
        return importlib.import_module, (self.__name__,)


sys.modules[__name__].__class__ = _CallableDiffPackage
