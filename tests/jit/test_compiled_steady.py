"""Later grad, jacobian, hessian calls of method="compiled" (diff.compiled_steady) vs plain.

A later call with float64 arrays of the first call's shapes replays the graph
directly: the same arrays bit for bit as the shared path (every method's checks),
the same NaN and DomainWarning at points outside f's domain, and the plain path for
anything else (other shapes, return_cost, non-arrays).
"""

import warnings

import numpy as np
import pytest

import difflab as dl
from difflab.diff import DomainWarning, compiled_steady
from difflab.diff.compiled import Compiled
from difflab.diff.interface import Differentiator


def rosenbrock(x):
    a, b = x[:-1], x[1:]
    return (100.0 * (b - a * a) ** 2 + (1.0 - a) ** 2).sum()


def chain(x):
    for _ in range(8):
        x = dl.tanh(dl.sin(x * 0.999 + 0.001) * 1.01)
    return x.sum()


def two(x, w):
    return (dl.tanh(w @ x) ** 2).sum() + (x * x).sum()


def plain(f, argnums=0):
    """The shared path of the same differentiator (no steady-state call)."""
    return Differentiator.grad(Compiled(), f, argnums)


def _calls(g, inputs):
    return [g(*a) for a in inputs]


def assert_same_results(got, want):
    """Each call's results (one array, or a tuple of them) are the same arrays bit for bit:
    the same type (an array, or a NumPy scalar for a 0-d result), dtype, shape and values."""
    for a, b in zip(got, want):
        for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
            assert type(x) is type(y) and x.dtype == y.dtype and np.shape(x) == np.shape(y)
            np.testing.assert_array_equal(x, y)


def later_calls_equal_the_plain_path(transform, plain, f, argnums, shapes, seed):
    """The first call of ``transform(f)`` takes the plain path and later calls the steady one
    (never the plain path again); all of them give the plain path's arrays, bit for bit."""
    rng = np.random.default_rng(seed)
    inputs = [[rng.uniform(-1, 1, s) for s in shapes] for _ in range(3)]
    steady = transform(f, argnums=argnums, method=Compiled())
    assert isinstance(steady, compiled_steady.SteadyGradient)
    first = steady(*inputs[0])
    taken = []
    plain_call = steady.plain
    steady.plain = lambda *a, **k: taken.append(1) or plain_call(*a, **k)
    got = [first] + _calls(steady, inputs[1:])
    assert not taken  # (the later calls took the steady path)
    assert_same_results(got, _calls(plain(f, argnums), inputs))


@pytest.mark.parametrize("f, argnums, shapes", [
    (rosenbrock, 0, [(50,)]), (chain, 0, [(16,)]), (chain, 0, [(3, 4)]),
    (two, (0, 1), [(5,), (3, 5)]), (two, 1, [(5,), (3, 5)]),
])
@pytest.mark.fastpath("7. compiled grad's later calls")
def test_later_calls_equal_the_plain_path_bit_for_bit(f, argnums, shapes):
    rng = np.random.default_rng(0)
    inputs = [[rng.uniform(-1, 1, s) for s in shapes] for _ in range(4)]
    g = dl.grad(f, method=Compiled())
    assert isinstance(g, compiled_steady.SteadyGradient)
    got, want = _calls(g, inputs), _calls(plain(f, argnums if argnums != 0 else 0), inputs)
    if argnums != 0:
        g = dl.grad(f, argnums=argnums, method=Compiled())
        got = _calls(g, inputs)
        want = _calls(plain(f, argnums), inputs)
    assert g.entry is not None
    taken = []
    plain_call, g.plain = g.plain, lambda *a, **k: taken.append(1) or plain_call(*a, **k)
    again = _calls(g, inputs)
    assert not taken  # (every later call took the steady path)
    got = got[:1] + again[1:]
    assert_same_results(got, want)


def test_a_scalar_argument_gives_a_scalar_as_on_the_plain_path():
    f = lambda x: dl.sin(x) * x  # noqa: E731
    g = dl.grad(f, method=Compiled())
    for v in (0.5, 1.5):
        x = np.array(v)
        got, want = g(x), g(x)
        assert type(got) is type(plain(f)(x)) is np.float64 and got == want == plain(f)(x)


@pytest.mark.fastpath("7. compiled grad's later calls")
def test_a_point_outside_the_domain_still_warns_and_gives_nan():
    f = lambda x: dl.log(x).sum()  # noqa: E731
    g = dl.grad(f, method=Compiled())
    g(np.array([1.0, 2.0]))
    g(np.array([1.0, 3.0]))
    assert g.entry is not None
    with pytest.warns(DomainWarning):
        got = g(np.array([-1.0, 2.0]))
    with pytest.warns(DomainWarning):
        want = plain(f)(np.array([-1.0, 2.0]))
    np.testing.assert_array_equal(got, want)
    assert np.isnan(got).all()


def test_an_infinite_gradient_with_a_finite_value_still_warns():
    f = lambda x: dl.sqrt(x).sum()  # noqa: E731
    g = dl.grad(f, method=Compiled())
    g(np.array([1.0, 2.0]))
    with pytest.warns(DomainWarning):
        got = g(np.array([0.0, 2.0]))
    with pytest.warns(DomainWarning):
        want = plain(f)(np.array([0.0, 2.0]))
    np.testing.assert_array_equal(got, want)
    assert np.isinf(got[0])


def test_a_finite_gradient_whose_sum_overflows_does_not_warn():
    f = lambda x: x.sum() * 1e308  # noqa: E731  (each 1e308, their sum is not finite)
    g = dl.grad(f, method=Compiled())
    g(np.array([1.0, -2.0]))
    big = np.array([1.0, -0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DomainWarning)
        np.testing.assert_array_equal(g(big), plain(f)(big))


@pytest.mark.fastpath("7. compiled grad's later calls")
def test_other_calls_take_the_plain_path():
    g = dl.grad(rosenbrock, method=Compiled())
    x = np.linspace(-1, 1, 6)
    g(x)
    entry = g.entry
    x32 = x.astype(np.float32)
    np.testing.assert_array_equal(g(x32), plain(rosenbrock)(x32))
    np.testing.assert_array_equal(g(list(x)), plain(rosenbrock)(x))
    longer = np.linspace(-1, 1, 9)
    np.testing.assert_array_equal(g(longer), plain(rosenbrock)(longer))  # (traced again)
    assert g.entry is not entry
    value, cost = g(longer, return_cost=True)
    np.testing.assert_array_equal(value, plain(rosenbrock)(longer))
    assert cost.evaluations == 1 and cost.graph_nodes > 0


def test_the_shortcut_is_off_with_the_other_speed_paths(monkeypatch):
    from difflab import fastpath

    monkeypatch.setattr(fastpath, "ENABLED", False)
    assert not isinstance(dl.grad(rosenbrock, method=Compiled()), compiled_steady.SteadyGradient)


def plain_hessian(f, argnums=0):
    return Differentiator.hessian(Compiled(), f, argnums)


@pytest.mark.parametrize("f, argnums, shapes", [
    (rosenbrock, 0, [(7,)]), (chain, 0, [(2, 3)]), (two, (0, 1), [(4,), (3, 4)]),
    (two, 1, [(4,), (3, 4)]), (lambda x: dl.sin(x) * x, 0, [()]),
])
@pytest.mark.fastpath("7. compiled grad's later calls")
def test_later_hessians_equal_the_plain_path_bit_for_bit(f, argnums, shapes):
    later_calls_equal_the_plain_path(dl.hessian, plain_hessian, f, argnums, shapes, seed=1)


def test_a_hessian_outside_the_domain_still_warns_and_gives_nan():
    f = lambda x: dl.log(x).sum()  # noqa: E731
    h = dl.hessian(f, method=Compiled())
    h(np.array([1.0, 2.0]))
    with pytest.warns(DomainWarning):
        got = h(np.array([-1.0, 2.0]))
    with pytest.warns(DomainWarning):
        want = plain_hessian(f)(np.array([-1.0, 2.0]))
    np.testing.assert_array_equal(got, want)


def plain_jacobian(f, argnums=0):
    return Differentiator.jacobian(Compiled(), f, argnums)


def tanh_wx(x, w):
    return dl.tanh(w @ x)


def squares_and_sum(x):  # 2 outputs of 6 inputs: the batched reverse-mode Jacobian
    return dl.stack([(x * x).sum(), dl.sin(x).sum()])


@pytest.mark.parametrize("f, argnums, shapes", [
    (tanh_wx, 0, [(5,), (5, 5)]), (tanh_wx, (0, 1), [(3,), (4, 3)]), (tanh_wx, 1, [(3,), (2, 3)]),
    (squares_and_sum, 0, [(2, 3)]), (lambda x: dl.sin(x) * x, 0, [()]),
])
@pytest.mark.fastpath("7. compiled grad's later calls")
def test_later_jacobians_equal_the_plain_path_bit_for_bit(f, argnums, shapes):
    later_calls_equal_the_plain_path(dl.jacobian, plain_jacobian, f, argnums, shapes, seed=2)


@pytest.mark.parametrize("point", [[-1.0, 2.0], [0.0, 2.0]])  # log's domain; its derivative's
@pytest.mark.fastpath("7. compiled grad's later calls")
def test_a_jacobian_outside_the_domain_still_warns_and_gives_what_the_plain_path_gives(point):
    f = lambda x: dl.log(x) * 2.0  # noqa: E731
    J = dl.jacobian(f, method=Compiled())
    J(np.array([1.0, 2.0]))
    J(np.array([1.0, 3.0]))
    assert J.entry is not None
    with pytest.warns(DomainWarning):
        got = J(np.array(point))
    with pytest.warns(DomainWarning):
        want = plain_jacobian(f)(np.array(point))
    np.testing.assert_array_equal(got, want)
    assert not np.isfinite(got[0]).all() and np.isfinite(got[1]).all()
