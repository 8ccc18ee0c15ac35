"""Fold an evaluation-mode batch norm into the convolution or linear layer before it.

In evaluation mode a batch norm is an affine map per channel, with its running
statistics fixed:

    BN(z) = γ (z − μ) / √(σ² + ε) + β = s z + (β − s μ),   s = γ / √(σ² + ε).

Applied after ``z = W x + b`` (a convolution or a linear layer: linear in x), the two
are one layer of the same kind:

    BN(W x + b) = (s W) x + (s (b − μ) + β),

with ``s`` scaling each output channel's row of ``W`` (for a transposed
convolution, whose weight holds the output channels in its second axis, that
axis).  One layer then does the work of two at inference (PyTorch's
``torch.nn.utils.fusion``, used by its FX conv/batch-norm fuser).
"""

from __future__ import annotations

import copy

from difflab import functions
from difflab.nn.modules.module import Module
from difflab.nn.parameter import Parameter
from difflab.tensor import Tensor

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


def _check_eval(layer: Module, bn: Module, what: str) -> None:
    if layer.training or bn.training:
        raise AssertionError(f"Fusion only for eval! Call .eval() on the {what} and the batch "
                             f"norm first: in training a batch norm normalizes with each "
                             f"batch's own statistics, which no fixed layer reproduces")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("the batch norm has no running statistics "
                             "(track_running_stats=False): there is nothing fixed to fold")


def fuse_conv_bn_eval(conv: Module, bn: Module, transpose: bool = False) -> Module:
    """A copy of ``conv`` that computes ``bn(conv(x))``, both in evaluation mode.

    The copy's weight and bias are :func:`fuse_conv_bn_weights` of the two
    layers'; ``conv`` and ``bn`` are left as they are.

    Parameters
    ----------
    conv : Module
        A convolution (``Conv1d/2d/3d``, or a transposed one with ``transpose=True``).
    bn : Module
        The batch norm after it (``BatchNorm1d/2d/3d``), with running statistics.
    transpose : bool, default False
        ``conv`` is a transposed convolution (its output channels are its weight's
        second axis).

    Returns
    -------
    Module
        The fused convolution (a deep copy of ``conv`` with new parameters).

    Raises
    ------
    AssertionError
        If either layer is in training mode, or ``bn`` keeps no running statistics
        (PyTorch's exception type).

    See Also
    --------
    fuse_conv_bn_weights, fuse_linear_bn_eval

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.nn.utils.fusion import fuse_conv_bn_eval
    >>> _ = dl.manual_seed(0)
    >>> conv, bn = dl.nn.Conv2d(2, 3, 3), dl.nn.BatchNorm2d(3)
    >>> bn.running_mean.fill_(0.5); bn.running_var.fill_(4.0)   # doctest: +ELLIPSIS
    tensor(...)
    >>> _ = conv.eval(); _ = bn.eval()
    >>> x = dl.randn(1, 2, 5, 5)
    >>> fused = fuse_conv_bn_eval(conv, bn)
    >>> bool(dl.allclose(fused(x), bn(conv(x)), atol=1e-6))
    True
    """
    _check_eval(conv, bn, "convolution")
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose)
    return fused


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor,
                         bn_eps: float, bn_w: Tensor | None, bn_b: Tensor | None,
                         transpose: bool = False) -> tuple[Parameter, Parameter]:
    """The weight and bias of one convolution that computes a batch norm of a convolution.

    With ``s = bn_w / sqrt(bn_rv + bn_eps)`` per output channel:
    ``W' = s W`` (each output channel's filters scaled) and
    ``b' = s (b − bn_rm) + bn_b``.  A missing bias counts as zeros, a missing
    ``bn_w`` as ones, a missing ``bn_b`` as zeros.  Each result keeps its
    original's dtype and ``requires_grad``.

    Parameters
    ----------
    conv_w : Tensor
        The convolution's weight, ``(C_out, C_in/groups, *kernel)``; for a transposed
        one ``(C_in, C_out/groups, *kernel)``.
    conv_b : Tensor or None
        Its bias, ``(C_out,)``.
    bn_rm, bn_rv : Tensor
        The batch norm's running mean and variance, ``(C_out,)``.
    bn_eps : float
        Its ``eps``.
    bn_w, bn_b : Tensor or None
        Its affine weight and bias (None without ``affine``).
    transpose : bool, default False
        The weight is a transposed convolution's.

    Returns
    -------
    tuple of Parameter
        ``(weight, bias)``.

    See Also
    --------
    fuse_conv_bn_eval, fuse_linear_bn_weights

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.nn.utils.fusion import fuse_conv_bn_weights
    >>> w, b = fuse_conv_bn_weights(dl.ones(2, 1, 1, 1), None, dl.tensor([1.0, 0.0]),
    ...                             dl.tensor([3.0, 0.0]), 1.0, dl.tensor([2.0, 1.0]), None)
    >>> w.flatten().tolist(), b.tolist()
    ([1.0, 1.0], [-1.0, 0.0])
    """
    weight_dtype = conv_w.dtype
    bias_dtype = conv_b.dtype if conv_b is not None else weight_dtype
    conv_b = functions.zeros_like(bn_rm) if conv_b is None else conv_b
    bn_w = functions.ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = functions.zeros_like(bn_rm) if bn_b is None else bn_b
    rsqrt = functions.rsqrt(bn_rv + bn_eps)
    shape = [1, -1] if transpose else [-1, 1]
    shape += [1] * (conv_w.ndim - 2)
    fused_w = (conv_w * (bn_w * rsqrt).reshape(shape)).to(dtype=weight_dtype)
    fused_b = ((conv_b - bn_rm) * rsqrt * bn_w + bn_b).to(dtype=bias_dtype)
    return (Parameter(fused_w, conv_w.requires_grad),
            Parameter(fused_b, conv_b.requires_grad))


def fuse_linear_bn_eval(linear: Module, bn: Module) -> Module:
    """A copy of ``linear`` that computes ``bn(linear(x))``, both in evaluation mode.

    The batch norm acts on the linear layer's output features, so its
    ``num_features`` must be ``linear.out_features`` (or 1: one scale for all).

    Parameters
    ----------
    linear : Module
        A ``Linear`` layer.
    bn : Module
        The ``BatchNorm1d`` after it, with running statistics.

    Returns
    -------
    Module
        The fused linear layer (a deep copy of ``linear`` with new parameters).

    Raises
    ------
    AssertionError
        If either layer is in training mode, ``bn`` keeps no running statistics, or
        its feature count is neither ``linear.out_features`` nor 1.

    See Also
    --------
    fuse_linear_bn_weights, fuse_conv_bn_eval

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.nn.utils.fusion import fuse_linear_bn_eval
    >>> _ = dl.manual_seed(0)
    >>> linear, bn = dl.nn.Linear(4, 3), dl.nn.BatchNorm1d(3)
    >>> _ = bn.running_var.fill_(0.25); _ = linear.eval(); _ = bn.eval()
    >>> x = dl.randn(5, 4)
    >>> bool(dl.allclose(fuse_linear_bn_eval(linear, bn)(x), bn(linear(x)), atol=1e-6))
    True
    """
    _check_eval(linear, bn, "linear layer")
    if not (linear.out_features == bn.num_features or bn.num_features == 1):
        raise AssertionError(
            f"To fuse, linear.out_features == bn.num_features or bn.num_features == 1; got "
            f"{linear.out_features} output features and a batch norm of {bn.num_features}")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Tensor | None, bn_rm: Tensor,
                           bn_rv: Tensor, bn_eps: float, bn_w: Tensor, bn_b: Tensor
                           ) -> tuple[Parameter, Parameter]:
    """The weight and bias of one linear layer that computes a batch norm of a linear layer.

    With ``s = bn_w / sqrt(bn_rv + bn_eps)`` per output feature:
    ``W' = s W`` (row i scaled by ``s_i``) and ``b' = s (b − bn_rm) + bn_b``; a
    missing bias counts as zeros.  Each result keeps its original's dtype and
    ``requires_grad``.

    Parameters
    ----------
    linear_w : Tensor
        The weight, ``(out_features, in_features)``.
    linear_b : Tensor or None
        The bias, ``(out_features,)``.
    bn_rm, bn_rv : Tensor
        The batch norm's running mean and variance.
    bn_eps : float
        Its ``eps``.
    bn_w, bn_b : Tensor
        Its affine weight and bias.

    Returns
    -------
    tuple of Parameter
        ``(weight, bias)``.

    See Also
    --------
    fuse_linear_bn_eval, fuse_conv_bn_weights

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.nn.utils.fusion import fuse_linear_bn_weights
    >>> w, b = fuse_linear_bn_weights(dl.eye(2), None, dl.zeros(2), dl.tensor([3.0, 0.0]),
    ...                               1.0, dl.tensor([2.0, 1.0]), dl.tensor([0.5, 0.0]))
    >>> w.tolist(), b.tolist()
    ([[1.0, 0.0], [0.0, 1.0]], [0.5, 0.0])
    """
    weight_dtype = linear_w.dtype
    bias_dtype = linear_b.dtype if linear_b is not None else weight_dtype
    linear_b = functions.zeros_like(bn_rm) if linear_b is None else linear_b
    scale = bn_w * functions.rsqrt(bn_rv + bn_eps)
    fused_w = linear_w * scale.unsqueeze(-1).to(dtype=weight_dtype)
    fused_b = ((linear_b - bn_rm) * scale + bn_b).to(dtype=bias_dtype)
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, linear_b.requires_grad)
