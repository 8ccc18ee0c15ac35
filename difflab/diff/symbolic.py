r"""Symbolic differentiation: trace f into a sympy expression, differentiate, compile.

How it works
------------
1. **Trace.**  f is called once with sympy symbols instead of numbers: a
   scalar argument becomes a real symbol ``x``, an array argument an array
   of symbols ``x_0, x_1, ...`` (a :class:`SymbolArray`, a NumPy object array
   whose elements are sympy expressions).  difflab's math functions route
   sympy values to this module's handler, which runs each primitive's
   ``forward`` from the rule table with a sympy namespace (``sin`` →
   ``sympy.sin``, ``maximum`` → ``sympy.Max``, ``where`` → ``sympy.Piecewise``,
   ...); sympy's operators do ``+ - * / **`` and NumPy does ``@`` and ``sum``
   on object arrays.  The result is f as an expression.
2. **Differentiate** with ``sympy.diff`` (Jacobian or Hessian matrix), then
   optionally ``sympy.simplify``.
3. **Compile** with ``sympy.lambdify`` (NumPy, or CuPy on the GPU), with
   common-subexpression elimination (CSE) so that repeated pieces are
   computed once.  Compiled derivatives are cached per function, input
   shape and constant arguments.

Static versus dynamic graphs
----------------------------
Tracing calls f *once*, with symbols, so the expression must hold for every
input.  Python control flow that depends on the value of the input
(``if x > 0:``, ``while abs(x) > tol:``) has no value to look at: sympy
cannot decide ``x > 0`` for a symbol, and tracing stops with a
:class:`SymbolicTraceError` that explains this.  Forward and reverse mode
have no such problem: they follow the path actually taken for the given x
(a *dynamic* graph), while a symbolic expression is a *static* graph.
Write the branch as data instead: ``dl.where(x > 0, a, b)`` becomes a
Piecewise expression.

Kinks follow the rule table: d|x|/dx = sign(x) (0 at 0), relu'(0) = 0 (relu
is traced as a Piecewise), d max(a, b) = Heaviside(a - b) (½ on ties), and
the DiracDelta sympy returns for the derivative of a step is 0 (the
derivative almost everywhere).

Helpers for showing and measuring (used by the comparison harness)
--------------------------------------------------------------------
``trace(f, *example_args, n_inputs=None) -> (symbols, expression)``
    f as an expression; ``symbols`` holds one symbol (or SymbolArray) per
    argument.  ``trace(f, n_inputs=3)`` traces f(x, y, z) with three scalars.
``expression_size(expr, cse=False) -> {"ops": ..., "tree_size": ...}``
    ``sympy.count_ops`` and the number of nodes of the expression tree(s),
    counted after CSE (replacements plus the reduced expressions) if asked.
``Symbolic().expressions(f, *args, kind="jacobian"|"hessian")``
    a :class:`SymbolicDerivative`: the function and its derivative, shown as
    LaTeX in Jupyter, with ``.size()`` for the measurements.
"""

from __future__ import annotations

import importlib
import operator
import os
import re
import sys
import time
import traceback
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import sympy
from sympy.codegen.cfunctions import expm1 as sympy_expm1
from sympy.codegen.cfunctions import log1p as sympy_log1p

from difflab import backend, numpy_protocol
from difflab import functions as F  # noqa: N812  (the primitives' public faces)
from difflab.diff import sympy_functions as bessel
from difflab.diff.interface import (
    ConstantClosureError,
    Cost,
    Differentiator,
    Enclosing,
    check_output,
    is_plain,
    require_scalar,
)
from difflab.diff.sympy_functions import (
    as_numbers,
    clean_derivative,
    detached,
    fmod,
    gammainc,
    gammaincc,
    isfinite,
    isinf,
    isnan,
    remainder,
    rint,
    trunc,
    truth,
)
from difflab.functions import TypeHandler, register_type
from difflab.ops import registry
from difflab.tensor import Tensor
from difflab.tensor_arguments import NotOneExpression


class SymbolicTraceError(TypeError):
    """f could not be turned into one sympy expression (control flow, or an operation
    sympy cannot represent)."""


# ------------------------------------------------------------------- sympy namespace


class NoSymbolicForm:
    """The result of a primitive that has no value on symbols (``argmax``: an index):
    a stand-in that raises a :class:`SymbolicTraceError` saying so as soon as it is used,
    so that what is computed beside it (``dl.max(x, dim).values``) still traces."""

    def __init__(self, name: str, why: str) -> None:
        self._name, self._why = name, why

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise SymbolicTraceError(f"symbolic: {self._name} has no symbolic form: {self._why}")

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__"):  # (Python's and NumPy's protocol probes)
            raise AttributeError(attribute)
        self._refuse()

    def __repr__(self) -> str:
        return f"<{self._name}: no symbolic form>"

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _refuse
    __truediv__ = __rtruediv__ = __pow__ = __rpow__ = __neg__ = __matmul__ = _refuse
    __rmatmul__ = __getitem__ = __iter__ = __len__ = __bool__ = __index__ = _refuse
    __int__ = __float__ = __array__ = __eq__ = __ne__ = __lt__ = __le__ = _refuse
    __gt__ = __ge__ = _refuse
    __hash__ = None  # type: ignore[assignment]


class _SympyNamespace:
    """NumPy's function names, answered by sympy: what ``xp`` means during a trace."""

    exp, log, sqrt = staticmethod(sympy.exp), staticmethod(sympy.log), staticmethod(sympy.sqrt)
    sin, cos, tan = staticmethod(sympy.sin), staticmethod(sympy.cos), staticmethod(sympy.tan)
    arcsin, arccos = staticmethod(sympy.asin), staticmethod(sympy.acos)
    arctan, arctan2 = staticmethod(sympy.atan), staticmethod(sympy.atan2)
    sinh, cosh, tanh = staticmethod(sympy.sinh), staticmethod(sympy.cosh), staticmethod(sympy.tanh)
    arcsinh, arccosh = staticmethod(sympy.asinh), staticmethod(sympy.acosh)
    arctanh = staticmethod(sympy.atanh)
    expm1, log1p = staticmethod(sympy_expm1), staticmethod(sympy_log1p)
    abs, sign, erf = staticmethod(sympy.Abs), staticmethod(sympy.sign), staticmethod(sympy.erf)
    maximum, minimum = staticmethod(sympy.Max), staticmethod(sympy.Min)
    lgamma, digamma = staticmethod(sympy.loggamma), staticmethod(sympy.digamma)
    polygamma, erfc = staticmethod(sympy.polygamma), staticmethod(sympy.erfc)
    erfinv, zeta = staticmethod(sympy.erfinv), staticmethod(sympy.zeta)
    gammainc, gammaincc = staticmethod(gammainc), staticmethod(gammaincc)
    fmod, remainder = staticmethod(fmod), staticmethod(remainder)
    # piecewise constant: the rounding functions, the tests, the relations and logic
    floor, ceil, rint = staticmethod(sympy.floor), staticmethod(sympy.ceiling), staticmethod(rint)
    isnan, isinf, isfinite = staticmethod(isnan), staticmethod(isinf), staticmethod(isfinite)
    equal, not_equal = staticmethod(sympy.Eq), staticmethod(sympy.Ne)
    logical_and, logical_or = staticmethod(sympy.And), staticmethod(sympy.Or)
    logical_xor, logical_not = staticmethod(sympy.Xor), staticmethod(sympy.Not)

    # (stop_gradient: x.detach(), its value with derivative 0)
    truth, trunc, stop_gradient = staticmethod(truth), staticmethod(trunc), staticmethod(detached)

    # (the Bessel functions of order 0 and 1, and the scaled forms, as sympy writes them)
    i0, i1, i0e, i1e = (staticmethod(f) for f in (bessel.i0, bessel.i1, bessel.i0e, bessel.i1e))
    bessel_j0, bessel_j1 = staticmethod(bessel.bessel_j0), staticmethod(bessel.bessel_j1)
    scaled_modified_bessel_k0 = staticmethod(bessel.scaled_modified_bessel_k0)
    scaled_modified_bessel_k1 = staticmethod(bessel.scaled_modified_bessel_k1)
    erfcx = staticmethod(bessel.erfcx)

    @staticmethod
    def elementwise(function: Any, *arrays: Any) -> Any:
        """``function`` of sympy expressions, mapped over object arrays."""
        return _elementwise(function, *arrays)

    @staticmethod
    def reduce(function: Any, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
        """``function(a, b)`` folded over ``axis`` of an object array (all axes for None)."""
        x = np.asarray(x, dtype=object)
        if (ndim := x.ndim) == 0:  # (dim 0 or -1 of one value: itself, as PyTorch reads it)
            return x
        axes = tuple(range(ndim)) if axis is None else tuple(
            a % max(ndim, 1) for a in ((axis,) if isinstance(axis, int) else axis))
        rest = [a for a in range(ndim) if a not in axes]
        moved = np.transpose(x, rest + list(axes))
        flat = moved.reshape(moved.shape[:len(rest)] + (-1,))
        out = np.frompyfunc(function, 2, 1).reduce(flat, axis=-1)
        if keepdims:
            out = np.reshape(out, tuple(1 if a in axes else n for a, n in enumerate(x.shape)))
        return out

    # no_symbolic_form(name, why): what a primitive with no value on symbols gives
    # (argmax's indices); heaviside(x, value_at_zero) as NumPy's
    no_symbolic_form, heaviside = staticmethod(NoSymbolicForm), staticmethod(sympy.Heaviside)

    @staticmethod
    def where(cond: Any, a: Any, b: Any) -> Any:
        return sympy.Piecewise((a, cond), (b, True))


SYMPY = _SympyNamespace()


class SymbolArray(np.ndarray):
    """A NumPy object array of sympy expressions (a vector or matrix of symbols).

    NumPy does indexing, ``+ - * / **``, ``@`` and ``sum`` on it element by
    element; difflab's math functions map over its elements.
    """

    def __new__(cls, elements: Any) -> SymbolArray:
        return np.asarray(elements, dtype=object).view(cls)

    def _repr_latex_(self) -> str:
        return f"$${sympy.latex(sympy.Matrix(np.asarray(self).reshape(self.shape[0], -1)))}$$"

    def __getitem__(self, index: Any) -> Any:
        # one entry stays a (0-d) SymbolArray, so that np.sin(x[0]) reaches the protocol below
        return _wrap(np.asarray(self)[_plain(index)])

    # Tensor's methods: x.permute(1, 0), x.expand(2, 3), x.clone(), x.to(dtype), ...
    def __getattr__(self, name: str) -> Any:
        method = _tensor_face(self, name)
        if method is None:
            raise AttributeError(f"'SymbolArray' object has no attribute {name!r}")
        return method

    @property
    def device(self) -> backend.Device:  # type: ignore[override]
        """Host memory, as ``Tensor.device`` says it (ndarray's is the string ``'cpu'``)."""
        return backend.CPU

    def detach(self) -> SymbolArray:
        """The expressions cut from differentiation (``Tensor.detach``): ``detached``."""
        return _elementwise(detached, self)

    @property
    def data(self) -> SymbolArray:  # type: ignore[override]
        """``Tensor.data``: the expressions cut from differentiation, as :meth:`detach`
        (ndarray's ``data``, the memory buffer, means nothing for expressions)."""
        return self.detach()

    def to(self, *args: Any, **kwargs: Any) -> Any:
        """``x.to(dtype)``, ``x.to(device)``: as ``Tensor.to`` (symbols are unchanged)."""
        return numpy_protocol.converted(self, *args, **kwargs)

    def transpose(self, *axes: Any) -> Any:  # type: ignore[override]
        """``x.transpose(0, 1)`` swaps two dims, as on a tensor; ``x.transpose()`` and a
        permutation (``x.transpose((1, 0, 2))``) are NumPy's."""
        values = np.asarray(self)
        swapped = numpy_protocol.swaps_two_dims(axes)
        return _wrap(np.swapaxes(values, *axes) if swapped else values.transpose(*axes))

    def astype(self, dtype: Any, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        """A float dtype leaves the expressions as they are (a symbol is a real number)."""
        return _wrap(_HANDLER.primitive(registry.get("to_dtype"), self, dtype=np.dtype(dtype)))

    # NumPy's protocols (difflab.numpy_protocol): np.sin(x), np.sum(x, axis=0), np.where, ...
    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return _symbolic_ufunc(ufunc, method, *inputs, **kwargs)

    def __array_function__(self, func: Any, types: Any, args: tuple, kwargs: dict) -> Any:
        if func in _SYMBOLIC_FUNCTIONS:
            return _SYMBOLIC_FUNCTIONS[func](*args, **kwargs)
        if func in _EXACT_ON_OBJECTS:  # NumPy's own loop over the entries is exact
            return _wrap(func(*_plain(args), **_plain(kwargs)))
        raise numpy_protocol.unsupported(func, "symbolic, on sympy expressions")


# ndarray's methods that mean something else on a tensor (x.repeat(2), x.max(0)): Tensor's
numpy_protocol.tensor_meanings(SymbolArray, numpy_protocol.NDARRAY_METHODS_TENSOR_MEANS,
                               lambda value, name: _tensor_face(value, name))


def _tensor_face(value: SymbolArray, name: str) -> Callable | None:
    """``value.<name>`` as on a tensor (``numpy_protocol.method_face``), its result
    expressions a SymbolArray."""
    method = numpy_protocol.method_face(value, name, _HANDLER.primitive)
    return None if method is None else lambda *a, **k: _wrap(method(*a, **k))


def _plain(value: Any) -> Any:
    """SymbolArrays (also inside lists and dicts) as plain object arrays, for NumPy's loops."""
    if isinstance(value, SymbolArray):
        return value.view(np.ndarray)
    if isinstance(value, Tensor):  # a tensor in a symbolic trace: a constant, its values
        return value.array
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _wrap(value: Any) -> Any:
    """A result of NumPy on expressions as a SymbolArray (0-d for one expression); tuples
    and numbers pass through."""
    if isinstance(value, np.ndarray) and value.dtype == object or isinstance(value, sympy.Basic):
        return SymbolArray(value)
    return value


#: ufuncs that NumPy's object loop computes exactly with sympy's own operators.
_OBJECT_UFUNCS = {"add", "subtract", "multiply", "true_divide", "divide", "power", "negative",
                  "positive", "matmul", "conjugate"}
#: comparisons: sympy's relations (x_0 > 1.5), kept as expressions (NumPy's loop would ask
#: for their truth value); np.where makes a Piecewise of them.
_COMPARISONS = {"less": operator.lt, "less_equal": operator.le, "greater": operator.gt,
                "greater_equal": operator.ge, "equal": sympy.Eq, "not_equal": sympy.Ne}


def _symbolic_ufunc(ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
    """``np.<ufunc>`` on expressions: the registry's rule in its sympy form (``np.sin`` is
    ``sympy.sin``), or sympy's operators (``+``, ``*``, ``@``, ``<``)."""
    name = ufunc.__name__
    if kwargs.get("out") is not None:
        raise numpy_protocol.unsupported(f"{name}(out=...)", "symbolic, on sympy expressions")
    if name in _OBJECT_UFUNCS:  # (also sum and cumsum: add.reduce, add.accumulate)
        return _wrap(getattr(ufunc, method)(*as_numbers(_plain(inputs)), **kwargs))
    if method != "__call__":
        raise numpy_protocol.unsupported(f"{name}.{method}", "symbolic, on sympy expressions")
    if name in _COMPARISONS:
        return _elementwise(_COMPARISONS[name], *_plain(inputs))
    op = registry.by_numpy_name(numpy_protocol.UFUNC_ALIASES.get(name, name))
    if op is not None:
        handle = _HANDLER.unary if len(inputs) == 1 else _HANDLER.binary
        return _wrap(handle(op, *_plain(inputs)))
    if name in numpy_protocol.UFUNC_COMPOSITES:
        return numpy_protocol.UFUNC_COMPOSITES[name](*inputs)
    step = registry.PRIMITIVES.get(numpy_protocol.UFUNC_NO_DERIVATIVE_PRIMITIVES.get(name, name))
    if step is not None and step.zero_derivative and step.symbolic is not None:
        return _wrap(_HANDLER.primitive(step, *inputs))  # (np.floor, np.isnan, np.sign, &, ~)
    raise numpy_protocol.unsupported(ufunc, "symbolic, on sympy expressions")


class SymbolicDepthError(SymbolicTraceError, RecursionError):
    """f nests operations deeper than sympy's recursive algorithms can follow."""


def _too_deep(exc: RecursionError, f: Callable, expressions: list | None) -> SymbolicDepthError:
    """Say how deep the expression was when sympy ran out of Python's recursion limit."""
    tb = exc.__traceback__
    while expressions is None and tb is not None:  # what was built when it failed
        frame = tb.tb_frame
        if frame.f_code is _elementwise.__code__:  # tracing f: the operation's operands
            expressions = list(frame.f_locals["operands"])
        elif frame.f_code is Symbolic.expressions.__code__:  # differentiating f
            expressions = frame.f_locals.get("values")
        tb = tb.tb_next
    expressions = [e for x in expressions or [] for e in np.ravel(np.asarray(x, dtype=object))]
    depth, level = 0, {e for e in expressions if isinstance(e, sympy.Basic)}
    while level:  # level by level, without recursion (shared subexpressions once)
        depth += 1
        level = {a for e in level for a in e.args}
    name = getattr(f, "__name__", "f")
    how_deep = f"nested {depth} operations deep or more" if depth else "nested too deep"
    return SymbolicDepthError(
        f"symbolic: {name} builds an expression {how_deep}, "
        f"deeper than sympy can follow within Python's recursion limit "
        f"({sys.getrecursionlimit()}). Use the forward or reverse method for such deep "
        "compositions (they follow the computation step by step)."
    )


def _elementwise(function: Callable, *operands: Any) -> Any:
    # a tensor beside the symbols (dl.maximum(x, dl.tensor(1.0))) is a constant: its values
    operands = tuple(o.array if isinstance(o, Tensor) else o for o in operands)
    if any(isinstance(o, np.ndarray) for o in operands):
        arrays = [np.asarray(o, dtype=object) if isinstance(o, np.ndarray) else o
                  for o in operands]
        return SymbolArray(np.frompyfunc(function, len(operands), 1)(*arrays))
    return function(*operands)


class _SympyHandler(TypeHandler):
    """Builds sympy expressions from the registry's rules (each rule's ``symbolic`` form:
    its forward, written with sympy's functions)."""

    def unary(self, op: Any, x: Any) -> Any:
        return _elementwise(lambda v: op.rule.symbolic(SYMPY, v), x)

    def binary(self, op: Any, a: Any, b: Any) -> Any:
        return _elementwise(lambda u, v: op.rule.symbolic(SYMPY, u, v), a, b)

    def where(self, cond: Any, a: Any, b: Any) -> Any:
        return _elementwise(SYMPY.where, cond, a, b)

    def primitive(self, op: Any, *inputs: Any, **params: Any) -> Any:
        """A structural primitive (``prod``, ``logsumexp``, ``amax``) on expressions: its
        ``symbolic`` form if it has one, else its forward with NumPy on object arrays.
        An elementwise primitive reached this way (Tensor's ``x.exp()`` run on a
        SymbolArray calls ``engine.apply``) is its rule's sympy form, as ``dl.exp(x)``."""
        if isinstance(op, registry.UnaryOp) and len(inputs) == 1 and not params:
            return self.unary(op, *inputs)
        if isinstance(op, registry.BinaryOp) and len(inputs) == 2 and not params:
            return self.binary(op, *inputs)
        arrays = [np.asarray(v, dtype=object) if isinstance(v, (sympy.Basic, np.ndarray))
                  else _plain(v) for v in inputs]  # (a tensor: its values, a constant)
        if op.symbolic is not None:
            out = op.symbolic(SYMPY, *arrays, **params)
        else:
            out = super().primitive(op, *arrays, **params)
        return _expressions_out(out) if isinstance(out, np.ndarray) else out


_HANDLER = _SympyHandler()
register_type(sympy.Basic, _HANDLER)
register_type(SymbolArray, _HANDLER)


# ------------------------------------------------------- NumPy's functions on expressions

#: NumPy functions that only add, multiply or move entries: NumPy's object-array loop runs
#: them on the expressions with sympy's operators, exactly.
_EXACT_ON_OBJECTS = {
    np.sum, np.mean, np.prod, np.cumsum, np.cumprod, np.dot, np.vdot, np.inner, np.outer,
    np.einsum, np.trace, np.reshape, np.ravel, np.transpose, np.swapaxes, np.moveaxis,
    np.expand_dims, np.squeeze, np.broadcast_to, np.flip, np.concatenate, np.stack, np.hstack,
    np.vstack, np.diff, np.copy, np.shape, np.ndim, np.size, np.zeros_like, np.ones_like,
    np.full_like, np.empty_like, np.atleast_1d, np.atleast_2d, np.broadcast_arrays,
    np.result_type, np.tile, np.repeat, np.take, np.roll, np.tril, np.triu, np.diag,
    np.diagonal, np.kron, np.tensordot,
}


def _reduce_with(function: Callable) -> Callable:
    """np.max / np.min: sympy's Max / Min folded along the axes."""
    fold = np.frompyfunc(function, 2, 1)

    def reduce(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
               **_: Any) -> Any:
        x = np.asarray(_plain(a), dtype=object)
        axes = range(x.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
        for k in sorted((k % x.ndim for k in axes), reverse=True):
            x = fold.reduce(x, axis=k, keepdims=True)
        if not keepdims:
            x = x.reshape([n for k, n in enumerate(x.shape) if k not in
                           {k % max(np.ndim(a), 1) for k in axes}])
        return _wrap(x)

    return reduce


def _where(condition: Any, x: Any = None, y: Any = None) -> Any:
    if x is None and y is None:
        raise SymbolicTraceError(
            "symbolic: np.where(condition) with one argument asks which entries are true, "
            "which a symbol cannot answer; use np.where(condition, a, b)")
    return _wrap(_HANDLER.where(*_plain((condition, x, y))))


def _clip(a: Any, a_min: Any = None, a_max: Any = None, **kwargs: Any) -> Any:
    low, high = kwargs.get("min", a_min), kwargs.get("max", a_max)
    a = a if high is None else np.minimum(a, high)
    return a if low is None else np.maximum(a, low)


_SYMBOLIC_FUNCTIONS: dict[Callable, Callable] = {
    np.max: _reduce_with(sympy.Max), np.amax: _reduce_with(sympy.Max),
    np.min: _reduce_with(sympy.Min), np.amin: _reduce_with(sympy.Min),
    np.where: _where, np.clip: _clip,
    np.round: lambda a, decimals=0, out=None: _wrap(F.round(a, decimals=decimals)),
    np.around: lambda a, decimals=0, out=None: _wrap(F.round(a, decimals=decimals)),
    **numpy_protocol.COMPOSITES,  # (np.outer, np.var, np.linalg.norm, ...: NumPy's own calls)
}


def _numpy_face(op: Any) -> None:
    """``np.<f>(symbols)`` for a primitive that mirrors NumPy's ``f`` (``numpy_function``,
    as Tensor and Dual read it: ``np.linalg.inv``, ``np.linalg.det``): its symbolic form.
    NumPy's own exact loops (``np.cumsum``, ``np.einsum``) keep serving the others."""
    face = op.numpy_function
    if face is None or face in _SYMBOLIC_FUNCTIONS or face in _EXACT_ON_OBJECTS:
        return

    def call(*args: Any, **kwargs: Any) -> Any:
        inputs, params = op.numpy_arguments(*args, **kwargs)
        return _HANDLER.primitive(op, *inputs, **params)

    _SYMBOLIC_FUNCTIONS[face] = call


registry.on_register(_numpy_face)


# -------------------------------------------------------------------------- tracing

_NAMES = "xyzw"


def _symbols_like(example: Any, name: str) -> Any:
    shape = np.shape(example)
    if shape == ():
        return sympy.Symbol(name, real=True)
    n = int(np.prod(shape, dtype=int))
    flat = [sympy.Symbol(f"{name}_{k}", real=True) for k in range(n)]
    return SymbolArray(np.array(flat, dtype=object).reshape(shape))


#: Where sympy and NumPy live: their frames are not the user's line an error points to.
_LIBRARIES = tuple(os.path.dirname(m.__file__) for m in (sympy, np))


def _explain(exc: Exception, f: Callable) -> SymbolicTraceError:
    """Turn a failure inside the trace into an error that says what happened and why."""
    message = str(exc)
    name = getattr(f, "__name__", "f")
    if isinstance(exc, NotOneExpression):  # (a face's own refusal: its reason, as it is)
        return SymbolicTraceError(f"symbolic: cannot trace {name}: {message}")
    if "truth value" in message or isinstance(exc, TypeError) and "Relational" in message:
        return SymbolicTraceError(
            f"symbolic: cannot trace {name}: its Python control flow depends on the value of "
            f"its input (an `if`, `while`, `and`/`or`, min()/max() or comparison on x). "
            f"Symbolic differentiation calls {name} once, with symbols, to build ONE "
            f"expression valid for every x, so there is no value to branch on: a static "
            f"graph. Forward and reverse mode follow the branch actually taken for the given "
            f"x (a dynamic graph) and work here. To trace it, write the branch as data: "
            f"dl.where(x > 0, a, b) (a sympy Piecewise). [{message}]"
        )
    operation = None
    match = re.search(r"no callable (\w+) method", message)
    if match:
        operation = f"numpy.{match.group(1)}"
    line = ""
    frames = [fr for fr in traceback.extract_tb(exc.__traceback__)
              if not fr.filename.startswith(_LIBRARIES)]
    if frames:
        last = frames[-1]
        line = f" (in {last.name}, line {last.lineno}: `{(last.line or '').strip()}`)"
        if operation is None and last.line:
            operation = last.line.strip()
    return SymbolicTraceError(
        f"symbolic: sympy cannot represent an operation of {name}: "
        f"{operation or type(exc).__name__}{line}. Use difflab's math functions (dl.sin, "
        f"dl.exp, dl.where, ...) on the input instead of math.*, float() or NumPy functions "
        f"without a sympy counterpart. [{type(exc).__name__}: {message}]"
    )


def trace(f: Callable, *example_args: Any, n_inputs: int | None = None,
          argnums: Sequence[int] | None = None) -> tuple[list, Any]:
    """Call f once with sympy symbols: ``(symbols, expression)``.

    Parameters
    ----------
    example_args : values whose shapes decide the symbols (a scalar gives one symbol,
        an array an array of symbols).
    n_inputs : instead of examples, trace f with this many scalar symbols.
    argnums : which arguments become symbols (default: all); the others are passed
        through unchanged, as constants of the expression.
    """
    if n_inputs is not None:
        example_args = (0.0,) * n_inputs
    nums = range(len(example_args)) if argnums is None else argnums
    args, symbols = list(example_args), []
    primes = "′" * Enclosing.symbolic  # (a trace inside a trace: primed names)
    for k in nums:
        name = _NAMES[k] if len(example_args) <= len(_NAMES) else f"a{k}"
        symbols.append(_symbols_like(example_args[k], name + primes))
        args[k] = SymbolArray(symbols[-1])  # (a scalar too, 0-d: np.sin(x) reaches the rules)
    Enclosing.symbolic += 1
    try:
        out = f(*args)
        if isinstance(out, SymbolArray) and out.ndim == 0:
            out = out.item()  # one expression
    except (SymbolicTraceError, numpy_protocol.UnsupportedNumPyFunction, ConstantClosureError):
        raise
    except (TypeError, ValueError, AttributeError) as exc:
        raise _explain(exc, f) from exc
    finally:
        Enclosing.symbolic -= 1
    check_output(out, "symbolic")
    return symbols, out


def _flat(expr: Any) -> list:
    if isinstance(expr, sympy.MatrixBase):
        return list(expr)
    if isinstance(expr, np.ndarray):
        return [sympy.sympify(e) for e in np.asarray(expr, dtype=object).reshape(-1)]
    if isinstance(expr, (list, tuple)):
        return [e for item in expr for e in _flat(item)]
    return [sympy.sympify(expr)]


def _tree_size(e: Any) -> int:
    return sum(1 for _ in sympy.preorder_traversal(e))


def expression_size(expr: Any, cse: bool = False) -> dict[str, int]:
    """Operations (``sympy.count_ops``) and tree nodes of an expression, matrix or array.

    With ``cse=True`` the common subexpressions are counted once: the size is that
    of the replacements plus the reduced expressions.
    """
    exprs = _flat(expr)
    if cse:
        replacements, reduced = sympy.cse(exprs)
        exprs = [rhs for _, rhs in replacements] + list(reduced)
    return {
        "ops": int(sum(sympy.count_ops(e) for e in exprs)),
        "tree_size": int(sum(_tree_size(e) for e in exprs)),
    }


# --------------------------------------------------------------------- compiling


class SymbolicDerivative:
    """A traced function and its derivative, for showing (LaTeX) and measuring."""

    def __init__(self, symbols: list, function: list, derivative: Any, kind: str,
                 value_shape: tuple = ()) -> None:
        self.symbols, self.function, self.derivative, self.kind = (
            symbols, function, derivative, kind)
        self.value_shape = value_shape  # the shape of f's output (``function`` is flat)

    def size(self) -> dict[str, dict[str, int]]:
        """Sizes of the function and of the derivative, without and with CSE."""
        return {
            "function": expression_size(self.function),
            "derivative": expression_size(self.derivative),
            "derivative_cse": expression_size(self.derivative, cse=True),
        }

    def latex(self) -> str:
        f = self.function[0] if len(self.function) == 1 else sympy.Matrix(self.function)
        return (f"f = {sympy.latex(f)}, \\quad "
                f"{'H' if self.kind == 'hessian' else 'J'} = {sympy.latex(self.derivative)}")

    def _repr_latex_(self) -> str:
        return f"$${self.latex()}$$"

    def __repr__(self) -> str:
        return f"SymbolicDerivative(f={self.function}, {self.kind}={self.derivative})"


class _Compiled:
    """f and its derivative ready to evaluate.

    ``function`` is the compiled (lambdified) form; it is None when the expressions
    still hold an enclosing trace's symbols, and then, or when the point itself is an
    expression, :meth:`substitute` evaluates by substitution instead.
    """

    def __init__(self, function: Callable | None, symbols: list, expressions: list,
                 n_values: int, value_shape: tuple, sizes: dict,
                 compile_seconds: float) -> None:
        self.function, self.symbols, self.expressions = function, symbols, expressions
        self.n_values, self.value_shape = n_values, value_shape
        self.sizes, self.compile_seconds = sizes, compile_seconds

    def substitute(self, point: list) -> list:
        mapping = dict(zip(self.symbols, (sympy.sympify(v) for v in point)))
        return [sympy.sympify(e).xreplace(mapping) for e in self.expressions]


def _fingerprint(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return (value.shape, str(value.dtype), value.tobytes())
    if backend.is_gpu_array(value):
        return (value.shape, str(value.dtype), backend.to_numpy(value).tobytes())
    hash(value)  # raises TypeError for unhashable constants: then no caching
    return (type(value).__name__, value)


class Symbolic(Differentiator):
    """Trace with sympy, differentiate, compile with lambdify.

    Parameters
    ----------
    simplify : run ``sympy.simplify`` on every derivative entry (slow; can shrink it).
    cse : compile with common-subexpression elimination.
    backend : "numpy" or "cupy" (the compiled derivative's array module).
    cache : keep compiled derivatives per (function, shapes, constant arguments).  A
        function whose closed-over constants change between calls needs ``cache=False``.
    """

    name = "symbolic"
    keeps_enclosing = frozenset({"symbolic"})

    def __init__(self, simplify: bool = False, cse: bool = True, backend: str = "numpy",
                 cache: bool = True) -> None:
        if backend not in ("numpy", "cupy"):
            raise ValueError(f"backend must be 'numpy' or 'cupy', got {backend!r}")
        self.simplify, self.cse, self.backend, self.cache = simplify, cse, backend, cache
        self._cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    # -- building -------------------------------------------------------------------
    def expressions(self, f: Callable, *args: Any, argnums: int = 0,
                    kind: str = "jacobian") -> SymbolicDerivative:
        """f and its Jacobian (or Hessian) as sympy objects, to show and to measure."""
        symbols, out = trace(f, *args, argnums=(argnums,))
        values = _flat(out)
        variables = _flat(symbols[0])
        if kind == "hessian":
            require_scalar(np.empty(len(values)), "hessian")
            derivative = sympy.hessian(values[0], variables)
        elif kind == "jacobian":
            derivative = sympy.Matrix(values).jacobian(variables)
        else:
            raise ValueError(f"kind must be 'jacobian' or 'hessian', got {kind!r}")
        derivative = derivative.applyfunc(clean_derivative)
        if self.simplify:
            derivative = derivative.applyfunc(sympy.simplify)
        value_shape = tuple(np.shape(out)) if isinstance(out, np.ndarray) else ()
        return SymbolicDerivative(variables, values, derivative, kind, value_shape)

    def _compile(self, f: Callable, args: list, i: int, kind: str,
                 cost: Cost) -> _Compiled:
        key = None
        if self.cache:
            try:
                key = (kind, i, tuple(np.shape(a) for a in args),
                       tuple(_fingerprint(a) for k, a in enumerate(args) if k != i))
                per_function = self._cache.get(f)
                if per_function is not None and key in per_function:
                    cost.compile_seconds = 0.0
                    return per_function[key]
            except TypeError:  # unhashable constants or f: compile every time
                key = None
        start = time.perf_counter()
        # The trace mixes the other arguments with sympy's (host) objects: CuPy arrays
        # cannot join those, so they are traced as NumPy copies.
        args = [backend.to_numpy(a) if k != i and backend.is_gpu_array(a) else a
                for k, a in enumerate(args)]
        found = None
        try:  # sympy's algorithms recurse once per level of the expression
            found = self.expressions(f, *args, argnums=i, kind=kind)
            cost.evaluations += 1
            derivative = list(found.derivative)
            expressions = found.function + derivative
            sizes = {"plain": expression_size(derivative),
                     "cse": expression_size(derivative, cse=True)}
            outer = set().union(*(sympy.sympify(e).free_symbols for e in expressions))
            function = None
            if not outer - set(found.symbols):
                # (Otherwise this derivative is taken inside a function that an enclosing
                # derivative is tracing: it must stay an expression in the outer symbols.)
                modules = [_special_for(self.backend), self.backend]
                function = sympy.lambdify(found.symbols, expressions, modules=modules,
                                          cse=self.cse)
        except RecursionError as exc:
            raise _too_deep(exc, f, found and found.function) from None
        compiled = _Compiled(function, found.symbols, expressions, len(found.function),
                             found.value_shape, sizes, time.perf_counter() - start)
        cost.compile_seconds = compiled.compile_seconds
        if function is None:
            return compiled
        if key is not None:
            try:
                self._cache.setdefault(f, {})[key] = compiled
            except TypeError:
                pass
        return compiled

    def _evaluate(self, compiled: _Compiled, x: Any, cost: Cost) -> tuple[Any, Any]:
        xp = backend.array_module(x) if self.backend == "numpy" else backend.cupy_or_raise()
        start = time.perf_counter()
        symbolic_point = not is_plain(x)  # nested: the point is an outer expression
        if compiled.function is None or symbolic_point:
            if symbolic_point:
                point = list(np.asarray(x, dtype=object).reshape(-1))
            else:
                point = [float(v) for v in np.reshape(backend.to_numpy(x), -1)]
            values = np.empty(len(compiled.expressions), dtype=object)
            values[:] = compiled.substitute(point)
        else:
            flat = [v for v in xp.reshape(xp.asarray(x, dtype=np.float64), -1)]
            results = compiled.function(*flat)
            values = xp.stack([xp.asarray(r, dtype=np.float64).reshape(()) for r in results])
        cost.add("eval_seconds", time.perf_counter() - start)
        cost.expression_ops = compiled.sizes["plain"]["ops"]
        cost.expression_ops_cse = compiled.sizes["cse"]["ops"]
        cost.tree_size = compiled.sizes["plain"]["tree_size"]
        n = compiled.n_values
        return values[:n].reshape(compiled.value_shape), values[n:]

    # -- the hooks -----------------------------------------------------------------
    def _jacobian(self, f: Callable, args: list, i: int, cost: Cost,
                  require_scalar_: bool) -> tuple[Any, Any]:
        compiled = self._compile(f, args, i, "jacobian", cost)
        if require_scalar_:
            require_scalar(np.empty(compiled.value_shape), "grad")
        value, J = self._evaluate(compiled, args[i], cost)
        return _expressions_out(value), _expressions_out(
            J.reshape(compiled.value_shape + np.shape(args[i])))

    def _hessian(self, f: Callable, args: list, i: int, cost: Cost) -> Any:
        compiled = self._compile(f, args, i, "hessian", cost)
        value, H = self._evaluate(compiled, args[i], cost)
        return _expressions_out(H.reshape(np.shape(args[i]) * 2))


def _expressions_out(a: Any) -> Any:
    """Numbers pass through; expressions come out as a sympy scalar or a SymbolArray."""
    if not (isinstance(a, np.ndarray) and a.dtype == object):
        return a
    return a[()] if a.ndim == 0 else SymbolArray(a)


#: sympy's name for each special function -> its name in the array namespaces (backend).
_SPECIAL_NAMES = {"erf": "erf", "erfc": "erfc", "erfinv": "erfinv", "loggamma": "lgamma",
                  "digamma": "digamma", "polygamma": "polygamma", "erfcx": "erfcx",
                  "gammainc": "gammainc", "gammaincc": "gammaincc", "fmod": "fmod",
                  "remainder": "remainder", "rint": "rint", "isnan": "isnan",
                  "isinf": "isinf", "isfinite": "isfinite"}
#: sympy's Bessel functions of any order (its derivatives reach orders -1 and 2): scipy's.
_BESSEL = {"besseli": "iv", "besselj": "jv", "besselk": "kv", "zeta": "zeta"}


def _special_for(module: str) -> dict[str, Callable]:
    """The special functions a lambdified expression calls, from scipy or cupyx."""
    if module == "cupy":
        namespace = backend.array_module(backend.cupy_or_raise().zeros(0))
        return {name: getattr(namespace, ours) for name, ours in _SPECIAL_NAMES.items()}
    numpy = backend.numpy_namespace  # (scipy is imported when a function is first called)
    functions = {name: (lambda *v, ours=ours: getattr(numpy, ours)(*v))
                 for name, ours in _SPECIAL_NAMES.items()}
    for name, scipy_name in _BESSEL.items():
        functions[name] = lambda *v, scipy_name=scipy_name: getattr(
            importlib.import_module("scipy.special"), scipy_name)(*v)
    return functions
