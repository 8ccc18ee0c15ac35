"""Joining, splitting, moving and picking out pieces of tensors: PyTorch's names, composed.

Every function here is a *composite*: a few lines of the primitives difflab already
has (``cat``, ``reshape``, ``permute``, indexing, ``expand``, ``matmul``), so each one
is differentiable in every method, traced and replayed by the jit, and needs no
derivative rule of its own.  They are grouped as PyTorch's documentation groups them:

* joining: :func:`concat`, :func:`hstack`, :func:`vstack`, :func:`dstack`,
  :func:`column_stack`, :func:`atleast_1d` (2d, 3d), :func:`block_diag`;
* splitting: :func:`tensor_split`, :func:`hsplit`, :func:`vsplit`, :func:`dsplit`;
* moving axes: :func:`movedim`, :func:`swapdims`, :func:`rot90`, :func:`fliplr`,
  :func:`flipud`, :func:`tile`, :func:`ravel`, :func:`broadcast_tensors`,
  :func:`broadcast_shapes` (``broadcast_to`` is the ``expand`` primitive's face).

Picking pieces, diagonals and products are in :mod:`difflab.functions_picking`.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from difflab import functions as F  # noqa: N812  (the primitives' public faces)
from difflab.creation import zeros
from difflab.dtypes import float64, result_type
from difflab.tensor import Tensor
from difflab.tensor_arguments import (
    Size,
    dim_index,
    shape_args,
    tensor_or_interpreted,
    tensor_sequence,
)

__all__ = [
    "atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_shapes",
    "broadcast_tensors", "column_stack", "concat", "dsplit", "dstack", "fliplr",
    "flipud", "hsplit", "hstack", "movedim", "moveaxis", "ravel", "rot90", "row_stack",
    "swapdims", "tensor_split", "tile", "unflatten", "vsplit", "vstack",
]


# ------------------------------------------------------------------------------ joining


def concat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join tensors along an existing dimension: another name of :func:`difflab.cat`.

    Parameters
    ----------
    tensors : sequence of Tensor
        Tensors of equal shape except along ``dim``.
    dim : int
        The dimension to join along.

    Returns
    -------
    Tensor
        The joined tensor.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.concat([dl.tensor([1, 2]), dl.tensor([3])]).tolist()
    [1, 2, 3]
    """
    return F.cat(tensors, dim)


def atleast_1d(*tensors: Any) -> Any:
    """Each input with at least one dimension: a scalar becomes shape ``(1,)``.

    Parameters
    ----------
    *tensors : Tensor
        One tensor, several, or one list of them.

    Returns
    -------
    Tensor or tuple of Tensor
        One tensor for one input, else a tuple (as PyTorch).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.atleast_1d(dl.tensor(3.0)).shape
    difflab.Size([1])
    """
    return _at_least(tensors, lambda x: x.reshape(1) if x.ndim == 0 else x)


def atleast_2d(*tensors: Any) -> Any:
    """Each input with at least two dimensions: ``(n,)`` becomes ``(1, n)``.

    Parameters
    ----------
    *tensors : Tensor
        One tensor, several, or one list of them.

    Returns
    -------
    Tensor or tuple of Tensor
        One tensor for one input, else a tuple.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.atleast_2d(dl.tensor([1, 2, 3])).shape
    difflab.Size([1, 3])
    """
    return _at_least(tensors, lambda x: x.reshape((1,) * (2 - x.ndim) + x.shape)
                     if x.ndim < 2 else x)


def atleast_3d(*tensors: Any) -> Any:
    """Each input with at least three dimensions (NumPy's placement of the new axes).

    A scalar becomes ``(1, 1, 1)``, ``(n,)`` becomes ``(1, n, 1)`` and ``(m, n)``
    becomes ``(m, n, 1)``.

    Parameters
    ----------
    *tensors : Tensor
        One tensor, several, or one list of them.

    Returns
    -------
    Tensor or tuple of Tensor
        One tensor for one input, else a tuple.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.atleast_3d(dl.ones(2, 3)).shape
    difflab.Size([2, 3, 1])
    """
    def three(x: Tensor) -> Tensor:
        shapes = {0: (1, 1, 1), 1: (1, *x.shape, 1), 2: (*x.shape, 1)}
        return x.reshape(shapes[x.ndim]) if x.ndim < 3 else x
    return _at_least(tensors, three)


def _at_least(tensors: tuple, reshape: Any) -> Any:
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    out = tuple(reshape(tensor_or_interpreted(x)) for x in tensors)
    return out[0] if len(out) == 1 else out


def hstack(tensors: Sequence[Tensor]) -> Tensor:
    """Join side by side: along dimension 1, or along 0 when the inputs are vectors.

    Parameters
    ----------
    tensors : sequence of Tensor
        The pieces; scalars count as vectors of one element.

    Returns
    -------
    Tensor
        The joined tensor.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.hstack([dl.tensor([[1], [2]]), dl.tensor([[3], [4]])]).tolist()
    [[1, 3], [2, 4]]
    """
    pieces = atleast_1d(tensor_sequence(tensors, "hstack"))
    pieces = pieces if isinstance(pieces, tuple) else (pieces,)
    return F.cat(pieces, 0 if pieces and pieces[0].ndim == 1 else 1)


def vstack(tensors: Sequence[Tensor]) -> Tensor:
    """Join one above the other (vectors become rows), along dimension 0.

    Parameters
    ----------
    tensors : sequence of Tensor
        The pieces; a vector of length ``n`` counts as a ``(1, n)`` row.

    Returns
    -------
    Tensor
        The joined tensor, at least 2-D.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.vstack([dl.tensor([1, 2]), dl.tensor([3, 4])]).tolist()
    [[1, 2], [3, 4]]
    """
    pieces = atleast_2d(tensor_sequence(tensors, "vstack"))
    return F.cat(pieces if isinstance(pieces, tuple) else (pieces,), 0)


row_stack = vstack


def dstack(tensors: Sequence[Tensor]) -> Tensor:
    """Join along the third dimension (depth), after :func:`atleast_3d`.

    Parameters
    ----------
    tensors : sequence of Tensor
        The pieces.

    Returns
    -------
    Tensor
        The joined tensor, at least 3-D.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.dstack([dl.tensor([1, 2]), dl.tensor([3, 4])]).shape
    difflab.Size([1, 2, 2])
    """
    pieces = atleast_3d(tensor_sequence(tensors, "dstack"))
    return F.cat(pieces if isinstance(pieces, tuple) else (pieces,), 2)


def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    """Join as columns: vectors (and scalars) become ``(n, 1)`` columns first.

    Parameters
    ----------
    tensors : sequence of Tensor
        Vectors, scalars or 2-D tensors with the same number of rows.

    Returns
    -------
    Tensor
        A 2-D (or higher) tensor.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.column_stack([dl.tensor([1, 2]), dl.tensor([3, 4])]).tolist()
    [[1, 3], [2, 4]]
    """
    pieces = [tensor_or_interpreted(x) for x in tensor_sequence(tensors, "column_stack")]
    return F.cat([x.reshape(-1, 1) if x.ndim <= 1 else x for x in pieces], 1)


def block_diag(*tensors: Tensor) -> Tensor:
    """A block-diagonal matrix: each input a block on the diagonal, zeros elsewhere.

    Parameters
    ----------
    *tensors : Tensor
        Blocks of at most two dimensions (a scalar is ``1 x 1``, a vector one row).

    Returns
    -------
    Tensor
        A matrix of shape ``(sum of rows, sum of columns)``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.block_diag(dl.tensor([[1, 2]]), dl.tensor(3)).tolist()
    [[1, 2, 0], [0, 0, 3]]
    """
    blocks = []
    for x in map(tensor_or_interpreted, tensors):
        if x.ndim > 2:
            raise ValueError(f"block_diag: a block has at most 2 dimensions, got {x.ndim}")
        blocks.append(x.reshape((1,) * (2 - x.ndim) + x.shape) if x.ndim < 2 else x)
    if not blocks:
        return zeros(1, 0)
    numbers = [b for b in blocks if b.dtype.kind != "O"]  # (symbols: real numbers)
    dtype = result_type(*numbers) if numbers else float64
    width = builtins.sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        rows.append(F.cat([zeros(b.shape[0], left, dtype=dtype, device=b.device), b.to(dtype),
                           zeros(b.shape[0], width - left - b.shape[1], dtype=dtype,
                                 device=b.device)], 1))
        left += b.shape[1]
    return F.cat(rows, 0)


# ----------------------------------------------------------------------------- splitting


def tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0) -> tuple:  # noqa: A002
    """Cut into ``n`` nearly equal pieces, or at the given indices.

    With an integer ``n``, the first ``size % n`` pieces have one element more
    than the rest (NumPy's ``array_split``); with a list of indices the cuts are
    made before each index (``[2, 5]`` gives ``x[:2]``, ``x[2:5]``, ``x[5:]``).

    Parameters
    ----------
    input : Tensor
        The tensor to cut.
    indices_or_sections : int or sequence of int
        The number of pieces, or the indices to cut at.
    dim : int
        The dimension to cut along.

    Returns
    -------
    tuple of Tensor
        Views of ``input``, gradients flowing back to it.

    Raises
    ------
    ValueError
        If the number of sections is not positive.
    IndexError
        If ``dim`` is out of range, or ``input`` is 0-d (it has no dimension to cut).

    Examples
    --------
    >>> import difflab as dl
    >>> [p.tolist() for p in dl.tensor_split(dl.arange(5), 2)]
    [[0, 1, 2], [3, 4]]
    """
    x = tensor_or_interpreted(input)
    dim = dim_index(dim, x.ndim, "tensor_split", zero_d_has_dim=False)
    length = x.shape[dim]
    if isinstance(indices_or_sections, (int, np.integer)):
        n = int(indices_or_sections)
        if n <= 0:
            raise ValueError(f"tensor_split: the number of sections must be positive, got {n}")
        sizes = [length // n + (1 if k < length % n else 0) for k in range(n)]
        cuts = list(np.cumsum([0, *sizes]))
    else:
        cuts = [0, *[builtins.min(builtins.max(int(i), 0), length)
                     for i in indices_or_sections], length]
    lead = (slice(None),) * dim
    return tuple(x[(*lead, slice(a, builtins.max(a, b)))] for a, b in zip(cuts, cuts[1:]))


def _split_exactly(x: Tensor, sections: Any, dim: int, name: str) -> tuple:
    if isinstance(sections, (int, np.integer)) and int(sections) > 0 and \
            x.shape[dim] % int(sections):  # (0 or fewer: tensor_split says so)
        raise RuntimeError(f"{name}: dimension {dim} of size {x.shape[dim]} cannot be split "
                           f"into {sections} equal pieces; use dl.tensor_split for unequal ones")
    return tensor_split(x, sections, dim)


def hsplit(input: Tensor, indices_or_sections: Any) -> tuple:  # noqa: A002
    """Split side by side: along dimension 1 (dimension 0 for a vector), equal pieces.

    Parameters
    ----------
    input : Tensor
        At least 1-D.
    indices_or_sections : int or sequence of int
        A number of equal pieces (it must divide the size) or indices to cut at.

    Returns
    -------
    tuple of Tensor
        The pieces.

    Examples
    --------
    >>> import difflab as dl
    >>> [p.shape for p in dl.hsplit(dl.ones(2, 4), 2)]
    [difflab.Size([2, 2]), difflab.Size([2, 2])]
    """
    x = tensor_or_interpreted(input)
    if x.ndim < 1:
        raise RuntimeError("hsplit needs a tensor with at least 1 dimension, got a scalar")
    return _split_exactly(x, indices_or_sections, 1 if x.ndim > 1 else 0, "hsplit")


def vsplit(input: Tensor, indices_or_sections: Any) -> tuple:  # noqa: A002
    """Split one above the other: along dimension 0 of a tensor with at least 2 dimensions.

    Parameters
    ----------
    input : Tensor
        At least 2-D.
    indices_or_sections : int or sequence of int
        A number of equal pieces or indices to cut at.

    Returns
    -------
    tuple of Tensor
        The pieces.

    Examples
    --------
    >>> import difflab as dl
    >>> [p.tolist() for p in dl.vsplit(dl.tensor([[1], [2]]), 2)]
    [[[1]], [[2]]]
    """
    x = tensor_or_interpreted(input)
    if x.ndim < 2:
        raise RuntimeError(f"vsplit needs at least 2 dimensions, got {x.ndim}")
    return _split_exactly(x, indices_or_sections, 0, "vsplit")


def dsplit(input: Tensor, indices_or_sections: Any) -> tuple:  # noqa: A002
    """Split along the third dimension (depth) of a tensor with at least 3 dimensions.

    Parameters
    ----------
    input : Tensor
        At least 3-D.
    indices_or_sections : int or sequence of int
        A number of equal pieces or indices to cut at.

    Returns
    -------
    tuple of Tensor
        The pieces.

    Examples
    --------
    >>> import difflab as dl
    >>> [p.shape for p in dl.dsplit(dl.ones(1, 1, 4), [1])]
    [difflab.Size([1, 1, 1]), difflab.Size([1, 1, 3])]
    """
    x = tensor_or_interpreted(input)
    if x.ndim < 3:
        raise RuntimeError(f"dsplit needs at least 3 dimensions, got {x.ndim}")
    return _split_exactly(x, indices_or_sections, 2, "dsplit")


# --------------------------------------------------------------------------- moving axes


def movedim(input: Tensor, source: Any, destination: Any) -> Tensor:  # noqa: A002
    """Move dimensions to new places; the others keep their order.

    Parameters
    ----------
    input : Tensor
        The tensor.
    source, destination : int or sequence of int
        Where the dimensions are, and where they go (same length, no repeats).

    Returns
    -------
    Tensor
        A view with permuted dimensions.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.movedim(dl.ones(2, 3, 4), 0, -1).shape
    difflab.Size([3, 4, 2])
    """
    x = tensor_or_interpreted(input)
    source = [source] if isinstance(source, (int, np.integer)) else list(source)
    destination = ([destination] if isinstance(destination, (int, np.integer))
                   else list(destination))
    if len(source) != len(destination):
        raise ValueError(f"movedim: {len(source)} source dimensions but "
                         f"{len(destination)} destinations; give one destination per source")
    source = [dim_index(d, x.ndim, "movedim") for d in source]
    destination = [dim_index(d, x.ndim, "movedim") for d in destination]
    if len(set(source)) < len(source) or len(set(destination)) < len(destination):
        raise ValueError("movedim: repeated dimension in source or destination")
    rest = iter(d for d in range(x.ndim) if d not in source)
    placed = dict(zip(destination, source))
    return x.permute(*[placed[k] if k in placed else next(rest) for k in range(x.ndim)])


moveaxis = movedim


def swapdims(input: Tensor, dim0: int, dim1: int) -> Tensor:  # noqa: A002
    """Exchange two dimensions: another name of :func:`difflab.transpose`.

    Parameters
    ----------
    input : Tensor
        The tensor.
    dim0, dim1 : int
        The two dimensions.

    Returns
    -------
    Tensor
        A view with the two dimensions exchanged.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.swapdims(dl.ones(2, 3), 0, 1).shape
    difflab.Size([3, 2])
    """
    return F.transpose(tensor_or_interpreted(input), dim0, dim1)


def broadcast_shapes(*shapes: Any) -> Size:
    """The shape that tensors of the given shapes broadcast to together.

    Parameters
    ----------
    *shapes : int or sequence of int
        The shapes.

    Returns
    -------
    difflab.Size
        Their broadcast shape; a ``RuntimeError`` says which shapes do not match.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.broadcast_shapes((2, 1), (1, 3))
    difflab.Size([2, 3])
    """
    shapes = [(s,) if isinstance(s, (int, np.integer)) else tuple(s) for s in shapes]
    try:
        return Size(np.broadcast_shapes(*shapes))
    except ValueError:
        raise RuntimeError(f"shapes {shapes} cannot be broadcast together: each dimension "
                           f"must be equal or 1 (counted from the right)") from None


def broadcast_tensors(*tensors: Tensor) -> tuple:
    """Every tensor expanded to the common broadcast shape.

    Parameters
    ----------
    *tensors : Tensor
        The tensors.

    Returns
    -------
    tuple of Tensor
        Broadcast views, one per input.

    Examples
    --------
    >>> import difflab as dl
    >>> a, b = dl.broadcast_tensors(dl.ones(2, 1), dl.zeros(3))
    >>> a.shape, b.shape
    (difflab.Size([2, 3]), difflab.Size([2, 3]))
    """
    pieces = [tensor_or_interpreted(x) for x in tensors]
    shape = broadcast_shapes(*[x.shape for x in pieces])
    return tuple(x.broadcast_to(shape) for x in pieces)


def tile(input: Tensor, dims: Sequence[int]) -> Tensor:  # noqa: A002
    r"""Repeat the whole tensor ``dims[i]`` times along each dimension.

    Fewer ``dims`` than dimensions are padded with ones in front (so
    ``tile(x, (2,))`` repeats the last dimension), unlike :meth:`Tensor.repeat`;
    more ``dims`` than dimensions add leading dimensions (as ``numpy.tile``).

    Parameters
    ----------
    input : Tensor
        The tensor, of shape :math:`(s_1, \dots, s_n)`.
    dims : sequence of int
        Non-negative repetitions per dimension (aligned at the end); 0 gives an
        empty dimension.

    Returns
    -------
    Tensor
        A new tensor of shape :math:`(d_1 s_1, \dots, d_n s_n)` (the shorter of
        ``dims`` and the shape padded with ones in front), ``input``'s dtype.

    Raises
    ------
    RuntimeError
        When an entry of ``dims`` is negative.

    See Also
    --------
    difflab.Tensor.repeat : the same, with exactly one count per dimension or more.
    difflab.Tensor.expand : repeat a size-1 dimension without copying.
    difflab.repeat_interleave : repeat each entry in place, not the whole tensor.

    Notes
    -----
    Every entry of the output reads one entry of the input:

    .. math:: \text{out}_{i_1 \dots i_n} = \text{input}_{(i_1 \bmod s_1) \dots
              (i_n \bmod s_n)}

    so its derivative rule sums: each entry of ``input`` gets the sum of the
    output's gradient over its :math:`d_1 \cdots d_n` copies.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.tile(dl.tensor([[1, 2]]), (2,)).tolist()
    [[1, 2, 1, 2]]
    >>> dl.tile(dl.tensor([1, 2]), (2, 2)).tolist()
    [[1, 2, 1, 2], [1, 2, 1, 2]]

    The gradient counts the copies:

    >>> x = dl.tensor([1.0, 2.0], requires_grad=True)
    >>> dl.tile(x, (3,)).sum().backward()
    >>> x.grad.tolist()
    [3.0, 3.0]
    """
    x = tensor_or_interpreted(input)
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"tile: dims must be a tuple of ints (one count per dimension), got "
                        f"{type(dims).__name__} {dims!r:.40}; e.g. tile(x, ({dims!r},))")
    dims = tuple(int(d) for d in dims)
    if any(d < 0 for d in dims):
        raise RuntimeError(f"tile: the repetitions must be non-negative, got {dims}")
    return x.repeat(*((1,) * (x.ndim - len(dims)) + dims))


def ravel(input: Tensor) -> Tensor:  # noqa: A002
    """The values as one dimension, in row-major order.

    Parameters
    ----------
    input : Tensor
        The tensor.

    Returns
    -------
    Tensor
        A 1-D tensor.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.ravel(dl.tensor([[1, 2], [3, 4]])).tolist()
    [1, 2, 3, 4]
    """
    return tensor_or_interpreted(input).reshape(-1)


def fliplr(input: Tensor) -> Tensor:  # noqa: A002
    """Reverse the order of the columns (dimension 1).

    Parameters
    ----------
    input : Tensor
        At least 2-D.

    Returns
    -------
    Tensor
        The flipped tensor.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.fliplr(dl.tensor([[1, 2], [3, 4]])).tolist()
    [[2, 1], [4, 3]]
    """
    x = tensor_or_interpreted(input)
    if x.ndim < 2:
        raise RuntimeError(f"fliplr needs at least 2 dimensions, got {x.ndim}")
    return x.flip(1)


def flipud(input: Tensor) -> Tensor:  # noqa: A002
    """Reverse the order of the rows (dimension 0).

    Parameters
    ----------
    input : Tensor
        At least 1-D.

    Returns
    -------
    Tensor
        The flipped tensor.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.flipud(dl.tensor([[1, 2], [3, 4]])).tolist()
    [[3, 4], [1, 2]]
    """
    x = tensor_or_interpreted(input)
    if x.ndim < 1:
        raise RuntimeError("flipud needs at least 1 dimension, got a scalar")
    return x.flip(0)


def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:  # noqa: A002
    """Rotate by 90 degrees ``k`` times, from the first of ``dims`` towards the second.

    Parameters
    ----------
    input : Tensor
        At least 2-D.
    k : int
        The number of quarter turns (negative turns the other way).
    dims : pair of int
        The plane of rotation.

    Returns
    -------
    Tensor
        The rotated tensor.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.rot90(dl.tensor([[1, 2], [3, 4]])).tolist()
    [[2, 4], [1, 3]]
    """
    x = tensor_or_interpreted(input)
    if len(dims) != 2:
        raise RuntimeError(f"rot90: dims must be two dimensions, got {tuple(dims)}")
    d0, d1 = (dim_index(d, x.ndim, "rot90") for d in dims)
    if d0 == d1:
        raise RuntimeError(f"rot90: the two dims must differ, got {tuple(dims)}")
    turns = k % 4
    if turns == 1:
        return x.flip(d1).transpose(d0, d1)
    if turns == 2:
        return x.flip((d0, d1))
    if turns == 3:
        return x.flip(d0).transpose(d0, d1)
    return x.clone()


def _tile_method(self: Tensor, *dims: Any) -> Tensor:
    """Repeat the whole tensor along each dimension: :func:`difflab.tile` as a method.

    ``x.tile(2, 3)`` and ``x.tile((2, 3))`` are ``difflab.tile(x, (2, 3))`` (PyTorch's
    method spelling).  See :func:`difflab.tile`.

    Parameters
    ----------
    *dims : int or sequence of int
        Non-negative repetitions per dimension (aligned at the end).

    Returns
    -------
    Tensor
        A new tensor.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.tensor([[1, 2]]).tile(2, 2).tolist()
    [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    return tile(self, shape_args(dims, "tile", "the counts"))


def unflatten(input: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:  # noqa: A002
    """Split one dimension into several: ``(2, 6)`` with ``dim=1, sizes=(2, 3)`` is ``(2, 2, 3)``.

    Parameters
    ----------
    input : Tensor
        The tensor.
    dim : int
        The dimension to split.
    sizes : sequence of int
        Its new sizes (one may be ``-1``); their product must be the old size.

    Returns
    -------
    Tensor
        A view with ``len(sizes) - 1`` more dimensions.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.ones(2, 6).unflatten(1, (2, 3)).shape
    difflab.Size([2, 2, 3])
    """
    x = tensor_or_interpreted(input)
    dim = dim_index(dim, x.ndim, "unflatten")
    sizes = shape_args((sizes,), "unflatten")
    known = int(np.prod([n for n in sizes if n != -1]))
    if sizes.count(-1) > 1 or (-1 not in sizes and known != x.shape[dim]) or (
            -1 in sizes and (known == 0 or x.shape[dim] % known)):
        raise RuntimeError(f"unflatten: sizes {sizes} do not multiply to dimension {dim}'s "
                           f"size {x.shape[dim]}")
    return x.reshape(tuple(x.shape[:dim]) + sizes + tuple(x.shape[dim + 1:]))


# Tensor methods: the functions themselves (attached here: the tensor module does not
# import this one).
_TENSOR_METHODS = {
    "movedim": movedim, "moveaxis": moveaxis, "swapdims": swapdims, "tile": _tile_method,
    "fliplr": fliplr, "flipud": flipud, "rot90": rot90, "tensor_split": tensor_split,
    "hsplit": hsplit, "vsplit": vsplit, "dsplit": dsplit, "unflatten": unflatten,
}
for _name, _function in _TENSOR_METHODS.items():
    setattr(Tensor, _name, _function)
