"""difflab.distributions.LKJCholesky and Wishart (torch.distributions'): log densities,
entropies and moments against the numbers PyTorch 2.13 computes (written in here), the
density integrating to 1, gradients of log_prob and rsample against finite differences
(gradcheck), sample moments within their statistical tolerance, shapes with batches,
expand, and clear errors for bad parameters and values."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.integrate as integrate
import scipy.stats as st

import difflab as dl
from difflab import distributions as D

F64 = dl.float64


def t(values):
    return dl.tensor(values, dtype=F64)


#: a 3x3 correlation factor (CorrCholeskyTransform of [0.5, -1, 2])
L3 = [[1.0, 0.0, 0.0], [0.46211715726000974, 0.8868188839700739, 0.0],
      [-0.7615941559557649, 0.6247421931979867, 0.17225427034531132]]


# -- LKJCholesky ---------------------------------------------------------------------------

def test_lkj_log_prob_matches_pytorch():
    d = D.LKJCholesky(2, t([0.5, 1.0, 3.0]))
    np.testing.assert_allclose(d.log_prob(t([[1.0, 0.0], [0.6, 0.8]])).numpy(),
                               [-0.9215863345351905, -0.6931471805599453, -0.9571127263944099],
                               rtol=1e-12)
    for concentration, expected in ((0.3, -0.6709593092471748), (1.0, -1.7164270980971326),
                                    (2.5, -6.049786436468603)):
        np.testing.assert_allclose(D.LKJCholesky(3, t(concentration)).log_prob(t(L3)).item(),
                                   expected, rtol=1e-12)


@pytest.mark.parametrize("concentration", [0.4, 1.0, 3.0])
def test_lkj_density_of_the_2x2_factor_integrates_to_one(concentration):
    # L = [[1, 0], [r, √(1-r²)]]: the density is one of the correlation r on (-1, 1)
    d = D.LKJCholesky(2, t(concentration))

    def density(r):
        factor = t([[1.0, 0.0], [r, math.sqrt(1 - r * r)]])
        return math.exp(d.log_prob(factor).item())

    total, _ = integrate.quad(density, -1, 1)
    assert total == pytest.approx(1.0, abs=1e-6)
    # and it is the density of 2B - 1, B ~ Beta(η, η)
    for r in (-0.7, 0.1, 0.5):
        assert density(r) == pytest.approx(st.beta(concentration, concentration).pdf(
            (r + 1) / 2) / 2, rel=1e-9)


@pytest.mark.parametrize("dim, concentration", [(2, 0.5), (3, 2.0), (4, 0.7), (5, 1.0)])
def test_lkj_samples_are_correlation_factors_with_the_right_spread(dim, concentration):
    dl.manual_seed(11)
    n = 8000
    d = D.LKJCholesky(dim, t(concentration))
    factors = d.sample((n,))
    assert tuple(factors.shape) == (n, dim, dim)
    assert bool(dl.all(D.constraints.corr_cholesky.check(factors)))
    corr = (factors @ factors.transpose(-1, -2)).numpy()
    off = corr[:, np.tril_indices(dim, -1)[0], np.tril_indices(dim, -1)[1]]
    # each correlation is 2B - 1 with B ~ Beta(β, β), β = η - 1 + d/2: mean 0,
    # variance 1 / (2β + 1)
    beta = concentration - 1 + dim / 2
    variance = 1 / (2 * beta + 1)
    assert np.all(np.abs(off.mean(0)) < 5 * math.sqrt(variance / n))
    second = st.beta(beta, beta)             # Var(r²) for the variance's standard error
    r2_var = 16 * second.moment(4) - 32 * second.moment(3) + 24 * second.moment(2) \
        - 8 * second.moment(1) + 1 - variance ** 2
    assert np.all(np.abs((off ** 2).mean(0) - variance) < 5 * math.sqrt(r2_var / n))
    for column in off.T:      # and the whole law of each: a Kolmogorov-Smirnov test
        assert st.kstest((column + 1) / 2, st.beta(beta, beta).cdf).pvalue > 1e-4


def test_lkj_log_prob_gradients_and_shapes():
    concentration = t([0.6, 2.5]).requires_grad_()
    value = t(L3).requires_grad_()
    assert dl.autograd.gradcheck(
        lambda c, v: D.LKJCholesky(3, c, validate_args=False).log_prob(v), (concentration, value))
    d = D.LKJCholesky(3, t([[0.5], [2.0]]))
    assert d.batch_shape == (2, 1) and d.event_shape == (3, 3)
    assert d.sample((4,)).shape == (4, 2, 1, 3, 3)
    assert d.log_prob(t(L3)).shape == (2, 1)
    expanded = d.expand((2, 5))
    assert expanded.batch_shape == (2, 5) and expanded.dim == 3
    assert expanded.sample().shape == (2, 5, 3, 3)
    assert D.LKJCholesky(4).concentration.item() == 1.0
    assert D.biject_to(D.LKJCholesky(4).support)(dl.zeros(6)).tolist() == dl.eye(4).tolist()


def test_lkj_errors_are_clear():
    with pytest.raises(ValueError, match="integer >= 2"):
        D.LKJCholesky(1)
    with pytest.raises(ValueError, match="integer >= 2"):
        D.LKJCholesky(2.5)
    with pytest.raises(ValueError, match="concentration"):
        D.LKJCholesky(2, -1.0)
    with pytest.raises(ValueError, match="within the support"):
        D.LKJCholesky(2).log_prob(t([[1.0, 0.0], [0.6, 0.9]]))      # row 1 is not unit
    with pytest.raises(ValueError, match="event shape"):
        D.LKJCholesky(3).log_prob(t([[1.0, 0.0], [0.6, 0.8]]))
    with pytest.raises(NotImplementedError, match="rsample"):
        D.LKJCholesky(2).rsample()
    with pytest.raises(NotImplementedError, match="mean"):
        _ = D.LKJCholesky(2).mean


# -- Wishart -------------------------------------------------------------------------------

COV = [[2.0, 0.5], [0.5, 1.0]]
X = [[1.5, 0.3], [0.3, 0.8]]


def test_wishart_matches_pytorch():
    d = D.Wishart(t(3.0), covariance_matrix=t(COV))
    np.testing.assert_allclose(d.log_prob(dl.eye(2, dtype=F64)).item(), -4.227590786015282,
                               rtol=1e-12)
    np.testing.assert_allclose(d.log_prob(t(X)).item(), -4.170447928872425, rtol=1e-12)
    np.testing.assert_allclose(d.entropy().item(), 6.370447928872425, rtol=1e-12)
    np.testing.assert_allclose(d.mean.numpy(), [[6.0, 1.5], [1.5, 3.0]])
    np.testing.assert_allclose(d.variance.numpy(), [[24.0, 6.75], [6.75, 6.0]])
    assert np.all(np.isnan(d.mode.numpy()))                  # ν <= d + 1: no mode
    np.testing.assert_allclose(d.precision_matrix.numpy(), np.linalg.inv(COV), rtol=1e-12)
    np.testing.assert_allclose(d.scale_tril.numpy(), np.linalg.cholesky(COV), rtol=1e-12)
    # the entropy from the exponential family's log normalizer agrees
    np.testing.assert_allclose(D.ExponentialFamily.entropy(d).item(), 6.370447928872425,
                               rtol=1e-10)
    # a batch of df (one below d: a warning), from scale_tril
    with pytest.warns(UserWarning, match="singular"):
        batch = D.Wishart(t([1.2, 4.0, 7.5]), scale_tril=t([[1.0, 0.0], [0.4, 0.7]]))
    np.testing.assert_allclose(batch.log_prob(t(X)).numpy(),
                               [-5.2873286810776605, -3.3116181747244298, -6.850040723418637],
                               rtol=1e-12)
    np.testing.assert_allclose(batch.entropy().numpy(),
                               [-5.335208576282061, 5.2313622606145715, 6.555460488210537],
                               rtol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                  # (expand does not warn again)
        assert batch.expand((4, 3)).log_prob(t(X)).shape == (4, 3)
    np.testing.assert_allclose(batch.mode.numpy()[1:], [[[1.0, 0.4], [0.4, 0.65]],
                                                        [[4.5, 1.8], [1.8, 2.925]]], rtol=1e-12)
    # 3x3, from the precision matrix
    precision = [[1.0, 0.2, 0.1], [0.2, 2.0, 0.3], [0.1, 0.3, 1.5]]
    d3 = D.Wishart(5.0, precision_matrix=t(precision))
    x3 = t([[3.0, 0.5, 0.2], [0.5, 2.5, -0.1], [0.2, -0.1, 4.0]])
    np.testing.assert_allclose(d3.log_prob(x3).item(), -9.877274245147035, rtol=1e-12)
    np.testing.assert_allclose(d3.entropy().item(), 10.869647010760486, rtol=1e-12)
    np.testing.assert_allclose(d3.covariance_matrix.numpy(), np.linalg.inv(precision),
                               rtol=1e-12)


def test_wishart_edge_cases_match_pytorch_and_scipy():
    with pytest.warns(UserWarning, match="singular"):
        near = D.Wishart(t(1.0001), covariance_matrix=t(COV))  # df just above d - 1 = 1
    np.testing.assert_allclose(near.log_prob(t(X)).item(), -12.925497577683949, rtol=1e-10)
    np.testing.assert_allclose(near.entropy().item(), -19986.5732140766, rtol=1e-10)
    np.testing.assert_allclose(near.log_prob(t(X)).item(), st.wishart(1.0001, COV).logpdf(X),
                               rtol=1e-10)
    one = D.Wishart(t(2.5), scale_tril=t([[1.5]]))           # d = 1: a scaled chi-square
    np.testing.assert_allclose(one.log_prob(t([[2.0]])).item(), -2.052982558852988, rtol=1e-12)
    np.testing.assert_allclose(one.log_prob(t([[2.0]])).item(),
                               st.chi2(2.5, scale=2.25).logpdf(2.0), rtol=1e-12)
    np.testing.assert_allclose(one.entropy().item(), 2.712668943698527, rtol=1e-12)
    assert one.mean.tolist() == [[5.625]] and one.variance.tolist() == [[25.3125]]


def test_wishart_log_prob_and_entropy_gradients():
    df = t(3.5).requires_grad_()
    tril = t([[1.2, 0.0], [0.3, 0.8]]).requires_grad_()
    value = t(X).requires_grad_()
    assert dl.autograd.gradcheck(
        lambda n, s, v: D.Wishart(n, scale_tril=s, validate_args=False).log_prob(v),
        (df, tril, value))
    cov = t(COV).requires_grad_()     # (symmetrized: the factorization reads one triangle)
    assert dl.autograd.gradcheck(
        lambda n, c: D.Wishart(n, covariance_matrix=(c + c.mT) / 2,
                               validate_args=False).entropy(), (df, cov))


def test_wishart_rsample_is_reparameterized_in_the_scale():
    tril = t([[1.2, 0.0], [0.3, 0.8]]).requires_grad_()

    def draws(s):
        dl.manual_seed(4)  # the same noise every time: the draw is a function of s
        return D.Wishart(t(4.5), scale_tril=s, validate_args=False).rsample((3,))

    assert dl.autograd.gradcheck(draws, (tril,))
    with pytest.raises(NotImplementedError, match="df.detach"):
        D.Wishart(t(4.5).requires_grad_(), scale_tril=tril).rsample()
    with dl.no_grad():  # (no gradient asked: sample() works with such a df)
        assert D.Wishart(t(4.5).requires_grad_(), scale_tril=tril).rsample().shape == (2, 2)
    assert D.Wishart(t(4.5).requires_grad_(), scale_tril=tril).sample((2,)).shape == (2, 2, 2)


@pytest.mark.parametrize("df", [2.5, 6.0])
def test_wishart_sample_moments_lie_within_statistical_tolerance(df):
    dl.manual_seed(21)
    n = 20000
    d = D.Wishart(t(df), covariance_matrix=t(COV))
    x = d.sample((n,))
    assert tuple(x.shape) == (n, 2, 2)
    assert bool(dl.all(D.constraints.positive_definite.check(x)))
    x = x.numpy()
    std_error = np.sqrt(d.variance.numpy() / n)
    assert np.all(np.abs(x.mean(0) - d.mean.numpy()) < 5 * std_error)
    np.testing.assert_allclose(x.var(0), d.variance.numpy(), rtol=0.1)


def test_wishart_shapes_expand_and_errors():
    d = D.Wishart(t([3.0, 4.0]), covariance_matrix=dl.eye(2, dtype=F64))
    assert d.batch_shape == (2,) and d.event_shape == (2, 2) and d.has_rsample
    assert d.rsample((3,)).shape == (3, 2, 2, 2)
    assert d.log_prob(t(X)).shape == (2,)
    expanded = d.expand((5, 2))
    assert expanded.batch_shape == (5, 2) and expanded.sample().shape == (5, 2, 2, 2)
    assert d.support is D.constraints.positive_definite
    with pytest.raises(ValueError, match="greater than d - 1 = 1"):
        D.Wishart(1.0, covariance_matrix=dl.eye(2))
    with pytest.raises(ValueError, match="exactly one"):
        D.Wishart(3.0)
    with pytest.raises(ValueError, match="exactly one"):
        D.Wishart(3.0, covariance_matrix=dl.eye(2), scale_tril=dl.eye(2))
    with pytest.raises(ValueError, match=r"\(\.\.\., d, d\)"):
        D.Wishart(3.0, covariance_matrix=dl.ones(2, 3))
    with pytest.raises(ValueError, match="covariance_matrix"):
        D.Wishart(3.0, covariance_matrix=t([[1.0, 2.0], [2.0, 1.0]]), validate_args=True)
    with pytest.raises(ValueError, match="scale_tril"):
        D.Wishart(3.0, scale_tril=t([[1.0, 2.0], [0.0, 1.0]]), validate_args=True)
    with pytest.raises(ValueError, match="within the support"):
        D.Wishart(3.0, covariance_matrix=dl.eye(2)).log_prob(t([[1.0, 2.0], [2.0, 1.0]]))


def test_forward_mode_agrees_with_reverse_mode():
    # jvp (forward, dual numbers) against the gradient (reverse) along one direction
    value = t(X)
    tril = t([[1.2, 0.0], [0.3, 0.8]])
    direction = t([[0.1, 0.0], [0.2, -0.3]])

    def wishart(s):
        return D.Wishart(t(3.5), scale_tril=s, validate_args=False).log_prob(value)

    def draw(s):
        dl.manual_seed(8)
        return D.Wishart(t(3.5), scale_tril=s, validate_args=False).rsample().sum()

    def lkj(c):
        return D.LKJCholesky(3, c, validate_args=False).log_prob(t(L3))

    for f, point, tangent in ((wishart, tril, direction), (draw, tril, direction),
                              (lkj, t(1.5), t(1.0))):
        _, forward = dl.func.jvp(f, (point,), (tangent,))
        reverse = (dl.func.grad(f)(point) * tangent).sum()
        np.testing.assert_allclose(forward.item(), reverse.item(), rtol=1e-10)
