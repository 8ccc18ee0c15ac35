"""Fusion: one generated kernel per group, the same numbers as line by line.

The NumPy kernel runs the very same NumPy calls as the unfused lines, so its
elementwise results are equal bit for bit; a sum over several blocks, and
three scatters added into one array, add in another order (to rounding).
The numba kernel calls the C library's ``sin`` (not NumPy's) and sums in
SIMD lanes: equal to rounding.  Both are checked on random graphs (with
slices, sums and their scatter_add VJPs) and on every elementwise primitive
of the registry, for float64 and float32 arrays.

What a float32 numba loop guarantees (see ``kernels.scalar_source``): it
computes in float32 (no value of the loop is promoted to float64; checked on
numba's own types), so ``+ - * /``, ``sqrt``, ``abs``, ``maximum``... give
NumPy's bits; ``sin``, ``exp``... are the C library's float32 functions,
within ``MAX_ULP`` units in the last place of NumPy's per rule.  A chain of
lines carries such differences on: float32 results are compared to
``RTOL[float32]`` (the float64 tolerance's ~450 units of rounding, in float32's).
"""

import contextlib
import json
import math
import os
import subprocess
import sys
import zipfile

import cuda_on_cpu
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_jit_passes import build, programs  # (the random programs of the passes test)

import difflab as dl
from difflab import export as E
from difflab import jit
from difflab.backend import numpy_namespace
from difflab.jit import cuda_kernels, fusion, kernels
from difflab.jit.graph import GraphError
from difflab.jit.program import PreparedKernel, Program
from difflab.ops import registry

HAVE_NUMBA = fusion._numba_importable()
KERNELS = ["numpy", pytest.param("numba", marks=pytest.mark.skipif(
    not HAVE_NUMBA, reason="numba is not installed (pip install 'difflab[jit]')"))]
#: ... and the GPU's CUDA kernel, its text compiled for the CPU (tests/jit/cuda_on_cpu.py)
ALL_KERNELS = [*KERNELS, "cuda"]
DTYPES = [np.float64, np.float32]
#: The tolerance of results that are equal to rounding: about 450 units of the dtype's rounding.
RTOL = {np.dtype(np.float64): 1e-13, np.dtype(np.float32): 5e-5}
#: A float32 rule's numba line (C library's sinf, expf...) against NumPy's float32 loop.
MAX_ULP = 4
#: Rules whose value is a sum of a transcendental's: its units in the last place are of the
#: terms (sigmoid = 0.5 + 0.5 tanh(x/2): a unit of tanh near -1 is many of a small sigmoid).
SUMMED = {"sigmoid"}
#: float32 lines that IEEE rounds correctly: numba's float32 loop gives NumPy's bits.
EXACT = {"abs", "add", "sub", "mul", "div", "neg", "maximum", "minimum", "relu", "sqrt"}


@pytest.fixture(scope="module", autouse=True)
def private_kernel_cache(tmp_path_factory):
    """Compiled kernels go to a folder of this test run, not the user's cache."""
    old = os.environ.get("DIFFLAB_CACHE_DIR")
    os.environ["DIFFLAB_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    yield os.environ["DIFFLAB_CACHE_DIR"]
    if old is None:
        del os.environ["DIFFLAB_CACHE_DIR"]
    else:
        os.environ["DIFFLAB_CACHE_DIR"] = old


@pytest.fixture
def no_simd_float64(monkeypatch):
    """Float64 groups fuse every line, whatever the CPU (kernels.numpy_simd_float64: where
    NumPy has AVX-512 loops, big float64 exp/tanh lines would stay NumPy's)."""
    monkeypatch.setattr(kernels, "_SIMD64", [False])
    monkeypatch.setattr(kernels, "_VECTORIZED", {})


@contextlib.contextmanager
def kernels_of(kernel):
    """Inside the block, fused lines run numba's kernels, NumPy's, or the CUDA kernel's
    text compiled for the CPU."""
    if kernel == "cuda":
        with cuda_on_cpu.kernels_of_cuda_on_cpu():
            yield
        return
    old = fusion.USE_NUMBA
    fusion.USE_NUMBA = kernel == "numba"
    try:
        yield
    finally:
        fusion.USE_NUMBA = old


def _same(kernel, got, want, exact=True, dtype=None):
    """Equal bits from the NumPy kernel; to rounding from numba, or where sums change order.

    The dtypes are equal too (a float32 loop returns float32 arrays).  ``dtype``: the
    rounding of the computation, where a float64 result has float32 parts (mixed graphs).
    """
    assert np.asarray(got).dtype == np.asarray(want).dtype
    if kernel == "numpy" and exact:
        np.testing.assert_array_equal(got, want)  # the same NumPy calls: the same bits
    else:
        tol = RTOL[np.dtype(dtype or np.asarray(want).dtype)]
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def _ulps(got, want):
    """How many float32 values lie between got and want (0: the same bits)."""
    bits = [np.asarray(v, np.float32).view(np.int32).astype(np.int64) for v in (got, want)]
    bits = [np.where(b < 0, -(b & 0x7FFFFFFF), b) for b in bits]  # (ordered as the numbers)
    return np.abs(bits[0] - bits[1])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("passes", [["fuse"], ["fold", "cse", "dce", "fuse"]])
@pytest.mark.slow  # (numba compiles each random program's kernel: about 1 s each)
@settings(max_examples=20, deadline=None)
@given(program=programs(), seed=st.integers(0, 2**31))
def test_fusion_preserves_results_on_random_graphs(kernel, passes, program, seed, dtype):
    # (float32 inputs; the programs' constants are float64: mixed graphs, each group one dtype)
    with kernels_of(kernel):
        fn = build(*program)
        rng = np.random.default_rng(seed)
        x, y = (dl.tensor(rng.uniform(-2, 2, 3).astype(dtype)) for _ in range(2))
        graph = jit.trace(fn, (x, y)).graph
        fused = jit.optimize(graph, passes)
        assert len(fused.nodes) <= len(graph.nodes)
        for _ in range(2):
            a, b = (rng.uniform(-2, 2, 3).astype(dtype) for _ in range(2))
            for w, g in zip(graph.run(a, b), fused.run(a, b)):
                _same(kernel, g, w, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.slow
@settings(max_examples=10, deadline=None)
@given(program=programs(), seed=st.integers(0, 2**31))
def test_fusing_a_backward_graph_keeps_its_gradients(kernel, program, seed, dtype):
    with kernels_of(kernel):
        steps, _ = program
        fn = build(steps, [len(steps) + 1])
        rng = np.random.default_rng(seed)
        x, y = (dl.tensor(rng.uniform(-2, 2, 3).astype(dtype)).requires_grad_()
                for _ in range(2))
        loss = jit.trace(lambda a, b: fn(a, b)[0].sum(), (x, y)).graph
        backward = jit.grad(loss)
        fused = jit.optimize(backward, ["fold", "cse", "dce", "fuse"])
        a, b = (rng.uniform(-2, 2, 3).astype(dtype) for _ in range(2))
        for w, g in zip(backward.run(a, b), fused.run(a, b)):
            _same(kernel, g, w, exact=False, dtype=dtype)  # (three scatters into x̄ add
            # in another order)


def _elementwise():
    return sorted(p.name for p in registry.elementwise_ops())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("name", _elementwise())
def test_every_elementwise_rule_writes_a_kernel_line(kernel, name, dtype):
    """Each rule of the registry, fused behind an add, against the rule run by NumPy."""
    p = registry.get(name)
    low, high = p.rule.domain
    rng = np.random.default_rng(sum(map(ord, name)))
    a, b = (rng.uniform(low, high, 500).astype(dtype) for _ in range(2))
    if isinstance(p, registry.UnaryOp):
        body = (("add", ("in0", 0.0)), (name, ("t0",)))
        want = p.rule.forward(numpy_namespace, a + 0.0)
    else:
        body = (("add", ("in0", 0.0)), (name, ("t0", "in1")))
        want = p.rule.forward(numpy_namespace, a + 0.0, b)
    kind, k = fusion.compile_kernel(body, (1,), use_numba=kernel == "numba", dtype=dtype)
    if kind == "numba":
        out = np.empty(500, dtype)
        k(500, a, *([b] if len(body[1][1]) == 2 else []), out)
    else:
        (out,) = k(numpy_namespace, a, *([b] if len(body[1][1]) == 2 else []))
    if kind == "numba" and dtype == np.float32:
        assert out.dtype == want.dtype == np.float32
        if name in EXACT:
            np.testing.assert_array_equal(out, want)  # (correctly rounded: NumPy's bits)
        elif name in SUMMED:
            np.testing.assert_allclose(out, want, rtol=0, atol=MAX_ULP * np.spacing(
                np.float32(1)))
        else:
            assert _ulps(out, want).max() <= MAX_ULP
    else:
        _same(kind, out, want)


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed")
@pytest.mark.parametrize("name", _elementwise())
def test_a_float32_loop_computes_in_float32(name):
    """numba's types of every value of a float32 kernel: float32, never float64.

    (``x * 2.0`` written as is would be computed in float64 by numba and rounded once at
    the store: other bits than NumPy's float32 lines.)  Only the sums' running totals
    are float64, on purpose.
    """
    p = registry.get(name)
    unary = isinstance(p, registry.UnaryOp)
    body = (("mul", ("in0", 0.1)), (name, ("t0",) if unary else ("t0", "in1")),
            ("sub", (1, "t1")), ("sum", ("t2",)))
    kind, k = fusion.compile_kernel(body, (2, 3), use_numba=True, dtype=np.float32)
    if kind != "numba":
        pytest.skip(f"{name} has no scalar form: the NumPy kernel runs it")
    x = np.full(5, 0.5, np.float32)
    k(5, x, *([] if unary else [x]), np.empty(5, np.float32), np.empty(1, np.float32))
    (signature,) = k.signatures
    types = k.overloads[signature].type_annotation.typemap
    # Each line's value (t0, t1, t2) and each element read (a0, a1): float32.  (A float64
    # anywhere in a line's expression would make the line's value float64: nothing in the
    # text narrows but f32() of a number.)
    values = {v: str(t) for v, t in types.items() if v[0] in "at" and v[1:].isdigit()}
    assert len(values) >= 4 and set(values.values()) == {"float32"}, values
    # The named float64 variables: the sum's running total s3 alone.
    named = {v.split(".")[0] for v, t in types.items() if str(t) == "float64" and v[0] != "$"}
    assert named == {"s3"}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("two", [2, 2.0])
def test_a_square_is_written_as_a_product_with_numpys_bits(kernel, two, dtype):
    body = (("add", ("in0", 0.5)), ("pow", ("t0", two)), ("pow", ("t1", 3)))
    layout = kernels.Layout(body, (2, 1))
    assert "(t0 * t0)" in kernels.scalar_source(layout)  # (no pow() call in the loop)
    assert "(t1 ** 3)" in kernels.scalar_source(layout)
    assert "(t0 * t0)" in kernels.scalar_source(layout, np.float32)
    x = (np.random.default_rng(23).normal(size=1000) * 1e3).astype(dtype)
    with kernels_of(kernel):
        graph = jit.trace(lambda v: (v + 0.5) ** two, dl.tensor(x)).graph
        fused = jit.optimize(graph, ["fuse"])
        assert fused.op_counts() == {"fused": 1}
        np.testing.assert_array_equal(fused.run(x)[0], (x + 0.5) ** two)


def test_the_pass_groups_a_chain_into_one_kernel_and_shows_it(capsys):
    x = dl.tensor(np.linspace(-1, 1, 5))
    f = jit.trace(lambda x: ((x.sin() * 2.0 + 1.0).tanh() * x).sum(), x)
    fused = jit.optimize(f.graph, ["fuse"], show=True)
    shown = capsys.readouterr().out
    assert "before elementwise fusion: 6 nodes" in shown
    assert "after elementwise fusion: 1 nodes" in shown
    assert "fused[sin · mul · add · tanh · mul · sum](x)" in shown
    assert "fused kernels:" in shown
    assert fused.op_counts() == {"fused": 1}


def test_a_stop_gradient_line_stays_until_differentiation_and_never_cuts_a_kernel():
    """x.sin().detach() is a `detach` line: the backward graph, built before fusion, stops
    there (the tape's gradient), and fusion reads past it, so the chain is one kernel."""
    def f(x):
        return ((x.sin().detach() * 2.0 + 1.0).tanh() * x).sum()

    x = np.linspace(-1, 1, 5)
    graph = jit.trace(f, dl.tensor(x)).graph
    assert graph.op_counts()["detach"] == 1
    assert jit.optimize(graph, ["fold", "cse", "dce"]).op_counts()["detach"] == 1
    fused = jit.optimize(graph, ["fuse"])
    assert fused.op_counts() == {"fused": 1}
    np.testing.assert_allclose(fused.run(x)[0], graph.run(x)[0], rtol=1e-14)
    backward = jit.optimize(jit.grad(graph), ["fold", "cse", "dce", "fuse"])
    assert "detach" not in backward.op_counts()
    leaf = dl.tensor(x, requires_grad=True)
    f(leaf).backward()
    np.testing.assert_allclose(backward.run(x)[1], leaf.grad.numpy(), rtol=1e-13)
    np.testing.assert_allclose(backward.run(x)[1], np.tanh(2 * np.sin(x) + 1), rtol=1e-13)


def test_values_read_after_the_group_leave_the_kernel():
    def f(x):
        s = x.sin()
        t = (s * 3.0).exp()
        return t.sum() + s.sum(), s  # s is read later and returned
    x = np.linspace(-1, 1, 7)
    graph = jit.trace(f, dl.tensor(x)).graph
    fused = jit.optimize(graph, ["fuse"])
    assert fused.op_counts() == {"fused": 1, "add": 1}  # (the add of two 0-d sums)
    node = next(n for n in fused.nodes if n.op_name == "fused")
    assert len(node.params["outputs"]) == 3  # the two sums and s
    for w, g in zip(graph.run(x), fused.run(x)):
        np.testing.assert_allclose(g, w, rtol=1e-14)


def test_the_numpy_kernel_runs_in_tiles_with_the_same_results():
    with kernels_of("numpy"):
        n = fusion.TILE * 3 + 17
        x = np.random.default_rng(1).normal(size=n)
        f = jit.trace(lambda x: (x.sin() * x + 1.0).tanh(), dl.tensor(x))
        fused = jit.optimize(f.graph, ["fuse"])
        np.testing.assert_array_equal(fused.run(x)[0], f.graph.run(x)[0])


def test_traced_function_with_fusion_retraces_on_a_new_shape():
    f = jit.trace(lambda x: (x.sin() * x).cos(), dl.tensor(np.ones(4)), passes=["fuse"])
    for shape in [(4,), (2, 3), (7,)]:
        x = np.random.default_rng(2).normal(size=shape)
        np.testing.assert_allclose(f(dl.tensor(x)).numpy(), np.cos(np.sin(x) * x), rtol=1e-14)
    assert f.traces == 3
    strict = jit.trace(lambda x: x.sin() * x, dl.tensor(np.ones(4)), retrace=False,
                       passes=["fuse"])
    with pytest.raises(GraphError, match=r"traced for x: \(4,\) float64, but got \(4,\) float32"):
        strict(dl.tensor(np.ones(4, dtype=np.float32)))
    with pytest.raises(GraphError, match="but got \\(2, 2\\)"):
        strict(dl.tensor(np.ones((2, 2))))


@pytest.mark.parametrize("kernel", KERNELS)
def test_float32_groups_run_a_float32_kernel_with_float32_results(kernel):
    x = np.linspace(-1, 1, 9, dtype=np.float32)
    with kernels_of(kernel):
        f = jit.trace(lambda x: ((x * 2.0 + 1.0) ** 2 + x * x).sqrt() * 0.1, dl.tensor(x))
        fused = jit.optimize(f.graph, ["fuse"])
        assert fused.op_counts() == {"fused": 1}
        got = fused.run(x)[0]
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, f.graph.run(x)[0])  # (arithmetic: NumPy's bits)
        source = fusion.kernel_source(fused.nodes[0])
        assert source.startswith("# a float32 loop") and "f32(2.0)" in source
        assert "float64" not in source


@pytest.mark.parametrize("kernel", KERNELS)
def test_float32_transcendentals_stay_numpy_calls_between_numba_kernels(kernel):
    """NumPy's float32 tanh is a SIMD loop, numba's a call of tanhf per element (some
    30 times slower): with numba, a float32 tanh is NumPy's line between two kernels.
    The NumPy kernel (no numba) and float64 groups take it in."""
    def f(v):
        return ((v * 0.5 + 0.1).tanh() * v + 1.0).sigmoid() * 3.0 - v

    for dtype in DTYPES:
        x = np.linspace(-2, 2, 1001).astype(dtype)
        with kernels_of(kernel):
            graph = jit.trace(f, dl.tensor(x)).graph
            fused = jit.optimize(graph, ["fuse"])
        if kernel == "numba" and dtype == np.float32:
            assert fused.op_counts() == {"fused": 3, "tanh": 1, "sigmoid": 1}
            _assert_bits(fused.run(x), graph.run(x))  # (NumPy's tanh; arithmetic exact)
        else:
            assert fused.op_counts() == {"fused": 1}
            with kernels_of(kernel):
                _same(kernel, fused.run(x)[0], graph.run(x)[0])
    assert kernels.vectorized_elsewhere("pow", (None, 2)) is False  # (a square: a product)
    assert kernels.vectorized_elsewhere("pow", (None, None)) is True  # (powf)
    assert kernels.vectorized_elsewhere("digamma") is True  # (no scalar form)


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed")
@pytest.mark.parametrize("simd", [True, False])
def test_float64_transcendentals_stay_numpy_calls_where_numpy_has_simd_loops(simd,
                                                                              monkeypatch):
    """On a CPU with AVX-512, NumPy's float64 exp, tanh, log1p are SIMD loops, several
    times faster than numba's per-element call: from SIMD_FLOAT64_MIN elements on they
    stay NumPy's lines (sin, sqrt and arithmetic fuse); without AVX-512, all fuse."""
    monkeypatch.setattr(kernels, "_SIMD64", [simd])
    monkeypatch.setattr(kernels, "_VECTORIZED", {})

    def f(v):
        return (v * 0.5).exp() * (v.sin() + 1.0).tanh() + (v * v).log1p().sqrt()

    for n, split in ((kernels.SIMD_FLOAT64_MIN, simd), (kernels.SIMD_FLOAT64_MIN - 1, False)):
        x = np.linspace(-2, 2, n)
        with kernels_of("numba"):
            graph = jit.trace(f, dl.tensor(x)).graph
            fused = jit.optimize(graph, ["fuse"])
            counts = fused.op_counts()
            if split:
                assert counts.get("exp") == counts.get("tanh") == counts.get("log1p") == 1
                assert "sin" not in counts and "sqrt" not in counts  # (in kernels)
            else:
                assert counts == {"fused": 1}
            _same("numba", fused.run(x)[0], graph.run(x)[0])
    assert kernels.vectorized_elsewhere("tanh", dtype=np.float16) is False


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed")
def test_arithmetic_float32_kernels_give_numpys_bits():
    """Only + - * / sqrt abs maximum: each the correctly rounded float32 operation."""
    def f(v, w):
        h = dl.maximum(v * 0.1 - w / 3.0, v * w) + 1
        return (h * h + 0.3).sqrt() - (w - 7.0).abs() * h

    rng = np.random.default_rng(31)
    x, y = (rng.normal(size=2000).astype(np.float32) * 100 for _ in range(2))
    with kernels_of("numba"):
        graph = jit.trace(f, (dl.tensor(x), dl.tensor(y))).graph
        fused = jit.optimize(graph, ["fuse"])
        assert fused.op_counts() == {"fused": 1}
        _assert_bits(fused.run(x, y), graph.run(x, y))
        program = Program(fused, prepared=True)
        _assert_bits(*_both_ways(fused, x, y, program=program))  # (the prepared float32 path)
        (kernel,) = [s.forward for s in program.steps
                     if isinstance(s.forward, PreparedKernel)]
        assert kernel.plan.dtype == np.float32  # (the common case taken, for float32)


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed")
def test_float64_and_float32_kernels_of_one_body_are_kept_apart(private_kernel_cache):
    """The same lines make one kernel per dtype: in memory, and in the disk cache."""
    body, outputs = (("mul", ("in0", 0.5)), ("sin", ("t0",))), (1,)
    layout = kernels.Layout(body, outputs)
    texts = {d: kernels.scalar_source(layout, d) for d in DTYPES}
    assert texts[np.float64] != texts[np.float32]
    assert "f32(0.5)" in texts[np.float32] and "f32" not in texts[np.float64]
    with pytest.raises(ValueError, match="float64 or float32"):
        kernels.scalar_source(layout, np.float16)
    x = np.linspace(0, 1, 7)
    results = {}
    for dtype in DTYPES + [np.float16]:
        with kernels_of("numba"):
            results[dtype] = fusion.FUSED.forward(_Ctx(), np, x.astype(dtype), body=body,
                                                  outputs=outputs, shape=(7,))
        assert results[dtype].dtype == dtype
    keys = {(k[1], k[2]) for k in fusion.FUSED._kernels if k[0] == id(body)}
    assert keys == {("numba", np.dtype(np.float64)), ("numba", np.dtype(np.float32)),
                    ("numpy", None)}  # (float16: NumPy's kernel, for every dtype alike)
    assert results[np.float16].tolist() == np.sin(x.astype(np.float16) * 0.5).tolist()
    cached = os.listdir(os.path.join(private_kernel_cache, "kernels"))
    for text in texts.values():
        assert os.path.basename(kernels._source_file(text + kernels._BLOCK_SUM_TEXT)) \
            in cached


class _Ctx:
    def save(self, *values):
        self.saved = values


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed")
@pytest.mark.parametrize("optimizer", [dl.optim.SGD, dl.optim.Adam])
def test_a_float32_mlp_trained_through_dl_compile_equals_eager_training(optimizer,
                                                                       monkeypatch):
    """float32 parameters and activations, int64 labels: the compiled step fuses (numba's
    float32 loops), the labels stay out of the kernels; after 5 steps the parameters
    are eager's to float32 rounding."""
    from difflab import nn
    from difflab.nn import functional as F

    rng = np.random.default_rng(7)
    x = dl.tensor(rng.normal(size=(32, 20)).astype(np.float32))
    labels = dl.tensor(rng.integers(0, 5, 32))
    nets = []
    for _ in range(2):
        dl.manual_seed(3)
        nets.append(nn.Sequential(nn.Linear(20, 64), nn.Tanh(), nn.Linear(64, 64), nn.ReLU(),
                                  nn.Linear(64, 5)))
    eager, model = nets
    assert model[0].weight.dtype == np.float32
    made, kernel = [], fusion.FUSED.kernel

    def recorded(body, outputs, kind, broadcast=None, dtype=fusion.FLOAT64):
        made.append((kind, np.dtype(dtype)))
        return kernel(body, outputs, kind, broadcast, dtype)

    monkeypatch.setattr(fusion.FUSED, "kernel", recorded)
    with kernels_of("numba"):
        fast = dl.compile(model)
        opts = [optimizer(net.parameters(), lr=0.05) for net in (eager, fast)]
        for _ in range(5):
            for net, opt in zip((eager, fast), opts):
                opt.zero_grad()
                F.cross_entropy(net(x), labels).backward()
                opt.step()
    assert made and set(made) == {("numba", np.dtype(np.float32))}  # (fused, in float32)
    for p, q in zip(eager.parameters(), model.parameters()):
        assert q.dtype == np.float32
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)


def test_a_fused_kernel_has_no_vjp_and_says_what_to_do():
    x = dl.tensor(np.ones(3)).requires_grad_()
    fused = jit.optimize(jit.trace(lambda x: (x.sin() * x).sum(), x).graph, ["fuse"])
    with pytest.raises(RuntimeError, match="differentiate the graph before fusing"):
        jit.grad(fused)


@pytest.mark.parametrize("body, outputs, why", [
    ((("add", ("in0", "__import__('os')")),), (0,), "neither an input"),
    ((("add", ("in0", "t0")),), (0,), "neither an input"),
    ((("matmul", ("in0", "in1")),), (0,), "not a primitive that fuses"),
    ((("index", ("in0",)),), (0,), "not a primitive that fuses"),  # (a window is an input)
    ((("no_such_op", ("in0",)),), (0,), "not a primitive that fuses"),
    ((("atan2", ("in0",)),), (0,), "takes 2 arguments"),
    ((("sin", ("in0", "in1")),), (0,), "takes 1 arguments"),
    ((("sin", ("in0",)),), (1,), "outputs must be line numbers"),
    ((("add", ("in0", True)),), (0,), "not a name or a number"),
    ((), (0,), "non-empty"),
])
def test_settings_that_are_no_fused_group_are_refused_before_any_code(body, outputs, why):
    with pytest.raises(GraphError, match=why):
        fusion.compile_kernel(body, outputs, use_numba=HAVE_NUMBA)


def test_a_fused_graph_survives_save_and_load(tmp_path):
    x = np.linspace(-1, 1, 6)
    ep = E.export(lambda x: (x.sin() * 2.0 + float("inf")).tanh().sum(), (dl.tensor(x),),
                  passes=["fuse"])
    assert ep.graph.op_counts()["fused"] == 1
    path = tmp_path / "f.dlg"
    E.save(ep, path)
    loaded = E.load(path)
    np.testing.assert_array_equal(loaded.graph.run(x)[0], ep.graph.run(x)[0])


def test_a_tampered_fused_line_in_a_graph_file_runs_no_code(tmp_path):
    x = np.linspace(-1, 1, 6)
    ep = E.export(lambda x: (x.sin() * 2.0).exp(), (dl.tensor(x),), passes=["fuse"])
    path = tmp_path / "f.dlg"
    E.save(ep, path)
    with zipfile.ZipFile(path) as z:
        files = {n: z.read(n) for n in z.namelist()}
    name = next(n for n in files if n.endswith(".json") and b"fused" in files[n])
    text = files[name].decode()
    marker = str(tmp_path / "pwned")
    evil = text.replace('"in0"', json.dumps(f"open({marker!r}, 'w')"), 1)
    assert evil != text
    files[name] = evil.encode()
    tree = json.loads(evil)
    if "checksum" in tree:  # an attacker recomputes the checksum too
        tree["checksum"] = E._checksum({k: v for k, v in tree.items() if k != "checksum"})
        files[name] = json.dumps(tree).encode()
    with zipfile.ZipFile(path, "w") as z:
        for n, data in files.items():
            z.writestr(n, data)
    with pytest.raises(GraphError):
        E.load(path).graph.run(x)
    assert not os.path.exists(marker)


@pytest.mark.parametrize("kernel", ALL_KERNELS)
@pytest.mark.parametrize("loop", [(600,), (3,), (0,), (-6,)])
def test_an_edited_loop_shape_never_lets_a_kernel_read_past_its_inputs(kernel, loop):
    # A graph file may give a fused line any `shape`: the compiled loop does not check
    # its indices, so a loop longer (or shorter) than the inputs is refused, also on the
    # program's prepared path.
    with kernels_of(kernel):
        x = np.linspace(-1, 1, 6)
        fused = jit.optimize(jit.trace(lambda v: (v.sin() * 2.0).exp(), dl.tensor(x)).graph,
                             ["fuse"])
        fused.nodes[0].params["shape"] = loop
        with pytest.raises(GraphError, match="over .* elements got an input of 6|negative"):
            fused.run(x)


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed")
def test_numba_kernels_are_cached_on_disk_and_reused_by_a_new_process(tmp_path):
    code = ("import numpy as np, difflab as dl\n"
            "from difflab import jit\n"
            "f = jit.trace(lambda x: (x.sin() * 3.0 + x).tanh(), dl.tensor(np.ones(8)),"
            " passes=['fuse'])\n"
            "print(float(f(dl.tensor(np.arange(8.0))).numpy().sum()))\n")
    env = dict(os.environ, DIFFLAB_CACHE_DIR=str(tmp_path))
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, check=True)
    cached = sorted(os.listdir(tmp_path / "kernels" / "__pycache__"))
    assert any(n.endswith(".nbi") for n in cached)
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True, check=True)
    assert first.stdout == second.stdout
    assert sorted(os.listdir(tmp_path / "kernels" / "__pycache__")) == cached


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="folder permissions are POSIX")
def test_a_cache_folder_others_can_write_to_is_not_used(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    (shared / "kernels").mkdir(parents=True)
    os.chmod(shared / "kernels", 0o777)
    monkeypatch.setenv("DIFFLAB_CACHE_DIR", str(shared))
    with pytest.warns(UserWarning, match="not cached on disk"):
        assert fusion._source_file("def kernel():\n    pass\n") is None
    assert os.listdir(shared / "kernels") == []


def test_without_numba_the_listing_says_how_kernels_run(tmp_path):
    code = ("import numpy as np, difflab as dl\n"
            "from difflab import jit\n"
            "from difflab.jit import fusion\n"
            "f = jit.trace(lambda x: (x.sin() * 3.0).exp(), dl.tensor(np.ones(3)))\n"
            "jit.optimize(f.graph, ['fuse'], show=True)\n"
            "print(fusion.USE_NUMBA)\n")
    env = dict(os.environ, DIFFLAB_JIT_NUMBA="0", DIFFLAB_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert "fused kernels: NumPy, tiled (numba switched off" in out
    assert out.strip().endswith("False")


def test_fused_graphs_run_on_the_gpu_arrays_with_the_array_kernel(cuda):
    """On CuPy arrays (or the CPU stand-in for CuPy) the array kernel runs in CuPy."""
    x = np.linspace(-1, 1, fusion.TILE + 100)
    t = dl.tensor(x).to(cuda)
    f = jit.trace(lambda v: (v.sin() * 2.0 + 1.0).cos().sum(), t, passes=["fuse"])
    assert f.graph.op_counts() == {"fused": 1}
    got = f(t)
    assert got.device.type == "cuda"
    np.testing.assert_allclose(got.cpu().numpy(), np.cos(np.sin(x) * 2.0 + 1.0).sum(),
                               rtol=1e-12)


#: Rules whose function C's math library lacks: a fused kernel with one of them has no C
#: form (cuda_source raises NotScalar) and runs as CuPy array code instead.
NO_C_FUNCTION = {
    "digamma": "no digamma in <math.h> (nor in CUDA's math library)",
    **{name: f"no {name} in <math.h> (CUDA's math library has one; the C check compiles for "
             f"the CPU)" for name in ("erfinv", "erfcx", "i0", "i1")},
    **{name: f"no {name} in <math.h> nor in CUDA's" for name in (
        "i0e", "i1e", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1")},
    "remainder": "Python's % (the divisor's sign) is no C function (C's remainder rounds "
                 "the quotient to nearest)",
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", _elementwise())
def test_every_elementwise_rule_writes_a_cuda_kernel_line(name, dtype):
    """The CUDA kernel's C line of each rule, compiled for the CPU (tests/jit/cuda_on_cpu.py):
    float64 to rounding; float32 computed in float32, correctly rounded lines with NumPy's
    bits, the C library's float32 functions within MAX_ULP of NumPy's."""
    p = registry.get(name)
    low, high = p.rule.domain
    rng = np.random.default_rng(sum(map(ord, name)))
    a, b = (rng.uniform(low, high, 300).astype(dtype) for _ in range(2))
    unary = isinstance(p, registry.UnaryOp)
    body = (("add", ("in0", 0.0)), (name, ("t0",) if unary else ("t0", "in1")))
    layout = kernels.Layout(body, (1, 0))
    if name in NO_C_FUNCTION:  # (the fused node then runs its array kernel)
        with pytest.raises(kernels.NotScalar):
            cuda_kernels.cuda_source(layout, dtype, ("each",) * layout.n_inputs)
        return
    want = p.rule.forward(numpy_namespace, a + dtype(0.0), *([] if unary else [b]))
    kernel = cuda_kernels.CudaKernel(layout, cuda_on_cpu.compile_for_cpu)
    _, ys = kernel.run(np, [a] if unary else [a, b], a.size, dtype)
    got, first = ys[1], ys[0]
    assert got.dtype == want.dtype == dtype
    np.testing.assert_array_equal(first, a)
    if dtype == np.float64:
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    elif name in EXACT:
        np.testing.assert_array_equal(got, want)
    else:
        finite = np.isfinite(want)
        np.testing.assert_array_equal(np.isfinite(got), finite)
        allowed = MAX_ULP * (100 if name in SUMMED else 1)
        assert _ulps(got[finite], want[finite]).max() <= allowed


def test_the_cuda_kernel_of_a_backward_graph_computes_its_gradient():
    """The whole fused forward + backward, in the CUDA text, against the graph line by line."""
    x = np.linspace(-1.5, 1.5, 41)
    f = jit.trace(lambda v: ((v * 0.5).sin() * v + 1.0).tanh().sum(),
                  dl.tensor(x).requires_grad_())
    graph = jit.grad(f.graph)
    fused = jit.optimize(graph, ["fold", "cse", "dce", "fuse"])
    assert fused.op_counts() == {"fused": 1}
    assert "reduction" in kernels.Layout(fused.nodes[0].params["body"],
                                         fused.nodes[0].params["outputs"]).kinds
    with cuda_on_cpu.kernels_of_cuda_on_cpu():
        got = fused.run(x)
    for g, w in zip(got, graph.run(x)):
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15)


# ------------------------------------------- windows, sums and scatters in the kernel


def rosenbrock(x):
    a, b = x[:-1], x[1:]
    return (100.0 * (b - a * a) ** 2 + (1.0 - a) ** 2).sum()


def _compiled_gradient(fn, x, passes=("fold", "cse", "dce", "fuse")):
    graph = jit.grad(jit.trace(fn, dl.tensor(x).requires_grad_()).graph)
    return graph, jit.optimize(graph, list(passes))


def _eager_gradient(fn, x):
    t = dl.tensor(x).requires_grad_()
    loss = fn(t)
    loss.backward()
    return loss.detach().cpu().numpy(), t.grad.cpu().numpy()


@pytest.mark.parametrize("kernel", ALL_KERNELS)
def test_the_rosenbrock_gradient_is_one_kernel_reading_x_once(kernel):
    """Loss and gradient in one loop: windows x[:-1], x[1:], the sum, two scatters added."""
    with kernels_of(kernel):
        x = np.random.default_rng(0).uniform(-1.5, 1.5, 2 * fusion.TILE + 5)  # several blocks
        graph, fused = _compiled_gradient(rosenbrock, x)
        assert fused.op_counts() == {"fused": 1}
        assert fused.constants == {}  # (the constants 1.0 and 100.0 are numbers in its text)
        listing = fused.listing()
        assert "· sum ·" in listing and "scatter_add · scatter_add · add](x[:-1], x[1:])" in listing
        loss, grad = fused.run(x)
        want_loss, want_grad = _eager_gradient(rosenbrock, x)
        assert loss.shape == () and grad.shape == x.shape
        np.testing.assert_allclose(loss, want_loss, rtol=1e-12)  # (a sum in another order)
        np.testing.assert_allclose(grad, want_grad, rtol=1e-13, atol=1e-12)
        for g, w in zip(fused.run(x), graph.run(x)):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_the_rosenbrock_gradient_kernel_on_gpu_arrays(cuda):
    x = np.random.default_rng(1).uniform(-1.5, 1.5, 1000)
    t = dl.tensor(x).to(cuda).requires_grad_()
    fused = jit.optimize(jit.grad(jit.trace(rosenbrock, t).graph), ["fold", "cse", "dce", "fuse"])
    assert fused.op_counts() == {"fused": 1}
    loss, grad = fused.run(t.array)
    assert type(grad) is type(t.array)
    want_loss, want_grad = _eager_gradient(rosenbrock, x)
    np.testing.assert_allclose(float(loss), want_loss, rtol=1e-12)
    np.testing.assert_allclose(grad.get(), want_grad, rtol=1e-13, atol=1e-12)


def test_the_kernel_source_is_printable(capsys):
    x = np.linspace(-1, 1, 10)
    _, fused = _compiled_gradient(rosenbrock, x)
    numba_text = fusion.kernel_source(fused.nodes[0])
    assert numba_text.startswith("# a float64 loop\ndef kernel(n, in0, in1, ")
    assert "block_sum(" in numba_text and "+= b" in numba_text
    assert "xp." not in numba_text
    assert fusion.kernel_source(fused.nodes[0], "numpy").startswith("def kernel(xp, in0, in1)")
    cuda_text = fusion.kernel_source(fused.nodes[0], "cuda")
    assert "difflab_fused(const long long n, const long long total, const double* " \
           "__restrict__ in0, const double* __restrict__ in1" in cuda_text
    with pytest.raises(ValueError, match="numba, numpy or cuda"):
        fusion.kernel_source(fused.nodes[0], "fortran")


@pytest.mark.parametrize("kernel", ALL_KERNELS)
def test_windows_at_both_ends_are_read_in_place(kernel):
    with kernels_of(kernel):
        x = np.random.default_rng(2).normal(size=30)
        f = jit.trace(lambda v: v[2:] * v[:-2] + v[1:-1].sin(), dl.tensor(x))
        fused = jit.optimize(f.graph, ["fuse"])
        assert fused.op_counts() == {"fused": 1}
        assert "(v[2:], v[:-2], v[1:-1])" in fused.listing()
        _same(kernel, fused.run(x)[0], x[2:] * x[:-2] + np.sin(x[1:-1]))


@pytest.mark.parametrize("kernel", ALL_KERNELS)
def test_a_sum_and_a_mean_of_the_loop_are_outputs_of_the_kernel(kernel):
    with kernels_of(kernel):
        x = np.random.default_rng(3).normal(size=fusion.TILE + 7)
        f = jit.trace(lambda v: ((v.sin() * 2.0).sum(), (v.cos() + 1.0).mean()), dl.tensor(x))
        fused = jit.optimize(f.graph, ["fuse"])
        assert fused.op_counts() == {"fused": 1}
        total, mean = fused.run(x)
        assert total.shape == mean.shape == ()
        np.testing.assert_allclose(total, (np.sin(x) * 2.0).sum(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(mean, (np.cos(x) + 1.0).mean(), rtol=1e-13)


@pytest.mark.parametrize("kernel", ALL_KERNELS)
def test_a_value_summed_and_returned_leaves_the_kernel_too(kernel):
    with kernels_of(kernel):
        x = np.random.default_rng(4).normal(size=9)

        def f(v):
            s = (v * 3.0).tanh()
            return s.sum(), s

        fused = jit.optimize(jit.trace(f, dl.tensor(x)).graph, ["fuse"])
        assert fused.op_counts() == {"fused": 1}
        total, s = fused.run(x)
        _same(kernel, s, np.tanh(x * 3.0))
        np.testing.assert_allclose(total, np.tanh(x * 3.0).sum(), rtol=1e-13)


@pytest.mark.parametrize("kernel", ALL_KERNELS)
def test_several_scatters_added_write_one_array(kernel):
    """x read at three offsets: its gradient is three scatter_adds added, in one array."""
    with kernels_of(kernel):
        def f(v):
            return (v[2:] * v[:-2]).sum() + (v[1:-1] * 0.5).sin().sum()

        x = np.random.default_rng(5).normal(size=3 * kernels.BLOCK + 11)
        graph, fused = _compiled_gradient(f, x)
        assert graph.op_counts()["scatter_add"] == 3
        fused_node = next(n for n in fused.nodes if n.op_name == "fused")
        body = [op for op, _ in fused_node.params["body"]]
        assert body.count("scatter_add") == 3 and "scatter_add" not in fused.op_counts()
        for g, w in zip(fused.run(x), graph.run(x)):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(fused.run(x)[1], _eager_gradient(f, x)[1], rtol=1e-12,
                                   atol=1e-12)


@pytest.mark.parametrize("kernel", ALL_KERNELS)
def test_2d_arrays_with_slices_along_the_first_axis(kernel):
    """x[1:] of a (m, k) array is one piece of memory: rows 1 ... m-1, read at offset k."""
    with kernels_of(kernel):
        x = np.random.default_rng(6).normal(size=(40, 3))

        def f(v):
            return ((v[1:] - v[:-1]) ** 2).sum() + (v[2] * v[3]).sum()

        graph, fused = _compiled_gradient(f, x)
        kernels_ = [n for n in fused.nodes if n.op_name == "fused"]
        assert any("windows" in n.params for n in kernels_)
        assert "index" not in fused.op_counts() and "scatter_add" not in fused.op_counts()
        want_loss, want_grad = _eager_gradient(f, x)
        loss, grad = fused.run(x)
        np.testing.assert_allclose(loss, want_loss, rtol=1e-12)
        np.testing.assert_allclose(grad, want_grad, rtol=1e-13, atol=1e-12)


@pytest.mark.parametrize("fn, stays", [
    (lambda v: v[::2] * 2.0 + 1.0, "index"),  # a slice with a step: not one piece
    (lambda v: v[:, 1:] * 2.0 + 1.0, "index"),  # a cut along the second axis
    (lambda v: (v * 2.0).sum(axis=0) + 1.0, "sum"),  # a reduction along an axis
    (lambda v: (v * 2.0).sum(keepdims=True) * v, "sum"),  # kept dims: read by the loop
    (lambda v: (v * 2.0 - (v * 2.0).mean()).tanh(), "fused"),  # the loop reads the mean: two
])
def test_what_a_kernel_cannot_take_in_stays_outside_it(fn, stays):
    x = np.random.default_rng(7).normal(size=(6, 4))
    graph = jit.trace(fn, dl.tensor(x)).graph
    fused = jit.optimize(graph, ["fuse"])
    assert fused.op_counts()[stays] >= (2 if stays == "fused" else 1)
    for g, w in zip(fused.run(x), graph.run(x)):
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("kernel", ALL_KERNELS)
def test_a_non_contiguous_argument_is_read_right(kernel):
    with kernels_of(kernel):
        x = np.random.default_rng(8).normal(size=(30, 2))
        graph, fused = _compiled_gradient(rosenbrock, x[:, 0].copy())
        strided = x[:, 0]  # (a column: every other number in memory)
        assert not strided.flags.c_contiguous
        for g, w in zip(fused.run(strided), graph.run(strided.copy())):
            np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-12)


# ------------------------------------------------- a program's prepared kernels


def _both_ways(graph, *arrays, program=None):
    """The outputs of ``graph`` run with prepared kernels (by ``program``, if given), and
    with plain forwards (whatever DIFFLAB_FASTPATH says: both are made by hand)."""
    prepared = (program or Program(graph, prepared=True)).run(arrays)
    plain_program = Program(graph, prepared=False)
    plain = plain_program.run(arrays)
    assert not any(isinstance(step.forward, PreparedKernel) for step in plain_program.steps)
    return prepared, plain


def _assert_bits(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed")
@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(program=programs(), seed=st.integers(0, 2**31), backward=st.booleans(),
       strided=st.booleans())
def test_prepared_kernels_give_the_plain_forwards_bits(program, seed, backward, strided):
    with kernels_of("numba"):
        steps, outputs = program
        rng = np.random.default_rng(seed)
        x, y = (dl.tensor(rng.uniform(-2, 2, 3)).requires_grad_() for _ in range(2))
        if backward:
            fn = build(steps, [len(steps) + 1])
            graph = jit.grad(jit.trace(lambda a, b: fn(a, b)[0].sum(), (x, y)).graph)
        else:
            graph = jit.trace(build(steps, outputs), (x, y)).graph
        fused = jit.optimize(graph, ["fold", "cse", "dce", "fuse"])
        # (strided: every other number of a longer array, which the prepared kernel copies)
        a, b = (rng.uniform(-2, 2, 6)[::2] if strided else rng.uniform(-2, 2, 3)
                for _ in range(2))
        _assert_bits(*_both_ways(fused, a, b))


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed")
def test_a_prepared_kernel_takes_the_common_case_and_hands_the_rest_to_forward():
    with kernels_of("numba"):
        def f(v):
            s = (v * 0.5 + 1.0).sin()
            return s.tanh().mean() + s.sum(), s
        x = np.random.default_rng(21).normal(size=(6, 4))
        fused = jit.optimize(jit.trace(f, dl.tensor(x)).graph, ["fuse"])
        program = Program(fused, prepared=True)
        _assert_bits(*_both_ways(fused, x, program=program))  # (a mean, a sum, a 2-d value)
        (kernel,) = [s.forward for s in program.steps
                     if isinstance(s.forward, PreparedKernel)]
        assert isinstance(kernel.plan, tuple)  # the common case: numba, float64, contiguous
        strided = np.random.default_rng(22).normal(size=(6, 8))[:, ::2]
        assert not strided.flags.c_contiguous  # (read by the plain forward, which copies)
        _assert_bits(*_both_ways(fused, strided))
        _assert_bits(fused.run(strided), fused.run(strided.copy()))
        # Windows and scatters (the Rosenbrock gradient) always take the plain forward.
        _, rosen = _compiled_gradient(rosenbrock, np.linspace(-1, 1, 9))
        rosen_program = Program(rosen, prepared=True)
        _assert_bits(*_both_ways(rosen, np.linspace(-1, 1, 9), program=rosen_program))
        (kernel,) = [s.forward for s in rosen_program.steps
                     if isinstance(s.forward, PreparedKernel)]
        assert kernel.plan is False
    with _plain_forwards_counted() as calls:
        with kernels_of("numpy"):  # (numba switched off after the plan was made)
            program.run([x])
    assert calls == [1]  # the plain forward ran: it takes the NumPy kernel


@contextlib.contextmanager
def _plain_forwards_counted():
    """Count the calls of the fused lines' plain forward inside the block (a list of 1s)."""
    plain, calls = fusion.FusedElementwise.forward, []

    def counted(self, *args, **kwargs):
        calls.append(1)
        return plain(self, *args, **kwargs)

    fusion.FusedElementwise.forward = counted
    try:
        yield calls
    finally:
        fusion.FusedElementwise.forward = plain


def _softsign(v):
    return v / (1.0 + v.abs())


def _gru_cell(gates, hidden, bias, exact=False):
    """A GRU cell's elementwise part: three gates, the hidden state and a bias.

    ``exact``: softsigns for the sigmoids and the tanh (float32 tanh and sigmoid stay
    out of kernels: NumPy's own loops are faster, ``kernels.vectorized_elsewhere``).
    """
    r, z, n = gates
    sigmoid = (lambda v: 0.5 + 0.5 * _softsign(v)) if exact else (lambda v: v.sigmoid())
    tanh = _softsign if exact else (lambda v: v.tanh())
    r = sigmoid(r + hidden)
    z = sigmoid(z + bias)
    h = (1.0 - z) * tanh(n + r * hidden) + z * hidden
    return h, r, z


def _prepared_and_plain_without_fallback(program, *arrays):
    """Both ways (``program`` prepared), checking that every prepared kernel took its
    common case."""
    with _plain_forwards_counted() as calls:
        prepared = program.run(arrays)
    assert calls == []  # (no prepared kernel handed its call to the plain forward)
    return prepared, Program(program.graph, prepared=False).run(arrays)


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed")
@pytest.mark.parametrize("dtype", DTYPES)
def test_prepared_kernels_copy_column_slices_and_read_broadcast_inputs_in_place(dtype):
    """A GRU's gates are column slices of one matmul result, not contiguous: the prepared
    kernel copies them (the plain forward's bits) instead of handing the call over."""
    rng = np.random.default_rng(41)
    matmul = rng.normal(size=(8, 96)).astype(dtype)
    gates = matmul[:, :32], matmul[:, 32:64], matmul[:, 64:]
    hidden = rng.normal(size=(8, 32)).astype(dtype)
    bias = rng.normal(size=64).astype(dtype)[::2]  # (broadcast, and not contiguous either)
    assert not any(g.flags.c_contiguous for g in gates) and not bias.flags.c_contiguous
    with kernels_of("numba"):
        graph = jit.trace(lambda a, b, c, h, w: _gru_cell((a, b, c), h, w,
                                                          exact=dtype == np.float32),
                          tuple(dl.tensor(np.ascontiguousarray(v))
                                for v in (*gates, hidden, bias))).graph
        fused = jit.optimize(graph, ["fuse"])
        assert fused.op_counts() == {"fused": 1}
        program = Program(fused, prepared=True)
        (step,) = program.steps
        assert any(step.node.params["broadcast"])  # (the bias: read in place)
        got, want = _prepared_and_plain_without_fallback(program, *gates, hidden, bias)
        _assert_bits(got, want)
        assert step.forward.plan.dtype == dtype
        # Contiguous copies of the same numbers: the same bits again.
        _assert_bits(program.run([np.ascontiguousarray(v) for v in (*gates, hidden, bias)]),
                     got)
        # An input of another dtype goes to the plain forward; one of another size too,
        # which refuses it.
        other = hidden.astype(np.float64 if dtype == np.float32 else np.float32)
        with _plain_forwards_counted() as calls:
            program.run([*gates, other, bias], check=False)
        assert calls == [1]
        with pytest.raises(GraphError, match="an input of 128 elements"):
            program.run([*gates, hidden[:4], bias], check=False)


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed")
@pytest.mark.slow
def test_prepared_kernels_with_forty_inputs_and_a_backward_graph_give_the_plain_bits():
    """Many inputs (a backward kernel of a GRU reads thirty-five), some strided."""
    rng = np.random.default_rng(43)
    columns = rng.normal(size=(6, 80))
    xs = [columns[:, 2 * k:2 * k + 2] if k % 3 else rng.normal(size=(6, 2)) for k in range(40)]

    def f(*vs):
        acc = vs[0]
        for v in vs[1:]:
            acc = acc * 0.5 + v.sin() * v
        return acc.sum()

    with kernels_of("numba"):
        traced = jit.trace(f, tuple(dl.tensor(np.ascontiguousarray(v)).requires_grad_()
                                    for v in xs)).graph
        fused = jit.optimize(jit.grad(traced), ["fold", "cse", "dce", "fuse"])
        program = Program(fused, prepared=True)
        kernels = [s for s in program.steps if s.node.op_name == "fused"]
        assert max(len(s.args) for s in kernels) >= 40
        got, want = _prepared_and_plain_without_fallback(program, *xs)
        _assert_bits(got, want)


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed")
@pytest.mark.parametrize("rows, extra", [(8, True), (512, True), (8, False)])
def test_a_small_prepared_kernels_outputs_are_rows_of_one_array_each_its_own(rows, extra,
                                                                           no_simd_float64):
    """Up to SMALL elements, from STACKED outputs on, the outputs share one allocation;
    each is still its own array."""
    from difflab.jit import program as program_module

    def f(a, b, c):
        h, r, z = _gru_cell((a, b, c), a * 0.5, c)
        return (h, r, z, h * r, z + 1.0, r * z - h) if extra else (h, r, z)

    rng = np.random.default_rng(47)
    args = tuple(rng.normal(size=(rows, 32)) for _ in range(3))
    with kernels_of("numba"):
        fused = jit.optimize(jit.trace(f, tuple(dl.tensor(v) for v in args)).graph, ["fuse"])
        assert fused.op_counts() == {"fused": 1}
        program = Program(fused, prepared=True)
        got, want = _prepared_and_plain_without_fallback(program, *args)
        _assert_bits(got, want)
        (step,) = program.steps
        stacked = rows * 32 <= program_module.SMALL and len(got) >= program_module.STACKED
        assert stacked == (rows == 8 and extra)
        assert (step.forward.plan.stacked is not None) == stacked
        assert all(type(o) is np.ndarray and o.shape == (rows, 32) and o.flags.c_contiguous
                   and o.flags.writeable for o in got)
        bases = {id(o.base) for o in got}
        assert len(bases) == (1 if stacked else len(got))
        kept = [o.copy() for o in got]
        got[0][...] = np.nan  # (a caller's in-place write touches that output alone)
        _assert_bits(got[1:], kept[1:])


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed")
def test_prepared_kernels_of_one_number_and_with_sums_return_arrays():
    """A 0-d loop, and a kernel whose outputs include a mean: not rows of one array."""
    with kernels_of("numba"):
        def two(a, b):
            s = (a * b).sin()
            return s * 2.0 + b, s

        numbers = (dl.tensor(np.array(0.5)), dl.tensor(np.array(1.5)))  # (float64)
        scalar = jit.optimize(jit.trace(two, numbers).graph, ["fuse"])
        assert scalar.op_counts() == {"fused": 1}
        got, want = _prepared_and_plain_without_fallback(Program(scalar, prepared=True),
                                                         np.array(0.25), np.array(-1.0))
        _assert_bits(got, want)
        assert all(type(o) is np.ndarray and o.shape == () for o in got)
        x = np.random.default_rng(53).normal(size=(5, 8))[:, ::2]
        summed = jit.optimize(jit.trace(lambda v: ((v * 3.0).exp().mean(), v.cos()),
                                        dl.tensor(x.copy())).graph, ["fuse"])
        assert summed.op_counts() == {"fused": 1}
        program = Program(summed, prepared=True)
        _assert_bits(*_prepared_and_plain_without_fallback(program, x))
        (step,) = program.steps
        assert step.forward.plan.stacked is None


def test_the_speed_switch_turns_the_prepared_kernels_off(monkeypatch):
    """DIFFLAB_FASTPATH=0 (difflab.fastpath.ENABLED False): the plain forwards, same bits."""
    from difflab import fastpath

    x = np.random.default_rng(59).normal(size=(4, 6))[:, 1:5]
    fused = jit.optimize(jit.trace(lambda v: ((v * 2.0).tanh() + v, v.exp()),
                                   dl.tensor(x.copy())).graph, ["fuse"])
    monkeypatch.setattr(fastpath, "ENABLED", False)
    plain = Program(fused)
    assert not any(isinstance(s.forward, PreparedKernel) for s in plain.steps)
    monkeypatch.setattr(fastpath, "ENABLED", True)
    prepared = Program(fused)
    assert any(isinstance(s.forward, PreparedKernel) for s in prepared.steps)
    _assert_bits(prepared.run([x]), plain.run([x]))


@pytest.mark.parametrize("index, shape, window", [
    (slice(1, None), (5,), (1, (4,))),
    (slice(None, -1), (5,), (0, (4,))),
    (slice(1, -1), (5,), (1, (3,))),
    (2, (5, 3), (6, (3,))),
    ((2, slice(1, 3)), (5, 3), (7, (2,))),
    ((slice(1, None), slice(None)), (5, 3), (3, (4, 3))),
    ((Ellipsis,), (5, 3), (0, (5, 3))),
    ((slice(1, 3), Ellipsis), (5, 3), (3, (2, 3))),
    (slice(3, 1), (5,), (0, (0,))),
    (slice(None, None, 2), (5,), None),
    ((slice(None), slice(1, None)), (5, 3), None),
    ((slice(1, 3), 0), (5, 3), None),
    (None, (5,), None),
    ((0, 0, 0), (5, 3), None),
    (7, (5,), None),
])
def test_flat_window_says_where_a_slice_lies_in_memory(index, shape, window):
    assert fusion.flat_window(index, shape) == window
    if window is not None:
        x = np.arange(np.prod(shape)).reshape(shape)
        start, result = window
        np.testing.assert_array_equal(x[index].reshape(-1),
                                      np.arange(start, start + np.prod(result)))


@pytest.mark.parametrize("body, outputs, why", [
    ((("sin", ("in0",)), ("sum", ("t0",)), ("mul", ("t1", 2.0))), (1, 2), "after the loop"),
    ((("sin", ("in0",)), ("sum", ("t0", "t0"))), (1,), "takes 1 arguments"),
    ((("sin", ("in0",)), ("scatter_add", ("t0", slice(None, None, 2), (8,)))), (1,),
     "not one contiguous window"),
    ((("sin", ("in0",)), ("scatter_add", ("t0", slice(1, None), (8, -1)))), (1,),
     "is not a shape"),
    ((("sin", ("in0",)), ("scatter_add", ("t0", slice(1, None), (5,))),
      ("scatter_add", ("t0", slice(1, None), (6,))), ("add", ("t1", "t2"))), (3,),
     "different shapes"),
    ((("sin", ("in0",)), ("scatter_add", ("t0", 0, (5,))), ("add", ("t1", "t0"))), (2,),
     "mixes a scatter"),
    ((("sin", ("in0",)), ("scatter_add", ("t0", 0, (5,))), ("scatter_add", ("t0", 1, (5,))),
      ("add", ("t1", "t2"))), (3, 1), "added into another"),
    ((("sin", ("in0",)), ("sum", ("t0",))), (0,), "not among the outputs"),
    ((("sin", ("in0",)),), (0, 0), "twice"),
])
def test_bad_sums_and_scatters_are_refused(body, outputs, why):
    with pytest.raises(GraphError, match=why):
        fusion.check_body(body, outputs)


def test_a_fused_gradient_survives_save_and_load_and_a_tampered_window_is_refused(tmp_path):
    x = np.random.default_rng(9).uniform(-1.5, 1.5, 50)
    ep = E.export(lambda v: rosenbrock(v), (dl.tensor(x),), passes=["fuse"])
    assert ep.graph.op_counts() == {"fused": 1}
    path = tmp_path / "rosenbrock.dlg"
    E.save(ep, path)
    loaded = E.load(path)
    assert loaded.graph.listing() == ep.graph.listing()
    np.testing.assert_array_equal(loaded.graph.run(x)[0], ep.graph.run(x)[0])

    # A gradient graph: an edited scatter (a window past the end of its array) is refused.
    _, fused = _compiled_gradient(rosenbrock, x)
    node = fused.nodes[0]
    body = list(node.params["body"])
    j = next(k for k, (op, _) in enumerate(body) if op == "scatter_add")
    value, index, shape = body[j][1]
    good = dict(node.params)
    for bad in [(value, index, (10,)), (value, slice(5, None), shape)]:
        body[j] = ("scatter_add", bad)
        node.params["body"] = tuple(body)
        with pytest.raises(GraphError):
            fused.run(x)
    # ... and so are a loop longer than its inputs, and windows that do not match them.
    for key, bad in [("shape", (60,)), ("windows", (slice(1, None),)),
                     ("windows", (slice(None, -1), slice(None, None, 2)))]:
        node.params.clear()
        node.params.update(good, **{key: bad})
        with pytest.raises(GraphError):
            fused.run(x)


@pytest.mark.parametrize("kernel", ALL_KERNELS)
def test_a_sum_of_a_line_of_numbers_counts_every_element(kernel):
    """A constant that is one number everywhere becomes that number in the kernel's text;
    its sum is still a sum over all the elements."""
    with kernels_of(kernel):
        c = dl.tensor(np.full(5, 2.0))
        x = np.linspace(-1, 1, 5)
        graph = jit.trace(lambda v: ((c * 0.5).sum() * v).sin(), dl.tensor(x)).graph
        fused = jit.optimize(graph, ["fuse"])
        assert fused.constants == {}
        np.testing.assert_allclose(fused.run(x)[0], np.sin(5.0 * x), rtol=1e-15)


# ------------------------------------------------------------------ broadcasting


@pytest.mark.parametrize("shape, loop, read", [
    ((4,), (3, 4), (1, 4)),  # a bias: the same row again and again
    ((1, 4), (3, 4), (1, 4)),
    ((3, 1), (3, 4), (4, 3)),  # a column: each element four times in a row
    ((5, 1, 1), (2, 5, 3, 3), (9, 5)),  # a channel bias
    ((5, 3, 1), (2, 5, 3, 4), (4, 15)),
    ((5, 1, 3), (2, 5, 1, 3), (1, 15)),  # (an axis of length 1 in the loop too)
    ((), (3, 4), (1, 1)),
    ((1, 1), (3, 4), (1, 1)),
    ((3, 1, 4), (3, 2, 4), None),  # broadcast in the middle only: no one stride
    ((4,), (3, 5), None),  # (not broadcastable)
    ((2, 3, 4), (3, 4), None),
])
def test_broadcast_read_says_where_each_element_comes_from(shape, loop, read):
    assert kernels.broadcast_read(shape, loop) == read
    if read is not None:  # element k of the loop is element (k // every) % size
        every, size = read
        a = np.arange(math.prod(shape), dtype=float).reshape(shape)
        k = np.arange(math.prod(loop))
        np.testing.assert_array_equal(np.broadcast_to(a, loop).reshape(-1),
                                      a.reshape(-1)[(k // every) % size])


@pytest.mark.parametrize("kernel", ALL_KERNELS)
@pytest.mark.parametrize("n", [7, fusion.TILE + 5])  # (one block, and several)
def test_a_bias_and_a_column_are_read_broadcast_inside_one_kernel(kernel, n, no_simd_float64):
    with kernels_of(kernel):
        rng = np.random.default_rng(11)
        b, c = dl.tensor(rng.normal(size=3)), dl.tensor(rng.normal(size=(n, 1)))
        x = rng.normal(size=(n, 3))
        graph = jit.trace(lambda v: ((v * c + b).tanh() * b - c).exp(), dl.tensor(x)).graph
        fused = jit.optimize(graph, ["fuse"])
        assert fused.op_counts() == {"fused": 1}
        node = fused.nodes[0]
        reads = {a.name: r for a, r in zip(node.args, node.params["broadcast"])}
        assert sorted(r for r in reads.values() if r) == [(1, 3), (3, n)]
        assert "(broadcast)" in fused.listing()
        _same(kernel, fused.run(x)[0], graph.run(x)[0])


@pytest.mark.parametrize("kernel", ALL_KERNELS)
def test_a_backward_graph_with_a_bias_fuses_and_keeps_its_gradients(kernel):
    with kernels_of(kernel):
        rng = np.random.default_rng(12)
        w, b = dl.tensor(rng.normal(size=(4, 5))), dl.tensor(rng.normal(size=(5,)))
        x = rng.normal(size=(6, 4))
        forward = jit.trace(lambda v: ((v @ w + b).tanh() ** 2).sum(),
                            dl.tensor(x).requires_grad_()).graph
        graph = jit.grad(forward)
        fused = jit.optimize(graph, ["fold", "cse", "dce", "fuse"])
        assert any("broadcast" in n.params for n in fused.nodes)
        for got, want in zip(fused.run(x), graph.run(x)):
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_a_broadcast_in_the_middle_stays_outside_the_kernel():
    x = np.random.default_rng(13).normal(size=(3, 2, 4))
    m = dl.tensor(np.random.default_rng(14).normal(size=(3, 1, 4)))
    graph = jit.trace(lambda v: (v * m).sin() + 1.0, dl.tensor(x)).graph
    fused = jit.optimize(graph, ["fuse"])
    assert fused.op_counts()["mul"] == 1
    np.testing.assert_allclose(fused.run(x)[0], graph.run(x)[0], rtol=1e-13)


@pytest.mark.parametrize("kernel", ALL_KERNELS)
def test_edited_broadcast_settings_are_refused_before_the_loop_reads_anything(kernel):
    # A graph file may say anything: the compiled loop does not check its indices, so a
    # broadcast read of more elements than the input has must never reach it.
    with kernels_of(kernel):
        b = dl.tensor(np.arange(3.0))
        x = np.ones((4, 3))
        fused = jit.optimize(jit.trace(lambda v: (v + b).sin() * 2.0, dl.tensor(x)).graph,
                             ["fuse"])
        node = fused.nodes[0]
        good = dict(node.params)
        k = next(i for i, r in enumerate(good["broadcast"]) if r is not None)
        injected = "3]; import os; os.system('x')#"
        for bad, why in [((1, 300), "broadcast from 300"), ((0, 3), "positive"),
                         (("1", 3), "positive"), ((1, injected), "positive"),
                         ((1, 3, 3), "positive")]:
            spread = list(good["broadcast"])
            spread[k] = bad
            node.params.update(good, broadcast=tuple(spread))
            with pytest.raises(GraphError, match=why):
                fused.run(x)
        node.params.update(good, broadcast=good["broadcast"] + (None,))
        with pytest.raises(GraphError, match="each of the"):
            fused.run(x)
        node.params.update(good)
        np.testing.assert_allclose(fused.run(x)[0], np.sin(x + np.arange(3.0)) * 2.0)


def test_a_fused_graph_with_broadcast_reads_survives_save_and_load(tmp_path):
    rng = np.random.default_rng(15)
    b = dl.tensor(rng.normal(size=(5,)))
    x = rng.normal(size=(4, 5))
    ep = E.export(lambda v: ((v - b).tanh() * b).sum(), (dl.tensor(x),), passes=["fuse"])
    assert any("broadcast" in n.params for n in ep.graph.nodes)
    E.save(ep, tmp_path / "b.dlg")
    loaded = E.load(tmp_path / "b.dlg")
    assert loaded.graph.listing() == ep.graph.listing()
    np.testing.assert_array_equal(loaded.graph.run(x)[0], ep.graph.run(x)[0])


def test_broadcast_reads_on_gpu_arrays(cuda):
    rng = np.random.default_rng(16)
    b, x = rng.normal(size=(3,)), rng.normal(size=(5, 3))
    on_gpu = dl.tensor(b).to(cuda)
    f = jit.trace(lambda v: (v * on_gpu).sin() + on_gpu, dl.tensor(x).to(cuda),
                  passes=["fuse"])
    assert f.graph.op_counts() == {"fused": 1}
    np.testing.assert_allclose(f(dl.tensor(x).to(cuda)).cpu().numpy(), np.sin(x * b) + b,
                               rtol=1e-13)


@pytest.mark.parametrize("n", [0, 1, 3, 7, 1000])
def test_a_kernels_mean_scales_as_the_mean_primitive(n):
    """One helper gives a fused mean its 1/n (NaN for no element), the primitive's own factor,
    and no other module of the library writes the mean's 1/n itself."""
    import inspect

    from difflab.jit import fusion, program
    from difflab.ops import reductions, registry
    from difflab.ops.shapes import mean_scale

    assert fusion.mean_scale is program.mean_scale is reductions.mean_scale is mean_scale
    assert "1.0 / count" not in inspect.getsource(reductions.Mean)

    ctx = registry.Context((False,))
    registry.get("mean").forward(ctx, np, np.ones(n))
    np.testing.assert_array_equal(mean_scale(n), ctx.scale)


def test_mean_scale_docstring_example_runs():
    import doctest

    from difflab.ops import shapes

    runner = doctest.DocTestRunner()
    for test in doctest.DocTestFinder(recurse=False).find(shapes.mean_scale, "mean_scale"):
        runner.run(test)
    assert runner.tries and runner.failures == 0


def test_fusion_kinds_cover_every_elementwise_primitive_and_name_real_ones():
    from difflab.ops import registry

    kinds = {name: op.fusion for name, op in registry.PRIMITIVES.items() if op.fusion}
    elementwise = {n for n, kind in kinds.items() if kind == "elementwise"}
    assert elementwise == {p.name for p in registry.elementwise_ops()}
    assert set(kinds.values()) == {"elementwise", "reduction", "window", "scatter"}
    assert {n: k for n, k in kinds.items() if k != "elementwise"} == {
        "sum": "reduction", "mean": "reduction", "index": "window", "scatter_add": "scatter"}


def test_fusion_reads_the_primitives_own_fusion_attribute(monkeypatch):
    """How a line fuses is the primitive's ``fusion`` attribute, never a test on its name."""
    from difflab.jit.kernels import fusion_kind
    from difflab.ops import registry

    x = dl.tensor(np.linspace(-1, 1, 8))
    graph = jit.trace(lambda v: (v.sin() * 2.0).exp().sum(), x).graph
    assert jit.optimize(graph, ["fuse"]).op_counts() == {"fused": 1}
    sin = registry.get("sin")
    monkeypatch.setattr(sin, "fusion", None, raising=False)
    assert fusion_kind(sin) is None
    counts = jit.optimize(graph, ["fuse"]).op_counts()
    assert counts["sin"] == 1 and counts["fused"] == 1  # (sin left out, the rest fused)
    with pytest.raises(GraphError, match="not a primitive that fuses"):
        kernels.Layout((("sin", ("in0",)),), (0,))
    np.testing.assert_allclose(jit.optimize(graph, ["fuse"]).run(x.array)[0],
                               graph.run(x.array)[0], rtol=1e-14)


def test_fusion_kind_docstring_example_runs():
    import doctest

    runner = doctest.DocTestRunner()
    for test in doctest.DocTestFinder(recurse=False).find(kernels.fusion_kind, "fusion_kind"):
        runner.run(test)
    assert runner.tries and runner.failures == 0


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed")
def test_a_stacked_kernel_of_one_element_keeps_its_sums_0d():
    # With a loop of one element a sum writes as many numbers as an elementwise output;
    # the stacked rows (for elementwise outputs only) once gave the sum the loop's shape.
    def f(x):
        return (x.sin() + 1, x.cos() + 2, x.exp() * 3, x.tanh() - 1, x * 2 + 1,
                (x + 1) * x, (x * x + 1).sum(), (x * x).mean())

    compiled, x = dl.compile(f), dl.tensor([0.5])
    for _ in range(3):
        got = compiled(x)
    want = f(x)
    assert [tuple(g.shape) for g in got] == [tuple(w.shape) for w in want]
    assert all(np.allclose(g.numpy(), w.numpy(), rtol=1e-15, atol=0) for g, w in zip(got, want))


def test_a_kernel_the_gpu_compiler_refuses_runs_as_array_code_with_a_warning(monkeypatch):
    """A CUDA version that lacks a C function: a warning, then the same results."""
    def refuse(text):
        raise RuntimeError("NVRTC_ERROR_COMPILATION: identifier 'lgammaf' is undefined")

    monkeypatch.setattr(cuda_on_cpu, "compile_for_cpu", refuse)
    x = np.random.default_rng(3).uniform(-1.5, 1.5, 300)
    graph, fused = _compiled_gradient(rosenbrock, x)
    with cuda_on_cpu.kernels_of_cuda_on_cpu():
        with pytest.warns(RuntimeWarning, match="did not compile for the GPU.*lgammaf"):
            got = fused.run(x)
        got_again = fused.run(x)  # (refused once: no second try, no second warning)
    for g, g2, w in zip(got, got_again, graph.run(x)):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(g, g2)


def test_an_edited_scatter_window_past_its_array_is_refused_by_the_cuda_kernel():
    layout = kernels.Layout((("mul", ("in0", 2.0)), ("scatter_add", ("t0", slice(1, None), (5,)))),
                            (1,))
    kernel = cuda_kernels.CudaKernel(layout, cuda_on_cpu.compile_for_cpu)
    assert kernel.run(np, [np.ones(4)], 4, np.float64)[0][1].tolist() == [0, 2, 2, 2, 2]
    with pytest.raises(GraphError, match="scatters into elements 1...5 of an array of shape"):
        kernel.run(np, [np.ones(5)], 5, np.float64)


@pytest.mark.parametrize("dtype", DTYPES)
def test_infinite_and_nan_numbers_in_a_cuda_kernel(dtype):
    """``inf`` and ``nan`` in the C text are defined by the text itself (NVRTC has no
    <math.h>; the CPU check undefines its own)."""
    body = (("maximum", ("in0", float("-inf"))), ("mul", ("t0", float("nan"))),
            ("minimum", ("t0", float("inf"))))
    layout = kernels.Layout(body, (2, 1))
    text = cuda_kernels.cuda_source(layout, dtype, ("each",))
    assert "#define INFINITY" in text and "#define NAN" in text
    x = np.array([-np.inf, -1.0, 0.0, 2.5, np.inf, np.nan], dtype=dtype)
    _, ys = cuda_kernels.CudaKernel(layout, cuda_on_cpu.compile_for_cpu).run(np, [x], 6, dtype)
    np.testing.assert_array_equal(ys[2], np.minimum(np.maximum(x, -np.inf), np.inf))
    assert np.isnan(ys[1]).all() and ys[1].dtype == dtype


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed")
def test_for_a_gpu_every_line_that_can_join_a_kernel_does(cuda, monkeypatch):
    """The CPU's exceptions (float32 tanh, big float64 exp: NumPy's SIMD lines) are the
    CPU's: traced on GPU arrays, the same functions make one kernel (fusion.fusing_for)."""
    monkeypatch.setattr(kernels, "_SIMD64", [True])
    monkeypatch.setattr(kernels, "_VECTORIZED", {})

    def f(v):
        return ((v * 0.5 + 0.1).tanh() * v + 1.0).exp() * 3.0 - v

    for dtype, n in ((np.float32, 1001), (np.float64, 2 * kernels.SIMD_FLOAT64_MIN)):
        x = np.linspace(-2, 2, n).astype(dtype)
        on_cpu = jit.trace(f, dl.tensor(x), passes=["fuse"])
        on_gpu = jit.trace(f, dl.tensor(x).to(cuda), passes=["fuse"])
        on_cpu(dl.tensor(x)), on_gpu(dl.tensor(x).to(cuda))  # (each traces now)
        assert on_cpu.graph.op_counts() == {"fused": 3, "tanh": 1, "exp": 1}
        assert on_gpu.graph.op_counts() == {"fused": 1}
        np.testing.assert_allclose(on_gpu(dl.tensor(x).to(cuda)).cpu().numpy(),
                                   f(dl.tensor(x)).numpy(), rtol=RTOL[np.dtype(dtype)])
        gradient = dl.grad(lambda v: f(v).sum(), method="compiled")
        np.testing.assert_allclose(gradient(dl.tensor(x).to(cuda)).get(),  # (CuPy's array)
                                   gradient(dl.tensor(x)), rtol=RTOL[np.dtype(dtype)])


def test_fusing_for_a_gpu_fuses_float32_without_numba(cuda, monkeypatch):
    monkeypatch.setattr(fusion, "USE_NUMBA", False)
    assert not fusion.fusion_pays(np.float32)
    with fusion.fusing_for([dl.zeros(2).to(cuda), 3.0]) as on_gpu:
        assert on_gpu and fusion.fusion_pays(np.float32) and not fusion.fusion_pays(np.int64)
    with fusion.fusing_for([dl.zeros(2), np.zeros(2)]) as on_gpu:
        assert not on_gpu and not fusion.fusion_pays(np.float32)
    assert not fusion.fusion_pays(np.float32)  # (the block's setting ends with it)


def _run_by_the_loop(program, arrays):
    """``program``'s outputs from ``Program.run``'s loop, not the written-out function."""
    program.run(arrays)  # (the first run writes it out, if it is ever written)
    written, program.written = program.written, None
    try:
        return program.run(arrays)
    finally:
        program.written = written


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed")
@pytest.mark.parametrize("dtype", DTYPES)
def test_a_prepared_kernel_hands_the_saved_arrays_a_later_step_reads_back_without_a_context(
        dtype):
    """The chain's gradient: one fused line whose sum a later step reads.  The program
    passes no Context; the kernel returns (y, saved), the loop's way and the written-out
    function's way, with the plain forward's bits; with numba switched off (the plain
    forward inside the prepared kernel, with a Context of its own) too."""
    def chain(v):
        for _ in range(8):
            v = (v * 0.999 + 0.001).sin().tanh()
        return v.sum()

    x = np.random.default_rng(61).uniform(-1, 1, 16).astype(dtype)
    with kernels_of("numba"):
        traced = jit.trace(chain, dl.tensor(x.copy()).requires_grad_()).graph
        graph = jit.optimize(jit.grad(traced),
                             ["fold", "cse", "dce", "fuse"])
        program = Program(graph, prepared=True)
        steps = [s for s in program.steps if isinstance(s.forward, PreparedKernel)]
        assert steps and any(s.saved_slots for s in steps)
        for s, entry in zip(program.steps, program.loop):
            if isinstance(s.forward, PreparedKernel):
                assert entry[5] is None  # (no Context made for it)
                assert (s.forward.needs is None) == (not s.saved_slots)
        got, want = _prepared_and_plain_without_fallback(program, x)
        _assert_bits(got, want)
        _assert_bits(_run_by_the_loop(program, [x]), want)
        plan = steps[0].forward.plan
        assert plan.loop is not plan.kernel  # (the machine code, without numba's dispatch)
    with kernels_of("numpy"):  # (numba switched off after the plans were made)
        want = Program(graph, prepared=False).run([x])
        with _plain_forwards_counted() as calls:
            _assert_bits(program.run([x]), want)
            _assert_bits(_run_by_the_loop(program, [x]), want)
    assert len(calls) == 3 * len(steps)  # (_run_by_the_loop runs it twice)


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed")
@pytest.mark.parametrize("shape", [(16,), (0,), (), (3, 5)])
def test_a_prepared_kernels_flat_outputs_are_its_own_arrays_of_the_plain_bits(shape):
    """A 1-d line's outputs are the arrays the loop wrote (no reshape); 0-d, empty and
    2-d lines are shaped as the plain forward shapes them; a mean is scaled (a line of
    no element has none: its reductions are not fused)."""
    def f(v):
        s = (v * 2.0).sin()
        return (s * 3.0, s) if v.numel() == 0 else (s * 3.0, s.exp().mean(), s)

    x = np.random.default_rng(67).normal(size=shape)
    with kernels_of("numba"):
        graph = jit.optimize(jit.trace(f, dl.tensor(x.copy())).graph, ["fuse"])
        assert graph.op_counts() == {"fused": 1}
        program = Program(graph, prepared=True)
        got, want = _prepared_and_plain_without_fallback(program, x)
        _assert_bits(got, want)
        assert [g.shape for g in got] == ([shape, shape] if x.size == 0
                                          else [shape, (), shape])
        assert all(type(g) is np.ndarray for g in got)
        if len(shape) == 1:  # (the loop's own arrays: nothing else holds their memory)
            assert got[0].base is None and got[-1].base is None


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed")
def test_a_prepared_kernel_reads_an_input_that_is_not_aligned_through_numbas_dispatch():
    """The machine code the plan calls is the one for aligned arrays; an input that is
    not aligned (a float64 view at an odd byte) goes through the dispatcher, which types
    it: the plain forward's bits, and no fallback."""
    x = np.random.default_rng(71).normal(size=16)
    odd = np.frombuffer(b"\0" + x.tobytes(), dtype=np.float64, offset=1)
    assert not odd.flags.aligned and odd.flags.c_contiguous
    with kernels_of("numba"):
        graph = jit.optimize(jit.trace(lambda v: ((v * 2.0).sin() + v).exp(),
                                       dl.tensor(x.copy())).graph, ["fuse"])
        program = Program(graph, prepared=True)
        _assert_bits(*_prepared_and_plain_without_fallback(program, x))
        got, want = _prepared_and_plain_without_fallback(program, odd)
        _assert_bits(got, want)
        _assert_bits(got, program.run([x]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_tie_of_signed_zeros_gives_numpys_second_argument(dtype):
    """NumPy's maximum and minimum give their second argument on a tie, so eager
    ``relu(-0.0)`` (``maximum(0, x)``) is -0.0; a fused kernel keeps the same signs, in
    the CPU loop and in the CUDA text (the fused kernel gave +0.0)."""
    a = np.array([0.0, -0.0, 1.0, np.nan, 2.0, -0.0], dtype=dtype)
    b = np.array([-0.0, 0.0, 1.0, 1.0, np.nan, -0.0], dtype=dtype)
    want_max, want_min = np.maximum(a, b), np.minimum(a, b)
    body = (("maximum", ("in0", "in1")), ("minimum", ("in0", "in1")))
    layout = kernels.Layout(body, (0, 1))
    _, ys = cuda_kernels.CudaKernel(layout, cuda_on_cpu.compile_for_cpu).run(np, [a, b], 6, dtype)
    for got, want in ((ys[0], want_max), (ys[1], want_min)):
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    x = dl.tensor(np.tile(np.array([-0.0, 1.0, -2.0, 0.0, np.nan], dtype=dtype), 20))
    fused = jit.trace(lambda t: dl.relu(t * 2.0) * 3.0, (x,), passes=("fuse",))
    eager = dl.relu(x * 2.0) * 3.0
    np.testing.assert_array_equal(np.signbit(fused(x).numpy()), np.signbit(eager.numpy()))
