r"""The common interface of the four differentiators.

Every differentiator answers the same questions about a function f, in the
shapes JAX uses:

=====================================  ===========================================
call                                   returns
=====================================  ===========================================
``d.derivative(f)(x)``                 f'(x) for a scalar x (shape of f(x))
``d.grad(f, argnums=0)(*args)``        ∇f, shape of ``args[argnums]``; f scalar
``d.jacobian(f, argnums=0)(*args)``    J[i..., j...] = ∂fᵢ/∂xⱼ: shape f(x).shape + x.shape
``d.hessian(f, argnums=0)(*args)``     H[i..., j...] = ∂²f/∂xᵢ∂xⱼ: shape x.shape + x.shape
``d.jvp(f, primals, tangents)``        (f(*primals), J·t): a directional derivative
``d.vjp(f, primals)``                  (f(*primals), vjp_fn) with vjp_fn(u) = uᵀJ per primal
=====================================  ===========================================

``argnums`` may be an int or a tuple of ints (then a tuple of results comes
back, one per argument).  Every returned callable, and ``jvp``/``vjp``
themselves, take ``return_cost=False``; with ``True`` they return
``(result, cost)`` where ``cost`` is a :class:`Cost`: what the call spent
(function evaluations, wall time, tape length, expression size, ...).

A subclass implements two hooks, each for one differentiated argument:

``_jacobian(f, args, i, cost, require_scalar) -> (value, J)``
    value = f(*args) and J = ∂f/∂args[i] with shape value.shape + args[i].shape.
``_hessian(f, args, i, cost) -> H``
    the Hessian of a scalar f with respect to args[i].

The transforms call them through two hooks for all the differentiated
arguments at once, ``_jacobians(f, args, nums, cost, require_scalar) ->
(value, [J...])`` and ``_hessians(f, args, nums, cost) -> (value, [H...])``,
whose defaults call the per-argument hook once per argument.  A method that
gets every argument from one pass overrides them: reverse mode records f once
and one backward pass gives uᵀ∂f/∂argsᵢ for every i, so its gradient with
respect to ten arguments costs one evaluation and one backward pass, not ten
of each.

A subclass may also override ``_jvp``/``_vjp`` where the method does them
natively (forward mode computes J·t in one pass; reverse mode computes uᵀJ in
one backward pass).  The defaults go through the full Jacobians.

Bad input gets a clear error here, once, for every method: f not callable,
the wrong number of arguments, an unsupported input type, ``grad`` of a
function that does not return a scalar.  A point outside the domain of f
gives NaN with a :class:`DomainWarning` (NumPy's own warnings inside are
silenced, so the user sees one message that names the problem).
"""

from __future__ import annotations

import inspect
import numbers
import time
import warnings
import weakref
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from difflab import backend
from difflab.diff.dual import Dual, check_output  # noqa: F401  (check_output: re-exported)


class DomainWarning(RuntimeWarning):
    """f or its derivative is not finite at the point asked: probably outside f's domain."""


class NumericalWarning(RuntimeWarning):
    """A finite difference is unreliable (rounding error swamps the result)."""


@dataclass
class Cost:
    """What one differentiation call spent.  Fields that do not apply to a method are None.

    Attributes
    ----------
    method : name of the differentiator.
    evaluations : calls of f, or passes over it (forward mode: one per chunk of
        tangents; reverse mode: recorded forward passes, one per call whatever the
        number of arguments; numeric: calls of f; symbolic: traces of f, 0 when the
        compiled derivative came from the cache; compiled: replays of the graph).
    seconds : wall time of the whole call.
    tape_length : reverse mode: records on the tape.
    backward_passes : reverse mode: walks back over the tape, one per row of a
        Jacobian (one for a gradient, for all its arguments together), plus the
        recorded first pass of a reverse-over-reverse Hessian.  ``vjp`` counts the
        calls of its ``vjp_fn`` made so far.
    forward_ops : forward mode: operations performed on dual numbers.
    expression_ops, expression_ops_cse : symbolic: ``sympy.count_ops`` of the
        derivative, without and with common-subexpression elimination.
    tree_size : symbolic: nodes in the derivative's expression tree.
    compile_seconds, eval_seconds : symbolic and compiled: time to trace,
        differentiate and compile (0 when cached), and to evaluate the compiled
        derivative.
    graph_nodes : compiled: nodes of the derivative graph replayed.
    error_estimate : numeric (Richardson): estimated absolute error.
    step : numeric: the (largest) step used.
    notes : anything worth knowing (a step that adapted at a domain edge, ...).
    """

    method: str
    evaluations: int = 0
    seconds: float = 0.0
    tape_length: int | None = None
    backward_passes: int | None = None
    forward_ops: int | None = None
    expression_ops: int | None = None
    expression_ops_cse: int | None = None
    tree_size: int | None = None
    compile_seconds: float | None = None
    eval_seconds: float | None = None
    graph_nodes: int | None = None
    error_estimate: float | None = None
    step: float | None = None
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (for JSON, tables, DataFrames)."""
        return asdict(self)

    def add(self, name: str, amount: float) -> None:
        """Add ``amount`` to a counter that may still be None."""
        setattr(self, name, (getattr(self, name) or 0) + amount)


# --------------------------------------------------------------------- checking


def check_callable(f: Any, transform: str) -> None:
    if not callable(f):
        raise TypeError(
            f"{transform}() expects a function to differentiate, but got "
            f"{type(f).__name__} {f!r:.60}, which is not callable"
        )


#: f -> its signature, read once per function (a derivative is called again and again).
_SIGNATURES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def check_arguments(f: Callable, args: Sequence[Any], transform: str) -> None:
    """Fail early, and clearly, when f cannot take this many arguments."""
    try:
        signature = _SIGNATURES[f]
    except (KeyError, TypeError):
        try:
            signature = inspect.signature(f)
        except (TypeError, ValueError):  # builtins without a signature: let the call decide
            return
        try:
            _SIGNATURES[f] = signature
        except TypeError:  # (f cannot be weakly referenced)
            pass
    try:
        signature.bind(*args)
    except TypeError as exc:
        name = getattr(f, "__name__", type(f).__name__)
        raise TypeError(
            f"{transform}: {name}{signature} cannot be called with {len(args)} "
            f"argument(s) ({exc})"
        ) from None


def normalize_argnums(argnums: int | Sequence[int], nargs: int, transform: str) -> tuple:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not isinstance(i, int) or not -nargs <= i < nargs:
            raise ValueError(
                f"{transform}: argnums={argnums!r} is out of range for a call with {nargs} "
                f"argument(s)"
            )
    return tuple(i % nargs for i in nums)


def as_input(x: Any, transform: str, position: int) -> Any:
    """A point to differentiate at, as a float64 array (NumPy or CuPy; 0-d for a scalar)."""
    from difflab.tensor import Tensor

    if isinstance(x, Dual):
        return x  # a derivative nested inside a forward-mode derivative (f'' = (f')')
    if type(x).__module__.startswith("sympy") or isinstance(x, np.ndarray) and x.dtype == object:
        return x  # a derivative nested inside a symbolic one: the point is an expression
    if isinstance(x, Tensor):
        if x.requires_grad:
            return x  # a derivative nested inside a reverse-mode one: keep it on the tape
        x = x.array
    if backend.is_gpu_array(x):
        return x.astype("float64")
    if isinstance(x, bool) or not isinstance(x, (numbers.Real, np.ndarray, list, tuple)):
        raise TypeError(
            f"{transform}: argument {position} has unsupported type {type(x).__name__}: "
            f"expected a real number, a NumPy/CuPy array, or a list of numbers"
        )
    try:
        array = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            f"{transform}: argument {position} ({type(x).__name__}) is not a real number or an "
            f"array of real numbers"
        ) from None
    return array


class Enclosing:
    """The derivatives that are taking, around the function running now, one of their own.

    ``reverse`` counts the reverse-mode derivatives recording a function that runs
    now, and ``tracked`` holds, for each, the tensors it hands f (its tape's
    inputs).  A tensor that a function inside closes over may be one of them
    (``dl.grad(lambda w: dl.grad(lambda x: f(x, w))(x0).sum())(w0)``), so a
    derivative taken in there keeps its results on the tape; outside every
    recording a result is plain numbers.  ``symbolic`` counts the symbolic traces
    under way (a derivative traced inside one names its symbols x′, x″, ...).
    """

    reverse = 0
    tracked: list[list] = []
    symbolic = 0


def nested(args: Sequence[Any]) -> bool:
    """Whether an enclosing derivative may differentiate this one's results: a reverse one
    is recording, or ``as_input`` left an argument a dual number (forward), a Tensor that
    requires grad (reverse) or expressions (symbolic).  Otherwise a tensor that f closes
    over and that requires grad (a model's parameter) is a constant: the result is plain
    numbers (as PyTorch's ``torch.autograd.functional.jacobian``)."""
    from difflab.tensor import Tensor

    return Enclosing.reverse > 0 or any(
        isinstance(a, Dual) or (isinstance(a, Tensor) and a.requires_grad)
               or (isinstance(a, np.ndarray) and a.dtype == object)
               or type(a).__module__.startswith("sympy") for a in args)


def require_scalar(value: Any, transform: str) -> None:
    shape = tuple(getattr(value, "shape", ()))
    if int(np.prod(shape, dtype=int)) != 1:
        raise ValueError(
            f"{transform} requires f to return a scalar, but it returned shape {shape}. "
            f"Use jacobian() for a function with several outputs, or reduce the output "
            f"(e.g. sum it) first."
        )


class ConstantClosureError(TypeError):
    """A derivative inside another one would drop the dependence the outer one differentiates.

    Raised by :func:`refuse_constant_closure` instead of a silent 0.

    Examples
    --------
    >>> import numpy as np, difflab as dl
    >>> def outer(w):
    ...     return dl.grad(lambda x: w * x**2, method="symbolic")(np.array(3.0))
    >>> dl.grad(outer)(np.array(2.0))
    Traceback (most recent call last):
    ...
    difflab.diff.interface.ConstantClosureError: grad(method='symbolic') inside ...
    >>> def kept(w):  # (forward and reverse mode keep the enclosing tape)
    ...     return dl.grad(lambda x: w * x**2, method="forward")(np.array(3.0))
    >>> float(dl.grad(kept)(np.array(2.0)))
    6.0
    """


def refuse_constant_closure(method: Differentiator, f: Callable, args: Sequence[Any],
                            transform: str) -> None:
    """Refuse a derivative inside another one that would silently come out as a constant.

    ``dl.grad(lambda w: dl.grad(lambda x: w * x**2, method="symbolic")(x0))(w0)``:
    the inner symbolic, numeric or compiled derivative reads ``w`` as a number (a
    sympy expression, finite differences and a compiled program hold values, not
    the enclosing tape), so its result does not depend on ``w`` and the outer
    derivative would be 0 instead of 2 x0.  Forward and reverse mode keep the
    enclosing tape, and a symbolic derivative inside a symbolic trace composes its
    expressions (:attr:`Differentiator.keeps_enclosing` names what each keeps).

    Only inside an enclosing derivative whose record ``method`` drops, f is called
    once more at the point; if its value depends on what the enclosing derivative
    differentiates (a tensor of its tape, or sympy symbols), this raises.  An
    argument the enclosing derivative tracks is left to each method's own check.

    Parameters
    ----------
    method : Differentiator
        The inner derivative's method.
    f : callable
        The function it differentiates.
    args : sequence
        The point (the differentiated arguments already plain arrays).
    transform : str
        ``"grad"``, ``"jvp"``, ...: named in the error.

    Raises
    ------
    ConstantClosureError
        Naming the method and what to use instead.
    """
    from difflab.tensor import Tensor

    tape = Enclosing.reverse > 0 and "reverse" not in method.keeps_enclosing
    symbols = Enclosing.symbolic > 0 and "symbolic" not in method.keeps_enclosing
    if not (tape or symbols) or not all(is_plain(a) for a in args):
        return  # (an argument the enclosing derivative tracks: each method's own check)
    value = f(*[Tensor._wrap(a) if is_plain(a) else a for a in args])
    if not (tape and _on_enclosing_tape(value) or symbols and _holds_symbols(value)):
        return
    name = method.name
    enclosing, keeping = ("a reverse-mode derivative", "method='reverse' or method='forward'") \
        if tape else ("a symbolic derivative", "method='symbolic' or method='forward'")
    raise ConstantClosureError(
        f"{transform}(method={name!r}) inside {enclosing}: f reads a value that the "
        f"enclosing derivative differentiates (a tensor or symbol f closes over). "
        f"method={name!r} takes it as a constant, so the enclosing derivative would "
        f"silently see no dependence on it (0). Use {keeping} for this inner derivative "
        f"(they keep the enclosing derivative's record), or differentiate the outer "
        f"function with method='numeric'."
    )


def _on_enclosing_tape(value: Any) -> bool:
    """Whether the tensor ``value`` was computed from an input of an enclosing reverse
    derivative (its records, ``engine.reachable``, reach that input's record or leaf)."""
    from difflab.autograd.engine import reachable
    from difflab.tensor import Tensor

    if not isinstance(value, Tensor) or value.grad_fn is None:
        return False
    records = reachable([value.grad_fn])
    leaves = {id(p) for record in records for p in record.parents if isinstance(p, Tensor)}
    return any(t.grad_fn in records if t.grad_fn is not None else id(t) in leaves
               for tracked in Enclosing.tracked for t in tracked)


def _holds_symbols(value: Any) -> bool:
    """Whether ``value`` holds sympy expressions (an enclosing symbolic trace's)."""
    array = getattr(value, "array", value)
    return (isinstance(array, np.ndarray) and array.dtype == object) or \
        type(array).__module__.startswith("sympy")


def with_arg(args: Sequence[Any], i: int, value: Any) -> list:
    """``args`` with the i-th replaced by ``value``."""
    new = list(args)
    new[i] = value
    return new


def is_plain(x: Any) -> bool:
    """A number or a NumPy/CuPy array (not a Dual of an enclosing derivative, not a Tensor)."""
    if isinstance(x, np.ndarray):
        return x.dtype != object  # an object array holds expressions, not numbers
    return isinstance(x, (numbers.Number, np.generic)) or backend.is_gpu_array(x)


def to_result(x: Any) -> Any:
    """Results as float64 arrays; a 0-d result as a NumPy float."""
    if backend.is_gpu_array(x) or not is_plain(x):
        return x  # e.g. a Dual, when this derivative is nested inside another one
    x = np.asarray(x, dtype=np.float64)
    return x[()] if x.ndim == 0 else x


def poison(value: Any, J: Any) -> Any:
    """NaN in the rows of J whose output f(x) is not finite (x is outside f's domain).

    Forward and reverse mode would otherwise return the rule's formula evaluated
    outside the domain: d log(x)/dx = 1/x = -1 at x = -1, where log is undefined.
    """
    if not (is_plain(value) and is_plain(J)):
        return J  # nested inside another derivative: checked there, on plain numbers
    xp = backend.array_module(J)
    bad = ~xp.isfinite(xp.asarray(value, dtype=np.float64))
    if not bool(xp.any(bad)):
        return J
    J = xp.array(J, dtype=np.float64)
    extra = J.ndim - bad.ndim
    J[xp.broadcast_to(xp.reshape(bad, bad.shape + (1,) * extra), J.shape)] = np.nan
    return J


def warn_if_outside_domain(args: Sequence[Any], result: Any, transform: str) -> None:
    arrays = [a for a in (result if isinstance(result, tuple) else (result,))]
    bad = False
    for a in arrays:
        if not is_plain(a):
            return
        xp = backend.array_module(a)
        if not bool(xp.all(xp.isfinite(xp.asarray(a)))):
            bad = True
    if bad:
        point = ", ".join(np.array2string(backend.to_numpy(a), precision=6, threshold=6)
                          if hasattr(a, "shape") else repr(a) for a in args)
        warnings.warn(
            f"{transform}: the result is not finite (NaN or inf) at ({point}): the point is "
            f"probably outside the domain of f or of its derivative (log or sqrt of a "
            f"negative number, division by zero, sqrt at 0, ...).",
            DomainWarning,
            stacklevel=4,
        )


# ----------------------------------------------------------------- the base class


class Differentiator:
    """Base class: the public transforms, built on two hooks a subclass implements.

    Register a subclass under a new name with
    :func:`difflab.diff.differentiators.register` to make it available as
    ``method="name"`` everywhere.
    """

    name: str = "base"
    #: The enclosing derivatives ("reverse", "symbolic") whose record a derivative taken
    #: inside one keeps (a tensor or symbol f closes over stays differentiable): forward
    #: and reverse mode keep a reverse tape, symbolic mode an enclosing trace's symbols;
    #: :func:`refuse_constant_closure` guards the rest.
    keeps_enclosing: frozenset = frozenset()

    # -- hooks ---------------------------------------------------------------------------
    def _jacobian(self, f: Callable, args: list, i: int, cost: Cost,
                  require_scalar: bool) -> tuple[Any, Any]:
        raise NotImplementedError

    def _hessian(self, f: Callable, args: list, i: int, cost: Cost) -> Any:
        raise NotImplementedError

    def _jacobians(self, f: Callable, args: list, nums: tuple, cost: Cost,
                   require_scalar: bool) -> tuple[Any, list]:
        """f(*args) and the Jacobian for each args[i], i in ``nums``.

        Default: the per-argument hook once per argument.
        """
        value, jacobians = None, []
        for i in nums:
            value, J = self._jacobian(f, args, i, cost, require_scalar)
            jacobians.append(J)
        return value, jacobians

    def _hessians(self, f: Callable, args: list, nums: tuple, cost: Cost) -> tuple[Any, list]:
        """f(*args) and the Hessian for each args[i], i in ``nums``.

        Default: the per-argument hook once per argument, then f(x) itself, only to
        see whether x is inside f's domain (not counted in the cost): the rules would
        otherwise give numbers where f is undefined.  f gets a point that is an array
        as a constant tensor, as every method hands f a tensor-like value.
        """
        from difflab.tensor import Tensor

        hessians = [self._hessian(f, args, i, cost) for i in nums]
        point = list(args)
        for i in nums:
            point[i] = Tensor._wrap(args[i]) if is_plain(args[i]) else args[i]
        value = f(*point)
        return (value.array if isinstance(value, Tensor) else value), hessians

    def _jvp(self, f: Callable, primals: list, tangents: list, cost: Cost) -> tuple[Any, Any]:
        """Default: J·t = Σᵢ Jᵢ tᵢ from full Jacobians."""
        value, jacobians = self._jacobians(f, primals, tuple(range(len(primals))), cost, False)
        total = None
        for J, t in zip(jacobians, tangents):
            xp = backend.array_module(J)
            out_shape = J.shape[: J.ndim - np.ndim(t)]
            term = xp.reshape(
                xp.reshape(J, (-1, int(np.prod(np.shape(t), dtype=int)))) @ xp.reshape(t, -1),
                out_shape,
            )
            total = term if total is None else total + term
        return value, total

    def _vjp(self, f: Callable, primals: list, cost: Cost) -> tuple[Any, Callable]:
        """Default: uᵀJᵢ from full Jacobians (computed now, applied later)."""
        value, jacobians = self._jacobians(f, primals, tuple(range(len(primals))), cost, False)
        out_shape = tuple(np.shape(value))

        def vjp_fn(u: Any) -> tuple:
            u = _check_cotangent(u, out_shape)
            results = []
            for J, p in zip(jacobians, primals):
                xp = backend.array_module(J)
                flat = xp.reshape(u, -1) @ xp.reshape(J, (u.size, -1))
                results.append(to_result(xp.reshape(flat, np.shape(p))))
            return tuple(results)

        return value, vjp_fn

    # -- the transforms --------------------------------------------------------------------
    def _run(self, transform: str, f: Callable, args: tuple, argnums: Any,
             body: Callable, return_cost: bool) -> Any:
        check_arguments(f, args, transform)
        nums = normalize_argnums(argnums, len(args), transform)
        args = list(args)
        for i in nums:
            args[i] = as_input(args[i], transform, i)
        refuse_constant_closure(self, f, args, transform)
        cost = Cost(self.name)
        start = time.perf_counter()
        with np.errstate(all="ignore"):
            results = body(args, nums, cost)
        cost.seconds = time.perf_counter() - start
        result = results[0] if isinstance(argnums, int) else results
        warn_if_outside_domain([args[i] for i in nums], result, transform)
        return (result, cost) if return_cost else result

    def derivative(self, f: Callable) -> Callable[..., Any]:
        """f'(x) for a scalar x: ``derivative(f)(x)`` (shape of f(x))."""
        check_callable(f, "derivative")

        def body(args: list, nums: tuple, cost: Cost) -> tuple:
            if np.ndim(args[0]) != 0:
                raise ValueError(
                    f"derivative() is for a scalar input, but got shape {np.shape(args[0])}; "
                    f"use grad() or jacobian() for arrays"
                )
            value, (J,) = self._jacobians(f, args, nums, cost, False)
            return (to_result(poison(value, J)),)

        def derivative_of_f(x: Any, *rest: Any, return_cost: bool = False) -> Any:
            return self._run("derivative", f, (x, *rest), 0, body, return_cost)

        return derivative_of_f

    def grad(self, f: Callable, argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
        """∇f with respect to ``args[argnums]`` for a scalar-valued f."""
        check_callable(f, "grad")

        def body(args: list, nums: tuple, cost: Cost) -> tuple:
            value, jacobians = self._jacobians(f, args, nums, cost, True)
            # J.reshape, the method: J may be a Tensor
            return tuple(to_result(poison(value, J).reshape(np.shape(args[i])))
                         for i, J in zip(nums, jacobians))

        def grad_of_f(*args: Any, return_cost: bool = False) -> Any:
            return self._run("grad", f, args, argnums, body, return_cost)

        return grad_of_f

    def jacobian(self, f: Callable, argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
        """J = ∂f/∂x, shape f(x).shape + x.shape."""
        check_callable(f, "jacobian")

        def body(args: list, nums: tuple, cost: Cost) -> tuple:
            value, jacobians = self._jacobians(f, args, nums, cost, False)
            return tuple(to_result(poison(value, J)) for J in jacobians)

        def jacobian_of_f(*args: Any, return_cost: bool = False) -> Any:
            return self._run("jacobian", f, args, argnums, body, return_cost)

        return jacobian_of_f

    def hessian(self, f: Callable, argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
        """H = ∂²f/∂x², shape x.shape + x.shape, for a scalar-valued f."""
        check_callable(f, "hessian")

        def body(args: list, nums: tuple, cost: Cost) -> tuple:
            value, hessians = self._hessians(f, args, nums, cost)
            # poison: NaN where x is outside f's domain (the rules would give numbers)
            shapes = [np.shape(args[i]) for i in nums]
            return tuple(to_result(poison(value, H).reshape(shape + shape))
                         for shape, H in zip(shapes, hessians))

        def hessian_of_f(*args: Any, return_cost: bool = False) -> Any:
            return self._run("hessian", f, args, argnums, body, return_cost)

        return hessian_of_f

    def jvp(self, f: Callable, primals: Sequence[Any], tangents: Sequence[Any],
            return_cost: bool = False) -> Any:
        """``(f(*primals), J·tangents)``: the derivative of f along a direction."""
        check_callable(f, "jvp")
        primals, tangents = _pair(primals, tangents, "jvp")
        check_arguments(f, primals, "jvp")
        refuse_constant_closure(self, f, primals, "jvp")
        cost = Cost(self.name)
        start = time.perf_counter()
        with np.errstate(all="ignore"):
            value, out = self._jvp(f, primals, tangents, cost)
        cost.seconds = time.perf_counter() - start
        result = (to_result(value), to_result(out))
        warn_if_outside_domain(primals, result, "jvp")
        return (result, cost) if return_cost else result

    def vjp(self, f: Callable, primals: Sequence[Any], return_cost: bool = False) -> Any:
        """``(f(*primals), vjp_fn)``; ``vjp_fn(u)`` returns uᵀ∂f/∂pᵢ for every primal pᵢ."""
        check_callable(f, "vjp")
        if not isinstance(primals, (list, tuple)):
            raise TypeError("vjp: primals must be a tuple of arguments, e.g. (x,) or (x, y)")
        primals = [as_input(p, "vjp", k) for k, p in enumerate(primals)]
        check_arguments(f, primals, "vjp")
        refuse_constant_closure(self, f, primals, "vjp")
        cost = Cost(self.name)
        start = time.perf_counter()
        with np.errstate(all="ignore"):
            value, fn = self._vjp(f, primals, cost)
        cost.seconds = time.perf_counter() - start
        result = (to_result(value), fn)
        return (result, cost) if return_cost else result

    def __repr__(self) -> str:
        options = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({options})"


def _pair(primals: Any, tangents: Any, transform: str) -> tuple[list, list]:
    if not isinstance(primals, (list, tuple)) or not isinstance(tangents, (list, tuple)):
        raise TypeError(
            f"{transform}: primals and tangents must be tuples of arguments, e.g. (x,) and (v,)"
        )
    if len(primals) != len(tangents):
        raise ValueError(
            f"{transform}: got {len(primals)} primal(s) but {len(tangents)} tangent(s): "
            f"give one tangent per primal"
        )
    primals = [as_input(p, transform, k) for k, p in enumerate(primals)]
    tangents = [as_input(t, transform, k) for k, t in enumerate(tangents)]
    for k, (p, t) in enumerate(zip(primals, tangents)):
        if np.shape(p) != np.shape(t):
            raise ValueError(
                f"{transform}: tangent {k} has shape {np.shape(t)} but primal {k} has shape "
                f"{np.shape(p)}: they must match"
            )
    return primals, tangents


def _check_cotangent(u: Any, out_shape: tuple) -> Any:
    u = u if backend.is_gpu_array(u) else np.asarray(u, dtype=np.float64)
    if tuple(u.shape) != tuple(out_shape):
        raise ValueError(
            f"vjp_fn: the cotangent has shape {tuple(u.shape)} but f's output has shape "
            f"{tuple(out_shape)}: they must match"
        )
    return u
