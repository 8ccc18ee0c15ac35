"""difflab.distributions (torch.distributions): densities, entropies and moments against
scipy.stats; pathwise rsample gradients against finite differences of the same draws;
KL divergences against numerical integration; clear errors for bad parameters and values;
sample moments within their statistical tolerance."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.integrate as integrate
import scipy.stats as st

import difflab as dl
from difflab import distributions as D

F64 = dl.float64


def t(values):
    return dl.tensor(values, dtype=F64)


#: name -> (difflab distribution, scipy frozen distribution, values to evaluate at)
CASES = {
    "Normal": (lambda: D.Normal(t([0.5, -1.0]), t([1.5, 0.3])),
               st.norm([0.5, -1.0], [1.5, 0.3]), [0.2, -1.1]),
    "LogNormal": (lambda: D.LogNormal(t([0.2, -0.5]), t([0.5, 1.2])),
                  st.lognorm([0.5, 1.2], scale=np.exp([0.2, -0.5])), [1.3, 0.4]),
    "Uniform": (lambda: D.Uniform(t([0.0, -2.0]), t([4.0, 1.0])),
                st.uniform([0.0, -2.0], [4.0, 3.0]), [1.0, 0.5]),
    "Exponential": (lambda: D.Exponential(t([2.0, 0.5])), st.expon(scale=[0.5, 2.0]),
                    [0.7, 3.0]),
    "Laplace": (lambda: D.Laplace(t([0.5, 0.0]), t([1.5, 0.2])),
                st.laplace([0.5, 0.0], [1.5, 0.2]), [1.0, -0.3]),
    "Gamma": (lambda: D.Gamma(t([2.0, 0.5]), t([1.0, 3.0])),
              st.gamma([2.0, 0.5], scale=[1.0, 1 / 3]), [0.7, 0.2]),
    "Beta": (lambda: D.Beta(t([2.0, 0.7]), t([3.0, 1.5])), st.beta([2.0, 0.7], [3.0, 1.5]),
             [0.3, 0.8]),
    "Poisson": (lambda: D.Poisson(t([2.0, 7.5])), st.poisson([2.0, 7.5]), [3.0, 6.0]),
    "Bernoulli": (lambda: D.Bernoulli(probs=t([0.2, 0.9])), st.bernoulli([0.2, 0.9]),
                  [1.0, 0.0]),
    "Binomial": (lambda: D.Binomial(t([10.0, 4.0]), probs=t([0.3, 0.6])),
                 st.binom([10, 4], [0.3, 0.6]), [4.0, 2.0]),
    "Cauchy": (lambda: D.Cauchy(t([0.5, -1.0]), t([1.5, 0.3])),
               st.cauchy([0.5, -1.0], [1.5, 0.3]), [0.2, -1.1]),
    "HalfNormal": (lambda: D.HalfNormal(t([1.3, 0.4])), st.halfnorm(scale=[1.3, 0.4]),
                   [0.7, 0.1]),
    "HalfCauchy": (lambda: D.HalfCauchy(t([1.3, 0.4])), st.halfcauchy(scale=[1.3, 0.4]),
                   [0.7, 0.1]),
    "Gumbel": (lambda: D.Gumbel(t([0.5, -1.0]), t([2.0, 0.3])),
               st.gumbel_r([0.5, -1.0], [2.0, 0.3]), [1.2, -0.8]),
    "Pareto": (lambda: D.Pareto(t([1.2, 0.5]), t([3.5, 5.0])),
               st.pareto([3.5, 5.0], scale=[1.2, 0.5]), [1.7, 0.6]),
    "Weibull": (lambda: D.Weibull(t([1.5, 0.5]), t([2.3, 0.8])),
                st.weibull_min([2.3, 0.8], scale=[1.5, 0.5]), [0.8, 0.3]),
    "Chi2": (lambda: D.Chi2(t([4.5, 1.5])), st.chi2([4.5, 1.5]), [3.0, 0.4]),
    "InverseGamma": (lambda: D.InverseGamma(t([3.5, 5.0]), t([2.0, 0.5])),
                     st.invgamma([3.5, 5.0], scale=[2.0, 0.5]), [0.7, 0.2]),
    "StudentT": (lambda: D.StudentT(t([5.5, 3.0]), t([0.3, -1.0]), t([2.0, 0.5])),
                 st.t([5.5, 3.0], [0.3, -1.0], [2.0, 0.5]), [1.2, -0.5]),
    "FisherSnedecor": (lambda: D.FisherSnedecor(t([4.5, 9.0]), t([7.0, 12.0])),
                       st.f([4.5, 9.0], [7.0, 12.0]), [1.1, 0.6]),
    "Geometric": (lambda: D.Geometric(probs=t([0.3, 0.8])), st.geom([0.3, 0.8], loc=-1),
                  [4.0, 0.0]),
    "NegativeBinomial": (lambda: D.NegativeBinomial(t([3.5, 1.0]), probs=t([0.4, 0.7])),
                         st.nbinom([3.5, 1.0], [0.6, 0.3]), [4.0, 1.0]),
    "GeneralizedPareto": (lambda: D.GeneralizedPareto(t([0.1, 0.0]), t([2.0, 1.5]),
                                                      t([0.4, -0.3])),
                          st.genpareto([0.4, -0.3], loc=[0.1, 0.0], scale=[2.0, 1.5]),
                          [1.3, 0.7]),
}
CONTINUOUS = {"Normal", "LogNormal", "Uniform", "Exponential", "Laplace", "Gamma", "Beta",
              "Cauchy", "HalfNormal", "HalfCauchy", "Gumbel", "Pareto", "Weibull", "Chi2",
              "InverseGamma", "StudentT", "FisherSnedecor", "GeneralizedPareto"}
#: (PyTorch has none either: an infinite series, or no closed form)
NO_ENTROPY = {"Poisson", "NegativeBinomial", "FisherSnedecor"}
HAS_CDF = {"Normal", "LogNormal", "Uniform", "Exponential", "Laplace", "Cauchy", "HalfNormal",
           "HalfCauchy", "Gumbel", "Pareto", "Weibull", "GeneralizedPareto"}
NO_MOMENTS = {"Cauchy", "HalfCauchy"}  # (no mean, no variance: medians are compared)


@pytest.mark.parametrize("name", sorted(CASES))
def test_log_prob_entropy_and_moments_match_scipy(name):
    make, ref, x = CASES[name]
    d = make()
    logp = ref.logpdf(x) if name in CONTINUOUS else ref.logpmf(x)
    np.testing.assert_allclose(d.log_prob(t(x)).numpy(), logp, rtol=1e-10, atol=1e-12)
    if name == "Cauchy":  # (scipy: nan; PyTorch's variance: inf, as here)
        assert np.all(np.isnan(d.mean.numpy())) and np.all(np.isinf(d.variance.numpy()))
    else:
        np.testing.assert_allclose(d.mean.numpy(), ref.mean(), rtol=1e-10)
    with np.errstate(invalid="ignore"):
        if name != "Cauchy":
            np.testing.assert_allclose(d.variance.numpy(), ref.var(), rtol=1e-10)
            np.testing.assert_allclose(d.stddev.numpy(), ref.std(), rtol=1e-10)
    if name not in NO_ENTROPY:
        np.testing.assert_allclose(d.entropy().numpy(), ref.entropy(), rtol=1e-9, atol=1e-12)
    if name in HAS_CDF:
        np.testing.assert_allclose(d.cdf(t(x)).numpy(), ref.cdf(x), rtol=1e-10)
        q = t([0.1, 0.85])
        np.testing.assert_allclose(d.icdf(q).numpy(), ref.ppf([0.1, 0.85]), rtol=1e-9)


@pytest.mark.parametrize("name", sorted(CASES))
def test_sample_moments_lie_within_statistical_tolerance(name):
    make, ref, _ = CASES[name]
    dl.manual_seed(1234)
    n = 20000
    x = make().sample((n,)).numpy()
    assert x.shape == (n, 2)
    if name in NO_MOMENTS:  # the sample median within 5 of its standard errors
        density = ref.pdf(ref.median())
        error = 0.5 / (density * np.sqrt(n))
        assert np.all(np.abs(np.median(x, 0) - ref.median()) < 5 * error)
        return
    # the sample mean is within 5 standard errors of the mean
    assert np.all(np.abs(x.mean(0) - ref.mean()) < 5 * ref.std() / np.sqrt(n))


def test_manual_seed_repeats_the_draws():
    for make in (lambda: D.Normal(0.0, 1.0), lambda: D.Gamma(2.0, 1.0),
                 lambda: D.Categorical(logits=t([0.0, 1.0, 2.0]))):
        dl.manual_seed(7)
        a = make().sample((5,))
        dl.manual_seed(7)
        assert make().sample((5,)).tolist() == a.tolist()


#: name -> (build from parameter tensors, parameter values) for pathwise gradients
REPARAMETERIZED = {
    "Normal": (lambda a, b: D.Normal(a, b), [0.3, 1.4]),
    "LogNormal": (lambda a, b: D.LogNormal(a, b), [0.1, 0.6]),
    "Uniform": (lambda a, b: D.Uniform(a, b), [-0.5, 2.0]),
    "Laplace": (lambda a, b: D.Laplace(a, b), [0.2, 0.8]),
    "Exponential": (lambda a: D.Exponential(a), [1.7]),
    "Cauchy": (lambda a, b: D.Cauchy(a, b), [0.2, 0.8]),
    "HalfNormal": (lambda a: D.HalfNormal(a), [1.3]),
    "HalfCauchy": (lambda a: D.HalfCauchy(a), [0.4]),
    "Gumbel": (lambda a, b: D.Gumbel(a, b), [0.2, 0.8]),
    "Pareto": (lambda a, b: D.Pareto(a, b), [0.7, 3.5]),
    "Weibull": (lambda a, b: D.Weibull(a, b), [1.2, 1.8]),
    "Kumaraswamy": (lambda a, b: D.Kumaraswamy(a, b), [1.5, 2.5]),
    "GeneralizedPareto": (lambda a, b, c: D.GeneralizedPareto(a, b, c), [0.2, 0.8, 0.3]),
    "RelaxedBernoulli": (lambda a, b: D.RelaxedBernoulli(a, logits=b), [0.7, 0.3]),
    "LogitRelaxedBernoulli": (lambda a, b: D.LogitRelaxedBernoulli(a, logits=b), [0.7, 0.3]),
    "ContinuousBernoulli": (lambda a: D.ContinuousBernoulli(logits=a), [0.8]),
    "RelaxedOneHotCategorical": (lambda a, b: D.RelaxedOneHotCategorical(
        a, logits=dl.stack([b, b * b, -b])), [0.7, 0.3]),
}


@pytest.mark.parametrize("name", sorted(REPARAMETERIZED))
def test_rsample_gradients_match_finite_differences_of_the_same_draws(name):
    build, values = REPARAMETERIZED[name]

    def loss(*params):
        dl.manual_seed(3)  # the same noise every time: the draw is a function of the params
        x = build(*params).rsample((50,))
        return (x * x + dl.sin(x)).mean()

    params = [t(v).requires_grad_() for v in values]
    loss(*params).backward()
    for i in range(len(values)):
        h = 1e-6
        up = [t(w + (h if j == i else 0.0)) for j, w in enumerate(values)]
        down = [t(w - (h if j == i else 0.0)) for j, w in enumerate(values)]
        numeric = (loss(*up).item() - loss(*down).item()) / (2 * h)
        np.testing.assert_allclose(params[i].grad.item(), numeric, rtol=1e-6, atol=1e-8)


def test_multivariate_normal_rsample_and_log_prob_gradients():
    loc = t([0.5, -0.2]).requires_grad_()
    cov = t([[2.0, 0.3], [0.3, 0.5]]).requires_grad_()

    def f(loc, cov):
        dl.manual_seed(5)
        d = D.MultivariateNormal(loc, covariance_matrix=cov)
        x = t([[0.1, 0.2], [1.0, -0.5]])
        return d.log_prob(x).sum() + d.rsample((3,)).pow(2).sum()

    assert dl.autograd.gradcheck(f, (loc, cov))


def test_multivariate_normal_matches_scipy():
    cov = np.array([[2.0, 0.3, 0.1], [0.3, 0.5, -0.2], [0.1, -0.2, 1.0]])
    loc = np.array([0.5, -0.2, 1.0])
    d = D.MultivariateNormal(t(loc), covariance_matrix=t(cov))
    ref = st.multivariate_normal(loc, cov)
    x = np.array([[0.1, 0.2, 0.3], [1.0, -1.0, 0.0]])
    np.testing.assert_allclose(d.log_prob(t(x)).numpy(), ref.logpdf(x), rtol=1e-10)
    np.testing.assert_allclose(d.entropy().item(), ref.entropy(), rtol=1e-10)
    np.testing.assert_allclose(d.scale_tril.numpy(), np.linalg.cholesky(cov), atol=1e-12)
    np.testing.assert_allclose(d.covariance_matrix.numpy(), cov, atol=1e-12)
    np.testing.assert_allclose(d.variance.numpy(), np.diag(cov), atol=1e-12)
    dl.manual_seed(0)
    samples = d.sample((40000,)).numpy()
    np.testing.assert_allclose(np.cov(samples.T), cov, atol=0.06)


@pytest.mark.parametrize("name", ["Gamma", "Beta", "Dirichlet", "Categorical", "Binomial",
                                  "Poisson"])
def test_log_prob_and_entropy_gradients_reach_the_parameters(name):
    builds = {
        "Gamma": (lambda a, b: D.Gamma(a, b), [[1.5, 2.0], [0.7, 3.0]], [0.4, 1.1]),
        "Beta": (lambda a, b: D.Beta(a, b), [[1.5, 2.0], [0.7, 3.0]], [0.4, 0.6]),
        "Dirichlet": (lambda a: D.Dirichlet(a), [[1.5, 2.0, 0.8]], [0.2, 0.3, 0.5]),
        "Categorical": (lambda z: D.Categorical(logits=z), [[0.1, -0.4, 0.9]], [2.0, 0.0]),
        "Binomial": (lambda z: D.Binomial(5, logits=z), [[0.3, -1.2]], [2.0, 5.0]),
        "Poisson": (lambda r: D.Poisson(r), [[1.3, 4.0]], [0.0, 3.0]),
    }
    build, params, x = builds[name]
    tensors = tuple(t(p).requires_grad_() for p in params)
    assert dl.autograd.gradcheck(lambda *ps: build(*ps).log_prob(t(x)), tensors)
    if name != "Poisson":
        assert dl.autograd.gradcheck(lambda *ps: build(*ps).entropy(), tensors)


def test_categorical_and_one_hot():
    probs = np.array([[0.2, 0.3, 0.5], [0.6, 0.4, 0.0]])
    c = D.Categorical(probs=t(probs))
    assert c.batch_shape == (2,) and c.event_shape == ()
    np.testing.assert_allclose(c.log_prob(t([2, 1]).long()).numpy(), np.log([0.5, 0.4]))
    np.testing.assert_allclose(c.entropy().numpy(), [st.entropy(p) for p in probs])
    dl.manual_seed(0)
    s = c.sample((30000,)).numpy()
    freq = np.stack([(s[:, 0] == k).mean() for k in range(3)])
    assert np.all(np.abs(freq - probs[0]) < 5 * np.sqrt(probs[0] * (1 - probs[0]) / 30000))
    assert np.all(s[:, 1] != 2)  # probability 0 is never drawn
    o = D.OneHotCategorical(logits=t(np.log([0.2, 0.3, 0.5])))
    assert o.sample((4,)).shape == (4, 3)
    np.testing.assert_allclose(o.log_prob(t([0.0, 0.0, 1.0])).item(), np.log(0.5))
    assert o.enumerate_support().tolist() == np.eye(3).tolist()


def test_bernoulli_with_logits_is_finite_far_out():
    d = D.Bernoulli(logits=t([100.0, -100.0]))
    assert np.all(np.isfinite(d.log_prob(t([0.0, 1.0])).numpy()))
    np.testing.assert_allclose(d.log_prob(t([0.0, 1.0])).numpy(), [-100.0, -100.0])


def test_expand_and_independent():
    d = D.Normal(t(0.0), t(1.0)).expand((3, 2))
    assert d.batch_shape == (3, 2) and d.sample((5,)).shape == (5, 3, 2)
    ind = D.Independent(D.Normal(dl.zeros(3, 2, dtype=F64), 1.0), 1)
    assert ind.batch_shape == (3,) and ind.event_shape == (2,)
    x = t(np.ones((3, 2)))
    np.testing.assert_allclose(ind.log_prob(x).numpy(), st.norm().logpdf(x.numpy()).sum(-1))
    assert ind.expand((4, 3)).batch_shape == (4, 3)
    c = D.Categorical(logits=t([0.0, 1.0])).expand((5,))
    assert c.batch_shape == (5,) and c.sample().shape == (5,)


def _integrate(p, q, low, high):
    def integrand(x):
        v = t(x)
        return float(dl.exp(p.log_prob(v)) * (p.log_prob(v) - q.log_prob(v)))
    return integrate.quad(integrand, low, high, limit=200)[0]


KL_CONTINUOUS = {
    "Normal": (D.Normal(0.3, 1.2), D.Normal(-0.5, 0.7), -15, 15),
    "LogNormal": (D.LogNormal(0.1, 0.5), D.LogNormal(0.4, 0.8), 1e-9, 60),
    "Laplace": (D.Laplace(0.3, 1.2), D.Laplace(-0.5, 0.7), -40, 40),
    "Exponential": (D.Exponential(1.5), D.Exponential(0.4), 0, 60),
    "Gamma": (D.Gamma(2.5, 1.5), D.Gamma(1.2, 0.8), 1e-12, 80),
    "Beta": (D.Beta(2.5, 1.5), D.Beta(1.2, 3.0), 0, 1),
    "Uniform": (D.Uniform(0.5, 1.5), D.Uniform(0.0, 3.0), 0.5, 1.5 - 1e-12),
}


@pytest.mark.parametrize("name", sorted(KL_CONTINUOUS))
def test_kl_divergence_matches_numerical_integration(name):
    p, q, low, high = KL_CONTINUOUS[name]
    p = type(p)(*[getattr(p, n).to(F64) for n in p._given()])
    q = type(q)(*[getattr(q, n).to(F64) for n in q._given()])
    np.testing.assert_allclose(D.kl_divergence(p, q).item(), _integrate(p, q, low, high),
                               rtol=1e-6)


def test_kl_divergence_of_discrete_and_vector_distributions():
    p, q = D.Poisson(t(3.0)), D.Poisson(t(1.5))
    k = np.arange(80.0)
    want = np.sum(st.poisson(3.0).pmf(k) * (st.poisson(3.0).logpmf(k)
                                             - st.poisson(1.5).logpmf(k)))
    np.testing.assert_allclose(D.kl_divergence(p, q).item(), want, rtol=1e-10)
    pc, qc = np.array([0.2, 0.3, 0.5]), np.array([0.4, 0.4, 0.2])
    np.testing.assert_allclose(
        D.kl_divergence(D.Categorical(t(pc)), D.Categorical(t(qc))).item(), st.entropy(pc, qc))
    np.testing.assert_allclose(
        D.kl_divergence(D.Bernoulli(t(0.3)), D.Bernoulli(t(0.8))).item(),
        st.entropy([0.3, 0.7], [0.8, 0.2]))
    # Dirichlet and the multivariate normal: the Monte Carlo mean of log p - log q
    for p, q in ((D.Dirichlet(t([1.5, 2.0, 0.8])), D.Dirichlet(t([1.0, 1.0, 3.0]))),
                 (D.MultivariateNormal(t([0.0, 1.0]), scale_tril=t([[1.0, 0.0], [0.5, 0.7]])),
                  D.MultivariateNormal(t([0.5, 0.0]), covariance_matrix=t([[2.0, 0.2],
                                                                          [0.2, 1.0]])))):
        dl.manual_seed(0)
        x = p.sample((200000,))
        terms = (p.log_prob(x) - q.log_prob(x)).numpy()
        assert abs(D.kl_divergence(p, q).item() - terms.mean()) < 5 * terms.std() / np.sqrt(
            len(terms))


def test_kl_gradients_reach_both_sides():
    a = t([0.3, 1.2]).requires_grad_()
    b = t([-0.5, 0.7]).requires_grad_()
    assert dl.autograd.gradcheck(
        lambda a, b: D.kl_divergence(D.Normal(a[0], a[1]), D.Normal(b[0], b[1])), (a, b))


def test_register_kl_picks_the_most_specific_pair_and_says_what_is_missing():
    class MyNormal(D.Normal):
        pass

    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0)).item() == 0.5
    with pytest.raises(NotImplementedError, match=r"\(Normal, Gamma\).*register_kl"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Gamma(1.0, 1.0))
    with pytest.raises(TypeError, match="Distribution subclasses"):
        D.register_kl(int, D.Normal)


def test_bad_parameters_and_values_get_clear_errors():
    with pytest.raises(ValueError, match=r"parameter scale .* GreaterThan\(lower_bound=0.0\)"):
        D.Normal(0.0, -1.0)
    with pytest.raises(ValueError, match="exactly one of probs and logits"):
        D.Bernoulli(probs=0.5, logits=0.0)
    with pytest.raises(ValueError, match="exactly one of probs and logits, got neither"):
        D.Categorical()
    with pytest.raises(ValueError, match="low < high"):
        D.Uniform(1.0, 0.0)
    with pytest.raises(ValueError, match="within the support"):
        D.Exponential(1.0).log_prob(t(-1.0))
    with pytest.raises(ValueError, match="within the support"):
        D.Categorical(logits=t([0.0, 1.0])).log_prob(t(2.0))
    with pytest.raises(ValueError, match="covariance_matrix .* PositiveDefinite"):
        D.MultivariateNormal(t([0.0, 0.0]), covariance_matrix=t([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="reinterpreted_batch_ndims must be in"):
        D.Independent(D.Normal(dl.zeros(3), 1.0), 2)
    with pytest.raises(NotImplementedError, match="no reparameterized sampler"):
        D.Gamma(1.0, 1.0).rsample()
    # validate_args=False skips the checks (PyTorch's switch)
    with np.errstate(invalid="ignore"):
        assert np.isnan(D.Normal(0.0, -1.0, validate_args=False).log_prob(t(0.0)).item())


def test_score_function_gradient_of_a_discrete_sample():
    # d/dp E[x] for Bernoulli(p) is 1: the score-function estimator finds it
    p = t(0.3).requires_grad_()
    dl.manual_seed(0)
    d = D.Bernoulli(probs=p)
    x = d.sample((20000,))
    (x * d.log_prob(x)).mean().backward()
    assert abs(p.grad.item() - 1.0) < 0.05


def _total(log_prob, low, high):
    return integrate.quad(lambda x: float(dl.exp(log_prob(t(x)))), low, high, limit=200)[0]


def test_densities_without_a_scipy_twin_integrate_to_one_with_their_moments():
    k = D.Kumaraswamy(t(2.0), t(3.0))
    assert _total(k.log_prob, 0, 1) == pytest.approx(1.0, abs=1e-9)
    mean = integrate.quad(lambda x: x * float(dl.exp(k.log_prob(t(x)))), 0, 1)[0]
    assert k.mean.item() == pytest.approx(mean, rel=1e-9)
    entropy = integrate.quad(lambda x: -float(dl.exp(k.log_prob(t(x))) * k.log_prob(t(x))),
                             0, 1)[0]
    assert k.entropy().item() == pytest.approx(entropy, rel=1e-8)
    relaxed = D.RelaxedBernoulli(t(0.7), probs=t(0.3))
    assert _total(relaxed.log_prob, 0, 1) == pytest.approx(1.0, abs=1e-8)
    logit = D.LogitRelaxedBernoulli(t(0.7), logits=t(0.4))
    assert _total(logit.log_prob, -60, 60) == pytest.approx(1.0, abs=1e-9)
    # the Concrete density (Maddison et al. 2017, eq. 2), written out with NumPy
    tau, logits = 0.8, np.array([0.1, 0.5, -0.3])
    pi = np.exp(logits) / np.exp(logits).sum()
    y = np.array([[0.2, 0.3, 0.5], [0.05, 0.9, 0.05]])
    want = (np.log(2.0) + 2 * np.log(tau) + np.log(pi * y ** (-tau - 1)).sum(-1)
            - 3 * np.log((pi * y ** -tau).sum(-1)))
    r = D.RelaxedOneHotCategorical(t(tau), logits=t(logits))
    np.testing.assert_allclose(r.log_prob(t(y)).numpy(), want, rtol=1e-12)


def test_mixture_same_family():
    mix = D.MixtureSameFamily(D.Categorical(probs=t([0.3, 0.7])),
                              D.Normal(t([-1.0, 2.0]), t([0.5, 1.5])))
    x = np.array([-1.2, 0.4, 3.0])
    want = np.log(0.3 * st.norm(-1, 0.5).pdf(x) + 0.7 * st.norm(2, 1.5).pdf(x))
    np.testing.assert_allclose(mix.log_prob(t(x)).numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(mix.cdf(t(x)).numpy(), 0.3 * st.norm(-1, 0.5).cdf(x)
                               + 0.7 * st.norm(2, 1.5).cdf(x), rtol=1e-12)
    dl.manual_seed(1)
    s = mix.sample((40000,)).numpy()
    assert abs(s.mean() - mix.mean.item()) < 5 * mix.stddev.item() / np.sqrt(len(s))
    assert abs(s.var() - mix.variance.item()) < 0.1
    with pytest.raises(ValueError, match="number of components 2"):
        D.MixtureSameFamily(D.Categorical(probs=t([0.3, 0.7])), D.Normal(t([0.0] * 3), 1.0))


def test_multinomial():
    m = D.Multinomial(6, probs=t([0.2, 0.3, 0.5]))
    np.testing.assert_allclose(m.log_prob(t([1.0, 2.0, 3.0])).item(),
                               st.multinomial(6, [0.2, 0.3, 0.5]).logpmf([1, 2, 3]))
    dl.manual_seed(0)
    s = m.sample((20000,)).numpy()
    assert s.shape == (20000, 3) and np.all(s.sum(-1) == 6)
    np.testing.assert_allclose(s.mean(0), [1.2, 1.8, 3.0], atol=0.05)
    with pytest.raises(ValueError, match="add up to total_count = 6"):
        m.log_prob(t([1.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match="integer >= 0"):
        D.Multinomial(2.5, probs=t([0.5, 0.5]))


def test_exponential_family_entropy_from_the_log_normalizer_matches_the_closed_forms():
    for d in (D.Normal(t([0.3, 1.0]), t([2.0, 0.5])), D.Exponential(t([2.0, 0.3])),
              D.Gamma(t([2.5, 0.7]), t([1.5, 3.0])), D.Bernoulli(logits=t([0.3, -2.0]))):
        np.testing.assert_allclose(D.ExponentialFamily.entropy(d).detach().numpy(),
                                   d.entropy().numpy(), rtol=1e-12, atol=1e-14)


def test_low_rank_multivariate_normal_matches_scipy():
    w = np.array([[1.0, 0.5], [0.2, -0.3], [0.4, 0.1]])
    diag, mu = np.array([0.5, 1.0, 0.3]), np.array([0.1, 0.0, -1.0])
    d = D.LowRankMultivariateNormal(t(mu), t(w), t(diag))
    ref = st.multivariate_normal(mu, w @ w.T + np.diag(diag))
    np.testing.assert_allclose(d.log_prob(t([0.2, 0.1, -0.5])).item(),
                               ref.logpdf([0.2, 0.1, -0.5]), rtol=1e-12)
    np.testing.assert_allclose(d.entropy().item(), ref.entropy(), rtol=1e-12)
    dl.manual_seed(0)
    np.testing.assert_allclose(np.cov(d.rsample((40000,)).numpy().T), ref.cov, atol=0.05)
    assert d.expand((2,)).batch_shape == (2,)


def test_von_mises_density_and_rejection_sampler():
    d = D.VonMises(t([0.5, -2.0]), t([2.0, 0.3]))
    ref = st.vonmises([2.0, 0.3], loc=[0.5, -2.0])
    np.testing.assert_allclose(d.log_prob(t([0.3, 1.0])).numpy(), ref.logpdf([0.3, 1.0]),
                               rtol=1e-12)
    dl.manual_seed(0)
    s = d.sample((20000,)).numpy()
    assert np.all(np.abs(s) <= np.pi)
    resultant = np.abs(np.exp(1j * (s - np.array([0.5, -2.0]))).mean(0))
    np.testing.assert_allclose(1 - resultant, d.variance.numpy(), atol=0.02)


@pytest.mark.parametrize("p", [0.2, 0.4995, 0.5, 0.97])
def test_continuous_bernoulli_against_numerical_integration(p):
    d = D.ContinuousBernoulli(probs=t(p))

    def density(x):
        return float(dl.exp(d.log_prob(t(x))))

    assert integrate.quad(density, 0, 1)[0] == pytest.approx(1.0, abs=1e-12)
    mean = integrate.quad(lambda x: x * density(x), 0, 1)[0]
    assert d.mean.item() == pytest.approx(mean, abs=1e-12)
    variance = integrate.quad(lambda x: (x - mean) ** 2 * density(x), 0, 1)[0]
    assert d.variance.item() == pytest.approx(variance, abs=1e-12)
    entropy = integrate.quad(lambda x: -density(x) * np.log(density(x)), 0, 1)[0]
    assert d.entropy().item() == pytest.approx(entropy, abs=1e-12)
    assert d.cdf(d.icdf(t(0.7))).item() == pytest.approx(0.7, abs=1e-12)


def test_generalized_pareto_matches_pytorch_at_its_special_shapes():
    # ξ = 0.4 (a Pareto tail), 0 (exponential), -0.5 (bounded), -1 (uniform)
    d = D.GeneralizedPareto(t([0.1, 0.0, -1.0, 0.5]), t([2.0, 1.5, 0.5, 1.0]),
                            t([0.4, 0.0, -0.5, -1.0]))
    x = t([1.3, 0.7, -0.6, 0.9])
    np.testing.assert_allclose(d.log_prob(x).numpy(), [-1.4460370092192545, -0.872131774774831,
                                                       0.18232155679395456, 0.0], atol=1e-12)
    np.testing.assert_allclose(d.cdf(x).numpy(), [0.4159557036070015, 0.3729109147269438,
                                                  0.64, 0.4], rtol=1e-12)
    np.testing.assert_allclose(d.icdf(t([0.1, 0.5, 0.9, 0.3])).numpy(),
                               [0.31522440755316344, 1.0397207708399179, -0.3162277660168379,
                                0.8], rtol=1e-12)
    np.testing.assert_allclose(d.mean.numpy(), [3.4333333333333336, 1.5, -0.6666666666666667,
                                                1.0], rtol=1e-12)
    np.testing.assert_allclose(d.variance.numpy(), [55.55555555555557, 2.25,
                                                    0.05555555555555555, 0.08333333333333333],
                               rtol=1e-12)
    np.testing.assert_allclose(d.entropy().numpy(), [2.0931471805599453, 1.4054651081081644,
                                                     -0.1931471805599454, 0.0], atol=1e-12)
    assert d.mode.tolist() == [0.1, 0.0, -1.0, 0.5]
    assert d.upper.tolist() == [math.inf, math.inf, 0.0, 1.5]
    heavy = D.GeneralizedPareto(0.0, 1.0, t([0.7, 1.5]))        # no variance; no mean for ξ >= 1
    assert np.isnan(heavy.variance.numpy()).all() and np.isnan(heavy.mean.numpy()[1])
    assert heavy.mean.numpy()[0] == pytest.approx(1 / 0.3)
    with pytest.raises(ValueError, match="scale"):
        D.GeneralizedPareto(0.0, -1.0, 0.0)
    with pytest.raises(ValueError, match="within the support"):
        D.GeneralizedPareto(0.0, 1.0, -0.5).log_prob(t(3.0))         # above loc - scale/ξ = 2
    with pytest.raises(ValueError, match="within the support"):
        D.GeneralizedPareto(0.0, 1.0, 0.5).log_prob(t(-1.0))
    assert dl.autograd.gradcheck(lambda a, b, c: D.GeneralizedPareto(a, b, c).log_prob(x[:2]),
                                 tuple(t(v).requires_grad_() for v in ([0.1, 0.0], [2.0, 1.5],
                                                                       [0.4, -0.3])))


def test_logistic_normal_matches_pytorch():
    d = D.LogisticNormal(t([0.3, -0.2]), t([1.2, 0.5]))
    assert d.batch_shape == () and d.event_shape == (3,) and d.has_rsample
    assert d.support is D.constraints.simplex
    np.testing.assert_allclose(d.log_prob(t([0.2, 0.5, 0.3])).item(), 0.8264806940893101,
                               rtol=1e-12)
    one = D.LogisticNormal(0.5, 1.0)                      # a number: onto the 2-simplex
    assert one.event_shape == (2,)
    np.testing.assert_allclose(one.log_prob(t([0.3, 0.7])).item(), -0.26589654724197276,
                               rtol=1e-6)
    batch = D.LogisticNormal(dl.zeros(3, 2, dtype=F64), dl.ones(3, 2, dtype=F64))
    expanded = batch.expand((5, 3))
    assert isinstance(expanded, D.LogisticNormal) and expanded.batch_shape == (5, 3)
    assert expanded.sample((2,)).shape == (2, 5, 3, 3)
    dl.manual_seed(2)
    draws = d.sample((20000,))
    assert bool(dl.all(D.constraints.simplex.check(draws)))
    # the draws pulled back by stick breaking are the base normal's
    base = D.StickBreakingTransform().inv(draws).numpy()
    assert np.all(np.abs(base.mean(0) - [0.3, -0.2]) < 5 * np.array([1.2, 0.5]) / np.sqrt(20000))

    def loss(loc, scale):
        dl.manual_seed(3)
        y = D.LogisticNormal(loc, scale).rsample((4,))
        return (y * t([1.0, 2.0, 3.0])).sum() + D.LogisticNormal(loc, scale).log_prob(y).sum()

    assert dl.autograd.gradcheck(loss, (t([0.3, -0.2]).requires_grad_(),
                                        t([1.2, 0.5]).requires_grad_()))


def test_one_hot_categorical_straight_through_matches_pytorch():
    p = t([0.2, 0.5, 0.3]).requires_grad_()
    d = D.OneHotCategoricalStraightThrough(probs=p)
    assert d.has_rsample and isinstance(d, D.OneHotCategorical)
    x = d.rsample((2,))
    assert x.detach().sum(-1).tolist() == [1.0, 1.0] and set(x.detach().numpy().ravel()) <= {0, 1}
    (x * t([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), [-2.2, -0.2, 1.8], rtol=1e-12)   # PyTorch's
    logits = t([0.1, 0.5, -0.3]).requires_grad_()
    dl.manual_seed(0)
    x = D.OneHotCategoricalStraightThrough(logits=logits).rsample()
    (x * t([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_allclose(logits.grad.numpy(), [-0.2833, 0.0492, 0.2341], atol=1e-4)


@pytest.mark.parametrize("make, inside, outside", [
    (lambda: D.Pareto(t([1.0, 2.0]), 3.0), [1.0, 2.0], [0.99, 1.5]),  # x >= scale
    (lambda: D.GeneralizedPareto(0.0, 1.0, t([0.0, -1.0])), [0.0, 1.0], [-0.1, 1.01]),
])
def test_paretos_support_follows_their_parameters(make, inside, outside):
    # (was constraints.dependent: check raised and values were never validated)
    d = make()
    assert not D.constraints.is_dependent(d.support)
    assert d.support.check(t(inside)).tolist() == [True, True]
    assert d.support.check(t(outside)).tolist() == [False, False]
    dl.manual_seed(0)
    assert bool(dl.all(d.support.check(d.sample((200,)))))
    assert D.constraints.is_dependent(type(d).support)  # on the class, as PyTorch's


def test_uniforms_support_is_the_interval_of_its_parameters():
    # (was constraints.dependent on instances too: support.check raised)
    low, high = t([0.0, -2.0]), t([4.0, 1.0])
    d = D.Uniform(low, high, validate_args=True)
    support = d.support
    assert isinstance(support, type(D.constraints.interval(0.0, 1.0)))
    assert support.lower_bound is d.low and support.upper_bound is d.high
    assert not D.constraints.is_dependent(support)
    values = t([[-0.1, -2.0], [0.0, 1.0], [4.0, 1.1], [2.0, 0.0]])
    assert support.check(values).tolist() == [[False, True], [True, True], [True, False],
                                              [True, True]]
    # on the class: a dependent constraint, as PyTorch's dependent_property
    assert D.constraints.is_dependent(D.Uniform.support)
    # samples lie inside; validation checks against it (closed, as PyTorch's interval)
    dl.manual_seed(0)
    assert bool(dl.all(support.check(d.sample((100,)))))
    assert d.log_prob(t([4.0, 1.0])).tolist() == [-math.inf, -math.inf]  # (density: [low, high))
    with pytest.raises(ValueError, match=r"within the support \(Interval\(lower_bound="):
        d.log_prob(t([4.5, 0.0]))
    # the support maps onto the interval as any interval does: sigmoid, then affine
    y = D.biject_to(support)(t([[-30.0, 0.0], [30.0, 5.0]]))
    assert bool(dl.all(support.check(y)))
    sigmoid_5 = 1 / (1 + math.exp(-5))
    np.testing.assert_allclose(y.numpy()[:, 1], [-2.0 + 3.0 * 0.5, -2.0 + 3.0 * sigmoid_5])
