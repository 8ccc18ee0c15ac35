"""save(model) of a whole module as data, and load rebuilding only allowed classes (issue 27).

The tampering tests edit a real file's manifest the way an attacker who has read
serialization.py would, and check that each edit is refused with an error naming it.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import difflab as dl
from difflab import nn
from difflab.serialization import CheckpointError

F = nn.functional


class Net(nn.Module):
    """A user's model (not one of difflab's classes)."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.body = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Dropout(0.2), nn.Linear(6, 10))
        self.body[3].weight = nn.Parameter(dl.randn(10, 6))
        self.scale, self.name, self.shape = 0.5, "net", (2, 3)
        self.register_buffer("steps", dl.tensor(7))

    def forward(self, idx):
        return self.body(self.embed(idx)) * self.scale


def to_bytes(obj) -> bytes:
    buffer = io.BytesIO()
    dl.save(obj, buffer)
    return buffer.getvalue()


def from_bytes(data: bytes, **kwargs):
    return dl.load(io.BytesIO(data), **kwargs)


def edited(data: bytes, edit) -> bytes:
    """The file with its manifest changed by ``edit(manifest)``."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    manifest = json.loads(members["manifest.json"])
    edit(manifest)
    members["manifest.json"] = json.dumps(manifest).encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, value in members.items():
            zf.writestr(name, value)
    return out.getvalue()


def find_module(node, cls_name):
    """The manifest entry of the first module whose class name ends with ``cls_name``."""
    if isinstance(node, dict):
        if str(node.get("__module__", "")).endswith(cls_name):
            return node
        children = node.values()
    elif isinstance(node, list):
        children = node
    else:
        return None
    for child in children:
        found = find_module(child, cls_name)
        if found is not None:
            return found
    return None


def state_of(entry) -> dict:
    return {k: v for k, v in entry["state"]["__dict__"]}


def set_state(entry, key, value):
    pairs = entry["state"]["__dict__"]
    for pair in pairs:
        if pair[0] == key:
            pair[1] = value
            return
    pairs.append([key, value])


@pytest.fixture(autouse=True)
def no_safe_globals():
    dl.serialization.clear_safe_globals()
    yield
    dl.serialization.clear_safe_globals()


def test_a_difflab_model_round_trips_without_being_allowed():
    dl.manual_seed(0)
    model = nn.Sequential(nn.Conv1d(2, 4, 3, padding=1), nn.ReLU(), nn.Flatten(),
                          nn.Linear(4 * 5, 3), nn.BatchNorm1d(3))
    model(dl.randn(6, 2, 5))  # BatchNorm's running statistics move
    model.eval()
    loaded = from_bytes(to_bytes(model))
    x = dl.randn(6, 2, 5)
    assert type(loaded) is nn.Sequential and loaded.training is False
    assert np.array_equal(loaded(x).array, model(x).array)
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in loaded.parameters())
    assert np.array_equal(loaded[4].running_mean.array, model[4].running_mean.array)
    assert repr(loaded) == repr(model)
    # it trains: gradients reach the loaded parameters
    loaded(x).sum().backward()
    assert loaded[0].weight.grad is not None


def test_transformer_lstm_and_their_hyper_parameters_round_trip():
    dl.manual_seed(1)
    model = nn.ModuleDict({
        "t": nn.Transformer(8, 2, 1, 1, 16, activation=F.gelu, batch_first=True),
        "lstm": nn.LSTM(3, 4, num_layers=2, dropout=0.25, dtype=dl.float64),
    }).eval()
    loaded = from_bytes(to_bytes(model))
    assert loaded["t"].encoder.layers[0].activation is F.gelu
    assert loaded["lstm"].dropout == 0.25 and loaded["lstm"].weight_ih_l1.dtype == dl.float64
    src, tgt = dl.randn(2, 5, 8), dl.randn(2, 3, 8)
    assert np.array_equal(loaded["t"](src, tgt).array, model["t"](src, tgt).array)
    seq = dl.randn(4, 2, 3, dtype=dl.float64)
    assert np.array_equal(loaded["lstm"](seq)[0].array, model["lstm"](seq)[0].array)


def test_shared_modules_and_tied_weights_stay_shared():
    embed = nn.Embedding(5, 3)
    head = nn.Linear(3, 5, bias=False)
    head.weight = embed.weight  # weight tying, as in language models
    model = nn.Sequential(embed, head, embed)
    loaded = from_bytes(to_bytes(model))
    assert loaded[1].weight is loaded[0].weight and loaded[2] is loaded[0]
    assert len(list(loaded.parameters())) == 1


def test_a_users_class_needs_to_be_allowed():
    dl.manual_seed(2)
    data = to_bytes(Net())
    with pytest.raises(CheckpointError, match=r"asks for .*test_serialization_modules\.Net, "
                                              r"which is not an allowed module class") as err:
        from_bytes(data)
    assert "add_safe_globals([Net])" in str(err.value)
    with pytest.raises(CheckpointError, match="not an allowed"):
        from_bytes(data, weights_only=False)  # never a way around the check
    with dl.serialization.safe_globals([Net]):
        model = from_bytes(data)
    assert type(model) is Net and model.scale == 0.5 and model.shape == (2, 3)
    assert model.steps.item() == 7 and "steps" in dict(model.named_buffers())
    with pytest.raises(CheckpointError):
        from_bytes(data)  # the with block has ended
    dl.serialization.add_safe_globals([Net])
    assert dl.serialization.get_safe_globals() == [Net]
    idx = dl.tensor([1, 2, 3])
    assert np.array_equal(from_bytes(data).eval()(idx).array, model.eval()(idx).array)
    with pytest.raises(TypeError, match="the classes or functions themselves"):
        dl.serialization.add_safe_globals(["Net"])


def test_saving_what_is_not_data_names_the_attribute():
    model = nn.Linear(2, 2)
    model.hook = lambda x: x
    with pytest.raises(TypeError, match=r"Linear\.hook.*no importable name"):
        to_bytes(model)
    model.hook = io.BytesIO()
    with pytest.raises(TypeError, match=r"type BytesIO \(Linear\.hook\)"):
        to_bytes(model)

    def local_factory():
        class Local(nn.Module):
            pass
        return Local()

    with pytest.raises(TypeError, match="defined inside a function"):
        to_bytes(local_factory())


# ------------------------------------------------------------------------------ tampering


def _linear_file() -> bytes:
    return to_bytes(nn.Sequential(nn.Linear(2, 2)))


@pytest.mark.parametrize("name", [
    "os.system", "builtins.eval", "subprocess.Popen", "difflab.serialization.save",
    "difflab.data.dataloader.DataLoader", "difflab.nn.modules.layers.Linear.__init__",
    "tests.nn.test_serialization_modules.Net", 42,
])
def test_a_class_name_changed_to_anything_not_allowed_is_refused(name):
    def edit(manifest):
        find_module(manifest["object"], "Linear")["__module__"] = name

    with pytest.raises(CheckpointError, match="not an allowed module class|name must be"):
        from_bytes(edited(_linear_file(), edit))


def test_loading_never_imports_the_module_a_file_names():
    code = (
        "import io, json, sys, zipfile\n"
        "import difflab as dl\n"
        "buffer = io.BytesIO(); dl.save(dl.nn.Linear(2, 2), buffer)\n"
        "zin = zipfile.ZipFile(io.BytesIO(buffer.getvalue()))\n"
        "members = {n: zin.read(n) for n in zin.namelist()}\n"
        "manifest = json.loads(members['manifest.json'])\n"
        "manifest['object']['__module__'] = 'this.Zen'\n"
        "members['manifest.json'] = json.dumps(manifest).encode()\n"
        "out = io.BytesIO(); zout = zipfile.ZipFile(out, 'w')\n"
        "[zout.writestr(n, v) for n, v in members.items()]; zout.close(); out.seek(0)\n"
        "try:\n    dl.load(out)\nexcept dl.serialization.CheckpointError as e:\n"
        "    print('refused', 'this' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.strip() == "refused False", done.stdout + done.stderr


def test_a_function_reference_outside_the_allowed_table_is_refused():
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=4)
    data = to_bytes(layer)
    for name in ("builtins.exec", "os.system", "difflab.serialization.load"):
        def edit(manifest, name=name):
            set_state(manifest["object"], "activation", {"__global__": name})

        with pytest.raises(CheckpointError, match="not an allowed function or class"):
            from_bytes(edited(data, edit))


@pytest.mark.parametrize("key,value,message", [
    ("forward", {"__global__": "difflab.nn.functional.relu"}, "replace a method"),
    ("__class__", "x", "replace a method or a special attribute"),
    ("state_dict", 1, "replace a method"),
    ("training", "yes", "training must be true or false"),
    ("_parameters", {"__dict__": [["weight", {"__tensor__": 0}]]}, "must be a Parameter"),
    ("_modules", {"__dict__": [["0", 5]]}, "must be a Module or None"),
    ("_buffers", [], "must map names to values"),
    ("_non_persistent", {"__set__": [1]}, "must be a set of names"),
    # (hooks are code the module runs on every call: a file never sets them)
    ("_forward_hooks", [[{"__global__": "difflab.nn.functional.relu"}, False]], "hooks"),
    ("_forward_pre_hooks", [], "hooks"),
])
def test_tampered_module_state_is_refused(key, value, message):
    def edit(manifest):
        set_state(find_module(manifest["object"], "Linear"), key, value)

    with pytest.raises(CheckpointError, match=message):
        from_bytes(edited(_linear_file(), edit))


@pytest.mark.parametrize("edit,message", [
    (lambda m: m["object"].update(id="0"), "needs a new integer id"),
    (lambda m: set_state(m["object"], "_modules",
                         {"__dict__": [["0", {"__ref__": 9}]]}), "has not defined before"),
    (lambda m: set_state(m["object"], "dtype", {"__dtype__": "object"}), "not a dtype"),
    (lambda m: set_state(m["object"], "dtype", {"__dtype__": "V8"}), "not a dtype"),
    (lambda m: m["object"]["state"]["__dict__"].pop(0), "lacks"),
    (lambda m: m["object"].update(state=[1, 2]), "must be a dict of attribute names"),
    (lambda m: m["object"].update(extra=1), "unknown entry"),
    (lambda m: m.update(version=3), "newer difflab"),
])
def test_tampered_structure_is_refused(edit, message):
    with pytest.raises(CheckpointError, match=message):
        from_bytes(edited(_linear_file(), edit))


def test_a_module_referring_to_itself_is_rebuilt_without_recursion():
    def edit(manifest):
        set_state(manifest["object"], "_modules", {"__dict__": [["0", {"__ref__": 0}]]})

    loaded = from_bytes(edited(_linear_file(), edit))  # a cycle, as the file says
    assert loaded[0] is loaded


def test_an_array_shared_by_a_parameter_and_a_plain_tensor_is_refused():
    def edit(manifest):
        linear = find_module(manifest["object"], "Linear")
        weight = state_of(linear)["_parameters"]["__dict__"][0][1]
        set_state(linear, "extra", {"__tensor__": weight["__tensor__"]})

    with pytest.raises(CheckpointError, match="two tensors with different flags"):
        from_bytes(edited(_linear_file(), edit))


def test_plain_data_files_keep_format_version_1():
    with zipfile.ZipFile(io.BytesIO(to_bytes({"w": dl.ones(2)}))) as zf:
        assert json.loads(zf.read("manifest.json"))["version"] == 1
    with zipfile.ZipFile(io.BytesIO(_linear_file())) as zf:
        assert json.loads(zf.read("manifest.json"))["version"] == 2


def test_a_model_nested_deeper_than_load_reads_is_refused_when_saving():
    """save refuses, naming where, what load would refuse (the codec counts levels alike)."""
    model = nn.Linear(1, 1)
    for _ in range(32):  # (each module is three levels of the manifest; 100 is the limit)
        model = nn.Sequential(model)
    assert type(from_bytes(to_bytes(model))[0][0]) is nn.Sequential
    with pytest.raises(TypeError, match=r"nested more than 100 levels deep.*: Sequential\.0\.0"):
        to_bytes(nn.Sequential(model))


def test_a_tensor_in_a_state_dict_twice_is_stored_once_and_stays_shared():
    weight = nn.Parameter(dl.ones(3))
    data = to_bytes({"encoder": weight, "decoder": weight, "copy": dl.ones(3)})
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        manifest = json.loads(zf.read("manifest.json"))
        assert manifest["arrays"] == 2 and manifest["version"] == 1
    loaded = from_bytes(data)
    assert loaded["encoder"] is loaded["decoder"] and loaded["copy"] is not loaded["encoder"]
    assert isinstance(loaded["decoder"], nn.Parameter)


def test_a_module_inside_a_dict_is_named_by_its_place_when_refused():
    model = nn.Linear(2, 2)
    model.hook = lambda x: x
    with pytest.raises(TypeError, match=r"cannot save object\['model'\]\.hook: .* no importable"):
        to_bytes({"model": model, "step": 3})


def test_an_activation_from_any_part_of_nn_functional_round_trips():
    """F's functions live in several files (functional_activations, ...): each is allowed,
    by the name save writes and by its name under F."""
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=4, activation=F.hardtanh).eval()
    data = to_bytes(layer)
    assert from_bytes(data).activation is F.hardtanh
    x = dl.randn(3, 4)
    assert np.array_equal(from_bytes(data)(x).array, layer(x).array)

    def edit(manifest):
        set_state(manifest["object"], "activation", {"__global__": "difflab.nn.functional.silu"})

    assert from_bytes(edited(data, edit)).activation is F.silu


def test_a_module_with_hooks_saves_without_them_and_loads_without_them():
    lin = nn.Linear(2, 1)
    calls = []
    lin.register_forward_hook(lambda module, args, output: calls.append(1))  # (a lambda)
    lin.register_forward_pre_hook(print)
    loaded = from_bytes(to_bytes(lin))
    loaded(dl.ones(1, 2))
    assert calls == [], "the loaded module has no hooks"
    with zipfile.ZipFile(io.BytesIO(to_bytes(lin))) as zf:
        assert b"_forward" not in zf.read("manifest.json"), "hooks are not written"
    loaded.register_forward_hook(lambda module, args, output: calls.append(2))
    loaded(dl.ones(1, 2))
    assert calls == [2], "hooks can be registered on a loaded module"
