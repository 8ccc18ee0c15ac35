"""The core loss modules take PyTorch's arguments in PyTorch's order (the deprecated
size_average/reduce flags included) and BCEWithLogitsLoss its pos_weight."""

import numpy as np
import pytest

import difflab as dl
import difflab.nn as nn


def test_the_deprecated_flags_set_the_reduction_as_in_pytorch():
    x, y = dl.tensor([1.0, 2.0]), dl.tensor([0.0, 0.0])
    assert nn.MSELoss(size_average=False)(x, y).item() == 5.0
    assert nn.L1Loss(reduce=False)(x, y).tolist() == [1.0, 2.0]
    logp = dl.tensor([[-1.0, -2.0], [-3.0, -4.0]])
    assert nn.NLLLoss(None, None, 1)(logp, dl.tensor([1, 0])).item() == 3.0  # ignore_index=1
    assert nn.CrossEntropyLoss(size_average=False)(logp, dl.tensor([0, 0])).shape == ()
    assert nn.BCELoss(None, False)(dl.tensor([0.5]), dl.tensor([1.0])).item() == \
        pytest.approx(np.log(2))


def test_pos_weight_weighs_the_positive_term():
    x = dl.tensor([[0.3, -1.2], [2.0, 0.5]])
    y = dl.tensor([[1.0, 0.0], [1.0, 1.0]])
    pw = dl.tensor([3.0, 0.5])
    got = nn.BCEWithLogitsLoss(pos_weight=pw, reduction="none")(x, y)
    s = 1 / (1 + np.exp(-x.array.astype(np.float64)))
    want = -(pw.array * y.array * np.log(s) + (1 - y.array) * np.log(1 - s))
    np.testing.assert_allclose(got.array, want, rtol=1e-5)
    mean = nn.BCEWithLogitsLoss(pos_weight=pw, weight=dl.tensor([1.0, 2.0]))(x, y)
    assert mean.item() == pytest.approx(float((want * [1.0, 2.0]).mean()), rel=1e-5)
    xg = dl.tensor([[0.3, -1.2], [2.0, 0.5]], requires_grad=True)
    nn.BCEWithLogitsLoss(pos_weight=pw, reduction="sum")(xg, y).backward()
    grad = (1 - y.array) * s - pw.array * y.array * (1 - s)      # d/dx of the formula
    np.testing.assert_allclose(xg.grad.array, grad, rtol=1e-5)
    assert nn.BCEWithLogitsLoss(pos_weight=dl.ones(2))(x, y).item() == pytest.approx(
        nn.BCEWithLogitsLoss()(x, y).item(), rel=1e-6)
