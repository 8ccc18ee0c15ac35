"""Shortcut 16 of difflab/fastpath.py: a convolution's weight gradient as its transpose.

The shortcut computes ``W̄_g = Ȳ_g X_gᵀ`` as ``(X_g Ȳ_gᵀ)ᵀ``.  Each entry is the same
sum of the same products; these tests check that it gives the plain rule's numbers
bit for bit (OpenBLAS adds them in the same order both ways), that it is the one
the convolution's rule calls, and that values it does not handle go to the plain rule.
"""

import functools

import numpy as np
import pytest

import difflab as dl
from difflab.ops import conv_products, nn_conv


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("groups, out_rows, k, m", [(1, 16, 72, 3136), (1, 8, 9, 12544),
                                                     (2, 3, 5, 7), (4, 33, 17, 1000),
                                                     (1, 1, 1, 1)])
def test_the_transposed_product_is_the_plain_one_bit_for_bit(dtype, groups, out_rows, k, m):
    rng = np.random.default_rng(groups * 1000 + k)
    gm = rng.standard_normal((groups, out_rows, m)).astype(dtype)
    cols = rng.standard_normal((groups, k, m)).astype(dtype)
    plain = nn_conv._plain_weight_gradient(np, gm, cols)
    fast = conv_products.weight_gradient(np, gm, cols, plain=nn_conv._plain_weight_gradient)
    assert fast.shape == plain.shape == (groups, out_rows, k)
    assert fast.dtype == plain.dtype == dtype
    assert np.ascontiguousarray(fast).tobytes() == plain.tobytes()


def test_values_other_than_numpy_arrays_go_to_the_plain_rule():
    calls = []

    def plain(xp, gm, cols):
        calls.append((gm, cols))
        return "plain"

    gm, cols = dl.ones(1, 2, 3), dl.ones(1, 4, 3)  # (tensors: a recorded backward)
    assert conv_products.weight_gradient(np, gm, cols, plain=plain) == "plain"
    assert calls == [(gm, cols)]


@pytest.mark.fastpath("16. a convolution's weight gradient as its transpose")
def test_the_convolution_rule_calls_the_shortcut(monkeypatch):
    """Guards the bit-for-bit comparison in tests/core: a shortcut that silently stopped
    running proves nothing."""
    assert nn_conv._weight_gradient.func is conv_products.weight_gradient
    fast, plain = [], []

    def spy(*args, **kwargs):
        fast.append(1)
        return conv_products.weight_gradient(*args, **kwargs)

    def plain_spy(*args):
        plain.append(1)
        return nn_conv._plain_weight_gradient(*args)

    monkeypatch.setattr(nn_conv, "_weight_gradient", functools.partial(spy, plain=plain_spy))
    conv = dl.nn.Conv2d(3, 4, 3)
    conv(dl.randn(2, 3, 6, 6)).sum().backward()
    assert fast == [1] and plain == []  # (the arrays' product, not the plain rule's)
