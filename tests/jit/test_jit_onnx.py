"""ONNX export: the file runs in onnxruntime and gives difflab's outputs."""

import numpy as np
import pytest

import difflab as dl
import difflab.nn as nn
import difflab.onnx as donnx
from difflab.export import export

onnx = pytest.importorskip("onnx", reason="onnx is not installed (pip install 'difflab[jit]')")
ort = pytest.importorskip("onnxruntime",
                          reason="onnxruntime is not installed (pip install 'difflab[jit]')")

rng = np.random.default_rng(0)


def _run(path, *inputs):
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return session.run(None, dict(zip(names, inputs)))


def mlp(gelu=True):
    # (onnxruntime has no float64 Erf on the CPU: the float64 model has no GELU)
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(),
                         nn.Linear(16, 16), nn.Sigmoid(), nn.Linear(16, 8),
                         nn.GELU() if gelu else nn.Tanh(), nn.Linear(8, 4), nn.Softmax(dim=1))


def cnn():
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Conv2d(4, 6, 3, stride=1, padding=1, groups=2),
                         nn.ReLU(), nn.AvgPool2d(2), nn.Flatten(), nn.Linear(6 * 2 * 2, 5))


@pytest.mark.parametrize("opset", [17, 20])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mlp_runs_in_onnxruntime_with_difflabs_outputs(tmp_path, opset, dtype):
    dl.manual_seed(0)
    model = mlp(gelu=False).to(dl.float64) if dtype == np.float64 else mlp()
    x = dl.tensor(rng.normal(size=(5, 6)).astype(dtype))
    path = tmp_path / "mlp.onnx"
    proto = donnx.export(model, (x,), path, opset_version=opset)
    ops = {n.op_type for n in proto.graph.node}
    assert {"Gemm", "Relu", "Tanh", "Sigmoid", "Softmax"} <= ops
    if dtype == np.float32:
        assert ("Gelu" in ops) == (opset >= 20) and ("Erf" in ops) == (opset < 20)
    xs = rng.normal(size=(5, 6)).astype(dtype)  # new numbers, not the traced ones
    (got,) = _run(path, xs)
    want = model(dl.tensor(xs)).detach().numpy()
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_cnn_with_batch_norm_runs_in_onnxruntime(tmp_path):
    dl.manual_seed(1)
    model = cnn()
    model.train()
    model(dl.tensor(rng.normal(size=(8, 1, 8, 8)).astype(np.float32)))  # running statistics
    model.eval()
    x = dl.tensor(rng.normal(size=(3, 1, 8, 8)).astype(np.float32))
    path = tmp_path / "cnn.onnx"
    proto = donnx.export(model, (x,), path)
    ops = {n.op_type for n in proto.graph.node}
    assert {"Conv", "MaxPool", "AveragePool", "Reshape", "Gemm"} <= ops
    assert proto.ir_version == 8 and proto.opset_import[0].version == 17
    (got,) = _run(path, x.numpy())
    np.testing.assert_allclose(got, model(x).detach().numpy(), rtol=1e-4, atol=1e-5)


def test_log_softmax_sum_and_matmul_of_a_function(tmp_path):
    w = dl.tensor(rng.normal(size=(4, 3)))

    def f(x):
        h = nn.functional.log_softmax(x @ w, dim=1)
        return h.sum(dim=1), (h * 2.0 - 1.0).exp()

    x = dl.tensor(rng.normal(size=(2, 4)))
    path = tmp_path / "f.onnx"
    donnx.export(f, (x,), path)
    got = _run(path, x.numpy())
    for g, want in zip(got, f(x)):
        np.testing.assert_allclose(g, want.numpy(), rtol=1e-12)


@pytest.mark.parametrize("shape", [(3,), (2, 3)])
def test_a_write_under_no_grad_exports_the_written_values(tmp_path, shape):
    """(The graph's no_grad_write had no ONNX translation: export failed.)"""
    def f(w, y):
        with dl.no_grad():
            w.mul_(0.5)
        return (w * y).sum()

    w, y = rng.normal(size=shape), rng.normal(size=shape)
    path = tmp_path / "f.onnx"
    donnx.export(f, (dl.tensor(w.copy(), requires_grad=True), dl.tensor(y)), path)
    graph = onnx.load(str(path)).graph
    assert "Identity" in [n.op_type for n in graph.node]
    w2, y2 = rng.normal(size=shape), rng.normal(size=shape)
    loss, written = _run(path, w2, y2)  # (the graph's outputs: f's, then the write's)
    eager = dl.tensor(w2.copy(), requires_grad=True)
    want = f(eager, dl.tensor(y2)).detach().numpy()
    assert loss.dtype == want.dtype  # (onnxruntime's ReduceSum adds in its own order)
    np.testing.assert_allclose(loss, want, rtol=1e-12)
    assert written.tobytes() == eager.detach().numpy().tobytes() == (w2 * 0.5).tobytes()


def test_an_operation_without_an_onnx_translation_is_named(tmp_path):
    x = dl.tensor(rng.normal(size=(3, 4)))
    with pytest.raises(donnx.ONNXExportError, match="'cumsum'.*v1 = cumsum"):
        donnx.export(lambda x: x.cumsum(dim=1) * 2.0, (x,), tmp_path / "bad.onnx")
    assert not (tmp_path / "bad.onnx").exists()


def test_an_unsupported_opset_is_a_clear_error(tmp_path):
    x = dl.tensor(np.ones((2, 2)))
    with pytest.raises(ValueError, match="opset_version must be between 13 and"):
        donnx.export(lambda x: x + 1.0, (x,), tmp_path / "f.onnx", opset_version=99)
    ep = export(lambda x: x + 1.0, (x,))
    with pytest.raises(ValueError, match="opset_version must be between 13 and"):
        donnx.graph_to_onnx(ep.graph, ep.state_dict, 9)


def test_an_older_opset_is_raised_to_the_lowest_difflab_writes_with_a_warning(tmp_path):
    """(PyTorch's tutorials ask for opset 9 to 12; its own exporter now writes a newer one.)"""
    x = dl.tensor(np.ones((2, 2)))
    with pytest.warns(UserWarning, match="opset_version=9 is below 13"):
        proto = donnx.export(lambda x: x + 1.0, (x,), tmp_path / "f.onnx", opset_version=9)
    assert proto.opset_import[0].version == 13
    (got,) = _run(tmp_path / "f.onnx", np.ones((2, 2)))
    np.testing.assert_array_equal(got, np.full((2, 2), 2.0))


def test_without_the_onnx_package_the_error_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "onnx", None)  # import onnx fails
    with pytest.raises(ImportError, match="pip install onnx"):
        donnx.export(lambda x: x + 1.0, (dl.tensor(np.ones(2)),), tmp_path / "f.onnx")


def _primitive(name, **params):
    """A function of tensors applying the registry primitive ``name`` (settings bound)."""
    from difflab.autograd.engine import apply
    from difflab.ops.registry import get

    return lambda *xs: apply(get(name), *xs, **params)


_UNARY = ["neg", "exp", "log", "sqrt", "abs", "tanh", "sigmoid", "relu", "sin", "cos", "tan",
          "asin", "acos", "atan", "sinh", "cosh", "erf", "clone", "detach", "gelu"]
_BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "fmod", "remainder",
           "floor_divide", "trunc_divide"]
def _written_under_no_grad(w, y):
    """A write under no_grad into a tensor that requires grad (the graph's no_grad_write)."""
    w.requires_grad_()
    with dl.no_grad():
        w.mul_(0.5)
    return (w * y).sum()


#: One sample per ONNX translation: (function, input shapes).  Inputs lie in (0.1, 0.9), where
#: every primitive here is defined (log, sqrt, asin, acos, pow's base).
_SAMPLES = {
    **{name: (_primitive(name), [(2, 3)]) for name in _UNARY},
    **{name: (_primitive(name), [(2, 3), (2, 3)]) for name in _BINARY},
    "matmul": (_primitive("matmul"), [(2, 3), (3, 4)]),
    "linear": (_primitive("linear"), [(2, 3), (4, 3), (4,)]),
    "conv2d": (_primitive("conv2d", padding=(1, 1)), [(1, 2, 5, 5), (3, 2, 3, 3), (3,)]),
    "max_pool2d": (_primitive("max_pool2d", kernel=(2, 2), stride=(2, 2), padding=(0, 0),
                              dilation=(1, 1)), [(1, 2, 4, 4)]),
    "avg_pool2d": (_primitive("avg_pool2d", kernel=(2, 2), stride=(2, 2), padding=(0, 0)),
                   [(1, 2, 4, 4)]),
    "reshape": (_primitive("reshape", shape=(3, 2)), [(2, 3)]),
    "expand": (_primitive("expand", shape=(4, 2, 3)), [(2, 3)]),
    "permute": (_primitive("permute", axes=(1, 0)), [(2, 3)]),
    "softmax": (_primitive("softmax", dim=1), [(2, 3)]),
    "log_softmax": (_primitive("log_softmax", dim=0), [(2, 3)]),
    "sum": (_primitive("sum", axis=1, keepdims=True), [(2, 3)]),
    "to_dtype": (_primitive("to_dtype", dtype=np.dtype(np.float64)), [(2, 3)]),
    # one recurrent step, H = 3: (N, 3H) or (N, 4H) projections beside the (N, H) state
    "gru_cell": (_primitive("gru_cell"), [(2, 9), (2, 9), (2, 3)]),
    "lstm_cell_state": (_primitive("lstm_cell_state"), [(2, 12), (2, 3)]),
    "lstm_hidden_state": (_primitive("lstm_hidden_state"), [(2, 12), (2, 3)]),
    "no_grad_write": (_written_under_no_grad, [(2, 3), (2, 3)]),
}


def test_every_onnx_translation_has_a_sample_and_every_key_is_a_primitive():
    from difflab.jit.ops import OPERATIONS  # (the graph's own: no_grad_write)
    from difflab.ops import registry

    assert set(_SAMPLES) == set(donnx.TRANSLATIONS) == donnx.EXPORTABLE
    assert set(donnx.TRANSLATIONS) <= set(registry.PRIMITIVES) | set(OPERATIONS)


@pytest.mark.parametrize("name", sorted(_SAMPLES))
def test_each_onnx_translation_runs_in_onnxruntime_with_difflabs_outputs(tmp_path, name):
    fn, shapes = _SAMPLES[name]
    # float32: onnxruntime has no float64 Conv or Erf on the CPU
    xs = [dl.tensor(rng.uniform(0.1, 0.9, size=s).astype(np.float32)) for s in shapes]
    path = tmp_path / f"{name}.onnx"
    donnx.export(fn, tuple(xs), path, passes=())
    new = [rng.uniform(0.1, 0.9, size=s).astype(np.float32) for s in shapes]
    got = _run(path, *new)[0]  # (then a written input's values, for no_grad_write)
    want = fn(*[dl.tensor(a) for a in new]).detach().numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


# ------------------------------------------------------------------ the rounded divisions

_EDGES = [-0.0, 0.0, -4.0, 4.0, -3.5, 3.5, np.inf, -np.inf, np.nan, 2.0, -2.0, 1e30, 1e-40,
          1.0, 0.1]  # (1 // 0.1 is 9: fmod(1, 0.1) is 0.0999..., though 1 / 0.1 is 10.0)
_DIVISIONS = {
    "fmod": dl.fmod,
    "remainder": lambda x, y: x % y,
    "floor": lambda x, y: dl.div(x, y, rounding_mode="floor"),
    "trunc": lambda x, y: dl.div(x, y, rounding_mode="trunc"),
}


def _bits(array):
    """Comparable bits: equal values with equal signs (-0.0 is not 0.0), nan as nan."""
    array = np.asarray(array)
    return [("nan",) if np.isnan(v) else (float(v), bool(np.signbit(v))) for v in array.ravel()]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (NumPy's words on x % 0.0)
@pytest.mark.parametrize("name", sorted(_DIVISIONS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_rounded_divisions_export_bit_for_bit_on_every_edge(tmp_path, name, dtype):
    fn = _DIVISIONS[name]
    a, b = (np.array(column, dtype=dtype) for column in zip(*[
        (p, q) for p in _EDGES for q in _EDGES]))
    path = tmp_path / f"{name}.onnx"
    donnx.export(fn, (dl.tensor(a), dl.tensor(b)), path)
    proto = onnx.load(str(path))
    assert "Mod" in {n.op_type for n in proto.graph.node} or name == "trunc"
    (got,) = _run(path, a, b)
    want = fn(dl.tensor(a), dl.tensor(b)).numpy()
    assert got.dtype == want.dtype
    assert _bits(got) == _bits(want)  # (the signs of zeros included: np.fmod(-4, 2) is -0.0)


@pytest.mark.parametrize("name", sorted(_DIVISIONS))
def test_the_rounded_divisions_of_integers_export_exactly(tmp_path, name):
    fn = _DIVISIONS[name]
    a = np.array([7, -7, 7, -7, 0, 5, -6, 1, -1, 2**62 + 1], dtype=np.int64)
    b = np.array([3, 3, -3, -3, 4, -5, 3, 2, 2, 3], dtype=np.int64)
    path = tmp_path / f"{name}.onnx"
    donnx.export(fn, (dl.tensor(a), dl.tensor(b)), path)
    (got,) = _run(path, a, b)
    want = fn(dl.tensor(a), dl.tensor(b)).numpy()
    assert got.dtype == want.dtype == np.int64
    np.testing.assert_array_equal(got, want)


def test_a_remainder_by_a_number_exports_with_the_number_as_a_constant(tmp_path):
    x = np.array([-7.5, -4.0, 4.0, 7.5], dtype=np.float32)
    path = tmp_path / "mod.onnx"
    donnx.export(lambda x: (x % 2.0, dl.fmod(x, -3.0), x // 2.0), (dl.tensor(x),), path)
    got = _run(path, x)
    for g, want in zip(got, (x % 2.0, np.fmod(x, -3.0), x // 2.0)):
        assert _bits(g) == _bits(want)
