"""grid_sample where a stranger's spatial-transformer program looks: the grid's gradient
in nearest mode, and corners outside the image next to inf or nan pixels (PyTorch's
answers, checked by hand)."""

from __future__ import annotations

import numpy as np
import pytest

import difflab as dl
from difflab.autograd import gradcheck

F = dl.nn.functional
INF, NAN = float("inf"), float("nan")


def test_nearest_gives_the_grid_a_zero_gradient_not_none():
    theta = dl.eye(2, 3).unsqueeze(0).requires_grad_()
    x = dl.randn(1, 1, 3, 3, requires_grad=True)
    grid = F.affine_grid(theta, (1, 1, 3, 3), align_corners=False)
    F.grid_sample(x, grid, mode="nearest", align_corners=False).sum().backward()
    assert theta.grad is not None and np.all(theta.grad.numpy() == 0)
    assert x.grad.numpy().sum() == 9.0  # each pixel read once


@pytest.mark.parametrize("mode, want", [
    ("nearest", [[-0.0, NAN], [INF, 0.0]]),   # a grid point at inf is outside: 0
    ("bilinear", [[NAN, NAN], [INF, NAN]]),   # an outside corner adds nothing, not inf * 0
])
def test_pixels_next_to_the_border_and_non_finite_values(mode, want):
    x = dl.tensor([[[[-0.0, NAN], [INF, 1.0]]]])
    grid = dl.tensor([[[[-1.0, -1.0], [1.0, -1.0]], [[-1.0, 1.0], [INF, 1.0]]]])
    got = F.grid_sample(x, grid, mode=mode, align_corners=True).numpy()[0, 0]
    np.testing.assert_array_equal(got, np.array(want))
    if mode == "nearest":
        assert np.signbit(got[0, 0])  # -0.0 copied as it is


def test_bilinear_gradients_at_and_past_the_border():
    rng = np.random.default_rng(0)
    x = dl.tensor(rng.standard_normal((1, 2, 3, 4)), requires_grad=True)
    grid = dl.tensor(rng.uniform(-1.4, 1.4, (1, 3, 2, 2)), requires_grad=True)
    for padding in ("zeros", "border"):
        assert gradcheck(lambda x, g, p=padding: F.grid_sample(
            x, g, padding_mode=p, align_corners=False), (x, grid))
