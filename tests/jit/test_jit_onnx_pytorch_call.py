"""``torch.onnx.export`` as PyTorch programs call it: ``import difflab as torch`` runs them.

The keywords PyTorch's exporter takes (input and output names, the training mode,
a file object, constant folding, ...) do what they do there, and the ones difflab
cannot honour are refused or warned about by name.
"""

import io
import warnings

import numpy as np
import pytest

import difflab as torch  # (as a PyTorch program spells it)

onnx = pytest.importorskip("onnx", reason="onnx is not installed (pip install 'difflab[jit]')")
ort = pytest.importorskip("onnxruntime",
                          reason="onnxruntime is not installed (pip install 'difflab[jit]')")


def _session(data: bytes):
    return ort.InferenceSession(data, providers=["CPUExecutionProvider"])


def _net():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.ReLU(),
                               torch.nn.Dropout(0.5), torch.nn.Linear(8, 3))


def test_the_tutorials_call_runs_and_onnxruntime_gives_the_eval_outputs():
    """The call of PyTorch's ONNX tutorial: module in training mode, one example tensor,
    a file, names and dynamic axes; the file holds the eval-mode model, and the module
    is left in training mode as it was."""
    model = _net()
    model.train()
    x = torch.randn(5, 4)
    buffer = io.BytesIO()
    with pytest.warns(UserWarning, match="dynamic_axes"):
        torch.onnx.export(model, x, buffer, export_params=True, opset_version=17,
                          do_constant_folding=True, input_names=["input"],
                          output_names=["output"],
                          dynamic_axes={"input": {0: "batch_size"}, "output": {0: "batch_size"}})
    assert model.training and all(m.training for m in model.modules())
    session = _session(buffer.getvalue())
    assert [i.name for i in session.get_inputs()] == ["input"]
    assert [o.name for o in session.get_outputs()] == ["output"]
    (got,) = session.run(None, {"input": x.numpy()})
    model.eval()
    np.testing.assert_allclose(got, model(x).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_training_mode_preserve_and_training_trace_the_module_as_asked(tmp_path):
    model = _net()
    model.eval()
    x = torch.randn(6, 4)
    path = tmp_path / "net.onnx"
    torch.onnx.export(model, (x,), path, training=torch.onnx.TrainingMode.PRESERVE)
    assert not model.training
    # (training-mode dropout draws a mask at run time: no ONNX translation, said by name)
    with pytest.raises(torch.onnx.ONNXExportError, match="dropout_mask"):
        torch.onnx.export(model, (x,), path, training=torch.onnx.TrainingMode.TRAINING)
    assert not any(m.training for m in model.modules())  # (put back as it was)
    model.train()
    with pytest.raises(torch.onnx.ONNXExportError, match="dropout_mask"):
        torch.onnx.export(model, (x,), path, training=torch.onnx.TrainingMode.PRESERVE)
    assert all(m.training for m in model.modules())
    with pytest.raises(TypeError, match="TrainingMode"):
        torch.onnx.export(model, (x,), path, training=True)


def test_names_rename_the_inputs_wherever_read_and_copy_the_outputs():
    def two_in_two_out(a, b):
        return a * b + a, (a - b).relu()

    a, b = torch.randn(3), torch.randn(3)
    proto = torch.onnx.export(two_in_two_out, (a, b), None, input_names=["left", "right"],
                              output_names=["mixed"])  # (fewer names than outputs)
    assert [i.name for i in proto.graph.input] == ["left", "right"]
    assert proto.graph.output[0].name == "mixed"
    session = _session(proto.SerializeToString())
    got = session.run(None, {"left": a.numpy(), "right": b.numpy()})
    want = two_in_two_out(a, b)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-6)


def test_an_output_that_is_an_input_keeps_both_names():
    x = torch.randn(2)
    proto = torch.onnx.export(lambda v: v, (x,), None, input_names=["x"], output_names=["y"])
    (got,) = _session(proto.SerializeToString()).run(["y"], {"x": x.numpy()})
    np.testing.assert_array_equal(got, x.numpy())


def test_kwargs_that_are_not_tensors_are_fixed_in_the_file():
    def scaled(v, factor=1.0):
        return v * factor

    x = torch.randn(3)
    proto = torch.onnx.export(scaled, (x,), None, kwargs={"factor": 3.0})
    (got,) = _session(proto.SerializeToString()).run(None, {proto.graph.input[0].name: x.numpy()})
    np.testing.assert_allclose(got, 3.0 * x.numpy(), rtol=1e-6)


def test_verbose_prints_the_graph(capsys):
    torch.onnx.export(torch.nn.Linear(2, 2), torch.ones(1, 2), None, verbose=True)
    assert "Gemm" in capsys.readouterr().out


def test_without_folding_the_file_still_runs():
    x = torch.randn(4)
    proto = torch.onnx.export(lambda v: v * (torch.ones(4) * 2.0), (x,), None,
                              do_constant_folding=False)
    (got,) = _session(proto.SerializeToString()).run(None, {proto.graph.input[0].name: x.numpy()})
    np.testing.assert_allclose(got, 2.0 * x.numpy(), rtol=1e-6)


@pytest.mark.parametrize("keywords, error, match", [
    (dict(input_names=["a", "b"]), ValueError, "2 names for 1 inputs"),
    (dict(input_names=["a"], output_names=["a"]), ValueError, "distinct"),
    (dict(input_names="input"), ValueError, "list of non-empty strings"),
    (dict(output_names=[""]), ValueError, "list of non-empty strings"),
    (dict(export_params=False), ValueError, "export_params"),
    (dict(keep_initializers_as_inputs=True), ValueError, "keep_initializers_as_inputs"),
    (dict(kwargs={"other": torch.ones(2)}), ValueError, "pass tensors in args"),
    (dict(opset_version=99), ValueError, "opset_version"),
])
def test_what_difflab_cannot_do_is_refused_by_name(keywords, error, match):
    with pytest.raises(error, match=match):
        torch.onnx.export(lambda v, other=None: v + 1.0, (torch.ones(2),), None, **keywords)


def test_a_name_that_already_names_a_tensor_is_refused():
    model = torch.nn.Linear(2, 2)
    names = [t.name for t in torch.onnx.export(model, torch.ones(1, 2), None).graph.initializer]
    with pytest.raises(ValueError, match="already name a tensor"):
        torch.onnx.export(model, torch.ones(1, 2), None, output_names=[names[0]])


def test_nothing_is_written_without_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.onnx.export(torch.nn.Linear(2, 2), torch.ones(1, 2))
    assert list(tmp_path.iterdir()) == []
