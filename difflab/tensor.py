"""The Tensor: an array, the device it lives on, and its place on the tape.

A :class:`Tensor` holds

* ``array``: the NumPy (CPU) or CuPy (GPU) array with the values;
* ``requires_grad``: whether operations on it are recorded;
* ``grad``: the gradient that ``backward`` accumulates into it (leaves only);
* ``grad_fn``: the tape record (a Node) of the operation that made it, or
  ``None`` for a leaf (a tensor the user made).

Its methods are thin: each calls a primitive in ``difflab.ops`` through
``difflab.autograd.engine.apply``, which computes on the arrays and records
the step.  Names and semantics follow PyTorch.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from difflab import backend
from difflab.autograd.grad_mode import _State
from difflab.dtypes import _Defaults, bool_, float16, float32, float64, int32, int64


def _to_array(data: Any, dtype: Any = None, device: Any = None) -> Any:
    """Turn user data (numbers, lists, arrays, tensors) into an array on ``device``."""
    if isinstance(data, Tensor):
        array = data.array
    elif backend.is_gpu_array(data) or isinstance(data, np.ndarray):
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
        elif dtype is None and array.dtype.kind in "iu":
            array = array.astype(int64)
    if dtype is not None:
        array = array.astype(np.dtype(dtype), copy=False)
    if device is not None:
        array = backend.to_device(array, backend.device(device))
    return array


def _unwrap(x: Any) -> Any:
    return x.array if isinstance(x, Tensor) else x


class Tensor:
    """A multi-dimensional array that can record the operations applied to it.

    ``Tensor(data)`` copies ``data`` like :func:`difflab.tensor`.
    """

    # _post_accumulate_grad_hooks is set only by register_post_accumulate_grad_hook
    # (left unset elsewhere, so creating a tensor costs nothing more).
    __slots__ = ("array", "_requires_grad", "grad", "grad_fn", "_version", "_base",
                 "_post_accumulate_grad_hooks", "__weakref__")
    __array_ufunc__ = None  # make NumPy defer to Tensor's operators: array + tensor -> Tensor

    def __init__(
        self,
        data: Any = (),
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
    ) -> None:
        self.array = np.array(_to_array(data, dtype)) if device is None else _to_array(
            data, dtype, device
        )
        self.grad = None
        self.grad_fn = None
        self._version = [0]
        self._base = None
        self._requires_grad = False
        if requires_grad:
            self.requires_grad = True

    @classmethod
    def _wrap(cls, array: Any, grad_fn: Any = None, version: list | None = None) -> Tensor:
        """Fast constructor used by the engine: no copy, no checks."""
        t = object.__new__(cls)
        t.array = array
        t._requires_grad = grad_fn is not None
        t.grad = None
        t.grad_fn = grad_fn
        t._version = [0] if version is None else version
        t._base = None
        return t

    # ------------------------------------------------------------- attributes
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if value and self.array.dtype.kind not in "fc":
            raise RuntimeError(
                f"only tensors of floating point dtype can require gradients, but this one is "
                f"{self.array.dtype}. Make it floating first: .float() or .double(), or "
                f"create it with dtype=difflab.float32."
            )
        if not value and self.grad_fn is not None:
            raise RuntimeError(
                "you can only change requires_grad of leaf tensors. "
                "Use .detach() to get a tensor that does not require grad."
            )
        self._requires_grad = bool(value)

    @property
    def data(self) -> Tensor:
        """The same values as a tensor cut off from the tape (shares memory, as in PyTorch)."""
        t = Tensor._wrap(self.array, None, self._version)
        return t

    @data.setter
    def data(self, value: Tensor) -> None:
        self.array = _to_array(value)

    @property
    def shape(self) -> tuple:
        return self.array.shape

    def size(self, dim: int | None = None) -> tuple | Any:
        """The shape, or the length of dimension ``dim``."""
        return self.array.shape if dim is None else self.array.shape[dim]

    def numel(self) -> Any:
        return self.array.size

    def dim(self) -> Any:
        return self.array.ndim

    ndimension = dim

    @property
    def ndim(self) -> Any:
        return self.array.ndim

    @property
    def dtype(self) -> np.dtype:
        return self.array.dtype

    @property
    def device(self) -> backend.Device:
        return backend.device_of(self.array)

    @property
    def is_cuda(self) -> bool:
        return backend.is_gpu_array(self.array)

    @property
    def is_leaf(self) -> bool:
        """True for tensors the user made (and results of ops that need no grad)."""
        return self.grad_fn is None

    @property
    def T(self) -> Tensor:  # noqa: N802
        return self.permute(*range(self.ndim - 1, -1, -1))

    @property
    def mT(self) -> Tensor:  # noqa: N802
        return self.transpose(-2, -1)

    def __len__(self) -> Any:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.array.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.array.shape[0]))

    __hash__ = object.__hash__

    # -------------------------------------------------------------- conversion
    def item(self) -> Any:
        """The value of a one-element tensor as a Python number."""
        if self.array.size != 1:
            raise ValueError(
                f"a Tensor with {self.array.size} elements cannot be converted to a Python "
                f"number; only one-element tensors can (use .tolist() for the rest)"
            )
        return self.array.reshape(()).item()

    def tolist(self) -> Any:
        return backend.to_numpy(self.array).tolist()

    def numpy(self, force: bool = False) -> np.ndarray:
        """The values as a NumPy array; on the CPU it *shares memory* with the tensor."""
        if self.requires_grad and not force:
            raise RuntimeError(
                "Can't call numpy() on a tensor that requires grad: the array would not be "
                "recorded. Use tensor.detach().numpy() instead."
            )
        if self.is_cuda:
            if not force:
                raise TypeError(
                    "can't convert a CUDA tensor to numpy. Use tensor.cpu() to copy it to "
                    "the host first."
                )
            return backend.to_numpy(self.array)
        return self.array

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if self.requires_grad:
            raise RuntimeError(
                "Can't convert a tensor that requires grad to a NumPy array: the result "
                "would silently leave the tape. Use tensor.detach().numpy() if that is "
                "what you want."
            )
        array = backend.to_numpy(self.array)
        return array if dtype is None else array.astype(dtype)

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.kind not in "iub":
            raise TypeError("only integer tensors of a single element can be used as an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self.array.size != 1:
            raise RuntimeError(
                f"Boolean value of a tensor with {self.array.size} elements is ambiguous: "
                f"use .any() or .all()"
            )
        return bool(self.item())

    def __repr__(self) -> str:
        body = np.array2string(
            backend.to_numpy(self.array), separator=", ", prefix="tensor(", precision=4
        )
        extras = []
        if self.is_cuda:
            extras.append(f"device='{self.device}'")
        if self.dtype not in (_Defaults.dtype, int64, bool_):
            extras.append(f"dtype={self.dtype}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.op.name}Backward>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return "tensor(" + ", ".join([body, *extras]) + ")"

    # ----------------------------------------------------------------- autograd
    def backward(
        self,
        gradient: Any = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Sequence[Tensor] | None = None,
    ) -> None:
        """Add d(self)/d(leaf) into the ``.grad`` of every leaf that requires grad.

        For a non-scalar tensor, ``gradient`` (same shape as self) is the vector
        v of the vector-Jacobian product vᵀJ that is computed.
        """
        from difflab.autograd.functional import backward

        backward(self, gradient, retain_graph, create_graph, inputs)

    def detach(self) -> Tensor:
        """The same values, cut off from the tape (shares memory and version)."""
        t = Tensor._wrap(self.array, None, self._version)
        t._base = self
        return t

    def detach_(self) -> Tensor:
        self.grad_fn = None
        self._requires_grad = False
        return self

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self.requires_grad = requires_grad
        return self

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor too (normally only leaves get one)."""
        if self.grad_fn is None:
            if not self.requires_grad:
                raise RuntimeError("can't retain_grad on a tensor that does not require grad")
            return
        self.grad_fn.retained = weakref.ref(self)

    def register_post_accumulate_grad_hook(self, hook: Any) -> Any:
        """Call ``hook(self)`` each time a backward pass has finished adding into ``self.grad``.

        For leaves that require grad, as in PyTorch.  Data-parallel training uses
        it to start sending a gradient to the other processes as soon as it is
        final.  Returns a handle; ``handle.remove()`` unregisters the hook.
        """
        if self.grad_fn is not None or not self.requires_grad:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors or on "
                "tensors that do not require grad: only leaves that require grad get a .grad."
            )
        from difflab.utils.hooks import RemovableHandle

        if getattr(self, "_post_accumulate_grad_hooks", None) is None:
            self._post_accumulate_grad_hooks = []
        self._post_accumulate_grad_hooks.append(hook)
        return RemovableHandle(self._post_accumulate_grad_hooks, hook)

    @property
    def retains_grad(self) -> bool:
        return self.grad_fn is not None and getattr(self.grad_fn, "retained", None) is not None

    def clone(self) -> Tensor:
        """A copy with its own memory; gradients flow back to the original."""
        return _apply(_structural.Clone, self)

    # ----------------------------------------------------------------- devices
    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)`` or ``to(other_tensor)``."""
        device, dtype = to_arguments(args, kwargs)
        out = self
        if device is not None:
            device = backend.device(device)
            if device != self.device:
                out = _apply(_structural.ToDevice, out, device=device)
        if dtype is not None and np.dtype(dtype) != out.dtype:
            out = _apply(_structural.Cast, out, dtype=np.dtype(dtype))
        return out

    def cuda(self, device: Any = None) -> Tensor:
        return self.to("cuda" if device is None else backend.Device("cuda", int(device)))

    def cpu(self) -> Tensor:
        return self.to("cpu")

    def type(self, dtype: Any = None) -> Any:
        if dtype is None:
            return f"difflab.{self.dtype}"
        return self.to(dtype)

    def float(self) -> Tensor:
        return self.to(float32)

    def double(self) -> Tensor:
        return self.to(float64)

    def half(self) -> Tensor:
        return self.to(float16)

    def long(self) -> Tensor:
        return self.to(int64)

    def int(self) -> Tensor:
        return self.to(int32)

    def bool(self) -> Tensor:
        return self.to(bool_)

    def type_as(self, other: Tensor) -> Tensor:
        return self.to(other.dtype)

    def is_floating_point(self) -> bool:
        return self.dtype.kind == "f"

    # ------------------------------------------------------------- arithmetic
    def __add__(self, other: Any) -> Tensor:
        return _apply(_ops.ADD, self, _unwrap_const(other))

    def __radd__(self, other: Any) -> Tensor:
        return _apply(_ops.ADD, _unwrap_const(other), self)

    def __sub__(self, other: Any) -> Tensor:
        return _apply(_ops.SUB, self, _unwrap_const(other))

    def __rsub__(self, other: Any) -> Tensor:
        return _apply(_ops.SUB, _unwrap_const(other), self)

    def __mul__(self, other: Any) -> Tensor:
        return _apply(_ops.MUL, self, _unwrap_const(other))

    def __rmul__(self, other: Any) -> Tensor:
        return _apply(_ops.MUL, _unwrap_const(other), self)

    def __truediv__(self, other: Any) -> Tensor:
        return _apply(_ops.DIV, self, _unwrap_const(other))

    def __rtruediv__(self, other: Any) -> Tensor:
        return _apply(_ops.DIV, _unwrap_const(other), self)

    def __pow__(self, other: Any) -> Tensor:
        return _apply(_ops.POW, self, _unwrap_const(other))

    def __rpow__(self, other: Any) -> Tensor:
        return _apply(_ops.POW, _unwrap_const(other), self)

    def __matmul__(self, other: Any) -> Tensor:
        return _apply(_structural.MatMul, self, _unwrap_const(other))

    def __rmatmul__(self, other: Any) -> Tensor:
        return _apply(_structural.MatMul, _unwrap_const(other), self)

    def __neg__(self) -> Tensor:
        return _apply(_ops.PRIMITIVES["neg"], self)

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        return self.abs()

    def __floordiv__(self, other: Any) -> Tensor:
        return _no_grad_result(self.array // _unwrap(other))

    def __mod__(self, other: Any) -> Tensor:
        return _no_grad_result(self.array % _unwrap(other))

    # comparisons and logic: no gradient flows through them
    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _no_grad_result(self.array == _unwrap(other))

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _no_grad_result(self.array != _unwrap(other))

    def __lt__(self, other: Any) -> Tensor:
        return _no_grad_result(self.array < _unwrap(other))

    def __le__(self, other: Any) -> Tensor:
        return _no_grad_result(self.array <= _unwrap(other))

    def __gt__(self, other: Any) -> Tensor:
        return _no_grad_result(self.array > _unwrap(other))

    def __ge__(self, other: Any) -> Tensor:
        return _no_grad_result(self.array >= _unwrap(other))

    def __and__(self, other: Any) -> Tensor:
        return _no_grad_result(self.array & _unwrap(other))

    def __or__(self, other: Any) -> Tensor:
        return _no_grad_result(self.array | _unwrap(other))

    def __xor__(self, other: Any) -> Tensor:
        return _no_grad_result(self.array ^ _unwrap(other))

    def __invert__(self) -> Tensor:
        return _no_grad_result(~self.array)

    def eq(self, other: Any) -> Tensor:
        return self == other

    def ne(self, other: Any) -> Tensor:
        return self != other

    def lt(self, other: Any) -> Tensor:
        return self < other

    def le(self, other: Any) -> Tensor:
        return self <= other

    def gt(self, other: Any) -> Tensor:
        return self > other

    def ge(self, other: Any) -> Tensor:
        return self >= other

    def equal(self, other: Tensor) -> bool:
        return self.shape == other.shape and bool((self.array == other.array).all())

    def allclose(self, other: Any, rtol: float = 1e-5, atol: float = 1e-8) -> bool:
        xp = backend.array_module(self.array)
        return bool(xp.allclose(self.array, _unwrap(other), rtol=rtol, atol=atol))

    def isnan(self) -> Tensor:
        return _no_grad_result(backend.array_module(self.array).isnan(self.array))

    def isfinite(self) -> Tensor:
        return _no_grad_result(backend.array_module(self.array).isfinite(self.array))

    def any(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        return _no_grad_result(self.array.any(axis=dim, keepdims=keepdim))

    def all(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        return _no_grad_result(self.array.all(axis=dim, keepdims=keepdim))

    def sign(self) -> Tensor:
        return _no_grad_result(backend.array_module(self.array).sign(self.array))

    def round(self) -> Tensor:
        return _no_grad_result(backend.array_module(self.array).round(self.array))

    def floor(self) -> Tensor:
        return _no_grad_result(backend.array_module(self.array).floor(self.array))

    def ceil(self) -> Tensor:
        return _no_grad_result(backend.array_module(self.array).ceil(self.array))

    # ---------------------------------------------------- elementwise functions
    def rsqrt(self) -> Tensor:
        return 1.0 / self.sqrt()

    def square(self) -> Tensor:
        return self * self

    def reciprocal(self) -> Tensor:
        return 1.0 / self

    def neg(self) -> Tensor:
        return -self

    def add(self, other: Any, alpha: Any = 1) -> Tensor:
        return self + (other if alpha == 1 else other * alpha)

    def sub(self, other: Any, alpha: Any = 1) -> Tensor:
        return self - (other if alpha == 1 else other * alpha)

    def mul(self, other: Any) -> Tensor:
        return self * other

    def div(self, other: Any) -> Tensor:
        return self / other

    def pow(self, exponent: Any) -> Tensor:
        return self**exponent

    def clamp(self, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
        if min is None and max is None:
            raise ValueError("clamp needs at least one of min and max")
        return _apply(_structural.Clamp, self, low=min, high=max)

    clip = clamp

    def softmax(self, dim: int) -> Tensor:
        from difflab import functions

        return functions.softmax(self, dim)

    def log_softmax(self, dim: int) -> Tensor:
        from difflab import functions

        return functions.log_softmax(self, dim)

    # --------------------------------------------------------------- reductions
    def sum(self, dim: Any = None, keepdim: bool = False, *, axis: Any = None,
            keepdims: bool | None = None, dtype: Any = None) -> Tensor:
        """Σ over ``dim`` (all elements by default).  ``axis``/``keepdims`` are accepted too."""
        dim = axis if dim is None else dim
        keepdim = keepdims if keepdims is not None else keepdim
        out = _apply(_structural.Sum, self, axis=_dims(dim), keepdims=keepdim)
        return out if dtype is None else out.to(dtype)

    def mean(self, dim: Any = None, keepdim: bool = False, *, axis: Any = None,
             keepdims: bool | None = None) -> Tensor:
        """Σx / n over ``dim``."""
        dim = axis if dim is None else dim
        keepdim = keepdims if keepdims is not None else keepdim
        if self.dtype.kind not in "fc":
            raise RuntimeError(
                f"mean() needs a floating point tensor, got {self.dtype}: call .float() first"
            )
        count = _count(self.shape, _dims(dim))
        return self.sum(dim, keepdim) * (1.0 / count if count else float("nan"))

    def var(self, dim: Any = None, keepdim: bool = False, unbiased: bool = True, *,
            correction: Any = None) -> Tensor:
        """Σ(x - mean)² / (n - correction); correction = 1 (unbiased) by default."""
        correction = (1 if unbiased else 0) if correction is None else correction
        centered = self - self.mean(dim, keepdim=True)
        count = _count(self.shape, _dims(dim))
        return (centered * centered).sum(dim, keepdim) / max(count - correction, 0)

    def std(self, dim: Any = None, keepdim: bool = False, unbiased: bool = True, *,
            correction: Any = None) -> Tensor:
        return self.var(dim, keepdim, unbiased, correction=correction).sqrt()

    def prod(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        return _apply(_structural.Prod, self, axis=dim, keepdims=keepdim)

    def max(self, dim: Any = None, keepdim: bool = False) -> Any:
        """The maximum; with ``dim``, a pair (values, indices) as in PyTorch."""
        if isinstance(dim, Tensor):
            return self.maximum(dim)
        values = _apply(_structural.MaxReduce, self, axis=dim, keepdims=keepdim)
        if dim is None:
            return values
        return _MinMax((values, self.argmax(dim, keepdim)))

    def min(self, dim: Any = None, keepdim: bool = False) -> Any:
        if isinstance(dim, Tensor):
            return self.minimum(dim)
        values = -_apply(_structural.MaxReduce, -self, axis=dim, keepdims=keepdim)
        if dim is None:
            return values
        return _MinMax((values, self.argmin(dim, keepdim)))

    def amax(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        return _apply(_structural.MaxReduce, self, axis=dim, keepdims=keepdim)

    def amin(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        return -_apply(_structural.MaxReduce, -self, axis=dim, keepdims=keepdim)

    def argmax(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        xp = backend.array_module(self.array)
        out = xp.argmax(self.array, axis=dim)
        if keepdim and dim is not None:
            out = xp.expand_dims(out, dim)
        return _no_grad_result(out.astype(int64))

    def argmin(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        xp = backend.array_module(self.array)
        out = xp.argmin(self.array, axis=dim)
        if keepdim and dim is not None:
            out = xp.expand_dims(out, dim)
        return _no_grad_result(out.astype(int64))

    def cumsum(self, dim: int) -> Tensor:
        return _apply(_structural.CumSum, self, axis=dim)

    def logsumexp(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        """log Σ exp(x), computed as m + log Σ exp(x - m) with m = max x (no overflow)."""
        m = self.detach().amax(dim, keepdim=True)
        m = m.masked_fill(~m.isfinite(), 0.0)
        out = (self - m).exp().sum(dim, keepdim=True).log() + m
        return out if keepdim else out.squeeze(_dims(dim)) if dim is not None else out.reshape(())

    def norm(self, p: Any = 2, dim: Any = None, keepdim: bool = False) -> Tensor:
        """The vector p-norm (p = 2 by default; 1, inf and 'fro' also)."""
        if p in (2, "fro"):
            return (self * self).sum(dim, keepdim).sqrt()
        if p == 1:
            return self.abs().sum(dim, keepdim)
        if p in (float("inf"), "inf"):
            return self.abs().amax(dim, keepdim)
        return (self.abs() ** p).sum(dim, keepdim) ** (1.0 / p)

    # ----------------------------------------------------------- linear algebra
    def matmul(self, other: Any) -> Tensor:
        return self @ other

    def mm(self, other: Tensor) -> Tensor:
        if self.ndim != 2 or other.ndim != 2:
            raise RuntimeError(
                f"mm expects two matrices, got shapes {tuple(self.shape)} and "
                f"{tuple(other.shape)} (use matmul for batches and vectors)"
            )
        return self @ other

    def mv(self, vec: Tensor) -> Tensor:
        if self.ndim != 2 or vec.ndim != 1:
            raise RuntimeError(
                f"mv expects a matrix and a vector, got shapes {tuple(self.shape)} and "
                f"{tuple(vec.shape)}"
            )
        return self @ vec

    def dot(self, other: Tensor) -> Tensor:
        if self.ndim != 1 or other.ndim != 1:
            raise RuntimeError(
                f"1D tensors expected, but got {self.ndim}D and {other.ndim}D tensors"
            )
        return self @ other

    def t(self) -> Tensor:
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, got {self.ndim}")
        return self.T

    # ------------------------------------------------------------ shape & views
    def reshape(self, *shape: Any) -> Tensor:
        shape = _shape_args(shape)
        return _view_of(self, _apply(_structural.Reshape, self, shape=shape))

    def view(self, *shape: Any) -> Tensor:
        if shape and not isinstance(shape[0], (tuple, list)) and not isinstance(shape[0], int):
            return self.to(shape[0])  # view(dtype)
        return self.reshape(*shape)

    def view_as(self, other: Tensor) -> Tensor:
        return self.reshape(other.shape)

    def reshape_as(self, other: Tensor) -> Tensor:
        return self.reshape(other.shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        if self.ndim == 0:
            return self.reshape(1)
        start, end = start_dim % self.ndim, end_dim % self.ndim
        shape = self.shape[:start] + (-1,) + self.shape[end + 1:]
        return self.reshape(shape)

    def ravel(self) -> Tensor:
        return self.reshape(-1)

    def squeeze(self, dim: Any = None) -> Tensor:
        if dim is None:
            shape = tuple(n for n in self.shape if n != 1)
        else:
            dims = {d % max(self.ndim, 1) for d in ((dim,) if isinstance(dim, int) else dim)}
            shape = tuple(n for i, n in enumerate(self.shape) if not (i in dims and n == 1))
        return self.reshape(shape)

    def unsqueeze(self, dim: int) -> Tensor:
        dim = dim % (self.ndim + 1)
        return self.reshape(self.shape[:dim] + (1,) + self.shape[dim:])

    def permute(self, *dims: Any) -> Tensor:
        return _view_of(self, _apply(_structural.Permute, self, axes=_shape_args(dims)))

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        axes = list(range(self.ndim))
        axes[dim0], axes[dim1] = axes[dim1], axes[dim0]
        return self.permute(*axes)

    swapaxes = transpose

    def expand(self, *sizes: Any) -> Tensor:
        sizes = _shape_args(sizes)
        lead = len(sizes) - self.ndim
        shape = tuple(
            self.shape[i - lead] if (n == -1 and i >= lead) else n for i, n in enumerate(sizes)
        )
        return _view_of(self, _apply(_structural.Expand, self, shape=shape))

    def expand_as(self, other: Tensor) -> Tensor:
        return self.expand(other.shape)

    def broadcast_to(self, shape: Any) -> Tensor:
        return self.expand(*shape)

    def repeat(self, *sizes: Any) -> Tensor:
        """Tile the tensor ``sizes[i]`` times along each dimension (copies)."""
        sizes = _shape_args(sizes)
        x = self.reshape((1,) * (len(sizes) - self.ndim) + self.shape)
        # Each repeat is an expand of a new axis followed by a reshape: no new rule needed.
        expanded_shape, final_shape, view_shape = [], [], []
        for n, r in zip(x.shape, sizes):
            view_shape += [1, n]
            expanded_shape += [r, n]
            final_shape.append(r * n)
        return x.reshape(view_shape).expand(expanded_shape).reshape(final_shape)

    def flip(self, dims: Any) -> Tensor:
        out = self
        for d in (dims,) if isinstance(dims, int) else dims:
            out = _apply(_structural.Flip, out, axis=d)
        return out

    def split(self, split_size_or_sections: Any, dim: int = 0) -> tuple:
        from difflab import functions

        return functions.split(self, split_size_or_sections, dim)

    def chunk(self, chunks: int, dim: int = 0) -> tuple:
        from difflab import functions

        return functions.chunk(self, chunks, dim)

    def unbind(self, dim: int = 0) -> tuple:
        index = [slice(None)] * self.ndim
        pieces = []
        for i in range(self.shape[dim]):
            index[dim] = i
            pieces.append(self[tuple(index)])
        return tuple(pieces)

    def contiguous(self) -> Tensor:
        return self

    def masked_fill(self, mask: Any, value: Any) -> Tensor:
        from difflab import functions

        return functions.where(mask, value, self)

    # ---------------------------------------------------------------- indexing
    def __getitem__(self, index: Any) -> Tensor:
        index = _index_arrays(index)
        return _view_of(self, _apply(_structural.Index, self, index=index))

    def __setitem__(self, index: Any, value: Any) -> None:
        index = _index_arrays(index)
        value_tensor = value if isinstance(value, Tensor) else None
        records = _State.enabled and (
            self.requires_grad or (value_tensor is not None and value_tensor.requires_grad)
        )
        self._check_inplace("__setitem__", records)
        if records:
            old = self._snapshot()
            result = _apply(_structural.IndexPut, old, _unwrap_const(value), index=index)
            self._rebase(result)
        else:
            self.array[index] = _unwrap(value)
        self._version[0] += 1

    # ---------------------------------------------------------------- in place
    def _check_inplace(self, name: str, records: bool) -> None:
        if not records:
            return
        if self.grad_fn is None and self.requires_grad:
            raise RuntimeError(
                f"a leaf tensor that requires grad is being used in an in-place operation "
                f"({name}). Its gradient would be lost. Do the update under "
                f"'with difflab.no_grad():', or use an out-of-place operation."
            )
        if self._base is not None and self._base.requires_grad:
            raise RuntimeError(
                f"in-place operation {name} on a view of a tensor that is part of a graph is "
                f"not supported: the base tensor would not know about it. Apply the "
                f"operation to the base tensor (x[index] = ...) or clone() the view first."
            )

    def _snapshot(self) -> Tensor:
        """A copy of the current value, standing for it on the tape."""
        old = Tensor._wrap(self.array.copy(), self.grad_fn, [self._version[0]])
        old._requires_grad = self.requires_grad
        return old

    def _rebase(self, result: Tensor) -> None:
        """Make ``self`` hold ``result``'s values, in its own memory, and its tape record."""
        self.array[...] = result.array
        self.grad_fn = result.grad_fn
        self._requires_grad = True
        if self.grad_fn is not None and getattr(self.grad_fn, "saved_sources", None):
            # the record may have saved its output: that is now self's array
            self.grad_fn.saved = tuple(
                self.array if s is result.array else s for s in self.grad_fn.saved
            )
            self.grad_fn.saved_versions = [
                (self._version, self._version[0] + 1) if box is result._version else (box, v)
                for box, v in self.grad_fn.saved_versions
            ]

    def _inplace(self, op: Any, other: Any, ufunc_name: str) -> Tensor:
        other_tensor = other if isinstance(other, Tensor) else None
        records = _State.enabled and (
            self.requires_grad or (other_tensor is not None and other_tensor.requires_grad)
        )
        self._check_inplace(ufunc_name + "_", records)
        if records:
            result = _apply(op, self._snapshot(), _unwrap_const(other))
            self._rebase(result)
        else:
            xp = backend.array_module(self.array)
            try:
                getattr(xp, ufunc_name)(self.array, _unwrap(other), out=self.array,
                                        casting="same_kind")
            except (TypeError, ValueError) as exc:
                raise RuntimeError(
                    f"{ufunc_name}_: cannot write the result into this tensor "
                    f"(shape {tuple(self.shape)}, dtype {self.dtype}): {exc}"
                ) from None
        self._version[0] += 1
        return self

    def add_(self, other: Any, alpha: Any = 1) -> Tensor:
        return self._inplace(_ops.ADD, other if alpha == 1 else other * alpha, "add")

    def sub_(self, other: Any, alpha: Any = 1) -> Tensor:
        return self._inplace(_ops.SUB, other if alpha == 1 else other * alpha, "subtract")

    def mul_(self, other: Any) -> Tensor:
        return self._inplace(_ops.MUL, other, "multiply")

    def div_(self, other: Any) -> Tensor:
        return self._inplace(_ops.DIV, other, "divide")

    __iadd__ = add_
    __isub__ = sub_
    __imul__ = mul_
    __itruediv__ = div_

    def zero_(self) -> Tensor:
        return self.fill_(0)

    def fill_(self, value: Any) -> Tensor:
        self[...] = value
        return self

    def copy_(self, src: Any) -> Tensor:
        """Copy ``src``'s values into this tensor (broadcasting, keeping this dtype)."""
        src_array = _unwrap(src)
        if isinstance(src, Tensor) and src.device != self.device:
            src_array = backend.to_device(src.array, self.device)
            src = Tensor._wrap(src_array, src.grad_fn) if src.requires_grad else src_array
        self[...] = src
        return self

    def clamp_(self, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
        self[...] = self.clamp(min, max)
        return self

    def normal_(self, mean: float = 0.0, std: float = 1.0) -> Tensor:
        from difflab.random import normal_array

        self[...] = normal_array(mean, std, self.shape, self.dtype, self.device)
        return self

    def uniform_(self, a: float = 0.0, b: float = 1.0) -> Tensor:
        from difflab.random import uniform_array

        self[...] = uniform_array(a, b, self.shape, self.dtype, self.device)
        return self


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
    if kwargs:
        raise TypeError(f"to() got unexpected arguments {sorted(kwargs)}")
    for arg in args:
        if isinstance(arg, Tensor):
            device, dtype = arg.device, arg.dtype
        elif isinstance(arg, (str, backend.Device, int)) and not isinstance(arg, bool):
            device = arg
        else:
            dtype = arg
    return device, dtype


class _MinMax(tuple):
    """(values, indices), readable as ``.values`` and ``.indices`` as in PyTorch."""

    @property
    def values(self) -> Tensor:
        return self[0]

    @property
    def indices(self) -> Tensor:
        return self[1]


# ------------------------------------------------------------------------ helpers


def _unwrap_const(x: Any) -> Any:
    """The other operand of an operator: tensors, numbers and arrays pass through;
    lists become arrays (floats in the default dtype)."""
    # Concrete types first: this runs on every operator call, and isinstance against
    # the numbers.Number ABC is several times slower.
    if isinstance(x, (Tensor, float, int, np.ndarray, np.generic, complex)):
        return x
    if backend.is_gpu_array(x):
        return x
    if isinstance(x, (list, tuple)):
        array = np.asarray(x)
        return array.astype(_Defaults.dtype) if array.dtype.kind == "f" else array
    raise TypeError(
        f"unsupported operand of type {type(x).__name__} for a Tensor operation: use a "
        f"number, a Tensor or an array"
    )


def _no_grad_result(array: Any) -> Tensor:
    """Wrap the result of an operation no gradient flows through (comparisons, sign, ...)."""
    if isinstance(array, np.generic) or not hasattr(array, "shape"):
        array = np.asarray(array)  # NumPy gives scalars for 0-d results
    return Tensor._wrap(array)


def _view_of(base: Tensor, out: Tensor) -> Tensor:
    """Mark ``out`` as a view of ``base`` when they share memory (one version counter)."""
    array = out.array
    owner = array.base if hasattr(array, "base") else None
    if owner is not None and (owner is base.array or owner is getattr(base.array, "base", None)):
        out._version = base._version
        out._base = base if base._base is None else base._base
    return out


def _shape_args(shape: Sequence[Any]) -> tuple:
    """Accept f(2, 3) and f((2, 3)) alike."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple(int(n) for n in shape)


def _dims(dim: Any) -> Any:
    if dim is None or isinstance(dim, int):
        return dim
    return tuple(dim)


def _count(shape: tuple, dims: Any) -> Any:
    if dims is None:
        n = 1
        for s in shape:
            n *= s
        return n
    n = 1
    for d in (dims,) if isinstance(dims, int) else dims:
        n *= shape[d]
    return n


def _index_arrays(index: Any) -> Any:
    """Tensors and lists inside an index become arrays NumPy understands."""
    if isinstance(index, tuple):
        return tuple(_index_arrays(i) for i in index)
    if isinstance(index, Tensor):
        return index.array
    if isinstance(index, list):
        return np.asarray(index)
    return index


# At the bottom: the engine imports Tensor itself.
from difflab.autograd.engine import apply as _apply  # noqa: E402
from difflab.ops import registry as _ops  # noqa: E402
from difflab.ops import structural as _structural  # noqa: E402


def _elementwise_method(op: Any) -> Any:
    """``Tensor.<name>`` for an elementwise primitive of the registry."""
    if isinstance(op, _structural.UnaryOp):
        def method(self: Tensor) -> Tensor:
            return _apply(op, self)
    else:
        def method(self: Tensor, other: Any) -> Tensor:
            return _apply(op, self, _unwrap_const(other))
    method.__name__ = method.__qualname__ = op.name
    method.__doc__ = f"{op.rule.description or op.name}, elementwise.  {op.math}."
    return method


def add_elementwise_methods() -> None:
    """Give Tensor a method for each elementwise primitive it lacks (``x.sin()``, ...).

    The operators and the methods with extra arguments (``add(other, alpha)``)
    are written out above; the rest come from the registry, so a primitive
    registered at run time is a method too.
    """
    for op in _ops.elementwise_ops():
        if not hasattr(Tensor, op.name):
            setattr(Tensor, op.name, _elementwise_method(op))


add_elementwise_methods()
