"""difflab.distributions.transforms and TransformedDistribution (torch.distributions.transforms).

Each transform: the inverse undoes the forward map; log_abs_det_jacobian equals the log
of |det J| with J from difflab's reverse mode (autograd.functional.jacobian) and from
finite differences.  TransformedDistribution: its density integrates to 1, rsample is
reparameterized (gradcheck), the tanh-squashed normal matches its closed form, LogNormal
agrees with Normal pushed through exp; bad input gets a clear error.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.integrate as integrate
import scipy.stats as st

import difflab as dl
from difflab import distributions as D
from difflab import finite_differences as fd
from difflab.distributions import transforms as T

F64 = dl.float64


def t(values):
    return dl.tensor(values, dtype=F64)


#: name -> (transform factory, a point in its domain)
CASES = {
    "Exp": (lambda: T.ExpTransform(), [-1.3, 0.2, 2.1]),
    "Power": (lambda: T.PowerTransform(2.5), [0.3, 1.2, 2.0]),
    "Power negative": (lambda: T.PowerTransform(t(-1.5)), [0.3, 1.2, 2.0]),
    "Sigmoid": (lambda: T.SigmoidTransform(), [-2.0, 0.3, 4.0]),
    "Tanh": (lambda: T.TanhTransform(), [-1.5, 0.1, 2.0]),
    "Softplus": (lambda: T.SoftplusTransform(), [-2.0, 0.3, 3.0]),
    "Affine": (lambda: T.AffineTransform(0.5, -2.0), [-1.0, 0.4, 3.0]),
    "Affine tensor": (lambda: T.AffineTransform(t([0.1, 0.2, 0.3]), t([1.5, -0.5, 3.0])),
                      [-1.0, 0.4, 3.0]),
    "Affine event": (lambda: T.AffineTransform(1.0, t([2.0, -3.0, 0.5]), event_dim=1),
                     [-1.0, 0.4, 3.0]),
    "CDF": (lambda: T.CumulativeDistributionTransform(D.Normal(t(0.3), t(1.4))),
            [-1.0, 0.4, 2.0]),
    "StickBreaking": (lambda: T.StickBreakingTransform(), [0.3, -1.2, 0.5]),
    "Compose": (lambda: T.ComposeTransform([T.AffineTransform(0.2, 1.5), T.TanhTransform()]),
                [-0.7, 0.1, 0.9]),
    "Compose exp-power": (lambda: T.ComposeTransform([T.ExpTransform(),
                                                      T.PowerTransform(0.5)]),
                          [-0.7, 0.1, 0.9]),
    "Compose with vector part": (lambda: T.ComposeTransform([T.AffineTransform(0.0, 2.0),
                                                             T.StickBreakingTransform()]),
                                 [0.3, -1.2, 0.5]),
    "Independent": (lambda: T.IndependentTransform(T.ExpTransform(), 1), [-1.3, 0.2, 2.1]),
    "Inverse of exp": (lambda: T.ExpTransform().inv, [0.5, 1.2, 3.0]),
    "Inverse of sigmoid": (lambda: T.SigmoidTransform().inv, [0.1, 0.5, 0.8]),
    "identity": (lambda: T.identity_transform, [-1.3, 0.2, 2.1]),
}


def square_part(transform, x):
    """The map whose Jacobian is square: stick breaking's last output is fixed by the rest."""
    y = transform(x)
    return y[..., :x.shape[-1]]


def total_log_det(transform, x):
    value = transform.log_abs_det_jacobian(x, transform(x))
    return float(value.sum().item())


@pytest.mark.parametrize("name", CASES)
def test_inverse_undoes_the_forward_map(name):
    make, point = CASES[name]
    transform, x = make(), t(point)
    np.testing.assert_allclose(transform.inv(transform(x)).numpy(), x.numpy(), rtol=1e-10,
                               atol=1e-12)
    assert transform.inv.inv is transform
    assert tuple(transform.forward_shape(x.shape)) == tuple(transform(x).shape)
    assert tuple(transform.inverse_shape(transform(x).shape)) == tuple(x.shape)


@pytest.mark.parametrize("name", CASES)
def test_log_det_is_the_log_of_the_autograd_jacobian_determinant(name):
    make, point = CASES[name]
    transform, x = make(), t(point)
    jacobian = dl.autograd.functional.jacobian(lambda v: square_part(transform, v), x)
    sign, log_det = np.linalg.slogdet(jacobian.numpy())
    assert sign != 0
    assert total_log_det(transform, x) == pytest.approx(log_det, rel=1e-10, abs=1e-10)
    if transform.event_dim == 0:  # elementwise: the diagonal, entry by entry
        per_element = transform.log_abs_det_jacobian(x, transform(x)).numpy()
        np.testing.assert_allclose(per_element, np.log(np.abs(np.diag(jacobian.numpy()))),
                                   rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", CASES)
def test_log_det_against_finite_differences(name):
    make, point = CASES[name]
    transform = make()
    jacobian = fd.jacobian(lambda v: square_part(transform, t(v)).numpy(), np.array(point))
    _, log_det = np.linalg.slogdet(jacobian)
    assert total_log_det(transform, t(point)) == pytest.approx(log_det, rel=1e-6, abs=1e-6)


def test_log_dets_stay_finite_where_the_naive_formula_rounds_to_zero():
    x = t([-40.0, 40.0])
    for transform in (T.TanhTransform(), T.SigmoidTransform()):
        value = transform.log_abs_det_jacobian(x, transform(x))
        assert np.all(np.isfinite(value.numpy())), transform
    assert T.TanhTransform().log_abs_det_jacobian(x, T.TanhTransform()(x))[1].item() \
        == pytest.approx(2 * (math.log(2) - 40.0), rel=1e-12)


def test_the_cache_returns_the_input_where_the_inverse_would_be_infinite():
    x = t([25.0])
    plain, cached = T.TanhTransform(), T.TanhTransform(cache_size=1)
    with np.errstate(divide="ignore"):
        assert not np.isfinite(plain.inv(plain(x)).item())
    assert cached.inv(cached(x)) is x
    assert T.TanhTransform().with_cache(1)._cache_size == 1
    composed = T.ComposeTransform([T.AffineTransform(0.0, 2.0), T.TanhTransform()],
                                  cache_size=1)
    assert composed.inv(composed(x)) is x
    with pytest.raises(ValueError, match="cache_size"):
        T.ExpTransform(cache_size=2)


def test_sign_domains_and_event_dims():
    assert T.ExpTransform().sign == 1 and T.AffineTransform(0.0, -3.0).sign == -1
    assert T.PowerTransform(-2.0).sign == -1
    assert T.ComposeTransform([T.AffineTransform(0.0, -1.0), T.ExpTransform()]).sign == -1
    assert T.StickBreakingTransform().event_dim == 1
    composed = T.ComposeTransform([T.ExpTransform(), T.StickBreakingTransform()])
    assert composed.domain.event_dim == 1 and composed.codomain.event_dim == 1
    assert T.ExpTransform().inv.domain is D.constraints.positive
    with pytest.raises(NotImplementedError, match="monotone"):
        _ = T.StickBreakingTransform().sign
    with pytest.raises(NotImplementedError, match="not a bijection"):
        T.AbsTransform().log_abs_det_jacobian(t([1.0]), t([1.0]))


def test_the_non_bijective_maps():
    assert T.AbsTransform()(t([-2.0])).item() == 2.0 and not T.AbsTransform().bijective
    y = T.SoftmaxTransform()(t([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(T.SoftmaxTransform()(T.SoftmaxTransform().inv(y)).numpy(),
                               y.numpy())
    assert bool(D.constraints.simplex.check(y))


# -- TransformedDistribution -------------------------------------------------------------

def density(d, y):
    return float(d.log_prob(t(y)).exp().item())


@pytest.mark.parametrize("name,make,low,high", [
    ("lognormal", lambda: D.TransformedDistribution(D.Normal(t(0.2), t(0.7)),
                                                    [T.ExpTransform()]), 0, np.inf),
    ("tanh normal", lambda: D.TransformedDistribution(D.Normal(t(0.5), t(1.3)),
                                                      T.TanhTransform()), -1, 1),
    ("decreasing", lambda: D.TransformedDistribution(
        D.Gamma(t(2.0), t(1.5)), [T.PowerTransform(-1.0), T.AffineTransform(1.0, -2.0)]),
     -np.inf, 1),
    ("logit normal", lambda: D.TransformedDistribution(D.Normal(t(-0.3), t(0.8)),
                                                       [T.SigmoidTransform()]), 0, 1),
])
def test_the_density_integrates_to_one(name, make, low, high):
    d = make()
    total, _ = integrate.quad(lambda y: density(d, y), low, high, limit=200)
    assert total == pytest.approx(1.0, abs=1e-6)


def test_it_matches_lognormal_and_scipy():
    pushed = D.TransformedDistribution(D.Normal(t([0.2, -0.5]), t([0.5, 1.2])),
                                       [T.ExpTransform()])
    direct = D.LogNormal(t([0.2, -0.5]), t([0.5, 1.2]))
    y = t([1.3, 0.4])
    np.testing.assert_allclose(pushed.log_prob(y).numpy(), direct.log_prob(y).numpy(),
                               rtol=1e-12)
    np.testing.assert_allclose(pushed.cdf(y).numpy(), direct.cdf(y).numpy(), rtol=1e-12)
    np.testing.assert_allclose(pushed.icdf(t([0.3, 0.9])).numpy(),
                               direct.icdf(t([0.3, 0.9])).numpy(), rtol=1e-12)
    affine = D.TransformedDistribution(D.Normal(t(0.0), t(1.0)), T.AffineTransform(3.0, -2.0))
    assert affine.log_prob(t(2.0)).item() == pytest.approx(st.norm(3, 2).logpdf(2.0), 1e-12)
    # a decreasing map flips the cdf: P(3 - 2X <= 2) = P(X >= 1/2)
    assert affine.cdf(t(2.0)).item() == pytest.approx(st.norm(3, 2).cdf(2.0), 1e-12)
    assert affine.icdf(affine.cdf(t(2.0))).item() == pytest.approx(2.0, 1e-12)


def test_the_tanh_squashed_normal_has_the_closed_form_density():
    mu, sigma = t([0.3, -1.0]), t([0.8, 0.5])
    d = D.TransformedDistribution(D.Normal(mu, sigma), [T.TanhTransform()])
    a = t([0.5, -0.9])
    u = np.arctanh(a.numpy())
    closed = st.norm(mu.numpy(), sigma.numpy()).logpdf(u) - np.log(1 - a.numpy() ** 2)
    np.testing.assert_allclose(d.log_prob(a).numpy(), closed, rtol=1e-10)
    # SAC's form: log π(a) = log N(u) - Σ 2(log 2 - u - softplus(-2u)), on the pre-tanh u
    dl.manual_seed(0)
    u = D.Normal(mu, sigma).rsample((4,))
    a = dl.tanh(u)
    sac = D.Normal(mu, sigma).log_prob(u) - 2 * (math.log(2) - u - dl.nn.functional.softplus(
        -2 * u))
    np.testing.assert_allclose(d.log_prob(a).numpy(), sac.numpy(), rtol=1e-6)


def test_a_cached_tanh_policy_scores_its_own_saturated_actions():
    cached = D.TransformedDistribution(D.Normal(t(25.0), t(0.1)), [T.TanhTransform(cache_size=1)])
    plain = D.TransformedDistribution(D.Normal(t(25.0), t(0.1)), [T.TanhTransform()],
                                      validate_args=False)
    dl.manual_seed(1)
    action = cached.rsample()
    assert action.item() == 1.0                                   # tanh(25) rounds to 1
    u = cached.transforms[0].inv(action)
    expected = D.Normal(t(25.0), t(0.1)).log_prob(u) - 2 * (
        math.log(2) - u - dl.nn.functional.softplus(-2 * u))
    assert cached.log_prob(action).item() == pytest.approx(expected.item(), rel=1e-12)
    with np.errstate(divide="ignore", invalid="ignore"):
        assert not np.isfinite(plain.log_prob(action).item())


def test_rsample_is_reparameterized_gradcheck():
    def draw(loc, scale):
        dl.manual_seed(3)
        d = D.TransformedDistribution(D.Normal(loc, scale),
                                      [T.AffineTransform(0.5, 2.0), T.TanhTransform()])
        return d.rsample((5,))

    loc = t([0.1, -0.4]).requires_grad_()
    scale = t([0.7, 1.1]).requires_grad_()
    assert dl.autograd.gradcheck(draw, (loc, scale))
    d = D.TransformedDistribution(D.Normal(loc, scale), [T.ExpTransform()])
    assert d.has_rsample and not d.sample((3,)).requires_grad
    assert not D.TransformedDistribution(D.Gamma(t(2.0), t(1.0)),
                                         [T.ExpTransform()]).has_rsample


def test_log_prob_is_differentiable_gradcheck():
    def log_prob(loc, scale):
        d = D.TransformedDistribution(D.Normal(loc, scale), [T.SigmoidTransform()])
        return d.log_prob(t([0.2, 0.7]))

    assert dl.autograd.gradcheck(log_prob, (t([0.1, -0.4]).requires_grad_(),
                                            t([0.7, 1.1]).requires_grad_()))


def test_shapes_events_and_samples():
    base = D.Normal(dl.zeros(4, 3, dtype=F64), 1.0)
    simplex = D.TransformedDistribution(base, [T.StickBreakingTransform()])
    assert simplex.batch_shape == (4,) and simplex.event_shape == (4,)
    draws = simplex.sample((2,))
    assert tuple(draws.shape) == (2, 4, 4)
    assert bool(dl.all(D.constraints.simplex.check(draws)))
    assert tuple(simplex.log_prob(draws).shape) == (2, 4)
    # the log-density of the simplex: by the change of variables on the first K-1 coordinates
    x = simplex.transforms[0].inv(draws)
    expected = base.log_prob(x).sum(-1) - T.StickBreakingTransform().log_abs_det_jacobian(
        x, draws)
    np.testing.assert_allclose(simplex.log_prob(draws).numpy(), expected.numpy(), rtol=1e-10)
    assert simplex.expand((5, 4)).batch_shape == (5, 4)
    broadcast = D.TransformedDistribution(D.Normal(t(0.0), t(1.0)),
                                          [T.AffineTransform(t([1.0, 2.0]), 1.0)])
    assert broadcast.batch_shape == (2,)
    assert broadcast.support is D.constraints.real


def test_bad_input_gets_a_clear_error():
    normal = D.Normal(t(0.0), t(1.0))
    with pytest.raises(TypeError, match="base_distribution must be a Distribution"):
        D.TransformedDistribution("normal", [T.ExpTransform()])
    with pytest.raises(TypeError, match="part 1 must be a Transform"):
        D.TransformedDistribution(normal, [T.ExpTransform(), dl.exp])
    with pytest.raises(TypeError, match="a Transform or a list"):
        D.TransformedDistribution(normal, dl.exp)
    with pytest.raises(ValueError, match="events of 1 dimension"):
        D.TransformedDistribution(normal, [T.StickBreakingTransform()])
    with pytest.raises(NotImplementedError, match="monotone maps of numbers"):
        D.TransformedDistribution(D.Normal(dl.zeros(3, dtype=F64), 1.0),
                                  [T.StickBreakingTransform()]).cdf(t([0.2, 0.3, 0.5]))
    lognormal = D.TransformedDistribution(normal, [T.ExpTransform()])
    with pytest.raises(ValueError, match="within the support"):
        lognormal.log_prob(t(-1.0))
    with pytest.raises(ValueError, match="exponent must not be 0"):
        T.PowerTransform(0.0)
    with pytest.raises(ValueError, match="event_dim"):
        T.AffineTransform(0.0, 1.0, event_dim=-1)


# -- biject_to / transform_to ------------------------------------------------------------

@pytest.mark.parametrize("constraint", [
    D.constraints.real, D.constraints.positive, D.constraints.nonnegative,
    D.constraints.greater_than(2.0), D.constraints.unit_interval,
    D.constraints.interval(-1.0, 3.0), D.constraints.simplex, D.constraints.real_vector,
    D.constraints.independent(D.constraints.positive, 1),
])
def test_biject_to_and_transform_to_land_in_the_constraint(constraint):
    u = t([-1.5, 0.2, 2.0])
    for registry in (D.biject_to, D.transform_to):
        transform = registry(constraint)
        y = transform(u)
        assert bool(dl.all(constraint.check(y))), (registry.name, constraint)
    bijection = D.biject_to(constraint)
    np.testing.assert_allclose(bijection.inv(bijection(u)).numpy(), u.numpy(), rtol=1e-10)


def test_transform_to_lower_cholesky_optimizes_a_scale_tril_freely():
    transform = D.transform_to(D.constraints.lower_cholesky)
    x = t([[0.3, 9.0, 9.0], [-1.2, -0.4, 9.0], [0.5, 2.0, 1.1]])
    scale_tril = transform(x)
    assert bool(D.constraints.lower_cholesky.check(scale_tril))
    np.testing.assert_allclose(np.diag(scale_tril.numpy()), np.exp([0.3, -0.4, 1.1]))
    np.testing.assert_allclose(transform.inv(scale_tril).numpy(), np.tril(x.numpy()))
    x.requires_grad_()
    d = D.MultivariateNormal(dl.zeros(3, dtype=F64), scale_tril=transform(x))
    d.log_prob(t([0.1, 0.2, -0.3])).backward()
    assert np.all(np.isfinite(x.grad.numpy())) and np.all(np.triu(x.grad.numpy(), 1) == 0)


def test_the_registry_errors_and_extends():
    with pytest.raises(NotImplementedError, match="discrete"):
        D.biject_to(D.constraints.boolean)
    with pytest.raises(TypeError, match="takes a constraint"):
        D.transform_to("positive")
    with pytest.raises(NotImplementedError, match="register"):
        D.biject_to(D.constraints.lower_cholesky)
    mine = D.constraint_registry.ConstraintRegistry("mine")
    mine.register(D.constraints.positive, lambda c: T.SoftplusTransform())
    assert isinstance(mine(D.constraints.greater_than(0.0)), T.SoftplusTransform)


def test_transforms_compare_as_the_same_map():
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.TanhTransform()
    assert T.AffineTransform(1.0, 2.0) == T.AffineTransform(1.0, 2.0)
    assert T.AffineTransform(1.0, 2.0) != T.AffineTransform(1.0, 3.0)
    assert T.AffineTransform(t([1.0, 2.0]), 2.0) == T.AffineTransform(t([1.0, 2.0]), 2.0)
    assert T.AffineTransform(0.0, 1.0) != T.AffineTransform(0.0, 1.0, event_dim=1)
    assert T.ComposeTransform([T.ExpTransform()]) == T.ComposeTransform([T.ExpTransform()])
    assert T.ExpTransform().inv == T.ExpTransform().inv != T.ExpTransform()
    assert T.PowerTransform(2.0) != T.PowerTransform(3.0)

    class Mine(T.Transform):  # a user's transform: equal to itself only, unless it says so
        pass

    assert Mine() != Mine()


def test_kl_between_transformed_distributions_is_the_bases_kl():
    p = D.TransformedDistribution(D.Normal(t(0.2), t(0.8)), [T.TanhTransform()])
    q = D.TransformedDistribution(D.Normal(t(-0.5), t(1.3)), [T.TanhTransform()])

    def integrand(y):
        return density(p, y) * (p.log_prob(t(y)).item() - q.log_prob(t(y)).item())

    numeric, _ = integrate.quad(integrand, -1 + 1e-12, 1 - 1e-12, limit=200)
    assert D.kl_divergence(p, q).item() == pytest.approx(numeric, rel=1e-6)
    other = D.TransformedDistribution(D.Normal(t(-0.5), t(1.3)), [T.SigmoidTransform()])
    with pytest.raises(NotImplementedError, match="same transforms"):
        D.kl_divergence(p, other)


def test_an_elementwise_map_of_a_vector_distribution_sums_its_log_det_over_the_event():
    mvn = D.MultivariateNormal(t([0.1, -0.2]), covariance_matrix=t([[1.0, 0.3], [0.3, 0.5]]))
    d = D.TransformedDistribution(mvn, [T.ExpTransform()])
    assert d.batch_shape == () and d.event_shape == (2,)
    y = t([[1.5, 0.7], [0.2, 2.0]])
    expected = mvn.log_prob(dl.log(y)) - dl.log(y).sum(-1)
    np.testing.assert_allclose(d.log_prob(y).numpy(), expected.numpy(), rtol=1e-12)
    assert tuple(d.rsample((3,)).shape) == (3, 2)


def test_reshape_moves_events_between_shapes():
    reshape = T.ReshapeTransform((2, 3), (6,))
    x = dl.randn(4, 2, 3, dtype=F64)
    assert tuple(reshape(x).shape) == (4, 6)
    np.testing.assert_array_equal(reshape.inv(reshape(x)).numpy(), x.numpy())
    assert np.all(reshape.log_abs_det_jacobian(x, reshape(x)).numpy() == 0)
    base = D.Normal(dl.zeros(5, 2, 3, dtype=F64), 1.0)
    d = D.TransformedDistribution(base, [reshape, T.ExpTransform()])
    assert d.batch_shape == (5,) and d.event_shape == (6,)
    y = d.sample((2,))
    x = dl.log(y).reshape(2, 5, 2, 3)
    expected = base.log_prob(x).sum((-1, -2)) - dl.log(y).sum(-1)
    np.testing.assert_allclose(d.log_prob(y).numpy(), expected.numpy(), rtol=1e-12)
    assert reshape == T.ReshapeTransform((2, 3), (6,)) != T.ReshapeTransform((3, 2), (6,))
    with pytest.raises(ValueError, match="as many elements"):
        T.ReshapeTransform((2, 3), (5,))
    with pytest.raises(ValueError, match="rightmost dimensions are \\(2, 3\\)"):
        reshape(dl.zeros(3, 2))


# -- the matrix transforms and the transforms of pieces (numbers from PyTorch 2.13) -------

def strict_lower(matrix):
    rows, cols = np.tril_indices(matrix.shape[-1], -1)
    return matrix[..., rows, cols]


@pytest.mark.parametrize("point, expected, log_det", [
    ([0.5, -1.0, 2.0],
     [[1.0, 0.0, 0.0], [0.46211715726000974, 0.8868188839700739, 0.0],
      [-0.7615941559557649, 0.6247421931979867, 0.17225427034531132]], -4.191577000081366),
    ([0.1, 0.2, -0.3, 0.4, -0.5, 0.6],
     [[1.0, 0.0, 0.0, 0.0], [0.09966799462495582, 0.9950207489532265, 0.0, 0.0],
      [0.197375320224904, -0.285581910053322, 0.9378091253642251, 0.0],
      [0.3799489622552249, -0.4274618141190127, 0.4405493194057666, 0.6919765030131992]],
     -1.1706971689975298),
])
def test_corr_cholesky_transform_matches_pytorch(point, expected, log_det):
    transform, x = T.CorrCholeskyTransform(), t(point)
    y = transform(x)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(transform.log_abs_det_jacobian(x, y).item(), log_det,
                               rtol=1e-12)
    np.testing.assert_allclose(transform.inv(y).numpy(), point, rtol=1e-10)
    assert bool(D.constraints.corr_cholesky.check(y))
    # the log-det is the log |det| of the square Jacobian of x onto L's strict lower triangle
    jac = dl.autograd.functional.jacobian(lambda v: strict_lower(transform(v)), x).numpy()
    np.testing.assert_allclose(np.linalg.slogdet(jac)[1], log_det, rtol=1e-10)
    assert dl.autograd.gradcheck(lambda v: transform.log_abs_det_jacobian(v, transform(v)),
                                 (x.clone().requires_grad_(),))
    assert dl.autograd.gradcheck(lambda v: transform.inv(transform(v)),
                                 (x.clone().requires_grad_(),))


def test_corr_cholesky_transform_in_dimension_one_two_and_batched():
    transform = T.CorrCholeskyTransform()
    x = t([[0.3], [-2.5]])                          # two 2x2 factors
    y = transform(x)
    np.testing.assert_allclose(y.numpy(), [[[1.0, 0.0], [0.2913126124515909, 0.9566279119002483]],
                                           [[1.0, 0.0], [-0.9866142981514303,
                                                         0.16307123192997752]]], rtol=1e-12)
    np.testing.assert_allclose(transform.log_abs_det_jacobian(x, y).numpy(),
                               [-0.08868153985188054, -3.6271363358583457], rtol=1e-12)
    np.testing.assert_allclose(transform.inv(y).numpy(), x.numpy(), rtol=1e-10)
    empty = dl.zeros(0, dtype=F64)                  # D = 1: the factor [[1]] (PyTorch fails
    one = transform(empty)                          # in its log-det there)
    assert one.tolist() == [[1.0]] and transform.log_abs_det_jacobian(empty, one).item() == 0
    assert transform.forward_shape((5, 6)) == (5, 4, 4)
    assert transform.inverse_shape((5, 4, 4)) == (5, 6)
    assert transform.event_dim == 2 and transform.bijective
    with pytest.raises(ValueError, match=r"D\(D-1\)/2 entries"):
        transform(dl.zeros(4))
    with pytest.raises(ValueError, match="square matrices"):
        transform.inv(dl.zeros(2, 3))


def test_positive_definite_transform_matches_pytorch():
    transform = D.transform_to(D.constraints.positive_definite)
    assert isinstance(transform, T.PositiveDefiniteTransform)
    assert isinstance(D.transform_to(D.constraints.positive_semidefinite),
                      T.PositiveDefiniteTransform)
    x = t([[0.3, 7.0], [-1.2, 0.5]])
    y = transform(x)
    np.testing.assert_allclose(y.numpy(), [[1.822118800390509, -1.6198305690912038],
                                           [-1.6198305690912038, 4.158281828459046]],
                               rtol=1e-12)
    assert bool(D.constraints.positive_definite.check(y))
    np.testing.assert_allclose(transform.inv(y).numpy(), [[0.3, 0.0], [-1.2, 0.5]], rtol=1e-10)
    assert not transform.bijective and transform.event_dim == 2
    with pytest.raises(NotImplementedError, match="not a bijection"):
        transform.log_abs_det_jacobian(x, y)
    with pytest.raises(NotImplementedError, match="biject_to has no transform"):
        D.biject_to(D.constraints.positive_definite)
    # a covariance optimized freely: the gradient reaches the lower triangle only
    x.requires_grad_()
    d = D.MultivariateNormal(dl.zeros(2, dtype=F64), covariance_matrix=transform(x))
    d.log_prob(t([0.4, -0.3])).backward()
    assert np.all(np.isfinite(x.grad.numpy())) and x.grad.numpy()[0, 1] == 0


def test_cat_transform_matches_pytorch():
    transform = T.CatTransform([T.ExpTransform(), T.AffineTransform(1.0, 3.0)], dim=0,
                               lengths=[2, 3])
    x = t([0.5, -1.0, 0.2, 0.3, 1.0])
    y = transform(x)
    np.testing.assert_allclose(y.numpy(), [1.6487212707001282, 0.36787944117144233, 1.6, 1.9,
                                           4.0], rtol=1e-12)
    np.testing.assert_allclose(transform.log_abs_det_jacobian(x, y).numpy(),
                               [0.5, -1.0, 1.0986122886681098, 1.0986122886681098,
                                1.0986122886681098], rtol=1e-12)
    np.testing.assert_allclose(transform.inv(y).numpy(), x.numpy(), rtol=1e-12)
    assert transform.event_dim == 0 and transform.length == 5
    batched = T.CatTransform([T.ExpTransform(), T.SigmoidTransform()], dim=0, lengths=[1, 1])
    x = t([[0.5, -1.0, 0.2], [0.3, 1.0, -0.4]])
    np.testing.assert_allclose(batched.log_abs_det_jacobian(x, batched(x)).numpy(),
                               [[0.5, -1.0, 0.2], [-1.4087104889370543, -1.6265233750364456,
                                                   -1.4260305047999053]], rtol=1e-12)
    # a vector part inside the event: the pieces' log-dets add (a block-diagonal Jacobian)
    vector = T.CatTransform([T.IndependentTransform(T.ExpTransform(), 1),
                             T.AffineTransform(0.0, 2.0, event_dim=1)], dim=-1, lengths=[2, 1])
    x = t([0.5, -1.0, 0.7])
    assert vector.event_dim == 1
    np.testing.assert_allclose(vector.log_abs_det_jacobian(x, vector(x)).item(),
                               -0.5 + math.log(2.0), rtol=1e-12)
    assert dl.autograd.gradcheck(lambda v: vector(v) + vector.log_abs_det_jacobian(v, vector(v)),
                                 (x.clone().requires_grad_(),))
    with pytest.raises(ValueError, match="size 5 along dim 0"):
        transform(dl.zeros(4))
    with pytest.raises(ValueError, match="changed its piece's length"):
        T.CatTransform([T.ExpTransform(), T.StickBreakingTransform()], dim=-1,
                       lengths=[2, 3])(t([0.5, -1.0, 0.2, 0.3, 1.0]))
    with pytest.raises(ValueError, match="one length per transform"):
        T.CatTransform([T.ExpTransform()], lengths=[1, 2])
    with pytest.raises(TypeError, match="must be a Transform"):
        T.CatTransform([T.ExpTransform(), "exp"])
    assert transform == T.CatTransform([T.ExpTransform(), T.AffineTransform(1.0, 3.0)], 0,
                                       [2, 3])
    assert transform != T.CatTransform([T.ExpTransform(), T.AffineTransform(1.0, 3.0)], 0,
                                       [3, 2])


def test_stack_transform_matches_pytorch():
    x = t([[0.5, -1.0], [0.2, 0.3], [1.0, 2.0]])
    by_rows = T.StackTransform([T.ExpTransform(), T.AffineTransform(1.0, 3.0),
                                T.SigmoidTransform()], dim=0)
    y = by_rows(x)
    np.testing.assert_allclose(y.numpy(), [[1.6487212707001282, 0.36787944117144233],
                                           [1.6, 1.9],
                                           [0.7310585786300049, 0.8807970779778823]],
                               rtol=1e-12)
    np.testing.assert_allclose(by_rows.log_abs_det_jacobian(x, y).numpy(),
                               [[0.5, -1.0], [1.0986122886681098, 1.0986122886681098],
                                [-1.6265233750364456, -2.2538560220859454]], rtol=1e-12)
    np.testing.assert_allclose(by_rows.inv(y).numpy(), x.numpy(), rtol=1e-12)
    by_columns = T.StackTransform([T.ExpTransform(), T.AffineTransform(1.0, 3.0)], dim=1)
    np.testing.assert_allclose(by_columns(x).numpy(), [[1.6487212707001282, -2.0],
                                                       [1.2214027581601699, 1.9],
                                                       [2.718281828459045, 7.0]], rtol=1e-12)
    assert by_columns.event_dim == 0
    # dim=-1 lies inside the event (event_dim 1): one log-det per row, summed
    last = T.StackTransform([T.ExpTransform(), T.AffineTransform(1.0, 3.0)], dim=-1)
    assert last.event_dim == 1
    np.testing.assert_allclose(last.log_abs_det_jacobian(x, last(x)).numpy(),
                               np.array([0.5, 0.2, 1.0]) + math.log(3.0), rtol=1e-12)
    with pytest.raises(ValueError, match="size 3 along dim 0"):
        by_rows(dl.zeros(2, 2))
    with pytest.raises(ValueError, match="out of range"):
        by_rows(dl.zeros(3)[0])


@pytest.mark.parametrize("constraint, point", [
    (D.constraints.cat([D.constraints.positive, D.constraints.interval(-1.0, 2.0)], 0,
                       [1, 2]), [-1.5, 0.2, 2.0]),
    (D.constraints.stack([D.constraints.positive, D.constraints.real,
                          D.constraints.less_than(-1.0)], 0), [-1.5, 0.2, 2.0]),
    (D.constraints.less_than(3.0), [-1.5, 0.2, 2.0]),
    (D.constraints.corr_cholesky, [-1.5, 0.2, 2.0]),
])
def test_biject_to_the_new_constraints(constraint, point):
    u = t(point)
    for registry in (D.biject_to, D.transform_to):
        y = registry(constraint)(u)
        assert bool(dl.all(constraint.check(y))), (registry.name, constraint)
    bijection = D.biject_to(constraint)
    np.testing.assert_allclose(bijection.inv(bijection(u)).numpy(), point, rtol=1e-10)


def test_the_matrix_constraints():
    c = D.constraints
    assert c.corr_cholesky.check(t([[1.0, 0.0], [0.6, 0.8]])).item()
    assert not c.corr_cholesky.check(t([[1.0, 0.0], [0.6, 0.9]])).item()
    assert c.square.check(dl.zeros(3, 2, 2)).tolist() == [True] * 3
    assert not c.square.check(dl.zeros(2, 3)).item()
    assert c.symmetric.check(t([[1.0, 2.0], [2.0, 1.0]])).item()
    assert c.positive_semidefinite.check(t([[1.0, 1.0], [1.0, 1.0]])).item()
    assert not c.positive_definite.check(t([[1.0, 1.0], [1.0, 1.0]])).item()
    # (PyTorch 2.13 says True for the third: it skips the eigenvalues when one is asymmetric)
    batch = dl.stack([dl.eye(2, dtype=F64), t([[1.0, 2.0], [0.0, 1.0]]),
                      t([[1.0, 2.0], [2.0, 1.0]])])
    assert c.positive_definite.check(batch).tolist() == [True, False, False]
    assert c.lower_triangular.check(t([[1.0, 0.0], [1.0, -1.0]])).item()
    assert c.positive_integer.check(t([0.0, 1.0, 2.5, 3.0])).tolist() == [False, True, False,
                                                                         True]
    assert c.less_than(2.0).check(t([1.0, 3.0])).tolist() == [True, False]
    assert c.stack([c.positive, c.real], -1).event_dim == 1
    assert c.cat([c.simplex, c.real], -1, [2, 1]).event_dim == 1
    with pytest.raises(TypeError, match="item 1"):
        c.cat([c.positive, 3.0])


def test_the_discrete_vector_constraints():
    c = D.constraints
    assert c.one_hot.check(t([[0.0, 1.0], [1.0, 1.0], [0.5, 0.5]])).tolist() == [True, False,
                                                                               False]
    assert c.one_hot.is_discrete and c.one_hot.event_dim == 1
    assert c.multinomial(3).check(t([[1.0, 2.0], [2.0, 2.0]])).tolist() == [True, False]
    assert c.is_dependent(c.dependent) and not c.is_dependent(c.real)
    # OneHotCategorical's support is the one-hot vectors (as PyTorch's), not the simplex
    assert D.OneHotCategorical(probs=t([0.5, 0.5])).support is c.one_hot
    with pytest.raises(ValueError, match="OneHot"):
        D.OneHotCategorical(probs=t([0.5, 0.5])).log_prob(t([0.5, 0.5]))
    with pytest.raises(NotImplementedError, match="discrete"):
        D.biject_to(c.one_hot)
