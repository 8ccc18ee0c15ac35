"""A stand-in for CuPy that runs on the CPU: the GPU code paths, tested without a GPU.

CuPy keeps its arrays in GPU memory, so it never turns one into a NumPy array
behind the programmer's back.  Code that works on NumPy arrays can therefore
still fail on the GPU, wherever it silently assumes NumPy.  This module
imitates CuPy's rules, with NumPy doing the arithmetic underneath, so that such
code fails on every test run, on any machine:

1. ``np.asarray(x)``, ``np.array(x)`` and anything else that calls
   ``x.__array__()`` raise ``TypeError: Implicit conversion to a NumPy array is
   not allowed. Please use `.get()` to construct a NumPy array explicitly.``
2. One operation that mixes a device array with a NumPy array raises
   ``TypeError: Unsupported type <class 'numpy.ndarray'>``, however it is
   spelled: ``xp.add(x, a)``, ``x + a``, ``a * x``, ``np.add(x, a)``,
   ``np.concatenate([x, a])``.  Python numbers and NumPy scalars
   (``np.float32(2)``) mix freely, as on the GPU.  Lists are not arrays:
   ``xp.maximum(x, [0, 1])`` raises too.
3. Arrays cross between host and device only where CuPy copies them:
   ``fake_cupy.asarray``/``array`` (to the device), ``x.get()`` and
   ``fake_cupy.asnumpy`` (to the host), and, as in CuPy, index arrays and the
   values of an advanced-index assignment (``x[idx] = host_values``).
4. As in CuPy, reductions and integer indexing give 0-d device arrays, not
   NumPy scalars; ``float(x)``, ``int(x)``, ``bool(x)`` and ``x.item()`` copy
   one number to the host.
5. dtypes CuPy does not have (object, strings, datetimes, long double) raise
   ``ValueError: Unsupported dtype``; ``cupyx.scatter_add`` accepts only the
   dtypes of CUDA's ``atomicAdd`` (no int64).
6. Arrays report device ``cuda:0``; the machine has one device (``Device(1)``
   raises as a missing GPU does).
7. As in CuPy, ``x.flags`` tells the layout only (``c_contiguous``,
   ``f_contiguous``, ``owndata``: there is no ``writeable``), and ``where``
   takes a device array as its condition, not a Python bool.
8. As in CuPy, an integer index array's entries out of range *wrap around*
   (``x[[1, 3]]`` of 3 elements reads ``x[[1, 0]]``; so do ``x[i] = v`` and
   ``cupyx.scatter_add``), where NumPy raises an ``IndexError``.
9. CUDA graphs: a stand-in cannot record kernels, so ``cuda.graph_of(work)``
   (not a CuPy name) gives a graph whose ``launch()`` runs ``work`` again, on
   the same arrays, as a recorded graph would; during it, every copy between
   host and device raises ``CUDARuntimeError`` as it does on a capturing
   stream, and a matrix product (``matmul``, ``dot``, ``tensordot``,
   ``einsum``: cuBLAS's) raises CuPy's ``NotImplementedError``: CuPy does not
   record cuBLAS calls in a graph (:mod:`difflab.jit.cuda_graphs`).

The module has the names difflab takes from ``cupy`` (every NumPy function and
ufunc, ``ndarray``, ``random``, ``linalg``, ``fft``, ``cuda``) and from
``cupyx`` (``scatter_add``, ``scipy.special``'s erf, erfc, erfinv, erfcx, gammaln,
digamma, zeta, polygamma, i0, i0e, i1, i1e, j0, j1,
gammainc, gammaincc, k0e, k1e), in ``cupyx``.

Switch it on with the environment variable ``DIFFLAB_FAKE_CUDA=1`` (read the
first time difflab looks for CuPy), or for a block of code with
:func:`installed`.  The test suite runs its ``cuda`` cases on it where no
GPU is present.
"""

from __future__ import annotations

import builtins
import contextlib
import sys
import types
from collections.abc import Iterator
from typing import Any

import numpy as np

from difflab.testing import fake_cuda
from difflab.testing.fake_cuda import DEVICE_NAME
from difflab.testing.fake_cuda import refuse_blas_while_capturing as _refuse_blas_while_capturing
from difflab.testing.fake_cuda import refuse_while_capturing as _refuse_while_capturing

cuda = fake_cuda.cuda  # (cupy.cuda: the device, its runtime errors, graphs)

# What the documentation lists: the stand-in's own names, not the NumPy functions it
# copies in (those are NumPy's, documented there).
__all__ = ["IS_STAND_IN", "IMPLICIT_CONVERSION", "DEVICE_NAME", "ndarray", "ufunc", "array",
           "asarray", "asanyarray", "asnumpy", "get_array_module", "installed"]

IS_STAND_IN = True  # difflab.backend reads cupyx from this module, not from an import

IMPLICIT_CONVERSION = (
    "Implicit conversion to a NumPy array is not allowed. "
    "Please use `.get()` to construct a NumPy array explicitly."
)

_PYTHON_SCALARS = (bool, int, float, complex)
_COMPARISONS = {"greater", "greater_equal", "less", "less_equal", "equal", "not_equal"}
# What CUDA's atomicAdd adds (cupyx.scatter_add with repeated indices).
_SCATTER_ADD_DTYPES = {np.dtype(t) for t in
                       (np.int32, np.float16, np.float32, np.float64, np.uint32, np.uint64)}


# --------------------------------------------------------------------------- checks


def _unsupported(value: Any) -> TypeError:
    return TypeError(f"Unsupported type {type(value)}")


def _check_dtype(dtype: Any) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtype.kind in "OSUVMm" or dtype.char in "gG":  # object, text, void, time, long double
        raise ValueError(f"Unsupported dtype {dtype}")
    return dtype


def _is_scalar(value: Any) -> bool:
    """A number a kernel takes by value: Python's, or a NumPy scalar (never a NumPy array)."""
    return type(value) in _PYTHON_SCALARS or (
        isinstance(value, np.generic) and value.dtype.kind not in "OSUVMm")


def _wrap(value: Any) -> Any:
    """NumPy results as device arrays (NumPy scalars become 0-d arrays, as in CuPy)."""
    if isinstance(value, np.ndarray):
        _check_dtype(value.dtype)
        out = ndarray.__new__(ndarray)
        out._data = value
        return out
    if isinstance(value, np.generic):
        return _wrap(np.asarray(value))
    if isinstance(value, tuple):
        items = [_wrap(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


def _device_args(value: Any) -> Any:
    """Arguments of a device function: device arrays unwrapped; NumPy arrays refused."""
    if isinstance(value, ndarray):
        return value._data
    if isinstance(value, np.ndarray):
        raise _unsupported(value)
    if isinstance(value, list):
        return [_device_args(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_device_args(v) for v in value)
    if isinstance(value, dict):
        return {k: _device_args(v) for k, v in value.items()}
    return value


def _host_args(value: Any) -> Any:
    """Arguments of a transfer (``asarray``, index arrays): host data welcome."""
    if isinstance(value, ndarray):
        return value._data
    if isinstance(value, (list, tuple)):
        return [_host_args(v) for v in value] if isinstance(value, list) \
            else tuple(_host_args(v) for v in value)
    return value


def _kernel_arg(value: Any) -> Any:
    """An input of an elementwise kernel (a ufunc): a device array or a scalar."""
    if isinstance(value, ndarray):
        return value._data
    if _is_scalar(value):
        return value
    raise _unsupported(value)


def _out_arg(out: Any) -> ndarray | None:
    if isinstance(out, tuple):
        if len(out) != 1:
            raise ValueError("The 'out' parameter must have exactly one array value")
        out = out[0]
    if out is None or isinstance(out, ndarray):
        return out
    raise TypeError(f"Output arrays must be cupy.ndarray, got {type(out)}")


def _index(key: Any) -> Any:
    """An index on the device: index arrays may come from the host (CuPy copies them)."""
    return _host_args(key)


def _wrapped(key: Any, shape: tuple) -> Any:
    """CuPy's rule for integer index arrays: an entry out of range *wraps around* (taken
    modulo the axis's size), where NumPy raises an IndexError."""
    from difflab.backend import integer_index_arrays  # (the backend loads this module)

    wrap = {id(a): size for a, _, size in integer_index_arrays(key, shape)
            if isinstance(a, np.ndarray) and size}
    if not wrap:
        return key
    items = key if isinstance(key, tuple) else (key,)
    items = tuple(k % wrap[id(k)] if id(k) in wrap else k for k in items)
    return items if isinstance(key, tuple) else items[0]


def _is_basic(key: Any) -> bool:
    items = key if isinstance(key, tuple) else (key,)
    return builtins.all(isinstance(k, (int, np.integer, slice, type(None), type(Ellipsis)))
               and not isinstance(k, (builtins.bool, np.bool_)) for k in items)


def _as_view_index(key: Any) -> Any:
    """``key`` plus a trailing ``...``: full integer indexing then gives a 0-d view, as in CuPy."""
    items = key if isinstance(key, tuple) else (key,)
    if builtins.any(k is Ellipsis for k in items):
        return key
    return (*items, Ellipsis)


# --------------------------------------------------------------------------- ufuncs


class ufunc:  # noqa: N801  (cupy.ufunc)
    """An elementwise function: inputs are device arrays or scalars, never NumPy arrays."""

    def __init__(self, numpy_ufunc: np.ufunc) -> None:
        self._ufunc = numpy_ufunc
        self.__name__ = self.name = numpy_ufunc.__name__
        self.nin, self.nout, self.nargs = numpy_ufunc.nin, numpy_ufunc.nout, numpy_ufunc.nargs
        self.__doc__ = numpy_ufunc.__doc__

    def __repr__(self) -> str:
        return f"<ufunc '{self.name}'>"

    def _run(self, method: Any, args: tuple, kwargs: dict) -> Any:
        _refuse_blas_while_capturing(self.name)
        out = _out_arg(kwargs.pop("out", None))
        kwargs = _device_args(kwargs)
        if out is not None:
            kwargs["out"] = out._data
        result = method(*args, **kwargs)
        return out if out is not None else _wrap(result)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._run(self._ufunc, tuple(_kernel_arg(a) for a in args), kwargs)

    def reduce(self, array: Any, *args: Any, **kwargs: Any) -> Any:
        return self._run(self._ufunc.reduce, (_kernel_arg(array), *args), kwargs)

    def accumulate(self, array: Any, *args: Any, **kwargs: Any) -> Any:
        return self._run(self._ufunc.accumulate, (_kernel_arg(array), *args), kwargs)

    def outer(self, a: Any, b: Any, **kwargs: Any) -> Any:
        return self._run(self._ufunc.outer, (_kernel_arg(a), _kernel_arg(b)), kwargs)

    def at(self, a: ndarray, indices: Any, b: Any = None) -> None:
        if not isinstance(a, ndarray):
            raise _unsupported(a)
        args = () if b is None else (_kernel_arg(b),)
        self._ufunc.at(a._data, _index(indices), *args)


def _function(numpy_function: Any) -> Any:
    """``numpy_function`` on device arrays: NumPy arrays refused, results on the device."""

    def function(*args: Any, **kwargs: Any) -> Any:
        _refuse_blas_while_capturing(function.__name__)
        return _wrap(numpy_function(*_device_args(args), **_device_args(kwargs)))

    function.__name__ = getattr(numpy_function, "__name__", "function")
    function.__qualname__ = function.__name__
    function.__doc__ = getattr(numpy_function, "__doc__", None)
    function.__wrapped_numpy__ = numpy_function
    return function


# --------------------------------------------------------------------------- ndarray


def _should_use_rop(x: Any, y: Any) -> bool:
    """CuPy's rule for ``x op y`` with a foreign ``y``: defer when ``y`` opts out of ufuncs."""
    try:
        y_ufunc = y.__array_ufunc__
    except AttributeError:
        return getattr(x, "__array_priority__", 0) < getattr(y, "__array_priority__", 0)
    return y_ufunc is None


def _binary(name: str, reflected: bool = False) -> Any:
    numpy_ufunc = getattr(np, name)

    def operator(self: ndarray, other: Any) -> Any:
        if not isinstance(other, ndarray) and _should_use_rop(self, other):
            return NotImplemented
        # NumPy's ufunc sends the call to ndarray.__array_ufunc__, as in CuPy.
        return numpy_ufunc(other, self) if reflected else numpy_ufunc(self, other)

    return operator


def _inplace(name: str) -> Any:
    def operator(self: ndarray, other: Any) -> ndarray:
        return globals()[name](self, other, out=self)

    return operator


def _method(name: str) -> Any:
    def method(self: ndarray, *args: Any, **kwargs: Any) -> Any:
        bound = getattr(self._data, name)
        return _wrap(bound(*_device_args(args), **_device_args(kwargs)))

    method.__name__ = name
    return method


class ndarray:  # noqa: N801  (cupy.ndarray)
    """An array "on the GPU": NumPy memory underneath that NumPy may not touch implicitly."""

    __slots__ = ("_data", "__weakref__")
    __array_priority__ = 100
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, shape: Any, dtype: Any = float, memptr: Any = None, strides: Any = None,
                 order: str = "C") -> None:
        self._data = np.empty(shape, dtype=_check_dtype(dtype), order=order)

    # -------------------------------------------------- the host/device boundary
    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError(IMPLICIT_CONVERSION)

    def get(self, stream: Any = None, order: str = "C", out: np.ndarray | None = None) -> Any:
        """A copy of the array in host memory (a NumPy array): the explicit transfer."""
        _refuse_while_capturing()
        if out is not None:
            if not isinstance(out, np.ndarray):
                raise TypeError("Only numpy.ndarray can be obtained from cupy.ndarray")
            out[...] = self._data
            return out
        return np.array(self._data, order=order, copy=True)

    def set(self, arr: np.ndarray, stream: Any = None) -> None:
        """Copy the host array ``arr`` (same shape and dtype) into this array."""
        if not isinstance(arr, np.ndarray):
            raise TypeError(f"Only numpy.ndarray can be set to cupy.ndarray, got {type(arr)}")
        if arr.dtype != self.dtype:
            raise TypeError(f"{arr.dtype} array cannot be set to {self.dtype} array")
        if arr.shape != self.shape:
            raise ValueError(f"Shape mismatch. Old shape: {self.shape}, new shape: {arr.shape}")
        self._data[...] = arr

    @property
    def device(self) -> cuda.Device:
        return cuda.Device(0)

    def __array_ufunc__(self, numpy_ufunc: np.ufunc, method: str, *inputs: Any,
                        **kwargs: Any) -> Any:
        """``np.sin(x)`` runs the device ufunc; with a NumPy array among the inputs it raises."""
        if method != "__call__":
            return NotImplemented
        device_ufunc = globals().get(numpy_ufunc.__name__)
        if not isinstance(device_ufunc, ufunc):
            return NotImplemented
        inout = inputs + tuple(kwargs.get("out", ()) or ())
        for x in inout:
            if not (isinstance(x, (ndarray, np.ndarray)) or _is_scalar(x)):
                return NotImplemented
        if numpy_ufunc.__name__ in _COMPARISONS:  # CuPy lets a 0-d host array through here
            inputs = tuple(x.item() if isinstance(x, np.ndarray) and x.ndim == 0 else x
                           for x in inputs)
        return device_ufunc(*inputs, **kwargs)

    def __array_function__(self, func: Any, types_: Any, args: Any, kwargs: Any) -> Any:
        """``np.concatenate([x, y])`` runs the device function (which refuses NumPy arrays)."""
        namespace = _SUBMODULES.get(func.__module__)
        device_function = getattr(namespace, func.__name__, None)
        if device_function is None or device_function is func:
            return NotImplemented
        if not builtins.all(issubclass(t, (ndarray, np.ndarray)) for t in types_):
            return NotImplemented
        return device_function(*args, **kwargs)

    # ---------------------------------------------------------------- attributes
    @property
    def shape(self) -> tuple:
        return self._data.shape

    @shape.setter
    def shape(self, value: Any) -> None:
        self._data.shape = value

    dtype = property(lambda self: self._data.dtype)
    ndim = property(lambda self: self._data.ndim)
    size = property(lambda self: self._data.size)
    itemsize = property(lambda self: self._data.itemsize)
    nbytes = property(lambda self: self._data.nbytes)
    strides = property(lambda self: self._data.strides)
    flags = property(lambda self: _Flags(self._data.flags))

    @property
    def __cuda_array_interface__(self) -> dict:
        """CuPy's description of the memory (shape, strides, dtype, the data's address):
        the host array's, whose memory stands for the device's (a view's address is its
        base's plus its offset, as on a GPU)."""
        return self._data.__array_interface__
    T = property(lambda self: _wrap(self._data.T))
    mT = property(lambda self: _wrap(self._data.mT))  # noqa: N815
    real = property(lambda self: _wrap(self._data.real))
    imag = property(lambda self: _wrap(self._data.imag))

    # ------------------------------------------------------------ host numbers
    def item(self) -> Any:
        _refuse_while_capturing()
        return self._data.item()

    def tolist(self) -> Any:
        _refuse_while_capturing()
        return self._data.tolist()

    def __float__(self) -> float:
        _refuse_while_capturing()
        return float(self._data)

    def __int__(self) -> int:
        _refuse_while_capturing()
        return int(self._data)

    def __complex__(self) -> complex:
        _refuse_while_capturing()
        return complex(self._data)

    def __bool__(self) -> bool:
        _refuse_while_capturing()
        return builtins.bool(self._data)

    def __repr__(self) -> str:
        return repr(self._data)

    def __str__(self) -> str:
        return str(self._data)

    def __format__(self, spec: str) -> str:
        return format(self._data, spec)

    def __reduce__(self) -> Any:
        return array, (self.get(),)

    def __copy__(self) -> ndarray:
        return self.copy()

    def __deepcopy__(self, memo: dict) -> ndarray:
        return self.copy()

    # ------------------------------------------------------------------ container
    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of unsized object")
        return len(self._data)

    def __iter__(self) -> Iterator[ndarray]:
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self._data.shape[0]))

    def __getitem__(self, key: Any) -> ndarray:
        return _wrap(self._data[_as_view_index(_wrapped(_index(key), self._data.shape))])

    def __setitem__(self, key: Any, value: Any) -> None:
        key = _wrapped(_index(key), self._data.shape)
        if isinstance(value, ndarray):
            value = value._data
        elif not _is_basic(key):
            value = _host_args(value)  # CuPy copies the values of an advanced assignment
        elif isinstance(value, np.ndarray) and value.ndim > 0:
            raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
        elif not (_is_scalar(value) or isinstance(value, np.ndarray)):
            raise _unsupported(value)
        self._data[key] = value

    def fill(self, value: Any) -> None:
        if isinstance(value, np.ndarray) and value.ndim > 0:
            raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
        self._data.fill(value._data if isinstance(value, ndarray) else value)

    def astype(self, dtype: Any, order: str = "K", casting: Any = None, subok: Any = None,
               copy: bool = True) -> ndarray:
        dtype = _check_dtype(dtype)
        if not copy and dtype == self.dtype:
            return self
        return _wrap(self._data.astype(dtype, order=order))

    def view(self, *args: Any, **kwargs: Any) -> ndarray:
        return _wrap(self._data.view(*args, **kwargs))

    # ------------------------------------------------------------------ operators
    __add__, __radd__ = _binary("add"), _binary("add", True)
    __sub__, __rsub__ = _binary("subtract"), _binary("subtract", True)
    __mul__, __rmul__ = _binary("multiply"), _binary("multiply", True)
    __truediv__, __rtruediv__ = _binary("true_divide"), _binary("true_divide", True)
    __floordiv__, __rfloordiv__ = _binary("floor_divide"), _binary("floor_divide", True)
    __mod__, __rmod__ = _binary("remainder"), _binary("remainder", True)
    __divmod__, __rdivmod__ = _binary("divmod"), _binary("divmod", True)
    __pow__, __rpow__ = _binary("power"), _binary("power", True)
    __matmul__, __rmatmul__ = _binary("matmul"), _binary("matmul", True)
    __and__, __rand__ = _binary("bitwise_and"), _binary("bitwise_and", True)
    __or__, __ror__ = _binary("bitwise_or"), _binary("bitwise_or", True)
    __xor__, __rxor__ = _binary("bitwise_xor"), _binary("bitwise_xor", True)
    __lshift__, __rlshift__ = _binary("left_shift"), _binary("left_shift", True)
    __rshift__, __rrshift__ = _binary("right_shift"), _binary("right_shift", True)
    __lt__, __le__ = _binary("less"), _binary("less_equal")
    __gt__, __ge__ = _binary("greater"), _binary("greater_equal")
    __eq__, __ne__ = _binary("equal"), _binary("not_equal")  # type: ignore[assignment]
    __iadd__, __isub__ = _inplace("add"), _inplace("subtract")
    __imul__, __itruediv__ = _inplace("multiply"), _inplace("true_divide")
    __ifloordiv__, __imod__ = _inplace("floor_divide"), _inplace("remainder")
    __ipow__, __imatmul__ = _inplace("power"), _inplace("matmul")
    __iand__, __ior__, __ixor__ = (_inplace("bitwise_and"), _inplace("bitwise_or"),
                                   _inplace("bitwise_xor"))

    def __neg__(self) -> ndarray:
        return negative(self)  # noqa: F821  (made from NumPy's ufuncs below)

    def __pos__(self) -> ndarray:
        return self

    def __abs__(self) -> ndarray:
        return absolute(self)  # noqa: F821

    def __invert__(self) -> ndarray:
        return invert(self)  # noqa: F821


for _name in ("all", "any", "argmax", "argmin", "argpartition", "argsort", "choose", "clip",
              "compress", "conj", "conjugate", "copy", "cumprod", "cumsum", "diagonal", "dot",
              "flatten", "max", "mean", "min", "nonzero", "partition", "prod", "put", "ravel",
              "repeat", "reshape", "round", "searchsorted", "sort", "squeeze", "std", "sum",
              "swapaxes", "take", "tobytes", "trace", "transpose", "var"):
    setattr(ndarray, _name, _method(_name))


def _diagonal(self: ndarray, *args: Any, **kwargs: Any) -> ndarray:
    """CuPy's ``diagonal``: a view that can be written into (NumPy's is read-only)."""
    view = self._data.diagonal(*args, **kwargs)
    view.flags.writeable = True
    return _wrap(view)


ndarray.diagonal = _diagonal


class _Flags:
    """``cupy.ndarray.flags``: the layout only.  CuPy has no ``writeable`` flag."""

    __slots__ = ("c_contiguous", "f_contiguous", "owndata")

    def __init__(self, flags: Any) -> None:
        self.c_contiguous, self.f_contiguous = flags.c_contiguous, flags.f_contiguous
        self.owndata = flags.owndata

    def __getitem__(self, name: str) -> bool:
        return getattr(self, name.lower())


# --------------------------------------------------------------------------- transfers


def array(obj: Any, dtype: Any = None, copy: bool = True, order: str = "K", subok: bool = False,
          ndmin: int = 0, *, blocking: bool = False) -> ndarray:
    """A device array from host data (numbers, lists, NumPy arrays) or device arrays."""
    if not isinstance(obj, ndarray):
        _refuse_while_capturing()
    if dtype is not None:
        _check_dtype(dtype)
    return _wrap(np.array(_host_args(obj), dtype=dtype, copy=True if copy else None,
                          order=order, ndmin=ndmin))


def asarray(a: Any, dtype: Any = None, order: Any = None, *, blocking: bool = False) -> ndarray:
    """``a`` on the device (``a`` itself when it is a device array of that dtype already)."""
    if isinstance(a, ndarray) and (dtype is None or np.dtype(dtype) == a.dtype):
        return a
    if not isinstance(a, ndarray):
        _refuse_while_capturing()
    if dtype is not None:
        _check_dtype(dtype)
    return _wrap(np.asarray(_host_args(a), dtype=dtype, order=order))


asanyarray = asarray


def asnumpy(a: Any, stream: Any = None, order: str = "C", out: Any = None) -> np.ndarray:
    """A host (NumPy) copy of ``a``; host data comes back as a NumPy array."""
    if isinstance(a, ndarray):
        return a.get(stream=stream, order=order, out=out)
    return np.asarray(a, order=order)


def get_array_module(*args: Any) -> types.ModuleType:
    if builtins.any(isinstance(a, ndarray) for a in args):
        return sys.modules[__name__]
    return np


# --------------------------------------------------------------------------- namespace


def _copy_namespace(target: dict, source: types.ModuleType) -> None:
    """NumPy's public names on the device: ufuncs and functions wrapped, the rest kept."""
    for name in dir(source):
        if name.startswith("_") or name in target:
            continue
        value = getattr(source, name)
        if isinstance(value, types.ModuleType):
            continue
        if isinstance(value, np.ufunc):
            target[name] = ufunc(value)
        elif isinstance(value, type) or not callable(value):
            target[name] = value  # dtypes (float32 ...), finfo, errstate, pi, newaxis ...
        else:
            target[name] = _function(value)


# NumPy's names become this module's: from here on, sum, any, all, max, min, abs,
# round, pow and bool are the array functions; the code above says builtins.any ...
_copy_namespace(globals(), np)

_where_of_arrays = where  # noqa: F821  (NumPy's, wrapped above)


def where(condition: Any, *choices: Any) -> Any:
    """``cupy.where``: the condition must be a device array; a Python bool fails as in CuPy."""
    if not isinstance(condition, ndarray):
        raise AttributeError(f"'{type(condition).__name__}' object has no attribute 'astype'")
    return _where_of_arrays(condition, *choices)


linalg = types.ModuleType(__name__ + ".linalg", "Device linear algebra (numpy.linalg underneath).")
_copy_namespace(vars(linalg), np.linalg)
_numpy_solve = linalg.solve


def _solve(a: Any, b: Any) -> Any:
    """``cupy.linalg.solve``: unlike NumPy's, it does not broadcast a's and b's batches."""
    if getattr(b, "ndim", 0) > 1 and tuple(a.shape[:-2]) != tuple(b.shape[:-2]):
        raise ValueError("a must have (..., M, M) shape and b must have (..., M, K) for "
                         "multidimensional b")
    return _numpy_solve(a, b)


linalg.solve = _solve
fft = types.ModuleType(__name__ + ".fft", "Device FFTs (numpy.fft underneath).")
_copy_namespace(vars(fft), np.fft)


lib = types.ModuleType(__name__ + ".lib", "cupy.lib: stride tricks.")
lib.stride_tricks = types.ModuleType(__name__ + ".lib.stride_tricks")
lib.stride_tricks.as_strided = _function(np.lib.stride_tricks.as_strided)
lib.stride_tricks.sliding_window_view = _function(np.lib.stride_tricks.sliding_window_view)


class _RandomState:
    """``cupy.random.RandomState``/``Generator``: NumPy's generator, results on the device."""

    def __init__(self, generator: Any) -> None:
        self._generator = generator

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._generator, name)
        return _function(value) if callable(value) else value


random = types.ModuleType(__name__ + ".random", "Device random numbers.")
_global_random = np.random.RandomState()


def _seed(seed: Any = None) -> None:
    _global_random.seed(seed)


random.seed = _seed
random.RandomState = lambda seed=None: _RandomState(np.random.RandomState(seed))
random.default_rng = lambda seed=None: _RandomState(np.random.default_rng(seed))
for _name in ("rand", "randn", "random", "random_sample", "uniform", "normal", "randint",
              "standard_normal", "permutation", "shuffle", "choice", "binomial", "multinomial",
              "exponential", "poisson", "gamma", "beta"):
    setattr(random, _name, _function(getattr(_global_random, _name)))

_SUBMODULES = {"numpy": sys.modules[__name__], "numpy.linalg": linalg, "numpy.fft": fft,
               "numpy.random": random}

def _live_bytes() -> int:
    """The bytes of the device arrays alive that own their memory (the pool's count)."""
    import gc

    return builtins.sum(a._data.nbytes for a in gc.get_objects()
                        if type(a) is ndarray and a._data.base is None)


_POOL = fake_cuda.MemoryPool(_live_bytes)
get_default_memory_pool = lambda: _POOL  # noqa: E731  (cupy.get_default_memory_pool)
cuda.runtime.memGetInfo = lambda: (fake_cuda.TOTAL_MEMORY - _POOL.used_bytes(),
                                   fake_cuda.TOTAL_MEMORY)


# --------------------------------------------------------------------------- cupyx


def _scatter_add(a: ndarray, slices: Any, value: Any) -> None:
    """``cupyx.scatter_add``: ``a[slices] += value``, adding up where an index repeats."""
    if not isinstance(a, ndarray):
        raise _unsupported(a)
    key = _wrapped(_index(slices), a.shape)
    value = value._data if isinstance(value, ndarray) else _host_args(value)
    if not _is_basic(key) and a.dtype not in _SCATTER_ADD_DTYPES:
        raise TypeError("scatter_add only supports int32, float16, float32, float64, "
                        "uint32, uint64, as data type")
    np.add.at(a._data, key, value)


#: The functions of cupyx.scipy.special the stand-in has (CuPy's names), all elementwise.
_SPECIAL = ("erf", "erfc", "erfinv", "erfcx", "gammaln", "digamma", "zeta", "polygamma", "i0",
            "i0e", "i1", "i1e", "j0", "j1", "gammainc", "gammaincc", "k0e", "k1e")


def _kernel_function(function: Any) -> Any:
    """One of CuPy's elementwise kernels that scipy writes as a Python function rather
    than a ufunc (``zeta``, ``polygamma``): device arrays or scalars in, a device array out."""
    def run(*args: Any) -> Any:
        return _wrap(np.asarray(function(*(_kernel_arg(a) for a in args))))

    run.__name__ = function.__name__
    return run


def _special_getattr(name: str) -> Any:
    # scipy is slow to import: only when a special function is first asked for.
    import scipy.special

    if name not in _SPECIAL:
        raise AttributeError(name)
    found = getattr(scipy.special, name)
    function = ufunc(found) if isinstance(found, np.ufunc) else _kernel_function(found)
    setattr(cupyx.scipy.special, name, function)
    return function


cupyx = types.ModuleType(__name__ + ".cupyx", "The stand-in's cupyx (scatter_add, scipy.special).")
cupyx.scatter_add = _scatter_add
cupyx.scipy = types.ModuleType(__name__ + ".cupyx.scipy")
cupyx.scipy.special = types.ModuleType(__name__ + ".cupyx.scipy.special")
cupyx.scipy.special.__getattr__ = _special_getattr


# --------------------------------------------------------------------------- switching


@contextlib.contextmanager
def installed() -> Iterator[types.ModuleType]:
    """Within the block, difflab's CUDA device is this stand-in (``dl.device('cuda')`` works)."""
    from difflab import backend

    previous = backend.use_cupy_module(sys.modules[__name__])
    try:
        yield sys.modules[__name__]
    finally:
        backend.use_cupy_module(*previous)


del _name
