"""``dl.round(x, decimals=n)`` and ``Tensor.round(decimals=n)``, as PyTorch (one mechanism with
``round_``): round(x · 10^n) / 10^n, halves to even, no gradient."""

import numpy as np
import pytest

import difflab as dl


@pytest.mark.parametrize("decimals", [-2, -1, 1, 2, 3])
def test_round_with_decimals_is_numpys_around(decimals):
    values = np.array([0.1234567, -2.71828, 1250.0, 1234.5, -0.125, 0.0], dtype=np.float64)
    x = dl.tensor(values)
    expected = np.round(values * 10.0 ** decimals) / 10.0 ** decimals
    np.testing.assert_array_equal(dl.round(x, decimals=decimals).numpy(), expected)
    np.testing.assert_array_equal(x.round(decimals=decimals).numpy(), expected)
    np.testing.assert_array_equal(x.clone().round_(decimals=decimals).numpy(), expected)


def test_round_keeps_the_dtype_and_gives_a_zero_gradient():
    x = dl.tensor([0.1234567, 2.5], requires_grad=True)
    y = dl.round(x, decimals=2)
    assert y.dtype == dl.float32 and y.requires_grad  # (PyTorch: zeros flow back)
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]
    assert y.tolist() == pytest.approx([0.12, 2.5])
    assert dl.round([1.26, 3.14159], decimals=1).tolist() == pytest.approx([1.3, 3.1])


def test_round_with_decimals_on_integers_and_bad_decimals():
    ints = dl.tensor([15, 25])
    assert ints.round().tolist() == [15, 25] and ints.round(decimals=0).dtype == dl.int64
    for decimals in (1, -1):
        with pytest.raises(RuntimeError, match=r"needs a floating-point tensor.*\.float\(\)"):
            ints.round(decimals=decimals)
    with pytest.raises(TypeError, match="decimals must be an int, got float"):
        dl.round(dl.ones(2), decimals=1.5)
    with pytest.raises(TypeError):
        dl.ones(2).round(2)  # keyword-only, as PyTorch
