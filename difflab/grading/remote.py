"""The test's side of the student's objects: proxies that behave as if the objects were here.

:class:`SubmissionProxy` is the ``submission`` module a test imports; each name
it hands out is a :class:`RemoteObject`, whose attribute reads, calls and
operators are requests to the student's process (through its
:class:`~difflab.grading.sandbox.Sandbox`), while comparisons and truth are
decided here, on the object's numeric value.  The exceptions say what the
student's code did: raised (:class:`StudentError`) or stopped
(:class:`StudentStopped`).
"""

from __future__ import annotations

import inspect
import operator
import types
from typing import Any, Protocol

import numpy as np

from difflab.autograd import Function


class _Channel(Protocol):
    """What a proxy needs of the trusted side's connection to the student process
    (:class:`~difflab.grading.sandbox.Sandbox` is one): a request, and a call of a student
    object.  Named here so that this module needs no import of the sandbox, which imports
    it (no import cycle, annotations included)."""

    def call(self, op: str, target: Any = None, **fields: Any) -> Any: ...

    def invoke(self, target: Any, args: tuple, kwargs: dict) -> Any: ...


class StudentError(Exception):
    """The student's code raised an exception; ``payload`` describes it (as data)."""

    def __init__(self, payload: dict[str, Any]) -> None:
        self.payload = payload
        super().__init__(f"{payload.get('type')}: {payload.get('text')}")


class StudentAttributeError(StudentError, AttributeError):
    """The student's object (or the submission) has no attribute of that name."""


class StudentStopped(Exception):
    """The student's process had to stop: ``reason`` (timeout, memory, crash, ...) and why."""

    def __init__(self, reason: str, message: str) -> None:
        self.reason, self.message = reason, message
        super().__init__(message)


# --------------------------------------------------------------------------------------
# the student's process
# --------------------------------------------------------------------------------------


class _Bridge(Function):
    """A student's differentiable call seen by the trusted tape as one Function.

    The student's process has run the call with its own tensors and kept the graph
    (``call``: the sandbox, the record's number and the output); ``backward`` sends the
    upstream gradient and receives one gradient per input: the vector-Jacobian product
    the student's code computed.
    """

    @staticmethod
    def forward(ctx: Any, call: tuple, *args: Any) -> Any:
        ctx.call, ctx.record = call, call[1]
        return call[2]

    @staticmethod
    def backward(ctx: Any, grad_output: Any) -> tuple:
        sandbox = ctx.call[0]
        grads = sandbox.call("backward", record=ctx.record, grad=grad_output.numpy(force=True))
        if not isinstance(grads, list) or len(grads) != len(ctx.needs_input_grad) - 1:
            raise StudentStopped("protocol", "The process running your code sent a malformed "
                                 "list of gradients.")
        return (None, *[g.array if hasattr(g, "array") else g for g in grads])


def _binary(name: str, inplace: str | None = None) -> tuple:
    """A binary operator's methods: ``a op b``, ``b op a`` (reflected) and ``a op= b``."""

    def forward(self: RemoteObject, other: Any) -> Any:
        return self._op(name, self, other)

    def reflected(self: RemoteObject, other: Any) -> Any:
        return self._op(name, other, self)

    def augmented(self: RemoteObject, other: Any) -> Any:
        return self._op(inplace or "i" + name, self, other)

    return forward, reflected, augmented


def _unary(name: str) -> Any:
    def method(self: RemoteObject) -> Any:
        return self._op(name, self)

    return method


class RemoteObject:
    """An object of the student's process, used from the tests as if it were here.

    Attribute access, calls and operators (``a * b``, ``2 - a``, ``a[i]``, ``len(a)``,
    ``iter(a)``, ``float(a)``, ``abs(a)``, ...) are requests to the student's process, run
    there as Python would run them; answers that are data (numbers, strings, arrays,
    tensors' values, lists, dicts) arrive as such, other objects as new references.
    Comparisons, ``in`` and truth are decided *here*, on the object's numeric value
    (its ``__float__``, ``__index__``, ``__complex__`` or ``__array__``): a student
    object cannot decide that it equals the expected answer.
    """

    __array_ufunc__ = None  # NumPy defers: array * remote runs the student's __rmul__

    __slots__ = ("_sandbox", "_info", "__weakref__")

    def __init__(self, sandbox: _Channel, info: dict[str, Any]) -> None:
        object.__setattr__(self, "_sandbox", sandbox)
        object.__setattr__(self, "_info", info)

    def __getattr__(self, name: str) -> Any:
        info = object.__getattribute__(self, "_info")
        if name in ("__name__", "__qualname__") and info["name"]:
            return info["name"]
        if name == "__signature__" and info["signature"] is not None:
            return _signature(info["signature"])
        if name.startswith("__"):
            raise AttributeError(name)
        return object.__getattribute__(self, "_sandbox").call("getattr", self, name=name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("objects of the submission cannot be changed from a test")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return object.__getattribute__(self, "_sandbox").invoke(self, args, kwargs)

    def __repr__(self) -> str:
        info = object.__getattribute__(self, "_info")
        name = f" {info['name']}" if info["name"] else ""
        return f"<{info['type']}{name} from the submission>"

    # -- operators: run in the student's process ------------------------------------
    def _op(self, name: str, *args: Any) -> Any:
        return object.__getattribute__(self, "_sandbox").call("operator", None, name=name,
                                                              args=list(args))

    __add__, __radd__, __iadd__ = _binary("add")
    __sub__, __rsub__, __isub__ = _binary("sub")
    __mul__, __rmul__, __imul__ = _binary("mul")
    __truediv__, __rtruediv__, __itruediv__ = _binary("truediv")
    __floordiv__, __rfloordiv__, __ifloordiv__ = _binary("floordiv")
    __mod__, __rmod__, __imod__ = _binary("mod")
    __pow__, __rpow__, __ipow__ = _binary("pow")
    __matmul__, __rmatmul__, __imatmul__ = _binary("matmul")
    __lshift__, __rlshift__, __ilshift__ = _binary("lshift")
    __rshift__, __rrshift__, __irshift__ = _binary("rshift")
    __and__, __rand__, __iand__ = _binary("and_", "iand")
    __or__, __ror__, __ior__ = _binary("or_", "ior")
    __xor__, __rxor__, __ixor__ = _binary("xor")
    __divmod__, __rdivmod__, _ = _binary("divmod")
    __neg__, __pos__, __abs__ = _unary("neg"), _unary("pos"), _unary("abs")
    __invert__, __trunc__ = _unary("invert"), _unary("trunc")
    __floor__, __ceil__ = _unary("floor"), _unary("ceil")
    del _

    def __round__(self, ndigits: int | None = None) -> Any:
        return self._op("round", self) if ndigits is None else self._op("round", self, ndigits)

    def __getitem__(self, key: Any) -> Any:
        return self._op("getitem", self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._op("setitem", self, key, value)

    def __delitem__(self, key: Any) -> None:
        self._op("delitem", self, key)

    def __len__(self) -> int:
        return _checked(self._op("len", self), int, "len()")

    def __index__(self) -> int:
        return _checked(self._op("index", self), int, "operator.index()")

    def __int__(self) -> int:
        return _checked(self._op("int", self), int, "int()")

    def __float__(self) -> float:
        return _checked(self._op("float", self), float, "float()")

    def __complex__(self) -> complex:
        return _checked(self._op("complex", self), complex, "complex()")

    def __format__(self, spec: str) -> str:
        return _checked(self._op("format", self, spec), str, "format()")

    def __str__(self) -> str:
        return _checked(self._op("str", self), str, "str()")

    def __iter__(self) -> Any:
        items = self._op("iter", self)
        if not isinstance(items, RemoteObject):  # a generator: its items came as a list
            yield from items
            return
        while True:
            try:
                yield items._op("next", items)
            except StudentError as exc:
                if exc.payload["type"] == "StopIteration":
                    return
                raise

    def __next__(self) -> Any:
        try:
            return self._op("next", self)
        except StudentError as exc:
            if exc.payload["type"] == "StopIteration":
                raise StopIteration from None
            raise

    def __instancecheck__(self, instance: Any) -> bool:
        """``isinstance(x, submission.Dual)``: asked of the student's process."""
        return _checked(self._op("isinstance", instance, self), bool, "isinstance()")

    def __subclasscheck__(self, cls: Any) -> bool:
        return _checked(self._op("issubclass", cls, self), bool, "issubclass()")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.asarray(_value(self), dtype=dtype)

    # -- comparisons and truth: decided here ---------------------------------------
    def __eq__(self, other: Any) -> Any:
        return _compare(operator.eq, self, other)

    def __ne__(self, other: Any) -> Any:
        return _compare(operator.ne, self, other)

    def __lt__(self, other: Any) -> Any:
        return _compare(operator.lt, self, other)

    def __le__(self, other: Any) -> Any:
        return _compare(operator.le, self, other)

    def __gt__(self, other: Any) -> Any:
        return _compare(operator.gt, self, other)

    def __ge__(self, other: Any) -> Any:
        return _compare(operator.ge, self, other)

    __hash__ = object.__hash__

    def __contains__(self, item: Any) -> bool:
        return any(element is item or bool(element == item) for element in self)

    def __bool__(self) -> bool:
        try:
            return bool(_value(self))
        except _NoValue:
            pass
        info = object.__getattribute__(self, "_info")
        raise TypeError(
            f"the submission gave a {info['type']} object where a value (a number, a string, "
            "an array) was expected, so the test cannot tell whether it is true"
        )

    def __mro_entries__(self, bases: tuple) -> tuple:
        """``class Mine(submission.Base)`` in a test: instances are the student's objects."""
        remote_class = self

        class Remote:
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                object.__setattr__(self, "_remote", remote_class(*args, **kwargs))

            def __getattr__(self, name: str) -> Any:
                if name.startswith("__"):
                    raise AttributeError(name)
                return getattr(object.__getattribute__(self, "_remote"), name)

        name = object.__getattribute__(self, "_info")["name"]
        Remote.__name__ = Remote.__qualname__ = name or "Remote"
        return (Remote,)


class _NoValue(TypeError):
    """A student's object with no numeric value (nothing for a comparison to use)."""


def _value(obj: Any) -> Any:
    """The numeric value of a student's object (data, checked), or the value itself."""
    if not isinstance(obj, RemoteObject):
        return obj
    try:
        value = obj._op("value", obj)
    except StudentError as exc:
        if exc.payload["type"] == "TypeError" and "has no numeric value" in exc.payload["text"]:
            raise _NoValue(exc.payload["text"]) from None
        raise
    if isinstance(value, np.ndarray) and value.dtype.kind in "biufc" or \
            isinstance(value, (int, float, complex, np.number, np.bool_)):
        return value
    raise _NoValue(f"the student's code gave a {type(value).__name__} as a numeric value")


def _compare(op: Any, a: Any, b: Any) -> Any:
    """``op(a, b)`` on numeric values, in the test's process."""
    try:
        return op(_value(a), _value(b))
    except _NoValue:
        if op in (operator.eq, operator.ne):
            return NotImplemented  # Python then compares identities, as for any object
        raise


def _checked(value: Any, kind: type, what: str) -> Any:
    """A value of the type ``what`` must give (NumPy's numbers converted)."""
    if kind is float and isinstance(value, (int, np.floating, np.integer)) and \
            not isinstance(value, bool):
        value = float(value)
    elif kind is int and isinstance(value, np.integer):
        value = int(value)
    elif kind is complex and isinstance(value, (int, float, np.number)):
        value = complex(value)
    if type(value) is not kind and not (kind is int and type(value) is bool) or \
            kind is bool and type(value) is not bool:
        raise TypeError(f"{what} of the student's object gave a {type(value).__name__}, "
                        f"not a {kind.__name__}")
    return value


def _signature(params: list) -> inspect.Signature:
    marker = object()
    return inspect.Signature([
        inspect.Parameter(name, inspect._ParameterKind(kind),
                          default=marker if has_default else inspect.Parameter.empty)
        for name, kind, has_default in params
    ], __validate_parameters__=False)


class SubmissionProxy(types.ModuleType):
    """The ``submission`` module the tests import: each name is fetched from the student."""

    def __init__(self, sandbox: _Channel) -> None:
        super().__init__("submission", "The student's submission, in its own process.")
        self.__dict__["_sandbox"] = sandbox

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self.__dict__["_sandbox"].call("getattr", None, name=name)
