"""``torch.nn.utils.rnn``'s padding helpers: sequences of different lengths as one batch.

A batch for a recurrent layer is one tensor ``(L, N, *)`` (or ``(N, L, *)``), so
shorter sequences are padded to the longest; :func:`pad_sequence` does it
with one ``cat`` per sequence (differentiable: the padding is a constant),
and :func:`unpad_sequence` cuts them back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from difflab.tensor import Tensor

__all__ = ["pad_sequence", "unpad_sequence"]


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
