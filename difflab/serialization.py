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

``save(model)`` of a whole module writes its class's name and its attributes
(parameters, buffers, children, hyper-parameters) as data, without pickle;
``load`` rebuilds difflab's own module classes and the classes the user
allows (:func:`add_safe_globals`, :class:`safe_globals`), never imports
anything, and refuses any other class with an error naming it.  Shared
modules and tensors (tied weights) stay shared.

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
keys, depth, array references), so any malformed file raises
:class:`CheckpointError` naming what is wrong.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import zipfile
from collections import OrderedDict
from typing import Any

import numpy as np

from difflab import backend, dtypes
from difflab.tensor import Tensor

FORMAT = "difflab-checkpoint"
VERSION = 2


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


class _Saving:
    """What one save has written so far: the arrays, and each tensor and module already
    written (written again, they become references, so shared weights stay shared)."""

    def __init__(self) -> None:
        self.arrays: list = []
        self.tensors: dict[int, int] = {}
        self.modules: dict[int, int] = {}
        self.keep: list = []  # (the objects whose ids are used above stay alive meanwhile)
        self.objects = False  # whether modules, dtypes or functions were written (version 2)
        self.in_module = 0    # > 0 while writing a module's attributes (functions allowed)


def _encode(obj: Any, saving: _Saving, path: tuple[int, ...] = (), where: str = "object"
            ) -> Any:
    from difflab.nn.modules.module import Module

    if isinstance(obj, (dict, list, tuple, set)):
        if id(obj) in path:
            raise TypeError("cannot save an object that contains itself (a cycle of "
                            "dicts/lists/tuples)")
        if len(path) >= MAX_DEPTH:
            raise TypeError(f"cannot save dicts/lists/tuples nested more than {MAX_DEPTH} "
                            "levels deep")
        path = (*path, id(obj))
    if isinstance(obj, Tensor):
        index = saving.tensors.get(id(obj))
        if index is None:
            saving.arrays.append(backend.to_numpy(obj.array))
            index = saving.tensors[id(obj)] = len(saving.arrays) - 1
            saving.keep.append(obj)
        entry = {"__tensor__": index}
        if obj.requires_grad:
            entry["requires_grad"] = True
        from difflab.nn.parameter import Parameter

        if isinstance(obj, Parameter):
            entry["parameter"] = True
        return entry
    if isinstance(obj, Module):
        return _encode_module(obj, saving, path, where)
    if isinstance(obj, np.ndarray) or backend.is_gpu_array(obj):
        if getattr(obj, "dtype", None) is not None and obj.dtype == object:
            raise TypeError("cannot save an array of Python objects (dtype=object)")
        saving.arrays.append(backend.to_numpy(obj))
        return {"__ndarray__": len(saving.arrays) - 1}
    if isinstance(obj, np.generic):
        return _encode(obj.item(), saving, path, where)
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, dtypes.dtype):
        saving.objects = True
        return {"__dtype__": obj.dtype.name}
    if isinstance(obj, dict):
        items = []
        for key, value in obj.items():
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                raise TypeError(
                    f"cannot save a dict key of type {type(key).__name__}: keys must be "
                    f"str, int, float, bool or None"
                )
            items.append([_encode(key, saving, path, where),
                          _encode(value, saving, path, f"{where}[{key!r}]")])
        return {"__dict__": items}
    if isinstance(obj, tuple):
        return {"__tuple__": [_encode(v, saving, path, where) for v in obj]}
    if isinstance(obj, list):
        return [_encode(v, saving, path, where) for v in obj]
    if isinstance(obj, set):
        return {"__set__": [_encode(v, saving, path, where) for v in sorted(obj, key=repr)]}
    if saving.in_module and (isinstance(obj, type) or callable(obj)):
        name = _qualified_name(obj)
        if name is None:
            raise TypeError(
                f"cannot save {where}: {obj!r} has no importable name (a lambda or a local "
                f"function); use a function defined at module level, e.g. "
                f"difflab.nn.functional.relu"
            )
        saving.objects = True
        return {"__global__": name}
    raise TypeError(
        f"difflab.save cannot store an object of type {type(obj).__name__}"
        + ("" if where == "object" else f" ({where})")
        + ": it saves tensors, arrays, numbers, strings, None, dicts/lists/tuples of them, "
        "and whole nn.Modules (whose attributes are such data)."
    )


def _write(obj: Any, stream: Any) -> None:
    saving = _Saving()
    tree = _encode(obj, saving)
    arrays = saving.arrays
    # (files of plain data keep version 1, so older difflabs still read them)
    manifest = {"format": FORMAT, "version": VERSION if saving.objects else 1,
                "arrays": len(arrays), "object": tree}
    with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr("manifest.json", json.dumps(manifest))
        for i, array in enumerate(arrays):
            buffer = io.BytesIO()
            if not array.flags.c_contiguous:  # (ascontiguousarray would make 0-d arrays 1-d)
                array = array.copy(order="C")
            np.lib.format.write_array(buffer, array, allow_pickle=False)
            zf.writestr(f"arrays/{i}.npy", buffer.getvalue())


def save(obj: Any, f: str | os.PathLike | Any) -> None:
    """Save tensors, arrays, (nested) state dicts or whole modules to ``f`` (a path or a
    binary file object).

    To a path the write is atomic: the old file stays intact until the new
    one is complete.  A whole ``nn.Module`` is written as its class's name and
    its attributes; load it back with :func:`load` (your own classes must be
    allowed: :func:`add_safe_globals`).  An attribute that is not data (a
    lambda, an open file) is refused with a TypeError naming it.
    """
    if hasattr(f, "write"):
        _write(obj, f)
        return
    path = os.path.abspath(os.fspath(f))
    directory, base = os.path.split(path)
    _remove_stale_temporaries(directory, base)
    tmp = os.path.join(directory, f".{base}.{os.getpid()}-{secrets.token_hex(4)}{_TEMP_SUFFIX}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, _file_mode(path))
        with os.fdopen(fd, "wb") as stream:
            _write(obj, stream)
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


_SCALARS = (type(None), bool, int, float, str)
_TAGS = {
    "__tensor__": {"requires_grad", "parameter"},
    "__ndarray__": set(),
    "__dict__": set(),
    "__tuple__": set(),
    "__set__": set(),
    # version 2: whole modules, references to a module already rebuilt, dtypes, functions
    "__module__": {"id", "state"},
    "__ref__": set(),
    "__dtype__": set(),
    "__global__": set(),
}


class _Loading:
    """What one load has rebuilt so far, and the classes and functions it may use."""

    def __init__(self, arrays: dict, device: Any) -> None:
        self.arrays, self.device = arrays, device
        self.tensors: dict[int, tuple] = {}  # array index -> (flags, tensor)
        self.modules: dict[int, Any] = {}    # module id -> module
        self._allowed: dict[str, Any] | None = None

    def allowed(self) -> dict[str, Any]:
        if self._allowed is None:
            self._allowed = allowed_globals()
        return self._allowed


def _decode(node: Any, loading: _Loading | dict, device: Any = None, depth: int = 0) -> Any:
    """Rebuild one manifest entry, checking it; raises CheckpointError naming the fault.

    ``loading`` is what this load rebuilt so far, or (as callers that decode one piece
    of a manifest pass it) the arrays by index, with ``device``.
    """
    if not isinstance(loading, _Loading):
        loading = _Loading(loading, device)
    if depth > MAX_DEPTH:
        raise CheckpointError(f"the manifest is nested more than {MAX_DEPTH} levels deep")
    if isinstance(node, _SCALARS):
        return node
    if isinstance(node, list):
        return [_decode(v, loading, depth=depth + 1) for v in node]
    if not isinstance(node, dict):
        raise CheckpointError(f"unexpected {type(node).__name__} in the manifest")
    tags = [k for k in node if k in _TAGS]
    if len(tags) != 1 or set(node) - {tags[0]} - _TAGS[tags[0]]:
        raise CheckpointError(f"unknown entry in the manifest: {sorted(map(str, node))}")
    tag = tags[0]
    if tag == "__ndarray__":
        return _array(node[tag], loading.arrays)
    if tag == "__tensor__":
        return _decode_tensor(node, loading)
    if tag == "__module__":
        return _decode_module(node, loading, depth)
    if tag == "__ref__":
        ref = node[tag]
        if type(ref) is not int or ref not in loading.modules:
            raise CheckpointError(f"a reference to module {ref!r:.40} that the file has not "
                                  f"defined before")
        return loading.modules[ref]
    if tag == "__dtype__":
        return _decode_dtype(node[tag])
    if tag == "__global__":
        return _resolve(node[tag], loading, "function or class")
    items = node[tag]
    if not isinstance(items, list):
        raise CheckpointError(f"{tag} must hold a list, got {type(items).__name__}")
    if tag == "__tuple__":
        return tuple(_decode(v, loading, depth=depth + 1) for v in items)
    if tag == "__set__":
        return {_key(_decode(v, loading, depth=depth + 1)) for v in items}
    out = {}
    for pair in items:
        if not (isinstance(pair, list) and len(pair) == 2):
            raise CheckpointError(f"a dict entry must be a [key, value] pair, got {pair!r:.80}")
        out[_key(_decode(pair[0], loading, depth=depth + 1))] = _decode(
            pair[1], loading, depth=depth + 1)
    return out


def _decode_tensor(node: dict, loading: _Loading) -> Tensor:
    """One tensor; the same array index twice is the same tensor (a shared weight)."""
    index = node["__tensor__"]
    array = _array(index, loading.arrays)
    flags = {k: node.get(k, False) for k in _TAGS["__tensor__"]}
    if not all(isinstance(v, bool) for v in flags.values()):
        raise CheckpointError(f"tensor flags must be true or false, got {flags}")
    if index in loading.tensors:
        seen_flags, tensor = loading.tensors[index]
        if seen_flags != flags:
            raise CheckpointError(f"array {index} is used by two tensors with different flags "
                                  f"({seen_flags} and {flags})")
        return tensor
    if flags["requires_grad"] and array.dtype.kind not in "fc":
        raise CheckpointError(f"a {array.dtype} tensor cannot require grad")
    if loading.device is not None:
        array = backend.to_device(array, loading.device)
    if flags["parameter"]:
        from difflab.nn.parameter import Parameter

        tensor = Parameter(Tensor._wrap(array), requires_grad=flags["requires_grad"])
    else:
        tensor = Tensor._wrap(array)
        if flags["requires_grad"]:
            tensor.requires_grad = True
    loading.tensors[index] = (flags, tensor)
    return tensor


def _key(value: Any) -> Any:
    if not isinstance(value, _SCALARS):
        raise CheckpointError(f"a dict key or set member must be a number, string or None, "
                              f"got {type(value).__name__}")
    return value


def _array(index: Any, arrays: dict) -> Any:
    if type(index) is not int:
        raise CheckpointError(f"an array reference must be an integer, got {index!r:.80}")
    if index not in arrays:
        raise CheckpointError(f"the manifest refers to array {index}, which the file does not "
                              f"hold (it has {len(arrays)})")
    return arrays[index]


def _read_member(zf: zipfile.ZipFile, member: str, limit: int) -> bytes:
    """One member's bytes, after checking the size it declares against ``limit``."""
    try:
        info = zf.getinfo(member)
    except KeyError:
        raise CheckpointError(f"the file has no {member}") from None
    if info.file_size > limit:
        raise CheckpointError(
            f"{member} declares {info.file_size:,} bytes, more than the limit of {limit:,} "
            "(pass a larger max_bytes to load a file this large)"
        )
    return zf.read(member)  # stops at the declared size and checks the CRC


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


def load(f: str | os.PathLike | Any, map_location: Any = None, weights_only: bool = True,
         *, max_bytes: int = MAX_LOAD_BYTES) -> Any:
    """Read what :func:`save` wrote.  ``map_location``: a device for every tensor ('cpu', 'cuda').

    ``max_bytes`` bounds the array data read (declared sizes are checked
    before anything is read, so a forged file cannot make this allocate more).

    Raises :class:`CheckpointError` (a ValueError) for a file that is
    truncated, corrupted, forged or not a difflab checkpoint, and
    FileNotFoundError for a missing one.  Never unpickles, whatever
    ``weights_only`` says: a module is rebuilt only if its class is difflab's
    or allowed (:func:`add_safe_globals`); any other class is refused with a
    CheckpointError naming it and saying how to allow it.
    """
    name = getattr(f, "name", None) if hasattr(f, "read") else os.fspath(f)
    device = None
    if map_location is not None and not callable(map_location):
        if isinstance(map_location, dict):
            raise TypeError("map_location as a dict is not supported; pass a device")
        device = backend.device(map_location)
    try:
        with zipfile.ZipFile(f, "r") as zf:
            manifest, arrays = _read_archive(zf, max_bytes)
        result = _decode(manifest["object"], _Loading(arrays, device))
    except FileNotFoundError:
        raise
    except CheckpointError as exc:
        raise CheckpointError(f"{name}: {exc}") from None
    except (zipfile.BadZipFile, KeyError, ValueError, TypeError, EOFError, OSError,
            UnicodeDecodeError, RecursionError, MemoryError, NotImplementedError) as exc:
        raise CheckpointError(
            f"{name} is not a valid difflab checkpoint (truncated or corrupted?): "
            f"{type(exc).__name__}: {exc}"
        ) from None
    if callable(map_location):
        return map_location(result, None)
    return result


# ---------------------------------------------------------------------------------------
# Whole modules (issue 27): ``save(model)`` writes the module tree as data, ``load`` rebuilds
# only classes it knows: difflab's own, and those the user allows.
#
# A module is written as {"__module__": "difflab.nn.modules.layers.Linear", "id": 3,
# "state": {attribute: value, ...}}: its class's name and its attributes (the registries of
# parameters, buffers and children included), never code.  Loading looks the name up in a
# table of allowed classes (nothing is imported, nothing is called but object.__new__), sets
# the attributes, and checks them: a parameter must be a Parameter, a child a Module, and no
# attribute may replace a method or a dunder.  A module written twice (shared) is written
# once and referred to ({"__ref__": 3}); a tensor written twice shares its array.

_SAFE_GLOBALS: list = []
_REGISTRIES = ("_parameters", "_buffers", "_modules")


def _qualified_name(obj: Any) -> str | None:
    """``module.QualName`` of a class or function, or None for lambdas and local functions."""
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
        return None
    return f"{module}.{qualname}"


def _check_safe(entries: Any) -> list:
    if not isinstance(entries, (list, tuple)):
        raise TypeError(f"safe globals must be a list of classes or functions, got "
                        f"{type(entries).__name__}")
    checked = []
    for entry in entries:
        obj, name = entry if isinstance(entry, tuple) and len(entry) == 2 else (entry, None)
        if isinstance(obj, str) or not (isinstance(obj, type) or callable(obj)):
            raise TypeError(f"safe globals must be the classes or functions themselves (e.g. "
                            f"add_safe_globals([MyNet])), not {obj!r:.60}")
        name = name if isinstance(name, str) else _qualified_name(obj)
        if name is None:
            raise TypeError(f"{obj!r:.60} has no importable name (a lambda or a local "
                            "definition): it could not be found by name when loading")
        checked.append((obj, name))
    return checked


def add_safe_globals(safe_globals: list) -> None:
    """Allow :func:`load` to rebuild these classes (and refer to these functions).

    A file names the classes of the modules it holds; ``load`` rebuilds
    difflab's own modules, and any other class only once it is allowed here.
    Allowing a class means trusting its code with the file's data: allow your
    own model classes, not classes a file asks for.

    Parameters
    ----------
    safe_globals : list
        Classes or functions (or ``(object, "module.Name")`` pairs, to accept a
        name the object had when the file was written).

    Examples
    --------
    >>> import io, difflab as dl
    >>> class TinyNet(dl.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = dl.nn.Linear(2, 1)
    ...     def forward(self, x):
    ...         return self.fc(x)
    >>> buffer = io.BytesIO()
    >>> dl.save(TinyNet(), buffer)
    >>> _ = buffer.seek(0)
    >>> dl.serialization.add_safe_globals([TinyNet])
    >>> type(dl.load(buffer)).__name__
    'TinyNet'
    >>> dl.serialization.clear_safe_globals()
    """
    _SAFE_GLOBALS.extend(_check_safe(safe_globals))


def get_safe_globals() -> list:
    """The classes and functions :func:`add_safe_globals` allowed, in order.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.serialization.get_safe_globals()
    []
    """
    return [obj for obj, _ in _SAFE_GLOBALS]


def clear_safe_globals() -> None:
    """Forget every class and function :func:`add_safe_globals` allowed.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.serialization.clear_safe_globals()
    >>> dl.serialization.get_safe_globals()
    []
    """
    _SAFE_GLOBALS.clear()


class safe_globals:  # noqa: N801  (PyTorch's name)
    """Allow classes and functions inside a ``with`` block only (see :func:`add_safe_globals`).

    Examples
    --------
    >>> import io, difflab as dl
    >>> class Doubler(dl.nn.Module):
    ...     def forward(self, x):
    ...         return 2 * x
    >>> buffer = io.BytesIO()
    >>> dl.save(Doubler(), buffer)
    >>> _ = buffer.seek(0)
    >>> with dl.serialization.safe_globals([Doubler]):
    ...     model = dl.load(buffer)
    >>> model(dl.tensor([1.0, 2.0]))
    tensor([2., 4.])
    """

    def __init__(self, safe_globals: list) -> None:
        self.entries = _check_safe(safe_globals)

    def __enter__(self) -> None:
        self._before = len(_SAFE_GLOBALS)
        _SAFE_GLOBALS.extend(self.entries)

    def __exit__(self, *exc: object) -> None:
        del _SAFE_GLOBALS[self._before:]


def _difflab_module_classes() -> list:
    from difflab.nn.modules.module import Module

    found, todo = [Module], [Module]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in found:
                found.append(sub)
                todo.append(sub)
    return [c for c in found if c.__module__.split(".")[0] == "difflab"]


def allowed_globals() -> dict[str, Any]:
    """Name -> object for everything :func:`load` may rebuild or refer to.

    difflab's module classes, the functions of :mod:`difflab.nn.functional`
    (a Transformer layer keeps its activation function), and the user's safe
    globals.  Nothing is imported to build this table.

    Examples
    --------
    >>> import difflab as dl
    >>> table = dl.serialization.allowed_globals()
    >>> table["difflab.nn.modules.layers.Linear"] is dl.nn.Linear
    True
    >>> "builtins.eval" in table
    False
    """
    from difflab.nn import functional

    table: dict[str, Any] = {}
    for cls in _difflab_module_classes():
        table[f"{cls.__module__}.{cls.__qualname__}"] = cls
    for name in dir(functional):
        obj = getattr(functional, name)
        if not name.startswith("_") and callable(obj) and not isinstance(obj, type) and \
                getattr(obj, "__module__", "") == functional.__name__:
            table[f"{functional.__name__}.{name}"] = obj
    for obj, name in _SAFE_GLOBALS:
        table[name] = obj
    return table


def _resolve(name: Any, loading: _Loading, what: str) -> Any:
    if not isinstance(name, str):
        raise CheckpointError(f"a {what} name must be a string, got {name!r:.60}")
    found = loading.allowed().get(name)
    if found is None:
        short = name.rsplit(".", 1)[-1]
        raise CheckpointError(
            f"the file asks for {name}, which is not an allowed {what}: load rebuilds "
            f"difflab's modules and the classes you allow. If you trust this class, allow it: "
            f"difflab.serialization.add_safe_globals([{short}]) or "
            f"`with difflab.serialization.safe_globals([{short}]): difflab.load(...)`"
        )
    return found


def _encode_module(module: Any, saving: _Saving, path: tuple, where: str) -> dict:
    saving.objects = True
    ref = saving.modules.get(id(module))
    if ref is not None:
        return {"__ref__": ref}
    cls = type(module)
    name = _qualified_name(cls)
    if name is None:
        raise TypeError(f"cannot save {where}: its class {cls.__qualname__} is defined inside "
                        f"a function; define it at module level so it can be found by name")
    ref = saving.modules[id(module)] = len(saving.modules)
    saving.keep.append(module)
    if where == "object":
        where = cls.__name__
    state = []
    saving.in_module += 1
    try:
        for key, value in module.__dict__.items():
            if key in _REGISTRIES:  # (errors name model.body.0.weight, as PyTorch's keys do)
                value = {"__dict__": [[k, _encode(v, saving, path, f"{where}.{k}")]
                                      for k, v in value.items()]}
            else:
                value = _encode(value, saving, path, f"{where}.{key}")
            state.append([key, value])
    finally:
        saving.in_module -= 1
    return {"__module__": name, "id": ref, "state": {"__dict__": state}}


def _decode_module(node: dict, loading: _Loading, depth: int) -> Any:
    from difflab.nn.modules.module import Module
    from difflab.nn.parameter import Parameter

    cls = _resolve(node["__module__"], loading, "module class")
    if not (isinstance(cls, type) and issubclass(cls, Module)):
        raise CheckpointError(f"{node['__module__']} is not an nn.Module class")
    ref = node.get("id")
    if type(ref) is not int or ref in loading.modules:
        raise CheckpointError(f"a module needs a new integer id, got {ref!r:.40}")
    module = cls.__new__(cls)
    loading.modules[ref] = module  # (before its state: a child may refer back to it)
    state = _decode(node.get("state"), loading, depth=depth + 1)
    if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
        raise CheckpointError(f"the state of a {cls.__name__} must be a dict of attribute "
                              f"names")
    missing = {"training", "_non_persistent", *_REGISTRIES} - set(state)
    if missing:
        raise CheckpointError(f"the state of a {cls.__name__} lacks {sorted(missing)}")
    if not isinstance(state["training"], bool):
        raise CheckpointError(f"{cls.__name__}.training must be true or false")
    kinds = {"_parameters": (Parameter, "a Parameter"), "_buffers": (Tensor, "a Tensor"),
             "_modules": (Module, "a Module")}
    for registry, (kind, words) in kinds.items():
        entries = state[registry]
        if not isinstance(entries, dict) or not all(isinstance(k, str) for k in entries):
            raise CheckpointError(f"{cls.__name__}.{registry} must map names to values")
        for key, value in entries.items():
            if value is not None and not isinstance(value, kind):
                raise CheckpointError(f"{cls.__name__}.{registry}[{key!r}] must be {words} or "
                                      f"None, got {type(value).__name__}")
        state[registry] = OrderedDict(entries)
    if not isinstance(state["_non_persistent"], set) or not all(
            isinstance(k, str) for k in state["_non_persistent"]):
        raise CheckpointError(f"{cls.__name__}._non_persistent must be a set of names")
    for key in state:
        attribute = getattr(cls, key, None)
        if key.startswith("__") or callable(attribute) or isinstance(attribute, property):
            raise CheckpointError(f"the file sets {cls.__name__}.{key}, which would replace "
                                  f"a method or a special attribute of the class")
    module.__dict__.update(state)
    return module


def _decode_dtype(name: Any) -> Any:
    try:
        found = dtypes.as_dtype(name) if isinstance(name, str) else None
    except TypeError:
        found = None
    if found is None or found.kind not in "biufc":
        raise CheckpointError(f"not a dtype difflab has: {name!r:.40}")
    return found
