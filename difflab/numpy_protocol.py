r"""NumPy's dispatch protocols for difflab's values: plain NumPy code, differentiated.

NumPy lets an array-like type take over its functions (NEP 13
``__array_ufunc__`` for ``np.sin``, ``np.add``, ...; NEP 18
``__array_function__`` for ``np.sum``, ``np.stack``, ...), as CuPy and Dask
arrays do.  difflab's values use them so that a function written with NumPy,

    def f(x):
        return np.sum(np.sin(x) * x)

is differentiated by every method: on a ``Tensor`` (reverse and compiled)
each NumPy call becomes the registry's primitive and is recorded on the
tape or in the traced graph; on a ``Dual`` (forward) it is pushed with the
primitive's JVP; on a sympy ``SymbolArray`` (symbolic) it builds the
expression.  The mapping goes through the registry wherever it can:

* a ufunc finds its elementwise primitive by NumPy name
  (:func:`difflab.ops.registry.by_numpy_name`: ``np.arcsin`` is ``asin``);
  a Python operator's ufunc (``np.add``, ``np.less``, ``np.matmul``) is the
  value's own operator, so ``array + tensor`` is ``tensor.__radd__(array)``
  exactly as before; the few ufuncs built from others (``square``,
  ``exp2``, ``hypot``) are :data:`UFUNC_COMPOSITES`, shared by every type;
* a primitive that mirrors a NumPy function declares it
  (``Primitive.numpy_function``, read with ``numpy_arguments``): one face
  for ``Dual`` and ``Tensor`` alike;
* the rest of NumPy's array functions are :data:`TENSOR_FUNCTIONS`, each a
  short composition of difflab's own functions.

A NumPy function with no derivative rule is :class:`UnsupportedNumPyFunction`,
one error for every method, naming the function and the ``dl.`` equivalent
when there is one.  It is never converted into a constant silently: that
would give a gradient of zero without a word.  (A tensor that neither
requires grad nor is being traced still falls back to NumPy on its values,
as it always did: nothing is lost there.)

The protocol costs nothing on difflab's own path: ``dl.sin(t)`` and
``t + t`` never go through NumPy; only a call NumPy makes reaches this module.
"""

from __future__ import annotations

import builtins
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from difflab import backend
from difflab import functions as F
from difflab import functions_indexing as FI
from difflab.autograd.engine import GraphRecorder, apply
from difflab.ops import registry
from difflab.tensor import Tensor
from difflab.tensor_arguments import tensor_of, to_arguments


class UnsupportedNumPyFunction(TypeError):
    """A NumPy function was called on a differentiable value but has no derivative rule.

    Raised by every method (forward on ``Dual``, reverse and compiled on
    ``Tensor``, symbolic on sympy values) instead of computing the function
    on plain values, which would turn its result into a constant (a silent
    zero derivative).  The message names the function and the ``dl.``
    function to use instead, or says that difflab has none.

    Examples
    --------
    >>> import numpy as np, difflab as dl
    >>> try:
    ...     dl.grad(lambda x: np.sum(np.fft.fft(x).real), method="reverse")(np.ones(4))
    ... except dl.UnsupportedNumPyFunction as e:
    ...     print(str(e).split(" (")[0], isinstance(e, TypeError))
    numpy.fft.fft has no derivative rule in difflab True
    """


#: NumPy name -> the ``dl.`` function that does the same where the NumPy call cannot be
#: mapped (another signature); otherwise ``dl.<same name>`` is suggested if it exists.
_EQUIVALENTS = {"sort": "sort (values, indices)", "argsort": "argsort", "linalg.norm": "norm",
                "cbrt": "pow(x, 1/3) for x > 0", "tensordot": "einsum",
                "logaddexp": "logsumexp",
                # (np.linalg's functions with other results or signatures than the primitives')
                **{f"linalg.{n}": f"linalg.{n}" for n in (
                    "solve", "slogdet", "qr", "eigh", "eigvalsh", "svd", "pinv", "lstsq",
                    "matrix_power", "matrix_rank", "cond", "multi_dot", "tensorinv",
                    "tensorsolve")}}


def _qualified(func: Any) -> str:
    """``fft.fft`` for np.fft.fft, ``sin`` for np.sin: the name as a user writes it."""
    module = getattr(func, "__module__", "") or ""
    name = getattr(func, "__name__", str(func))
    for sub in ("fft", "linalg", "random", "polynomial"):
        if module.startswith(f"numpy.{sub}") and getattr(getattr(np, sub), name, None) is func:
            return f"{sub}.{name}"
    return name


def unsupported(func: Any, where: str) -> UnsupportedNumPyFunction:
    """The error for NumPy's ``func`` (a function, ufunc or name) called in ``where``
    (``"forward mode, on a Dual"``): names it and points to difflab's equivalent."""
    name = func if isinstance(func, str) else _qualified(func)
    equivalent = _EQUIVALENTS.get(name)
    if equivalent is None and callable(getattr(F, name, None) or getattr(FI, name, None)):
        equivalent = name
    hint = (f"use dl.{equivalent} instead" if equivalent else
            "difflab has no equivalent: write it with supported operations, or use "
            "method='numeric' (finite differences need no rule)")
    return UnsupportedNumPyFunction(
        f"numpy.{name} has no derivative rule in difflab ({where}): {hint}. NumPy functions "
        f"on differentiable values are mapped onto difflab's primitives (np.sin, np.sum, "
        f"np.stack, np.where, np.dot, np.linalg.norm, ...); one without a primitive is refused "
        f"rather than computed as a constant, which would give a derivative of zero."
    )


# ------------------------------------------------ Tensor's methods, for the other types


def method_face(value: Any, name: str, run: Callable) -> Callable | None:
    """``value.<name>`` for a ``Dual`` or a ``SymbolArray``, as ``Tensor.<name>``.

    Where a primitive declares ``Tensor.<name>`` as its face (``permute``, ``expand``,
    ``clone``, ``cumsum``, ...): the call read by the primitive's ``arguments``, then
    ``run(op, *inputs, **params)`` (the type's handler).  Any other method of ``Tensor``
    (``floor``, ``sign``, ``pow``, ``clamp``, ``var``, ``sort``, ...) is Tensor's own
    code run on ``value``: it is written with operations and ``dl.*`` faces, which
    hand a dual number or a sympy expression to its type's handler, so a user's
    ``x.floor()`` is differentiated by every method.  ``None`` for a name ``Tensor``
    has no method of.
    """
    op = registry.by_tensor_method(name)
    if op is None:
        return _tensor_method(value, name)

    def method(*args: Any, **kwargs: Any) -> Any:
        inputs, params = op.arguments(value, *args, **kwargs)
        return run(op, *inputs, **params)

    method.__name__ = name
    return method


def _tensor_method(value: Any, name: str) -> Callable | None:
    """``Tensor.<name>`` bound to ``value`` (see :func:`method_face`); ``None`` for a name
    that is not a method of ``Tensor`` (an attribute, a property, a special method)."""
    function = getattr(Tensor, name, None) if not name.startswith("__") else None
    if not inspect.isfunction(function):
        return None
    op = getattr(function, "elementwise_op", None)
    if op is not None:  # (x.maximum(c): the function, which takes a tensor constant beside
        face = F.ELEMENTWISE[op.name]  # a Dual or symbols; Tensor's promotes their dtypes)
        return lambda *args, **kwargs: face(value, *args, **kwargs)
    kind = type(value).__name__

    def method(*args: Any, **kwargs: Any) -> Any:
        if name.endswith("_"):  # x.add_(1): values of the other types are never written into
            raise TypeError(f"{kind}.{name}() changes a tensor in place; a {kind} is not "
                            f"changed in place: use the method without the underscore "
                            f"(x = x.{name[:-1]}(...)) where there is one")
        try:
            return function(value, *args, **kwargs)
        except AttributeError as exc:  # (x.tolist(), x.backward(): a tensor's storage, tape)
            raise TypeError(f"{kind}.{name}() reads what only a tensor has ({exc}); on a "
                            f"{kind} use difflab's operations, or read its values explicitly "
                            f"(a Dual's .primal)") from exc

    method.__name__ = name
    return method


#: ndarray's methods whose arguments or meaning differ from the tensor's, replaced on a
#: ``SymbolArray`` by Tensor's (:func:`tensor_meanings`): a user's ``x.repeat(2)`` tiles a
#: tensor (ndarray's repeats each element: a silently different function), ``x.var(0,
#: False)`` reads (dim, unbiased), ``x.max(0)`` gives (values, indices) and ``x.max()``
#: sympy's ``Max`` (ndarray's compares the expressions, which have no order), ``x.argmax()``
#: refuses with the reason.
NDARRAY_METHODS_TENSOR_MEANS = ("repeat", "flatten", "var", "std", "sum", "mean", "max", "min",
                                "argmax", "argmin", "round", "conj", "real", "imag")
#: Of those, the properties (ndarray's ``real`` and ``imag`` of an object array read each
#: element's ``.real``, which a sympy expression lacks: ``x.imag`` was silently 0).
_PROPERTIES = ("real", "imag")


def tensor_meanings(cls: type, names: Sequence[str], face: Callable) -> None:
    """Make ``cls.<name>`` (for each of ``names``) ``face(value, name)``, the type's
    :func:`method_face`, replacing a method ``cls`` inherits (ndarray's ``repeat``, ``var``,
    ``sum``) whose arguments or meaning differ from the tensor's (``x.var(0, False)``
    reads (dim, unbiased); ``x.repeat(2)`` tiles)."""
    for name in names:
        if name in _PROPERTIES:  # (z.real: the function difflab.real of the value)
            setattr(cls, name, property(lambda self, name=name: getattr(F, name)(self),
                                        doc=f"``x.{name}`` as on a tensor."))
            continue

        def method(self: Any, *args: Any, name: str = name, **kwargs: Any) -> Any:
            return face(self, name)(*args, **kwargs)

        method.__name__ = name
        method.__doc__ = f"``x.{name}(...)`` as on a tensor (:meth:`difflab.Tensor.{name}`)."
        setattr(cls, name, method)


def swaps_two_dims(axes: tuple) -> bool:
    """Whether ``value.transpose(*axes)`` on a ``Dual`` or a ``SymbolArray`` is Tensor's
    (two dims: swap them, as ``x.transpose(0, 1)`` in f written for tensors means) rather
    than NumPy's (none: reverse them; a permutation).  The two differ only where NumPy
    would read ``(0, 1)`` of a matrix as the identity permutation."""
    return len(axes) == 2 and all(isinstance(a, (int, np.integer)) for a in axes)


def converted(value: Any, *args: Any, **kwargs: Any) -> Any:
    """``value.to(...)`` for a ``Dual`` or a ``SymbolArray`` as for a tensor: ``to(device)``,
    ``to(dtype)``, ``to(device, dtype)``, ``to(tensor)``, through the primitives' faces."""
    device, dtype = to_arguments(args, kwargs)
    if device is not None:
        value = F.to_device(value, device)
    # (symbols' dtype is object whatever they are: a truth value among them, x > 0, is made
    # the number 1 or 0 by the conversion, so it is done even to the same dtype)
    if dtype is not None and (np.dtype(dtype) != value.dtype or value.dtype.kind == "O"):
        value = F.astype(value, dtype)
    return value


# ---------------------------------------------------------------- ufuncs, for every type

#: ufuncs whose NumPy name differs from their primitive's.
UFUNC_ALIASES = {"true_divide": "divide", "float_power": "power", "fmax": "maximum",
                 "fmin": "minimum", "gammaln": "lgamma", "psi": "digamma",
                 "j0": "bessel_j0", "j1": "bessel_j1", "k0e": "scaled_modified_bessel_k0",
                 "k1e": "scaled_modified_bessel_k1"}  # (scipy.special's ufuncs)


def _log_base(base: float) -> Callable:
    scale = 1.0 / np.log(base)
    return lambda x: F.log(x) * scale


def frexp_parts(x: Any) -> tuple:
    """``(mantissa, exponent)`` with ``x = mantissa · 2**exponent``, ``0.5 <= |mantissa| < 1``.

    The exponent is read from the values (the primitive ``frexp_exponent``, which has
    no derivative); the mantissa is ``x · 2**-exponent``, exact, with the derivative
    ``2**-exponent``.  ``2**-exponent`` is applied in two halves, so that neither
    overflows for the largest numbers (exponent 1024) nor the subnormal ones (-1073).
    """
    exponent = F.bind(registry.PRIMITIVES["frexp_exponent"], x)
    half = -(exponent // 2)
    scale = [2.0 ** F.astype(k, x.dtype) for k in (half, -exponent - half)]  # (in x's dtype)
    return x * scale[0] * scale[1], exponent


#: ufuncs built from primitives (written with ``dl.`` functions and operators, so they
#: serve ``Dual`` and ``Tensor`` alike).
UFUNC_COMPOSITES: dict[str, Callable] = {
    "frexp": frexp_parts,
    "square": lambda x: x * x,
    "reciprocal": lambda x: 1.0 / x,
    "positive": lambda x: x,
    "conjugate": lambda x: x,
    "exp2": lambda x: 2.0**x,
    "log2": _log_base(2.0),
    "log10": _log_base(10.0),
    "hypot": lambda a, b: F.sqrt(a * a + b * b),
    "zeta": lambda s, q: F.zeta(s, q),  # (scipy.special's: the primitive, as for polygamma)
    "_zeta": lambda s, q: F.zeta(s, q),  # (scipy.special.zeta's ufunc, scipy >= 1.15)
    "gammainc": lambda a, x: F.gammainc(a, x),
    "gammaincc": lambda a, x: F.gammaincc(a, x),
    # rounded towards 0: ⌈x⌉ below 0, ⌊x⌋ above (as dl.trunc), a zero derivative
    "trunc": lambda x: F.where(x < 0, F.ceil(x), F.floor(x)),
}


#: ufuncs constant almost everywhere (a derivative of 0 is right): computed on the values.
UFUNC_NO_DERIVATIVE = {
    "sign", "heaviside", "floor", "ceil", "rint", "trunc", "signbit", "isfinite", "isnan",
    "isinf", "greater", "greater_equal", "less", "less_equal", "equal", "not_equal",
    "logical_and", "logical_or", "logical_not", "logical_xor", "floor_divide",
}
#: NumPy's name of a ufunc without a derivative -> its primitive's, where they differ.
UFUNC_NO_DERIVATIVE_PRIMITIVES = {"rint": "round", "invert": "bitwise_not"}

#: ufuncs that are Python operators: (the operator, its reflection), so that
#: ``np.add(array, tensor)`` is ``tensor.__radd__(array)``, what ``array + tensor`` was.
_OPERATORS = {
    "add": ("__add__", "__radd__"), "subtract": ("__sub__", "__rsub__"),
    "multiply": ("__mul__", "__rmul__"), "divide": ("__truediv__", "__rtruediv__"),
    "true_divide": ("__truediv__", "__rtruediv__"), "power": ("__pow__", "__rpow__"),
    "matmul": ("__matmul__", "__rmatmul__"), "floor_divide": ("__floordiv__", "__rfloordiv__"),
    "remainder": ("__mod__", "__rmod__"), "less": ("__lt__", "__gt__"),
    "less_equal": ("__le__", "__ge__"), "greater": ("__gt__", "__lt__"),
    "greater_equal": ("__ge__", "__le__"), "equal": ("__eq__", "__eq__"),
    "not_equal": ("__ne__", "__ne__"), "bitwise_and": ("__and__", "__rand__"),
    "bitwise_or": ("__or__", "__ror__"), "bitwise_xor": ("__xor__", "__rxor__"),
    "negative": ("__neg__", None), "absolute": ("__abs__", None),
    "invert": ("__invert__", None),
}

#: The types a Tensor's protocol works with; anything else (a Dual) answers for itself.
_PLAIN = (Tensor, np.ndarray, np.generic, int, float, bool, complex, list, tuple)


def _plain(value: Any) -> bool:
    """A value a Tensor's protocol computes with (a device array too: CuPy defers to the
    Tensor's operators for ``device_array * tensor``, as NumPy does); not an array type
    with a protocol of its own (sympy's ``SymbolArray``: it answers for itself)."""
    return _plain_type(type(value))


def _plain_type(cls: type) -> bool:
    if issubclass(cls, np.ndarray):
        return cls.__array_ufunc__ is np.ndarray.__array_ufunc__
    return issubclass(cls, _PLAIN) or backend.is_gpu_array_type(cls)


def _tracked(values: Sequence[Any]) -> bool:
    """Whether computing on the plain values would lose something: a tensor requires grad,
    or a graph is being traced (the value would be baked in as a constant)."""
    return GraphRecorder.active is not None or builtins.any(
        isinstance(v, Tensor) and v.requires_grad for v in values)


def tensor_ufunc(ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
    """``Tensor.__array_ufunc__``: ``np.sin(t)``, ``np.add(array, t)``, ``np.maximum(t, 0)``."""
    if not builtins.all(_plain(v) for v in inputs):
        return NotImplemented  # (a Dual among them: its own protocol answers)
    name = ufunc.__name__
    if method != "__call__" or kwargs.get("out") is not None:
        raise UnsupportedNumPyFunction(
            f"numpy.{name}{'' if method == '__call__' else '.' + method}"
            f"{' with out=' if kwargs.get('out') is not None else ''} is not supported on "
            f"Tensors: use the dl. function (dl.sum, dl.cumsum, ...) or write the result to a "
            f"new name instead of into an array"
        )
    kwargs = {k: v for k, v in kwargs.items() if v is not None and k != "casting"}
    if kwargs:
        raise UnsupportedNumPyFunction(
            f"numpy.{name}({', '.join(kwargs)}=...) is not supported on Tensors; call it "
            f"without those arguments")
    if name in _OPERATORS:
        own, reflected = _OPERATORS[name]
        if isinstance(inputs[0], Tensor) or reflected is None:
            return getattr(inputs[0], own)(*inputs[1:])
        return getattr(inputs[1], reflected)(inputs[0])
    op = registry.by_numpy_name(UFUNC_ALIASES.get(name, name))
    if op is not None:
        return F.ELEMENTWISE[op.name](*inputs)
    if name in UFUNC_COMPOSITES:
        return UFUNC_COMPOSITES[name](*inputs)
    no_derivative = registry.PRIMITIVES.get(UFUNC_NO_DERIVATIVE_PRIMITIVES.get(name, name))
    if name in UFUNC_NO_DERIVATIVE and no_derivative is not None:
        return apply(no_derivative, *(tensor_of(v) for v in inputs))
    if not _tracked(inputs):
        # no derivative to lose (a constant tensor: what method="numeric" hands f): NumPy
        # on the values, as np.<function> on such a tensor does (tensor_function)
        return tensor_of(ufunc(*(v.array if isinstance(v, Tensor) else v for v in inputs)))
    raise unsupported(ufunc, "on a Tensor: reverse mode, or a traced graph")


def tensor_function(func: Callable, types: Sequence[type], args: tuple, kwargs: dict) -> Any:
    """``Tensor.__array_function__``: ``np.sum(t, axis=0)``, ``np.stack([t, 2 * t])``, ..."""
    if not builtins.all(_plain_type(t) for t in types):
        return NotImplemented
    impl = TENSOR_FUNCTIONS.get(func)
    if impl is not None:
        return impl(*args, **kwargs)
    if not _tracked(_flat_values(args, kwargs)):
        # no derivative to lose: NumPy on the values, as before the protocol
        return func._implementation(*args, **kwargs)
    raise unsupported(func, "on a Tensor: reverse mode, or a traced graph")


def _flat_values(args: tuple, kwargs: dict) -> list:
    values = []
    for a in (*args, *kwargs.values()):
        values.extend(a if isinstance(a, (list, tuple)) else (a,))
    return values


# -------------------------------------------- NumPy's functions made of NumPy's functions

#: NumPy functions written with other NumPy functions that have primitives: each call
#: below dispatches again, on whatever type the values are (Tensor, Dual), so the one
#: definition serves every method.
COMPOSITES: dict[Callable, Callable] = {}


def _composite(*numpy_functions: Callable) -> Callable:
    def register(impl: Callable) -> Callable:
        for f in numpy_functions:
            COMPOSITES[f] = impl
        return impl

    return register


@_composite(np.outer)
def _outer(a: Any, b: Any, out: Any = None) -> Any:
    """a_i b_j: the vectors as a column and a row, multiplied (broadcast)."""
    return np.multiply(np.reshape(a, (-1, 1)), np.reshape(b, (1, -1)))


@_composite(np.inner, np.vdot)
def _inner(a: Any, b: Any) -> Any:
    """Σ a_i b_i, for vectors (real: vdot is inner)."""
    if np.ndim(a) != 1 or np.ndim(b) != 1:
        raise unsupported("inner/vdot of arrays that are not vectors (use np.einsum)",
                          "on differentiable values")
    return np.sum(np.multiply(a, b))


@_composite(np.trace)
def _trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
           out: Any = None) -> Any:
    """Σ a_ii of a matrix."""
    if offset or (axis1, axis2) != (0, 1) or np.ndim(a) != 2:
        raise unsupported("trace with offset or axes, or of a non-matrix (use np.einsum)",
                          "on differentiable values")
    return np.einsum("ii->", a)


@_composite(np.hstack)
def _hstack(tup: Sequence[Any], **_: Any) -> Any:
    return np.concatenate(list(tup), axis=0 if np.ndim(tup[0]) == 1 else 1)


@_composite(np.vstack)
def _vstack(tup: Sequence[Any], **_: Any) -> Any:
    return np.concatenate([np.reshape(a, (1, -1)) if np.ndim(a) == 1 else a for a in tup])


@_composite(np.diff)
def _diff(a: Any, n: int = 1, axis: int = -1, **_: Any) -> Any:
    """a[1:] - a[:-1] along ``axis``, n times."""
    head = (slice(None),) * (axis % np.ndim(a))
    for _k in range(n):
        a = np.subtract(a[head + (slice(1, None),)], a[head + (slice(None, -1),)])
    return a


def _count(shape: tuple, axis: Any) -> int:
    """How many entries a reduction over ``axis`` of an array of ``shape`` combines."""
    axes = range(len(shape)) if axis is None else (axis,) if isinstance(axis, int) else axis
    return int(np.prod([shape[k] for k in axes], dtype=int))


@_composite(np.var)
def _var(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
         keepdims: bool = False, **_: Any) -> Any:
    """Σ (a - mean)² / (n - ddof)."""
    centred = np.subtract(a, np.mean(a, axis=axis, keepdims=True))
    total = np.sum(np.multiply(centred, centred), axis=axis, keepdims=keepdims)
    return np.divide(total, _count(np.shape(a), axis) - ddof)


@_composite(np.std)
def _std(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
         keepdims: bool = False, **_: Any) -> Any:
    return np.sqrt(_var(a, axis, ddof=ddof, keepdims=keepdims))


@_composite(np.linalg.norm)
def _norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A002
    """The 2-norm √(Σ x²) (Frobenius for a matrix); for vectors also ord = 1 and inf."""
    vector = np.ndim(x) == 1 or isinstance(axis, int)
    if ord in (None, "fro") or ord == 2 and vector:
        return np.sqrt(np.sum(np.multiply(x, x), axis=axis, keepdims=keepdims))
    if vector and ord == 1:
        return np.sum(np.abs(x), axis=axis, keepdims=keepdims)
    if vector and ord == np.inf:
        return np.max(np.abs(x), axis=axis, keepdims=keepdims)
    raise unsupported(f"linalg.norm(ord={ord!r}) of a matrix", "on differentiable values")


@_composite(np.ravel)
def _ravel(a: Any, order: str = "C") -> Any:
    return np.reshape(a, (-1,))


@_composite(np.expand_dims)
def _expand_dims(a: Any, axis: Any) -> Any:
    shape = list(np.shape(a))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    n = len(shape) + len(axes)
    for k in sorted(k % n for k in axes):
        shape.insert(k, 1)
    return np.reshape(a, tuple(shape))


@_composite(np.squeeze)
def _squeeze(a: Any, axis: Any = None) -> Any:
    shape = np.shape(a)
    axes = None if axis is None else {k % len(shape) for k in np.atleast_1d(axis).tolist()}
    return np.reshape(a, tuple(n for k, n in enumerate(shape)
                               if not (n == 1 and (axes is None or k in axes))))


@_composite(np.swapaxes)
def _swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    order = list(range(np.ndim(a)))
    i, j = axis1 % len(order), axis2 % len(order)
    order[i], order[j] = order[j], order[i]
    return np.transpose(a, order)


@_composite(np.moveaxis)
def _moveaxis(a: Any, source: Any, destination: Any) -> Any:
    n = np.ndim(a)
    src = [k % n for k in ((source,) if isinstance(source, int) else source)]
    dst = [k % n for k in ((destination,) if isinstance(destination, int) else destination)]
    order = [k for k in range(n) if k not in src]
    for d, k in sorted(zip(dst, src)):
        order.insert(d, k)
    return np.transpose(a, order)


# ------------------------------------------------------------ NumPy's functions, on tensors

#: numpy function -> its implementation on tensors (with difflab's own functions).
TENSOR_FUNCTIONS: dict[Callable, Callable] = dict(COMPOSITES)


def _implements(*numpy_functions: Callable) -> Callable:
    def register(impl: Callable) -> Callable:
        for f in numpy_functions:
            TENSOR_FUNCTIONS[f] = impl
        return impl

    return register


def _numpy_face(op: Any) -> None:
    """``np.<f>(tensor, ...)`` for a primitive that mirrors NumPy's ``f``
    (``numpy_function``; the same face forward mode reads)."""
    if op.numpy_function is None:
        return

    def call(*args: Any, **kwargs: Any) -> Tensor:
        inputs, params = op.numpy_arguments(*args, **kwargs)
        return apply(op, *inputs, **params)

    TENSOR_FUNCTIONS[op.numpy_function] = call


registry.on_register(_numpy_face)


def _axes(axis: Any) -> Any:
    return tuple(axis) if isinstance(axis, list) else axis


def _no_extras(name: str, **given: Any) -> None:
    extra = [k for k, v in given.items() if v is not None]
    if extra:
        raise UnsupportedNumPyFunction(
            f"numpy.{name}({', '.join(extra)}=...) is not supported on Tensors; call it "
            f"without {' and '.join(extra)}")


@_implements(np.round, np.around)
def _round(a: Any, decimals: int = 0, out: Any = None) -> Tensor:
    _no_extras("round", out=out)
    return F.round(tensor_of(a), decimals=decimals)


@_implements(np.sum)
def _sum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
         **_: Any) -> Tensor:
    _no_extras("sum", out=out)
    return tensor_of(a).sum(_axes(axis), bool(keepdims), dtype=dtype)


@_implements(np.mean)
def _mean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
          keepdims: bool = False, **_: Any) -> Tensor:
    _no_extras("mean", out=out)
    return tensor_of(a).mean(_axes(axis), bool(keepdims))


@_implements(np.max, np.amax)
def _max(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **_: Any) -> Tensor:
    _no_extras("max", out=out)
    return tensor_of(a).amax(_axes(axis), bool(keepdims))


@_implements(np.min, np.amin)
def _min(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **_: Any) -> Tensor:
    _no_extras("min", out=out)
    return tensor_of(a).amin(_axes(axis), bool(keepdims))


@_implements(np.argmax)
def _argmax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Tensor:
    return tensor_of(a).argmax(axis, bool(keepdims))


@_implements(np.argmin)
def _argmin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Tensor:
    return tensor_of(a).argmin(axis, bool(keepdims))


@_implements(np.dot)
def _dot(a: Any, b: Any, out: Any = None) -> Tensor:
    _no_extras("dot", out=out)
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return tensor_of(a) * b if isinstance(a, Tensor) else tensor_of(b) * a
    if np.ndim(a) > 2 or np.ndim(b) > 2:
        raise unsupported("dot of arrays with more than 2 dimensions (use np.matmul or "
                          "np.einsum)", "on a Tensor")
    return F.matmul(tensor_of(a), b)


@_implements(np.reshape)
def _reshape(a: Any, newshape: Any = None, order: str = "C", *, shape: Any = None,
             **_: Any) -> Tensor:
    shape = newshape if shape is None else shape
    return tensor_of(a).reshape((shape,) if isinstance(shape, int) else tuple(shape))


@_implements(np.transpose)
def _transpose(a: Any, axes: Any = None) -> Tensor:
    a = tensor_of(a)
    return a.permute(*(range(a.ndim - 1, -1, -1) if axes is None else axes))


@_implements(np.broadcast_to)
def _broadcast_to(a: Any, shape: Any, subok: bool = False) -> Tensor:
    return tensor_of(a).expand(*((shape,) if isinstance(shape, int) else shape))


@_implements(np.flip)
def _flip(a: Any, axis: Any = None) -> Tensor:
    a = tensor_of(a)
    axes = range(a.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
    return a.flip(tuple(axes))


@_implements(np.concatenate)
def _concatenate(arrays: Sequence[Any], axis: int = 0, out: Any = None, **_: Any) -> Tensor:
    _no_extras("concatenate", out=out)
    if axis is None:
        return F.cat([tensor_of(a).reshape(-1) for a in arrays], 0)
    return F.cat(list(arrays), axis)


@_implements(np.stack)
def _stack(arrays: Sequence[Any], axis: int = 0, out: Any = None, **_: Any) -> Tensor:
    _no_extras("stack", out=out)
    return F.stack(list(arrays), axis)


@_implements(np.where)
def _where(condition: Any, x: Any = None, y: Any = None) -> Any:
    if x is None and y is None:  # the indices where condition holds: no derivative
        return np.where(np.asarray(tensor_of(condition).detach()))
    return F.where(condition, x, y)


@_implements(np.clip)
def _clip(a: Any, a_min: Any = None, a_max: Any = None, out: Any = None, **kwargs: Any) -> Tensor:
    _no_extras("clip", out=out)
    low, high = kwargs.get("min", a_min), kwargs.get("max", a_max)
    return tensor_of(a).clamp(low, high)


@_implements(np.copy)
def _copy(a: Any, *args: Any, **kwargs: Any) -> Tensor:
    return tensor_of(a).clone()


@_implements(np.zeros_like)
def _zeros_like(a: Any, *args: Any, **kwargs: Any) -> Tensor:
    return F.zeros_like(tensor_of(a))


@_implements(np.ones_like)
def _ones_like(a: Any, *args: Any, **kwargs: Any) -> Tensor:
    return F.ones_like(tensor_of(a))


@_implements(np.shape)
def _shape(a: Any) -> tuple:
    return tuple(tensor_of(a).shape)


@_implements(np.ndim)
def _ndim(a: Any) -> int:
    return tensor_of(a).ndim


@_implements(np.size)
def _size(a: Any, axis: Any = None) -> int:
    a = tensor_of(a)
    return a.numel() if axis is None else a.shape[axis]



# Tensor speaks the two protocols through this module.  tensor.py sits below it and does
# not import it (no import cycle), so the methods are attached when it is imported
# (``import difflab`` does, before any user code runs).
def _tensor_array_ufunc(self: Tensor, ufunc: np.ufunc, method: str, *inputs: Any,
                        **kwargs: Any) -> Any:
    return tensor_ufunc(ufunc, method, *inputs, **kwargs)


def _tensor_array_function(self: Tensor, func: Callable, types: Sequence[type], args: tuple,
                           kwargs: dict) -> Any:
    return tensor_function(func, types, args, kwargs)


Tensor.__array_ufunc__ = _tensor_array_ufunc
Tensor.__array_function__ = _tensor_array_function
