r"""One JSON tree codec: Python values as JSON, a tag for each kind JSON lacks, and limits.

Checkpoints (:mod:`difflab.serialization`), exported graphs
(:mod:`difflab.export`) and the grader's wire (:mod:`difflab.grading.protocol`)
write values that plain JSON cannot hold: tuples,
dicts with integer keys, NaN, arrays, a graph's references and slices.
Each is written as an object with one *tag* key::

    (1, 2)            {"__tuple__": [1, 2]}          a checkpoint's spelling
    x[1:]             {"slice": [1, null, null]}     a graph's
    an array          {"__ndarray__": 3}             blob 3: the array travels apart

The codec is written once, here; each caller brings its table of tags
(:class:`Tag`: which values it writes, how, and how it reads them back) in
its own spelling, so the files already written keep loading.  The generic
kinds (tuples, dicts, sets, non-finite floats, arrays as blobs) are made by
the ``*_tag`` functions below; a caller adds its own (a tensor, a ``Ref``).

Reading trusts nothing: every entry must be plain JSON or an object with
exactly one known tag (and only the extra keys that tag allows), the tree
may nest at most ``limits.max_depth`` levels and hold at most
``limits.max_nodes`` values (:class:`Limits`), a blob reference must name
a blob that is there, and a fault raises the caller's error class naming
it.  Nothing is imported or run: a reader builds only what its tags build.

Examples
--------
>>> from difflab.jsontree import TreeCodec, dict_tag, tuple_tag
>>> codec = TreeCodec([tuple_tag("__tuple__"), dict_tag("__dict__")])
>>> tree = codec.encode({"lr": 0.1, 3: (1, 2)})
>>> tree
{'__dict__': [['lr', 0.1], [3, {'__tuple__': [1, 2]}]]}
>>> codec.decode(tree)
{'lr': 0.1, 3: (1, 2)}
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: The types that are JSON as they are (a float only when finite, or when NaN is allowed).
PLAIN = (type(None), bool, int, float, str)


@dataclass(frozen=True)
class Limits:
    """How large a tree a reader accepts.

    Parameters
    ----------
    max_depth : int
        The deepest nesting of lists and tagged entries (a writer refuses it too).
    max_nodes : int or None
        The most values in one tree (None: no limit besides the bytes of the JSON).

    Examples
    --------
    >>> from difflab.jsontree import Limits, TreeCodec
    >>> TreeCodec([], limits=Limits(max_depth=2)).decode([[["too deep"]]])
    Traceback (most recent call last):
    ...
    ValueError: the tree is nested more than 2 levels deep
    """

    max_depth: int = 100
    max_nodes: int | None = None


#: The limits a reader applies unless its caller gives others.
LIMITS = Limits()


@dataclass(frozen=True)
class Tag:
    """How one kind of value is written as ``{name: body, ...}`` and read back.

    ``writes(value)`` says whether this tag writes ``value``;
    ``write(value, writer)`` returns its whole entry (the tag key and any
    ``extra`` keys), writing children with ``writer.write`` and arrays with
    ``writer.blob``; ``read(entry, reader, depth)`` rebuilds the value,
    reading children with ``reader.read(child, depth + 1)``, arrays with
    ``reader.blob`` and refusing a bad body with ``reader.fail``.  A tag
    that needs to remember what one tree holds (objects already written,
    to refer to them) keeps it in ``writer.memo`` and ``reader.memo``.

    Parameters
    ----------
    name : str
        The tag key (``"__tuple__"``, ``"ref"``): the caller's spelling.
    writes, write, read : callable
        As above.
    extra : frozenset of str
        The other keys an entry of this tag may hold (a tensor's ``requires_grad``).

    Examples
    --------
    >>> from difflab.jsontree import Tag, TreeCodec
    >>> complex_tag = Tag("complex", lambda v: isinstance(v, complex),
    ...                   lambda v, w: {"complex": [v.real, v.imag]},
    ...                   lambda e, r, d: complex(*e["complex"]))
    >>> codec = TreeCodec([complex_tag])
    >>> codec.encode([1j])
    [{'complex': [0.0, 1.0]}]
    >>> codec.decode([{'complex': [0.0, 1.0]}])
    [1j]
    """

    name: str
    writes: Callable[[Any], bool]
    write: Callable[[Any, Writer], dict]
    read: Callable[[dict, Reader, int], Any]
    extra: frozenset = field(default_factory=frozenset)


class TreeCodec:
    """Values to JSON trees and back, with the caller's tags, errors and limits.

    Parameters
    ----------
    tags : sequence of Tag
        Tried in order when writing (so a subclass's tag goes before its base's).
    error : exception class
        What reading raises for a malformed tree.
    limits : Limits
        Depth and size limits (writing checks the depth too).
    numpy_scalars : bool
        Write a NumPy scalar as the Python number it holds (``np.float32(2)`` as ``2.0``).
    refuse : callable, optional
        ``refuse(value, where)`` gives the exception for a value no tag writes
        (``where``: ``Writer.where``, the place of the value, or ``""``).

    Examples
    --------
    >>> import numpy as np
    >>> from difflab.jsontree import TreeCodec, array_tag, tuple_tag
    >>> codec = TreeCodec([array_tag("$array", lambda v: isinstance(v, np.ndarray)),
    ...                    tuple_tag("$tuple")])
    >>> blobs = []
    >>> codec.encode((np.zeros(2), "x"), blobs), len(blobs)
    ({'$tuple': [{'$array': 0}, 'x']}, 1)
    >>> codec.decode({"$array": 7}, blobs)
    Traceback (most recent call last):
    ...
    ValueError: the tree refers to blob 7, which is not there (1 are)
    """

    def __init__(self, tags: Sequence[Tag], error: type[Exception] = ValueError, *,
                 limits: Limits = LIMITS, numpy_scalars: bool = True,
                 refuse: Callable[[Any, str], Exception] | None = None) -> None:
        self.tags = list(tags)
        self.by_name = {tag.name: tag for tag in self.tags}
        self.error = error
        self.limits = limits
        self.numpy_scalars = numpy_scalars
        self.refuse = refuse or (lambda value, where: TypeError(
            f"a value of type {type(value).__name__} cannot be written"
            + (f" ({where})" if where else "")))

    def encode(self, value: Any, blobs: list | None = None) -> Any:
        """The JSON tree of ``value``; arrays (written by array tags) appended to ``blobs``."""
        return Writer(self, [] if blobs is None else blobs).write(value)

    def decode(self, tree: Any, blobs: Mapping[int, Any] | Sequence[Any] = (),
               where: str = "") -> Any:
        """Rebuild a value from ``tree``; ``self.error`` (prefixed by ``where``) if malformed."""
        return Reader(self, blobs, where).read(tree)


class Writer:
    """Writes one tree: checks depth and cycles, hands tagged kinds to their tags.

    A tag that needs to remember something while one tree is written (the
    objects it wrote already, to write them again as references) keeps it in
    ``memo``, a dict of its own keys that lives as long as this writer.
    :attr:`where` names the place of the value being written (``"Net.fc"``)
    for error messages; a tag sets it for a child with ``write(child, where)``.

    Examples
    --------
    A tag that writes an object seen before as a reference to its number
    (so a shared object stays shared), remembering them in the memo:

    >>> from difflab.jsontree import Tag, TreeCodec
    >>> class Box:
    ...     pass
    >>> def write(box, w):
    ...     seen = w.memo.setdefault("boxes", {})
    ...     if id(box) in seen:
    ...         return {"box": seen[id(box)][0]}
    ...     seen[id(box)] = (len(seen), box)  # (the box kept alive while ids are compared)
    ...     return {"box": len(seen) - 1}
    >>> def read(entry, r, depth):
    ...     return r.memo.setdefault("boxes", {}).setdefault(entry["box"], Box())
    >>> codec = TreeCodec([Tag("box", lambda v: isinstance(v, Box), write, read)])
    >>> box = Box()
    >>> codec.encode([box, Box(), box])
    [{'box': 0}, {'box': 1}, {'box': 0}]
    >>> a, b, c = codec.decode(codec.encode([box, Box(), box]))
    >>> a is c and a is not b
    True
    """

    def __init__(self, codec: TreeCodec, blobs: list) -> None:
        self.codec, self.blobs = codec, blobs
        self.memo: dict = {}
        self.where = ""
        self._path: list[int] = []  # ids of the containers being written (a cycle check)
        self._depth = 0  # how deep the value being written sits, as a reader counts

    def blob(self, array: Any) -> int:
        """Keep ``array`` apart; its index in the blobs."""
        self.blobs.append(array)
        return len(self.blobs) - 1

    def write(self, value: Any, where: str | None = None) -> Any:
        """The tree of ``value``; ``where`` (if given) names its place while it is written."""
        if where is not None:
            outer, self.where = self.where, where
            try:
                return self.write(value)
            finally:
                self.where = outer
        if self._depth > self.codec.limits.max_depth:  # (the reader's limit, as it counts)
            raise TypeError(f"cannot write values nested more than "
                            f"{self.codec.limits.max_depth} levels deep (dicts, lists, tuples "
                            f"and what holds them)" + (f": {self.where}" if self.where else ""))
        if self.codec.numpy_scalars and isinstance(value, np.generic):
            value = value.item()
        write = next((tag.write for tag in self.codec.tags if tag.writes(value)), None)
        if write is None and isinstance(value, PLAIN):
            return value
        if write is None and isinstance(value, list):
            write = _write_list
        if write is None:
            raise self.codec.refuse(value, self.where)
        container = isinstance(value, (list, tuple, dict, set, frozenset))
        if container:
            if id(value) in self._path:
                raise TypeError("cannot write an object that contains itself (a cycle of "
                                "dicts/lists/tuples)")
            self._path.append(id(value))
        try:
            return self.inside(value, write)
        finally:
            if container:
                self._path.pop()

    def inside(self, value: Any, write: Callable[[Any, Writer], Any]) -> Any:
        """``write(value, self)``, with the values it writes one level deeper.

        The writer counts levels as a reader does (each list and tagged entry
        is one), so it refuses a tree the reader would refuse.  Each entry
        counts already; a tag whose entry holds values further down (in a
        tagged entry of its own) writes that part with ``inside`` too.
        """
        self._depth += 1
        try:
            return write(value, self)
        finally:
            self._depth -= 1


def _write_list(values: list, w: Writer) -> list:
    return [w.write(x) for x in values]


class Reader:
    """Reads one tree: counts values and depth, finds each entry's tag.

    ``memo`` is the tags' own per-tree state, as for :class:`Writer` (the
    objects rebuilt so far, for the references to them that follow).
    """

    def __init__(self, codec: TreeCodec, blobs: Mapping[int, Any] | Sequence[Any],
                 where: str = "") -> None:
        self.codec, self.blobs, self.where = codec, blobs, where
        self.nodes = 0
        self.memo: dict = {}

    def fail(self, why: str) -> Exception:
        """The caller's error for a malformed tree, naming where."""
        return self.codec.error(f"{self.where}: {why}" if self.where else why)

    def read(self, tree: Any, depth: int = 0) -> Any:
        limits = self.codec.limits
        self.nodes += 1
        if depth > limits.max_depth:
            raise self.fail(f"the tree is nested more than {limits.max_depth} levels deep")
        if limits.max_nodes is not None and self.nodes > limits.max_nodes:
            raise self.fail(f"the tree holds more than {limits.max_nodes} values")
        if isinstance(tree, PLAIN):
            return tree
        if isinstance(tree, list):
            return [self.read(v, depth + 1) for v in tree]
        if not isinstance(tree, dict):
            raise self.fail(f"unexpected {type(tree).__name__} in the tree")
        tags = [k for k in tree if k in self.codec.by_name]
        if len(tags) != 1 or set(tree) - {tags[0]} - self.codec.by_name[tags[0]].extra:
            raise self.fail(f"unknown entry {sorted(map(str, tree))[:4]}")
        return self.codec.by_name[tags[0]].read(tree, self, depth)

    def blob(self, index: Any) -> Any:
        """The blob an entry refers to (an integer index of one that is there)."""
        if type(index) is not int:
            raise self.fail(f"a blob reference must be an integer, got {index!r:.80}")
        present = index in self.blobs if isinstance(self.blobs, Mapping) \
            else 0 <= index < len(self.blobs)
        if not present:
            raise self.fail(f"the tree refers to blob {index}, which is not there "
                            f"({len(self.blobs)} are)")
        return self.blobs[index]

    def items(self, entry: dict, name: str) -> list:
        """The list body of a tagged entry (refused if it is not a list)."""
        body = entry[name]
        if not isinstance(body, list):
            raise self.fail(f"{name} must hold a list, got {type(body).__name__}")
        return body

    def key(self, value: Any, types: tuple = PLAIN) -> Any:
        """A dict key or set member: one of ``types`` (numbers, strings, None by default)."""
        if not isinstance(value, types):
            raise self.fail(f"a dict key or set member of type {type(value).__name__}")
        return value


# ------------------------------------------------------------- the generic kinds


def tuple_tag(name: str) -> Tag:
    """A tuple as ``{name: [items]}``.

    Parameters
    ----------
    name : str
        The tag key, in the caller's spelling.

    Returns
    -------
    Tag

    Examples
    --------
    >>> from difflab.jsontree import TreeCodec, tuple_tag
    >>> TreeCodec([tuple_tag("t")]).encode((1, (2,)))
    {'t': [1, {'t': [2]}]}
    """
    return Tag(name, lambda v: isinstance(v, tuple),
               lambda v, w: {name: [w.write(x) for x in v]},
               lambda e, r, d: tuple(r.read(x, d + 1) for x in r.items(e, name)))


def dict_tag(name: str, keys: tuple = PLAIN) -> Tag:
    """A dict as ``{name: [[key, value], ...]}``: its order and its keys' types kept.

    Parameters
    ----------
    name : str
        The tag key, in the caller's spelling.
    keys : tuple of types
        The types a key may have (numbers, strings and None by default).

    Returns
    -------
    Tag

    Examples
    --------
    >>> from difflab.jsontree import TreeCodec, dict_tag
    >>> codec = TreeCodec([dict_tag("d")])
    >>> codec.encode({1: "a"}), codec.decode({"d": [[1, "a"]]})
    ({'d': [[1, 'a']]}, {1: 'a'})
    """
    def write(value: dict, w: Writer) -> dict:
        for key in value:
            if not isinstance(key, keys):
                raise TypeError(f"cannot write a dict key of type {type(key).__name__}: keys "
                                f"must be {', '.join(_type_names(keys))}")
        return {name: [[w.write(k), w.write(v, f"{w.where}[{k!r}]")] for k, v in value.items()]}

    def read(entry: dict, r: Reader, depth: int) -> dict:
        out = {}
        for pair in r.items(entry, name):
            if not (isinstance(pair, list) and len(pair) == 2):
                raise r.fail(f"a dict entry must be a [key, value] pair, got {pair!r:.80}")
            out[r.key(r.read(pair[0], depth + 1), keys)] = r.read(pair[1], depth + 1)
        return out

    return Tag(name, lambda v: isinstance(v, dict), write, read)


def set_tag(name: str) -> Tag:
    """A set as ``{name: [members]}`` (written in a fixed order).

    Parameters
    ----------
    name : str
        The tag key, in the caller's spelling.

    Returns
    -------
    Tag

    Examples
    --------
    >>> from difflab.jsontree import TreeCodec, set_tag
    >>> TreeCodec([set_tag("s")]).encode({3, 1})
    {'s': [1, 3]}
    """
    return Tag(name, lambda v: isinstance(v, (set, frozenset)),
               lambda v, w: {name: [w.write(x) for x in sorted(v, key=repr)]},
               lambda e, r, d: {r.key(r.read(x, d + 1)) for x in r.items(e, name)})


def float_tag(name: str) -> Tag:
    """A float that is not finite as ``{name: "nan"}`` (or ``"inf"``, ``"-inf"``): strict JSON.

    Parameters
    ----------
    name : str
        The tag key, in the caller's spelling.

    Returns
    -------
    Tag

    Examples
    --------
    >>> from difflab.jsontree import TreeCodec, float_tag
    >>> TreeCodec([float_tag("f")]).encode([1.5, float("-inf")])
    [1.5, {'f': '-inf'}]
    """
    def read(entry: dict, r: Reader, depth: int) -> float:
        if entry[name] not in ("nan", "inf", "-inf"):
            raise r.fail(f"{name} must be 'nan', 'inf' or '-inf', got {entry[name]!r:.80}")
        return float(entry[name])

    return Tag(name, lambda v: isinstance(v, float) and not math.isfinite(v),
               lambda v, w: {name: repr(v)}, read)


def array_tag(name: str, is_array: Callable[[Any], bool],
              to_blob: Callable[[Any], Any] = lambda a: a,
              from_blob: Callable[[Any], Any] = lambda b: b) -> Tag:
    """An array as ``{name: i}``, the array itself blob i.

    Parameters
    ----------
    name : str
        The tag key, in the caller's spelling.
    is_array : callable
        Whether a value is an array this tag writes.
    to_blob, from_blob : callable
        The blob an array becomes (its bytes, say) and the array a blob becomes.

    Returns
    -------
    Tag

    Examples
    --------
    >>> import numpy as np
    >>> from difflab.jsontree import TreeCodec, array_tag
    >>> codec = TreeCodec([array_tag("a", lambda v: isinstance(v, np.ndarray))])
    >>> blobs = []
    >>> codec.encode([np.ones(2)], blobs), blobs
    ([{'a': 0}], [array([1., 1.])])
    """
    return Tag(name, is_array, lambda v, w: {name: w.blob(to_blob(v))},
               lambda e, r, d: from_blob(r.blob(e[name])))


def _type_names(types: tuple) -> list[str]:
    return ["None" if t is type(None) else t.__name__ for t in types]
