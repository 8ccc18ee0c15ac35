"""difflab.load on the files PyTorch's torch.save writes, and on files built to attack it.

The files under tests/nn/pytorch_files/ were written by PyTorch 2.13 (make_files.py there
regenerates them), so these tests run without torch; the values are pinned.  Attacks are
pickles built opcode by opcode: none may run code or allocate more than the limits, and
each raises CheckpointError naming the problem.
"""

import io
import os
import pickle
import tracemalloc
import zipfile

import numpy as np
import pytest

import difflab as dl
from difflab.serialization import CheckpointError
from difflab.serialization_pytorch import ALLOWED

FILES = os.path.join(os.path.dirname(__file__), "pytorch_files")


def fixture(name):
    return os.path.join(FILES, name)


# --- the files PyTorch wrote -------------------------------------------------------------

def test_a_state_dict_of_every_dtype_keeps_dtypes_and_values():
    sd = dl.load(fixture("state_dict_dtypes.pt"))
    assert type(sd).__name__ == "OrderedDict"
    assert list(sd)[-4:] == ["fc.weight", "fc.bias", "head.weight", "head.bias"]
    expected = {
        "f16": (dl.float16, [0.5, -1.5, 65504.0]),
        "mask": (dl.bool, [True, False, True]),
        "i8": (dl.int8, [-128, 0, 127]),
        "i16": (dl.int16, [-32768, 1, 32767]),
        "i32": (dl.int32, [-(2**31), 2, 2**31 - 1]),
        "i64": (dl.int64, [-(2**63), 3, 2**63 - 1]),
        "u8": (dl.uint8, [0, 128, 255]),
        "c64": (dl.complex64, [1 + 2j, -0.5j]),
        "view": (dl.float32, [[5.0, 9.0], [6.0, 10.0]]),
        "fc.weight": (dl.float32, [[0.0, 0.125, 0.25], [0.375, 0.5, 0.625]]),
        "fc.bias": (dl.float32, [-0.5, 0.25]),
        "head.weight": (dl.float64, [[0.1, -0.2]]),
        "head.bias": (dl.float64, [1.0 / 3.0]),
    }
    for name, (dtype, values) in expected.items():
        t = sd[name]
        assert t.dtype == dtype, name
        assert t.tolist() == values, name
        assert not t.requires_grad
    assert sd["bf16"].dtype == dl.bfloat16
    assert sd["bf16"].float().tolist() == [1.0, -2.5, 3.00405527047391e38]
    assert sd["view"].is_contiguous()  # (a view of a larger storage, copied out)


def test_an_adam_state_dict_loads_with_pinned_numbers():
    state = dl.load(fixture("adam_state.pt"))
    assert sorted(state["state"]) == [0, 1, 2, 3]
    group = state["param_groups"][0]
    assert group["params"] == [0, 1, 2, 3] and group["betas"] == (0.9, 0.999)
    assert group["lr"] == 0.01 and group["amsgrad"] is False and group["foreach"] is None
    np.testing.assert_allclose(state["state"][0]["exp_avg"].numpy(), [
        [0.019765065982937813, 0.016920415684580803, -0.004384043626487255],
        [-0.03700318560004234, -0.0064365980215370655, -0.0016083436785265803]], rtol=1e-7)
    assert state["state"][2]["exp_avg"].tolist() == [[-0.16965979397296901, 0.2144177761673927]]
    assert state["state"][3]["exp_avg_sq"].tolist() == [0.007996000000000007]
    assert state["state"][0]["step"].tolist() == 2.0


def test_a_checkpoint_dict_loads_into_a_difflab_model_and_optimizer():
    ckpt = dl.load(fixture("checkpoint.pt"))
    assert (ckpt["epoch"], ckpt["loss"], ckpt["note"]) == (3, 0.125, "two steps")
    assert ckpt["shape"] == (2, 3) and isinstance(ckpt["shape"], dl.Size)
    fc = dl.nn.Linear(3, 2)
    fc.load_state_dict({k[3:]: v for k, v in ckpt["model"].items() if k.startswith("fc.")})
    np.testing.assert_allclose(fc.weight.detach().numpy(), [
        [-0.02001309022307396, 0.10499264299869537, 0.2700020670890808],
        [0.39500728249549866, 0.519960880279541, 0.6449894309043884]], rtol=1e-7)
    assert fc.weight.requires_grad  # (load_state_dict copies into the model's parameters)


def test_tied_weights_load_as_one_tensor_and_into_a_tied_model():
    sd = dl.load(fixture("tied.pt"))
    assert sd["0.weight"] is sd["1.weight"]
    assert sd["0.weight"].tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]]
    embed = dl.nn.Embedding(4, 2)
    model = dl.nn.Sequential(embed, dl.nn.Linear(2, 4, bias=False))
    model[1].weight = embed.weight
    model.load_state_dict(sd)
    assert model[1].weight is model[0].weight
    assert model[1].weight.tolist() == sd["0.weight"].tolist()


def test_parameters_keep_requires_grad_and_identity():
    params = dl.load(fixture("parameters.pt"))
    assert len(params) == 2 and params[0] is params[1]
    assert isinstance(params[0], dl.nn.Parameter) and params[0].requires_grad


@pytest.mark.parametrize("name, words", [
    ("whole_module.pt", ["torch.nn.modules.linear.Linear", "state_dict()"]),
    ("legacy.pt", ["legacy (non-zip) format", "Re-save"]),
    ("torchscript.pt", ["TorchScript", "state_dict()"]),
])
def test_files_difflab_cannot_read_are_refused_with_what_to_do(name, words):
    with pytest.raises(CheckpointError) as info:
        dl.load(fixture(name))
    for word in words:
        assert word in str(info.value)


def test_map_location_and_weights_only_are_accepted():
    sd = dl.load(fixture("tied.pt"), map_location="cpu", weights_only=False)
    assert sd["0.weight"].device == dl.device("cpu")
    seen = []
    dl.load(fixture("tied.pt"), map_location=lambda obj, _: seen.append(obj) or obj)
    assert seen and "0.weight" in seen[0]
    with open(fixture("tied.pt"), "rb") as stream:  # (a file object, as torch.load takes)
        assert dl.load(stream)["0.weight"].shape == (4, 2)


def test_the_allowlist_is_small_and_names_no_callable_of_python():
    assert "collections.OrderedDict" in ALLOWED and "torch._utils._rebuild_tensor_v2" in ALLOWED
    for name in ALLOWED:
        assert name.split(".")[0] in ("torch", "collections", "builtins", "_codecs"), name
    assert not {"builtins.eval", "builtins.exec", "builtins.getattr", "os.system",
                "builtins.__import__"} & set(ALLOWED)


# --- building files by hand --------------------------------------------------------------

def torch_zip(pkl, members=None, prefix="archive", byteorder=b"little", extra=None):
    """A zip laid out as torch.save writes it: data.pkl, data/<key>, byteorder, version."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr(f"{prefix}/data.pkl", pkl)
        if byteorder is not None:
            zf.writestr(f"{prefix}/byteorder", byteorder)
        zf.writestr(f"{prefix}/version", b"3\n")
        for key, data in (members or {}).items():
            zf.writestr(f"{prefix}/data/{key}", data)
        for name, data in (extra or {}).items():
            zf.writestr(name, data)
    buffer.seek(0)
    return buffer


def data(value):
    """The opcodes that push ``value`` (plain data), without PROTO and STOP."""
    return pickle.dumps(value, protocol=2)[2:-1]


def glob(module, name):
    return f"c{module}\n{name}\n".encode()


def storage(kind="FloatStorage", key="0", numel=2):
    """A persistent id ('storage', torch.<kind>, key, 'cpu', numel), resolved (BINPERSID)."""
    return (b"(" + data("storage") + glob("torch", kind) + data(key) + data("cpu") + data(numel)
            + b"tQ")


def tensor(kind="FloatStorage", key="0", numel=2, offset=0, size=(2,), stride=(1,),
           requires_grad=False):
    """``_rebuild_tensor_v2(storage, offset, size, stride, requires_grad, OrderedDict())``."""
    return (glob("torch._utils", "_rebuild_tensor_v2") + b"(" + storage(kind, key, numel)
            + data(offset) + data(tuple(size)) + data(tuple(stride)) + data(requires_grad)
            + glob("collections", "OrderedDict") + b")RtR")


def pkl(body):
    return b"\x80\x02" + body + b"."


FLOATS = np.array([1.5, -2.0], dtype="<f4").tobytes()


def load(pickle_bytes, members=None, **kwargs):
    return dl.load(torch_zip(pickle_bytes, {"0": FLOATS} if members is None else members),
                   **kwargs)


def test_a_hand_built_file_loads():
    # (the helpers above are right: the attacks below differ from this in one place each)
    t = load(pkl(tensor()))
    assert t.tolist() == [1.5, -2.0] and t.dtype == dl.float32


# --- attacks -----------------------------------------------------------------------------

class Evil:
    def __init__(self, func, *args):
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args


def refused(pickle_bytes, *words, members=None, **kwargs):
    with pytest.raises(CheckpointError) as info:
        load(pickle_bytes, members, **kwargs)
    for word in words:
        assert word in str(info.value), str(info.value)
    return str(info.value)


@pytest.mark.parametrize("protocol", [0, 2, 4, 5])
def test_a_pickle_calling_os_system_runs_nothing(tmp_path, protocol):
    marker = tmp_path / "ran"
    attack = pickle.dumps(Evil(os.system, f"touch {marker}"), protocol=protocol)
    refused(attack, "posix.system" if os.name == "posix" else "system")
    assert not marker.exists()


@pytest.mark.parametrize("func, args, name", [
    (eval, ("__import__('os').getcwd()",), "builtins.eval"),
    (exec, ("x = 1",), "builtins.exec"),
    (getattr, ("x", "upper"), "builtins.getattr"),
    (__import__, ("subprocess",), "builtins.__import__"),
])
def test_python_builtins_are_refused_by_name(func, args, name):
    refused(pickle.dumps(Evil(func, *args), protocol=2), name)
    refused(pickle.dumps(Evil(func, *args), protocol=4), name)  # (STACK_GLOBAL)


def test_subprocess_through_newobj_obj_and_inst_is_refused(tmp_path):
    marker = str(tmp_path / "ran").encode()
    newobj = b"\x80\x02" + glob("subprocess", "Popen") + b"(" + data(["touch", marker.decode()])
    refused(newobj + b"t\x81.", "subprocess.Popen")
    obj = b"\x80\x02(" + glob("os", "system") + data("touch " + marker.decode()) + b"o."
    refused(obj, "os.system")
    inst = b"(S'touch " + marker + b"'\nios\nsystem\n."
    refused(inst, "os.system")
    assert not (tmp_path / "ran").exists()


def test_numpy_and_whole_module_globals_say_what_to_do():
    refused(pkl(glob("numpy.core.multiarray", "scalar")), "NumPy values")
    refused(pkl(glob("__main__", "Net") + b")\x81"), "__main__.Net", "state_dict()")
    refused(pkl(glob("torch.optim.adam", "Adam") + b")\x81"), "optimizer.state_dict()")
    refused(pkl(glob("torch._utils", "_rebuild_sparse_tensor")), "_rebuild_sparse_tensor")


@pytest.mark.parametrize("body, word", [
    (glob("torch", "FloatStorage") + data({"dtype": 1}) + b"b", "BUILD on FloatStorage"),
    (tensor() + data({"data": 1}) + b"b", "BUILD on a tensor"),
    (glob("collections", "OrderedDict") + b")R" + data({"__class__": 1}) + b"b",
     "only set _metadata"),
    (storage() + data({"x": 1}) + b"b", "BUILD on a storage"),
    (data([1]) + data({"x": 1}) + b"b", "not a valid PyTorch pickle"),
    (glob("torch", "Size") + data(((2,),)) + b"R" + data({"numel": 1}) + b"b",
     "BUILD on torch.Size"),
    (glob("torch", "device") + data(("cpu",)) + b"R" + data({"type": "cuda"}) + b"b",
     "BUILD on torch.device"),
    # (difflab's dtypes are shared by the whole process: BUILD must never reach one)
    (glob("torch", "float16") + data((None, {"dtype": 1})) + b"b", "BUILD on torch.float16"),
])
def test_build_on_anything_but_a_state_dict_is_refused(body, word):
    refused(pkl(body), word)
    assert dl.float16.dtype == np.float16


def test_stand_ins_check_their_arguments():
    refused(pkl(glob("torch", "Size") + data((["a"],)) + b"R"), "torch.Size")
    refused(pkl(glob("torch", "device") + data(("cuda", -1)) + b"R"), "torch.device")
    refused(pkl(glob("_codecs", "encode") + data(("x", "rot13")) + b"R"), "_codecs.encode")
    refused(pkl(glob("builtins", "complex") + data(("1", 2)) + b"R"), "complex")
    refused(pkl(glob("torch", "FloatStorage") + data(()) + b"R"), "not a valid PyTorch pickle")
    refused(pkl(glob("torch", "Tensor")), "not data")  # (a marker is no value)
    refused(pkl(glob("torch._utils", "_rebuild_parameter") + data((1, True, None)) + b"R"),
            "Parameter's data must be a tensor")


@pytest.mark.parametrize("pid, word", [
    (data(("storage", 1, "0", "cpu", 2)), "storage type"),
    (data(("file", "x")), "persistent id must be"),
    (b"(" + data("storage") + glob("torch", "FloatStorage") + data("../../etc/passwd")
     + data("cpu") + data(2) + b"t", "not a plain name"),
    (b"(" + data("storage") + glob("torch", "FloatStorage") + data("7") + data("cpu")
     + data(2) + b"t", "no member archive/data/7"),
    (b"(" + data("storage") + glob("torch", "FloatStorage") + data("0") + data("cpu")
     + data(-1) + b"t", "numel -1"),
])
def test_persistent_ids_outside_the_archive_or_malformed_are_refused(pid, word):
    refused(pkl(pid + b"Q"), word)


def test_a_text_persistent_id_and_extension_codes_are_refused():
    refused(b"Pstorage\n.", "text persistent id")
    refused(b"\x80\x02\x82\x01.", "extension code")


def test_a_storage_lying_about_its_size_is_refused():
    refused(pkl(tensor(numel=100)), "declares 100 elements", "holds 8 bytes")
    refused(pkl(tensor(kind="DoubleStorage", numel=2)), "16 bytes")
    refused(pkl(tensor(kind="NoSuchStorage")), "torch.NoSuchStorage")


@pytest.mark.parametrize("offset, size, stride, word", [
    (0, (10**12,), (1,), "reaches element"),
    (2, (1,), (1,), "reaches element"),
    (3, (0,), (1,), "reaches element"),
    (0, (2,), (-1,), "non-negative"),
    (-1, (1,), (1,), "non-negative"),
    (2**70, (1,), (1,), "reaches element"),
    (0, (2, 2**62), (1, 2**62), "reaches element"),
    (0, (2,), (1, 1), "one length"),
    (0, (2.0,), (1,), "non-negative ints"),
    (0, (1,) * 65, (0,) * 65, "one length"),
])
def test_views_outside_their_storage_are_refused(offset, size, stride, word):
    refused(pkl(tensor(offset=offset, size=size, stride=stride)), word)


def test_a_huge_shape_of_stride_zero_is_refused_before_allocating():
    tracemalloc.start()
    try:
        refused(pkl(tensor(size=(10**6, 10**6), stride=(0, 0))), "more than")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 10 * 2**20
    # Within the limit it is read, as PyTorch's expand() would be (here: copied).
    assert load(pkl(tensor(size=(3, 2), stride=(0, 1)))).tolist() == [[1.5, -2.0]] * 3
    refused(pkl(tensor(size=(300,), stride=(0,))), "the tensors take 1,200 bytes",
            max_bytes=1000)


def tensor_v3(dtype, numel, key="0"):
    """``_rebuild_tensor_v3(untyped storage, 0, (1,), (1,), False, OrderedDict(), dtype)``."""
    return (glob("torch._utils", "_rebuild_tensor_v3") + b"(" + b"(" + data("storage")
            + glob("torch.storage", "UntypedStorage") + data(key) + data("cpu") + data(numel)
            + b"tQ" + data(0) + data((1,)) + data((1,)) + data(False)
            + glob("collections", "OrderedDict") + b")R" + glob("torch", dtype) + b"tR")


def test_one_untyped_storage_read_as_many_dtypes_counts_every_read():
    # (the declared sizes pass, 8 bytes; each dtype reads the bytes again)
    body = b"(" + b"".join(tensor_v3(dtype, 8) for dtype in (
        "float32", "int32", "int16", "float16", "uint8")) + b"t"
    assert [t.dtype for t in load(pkl(body), max_bytes=48)] == [
        dl.float32, dl.int32, dl.int16, dl.float16, dl.uint8]
    refused(pkl(body), "the storages take 48 bytes in all", max_bytes=47)


def test_a_huge_stride_of_a_one_element_dimension_is_harmless():
    t = load(pkl(tensor(size=(1, 2), stride=(2**70, 1))))
    assert t.tolist() == [[1.5, -2.0]]


def test_requires_grad_is_only_for_floating_tensors():
    ints = np.array([1, 2], dtype="<i8").tobytes()
    refused(pkl(tensor("LongStorage", requires_grad=True)), "cannot require grad",
            members={"0": ints})
    assert load(pkl(tensor(requires_grad=True))).requires_grad


def test_a_zip_bomb_is_refused_from_its_declared_sizes():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=0) as zf:
        zf.writestr("archive/data.pkl", pkl(tensor(numel=2**22)))
        zf.writestr("archive/data/0", bytes(2**24))  # 16 MiB, stored in deflate's blocks
    buffer.seek(0)
    with pytest.raises(CheckpointError, match="declare 16,777,216 bytes in all, more than"):
        dl.load(buffer, max_bytes=2**20)


@pytest.mark.parametrize("member", ["archive/data/0", "archive/data.pkl"])
def test_a_member_inflating_a_hundredfold_is_refused_whatever_max_bytes_says(member):
    # (16 MiB of zeros deflate to 16 KiB: with the default max_bytes of 16 GiB, 16 MiB of
    # download became 16 GiB read; a data.pkl of one opcode repeated deflates 1000-fold)
    members = {"archive/data.pkl": pkl(tensor(numel=2**22)), "archive/data/0": bytes(2**24)}
    if member.endswith("data.pkl"):
        members = {"archive/data.pkl": pkl(b"N0" * 100_000 + data(1))}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, content in members.items():
            zf.writestr(name, content, compress_type=zipfile.ZIP_DEFLATED
                        if name == member else zipfile.ZIP_STORED)
    buffer.seek(0)
    with pytest.raises(CheckpointError, match=f"{member} inflates from .* more than 100-fold"):
        dl.load(buffer)


def test_a_huge_data_pkl_is_refused_from_its_declared_size(monkeypatch):
    from difflab import serialization_pytorch

    monkeypatch.setattr(serialization_pytorch, "MAX_PICKLE_BYTES", 100)
    refused(pkl(data("x" * 200)), "data.pkl declares")


def test_deep_nesting_is_refused_without_a_recursion_error():
    depth = 100_000
    nested = b"\x80\x02" + b"]" * depth + b"a" * (depth - 1) + b"."
    refused(nested, "nests more than")
    tuples = b"\x80\x02" + b")" + b"\x85" * depth + b"."  # ((((),),),)...
    refused(tuples, "nests more than")


def test_a_list_holding_itself_keeps_its_cycle():
    loop = b"\x80\x02]q\x00h\x00a."  # L = []; L.append(L)
    result = load(loop)
    assert result[0] is result


@pytest.mark.parametrize("garbage, word", [
    (b"hello world", "not a valid pickle"),
    (b"", "not a valid pickle"),
    (b"\x80\x02]q\x00", "not a valid pickle"),   # (no STOP)
    (b"\x80\x02a.", "not a valid PyTorch pickle"),  # (APPEND on an empty stack)
    (b"\x80\x02r\xff\xff\xff\xff.", "memo slot"),  # (a 4-billion-slot memo)
    (b"\x80\x02p99999999999\n.", "memo slot"),
    (b"\x80\x04\x95" + (2**62).to_bytes(8, "little") + b"N.", "not a valid PyTorch pickle"),
    (b"\x80\x04\x8e" + (2**62).to_bytes(8, "little") + b".", "not a valid pickle"),
])
def test_a_data_pkl_that_is_no_pickle_is_refused(garbage, word):
    refused(garbage, word)


def test_dict_keys_must_be_data():
    refused(pkl(b"}" + tensor() + data(1) + b"s"), "dict key")


def test_byteorder_big_is_read_and_garbage_refused():
    big = np.array([1.5, -2.0], dtype=">f4").tobytes()
    t = dl.load(torch_zip(pkl(tensor()), {"0": big}, byteorder=b"big"))
    assert t.tolist() == [1.5, -2.0] and t.numpy().dtype.isnative
    # (the same bytes read as little-endian are other numbers: the record matters)
    assert dl.load(torch_zip(pkl(tensor()), {"0": big})).tolist() != [1.5, -2.0]
    assert dl.load(torch_zip(pkl(tensor()), {"0": FLOATS}, byteorder=None)).tolist() == [
        1.5, -2.0]  # (no record: little-endian, as every current machine)
    with pytest.raises(CheckpointError, match="neither 'little' nor 'big'"):
        dl.load(torch_zip(pkl(tensor()), {"0": FLOATS}, byteorder=b"middle"))


def test_bool_bytes_other_than_0_and_1_read_as_true():
    t = load(pkl(tensor("BoolStorage", numel=3, size=(3,))), {"0": bytes([0, 1, 7])})
    assert t.tolist() == [False, True, True]


def test_two_data_pkls_and_torchscript_members_are_refused():
    two = torch_zip(pkl(data(1)), extra={"other/data.pkl": pkl(data(2))})
    with pytest.raises(CheckpointError, match="holds 2 data.pkl"):
        dl.load(two)
    script = torch_zip(pkl(data(1)), extra={"archive/constants.pkl": pkl(data(()))})
    with pytest.raises(CheckpointError, match="TorchScript"):
        dl.load(script)


def test_a_difflab_checkpoint_still_loads_as_before(tmp_path):
    dl.save({"w": dl.ones(2)}, tmp_path / "ours.pt")
    assert dl.load(tmp_path / "ours.pt")["w"].tolist() == [1.0, 1.0]


def test_a_non_zip_non_pickle_file_is_still_not_a_checkpoint(tmp_path):
    (tmp_path / "x.pt").write_bytes(b"PK?? not a zip")
    with pytest.raises(CheckpointError, match="not a valid difflab checkpoint"):
        dl.load(tmp_path / "x.pt")


# --- against PyTorch itself (skipped without torch) --------------------------------------

def saved(torch, obj):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return buffer


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "bool", "int8",
                                   "int16", "int32", "int64", "uint8", "complex64",
                                   "complex128", "uint16", "uint32", "uint64"])
def test_every_dtype_and_edge_value_is_read_bit_for_bit(dtype):
    torch = pytest.importorskip("torch")
    values = torch.tensor([0.0, -0.0, 1.5, float("inf"), -float("inf"), float("nan"), 3.0e38,
                           1e-45, -7.0, 65504.0, 255.0, 1.0])
    t = values.to(getattr(torch, dtype)) if dtype.startswith(("float", "bf", "c")) else (
        (values.nan_to_num(0.0, 0.0, 0.0) % 200).to(getattr(torch, dtype)))
    tensors = {"t": t, "t2": t.reshape(3, 4).t(), "empty": t[:0], "scalar": t[3],
               "expand": t[:1].expand(3)}
    loaded = dl.load(saved(torch, tensors))
    for name, expected in tensors.items():
        got = loaded[name].numpy()
        expect = expected.contiguous().view(torch.int16).numpy().view(got.dtype) if (
            dtype == "bfloat16") else expected.numpy()
        assert got.shape == expect.shape and got.dtype == expect.dtype, name
        assert got.tobytes() == np.ascontiguousarray(expect).tobytes(), name


def test_training_continues_in_difflab_where_pytorch_stopped():
    torch = pytest.importorskip("torch")
    x = torch.tensor([[1.0, -1.0, 0.5], [0.25, 2.0, -0.75], [0.0, 1.0, 1.0]])
    y = torch.tensor([[0.5], [-1.0], [2.0]])

    def steps(lib, model, opt, n):
        xs, ys = lib.tensor(x.tolist()), lib.tensor(y.tolist())
        for _ in range(n):
            opt.zero_grad()
            loss = ((model(xs) - ys) ** 2).mean()
            loss.backward()
            opt.step()

    def build(lib):
        return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 1))

    torch.manual_seed(0)
    model = build(torch)
    opt = torch.optim.Adam(model.parameters(), lr=0.05, weight_decay=0.01)
    steps(torch, model, opt, 2)
    file = saved(torch, {"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 2})
    steps(torch, model, opt, 2)

    ckpt = dl.load(file)  # the same program, under `import difflab as torch`
    ours = build(dl)
    ours.load_state_dict(ckpt["model"])
    ours_opt = dl.optim.Adam(ours.parameters(), lr=0.05, weight_decay=0.01)
    ours_opt.load_state_dict(ckpt["optimizer"])
    steps(dl, ours, ours_opt, 2)
    for (name, theirs), mine in zip(model.state_dict().items(), ours.state_dict().values()):
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=name)


def test_a_pytorch_parameter_dict_keeps_flags_and_sharing():
    torch = pytest.importorskip("torch")
    frozen = torch.nn.Parameter(torch.ones(2), requires_grad=False)
    live = torch.nn.Parameter(torch.zeros(3))
    loaded = dl.load(saved(torch, {"frozen": frozen, "live": live, "again": live,
                                   "plain": live.detach()}))
    assert isinstance(loaded["frozen"], dl.nn.Parameter) and not loaded["frozen"].requires_grad
    assert loaded["live"].requires_grad and loaded["again"] is loaded["live"]
    assert not isinstance(loaded["plain"], dl.nn.Parameter) and not loaded["plain"].requires_grad



# --- writing PyTorch's format ------------------------------------------------------------

def every_dtype():
    import ml_dtypes

    values = np.array([0.0, -0.0, 1.5, np.inf, -np.inf, np.nan, -7.0, 255.0])
    arrays = {name: values.astype(name) for name in ("float32", "float64", "float16",
                                                       "complex64", "complex128")}
    arrays["bfloat16"] = values.astype(ml_dtypes.bfloat16)
    for name in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64"):
        arrays[name] = np.nan_to_num(values, nan=3.0, posinf=9.0, neginf=1.0).astype(name)
    return {name: dl.tensor(array) for name, array in arrays.items()}


def test_format_pytorch_reads_back_with_dtypes_flags_and_ties(tmp_path):
    embed = dl.nn.Embedding(3, 2)
    tied = dl.nn.Sequential(embed, dl.nn.Linear(2, 3, bias=False))
    tied[1].weight = embed.weight
    linear = dl.nn.Linear(3, 2)
    opt = dl.optim.Adam(linear.parameters())
    linear(dl.ones(1, 3)).sum().backward()
    opt.step()
    tensors = every_dtype()
    obj = {"tied": tied.state_dict(), "opt": opt.state_dict(), "params": list(linear.parameters()),
           "dtypes": tensors, "scalar": dl.tensor(2.5), "empty": dl.zeros(0, 3),
           "view": dl.arange(6.0).reshape(2, 3).t(), "plain": [(1, "a", None, 2.5, True)],
           "leaf": dl.ones(2, requires_grad=True)}
    dl.save(obj, tmp_path / "ours.pt", format="pytorch")
    back = dl.load(tmp_path / "ours.pt")
    assert back["tied"]["0.weight"] is back["tied"]["1.weight"]
    assert back["tied"]["0.weight"].tolist() == embed.weight.tolist()
    assert back["opt"]["param_groups"] == opt.state_dict()["param_groups"]
    assert back["opt"]["state"][0]["step"] == 1
    assert all(isinstance(p, dl.nn.Parameter) and p.requires_grad for p in back["params"])
    for name, t in tensors.items():
        got = back["dtypes"][name].numpy()
        assert got.dtype == t.numpy().dtype and got.tobytes() == t.numpy().tobytes(), name
    assert back["scalar"].shape == () and back["empty"].shape == (0, 3)
    assert back["view"].tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    assert back["plain"] == [(1, "a", None, 2.5, True)] and back["leaf"].requires_grad


def test_format_pytorch_keeps_shared_containers():
    shared, items = {"k": "v"}, ["a", 1]
    buffer = io.BytesIO()
    dl.save({"s": "text", "d": shared, "again": shared, "l": items, "l2": items}, buffer,
            format="pytorch")
    buffer.seek(0)
    back = dl.load(buffer)
    assert back["again"] is back["d"] and back["d"] == {"k": "v"} and back["l2"] is back["l"]


def test_format_pytorch_names_only_globals_pytorch_allows():
    import pickletools

    buffer = io.BytesIO()
    dl.save({"sd": dl.nn.Linear(2, 1).state_dict(), "u": dl.tensor(np.ones(2, np.uint16))},
            buffer, format="pytorch")
    with zipfile.ZipFile(buffer) as zf:
        names = zf.namelist()
        ops = list(pickletools.genops(zf.read("archive/data.pkl")))
    assert "archive/byteorder" in names and "archive/version" in names
    globals_ = {arg.replace(" ", ".") for op, arg, _ in ops if op.name == "GLOBAL"}
    assert globals_ and globals_ <= set(ALLOWED)
    assert {op.name for op, _, _ in ops} <= {
        "PROTO", "GLOBAL", "EMPTY_TUPLE", "REDUCE", "LONG_BINPUT", "LONG_BINGET", "MARK",
        "BINUNICODE", "BININT1", "BININT2", "BININT", "LONG1", "BINFLOAT", "NEWTRUE",
        "NEWFALSE", "NONE", "TUPLE", "BINPERSID", "SETITEMS", "EMPTY_DICT", "EMPTY_LIST",
        "APPEND", "STOP"}


@pytest.mark.parametrize("obj, word", [
    (dl.nn.Linear(2, 1), "model.state_dict()"),
    (np.ones(2), "ndarray"),
    ({dl.ones(1): 1}, "dict key"),
    ({"f": len}, "builtin_function_or_method"),
])
def test_format_pytorch_refuses_what_pytorch_users_cannot_load_safely(obj, word):
    with pytest.raises(TypeError, match=word):
        dl.save(obj, io.BytesIO(), format="pytorch")


def test_an_unknown_format_is_refused():
    with pytest.raises(ValueError, match="'difflab' or 'pytorch'"):
        dl.save({}, io.BytesIO(), format="torch")


def test_pytorch_reads_format_pytorch_bit_for_bit():
    torch = pytest.importorskip("torch")
    tensors = every_dtype()
    buffer = io.BytesIO()
    dl.save({"dtypes": tensors, "p": dl.nn.Parameter(dl.ones(2)), "view": dl.eye(3)[1:, ::2]},
            buffer, format="pytorch")
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=True)
    for name, t in tensors.items():
        theirs = loaded["dtypes"][name]
        if name == "bfloat16":
            theirs = theirs.view(torch.int16)
        assert theirs.numpy().tobytes() == t.numpy().tobytes(), name
    assert isinstance(loaded["p"], torch.nn.Parameter) and loaded["p"].requires_grad
    assert loaded["view"].tolist() == [[0.0, 0.0], [0.0, 1.0]]


def test_training_continues_in_pytorch_where_difflab_stopped():
    torch = pytest.importorskip("torch")
    x = [[1.0, -1.0, 0.5], [0.25, 2.0, -0.75], [0.0, 1.0, 1.0]]
    y = [[0.5], [-1.0], [2.0]]

    def steps(lib, model, opt, n):
        for _ in range(n):
            opt.zero_grad()
            ((model(lib.tensor(x)) - lib.tensor(y)) ** 2).mean().backward()
            opt.step()

    def build(lib):
        return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 1))

    dl.manual_seed(0)
    ours = build(dl)
    opt = dl.optim.Adam(ours.parameters(), lr=0.05, weight_decay=0.01)
    steps(dl, ours, opt, 2)
    buffer = io.BytesIO()
    dl.save({"model": ours.state_dict(), "optimizer": opt.state_dict()}, buffer,
            format="pytorch")
    steps(dl, ours, opt, 2)
    buffer.seek(0)
    ckpt = torch.load(buffer, weights_only=True)
    theirs = build(torch)
    theirs.load_state_dict(ckpt["model"])
    their_opt = torch.optim.Adam(theirs.parameters(), lr=0.05, weight_decay=0.01)
    their_opt.load_state_dict(ckpt["optimizer"])
    steps(torch, theirs, their_opt, 2)
    for (name, t), mine in zip(theirs.state_dict().items(), ours.state_dict().values()):
        np.testing.assert_allclose(mine.numpy(), t.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)


def test_an_optimizer_takes_pytorchs_state_and_steps_on():
    # (PyTorch keeps Adam's step count as a float tensor; difflab's optimizers count in ints)
    ckpt = dl.load(fixture("checkpoint.pt"))
    fc, head = dl.nn.Linear(3, 2), dl.nn.Linear(2, 1, dtype=dl.float64)
    params = [fc.weight, fc.bias, head.weight, head.bias]
    opt = dl.optim.Adam(params, lr=0.01)
    opt.load_state_dict(ckpt["optimizer"])
    assert [opt.state[p]["step"] for p in params] == [2, 2, 2, 2]
    assert opt.state[head.weight]["exp_avg"].dtype == dl.float64
    sum(p.sum() for p in params).backward()
    opt.step()
    assert opt.state[fc.weight]["step"] == 3


# --- attacks found in review: each test failed before its fix ----------------------------

def test_build_on_an_allowed_function_is_refused_and_changes_no_later_load():
    from difflab import serialization_pytorch as sp

    defaults = sp._set.__defaults__
    try:  # (a refused file set _set's defaults: every later set() became a frozenset)
        refused(pkl(glob("builtins", "set") + data((None, {"__defaults__": ((), True)}))
                    + b"b"), "BUILD on builtins.set")
        refused(pkl(glob("torch._utils", "_rebuild_tensor_v2") + data({"__wrapped__": 1})
                    + b"b"), "BUILD on torch._utils._rebuild_tensor_v2")
        refused(pkl(glob("collections", "OrderedDict") + data({"x": 1}) + b"b"),
                "BUILD on collections.OrderedDict")
        assert sp._set.__defaults__ == defaults
        assert "__wrapped__" not in vars(sp._Reader.tensor)
        assert type(load(pkl(glob("builtins", "set") + data(([1, 2],)) + b"R"))) is set
    finally:
        sp._set.__defaults__ = defaults
        vars(sp._Reader.tensor).pop("__wrapped__", None)


def shared_tuples(depth):
    """t0 = (); t(i+1) = (t(i), t(i)) through the memo: 2 ** depth leaves, 3 * depth opcodes."""
    body = b")q\x000"
    for i in range(depth):
        body += b"h" + bytes([i]) + b"h" + bytes([i]) + b"\x86q" + bytes([i + 1]) + b"0"
    return body + b"h" + bytes([depth])


def test_keys_whose_hash_an_attacker_controls_are_refused_as_they_are_inserted():
    # Hashing t(40) as a key took 2**40 steps (t(22): 20 s), inside the unpickler.
    refused(pkl(b"}" + shared_tuples(8) + data(1) + b"s"), "dict key")
    refused(pkl(glob("builtins", "set") + b"(]" + shared_tuples(8) + b"atR"), "set item")
    # Ints equal modulo 2**61 - 1 share one hash: n of them took n**2 / 2 probes
    # (20,000 keys, a 260 KB file: 23 s); complex numbers and tuples can be made to collide
    # alike.  str keys (hashed with a per-process seed) and small ints cannot.
    colliding = b"}(" + b"".join(data(k * (2**61 - 1)) + b"N" for k in range(1, 4)) + b"u"
    refused(pkl(colliding), "dict key", "2**61")
    refused(pkl(b"}" + data(1 + 2j) + data(1) + b"s"), "dict key")
    refused(pkl(glob("collections", "OrderedDict") + data(([("a", 1)],)) + b"R"),
            "OrderedDict")
    fine = load(pkl(b"}(" + data("a") + data(1) + data(-(2**60)) + data(2) + data(0.5)
                    + data(3) + data(None) + data(4) + data(b"b") + data(5) + b"u"))
    assert fine == {"a": 1, -(2**60): 2, 0.5: 3, None: 4, b"b": 5}


def test_memo_slots_follow_the_stores_before_them():
    # (a slot may be at most the number of stores so far: slot 8 after 0 stores let a
    # 58 KB deflated data.pkl of 30 million opcodes make a 1 GB memo table)
    refused(b"\x80\x02" + b"N0" * 6 + b"Nr" + (8).to_bytes(4, "little") + b".", "memo slot")
    assert load(pkl(b"]q\x00h\x00a")) is not None


def test_a_few_bytes_of_storage_cannot_become_gigabytes_of_tensors():
    # (with the default max_bytes of 16 GiB a 499-byte file asked for an 8 GiB copy)
    tracemalloc.start()
    try:
        refused(pkl(tensor(size=(2**25,), stride=(0,))), "repeat")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 10 * 2**20


def test_one_storage_named_with_two_types_is_refused():
    # torch.load reads the key once, with the first type (both tensors below are float32
    # in PyTorch); torch.save refuses to write it.  difflab read the second as int32.
    refused(pkl(b"(" + tensor() + tensor("IntStorage") + b"t"), "FloatStorage", "IntStorage")


def test_duplicate_member_names_are_refused():
    # PyTorch reads the first of two members of one name, zipfile the last: the same file
    # gave other numbers (and another data.pkl) in PyTorch than in difflab.
    second = np.array([7.0, 8.0], dtype="<f4").tobytes()
    for extra in ({"archive/data/0": second}, {"archive/data.pkl": pkl(data(2))}):
        with pytest.warns(UserWarning, match="Duplicate name"):
            file = torch_zip(pkl(tensor()), {"0": FLOATS}, extra=extra)
        with pytest.raises(CheckpointError, match="twice"):
            dl.load(file)


def zip_of(members, compression=zipfile.ZIP_STORED):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as zf:
        for name, content in members.items():
            zf.writestr(name, content)
    return buffer.getvalue()


def test_a_damaged_zip_raises_only_checkpoint_error():
    # (zipfile raised RuntimeError for a member flagged as encrypted, zlib.error for broken
    # deflate data, OverflowError for a header offset past 2**63)
    import random

    rng = random.Random(0)
    with open(fixture("adam_state.pt"), "rb") as stream:
        real = stream.read()
    with zipfile.ZipFile(io.BytesIO(real)) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    deflated = zip_of(members, zipfile.ZIP_DEFLATED)
    encrypted = bytearray(real)
    for signature, at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):  # (flag bit 0)
        start = encrypted.find(signature)
        encrypted[start + at] |= 1
    cases = [bytes(encrypted)]
    for original in (real, deflated):
        for _ in range(150):
            damaged = bytearray(original)
            for _ in range(rng.randrange(1, 4)):
                damaged[rng.randrange(len(damaged))] = rng.randrange(256)
            cases.append(bytes(damaged))
            cases.append(original[:rng.randrange(len(original))])
    pickled = members["adam_state/data.pkl"]
    for _ in range(150):  # (a damaged data.pkl in an intact zip)
        damaged = bytearray(pickled)
        for _ in range(rng.randrange(1, 4)):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        cases.append(zip_of({**members, "adam_state/data.pkl": bytes(damaged)}))
    for case in cases:
        try:
            dl.load(io.BytesIO(case), max_bytes=2**24)
        except CheckpointError:
            pass


def test_views_differing_in_the_stride_of_a_one_element_dimension_are_one_tensor():
    # (the stride of such a dimension was kept in the key of the table of tied tensors: a
    # file could make thousands of views whose keys share one hash)
    a, b = load(pkl(b"(" + tensor(size=(1, 2), stride=(2, 1)) + tensor(size=(1, 2),
                                                                         stride=(2**60, 1)) + b"t"))
    assert a is b and a.tolist() == [[1.5, -2.0]]


def test_error_messages_show_a_bounded_part_of_what_they_name():
    from difflab.serialization_pytorch import _short

    nested = ()
    for _ in range(20):  # (the builtin repr of this is 2**20 pairs of parentheses)
        nested = (nested, nested)
    tracemalloc.start()
    try:
        text = _short(nested)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(text) <= 80 and peak < 2**20
    assert "bits" in _short(10**5000)  # (no decimal repr: more than 4,300 digits)


def overlapping_zip(n, kernel):
    """data.pkl, then n stored members archive/data/i, member i's bytes spanning the headers
    of members i+1, ... and one shared kernel: the file holds the kernel once, the members
    hold it n times (David Fifield's overlapping zip bomb, without compression)."""
    import struct
    import zlib

    def local(name, crc, size):
        return struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 0, 0, 33, crc, size, size,
                           len(name), 0) + name

    def central(name, crc, size, offset):
        return struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 0, 0, 33, crc, size, size,
                           len(name), 0, 0, 0, 0, 0, offset) + name

    members, tail = [], kernel
    for i in reversed(range(n)):
        name = f"archive/data/{i}".encode()
        members.insert(0, (name, zlib.crc32(tail), len(tail)))
        tail = local(*members[0]) + tail
    pickled = pkl(data(1))
    members.insert(0, (b"archive/data.pkl", zlib.crc32(pickled), len(pickled)))
    body, directory = bytearray(), bytearray()
    for name, crc, size in members:
        directory += central(name, crc, size, len(body))
        body += local(name, crc, size) + (pickled if name.endswith(b".pkl") else b"")
    body += kernel
    return bytes(body + directory + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(members),
                                                len(members), len(directory), len(body), 0))


def test_overlapping_members_are_refused():
    # (2,000 members over one 1 MB kernel: a 1.5 MB file read 2 GB, 4 GB of memory)
    bomb = overlapping_zip(400, bytes(2**16))
    with zipfile.ZipFile(io.BytesIO(bomb)) as zf:  # (zipfile reads each member whole)
        assert len(zf.read("archive/data/0")) > 2**16
        assert sum(info.file_size for info in zf.infolist()) > 100 * len(bomb)
    with pytest.raises(CheckpointError, match="overlapping members"):
        dl.load(io.BytesIO(bomb))
    assert dl.load(io.BytesIO(overlapping_zip(3, bytes(2**16)))) == 1  # (not 100 times over)


def test_a_big_endian_untyped_storage_is_swapped_as_its_dtype():
    # (torch.load swaps an untyped storage as bytes, that is not at all, and reads 513 here;
    # the machine that wrote the file held 258)
    file = torch_zip(pkl(tensor_v3("uint16", 2)), {"0": b"\x01\x02"}, byteorder=b"big")
    assert dl.load(file).tolist() == [258]
