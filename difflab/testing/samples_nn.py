"""Sample inputs of PyTorch's remaining ``nn.functional`` names (the 3-D layers, the pools'
indices and unpooling, fractional and power-average pooling, the margin losses, ...): a part of
:func:`difflab.testing.samples.function_cases`, kept apart so neither file grows too long."""

from __future__ import annotations

from dataclasses import replace
from typing import Any


def nn_breadth_table(dl: Any, INT: str) -> dict[str, tuple]:  # noqa: N803
    """``name -> (call, specs)``, in :func:`~difflab.testing.samples.function_cases`'s form."""
    F = dl.nn.functional  # noqa: N806
    V, IMG = ((6,), (-2, 2)), ((1, 2, 4, 4), (-2, 2))  # noqa: N806
    return {
        "F.avg_pool3d": (lambda x: F.avg_pool3d(x, 2, (1, 2, 1), 1),
                         [((1, 2, 3, 4, 3), (-2, 2))]),
        "F.max_pool3d": (lambda x: F.max_pool3d(x, (2, 2, 3), 1, (1, 0, 1)),
                         [((1, 2, 3, 4, 3), (-2, 2))]),
        "F.adaptive_max_pool1d_with_indices": (
            lambda x: F.adaptive_max_pool1d_with_indices(x, 3)[0], [((1, 2, 7), (-2, 2))]),
        "F.adaptive_max_pool2d_with_indices": (
            lambda x: F.adaptive_max_pool2d_with_indices(x, (3, 2))[0], [IMG]),
        "F.adaptive_max_pool3d_with_indices": (
            lambda x: F.adaptive_max_pool3d_with_indices(x, (1, 3, 2))[0],
            [((1, 2, 2, 4, 5), (-2, 2))]),
        "F.conv_transpose3d": (lambda x, w: F.conv_transpose3d(x, w, stride=(2, 1, 2)),
                               [((1, 2, 2, 2, 3), (-2, 2)), ((2, 1, 2, 2, 2), (-1, 1))]),
        "F.dropout3d": (lambda x: F.dropout3d(x, 0.3), [((1, 2, 2, 3, 3), (-2, 2))]),
        "F.feature_alpha_dropout": (lambda x: F.feature_alpha_dropout(x, 0.3, training=True),
                                    [IMG]),
        "F.fractional_max_pool2d": (lambda x: F.fractional_max_pool2d(
            x, 2, (2, 3), _random_samples=dl.full((1, 2, 2), 0.4)), [IMG]),
        "F.fractional_max_pool2d_with_indices": (lambda x: F.fractional_max_pool2d_with_indices(
            x, (1, 2), (3, 3), _random_samples=dl.full((1, 2, 2), 0.7))[0], [IMG]),
        "F.fractional_max_pool3d": (lambda x: F.fractional_max_pool3d(
            x, 2, (1, 2, 3), _random_samples=dl.full((1, 2, 3), 0.3)),
            [((1, 2, 3, 4, 5), (-2, 2))]),
        "F.fractional_max_pool3d_with_indices": (lambda x: F.fractional_max_pool3d_with_indices(
            x, 2, (1, 2, 2), _random_samples=dl.full((1, 2, 3), 0.6))[0],
            [((1, 2, 3, 4, 5), (-2, 2))]),
        "F.lp_pool1d": (lambda x: F.lp_pool1d(x, 2, 2), [((1, 2, 6), (-2, 2))]),
        "F.lp_pool2d": (lambda x: F.lp_pool2d(x, 3, 2, 1), [((1, 2, 3, 4), (0.5, 2))]),
        "F.lp_pool3d": (lambda x: F.lp_pool3d(x, 1.5, (1, 2, 2)), [((1, 1, 2, 2, 4), (0.5, 2))]),
        "F.max_pool1d_with_indices": (lambda x: F.max_pool1d_with_indices(x, 3, 2, 1)[0],
                                      [((1, 2, 7), (-2, 2))]),
        "F.max_pool2d_with_indices": (lambda x: F.max_pool2d_with_indices(x, 2, 1)[0], [IMG]),
        "F.max_pool3d_with_indices": (lambda x: F.max_pool3d_with_indices(x, 2)[0],
                                      [((1, 1, 2, 4, 4), (-2, 2))]),
        "F.max_unpool1d": (lambda x: F.max_unpool1d(*F.max_pool1d(x, 2, return_indices=True),
                                                    2), [((1, 2, 6), (-2, 2))]),
        "F.max_unpool2d": (lambda x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True),
                                                    2, output_size=(4, 5)), [IMG]),
        "F.max_unpool3d": (lambda x: F.max_unpool3d(*F.max_pool3d(x, 2, return_indices=True),
                                                    2), [((1, 1, 2, 4, 4), (-2, 2))]),
        "F.multi_margin_loss": (lambda x, t: F.multi_margin_loss(x, t, p=2, margin=0.5),
                                [((4, 3), (-2, 2)), ((4,), (INT, 3))]),
        "F.multilabel_margin_loss": (lambda x, t: F.multilabel_margin_loss(x, t - 1),
                                     [((4, 3), (-2, 2)), ((4, 3), (INT, 4))]),
        "F.channel_shuffle": (lambda x: F.channel_shuffle(x, 2), [((1, 4, 2, 2), (-2, 2))]),
        "F.rrelu": (lambda x: F.rrelu(x, 0.1, 0.3), [V]),
        "F.triplet_margin_with_distance_loss": (
            lambda a, p, n: F.triplet_margin_with_distance_loss(a, p, n, swap=True),
            [((4, 3), (-2, 2)), ((4, 3), (-2, 2)), ((4, 3), (-2, 2))]),
        "F.upsample": (lambda x: F.upsample(x, scale_factor=2, mode="bilinear"), [IMG]),
        "F.upsample_bilinear": (lambda x: F.upsample_bilinear(x, size=(4, 5)), [IMG]),
        "F.upsample_nearest": (lambda x: F.upsample_nearest(x, scale_factor=2), [IMG]),
    }


def torch_names_table(dl: Any, INT: str) -> dict[str, tuple]:  # noqa: N803
    """The ``difflab.<name>`` functions with ATen's signatures (``difflab.batch_norm(input,
    weight, bias, ...)``, a loss's integer reduction) and the methods composed under
    PyTorch's names (``x.unfold``, ``x.where``), in the same form as above."""
    IMG, M43 = ((1, 2, 4, 4), (-2, 2)), ((4, 3), (-2, 2))  # noqa: N806
    return {
        "dl.batch_norm": (lambda x, w, b: dl.batch_norm(x, w, b, None, None, True, 0.1, 1e-5),
                          [IMG, ((2,), (0.5, 2)), ((2,), (-1, 1))]),
        "dl.instance_norm": (lambda x: dl.instance_norm(x, None, None, None, None, True, 0.1,
                                                        1e-5), [IMG]),
        "dl.dropout": (lambda x: dl.dropout(x, 0.3, True), [IMG]),
        "dl.embedding": (lambda w, i: dl.embedding(w, i), [((6, 3), (-2, 2)), ((5,), (INT, 6))]),
        "dl.kl_div": (lambda x, t: dl.kl_div(x.log_softmax(1), t.softmax(1), 2), [M43, M43]),
        "dl.binary_cross_entropy_with_logits": (
            lambda x, t, p: dl.binary_cross_entropy_with_logits(x, t.sigmoid(), None, p, 1),
            [M43, M43, ((3,), (0.5, 2))]),
        "dl.cosine_embedding_loss": (
            lambda a, b, y: dl.cosine_embedding_loss(a, b, y * 2 - 1, 0.1, 2),
            [M43, M43, ((4,), (INT, 2))]),
        "dl.margin_ranking_loss": (lambda a, b, y: dl.margin_ranking_loss(a, b, y * 2 - 1, 0.1, 0),
                                   [((4,), (-2, 2)), ((4,), (-2, 2)), ((4,), (INT, 2))]),
        "dl.hinge_embedding_loss": (lambda x, y: dl.hinge_embedding_loss(x, y * 2 - 1, 1.0, 1),
                                    [((4,), (-2, 2)), ((4,), (INT, 2))]),
        "dl.triplet_margin_loss": (lambda a, p, n: dl.triplet_margin_loss(a, p, n, 1.0, 2.0,
                                                                          1e-6, True, 2),
                                   [M43, M43, M43]),
        "dl.poisson_nll_loss": (lambda x, t: dl.poisson_nll_loss(x, t, True, True, 1e-8, 1),
                                [((4,), (-2, 2)), ((4,), (0.5, 3))]),
        "dl.ctc_loss": (lambda z, t: dl.ctc_loss(z.log_softmax(2), t + 1, [6], [2], 0, 2),
                        [((6, 1, 4), (-2, 2)), ((1, 2), (INT, 3))]),
        "Tensor.unfold": (lambda x: x.unfold(1, 2, 1), [((2, 5, 3), (-2, 2))]),
        "dl.as_strided": (lambda x: dl.as_strided(x * 1, (3, 3), (1, 1)), [((5,), (-2, 2))]),
        "Tensor.as_strided": (lambda x: x[1:].as_strided((2, 2), (2, 1)) * x[0], [((6,), (-2, 2))]),
        "Tensor.where": (lambda x, y: x.where(x > 0, y), [M43, M43]),
        "Tensor.vdot": (lambda x, y: x.vdot(y), [((5,), (-2, 2)), ((5,), (-2, 2))]),
    }


def same_function_cases(dl: Any, cases: dict) -> dict[str, Any]:
    """``difflab.<name>`` that *is* ``nn.functional.<name>`` (``dl.conv2d``): the case of
    ``F.<name>`` under its second name (one function, one test)."""
    F = dl.nn.functional  # noqa: N806
    return {f"dl.{label[2:]}": replace(case, name=f"dl.{label[2:]}")
            for label, case in cases.items()
            if label.startswith("F.") and getattr(dl, label[2:], None) is getattr(F, label[2:])}
