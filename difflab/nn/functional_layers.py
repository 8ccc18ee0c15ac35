r"""More of ``torch.nn.functional``: distances, normalisations, channel dropout, adaptive
pooling, bags of embeddings (the convolutions are in :mod:`difflab.nn.functional_conv`;
resizing and spatial transformers in :mod:`difflab.nn.functional_sampling`).

Each is a composite of operations that already have derivative rules, chosen
so the composite runs at NumPy speed:

* group, instance and layer normalisation are one normalisation primitive over
  different axes.

Norms whose square root could meet zero are written √max(‖x‖², ε²), which has
the value max(‖x‖, ε) and a finite gradient everywhere.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from difflab.autograd.engine import apply
from difflab.dtype_info import finfo
from difflab.nn.functional_core import (
    _adaptive_sizes,
    _check_input,
    _check_tensor,
    _constant_dtype,
    _floating,
    _in_place,
    _normalized_shape,
    _number,
    _probability,
    _promoted,
    _window,
    max_pool2d,
)
from difflab.nn.functional_embedding import embedding
from difflab.nn.functional_windows import _adaptive_max_indices, _bins
from difflab.ops import nn_ops, registry
from difflab.tensor import Tensor
from difflab.tensor_arguments import dim_index, integer

__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d",
           "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d",
           "adaptive_max_pool3d_with_indices",
           "alpha_dropout", "bilinear", "cosine_similarity", "dropout1d",
           "dropout2d", "dropout3d", "feature_alpha_dropout",
           "embedding_bag", "group_norm", "instance_norm",
           "local_response_norm", "normalize", "pairwise_distance", "pdist", "pixel_shuffle",
           "pixel_unshuffle", "rms_norm"]


def _where(condition: Any, a: Any, b: Any) -> Tensor:
    from difflab.functions import where

    return where(condition, a, b)


# ------------------------------------------------------------------------------ distances


def _p_norm(x: Tensor, p: float, dim: int, keepdim: bool = False, eps: float = 0.0) -> Tensor:
    """‖x‖_p along ``dim`` (at least ``eps``), with finite gradients at x = 0."""
    if p == 2:
        return (x * x).sum(dim, keepdim=keepdim).clamp(min=eps * eps).sqrt()
    if p == 1:
        return x.abs().sum(dim, keepdim=keepdim).clamp(min=eps)
    if math.isinf(p):
        return x.abs().amax(dim=dim, keepdim=keepdim).clamp(min=eps)
    if p <= 0:
        raise ValueError(f"the norm's p must be positive, got {p}")
    return (x.abs() ** p).sum(dim, keepdim=keepdim).clamp(min=eps**p) ** (1.0 / p)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    r"""‖x₁ - x₂ + ε‖_p along the last dimension (rows paired one to one, broadcast).

    Parameters
    ----------
    x1, x2 : Tensor
        (N, D) or (D,), broadcastable.
    p : float
    eps : float
        Added to the difference (PyTorch's choice: no zero distance, no infinite gradient).
    keepdim : bool

    Returns
    -------
    Tensor
        (N,) distances.

    Raises
    ------
    TypeError
        If ``p`` or ``eps`` is None or a string, not a number.

    See Also
    --------
    cosine_similarity, pdist, difflab.nn.PairwiseDistance

    Notes
    -----
    .. math::
        d(x_1, x_2) = \|x_1 - x_2 + \epsilon\|_p

    Examples
    --------
    >>> import difflab as dl
    >>> d = dl.nn.functional.pairwise_distance(dl.tensor([[0.0, 0.0]]), dl.tensor([[3.0, 4.0]]))
    >>> round(d.item(), 4)
    5.0
    """
    p = _number("pairwise_distance", p, "p")
    eps = _number("pairwise_distance", eps, "eps")
    x1 = _check_input("pairwise_distance", x1)
    return _p_norm(x1 - x2 + eps, p, -1, keepdim)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    r"""x₁·x₂ / (max(‖x₁‖, ε) · max(‖x₂‖, ε)) along ``dim``: the cosine of the angle.

    Parameters
    ----------
    x1, x2 : Tensor
        Broadcastable to a common shape.
    dim : int, default 1
        The dimension of the vectors.
    eps : float, default 1e-8
        :math:`\epsilon`, the smallest norm used (no division by 0).

    Returns
    -------
    Tensor
        The common shape without ``dim``; values in :math:`[-1, 1]`.

    Raises
    ------
    TypeError
        If ``x1`` or ``x2`` is not a Tensor, or ``dim`` is not an int.
    IndexError
        If ``dim`` is out of range.

    See Also
    --------
    pairwise_distance, difflab.nn.CosineSimilarity

    Notes
    -----
    .. math::
        \cos(x_1, x_2) = \frac{x_1 \cdot x_2}{\max(\|x_1\|_2, \epsilon)\,\max(\|x_2\|_2, \epsilon)}

    Examples
    --------
    >>> import difflab as dl
    >>> F = dl.nn.functional
    >>> F.cosine_similarity(dl.tensor([[1.0, 0.0]]), dl.tensor([[1.0, 1.0]])).tolist()
    [0.7071067690849304]
    """
    x1 = _floating(_check_input("cosine_similarity", x1, "x1"))
    x2 = _floating(_check_input("cosine_similarity", x2, "x2"))
    dim = dim_index(dim, max(x1.ndim, x2.ndim), "cosine_similarity")
    n1, n2 = _p_norm(x1, 2, dim, eps=eps), _p_norm(x2, 2, dim, eps=eps)
    return (x1 * x2).sum(dim) / (n1 * n2)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:  # noqa: A002
    r"""The p-norm distance between every pair of rows of an (N, M) tensor.

    The :math:`N(N-1)/2` distances of the rows :math:`i < j`, in the order of the upper
    triangle of the distance matrix, row by row (``scipy.spatial.distance.pdist``'s
    condensed form).

    Parameters
    ----------
    input : Tensor
        :math:`(N, M)`, N points of M coordinates.
    p : float, default 2.0
        The norm; :math:`p` must be positive (``float('inf')``: the largest absolute entry).

    Returns
    -------
    Tensor
        :math:`(N(N-1)/2,)`, :math:`\|x_i - x_j\|_p` for :math:`i < j`, row by row.

    Raises
    ------
    ValueError
        If the input is not 2-D, or :math:`p \le 0`.

    See Also
    --------
    pairwise_distance : the distance of matching rows of two tensors.
    difflab.cdist : every distance between the rows of two tensors (a full matrix).

    Notes
    -----
    .. math::
        d_{ij} = \|x_i - x_j\|_p = \Bigl(\sum_k |x_{ik} - x_{jk}|^p\Bigr)^{1/p},
        \qquad \frac{\partial d_{ij}}{\partial x_i} =
            \frac{|x_i - x_j|^{p-1} \operatorname{sign}(x_i - x_j)}{d_{ij}^{\,p-1}}
        = -\frac{\partial d_{ij}}{\partial x_j} .

    At a distance of 0 (two equal rows) the norm has no derivative; the gradient given
    there is 0, not NaN.

    Examples
    --------
    >>> import difflab as dl
    >>> points = dl.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]])
    >>> dl.nn.functional.pdist(points).tolist()            # d01, d02, d12
    [5.0, 1.0, 4.242640495300293]
    >>> dl.nn.functional.pdist(points, p=1).tolist()
    [7.0, 1.0, 6.0]
    >>> same = dl.zeros(2, 2, requires_grad=True)
    >>> dl.nn.functional.pdist(same).sum().backward()
    >>> same.grad.tolist()                                 # 0 at a zero distance, not NaN
    [[0.0, 0.0], [0.0, 0.0]]
    """
    from difflab.functions import index_select

    x = _check_input("pdist", input)
    if x.ndim != 2:
        raise ValueError(f"pdist only supports 2D tensors, got: {x.ndim}D")
    i, j = np.triu_indices(x.shape[0], 1)
    diff = index_select(x, 0, i) - index_select(x, 0, j)
    if p == 2:  # 0 where two rows are equal, with a zero (not NaN) gradient
        squares = (diff * diff).sum(-1)
        positive = squares > 0
        return _where(positive, _where(positive, squares, 1.0).sqrt(), 0.0)
    return _p_norm(diff, p, -1)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,  # noqa: A002
              out: Any = None) -> Tensor:
    r"""x / max(‖x‖_p, ε) along ``dim``: unit vectors.

    Parameters
    ----------
    input : Tensor
        Any shape.
    p : float, default 2.0
        The norm; :math:`p` must be positive (``float('inf')``: the largest absolute entry).
    dim : int, default 1
        The dimension of the vectors.
    eps : float, default 1e-12
        :math:`\epsilon`, the smallest norm divided by.
    out : None
        Accepted for PyTorch compatibility; ignored.

    Returns
    -------
    Tensor
        The input's shape: :math:`x / \max(\|x\|_p, \epsilon)` along ``dim``.

    Raises
    ------
    ValueError
        If :math:`p \le 0`.
    TypeError
        If ``p`` or ``eps`` is None or a string, not a number.

    See Also
    --------
    cosine_similarity

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.functional.normalize(dl.tensor([[3.0, 4.0]])).tolist()
    [[0.6000000238418579, 0.800000011920929]]
    """
    p, eps = _number("normalize", p, "p"), _number("normalize", eps, "eps")
    x = _check_input("normalize", input)
    return x / _p_norm(x, p, dim, keepdim=True, eps=eps)


# ---------------------------------------------------------------------------- dropouts


def _channel_dropout(name: str, input: Tensor, p: float, training: bool,  # noqa: A002
                     spatial: int, inplace: bool = False) -> Tensor:
    x = _check_input(name, input)
    _probability(name, p)
    if x.ndim not in (spatial + 1, spatial + 2):
        raise ValueError(f"{name} expects a {spatial + 1}-D (unbatched) or {spatial + 2}-D "
                         f"(batched) input, got shape {tuple(x.shape)}")
    if not training or p == 0.0:
        return x
    if inplace:
        return _in_place(x, lambda t: _channel_dropout(name, t, p, True, spatial),
                         f"{name}(inplace=True)")
    x = _floating(x)  # (the kept channels are scaled by 1/(1 - p))
    if p == 1.0:
        return x * 0.0
    # one draw per channel: the mask of the first element of each (a primitive, so a traced
    # graph draws a new mask at every run, as eager code does)
    channels = x[(Ellipsis,) + (slice(0, 1),) * spatial]
    return x * apply(registry.PRIMITIVES["dropout_mask"], channels, p=p,
                     generator=None)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, L) (or (C, L)) with probability p; scale the rest 1/(1-p).

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, L)` or :math:`(C, L)`.
    p : float, default 0.5
        The probability of zeroing a channel, in :math:`[0, 1]`.
    training : bool, default True
        Apply dropout (else return the input).
    inplace : bool, default False
        Write the result into ``input`` and return ``input``, as PyTorch does (its
        version counter goes up; while recording, a leaf that requires grad refuses).

    Returns
    -------
    Tensor
        The input's shape: each channel zeroed, or scaled by :math:`1/(1-p)`.

    Raises
    ------
    ValueError
        If ``p`` is outside :math:`[0, 1]` or the input is not 2-D or 3-D.
    TypeError
        If ``p`` is None or a string, not a number.

    See Also
    --------
    difflab.nn.functional.dropout, dropout2d, difflab.nn.Dropout1d

    Examples
    --------
    >>> import difflab as dl
    >>> _ = dl.manual_seed(0)
    >>> y = dl.nn.functional.dropout1d(dl.ones(1, 6, 4), 0.5)
    >>> sorted(set(y.flatten().tolist())), bool((y.amax(-1) == y.amin(-1)).all())
    ([0.0, 2.0], True)
    """
    return _channel_dropout("dropout1d", input, p, training, 1, inplace)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
              inplace: bool = False) -> Tensor:
    """Zero whole feature maps of (N, C, H, W) (or (C, H, W)) with probability p.

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, H, W)` or :math:`(C, H, W)`.
    p : float, default 0.5
        The probability of zeroing a channel, in :math:`[0, 1]`.
    training : bool, default True
        Apply dropout (else return the input).
    inplace : bool, default False
        Write the result into ``input`` and return ``input``, as PyTorch does (its
        version counter goes up; while recording, a leaf that requires grad refuses).

    Returns
    -------
    Tensor
        The input's shape: each feature map zeroed, or scaled by :math:`1/(1-p)`.

    Raises
    ------
    ValueError
        If ``p`` is outside :math:`[0, 1]` or the input is not 3-D or 4-D.
    TypeError
        If ``p`` is None or a string, not a number.

    See Also
    --------
    difflab.nn.functional.dropout, dropout1d, difflab.nn.Dropout2d

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.functional.dropout2d(dl.ones(2, 3, 4, 4), 0.5, training=False).sum().item()
    96.0
    """
    return _channel_dropout("dropout2d", input, p, training, 2, inplace)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,  # noqa: A002
                  inplace: bool = False) -> Tensor:
    r"""Dropout for SELU networks, keeping the activations' mean 0 and variance 1.

    Dropped elements become SELU's saturation value :math:`\alpha'` (not 0, which would
    shift the mean) and an affine map :math:`a x + b` restores mean 0 and variance 1.
    Without ``training`` it is the identity.

    Parameters
    ----------
    input : Tensor
        Any shape.
    p : float, default 0.5
        The drop probability, in :math:`[0, 1]`.
    training : bool, default False
        Apply dropout (note the default, as PyTorch's).
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
        If ``p`` is outside :math:`[0, 1]`.
    TypeError
        If ``p`` is None or a string, not a number.

    See Also
    --------
    difflab.nn.functional.selu : the activation this dropout is made for.
    difflab.nn.functional.dropout : plain dropout.
    difflab.nn.AlphaDropout : the module form.

    Notes
    -----
    With SELU's constants :math:`\lambda, \alpha`, :math:`\alpha' = -\lambda\alpha` and a
    Bernoulli mask :math:`m_i \sim \mathcal B(1-p)`,

    .. math::
        y_i = a\,\bigl(m_i x_i + (1 - m_i)\,\alpha'\bigr) + b, \qquad
        a = \bigl((1-p)(1 + p\,\alpha'^2)\bigr)^{-1/2}, \quad b = -a\,\alpha' p .

    The gradient is :math:`a\,m_i`.  ``p = 1`` gives zeros.

    Examples
    --------
    >>> import difflab as dl
    >>> _ = dl.manual_seed(0)
    >>> y = dl.nn.functional.alpha_dropout(dl.randn(100_000), 0.2, training=True)
    >>> round(y.mean().item(), 1), round(y.std().item(), 1)
    (0.0, 1.0)
    >>> x = dl.tensor([1.0, 2.0])
    >>> dl.nn.functional.alpha_dropout(x, 0.2).tolist()     # training=False: the identity
    [1.0, 2.0]
    """
    from difflab.nn.functional_activations import SELU_ALPHA, SELU_SCALE

    x = _check_input("alpha_dropout", input)
    _probability("alpha_dropout", p)
    if not training or p == 0.0:
        return x
    if inplace:
        return _in_place(x, lambda t: alpha_dropout(t, p, True), "alpha_dropout(inplace=True)")
    if p == 1.0:
        return x * 0.0
    saturation = -SELU_SCALE * SELU_ALPHA
    a = ((1 - p) * (1 + p * saturation**2)) ** -0.5
    b = -a * saturation * p
    keep = apply(registry.PRIMITIVES["dropout_mask"], x, p=p,  # (drawn at every run)
                 generator=None) > 0
    return _where(keep, x, saturation) * a + b


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) (or (C, D, H, W)) volumes with probability p.

    The kept channels are scaled by :math:`1/(1-p)`, so the expected value is the input.

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, D, H, W)` or :math:`(C, D, H, W)`.
    p : float, default 0.5
        The probability of zeroing a channel, in :math:`[0, 1]`.
    training : bool, default True
        Apply dropout (else return the input).
    inplace : bool, default False
        Write the result into ``input`` and return ``input``, as PyTorch does (its
        version counter goes up; while recording, a leaf that requires grad refuses).

    Returns
    -------
    Tensor
        The input's shape: each channel zeroed, or scaled by :math:`1/(1-p)`.

    Raises
    ------
    ValueError
        If ``p`` is outside :math:`[0, 1]` or the input is not 4-D or 5-D.
    TypeError
        If ``p`` is None or a string, not a number.

    See Also
    --------
    dropout2d, feature_alpha_dropout, difflab.nn.Dropout3d

    Examples
    --------
    >>> import difflab as dl
    >>> _ = dl.manual_seed(0)
    >>> y = dl.nn.functional.dropout3d(dl.ones(1, 8, 2, 2, 2), 0.5)
    >>> sorted(set(y.flatten().tolist())), bool((y.amax((2, 3, 4)) == y.amin((2, 3, 4))).all())
    ([0.0, 2.0], True)
    """
    return _channel_dropout("dropout3d", input, p, training, 3, inplace)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,  # noqa: A002
                          inplace: bool = False) -> Tensor:
    r"""Alpha dropout of whole channels: :func:`alpha_dropout` with one draw per channel.

    Each channel (dimension 1 of an input of two or more dimensions) is dropped
    with probability ``p``: all its elements become SELU's saturation value
    :math:`\alpha'`, then the affine map of :func:`alpha_dropout` restores mean 0
    and variance 1.  Without ``training`` it is the identity.

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, *)`: one draw for each (sample, channel) pair.
    p : float, default 0.5
        The drop probability, in :math:`[0, 1]`.
    training : bool, default False
        Apply dropout (note the default, as PyTorch's).
    inplace : bool, default False
        Write the result into ``input`` and return ``input``.

    Returns
    -------
    Tensor
        The input's shape.

    Raises
    ------
    ValueError
        If ``p`` is outside :math:`[0, 1]`.
    TypeError
        If ``p`` is None or a string, not a number.
    RuntimeError
        In training, if the input has fewer than 2 dimensions (PyTorch's error).

    See Also
    --------
    alpha_dropout, dropout3d, difflab.nn.FeatureAlphaDropout

    Notes
    -----
    With a Bernoulli mask :math:`m_{nc} \sim \mathcal B(1-p)` per channel,

    .. math::
        y_{nc\ldots} = a\,\bigl(m_{nc} x_{nc\ldots} + (1 - m_{nc})\,\alpha'\bigr) + b,
        \qquad a = \bigl((1-p)(1 + p\,\alpha'^2)\bigr)^{-1/2}, \quad b = -a\,\alpha' p .

    ``p = 1`` gives zeros.

    Examples
    --------
    >>> import difflab as dl
    >>> _ = dl.manual_seed(0)
    >>> y = dl.nn.functional.feature_alpha_dropout(dl.ones(2, 3, 2), 0.5, training=True)
    >>> sorted(set(round(v, 4) for v in y.flatten().tolist()))   # dropped, kept
    [-0.7792, 1.6656]
    >>> bool((y[..., 0] == y[..., 1]).all())                         # one draw per channel
    True
    """
    from difflab.nn.functional_activations import SELU_ALPHA, SELU_SCALE

    x = _check_tensor("feature_alpha_dropout", input)
    _probability("feature_alpha_dropout", p)
    if not training or p == 0.0:
        return x
    if x.ndim < 2:
        raise RuntimeError("feature_alpha_dropout: feature dropout requires at least 2 "
                           f"dimensions in the input (N, C, ...), got shape {tuple(x.shape)}")
    if inplace:
        return _in_place(x, lambda t: feature_alpha_dropout(t, p, True),
                         "feature_alpha_dropout(inplace=True)")
    x = _floating(x)
    if p == 1.0:
        return x * 0.0
    saturation = -SELU_SCALE * SELU_ALPHA
    a = ((1 - p) * (1 + p * saturation**2)) ** -0.5
    b = -a * saturation * p
    channels = x[(slice(None), slice(None)) + (slice(0, 1),) * (x.ndim - 2)]
    keep = apply(registry.PRIMITIVES["dropout_mask"], channels, p=p,  # (drawn at every run)
                 generator=None) > 0
    return _where(keep, x, saturation) * a + b


# ------------------------------------------------------------------------- normalisation


def _affine(out: Tensor, weight: Tensor | None, bias: Tensor | None) -> Tensor:
    """γ x + β per channel (dimension 1)."""
    shape = (1, out.shape[1]) + (1,) * (out.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,  # noqa: A002
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    r"""Normalise each sample over groups of channels (and all positions), then γ x + β.

    ``num_groups=1`` normalises over everything but the batch (as LayerNorm
    over (C, H, W)); ``num_groups=C`` is instance normalisation.

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, *)`.
    num_groups : int
        :math:`G`, dividing :math:`C`.
    weight, bias : Tensor, optional
        :math:`\gamma, \beta`, shape :math:`(C,)`.
    eps : float, default 1e-5
        Added to the variance.

    Returns
    -------
    Tensor
        The input's shape, floating.

    Raises
    ------
    TypeError
        If ``num_groups`` is not an int, or ``weight`` or ``bias`` is not a Tensor.
    ValueError
        If ``num_groups`` is not positive, the input has fewer than 2 dimensions,
        :math:`C` is not divisible by ``num_groups``, or ``weight`` or ``bias`` is not
        of shape :math:`(C,)`.

    See Also
    --------
    layer_norm, instance_norm, difflab.nn.GroupNorm

    Notes
    -----
    .. math::
        y = \frac{x - \mathrm E_g[x]}{\sqrt{\mathrm{Var}_g[x] + \epsilon}}\,\gamma + \beta

    with the mean and (biased) variance over the :math:`C/G` channels of group :math:`g`
    and every position.

    Examples
    --------
    >>> import difflab as dl
    >>> y = dl.nn.functional.group_norm(dl.randn(2, 4, 3), num_groups=2)
    >>> bool((y.reshape(2, 2, 6).mean(-1).abs() < 1e-5).all())     # each group: mean 0
    True
    """
    x = _floating(_check_input("group_norm", input))
    num_groups = integer(num_groups, "group_norm", "num_groups")
    if num_groups < 1:  # (0: Python's bare ZeroDivisionError before)
        raise ValueError(f"group_norm: num_groups must be positive, got {num_groups}")
    if x.ndim < 2:
        raise ValueError(f"group_norm: expected an input of at least 2 dimensions (N, C, *), "
                         f"got shape {tuple(x.shape)}")
    n, c = x.shape[:2]
    if c % num_groups:
        raise ValueError(f"group_norm: the {c} channels must divide into "
                         f"num_groups={num_groups} groups")
    for name, given in (("weight", weight), ("bias", bias)):
        if given is not None and tuple(_check_input("group_norm", given, name).shape) != (c,):
            raise ValueError(f"group_norm: {name} must have one entry per channel, shape "
                             f"({c},), got {tuple(given.shape)} (input {tuple(x.shape)})")
    if x.numel() == 0:  # (nothing to normalise: NumPy would warn of a mean of no values)
        return _affine(x * 1, weight, bias)
    grouped = x.reshape(n, num_groups, -1)
    out = apply(nn_ops.Normalize, grouped, axes=(2,), eps=eps).reshape(x.shape)
    return _affine(out, weight, bias)


def instance_norm(input: Tensor, running_mean: Tensor | None = None,  # noqa: A002
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    r"""Normalise each channel of each sample over its positions, then γ x + β.

    With ``use_input_stats`` (training, or no running statistics) the
    statistics are the sample's own, and running averages given are updated
    (averaged over the batch, variance unbiased); otherwise the running ones
    are used.

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, *)` with at least one position dimension.
    running_mean, running_var : Tensor, optional
        :math:`(C,)` buffers, updated in place with ``use_input_stats``.
    weight, bias : Tensor, optional
        :math:`\gamma, \beta`, shape :math:`(C,)`.
    use_input_stats : bool, default True
        Normalise with each sample's own statistics (else the running ones).
    momentum : float, default 0.1
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
        If the input has fewer than 3 dimensions, or ``use_input_stats=False`` without
        running statistics.
    RuntimeError
        If ``running_mean``, ``running_var``, ``weight`` or ``bias`` has other than
        :math:`C` elements (checked before any running average changes).

    See Also
    --------
    batch_norm, group_norm, difflab.nn.InstanceNorm1d

    Examples
    --------
    >>> import difflab as dl
    >>> y = dl.nn.functional.instance_norm(dl.randn(2, 3, 8))
    >>> bool((y.mean(-1).abs() < 1e-5).all())     # each channel of each sample: mean 0
    True
    """
    x = _floating(_check_input("instance_norm", input))
    if x.ndim < 3:
        raise ValueError(f"instance_norm expects (N, C, ...) with at least one position "
                         f"dimension, got shape {tuple(x.shape)}")
    axes = tuple(range(2, x.ndim))
    c = x.shape[1]
    for what, given in (("running_mean", running_mean), ("running_var", running_var),
                        ("weight", weight), ("bias", bias)):
        if given is not None and given.numel() != c:  # (before any running average moves)
            raise RuntimeError(f"instance_norm: {what} should contain {c} elements (one per "
                               f"channel of the input, shape {tuple(x.shape)}), not "
                               f"{given.numel()}")
    if use_input_stats:
        from difflab.autograd.grad_mode import no_grad

        count = int(np.prod(x.shape[2:]))
        with no_grad():  # (in-place tensor operations: a traced graph replays them)
            a = x.detach()
            if running_mean is not None:
                running_mean.mul_(1.0 - momentum)
                running_mean.add_(momentum * a.mean(dim=axes).mean(0).to(running_mean.dtype))
            if running_var is not None:
                centered = a - a.mean(dim=axes, keepdim=True)
                unbiased = (centered * centered).mean(dim=axes) * (count / max(count - 1, 1))
                running_var.mul_(1.0 - momentum)
                running_var.add_(momentum * unbiased.mean(0).to(running_var.dtype))
        out = apply(nn_ops.Normalize, x, axes=axes, eps=eps)
    else:
        if running_mean is None or running_var is None:
            raise ValueError("instance_norm: use_input_stats=False needs running_mean and "
                             "running_var")
        shape = (1, c) + (1,) * (x.ndim - 2)
        out = (x - running_mean.reshape(shape)) / (running_var.reshape(shape) + eps).sqrt()
    return _affine(out, weight, bias)


def rms_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,  # noqa: A002
             eps: float | None = None) -> Tensor:
    r"""x / √(mean(x²) + ε) over the last dimensions ``normalized_shape``, times γ (no centring).

    ``eps`` defaults to the dtype's machine epsilon, as in PyTorch.

    Parameters
    ----------
    input : Tensor
        :math:`(*, \text{normalized\_shape})`.
    normalized_shape : int or tuple of ints
        The trailing shape.
    weight : Tensor, optional
        :math:`\gamma`, shape ``normalized_shape``.
    eps : float, optional
        The dtype's machine epsilon by default.

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
    layer_norm, difflab.nn.RMSNorm

    Notes
    -----
    .. math::
        y = \frac{x}{\sqrt{\operatorname{mean}(x^2) + \epsilon}}\,\gamma

    Examples
    --------
    >>> import difflab as dl
    >>> y = dl.nn.functional.rms_norm(dl.tensor([[3.0, 4.0]]), [2])
    >>> [round(v, 4) for v in y.flatten().tolist()]
    [0.8485, 1.1314]
    """
    x = _floating(_check_input("rms_norm", input))
    shape = _normalized_shape("rms_norm", normalized_shape)
    if tuple(x.shape[x.ndim - len(shape):]) != shape:
        raise ValueError(f"rms_norm expected input whose last dimensions are {shape}, got "
                         f"input of shape {tuple(x.shape)}")
    if eps is None:  # (symbols, of dtype object, stand for float64 numbers)
        eps = finfo(_constant_dtype(x)).eps
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    out = x / ((x * x).mean(axis=axes, keepdims=True) + eps).sqrt()
    return out if weight is None else out * weight


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4,  # noqa: A002
                        beta: float = 0.75, k: float = 1.0) -> Tensor:
    r"""x / (k + α · mean of x² over ``size`` neighbouring channels)^β (AlexNet's LRN).

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, *)`, at least 3-D.
    size : int
        The number of neighbouring channels.
    alpha : float, default 1e-4
    beta : float, default 0.75
    k : float, default 1.0
        The constants of the formula.

    Returns
    -------
    Tensor
        The input's shape.

    Raises
    ------
    ValueError
        If the input has fewer than 3 dimensions, or ``size`` is not positive.
    TypeError
        If ``size`` is not an int.

    See Also
    --------
    difflab.nn.LocalResponseNorm

    Notes
    -----
    .. math::
        y_c = x_c \Big/ \Big(k + \frac{\alpha}{n} \sum_{c' \in N(c)} x_{c'}^2\Big)^{\beta}

    Examples
    --------
    >>> import difflab as dl
    >>> y = dl.nn.functional.local_response_norm(dl.ones(1, 3, 2), size=3, alpha=3.0, k=1.0,
    ...                                          beta=1.0)
    >>> y[0, :, 0].tolist()              # channel sums of 2, 3, 2 ones over a window of 3
    [0.3333333432674408, 0.25, 0.3333333432674408]
    """
    from difflab.nn.functional_core import avg_pool2d, pad

    x = _check_input("local_response_norm", input)
    if x.ndim < 3:
        raise ValueError(f"local_response_norm expects (N, C, ...) with at least 3 dimensions, "
                         f"got shape {tuple(x.shape)}")
    size = _window("local_response_norm", size, "size", 1)[0]  # (how many channels)
    n, c = x.shape[:2]
    squares = (x * x).reshape(n, 1, c, -1)  # channels as the rows of a one-channel image
    squares = pad(squares, (0, 0, size // 2, (size - 1) // 2))
    div = avg_pool2d(squares, (size, 1), stride=1).reshape(x.shape)
    return x / (div * alpha + k) ** beta


# ------------------------------------------------------------------------ linear pieces


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None
             ) -> Tensor:
    r"""y_o = x₁ᵀ W_o x₂ + b_o for each output o: weight (out, in1, in2).

    Parameters
    ----------
    input1 : Tensor
        :math:`(*, \text{in1})`.
    input2 : Tensor
        :math:`(*, \text{in2})`.
    weight : Tensor
        :math:`(\text{out}, \text{in1}, \text{in2})`.
    bias : Tensor, optional
        :math:`(\text{out},)`.

    Returns
    -------
    Tensor
        :math:`(*, \text{out})`, :math:`y_o = x_1^\top W_o x_2 + b_o`.

    Raises
    ------
    TypeError
        If an input, ``weight`` or ``bias`` is not a Tensor (a number, a list).
    ValueError
        If the weight's shape does not fit the inputs.

    See Also
    --------
    difflab.nn.functional.linear, difflab.nn.Bilinear

    Examples
    --------
    >>> import difflab as dl
    >>> w = dl.ones(1, 2, 2)
    >>> dl.nn.functional.bilinear(dl.tensor([[1.0, 2.0]]), dl.tensor([[3.0, 4.0]]), w).tolist()
    [[21.0]]
    """
    from difflab.functions import einsum

    for what, given in (("input1", input1), ("input2", input2), ("weight", weight)):
        _check_input("bilinear", given, what)
    if bias is not None:
        _check_input("bilinear", bias, "bias")
    if weight.ndim != 3 or input1.shape[-1] != weight.shape[1] or \
            input2.shape[-1] != weight.shape[2]:
        raise ValueError(f"bilinear: weight (out, in1, in2) = {tuple(weight.shape)} does not "
                         f"fit inputs {tuple(input1.shape)} and {tuple(input2.shape)}")
    input1, weight, input2, bias = _promoted(input1, weight, input2, bias)  # (as x @ W.T + b)
    out = einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:  # noqa: A002
    """(N, C·r², H, W) -> (N, C, H·r, W·r): channels rearranged into r×r blocks of pixels.

    Parameters
    ----------
    input : Tensor
        :math:`(*, C r^2, H, W)`.
    upscale_factor : int
        :math:`r`.

    Returns
    -------
    Tensor
        :math:`(*, C, H r, W r)`.

    Raises
    ------
    RuntimeError
        If the channels are not divisible by :math:`r^2`.

    See Also
    --------
    pixel_unshuffle, difflab.nn.PixelShuffle

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.functional.pixel_shuffle(dl.arange(4.0).reshape(1, 4, 1, 1), 2).tolist()
    [[[[0.0, 1.0], [2.0, 3.0]]]]
    """
    x, r = _check_input("pixel_shuffle", input), int(upscale_factor)
    if x.ndim < 3 or x.shape[-3] % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor ({r * r}), got shape "
                           f"{tuple(x.shape)}")
    *batch, c, h, w = x.shape
    out = x.reshape(*batch, c // (r * r), r, r, h, w)
    k = len(batch)
    out = out.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return out.reshape(*batch, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:  # noqa: A002
    """The inverse of :func:`pixel_shuffle`: (N, C, H·r, W·r) -> (N, C·r², H, W).

    Parameters
    ----------
    input : Tensor
        :math:`(*, C, H r, W r)`.
    downscale_factor : int
        :math:`r`.

    Returns
    -------
    Tensor
        :math:`(*, C r^2, H, W)`.

    Raises
    ------
    RuntimeError
        If the height or width is not divisible by :math:`r`.

    See Also
    --------
    pixel_shuffle, difflab.nn.PixelUnshuffle

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.arange(16.0).reshape(1, 1, 4, 4)
    >>> F = dl.nn.functional
    >>> bool((F.pixel_shuffle(F.pixel_unshuffle(x, 2), 2) == x).all())
    True
    """
    x, r = _check_input("pixel_unshuffle", input), int(downscale_factor)
    if x.ndim < 3 or x.shape[-1] % r or x.shape[-2] % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width divisible by "
                           f"downscale_factor ({r}), got shape {tuple(x.shape)}")
    *batch, c, h, w = x.shape
    out = x.reshape(*batch, c, h // r, r, w // r, r)
    k = len(batch)
    out = out.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return out.reshape(*batch, c * r * r, h // r, w // r)


# ---------------------------------------------------------------------- adaptive pooling


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False  # noqa: A002
                        ) -> Tensor:
    """The maximum over each cell of a grid of ``output_size`` that tiles the input.

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, H, W)` or :math:`(C, H, W)`.
    output_size : int or tuple of 2 (int or None)
        The grid; ``None`` for a side keeps the input's size there.
    return_indices : bool, default False
        Also return where each maximum is, :math:`h W + w` (the first maximum of each
        cell in scanning order, as PyTorch's).

    Returns
    -------
    Tensor or (Tensor, Tensor)
        :math:`(N, C, H_{out}, W_{out})` (or without :math:`N`); with ``return_indices``,
        also the int64 indices of the maxima.

    Raises
    ------
    ValueError
        If the input is not 3-D or 4-D, or ``output_size`` is not an int or a pair
        of positive ints (or None).
    RuntimeError
        If a pooled dimension of the input is empty (no cells to pool).

    See Also
    --------
    adaptive_avg_pool2d, difflab.nn.AdaptiveMaxPool2d

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.arange(16.0).reshape(1, 1, 4, 4)
    >>> dl.nn.functional.adaptive_max_pool2d(x, 2)[0, 0].tolist()
    [[5.0, 7.0], [13.0, 15.0]]
    >>> dl.nn.functional.adaptive_max_pool2d(x, (1, None))[0, 0].tolist()  # columns kept
    [[12.0, 13.0, 14.0, 15.0]]
    """
    from difflab.functions import stack

    x = _check_input("adaptive_max_pool2d", input)
    if x.ndim not in (3, 4):
        raise ValueError(f"adaptive_max_pool2d expects a 3-D or 4-D input, got "
                         f"{tuple(x.shape)}")
    h, w = x.shape[-2:]
    oh, ow = _adaptive_sizes("adaptive_max_pool2d", output_size, (h, w))
    if h % oh == 0 and w % ow == 0:  # equal cells: one max-pooling
        out = max_pool2d(x, (h // oh, w // ow))
    else:
        out = stack([stack([x[..., r0:r1, c0:c1].amax(dim=(-2, -1))
                            for c0, c1 in _bins(w, ow)], -1) for r0, r1 in _bins(h, oh)], -2)
    if not return_indices:
        return out
    batched = x if x.ndim == 4 else x.unsqueeze(0)
    indices = _adaptive_max_indices(batched, (oh, ow))
    return out, (indices if x.ndim == 4 else indices.squeeze(0))


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    r"""Average over ``output_size`` cells that tile the last dimension of (N, C, L).

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, L)` or :math:`(C, L)`.
    output_size : int
        The number of cells.

    Returns
    -------
    Tensor
        :math:`(N, C, \text{output\_size})` (or without :math:`N`).

    Raises
    ------
    ValueError
        If the input is not 2-D or 3-D.
    RuntimeError
        If a pooled dimension of the input is empty (no cells to pool).
    TypeError
        If ``output_size`` is not an int (a float is not rounded).

    See Also
    --------
    adaptive_avg_pool2d, difflab.nn.AdaptiveAvgPool1d

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.functional.adaptive_avg_pool1d(dl.arange(6.0).reshape(1, 1, 6), 3).tolist()
    [[[0.5, 2.5, 4.5]]]
    """
    from difflab.nn.functional_core import _single, adaptive_avg_pool2d

    x = _check_input("adaptive_avg_pool1d", input)
    if x.ndim not in (2, 3):
        raise ValueError(f"adaptive_avg_pool1d expects a 2-D or 3-D input, got "
                         f"{tuple(x.shape)}")
    size = _single("adaptive_avg_pool1d", output_size, "output_size")
    return adaptive_avg_pool2d(x.unsqueeze(-2), (1, size)).squeeze(-2)


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False  # noqa: A002
                        ) -> Tensor:
    r"""The maximum over ``output_size`` cells that tile the last dimension of (N, C, L).

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, L)` or :math:`(C, L)`.
    output_size : int
        The number of cells.
    return_indices : bool, default False
        Also return where each maximum is along L.

    Returns
    -------
    Tensor or (Tensor, Tensor)
        :math:`(N, C, \text{output\_size})` (or without :math:`N`); with
        ``return_indices``, also the int64 indices of the maxima.

    Raises
    ------
    ValueError
        If the input is not 2-D or 3-D.
    RuntimeError
        If a pooled dimension of the input is empty (no cells to pool).
    TypeError
        If ``output_size`` is not an int (a float is not rounded).

    See Also
    --------
    adaptive_max_pool2d, difflab.nn.AdaptiveMaxPool1d

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.functional.adaptive_max_pool1d(dl.arange(6.0).reshape(1, 1, 6), 2).tolist()
    [[[2.0, 5.0]]]
    """
    from difflab.nn.functional_core import _single

    x = _check_input("adaptive_max_pool1d", input)
    if x.ndim not in (2, 3):
        raise ValueError(f"adaptive_max_pool1d expects a 2-D or 3-D input, got "
                         f"{tuple(x.shape)}")
    size = _single("adaptive_max_pool1d", output_size, "output_size")
    out = adaptive_max_pool2d(x.unsqueeze(-2), (1, size), return_indices)
    if return_indices:  # (the positions along L are those along W of the one-row image)
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


def _adaptive_along(x: Tensor, axis: int, size: int, reduce: str) -> Tensor:
    """``size`` adaptive bins along ``axis`` of ``x``, each reduced by ``reduce`` (``"mean"``
    or ``"amax"``), the other axes untouched.

    A box's mean (or max) is the mean (max) along one axis of the means (maxima)
    along the others, and a bin's length along an axis does not depend on the
    other axes: so a 3-D grid is three 1-D poolings, one axis after the other.
    """
    from difflab.functions import cat

    n = x.shape[axis]
    if size == n:
        return x
    if n % size == 0:  # equal bins: one reshape, one reduction
        shape = (*x.shape[:axis], size, n // size, *x.shape[axis + 1:])
        return getattr(x.reshape(shape), reduce)(dim=axis + 1)
    before = (slice(None),) * axis
    return cat([getattr(x[(*before, slice(a, b))], reduce)(dim=axis, keepdim=True)
                for a, b in _bins(n, size)], dim=axis)


def _adaptive_pool3d(name: str, x: Tensor, output_size: Any, reduce: str) -> Tensor:
    if x.ndim not in (4, 5):
        raise ValueError(f"{name} expects a 4-D or 5-D input (N, C, D, H, W) or (C, D, H, W), "
                         f"got shape {tuple(x.shape)}")
    sizes = _adaptive_sizes(name, output_size, tuple(x.shape[-3:]))
    for k, size in enumerate(sizes):
        x = _adaptive_along(x, x.ndim - 3 + k, size, reduce)
    return x


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    r"""Average over a 3-D grid of ``output_size`` cells that tiles the input (PyTorch's bins).

    Cell :math:`i` along a side of length :math:`n` cut into :math:`m` cells covers
    :math:`[\lfloor i n/m \rfloor, \lceil (i+1) n/m \rceil)`, on each of D, H and W.

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, D, H, W)` or :math:`(C, D, H, W)`.
    output_size : int or tuple of 3 (int or None)
        :math:`(D_{out}, H_{out}, W_{out})`; ``None`` for a side keeps the input's
        size there.

    Returns
    -------
    Tensor
        :math:`(N, C, D_{out}, H_{out}, W_{out})` (or without :math:`N`), floating.

    Raises
    ------
    ValueError
        If the input is not 4-D or 5-D, or ``output_size`` is not an int or three
        positive ints (or None).
    RuntimeError
        If a pooled dimension of the input is empty (no cells to pool).

    See Also
    --------
    adaptive_avg_pool2d, difflab.nn.AdaptiveAvgPool3d

    Notes
    -----
    The mean over a box is computed one axis at a time (means of means, exact
    since each bin's length along an axis does not depend on the other axes); the
    gradient spreads each cell's adjoint evenly over its box (over each box, for
    inputs in overlapping boxes).

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.arange(8.0).reshape(1, 1, 2, 2, 2)
    >>> dl.nn.functional.adaptive_avg_pool3d(x, 1).flatten().tolist()
    [3.5]
    >>> dl.nn.functional.adaptive_avg_pool3d(x, (None, 1, 1)).flatten().tolist()
    [1.5, 5.5]
    >>> dl.nn.functional.adaptive_avg_pool3d(dl.randn(2, 3, 5, 7, 9), (2, 3, None)).shape
    difflab.Size([2, 3, 2, 3, 9])
    """
    x = _floating(_check_input("adaptive_avg_pool3d", input))
    return _adaptive_pool3d("adaptive_avg_pool3d", x, output_size, "mean")


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False  # noqa: A002
                        ) -> Tensor:
    r"""The maximum over each cell of a 3-D grid of ``output_size`` that tiles the input.

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, D, H, W)` or :math:`(C, D, H, W)`.
    output_size : int or tuple of 3 (int or None)
        :math:`(D_{out}, H_{out}, W_{out})`; ``None`` for a side keeps the input's
        size there.
    return_indices : bool, default False
        Also return where each maximum is, :math:`(d H + h) W + w`.

    Returns
    -------
    Tensor or (Tensor, Tensor)
        :math:`(N, C, D_{out}, H_{out}, W_{out})` (or without :math:`N`); with
        ``return_indices``, also the int64 indices of the maxima.

    Raises
    ------
    ValueError
        If the input is not 4-D or 5-D, or ``output_size`` is not an int or three
        positive ints (or None).
    RuntimeError
        If a pooled dimension of the input is empty (no cells to pool).

    See Also
    --------
    adaptive_max_pool2d, difflab.nn.AdaptiveMaxPool3d

    Notes
    -----
    Computed one axis at a time (the maximum over a box is the maximum of the
    maxima along each axis); the gradient goes to each box's maximum.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.arange(8.0).reshape(1, 1, 2, 2, 2)
    >>> dl.nn.functional.adaptive_max_pool3d(x, (1, 1, None)).flatten().tolist()
    [6.0, 7.0]
    """
    x = _check_input("adaptive_max_pool3d", input)
    out = _adaptive_pool3d("adaptive_max_pool3d", x, output_size, "amax")
    if not return_indices:
        return out
    batched = x if x.ndim == 5 else x.unsqueeze(0)
    indices = _adaptive_max_indices(batched, tuple(out.shape[-3:]))
    return out, (indices if x.ndim == 5 else indices.squeeze(0))


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any,  # noqa: A002
                                     return_indices: bool = True) -> tuple:
    """:func:`adaptive_max_pool1d` with ``return_indices=True``: (the maxima, their indices).

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, L)` or :math:`(C, L)`.
    output_size : int
        The number of cells.
    return_indices : bool, default True
        PyTorch's argument; the indices are always returned.

    Returns
    -------
    (Tensor, Tensor)
        The maxima and their int64 positions along L.

    Raises
    ------
    ValueError
        As :func:`adaptive_max_pool1d`.

    See Also
    --------
    adaptive_max_pool1d, difflab.nn.functional.max_unpool1d

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([[[1.0, 5.0, 2.0, 0.0, 3.0]]])
    >>> y, i = dl.nn.functional.adaptive_max_pool1d_with_indices(x, 2)
    >>> y.tolist(), i.tolist()
    ([[[5.0, 3.0]]], [[[1, 4]]])
    """
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any,  # noqa: A002
                                     return_indices: bool = True) -> tuple:
    """:func:`adaptive_max_pool2d` with ``return_indices=True``: (the maxima, their indices).

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, H, W)` or :math:`(C, H, W)`.
    output_size : int or tuple of 2 (int or None)
        The grid.
    return_indices : bool, default True
        PyTorch's argument; the indices are always returned.

    Returns
    -------
    (Tensor, Tensor)
        The maxima and their int64 indices :math:`h W + w`.

    Raises
    ------
    ValueError
        As :func:`adaptive_max_pool2d`.

    See Also
    --------
    adaptive_max_pool2d, difflab.nn.functional.max_unpool2d

    Examples
    --------
    >>> import difflab as dl
    >>> y, i = dl.nn.functional.adaptive_max_pool2d_with_indices(dl.arange(9.0).reshape(1, 3, 3), 2)
    >>> y.tolist(), i.tolist()
    ([[[4.0, 5.0], [7.0, 8.0]]], [[[4, 5], [7, 8]]])
    """
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any,  # noqa: A002
                                     return_indices: bool = True) -> tuple:
    """:func:`adaptive_max_pool3d` with ``return_indices=True``: (the maxima, their indices).

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, D, H, W)` or :math:`(C, D, H, W)`.
    output_size : int or tuple of 3 (int or None)
        The grid.
    return_indices : bool, default True
        PyTorch's argument; the indices are always returned.

    Returns
    -------
    (Tensor, Tensor)
        The maxima and their int64 indices :math:`(d H + h) W + w`.

    Raises
    ------
    ValueError
        As :func:`adaptive_max_pool3d`.

    See Also
    --------
    adaptive_max_pool3d, difflab.nn.functional.max_unpool3d

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.arange(8.0).reshape(1, 1, 2, 2, 2)
    >>> y, i = dl.nn.functional.adaptive_max_pool3d_with_indices(x, 1)
    >>> y.flatten().tolist(), i.flatten().tolist()
    ([7.0], [7])
    """
    return adaptive_max_pool3d(input, output_size, True)


# ------------------------------------------------------------------------ embedding bags


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,  # noqa: A002
                  max_norm: float | None = None, norm_type: float = 2, scale_grad_by_freq:
                  bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    r"""The sum, mean or max of each bag of embeddings, without forming the bags' rows apart.

    ``input`` is (B, L) (B bags of L indices) or 1-D with ``offsets`` giving
    where each bag starts.  ``per_sample_weights`` (``mode='sum'`` only)
    weighs each index.  Empty bags give zeros.

    Parameters
    ----------
    input : Tensor
        Integer indices: :math:`(B, L)`, or 1-D with ``offsets``.
    weight : Tensor
        The table, :math:`(\text{num\_embeddings}, \text{dim})`.
    offsets : Tensor, optional
        Where each bag of a 1-D input starts (from 0, not decreasing).
    max_norm, norm_type, scale_grad_by_freq, sparse
        PyTorch options that are not supported (leave the defaults).
    mode : {'sum', 'mean', 'max'}, default 'mean'
        How a bag's rows are reduced.
    per_sample_weights : Tensor, optional
        A weight per index (``mode='sum'`` only).
    include_last_offset : bool, default False
        ``offsets`` ends with the total length (B + 1 entries).
    padding_idx : int, optional
        A row that is left out of the bags.

    Returns
    -------
    Tensor
        :math:`(B, \text{dim})`; an empty bag gives zeros.

    Raises
    ------
    ValueError
        For another mode, a 2-D input with offsets, a 1-D input without, or bad offsets.
    NotImplementedError
        For the unsupported options, or per-sample weights outside ``mode='sum'``.

    See Also
    --------
    embedding, difflab.nn.EmbeddingBag

    Examples
    --------
    >>> import difflab as dl
    >>> table = dl.arange(6.0).reshape(3, 2)          # rows [0, 1], [2, 3], [4, 5]
    >>> bags = dl.tensor([0, 2, 1])
    >>> dl.nn.functional.embedding_bag(bags, table, dl.tensor([0, 2]), mode="sum").tolist()
    [[4.0, 6.0], [2.0, 3.0]]
    """
    from difflab.creation import zeros
    from difflab.functions import stack

    _check_bag_options(mode, per_sample_weights, max_norm is not None or scale_grad_by_freq
                       or sparse)
    idx = input if isinstance(input, Tensor) else Tensor._wrap(np.asarray(input))
    rows = embedding(idx, weight, padding_idx)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(-1)
    keep = None if padding_idx is None else Tensor._wrap(
        (idx.array != padding_idx).astype(rows.dtype.dtype if hasattr(rows.dtype, "dtype")
                                          else rows.dtype)).unsqueeze(-1)

    def reduce(bag: Tensor, present: Tensor | None) -> Tensor:
        if bag.shape[0] == 0:
            return zeros(weight.shape[1], dtype=weight.dtype, device=weight.device)
        if mode == "sum":
            return bag.sum(0)
        if mode == "mean":
            if present is None:
                return bag.mean(0)
            return bag.sum(0) / present.sum(0).clamp(min=1.0)
        return bag.amax(dim=0)

    if idx.ndim == 2:
        if offsets is not None:
            raise ValueError("embedding_bag: offsets has to be None if input is 2D")
        if mode == "sum":
            return rows.sum(1)
        if mode == "mean":
            return rows.mean(1) if keep is None else rows.sum(1) / keep.sum(1).clamp(min=1.0)
        return rows.amax(dim=1)
    if idx.ndim != 1 or offsets is None:
        raise ValueError("embedding_bag: input must be 2-D (B, L), or 1-D with offsets")
    bounds = _bag_bounds(offsets, idx.shape[0], include_last_offset)
    bags = [reduce(rows[a:b], None if keep is None else keep[a:b]) for a, b in bounds]
    return stack(bags, 0)


def _check_bag_options(mode: str, per_sample_weights: Tensor | None, unsupported: bool
                       ) -> None:
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"embedding_bag: mode must be 'sum', 'mean' or 'max', got {mode!r}")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. "
                                  "per_sample_weights is only supported for mode='sum'")
    if unsupported:
        raise NotImplementedError("embedding_bag: max_norm, scale_grad_by_freq and sparse are "
                                  "not supported in difflab")


def _bag_bounds(offsets: Any, n: int, include_last_offset: bool) -> list[tuple[int, int]]:
    """(start, end) of each bag of a 1-D input of ``n`` indices, from PyTorch's ``offsets``."""
    starts = [int(v) for v in (offsets.array if isinstance(offsets, Tensor) else offsets)]
    ends = starts[1:] + ([] if include_last_offset else [n])
    if include_last_offset:
        starts = starts[:-1]
    if any(a > b for a, b in zip(starts, ends)) or (starts and starts[0] != 0):
        raise ValueError(f"embedding_bag: offsets must start at 0 and not decrease, got "
                         f"{starts}")
    return list(zip(starts, ends))
