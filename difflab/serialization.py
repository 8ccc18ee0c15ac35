"""``difflab.save(obj, path)`` and ``difflab.load(path)``: checkpoints that cannot run code.

``torch.save`` pickles, and unpickling a file can execute anything in it.
difflab's own format is a plain zip archive:

* ``manifest.json``: the structure of the object (nested dicts, lists,
  tuples, numbers, strings, None) with every array replaced by a reference
  ``{"__tensor__": 3, ...}``;
* ``arrays/3.npy``: each array in NumPy's ``.npy`` format, read back with
  ``allow_pickle=False``.

Nothing in a file is ever executed: loading reads JSON and raw numbers;
difflab's own files are never unpickled.
Dict keys keep their type (an optimizer's state uses int keys) and order.
A tensor written twice (a tied weight) is stored once and read back as one
tensor.

``save(model)`` of a whole module writes its class's name and its attributes
(parameters, buffers, children, hyper-parameters) as data, without pickle;
``load`` rebuilds difflab's own module classes and the classes the user
allows (:func:`add_safe_globals`, :class:`safe_globals`), never imports
anything, and refuses any other class with an error naming it.  Shared
modules and tensors (tied weights) stay shared (the tags are in
:mod:`difflab.serialization_modules`).  A file holding modules, dtypes or
functions has format version 2; one of plain data keeps version 1, so older
difflabs still read it.

Saving is *atomic*: the archive is written to a temporary file in the same
directory, flushed to disk, and then renamed over the target in one step,
so an interrupted save leaves the previous file intact (and the next save
removes the temporary file a killed one left).  The file gets the usual
permissions (``0o666`` less the umask, or those of the file it replaces).
Zip stores a CRC of every member, so a corrupted or truncated file is
detected on load.

Loading trusts nothing in the file: every size the archive declares is
checked against the data present and a limit (``max_bytes``) before
anything is read, and the manifest is checked entry by entry (types, known
keys, depth, array references: :mod:`difflab.jsontree`, the codec graph
files share), so any malformed file raises :class:`CheckpointError` naming
what is wrong.

Files written by PyTorch's ``torch.save`` (the zip format of torch >= 1.6:
``archive/data.pkl`` and the raw bytes of each storage) are read too, by
:mod:`difflab.serialization_pytorch`: its ``data.pkl`` is a pickle, and it is
read with a *restricted* unpickler in the spirit of PyTorch's own
``weights_only=True`` loader, whatever ``weights_only`` says.  Its opcodes
are checked before it runs; it may name only a fixed table of globals
(``collections.OrderedDict``, the tensor and parameter rebuilders, storage
types, dtypes, ``torch.Size``, ``torch.device``, ``set``, ``complex``,
bytes), each mapped to a stand-in of difflab's that checks its arguments and
builds only data, so no function of the file's choosing is ever called; any
other global (``os.system``, a model's class) is refused with a
:class:`CheckpointError` naming it.  Storage sizes, tensor views and the
bytes of all tensors are checked against the archive and ``max_bytes``
before anything is read or allocated.  PyTorch's legacy (non-zip) files,
TorchScript archives and pickled whole modules are refused with what to do
instead (re-save with a recent PyTorch; save ``model.state_dict()``).
"""

from __future__ import annotations

import io
import json
import os
import secrets
import zipfile
from typing import Any

import numpy as np

from difflab import backend
from difflab.dtypes import BFLOAT16
from difflab.jsontree import (
    LIMITS,
    Limits,
    Reader,
    Tag,
    TreeCodec,
    Writer,
    array_tag,
    dict_tag,
    set_tag,
    tuple_tag,
)
from difflab.serialization_modules import (
    OBJECTS,
    add_safe_globals,
    allowed_globals,
    clear_safe_globals,
    get_safe_globals,
    global_tag,
    module_tags,
    safe_globals,
)
from difflab.serialization_pytorch import (
    is_pytorch_archive,
    read_member,
    read_pytorch_archive,
    refuse_legacy,
)
from difflab.serialization_pytorch_write import write_pytorch_archive
from difflab.tensor import Tensor

__all__ = ["CheckpointError", "add_safe_globals", "allowed_globals", "clear_safe_globals",
           "get_safe_globals", "load", "read_npy", "safe_globals", "save"]

FORMAT = "difflab-checkpoint"
#: The newest format version this difflab writes and reads (2: whole modules).
VERSION = 2


class CheckpointError(ValueError):
    """The file is not a valid difflab checkpoint (truncated, corrupted or foreign)."""


#: Most bytes of array data :func:`load` reads from one file unless told otherwise.
MAX_LOAD_BYTES = 16 * 2**30
#: Most bytes of the manifest (the JSON structure of the saved object).
MAX_MANIFEST_BYTES = 64 * 2**20
#: Deepest nesting of dicts, lists and tuples a manifest may have (the tree codec's limit).
MAX_DEPTH = LIMITS.max_depth


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


def _tensor_tag(device: Any) -> Tag:
    """A tensor as ``{"__tensor__": i, "requires_grad": true, "parameter": true}`` (blob i).

    Read back on ``device`` (None: where it was saved: the CPU); flags must
    be booleans, and only a floating tensor may require grad.  A tensor
    written twice (a tied weight) is blob i both times, and read back as one
    tensor (two entries of blob i with different flags are refused).
    """
    def write(t: Tensor, w: Writer) -> dict:
        from difflab.nn.parameter import Parameter

        written = w.memo.setdefault("tensors", {})  # id -> (blob, the tensor: kept alive)
        array = backend.to_numpy(t.array)
        if id(t) not in written:  # (bfloat16, which .npy cannot name: its 16 bits as uint16)
            written[id(t)] = (w.blob(array.view(np.uint16) if array.dtype == BFLOAT16
                                     else array), t)
        entry: dict[str, Any] = {"__tensor__": written[id(t)][0]}
        if array.dtype == BFLOAT16:
            entry["bfloat16"] = True
        if t.requires_grad:
            entry["requires_grad"] = True
        if isinstance(t, Parameter):
            entry["parameter"] = True
        return entry

    def read(entry: dict, r: Reader, depth: int) -> Tensor:
        index = entry["__tensor__"]
        array = _bfloat16_bits(r.blob(index), entry.get("bfloat16", False), r)
        flags = {k: entry.get(k, False) for k in ("requires_grad", "parameter")}
        if not all(isinstance(v, bool) for v in flags.values()):
            raise r.fail(f"tensor flags must be true or false, got {flags}")
        read_before = r.memo.setdefault("tensors", {})  # blob -> (flags, tensor)
        if index in read_before:
            if read_before[index][0] != flags:
                raise r.fail(f"array {index} is used by two tensors with different flags "
                             f"({read_before[index][0]} and {flags})")
            return read_before[index][1]
        if flags["requires_grad"] and array.dtype.kind not in "fc" and array.dtype != BFLOAT16:
            raise r.fail(f"a {array.dtype} tensor cannot require grad")
        read_before[index] = (flags, _tensor(array, flags, device))
        return read_before[index][1]

    return Tag("__tensor__", lambda v: isinstance(v, Tensor), write, read,
               frozenset({"requires_grad", "parameter", "bfloat16"}))


def _bfloat16_bits(array: Any, bfloat16: Any, r: Reader) -> Any:
    """A tensor's blob as written: bfloat16 tensors are stored as their uint16 bits."""
    if bfloat16 is False:
        return array
    if bfloat16 is not True or array.dtype != np.uint16:
        raise r.fail(f"a bfloat16 tensor is stored as uint16 bits (flag true), got flag "
                     f"{bfloat16!r} and {array.dtype}")
    if BFLOAT16 is None:
        raise r.fail("the checkpoint holds a bfloat16 tensor; reading it needs the ml_dtypes "
                     "package (pip install ml_dtypes)")
    return array.view(BFLOAT16)


def _tensor(array: Any, flags: dict, device: Any) -> Tensor:
    """A tensor (or Parameter) of ``array``, moved to ``device``, with the file's flags."""
    if device is not None:
        array = backend.to_device(array, device)
    if flags["parameter"]:
        from difflab.nn.parameter import Parameter

        return Parameter(Tensor._wrap(array), requires_grad=flags["requires_grad"])
    t = Tensor._wrap(array)
    if flags["requires_grad"]:
        t.requires_grad = True
    return t


def _is_array(value: Any) -> bool:
    return isinstance(value, np.ndarray) or backend.is_gpu_array(value)


def _array_blob(array: Any) -> np.ndarray:
    if array.dtype == object:
        raise TypeError("cannot save an array of Python objects (dtype=object)")
    if array.dtype == BFLOAT16:  # (.npy would write it as anonymous 2-byte records)
        raise TypeError("cannot save a NumPy bfloat16 array as an array: save it as a tensor "
                        "(difflab.tensor(array)), which keeps its dtype")
    return backend.to_numpy(array)


def _refuse(value: Any, where: str) -> TypeError:
    return TypeError(
        f"difflab.save cannot store an object of type {type(value).__name__}"
        + ("" if where in ("", "object") else f" ({where})")
        + ": it saves tensors, arrays, numbers, strings, None, dicts/lists/tuples of them, "
        "and whole nn.Modules (whose attributes are such data). For a model or an optimizer "
        "you may also save its state_dict()."
    )


def _codec(device: Any = None) -> TreeCodec:
    """The checkpoint's tree codec (its tag spellings, its limits); tensors read onto ``device``.

    The module tags (:mod:`difflab.serialization_modules`) go before the generic ones
    (a module is no plain value), the function tag last (it takes any callable left).
    """
    return TreeCodec([_tensor_tag(device), *module_tags(),
                      array_tag("__ndarray__", _is_array, _array_blob),
                      tuple_tag("__tuple__"), dict_tag("__dict__"), set_tag("__set__"),
                      global_tag()],
                     CheckpointError, limits=Limits(max_depth=MAX_DEPTH), refuse=_refuse)


def _write(obj: Any, stream: Any) -> None:
    arrays: list = []
    writer = Writer(_codec(), arrays)
    tree = writer.write(obj, "object")
    # (files of plain data keep version 1, so older difflabs still read them)
    version = VERSION if writer.memo.get(OBJECTS) else 1
    manifest = {"format": FORMAT, "version": version, "arrays": len(arrays), "object": tree}
    with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr("manifest.json", json.dumps(manifest))
        for i, array in enumerate(arrays):
            buffer = io.BytesIO()
            if not array.flags.c_contiguous:  # (ascontiguousarray would make 0-d arrays 1-d)
                array = array.copy(order="C")
            np.lib.format.write_array(buffer, array, allow_pickle=False)
            zf.writestr(f"arrays/{i}.npy", buffer.getvalue())


def _write_pytorch(obj: Any, stream: Any) -> None:
    write_pytorch_archive(obj, stream, max_depth=MAX_DEPTH)


def save(obj: Any, f: str | os.PathLike | Any, *, format: str = "difflab") -> None:  # noqa: A002
    """Save tensors, arrays, (nested) state dicts or whole modules to ``f``.

    ``f`` is a path or a binary file object.

    ``format="pytorch"`` writes the zip format of PyTorch's own ``torch.save``
    instead, which ``torch.load(f, weights_only=True)`` reads: for state
    dicts, optimizer state dicts and dicts, lists and tuples of tensors,
    strings, numbers and None (not whole modules, nor NumPy arrays), so a
    model trained in difflab can be handed to PyTorch users.  Its pickle is
    written opcode by opcode (no object's own pickling is called) and names
    only globals PyTorch's ``weights_only`` loader allows.  Two names for one
    tensor (or for one view of the same memory) share one storage, as tied
    weights do in PyTorch.

    To a path the write is atomic: the old file stays intact until the new
    one is complete.  A whole ``nn.Module`` is written as its class's name and
    its attributes; load it back with :func:`load` (your own classes must be
    allowed: :func:`add_safe_globals`).  An attribute that is not data (a
    lambda, an open file) is refused with a TypeError naming it.

    Parameters
    ----------
    obj : Tensor, array, dict, list, number, str or Module
        What to save (state dicts nest).
    f : str, path-like or binary file object
        Where to write.
    format : {"difflab", "pytorch"}, default "difflab"
        difflab's own format (zip, JSON manifest and ``.npy``), or PyTorch's.

    Returns
    -------
    None

    Raises
    ------
    TypeError
        For something that is not data (a lambda, an open file), naming it;
        with ``format="pytorch"``, for anything but tensors and plain data.
    ValueError
        For a ``format`` that is neither.

    Examples
    --------
    >>> import io, difflab as dl
    >>> buffer = io.BytesIO()
    >>> model = dl.nn.Linear(2, 1)
    >>> dl.save({"model": model.state_dict(), "step": 3}, buffer)
    >>> _ = buffer.seek(0)
    >>> dl.load(buffer)["step"]
    3

    The same in PyTorch's format (``torch.load`` reads it; so does ``dl.load``):

    >>> buffer = io.BytesIO()
    >>> dl.save({"w": dl.tensor([1.5, -2.0]), "step": 3}, buffer, format="pytorch")
    >>> _ = buffer.seek(0)
    >>> dl.load(buffer)
    {'w': tensor([ 1.5, -2. ]), 'step': 3}
    """
    if format not in ("difflab", "pytorch"):
        raise ValueError(f"format must be 'difflab' or 'pytorch', got {format!r}")
    write = _write if format == "difflab" else _write_pytorch
    if hasattr(f, "write"):
        write(obj, f)
        return
    path = os.path.abspath(os.fspath(f))
    directory, base = os.path.split(path)
    _remove_stale_temporaries(directory, base)
    tmp = os.path.join(directory, f".{base}.{os.getpid()}-{secrets.token_hex(4)}{_TEMP_SUFFIX}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, _file_mode(path))
        with os.fdopen(fd, "wb") as stream:
            write(obj, stream)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


_TEMP_SUFFIX = ".difflab-save"


def _file_mode(path: str) -> int:
    """The mode of the file being replaced, or the usual ``0o666`` less the umask."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _remove_stale_temporaries(directory: str, base: str) -> None:
    """Remove what a killed save of ``base`` left behind (its process no longer runs)."""
    prefix = f".{base}."
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if not (name.startswith(prefix) and name.endswith(_TEMP_SUFFIX)):
            continue
        pid = name[len(prefix):-len(_TEMP_SUFFIX)].split("-")[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _running(int(pid)):
            try:
                os.remove(os.path.join(directory, name))
            except OSError:
                pass


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, but belongs to someone else
        return True
    return True


def _read_member(zf: zipfile.ZipFile, member: str, limit: int) -> bytes:
    """One member's bytes, after checking the size it declares against ``limit``."""
    return read_member(zf, member, limit, CheckpointError)


def _read_archive(zf: zipfile.ZipFile, max_bytes: int) -> tuple[dict, dict]:
    manifest = json.loads(_read_member(zf, "manifest.json", MAX_MANIFEST_BYTES).decode("utf-8"))
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise CheckpointError("a zip file but not a difflab checkpoint")
    unknown = set(manifest) - {"format", "version", "arrays", "object"}
    if unknown or "object" not in manifest:
        raise CheckpointError(f"unknown or missing manifest fields: {sorted(unknown) or 'object'}")
    version, count = manifest.get("version", 0), manifest.get("arrays")
    if type(version) is not int or type(count) is not int or count < 0:
        raise CheckpointError("the manifest's version and array count must be integers")
    if version > VERSION:
        raise CheckpointError(
            f"written by a newer difflab (format version {version}, this one reads up to "
            f"{VERSION})"
        )
    members = {f"arrays/{i}.npy" for i in range(count)}
    sizes = [info.file_size for info in zf.infolist() if info.filename in members]
    if len(sizes) < count:
        raise CheckpointError(f"the manifest lists {count} arrays; the file holds {len(sizes)}")
    if sum(sizes) > max_bytes:
        raise CheckpointError(
            f"the arrays declare {sum(sizes):,} bytes in all, more than the limit of "
            f"{max_bytes:,} (pass a larger max_bytes to load a file this large)"
        )
    arrays = {}
    for i in range(count):
        member = f"arrays/{i}.npy"
        try:
            arrays[i] = read_npy(_read_member(zf, member, max_bytes), max_bytes=max_bytes,
                                 what=member)
        except ValueError as exc:
            raise CheckpointError(str(exc)) from None
    return manifest, arrays


def _head(f: Any, start: int) -> bytes:
    """The first bytes of a file that is not a zip archive (to recognise a legacy one)."""
    try:
        if hasattr(f, "read"):
            f.seek(start)
            return f.read(2)
        with open(f, "rb") as stream:
            return stream.read(2)
    except OSError:
        return b""


def load(f: str | os.PathLike | Any, map_location: Any = None, weights_only: bool = True,
         *, max_bytes: int = MAX_LOAD_BYTES) -> Any:
    """Read what :func:`save` or PyTorch's ``torch.save`` wrote, without running any of it.

    ``max_bytes`` bounds the array data read (declared sizes are checked
    before anything is read, so a forged file cannot make this allocate more).

    Raises :class:`CheckpointError` (a ValueError) for a file that is
    truncated, corrupted, forged or not a checkpoint, and FileNotFoundError
    for a missing one.  A difflab file is never unpickled, whatever
    ``weights_only`` says: a module is rebuilt only if its class is difflab's
    or allowed (:func:`add_safe_globals`); any other class is refused with a
    CheckpointError naming it and saying how to allow it.

    A file written by PyTorch's ``torch.save`` (state dicts, optimizer state
    dicts, checkpoint dicts, tensors, Parameters) is read with a restricted
    unpickler that calls no function the file names (the module docstring
    says how); its tensors come back as difflab tensors, a state dict as an
    ``OrderedDict``, and two names for one tensor (tied weights) as one
    tensor.  A pickled whole ``nn.Module`` (``torch.save(model)``), a
    TorchScript archive or a legacy non-zip file is refused with a
    CheckpointError saying how to re-save it.

    Parameters
    ----------
    f : str, path-like or binary file object
        What :func:`save` or PyTorch's ``torch.save`` wrote.
    map_location : str, Device or callable, optional
        Put every tensor on this device (default: the CPU, whatever device a
        PyTorch file names); a callable gets ``(result, None)`` and returns the
        result.
    weights_only : bool, default True
        Accepted for PyTorch's signature; difflab reads only data either way.
    max_bytes : int, default 16 GiB
        The most array data it reads.

    Returns
    -------
    object
        What was saved: tensors, state dicts, a module.

    Examples
    --------
    >>> import io, difflab as dl
    >>> embed = dl.nn.Embedding(5, 3)
    >>> model = dl.nn.Sequential(embed, dl.nn.Linear(3, 5))
    >>> model[1].weight = embed.weight  # tied weights
    >>> buffer = io.BytesIO()
    >>> dl.save(model, buffer)
    >>> _ = buffer.seek(0)
    >>> loaded = dl.load(buffer)
    >>> loaded[1].weight is loaded[0].weight
    True
    """
    name = (getattr(f, "name", None) or "the file") if hasattr(f, "read") else os.fspath(f)
    device = None
    if map_location is not None and not callable(map_location):
        if isinstance(map_location, dict):
            raise TypeError("map_location as a dict is not supported; pass a device")
        device = backend.device(map_location)
    try:
        start = f.tell() if hasattr(f, "read") else 0
        with zipfile.ZipFile(f, "r") as zf:
            if "manifest.json" not in zf.namelist() and is_pytorch_archive(zf):
                result = read_pytorch_archive(zf, max_bytes=max_bytes, max_depth=MAX_DEPTH,
                                              device=device, error=CheckpointError)
            else:
                manifest, arrays = _read_archive(zf, max_bytes)
                result = _codec(device).decode(manifest["object"], arrays)
    except FileNotFoundError:
        raise
    except CheckpointError as exc:
        raise CheckpointError(f"{name}: {exc}") from None
    except zipfile.BadZipFile as exc:
        refuse_legacy(_head(f, start), CheckpointError, name)
        raise CheckpointError(f"{name} is not a valid difflab checkpoint (truncated or "
                              f"corrupted?): BadZipFile: {exc}") from None
    except (KeyError, ValueError, TypeError, EOFError, OSError,
            UnicodeDecodeError, RecursionError, MemoryError, NotImplementedError) as exc:
        raise CheckpointError(
            f"{name} is not a valid difflab checkpoint (truncated or corrupted?): "
            f"{type(exc).__name__}: {exc}"
        ) from None
    if callable(map_location):
        return map_location(result, None)
    return result
