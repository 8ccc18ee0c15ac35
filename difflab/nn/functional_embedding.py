"""Embedding lookups: ``F.embedding``, the rows of a table picked by integer indices.

Split from :mod:`difflab.nn.functional_core` (the file-length rule); the bags of
embeddings, ``F.embedding_bag``, are in :mod:`difflab.nn.functional_layers`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from difflab import backend
from difflab.autograd.engine import apply
from difflab.functions_indexing import checked_index as _checked_index
from difflab.ops import nn_ops
from difflab.tensor import Tensor

__all__ = ["embedding"]


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,  # noqa: A002
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    r"""The rows ``weight[input]`` of a table; ``input`` holds integer indices.

    The table's gradient adds :math:`\bar y` into the rows looked up (none into
    ``padding_idx``).  With ``max_norm``, each row looked up whose
    :math:`p`-norm exceeds it is first scaled down, in place and unrecorded, to
    :math:`\text{max\_norm} / (\lVert w \rVert_p + 10^{-7})` times itself (PyTorch's
    ``embedding_renorm_``): the table itself changes.

    Parameters
    ----------
    input : Tensor or array
        Integer indices, any shape.
    weight : Tensor
        The table, :math:`(\text{num\_embeddings}, \text{dim})`.
    padding_idx : int, optional
        A row that receives no gradient.
    max_norm : float, optional
        The largest norm a row looked up may keep.
    norm_type : float, default 2.0
        :math:`p` of that norm.
    scale_grad_by_freq : bool, default False
        Only False: PyTorch's option divides each row's gradient by its count in the
        batch, which is not the derivative of the lookup (the other methods could not
        agree with it).
    sparse : bool, default False
        Accepted; difflab's gradients are dense (``optim.SparseAdam`` takes them).

    Returns
    -------
    Tensor
        :math:`(*, \text{dim})`.

    Raises
    ------
    TypeError
        If the indices are not integers.
    IndexError
        If an index is outside the table.

    See Also
    --------
    difflab.nn.Embedding, one_hot

    Examples
    --------
    >>> import difflab as dl
    >>> import difflab.nn.functional as F
    >>> F.embedding(dl.tensor([2, 0]), dl.tensor([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]))
    tensor([[4., 5.],
            [0., 1.]])
    """
    idx = input.array if isinstance(input, Tensor) else np.asarray(input)
    if idx.dtype.kind not in "iu":
        raise TypeError(
            f"embedding: indices must be integers (got dtype {idx.dtype}); use .long()"
        )
    n = weight.shape[0]
    idx = _checked_index(input if isinstance(input, Tensor) else idx, n,
                         f"embedding: index out of range: indices must be in [0, {n}), got "
                         f"{{value}}").array
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    if scale_grad_by_freq:
        raise NotImplementedError(
            "embedding(scale_grad_by_freq=True) divides each row's gradient by its count in "
            "the batch, which is not the derivative of the lookup; difflab gives the "
            "derivative (leave it False)")
    if max_norm is not None:
        if isinstance(input, Tensor):  # (the rows are read out, as a value printed is: a
            input.tolist()             # compiled call then runs eagerly, renorming each time)
        _renorm_rows_(weight, idx, float(max_norm), float(norm_type))
    return apply(nn_ops.Embedding, weight, idx=idx, padding_idx=padding_idx)


def _renorm_rows_(weight: Tensor, idx: Any, max_norm: float, norm_type: float) -> None:
    """Scale the rows ``idx`` of ``weight`` whose norm exceeds ``max_norm`` down to it, in
    place and unrecorded (PyTorch's ``embedding_renorm_``: a change of the table, like an
    optimizer's step; its version goes up, so a backward that saved it refuses)."""
    numbers = isinstance(weight, Tensor) and (  # (a GPU array, or NumPy's not of objects)
        backend.is_gpu_array(weight.array)
        or isinstance(weight.array, np.ndarray) and weight.array.dtype != object)
    if not numbers:
        raise TypeError("embedding(max_norm=...) rescales the table in place: the weight "
                        "must be a tensor of numbers (not dual numbers or symbols)")
    xp = backend.array_module(weight.array)
    rows = xp.unique(idx.reshape(-1))
    picked = weight.array[rows]
    norms = xp.linalg.norm(picked, ord=norm_type, axis=1)  # (any p: inf, 0 and -inf too)
    over = norms > max_norm
    if bool(over.any()):
        scale = xp.where(over, max_norm / (norms + 1e-7), 1.0).astype(weight.array.dtype)
        weight.array[rows] = picked * scale[:, None]
        weight._version[0] += 1
