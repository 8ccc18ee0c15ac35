r"""Fill a model's gradients with any of the four differentiators.

``compute_gradients(model, loss_fn, inputs, targets, method=...)`` sets the
``.grad`` of every parameter that requires grad to ∂loss/∂θ, computed by

=============  ==================================================  =====================
method         how                                                 cost for P parameters
=============  ==================================================  =====================
``reverse``    the tape: one forward pass, one backward pass       2 passes, any P
``forward``    dual numbers: each pass carries ``chunk_size``      ⌈P / chunk⌉ passes
               tangent directions (one-hot in the parameters)
``numeric``    central differences (L(θ + h eᵢ) - L(θ - h eᵢ))/2h  2P + 1 evaluations
``symbolic``   sympy builds the loss of one generic sample (its    one expression, P
               inputs are symbols too), differentiates it once,    derivatives, compiled
               compiles it, and evaluates it on the whole batch    once per model
=============  ==================================================  =====================

then any optimizer steps as usual.  The returned :class:`GradientCost`
says what was spent, so a learner can watch forward and numeric grow with
the number of parameters while reverse does not.

The symbolic method refuses models with more than
:data:`SYMBOLIC_MAX_PARAMETERS` parameters (expressions swell quickly), and
it understands the layers a small MLP is made of: ``Linear``, ``Tanh``,
``Sigmoid``, ``ReLU``, ``Identity``, ``Flatten`` in a ``Sequential`` (or a
single ``Linear``), with ``MSELoss``, ``L1Loss`` or ``CrossEntropyLoss``.
"""

from __future__ import annotations

import math
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from difflab import backend
from difflab.autograd.grad_mode import no_grad
from difflab.finite_differences import along_coordinate, difference, optimal_step
from difflab.tensor import Tensor

SYMBOLIC_MAX_PARAMETERS = 200
"""The largest model (in parameters) that ``method='symbolic'`` accepts."""

METHODS = ("reverse", "forward", "numeric", "symbolic")


@dataclass
class GradientCost:
    """What one :func:`compute_gradients` call spent, to compare the four differentiators.

    Parameters
    ----------
    method : str
        The differentiator used.
    parameters : int
        :math:`P`, the number of scalar parameters differentiated.
    evaluations : int, default 0
        Forward passes of the model (loss evaluations).
    backward_passes : int, default 0
        Reverse sweeps over the tape.
    seconds : float, default 0.0
        Wall time.
    loss : float, default nan
        The loss at the current parameters.

    Attributes
    ----------
    method, parameters, evaluations, backward_passes, seconds, loss
        As above (a dataclass).

    Examples
    --------
    >>> cost = GradientCost("numeric", parameters=4, evaluations=9)
    >>> cost.evaluations == 2 * cost.parameters + 1
    True
    """

    method: str
    parameters: int
    evaluations: int = 0
    backward_passes: int = 0
    seconds: float = 0.0
    loss: float = math.nan


def _params(model: Any) -> list:
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise ValueError("compute_gradients: the model has no parameters that require grad")
    return params


def _set_grad(p: Tensor, g: Any, accumulate: bool) -> None:
    g = backend.to_device(np.asarray(g), p.device) if p.is_cuda else np.asarray(g)
    g = g.reshape(p.shape).astype(p.dtype, copy=False)
    if accumulate and p.grad is not None:
        p.grad.array += g
    else:
        p.grad = Tensor._wrap(g.copy())


def compute_gradients(
    model: Any,
    loss_fn: Callable[[Any, Any], Tensor],
    inputs: Any,
    targets: Any,
    method: str = "reverse",
    *,
    chunk_size: int = 64,
    eps: float | None = None,
    accumulate: bool = False,
) -> GradientCost:
    r"""Set ``p.grad`` to :math:`\partial L / \partial p` for each trainable parameter, any method.

    :math:`L = \text{loss\_fn}(\text{model}(\text{inputs}), \text{targets})`.  The
    methods and their cost for :math:`P` parameters:

    * ``'reverse'``: the tape, one forward and one backward pass, whatever :math:`P`;
    * ``'forward'``: dual numbers, :math:`\lceil P / \text{chunk\_size} \rceil` passes;
    * ``'numeric'``: central differences
      :math:`(L(\theta + h e_i) - L(\theta - h e_i)) / 2h`, :math:`2P + 1` evaluations;
    * ``'symbolic'``: sympy differentiates the loss of one generic sample once,
      compiles it and evaluates it on the batch (small MLPs only: ``Linear``,
      ``Tanh``, ``Sigmoid``, ``ReLU``, ``Identity``, ``Flatten`` with ``MSELoss``,
      ``L1Loss`` or ``CrossEntropyLoss``, at most :data:`SYMBOLIC_MAX_PARAMETERS`
      parameters).

    Then any optimizer steps as usual.

    Parameters
    ----------
    model : Module
        The model; it should be deterministic (``model.eval()`` if it has dropout).
    loss_fn : callable
        ``loss_fn(output, targets)`` returns a scalar tensor.
    inputs, targets : Any
        The batch.
    method : {'reverse', 'forward', 'numeric', 'symbolic'}, default 'reverse'
        The differentiator.
    chunk_size : int, default 64
        Forward mode: tangent directions per pass.
    eps : float, optional
        Numeric: the step :math:`h`; by default
        :math:`\sqrt[3]{\epsilon_{mach}}\,\max(1, |\theta_i|)`, which balances the
        truncation error :math:`O(h^2)` and the rounding error :math:`O(\epsilon/h)`.
    accumulate : bool, default False
        Add into existing ``.grad`` instead of replacing it.

    Returns
    -------
    GradientCost
        What was spent (passes, evaluations, seconds) and the loss.

    Raises
    ------
    ValueError
        For an unknown method, a model without trainable parameters, a loss that
        is not a scalar, a non-positive ``chunk_size``, or a model too large for
        ``'symbolic'``.
    TypeError
        When ``'symbolic'`` meets a layer or loss it does not understand.

    Notes
    -----
    Use float64 models to compare methods: in float32 the numeric differences
    are good to about :math:`10^{-3}` only.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> _ = dl.manual_seed(0)
    >>> model = nn.Linear(3, 1).double()
    >>> x, y = dl.randn(8, 3, dtype=dl.float64), dl.randn(8, 1, dtype=dl.float64)
    >>> for method in ["reverse", "forward", "numeric"]:
    ...     cost = nn.utils.compute_gradients(model, nn.MSELoss(), x, y, method=method)
    ...     print(method, cost.evaluations, cost.backward_passes, round(model.bias.grad.item(), 6))
    reverse 1 1 -0.685057
    forward 1 0 -0.685057
    numeric 9 0 -0.685057
    """
    if method not in METHODS:
        raise ValueError(f"compute_gradients: method must be one of {METHODS}, got {method!r}")
    params = _params(model)
    n_params = sum(int(p.numel()) for p in params)
    cost = GradientCost(method, n_params)
    start = time.perf_counter()
    if method == "reverse":
        grads = _reverse(model, loss_fn, inputs, targets, cost)
    elif method == "numeric":
        grads = _numeric(model, loss_fn, inputs, targets, params, eps, cost)
    elif method == "forward":
        grads = _forward(model, loss_fn, inputs, targets, params, chunk_size, cost)
    else:
        grads = _symbolic(model, loss_fn, inputs, targets, params, cost)
    for p, g in zip(params, grads):
        _set_grad(p, g, accumulate)
    cost.seconds = time.perf_counter() - start
    return cost


def _loss_value(model: Any, loss_fn: Callable, inputs: Any, targets: Any) -> float:
    with no_grad():
        loss = loss_fn(model(inputs), targets)
    if loss.numel() != 1:
        raise ValueError(
            f"compute_gradients: loss_fn must return a scalar, got shape {tuple(loss.shape)}"
        )
    return float(loss.item())


# ----------------------------------------------------------------------- reverse


def _reverse(model, loss_fn, inputs, targets, cost) -> list:
    from difflab.autograd.functional import grad

    params = _params(model)
    loss = loss_fn(model(inputs), targets)
    grads = grad(loss, params, allow_unused=True)
    cost.evaluations, cost.backward_passes, cost.loss = 1, 1, float(loss.item())
    return [np.zeros(p.shape) if g is None else backend.to_numpy(g.array) for p, g in
            zip(params, grads)]


# ----------------------------------------------------------------------- numeric


def _numeric(model, loss_fn, inputs, targets, params, eps, cost) -> list:
    """Central differences, one parameter element at a time: 2 evaluations each.

    The step is ``eps`` if given, else ∛ε·max(1, |θᵢ|) with ε the machine epsilon of
    the parameter's dtype; the difference is :func:`difflab.finite_differences.difference`.
    """
    cost.loss = _loss_value(model, loss_fn, inputs, targets)
    cost.evaluations = 1
    grads = []
    for p in params:
        flat = p.array.reshape(-1)  # a view: writing into it perturbs p in place
        g = np.zeros(flat.size)
        relative = optimal_step(2, dtype=p.dtype)
        for j in range(flat.size):
            along = along_coordinate(
                flat, j, lambda: _loss_value(model, loss_fn, inputs, targets))
            h = eps if eps is not None else relative * max(1.0, abs(flat[j].item()))
            g[j] = difference(along, h)[0]
            cost.evaluations += 2
        grads.append(g.reshape(p.shape))
    return grads


# ----------------------------------------------------------------------- forward


def _forward(model, loss_fn, inputs, targets, params, chunk_size, cost) -> list:
    """Dual numbers in the parameters' arrays: each pass gives ``chunk_size`` partials.

    The global parameter index runs over all parameters flattened one after
    another; a pass seeds the one-hot directions start .. stop - 1 in the
    parameters they fall in, and every other parameter stays a constant.
    """
    from difflab.diff.forward import Dual, new_tag, tangents_of

    if chunk_size < 1:
        raise ValueError(f"chunk_size must be positive, got {chunk_size}")
    sizes = [int(p.numel()) for p in params]
    offsets = np.cumsum([0] + sizes)
    total = int(offsets[-1])
    flat_grad = np.zeros(total)
    originals = [p.array for p in params]
    for start in range(0, total, chunk_size):
        stop = min(start + chunk_size, total)
        k = stop - start
        tag = new_tag()
        try:
            for p, lo, hi, array in zip(params, offsets[:-1], offsets[1:], originals):
                a, b = max(start, lo), min(stop, hi)
                xp = backend.array_module(array)
                if a >= b:  # not differentiated in this pass: zero tangents (no memory)
                    tangents = xp.broadcast_to(xp.zeros((), dtype=array.dtype),
                                               (k,) + tuple(p.shape))
                else:
                    tangents = xp.zeros((k, int(hi - lo)), dtype=array.dtype)
                    tangents[xp.arange(a - start, b - start), xp.arange(a - lo, b - lo)] = 1.0
                    tangents = tangents.reshape((k,) + tuple(p.shape))
                p.array = Dual(array, tangents, tag=tag, vector=True)
            with no_grad():
                loss = loss_fn(model(_constant_dual(inputs, tag, k, Dual)),
                               _constant_dual(targets, tag, k, Dual))
            value, tangents = tangents_of(loss.array if isinstance(loss, Tensor) else loss,
                                          tag, k)
        finally:
            for p, array in zip(params, originals):
                p.array = array
        flat_grad[start:stop] = backend.to_numpy(tangents).reshape(k)
        cost.evaluations += 1
    cost.loss = float(backend.to_numpy(value))
    return [flat_grad[lo:hi].reshape(p.shape) for p, lo, hi in
            zip(params, offsets[:-1], offsets[1:])]


def _constant_dual(x: Any, tag: int, k: int, dual: type) -> Any:
    """``x`` as a dual number with zero tangents.

    Mathematically unnecessary (a constant needs no tangent); it keeps every
    operand of every primitive a Dual, because the tape engine currently
    refuses to mix plain arrays and Duals in one primitive.
    """
    if not isinstance(x, Tensor) or x.dtype.kind != "f":
        return x
    xp = backend.array_module(x.array)
    zeros = xp.broadcast_to(xp.zeros((), dtype=x.dtype), (k,) + tuple(x.shape))
    return Tensor._wrap(dual(x.array, zeros, tag=tag, vector=True))


# ---------------------------------------------------------------------- symbolic


# Compiled symbolic losses, per model: the expression depends only on the architecture,
# so a training loop compiles once and then only evaluates.
_SYMBOLIC_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _symbolic(model, loss_fn, inputs, targets, params, cost) -> list:
    """Differentiate the loss of ONE generic sample symbolically, evaluate it on the batch.

    The sample's inputs and targets are symbols too, so the expression (and its P
    derivatives) has the size of the model, not of the batch; it is compiled once
    (with common-subexpression elimination) and evaluated on all samples at once.
    """
    n = sum(int(p.numel()) for p in params)
    if n > SYMBOLIC_MAX_PARAMETERS:
        raise ValueError(
            f"compute_gradients(method='symbolic') refuses a model with {n} parameters (the "
            f"limit is {SYMBOLIC_MAX_PARAMETERS}): its expression would be enormous. Use "
            f"'reverse', 'forward' or 'numeric'."
        )
    x = backend.to_numpy(inputs.array if isinstance(inputs, Tensor) else np.asarray(inputs))
    t = backend.to_numpy(targets.array if isinstance(targets, Tensor) else np.asarray(targets))
    reduction = getattr(loss_fn, "reduction", "mean")
    key = (type(loss_fn), reduction, x.shape[1:], t.shape[1:], str(t.dtype),
           tuple((id(p), tuple(p.shape)) for p in params))
    per_model = _SYMBOLIC_CACHE.setdefault(model, {})
    if key not in per_model:
        per_model[key] = _compile_sample_loss(model, loss_fn, x.shape[1:], params)
    function, n_outputs = per_model[key]
    batch = x.shape[0]
    targets_per_sample = _target_columns(loss_fn, t, n_outputs)
    columns = [c.astype(np.float64) for c in x.reshape(batch, -1).T] + targets_per_sample
    parameters = [float(v) for p in params for v in backend.to_numpy(p.array).reshape(-1)]
    per_sample = [np.broadcast_to(np.asarray(v, dtype=np.float64), (batch,))
                  for v in function(*parameters, *columns)]
    if reduction == "sum":
        scale = 1.0
    elif reduction == "mean":  # MSE and L1 average over every element, cross-entropy per sample
        scale = 1.0 / (batch if _is_cross_entropy(loss_fn) else batch * n_outputs)
    else:
        raise ValueError("compute_gradients needs a loss reduced to a scalar ('mean' or 'sum')")
    totals = np.array([v.sum() for v in per_sample]) * scale
    cost.evaluations = 1
    cost.loss = float(totals[0])
    grads, start = [], 1
    for p in params:
        size = int(p.numel())
        grads.append(totals[start:start + size].reshape(p.shape))
        start += size
    return grads


def _compile_sample_loss(model: Any, loss_fn: Any, sample_shape: tuple, params: list
                         ) -> tuple[Callable, int]:
    """lambdify(θ, x, t -> [loss(one sample), ∂loss/∂θ₁, ..., ∂loss/∂θ_P])."""
    import sympy

    names = {id(p): name.replace(".", "_") for name, p in model.named_parameters()}
    symbols = {}
    for p in params:
        base = names.get(id(p), f"p{len(symbols)}")
        symbols[id(p)] = np.array(
            sympy.symbols(f"{base}_0:{int(p.numel())}"), dtype=object
        ).reshape(p.shape)
    size = int(np.prod(sample_shape, dtype=int))
    x = np.array(sympy.symbols(f"x_0:{size}"), dtype=object).reshape((1,) + sample_shape)
    out = _symbolic_forward(model, x, symbols).reshape(-1)
    t = np.array(sympy.symbols(f"t_0:{out.size}"), dtype=object)
    loss = _symbolic_sample_loss(loss_fn, out, t)
    theta = [s for p in params for s in symbols[id(p)].reshape(-1)]
    derivatives = [sympy.diff(loss, s) for s in theta]
    function = sympy.lambdify([*theta, *x.reshape(-1), *t], [loss, *derivatives],
                              modules="numpy", cse=True)
    return function, out.size


def _symbolic_forward(module: Any, x: np.ndarray, symbols: dict) -> np.ndarray:
    """Run a small MLP on object arrays of sympy expressions."""
    from difflab import functions
    from difflab.diff.symbolic import SymbolArray
    from difflab.nn.modules import container, layers

    if isinstance(module, container.Sequential):
        for child in module:
            x = _symbolic_forward(child, x, symbols)
        return x
    if isinstance(module, layers.Linear):
        w = symbols.get(id(module.weight))
        if w is None:
            w = backend.to_numpy(module.weight.array).astype(object)
        y = x @ w.T
        if module.bias is not None:
            b = symbols.get(id(module.bias))
            y = y + (backend.to_numpy(module.bias.array).astype(object) if b is None else b)
        return y
    activation = {layers.Tanh: "tanh", layers.Sigmoid: "sigmoid", layers.ReLU: "relu"}.get(
        type(module))
    if activation is not None:
        # The registry's rule, built by sympy (with its convention at kinks).
        return np.asarray(functions.ELEMENTWISE[activation](SymbolArray(x)), dtype=object)
    if isinstance(module, (layers.Identity, layers.Dropout)):
        return x
    if isinstance(module, layers.Flatten):
        return x.reshape(x.shape[0], -1)
    raise TypeError(
        f"compute_gradients(method='symbolic') does not know the layer {type(module).__name__}"
        f"; it handles Sequential models of Linear, Tanh, Sigmoid, ReLU, Identity and Flatten"
    )


def _is_cross_entropy(loss_fn: Any) -> bool:
    from difflab.nn.modules import loss as losses

    return isinstance(loss_fn, losses.CrossEntropyLoss)


def _symbolic_sample_loss(loss_fn: Any, out: np.ndarray, t: np.ndarray) -> Any:
    """The loss of one sample, summed over its outputs (the reduction comes later)."""
    import sympy

    from difflab.nn.modules import loss as losses

    if isinstance(loss_fn, losses.MSELoss):
        return sympy.Add(*((out - t) ** 2))
    if isinstance(loss_fn, losses.L1Loss):
        return sympy.Add(*(sympy.Abs(e) for e in out - t))
    if _is_cross_entropy(loss_fn) and loss_fn.weight is None and not loss_fn.label_smoothing:
        # t is the one-hot target: log Σ exp(out) - out[class]
        return sympy.log(sympy.Add(*(sympy.exp(v) for v in out))) - sympy.Add(*(out * t))
    raise TypeError(
        f"compute_gradients(method='symbolic') does not know the loss "
        f"{type(loss_fn).__name__}; it handles MSELoss, L1Loss and CrossEntropyLoss"
    )


def _target_columns(loss_fn: Any, t: np.ndarray, n_outputs: int) -> list:
    """The targets as one array per target symbol (one-hot for class indices)."""
    batch = t.shape[0]
    if _is_cross_entropy(loss_fn) and t.dtype.kind in "iu":
        onehot = np.zeros((batch, n_outputs))
        onehot[np.arange(batch), t] = 1.0
        return list(onehot.T)
    return [c.astype(np.float64) for c in t.reshape(batch, -1).T]
