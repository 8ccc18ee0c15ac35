"""Packed sequences (pack_padded_sequence, pad_packed_sequence, PackedSequence input to the
recurrent layers): what a stranger's variable-length LSTM program relies on.

The defining property: a packed batch gives every sequence exactly what the layer gives
that sequence alone, unpadded, and the padding never reaches a state or a gradient.
"""

from __future__ import annotations

import numpy as np
import pytest

import difflab as dl
from difflab import nn
from difflab.autograd import gradcheck, gradgradcheck
from difflab.nn.utils.rnn import (
    PackedSequence,
    pack_padded_sequence,
    pack_sequence,
    pad_packed_sequence,
    pad_sequence,
)

rng = np.random.default_rng(0)
LENGTHS = [2, 5, 3, 5]  # unsorted, with a tie


def t64(*shape):
    return dl.tensor(rng.standard_normal(shape), dtype=dl.float64, requires_grad=True)


def states(net, h0):
    """(h0, c0) for an LSTM, h0 for the others."""
    return (h0, h0 * 0.5) if isinstance(net, nn.LSTM) else h0


def last(state):
    return state[0] if isinstance(state, tuple) else state


@pytest.mark.parametrize("cls", [nn.RNN, nn.GRU, nn.LSTM])
@pytest.mark.parametrize("batch_first", [False, True])
def test_a_packed_batch_gives_each_sequence_what_it_gets_alone(cls, batch_first):
    dl.manual_seed(1)
    net = cls(3, 4, num_layers=2, batch_first=batch_first).double()
    seqs = [t64(n, 3) for n in LENGTHS]
    h0 = t64(2, len(LENGTHS), 4)
    padded = pad_sequence(seqs, batch_first=batch_first, padding_value=float("nan"))  # never read
    packed = pack_padded_sequence(padded, dl.tensor(LENGTHS), batch_first=batch_first,
                                  enforce_sorted=False)
    out, final = net(packed, states(net, h0))
    assert isinstance(out, PackedSequence)
    unpacked, lengths = pad_packed_sequence(out, batch_first=batch_first, padding_value=-1.0)
    assert lengths.tolist() == LENGTHS and lengths.dtype == dl.int64
    by_sequence = unpacked if batch_first else unpacked.transpose(0, 1)
    for i, s in enumerate(seqs):
        alone_state = states(net, h0[:, i:i + 1])
        x = s.unsqueeze(0) if batch_first else s.unsqueeze(1)
        alone_out, alone_final = net(x, alone_state)
        alone_out = alone_out[0] if batch_first else alone_out[:, 0]
        np.testing.assert_allclose(by_sequence[i, :LENGTHS[i]].detach().numpy(),
                                   alone_out.detach().numpy(), rtol=1e-12, atol=1e-12)
        assert np.all(by_sequence[i, LENGTHS[i]:].detach().numpy() == -1.0)
        for got, want in zip(final if isinstance(final, tuple) else (final,),
                             alone_final if isinstance(alone_final, tuple) else (alone_final,)):
            np.testing.assert_allclose(got[:, i].detach().numpy(),
                                       want[:, 0].detach().numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cls", [nn.RNN, nn.GRU, nn.LSTM])
def test_gradients_through_a_packed_layer(cls):
    dl.manual_seed(2)
    net = cls(2, 3).double()
    x = t64(4, 3, 2)

    def f(x):
        packed = pack_padded_sequence(x, [2, 4, 1], enforce_sorted=False)
        out, final = net(packed)
        return pad_packed_sequence(out)[0].sum() + (last(final) ** 2).sum()

    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))
    f(x).backward()
    # the padding (steps past each length) gets no gradient
    assert np.all(x.grad.numpy()[2:, 0] == 0) and np.all(x.grad.numpy()[1:, 2] == 0)
    assert np.any(x.grad.numpy()[3, 1] != 0)


def test_the_input_gradient_agrees_across_methods():
    dl.manual_seed(3)
    net = nn.GRU(2, 2).double().requires_grad_(False)

    def f(x):
        out, h = net(pack_padded_sequence(x.reshape(2, 2, 2), [2, 1]))
        return dl.sum(pad_packed_sequence(out)[0]) + dl.sum(h)

    x = rng.uniform(-1.0, 1.0, 8)
    results = {m: np.asarray(dl.grad(f, method=m)(x), dtype=float)
               for m in ("reverse", "forward", "numeric")}
    np.testing.assert_allclose(results["forward"], results["reverse"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(results["numeric"], results["reverse"], rtol=1e-7, atol=1e-7)


def test_packing_layout_and_round_trip():
    a, b, c = dl.tensor([1.0, 2.0, 3.0]), dl.tensor([4.0]), dl.tensor([5.0, 6.0])
    packed = pack_sequence([a, b, c], enforce_sorted=False)
    assert packed.data.tolist() == [1.0, 5.0, 4.0, 2.0, 6.0, 3.0]
    assert packed.batch_sizes.tolist() == [3, 2, 1]
    assert packed.sorted_indices.tolist() == [0, 2, 1]
    assert packed.unsorted_indices.tolist() == [0, 2, 1]
    padded, lengths = pad_packed_sequence(packed, batch_first=True, total_length=4)
    assert padded.tolist() == [[1.0, 2.0, 3.0, 0.0], [4.0, 0.0, 0.0, 0.0],
                               [5.0, 6.0, 0.0, 0.0]]
    assert lengths.tolist() == [3, 1, 2]
    sorted_packed = pack_sequence([a, c, b])  # already longest first
    assert sorted_packed.sorted_indices is None
    assert pad_packed_sequence(sorted_packed)[1].tolist() == [3, 2, 1]


def test_bad_lengths_say_what_is_wrong():
    x = dl.zeros(3, 2, 1)
    with pytest.raises(ValueError, match="decreasing order"):
        pack_padded_sequence(x, [1, 3])
    with pytest.raises(ValueError, match="2 sequences"):
        pack_padded_sequence(x, [3])
    with pytest.raises(ValueError, match=r"in 1\.\.3"):
        pack_padded_sequence(x, [4, 1])
    with pytest.raises(ValueError, match=r"in 1\.\.3"):
        pack_padded_sequence(x, [3, 0])
    with pytest.raises(ValueError, match="shorter than the longest"):
        pad_packed_sequence(pack_padded_sequence(x, [3, 2]), total_length=2)


def test_meta_device_is_refused_with_a_way_out():
    with pytest.raises(ValueError, match="'meta' device .* not supported"):
        nn.Linear(2, 2).to("meta")
