"""difflab.save / difflab.load: no pickle, atomic writes, clear errors, bit-identical reloads."""

import io
import os
import zipfile

import numpy as np
import pytest

import difflab as dl
import difflab.nn as nn
import difflab.optim as optim
from difflab.serialization import CheckpointError, load, save


class Custom(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(dl.randn(4, 3))
        self.b = nn.Parameter(dl.randn(3))
        self.block = nn.Sequential(nn.Linear(3, 5), nn.BatchNorm1d(5), nn.GELU(), nn.Linear(5, 2))

    def forward(self, x):
        return self.block(x @ self.w + self.b)


def test_custom_module_round_trip_is_bit_identical(tmp_path):
    dl.manual_seed(0)
    model = Custom()
    model(dl.randn(8, 4))  # update the BatchNorm running statistics
    model.eval()
    path = tmp_path / "model.pth"
    save(model.state_dict(), path)
    fresh = Custom()
    fresh.load_state_dict(load(path))
    fresh.eval()
    x = dl.randn(6, 4)
    assert np.array_equal(model(x).detach().numpy(), fresh(x).detach().numpy())
    for (k1, v1), (k2, v2) in zip(model.state_dict().items(), fresh.state_dict().items()):
        assert k1 == k2 and v1.dtype == v2.dtype and np.array_equal(v1.numpy(), v2.numpy())


def test_nested_objects_and_types_survive():
    obj = {
        "step": 3, "lr": 0.1, "name": "run", "flag": True, "none": None,
        "t": dl.tensor([1.0, 2.0], dtype=dl.float64), "i": dl.tensor([1, 2]),
        "nested": {1: [dl.zeros(2, 2), (1, "a")], "arr": np.arange(3, dtype=np.int16)},
    }
    buffer = io.BytesIO()
    save(obj, buffer)
    buffer.seek(0)
    back = load(buffer)
    assert back["step"] == 3 and back["lr"] == 0.1 and back["flag"] is True
    assert back["none"] is None and back["name"] == "run"
    assert back["t"].dtype == np.float64 and back["i"].dtype == np.int64
    assert list(back["nested"]) == [1, "arr"]  # int keys stay ints, order kept
    assert isinstance(back["nested"][1][1], tuple)
    assert back["nested"]["arr"].dtype == np.int16


def test_optimizer_state_round_trip(tmp_path):
    dl.manual_seed(0)
    model = nn.Linear(3, 2)
    opt = optim.Adam(model.parameters(), lr=0.01)
    for _ in range(3):
        opt.zero_grad()
        model(dl.randn(4, 3)).pow(2).sum().backward()
        opt.step()
    save({"model": model.state_dict(), "opt": opt.state_dict()}, tmp_path / "ckpt")
    ckpt = load(tmp_path / "ckpt")
    model2 = nn.Linear(3, 2)
    model2.load_state_dict(ckpt["model"])
    opt2 = optim.Adam(model2.parameters(), lr=0.5)
    opt2.load_state_dict(ckpt["opt"])
    assert opt2.param_groups[0]["lr"] == 0.01
    x = dl.randn(4, 3)
    for m, o in ((model, opt), (model2, opt2)):
        o.zero_grad()
        m(x).pow(2).sum().backward()
        o.step()
    assert np.array_equal(model.weight.detach().numpy(), model2.weight.detach().numpy())


def test_no_pickle_objects_refused():
    with pytest.raises(TypeError, match="cannot store an object of type"):
        save({"f": lambda: 0}, io.BytesIO())
    with pytest.raises(TypeError, match="dtype=object"):
        save(np.array([object()]), io.BytesIO())


def test_truncated_and_corrupted_files(tmp_path):
    path = tmp_path / "m.pth"
    save({"w": dl.randn(50, 50)}, path)
    data = path.read_bytes()
    (tmp_path / "trunc.pth").write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="truncated or corrupted"):
        load(tmp_path / "trunc.pth")
    corrupted = bytearray(data)
    corrupted[len(data) // 2] ^= 0xFF  # flip bits inside the array data
    (tmp_path / "bad.pth").write_bytes(bytes(corrupted))
    with pytest.raises(CheckpointError):
        load(tmp_path / "bad.pth")
    (tmp_path / "text.pth").write_text("hello")
    with pytest.raises(CheckpointError):
        load(tmp_path / "text.pth")
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as zf:
        zf.writestr("manifest.json", '{"format": "something-else"}')
    with pytest.raises(CheckpointError, match="not a difflab checkpoint"):
        load(tmp_path / "other.zip")
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "missing.pth")


def test_interrupted_save_keeps_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "m.pth"
    save({"w": dl.ones(3)}, path)
    import difflab.serialization as ser

    def explode(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(ser.np.lib.format, "write_array", explode)
    with pytest.raises(KeyboardInterrupt):
        save({"w": dl.zeros(3)}, path)
    monkeypatch.undo()
    assert np.array_equal(load(path)["w"].numpy(), np.ones(3, np.float32))
    assert os.listdir(tmp_path) == ["m.pth"]  # no temporary file left behind


def test_load_into_model_with_wrong_shapes_is_clear(tmp_path):
    save(nn.Linear(3, 2).state_dict(), tmp_path / "a")
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        nn.Linear(4, 2).load_state_dict(load(tmp_path / "a"))
