"""What the in-place methods' docstrings promise (written once, in ``tensor_inplace``'s
``_RETURNS``/``_RAISES``/``_NOTES``), held true here: the version counter, the leaf
rule, the view rule, gradients through a write, a saved value overwritten; and the
fixes made while documenting them (errors that name the method, ``round_(decimals)``,
``random_(to)``, the fills' checks, out-of-range indices, ``tile``'s counts)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import difflab as dl
from difflab.tensor_inplace import _NOTES, _RAISES, _RETURNS
from tests.docs.docstring_rules import SECTION, docstring

#: every in-place method the template documents: (name, arguments)
METHODS = {
    "abs_": (), "neg_": (), "exp_": (), "sigmoid_": (), "tanh_": (), "relu_": (),
    "floor_": (), "round_": (), "erfc_": (), "add_": (1.0,), "sub_": (1.0,), "mul_": (2.0,),
    "div_": (2.0,), "pow_": (2,), "clamp_": (-1.0, 1.0), "fill_": (3.0,), "zero_": (),
    "copy_": (dl.ones(2),), "normal_": (), "uniform_": (), "bernoulli_": (0.5,),
    "random_": (0, 5), "exponential_": (), "cauchy_": (), "log_normal_": (),
    "geometric_": (0.5,), "tril_": (), "triu_": (),
    "index_add_": (0, dl.tensor([0]), dl.ones(1, 2)),
    "index_fill_": (0, dl.tensor([1]), 0.0),
    "index_put_": ((dl.tensor([0]),), dl.tensor(1.0)),
    "index_copy_": (0, dl.tensor([1]), dl.ones(1, 2)),
    "index_reduce_": (0, dl.tensor([1]), dl.ones(1, 2), "amax"),
    "scatter_reduce_": (0, dl.tensor([[1, 0]]), dl.ones(1, 2), "sum"),
}


@pytest.mark.parametrize("name", sorted(METHODS))
def test_every_in_place_method_carries_the_shared_contract(name):
    doc = docstring(getattr(dl.Tensor, name))
    for section, text in (("Returns", _RETURNS), ("Raises", _RAISES), ("Notes", _NOTES)):
        assert SECTION[section] in doc and text in doc, (name, section)


@pytest.mark.parametrize("name", sorted(METHODS))
def test_returns_self_and_bumps_the_version_counter(name):
    x = dl.tensor([[0.5, -0.25], [0.75, 1.5]])
    before = x._version[0]
    assert getattr(x, name)(*METHODS[name]) is x
    assert x._version[0] == before + 1


@pytest.mark.parametrize("name", sorted(METHODS))
def test_a_leaf_that_requires_grad_refuses_and_the_error_names_the_method(name):
    leaf = dl.tensor([[0.5, -0.25], [0.75, 1.5]], requires_grad=True)
    with pytest.raises(RuntimeError, match=rf"leaf tensor .*\({name}\).*no_grad"):
        getattr(leaf, name)(*METHODS[name])
    with dl.no_grad():  # (the way out the message gives)
        assert getattr(leaf, name)(*METHODS[name]) is leaf


def test_a_write_into_a_view_of_a_tensor_in_a_graph_is_the_base_s_write():
    x = dl.ones(3, requires_grad=True)
    base = x * 2
    base[1:].mul_(3.0)  # (PyTorch's CopySlices: base = 2x, times 3 past the first)
    (base * dl.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [2.0, 12.0, 18.0]


def test_a_view_of_a_leaf_that_requires_grad_refuses():
    x = dl.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"view of a leaf .*\(add_\).*clone\(\)"):
        x[1:].add_(1.0)


def test_a_view_sees_the_write_into_its_base_and_the_base_sees_a_write_into_the_view():
    base = dl.zeros(2, 2)
    row = base[1]
    base.fill_(1.0)
    assert row.tolist() == [1.0, 1.0]
    row.mul_(5.0)
    assert base.tolist() == [[1.0, 1.0], [5.0, 5.0]]


def test_gradients_flow_through_a_write_to_the_old_value_and_the_other_argument():
    x = dl.tensor([1.0, 2.0], dtype=dl.float64, requires_grad=True)
    w = dl.tensor([3.0, 4.0], dtype=dl.float64, requires_grad=True)
    y = x * 1.0
    y.mul_(w).exp_()  # y = exp(x * w)
    y.sum().backward()
    expected = np.exp([3.0, 8.0])
    assert np.allclose(x.grad.numpy(), expected * [3.0, 4.0])
    assert np.allclose(w.grad.numpy(), expected * [1.0, 2.0])


def test_a_backward_that_needs_an_overwritten_value_raises():
    x = dl.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1.0
    b = a.sin()  # (sin saves its input a)
    a.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        b.sum().backward()


def test_arithmetic_errors_name_the_method_not_the_ufunc():
    with pytest.raises(RuntimeError, match=r"^sub_: cannot write"):
        dl.zeros(3).sub_(dl.ones(2))
    with pytest.raises(RuntimeError, match=r"^div_: cannot write"):
        dl.zeros(3, dtype=dl.int64).div_(2)


def test_round_with_decimals():
    x = dl.tensor([1.25, 1234.0, -0.126], dtype=dl.float64)
    assert x.clone().round_(1).tolist() == [1.2, 1234.0, -0.1]  # (halves to even)
    assert x.clone().round_(-2).tolist() == [0.0, 1200.0, -0.0]
    assert x.clone().round_(2).tolist() == [1.25, 1234.0, -0.13]


def test_random_with_one_argument_draws_below_it():
    dl.manual_seed(0)
    x = dl.empty(200, dtype=dl.int64).random_(3)
    assert set(x.tolist()) == {0, 1, 2}
    y = dl.empty(200).random_(2, 4)
    assert set(y.tolist()) == {2.0, 3.0}
    with pytest.raises(ValueError, match=r"from_ < to"):
        dl.empty(2).random_(4, 2)


@pytest.mark.parametrize("name", ["normal_", "uniform_", "exponential_", "cauchy_",
                                  "log_normal_"])
def test_continuous_fills_refuse_an_integer_tensor(name):
    with pytest.raises(TypeError, match=rf"{name} draws real numbers.*floating"):
        getattr(dl.zeros(3, dtype=dl.int64), name)()


def test_the_fills_check_their_scales():
    with pytest.raises(ValueError, match="log_normal_ expects a standard deviation"):
        dl.empty(2).log_normal_(0.0, -1.0)
    with pytest.raises(ValueError, match="cauchy_ expects a positive scale"):
        dl.empty(2).cauchy_(0.0, 0.0)


def test_the_fills_follow_their_distributions():
    g = dl.Generator().manual_seed(3)
    n = 20_000
    x = dl.empty(n, dtype=dl.float64).log_normal_(0.5, 0.25, generator=g)
    assert abs(x.log().mean().item() - 0.5) < 0.01
    assert abs(x.mean().item() - math.exp(0.5 + 0.25 ** 2 / 2)) < 0.02
    c = dl.empty(n, dtype=dl.float64).cauchy_(2.0, 0.5, generator=g)
    assert abs(c.median().item() - 2.0) < 0.03
    q1, q3 = np.quantile(c.numpy(), [0.25, 0.75])
    assert abs((q3 - q1) / 2 - 0.5) < 0.03  # (sigma is half the interquartile range)
    k = dl.empty(n, dtype=dl.int64).geometric_(0.25, generator=g)
    assert k.min().item() >= 1 and abs(k.double().mean().item() - 4.0) < 0.1


def test_index_put_and_index_fill_refuse_an_out_of_range_index():
    with pytest.raises(IndexError, match=r"index_put: index 5 is out of range"):
        dl.index_put(dl.zeros(3), (dl.tensor([0, 5]),), dl.ones(2))
    with pytest.raises(IndexError, match=r"index_put: index -4 is out of range"):
        dl.index_put(dl.zeros(3), (dl.tensor([-4]),), dl.ones(1), accumulate=True)
    with pytest.raises(IndexError, match=r"index_fill: index 3 is out of range"):
        dl.index_fill(dl.zeros(2, 3), 1, dl.tensor([3]), 1.0)
    assert dl.index_fill(dl.zeros(3), 0, dl.tensor([-1]), 1.0).tolist() == [0.0, 0.0, 1.0]


def test_tile_refuses_negative_counts():
    with pytest.raises(RuntimeError, match="tile: the repetitions must be non-negative"):
        dl.tile(dl.ones(2), (-1,))
    assert dl.tile(dl.ones(2), (0,)).shape == (0,)


def test_fill_and_copy_pass_the_gradient_to_the_value_not_to_the_old_values():
    v = dl.tensor(2.0, requires_grad=True)
    x = dl.zeros(3)
    x.fill_(v)  # (a 0-d value: the sum of every entry's gradient)
    (x * dl.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert v.grad.item() == 6.0
    src = dl.tensor([1.0, 2.0], requires_grad=True)
    old = dl.ones(2, requires_grad=True)
    y = old * 1.0
    y.copy_(src)
    (y * dl.tensor([3.0, 4.0])).sum().backward()
    assert src.grad.tolist() == [3.0, 4.0] and old.grad.tolist() == [0.0, 0.0]
    row = dl.tensor([1.0, 2.0], requires_grad=True)
    dl.zeros(2, 2).copy_(row).sum().backward()  # (broadcast: summed back)
    assert row.grad.tolist() == [2.0, 2.0]
