"""Where the maxima of a max pool's windows are: the indices ``return_indices=True`` gives.

Below :mod:`difflab.nn.functional_core` (whose ``max_pool2d`` returns them), so every pool
reads its indices here: the windows of a max pool by strided slicing, the cells of an
adaptive one by indexing, then ``argmax`` for each window's first maximum (PyTorch's
choice among ties) and a constant map of positions, read the same way, for its index.
The indices are integers: they carry no gradient (the pools' values do).
"""

from __future__ import annotations

from itertools import product
from typing import Any

import numpy as np

from difflab.creation import full, tensor
from difflab.functions import cat, stack
from difflab.nn.functional_arguments import _window
from difflab.tensor import Tensor
from difflab.tensor_arguments import require_tensor, values_of


def _bins(n: int, m: int) -> list[tuple[int, int]]:
    """PyTorch's adaptive bins: cell i of m over n covers [⌊i·n/m⌋, ⌈(i+1)·n/m⌉)."""
    return [((i * n) // m, -(-((i + 1) * n) // m)) for i in range(m)]


def _max_indices(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
                     padding: Any = 0, dilation: Any = 1) -> Tensor:
    r"""Where each window's maximum is: the flat index into the spatial positions of (N, C, *).

    (``kernel_size`` and the others are one int per spatial dimension, or one for all.)

    The indices a max pool returns with ``return_indices=True`` (PyTorch's
    layout): for every window, the position of its first maximum in scanning
    order, counted over the input's spatial sizes flattened (:math:`h W + w` in
    2-D).  The windows are stacked by strided slicing (one slice per kernel
    position, :math:`-\infty` in the padding) and ``argmax`` picks the first
    maximum; a constant map of positions, sliced the same way, turns each pick
    into its index.  The indices are integers, with no gradient.
    """


    x = require_tensor(input, "max_pool", "input")
    if x.ndim not in (3, 4, 5):
        raise ValueError(f"max_pool expects (N, C, *) with 1 to 3 spatial dimensions, "
                         f"got shape {tuple(x.shape)}")
    dims, spatial = x.ndim - 2, tuple(x.shape[2:])
    kernel = _window("max_pool", kernel_size, "kernel_size", dims)
    stride = kernel if stride is None or stride == () else _window(
        "max_pool", stride, "stride", dims)
    padding = _window("max_pool", padding, "padding", dims)
    dilation = _window("max_pool", dilation, "dilation", dims)
    sizes = [(n + 2 * p - d * (k - 1) - 1) // s + 1
             for n, k, s, p, d in zip(spatial, kernel, stride, padding, dilation)]
    padded = values_of(x, "max_pool's indices").detach()  # (a Dual's values; symbols refused)
    for axis, p in enumerate(padding):  # -inf on both sides: never a window's maximum
        if p:
            side = list(padded.shape)
            side[2 + axis] = p
            fill = full(tuple(side), float("-inf"), dtype=padded.dtype, device=padded.device)
            padded = cat([fill, padded, fill], 2 + axis)
    # the position of every padded place in the unpadded input (-1 in the padding)
    positions = np.pad(np.arange(int(np.prod(spatial))).reshape(spatial),
                       [(p, p) for p in padding], constant_values=-1)
    windows, maps = [], []
    for offset in product(*(range(k) for k in kernel)):
        picked = tuple(slice(o * d, o * d + s * (n - 1) + 1, s)
                       for o, d, s, n in zip(offset, dilation, stride, sizes))
        windows.append(padded[(slice(None), slice(None)) + picked])
        maps.append(positions[picked])
    first = stack(windows, 2).argmax(2, keepdim=True)  # (N, C, 1, *out): the first maximum
    where = tensor(np.stack(maps), device=x.device).expand(
        x.shape[0], x.shape[1], len(maps), *sizes)
    return where.gather(2, first).squeeze(2)


def _without_added_batch(result: Any, unbatched: bool) -> Any:
    """``result`` (a tensor, or a tuple: a pool's values and indices) without the batch
    dimension of size 1 that was added to an unbatched input (``functional_core._as_image``)."""
    if not unbatched:
        return result
    if isinstance(result, tuple):
        return tuple(r.squeeze(0) for r in result)
    return result.squeeze(0)


def _adaptive_max_indices(x: Tensor, sizes: tuple) -> Tensor:
    """Where each adaptive cell's maximum is, as a flat index into the spatial positions of
    (N, C, *) (PyTorch's ``return_indices``): the first maximum in scanning order.

    Every cell along an axis is read through the same number of positions (the longest
    bin's length, a shorter bin repeating its last position, which never wins a tie
    against itself), so all cells are one indexing of x; ``argmax`` picks each cell's
    first maximum and a constant map of positions, indexed the same way, names it.
    """
    spatial, dims = tuple(x.shape[2:]), x.ndim - 2
    reads = []  # per axis: (cells, longest bin) positions read
    for n, m in zip(spatial, sizes):
        bins = _bins(n, m)
        longest = max(b - a for a, b in bins)
        reads.append(np.array([[min(a + k, b - 1) for k in range(longest)] for a, b in bins]))
    # the index of each axis broadcast over (m1, k1, m2, k2, ...)
    grids = []
    for d, read in enumerate(reads):
        shape = [1] * (2 * dims)
        shape[2 * d:2 * d + 2] = read.shape
        grids.append(read.reshape(shape))
    values = values_of(x, "adaptive_max_pool's indices").detach()  # (no derivative)
    cells = values[(slice(None), slice(None)) + tuple(grids)]  # (N, C, m1, k1, m2, k2, ..)
    order = (0, 1) + tuple(2 + 2 * d for d in range(dims)) + tuple(3 + 2 * d
                                                                   for d in range(dims))
    n, c = x.shape[:2]
    flat = cells.permute(*order).reshape(n, c, *sizes, -1)
    first = flat.argmax(-1, keepdim=True)
    positions = np.arange(int(np.prod(spatial))).reshape(spatial)[tuple(grids)]
    positions = np.transpose(positions, [o - 2 for o in order[2:]]).reshape(*sizes, -1)
    where = tensor(positions, device=x.device).expand(n, c, *positions.shape)
    return where.gather(-1, first).squeeze(-1)
