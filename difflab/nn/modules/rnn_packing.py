"""The packed sequence a recurrent layer reads, and the layers' loop over one.

:class:`PackedSequence` holds sequences of different lengths without their
padding (``difflab.nn.utils.rnn.pack_padded_sequence`` makes one); :func:`run_packed`
is ``nn.RNN``/``GRU``/``LSTM``'s loop over it: step ``t`` runs the cell on the
``batch_sizes[t]`` sequences that have a step ``t``, so padding never enters a state.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from difflab.tensor import Tensor

__all__ = ["PackedSequence", "run_packed"]


class PackedSequence(NamedTuple):
    """Sequences of different lengths without their padding, as a recurrent layer reads them.

    ``data`` holds the steps time-major: all sequences' first steps, then the second
    steps of those at least two long, ...; ``batch_sizes[t]`` says how many
    sequences have a step ``t``.  The sequences are in order of decreasing length
    (``sorted_indices[i]`` is the batch position of the i-th longest,
    ``unsorted_indices`` the inverse permutation).  Make one with
    ``pack_padded_sequence`` or ``pack_sequence``, never by hand.

    Parameters
    ----------
    data : Tensor
        ``(sum of the lengths, *)``.
    batch_sizes : Tensor
        int64, ``(longest length,)``.
    sorted_indices : Tensor or None
        The batch positions, longest sequence first (None: already sorted).
    unsorted_indices : Tensor or None
        The inverse of ``sorted_indices``.

    Examples
    --------
    >>> import difflab as dl
    >>> packed = dl.nn.utils.rnn.pack_sequence([dl.tensor([1.0, 2.0]), dl.tensor([3.0])])
    >>> packed.data.tolist(), packed.batch_sizes.tolist()
    ([1.0, 3.0, 2.0], [2, 1])
    """

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None


def run_packed(layer: Any, packed: PackedSequence, first: list) -> tuple[PackedSequence, list]:
    """A recurrent layer (``nn.RNN``/``GRU``/``LSTM``) over a ``PackedSequence``.

    ``first[k]`` is layer k's first state in the batch's order (None: zeros).  Step
    ``t`` updates only the first ``batch_sizes[t]`` (longest) sequences; the others keep
    the state of their own last step, which is therefore each one's final state.
    Returns the packed outputs of the top layer and each layer's final states, in the
    batch's order.
    """
    from difflab.functions import cat

    def rows(state: Any, index: Any) -> Any:
        if state is None or index is None:
            return state
        return tuple(s[index] for s in state) if isinstance(state, tuple) else state[index]

    def join(new: Any, old: Any) -> Any:
        if old is None:  # the first step, which every sequence has
            return new
        if isinstance(new, tuple):
            return tuple(join(a, b) for a, b in zip(new, old))
        return new if new.shape[0] == old.shape[0] else cat([new, old[new.shape[0]:]], 0)

    sizes = [int(b) for b in packed.batch_sizes.tolist()]
    data, finals = packed.data, []
    for k in range(layer.num_layers):
        cell = layer._cell(k)
        projected = cell._input_projection(data)
        state = rows(first[k], packed.sorted_indices)  # (None: the cell starts at zeros)
        outputs, start = [], 0
        for b in sizes:
            new = cell._step(projected[start:start + b], rows(state, slice(0, b)))
            outputs.append(new[0] if isinstance(new, tuple) else new)
            state, start = join(new, state), start + b
        data = layer._between_layers(cat(outputs, 0), k)
        finals.append(rows(state, packed.unsorted_indices))
    return PackedSequence(data, packed.batch_sizes, packed.sorted_indices,
                          packed.unsorted_indices), finals
