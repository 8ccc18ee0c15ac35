r"""More loss functions of ``torch.nn.functional``, each a composite of tensor operations.

Every loss takes ``reduction`` ('mean', 'sum' or 'none') as PyTorch does, and
the gradient is the chain of the operations' rules.  Logarithms of
probabilities are written stably (softplus for log(1 + e^z), a clamped log
where a target may be zero).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from difflab.nn.functional_activations import softplus
from difflab.nn.functional_core import (
    _REDUCTIONS,
    _array_module,
    _check_input,
    _check_same_shape,
    _check_tensor,
    _constant_dtype,
    _legacy_reduction,
    _reduce,
)
from difflab.tensor import Tensor

__all__ = ["cosine_embedding_loss", "ctc_loss", "gaussian_nll_loss", "hinge_embedding_loss",
           "huber_loss", "smooth_l1_loss",
           "kl_div", "margin_ranking_loss", "multi_margin_loss", "multilabel_margin_loss",
           "multilabel_soft_margin_loss", "poisson_nll_loss", "soft_margin_loss",
           "triplet_margin_loss", "triplet_margin_with_distance_loss"]


def _where(condition: Any, a: Any, b: Any) -> Tensor:
    from difflab.functions import where

    return where(condition, a, b)


def _reduction(name: str, reduction: str, size_average: Any = None, reduce: Any = None) -> str:
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{name}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    return reduction


def _same_shape(name: str, *tensors: Tensor) -> None:
    shapes = {tuple(t.shape) for t in tensors}
    if len(shapes) != 1:
        raise ValueError(f"{name}: the inputs must have the same shape, got "
                         f"{[tuple(t.shape) for t in tensors]}")


def kl_div(input: Tensor, target: Tensor, size_average: Any = None,  # noqa: A002
           reduce: Any = None, reduction: str = "mean", log_target: bool = False) -> Tensor:
    r"""Kullback-Leibler divergence KL(target ‖ exp(input)) from log-probabilities ``input``.

    Pointwise ℓ = y (log y - x), with 0 where y = 0 (or, with ``log_target``,
    e^y (y - x)).  ``reduction='batchmean'`` divides the sum by the batch
    size, which is the true KL divergence ('mean' divides by every element,
    as PyTorch's default does).

    Parameters
    ----------
    input : Tensor
        Log-probabilities (e.g. ``log_softmax``).
    target : Tensor
        Probabilities (or log-probabilities with ``log_target=True``).
    reduction : {'mean', 'batchmean', 'sum', 'none'}
    log_target : bool

    Returns
    -------
    Tensor

    See Also
    --------
    difflab.nn.KLDivLoss, cross_entropy

    Notes
    -----
    .. math::
        \ell_i = y_i (\log y_i - x_i)
        \quad (\text{or } e^{y_i} (y_i - x_i) \text{ with log\_target})

    Examples
    --------
    >>> import difflab as dl
    >>> p = dl.tensor([[0.5, 0.5]])
    >>> q = dl.tensor([[0.25, 0.75]])
    >>> round(dl.nn.functional.kl_div(q.log(), p, reduction="batchmean").item(), 4)
    0.1438
    """
    x, y = _check_input("kl_div", input), _check_input("kl_div", target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if log_target:
        pointwise = y.exp() * (y - x)
    else:
        pointwise = y * y.clamp(min=1e-45).log() - y * x  # (y log y is 0 at y = 0)
    if reduction == "batchmean":
        return pointwise.sum() / (x.shape[0] if x.ndim else 1)
    return _reduce(pointwise, _reduction("kl_div", reduction), "kl_div")


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    r"""max(0, -y (x₁ - x₂) + margin): y = 1 asks for x₁ to rank above x₂, y = -1 below.

    Parameters
    ----------
    input1, input2 : Tensor
        The scores :math:`x_1, x_2`.
    target : Tensor
        :math:`y = \pm 1`, the same shape.
    margin : float, default 0.0
        The gap asked for.
    size_average, reduce : optional
        PyTorch's deprecated flags; they set ``reduction`` when given.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return them one per element (sample).

    Returns
    -------
    Tensor
        A scalar, or the input's shape with ``'none'``.

    Raises
    ------
    ValueError
        If the three tensors differ in shape, or ``reduction`` is unknown.

    See Also
    --------
    difflab.nn.MarginRankingLoss

    Examples
    --------
    >>> import difflab as dl
    >>> F = dl.nn.functional
    >>> F.margin_ranking_loss(dl.tensor([1.0, 1.0]), dl.tensor([0.0, 0.0]),
    ...                       dl.tensor([1.0, -1.0]), reduction="none").tolist()
    [0.0, 1.0]
    """
    reduction = _reduction("margin_ranking_loss", reduction, size_average, reduce)
    _same_shape("margin_ranking_loss", input1, input2, target)
    return _reduce((-target * (input1 - input2) + margin).relu(), reduction,
                   "margin_ranking_loss")


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,  # noqa: A002
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    r"""x where y = 1, max(0, margin - x) where y = -1 (x: a distance, y: similar or not).

    Parameters
    ----------
    input : Tensor
        :math:`x`, distances.
    target : Tensor
        :math:`y = \pm 1`, the same shape.
    margin : float, default 1.0
        The margin for dissimilar pairs.
    size_average, reduce : optional
        PyTorch's deprecated flags; they set ``reduction`` when given.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return them one per element (sample).

    Returns
    -------
    Tensor
        A scalar, or the input's shape with ``'none'``.

    Raises
    ------
    ValueError
        If the input and target differ in shape, or ``reduction`` is unknown.

    See Also
    --------
    cosine_embedding_loss, difflab.nn.HingeEmbeddingLoss

    Examples
    --------
    >>> import difflab as dl
    >>> F = dl.nn.functional
    >>> F.hinge_embedding_loss(dl.tensor([0.3, 0.3]), dl.tensor([1.0, -1.0]),
    ...                        reduction="none").tolist()
    [0.30000001192092896, 0.699999988079071]
    """
    reduction = _reduction("hinge_embedding_loss", reduction, size_average, reduce)
    _same_shape("hinge_embedding_loss", input, target)
    # (comparisons of tensors, not of raw arrays: a traced loss compares each run's targets)
    losses = (_where(target == 1, input, 0.0)
              + _where(target == -1, (margin - input).relu(), 0.0))
    return _reduce(losses, reduction, "hinge_embedding_loss")


def soft_margin_loss(input: Tensor, target: Tensor, size_average: Any = None,  # noqa: A002
                     reduce: Any = None, reduction: str = "mean") -> Tensor:
    r"""log(1 + e^{-y x}) for labels y = ±1 (the logistic loss), computed as softplus(-y x).

    Parameters
    ----------
    input : Tensor
        :math:`x`, scores.
    target : Tensor
        :math:`y = \pm 1`, the same shape.
    size_average, reduce : optional
        PyTorch's deprecated flags; they set ``reduction`` when given.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return them one per element (sample).

    Returns
    -------
    Tensor
        A scalar, or the input's shape with ``'none'``.

    Raises
    ------
    ValueError
        If the input and target differ in shape, or ``reduction`` is unknown.

    See Also
    --------
    binary_cross_entropy_with_logits, difflab.nn.SoftMarginLoss

    Examples
    --------
    >>> import difflab as dl
    >>> round(dl.nn.functional.soft_margin_loss(dl.tensor([0.0]), dl.tensor([1.0])).item(), 4)
    0.6931
    """
    reduction = _reduction("soft_margin_loss", reduction, size_average, reduce)
    _same_shape("soft_margin_loss", input, target)
    return _reduce(softplus(-target * input, 1.0, float("inf")), reduction, "soft_margin_loss")


def multilabel_soft_margin_loss(input: Tensor, target: Tensor,  # noqa: A002
                                weight: Tensor | None = None, size_average: Any = None,
                                reduce: Any = None, reduction: str = "mean") -> Tensor:
    """Binary cross-entropy of σ(x) for each of C labels, averaged over the labels.

    ℓ = -(1/C) Σ_c [y_c log σ(x_c) + (1 - y_c) log σ(-x_c)], one per sample.

    Parameters
    ----------
    input : Tensor
        :math:`(N, C)` logits.
    target : Tensor
        :math:`(N, C)`, 0 or 1 per label.
    weight : Tensor, optional
        :math:`(C,)`, a weight per label.
    size_average, reduce : optional
        PyTorch's deprecated flags; they set ``reduction`` when given.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return them one per element (sample).

    Returns
    -------
    Tensor
        A scalar, or :math:`(N,)` with ``'none'``.

    Raises
    ------
    ValueError
        If the input and target differ in shape, or ``reduction`` is unknown.

    See Also
    --------
    binary_cross_entropy_with_logits, difflab.nn.MultiLabelSoftMarginLoss

    Examples
    --------
    >>> import difflab as dl
    >>> F = dl.nn.functional
    >>> round(F.multilabel_soft_margin_loss(dl.zeros(1, 3), dl.tensor([[1.0, 0.0, 1.0]])
    ...       ).item(), 4)
    0.6931
    """
    reduction = _reduction("multilabel_soft_margin_loss", reduction, size_average, reduce)
    _same_shape("multilabel_soft_margin_loss", input, target)
    inf = float("inf")
    losses = target * softplus(-input, 1.0, inf) + (1.0 - target) * softplus(input, 1.0, inf)
    if weight is not None:
        losses = losses * weight
    return _reduce(losses.mean(-1), reduction, "multilabel_soft_margin_loss")


def _cosine(x1: Tensor, x2: Tensor, eps: float = 1e-12) -> Tensor:
    """Cosine of the angle between the rows (last dimension), as PyTorch's embedding loss
    computes it: x₁·x₂ / √((|x₁|² + ε)(|x₂|² + ε))."""
    return (x1 * x2).sum(-1) / (((x1 * x1).sum(-1) + eps) * ((x2 * x2).sum(-1) + eps)).sqrt()


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor,
                          margin: float = 0.0, size_average: Any = None, reduce: Any = None,
                          reduction: str = "mean") -> Tensor:
    r"""1 - cos(x₁, x₂) where y = 1, max(0, cos(x₁, x₂) - margin) where y = -1.

    Parameters
    ----------
    input1, input2 : Tensor
        :math:`(N, D)` or :math:`(D,)`.
    target : Tensor
        :math:`y = \pm 1`, :math:`(N,)` or 0-d.
    margin : float, default 0.0
        For dissimilar pairs, in :math:`[-1, 1]`.
    size_average, reduce : optional
        PyTorch's deprecated flags; they set ``reduction`` when given.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return them one per element (sample).

    Returns
    -------
    Tensor
        A scalar, or :math:`(N,)` with ``'none'``.

    Raises
    ------
    ValueError
        If the two inputs differ in shape, or ``reduction`` is unknown.

    See Also
    --------
    cosine_similarity, difflab.nn.CosineEmbeddingLoss

    Examples
    --------
    >>> import difflab as dl
    >>> F = dl.nn.functional
    >>> x = dl.tensor([[1.0, 0.0], [1.0, 0.0]])
    >>> F.cosine_embedding_loss(x, dl.tensor([[0.0, 1.0], [1.0, 0.0]]),
    ...                         dl.tensor([1.0, -1.0]), reduction="none").tolist()
    [1.0, 1.0]
    """
    reduction = _reduction("cosine_embedding_loss", reduction, size_average, reduce)
    _same_shape("cosine_embedding_loss", input1, input2)
    cos = _cosine(input1, input2)
    losses = (_where(target == 1, 1.0 - cos, 0.0)
              + _where(target == -1, (cos - margin).relu(), 0.0))
    return _reduce(losses, reduction, "cosine_embedding_loss")


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                        swap: bool = False, size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    r"""The triplet loss: pull the positive close to the anchor, push the negative a margin further.

    Per sample, :math:`\max(d(a, p) - d(a, n) + \text{margin}, 0)`, with :math:`d` the
    p-norm distance; ``swap`` uses :math:`\min(d(a, n), d(p, n))` as the negative's
    distance (the harder of the two).

    Parameters
    ----------
    anchor, positive, negative : Tensor
        :math:`(N, D)` or :math:`(D,)`.
    margin : float, default 1.0
        How much farther the negative must be.
    p : float, default 2.0
        The norm of the distance.
    eps : float, default 1e-6
        Added to the differences (PyTorch's ``pairwise_distance``).
    swap : bool, default False
        Use :math:`\min(d(a, n), d(p, n))` as the negative's distance.
    size_average, reduce : optional
        PyTorch's deprecated flags; they set ``reduction`` when given.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return them one per element (sample).

    Returns
    -------
    Tensor
        A scalar, or :math:`(N,)` with ``'none'``.

    Raises
    ------
    ValueError
        If the three inputs differ in shape, or ``reduction`` is unknown.

    See Also
    --------
    difflab.nn.functional.pairwise_distance : the distance :math:`d` used here.
    difflab.nn.TripletMarginLoss : the module form.

    Notes
    -----
    .. math::
        \ell_i = \max\bigl(\|a_i - p_i + \epsilon\|_p - \|a_i - n_i + \epsilon\|_p
            + \text{margin},\; 0\bigr)

    A triplet already a margin apart gives 0 and no gradient; otherwise the anchor's
    gradient is :math:`\partial\ell/\partial a = u(a - p) - u(a - n)`, with
    :math:`u(v) = \nabla\|v\|_p` (the unit vector :math:`v/\|v\|_2` for :math:`p = 2`).

    Examples
    --------
    >>> import difflab as dl
    >>> F = dl.nn.functional
    >>> a = dl.tensor([[0.0, 0.0]], requires_grad=True)
    >>> pos, neg = dl.tensor([[3.0, 4.0]]), dl.tensor([[0.0, 1.0]])
    >>> loss = F.triplet_margin_loss(a, pos, neg, margin=1.0)
    >>> round(loss.item(), 4)                                 # 5 - 1 + 1
    5.0
    >>> loss.backward()
    >>> [round(g, 4) for g in a.grad[0].tolist()]    # towards the positive, off the negative
    [-0.6, 0.2]
    >>> F.triplet_margin_loss(a, pos, dl.tensor([[0.0, 10.0]])).item()   # a margin apart
    0.0
    """
    from difflab.nn.functional_layers import pairwise_distance

    reduction = _reduction("triplet_margin_loss", reduction, size_average, reduce)
    _same_shape("triplet_margin_loss", anchor, positive, negative)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_swap = pairwise_distance(positive, negative, p, eps)
        d_neg = _where(d_swap < d_neg, d_swap, d_neg)
    return _reduce((d_pos - d_neg + margin).relu(), reduction, "triplet_margin_loss")


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float,  # noqa: A002
                      full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    r"""The negative log-likelihood of ``target`` under N(input, var).

    ℓ = ½ (log max(var, ε) + (x - y)² / max(var, ε)) (+ ½ log 2π with ``full``).
    ``var`` has the input's shape, or one dimension fewer / a last dimension
    of 1 (one variance per sample), or is a number.  As in PyTorch, the clamp
    at ε changes the value only: the gradient flows to ``var`` as if unclamped.

    Parameters
    ----------
    input : Tensor
        The predicted mean :math:`x`.
    target : Tensor
        :math:`y`, the input's shape.
    var : Tensor or float
        The predicted variance: the input's shape, one dimension fewer or a last
        dimension of 1 (one variance per sample), or a number; non-negative.
    full : bool, default False
        Add the constant :math:`\tfrac12\log 2\pi`.
    eps : float, default 1e-6
        The smallest variance used.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        How the losses are combined.

    Returns
    -------
    Tensor
        A scalar, or the input's shape with ``'none'``.

    Raises
    ------
    ValueError
        If ``var``'s shape does not fit, it has a negative entry, or ``reduction`` is unknown.

    See Also
    --------
    mse_loss, difflab.nn.GaussianNLLLoss

    Examples
    --------
    >>> import difflab as dl
    >>> F = dl.nn.functional
    >>> round(F.gaussian_nll_loss(dl.tensor([1.0]), dl.tensor([3.0]), dl.tensor([4.0])).item(), 4)
    1.1931
    """
    if reduction not in _REDUCTIONS:
        raise ValueError(f"gaussian_nll_loss: reduction must be one of {_REDUCTIONS}, got "
                         f"{reduction!r}")
    if not isinstance(var, Tensor):
        var = Tensor._wrap(input.array * 0 + float(var))
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1):
            raise ValueError(f"gaussian_nll_loss: var of shape {tuple(var.shape)} does not fit "
                             f"the input's {tuple(input.shape)}")
    if bool((var < 0).any()):  # (a check of values: a trace warns that it reads them)
        raise ValueError("gaussian_nll_loss: var has negative entry/entries")
    clamped = var + (var.clamp(min=eps) - var).detach()  # value clamped, gradient straight
    losses = 0.5 * (clamped.log() + (input - target) ** 2 / clamped)
    if full:
        losses = losses + 0.5 * math.log(2 * math.pi)
    return _reduce(losses, reduction, "gaussian_nll_loss")


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True,  # noqa: A002
                     full: bool = False, size_average: Any = None, eps: float = 1e-8,
                     reduce: Any = None, reduction: str = "mean") -> Tensor:
    r"""The negative log-likelihood of counts ``target`` under Poisson(λ).

    With ``log_input`` (λ = eˣ): ℓ = eˣ - y x; otherwise ℓ = x - y log(x + ε).
    ``full`` adds Stirling's approximation of log y! (for y > 1).

    Parameters
    ----------
    input : Tensor
        :math:`x`: :math:`\log\lambda` (``log_input``) or :math:`\lambda`.
    target : Tensor
        Counts :math:`y`, the same shape.
    log_input : bool, default True
        Whether the input is the log-rate.
    full : bool, default False
        Add Stirling's approximation of :math:`\log y!` (for :math:`y > 1`).
    eps : float, default 1e-8
        Keeps :math:`\log(x + \epsilon)` finite without ``log_input``.
    size_average, reduce : optional
        PyTorch's deprecated flags; they set ``reduction`` when given.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return them one per element (sample).

    Returns
    -------
    Tensor
        A scalar, or the input's shape with ``'none'``.

    Raises
    ------
    ValueError
        If the input and target differ in shape, or ``reduction`` is unknown.

    See Also
    --------
    difflab.nn.PoissonNLLLoss

    Examples
    --------
    >>> import difflab as dl
    >>> F = dl.nn.functional
    >>> round(F.poisson_nll_loss(dl.tensor([0.0]), dl.tensor([2.0])).item(), 4)   # e⁰ - 0
    1.0
    """
    reduction = _reduction("poisson_nll_loss", reduction, size_average, reduce)
    _same_shape("poisson_nll_loss", input, target)
    if log_input:
        losses = input.exp() - target * input
    else:
        losses = input - target * (input + eps).log()
    if full:
        # Stirling's term for log(y!), where y > 1 (PyTorch's; of each run's targets when traced)
        safe = target.clamp(min=1.0)
        stirling = target * safe.log() - target + 0.5 * (2 * math.pi * safe).log()
        losses = losses + _where(target > 1, stirling, 0.0)
    return _reduce(losses, reduction, "poisson_nll_loss")


#: A log-probability that stands for log 0 in the CTC recursion (finite: no NaN gradients).
_LOG_ZERO = -1e30


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    r"""The connectionist temporal classification loss (CTC; Graves et al., 2006).

    Minus the log of the probability of ``targets``, summed over every alignment of it
    to the T frames (an alignment repeats labels and puts blanks between them; collapsing
    repeats and removing blanks gives the target).  It trains a sequence model (speech,
    handwriting) without frame-level labels.

    The forward recursion over the target with blanks between the labels
    (l' = blank, l₁, blank, l₂, ..., blank):

    .. math::
        \alpha_t(s) = \log p_t(l'_s) + \operatorname{logsumexp}\bigl(\alpha_{t-1}(s),
            \alpha_{t-1}(s-1), \alpha_{t-1}(s-2)\bigr)

    (the s - 2 term only between different labels), and the loss is
    -logsumexp of the last two positions at the last frame.  One loop over the
    frames, vectorised over the batch and the positions; the gradient is the
    chain of logsumexp's rules (the forward-backward algorithm, derived by the tape).

    Parameters
    ----------
    log_probs : Tensor
        :math:`(T, N, C)` log-probabilities (``log_softmax`` over :math:`C`), or
        :math:`(T, C)` unbatched.
    targets : Tensor
        :math:`(N, S)` padded label sequences, or 1-D: the sequences concatenated.
        Labels are in :math:`[0, C)`.
    input_lengths, target_lengths : Tensor or sequence of int
        :math:`(N,)`: the frames (in :math:`[1, T]`) and labels used per sample.
    blank : int, default 0
        The blank class.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        ``'mean'`` divides each loss by its target length, then averages (PyTorch);
        ``'none'`` gives one loss per sample.
    zero_infinity : bool, default False
        Impossible alignments (a target longer than its frames allow) give 0
        and no gradient instead of inf.

    Returns
    -------
    Tensor
        A scalar, or :math:`(N,)` with ``'none'`` (a scalar for an unbatched input).

    Raises
    ------
    ValueError
        For an unknown ``reduction``, ``log_probs`` that is not 2-D or 3-D, lengths
        without one entry per sample or out of range, targets that do not fit the
        target lengths, or labels outside :math:`[0, C)`.

    See Also
    --------
    difflab.nn.functional.nll_loss : the loss when each frame has its own label.
    difflab.nn.functional.log_softmax : gives ``log_probs``.
    difflab.nn.CTCLoss : the module form.

    Examples
    --------
    >>> import difflab as dl
    >>> uniform = dl.full((2, 1, 2), 0.5).log()           # 2 frames, classes {blank, a}
    >>> loss = dl.nn.functional.ctc_loss(uniform, dl.tensor([[1]]), [2], [1],
    ...                                  reduction="sum")
    >>> round(loss.exp().item() ** -1, 4)                 # "a": aa, a-, -a: 3 of 4 paths
    0.75

    The gradient with respect to ``log_probs`` is minus each label's posterior
    occupancy (frame 0: ``a`` in 2 of the 3 paths):

    >>> lp = dl.full((2, 1, 2), 0.5).log().requires_grad_()
    >>> dl.nn.functional.ctc_loss(lp, dl.tensor([[1]]), [2], [1]).backward()
    >>> [round(g, 4) for g in lp.grad[0, 0].tolist()]
    [-0.3333, -0.6667]

    Three labels cannot fit in two frames:

    >>> dl.nn.functional.ctc_loss(uniform, dl.tensor([[1, 1, 1]]), [2], [3], reduction="sum")
    tensor(inf)
    >>> dl.nn.functional.ctc_loss(uniform, dl.tensor([[1, 1, 1]]), [2], [3], reduction="sum",
    ...                           zero_infinity=True)
    tensor(0.)
    """
    from difflab.functions import gather, logsumexp, stack, where

    lp = _check_input("ctc_loss", log_probs)  # (dual numbers, symbols: gather, logsumexp)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"ctc_loss: reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    unbatched = lp.ndim == 2
    if unbatched:
        lp = lp.unsqueeze(1)
    if lp.ndim != 3:
        raise ValueError(f"ctc_loss: log_probs must be (T, N, C), got {tuple(lp.shape)}")
    frames, n, classes = lp.shape
    xp, dtype = _array_module(lp), _constant_dtype(lp)
    in_len, tg_len, tg = _ctc_lengths_and_targets(input_lengths, target_lengths, targets,
                                                  lp.shape, blank, unbatched)
    length = 2 * tg.shape[1] + 1
    extended = np.full((n, length), blank, dtype=np.int64)
    extended[:, 1::2] = tg
    skip = np.zeros((n, length), dtype=bool)  # may jump from s - 2 (different labels)
    skip[:, 3::2] = tg[:, 1:] != tg[:, :-1]
    index = xp.asarray(np.broadcast_to(extended, (frames, n, length)).copy())
    emissions = gather(lp, 2, Tensor._wrap(index))  # (T, N, L): log p_t(l'_s)
    log_zero = Tensor._wrap(xp.full((n, 1), _LOG_ZERO, dtype=dtype))
    start = np.full((n, length), _LOG_ZERO)
    start[:, :2] = 0.0
    alpha = emissions[0] + Tensor._wrap(xp.asarray(start.astype(dtype)))
    skip_x = xp.asarray(skip)
    for t in range(1, frames):
        from_left = _shift(alpha, 1, log_zero)
        from_skip = where(skip_x, _shift(alpha, 2, log_zero), _LOG_ZERO)
        new = logsumexp(stack([alpha, from_left, from_skip], 0), 0) + emissions[t]
        running = xp.asarray((t < in_len)[:, None])
        alpha = where(running, new, alpha)  # samples whose frames ended keep their alpha
    last = xp.asarray(2 * tg_len)[:, None]
    ends = stack([gather(alpha, 1, Tensor._wrap(last)),
                  gather(alpha, 1, Tensor._wrap(xp.maximum(last - 1, 0)))], 0)
    ends = where(xp.asarray(np.stack([np.ones(n, bool), tg_len > 0])[:, :, None]), ends,
                 _LOG_ZERO)
    losses = -logsumexp(ends, 0).reshape(n)
    # (no branch on the values: a traced loss decides impossibility again at every run)
    impossible = losses > -_LOG_ZERO / 2
    losses = where(impossible, 0.0 if zero_infinity else float("inf"), losses)
    if reduction == "mean":
        divisor = Tensor._wrap(xp.asarray(np.maximum(tg_len, 1).astype(dtype)))
        return (losses / divisor).mean()
    if reduction == "sum":
        return losses.sum()
    return losses[0] if unbatched else losses


def _ctc_lengths_and_targets(input_lengths: Any, target_lengths: Any, targets: Any,
                             shape: tuple, blank: int, unbatched: bool) -> tuple:
    """ctc_loss's lengths as int arrays (N,) and its targets as (N, S) padded with blanks,
    after checking they fit the (T, N, C) log-probabilities."""
    frames, n, classes = shape
    in_len = np.asarray(_as_ints(input_lengths), dtype=np.int64).reshape(-1)
    tg_len = np.asarray(_as_ints(target_lengths), dtype=np.int64).reshape(-1)
    tg = np.asarray(_as_ints(targets), dtype=np.int64)
    if unbatched and tg.ndim == 1 and tg_len.size == 1 and tg.size == tg_len[0]:
        tg = tg.reshape(1, -1)
    if in_len.size != n or tg_len.size != n:
        raise ValueError(f"ctc_loss: input_lengths and target_lengths need one entry per "
                         f"sample ({n}), got {in_len.size} and {tg_len.size}")
    if (in_len > frames).any() or (in_len < 1).any():
        raise ValueError(f"ctc_loss: input_lengths must be in [1, {frames}], got "
                         f"{in_len.tolist()}")
    if tg.ndim == 1:  # concatenated targets
        if tg.size != tg_len.sum():
            raise ValueError(f"ctc_loss: 1-D targets hold {tg.size} labels, target_lengths "
                             f"sum to {int(tg_len.sum())}")
        starts = np.concatenate([[0], np.cumsum(tg_len)[:-1]])
        padded = np.full((n, max(int(tg_len.max()), 1)), blank, dtype=np.int64)
        for i, (a, k) in enumerate(zip(starts, tg_len)):
            padded[i, :k] = tg[a:a + k]
        tg = padded
    if tg.shape[0] != n or (tg_len > tg.shape[1]).any():
        raise ValueError(f"ctc_loss: targets {tg.shape} do not fit target_lengths "
                         f"{tg_len.tolist()}")
    if tg.size and ((tg < 0).any() or (tg >= classes).any()):
        raise ValueError(f"ctc_loss: target labels must be in [0, {classes})")
    return in_len, tg_len, tg


def _shift(alpha: Tensor, k: int, log_zero: Tensor) -> Tensor:
    """alpha moved k positions right along dimension 1, log 0 filling the start."""
    from difflab.functions import cat

    fill = cat([log_zero] * k, 1) if k > 1 else log_zero
    return cat([fill, alpha[:, :-k]], 1)


def _as_ints(values: Any) -> Any:
    if isinstance(values, Tensor):
        from difflab.backend import to_numpy

        values._value_read("ctc_loss reading targets or lengths into NumPy")  # (tracing warns)
        return to_numpy(values.array)
    return values


# -------------------------------------------------------------------- robust regression


def _robust_loss(name: str, input: Tensor, target: Tensor, threshold: float,  # noqa: A002
                 quadratic_scale: float, linear_scale: float, reduction: str) -> Tensor:
    """½ s_q·d² where |d| < threshold, s_l·(|d| - ½·threshold) elsewhere (d = x - y)."""
    from difflab.functions import where

    _check_same_shape(name, input, target)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{name}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    d = input - target
    if threshold == 0.0:  # smooth_l1 with beta 0 is the L1 loss
        return _reduce(d.abs(), reduction, name)
    a = d.abs()
    inside = a < threshold  # (a tensor: a traced graph compares each input's values)
    losses = where(inside, (0.5 * quadratic_scale) * d * d, linear_scale * (a - 0.5 * threshold))
    return _reduce(losses, reduction, name)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: Any = None,  # noqa: A002
                   reduce: Any = None, reduction: str = "mean", beta: float = 1.0) -> Tensor:
    r"""Quadratic for small errors, absolute for large: PyTorch's smooth L1 loss.

    With d = x - y::

        ℓ(d) = 0.5 d² / β     if |d| < β
               |d| - 0.5 β    otherwise

    Its derivative d/β (inside) or sign(d) (outside) is continuous at |d| = β,
    and bounded, so outliers pull less than in the squared error.  β = 0 is
    the L1 loss.  ``smooth_l1_loss(x, y, beta=δ) · δ == huber_loss(x, y, delta=δ)``.

    Parameters
    ----------
    input, target : Tensor
        Same shape.
    size_average, reduce : optional
        PyTorch's deprecated spelling of ``reduction``.
    reduction : {'mean', 'sum', 'none'}
    beta : float
        Where the loss turns from quadratic to linear (>= 0).

    Returns
    -------
    Tensor
        A scalar, or one loss per element with ``reduction='none'``.

    See Also
    --------
    huber_loss, l1_loss, difflab.nn.SmoothL1Loss

    Notes
    -----
    .. math::
        \ell_i = \begin{cases} \tfrac12 (x_i - y_i)^2 / \beta & |x_i - y_i| < \beta \\
        |x_i - y_i| - \tfrac12 \beta & \text{otherwise} \end{cases}

    Examples
    --------
    >>> import difflab as dl
    >>> F = dl.nn.functional
    >>> F.smooth_l1_loss(dl.tensor([0.5, 3.0]), dl.tensor([0.0, 0.0]), reduction="none")
    tensor([0.125, 2.5  ])
    """
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be non-negative, got {beta}")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    beta = float(beta)
    return _robust_loss("smooth_l1_loss", input, target, beta, 1.0 / beta if beta else 0.0, 1.0,
                        reduction)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean",  # noqa: A002
               delta: float = 1.0, weight: Tensor | None = None) -> Tensor:
    r"""The Huber loss: quadratic within ``delta`` of the target, linear beyond.

    With d = x - y::

        ℓ(d) = 0.5 d²                 if |d| < δ
               δ (|d| - 0.5 δ)        otherwise

    The gradient is d inside and δ·sign(d) outside: at most δ in size.

    Parameters
    ----------
    input, target : Tensor
        Same shape.
    reduction : {'mean', 'sum', 'none'}
    delta : float
        Where the loss turns linear (> 0).
    weight : Tensor, optional
        Multiplies each element's loss before the reduction.

    Returns
    -------
    Tensor

    See Also
    --------
    smooth_l1_loss, mse_loss, difflab.nn.HuberLoss

    Notes
    -----
    .. math::
        \ell_i = \begin{cases} \tfrac12 (x_i - y_i)^2 & |x_i - y_i| < \delta \\
        \delta\,(|x_i - y_i| - \tfrac12 \delta) & \text{otherwise} \end{cases}

    Examples
    --------
    >>> import difflab as dl
    >>> F = dl.nn.functional
    >>> F.huber_loss(dl.tensor([0.5, 3.0]), dl.tensor([0.0, 0.0]), reduction="none", delta=2.0)
    tensor([0.125, 4.   ])
    """
    if delta <= 0:
        raise ValueError(f"huber_loss: delta must be positive, got {delta}")
    delta = float(delta)
    if weight is None:
        return _robust_loss("huber_loss", input, target, delta, 1.0, delta, reduction)
    losses = _robust_loss("huber_loss", input, target, delta, 1.0, delta, "none") * weight
    return _reduce(losses, reduction, "huber_loss")


# isort: split
# breadth (issue 27): the rest of PyTorch's activations, composites defined next door


# ------------------------------------------------------- multi-class margins, a distance of choice


def _scores_and_classes(name: str, input: Tensor, target: Tensor, same_shape: bool  # noqa: A002
                        ) -> tuple:
    """(N, C) scores, the integer target as (N,) or (N, C), and whether the input was
    unbatched (C,): the margin losses' shared checks."""
    from difflab.nn.functional_core import _floating

    x = _floating(_check_input(name, input))
    if x.ndim not in (1, 2) or x.shape[-1] == 0:
        raise ValueError(f"{name} expects a 1-D (C,) or 2-D (N, C) input of class scores, got "
                         f"shape {tuple(x.shape)}")
    t = _check_tensor(name, target, "target")
    if t.dtype.kind not in "iu":
        raise TypeError(f"{name}: target must hold class indices of an integer dtype (int64), "
                        f"got {t.dtype}; use target.long()")
    expected = tuple(x.shape) if same_shape else tuple(x.shape[:-1])
    if tuple(t.shape) != expected:
        raise ValueError(f"{name}: expected target of shape {expected} for input of shape "
                         f"{tuple(x.shape)}, got {tuple(t.shape)}")
    unbatched = x.ndim == 1
    if unbatched:
        x, t = x.unsqueeze(0), t.unsqueeze(0)
    return x, t, unbatched


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1,  # noqa: A002
                      margin: float = 1.0, weight: Tensor | None = None,
                      size_average: Any = None, reduce: Any = None,
                      reduction: str = "mean") -> Tensor:
    r"""The multi-class hinge loss: every wrong class should score ``margin`` below the right one.

    For each sample, the hinge :math:`\max(0, \text{margin} - x_y + x_i)` (raised to
    ``p``) of every class :math:`i \ne y`, averaged over the :math:`C` classes.

    Parameters
    ----------
    input : Tensor
        :math:`(N, C)` or :math:`(C,)` class scores.
    target : Tensor
        :math:`(N,)` or :math:`()` class indices in :math:`[0, C)`, an integer dtype.
    p : {1, 2}, default 1
        The hinge's power.
    margin : float, default 1.0
        How far below the right class's score every other should be.
    weight : Tensor, optional
        :math:`(C,)`: the loss of a sample of class :math:`y` is scaled by
        :math:`w_y`.
    size_average, reduce : optional
        PyTorch's deprecated flags; they set ``reduction`` when given.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return one per sample.

    Returns
    -------
    Tensor
        A scalar, or :math:`(N,)` (:math:`()` for one sample) with ``'none'``.

    Raises
    ------
    ValueError
        If ``p`` is not 1 or 2, the input is not 1-D or 2-D, the target's shape does not
        match, or ``reduction`` is unknown.
    TypeError
        If the target is not of an integer dtype.
    RuntimeError
        If a target class is outside :math:`[0, C)`.

    See Also
    --------
    multilabel_margin_loss, cross_entropy, difflab.nn.MultiMarginLoss

    Notes
    -----
    .. math::
        \ell(x, y) = \frac{1}{C} \sum_{i \ne y} w_y \max(0,\ \text{margin} - x_y + x_i)^p

    The gradient flows through the hinges that are positive: :math:`+w_y p\,h^{p-1}` to
    :math:`x_i` and the opposite to :math:`x_y`, for each such class :math:`i`.

    Examples
    --------
    >>> import difflab as dl
    >>> F = dl.nn.functional
    >>> x = dl.tensor([[0.1, 0.2, 0.4, 0.8], [0.3, -0.2, 0.5, 0.1]], requires_grad=True)
    >>> y = dl.tensor([3, 0])
    >>> loss = F.multi_margin_loss(x, y)
    >>> round(loss.item(), 4)
    0.475
    >>> loss.backward()
    >>> [round(v, 4) for v in x.grad[0].tolist()]
    [0.125, 0.125, 0.125, -0.375]
    """
    from difflab.creation import arange
    from difflab.functions_indexing import checked_index

    name = "multi_margin_loss"
    reduction = _reduction(name, reduction, size_average, reduce)
    if p not in (1, 2):
        raise ValueError(f"{name}: only p == 1 and p == 2 supported, got p={p!r}")
    x, t, unbatched = _scores_and_classes(name, input, target, same_shape=False)
    c = x.shape[1]
    t = checked_index(t, c, f"{name}: target out of range: class {{value}} for an input "
                      f"of {c} classes (valid: 0 .. {c - 1})", error="RuntimeError")
    right = x.gather(1, t.unsqueeze(1))  # (N, 1): x_y
    hinge = (margin - right + x).relu()
    if p == 2:
        hinge = hinge * hinge
    if weight is not None:
        weight = _check_tensor(name, weight, "weight")
        if tuple(weight.shape) != (c,):
            raise ValueError(f"{name}: weight must have shape ({c},), one per class, got "
                             f"{tuple(weight.shape)}")
        hinge = hinge * weight[t].unsqueeze(1)
    classes = arange(c, device=t.device).unsqueeze(0)
    losses = _where(classes != t.unsqueeze(1), hinge, 0.0).sum(1) / c
    if unbatched:
        losses = losses.reshape(())
    return _reduce(losses, reduction, name)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: Any = None,  # noqa: A002
                           reduce: Any = None, reduction: str = "mean") -> Tensor:
    r"""The multi-label hinge loss: each true label should score 1 above every other label.

    ``target`` lists each sample's true classes first, ended by the first negative
    value (``-1``; what follows is ignored), PyTorch's layout.

    Parameters
    ----------
    input : Tensor
        :math:`(N, C)` or :math:`(C,)` class scores.
    target : Tensor
        The input's shape, an integer dtype: the true classes, then ``-1``.
    size_average, reduce : optional
        PyTorch's deprecated flags; they set ``reduction`` when given.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return one per sample.

    Returns
    -------
    Tensor
        A scalar, or :math:`(N,)` (:math:`()` for one sample) with ``'none'``.

    Raises
    ------
    ValueError
        If the input is not 1-D or 2-D, the target's shape differs, or ``reduction`` is
        unknown.
    TypeError
        If the target is not of an integer dtype.
    RuntimeError
        If a listed class is :math:`C` or more.

    See Also
    --------
    multi_margin_loss, multilabel_soft_margin_loss, difflab.nn.MultiLabelMarginLoss

    Notes
    -----
    With :math:`Y` the listed classes of a sample,

    .. math::
        \ell(x, Y) = \frac{1}{C} \sum_{j \in Y} \sum_{i \notin Y}
        \max\bigl(0,\ 1 - (x_j - x_i)\bigr).

    Examples
    --------
    >>> import difflab as dl
    >>> F = dl.nn.functional
    >>> x = dl.tensor([[0.1, 0.2, 0.4, 0.8], [0.3, -0.2, 0.5, 0.1]])
    >>> y = dl.tensor([[3, 0, -1, 1], [1, 2, 3, -1]])   # classes {3, 0} and {1, 2, 3}
    >>> [round(v, 4) for v in F.multilabel_margin_loss(x, y, reduction="none").tolist()]
    [0.85, 0.875]
    """
    from difflab.creation import arange
    from difflab.functions import cumprod
    from difflab.functions_indexing import checked_index

    name = "multilabel_margin_loss"
    reduction = _reduction(name, reduction, size_average, reduce)
    x, t, unbatched = _scores_and_classes(name, input, target, same_shape=True)
    c = x.shape[1]
    listed = cumprod((t >= 0).long(), 1) > 0  # (N, C): the positions before the first -1
    t = checked_index(_where(listed, t, 0), c, f"{name}: argument #2 'target' is out of "
                      f"range: class {{value}} for an input of {c} classes", error="RuntimeError")
    classes = arange(c, device=t.device)
    # is_true[n, i]: class i is listed for sample n
    is_true = ((t.unsqueeze(2) == classes) & listed.unsqueeze(2)).any(1)
    hinge = (1.0 - (x.gather(1, t).unsqueeze(2) - x.unsqueeze(1))).relu()  # (N, j, i)
    counted = listed.unsqueeze(2) & ~is_true.unsqueeze(1)
    losses = _where(counted, hinge, 0.0).sum((1, 2)) / c
    if unbatched:
        losses = losses.reshape(())
    return _reduce(losses, reduction, name)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Any = None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean") -> Tensor:
    r"""The triplet loss with a distance of your choice (the Euclidean one by default).

    Pulls ``anchor`` towards ``positive`` and pushes it from ``negative`` until they
    are ``margin`` apart in ``distance_function``.

    Parameters
    ----------
    anchor, positive, negative : Tensor
        :math:`(N, D)` or :math:`(D,)` embeddings (any shapes the distance takes).
    distance_function : callable, optional
        ``d(x1, x2) -> Tensor`` of distances, one per triplet;
        :func:`pairwise_distance` when left out.  Any differentiable difflab function
        will do (``lambda a, b: 1 - F.cosine_similarity(a, b)``).
    margin : float, default 1.0
        How much farther the negative should be; must be positive.
    swap : bool, default False
        Use :math:`\min(d(a, n), d(p, n))` as the negative's distance (the "distance
        swap" of Balntas et al.).
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return one per triplet.

    Returns
    -------
    Tensor
        A scalar, or one loss per triplet with ``'none'``.

    Raises
    ------
    ValueError
        If ``margin`` is not positive or ``reduction`` is unknown.
    TypeError
        If ``distance_function`` is not callable.

    See Also
    --------
    triplet_margin_loss, pairwise_distance, difflab.nn.TripletMarginWithDistanceLoss

    Notes
    -----
    .. math::
        \ell(a, p, n) = \max\bigl(d(a, p) - d(a, n) + \text{margin},\ 0\bigr)

    Examples
    --------
    >>> import difflab as dl
    >>> F = dl.nn.functional
    >>> a, p, n = dl.tensor([[0.0, 0.0]]), dl.tensor([[3.0, 4.0]]), dl.tensor([[0.0, 1.0]])
    >>> round(F.triplet_margin_with_distance_loss(a, p, n).item(), 4)      # 5 - 1 + 1
    5.0
    >>> l1 = lambda x, y: (x - y).abs().sum(-1)
    >>> F.triplet_margin_with_distance_loss(a, p, n, distance_function=l1).item()   # 7 - 1 + 1
    7.0
    """
    from difflab.nn.functional_layers import pairwise_distance

    name = "triplet_margin_with_distance_loss"
    reduction = _reduction(name, reduction)
    if margin <= 0:
        raise ValueError(f"{name}: expected margin to be greater than 0, got {margin}")
    if distance_function is None:
        distance_function = pairwise_distance
    elif not callable(distance_function):
        raise TypeError(f"{name}: distance_function must be callable (x1, x2) -> distances, "
                        f"got {type(distance_function).__name__}")
    for what, t in (("anchor", anchor), ("positive", positive), ("negative", negative)):
        _check_input(name, t, what)
    d_pos = distance_function(anchor, positive)
    d_neg = distance_function(anchor, negative)
    if swap:
        d_swap = distance_function(positive, negative)
        d_neg = _where(d_swap < d_neg, d_swap, d_neg)
    return _reduce((d_pos - d_neg + margin).relu(), reduction, name)
