"""Creation functions and dtype questions refuse bad input with a clear error (issue 31:
found while documenting)."""

from __future__ import annotations

import pytest

import difflab as dl


def test_range_refuses_a_zero_step():
    # Before: ZeroDivisionError from the count of values.
    with pytest.raises(ValueError, match="step must be nonzero"):
        dl.range(0, 1, 0)


def test_randperm_refuses_a_negative_n():
    # Before: an empty tensor, silently.
    with pytest.raises(ValueError, match="non-negative"):
        dl.randperm(-1)
    assert dl.randperm(0).tolist() == []


@pytest.mark.parametrize("draw", [
    lambda: dl.rand(3, dtype=dl.int64),
    lambda: dl.randn(3, dtype=dl.int32),
    lambda: dl.normal(0.0, 1.0, (3,), dtype=dl.int64),
    lambda: dl.rand_like(dl.tensor([1, 2])),
    lambda: dl.randn_like(dl.tensor([1, 2])),
], ids=["rand", "randn", "normal", "rand_like", "randn_like"])
def test_floating_draws_refuse_an_integer_dtype(draw):
    # Before: uniform/normal numbers cast to integers, mostly zeros, silently.
    with pytest.raises(TypeError, match="floating dtype"):
        draw()


def test_floating_draws_keep_the_floating_dtypes():
    assert dl.rand(2, dtype=dl.float64).dtype == dl.float64
    assert dl.randn_like(dl.zeros(2, dtype=dl.float16)).dtype == dl.float16


@pytest.mark.parametrize("like", [dl.zeros_like, dl.ones_like, dl.empty_like, dl.rand_like,
                                  dl.randn_like])
def test_like_functions_ask_for_a_tensor(like):
    # Before: AttributeError: 'list' object has no attribute 'shape'.
    with pytest.raises(TypeError, match="expects a Tensor"):
        like([1.0, 2.0])


def test_full_and_randint_like_ask_for_a_tensor():
    with pytest.raises(TypeError, match="full_like expects a Tensor"):
        dl.full_like([1.0], 2.0)
    with pytest.raises(TypeError, match="randint_like expects a Tensor"):
        dl.randint_like([1.0], 5)


@pytest.mark.parametrize("ask", [dl.is_floating_point, dl.is_complex])
def test_dtype_questions_ask_for_a_tensor(ask):
    # Before: AttributeError: 'list' object has no attribute 'dtype'.
    with pytest.raises(TypeError, match="expects a tensor"):
        ask([1.0])
    assert ask(dl.tensor([1.0])) is (ask is dl.is_floating_point)
