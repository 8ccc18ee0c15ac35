"""More of nn.functional (issue 27): distances, normalisations, channel dropout, transposed
convolution, unfold/fold, resizing, adaptive pooling, embedding bags and the remaining
losses, each against NumPy (or SciPy) and, where differentiable, central differences."""

from __future__ import annotations

import math

import numpy as np
import pytest

import difflab as dl
from difflab.autograd import gradcheck

F = dl.nn.functional
rng = np.random.default_rng(0)


def t64(*shape, requires_grad=True):
    return dl.tensor(rng.standard_normal(shape), dtype=dl.float64, requires_grad=requires_grad)


# ---------------------------------------------------------- transposed convolution, fold


def conv_transpose_reference(x, w, stride, padding, output_padding, dilation, groups):
    """Scatter each input pixel times the kernel into the output (the definition)."""
    n, c_in, h, wd = x.shape
    _, c_out_g, kh, kw = w.shape
    (sh, sw), (ph, pw), (oph, opw), (dh, dw) = stride, padding, output_padding, dilation
    oh = (h - 1) * sh - 2 * ph + dh * (kh - 1) + oph + 1
    ow = (wd - 1) * sw - 2 * pw + dw * (kw - 1) + opw + 1
    full = np.zeros((n, c_out_g * groups, oh + 2 * ph + kh * dh, ow + 2 * pw + kw * dw))
    per = c_in // groups
    for ci in range(c_in):
        g = ci // per
        for i in range(h):
            for j in range(wd):
                for a in range(kh):
                    for b in range(kw):
                        full[:, g * c_out_g:(g + 1) * c_out_g, i * sh + a * dh, j * sw + b * dw] \
                            += x[:, ci, i, j][:, None] * w[ci, :, a, b][None, :]
    return full[:, :, ph:ph + oh, pw:pw + ow]


@pytest.mark.parametrize("stride,padding,output_padding,dilation,groups", [
    (1, 0, 0, 1, 1), (2, 0, 0, 1, 1), (2, 1, 1, 1, 1), (3, 1, (2, 0), 1, 2), (1, 2, 0, 2, 1),
])
def test_conv_transpose2d_matches_its_definition_and_is_conv2ds_adjoint(
        stride, padding, output_padding, dilation, groups):
    pair = lambda v: v if isinstance(v, tuple) else (v, v)  # noqa: E731
    x, w, b = t64(2, 4, 3, 4), t64(4, 3, 3, 2), t64(3 * groups)
    args = (stride, padding, output_padding, groups, dilation)
    out = F.conv_transpose2d(x, w, b, *args)
    expected = conv_transpose_reference(x.array, w.array, pair(stride), pair(padding),
                                        pair(output_padding), pair(dilation), groups)
    assert np.allclose(out.array, expected + b.array[None, :, None, None])
    assert gradcheck(lambda x, w, b: F.conv_transpose2d(x, w, b, *args), (x, w, b))
    # <conv2d(y, W), x> = <y, conv_transpose2d(x, W)>: the transpose of the strided convolution
    y = t64(*out.shape, requires_grad=False)
    forward = F.conv2d(y, w.detach().reshape(4, 3 * groups // groups, 3, 2) if groups == 1
                       else w.detach(), None, stride, padding, dilation, groups)
    if forward.shape == x.shape:
        lhs = float((forward.array * x.array).sum())
        rhs = float((y.array * F.conv_transpose2d(x.detach(), w.detach(), None, *args).array)
                    .sum())
        assert math.isclose(lhs, rhs, rel_tol=1e-10)


def test_conv_transpose1d_and_layers():
    x, w = t64(2, 3, 5), t64(3, 2, 3)
    out = F.conv_transpose1d(x, w, None, 2, 1, 1)
    ref = F.conv_transpose2d(x.unsqueeze(2), w.unsqueeze(2), None, (1, 2), (0, 1), (0, 1))
    assert np.allclose(out.array, ref.array.squeeze(2)) and out.shape == (2, 2, 10)
    layer = dl.nn.ConvTranspose2d(3, 6, 3, stride=2, padding=1, output_padding=1, groups=3)
    assert layer.weight.shape == (3, 2, 3, 3) and layer(dl.randn(1, 3, 4, 4)).shape == \
        (1, 6, 8, 8)
    assert dl.nn.ConvTranspose1d(3, 2, 4, stride=2)(dl.randn(2, 3, 5)).shape == (2, 2, 12)
    with pytest.raises(ValueError, match="output_padding"):
        F.conv_transpose2d(t64(1, 1, 2, 2), t64(1, 1, 2, 2), stride=1, output_padding=1)


def test_unfold_matches_im2col_and_fold_is_its_adjoint():
    x = t64(2, 3, 5, 6)
    cols = F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))
    padded = np.pad(x.array, ((0, 0), (0, 0), (1, 1), (1, 1)))
    expected = []
    for i in range(0, padded.shape[2] - 1, 2):
        for j in range(0, padded.shape[3] - 4):
            expected.append(padded[:, :, i:i + 2, j:j + 5:2].reshape(2, -1))
    assert np.allclose(cols.array, np.stack(expected, -1))
    y = t64(*cols.shape)
    folded = F.fold(y, (5, 6), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))
    assert folded.shape == x.shape
    assert math.isclose(float((cols.array * y.array).sum()),
                        float((x.array * folded.array).sum()), rel_tol=1e-10)
    assert gradcheck(lambda y: F.fold(y, (5, 6), (2, 3), (1, 2), 1, (2, 1)), (y,))
    assert np.allclose(dl.nn.Unfold(2)(x).array, F.unfold(x, 2).array)
    assert dl.nn.Fold((5, 6), 2)(F.unfold(x, 2)).shape == x.shape
    with pytest.raises(RuntimeError, match="expected 20 blocks"):
        F.fold(t64(1, 4, 7), (5, 6), 2)


# ------------------------------------------------------------------------------ resizing


def test_interpolate_nearest_linear_bilinear():
    x = t64(1, 2, 3)
    assert np.allclose(F.interpolate(x, scale_factor=2).array, np.repeat(x.array, 2, -1))
    linear = F.interpolate(x, size=5, mode="linear", align_corners=True).array
    assert np.allclose(linear, np.stack([[np.interp(np.linspace(0, 2, 5), [0, 1, 2], row)
                                          for row in x.array[0]]]))
    half = F.interpolate(x, scale_factor=2, mode="linear").array  # align_corners=False
    src = np.clip((np.arange(6) + 0.5) / 2 - 0.5, 0, None)
    assert np.allclose(half, np.stack([[np.interp(src, [0, 1, 2], row) for row in x.array[0]]]))
    img = t64(1, 1, 3, 4)
    up = F.interpolate(img, size=(5, 7), mode="bilinear", align_corners=True).array[0, 0]
    rows = np.stack([np.interp(np.linspace(0, 3, 7), range(4), r) for r in img.array[0, 0]])
    expected = np.stack([np.interp(np.linspace(0, 2, 5), range(3), c) for c in rows.T]).T
    assert np.allclose(up, expected)
    assert gradcheck(lambda t: F.interpolate(t, scale_factor=(1.5, 2), mode="bilinear"), (img,))
    assert dl.nn.Upsample(scale_factor=2, mode="nearest")(img).shape == (1, 1, 6, 8)
    with pytest.raises(NotImplementedError, match="mode 'lanczos' is not supported"):
        F.interpolate(img, scale_factor=2, mode="lanczos")


def test_pixel_shuffle_and_unshuffle():
    x = t64(2, 8, 3, 4)
    out = F.pixel_shuffle(x, 2)
    expected = x.array.reshape(2, 2, 2, 2, 3, 4).transpose(0, 1, 4, 2, 5, 3).reshape(2, 2, 6, 8)
    assert np.array_equal(out.array, expected)
    assert np.array_equal(F.pixel_unshuffle(out, 2).array, x.array)
    assert np.array_equal(dl.nn.PixelShuffle(2)(x).array, expected)
    assert np.array_equal(dl.nn.PixelUnshuffle(2)(out).array, x.array)


# ------------------------------------------------------------------- distances and norms


def test_distances_and_normalize():
    from scipy.spatial.distance import pdist

    a, b = t64(4, 3), t64(4, 3)
    assert np.allclose(F.pairwise_distance(a, b).array,
                       np.linalg.norm(a.array - b.array + 1e-6, axis=-1))
    assert np.allclose(F.pairwise_distance(a, b, p=1).array,
                       np.abs(a.array - b.array + 1e-6).sum(-1))
    cos = (a.array * b.array).sum(1) / np.linalg.norm(a.array, axis=1) / np.linalg.norm(
        b.array, axis=1)
    assert np.allclose(F.cosine_similarity(a, b).array, cos)
    assert np.allclose(dl.nn.CosineSimilarity()(a, b).array, cos)
    assert np.allclose(dl.nn.PairwiseDistance(p=3)(a, b).array,
                       (np.abs(a.array - b.array + 1e-6) ** 3).sum(-1) ** (1 / 3))
    assert np.allclose(F.pdist(a).array, pdist(a.array))
    assert np.allclose(F.pdist(a, p=1).array, pdist(a.array, "cityblock"))
    unit = F.normalize(a, dim=1).array
    assert np.allclose(np.linalg.norm(unit, axis=1), 1.0)
    for f in (lambda a, b: F.cosine_similarity(a, b), lambda a, b: F.pairwise_distance(a, b),
              lambda a, b: F.pdist(a), lambda a, b: F.normalize(a, p=3.0)):
        assert gradcheck(f, (a, b))
    zero = dl.zeros(2, 3, dtype=dl.float64, requires_grad=True)
    (F.normalize(zero).sum() + F.cosine_similarity(zero, zero).sum()
     + F.pdist(zero).sum()).backward()
    assert np.isfinite(zero.grad.array).all()


def test_group_instance_rms_and_local_response_norms():
    x = t64(2, 6, 5)
    a = x.array
    g = a.reshape(2, 3, 10)
    expected = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)
                ).reshape(a.shape)
    w, b = t64(6), t64(6)
    out = F.group_norm(x, 3, w, b)
    assert np.allclose(out.array, expected * w.array[:, None] + b.array[:, None])
    assert np.allclose(dl.nn.GroupNorm(3, 6).double()(x).array, expected)
    assert gradcheck(lambda x, w, b: F.group_norm(x, 3, w, b), (x, w, b))
    inst = (a - a.mean(-1, keepdims=True)) / np.sqrt(a.var(-1, keepdims=True) + 1e-5)
    assert np.allclose(F.instance_norm(x).array, inst)
    layer = dl.nn.InstanceNorm1d(6, affine=True, track_running_stats=True).double()
    assert np.allclose(layer(x).array, inst)
    assert np.allclose(layer.running_mean.array, 0.1 * a.mean(-1).mean(0))
    layer.eval()
    assert not np.allclose(layer(x).array, inst)  # evaluation uses the running statistics
    img = t64(2, 3, 4, 4)
    assert np.allclose(dl.nn.InstanceNorm2d(3)(img).array,
                       (img.array - img.array.mean((2, 3), keepdims=True))
                       / np.sqrt(img.array.var((2, 3), keepdims=True) + 1e-5))
    rms = a / np.sqrt((a * a).mean(-1, keepdims=True) + np.finfo(np.float64).eps)
    assert np.allclose(F.rms_norm(x, [5]).array, rms)
    assert np.allclose(dl.nn.RMSNorm(5).double()(x).array, rms)
    assert gradcheck(lambda x: F.rms_norm(x, (6, 5), eps=1e-6), (x,))
    sq = np.pad(a * a, ((0, 0), (1, 1), (0, 0)))
    div = np.stack([sq[:, c:c + 3].mean(1) for c in range(6)], 1)
    assert np.allclose(F.local_response_norm(x, 3, 0.5, 0.75, 2.0).array,
                       a / (2.0 + 0.5 * div) ** 0.75)
    assert np.allclose(dl.nn.LocalResponseNorm(3, 0.5, 0.75, 2.0)(x).array,
                       a / (2.0 + 0.5 * div) ** 0.75)
    assert gradcheck(lambda x: F.local_response_norm(x, 2), (x,))
    with pytest.raises(ValueError, match="divide into num_groups=4"):
        F.group_norm(x, 4)


def test_channel_dropouts_and_alpha_dropout():
    dl.manual_seed(0)
    x = dl.ones(8, 16, 5)
    y = F.dropout1d(x, 0.25).array
    assert set(np.unique(y).tolist()) <= {0.0, float(np.float32(1 / 0.75))}
    assert (y.min(-1) == y.max(-1)).all()  # whole channels
    y2 = dl.nn.Dropout2d(0.5)(dl.ones(4, 8, 3, 3)).array
    assert (y2.reshape(4, 8, 9).min(-1) == y2.reshape(4, 8, 9).max(-1)).all()
    layer = dl.nn.Dropout1d(0.5).eval()
    assert np.array_equal(layer(x).array, x.array)
    z = F.alpha_dropout(dl.randn(200_000, dtype=dl.float64), 0.3, training=True).array
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
    assert np.array_equal(dl.nn.AlphaDropout(0.3).eval()(x).array, x.array)
    with pytest.raises(ValueError, match="expects a 2-D \\(unbatched\\) or 3-D"):
        F.dropout1d(dl.ones(2, 3, 4, 5))


# -------------------------------------------------------- bilinear, pools, embedding bags


def test_bilinear_adaptive_pools_and_embedding_bag():
    x1, x2, w, b = t64(4, 3), t64(4, 2), t64(5, 3, 2), t64(5)
    expected = np.einsum("ni,oij,nj->no", x1.array, w.array, x2.array) + b.array
    assert np.allclose(F.bilinear(x1, x2, w, b).array, expected)
    assert gradcheck(F.bilinear, (x1, x2, w, b))
    layer = dl.nn.Bilinear(3, 2, 5).double()
    assert layer(x1, x2).shape == (4, 5) and layer.weight.shape == (5, 3, 2)
    img = t64(2, 3, 5, 7)
    cells = F.adaptive_max_pool2d(img, (2, 3)).array
    assert np.allclose(cells[..., 1, 2], img.array[..., 2:5, 4:7].max((-2, -1)))
    assert gradcheck(lambda t: F.adaptive_max_pool2d(t, (2, 3)), (img,))
    assert np.allclose(dl.nn.AdaptiveMaxPool2d(1)(img).array[..., 0, 0],
                       img.array.max((-2, -1)))
    seq = t64(2, 3, 7)
    assert np.allclose(F.adaptive_avg_pool1d(seq, 2).array[..., 0], seq.array[..., :4].mean(-1))
    assert np.allclose(dl.nn.AdaptiveAvgPool1d(7)(seq).array, seq.array)
    assert np.allclose(dl.nn.AdaptiveMaxPool1d(3)(seq).array[..., 1], seq.array[..., 2:5].max(-1))
    table = t64(6, 4)
    idx = dl.tensor([1, 2, 4, 5, 0])
    offsets = dl.tensor([0, 2, 2])
    bags = F.embedding_bag(idx, table, offsets, mode="mean").array
    assert np.allclose(bags, [table.array[[1, 2]].mean(0), np.zeros(4),
                              table.array[[4, 5, 0]].mean(0)])
    weights = dl.tensor([1.0, 2.0, 3.0, 4.0, 5.0], dtype=dl.float64)
    summed = F.embedding_bag(idx, table, offsets, mode="sum", per_sample_weights=weights).array
    assert np.allclose(summed[2], 3 * table.array[4] + 4 * table.array[5] + 5 * table.array[0])
    assert np.allclose(F.embedding_bag(dl.tensor([[1, 2], [3, 3]]), table, mode="max").array,
                       [table.array[[1, 2]].max(0), table.array[3]])
    assert gradcheck(lambda t: F.embedding_bag(idx, t, offsets, mode="mean"), (table,))
    bag_layer = dl.nn.EmbeddingBag(6, 4, mode="sum")
    assert bag_layer(idx, offsets).shape == (3, 4)


# ------------------------------------------------------------------------------- losses


def softplus(z):
    return np.logaddexp(0, z)


def test_losses_match_their_formulas():
    x, y = t64(4, 3), t64(4, 3, requires_grad=False)
    sign = dl.tensor(np.where(rng.random((4, 3)) > 0.5, 1.0, -1.0))
    p = dl.tensor(rng.dirichlet(np.ones(3), size=4))
    logq = F.log_softmax(x, 1)
    kl = (p.array * (np.log(p.array) - logq.array))
    assert np.isclose(F.kl_div(logq, p, reduction="batchmean").item(), kl.sum() / 4)
    assert np.isclose(F.kl_div(logq, p).item(), kl.mean())
    assert np.isclose(F.kl_div(logq, p.log(), log_target=True, reduction="sum").item(), kl.sum())
    assert np.isclose(dl.nn.KLDivLoss(reduction="sum")(logq, p).item(), kl.sum())
    zero_target = dl.tensor([[0.0, 1.0, 0.0]])
    assert np.isfinite(F.kl_div(logq[:1], zero_target).item())
    a, b = t64(6), t64(6)
    s = dl.tensor(np.sign(rng.standard_normal(6)))
    assert np.allclose(F.margin_ranking_loss(a, b, s, 0.5, reduction="none").array,
                       np.maximum(0, -s.array * (a.array - b.array) + 0.5))
    assert np.allclose(F.hinge_embedding_loss(a, s, 0.7, reduction="none").array,
                       np.where(s.array == 1, a.array, np.maximum(0, 0.7 - a.array)))
    assert np.isclose(F.soft_margin_loss(x, sign).item(), softplus(-sign.array * x.array).mean())
    labels = dl.tensor((rng.random((4, 3)) > 0.5).astype(float))
    mlsm = (labels.array * softplus(-x.array) + (1 - labels.array) * softplus(x.array)).mean(1)
    assert np.isclose(F.multilabel_soft_margin_loss(x, labels).item(), mlsm.mean())
    c = (x.array * y.array).sum(1) / np.sqrt(((x.array ** 2).sum(1) + 1e-12)
                                             * ((y.array ** 2).sum(1) + 1e-12))
    t = dl.tensor([1.0, -1.0, 1.0, -1.0])
    assert np.allclose(F.cosine_embedding_loss(x, y, t, 0.1, reduction="none").array,
                       np.where(t.array == 1, 1 - c, np.maximum(0, c - 0.1)))
    n = t64(4, 3, requires_grad=False)
    d = lambda u, v: np.linalg.norm(u - v + 1e-6, axis=-1)  # noqa: E731
    trip = np.maximum(d(x.array, y.array) - d(x.array, n.array) + 1.0, 0)
    assert np.isclose(F.triplet_margin_loss(x, y, n).item(), trip.mean())
    swapped = np.maximum(d(x.array, y.array) - np.minimum(d(x.array, n.array),
                                                          d(y.array, n.array)) + 1.0, 0)
    assert np.isclose(dl.nn.TripletMarginLoss(swap=True)(x, y, n).item(), swapped.mean())
    var = dl.tensor(rng.uniform(0.5, 2, (4, 3)), requires_grad=True)
    gauss = 0.5 * (np.log(var.array) + (x.array - y.array) ** 2 / var.array)
    assert np.isclose(F.gaussian_nll_loss(x, y, var).item(), gauss.mean())
    assert np.isclose(dl.nn.GaussianNLLLoss(full=True)(x, y, var).item(),
                      gauss.mean() + 0.5 * math.log(2 * math.pi))
    per_row = dl.tensor(rng.uniform(0.5, 2, 4))
    assert F.gaussian_nll_loss(x, y, per_row, reduction="none").shape == (4, 3)
    counts = dl.tensor(rng.poisson(2.0, (4, 3)).astype(float))
    pois = np.exp(x.array) - counts.array * x.array
    assert np.isclose(F.poisson_nll_loss(x, counts).item(), pois.mean())
    rate = dl.tensor(rng.uniform(0.5, 3, (4, 3)), requires_grad=True)
    assert np.isclose(dl.nn.PoissonNLLLoss(log_input=False)(rate, counts).item(),
                      (rate.array - counts.array * np.log(rate.array + 1e-8)).mean())
    full = F.poisson_nll_loss(x, counts, full=True, reduction="none").array
    k = counts.array
    stirling = np.where(k > 1, k * np.log(np.maximum(k, 1)) - k
                        + 0.5 * np.log(2 * np.pi * np.maximum(k, 1)), 0)
    assert np.allclose(full, pois + stirling)


@pytest.mark.parametrize("loss", [
    lambda x, y: F.kl_div(F.log_softmax(x, 1), F.softmax(y, 1), reduction="batchmean"),
    lambda x, y: F.margin_ranking_loss(x[:, 0], y[:, 0], dl.tensor([1.0, -1.0, 1.0, -1.0])),
    lambda x, y: F.soft_margin_loss(x, y.sign()),
    lambda x, y: F.multilabel_soft_margin_loss(x, (y > 0).double()),
    lambda x, y: F.cosine_embedding_loss(x, y, dl.tensor([1.0, -1.0, 1.0, -1.0]), -0.5),
    lambda x, y: F.triplet_margin_loss(x, y, x.flip(0), margin=3.0),
    lambda x, y: F.gaussian_nll_loss(x, dl.ones(4, 3, dtype=dl.float64), y.exp()),
    lambda x, y: F.poisson_nll_loss(x, y.abs().round()),
], ids=["kl_div", "margin_ranking", "soft_margin", "multilabel_soft_margin",
        "cosine_embedding", "triplet_margin", "gaussian_nll", "poisson_nll"])
def test_loss_gradients(loss):
    assert gradcheck(loss, (t64(4, 3), t64(4, 3)))


def test_loss_module_defaults_and_errors():
    assert dl.nn.KLDivLoss().reduction == "mean" and dl.nn.HingeEmbeddingLoss().margin == 1.0
    assert dl.nn.MarginRankingLoss(0.2).margin == 0.2
    assert dl.nn.CosineEmbeddingLoss().margin == 0.0 and dl.nn.SoftMarginLoss()
    assert dl.nn.MultiLabelSoftMarginLoss().reduction == "mean"
    with pytest.raises(ValueError, match="var has negative"):
        F.gaussian_nll_loss(dl.ones(2), dl.ones(2), dl.tensor([1.0, -1.0]))
    with pytest.raises(ValueError, match="same shape"):
        F.margin_ranking_loss(dl.ones(2), dl.ones(3), dl.ones(2))
    with pytest.raises(ValueError, match="reduction must be one of"):
        F.soft_margin_loss(dl.ones(2), dl.ones(2), reduction="avg")


def conv3d_reference(x, w, b, stride, padding, dilation):
    xp = np.pad(x, ((0, 0), (0, 0)) + ((padding, padding),) * 3)
    n, _, d, h, wd = xp.shape
    o, _, kd, kh, kw = w.shape
    out_shape = [(size - dilation * (k - 1) - 1) // stride + 1
                 for size, k in zip((d, h, wd), (kd, kh, kw))]
    out = np.zeros((n, o, *out_shape))
    for i in range(out_shape[0]):
        for j in range(out_shape[1]):
            for k in range(out_shape[2]):
                block = xp[:, :, i * stride:i * stride + dilation * (kd - 1) + 1:dilation,
                           j * stride:j * stride + dilation * (kh - 1) + 1:dilation,
                           k * stride:k * stride + dilation * (kw - 1) + 1:dilation]
                out[:, :, i, j, k] = np.einsum("ncdhw,ocdhw->no", block, w)
    return out + b[None, :, None, None, None]


@pytest.mark.parametrize("stride,padding,dilation", [(1, 0, 1), (2, 1, 1), (1, 1, 2)])
def test_conv3d_matches_the_sliding_dot_product(stride, padding, dilation):
    x, w, b = t64(1, 2, 4, 3, 4), t64(2, 2, 2, 2, 2), t64(2)
    out = F.conv3d(x, w, b, stride, padding, dilation)
    assert np.allclose(out.array, conv3d_reference(x.array, w.array, b.array, stride, padding,
                                                   dilation))
    assert gradcheck(lambda x, w, b: F.conv3d(x, w, b, stride, padding, dilation), (x, w, b))


def test_conv3d_groups_layer_and_errors():
    x, w = t64(1, 4, 3, 3, 3), t64(6, 2, 1, 2, 2)
    grouped = F.conv3d(x, w, groups=2).array
    halves = [F.conv3d(x[:, 2 * g:2 * g + 2], w[3 * g:3 * g + 3]).array for g in range(2)]
    assert np.allclose(grouped, np.concatenate(halves, 1))
    layer = dl.nn.Conv3d(4, 2, 3, padding="same").double()
    assert layer(x).shape == (1, 2, 3, 3, 3) and layer(x[0]).shape == (2, 3, 3, 3)
    with pytest.raises(ValueError, match="expected input with 3 channels"):
        F.conv3d(x, t64(1, 3, 1, 1, 1))


def bilinear_sample_reference(image, x, y):
    """One channel, one point, zeros outside: the four neighbours' weighted sum."""
    h, w = image.shape
    x0, y0 = int(np.floor(x)), int(np.floor(y))
    total = 0.0
    for xi, yi in ((x0, y0), (x0 + 1, y0), (x0, y0 + 1), (x0 + 1, y0 + 1)):
        if 0 <= xi < w and 0 <= yi < h:
            total += (1 - abs(x - xi)) * (1 - abs(y - yi)) * image[yi, xi]
    return total


@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_and_grid_sample(align_corners):
    image = t64(2, 3, 4, 5)
    identity = dl.tensor(np.tile([[1.0, 0, 0], [0, 1.0, 0]], (2, 1, 1)))
    grid = F.affine_grid(identity, (2, 3, 4, 5), align_corners=align_corners)
    same = F.grid_sample(image, grid, align_corners=align_corners)
    assert np.allclose(same.array, image.array)  # the identity map samples every pixel centre
    points = dl.tensor(rng.uniform(-1.2, 1.2, (2, 3, 2, 2)), requires_grad=True)
    out = F.grid_sample(image, points, align_corners=align_corners).array
    for nn_, i, j in ((0, 0, 0), (1, 2, 1), (0, 1, 1)):
        gx, gy = points.array[nn_, i, j]
        if align_corners:
            px, py = (gx + 1) / 2 * 4, (gy + 1) / 2 * 3
        else:
            px, py = ((gx + 1) * 5 - 1) / 2, ((gy + 1) * 4 - 1) / 2
        expected = bilinear_sample_reference(image.array[nn_, 1], px, py)
        assert np.isclose(out[nn_, 1, i, j], expected)
    assert gradcheck(lambda im, pts: F.grid_sample(im, pts, align_corners=align_corners),
                     (image, points))
    theta = dl.tensor(rng.standard_normal((2, 2, 3)), requires_grad=True)
    assert gradcheck(lambda th: F.affine_grid(th, (2, 1, 3, 4), align_corners=align_corners),
                     (theta,))
    border = F.grid_sample(image, dl.full((2, 1, 1, 2), 5.0, dtype=dl.float64),
                           padding_mode="border", align_corners=align_corners)
    assert np.allclose(border.array[..., 0, 0], image.array[:, :, -1, -1])
    near = F.grid_sample(image, grid, mode="nearest", align_corners=align_corners)
    assert np.allclose(near.array, image.array)


def ctc_brute_force(log_probs, target, blank=0):
    """-log Σ over every frame labelling that collapses to ``target`` (repeats merged, blanks
    dropped) of its probability: the definition, by enumeration."""
    import itertools

    frames, classes = log_probs.shape
    total = 0.0
    for path in itertools.product(range(classes), repeat=frames):
        collapsed = [c for i, c in enumerate(path) if c != blank and (i == 0 or c != path[i - 1])]
        if collapsed == list(target):
            total += math.exp(sum(log_probs[t, c] for t, c in enumerate(path)))
    return -math.log(total) if total else math.inf


def test_ctc_loss_equals_the_sum_over_alignments():
    logits = rng.standard_normal((5, 3, 3))
    lp = dl.tensor(logits, dtype=dl.float64, requires_grad=True)
    log_probs = F.log_softmax(lp, 2)
    targets = dl.tensor([[1, 2], [1, 1], [2, 0]])
    input_lengths, target_lengths = [5, 5, 4], [2, 2, 1]
    losses = F.ctc_loss(log_probs, targets, input_lengths, target_lengths, reduction="none")
    for i in range(3):
        expected = ctc_brute_force(log_probs.array[:input_lengths[i], i],
                                   targets.array[i, :target_lengths[i]])
        assert math.isclose(losses.array[i], expected, rel_tol=1e-9)
    flat = F.ctc_loss(log_probs, dl.tensor([1, 2, 1, 1, 2]), input_lengths, target_lengths,
                      reduction="none")
    assert np.allclose(flat.array, losses.array)  # concatenated targets
    mean = dl.nn.CTCLoss()(log_probs, targets, input_lengths, target_lengths)
    assert math.isclose(mean.item(), (losses.array / np.array([2, 2, 1])).mean())
    assert gradcheck(lambda z: F.ctc_loss(F.log_softmax(z, 2), targets, input_lengths,
                                          target_lengths), (lp,))


def test_ctc_loss_impossible_alignments():
    lp = F.log_softmax(t64(2, 1, 3), 2)
    target = dl.tensor([[1, 1]])  # needs 3 frames (a blank between the repeats)
    assert F.ctc_loss(lp, target, [2], [2], reduction="sum").item() == math.inf
    zeroed = F.ctc_loss(lp, target, [2], [2], reduction="sum", zero_infinity=True)
    assert zeroed.item() == 0.0
    with pytest.raises(ValueError, match="input_lengths must be in"):
        F.ctc_loss(lp, target, [3], [2])


def test_nn_functional_exposes_its_functions_only_not_the_helpers_it_imports():
    import difflab.nn.functional as F
    from difflab.nn import functional_core

    public = {n: getattr(F, n) for n in dir(F) if not n.startswith("_")}
    for leaked in ("Any", "Tensor", "apply", "np", "math", "backend"):
        assert leaked not in public
    for name, value in public.items():  # each a function of one of the functional modules
        assert getattr(value, "__module__", "").startswith("difflab.nn.functional"), name
    own = {n for n in dir(functional_core) if not n.startswith("_")
           and getattr(getattr(functional_core, n), "__module__", None) == functional_core.__name__}
    assert set(functional_core.__all__) == own  # (a new function must join __all__)
