"""The structured initialisations: orthogonal_, dirac_ and sparse_ (PyTorch's nn.init)."""

import numpy as np
import pytest

import difflab as dl
from difflab import nn


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4), (6, 2, 3, 3), (2, 3, 4), (1, 7)])
@pytest.mark.parametrize("gain", [1.0, 2.5])
def test_orthogonal_gives_orthonormal_rows_or_columns_times_the_gain(shape, gain):
    dl.manual_seed(0)
    w = nn.init.orthogonal_(dl.empty(*shape), gain=gain)
    m = w.numpy().reshape(shape[0], -1).astype(np.float64)
    small = min(m.shape)
    gram = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
    np.testing.assert_allclose(gram, gain ** 2 * np.eye(small), atol=1e-5)


def test_orthogonal_is_a_fresh_random_draw_and_follows_the_seed():
    dl.manual_seed(3)
    a = nn.init.orthogonal_(dl.empty(4, 4)).numpy()
    dl.manual_seed(3)
    b = nn.init.orthogonal_(dl.empty(4, 4)).numpy()
    c = nn.init.orthogonal_(dl.empty(4, 4)).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


def test_orthogonal_matrices_are_spread_uniformly():
    """The sign fix of QR makes Q Haar-distributed: each entry of a random 2x2 rotation
    or reflection has mean 0 (without it, QR's positive-diagonal R biases the signs)."""
    dl.manual_seed(0)
    entries = np.array([nn.init.orthogonal_(dl.empty(2, 2)).numpy()[0, 0] for _ in range(400)])
    assert abs(entries.mean()) < 0.15


def test_init_functions_keep_the_dtype_and_write_in_place():
    w = nn.Linear(6, 4).weight
    before = w
    nn.init.orthogonal_(w)
    assert w is before and w.dtype == dl.float32 and w.requires_grad
    nn.init.orthogonal_(dl.empty(3, 3, dtype=dl.float64))


@pytest.mark.parametrize("groups", [1, 2])
@pytest.mark.parametrize("kernel", [(3,), (3, 3), (3, 3, 3), (1, 5)])
def test_dirac_weight_makes_the_convolution_an_identity(groups, kernel):
    conv = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}[len(kernel)]
    layer = conv(4, 4, kernel, padding=tuple(k // 2 for k in kernel), groups=groups, bias=False)
    nn.init.dirac_(layer.weight, groups=groups)
    x = dl.randn(2, 4, *([5] * len(kernel)))
    np.testing.assert_allclose(layer(x).detach().numpy(), x.numpy(), atol=1e-6)


def test_dirac_with_more_outputs_than_inputs_passes_the_first_ones():
    w = nn.init.dirac_(dl.empty(3, 2, 3))
    assert w[:, :, 1].tolist() == [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]
    assert float(w[:, :, 0].abs().sum()) == 0.0


def test_sparse_zeroes_the_fraction_of_each_column():
    dl.manual_seed(0)
    w = nn.init.sparse_(dl.empty(10, 6), sparsity=0.25, std=0.5).numpy()
    assert ((w == 0).sum(axis=0) == 3).all()  # ceil(0.25 * 10)
    assert 0.2 < w[w != 0].std() < 0.9
    assert (nn.init.sparse_(dl.empty(3, 2), 0.0).numpy() != 0).all()
    assert (nn.init.sparse_(dl.empty(3, 2), 1.0).numpy() == 0).all()


@pytest.mark.parametrize("call, match", [
    (lambda: nn.init.orthogonal_(dl.empty(3)), "2 or more dimensions"),
    (lambda: nn.init.dirac_(dl.empty(3, 3)), "3, 4 and 5 dimensional"),
    (lambda: nn.init.dirac_(dl.empty(3, 3, 3), groups=2), "divisible by groups"),
    (lambda: nn.init.sparse_(dl.empty(3, 3, 3), 0.5), "2 dimensions"),
    (lambda: nn.init.sparse_(dl.empty(3, 3), 1.5), r"sparsity must be in \[0, 1\]"),
])
def test_wrong_shapes_and_values_are_refused_clearly(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_empty_tensors_are_left_alone():
    with pytest.warns(UserWarning, match="zero-element"):
        assert nn.init.orthogonal_(dl.empty(0, 3)).shape == (0, 3)
