"""Distinct values, counts, integer arithmetic, cross products and complex numbers:
PyTorch's names, composed of primitives.

* :func:`unique`, :func:`unique_consecutive` and :func:`mode` sort (or keep the order),
  mark where a run of equal values (or rows) starts with one comparison of neighbours,
  and read the runs with a boolean mask, a cumulative sum and ``nonzero``: as many
  results as the data has distinct values, so a traced graph warns (like ``nonzero``).
* :func:`bincount` is ``scatter_add`` of ones (or of the weights, whose gradient
  gathers back).
* :func:`bitwise_and`, :func:`gcd`, ... are primitives without a derivative
  (:mod:`difflab.ops.logic`), here with PyTorch's checks (integers or truth values).
* :func:`cross` is the three products of components; :func:`complex` and
  :func:`polar` build complex tensors from real ones (casts, products and sums).
"""

from __future__ import annotations

import builtins
from typing import Any

from difflab import functions as F  # noqa: N812  (the primitives' public faces)
from difflab.autograd.engine import apply
from difflab.creation import arange, ones, tensor, zeros
from difflab.dtypes import bool_, complex64, complex128, float32, float64, int64
from difflab.functions_joining import broadcast_tensors, movedim
from difflab.functions_selecting import nonzero
from difflab.functions_statistics import cummax
from difflab.ops.registry import PRIMITIVES
from difflab.tensor import Tensor
from difflab.tensor_arguments import (
    MinMax,
    dim_index,
    interpreted,
    tensor_of,
    tensor_or_interpreted,
    values_of,
)

__all__ = ["angle", "bincount", "bitwise_and", "bitwise_or", "bitwise_xor", "complex",
           "cross", "gcd", "lcm", "mode", "polar", "unique", "unique_consecutive"]


# ------------------------------------------------------------ integers and truth values


def _integer_pair(name: str, input: Any, other: Any, booleans: bool) -> tuple:  # noqa: A002
    a, b = tensor_of(input), tensor_of(other)
    allowed = "iub" if booleans else "iu"
    for t in (a, b):
        if t.dtype.kind not in allowed:
            kinds = "integer or bool" if booleans else "integer"
            raise TypeError(f"{name}: expected {kinds} tensors, got {t.dtype} (PyTorch has no "
                            f"{name} of floating values; round and convert with .long() first)")
    return a, b


def _integer_function(name: str, booleans: bool, example: str, result: str) -> Any:
    def function(input: Any, other: Any) -> Tensor:  # noqa: A002
        a, b = _integer_pair(name, input, other, booleans)
        return apply(PRIMITIVES[name], a, b)

    what = PRIMITIVES[name].description
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"""Elementwise ``{what}`` of two {'integer or bool' if booleans
        else 'integer'} tensors (broadcast; no gradient).

    Parameters
    ----------
    input, other : Tensor
        Tensors of integers{' or truth values' if booleans else ''} (or Python ints).

    Returns
    -------
    Tensor
        In the common dtype.

    Examples
    --------
    >>> import difflab as dl
    >>> {example}
    {result}
    """
    return function


_ab, _gl = "dl.tensor([12, 10]), 6", "dl.tensor([12, -10, 0]), dl.tensor([18, 4, 0])"
bitwise_and = _integer_function("bitwise_and", True, f"dl.bitwise_and({_ab}).tolist()",
                                "[4, 2]")
bitwise_or = _integer_function("bitwise_or", True, f"dl.bitwise_or({_ab}).tolist()",
                               "[14, 14]")
bitwise_xor = _integer_function("bitwise_xor", True, f"dl.bitwise_xor({_ab}).tolist()",
                                "[10, 12]")
gcd = _integer_function("gcd", False, f"dl.gcd({_gl}).tolist()", "[6, 2, 0]")
lcm = _integer_function("lcm", False, f"dl.lcm({_gl}).tolist()", "[36, 20, 0]")


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:  # noqa: A002
    """How often each value 0, 1, ..., max(input) occurs (or the sum of its weights).

    Parameters
    ----------
    input : Tensor
        1-D non-negative integers.
    weights : Tensor, optional
        One weight per entry of ``input``; the result sums them instead of counting.
    minlength : int
        The least length of the result.

    Returns
    -------
    Tensor
        ``max(max(input) + 1, minlength)`` entries: int64 counts, or sums in the
        weights' dtype (float32 stays float32, other dtypes become float64, as in
        PyTorch).  The weights' gradient is the output's, gathered at ``input``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.bincount(dl.tensor([0, 2, 2, 3])).tolist()
    [1, 0, 2, 1]
    >>> dl.bincount(dl.tensor([1, 1]), weights=dl.tensor([0.5, 2.0]), minlength=3).tolist()
    [0.0, 2.5, 0.0]
    """
    i = tensor_of(input)
    if i.ndim != 1 or i.dtype.kind not in "iu":
        raise RuntimeError(f"bincount: expected a 1-D tensor of integers, got a {i.ndim}-D "
                           f"{i.dtype} tensor")
    if minlength < 0:
        raise ValueError(f"bincount: minlength must be non-negative, got {minlength}")
    if i.numel() and int(i.min()) < 0:
        raise ValueError("bincount: input must be non-negative (it counts 0, 1, 2, ...)")
    length = builtins.max(int(i.max()) + 1 if i.numel() else 0, minlength)
    if weights is None:
        return F.scatter_add(zeros(length, dtype=int64, device=i.device), 0, i,
                             ones(i.shape[0], dtype=int64, device=i.device))
    w = tensor_of(weights)
    if tuple(w.shape) != tuple(i.shape):
        raise RuntimeError(f"bincount: weights must have input's shape {tuple(i.shape)}, got "
                           f"{tuple(w.shape)}")
    dtype = float32 if w.dtype == float32 else float64
    return F.scatter_add(zeros(length, dtype=dtype, device=i.device), 0, i, w.to(dtype))


# ------------------------------------------------------------ distinct values and runs


def _run_starts(rows: Tensor) -> Tensor:
    """True where a run of equal rows of ``rows`` (n, m) starts (nan equals nothing)."""
    if rows.shape[0] == 0:
        return zeros(0, dtype=bool_, device=rows.device)
    differs = (rows[1:] != rows[:-1]).any(1)
    return F.cat([ones(1, dtype=bool_, device=rows.device), differs])


def _lexicographic_order(rows: Tensor) -> Tensor:
    """The stable order that sorts the rows of ``rows`` (n, m) lexicographically: a stable
    sort by each column, the last first (one sort per column, not per element)."""
    order = arange(rows.shape[0], device=rows.device)
    for column in reversed(range(rows.shape[1])):
        order = order[rows[order, column].argsort(stable=True)]
    return order


def _runs(x: Tensor, dim: int | None, order: Tensor | None, return_inverse: bool,
          return_counts: bool, name: str) -> Any:
    """The runs of equal values (``dim=None``) or slices of ``x``, read after ``order``
    (``None``: as they are): the run values, and the inverse and counts if asked."""
    if dim is None:
        data = x.reshape(-1)
        rows = data.reshape(-1, 1)
    else:
        d = dim_index(dim, x.ndim, name)
        data = movedim(x, d, 0)
        rows = data.reshape(data.shape[0], -1)
    n = rows.shape[0]
    order = arange(n, device=x.device) if order is None else order
    # (where the runs start: read from the values, a Dual's without its tangents)
    starts = _run_starts(values_of(rows, name)[order])
    values = data[order][starts]
    if dim is not None:
        values = movedim(values, 0, d)
    results = [values]
    if return_inverse:  # each element's run, at the element's place
        run = starts.to(int64).cumsum(0) - 1
        inverse = F.scatter(zeros(n, dtype=int64, device=x.device), 0, order, run)
        results.append(inverse.reshape(tuple(x.shape)) if dim is None else inverse)
    if return_counts:
        first = nonzero(starts).reshape(-1)
        ends = F.cat([first[1:], tensor([n], dtype=int64, device=x.device)])
        results.append(ends - first)
    return results[0] if len(results) == 1 else tuple(results)


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None) -> Any:
    """The distinct values of ``input`` (or its distinct slices along ``dim``), sorted.

    Parameters
    ----------
    input : Tensor
        Any tensor.
    sorted : bool
        Accepted for PyTorch's signature; the result is sorted either way (as PyTorch's
        on a CPU).
    return_inverse : bool
        Also return, for each element (each slice), the position of its value in the
        result: ``result[inverse]`` is ``input``.
    return_counts : bool
        Also return how often each distinct value occurs.
    dim : int, optional
        Compare whole slices along ``dim`` (sorted lexicographically) instead of
        elements of the flattened input.

    Returns
    -------
    Tensor or tuple
        The values, then the inverse and the counts when asked.  ``nan`` equals no
        value, as in PyTorch (NumPy's ``unique`` joins them unless ``equal_nan=False``).
        PyTorch has no derivative of ``unique`` (it raises); here each distinct value's
        gradient goes to its first occurrence in the sorted order.

    Examples
    --------
    >>> import difflab as dl
    >>> values, inverse, counts = dl.unique(dl.tensor([3, 1, 3, 2]), return_inverse=True,
    ...                                     return_counts=True)
    >>> values.tolist(), inverse.tolist(), counts.tolist()
    ([1, 2, 3], [2, 0, 2, 1], [1, 1, 2])
    """
    x = tensor_of(input)
    if dim is None:
        order = x.reshape(-1).argsort(stable=True)
    else:
        d = dim_index(dim, x.ndim, "unique")
        data = movedim(x, d, 0)
        order = _lexicographic_order(data.reshape(data.shape[0], -1))
    return _runs(x, dim, order, return_inverse, return_counts, "unique")


def unique_consecutive(input: Tensor, return_inverse: bool = False,  # noqa: A002
                       return_counts: bool = False, dim: int | None = None) -> Any:
    """One value of each run of equal consecutive values (or slices along ``dim``).

    Parameters
    ----------
    input : Tensor
        Any tensor.
    return_inverse : bool
        Also return each element's run.
    return_counts : bool
        Also return each run's length.
    dim : int, optional
        Compare whole slices along ``dim`` instead of elements of the flattened input.

    Returns
    -------
    Tensor or tuple
        The values, then the inverse and the counts when asked.

    Examples
    --------
    >>> import difflab as dl
    >>> values, counts = dl.unique_consecutive(dl.tensor([1, 1, 2, 2, 1]), return_counts=True)
    >>> values.tolist(), counts.tolist()
    ([1, 2, 1], [2, 2, 1])
    """
    return _runs(tensor_or_interpreted(input), dim, None, return_inverse, return_counts,
                 "unique_consecutive")


def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> MinMax:  # noqa: A002
    """(values, indices): the most frequent value along ``dim`` and where it occurs.

    Ties between values go to the smallest; the index is that of the value's last
    occurrence (as PyTorch's on a CPU).

    Parameters
    ----------
    input : Tensor
        Any real tensor.
    dim : int
        The dimension to reduce.
    keepdim : bool
        Keep the reduced dimension with size 1.

    Returns
    -------
    MinMax
        ``values`` (with the gradient of picking them: it goes to ``indices``) and
        ``indices`` (int64).

    Examples
    --------
    >>> import difflab as dl
    >>> m = dl.mode(dl.tensor([[2.0, 1.0, 2.0, 1.0], [5.0, 3.0, 3.0, 4.0]]))
    >>> m.values.tolist(), m.indices.tolist()
    ([1.0, 3.0], [3, 2])
    """
    x = tensor_or_interpreted(input)  # (a Dual: its values picked with their tangents)
    d = dim_index(dim, x.ndim, "mode")
    data = movedim(x, d, -1) if x.ndim else x.reshape(1)
    n = data.shape[-1]
    if n == 0:
        raise IndexError(f"mode: dimension {dim} is empty; the mode of no values is undefined")
    ordered, order = F.sort(values_of(data, "mode").detach(), dim=-1, stable=True)
    starts = F.cat([ones(ordered.shape[:-1] + (1,), dtype=bool_, device=x.device),
                    ordered[..., 1:] != ordered[..., :-1]], -1)
    position = arange(n, device=x.device).expand(*ordered.shape)
    start = cummax(F.where(starts, position, position * 0), -1).values
    # the first place a run reaches the longest length ends the smallest most frequent value
    last = (position - start).argmax(-1, keepdim=True)
    indices = F.gather(order, -1, last)
    values = F.gather(data, -1, indices)
    if not keepdim or x.ndim == 0:
        return MinMax((values.squeeze(-1), indices.squeeze(-1)))
    return MinMax((movedim(values, -1, d), movedim(indices, -1, d)))


# ------------------------------------------------------------ vectors and complex numbers


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:  # noqa: A002
    """The cross product of 3-vectors along ``dim`` (broadcast).

    Parameters
    ----------
    input, other : Tensor
        Size 3 along ``dim`` (after broadcasting).
    dim : int, optional
        The dimension of the vectors; by default the first of size 3 (``torch.cross``'s
        old default; ``torch.linalg.cross`` uses -1).

    Returns
    -------
    Tensor
        ``(a₁b₂ - a₂b₁, a₂b₀ - a₀b₂, a₀b₁ - a₁b₀)`` along ``dim``, with the gradients of
        those products.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.cross(dl.tensor([1.0, 0.0, 0.0]), dl.tensor([0.0, 1.0, 0.0])).tolist()
    [0.0, 0.0, 1.0]
    """
    a, b = broadcast_tensors(input, other)
    if dim is None:
        dim = next((i for i, n in enumerate(a.shape) if n == 3), None)
        if dim is None:
            raise RuntimeError(f"cross: no dimension of size 3 in shape {tuple(a.shape)}")
    d = dim_index(dim, a.ndim, "cross")
    if a.shape[d] != 3:
        raise RuntimeError(f"cross: dimension {dim} must have size 3, got {a.shape[d]}")
    a0, a1, a2 = a.unbind(d)
    b0, b1, b2 = b.unbind(d)
    return F.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], d)


def angle(input: Tensor) -> Tensor:  # noqa: A002
    """The angle of each element in the complex plane, in radians.

    Parameters
    ----------
    input : Tensor
        Real or complex.

    Returns
    -------
    Tensor
        For a real input π where it is negative, 0 elsewhere (-0.0 included) and nan
        at nan, as PyTorch; for a complex one ``atan2(imag, real)``.  Its gradient
        reaches a complex input as ``ȳ·i·z/|z|²`` (0 at 0), a real one as 0, as in PyTorch.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.angle(dl.tensor([-2.0, 3.0], dtype=dl.float64)).tolist()
    [3.141592653589793, 0.0]
    >>> z = dl.tensor([1 + 1j], requires_grad=True)
    >>> dl.angle(z).sum().backward()
    >>> z.grad
    tensor([-0.5+0.5j], dtype=difflab.complex64)
    """
    x = tensor_or_interpreted(input)  # (a Dual: its handler gives the constant 0 or pi)
    if x.dtype.kind not in "fc":
        x = x.to(float32)
    return apply(PRIMITIVES["angle"], x)


def _complex_dtype(real: Tensor, imag: Tensor, name: str) -> Any:
    if interpreted(real) or interpreted(imag):
        raise NotImplementedError(
            f"{name}: forward mode (dual numbers) and the symbolic method do not follow "
            f"complex values; differentiate through it with reverse mode "
            f"(method='reverse', jacrev, backward())")
    if real.dtype != imag.dtype or real.dtype not in (float32, float64):
        raise TypeError(f"{name}: expected two float32 or two float64 tensors, got "
                        f"{real.dtype} and {imag.dtype}")
    return complex64 if real.dtype == float32 else complex128


def complex(real: Tensor, imag: Tensor) -> Tensor:  # noqa: A001
    """The complex tensor ``real + i·imag`` (broadcast).

    Parameters
    ----------
    real, imag : Tensor
        Both float32 (giving complex64) or both float64 (complex128).

    Returns
    -------
    Tensor
        Built with a cast, a product by i and a sum, so the gradient of a real loss L
        reaches ``real`` as ∂L/∂(Re z) and ``imag`` as ∂L/∂(Im z): the real and imaginary
        parts of ``z.grad``, as in PyTorch.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.complex(dl.tensor([1.0]), dl.tensor([2.0])).tolist()
    [(1+2j)]
    >>> x, y = dl.tensor([3.0], requires_grad=True), dl.tensor([4.0], requires_grad=True)
    >>> dl.complex(x, y).abs().sum().backward()
    >>> x.grad, y.grad
    (tensor([0.6]), tensor([0.8]))
    """
    re, im = tensor_or_interpreted(real), tensor_or_interpreted(imag)
    dtype = _complex_dtype(re, im, "complex")
    return re.to(dtype) + im.to(dtype) * 1j


def polar(abs: Tensor, angle: Tensor) -> Tensor:  # noqa: A002
    """The complex tensor ``abs · (cos(angle) + i·sin(angle))``.

    Parameters
    ----------
    abs : Tensor
        The moduli.
    angle : Tensor
        The angles in radians, of ``abs``'s dtype.

    Returns
    -------
    Tensor
        complex64 for float32 inputs, complex128 for float64, with the gradients of
        the products and sums it is built from (as :func:`complex`).

    Examples
    --------
    >>> import difflab as dl
    >>> dl.polar(dl.tensor([2.0]), dl.tensor([0.0])).tolist()
    [(2+0j)]
    >>> theta = dl.tensor([0.0], requires_grad=True)
    >>> dl.polar(dl.tensor([2.0]), theta).imag.sum().backward()   # d(2 sin θ)/dθ
    >>> theta.grad
    tensor([2.])
    """
    r, theta = tensor_or_interpreted(abs), tensor_or_interpreted(angle)
    _complex_dtype(r, theta, "polar")
    return complex(r * theta.cos(), r * theta.sin())


# Tensor methods: the functions themselves (attached here: the tensor module does not
# import this one).
_TENSOR_METHODS = {
    "bitwise_and": bitwise_and, "bitwise_or": bitwise_or, "bitwise_xor": bitwise_xor,
    "gcd": gcd, "lcm": lcm, "bincount": bincount, "unique": unique,
    "unique_consecutive": unique_consecutive, "mode": mode, "cross": cross, "angle": angle,
}
for _name, _function in _TENSOR_METHODS.items():
    setattr(Tensor, _name, _function)
