r"""More activation functions of ``torch.nn.functional``, each a composite of tensor operations.

None of them has a derivative rule of its own: each is written with
operations that do (``exp``, ``log1p``, ``sigmoid``, ``tanh``, ``clamp``,
``where``), so reverse mode, forward mode and the static graphs get them
through the chain rule.  Two habits keep the gradients finite:

* a branch that ``where`` discards is still evaluated, and its derivative
  multiplied by zero; ``0 · inf`` is NaN, so a branch that could overflow is
  evaluated on a clamped input (ELU's exp(min(x, 0)) - 1);
* softplus is written log1p(e^{-|βx|}) + max(βx, 0), which never overflows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from difflab.nn.functional_core import (
    _check_input,
    _dim,
    _floating,
    _in_place,
    _number,
    leaky_relu,
    relu,
    softmax,
)
from difflab.tensor import Tensor
from difflab.tensor_arguments import dim_index

__all__ = ["celu", "celu_", "elu", "elu_", "glu", "gumbel_softmax", "hardshrink", "hardsigmoid",
           "hardswish", "hardtanh", "hardtanh_", "leaky_relu_", "relu6", "relu_",
           "logsigmoid", "mish", "prelu", "rrelu", "rrelu_", "selu", "selu_", "silu", "softmin",
           "softplus", "softshrink", "softsign", "tanhshrink", "threshold", "threshold_"]

#: SELU's constants (Klambauer et al., 2017): the fixed point of zero mean and unit variance.
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _where(condition: Any, a: Any, b: Any) -> Tensor:
    from difflab.functions import where

    return where(condition, a, b)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    r"""x for x > 0, α(eˣ - 1) otherwise: smooth below zero, saturating at -α.

    Parameters
    ----------
    input : Tensor
    alpha : float
    inplace : bool, default False
        Write the result into ``input`` and return ``input``, as PyTorch does (its
        version counter goes up; while recording, a leaf that requires grad refuses).

    Returns
    -------
    Tensor

    Raises
    ------
    TypeError
        If ``alpha`` is None or a string, not a number.

    See Also
    --------
    selu, celu, difflab.nn.ELU

    Notes
    -----
    .. math::
        \text{ELU}(x) = \begin{cases} x & x > 0 \\ \alpha (e^x - 1) & x \le 0 \end{cases}

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.functional.elu(dl.tensor([-1.0, 0.0, 2.0])).tolist()
    [-0.6321205496788025, 0.0, 2.0]
    """
    alpha = _number("elu", alpha, "alpha")
    if inplace:
        return _in_place(input, lambda x: elu(x, alpha), "elu(inplace=True)")
    x = _floating(_check_input("elu", input))  # (fractions: integers become floats)
    negative = alpha * x.clamp(max=0.0).expm1()
    return _where(x > 0, x, negative)


def selu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    r"""scale · elu(x, α) with SELU's constants, which keep activations near mean 0, variance 1.

    Parameters
    ----------
    input : Tensor
        Any shape.
    inplace : bool, default False
        Write the result into ``input`` and return ``input``, as PyTorch does (its
        version counter goes up; while recording, a leaf that requires grad refuses).

    Returns
    -------
    Tensor
        The input's shape.

    See Also
    --------
    elu, alpha_dropout, difflab.nn.SELU

    Notes
    -----
    .. math::
        \text{SELU}(x) = \lambda \begin{cases} x & x > 0 \\
        \alpha (e^x - 1) & x \le 0 \end{cases}, \quad \lambda \approx 1.0507,\ \alpha \approx 1.6733

    Examples
    --------
    >>> import difflab as dl
    >>> round(dl.nn.functional.selu(dl.tensor([1.0])).item(), 4)
    1.0507
    """
    if inplace:
        return _in_place(input, lambda x: selu(x), "selu(inplace=True)")
    return SELU_SCALE * elu(input, SELU_ALPHA)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    r"""max(0, x) + min(0, α(e^{x/α} - 1)): ELU with a derivative continuous for every α.

    Parameters
    ----------
    input : Tensor
        Any shape.
    alpha : float, default 1.0
        :math:`\alpha`, not 0.
    inplace : bool, default False
        Write the result into ``input`` and return ``input``, as PyTorch does (its
        version counter goes up; while recording, a leaf that requires grad refuses).

    Returns
    -------
    Tensor
        The input's shape.

    Raises
    ------
    ValueError
        If ``alpha`` is 0.
    TypeError
        If ``alpha`` is None or a string, not a number.

    See Also
    --------
    elu, difflab.nn.CELU

    Notes
    -----
    .. math::
        \text{CELU}(x) = \max(0, x) + \min(0, \alpha (e^{x/\alpha} - 1))

    Examples
    --------
    >>> import difflab as dl
    >>> round(dl.nn.functional.celu(dl.tensor([-1.0]), alpha=2.0).item(), 4)
    -0.7869
    """
    alpha = _number("celu", alpha, "alpha")
    if inplace:
        return _in_place(input, lambda x: celu(x, alpha), "celu(inplace=True)")
    if alpha == 0:
        raise ValueError("celu: alpha cannot be 0 (it divides x)")
    x = _floating(_check_input("celu", input))  # (fractions: integers become floats)
    negative = alpha * (x.clamp(max=0.0) / alpha).expm1()
    return _where(x > 0, x, negative)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False  # noqa: A002
              ) -> Tensor:
    r"""x where x > ``threshold``, else ``value``.

    Parameters
    ----------
    input : Tensor
        Any shape.
    threshold : float
        The bound.
    value : float
        What replaces the entries at or below it.
    inplace : bool, default False
        Write the result into ``input`` and return ``input``, as PyTorch does (its
        version counter goes up; while recording, a leaf that requires grad refuses).

    Returns
    -------
    Tensor
        The input's shape.

    Raises
    ------
    TypeError
        If ``threshold`` or ``value`` is None or a string, not a number.

    See Also
    --------
    relu, difflab.nn.Threshold

    Notes
    -----
    .. math::
        y = \begin{cases} x & x > \text{threshold} \\ \text{value} & \text{otherwise} \end{cases}

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.functional.threshold(dl.tensor([0.5, 2.0]), 1.0, -9.0).tolist()
    [-9.0, 2.0]
    """
    threshold = _number("threshold", threshold, "threshold")
    value = _number("threshold", value, "value")
    def compute(x: Tensor) -> Tensor:  # (the argument ``threshold`` hides this function)
        return _where(x > threshold, x, float(value))

    if inplace:
        return _in_place(input, compute, "threshold(inplace=True)")
    return compute(_check_input("threshold", input))


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:  # noqa: A002
    r"""log(1 + e^{βx}) / β, a smooth ReLU (and x itself once βx > ``threshold``).

    Parameters
    ----------
    input : Tensor
        Any shape.
    beta : float, default 1.0
        :math:`\beta`, the sharpness.
    threshold : float, default 20.0
        Above it the function is taken as linear (no overflow).

    Returns
    -------
    Tensor
        The input's shape.

    Raises
    ------
    TypeError
        If ``beta`` or ``threshold`` is None or a string, not a number.

    See Also
    --------
    relu, logsigmoid, difflab.nn.Softplus

    Notes
    -----
    .. math::
        \text{Softplus}(x) = \frac{1}{\beta} \log(1 + e^{\beta x})
        \quad (x \text{ itself where } \beta x > \text{threshold})

    Examples
    --------
    >>> import difflab as dl
    >>> round(dl.nn.functional.softplus(dl.tensor([0.0])).item(), 6)   # log 2
    0.693147
    """
    beta = _number("softplus", beta, "beta")
    threshold = _number("softplus", threshold, "threshold")
    x = _check_input("softplus", input)
    bx = x * beta
    smooth = ((-bx.abs()).exp().log1p() + bx.relu()) / beta
    return _where(bx > threshold, x, smooth)


def logsigmoid(input: Tensor) -> Tensor:  # noqa: A002
    r"""log σ(x) = -softplus(-x), computed without overflow for large |x|.

    Parameters
    ----------
    input : Tensor
        Any shape.

    Returns
    -------
    Tensor
        The input's shape.

    See Also
    --------
    sigmoid, softplus, difflab.nn.LogSigmoid

    Notes
    -----
    .. math::
        \log \sigma(x) = -\operatorname{softplus}(-x)

    Examples
    --------
    >>> import difflab as dl
    >>> round(dl.nn.functional.logsigmoid(dl.tensor([-100.0])).item(), 3)
    -100.0
    """
    x = _check_input("logsigmoid", input)
    return -softplus(-x, 1.0, float("inf"))


def silu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    r"""x · σ(x) (also called swish).

    Parameters
    ----------
    input : Tensor
        Any shape.
    inplace : bool, default False
        Write the result into ``input`` and return ``input``, as PyTorch does (its
        version counter goes up; while recording, a leaf that requires grad refuses).

    Returns
    -------
    Tensor
        The input's shape.

    See Also
    --------
    gelu, mish, difflab.nn.SiLU

    Notes
    -----
    .. math::
        \text{SiLU}(x) = x\,\sigma(x)

    Examples
    --------
    >>> import difflab as dl
    >>> round(dl.nn.functional.silu(dl.tensor([1.0])).item(), 4)
    0.7311
    """
    if inplace:
        return _in_place(input, lambda x: silu(x), "silu(inplace=True)")
    x = _check_input("silu", input)
    return x * x.sigmoid()


def mish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    r"""x · tanh(softplus(x)).

    Parameters
    ----------
    input : Tensor
        Any shape.
    inplace : bool, default False
        Write the result into ``input`` and return ``input``, as PyTorch does (its
        version counter goes up; while recording, a leaf that requires grad refuses).

    Returns
    -------
    Tensor
        The input's shape.

    See Also
    --------
    silu, difflab.nn.Mish

    Notes
    -----
    .. math::
        \text{Mish}(x) = x \tanh(\operatorname{softplus}(x))

    Examples
    --------
    >>> import difflab as dl
    >>> round(dl.nn.functional.mish(dl.tensor([1.0])).item(), 4)
    0.8651
    """
    if inplace:
        return _in_place(input, lambda x: mish(x), "mish(inplace=True)")
    x = _check_input("mish", input)
    return x * softplus(x).tanh()


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    r"""clamp(x/6 + 1/2, 0, 1): a piecewise-linear sigmoid.

    Parameters
    ----------
    input : Tensor
        Any shape.
    inplace : bool, default False
        Write the result into ``input`` and return ``input``, as PyTorch does (its
        version counter goes up; while recording, a leaf that requires grad refuses).

    Returns
    -------
    Tensor
        The input's shape.

    See Also
    --------
    sigmoid, hardswish, difflab.nn.Hardsigmoid

    Notes
    -----
    .. math::
        \text{Hardsigmoid}(x) = \min(\max(x/6 + 1/2, 0), 1)

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.functional.hardsigmoid(dl.tensor([-4.0, 0.0, 1.5, 4.0])).tolist()
    [0.0, 0.5, 0.75, 1.0]
    """
    if inplace:
        return _in_place(input, lambda x: hardsigmoid(x), "hardsigmoid(inplace=True)")
    x = _check_input("hardsigmoid", input)
    return (x / 6.0 + 0.5).clamp(0.0, 1.0)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    r"""x · hardsigmoid(x) (MobileNetV3).

    Parameters
    ----------
    input : Tensor
        Any shape.
    inplace : bool, default False
        Write the result into ``input`` and return ``input``, as PyTorch does (its
        version counter goes up; while recording, a leaf that requires grad refuses).

    Returns
    -------
    Tensor
        The input's shape.

    See Also
    --------
    silu, hardsigmoid, difflab.nn.Hardswish

    Notes
    -----
    .. math::
        \text{Hardswish}(x) = x \cdot \min(\max(x/6 + 1/2, 0), 1)

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.functional.hardswish(dl.tensor([-4.0, 1.5, 4.0])).tolist()
    [-0.0, 1.125, 4.0]
    """
    if inplace:
        return _in_place(input, lambda x: hardswish(x), "hardswish(inplace=True)")
    x = _check_input("hardswish", input)
    return x * hardsigmoid(x)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    r"""x where |x| > λ, else 0.

    Parameters
    ----------
    input : Tensor
        Any shape.
    lambd : float, default 0.5
        :math:`\lambda`.

    Returns
    -------
    Tensor
        The input's shape.

    See Also
    --------
    softshrink, difflab.nn.Hardshrink

    Notes
    -----
    .. math::
        y = \begin{cases} x & |x| > \lambda \\ 0 & \text{otherwise} \end{cases}

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.functional.hardshrink(dl.tensor([-1.0, 0.2, 0.75])).tolist()
    [-1.0, 0.0, 0.75]
    """
    x = _check_input("hardshrink", input)
    return _where(x.abs() > lambd, x, 0.0)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    r"""x - λ·sign(x) where |x| > λ, else 0 (the proximal map of λ|x|).

    Parameters
    ----------
    input : Tensor
        Any shape.
    lambd : float, default 0.5
        :math:`\lambda \ge 0`.

    Returns
    -------
    Tensor
        The input's shape.

    Raises
    ------
    ValueError
        If ``lambd`` is negative.

    See Also
    --------
    hardshrink, difflab.nn.Softshrink

    Notes
    -----
    .. math::
        y = \begin{cases} x - \lambda & x > \lambda \\ x + \lambda & x < -\lambda \\
        0 & \text{otherwise} \end{cases}

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.functional.softshrink(dl.tensor([-1.0, 0.2, 0.75])).tolist()
    [-0.5, 0.0, 0.25]
    """
    if lambd < 0:
        raise ValueError(f"softshrink: lambda must be non-negative, got {lambd}")
    x = _check_input("softshrink", input)
    return _where(x > lambd, x - lambd, _where(x < -lambd, x + lambd, 0.0))


def tanhshrink(input: Tensor) -> Tensor:  # noqa: A002
    r"""x - tanh x.

    Parameters
    ----------
    input : Tensor
        Any shape.

    Returns
    -------
    Tensor
        The input's shape.

    See Also
    --------
    difflab.nn.Tanhshrink

    Notes
    -----
    .. math::
        y = x - \tanh x

    Examples
    --------
    >>> import difflab as dl
    >>> round(dl.nn.functional.tanhshrink(dl.tensor([1.0])).item(), 4)
    0.2384
    """
    x = _check_input("tanhshrink", input)
    return x - x.tanh()


def softsign(input: Tensor) -> Tensor:  # noqa: A002
    r"""x / (1 + |x|).

    Parameters
    ----------
    input : Tensor
        Any shape.

    Returns
    -------
    Tensor
        The input's shape.

    See Also
    --------
    tanh, difflab.nn.Softsign

    Notes
    -----
    .. math::
        y = \frac{x}{1 + |x|}

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.functional.softsign(dl.tensor([-3.0, 1.0])).tolist()
    [-0.75, 0.5]
    """
    x = _check_input("softsign", input)
    return x / (1.0 + x.abs())


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,  # noqa: A002
            dtype: Any = None) -> Tensor:
    r"""softmax(-x) along ``dim``: weights that favour the smallest entries.

    Parameters
    ----------
    input : Tensor
        Any shape.
    dim : int, optional
        The dimension to normalise (PyTorch's legacy choice when left out; give it).
    dtype : difflab dtype, optional
        Cast the input to it first.

    Returns
    -------
    Tensor
        The input's shape.

    Raises
    ------
    IndexError
        If ``dim`` is out of range.

    See Also
    --------
    softmax, difflab.nn.Softmin

    Notes
    -----
    .. math::
        \text{Softmin}(x)_i = \frac{e^{-x_i}}{\sum_j e^{-x_j}}

    Examples
    --------
    >>> import difflab as dl
    >>> w = dl.nn.functional.softmin(dl.tensor([1.0, 2.0]), dim=0)
    >>> [round(v, 4) for v in w.tolist()]
    [0.7311, 0.2689]
    """
    x = _check_input("softmin", input)
    if dtype is not None:
        x = x.to(dtype)
    return softmax(-x, _dim(dim, x, "softmin"))


def glu(input: Tensor, dim: int = -1) -> Tensor:  # noqa: A002
    r"""The gated linear unit: a ⊙ σ(b), where a and b are the two halves of x along ``dim``.

    Parameters
    ----------
    input : Tensor
        Any shape.
    dim : int, default -1
        The dimension to halve; its size must be even.

    Returns
    -------
    Tensor
        The input's shape with ``dim`` halved.

    Raises
    ------
    RuntimeError
        If that dimension's size is odd, or the input is 0-d.
    TypeError
        If ``dim`` is not an int.
    IndexError
        If ``dim`` is out of range.

    See Also
    --------
    difflab.nn.GLU

    Notes
    -----
    .. math::
        \text{GLU}(a, b) = a \otimes \sigma(b),
        \quad (a, b) = \text{the halves of } x \text{ along dim}

    Examples
    --------
    >>> import difflab as dl
    >>> round(dl.nn.functional.glu(dl.tensor([2.0, 0.0])).item(), 4)   # 2 · σ(0)
    1.0
    """
    x = _check_input("glu", input)
    if x.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even; "
                           "give it a tensor with a dimension of even size")
    dim = dim_index(dim, x.ndim, "glu")
    half, odd = divmod(x.shape[dim], 2)
    if odd:
        raise RuntimeError(f"glu: Halving dimension must be even, but dimension {dim} is size "
                           f"{x.shape[dim]}")
    # (narrow, not chunk: an empty dimension gives two empty halves, not one chunk)
    return x.narrow(dim, 0, half) * x.narrow(dim, half, half).sigmoid()


def prelu(input: Tensor, weight: Tensor) -> Tensor:  # noqa: A002
    r"""x for x ≥ 0, a·x otherwise, with a learned slope a per channel (dimension 1) or shared.

    Parameters
    ----------
    input : Tensor
        Any shape.
    weight : Tensor
        :math:`a`, 1-D: one slope for all, or one per channel (dimension 1).

    Returns
    -------
    Tensor
        The input's shape.

    Raises
    ------
    ValueError
        If ``weight`` is not 1-D, or its length is neither 1 nor the number of channels.

    See Also
    --------
    leaky_relu, difflab.nn.PReLU

    Notes
    -----
    .. math::
        \text{PReLU}(x) = \begin{cases} x & x \ge 0 \\ a\,x & x < 0 \end{cases}

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([[-1.0, 2.0], [-3.0, -4.0]])
    >>> dl.nn.functional.prelu(x, dl.tensor([0.25, 0.5])).tolist()
    [[-0.25, 2.0], [-0.75, -2.0]]
    """
    x = _check_input("prelu", input)
    if not isinstance(weight, Tensor) or weight.ndim > 1:
        raise ValueError("prelu: weight must be a 1-D tensor (one slope, or one per channel)")
    n = weight.numel()
    if n != 1:
        if x.ndim < 2 or x.shape[1] != n:
            raise ValueError(f"prelu: weight has {n} slopes but the input has "
                             f"{x.shape[1] if x.ndim >= 2 else 1} channels (dimension 1)")
        weight = weight.reshape((1, n) + (1,) * (x.ndim - 2))
    return _where(x >= 0, x, weight * x)


def gumbel_softmax(logits: Tensor, tau: float = 1.0, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    r"""A differentiable sample from the categorical distribution softmax(logits).

    softmax((logits + g)/τ) with Gumbel noise g = -log(-log U); small τ gives
    nearly one-hot samples.  ``hard=True`` returns the one-hot of the sample's
    arg-max with the soft sample's gradient (straight-through).  The noise
    comes from the default generator (:func:`difflab.random.manual_seed`).

    Parameters
    ----------
    logits : Tensor
        Unnormalised log-probabilities, any shape.
    tau : float, default 1.0
        :math:`\tau > 0`, the temperature.
    hard : bool, default False
        Return one-hot samples with the soft sample's gradient (straight-through).
    eps : float, default 1e-10
        Keeps the logarithms of the uniform noise finite.
    dim : int, default -1
        The dimension of the categories.

    Returns
    -------
    Tensor
        The logits' shape: soft samples summing to 1 along ``dim``, or one-hot rows.

    See Also
    --------
    softmax

    Notes
    -----
    .. math::
        y = \operatorname{softmax}\left(\frac{\text{logits} + g}{\tau}\right),
        \quad g = -\log(-\log U),\ U \sim \mathcal U(0, 1)

    Examples
    --------
    >>> import difflab as dl
    >>> _ = dl.manual_seed(0)
    >>> y = dl.nn.functional.gumbel_softmax(dl.zeros(2, 3), hard=True)
    >>> y.sum(-1).tolist(), sorted(set(y.flatten().tolist()))
    ([1.0, 1.0], [0.0, 1.0])
    """
    from difflab.creation import rand, zeros_like

    x = _check_input("gumbel_softmax", logits)  # (dual numbers, symbols: the draw a constant)
    # (drawn and transformed with tensor operations, so a traced graph draws anew each run)
    uniform = rand(x.shape, dtype=np.float64, device=x.device)
    noise = (-((uniform + eps).log().neg() + eps).log()).to(x.dtype)
    dim = dim % max(x.ndim, 1)
    y_soft = softmax((x + noise) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim=dim, keepdim=True)
    one_hot = zeros_like(y_soft).scatter(dim, index, 1.0)
    return one_hot - y_soft.detach() + y_soft


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,  # noqa: A002
             inplace: bool = False) -> Tensor:
    r"""x clipped to [``min_val``, ``max_val``]: a piecewise-linear tanh.

    The derivative is 1 inside the interval and 0 outside (a clamp).

    Parameters
    ----------
    input : Tensor
    min_val, max_val : float
        The interval (``max_val`` must not be below ``min_val``).
    inplace : bool, default False
        Write the result into ``input`` and return ``input``, as PyTorch does (its
        version counter goes up; while recording, a leaf that requires grad refuses).

    Returns
    -------
    Tensor

    Raises
    ------
    TypeError
        If ``min_val`` or ``max_val`` is None or a string, not a number.

    See Also
    --------
    relu6, tanh, difflab.nn.Hardtanh

    Notes
    -----
    .. math::
        \text{Hardtanh}(x) = \min(\max(x, \text{min\_val}), \text{max\_val})

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.functional.hardtanh(dl.tensor([-3., -0.5, 0.25, 2.]))
    tensor([-1.  , -0.5 ,  0.25,  1.  ])
    """
    min_val = _number("hardtanh", min_val, "min_val")
    max_val = _number("hardtanh", max_val, "max_val")
    if inplace:
        return _in_place(input, lambda x: hardtanh(x, min_val, max_val), "hardtanh(inplace=True)")
    if max_val < min_val:
        raise ValueError(f"hardtanh: max_val ({max_val}) cannot be less than min_val ({min_val})")
    # (float bounds: an integer input becomes the default float, as clamp by floats does
    # in PyTorch, not float64)
    return _floating(_check_input("hardtanh", input)).clamp(min_val, max_val)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    r"""min(max(x, 0), 6): :func:`hardtanh` on [0, 6].

    Parameters
    ----------
    input : Tensor
        Any shape.
    inplace : bool, default False
        Write the result into ``input`` and return ``input``, as PyTorch does (its
        version counter goes up; while recording, a leaf that requires grad refuses).

    Returns
    -------
    Tensor
        The input's shape.

    See Also
    --------
    hardtanh, relu, difflab.nn.ReLU6

    Notes
    -----
    .. math::
        \text{ReLU6}(x) = \min(\max(x, 0), 6)

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.functional.relu6(dl.tensor([-1., 3., 9.]))
    tensor([0., 3., 6.])
    """
    if inplace:
        return _in_place(input, lambda x: relu6(x), "relu6(inplace=True)")
    return hardtanh(input, 0.0, 6.0)


# ------------------------------------------------------------ the in-place forms
# PyTorch's F.relu_, F.leaky_relu_, F.elu_, F.hardtanh_, F.threshold_: the function
# with inplace=True, under its own name.


def relu_(input: Tensor) -> Tensor:  # noqa: A002
    r"""In-place :func:`relu`: writes :math:`\max(x, 0)` into ``input`` and returns it.

    The same as ``relu(input, inplace=True)``: ``input``'s version counter goes up,
    and while recording a leaf that requires grad refuses (its gradient would be lost).

    Parameters
    ----------
    input : Tensor
        Any shape; changed in place.

    Returns
    -------
    Tensor
        ``input``, holding the result.

    Raises
    ------
    RuntimeError
        While recording, if ``input`` is a leaf that requires grad or a view of a
        tensor of a graph.

    See Also
    --------
    relu, difflab.Tensor.relu_

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> x = dl.tensor([-2.0, 0.5])
    >>> F.relu_(x) is x, x
    (True, tensor([0. , 0.5]))
    """
    return _in_place(input, relu, "relu_")


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:  # noqa: A002
    r"""In-place :func:`leaky_relu`: writes the leaky ReLU of ``input`` into it.

    The same as ``leaky_relu(input, negative_slope, inplace=True)``.

    Parameters
    ----------
    input : Tensor
        Any shape, floating; changed in place.
    negative_slope : float, default 0.01
        The slope for negative inputs.

    Returns
    -------
    Tensor
        ``input``, holding the result.

    Raises
    ------
    RuntimeError
        While recording, if ``input`` is a leaf that requires grad or a view of a
        tensor of a graph.

    See Also
    --------
    leaky_relu

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> x = dl.tensor([-2.0, 3.0])
    >>> F.leaky_relu_(x, 0.1) is x, x
    (True, tensor([-0.2,  3. ]))
    """
    return _in_place(input, lambda x: leaky_relu(x, negative_slope), "leaky_relu_")


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    r"""In-place :func:`elu`: writes the ELU of ``input`` into it and returns it.

    The same as ``elu(input, alpha, inplace=True)``.

    Parameters
    ----------
    input : Tensor
        Any shape, floating; changed in place.
    alpha : float, default 1.0
        :math:`\alpha`, the value approached for large negative inputs is :math:`-\alpha`.

    Returns
    -------
    Tensor
        ``input``, holding the result.

    Raises
    ------
    RuntimeError
        While recording, if ``input`` is a leaf that requires grad or a view of a
        tensor of a graph.

    See Also
    --------
    elu

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([-1.0, 2.0])
    >>> dl.nn.functional.elu_(x) is x, [round(v, 4) for v in x.tolist()]
    (True, [-0.6321, 2.0])
    """
    return _in_place(input, lambda x: elu(x, alpha), "elu_")


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0  # noqa: A002
              ) -> Tensor:
    r"""In-place :func:`hardtanh`: clips ``input`` to [``min_val``, ``max_val``] in place.

    The same as ``hardtanh(input, min_val, max_val, inplace=True)``.

    Parameters
    ----------
    input : Tensor
        Any shape, floating; changed in place.
    min_val, max_val : float
        The interval (``max_val`` must not be below ``min_val``).

    Returns
    -------
    Tensor
        ``input``, holding the result.

    Raises
    ------
    ValueError
        If ``max_val < min_val``.
    RuntimeError
        While recording, if ``input`` is a leaf that requires grad or a view of a
        tensor of a graph.

    See Also
    --------
    hardtanh

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([-3.0, 0.25, 2.0])
    >>> dl.nn.functional.hardtanh_(x) is x, x
    (True, tensor([-1.  ,  0.25,  1.  ]))
    """
    return hardtanh(input, min_val, max_val, inplace=True)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:  # noqa: A002
    r"""In-place :func:`threshold`: replaces the elements not above ``threshold`` by ``value``.

    The same as ``threshold(input, threshold, value, inplace=True)``.

    Parameters
    ----------
    input : Tensor
        Any shape; changed in place.
    threshold : float
        Elements :math:`\le` it are replaced.
    value : float
        What replaces them.

    Returns
    -------
    Tensor
        ``input``, holding the result.

    Raises
    ------
    RuntimeError
        While recording, if ``input`` is a leaf that requires grad or a view of a
        tensor of a graph.

    See Also
    --------
    threshold

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([-1.0, 2.0])
    >>> dl.nn.functional.threshold_(x, 0.5, -9.0) is x, x
    (True, tensor([-9.,  2.]))
    """
    return _in_place(input, lambda x: _where(x > threshold, x, float(value)), "threshold_")


def selu_(input: Tensor) -> Tensor:  # noqa: A002
    r"""In-place :func:`selu`: writes the SELU of ``input`` into it and returns it.

    The same as ``selu(input, inplace=True)``.

    Parameters
    ----------
    input : Tensor
        Any shape, floating; changed in place.

    Returns
    -------
    Tensor
        ``input``, holding the result.

    Raises
    ------
    RuntimeError
        While recording, if ``input`` is a leaf that requires grad or a view of a
        tensor of a graph.

    See Also
    --------
    selu, celu_

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> x = dl.tensor([-1.0, 2.0])
    >>> F.selu_(x) is x, [round(v, 4) for v in x.tolist()]
    (True, [-1.1113, 2.1014])
    """
    return _in_place(input, selu, "selu_")


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    r"""In-place :func:`celu`: writes the CELU of ``input`` into it and returns it.

    The same as ``celu(input, alpha, inplace=True)``.

    Parameters
    ----------
    input : Tensor
        Any shape, floating; changed in place.
    alpha : float, default 1.0
        :math:`\alpha`, not 0.

    Returns
    -------
    Tensor
        ``input``, holding the result.

    Raises
    ------
    RuntimeError
        While recording, if ``input`` is a leaf that requires grad or a view of a
        tensor of a graph.
    ValueError
        If ``alpha`` is 0.

    See Also
    --------
    celu, selu_

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> x = dl.tensor([-1.0, 2.0])
    >>> F.celu_(x, 2.0) is x, [round(v, 4) for v in x.tolist()]
    (True, [-0.7869, 2.0])
    """
    return _in_place(input, lambda x: celu(x, alpha), "celu_")


#: RReLU's default slopes, PyTorch's: negative inputs are scaled by a slope in [1/8, 1/3].
RRELU_LOWER, RRELU_UPPER = 1.0 / 8.0, 1.0 / 3.0


def rrelu(input: Tensor, lower: float = RRELU_LOWER, upper: float = RRELU_UPPER,  # noqa: A002
          training: bool = False, inplace: bool = False) -> Tensor:
    r"""The randomized leaky ReLU: negative inputs scaled by a random slope in training.

    In training each negative element is multiplied by its own slope
    :math:`a \sim \mathcal U(\text{lower}, \text{upper})` (drawn at every call); in
    evaluation by the mean slope :math:`(\text{lower} + \text{upper}) / 2`, a leaky
    ReLU.

    Parameters
    ----------
    input : Tensor
        Any shape.
    lower, upper : float, default 1/8 and 1/3
        The slopes' range.
    training : bool, default False
        Draw the slopes (else use their mean).
    inplace : bool, default False
        Write the result into ``input`` and return ``input``.

    Returns
    -------
    Tensor
        The input's shape.

    Raises
    ------
    TypeError
        If ``lower`` or ``upper`` is None or a string.
    RuntimeError
        If ``lower`` is greater than ``upper`` (PyTorch's error).

    See Also
    --------
    leaky_relu, rrelu_, difflab.nn.RReLU

    Notes
    -----
    .. math::
        \text{RReLU}(x) = \begin{cases} x & x \ge 0 \\ a x & x < 0 \end{cases}

    The derivative is 1 or :math:`a`, the slope the forward pass used.

    Examples
    --------
    >>> import difflab as dl
    >>> F = dl.nn.functional
    >>> F.rrelu(dl.tensor([-1.0, 2.0, -3.0]), 0.1, 0.3)      # evaluation: slope 0.2
    tensor([-0.2,  2. , -0.6])
    >>> _ = dl.manual_seed(0)
    >>> y = F.rrelu(dl.full((1000,), -1.0), training=True)
    >>> bool((y <= -0.125).all() and (y >= -1 / 3).all()), round(-y.mean().item(), 2)
    (True, 0.23)
    """
    from difflab.creation import rand_like
    from difflab.functions import where

    lower, upper = _number("rrelu", lower, "lower"), _number("rrelu", upper, "upper")
    if lower > upper:
        raise RuntimeError(f"rrelu: Lower bound should be less than or equal to the upper "
                           f"bound (got lower={lower}, upper={upper})")
    x = _floating(_check_input("rrelu", input))
    if inplace:
        return _in_place(input, lambda t: rrelu(t, lower, upper, training), "rrelu(inplace=True)")
    if not training:
        return where(x >= 0, x, x * ((lower + upper) / 2))
    slope = rand_like(x) * (upper - lower) + lower  # (the uniform primitive: drawn each call)
    return where(x >= 0, x, x * slope)


def rrelu_(input: Tensor, lower: float = RRELU_LOWER, upper: float = RRELU_UPPER,  # noqa: A002
           training: bool = False) -> Tensor:
    r"""In-place :func:`rrelu`: writes the randomized leaky ReLU of ``input`` into it.

    Parameters
    ----------
    input : Tensor
        Any shape, floating; changed in place.
    lower, upper : float, default 1/8 and 1/3
        The slopes' range.
    training : bool, default False
        Draw the slopes (else use their mean).

    Returns
    -------
    Tensor
        ``input``, holding the result.

    Raises
    ------
    RuntimeError
        While recording, if ``input`` is a leaf that requires grad; if ``lower`` is
        greater than ``upper``.

    See Also
    --------
    rrelu

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([-1.0, 2.0])
    >>> dl.nn.functional.rrelu_(x, 0.1, 0.3) is x, x
    (True, tensor([-0.2,  2. ]))
    """
    return rrelu(input, lower, upper, training, inplace=True)
