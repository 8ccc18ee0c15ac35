"""Shapes shared by the rules: undoing a broadcast, lifting k stacked tangents, a mean's 1/n.

Reverse mode sums an adjoint back down to its input's shape
(:func:`sum_to_shape`, the transpose of broadcasting); forward mode carries
k tangents on a leading axis, which must broadcast the way their primal did
(:func:`lift`).  Elementwise, structural and product rules all use them.
"""

from __future__ import annotations

from typing import Any


def dim_out_of_range(dim: int, ndim: int) -> str:
    """PyTorch's words for a dim a tensor does not have (NumPy's AxisError says "axis 5
    is out of bounds for array of dimension 2"): every such error's one wording."""
    if ndim == 0:
        return (f"Dimension specified as {dim} but the tensor has no dimensions (it is "
                f"0-d); reshape it to 1-D first, e.g. x.reshape(1)")
    return (f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
            f"but got {dim})")


def sum_to_shape(g: Any, shape: tuple) -> Any:
    """Undo broadcasting: sum ``g`` down to ``shape``.

    If ``a`` of shape (3, 1) was broadcast against (2, 3, 4), each element of
    ``a`` was used 2·4 times, so its adjoint is the sum over those copies.
    """
    g_shape = g.shape
    if g_shape == shape:
        return g
    lead = len(g_shape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g_shape[lead + i] != 1
    )
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g.reshape(shape)


def shape_of(x: Any) -> tuple:
    return getattr(x, "shape", ())


def lift(tangent: Any, ndim: int) -> Any:
    """Tangents (k, *s) as (k, 1, ..., 1, *s) with 1 + ndim axes, to broadcast like their
    primal did against an operand of ``ndim`` axes."""
    shape = tangent.shape
    missing = ndim - (len(shape) - 1)
    if missing <= 0:
        return tangent
    return tangent.reshape(shape[:1] + (1,) * missing + shape[1:])


def broadcast_shape(*shapes: tuple) -> tuple:
    """The shape that arrays of ``shapes`` broadcast to (NumPy's rule)."""
    if len(shapes) == 2 and (shapes[0] == shapes[1] or not shapes[1]):
        return shapes[0]  # (the common cases, without the loop)
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for shape in shapes:
        for i, n in enumerate(shape, ndim - len(shape)):
            if n != 1:
                out[i] = n
    return tuple(out)


def mean_scale(n: int) -> float:
    """The factor a mean multiplies its sum by: 1/n (NaN for no element).

    The one place the mean's 1/n is written: the ``mean`` primitive computes
    ``sum(x) * mean_scale(n)`` and its VJP scales by the same factor, and a fused
    kernel (:mod:`difflab.jit.kernels`) adds a mean's terms as it adds a sum's,
    then scales the total once by it (``sum(x) * (1/n)``, not ``sum(x) / n``: the
    two can differ in the last bit), so fused and unfused means agree to the
    rounding of the sum alone.

    Parameters
    ----------
    n : int
        The number of elements the mean takes in.

    Returns
    -------
    float

    Examples
    --------
    >>> from difflab.ops.shapes import mean_scale
    >>> mean_scale(4)
    0.25
    >>> mean_scale(0)
    nan
    """
    return 1.0 / n if n else float("nan")


def plain_values(value: Any) -> Any:
    """The plain array under a recorded tensor (``.array``) or nested dual numbers
    (``.primal``): what a piecewise-constant mask is computed from, and on which device."""
    while hasattr(value, "primal"):
        value = value.primal
    return getattr(value, "array", value)


def copied(value: Any) -> Any:
    """``value`` in new memory: ``copy()`` of an array, ``clone()`` of a tensor (recorded:
    reverse over forward) or of dual numbers."""
    return value.clone() if hasattr(value, "clone") else value.copy()
