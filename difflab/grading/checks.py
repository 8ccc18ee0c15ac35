"""Checks that instructors call in their tests, with failure messages that teach.

Every check compares the student's answer with an independent one (a reference
implementation, or central finite differences in float64) and, when they disagree, raises
:class:`~difflab.grading.errors.GradingFailure` (an ``AssertionError``, so pytest reports
it as a failed test) whose message says:

* *what* differs (``gradient of input 0``, ``tangent of dual_sin``, ``parameter 'weight'
  after step 2``),
* *where* (the element index, or the input point),
* *by how much* (both values, absolute and relative error, the tolerance), and
* a *hint* when the error has a recognisable shape: the result is off by a constant
  factor, has the wrong sign, is zero, or is missing the upstream gradient (chain rule).

The finite-difference reference is the central difference
``(f(x + h e_i) - f(x - h e_i)) / 2h`` in float64, whose error is O(h^2) plus rounding of
order eps/h; with ``h = 1e-6`` that is about 1e-10 relative for smooth functions, well
below the default tolerance.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from difflab import finite_differences
from difflab.grading.closeness import (  # noqa: F401  (assert_close, numeric_gradient: re-exported)
    ATOL,
    EPS,
    RTOL,
    _fmt,
    _to_numpy,
    assert_close,
    numeric_gradient,
)
from difflab.grading.credit import check_part
from difflab.grading.errors import GradingFailure

__all__ = [
    "check_gradient",
    "check_function",
    "check_dual_rule",
    "check_module",
    "check_optimizer_step",
    "assert_close",
    "numeric_gradient",
]



# --------------------------------------------------------------------------------------
# difflab glue (imported lazily: the helpers for dual rules need no tensors)
# --------------------------------------------------------------------------------------
def _difflab() -> Any:
    import difflab

    return difflab


def _tensor(x: np.ndarray, requires_grad: bool = False) -> Any:
    dl = _difflab()
    return dl.tensor(np.array(x, dtype=np.float64), dtype=dl.float64, requires_grad=requires_grad)


def _no_grad() -> Any:
    dl = _difflab()
    if hasattr(dl, "no_grad"):
        return dl.no_grad()
    import contextlib

    return contextlib.nullcontext()


def _as_inputs(inputs: Any) -> list[np.ndarray]:
    if isinstance(inputs, (list, tuple)):
        return [_to_numpy(x) for x in inputs]
    return [_to_numpy(inputs)]


def _weighted_sum(y: Any, weights: np.ndarray) -> Any:
    """``sum(y * weights)`` as a difflab scalar, so backward sees a non-trivial upstream."""
    if weights.ndim == 0:
        return y * float(weights)
    return (y * _tensor(weights)).sum()


def _grad_of(t: Any, what: str) -> np.ndarray:
    if t.grad is None:
        raise GradingFailure(
            f"{what} received no gradient (.grad is None after backward). Does the output "
            "depend on it through difflab operations, without .detach(), .data or numpy "
            "calls in between?"
        )
    return _to_numpy(t.grad)


def _upstream(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """An upstream gradient with entries in [0.5, 2] but never 1 (exposes missing factors)."""
    g = rng.uniform(0.5, 2.0, size=shape)
    return np.where(np.abs(g - 1.0) < 0.05, 1.5, g)


# --------------------------------------------------------------------------------------
# the checks
# --------------------------------------------------------------------------------------
def check_gradient(
    fn: Callable[..., Any],
    inputs: Any,
    *,
    reference: Callable[..., Any] | None = None,
    atol: float = ATOL,
    rtol: float = RTOL,
    eps: float = EPS,
    seed: int = 0,
) -> None:
    """Check reverse-mode gradients of ``fn`` against central finite differences.

    With ``reference`` (the function on float64 numpy arrays, as in
    :func:`check_function`), ``fn``'s output is compared with it and the gradients with
    finite differences *of the reference*, computed here: the student's code cannot steer
    what it is compared with.  Without one, the finite differences are of ``fn`` itself,
    called exactly as for the gradient (inputs that require grad): a *consistency* check,
    which proves that the backward agrees with the forward, not that either is right, and
    which a submission that behaves differently when called again can pass.  Give a
    reference whenever the marks matter.  Neither kind holds a stop-gradient of ``fn``
    (``x.detach()``, a straight-through estimator) still, as ``gradcheck`` does: the
    finite differences are of what ``fn`` computes, so a value computed under ``detach``
    with some other gradient attached fails, in the student's process as here.

    Parameters
    ----------
    fn : callable
        Takes difflab tensors (one per input) and returns a tensor built from difflab
        operations (the student's code may be anywhere inside).
    inputs : array_like or sequence of array_like
        The point(s) at which to check; converted to float64.
    reference : callable, optional
        What ``fn`` should compute, on float64 numpy arrays
        (``lambda x: np.sum(x ** 3)``).
    atol, rtol : float, optional
        Tolerance of the comparison.
    eps : float, optional
        Relative step of the central differences.
    seed : int, optional
        Seed of the random output weights (a non-scalar output ``y`` is reduced to
        ``sum(w * y)`` so every output element matters).

    Returns
    -------
    None
        The check passed (a failure raises, with the explanation).

    Raises
    ------
    GradingFailure
        Naming the input, the element, both values and the errors.

    Examples
    --------
    >>> import numpy as np
    >>> check_gradient(lambda x: (x ** 3).sum(), [np.array([0.5, -1.0])],
    ...                reference=lambda x: np.sum(x ** 3))
    """
    xs = _as_inputs(inputs)
    expected = None
    if reference is not None:
        expected = np.asarray(reference(*[x.copy() for x in xs]), dtype=np.float64)
    declared = sum(x.size for x in xs) + (expected.size if expected is not None else 0)
    with check_part(declared):
        tensors = [_tensor(x, requires_grad=True) for x in xs]
        y = fn(*tensors)
        if expected is not None:
            assert_close(_to_numpy(y), expected, what="output (vs the reference)",
                         atol=atol, rtol=rtol)
        w = _upstream(expected.shape if expected is not None else _to_numpy(y).shape,
                      np.random.default_rng(seed))
        _weighted_sum(y, w).backward()

        if reference is not None:
            def f(*arrays: np.ndarray) -> float:
                return float(np.sum(w * np.asarray(reference(*arrays), dtype=np.float64)))
        else:
            def f(*arrays: np.ndarray) -> float:
                # called as for the gradient: a forward cannot tell the two apart by
                # requires_grad (grad mode stays on; the result is only read)
                out = fn(*[_tensor(a, requires_grad=True) for a in arrays])
                return float(np.sum(w * _to_numpy(out)))

        source = "reference" if reference is not None else "numeric"
        for i, t in enumerate(tensors):
            analytic = _grad_of(t, f"input {i}")
            numeric = numeric_gradient(f, xs, i, eps)
            assert_close(
                analytic, numeric, what=f"gradient of input {i} (analytic vs {source})",
                atol=atol, rtol=rtol, point=(f"input {i}", xs[i]),
            )


def check_function(
    function: Any,
    reference_fn: Callable[..., Any],
    inputs: Any,
    *,
    atol: float = ATOL,
    rtol: float = RTOL,
    eps: float = EPS,
    seed: int = 0,
    check_forward: bool = True,
    check_backward: bool = True,
) -> None:
    """Check a custom autograd Function's forward and backward.

    The forward is compared with ``reference_fn``; the backward with the numeric
    vector-Jacobian product of ``reference_fn``, using a random upstream gradient, so a
    backward that ignores ``grad_output`` fails.

    Parameters
    ----------
    function : type
        A ``difflab.autograd.Function`` subclass (anything with ``.apply``).
    reference_fn : callable
        The mathematical function on float64 numpy arrays, e.g.
        ``lambda x: (5 * x**3 - 3 * x) / 2``.
    inputs : array_like or sequence of array_like
        The point(s) at which to check.
    atol, rtol, eps, seed : optional
        Tolerances, finite-difference step and seed of the upstream gradient.
    check_forward, check_backward : bool, optional
        Set one to False to check only the other (to award their points separately).

    Returns
    -------
    None
        The check passed (a failure raises, with the explanation).

    Raises
    ------
    GradingFailure
        Saying whether the forward or the backward is wrong, for which input and element.

    Examples
    --------
    >>> import numpy as np
    >>> import difflab as dl
    >>> from difflab.grading import check_function
    >>> class Cube(dl.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x ** 3
    ...     @staticmethod
    ...     def backward(ctx, grad_output):
    ...         (x,) = ctx.saved_tensors
    ...         return grad_output * 3 * x ** 2
    >>> check_function(Cube, lambda x: x ** 3, [np.array([0.5, -1.0, 2.0])])
    """
    xs = _as_inputs(inputs)
    name = getattr(function, "__name__", "the Function")
    expected = np.asarray(reference_fn(*[x.copy() for x in xs]), dtype=np.float64)
    declared = (expected.size if check_forward else 0) + (
        sum(x.size for x in xs) if check_backward else 0)
    with check_part(declared):  # a backward that raises leaves its elements as misses
        _check_function(function, name, reference_fn, xs, expected, atol=atol, rtol=rtol,
                        eps=eps, seed=seed, check_forward=check_forward,
                        check_backward=check_backward)


def _check_function(function: Any, name: str, reference_fn: Callable[..., Any],
                    xs: list[np.ndarray], expected: np.ndarray, *, atol: float, rtol: float,
                    eps: float, seed: int, check_forward: bool, check_backward: bool) -> None:
    tensors = [_tensor(x, requires_grad=True) for x in xs]
    out = function.apply(*tensors)
    if check_forward:
        assert_close(_to_numpy(out), expected, what=f"{name}.forward output", atol=atol, rtol=rtol)
    if not check_backward:
        return
    g = _upstream(expected.shape, np.random.default_rng(seed))
    _weighted_sum(out, g).backward()

    def vjp(*arrays: np.ndarray) -> float:
        return float(np.sum(g * np.asarray(reference_fn(*arrays), dtype=np.float64)))

    for i, t in enumerate(tensors):
        got = _grad_of(t, f"{name}: input {i}")
        want = numeric_gradient(vjp, xs, i, eps)
        up = g if g.shape == want.shape else None
        assert_close(
            got, want, what=f"{name}.backward: gradient for input {i}",
            atol=atol, rtol=rtol, upstream=up, point=(f"input {i}", xs[i]),
        )


_UNARY_POINTS = (-1.7, -0.6, 0.3, 0.9, 2.2)
_TANGENTS = (1.0, 2.0, -0.5, 3.0, 0.25, 1.5)
_BINARY_POINTS = ((1.5, -2.0), (0.7, 1.3), (-1.2, 0.4), (2.5, 3.0))
_BINARY_TANGENTS = ((1.0, 0.0), (0.0, 1.0), (2.0, -0.5), (0.5, 1.5))


class _PairDual:
    """A minimal dual number, for rules written against ``.primal`` / ``.tangent``."""

    def __init__(self, primal: Any, tangent: Any) -> None:
        self.primal, self.tangent = primal, tangent

    def __repr__(self) -> str:
        return f"Dual({self.primal!r}, {self.tangent!r})"


def _arity(reference: Callable[..., Any]) -> int:
    nin = getattr(reference, "nin", None)  # numpy ufuncs
    if isinstance(nin, int):
        return nin
    params = [
        p for p in inspect.signature(reference).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    ]
    return len(params)


def _positional_count(op: Callable[..., Any]) -> int | None:
    try:
        params = inspect.signature(op).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return None
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


def _unpack_dual(result: Any, name: str) -> tuple[Any, Any]:
    if isinstance(result, tuple) and len(result) == 2:
        return result
    for value_attr, tangent_attr in (("primal", "tangent"), ("value", "deriv"),
                                     ("val", "der"), ("real", "dual")):
        if hasattr(result, value_attr) and hasattr(result, tangent_attr):
            return getattr(result, value_attr), getattr(result, tangent_attr)
    raise GradingFailure(
        f"{name} returned {type(result).__name__} {result!r}; expected a (value, tangent) "
        "pair or a dual number with .primal and .tangent"
    )


def check_dual_rule(
    op: Callable[..., Any],
    reference: Callable[..., Any],
    *,
    points: Iterable[Any] | None = None,
    tangents: Iterable[Any] | None = None,
    convention: str = "auto",
    dual_cls: type | None = None,
    atol: float = ATOL,
    rtol: float = RTOL,
    eps: float = EPS,
) -> None:
    """Check a forward-mode (dual-number) rule against its function and derivative.

    For inputs ``a_i`` with tangents ``da_i`` the rule must return the value
    ``reference(a)`` and the tangent ``sum_i d reference/d a_i * da_i``; the latter is
    computed by central differences along the direction ``da``, so only the function
    itself is needed as a reference.

    Parameters
    ----------
    op : callable
        The student's rule, in either convention:
        ``"pairs"``: ``op(a, da)`` / ``op(a, da, b, db)`` returning ``(value, tangent)``;
        ``"dual"``: ``op(x)`` / ``op(x, y)`` taking and returning dual numbers (anything
        with ``.primal`` and ``.tangent``).  ``"auto"`` picks from ``op``'s signature.
    reference : callable
        The function itself on floats/arrays, e.g. ``np.sin`` or ``np.multiply``.
    points : iterable, optional
        Primal inputs: numbers for a unary rule, tuples for an n-ary one.  Pass them for
        functions with a restricted domain (``log``, ``sqrt``).
    tangents : iterable, optional
        Matching tangents; by default values that are not all 1, so a rule that forgets
        to multiply by the incoming tangent fails.
    convention : {"auto", "pairs", "dual"}, optional
        See ``op``.
    dual_cls : type, optional
        The dual-number class to build inputs with in the ``"dual"`` convention; default
        ``difflab.diff.forward.Dual`` when available.
    atol, rtol, eps : float, optional
        Tolerances and finite-difference step.

    Returns
    -------
    None
        The check passed (a failure raises, with the explanation).

    Raises
    ------
    GradingFailure
        Naming the input point and tangent where value or tangent is wrong.

    Examples
    --------
    >>> import numpy as np
    >>> from difflab.grading import GradingFailure, check_dual_rule
    >>> def dual_sin(a, da):
    ...     return np.sin(a), np.cos(a) * da
    >>> check_dual_rule(dual_sin, np.sin)
    >>> def wrong(a, da):
    ...     return np.sin(a), np.sin(a) * da
    >>> try:
    ...     check_dual_rule(wrong, np.sin)
    ... except GradingFailure as failure:
    ...     print(str(failure)[:40])
    tangent of wrong at a=-1.7, da=1 differs
    """
    name = getattr(op, "__name__", "the rule")
    n = _arity(reference)
    if points is None:
        points = _UNARY_POINTS if n == 1 else (
            _BINARY_POINTS if n == 2 else [tuple(0.3 + 0.4 * k for k in range(n))]
        )
    pts = [tuple(p) if isinstance(p, (tuple, list)) else (p,) for p in points]
    if tangents is None:
        defaults = _TANGENTS if n == 1 else _BINARY_TANGENTS
        tans = [tuple(defaults[i % len(defaults)]) if n == 2 else
                (defaults[i % len(defaults)],) * n for i in range(len(pts))]
    else:
        tans = [tuple(t) if isinstance(t, (tuple, list)) else (t,) for t in tangents]
    if convention == "auto":
        count = _positional_count(op)
        convention = "pairs" if count == 2 * n else "dual"
    if convention == "dual" and dual_cls is None:
        try:
            from difflab.diff.forward import Dual as dual_cls  # noqa: N813
        except ImportError:
            dual_cls = _PairDual
    cases = [(tuple(np.float64(v) if np.isscalar(v) else _to_numpy(v) for v in a),
              tuple(np.float64(v) if np.isscalar(v) else _to_numpy(v) for v in da))
             for a, da in zip(pts, tans)]
    # every value and tangent counts, reached or not (partial credit)
    declared = sum(2 * np.size(reference(*a)) for a, _ in cases)
    with check_part(declared):
        _check_dual_cases(op, reference, name, n, cases, convention, dual_cls,
                          atol=atol, rtol=rtol, eps=eps)


def _check_dual_cases(op: Callable[..., Any], reference: Callable[..., Any], name: str,
                      n: int, cases: list[tuple[tuple, tuple]], convention: str,
                      dual_cls: Any, *, atol: float, rtol: float, eps: float) -> None:
    letters = "abcdefgh"
    for a, da in cases:
        at = ", ".join(
            f"{letters[k]}={_show(a[k])}, d{letters[k]}={_show(da[k])}" for k in range(n)
        )
        if convention == "pairs":
            args = [v for pair in zip(a, da) for v in pair]
            value, tangent = _unpack_dual(op(*args), name)
        else:
            value, tangent = _unpack_dual(op(*[dual_cls(x, dx) for x, dx in zip(a, da)]), name)
        ref_name = getattr(reference, "__name__", "the reference")
        assert_close(
            value, reference(*a), what=f"value of {name} at {at} (vs {ref_name})",
            atol=atol, rtol=rtol,
        )
        expected = _directional(reference, a, da, eps)
        assert_close(
            tangent, expected, what=f"tangent of {name} at {at}",
            atol=atol, rtol=rtol, hint=_tangent_hint(tangent, reference, a, da, eps),
        )


def _show(v: Any) -> str:
    return _fmt(float(v)) if np.ndim(v) == 0 else f"array{np.shape(v)}"


def _directional(reference: Callable[..., Any], a: tuple, da: tuple, eps: float) -> np.ndarray:
    """The derivative of ``reference`` at ``a`` along ``da``, by central differences."""
    scale = max([1.0] + [float(np.max(np.abs(x))) for x in a])

    def along(t: float) -> np.ndarray:
        return np.asarray(reference(*[x + t * d for x, d in zip(a, da)]), dtype=np.float64)

    return finite_differences.difference(along, eps * scale)[0]


def _tangent_hint(tangent: Any, reference: Callable[..., Any], a: tuple, da: tuple,
                  eps: float) -> str:
    """Recognise a tangent that forgot da, or kept only one input's contribution."""
    got = _to_numpy(tangent)
    if len(a) == 1:
        d = _directional(reference, a, (np.ones_like(np.asarray(da[0])),), eps)
        if np.all(np.abs(np.asarray(da[0]) - 1.0) > 1e-3) and got.shape == d.shape and np.allclose(
            got, d, rtol=1e-4, atol=1e-8
        ):
            return ("You returned the derivative f'(a) itself: the tangent is f'(a) * da "
                    "(chain rule: multiply by the incoming tangent).")
        return ""
    for k in range(len(a)):
        only = tuple(d if j == k else np.zeros_like(np.asarray(d)) for j, d in enumerate(da))
        part = _directional(reference, a, only, eps)
        full = _directional(reference, a, da, eps)
        if got.shape == part.shape and np.allclose(got, part, rtol=1e-4, atol=1e-8) and not \
                np.allclose(part, full, rtol=1e-4, atol=1e-8):
            return (f"Your tangent has only input {k}'s contribution: the tangent must add "
                    "one term per input (e.g. the product rule a*db + b*da).")
    return ""


def _named_parameters(module: Any) -> list[tuple[str, Any]]:
    if hasattr(module, "named_parameters"):
        return list(module.named_parameters())
    return [(f"#{i}", p) for i, p in enumerate(module.parameters())]


def check_module(
    student_module: Any,
    reference_module: Any,
    inputs: Any,
    *,
    copy_parameters: bool = True,
    atol: float = ATOL,
    rtol: float = RTOL,
    seed: int = 0,
) -> None:
    """Check a student's layer against a reference layer: output, input and parameter grads.

    Parameters
    ----------
    student_module, reference_module : difflab.nn.Module
        Two modules meant to compute the same function.
    inputs : array_like or sequence of array_like
        The input(s) of ``forward``.
    copy_parameters : bool, optional
        Load the reference's ``state_dict()`` into the student's module first, so both
        have the same weights (parameter names and shapes must then match).
    atol, rtol : float, optional
        Tolerance of the comparisons.
    seed : int, optional
        Seed of the random upstream gradient.

    Returns
    -------
    None
        The check passed (a failure raises, with the explanation).

    Raises
    ------
    GradingFailure
        Naming what differs: parameter names or shapes, the output, the gradient of an
        input or of a named parameter, with the element.

    Examples
    --------
    >>> import numpy as np
    >>> import difflab as dl
    >>> from difflab.grading import check_module
    >>> check_module(dl.nn.Linear(3, 2), dl.nn.Linear(3, 2), [np.ones((4, 3))])
    """
    xs = _as_inputs(inputs)
    xs_r = [_tensor(x, requires_grad=True) for x in xs]
    out_r = reference_module(*xs_r)  # the reference first: it says what will be compared
    declared = _to_numpy(out_r).size + sum(x.size for x in xs) + sum(
        _to_numpy(p).size for _, p in _named_parameters(reference_module))
    with check_part(declared):
        _check_module(student_module, reference_module, xs, xs_r, out_r,
                      copy_parameters=copy_parameters, atol=atol, rtol=rtol, seed=seed)


def _check_module(student_module: Any, reference_module: Any, xs: list[np.ndarray],
                  xs_r: list[Any], out_r: Any, *, copy_parameters: bool, atol: float,
                  rtol: float, seed: int) -> None:
    if copy_parameters:
        ref_state = reference_module.state_dict()
        mine = {k: _to_numpy(v).shape for k, v in student_module.state_dict().items()}
        theirs = {k: _to_numpy(v).shape for k, v in ref_state.items()}
        if set(mine) != set(theirs):
            raise GradingFailure(
                f"your module's parameters are named {sorted(mine)}, the reference's are "
                f"{sorted(theirs)}; name them the same (set them as attributes in __init__)."
            )
        for key, shape in theirs.items():
            if mine[key] != shape:
                raise GradingFailure(
                    f"parameter '{key}' has shape {mine[key]}, expected {shape}."
                )
        student_module.load_state_dict(ref_state)
    xs_s = [_tensor(x, requires_grad=True) for x in xs]
    out_s = student_module(*xs_s)
    assert_close(_to_numpy(out_s), _to_numpy(out_r), what="module output", atol=atol, rtol=rtol)
    g = _upstream(_to_numpy(out_r).shape, np.random.default_rng(seed))
    _weighted_sum(out_s, g).backward()
    _weighted_sum(out_r, g).backward()
    for i, (ts, tr) in enumerate(zip(xs_s, xs_r)):
        assert_close(
            _grad_of(ts, f"input {i}"), _grad_of(tr, f"reference input {i}"),
            what=f"gradient of module input {i}", atol=atol, rtol=rtol,
        )
    ref_params = dict(_named_parameters(reference_module))
    for key, p in _named_parameters(student_module):
        if key not in ref_params:
            continue
        assert_close(
            _grad_of(p, f"parameter '{key}'"), _grad_of(ref_params[key], f"reference '{key}'"),
            what=f"gradient of parameter '{key}'", atol=atol, rtol=rtol,
        )


def check_optimizer_step(
    student_optimizer: Callable[..., Any],
    reference_optimizer: Callable[..., Any],
    *,
    shapes: Sequence[tuple[int, ...]] = ((3,), (2, 2)),
    steps: int = 3,
    seed: int = 0,
    atol: float = 1e-8,
    rtol: float = 1e-6,
    **hyperparameters: Any,
) -> None:
    """Check an optimizer's ``step`` against a reference over several steps.

    Both optimizers get identical parameters and, at every step, identical gradients
    (produced by ``backward`` of a random linear loss, after ``zero_grad``).  Checking
    several steps exercises state carried between steps (momentum buffers, step counts).

    Parameters
    ----------
    student_optimizer, reference_optimizer : callable
        Optimizer classes (or factories) called as ``cls(params, **hyperparameters)``.
    shapes : sequence of tuple, optional
        Shapes of the parameters to optimise.
    steps : int, optional
        Number of steps to compare.
    seed : int, optional
        Seed of the parameters and gradients.
    atol, rtol : float, optional
        Tolerance of the comparison (tight: an update is deterministic arithmetic).
    **hyperparameters
        Passed to both optimizers, e.g. ``lr=0.1, momentum=0.9``.

    Returns
    -------
    None
        The check passed (a failure raises, with the explanation).

    Raises
    ------
    GradingFailure
        Naming the step, the parameter and the element that differ.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.grading import check_optimizer_step
    >>> check_optimizer_step(dl.optim.SGD, dl.optim.SGD, lr=0.1, momentum=0.9)
    """
    declared = steps * sum(int(np.prod(s)) for s in shapes)
    with check_part(declared):  # every step counts, reached or not (partial credit)
        _check_steps(student_optimizer, reference_optimizer, shapes=shapes, steps=steps,
                     seed=seed, atol=atol, rtol=rtol, hyperparameters=hyperparameters)


def _check_steps(student_optimizer: Callable[..., Any], reference_optimizer: Callable[..., Any],
                 *, shapes: Sequence[tuple[int, ...]], steps: int, seed: int, atol: float,
                 rtol: float, hyperparameters: dict[str, Any]) -> None:
    rng = np.random.default_rng(seed)
    start = [rng.standard_normal(s) for s in shapes]
    ps = [_tensor(x, requires_grad=True) for x in start]
    pr = [_tensor(x, requires_grad=True) for x in start]
    opt_s = student_optimizer(ps, **hyperparameters)
    opt_r = reference_optimizer(pr, **hyperparameters)
    name = getattr(student_optimizer, "__name__", "your optimizer")
    for step in range(1, steps + 1):
        grads = [rng.standard_normal(s) for s in shapes]
        for opt, params in ((opt_s, ps), (opt_r, pr)):
            opt.zero_grad()
            loss = None
            for p, g in zip(params, grads):
                term = (p * _tensor(g)).sum()
                loss = term if loss is None else loss + term
            loss.backward()
            opt.step()
        for i, (a, b) in enumerate(zip(ps, pr)):
            got, want = _to_numpy(a), _to_numpy(b)
            hint = ""
            if step == 1 and np.allclose(got, start[i]):
                hint = (
                    "The parameter did not change: does step() update each parameter in "
                    "place (p.data -= ...), rather than rebinding a local variable?"
                )
            elif step > 1:
                hint = (
                    f"The first {step - 1} step(s) matched: check the state carried between "
                    "steps (a momentum buffer, a step count) and that zero_grad() clears "
                    "the gradients."
                )
            assert_close(
                got, want, what=f"{name}: after step {step}, parameter {i}",
                atol=atol, rtol=rtol, hint=hint,
            )
