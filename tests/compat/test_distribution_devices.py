"""Every distribution and transform that difflab.distributions exports works on the GPU.

A VAE's or an RL policy's ``MultivariateNormal(mu.cuda(), cov.cuda())`` must sample,
score and transform on the device of its parameters: nothing made inside the
distribution (an identity matrix, a mask, an offset, a draw) may land on the CPU.
Each exported class runs on the ``cuda`` fixture (a GPU, or the CuPy stand-in) and
on the CPU with the same parameters: every result must be on the device and equal
the CPU's (densities, entropies, moments, gradients to 1e-12 in float64; samples
from the same seed, since difflab draws on the host and copies the draw to the
device).  Numbers next to device tensors (``StudentT(df.cuda())``'s loc and scale,
``d.cdf(0.5)``) and constraints with tensor bounds follow the tensors' device.

The tables below are checked against ``difflab.distributions.__all__`` and
``difflab.distributions.transforms.__all__``: a class exported without a row here
fails ``test_every_export_has_a_row``, so a new distribution is tested by adding it.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import difflab as dl
from difflab import distributions as D
from difflab.distributions import transforms as T

F64 = dl.float64

#: The exported names that are not something to sample or transform (each with why).
NOT_CLASSES = {
    "Distribution": "the abstract base: no density of its own",
    "ExponentialFamily": "an abstract base: no density of its own",
    "Transform": "the abstract base: no map of its own",
    "biject_to": "a registry (functions), not a distribution",
    "transform_to": "a registry (functions), not a distribution",
    "constraints": "a module",
    "transforms": "a module",
    "kl_divergence": "a function",
    "register_kl": "a function",
}

COV = [[2.0, 0.5], [0.5, 1.0]]

#: name -> a function of ``t`` (which makes a float64 tensor on the device under test)
#: that builds the distribution.
DISTRIBUTIONS = {
    "Bernoulli": lambda t: D.Bernoulli(t([0.3, 0.8])),
    "Beta": lambda t: D.Beta(t([2.0, 0.7]), t([3.0, 1.5])),
    "Binomial": lambda t: D.Binomial(t([4.0, 6.0]), t([0.3, 0.6])),
    "Categorical": lambda t: D.Categorical(t([0.2, 0.3, 0.5])),
    "Cauchy": lambda t: D.Cauchy(t([0.5, -1.0]), t([1.5, 0.3])),
    "Chi2": lambda t: D.Chi2(t([2.0, 5.0])),
    "ContinuousBernoulli": lambda t: D.ContinuousBernoulli(t([0.3, 0.8])),
    "Dirichlet": lambda t: D.Dirichlet(t([2.0, 0.7, 1.5])),
    "Exponential": lambda t: D.Exponential(t([2.0, 0.5])),
    "FisherSnedecor": lambda t: D.FisherSnedecor(t([3.0, 6.0]), t([5.0, 7.0])),
    "Gamma": lambda t: D.Gamma(t([2.0, 0.5]), t([1.0, 3.0])),
    "GeneralizedPareto": lambda t: D.GeneralizedPareto(t([0.0, 1.0]), t([1.0, 2.0]),
                                                       t([0.2, -0.3])),
    "Geometric": lambda t: D.Geometric(t([0.3, 0.7])),
    "Gumbel": lambda t: D.Gumbel(t([0.5, -1.0]), t([1.5, 0.3])),
    "HalfCauchy": lambda t: D.HalfCauchy(t([1.5, 0.3])),
    "HalfNormal": lambda t: D.HalfNormal(t([1.5, 0.3])),
    "Independent": lambda t: D.Independent(D.Normal(t([0.5, -1.0]), t([1.5, 0.3])), 1),
    "InverseGamma": lambda t: D.InverseGamma(t([3.0, 4.0]), t([1.0, 2.0])),
    "Kumaraswamy": lambda t: D.Kumaraswamy(t([2.0, 0.7]), t([3.0, 1.5])),
    "LKJCholesky": lambda t: D.LKJCholesky(3, t(2.0)),
    "Laplace": lambda t: D.Laplace(t([0.5, 0.0]), t([1.5, 0.2])),
    "LogNormal": lambda t: D.LogNormal(t([0.2, -0.5]), t([0.5, 1.2])),
    "LogisticNormal": lambda t: D.LogisticNormal(t([0.2, -0.5]), t([0.5, 1.2])),
    "LogitRelaxedBernoulli": lambda t: D.LogitRelaxedBernoulli(t(0.5), t([0.3, 0.8])),
    "LowRankMultivariateNormal": lambda t: D.LowRankMultivariateNormal(
        t([0.5, -1.0]), t([[1.0], [0.5]]), t([1.0, 2.0])),
    "MixtureSameFamily": lambda t: D.MixtureSameFamily(
        D.Categorical(t([0.3, 0.7])), D.Normal(t([0.5, -1.0]), t([1.5, 0.3]))),
    "Multinomial": lambda t: D.Multinomial(5, t([0.2, 0.3, 0.5])),
    "MultivariateNormal": lambda t: D.MultivariateNormal(t([0.5, -1.0]), t(COV)),
    "NegativeBinomial": lambda t: D.NegativeBinomial(t([3.0, 5.0]), t([0.3, 0.6])),
    "Normal": lambda t: D.Normal(t([0.5, -1.0]), t([1.5, 0.3])),
    "OneHotCategorical": lambda t: D.OneHotCategorical(t([0.2, 0.3, 0.5])),
    "OneHotCategoricalStraightThrough": lambda t: D.OneHotCategoricalStraightThrough(
        t([0.2, 0.3, 0.5])),
    "Pareto": lambda t: D.Pareto(t([1.0, 2.0]), t([3.0, 4.0])),
    "Poisson": lambda t: D.Poisson(t([2.0, 0.5])),
    "RelaxedBernoulli": lambda t: D.RelaxedBernoulli(t(0.5), t([0.3, 0.8])),
    "RelaxedOneHotCategorical": lambda t: D.RelaxedOneHotCategorical(t(0.5),
                                                                     t([0.2, 0.3, 0.5])),
    "StudentT": lambda t: D.StudentT(t([3.0, 5.0]), t([0.5, -1.0]), t([1.5, 0.3])),
    "TransformedDistribution": lambda t: D.TransformedDistribution(
        D.Normal(t([0.5, -1.0]), t([1.5, 0.3])),
        [T.AffineTransform(t(1.0), t(2.0)), T.ExpTransform()]),
    "Uniform": lambda t: D.Uniform(t([0.0, -2.0]), t([4.0, 1.0])),
    "VonMises": lambda t: D.VonMises(t([0.5, -1.0]), t([1.5, 4.0])),
    "Weibull": lambda t: D.Weibull(t([1.0, 2.0]), t([0.7, 1.5])),
    "Wishart": lambda t: D.Wishart(t(4.0), covariance_matrix=t(COV)),
}

#: name -> a function of ``t`` that gives (the transform, a point of its domain).
TRANSFORMS = {
    "AbsTransform": lambda t: (T.AbsTransform(), t([-0.5, 1.5])),
    "AffineTransform": lambda t: (T.AffineTransform(t([1.0, -2.0]), t([2.0, 0.5])),
                                  t([-0.5, 1.5])),
    "CatTransform": lambda t: (T.CatTransform([T.ExpTransform(), T.SigmoidTransform()],
                                              dim=0, lengths=[1, 2]),
                               t([-0.5, 1.5, 0.25])),
    "ComposeTransform": lambda t: (T.ComposeTransform([T.AffineTransform(t(1.0), t(2.0)),
                                                       T.ExpTransform()]), t([-0.5, 1.5])),
    "CorrCholeskyTransform": lambda t: (T.CorrCholeskyTransform(), t([0.5, -1.0, 2.0])),
    "CumulativeDistributionTransform": lambda t: (
        T.CumulativeDistributionTransform(D.Normal(t([0.5, -1.0]), t([1.5, 0.3]))),
        t([-0.5, 1.5])),
    "ExpTransform": lambda t: (T.ExpTransform(), t([-0.5, 1.5])),
    "IndependentTransform": lambda t: (T.IndependentTransform(T.ExpTransform(), 1),
                                       t([-0.5, 1.5])),
    "LowerCholeskyTransform": lambda t: (T.LowerCholeskyTransform(),
                                         t([[0.5, 2.0], [-1.0, 0.3]])),
    "PositiveDefiniteTransform": lambda t: (T.PositiveDefiniteTransform(),
                                            t([[0.5, 2.0], [-1.0, 0.3]])),
    "PowerTransform": lambda t: (T.PowerTransform(t(3.0)), t([0.5, 1.5])),
    "ReshapeTransform": lambda t: (T.ReshapeTransform((4,), (2, 2)),
                                   t([-0.5, 1.5, 0.25, 3.0])),
    "SigmoidTransform": lambda t: (T.SigmoidTransform(), t([-0.5, 1.5])),
    "SoftmaxTransform": lambda t: (T.SoftmaxTransform(), t([-0.5, 1.5, 0.25])),
    "SoftplusTransform": lambda t: (T.SoftplusTransform(), t([-0.5, 1.5])),
    "StackTransform": lambda t: (T.StackTransform([T.ExpTransform(), T.SigmoidTransform()],
                                                  dim=0), t([-0.5, 1.5])),
    "StickBreakingTransform": lambda t: (T.StickBreakingTransform(), t([-0.5, 1.5, 0.25])),
    "TanhTransform": lambda t: (T.TanhTransform(), t([-0.5, 1.5])),
    "identity_transform": lambda t: (T.identity_transform, t([-0.5, 1.5])),
}


def _exported(module) -> list[str]:
    return [name for name in module.__all__ if name not in NOT_CLASSES]


def test_every_export_has_a_row():
    """A distribution or transform exported without a row here is not tested on the device."""
    missing = sorted(set(_exported(D)) - set(DISTRIBUTIONS) - set(TRANSFORMS))
    assert not missing, (f"add a row for {missing} to DISTRIBUTIONS or TRANSFORMS in "
                         f"{__name__} (a small parameter set, as the others have)")
    bases = {name for name in NOT_CLASSES
             if inspect.isclass(getattr(D, name, None) or getattr(T, name, None))}
    assert bases == {"Distribution", "ExponentialFamily", "Transform"}, (
        "only the abstract bases may be left out of the tables")
    for name in _exported(T):
        assert name in TRANSFORMS, f"add a row for {name} to TRANSFORMS"


def _maker(device):
    return lambda values: dl.tensor(values, dtype=F64, device=device)


def _host(value) -> np.ndarray:
    return np.asarray(value.detach().cpu().tolist(), dtype=float)


def _same(on_device, on_cpu, device, what: str) -> None:
    """``on_device`` is on ``device`` and equals ``on_cpu`` (to 1e-12: float64 rounding)."""
    assert on_device.device == device, f"{what} is on {on_device.device}, not {device}"
    assert tuple(on_device.shape) == tuple(on_cpu.shape), what
    assert on_device.dtype == on_cpu.dtype, what
    np.testing.assert_allclose(_host(on_device), _host(on_cpu), rtol=1e-12, atol=1e-12,
                               equal_nan=True, err_msg=what)


def _both(call, what: str, device):
    """Run ``call`` on the CPU and on the device; compare, or both raise NotImplementedError."""
    try:
        expected = call("cpu")
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            call(device)
        return None
    _same(call(device), expected, device, what)
    return expected


@pytest.mark.parametrize("name", sorted(set(_exported(D)) - set(_exported(T))))
def test_distribution_on_the_device(name, cuda):
    if name not in DISTRIBUTIONS:
        pytest.fail(f"{name} is exported by difflab.distributions but has no row in "
                    f"DISTRIBUTIONS")
    build = DISTRIBUTIONS[name]
    made = {"cpu": build(_maker("cpu")), cuda: build(_maker(cuda))}

    def draw(method):
        def call(device):
            dl.manual_seed(7)
            return getattr(made[device], method)((3,))
        return call

    points = _both(draw("sample"), f"{name}.sample", cuda)
    support = made[cuda].support
    if support is not D.constraints.dependent:  # (else log_prob's validation checks it)
        inside = support.check(points.to(cuda))
        assert inside.device == cuda and bool(dl.all(inside)), f"{name}'s sample is off its support"
    if made["cpu"].has_rsample:
        _both(draw("rsample"), f"{name}.rsample", cuda)

    at_points = {"cpu": points, cuda: points.to(cuda)}
    _both(lambda d: made[d].log_prob(at_points[d]), f"{name}.log_prob", cuda)
    for moment in ("mean", "variance", "mode", "stddev"):
        _both(lambda d, m=moment: getattr(made[d], m), f"{name}.{moment}", cuda)
    _both(lambda d: made[d].entropy(), f"{name}.entropy", cuda)
    if not made["cpu"].event_shape:  # a cdf and icdf are of one-number draws
        _both(lambda d: made[d].cdf(at_points[d]), f"{name}.cdf", cuda)
        quantiles = dl.full(tuple(made["cpu"].batch_shape), 0.3, dtype=F64)
        at_quantiles = {"cpu": quantiles, cuda: quantiles.to(cuda)}
        _both(lambda d: made[d].icdf(at_quantiles[d]), f"{name}.icdf", cuda)
        _at_a_number(made, points, name, cuda)
    if made["cpu"].has_enumerate_support:
        _both(lambda d: made[d].enumerate_support(), f"{name}.enumerate_support", cuda)

    def expanded(device):  # (the batch grown by a leading 4, drawn from the same seed)
        dl.manual_seed(7)
        return made[device].expand((4,) + tuple(made[device].batch_shape)).sample()

    _both(expanded, f"{name}.expand(...).sample", cuda)


@pytest.mark.parametrize("name", sorted(DISTRIBUTIONS))
def test_gradients_on_the_device(name, cuda):
    """Backward through log_prob (and rsample's path): each parameter's gradient is on its
    device and equals the CPU's."""
    grads = {}
    for device in ("cpu", cuda):
        leaves = []

        def leaf(values, device=device, leaves=leaves):
            leaves.append(dl.tensor(values, dtype=F64, device=device, requires_grad=True))
            return leaves[-1]

        d = DISTRIBUTIONS[name](leaf)
        dl.manual_seed(7)
        loss = d.log_prob(d.sample((3,))).sum()
        if d.has_rsample:
            try:
                loss = loss + d.rsample((3,)).sum()
            except NotImplementedError:  # (Wishart: no path through its df)
                pass
        loss.backward()
        grads[device] = [x.grad for x in leaves]
    assert any(g is not None for g in grads["cpu"]), f"no gradient reached {name}'s parameters"
    for on_device, on_cpu in zip(grads[cuda], grads["cpu"]):
        assert (on_device is None) == (on_cpu is None)
        if on_cpu is not None:
            _same(on_device, on_cpu, cuda, f"{name}'s parameter gradient")


def _at_a_number(made, points, name, device) -> None:
    """log_prob, cdf and icdf at a plain number are on the device too (``d.cdf(0.5)``)."""
    for number in points.flatten().tolist():  # (one inside every batch member's support)
        try:
            if bool(dl.all(dl.isfinite(made["cpu"].log_prob(number)))):
                break
        except ValueError:
            continue
    else:
        pytest.fail(f"no draw of {name} lies in the support of all its batch")
    for method, value in (("log_prob", number), ("cdf", number), ("icdf", 0.3)):
        _both(lambda d, m=method, v=value: getattr(made[d], m)(v),
              f"{name}.{method} at the number {value}", device)


#: Numbers given next to a tensor on the device become parameters on that device (as in
#: PyTorch's ``broadcast_all``): ``StudentT(df.cuda())`` has loc 0 and scale 1 there.
WITH_NUMBERS = {
    "Normal(0.0, scale)": lambda t: D.Normal(0.0, t([1.5, 0.3])),
    "StudentT(df)": lambda t: D.StudentT(t([3.0, 5.0])),
    "Uniform(0.0, high)": lambda t: D.Uniform(0.0, t([4.0, 1.0])),
    "Binomial(5, probs)": lambda t: D.Binomial(5, t([0.3, 0.6])),
    "NegativeBinomial(3, probs)": lambda t: D.NegativeBinomial(3, t([0.3, 0.6])),
    "GeneralizedPareto(0.0, 1.0, c)": lambda t: D.GeneralizedPareto(0.0, 1.0, t([0.2, -0.3])),
    "RelaxedBernoulli(0.5, probs)": lambda t: D.RelaxedBernoulli(0.5, t([0.3, 0.8])),
    "RelaxedOneHotCategorical(0.5, probs)": lambda t: D.RelaxedOneHotCategorical(
        0.5, t([0.2, 0.3, 0.5])),
    "MultivariateNormal(list, cov)": lambda t: D.MultivariateNormal([0.5, -1.0], t(COV)),
    "LowRankMultivariateNormal(loc, lists)": lambda t: D.LowRankMultivariateNormal(
        t([0.5, -1.0]), [[1.0], [0.5]], [1.0, 2.0]),
    "Wishart(4.0, cov)": lambda t: D.Wishart(4.0, covariance_matrix=t(COV)),
}


@pytest.mark.parametrize("name", WITH_NUMBERS)
def test_numbers_join_the_tensors_device(name, cuda):
    made = {"cpu": WITH_NUMBERS[name](_maker("cpu")), cuda: WITH_NUMBERS[name](_maker(cuda))}

    def call(device):
        dl.manual_seed(7)
        return made[device].sample((3,))

    points = _both(call, f"{name}.sample", cuda)
    at_points = {"cpu": points, cuda: points.to(cuda)}
    _both(lambda d: made[d].log_prob(at_points[d]), f"{name}.log_prob", cuda)


@pytest.mark.parametrize("name", _exported(T))
def test_transform_on_the_device(name, cuda):
    if name not in TRANSFORMS:
        pytest.fail(f"{name} is exported by difflab.distributions.transforms but has no row "
                    f"in TRANSFORMS")
    made = {"cpu": TRANSFORMS[name](_maker("cpu")), cuda: TRANSFORMS[name](_maker(cuda))}
    y = _both(lambda d: made[d][0](made[d][1]), f"{name} forward", cuda)
    at_y = {"cpu": y, cuda: y.to(cuda)}
    _both(lambda d: made[d][0].inv(at_y[d]), f"{name} inverse", cuda)
    _both(lambda d: made[d][0].log_abs_det_jacobian(made[d][1], at_y[d]),
          f"{name} log_abs_det_jacobian", cuda)


#: Constraints whose bounds are tensors on the device (one bound per batch member).
BOUNDED = {
    "interval": lambda t: D.constraints.interval(t([0.0, -2.0]), t([4.0, 1.0])),
    "greater_than": lambda t: D.constraints.greater_than(t([0.0, -2.0])),
    "less_than": lambda t: D.constraints.less_than(t([4.0, 1.0])),
}


@pytest.mark.parametrize("name", BOUNDED)
@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
def test_tensor_bounds_on_the_device(name, registry, cuda):
    """biject_to(interval(low, high)) with tensor bounds: the map onto them, on their device
    (bounds that are tensors once made the registry ask a tensor for one bool)."""
    made = {}
    for device in ("cpu", cuda):
        constraint = BOUNDED[name](_maker(device))
        made[device] = constraint, getattr(D, registry)(constraint)
    x = {"cpu": dl.tensor([-0.5, 1.5], dtype=F64), cuda: dl.tensor([-0.5, 1.5], dtype=F64,
                                                                   device=cuda)}
    y = _both(lambda d: made[d][1](x[d]), f"{registry}({name}) forward", cuda)
    assert bool(dl.all(made[cuda][0].check(y.to(cuda))))
    _both(lambda d: made[d][1].inv(made[d][1](x[d])), f"{registry}({name}) inverse", cuda)
    _both(lambda d: made[d][1].log_abs_det_jacobian(x[d], made[d][1](x[d])),
          f"{registry}({name}) log_abs_det_jacobian", cuda)


def test_numbers_join_the_tensors_dtype_too():
    """A number next to a float64 parameter is made in float64 (PyTorch's broadcast_all),
    not in the default float32: 0.1 as a float32 is off by 1.5e-9, which a float64
    log_prob would carry (the GPU and the CPU then round that float32 work differently)."""
    scale = dl.tensor([1.0, 2.0], dtype=F64)
    d = D.Normal(0.1, scale)
    assert d.loc.dtype == d.scale.dtype == F64
    got = d.log_prob(0.3).numpy()
    want = -0.5 * ((0.3 - 0.1) / np.array([1.0, 2.0])) ** 2 - np.log([1.0, 2.0]) \
        - 0.5 * np.log(2 * np.pi)
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=1e-15)
    assert D.GeneralizedPareto(0.0, 1.0, dl.tensor([0.3], dtype=F64)).loc.dtype == F64
    assert D.Normal(0.0, 1.0).loc.dtype == dl.get_default_dtype()  # (no tensor: the default)
