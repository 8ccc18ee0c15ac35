"""Shortcut 17 of difflab/fastpath.py: a max pool's backward over windows that tile the image.

Each kernel position's ``ȳ · mask`` is written straight into its pixels instead of
being added into zeros by ``col2im``.  These tests check the plain rule's numbers bit
for bit (signed zeros included), that the pool's rule calls it, and that every other
geometry goes to the plain rule.
"""

import functools

import numpy as np
import pytest

import difflab as dl
from difflab.ops import nn_conv, pool_tiles

_GEOMETRIES = {  # (x's shape, kernel, stride, padding, dilation)
    "2x2 tiles": ((4, 3, 8, 10), (2, 2), (2, 2), (0, 0), (1, 1)),
    "3x2 tiles, odd sizes": ((2, 3, 7, 9), (3, 2), (3, 2), (0, 0), (1, 1)),
    "overlapping (plain)": ((2, 3, 8, 8), (3, 3), (2, 2), (0, 0), (1, 1)),
    "padded (plain)": ((2, 3, 8, 8), (2, 2), (2, 2), (1, 1), (1, 1)),
    "dilated (plain)": ((2, 3, 9, 9), (2, 2), (2, 2), (0, 0), (2, 2)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("geometry", _GEOMETRIES.values(), ids=_GEOMETRIES.keys())
def test_the_tiled_gradient_is_the_plain_one_bit_for_bit(geometry, dtype):
    shape, kernel, stride, padding, dilation = geometry
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape).astype(dtype)
    x[0, 0, :2, :2] = 1.0  # (a tie: the first maximum takes ȳ)
    _, masks = nn_conv.MaxPool2d._first_maxima(np, x, kernel, stride, padding, dilation)
    g = rng.standard_normal(masks.shape[1:]).astype(dtype)
    g[0, 0, 0, 0], g[-1, -1, -1, -1] = -0.0, -1.5  # (signed zeros: -0 and 0 · negative)
    plain = nn_conv._plain_max_pool_gradient(np, g, masks, geometry)
    fast = pool_tiles.max_pool_gradient(np, g, masks, geometry,
                                        plain=nn_conv._plain_max_pool_gradient)
    assert fast.shape == plain.shape == shape and fast.dtype == dtype
    assert np.ascontiguousarray(fast).tobytes() == np.ascontiguousarray(plain).tobytes()


def test_tensors_go_to_the_plain_rule():
    geometry = ((1, 1, 2, 2), (2, 2), (2, 2), (0, 0), (1, 1))
    masks = np.ones((4, 1, 1, 1, 1), dtype=bool)
    assert pool_tiles.max_pool_gradient(np, dl.ones(1, 1, 1, 1), masks, geometry,
                                        plain=lambda *args: "plain") == "plain"


@pytest.mark.fastpath("17. a max pool's backward on tiles")
def test_the_pool_rule_calls_the_shortcut(monkeypatch):
    """Guards the bit-for-bit comparison in tests/core: a shortcut that silently stopped
    running proves nothing."""
    assert nn_conv._max_pool_gradient.func is pool_tiles.max_pool_gradient
    fast, plain = [], []

    def spy(*args, **kwargs):
        fast.append(1)
        return pool_tiles.max_pool_gradient(*args, **kwargs)

    def plain_spy(*args):
        plain.append(1)
        return nn_conv._plain_max_pool_gradient(*args)

    monkeypatch.setattr(nn_conv, "_max_pool_gradient", functools.partial(spy, plain=plain_spy))
    x = dl.randn(2, 3, 6, 6, requires_grad=True)
    dl.nn.functional.max_pool2d(x, 2).sum().backward()
    assert fast == [1] and plain == []
    assert x.grad.sum().item() == 2 * 3 * 3 * 3  # (one pixel per window takes ȳ = 1)
