"""Array backends: NumPy on the CPU, CuPy on a CUDA GPU.

This is the only module of difflab that knows CuPy exists.  Everything else
asks an array for its module (:func:`array_module`) and calls ``xp.sin``,
``xp.matmul`` ... on it, so the same code runs on either backend.

CuPy is imported lazily, the first time a GPU is asked for, so that a machine
without it (or without a GPU) runs everything except the GPU.

With the environment variable ``DIFFLAB_FAKE_CUDA=1`` the "GPU" is
:mod:`difflab.testing.fake_cupy`, a stand-in for CuPy that runs on the CPU and
refuses implicit conversions to NumPy as CuPy does (for testing the GPU paths).
"""

from __future__ import annotations

import importlib
import math
import os
import types
from typing import Any

import numpy as np

_cupy: types.ModuleType | None = None
_cupy_error: str | None = None
STAND_IN_VARIABLE = "DIFFLAB_FAKE_CUDA"  # =1: CUDA is the CPU stand-in for CuPy
# The stand-in is loaded by name, as cupy is: it is a testing tool that sits above the
# library (it installs itself through use_cupy_module), so backend does not import it.
STAND_IN_MODULE = "difflab.testing.fake_cupy"

GPU_INSTALL_HINT = (
    "Install the GPU extra that matches your CUDA driver: "
    "pip install 'difflab[cuda12]' (CUDA 12) or 'difflab[cuda13]' (CUDA 13)."
)


def _load_cupy() -> types.ModuleType | None:
    """Import CuPy once; remember why it failed if it did."""
    global _cupy, _cupy_error
    if _cupy is None and _cupy_error is None:
        try:
            if os.environ.get(STAND_IN_VARIABLE) == "1":
                cupy = importlib.import_module(STAND_IN_MODULE)
            else:
                import cupy

            if cupy.cuda.runtime.getDeviceCount() < 1:
                _cupy_error = "CuPy is installed but found no CUDA device."
            else:
                _cupy = cupy
        except Exception as exc:  # ImportError, or a CUDA driver error
            _cupy_error = f"CuPy is not usable here ({type(exc).__name__}: {exc})."
    return _cupy


def use_cupy_module(module: types.ModuleType | None, error: str | None = None) -> tuple:
    """Put ``module`` where CuPy goes (the CPU stand-in, in tests); returns what was there.

    ``use_cupy_module(*previous)`` puts it back.
    """
    global _cupy, _cupy_error, _cupy_namespace
    previous = (_cupy, _cupy_error)
    _cupy, _cupy_error, _cupy_namespace = module, error, None
    return previous


def cupy_or_raise() -> types.ModuleType:
    """Return the cupy module, or raise a RuntimeError that says how to get it."""
    cp = _load_cupy()
    if cp is None:
        raise RuntimeError(f"CUDA was asked for, but {_cupy_error} {GPU_INSTALL_HINT}")
    return cp


def _scatter_by_product(module: types.ModuleType, values: Any, index: Any,
                        shape: tuple) -> Any:
    """``scatter_add`` for values of another array type (forward mode's dual numbers, in a
    backward pass over them): a product with the 0/1 matrix S of the scatter, out = S·v,
    made of the NumPy functions such types implement, since they cannot be written into
    an array of numbers."""
    positions = module.arange(math.prod(shape)).reshape(shape)[index]
    n = math.prod(values.shape)
    select = module.zeros((math.prod(shape), n))
    module.add.at(select, (module.broadcast_to(positions, values.shape).reshape(-1),
                           module.arange(n)), 1.0)
    return module.matmul(select, module.reshape(values, (n,))).reshape(shape)


#: The special functions the derivative rules call by their array-namespace name, each with
#: its name in scipy.special (NumPy) and cupyx.scipy.special (CuPy): lgamma is gammaln there.
#: ``polygamma`` is built from two of them (``_polygamma``).
SPECIAL_FUNCTIONS: dict[str, str] = {
    "erf": "erf", "erfc": "erfc", "erfinv": "erfinv", "erfcx": "erfcx", "lgamma": "gammaln",
    "digamma": "digamma", "zeta": "zeta", "gammainc": "gammainc", "gammaincc": "gammaincc",
    "i0": "i0", "i0e": "i0e", "i1": "i1", "i1e": "i1e",
    "bessel_j0": "j0", "bessel_j1": "j1", "scaled_modified_bessel_k0": "k0e",
    "scaled_modified_bessel_k1": "k1e"}


def _polygamma(special: Any) -> Any:
    """``polygamma(n, x)`` = ψ⁽ⁿ⁾(x) = (-1)ⁿ⁺¹ n! ζ(n + 1, x) for n ≥ 1 (ψ itself for n = 0).

    scipy's own polygamma first converts x with ``asarray``, which would turn forward
    mode's dual numbers into their values and drop the tangents; the two ufuncs it is
    made of reach a dual number's own rules (``numpy_protocol``: ``zeta`` with an integer
    order is polygamma again)."""
    def polygamma(n: int, x: Any) -> Any:
        if n == 0:
            return special.digamma(x)
        return ((-1.0) ** (n + 1) * math.factorial(n)) * special.zeta(n + 1, x)

    return polygamma


def _extended(module: types.ModuleType, special: Any, add_at: Any) -> types.ModuleType:
    """``module``'s namespace plus the few functions the derivative rules need.

    The special functions of :data:`SPECIAL_FUNCTIONS` (from ``special``, scipy's or
    cupyx's module; ``None``: looked up when first used) and ``scatter_add(values,
    index, shape)``: the transpose of indexing, ``zeros(shape)`` with
    ``[index] += values``, which adds up where an index repeats an element.  ``fft`` is
    named outright: NumPy 2 loads its submodules when first read (``vars`` may lack it).
    """
    namespace = types.ModuleType(module.__name__)
    namespace.__dict__.update(vars(module))
    namespace.fft = module.fft
    for name in SPECIAL_FUNCTIONS:  # (numpy.i0 is a slow Python function: scipy's ufunc)
        namespace.__dict__.pop(name, None)
    if special is not None:
        for name, spelled in SPECIAL_FUNCTIONS.items():
            function = getattr(special, spelled, None)  # (an older CuPy may lack one:
            if function is not None:                    # only that function is missing)
                setattr(namespace, name, function)
        namespace.polygamma = _polygamma(special)

    def scatter_add(values: Any, index: Any, shape: tuple) -> Any:
        if not isinstance(values, module.ndarray) and hasattr(values, "__array_function__"):
            return _scatter_by_product(module, values, index, shape)
        out = module.zeros(shape, dtype=values.dtype)
        if is_basic_index(index):  # slices and integers never repeat an element
            out[index] = values
        else:
            add_at(out, index, values)  # an integer array may: those must add up
        return out

    namespace.scatter_add = scatter_add
    return namespace


def is_basic_index(index: Any) -> bool:
    """Whether ``x[index]`` is basic indexing (slices, integers, None, ...): a view of x."""
    items = index if isinstance(index, tuple) else (index,)
    return all(isinstance(i, (int, slice, type(None), type(Ellipsis))) for i in items)


def is_view_of(array: Any, base: Any) -> bool:
    """Whether ``array`` reads ``base``'s memory (made from it without a copy: a view).

    NumPy and CuPy point a view's ``.base`` at the array that owns the memory (a view of
    a view too); an array type without ``.base`` (the CuPy stand-in) is compared by the
    memory it spans.
    """
    owner = getattr(array, "base", None)
    if owner is not None:
        return owner is base or owner is getattr(base, "base", None)
    return is_gpu_array(array) and bool(array_module(array).may_share_memory(array, base))


def integer_index_arrays(index: Any, shape: tuple) -> list[tuple[Any, int, int]]:
    """The integer arrays of ``x[index]`` on an array of ``shape``: ``(array, axis, size)``,
    with the axis each reads and its size.

    NumPy's rules: ``None`` adds an axis and reads none, ``...`` stands for the axes no
    other item reads, a boolean mask reads as many axes as it has, anything else one.
    (CuPy wraps an integer array's entries out of range where NumPy raises; the indexing
    primitives check them on the device with this list.)
    """
    items = index if isinstance(index, tuple) else (index,)

    def reads(item: Any) -> int:
        if item is None or item is Ellipsis:
            return 0
        kind = getattr(getattr(item, "dtype", None), "kind", "")
        return item.ndim if kind == "b" else 1

    rest = len(shape) - sum(reads(i) for i in items)
    found, axis = [], 0
    for item in items:
        if item is Ellipsis:
            axis += rest
            continue
        if hasattr(item, "shape") and getattr(item.dtype, "kind", "") in "iu" \
                and axis < len(shape):
            found.append((item, axis, int(shape[axis])))
        axis += reads(item)
    return found


numpy_namespace = _extended(np, None, np.add.at)


def _numpy_getattr(name: str) -> Any:
    # scipy is imported only when a special function is first used: it is slow to import.
    if name in SPECIAL_FUNCTIONS or name == "polygamma":
        import scipy.special

        for each, spelled in SPECIAL_FUNCTIONS.items():
            setattr(numpy_namespace, each, getattr(scipy.special, spelled))
        numpy_namespace.polygamma = _polygamma(scipy.special)
        return getattr(numpy_namespace, name)
    raise AttributeError(name)


numpy_namespace.__getattr__ = _numpy_getattr
_cupy_namespace: types.ModuleType | None = None


def array_module(array: Any) -> types.ModuleType:
    """The array namespace that owns ``array``: numpy's, or cupy's on the GPU.

    These are the ``numpy``/``cupy`` modules plus the special functions (``erf``,
    ``lgamma``, ``digamma``, ...: :data:`SPECIAL_FUNCTIONS`) and ``scatter_add``;
    everything else is the module's own function.
    """
    global _cupy_namespace
    if _cupy is None or not isinstance(array, _cupy.ndarray):
        return numpy_namespace
    if _cupy_namespace is None:
        if getattr(_cupy, "IS_STAND_IN", False):
            cupyx = _cupy.cupyx
        else:
            import cupyx
            import cupyx.scipy.special
        _cupy_namespace = _extended(_cupy, cupyx.scipy.special, cupyx.scatter_add)
    return _cupy_namespace


def is_gpu_array(array: Any) -> bool:
    return _cupy is not None and isinstance(array, _cupy.ndarray)


def is_gpu_array_type(cls: type) -> bool:
    """Whether ``cls`` is CuPy's array type (or a subclass)."""
    return _cupy is not None and issubclass(cls, _cupy.ndarray)


class Device:
    """Where a tensor's memory lives: ``Device('cpu')``, ``Device('cuda')``, ``Device('cuda:1')``.

    As in PyTorch, ``'cuda'`` means the current CUDA device and is equal to
    ``'cuda:0'`` on a machine with one GPU.

    Parameters
    ----------
    spec : str, Device or int, default "cpu"
        ``"cpu"``, ``"cuda"``, ``"cuda:1"``.
    index : int, optional
        The CUDA device index.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.Device("cpu")
    device(type='cpu')
    """

    __slots__ = ("type", "index")

    def __init__(self, spec: str | Device | int = "cpu", index: int | None = None):
        if isinstance(spec, Device):
            self.type, self.index = spec.type, spec.index
            return
        if isinstance(spec, int):  # torch.device(0) means cuda:0
            spec, index = "cuda", spec
        if not isinstance(spec, str):
            raise TypeError(f"device must be a string like 'cpu' or 'cuda:0', got {spec!r}")
        kind, _, number = spec.strip().lower().partition(":")
        if kind == "meta":  # PyTorch's shape-only tensors: difflab's always hold data
            raise ValueError(
                "the 'meta' device (tensors with a shape but no data) is not supported: "
                "difflab's tensors always hold their values; keep the module on 'cpu' "
                "(functional_call replaces its parameters all the same)")
        if kind not in ("cpu", "cuda"):
            raise ValueError(f"unknown device {spec!r}: use 'cpu', 'cuda' or 'cuda:N'")
        if number:
            if not number.isdigit():
                raise ValueError(f"bad device index in {spec!r}: use 'cuda:N' with N >= 0")
            index = int(number)
        if kind == "cpu":
            index = None
        elif index is None:
            index = 0
        self.type, self.index = kind, index

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = Device(other)
        return isinstance(other, Device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        return f"device(type='{self.type}'" + (
            ")" if self.index is None else f", index={self.index})"
        )

    @property
    def xp(self) -> types.ModuleType:
        """The array module for this device (numpy for the CPU, cupy for CUDA)."""
        if self.type == "cpu":
            return numpy_namespace
        cp = cupy_or_raise()
        count = cp.cuda.runtime.getDeviceCount()
        if self.index >= count:
            raise RuntimeError(
                f"device {self} does not exist: this machine has {count} CUDA device(s)"
            )
        return array_module(cp.empty(0))


CPU = Device("cpu")


def device(spec: str | Device | int = "cpu", index: int | None = None) -> Device:
    """Make a :class:`Device`; asking for CUDA where there is none raises a clear error.

    Parameters
    ----------
    spec : str, Device or int, default "cpu"
        ``"cpu"``, ``"cuda"``, ``"cuda:1"``, a Device, or a CUDA index.
    index : int, optional
        The CUDA device index, given apart.

    Returns
    -------
    Device

    Raises
    ------
    RuntimeError
        For CUDA where CuPy or a GPU is missing (the message says what to install).
    ValueError
        For a spec that names no device.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.device("cpu")
    device(type='cpu')
    >>> dl.zeros(2, device="cpu").device == dl.device("cpu")
    True
    """
    dev = Device(spec, index)
    if dev.type == "cuda":
        dev.xp  # noqa: B018  (checks that CuPy and the device exist)
    return dev


def device_of(array: Any) -> Device:
    """The device that holds ``array``."""
    if is_gpu_array(array):
        return Device("cuda", int(array.device.id))
    return CPU


def to_device(array: Any, dev: Device) -> Any:
    """Copy ``array`` to ``dev`` (no copy when it is already there)."""
    if dev.type == "cpu":
        return array.get() if is_gpu_array(array) else array
    cp = dev.xp
    if is_gpu_array(array) and array.device.id == dev.index:
        return array
    with cp.cuda.Device(dev.index):
        return cp.asarray(array)


def to_numpy(array: Any) -> np.ndarray:
    """A NumPy array with the same values (copied from the GPU if needed)."""
    return array.get() if is_gpu_array(array) else np.asarray(array)


def data_address(array: Any) -> int:
    """The memory address of an array's first element (NumPy's or CUDA's array interface)."""
    interface = getattr(array, "__array_interface__", None)
    if interface is None:
        interface = getattr(array, "__cuda_array_interface__", None)
    if interface is None:  # an array type with neither interface: its host copy's layout
        interface = to_numpy(array).__array_interface__
    return int(interface["data"][0])
