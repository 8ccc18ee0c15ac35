r"""Dual numbers: the number type of forward mode.

A dual number is a pair a + ȧ·ε with ε² = 0.  Taylor's theorem gives

    f(a + ȧ ε) = f(a) + f'(a) ȧ ε        (every higher term has ε² = 0)

so pushing a dual number through f computes the value f(a) *and* the
directional derivative f'(a)·ȧ in one pass.  Every operation on dual numbers
is a primitive of the registry (:mod:`difflab.ops.registry`): its ``forward``
gives the value, its ``jvp`` the tangent (``_push`` does both), so

    ẏ = f'(x) · ẋ,        ż = ∂z/∂a · ȧ + ∂z/∂b · ḃ,     ẏ = Σ ẋ, ...

come from the same rules the tape reads backwards.  :class:`Forward`
(in :mod:`difflab.diff.forward`) is the differentiator built on them.

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

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from difflab import backend, numpy_protocol
from difflab import functions as F
from difflab.diff.constants import Constant, constant_values  # noqa: F401  (re-exported)
from difflab.diff.tags import (  # noqa: F401  (new_tag: re-exported)
    ENDED,
    VALUES_READABLE,
    new_tag,
    readable_values_of,
)
from difflab.functions import TypeHandler, register_type
from difflab.ops import registry
from difflab.ops.registry import Context
from difflab.tensor import Tensor
from difflab.tensor_arguments import index_arrays


class _Stats:
    """Counts operations on dual numbers (read by :class:`Forward` for its cost report)."""

    ops = 0


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


def _plain_index(index: Any) -> Any:
    """An index with dual numbers' primals and tensors' arrays in it: NumPy reads a
    one-element tensor as an integer (``__index__``), which would drop its axis
    (``x[:, tensor([0])]`` must keep it, as ``index_select`` of one row does)."""
    index = tuple(_strip(i) for i in index) if isinstance(index, tuple) else _strip(index)
    return index_arrays(index)


def _namespace(*values: Any) -> Any:
    """Where the rules should look for ``sin``, ``sum``, ...: NumPy/CuPy for plain arrays;
    difflab's dispatching functions when a value is itself a Dual or a Tensor."""
    xp = backend.numpy_namespace
    for v in values:
        if v is None or type(v) is np.ndarray:  # (the common case, checked first)
            continue
        if isinstance(v, (Dual, Tensor)):
            return F
        if hasattr(v, "shape"):
            xp = backend.array_module(v)
    return xp


def _zeros(shape: tuple, like: Any) -> Any:
    xp = backend.array_module(_innermost(like))
    return xp.zeros(shape)


def _reshape(t: Any, shape: tuple) -> Any:
    if _shape(t) == tuple(shape):
        return t
    return t.reshape(tuple(shape))


def _top_tag(*values: Any) -> int:
    tag = -1
    for v in values:
        if isinstance(v, Dual) and v.tag > tag:
            tag = v.tag
    return tag


def _count(x: Any) -> int:
    return x.tangents.shape[0]


# --------------------------------------------------------------- one primitive, pushed


def _push(op: Any, *inputs: Any, **params: Any) -> Dual:
    """Run a primitive of the registry on dual numbers.

    Its ``forward`` computes the value from the primals; its ``jvp`` pushes
    the k tangents through, ẏ = J·ẋ for each direction.  Inputs of an older
    tag (or plain values) are constants at this tag: their tangent is None.
    """
    tag = _top_tag(*inputs)
    primals, tangents = [], []
    for v in inputs:
        if isinstance(v, Dual) and v.tag == tag:
            primals.append(v.primal)
            tangents.append(v.tangents)
        else:  # a constant; a Tensor no backward pass needs (dl.tensor(-inf)) is its array
            primals.append(v.array if isinstance(v, Tensor) and not v.requires_grad else v)
            tangents.append(None)
    ctx = Context(needs_input_grad=tuple(t is not None for t in tangents))
    xp = _namespace(*primals, *tangents)  # (difflab's functions if any is a Dual or Tensor)
    y = op.forward(ctx, xp, *primals, **params)
    if getattr(getattr(y, "dtype", None), "kind", "") == "c":
        raise NotImplementedError(
            f"forward mode (dual numbers) does not follow complex values: '{op.name}' gave "
            f"a complex result, and the JVP of a primitive that is not holomorphic (abs, "
            f"real, angle) would be wrong on it. Use reverse mode (method='reverse', "
            f"jacrev, backward()), which follows complex values as PyTorch does")
    dy = op.jvp(ctx, xp, *tangents, *ctx.saved)
    return Dual._make(y, dy, tag)


P = registry.PRIMITIVES


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

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.Dual(2.0, 1.0)                   # x = 2, dx = 1
    >>> y = dl.sin(x) * x
    >>> round(float(y.primal), 6), round(float(y.tangent), 6)   # sin 2 · 2, (x sin x)'
    (1.818595, 0.077004)
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
                tangents = F.broadcast_to(_reshape(tangent, (1,) + _shape(tangent)), (1,) + shape)
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
    def live(self) -> bool:
        """Whether its derivative is running (a ``forward_ad`` level ends it)."""
        return self.tag not in ENDED

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
    def device(self) -> Any:
        """Where the values live: the primal's device (as ``Tensor.device``)."""
        return backend.device_of(_innermost(self.primal))

    @property
    def T(self) -> Dual:  # noqa: N802
        return _transpose(self)

    @property
    def mT(self) -> Dual:  # noqa: N802
        """The last two dims swapped (``Tensor.mT``, NumPy's ``ndarray.mT``)."""
        return _swapaxes(self, -2, -1)

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
        if self.tag in VALUES_READABLE:
            return float(self.primal)
        raise TypeError(
            "float() of a Dual would drop its derivative. Use difflab's math functions "
            "(dl.sin, dl.exp, ...) instead of math.*, or read .primal explicitly."
        )

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if self.tag in VALUES_READABLE:  # (a PyTorch dual tensor's values, as there)
            values = readable_values_of(self)
            return np.asarray(values.array if isinstance(values, Tensor) else values, dtype=dtype)
        raise TypeError(
            "a Dual cannot become a plain array: that would drop its tangents. Read "
            ".primal (the values) or .tangents (the derivatives)."
        )

    def item(self) -> Any:
        if self.tag in VALUES_READABLE:
            return readable_values_of(self).item()
        raise TypeError("item() of a Dual would drop its derivative; read .primal.item()")

    def __bool__(self) -> bool:
        return bool(_strip(self.primal))

    def __setitem__(self, index: Any, value: Any) -> None:
        """``x[index] = v``, as on a tensor: the ``index_put`` primitive (its tangent is
        ẋ with v̇ written in), whose result this dual number becomes.  Values taken from
        x before (``x[0:2]``) are copies, not views: they keep what they had."""
        index = _plain_index(index)
        result = _push(P["index_put"], self, value, index=index)
        self.primal, self.tangents, self.tag = result.primal, result.tangents, result.tag

    # -- arithmetic: the registry's primitives ----------------------------------------
    def __add__(self, other: Any) -> Dual:
        return _push(P["add"], self, other)

    def __radd__(self, other: Any) -> Dual:
        return _push(P["add"], other, self)

    def __sub__(self, other: Any) -> Dual:
        return _push(P["sub"], self, other)

    def __rsub__(self, other: Any) -> Dual:
        return _push(P["sub"], other, self)

    def __mul__(self, other: Any) -> Dual:
        return _push(P["mul"], self, other)

    def __rmul__(self, other: Any) -> Dual:
        return _push(P["mul"], other, self)

    def __truediv__(self, other: Any) -> Dual:
        return _push(P["div"], self, other)

    def __rtruediv__(self, other: Any) -> Dual:
        return _push(P["div"], other, self)

    def __pow__(self, other: Any) -> Dual:
        return _push(P["pow"], self, other)

    def __rpow__(self, other: Any) -> Dual:
        return _push(P["pow"], other, self)

    def __matmul__(self, other: Any) -> Dual:
        return _push(P["matmul"], self, other)

    def __rmatmul__(self, other: Any) -> Dual:
        return _push(P["matmul"], other, self)

    def __mod__(self, other: Any) -> Dual:
        return _push(P["remainder"], self, other)

    def __rmod__(self, other: Any) -> Dual:
        return _push(P["remainder"], other, self)

    # a rounded quotient is constant almost everywhere: its value alone, as a comparison's
    def __floordiv__(self, other: Any) -> Any:
        return _strip(self) // _strip(other)

    def __rfloordiv__(self, other: Any) -> Any:
        return _strip(other) // _strip(self)

    def __neg__(self) -> Dual:
        return _push(P["neg"], self)

    def __pos__(self) -> Dual:
        return self

    def __abs__(self) -> Dual:
        return _push(P["abs"], self)

    # comparisons look at values only: control flow follows the path taken
    def __lt__(self, other: Any) -> Any:
        return constant_values(_strip(self) < _strip(other))

    def __le__(self, other: Any) -> Any:
        return constant_values(_strip(self) <= _strip(other))

    def __gt__(self, other: Any) -> Any:
        return constant_values(_strip(self) > _strip(other))

    def __ge__(self, other: Any) -> Any:
        return constant_values(_strip(self) >= _strip(other))

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        return constant_values(_strip(self) == _strip(other))

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        return constant_values(_strip(self) != _strip(other))

    # -- array methods: NumPy's names, mapped onto primitives below ---------------------
    def __getitem__(self, index: Any) -> Dual:
        index = _plain_index(index)
        return _push(P["index"], self, index=index)

    def sum(self, axis: Any = None, keepdims: bool = False, **kwargs: Any) -> Dual:
        return _sum(self, kwargs.get("dim", axis), keepdims=kwargs.get("keepdim", keepdims))

    def mean(self, axis: Any = None, keepdims: bool = False, **kwargs: Any) -> Dual:
        return _mean(self, kwargs.get("dim", axis), keepdims=kwargs.get("keepdim", keepdims))

    def max(self, *args: Any, **kwargs: Any) -> Any:
        """``x.max()``, NumPy's ``x.max(axis=..., keepdims=...)``; ``x.max(dim)``,
        ``x.max(other)`` as on a tensor (values and indices; the larger of the two)."""
        return _extreme_method(self, "max", args, kwargs)

    def min(self, *args: Any, **kwargs: Any) -> Any:
        """``x.min()``, NumPy's ``x.min(axis=...)``, or as on a tensor: see :meth:`max`."""
        return _extreme_method(self, "min", args, kwargs)

    def reshape(self, *shape: Any, **kwargs: Any) -> Dual:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        return _push(P["reshape"], self, shape=tuple(shape))

    def transpose(self, *axes: Any) -> Dual:
        """``x.transpose(0, 1)`` swaps two dims, as on a tensor; ``x.transpose()`` and a
        permutation (``x.transpose((1, 0, 2))``) are NumPy's."""
        if numpy_protocol.swaps_two_dims(axes):
            return _swapaxes(self, *axes)
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = axes[0]
        return _transpose(self, tuple(axes) if axes else None)

    def swapaxes(self, a: int, b: int) -> Dual:
        return _swapaxes(self, a, b)

    def squeeze(self, axis: Any = None) -> Dual:
        return _squeeze(self, axis)

    def ravel(self) -> Dual:
        return self.reshape(-1)

    def dot(self, other: Any) -> Dual:
        return _dot(self, other)

    def clip(self, low: Any = None, high: Any = None) -> Dual:
        return _clip(self, low, high)

    def astype(self, dtype: Any, copy: bool = True) -> Dual:
        return _push(P["to_dtype"], self, dtype=np.dtype(dtype))

    def copy(self) -> Dual:
        # a new dual number (assigning into it rebinds its values, never the original's)
        return Dual._make(self.primal, self.tangents, self.tag)

    def detach(self) -> Any:
        """The values without any tangent (every dual layer removed), as ``Tensor.detach``
        cuts a tensor from the tape: a constant (``dl.hypot`` shifts by one).  Values that
        are recorded tensors (reverse over forward) are cut from the tape too: a stop
        stops every derivative around it.  Plain values go through the stop-gradient
        primitive's forward, as ``dl.detach(dual)`` does, so that finite differences around
        this derivative hold them too (``difflab.ops.logic.FrozenStops``)."""
        values = _strip(self)
        if isinstance(values, Tensor):
            return values.detach()
        return _HANDLER.primitive(P["detach"], values)

    @property
    def data(self) -> Any:
        """``Tensor.data``: the values without any tangent, as :meth:`detach`."""
        return self.detach()

    def to(self, *args: Any, **kwargs: Any) -> Dual:
        """``x.to(dtype)``, ``x.to(device)``: as ``Tensor.to`` (the tangents go along)."""
        return numpy_protocol.converted(self, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        # x.exp(), x.sin(), ...: the elementwise primitives as methods, as on arrays
        op = P.get(name)
        if isinstance(op, registry.UnaryOp):
            return lambda: _push(op, self)
        # x.permute(1, 0), x.expand(2, 3), x.clone(), ...: the faces primitives give Tensor
        method = numpy_protocol.method_face(self, name, _HANDLER.primitive)
        if method is not None:
            return method
        raise AttributeError(f"'Dual' object has no attribute {name!r}")

    # -- NumPy protocols -----------------------------------------------------------------
    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        name = ufunc.__name__
        if method != "__call__" or kwargs.get("out") is not None:
            raise TypeError(
                f"numpy.{name}.{method} (or out=) is not supported on Dual numbers: dual arrays "
                f"are immutable values"
            )
        op = registry.by_numpy_name(_UFUNC_ALIASES.get(name, name))
        if op is not None:
            return _push(op, *inputs)
        if name in _UFUNC_COMPOSITE:
            return _UFUNC_COMPOSITE[name](*inputs)
        if name in _UFUNC_CONSTANT:
            # Piecewise constant (sign, floor, comparisons, ...): derivative 0 almost everywhere.
            return ufunc(*(_strip(v) for v in inputs), **kwargs)
        raise numpy_protocol.unsupported(ufunc, "forward mode, on a Dual")

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        impl = _ARRAY_FUNCTIONS.get(func) or numpy_protocol.COMPOSITES.get(func)
        if impl is None:
            raise numpy_protocol.unsupported(func, "forward mode, on a Dual")
        return impl(*args, **kwargs)


def _extreme_method(x: Dual, name: str, args: tuple, kwargs: dict) -> Any:
    """``x.max(...)``/``x.min(...)``: NumPy's (``axis``, ``keepdims``: how the rules call it
    on nested dual numbers), else Tensor's (``x.max(1)`` is (values, indices) in f, as in
    reverse mode; NumPy's would read 1 as an axis and give the values alone)."""
    if args or not set(kwargs) <= {"axis", "keepdims", "out"}:
        return numpy_protocol.method_face(x, name, _HANDLER.primitive)(*args, **kwargs)
    return _extreme(x, kwargs.get("axis"), keepdims=kwargs.get("keepdims", False),
                    largest=name == "max")


class _DualHandler(TypeHandler):
    """How ``difflab.sin(dual)`` and friends reach the registry's primitives."""

    def unary(self, op: Any, x: Any) -> Any:
        return _push(op, x)

    def binary(self, op: Any, a: Any, b: Any) -> Any:
        return _push(op, a, b)

    def where(self, cond: Any, a: Any, b: Any) -> Any:
        return _where(cond, a, b)

    def values(self, x: Any) -> Any:
        """The innermost values (a nested Dual's too): the tangents dropped, as a
        piecewise-constant function of them has derivative 0."""
        return _innermost(x)

    def primitive(self, op: Any, *inputs: Any, **params: Any) -> Any:
        if op.zero_derivative:  # an index, a mask, a count, a rounding: on the values
            plain = [_innermost(v) for v in inputs]
            xp = backend.array_module(next((v for v in plain if hasattr(v, "shape")), 0.0))
            return constant_values(op.forward(Context(), xp, *plain, **params))
        return _push(op, *inputs, **params)


_HANDLER = _DualHandler()
register_type(Dual, _HANDLER)


# ----------------------------------------------- NumPy's functions, onto the primitives

# The ufunc tables are shared with Tensor's protocol (difflab.numpy_protocol): aliases of
# primitives' names, ufuncs composed of primitives, and those without a derivative.
_UFUNC_ALIASES = numpy_protocol.UFUNC_ALIASES
_UFUNC_COMPOSITE: dict[str, Callable] = {
    **numpy_protocol.UFUNC_COMPOSITES,
    "matmul": lambda a, b: _push(P["matmul"], a, b),  # a generalized ufunc since NumPy 2
}
_UFUNC_CONSTANT = numpy_protocol.UFUNC_NO_DERIVATIVE

_ARRAY_FUNCTIONS: dict[Callable, Callable] = {}


def _implements(*numpy_functions: Callable) -> Callable:
    def register(impl: Callable) -> Callable:
        for f in numpy_functions:
            _ARRAY_FUNCTIONS[f] = impl
        return impl

    return register


def _numpy_face(op: Any) -> None:
    """``np.<f>(dual, ...)`` for a primitive that mirrors NumPy's ``f`` (``numpy_function``):
    the call read by its ``numpy_arguments``, then the primitive pushed."""
    if op.numpy_function is None:
        return

    def push(*args: Any, **kwargs: Any) -> Dual:
        inputs, params = op.numpy_arguments(*args, **kwargs)
        return _push(op, *inputs, **params)

    _ARRAY_FUNCTIONS[op.numpy_function] = push


registry.on_register(_numpy_face)


def _axes(axis: Any, ndim: int) -> tuple | None:
    if axis is None:
        return None
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(a % max(ndim, 1) for a in axes)


def _size(x: Dual, axes: tuple | None) -> int:
    return x.size if axes is None else int(np.prod([x.shape[a] for a in axes], dtype=int))


@_implements(np.sum)
def _sum(x: Dual, axis: Any = None, dtype: Any = None, out: Any = None,
         keepdims: bool = False, **_: Any) -> Dual:
    return _push(P["sum"], x, axis=axis, keepdims=keepdims)


@_implements(np.mean)
def _mean(x: Dual, axis: Any = None, dtype: Any = None, out: Any = None,
          keepdims: bool = False, **_: Any) -> Dual:
    """mean = Σ x / n."""
    axes = _axes(axis, x.ndim)
    return _sum(x, axes, keepdims=keepdims) * (1.0 / _size(x, axes))


def _extreme(x: Dual, axis: Any = None, out: Any = None, keepdims: bool = False,
             largest: bool = True, **_: Any) -> Dual:
    """max/min = Σ x · w, the weights w marking the extreme (shared evenly on ties)."""
    axes = _axes(axis, x.ndim)
    plain = _strip(x)
    xp = backend.array_module(_innermost(x))
    best = (xp.max if largest else xp.min)(plain, axis=axes, keepdims=True)
    at_best = plain == best
    weights = at_best / at_best.sum(axis=axes, keepdims=True)
    # where(), not x·w: an entry of -inf (a masked score) times its weight 0 would be NaN
    return _sum(_where(at_best, x * weights, 0.0), axes, keepdims=keepdims)


@_implements(np.max, np.amax)
def _max(x: Dual, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Dual:
    return _extreme(x, axis, keepdims=keepdims, largest=True)


@_implements(np.min, np.amin)
def _min(x: Dual, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Dual:
    return _extreme(x, axis, keepdims=keepdims, largest=False)


@_implements(np.reshape)
def _np_reshape(x: Dual, newshape: Any = None, order: str = "C", *, shape: Any = None,
                **_: Any) -> Dual:
    shape = newshape if shape is None else shape
    return x.reshape((shape,) if isinstance(shape, int) else tuple(shape))


@_implements(np.transpose)
def _transpose(x: Dual, axes: Any = None) -> Dual:
    n = x.ndim
    axes = tuple(range(n - 1, -1, -1)) if axes is None else tuple(a % n for a in axes)
    return _push(P["permute"], x, axes=axes)


@_implements(np.swapaxes)
def _swapaxes(x: Dual, axis1: int, axis2: int) -> Dual:
    axes = list(range(x.ndim))
    a, b = axis1 % x.ndim, axis2 % x.ndim
    axes[a], axes[b] = axes[b], axes[a]
    return _transpose(x, tuple(axes))


@_implements(np.expand_dims)
def _expand_dims(x: Dual, axis: Any) -> Dual:
    shape = list(x.shape)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    n = x.ndim + len(axes)
    for a in sorted(a % n for a in axes):
        shape.insert(a, 1)
    return x.reshape(tuple(shape))


@_implements(np.squeeze)
def _squeeze(x: Dual, axis: Any = None) -> Dual:
    axes = _axes(axis, x.ndim)
    return x.reshape(tuple(
        n for i, n in enumerate(x.shape) if not (n == 1 and (axes is None or i in axes))
    ))


@_implements(np.broadcast_to)
def _broadcast_to(x: Dual, shape: Any, subok: bool = False) -> Dual:
    return _push(P["expand"], x, shape=(shape,) if isinstance(shape, int) else tuple(shape))


@_implements(np.concatenate)
def _concatenate(arrays: Sequence[Any], axis: int = 0, **_: Any) -> Dual:
    return _push(P["cat"], *arrays, axis=axis % len(_shape(arrays[0])))


@_implements(np.stack)
def _stack(arrays: Sequence[Any], axis: int = 0, **_: Any) -> Dual:
    axis = axis % (len(_shape(arrays[0])) + 1)
    expanded = [
        _expand_dims(a, axis) if isinstance(a, Dual) else F.expand_dims(a, axis) for a in arrays
    ]
    return _concatenate(expanded, axis)


@_implements(np.where)
def _where(cond: Any, a: Any = None, b: Any = None) -> Dual:
    cond = _strip(cond)
    return _push(P["where"], cond.array if isinstance(cond, Tensor) else cond, a, b)


@_implements(np.clip)
def _clip(x: Any, a_min: Any = None, a_max: Any = None, **_: Any) -> Any:
    """clip = where(x < lo, lo, where(x > hi, hi, x)): derivative 1 inside, 0 outside
    (the bounds may be dual numbers too)."""
    if a_max is not None:
        x = _where(_strip(x) > _strip(a_max), a_max, x)
    if a_min is not None:
        x = _where(_strip(x) < _strip(a_min), a_min, x)
    return x


@_implements(np.flip)
def _flip(x: Dual, axis: Any = None) -> Dual:
    for a in range(x.ndim) if axis is None else _axes(axis, x.ndim):
        x = _push(P["flip"], x, axis=a)
    return x


@_implements(np.matmul)
def _matmul(a: Any, b: Any, **_: Any) -> Dual:
    return _push(P["matmul"], a, b)


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
           np.isfinite, np.isnan, np.round, np.around):  # (np.round: the primitive round's)
    _ARRAY_FUNCTIONS[_f] = _constant(_f)


@_implements(np.copy, np.asanyarray)
def _identity(x: Dual, *args: Any, **kwargs: Any) -> Dual:
    return x


# ------------------------------------------------------------ seeding and reading


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


def check_output(value: Any, transform: str) -> None:
    """Refuse an ``f`` that returns a container or None (every differentiator asks)."""
    if isinstance(value, (list, tuple, dict, str)) or value is None:
        raise TypeError(
            f"{transform}: f must return a number or an array, but it returned "
            f"{type(value).__name__}"
        )


def tangents_of(out: Any, tag: int, k: int) -> tuple[Any, Any]:
    """(value, tangents) of f's output at ``tag``; tangents (k, *shape), zeros for a constant."""
    check_output(out, "forward mode")
    if isinstance(out, Tensor):  # (a layer applied to dual numbers returns them in a Tensor)
        out = out.array
    if isinstance(out, Dual) and out.tag == tag:
        return out.primal, out.tangents
    return out, _zeros((k,) + _shape(out), out)
