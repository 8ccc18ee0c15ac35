"""Max pooling with return_indices (F.max_poolNd_with_indices, MaxPoolNd(return_indices=True))
and the unpooling that takes them (F.max_unpoolNd, MaxUnpoolNd): PyTorch's indices (ties
to the first maximum in scanning order) written here, the unpooled values, gradients, the
CuPy stand-in and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import difflab as dl
from difflab.autograd import gradcheck

F = dl.nn.functional
nn = dl.nn


def test_indices_match_pytorch_ties_included():
    x = dl.arange(2 * 2 * 5 * 6, dtype=dl.float64).reshape(2, 2, 5, 6) * 7 % 11  # many ties
    y, where = F.max_pool2d(x, 3, 2, 1, return_indices=True)
    assert y.shape == where.shape == (2, 2, 3, 3) and where.dtype == dl.int64
    assert where.flatten()[:12].tolist() == [6, 3, 3, 6, 14, 17, 25, 25, 28, 6, 9, 9]
    assert dl.equal(y, F.max_pool2d(x, 3, 2, 1))
    x1 = dl.arange(14, dtype=dl.float64).reshape(2, 7) * 5 % 6  # unbatched (C, L)
    y1, where1 = F.max_pool1d_with_indices(x1, 3, 2, 1)
    assert where1.tolist() == [[1, 1, 3, 5], [0, 1, 3, 6]]
    x3 = dl.arange(2 * 4 * 4 * 4, dtype=dl.float64).reshape(1, 2, 4, 4, 4) * 5 % 7
    y3, where3 = nn.MaxPool3d((2, 3, 2), (2, 1, 2), (1, 1, 0), return_indices=True)(x3)
    assert where3.shape == (1, 2, 3, 4, 2)
    assert where3.flatten()[:12].tolist() == [4, 2, 4, 11, 4, 11, 8, 11, 32, 18, 25, 18]
    # the indices pick the maxima out of the flattened input
    flat = x3.reshape(1, 2, -1)
    assert dl.equal(flat.gather(2, where3.reshape(1, 2, -1)).reshape(y3.shape), y3)


def test_unpool_matches_pytorch_and_inverts_the_pool():
    x = dl.arange(2 * 2 * 5 * 6, dtype=dl.float64).reshape(2, 2, 5, 6) * 7 % 11
    y, where = nn.MaxPool2d(3, 2, 1, return_indices=True)(x)
    out = nn.MaxUnpool2d(3, 2, 1)(y, where, output_size=(5, 6))
    assert out[0, 0].tolist() == [[0, 0, 0, 10, 0, 0], [9, 0, 0, 0, 0, 0], [0, 0, 10, 0, 0, 9],
                                  [0, 0, 0, 0, 0, 0], [0, 10, 0, 0, 9, 0]]
    # pooling the unpooled maxima gives them back
    z = dl.tensor(np.random.default_rng(0).standard_normal((1, 3, 4, 6)))
    values, where = F.max_pool2d(z, 2, return_indices=True)
    assert dl.equal(F.max_pool2d(F.max_unpool2d(values, where, 2), 2), values)
    v3, w3 = F.max_pool3d(dl.arange(8.0).reshape(1, 1, 2, 2, 2), 2, return_indices=True)
    assert F.max_unpool3d(v3, w3, 2).flatten().tolist() == [0, 0, 0, 0, 0, 0, 0, 7.0]
    v1, w1 = F.max_pool1d(dl.tensor([[1.0, 5.0, 2.0, 0.0]]), 2, return_indices=True)
    assert nn.MaxUnpool1d(2)(v1, w1).tolist() == [[0.0, 5.0, 2.0, 0.0]]  # unbatched
    assert repr(nn.MaxUnpool2d(2)) == ("MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), "
                                       "padding=(0, 0))")


def test_gradients_through_pool_and_unpool():
    x = dl.tensor(np.random.default_rng(1).standard_normal((1, 2, 4, 4)), requires_grad=True)

    def roundtrip(x):
        values, where = F.max_pool2d(x, 2, return_indices=True)
        return F.max_unpool2d(values * 2.0, where, 2)

    assert gradcheck(roundtrip, (x,))
    values = dl.tensor(np.random.default_rng(2).standard_normal((1, 2, 3)), requires_grad=True)
    where = dl.tensor([[[0, 3, 5], [1, 2, 4]]])
    assert gradcheck(lambda v: F.max_unpool1d(v, where, 2), (values,))


#: Indices that repeat, per dimension count: (the indices, PyTorch's unpooled values of
#: 1, 2, 3, 4 there (torch 2.x on the CPU in one thread: the last repeat is written; with
#: several threads PyTorch may keep another, its documented nondeterminism), which of the
#: four values are written).
REPEATED = {
    1: ([[[1, 1, 3, 1]]], {1: 4.0, 3: 3.0}, [0.0, 0.0, 1.0, 1.0]),
    2: ([[[[5, 5], [0, 5]]]], {0: 3.0, 5: 4.0}, [0.0, 0.0, 1.0, 1.0]),
    3: ([[[[[3, 3], [3, 0]]]]], {0: 4.0, 3: 3.0}, [0.0, 0.0, 1.0, 1.0]),
}


@pytest.mark.parametrize("dims", REPEATED)
def test_unpool_of_repeated_indices_writes_the_last_and_differentiates_only_it(dims):
    """Where indices repeat, the last value is written (PyTorch's values), and every method
    differentiates what is written: a value that is overwritten has derivative 0 (reverse
    mode gave each repeat the gradient there, forward mode only the written one)."""
    indices, written_values, written = REPEATED[dims]
    shape = (1, 1) + (1,) * (dims - 2) + ((2, 2) if dims > 1 else (4,))
    unpool = getattr(F, f"max_unpool{dims}d")
    where = dl.tensor(indices)

    def f(v):
        return unpool(v.reshape(shape), where, 2).reshape(-1)

    values = dl.tensor([1.0, 2.0, 3.0, 4.0], dtype=dl.float64)
    out = f(values)
    expected = np.zeros(out.shape[0])
    expected[list(written_values)] = list(written_values.values())
    assert out.tolist() == expected.tolist()
    weights = dl.tensor(np.arange(1.0, out.shape[0] + 1.0))
    gradient = np.array(written) * weights.numpy()[[int(i) for i in where.flatten()]]

    def g(v):
        return dl.sum(f(v) * weights)

    for method in ("forward", "reverse", "symbolic", "numeric"):
        np.testing.assert_allclose(dl.grad(g, method=method)(values), gradient, atol=1e-8,
                                   err_msg=method)
    for transform in (dl.func.jacfwd, dl.func.jacrev):
        np.testing.assert_allclose(transform(g)(values).numpy(), gradient, atol=1e-15)
    assert gradcheck(f, (values.clone().requires_grad_(),))


def test_gradients_through_overlapping_pool_and_unpool():
    """Overlapping windows pick one entry twice: the unpooled value is written once, and
    its gradient reaches the entry once (it went there twice before)."""
    x = dl.tensor(np.random.default_rng(3).standard_normal((1, 2, 5, 6)), requires_grad=True)

    def roundtrip(x):
        values, where = F.max_pool2d(x, 3, 2, 1, return_indices=True)
        return F.max_unpool2d(values, where, 3, 2, 1, output_size=(5, 6))

    values, where = F.max_pool2d(x, 3, 2, 1, return_indices=True)
    assert len(set(where[0, 0].flatten().tolist())) < where[0, 0].numel()   # (repeats)
    roundtrip(x).sum().backward()
    assert x.grad.tolist() == (roundtrip(x) != 0).double().tolist()
    assert gradcheck(roundtrip, (x.detach().clone().requires_grad_(),))


def test_pool_index_and_unpool_errors():
    x = dl.ones(1, 1, 4, 4)
    values, where = F.max_pool2d(x, 2, return_indices=True)
    with pytest.raises(ValueError, match="indices must be integers of the input's shape"):
        F.max_unpool2d(values, where.float(), 2)
    with pytest.raises(ValueError, match="indices must be integers"):
        F.max_unpool2d(values, where[..., :1], 2)
    with pytest.raises(RuntimeError, match="invalid max index 40"):
        F.max_unpool2d(values, where * 0 + 40, 2)
    with pytest.raises(ValueError, match="invalid output_size"):
        F.max_unpool2d(values, where, 2, output_size=(9, 9))
    with pytest.raises(ValueError, match="expects a 3-D \\(unbatched\\) or 4-D input"):
        F.max_unpool2d(values[0, 0], where[0, 0], 2)
    with pytest.raises(NotImplementedError, match="ceil_mode=True"):
        nn.MaxPool2d(2, ceil_mode=True)(x)


def test_pool_indices_on_cuda(cuda):
    x = dl.tensor(np.arange(2 * 2 * 5 * 6).reshape(2, 2, 5, 6) * 7 % 11.0, device=cuda)
    y, where = F.max_pool2d(x, 3, 2, 1, return_indices=True)
    assert where.device == cuda
    assert where.cpu().flatten()[:12].tolist() == [6, 3, 3, 6, 14, 17, 25, 25, 28, 6, 9, 9]
    out = nn.MaxUnpool2d(3, 2, 1)(y, where, output_size=(5, 6))
    assert out.device == cuda and out.cpu()[0, 0, 0].tolist() == [0, 0, 0, 10, 0, 0]


def test_adaptive_max_pool_indices_match_pytorch():
    x = dl.arange(2 * 7 * 5, dtype=dl.float64).reshape(2, 7, 5) * 5 % 9  # unbatched, ties
    y, where = F.adaptive_max_pool2d(x, (3, 2), return_indices=True)
    assert where.tolist() == [[[7, 7], [16, 14], [25, 34]], [[6, 8], [17, 17], [26, 24]]]
    assert dl.equal(y, F.adaptive_max_pool2d(x, (3, 2)))
    assert dl.equal(x.reshape(2, -1).gather(1, where.reshape(2, -1)).reshape(2, 3, 2), y)
    x3 = dl.arange(2 * 5 * 7 * 3, dtype=dl.float64).reshape(1, 2, 5, 7, 3) * 7 % 10
    y3, where3 = nn.AdaptiveMaxPool3d((2, 3, 2), return_indices=True)(x3)
    assert where3.flatten()[:12].tolist() == [7, 7, 7, 7, 37, 17, 67, 47, 97, 77, 57, 77]
    y1, where1 = F.adaptive_max_pool1d_with_indices(dl.tensor([[[1.0, 5.0, 2.0, 0.0, 3.0]]]), 2)
    assert where1.tolist() == [[[1, 4]]]
    _, where2 = F.adaptive_max_pool2d_with_indices(x.unsqueeze(0), (3, 2))
    assert dl.equal(where2[0], where)
    _, w3 = F.adaptive_max_pool3d_with_indices(dl.arange(8.0).reshape(1, 1, 2, 2, 2), 1)
    assert w3.flatten().tolist() == [7]
    # the values keep their gradient when the indices are asked for too
    z = dl.tensor(np.random.default_rng(5).standard_normal((1, 2, 5, 4)), requires_grad=True)
    assert gradcheck(lambda z: F.adaptive_max_pool2d(z, (2, 3), True)[0], (z,))


# ------------------------------------------------------------------ fractional max pooling


def test_fractional_max_pool_matches_pytorch_with_its_samples():
    x = dl.arange(2 * 2 * 7 * 9, dtype=dl.float32).reshape(2, 2, 7, 9) * 7 % 13
    u = dl.tensor([[[0.1, 0.7], [0.5, 0.3]], [[0.9, 0.2], [0.05, 0.55]]])
    y, where = F.fractional_max_pool2d(x, (2, 3), output_size=(4, 5), return_indices=True,
                                       _random_samples=u)
    assert y[1, 1].tolist() == [[11, 11, 12, 12, 12], [11, 12, 12, 9, 10], [9, 10, 11, 11, 12],
                                [12, 12, 9, 9, 10]]
    assert where[1, 1].tolist() == [[2, 2, 4, 4, 17], [28, 30, 30, 24, 26],
                                    [37, 39, 41, 41, 43], [56, 56, 50, 50, 52]]
    x3 = dl.arange(2 * 6 * 7 * 8, dtype=dl.float32).reshape(1, 2, 6, 7, 8) * 5 % 11
    u3 = dl.tensor([[[0.15, 0.85, 0.4], [0.6, 0.05, 0.95]]])
    y3, where3 = F.fractional_max_pool3d_with_indices(x3, (2, 3, 2), (3, 4, 5),
                                                      _random_samples=u3)
    assert y3.flatten()[:10].tolist() == [10, 10, 10, 10, 10, 10, 9, 10, 10, 10]
    assert where3.flatten()[:10].tolist() == [57, 2, 68, 13, 79, 24, 26, 68, 13, 79]


def test_fractional_max_pool_layers_draw_windows_and_have_gradients():
    dl.manual_seed(0)
    pool = nn.FractionalMaxPool2d(2, output_ratio=0.5)
    x = dl.tensor(np.random.default_rng(7).standard_normal((2, 3, 10, 9)), requires_grad=True)
    assert pool(x).shape == (2, 3, 5, 4) and pool(x[0]).shape == (3, 5, 4)
    draws = {tuple(pool(x).detach().flatten().tolist()) for _ in range(5)}
    assert len(draws) > 1  # new windows at every call
    u = dl.full((2, 3, 2), 0.3, dtype=dl.float64)
    assert gradcheck(lambda x: F.fractional_max_pool2d(x, 3, (4, 3), _random_samples=u), (x,))
    fixed = nn.FractionalMaxPool3d(2, output_size=(2, 2, 2), _random_samples=dl.rand(1, 1, 3))
    assert list(fixed.state_dict()) == ["_random_samples"]
    v = dl.randn(1, 1, 5, 5, 5)
    assert dl.equal(fixed(v), fixed(v))  # fixed samples: the same windows
    values, where = nn.FractionalMaxPool2d(2, 3, return_indices=True)(x)
    assert dl.equal(x.detach().reshape(2, 3, -1).gather(2, where.reshape(2, 3, -1)),
                    values.detach().reshape(2, 3, -1))


def test_fractional_max_pool_errors():
    x = dl.ones(1, 1, 5, 5)
    with pytest.raises(ValueError, match="either an output size, or a pooling ratio"):
        nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError, match="output_ratio must be between 0 and 1"):
        nn.FractionalMaxPool2d(2, output_ratio=1.5)
    with pytest.raises(ValueError, match="either an output_size or an output_ratio"):
        F.fractional_max_pool2d(x, 2)
    with pytest.raises(RuntimeError, match="too large relative to input"):
        F.fractional_max_pool2d(x, 2, output_size=5)
    with pytest.raises(RuntimeError, match="too large relative to input"):
        F.fractional_max_pool3d(dl.ones(1, 1, 4, 4, 4), 2, output_size=3)  # PyTorch's 3-D bound
    with pytest.raises(ValueError, match="_random_samples must have shape \\(1, 1, 2\\)"):
        F.fractional_max_pool2d(x, 2, 2, _random_samples=dl.rand(1, 1, 3))


def test_fractional_max_pool_on_cuda(cuda):
    x = dl.tensor(np.arange(2 * 2 * 7 * 9, dtype=np.float32).reshape(2, 2, 7, 9) * 7 % 13,
                  device=cuda)
    u = dl.tensor([[[0.1, 0.7], [0.5, 0.3]], [[0.9, 0.2], [0.05, 0.55]]], device=cuda)
    y = nn.FractionalMaxPool2d((2, 3), (4, 5), _random_samples=u)(x)
    assert y.device == cuda and y.cpu()[1, 1, 0].tolist() == [11, 11, 12, 12, 12]
