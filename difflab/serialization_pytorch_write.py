"""Writing the checkpoints PyTorch's ``torch.load(f, weights_only=True)`` reads.

``save(obj, f, format="pytorch")`` lands here: tensors, Parameters, (ordered)
dicts, lists, tuples, str, numbers and None, written as ``torch.save`` writes
them (a zip holding ``archive/data.pkl``, a protocol-2 pickle naming only the
globals PyTorch's ``weights_only`` loader allows, and each storage's bytes in
``archive/data/<key>``).  Reading them is :mod:`difflab.serialization_pytorch`.
"""

from __future__ import annotations

import pickle
import zipfile
from collections import OrderedDict
from typing import Any

import numpy as np

from difflab import backend
from difflab.dtypes import BFLOAT16
from difflab.serialization_pytorch import STORAGE_DTYPES
from difflab.tensor import Tensor
from difflab.tensor_arguments import Size

__all__ = ["write_pytorch_archive"]

_STORAGE_OF = {dtype: name for name, dtype in STORAGE_DTYPES.items()}


class _PickleWriter:
    """Writes protocol-2 pickle opcodes for data, tensors and Parameters, as torch.save does.

    Only these opcodes and the globals PyTorch's ``weights_only`` loader allows are
    written (the module docstring of :mod:`pickletools` explains each opcode).
    """

    def __init__(self, max_depth: int) -> None:
        self.out = bytearray(b"\x80\x02")             # PROTO 2
        self.max_depth = max_depth
        self.memo: dict[int, int] = {}                  # id(object) -> memo slot
        self.keep: list = []                            # (written objects stay alive)
        self.storages: dict[tuple, tuple[str, bytes]] = {}  # view -> (key, little-endian bytes)

    def finish(self, obj: Any) -> bytes:
        self.value(obj, 0, "object")
        self.out += b"."                                # STOP
        return bytes(self.out)

    def _global(self, module: str, name: str) -> None:
        self.out += f"c{module}\n{name}\n".encode()     # GLOBAL

    def _remembered(self, obj: Any) -> bool:
        """Write a reference to ``obj`` if it was written before (BINGET)."""
        if id(obj) not in self.memo:
            return False
        self.out += b"j" + self.memo[id(obj)].to_bytes(4, "little")  # LONG_BINGET
        return True

    def _remember(self, obj: Any) -> None:
        self.memo[id(obj)] = len(self.memo)
        self.keep.append(obj)
        self.out += b"r" + self.memo[id(obj)].to_bytes(4, "little")  # LONG_BINPUT

    def value(self, obj: Any, depth: int, where: str) -> None:
        if depth > self.max_depth:
            raise ValueError(f"{where}: nests more than {self.max_depth} levels deep")
        if type(obj) is str:  # BINUNICODE (pickle.dumps would also memoize it: a BINPUT)
            text = obj.encode("utf-8", "surrogatepass")
            self.out += b"X" + len(text).to_bytes(4, "little") + text
        elif obj is None or type(obj) in (bool, int, float):
            self.out += pickle.dumps(obj, protocol=2)[2:-1]  # (one opcode, no memo)
        elif isinstance(obj, Tensor):
            self.tensor(obj, where)
        elif type(obj) in (dict, OrderedDict):
            if self._remembered(obj):
                return
            if type(obj) is OrderedDict:
                self._global("collections", "OrderedDict")
                self.out += b")R"                       # EMPTY_TUPLE, REDUCE
            else:
                self.out += b"}"                        # EMPTY_DICT
            self._remember(obj)
            for key, item in obj.items():
                _writable_key(key, where)
                self.out += b"("                        # MARK
                self.value(key, depth + 1, where)
                self.value(item, depth + 1, f"{where}[{key!r}]")
                self.out += b"u"                        # SETITEMS
        elif type(obj) is list:
            if self._remembered(obj):
                return
            self.out += b"]"                            # EMPTY_LIST
            self._remember(obj)
            for i, item in enumerate(obj):
                self.value(item, depth + 1, f"{where}[{i}]")
                self.out += b"a"                        # APPEND
        elif type(obj) in (tuple, Size):
            self.out += b"("                            # MARK
            for i, item in enumerate(obj):
                self.value(item, depth + 1, f"{where}[{i}]")
            self.out += b"t"                            # TUPLE
        else:
            raise TypeError(
                f"format='pytorch' cannot write {where}, a {type(obj).__name__}: it writes "
                "tensors, Parameters, dicts, lists and tuples of them, str, numbers and None "
                "(state dicts and optimizer state dicts); for a model, save model.state_dict()")

    def tensor(self, t: Tensor, where: str) -> None:
        """``_rebuild_tensor_v2(storage, 0, size, stride, requires_grad, OrderedDict())``,
        in ``_rebuild_parameter(...)`` for a Parameter."""
        from difflab.nn.parameter import Parameter

        if self._remembered(t):
            return
        array = backend.to_numpy(t.array)
        name = "bfloat16" if array.dtype == BFLOAT16 else array.dtype.name
        if name not in _STORAGE_OF and name not in ("uint16", "uint32", "uint64"):
            raise TypeError(f"format='pytorch' cannot write {where}: PyTorch has no {name}")
        parameter = isinstance(t, Parameter)
        if parameter:
            self._global("torch._utils", "_rebuild_parameter")
            self.out += b"("
        key, data = self._storage(array)
        itemsize = array.dtype.itemsize
        v3 = name not in _STORAGE_OF  # (uint16/32/64: an untyped storage and the dtype)
        self._global("torch._utils", "_rebuild_tensor_v3" if v3 else "_rebuild_tensor_v2")
        self.out += b"(("
        self.value("storage", 1, where)
        if v3:
            self._global("torch.storage", "UntypedStorage")
        else:
            self._global("torch", _STORAGE_OF[name])
        for item in (key, "cpu", len(data) // (1 if v3 else itemsize)):
            self.value(item, 1, where)
        self.out += b"tQ"                               # TUPLE, BINPERSID
        strides = _c_strides(array.shape)  # (the storage holds the tensor in C order)
        for item in (0, tuple(array.shape), strides, bool(t.requires_grad) and not parameter):
            self.value(item, 1, where)
        self._global("collections", "OrderedDict")
        self.out += b")R"
        if v3:
            self._global("torch", name)
        self.out += b"tR"                               # TUPLE, REDUCE
        if parameter:
            self.value(bool(t.requires_grad), 1, where)
            self._global("collections", "OrderedDict")
            self.out += b")RtR"
        self._remember(t)

    def _storage(self, array: np.ndarray) -> tuple[str, bytes]:
        """The storage of ``array``: one per distinct view (two names for one view share it)."""
        view = (array.__array_interface__["data"][0], array.shape, array.strides, array.dtype.str)
        if view not in self.storages:
            if array.dtype == BFLOAT16:
                array = array.view(np.uint16)
            little = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
            self.storages[view] = (str(len(self.storages)), little.tobytes())
            self.keep.append(array)
        return self.storages[view]


def _c_strides(shape: tuple) -> tuple:
    """The strides, in elements, of a C-contiguous array of ``shape``."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _writable_key(key: Any, where: str) -> None:
    if not (key is None or type(key) in (bool, int, float, str)):
        raise TypeError(f"format='pytorch' cannot write {where}: a dict key of type "
                        f"{type(key).__name__} (write str or int keys)")


def write_pytorch_archive(obj: Any, stream: Any, *, max_depth: int) -> None:
    """Write ``obj`` as ``torch.save`` would: a zip with ``data.pkl`` and raw storages.

    Parameters
    ----------
    obj : object
        Tensors, Parameters, (ordered) dicts, lists, tuples, str, numbers, None.
    stream : binary file object
        Where the zip goes.
    max_depth : int
        The deepest nesting of containers written.

    Returns
    -------
    None
    """
    writer = _PickleWriter(max_depth)
    pickled = writer.finish(obj)
    with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr("archive/data.pkl", pickled)
        zf.writestr("archive/byteorder", "little")
        for key, data in writer.storages.values():
            zf.writestr(f"archive/data/{key}", data)
        zf.writestr("archive/version", "3\n")
