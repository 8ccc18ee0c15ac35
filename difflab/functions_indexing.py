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
from difflab.tensor_arguments import MinMax, index_arrays, promote_all, tensor_of


def _check_dim(name: str, dim: Any, ndim: int) -> int:
    """``dim`` as a non-negative axis of an ``ndim``-axis tensor (a 0-d one has axis 0)."""
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise TypeError(f"{name}: dim must be an int, got {type(dim).__name__}")
    n = builtins.max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"{name}: Dimension out of range (expected to be in range of [{-n}, {n - 1}], but "
            f"got {dim})"
        )
    return int(dim) % n


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


def _check_range(name: str, index: Any, size: int, dim: int) -> None:
    """Every entry of ``index`` in [0, size): PyTorch does not wrap negative indices here."""
    if index.size == 0:
        return
    low, high = int(index.min()), int(index.max())
    if low < 0 or high >= size:
        raise RuntimeError(
            f"{name}(): index {high if high >= size else low} is out of bounds for dimension "
            f"{dim} with size {size} (valid: 0 .. {size - 1})"
        )


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


def _gather_index(name: str, x: Tensor, dim: int, index: Any, src: Any = None) -> Any:
    """Check an index for gather/scatter along ``dim`` of ``x`` and return its array.

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
    _check_range(name, array, x.shape[dim] if x.ndim else 1, dim)
    return array


def _flat(index: Any, array: Any) -> Any:
    """The index as a vector: a tensor's reshape is recorded (a traced index stays one)."""
    return index.reshape(-1) if isinstance(index, Tensor) else array.reshape(-1)


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
    x = tensor_of(input)
    dim = _check_dim("gather", dim, x.ndim)
    idx = _gather_index("gather", x, dim, index)
    if x.ndim == 0:  # a 0-d input behaves as one element
        return x.reshape(1)[_flat(index, idx)].reshape(idx.shape)
    return x[_along(idx, dim)]


def scatter(input: Any, dim: int, index: Any, src: Any = None, *, value: Any = None,  # noqa: A002
            reduce: str | None = None) -> Tensor:
    """A copy of ``input`` with out[index[i][j]][j] = src[i][j] (dim = 0; likewise others).

    ``src`` may be a tensor (only its leading block of the index's shape is
    read) or a number (PyTorch's ``value``).  Where the index repeats a
    position, which write wins is unspecified (as in PyTorch), and so is the
    gradient of ``src`` there.  ``reduce='add'`` is :func:`scatter_add`.
    Gradients: the input's adjoint with zeros where it was overwritten; src's
    adjoint gathered from the output's.
    """
    x = tensor_of(input)
    if src is None:
        src = value
    if src is None:
        raise TypeError("scatter() needs src (a tensor) or value (a number)")
    if reduce is not None:
        if reduce != "add":
            raise ValueError(f"scatter(): reduce must be None or 'add', got {reduce!r}")
        src = src if isinstance(src, Tensor) else full_like_index(x, index, src)
        return scatter_add(x, dim, index, src)
    dim = _check_dim("scatter", dim, x.ndim)
    idx = _gather_index("scatter", x, dim, index, src)
    if isinstance(src, Tensor):
        src = _crop(src, idx.shape)
        if src.dtype != x.dtype:
            src = src.to(x.dtype)
    return apply(structural.IndexPut, x, src, index=_along(idx, dim))


def full_like_index(x: Tensor, index: Any, value: Any) -> Tensor:
    """A tensor shaped like ``index`` filled with ``value``, in ``x``'s dtype and device."""
    xp = backend.array_module(x.array)
    return Tensor._wrap(xp.full(_integer_index("scatter", index).shape, value, dtype=x.dtype))


def scatter_add(input: Any, dim: Any, index: Any, src: Any = None) -> Any:  # noqa: A002
    """``scatter_add(input, dim, index, src)``: a copy of ``input`` with
    out[index[i][j]][j] += src[i][j] (dim = 0), adding up where the index repeats.

    Gradients: the input's adjoint passes through; src's adjoint is gathered.

    Called with three arguments, ``scatter_add(values, index, shape)`` is the
    array-namespace form the derivative rules use: zeros(shape) with
    ``[index] += values``, the transpose of indexing.
    """
    if src is None:  # scatter_add(values, index, shape): the derivative rules' form
        values, array_index, shape = input, dim, index
        if isinstance(values, Tensor):
            return apply(structural.ScatterAdd, values, index=index_arrays(array_index),
                         shape=tuple(shape))
        return backend.array_module(values).scatter_add(values, array_index, shape)
    x = _differentiable(input)
    dim = _check_dim("scatter_add", dim, x.ndim)
    idx = _gather_index("scatter_add", x, dim, index, src)
    src = _crop(_differentiable(src), idx.shape)
    if isinstance(src, Tensor) and isinstance(x, Tensor) and src.dtype != x.dtype:
        src = src.to(x.dtype)
    added = apply(structural.ScatterAdd, src, index=_along(idx, dim), shape=tuple(x.shape))
    return x + added


def index_select(input: Any, dim: int, index: Any) -> Tensor:  # noqa: A002
    """The entries of ``input`` at ``index`` (a 1-D integer tensor) along ``dim``.

    Gradient: scattered back, added where ``index`` repeats.
    """
    x = tensor_of(input)
    dim = _check_dim("index_select", dim, x.ndim)
    idx = _integer_index("index_select", index)
    if idx.ndim > 1:
        raise RuntimeError(
            f"index_select(): index must be a vector (1-D) or a scalar, got shape "
            f"{tuple(idx.shape)}"
        )
    _check_range("index_select", idx, x.shape[dim] if x.ndim else 1, dim)
    if x.ndim == 0 and idx.size != 1:
        raise RuntimeError(
            f"index_select(): Index to scalar can have only 1 value, got {idx.size} value(s)")
    if x.ndim == 0:
        return x.reshape(1)[_flat(index, idx)].reshape(())
    return x[(slice(None),) * dim + (_flat(index, idx),)]


def masked_fill(input: Any, mask: Any, value: Any) -> Tensor:  # noqa: A002
    """``input`` with ``value`` where the boolean ``mask`` (broadcast to it) is True."""
    return tensor_of(input).masked_fill(mask, value)


def argsort(input: Any, dim: int = -1, descending: bool = False,  # noqa: A002
            stable: bool = False) -> Tensor:
    """The indices that sort ``input`` along ``dim`` (ties keep their order: a stable sort).

    NaN sorts as the largest value, as in PyTorch.  No gradient (indices).
    """
    x = tensor_of(input)
    dim = _check_dim("argsort", dim, x.ndim)
    return apply(registry.PRIMITIVES["argsort"], x, axis=dim, descending=descending)


def sort(input: Any, dim: int = -1, descending: bool = False,  # noqa: A002
         stable: bool = False) -> tuple:
    """(values, indices) of ``input`` sorted along ``dim``.

    values = gather(input, dim, indices), so the gradient goes back to where
    each value came from.
    """
    x = tensor_of(input)
    indices = argsort(x, dim, descending, stable)
    return MinMax((gather(x, dim, indices), indices))


def topk(input: Any, k: int, dim: int = -1, largest: bool = True,  # noqa: A002
         sorted: bool = True) -> tuple:  # noqa: A002
    """(values, indices) of the ``k`` largest (or smallest) entries along ``dim``.

    The values come out in sorted order (``sorted=False`` is accepted and
    gives them sorted too).  Gradient: to the chosen entries only.
    """
    x = tensor_of(input)
    dim = _check_dim("topk", dim, x.ndim)
    size = x.shape[dim] if x.ndim else 1
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k <= size:
        raise RuntimeError(
            f"topk(): selected index k={k!r} is out of range: k must be an int in [0, {size}] "
            f"(the size of dimension {dim})"
        )
    order = argsort(x, dim, descending=largest)
    if x.ndim:
        order = order[(slice(None),) * dim + (slice(0, k),)]
    return MinMax((gather(x, dim, order), order))


def roll(input: Any, shifts: Any, dims: Any = None) -> Tensor:  # noqa: A002
    """``input`` shifted circularly by ``shifts`` along ``dims`` (flattened if ``dims`` is None).

    out[(i + s) mod n] = x[i]: a permutation, so the gradient is rolled back.
    """
    x = tensor_of(input)
    if dims is None:
        if not isinstance(shifts, (int, np.integer)) and len(shifts) != 1:
            raise RuntimeError("roll(): with dims=None, shifts must be one number")
        s = shifts if isinstance(shifts, (int, np.integer)) else shifts[0]
        return roll(x.flatten(), s, 0).reshape(x.shape)
    shifts = (shifts,) if isinstance(shifts, (int, np.integer)) else tuple(shifts)
    dims = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(
            f"roll(): shifts and dims must have the same length, got {len(shifts)} shifts and "
            f"{len(dims)} dims"
        )
    out = x
    for s, d in zip(shifts, dims):
        d = _check_dim("roll", d, x.ndim)
        n = x.shape[d] if x.ndim else 1
        if n:
            xp = backend.array_module(x.array)
            out = index_select(out, d, (xp.arange(n) - int(s)) % n)
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
    # one dtype for all, by the promotion rule (float32 with float64 is float64)
    return apply(products.Einsum, *promote_all(operands), equation=equation)


def bmm(input: Any, mat2: Any) -> Tensor:  # noqa: A002
    """Batched matrix product: (b, n, m) @ (b, m, p) -> (b, n, p), with no broadcasting."""
    a, b = tensor_of(input), tensor_of(mat2)
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
    """β · input + α · bmm(batch1, batch2) (``input`` broadcast; ignored when β = 0)."""
    product = bmm(batch1, batch2)
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return product
    return product + (input if beta == 1 else tensor_of(input) * beta)


def outer(input: Any, vec2: Any) -> Tensor:  # noqa: A002
    """Outer product of two vectors: out[i, j] = input[i] · vec2[j]."""
    a, b = tensor_of(input), tensor_of(vec2)
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(
            f"outer(): expected two 1-D tensors, got shapes {tuple(a.shape)} and "
            f"{tuple(b.shape)}"
        )
    return a.reshape(-1, 1) * b.reshape(1, -1)


ger = outer
