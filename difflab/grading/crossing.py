"""What crosses between the tests' process and the student's, beyond plain values.

A test is written as if the student's objects were local.  Three things make that so,
and this module holds what both processes share of them:

* **Mirrored arguments.**  A list, dict, NumPy array or difflab tensor that crosses
  from the test gets a *slot*: the student's process keeps its copy under that number
  for the rest of the test.  Every message, in either direction, carries the new
  contents of the slots its sender changed since its last message (``sync``), and the
  receiver writes them into its own object in place.  So ``train_step(params, ...)``
  that updates ``params`` with ``optim.SGD`` leaves the test's tensors updated,
  gradients included, and a student's optimizer that holds the test's tensors sees the
  gradients a later ``backward`` in the test gives them.  Only the test's process makes
  slots: the student's process can name only objects the test passed.
* **The test's functions.**  A function passed to student code stays in the test's
  process (``{"$callback": n}``); the student's process calls it with data, and the
  test's process runs it and answers with data (:class:`~difflab.grading.sandbox.Sandbox`).
* **Operators.**  ``a * b``, ``a[i]``, ``len(a)``, ``float(a)`` on a student's object run
  in the student's process (:data:`OPERATORS`); comparisons and truth are decided in the
  test's process, on the numeric value of the object (``value``).

Nothing here runs student code in the test's process: states are decoded as data by
:mod:`difflab.grading.protocol` and written into objects the test made.
"""

from __future__ import annotations

import functools
import math
import operator
import sys
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from difflab.grading.protocol import ProtocolError, array_tree, encode

__all__ = ["Mirrors", "OPERATORS", "is_function", "numeric_value", "MAX_CALLBACK_DEPTH"]

#: Nested calls between the processes (a test's function calling the student's code
#: calling the test's function ...) before the innermost is refused.
MAX_CALLBACK_DEPTH = 16


def is_function(value: Any) -> bool:
    """Whether ``value`` crosses as a function the student's code may call back.

    Functions, lambdas, bound methods, built-in functions, ``functools.partial`` and
    NumPy ufuncs.  Other callable objects (a layer, an optimizer, a class) do not: the
    student's code would need their attributes, which stay in the test's process.
    """
    return isinstance(value, (types.FunctionType, types.BuiltinFunctionType,
                              types.MethodType, functools.partial, np.ufunc))


def numeric_value(obj: Any) -> Any:
    """The number or array a student's object stands for (its ``__array__``,
    ``__index__``, ``__float__`` or ``__complex__``), for the test's comparisons.

    Raises
    ------
    TypeError
        When the object has none of them.
    """
    kind = type(obj)
    if hasattr(kind, "__array__"):
        return np.asarray(obj)
    for method, convert in (("__index__", operator.index), ("__float__", float),
                            ("__complex__", complex)):
        if hasattr(kind, method):
            return convert(obj)
    raise TypeError(
        f"a {kind.__name__} has no numeric value (no __float__, __index__, __complex__ or "
        "__array__), so the test cannot compare it: compare one of its attributes instead"
    )


#: The operations a test may apply to a student's object, run in the student's process
#: as Python would run them there (reflected operators included: ``2 * x`` sends
#: ``mul(2, x)``).  Comparisons, ``bool`` and ``in`` are not here: the test's process
#: decides them, on the object's ``value``.
OPERATORS: dict[str, Callable[..., Any]] = {
    **{name: getattr(operator, name) for name in (
        "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "lshift",
        "rshift", "and_", "or_", "xor", "iadd", "isub", "imul", "itruediv", "ifloordiv",
        "imod", "ipow", "imatmul", "ilshift", "irshift", "iand", "ior", "ixor", "neg",
        "pos", "abs", "invert", "index", "getitem", "setitem", "delitem")},
    "divmod": divmod, "round": round, "trunc": math.trunc, "floor": math.floor,
    "ceil": math.ceil, "float": float, "int": int, "complex": complex, "len": len,
    "iter": iter, "next": next, "format": format, "str": str, "value": numeric_value,
    "isinstance": isinstance, "issubclass": issubclass,
}


def _tensor_type() -> type:
    from difflab.tensor import Tensor

    return Tensor


def mirrorable(value: Any) -> bool:
    """Lists, dicts, NumPy arrays and difflab tensors: what a call may change in place."""
    return isinstance(value, (list, dict, np.ndarray, _tensor_type()))


def _host(array: Any) -> np.ndarray:
    return array if isinstance(array, np.ndarray) else np.asarray(array.get())


class Mirrors:
    """The objects of a test that both processes hold, by slot, and what each last saw.

    Parameters
    ----------
    makes_slots : bool
        True in the test's process (new objects get slots as they are encoded); False
        in the student's (slots come only from the test's process).
    """

    def __init__(self, makes_slots: bool) -> None:
        self.makes_slots = makes_slots
        self.objects: dict[int, Any] = {}
        self.slots: dict[int, int] = {}  # id(object) -> slot
        self.snapshots: dict[int, Any] = {}
        self.next_slot = 0

    def __len__(self) -> int:
        return len(self.objects)

    def clear(self) -> list[int]:
        """Forget every slot (a test ended); the slots forgotten."""
        gone = list(self.objects)
        self.objects.clear()
        self.slots.clear()
        self.snapshots.clear()
        return gone

    # -- encoding ------------------------------------------------------------------
    def ref(self, value: Any, blobs: list[bytes], extra: Callable) -> Any:
        """The tree of a mirrorable ``value``: ``{"$slot": n}``, with its contents the
        first time (NotImplemented in the student's process for an object with no slot:
        it crosses as plain data)."""
        slot = self.slots.get(id(value))
        if slot is not None and self.objects[slot] is value:
            return {"$slot": slot}
        if not self.makes_slots:
            return NotImplemented
        slot = self.next_slot
        self.next_slot += 1
        self.objects[slot], self.slots[id(value)] = value, slot
        self.snapshots[slot] = None  # being encoded: a list that holds itself is refused
        tree = {"$slot": slot, "value": self.contents(value, blobs, extra)}
        self.snapshots[slot] = _snapshot(value)
        return tree

    def contents(self, value: Any, blobs: list[bytes], extra: Callable) -> Any:
        """The tree of what ``value`` holds (its items as slots where they have one)."""
        if isinstance(value, np.ndarray):
            return array_tree(value, blobs)
        if isinstance(value, list):
            return [self._item(v, blobs, extra) for v in value]
        if isinstance(value, dict):
            return {"$dict": [[encode(k, blobs, extra=extra), self._item(v, blobs, extra)]
                              for k, v in value.items()]}
        grad = value.grad
        return {"$tensor": array_tree(_host(value.array), blobs),
                "requires_grad": value.requires_grad,
                "grad": None if grad is None else array_tree(_host(grad.array), blobs)}

    def _item(self, value: Any, blobs: list[bytes], extra: Callable) -> Any:
        slot = self.slots.get(id(value))
        if slot is not None and self.snapshots.get(slot, 0) is None:
            raise TypeError(f"a {type(value).__name__} that contains itself cannot be sent "
                            "between the processes")
        return encode(value, blobs, extra=extra)

    # -- changes -------------------------------------------------------------------
    def changed(self, blobs: list[bytes], extra: Callable) -> list:
        """``[[slot, contents], ...]`` of the objects changed since they were last seen."""
        out = []
        for slot in list(self.objects):
            value = self.objects.get(slot)
            if value is not None and not _same(value, self.snapshots.get(slot)):
                out.append([slot, self.contents(value, blobs, extra)])
                self.snapshots[slot] = _snapshot(value)
        return out

    def unreachable(self) -> list[int]:
        """Forget the slots whose object only this table still holds (the test dropped
        it, so no change to it can be seen); the slots forgotten."""
        gone = [slot for slot in self.objects
                if sys.getrefcount(self.objects[slot]) <= _ONLY_IN_A_DICT]
        for slot in gone:
            value = self.objects.pop(slot)
            del self.slots[id(value)], self.snapshots[slot]
        return gone

    def rollback(self, mark: int, resend: list[int]) -> None:
        """Undo a message that could not be sent: drop the slots made from ``mark`` on,
        and send the changes of ``resend`` again with the next one."""
        for slot in [s for s in self.objects if s >= mark]:
            value = self.objects.pop(slot)
            del self.slots[id(value)], self.snapshots[slot]
        for slot in resend:
            if slot in self.snapshots:
                self.snapshots[slot] = _RESEND
        self.next_slot = max(self.next_slot, mark)

    def forget(self, slots: Any) -> None:
        """Drop slots the other side forgot."""
        for slot in slots if isinstance(slots, list) else []:
            value = self.objects.pop(slot, None)
            if value is not None:
                del self.slots[id(value)], self.snapshots[slot]

    # -- decoding ------------------------------------------------------------------
    def decode_slot(self, node: dict, reader: Any, depth: int) -> Any:
        """The object a ``{"$slot": n}`` tree names (registering it, with its first
        contents, in the student's process)."""
        slot = node["$slot"]
        if "value" not in node:
            if type(slot) is not int or slot not in self.objects:
                raise ProtocolError(f"a reference to an object the test did not pass ({slot!r})")
            return self.objects[slot]
        if self.makes_slots or type(slot) is not int or slot in self.objects:
            raise ProtocolError("a new shared object from the wrong side")
        value = reader.read(node["value"], depth)
        if not mirrorable(value):
            raise ProtocolError("a shared object that is not a list, dict, array or tensor")
        self.objects[slot], self.slots[id(value)] = value, slot
        self.snapshots[slot] = _snapshot(value)
        return value

    def apply(self, states: Any, decode: Callable[[Any], Any]) -> None:
        """Write the other side's changes, ``[[slot, contents], ...]``, in place.

        ``decode`` reads the whole list at once, so its limits (size, depth, number of
        values) hold for all the changes of a message together.
        """
        if not isinstance(states, list):
            raise ProtocolError("changes that are not a list")
        if not states:
            return
        decoded = decode(states)
        slots = [item[0] if isinstance(item, list) and len(item) == 2 else None
                 for item in decoded]
        if not all(type(slot) is int and slot in self.objects for slot in slots) or \
                len(set(slots)) != len(slots):
            raise ProtocolError("a change to an object the test did not pass")
        for slot, state in decoded:
            try:
                _write(self.objects[slot], state)
            except (TypeError, ValueError, RuntimeError, AttributeError) as exc:
                raise ProtocolError(f"a change that cannot be written back ({exc})") from None
        for slot in slots:
            self.snapshots[slot] = _snapshot(self.objects[slot])


_RESEND = object()


def _only_in_a_dict() -> int:
    """What ``sys.getrefcount`` says of an object that only a dict's value holds (it
    differs between Python versions)."""
    probe: dict[int, list] = {0: []}
    return sys.getrefcount(probe[0])


_ONLY_IN_A_DICT = _only_in_a_dict()


def _snapshot(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return (value.shape, value.dtype.str, value.tobytes())
    if isinstance(value, list):
        return tuple(value)
    if isinstance(value, dict):
        return tuple(value.items())
    grad = value.grad
    return (_snapshot(_host(value.array)), value.requires_grad, grad,
            None if grad is None else _snapshot(_host(grad.array)))


def _same(value: Any, snapshot: Any) -> bool:
    if snapshot is None or snapshot is _RESEND:
        return False
    if isinstance(value, (list, dict)):
        now = tuple(value) if isinstance(value, list) else tuple(value.items())
        return len(now) == len(snapshot) and all(
            _identical(a, b) for a, b in zip(now, snapshot))
    return _snapshot(value) == snapshot if isinstance(value, np.ndarray) else (
        value.requires_grad == snapshot[1] and value.grad is snapshot[2]
        and _snapshot(_host(value.array)) == snapshot[0]
        and (value.grad is None or _snapshot(_host(value.grad.array)) == snapshot[3]))


def _identical(a: Any, b: Any) -> bool:
    if isinstance(a, tuple):  # a dict's (key, value) pairs
        return a[0] is b[0] and a[1] is b[1]
    return a is b


def _write(target: Any, state: Any) -> None:
    """Make ``target`` hold ``state`` (decoded contents of the same kind), in place."""
    if isinstance(target, np.ndarray):
        if not isinstance(state, np.ndarray) or state.shape != target.shape:
            raise ProtocolError(
                f"an array of shape {target.shape} changed shape in place (to "
                f"{getattr(state, 'shape', '?')}), which cannot be reflected")
        target[...] = state
    elif isinstance(target, list):
        if not isinstance(state, list):
            raise ProtocolError("a list whose changes are not a list")
        target[:] = state
    elif isinstance(target, dict):
        if not isinstance(state, dict):
            raise ProtocolError("a dict whose changes are not a dict")
        target.clear()
        target.update(state)
    else:
        if not isinstance(state, _tensor_type()):
            raise ProtocolError("a tensor whose changes are not a tensor")
        _write_tensor(target, state)


def _write_tensor(target: Any, state: Any) -> None:
    new = state.array
    if _snapshot(_host(target.array)) != _snapshot(new):  # only a real change bumps the
        if (isinstance(target.array, np.ndarray) and target.array.shape == new.shape
                and target.array.dtype == new.dtype):  # version (a tape may have saved it)
            target.array[...] = new
        else:
            target.data = state
        target._version[0] += 1
    if state.grad is None:
        target.grad = None
    elif target.grad is not None and isinstance(target.grad.array, np.ndarray) and \
            target.grad.array.shape == state.grad.array.shape:
        target.grad.array[...] = state.grad.array
    else:
        target.grad = state.grad
    if target.requires_grad != state.requires_grad and target.grad_fn is None:
        target.requires_grad = state.requires_grad and target.array.dtype.kind in "fc"
