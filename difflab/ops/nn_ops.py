r"""Neural-network primitives: each one's forward next to its derivative rule.

These are *fused* primitives: one tape record for what would otherwise be a
dozen elementwise steps.  That matters for speed (the Python cost of a
record is paid once, and the arrays are walked fewer times) and it lets the
derivative use the algebra that makes it cheap and stable, e.g. the
gradient of cross-entropy is ``softmax - onehot`` instead of a chain of
``exp``, ``sum`` and ``div`` adjoints.

The protocol is the one in :mod:`difflab.ops.structural`:

``forward(ctx, xp, *inputs, **params) -> output``
    computes on raw arrays (NumPy or CuPy, whatever ``xp`` is);
``vjp(ctx, xp, g, *saved) -> (x̄₁, x̄₂, ...)``
    reverse mode: the adjoint of every input from the output adjoint ``g``;
``jvp(ctx, xp, *tangents, *saved) -> ẏ``
    forward mode, where written: the output tangent from input tangents.

Every rule saves only inputs, the output, or piecewise-constant things
(masks, indices), and computes the rest again from them, so that when the
backward pass is itself recorded (``create_graph=True``, ``xp`` is then
``difflab.functions`` and the saved values are Tensors) the rule is
differentiated correctly too.  One exception, for speed: ``conv2d`` saves
its columns (a linear function of x, costly to copy again) and reads them
on arrays only; recorded, it computes them again from x.

Convolution and pooling are in :mod:`difflab.ops.nn_conv`.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import numpy as np

from difflab import backend
from difflab.dtypes import floating_result
from difflab.ops.primitive import Primitive
from difflab.ops.reductions import (
    _from_end,
    _keep_reduced_axes,
    _largest,
    _normalize_axis,
    _reduction_arguments,
)
from difflab.ops.shapes import dim_index


def _recording(xp: Any) -> bool:
    """True when the backward pass is itself being recorded (``create_graph=True``).

    ``xp`` is then difflab's dispatching namespace, whose ``record_primitive(primitive,
    *inputs, **params)`` puts a primitive on the tape; NumPy and CuPy have no
    ``record_primitive``, and the rules compute on arrays directly.
    """
    return hasattr(xp, "record_primitive")


# ----------------------------------------------------------------------- linear


class Linear(Primitive):
    r"""y = x Wᵀ + b, for x of shape (..., in), W (out, in), b (out,).

    JVP: ẏ = ẋ Wᵀ + x Ẇᵀ + ḃ.
    VJP (its transpose), with ȳ and x flattened to matrices over the
    leading axes:

    .. math::
        \bar x = \bar y W, \qquad \bar W = \bar y^\top x, \qquad
        \bar b = \textstyle\sum_n \bar y_n .
    """

    name = "linear"

    @staticmethod
    def forward(ctx, xp, x, w, b=None):
        y = xp.matmul(x, w.T)
        if b is not None:
            if isinstance(y, np.ndarray) or backend.is_gpu_array(y):
                y += b  # y is fresh: add in place, no second (batch, out) array
            else:
                y = y + b
        ctx.save(x, w)
        return y

    @staticmethod
    def vjp(ctx, xp, g, x, w):
        need = ctx.needs_input_grad
        gx = gw = gb = None
        if need[0]:
            gx = xp.matmul(g, w)
        if need[1] or (len(need) > 2 and need[2]):
            g2 = g.reshape((-1, g.shape[-1]))
            if need[1]:
                gw = xp.matmul(g2.T, x.reshape((-1, x.shape[-1])))
            if len(need) > 2 and need[2]:
                gb = g2.sum(axis=0)
        return gx, gw, gb

    @staticmethod
    def jvp(ctx, xp, dx, dw, db=None, x=None, w=None):
        out = None
        if dx is not None:
            out = xp.matmul(dx, w.T)
        if dw is not None:  # (k tangents of w: transpose each, not the k axis)
            term = xp.matmul(x, xp.swapaxes(dw, -1, -2))
            out = term if out is None else out + term
        if db is not None:
            if out is not None:  # ḃ (k, out) against (k, ..., out): broadcast over the rows
                db = db.reshape((db.shape[0],) + (1,) * (out.ndim - db.ndim) + db.shape[1:])
            out = db if out is None else out + db
        return out


# ------------------------------------------------------ softmax and its friends


def _floating_input(x: Any) -> Any:
    """A tensor of integers or truth values as the default float (PyTorch's rule for
    softmax and logsumexp); arrays, dual numbers and expressions pass unchanged."""
    array = getattr(x, "array", None)  # a tensor's values (read directly: this is hot)
    if array is not None and array.dtype.kind not in "fc":
        return x.to(floating_result(array.dtype))
    return x


def _checked_dim(dim: Any, x: Any, name: str) -> int:
    """``dim`` of ``x`` as a non-negative axis: the common case inline (this is hot), anything
    else through :func:`difflab.ops.shapes.dim_index`, the one check and wording."""
    ndim = max(len(x.shape), 1)
    if type(dim) is int and -ndim <= dim < ndim:  # (the common case, first)
        return dim % ndim
    return dim_index(dim, len(x.shape), name)


def _sympy_exp_sum(sp: Any, x: Any, axis: Any, keepdims: bool) -> tuple:
    """exp(x) and Σ exp(x) over ``axis`` on sympy expressions (no shift: exact there)."""
    e = sp.elementwise(sp.exp, x)
    return e, np.sum(np.asarray(e, dtype=object), axis=axis, keepdims=keepdims)


class LogSoftmax(Primitive):
    r"""yᵢ = xᵢ - log Σⱼ exp(xⱼ) along ``dim`` (shifted by the max: no overflow).

    ∂yᵢ/∂xⱼ = δᵢⱼ - softmax(x)ⱼ, and softmax(x) = exp(y) reuses the output:

    .. math::
        \bar x = \bar y - e^{y} \textstyle\sum_i \bar y_i, \qquad
        \dot y = \dot x - \textstyle\sum_j e^{y_j} \dot x_j .
    """

    name = "log_softmax"
    tensor_method = dl_function = "log_softmax"  # x.log_softmax(dim), dl.log_softmax(x, dim)

    description = "the logarithm of the softmax along a dimension"
    doc = """
        Parameters
        ----------
        input : Tensor
            The values (logits).
        dim : int
            The dimension along which the entries are normalised.
        dtype : dtype, optional
            Cast the input to it first.

        Returns
        -------
        Tensor
            Of ``input``'s shape.

        See Also
        --------
        softmax, logsumexp

        Examples
        --------
        >>> import difflab as dl
        >>> dl.log_softmax(dl.tensor([1.0, 2.0, 3.0]), 0)
        tensor([-2.4076, -1.4076, -0.4076])
    """

    @staticmethod
    def arguments(input, dim, *, dtype=None):  # noqa: A002
        """``log_softmax(input, dim)``: xᵢ - log Σⱼ exp(xⱼ) along ``dim`` (one primitive,
        ``LogSoftmaxBackward0`` on the tape); ``dtype`` casts the input first."""
        x = _floating_input(input if dtype is None else input.to(dtype))
        return (x,), {"dim": _checked_dim(dim, x, "log_softmax")}

    @staticmethod
    def symbolic(sp, x, dim):
        _, total = _sympy_exp_sum(sp, x, dim, True)
        return x - sp.elementwise(sp.log, total)

    @staticmethod
    def forward(ctx, xp, x, dim):
        # Counted from the end: forward mode's tangents have a k axis in front.
        ctx.dim = dim - x.ndim if dim >= 0 else dim
        shifted = x - _largest(x, dim, keepdims=True)
        y = shifted - xp.log(xp.exp(shifted).sum(axis=dim, keepdims=True))
        ctx.save(y)
        return y

    @staticmethod
    def vjp(ctx, xp, g, y):
        return (g - xp.exp(y) * g.sum(axis=ctx.dim, keepdims=True),)

    @staticmethod
    def jvp(ctx, xp, dx, y):
        return dx - (xp.exp(y) * dx).sum(axis=ctx.dim, keepdims=True)


class Softmax(Primitive):
    r"""yᵢ = exp(xᵢ) / Σⱼ exp(xⱼ) along ``dim``.

    ∂yᵢ/∂xⱼ = yᵢ(δᵢⱼ - yⱼ), so (reusing the output)

    .. math::
        \bar x = y \odot (\bar y - \textstyle\sum_i \bar y_i y_i), \qquad
        \dot y = y \odot (\dot x - \textstyle\sum_j y_j \dot x_j).
    """

    name = "softmax"
    tensor_method = dl_function = "softmax"  # x.softmax(dim), dl.softmax(x, dim)

    description = "the softmax along a dimension: positive entries that sum to 1"
    doc = """
        Parameters
        ----------
        input : Tensor
            The values (logits).
        dim : int
            The dimension along which the entries are normalised.
        dtype : dtype, optional
            Cast the input to it first.

        Returns
        -------
        Tensor
            Of ``input``'s shape.

        See Also
        --------
        log_softmax

        Examples
        --------
        >>> import difflab as dl
        >>> dl.softmax(dl.tensor([0.0, 0.0, 0.0, 0.0]), 0)        # equal logits
        tensor([0.25, 0.25, 0.25, 0.25])
        >>> dl.softmax(dl.tensor([1.0, 2.0, 3.0]), 0).sum()
        tensor(1.)
    """

    @staticmethod
    def arguments(input, dim, *, dtype=None):  # noqa: A002
        """``softmax(input, dim)``: exp(xᵢ) / Σⱼ exp(xⱼ) along ``dim``, shifted by the
        max (no overflow); one primitive, ``SoftmaxBackward0`` on the tape."""
        x = _floating_input(input if dtype is None else input.to(dtype))
        return (x,), {"dim": _checked_dim(dim, x, "softmax")}

    @staticmethod
    def symbolic(sp, x, dim):
        e, total = _sympy_exp_sum(sp, x, dim, True)
        return e / total  # (the shift by the max is for floating point only)

    @staticmethod
    def forward(ctx, xp, x, dim):
        # Counted from the end: forward mode's tangents have a k axis in front.
        ctx.dim = dim - x.ndim if dim >= 0 else dim
        e = xp.exp(x - _largest(x, dim, keepdims=True))
        y = e / e.sum(axis=dim, keepdims=True)
        ctx.save(y)
        return y

    @staticmethod
    def vjp(ctx, xp, g, y):
        return (y * (g - (g * y).sum(axis=ctx.dim, keepdims=True)),)

    @staticmethod
    def jvp(ctx, xp, dx, y):
        return y * (dx - (dx * y).sum(axis=ctx.dim, keepdims=True))


class LogSumExp(Primitive):
    r"""y = log Σ exp(x) over ``axis``, computed as m + log Σ exp(x - m) with m = max x.

    ∂y/∂xᵢ = exp(xᵢ - y), the softmax, which the saved output gives again:

    .. math::
        \bar x = \bar y \, e^{x - y}, \qquad \dot y = \textstyle\sum_i e^{x_i - y} \dot x_i .

    Both are written with ``exp`` and broadcasting only, so a recorded
    backward (``create_graph=True``) is differentiated again.
    """

    name = "logsumexp"
    tensor_method = dl_function = "logsumexp"  # x.logsumexp(dim), dl.logsumexp(x, dim)
    math = "∂(log Σ exp x)/∂xᵢ = exp(xᵢ - y)"

    description = "the logarithm of the sum of exponentials, without overflow"
    doc = """
        Parameters
        ----------
        input : Tensor, array or sequence
            The values.
        dim : int or tuple of int, optional
            The dimensions to reduce; default: all (an empty ``[]`` or ``()``
            also means all, as in PyTorch).
        keepdim : bool, default False
            Keep the reduced dimensions with size 1.

        Returns
        -------
        Tensor or array
            log Σ exp(x) over ``dim``.

        See Also
        --------
        softmax : its gradient.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.logsumexp(dl.tensor([1000.0, 1000.0]))      # exp(1000) would overflow
        tensor(1000.6932)
    """

    @staticmethod
    def arguments(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A002
        """``logsumexp(input, dim=None, keepdim=False)``: log Σ exp(x) over ``dim`` (an int
        or a tuple; all dimensions by default) without overflow: m + log Σ exp(x - m) with
        m the maximum.  NumPy's ``axis=``/``keepdims=`` are accepted too."""
        (x,), params = _reduction_arguments(input, dim, keepdim, axis=axis, keepdims=keepdims)
        return (_floating_input(x),), params

    @staticmethod
    def symbolic(sp, x, axis=None, keepdims=False):
        _, total = _sympy_exp_sum(sp, x, _normalize_axis(axis, x.ndim), keepdims)
        return sp.elementwise(sp.log, total)

    @staticmethod
    def forward(ctx, xp, x, axis=None, keepdims=False):
        ctx.axes = axes = _normalize_axis(axis, x.ndim)
        ctx.keepdims = keepdims
        m = _largest(x, axes, keepdims=True)
        # (all -inf: log 0 = -inf, not nan; comparisons, which dual numbers make on values)
        m = xp.where((m > -np.inf) & (m < np.inf), m, 0.0)
        total = xp.exp(x - m).sum(axis=axes, keepdims=keepdims)
        y = xp.log(total) + (m if keepdims else m.reshape(total.shape))
        ctx.save(x, y)
        return y

    @staticmethod
    def vjp(ctx, xp, g, x, y):
        if not ctx.keepdims:
            g = _keep_reduced_axes(g, ctx.axes, x.ndim)
            y = _keep_reduced_axes(y, ctx.axes, x.ndim)
        return (g * xp.exp(x - y),)

    @staticmethod
    def jvp(ctx, xp, dx, x, y):
        y = y if ctx.keepdims else _keep_reduced_axes(y, ctx.axes, x.ndim)
        return (dx * xp.exp(x - y)).sum(axis=_from_end(ctx.axes, x.ndim), keepdims=ctx.keepdims)


class NLLLoss(Primitive):
    r"""Negative log-likelihood of class indices, for log-probabilities z (N, C).

    ℓₙ = -wₜₙ · z[n, tₙ] (wₜ the class weight, 0 for ``ignore_index``);
    ``reduction`` 'mean' divides Σℓₙ by Σwₜₙ, 'sum' does not divide, 'none'
    keeps the vector.  Picking one entry per row is linear in z:

    .. math::
        \bar z[n, t_n] = -w_{t_n} \bar\ell_n
        \ (\text{divided by } \textstyle\sum w \text{ for 'mean'}),
        \quad 0 \text{ elsewhere}.

    The saved row and class indices are constants of the graph.
    """

    name = "nll_loss"

    @staticmethod
    def forward(ctx, xp, z, target, weight, ignore_index, reduction):
        n = z.shape[0]
        valid = target != ignore_index
        t = xp.where(valid, target, 0)
        rows = backend.array_module(target).arange(n)  # (indices: arrays, whatever z is)
        # (the weights in z's float dtype; of sympy expressions (object), plain floats)
        w = (valid if weight is None else weight[t] * valid).astype(
            np.float64 if z.dtype == object else z.dtype)
        losses = -z[rows, t] * w
        ctx.reduction, ctx.shape = reduction, z.shape
        if reduction == "none":
            out = losses
        elif reduction == "sum":
            out = losses.sum()
        else:
            out = losses.sum() / w.sum()
        ctx.save(rows, t, w)
        return out

    @staticmethod
    def vjp(ctx, xp, g, rows, t, w):
        coef = w * -1.0
        if ctx.reduction == "mean":  # (Σw from the saved w: a traced graph reads each batch's)
            coef = coef / w.sum()
        if ctx.reduction == "none":
            values = g * coef
        else:
            values = xp.broadcast_to(g.reshape((1,)), coef.shape) * coef
        return (xp.scatter_add(values, (rows, t), ctx.shape),)

    @staticmethod
    def jvp(ctx, xp, dz, rows, t, w):
        """ℓ̇ₙ = -wₜₙ · ż[n, tₙ] for each of the k tangents (then summed, or divided by Σw)."""
        picked = dz[:, rows, t] * (w * -1.0)  # (k, N)
        if ctx.reduction == "none":
            return picked
        total = picked.sum(axis=1)
        return total / w.sum() if ctx.reduction == "mean" else total


class BCEWithLogits(Primitive):
    r"""ℓ = -[t log σ(x) + (1 - t) log(1 - σ(x))], elementwise, from logits x.

    Computed as max(x, 0) - x t + log(1 + e^{-|x|}), which never overflows.

    .. math::
        \frac{\partial \ell}{\partial x} = \sigma(x) - t, \qquad
        \frac{\partial \ell}{\partial t} = -x .
    """

    name = "bce_with_logits"

    @staticmethod
    def symbolic(sp, x, t):
        """log(1 + eˣ) - x t: the same function without the branches that keep it from
        overflowing in floating point (a symbol has no value to branch on)."""
        return sp.elementwise(lambda v, s: sp.log(1 + sp.exp(v)) - v * s, x, t)

    @staticmethod
    def forward(ctx, xp, x, t):
        ctx.save(x, t)
        return xp.maximum(x, 0) - x * t + xp.log1p(xp.exp(-xp.abs(x)))

    @staticmethod
    def vjp(ctx, xp, g, x, t):
        need_x, need_t = ctx.needs_input_grad
        gx = gt = None
        if need_x:
            e = xp.exp(-xp.abs(x))
            sig = xp.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
            gx = g * (sig - t)
        if need_t:
            gt = g * -x
        return gx, gt

    @staticmethod
    def jvp(ctx, xp, dx, dt, x, t):
        """ℓ̇ = (σ(x) - t) ẋ - x ṫ (the VJP's two partials, times the tangents)."""
        out = None
        if dx is not None:
            e = xp.exp(-xp.abs(x))
            sig = xp.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
            out = (sig - t) * dx
        if dt is not None:
            term = dt * (x * -1.0)
            out = term if out is None else out + term
        return out


class MSELoss(Primitive):
    r"""Squared error ℓ = (x - y)², elementwise, then averaged (``mean``), summed
    (``sum``) or kept (``none``).

    With d = x - y and s the reduction's scale (1/n for the mean of n elements,
    1 for the sum or none):

    .. math::
        \bar x = 2 s\, d\, \bar\ell, \qquad \bar y = -\bar x, \qquad
        \dot\ell = \textstyle\sum 2 s\, d\, (\dot x - \dot y)
        \ (\text{no sum for none}).

    A primitive of its own (not a mean of products) so that the tape names it as
    PyTorch does: ``MseLossBackward0``.
    """

    name = "mse_loss"

    @staticmethod
    def forward(ctx, xp, x, y, reduction="mean"):
        d = x - y
        ctx.save(x, y)  # (the inputs, not d: a recorded backward then sees d depend on them)
        ctx.reduction = reduction
        n = math.prod(d.shape)  # (not d.size: a method on tensors, in reverse over forward)
        ctx.scale = 2.0 / n if reduction == "mean" and n else 2.0
        if reduction == "none":
            return d * d
        total = xp.sum(d * d)
        return total * (1.0 / n if n else float("nan")) if reduction == "mean" else total

    @staticmethod
    def vjp(ctx, xp, g, x, y):
        gx = (g * ctx.scale) * (x - y)
        need_x, need_y = ctx.needs_input_grad
        return (gx if need_x else None), (-gx if need_y else None)

    @staticmethod
    def jvp(ctx, xp, dx, dy, x, y):
        d = x - y
        change = dx if dy is None else dy * -1.0 if dx is None else dx - dy
        out = (ctx.scale * d) * change
        if ctx.reduction == "none":
            return out
        return xp.sum(out, axis=tuple(range(-d.ndim, 0)))


# ---------------------------------------------------------------- normalisation


class Normalize(Primitive):
    r"""x̂ = (x - μ) / √(σ² + ε), with μ and σ² the mean and (biased) variance over ``axes``.

    The heart of batch norm (axes = batch and space) and layer norm (axes =
    the last dimensions); the affine part γ x̂ + β is two ordinary ops.
    With m elements per mean and s = 1/√(σ² + ε):

    .. math::
        \bar x = s \left(\bar y - \mathrm{mean}(\bar y)
                 - \hat x\, \mathrm{mean}(\bar y \hat x)\right)

    (the three terms: direct, through μ, through σ²).  ``mean``/``var`` may
    be passed precomputed (batch norm needs them for its running averages).
    """

    name = "normalize"

    @staticmethod
    def symbolic(sp, x, axes, eps, mean=None, var=None):
        """The forward on sympy expressions, with sympy's square root elementwise."""
        xp = SimpleNamespace(sqrt=lambda v: sp.elementwise(sp.sqrt, v))
        return Normalize.forward(SimpleNamespace(save=lambda *saved: None), xp, x, axes, eps,
                                 mean, var)

    @staticmethod
    def forward(ctx, xp, x, axes, eps, mean=None, var=None):
        if mean is None:
            mean = x.mean(axis=axes, keepdims=True)
            centered = x - mean
            var = (centered * centered).mean(axis=axes, keepdims=True)
        else:
            centered = x - mean
        ctx.invstd = 1.0 / xp.sqrt(var + eps)
        ctx.axes, ctx.eps = axes, eps
        y = centered * ctx.invstd
        ctx.save(x, y)
        return y

    @staticmethod
    def _invstd(ctx, xp, x):
        """s, kept by the forward; recorded, computed again from x, so that it is
        differentiated too (and a traced graph computes it for each input)."""
        if not _recording(xp):
            return ctx.invstd
        centered = x - x.mean(axis=ctx.axes, keepdims=True)
        return 1.0 / xp.sqrt((centered * centered).mean(axis=ctx.axes, keepdims=True)
                             + ctx.eps)

    @staticmethod
    def vjp(ctx, xp, g, x, y):
        axes = ctx.axes
        mean_g = g.mean(axis=axes, keepdims=True)
        mean_gy = (g * y).mean(axis=axes, keepdims=True)
        return ((g - mean_g - y * mean_gy) * Normalize._invstd(ctx, xp, x),)

    @staticmethod
    def jvp(ctx, xp, dx, x, y):
        """The Jacobian s (I - 11ᵀ/m - x̂x̂ᵀ/m) is symmetric: the JVP is the VJP's formula,
        ẏ = s (ẋ - mean(ẋ) - x̂ mean(x̂ ẋ)), over the same axes of each of the k tangents."""
        axes = tuple(a + 1 if a >= 0 else a for a in ctx.axes)  # (past the k axis)
        mean_dx = dx.mean(axis=axes, keepdims=True)
        mean_dxy = (dx * y).mean(axis=axes, keepdims=True)
        return (dx - mean_dx - y * mean_dxy) * Normalize._invstd(ctx, xp, x)


# ------------------------------------------------------------------ activations


_SQRT_HALF = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _erf(xp, x):
    """The error function from the array namespace (scipy/cupyx); math.erf as a fallback."""
    try:
        return xp.erf(x)
    except (ImportError, AttributeError):
        return np.vectorize(math.erf, otypes=[x.dtype])(x)


class GELU(Primitive):
    r"""y = x Φ(x), Φ the standard normal CDF (``approximate='tanh'``: Hendrycks' formula).

    Exact:  dy/dx = Φ(x) + x φ(x),  φ(x) = e^{-x²/2}/√(2π).

    Tanh:   y = ½x(1 + tanh u),  u = √(2/π)(x + 0.044715x³),
            dy/dx = ½(1 + tanh u) + ½x(1 - tanh² u)·√(2/π)(1 + 3·0.044715x²).
    """

    name = "gelu"

    @staticmethod
    def symbolic(sp, x, approximate="none"):
        if approximate == "tanh":
            return sp.elementwise(lambda v: 0.5 * v * (1 + sp.tanh(
                _SQRT_2_OVER_PI * (v + 0.044715 * v ** 3))), x)
        return sp.elementwise(lambda v: 0.5 * v * (1 + sp.erf(v * _SQRT_HALF)), x)

    @staticmethod
    def forward(ctx, xp, x, approximate="none"):
        ctx.approximate = approximate
        ctx.save(x)
        if approximate == "tanh":
            return 0.5 * x * (1.0 + xp.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))
        return 0.5 * x * (1.0 + _erf(xp, x * _SQRT_HALF))

    @staticmethod
    def derivative(xp, x, approximate):
        if approximate == "tanh":
            t = xp.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x))
            return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * _SQRT_2_OVER_PI * (
                1.0 + 3 * 0.044715 * x * x)
        cdf = 0.5 * (1.0 + _erf(xp, x * _SQRT_HALF))
        return cdf + x * xp.exp(-0.5 * x * x) * _INV_SQRT_2PI

    @staticmethod
    def vjp(ctx, xp, g, x):
        return (g * GELU.derivative(xp, x, ctx.approximate),)

    @staticmethod
    def jvp(ctx, xp, dx, x):
        return dx * GELU.derivative(xp, x, ctx.approximate)


class LeakyReLU(Primitive):
    """y = x for x > 0, a·x otherwise.  dy/dx = 1 or a (a piecewise-constant factor, saved)."""

    name = "leaky_relu"

    @staticmethod
    def symbolic(sp, x, slope):
        return sp.elementwise(lambda v: sp.where(v > 0, v, slope * v), x)

    @staticmethod
    def forward(ctx, xp, x, slope):
        factor = xp.where(x > 0, 1.0, slope).astype(x.dtype)
        ctx.save(factor)
        return x * factor

    @staticmethod
    def vjp(ctx, xp, g, factor):
        return (g * factor,)

    @staticmethod
    def jvp(ctx, xp, dx, factor):
        return dx * factor


# -------------------------------------------------------------------- embedding


class Embedding(Primitive):
    """y = W[idx]: rows of a table.  VJP: scatter-add ȳ into the rows (repeats add up).

    The row ``padding_idx`` (if any) gets no gradient, as in PyTorch.
    """

    name = "embedding"

    @staticmethod
    def forward(ctx, xp, w, idx, padding_idx=None):
        ctx.idx, ctx.shape = idx, w.shape
        if padding_idx is not None:
            keep = xp.ones((w.shape[0], 1), dtype=w.dtype)
            keep[padding_idx] = 0
            ctx.save(keep)
        return w[idx]

    @staticmethod
    def vjp(ctx, xp, g, keep=None):
        gw = xp.scatter_add(g, ctx.idx, ctx.shape)
        return (gw if keep is None else gw * keep,)

    @staticmethod
    def jvp(ctx, xp, dw, keep=None):
        return dw[:, ctx.idx]  # (the rows picked from each of the k tangents)
