"""PyTorch's functions along a dimension: gather, scatter, index_select, sorting, products.

gather, scatter, index_select, masked_fill, sort, topk and roll are indexing: they
record the ``index``, ``scatter_add`` and ``index_put`` primitives, so their derivatives
are the indexing rules (the adjoint scattered back to where each value came from).
einsum is a primitive of its own (:mod:`difflab.ops.products`; so is cumprod, whose faces
the registry generates).  Names,
keywords (``input=``, ``dim=``) and error messages follow PyTorch.

They are part of :mod:`difflab.functions` (which re-exports them), so they are
``difflab.gather``, ... and also serve as ``xp`` when a backward pass is recorded.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from difflab import backend
from difflab.autograd import engine as _engine
from difflab.autograd.engine import apply
from difflab.ops import products, registry, structural
from difflab.tensor import Tensor
from difflab.tensor_arguments import (
    MinMax,
    check_same_dtype,
    dim_index,
    index_arrays,
    integer,
    interpreted,
    promote_all,
    refuse_symbols,
    shape_args,
    tensor_of,
    tensor_or_interpreted,
)


def _integer_index(name: str, index: Any) -> Any:
    """The raw integer array of an index tensor (an error naming the dtype otherwise)."""
    array = index.array if isinstance(index, Tensor) else index
    if isinstance(array, (list, tuple, int)):
        array = np.asarray(array)
    if getattr(array, "dtype", np.dtype(float)).kind not in "iu":
        raise TypeError(
            f"{name}(): expected an index tensor of an integer dtype (int64), got "
            f"{getattr(array, 'dtype', type(array).__name__)}; use index.long()"
        )
    return array


def checked_index(index: Any, size: int, message: str, *, low: int = 0, skip: Any = None,
                  error: str = "IndexError") -> Tensor:
    """``index`` (a tensor or an integer array) once every entry lies in ``[low, size)``.

    The one way a function checks positions or classes it reads from a tensor: through
    the ``check_index`` primitive, so a traced graph checks every new index as eager
    code does (a check in Python would run only while tracing).  Read the index from the
    result, not from ``index``: then no graph pass drops the check.  ``message`` is the
    error's text, with ``{value}`` for the first entry out of range; ``skip`` is a value
    exempt from the check (``ignore_index``); ``error`` is ``"IndexError"``,
    ``"RuntimeError"`` or ``"ValueError"``.
    """
    return apply(registry.PRIMITIVES["check_index"], index, size=int(size), low=int(low),
                 skip=skip, error=error, message=message)


def _check_range(name: str, index: Any, size: int, dim: int) -> Tensor:
    """``index`` checked to lie in [0, size): PyTorch does not wrap negative indices here."""
    return checked_index(index, size, f"{name}(): index {{value}} is out of bounds for "
                         f"dimension {dim} with size {size} (valid: 0 .. {size - 1})",
                         error="RuntimeError")


def _along(index: Any, dim: int) -> tuple:
    """The NumPy index that picks ``x[i₀, .., index[i], .., iₙ]`` for every position i of
    ``index``: ``index`` itself on axis ``dim``, a broadcast ``arange`` on every other axis."""
    xp = backend.array_module(index)
    ndim = index.ndim
    grid = []
    for axis, n in enumerate(index.shape):
        if axis == dim:
            grid.append(index)
        else:
            shape = [1] * ndim
            shape[axis] = n
            grid.append(xp.arange(n).reshape(shape))
    return tuple(grid)


def _gather_index(name: str, x: Tensor, dim: int, index: Any, src: Any = None) -> Tensor:
    """Check an index for gather/scatter along ``dim`` of ``x``: the checked index.

    PyTorch's rules: the index has as many dimensions as ``x``; it is no longer than
    ``x`` on every other axis (and than ``src``, on every axis); its entries lie in
    [0, x.size(dim)).
    """
    array = _integer_index(name, index)
    if array.ndim != x.ndim and not (x.ndim <= 1 and array.ndim <= 1):
        raise RuntimeError(
            f"{name}(): index has {array.ndim} dimension{'s' * (array.ndim != 1)} but the input "
            f"has {x.ndim}; Index tensor must have the same number of dimensions as input "
            f"tensor (shape {tuple(array.shape)} vs input {tuple(x.shape)}: add or remove "
            f"dimensions with unsqueeze/squeeze)"
        )
    for axis, (n, m) in enumerate(zip(array.shape, x.shape)):
        if axis != dim and n > m:
            raise RuntimeError(
                f"{name}(): Size does not match at dimension {axis}: expected index "
                f"{tuple(array.shape)} to be no larger than the input {tuple(x.shape)} apart "
                f"from dimension {dim}"
            )
    if src is not None and isinstance(src, Tensor):
        if src.ndim != array.ndim or builtins.any(
                n > m for n, m in zip(array.shape, src.shape)):
            raise RuntimeError(
                f"{name}(): expected index {tuple(array.shape)} to be no larger than src "
                f"{tuple(src.shape)} in every dimension (and to have as many dimensions)"
            )
    return _check_range(name, index if isinstance(index, Tensor) else array,
                        x.shape[dim] if x.ndim else 1, dim)


def _differentiable(value: Any) -> Any:
    """``value`` as a tensor, unless it is a number type with an interpreter of its own (a
    dual number, sympy expressions): the primitive is handed to it as it is, so that its
    tangents or symbols are carried, never read as plain numbers."""
    return value if _engine.interpreter_for(value) is not None else tensor_of(value)


def _crop(src: Tensor, shape: tuple) -> Tensor:
    """The leading block of ``src`` with ``shape`` (what scatter reads of a larger src)."""
    if tuple(src.shape) == tuple(shape):
        return src
    return src[tuple(slice(0, n) for n in shape)]


def gather(input: Any, dim: int, index: Any, *, sparse_grad: bool = False) -> Tensor:  # noqa: A002
    r"""Pick values of ``input`` along ``dim`` at the positions ``index`` gives.

    For a 3-d input,

    .. math::
        \text{out}[i][j][k] = \begin{cases}
        \text{input}[\text{index}[i][j][k]][j][k] & \text{dim} = 0 \\
        \text{input}[i][\text{index}[i][j][k]][k] & \text{dim} = 1 \\
        \text{input}[i][j][\text{index}[i][j][k]] & \text{dim} = 2
        \end{cases}

    and likewise in other dimensions.  The gradient is the transpose of picking: the
    adjoint of ``out`` is scattered back into ``input``'s shape, *added* where the
    index repeats an element (``scatter_add``).

    Parameters
    ----------
    input : Tensor
        The values.
    dim : int
        The dimension to pick along (negative counts from the end).
    index : Tensor of int64
        Positions along ``dim``; the same number of dimensions as ``input``, and no
        larger than it in the other dimensions.
    sparse_grad : bool, default False
        Accepted for PyTorch's signature; the gradient is dense.

    Returns
    -------
    Tensor
        Of ``index``'s shape and ``input``'s dtype.

    Raises
    ------
    TypeError
        If ``index`` is not of an integer dtype.
    IndexError
        If ``dim`` is out of range.
    RuntimeError
        If an index is out of bounds (the message gives the valid range).

    See Also
    --------
    scatter, scatter_add : the writes that are gather's transpose.
    take_along_dim : NumPy's ``take_along_axis``.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> out = dl.gather(x, 1, dl.tensor([[0, 0], [1, 0]]))
    >>> out
    tensor([[1., 1.],
            [4., 3.]], grad_fn=<...>)
    >>> out.sum().backward()
    >>> x.grad                       # x[0][0] was picked twice
    tensor([[2., 0.],
            [1., 1.]])
    >>> x.gather(0, dl.tensor([[1, 0]]))     # the method is the same function
    tensor([[3., 2.]], grad_fn=<...>)
    """
    x = tensor_or_interpreted(input)  # (a Dual or a sympy expression: as it is)
    dim = dim_index(dim, x.ndim, "gather")
    checked = _gather_index("gather", x, dim, index)
    idx = checked.array
    if x.ndim == 0:  # a 0-d input behaves as one element
        return x.reshape(1)[checked.reshape(-1)].reshape(idx.shape)
    return x[_along(idx, dim)]


def scatter(input: Any, dim: int, index: Any, src: Any = None, *, value: Any = None,  # noqa: A002
            reduce: str | None = None) -> Tensor:
    r"""A copy of ``input`` with the values of ``src`` written at ``index`` along ``dim``.

    For a 2-d input (and likewise in other dimensions),

    .. math::
        \text{out}[\text{index}[i][j]][j] = \text{src}[i][j] \;\; (\text{dim} = 0),
        \qquad
        \text{out}[i][\text{index}[i][j]] = \text{src}[i][j] \;\; (\text{dim} = 1),

    and ``out`` equals ``input`` everywhere else: the inverse of :func:`difflab.gather`.
    ``input`` itself is not changed (the in-place form is ``Tensor.scatter_``).

    Parameters
    ----------
    input : Tensor
        The values written into (a copy of them).
    dim : int
        The dimension the index runs along (negative counts from the end).
    index : Tensor of int64
        Where each element of ``src`` goes along ``dim``: as many dimensions as
        ``input``, no larger than it in the other dimensions nor than ``src`` in any;
        entries in [0, input.shape[dim]).
    src : Tensor or number, optional
        The values written: a tensor of ``input``'s dtype (only its leading block of
        ``index``'s shape is read) or one number.
    value : number, optional, keyword-only
        PyTorch's name for a number ``src``.
    reduce : {None, 'add'}, optional, keyword-only
        ``'add'``: add instead of overwrite (:func:`difflab.scatter_add`).

    Returns
    -------
    Tensor
        ``input``'s shape and dtype.

    Raises
    ------
    TypeError
        If neither ``src`` nor ``value`` is given, ``dim`` is not an int, or ``index`` is
        not of an integer dtype.
    ValueError
        If ``reduce`` is not None or ``'add'``.
    IndexError
        If ``dim`` is out of range.
    RuntimeError
        If ``index`` has the wrong number of dimensions, is too large, or holds an
        entry out of bounds (the message gives the valid range), or a tensor ``src`` is
        of another dtype than ``input`` (convert it with ``src.to(input.dtype)``).

    See Also
    --------
    difflab.gather : the read that scatter inverts.
    difflab.scatter_add : adding up instead of overwriting.
    difflab.index_put : writes at NumPy-style indices.

    Notes
    -----
    Where ``index`` repeats a position, which write wins is unspecified (as in
    PyTorch), and so is the gradient of ``src`` there.  Gradients: ``input``'s
    adjoint is the output's with zeros where it was overwritten; ``src``'s is the
    output's adjoint gathered at ``index``: :math:`\bar{\text{src}}[i][j] =
    \bar{\text{out}}[\text{index}[i][j]][j]` (dim = 0).

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.zeros(2, 3, requires_grad=True)
    >>> src = dl.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    >>> out = dl.scatter(x, 0, dl.tensor([[1, 0, 1]]), src)
    >>> out
    tensor([[0., 2., 0.],
            [1., 0., 3.]], grad_fn=<...>)
    >>> (out * dl.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
    >>> x.grad                   # zero where overwritten
    tensor([[1., 0., 3.],
            [0., 5., 0.]])
    >>> src.grad                 # gathered from where each value went
    tensor([[4., 2., 6.]])
    >>> dl.scatter(dl.zeros(3), 0, dl.tensor([2]), value=7.0)
    tensor([0., 0., 7.])
    """
    x = tensor_or_interpreted(input)
    if src is None:
        src = value
    if src is None:
        raise TypeError("scatter() needs src (a tensor) or value (a number)")
    if isinstance(src, Tensor):  # (PyTorch refuses another dtype: a cast would round silently)
        check_same_dtype("scatter", x, src, "src")
    if reduce is not None:
        if reduce != "add":
            raise ValueError(f"scatter(): reduce must be None or 'add', got {reduce!r}")
        src = src if isinstance(src, Tensor) else full_like_index(x, index, src)
        return scatter_add(x, dim, index, src)
    dim = dim_index(dim, x.ndim, "scatter")
    idx = _gather_index("scatter", x, dim, index, src).array
    if isinstance(src, Tensor):
        src = _crop(src, idx.shape)
    return apply(structural.IndexPut, x, src, index=_along(idx, dim))


def full_like_index(x: Tensor, index: Any, value: Any) -> Tensor:
    """A tensor shaped like ``index`` filled with ``value``, in ``x``'s dtype and device."""
    xp = backend.array_module(x.array)
    return Tensor._wrap(xp.full(_integer_index("scatter", index).shape, value, dtype=x.dtype))


def scatter_add(input: Any, dim: Any, index: Any, src: Any = None) -> Any:  # noqa: A002
    r"""A copy of ``input`` with ``src`` added at ``index`` along ``dim`` (repeats add up).

    For a 2-d input (dim = 0; likewise in other dimensions),
    :math:`\text{out}[\text{index}[i][j]][j] \mathrel{+}= \text{src}[i][j]`, starting
    from ``out = input``: the transpose of :func:`difflab.gather`.  Where ``index``
    repeats a position, every value sent there is added.

    Called with three arguments, ``scatter_add(values, index, shape)`` is the
    array-namespace form the derivative rules use: ``zeros(shape)`` with
    ``[index] += values`` (NumPy-style indices), the transpose of indexing.

    Parameters
    ----------
    input : Tensor, array, Dual or sympy expressions
        The values added to (a copy of them).
    dim : int
        The dimension the index runs along (negative counts from the end).
    index : Tensor of int64
        Where each element of ``src`` goes along ``dim``: as many dimensions as
        ``input``, no larger than it in the other dimensions nor than ``src`` in any.
    src : Tensor
        The values added, of ``input``'s dtype (only its leading block of ``index``'s
        shape is read).

    Returns
    -------
    Tensor
        ``input``'s shape and dtype.

    Raises
    ------
    TypeError
        If ``dim`` is not an int or ``index`` is not of an integer dtype.
    IndexError
        If ``dim`` is out of range.
    RuntimeError
        If ``index`` has the wrong number of dimensions, is too large, or holds an
        entry out of bounds, or ``src`` is of another dtype than ``input``.

    See Also
    --------
    difflab.scatter : overwriting instead of adding.
    difflab.gather : its transpose.
    difflab.index_add : adding whole slices at a vector of positions.

    Notes
    -----
    Linear in both: ``input``'s adjoint is the output's, unchanged; ``src``'s is the
    output's adjoint gathered at ``index``, :math:`\bar{\text{src}}[i][j] =
    \bar{\text{out}}[\text{index}[i][j]][j]` (dim = 0).

    Examples
    --------
    >>> import difflab as dl
    >>> src = dl.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> out = dl.scatter_add(dl.zeros(3), 0, dl.tensor([0, 2, 0]), src)
    >>> out                        # positions 0 gets 1 + 3
    tensor([4., 0., 2.], grad_fn=<...>)
    >>> (out * dl.tensor([1.0, 2.0, 3.0])).sum().backward()
    >>> src.grad
    tensor([1., 3., 1.])
    """
    if src is None:  # scatter_add(values, index, shape): the derivative rules' form
        values, array_index, shape = input, dim, index
        if isinstance(values, Tensor):
            return apply(structural.ScatterAdd, values, index=index_arrays(array_index),
                         shape=tuple(shape))
        return backend.array_module(values).scatter_add(values, array_index, shape)
    x = _differentiable(input)
    dim = dim_index(dim, x.ndim, "scatter_add")
    idx = _gather_index("scatter_add", x, dim, index, src).array
    src = _crop(_differentiable(src), idx.shape)
    if isinstance(src, Tensor) and isinstance(x, Tensor):
        check_same_dtype("scatter_add", x, src, "src")
    added = apply(structural.ScatterAdd, src, index=_along(idx, dim), shape=tuple(x.shape))
    return x + added


def index_select(input: Any, dim: int, index: Any) -> Tensor:  # noqa: A002
    r"""The slices of ``input`` at the positions ``index`` along ``dim``.

    ``index_select(x, 1, i)`` is ``x[:, i]`` for a vector ``i``: the result has
    ``input``'s shape with ``dim`` of length ``len(index)``; an index may repeat.

    Parameters
    ----------
    input : Tensor
        The values.
    dim : int
        The dimension to select along (negative counts from the end).
    index : Tensor of int64, shape (k,) or ()
        The positions, in [0, input.shape[dim]) (negative ones are not wrapped).

    Returns
    -------
    Tensor
        ``input``'s shape with ``dim`` of size k (a copy).

    Raises
    ------
    TypeError
        If ``dim`` is not an int or ``index`` is not of an integer dtype.
    IndexError
        If ``dim`` is out of range.
    RuntimeError
        If ``index`` has more than one dimension, or an entry is out of bounds.

    See Also
    --------
    difflab.gather : a position per element instead of per slice.
    difflab.index_add : its transpose, adding slices at positions.

    Notes
    -----
    The gradient is the transpose of the selection: the output's adjoint is added
    back into the selected slices, :math:`\bar x[\ldots, \text{index}[k], \ldots]
    \mathrel{+}= \bar y[\ldots, k, \ldots]`, so a repeated position gets the sum.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    >>> y = dl.index_select(x, 1, dl.tensor([2, 0, 2]))
    >>> y
    tensor([[3., 1., 3.],
            [6., 4., 6.]], grad_fn=<...>)
    >>> y.sum().backward()
    >>> x.grad                   # column 2 was picked twice
    tensor([[1., 0., 2.],
            [1., 0., 2.]])
    """
    x = tensor_or_interpreted(input)
    dim = dim_index(dim, x.ndim, "index_select")
    idx = _integer_index("index_select", index)
    if idx.ndim > 1:
        raise RuntimeError(
            f"index_select(): index must be a vector (1-D) or a scalar, got shape "
            f"{tuple(idx.shape)}"
        )
    if x.ndim == 0 and idx.size != 1:
        raise RuntimeError(
            f"index_select(): Index to scalar can have only 1 value, got {idx.size} value(s)")
    checked = _check_range("index_select", index if isinstance(index, Tensor) else idx,
                           x.shape[dim] if x.ndim else 1, dim).reshape(-1)
    if x.ndim == 0:
        return x.reshape(1)[checked].reshape(())
    return x[(slice(None),) * dim + (checked,)]


def masked_fill(input: Any, mask: Any, value: Any) -> Tensor:  # noqa: A002
    """A copy of ``input`` with ``value`` where the boolean ``mask`` is True.

    Parameters
    ----------
    input : Tensor
        The values.
    mask : Tensor of bool
        Broadcast to ``input``'s shape; True where ``value`` goes.
    value : number or 0-d Tensor
        The value written (a 0-d tensor that requires grad gets the gradient of every
        place it fills).

    Returns
    -------
    Tensor
        ``input``'s shape, in the common dtype of ``input`` and ``value``.

    Raises
    ------
    RuntimeError
        If ``mask`` is not boolean (compare to get one: ``x > 0``), or ``value`` is a
        tensor with dimensions (use :func:`difflab.where` for many values).

    See Also
    --------
    difflab.where : choose between two tensors elementwise.

    Notes
    -----
    It is ``where(mask, value, input)``: ``input``'s gradient is the adjoint with
    zeros where the mask is True; ``value``'s the sum of the adjoint there.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([1.0, -2.0, 3.0], requires_grad=True)
    >>> y = dl.masked_fill(x, x < 0, 0.0)
    >>> y
    tensor([1., 0., 3.], grad_fn=<...>)
    >>> y.sum().backward()
    >>> x.grad                   # nothing flows to the filled place
    tensor([1., 0., 1.])
    """
    return tensor_or_interpreted(input).masked_fill(mask, value)


#: Why sorting refuses sympy expressions (``tensor_arguments.refuse_symbols``).
_NO_ORDER = "symbols have no order (the sorted positions depend on the values)"


def argsort(input: Any, dim: int = -1, descending: bool = False,  # noqa: A002
            stable: bool = False) -> Tensor:
    """The indices that sort ``input`` along ``dim`` (ascending unless ``descending``).

    ``gather(input, dim, argsort(input, dim))`` is the sorted tensor.  The sort is
    stable: equal values keep their order.  NaN sorts as the largest value, as in
    PyTorch.

    Parameters
    ----------
    input : Tensor
        The values.
    dim : int, default -1
        The dimension to sort along.
    descending : bool, default False
        Largest first.
    stable : bool, default False
        Accepted for PyTorch's signature; the sort is always stable.

    Returns
    -------
    Tensor of int64
        ``input``'s shape: along ``dim``, the positions of the values in sorted order.

    Raises
    ------
    TypeError
        If ``dim`` is not an int.
    IndexError
        If ``dim`` is out of range.

    See Also
    --------
    difflab.sort : the sorted values with these indices.
    difflab.topk : the k largest only.

    Notes
    -----
    Indices are integers: no gradient flows through them (the values they pick, in
    :func:`difflab.sort`, carry it).

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([3.0, 1.0, float("nan"), 2.0])
    >>> dl.argsort(x), dl.argsort(x, descending=True)
    (tensor([1, 3, 0, 2]), tensor([2, 0, 3, 1]))
    >>> dl.argsort(dl.tensor([[2.0, 1.0], [0.0, 5.0]]), dim=0)
    tensor([[1, 0],
            [0, 1]])
    """
    x = tensor_or_interpreted(input)
    refuse_symbols("argsort", _NO_ORDER, x)
    dim = dim_index(dim, x.ndim, "argsort")
    return apply(registry.PRIMITIVES["argsort"], x, axis=dim, descending=descending)


def sort(input: Any, dim: int = -1, descending: bool = False,  # noqa: A002
         stable: bool = False) -> tuple:
    r"""The values of ``input`` sorted along ``dim``, with the indices they came from.

    Parameters
    ----------
    input : Tensor
        The values.
    dim : int, default -1
        The dimension to sort along.
    descending : bool, default False
        Largest first.
    stable : bool, default False
        Accepted for PyTorch's signature; the sort is always stable (equal values keep
        their order).

    Returns
    -------
    (Tensor, Tensor)
        ``(values, indices)``, readable as ``.values`` and ``.indices``: both
        ``input``'s shape; the indices int64, with ``values = gather(input, dim,
        indices)``.  NaN sorts as the largest value.

    Raises
    ------
    TypeError
        If ``dim`` is not an int.
    IndexError
        If ``dim`` is out of range.

    See Also
    --------
    difflab.argsort : the indices only.
    difflab.topk : the k largest (or smallest).
    difflab.msort : sorted along the first dimension.

    Notes
    -----
    ``values = gather(input, dim, indices)``, so the gradient is gather's: the
    adjoint of each sorted value goes back to the place it came from (a
    permutation), :math:`\bar x[\text{indices}[k]] = \bar y[k]`.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([3.0, 1.0, 2.0], requires_grad=True)
    >>> values, indices = dl.sort(x)
    >>> values, indices
    (tensor([1., 2., 3.], grad_fn=<...>), tensor([1, 2, 0]))
    >>> (values * dl.tensor([1.0, 10.0, 100.0])).sum().backward()
    >>> x.grad                   # each weight back where its value was
    tensor([100.,   1.,  10.])
    >>> dl.sort(dl.tensor([2.0, 1.0, 2.0]), descending=True).indices
    tensor([0, 2, 1])
    """
    x = tensor_or_interpreted(input)  # (a Dual: its values picked, tangents along)
    refuse_symbols("sort", _NO_ORDER, x)
    indices = argsort(x, dim, descending, stable)
    return MinMax((gather(x, dim, indices), indices))


def topk(input: Any, k: int, dim: int = -1, largest: bool = True,  # noqa: A002
         sorted: bool = True) -> tuple:  # noqa: A002
    r"""The ``k`` largest (or smallest) values of ``input`` along ``dim``, with their indices.

    Parameters
    ----------
    input : Tensor
        The values.
    k : int
        How many, in [0, input.shape[dim]].
    dim : int, default -1
        The dimension to choose along.
    largest : bool, default True
        The largest values (False: the smallest).
    sorted : bool, default True
        Accepted for PyTorch's signature; the values always come out sorted (largest
        first, or smallest first when ``largest=False``).

    Returns
    -------
    (Tensor, Tensor)
        ``(values, indices)``, readable as ``.values`` and ``.indices``: ``input``'s shape
        with ``dim`` of size k; the indices int64.

    Raises
    ------
    TypeError
        If ``dim`` is not an int.
    IndexError
        If ``dim`` is out of range.
    TypeError
        If ``k`` is not an int.
    RuntimeError
        If ``k`` is not in [0, input.shape[dim]].

    See Also
    --------
    difflab.sort : all of them, sorted.
    difflab.kthvalue : the k-th smallest only.

    Notes
    -----
    The values are gathered at the indices, so the gradient goes to the chosen
    entries only, :math:`\bar x[\text{indices}[k]] = \bar y[k]`, 0 elsewhere.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([1.0, 5.0, 3.0, 4.0], requires_grad=True)
    >>> result = dl.topk(x, 2)
    >>> result.values, result.indices
    (tensor([5., 4.], grad_fn=<...>), tensor([1, 3]))
    >>> result.values.sum().backward()
    >>> x.grad
    tensor([0., 1., 0., 1.])
    >>> dl.topk(x, 2, largest=False).indices
    tensor([0, 2])
    """
    x = tensor_or_interpreted(input)
    refuse_symbols("topk", _NO_ORDER, x)
    dim = dim_index(dim, x.ndim, "topk")
    size = x.shape[dim] if x.ndim else 1
    k = integer(k, "topk()", "k")  # (PyTorch's TypeError for k=2.0)
    if not 0 <= k <= size:
        raise RuntimeError(
            f"topk(): selected index k={k!r} is out of range: k must be an int in [0, {size}] "
            f"(the size of dimension {dim})"
        )
    order = argsort(x, dim, descending=largest)
    if x.ndim:
        order = order[(slice(None),) * dim + (slice(0, k),)]
    return MinMax((gather(x, dim, order), order))


def roll(input: Any, shifts: Any, dims: Any = None) -> Tensor:  # noqa: A002
    r"""``input`` shifted circularly by ``shifts`` along ``dims``.

    What falls off one end comes back at the other: along one dimension of size n,
    :math:`\text{out}[(i + s) \bmod n] = x[i]`.
    Without ``dims`` the tensor is rolled as if flattened, then given its shape back.

    Parameters
    ----------
    input : Tensor
        The values.
    shifts : int or tuple of int
        How far to shift (negative: towards the start); one per dimension in ``dims``.
    dims : int or tuple of int, optional
        The dimensions to roll along; default: the flattened tensor (``shifts`` then one
        number).

    Returns
    -------
    Tensor
        ``input``'s shape.

    Raises
    ------
    RuntimeError
        If ``shifts`` and ``dims`` differ in length, or ``dims`` is None and ``shifts``
        has several numbers.
    TypeError
        If a dimension or a shift is not an int.
    IndexError
        If a dimension is out of range.

    See Also
    --------
    difflab.flip : reverse along dimensions.

    Notes
    -----
    A permutation of the elements, so the gradient is the adjoint rolled back by
    ``-shifts``.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    >>> dl.roll(x, 1, 1)
    tensor([[3., 1., 2.],
            [6., 4., 5.]], grad_fn=<...>)
    >>> dl.roll(x, 1)                         # flattened: 6 comes first
    tensor([[6., 1., 2.],
            [3., 4., 5.]], grad_fn=<...>)
    >>> (dl.roll(x, 1, 1) * dl.tensor([1.0, 2.0, 3.0])).sum().backward()
    >>> x.grad                                # the weights rolled back
    tensor([[2., 3., 1.],
            [2., 3., 1.]])
    """
    x = tensor_or_interpreted(input)
    shifts = shape_args((shifts,), "roll", "shifts")  # (ints: 1.5 was truncated to 1)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError("roll(): with dims=None, shifts must be one number")
        return roll(x.flatten(), shifts[0], 0).reshape(x.shape)
    dims = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(
            f"roll(): shifts and dims must have the same length, got {len(shifts)} shifts and "
            f"{len(dims)} dims"
        )
    out = x
    for s, d in zip(shifts, dims):
        d = dim_index(d, x.ndim, "roll")
        n = x.shape[d] if x.ndim else 1
        if n:  # (the positions on x's device: a Dual or SymbolArray has no .array)
            positions = backend.to_device(np.arange(n), x.device)
            out = index_select(out, d, (positions - s) % n)
    return out


def einsum(equation: str, *operands: Any) -> Any:
    """Sum of products over named axes: ``einsum("ij,jk->ik", a, b)`` is ``a @ b``.

    The operands may also come as one list (``einsum("ii", [a])``).  ``...``
    stands for the broadcast axes; without ``->`` the output has the letters
    used once, in alphabetical order.  A malformed equation raises a
    ``ValueError`` that says what is wrong.  Gradients: the ``einsum``
    primitive (linear in each operand, so each adjoint is another einsum).

    Parameters
    ----------
    equation : str
        Letters naming the axes of each operand, ``->`` and the output's (``"ij,jk->ik"``).
    *operands : Tensor
        One per comma-separated term (or one list of them).

    Returns
    -------
    Tensor
        The sum of products over the letters missing from the output.

    Raises
    ------
    ValueError
        For a malformed equation or operands that do not fit it.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> dl.einsum("ij,jk->ik", x, x)
    tensor([[ 7., 10.],
            [15., 22.]])
    >>> dl.einsum("ii", x)       # the trace
    tensor(5.)
    """

    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    operands = tuple(np.asarray(x, dtype=float) if isinstance(x, (list, tuple)) else x
                     for x in operands)
    # (parsed here first, so that a malformed equation is reported as it is)
    parsed = products.EinsumEquation(equation, [tuple(np.shape(x)) if not isinstance(x, Tensor)
                                                else tuple(x.shape) for x in operands])
    if not any(isinstance(x, Tensor) for x in operands):  # arrays: computed, not recorded
        return backend.array_module(operands[0]).einsum(
            parsed.text(parsed.inputs, parsed.output), *operands)
    if interpreted(*operands):  # (dual numbers, expressions: their type's handler computes)
        return apply(products.Einsum, *operands, equation=equation)
    # one dtype for all, by the promotion rule (float32 with float64 is float64)
    return apply(products.Einsum, *promote_all(operands), equation=equation)


def bmm(input: Any, mat2: Any) -> Tensor:  # noqa: A002
    r"""A batch of matrix products: (b, n, m) @ (b, m, p) -> (b, n, p), with no broadcasting.

    Parameters
    ----------
    input : Tensor, shape (b, n, m)
        The left matrices.
    mat2 : Tensor, shape (b, m, p)
        The right matrices (the same batch size b).

    Returns
    -------
    Tensor, shape (b, n, p)
        ``out[k] = input[k] @ mat2[k]``.

    Raises
    ------
    RuntimeError
        If either is not 3-D, or the batch sizes or the inner sizes differ.

    See Also
    --------
    difflab.matmul : with broadcasting of the batch dimensions.
    difflab.baddbmm : plus a scaled tensor.
    difflab.mm : one product.

    Notes
    -----
    .. math:: C_{kij} = \sum_l A_{kil} B_{klj}, \qquad \bar A_k = \bar C_k B_k^\top, \quad
              \bar B_k = A_k^\top \bar C_k

    Examples
    --------
    >>> import difflab as dl
    >>> a = dl.ones(2, 1, 3, requires_grad=True)
    >>> b = dl.arange(12.0).reshape(2, 3, 2)
    >>> c = dl.bmm(a, b)
    >>> c
    tensor([[[ 6.,  9.]],
    <BLANKLINE>
            [[24., 27.]]], grad_fn=<...>)
    >>> c.sum().backward()
    >>> a.grad                   # C̄ Bᵀ: the row sums of each b
    tensor([[[ 1.,  5.,  9.]],
    <BLANKLINE>
            [[13., 17., 21.]]])
    """
    a, b = tensor_or_interpreted(input), tensor_or_interpreted(mat2)
    if a.ndim != 3 or b.ndim != 3:
        raise RuntimeError(
            f"bmm(): batch1 and batch2 must be 3-D tensors, got shapes {tuple(a.shape)} and "
            f"{tuple(b.shape)} (use matmul to broadcast)"
        )
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise RuntimeError(
            f"bmm(): shapes {tuple(a.shape)} and {tuple(b.shape)} cannot be multiplied: "
            f"expected (b, n, m) and (b, m, p) with the same b and m"
        )
    return a @ b


def baddbmm(input: Any, batch1: Any, batch2: Any, *, beta: Any = 1,  # noqa: A002
            alpha: Any = 1) -> Tensor:
    r"""β · input + α · bmm(batch1, batch2): a batch of matrix products plus a tensor.

    Parameters
    ----------
    input : Tensor, broadcastable to (b, n, p)
        Added, scaled by ``beta`` (ignored, even if it holds nan, when ``beta`` is 0).
    batch1 : Tensor, shape (b, n, m)
        The left matrices.
    batch2 : Tensor, shape (b, m, p)
        The right matrices.
    beta : number, default 1, keyword-only
        The factor of ``input``.
    alpha : number, default 1, keyword-only
        The factor of the products.

    Returns
    -------
    Tensor, shape (b, n, p)
        :math:`\beta\, \text{input} + \alpha\, \text{batch1} @ \text{batch2}`.

    Raises
    ------
    RuntimeError
        If ``batch1`` or ``batch2`` is not 3-D, or their sizes do not fit.
    ValueError
        If ``input`` does not broadcast to the product's shape.

    See Also
    --------
    difflab.bmm : the products alone.
    difflab.addmm : the same for single matrices.

    Notes
    -----
    Built from recorded steps: :math:`\bar{\text{input}} = \beta\, \bar y` (summed
    over broadcast dimensions), :math:`\overline{\text{batch1}}_k = \alpha\, \bar y_k\,
    \text{batch2}_k^\top`, :math:`\overline{\text{batch2}}_k = \alpha\,
    \text{batch1}_k^\top \bar y_k`.

    Examples
    --------
    >>> import difflab as dl
    >>> bias = dl.tensor([1.0, 2.0], requires_grad=True)
    >>> out = dl.baddbmm(bias, dl.ones(3, 2, 4), dl.ones(3, 4, 2), beta=0.5, alpha=2)
    >>> out.shape, out[0]
    (difflab.Size([3, 2, 2]), tensor([[8.5, 9. ],
            [8.5, 9. ]], grad_fn=<...>))
    >>> out.sum().backward()
    >>> bias.grad                # β times the 3 · 2 places each entry was added to
    tensor([3., 3.])
    """
    product = bmm(batch1, batch2)
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return product
    return product + (input if beta == 1 else tensor_or_interpreted(input) * beta)


def outer(input: Any, vec2: Any) -> Tensor:  # noqa: A002
    r"""The outer product of two vectors: out[i, j] = input[i] · vec2[j].

    ``ger`` is the same function (BLAS's and PyTorch's older name).

    Parameters
    ----------
    input : Tensor, shape (n,)
        The first vector.
    vec2 : Tensor, shape (m,)
        The second vector.

    Returns
    -------
    Tensor, shape (n, m)
        The outer product, in the common dtype.

    Raises
    ------
    RuntimeError
        If either is not 1-D.

    See Also
    --------
    difflab.dot : the inner product.
    difflab.einsum : ``einsum("i,j->ij", a, b)``.

    Notes
    -----
    .. math:: Y_{ij} = a_i b_j, \qquad \bar a_i = \sum_j \bar Y_{ij} b_j, \quad
              \bar b_j = \sum_i \bar Y_{ij} a_i

    Examples
    --------
    >>> import difflab as dl
    >>> a = dl.tensor([1.0, 2.0], requires_grad=True)
    >>> y = dl.outer(a, dl.tensor([3.0, 4.0, 5.0]))
    >>> y
    tensor([[ 3.,  4.,  5.],
            [ 6.,  8., 10.]], grad_fn=<...>)
    >>> y.sum().backward()
    >>> a.grad                   # the sum of the other vector
    tensor([12., 12.])
    >>> dl.ger is dl.outer
    True
    """
    a, b = tensor_or_interpreted(input), tensor_of(vec2)
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(
            f"outer(): expected two 1-D tensors, got shapes {tuple(a.shape)} and "
            f"{tuple(b.shape)}"
        )
    return a.reshape(-1, 1) * b.reshape(1, -1)


ger = outer
