"""Distinct values, counts, integer functions, cross products, complex numbers
(functions_counting.py) and the writes into copies (functions_scattering.py) against
NumPy at the edges (inf, nan, -0.0, empty), their gradients against finite differences
and PyTorch's rules (ties share, products exact at zeros), and their bad inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest

import difflab as dl
from difflab.autograd import gradcheck

RNG = np.random.default_rng(5)
EDGE = np.array([np.inf, -np.inf, 0.0, -0.0, 1.5, 1.5, -2.5, np.inf, 3.0, -2.5])


def _f64(a):
    return dl.tensor(np.asarray(a, dtype=np.float64), dtype=dl.float64)


# ------------------------------------------------------------ unique, mode, bincount


@pytest.mark.parametrize("values", [EDGE, RNG.integers(0, 4, 12).astype(float), np.zeros(0)])
def test_unique_equals_numpy_at_the_edges(values):
    got, inverse, counts = dl.unique(_f64(values), return_inverse=True, return_counts=True)
    want, want_inverse, want_counts = np.unique(values, return_inverse=True,
                                                return_counts=True)
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(inverse.numpy(), want_inverse.reshape(values.shape))
    np.testing.assert_array_equal(counts.numpy(), want_counts)
    assert (got[inverse].numpy() == values).all()


def test_unique_keeps_each_nan_as_pytorch_does():
    values = np.array([np.nan, 1.0, np.nan])
    got = dl.unique(_f64(values)).numpy()
    np.testing.assert_array_equal(got, np.unique(values, equal_nan=False))
    assert dl.unique(dl.tensor([[3, 1], [2, 3]])).tolist() == [1, 2, 3]


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_unique_along_a_dimension_equals_numpy(dim):
    x = RNG.integers(0, 2, (6, 3, 2))
    got, inverse, counts = dl.unique(dl.tensor(x), dim=dim, return_inverse=True,
                                     return_counts=True)
    want, want_inverse, want_counts = np.unique(x, axis=dim, return_inverse=True,
                                                return_counts=True)
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(inverse.numpy(), want_inverse.reshape(-1))
    np.testing.assert_array_equal(counts.numpy(), want_counts)


def test_unique_consecutive_runs():
    x = np.array([1.0, 1.0, np.inf, np.inf, -0.0, 0.0, 2.0, 1.0])
    values, inverse, counts = dl.unique_consecutive(_f64(x), return_inverse=True,
                                                    return_counts=True)
    assert values.tolist() == [1.0, math.inf, -0.0, 2.0, 1.0]  # (-0.0 == 0.0: one run)
    assert inverse.tolist() == [0, 0, 1, 1, 2, 2, 3, 4] and counts.tolist() == [2, 2, 2, 1, 1]
    rows = dl.tensor([[1, 1], [1, 1], [2, 1], [1, 1]])
    assert dl.unique_consecutive(rows, dim=0).tolist() == [[1, 1], [2, 1], [1, 1]]
    assert dl.unique_consecutive(dl.tensor([])).shape == (0,)


def test_mode_values_indices_and_gradient():
    x = np.array([[2.0, 1.0, 2.0, 1.0, 5.0], [np.inf, 3.0, np.inf, 3.0, 3.0],
                  [4.0, -0.0, 0.0, 7.0, 7.0]])
    m = dl.mode(_f64(x), 1)
    assert m.values.tolist() == [1.0, 3.0, 0.0]
    assert m.indices.tolist() == [3, 4, 2]  # (the smallest of the most frequent, last place)
    kept = dl.mode(_f64(x).T, 0, keepdim=True)
    assert kept.values.shape == (1, 3) and kept.indices.tolist() == [[3, 4, 2]]
    t = _f64(x).requires_grad_()
    dl.mode(t).values.sum().backward()
    want = np.zeros_like(x)
    want[[0, 1, 2], [3, 4, 2]] = 1.0
    np.testing.assert_array_equal(t.grad.numpy(), want)
    with pytest.raises(IndexError, match="empty"):
        dl.mode(dl.zeros(2, 0))


def test_bincount_equals_numpy_and_differentiates_the_weights():
    i = RNG.integers(0, 7, 30)
    w = RNG.normal(size=30)
    assert dl.bincount(dl.tensor(i)).tolist() == np.bincount(i).tolist()
    got = dl.bincount(dl.tensor(i), _f64(w), minlength=10)
    np.testing.assert_allclose(got.numpy(), np.bincount(i, w, minlength=10), rtol=1e-14)
    assert dl.bincount(dl.tensor([1, 1]), dl.tensor([1.0, 2.0], dtype=dl.float32)).dtype == \
        dl.float32
    assert dl.bincount(dl.tensor([1]), dl.tensor([3])).dtype == dl.float64  # (as PyTorch)
    assert dl.bincount(dl.tensor(np.zeros(0, dtype=np.int64)), minlength=2).tolist() == [0, 0]
    weights = _f64(w).requires_grad_()
    assert gradcheck(lambda v: dl.bincount(dl.tensor(i), v), (weights,))
    for bad, match in ((dl.tensor([-1, 2]), "non-negative"), (dl.tensor([0.5]), "integers"),
                       (dl.tensor([[1]]), "1-D")):
        with pytest.raises((ValueError, RuntimeError), match=match):
            dl.bincount(bad)


# ------------------------------------------------------------ integers and vectors


def test_integer_functions_equal_numpy():
    a, b = RNG.integers(-20, 20, 50), RNG.integers(-20, 20, 50)
    for name in ("gcd", "lcm", "bitwise_and", "bitwise_or", "bitwise_xor"):
        ours = getattr(dl, name)(dl.tensor(a), dl.tensor(b)).numpy()
        np.testing.assert_array_equal(ours, getattr(np, name)(a, b), err_msg=name)
        assert getattr(dl.tensor(a), name)(dl.tensor(b)).tolist() == ours.tolist()
    truth = dl.tensor([True, False])
    assert dl.bitwise_xor(truth, dl.tensor([True, True])).tolist() == [False, True]
    with pytest.raises(TypeError, match="long"):
        dl.gcd(dl.tensor([1.0]), dl.tensor([2.0]))
    with pytest.raises(TypeError, match="integer or bool"):
        dl.bitwise_and(dl.tensor([1.5]), 1)


def test_cross_equals_numpy_and_finite_differences():
    a, b = RNG.normal(size=(4, 3)), RNG.normal(size=(1, 3))
    np.testing.assert_allclose(dl.cross(_f64(a), _f64(b)).numpy(), np.cross(a, b),
                               rtol=1e-13)
    c = RNG.normal(size=(3, 2))
    np.testing.assert_allclose(dl.cross(_f64(c), _f64(c[::-1]), dim=0).numpy(),
                               np.cross(c, c[::-1], axis=0), rtol=1e-13)
    assert gradcheck(lambda x, y: dl.cross(x, y, dim=-1),
                     (_f64(a).requires_grad_(), _f64(b).requires_grad_()))
    with pytest.raises(RuntimeError, match="size 3"):
        dl.cross(dl.ones(2, 4), dl.ones(2, 4))
    with pytest.raises(RuntimeError, match="must have size 3"):
        dl.cross(dl.ones(3, 4), dl.ones(3, 4), dim=1)


def test_angle_complex_and_polar():
    x = np.array([-2.0, 3.0, -0.0, 0.0, np.nan, -np.inf, np.inf])
    got = dl.angle(_f64(x)).numpy()
    np.testing.assert_array_equal(got, [np.pi, 0, 0, 0, np.nan, np.pi, 0])  # (-0.0: 0)
    z = np.array([1 + 1j, -1 - 0j, 1j])
    np.testing.assert_allclose(dl.angle(dl.tensor(z, dtype=dl.complex128)).numpy(),
                               np.angle(z))
    re, im = RNG.normal(size=4), RNG.normal(size=4)
    made = dl.complex(_f64(re), _f64(im))
    assert made.dtype == dl.complex128 and np.array_equal(made.numpy(), re + 1j * im)
    assert dl.complex(dl.ones(1), dl.ones(1)).dtype == dl.complex64
    r, theta = np.abs(re), im
    np.testing.assert_allclose(dl.polar(_f64(r), _f64(theta)).numpy(),
                               r * np.exp(1j * theta), rtol=1e-14)
    # the tape follows complex values (PyTorch's convention): ∂L/∂re, ∂L/∂im of L = |z|
    a, b = _f64(re).requires_grad_(), _f64(im).requires_grad_()
    dl.complex(a, b).abs().sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), re / np.hypot(re, im), rtol=1e-14)
    np.testing.assert_allclose(b.grad.numpy(), im / np.hypot(re, im), rtol=1e-14)
    a, b = _f64(r).requires_grad_(), _f64(theta).requires_grad_()
    dl.polar(a, b).real.sum().backward()  # L = Σ r·cos θ
    np.testing.assert_allclose(a.grad.numpy(), np.cos(theta), rtol=1e-14)
    np.testing.assert_allclose(b.grad.numpy(), -r * np.sin(theta), rtol=1e-14)
    with dl.no_grad():
        assert dl.complex(_f64(re).requires_grad_(), _f64(im)).dtype == dl.complex128
    with pytest.raises(TypeError, match="float32 or two float64"):
        dl.complex(dl.ones(1), _f64([1.0]))


def test_poisson_draws_from_the_generator():
    rates = dl.tensor(np.array([0.0, 1.0, 30.0] * 2000))
    a = dl.poisson(rates, generator=dl.Generator().manual_seed(3))
    b = dl.poisson(rates, generator=dl.Generator().manual_seed(3))
    assert a.dtype == rates.dtype and a.tolist() == b.tolist()
    counts = a.numpy().reshape(-1, 3)
    assert (counts[:, 0] == 0).all() and abs(counts[:, 2].mean() - 30) < 0.5
    assert (counts == np.round(counts)).all()
    dl.manual_seed(1)
    first = dl.poisson(rates)
    dl.manual_seed(1)
    assert dl.poisson(rates).tolist() == first.tolist()
    with pytest.raises(ValueError, match="non-negative"):
        dl.poisson(dl.tensor([-1.0]))
    with pytest.raises(TypeError, match="floating"):
        dl.poisson(dl.tensor([1]))


# ------------------------------------------------------------ scatter_reduce and friends


def _reference(x, dim, index, src, reduce, include_self):
    """A Python loop over the elements: the meaning of scatter_reduce, slowly."""
    groups: dict = {}
    for pos in np.ndindex(*index.shape):
        target = list(pos)
        target[dim] = index[pos]
        groups.setdefault(tuple(target), []).append(src[pos])
    out = x.copy()
    for target, values in groups.items():
        values = ([x[target]] if include_self else []) + values
        out[target] = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "amax": np.max,
                       "amin": np.min}[reduce](values)
    return out


CASES = [(r, s) for r in ("sum", "prod", "mean", "amax", "amin") for s in (True, False)]


@pytest.mark.parametrize("reduce,include_self", CASES)
def test_scatter_reduce_equals_a_loop(reduce, include_self):
    x, src = RNG.normal(size=(4, 5)), RNG.normal(size=(6, 5))
    src[1, 2] = np.nan
    src[2, 0], src[3, 1] = np.inf, -0.0
    index = RNG.integers(0, 4, (6, 3))
    got = dl.scatter_reduce(_f64(x), 0, dl.tensor(index), _f64(src), reduce,
                            include_self=include_self).numpy()
    with np.errstate(all="ignore"):
        want = _reference(x, 0, index, src, reduce, include_self)
    np.testing.assert_allclose(got, want, rtol=1e-13, equal_nan=True)
    index1 = RNG.integers(0, 5, (4, 7))
    got = dl.scatter_reduce(_f64(x), 1, dl.tensor(index1), _f64(RNG.normal(size=(4, 7))),
                            reduce, include_self=include_self)
    assert got.shape == (4, 5)


@pytest.mark.parametrize("reduce,include_self", CASES)
def test_scatter_reduce_gradients_equal_finite_differences(reduce, include_self):
    x, src = RNG.uniform(0.5, 2, (3, 4)), RNG.uniform(0.5, 2, (5, 4))
    index = dl.tensor(RNG.integers(0, 3, (5, 4)))
    assert gradcheck(lambda a, b: dl.scatter_reduce(a, 0, index, b, reduce,
                                                    include_self=include_self),
                     (_f64(x).requires_grad_(), _f64(src).requires_grad_()))


def test_scatter_reduce_gradients_follow_pytorch_at_ties_and_zeros():
    x = _f64([1.0, 5.0]).requires_grad_()
    src = _f64([5.0, 5.0, 0.0, 3.0]).requires_grad_()
    index = dl.tensor([1, 1, 0, 0])
    dl.scatter_reduce(x, 0, index, src, "amax").sum().backward()
    # (row 1: 5, 5 and x's 5 tie and share; row 0: src's 3 beats x's 1)
    assert x.grad.tolist() == [0.0, 1 / 3] and src.grad.tolist() == [1 / 3, 1 / 3, 0.0, 1.0]
    x.grad = src.grad = None
    dl.scatter_reduce(x, 0, index, src, "prod").sum().backward()
    # row 0 is 1·0·3 = 0: the zero's gradient is the product of the others (3), not nan
    assert x.grad.tolist() == [0.0, 25.0] and src.grad.tolist() == [25.0, 25.0, 3.0, 0.0]
    x.grad = src.grad = None
    dl.scatter_reduce(x, 0, index, src, "mean", include_self=False).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0] and src.grad.tolist() == [0.5] * 4


def test_scatter_reduce_integers_and_bad_inputs():
    x, src = dl.tensor([10, 20]), dl.tensor([1, 2, 4])
    index = dl.tensor([0, 0, 1])
    assert dl.scatter_reduce(x, 0, index, src, "mean").tolist() == [4, 12]  # (13/3 rounds down)
    assert dl.scatter_reduce(x, 0, index, src, "amin", include_self=False).tolist() == [1, 4]
    assert dl.scatter_reduce(x, 0, dl.tensor([], dtype=dl.int64), dl.tensor([], dtype=dl.int64),
                             "prod").tolist() == [10, 20]
    with pytest.raises(ValueError, match="reduce must be"):
        dl.scatter_reduce(x, 0, index, src, "max")
    with pytest.raises(RuntimeError, match="dtype"):
        dl.scatter_reduce(x.float(), 0, index, src, "sum")
    with pytest.raises(RuntimeError, match="out of bounds"):
        dl.scatter_reduce(x, 0, dl.tensor([0, 2]), src, "sum")
    y = dl.ones(3)
    y.scatter_reduce_(0, dl.tensor([2, 2]), dl.tensor([4.0, 5.0]), "amax", include_self=False)
    assert y.tolist() == [1.0, 1.0, 5.0]


def test_index_copy_and_index_reduce():
    x, src = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 2))
    got = dl.index_copy(_f64(x), 1, dl.tensor([3, 0]), _f64(src)).numpy()
    want = x.copy()
    want[:, [3, 0]] = src
    np.testing.assert_array_equal(got, want)
    assert gradcheck(lambda a, b: dl.index_copy(a, 1, dl.tensor([3, 0]), b),
                     (_f64(x).requires_grad_(), _f64(src).requires_grad_()))
    s2 = RNG.normal(size=(3, 3))
    for reduce in ("prod", "mean", "amax", "amin"):
        got = dl.index_reduce(_f64(x), 1, dl.tensor([1, 1, 2]), _f64(s2), reduce).numpy()
        spread = np.broadcast_to(np.array([1, 1, 2]), (3, 3))
        np.testing.assert_allclose(got, _reference(x, 1, spread, s2, reduce, True), rtol=1e-13)
    t = dl.ones(2)
    t.index_copy_(0, dl.tensor([1]), dl.tensor([7.0]))
    t.index_reduce_(0, dl.tensor([0, 0]), dl.tensor([2.0, 3.0]), "prod", include_self=False)
    assert t.tolist() == [6.0, 7.0]
    with pytest.raises(ValueError, match="'prod', 'mean'"):
        dl.index_reduce(dl.ones(2), 0, dl.tensor([0]), dl.ones(1), "sum")
    with pytest.raises(RuntimeError, match="source must have shape"):
        dl.index_copy(dl.ones(2, 2), 0, dl.tensor([0]), dl.ones(2))


def test_select_slice_and_diagonal_scatter_equal_numpy_writes():
    x = RNG.normal(size=(3, 4, 5))
    cases = [
        (lambda t, s: dl.select_scatter(t, s, 1, -1), np.s_[:, -1], (3, 5)),
        (lambda t, s: dl.slice_scatter(t, s, 2, 1, None, 2), np.s_[:, :, 1::2], (3, 4, 2)),
        (lambda t, s: dl.slice_scatter(t, s, 0, -2), np.s_[-2:], (2, 4, 5)),
        (lambda t, s: dl.slice_scatter(t, s, 1, 3, 2), np.s_[:, 3:2], (3, 0, 5)),
    ]
    for call, where, shape in cases:
        src = RNG.normal(size=shape)
        want = x.copy()
        want[where] = src
        np.testing.assert_array_equal(call(_f64(x), _f64(src)).numpy(), want)
        assert gradcheck(call, (_f64(x).requires_grad_(), _f64(src).requires_grad_()))
    for offset, d1, d2 in ((0, 0, 1), (2, 1, 2), (-1, 2, 0), (9, 0, 1)):
        diag = np.diagonal(x, offset, d1, d2)
        src = RNG.normal(size=diag.shape)
        got = dl.diagonal_scatter(_f64(x), _f64(src), offset, d1, d2)
        np.testing.assert_array_equal(dl.diagonal(got, offset, d1, d2).numpy(), src)
        rest = got.numpy()
        keep = dl.diagonal_scatter(_f64(np.ones_like(x)), _f64(np.zeros(diag.shape)), offset,
                                   d1, d2).numpy() == 1
        np.testing.assert_array_equal(rest[keep], x[keep])
    assert gradcheck(lambda t, s: dl.diagonal_scatter(t, s, 1),
                     (_f64(x[0]).requires_grad_(), _f64(np.ones(4)).requires_grad_()))
    with pytest.raises(RuntimeError, match="expected src to have shape"):
        dl.select_scatter(dl.ones(2, 2), dl.ones(3), 0, 0)
    with pytest.raises(IndexError, match="out of range"):
        dl.select_scatter(dl.ones(2, 2), dl.ones(2), 0, 2)
    with pytest.raises(RuntimeError, match="differ"):
        dl.diagonal_scatter(dl.ones(2, 2), dl.ones(2), 0, 1, 1)


def test_on_a_device_as_on_the_cpu(device):
    """Every new function on CUDA (a GPU, or the CuPy stand-in) equals the CPU's result."""
    x, src = RNG.normal(size=(4, 5)), RNG.normal(size=(6, 5))
    index = RNG.integers(0, 4, (6, 5))
    ints = RNG.integers(-9, 9, 12)
    calls = [
        lambda d, on: dl.unique(d(x.round()), return_inverse=True, return_counts=True),
        lambda d, on: dl.unique(d(x.round()), dim=1),
        lambda d, on: dl.unique_consecutive(d(x.round()), return_counts=True),
        lambda d, on: dl.mode(d(x.round())),
        lambda d, on: dl.bincount(d(np.abs(ints)), d(x.reshape(-1)[:12])),
        lambda d, on: dl.cross(d(x[:, :3]), d(src[:4, :3])),
        lambda d, on: dl.gcd(d(ints), d(ints[::-1])),
        lambda d, on: dl.angle(d(x)),
        lambda d, on: dl.index_copy(d(x), 0, d(np.array([3, 1])), d(src[:2])),
        lambda d, on: dl.diagonal_scatter(d(x), d(src[0, :4]), 1),
        lambda d, on: dl.slice_scatter(d(x), d(src[:2]), 0, 1, 4, 2),
        *[lambda d, on, r=r: dl.scatter_reduce(d(x), 0, d(index), d(src), r,
                                               include_self=False)
          for r in ("sum", "prod", "mean", "amax", "amin")],
    ]
    for call in calls:
        want = call(lambda a: dl.tensor(a), "cpu")
        got = call(lambda a: dl.tensor(a, device=device), device)
        pairs = zip(got, want) if isinstance(want, tuple) else [(got, want)]
        for g, w in pairs:
            assert g.device.type == device
            np.testing.assert_allclose(g.cpu().numpy(), w.numpy(), rtol=1e-12)
