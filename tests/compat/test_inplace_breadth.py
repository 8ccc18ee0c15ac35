"""The in-place forms of the math functions (``x.exp_()``, ...) and the in-place
samplers (``x.exponential_()``, ...): the same values and gradients as the out-of-place
forms, the in-place rules kept, and draws from the right distribution."""

from __future__ import annotations

import numpy as np
import pytest

import difflab as dl

#: method name: (the out-of-place computation it must equal, its arguments)
UNARY = {
    "abs_": (lambda x: x.abs(), ()), "neg_": (lambda x: -x, ()), "exp_": (lambda x: x.exp(), ()),
    "log_": (lambda x: x.abs().log(), ()), "sqrt_": (lambda x: x.abs().sqrt(), ()),
    "pow_": (lambda x: x ** 3, (3,)), "sigmoid_": (lambda x: x.sigmoid(), ()),
    "tanh_": (lambda x: x.tanh(), ()), "relu_": (lambda x: x.relu(), ()),
    "floor_": (lambda x: x.floor(), ()), "round_": (lambda x: x.round(), ()),
    "tril_": (lambda x: x.tril(-1), (-1,)), "triu_": (lambda x: x.triu(1), (1,)),
    "log10_": (lambda x: x.abs().log10(), ()), "log2_": (lambda x: x.abs().log2(), ()),
    "clamp_": (lambda x: x.clamp(-1.0, 1.0), (-1.0, 1.0)),
}
POSITIVE_ONLY = {"log_", "sqrt_", "log10_", "log2_"}


def _start(name):
    values = np.array([[0.3, -1.2, 2.5], [1.7, -0.4, 0.9], [-2.2, 0.6, 1.1]])
    return np.abs(values) if name in POSITIVE_ONLY else values


@pytest.mark.parametrize("name", sorted(UNARY))
def test_in_place_equals_out_of_place_in_value_and_gradient(name):
    out_of_place, args = UNARY[name]
    a = dl.tensor(_start(name), dtype=dl.float64, requires_grad=True)
    b = dl.tensor(_start(name), dtype=dl.float64, requires_grad=True)
    weights = dl.tensor(np.arange(1.0, 10.0).reshape(3, 3), dtype=dl.float64)
    in_place = a * 1.0  # (a non-leaf: a leaf that requires grad may not change in place)
    returned = getattr(in_place, name)(*args)
    assert returned is in_place
    expected = out_of_place(b)
    np.testing.assert_allclose(in_place.detach().numpy(), expected.detach().numpy())
    if expected.requires_grad:
        (in_place * weights).sum().backward()
        (expected * weights).sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy())


@pytest.mark.parametrize("name", sorted(UNARY))
def test_a_leaf_that_requires_grad_is_refused(name):
    _, args = UNARY[name]
    leaf = dl.tensor(_start(name), requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf tensor"):
        getattr(leaf, name)(*args)
    with dl.no_grad():
        getattr(leaf, name)(*args)  # the documented way: allowed, version bumped
    assert leaf._version[0] == 1


#: sampler: (arguments, the mean of its distribution, a check of every draw)
SAMPLERS = {
    "exponential_": ((2.0,), 0.5, lambda x: x >= 0),
    "geometric_": ((0.25,), 4.0, lambda x: (x >= 1) & (x == x.round())),
    "log_normal_": ((0.0, 0.5), float(np.exp(0.125)), lambda x: x > 0),
    "bernoulli_": ((0.3,), 0.3, lambda x: (x == 0) | (x == 1)),
    "random_": ((2, 5), 3.0, lambda x: (x >= 2) & (x < 5) & (x == x.round())),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_samplers_draw_from_their_distribution_reproducibly(name):
    args, mean, valid = SAMPLERS[name]
    dl.manual_seed(3)
    x = getattr(dl.empty(40_000, dtype=dl.float64), name)(*args)
    dl.manual_seed(3)
    again = getattr(dl.empty(40_000, dtype=dl.float64), name)(*args)
    assert x.tolist() == again.tolist()
    assert bool(valid(x).all())
    assert abs(x.mean().item() - mean) < 0.05 * max(mean, 1.0)
    generator = dl.Generator().manual_seed(9)
    one = getattr(dl.empty(5), name)(*args, generator=generator)
    generator.manual_seed(9)
    assert getattr(dl.empty(5), name)(*args, generator=generator).tolist() == one.tolist()


def test_cauchy_median_and_scale():
    dl.manual_seed(1)
    x = dl.empty(40_001, dtype=dl.float64).cauchy_(median=2.0, sigma=0.5)
    assert abs(dl.median(x).item() - 2.0) < 0.02
    quartiles = np.quantile(x.numpy(), [0.25, 0.75])
    np.testing.assert_allclose(quartiles, [1.5, 2.5], atol=0.03)


def test_random_defaults_cover_the_dtype():
    dl.manual_seed(0)
    assert bool((dl.empty(1000, dtype=dl.int64).random_() >= 0).all())
    floats = dl.empty(1000).random_()
    assert floats.max().item() <= 2 ** 24 and bool((floats == floats.round()).all())
    assert set(dl.empty(100, dtype=dl.bool).random_().tolist()) <= {True, False}


@pytest.mark.parametrize("call, words", [
    (lambda: dl.empty(2).exponential_(0.0), "positive rate"),
    (lambda: dl.empty(2).geometric_(1.5), r"probability p in \(0, 1\]"),
    (lambda: dl.empty(2).bernoulli_(-0.1), r"probability p in \[0, 1\]"),
    (lambda: dl.empty(2).random_(5, 5), "from_ < to"),
])
def test_bad_parameters_get_a_clear_error(call, words):
    with pytest.raises(ValueError, match=words):
        call()
