"""``difflab.save(obj, path)`` and ``difflab.load(path)``: checkpoints that cannot run code.

``torch.save`` pickles, and unpickling a file can execute anything in it.
difflab's format is a plain zip archive:

* ``manifest.json``: the structure of the object (nested dicts, lists,
  tuples, numbers, strings, None) with every array replaced by a reference
  ``{"__tensor__": 3, ...}``;
* ``arrays/3.npy``: each array in NumPy's ``.npy`` format, read back with
  ``allow_pickle=False``.

Nothing in a file is ever executed: loading reads JSON and raw numbers.
Dict keys keep their type (an optimizer's state uses int keys) and order.

Saving is *atomic*: the archive is written to a temporary file in the same
directory, flushed to disk, and then renamed over the target in one step,
so an interrupted save leaves the previous file intact.  Zip stores a CRC
of every member, so a corrupted or truncated file is detected on load.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
import zipfile
from typing import Any

import numpy as np

from difflab import backend
from difflab.tensor import Tensor

FORMAT = "difflab-checkpoint"
VERSION = 1


class CheckpointError(ValueError):
    """The file is not a valid difflab checkpoint (truncated, corrupted or foreign)."""


#: Most bytes of array data :func:`load` reads from one file unless told otherwise.
MAX_LOAD_BYTES = 16 * 2**30
#: Most bytes of the manifest (the JSON structure of the saved object).
MAX_MANIFEST_BYTES = 64 * 2**20
#: Deepest nesting of dicts, lists and tuples a manifest may have.
MAX_DEPTH = 100


def read_npy(data: bytes, *, max_bytes: int = MAX_LOAD_BYTES, what: str = "array") -> np.ndarray:
    """Read one ``.npy`` file from ``data``, checking its header before allocating anything.

    NumPy's own reader trusts the header: a 200-byte file declaring a shape of
    10**10 float64 asks for 80 GB before finding the data missing.  Here the
    declared size ``prod(shape) * itemsize`` must equal the bytes that follow
    the header and stay within ``max_bytes``; object arrays (which would need
    pickle) are refused.

    Raises
    ------
    ValueError
        Naming what is wrong with the header or the size.
    """
    stream = io.BytesIO(data)
    try:
        major, _ = np.lib.format.read_magic(stream)
        if major == 1:
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(stream)
        elif major in (2, 3):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(stream)
        else:
            raise ValueError(f"unsupported .npy version {major}")
    except (ValueError, EOFError, SyntaxError, TypeError) as exc:
        raise ValueError(f"{what}: not a valid .npy header ({exc})") from None
    if dtype.hasobject:
        raise ValueError(f"{what}: holds Python objects (dtype=object), which are never loaded")
    count = 1
    for n in shape:
        count *= int(n)
    declared = count * dtype.itemsize
    present = len(data) - stream.tell()
    if declared > max_bytes:
        raise ValueError(
            f"{what}: declares {declared:,} bytes of data (shape {shape}), more than the "
            f"limit of {max_bytes:,} bytes"
        )
    if declared != present:
        raise ValueError(
            f"{what}: the header declares {declared:,} bytes of data (shape {shape}, "
            f"{dtype}) but {present:,} follow it (truncated or forged)"
        )
    array = np.frombuffer(data, dtype=dtype, count=count, offset=stream.tell())
    return array.reshape(shape, order="F" if fortran else "C").copy()


def _encode(obj: Any, arrays: list) -> Any:
    if isinstance(obj, Tensor):
        arrays.append(backend.to_numpy(obj.array))
        entry = {"__tensor__": len(arrays) - 1}
        if obj.requires_grad:
            entry["requires_grad"] = True
        from difflab.nn.parameter import Parameter

        if isinstance(obj, Parameter):
            entry["parameter"] = True
        return entry
    if isinstance(obj, np.ndarray) or backend.is_gpu_array(obj):
        if getattr(obj, "dtype", None) is not None and obj.dtype == object:
            raise TypeError("cannot save an array of Python objects (dtype=object)")
        arrays.append(backend.to_numpy(obj))
        return {"__ndarray__": len(arrays) - 1}
    if isinstance(obj, np.generic):
        return _encode(obj.item(), arrays)
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, dict):
        items = []
        for key, value in obj.items():
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                raise TypeError(
                    f"cannot save a dict key of type {type(key).__name__}: keys must be "
                    f"str, int, float, bool or None"
                )
            items.append([_encode(key, arrays), _encode(value, arrays)])
        return {"__dict__": items}
    if isinstance(obj, tuple):
        return {"__tuple__": [_encode(v, arrays) for v in obj]}
    if isinstance(obj, list):
        return [_encode(v, arrays) for v in obj]
    if isinstance(obj, set):
        return {"__set__": [_encode(v, arrays) for v in sorted(obj, key=repr)]}
    raise TypeError(
        f"difflab.save cannot store an object of type {type(obj).__name__}: it saves "
        f"tensors, arrays, numbers, strings, None, and dicts/lists/tuples of them. For a "
        f"model or an optimizer save its state_dict()."
    )


def _write(obj: Any, stream: Any) -> None:
    arrays: list = []
    tree = _encode(obj, arrays)
    manifest = {"format": FORMAT, "version": VERSION, "arrays": len(arrays), "object": tree}
    with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr("manifest.json", json.dumps(manifest))
        for i, array in enumerate(arrays):
            buffer = io.BytesIO()
            if not array.flags.c_contiguous:  # (ascontiguousarray would make 0-d arrays 1-d)
                array = array.copy(order="C")
            np.lib.format.write_array(buffer, array, allow_pickle=False)
            zf.writestr(f"arrays/{i}.npy", buffer.getvalue())


def save(obj: Any, f: str | os.PathLike | Any) -> None:
    """Save tensors, arrays and (nested) state dicts to ``f`` (a path or a binary file object).

    To a path the write is atomic: the old file stays intact until the new
    one is complete.
    """
    if hasattr(f, "write"):
        _write(obj, f)
        return
    path = os.fspath(f)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".difflab-save-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as stream:
            _write(obj, stream)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def _decode(node: Any, arrays: dict, device: Any) -> Any:
    if isinstance(node, list):
        return [_decode(v, arrays, device) for v in node]
    if not isinstance(node, dict):
        return node
    if "__tensor__" in node:
        array = arrays[node["__tensor__"]]
        if device is not None:
            array = backend.to_device(array, device)
        if node.get("parameter"):
            from difflab.nn.parameter import Parameter

            return Parameter(Tensor._wrap(array), requires_grad=node.get("requires_grad", False))
        t = Tensor._wrap(array)
        if node.get("requires_grad"):
            t.requires_grad = True
        return t
    if "__ndarray__" in node:
        return arrays[node["__ndarray__"]]
    if "__dict__" in node:
        return {_decode(k, arrays, device): _decode(v, arrays, device)
                for k, v in node["__dict__"]}
    if "__tuple__" in node:
        return tuple(_decode(v, arrays, device) for v in node["__tuple__"])
    if "__set__" in node:
        return {_decode(v, arrays, device) for v in node["__set__"]}
    raise CheckpointError(f"unknown entry in the manifest: {sorted(node)}")


def load(f: str | os.PathLike | Any, map_location: Any = None, weights_only: bool = True
         ) -> Any:
    """Read what :func:`save` wrote.  ``map_location``: a device for every tensor ('cpu', 'cuda').

    Raises :class:`CheckpointError` (a ValueError) for a file that is
    truncated, corrupted or not a difflab checkpoint, and FileNotFoundError
    for a missing one.  Never unpickles (``weights_only`` is always true).
    """
    name = getattr(f, "name", None) if hasattr(f, "read") else os.fspath(f)
    device = None
    if map_location is not None and not callable(map_location):
        if isinstance(map_location, dict):
            raise TypeError("map_location as a dict is not supported; pass a device")
        device = backend.device(map_location)
    try:
        with zipfile.ZipFile(f, "r") as zf:
            bad = zf.testzip()
            if bad is not None:
                raise CheckpointError(f"{name}: the member {bad} is corrupted (CRC mismatch)")
            manifest = json.loads(zf.read("manifest.json").decode("utf-8"))
            if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
                raise CheckpointError(f"{name} is a zip file but not a difflab checkpoint")
            if manifest.get("version", 0) > VERSION:
                raise CheckpointError(
                    f"{name} was written by a newer difflab (format version "
                    f"{manifest['version']}, this one reads up to {VERSION})"
                )
            arrays = {}
            for i in range(int(manifest["arrays"])):
                with zf.open(f"arrays/{i}.npy") as member:
                    arrays[i] = np.lib.format.read_array(io.BytesIO(member.read()),
                                                         allow_pickle=False)
    except FileNotFoundError:
        raise
    except CheckpointError:
        raise
    except (zipfile.BadZipFile, KeyError, ValueError, EOFError, OSError, UnicodeDecodeError,
            json.JSONDecodeError) as exc:
        raise CheckpointError(
            f"{name} is not a valid difflab checkpoint (truncated or corrupted?): {exc}"
        ) from None
    result = _decode(manifest["object"], arrays, device)
    if callable(map_location):
        return map_location(result, None)
    return result
