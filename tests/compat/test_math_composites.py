"""PyTorch's pointwise formulas, NaN-aware reductions and order statistics
(functions_math.py) against NumPy and SciPy, at the edges (inf, nan, -0.0, zeros),
their gradients against finite differences, and their bad inputs against clear errors."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.spatial.distance
import scipy.special

import difflab as dl
from difflab.autograd import gradcheck

RNG = np.random.default_rng(11)
X = RNG.uniform(-3, 3, size=(3, 4))
Y = RNG.uniform(-3, 3, size=(3, 4))
POS = RNG.uniform(0.2, 2.0, size=(3, 4))
PROB = RNG.uniform(0.05, 0.95, size=(3, 4))
EDGE = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, 1.5, -2.5, 1e300])
EDGE2 = np.array([np.inf, np.inf, 1.0, 0.0, -0.0, np.nan, -2.5, 1e300])


def _lower_median(a, axis=None):
    a = np.sort(a.ravel() if axis is None else a, axis=0 if axis is None else axis)
    n = a.shape[0 if axis is None else axis]
    picked = np.take(a, (n - 1) // 2, axis=0 if axis is None else axis)
    has_nan = np.isnan(a).any(axis=0 if axis is None else axis)
    return np.where(has_nan, np.nan, picked)


#: name: (difflab call, reference, inputs); the references give PyTorch's meaning
VALUES = {
    "deg2rad": (dl.deg2rad, np.deg2rad, (X,)),
    "rad2deg": (dl.rad2deg, np.rad2deg, (EDGE,)),
    "exp2": (dl.exp2, np.exp2, (EDGE,)),
    "trunc": (dl.trunc, np.trunc, (EDGE,)),
    "frac": (dl.frac, lambda x: x - np.trunc(x), (X,)),
    "fmod": (dl.fmod, np.fmod, (X, Y)),
    "fmod_number": (lambda x: dl.fmod(x, -1.5), lambda x: np.fmod(x, -1.5), (X,)),
    "lerp": (lambda a, b, w: dl.lerp(a, b, w), lambda a, b, w: a + w * (b - a), (X, Y, PROB)),
    "addcmul": (lambda a, b, c: dl.addcmul(a, b, c, value=0.5), lambda a, b, c: a + 0.5 * b * c,
                (X, Y, POS)),
    "addcdiv": (lambda a, b, c: dl.addcdiv(a, b, c, value=2), lambda a, b, c: a + 2 * b / c,
                (X, Y, POS)),
    "logaddexp": (dl.logaddexp, np.logaddexp, (X, Y)),
    "logaddexp_edges": (dl.logaddexp, np.logaddexp, (EDGE, EDGE2)),
    "logaddexp2": (dl.logaddexp2, np.logaddexp2, (X, Y)),
    "hypot": (dl.hypot, np.hypot, (X, Y)),
    "hypot_edges": (dl.hypot, np.hypot, (EDGE, EDGE2)),
    "xlogy": (dl.xlogy, scipy.special.xlogy, (np.where(X > 0, X, 0.0), POS)),
    "xlogy_edges": (dl.xlogy, scipy.special.xlogy, (np.array([0.0, 0.0, 0.0, 2.0, 1.0]),
                                                    np.array([0.0, np.nan, np.inf, 0.0, -1.0]))),
    "logit": (dl.logit, scipy.special.logit, (PROB,)),
    "logit_eps": (lambda p: dl.logit(p, eps=0.1), lambda p: scipy.special.logit(
        np.clip(p, 0.1, 0.9)), (np.array([0.0, 0.05, 0.5, 1.0]),)),
    "sinc": (dl.sinc, np.sinc, (np.array([0.0, -0.0, 0.5, -1.5, 3.0, 1e-9]),)),
    "nan_to_num": (dl.nan_to_num, np.nan_to_num, (EDGE,)),
    "nan_to_num_given": (lambda x: dl.nan_to_num(x, 1.0, 2.0, -3.0),
                         lambda x: np.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-3.0), (EDGE,)),
    "fmax": (dl.fmax, np.fmax, (EDGE, EDGE2)),
    "fmin": (dl.fmin, np.fmin, (EDGE, EDGE2)),
    "isposinf": (dl.isposinf, np.isposinf, (EDGE,)),
    "isneginf": (dl.isneginf, np.isneginf, (EDGE,)),
    "isreal": (dl.isreal, np.isreal, (EDGE,)),
    "bitwise_not": (dl.bitwise_not, np.invert, (np.array([0, 5, -1, 2**40]),)),
    "isin": (lambda a: dl.isin(a, dl.tensor([1.5, np.inf, np.nan])),
             lambda a: np.isin(a, [1.5, np.inf, np.nan]), (EDGE,)),
    "isin_invert": (lambda a: dl.isin(a, dl.tensor([0.0]), invert=True),
                    lambda a: np.isin(a, [0.0], invert=True), (EDGE,)),
    "nansum": (lambda x: dl.nansum(x, 1), lambda x: np.nansum(x, 1), (np.where(X > 2, np.nan, X),)),
    "nanmean": (lambda x: dl.nanmean(x, 0, keepdim=True),
                lambda x: np.nanmean(x, 0, keepdims=True), (np.where(X > 2, np.nan, X),)),
    "var_mean": (lambda x: dl.var_mean(x, 1)[0], lambda x: np.var(x, 1, ddof=1), (X,)),
    "var_mean_mean": (lambda x: dl.var_mean(x, 1)[1], lambda x: np.mean(x, 1), (X,)),
    "std_mean": (lambda x: dl.std_mean(x, (0, 1), correction=0)[0], np.std, (X,)),
    "aminmax_min": (lambda x: dl.aminmax(x, dim=0).min, lambda x: np.min(x, 0), (X,)),
    "aminmax_max": (lambda x: dl.aminmax(x).max, np.max, (X,)),
    "msort": (dl.msort, lambda x: np.sort(x, 0), (X,)),
    "median_all": (dl.median, _lower_median, (X,)),
    "median_dim": (lambda x: dl.median(x, 1).values, lambda x: _lower_median(x, 1), (X,)),
    "median_nan": (lambda x: dl.median(x, 0).values, lambda x: _lower_median(x, 0),
                   (np.where(X > 2, np.nan, X),)),
    "nanmedian": (lambda x: dl.nanmedian(x, 1).values,
                  lambda x: np.array([np.sort(r[~np.isnan(r)])[(np.sum(~np.isnan(r)) - 1) // 2]
                                      for r in x]), (np.where(X > 2.5, np.nan, X),)),
    "kthvalue": (lambda x: dl.kthvalue(x, 3, 1).values, lambda x: np.sort(x, 1)[:, 2], (X,)),
    "dist": (lambda a, b: dl.dist(a, b, 3), lambda a, b: np.sum(np.abs(a - b) ** 3) ** (1 / 3),
             (X, Y)),
    "cdist": (dl.cdist, scipy.spatial.distance.cdist, (X, Y)),
    "cdist_p1": (lambda a, b: dl.cdist(a, b, 1.0),
                 lambda a, b: scipy.spatial.distance.cdist(a, b, "cityblock"), (X, Y)),
    "cdist_inf": (lambda a, b: dl.cdist(a, b, math.inf),
                  lambda a, b: scipy.spatial.distance.cdist(a, b, "chebyshev"), (X, Y)),
    "cov": (dl.cov, np.cov, (X,)),
    "cov_vector": (dl.cov, np.cov, (X[0],)),
    "cov_weights": (lambda x, f, a: dl.cov(x, correction=1, fweights=f, aweights=a),
                    lambda x, f, a: np.cov(x, fweights=f, aweights=a),
                    (X, np.array([1, 2, 1, 3]), np.array([0.5, 1.0, 2.0, 1.5]))),
    "corrcoef": (dl.corrcoef, np.corrcoef, (X,)),
    "sgn": (dl.sgn, np.sign, (EDGE[np.isfinite(EDGE)],)),
    "signbit": (dl.signbit, np.signbit, (EDGE[~np.isnan(EDGE)],)),
    "heaviside": (lambda x, v: dl.heaviside(x, v), np.heaviside,
                  (np.array([-1.0, 0.0, -0.0, 2.0, np.inf]), np.array([0.5, 0.25, 2.0, 3.0, 1.0]))),
    "trapezoid": (lambda y: dl.trapezoid(y, dx=0.3), lambda y: np.trapezoid(y, dx=0.3), (X,)),
    "trapezoid_x": (lambda y, x: dl.trapezoid(y, x, dim=0),
                    lambda y, x: np.trapezoid(y, x, axis=0), (X, np.array([0.0, 0.5, 2.0]))),
    "searchsorted": (lambda s, v: dl.searchsorted(s, v),
                     lambda s, v: np.searchsorted(s, v), (np.sort(X[0]), X[1])),
    "searchsorted_right": (lambda s, v: dl.searchsorted(s, v, side="right"),
                           lambda s, v: np.searchsorted(s, v, side="right"),
                           (np.array([0.0, 1.0, 1.0, 2.0]), np.array([1.0, -1.0, 3.0]))),
    "bucketize": (lambda x: dl.bucketize(x, dl.tensor([-1.0, 0.0, 1.0])),
                  lambda x: np.searchsorted([-1.0, 0.0, 1.0], x), (X,)),
    "cummax": (lambda x: dl.cummax(x, 1).values, lambda x: np.maximum.accumulate(x, 1), (X,)),
    "cummin": (lambda x: dl.cummin(x, 0).values, lambda x: np.minimum.accumulate(x, 0), (X,)),
    "quantile": (lambda x: dl.quantile(x, dl.tensor([0.1, 0.5, 0.95], dtype=dl.float64), 1,
                                       keepdim=True),
                 lambda x: np.quantile(x, [0.1, 0.5, 0.95], axis=1, keepdims=True), (X,)),
    "quantile_all": (lambda x: dl.quantile(x, 0.3), lambda x: np.quantile(x, 0.3), (X,)),
    "nanquantile": (lambda x: dl.nanquantile(x, 0.7, 0), lambda x: np.nanquantile(x, 0.7, 0),
                    (np.where(X > 2, np.nan, X),)),
    "logcumsumexp": (lambda x: dl.logcumsumexp(x, 1), lambda x: np.logaddexp.accumulate(x, 1),
                     (X,)),
    "logcumsumexp_far": (lambda x: dl.logcumsumexp(x, 0), lambda x: np.logaddexp.accumulate(x),
                         (np.array([0.0, -1000.0, 5.0, -np.inf]),)),
    "renorm": (lambda x: dl.renorm(x, 2, 0, 2.0),
               lambda x: x * np.where(np.linalg.norm(x, axis=1, keepdims=True) > 2.0,
                                      2.0 / (np.linalg.norm(x, axis=1, keepdims=True) + 1e-7),
                                      1.0), (X,)),
    "repeat_interleave": (lambda x: dl.repeat_interleave(x, dl.tensor([2, 0, 1]), dim=0),
                          lambda x: np.repeat(x, [2, 0, 1], axis=0), (X,)),
    "combinations": (lambda x: dl.combinations(x, 3),
                     lambda x: np.array(list(itertools.combinations(x, 3))), (X[0],)),
    "combinations_replacement": (lambda x: dl.combinations(x, 2, with_replacement=True),
                                 lambda x: np.array(list(itertools.combinations_with_replacement(
                                     x, 2))), (X[0, :3],)),
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_equal_numpy_and_scipy(name):
    ours, reference, inputs = VALUES[name]
    with np.errstate(all="ignore"):
        want = reference(*inputs)
        got = ours(*[dl.tensor(x, dtype=dl.float64) if x.dtype.kind == "f" else dl.tensor(x)
                     for x in inputs])
    np.testing.assert_allclose(np.asarray(got.numpy(), dtype=float), want, rtol=1e-12,
                               atol=1e-12)


#: the differentiable ones, at inputs away from kinks and poles
GRADIENTS = {
    name: VALUES[name] for name in [
        "deg2rad", "frac", "fmod", "lerp", "addcmul", "addcdiv", "logaddexp", "logaddexp2",
        "hypot", "logit", "nanmean", "var_mean", "std_mean", "median_dim", "kthvalue",
        "dist", "cdist", "cdist_p1", "cov", "corrcoef", "aminmax_max",
    ]
}
GRADIENTS["xlogy"] = (dl.xlogy, None, (X, POS))  # (x = 0 is a convention, not a derivative)
GRADIENTS["sinc"] = (dl.sinc, None, (np.array([0.0, 0.5, -1.3, 2.0]),))
GRADIENTS["nan_to_num"] = (dl.nan_to_num, None, (X,))
GRADIENTS["fmax"] = (dl.fmax, None, (X, Y))
GRADIENTS["exp2"] = (dl.exp2, None, (X,))
GRADIENTS["trapezoid_x"] = (lambda y, x: dl.trapezoid(y, x, dim=0), None,
                            (X, np.array([0.0, 0.5, 2.0])))
GRADIENTS["quantile"] = VALUES["quantile"]
GRADIENTS["logcumsumexp"] = VALUES["logcumsumexp"]
GRADIENTS["renorm"] = VALUES["renorm"]
GRADIENTS["repeat_interleave"] = VALUES["repeat_interleave"]
GRADIENTS["combinations"] = VALUES["combinations"]
GRADIENTS["cummax"] = (lambda x: dl.cummax(x, 1).values, None, (X,))
GRADIENTS["cummin"] = (lambda x: dl.cummin(x, 0).values, None, (X,))


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradients_equal_finite_differences(name):
    ours, _, inputs = GRADIENTS[name]
    tensors = [dl.tensor(x, dtype=dl.float64, requires_grad=True) for x in inputs]
    assert gradcheck(ours, tuple(tensors))


def test_gradients_at_the_conventions_are_zero_not_nan():
    x = dl.tensor([0.0, 0.0], dtype=dl.float64, requires_grad=True)
    y = dl.tensor([0.0, 2.0], dtype=dl.float64, requires_grad=True)
    dl.xlogy(x, y).sum().backward()
    # (PyTorch's convention: where x = 0 the gradient is xlogy(0, y) = 0, for both)
    assert x.grad.tolist() == [0.0, 0.0] and y.grad.tolist() == [0.0, 0.0]
    z = dl.tensor([0.0], dtype=dl.float64, requires_grad=True)
    dl.sinc(z).sum().backward()
    assert z.grad.tolist() == [0.0]
    a = dl.tensor([[1.0, 2.0]], dtype=dl.float64, requires_grad=True)
    dl.cdist(a, a.detach()).sum().backward()  # a zero distance: PyTorch's gradient is 0
    assert a.grad.tolist() == [[0.0, 0.0]]


def test_integer_inputs_keep_pytorch_dtypes():
    ints = dl.tensor([-3, 3, 7])
    assert dl.fmod(ints, 2).dtype == dl.int64 and dl.fmod(ints, 2).tolist() == [-1, 1, 1]
    assert dl.fmod(ints, 2.0).dtype.is_floating_point
    assert dl.trunc(ints).tolist() == [-3, 3, 7]
    assert dl.deg2rad(ints).dtype == dl.get_default_dtype()
    assert dl.nan_to_num(ints).tolist() == [-3, 3, 7]
    assert dl.median(ints).item() == 3 and dl.median(ints).dtype == dl.int64
    assert dl.aminmax(ints).min.item() == -3


def test_order_statistics_return_the_indices_they_came_from():
    x = dl.tensor([[3.0, 1.0, 2.0], [9.0, 7.0, 8.0]])
    values, indices = dl.median(x, dim=1, keepdim=True)
    assert values.tolist() == [[2.0], [8.0]] and indices.tolist() == [[2], [2]]
    assert dl.kthvalue(x, 1, 0).indices.tolist() == [0, 0, 0]
    assert math.isnan(dl.nanmedian(dl.tensor([math.nan, math.nan])).item())


@pytest.mark.parametrize("call, error, words", [
    (lambda: dl.positive(dl.tensor([True])), TypeError, "bool"),
    (lambda: dl.bitwise_not(dl.tensor([1.5])), TypeError, "bool or integer"),
    (lambda: dl.kthvalue(dl.ones(3), 4), RuntimeError, "out of range"),
    (lambda: dl.kthvalue(dl.ones(3), 0), RuntimeError, "counts from 1"),
    (lambda: dl.median(dl.ones(0, dtype=dl.int64)), RuntimeError, "empty"),  # (floats: nan)
    (lambda: dl.aminmax(dl.ones(0)), RuntimeError, "empty"),
    (lambda: dl.cdist(dl.ones(2, 3), dl.ones(2, 4)), RuntimeError, "same M"),
    (lambda: dl.cdist(dl.ones(2, 3), dl.ones(2, 3), -1), RuntimeError, "non-negative"),
    (lambda: dl.cov(dl.ones(2, 2, 2)), RuntimeError, "1-D or 2-D"),
    (lambda: dl.cov(dl.ones(2, 3), fweights=dl.ones(2)), RuntimeError, "one value per"),
])
def test_bad_input_gets_a_clear_error(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_running_extremes_keep_pytorch_indices_and_nan():
    values, indices = dl.cummax(dl.tensor([1.0, 3.0, 3.0, 2.0, np.nan, 5.0]), 0)
    assert indices.tolist() == [0, 1, 2, 2, 4, 4]  # ties take the later index
    assert np.isnan(values.numpy()[4:]).all()  # a nan stays the maximum once met
    assert dl.cummin(dl.tensor([[2, 1], [0, 3]]), 1).indices.tolist() == [[0, 1], [0, 0]]


def test_asarray_shares_or_copies_as_asked():
    a = np.zeros(3)
    shared, copied = dl.asarray(a), dl.asarray(a, copy=True)
    a[1] = 4.0
    assert shared.tolist() == [0.0, 4.0, 0.0] and copied.tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="copy=False"):
        dl.asarray([1.0, 2.0], copy=False)
    t = dl.asarray(a, requires_grad=True)
    assert t.requires_grad and dl.asarray(t) is t


def test_inference_mode_is_reported_and_no_grad_is_not():
    assert not dl.is_inference_mode_enabled()
    with dl.no_grad():
        assert not dl.is_inference_mode_enabled()
    with dl.inference_mode():
        assert dl.is_inference_mode_enabled()
        with dl.inference_mode(False):
            assert not dl.is_inference_mode_enabled()  # (switched off inside, as PyTorch)
        assert dl.is_inference_mode_enabled()
    assert not dl.is_inference_mode_enabled() and not dl.is_storage(dl.ones(1))


def test_unravel_index_and_repeat_counts_equal_numpy():
    flat = np.array([0, 5, 11, -1])
    for ours, theirs in zip(dl.unravel_index(dl.tensor(flat), (3, 4)),
                            np.unravel_index(flat % 12, (3, 4))):
        assert ours.tolist() == theirs.tolist()
    (only,) = dl.unravel_index(dl.tensor([1, 3]), 4)  # (an int shape: one dimension, as torch)
    assert only.tolist() == [1, 3]
    assert dl.repeat_interleave(dl.tensor([2, 0, 1])).tolist() == [0, 0, 2]
    assert dl.ones(2, 3).repeat_interleave(2, dim=1).shape == (2, 6)
    with pytest.raises(RuntimeError, match="output_size"):
        dl.repeat_interleave(dl.ones(2), 2, output_size=3)
    with pytest.raises(ValueError, match="out of range"):
        dl.unravel_index(dl.tensor([12]), (3, 4))
    with pytest.raises(ValueError, match="q must be"):
        dl.quantile(dl.ones(3), 1.5)
    with pytest.raises(ValueError, match="interpolation"):
        dl.quantile(dl.ones(3), 0.5, interpolation="cubic")
