"""Shapes and joins: ``reshape``, ``flatten``, ``squeeze``, ``transpose``, ``cat``, ``stack``, ...

Functions of :mod:`difflab.functions` (which re-exports them: they are ``difflab.<name>``
and the array namespace's ``xp.<name>`` alike) that rearrange or join tensors.  Each
records primitives of :mod:`difflab.ops.structural`, whose VJP is the transpose of the
rearrangement (a reshape back, a split of the joined adjoint).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from difflab import backend
from difflab.autograd.engine import apply
from difflab.ops import structural
from difflab.tensor import Tensor
from difflab.tensor_arguments import (
    dim_index,
    interpreted,
    promote_all,
    tensor_of,
    tensor_sequence,
    write_out,
)


def swapaxes(input: Any, axis0: int, axis1: int) -> Any:  # noqa: A002
    r"""``input`` with two of its dimensions exchanged (NumPy's name for :func:`difflab.transpose`).

    Parameters
    ----------
    input : Tensor or array
        The values (an array is swapped by NumPy or CuPy, not recorded).
    axis0, axis1 : int
        The two dimensions to exchange (negative count from the end).

    Returns
    -------
    Tensor or array
        ``input``'s shape with the two sizes exchanged; on a Tensor a view.

    Raises
    ------
    IndexError
        If an axis is out of range.

    See Also
    --------
    difflab.transpose : PyTorch's name, which also permutes.
    difflab.permute : reorder all the dimensions.

    Notes
    -----
    A permutation of the axes: the gradient is the adjoint swapped back,
    :math:`\bar x = \operatorname{swapaxes}(\bar y, a_0, a_1)`.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.swapaxes(dl.zeros(2, 3, 4), 0, 2).shape
    difflab.Size([4, 3, 2])
    >>> x = dl.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    >>> y = dl.swapaxes(x, 0, 1)
    >>> y
    tensor([[1.],
            [2.],
            [3.]], grad_fn=<...>)
    >>> (y * dl.tensor([[1.0], [2.0], [3.0]])).sum().backward()
    >>> x.grad
    tensor([[1., 2., 3.]])
    """
    if isinstance(input, Tensor):
        return input.transpose(axis0, axis1)
    return backend.array_module(input).swapaxes(input, axis0, axis1)


def transpose(input: Any, dim0: Any = None, dim1: Any = None) -> Any:  # noqa: A002
    """``transpose(x, d0, d1)`` swaps two axes (PyTorch); ``transpose(x, axes)`` permutes.

    Parameters
    ----------
    input : Tensor or array
        The values.
    dim0, dim1 : int or sequence of int, optional
        Two axes to swap; or, NumPy's way, one sequence of all the axes in their new
        order; neither: all axes reversed.

    Returns
    -------
    Tensor or array
        A view; the gradient is transposed back.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.transpose(dl.tensor([[1.0, 2.0], [3.0, 4.0]]), 0, 1)
    tensor([[1., 3.],
            [2., 4.]])
    >>> dl.transpose(dl.zeros(2, 1, 3), 0, 2).shape
    difflab.Size([3, 1, 2])
    """
    if dim1 is not None:
        return swapaxes(input, dim0, dim1)
    if isinstance(input, Tensor):
        return input.permute(*(dim0 if dim0 is not None else range(input.ndim - 1, -1, -1)))
    return backend.array_module(input).transpose(input, dim0)


def reshape(input: Any, shape: Any) -> Any:  # noqa: A002
    """The same values in another shape.

    Parameters
    ----------
    input : Tensor or array
        The values.
    shape : tuple of int
        The new shape; one entry may be -1 (inferred).

    Returns
    -------
    Tensor or array
        A view where possible; the gradient is reshaped back.

    Raises
    ------
    ValueError
        When the number of elements differs, a size is below -1, or -1 is given twice.
    TypeError
        When a size is not an int.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.reshape(dl.arange(6), (2, 3))
    tensor([[0, 1, 2],
            [3, 4, 5]])
    """
    if isinstance(input, (int, float)):  # a plain number has no .reshape method
        return backend.array_module(input).reshape(input, shape)
    return input.reshape(shape)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:  # noqa: A002
    """Merge dimensions ``start_dim`` to ``end_dim`` into one.

    Parameters
    ----------
    input : Tensor
        The values.
    start_dim, end_dim : int, default 0, -1
        The first and last dimensions merged.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import difflab as dl
    >>> dl.flatten(dl.zeros(2, 1, 3)).shape, dl.flatten(dl.zeros(2, 1, 3), 1).shape
    (difflab.Size([6]), difflab.Size([2, 3]))
    """
    return input.flatten(start_dim, end_dim)


def squeeze(input: Tensor, dim: Any = None) -> Tensor:  # noqa: A002
    """Remove dimensions of size 1.

    Parameters
    ----------
    input : Tensor
        The values.
    dim : int or tuple of int, optional
        Only these dimensions (each removed if its size is 1); default (None): every
        size-1 one.

    Returns
    -------
    Tensor
        ``input`` without those dimensions of size 1.

    Raises
    ------
    TypeError
        If ``dim`` is not an int or a tuple of ints.
    IndexError
        If a dimension is out of range.
    RuntimeError
        If a dimension appears twice.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.squeeze(dl.zeros(2, 1, 3)).shape
    difflab.Size([2, 3])
    """
    return input.squeeze(dim)


def unsqueeze(input: Tensor, dim: int) -> Tensor:  # noqa: A002
    """Insert a dimension of size 1 at ``dim``.

    Parameters
    ----------
    input : Tensor
        The values.
    dim : int
        Where the new dimension goes (negative counts from the end).

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import difflab as dl
    >>> dl.unsqueeze(dl.zeros(3), 0).shape
    difflab.Size([1, 3])
    """
    return input.unsqueeze(dim)


def expand_dims(x: Any, axis: int) -> Any:
    """NumPy's name for :func:`unsqueeze`."""
    if isinstance(x, Tensor):
        return x.unsqueeze(axis)
    return backend.array_module(x).expand_dims(x, axis)


def flip(input: Any, dims: Any) -> Any:  # noqa: A002  (PyTorch's keyword)
    """``input`` with the order of its elements reversed along ``dims``.

    Parameters
    ----------
    input : Tensor or array
        The values (an array is flipped by NumPy or CuPy, not recorded).
    dims : int or tuple of int
        The dimensions to reverse (a 0-d tensor takes 0 or -1 and stays as it is;
        ``()``: nothing is reversed).

    Returns
    -------
    Tensor or array
        ``input``'s shape (a copy).

    Raises
    ------
    TypeError
        If ``dims`` is not an int or a tuple of ints (None included).
    IndexError
        If a dimension is out of range (PyTorch's "Dimension out of range").
    RuntimeError
        If a dimension appears twice (flipping it twice would undo the flip).

    See Also
    --------
    difflab.roll : shift circularly instead.
    difflab.fliplr, difflab.flipud : NumPy's named flips.

    Notes
    -----
    :math:`y_i = x_{n-1-i}` along each flipped dimension: a permutation, its own
    inverse, so the gradient is the adjoint flipped the same way.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    >>> dl.flip(x, 0)
    tensor([[4., 5., 6.],
            [1., 2., 3.]], grad_fn=<...>)
    >>> dl.flip(x, (0, 1))
    tensor([[6., 5., 4.],
            [3., 2., 1.]], grad_fn=<...>)
    >>> (dl.flip(x, 1) * dl.tensor([1.0, 2.0, 3.0])).sum().backward()
    >>> x.grad                          # the weights flipped back
    tensor([[3., 2., 1.],
            [3., 2., 1.]])
    >>> dl.flip(dl.tensor(5.0), 0)      # a 0-d tensor: nothing to reverse
    tensor(5.)
    """
    if isinstance(input, Tensor):
        return input.flip(dims)
    return backend.array_module(input).flip(input, dims)


def cat(tensors: Sequence[Any], dim: int = 0, *, axis: int | None = None,
        out: Tensor | None = None) -> Tensor:
    """Join tensors along an existing dimension ``dim`` (promoted to their common dtype).

    ``axis`` is NumPy's name for ``dim`` (PyTorch accepts it too): derivative
    rules call ``xp.concatenate(xs, axis=k)``, and with nested dual numbers
    (forward over forward) ``xp`` is this module.

    Parameters
    ----------
    tensors : sequence of Tensor
        Of equal shapes except along ``dim``.
    dim : int, default 0
        The dimension to join along (``axis``: NumPy's name).
    out : Tensor, optional
        Written into (and returned).

    Returns
    -------
    Tensor
        The joined tensor; its gradient is split back into the pieces.

    Raises
    ------
    ValueError
        When the shapes differ outside ``dim`` (the message names the tensors).

    See Also
    --------
    stack : join along a new dimension.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([[1.0, 2.0]])
    >>> dl.cat([x, x], dim=0)
    tensor([[1., 2.],
            [1., 2.]])
    """
    dim = dim if axis is None else axis
    if out is not None:
        return write_out(out, cat(tensors, dim))
    tensors = _values_beside_interpreted(tensor_sequence(tensors, "cat"))
    if not tensors:
        raise ValueError("cat() needs a non-empty sequence of tensors")
    if not builtins.any(isinstance(t, Tensor) for t in tensors):  # arrays or Duals: no tape
        return backend.array_module(tensors[0]).concatenate(tensors, axis=dim)
    ndim = tensor_of(tensors[0]).ndim
    for i, t in enumerate(tensors):
        if tensor_of(t).ndim == 0:
            raise RuntimeError(f"cat: zero-dimensional tensor (at position {i}) cannot be "
                               f"concatenated; use stack, or reshape each to 1-D first")
    dim = dim_index(dim, ndim, "cat")
    for i, t in enumerate(tensors[1:], 1):
        t = tensor_of(t)
        if t.ndim != ndim or builtins.any(
            a != b for k, (a, b) in enumerate(zip(t.shape, tensor_of(tensors[0]).shape))
            if k != dim
        ):
            raise ValueError(
                f"cat: sizes of tensors must match except in dimension {dim}; tensor 0 has "
                f"shape {tuple(tensor_of(tensors[0]).shape)}, tensor {i} has shape "
                f"{tuple(t.shape)}"
            )
    return apply(structural.Concatenate, *promote_all(tensors), axis=dim)


concatenate = cat


def _values_beside_interpreted(tensors: list) -> list:
    """The tensors to join, each a tensor constant's values where one of them is a dual
    number or symbols (``dl.cat([x, dl.tensor(...)])`` in f): NumPy's concatenate then
    joins them through the Dual's or SymbolArray's protocol."""
    if interpreted(*tensors):
        return [t.array if isinstance(t, Tensor) else t for t in tensors]
    return tensors


def stack(tensors: Sequence[Any], dim: int = 0, *, axis: int | None = None,
          out: Tensor | None = None) -> Tensor:
    """Join tensors of equal shape along a new dimension ``dim`` (``axis``: NumPy's name).

    Parameters
    ----------
    tensors : sequence of Tensor
        Of one shape.
    dim : int, default 0
        Where the new dimension goes (``axis``: NumPy's name).
    out : Tensor, optional
        Written into (and returned).

    Returns
    -------
    Tensor
        One more dimension than the inputs.

    See Also
    --------
    cat : join along an existing dimension.

    Examples
    --------
    >>> import difflab as dl
    >>> b = dl.tensor([1.0, 2.0])
    >>> dl.stack([b, b]).shape
    difflab.Size([2, 2])
    """
    dim = dim if axis is None else axis
    if out is not None:
        return write_out(out, stack(tensors, dim))
    tensors = _values_beside_interpreted(tensor_sequence(tensors, "stack"))
    if tensors and not builtins.any(isinstance(t, Tensor) for t in tensors):  # arrays or Duals
        return backend.array_module(tensors[0]).stack(tensors, axis=dim)
    tensors = [tensor_of(t) for t in tensors]
    if not tensors:
        raise ValueError("stack() needs a non-empty sequence of tensors")
    shape = tensors[0].shape
    for i, t in enumerate(tensors):
        if t.shape != shape:
            raise ValueError(
                f"stack expects each tensor to be equal size, but got {tuple(shape)} at "
                f"entry 0 and {tuple(t.shape)} at entry {i}"
            )
    dim = dim_index(dim, len(shape) + 1, "stack")
    return cat([t.unsqueeze(dim) for t in tensors], dim)


def split(x: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple:
    """Cut ``x`` along ``dim`` into pieces of one size (the last may be smaller) or of given sizes.

    Parameters
    ----------
    x : Tensor
        The values.
    split_size_or_sections : int or sequence of int
        An int (Python's or NumPy's): the size of each piece (the last one gets what
        is left).  A sequence: the size of each piece, adding up to ``x.shape[dim]``.
    dim : int, default 0
        The dimension to cut along (negative counts from the end).

    Returns
    -------
    tuple of Tensor
        The pieces, views of ``x`` with ``dim`` shortened (an empty dimension gives one
        empty piece).

    Raises
    ------
    ValueError
        If the size is not positive, a size in the sequence is negative, or the sizes
        do not add up to ``x.shape[dim]``.
    IndexError
        If ``dim`` is out of range (or ``x`` is 0-d).
    TypeError
        If ``dim`` is not an int, or the sizes neither an int nor a list of ints.

    See Also
    --------
    difflab.chunk : a number of nearly equal pieces.
    difflab.tensor_split : NumPy's ``array_split``.
    difflab.cat : the inverse, joining them again.

    Notes
    -----
    Each piece is a slice of ``x``: the gradient of each is written into its part of
    ``x``'s gradient, and parts no piece reaches get 0.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.split(dl.arange(5.0), 2)
    (tensor([0., 1.]), tensor([2., 3.]), tensor([4.]))
    >>> x = dl.arange(4.0).requires_grad_()
    >>> a, b = dl.split(x, [1, 3])
    >>> a, b
    (tensor([0.], grad_fn=<...>), tensor([1., 2., 3.], grad_fn=<...>))
    >>> (2 * a.sum() + b.sum()).backward()
    >>> x.grad
    tensor([2., 1., 1., 1.])
    """
    dim = dim_index(dim, x.ndim, "split", zero_d_has_dim=False)
    length = x.shape[dim]
    if isinstance(split_size_or_sections, (int, np.integer)) and not isinstance(
            split_size_or_sections, bool):  # (a NumPy integer is one size, not a list)
        split_size_or_sections = int(split_size_or_sections)
        if split_size_or_sections <= 0:
            raise ValueError(f"split: split_size must be a positive int, got "
                             f"{split_size_or_sections}")
        sizes = [split_size_or_sections] * (length // split_size_or_sections)
        if length % split_size_or_sections or not length:  # (an empty dim: one empty piece)
            sizes.append(length % split_size_or_sections)
    else:
        if not isinstance(split_size_or_sections, (list, tuple, Tensor, np.ndarray)):
            raise TypeError(f"split: split_size_or_sections must be an int or a list of ints, "
                            f"got {type(split_size_or_sections).__name__}")
        sizes = [int(n) for n in split_size_or_sections]
        if builtins.min(sizes, default=0) < 0:
            raise ValueError(f"split: the sizes {sizes} must not be negative")
        if builtins.sum(sizes) != length:
            raise ValueError(
                f"split sizes {sizes} add up to {builtins.sum(sizes)}, but dimension {dim} "
                f"has length {length}"
            )
    pieces, start = [], 0
    index = [slice(None)] * x.ndim
    for size in sizes:
        index[dim] = slice(start, start + size)
        pieces.append(x[tuple(index)])
        start += size
    return tuple(pieces)


def chunk(x: Tensor, chunks: int, dim: int = 0) -> tuple:
    """Cut ``x`` along ``dim`` into ``chunks`` nearly equal pieces (the last may be smaller).

    Each piece has ⌈n / chunks⌉ elements along ``dim`` (n = ``x.shape[dim]``), the last
    what is left, so there may be fewer than ``chunks`` pieces (as in PyTorch).  An
    empty ``dim`` gives ``chunks`` empty pieces, also as PyTorch.

    Parameters
    ----------
    x : Tensor
        The values.
    chunks : int
        How many pieces to aim for (positive).
    dim : int, default 0
        The dimension to cut along.

    Returns
    -------
    tuple of Tensor
        The pieces, views of ``x``.

    Raises
    ------
    ValueError
        If ``chunks`` is not a positive int.
    IndexError
        If ``dim`` is out of range.

    See Also
    --------
    difflab.split : pieces of a given size.
    difflab.tensor_split : exactly that many pieces, NumPy's way.

    Notes
    -----
    Each piece is a slice: its gradient goes back into its part of ``x``'s.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.chunk(dl.arange(5.0), 3)
    (tensor([0., 1.]), tensor([2., 3.]), tensor([4.]))
    >>> dl.chunk(dl.arange(6.0), 4)          # pieces of 2: only three
    (tensor([0., 1.]), tensor([2., 3.]), tensor([4., 5.]))
    >>> [piece.shape for piece in dl.zeros(2, 6).chunk(2, dim=1)]
    [difflab.Size([2, 3]), difflab.Size([2, 3])]
    >>> [piece.shape for piece in dl.zeros(0, 3).chunk(2)]   # an empty dim: empty pieces
    [difflab.Size([0, 3]), difflab.Size([0, 3])]
    """
    if isinstance(chunks, bool) or not isinstance(chunks, (int, np.integer)) or chunks <= 0:
        raise ValueError(f"chunk: chunks must be a positive int, got {chunks!r}")
    dim = dim_index(dim, x.ndim, "chunk", zero_d_has_dim=False)
    if x.shape[dim] == 0:  # (PyTorch: as many empty pieces as asked for, not one)
        return split(x, [0] * int(chunks), dim)
    size = builtins.max(-(-x.shape[dim] // chunks), 1)
    return split(x, size, dim)
