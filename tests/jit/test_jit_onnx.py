"""ONNX export: the file runs in onnxruntime and gives difflab's outputs."""

import numpy as np
import pytest

import difflab as dl
import difflab.nn as nn
import difflab.onnx as donnx

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


def test_an_operation_without_an_onnx_translation_is_named(tmp_path):
    x = dl.tensor(rng.normal(size=(3, 4)))
    with pytest.raises(donnx.ONNXExportError, match="'cumsum'.*v1 = cumsum"):
        donnx.export(lambda x: x.cumsum(dim=1) * 2.0, (x,), tmp_path / "bad.onnx")
    assert not (tmp_path / "bad.onnx").exists()


def test_an_unsupported_opset_is_a_clear_error(tmp_path):
    x = dl.tensor(np.ones((2, 2)))
    with pytest.raises(ValueError, match="opset_version must be between 13 and"):
        donnx.export(lambda x: x + 1.0, (x,), tmp_path / "f.onnx", opset_version=9)


def test_without_the_onnx_package_the_error_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "onnx", None)  # import onnx fails
    with pytest.raises(ImportError, match="pip install onnx"):
        donnx.export(lambda x: x + 1.0, (dl.tensor(np.ones(2)),), tmp_path / "f.onnx")
