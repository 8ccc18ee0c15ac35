r"""Forward mode: dual numbers.

A dual number is a pair a + ȧ·ε with ε² = 0.  Taylor's theorem gives

    f(a + ȧ ε) = f(a) + f'(a) ȧ ε        (every higher term has ε² = 0)

so pushing a dual number through f computes the value f(a) *and* the
directional derivative f'(a)·ȧ in one pass: the tangent of each result is
the local derivative (read from the rule table in
:mod:`difflab.ops.elementwise`) times the tangent of the input,

    ẏ = f'(x) · ẋ,        ż = ∂z/∂a · ȧ + ∂z/∂b · ḃ.

Layout of tangents (vector mode)
--------------------------------
A :class:`Dual` carries ``k`` tangents at once: ``d.tangents`` has shape
``(k, *d.shape)``, the leading axis numbering the directions.  With
``k = n`` and the tangents the rows of the identity, one pass gives the
whole Jacobian of f: Rⁿ → Rᵐ; :class:`Forward` does that in chunks of
``chunk_size`` directions.  ``Dual(a, ȧ)`` makes a single direction
(``k = 1``, ``d.tangent`` returns it without the leading axis);
``Dual(a, T, vector=True)`` takes T of shape ``(k, *a.shape)``.

Arrays: NumPy's protocols
-------------------------
``Dual`` implements ``__array_ufunc__`` (``np.sin(d)``, ``np.add(d, 1)``,
``np.maximum``, ... map to the same rule table) and ``__array_function__``
(``np.sum``, ``np.matmul``, ``np.reshape``, ``np.transpose``,
``np.concatenate``, ``np.where``, ``np.broadcast_to``, ``np.expand_dims``,
``np.moveaxis``, ...: linear maps, whose JVP is the same map applied to the
tangents).  So code written for NumPy arrays runs on dual arrays, and so does
difflab's tensor stack, which calls ``xp.sin(array)`` with xp = numpy.

Perturbation confusion and tags
-------------------------------
Each derivative call makes a fresh *tag*; a dual number belongs to one tag,
and its primal may itself be a dual number of an older tag (that is how
second derivatives are computed: duals of duals).  An operation works on
the newest tag among its operands and treats everything else as a
constant.  Without tags, nested derivatives mix up their ε's:

    d/dx [ x · d/dy (x + y) ] = d/dx [ x · 1 ] = 1,

but a naive implementation that lets the inner ε "see" x's tangent
computes d/dy (x + y) = 2 and answers 2.  ``Dual(a, ȧ)`` made by hand has
tag 0 (shared by all hand-made duals), which reproduces the naive behaviour
on purpose; :func:`difflab.diff.derivative` and friends always tag.

Kinks
-----
``abs``, ``relu``, ``maximum``, ``minimum`` follow the rule table: the
derivative of |x| and relu at 0 is 0; ``maximum``/``minimum`` of equal
inputs give each input half.  Comparisons (``<``, ``==``, ...) compare
primal values, so Python control flow (``if x > 0``) works: forward mode
differentiates the path actually taken (a dynamic graph).

Using dual arrays inside tensors (forward-mode training)
--------------------------------------------------------
Put a ``Dual`` in a parameter tensor's ``.array`` under ``no_grad()``; every
tensor op then computes values and k directional derivatives at once::

    k = chunk of parameters to differentiate, T = one-hot rows of shape (k, *p.shape)
    with difflab.no_grad():
        p.array = Dual(p.array, T, tag=tag, vector=True)   # tag = new_tag()
        loss = model(x).loss(...)             # loss.array is a Dual
    grads = loss.array.tangents               # shape (k,): ∂loss/∂θ for the k directions

``tangents_of(value, tag, k)`` extracts tangents safely (zeros when the output
does not depend on the inputs).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from difflab import backend
from difflab import functions as F
from difflab.diff.interface import Cost, Differentiator, check_output, require_scalar, with_arg
from difflab.functions import TypeHandler, register_type
from difflab.ops import elementwise as rules
from difflab.tensor import Tensor

_tags = itertools.count(1)


class _Stats:
    """Counts operations on dual numbers (read by :class:`Forward` for its cost report)."""

    ops = 0


def new_tag() -> int:
    """A fresh tag: newer than every dual number made so far."""
    return next(_tags)


# --------------------------------------------------------------------------- helpers


def _shape(x: Any) -> tuple:
    if isinstance(x, (Dual, Tensor)):
        return tuple(x.shape)
    return tuple(np.shape(x))


def _innermost(x: Any) -> Any:
    """The plain value at the bottom of nested duals (a Tensor's array for tensors)."""
    while isinstance(x, Dual):
        x = x.primal
    return x.array if isinstance(x, Tensor) else x


def _strip(x: Any) -> Any:
    """The primal with every dual layer removed (for comparisons and constant functions)."""
    while isinstance(x, Dual):
        x = x.primal
    return x


def _namespace(*values: Any) -> Any:
    """Where the rules should look for ``sin``, ``where``, ...: NumPy/CuPy for plain arrays;
    difflab's dispatching functions when a value is itself a Dual or a Tensor."""
    for v in values:
        if isinstance(v, (Dual, Tensor)):
            return F
    for v in values:
        if hasattr(v, "shape"):
            return backend.array_module(v)
    return backend.numpy_namespace


def _zeros(shape: tuple, like: Any) -> Any:
    xp = backend.array_module(_innermost(like))
    return xp.zeros(shape)


def _reshape(t: Any, shape: tuple) -> Any:
    if _shape(t) == tuple(shape):
        return t
    return t.reshape(tuple(shape))


def _lift(t: Any, ndim: int) -> Any:
    """Tangents (k, *s) as (k, 1, ..., 1, *s) with 1 + ndim axes, to broadcast like the primal."""
    shape = _shape(t)
    missing = ndim - (len(shape) - 1)
    if missing <= 0:
        return t
    return _reshape(t, shape[:1] + (1,) * missing + shape[1:])


def _broadcast(t: Any, shape: tuple) -> Any:
    if _shape(t) == tuple(shape):
        return t
    return F.broadcast_to(_lift(t, len(shape) - 1), tuple(shape))


def _scale(t: Any, d: Any) -> Any:
    """t · d, skipping the multiplication for the constants ±1."""
    if type(d) is float:
        if d == 1.0:
            return t
        if d == -1.0:
            return -t
    return t * d


def _top_tag(*values: Any) -> int:
    return max(v.tag for v in values if isinstance(v, Dual))


def _split(x: Any, tag: int) -> tuple[Any, Any]:
    """(primal, tangents) of x at ``tag``; a value of another tag is a constant here."""
    if isinstance(x, Dual) and x.tag == tag:
        return x.primal, x.tangents
    return x, None


def _count(x: Any) -> int:
    return x.tangents.shape[0]


# ------------------------------------------------------------------------- Dual


class Dual:
    r"""A dual number (or array of them): ``primal + tangents·ε`` with ε² = 0.

    Parameters
    ----------
    primal : float, NumPy/CuPy array, Tensor, or a Dual of an older tag.
    tangent : same shape as ``primal`` (one direction), or with ``vector=True``
        shape ``(k, *primal.shape)`` (k directions).  Default: zeros.
    tag : which derivative this ε belongs to (see the module docstring).
        Hand-made duals share tag 0.
    """

    __slots__ = ("primal", "tangents", "tag")
    __hash__ = None  # comparisons are elementwise, as for arrays

    def __init__(self, primal: Any, tangent: Any = None, tag: int = 0, *,
                 vector: bool = False) -> None:
        if isinstance(primal, (int, float)) and not isinstance(primal, bool):
            primal = float(primal)
        shape = _shape(primal)
        if tangent is None:
            tangents = _zeros((1,) + shape, primal)
        else:
            if isinstance(tangent, (int, float, list, tuple)):
                tangent = np.asarray(tangent, dtype=np.float64)
            if vector:
                if _shape(tangent)[1:] != shape or len(_shape(tangent)) != len(shape) + 1:
                    raise ValueError(
                        f"Dual(vector=True): tangents must have shape (k, *{shape}), got "
                        f"{_shape(tangent)}"
                    )
                tangents = tangent
            else:
                tangents = _broadcast(_reshape(tangent, (1,) + _shape(tangent)), (1,) + shape)
        self.primal, self.tangents, self.tag = primal, tangents, tag

    @classmethod
    def _make(cls, primal: Any, tangents: Any, tag: int) -> Dual:
        d = object.__new__(cls)
        d.primal, d.tangents, d.tag = primal, tangents, tag
        _Stats.ops += 1
        return d

    # -- attributes ------------------------------------------------------------------
    @property
    def tangent(self) -> Any:
        """The tangent of a single-direction dual (shape of the primal)."""
        if _count(self) != 1:
            raise ValueError(
                f"this Dual carries {_count(self)} tangents; use .tangents (shape (k, ...))"
            )
        return self.tangents[0]

    @property
    def shape(self) -> tuple:
        return _shape(self.primal)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=int))

    @property
    def dtype(self) -> np.dtype:
        inner = _innermost(self.primal)
        return getattr(inner, "dtype", np.dtype(np.float64))

    @property
    def T(self) -> Dual:  # noqa: N802
        return _transpose(self)

    @property
    def real(self) -> Dual:
        return self

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d Dual")
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __repr__(self) -> str:
        tangents = self.tangents[0] if _count(self) == 1 else self.tangents
        return f"Dual({self.primal!r}, {tangents!r}, tag={self.tag})"

    # -- no silent loss of the tangent ---------------------------------------------------
    def __float__(self) -> float:
        raise TypeError(
            "float() of a Dual would drop its derivative. Use difflab's math functions "
            "(dl.sin, dl.exp, ...) instead of math.*, or read .primal explicitly."
        )

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError(
            "a Dual cannot become a plain array: that would drop its tangents. Read "
            ".primal (the values) or .tangents (the derivatives)."
        )

    def item(self) -> Any:
        raise TypeError("item() of a Dual would drop its derivative; read .primal.item()")

    def __bool__(self) -> bool:
        return bool(_strip(self.primal))

    def __setitem__(self, index: Any, value: Any) -> None:
        raise TypeError(
            "Dual arrays are immutable: build the result with np.where, np.concatenate or "
            "indexing instead of assigning into it"
        )

    # -- arithmetic: the rule table ------------------------------------------------------
    def __add__(self, other: Any) -> Dual:
        return _binary(rules.Add, self, other)

    def __radd__(self, other: Any) -> Dual:
        return _binary(rules.Add, other, self)

    def __sub__(self, other: Any) -> Dual:
        return _binary(rules.Sub, self, other)

    def __rsub__(self, other: Any) -> Dual:
        return _binary(rules.Sub, other, self)

    def __mul__(self, other: Any) -> Dual:
        return _binary(rules.Mul, self, other)

    def __rmul__(self, other: Any) -> Dual:
        return _binary(rules.Mul, other, self)

    def __truediv__(self, other: Any) -> Dual:
        return _binary(rules.Div, self, other)

    def __rtruediv__(self, other: Any) -> Dual:
        return _binary(rules.Div, other, self)

    def __pow__(self, other: Any) -> Dual:
        return _binary(rules.Pow, self, other)

    def __rpow__(self, other: Any) -> Dual:
        return _binary(rules.Pow, other, self)

    def __matmul__(self, other: Any) -> Dual:
        return _matmul(self, other)

    def __rmatmul__(self, other: Any) -> Dual:
        return _matmul(other, self)

    def __neg__(self) -> Dual:
        return _unary(rules.Neg, self)

    def __pos__(self) -> Dual:
        return self

    def __abs__(self) -> Dual:
        return _unary(rules.Abs, self)

    # comparisons look at values only: control flow follows the path taken
    def __lt__(self, other: Any) -> Any:
        return _strip(self) < _strip(other)

    def __le__(self, other: Any) -> Any:
        return _strip(self) <= _strip(other)

    def __gt__(self, other: Any) -> Any:
        return _strip(self) > _strip(other)

    def __ge__(self, other: Any) -> Any:
        return _strip(self) >= _strip(other)

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        return _strip(self) == _strip(other)

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        return _strip(self) != _strip(other)

    # -- array methods -------------------------------------------------------------------
    def __getitem__(self, index: Any) -> Dual:
        index = index if isinstance(index, tuple) else (index,)
        index = tuple(_strip(i) for i in index)
        return Dual._make(self.primal[index], self.tangents[(slice(None),) + index], self.tag)

    def sum(self, axis: Any = None, keepdims: bool = False, **kwargs: Any) -> Dual:
        return _sum(self, kwargs.get("dim", axis), keepdims=kwargs.get("keepdim", keepdims))

    def mean(self, axis: Any = None, keepdims: bool = False, **kwargs: Any) -> Dual:
        return _mean(self, kwargs.get("dim", axis), keepdims=kwargs.get("keepdim", keepdims))

    def max(self, axis: Any = None, keepdims: bool = False, **kwargs: Any) -> Dual:
        return _extreme(self, axis, keepdims=keepdims, largest=True)

    def min(self, axis: Any = None, keepdims: bool = False, **kwargs: Any) -> Dual:
        return _extreme(self, axis, keepdims=keepdims, largest=False)

    def reshape(self, *shape: Any, **kwargs: Any) -> Dual:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        return _reshape_dual(self, tuple(shape))

    def transpose(self, *axes: Any) -> Dual:
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = axes[0]
        return _transpose(self, tuple(axes) if axes else None)

    def swapaxes(self, a: int, b: int) -> Dual:
        return _swapaxes(self, a, b)

    def squeeze(self, axis: Any = None) -> Dual:
        return _squeeze(self, axis)

    def ravel(self) -> Dual:
        return _reshape_dual(self, (-1,))

    def flatten(self) -> Dual:
        return _reshape_dual(self, (-1,))

    def dot(self, other: Any) -> Dual:
        return _dot(self, other)

    def clip(self, low: Any = None, high: Any = None) -> Dual:
        return _clip(self, low, high)

    def astype(self, dtype: Any, copy: bool = True) -> Dual:
        return Dual._make(_cast(self.primal, dtype), _cast(self.tangents, dtype), self.tag)

    def copy(self) -> Dual:
        return self

    def exp(self) -> Dual:
        return _unary(rules.Exp, self)

    def log(self) -> Dual:
        return _unary(rules.Log, self)

    def sqrt(self) -> Dual:
        return _unary(rules.Sqrt, self)

    def sin(self) -> Dual:
        return _unary(rules.Sin, self)

    def cos(self) -> Dual:
        return _unary(rules.Cos, self)

    def tanh(self) -> Dual:
        return _unary(rules.Tanh, self)

    # -- NumPy protocols -----------------------------------------------------------------
    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        name = ufunc.__name__
        if method != "__call__" or kwargs.get("out") is not None:
            raise TypeError(
                f"numpy.{name}.{method} (or out=) is not supported on Dual numbers: dual arrays "
                f"are immutable values"
            )
        if name in _UFUNC_UNARY:
            return _unary(_UFUNC_UNARY[name], inputs[0])
        if name in _UFUNC_BINARY:
            return _binary(_UFUNC_BINARY[name], *inputs)
        if name in _UFUNC_COMPOSITE:
            return _UFUNC_COMPOSITE[name](*inputs)
        if name in _UFUNC_CONSTANT:
            # Piecewise constant (sign, floor, comparisons, ...): derivative 0 almost everywhere.
            return ufunc(*(_strip(v) for v in inputs), **kwargs)
        raise TypeError(
            f"numpy.{name} has no derivative rule for Dual numbers; supported ufuncs: "
            f"{', '.join(sorted({*_UFUNC_UNARY, *_UFUNC_BINARY, *_UFUNC_COMPOSITE}))}"
        )

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        impl = _ARRAY_FUNCTIONS.get(func)
        if impl is None:
            raise TypeError(
                f"numpy.{func.__name__} is not supported on Dual numbers (forward mode). "
                f"Supported: {', '.join(sorted(f.__name__ for f in _ARRAY_FUNCTIONS))}"
            )
        return impl(*args, **kwargs)


def _cast(x: Any, dtype: Any) -> Any:
    if isinstance(x, Dual):
        return x.astype(dtype)
    if isinstance(x, Tensor):
        return x.to(dtype)
    return x.astype(dtype) if hasattr(x, "astype") else np.asarray(x, dtype=dtype)


# ------------------------------------------------------------------ elementwise rules


def _unary(rule: type[rules.Unary], x: Dual) -> Dual:
    """y = f(x), ẏ = f'(x)·ẋ, with f and f' from the rule table."""
    p = x.primal
    xp = _namespace(p)
    y = rule.forward(xp, p)
    return Dual._make(y, _scale(x.tangents, rule.derivative(xp, p, y)), x.tag)


def _binary(rule: type[rules.Binary], a: Any, b: Any) -> Dual:
    """z = f(a, b), ż = ∂z/∂a·ȧ + ∂z/∂b·ḃ (a term vanishes when that input is a constant)."""
    tag = _top_tag(a, b)
    ap, at = _split(a, tag)
    bp, bt = _split(b, tag)
    xp = _namespace(ap, bp)
    z = rule.forward(xp, ap, bp)
    shape = _shape(z)
    dz = None
    if at is not None:
        dz = _scale(_lift(at, len(shape)), rule.d_da(xp, ap, bp, z))
    if bt is not None:
        term = _scale(_lift(bt, len(shape)), rule.d_db(xp, ap, bp, z))
        dz = term if dz is None else dz + term
    k = _count(a if at is not None else b)
    return Dual._make(z, _broadcast(dz, (k,) + shape), tag)


class _DualHandler(TypeHandler):
    """How ``difflab.sin(dual)`` and friends reach the rules above."""

    def unary(self, op: Any, x: Any) -> Any:
        return _unary(op.rule, x)

    def binary(self, op: Any, a: Any, b: Any) -> Any:
        return _binary(op.rule, a, b)

    def where(self, cond: Any, a: Any, b: Any) -> Any:
        return _where(cond, a, b)


register_type(Dual, _DualHandler())


def _square(x: Any) -> Dual:
    return _binary(rules.Mul, x, x)


def _log_base(base: float) -> Callable:
    def log_b(x: Any) -> Dual:
        return _unary(rules.Log, x) * (1.0 / math.log(base))

    return log_b


_UFUNC_UNARY = {
    "negative": rules.Neg, "exp": rules.Exp, "expm1": rules.Expm1, "log": rules.Log,
    "log1p": rules.Log1p, "sqrt": rules.Sqrt, "sin": rules.Sin, "cos": rules.Cos,
    "tan": rules.Tan, "arcsin": rules.Arcsin, "arccos": rules.Arccos, "arctan": rules.Arctan,
    "sinh": rules.Sinh, "cosh": rules.Cosh, "tanh": rules.Tanh, "absolute": rules.Abs,
    "erf": rules.Erf,
}
_UFUNC_BINARY = {
    "add": rules.Add, "subtract": rules.Sub, "multiply": rules.Mul, "divide": rules.Div,
    "true_divide": rules.Div, "power": rules.Pow, "float_power": rules.Pow,
    "maximum": rules.Maximum, "minimum": rules.Minimum, "fmax": rules.Maximum,
    "fmin": rules.Minimum, "arctan2": rules.Arctan2,
}
_UFUNC_COMPOSITE: dict[str, Callable] = {
    "square": _square,
    "reciprocal": lambda x: _binary(rules.Div, 1.0, x),
    "positive": lambda x: x,
    "conjugate": lambda x: x,
    "exp2": lambda x: _binary(rules.Pow, 2.0, x),
    "log2": _log_base(2.0),
    "log10": _log_base(10.0),
    "hypot": lambda a, b: _unary(rules.Sqrt, _square(a) + _square(b)),
    "matmul": lambda a, b: _matmul(a, b),  # a generalized ufunc since NumPy 2
}
_UFUNC_CONSTANT = {
    "sign", "heaviside", "floor", "ceil", "rint", "trunc", "signbit", "isfinite", "isnan",
    "isinf", "greater", "greater_equal", "less", "less_equal", "equal", "not_equal",
    "logical_and", "logical_or", "logical_not", "logical_xor",
}


# ----------------------------------------------------------- structural functions (JVPs)

_ARRAY_FUNCTIONS: dict[Callable, Callable] = {}


def _implements(*numpy_functions: Callable) -> Callable:
    def register(impl: Callable) -> Callable:
        for f in numpy_functions:
            _ARRAY_FUNCTIONS[f] = impl
        return impl

    return register


def _as_dual(x: Any, tag: int, k: int) -> tuple[Any, Any]:
    """(primal, tangents) at ``tag``, with zero tangents for a constant."""
    p, t = _split(x, tag)
    if t is None:
        t = _zeros((k,) + _shape(p), p)
    return p, t


def _axes(axis: Any, ndim: int) -> tuple | None:
    if axis is None:
        return None
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(a % max(ndim, 1) for a in axes)


@_implements(np.sum)
def _sum(x: Dual, axis: Any = None, dtype: Any = None, out: Any = None,
         keepdims: bool = False, **_: Any) -> Dual:
    """y = Σ x.  Linear, so ẏ = Σ ẋ (the same sum, over the shifted axes)."""
    axes = _axes(axis, x.ndim)
    y = F.sum(x.primal, axis=axes, keepdims=keepdims)
    t_axes = tuple(range(1, x.ndim + 1)) if axes is None else tuple(a + 1 for a in axes)
    t = F.sum(x.tangents, axis=t_axes, keepdims=keepdims) if t_axes else x.tangents
    if axes is None and keepdims is False:
        t = _reshape(t, (_count(x),))
    return Dual._make(y, t, x.tag)


@_implements(np.mean)
def _mean(x: Dual, axis: Any = None, dtype: Any = None, out: Any = None,
          keepdims: bool = False, **_: Any) -> Dual:
    """mean = Σ x / n."""
    axes = _axes(axis, x.ndim)
    n = x.size if axes is None else int(np.prod([x.shape[a] for a in axes], dtype=int))
    return _sum(x, axes, keepdims=keepdims) * (1.0 / n)


@_implements(np.var)
def _var(x: Dual, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
         keepdims: bool = False, **_: Any) -> Dual:
    axes = _axes(axis, x.ndim)
    n = x.size if axes is None else int(np.prod([x.shape[a] for a in axes], dtype=int))
    centred = x - _mean(x, axes, keepdims=True)
    return _sum(centred * centred, axes, keepdims=keepdims) * (1.0 / (n - ddof))


@_implements(np.std)
def _std(x: Dual, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
         keepdims: bool = False, **_: Any) -> Dual:
    return _unary(rules.Sqrt, _var(x, axis, ddof=ddof, keepdims=keepdims))


@_implements(np.linalg.norm)
def _norm(x: Dual, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Dual:  # noqa: A002
    """The 2-norm (Frobenius for matrices) √(Σ x²)."""
    if ord not in (None, 2, "fro"):
        raise TypeError(f"np.linalg.norm(ord={ord!r}) is not supported on Dual numbers")
    return _unary(rules.Sqrt, _sum(x * x, axis, keepdims=keepdims))


def _extreme(x: Dual, axis: Any = None, out: Any = None, keepdims: bool = False,
             largest: bool = True, **_: Any) -> Dual:
    """max/min: the tangent of the chosen element; equal maxima share it evenly."""
    axes = _axes(axis, x.ndim)
    plain = _strip(x)
    xp = backend.array_module(_innermost(x))
    best = (xp.max if largest else xp.min)(plain, axis=axes, keepdims=True)
    mask = (plain == best).astype(np.float64)
    weights = mask / mask.sum(axis=axes, keepdims=True)
    return _sum(x * weights, axes, keepdims=keepdims)


@_implements(np.max, np.amax)
def _max(x: Dual, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Dual:
    return _extreme(x, axis, keepdims=keepdims, largest=True)


@_implements(np.min, np.amin)
def _min(x: Dual, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Dual:
    return _extreme(x, axis, keepdims=keepdims, largest=False)


def _reshape_dual(x: Dual, shape: tuple) -> Dual:
    """Reshaping is linear: the tangents are reshaped the same way (behind their k axis)."""
    y = F.reshape(x.primal, shape)
    return Dual._make(y, _reshape(x.tangents, (_count(x),) + _shape(y)), x.tag)


@_implements(np.reshape)
def _np_reshape(x: Dual, newshape: Any = None, order: str = "C", *, shape: Any = None,
                **_: Any) -> Dual:
    shape = newshape if shape is None else shape
    return _reshape_dual(x, (shape,) if isinstance(shape, int) else tuple(shape))


@_implements(np.ravel)
def _ravel(x: Dual, order: str = "C") -> Dual:
    return _reshape_dual(x, (-1,))


@_implements(np.transpose)
def _transpose(x: Dual, axes: Any = None) -> Dual:
    """A permutation of axes; the tangents' k axis stays first."""
    n = x.ndim
    axes = tuple(range(n - 1, -1, -1)) if axes is None else tuple(a % n for a in axes)
    y = F.transpose(x.primal, axes)
    return Dual._make(y, F.transpose(x.tangents, (0,) + tuple(a + 1 for a in axes)), x.tag)


@_implements(np.swapaxes)
def _swapaxes(x: Dual, axis1: int, axis2: int) -> Dual:
    axes = list(range(x.ndim))
    a, b = axis1 % x.ndim, axis2 % x.ndim
    axes[a], axes[b] = axes[b], axes[a]
    return _transpose(x, tuple(axes))


@_implements(np.moveaxis)
def _moveaxis(x: Dual, source: Any, destination: Any) -> Dual:
    n = x.ndim
    src = [s % n for s in ((source,) if isinstance(source, int) else source)]
    dst = [d % n for d in ((destination,) if isinstance(destination, int) else destination)]
    order = [a for a in range(n) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _transpose(x, tuple(order))


@_implements(np.expand_dims)
def _expand_dims(x: Dual, axis: Any) -> Dual:
    shape = list(x.shape)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    n = x.ndim + len(axes)
    for a in sorted(a % n for a in axes):
        shape.insert(a, 1)
    return _reshape_dual(x, tuple(shape))


@_implements(np.squeeze)
def _squeeze(x: Dual, axis: Any = None) -> Dual:
    axes = _axes(axis, x.ndim)
    shape = tuple(
        n for i, n in enumerate(x.shape) if not (n == 1 and (axes is None or i in axes))
    )
    return _reshape_dual(x, shape)


@_implements(np.broadcast_to)
def _broadcast_to(x: Dual, shape: Any, subok: bool = False) -> Dual:
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    y = F.broadcast_to(x.primal, shape)
    return Dual._make(y, _broadcast(x.tangents, (_count(x),) + shape), x.tag)


@_implements(np.concatenate)
def _concatenate(arrays: Sequence[Any], axis: int = 0, **_: Any) -> Dual:
    """Joining is linear: join the tangents (zeros for constant pieces) along axis + 1."""
    tag = _top_tag(*arrays)
    k = _count(next(a for a in arrays if isinstance(a, Dual) and a.tag == tag))
    parts = [_as_dual(a, tag, k) for a in arrays]
    ndim = len(_shape(parts[0][0]))
    axis = axis % ndim
    primals = [p for p, _ in parts]
    tangents = [t for _, t in parts]
    if any(isinstance(p, Tensor) for p in primals + tangents):
        y, t = F.cat(primals, axis), F.cat(tangents, axis + 1)
    else:
        y, t = np.concatenate(primals, axis=axis), np.concatenate(tangents, axis=axis + 1)
    return Dual._make(y, t, tag)


@_implements(np.stack)
def _stack(arrays: Sequence[Any], axis: int = 0, **_: Any) -> Dual:
    ndim = len(_shape(arrays[0])) + 1
    axis = axis % ndim
    expanded = [
        _expand_dims(a, axis) if isinstance(a, Dual) else F.expand_dims(a, axis) for a in arrays
    ]
    return _concatenate(expanded, axis)


@_implements(np.where)
def _where(cond: Any, a: Any = None, b: Any = None) -> Dual:
    """y = a where cond else b; the tangent is chosen the same way."""
    cond = _strip(cond)
    if isinstance(cond, Tensor):
        cond = cond.array
    tag = _top_tag(a, b)
    k = _count(a if isinstance(a, Dual) and a.tag == tag else b)
    ap, at = _as_dual(a, tag, k)
    bp, bt = _as_dual(b, tag, k)
    y = F.where(cond, ap, bp)
    shape = (k,) + _shape(y)
    return Dual._make(y, F.where(cond, _broadcast(at, shape), _broadcast(bt, shape)), tag)


@_implements(np.clip)
def _clip(x: Any, a_min: Any = None, a_max: Any = None, **_: Any) -> Any:
    """clip = where(x < lo, lo, where(x > hi, hi, x)): derivative 1 inside, 0 outside."""
    if a_max is not None:
        x = _where(_strip(x) > _strip(a_max), a_max, x)
    if a_min is not None:
        x = _where(_strip(x) < _strip(a_min), a_min, x)
    return x


@_implements(np.cumsum)
def _cumsum(x: Dual, axis: Any = None, **_: Any) -> Dual:
    if axis is None:
        x, axis = _reshape_dual(x, (-1,)), 0
    axis = axis % x.ndim
    return Dual._make(F.cumsum(x.primal, axis=axis), F.cumsum(x.tangents, axis=axis + 1), x.tag)


@_implements(np.flip)
def _flip(x: Dual, axis: Any = None) -> Dual:
    axes = tuple(range(x.ndim)) if axis is None else _axes(axis, x.ndim)
    return Dual._make(F.flip(x.primal, axes), F.flip(x.tangents, tuple(a + 1 for a in axes)),
                      x.tag)


@_implements(np.matmul)
def _matmul(a: Any, b: Any, **_: Any) -> Dual:
    r"""y = a @ b.  Bilinear: ẏ = ȧ @ b + a @ ḃ, each product batched over the k tangents.

    NumPy's rules for 1-d operands (a vector is a row on the left, a column on
    the right) decide where the k axis must go; the reshapes below put it
    where matmul's batching carries it through.
    """
    tag = _top_tag(a, b)
    ap, at = _split(a, tag)
    bp, bt = _split(b, tag)
    y = F.matmul(ap, bp)
    out_shape = _shape(y)
    na, nb = len(_shape(ap)), len(_shape(bp))
    k = _count(a if at is not None else b)
    dy = None
    if at is not None:  # ȧ @ b
        if na == 1 and nb >= 2:
            term = F.matmul(_reshape(at, (k,) + (1,) * (nb - 2) + (1, _shape(ap)[0])), bp)
        else:
            term = F.matmul(_lift(at, max(na, nb)), bp)
        dy = _reshape(term, (k,) + out_shape)
    if bt is not None:  # a @ ḃ
        if nb == 1:
            column = _reshape(bt, (k,) + (1,) * max(na - 2, 0) + (_shape(bp)[0], 1))
            term = F.matmul(ap, column)
        elif na == 1:
            term = F.matmul(ap, bt)
        else:
            term = F.matmul(ap, _lift(bt, max(na, nb)))
        term = _reshape(term, (k,) + out_shape)
        dy = term if dy is None else dy + term
    return Dual._make(y, dy, tag)


@_implements(np.dot)
def _dot(a: Any, b: Any, out: Any = None) -> Dual:
    if len(_shape(a)) == 0 or len(_shape(b)) == 0:
        return a * b
    return _matmul(a, b)


def _constant(numpy_function: Callable) -> Callable:
    """Functions of the values only (zeros_like, shape, ...): the duals are stripped."""

    def impl(*args: Any, **kwargs: Any) -> Any:
        return numpy_function(*(_innermost(a) for a in args), **kwargs)

    return impl


for _f in (np.zeros_like, np.ones_like, np.empty_like, np.full_like, np.shape, np.ndim,
           np.size, np.isclose, np.allclose, np.array_equal, np.argmax, np.argmin, np.sign,
           np.isfinite, np.isnan):
    _ARRAY_FUNCTIONS[_f] = _constant(_f)


@_implements(np.copy, np.asanyarray)
def _identity(x: Dual, *args: Any, **kwargs: Any) -> Dual:
    return x


# -------------------------------------------------------------------- the differentiator


def seed(x: Any, tag: int, start: int = 0, stop: int | None = None) -> Dual:
    """x as a dual number whose tangents are the unit directions e_start, ..., e_{stop-1}.

    With all n directions the tangents are the identity: one pass then gives
    every partial derivative.
    """
    n = int(np.prod(_shape(x), dtype=int))
    stop = n if stop is None else stop
    xp = backend.array_module(_innermost(x))
    eye = xp.zeros((stop - start, n))
    eye[xp.arange(stop - start), xp.arange(start, stop)] = 1.0
    return Dual._make(x, eye.reshape((stop - start,) + _shape(x)), tag)


def tangents_of(out: Any, tag: int, k: int) -> tuple[Any, Any]:
    """(value, tangents) of f's output at ``tag``; tangents (k, *shape), zeros for a constant."""
    check_output(out, "forward mode")
    if isinstance(out, Dual) and out.tag == tag:
        return out.primal, out.tangents
    if isinstance(out, Tensor):
        out = out.array
    return out, _zeros((k,) + _shape(out), out)


class Forward(Differentiator):
    """Forward mode with dual numbers.

    Parameters
    ----------
    chunk_size : how many tangent directions to push through f per pass.
        None: all n at once (one pass for a Jacobian of Rⁿ → Rᵐ); smaller
        chunks trade passes for memory.

    Hessians are computed with nested (tagged) duals: the Jacobian of the
    Jacobian, exact to rounding.
    """

    name = "forward"

    def __init__(self, chunk_size: int | None = None) -> None:
        if chunk_size is not None and chunk_size < 1:
            raise ValueError(f"chunk_size must be a positive integer or None, got {chunk_size}")
        self.chunk_size = chunk_size

    def _jacobian(self, f: Callable, args: list, i: int, cost: Cost,
                  require_scalar: bool) -> tuple[Any, Any]:
        x = args[i]
        n = int(np.prod(_shape(x), dtype=int))
        chunk = n if self.chunk_size is None else min(self.chunk_size, max(n, 1))
        blocks, value = [], None
        ops_before = _Stats.ops
        for start in range(0, max(n, 1), max(chunk, 1)):
            stop = min(start + chunk, n)
            tag = new_tag()
            out = f(*with_arg(args, i, seed(x, tag, start, stop)))
            value, t = tangents_of(out, tag, stop - start)
            if require_scalar:
                require_scalar_output(value)
            cost.evaluations += 1
            blocks.append(t)
        cost.add("forward_ops", _Stats.ops - ops_before)
        tangents = blocks[0] if len(blocks) == 1 else np.concatenate(blocks, axis=0)
        # tangents[j] = ∂f/∂x_j; the Jacobian puts the output axes first.
        out_shape = _shape(value)
        J = _reshape(tangents, (n, int(np.prod(out_shape, dtype=int))))
        J = _transpose(J) if isinstance(J, Dual) else F.transpose(J, (1, 0))
        return value, _reshape(J, out_shape + _shape(x))

    def _hessian(self, f: Callable, args: list, i: int, cost: Cost) -> Any:
        """H = J(∇f): forward over forward, the inner pass nested in the outer's duals."""

        def gradient(*inner_args: Any) -> Any:
            value, J = self._jacobian(f, list(inner_args), i, cost, True)
            return _reshape(J, _shape(inner_args[i]))

        return self._jacobian(gradient, args, i, cost, False)[1]

    def _jvp(self, f: Callable, primals: list, tangents: list, cost: Cost) -> tuple[Any, Any]:
        """One pass: every primal carries its tangent, all with the same tag."""
        tag = new_tag()
        duals = [Dual._make(p, _reshape(t, (1,) + _shape(p)), tag)
                 for p, t in zip(primals, tangents)]
        ops_before = _Stats.ops
        value, t = tangents_of(f(*duals), tag, 1)
        cost.evaluations += 1
        cost.add("forward_ops", _Stats.ops - ops_before)
        return value, t[0]


def require_scalar_output(value: Any) -> None:
    require_scalar(value, "grad/hessian")

