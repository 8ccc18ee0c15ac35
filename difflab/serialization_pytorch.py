"""Reading the checkpoints PyTorch's ``torch.save`` writes, with an unpickler that runs nothing.

Since torch 1.6 a ``torch.save`` file is a zip archive whose members all sit
under one folder (``archive/`` usually)::

    archive/data.pkl        the object, pickled (protocol 2)
    archive/data/0, 1, ...  each storage's raw bytes
    archive/byteorder       "little" or "big"
    archive/version, ...    bookkeeping

In ``data.pkl`` every tensor is a call ``_rebuild_tensor_v2(storage, offset,
size, stride, requires_grad, hooks)`` whose storage is a *persistent id*
``('storage', torch.FloatStorage, '0', 'cpu', numel)``: "the bytes of member
``data/0``, read as float32".  Pickle can call any importable function, so
unpickling a stranger's file can run anything.  This reader cannot:

0. The zip itself: no member name twice (PyTorch reads the first, zipfile the
   last), no member inflating more than 100-fold, no members overlapping
   (together more than 100 times the file's bytes): zip bombs.
1. ``data.pkl`` is scanned opcode by opcode first (``pickletools``, which
   executes nothing): opcodes that reach outside the pickle (extension codes,
   out-of-band buffers, text persistent ids) are refused, and memo indices
   must follow the stores before them (a forged index would make the
   unpickler allocate a huge memo table).
2. The unpickler's ``find_class`` answers only from :data:`ALLOWED`, a table of
   the globals real state dicts, optimizer states and checkpoint dicts use
   (``collections.OrderedDict``, the tensor and parameter rebuilders, storage
   types, dtypes, ``torch.Size``, ``torch.device``, ``set``, ``complex``,
   bytes), each mapped to a stand-in of difflab's own; every other global
   (``os.system``, ``builtins.eval``, a model's class) raises
   ``CheckpointError`` naming it, before anything is called.  So REDUCE,
   NEWOBJ, OBJ and INST can only ever call a stand-in, which checks its
   arguments.  The unpickler checks each dict key and set item before it is
   hashed: str, bytes, small ints, floats, None (see ``_check_key``: keys
   of one hash, or tuples sharing tuples, would take quadratic or exponential
   time to insert).
3. The stand-ins, and what they build (storages, tensors, parameters, state
   dicts), refuse BUILD (pickle's "set this object's state"); only
   the ``_metadata`` of a state dict is accepted (and dropped).
4. ``persistent_load`` resolves a storage to the bytes of ``data/<key>``:
   the key must be a plain name, the member must exist, and its size must be
   ``numel * itemsize`` of the declared type; the sizes of all storages are
   checked against ``max_bytes`` before any is read.
5. A tensor's ``(offset, size, stride)`` must lie inside its storage
   (strides and offsets non-negative, every element addressed within the
   storage) before NumPy's ``as_strided`` sees them, and the bytes of all
   tensors together must stay within ``max_bytes``, and within 4 times the
   storages' bytes plus 64 MiB, before any is copied (a stride of 0 would
   otherwise let a 4-byte storage ask for terabytes).
6. The placeholders become difflab values in one pass that checks the
   nesting depth and keeps sharing: one storage
   viewed twice the same way (a tied weight in a state dict) becomes one
   difflab tensor, as in difflab's own format.

Tensors load on the CPU (or the ``map_location`` given); the device a file
names is not used.  Old non-zip files (``_use_new_zipfile_serialization=False``,
torch < 1.6), TorchScript archives (``torch.jit.save``) and pickled whole
modules (``torch.save(model)``) are refused with an error saying how to
re-save them.
"""

from __future__ import annotations

import io
import pickle
import pickletools
import re
import reprlib
import struct
import zipfile
import zlib
from collections import Counter, OrderedDict
from typing import Any

import numpy as np

from difflab import backend, dtypes
from difflab.dtypes import BFLOAT16
from difflab.tensor import Tensor
from difflab.tensor_arguments import Size

__all__ = ["is_pytorch_archive", "read_member", "read_pytorch_archive", "refuse_legacy"]

#: Most bytes of ``data.pkl`` read (the structure; tensors' bytes are apart).
MAX_PICKLE_BYTES = 64 * 2**20

#: How many times larger than its compressed bytes a member may be.  torch.save stores
#: members uncompressed; a pickle deflates about 20-fold, a run of one opcode 1000-fold (a
#: 60 KB file made the reader parse 64 MiB of opcodes for 90 s).
MAX_INFLATION = 100

#: The tensors of a file may copy its storages' bytes at most this many times over, plus
#: ``MAX_REPEATED_BYTES``: a view of stride 0 (``expand``) repeats elements, but a few
#: bytes of storage must not become gigabytes of tensors (difflab copies each view).
MAX_REPEATS = 4
MAX_REPEATED_BYTES = 64 * 2**20

#: PyTorch's storage types and the NumPy dtype of their elements.
STORAGE_DTYPES = {
    "FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16", "ByteStorage": "uint8", "CharStorage": "int8",
    "ShortStorage": "int16", "IntStorage": "int32", "LongStorage": "int64",
    "BoolStorage": "bool", "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128",
}
#: PyTorch's dtypes (``torch.float32`` pickles as the global ``torch.float32``) difflab has.
TORCH_DTYPES = ("float32", "float64", "float16", "bfloat16", "uint8", "int8", "int16",
                "int32", "int64", "bool", "complex64", "complex128", "uint16", "uint32",
                "uint64")

# Opcodes that reach outside the pickle: never in a torch.save file.
_REFUSED_OPCODES = {
    "EXT1": "an extension code (copyreg's registry)", "EXT2": "an extension code",
    "EXT4": "an extension code", "PERSID": "a text persistent id",
    "NEXT_BUFFER": "an out-of-band buffer", "READONLY_BUFFER": "an out-of-band buffer",
}
_MEMO_PUTS = {"PUT", "BINPUT", "LONG_BINPUT"}
_STORAGE_KEY = re.compile(r"[A-Za-z0-9_]{1,64}")
_MAX_NDIM = 64  # (NumPy's limit)


def read_member(zf: zipfile.ZipFile, member: str, limit: int, error: type) -> bytes:
    """One member's bytes, after checking the size it declares against ``limit``.

    Raises ``error`` for a missing member, one declaring more than ``limit``
    bytes, or one that cannot be read; zipfile stops at the declared size and
    checks the CRC.
    """
    try:
        info = zf.getinfo(member)
    except KeyError:
        raise error(f"the file has no {member}") from None
    if info.file_size > limit:
        raise error(
            f"{member} declares {info.file_size:,} bytes, more than the limit of {limit:,} "
            "(pass a larger max_bytes to load a file this large)"
        )
    try:
        return zf.read(member)
    except (zipfile.BadZipFile, zlib.error, RuntimeError, OverflowError, EOFError, OSError,
            NotImplementedError) as exc:
        # (a bad CRC, broken deflate data, a member flagged as encrypted (RuntimeError),
        # a header offset past the end, an unknown compression method)
        raise error(f"{member} cannot be read (a damaged zip?): {type(exc).__name__}: "
                    f"{exc}") from None


def is_pytorch_archive(zf: zipfile.ZipFile) -> bool:
    """Whether a zip archive is laid out as ``torch.save`` (or ``torch.jit.save``) writes."""
    return any(name.count("/") == 1 and name.endswith("/data.pkl") for name in zf.namelist())


def refuse_legacy(head: bytes, error: type, name: Any) -> None:
    """Raise ``error`` if ``head`` (a file's first bytes) starts a pickle: PyTorch's old format."""
    if head[:1] == b"\x80":  # (pickle's PROTO opcode: torch's legacy files use protocol 2)
        raise error(
            f"{name} is a PyTorch file in the legacy (non-zip) format of torch < 1.6 or "
            "torch.save(..., _use_new_zipfile_serialization=False); difflab reads only the zip "
            "format. Re-save it with a recent PyTorch: torch.save(torch.load(path, "
            "weights_only=True), new_path)"
        )


class _StorageType:
    """Stand-in for ``torch.FloatStorage`` & co.: the dtype name its elements have."""

    __slots__ = ("name", "dtype")

    def __init__(self, name: str, dtype: str | None) -> None:
        self.name, self.dtype = name, dtype  # (dtype None: UntypedStorage, bytes)

    def __setstate__(self, state: Any) -> None:
        raise _Refused(f"BUILD on {self.name} is not allowed")


class _Storage:
    """A storage resolved by ``persistent_load``: its key and its elements (1-d, read-only)."""

    __slots__ = ("key", "array")

    def __init__(self, key: str, array: np.ndarray) -> None:
        self.key, self.array = key, array

    def __setstate__(self, state: Any) -> None:
        raise _Refused("BUILD on a storage is not allowed")


class _RawTensor:
    """A rebuilt tensor before it becomes a difflab one: its array and flags, and how it
    views its storage (two views alike are one tensor)."""

    __slots__ = ("array", "requires_grad", "parameter", "view")

    def __init__(self, array: np.ndarray, requires_grad: bool, parameter: bool,
                 view: tuple) -> None:
        self.array, self.requires_grad, self.parameter, self.view = (
            array, requires_grad, parameter, view)

    def __setstate__(self, state: Any) -> None:
        raise _Refused("BUILD on a tensor is not allowed (a tensor subclass or attributes)")


class _Global:
    """Stand-in for a global (``torch.Tensor``, a dtype) or a value made by one (a Size):
    unlike the value itself (difflab's dtypes are shared), it refuses BUILD."""

    __slots__ = ("name", "value")

    def __init__(self, name: str, value: Any = None) -> None:
        self.name, self.value = name, value

    def __setstate__(self, state: Any) -> None:
        raise _Refused(f"BUILD on {self.name} is not allowed")


class _Function:
    """Stand-in for an allowed callable (``_rebuild_tensor_v2``, ``set``, ...): calls the
    reader's function, and refuses BUILD, which on a bare function would set its attributes
    (``__defaults__``: a change to every later load in the process)."""

    __slots__ = ("name", "func")

    def __init__(self, name: str, func: Any) -> None:
        self.name, self.func = name, func

    def __call__(self, *args: Any) -> Any:
        return self.func(*args)

    def __setstate__(self, state: Any) -> None:
        raise _Refused(f"BUILD on {self.name} is not allowed")


class _StateDict(OrderedDict):
    """``collections.OrderedDict`` while unpickling: BUILD may only set ``_metadata``."""

    def __setstate__(self, state: Any) -> None:
        if not (isinstance(state, dict) and set(state) <= {"_metadata"}):
            raise _Refused(f"BUILD on an OrderedDict may only set _metadata, got "
                           f"{type(state).__name__}")


class _Refused(Exception):
    """Raised inside the unpickler; :func:`read_pytorch_archive` turns it into ``error``."""


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise _Refused(message)


def _is_int(value: Any, low: int = 0) -> bool:
    return type(value) is int and value >= low


class _Reader:
    """The state of one load: the archive, the limits, what was read and built so far."""

    def __init__(self, zf: zipfile.ZipFile, prefix: str, max_bytes: int,
                 byteorder: str) -> None:
        self.zf, self.prefix, self.max_bytes, self.byteorder = zf, prefix, max_bytes, byteorder
        self.storages: dict[tuple, _Storage] = {}  # (key, type or dtype) -> storage
        self.kinds: dict[str, str] = {}  # key -> the storage type its persistent ids name
        self.spent = {"storages": 0, "tensors": 0}  # bytes read and copied so far, each
                                                    # at most max_bytes

    def spend(self, what: str, nbytes: int) -> None:
        """Count ``nbytes`` more of storages read or tensors built, within ``max_bytes``."""
        _check(self.spent[what] + nbytes <= self.max_bytes,
               f"the {what} take {self.spent[what] + nbytes:,} bytes in all, more than the "
               f"limit of {self.max_bytes:,} (pass a larger max_bytes to load a file this large)")
        self.spent[what] += nbytes

    # --- storages (persistent ids) ---
    def storage(self, pid: Any) -> _Storage:
        """``('storage', storage_type, key, location, numel)`` -> the bytes of ``data/<key>``."""
        _check(isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage",
               f"a persistent id must be ('storage', type, key, location, numel), got "
               f"{_short(pid)}")
        _, kind, key, location, numel = pid
        _check(isinstance(kind, _StorageType), f"the storage type {_short(kind)} is not one")
        _check(isinstance(key, str) and _STORAGE_KEY.fullmatch(key) is not None,
               f"the storage key {_short(key)} is not a plain name (a path outside "
               "the archive?)")
        _check(isinstance(location, str), f"the storage location {_short(location)} is "
               "not a string")
        _check(_is_int(numel), f"storage {key}: numel {_short(numel)} is not a "
               "non-negative int")
        # (torch.load reads a key once, as the type it is first named with, and torch.save
        # refuses to write one storage as two types: a second type is a forged file)
        first = self.kinds.setdefault(key, kind.name)
        _check(first == kind.name, f"storage {key} is named as {first} and as {kind.name}; "
               f"torch.save never writes that (torch.load would read both as {first})")
        if (key, kind.name) in self.storages:
            return self.storages[key, kind.name]
        member = f"{self.prefix}/data/{key}"
        try:
            size = self.zf.getinfo(member).file_size
        except KeyError:
            raise _Refused(f"storage {key}: the archive has no member {member}") from None
        np_dtype = np.dtype("uint16" if kind.dtype == "bfloat16" else kind.dtype or "uint8")
        _check(numel * np_dtype.itemsize == size,
               f"storage {key}: declares {numel:,} elements of {kind.dtype or 'bytes'} "
               f"({numel * np_dtype.itemsize:,} bytes) but {member} holds {size:,} bytes")
        self.spend("storages", size)
        data = read_member(self.zf, member, self.max_bytes, _Refused)
        _check(len(data) == size, f"{member}: {len(data)} bytes read, {size} declared")
        self.storages[key, kind.name] = _Storage(key, self._elements(data, kind.dtype))
        return self.storages[key, kind.name]

    def _elements(self, data: bytes, dtype: str | None) -> np.ndarray:
        """The storage's bytes as native-order elements of ``dtype`` (None: bytes)."""
        if dtype is None or dtype == "bool":
            array = np.frombuffer(data, dtype=np.uint8)
            return array != 0 if dtype == "bool" else array
        stored = np.dtype("uint16" if dtype == "bfloat16" else dtype)
        array = np.frombuffer(data, dtype=stored.newbyteorder(
            "<" if self.byteorder == "little" else ">"))
        if not array.dtype.isnative:
            array = array.astype(stored)
        if dtype == "bfloat16":
            _check(BFLOAT16 is not None, "the file holds a bfloat16 tensor; reading it needs "
                   "the ml_dtypes package (pip install ml_dtypes)")
            array = array.view(BFLOAT16)
        return array

    def retyped(self, storage: _Storage, dtype: Any) -> _Storage:
        """An untyped storage (bytes) read as ``dtype`` (once per storage and dtype)."""
        _check(isinstance(dtype, _Global) and isinstance(dtype.value, dtypes.dtype),
               f"the dtype {_short(dtype)} is not one")
        _check(storage.array.dtype == np.uint8, f"storage {storage.key} has a type already")
        name = dtype.value.dtype.name
        if (storage.key, name) not in self.storages:
            _check(len(storage.array) % dtype.value.itemsize == 0, f"storage {storage.key}: "
                   f"{len(storage.array)} bytes is not a whole number of {name} elements")
            self.spend("storages", len(storage.array))
            self.storages[storage.key, name] = _Storage(
                storage.key, self._elements(storage.array.tobytes(), name))
        return self.storages[storage.key, name]

    # --- tensors ---
    def tensor_v3(self, storage: Any, offset: Any, size: Any, stride: Any,
                  requires_grad: Any, hooks: Any, dtype: Any, metadata: Any = None) -> Any:
        """``torch._utils._rebuild_tensor_v3``: an untyped storage and the dtype apart."""
        return self.tensor(storage, offset, size, stride, requires_grad, hooks, metadata,
                           dtype)

    def tensor(self, storage: Any, offset: Any, size: Any, stride: Any, requires_grad: Any,
               hooks: Any, metadata: Any = None, dtype: Any = None) -> _RawTensor:
        """``torch._utils._rebuild_tensor_v2``: a tensor viewing a storage."""
        _check(isinstance(storage, _Storage), f"a tensor's storage must be a storage of the "
               f"archive, got {_short(storage)}")
        _check(type(requires_grad) is bool, f"requires_grad must be True or False, got "
               f"{_short(requires_grad)}")
        _check(hooks is None or (isinstance(hooks, dict) and not hooks),
               "a tensor with backward hooks (functions) is not loaded")
        _check(metadata is None or (isinstance(metadata, dict) and not metadata),
               f"tensor metadata {_short(metadata)} is not supported")
        if dtype is not None:  # (_rebuild_tensor_v3: an untyped storage's bytes read as dtype)
            storage = self.retyped(storage, dtype)
        base = storage.array
        _check(type(offset) is int and offset >= 0, f"storage offset {_short(offset)} must be "
               "a non-negative int")
        _check(isinstance(size, tuple) and isinstance(stride, tuple)
               and len(size) == len(stride) <= _MAX_NDIM,
               f"size {_short(size)} and stride {_short(stride)} must be tuples of one length")
        _check(all(_is_int(n) for n in size), f"size {_short(size)} must hold non-negative ints")
        _check(all(_is_int(s) for s in stride),
               f"stride {_short(stride)} must hold non-negative ints")
        count = 1
        for n in size:
            count *= n
        last = offset + sum((n - 1) * s for n, s in zip(size, stride)) if count else offset
        _check(offset <= len(base) and (count == 0 or last < len(base)),
               f"a tensor of size {size}, stride {stride} at offset {offset} reaches element "
               f"{last:,} of storage {storage.key}, which holds {len(base):,}")
        nbytes, stored = count * base.dtype.itemsize, self.spent["storages"]
        _check(self.spent["tensors"] + nbytes <= MAX_REPEATS * stored + MAX_REPEATED_BYTES,
               f"the tensors would repeat the {stored:,} bytes of the storages more than "
               f"{MAX_REPEATS} times over (views of stride 0 or overlapping views); PyTorch "
               "files hold each tensor's elements")
        self.spend("tensors", nbytes)
        if count == 0:  # (an empty tensor is tied to none: its size may be anything)
            array = np.empty(size, dtype=base.dtype)
        else:  # (a dimension of one element has no step: its stride may be anything)
            steps = [s * base.dtype.itemsize if n > 1 else 0 for n, s in zip(size, stride)]
            array = np.lib.stride_tricks.as_strided(
                base[offset:], shape=size, strides=steps, writeable=False).copy()
        # (the view is a key of the converter's table of tied tensors: its numbers are kept
        # within the storage, so that no file can make thousands of views of one hash)
        view = (storage.key, str(base.dtype), offset, size, tuple(steps)) if count else None
        return _RawTensor(array, requires_grad, False, view)

    def parameter(self, data: Any, requires_grad: Any, hooks: Any, state: Any = None) -> Any:
        """``torch._utils._rebuild_parameter`` (and ``_with_state``, with no state)."""
        _check(isinstance(data, _RawTensor), f"a Parameter's data must be a tensor, got "
               f"{_short(data)}")
        _check(type(requires_grad) is bool, f"requires_grad must be True or False, got "
               f"{_short(requires_grad)}")
        _check(hooks is None or (isinstance(hooks, dict) and not hooks),
               "a Parameter with backward hooks (functions) is not loaded")
        _check(state is None or (isinstance(state, (dict, tuple)) and not any(state)),
               "a Parameter with attributes (a subclass?) is not loaded")
        return _RawTensor(data.array, requires_grad, True, data.view)

    def from_type(self, func: Any, kind: Any, args: Any, state: Any) -> Any:
        """``torch._tensor._rebuild_from_type_v2``: only a plain tensor, without attributes."""
        _check(isinstance(kind, _Global) and kind.name == "torch.Tensor",
               f"a tensor subclass ({_short(kind)}) is not loaded")
        _check(isinstance(func, _Function) and func.func in (
            self.tensor, self.tensor_v3, self.parameter) and isinstance(args, tuple),
               "_rebuild_from_type_v2 may only rebuild a tensor")
        _check(not state, "a tensor with attributes is not loaded")
        return func(*args)


def _ordered_dict(*args: Any) -> _StateDict:
    """``collections.OrderedDict()``: empty, its items follow (SETITEMS checks their keys)."""
    _check(not args, "collections.OrderedDict is called with no arguments in a PyTorch file "
           "(its items follow)")
    return _StateDict()


def _size(sizes: Any = ()) -> _Global:
    """``torch.Size``: a tuple of non-negative ints (kept in a stand-in that refuses BUILD)."""
    _check(isinstance(sizes, (tuple, list)) and all(_is_int(n) for n in sizes),
           f"torch.Size needs non-negative ints, got {_short(sizes)}")
    return _Global("torch.Size", Size(sizes))


def _device(kind: Any, index: Any = None) -> _Global:
    """``torch.device``: 'cpu', 'cuda' or 'cuda:<n>' (made without asking for a GPU)."""
    _check(isinstance(kind, str) and (index is None or _is_int(index)),
           f"torch.device({_short(kind)}, {_short(index)}) is not a device")
    try:
        return _Global("torch.device", backend.Device(kind, index))
    except (ValueError, TypeError) as exc:
        raise _Refused(f"torch.device: {exc}") from None


def _complex(real: Any = 0.0, imag: Any = 0.0) -> complex:
    _check(all(type(v) in (int, float) for v in (real, imag)),
           f"complex({_short(real)}, {_short(imag)}) needs two numbers")
    return complex(real, imag)


def _set(items: Any = ()) -> set:
    _check(isinstance(items, (list, tuple)), f"set({_short(items)}) needs a list")
    for item in items:
        _check_key(item, "set item")
    return set(items)


def _frozenset(items: Any = ()) -> frozenset:
    return frozenset(_set(items))


def _bytes(text: Any, encoding: Any = "latin1") -> bytes:
    """``_codecs.encode``: how protocol 2 pickles bytes (a str encoded as latin1)."""
    _check(isinstance(text, str) and encoding in ("latin1", "latin-1"),
           "_codecs.encode is allowed only for bytes (a str and 'latin1')")
    return text.encode("latin1")


def _allowed(reader: _Reader) -> dict[str, Any]:
    """The globals a PyTorch checkpoint may name, each mapped to its difflab stand-in."""
    functions = {
        "collections.OrderedDict": _ordered_dict,
        "torch._utils._rebuild_tensor_v2": reader.tensor,
        "torch._utils._rebuild_tensor_v3": reader.tensor_v3,
        "torch._utils._rebuild_parameter": reader.parameter,
        "torch._utils._rebuild_parameter_with_state": reader.parameter,
        "torch._tensor._rebuild_from_type_v2": reader.from_type,
        "torch.Size": _size,
        "torch.device": _device,
        "builtins.set": _set,
        "builtins.frozenset": _frozenset,
        "builtins.complex": _complex,
        "_codecs.encode": _bytes,
    }
    table: dict[str, Any] = {name: _Function(name, func) for name, func in functions.items()}
    table["torch.Tensor"] = _Global("torch.Tensor")
    table["torch.storage.UntypedStorage"] = _StorageType("UntypedStorage", None)
    for name, dtype in STORAGE_DTYPES.items():
        table[f"torch.{name}"] = _StorageType(name, dtype)
    for name in TORCH_DTYPES:
        if name != "bfloat16" or BFLOAT16 is not None:
            table[f"torch.{name}"] = _Global(f"torch.{name}", dtypes.as_dtype(name))
    return table


#: The globals a PyTorch checkpoint may name (module.name); everything else is refused.
ALLOWED = tuple(sorted(_allowed(_Reader(None, "", 0, "little"))))  # type: ignore[arg-type]


def _refusal(module: str, name: str) -> str:
    """Why ``module.name`` is refused, and what to do instead."""
    full = f"{module}.{name}"
    if module.startswith("torch.nn.modules") or module == "__main__":
        advice = ("This looks like a whole model saved with torch.save(model); difflab reads "
                  "state dicts: in PyTorch, torch.save(model.state_dict(), path), then "
                  "model.load_state_dict(torch.load(path)) here.")
    elif module.startswith("torch.optim"):
        advice = ("This looks like a whole optimizer; save optimizer.state_dict() instead.")
    elif module.split(".")[0] == "numpy":
        advice = ("NumPy values are not read from PyTorch files: save float(x), a list or a "
                  "tensor instead.")
    else:
        advice = ("difflab reads tensors, parameters, state dicts and plain containers "
                  "(dict, list, tuple, set, str, numbers) from PyTorch files. If this is a "
                  "whole model, save its state_dict() instead.")
    return (f"the file asks for the global {full}, which is not loaded (unpickling it could "
            f"run code). {advice}")


_HASH_MODULUS = 2**61 - 1  # (an int of smaller size is its own hash; see _check_key)


def _check_key(key: Any, what: str = "dict key") -> None:
    """Refuse a dict key or set item whose hash an attacker can choose.

    A dict finds a key by its hash: n keys of one hash take n**2 / 2 comparisons to insert
    (20,000 keys, a 260 KB file: 23 s).  str and bytes are hashed with a random seed of
    the process; an int of size below 2**61 - 1 is its own hash; a float's hash is its
    value modulo 2**61 - 1, which at most a few thousand floats share.  But ints equal
    modulo 2**61 - 1, complex numbers and tuples can be made to share one hash, and a
    tuple t(n) = (t(n-1), t(n-1)) built through the memo takes 2**n steps to hash.
    PyTorch files use str and int keys.
    """
    _check(key is None or type(key) in (bool, float, str, bytes)
           or (type(key) is int and abs(key) < _HASH_MODULUS),
           f"a {what} must be a str, bytes, a float, None or an int below 2**61 - 1 in size, "
           f"got {_short(key)}")


class _Unpickler(pickle._Unpickler):  # type: ignore[name-defined]
    """Python's unpickler whose globals come only from the table and storages from the zip.

    It is the pure-Python one (``pickle._Unpickler``, each opcode a method in
    ``dispatch``) so that the opcodes inserting dict keys and set items check each key
    (:func:`_check_key`) before hashing it; C's unpickler hashes them out of reach.
    """

    def __init__(self, data: bytes, reader: _Reader) -> None:
        super().__init__(io.BytesIO(data))
        self.reader = reader
        self.table = _allowed(reader)

    # (after MARK, self.stack holds the items pushed since: keys and values alternate)
    def load_setitem(self) -> None:
        _check_key(self.stack[-2])
        super().load_setitem()

    def load_setitems(self) -> None:
        for key in self.stack[::2]:
            _check_key(key)
        super().load_setitems()

    def load_dict(self) -> None:
        for key in self.stack[::2]:
            _check_key(key)
        super().load_dict()

    def load_additems(self) -> None:
        for item in self.stack:
            _check_key(item, "set item")
        super().load_additems()

    def load_frozenset(self) -> None:
        for item in self.stack:
            _check_key(item, "set item")
        super().load_frozenset()

    dispatch = {**pickle._Unpickler.dispatch,  # type: ignore[attr-defined]
                pickle.SETITEM[0]: load_setitem, pickle.SETITEMS[0]: load_setitems,
                pickle.DICT[0]: load_dict, pickle.ADDITEMS[0]: load_additems,
                pickle.FROZENSET[0]: load_frozenset}

    def find_class(self, module: str, name: str) -> Any:
        if module == "__builtin__":  # (protocol 2 writes Python 2's name of builtins)
            module = "builtins"
        found = self.table.get(f"{module}.{name}")
        if found is None:
            raise _Refused(_refusal(module, name))
        return found

    def persistent_load(self, pid: Any) -> Any:
        return self.reader.storage(pid)


def _scan(data: bytes, member: str) -> None:
    """Check ``data.pkl`` opcode by opcode without running it (pickletools only parses)."""
    puts = 0  # (a pickler numbers its memo slots 0, 1, 2, ...: a slot past the stores
    try:      # so far is forged, and would make the unpickler allocate a table that large)
        for opcode, arg, at in pickletools.genops(data):
            if opcode.name == "FRAME":  # (8 bytes of size follow the opcode, then the frame)
                _check(arg <= len(data) - at - 9, f"{member} is not a valid PyTorch pickle: "
                       f"a frame of {arg:,} bytes where {len(data) - at - 9:,} remain")
            if opcode.name in _REFUSED_OPCODES:
                raise _Refused(f"{member} uses {_REFUSED_OPCODES[opcode.name]} "
                               f"({opcode.name}), which PyTorch never writes")
            if opcode.name in _MEMO_PUTS:  # (MEMOIZE stores to the next slot itself)
                _check(type(arg) is int and 0 <= arg <= puts, f"{member} stores to memo "
                       f"slot {arg!r} after {puts} stores (forged)")
            if opcode.name in _MEMO_PUTS or opcode.name == "MEMOIZE":
                puts += 1
            if opcode.name == "INST":
                module, _, name = str(arg).partition(" ")
                raise _Refused(_refusal(module, name))
    except (ValueError, UnicodeDecodeError) as exc:
        raise _Refused(f"{member} is not a valid pickle ({exc})") from None


class _ShortRepr(reprlib.Repr):
    """reprlib's repr, a few items of a few levels, for every type a pickle makes: the
    builtin repr of a tuple holding one tuple twice, that one tuple twice, ..., 40 deep
    is 2**40 items long."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel, self.maxstring, self.maxother = 3, 60, 60

    repr__StateDict = reprlib.Repr.repr_dict  # (an OrderedDict: a dict, not "other")
    repr_bytes = reprlib.Repr.repr_str        # (the first bytes only)

    def repr_int(self, x: int, level: int) -> str:  # (a huge int has no decimal repr)
        return repr(x) if x.bit_length() <= 64 else f"<an int of {x.bit_length():,} bits>"


def _short(value: Any) -> str:
    text = _ShortRepr().repr(value) if not isinstance(value, (_Global, _StorageType,
                                                               _Function)) else value.name
    return text if len(text) <= 80 else text[:77] + "..."


class _Converter:
    """Placeholders -> difflab values, keeping sharing and bounding the depth."""

    def __init__(self, device: Any, max_depth: int) -> None:
        self.device, self.max_depth = device, max_depth
        self.done: dict[int, Any] = {}     # id(placeholder) -> value (keeps cycles and sharing)
        self.views: dict[tuple, Any] = {}  # (storage view, flags) -> tensor (tied weights)

    def value(self, obj: Any, depth: int = 0) -> Any:
        if depth > self.max_depth:
            raise _Refused(f"the object nests more than {self.max_depth} levels deep")
        if obj is None or type(obj) in (bool, int, float, complex, str, bytes):
            return obj
        if id(obj) in self.done:
            return self.done[id(obj)]
        if isinstance(obj, _RawTensor):
            result = self.tensor(obj)
        elif isinstance(obj, _Global) and obj.value is not None:  # (a dtype, Size, device)
            result = obj.value
        elif isinstance(obj, dict):  # (dict, and OrderedDict: _StateDict)
            result = OrderedDict() if isinstance(obj, _StateDict) else {}
            self.done[id(obj)] = result
            for key, item in obj.items():
                result[self.key(key)] = self.value(item, depth + 1)
        elif type(obj) is list:
            result = self.done[id(obj)] = []
            result.extend(self.value(item, depth + 1) for item in obj)
        elif type(obj) is tuple:
            result = tuple(self.value(item, depth + 1) for item in obj)
        elif type(obj) in (set, frozenset):
            result = type(obj)(self.key(item) for item in obj)
        else:
            raise _Refused(f"a {_short(obj)} is not data (only a stand-in of the reader "
                           "produces it)")
        self.done[id(obj)] = result
        return result

    def key(self, key: Any) -> Any:
        """A dict key or set item (the unpickler checked it before hashing it)."""
        _check_key(key)
        return key

    def tensor(self, raw: _RawTensor) -> Tensor:
        """One difflab tensor per (storage view, flags): a tied weight stays one tensor."""
        flags = (raw.view, raw.requires_grad, raw.parameter)
        if raw.view is not None and flags in self.views:
            return self.views[flags]
        array = raw.array
        floating = array.dtype.kind in "fc" or array.dtype == BFLOAT16
        _check(floating or not raw.requires_grad,
               f"a {array.dtype} tensor cannot require grad")
        if self.device is not None:
            array = backend.to_device(array, self.device)
        if raw.parameter:
            from difflab.nn.parameter import Parameter

            t = Parameter(Tensor._wrap(array), requires_grad=raw.requires_grad)
        else:
            t = Tensor._wrap(array)
            t.requires_grad = raw.requires_grad
        if raw.view is not None:
            self.views[flags] = t
        return t


def _prefix(zf: zipfile.ZipFile) -> str:
    """The one folder holding ``data.pkl``; refuses TorchScript archives and repeated names."""
    names = zf.namelist()
    # (PyTorch reads the first member of a name and zipfile the last: the same file would
    # give other numbers here than in PyTorch)
    twice = sorted(name for name, count in Counter(names).items() if count > 1)
    if twice:
        raise _Refused(f"the archive holds {_short(twice)} twice; torch.save writes each "
                       "member once")
    prefixes = {name.split("/")[0] for name in zf.namelist()
                if name.count("/") == 1 and name.endswith("/data.pkl")}
    if len(prefixes) != 1:
        raise _Refused(f"the archive holds {len(prefixes)} data.pkl files; a PyTorch "
                       "checkpoint holds one")
    prefix = prefixes.pop()
    if any(n.startswith((f"{prefix}/code/", f"{prefix}/constants.pkl")) for n in zf.namelist()):
        raise _Refused(
            "a TorchScript archive (torch.jit.save), which holds code; difflab does not run "
            "TorchScript. In PyTorch, save the weights with torch.save(model.state_dict(), "
            "path) and load them into a difflab model with model.load_state_dict("
            "torch.load(path))")
    return prefix


def read_pytorch_archive(zf: zipfile.ZipFile, *, max_bytes: int, max_depth: int,
                         device: Any, error: type) -> Any:
    """The object in a ``torch.save`` zip archive, read without running any of it.

    Parameters
    ----------
    zf : zipfile.ZipFile
        The archive, open for reading.
    max_bytes : int
        The most bytes of storages read, and of tensors built, each.
    max_depth : int
        The deepest nesting of containers.
    device : Device or None
        Where the tensors go (None: the CPU).
    error : type
        The exception raised for anything wrong (difflab's ``CheckpointError``).

    Returns
    -------
    object
        Tensors, Parameters, state dicts (``OrderedDict``) and plain containers.
    """
    try:
        prefix = _prefix(zf)
        byteorder = "little"  # (what a file without the record means: all current machines)
        if f"{prefix}/byteorder" in zf.namelist():
            byteorder = read_member(zf, f"{prefix}/byteorder", 16, _Refused).decode("ascii",
                                                                                    "replace")
            _check(byteorder in ("little", "big"), f"{prefix}/byteorder says {byteorder!r}, "
                   "neither 'little' nor 'big'")
        infos = zf.infolist()
        for info in infos:
            _check(info.file_size <= MAX_INFLATION * info.compress_size,
                   f"{info.filename} inflates from {info.compress_size:,} to "
                   f"{info.file_size:,} bytes, more than {MAX_INFLATION}-fold (a zip bomb?); "
                   "torch.save stores its members uncompressed: re-save the file with it")
        # (members may overlap: each member's bytes holding the next ones, n members share
        # one block of data, which the file holds once and the reader would read n times)
        spanned = max(info.header_offset + info.compress_size for info in infos)
        inflated = sum(info.file_size for info in infos)
        _check(inflated <= MAX_INFLATION * spanned, f"the members hold {inflated:,} bytes in "
               f"all, more than {MAX_INFLATION} times the {spanned:,} bytes of the file they "
               "lie in (overlapping members: a zip bomb)")
        sizes = sum(info.file_size for info in zf.infolist()
                    if info.filename.startswith(f"{prefix}/data/"))
        _check(sizes <= max_bytes, f"the storages declare {sizes:,} bytes in all, more than "
               f"the limit of {max_bytes:,} (pass a larger max_bytes to load a file this large)")
        member = f"{prefix}/data.pkl"
        data = read_member(zf, member, MAX_PICKLE_BYTES, _Refused)
        _scan(data, member)
        reader = _Reader(zf, prefix, max_bytes, byteorder)
        try:
            raw = _Unpickler(data, reader).load()
        except _Refused:
            raise
        except (pickle.UnpicklingError, ValueError, TypeError, AttributeError, IndexError,
                KeyError, EOFError, OverflowError, MemoryError, RecursionError,
                struct.error) as exc:
            raise _Refused(f"{member} is not a valid PyTorch pickle: "
                           f"{type(exc).__name__}: {exc}") from None
        return _Converter(device, max_depth).value(raw)
    except _Refused as exc:
        raise error(f"PyTorch checkpoint: {exc}") from None
