"""Every new primitive of difflab.ops.nn_ops against central differences, in float64."""

import numpy as np
import pytest

import difflab as dl
import difflab.nn.functional as F
from difflab.autograd import gradcheck


def rand(*shape, seed=0, requires_grad=True, device="cpu"):
    rng = np.random.default_rng(seed + sum(shape))
    return dl.tensor(rng.standard_normal(shape), dtype=dl.float64, requires_grad=requires_grad,
                     device=device)


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4), (4,)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear(shape, bias, device):
    x, w = rand(*shape, device=device), rand(5, shape[-1], seed=1, device=device)
    b = rand(5, seed=2, device=device) if bias else None
    assert gradcheck(lambda x, w, b=b: F.linear(x, w, b), (x, w) + ((b,) if bias else ()))


@pytest.mark.parametrize(
    "n,c,h,w,o,k,stride,padding,dilation,groups",
    [
        (2, 3, 5, 5, 4, 3, 1, 0, 1, 1),
        (1, 2, 6, 5, 2, 3, 2, 1, 1, 1),
        (1, 2, 7, 7, 4, 3, 1, 2, 2, 2),
        (2, 4, 5, 4, 4, 3, 1, 1, 1, 4),  # depthwise
        (1, 3, 4, 4, 2, 1, 1, 0, 1, 1),  # pointwise
        (1, 2, 6, 6, 2, (2, 3), (2, 1), (1, 0), 1, 1),
    ],
)
def test_conv2d(n, c, h, w, o, k, stride, padding, dilation, groups, device):
    kh, kw = (k, k) if isinstance(k, int) else k
    x = rand(n, c, h, w, device=device)
    weight = rand(o, c // groups, kh, kw, seed=3, device=device)
    bias = rand(o, seed=4, device=device)
    f = lambda x, weight, bias: F.conv2d(x, weight, bias, stride, padding, dilation, groups)  # noqa: E731
    assert gradcheck(f, (x, weight, bias))


def test_conv2d_matches_direct_loops():
    x, w = rand(1, 2, 5, 5, requires_grad=False), rand(3, 2, 3, 3, requires_grad=False)
    out = F.conv2d(x, w, padding=1).numpy()
    xp = np.pad(x.numpy(), ((0, 0), (0, 0), (1, 1), (1, 1)))
    ref = np.zeros((1, 3, 5, 5))
    for o in range(3):
        for i in range(5):
            for j in range(5):
                ref[0, o, i, j] = (xp[0, :, i:i + 3, j:j + 3] * w.numpy()[o]).sum()
    np.testing.assert_allclose(out, ref, rtol=1e-12)


def test_conv2d_second_derivative(device):
    x, w = rand(1, 2, 4, 4, device=device), rand(2, 2, 3, 3, seed=5, device=device)
    assert dl.autograd.gradgradcheck(lambda x, w: F.conv2d(x, w, padding=1, stride=2), (x, w))


@pytest.mark.parametrize("kernel,stride,padding,dilation", [(2, None, 0, 1), (3, 1, 1, 1),
                                                             (2, 1, 0, 2), ((3, 2), 2, 1, 1)])
def test_max_pool2d(kernel, stride, padding, dilation, device):
    x = rand(2, 2, 6, 6, device=device)
    assert gradcheck(lambda x: F.max_pool2d(x, kernel, stride, padding, dilation), (x,))


@pytest.mark.parametrize("kernel,stride,padding", [(2, None, 0), (3, 1, 1), (3, 2, 0)])
def test_avg_pool2d(kernel, stride, padding, device):
    x = rand(2, 2, 6, 5, device=device)
    assert gradcheck(lambda x: F.avg_pool2d(x, kernel, stride, padding), (x,))


@pytest.mark.parametrize("size", [1, 2, 3, (2, 3)])
def test_adaptive_avg_pool2d(size, device):
    x = rand(1, 2, 5, 6, device=device)
    assert gradcheck(lambda x: F.adaptive_avg_pool2d(x, size), (x,))


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_and_log_softmax(dim, device):
    x = rand(3, 4, device=device)
    assert gradcheck(lambda x: F.softmax(x, dim), (x,))
    assert gradcheck(lambda x: F.log_softmax(x, dim), (x,))
    assert dl.autograd.gradgradcheck(lambda x: F.log_softmax(x, dim), (x,))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_and_nll(reduction, device):
    x = rand(5, 4, device=device)
    t = dl.tensor([0, 3, 1, 1, -100], device=device)
    w = dl.tensor([1.0, 2.0, 0.5, 1.5], dtype=dl.float64, device=device)
    assert gradcheck(lambda x: F.cross_entropy(x, t, reduction=reduction), (x,))
    assert gradcheck(lambda x: F.cross_entropy(x, t, weight=w, reduction=reduction), (x,))
    assert gradcheck(lambda x: F.nll_loss(F.log_softmax(x, 1), t, reduction=reduction), (x,))


def test_cross_entropy_gradient_is_softmax_minus_onehot():
    x = rand(4, 3)
    t = dl.tensor([0, 2, 1, 2])
    F.cross_entropy(x, t).backward()
    p = np.exp(x.detach().numpy())
    p /= p.sum(1, keepdims=True)
    np.testing.assert_allclose(x.grad.numpy(), (p - np.eye(3)[t.numpy()]) / 4, rtol=1e-12)


def test_cross_entropy_spatial_and_probability_targets(device):
    x = rand(2, 3, 2, 2, device=device)
    t = dl.tensor(np.array([[[0, 1], [2, 0]], [[1, 1], [0, 2]]]), device=device)
    assert gradcheck(lambda x: F.cross_entropy(x, t), (x,))
    probs = dl.tensor(np.full((4, 3), 1 / 3), dtype=dl.float64, device=device)
    y = rand(4, 3, device=device)
    assert gradcheck(lambda y: F.cross_entropy(y, probs, label_smoothing=0.1), (y,))


def test_bce_losses(device):
    x = rand(6, device=device)
    t = dl.tensor(np.array([0, 1, 1, 0, 0.5, 1.0]), dtype=dl.float64, device=device)
    assert gradcheck(lambda x: F.binary_cross_entropy_with_logits(x, t), (x,))
    p = dl.tensor(np.linspace(0.1, 0.9, 6), dtype=dl.float64, requires_grad=True, device=device)
    assert gradcheck(lambda p: F.binary_cross_entropy(p, t, reduction="sum"), (p,))
    # the stable form agrees with the naive one where both are finite
    naive = F.binary_cross_entropy(x.sigmoid(), t).item()
    assert F.binary_cross_entropy_with_logits(x, t).item() == pytest.approx(naive, rel=1e-12)
    # and has the right gradient σ(0) - t at exactly x = 0
    z = dl.zeros(1, dtype=dl.float64, requires_grad=True, device=device)
    F.binary_cross_entropy_with_logits(z, dl.ones(1, dtype=dl.float64, device=device)).backward()
    assert z.grad.item() == pytest.approx(-0.5)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(approximate, device):
    x = rand(3, 5, device=device)
    assert gradcheck(lambda x: F.gelu(x, approximate), (x,))


def test_gelu_value():
    x = dl.tensor([-1.0, 0.0, 2.0], dtype=dl.float64)
    from math import erf, sqrt

    expected = [v * 0.5 * (1 + erf(v / sqrt(2))) for v in (-1.0, 0.0, 2.0)]
    np.testing.assert_allclose(F.gelu(x).numpy(), expected, rtol=1e-12)


def test_leaky_relu_and_elementwise_losses(device):
    x = rand(4, 3, device=device)
    y = rand(4, 3, seed=9, requires_grad=False, device=device)
    assert gradcheck(lambda x: F.leaky_relu(x, 0.2), (x,))
    assert gradcheck(lambda x: F.mse_loss(x, y), (x,))
    assert gradcheck(lambda x: F.l1_loss(x, y, reduction="sum"), (x,))


@pytest.mark.parametrize("axes_kind", ["batch2d", "batch1d", "layer"])
def test_normalization(axes_kind, device):
    if axes_kind == "batch2d":
        x, g, b = (rand(3, 2, 3, 3, device=device), rand(2, seed=1, device=device),
                   rand(2, seed=2, device=device))
        f = lambda x, g, b: F.batch_norm(x, None, None, g, b, training=True)  # noqa: E731
    elif axes_kind == "batch1d":
        x, g, b = (rand(5, 3, device=device), rand(3, seed=1, device=device),
                   rand(3, seed=2, device=device))
        f = lambda x, g, b: F.batch_norm(x, None, None, g, b, training=True)  # noqa: E731
    else:
        x, g, b = (rand(3, 4, 5, device=device), rand(4, 5, seed=1, device=device),
                   rand(4, 5, seed=2, device=device))
        f = lambda x, g, b: F.layer_norm(x, (4, 5), g, b)  # noqa: E731
    assert gradcheck(f, (x, g, b))


def test_normalization_second_derivative(device):
    x = rand(4, 3, device=device)
    assert dl.autograd.gradgradcheck(lambda x: F.layer_norm(x, (3,)), (x,))


def test_embedding_gradients_add_up_for_repeated_indices(device):
    w = rand(5, 3, device=device)
    idx = dl.tensor([[0, 2, 2], [4, 0, 1]], device=device)
    assert gradcheck(lambda w: F.embedding(idx, w), (w,))
    F.embedding(idx, w, padding_idx=2).sum().backward()
    np.testing.assert_array_equal(w.grad.cpu().numpy()[:, 0], [2, 1, 0, 0, 1])


def test_max_pool_ties_go_to_the_first_maximum_and_nan_propagates():
    x = dl.zeros(1, 1, 2, 4, dtype=dl.float64, requires_grad=True)  # every window is a tie
    F.max_pool2d(x, 2).sum().backward()
    assert x.grad.numpy()[0, 0].tolist() == [[1, 0, 1, 0], [0, 0, 0, 0]]
    y = dl.tensor([[[[1.0, float("nan")], [3.0, 2.0]]]])
    assert np.isnan(F.max_pool2d(y, 2).item())


def test_conv2d_keeps_its_columns_only_for_the_weight_gradient():
    # The columns (C·kh·kw x N·OH·OW numbers) serve W̄ alone: a frozen layer does not keep them.
    x = dl.tensor(np.random.default_rng(0).normal(size=(2, 3, 6, 6))).requires_grad_()
    w = dl.tensor(np.random.default_rng(1).normal(size=(4, 3, 3, 3)))
    frozen = F.conv2d(x, w)
    assert frozen.grad_fn.saved[2] is None
    trained = F.conv2d(x, w.requires_grad_())
    assert trained.grad_fn.saved[2].shape == (1, 3 * 3 * 3, 2 * 4 * 4)
    frozen.sum().backward()  # (and both still give x̄)
    trained.sum().backward()
