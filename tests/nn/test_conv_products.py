"""Shortcut 16 of difflab/fastpath.py: a convolution's backward in longer NumPy steps.

The weight gradient ``W̄_g = Ȳ_g X_gᵀ`` computed as ``(X_g Ȳ_gᵀ)ᵀ``, and a same-size
convolution's ``col2im`` as one flat add per kernel position.  These tests check that
each gives the plain rule's numbers bit for bit (OpenBLAS adds a product's terms in
the same order both ways; the slabs are added in the plain order), that they are what
the convolution's rule calls, and that values they do not handle go to the plain rule.
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


_GEOMETRIES = {  # (kernel, stride, padding, dilation); the first four are same-size
    "3x3 pad 1": ((3, 3), (1, 1), (1, 1), (1, 1)),
    "5x5 pad 2": ((5, 5), (1, 1), (2, 2), (1, 1)),
    "1x1": ((1, 1), (1, 1), (0, 0), (1, 1)),
    "3x5 pad (1, 2)": ((3, 5), (1, 1), (1, 2), (1, 1)),
    "stride 2 (plain)": ((3, 3), (2, 2), (1, 1), (1, 1)),
    "dilation 2 (plain)": ((3, 3), (1, 1), (1, 1), (2, 2)),
    "no padding (plain)": ((3, 3), (1, 1), (0, 0), (1, 1)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("groups", [1, 2])
@pytest.mark.parametrize("geometry", _GEOMETRIES.values(), ids=_GEOMETRIES.keys())
def test_the_flat_col2im_is_the_plain_one_bit_for_bit(geometry, groups, dtype):
    (kh, kw), stride, padding, dilation = geometry
    n, c, h, w = 3, 4, 7, 9
    oh = nn_conv.conv_output_size(h, kh, stride[0], padding[0], dilation[0])
    ow = nn_conv.conv_output_size(w, kw, stride[1], padding[1], dilation[1])
    rng = np.random.default_rng(kh * 10 + kw + groups)
    gcols = rng.standard_normal((groups, c // groups, kh, kw, n, oh, ow)).astype(dtype)
    plain = nn_conv._plain_input_gradient(np, gcols.copy(), (n, c, h, w), geometry)
    fast = conv_products.input_gradient(np, gcols.copy(), (n, c, h, w), geometry,
                                        plain=nn_conv._plain_input_gradient)
    assert fast.shape == plain.shape == (n, c, h, w) and fast.dtype == dtype
    assert np.ascontiguousarray(fast).tobytes() == np.ascontiguousarray(plain).tobytes()


def test_the_flat_col2im_sums_like_col2im_with_signed_zeros():
    """A pixel whose every window's gradient is -0 is +0 in both (a sum from +0)."""
    gcols = np.full((1, 1, 3, 3, 1, 4, 4), -0.0)
    geometry = ((3, 3), (1, 1), (1, 1), (1, 1))
    fast = conv_products.input_gradient(np, gcols.copy(), (1, 1, 4, 4), geometry,
                                        plain=nn_conv._plain_input_gradient)
    plain = nn_conv._plain_input_gradient(np, gcols, (1, 1, 4, 4), geometry)
    assert not np.signbit(fast).any() and not np.signbit(plain).any()


def test_values_other_than_numpy_arrays_go_to_the_plain_rule():
    calls = []

    def plain(xp, gm, cols):
        calls.append((gm, cols))
        return "plain"

    gm, cols = dl.ones(1, 2, 3), dl.ones(1, 4, 3)  # (tensors: a recorded backward)
    assert conv_products.weight_gradient(np, gm, cols, plain=plain) == "plain"
    assert calls == [(gm, cols)]
    geometry = ((3, 3), (1, 1), (1, 1), (1, 1))
    objects = np.zeros((1, 1, 3, 3, 1, 2, 2), dtype=object)  # (sympy expressions: plain)
    assert conv_products.input_gradient(np, objects, (1, 1, 2, 2), geometry,
                                        plain=lambda *args: "plain") == "plain"


@pytest.mark.fastpath("16. a convolution's backward")
def test_the_convolution_rule_calls_the_shortcut(monkeypatch):
    """Guards the bit-for-bit comparison in tests/core: a shortcut that silently stopped
    running proves nothing."""
    assert nn_conv._weight_gradient.func is conv_products.weight_gradient
    assert nn_conv._input_gradient.func is conv_products.input_gradient
    fast, plain = [], []

    def spy(shortcut):
        def run(*args, **kwargs):
            fast.append(shortcut.__name__)
            return shortcut(*args, **kwargs)
        return run

    def plain_spy(rule):
        def run(*args):
            plain.append(rule.__name__)
            return rule(*args)
        return run

    for name, shortcut in [("weight", conv_products.weight_gradient),
                           ("input", conv_products.input_gradient)]:
        rule = getattr(nn_conv, f"_plain_{name}_gradient")
        monkeypatch.setattr(nn_conv, f"_{name}_gradient",
                            functools.partial(spy(shortcut), plain=plain_spy(rule)))
    conv = dl.nn.Conv2d(3, 4, 3, padding=1)  # (same-size: the flat col2im applies)
    conv(dl.randn(2, 3, 6, 6, requires_grad=True)).sum().backward()
    assert sorted(fast) == ["input_gradient", "weight_gradient"]
    assert plain == []  # (the arrays' products, not the plain rules)
