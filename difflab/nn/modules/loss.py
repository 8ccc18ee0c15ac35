"""Loss modules: each wraps the function of the same name in :mod:`difflab.nn.functional`.

``reduction`` is 'mean' (default), 'sum' or 'none' (one loss per element or sample).
"""

from __future__ import annotations

from typing import Any

from difflab.nn import functional as F
from difflab.nn.modules.module import Module
from difflab.tensor import Tensor


class _Loss(Module):
    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
        self.reduction = reduction

    def extra_repr(self) -> str:
        return "" if self.reduction == "mean" else f"reduction='{self.reduction}'"


class MSELoss(_Loss):
    r"""The mean squared error: :math:`\ell_i = (x_i - y_i)^2`, averaged (or summed).

    Called as ``loss(input, target)``.

    Parameters
    ----------
    size_average, reduce : optional
        PyTorch's deprecated flags (in PyTorch's positions); they set ``reduction``
        when given.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return them one per element (or sample).

    Shape
    -----
    - Input: :math:`(*)`; target: the same shape (no broadcasting, a common bug).
    - Output: a scalar, or :math:`(*)` with ``'none'``.

    Raises
    ------
    ValueError
        At construction, for an unknown ``reduction``.
    ValueError
        When called with shapes that differ.

    See Also
    --------
    L1Loss, HuberLoss, difflab.nn.functional.mse_loss

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> loss = nn.MSELoss()
    >>> loss(dl.tensor([1.0, 2.0]), dl.tensor([0.0, 0.0]))
    tensor(2.5)
    >>> nn.MSELoss(reduction="sum")(dl.tensor([1.0, 2.0]), dl.tensor([0.0, 0.0]))
    tensor(5.)
    """

    def __init__(self, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction))

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.mse_loss(input, target, self.reduction)


class L1Loss(_Loss):
    r"""The mean absolute error: :math:`\ell_i = |x_i - y_i|`, averaged (or summed).

    Its derivative is :math:`\operatorname{sign}(x_i - y_i)` (0 at equality).

    Parameters
    ----------
    size_average, reduce : optional
        PyTorch's deprecated flags (in PyTorch's positions); they set ``reduction``
        when given.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return them one per element (or sample).

    Shape
    -----
    - Input: :math:`(*)`; target: the same shape.
    - Output: a scalar, or :math:`(*)` with ``'none'``.

    Raises
    ------
    ValueError
        At construction, for an unknown ``reduction``.
    ValueError
        When called with shapes that differ.

    See Also
    --------
    MSELoss, SmoothL1Loss, difflab.nn.functional.l1_loss

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> nn.L1Loss()(dl.tensor([1.0, -2.0]), dl.tensor([0.0, 0.0]))
    tensor(1.5)
    """

    def __init__(self, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction))

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.l1_loss(input, target, self.reduction)


class NLLLoss(_Loss):
    r"""The negative log-likelihood of class indices under log-probabilities.

    .. math::
        \ell_n = -w_{y_n} x_{n, y_n}


    With ``'mean'`` the sum is divided by :math:`\sum_n w_{y_n}`; targets equal to
    ``ignore_index`` count for nothing.  Put a :class:`LogSoftmax` before it, or
    use :class:`CrossEntropyLoss` on logits.

    Parameters
    ----------
    weight : Tensor, optional
        :math:`(C,)`, a weight per class (for unbalanced classes).
    size_average : optional
        PyTorch's deprecated flag (see ``reduce``).
    ignore_index : int, default -100
        A target value that is skipped.
    reduce : optional
        With ``size_average``, PyTorch's deprecated spelling of ``reduction``.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return them one per element (or sample).

    Shape
    -----
    - Input: :math:`(N, C)`, :math:`(N, C, d_1, \ldots)` or :math:`(C)`, log-probabilities.
    - Target: :math:`(N)`, :math:`(N, d_1, \ldots)` or :math:`()`, integer class indices.
    - Output: a scalar, or the target's shape with ``'none'``.

    Raises
    ------
    ValueError
        At construction, for an unknown ``reduction``.
    TypeError, ValueError, IndexError
        When called with a non-integer target, a target of the wrong shape, or a
        class outside :math:`[0, C)` (see :func:`~difflab.nn.functional.nll_loss`).

    See Also
    --------
    CrossEntropyLoss, LogSoftmax

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> log_probs = dl.tensor([[-1.0, -2.0], [-3.0, -4.0]])
    >>> nn.NLLLoss()(log_probs, dl.tensor([1, 0]))
    tensor(2.5)
    """

    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 ignore_index: int = -100, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction))
        self.weight, self.ignore_index = weight, ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.nll_loss(input, target, self.weight, self.ignore_index, self.reduction)


class CrossEntropyLoss(_Loss):
    r"""The softmax cross-entropy of logits (class scores).

    .. math::
        \ell_n = -\log \frac{e^{x_{n,y_n}}}{\sum_c e^{x_{n,c}}}


    ``log_softmax`` followed by :class:`NLLLoss`; its gradient with respect to the
    logits is :math:`\operatorname{softmax}(x) - \operatorname{onehot}(y)` (divided
    by :math:`N` for the mean).  The target may also be class probabilities of
    the input's shape (float), giving :math:`-\sum_c p_c \log \operatorname{softmax}(x)_c`.

    Parameters
    ----------
    weight : Tensor, optional
        :math:`(C,)`, a weight per class.
    size_average : optional
        PyTorch's deprecated flag (see ``reduce``).
    ignore_index : int, default -100
        A target index that is skipped (class indices only).
    reduce : optional
        With ``size_average``, PyTorch's deprecated spelling of ``reduction``.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return them one per element (or sample).
    label_smoothing : float, default 0.0
        :math:`\varepsilon`: the target becomes
        :math:`(1-\varepsilon)\,\text{onehot} + \varepsilon/C`.

    Shape
    -----
    - Input: :math:`(N, C)`, :math:`(N, C, d_1, \ldots)` or :math:`(C)`, logits.
    - Target: integer indices :math:`(N)` (or :math:`(N, d_1, \ldots)`, :math:`()`), or
      float probabilities of the input's shape.
    - Output: a scalar, or one loss per sample with ``'none'``.

    Raises
    ------
    ValueError
        At construction, for an unknown ``reduction``.
    TypeError, ValueError, IndexError
        When called with a target of the wrong kind or shape, or a class out of range.

    See Also
    --------
    NLLLoss, BCEWithLogitsLoss, difflab.nn.functional.cross_entropy

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> loss = nn.CrossEntropyLoss()
    >>> logits = dl.tensor([[2.0, 0.0, 0.0], [0.0, 0.0, 3.0]], requires_grad=True)
    >>> value = loss(logits, dl.tensor([0, 2]))
    >>> value  # doctest: +ELLIPSIS
    tensor(0.1672, grad_fn=<...>)
    >>> value.backward()
    >>> logits.grad                        # (softmax - onehot) / N
    tensor([[-0.1065,  0.0533,  0.0533],
            [ 0.0226,  0.0226, -0.0453]])
    """

    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 ignore_index: int = -100, reduce: Any = None, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction))
        self.weight, self.ignore_index = weight, ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.cross_entropy(input, target, self.weight, self.ignore_index, self.reduction,
                               self.label_smoothing)


class BCELoss(_Loss):
    r"""Binary cross-entropy of probabilities.

    .. math::
        \ell_i = -w_i\,[y_i \log p_i + (1 - y_i) \log(1 - p_i)]


    The logarithms are clamped at :math:`-100`, as in PyTorch.  On logits, use
    :class:`BCEWithLogitsLoss` (more stable).

    Parameters
    ----------
    weight : Tensor, optional
        A weight per element, broadcast to the input.
    size_average, reduce : optional
        PyTorch's deprecated flags (in PyTorch's positions); they set ``reduction``
        when given.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return them one per element (or sample).

    Shape
    -----
    - Input: :math:`(*)`, probabilities in :math:`[0, 1]`; target: the same shape.
    - Output: a scalar, or :math:`(*)` with ``'none'``.

    Raises
    ------
    ValueError
        At construction, for an unknown ``reduction``.
    ValueError
        When called with an input outside :math:`[0, 1]` or shapes that differ.

    See Also
    --------
    BCEWithLogitsLoss, difflab.nn.functional.binary_cross_entropy

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> nn.BCELoss()(dl.tensor([0.9, 0.2]), dl.tensor([1.0, 0.0]))
    tensor(0.1643)
    """

    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction))
        self.weight = weight

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.binary_cross_entropy(input, target, self.weight, self.reduction)


class BCEWithLogitsLoss(_Loss):
    r"""Binary cross-entropy of :math:`\sigma(x)`, computed stably from the logits :math:`x`.

    .. math::
        \ell_i = -w_i\,[p_c\, y_i \log \sigma(x_i) + (1 - y_i) \log(1 - \sigma(x_i))]

    computed stably (:math:`-\log\sigma(x) = \operatorname{softplus}(-x)`).  Its gradient is
    :math:`w_i(\sigma(x_i) - y_i)` when :math:`p_c = 1`.

    Parameters
    ----------
    weight : Tensor, optional
        :math:`w`, a weight per element, broadcast to the input.
    size_average, reduce : optional
        PyTorch's deprecated flags (in PyTorch's positions); they set ``reduction``
        when given.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return them one per element (or sample).
    pos_weight : Tensor, optional
        :math:`p_c`, a weight of the positive term per class (broadcast along the
        last dimension): above 1 it raises recall, e.g. ``negatives / positives``.

    Shape
    -----
    - Input: :math:`(*)`, logits; target: the same shape.
    - Output: a scalar, or :math:`(*)` with ``'none'``.

    Raises
    ------
    ValueError
        At construction, for an unknown ``reduction``.
    ValueError
        When called with shapes that differ.

    See Also
    --------
    BCELoss, CrossEntropyLoss, difflab.nn.functional.binary_cross_entropy_with_logits

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> nn.BCEWithLogitsLoss()(dl.tensor([2.0, -1.0]), dl.tensor([1.0, 0.0]))
    tensor(0.2201)
    >>> nn.BCEWithLogitsLoss(pos_weight=dl.tensor([3.0]))(dl.tensor([0.0]), dl.tensor([1.0]))
    tensor(2.0794)
    """

    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 reduce: Any = None, reduction: str = "mean",
                 pos_weight: Tensor | None = None) -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction))
        self.weight, self.pos_weight = weight, pos_weight

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        if self.pos_weight is None:
            return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                      self.reduction)
        # -[p·y·log σ(x) + (1 - y)·log(1 - σ(x))] is the plain loss plus (p - 1)·y·(-log σ(x)),
        # and -log σ(x) = softplus(-x), computed without overflow
        losses = F.binary_cross_entropy_with_logits(input, target, reduction="none")
        losses = losses + (self.pos_weight - 1.0) * target * F.softplus(-input)
        if self.weight is not None:
            losses = losses * self.weight
        if self.reduction == "none":
            return losses
        return losses.sum() if self.reduction == "sum" else losses.mean()


class SmoothL1Loss(_Loss):
    r"""Quadratic below ``beta``, absolute above (see :func:`difflab.nn.functional.smooth_l1_loss`).

    Parameters
    ----------
    size_average, reduce : optional
        PyTorch's deprecated spelling of ``reduction``.
    reduction : {'mean', 'sum', 'none'}
    beta : float
        Where the loss turns linear (>= 0; 0 is the L1 loss).

    Shape
    -----
    - Input: :math:`(*)`; target: the same shape.
    - Output: a scalar, or :math:`(*)` with ``'none'``.

    Notes
    -----
    .. math::
        \ell_i = \begin{cases} \tfrac12 (x_i - y_i)^2 / \beta & |x_i - y_i| < \beta \\
        |x_i - y_i| - \tfrac12 \beta & \text{otherwise} \end{cases}

    Huber loss divided by :math:`\beta` (:class:`HuberLoss` with :math:`\delta = \beta`, scaled).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.SmoothL1Loss()(dl.tensor([0.5, 3.0]), dl.tensor([0.0, 0.0]))
    tensor(1.3125)
    """

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 beta: float = 1.0) -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction))
        if beta < 0:
            raise ValueError(f"SmoothL1Loss: beta must be non-negative, got {beta}")
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    r"""Quadratic within ``delta``, linear beyond (see :func:`difflab.nn.functional.huber_loss`).

    Parameters
    ----------
    reduction : {'mean', 'sum', 'none'}
    delta : float
        Where the loss turns linear (> 0).

    Shape
    -----
    - Input: :math:`(*)`; target: the same shape.
    - Output: a scalar, or :math:`(*)` with ``'none'``.

    Notes
    -----
    .. math::
        \ell_i = \begin{cases} \tfrac12 (x_i - y_i)^2 & |x_i - y_i| < \delta \\
        \delta\,(|x_i - y_i| - \tfrac12 \delta) & \text{otherwise} \end{cases}

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.HuberLoss(delta=2.0)(dl.tensor([0.5, 3.0]), dl.tensor([0.0, 0.0]))
    tensor(2.0625)
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction)
        if delta <= 0:
            raise ValueError(f"HuberLoss: delta must be positive, got {delta}")
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


# ---------------------------------------------------------------------------------------
# breadth (issue 27): the remaining losses, each calling its function in nn.functional.


class KLDivLoss(_Loss):
    r"""KL(target ‖ exp(input)) from log-probabilities (see :func:`difflab.nn.functional.kl_div`).

    ``reduction='batchmean'`` gives the true KL divergence per sample.

    Parameters
    ----------
    size_average, reduce : optional
        PyTorch's deprecated flags; they set ``reduction`` when given.
    reduction : {'mean', 'batchmean', 'sum', 'none'}, default 'mean'
        ``'batchmean'`` divides the sum by the batch size: the true KL divergence
        per sample (``'mean'`` divides by the number of elements, as PyTorch does).
    log_target : bool, default False
        Whether the target is given as log-probabilities too.

    Shape
    -----
    - Input: :math:`(*)`, log-probabilities; target: the same shape.
    - Output: a scalar, or :math:`(*)` with ``'none'``.

    Raises
    ------
    ValueError
        For an unknown ``reduction``; when called, for inputs of different shapes.

    See Also
    --------
    difflab.nn.functional.kl_div

    Notes
    -----
    .. math::
        \ell_i = y_i (\log y_i - x_i)

    Examples
    --------
    >>> import difflab as dl
    >>> loss = dl.nn.KLDivLoss(reduction="batchmean")
    >>> p = dl.tensor([[0.5, 0.5]])
    >>> round(loss(dl.tensor([[0.25, 0.75]]).log(), p).item(), 4)
    0.1438
    """

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 log_target: bool = False) -> None:
        reduction = F._legacy_reduction(size_average, reduce, reduction)
        super().__init__("mean" if reduction == "batchmean" else reduction)
        self.reduction, self.log_target = reduction, log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class MarginRankingLoss(_Loss):
    r"""max(0, -y (x₁ - x₂) + margin).

    Parameters
    ----------
    margin : float, default 0.0
        The gap asked for.
    size_average, reduce : optional
        PyTorch's deprecated flags; they set ``reduction`` when given.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return them one per element (sample).

    Shape
    -----
    - Input: ``input1``, ``input2`` :math:`(N)` or :math:`()`, ``target`` the same shape,
      :math:`\pm 1`.
    - Output: a scalar, or :math:`(N)` with ``'none'``.

    Raises
    ------
    ValueError
        For an unknown ``reduction``; when called, for inputs of different shapes.

    See Also
    --------
    difflab.nn.functional.margin_ranking_loss

    Notes
    -----
    .. math::
        \ell = \max(0, -y (x_1 - x_2) + \text{margin})

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.MarginRankingLoss(0.5)(dl.tensor([1.0]), dl.tensor([0.0]), dl.tensor([-1.0])).item()
    1.5
    """

    def __init__(self, margin: float = 0.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction))
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.margin_ranking_loss(input1, input2, target, self.margin,
                                     reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    r"""x where y = 1, max(0, margin - x) where y = -1.

    Parameters
    ----------
    margin : float, default 1.0
        The margin for dissimilar pairs.
    size_average, reduce : optional
        PyTorch's deprecated flags; they set ``reduction`` when given.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return them one per element (sample).

    Shape
    -----
    - Input: ``input`` :math:`(*)`, ``target`` :math:`(*)` of :math:`\pm 1`.
    - Output: a scalar, or :math:`(*)` with ``'none'``.

    Raises
    ------
    ValueError
        For an unknown ``reduction``; when called, for inputs of different shapes.

    See Also
    --------
    difflab.nn.functional.hinge_embedding_loss

    Notes
    -----
    .. math::
        \ell_i = \begin{cases} x_i & y_i = 1 \\ \max(0, \text{margin} - x_i) & y_i = -1 \end{cases}

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.HingeEmbeddingLoss()(dl.tensor([0.25]), dl.tensor([-1.0])).item()
    0.75
    """

    def __init__(self, margin: float = 1.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction))
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.hinge_embedding_loss(input, target, self.margin, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    r"""log(1 + e^{-y x}) for labels ±1.

    Parameters
    ----------
    size_average, reduce : optional
        PyTorch's deprecated flags; they set ``reduction`` when given.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return them one per element (sample).

    Shape
    -----
    - Input: ``input`` :math:`(*)`, ``target`` :math:`(*)` of :math:`\pm 1`.
    - Output: a scalar, or :math:`(*)` with ``'none'``.

    Raises
    ------
    ValueError
        For an unknown ``reduction``; when called, for inputs of different shapes.

    See Also
    --------
    difflab.nn.functional.soft_margin_loss

    Notes
    -----
    .. math::
        \ell_i = \log(1 + e^{-y_i x_i})

    Examples
    --------
    >>> import difflab as dl
    >>> round(dl.nn.SoftMarginLoss()(dl.tensor([0.0]), dl.tensor([1.0])).item(), 4)
    0.6931
    """

    def __init__(self, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction))

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_Loss):
    r"""Binary cross-entropy of σ(x) per label, averaged over the labels.

    Parameters
    ----------
    weight : Tensor, optional
        :math:`(C,)`, a weight per label.
    size_average, reduce : optional
        PyTorch's deprecated flags; they set ``reduction`` when given.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return them one per element (sample).

    Shape
    -----
    - Input: :math:`(N, C)` logits; target :math:`(N, C)` of 0 and 1.
    - Output: a scalar, or :math:`(N)` with ``'none'``.

    Raises
    ------
    ValueError
        For an unknown ``reduction``; when called, for inputs of different shapes.

    See Also
    --------
    difflab.nn.functional.multilabel_soft_margin_loss

    Notes
    -----
    .. math::
        \ell_n = -\frac{1}{C} \sum_c w_c \big[y_{nc} \log \sigma(x_{nc})
        + (1 - y_{nc}) \log \sigma(-x_{nc})\big]

    Examples
    --------
    >>> import difflab as dl
    >>> loss = dl.nn.MultiLabelSoftMarginLoss()
    >>> round(loss(dl.zeros(2, 3), dl.tensor([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])).item(), 4)
    0.6931
    """

    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction))
        self.weight = weight

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.multilabel_soft_margin_loss(input, target, self.weight,
                                             reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    r"""1 - cos(x₁, x₂) where y = 1, max(0, cos(x₁, x₂) - margin) where y = -1.

    Parameters
    ----------
    margin : float, default 0.0
        For dissimilar pairs, in :math:`[-1, 1]`.
    size_average, reduce : optional
        PyTorch's deprecated flags; they set ``reduction`` when given.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return them one per element (sample).

    Shape
    -----
    - Input: ``input1``, ``input2`` :math:`(N, D)` or :math:`(D)`; ``target`` :math:`(N)` or
      :math:`()`, :math:`\pm 1`.
    - Output: a scalar, or :math:`(N)` with ``'none'``.

    Raises
    ------
    ValueError
        For an unknown ``reduction``; when called, for inputs of different shapes.

    See Also
    --------
    difflab.nn.functional.cosine_embedding_loss

    Notes
    -----
    .. math::
        \ell = \begin{cases} 1 - \cos(x_1, x_2) & y = 1 \\
        \max(0, \cos(x_1, x_2) - \text{margin}) & y = -1 \end{cases}

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([[1.0, 0.0]])
    >>> dl.nn.CosineEmbeddingLoss()(x, dl.tensor([[0.0, 1.0]]), dl.tensor([1.0])).item()
    1.0
    """

    def __init__(self, margin: float = 0.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction))
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.cosine_embedding_loss(input1, input2, target, self.margin,
                                       reduction=self.reduction)


class TripletMarginLoss(_Loss):
    r"""max(d(a, p) - d(a, n) + margin, 0) with the p-norm distance.

    Parameters
    ----------
    margin : float, default 1.0
        How much farther the negative must be.
    p : float, default 2.0
        The norm of the distance.
    eps : float, default 1e-6
        Added to the differences.
    swap : bool, default False
        Use :math:`\min(d(a, n), d(p, n))` as the negative's distance.
    size_average, reduce : optional
        PyTorch's deprecated flags; they set ``reduction`` when given.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return them one per element (sample).

    Shape
    -----
    - Input: ``anchor``, ``positive``, ``negative`` :math:`(N, D)` or :math:`(D)`.
    - Output: a scalar, or :math:`(N)` with ``'none'``.

    Raises
    ------
    ValueError
        For an unknown ``reduction``; when called, for inputs of different shapes.

    See Also
    --------
    difflab.nn.functional.triplet_margin_loss

    Notes
    -----
    .. math::
        \ell = \max(d(a, p) - d(a, n) + \text{margin}, 0), \quad d(u, v) = \|u - v + \epsilon\|_p

    Examples
    --------
    >>> import difflab as dl
    >>> a, p, n = dl.tensor([[0.0, 0.0]]), dl.tensor([[3.0, 4.0]]), dl.tensor([[0.0, 1.0]])
    >>> round(dl.nn.TripletMarginLoss()(a, p, n).item(), 4)
    5.0
    """

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                 swap: bool = False, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction))
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_loss(anchor, positive, negative, self.margin, self.p, self.eps,
                                     self.swap, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    r"""The negative log-likelihood of the target under N(input, var).

    Parameters
    ----------
    full : bool, default False
        Add the constant :math:`\tfrac12 \log 2\pi` (keyword only).
    eps : float, default 1e-6
        The smallest variance used (keyword only).
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return them one per element (sample).

    Shape
    -----
    - Input: :math:`(N, *)`; target the same; ``var`` the same, one dimension fewer,
      a last dimension of 1, or a number.
    - Output: a scalar, or :math:`(N, *)` with ``'none'``.

    Raises
    ------
    ValueError
        For an unknown ``reduction``; when called, for a ``var`` that does not fit or
        has a negative entry.

    See Also
    --------
    difflab.nn.functional.gaussian_nll_loss

    Notes
    -----
    .. math::
        \ell = \tfrac12\Big(\log \max(\text{var}, \epsilon)
        + \frac{(x - y)^2}{\max(\text{var}, \epsilon)}\Big)

    Examples
    --------
    >>> import difflab as dl
    >>> loss = dl.nn.GaussianNLLLoss()
    >>> round(loss(dl.tensor([1.0]), dl.tensor([3.0]), dl.tensor([4.0])).item(), 4)
    1.1931
    """

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean"
                 ) -> None:
        super().__init__(reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target: Tensor, var: Tensor | float) -> Tensor:  # noqa: A002
        return F.gaussian_nll_loss(input, target, var, self.full, self.eps, self.reduction)


class PoissonNLLLoss(_Loss):
    r"""The negative log-likelihood of counts under Poisson(e^input) (or Poisson(input)).

    Parameters
    ----------
    log_input : bool, default True
        The input is :math:`\log\lambda` (else :math:`\lambda`).
    full : bool, default False
        Add Stirling's approximation of :math:`\log y!`.
    size_average : optional
        PyTorch's deprecated flag.
    eps : float, default 1e-8
        Keeps :math:`\log(x + \epsilon)` finite without ``log_input``.
    reduce : optional
        PyTorch's deprecated flag.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return them one per element (sample).

    Shape
    -----
    - Input: :math:`(*)`; target: counts of the same shape.
    - Output: a scalar, or :math:`(*)` with ``'none'``.

    Raises
    ------
    ValueError
        For an unknown ``reduction``; when called, for inputs of different shapes.

    See Also
    --------
    difflab.nn.functional.poisson_nll_loss

    Notes
    -----
    .. math::
        \ell_i = e^{x_i} - y_i x_i \ (\text{log\_input}),
        \qquad \ell_i = x_i - y_i \log(x_i + \epsilon) \ (\text{otherwise})

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.PoissonNLLLoss()(dl.tensor([0.0]), dl.tensor([2.0])).item()
    1.0
    """

    def __init__(self, log_input: bool = True, full: bool = False, size_average: Any = None,
                 eps: float = 1e-8, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction))
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return F.poisson_nll_loss(log_input, target, self.log_input, self.full, eps=self.eps,
                                  reduction=self.reduction)


class CTCLoss(_Loss):
    """Connectionist temporal classification (see :func:`difflab.nn.functional.ctc_loss`).

    ``forward(log_probs, targets, input_lengths, target_lengths)``.

    Parameters
    ----------
    blank : int, default 0
        The index of the blank label.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return them one per element (sequence); 'mean'
        divides each by its target length first.
    zero_infinity : bool, default False
        Replace infinite losses (an impossible alignment) and their gradients by zero.

    Shape
    -----
    - Input: ``log_probs`` :math:`(T, N, C)`; ``targets`` :math:`(N, S)` or the
      concatenated targets; ``input_lengths``, ``target_lengths`` :math:`(N)`.
    - Output: a scalar, or :math:`(N)` with ``'none'``.

    Raises
    ------
    ValueError
        For an unknown ``reduction``; when called, for inconsistent lengths.

    See Also
    --------
    difflab.nn.functional.ctc_loss

    Examples
    --------
    >>> import difflab as dl
    >>> loss = dl.nn.CTCLoss()
    >>> log_probs = dl.randn(6, 2, 4).log_softmax(2)
    >>> loss(log_probs, dl.tensor([[1, 2], [3, 3]]), [6, 5], [2, 2]).shape
    difflab.Size([])
    """

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False
                 ) -> None:
        super().__init__(reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths: Any,
                target_lengths: Any) -> Tensor:
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                          self.reduction, self.zero_infinity)


class MultiMarginLoss(_Loss):
    r"""The multi-class hinge loss: every wrong class should score ``margin`` below the right one.

    Called as ``loss(input, target)`` with class indices as targets (see
    :func:`difflab.nn.functional.multi_margin_loss`).

    Parameters
    ----------
    p : {1, 2}, default 1
        The hinge's power.
    margin : float, default 1.0
        How far below the right class's score every other should be.
    weight : Tensor, optional
        :math:`(C,)`, a weight per class (a buffer, ``weight`` in the ``state_dict`` as
        in PyTorch).
    size_average, reduce : optional
        PyTorch's deprecated flags; they set ``reduction`` when given.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return one per sample.

    Shape
    -----
    - Input: :math:`(N, C)` or :math:`(C,)`; target :math:`(N,)` or :math:`()`.
    - Output: a scalar, or :math:`(N,)` with ``'none'``.

    Raises
    ------
    ValueError
        If ``p`` is not 1 or 2, or ``reduction`` is unknown.

    See Also
    --------
    MultiLabelMarginLoss, CrossEntropyLoss, difflab.nn.functional.multi_margin_loss

    Notes
    -----
    .. math::
        \ell(x, y) = \frac{1}{C} \sum_{i \ne y} w_y \max(0,\ \text{margin} - x_y + x_i)^p

    Examples
    --------
    >>> import difflab as dl
    >>> loss = dl.nn.MultiMarginLoss()
    >>> x = dl.tensor([[0.1, 0.2, 0.4, 0.8], [0.3, -0.2, 0.5, 0.1]])
    >>> round(loss(x, dl.tensor([3, 0])).item(), 4)
    0.475
    """

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                 size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction))
        if p not in (1, 2):
            raise ValueError(f"MultiMarginLoss: only p == 1 and p == 2 supported, got {p!r}")
        self.p, self.margin = p, margin
        self.register_buffer("weight", weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.multi_margin_loss(input, target, self.p, self.margin, self.weight,
                                   reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    r"""The multi-label hinge loss: each true label should score 1 above every other label.

    Called as ``loss(input, target)``; ``target`` lists each sample's true classes,
    ended by ``-1`` (see :func:`difflab.nn.functional.multilabel_margin_loss`).

    Parameters
    ----------
    size_average, reduce : optional
        PyTorch's deprecated flags; they set ``reduction`` when given.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return one per sample.

    Shape
    -----
    - Input: :math:`(N, C)` or :math:`(C,)`; target the same shape, an integer dtype.
    - Output: a scalar, or :math:`(N,)` with ``'none'``.

    Raises
    ------
    ValueError
        If ``reduction`` is unknown.

    See Also
    --------
    MultiMarginLoss, MultiLabelSoftMarginLoss, difflab.nn.functional.multilabel_margin_loss

    Notes
    -----
    .. math::
        \ell(x, Y) = \frac{1}{C} \sum_{j \in Y} \sum_{i \notin Y}
        \max\bigl(0,\ 1 - (x_j - x_i)\bigr)

    Examples
    --------
    >>> import difflab as dl
    >>> loss = dl.nn.MultiLabelMarginLoss(reduction="none")
    >>> x = dl.tensor([[0.1, 0.2, 0.4, 0.8], [0.3, -0.2, 0.5, 0.1]])
    >>> [round(v, 4) for v in loss(x, dl.tensor([[3, 0, -1, 1], [1, 2, 3, -1]])).tolist()]
    [0.85, 0.875]
    """

    def __init__(self, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction))

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    r"""The triplet loss with a distance of your choice (the Euclidean one by default).

    Called as ``loss(anchor, positive, negative)`` (see
    :func:`difflab.nn.functional.triplet_margin_with_distance_loss`).

    Parameters
    ----------
    distance_function : callable, optional
        ``d(x1, x2) -> Tensor``; :class:`PairwiseDistance` when left out (keyword only).
        A module given here is a submodule, as in PyTorch.
    margin : float, default 1.0
        How much farther the negative should be; must be positive (keyword only).
    swap : bool, default False
        Use :math:`\min(d(a, n), d(p, n))` as the negative's distance (keyword only).
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return one per triplet (keyword only).

    Shape
    -----
    - Input: three tensors the distance takes, :math:`(N, D)` or :math:`(D,)` for the
      default.
    - Output: a scalar, or one loss per triplet with ``'none'``.

    Raises
    ------
    ValueError
        If ``margin`` is not positive or ``reduction`` is unknown.
    TypeError
        If ``distance_function`` is not callable.

    See Also
    --------
    TripletMarginLoss, PairwiseDistance, difflab.nn.functional.triplet_margin_with_distance_loss

    Notes
    -----
    .. math::
        \ell(a, p, n) = \max\bigl(d(a, p) - d(a, n) + \text{margin},\ 0\bigr)

    Examples
    --------
    >>> import difflab as dl
    >>> cosine = lambda x, y: 1 - dl.nn.functional.cosine_similarity(x, y)
    >>> loss = dl.nn.TripletMarginWithDistanceLoss(distance_function=cosine, margin=0.5)
    >>> a, p, n = dl.tensor([[1.0, 0.0]]), dl.tensor([[1.0, 1.0]]), dl.tensor([[1.0, 0.0]])
    >>> round(loss(a, p, n).item(), 4)           # (1 - 0.7071) - 0 + 0.5
    0.7929
    """

    def __init__(self, *, distance_function: Any = None, margin: float = 1.0,
                 swap: bool = False, reduction: str = "mean") -> None:
        super().__init__(reduction)
        from difflab.nn.modules.distance import PairwiseDistance

        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater "
                             f"than 0, got {margin}")
        if distance_function is not None and not callable(distance_function):
            raise TypeError("TripletMarginWithDistanceLoss: distance_function must be "
                            f"callable, got {type(distance_function).__name__}")
        self.distance_function = (PairwiseDistance() if distance_function is None
                                  else distance_function)
        self.margin, self.swap = margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


class NLLLoss2d(NLLLoss):
    r"""PyTorch's deprecated name of :class:`NLLLoss` for (N, C, H, W) scores.

    :class:`NLLLoss` already takes (N, C, d1, ...) log-probabilities with (N, d1, ...)
    targets; this class is the same loss, and warns as PyTorch does.

    Parameters
    ----------
    weight : Tensor, optional
        :math:`(C,)`, a weight per class.
    size_average, reduce : optional
        PyTorch's deprecated flags; they set ``reduction`` when given.
    ignore_index : int, default -100
        A target value that contributes nothing.
    reduction : {'mean', 'sum', 'none'}, default 'mean'
        Average the losses, add them up, or return one per pixel.

    Shape
    -----
    - Input: :math:`(N, C, H, W)` log-probabilities; target :math:`(N, H, W)` classes.
    - Output: a scalar, or :math:`(N, H, W)` with ``'none'``.

    Warns
    -----
    UserWarning
        That the name is deprecated (use :class:`NLLLoss`).

    See Also
    --------
    NLLLoss, difflab.nn.functional.nll_loss

    Examples
    --------
    >>> import warnings
    >>> import difflab as dl
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     loss = dl.nn.NLLLoss2d()
    >>> logp = dl.log(dl.full((1, 2, 2, 2), 0.5))
    >>> round(loss(logp, dl.zeros(1, 2, 2, dtype=dl.int64)).item(), 4)
    0.6931
    """

    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 ignore_index: int = -100, reduce: Any = None, reduction: str = "mean") -> None:
        import warnings

        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a "
                      "drop-in replacement.", stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)
