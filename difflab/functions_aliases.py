"""PyTorch's other names for difflab's math, and the few functions composed for them.

PyTorch spells many operations twice (``x.arccos()`` and ``x.acos()``,
``x.greater(y)`` and ``x.gt(y)``, ``x.clamp_min(m)`` and ``x.clamp(min=m)``), and
programs use both.  An alias here is the same function object as the name it
stands for (so its documentation is that function's); the few names that compute
something new (``float_power``, ``x.unfold``, ``x.sum_to_size``) are
composed of primitives, so every differentiator and the graph tracer see them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from difflab import functions as F  # noqa: N812  (the primitives' public faces)
from difflab import functions_logic, functions_picking, functions_statistics
from difflab.creation import bernoulli, tensor
from difflab.dtypes import as_dtype, complex128, float64, result_type
from difflab.tensor import Tensor
from difflab.tensor_arguments import (
    dim_index,
    interpreted,
    tensor_of,
    tensor_or_interpreted,
    times_alpha,
)

__all__ = ["clamp_max", "clamp_min", "clip_", "detach", "fill", "float_power",
           "nan_to_num_", "rsub", "sigmoid_", "tanh_", "trapz", "typename", "zero_"]


def clamp_min(input: Tensor, min: Any) -> Tensor:  # noqa: A002
    """``max(input, min)`` elementwise: :func:`difflab.clamp` with a lower bound only.

    Parameters
    ----------
    input : Tensor
        The values.
    min : number or Tensor
        The lower bound (broadcast).

    Returns
    -------
    Tensor
        ``input`` with every value below ``min`` raised to it; the gradient is
        ``clamp``'s (1 where ``input >= min``, else 0).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.clamp_min(dl.tensor([-1.0, 0.5, 2.0]), 0.0)
    tensor([0. , 0.5, 2. ])
    """
    return F.clamp(input, min=min)


def clamp_max(input: Tensor, max: Any) -> Tensor:  # noqa: A002
    """``min(input, max)`` elementwise: :func:`difflab.clamp` with an upper bound only.

    Parameters
    ----------
    input : Tensor
        The values.
    max : number or Tensor
        The upper bound (broadcast).

    Returns
    -------
    Tensor
        ``input`` with every value above ``max`` lowered to it; the gradient is
        ``clamp``'s (1 where ``input <= max``, else 0).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.clamp_max(dl.tensor([-1.0, 0.5, 2.0]), 1.0)
    tensor([-1. ,  0.5,  1. ])
    """
    return F.clamp(input, max=max)


def float_power(input: Any, exponent: Any) -> Tensor:  # noqa: A002
    """``input ** exponent`` computed in double precision (float64, complex128 if complex).

    The operands are converted to float64 (or complex128) first, then raised: the
    derivative is ``pow``'s, converted back to each operand's dtype.

    Parameters
    ----------
    input : Tensor or number
        The bases.
    exponent : Tensor or number
        The exponents (broadcast with ``input``).

    Returns
    -------
    Tensor
        float64 (or complex128) powers.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.float_power(dl.tensor([2, 3]), 2)
    tensor([4., 9.], dtype=difflab.float64)
    """
    if interpreted(input, exponent):  # (a dual number or a symbol: no dtype to widen)
        return tensor_or_interpreted(input) ** exponent
    complex_ = any(as_dtype(result_type(v)).kind == "c" for v in (input, exponent))
    wide = complex128 if complex_ else float64
    base = tensor_of(input).to(wide)
    power = exponent.to(wide) if isinstance(exponent, Tensor) else exponent
    return base ** power


def rsub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:  # noqa: A002
    """``other - alpha * input``: subtraction with the operands reversed (``torch.rsub``).

    Parameters
    ----------
    input : Tensor
        The subtrahend (scaled by ``alpha``).
    other : Tensor or number
        The minuend.
    alpha : number, optional, keyword-only
        The factor of ``input`` (default 1).

    Returns
    -------
    Tensor
        The broadcast differences; the gradient is ``-alpha`` for ``input``, 1 for ``other``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.rsub(dl.tensor([1.0, 2.0]), 5)
    tensor([4., 3.])
    """
    return other - times_alpha(input, alpha, other, "rsub")


def fill(input: Tensor, value: Any) -> Tensor:  # noqa: A002
    """A new tensor of ``input``'s shape, dtype and device, every entry ``value``.

    The out-of-place :meth:`difflab.Tensor.fill_`: a 0-d tensor ``value`` that requires
    grad receives the sum of the result's gradient; ``input`` receives none.

    Parameters
    ----------
    input : Tensor
        Whose shape, dtype and device to take.
    value : number or 0-d Tensor
        The value, cast to ``input``'s dtype.

    Returns
    -------
    Tensor
        The filled copy (``input`` is unchanged).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.fill(dl.tensor([1, 2]), 2.7)
    tensor([2, 2])
    """
    return input.clone().fill_(value)


def detach(input: Tensor) -> Tensor:  # noqa: A002
    """``input.detach()``: the same values and memory, off the tape (``torch.detach``).

    Parameters
    ----------
    input : Tensor
        The tensor.

    Returns
    -------
    Tensor
        A tensor that shares ``input``'s memory and does not require grad.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.detach(dl.ones(2, requires_grad=True)).requires_grad
    False
    """
    return input.detach()


def zero_(input: Tensor) -> Tensor:  # noqa: A002
    """``input.zero_()``: write zeros into ``input`` (``torch.zero_``).

    Parameters
    ----------
    input : Tensor
        The tensor written into.

    Returns
    -------
    Tensor
        ``input``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.zero_(dl.ones(2))
    tensor([0., 0.])
    """
    return input.zero_()


def clip_(input: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """``input.clamp_(min, max)``: limit ``input`` to ``[min, max]`` in place (``torch.clip_``).

    Parameters
    ----------
    input : Tensor
        The tensor written into.
    min, max : number or Tensor, optional
        The bounds; at least one.

    Returns
    -------
    Tensor
        ``input``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.clip_(dl.tensor([-2.0, 0.5, 2.0]), -1, 1)
    tensor([-1. ,  0.5,  1. ])
    """
    return input.clamp_(min, max)


def nan_to_num_(input: Tensor, nan: float = 0.0, posinf: float | None = None,  # noqa: A002
                neginf: float | None = None) -> Tensor:
    """``input.nan_to_num_(...)``: replace nan and infinities in place (``torch.nan_to_num_``).

    Parameters
    ----------
    input : Tensor
        The tensor written into.
    nan : float, optional
        What nan becomes (default 0).
    posinf, neginf : float, optional
        What ±inf become (default: the dtype's largest and lowest finite values).

    Returns
    -------
    Tensor
        ``input``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nan_to_num_(dl.tensor([float("nan"), 1.0]), nan=-1.0)
    tensor([-1.,  1.])
    """
    return input.nan_to_num_(nan=nan, posinf=posinf, neginf=neginf)


def sigmoid_(input: Tensor) -> Tensor:  # noqa: A002
    """``input.sigmoid_()``: the logistic function, in place (``torch.sigmoid_``).

    Parameters
    ----------
    input : Tensor
        The tensor written into.

    Returns
    -------
    Tensor
        ``input``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.sigmoid_(dl.tensor([0.0]))
    tensor([0.5])
    """
    return input.sigmoid_()


def tanh_(input: Tensor) -> Tensor:  # noqa: A002
    """``input.tanh_()``: the hyperbolic tangent, in place (``torch.tanh_``).

    Parameters
    ----------
    input : Tensor
        The tensor written into.

    Returns
    -------
    Tensor
        ``input``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.tanh_(dl.tensor([0.0]))
    tensor([0.])
    """
    return input.tanh_()


#: ``torch.trapz`` is the older name of ``trapezoid`` (the same signature).
trapz = functions_statistics.trapezoid


def typename(obj: Any) -> str:
    """The type of ``obj`` as a string: a tensor's legacy type (``"difflab.FloatTensor"``).

    Parameters
    ----------
    obj : object
        Anything.

    Returns
    -------
    str
        ``obj.type()`` for a tensor, else the type's module and qualified name (a
        builtin's name alone).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.typename(dl.ones(2)), dl.typename(dl.tensor([1])), dl.typename(3)
    ('difflab.FloatTensor', 'difflab.LongTensor', 'int')
    """
    if isinstance(obj, Tensor):
        return obj.type()
    kind = type(obj)
    module = kind.__module__
    return kind.__qualname__ if module in ("builtins", None) else f"{module}.{kind.__qualname__}"


# ------------------------------------------------------------------ Tensor methods

def _where_method(self: Tensor, condition: Any, y: Any) -> Tensor:
    """``self`` where ``condition`` holds, else ``y``: ``difflab.where(condition, self, y)``.

    Parameters
    ----------
    condition : Tensor of bool
        Where to take ``self`` (broadcast).
    y : Tensor or number
        The values elsewhere.

    Returns
    -------
    Tensor
        The broadcast selection; gradients flow to ``self`` and ``y`` where each is taken.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([1.0, -2.0, 3.0])
    >>> x.where(x > 0, dl.tensor(0.0))
    tensor([1., 0., 3.])
    """
    return F.where(condition, self, y)


def _bernoulli_method(self: Tensor, p: Any = None, *, generator: Any = None) -> Tensor:
    """Draws of 0 or 1, with probability ``self`` (or ``p``) of a 1: ``difflab.bernoulli``.

    Parameters
    ----------
    p : float, optional
        One probability for every entry instead of ``self``'s values.
    generator : difflab.Generator, optional
        The source of randomness (default: the global one).

    Returns
    -------
    Tensor
        ``self``'s shape and dtype; no gradient flows through a draw.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.tensor([0.0, 1.0, 1.0]).bernoulli()
    tensor([0., 1., 1.])
    """
    return bernoulli(self, p, generator=generator)


def _unfold_method(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Every window of ``size`` elements along ``dimension``, ``step`` apart, as a new last dim.

    The result has ``self``'s shape with ``dimension`` replaced by the number of windows,
    ``(n - size) // step + 1``, and a last dimension of length ``size``:
    ``out[..., i, ..., j] = self[..., i·step + j, ...]``.  It gathers the windows'
    elements (``index_select``), so the gradient adds each window's back where it was
    read.  PyTorch returns a view (writing into it writes into ``self``); difflab
    returns a copy.

    Parameters
    ----------
    dimension : int
        The dimension the windows slide along.
    size : int
        The length of each window (at most the dimension's length).
    step : int
        The distance between the starts of neighbouring windows (positive).

    Returns
    -------
    Tensor
        The windows.

    Raises
    ------
    RuntimeError
        When ``size`` is negative or exceeds the dimension, or ``step`` is not positive.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.arange(1.0, 8.0).unfold(0, 3, 2)
    tensor([[1., 2., 3.],
            [3., 4., 5.],
            [5., 6., 7.]])
    """
    x = self.reshape(1) if self.ndim == 0 else self
    dim = dim_index(dimension, x.ndim, "unfold")
    length = x.shape[dim]
    if step <= 0:
        raise RuntimeError(f"unfold: step is {step} but must be > 0")
    if size < 0 or size > length:
        raise RuntimeError(f"unfold: maximum size for tensor at dimension {dim} is {length} "
                           f"but size is {size}")
    starts = np.arange(0, length - size + 1, step)
    index = tensor((starts[:, None] + np.arange(size)[None, :]).reshape(-1), device=self.device)
    windows = F.index_select(x, dim, index)
    shape = (*x.shape[:dim], len(starts), size, *x.shape[dim + 1:])
    out = windows.reshape(shape).movedim(dim + 1, -1)
    return out.reshape(size) if self.ndim == 0 else out


def _sum_to_size_method(self: Tensor, *size: Any) -> Tensor:
    """Sum ``self`` down to ``size``: the reverse of broadcasting ``size`` to ``self``'s shape.

    Dimensions ``self`` has in front of ``size``'s are summed away; a dimension of length 1
    in ``size`` sums ``self``'s along it (kept, of length 1).  This is how a broadcast
    operand's gradient is reduced: the VJP of ``expand``.

    Parameters
    ----------
    *size : int or sequence of int
        The shape to sum to; it must broadcast to ``self``'s shape.

    Returns
    -------
    Tensor
        The sums, of shape ``size``.

    Raises
    ------
    RuntimeError
        When ``size`` does not broadcast to ``self``'s shape.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.ones(2, 3).sum_to_size(1, 3)
    tensor([[2., 2., 2.]])
    """
    shape = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else size
    own = tuple(self.shape)
    lead = len(own) - len(shape)
    if lead < 0 or any(s not in (1, o) for s, o in zip(shape, own[lead:])):
        raise RuntimeError(f"sum_to_size: size {list(shape)} is not expandable to size "
                           f"{list(own)}")
    out = self.sum(dim=tuple(range(lead))) if lead else self
    dims = tuple(i for i, (s, o) in enumerate(zip(shape, own[lead:])) if s == 1 and o != 1)
    return out.sum(dim=dims, keepdim=True) if dims else out


#: Tensor methods that are difflab functions (``x.cov()`` is ``difflab.cov(x)``) or other
#: methods (``x.arccos()`` is ``x.acos()``), under PyTorch's names.
_TENSOR_METHODS = {
    "arcsin": Tensor.asin, "arccos": Tensor.acos, "arctan": Tensor.atan,
    "arcsinh": Tensor.asinh, "arccosh": Tensor.acosh, "arctanh": Tensor.atanh,
    "arctan2": Tensor.atan2, "fix": Tensor.trunc, "absolute": Tensor.abs,
    "negative": Tensor.neg, "multiply": Tensor.mul, "subtract": Tensor.sub,
    "greater": Tensor.gt, "greater_equal": Tensor.ge, "less": Tensor.lt,
    "less_equal": Tensor.le, "not_equal": Tensor.ne,
    "logical_and": functions_logic.logical_and, "logical_or": functions_logic.logical_or,
    "logical_xor": functions_logic.logical_xor, "logical_not": functions_logic.logical_not,
    "clamp_min": clamp_min, "clamp_max": clamp_max,
    "float_power": float_power, "cov": functions_statistics.cov,
    "corrcoef": functions_statistics.corrcoef, "diagflat": functions_picking.diagflat,
    "vdot": functions_picking.vdot, "where": _where_method, "bernoulli": _bernoulli_method,
    "unfold": _unfold_method, "sum_to_size": _sum_to_size_method,
    "is_nonzero": F.is_nonzero,
}
for _name, _function in _TENSOR_METHODS.items():
    setattr(Tensor, _name, _function)
