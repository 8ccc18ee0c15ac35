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
# values <-> JSON trees with blobs
# --------------------------------------------------------------------------------------
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


def encode(value: Any, blobs: list[bytes], *, extra: Callable[[Any, list[bytes]], Any]
           ) -> Any:
    """The JSON tree of ``value``; arrays are appended to ``blobs``.

    ``extra(value, blobs)`` handles what is not plain data (tensors, duals,
    references, mirrored arrays and containers) and returns its tree, or
    ``NotImplemented``; it sees every value but numbers, strings and None.
    """
    return _encode(value, blobs, extra, 0)


def _encode(value: Any, blobs: list, extra: Callable, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise ProtocolError(f"a value nested more than {MAX_DEPTH} levels deep")
    if value is None or type(value) in (bool, int, str):
        return value
    if type(value) is float:
        return value if math.isfinite(value) else {"$float": repr(value)}
    if isinstance(value, np.generic):
        blobs.append(_npy(np.asarray(value)))
        return {"$scalar": len(blobs) - 1}
    if type(value) is complex:
        return {"$complex": [_encode(value.real, blobs, extra, depth),
                             _encode(value.imag, blobs, extra, depth)]}
    special = extra(value, blobs)
    if special is not NotImplemented:
        return special
    if isinstance(value, np.ndarray):
        return array_tree(value, blobs)
    if isinstance(value, dict):
        return {"$dict": [[_encode(k, blobs, extra, depth + 1), _encode(v, blobs, extra, depth + 1)]
                          for k, v in value.items()]}
    if isinstance(value, tuple):
        return {"$tuple": [_encode(v, blobs, extra, depth + 1) for v in value]}
    if isinstance(value, list):
        return [_encode(v, blobs, extra, depth + 1) for v in value]
    raise TypeError(f"a {type(value).__name__} cannot be sent between the processes")


class _Reader:
    def __init__(self, blobs: list[bytes], make: Callable[[str, dict, Any, int], Any]) -> None:
        self.blobs, self.make, self.nodes = blobs, make, 0

    def array(self, index: Any) -> np.ndarray:
        if type(index) is not int or not 0 <= index < len(self.blobs):
            raise ProtocolError(f"a reference to array {index!r}, which was not sent")
        try:
            return read_npy(self.blobs[index], max_bytes=MAX_MESSAGE, what="an array")
        except ValueError as exc:
            raise ProtocolError(str(exc)) from None

    def read(self, node: Any, depth: int) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES or depth > MAX_DEPTH:
            raise ProtocolError("a message too large or too deeply nested")
        if node is None or type(node) in (bool, int, float, str):
            return node
        if type(node) is list:
            return [self.read(v, depth + 1) for v in node]
        if type(node) is not dict or len(node) == 0:
            raise ProtocolError(f"an unexpected value of type {type(node).__name__}")
        tag = next(iter(node))
        if tag == "$array":
            return self.array(node[tag])
        if tag == "$scalar":
            array = self.array(node[tag])
            if array.ndim:
                raise ProtocolError("a scalar that is not 0-dimensional")
            return array[()]
        if tag == "$float" and node[tag] in ("nan", "inf", "-inf"):
            return float(node[tag])
        if tag == "$complex" and _pair(node[tag]):
            return complex(self.read(node[tag][0], depth + 1), self.read(node[tag][1], depth + 1))
        if tag == "$tuple" and type(node[tag]) is list:
            return tuple(self.read(v, depth + 1) for v in node[tag])
        if tag == "$dict" and type(node[tag]) is list:
            out = {}
            for item in node[tag]:
                if not _pair(item):
                    raise ProtocolError("a dict entry that is not a [key, value] pair")
                key = self.read(item[0], depth + 1)
                if key is not None and type(key) not in (str, int, float, bool):
                    raise ProtocolError(f"a dict key of type {type(key).__name__}")
                out[key] = self.read(item[1], depth + 1)
            return out
        if tag in ("$tensor", "$dual", "$ref", "$slot", "$callback"):
            return self.make(tag, node, self, depth + 1)
        raise ProtocolError(f"an unknown entry {sorted(node)[:3]}")


def _pair(value: Any) -> bool:
    return type(value) is list and len(value) == 2


def decode(tree: Any, blobs: list[bytes], make: Callable[[str, dict, Any, int], Any]) -> Any:
    """Rebuild a value from its tree.

    ``make(tag, node, reader, depth)`` builds tensors, duals and references; it reads
    arrays with ``reader.array(i)`` and nested values with ``reader.read(tree, depth)``.

    Raises
    ------
    ProtocolError
        For anything that is not a well-formed tree.
    """
    reader = _Reader(blobs, make)
    try:
        return reader.read(tree, 0)
    except (TypeError, ValueError, KeyError, OverflowError) as exc:
        raise ProtocolError(f"a malformed value ({type(exc).__name__}: {exc})") from None
