"""``torch.nn.utils.rnn``'s padding helpers: sequences of different lengths as one batch.

A batch for a recurrent layer is one tensor ``(L, N, *)`` (or ``(N, L, *)``), so
shorter sequences are padded to the longest; :func:`pad_sequence` does it
with one ``cat`` per sequence (differentiable: the padding is a constant),
and :func:`unpad_sequence` cuts them back.

A padded batch makes a recurrent layer run over the padding too; a
:class:`PackedSequence` (from :func:`pack_padded_sequence` or
:func:`pack_sequence`) holds only the real steps, time step after time step, the
longest sequences first, so that the layer's step ``t`` updates only the
``batch_sizes[t]`` sequences still running and each keeps the state of its own
last step.  :func:`pad_packed_sequence` turns a layer's packed output back into a
padded batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from difflab.nn.modules.rnn_packing import PackedSequence
from difflab.tensor import Tensor

__all__ = ["PackedSequence", "pack_padded_sequence", "pack_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence"]


def pad_sequence(sequences: Sequence[Tensor], batch_first: bool = False,
                 padding_value: float = 0.0, padding_side: str = "right") -> Tensor:
    """Stack sequences of shapes ``(Lᵢ, *)`` into ``(L_max, N, *)`` (or ``(N, L_max, *)``
    with ``batch_first``), padding each with ``padding_value``.

    Parameters
    ----------
    sequences : list of Tensor
        Same trailing shape and dtype, any lengths.
    batch_first : bool
    padding_value : float
    padding_side : {'right', 'left'}

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import difflab as dl
    >>> a, b = dl.tensor([1.0, 2.0, 3.0]), dl.tensor([4.0])
    >>> pad_sequence([a, b], batch_first=True).tolist()
    [[1.0, 2.0, 3.0], [4.0, 0.0, 0.0]]
    """
    from difflab.creation import full
    from difflab.functions import cat, stack

    sequences = list(sequences)
    if not sequences:
        raise ValueError("pad_sequence: received an empty list of sequences")
    if padding_side not in ("right", "left"):
        raise ValueError(f"pad_sequence: padding_side must be 'left' or 'right', got "
                         f"{padding_side!r}")
    trailing = tuple(sequences[0].shape[1:])
    for i, s in enumerate(sequences):
        if not isinstance(s, Tensor) or s.ndim == 0 or tuple(s.shape[1:]) != trailing:
            raise ValueError(f"pad_sequence: sequence {i} has shape "
                             f"{tuple(getattr(s, 'shape', ()))}; every sequence must be "
                             f"(length, {', '.join(map(str, trailing)) or '...'})")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        missing = longest - s.shape[0]
        if missing:
            fill = full((missing, *trailing), float(padding_value), dtype=s.dtype,
                        device=s.device)
            s = cat([s, fill] if padding_side == "right" else [fill, s], 0)
        padded.append(s)
    return stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences: Tensor, lengths: Any, batch_first: bool = False
                   ) -> list[Tensor]:
    """The sequences :func:`pad_sequence` stacked, cut back to their ``lengths``.

    Parameters
    ----------
    padded_sequences : Tensor
        :math:`(L_{max}, N, *)`, or :math:`(N, L_{max}, *)` with ``batch_first``,
        padded on the right (``pad_sequence``'s default).
    lengths : sequence of int or Tensor
        The true length of each of the :math:`N` sequences.
    batch_first : bool, default False
        Whether the batch is the first dimension.

    Returns
    -------
    list of Tensor
        :math:`N` tensors of shapes :math:`(L_i, *)` (views of the batch).

    Raises
    ------
    ValueError
        If the number of lengths is not :math:`N`.

    See Also
    --------
    pad_sequence

    Examples
    --------
    >>> import difflab as dl
    >>> batch = dl.tensor([[1.0, 2.0, 3.0], [4.0, 0.0, 0.0]])
    >>> [s.tolist() for s in unpad_sequence(batch, [3, 1], batch_first=True)]
    [[1.0, 2.0, 3.0], [4.0]]
    """
    batch = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    lengths = lengths.tolist() if isinstance(lengths, Tensor) else list(lengths)
    if len(lengths) != batch.shape[0]:
        raise ValueError(f"unpad_sequence: {len(lengths)} lengths for a batch of "
                         f"{batch.shape[0]} sequences")
    return [batch[i, :int(n)] for i, n in enumerate(lengths)]


def pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch: keep each sequence's first ``lengths[i]`` steps only.

    Differentiable in ``input`` (the packed data is a selection of its steps, joined
    by ``cat``; the padding gets a zero gradient).

    Parameters
    ----------
    input : Tensor
        ``(L, N, *)``, or ``(N, L, *)`` with ``batch_first``.
    lengths : sequence of int or Tensor
        The true length of each sequence, each in ``1..L``.
    batch_first : bool, default False
        Whether the batch is the first dimension.
    enforce_sorted : bool, default True
        Require ``lengths`` in decreasing order; False sorts them (and the layers
        give their final states back in the batch's own order).

    Returns
    -------
    PackedSequence

    Raises
    ------
    ValueError
        For lengths that are not one per sequence, not in ``1..L``, or unsorted with
        ``enforce_sorted=True``.

    Examples
    --------
    >>> import difflab as dl
    >>> padded = dl.tensor([[1.0, 0.0], [2.0, 3.0]])          # (N=2, L=2)
    >>> packed = pack_padded_sequence(padded, [1, 2], batch_first=True,
    ...                               enforce_sorted=False)
    >>> packed.data.tolist(), packed.batch_sizes.tolist()
    ([2.0, 1.0, 3.0], [2, 1])
    """
    from difflab.creation import tensor
    from difflab.functions import cat

    seq = input.transpose(0, 1) if batch_first else input
    lengths = [int(n) for n in (lengths.tolist() if isinstance(lengths, Tensor) else lengths)]
    if len(lengths) != seq.shape[1]:
        raise ValueError(f"pack_padded_sequence: {len(lengths)} lengths for a batch of "
                         f"{seq.shape[1]} sequences")
    if any(n < 1 or n > seq.shape[0] for n in lengths):
        raise ValueError(f"pack_padded_sequence: every length must be in 1..{seq.shape[0]} "
                         f"(the padded length), got {lengths}")
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    if enforce_sorted and order != list(range(len(lengths))) and lengths != sorted(
            lengths, reverse=True):
        raise ValueError("pack_padded_sequence: lengths must be in decreasing order with "
                         "enforce_sorted=True; pass enforce_sorted=False to sort them")
    sorted_lengths = [lengths[i] for i in order]
    batch_sizes = [sum(n > t for n in sorted_lengths) for t in range(sorted_lengths[0])]
    index = tensor(order, dtype="int64", device=seq.device)
    ordered = seq if enforce_sorted else seq[:, index]
    data = cat([ordered[t, :b] for t, b in enumerate(batch_sizes)], 0)
    if enforce_sorted:
        return PackedSequence(data, tensor(batch_sizes, dtype="int64"))
    inverse = [0] * len(order)
    for position, i in enumerate(order):
        inverse[i] = position
    return PackedSequence(data, tensor(batch_sizes, dtype="int64"), index,
                          tensor(inverse, dtype="int64", device=seq.device))


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences of shapes ``(Lᵢ, *)``: :func:`pad_sequence`, then
    :func:`pack_padded_sequence` with their lengths.

    Parameters
    ----------
    sequences : list of Tensor
        Same trailing shape, any lengths (decreasing, unless ``enforce_sorted=False``).
    enforce_sorted : bool, default True
        Require the sequences longest first.

    Returns
    -------
    PackedSequence

    Examples
    --------
    >>> import difflab as dl
    >>> pack_sequence([dl.tensor([1.0]), dl.tensor([2.0, 3.0])],
    ...               enforce_sorted=False).data.tolist()
    [2.0, 1.0, 3.0]
    """
    sequences = list(sequences)
    return pack_padded_sequence(pad_sequence(sequences), [s.shape[0] for s in sequences],
                                enforce_sorted=enforce_sorted)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length: int | None = None
                        ) -> tuple[Tensor, Tensor]:
    """Unpack a :class:`PackedSequence` into a padded batch and the lengths, in the
    batch's original order (the inverse of :func:`pack_padded_sequence`).

    Parameters
    ----------
    sequence : PackedSequence
    batch_first : bool, default False
        Give ``(N, L, *)`` instead of ``(L, N, *)``.
    padding_value : float, default 0.0
        The value past each sequence's end.
    total_length : int, optional
        Pad to this length instead of the longest sequence's.

    Returns
    -------
    tuple of (Tensor, Tensor)
        The padded batch and the int64 lengths.

    Raises
    ------
    ValueError
        If ``total_length`` is shorter than the longest sequence.

    Examples
    --------
    >>> import difflab as dl
    >>> packed = pack_sequence([dl.tensor([1.0]), dl.tensor([2.0, 3.0])],
    ...                        enforce_sorted=False)
    >>> padded, lengths = pad_packed_sequence(packed, batch_first=True)
    >>> padded.tolist(), lengths.tolist()
    ([[1.0, 0.0], [2.0, 3.0]], [1, 2])
    """
    from difflab.creation import full, tensor
    from difflab.functions import cat, stack

    data, sizes = sequence.data, [int(b) for b in sequence.batch_sizes.tolist()]
    n, longest = sizes[0], len(sizes)
    if total_length is not None and total_length < longest:
        raise ValueError(f"pad_packed_sequence: total_length={total_length} is shorter than "
                         f"the longest sequence ({longest})")
    steps, start = [], 0
    for b in sizes + [0] * ((total_length or longest) - longest):
        step = data[start:start + b]
        if b < n:  # the sequences that ended: padding
            fill = full((n - b, *data.shape[1:]), float(padding_value), dtype=data.dtype,
                        device=data.device)
            step = cat([step, fill], 0)
        steps.append(step)
        start += b
    padded = stack(steps, 0)  # (L, N, *), longest first
    lengths = [sum(b > i for b in sizes) for i in range(n)]
    if sequence.unsorted_indices is not None:
        padded = padded[:, sequence.unsorted_indices]
        lengths = [lengths[i] for i in sequence.unsorted_indices.tolist()]
    return (padded.transpose(0, 1) if batch_first else padded,
            tensor(lengths, dtype="int64"))
