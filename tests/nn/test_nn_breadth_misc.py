"""The 3-D padding layers, ChannelShuffle, Softmax2d and the fixed-mode upsampling layers
(with F.channel_shuffle and the deprecated F.upsample* names): values against PyTorch's
numbers (written here), gradients, the CuPy stand-in and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import difflab as dl
from difflab.autograd import gradcheck

F = dl.nn.functional
nn = dl.nn


def volume():
    """(1, 2, 2, 2, 3), the values PyTorch's numbers below were computed from."""
    x = (np.arange(24.0).reshape(1, 2, 3, 4) * 0.5 - 3)[:, :, None].repeat(2, 2)
    return dl.tensor(x[:, :, :, :2, :3] + np.arange(2.0).reshape(1, 1, 2, 1, 1))


@pytest.mark.parametrize("layer,shape,head,total", [
    (nn.ReflectionPad3d((1, 1, 1, 0, 1, 1)), (1, 2, 4, 3, 5),
     [0.5, 0.0, 0.5, 1.0, 0.5, -1.5, -2.0, -1.5, -1.0, -1.5], 280.0),
    (nn.ReplicationPad3d((2, 0, 0, 1, 1, 0)), (1, 2, 3, 3, 5),
     [-3.0, -3.0, -3.0, -2.5, -2.0, -1.0, -1.0, -1.0, -0.5, 0.0], 177.0),
    (nn.CircularPad3d((1, 2, 0, 1, 1, 1)), (1, 2, 4, 3, 6),
     [-1.0, -2.0, -1.5, -1.0, -2.0, -1.5, 1.0, 0.0, 0.5, 1.0], 240.0),
    (nn.ConstantPad3d((0, 1, 1, 0, 0, 1), -1.5), (1, 2, 3, 3, 4),
     [-1.5, -1.5, -1.5, -1.5, -3.0, -2.5, -2.0, -1.5, -1.0, -0.5], -24.0),
])
def test_3d_padding_layers_match_pytorch(layer, shape, head, total):
    x = volume()
    y = layer(x)
    assert y.shape == shape
    assert np.allclose(y.flatten()[:10].tolist(), head) and np.isclose(y.sum().item(), total)
    assert layer(x[0]).shape == shape[1:]  # unbatched
    x = dl.tensor(np.random.default_rng(0).standard_normal((1, 1, 2, 2, 3)), requires_grad=True)
    assert gradcheck(layer, (x,))


def test_3d_padding_reprs_and_errors():
    assert repr(nn.ZeroPad3d(1)) == "ZeroPad3d((1, 1, 1, 1, 1, 1))"
    assert repr(nn.ConstantPad3d(1, 3.5)) == "ConstantPad3d(padding=(1, 1, 1, 1, 1, 1), value=3.5)"
    assert repr(nn.ConstantPad2d(1, 3.5)) == "ConstantPad2d(padding=(1, 1, 1, 1), value=3.5)"
    assert repr(nn.ReflectionPad3d((1, 0, 1, 0, 1, 0))) == "ReflectionPad3d((1, 0, 1, 0, 1, 0))"
    assert nn.ZeroPad3d((0, 1, 0, 0, 1, 0))(dl.ones(1, 1, 1, 1, 1)).sum().item() == 1.0
    with pytest.raises(ValueError, match="6 amounts \\(left, right, top, bottom, front, back\\)"):
        nn.ZeroPad3d((1, 1))
    with pytest.raises(TypeError):
        nn.ReplicationPad3d(1.5)


def test_channel_shuffle():
    x = dl.arange(6.0).reshape(1, 6, 1)
    assert F.channel_shuffle(x, 2).flatten().tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    assert nn.ChannelShuffle(3)(x).flatten().tolist() == [0.0, 2.0, 4.0, 1.0, 3.0, 5.0]
    assert repr(nn.ChannelShuffle(3)) == "ChannelShuffle(groups=3)"
    y = dl.tensor(np.random.default_rng(1).standard_normal((2, 6, 2, 2)), requires_grad=True)
    assert gradcheck(lambda y: F.channel_shuffle(y, 3), (y,))
    # shuffling by g then by C/g puts the channels back
    assert dl.equal(F.channel_shuffle(F.channel_shuffle(y, 2), 3), y)
    with pytest.raises(RuntimeError, match="divisible by groups. Got 3 channels and 2 groups"):
        F.channel_shuffle(dl.ones(1, 3, 2, 2), 2)
    with pytest.raises(RuntimeError, match="expects input with > 2 dims"):
        F.channel_shuffle(dl.ones(1, 4), 2)
    with pytest.raises(RuntimeError, match="must be positive"):
        nn.ChannelShuffle(0)(dl.ones(1, 4, 2))


def test_softmax2d():
    y = nn.Softmax2d()(dl.tensor([[[1.0, 2.0]], [[3.0, 0.0]]]))  # (C=2, H=1, W=2)
    assert np.allclose(y.flatten().tolist(), [0.119203, 0.880797, 0.880797, 0.119203])
    x = dl.tensor(np.random.default_rng(2).standard_normal((2, 3, 2, 2)), requires_grad=True)
    assert np.allclose(nn.Softmax2d()(x).sum(1).detach().numpy(), 1.0)
    assert gradcheck(nn.Softmax2d(), (x,))
    with pytest.raises(ValueError, match="expected input to be 3D or 4D, got 2D instead"):
        nn.Softmax2d()(dl.ones(2, 2))


def test_upsampling_layers_and_the_deprecated_functions():
    x = dl.arange(6.0).reshape(1, 1, 2, 3)
    assert np.allclose(nn.UpsamplingBilinear2d(scale_factor=2)(x).flatten()[:8].tolist(),
                       [0.0, 0.4, 0.8, 1.2, 1.6, 2.0, 1.0, 1.4])  # corners aligned
    assert nn.UpsamplingNearest2d(size=(3, 4))(x).flatten().tolist() == [
        0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 3.0, 3.0, 4.0, 5.0]
    assert repr(nn.UpsamplingNearest2d(scale_factor=2)) == (
        "UpsamplingNearest2d(scale_factor=2, mode='nearest')")
    with pytest.warns(UserWarning, match="upsample_bilinear is deprecated"):
        old = F.upsample_bilinear(x, scale_factor=2)
    assert dl.equal(old, F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True))
    with pytest.warns(UserWarning, match="upsample_nearest is deprecated"):
        assert dl.equal(F.upsample_nearest(x, size=(3, 4)), nn.UpsamplingNearest2d((3, 4))(x))
    with pytest.warns(UserWarning, match="upsample is deprecated"):
        assert F.upsample(x, scale_factor=3).shape == (1, 1, 6, 9)
    with pytest.raises(ValueError):
        nn.UpsamplingNearest2d()(x)  # neither size nor scale_factor


def test_linear_interpolation_of_integers_computes_in_floating_point():
    """An integer image interpolated (bi)linearly gave int64 with its weights cut to 0:
    [0, 3] became [0, 0, 0, 3]; now the default float, as every layer that needs fractions."""
    ints = dl.tensor([[[[0, 3]]]])
    y = nn.UpsamplingBilinear2d(size=(1, 4))(ints)
    assert y.dtype == dl.get_default_dtype() and y.flatten().tolist() == [0.0, 1.0, 2.0, 3.0]
    y = F.interpolate(dl.tensor([[[0, 3]]]), size=4, mode="linear", align_corners=True)
    assert y.flatten().tolist() == [0.0, 1.0, 2.0, 3.0]
    assert F.interpolate(ints, scale_factor=2).dtype == dl.int64  # nearest only selects


def test_misc_layers_on_cuda(cuda):
    x = dl.tensor(volume().numpy(), device=cuda)
    for layer in (nn.ReflectionPad3d(1), nn.ReplicationPad3d(1), nn.CircularPad3d(1),
                  nn.ConstantPad3d(1, 2.0), nn.ZeroPad3d(1)):
        y = layer(x)
        assert y.device == cuda and np.allclose(y.cpu().numpy(), layer(volume()).numpy())
    img = dl.tensor(np.arange(16.0).reshape(1, 4, 2, 2), device=cuda)
    for layer in (nn.ChannelShuffle(2), nn.Softmax2d(), nn.UpsamplingBilinear2d(scale_factor=2),
                  nn.UpsamplingNearest2d(scale_factor=2)):
        y = layer(img)
        assert y.device == cuda
        assert np.allclose(y.cpu().numpy(), layer(dl.tensor(img.cpu().numpy())).numpy())


# ------------------------------------------------------------ LP pools, RReLU, in-place


def test_lp_pools_match_pytorch():
    x = dl.tensor([[[0.5, -1.0, 2.0, 1.5, -0.5, 3.0]]], dtype=dl.float64, requires_grad=True)
    y = F.lp_pool1d(x, 3, 3, stride=2)
    assert np.allclose(y.flatten().tolist(), [1.9242505656, 2.2407023733])
    y.sum().backward()
    assert np.allclose(x.grad.flatten().tolist(), [0.0675175637, 0.2700702548, 1.8769751965,
                                                   0.4481404747, 0.0497933861, 0.0])
    z = dl.arange(1.0, 25.0, dtype=dl.float64).reshape(1, 1, 2, 3, 4) / 10
    assert np.allclose(F.lp_pool3d(z, 1.5, (2, 2, 2), stride=(1, 1, 2)).flatten().tolist(),
                       [4.2331642978, 4.9541400387, 5.7003801914, 6.4610313956])
    assert np.allclose(nn.LPPool2d(2, (2, 3))(z[0]).flatten().tolist(),
                       [1.1135528726, 3.9547439867])
    z.requires_grad_()
    assert gradcheck(lambda z: F.lp_pool3d(z, 1.5, (2, 2, 2), stride=(1, 1, 2)), (z,))
    assert repr(nn.LPPool1d(1.5, 2, stride=1)) == (
        "LPPool1d(norm_type=1.5, kernel_size=2, stride=1, ceil_mode=False)")
    with pytest.raises(NotImplementedError, match="ceil_mode=True"):
        nn.LPPool2d(2, 2, ceil_mode=True)(z[0])
    with pytest.raises(TypeError, match="norm_type must be a number"):
        F.lp_pool2d(z[0], "2", 2)


def test_rrelu_and_the_in_place_activations():
    x = dl.tensor([-1.0, 2.0, -3.0, 4.0])
    assert np.allclose(F.rrelu(x).tolist(), [-0.2291667, 2.0, -0.6875, 4.0])  # the mean slope
    assert np.allclose(nn.RReLU(0.1, 0.3).eval()(x).tolist(), [-0.2, 2.0, -0.6, 4.0])
    dl.manual_seed(0)
    negatives = dl.full((2000,), -1.0, dtype=dl.float64, requires_grad=True)
    y = nn.RReLU()(negatives)  # training: a slope per element in [1/8, 1/3]
    slopes = -y.detach().numpy()
    assert slopes.min() >= 1 / 8 and slopes.max() <= 1 / 3 and len(set(slopes)) > 1000
    y.sum().backward()
    assert np.allclose(negatives.grad.numpy(), slopes)  # the derivative: the slope drawn
    assert not dl.equal(F.rrelu(-dl.ones(50), training=True), F.rrelu(-dl.ones(50), training=True))
    t = dl.tensor([-1.0, 2.0])
    assert F.rrelu_(t, 0.1, 0.3) is t and np.allclose(t.tolist(), [-0.2, 2.0])
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal"):
        F.rrelu(x, 0.5, 0.1)
    t = dl.tensor([-1.0, 2.0])
    assert F.selu_(t) is t and np.allclose(t.tolist(), [-1.1113307, 2.1014018])
    t = dl.tensor([-1.0, 2.0])
    assert F.celu_(t, 2.0) is t and np.allclose(t.tolist(), [-0.7869387, 2.0])
    leaf = dl.tensor([-1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError):
        F.selu_(leaf)
    assert repr(nn.RReLU()) == "RReLU(lower=0.125, upper=0.3333333333333333)"


def test_lp_pool_and_rrelu_on_cuda(cuda):
    x = dl.tensor(np.abs(np.random.default_rng(3).standard_normal((1, 2, 4, 4))), device=cuda)
    for layer in (nn.LPPool2d(2, 2), nn.RReLU().eval()):
        y = layer(x)
        assert y.device == cuda
        assert np.allclose(y.cpu().numpy(), layer(dl.tensor(x.cpu().numpy())).numpy())
    assert nn.RReLU()(-x).device == cuda


# -------------------------------------------------------------------- Buffer, NLLLoss2d


class _WithBuffers(nn.Module):
    def __init__(self):
        super().__init__()
        self.count = nn.Buffer(dl.zeros(()))
        self.cache = nn.Buffer(dl.ones(2), persistent=False)
        self.weight = nn.Parameter(dl.ones(2))


def test_buffer_registers_itself_like_register_buffer():
    m = _WithBuffers()
    assert [name for name, _ in m.named_buffers()] == ["count", "cache"]
    assert list(m.state_dict()) == ["weight", "count"]  # the cache is not persistent
    assert isinstance(m.count, nn.Buffer) and not m.count.requires_grad
    assert [name for name, _ in m.named_parameters()] == ["weight"]
    m.weight = nn.Buffer(dl.zeros(2))  # a parameter's name taken by a buffer
    assert [name for name, _ in m.named_parameters()] == []
    assert list(m.state_dict()) == ["count", "weight"]
    m.double()
    assert m.count.dtype == dl.float64 and m.cache.dtype == dl.float64
    m.load_state_dict({"count": dl.tensor(5.0), "weight": dl.ones(2)})
    assert m.count.item() == 5.0
    t = dl.ones(3)
    b = nn.Buffer(t)
    b.add_(1)
    assert t.tolist() == [2.0, 2.0, 2.0]  # shares the memory, as in PyTorch
    assert nn.Buffer(dl.ones(1, requires_grad=True)).requires_grad
    assert nn.Buffer().shape == (0,)


def test_nllloss2d_is_nllloss_and_warns():
    with pytest.warns(UserWarning, match="`NLLLoss2d` has been deprecated"):
        loss = nn.NLLLoss2d(reduction="sum")
    logp = dl.log_softmax(dl.tensor(np.random.default_rng(4).standard_normal((2, 3, 2, 2))), 1)
    target = dl.tensor([[[0, 1], [2, 1]], [[2, 2], [0, 1]]])
    assert np.isclose(loss(logp, target).item(), nn.NLLLoss(reduction="sum")(logp, target).item())
    assert isinstance(loss, nn.NLLLoss)


# ---------------------------------------------------------------- the recurrent bases


def test_rnn_bases_are_the_recurrent_layers_bases():
    for layer in (nn.RNN(3, 4), nn.LSTM(3, 4), nn.GRU(3, 4)):
        assert isinstance(layer, nn.RNNBase)
    for cell in (nn.RNNCell(3, 4), nn.LSTMCell(3, 4), nn.GRUCell(3, 4)):
        assert isinstance(cell, nn.RNNCellBase) and cell.bias is True
    assert nn.RNN(3, 4).mode == "RNN_TANH" and nn.RNN(3, 4, nonlinearity="relu").mode == "RNN_RELU"
    assert (nn.LSTM(3, 4).mode, nn.GRU(3, 4).mode) == ("LSTM", "GRU")
    base = nn.RNNBase("GRU", 3, 4, num_layers=2, bias=False)
    assert sorted(base.state_dict()) == ["weight_hh_l0", "weight_hh_l1", "weight_ih_l0",
                                         "weight_ih_l1"]
    assert base.weight_ih_l0.shape == (12, 3)  # three gates
    # the same parameters as the GRU it describes: its state_dict loads into one
    gru = nn.GRU(3, 4, num_layers=2, bias=False)
    gru.load_state_dict(base.state_dict())
    assert dl.equal(gru.weight_hh_l1, base.weight_hh_l1)
    cell = nn.RNNCellBase(3, 5, False, num_chunks=4)
    assert cell.weight_hh.shape == (20, 5) and cell.bias_ih is None
    with pytest.raises(ValueError, match="Unrecognized RNN mode"):
        nn.RNNBase("ELMAN", 3, 4)
    with pytest.raises(NotImplementedError, match="proj_size"):
        nn.RNNBase("LSTM", 3, 4, proj_size=2)
    with pytest.raises(ValueError, match="nonlinearity must be 'tanh' or 'relu'"):
        nn.RNN(3, 4, nonlinearity="sigmoid")


def test_a_saved_lstm_round_trips_with_its_mode(tmp_path):
    lstm = nn.LSTM(3, 4, num_layers=2)
    dl.save(lstm, tmp_path / "lstm.pt")
    again = dl.load(tmp_path / "lstm.pt", weights_only=False)
    x = dl.randn(5, 1, 3)
    assert again.mode == "LSTM" and dl.allclose(again(x)[0], lstm(x)[0])


# ------------------------------------------------------------- the adaptive softmax


def _adaptive_softmax():
    """PyTorch's layer (8 features, 10 classes, cutoffs [3, 6], div_value 2) with weights set
    by a formula, so its numbers below are PyTorch's."""
    asm = nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0)
    asm.load_state_dict({k: dl.tensor(np.arange(v.numel(), dtype=np.float32).reshape(
        tuple(v.shape)) * 0.37 % 1.0 - 0.5) for k, v in asm.state_dict().items()})
    return asm


def test_adaptive_log_softmax_matches_pytorch():
    asm = _adaptive_softmax()
    assert list(asm.state_dict()) == ["head.weight", "tail.0.0.weight", "tail.0.1.weight",
                                      "tail.1.0.weight", "tail.1.1.weight"]
    x = dl.arange(32.0).reshape(4, 8) * 0.11 % 1.3 - 0.6
    out = asm(x, dl.tensor([0, 4, 9, 2]))
    assert out._fields == ("output", "loss")
    assert np.allclose(out.output.tolist(), [-1.1891646, -2.2054067, -3.0993657, -1.6562662])
    assert np.isclose(out.loss.item(), 2.0375509)
    assert np.allclose(asm.log_prob(x)[1].tolist(), [
        -2.1301839, -1.8549840, -1.8597841, -2.2646382, -2.2054067, -2.6433740, -2.5012498,
        -2.7567380, -2.7370260, -2.6093140])
    assert asm.predict(x).tolist() == [0, 1, 0, 0]
    one = asm(x[1], dl.tensor(4))  # unbatched
    assert one.output.shape == () and np.isclose(one.output.item(), -2.2054067)


def test_adaptive_log_softmax_gradients_and_errors():
    asm = _adaptive_softmax().double()
    x = dl.tensor(np.random.default_rng(6).standard_normal((3, 8)), requires_grad=True)
    target = dl.tensor([1, 5, 8])
    assert gradcheck(lambda x: asm(x, target).loss, (x,))
    asm(x, target).loss.backward()
    assert all(p.grad is not None for p in asm.parameters())  # the head and both tails
    with pytest.raises(RuntimeError, match="Target values should be in \\[0, 9\\]"):
        asm(x, dl.tensor([1, 10, 2]))
    with pytest.raises(RuntimeError, match="same size in the batch dimension"):
        asm(x, dl.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected"):
        asm(x, dl.tensor([[1, 2, 3]]))
    with pytest.raises(ValueError, match="cutoffs should be a sequence of unique"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, [6, 3])
    with pytest.raises(ValueError, match="cutoffs should be a sequence of unique"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 10])
    with pytest.raises(ValueError, match="length larger than 0"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, [])


def test_adaptive_log_softmax_on_cuda(cuda):
    asm = _adaptive_softmax().to(cuda)
    x = (dl.arange(32.0).reshape(4, 8) * 0.11 % 1.3 - 0.6).to(cuda)
    out = asm(x, dl.tensor([0, 4, 9, 2], device=cuda))
    assert out.loss.device == cuda and np.isclose(out.loss.item(), 2.0375509)
