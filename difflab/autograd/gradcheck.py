"""Check a backward pass against finite differences: ``gradcheck`` and ``gradgradcheck``.

For f: inputs -> outputs, the Jacobian J is built twice:

* *analytically*, one row per output element, by the tape (a backward pass
  seeded with a unit vector gives the row eᵢᵀJ);
* *numerically*, one column per input element, by central differences
  (f(x + h eⱼ) - f(x - h eⱼ)) / 2h, error O(h²).

They must agree to ``atol + rtol·|numeric|``.  Use float64 inputs: in float32
the finite differences themselves are only good to about 1e-3.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from difflab import backend
from difflab.autograd.functional import grad as autograd_grad
from difflab.autograd.grad_mode import no_grad
from difflab.finite_differences import along_coordinate, difference
from difflab.ops.logic import FrozenStops
from difflab.tensor import Tensor


class GradcheckError(AssertionError):
    """Raised by :func:`gradcheck` when the analytic and numerical Jacobians differ.

    :func:`gradcheck` compares the Jacobian that backward (reverse mode) computes with
    central finite differences, entry by entry; with ``raise_exception=True`` (the
    default) a mismatch beyond ``atol + rtol * |numerical|`` raises this error, whose
    message names the input and output and gives both Jacobians.  It is an
    ``AssertionError``, so a test that calls :func:`gradcheck` fails with it.

    See Also
    --------
    gradcheck : raises it.
    gradgradcheck : the same check of second derivatives.

    Examples
    --------
    A Function whose backward forgets the factor 3 of :math:`x^3`'s derivative:

    >>> import difflab as dl
    >>> from difflab.autograd import Function, GradcheckError, gradcheck
    >>> class BadCube(Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x ** 3
    ...     @staticmethod
    ...     def backward(ctx, grad_output):
    ...         x, = ctx.saved_tensors
    ...         return grad_output * x ** 2
    >>> x = dl.tensor([1.0, 2.0], dtype=dl.float64, requires_grad=True)
    >>> try:
    ...     gradcheck(BadCube.apply, (x,))
    ... except GradcheckError as error:
    ...     print("caught:", type(error).__name__)
    caught: GradcheckError
    >>> gradcheck(BadCube.apply, (x,), raise_exception=False)
    False
    """


def _as_tuple(x: Any) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _outputs(function: Callable, inputs: Sequence[Any]) -> tuple:
    return tuple(o for o in _as_tuple(function(*inputs)) if isinstance(o, Tensor))


def _values(function: Callable, inputs: Sequence[Any]) -> list[np.ndarray]:
    """The outputs' values as float64 NumPy copies (an output may be a view of an input)."""
    return [backend.to_numpy(o.array).astype(np.float64) for o in _outputs(function, inputs)]


def _flat_values(function: Callable, inputs: Sequence[Any]) -> np.ndarray:
    """Every output, flattened into one vector: one difference serves them all."""
    return np.concatenate([v.reshape(-1) for v in _values(function, inputs)] + [np.zeros(0)])


def numerical_jacobian(function: Callable, inputs: Sequence[Any], eps: float = 1e-6) -> list:
    """J[k][i] = d output_k / d input_i by central differences, as (out.size, in.size) arrays.

    ``eps`` is the absolute step h (PyTorch's convention); the difference itself is
    :func:`difflab.finite_differences.difference`, shared with the numeric differentiator.
    Like that method, it holds each stop-gradient (``x.detach()``) the function applies at
    its value at the unperturbed point (``difflab.ops.logic.FrozenStops``), so a
    straight-through estimator ``v + (v.round() - v).detach()`` checks as correct.
    """
    inputs = list(inputs)
    # Each stop-gradient (x.detach()) held at its value at the unperturbed point, as the
    # numeric method holds it: the differences then see what the backward pass sees.
    stops = FrozenStops()
    # Not under no_grad: the function may itself need the tape (gradgradcheck's does).
    base = stops.evaluate(_outputs, function, inputs)
    sizes = [o.array.size for o in base]
    jac = [[None] * len(inputs) for _ in base]
    for i, x in enumerate(inputs):
        if not (isinstance(x, Tensor) and x.requires_grad):
            continue
        flat = x.array.reshape(-1)  # a view: writing into it perturbs x in place
        columns = np.zeros((sum(sizes), flat.size))
        for j in range(flat.size):
            along = along_coordinate(
                flat, j, lambda: stops.evaluate(_flat_values, function, inputs))
            columns[:, j] = difference(along, eps)[0]
        for k, part in enumerate(np.split(columns, np.cumsum(sizes)[:-1])):
            jac[k][i] = part
    return jac


def analytical_jacobian(function: Callable, inputs: Sequence[Any], create_graph: bool = False
                        ) -> list:
    """J[k][i] row by row: one backward pass per output element."""
    outputs = _outputs(function, inputs)
    wanted = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    jac = [[None] * len(inputs) for _ in outputs]
    for k, out in enumerate(outputs):
        rows = {i: np.zeros((out.array.size, x.array.size)) for i, x in enumerate(inputs)
                if isinstance(x, Tensor) and x.requires_grad}
        if out.requires_grad:
            for r in range(out.array.size):
                seed = np.zeros(out.array.size, dtype=out.dtype)
                seed[r] = 1.0
                seed = backend.to_device(seed.reshape(out.shape), out.device)
                grads = autograd_grad(out, wanted, grad_outputs=Tensor._wrap(seed),
                                      retain_graph=True, allow_unused=True)
                index = 0
                for i in rows:
                    g = grads[index]
                    index += 1
                    if g is not None:
                        rows[i][r] = backend.to_numpy(g.array).reshape(-1)
        for i, row in rows.items():
            jac[k][i] = row
    return jac


class ForwardMode:
    """How gradcheck reaches forward mode (``check_forward_ad=True``): ``jacobian``, the
    Jacobian by dual tensors, J[k][i] as :func:`analytical_jacobian` gives it, is set by
    ``difflab.func.forward_ad`` (a layer above: it needs dual numbers)."""

    jacobian: Callable | None = None


def gradcheck(
    function: Callable,
    inputs: Any,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    *,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    check_undefined_grad: bool = True,
    check_batched_grad: bool = False,
) -> bool:
    r"""Check a backward: the tape's Jacobian of ``function`` against central differences.

    For each output y and each input x that requires grad, every entry must satisfy

    .. math:: \Bigl|J^{\text{tape}}_{ij} - \frac{y_i(x + \epsilon e_j) - y_i(x - \epsilon e_j)}
              {2\epsilon}\Bigr| \le \text{atol} + \text{rtol}\,|J^{\text{numeric}}_{ij}|

    Parameters
    ----------
    function : callable
        ``function(*inputs)`` returning a Tensor or a tuple of Tensors.
    inputs : Tensor or tuple of Tensor
        The point; the inputs with ``requires_grad=True`` are checked.  Use float64
        (``.double()``): in float32 the differences are too inaccurate (a warning says so).
    eps : float, default 1e-6
        The step ε of the central differences.
    atol, rtol : float, default 1e-5, 1e-3
        The absolute and relative tolerances.
    raise_exception : bool, default True
        Raise on a mismatch (else return False).
    check_forward_ad : bool, default False
        Also check forward mode: the Jacobian from dual tensors
        (``torch.autograd.forward_ad``, one tangent direction per input element; a
        custom Function's ``jvp``) against the same differences.
    check_backward_ad : bool, default True
        Check the backward pass (False: a Function with only a ``jvp``).
    check_undefined_grad : bool, default True
        Accepted for PyTorch's signature: difflab never hands a backward an undefined
        gradient (a missing one is zeros), so there is nothing to check.
    check_batched_grad : bool, default False
        Must stay False: difflab has no batched-gradient check here (use
        ``difflab.func.vmap`` over ``difflab.func.vjp`` to test one).

    Returns
    -------
    bool
        True when every entry agrees.

    Raises
    ------
    GradcheckError
        On a mismatch, naming the output, the input, the element and both values.

    See Also
    --------
    gradgradcheck : the same for second derivatives.
    difflab.finite_differences : the differences it uses.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([0.5, 1.5], dtype=dl.float64, requires_grad=True)
    >>> dl.autograd.gradcheck(lambda t: dl.sin(t) * t, (x,))
    True
    >>> class Wrong(dl.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, t):
    ...         return t ** 2
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         return g              # should be 2t·g
    >>> dl.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False)
    False

    Forward mode's Jacobian (dual tensors) is checked too with ``check_forward_ad``:

    >>> dl.autograd.gradcheck(lambda t: dl.sin(t) * t, (x,), check_forward_ad=True)
    True
    """
    inputs = _as_tuple(inputs)
    for i, x in enumerate(inputs):
        if isinstance(x, Tensor) and x.requires_grad and x.dtype != np.float64:
            import warnings

            warnings.warn(
                f"gradcheck: input {i} is {x.dtype}, not float64; finite differences will be "
                f"inaccurate. Use .double() inputs.",
                stacklevel=2,
            )
    if check_batched_grad:
        raise NotImplementedError("gradcheck(check_batched_grad=True): difflab has no "
                                  "batched-gradient check; leave it False")
    numeric = numerical_jacobian(function, inputs, eps)
    checks = []
    if check_backward_ad:
        checks.append(("the backward pass", analytical_jacobian(function, inputs)))
    if check_forward_ad:
        checks.append(("forward mode", ForwardMode.jacobian(function, inputs)))
    return all(_agrees(numeric, analytic, method, atol, rtol, raise_exception)
               for method, analytic in checks)


def _agrees(numeric: list, analytic: list, method: str, atol: float, rtol: float,
            raise_exception: bool) -> bool:
    """Whether a method's Jacobian matches the differences (else raise, or False)."""
    for k, (num_row, ana_row) in enumerate(zip(numeric, analytic)):
        for i, (num, ana) in enumerate(zip(num_row, ana_row)):
            if num is None:
                continue
            bad = ~np.isclose(ana, num, atol=atol, rtol=rtol)
            if bad.any():
                r, c = (int(v) for v in np.argwhere(bad)[0])
                message = (
                    f"Jacobian mismatch for output {k} with respect to input {i}: at output "
                    f"element {r}, input element {c} {method} gives {ana[r, c]!r} "
                    f"but central differences give {num[r, c]!r} "
                    f"(|difference| {abs(ana[r, c] - num[r, c]):.3g}; "
                    f"{int(bad.sum())} of {bad.size} entries differ).\n"
                    f"analytical:\n{ana}\nnumerical:\n{num}"
                )
                if raise_exception:
                    raise GradcheckError(message)
                return False
    return True


def gradgradcheck(
    function: Callable,
    inputs: Any,
    grad_outputs: Any = None,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
) -> bool:
    r"""Check second derivatives: :func:`gradcheck` of (x, v) ↦ vᵀJ(x) as recorded.

    The first derivative is recorded with ``create_graph=True``:

    .. math:: (x, v) \mapsto v^\top \frac{\partial y}{\partial x}

    whose own Jacobian holds the second derivatives of ``function``, so a backward
    that is itself differentiable (Hessians, gradient penalties) is checked.

    Parameters
    ----------
    function : callable
        ``function(*inputs)`` returning a Tensor or a tuple of Tensors.
    inputs : Tensor or tuple of Tensor
        The point (float64; the inputs with ``requires_grad=True`` are checked).
    grad_outputs : Tensor or tuple of Tensor, optional
        The vectors v, one per output (default: standard normal, seed 0).
    eps, atol, rtol, raise_exception
        As for :func:`gradcheck`.

    Returns
    -------
    bool
        True when the second derivatives agree.

    Raises
    ------
    GradcheckError
        On a mismatch.

    See Also
    --------
    gradcheck

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([0.5, 1.5], dtype=dl.float64, requires_grad=True)
    >>> dl.autograd.gradgradcheck(lambda t: dl.exp(t) * t, (x,))
    True
    """
    inputs = _as_tuple(inputs)
    with no_grad():
        outputs = _outputs(function, inputs)
    rng = np.random.default_rng(0)
    if grad_outputs is None:
        grad_outputs = [
            Tensor(rng.standard_normal(o.shape), dtype=o.dtype, device=o.device,
                   requires_grad=True) for o in outputs
        ]
    grad_outputs = list(_as_tuple(grad_outputs))
    n = len(inputs)
    wanted_index = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]

    def first_derivative(*args: Any) -> tuple:
        xs, vs = args[:n], args[n:]
        outs = _outputs(function, xs)
        grads = autograd_grad(list(outs), [xs[i] for i in wanted_index],
                              grad_outputs=list(vs), create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivative, (*inputs, *grad_outputs), eps, atol, rtol,
                     raise_exception)
