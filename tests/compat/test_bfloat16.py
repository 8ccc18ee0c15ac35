"""bfloat16 tensors (ml_dtypes' NumPy type): creation, casts, arithmetic computed in float32
and rounded, PyTorch's promotion, printing, gradients, modules, and autocast regions that
run the matrix products in bfloat16; and the explanation when ml_dtypes is missing."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

import difflab as dl
from difflab import dtypes
from difflab.amp import autocast_mode

pytestmark = pytest.mark.skipif(dtypes.BFLOAT16 is None, reason="needs ml_dtypes")
RNG = np.random.default_rng(2)


def _rounded(a):
    return np.asarray(a, dtype=np.float32).astype(dtypes.BFLOAT16).astype(np.float32)


def test_creation_casts_and_printing():
    x = dl.tensor([1.0, 1 / 3, 3e38], dtype=dl.bfloat16)
    assert x.dtype == dl.bfloat16 and x.dtype.is_floating_point and x.element_size() == 2
    assert x.float().tolist() == _rounded([1.0, 1 / 3, 3e38]).tolist()
    assert dl.ones(2).to(dl.bfloat16).dtype == dl.bfloat16 == dl.zeros(2).bfloat16().dtype
    assert dl.randn(3, dtype=dl.bfloat16).dtype == dl.bfloat16
    # (printed as the float32 values are, with the dtype named)
    assert repr(dl.tensor([1.0, 2.5], dtype=dl.bfloat16)) == \
        repr(dl.tensor([1.0, 2.5]))[:-1] + ", dtype=difflab.bfloat16)"
    assert str(dl.bfloat16) == "difflab.bfloat16"


@pytest.mark.parametrize("name", ["add", "mul", "div", "exp", "tanh", "matmul", "sum"])
def test_arithmetic_computes_in_float32_and_rounds(name):
    a, b = RNG.normal(size=(3, 3)), RNG.normal(size=(3, 3))
    ta, tb = dl.tensor(a, dtype=dl.bfloat16), dl.tensor(b, dtype=dl.bfloat16)
    fa, fb = _rounded(a), _rounded(b)
    ours = {"add": lambda: ta + tb, "mul": lambda: ta * tb, "div": lambda: ta / tb,
            "exp": lambda: ta.exp(), "tanh": lambda: dl.tanh(ta), "matmul": lambda: ta @ tb,
            "sum": lambda: ta.sum(1)}[name]()
    want = {"add": fa + fb, "mul": fa * fb, "div": fa / fb, "exp": np.exp(fa),
            "tanh": np.tanh(fa), "matmul": fa @ fb, "sum": fa.sum(1)}[name]
    assert ours.dtype == dl.bfloat16
    np.testing.assert_array_equal(ours.float().numpy(), _rounded(want))


def test_promotion_follows_pytorch():
    b = dl.ones(2, dtype=dl.bfloat16)
    assert (b + dl.ones(2)).dtype == dl.float32
    assert (b + dl.ones(2, dtype=dl.float16)).dtype == dl.float32
    assert (b + dl.ones(2, dtype=dl.float64)).dtype == dl.float64
    assert (b * 2.5).dtype == (b + dl.tensor([1, 2])).dtype == dl.bfloat16
    assert dl.promote_types(dl.bfloat16, dl.float16) == dl.float32


def test_gradients_modules_and_a_training_step():
    w = dl.ones(3, dtype=dl.bfloat16, requires_grad=True)
    x = dl.tensor([1.0, 2.5, 3.14159], dtype=dl.bfloat16)
    (w * x).sum().backward()
    assert w.grad.dtype == dl.bfloat16 and w.grad.tolist() == x.tolist()
    model = dl.nn.Linear(3, 2).bfloat16()
    assert model.weight.dtype == dl.bfloat16
    optimizer = dl.optim.SGD(model.parameters(), lr=0.1)
    before = model.weight.detach().float().numpy().copy()
    model(x.reshape(1, 3)).sum().backward()
    optimizer.step()
    after = model.weight.detach().float().numpy()
    assert model.weight.dtype == dl.bfloat16 and not np.array_equal(before, after)


def test_autocast_runs_matrix_products_in_bfloat16_and_losses_in_float32():
    model = dl.nn.Linear(4, 3)
    x, target = dl.randn(5, 4), dl.randn(5, 3)
    with dl.autocast("cpu"):
        y = model(x)
        loss = dl.nn.functional.mse_loss(y, target)
        assert (y @ dl.ones(3, 1)).dtype == dl.bfloat16 and y.relu().dtype == dl.bfloat16
    assert y.dtype == dl.bfloat16 and loss.dtype == dl.float32
    want = _rounded(_rounded(x.numpy()) @ _rounded(model.weight.detach().numpy()).T
                    + _rounded(model.bias.detach().numpy()))
    np.testing.assert_allclose(y.detach().float().numpy(), want, rtol=1e-2)
    loss.backward()
    assert model.weight.grad.dtype == dl.float32  # (the cast is on the tape)
    with dl.autocast("cpu", dtype=dl.float16):
        assert model(x).dtype == dl.float16
    assert model(x).dtype == dl.float32


def test_without_ml_dtypes_the_name_explains(monkeypatch):
    missing = dtypes._MissingDtype()
    with pytest.raises(TypeError, match="pip install ml_dtypes"):
        dtypes.as_dtype(missing)
    with pytest.raises(TypeError, match="pip install ml_dtypes"):
        np.zeros(2, dtype=missing)
    monkeypatch.setattr(autocast_mode, "BFLOAT16", None)
    with pytest.warns(UserWarning, match="ml_dtypes"):
        region = dl.autocast("cpu")
    with region:
        assert dl.nn.Linear(2, 1)(dl.ones(1, 2)).dtype == dl.float32


def test_checkpoints_keep_bfloat16_and_refuse_forged_flags(tmp_path):
    model = dl.nn.Linear(3, 2).bfloat16()
    x = dl.tensor([1.0, 2.5, 1 / 3], dtype=dl.bfloat16)
    path = tmp_path / "bf16.pt"
    dl.save({"x": x, "state": model.state_dict(), "model": model}, path)
    back = dl.load(path)
    assert back["x"].dtype == dl.bfloat16 and back["x"].tolist() == x.tolist()
    assert back["state"]["weight"].dtype == dl.bfloat16
    assert back["model"].weight.requires_grad and back["model"].weight.dtype == dl.bfloat16
    with pytest.raises(TypeError, match="save it as a tensor"):
        dl.save(np.ones(2, dtype=dtypes.BFLOAT16), tmp_path / "array.pt")
    dl.save({"x": x}, path)
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    manifest = json.loads(members["manifest.json"])
    assert manifest["object"]["__dict__"][0][1]["bfloat16"] is True
    manifest["object"]["__dict__"][0][1]["bfloat16"] = "yes"  # a forged flag
    members["manifest.json"] = json.dumps(manifest).encode()
    forged = tmp_path / "forged.pt"
    with zipfile.ZipFile(forged, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    with pytest.raises(dl.serialization.CheckpointError, match="uint16 bits"):
        dl.load(forged)
