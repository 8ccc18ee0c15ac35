"""MultiMarginLoss, MultiLabelMarginLoss and TripletMarginWithDistanceLoss: values and
gradients against PyTorch's numbers (written here), central differences, the CuPy
stand-in, and the errors in PyTorch's words and types."""

from __future__ import annotations

import numpy as np
import pytest

import difflab as dl
from difflab.autograd import gradcheck

F = dl.nn.functional


def scores(requires_grad=True):
    return dl.tensor([[0.1, 0.2, 0.4, 0.8], [0.3, -0.2, 0.5, 0.1], [1.0, -1.0, 0.25, 0.0]],
                     dtype=dl.float64, requires_grad=requires_grad)


def test_multi_margin_loss_matches_pytorch():
    x = scores()
    loss = F.multi_margin_loss(x, dl.tensor([3, 0, 2]), p=2, margin=0.7,
                               weight=dl.tensor([1.0, 2, 3, 4], dtype=dl.float64),
                               reduction="sum")
    assert np.isclose(loss.item(), 2.10375)
    loss.backward()
    assert np.allclose(x.grad.flatten().tolist(),
                       [0.0, 0.2, 0.6, -0.8, -0.8, 0.1, 0.45, 0.25, 2.175, 0.0, -2.85, 0.675])
    assert np.isclose(F.multi_margin_loss(x[:2], dl.tensor([3, 0])).item(), 0.475)
    one = F.multi_margin_loss(x[0], dl.tensor(3), reduction="none")
    assert one.shape == () and np.isclose(one.item(), 0.325)  # unbatched: (C,), ()
    module = dl.nn.MultiMarginLoss(p=2, margin=0.7, weight=dl.ones(4, dtype=dl.float64))
    assert list(module.state_dict()) == ["weight"]  # a buffer, as in PyTorch
    assert np.isclose(module(x, dl.tensor([3, 0, 2])).item(),
                      F.multi_margin_loss(x, dl.tensor([3, 0, 2]), 2, 0.7).item())


def test_multilabel_margin_loss_matches_pytorch():
    x = scores()
    target = dl.tensor([[3, 0, -1, 1], [1, 2, 3, -1], [2, -1, 0, 0]])  # after -1: ignored
    loss = F.multilabel_margin_loss(x, target, reduction="none")
    assert np.allclose(loss.tolist(), [0.85, 0.875, 0.625])
    loss.sum().backward()
    assert np.allclose(x.grad.flatten().tolist(), [-0.5, 0.5, 0.5, -0.5, 0.75, -0.25, -0.25,
                                                   -0.25, 0.25, 0.0, -0.5, 0.25])
    assert np.isclose(dl.nn.MultiLabelMarginLoss()(x, target).item(), (0.85 + 0.875 + 0.625) / 3)
    assert np.isclose(F.multilabel_margin_loss(x[0], target[0]).item(), 0.85)  # unbatched
    # no label listed: nothing to separate; every label listed: no other label
    assert F.multilabel_margin_loss(x[:1], dl.tensor([[-1, 0, 1, 2]])).item() == 0.0
    assert F.multilabel_margin_loss(x[:1], dl.tensor([[0, 1, 2, 3]])).item() == 0.0


@pytest.mark.parametrize("p", [1, 2])
def test_margin_losses_have_gradients(p):
    x = dl.tensor(np.random.default_rng(p).standard_normal((4, 5)), requires_grad=True)
    y = dl.tensor([0, 4, 2, 2])
    w = dl.tensor([0.5, 1.0, 2.0, 1.0, 3.0], dtype=dl.float64, requires_grad=True)
    assert gradcheck(lambda x, w: F.multi_margin_loss(x, y, p, 0.8, w), (x, w))
    labels = dl.tensor([[0, 3, -1, 0, 0], [4, -1, 1, 1, 1], [2, 1, 0, 3, -1], [1, 2, 3, 4, 0]])
    assert gradcheck(lambda x: F.multilabel_margin_loss(x, labels), (x,))


def test_triplet_margin_with_distance_loss():
    a = dl.tensor([[0.0, 0.0], [1.0, 2.0]], requires_grad=True)
    p, n = dl.tensor([[3.0, 4.0], [1.0, 1.0]]), dl.tensor([[0.0, 1.0], [1.5, 2.0]])
    got = F.triplet_margin_with_distance_loss(a, p, n, swap=True, reduction="none")
    assert np.allclose(got.tolist(), [4.9999995, 1.5000019])  # PyTorch's (eps 1e-6 inside)
    l1 = dl.nn.PairwiseDistance(p=1)
    assert np.isclose(F.triplet_margin_with_distance_loss(a, p, n, distance_function=l1,
                                                          margin=2.0).item(), 5.25)
    # the default distance is triplet_margin_loss's
    assert np.isclose(F.triplet_margin_with_distance_loss(a, p, n).item(),
                      F.triplet_margin_loss(a, p, n).item())
    module = dl.nn.TripletMarginWithDistanceLoss(distance_function=l1, margin=2.0)
    assert "(distance_function): PairwiseDistance()" in repr(module)
    module(a, p, n).backward()
    assert a.grad is not None and a.grad.shape == (2, 2)
    x = dl.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    cosine = lambda u, v: 1 - F.cosine_similarity(u, v)  # noqa: E731
    assert gradcheck(lambda x: F.triplet_margin_with_distance_loss(
        x, x.flip(0), x * 0.5 + 1.0, distance_function=cosine, swap=True), (x,))


def test_margin_loss_errors():
    x = scores(requires_grad=False)
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        F.multi_margin_loss(x, dl.tensor([0, 1, 2]), p=3)
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        dl.nn.MultiMarginLoss(p=3)
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multi_margin_loss(x, dl.tensor([0, 4, 1]))
    with pytest.raises(TypeError, match="integer dtype"):
        F.multi_margin_loss(x, dl.tensor([0.0, 1.0, 2.0]))
    with pytest.raises(ValueError, match="expected target of shape \\(3,\\)"):
        F.multi_margin_loss(x, dl.tensor([0, 1]))
    with pytest.raises(ValueError, match="weight must have shape \\(4,\\)"):
        F.multi_margin_loss(x, dl.tensor([0, 1, 2]), weight=dl.ones(3))
    with pytest.raises(RuntimeError, match="'target' is out of range"):
        F.multilabel_margin_loss(x, dl.tensor([[4, -1, 0, 0]] * 3))
    with pytest.raises(ValueError, match="expected target of shape \\(3, 4\\)"):
        F.multilabel_margin_loss(x, dl.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match="1-D \\(C,\\) or 2-D"):
        F.multilabel_margin_loss(x.reshape(3, 2, 2), dl.zeros(3, 2, 2, dtype=dl.int64))
    with pytest.raises(ValueError, match="margin to be greater than 0"):
        dl.nn.TripletMarginWithDistanceLoss(margin=0.0)
    with pytest.raises(TypeError, match="must be callable"):
        F.triplet_margin_with_distance_loss(x, x, x, distance_function=3)
    with pytest.raises(ValueError, match="reduction"):
        dl.nn.MultiLabelMarginLoss(reduction="avg")


def test_margin_losses_on_cuda(cuda):
    x = dl.tensor(scores(False).numpy(), device=cuda)
    assert np.isclose(dl.nn.MultiMarginLoss()(x[:2], dl.tensor([3, 0], device=cuda)).item(),
                      0.475)
    target = dl.tensor([[3, 0, -1, 1], [1, 2, 3, -1], [2, -1, 0, 0]], device=cuda)
    got = dl.nn.MultiLabelMarginLoss(reduction="none")(x, target)
    assert got.device == cuda and np.allclose(got.cpu().numpy(), [0.85, 0.875, 0.625])
    a = dl.tensor([[0.0, 0.0]], device=cuda)
    p, n = dl.tensor([[3.0, 4.0]], device=cuda), dl.tensor([[0.0, 1.0]], device=cuda)
    assert np.isclose(dl.nn.TripletMarginWithDistanceLoss()(a, p, n).item(), 5.0, atol=1e-5)
