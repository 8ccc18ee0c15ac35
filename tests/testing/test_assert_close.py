"""difflab.testing.assert_close and make_tensor, PyTorch's torch.testing."""

import math

import numpy as np
import pytest

import difflab as dl
from difflab.testing import assert_close, make_tensor


def test_reached_by_pytorchs_spelling():
    import difflab as torch

    assert torch.testing.assert_close is assert_close
    assert torch.testing.make_tensor is make_tensor


def test_default_tolerances_per_dtype():
    assert_close(dl.tensor([1.0]), dl.tensor([1.0 + 1e-6]))  # float32: within 1.3e-6 * 1 + 1e-5
    with pytest.raises(AssertionError):
        assert_close(dl.tensor([1.0], dtype=dl.float64), dl.tensor([1.0 + 1e-6], dtype=dl.float64))
    assert_close(dl.tensor([1.0], dtype=dl.float16), dl.tensor([1.0009765625], dtype=dl.float16))
    with pytest.raises(AssertionError, match="not equal"):
        assert_close(dl.tensor([1, 2]), dl.tensor([1, 3]))
    assert_close(dl.tensor([1 + 1j], dtype=dl.complex64), dl.tensor([1 + 1j + 1e-6],
                                                                   dtype=dl.complex64))


def test_message_like_pytorch():
    with pytest.raises(AssertionError) as info:
        assert_close(dl.tensor([[1.0, 2.0], [3.0, 4.0]]), dl.tensor([[1.0, 2.0], [3.5, 4.0]]))
    # The layout of PyTorch's message (torch/testing/_comparison.py): the differences in
    # the inputs' dtype, printed as Python numbers (.item()); integers' quotient in float32
    assert str(info.value) == (
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 4 (25.0%)\n"
        "Greatest absolute difference: 0.5 at index (1, 0) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.1428571492433548 at index (1, 0) "
        "(up to 1.3e-06 allowed)"
    )
    with pytest.raises(AssertionError) as info:
        assert_close(dl.tensor([1, 2]), dl.tensor([1, 3]))
    assert str(info.value) == (
        "Tensor-likes are not equal!\n\n"
        "Mismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 1 at index (1,)\n"
        "Greatest relative difference: 0.3333333432674408 at index (1,)"
    )
    with pytest.raises(AssertionError) as info:
        assert_close(1.0, 0.0)
    assert str(info.value) == (
        "Scalars are not close!\n\nExpected 0.0 but got 1.0.\n"
        "Absolute difference: 1.0 (up to 1e-07 allowed)\n"
        "Relative difference: inf (up to 1e-07 allowed)"
    )
    # a nan that equal_nan accepts is no difference; the other element is the greatest
    with pytest.raises(AssertionError, match="difference: 1.0 at index \\(1,\\)"):
        assert_close(dl.tensor([math.nan, 1.0]), dl.tensor([math.nan, 2.0]), equal_nan=True)


def test_numbers_nested_and_msg():
    assert_close(1.0, 1.0 + 1e-9)
    with pytest.raises(AssertionError, match="Scalars are not close"):
        assert_close(1.0, 1.5)
    with pytest.raises(AssertionError, match="'type' do not match"):
        assert_close(1, 1.0)
    assert_close(1, 1.0, check_dtype=False)
    with pytest.raises(AssertionError, match=r"item \[1\]\['a'\]"):
        assert_close([dl.tensor(1.0), {"a": dl.tensor([1.0])}],
                     [dl.tensor(1.0), {"a": dl.tensor([2.0])}])
    with pytest.raises(AssertionError, match="length"):
        assert_close([1.0], [1.0, 2.0])
    with pytest.raises(AssertionError, match="^mine$"):
        assert_close(1.0, 2.0, msg="mine")
    with pytest.raises(AssertionError, match="^wrapped: Scalars"):
        assert_close(1.0, 2.0, msg=lambda m: "wrapped: " + m)


def test_edges_nan_inf_shape_dtype():
    nan, inf = math.nan, math.inf
    with pytest.raises(AssertionError):
        assert_close(dl.tensor([nan]), dl.tensor([nan]))
    assert_close(dl.tensor([nan, inf, -0.0]), dl.tensor([nan, inf, 0.0]), equal_nan=True)
    with pytest.raises(AssertionError):
        assert_close(dl.tensor([inf]), dl.tensor([-inf]))
    assert_close(dl.tensor([]), dl.tensor([]))
    with pytest.raises(AssertionError, match="'shape' do not match"):
        assert_close(dl.tensor([1.0]), dl.tensor([1.0, 1.0]))
    with pytest.raises(AssertionError, match="'dtype' do not match"):
        assert_close(dl.tensor([1.0]), dl.tensor([1.0], dtype=dl.float64))
    assert_close(dl.tensor([1.0]), dl.tensor([1.0], dtype=dl.float64), check_dtype=False)


def test_bad_arguments():
    with pytest.raises(ValueError, match="rtol"):
        assert_close(1.0, 1.0, rtol=1e-3)
    with pytest.raises(TypeError, match="cannot compare"):
        assert_close(dl.tensor([1.0]), [1.0])
    with pytest.raises(TypeError, match="cannot compare"):
        assert_close(dl.tensor([1.0]), np.array([1.0]))
    assert_close(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9]))
    with pytest.raises(AssertionError, match="Mismatched elements: 1 / 2"):
        assert_close(np.array([1.0, 2.0]), np.array([1.0, 2.1]))
    assert_close(1.0, 1.1, rtol=0.0, atol=0.2)


def test_make_tensor_ranges_and_dtypes():
    dl.manual_seed(0)
    t = make_tensor(50, dtype=dl.float32, device="cpu", low=-1, high=2)
    assert t.dtype == dl.float32 and bool(((t >= -1) & (t < 2)).all())
    i = make_tensor((4, 5), dtype=dl.int64, device="cpu")
    assert i.shape == (4, 5) and bool(((i >= -9) & (i < 10)).all())
    assert make_tensor(3, dtype=dl.bool, device="cpu").dtype == dl.bool
    g = make_tensor(3, dtype=dl.float64, device="cpu", requires_grad=True)
    assert g.requires_grad and g.is_leaf
    assert bool((make_tensor(200, dtype=dl.int8, device="cpu", exclude_zero=True) != 0).all())
    with pytest.raises(ValueError, match="low must be below high"):
        make_tensor(2, dtype=dl.float32, device="cpu", low=1, high=0)
    with pytest.raises(ValueError, match="requires_grad"):
        make_tensor(2, dtype=dl.int64, device="cpu", requires_grad=True)
