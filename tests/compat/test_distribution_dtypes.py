"""Every distribution and transform of difflab.distributions works in bfloat16.

Many of them keep a draw or a probability off the ends of its range by the dtype's
``eps`` or ``tiny`` (a uniform draw moved off 0 before its logarithm, a probability
clamped to ``[eps, 1 - eps]`` before its logit).  They read those limits from
``difflab.finfo``, which knows bfloat16 (NumPy's ``np.finfo`` does not: ml_dtypes
provides the type).  Each row of the device tables (``test_distribution_devices``) is
built here from bfloat16 parameters: its draws, reparameterised draws and their
log-densities must stay bfloat16, finite and within the support, and the
log-density must equal the float64 one at the same point to bfloat16's rounding.
"""

from __future__ import annotations

import numpy as np
import pytest

import difflab as dl
from difflab import distributions as D
from difflab.distributions import transforms as T
from tests.compat.test_distribution_devices import DISTRIBUTIONS, TRANSFORMS

BF16 = dl.bfloat16


def _maker(dtype):
    return lambda values: dl.tensor(values, dtype=dtype)


def _numbers(x) -> np.ndarray:
    return np.asarray(x.detach().to(dl.float64).tolist(), dtype=float)


#: Rows whose draws lie on the simplex: PyTorch's check (and difflab's) asks for
#: |sum - 1| < 1e-6, finer than bfloat16 can add three numbers (PyTorch refuses these
#: draws too); here they are checked to bfloat16's rounding and scored unvalidated.
ON_THE_SIMPLEX = {"Dirichlet", "LogisticNormal", "RelaxedOneHotCategorical"}


def _in_support(d, name, draw) -> bool:
    if name not in ON_THE_SIMPLEX:
        return bool(dl.all(d.support.check(draw)))
    values = _numbers(draw)
    rounding = draw.shape[-1] * dl.finfo(BF16).eps
    return bool((values >= 0).all() and (abs(values.sum(-1) - 1) <= rounding).all())


@pytest.mark.parametrize("name", sorted(DISTRIBUTIONS))
def test_distribution_in_bfloat16(name):
    dl.manual_seed(0)
    d = DISTRIBUTIONS[name](_maker(BF16))
    draws = [d.sample((16,))] + ([d.rsample((16,))] if d.has_rsample else [])
    wide = DISTRIBUTIONS[name](_maker(dl.float64))
    wide._validate_args = False   # (a bfloat16 draw is on the support to bfloat16's rounding)
    d._validate_args = name not in ON_THE_SIMPLEX
    for draw in draws:
        if draw.dtype.is_floating_point:
            assert draw.dtype == BF16, f"{name}: a bfloat16 draw came back {draw.dtype}"
        assert _in_support(d, name, draw), f"{name}: a draw left the support: {draw}"
        log_prob = d.log_prob(draw)
        assert log_prob.dtype == BF16, f"{name}: log_prob came back {log_prob.dtype}"
        assert np.isfinite(_numbers(log_prob)).all(), f"{name}: log_prob {log_prob}"
        exact = _numbers(wide.log_prob(draw.to(dl.float64) if draw.dtype == BF16 else draw))
        # bfloat16 keeps 8 bits: its parameters and its steps each round by 2^-8
        np.testing.assert_allclose(_numbers(log_prob), exact, rtol=0.05, atol=0.1,
                                   err_msg=name)


#: Transforms whose inverse is infinite at a bfloat16 value of the forward map.
INVERSE_INFINITE = {
    "CumulativeDistributionTransform": "Φ((1.5 + 1) / 0.3) rounds to 1 in bfloat16, whose "
                                       "quantile is +inf (PyTorch's too)",
}


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transform_in_bfloat16(name):
    transform, x = TRANSFORMS[name](_maker(BF16))
    y = transform(x)
    assert y.dtype == BF16 and np.isfinite(_numbers(y)).all(), f"{name}: {y}"
    back = transform.inv(y)
    assert back.dtype == BF16, f"{name}: the inverse came back {back.dtype}"
    assert np.isfinite(_numbers(back)).all() != (name in INVERSE_INFINITE), f"{name}: {back}"
    if transform.bijective:
        jacobian = transform.log_abs_det_jacobian(x, y)
        assert jacobian.dtype == BF16 and np.isfinite(_numbers(jacobian)).all(), name


def test_squashing_maps_stay_inside_the_open_unit_interval_in_bfloat16():
    """A sigmoid rounds to 1 already at x = 6 in bfloat16; PyTorch's SigmoidTransform (and
    so its RelaxedBernoulli) clamps to [tiny, 1 - eps], where the inverse is finite.
    The expected values are PyTorch's (torch 2.x, CPU)."""
    far = dl.tensor([-100.0, 6.0, 100.0], dtype=BF16)
    y = T.SigmoidTransform()(far)
    eps, tiny = dl.finfo(BF16).eps, dl.finfo(BF16).tiny
    assert y.tolist() == [tiny, 1 - eps, 1 - eps]
    assert np.isfinite(_numbers(T.SigmoidTransform().inv(y))).all()
    relaxed = D.RelaxedBernoulli(dl.tensor(0.5, dtype=BF16),
                                 probs=dl.tensor([0.3, 0.8], dtype=BF16))
    at_the_ends = relaxed.log_prob(dl.tensor([0.9922, 1.0], dtype=BF16))
    np.testing.assert_allclose(_numbers(at_the_ends), [0.8125, 2.515625], atol=0.02)
    stick = T.StickBreakingTransform().inv(dl.tensor([0.2, 0.3, 0.5], dtype=BF16))
    assert np.isfinite(_numbers(stick)).all()


@pytest.mark.parametrize("make", [
    lambda: D.Bernoulli(probs=dl.tensor([0.0, 1.0], dtype=BF16)),
    lambda: D.Categorical(probs=dl.tensor([0.0, 1.0], dtype=BF16)),
], ids=["Bernoulli", "Categorical"])
def test_probabilities_of_zero_and_one_give_finite_logits_in_bfloat16(make):
    d = make()
    assert d.logits.dtype == BF16 and np.isfinite(_numbers(d.logits)).all()
    assert np.isfinite(_numbers(d.entropy())).all()
