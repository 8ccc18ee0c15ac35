"""Adaptive pooling's ``output_size``: ``None`` keeps the input's size on that side (PyTorch),
and the 3-D forms (``F.adaptive_avg_pool3d``/``adaptive_max_pool3d``, ``nn.AdaptiveAvgPool3d``/
``AdaptiveMaxPool3d``) with PyTorch's bins."""

import numpy as np
import pytest

import difflab as dl
import difflab.nn as nn
import difflab.nn.functional as F


def _bins(n, m):
    return [((i * n) // m, -(-((i + 1) * n) // m)) for i in range(m)]


def _reference(x, sizes, reduce):
    """Pooling over every box of PyTorch's bins, one box at a time (NumPy)."""
    spatial = x.shape[-len(sizes):]
    out = np.empty(x.shape[:-len(sizes)] + tuple(sizes))
    for cell in np.ndindex(*sizes):
        box = tuple(slice(*_bins(n, m)[i]) for n, m, i in zip(spatial, sizes, cell))
        out[(..., *cell)] = reduce(x[(..., *box)], axis=tuple(range(-len(sizes), 0)))
    return out


@pytest.mark.parametrize("pool,reduce", [(F.adaptive_avg_pool2d, np.mean),
                                         (F.adaptive_max_pool2d, np.max)])
@pytest.mark.parametrize("output_size,expected", [((3, None), (3, 6)), ((None, 4), (5, 4)),
                                                  ((None, None), (5, 6)), (None, (5, 6))])
def test_none_keeps_the_input_size_in_2d(pool, reduce, output_size, expected):
    x = dl.randn(2, 3, 5, 6, dtype=dl.float64)
    out = pool(x, output_size)
    assert tuple(out.shape) == (2, 3, *expected)
    np.testing.assert_allclose(out.numpy(), _reference(x.numpy(), expected, reduce))


def test_the_modules_accept_none_too():
    x = dl.randn(1, 2, 7, 5)
    assert nn.AdaptiveAvgPool2d((None, 2))(x).shape == (1, 2, 7, 2)
    assert nn.AdaptiveMaxPool2d((3, None))(x).shape == (1, 2, 3, 5)
    assert nn.AdaptiveAvgPool3d((None, 2, None))(x).shape == (1, 2, 2, 5)  # (C, D, H, W)
    assert nn.AdaptiveMaxPool3d((2, None, 1))(x[None]).shape == (1, 1, 2, 7, 1)


@pytest.mark.parametrize("pool,reduce", [(F.adaptive_avg_pool3d, np.mean),
                                         (F.adaptive_max_pool3d, np.max)])
@pytest.mark.parametrize("output_size,expected", [(1, (1, 1, 1)), ((2, 3, 4), (2, 3, 4)),
                                                  ((3, None, 2), (3, 5, 2)),
                                                  ((None, 2, 6), (4, 2, 6))])
def test_3d_pooling_uses_pytorchs_bins(pool, reduce, output_size, expected):
    x = dl.randn(2, 3, 4, 5, 6, dtype=dl.float64)
    out = pool(x, output_size)
    assert tuple(out.shape) == (2, 3, *expected)
    np.testing.assert_allclose(out.numpy(), _reference(x.numpy(), expected, reduce))
    unbatched = pool(x[0], output_size)
    np.testing.assert_allclose(unbatched.numpy(), out[0].numpy())


@pytest.mark.parametrize("pool", [F.adaptive_avg_pool3d, F.adaptive_max_pool3d])
def test_3d_pooling_gradients_match_finite_differences(pool):
    x = dl.randn(1, 2, 3, 4, 5, dtype=dl.float64, requires_grad=True)
    assert dl.autograd.gradcheck(lambda t: pool(t, (2, None, 3)), (x,))


def test_bad_output_sizes_are_refused_with_the_rule():
    x = dl.randn(1, 2, 5, 6)
    with pytest.raises(ValueError, match="positive int or None"):
        F.adaptive_avg_pool2d(x, (0, None))
    with pytest.raises(ValueError, match="positive int or None"):
        F.adaptive_max_pool2d(x, 2.5)
    with pytest.raises(ValueError, match="an int or 2 entries"):
        F.adaptive_avg_pool2d(x, (2,))
    with pytest.raises(ValueError, match="an int or 3 entries"):
        F.adaptive_avg_pool3d(x[None], (2, 2))
    with pytest.raises(ValueError, match="4-D or 5-D"):
        F.adaptive_max_pool3d(x[0, 0], 2)
    values, indices = F.adaptive_max_pool3d(x[None], 2, return_indices=True)  # (now given)
    assert indices.shape == values.shape and indices.dtype == dl.int64
