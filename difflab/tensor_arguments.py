"""What a Tensor's methods do with the arguments users pass them.

PyTorch-style calls accept numbers, lists, arrays and tensors alike:
``x + 1``, ``x.reshape(2, 3)`` or ``x.reshape((2, 3))``, ``x[[0, 2]]``,
``x.to("cuda", float32)``.  The functions here turn each of those into what
a primitive takes (an array, a shape tuple, axes), so that the methods in
``tensor.py``, ``tensor_methods.py`` and ``tensor_inplace.py`` stay one line
each.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from difflab import backend, tensor_views
from difflab.autograd import engine as _engine  # (engine.Tensor: the registered tensor type)
from difflab.dtypes import (
    BFLOAT16,
    _Defaults,
    check_memory_format,
    floating_result,
    int64,
    result_type,
)
from difflab.ops import registry as _ops
from difflab.ops.shapes import (  # noqa: F401  (the checks of dims and sizes, re-exported)
    as_axes,
    dim_index,
    dim_indices,
    integer,
    reduction_dims,
    shape_args,
)

if TYPE_CHECKING:
    from difflab.tensor import Tensor


def is_tensor(x: Any) -> bool:
    """Whether ``x`` is a difflab Tensor."""
    return isinstance(x, _engine.Tensor)


def wrap(array: Any, grad_fn: Any = None, version: list | None = None) -> Tensor:
    """A Tensor around ``array`` (no copy), as operations return it."""
    return _engine.Tensor._wrap(array, grad_fn, version)


def to_array(data: Any, dtype: Any = None, device: Any = None) -> Any:
    """Turn user data (numbers, lists, arrays, tensors) into an array on ``device``."""
    if isinstance(data, _engine.Tensor):
        array = data.array
    elif isinstance(data, np.ndarray) or backend.is_gpu_array(data):
        array = data
    else:
        try:
            array = np.asarray(data)
        except ValueError as exc:
            raise ValueError(f"cannot make a tensor from {type(data).__name__}: {exc}") from None
        if array.dtype == object:
            raise TypeError(
                f"cannot make a tensor from {data!r}: expected numbers, nested lists of "
                f"numbers of equal length, or an array"
            )
        if dtype is None and array.dtype.kind == "f":
            array = array.astype(_Defaults.dtype)
        elif dtype is None and array.dtype.kind == "c":
            array = array.astype(_Defaults.dtype.to_complex())
        elif dtype is None and array.dtype.kind in "iu":
            array = array.astype(int64)
    if array.dtype.kind in "US":  # NumPy keeps text as text; arithmetic on it fails later
        raise TypeError(
            f"cannot make a tensor from {array.dtype} data: strings are not supported. "
            "Convert them to numbers first, e.g. np.array(['1.5', '2']).astype(float)"
        )
    if dtype is not None:
        array = array.astype(np.dtype(dtype), copy=False)
    if device is not None:
        array = backend.to_device(array, backend.device(device))
    return array


def unwrap(x: Any) -> Any:
    return x.array if isinstance(x, _engine.Tensor) else x


def to_arguments(args: Sequence[Any], kwargs: dict) -> tuple[Any, Any]:
    """(device, dtype) from the ways PyTorch's ``.to(...)`` may be called.

    ``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(tensor)`` (its device
    and dtype), ``to(device=..., dtype=..., non_blocking=...)``; a device may be
    a string, a :class:`~difflab.backend.Device` or a CUDA index.
    """
    kwargs = dict(kwargs)
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("non_blocking", None)
    check_memory_format(kwargs.pop("memory_format", None), "to")
    if kwargs:
        raise TypeError(f"to() got unexpected arguments {sorted(kwargs)}")
    for arg in args:
        if isinstance(arg, _engine.Tensor):
            device, dtype = arg.device, arg.dtype
        elif isinstance(arg, (str, backend.Device, int)) and not isinstance(arg, bool):
            device = arg
        else:
            dtype = arg
    return device, dtype


class Size(tuple):
    """A tensor's shape: a tuple of ints that prints as ``difflab.Size([5, 3])``.

    Parameters
    ----------
    iterable : iterable of int, default ()
        The sizes.

    Examples
    --------
    >>> import difflab as dl
    >>> size = dl.zeros(5, 3).shape
    >>> size, size.numel(), size == (5, 3)
    (difflab.Size([5, 3]), 15, True)
    """

    def __repr__(self) -> str:
        return f"difflab.Size({list(self)})"

    __str__ = __repr__

    def __getitem__(self, index: Any) -> Any:
        item = tuple.__getitem__(self, index)
        return Size(item) if isinstance(index, slice) else item

    def __add__(self, other: Any) -> Size:
        return Size(tuple(self) + tuple(other))

    def numel(self) -> int:
        """The number of elements a tensor of this shape holds."""
        n = 1
        for s in self:
            n *= s
        return n


class MinMax(tuple):
    """(values, indices), readable as ``.values`` and ``.indices`` as in PyTorch."""

    @property
    def values(self) -> Tensor:
        return self[0]

    @property
    def indices(self) -> Tensor:
        return self[1]


_NUMPYS_UFUNC = np.ndarray.__array_ufunc__


def operand(x: Any) -> Any:
    """The other operand of an arithmetic operator: tensors, numbers and arrays pass
    through; lists become arrays (floats in the default dtype); any other type gives
    ``NotImplemented``, Python's signal to ask the other operand (``t * dual``), as does
    an array type with NumPy's protocol of its own (the symbolic method's ``SymbolArray``:
    ``t * symbols`` is the symbols' operation, with the tensor's values as a constant)."""
    # Concrete types first: this runs on every operator call, and isinstance against
    # the numbers.Number ABC is several times slower.
    if type(x) in _PYTHON_NUMBERS or isinstance(x, (_engine.Tensor, float, int, np.generic,
                                                     complex)):
        return x
    if isinstance(x, np.ndarray):
        return x if type(x).__array_ufunc__ is _NUMPYS_UFUNC else NotImplemented
    if backend.is_gpu_array(x):
        return x
    if isinstance(x, (list, tuple)):
        array = np.asarray(x)
        return array.astype(_Defaults.dtype) if array.dtype.kind == "f" else array
    return NotImplemented


_PYTHON_NUMBERS = frozenset({float, int, complex, bool})  # (by type: a set look-up)


def unwrap_operand(x: Any) -> Any:
    """:func:`operand` where no other operand can step in: an unknown type is an error."""
    if (value := operand(x)) is NotImplemented:
        raise TypeError(
            f"unsupported operand of type {type(x).__name__} for a Tensor operation: use a "
            f"number, a Tensor or an array"
        )
    return value


def promote(a: Any, b: Any, floating: bool = False) -> tuple[Any, Any]:
    """The two operands of a binary operation, cast to the dtype of its result.

    The dtype is PyTorch's (:func:`difflab.dtypes.result_type`): a float32
    tensor with an int64 tensor or a Python float stays float32.  With
    ``floating`` (true division, atan2) an integer result becomes the default
    floating dtype.  A tensor that requires grad is cast on the tape (its
    gradient comes back in its own dtype).  Python numbers are left alone:
    NumPy gives them the dtype of the array they meet.
    """
    # The common cases first, without computing a dtype: this runs on every operator.
    if isinstance(a, _engine.Tensor):
        kind = a.array.dtype.kind
        if isinstance(b, _engine.Tensor):
            if a.array.dtype == b.array.dtype and (kind in "fc" or not floating):
                return a, b
        elif type(b) in _WEAK_SCALARS and kind in "fc":
            return a, b
    elif isinstance(b, _engine.Tensor) and type(a) in _WEAK_SCALARS and b.array.dtype.kind in "fc":
        return a, b
    target = result_type(a, b)
    if floating:
        target = floating_result(target)
    return cast_to(a, target), cast_to(b, target)


_WEAK_SCALARS = (float, int)


def promote_all(operands: Sequence[Any]) -> list:
    """Every operand (of ``cat``, ``stack``, ``where``) cast to their common dtype."""
    target = result_type(*operands)
    return [cast_to(x, target) for x in operands]


def cast_to(x: Any, target: Any) -> Any:
    """``x`` in dtype ``target``: tensors through ``.to`` (recorded), arrays by ``astype``,
    Python numbers unchanged (they take the dtype of what they meet)."""
    if isinstance(x, _engine.Tensor):
        return x if x.array.dtype == target.dtype else x.to(target)
    dtype = getattr(x, "dtype", None)
    if dtype is None or dtype == target.dtype:
        return x
    return x.astype(target.dtype)


def no_grad_result(array: Any) -> Tensor:
    """Wrap the result of an operation no gradient flows through (comparisons, sign, ...)."""
    if isinstance(array, np.generic) or not hasattr(array, "shape"):
        array = np.asarray(array)  # NumPy gives scalars for 0-d results
    return _engine.Tensor._wrap(array)


def view_of(base: Tensor, out: Tensor, viewed: Any = None) -> Tensor:
    """Mark ``out`` as a view of ``base`` when they share memory (one version counter).

    ``viewed`` is for a view whose recorded primitives compute a copy: ``diagonal``
    picks its elements with integer arrays (a copy, in NumPy), which NumPy's own
    ``diagonal`` reads by strides (a view).  ``out`` then holds ``viewed`` instead of
    its copy, so that a write into either tensor is seen by the other, as in PyTorch.
    A traced graph keeps the copy (the value of its recorded node) but shares the
    version counter all the same: a write into either one is then refused where the
    graph reads the other, as for any view it cannot replay.
    """
    if viewed is not None:
        recorder = _engine.GraphRecorder.active
        if recorder is None:
            out.array = viewed
        else:
            out._version, out._base = base._version, base if base._base is None else base._base
            recorder.viewed(out)
            return out
    if backend.is_view_of(out.array, base.array):
        out._version = base._version
        out._base = base if base._base is None else base._base
        if out._requires_grad and out._base.grad_fn is not None:
            tensor_views.follow(out)  # (it follows a recorded write into its base)
    return out


def check_same_dtype(name: str, input: Any, source: Any, what: str = "source") -> None:  # noqa: A002
    """Refuse a ``source`` whose dtype is not ``input``'s, as PyTorch's scatter family does.

    Writing float64 values into a float32 tensor would round them without a word;
    PyTorch raises instead, and so does every difflab function that writes one
    tensor's values into another's slots (``index_copy``, ``index_add``, ...).

    Parameters
    ----------
    name : str
        The function, named at the start of the error.
    input, source : Tensor
        The tensor written into, and the one whose values are written.
    what : str, default "source"
        ``source``'s parameter name, for the error.

    Raises
    ------
    RuntimeError
        If the two dtypes differ; the message says how to convert.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.tensor_arguments import check_same_dtype
    >>> check_same_dtype("index_copy", dl.zeros(2), dl.ones(2, dtype=dl.float64))
    Traceback (most recent call last):
    ...
    RuntimeError: index_copy(): expected source's dtype (difflab.float64) to equal input's ...
    """
    if "O" in (source.dtype.kind, input.dtype.kind):  # (sympy expressions: real numbers)
        return
    if source.dtype != input.dtype:
        raise RuntimeError(f"{name}(): expected {what}'s dtype ({source.dtype}) to equal "
                           f"input's ({input.dtype}); convert with {what}.to(input.dtype)")


def tensor_sequence(tensors: Any, name: str) -> list:
    """``tensors`` (a list, tuple or other iterable of tensors) as a list, refusing one
    tensor or array: iterating over it would give its rows (``cat(x)`` would join
    ``x``'s rows, silently), as PyTorch refuses it too."""
    if isinstance(tensors, _engine.Tensor) or hasattr(tensors, "__array__") or \
            tensors is None or isinstance(tensors, str):
        raise TypeError(f"{name}: expected a sequence of tensors, got "
                        f"{type(tensors).__name__}; pass a list, e.g. {name}([x, y])")
    return list(tensors)


def new_shape(size: Sequence[Any], name: str) -> tuple:
    """The shape of a tensor to create, from ``f(2, 3)`` or ``f((2, 3))``: every size
    non-negative (NumPy's "negative dimensions are not allowed" named neither the call
    nor the size; the ValueError that ``zeros`` and ``empty`` document, with PyTorch's
    words)."""
    shape = shape_args(size, name)
    if any(n < 0 for n in shape):
        raise ValueError(f"{name}: Trying to create tensor with negative dimension "
                         f"{min(shape)}: {list(shape)}; every size must be 0 or more")
    return shape


def fill_number(value: Any, name: str) -> Any:
    """``value`` itself if it is one number (a Python or NumPy number, a bool, a 0-d tensor
    or array): what ``full``, ``new_full``, ``full_like`` and ``fill_`` fill with.

    None or a string made NumPy build a tensor of Python objects (``full((2,), None)``)
    or fill with nan, without a word; a tensor with dimensions is PyTorch's RuntimeError
    (``copy_`` writes a tensor of values).
    """
    array = unwrap(value)
    dtype = getattr(array, "dtype", None)
    if dtype is None:
        dtype = np.asarray(array).dtype
    if np.dtype(dtype).kind not in "biufc":
        raise TypeError(f"{name}: the fill value must be a number (or a 0-d tensor), got "
                        f"{type(value).__name__} {value!r:.40}")
    if np.ndim(array):
        raise RuntimeError(f"{name}: the value must be a number or a 0-d tensor, got one of "
                           f"shape {tuple(np.shape(array))}; to write a tensor of values use "
                           f"copy_")
    return value


#: The primitive each ``rounding_mode`` of ``div`` applies (None: true division, ``div``).
ROUNDED_DIVISION = {"trunc": "trunc_divide", "floor": "floor_divide"}


def rounded_division(rounding_mode: Any) -> str | None:
    """The primitive's name for ``div``'s ``rounding_mode`` (None for true division);
    another string is PyTorch's RuntimeError, naming the modes there are; another type
    its TypeError."""
    if rounding_mode is None:
        return None
    if not isinstance(rounding_mode, str):
        raise TypeError(f"div(): rounding_mode must be None, 'trunc' or 'floor', not "
                        f"{type(rounding_mode).__name__}")
    name = ROUNDED_DIVISION.get(rounding_mode)
    if name is None:
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or "
                           f"'floor' but found {rounding_mode!r}")
    return name


def times_alpha(other: Any, alpha: Any, input: Any, name: str) -> Any:  # noqa: A002
    """``alpha * other``, the scaled operand of ``add``, ``sub`` and ``rsub`` (PyTorch's
    ``alpha``; ``other`` itself for 1).  As in PyTorch, a float ``alpha`` with integer
    operands is a RuntimeError (it would make the integers floats unasked), and so is a bool
    ``alpha`` with operands that are not bools."""
    kinds = {getattr(getattr(v, "dtype", None), "kind", "i" if isinstance(v, int) else "f")
             for v in (input, other)}
    if isinstance(alpha, bool) and kinds != {"b"}:
        raise RuntimeError(f"{name}: a bool alpha (alpha={alpha}) only scales bool tensors, "
                           f"as in PyTorch: pass a number")
    if isinstance(alpha, float) and kinds <= set("iub"):
        raise RuntimeError(f"{name}: for integral input tensors, argument alpha must not be a "
                           f"floating point number (got alpha={alpha}), as in PyTorch: make "
                           f"the tensors floating with .float(), or pass an integer alpha")
    return other if alpha == 1 else other * alpha


def require_tensor(value: Any, name: str, what: str = "other") -> Any:
    """``value`` itself if it has a shape (a tensor, an array, a dual number), else the
    TypeError PyTorch gives for a number or a list where a tensor must be passed (it had
    no ``.shape`` to read: an AttributeError that named nothing)."""
    if not hasattr(value, "shape") or isinstance(value, np.generic):
        raise TypeError(f"{name}(): argument '{what}' must be a Tensor, not "
                        f"{type(value).__name__}; make one with difflab.tensor(...)")
    return value


def element_count(shape: tuple, dims: Any) -> Any:
    """How many elements a reduction over ``dims`` (all of them for None) combines."""
    if dims is None:
        n = 1
        for s in shape:
            n *= s
        return n
    n = 1
    for d in (dims,) if isinstance(dims, int) else dims:
        n *= shape[d] if shape else 1  # (a 0-d tensor's dim 0 holds its one element)
    return n


def index_arrays(index: Any) -> Any:
    """Tensors and lists inside an index become arrays NumPy understands."""
    if isinstance(index, tuple):
        return tuple(index_arrays(i) for i in index)
    if isinstance(index, _engine.Tensor):
        return index.array
    if isinstance(index, list):
        return np.asarray(index)
    return index


def unary_operand(op: Any, x: Tensor) -> Tensor:
    """The input of an elementwise function, floating where the function's values are.

    ``exp``, ``sin``, ``sqrt``, ... of an integer tensor are computed in the
    default dtype, as in PyTorch (NumPy would use float64); ``neg``, ``abs``
    and ``relu`` keep integers (their rule says ``keeps_integers``).  A dual number or
    a sympy expression (``x.exp()`` on one: Tensor's method) is left as it is.
    """
    if not isinstance(x, _engine.Tensor):
        return x
    if x.array.dtype.kind in "fc" or op.rule.keeps_integers or x.array.dtype is BFLOAT16:
        return x
    return x.to(_Defaults.dtype)


def tensor_of(x: Any) -> Tensor:
    """``x`` itself if it is a Tensor, else a Tensor around its array (no gradient)."""
    if isinstance(x, _engine.Tensor):
        return x
    array = backend.array_module(x).asarray(x)
    if array.dtype.kind in "OUS":  # (None, strings, ragged lists: no tensor holds them)
        raise TypeError(f"expected a tensor, a number or an array of numbers, got "
                        f"{type(x).__name__} {x!r:.60}")
    return _engine.Tensor._wrap(array)


def tensor_or_interpreted(x: Any) -> Any:
    """``x`` itself if its type interprets primitives (forward mode's ``Dual``, a sympy
    expression), else :func:`tensor_of`'s tensor.

    What a hand-written face (``dl.floor``, ``dl.gt``) applies its primitive to:
    ``engine.apply`` hands such a value to its type's handler, which gives a
    piecewise-constant primitive a zero tangent or its sympy function, where
    ``tensor_of`` would make an array of it (and drop its tangents).
    """
    return x if interpreted(x) else tensor_of(x)


def known_values(x: Any) -> Any:
    """``x``'s values as an array: a tensor's (a list, an array made one), a ``Dual``'s
    without its tangents (a tensor of dual numbers, ``jacfwd``'s, too); ``None`` for
    sympy's symbols, which have no values (:meth:`TypeHandler.values`)."""
    inner = x.array if isinstance(x, _engine.Tensor) else x
    handler = _engine._interpreter(inner)
    return tensor_of(x).array if handler is None else handler.values(inner)


def values_of(x: Any, name: str) -> Tensor:
    """``x`` as a constant tensor of its values (:func:`known_values`), for a function
    whose result has no derivative in ``x`` (``histc``, ``bucketize``, ``searchsorted``,
    ``mode``'s indices): a tensor as it is, a ``Dual``'s values without its tangents (the
    derivative of a piecewise-constant result is 0 almost everywhere, as reverse mode
    gives); symbols are refused with the reason and the methods that work."""
    values = known_values(x)
    if values is None:
        raise NotOneExpression(f"{name}: symbols have no values (its result depends on the "
                               f"values, not on an expression of them): use method='forward', "
                               f"'reverse' or 'numeric'")
    return x if isinstance(x, _engine.Tensor) and values is x.array else tensor_of(values)


class NotOneExpression(TypeError):
    """An operation given sympy expressions whose result is not one expression of them.

    Sorting, a median, a running maximum, a quantile pick entries by their values
    (``masked_select`` by the values of its condition), and symbols have none: the
    result would be a different expression for each order of the values.  The face
    raises this error with the reason and the methods that work; the symbolic method
    passes its message on as it is (it is no operation missing from sympy).
    """


def refuse_symbols(name: str, why: str, *values: Any) -> None:
    """Raise :class:`NotOneExpression` if one of ``values`` holds sympy expressions (an
    array of Python objects: the symbolic method's ``SymbolArray``).

    Parameters
    ----------
    name : str
        The function, named at the start of the error.
    why : str
        What the result depends on that symbols do not have (``"symbols have no order"``).
    *values : Any
        The arguments to look at; tensors, numbers and dual numbers pass.

    Raises
    ------
    NotOneExpression
        Naming ``name``, the reason, and the methods that differentiate it.

    Examples
    --------
    >>> import numpy as np, sympy
    >>> from difflab.tensor_arguments import refuse_symbols
    >>> refuse_symbols("sort", "symbols have no order", np.array([1.0, 2.0]))
    >>> refuse_symbols("sort", "symbols have no order", np.array([sympy.Symbol("x")]))
    Traceback (most recent call last):
    ...
    difflab.tensor_arguments.NotOneExpression: sort: symbols have no order, so its result ...
    """
    if any(getattr(getattr(v, "dtype", None), "kind", None) == "O" for v in values):
        raise NotOneExpression(f"{name}: {why}, so its result is not one expression of "
                               f"them; differentiate it with method='forward', 'reverse' "
                               f"or 'numeric'")


def interpreted(*values: Any) -> bool:
    """Whether one of ``values`` is of a type that interprets primitives (a ``Dual``, a
    sympy expression): a face then applies its primitive to the values as they are."""
    return any(_engine._interpreter(v) is not None for v in values)


def truth_values(mask: Any) -> bool:
    """Whether ``mask`` is an object array of truth values only: what a comparison of
    sympy expressions gives (``x > 0`` of symbols: relations, or ``True``), a boolean
    mask in a symbolic trace, as a bool tensor is in the others.  (Read from sympy's own
    flags, so that this layer imports no sympy.)"""
    if getattr(getattr(mask, "dtype", None), "kind", None) != "O":
        return False
    return all(isinstance(e, (bool, np.bool_)) or getattr(e, "is_Relational", False)
               or getattr(e, "is_Boolean", False) for e in np.asarray(mask).reshape(-1))


def method_or_primitive(x: Any, name: str) -> Any:
    """``x.<name>()`` for a tensor (a list or array made one); for a ``Dual`` or a sympy
    expression, the primitive ``name`` from its type's handler (see
    :func:`tensor_or_interpreted`): the face of a piecewise-constant primitive."""
    x = tensor_or_interpreted(x)
    if isinstance(x, _engine.Tensor):
        return getattr(x, name)()
    return _engine.apply(_ops.PRIMITIVES[name], x)


def write_out(out: Tensor | None, result: Any) -> Any:
    """The ``out=`` keyword: copy ``result`` into ``out`` (resized if its shape differs,
    as PyTorch does) and return ``out``."""
    if out is None:
        return result
    from difflab.autograd.grad_mode import is_grad_enabled
    from difflab.dtypes import can_cast

    if not isinstance(out, _engine.Tensor):
        raise TypeError(f"out= must be a Tensor, got {type(out).__name__}")
    result = result if isinstance(result, _engine.Tensor) else tensor_of(result)
    if is_grad_enabled() and (result.requires_grad or out.requires_grad):
        raise RuntimeError(
            "functions with out=... arguments don't support automatic differentiation, but "
            "one of the arguments requires grad: drop out= (use the result), or work under "
            "difflab.no_grad()"
        )
    if not can_cast(result.dtype, out.dtype):
        raise RuntimeError(
            f"result type {result.dtype} can't be cast to the desired output type "
            f"{out.dtype} of out="
        )
    if out.shape != result.shape:  # resized, as PyTorch does
        xp = backend.array_module(out.array)
        out.array = xp.zeros(result.shape, dtype=out.array.dtype)
    out.copy_(result)
    return out
