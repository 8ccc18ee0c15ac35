"""The 3-D layers (pools, transposed convolution, batch norm, channel dropouts): values
against PyTorch's (its numbers written here), gradients against central differences, the
CuPy stand-in, and the errors.  Each is a composite of primitives that already have rules
(the 3-D pools are two 2-D pools, the transposed convolution a conv3d)."""

from __future__ import annotations

import numpy as np
import pytest

import difflab as dl
from difflab.autograd import gradcheck

F = dl.nn.functional
rng = np.random.default_rng(0)


def t64(*shape, requires_grad=True):
    return dl.tensor(rng.standard_normal(shape), dtype=dl.float64, requires_grad=requires_grad)


def volume():
    """(2, 2, 3, 4, 4), the values PyTorch's numbers below were computed from."""
    x = np.arange(2 * 2 * 3 * 4 * 4, dtype=np.float64).reshape(2, 2, 3, 4, 4)
    return dl.tensor((x * 0.37 % 5.0) - 2.0)


def box_reference(x, kernel, stride, padding, dilation, reduce, fill):
    """Every (dilated) box of a padded (N, C, D, H, W) array reduced, by loops."""
    x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding], constant_values=fill)
    sizes = [(x.shape[2 + i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1
             for i in range(3)]
    out = np.empty(x.shape[:2] + tuple(sizes))
    for i, j, k in np.ndindex(*sizes):
        box = x[:, :, i * stride[0]:i * stride[0] + dilation[0] * (kernel[0] - 1) + 1:dilation[0],
                j * stride[1]:j * stride[1] + dilation[1] * (kernel[1] - 1) + 1:dilation[1],
                k * stride[2]:k * stride[2] + dilation[2] * (kernel[2] - 1) + 1:dilation[2]]
        out[:, :, i, j, k] = reduce(box.reshape(box.shape[:2] + (-1,)), axis=-1)
    return out


# ------------------------------------------------------------------------------ 3-D pooling


def test_pool3d_match_pytorch():
    x = volume()
    out = F.max_pool3d(x, (2, 2, 2), (1, 2, 2), (1, 1, 0))
    assert out.shape == (2, 2, 4, 3, 2)
    assert np.allclose(out.flatten()[:12].tolist(), [-1.63, -0.89, 1.33, 2.07, 2.81, -1.45,
                                                     -0.71, 0.03, 2.25, 2.99, 2.81, -0.53])
    out = F.avg_pool3d(x, (3, 2, 2), (2, 1, 2), (1, 0, 1))
    assert out.shape == (2, 2, 2, 3, 3)
    assert np.allclose(out.flatten()[:12].tolist(),
                       [-0.266667, -0.163333, 0.103333, 0.226667, 0.823333, 0.596667,
                        0.303333, 0.56, 0.256667, 0.04, 0.45, 0.41], atol=1e-6)


@pytest.mark.parametrize("kernel,stride,padding,dilation", [
    ((2, 2, 2), (2, 2, 2), (0, 0, 0), (1, 1, 1)),
    ((3, 2, 3), (1, 2, 1), (1, 1, 0), (1, 1, 1)),
    ((2, 3, 2), (2, 1, 1), (1, 1, 1), (2, 1, 2)),
])
def test_pool3d_match_loops_and_have_gradients(kernel, stride, padding, dilation):
    x = t64(2, 2, 5, 6, 5)
    got = F.max_pool3d(x, kernel, stride, padding, dilation)
    assert np.allclose(got.array, box_reference(x.array, kernel, stride, padding, dilation,
                                                np.max, -np.inf))
    assert gradcheck(lambda x: F.max_pool3d(x, kernel, stride, padding, dilation), (x,))
    if dilation == (1, 1, 1):
        got = F.avg_pool3d(x, kernel, stride, padding)
        assert np.allclose(got.array, box_reference(x.array, kernel, stride, padding, dilation,
                                                    np.mean, 0.0))
        assert gradcheck(lambda x: F.avg_pool3d(x, kernel, stride, padding), (x,))


def test_max_pool3d_ties_go_to_the_first_maximum_in_dhw_order():
    x = dl.zeros(1, 1, 2, 2, 2, dtype=dl.float64, requires_grad=True)
    F.max_pool3d(x, 2).sum().backward()
    assert x.grad.flatten().tolist() == [1.0, 0, 0, 0, 0, 0, 0, 0]  # PyTorch's choice
    x = dl.tensor([[[[[0.0, 1.0], [1.0, 0.0]], [[1.0, 1.0], [0.0, 0.0]]]]], requires_grad=True)
    F.max_pool3d(x, 2).sum().backward()
    assert x.grad.flatten().tolist() == [0, 1.0, 0, 0, 0, 0, 0, 0]


def test_pool3d_options_unbatched_integer_and_layers():
    x = volume()
    assert np.allclose(F.avg_pool3d(x, 2, divisor_override=1).array,
                       F.avg_pool3d(x, 2).array * 8)
    assert np.allclose(F.max_pool3d(x[0], 2).array, F.max_pool3d(x, 2).array[0])  # unbatched
    ints = dl.arange(64).reshape(1, 1, 4, 4, 4)
    assert F.max_pool3d(ints, 2).dtype == dl.int64  # selection keeps the dtype
    assert F.avg_pool3d(ints, 2).dtype == dl.get_default_dtype()
    assert np.allclose(dl.nn.MaxPool3d(2, 1, 1)(x).array, F.max_pool3d(x, 2, 1, 1).array)
    assert np.allclose(dl.nn.AvgPool3d(3, 2, 1)(x).array, F.avg_pool3d(x, 3, 2, 1).array)
    assert repr(dl.nn.MaxPool3d((1, 2, 2))) == ("MaxPool3d(kernel_size=(1, 2, 2), stride=(1, 2, "
                                                "2), padding=0, dilation=1, ceil_mode=False)")
    assert repr(dl.nn.AvgPool3d(3, 2)) == "AvgPool3d(kernel_size=3, stride=2, padding=0)"
    assert dl.nn.MaxPool3d(2).state_dict() == {}


def test_pool3d_errors():
    x = volume()
    with pytest.raises(ValueError, match="4-D .* or 5-D"):
        F.max_pool3d(x[0, 0], 2)
    with pytest.raises(ValueError, match="at most half of the kernel"):
        F.avg_pool3d(x, 2, padding=(0, 2, 0))
    with pytest.raises(ValueError, match="kernel_size must be an int or a tuple of 3 ints"):
        F.max_pool3d(x, (2, 2))
    with pytest.raises(TypeError, match="kernel_size must be"):
        F.max_pool3d(x, 2.5)
    with pytest.raises(NotImplementedError, match="ceil_mode=True"):
        dl.nn.MaxPool3d(2, ceil_mode=True)(x)
    with pytest.raises(NotImplementedError, match="count_include_pad=False"):
        F.avg_pool3d(x, 2, count_include_pad=False)
    with pytest.raises(ValueError, match="divisor_override must be a positive int"):
        F.avg_pool3d(x, 2, divisor_override=0)


# ------------------------------------------------------------- transposed 3-D convolution


def test_conv_transpose3d_matches_pytorch():
    x = volume()[:, :, :2, :2, :2]
    w = dl.arange(2 * 3 * 8, dtype=dl.float64).reshape(2, 3, 2, 2, 2) * 0.1 - 1
    out = F.conv_transpose3d(x, w, stride=2, padding=(1, 0, 0), output_padding=(1, 0, 1))
    assert out.shape == (2, 3, 3, 4, 5)
    assert np.allclose(out.flatten()[:12].tolist(), [2.568, 2.444, 3.012, 2.962, 0.0, 2.32,
                                                     2.196, 2.912, 2.862, 0.0, 4.344, 4.516])


@pytest.mark.parametrize("options", [
    {}, {"stride": 2}, {"stride": (2, 1, 3), "padding": (1, 0, 1), "output_padding": (1, 0, 2)},
    {"groups": 2, "dilation": 2, "padding": 1}, {"padding": (0, 2, 0)},
])
def test_conv_transpose3d_is_the_adjoint_of_conv3d(options):
    """<conv3d(y), x> = <y, conv_transpose3d(x)> for the same weight: the definition."""
    groups = options.get("groups", 1)
    x, w = t64(2, 4, 3, 6, 3), t64(4, 6 // groups, 2, 2, 2)
    y = F.conv_transpose3d(x, w, None, **options)
    conv = {k: v for k, v in options.items() if k != "output_padding"}
    z = t64(*y.shape, requires_grad=False)
    assert np.isclose(float((F.conv3d(z, w, None, **conv) * x).sum()), float((z * y).sum()))
    x, b = t64(1, 4, 2, 4, 2), t64(6)  # (small: gradcheck perturbs every entry)
    assert gradcheck(lambda x, w, b: F.conv_transpose3d(x, w, b, **options), (x, w, b))


def test_conv_transpose3d_layer_and_errors():
    layer = dl.nn.ConvTranspose3d(4, 2, 3, stride=2, padding=1, output_padding=1).double()
    assert layer.weight.shape == (4, 2, 3, 3, 3) and sorted(layer.state_dict()) == ["bias",
                                                                                   "weight"]
    assert layer(t64(1, 4, 2, 3, 2)).shape == (1, 2, 4, 6, 4)
    assert layer(t64(4, 2, 3, 2)).shape == (2, 4, 6, 4)  # unbatched
    assert repr(layer) == ("ConvTranspose3d(4, 2, kernel_size=(3, 3, 3), stride=(2, 2, 2), "
                           "padding=(1, 1, 1), output_padding=(1, 1, 1))")
    with pytest.raises(ValueError, match="expects 4 input channels"):
        layer(t64(1, 3, 2, 2, 2))
    with pytest.raises(ValueError, match="output_padding .* must be smaller"):
        F.conv_transpose3d(t64(1, 1, 2, 2, 2), t64(1, 1, 2, 2, 2), output_padding=1)
    with pytest.raises(ValueError, match="5-D tensor"):
        F.conv_transpose3d(t64(1, 1, 2, 2, 2), t64(1, 1, 2, 2))
    with pytest.raises(NotImplementedError, match="output_padding"):
        layer(t64(1, 4, 2, 2, 2), output_size=(4, 4, 4))


# ------------------------------------------------------------- batch norm and dropouts


def test_batchnorm3d_matches_pytorch_and_loads_its_state():
    bn = dl.nn.BatchNorm3d(2)
    y = bn(dl.arange(16.0).reshape(1, 2, 2, 2, 2))
    assert np.allclose(y[0, 0].flatten().tolist(), [-1.527525, -1.091089, -0.654653, -0.218218,
                                                    0.218218, 0.654653, 1.091089, 1.527525])
    assert np.allclose(bn.running_mean.tolist(), [0.35, 1.15])
    assert np.allclose(bn.running_var.tolist(), [1.5, 1.5])
    assert sorted(bn.state_dict()) == ["bias", "num_batches_tracked", "running_mean",
                                       "running_var", "weight"]
    x = t64(2, 3, 2, 3, 2)
    layer = dl.nn.BatchNorm3d(3).double()
    assert gradcheck(lambda x: layer(x), (x,))
    with pytest.raises(ValueError, match="BatchNorm3d expects a 5-D input"):
        layer(t64(2, 3, 4, 4))


def test_dropout3d_and_feature_alpha_dropout():
    dl.manual_seed(0)
    y = F.dropout3d(dl.ones(4, 8, 2, 2, 2), 0.5)
    per_channel = y.reshape(4, 8, -1)
    assert bool((per_channel.amax(-1) == per_channel.amin(-1)).all())
    assert set(y.flatten().tolist()) == {0.0, 2.0}
    assert dl.nn.Dropout3d(0.3).eval()(dl.ones(2, 2, 2, 2)).sum().item() == 16.0
    with pytest.raises(ValueError, match="4-D \\(unbatched\\) or 5-D"):
        F.dropout3d(dl.ones(2, 3), 0.5)
    # feature alpha dropout: one draw per (sample, channel); PyTorch's two values at p = 0.5
    y = F.feature_alpha_dropout(dl.ones(3, 4, 5), 0.5, training=True)
    assert bool((y.amax(-1) == y.amin(-1)).all())
    assert np.allclose(sorted(set(np.round(y.flatten().tolist(), 4))), [-0.7792, 1.6656])
    x = dl.ones(2, 3, 2, requires_grad=True)
    dl.nn.FeatureAlphaDropout(0.5)(x).sum().backward()   # the gradient is a · mask
    assert set(np.round(x.grad.flatten().tolist(), 4)) <= {0.0, 0.8864}
    assert F.feature_alpha_dropout(dl.ones(3), 0.5).tolist() == [1.0, 1.0, 1.0]  # eval
    assert F.feature_alpha_dropout(dl.ones(2, 3), 1.0, True).abs().sum().item() == 0.0
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        F.feature_alpha_dropout(dl.ones(3), 0.5, training=True)
    with pytest.raises(ValueError, match="between 0 and 1"):
        dl.nn.FeatureAlphaDropout(1.5)
    assert repr(dl.nn.FeatureAlphaDropout(0.2)) == "FeatureAlphaDropout(p=0.2, inplace=False)"


# ----------------------------------------------------------------------- on the GPU


def test_3d_layers_run_on_cuda(cuda):
    x = dl.tensor(rng.standard_normal((1, 2, 4, 4, 4)), device=cuda)
    layers = [dl.nn.MaxPool3d(2), dl.nn.AvgPool3d(2, 1, 1), dl.nn.BatchNorm3d(2),
              dl.nn.ConvTranspose3d(2, 3, 2, stride=2), dl.nn.Dropout3d(0.5),
              dl.nn.FeatureAlphaDropout(0.5)]
    for layer in layers:
        layer = layer.to(cuda).double()
        cpu = dl.tensor(x.cpu().numpy())
        y = layer(x).detach()
        assert y.device == cuda, type(layer).__name__
        if not isinstance(layer, (dl.nn.Dropout3d, dl.nn.FeatureAlphaDropout)):
            layer.cpu()
            expected = layer(cpu) if not isinstance(layer, dl.nn.BatchNorm3d) else \
                dl.nn.BatchNorm3d(2).double()(cpu)  # (a fresh one: the same batch statistics)
            assert np.allclose(y.cpu().numpy(), expected.detach().numpy())
