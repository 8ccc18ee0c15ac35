"""Tracing on stand-ins (difflab/jit/standins.py): the same graphs, without holding the values.

The first build of a compiled graph (``method="compiled"``, ``dl.compile``)
traces on zero-stride stand-ins of the arguments.  These tests check that
it changes no graph and no number (every primitive of the registry and the
table's functions, traced both ways), that whatever needs the values goes
back to them, and that the first call's memory stays near the input's size.
"""

import tracemalloc
import warnings

import numpy as np
import pytest

import difflab as dl
from difflab.diff.compiled import Compiled
from difflab.jit import fusion, standins
from difflab.testing import samples

CASES = {**samples.primitive_cases(), **samples.function_cases()}


@pytest.fixture(autouse=True)
def _small_inputs_too(monkeypatch):
    """The table's inputs are small: trace them on stand-ins too (1 MiB and more, else)."""
    monkeypatch.setattr(standins, "MIN_BYTES", 0)


def _both_ways(monkeypatch, build):
    """``build()`` with stand-ins on, then off (the values): both results."""
    monkeypatch.setattr(standins, "ENABLED", True)
    dl.manual_seed(0)  # (a random primitive draws the same numbers both times)
    on = build()
    monkeypatch.setattr(standins, "ENABLED", False)
    dl.manual_seed(0)
    off = build()
    return on, off


def _same_graph(a, b):
    assert str(a) == str(b)
    assert set(a.constants) == set(b.constants)
    for name in a.constants:
        np.testing.assert_array_equal(dl.backend.to_numpy(a.constants[name]),
                                      dl.backend.to_numpy(b.constants[name]))


def _float_loss(case):
    """A scalar of the case's floating outputs (weighted, so the cotangent is not all ones)."""
    def loss(*xs):
        out = case.call(*xs)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        total = 0.0
        for o in outs:
            if isinstance(o, dl.Tensor) and o.dtype.is_floating_point:
                weights = dl.tensor(np.linspace(0.5, 1.5, max(o.numel(), 1)).reshape(o.shape))
                total = total + (o * weights).sum()
        return total if isinstance(total, dl.Tensor) else None
    return loss


def _has_a_derivative(loss, example, k):
    """Whether the tape differentiates in argument k (zeta's s, gammainc's a: it refuses)."""
    if loss(*[dl.tensor(a) for a in example]) is None:
        return False  # (no floating output: nothing to differentiate)
    try:
        dl.grad(loss, argnums=k, method="reverse")(*[dl.tensor(a) for a in example])
    except NotImplementedError:
        return False
    return True


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_compiled_gradient_traced_on_stand_ins_is_the_same_graph(name, monkeypatch):
    case = CASES[name]
    example, other = samples.variants(case, seed=len(name))[:2]
    loss = _float_loss(case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if loss(*[dl.tensor(a) for a in example]) is None:
            pytest.skip("no floating output")
        nums = tuple(k for k, a in enumerate(example)
                     if a.dtype.kind == "f" and _has_a_derivative(loss, example, k))
        if not nums:
            pytest.skip("no floating input")

        def build():
            method = Compiled()
            grads = dl.grad(loss, argnums=nums, method=method)
            values = []
            for xs in (example, other):
                try:
                    values.append(grads(*xs))
                except dl.jit.GraphError as exc:  # (a shape baked in from the example's values)
                    values.append(str(exc))
            graphs = [c for per_f in method._cache.values() for c in per_f.values()]
            return values, graphs

        (on, graphs_on), (off, graphs_off) = _both_ways(monkeypatch, build)
    assert len(graphs_on) == len(graphs_off) == 1
    if isinstance(graphs_on[0], str):
        assert graphs_on == graphs_off  # (no graph either way, for the same reason)
    else:
        _same_graph(graphs_on[0].graph, graphs_off[0].graph)
    for got, want in zip(on, off):  # bit for bit
        if isinstance(want, str):
            assert got == want
            continue
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("name", sorted(CASES))
def test_dl_compile_traced_on_stand_ins_gives_the_same_graphs_and_numbers(name, monkeypatch):
    case = CASES[name]
    example = samples.variants(case, seed=len(name))[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        differentiable = {k for k, a in enumerate(example) if a.dtype.kind == "f" and
                          _has_a_derivative(_float_loss(case), example, k)}

    def build():
        f = dl.compile(case.call)
        xs = [dl.tensor(a, requires_grad=k in differentiable) for k, a in enumerate(example)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = f(*xs)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        floats = [o for o in outs if isinstance(o, dl.Tensor) and o.requires_grad]
        if floats:
            sum(o.sum() for o in floats).backward()
        values = [o.detach().numpy() if isinstance(o, dl.Tensor) else o for o in outs]
        grads = [x.grad.numpy() for x in xs if x.grad is not None]
        return values, grads, list(f.cache.values())

    (v_on, g_on, e_on), (v_off, g_off, e_off) = _both_ways(monkeypatch, build)
    for a, b in zip(v_on + g_on, v_off + g_off):
        np.testing.assert_array_equal(a, b)
    assert len(e_on) == len(e_off) == 1
    if hasattr(e_on[0], "forward"):
        _same_graph(e_on[0].forward, e_off[0].forward)
        if e_on[0].backward is not None:
            _same_graph(e_on[0].backward, e_off[0].backward)
    elif hasattr(e_on[0], "branches"):  # a split function (a value read): traced on values
        _same_graph(e_on[0].graph, e_off[0].graph)
        assert e_on[0].ops == e_off[0].ops and list(e_on[0].branches) == list(e_off[0].branches)
    else:
        assert [str(b) for b in e_on[0].breaks] == [str(b) for b in e_off[0].breaks]


def rosenbrock(x):
    a, b = x[:-1], x[1:]
    return (100.0 * (b - a * a) ** 2 + (1.0 - a) ** 2).sum()


def test_the_rosenbrock_gradient_is_traced_on_stand_ins(monkeypatch):
    method = Compiled()
    dl.grad(rosenbrock, method=method)(np.linspace(-1, 1, 50))
    (compiled,) = next(iter(method._cache.values())).values()
    assert standins.is_stand_in(compiled.graph.inputs[0].example)
    f = dl.compile(rosenbrock)
    f(dl.tensor(np.linspace(-1, 1, 50), requires_grad=True)).backward()
    (entry,) = f.cache.values()
    assert standins.is_stand_in(entry.forward.inputs[0].example)


def test_what_needs_the_values_is_traced_on_the_real_arrays():
    def branch(x):  # a value read
        return (x * x).sum() if float(x.sum()) > 0 else x.sum()

    def in_place(x):  # a write: a stand-in cannot be written
        y = x * 2
        y += 1
        return (y * y).sum()

    x = np.linspace(-1, 2, 7)
    for fn, want in ((branch, 2 * x), (in_place, 4 * (2 * x + 1))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (the branch is baked in: a TracerWarning)
            method = Compiled()
            np.testing.assert_allclose(dl.grad(fn, method=method)(x), want)
        (compiled,) = next(iter(method._cache.values())).values()
        assert not standins.is_stand_in(compiled.graph.inputs[0].example)


def test_a_users_own_zero_stride_array_is_no_stand_in():
    x = np.broadcast_to(np.float64(2.0), (5,))
    assert not standins.is_stand_in(x)
    assert standins.is_stand_in(standins.stand_in(np.arange(5.0)))
    g = dl.grad(lambda v: (v * v).sum(), method="compiled")(x)
    np.testing.assert_array_equal(g, np.full(5, 4.0))


def _peak(fn, nbytes):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        fn()
        return tracemalloc.get_traced_memory()[1] / nbytes
    finally:
        tracemalloc.stop()


@pytest.mark.fastpath("2.-5. (adjoints in place, slices unwritten, scaling, the square)")
@pytest.mark.parametrize("numba", [False, True])
def test_the_first_compiled_rosenbrock_gradient_peaks_under_3x_its_input(numba, monkeypatch):
    """First call included: trace, graph passes, kernels, run; n = 2 * 10**5 (1.5 MiB).

    The bound is on the arrays: numba's own first import and first compile are
    once per process and do not grow with n, so a first call elsewhere warms
    them (a graph of another size: its kernel text is the same, its graph not).
    """
    if numba and not fusion.USE_NUMBA:
        pytest.skip("numba is not installed")
    monkeypatch.setattr(fusion, "USE_NUMBA", numba)
    x = np.random.default_rng(0).uniform(-1.5, 1.5, 200_000)
    warm = np.linspace(-1, 1, 1000)
    dl.grad(rosenbrock, method=Compiled())(warm)
    f = dl.compile(rosenbrock)
    f(dl.tensor(warm, requires_grad=True)).backward()

    fresh = dl.grad(rosenbrock, method=Compiled())  # (its own cache: a true first call)
    assert _peak(lambda: fresh(x), x.nbytes) < 3
    t = dl.tensor(x, requires_grad=True)
    f = dl.compile(rosenbrock)

    def first():
        f(t).backward()

    assert _peak(first, x.nbytes) < 3
    np.testing.assert_allclose(t.grad.numpy(), fresh(x), rtol=1e-12, atol=1e-9)
    assert f.traces == 1


@pytest.mark.fastpath("6. fresh adjoints kept")
def test_a_compiled_losss_gradient_becomes_the_grad_without_a_copy():
    """fastpath shortcut 6: the gradients the forward graph computed are handed over; a
    second backward (retain_graph) computes them again, so zeroing the first .grad in place
    changes nothing else, and the sums are eager mode's."""
    x = np.linspace(-1, 1, 20)
    f = dl.compile(rosenbrock)
    t, e = dl.tensor(x, requires_grad=True), dl.tensor(x, requires_grad=True)
    loss, eager_loss = f(t), rosenbrock(e)
    loss.backward(retain_graph=True)
    eager_loss.backward(retain_graph=True)
    np.testing.assert_allclose(t.grad.numpy(), e.grad.numpy(), rtol=1e-12, atol=1e-12)
    first = t.grad.numpy().copy()
    t.grad.zero_()
    (loss * 2.0).backward(retain_graph=True)
    np.testing.assert_array_equal(t.grad.numpy(), 2.0 * first)
    loss.backward()
    np.testing.assert_array_equal(t.grad.numpy(), 3.0 * first)
    x_later = dl.tensor(x, requires_grad=True)
    f(x_later).backward()
    nbytes = x.nbytes * 50_000 // 20
    big = dl.tensor(np.linspace(-1, 1, 50_000), requires_grad=True)
    f(big).backward()  # (traced for this shape)
    big.grad = None
    assert _peak(lambda: f(big).backward(), nbytes) < 1.5  # (the gradient, once)


def test_small_arguments_are_traced_once_on_their_values(monkeypatch):
    monkeypatch.setattr(standins, "MIN_BYTES", 1 << 20)
    calls = []

    def f(x):
        calls.append(1)
        return (x * x).sum()

    g = dl.compile(f)
    g(dl.tensor(np.ones(100), requires_grad=True)).backward()
    assert len(calls) == 1
    (entry,) = g.cache.values()
    assert not standins.is_stand_in(entry.forward.inputs[0].example)
    g(dl.tensor(np.ones(200_000), requires_grad=True)).backward()  # (1.5 MiB: stand-ins)
    assert len(calls) == 3


def test_a_folded_constant_of_one_number_stays_that_number_broadcast():
    """Folding ``ones(n) * 100`` (a loss's seed, scaled) keeps n copies of 100.0 as one
    number, no memory; a constant of several numbers is kept as computed."""
    n = 50_000
    ramp = np.linspace(0, 1, n)
    g = dl.jit.trace(lambda x: x * (dl.tensor(np.ones(n)) * 100.0) + x * (dl.tensor(ramp) * 2.0),
                     (dl.tensor(np.ones(n)),)).graph
    folded = dl.jit.optimize(g, ["fold", "dce"])
    hundreds = [c for c in folded.constants.values() if float(c.reshape(-1)[0]) == 100.0]
    ramps = [c for c in folded.constants.values() if float(c.reshape(-1)[-1]) == 2.0]
    assert len(hundreds) == len(ramps) == 1
    assert not any(hundreds[0].strides) and hundreds[0].shape == (n,)
    assert any(ramps[0].strides)
    x = np.random.default_rng(0).uniform(-1, 1, n)
    np.testing.assert_array_equal(folded.run(x)[0], g.run(x)[0])


def test_the_modules_examples_run():
    import doctest

    failures, tried = doctest.testmod(standins, optionflags=doctest.ELLIPSIS)
    assert tried >= 2 and failures == 0
