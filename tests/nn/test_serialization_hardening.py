"""difflab.load on files built to break it, and difflab.save's files on disk.

Every malformed checkpoint must raise CheckpointError (never a bare KeyError, TypeError,
RecursionError or MemoryError), sizes are checked before anything is read, a failed
load_state_dict changes nothing, and saves leave normal permissions and no debris.
"""

import io
import json
import os
import signal
import stat
import subprocess
import sys
import tracemalloc
import zipfile

import numpy as np
import pytest

import difflab as dl
import difflab.nn as nn
from difflab.serialization import CheckpointError, load, save


def archive(manifest, arrays=(), compression=zipfile.ZIP_STORED) -> io.BytesIO:
    """A zip shaped like a checkpoint: a manifest (dict or raw text) and ``.npy`` members."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as zf:
        text = manifest if isinstance(manifest, str) else json.dumps(manifest)
        zf.writestr("manifest.json", text)
        for i, data in enumerate(arrays):
            if isinstance(data, np.ndarray):
                member = io.BytesIO()
                np.lib.format.write_array(member, data)
                data = member.getvalue()
            zf.writestr(f"arrays/{i}.npy", data)
    buffer.seek(0)
    return buffer


def manifest(obj, arrays=0, **extra):
    return {"format": "difflab-checkpoint", "version": 1, "arrays": arrays, "object": obj,
            **extra}


ONE = np.arange(3.0)


@pytest.mark.parametrize("bad", [
    manifest(1, arrays="1"),                                  # wrong type of count
    manifest(1, version="1"),                                 # wrong type of version
    manifest({"__tensor__": "0"}, 1),                         # reference not an int
    manifest({"__tensor__": True}, 1),                        # bool is not an index
    manifest({"__tensor__": 0, "requires_grad": "yes"}, 1),   # flag not a bool
    manifest({"__dict__": 5}),                                # dict body not a list
    manifest({"__dict__": [[1, 2, 3]]}),                      # not a pair
    manifest({"__dict__": [[[1], 2]]}),                       # unhashable key
    manifest({"__set__": [[1, 2]]}),                          # unhashable member
    manifest({"__tuple__": {"a": 1}}),                        # tuple body not a list
    manifest({"__tensor__": 0, "evil": 1}, 1),                # unknown key beside a tag
    manifest({"nothing": 1}),                                 # no tag at all
    manifest({"__tuple__": [], "__set__": []}),               # two tags
    manifest(1, surprise=True),                               # unknown top-level field
    {"format": "difflab-checkpoint", "version": 1, "arrays": 0},  # no object
    manifest({"__tensor__": 5}, 1),                           # a missing array
    manifest({"__ndarray__": -1}, 1),                         # a negative reference
])
def test_malformed_manifest_raises_checkpoint_error(bad):
    with pytest.raises(CheckpointError):
        load(archive(bad, [ONE] * bad["arrays"] if isinstance(bad["arrays"], int) else [ONE]))


def test_manifest_listing_more_arrays_than_the_file_holds():
    with pytest.raises(CheckpointError, match="lists 3 arrays; the file holds 1"):
        load(archive(manifest({"__ndarray__": 0}, 3), [ONE]))


def test_deeply_nested_manifest_is_a_checkpoint_error_not_recursion():
    deep = "[" * 50_000 + "]" * 50_000
    text = '{"format": "difflab-checkpoint", "version": 1, "arrays": 0, "object": ' + deep + "}"
    with pytest.raises(CheckpointError):
        load(archive(text))
    nested: object = 1
    for _ in range(200):
        nested = {"__tuple__": [nested]}
    with pytest.raises(CheckpointError, match="nested more than"):
        load(archive(manifest(nested)))


def test_saving_an_object_that_contains_itself_is_a_clear_error():
    cycle: list = [1]
    cycle.append(cycle)
    with pytest.raises(TypeError, match="contains itself"):
        save(cycle, io.BytesIO())


def test_npy_header_declaring_80_gb_is_refused_before_allocating():
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f8", "fortran_order": False, "shape": (10**10,)})
    tiny = header.getvalue()  # a ~128-byte file that claims 80 GB of float64
    assert len(tiny) < 200
    with pytest.raises(CheckpointError, match="declares 80,000,000,000 bytes"):
        load(archive(manifest({"__ndarray__": 0}, 1), [tiny]))


def test_zip_bomb_is_refused_from_its_declared_size_before_reading():
    big = np.zeros(20 * 2**20 // 8)  # 20 MB of zeros, compressed to ~20 KB
    bomb = archive(manifest({"__ndarray__": 0}, 1), [big], compression=zipfile.ZIP_DEFLATED)
    assert len(bomb.getvalue()) < 200_000
    tracemalloc.start()
    try:
        with pytest.raises(CheckpointError, match="more than the limit"):
            load(bomb, max_bytes=2**20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5 * 2**20  # nothing near the declared 20 MB was allocated
    bomb.seek(0)
    assert load(bomb).shape == big.shape  # within the default limit it loads


def test_npy_data_shorter_than_its_header_says():
    member = io.BytesIO()
    np.lib.format.write_array(member, np.arange(10.0))
    with pytest.raises(CheckpointError, match="truncated or forged"):
        load(archive(manifest({"__ndarray__": 0}, 1), [member.getvalue()[:-8]]))


def test_object_arrays_are_refused():
    member = io.BytesIO()
    np.lib.format.write_array(member, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(CheckpointError, match="Python objects"):
        load(archive(manifest({"__ndarray__": 0}, 1), [member.getvalue()]))


def test_integer_tensor_marked_requires_grad_is_a_checkpoint_error():
    with pytest.raises(CheckpointError, match="cannot require grad"):
        load(archive(manifest({"__tensor__": 0, "requires_grad": True}, 1), [np.arange(3)]))


def test_load_state_dict_changes_nothing_when_any_value_is_bad():
    dl.manual_seed(0)
    layer = nn.Linear(2, 2)
    weight = layer.weight.detach().numpy().copy()
    bias = layer.bias.detach().numpy().copy()
    bad = {"weight": np.ones((2, 2)), "bias": np.array(["1.5", "oops"])}
    with pytest.raises(RuntimeError, match="cannot copy bias"):
        layer.load_state_dict(bad)
    assert np.array_equal(layer.weight.detach().numpy(), weight)  # not half-loaded
    assert np.array_equal(layer.bias.detach().numpy(), bias)


def test_saved_files_have_normal_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        save({"a": 1}, tmp_path / "new.pth")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "new.pth").st_mode) == 0o644
    kept = tmp_path / "kept.pth"
    kept.write_bytes(b"")
    os.chmod(kept, 0o640)
    save({"a": 1}, kept)
    assert stat.S_IMODE(os.stat(kept).st_mode) == 0o640  # replacing keeps the mode
    assert load(kept) == {"a": 1}


def test_a_killed_save_leaves_no_temporary_file_after_the_next_save(tmp_path):
    target = tmp_path / "model.pth"
    killed = subprocess.run([sys.executable, "-c", f"""
import os, signal
from difflab import serialization

def dying_write(obj, stream):
    stream.write(b"half a checkpoint")
    stream.flush()
    os.kill(os.getpid(), signal.SIGKILL)

serialization._write = dying_write
serialization.save({{"a": 1}}, {str(target)!r})
"""], env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert killed.returncode == -signal.SIGKILL
    assert len(list(tmp_path.iterdir())) == 1  # the killed save's temporary file
    save({"a": 2}, target)
    assert [p.name for p in tmp_path.iterdir()] == ["model.pth"]
    assert load(target) == {"a": 2}
