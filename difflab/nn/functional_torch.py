"""The neural-network functions PyTorch also names ``torch.<name>``, with torch's signatures.

``torch.conv2d`` is ``torch.nn.functional.conv2d``; ``difflab.conv2d`` is the same
function object as ``difflab.nn.functional.conv2d``.  A few of them take their
arguments in another order at the top level (ATen's: ``torch.embedding(weight,
indices)``, ``torch.batch_norm(input, weight, bias, running_mean, ...)``), and the
losses take ``reduction`` as ATen's integer (0 ``'none'``, 1 ``'mean'``, 2 ``'sum'``),
and, left out, it is 0: PyTorch's ``torch.kl_div(a, b)`` does not reduce, where
``nn.functional.kl_div(a, b)`` takes the mean (measured on PyTorch 2.13, for each one
here).  Those are the small functions here, each calling the one in ``nn.functional``.
"""

from __future__ import annotations

from typing import Any

from difflab.nn import functional as F  # noqa: N812

#: ATen's integer codes of a loss's reduction.
_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(code: Any, name: str) -> str:
    """The ``nn.functional`` reduction of ATen's integer ``code``."""
    if isinstance(code, bool) or code not in _REDUCTIONS:
        raise TypeError(f"{name}(): argument 'reduction' must be an int, 0 ('none'), 1 "
                        f"('mean') or 2 ('sum'), got {code!r}; nn.functional.{name} takes "
                        f"the names")
    return _REDUCTIONS[code]


def dropout(input: Any, p: float, train: bool) -> Any:  # noqa: A002
    """``torch.dropout(input, p, train)``: :func:`difflab.nn.functional.dropout`, all positional.

    Parameters
    ----------
    input : Tensor
        The values.
    p : float
        The probability of zeroing each element.
    train : bool
        Drop (and scale the rest by ``1 / (1 - p)``) when True; the identity when False.

    Returns
    -------
    Tensor
        ``input`` with dropped elements.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.dropout(dl.ones(3), 0.5, False)
    tensor([1., 1., 1.])
    """
    return F.dropout(input, p, train)


def batch_norm(input: Any, weight: Any, bias: Any, running_mean: Any,  # noqa: A002
               running_var: Any, training: bool, momentum: float, eps: float,
               cudnn_enabled: bool = True) -> Any:
    """``torch.batch_norm``: :func:`difflab.nn.functional.batch_norm` in ATen's argument order.

    Parameters
    ----------
    input : Tensor
        (N, C, ...) values.
    weight, bias : Tensor or None
        The per-channel scale and shift.
    running_mean, running_var : Tensor or None
        The running statistics (updated in place when ``training``).
    training : bool
        Normalize by the batch's statistics (True) or the running ones.
    momentum : float
        The weight of the batch's statistics in the running ones.
    eps : float
        Added to the variance.
    cudnn_enabled : bool, optional
        Accepted for ATen's signature; no effect.

    Returns
    -------
    Tensor
        The normalized values.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([[1.0], [3.0]])
    >>> dl.batch_norm(x, None, None, None, None, True, 0.1, 0.0)
    tensor([[-1.],
            [ 1.]])
    """
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                        eps)


def instance_norm(input: Any, weight: Any, bias: Any, running_mean: Any,  # noqa: A002
                  running_var: Any, use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool = True) -> Any:
    """``torch.instance_norm``: :func:`difflab.nn.functional.instance_norm` in ATen's order.

    Parameters
    ----------
    input : Tensor
        (N, C, ...) values.
    weight, bias : Tensor or None
        The per-channel scale and shift.
    running_mean, running_var : Tensor or None
        The running statistics.
    use_input_stats : bool
        Normalize each instance by its own statistics.
    momentum : float
        The weight of the instance statistics in the running ones.
    eps : float
        Added to the variance.
    cudnn_enabled : bool, optional
        Accepted for ATen's signature; no effect.

    Returns
    -------
    Tensor
        The normalized values.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([[[1.0, 3.0]]])
    >>> dl.instance_norm(x, None, None, None, None, True, 0.1, 0.0)
    tensor([[[-1.,  1.]]])
    """
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def embedding(weight: Any, indices: Any, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Any:
    """``torch.embedding(weight, indices)``: the rows of ``weight`` (the table first, as ATen).

    Parameters
    ----------
    weight : Tensor
        The (num_embeddings, dim) table.
    indices : Tensor of int
        Which rows.
    padding_idx : int, optional
        A row whose gradient stays zero (-1: none, ATen's spelling of None).
    scale_grad_by_freq : bool, optional
        Divide each row's gradient by its count in ``indices``.
    sparse : bool, optional
        Accepted for the signature (difflab's gradients are dense).

    Returns
    -------
    Tensor
        ``indices.shape + (dim,)``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.embedding(dl.tensor([[0.0, 1.0], [2.0, 3.0]]), dl.tensor([1, 1, 0]))
    tensor([[2., 3.],
            [2., 3.],
            [0., 1.]])
    """
    return F.embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def kl_div(input: Any, target: Any, reduction: int = 0, *,  # noqa: A002
           log_target: bool = False) -> Any:
    """``torch.kl_div``: :func:`difflab.nn.functional.kl_div` with ATen's integer reduction.

    Parameters
    ----------
    input : Tensor
        Log-probabilities.
    target : Tensor
        Probabilities (log-probabilities with ``log_target``).
    reduction : int, optional
        0 none (the default when left out, as PyTorch's ``torch.<loss>``), 1 the mean over
        all elements, 2 the sum.
    log_target : bool, optional
        Whether ``target`` holds log-probabilities.

    Returns
    -------
    Tensor
        The divergence terms, reduced.

    Examples
    --------
    >>> import difflab as dl
    >>> p = dl.tensor([0.5, 0.5])
    >>> dl.kl_div(p.log(), p, 2)
    tensor(0.)
    """
    return F.kl_div(input, target, reduction=_reduction(reduction, "kl_div"),
                    log_target=log_target)


def binary_cross_entropy_with_logits(input: Any, target: Any,  # noqa: A002
                                     weight: Any = None, pos_weight: Any = None,
                                     reduction: int = 0) -> Any:
    """``torch.binary_cross_entropy_with_logits``, ATen's integer reduction.

    ``-w [p y log σ(x) + (1 - y) log(1 - σ(x))]`` with ``p`` the ``pos_weight`` (1 when
    None), computed as ``w [(1 - y) x + (1 + (p - 1) y) softplus(-x)]``, which never
    takes the log of a rounded 0.

    Parameters
    ----------
    input : Tensor
        The logits ``x``.
    target : Tensor
        The targets ``y`` in [0, 1].
    weight : Tensor, optional
        A weight ``w`` per element (broadcast).
    pos_weight : Tensor, optional
        The weight ``p`` of the positive term, per class (broadcast over the last dim).
    reduction : int, optional
        0 none (the default, as PyTorch's ``torch.<loss>``), 1 mean, 2 sum.

    Returns
    -------
    Tensor
        The losses, reduced.

    Examples
    --------
    >>> import difflab as dl
    >>> x, y = dl.tensor([0.0, 0.0]), dl.tensor([1.0, 0.0])
    >>> dl.binary_cross_entropy_with_logits(x, y, None, dl.tensor([3.0]), 2)  # 4 log 2
    tensor(2.7726)
    """
    mode = _reduction(reduction, "binary_cross_entropy_with_logits")
    if pos_weight is None:
        return F.binary_cross_entropy_with_logits(input, target, weight, reduction=mode)
    loss = (1 - target) * input + (1 + (pos_weight - 1) * target) * F.softplus(-input)
    if weight is not None:
        loss = loss * weight
    return loss if mode == "none" else getattr(loss, mode)()


def cosine_embedding_loss(input1: Any, input2: Any, target: Any, margin: float = 0.0,
                          reduction: int = 0) -> Any:
    """``torch.cosine_embedding_loss``, ATen's integer reduction (see ``nn.functional``'s).

    Parameters
    ----------
    input1, input2 : Tensor
        The pairs.
    target : Tensor
        1 (similar) or -1 (dissimilar) per pair.
    margin : float, optional
        The cosine a dissimilar pair may keep.
    reduction : int, optional
        0 none (the default, as PyTorch's ``torch.<loss>``), 1 mean, 2 sum.

    Returns
    -------
    Tensor
        The losses, reduced.

    Examples
    --------
    >>> import difflab as dl
    >>> a = dl.tensor([[1.0, 0.0]])
    >>> dl.cosine_embedding_loss(a, a, dl.tensor([1.0]), 0.0, 2)
    tensor(0.)
    """
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction(reduction, "cosine_embedding_loss"))


def margin_ranking_loss(input1: Any, input2: Any, target: Any, margin: float = 0.0,
                        reduction: int = 0) -> Any:
    """``torch.margin_ranking_loss``, ATen's integer reduction: ``max(0, -y (x1 - x2) + m)``.

    Parameters
    ----------
    input1, input2 : Tensor
        The scores compared.
    target : Tensor
        1 where ``input1`` should rank higher, -1 where lower.
    margin : float, optional
        The required gap.
    reduction : int, optional
        0 none (the default, as PyTorch's ``torch.<loss>``), 1 mean, 2 sum.

    Returns
    -------
    Tensor
        The losses, reduced.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.margin_ranking_loss(dl.tensor([1.0]), dl.tensor([2.0]), dl.tensor([1.0]), 0.5, 0)
    tensor([1.5])
    """
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction(reduction, "margin_ranking_loss"))


def hinge_embedding_loss(input: Any, target: Any, margin: float = 1.0,  # noqa: A002
                         reduction: int = 0) -> Any:
    """``torch.hinge_embedding_loss``, ATen's integer reduction (see ``nn.functional``'s).

    Parameters
    ----------
    input : Tensor
        The distances.
    target : Tensor
        1 or -1 per element.
    margin : float, optional
        The distance a dissimilar pair should reach.
    reduction : int, optional
        0 none (the default, as PyTorch's ``torch.<loss>``), 1 mean, 2 sum.

    Returns
    -------
    Tensor
        The losses, reduced.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.hinge_embedding_loss(dl.tensor([0.3, 0.2]), dl.tensor([1.0, -1.0]), 1.0, 0)
    tensor([0.3, 0.8])
    """
    return F.hinge_embedding_loss(input, target, margin,
                                  reduction=_reduction(reduction, "hinge_embedding_loss"))


def triplet_margin_loss(anchor: Any, positive: Any, negative: Any, margin: float = 1.0,
                        p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                        reduction: int = 0) -> Any:
    """``torch.triplet_margin_loss``, ATen's integer reduction (see ``nn.functional``'s).

    Parameters
    ----------
    anchor, positive, negative : Tensor
        The triplets.
    margin : float, optional
        The gap between the negative and the positive distance.
    p : float, optional
        The norm of the distances.
    eps : float, optional
        Added to the differences.
    swap : bool, optional
        Use the closer of the anchor's and the positive's distance to the negative.
    reduction : int, optional
        0 none (the default, as PyTorch's ``torch.<loss>``), 1 mean, 2 sum.

    Returns
    -------
    Tensor
        The losses, reduced.

    Examples
    --------
    >>> import difflab as dl
    >>> a = dl.tensor([[0.0, 0.0]])
    >>> dl.triplet_margin_loss(a, a, dl.tensor([[3.0, 4.0]]), 1.0, 2.0, 0.0, False, 2)
    tensor(0.)
    """
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction(reduction, "triplet_margin_loss"))


def poisson_nll_loss(input: Any, target: Any, log_input: bool, full: bool,  # noqa: A002
                     eps: float, reduction: int) -> Any:
    """``torch.poisson_nll_loss``, all positional, ATen's integer reduction.

    Parameters
    ----------
    input : Tensor
        The rates (their logs with ``log_input``).
    target : Tensor
        The counts.
    log_input : bool
        Whether ``input`` holds log-rates.
    full : bool
        Add Stirling's approximation of ``log(target!)``.
    eps : float
        Added to the rate inside the log when not ``log_input``.
    reduction : int
        0 none, 1 mean, 2 sum.

    Returns
    -------
    Tensor
        The losses, reduced.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.poisson_nll_loss(dl.tensor([0.0]), dl.tensor([1.0]), True, False, 1e-8, 0)
    tensor([1.])
    """
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction(reduction, "poisson_nll_loss"))


def ctc_loss(log_probs: Any, targets: Any, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: int = 0, zero_infinity: bool = False) -> Any:
    """``torch.ctc_loss``, ATen's integer reduction (see :func:`difflab.nn.functional.ctc_loss`).

    Parameters
    ----------
    log_probs : Tensor
        (T, N, C) log-probabilities.
    targets : Tensor
        The target sequences.
    input_lengths, target_lengths : Tensor or sequence of int
        The lengths per batch entry.
    blank : int, optional
        The blank class.
    reduction : int, optional
        0 none (the default, as PyTorch's ``torch.ctc_loss``), 1 mean over the target lengths,
        2 sum.
    zero_infinity : bool, optional
        Zero infinite losses and their gradients.

    Returns
    -------
    Tensor
        The losses, reduced.

    Examples
    --------
    >>> import difflab as dl
    >>> log_probs = dl.zeros(1, 1, 2).log_softmax(2)
    >>> dl.ctc_loss(log_probs, dl.tensor([[1]]), [1], [1], 0, 2)   # -log(1/2)
    tensor(0.6931)
    """
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      reduction=_reduction(reduction, "ctc_loss"), zero_infinity=zero_infinity)
