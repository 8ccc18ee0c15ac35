"""The core of :mod:`difflab.nn.functional`: the checks every function shares and the
common layers (linear, the activations that are primitives, pooling, normalisation,
dropout, embedding, padding, the common losses).

``difflab.nn.functional`` gathers this module and the four that build on it
(``functional_activations``, ``functional_layers``, ``functional_conv``,
``functional_losses``); those import from here, never from ``functional``, so
the five import without a cycle.  See :mod:`difflab.nn.functional` for the dtype rules.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from difflab import backend
from difflab.autograd import engine as _engine
from difflab.autograd.engine import apply
from difflab.dtypes import floating_result as _floating_result
from difflab.func.vmap import BatchedTensor as _BatchedTensor
from difflab.functions import where as _where
from difflab.functions_indexing import checked_index as _checked_index
from difflab.nn.functional_arguments import (  # noqa: F401  (the other modules read them here)
    _adaptive_sizes,
    _check_pad_amounts,
    _normalized_shape,
    _number,
    _probability,
    _single,
    _window,
)
from difflab.nn.functional_windows import _max_indices
from difflab.ops import nn_conv, nn_ops, registry
from difflab.tensor import Tensor
from difflab.tensor_arguments import cast_to as _cast_to
from difflab.tensor_arguments import dim_index, known_values, require_tensor, shape_args
from difflab.tensor_arguments import promote_all as _promote_all

__all__ = ["adaptive_avg_pool2d", "avg_pool2d", "batch_norm", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "conv2d", "cross_entropy", "dropout",
           "gelu", "l1_loss", "layer_norm", "leaky_relu", "linear", "log_softmax",
           "max_pool2d", "mse_loss", "nll_loss", "one_hot", "pad", "relu",
           "scaled_dot_product_attention", "sigmoid", "softmax", "tanh"]

_REDUCTIONS = ("mean", "sum", "none")


def _in_place(input: Any, compute: Callable[[Tensor], Tensor], name: str) -> Tensor:  # noqa: A002
    """``compute(input)`` written into ``input``, which is returned: an activation's
    ``inplace=True`` (``nn.ReLU(inplace=True)``, ``F.relu_``), as PyTorch does it.

    The tensor's own in-place machinery does the write (``Tensor._replace_with``, as
    ``x.relu_()``), so its rules hold: the version counter goes up; while recording, a
    leaf that requires grad refuses, and a tensor of a graph takes the write as a new
    record (the gradient is the out-of-place one).  ``name`` is what an error names.
    """
    return _check_tensor(name, input)._replace_with(compute, name)


def _check_tensor(name: str, x: Any, what: str = "") -> Tensor:
    """``x`` if it is a Tensor, else a TypeError naming the function (and the argument,
    ``what``)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: expected a Tensor" + f" for {what}" * bool(what) +
                        f", got {type(x).__name__}; make one with difflab.tensor(...)")
    return x


def _check_input(name: str, x: Any, what: str = "") -> Any:
    """The input of a function that is one primitive (``linear``, ``conv2d``, pooling,
    ``layer_norm``, ``nll_loss``, ``unfold``/``fold``), which every method differentiates:
    a Tensor; a dual number or sympy expressions (``engine.apply`` hands the primitive to
    their interpreter: forward mode, symbolic); an array, taken as a constant tensor.
    ``what`` names the argument in the error (as ``_check_tensor``'s)."""
    if isinstance(x, Tensor) or _engine.interpreter_for(x) is not None:
        return x
    if isinstance(x, np.ndarray) or backend.is_gpu_array(x):
        return Tensor._wrap(x)
    if what:
        raise TypeError(f"{name}: expected a Tensor for {what}, got {type(x).__name__} (an "
                        f"array, a dual number or sympy expressions also do)")
    raise TypeError(f"{name}: expected a Tensor (or an array, a dual number, sympy "
                    f"expressions), got {type(x).__name__}")


def _array_module(x: Any) -> Any:
    """NumPy or CuPy, where ``x``'s values live: a tensor's array's module, a dual number's
    or sympy expressions' device's (their index arrays and constants are made there)."""
    return backend.array_module(x.array) if isinstance(x, Tensor) else x.device.xp


def _constant_dtype(x: Any) -> np.dtype:
    """The NumPy dtype of a constant made beside ``x`` (a mask, zeros to write into): x's
    own, float64 beside sympy expressions (whose object arrays would hold Python's True)."""
    dtype = getattr(x.dtype, "dtype", x.dtype)  # (a tensor's dtype names NumPy's)
    return np.dtype(np.float64) if dtype.kind == "O" else dtype


def _floating(x: Tensor) -> Tensor:
    """``x`` in a floating dtype: an integer or boolean tensor becomes the default float."""
    # (x may be forward mode's Dual: its dtype is NumPy's; sympy expressions (object) stand
    # for real numbers)
    if np.dtype(x.dtype).kind in "fcO":
        return x
    return _cast_to(x, _floating_result(x.dtype))


def _promoted(*operands: Tensor | None) -> list:
    """The operands (``None`` kept in place) cast to their common dtype, as ``x @ W.T + b``
    (sympy expressions, of no dtype, are left as they are)."""
    if any(np.dtype(t.dtype) == object for t in operands if t is not None):
        return list(operands)
    present = _promote_all([t for t in operands if t is not None])
    return [None if t is None else present.pop(0) for t in operands]


def _reduce(losses: Tensor, reduction: str, name: str) -> Tensor:
    if reduction == "mean":
        return losses.mean()
    if reduction == "sum":
        return losses.sum()
    if reduction == "none":
        return losses
    raise ValueError(f"{name}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")


# ----------------------------------------------------------------------- linear


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:  # noqa: A002
    r"""An affine map of the last dimension: :math:`y = x W^\top + b`.

    One fused primitive, with the derivative rules :math:`\bar x = \bar y W`,
    :math:`\bar W = \bar y^\top x` and :math:`\bar b = \sum \bar y` (over the leading
    dimensions).  The operands are promoted to a common dtype first.

    Parameters
    ----------
    input : Tensor
        :math:`(*, \text{in})`.
    weight : Tensor
        :math:`(\text{out}, \text{in})`.
    bias : Tensor, optional
        :math:`(\text{out},)`.

    Returns
    -------
    Tensor
        :math:`(*, \text{out})`.

    Raises
    ------
    TypeError
        If ``input`` is not a Tensor, an array, a dual number or sympy expressions, or
        ``weight`` or ``bias`` is a number or a list (make a tensor of it).
    ValueError
        If the input's last dimension is not ``weight.shape[-1]``.

    See Also
    --------
    difflab.nn.Linear

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> x = dl.tensor([[1.0, 2.0]])
    >>> W = dl.tensor([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    >>> F.linear(x, W, dl.tensor([0.5, 0.0, -1.0]))
    tensor([[1.5, 4. , 2. ]])
    """
    input = _check_input("linear", input)  # noqa: A001
    require_tensor(weight, "linear", "weight")
    if bias is not None:
        require_tensor(bias, "linear", "bias")
    if input.ndim == 0 or input.shape[-1] != weight.shape[-1]:
        raise ValueError(
            f"Linear expected input with {weight.shape[-1]} features in its last dimension "
            f"(in_features={weight.shape[-1]}), but got input of shape {tuple(input.shape)}"
        )
    # (bias None is passed too: a rule then always gets one tangent or adjoint per input,
    # ẋ, Ẇ, ḃ, before the arrays it saved)
    return apply(nn_ops.Linear, *_promoted(input, weight, bias))


# ---------------------------------------------------------------- convolution


def conv2d(
    input: Tensor,  # noqa: A002
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    r"""2-D convolution (a cross-correlation, no kernel flip) of ``input`` with ``weight``.

    .. math::
        \text{out}(n, o, i, j) = b_o + \sum_{c, m, k} W(o, c, m, k)\,
        x(n, g(o) + c,\ s_0 i + d_0 m - p_0,\ s_1 j + d_1 k - p_1)

    over the input channels :math:`c` of output channel :math:`o`'s group.

    Parameters
    ----------
    input : Tensor
        :math:`(N, C_{in}, H, W)`.
    weight : Tensor
        :math:`(C_{out}, C_{in}/\text{groups}, k_h, k_w)`.
    bias : Tensor, optional
        :math:`(C_{out},)`.
    stride, dilation : int or tuple of 2 ints, default 1
        The step between windows and the spacing of the kernel's taps.
    padding : int, tuple of 2 ints, or {'valid', 'same'}, default 0
        Zeros on both sides; ``'same'`` keeps the size (stride 1, odd effective kernel).
    groups : int, default 1
        Independent groups of channels (``groups = C_in``: depthwise).

    Returns
    -------
    Tensor
        :math:`(N, C_{out}, H_{out}, W_{out})`,
        :math:`H_{out} = \lfloor (H + 2p_0 - d_0(k_h - 1) - 1)/s_0 \rfloor + 1`.

    Raises
    ------
    ValueError
        If the input is not 4-D, its channels do not match the weight, ``C_out``
        is not divisible by ``groups``, or ``padding`` is not understood.
    TypeError
        If a window argument (stride, padding, dilation, groups) is a float or another non-int.
    ValueError
        If ``stride`` or ``dilation`` or ``groups`` is below 1, or ``padding`` is negative.

    See Also
    --------
    difflab.nn.Conv2d, conv1d, conv_transpose2d

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> image = dl.arange(16.0).reshape(1, 1, 4, 4)
    >>> F.conv2d(image, dl.ones(1, 1, 2, 2))            # sums of 2x2 windows
    tensor([[[[10., 14., 18.],
              [26., 30., 34.],
              [42., 46., 50.]]]])
    >>> F.conv2d(image, dl.ones(1, 1, 2, 2), stride=2, padding=1).shape
    difflab.Size([1, 1, 3, 3])
    """
    input = _check_input("conv2d", input)  # noqa: A001
    if input.ndim != 4:
        raise ValueError(
            f"Conv2d expects a 4-D input (N, C, H, W), got shape {tuple(input.shape)} "
            f"(add a batch dimension with .unsqueeze(0))"
        )
    o, cg, kh, kw = require_tensor(weight, "conv2d", "weight").shape
    groups = _window("conv2d", groups, "groups", 1)[0]
    if input.shape[1] != cg * groups:
        raise ValueError(
            f"Conv2d expected input with {cg * groups} channels (in_channels), but got "
            f"{input.shape[1]} channels (input shape {tuple(input.shape)})"
        )
    if o % groups:
        raise ValueError(f"out_channels ({o}) must be divisible by groups ({groups})")
    stride = _window("conv2d", stride, "stride")
    dilation = _window("conv2d", dilation, "dilation")
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0, 0)
        elif padding == "same":
            if stride != (1, 1):
                raise ValueError("padding='same' is only supported with stride 1")
            totals = (dilation[0] * (kh - 1), dilation[1] * (kw - 1))
            if totals[0] % 2 or totals[1] % 2:
                raise ValueError("padding='same' needs an odd effective kernel size here")
            padding = (totals[0] // 2, totals[1] // 2)
        else:
            raise ValueError(f"padding must be an int, a pair, 'same' or 'valid', got {padding!r}")
    padding = _window("conv2d", padding, "padding")
    params = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    return apply(nn_conv.Conv2d, *_promoted(input, weight, bias), **params)


def _pool_args(name: str, input: Tensor, kernel_size: Any, stride: Any, padding: Any  # noqa: A002
               ) -> tuple:
    if input.ndim not in (3, 4):
        raise ValueError(f"{name} expects a 3-D or 4-D input, got shape {tuple(input.shape)}")
    kernel = _window(name, kernel_size, "kernel_size")
    stride = kernel if stride is None else _window(name, stride, "stride")
    padding = _window(name, padding, "padding")
    if padding[0] > kernel[0] // 2 or padding[1] > kernel[1] // 2:
        raise ValueError(
            f"{name}: padding {padding} should be at most half of the kernel size {kernel}"
        )
    return kernel, stride, padding


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    r"""The maximum of each (dilated) window; the gradient goes to each window's arg-max.

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, H, W)` or :math:`(C, H, W)`.
    kernel_size : int or tuple of 2 ints
        The window.
    stride : int or tuple, optional
        The step; ``kernel_size`` by default.
    padding : int or tuple, default 0
        :math:`-\infty` padding, at most half the kernel.
    dilation : int or tuple, default 1
        The spacing of the window's elements.
    ceil_mode : bool, default False
        Only False is supported (a clear error otherwise).
    return_indices : bool, default False
        Also return where each maximum is, :math:`h W + w` (the first maximum in
        scanning order, as PyTorch's), as
        :func:`difflab.nn.functional.max_unpool2d` takes them.

    Returns
    -------
    Tensor or (Tensor, Tensor)
        :math:`(N, C, H_{out}, W_{out})` (or without :math:`N`), the input's dtype; with
        ``return_indices``, also the int64 indices of the maxima.

    Raises
    ------
    TypeError
        If ``input`` is not a Tensor, an array, a dual number or sympy expressions.
    ValueError
        If the input is not 3-D or 4-D, or the padding exceeds half the kernel.
    TypeError
        If a window argument (kernel_size, stride, padding, dilation) is a float or another non-int.
    ValueError
        If ``kernel_size`` or ``stride`` or ``dilation`` is below 1, or ``padding`` is negative.

    See Also
    --------
    difflab.nn.MaxPool2d

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> F.max_pool2d(dl.arange(16.0).reshape(1, 1, 4, 4), 2)
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """
    input = _check_input("max_pool2d", input)  # noqa: A001
    if ceil_mode:
        raise NotImplementedError("max_pool2d: ceil_mode=True is not supported in difflab; pad "
                                  "the input (F.pad) so the windows fit, or use ceil_mode=False")
    kernel, stride, padding = _pool_args("max_pool2d", input, kernel_size, stride, padding)
    squeeze = input.ndim == 3
    x = input.reshape((1,) + tuple(input.shape)) if squeeze else input
    dilation = _window("max_pool2d", dilation, "dilation")
    out = apply(nn_conv.MaxPool2d, x, kernel=kernel, stride=stride, padding=padding,
                dilation=dilation)
    if return_indices:
        indices = _max_indices(x, kernel, stride, padding, dilation)
        return (out[0], indices[0]) if squeeze else (out, indices)
    return out.reshape(tuple(out.shape[1:])) if squeeze else out


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0  # noqa: A002
               ) -> Tensor:
    """The mean of each window (zeros of the padding counted in the mean).

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, H, W)` or :math:`(C, H, W)`; an integer input is averaged in
        the default floating dtype.
    kernel_size : int or tuple of 2 ints
        The window.
    stride : int or tuple, optional
        The step; ``kernel_size`` by default.
    padding : int or tuple, default 0
        Zeros on both sides, at most half the kernel.

    Returns
    -------
    Tensor
        :math:`(N, C, H_{out}, W_{out})` (or without :math:`N`).

    Raises
    ------
    TypeError
        If ``input`` is not a Tensor, an array, a dual number or sympy expressions.
    ValueError
        If the input is not 3-D or 4-D, or the padding exceeds half the kernel.
    TypeError
        If a window argument (kernel_size, stride, padding) is a float or another non-int.
    ValueError
        If ``kernel_size`` or ``stride`` is below 1, or ``padding`` is negative.

    See Also
    --------
    difflab.nn.AvgPool2d

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> F.avg_pool2d(dl.arange(16.0).reshape(1, 1, 4, 4), 2, stride=1).shape
    difflab.Size([1, 1, 3, 3])
    """
    input = _check_input("avg_pool2d", input)  # noqa: A001
    kernel, stride, padding = _pool_args("avg_pool2d", input, kernel_size, stride, padding)
    squeeze = input.ndim == 3
    x = _floating(input.reshape((1,) + tuple(input.shape)) if squeeze else input)
    out = apply(nn_conv.AvgPool2d, x, kernel=kernel, stride=stride, padding=padding)
    return out.reshape(tuple(out.shape[1:])) if squeeze else out


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    r"""Average over a grid of ``output_size`` cells that tiles the input (PyTorch's bins).

    Cell :math:`i` along a side of length :math:`n` cut into :math:`m` cells covers
    :math:`[\lfloor i n/m \rfloor, \lceil (i+1) n/m \rceil)`.  When :math:`m`
    divides :math:`n` this is plain average pooling; ``output_size=1`` is the
    global mean.

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, H, W)` or :math:`(C, H, W)`.
    output_size : int or tuple of 2 (int or None)
        :math:`(H_{out}, W_{out})`; ``None`` for a side keeps the input's size
        there (``(3, None)``: 3 rows, every column).

    Returns
    -------
    Tensor
        :math:`(N, C, H_{out}, W_{out})` (or without :math:`N`), floating.

    Raises
    ------
    ValueError
        If the input is not 3-D or 4-D, or ``output_size`` is not an int or a pair
        of positive ints (or None).
    RuntimeError
        If a pooled dimension of the input is empty (no cells to pool).

    See Also
    --------
    difflab.nn.AdaptiveAvgPool2d

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> F.adaptive_avg_pool2d(dl.arange(16.0).reshape(1, 1, 4, 4), (1, 2))
    tensor([[[[6.5, 8.5]]]])
    >>> F.adaptive_avg_pool2d(dl.arange(16.0).reshape(1, 1, 4, 4), (None, 1))  # rows kept
    tensor([[[[ 1.5],
              [ 5.5],
              [ 9.5],
              [13.5]]]])
    """
    input = _floating(_check_input("adaptive_avg_pool2d", input))  # noqa: A001
    if input.ndim not in (3, 4):
        raise ValueError(
            f"adaptive_avg_pool2d expects a 3-D or 4-D input, got shape {tuple(input.shape)}"
        )
    h, w = input.shape[-2:]
    oh, ow = _adaptive_sizes("adaptive_avg_pool2d", output_size, (h, w))
    if (oh, ow) == (1, 1):
        return input.mean(axis=(-2, -1), keepdims=True)
    if h % oh == 0 and w % ow == 0:
        return avg_pool2d(input, (h // oh, w // ow))
    rows = []
    for i in range(oh):
        r0, r1 = (i * h) // oh, -(-((i + 1) * h) // oh)
        cells = []
        for j in range(ow):
            c0, c1 = (j * w) // ow, -(-((j + 1) * w) // ow)
            cells.append(input[..., r0:r1, c0:c1].mean(axis=(-2, -1)))
        rows.append(_stack(cells, -1))
    return _stack(rows, -2)


def _stack(tensors: list, dim: int) -> Tensor:
    from difflab.functions import stack

    return stack(tensors, dim)


# ------------------------------------------------------------------ activations


def relu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    r"""The rectified linear unit, elementwise: :math:`\max(x, 0)` (derivative 0 at 0).

    Parameters
    ----------
    input : Tensor
        Any shape; the dtype is kept.
    inplace : bool, default False
        Write the result into ``input`` and return ``input``, as PyTorch does (its
        version counter goes up; while recording, a leaf that requires grad refuses).

    Returns
    -------
    Tensor
        The same shape (``input`` itself with ``inplace=True``).

    Raises
    ------
    RuntimeError
        With ``inplace=True`` while recording, if ``input`` is a leaf that requires
        grad (its gradient would be lost) or a view of a tensor of a graph.

    See Also
    --------
    difflab.nn.ReLU, leaky_relu, gelu
    relu_ : the in-place form.

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> F.relu(dl.tensor([-2.0, 0.0, 3.0]))
    tensor([0., 0., 3.])
    >>> x = dl.tensor([-2.0, 3.0])
    >>> y = F.relu(x, inplace=True)
    >>> y is x, x
    (True, tensor([0., 3.]))
    """
    return _in_place(input, relu, "relu(inplace=True)") if inplace else input.relu()


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False  # noqa: A002
               ) -> Tensor:
    r"""The leaky ReLU, elementwise: :math:`x` for :math:`x > 0`, else :math:`\text{slope}\cdot x`.

    Parameters
    ----------
    input : Tensor
        Any shape (an integer input gives a floating result).
    negative_slope : float, default 0.01
        The slope for negative inputs.
    inplace : bool, default False
        Write the result into ``input`` and return ``input``, as PyTorch does (its
        version counter goes up; while recording, a leaf that requires grad refuses).

    Returns
    -------
    Tensor
        The same shape (``input`` itself with ``inplace=True``).

    Raises
    ------
    RuntimeError
        With ``inplace=True`` while recording, if ``input`` is a leaf that requires
        grad or a view of a tensor of a graph.
    TypeError
        If ``negative_slope`` is None or a string, not a number.

    See Also
    --------
    difflab.nn.LeakyReLU
    leaky_relu_ : the in-place form.

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> F.leaky_relu(dl.tensor([-2.0, 0.0, 3.0]), 0.1)
    tensor([-0.2,  0. ,  3. ])
    >>> x = dl.tensor([-2.0, 3.0])
    >>> F.leaky_relu(x, 0.5, inplace=True) is x, x
    (True, tensor([-1.,  3.]))
    """
    negative_slope = _number("leaky_relu", negative_slope, "negative_slope")
    if inplace:
        return _in_place(input, lambda x: leaky_relu(x, negative_slope),
                         "leaky_relu(inplace=True)")
    return apply(nn_ops.LeakyReLU, _floating(input), slope=float(negative_slope))


def gelu(input: Tensor, approximate: str = "none") -> Tensor:  # noqa: A002
    r"""The Gaussian error linear unit: :math:`x\,\Phi(x)`, :math:`\Phi` the standard normal CDF.

    With ``approximate='tanh'``:
    :math:`\tfrac12 x\,(1 + \tanh(\sqrt{2/\pi}\,(x + 0.044715\,x^3)))`.

    Parameters
    ----------
    input : Tensor
        Any shape.
    approximate : {'none', 'tanh'}, default 'none'
        The exact formula or the tanh approximation.

    Returns
    -------
    Tensor
        The same shape, floating.

    Raises
    ------
    ValueError
        For another ``approximate``.

    See Also
    --------
    difflab.nn.GELU

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> F.gelu(dl.tensor([-2.0, 0.0, 3.0]))
    tensor([-0.0455,  0.    ,  2.996 ])
    """
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return apply(nn_ops.GELU, _floating(input), approximate=approximate)


def sigmoid(input: Tensor) -> Tensor:  # noqa: A002
    r"""The logistic sigmoid, elementwise: :math:`\sigma(x) = 1/(1 + e^{-x})`.

    Its derivative is :math:`\sigma(x)(1 - \sigma(x))`.

    Parameters
    ----------
    input : Tensor
        Any shape.

    Returns
    -------
    Tensor
        The same shape, floating.

    See Also
    --------
    difflab.sigmoid, difflab.nn.Sigmoid

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> F.sigmoid(dl.tensor([-2.0, 0.0, 3.0]))
    tensor([0.1192, 0.5   , 0.9526])
    """
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:  # noqa: A002
    r"""The hyperbolic tangent, elementwise; derivative :math:`1 - \tanh^2 x`.

    Parameters
    ----------
    input : Tensor
        Any shape.

    Returns
    -------
    Tensor
        The same shape, floating.

    See Also
    --------
    difflab.tanh, difflab.nn.Tanh

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> F.tanh(dl.tensor([-2.0, 0.0, 3.0]))
    tensor([-0.964 ,  0.    ,  0.9951])
    """
    return input.tanh()


def _dim(dim: int | None, x: Tensor, name: str) -> int:
    if dim is None:  # PyTorch's legacy choice
        dim = 0 if x.ndim in (0, 1, 3) else 1
    return dim_index(dim, x.ndim, name)


def softmax(input: Tensor, dim: int | None = None) -> Tensor:  # noqa: A002
    r"""Softmax along ``dim``: :math:`e^{x_i} / \sum_j e^{x_j}` (computed stably).

    Its derivative: :math:`\bar x = s \odot (\bar s - \langle \bar s, s\rangle)`.

    Parameters
    ----------
    input : Tensor
        Any shape.
    dim : int, optional
        The dimension to normalise; PyTorch's legacy choice when left out
        (0 for 0-, 1- and 3-D inputs, else 1).  Give it.

    Returns
    -------
    Tensor
        The same shape, floating; positive, summing to 1 along ``dim``.

    Raises
    ------
    IndexError
        If ``dim`` is out of range.

    See Also
    --------
    log_softmax, difflab.nn.Softmax

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> F.softmax(dl.tensor([[1.0, 2.0, 3.0]]), dim=1)
    tensor([[0.09  , 0.2447, 0.6652]])
    """
    return apply(nn_ops.Softmax, _floating(input), dim=_dim(dim, input, "softmax"))


def log_softmax(input: Tensor, dim: int | None = None) -> Tensor:  # noqa: A002
    r"""Log-softmax along ``dim``: :math:`x_i - \log\sum_j e^{x_j}`.

    Computed stably, unlike ``softmax(x).log()``, which underflows to ``-inf``.

    Parameters
    ----------
    input : Tensor
        Any shape.
    dim : int, optional
        The dimension to normalise (the legacy choice when left out; give it).

    Returns
    -------
    Tensor
        The same shape, floating.

    Raises
    ------
    IndexError
        If ``dim`` is out of range.

    See Also
    --------
    nll_loss, cross_entropy, difflab.nn.LogSoftmax

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> F.log_softmax(dl.tensor([1.0, 2.0, 3.0]), dim=0)
    tensor([-2.4076, -1.4076, -0.4076])
    """
    return apply(nn_ops.LogSoftmax, _floating(input), dim=_dim(dim, input, "log_softmax"))


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False  # noqa: A002
            ) -> Tensor:
    r"""When training, zero each element with probability ``p``, scale the rest by :math:`1/(1-p)`.

    :math:`y = x \odot m / (1 - p)`, :math:`m_i \sim \text{Bernoulli}(1 - p)`, so
    :math:`\mathrm E[y] = x`.  With ``training=False`` or ``p == 0`` the input is
    returned as it is.

    Parameters
    ----------
    input : Tensor
        Any shape.
    p : float, default 0.5
        The drop probability, in :math:`[0, 1]`.
    training : bool, default True
        Apply dropout (pass ``module.training`` from a layer).
    inplace : bool, default False
        Write the result into ``input`` and return ``input``, as PyTorch does (its
        version counter goes up; while recording, a leaf that requires grad refuses).

    Returns
    -------
    Tensor
        The same shape.

    Raises
    ------
    ValueError
        If ``p`` is outside :math:`[0, 1]`.
    TypeError
        If ``p`` is None or a string, not a number.

    See Also
    --------
    difflab.nn.Dropout

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> F.dropout(dl.ones(4), 0.5, training=False)
    tensor([1., 1., 1., 1.])
    >>> sorted(set(F.dropout(dl.ones(100), 0.5).tolist()))
    [0.0, 2.0]
    """
    _probability("dropout", p)
    if not training or p == 0.0:
        return input
    if inplace:
        return _in_place(input, lambda x: dropout(x, p, training), "dropout(inplace=True)")
    input = _floating(input)  # noqa: A001  (the kept elements are scaled by 1/(1 - p))
    if p == 1.0:
        return input * 0.0
    mask = apply(registry.PRIMITIVES["dropout_mask"], input, p=p,
                 generator=None)
    return input * mask


# ------------------------------------------------------------- normalisation


def batch_norm(
    input: Tensor,  # noqa: A002
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: Any = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    r"""Normalise each channel (dimension 1) over the batch and the other dimensions.

    .. math::
        y = \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}}\,\gamma + \beta

    In training, :math:`\mu, \sigma^2` are the batch's (biased variance) and the
    running averages, when given, are updated in place:
    :math:`r \leftarrow (1 - \text{momentum})\,r + \text{momentum}\cdot r_{batch}`
    (the variance unbiased there, as in PyTorch).  In evaluation the running
    averages are used (or the batch's statistics when they are None).

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, *)`.
    running_mean, running_var : Tensor or None
        :math:`(C,)` buffers.
    weight, bias : Tensor, optional
        :math:`\gamma, \beta`, shape :math:`(C,)`.
    training : bool, default False
        Use and update the batch's statistics.
    momentum : float or 0-d Tensor, default 0.1
        The weight of the batch in the running averages.
    eps : float, default 1e-5
        Added to the variance.

    Returns
    -------
    Tensor
        The input's shape, floating.

    Raises
    ------
    ValueError
        If the input has fewer than 2 dimensions, or a training batch has one
        value per channel.

    Notes
    -----
    The running averages are read and written with tensor operations (in place),
    so a traced graph (``dl.jit``) replays the update on every call.

    See Also
    --------
    difflab.nn.BatchNorm1d, layer_norm, group_norm

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> x = dl.tensor([[1.0, 10.0], [3.0, 30.0]])
    >>> mean, var = dl.zeros(2), dl.ones(2)
    >>> F.batch_norm(x, mean, var, training=True)
    tensor([[-1., -1.],
            [ 1.,  1.]])
    >>> mean, var
    (tensor([0.2, 2. ]), tensor([ 1.1, 20.9]))
    """
    input = _floating(_check_input("batch_norm", input))  # noqa: A001
    if input.ndim < 2:
        raise ValueError(f"batch_norm expects (N, C, ...) input, got shape {tuple(input.shape)}")
    c = input.shape[1]
    shape = (1, c) + (1,) * (input.ndim - 2)
    axes = (0,) + tuple(range(2, input.ndim))
    if training:
        count = input.numel() // c
        if count <= 1:
            raise ValueError(
                f"Expected more than 1 value per channel when training, got input size "
                f"{tuple(input.shape)}"
            )
        # (the primitive computes the batch's statistics itself, so a traced graph does too)
        out = apply(nn_ops.Normalize, input, axes=axes, eps=eps)
        if running_mean is not None or running_var is not None:
            _update_running_stats(input, axes, c, count, momentum, running_mean,
                                  running_var)
    else:
        if running_mean is None or running_var is None:
            out = apply(nn_ops.Normalize, input, axes=axes, eps=eps)
        else:
            scale = 1.0 / (running_var.detach().reshape(shape) + eps).sqrt()
            out = (input - running_mean.detach().reshape(shape)) * scale.to(input.dtype)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def _update_running_stats(x: Tensor, axes: tuple, c: int, count: int, momentum: Any,
                          running_mean: Tensor | None, running_var: Tensor | None) -> None:
    """r ← (1 - momentum)·r + momentum·batch, in place (the variance unbiased there).

    In-place tensor operations, not writes into ``.array``: a traced graph
    records them and every replay writes the new averages into the buffers.
    """
    from difflab.autograd.grad_mode import no_grad
    from difflab.tensor_arguments import refuse_symbols, values_of

    if not isinstance(x, Tensor):  # (a dual number's values, without its tangents)
        refuse_symbols("batch_norm", "the running statistics are averages of the batch's "
                       "values, which symbols do not have (pass running_mean=None or use "
                       "eval mode)", x)
        x = values_of(x, "batch_norm")
    with no_grad():
        x = x.detach()
        mean = x.mean(dim=axes, keepdim=True)
        centered = x - mean
        var = (centered * centered).mean(dim=axes, keepdim=True)
        if running_mean is not None:
            running_mean.mul_(1.0 - momentum)
            running_mean.add_(momentum * mean.reshape(c).to(running_mean.dtype))
        if running_var is not None:
            running_var.mul_(1.0 - momentum)
            running_var.add_((momentum * count / (count - 1)) * var.reshape(c).to(
                running_var.dtype))


def layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,  # noqa: A002
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    r"""Normalise each sample over its last ``len(normalized_shape)`` dimensions; scale, shift.

    :math:`y = (x - \mu)/\sqrt{\sigma^2 + \epsilon}\cdot\gamma + \beta`, with
    :math:`\mu, \sigma^2` (biased) over those dimensions.

    Parameters
    ----------
    input : Tensor
        :math:`(*, \text{normalized\_shape})`.
    normalized_shape : int or tuple of ints
        The trailing shape.
    weight, bias : Tensor, optional
        :math:`\gamma, \beta`, shape ``normalized_shape``.
    eps : float, default 1e-5
        Added to the variance.

    Returns
    -------
    Tensor
        The input's shape, floating.

    Raises
    ------
    ValueError
        If the input's trailing dimensions are not ``normalized_shape``.
    TypeError
        If ``normalized_shape`` is not an int or a tuple of ints (None, a float).

    See Also
    --------
    difflab.nn.LayerNorm, rms_norm

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> F.layer_norm(dl.tensor([[1.0, 2.0, 3.0]]), (3,))
    tensor([[-1.2247,  0.    ,  1.2247]])
    """
    input = _floating(_check_input("layer_norm", input))  # noqa: A001
    normalized_shape = _normalized_shape("layer_norm", normalized_shape)
    k = len(normalized_shape)
    if tuple(input.shape[input.ndim - k:]) != normalized_shape:
        raise ValueError(
            f"LayerNorm expected input whose last dimensions are {normalized_shape}, got "
            f"input of shape {tuple(input.shape)}"
        )
    axes = tuple(range(input.ndim - k, input.ndim))
    out = apply(nn_ops.Normalize, input, axes=axes, eps=eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


# -------------------------------------------------------------------- embedding


# ------------------------------------------------------------------------ losses


def _check_same_shape(name: str, input: Tensor, target: Tensor) -> None:  # noqa: A002
    if not isinstance(target, Tensor):
        raise TypeError(f"{name}: target must be a Tensor, got {type(target).__name__}")
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(
            f"{name}: target shape {tuple(target.shape)} must equal the input shape "
            f"{tuple(input.shape)}"
        )


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:  # noqa: A002
    r"""The mean squared error: :math:`\ell_i = (x_i - y_i)^2`, then reduced.

    Parameters
    ----------
    input, target : Tensor
        The same shape.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return them one per element.

    Returns
    -------
    Tensor
        A scalar, or the input's shape with ``'none'``.

    Raises
    ------
    TypeError
        If ``target`` is not a Tensor.
    ValueError
        If the shapes differ (no broadcasting: a common bug) or ``reduction`` is unknown.

    See Also
    --------
    difflab.nn.MSELoss, l1_loss, huber_loss

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> F.mse_loss(dl.tensor([1.0, 2.0]), dl.tensor([0.0, 0.0]))
    tensor(2.5)
    >>> F.mse_loss(dl.tensor([1.0, 2.0]), dl.tensor([0.0, 0.0]), reduction="none")
    tensor([1., 4.])
    """
    _check_same_shape("mse_loss", input, target)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"mse_loss: reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    return apply(nn_ops.MSELoss, *_promoted(input, target), reduction=reduction)


def l1_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:  # noqa: A002
    r"""The mean absolute error: :math:`\ell_i = |x_i - y_i|`, then reduced.

    Parameters
    ----------
    input, target : Tensor
        The same shape.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return them one per element.

    Returns
    -------
    Tensor
        A scalar, or the input's shape with ``'none'``.

    Raises
    ------
    TypeError
        If ``target`` is not a Tensor.
    ValueError
        If the shapes differ or ``reduction`` is unknown.

    See Also
    --------
    difflab.nn.L1Loss, smooth_l1_loss

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> F.l1_loss(dl.tensor([1.0, -2.0]), dl.tensor([0.0, 0.0]))
    tensor(1.5)
    """
    _check_same_shape("l1_loss", input, target)
    return _reduce((input - target).abs(), reduction, "l1_loss")


def _class_target(name: str, input: Tensor, target: Any) -> Any:  # noqa: A002
    """Check class-index targets: integer dtype, shape (N,) or (N, d1, ...), values in range."""
    if not isinstance(target, Tensor):
        raise TypeError(f"{name}: target must be a Tensor of class indices, got "
                        f"{type(target).__name__}")
    if target.dtype.kind not in "iu":
        raise TypeError(
            f"{name}: target must hold class indices of an integer dtype (int64), got dtype "
            f"{target.dtype} with shape {tuple(target.shape)}. Use target.long(); for "
            f"class probabilities pass a float target with the input's shape "
            f"{tuple(input.shape)}."
        )
    expected = (input.shape[0],) + tuple(input.shape[2:]) if input.ndim >= 2 else ()
    if tuple(target.shape) != expected:
        raise ValueError(
            f"{name}: expected target of shape {expected} (one class index per sample) for "
            f"input of shape {tuple(input.shape)}, got target of shape {tuple(target.shape)}"
        )
    return target.array


def _checked_classes(target: Tensor, c: int, ignore_index: int) -> Tensor:
    """The class targets, checked to lie in [0, C) but for ``ignore_index`` (an IndexError
    otherwise), by the ``check_index`` primitive: a traced loss checks every batch."""
    return _checked_index(target, c, f"nll_loss: target holds class {{value}} but the input "
                          f"has {c} classes (valid: 0 .. {c - 1})", skip=ignore_index)


def _flatten_classes(input: Tensor, t: Tensor) -> tuple:  # noqa: A002
    """(N, C, d1, ...) -> (N·d1·..., C), so every loss sees rows of class scores; the
    targets ``t`` as one vector of arrays (reshaped by a primitive: a traced one stays one)."""
    if input.ndim == 2:
        return input, t.array
    c = input.shape[1]
    moved = input.permute(0, *range(2, input.ndim), 1)
    return moved.reshape((-1, c)), t.reshape(-1).array


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
             ignore_index: int = -100, reduction: str = "mean") -> Tensor:
    r"""The negative log-likelihood of log-probabilities ``input``.

    .. math::
        \ell_n = -w_{y_n}\, x_{n, y_n}


    With ``reduction='mean'`` the sum is divided by :math:`\sum_n w_{y_n}` (the
    number of counted samples without weights); samples whose target is
    ``ignore_index`` count for nothing.

    Parameters
    ----------
    input : Tensor
        Log-probabilities :math:`(N, C)`, :math:`(N, C, d_1, ...)` or :math:`(C,)`.
    target : Tensor
        Class indices (integer dtype), :math:`(N,)`, :math:`(N, d_1, ...)` or 0-d.
    weight : Tensor, optional
        :math:`(C,)`, a weight per class.
    ignore_index : int, default -100
        A target value that is skipped.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return them one per element.

    Returns
    -------
    Tensor
        A scalar, or :math:`(N, d_1, ...)` with ``'none'``.

    Raises
    ------
    TypeError
        If the target is not an integer tensor (``.long()``; class probabilities
        go to :func:`cross_entropy`).
    ValueError
        If the target's shape does not match, or ``reduction`` is unknown.
    IndexError
        If a target class is outside :math:`[0, C)`.

    See Also
    --------
    cross_entropy, log_softmax, difflab.nn.NLLLoss

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> F.nll_loss(dl.tensor([[-1.0, -2.0], [-3.0, -4.0]]), dl.tensor([1, 0]))
    tensor(2.5)
    """
    input = _check_input("nll_loss", input)  # noqa: A001
    if input.ndim < 1:
        raise ValueError("nll_loss: input must have a class dimension")
    if input.ndim == 1:  # one sample: (C,) scores and a 0-d target
        out = nll_loss(input.reshape((1,) + tuple(input.shape)), target.reshape(1), weight,
                       ignore_index, reduction)
        return out.reshape(())
    if type(target) is _BatchedTensor:  # under vmap, a target that differs between examples
        return _nll_loss_batched(input, target, weight, ignore_index, reduction)
    _class_target("nll_loss", input, target)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"nll_loss: reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    t = _checked_classes(target, input.shape[1], ignore_index)
    out_shape = (input.shape[0],) + tuple(input.shape[2:])
    z, t_flat = _flatten_classes(input, t)
    w = None if weight is None else weight.array.astype(input.dtype)
    out = apply(nn_ops.NLLLoss, z, target=t_flat, weight=w, ignore_index=ignore_index,
                reduction=reduction)
    return out.reshape(out_shape) if reduction == "none" else out


def _nll_loss_batched(input: Tensor, target: Tensor, weight: Tensor | None,  # noqa: A002
                      ignore_index: int, reduction: str) -> Tensor:
    """nll_loss with a batched target (``difflab.func.vmap``), written with indexing,
    whose batching rule takes an index that differs between examples."""
    if input.ndim != 2 or target.dtype.kind not in "iu":
        raise ValueError("nll_loss under vmap with a batched target takes input (N, C) or "
                         "(C,) and integer class indices (N,) or ()")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"nll_loss: reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    target = _checked_classes(target, input.shape[1], ignore_index)
    valid = target != ignore_index
    t = _where(valid, target, 0)
    w = valid.to(input.dtype) if weight is None else weight.to(input.dtype)[t] * valid
    losses = -input[np.arange(input.shape[0]), t] * w
    if reduction == "none":
        return losses
    return losses.sum() if reduction == "sum" else losses.sum() / w.sum()


def cross_entropy(
    input: Tensor,  # noqa: A002
    target: Tensor,
    weight: Tensor | None = None,
    ignore_index: int = -100,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    r"""The cross-entropy of class scores (logits): ``log_softmax`` then ``nll_loss``.

    .. math::
        \ell_n = -\log \frac{e^{x_{n, y_n}}}{\sum_c e^{x_{n, c}}}
        \qquad\text{or, for class probabilities } p:\qquad
        \ell_n = -\sum_c p_{n,c} \log \operatorname{softmax}(x_n)_c

    The two primitives' rules chain to the familiar gradient
    :math:`\operatorname{softmax}(x) - \operatorname{onehot}(y)`.  With
    ``label_smoothing`` :math:`\varepsilon` the target is
    :math:`(1 - \varepsilon)\,\operatorname{onehot}(y) + \varepsilon / C`.

    Parameters
    ----------
    input : Tensor
        Logits :math:`(N, C)`, :math:`(N, C, d_1, ...)` or :math:`(C,)`.
    target : Tensor
        Class indices (integer dtype), or class probabilities with the input's shape (float).
    weight : Tensor, optional
        :math:`(C,)`, a weight per class.
    ignore_index : int, default -100
        A target index that is skipped (class indices only).
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return them one per element.
    label_smoothing : float, default 0.0
        :math:`\varepsilon` in :math:`[0, 1]`.

    Returns
    -------
    Tensor
        A scalar, or one loss per sample with ``'none'``.

    Raises
    ------
    TypeError
        If the target is neither integer class indices nor float probabilities of
        the input's shape.
    ValueError, IndexError
        As :func:`nll_loss`.

    See Also
    --------
    difflab.nn.CrossEntropyLoss, nll_loss, binary_cross_entropy_with_logits

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> logits = dl.tensor([[2.0, 0.0, 0.0], [0.0, 0.0, 3.0]])
    >>> F.cross_entropy(logits, dl.tensor([0, 2]))
    tensor(0.1672)
    >>> F.cross_entropy(logits, dl.tensor([0, 2]), reduction="none")
    tensor([0.2395, 0.0949])
    """
    _check_input("cross_entropy", input)
    if input.ndim == 1:
        input = input.unsqueeze(0)
        target = target.reshape(1) if target.ndim == 0 else target.unsqueeze(0)
    logp = log_softmax(input, 1)
    if isinstance(target, Tensor) and target.dtype.kind == "f" and \
            tuple(target.shape) == tuple(input.shape):  # class probabilities
        if weight is not None:
            logp = logp * weight.reshape((1, -1) + (1,) * (input.ndim - 2))
        c = input.shape[1]
        if label_smoothing:
            target = target * (1.0 - label_smoothing) + label_smoothing / c
        return _reduce(-(logp * target).sum(1), reduction, "cross_entropy")
    loss = nll_loss(logp, target, weight, ignore_index, reduction)
    if label_smoothing:
        c = input.shape[1]
        smooth = -logp.mean(1) if weight is None else -(logp * weight.reshape(
            (1, -1) + (1,) * (input.ndim - 2))).sum(1) / c
        loss = (1.0 - label_smoothing) * loss + label_smoothing * _reduce(
            smooth, reduction, "cross_entropy")
    return loss


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
                         reduction: str = "mean") -> Tensor:
    r"""Binary cross-entropy of probabilities.

    .. math::
        \ell_i = -w_i\,[y_i \log p_i + (1 - y_i)\log(1 - p_i)]


    The logarithms are clamped at :math:`-100` (as in PyTorch), so
    :math:`p = 0` or :math:`1` gives a large finite loss, not inf.

    Parameters
    ----------
    input : Tensor
        Probabilities :math:`p \in [0, 1]`.
    target : Tensor
        :math:`y`, the input's shape (0/1 or soft labels).
    weight : Tensor, optional
        Multiplies each element's loss (broadcast).
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return them one per element.

    Returns
    -------
    Tensor
        A scalar, or the input's shape with ``'none'``.

    Raises
    ------
    ValueError
        If an input is outside :math:`[0, 1]` (apply sigmoid, or use the logits
        version), the shapes differ, or ``reduction`` is unknown.

    See Also
    --------
    binary_cross_entropy_with_logits : more stable, from logits.

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> F.binary_cross_entropy(dl.tensor([0.9, 0.2]), dl.tensor([1.0, 0.0]))
    tensor(0.1643)
    """
    _check_same_shape("binary_cross_entropy", input, target)
    p = known_values(input)  # (a Dual's values are checked; symbols have none: None)
    if p is not None and p.size and (float(p.min()) < 0.0 or float(p.max()) > 1.0):
        raise ValueError(
            "binary_cross_entropy: input must hold probabilities in [0, 1] (apply sigmoid "
            "first, or use binary_cross_entropy_with_logits / BCEWithLogitsLoss)"
        )
    losses = -(target * input.log().clamp(min=-100.0)
               + (1.0 - target) * (1.0 - input).log().clamp(min=-100.0))
    if weight is not None:
        losses = losses * weight
    return _reduce(losses, reduction, "binary_cross_entropy")


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,  # noqa: A002
                                     weight: Tensor | None = None, reduction: str = "mean"
                                     ) -> Tensor:
    r"""Binary cross-entropy of :math:`\sigma(x)`, computed stably from the logits :math:`x`.

    Its gradient is :math:`\sigma(x) - y`.

    .. math::
        \ell_i = \max(x_i, 0) - x_i y_i + \log(1 + e^{-|x_i|})

    Parameters
    ----------
    input : Tensor
        Logits :math:`x`, any shape.
    target : Tensor
        :math:`y`, the input's shape.
    weight : Tensor, optional
        Multiplies each element's loss.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return them one per element.

    Returns
    -------
    Tensor
        A scalar, or the input's shape with ``'none'``.

    Raises
    ------
    ValueError
        If the shapes differ or ``reduction`` is unknown.

    See Also
    --------
    difflab.nn.BCEWithLogitsLoss, binary_cross_entropy

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> F.binary_cross_entropy_with_logits(dl.tensor([2.0, -1.0]), dl.tensor([1.0, 0.0]))
    tensor(0.2201)
    """
    _check_same_shape("binary_cross_entropy_with_logits", input, target)
    losses = apply(nn_ops.BCEWithLogits, input, target)
    if weight is not None:
        losses = losses * weight
    return _reduce(losses, reduction, "binary_cross_entropy_with_logits")


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """Integer classes to one-hot rows: ``(...)`` -> ``(..., num_classes)`` of 0/1, int64.

    Parameters
    ----------
    tensor : Tensor
        Class indices, an integer dtype.
    num_classes : int, default -1
        The number of classes; -1 takes ``tensor.max() + 1``.

    Returns
    -------
    Tensor
        int64, one more dimension.

    Raises
    ------
    TypeError
        If ``tensor`` is not an integer tensor (``.long()``).

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> F.one_hot(dl.tensor([0, 2, 1]), 3)
    tensor([[1, 0, 0],
            [0, 0, 1],
            [0, 1, 0]])
    """
    if tensor.dtype.kind not in "iu":
        raise TypeError(f"one_hot expects an integer tensor, got {tensor.dtype}; use .long()")
    return apply(registry.PRIMITIVES["one_hot"], tensor, num_classes=num_classes)


# ---------------------------------------------------------------------------------------
# compat-ops (issue 14): padding and attention, with PyTorch's names and keywords.

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def pad(input: Tensor, pad: Any, mode: str = "constant", value: float | None = None  # noqa: A002
        ) -> Tensor:
    """Pad (or, with negative amounts, crop) the last ``len(pad) // 2`` dimensions.

    ``pad`` lists (left, right) amounts from the last dimension backwards:
    ``(1, 2)`` pads the last dimension by 1 before and 2 after, ``(1, 1, 2, 2)``
    the last two.  Each output element is a copy of one input element (or the
    constant), so the gradient flows back to its source, summed where one source
    fed several outputs.

    Parameters
    ----------
    input : Tensor
        Any shape.
    pad : tuple of ints
        (left, right) pairs, at most one pair per dimension.
    mode : {'constant', 'reflect', 'replicate', 'circular'}, default 'constant'
        ``value`` / mirror without repeating the edge / repeat the edge / wrap around.
    value : float, optional
        The fill of ``'constant'`` (0 by default).

    Returns
    -------
    Tensor
        The padded tensor.

    Raises
    ------
    ValueError
        For an odd-length ``pad`` or more pairs than dimensions, an unknown mode,
        a ``value`` with another mode, a negative resulting size, reflect padding
        not smaller than the dimension, circular padding larger than it, or
        replicate/circular padding of an empty dimension.
    TypeError
        If ``pad`` is not a tuple of ints (None, or a float amount).

    See Also
    --------
    difflab.nn.ZeroPad2d, difflab.nn.ReflectionPad1d

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> row = dl.tensor([[1.0, 2.0, 3.0]])
    >>> F.pad(row, (1, 2))
    tensor([[0., 1., 2., 3., 0., 0.]])
    >>> F.pad(row, (2, 2), mode="reflect")
    tensor([[3., 2., 1., 2., 3., 2., 1.]])
    >>> F.pad(row, (1, 1), mode="circular")
    tensor([[3., 1., 2., 3., 1.]])
    """
    from difflab.functions import index_select

    input = _check_input("pad", input)  # noqa: A001  (a dual number, symbols: index_select, cat)
    if not isinstance(pad, (tuple, list)):  # (None: "'NoneType' object is not iterable")
        raise TypeError(f"pad: pad must be a tuple of ints (left, right, ...), got "
                        f"{type(pad).__name__} {pad!r:.40}")
    pad = shape_args((pad,), "pad", "the amounts")  # (1.5 was truncated to 1)
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ValueError(
            f"pad: the padding must list (left, right) pairs for at most {input.ndim} "
            f"dimensions (the input's), got {pad}"
        )
    if mode not in _PAD_MODES:
        raise ValueError(f"pad: mode must be one of {_PAD_MODES}, got {mode!r}")
    if mode != "constant" and value not in (None, 0):
        raise ValueError(f"pad: value is used only with mode='constant', not {mode!r}")
    pairs = [(input.ndim - 1 - i, pad[2 * i], pad[2 * i + 1]) for i in range(len(pad) // 2)]
    for dim, left, right in pairs:
        _check_pad_amounts(mode, dim, left, right, input.shape[dim])
    xp = _array_module(input)
    if mode == "constant":
        return _pad_constant(input, pairs, 0.0 if value is None else value, xp)
    out = input
    for dim, left, right in pairs:
        n = input.shape[dim]
        positions = xp.arange(-left, n + right)  # which input element each output copies
        if mode == "reflect":
            positions = xp.abs(positions)
            positions = xp.where(positions > n - 1, 2 * (n - 1) - positions, positions)
        elif mode == "replicate":
            positions = xp.clip(positions, 0, n - 1)
        else:
            positions = positions % n
        out = index_select(out, dim, positions)
    return out


def _pad_constant(input: Tensor, pairs: list, fill: float, xp: Any) -> Tensor:  # noqa: A002
    """Crop first (negative amounts), then add blocks of ``fill`` on either side."""
    from difflab.functions import cat

    crop = [slice(None)] * input.ndim
    for dim, left, right in pairs:
        crop[dim] = slice(max(-left, 0), input.shape[dim] - max(-right, 0))
    out = input[tuple(crop)]
    for dim, left, right in pairs:
        pieces = []
        for amount in (left, right):
            shape = list(out.shape)
            shape[dim] = max(amount, 0)
            pieces.append(Tensor._wrap(xp.full(shape, fill, dtype=out.dtype)))
        out = cat([pieces[0], out, pieces[1]], dim)
    return out


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
) -> Tensor:
    r"""Attention, :math:`\operatorname{softmax}(Q K^\top s + M)\,V`, over the last two dimensions.

    Batched over the leading dimensions.  :math:`s` is ``scale`` (:math:`1/\sqrt{E}` by
    default) and :math:`M` the mask.
    A row that may attend to nothing comes out NaN, as in PyTorch.

    Parameters
    ----------
    query : Tensor
        :math:`(*, L, E)`.
    key : Tensor
        :math:`(*, S, E)`.
    value : Tensor
        :math:`(*, S, E_v)`.
    attn_mask : Tensor, optional
        Boolean, **True means "may attend"** (False positions get :math:`-\infty`),
        or a float mask added to the scores; broadcast to :math:`(*, L, S)`.
    dropout_p : float, default 0.0
        Drops attention weights (pass 0.0 in evaluation).
    is_causal : bool, default False
        Position :math:`i` attends to positions :math:`\le i` only (then
        ``attn_mask`` must be None).
    scale : float, optional
        The factor of the scores.

    Returns
    -------
    Tensor
        :math:`(*, L, E_v)`.

    Raises
    ------
    ValueError
        If an operand has fewer than 2 dimensions, the shapes do not fit, or
        both ``attn_mask`` and ``is_causal`` are given.

    See Also
    --------
    difflab.nn.MultiheadAttention

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> q = dl.tensor([[[1.0, 0.0], [0.0, 1.0]]])
    >>> F.scaled_dot_product_attention(q, q, dl.tensor([[[1.0, 2.0], [3.0, 4.0]]]), is_causal=True)
    tensor([[[1.    , 2.    ],
             [2.3395, 3.3395]]])
    >>> F.scaled_dot_product_attention(dl.randn(2, 4, 5, 8), dl.randn(2, 4, 7, 8),
    ...                                dl.randn(2, 4, 7, 3)).shape
    difflab.Size([2, 4, 5, 3])
    """
    from difflab.functions import where

    query, key, value = (_check_input("scaled_dot_product_attention", t, name)
                         for name, t in (("query", query), ("key", key), ("value", value)))
    for name, t in (("query", query), ("key", key), ("value", value)):
        if t.ndim < 2:
            raise ValueError(
                f"scaled_dot_product_attention: {name} needs at least 2 dimensions "
                f"(..., sequence, features), got shape {tuple(t.shape)}"
            )
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise ValueError(
            f"scaled_dot_product_attention: expected query (..., L, E), key (..., S, E) and "
            f"value (..., S, Ev), got {tuple(query.shape)}, {tuple(key.shape)} and "
            f"{tuple(value.shape)}"
        )
    length, source = query.shape[-2], key.shape[-2]
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = (query @ key.transpose(-2, -1)) * scale
    xp = _array_module(query)
    if is_causal:
        if attn_mask is not None:
            raise ValueError(
                "scaled_dot_product_attention: pass either attn_mask or is_causal=True, not "
                "both (fold the causal mask into attn_mask)"
            )
        attn_mask = Tensor._wrap(xp.tril(xp.ones((length, source), dtype=bool)))
    if attn_mask is not None:
        mask = _check_input("scaled_dot_product_attention", attn_mask, "attn_mask")
        if mask.dtype.kind == "b":
            scores = where(mask, scores, float("-inf"))
        else:
            scores = scores + mask
    weights = softmax(scores, -1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=True)
    return weights @ value


# ---------------------------------------------------------------------------------------
# breadth (issue 27): 1-D convolution and pooling, hardtanh, the robust regression losses.
# Each is a composite of the functions above (no rule of its own): a 1-D signal (N, C, L)
# is an image (N, C, 1, L) one pixel high, and its gradient is the 2-D one's.


def _as_image(name: str, input: Tensor, batched_ndim: int = 3) -> tuple:  # noqa: A002
    """(N, C, L) or unbatched (C, L) -> (N, C, 1, L), and whether a batch was added."""
    input = _check_input(name, input)  # noqa: A001  (an array: a constant tensor)
    if input.ndim not in (batched_ndim - 1, batched_ndim):
        raise ValueError(
            f"{name} expects a 2-D (C, L) or 3-D (N, C, L) input, got shape "
            f"{tuple(input.shape)}"
        )
    unbatched = input.ndim == batched_ndim - 1
    x = input.unsqueeze(0) if unbatched else input
    return x.unsqueeze(2), unbatched


def _legacy_reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    """PyTorch's deprecated ``size_average``/``reduce`` flags, as a ``reduction``."""
    if size_average is None and reduce is None:
        return reduction
    if reduce is False:
        return "none"
    return "sum" if size_average is False else "mean"

