r"""Primitives without a derivative: comparisons, logic, rounding, indices, counts.

Their results are truth values, integers or counts, constant almost
everywhere, so no derivative passes through them (``differentiable =
False``): the tape records nothing, forward mode gives them a zero tangent.
They are primitives all the same, applied through ``engine.apply`` like
``sin`` or ``matmul``, because every other interpreter must see them: a
traced function replays ``x > 0`` or ``x.argsort()`` on its new input
instead of keeping the example's mask as a constant.

Each is one object of this file: a name and the forward on plain arrays
(``xp`` is NumPy, CuPy, or the namespace of forward mode's ``Dual`` arrays).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

import numpy as np

from difflab import backend
from difflab.dtypes import result_type
from difflab.ops.division import check_integer_divisor
from difflab.ops.primitive import NoDerivative
from difflab.ops.reductions import _normalize_axis
from difflab.ops.shapes import dim_index, shape_of


class Pointwise(NoDerivative):
    """y = f(x, ...) elementwise, with no derivative (a comparison, a test, a rounding).

    ``function(xp, *arrays, **params)`` computes it on plain arrays; it is
    this primitive's ``forward``, less the ``ctx`` it does not need.  Its JVP is
    a zero tangent (:class:`~difflab.ops.primitive.NoDerivative`'s), and
    ``symbolic(sp, *values)``, when given, is its value on one sympy expression
    per operand (``sp``: sympy's functions under NumPy's names, ``sp.floor`` is
    ``sympy.floor``), mapped over the elements: the symbolic method then
    differentiates sympy's function, whose derivative is 0 away from its jumps.
    """

    def __init__(self, name: str, function: Callable, description: str,
                 symbolic: Callable | None = None) -> None:
        self.name = name
        self.function = function
        self.description = description
        # (the forward itself, one call fewer on the hot path of comparisons)
        self.forward = lambda ctx, xp, *arrays, **params: function(xp, *arrays, **params)
        if symbolic is not None:
            self.symbolic = lambda sp, *arrays, **params: sp.elementwise(
                lambda *values: symbolic(sp, *values, **params), *arrays)

    def __repr__(self) -> str:
        return f"NoDerivative({self.name})"


class StepFunction(Pointwise):
    r"""y = f(x, ...) elementwise, constant between its jumps (a rounding, a sign).

    .. math::

        \frac{\partial y}{\partial x} = 0 \quad \text{(wherever it exists)}

    PyTorch's rule for ``round``, ``floor``, ``sign``, ``div(rounding_mode=...)``: a
    float result of a tensor that requires grad requires grad too, and its gradient
    is zeros, so a loss through it visibly trains nothing (where a comparison's bool
    result has no gradient at all, and ``backward`` through it is an error).  Forward
    mode gives a zero tangent, as for every :class:`Pointwise`.
    """

    differentiable = True
    double_backward = True
    math = "0 (constant between its jumps)"

    def __init__(self, name: str, function: Callable, description: str,
                 symbolic: Callable | None = None) -> None:
        super().__init__(name, function, description, symbolic)

        def forward(ctx: Any, xp: Any, *arrays: Any, **params: Any) -> Any:
            if ctx is not None:  # (a replay that differentiates nothing passes none)
                ctx.shapes = tuple(shape_of(a) for a in arrays)  # (the zeros' shapes)
            return function(xp, *arrays, **params)

        self.forward = forward

    @staticmethod
    def vjp(ctx: Any, xp: Any, g: Any, *saved: Any) -> tuple:
        return tuple(xp.zeros(shape, dtype=g.dtype) if needed else None
                     for shape, needed in zip(ctx.shapes, ctx.needs_input_grad))

    def __repr__(self) -> str:
        return f"StepFunction({self.name})"


def _integer_division(operation: Callable) -> Callable:
    """``a // b`` or ``a / b`` rounded; dividing integers by zero is an error, as in
    PyTorch (NumPy would warn and give 0): ``fmod`` and ``remainder`` check alike."""

    def divide(xp: Any, a: Any, b: Any) -> Any:
        check_integer_divisor(a, b)
        return operation(xp, a, b)

    return divide


def _trunc_divide(xp: Any, a: Any, b: Any) -> Any:
    """a / b rounded towards zero, PyTorch's ``rounding_mode="trunc"``: ``trunc(a / b)``
    for floats (so ``inf / 2`` stays inf, where ``//`` gives nan); integers stay exact,
    as C's ``/``: the floor, one up where it rounded a negative quotient down."""
    if result_type(a, b).kind not in "iub":
        return xp.trunc(a / b)
    floor = a // b
    return floor + ((floor * b != a) & ((a < 0) != (b < 0)))


def _as_bool(x: Any) -> Any:
    return x.astype(bool) if hasattr(x, "astype") else bool(x)


def _isclose(xp: Any, a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-8,
             equal_nan: bool = False) -> Any:
    return xp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def _heaviside(xp: Any, x: Any, value_at_zero: Any) -> Any:
    step = xp.heaviside(x, value_at_zero)
    dtype = getattr(x, "dtype", None)  # (a Python float, a dual number's value: as it is)
    return step if dtype is None else step.astype(dtype)


def _sign(xp: Any, x: Any) -> Any:
    """-1, 0 or 1; refused for complex values, as PyTorch does (NumPy's sign of z is z/|z|,
    which as a primitive without a derivative would drop its gradient): ``sgn`` is that."""
    if getattr(getattr(x, "dtype", None), "kind", "") == "c":
        raise TypeError("sign is not defined for complex tensors (as in PyTorch); use "
                        "difflab.sgn, which gives z/|z| with its gradient")
    return xp.sign(x)


def _signbit(xp: Any, x: Any) -> Any:
    """The sign bit itself (NumPy's ``signbit``): set for -0.0, -inf and a nan written with
    a minus sign, as PyTorch reads it; refused for complex values, as PyTorch does."""
    if getattr(getattr(x, "dtype", None), "kind", "") == "c":
        raise NotImplementedError("signbit is not defined for complex tensors (as in "
                                  "PyTorch): apply it to z.real or z.imag")
    return xp.signbit(x)


#: Each: its name, its forward on arrays, a description, and (where a symbol has one)
#: its symbolic form, the sympy function of the values; the JVP of every one is 0.
POINTWISE = [
    Pointwise("eq", lambda xp, a, b: a == b, "a == b", lambda sp, a, b: sp.equal(a, b)),
    Pointwise("ne", lambda xp, a, b: a != b, "a != b", lambda sp, a, b: sp.not_equal(a, b)),
    Pointwise("lt", lambda xp, a, b: a < b, "a < b", lambda sp, a, b: a < b),
    Pointwise("le", lambda xp, a, b: a <= b, "a <= b", lambda sp, a, b: a <= b),
    Pointwise("gt", lambda xp, a, b: a > b, "a > b", lambda sp, a, b: a > b),
    Pointwise("ge", lambda xp, a, b: a >= b, "a >= b", lambda sp, a, b: a >= b),
    Pointwise("bitwise_and", lambda xp, a, b: a & b, "a & b (and of truth values)",
              lambda sp, a, b: sp.logical_and(a, b)),
    Pointwise("bitwise_or", lambda xp, a, b: a | b, "a | b",
              lambda sp, a, b: sp.logical_or(a, b)),
    Pointwise("bitwise_xor", lambda xp, a, b: a ^ b, "a ^ b",
              lambda sp, a, b: sp.logical_xor(a, b)),
    Pointwise("bitwise_not", lambda xp, a: ~a, "~a", lambda sp, a: sp.logical_not(a)),
    Pointwise("gcd", lambda xp, a, b: xp.gcd(a, b), "gcd(a, b) (0 when both are 0)"),
    Pointwise("lcm", lambda xp, a, b: xp.lcm(a, b), "lcm(a, b) (0 when either is 0)"),
    Pointwise("logical_and", lambda xp, a, b: _as_bool(a) & _as_bool(b), "a and b",
              lambda sp, a, b: sp.logical_and(a, b)),
    Pointwise("logical_or", lambda xp, a, b: _as_bool(a) | _as_bool(b), "a or b",
              lambda sp, a, b: sp.logical_or(a, b)),
    Pointwise("logical_xor", lambda xp, a, b: _as_bool(a) ^ _as_bool(b), "a xor b",
              lambda sp, a, b: sp.logical_xor(a, b)),
    Pointwise("logical_not", lambda xp, a: ~_as_bool(a), "not a",
              lambda sp, a: sp.logical_not(a)),
    Pointwise("isnan", lambda xp, x: xp.isnan(x), "whether x is nan",
              lambda sp, x: sp.isnan(x)),
    Pointwise("isinf", lambda xp, x: xp.isinf(x), "whether x is +inf or -inf",
              lambda sp, x: sp.isinf(x)),
    Pointwise("isfinite", lambda xp, x: xp.isfinite(x), "whether x is neither inf nor nan",
              lambda sp, x: sp.isfinite(x)),
    Pointwise("signbit", _signbit, "whether the sign bit of x is set (-0.0 and -nan too)",
              lambda sp, x: x < 0),
    Pointwise("isclose", _isclose, "|a - b| <= atol + rtol·|b|",
              lambda sp, a, b, rtol=1e-5, atol=1e-8, equal_nan=False:
              sp.abs(a - b) <= atol + rtol * sp.abs(b)),
    StepFunction("sign", lambda xp, x: _sign(xp, x), "-1, 0 or 1", lambda sp, x: sp.sign(x)),
    StepFunction("round", lambda xp, x: xp.round(x), "the nearest integer (halves to even)",
              lambda sp, x: sp.rint(x)),
    StepFunction("floor", lambda xp, x: xp.floor(x), "⌊x⌋", lambda sp, x: sp.floor(x)),
    StepFunction("ceil", lambda xp, x: xp.ceil(x), "⌈x⌉", lambda sp, x: sp.ceil(x)),
    StepFunction("heaviside", _heaviside, "1 for x > 0, 0 for x < 0, a given value at 0",
              lambda sp, x, value_at_zero: sp.heaviside(x, value_at_zero)),
    StepFunction("floor_divide", _integer_division(lambda xp, a, b: a // b), "⌊a / b⌋",
              lambda sp, a, b: sp.floor(a / b)),
    StepFunction("trunc_divide", _integer_division(_trunc_divide), "a / b rounded towards 0",
              lambda sp, a, b: sp.trunc(a / b)),
    Pointwise("frexp_exponent", lambda xp, x: xp.frexp(x)[1].astype(xp.int32),
              "the exponent e of x = m·2^e, 0.5 ≤ |m| < 1 (0 for 0, inf and nan)",
              lambda sp, x: sp.where(sp.equal(x, 0), 0,  # (log|0| would make it nan)
                                     sp.floor(sp.log(sp.abs(x)) / sp.log(2)) + 1)),
]


class StopGradient(Pointwise):
    r"""``x.detach()``: the same values, through which no derivative passes (a stop-gradient).

    .. math::

        y = x, \qquad \frac{\partial y}{\partial x} := 0

    The derivative rule is zero by decree, not by calculus: PyTorch's ``detach``,
    JAX's ``lax.stop_gradient``.  As a primitive without a derivative it reaches every
    interpreter through ``engine.apply``: the tape records nothing (the result does not
    require grad), forward mode keeps the values of a dual number and drops its tangents
    (every nested level's), the symbolic method writes sympy's ``detached(e)``
    (derivative 0), and the graph tracer records a node, so a compiled derivative stops
    there as the tape does (before this node existed, a traced ``detach`` left no trace
    and the compiled gradient went straight through it).  Its forward is a new array
    object on the same memory (``x.view()``): the detached tensor shares its values, as
    in PyTorch, and the tracer tells it apart from ``x``.
    """

    stops_gradient = True

    def __init__(self) -> None:
        super().__init__("detach", _stop_gradient, "the same values, cut from "
                         "differentiation (a stop-gradient)", lambda sp, x: sp.stop_gradient(x))


def _stop_gradient(xp: Any, x: Any) -> Any:
    """The values of ``x`` as a new array on its memory; a value with a derivative of its
    own (forward mode's dual number, a symbolic array) gives its own detached values.
    Inside a finite-difference derivative, the values it holds (:class:`FrozenStops`)."""
    frozen = _frozen_stops.get()
    if frozen is not None:
        return frozen.stop(x)
    return _detached(x)


def stop_gradient_value(x: Any) -> Any:
    """The value of a stop-gradient of the plain value ``x``, as compiled sympy code reads it.

    ``x`` itself; inside a finite-difference evaluation (:class:`FrozenStops`), the value
    held for this stop.  The symbolic method's compiled expressions call it for each
    ``detached(e)``, so that a symbolic derivative taken inside a numeric one has its
    stops held as the tape's and forward mode's are.

    Parameters
    ----------
    x : array or number
        The value detached.

    Returns
    -------
    array or number
        ``x``, or the held value.

    Examples
    --------
    >>> from difflab.ops.logic import FrozenStops, stop_gradient_value
    >>> stop_gradient_value(2.0)
    2.0
    >>> stops = FrozenStops()
    >>> stops.evaluate(stop_gradient_value, 2.0), stops.evaluate(stop_gradient_value, 2.5)
    (2.0, 2.0)
    """
    frozen = _frozen_stops.get()
    return x if frozen is None else frozen.stop(x)


def _detached(x: Any) -> Any:
    detach = getattr(x, "detach", None)
    if detach is not None:
        return detach()
    return x.view() if hasattr(x, "view") else x  # (a Python number: a value already)


class FrozenStops:
    r"""The stop-gradients of one finite-difference derivative, held at the base point.

    Finite differences see only values: they evaluate f at x and at points x + h·e
    nearby.  A stop-gradient (``x.detach()``, ``x.data``, ``x.detach_()``) declares its
    value a constant, so every one of those evaluations must see the same constant:

    .. math::

        f(v) = \operatorname{detach}(v) \cdot v, \qquad
        \frac{f(x + h) - f(x - h)}{2h} \text{ with } \operatorname{detach} := x
        \;\text{ gives }\; x, \text{ not } 2x.

    :meth:`evaluate` calls f with this object active (a ``ContextVar``, so per thread,
    as ``deferring_index_checks``): its first call, at the unperturbed point,
    records in call order the value of each stop-gradient f applies; every later call
    hands the k-th stop-gradient it applies the k-th recorded value.  A later call that
    applies more or fewer of them, or one of another shape, took another path through
    f's control flow: a ``RuntimeError`` says so (the methods that follow the path f
    takes, reverse, forward and symbolic, differentiate it).

    Only the stop-gradients applied while f runs under this object are held, so
    derivatives nest: a derivative by another method inside f applies its stops here
    (at every level, as a nested tape's ``detach`` stops the outer derivative too), and a
    finite-difference derivative inside f holds its own, taking their values at its
    own unperturbed point from this one (so those are held at this base point too).
    A held value is a copy, in the dtype of the value it replaces (the complex step's
    complex points get the real values of the base point); it shares no memory with
    the tensor detached, as the live ``detach`` does.

    Examples
    --------
    >>> import numpy as np
    >>> import difflab as dl
    >>> from difflab.ops.logic import FrozenStops
    >>> f = lambda v: (v.detach() * v).sum().item()
    >>> stops = FrozenStops()
    >>> stops.evaluate(f, dl.tensor([1.0, 2.0]))       # the base point: recorded
    5.0
    >>> stops.evaluate(f, dl.tensor([1.5, 2.0]))       # detach gives [1, 2] here
    5.5
    >>> stops.evaluate(lambda v: v.sum().item(), dl.tensor([1.0, 2.0]))
    Traceback (most recent call last):
    ...
    RuntimeError: numeric: f applied 0 stop-gradients (detach, .data, detach_) at a perturbed point, but 1 at the unperturbed point: ...
    """  # noqa: E501

    def __init__(self) -> None:
        self.values: list = []  # the base point's value of each stop, in call order
        self.recording = True  # until the first evaluation has returned
        self._next = 0  # the index of the next stop in the evaluation running
        self._outer: FrozenStops | None = None  # an enclosing derivative's, while f runs

    def evaluate(self, f: Callable, *args: Any) -> Any:
        """``f(*args)`` with this derivative's stop-gradients held (recorded, the first time).

        Parameters
        ----------
        f : callable
            The function differentiated.
        *args
            Its arguments at this point.

        Returns
        -------
        object
            What f returns.

        Raises
        ------
        RuntimeError
            When a later evaluation applies another number of stop-gradients than the
            first one did, or one of another shape.
        """
        self._outer, self._next = _frozen_stops.get(), 0
        token = _frozen_stops.set(self)
        try:
            out = f(*args)
        finally:
            _frozen_stops.reset(token)
        if self.recording:
            self.recording = False
        elif self._next != len(self.values):
            raise RuntimeError(self._mismatch(f"applied {self._next} stop-gradients"
                                              f"{_NAMES} at a perturbed point, but "
                                              f"{len(self.values)} at the unperturbed point"))
        return out

    def stop(self, x: Any) -> Any:
        """The value of the stop-gradient applied to ``x`` (an array): at the base point
        its own (an enclosing derivative's held value, if one holds it), later the held one."""
        if self.recording:
            value = self._outer.stop(x) if self._outer is not None else _detached(x)
            self.values.append(_copy(value))
            return value
        k = self._next
        if k >= len(self.values):
            raise RuntimeError(self._mismatch(f"applied more stop-gradients{_NAMES} at a "
                                              f"perturbed point than the {len(self.values)} "
                                              f"it applied at the unperturbed point"))
        held = self.values[k]
        if np.shape(held) != np.shape(x):
            raise RuntimeError(self._mismatch(
                f"applied its stop-gradient #{k + 1}{_NAMES} to a value of shape "
                f"{tuple(np.shape(x))} at a perturbed point, but to one of shape "
                f"{tuple(np.shape(held))} at the unperturbed point"))
        self._next = k + 1
        dtype = getattr(x, "dtype", None)
        if dtype is not None and getattr(held, "dtype", dtype) != dtype:
            return held.astype(dtype)  # (the complex step: the base point's real values)
        return _copy(held)

    @staticmethod
    def _mismatch(what: str) -> str:
        return (f"numeric: f {what}: its control flow depends on x. Finite differences "
                f"hold each stop-gradient at its value at the unperturbed point, the k-th "
                f"one f applies at every point taking the k-th value there, so f must apply "
                f"the same ones, of the same shapes, in the same order at every point. "
                f"Differentiate it with method='reverse', 'forward' or 'symbolic', which "
                f"follow the path f takes at x")


_NAMES = " (detach, .data, detach_)"

#: The stop-gradients of the finite-difference evaluation running, if one is running.
_frozen_stops: ContextVar[FrozenStops | None] = ContextVar("frozen_stop_gradients",
                                                           default=None)



@contextlib.contextmanager
def stops_not_held() -> Iterator[None]:
    """Inside this block a stop-gradient gives its own values, not held ones.

    A custom ``autograd.Function`` defines its own derivative; the ``x.detach()`` in its
    ``forward`` is how it computes (its tape is off there anyway), not a stop of the
    function's derivative.  So while its forward runs, a finite-difference derivative
    around it must see the values it computes at each point, as a primitive's.

    Yields
    ------
    None

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.ops.logic import FrozenStops, stops_not_held
    >>> stops = FrozenStops()
    >>> def f(v):
    ...     with stops_not_held():
    ...         return v.detach() * 2
    >>> stops.evaluate(f, dl.tensor([1.0])), stops.evaluate(f, dl.tensor([5.0]))
    (tensor([2.]), tensor([10.]))
    """
    token = _frozen_stops.set(None)
    try:
        yield
    finally:
        _frozen_stops.reset(token)

def _copy(value: Any) -> Any:
    copy = getattr(value, "copy", None)
    return copy() if copy is not None else value


# ------------------------------------------------------------ along an axis


class AnyAll(NoDerivative):
    """Whether some (``any``) or every (``all``) element along ``axis`` is non-zero."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.description = f"{name} of the truth values along an axis"

    def forward(self, ctx: Any, xp: Any, x: Any, axis: Any = None, keepdims: bool = False
                ) -> Any:
        axis = _normalize_axis(axis, x.ndim)  # (a float dim: PyTorch's words, not NumPy's)
        return getattr(x, self.name)(axis=axis, keepdims=keepdims)

    def symbolic(self, sp: Any, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
        """sympy's ``Or`` (``any``) or ``And`` (``all``) of the truth values along ``axis``."""
        join = sp.logical_or if self.name == "any" else sp.logical_and
        return sp.reduce(join, sp.elementwise(sp.truth, x), axis, keepdims)


class ArgExtreme(NoDerivative):
    """The index of the largest (``argmax``) or smallest (``argmin``) element along ``axis``."""

    doc = """
        Parameters
        ----------
        input : Tensor, array or sequence
            The values.
        dim : int, optional
            The dimension to search along; default: the flattened input.
        keepdim : bool, default False
            Keep the reduced dimension with size 1.

        Returns
        -------
        Tensor or array of int64
            The indices (the first one on ties).  An index has no derivative: the result
            never requires grad.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.argmax(dl.tensor([[1.0, 5.0], [4.0, 2.0]]), dim=1)
        tensor([1, 0])
        >>> dl.argmin(dl.tensor([3.0, 1.0, 2.0]))
        tensor(1)
    """

    def __init__(self, name: str) -> None:
        self.name = self.tensor_method = self.dl_function = name  # x.argmax(dim), dl.argmax
        self.description = f"the index of the {name[3:]}imum"

    @staticmethod
    def arguments(input: Any, dim: Any = None, keepdim: bool = False, *,  # noqa: A002
                  axis: Any = None, keepdims: bool | None = None) -> tuple[tuple, dict]:
        """``argmax(input, dim=None, keepdim=False)`` (``argmin`` alike): the index of the
        extreme over ``dim``, of the flattened input by default."""
        dim = axis if dim is None else dim
        keepdim = keepdims if keepdims is not None else keepdim
        return (input,), {"axis": dim, "keepdims": bool(keepdim)}

    def symbolic(self, sp: Any, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
        """None: where the extreme sits is no expression of symbols; a stand-in that says
        so when used (``dl.max(x, dim).values`` beside it traces, to ``sympy.Max``)."""
        return sp.no_symbolic_form(
            f"dl.{self.name} (the indices of dl.{self.name[3:]}(x, dim))",
            f"where the {self.name[3:]}imum sits is not an expression of the symbols; use "
            f"the values (dl.a{self.name[3:]}, or .values), or method='forward'/'reverse'")

    def forward(self, ctx: Any, xp: Any, x: Any, axis: Any = None, keepdims: bool = False
                ) -> Any:
        if axis is not None:
            dim_index(axis, x.ndim, self.name)  # (one int: a float or a tuple is refused)
        out = getattr(xp, self.name)(x, axis=axis)
        if keepdims and axis is not None and x.ndim:  # (a 0-d input stays 0-d, as PyTorch)
            out = xp.expand_dims(out, axis)
        return out.astype(np.int64)


class ArgSort(NoDerivative):
    """The indices that sort ``x`` along ``axis`` (stable: ties keep their order).

    NaN sorts as the largest value, as in PyTorch.  A 0-d ``x`` is one element.
    """

    name = "argsort"
    description = "the indices that sort x"

    @staticmethod
    def forward(ctx: Any, xp: Any, x: Any, axis: int = -1, descending: bool = False) -> Any:
        a = x if x.ndim else x.reshape(1)
        while hasattr(a, "primal"):  # forward mode's Dual arrays: the order of the values
            a = a.primal
        xp = backend.array_module(a)
        key = a
        if descending:
            if a.dtype.kind == "f":
                key = xp.where(xp.isnan(a), -np.inf, -a)  # NaN first, as the largest
            elif a.dtype.kind == "b":
                key = ~a
            else:
                key = -a.astype(np.int64) if a.dtype.kind == "u" else -a
        out = xp.argsort(key, axis=axis, kind="stable").astype(np.int64)
        return out if x.ndim else out.reshape(())


class CountNonzero(NoDerivative):
    """How many elements (along ``axis``) are not zero, as int64."""

    name = "count_nonzero"
    description = "the number of non-zero elements"

    @staticmethod
    def forward(ctx: Any, xp: Any, x: Any, axis: Any = None) -> Any:
        axis = _normalize_axis(axis, x.ndim)
        return xp.asarray(xp.count_nonzero(x, axis=axis)).astype(np.int64)

    @staticmethod
    def symbolic(sp: Any, x: Any, axis: Any = None) -> Any:
        """The sum of ``Piecewise((1, x ≠ 0), (0, True))`` along ``axis``."""
        ones = sp.elementwise(lambda v: sp.where(sp.truth(v), 1, 0), x)
        return sp.reduce(lambda a, b: a + b, ones, axis)


class Histc(NoDerivative):
    """Counts of the elements in ``bins`` equal bins over [low, high]; with low = high,
    the data's own smallest and largest values (one unit either side if those are equal)."""

    name = "histc"
    description = "a histogram with equal bins"

    @staticmethod
    def forward(ctx: Any, xp: Any, x: Any, bins: int = 100, low: float = 0.0,
                high: float = 0.0) -> Any:
        values = backend.to_numpy(x).ravel()
        if low == high:
            low, high = ((float(values.min()), float(values.max())) if values.size
                         else (0.0, 0.0))
        if low == high:
            low, high = low - 1, high + 1  # (all values equal: one unit either side, as PyTorch)
        counts, _ = np.histogram(values, bins=bins, range=(low, high))
        return backend.to_device(counts.astype(x.dtype), backend.device_of(x))


class Histogram(NoDerivative):
    """NumPy's histogram of ``x``: the counts (``part="hist"``: or weight sums, or a
    density) or the bin edges (``part="bin_edges"``); ``bins`` a number of equal bins
    over ``range`` (the data's by default) or an array of increasing edges."""

    name = "histogram"
    description = "a histogram (counts or bin edges)"

    @staticmethod
    def forward(ctx: Any, xp: Any, x: Any, bins: Any = 100, weight: Any = None,
                range: Any = None, density: bool = False, part: str = "hist") -> Any:  # noqa: A002
        edges = backend.to_numpy(bins) if hasattr(bins, "shape") else bins
        weights = None if weight is None else backend.to_numpy(weight).ravel()
        hist, edges = np.histogram(backend.to_numpy(x).ravel(), bins=edges, range=range,
                                   weights=weights, density=density)
        out = hist if part == "hist" else edges
        return backend.to_device(out.astype(x.dtype), backend.device_of(x))


class OneHot(NoDerivative):
    """(...) integer classes -> (..., num_classes) int64 of 0/1.

    With ``num_classes = -1`` the number of classes is the largest class + 1:
    the output's shape then depends on the input's values.
    """

    name = "one_hot"
    description = "integer classes as rows of 0/1"

    @staticmethod
    def forward(ctx: Any, xp: Any, x: Any, num_classes: int = -1) -> Any:
        if x.size and int(x.min()) < 0:
            raise RuntimeError(f"one_hot: Class values must be non-negative, got {int(x.min())}")
        if num_classes < 0 and not x.size:
            raise RuntimeError("one_hot: cannot infer the number of classes from an empty "
                               "tensor; pass num_classes")
        n = int(x.max()) + 1 if num_classes < 0 else num_classes
        if x.size and int(x.max()) >= n:
            raise RuntimeError(
                f"one_hot: Class values must be smaller than num_classes ({n}), got "
                f"{int(x.max())}"
            )
        return (x[..., None] == xp.arange(n)).astype(np.int64)

    @staticmethod
    def shape_read_from(inputs: tuple, params: dict) -> tuple:
        return inputs[:1] if params.get("num_classes", -1) < 0 else ()


class CheckIndex(NoDerivative):
    """index -> the same index, once every entry is checked to lie in ``[low, size)``.

    Functions that read positions or classes from a tensor (``gather``,
    ``index_put``, ``embedding``, ``nll_loss``'s targets) must refuse one out of
    range, as eager code does; a check written in Python would run only while a
    graph is traced, and the replay would then wrap (``-7 % 5``) or read the wrong
    element silently.  So the check is a primitive: the tracer records it, and the
    tape, the interpreter, a ``Program`` and ``dl.compile`` all replay it on every
    new index.  The caller reads the index from its result (a view of it), so no
    pass can drop the check while the index is used.

    ``low`` is ``0`` (PyTorch's gather, embedding, targets) or ``-size``
    (negative positions count from the end); ``skip`` is a value exempt from
    the check (``nll_loss``'s ``ignore_index``); ``error`` names the exception
    class (``"IndexError"``, ``"RuntimeError"`` or ``"ValueError"``, as the function raises);
    ``message`` is its text, with ``{value}`` for the first entry out of range.
    The check costs one or two reductions over the index (when ``low`` is 0, one
    max of the index read as unsigned integers, where a negative entry is huge).
    """

    name = "check_index"
    description = "an index checked to lie in range"
    #: The error is already the calling function's message: the engine passes it
    #: through unchanged (it does not prefix this primitive's name).
    user_code = True
    #: A check: kept by dead-code elimination even when nothing reads its result.
    validates = True

    @staticmethod
    def forward(ctx: Any, xp: Any, index: Any, size: int, low: int = 0, skip: Any = None,
                error: str = "IndexError", message: str = "index {value} is out of range"
                ) -> Any:
        unsigned = _UNSIGNED.get(index.dtype) if low == 0 else None
        deferred = _deferred_checks.get()
        if not index.size:
            pass
        elif deferred is not None and not isinstance(index, np.ndarray):
            deferred.append(_check_on_device(index, size, low, skip) + (error, message))
        elif unsigned is not None:  # one pass: read as unsigned, a negative entry is huge
            if int(index.view(unsigned).max()) >= size:
                _refuse(index, size, low, skip, error, message)
        elif int(index.min()) < low or int(index.max()) >= size:
            _refuse(index, size, low, skip, error, message)
        return index.view()

    @staticmethod
    def describe(node: Any, args: str) -> str:
        p = node.params
        skip = "" if p.get("skip") is None else f", except {p['skip']}"
        return f"{node.name} = check_index({args}: {p.get('low', 0)} <= i < {p['size']}{skip})"


#: The exception classes a ``check_index`` may raise, by name (a graph file stores the name).
_CHECK_ERRORS = {"IndexError": IndexError, "RuntimeError": RuntimeError, "ValueError": ValueError}


#: The unsigned integer type of each signed one, same size (a view reads the same bytes).
_UNSIGNED = {np.dtype(f"int{bits}"): np.dtype(f"uint{bits}") for bits in (8, 16, 32, 64)}


def _refuse(index: Any, size: int, low: int, skip: Any, error: str, message: str) -> None:
    """Raise ``check_index``'s error for the first entry out of ``[low, size)`` (not ``skip``)."""
    flat = index.reshape(-1)
    bad = flat[(flat < low) | (flat >= size)]
    if skip is not None:
        bad = bad[bad != skip]
    if bad.size:
        raise_index_error(error, message, int(bad[0]))


def raise_index_error(error: str, message: str, value: int, note: str = "") -> None:
    """Raise ``check_index``'s error: class ``error``, ``message`` about entry ``value``.

    Parameters
    ----------
    error : str
        ``"IndexError"``, ``"RuntimeError"`` or ``"ValueError"``.
    message : str
        The text, with ``{value}`` for the entry out of range.
    value : int
        The first entry out of range.
    note : str, optional
        Appended to the text (where the check ran, as in a CUDA graph).

    Raises
    ------
    IndexError, RuntimeError or ValueError
        Always.

    Examples
    --------
    >>> from difflab.ops.logic import raise_index_error
    >>> raise_index_error("IndexError", "index {value} is out of range", 7)
    Traceback (most recent call last):
    ...
    IndexError: index 7 is out of range
    """
    raise _CHECK_ERRORS[error](message.format(value=value) + note)


# The checks check_index leaves to the GPU while a CUDA graph is recorded: see
# deferring_index_checks.
_deferred_checks: ContextVar[list | None] = ContextVar("deferred_index_checks", default=None)


@contextlib.contextmanager
def deferring_index_checks() -> Iterator[list]:
    """Within the block, ``check_index`` on a GPU array computes its verdict on the GPU.

    Checking that indices lie in range needs their smallest and largest entry on
    the host, and copying a number to the host makes the host wait for the GPU:
    a CUDA graph cannot record that (:mod:`difflab.jit.cuda_graphs`).  Inside
    this block each such check instead appends ``(found, value, error,
    message)`` to the list it yields: ``found`` and ``value`` are 0-d GPU arrays
    (whether an entry is out of range, and the first such entry), read after
    the graph's launch and raised with :func:`raise_index_error`.  NumPy
    arrays are checked at once, as always.

    Yields
    ------
    list
        The deferred checks, in the order they ran.

    Examples
    --------
    >>> import numpy as np
    >>> import difflab as dl
    >>> from difflab.ops.logic import deferring_index_checks
    >>> from difflab.testing import fake_cupy
    >>> with fake_cupy.installed(), deferring_index_checks() as checks:
    ...     logits = dl.zeros(2, 3, device="cuda")
    ...     _ = dl.nn.functional.cross_entropy(logits, dl.tensor([0, 5], device="cuda"))
    >>> [(int(found.get()), int(value.get())) for found, value, _, _ in checks]
    [(1, 5)]
    """
    checks: list = []
    token = _deferred_checks.set(checks)
    try:
        yield checks
    finally:
        _deferred_checks.reset(token)


def _check_on_device(index: Any, size: int, low: int, skip: Any) -> tuple:
    """(whether an entry lies out of ``[low, size)``, not ``skip``; the first one): 0-d
    arrays on the index's device, computed without reading anything to the host."""
    flat = index.reshape(-1)
    bad = (flat < low) | (flat >= size)
    if skip is not None:
        bad &= flat != skip
    return bad.any().astype(np.int64), flat[bad.argmax()].astype(np.int64)


NO_DERIVATIVE = [*POINTWISE, StopGradient(), AnyAll("any"), AnyAll("all"), ArgExtreme("argmax"),
                 ArgExtreme("argmin"), ArgSort, CountNonzero, Histc, Histogram, OneHot,
                 CheckIndex]
