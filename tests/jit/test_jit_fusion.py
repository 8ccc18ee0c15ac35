"""Elementwise fusion: one generated kernel per group, the same numbers as line by line.

The NumPy kernel runs the very same NumPy calls as the unfused lines, so its
results are equal bit for bit.  The numba kernel calls the C library's
``sin`` (not NumPy's): equal to rounding.  Both are checked on random graphs
and on every elementwise primitive of the registry.
"""

import json
import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_jit_passes import build, programs  # (the random programs of the passes test)

import difflab as dl
from difflab import export as E
from difflab import jit
from difflab.backend import numpy_namespace
from difflab.jit import fusion, kernels
from difflab.jit.graph import GraphError
from difflab.ops import registry

HAVE_NUMBA = fusion._numba_importable()
KERNELS = ["numpy", pytest.param("numba", marks=pytest.mark.skipif(
    not HAVE_NUMBA, reason="numba is not installed (pip install 'difflab[jit]')"))]


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


def _use(kernel):
    """Switch the kernel kind; returns the old setting."""
    old = fusion.USE_NUMBA
    fusion.USE_NUMBA = kernel == "numba"
    return old


def _same(kernel, got, want):
    if kernel == "numpy":
        np.testing.assert_array_equal(got, want)  # the same NumPy calls: the same bits
    else:
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("passes", [["fuse"], ["fold", "cse", "dce", "fuse"]])
@settings(max_examples=20, deadline=None)
@given(program=programs(), seed=st.integers(0, 2**31))
def test_fusion_preserves_results_on_random_graphs(kernel, passes, program, seed):
    old = _use(kernel)
    try:
        fn = build(*program)
        rng = np.random.default_rng(seed)
        x, y = (dl.tensor(rng.uniform(-2, 2, 3)) for _ in range(2))
        graph = jit.trace(fn, (x, y)).graph
        fused = jit.optimize(graph, passes)
        assert len(fused.nodes) <= len(graph.nodes)
        for _ in range(2):
            a, b = rng.uniform(-2, 2, 3), rng.uniform(-2, 2, 3)
            for w, g in zip(graph.run(a, b), fused.run(a, b)):
                _same(kernel, g, w)
    finally:
        fusion.USE_NUMBA = old


@pytest.mark.parametrize("kernel", KERNELS)
@settings(max_examples=10, deadline=None)
@given(program=programs(), seed=st.integers(0, 2**31))
def test_fusing_a_backward_graph_keeps_its_gradients(kernel, program, seed):
    old = _use(kernel)
    try:
        steps, _ = program
        fn = build(steps, [len(steps) + 1])
        rng = np.random.default_rng(seed)
        x, y = (dl.tensor(rng.uniform(-2, 2, 3)).requires_grad_() for _ in range(2))
        loss = jit.trace(lambda a, b: fn(a, b)[0].sum(), (x, y)).graph
        backward = jit.grad(loss)
        fused = jit.optimize(backward, ["fold", "cse", "dce", "fuse"])
        a, b = rng.uniform(-2, 2, 3), rng.uniform(-2, 2, 3)
        for w, g in zip(backward.run(a, b), fused.run(a, b)):
            _same(kernel, g, w)
    finally:
        fusion.USE_NUMBA = old


def _elementwise():
    return sorted(p.name for p in registry.elementwise_ops())


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("name", _elementwise())
def test_every_elementwise_rule_writes_a_kernel_line(kernel, name):
    """Each rule of the registry, fused behind an add, against the rule run by NumPy."""
    p = registry.get(name)
    low, high = p.rule.domain
    rng = np.random.default_rng(sum(map(ord, name)))
    a, b = rng.uniform(low, high, 50), rng.uniform(low, high, 50)
    if isinstance(p, registry.UnaryOp):
        body = (("add", ("in0", 0.0)), (name, ("t0",)))
        want = p.rule.forward(numpy_namespace, a + 0.0)
    else:
        body = (("add", ("in0", 0.0)), (name, ("t0", "in1")))
        want = p.rule.forward(numpy_namespace, a + 0.0, b)
    kind, k = fusion.compile_kernel(body, (1,), use_numba=kernel == "numba")
    if kind == "numba":
        out = np.empty(50)
        k(50, a, *([b] if len(body[1][1]) == 2 else []), out)
    else:
        (out,) = k(numpy_namespace, a, *([b] if len(body[1][1]) == 2 else []))
    _same(kind, out, want)


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
    old = _use("numpy")
    try:
        n = fusion.TILE * 3 + 17
        x = np.random.default_rng(1).normal(size=n)
        f = jit.trace(lambda x: (x.sin() * x + 1.0).tanh(), dl.tensor(x))
        fused = jit.optimize(f.graph, ["fuse"])
        np.testing.assert_array_equal(fused.run(x)[0], f.graph.run(x)[0])
    finally:
        fusion.USE_NUMBA = old


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


def test_float32_groups_run_the_numpy_kernel_with_float32_results():
    x = np.linspace(-1, 1, 9, dtype=np.float32)
    f = jit.trace(lambda x: (x.sin() * 2.0).exp(), dl.tensor(x))
    fused = jit.optimize(f.graph, ["fuse"])
    got = fused.run(x)[0]
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, f.graph.run(x)[0])


def test_a_fused_kernel_has_no_vjp_and_says_what_to_do():
    x = dl.tensor(np.ones(3)).requires_grad_()
    fused = jit.optimize(jit.trace(lambda x: (x.sin() * x).sum(), x).graph, ["fuse"])
    with pytest.raises(RuntimeError, match="differentiate the graph before fusing"):
        jit.grad(fused)


@pytest.mark.parametrize("body, outputs, why", [
    ((("add", ("in0", "__import__('os')")),), (0,), "neither an input"),
    ((("add", ("in0", "t0")),), (0,), "neither an input"),
    ((("matmul", ("in0", "in1")),), (0,), "not an elementwise primitive"),
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
    f = jit.trace(lambda v: (v.sin() * 2.0 + 1.0).tanh().sum(), t, passes=["fuse"])
    assert f.graph.op_counts() == {"fused": 1}
    got = f(t)
    assert got.device.type == "cuda"
    np.testing.assert_allclose(got.cpu().numpy(), np.tanh(np.sin(x) * 2.0 + 1.0).sum(),
                               rtol=1e-12)


def _compile_c(tmp_path, body, outputs, n_inputs, kinds=None):
    """The CUDA kernel's C lines in a plain C loop, built with the system's compiler.

    CuPy's ElementwiseKernel runs the same ``operation`` text once per element;
    compiling it for the CPU checks the generated C (syntax and numbers)
    where there is no GPU.
    """
    import ctypes
    import shutil

    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to check the generated CUDA code with")
    in_params, out_params, operation = fusion.c_source(body, outputs, n_inputs, kinds)
    assert in_params == ", ".join(f"float64 in{k}" for k in range(n_inputs))
    args = ", ".join([f"const double *in{k}_" for k in range(n_inputs)]
                     + [f"double *out{k}_" for k in range(len(outputs))])
    source = (
        "#include <math.h>\n"
        f"void kernel(long n, {args}) {{\n"
        "  for (long i = 0; i < n; i++) {\n"
        + "".join(f"    double in{k} = in{k}_[i];\n" for k in range(n_inputs))
        + "".join(f"    double out{k};\n" for k in range(len(outputs)))
        + "".join(f"    {line}\n" for line in operation.splitlines())
        + "".join(f"    out{k}_[i] = out{k};\n" for k in range(len(outputs)))
        + "  }\n}\n")
    (tmp_path / "k.c").write_text(source)
    subprocess.run([compiler, "-O1", "-shared", "-fPIC", "-o", str(tmp_path / "k.so"),
                    str(tmp_path / "k.c"), "-lm"], check=True, capture_output=True)
    lib = ctypes.CDLL(str(tmp_path / "k.so"))

    def run(*inputs):
        n = inputs[0].size
        outs = [np.empty(n) for _ in outputs]
        pointers = [a.ctypes.data_as(ctypes.c_void_p) for a in (*inputs, *outs)]
        lib.kernel(ctypes.c_long(n), *pointers)
        return outs

    return run


@pytest.mark.parametrize("name", _elementwise())
def test_every_elementwise_rule_writes_a_cuda_kernel_line(tmp_path, name):
    p = registry.get(name)
    low, high = p.rule.domain
    rng = np.random.default_rng(sum(map(ord, name)))
    a, b = rng.uniform(low, high, 50), rng.uniform(low, high, 50)
    unary = isinstance(p, registry.UnaryOp)
    body = (("add", ("in0", 0.0)), (name, ("t0",) if unary else ("t0", "in1")))
    want = p.rule.forward(numpy_namespace, a + 0.0, *([] if unary else [b]))
    run = _compile_c(tmp_path, body, (1, 0), 1 if unary else 2)
    got, first = run(a, *([] if unary else [b]))
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(first, a)


def test_a_cuda_kernel_of_a_backward_graph_computes_its_gradient(tmp_path):
    """The elementwise part of a fused forward + backward, in C, against the NumPy kernel.

    On the GPU the loss's sum is then CuPy's ``sum`` of the delivered terms.
    """
    x = np.linspace(-1.5, 1.5, 41)
    f = jit.trace(lambda v: ((v * 0.5).sin() * v + 1.0).tanh().sum(),
                  dl.tensor(x).requires_grad_())
    fused = jit.optimize(jit.grad(f.graph), ["fold", "cse", "dce", "fuse"])
    assert fused.op_counts() == {"fused": 1}
    node = fused.nodes[0]
    layout = kernels.Layout(node.params["body"], node.params["outputs"])
    assert "reduce" in layout.kinds
    run = _compile_c(tmp_path, layout.body, layout.delivered, layout.n_inputs, layout.kinds)
    values = {"v": x, **fused.constants}
    inputs = [np.broadcast_to(values[r.name], x.shape).copy() for r in node.args]
    _, array_kernel = fusion.compile_kernel(layout.body, layout.outputs, use_numba=False)
    want = array_kernel(numpy_namespace, *inputs)
    got = run(*inputs)
    assert len(got) == len(want) >= 2
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15)
    loss, grad = fused.run(x)
    summed = layout.reads[next(j for j, k in enumerate(layout.kinds) if k == "reduce")]
    np.testing.assert_allclose(loss, got[layout.delivered.index(int(summed[1:]))].sum(),
                               rtol=1e-13)
