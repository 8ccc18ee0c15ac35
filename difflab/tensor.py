"""The Tensor: an array, the device it lives on, and its place on the tape.

A :class:`Tensor` holds

* ``array``: the NumPy (CPU) or CuPy (GPU) array with the values;
* ``requires_grad``: whether operations on it are recorded;
* ``grad``: the gradient that ``backward`` accumulates into it (leaves only);
* ``grad_fn``: the tape record (a Node) of the operation that made it, or
  ``None`` for a leaf (a tensor the user made).

This file holds the tensor's state and what reads or converts it (shape,
dtype, device, ``.to``, ``backward``).  Its operations are thin methods,
each a call of a primitive in ``difflab.ops`` through
``difflab.autograd.engine.apply``, which computes on the arrays and records
the step; they live in two files of their own, inherited by Tensor:
``tensor_methods.py`` (arithmetic, reductions, shapes, indexing) and
``tensor_inplace.py`` (``add_``, ``x[i] = v``, ...).  The methods whose
math is a function of ``difflab.functions`` (``x.gather``, ``x.sort``,
``x.softmax``, ...) or of ``difflab.creation`` (``x.multinomial``,
``x.new_zeros``) *are* those functions: the modules above this one attach
them to Tensor when they are imported, so this file imports neither (no
import cycle; docs/architecture.md, "Layers").  Names and semantics follow
PyTorch.
"""

from __future__ import annotations

import math
import sys
import warnings
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from difflab import backend, dtypes
from difflab.autograd.grad_mode import InferenceVersion, new_version
from difflab.dtypes import _Defaults, bool_, float16, float32, float64, int16, int32, int64, uint8
from difflab.tensor_arguments import (
    Size,
    dim_index,
    promote,
    require_tensor,
    to_arguments,
    to_array,
    unary_operand,
    unwrap_operand,
)
from difflab.tensor_inplace import InPlaceMethods
from difflab.tensor_methods import TensorMethods


class PrintOptions:
    """How tensors print (:func:`set_printoptions`): one table, read by ``Tensor.__repr__``."""

    PROFILES = {
        "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
        "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
        "full": {"precision": 4, "threshold": sys.maxsize, "edgeitems": 3, "linewidth": 80},
    }
    current: dict = {**PROFILES["default"], "sci_mode": None}


def set_printoptions(precision: int | None = None, threshold: int | None = None,
                     edgeitems: int | None = None, linewidth: int | None = None,
                     profile: str | None = None, sci_mode: bool | None = None) -> None:
    """Set how tensors print (PyTorch's ``torch.set_printoptions``; NumPy's are untouched).

    Parameters
    ----------
    precision : int, optional
        Digits after the decimal point (4 by default).
    threshold : int, optional
        Above this many elements, only the edges are shown (1000).
    edgeitems : int, optional
        How many items of each edge are shown then (3).
    linewidth : int, optional
        Characters per line (80).
    profile : {"default", "short", "full"}, optional
        A preset, applied first: ``"full"`` shows every element.
    sci_mode : bool, optional
        ``True``: scientific notation; ``False``: never; ``None``: as needed.

    Returns
    -------
    None
        The options hold for every tensor printed from now on (until set again).

    Raises
    ------
    ValueError
        For an unknown ``profile``, or a size that is not a non-negative int.

    See Also
    --------
    difflab.Tensor : its ``repr`` reads these options.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.set_printoptions(precision=2)
    >>> dl.tensor([1.23456])
    tensor([1.23])
    >>> dl.set_printoptions(sci_mode=True)     # (precision stays 2)
    >>> dl.tensor([1500.0, 0.25])
    tensor([1.50e+03, 2.50e-01])
    >>> dl.set_printoptions(profile="default")
    >>> dl.tensor([1.23456])
    tensor([1.2346])
    """
    options = dict(PrintOptions.current)
    if profile is not None:
        if profile not in PrintOptions.PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of "
                             f"{sorted(PrintOptions.PROFILES)}, got {profile!r}")
        options.update(PrintOptions.PROFILES[profile], sci_mode=None)
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"set_printoptions: {name} must be a non-negative int, "
                                 f"got {value!r}")
            options[name] = value
    if sci_mode is not None:
        options["sci_mode"] = bool(sci_mode)
    PrintOptions.current = options


#: PyTorch's legacy tensor type names (``x.type()``): NumPy's dtype name -> the name's stem.
LEGACY_TYPE_NAMES = {
    "float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
    "complex64": "ComplexFloat", "complex128": "ComplexDouble", "int64": "Long",
    "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
}


def _legacy_type(name: str) -> tuple[str, Any]:
    """``"difflab.cuda.DoubleTensor"`` -> ``("cuda", numpy's float64)``: what ``x.type(name)``
    converts to (``torch.`` is accepted too, for code written for PyTorch)."""
    stems = {f"{stem}Tensor": dtype for dtype, stem in LEGACY_TYPE_NAMES.items()}
    package, _, rest = name.partition(".")
    device, _, stem = rest.rpartition(".")
    if package not in ("difflab", "torch") or device not in ("", "cuda") or stem not in stems:
        raise ValueError(f"type(): {name!r} is not a tensor type name; use one of "
                         f"'difflab.FloatTensor', 'difflab.cuda.LongTensor', ... (stems: "
                         f"{', '.join(stems)}), or a dtype such as difflab.float64")
    dtype = dtypes.bfloat16 if stems[stem] == "bfloat16" else np.dtype(stems[stem])
    return (device or "cpu"), dtype


class Tensor(TensorMethods, InPlaceMethods):
    """A multi-dimensional array that can record the operations applied to it.

    A Tensor holds a NumPy (CPU) or CuPy (GPU) array.  Once it requires grad, every
    operation on it is recorded on the tape (``grad_fn`` names the record), and
    :meth:`backward` walks the tape back, accumulating ∂out/∂x into each leaf's
    ``.grad``.  ``Tensor(data)`` copies ``data`` like :func:`difflab.tensor`, which is
    the usual way to make one.

    Parameters
    ----------
    data : array_like, default ()
        Numbers, nested lists, a NumPy/CuPy array or a Tensor (copied).
    dtype : dtype, optional
        ``difflab.float32``, ``float64``, ``int64``, ...; default: inferred, with
        Python floats as the default dtype (float32), as in PyTorch.
    device : str or Device, optional
        ``"cpu"`` (NumPy) or ``"cuda"`` (CuPy).
    requires_grad : bool, default False
        Record the operations on it, so that gradients flow back to it.

    Attributes
    ----------
    shape, dtype, device : the array's shape, dtype and device.
    grad : Tensor or None
        The accumulated gradient of a leaf, after :meth:`backward`.
    grad_fn : the record that made this tensor (None for a leaf).
    requires_grad : bool

    Raises
    ------
    TypeError
        For data that is not numbers (strings, objects).

    See Also
    --------
    difflab.tensor : the function that makes tensors.
    difflab.autograd.grad : gradients without ``.grad``.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.Tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> x.shape, x.dtype
    (difflab.Size([2, 2]), difflab.float32)
    >>> y = (x * x).sum()
    >>> y
    tensor(30., grad_fn=<SumBackward0>)
    >>> y.backward()
    >>> x.grad
    tensor([[2., 4.],
            [6., 8.]])
    """

    # _post_accumulate_grad_hooks and _backward_hooks are set only by
    # register_post_accumulate_grad_hook and register_hook on a leaf (left unset
    # elsewhere, so creating a tensor costs nothing more), and to None on a leaf
    # created with requires_grad=True (creation._finish, Parameter): every backward
    # reads a leaf's with getattr(leaf, name, None), and an unset slot answers by
    # raising and catching an AttributeError, slower than the rest of the delivery.
    # A dict of slots gives the three public ones a docstring (``help(Tensor.grad)``).
    __slots__ = {
        "array": """The NumPy (or CuPy) array that holds this tensor's values.

        Reading it gives the values with no autograd: the array is the storage, and
        writing into it changes the tensor without the tape knowing (use ``x.data`` or
        an in-place method under :func:`difflab.no_grad` instead).

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([1.0, 2.0])
        >>> type(x.array).__name__, x.array.dtype
        ('ndarray', dtype('float32'))
        """,
        "grad": """The gradient accumulated into this tensor by ``backward()``, or ``None``.

        Set on leaves that require grad (and on tensors that called
        :meth:`difflab.Tensor.retain_grad`); each ``backward()`` adds to it, so an
        optimizer loop zeroes it between steps.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([1.0, 2.0], requires_grad=True)
        >>> print(x.grad)
        None
        >>> (x * x).sum().backward()
        >>> x.grad
        tensor([2., 4.])
        """,
        "grad_fn": """The tape node that made this tensor, or ``None`` for a leaf.

        Its name says which primitive's derivative rule ``backward()`` will run here.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([1.0, 2.0], requires_grad=True)
        >>> print(x.grad_fn)
        None
        >>> y = dl.sin(x)
        >>> y.grad_fn is not None, y.requires_grad
        (True, True)
        """,
        "_requires_grad": "", "_version": "", "_base": "",
        "_post_accumulate_grad_hooks": "", "_backward_hooks": "", "__weakref__": "",
    }

    def __init__(
        self,
        data: Any = (),
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
    ) -> None:
        self.array = np.array(to_array(data, dtype)) if device is None else to_array(
            data, dtype, device
        )
        self.grad = None
        self.grad_fn = None
        self._version = new_version()
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
        t._version = new_version() if version is None else version
        t._base = None
        return t

    # ------------------------------------------------------------- attributes
    @property
    def requires_grad(self) -> bool:
        """Whether the operations on this tensor are recorded on the tape (settable).

        A leaf the user makes with ``requires_grad=True`` (a parameter) gets a ``.grad``
        from :meth:`backward`; every result computed from it requires grad too, and
        carries its ``grad_fn``.  Set it to switch recording on for a leaf.  Setting it
        to ``True`` on an integer or bool tensor raises ``RuntimeError`` (only
        floating-point and complex tensors can have a gradient), as does setting it to
        ``False`` on a result (use :meth:`detach` there).

        See Also
        --------
        difflab.Tensor.requires_grad_ : set it and get the tensor back.
        difflab.no_grad : compute without recording.

        Examples
        --------
        >>> import difflab as dl
        >>> w = dl.tensor([1.0, 2.0])
        >>> w.requires_grad
        False
        >>> w.requires_grad = True
        >>> (w * 3).requires_grad
        True
        >>> dl.tensor([1, 2]).requires_grad = True
        Traceback (most recent call last):
            ...
        RuntimeError: only tensors of floating point dtype can require gradients, ...
        """
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if value and self.array.dtype.kind not in "fc" and self.array.dtype != dtypes.BFLOAT16:
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
        """The same values as a tensor cut off from the tape (shares memory, as in PyTorch).

        Reading ``x.data`` gives a tensor that does not require grad, on the same array:
        changing it in place changes ``x`` without the tape knowing, which is what an
        optimizer's update or a weight initialisation wants (and nothing else should:
        prefer :meth:`detach` and :func:`difflab.no_grad`, which autograd checks).
        Read in a function being differentiated, it is a stop-gradient for every
        method, as :meth:`detach`.  Assigning ``x.data = values`` replaces the array
        behind ``x`` (any shape).

        See Also
        --------
        difflab.Tensor.detach : the same values, cut off, with autograd's version check.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([1.0, 2.0], requires_grad=True)
        >>> d = x.data
        >>> d.requires_grad
        False
        >>> d *= 10        # in place: x changes too, unrecorded
        >>> x
        tensor([10., 20.], requires_grad=True)
        >>> x.data = dl.tensor([0.0, 1.0, 2.0])
        >>> x
        tensor([0., 1., 2.], requires_grad=True)
        """
        # (the stop-gradient primitive, as detach: a traced function records it, forward
        # mode drops a dual number's tangents)
        return _apply(_STOP_GRADIENT, self)

    @data.setter
    def data(self, value: Tensor) -> None:
        self.array = to_array(value)

    @property
    def shape(self) -> Size:
        """The length of each dimension, as a :class:`difflab.Size` (a tuple of ints).

        See Also
        --------
        difflab.Tensor.size : the same, or one dimension's length.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.zeros(2, 3)
        >>> x.shape
        difflab.Size([2, 3])
        >>> x.shape[-1], dl.tensor(5.0).shape
        (3, difflab.Size([]))
        """
        return Size(self.array.shape)

    def size(self, dim: int | None = None) -> Size | Any:
        """The shape, or the length of dimension ``dim``.

        Parameters
        ----------
        dim : int, optional
            A dimension (negative counts from the end).  Default: all of them.

        Returns
        -------
        Size or int
            The shape (as :attr:`shape`) without ``dim``; the length of ``dim`` with it.

        Raises
        ------
        IndexError
            For a ``dim`` the tensor does not have.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.zeros(2, 3)
        >>> x.size(), x.size(0), x.size(-1)
        (difflab.Size([2, 3]), 2, 3)
        """
        if dim is None:
            return Size(self.array.shape)
        return self.array.shape[dim_index(dim, self.ndim, "size", zero_d_has_dim=False)]

    def numel(self) -> Any:
        """The number of elements: the product of the shape (1 for a 0-d tensor).

        Returns
        -------
        int

        Examples
        --------
        >>> import difflab as dl
        >>> dl.zeros(2, 3).numel(), dl.tensor(7.0).numel(), dl.zeros(0, 4).numel()
        (6, 1, 0)
        """
        return math.prod(self.shape)  # (a Dual or SymbolArray running it has no .array)

    def dim(self) -> Any:
        """The number of dimensions (0 for a scalar tensor); ``ndimension()`` is the same.

        Returns
        -------
        int
            ``len(self.shape)``, as :attr:`ndim`.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor(3.0).dim(), dl.zeros(4).dim(), dl.zeros(2, 3).ndimension()
        (0, 1, 2)
        """
        return self.array.ndim

    ndimension = dim

    @property
    def ndim(self) -> Any:
        """The number of dimensions, as a property (NumPy's name; :meth:`dim` is PyTorch's).

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor(3.0).ndim, dl.zeros(2, 3).ndim
        (0, 2)
        """
        return self.array.ndim

    @property
    def dtype(self) -> dtypes.dtype:
        """The type of the elements: ``difflab.float32``, ``difflab.int64``, ``difflab.bool``...

        Python floats make float32 tensors (the default dtype), Python ints int64 and
        bools bool, as in PyTorch; :meth:`~difflab.Tensor.to` converts.

        See Also
        --------
        difflab.Tensor.to : convert to another dtype.
        difflab.Tensor.is_floating_point : whether the dtype can carry a gradient.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([1.0]).dtype, dl.tensor([1]).dtype, dl.tensor([True]).dtype
        (difflab.float32, difflab.int64, difflab.bool)
        >>> dl.tensor([1.0]).dtype == dl.float32
        True
        """
        return dtypes.of_array(self.array)

    @property
    def device(self) -> backend.Device:
        """Where the values live: ``device(type='cpu')`` (NumPy) or ``cuda:N`` (CuPy).

        Operations need their tensors on one device; :meth:`~difflab.Tensor.to` moves them.

        See Also
        --------
        difflab.device : make a device.
        difflab.Tensor.to : move to another device.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.zeros(2)
        >>> x.device
        device(type='cpu')
        >>> x.device == "cpu", x.device.type
        (True, 'cpu')
        """
        return backend.device_of(self.array)

    @property
    def is_cuda(self) -> bool:
        """Whether the values live on a CUDA GPU (a CuPy array), not in CPU memory.

        See Also
        --------
        difflab.Tensor.device : which device exactly.
        difflab.Tensor.cuda : copy to the GPU.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.zeros(2).is_cuda
        False
        """
        return backend.is_gpu_array(self.array)

    @property
    def is_leaf(self) -> bool:
        """True for tensors the user made (and results of ops that need no grad).

        A leaf has no ``grad_fn``: the tape starts at it.  Only leaves that require
        grad get a ``.grad`` from :meth:`backward`; a result (not a leaf) gets one
        only after :meth:`retain_grad`.

        Examples
        --------
        >>> import difflab as dl
        >>> w = dl.tensor([1.0, 2.0], requires_grad=True)
        >>> y = w * 2
        >>> w.is_leaf, y.is_leaf, y.detach().is_leaf
        (True, False, True)
        >>> dl.tensor([1.0]).is_leaf      # needs no grad: a leaf too
        True
        """
        return self.grad_fn is None

    @property
    def T(self) -> Tensor:  # noqa: N802
        """The tensor with its dimensions in reverse order: a matrix's transpose.

        ``x.T`` is ``x.permute(n-1, ..., 1, 0)`` for an n-D tensor (NumPy's ``.T``): a
        view, and the gradient flows back through it.  A 0-d or 1-D tensor is returned
        as it is; for a batch of matrices, :attr:`mT` swaps only the last two dimensions.

        See Also
        --------
        difflab.Tensor.mT : the transpose of each matrix in a batch.
        difflab.Tensor.H : the conjugate transpose.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        >>> x.T
        tensor([[1., 4.],
                [2., 5.],
                [3., 6.]])
        >>> dl.zeros(2, 3, 4).T.shape
        difflab.Size([4, 3, 2])
        """
        return self.permute(*range(self.ndim - 1, -1, -1))

    @property
    def mT(self) -> Tensor:  # noqa: N802
        """The transpose of each matrix: the last two dimensions swapped.

        ``x.mT`` is ``x.transpose(-2, -1)``: for a batch of matrices of shape
        ``(..., m, n)``, the batch of their transposes, of shape ``(..., n, m)``.  A
        view; the gradient flows back through it.  It needs at least two dimensions
        (``RuntimeError`` otherwise).

        See Also
        --------
        difflab.Tensor.T : all dimensions reversed.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.arange(6.0).reshape(1, 2, 3)
        >>> x.mT
        tensor([[[0., 3.],
                 [1., 4.],
                 [2., 5.]]])
        >>> dl.zeros(5, 2, 3).mT.shape
        difflab.Size([5, 3, 2])
        """
        if self.ndim < 2:
            raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices, "
                               f"got a {self.ndim}-D tensor; for a vector, x.unsqueeze(-1) is "
                               f"a column and x.unsqueeze(0) a row")
        return self.transpose(-2, -1)

    @property
    def real(self) -> Tensor:
        """The real parts, as :func:`difflab.real`; a real tensor is its own.

        ``x.real is x`` for a real dtype, as in PyTorch.

        See :func:`difflab.real`.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([1 + 2j]).real
        tensor([1.])
        """
        if self.array.dtype.kind != "c":
            return self
        return _apply(_ops.PRIMITIVES["real"], self)

    @property
    def imag(self) -> Tensor:
        """The imaginary parts, as :func:`difflab.imag` (a real tensor: a RuntimeError).

        See :func:`difflab.imag`.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([1 + 2j]).imag
        tensor([2.])
        """
        return _apply(_ops.PRIMITIVES["imag"], self)

    @property
    def H(self) -> Tensor:  # noqa: N802
        """The conjugate transpose of a matrix (of a 0-d tensor: its conjugate).

        Real values are only transposed, as :attr:`T`; complex ones are conjugated too
        (:func:`difflab.conj`); both with their gradient.
        Only 0-d and 2-D tensors have one (``RuntimeError`` otherwise: for a batch of
        real matrices use :attr:`mT`).

        See Also
        --------
        difflab.Tensor.T : the transpose, without conjugating.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([[1.0, 2.0]]).H
        tensor([[1.],
                [2.]])
        >>> dl.tensor([[1 + 2j, 3j]]).H
        tensor([[1.-2.j],
                [0.-3.j]], dtype=difflab.complex64)
        """
        if self.ndim not in (0, 2):
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors), got a "
                               f"{self.ndim}-D tensor; for a batch of real matrices use x.mT")
        out = self.T if self.ndim == 2 else self
        return _apply(_ops.PRIMITIVES["conj"], out) if self.dtype.kind == "c" else out

    @property
    def mH(self) -> Tensor:  # noqa: N802
        """The conjugate transpose of each matrix: :attr:`mT`, complex values conjugated.

        Real values are only transposed, a view whose gradient flows back; complex
        ones are conjugated too (a copy, without a gradient, as every complex value in
        difflab).  It needs at least two dimensions (``RuntimeError`` otherwise).

        See Also
        --------
        difflab.Tensor.adjoint : the same, as a method.
        difflab.Tensor.H : the conjugate transpose of one matrix.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.arange(6.0).reshape(1, 2, 3).mH.shape
        difflab.Size([1, 3, 2])
        >>> dl.tensor([[1 + 2j, 3j]]).mH
        tensor([[1.-2.j],
                [0.-3.j]], dtype=difflab.complex64)
        """
        if self.ndim < 2:
            raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices, "
                               f"got a {self.ndim}-D tensor")
        out = self.transpose(-2, -1)
        return _apply(_ops.PRIMITIVES["conj"], out) if self.dtype.kind == "c" else out

    def adjoint(self) -> Tensor:
        """The conjugate transpose of each matrix (PyTorch's method for :attr:`mH`).

        Returns
        -------
        Tensor
            ``x.mH``: for real values a view of ``x`` with its last two dimensions
            swapped.

        Raises
        ------
        RuntimeError
            If ``x`` has fewer than two dimensions.

        Examples
        --------
        >>> import difflab as dl
        >>> a = dl.zeros(2, 3)
        >>> a.adjoint()[2, 0] = 1.0   # (a view of a real tensor: a changes)
        >>> a
        tensor([[0., 0., 1.],
                [0., 0., 0.]])
        """
        if self.ndim < 2:
            raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of "
                               f"matrices, got a {self.ndim}-D tensor")
        return self.mH

    @property
    def layout(self) -> dtypes.layout:
        """How the elements lie in memory: always ``difflab.strided`` (dense).

        PyTorch also has sparse layouts; difflab's tensors are all dense arrays, so
        code that checks ``x.layout == difflab.strided`` runs unchanged.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.zeros(2, 3).layout
        difflab.strided
        >>> dl.zeros(2).layout == dl.strided
        True
        """
        return dtypes.strided

    @property
    def names(self) -> tuple:
        """The dimensions' names: ``None`` for each (difflab has no named tensors).

        PyTorch's named tensors give dimensions names; difflab answers as PyTorch does
        for a tensor whose dimensions are unnamed, one ``None`` per dimension.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.zeros(2, 3).names, dl.tensor(1.0).names
        ((None, None), ())
        """
        return (None,) * self.ndim

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
    def _value_read(self, what: str) -> None:
        """Tell a graph tracer, if one is active, that ``what`` turns this value into Python."""
        if _GraphRecorder.active is not None:
            _GraphRecorder.active.value_read(self, what)

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number.

        The number leaves the tape: it is a plain Python value, with no gradient.  Use
        it to log a loss or read a count, not inside a computation to differentiate.

        Returns
        -------
        float, int, bool or complex
            Of the Python type matching the tensor's dtype.

        Raises
        ------
        ValueError
            For a tensor of more (or fewer) than one element; :meth:`tolist` reads those.

        See Also
        --------
        difflab.Tensor.tolist : all the values, as nested lists.

        Examples
        --------
        >>> import difflab as dl
        >>> loss = (dl.tensor([1.0, 2.0], requires_grad=True) ** 2).sum()
        >>> loss.item()
        5.0
        >>> dl.tensor([[7]]).item(), dl.tensor(True).item()
        (7, True)
        >>> dl.tensor([1.0, 2.0]).item()
        Traceback (most recent call last):
            ...
        ValueError: a Tensor with 2 elements cannot be converted to a Python number; ...
        """
        self._value_read(".item()")
        if self.array.size != 1:
            raise ValueError(
                f"a Tensor with {self.array.size} elements cannot be converted to a Python "
                f"number; only one-element tensors can (use .tolist() for the rest)"
            )
        return self.array.reshape(()).item()

    def tolist(self) -> Any:
        """The values as (nested) Python lists of Python numbers.

        Like :meth:`item`, the values leave the tape (no gradient), and a GPU tensor's
        values are copied to the host.

        Returns
        -------
        list or number
            Nested ``self.dim()`` deep; a 0-d tensor gives its number.

        See Also
        --------
        difflab.Tensor.item : one element as a number.
        difflab.Tensor.numpy : the values as a NumPy array.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([[1.0, 2.0], [3.0, 4.0]]).tolist()
        [[1.0, 2.0], [3.0, 4.0]]
        >>> dl.tensor(5).tolist()
        5
        """
        self._value_read(".tolist()")
        return backend.to_numpy(self.array).tolist()

    def numpy(self, force: bool = False) -> np.ndarray:
        """The values as a NumPy array; on the CPU it *shares memory* with the tensor.

        No copy is made on the CPU: writing into the array changes the tensor (and the
        tape does not see it), as in PyTorch.  ``tensor.detach().numpy()`` is the way
        from a tensor that requires grad.

        Parameters
        ----------
        force : bool, default False
            Convert anyway: a tensor that requires grad gives its values (cut off from
            the tape), and a CUDA tensor a copy on the host.

        Returns
        -------
        numpy.ndarray
            Of the tensor's shape and dtype.

        Raises
        ------
        RuntimeError
            For a tensor that requires grad, without ``force``.
        TypeError
            For a CUDA tensor, without ``force`` (copy it first with :meth:`cpu`).

        See Also
        --------
        difflab.Tensor.tolist : the values as Python lists.
        difflab.from_numpy : a tensor on a NumPy array, sharing its memory.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([1.0, 2.0])
        >>> a = x.numpy()
        >>> a
        array([1., 2.], dtype=float32)
        >>> a[0] = 9.0                     # shared memory: x changes too
        >>> x
        tensor([9., 2.])
        >>> w = dl.tensor([1.0], requires_grad=True)
        >>> w.detach().numpy(), w.numpy(force=True)
        (array([1.], dtype=float32), array([1.], dtype=float32))
        """
        self._value_read(".numpy()")
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
        if not isinstance(self.array, np.ndarray):  # (a dual tensor: its values, if it may)
            return np.asarray(self.array)
        return self.array

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        self._value_read("np.asarray()")
        if self.requires_grad:
            raise RuntimeError(
                "Can't convert a tensor that requires grad to a NumPy array: the result "
                "would silently leave the tape. Use tensor.detach().numpy() if that is "
                "what you want."
            )
        array = backend.to_numpy(self.array)
        return array if dtype is None else array.astype(dtype)

    # NumPy's dispatch protocols (NEP 13 and 18), __array_ufunc__ and __array_function__:
    # np.sin(t), np.sum(t, axis=0), np.stack([t, t]) and array + t become difflab's
    # primitives, recorded like t.sin().  difflab.numpy_protocol attaches them (this module
    # does not import it: no import cycle).  Only NumPy's own calls go there: dl.sin(t) and
    # t + t never do.

    def __float__(self) -> float:
        self._value_read("float()")
        return float(self.item())

    def __int__(self) -> int:
        self._value_read("int()")
        return int(self.item())

    def __index__(self) -> int:
        self._value_read("using it as an index")
        if self.dtype.kind not in "iub":
            raise TypeError("only integer tensors of a single element can be used as an index")
        return int(self.item())

    def __bool__(self) -> bool:
        self._value_read("bool()")
        if self.array.size != 1:
            raise RuntimeError(
                f"Boolean value of a tensor with {self.array.size} elements is ambiguous: "
                f"use .any() or .all()"
            )
        return bool(self.item())

    def __repr__(self) -> str:
        self._value_read("printing it")
        if getattr(self.array, "live", False):  # forward mode's dual numbers, as PyTorch
            dual = self.array                    # prints a dual tensor
            tangents = dual.tangents
            named = "tangent=" if len(tangents) == 1 else "tangents="
            tangent = Tensor._wrap(tangents[0] if len(tangents) == 1 else tangents)
            return f"{Tensor._wrap(dual.primal)!r}"[:-1] + f", {named}{tangent!r})"
        values = backend.to_numpy(self.array)
        if values.dtype == dtypes.BFLOAT16:  # (printed as its float32 value, as PyTorch)
            values = values.astype(np.float32)
        formatter = None
        if values.dtype == np.bool_:  # as PyTorch: True and False right-aligned to the widest
            width = 4 if values.all() else 5
            formatter = {"bool": lambda v: str(v).rjust(width)}
        options = PrintOptions.current
        if options["sci_mode"] and values.dtype.kind == "f":
            digits = options["precision"]
            formatter = {"float_kind": lambda v: f"{v:.{digits}e}"}
        body = np.array2string(values, separator=", ", prefix="tensor(",
                               precision=options["precision"], threshold=options["threshold"],
                               edgeitems=options["edgeitems"],
                               max_line_width=options["linewidth"],
                               suppress_small=options["sci_mode"] is False, formatter=formatter)
        extras = []
        if self.is_cuda:
            extras.append(f"device='{self.device}'")
        if self.dtype not in (_Defaults.dtype, int64, bool_):
            extras.append(f"dtype={self.dtype}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name()}>")
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
        r"""Add d(self)/d(leaf) into the ``.grad`` of every leaf that requires grad.

        .. math:: x.\text{grad} \mathrel{+}= v^\top \frac{\partial\,\text{self}}{\partial x}

        Parameters
        ----------
        gradient : Tensor, array or float, optional
            The vector v, of self's shape; needed unless self is a scalar (then 1).
        retain_graph : bool, optional
            Keep the tape's saved values for another backward (default:
            ``create_graph``).
        create_graph : bool, default False
            Record the backward, so that the gradients can be differentiated again.
        inputs : sequence of Tensor, optional
            Accumulate into these leaves only.

        Returns
        -------
        None
            Gradients add up across calls: zero them between optimisation steps.

        Raises
        ------
        RuntimeError
            If self does not require grad, is not a scalar and has no ``gradient``,
            or its graph was freed by an earlier backward.

        See Also
        --------
        difflab.autograd.backward : the same for several outputs.
        difflab.autograd.grad : the gradients returned, not accumulated.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([1.0, 2.0, 3.0], requires_grad=True)
        >>> (x ** 2).sum().backward()
        >>> x.grad
        tensor([2., 4., 6.])
        >>> x.grad = None
        >>> (x ** 2).backward(dl.tensor([1.0, 0.0, 1.0]))   # vᵀJ for a vector output
        >>> x.grad
        tensor([2., 0., 6.])
        """
        if gradient is None and inputs is None and not create_graph \
                and _engine_loss.backward_one_record(self, retain_graph):
            return  # (a speed shortcut took it: a loss whose tape is one record)
        from difflab.autograd.functional import backward

        backward(self, gradient, retain_graph, create_graph, inputs)

    def detach(self) -> Tensor:
        r"""The same values, cut off from the tape (shares memory and version).

        A stop-gradient (JAX's ``stop_gradient``): the primitive ``detach`` of the
        registry, whose value is ``self`` and whose derivative is zero by decree, so
        every method and transform stops there, not only the tape: forward mode drops
        a dual number's tangents (``jacfwd``, ``jvp``, at every nested level), the
        symbolic method writes sympy's ``detached``, and a traced or compiled function
        records a ``detach`` line that its gradient stops at.

        Returns
        -------
        Tensor
            A tensor that does not require grad, viewing self's array: an in-place
            change of either shows in both.

        See Also
        --------
        difflab.no_grad : compute without recording at all.
        difflab.Tensor.data : the same stop, without the shared version counter.

        Notes
        -----
        .. math::

            \operatorname{detach}(x) = x, \qquad
            \frac{\partial \operatorname{detach}(x)}{\partial x} := 0

        So ``v - v.detach()`` is zero with gradient one, and ``v.detach() * v``
        has gradient ``v``.  Finite differences, which see only values, hold the
        detached value at its value at the unperturbed point, so ``method="numeric"``
        gives ``v`` too.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab.func import jacfwd
        >>> x = dl.tensor([1.0, 2.0], requires_grad=True)
        >>> y = (x * 3).detach()
        >>> y, y.requires_grad
        (tensor([3., 6.]), False)
        >>> jacfwd(lambda v: v.detach() * v)(dl.tensor([1.0, 2.0]))   # forward mode too
        tensor([[1., 0.],
                [0., 2.]])
        """
        t = _apply(_STOP_GRADIENT, self)  # (the primitive: every interpreter sees the stop)
        # (its memory and version counter are self's, but it is no view in autograd's
        # sense, as in PyTorch: a recorded write into it is its own, not self's)
        t._version = self._version
        return t

    def _off_tape(self) -> Tensor:
        """This tensor's array as it is, without its record on the tape.

        The function transforms' and the engine's own bookkeeping (a gradient handed
        back, a fresh input of ``jacrev``), not a user's stop-gradient: where
        :meth:`detach` stops *every* derivative (it drops a dual number's tangents
        too, and a traced function records it), this cuts only the tape, so a
        transform nested around the one doing the bookkeeping (``jacfwd(jacrev(f))``)
        still sees its derivatives pass.
        """
        return Tensor._wrap(self.array, None, self._version)

    def detach_(self) -> Tensor:
        """Cut this tensor off the tape, in place: it becomes a leaf that needs no grad.

        The in-place form of :meth:`detach`: the same tensor object now has no
        ``grad_fn`` and does not require grad, so nothing computed from it from now on
        is recorded, and no gradient flows back through it to what made it.

        Returns
        -------
        Tensor
            self.

        See Also
        --------
        difflab.Tensor.detach : a detached tensor, leaving self as it is.

        Examples
        --------
        >>> import difflab as dl
        >>> w = dl.tensor([1.0, 2.0], requires_grad=True)
        >>> y = w * 2
        >>> y.detach_() is y
        True
        >>> y.requires_grad, y.grad_fn, y.is_leaf
        (False, None, True)
        """
        # the stop-gradient primitive's values (a traced function records the stop there;
        # forward mode drops a dual number's tangents), on the same memory
        self.array = _apply(_STOP_GRADIENT, self).array
        self.grad_fn = None
        self._requires_grad = False
        return self

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` in place and return self (PyTorch's method).

        Parameters
        ----------
        requires_grad : bool, default True
            Whether operations on this tensor are recorded from now on.

        Returns
        -------
        Tensor
            self.

        Raises
        ------
        RuntimeError
            For a non-leaf tensor switched off, or an integer tensor switched on
            (only floating-point tensors can require grad).

        Examples
        --------
        >>> import difflab as dl
        >>> w = dl.zeros(2).requires_grad_()
        >>> w.requires_grad
        True
        """
        self.requires_grad = requires_grad
        return self

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor too (normally only leaves get one).

        After it, :meth:`backward` fills ``self.grad`` with d(output)/d(self) as it
        passes through: a way to look at an intermediate gradient.  On a leaf that
        requires grad it does nothing (a leaf gets its ``.grad`` anyway).

        Returns
        -------
        None

        Raises
        ------
        RuntimeError
            For a tensor that does not require grad (no gradient ever reaches it).

        See Also
        --------
        difflab.Tensor.retains_grad : whether it was called.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([1.0, 2.0], requires_grad=True)
        >>> y = x * 3
        >>> y.retain_grad()
        >>> (y * y).sum().backward()
        >>> y.grad                         # d(sum y²)/dy = 2y
        tensor([ 6., 12.])
        >>> x.grad
        tensor([18., 36.])
        """
        if self.grad_fn is None:
            if not self.requires_grad:
                raise RuntimeError("can't retain_grad on a tensor that does not require grad")
            return
        self.grad_fn.retained = weakref.ref(self)

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> Any:
        """Call ``hook(grad)`` each time the gradient with respect to this tensor is computed.

        The hook sees the complete gradient of this tensor (every use of it
        summed) and may return a new one, which replaces it for the rest of the
        backward pass: the operations before this tensor receive it, and so do
        ``.grad`` (on a leaf, or with :meth:`retain_grad`) and
        :func:`difflab.autograd.grad`.  Hooks run in the order they were
        registered, each given what the one before returned.  They work on
        leaves and on results alike; on a result, the hook belongs to the
        operation that made it, so one registered before an in-place change of
        the tensor sees the gradient of the value before the change.

        Parameters
        ----------
        hook : callable
            ``hook(grad) -> Tensor or None``.  ``grad`` is a Tensor of this
            tensor's shape (recorded, with ``create_graph=True``, so what the
            hook computes is differentiated again).  It must not change ``grad``
            in place; return a new Tensor of the same shape instead, or ``None``
            to keep it.

        Returns
        -------
        difflab.utils.hooks.RemovableHandle
            ``handle.remove()`` unregisters the hook.

        Raises
        ------
        RuntimeError
            On a tensor that does not require grad (no gradient is computed for
            it); during backward, if the hook returned a gradient of another shape.
        TypeError
            During backward, if the hook returned something else than a Tensor or
            ``None``.

        Warns
        -----
        UserWarning
            When registered, or run, while :mod:`difflab.jit` traces (``jit.trace``,
            ``dl.compile``): a replay of the traced graph does not call Python hooks.

        See Also
        --------
        difflab.Tensor.register_post_accumulate_grad_hook : a leaf's finished ``.grad``.
        difflab.nn.Module.register_full_backward_hook : a module's input gradients.

        Examples
        --------
        >>> import difflab as dl
        >>> v = dl.tensor([0.0, 0.0, 0.0], requires_grad=True)
        >>> h = v.register_hook(lambda grad: grad * 2)      # double the gradient
        >>> v.backward(dl.tensor([1.0, 2.0, 3.0]))
        >>> v.grad
        tensor([2., 4., 6.])
        >>> h.remove()

        On a result, the gradient is replaced before it flows on to ``x``:

        >>> x = dl.tensor([1.0, 2.0], requires_grad=True)
        >>> y = x * x
        >>> _ = y.register_hook(lambda grad: print("dy:", grad))
        >>> _ = y.register_hook(lambda grad: grad * 10)
        >>> y.sum().backward()
        dy: tensor([1., 1.])
        >>> x.grad                         # 10 · 2x
        tensor([20., 40.])
        """
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                               "gradient: set requires_grad=True on it (or on the leaves "
                               "it is computed from) first")
        if not callable(hook):
            raise TypeError(f"register_hook expects a callable hook(grad), got "
                            f"{type(hook).__name__}")
        from difflab.utils.hooks import RemovableHandle

        if _GraphRecorder.active is not None:
            warnings.warn("a tensor hook (Tensor.register_hook) registered while difflab.jit "
                          "traces will not be called when the traced graph is replayed: it "
                          "is Python code; run the function uncompiled to call it",
                          stacklevel=2)
        if self.grad_fn is None:  # a leaf keeps its own hooks
            if getattr(self, "_backward_hooks", None) is None:
                self._backward_hooks = []
            hooks = self._backward_hooks
        else:
            if self.grad_fn.hooks is None:
                self.grad_fn.hooks = []
            hooks = self.grad_fn.hooks
        hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def register_post_accumulate_grad_hook(self, hook: Any) -> Any:
        """Call ``hook(self)`` each time a backward pass has finished adding into ``self.grad``.

        For leaves that require grad, as in PyTorch.  Data-parallel training uses
        it to start sending a gradient to the other processes as soon as it is
        final.

        Parameters
        ----------
        hook : callable
            Called as ``hook(tensor)`` with this tensor, its ``.grad`` complete for this
            backward pass; what it returns is ignored.  Hooks run in the order they
            were registered.

        Returns
        -------
        difflab.utils.hooks.RemovableHandle
            ``handle.remove()`` unregisters the hook.

        Raises
        ------
        RuntimeError
            On a tensor that is not a leaf, or does not require grad (it gets no
            ``.grad``).

        Examples
        --------
        >>> import difflab as dl
        >>> w = dl.tensor([1.0, 2.0], requires_grad=True)
        >>> handle = w.register_post_accumulate_grad_hook(lambda t: print("ready:", t.grad))
        >>> (w * 3).sum().backward()
        ready: tensor([3., 3.])
        >>> handle.remove()
        >>> (w * 3).sum().backward()       # no hook now; the gradients add up
        >>> w.grad
        tensor([6., 6.])
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
        """Whether :meth:`retain_grad` was called on this non-leaf tensor.

        Always ``False`` for a leaf (it gets its ``.grad`` without retaining).

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([1.0], requires_grad=True)
        >>> y, z = x * 2, x * 3
        >>> y.retain_grad()
        >>> y.retains_grad, z.retains_grad, x.retains_grad
        (True, False, False)
        """
        return self.grad_fn is not None and getattr(self.grad_fn, "retained", None) is not None

    # ----------------------------------------------------------------- devices
    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """This tensor on another device and/or with another dtype (self if it has them).

        Called as PyTorch's ``.to``: ``to(device)``, ``to(dtype)``, ``to(device, dtype)``,
        ``to(other)`` (other's device and dtype) or with keywords.  A copy is made only
        when something changes; the gradient flows back through it, moved back to
        self's device and converted back to self's dtype.  A conversion to an integer
        or bool dtype rounds toward zero or compares with zero, where no gradient flows:
        its result does not require grad (as in PyTorch).

        Parameters
        ----------
        device : str, difflab.device or int, optional
            ``"cpu"``, ``"cuda"``, ``"cuda:1"``, a device, or a CUDA index
            (positional or keyword).
        dtype : dtype, optional
            ``difflab.float64``, ``difflab.int64``, a NumPy dtype, ... (positional or
            keyword).
        other : Tensor, optional
            Instead of both: take its device and dtype.
        non_blocking : bool, optional
            Accepted for PyTorch's signature (difflab's copies are synchronous).

        Returns
        -------
        Tensor
            self when neither the device nor the dtype changes; else a new tensor.

        Raises
        ------
        TypeError
            For another keyword, or something that is not a dtype.
        ValueError
            For a string that names no device (a positional string is a device:
            write ``dtype=`` or a dtype object for a dtype).
        RuntimeError
            For CUDA where CuPy or a GPU is missing (the message says what to install).

        See Also
        --------
        difflab.Tensor.type : the dtype by PyTorch's legacy type name.
        difflab.astype : the same conversion as a function (the array API's).

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([1.5, -2.5], requires_grad=True)
        >>> y = x.to(dl.float64)
        >>> y
        tensor([ 1.5, -2.5], dtype=difflab.float64, grad_fn=<ToDtypeBackward0>)
        >>> (y * y).sum().backward()
        >>> x.grad                         # converted back to float32
        tensor([ 3., -5.])
        >>> x.to("cpu") is x, x.to(dl.float32) is x
        (True, True)
        >>> x.to(dl.int64)                 # rounds toward zero; no gradient
        tensor([ 1, -2])
        >>> dl.tensor([1, 2]).to(y)        # y's device and dtype
        tensor([1., 2.], dtype=difflab.float64)
        """
        device, dtype = to_arguments(args, kwargs)
        out = self
        if device is not None:
            device = backend.device(device)
            if device != self.device:
                out = _apply(_structural.ToDevice, out, device=device)
        if dtype is not None and np.dtype(dtype) != out.dtype:
            target = dtypes.dtype(np.dtype(dtype))
            if out.requires_grad and target.kind not in "fc":  # (no gradient through it)
                with set_grad_enabled(False):
                    return _apply(_structural.Cast, out, dtype=np.dtype(dtype))
            out = _apply(_structural.Cast, out, dtype=np.dtype(dtype))
        return out

    def astype(self, dtype: Any) -> Tensor:
        """NumPy's name for :meth:`~difflab.Tensor.to` with a dtype: ``x.astype(dl.float32)``.

        Derivative rules are written against NumPy's names (``g.astype(dtype)``);
        this lets the same rule run on tensors when a backward pass is recorded.

        Parameters
        ----------
        dtype : dtype
            ``difflab.float32``, a NumPy dtype, or a NumPy name such as ``"float64"``.

        Returns
        -------
        Tensor
            self if it has that dtype already; else the converted copy (the gradient
            flows back through a floating-point one, converted back).

        Raises
        ------
        TypeError
            For something that is not a dtype.

        See Also
        --------
        difflab.Tensor.to : the same, and devices.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([1, 2]).astype(dl.float32)
        tensor([1., 2.])
        >>> dl.tensor([1.5, 2.5]).astype("float64").dtype
        difflab.float64
        """
        return self.to(dtype=dtype)

    def cuda(self, device: Any = None) -> Tensor:
        """This tensor on a CUDA GPU (in CuPy): ``self.to("cuda")``, self if it is there.

        The gradient flows back to where the values came from.  It needs CuPy and a
        GPU: ``difflab.cuda.is_available()`` says whether there is one.  Without a GPU,
        ``difflab.testing.fake_cupy`` stands in for CuPy on the CPU (the test suite runs
        the GPU code paths on it), as the example does.

        Parameters
        ----------
        device : int, str or difflab.device, optional
            Which GPU: an index (``1``), ``"cuda:1"`` or a CUDA device.  Default: the
            current one, ``cuda:0``.

        Returns
        -------
        Tensor
            The same values on that GPU.

        Raises
        ------
        RuntimeError
            Where CuPy or a GPU is missing (the message names the package to install),
            or for a GPU index the machine does not have.
        ValueError
            For a device that is not a CUDA device (use :meth:`~difflab.Tensor.to` for those).

        See Also
        --------
        difflab.Tensor.cpu : back to the CPU.
        difflab.Tensor.to : to any device.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab.testing import fake_cupy
        >>> x = dl.tensor([1.0, 2.0], requires_grad=True)
        >>> with fake_cupy.installed():    # CuPy's CPU stand-in: the same on any machine
        ...     y = x.cuda()
        ...     print(y.device, y.is_cuda)
        ...     (y * y).sum().backward()
        cuda:0 True
        >>> x.grad                         # back on the CPU, where x is
        tensor([2., 4.])
        """
        if device is None:
            target = backend.Device("cuda")
        elif isinstance(device, (str, backend.Device)):
            target = backend.Device(device)
            if target.type != "cuda":
                raise ValueError(f"cuda(): {device!r} is not a CUDA device; use "
                                 f".to({str(device)!r}) to move a tensor there")
        else:
            target = backend.Device("cuda", int(device))
        return self.to(target)

    def cpu(self) -> Tensor:
        """This tensor in CPU memory (NumPy): ``self.to("cpu")``, self if it is there.

        A GPU tensor is copied to the host; the gradient flows back to the GPU.

        Returns
        -------
        Tensor
            The same values on the CPU.

        See Also
        --------
        difflab.Tensor.cuda : to the GPU.
        difflab.Tensor.numpy : the values as a NumPy array (after ``cpu()``).

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab.testing import fake_cupy
        >>> x = dl.tensor([1.0, 2.0])
        >>> x.cpu() is x                   # already there: no copy
        True
        >>> with fake_cupy.installed():    # CuPy's CPU stand-in, as on a GPU
        ...     print(x.cuda().cpu().device)
        cpu
        """
        return self.to("cpu")

    def type(self, dtype: Any = None) -> Any:
        """PyTorch's legacy type name (``"difflab.FloatTensor"``), or a conversion to a type.

        Parameters
        ----------
        dtype : dtype, str or legacy tensor type, optional
            Without it, the method returns the type's name.  With it, the tensor
            converted: ``difflab.float64``, ``difflab.DoubleTensor`` or its name
            ``"difflab.DoubleTensor"`` (``"difflab.cuda.DoubleTensor"`` moves it to
            the GPU too).

        Returns
        -------
        str or Tensor
            The name, as ``"difflab.FloatTensor"`` (``"difflab.cuda.FloatTensor"`` on a
            GPU), or the converted tensor (self when nothing changes; see
            :meth:`~difflab.Tensor.to`).

        Raises
        ------
        ValueError
            For a string that is not a legacy type name.

        See Also
        --------
        difflab.Tensor.dtype : the dtype itself.
        difflab.Tensor.to : convert to a dtype or device.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([1.0]).type(), dl.tensor([1]).type()
        ('difflab.FloatTensor', 'difflab.LongTensor')
        >>> dl.tensor([1.5]).type(dl.float64)
        tensor([1.5], dtype=difflab.float64)
        >>> dl.tensor([1.5]).type("difflab.IntTensor")
        tensor([1], dtype=difflab.int32)
        """
        if dtype is None:
            name = LEGACY_TYPE_NAMES.get(self.array.dtype.name, self.array.dtype.name)
            return f"difflab.{'cuda.' if self.is_cuda else ''}{name}Tensor"
        if isinstance(dtype, str):
            return self.to(*_legacy_type(dtype))
        if isinstance(dtype, type) and not issubclass(dtype, np.generic) and hasattr(
                dtype, "dtype"):  # a legacy type: difflab.DoubleTensor
            dtype = dtype.dtype
        return self.to(dtype=dtype)

    def float(self) -> Tensor:
        """This tensor as 32-bit floats (``self.to(difflab.float32)``), difflab's default.

        Returns
        -------
        Tensor
            self if it is float32 already; else a float32 copy (the gradient flows back
            through it, converted to self's dtype).

        See Also
        --------
        difflab.Tensor.to : to any dtype.
        difflab.Tensor.double : to float64.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([1, 2]).float()
        tensor([1., 2.])
        >>> mask = dl.tensor([1.0, -2.0, 3.0]) > 0
        >>> mask.float().mean()            # the share of positives
        tensor(0.6667)
        """
        return self.to(float32)

    def double(self) -> Tensor:
        """This tensor as 64-bit floats (``self.to(difflab.float64)``).

        float64 has about 16 significant digits to float32's 7: the precision wanted
        by a finite difference or a gradient check.

        Returns
        -------
        Tensor
            self if it is float64 already; else a float64 copy (the gradient flows back
            through it, converted to self's dtype).

        See Also
        --------
        difflab.Tensor.float : to float32.
        difflab.autograd.gradcheck : checks gradients in float64.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([0.1], requires_grad=True)
        >>> y = x.double()
        >>> y.dtype, y.item() == 0.1       # float32's 0.1, exactly, is not float64's
        (difflab.float64, False)
        >>> (y * 2).sum().backward()
        >>> x.grad
        tensor([2.])
        """
        return self.to(float64)

    def half(self) -> Tensor:
        """This tensor as 16-bit floats (``self.to(difflab.float16)``).

        Half the memory of float32, with about 3 significant digits and a largest
        value of 65504 (beyond it: ``inf``).

        Returns
        -------
        Tensor
            self if it is float16 already; else a float16 copy (the gradient flows back
            through it, converted to self's dtype).

        See Also
        --------
        difflab.Tensor.bfloat16 : 16 bits with float32's range.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([1.0, 0.1]).half()
        >>> x.dtype, x[1].item()           # 0.1 to about 3 digits
        (difflab.float16, 0.0999755859375)
        """
        return self.to(float16)

    def bfloat16(self) -> Tensor:
        """This tensor as bfloat16 (``self.to(difflab.bfloat16)``; needs ml_dtypes).

        bfloat16 keeps float32's exponent (its range) and 8 bits of mantissa (about 2
        to 3 significant digits): the dtype of mixed-precision training.  NumPy has
        none: the ml_dtypes package adds it (``pip install difflab[bfloat16]``).

        Returns
        -------
        Tensor
            self if it is bfloat16 already; else a bfloat16 copy (the gradient flows
            back through it, converted to self's dtype).

        Raises
        ------
        RuntimeError
            Without the ml_dtypes package (the message says what to install).

        See Also
        --------
        difflab.Tensor.half : float16, more digits and less range.
        difflab.autocast : computes in bfloat16 where it is safe.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([1.1, 70000.0]).bfloat16()
        >>> x
        tensor([1.1016e+00, 7.0144e+04], dtype=difflab.bfloat16)
        >>> x.element_size()
        2
        """
        return self.to(dtypes.bfloat16)

    def long(self) -> Tensor:
        """This tensor as 64-bit integers (``self.to(difflab.int64)``), rounding toward zero.

        The dtype of indices (``gather``, ``cross_entropy``'s targets).  No gradient
        flows through the rounding: the result does not require grad.

        Returns
        -------
        Tensor
            self if it is int64 already; else an int64 copy.

        See Also
        --------
        difflab.Tensor.int : to int32.
        difflab.Tensor.round : round to the nearest integer first.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([1.7, -1.7, 2.0]).long()
        tensor([ 1, -1,  2])
        """
        return self.to(int64)

    def int(self) -> Tensor:
        """This tensor as 32-bit integers (``self.to(difflab.int32)``), rounding toward zero.

        No gradient flows through the rounding: the result does not require grad.

        Returns
        -------
        Tensor
            self if it is int32 already; else an int32 copy.

        See Also
        --------
        difflab.Tensor.long : to int64, the dtype of indices.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([1.7, -1.7]).int()
        tensor([ 1, -1], dtype=difflab.int32)
        """
        return self.to(int32)

    def bool(self) -> Tensor:
        """This tensor as booleans (``self.to(difflab.bool)``): True where nonzero.

        NaN is nonzero, so True.  The result does not require grad.

        Returns
        -------
        Tensor
            self if it is bool already; else a bool copy.

        See Also
        --------
        difflab.Tensor.float : a mask back to numbers (0. and 1.).

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([0.0, 2.5, -1.0, float("nan")]).bool()
        tensor([False,  True,  True,  True])
        """
        return self.to(bool_)

    def type_as(self, other: Tensor) -> Tensor:
        """This tensor with ``other``'s dtype (``self.to(other.dtype)``).

        Only the dtype: the device stays (``self.to(other)`` takes both).

        Parameters
        ----------
        other : Tensor
            The tensor whose dtype to take.

        Returns
        -------
        Tensor
            self if the dtypes agree already; else the converted copy.

        Raises
        ------
        TypeError
            If ``other`` is not a tensor (a number has no dtype of its own to take).

        See Also
        --------
        difflab.Tensor.to : convert to a dtype or device.

        Examples
        --------
        >>> import difflab as dl
        >>> weights = dl.zeros(2, dtype=dl.float64)
        >>> dl.tensor([1, 2]).type_as(weights)
        tensor([1., 2.], dtype=difflab.float64)
        """
        return self.to(require_tensor(other, "type_as").dtype)

    def is_inference(self) -> bool:
        """Whether this tensor was made inside an ``inference_mode()`` block.

        Results computed there, and views of them (made anywhere), are inference tensors;
        a tensor made before the block stays an ordinary one, even when the block writes
        into it or takes a view of it.  ``no_grad()`` makes no inference tensors.

        Returns
        -------
        bool

        See Also
        --------
        difflab.inference_mode : the block.
        difflab.is_inference_mode_enabled : whether such a block is open now.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.ones(2)
        >>> with dl.inference_mode():
        ...     y = x * 2
        >>> x.is_inference(), y.is_inference(), y[1:].is_inference()
        (False, True, True)
        """
        return type(self._version) is InferenceVersion

    def is_floating_point(self) -> bool:
        """Whether the dtype is a floating-point one (float16, bfloat16, float32, float64).

        Only floating-point (and complex) tensors can require grad.

        Returns
        -------
        bool

        See Also
        --------
        difflab.Tensor.is_complex : whether it is complex.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([1.0]).is_floating_point(), dl.tensor([1]).is_floating_point()
        (True, False)
        """
        return self.dtype.kind == "f"

    def short(self) -> Tensor:
        """This tensor as 16-bit integers (``self.to(difflab.int16)``), rounding toward zero.

        Integers wrap around outside [-32768, 32767], as in NumPy and PyTorch.  The
        result does not require grad.

        Returns
        -------
        Tensor
            self if it is int16 already; else an int16 copy.

        See Also
        --------
        difflab.Tensor.int : to int32.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([2.9, -2.9]).short()
        tensor([ 2, -2], dtype=difflab.int16)
        >>> dl.tensor([32768]).short()     # one past the largest int16
        tensor([-32768], dtype=difflab.int16)
        """
        return self.to(int16)

    def byte(self) -> Tensor:
        """This tensor as unsigned 8-bit integers (``self.to(difflab.uint8)``), 0 to 255.

        The dtype of image pixels.  Integers wrap around modulo 256, as in NumPy and
        PyTorch (negative floats have no defined conversion: clamp them first).  The
        result does not require grad.

        Returns
        -------
        Tensor
            self if it is uint8 already; else a uint8 copy.

        See Also
        --------
        difflab.Tensor.float : back to numbers to compute with.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([0.0, 127.9, 255.0]).byte()
        tensor([  0, 127, 255], dtype=difflab.uint8)
        >>> dl.tensor([-1, 256]).byte()    # integers wrap around
        tensor([255,   0], dtype=difflab.uint8)
        """
        return self.to(uint8)

    def is_complex(self) -> bool:
        """Whether the dtype is complex (complex64 or complex128).

        Returns
        -------
        bool

        See Also
        --------
        difflab.Tensor.is_floating_point : whether it is real floating point.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.tensor([1 + 2j]).is_complex(), dl.tensor([1.0]).is_complex()
        (True, False)
        """
        return self.dtype.kind == "c"

    # ----------------------------------------------------- the memory behind the values
    # A tensor's values live in one NumPy (or CuPy) array; these read its layout, for
    # programs that print or check it.  difflab never needs them itself.
    def element_size(self) -> int:
        """Bytes per element (4 for float32).

        Returns
        -------
        int
            The dtype's size in bytes: 1 for bool and uint8, 2 for float16 and
            bfloat16, 4 for float32 and int32, 8 for float64 and int64.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.zeros(3, dtype=dl.float64).element_size()
        8
        """
        return self.array.dtype.itemsize

    @property
    def itemsize(self) -> int:
        """Bytes per element: :meth:`element_size` as a property (PyTorch's and NumPy's name).

        Examples
        --------
        >>> import difflab as dl
        >>> dl.zeros(3, dtype=dl.float32).itemsize
        4
        """
        return self.element_size()

    @property
    def nbytes(self) -> int:
        """Bytes taken by the elements: ``numel() * element_size()`` (a view counts its own).

        Examples
        --------
        >>> import difflab as dl
        >>> dl.zeros(2, 3, dtype=dl.float64).nbytes
        48
        """
        return self.numel() * self.element_size()

    def pin_memory(self, device: Any = None) -> Tensor:
        """A copy of this CPU tensor in page-locked memory, for faster copies to a GPU.

        PyTorch copies the values into page-locked host memory, which the GPU reads
        without a staging copy (``DataLoader(pin_memory=True)``, ``.to("cuda",
        non_blocking=True)``).  difflab's copies to the GPU go through CuPy from NumPy
        memory, so there is nothing to pin: the copy is an ordinary one (``clone``:
        a change to it leaves this tensor alone, and gradients flow through it, as
        in PyTorch).

        Parameters
        ----------
        device : optional
            PyTorch's (deprecated) device to pin for; accepted.

        Returns
        -------
        Tensor
            A copy of the values.

        Raises
        ------
        RuntimeError
            For a tensor on the GPU (only CPU tensors can be pinned, as in PyTorch).

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.ones(2)
        >>> x.pin_memory().add_(1.0), x
        (tensor([2., 2.]), tensor([1., 1.]))
        """
        if self.is_cuda:
            raise RuntimeError(f"cannot pin a tensor on {self.device}: only CPU tensors can be "
                               f"pinned")
        return self.clone()

    def is_pinned(self, device: Any = None) -> bool:
        """Whether the values are in page-locked host memory: never in difflab.

        See :meth:`pin_memory`: difflab has no page-locked memory to pin into.

        Parameters
        ----------
        device : optional
            Accepted for PyTorch's signature.

        Returns
        -------
        bool
            False.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.ones(2).is_pinned()
        False
        """
        return False

    def stride(self, dim: int | None = None) -> Any:
        """Steps in *elements* between neighbours along each dimension (NumPy counts bytes).

        Element ``x[i, j]`` lies ``i * stride(0) + j * stride(1)`` elements after the
        first one.  A view (a transpose, a slice with a step) has other strides than a
        fresh tensor of its shape, and no copy of the values.

        Parameters
        ----------
        dim : int, optional
            One dimension (negative counts from the end).  Default: all of them.

        Returns
        -------
        tuple of int, or int
            The strides of all dimensions, or of ``dim``.

        Raises
        ------
        IndexError
            For a ``dim`` the tensor does not have.

        See Also
        --------
        difflab.Tensor.is_contiguous : whether the strides are a fresh tensor's.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.zeros(2, 3).stride(), dl.zeros(2, 3).t().stride(0)
        ((3, 1), 1)
        """
        steps = tuple(s // self.array.dtype.itemsize for s in self.array.strides)
        if dim is None:
            return steps
        return steps[dim_index(dim, self.ndim, "stride", zero_d_has_dim=False)]

    def is_contiguous(self, memory_format: Any = None) -> bool:
        """True when the values lie in row-major order without gaps (a transpose is not).

        :meth:`difflab.Tensor.contiguous` gives a contiguous copy where this is False;
        :meth:`difflab.Tensor.view` needs a layout it can reshape without copying.

        Parameters
        ----------
        memory_format : optional
            Accepted for PyTorch's signature; difflab has one memory format (row-major),
            so it does not change the answer.

        Returns
        -------
        bool

        See Also
        --------
        difflab.Tensor.stride : the steps between neighbours.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.zeros(2, 3).is_contiguous(), dl.zeros(2, 3).t().is_contiguous()
        (True, False)
        """
        return bool(self.array.flags.c_contiguous)

    def data_ptr(self) -> int:
        """The address of the first element (views of one tensor differ by their offset).

        Two tensors share memory when their address ranges overlap; a view's address is
        its base's plus ``storage_offset() * element_size()``.

        Returns
        -------
        int
            The address in memory (on a GPU, in the device's memory).

        See Also
        --------
        difflab.Tensor.storage_offset : the same offset, counted in elements.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.zeros(4)
        >>> x[1:].data_ptr() - x.data_ptr() == x.element_size()
        True
        """
        return int(backend.data_address(self.array))

    def storage_offset(self) -> int:
        """Elements between the start of the memory this tensor views and its first element.

        Returns
        -------
        int
            0 for a tensor with memory of its own; for a view, how far into its base
            it starts.

        See Also
        --------
        difflab.Tensor.data_ptr : the first element's address.

        Examples
        --------
        >>> import difflab as dl
        >>> dl.arange(6)[2:].storage_offset()
        2
        """
        base = self.array
        while getattr(base, "base", None) is not None:
            base = base.base
        gap = backend.data_address(self.array) - backend.data_address(base)
        return int(gap // self.array.dtype.itemsize)

from difflab.autograd import engine_loss as _engine_loss  # noqa: E402  (shortcut 18)
from difflab.autograd.engine import GraphRecorder as _GraphRecorder  # noqa: E402
from difflab.autograd.engine import apply as _apply  # noqa: E402
from difflab.autograd.engine import register_tensor_type  # noqa: E402
from difflab.autograd.grad_mode import set_grad_enabled  # noqa: E402

register_tensor_type(Tensor)  # (the engine wraps its results in it, without importing it)
from difflab.ops import docstrings as _docstrings  # noqa: E402
from difflab.ops import registry as _ops  # noqa: E402
from difflab.ops import structural as _structural  # noqa: E402

_STOP_GRADIENT = _ops.PRIMITIVES["detach"]


def _elementwise_method(op: Any) -> Any:
    """``Tensor.<name>`` for an elementwise primitive of the registry."""
    if isinstance(op, _ops.UnaryOp):
        def method(self: Tensor) -> Tensor:
            return _apply(op, unary_operand(op, self))
    else:
        floating = not op.rule.keeps_integers

        def method(self: Tensor, other: Any) -> Tensor:
            return _apply(op, *promote(self, unwrap_operand(other), floating))
    method.__name__ = method.__qualname__ = op.name
    method.elementwise_op = op  # (read by numpy_protocol: a Dual's or symbols' x.maximum(c))
    method.__doc__ = _docstrings.method_docstring(
        op, f"difflab.{op.name}", lambda v: repr(Tensor(np.asarray(v, dtype=np.float32))))
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


_FACES: set = set()  # the Tensor methods generated from primitives' faces


def _face_method(op: Any) -> Any:
    """``Tensor.<op.tensor_method>``: the call as ``op.arguments`` reads it, then the op."""
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        inputs, params = op.arguments(self, *args, **kwargs)
        return _apply(op, *inputs, **params)

    method.__name__ = method.__qualname__ = op.tensor_method
    method.__doc__ = _docstrings.forwarding_docstring(op, op.tensor_method,
                                                      f"difflab.{op.dl_function}")
    return method


def add_face_method(op: Any) -> None:
    """Give Tensor the method a primitive declares (``tensor_method``), unless it has one
    written by hand (a face generated before is replaced: a primitive redefined)."""
    name = op.tensor_method
    if name and (name in _FACES or not hasattr(Tensor, name)):
        _FACES.add(name)
        setattr(Tensor, name, _face_method(op))


_ops.on_register(add_face_method)
