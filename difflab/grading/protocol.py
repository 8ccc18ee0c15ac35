"""The wire between the grader and the process that runs student code: data only.

The grader's trusted process and the student's process talk over two pipes, one
message at a time.  A message is

* 4 bytes: the length ``n`` of a JSON header (big-endian),
* ``n`` bytes: ``{"body": ..., "blobs": [size, ...]}`` in JSON,
* the blobs, back to back: arrays in NumPy's ``.npy`` format.

Values travel as JSON trees.  Plain JSON stands for itself (numbers, strings,
booleans, None, lists); everything else is an object with one tag:

=================================================  ===============================================
``{"$array": i}``                                  a NumPy array (blob ``i``, read without pickle)
``{"$scalar": i}``                                 a NumPy scalar (a 0-d array in blob ``i``)
``{"$tuple": [...]}``                              a tuple
``{"$dict": [[k, v], ...]}``                       a dict (keys: str, int, float, bool, None)
``{"$tensor": i, "requires_grad": b, "grad": j}``  a difflab tensor's values
``{"$dual": [p, t]}``                              a difflab dual number ``p + t·ε``
``{"$complex": [re, im]}``                         a complex number
``{"$ref": id, ...}``                              an object that stays in the student's process
``{"$slot": n, "value": v}``, ``{"$slot": n}``     a test's list, dict, array or tensor, mirrored
``{"$callback": n}``                               a test's function, called back (``crossing``)
=================================================  ===============================================

The trees are written and read by the project's one JSON tree codec
(:mod:`difflab.jsontree`, as checkpoints and graph files are), with the tags above and
the wire's limits (``LIMITS``); ``$tensor``, ``$dual``, ``$ref``, ``$slot`` and
``$callback`` are built by the two sides themselves (``extra`` and ``make``).

Nothing is ever unpickled or executed on reading: a reader builds only
numbers, strings, lists, tuples, dicts and arrays (or, for ``$ref``, what the
caller's ``make_ref`` builds).  Whatever arrives from the student's process is
untrusted: sizes, nesting depth and every tag are checked, and any
violation is a :class:`ProtocolError`.
"""

from __future__ import annotations

import io
import json
import math
import os
import select
import struct
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from difflab.jsontree import Limits, Reader, Tag, TreeCodec, Writer, dict_tag, float_tag, tuple_tag
from difflab.serialization import read_npy

__all__ = ["ProtocolError", "ChannelClosed", "Channel", "encode", "decode", "array_tree"]

#: Largest message accepted, in bytes (arrays included).
MAX_MESSAGE = 64 * 2**20
#: Deepest nesting of lists, tuples and dicts in a message.
MAX_DEPTH = 32
#: Most values (nodes of the tree) in one message.
MAX_NODES = 200_000


class ProtocolError(Exception):
    """A message that does not follow the protocol (malformed, too large, too deep)."""


class ChannelClosed(Exception):
    """The other end closed its pipe (the process ended)."""


class Channel:
    """One end of the conversation: reads messages from ``read_fd``, writes to ``write_fd``."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.read_fd, self.write_fd = read_fd, write_fd

    def send(self, body: Any, blobs: list[bytes], deadline: float | None = None) -> None:
        """Write one message; with a ``deadline`` the write end must be non-blocking."""
        header = json.dumps({"body": body, "blobs": [len(b) for b in blobs]}).encode("utf-8")
        view = memoryview(struct.pack(">I", len(header)) + header + b"".join(blobs))
        while view:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([], [self.write_fd], [], left)[1]:
                    raise TimeoutError
            try:
                written = os.write(self.write_fd, view)
            except BlockingIOError:
                continue
            except BrokenPipeError:
                raise ChannelClosed from None
            view = view[written:]

    def receive(self, deadline: float | None = None, limit: int = MAX_MESSAGE
                ) -> tuple[Any, list[bytes]]:
        """Read one message; ``deadline`` is a ``time.monotonic()`` value (None: wait)."""
        (size,) = struct.unpack(">I", self._read(4, deadline))
        if size > limit:
            raise ProtocolError(f"a message header of {size:,} bytes (limit {limit:,})")
        try:
            header = json.loads(self._read(size, deadline).decode("utf-8"))
        except (ValueError, RecursionError) as exc:  # (ValueError: a 5,000-digit number too)
            raise ProtocolError(f"a message that is not valid JSON ({str(exc)[:200]})"
                                ) from None
        sizes = header.get("blobs") if isinstance(header, dict) else None
        if (not isinstance(sizes, list) or "body" not in header
                or not all(type(n) is int and n >= 0 for n in sizes)):
            raise ProtocolError("a message without a valid header")
        if size + sum(sizes) > limit:
            raise ProtocolError(
                f"a message of {size + sum(sizes):,} bytes, more than the limit of {limit:,}"
            )
        return header["body"], [self._read(n, deadline) for n in sizes]

    def _read(self, n: int, deadline: float | None) -> bytes:
        chunks, missing = [], n
        while missing:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.read_fd], [], [], left)[0]:
                    raise TimeoutError
            chunk = os.read(self.read_fd, min(missing, 1 << 20))
            if not chunk:
                raise ChannelClosed
            chunks.append(chunk)
            missing -= len(chunk)
        return b"".join(chunks)


# --------------------------------------------------------------------------------------
# values <-> JSON trees with blobs: the project's one codec (difflab.jsontree), our tags
# --------------------------------------------------------------------------------------
#: The wire's limits on a tree, checked while it is written and while it is read.
LIMITS = Limits(max_depth=MAX_DEPTH, max_nodes=MAX_NODES)
#: The tags the callers build (``make`` reads them), and the other keys each may hold.
CALLER_TAGS = {
    "$tensor": frozenset({"requires_grad", "grad"}),
    "$dual": frozenset(),
    "$ref": frozenset({"gen", "type", "name", "callable", "signature"}),
    "$slot": frozenset({"value"}),
    "$callback": frozenset(),
}


def _npy(array: np.ndarray) -> bytes:
    if array.dtype.hasobject:
        raise TypeError("an array of Python objects (dtype=object) cannot be sent")
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def array_tree(array: np.ndarray, blobs: list[bytes]) -> dict[str, int]:
    """The tree of ``array``, its ``.npy`` bytes appended to ``blobs``."""
    blobs.append(_npy(array))
    return {"$array": len(blobs) - 1}


class _Reader(Reader):
    """The codec's reader, with the two calls a caller's ``make`` uses."""

    def array(self, index: Any) -> np.ndarray:
        """Blob ``index`` read as an array (``.npy``, never unpickled, size checked)."""
        if type(index) is not int:
            raise self.fail(f"a reference to array {index!r:.80}, which was not sent")
        try:
            return read_npy(self.blob(index), max_bytes=MAX_MESSAGE, what="an array")
        except ValueError as exc:
            raise self.fail(str(exc)) from None


def _read_scalar(entry: dict, reader: _Reader, depth: int) -> Any:
    array = reader.array(entry["$scalar"])
    if array.ndim:
        raise reader.fail("a scalar that is not 0-dimensional")
    return array[()]


def _read_complex(entry: dict, reader: _Reader, depth: int) -> complex:
    parts = reader.items(entry, "$complex")
    if len(parts) != 2:
        raise reader.fail("a complex number that is not a [real, imaginary] pair")
    return complex(reader.read(parts[0], depth + 1), reader.read(parts[1], depth + 1))


#: What plain data is on the wire: NumPy scalars and arrays as blobs, complex numbers,
#: non-finite floats, dicts and tuples (lists and the rest of JSON stand for themselves).
_DATA_TAGS = [
    Tag("$scalar", lambda v: isinstance(v, np.generic),
        lambda v, w: {"$scalar": w.blob(_npy(np.asarray(v)))}, _read_scalar),
    Tag("$complex", lambda v: type(v) is complex,
        lambda v, w: {"$complex": [w.write(v.real), w.write(v.imag)]}, _read_complex),
    float_tag("$float"),
]
_CONTAINER_TAGS = [
    Tag("$array", lambda v: isinstance(v, np.ndarray),
        lambda v, w: {"$array": w.blob(_npy(v))}, lambda e, r, d: r.array(e["$array"])),
    Tag("$dict", lambda v: isinstance(v, dict),  # (keys are checked when read)
        lambda v, w: {"$dict": [[w.write(k), w.write(x)] for k, x in v.items()]},
        dict_tag("$dict").read),
    tuple_tag("$tuple"),
]


def _refuse(value: Any, where: str) -> TypeError:
    return TypeError(f"a {type(value).__name__} cannot be sent between the processes")


class _Extra:
    """The caller's tag: ``extra(value, blobs)`` sees every value but plain numbers,
    strings, None, NumPy scalars and complex numbers, before dicts, tuples, lists and
    arrays are taken as data, and returns its tree or ``NotImplemented``."""

    def __init__(self, extra: Callable[[Any, list[bytes]], Any], blobs: list[bytes]) -> None:
        self.extra, self.blobs, self.tree = extra, blobs, NotImplemented

    def writes(self, value: Any) -> bool:
        if value is None or type(value) in (bool, int, float, str):
            return False
        self.tree = self.extra(value, self.blobs)
        return self.tree is not NotImplemented

    def write(self, value: Any, writer: Writer) -> Any:
        return self.tree


class _Writer(Writer):
    """The codec's writer, with plain numbers and strings written at once.

    Most of a message is plain JSON; the tags (the caller's among them) see only what
    is not, as they did before the wire used the shared codec (a tenth of the time for
    a list of floats).
    """

    def write(self, value: Any, where: str | None = None) -> Any:
        kind = type(value)
        if value is None or kind is str or kind is int or kind is bool or (
                kind is float and math.isfinite(value)):
            return value
        return super().write(value, where)


def encode(value: Any, blobs: list[bytes], *, extra: Callable[[Any, list[bytes]], Any]
           ) -> Any:
    """The JSON tree of ``value``; arrays are appended to ``blobs``.

    ``extra(value, blobs)`` handles what is not plain data (tensors, duals,
    references, mirrored arrays and containers) and returns its tree, or
    ``NotImplemented``; it sees every value but numbers, strings and None.

    Raises
    ------
    TypeError
        For a value that cannot be sent, or nested more than ``MAX_DEPTH`` deep.
    """
    caller = _Extra(extra, blobs)
    codec = TreeCodec([*_DATA_TAGS, Tag("$extra", caller.writes, caller.write, _no_read),
                       *_CONTAINER_TAGS], ProtocolError, limits=LIMITS, numpy_scalars=False,
                      refuse=_refuse)
    return _Writer(codec, blobs).write(value)


def _no_read(entry: dict, reader: Reader, depth: int) -> Any:  # (writing only)
    raise reader.fail("an unknown entry")


def _caller_tag(name: str, extra: frozenset, make: Callable | None) -> Tag:
    def read(entry: dict, reader: Reader, depth: int) -> Any:
        if make is None:
            raise reader.fail(f"an unexpected {name} entry")
        return make(name, entry, reader, depth + 1)

    return Tag(name, lambda v: False, _no_read, read, extra)


def decode(tree: Any, blobs: list[bytes], make: Callable[[str, dict, Any, int], Any]) -> Any:
    """Rebuild a value from its tree.

    ``make(tag, node, reader, depth)`` builds tensors, duals and references; it reads
    arrays with ``reader.array(i)`` and nested values with ``reader.read(tree, depth)``.
    The tree holds at most ``MAX_NODES`` values, ``MAX_DEPTH`` levels deep.

    Raises
    ------
    ProtocolError
        For anything that is not a well-formed tree.
    """
    codec = TreeCodec([*_DATA_TAGS, *_CONTAINER_TAGS, *(
        _caller_tag(name, extra, make) for name, extra in CALLER_TAGS.items())],
        ProtocolError, limits=LIMITS)
    try:
        return _Reader(codec, blobs).read(tree)
    except (TypeError, ValueError, KeyError, OverflowError) as exc:
        raise ProtocolError(f"a malformed value ({type(exc).__name__}: {exc})") from None
