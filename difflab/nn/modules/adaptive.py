"""``nn.AdaptiveLogSoftmaxWithLoss`` at PyTorch's path ``nn.modules.adaptive``: the softmax of
Grave et al. (2017) for very many classes, frequent ones in a head, rare ones in clusters."""

from __future__ import annotations

from typing import Any, NamedTuple

from difflab.nn import functional as F
from difflab.nn.modules.container import ModuleList, Sequential
from difflab.nn.modules.layers import Linear
from difflab.nn.modules.module import Module
from difflab.tensor import Tensor

__all__ = ["AdaptiveLogSoftmaxWithLoss"]


class _ASMoutput(NamedTuple):
    """What :class:`AdaptiveLogSoftmaxWithLoss` returns: each target's log-probability
    and their negative mean."""

    output: Tensor
    loss: Tensor


class AdaptiveLogSoftmaxWithLoss(Module):
    r"""The adaptive softmax: a log-softmax over very many classes, cheap for the frequent ones.

    The classes, sorted by frequency, are cut at ``cutoffs``: the first
    ``cutoffs[0]`` (the shortlist) share the *head* with one entry per rarer
    cluster; cluster :math:`i` has its own *tail*, a projection to
    ``in_features // div_value**(i+1)`` features then a linear map to its classes.
    A class in a cluster gets the head's log-probability of the cluster plus its
    own within the cluster.  Called as ``m(input, target)`` it returns
    ``(output, loss)``: each target's log-probability and the loss
    :math:`-\operatorname{mean}(\text{output})`.

    Parameters
    ----------
    in_features : int
        The input's features.
    n_classes : int
        The number of classes.
    cutoffs : sequence of int
        Increasing, unique, in :math:`[1, \text{n\_classes} - 1]`: where the clusters start.
    div_value : float, default 4.0
        Each cluster's projection is ``div_value`` times smaller than the one before.
    head_bias : bool, default False
        Give the head a bias.
    device, dtype : optional
        Where the parameters live and their dtype.

    Attributes
    ----------
    head : Linear
        ``in_features`` to ``shortlist_size + n_clusters``.
    tail : ModuleList
        One ``Sequential(Linear, Linear)`` per cluster (no biases), PyTorch's names
        (``tail.0.0.weight``, ...).

    Shape
    -----
    - Input: :math:`(N, \text{in\_features})` or :math:`(\text{in\_features})`; target
      :math:`(N)` or :math:`()` classes.
    - Output: ``output`` :math:`(N)` or :math:`()`; ``loss`` a scalar.

    Raises
    ------
    ValueError
        If ``cutoffs`` is empty, unsorted, repeated, not ints, or outside
        :math:`[1, \text{n\_classes} - 1]`.
    RuntimeError
        When called with mismatched shapes, or a target outside
        :math:`[0, \text{n\_classes})`.

    See Also
    --------
    difflab.nn.CrossEntropyLoss : the plain softmax loss.

    Notes
    -----
    For a class :math:`c` of cluster :math:`i` (a shortlist class reads the head only),

    .. math::
        \log p(c \mid x) = \log \operatorname{softmax}(h(x))_{s + i}
        + \log \operatorname{softmax}(t_i(x))_{c - \text{cutoff}_i}

    with :math:`h` the head, :math:`t_i` the tail of cluster :math:`i` and :math:`s` the
    shortlist's size.  Computed here for every class at once (:meth:`log_prob`) and
    picked by the targets, so its gradient is the chain rule through both softmaxes.

    Examples
    --------
    >>> import difflab as dl
    >>> _ = dl.manual_seed(0)
    >>> asm = dl.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[3, 6], div_value=2.0)
    >>> x, target = dl.randn(4, 8), dl.tensor([0, 4, 9, 2])
    >>> out = asm(x, target)
    >>> out.output.shape, out.loss.shape
    (difflab.Size([4]), difflab.Size([]))
    >>> bool(dl.allclose(asm.log_prob(x).exp().sum(1), dl.ones(4)))   # a distribution
    True
    >>> asm.predict(x).shape
    difflab.Size([4])
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs: Any, div_value: float = 4.0,
                 head_bias: bool = False, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             f"n_classes-1, got {cutoffs} for n_classes={n_classes}")
        self.in_features, self.n_classes = int(in_features), int(n_classes)
        self.cutoffs = [int(c) for c in cutoffs] + [self.n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(self.in_features, self.head_size, bias=head_bias, device=device,
                           dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(self.in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(
                Linear(self.in_features, hidden, bias=False, device=device, dtype=dtype),
                Linear(hidden, size, bias=False, device=device, dtype=dtype)))

    def reset_parameters(self) -> None:
        """Draw the head's and the tails' weights anew (each :class:`Linear`'s default).

        Returns
        -------
        None

        Examples
        --------
        >>> import difflab as dl
        >>> asm = dl.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2])
        >>> _ = dl.nn.init.zeros_(asm.head.weight)
        >>> asm.reset_parameters()
        >>> bool((asm.head.weight != 0).any())
        True
        """
        self.head.reset_parameters()
        for projection in self.tail:
            for layer in projection:
                layer.reset_parameters()

    def log_prob(self, input: Tensor) -> Tensor:  # noqa: A002
        r"""The log-probability of every class: :math:`(N, \text{n\_classes})`.

        Parameters
        ----------
        input : Tensor
            :math:`(N, \text{in\_features})`.

        Returns
        -------
        Tensor
            :math:`(N, \text{n\_classes})`; each row's exponentials sum to 1.

        Raises
        ------
        RuntimeError
            If the input is not 2-D with ``in_features`` columns.

        Examples
        --------
        >>> import difflab as dl
        >>> asm = dl.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2])
        >>> asm.log_prob(dl.ones(3, 4)).shape
        difflab.Size([3, 6])
        """
        from difflab.functions import cat

        if not isinstance(input, Tensor) or input.ndim != 2 or \
                input.shape[1] != self.in_features:
            raise RuntimeError(f"AdaptiveLogSoftmaxWithLoss expects an input of shape (N, "
                               f"{self.in_features}), got {tuple(getattr(input, 'shape', ()))}")
        head = F.log_softmax(self.head(input), 1)
        parts = [head[:, :self.shortlist_size]]
        for i, projection in enumerate(self.tail):
            cluster = F.log_softmax(projection(input), 1)
            parts.append(cluster + head[:, self.shortlist_size + i:self.shortlist_size + i + 1])
        return cat(parts, 1)

    def predict(self, input: Tensor) -> Tensor:  # noqa: A002
        r"""The most likely class of each row: ``log_prob(input).argmax(1)``.

        Parameters
        ----------
        input : Tensor
            :math:`(N, \text{in\_features})`.

        Returns
        -------
        Tensor
            :math:`(N,)` int64 classes.

        Raises
        ------
        RuntimeError
            If the input is not 2-D with ``in_features`` columns.

        Examples
        --------
        >>> import difflab as dl
        >>> asm = dl.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2])
        >>> asm.predict(dl.ones(3, 4)).dtype
        difflab.int64
        """
        return self.log_prob(input).argmax(1)

    def forward(self, input: Tensor, target: Tensor) -> _ASMoutput:  # noqa: A002
        from difflab.functions_indexing import checked_index

        if not isinstance(target, Tensor) or target.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if target.ndim == 1:
            if input.ndim != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {tuple(input.shape)}")
            if input.shape[0] != target.shape[0]:
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
        elif input.ndim != 1:
            raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs "
                               f"with size {tuple(input.shape)}")
        batched = target.ndim == 1
        x = input if batched else input.unsqueeze(0)
        t = checked_index(target if batched else target.unsqueeze(0), self.n_classes,
                          f"Target values should be in [0, {self.n_classes - 1}], but "
                          f"{{value}} was found", error="RuntimeError")
        output = self.log_prob(x).gather(1, t.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)
