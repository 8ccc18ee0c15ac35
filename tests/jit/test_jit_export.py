"""Export, save and load a graph; run it in a process that never sees the user's code."""

import json
import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import difflab as dl
from difflab import export as E
from difflab import jit

rng = np.random.default_rng(0)


class UserNet(dl.nn.Module):
    """A model only this file defines: the loading process must not need it."""

    def __init__(self):
        super().__init__()
        self.conv = dl.nn.Conv2d(1, 2, 3, padding=1)
        self.fc = dl.nn.Linear(2 * 4 * 4, 3)

    def forward(self, x):
        h = dl.nn.functional.max_pool2d(self.conv(x).relu(), 2)
        h = h.reshape(x.shape[0], -1)
        return dl.nn.functional.log_softmax(self.fc(h), dim=1), h[:, ::3].sum()


@pytest.fixture
def model_and_input():
    dl.manual_seed(0)
    model = UserNet()
    return model, dl.tensor(rng.normal(size=(2, 1, 8, 8)).astype(np.float32))


def test_export_has_graph_and_module_equal_to_eager(model_and_input):
    model, x = model_and_input
    ep = E.export(model, (x,))
    assert {"conv2d", "max_pool2d", "linear", "log_softmax"} <= set(ep.graph.op_counts())
    assert set(ep.state_dict) == {"conv.weight", "conv.bias", "fc.weight", "fc.bias"}
    got, want = ep.module()(x), model(x)
    np.testing.assert_array_equal(got[0].numpy(), want[0].detach().numpy())
    np.testing.assert_array_equal(got[1].numpy(), want[1].detach().numpy())


def test_save_and_load_in_a_fresh_process(tmp_path, model_and_input):
    model, x = model_and_input
    path = tmp_path / "net.dlgraph"
    E.save(E.export(model, (x,), passes=["fold", "cse", "dce"]), path)
    np.save(tmp_path / "x.npy", x.numpy())
    with zipfile.ZipFile(path) as zf:  # a zip of JSON and .npy, nothing pickled
        assert all(n == "manifest.json" or n.endswith(".npy") for n in zf.namelist())
    script = (
        "import sys, numpy as np\n"
        "from difflab import export\n"
        f"ep = export.load({str(path)!r})\n"
        f"out = ep.module()(np.load({str(tmp_path / 'x.npy')!r}))\n"
        f"np.save({str(tmp_path / 'y0.npy')!r}, out[0].numpy())\n"
        f"np.save({str(tmp_path / 'y1.npy')!r}, out[1].numpy())\n"
        "assert not [m for m in sys.modules if 'test_jit' in m or m.startswith('tests')]\n"
    )
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(dl.__file__)))
    subprocess.run([sys.executable, "-c", script], check=True, cwd=tmp_path, env=env,
                   timeout=120)
    want = model(x)
    np.testing.assert_array_equal(np.load(tmp_path / "y0.npy"), want[0].detach().numpy())
    np.testing.assert_array_equal(np.load(tmp_path / "y1.npy"), want[1].detach().numpy())


def test_a_backward_graph_survives_save_and_load(tmp_path):
    f = jit.trace(lambda x, w: (dl.tanh(x @ w).relu() * x.sum()).max(),
                  (dl.tensor(np.ones((3, 4))), dl.tensor(np.ones((4, 2)))))
    g = jit.grad(f.graph)
    ep = E.ExportedProgram(g, {})
    E.save(ep, tmp_path / "g.dlgraph")
    loaded = E.load(tmp_path / "g.dlgraph")
    assert loaded.graph.listing() == g.listing()
    args = rng.normal(size=(3, 4)), rng.normal(size=(4, 2))
    for a, b in zip(loaded.graph.run(*args), g.run(*args)):
        np.testing.assert_array_equal(a, b)


def _rewrite_manifest(path, change):
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    manifest = json.loads(members["manifest.json"])
    change(manifest)
    members["manifest.json"] = json.dumps(manifest).encode()
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)


def _entry(manifest, key):
    """The value of ``key`` in the saved object (a checkpoint dict is a list of pairs)."""
    for k, v in manifest["object"]["__dict__"]:
        if k == key:
            return v
    raise KeyError(key)


def _set(manifest, key, value):
    pairs = manifest["object"]["__dict__"]
    for pair in pairs:
        if pair[0] == key:
            pair[1] = value


@pytest.fixture
def saved(tmp_path):
    f = jit.trace(lambda x: (x.sin() * 2).sum(), dl.tensor(np.ones(3)))
    path = tmp_path / "f.dlgraph"
    E.save(E.ExportedProgram(f.graph, {}), path)
    return path


def test_a_newer_format_version_is_refused(saved):
    _rewrite_manifest(saved, lambda m: _set(m, "version", 99))
    with pytest.raises(E.GraphFileError, match="format version 99, newer than this difflab"):
        E.load(saved)


def test_an_edited_manifest_is_refused_by_its_checksum(saved):
    def swap_sin_for_cos(m):
        text = json.dumps(_entry(m, "graph")).replace('"sin"', '"cos"')
        _set(m, "graph", json.loads(text))

    _rewrite_manifest(saved, swap_sin_for_cos)
    with pytest.raises(E.GraphFileError, match="does not match its checksum"):
        E.load(saved)


def test_an_edited_manifest_with_a_matching_checksum_still_names_only_known_ops(saved):
    """An attacker can recompute the checksum; the op names are still only looked up."""
    from difflab.serialization import _codec

    def attack(m):
        graph = _entry(m, "graph")
        text = json.dumps(graph).replace('"sin"', '"os.system"')
        graph = json.loads(text)
        _set(m, "graph", graph)
        _set(m, "checksum", E._checksum(_codec().decode(graph)))

    _rewrite_manifest(saved, attack)
    with pytest.raises(E.GraphFileError, match="no operation named 'os.system'"):
        E.load(saved)


def test_a_graph_reading_an_undefined_value_is_refused(saved):
    from difflab.serialization import _codec

    def attack(m):
        graph = _entry(m, "graph")
        graph = json.loads(json.dumps(graph).replace('["ref", "v1"]', '["ref", "v9"]'))
        _set(m, "graph", graph)
        _set(m, "checksum", E._checksum(_codec().decode(graph)))

    _rewrite_manifest(saved, attack)
    with pytest.raises(E.GraphFileError, match="reads 'v9', which is not defined"):
        E.load(saved)


def test_a_plain_checkpoint_or_a_foreign_file_is_not_a_graph(tmp_path):
    dl.save({"w": dl.ones(2)}, tmp_path / "ck.pt")
    with pytest.raises(E.GraphFileError, match="not a saved graph"):
        E.load(tmp_path / "ck.pt")
    (tmp_path / "junk").write_bytes(b"not a zip")
    with pytest.raises(E.GraphFileError, match="not a valid difflab checkpoint"):
        E.load(tmp_path / "junk")


def test_a_wrong_shape_for_a_loaded_graph_is_a_clear_error(saved):
    with pytest.raises(jit.GraphError, match=r"traced for x: \(3,\) float64, but got \(4,\)"):
        E.load(saved).module()(np.ones(4))


def test_exporting_an_unregistered_operation_names_it():
    class Twice(dl.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    ep = E.export(lambda x: Twice.apply(x), dl.tensor(np.ones(2)))
    with pytest.raises(jit.GraphError, match="Twice"):
        E.save(ep, os.devnull)
