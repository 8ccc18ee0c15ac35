"""Making tensors: ``tensor``, ``zeros``, ``arange``, ``randn``, ... (PyTorch's names)."""

from __future__ import annotations

from typing import Any

import numpy as np

from difflab import backend, random
from difflab.autograd.engine import apply
from difflab.dtypes import _Defaults, as_dtype, check_memory_format, int64
from difflab.tensor import Tensor
from difflab.tensor_arguments import (
    fill_number,
    integer,
    interpreted,
    new_shape,
    tensor_of,
    to_array,
)


class _DefaultDevice:
    device: Any = None  # None: the CPU


def set_default_device(device: Any) -> None:
    """Set the device that new tensors are made on when no ``device=`` is given.

    The creation functions (``zeros``, ``randn``, ``tensor``, ``arange``, ...) place
    their result there unless told otherwise; tensors that already exist stay where
    they are.  ``None`` (or ``"cpu"``) returns to the CPU.

    Parameters
    ----------
    device : str, Device or None
        ``"cpu"`` (NumPy arrays), ``"cuda"`` / ``"cuda:0"`` (CuPy arrays), or ``None``
        for the CPU.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        For a device name that is neither ``"cpu"`` nor ``"cuda[:n]"``.

    See Also
    --------
    difflab.get_default_device : the device it set.
    difflab.Tensor.to : move one tensor.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.set_default_device("cpu")
    >>> dl.get_default_device()
    device(type='cpu')
    >>> dl.zeros(2).device
    device(type='cpu')
    >>> dl.set_default_device(None)
    """
    _DefaultDevice.device = None if device is None else backend.device(device)


def get_default_device() -> Any:
    """The device new tensors are made on when no ``device=`` is given.

    Returns
    -------
    Device
        ``device(type='cpu')`` unless :func:`difflab.set_default_device` chose another.

    See Also
    --------
    difflab.set_default_device : change it.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.get_default_device()
    device(type='cpu')
    """
    return _DefaultDevice.device or backend.device("cpu")


def _finish(array: Any, device: Any, requires_grad: bool) -> Tensor:
    if device is None:
        device = _DefaultDevice.device
    if device is not None:
        array = backend.to_device(array, backend.device(device))
    t = Tensor._wrap(array)
    if requires_grad:
        t.requires_grad = True
        # (no hooks yet: set to None, read faster than unset slots; see Tensor's slots)
        t._backward_hooks = t._post_accumulate_grad_hooks = None
    return t


def _float(dtype: Any) -> np.dtype:
    return _Defaults.dtype if dtype is None else np.dtype(dtype)


def _floating(dtype: Any, name: str) -> np.dtype:
    """:func:`_float`, refusing a dtype that is not floating: uniform or normal numbers
    cast to integers would be mostly zeros, silently."""
    found = _float(dtype)
    if as_dtype(found).kind != "f":
        raise TypeError(f"{name}: draws floating numbers, got dtype {as_dtype(found)}; pass a "
                        f"floating dtype (difflab.float32), or use randint for integers")
    return found


def tensor(data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
           ) -> Tensor:
    """A new tensor with a *copy* of ``data`` (numbers, nested lists, an array or a tensor).

    Python floats become float32 (the default dtype), ints int64; a NumPy
    array keeps its dtype.

    Parameters
    ----------
    data : array_like
        Numbers, nested lists, a NumPy/CuPy array or a Tensor; copied.
    dtype : dtype, optional
        Default: inferred (Python floats: float32, ints: int64, an array's own dtype).
    device : str or Device, optional
        ``"cpu"`` or ``"cuda"``.
    requires_grad : bool, default False
        Record operations on it, so that ``backward`` fills its ``.grad``.

    Returns
    -------
    Tensor
        A leaf tensor holding a copy of ``data``.

    Raises
    ------
    TypeError
        For data that is not numbers (strings, objects).

    See Also
    --------
    as_tensor : no copy when the data already is an array of that dtype.
    from_numpy : share memory with a NumPy array.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.tensor([[1, 2], [3, 4]])
    tensor([[1, 2],
            [3, 4]])
    >>> dl.tensor([1.5, 2.0])
    tensor([1.5, 2. ])
    >>> dl.tensor([1.0], dtype=dl.float64, requires_grad=True)
    tensor([1.], dtype=difflab.float64, requires_grad=True)
    """
    array = to_array(data, dtype)
    array = array.copy() if isinstance(data, (np.ndarray, Tensor)) else array
    return _finish(array, device, requires_grad)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """``data`` as a tensor, sharing its memory when it can (no copy of a matching array).

    A Tensor is returned as it is (when neither ``dtype`` nor ``device`` asks for a
    change); a NumPy array of the asked dtype is wrapped without a copy, so writing
    into one shows in the other; anything else (lists, numbers, another dtype) is
    converted, which copies.  A converted tensor never requires grad: the conversion
    reads ``data.detach()``, a stop-gradient every differentiation method honours
    (forward mode, symbolic, finite differences and compiled graphs too).

    Parameters
    ----------
    data : array_like
        Numbers, nested lists, a NumPy/CuPy array or a Tensor.
    dtype : dtype, optional
        Default: inferred as :func:`difflab.tensor` does (an array keeps its own dtype,
        Python floats become the default dtype, float32).
    device : str or Device, optional
        ``"cpu"`` or ``"cuda"``; default: the data's own, else the default device.

    Returns
    -------
    Tensor
        ``data`` itself (a Tensor), a tensor viewing ``data``'s memory (an array of the
        dtype), or a new tensor.

    Raises
    ------
    TypeError
        For data that is not numbers (strings, objects).

    See Also
    --------
    difflab.tensor : always copies.
    difflab.from_numpy : shares memory, and only takes NumPy arrays.
    difflab.asarray : the same, with ``copy=`` to insist on or refuse a copy.

    Examples
    --------
    >>> import difflab as dl
    >>> import numpy as np
    >>> a = np.array([1.0, 2.0])
    >>> t = dl.as_tensor(a)          # float64 array: shared, no copy
    >>> a[0] = 9.0
    >>> t
    tensor([9., 2.], dtype=difflab.float64)
    >>> dl.as_tensor([1, 2])         # a list: converted
    tensor([1, 2])
    >>> x = dl.tensor([1.0])
    >>> dl.as_tensor(x) is x
    True
    """
    if isinstance(data, Tensor) or interpreted(data):  # (a Dual, symbols: as a tensor)
        conversion = [a for a in (device, dtype) if a is not None]
        if not conversion:
            return data
        # a conversion is cut from differentiation by a stop-gradient every method sees
        return data.detach().to(*conversion)
    return _finish(to_array(data, dtype), device, False)


def asarray(obj: Any, *, dtype: Any = None, device: Any = None, copy: bool | None = None,
            requires_grad: bool = False) -> Tensor:
    """``obj`` as a tensor, sharing memory when it can (PyTorch's ``torch.asarray``).

    Parameters
    ----------
    obj : Tensor, array, number or nested list
        The data.
    dtype, device : optional
        Of the result (a change of either copies).
    copy : bool, optional
        ``True``: always copy; ``False``: never copy (an error if a copy is needed);
        ``None``: copy only when needed.
    requires_grad : bool
        Record operations on the result.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import difflab as dl
    >>> import numpy as np
    >>> a = np.zeros(3)
    >>> t = dl.asarray(a)
    >>> a[0] = 5.0
    >>> t.tolist()
    [5.0, 0.0, 0.0]
    """
    if interpreted(obj) and not requires_grad and copy is not False:
        # a Dual, symbols: as a tensor, itself; a copy or a conversion is cut from
        # differentiation, as a tensor's is (derivative 0)
        conversion = [a for a in (device, dtype) if a is not None]
        if not conversion and not copy:
            return obj
        return obj.detach().to(*conversion) if conversion else obj.detach()
    if copy:
        result = tensor(obj.detach() if isinstance(obj, Tensor) else obj, dtype=dtype,
                        device=device)
    else:
        result = as_tensor(obj, dtype=dtype, device=device)
        source = obj.array if isinstance(obj, Tensor) else obj
        if copy is False and not (isinstance(source, np.ndarray)
                                  and np.shares_memory(result.array, source)) \
                and result is not obj:
            raise ValueError("asarray(copy=False): the data cannot be used without a copy "
                             "(another dtype or device, or not an array); pass copy=None")
    if requires_grad:
        result = result if result is not obj else result.detach()
        result.requires_grad_(True)
    return result


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor that *shares memory* with a NumPy array: changing one changes the other.

    The tensor keeps the array's dtype and shape (a float64 array gives a float64
    tensor, not the default float32) and lives on the CPU; ``t.numpy()`` goes back.

    Parameters
    ----------
    array : numpy.ndarray
        The array to wrap (not copied).

    Returns
    -------
    Tensor
        A leaf tensor whose ``array`` is ``array`` itself.

    Raises
    ------
    TypeError
        When ``array`` is not a ``numpy.ndarray`` (a list: use :func:`difflab.tensor`).

    See Also
    --------
    difflab.as_tensor : shares memory when it can, converts otherwise.
    difflab.tensor : always copies.

    Examples
    --------
    >>> import difflab as dl
    >>> import numpy as np
    >>> a = np.arange(3.0)
    >>> t = dl.from_numpy(a)
    >>> t[0] = 5.0                   # writes into a too
    >>> a
    array([5., 1., 2.])
    >>> t.dtype
    difflab.float64
    """
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy expects a numpy.ndarray, got {type(array).__name__}")
    return Tensor._wrap(array)


def zeros(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
          ) -> Tensor:
    """A tensor of zeros of shape ``size``.

    Parameters
    ----------
    size : ints or a tuple of ints
        The shape: ``zeros(2, 3)`` or ``zeros((2, 3))``.
    dtype : dtype, optional
        ``difflab.float32`` (the default dtype) unless given.
    device : str or Device, optional
        ``"cpu"`` (NumPy) or ``"cuda"`` (CuPy); default: the default device.
    requires_grad : bool, default False
        Record operations on it for backward.

    Returns
    -------
    Tensor

    Raises
    ------
    ValueError
        For a negative size.
    TypeError
        For a size that is not an int (a float is not rounded).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.zeros(2, 3)
    tensor([[0., 0., 0.],
            [0., 0., 0.]])
    """
    return _finish(np.zeros(new_shape(size, "zeros"), _float(dtype)), device, requires_grad)


def ones(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
         ) -> Tensor:
    """A tensor of ones of shape ``size``.

    Parameters
    ----------
    size : ints or a tuple of ints
        The shape: ``zeros(2, 3)`` or ``zeros((2, 3))``.
    dtype : dtype, optional
        ``difflab.float32`` (the default dtype) unless given.
    device : str or Device, optional
        ``"cpu"`` (NumPy) or ``"cuda"`` (CuPy); default: the default device.
    requires_grad : bool, default False
        Record operations on it for backward.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import difflab as dl
    >>> dl.ones((2,))
    tensor([1., 1.])
    """
    return _finish(np.ones(new_shape(size, "ones"), _float(dtype)), device, requires_grad)


def full(size: Any, fill_value: Any, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """A tensor of shape ``size`` filled with ``fill_value``.

    Parameters
    ----------
    size : tuple of ints
        The shape.
    fill_value : number
        The value of every element (its type sets the dtype unless ``dtype`` is given).
    dtype : dtype, optional
        ``difflab.float32`` (the default dtype) unless given.
    device : str or Device, optional
        ``"cpu"`` (NumPy) or ``"cuda"`` (CuPy); default: the default device.
    requires_grad : bool, default False
        Record operations on it for backward.

    Returns
    -------
    Tensor
        Of shape ``size``, every element ``fill_value``.

    Raises
    ------
    TypeError
        If a size is not an int, or ``fill_value`` is not a number or a 0-d tensor (None).
    ValueError
        If a size is negative.
    RuntimeError
        If ``fill_value`` is a tensor with dimensions.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.full((2, 2), 7.0)
    tensor([[7., 7.],
            [7., 7.]])
    """
    fill_number(fill_value, "full")
    if dtype is None:
        dtype = np.asarray(fill_value).dtype
        dtype = _Defaults.dtype if dtype.kind == "f" else int64 if dtype.kind in "iu" else dtype
    return _finish(np.full(new_shape((size,), "full"), fill_value, dtype), device, requires_grad)


def empty(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
          ) -> Tensor:
    """A tensor of shape ``size`` whose values are not to be relied on (PyTorch's ``empty``).

    PyTorch leaves the memory uninitialised; difflab fills it with zeros, so that
    a program never depends on stale memory.  Write into it before reading it.

    Parameters
    ----------
    size : ints or a tuple of ints
        The shape: ``empty(2, 3)`` or ``empty((2, 3))``.
    dtype : dtype, optional
        ``difflab.float32`` (the default dtype) unless given.
    device : str or Device, optional
        ``"cpu"`` (NumPy) or ``"cuda"`` (CuPy); default: the default device.
    requires_grad : bool, default False
        Record operations on it for backward.

    Returns
    -------
    Tensor
        Of shape ``size`` (zeros here).

    Raises
    ------
    ValueError
        For a negative size.
    TypeError
        For a size that is not an int (a float is not rounded).

    See Also
    --------
    difflab.zeros : what it makes here.
    difflab.empty_like : ``empty`` with another tensor's shape.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.empty(2, 3)
    >>> x.shape, x.dtype
    (difflab.Size([2, 3]), difflab.float32)
    >>> x[:] = 1.0                   # fill it before use
    >>> x.sum().item()
    6.0
    """
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def eye(n: int, m: int | None = None, dtype: Any = None, device: Any = None,
        requires_grad: bool = False) -> Tensor:
    """The identity matrix (n × m).

    Parameters
    ----------
    n : int
        Rows.
    m : int, optional
        Columns (default n).
    dtype : dtype, optional
        ``difflab.float32`` (the default dtype) unless given.
    device : str or Device, optional
        ``"cpu"`` (NumPy) or ``"cuda"`` (CuPy); default: the default device.
    requires_grad : bool, default False
        Record operations on it for backward.

    Returns
    -------
    Tensor

    Raises
    ------
    TypeError
        If ``n`` or ``m`` is not an int.
    ValueError
        If ``n`` or ``m`` is negative.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.eye(2)
    tensor([[1., 0.],
            [0., 1.]])
    """
    n, m = new_shape((n, n if m is None else m), "eye")  # (ints, not negative)
    return _finish(np.eye(n, m, dtype=_float(dtype)), device, requires_grad)


def arange(start: Any, end: Any = None, step: Any = 1, dtype: Any = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """Values from ``start`` up to, not including, ``end`` in steps of ``step``.

    Parameters
    ----------
    start : number
        The first value (or, alone, the end, starting at 0).
    end : number, optional
        The bound, not included.
    step : number, default 1
        The spacing.
    dtype : dtype, optional
        ``difflab.float32`` (the default dtype) unless given.
    device : str or Device, optional
        ``"cpu"`` (NumPy) or ``"cuda"`` (CuPy); default: the default device.
    requires_grad : bool, default False
        Record operations on it for backward.

    Returns
    -------
    Tensor
        1-D; int64 when every argument is an integer, else the default float dtype.

    Raises
    ------
    ValueError
        For a zero step, or a step that leads away from ``end`` (PyTorch's "upper bound
        and lower bound inconsistent with step sign").

    See Also
    --------
    linspace : a number of points, the end included.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.arange(5)
    tensor([0, 1, 2, 3, 4])
    >>> dl.arange(0, 1, 0.25)
    tensor([0.  , 0.25, 0.5 , 0.75])
    """
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueError("arange: step must be nonzero")
    if (end - start) * step < 0:  # (NumPy gives an empty tensor, silently)
        raise ValueError(f"arange: upper bound and lower bound inconsistent with step sign: "
                         f"from {start} to {end} in steps of {step}; use a "
                         f"{'negative' if end < start else 'positive'} step")
    is_float = any(isinstance(v, float) for v in (start, end, step))
    dtype = (_Defaults.dtype if is_float else int64) if dtype is None else dtype
    return _finish(np.arange(start, end, step).astype(dtype), device, requires_grad)


def range(start: Any, end: Any, step: Any = 1, dtype: Any = None, device: Any = None,  # noqa: A001
          requires_grad: bool = False) -> Tensor:
    r"""Values from ``start`` to ``end`` *inclusive* in steps of ``step`` (float by default).

    Like :func:`difflab.arange`, but the end is included when the steps reach it,
    and the result is floating (the default dtype) even for integer arguments.
    PyTorch deprecates ``torch.range`` in favour of ``arange``; it is here for
    programs that use it.  There are
    :math:`\lfloor (\text{end} - \text{start}) / \text{step} \rfloor + 1` values
    (none when that is not positive).

    Parameters
    ----------
    start : number
        The first value.
    end : number
        The last value, included when ``start + k * step`` reaches it.
    step : number, default 1
        The spacing (negative to count down).
    dtype : dtype, optional
        ``difflab.float32`` (the default dtype) unless given.
    device : str or Device, optional
        ``"cpu"`` (NumPy) or ``"cuda"`` (CuPy); default: the default device.
    requires_grad : bool, default False
        Record operations on it for backward.

    Returns
    -------
    Tensor
        1-D, of the values ``start, start + step, ...`` up to ``end``.

    Raises
    ------
    ValueError
        For a zero step.

    See Also
    --------
    difflab.arange : the end left out, integers kept integer.
    difflab.linspace : a number of points between two ends.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.range(1, 4)
    tensor([1., 2., 3., 4.])
    >>> dl.arange(1, 4)              # arange leaves the end out
    tensor([1, 2, 3])
    >>> dl.range(1, 0, -0.25)
    tensor([1.  , 0.75, 0.5 , 0.25, 0.  ])
    """
    if step == 0:
        raise ValueError("range: step must be nonzero (pass a positive step to count up, a "
                         "negative one to count down)")
    count = int(np.floor((end - start) / step)) + 1
    values = start + step * np.arange(count)
    return _finish(values.astype(_float(dtype)), device, requires_grad)


def linspace(start: float, end: float, steps: int, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive.

    Parameters
    ----------
    start, end : float
        The first and last values.
    steps : int
        How many values.
    dtype : dtype, optional
        ``difflab.float32`` (the default dtype) unless given.
    device : str or Device, optional
        ``"cpu"`` (NumPy) or ``"cuda"`` (CuPy); default: the default device.
    requires_grad : bool, default False
        Record operations on it for backward.

    Returns
    -------
    Tensor
        1-D, of length ``steps``.

    Raises
    ------
    TypeError
        If ``steps`` is not an int.
    ValueError
        If ``steps`` is negative.

    See Also
    --------
    arange, logspace

    Examples
    --------
    >>> import difflab as dl
    >>> dl.linspace(0, 1, 5)
    tensor([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """
    steps = _steps("linspace", steps)
    return _finish(np.linspace(start, end, steps).astype(_float(dtype)), device, requires_grad)


def _steps(name: str, steps: Any) -> int:
    """``linspace``'s and ``logspace``'s number of values: an int, not negative (NumPy's
    "'float' object cannot be interpreted as an integer" named neither)."""
    steps = integer(steps, name, "steps")
    if steps < 0:
        raise ValueError(f"{name}: number of steps must be non-negative, got {steps}")
    return int(steps)


def logspace(start: float, end: float, steps: int, base: float = 10.0, dtype: Any = None,
             device: Any = None) -> Tensor:
    r"""``steps`` values from ``base**start`` to ``base**end``, evenly spaced in the exponent.

    The k-th value (k = 0 .. steps-1) is

    .. math::

        \text{base}^{\,\text{start} + k\,(\text{end} - \text{start}) / (\text{steps} - 1)},

    that is ``base ** linspace(start, end, steps)``: a grid for step sizes or
    learning rates that spans several orders of magnitude.

    Parameters
    ----------
    start, end : float
        The first and last exponents.
    steps : int
        How many values (1: only ``base**start``).
    base : float, default 10.0
        The base of the exponents.
    dtype : dtype, optional
        ``difflab.float32`` (the default dtype) unless given.
    device : str or Device, optional
        ``"cpu"`` (NumPy) or ``"cuda"`` (CuPy); default: the default device.

    Returns
    -------
    Tensor
        1-D, of length ``steps``.

    Raises
    ------
    TypeError
        If ``steps`` is not an int.
    ValueError
        For a negative ``steps``.

    See Also
    --------
    difflab.linspace : evenly spaced values, not exponents.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.logspace(0, 2, 3)
    tensor([  1.,  10., 100.])
    >>> dl.logspace(0, 3, 4, base=2)
    tensor([1., 2., 4., 8.])
    """
    steps = _steps("logspace", steps)
    return _finish(np.logspace(start, end, steps, base=base).astype(_float(dtype)), device, False)


def _draw(op: Any, *inputs: Any, device: Any = None, requires_grad: bool = False,
          generator: random.Generator | None = None, **params: Any) -> Tensor:
    """A random draw through its primitive (:mod:`difflab.random`), so that a traced graph
    holds the draw and each replay draws anew (not the numbers seen while tracing)."""
    if device is None:
        device = _DefaultDevice.device
    device = None if device is None else backend.device(device)
    if params.get("dtype") is not None:
        params["dtype"] = np.dtype(params["dtype"])
    t = apply(op, *inputs, device=device, generator=random._setting(generator), **params)
    if requires_grad:
        t.requires_grad = True
    return t


def _size(size: Any, name: str) -> tuple:
    return tuple(int(s) for s in new_shape(size, name))


def rand(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
         generator: random.Generator | None = None) -> Tensor:
    """Uniform random numbers in [0, 1).

    Parameters
    ----------
    size : ints or a tuple of ints
        The shape: ``zeros(2, 3)`` or ``zeros((2, 3))``.
    dtype : dtype, optional
        ``difflab.float32`` (the default dtype) unless given.
    device : str or Device, optional
        ``"cpu"`` (NumPy) or ``"cuda"`` (CuPy); default: the default device.
    requires_grad : bool, default False
        Record operations on it for backward.
    generator : Generator, optional
        The random stream to draw from (default: the global one, ``manual_seed``).

    Returns
    -------
    Tensor

    See Also
    --------
    randn, randint, manual_seed

    Examples
    --------
    >>> import difflab as dl
    >>> g = dl.Generator().manual_seed(0)
    >>> dl.rand(3, generator=g)
    tensor([0.637 , 0.2698, 0.041 ])
    """
    return _draw(random.Uniform, 0.0, 1.0, shape=_size(size, "rand"),
                 dtype=_floating(dtype, "rand"),
                 device=device, requires_grad=requires_grad, generator=generator)


def randn(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          generator: random.Generator | None = None) -> Tensor:
    """Standard normal random numbers (mean 0, variance 1).

    Parameters
    ----------
    size : ints or a tuple of ints
        The shape: ``zeros(2, 3)`` or ``zeros((2, 3))``.
    dtype : dtype, optional
        ``difflab.float32`` (the default dtype) unless given.
    device : str or Device, optional
        ``"cpu"`` (NumPy) or ``"cuda"`` (CuPy); default: the default device.
    requires_grad : bool, default False
        Record operations on it for backward.
    generator : Generator, optional
        The random stream to draw from (default: the global one, ``manual_seed``).

    Returns
    -------
    Tensor

    See Also
    --------
    rand, normal, manual_seed

    Examples
    --------
    >>> import difflab as dl
    >>> g = dl.Generator().manual_seed(0)
    >>> dl.randn(2, 3, generator=g).shape
    difflab.Size([2, 3])
    """
    return _draw(random.Normal, 0.0, 1.0, shape=_size(size, "randn"),
                 dtype=_floating(dtype, "randn"),
                 device=device, requires_grad=requires_grad, generator=generator)


def randint(low: int, high: int | None = None, size: Any = None, dtype: Any = None,
            device: Any = None, generator: random.Generator | None = None) -> Tensor:
    """Random integers in [low, high); ``randint(high, size)`` starts at 0.

    Parameters
    ----------
    low : int
        The smallest value (or, alone with ``size``, the bound: ``randint(high, size)``).
    high : int, optional
        The bound, not included.
    size : tuple of ints
        The shape.
    dtype : dtype, optional
        Default int64.
    device : str or Device, optional
        ``"cpu"`` or ``"cuda"``.
    generator : Generator, optional
        The random stream to draw from (default: the global one, ``manual_seed``).

    Returns
    -------
    Tensor

    Raises
    ------
    ValueError
        If ``low`` is not less than ``high`` (no integer to draw).
    TypeError
        If a size is not an int.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.randint(0, 10, (3,))
    >>> x.dtype, bool(((x >= 0) & (x < 10)).all())
    (difflab.int64, True)
    """
    if size is None:
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint needs a size, e.g. randint(0, 10, (3,))")
    return _draw(random.Integers, int(low), int(high), shape=_size((size,), "randint"),
                 dtype=np.dtype(dtype or int64), device=device, generator=generator)


def randperm(n: int, dtype: Any = None, device: Any = None,
             generator: random.Generator | None = None) -> Tensor:
    """A random permutation of the integers 0 .. n-1.

    Every one of the n! orders is equally likely.  Use it to shuffle a dataset:
    ``x[dl.randperm(len(x))]``.

    Parameters
    ----------
    n : int
        How many integers (0 gives an empty tensor).
    dtype : dtype, optional
        Default int64.
    device : str or Device, optional
        ``"cpu"`` or ``"cuda"``; default: the default device.
    generator : Generator, optional
        The random stream to draw from (default: the global one, ``manual_seed``).

    Returns
    -------
    Tensor
        1-D, of length ``n``, holding each of 0 .. n-1 once.

    Raises
    ------
    TypeError
        If ``n`` is not an int.
    ValueError
        For a negative ``n``.

    See Also
    --------
    difflab.randint : integers drawn independently (repeats possible).
    difflab.manual_seed : make the draw repeatable.

    Examples
    --------
    >>> import difflab as dl
    >>> _ = dl.manual_seed(0)
    >>> dl.randperm(5)
    tensor([2, 4, 3, 0, 1])
    >>> dl.randperm(5).sort().values
    tensor([0, 1, 2, 3, 4])
    """
    n = integer(n, "randperm", "n")  # (an int: 2.5 was a permutation of 2)
    if n < 0:
        raise ValueError(f"randperm: n must be non-negative, got {n}")
    return _draw(random.Randperm, n, dtype=np.dtype(dtype or int64), device=device,
                 generator=generator)


def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, dtype: Any = None,
           device: Any = None, generator: random.Generator | None = None) -> Tensor:
    r"""Normal random numbers with the given mean and standard deviation (numbers or tensors).

    Each element is drawn from :math:`\mathcal{N}(\mu, \sigma^2)`, of density

    .. math::

        p(x) = \frac{1}{\sigma\sqrt{2\pi}}\,
               e^{-(x - \mu)^2 / (2\sigma^2)}.

    ``mean`` and ``std`` broadcast: with tensors, element i is drawn with
    ``mean[i]`` and ``std[i]``.  The draw has no gradient (for a sample that
    gradients flow through, write ``mean + std * dl.randn_like(mean)``: the
    reparameterization trick).

    Parameters
    ----------
    mean : float or Tensor, default 0.0
        The mean(s) :math:`\mu`.
    std : float or Tensor, default 1.0
        The standard deviation(s) :math:`\sigma \ge 0`.
    size : tuple of ints, optional
        The shape; default: the broadcast shape of ``mean`` and ``std`` (``()`` for two
        numbers).
    dtype : dtype, optional
        ``difflab.float32`` (the default dtype) unless given.
    device : str or Device, optional
        ``"cpu"`` or ``"cuda"``; default: the default device.
    generator : Generator, optional
        The random stream to draw from (default: the global one, ``manual_seed``).

    Returns
    -------
    Tensor
        Of shape ``size``.

    Raises
    ------
    ValueError
        For a negative or nan ``std``.

    See Also
    --------
    difflab.randn : the standard normal (mean 0, std 1).
    difflab.manual_seed : make the draw repeatable.

    Examples
    --------
    >>> import difflab as dl
    >>> _ = dl.manual_seed(0)
    >>> dl.normal(2.0, 0.5, (3,))
    tensor([2.0629, 1.9339, 2.3202])
    >>> dl.normal(dl.tensor([0.0, 10.0]), dl.tensor([1.0, 0.0]))   # std 0: the mean
    tensor([ 0.1049, 10.    ])
    """
    if size is None:
        size = np.broadcast_shapes(np.shape(getattr(mean, "array", mean)),
                                   np.shape(getattr(std, "array", std)))
    return _draw(random.Normal, mean, std, shape=_size((size,), "normal"),
                 dtype=_floating(dtype, "normal"), device=device, generator=generator)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False,  # noqa: A002
                *, generator: random.Generator | None = None, out: Tensor | None = None
                ) -> Tensor:
    r"""Indices drawn from the categories 0..k-1 with probability proportional to ``input``.

    ``input`` holds k non-negative weights (need not sum to 1), or one row of
    them per distribution; the result (int64, on input's device) has
    ``num_samples`` draws per row.  Without ``replacement`` each category is
    drawn at most once per row.  Seed with ``generator=`` to repeat a draw.
    ``x.multinomial(n)`` is the same function.

    Parameters
    ----------
    input : Tensor of shape (k,) or (rows, k)
        Non-negative, finite weights; each row needs a positive sum (softmax of logits,
        or counts).
    num_samples : int
        Draws per row (at most the number of non-zero weights without replacement).
    replacement : bool, default False
        Draw with replacement (a category may repeat).
    generator : Generator, optional, keyword-only
        The random stream to draw from (default: the global one, ``manual_seed``).
    out : Tensor, optional, keyword-only
        Written with the result, and returned.

    Returns
    -------
    Tensor
        int64, of shape ``(num_samples,)`` or ``(rows, num_samples)``: category indices.

    Raises
    ------
    TypeError
        When ``num_samples`` is not an integer.
    ValueError
        For weights that are not 1-D or 2-D, negative, infinite or NaN, a row of
        zeros, ``num_samples <= 0``, or more samples than non-zero categories without
        replacement (the message says which row).

    See Also
    --------
    difflab.bernoulli : one draw of 0 or 1 per element.
    difflab.randint : uniform integers.

    Notes
    -----
    With weights :math:`w`, each draw with replacement picks category i with
    probability

    .. math::

        P(i) = \frac{w_i}{\sum_j w_j}.

    Without replacement a drawn category leaves, and the weights left are
    renormalized for the next draw.  A draw has no gradient.

    Examples
    --------
    >>> import difflab as dl
    >>> _ = dl.manual_seed(0)
    >>> dl.multinomial(dl.tensor([0.0, 1.0, 3.0]), 4, replacement=True)
    tensor([2, 2, 1, 1])
    >>> _ = dl.manual_seed(0)
    >>> dl.tensor([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]]).multinomial(2)   # weight 0: never
    tensor([[1, 0],
            [1, 2]])
    """
    weights = input if isinstance(input, Tensor) else Tensor._wrap(np.asarray(input))
    num_samples = integer(num_samples, "multinomial", "num_samples")
    result = apply(random.Multinomial, weights, num_samples=num_samples,
                   replacement=bool(replacement), generator=random._setting(generator))
    if out is not None:
        out.copy_(result)
        return out
    return result


def bernoulli(input: Tensor, p: float | None = None, *,  # noqa: A002
              generator: random.Generator | None = None) -> Tensor:
    r"""1 with probability ``input`` (or ``p``), else 0, elementwise; input's shape and dtype.

    Each element is an independent Bernoulli draw: of probability ``input[i]``,
    or ``p`` for every element when ``p`` is given (then ``input`` gives only the
    shape, dtype and device).  The draw has no gradient (the result never
    requires grad); to learn the probabilities, use a score-function or a
    relaxed estimator (``difflab.distributions``).

    Parameters
    ----------
    input : Tensor
        The probabilities, each in [0, 1] (floating).
    p : float, optional
        One probability for every element instead of ``input``'s values.
    generator : Generator, optional, keyword-only
        The random stream to draw from (default: the global one, ``manual_seed``).

    Returns
    -------
    Tensor
        Zeros and ones, in ``input``'s shape, dtype and device.

    Raises
    ------
    ValueError
        For a probability outside [0, 1] or NaN.

    See Also
    --------
    difflab.multinomial : draws from k categories.
    difflab.rand : the uniform numbers it compares with.

    Notes
    -----
    With probability :math:`p`, the probability mass function is

    .. math::

        P(X = x) = p^x (1 - p)^{1 - x}, \qquad x \in \{0, 1\},

    so :math:`E[X] = p` and :math:`\operatorname{Var}[X] = p(1 - p)`.  difflab draws
    a uniform :math:`u \in [0, 1)` and returns :math:`[u < p]`.

    Examples
    --------
    >>> import difflab as dl
    >>> _ = dl.manual_seed(0)
    >>> dl.bernoulli(dl.tensor([0.0, 0.5, 1.0, 0.5]))
    tensor([0., 1., 1., 1.])
    >>> _ = dl.manual_seed(0)
    >>> dl.bernoulli(dl.zeros(1000), p=0.3).mean().item()
    0.2...
    """
    if p is None:
        return apply(random.Bernoulli, input, dtype=np.dtype(input.dtype),
                     generator=random._setting(generator))
    return _draw(random.Bernoulli, float(p), shape=tuple(input.shape), dtype=input.dtype,
                 device=input.device, generator=generator)


def poisson(input: Tensor, generator: random.Generator | None = None) -> Tensor:  # noqa: A002
    """Counts drawn from Poisson distributions of the rates ``input``, elementwise.

    Parameters
    ----------
    input : Tensor
        Non-negative rates (floating).
    generator : Generator, optional
        The generator to draw from (difflab's default one otherwise, as every draw).

    Returns
    -------
    Tensor
        The counts, in ``input``'s shape and dtype; no gradient (PyTorch's is zero).

    Examples
    --------
    >>> import difflab as dl
    >>> counts = dl.poisson(dl.full((1000,), 4.0), generator=dl.Generator().manual_seed(0))
    >>> 3.7 < counts.mean().item() < 4.3
    True
    """
    rates = tensor_of(input)
    if rates.dtype.kind != "f":
        raise TypeError(f"poisson: expected floating rates, got {rates.dtype}")
    return apply(random.Draw, rates, distribution="poisson", shape=tuple(rates.shape),
                 generator=random._setting(generator))


def _like(t: Tensor, dtype: Any, name: str = "zeros_like", *, memory_format: Any = None
          ) -> tuple:
    check_memory_format(memory_format, name)
    if not all(hasattr(t, attribute) for attribute in ("shape", "dtype", "device")):
        # (duck-typed: the forward mode's dual numbers answer these too)
        raise TypeError(f"{name} expects a Tensor (whose shape, dtype and device it copies), "
                        f"got {type(t).__name__}; wrap the data with difflab.tensor(...)")
    return t.shape, (t.dtype if dtype is None else dtype), t.device


def zeros_like(t: Tensor, dtype: Any = None, device: Any = None, requires_grad: bool = False, *,
               memory_format: Any = None) -> Tensor:
    """Zeros with ``t``'s shape, dtype and device.

    Parameters
    ----------
    t : Tensor
        The tensor whose shape (and, unless given, dtype and device) to copy; its
        values are not read.
    dtype : dtype, optional
        Default: ``t``'s dtype.
    device : str or Device, optional
        Default: ``t``'s device.
    requires_grad : bool, default False
        Record operations on the result for backward.
    memory_format : difflab.memory_format, optional, keyword-only
        Accepted for PyTorch's signature (``difflab.preserve_format``, ...): difflab's
        values do not depend on the order in memory.

    Returns
    -------
    Tensor
        Zeros of ``t``'s shape.

    Raises
    ------
    TypeError
        When ``t`` is not a Tensor.

    See Also
    --------
    difflab.zeros : from a shape.
    difflab.ones_like, difflab.full_like, difflab.empty_like

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([[1, 2, 3]])
    >>> dl.zeros_like(x)
    tensor([[0, 0, 0]])
    >>> dl.zeros_like(x, dtype=dl.float64)
    tensor([[0., 0., 0.]], dtype=difflab.float64)
    """
    shape, dtype, dev = _like(t, dtype, "zeros_like", memory_format=memory_format)
    return zeros(shape, dtype=dtype, device=device or dev, requires_grad=requires_grad)


def ones_like(t: Tensor, dtype: Any = None, device: Any = None, requires_grad: bool = False, *,
              memory_format: Any = None) -> Tensor:
    """Ones with ``t``'s shape, dtype and device.

    Parameters
    ----------
    t : Tensor
        The tensor whose shape (and, unless given, dtype and device) to copy; its
        values are not read.
    dtype : dtype, optional
        Default: ``t``'s dtype.
    device : str or Device, optional
        Default: ``t``'s device.
    requires_grad : bool, default False
        Record operations on the result for backward.
    memory_format : difflab.memory_format, optional, keyword-only
        Accepted for PyTorch's signature (``difflab.preserve_format``, ...): difflab's
        values do not depend on the order in memory.

    Returns
    -------
    Tensor
        Ones of ``t``'s shape.

    Raises
    ------
    TypeError
        When ``t`` is not a Tensor.

    See Also
    --------
    difflab.ones : from a shape.
    difflab.zeros_like, difflab.full_like

    Examples
    --------
    >>> import difflab as dl
    >>> w = dl.ones_like(dl.tensor([1.0, 2.0]), requires_grad=True)
    >>> w
    tensor([1., 1.], requires_grad=True)
    >>> (3 * w).sum().backward()
    >>> w.grad
    tensor([3., 3.])
    """
    shape, dtype, dev = _like(t, dtype, "ones_like", memory_format=memory_format)
    return ones(shape, dtype=dtype, device=device or dev, requires_grad=requires_grad)


def full_like(t: Tensor, fill_value: Any, dtype: Any = None, device: Any = None, *,
              memory_format: Any = None) -> Tensor:
    """``fill_value`` with ``t``'s shape, dtype and device.

    The value is converted to the dtype (``t``'s, unless given): 2.5 in an integer
    tensor's shape is 2, as in PyTorch.

    Parameters
    ----------
    t : Tensor
        The tensor whose shape (and, unless given, dtype and device) to copy; its
        values are not read.
    fill_value : number
        The value of every element.
    dtype : dtype, optional
        Default: ``t``'s dtype.
    device : str or Device, optional
        Default: ``t``'s device.
    memory_format : difflab.memory_format, optional, keyword-only
        Accepted for PyTorch's signature (``difflab.preserve_format``, ...): difflab's
        values do not depend on the order in memory.

    Returns
    -------
    Tensor
        ``fill_value`` in ``t``'s shape.

    Raises
    ------
    TypeError
        When ``t`` is not a Tensor, or ``fill_value`` is not a number (None).

    See Also
    --------
    difflab.full : from a shape.
    difflab.zeros_like, difflab.ones_like

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([1.0, 2.0, 3.0])
    >>> dl.full_like(x, 7.5)
    tensor([7.5, 7.5, 7.5])
    >>> dl.full_like(dl.tensor([1, 2]), 2.5)     # an int64 tensor: the value truncated
    tensor([2, 2])
    """
    shape, dtype, dev = _like(t, dtype, "full_like", memory_format=memory_format)
    return full(shape, fill_value, dtype=dtype, device=device or dev)


def empty_like(t: Tensor, dtype: Any = None, device: Any = None, *,
               memory_format: Any = None) -> Tensor:
    """A tensor of ``t``'s shape whose values are not to be relied on (zeros here).

    PyTorch leaves the memory uninitialised; difflab fills it with zeros (see
    :func:`difflab.empty`).  Write into it before reading it.

    Parameters
    ----------
    t : Tensor
        The tensor whose shape (and, unless given, dtype and device) to copy.
    dtype : dtype, optional
        Default: ``t``'s dtype.
    device : str or Device, optional
        Default: ``t``'s device.
    memory_format : difflab.memory_format, optional, keyword-only
        Accepted for PyTorch's signature (``difflab.preserve_format``, ...): difflab's
        values do not depend on the order in memory.

    Returns
    -------
    Tensor
        Of ``t``'s shape.

    Raises
    ------
    TypeError
        When ``t`` is not a Tensor.

    See Also
    --------
    difflab.empty : from a shape.
    difflab.zeros_like : the same values, said plainly.

    Examples
    --------
    >>> import difflab as dl
    >>> out = dl.empty_like(dl.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> out.shape, out.dtype
    (difflab.Size([2, 2]), difflab.float32)
    """
    _like(t, dtype, "empty_like", memory_format=memory_format)
    return zeros_like(t, dtype, device)


def rand_like(t: Tensor, dtype: Any = None, device: Any = None, *,
              memory_format: Any = None) -> Tensor:
    """Uniform random numbers in [0, 1) with ``t``'s shape, dtype and device.

    Parameters
    ----------
    t : Tensor
        The tensor whose shape (and, unless given, dtype and device) to copy.
    dtype : dtype, optional
        Default: ``t``'s dtype.
    device : str or Device, optional
        Default: ``t``'s device.
        Must be floating.
    memory_format : difflab.memory_format, optional, keyword-only
        Accepted for PyTorch's signature (``difflab.preserve_format``, ...): difflab's
        values do not depend on the order in memory.

    Returns
    -------
    Tensor
        Of ``t``'s shape, drawn from the global generator (``manual_seed``).

    Raises
    ------
    TypeError
        When ``t`` is not a Tensor, or the dtype is not floating (an integer tensor:
        pass ``dtype=difflab.float32``).

    See Also
    --------
    difflab.rand : from a shape.
    difflab.randn_like, difflab.randint_like

    Examples
    --------
    >>> import difflab as dl
    >>> _ = dl.manual_seed(0)
    >>> dl.rand_like(dl.zeros(3))
    tensor([0.637 , 0.2698, 0.041 ])
    >>> dl.rand_like(dl.zeros(2, dtype=dl.float64)).dtype
    difflab.float64
    """
    shape, dtype, dev = _like(t, dtype, "rand_like", memory_format=memory_format)
    return rand(shape, dtype=dtype, device=device or dev)


def randn_like(t: Tensor, dtype: Any = None, device: Any = None, *,
               memory_format: Any = None) -> Tensor:
    """Standard normal random numbers (mean 0, variance 1) with ``t``'s shape, dtype and device.

    Parameters
    ----------
    t : Tensor
        The tensor whose shape (and, unless given, dtype and device) to copy.
    dtype : dtype, optional
        Default: ``t``'s dtype.
    device : str or Device, optional
        Default: ``t``'s device.
        Must be floating.
    memory_format : difflab.memory_format, optional, keyword-only
        Accepted for PyTorch's signature (``difflab.preserve_format``, ...): difflab's
        values do not depend on the order in memory.

    Returns
    -------
    Tensor
        Of ``t``'s shape, drawn from the global generator (``manual_seed``).

    Raises
    ------
    TypeError
        When ``t`` is not a Tensor, or the dtype is not floating.

    See Also
    --------
    difflab.randn : from a shape.
    difflab.normal : another mean and standard deviation.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.zeros(2, 3)
    >>> _ = dl.manual_seed(0)
    >>> noise = dl.randn_like(x)
    >>> noise.shape
    difflab.Size([2, 3])
    >>> _ = dl.manual_seed(0)
    >>> bool((dl.randn_like(x) == noise).all())     # the same seed, the same numbers
    True
    """
    shape, dtype, dev = _like(t, dtype, "randn_like", memory_format=memory_format)
    return randn(shape, dtype=dtype, device=device or dev)


def randint_like(t: Tensor, low: int, high: int | None = None, dtype: Any = None, *,
                 memory_format: Any = None) -> Tensor:
    """Random integers in [low, high) with ``t``'s shape, dtype and device.

    ``randint_like(t, high)`` starts at 0.  The values are integers, stored in
    ``t``'s dtype (floats for a float tensor, as in PyTorch) unless ``dtype`` is
    given.

    Parameters
    ----------
    t : Tensor
        The tensor whose shape, dtype and device to copy.
    low : int
        The smallest value (or, alone, the bound: ``randint_like(t, high)``).
    high : int, optional
        The bound, not included.
    dtype : dtype, optional
        Default: ``t``'s dtype.
    memory_format : difflab.memory_format, optional, keyword-only
        Accepted for PyTorch's signature (``difflab.preserve_format``, ...): difflab's
        values do not depend on the order in memory.

    Returns
    -------
    Tensor
        Of ``t``'s shape, drawn from the global generator (``manual_seed``).

    Raises
    ------
    TypeError
        When ``t`` is not a Tensor.

    See Also
    --------
    difflab.randint : from a shape.
    difflab.rand_like : uniform floats.

    Examples
    --------
    >>> import difflab as dl
    >>> _ = dl.manual_seed(0)
    >>> dl.randint_like(dl.zeros(3, dtype=dl.int64), 5, 8)
    tensor([7, 6, 6])
    >>> dl.randint_like(dl.zeros(3), 10).dtype
    difflab.float32
    """
    _like(t, dtype, "randint_like", memory_format=memory_format)
    if high is None:
        low, high = 0, low
    return randint(low, high, t.shape, dtype=dtype or t.dtype, device=t.device)


# ======================================================================== compat-core
# PyTorch's legacy typed constructors (issue 14, compat-core block).


class _TypedTensorType(type):
    """``isinstance(t, difflab.FloatTensor)`` is true for float32 tensors, as in PyTorch."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype

    def __repr__(cls) -> str:
        return f"<class 'difflab.{cls.__name__}'>"


class _TypedTensor(metaclass=_TypedTensorType):
    """``FloatTensor(data)`` copies data as a float32 tensor; ``FloatTensor(2, 3)`` makes
    one of shape (2, 3) (filled with zeros; PyTorch leaves it uninitialized)."""

    dtype: Any = None

    def __new__(cls, *args: Any, device: Any = None) -> Tensor:  # type: ignore[misc]
        if not args:
            return zeros(0, dtype=cls.dtype, device=device)
        if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
            return zeros(*args, dtype=cls.dtype, device=device)
        if len(args) != 1:
            raise TypeError(
                f"{cls.__name__}() takes either sizes (ints) or one sequence of data, got "
                f"{args!r}"
            )
        return tensor(args[0], dtype=cls.dtype, device=device)


#: Each legacy constructor's example: ``name(data)`` as it prints (checked by the docs tests).
_TYPED_EXAMPLES = {
    "FloatTensor": "tensor([1., 0., 2.])",
    "DoubleTensor": "tensor([1., 0., 2.], dtype=difflab.float64)",
    "HalfTensor": "tensor([1., 0., 2.], dtype=difflab.float16)",
    "LongTensor": "tensor([1, 0, 2])",
    "IntTensor": "tensor([1, 0, 2], dtype=difflab.int32)",
    "ShortTensor": "tensor([1, 0, 2], dtype=difflab.int16)",
    "ByteTensor": "tensor([1, 0, 2], dtype=difflab.uint8)",
    "BoolTensor": "tensor([ True, False,  True])",
}


def _typed(name: str, dtype: Any) -> type:
    """The legacy constructor ``name`` for ``dtype``, with its docstring."""
    kind = np.dtype(dtype).name
    doc = f"""A {kind} tensor: ``{name}(data)`` or ``{name}(*sizes)`` (a legacy constructor).

    ``{name}(data)`` copies ``data`` as :func:`difflab.tensor` does, in {kind};
    ``{name}(2, 3)`` makes a tensor of shape (2, 3), filled with zeros (PyTorch
    leaves it uninitialised); ``{name}()`` an empty one.  The class is also a
    dtype test: ``isinstance(t, difflab.{name})`` is true for every {kind}
    tensor.  New code writes ``difflab.tensor(data, dtype=difflab.{kind})``.

    Parameters
    ----------
    *args : ints, or one array_like
        Sizes (ints) for a zero-filled tensor of that shape, or one sequence of data.
    device : str or Device, optional
        ``"cpu"`` or ``"cuda"``; default: the default device.

    Raises
    ------
    TypeError
        For anything else than sizes or one sequence (``{name}(2, [1])``), or data
        that is not numbers.

    See Also
    --------
    difflab.tensor : the constructor to use, with ``dtype=``.
    difflab.zeros : a shape filled with zeros.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.{name}([1, 0, 2])
    {_TYPED_EXAMPLES[name]}
    >>> dl.{name}(2, 3).shape
    difflab.Size([2, 3])
    >>> isinstance(dl.{name}([1]), dl.{name}), isinstance(dl.tensor([1j]), dl.{name})
    (True, False)
    """
    return _TypedTensorType(name, (_TypedTensor,), {"dtype": dtype, "__doc__": doc})


FloatTensor = _typed("FloatTensor", np.float32)
DoubleTensor = _typed("DoubleTensor", np.float64)
HalfTensor = _typed("HalfTensor", np.float16)
LongTensor = _typed("LongTensor", np.int64)
IntTensor = _typed("IntTensor", np.int32)
ShortTensor = _typed("ShortTensor", np.int16)
ByteTensor = _typed("ByteTensor", np.uint8)
BoolTensor = _typed("BoolTensor", np.bool_)

def scalar_tensor(s: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                  requires_grad: bool = False, pin_memory: Any = None) -> Tensor:
    """A 0-d tensor of the number ``s``, of the default float dtype unless ``dtype`` is given.

    Unlike :func:`difflab.tensor`, an int or a bool becomes a float too (as PyTorch's).

    Parameters
    ----------
    s : number
        The value.
    dtype : dtype, optional, keyword-only
        Default: the default dtype (float32).
    layout : difflab.layout, optional, keyword-only
        Accepted for PyTorch's signature.
    device : str or Device, optional, keyword-only
        Where the tensor lives.
    requires_grad : bool, optional, keyword-only
        Record operations on the result.
    pin_memory : optional, keyword-only
        Accepted for PyTorch's signature.

    Returns
    -------
    Tensor
        0-d.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.scalar_tensor(3), dl.scalar_tensor(3, dtype=dl.int64)
    (tensor(3.), tensor(3))
    """
    return tensor(s, dtype=_float(dtype), device=device, requires_grad=requires_grad)


def empty_strided(size: Any, stride: Any, *, dtype: Any = None, layout: Any = None,
                  device: Any = None, requires_grad: bool = False, pin_memory: Any = None
                  ) -> Tensor:
    """A tensor of shape ``size`` to be written before it is read (zeros, as :func:`difflab.empty`).

    PyTorch lays the new memory out with the given strides; a difflab tensor made here
    is row-major whatever ``stride`` says (its values never depend on the layout), so
    ``stride()`` answers the row-major steps.

    Parameters
    ----------
    size : sequence of int
        The shape.
    stride : sequence of int
        One step per dimension (checked for its length; the layout stays row-major).
    dtype : dtype, optional, keyword-only
        Default: the default dtype.
    layout : difflab.layout, optional, keyword-only
        Accepted for PyTorch's signature.
    device : str or Device, optional, keyword-only
        Where the tensor lives.
    requires_grad : bool, optional, keyword-only
        Record operations on the result.
    pin_memory : optional, keyword-only
        Accepted for PyTorch's signature.

    Returns
    -------
    Tensor
        Zeros of shape ``size``.

    Raises
    ------
    RuntimeError
        When ``stride`` has another length than ``size``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.empty_strided((2, 3), (1, 2)).shape
    difflab.Size([2, 3])
    """
    if len(tuple(stride)) != len(tuple(size)):
        raise RuntimeError(f"empty_strided: mismatch in length of strides and shape "
                           f"({len(tuple(stride))} strides for {len(tuple(size))} dims)")
    return zeros(tuple(size), dtype=dtype, device=device, requires_grad=requires_grad)


def frombuffer(buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-D tensor that reads (and writes) the memory of a Python buffer (``bytearray``, ...).

    The tensor shares the buffer's memory, as PyTorch's does: writing into one changes
    the other (a read-only buffer such as ``bytes`` gives a tensor that refuses writes).

    Parameters
    ----------
    buffer : object with the buffer protocol
        The memory.
    dtype : dtype, keyword-only
        How to read the bytes.
    count : int, optional, keyword-only
        How many elements (-1: all that fit after ``offset``).
    offset : int, optional, keyword-only
        How many bytes to skip first.
    requires_grad : bool, optional, keyword-only
        Record operations on the result.

    Returns
    -------
    Tensor
        1-D, on the CPU.

    Examples
    --------
    >>> import difflab as dl
    >>> data = bytearray([1, 0, 2, 0])
    >>> x = dl.frombuffer(data, dtype=dl.int16)
    >>> x
    tensor([1, 2], dtype=difflab.int16)
    >>> x[0] = 5
    >>> data[0]
    5
    """
    array = np.frombuffer(buffer, dtype=np.dtype(as_dtype(dtype).dtype), count=count,
                          offset=offset)
    return _finish(array, "cpu", requires_grad)


def from_dlpack(ext_tensor: Any) -> Tensor:
    """A tensor sharing the memory of another library's array, through the DLPack protocol.

    Any object with ``__dlpack__`` (a NumPy array, a PyTorch tensor, a JAX array, a
    CuPy array on the GPU) is read without a copy.

    Parameters
    ----------
    ext_tensor : object with ``__dlpack__``
        The array to share.

    Returns
    -------
    Tensor
        On the CPU for host memory, on the GPU (CuPy) for CUDA memory.

    Raises
    ------
    TypeError
        For an object without ``__dlpack__`` (a bare DLPack capsule too: pass the array).

    Examples
    --------
    >>> import numpy as np
    >>> import difflab as dl
    >>> a = np.array([1.0, 2.0])
    >>> x = dl.from_dlpack(a)
    >>> a[0] = 7.0
    >>> x
    tensor([7., 2.], dtype=difflab.float64)
    """
    if not hasattr(ext_tensor, "__dlpack__"):
        raise TypeError(f"from_dlpack: expected an object with __dlpack__ (an array or a "
                        f"tensor), got {type(ext_tensor).__name__}")
    if isinstance(ext_tensor, Tensor):  # (the same memory, as PyTorch's: a new tensor)
        return Tensor._wrap(ext_tensor.array)
    on_gpu = ext_tensor.__dlpack_device__()[0] != 1  # (1: DLPack's kDLCPU)
    module = backend.cupy_or_raise() if on_gpu else np
    return Tensor._wrap(module.from_dlpack(ext_tensor))


def to_dlpack(tensor: Tensor) -> Any:
    """The DLPack capsule of ``tensor``'s memory, for a library that takes capsules.

    Libraries today take the tensor itself (``np.from_dlpack(x)``: a difflab tensor has
    ``__dlpack__``); this is PyTorch's older form, ``torch.utils.dlpack.to_dlpack``.

    Parameters
    ----------
    tensor : Tensor
        The tensor to share (a capsule is consumed once).

    Returns
    -------
    PyCapsule
        Named ``"dltensor"``.

    Examples
    --------
    >>> import difflab as dl
    >>> type(dl.to_dlpack(dl.ones(2))).__name__
    'PyCapsule'
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack: expected a Tensor, got {type(tensor).__name__}")
    return tensor.array.__dlpack__()


# ==================================================================== end compat-core


def _new(self: Tensor, data: Any, dtype: Any, device: Any, requires_grad: bool) -> Tensor:
    """What ``x.new_zeros``, ``x.new_tensor``, ... make: :func:`tensor` of ``data`` with
    x's dtype and device unless given."""
    return tensor(data, dtype=self.dtype if dtype is None else dtype,
                  device=self.device if device is None else device,
                  requires_grad=requires_grad)


# Tensor methods whose math is here: tensor.py sits below this module and does not import
# it (no import cycle), so they are attached to Tensor when this module is imported.
Tensor._new = _new
Tensor.multinomial = multinomial
