"""Shapes shared by the rules: undoing a broadcast, lifting k stacked tangents, a mean's 1/n.

Reverse mode sums an adjoint back down to its input's shape
(:func:`sum_to_shape`, the transpose of broadcasting); forward mode carries
k tangents on a leading axis, which must broadcast the way their primal did
(:func:`lift`).  Elementwise, structural and product rules all use them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def dim_out_of_range(dim: int, ndim: int) -> str:
    """PyTorch's words for a dim a tensor does not have (NumPy's AxisError says "axis 5
    is out of bounds for array of dimension 2"): every such error's one wording."""
    if ndim == 0:
        return (f"Dimension specified as {dim} but the tensor has no dimensions (it is "
                f"0-d); reshape it to 1-D first, e.g. x.reshape(1)")
    return (f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
            f"but got {dim})")


def dim_index(dim: Any, ndim: int, name: str, *, zero_d_has_dim: bool = True) -> int:
    """``dim`` as a non-negative axis of an ``ndim``-axis tensor: the one check of a dim.

    Negative dims count from the end, and a 0-d tensor takes dim 0 or -1, as in
    PyTorch.  Every function and method that reads one dim calls this, so each
    gives the same clear error instead of NumPy's or Python's
    ``tuple index out of range``.

    Parameters
    ----------
    dim : int
        The dimension asked for (a Python or NumPy integer).
    ndim : int
        How many dimensions the tensor has.
    name : str
        The function or method, named at the start of the error.
    zero_d_has_dim : bool, default True
        Whether a 0-d tensor takes dim 0 and -1 (a reduction does); ``False`` for
        what reads the length or the pieces of a dim (``size``, ``stride``,
        ``unbind``, ``split``), which a 0-d tensor does not have.

    Returns
    -------
    int
        ``dim`` in ``[0, max(ndim, 1))``.

    Raises
    ------
    TypeError
        If ``dim`` is not an integer (a bool is not one).
    IndexError
        If ``dim`` is outside ``[-max(ndim, 1), max(ndim, 1) - 1]`` (PyTorch's
        "Dimension out of range"), or the tensor is 0-d and ``zero_d_has_dim`` is False.

    Examples
    --------
    >>> from difflab.tensor_arguments import dim_index
    >>> dim_index(-1, 3, "sum"), dim_index(0, 0, "sum")
    (2, 0)
    >>> dim_index(5, 2, "size")
    Traceback (most recent call last):
    ...
    IndexError: size: Dimension out of range (expected to be in range of [-2, 1], but got 5)
    """
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise TypeError(f"{name}: " * bool(name) + f"dim must be an int, got "
                        f"{type(dim).__name__} {dim!r}")
    n = max(ndim, 1) if zero_d_has_dim else ndim
    if not -n <= dim < n:
        raise IndexError(f"{name}: " * bool(name) + dim_out_of_range(dim, n))
    return int(dim) % n


def as_axes(dim: Any, name: str = "reduction") -> Any:
    """``dim`` as primitives take axes: None, an int, or a tuple of ints (a TypeError
    naming ``name`` for anything else, as ``sum(dim=1.5)``; no name: the engine names
    the primitive whose forward asks)."""
    if dim is None or isinstance(dim, int) and not isinstance(dim, bool):
        return dim
    if isinstance(dim, np.integer):
        return int(dim)
    if isinstance(dim, (tuple, list)) and all(
            isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in dim):
        return tuple(int(d) for d in dim)
    raise TypeError(f"{name}: " * bool(name) + "dim must be an int or a tuple of ints, got "
                    f"{type(dim).__name__} {dim!r:.40}")


def reduction_dims(dim: Any) -> Any:
    """A reduction's ``dim`` as given to ``sum``, ``mean``, ``amax``, ...: PyTorch's empty
    ``dim=[]`` or ``dim=()`` means every dimension (None), as no ``dim`` does; a list
    becomes a tuple.  Only ``dim`` means this: NumPy's ``axis=()`` reduces over no axis
    (the derivative rules, which spell it ``axis=``, rely on that), so the faces apply
    this to ``dim`` alone."""
    if isinstance(dim, (list, tuple)):
        return tuple(dim) or None
    return dim


def dim_indices(dims: Any, ndim: int, name: str) -> tuple:
    """``dims`` (an int, or a tuple or list of ints) as non-negative axes: each checked by
    :func:`dim_index`, none repeated.

    The check of several dims (a reduction's, ``flip``'s, ``squeeze``'s): NumPy said
    "duplicate value in 'axis'" naming no dim, and ``flip(x, (0, 0))`` flipped twice,
    silently undoing itself; PyTorch refuses a repeated dim, and so does this.

    Parameters
    ----------
    dims : int or sequence of int
        The dims asked for.
    ndim : int
        How many dimensions the tensor has (a 0-d tensor takes 0 and -1).
    name : str
        The function, named at the start of the error ("": the caller's engine names it).

    Returns
    -------
    tuple of int
        The dims in ``[0, max(ndim, 1))``, in the order given.

    Raises
    ------
    TypeError
        If ``dims`` is not an int or a sequence of ints (None included).
    IndexError
        If a dim is out of range.
    RuntimeError
        If a dim appears twice (-1 and ndim - 1 are the same dim).

    Examples
    --------
    >>> from difflab.ops.shapes import dim_indices
    >>> dim_indices((0, -1), 3, "flip"), dim_indices(0, 0, "flip")
    ((0, 2), (0,))
    >>> dim_indices((1, -1), 2, "flip")
    Traceback (most recent call last):
    ...
    RuntimeError: flip: dim 1 appears multiple times in the list of dims
    """
    axes = as_axes(dims, name)
    if axes is None:
        raise TypeError(f"{name}: " * bool(name) + "dims must be an int or a tuple of ints, "
                        "got None")
    normalized = tuple(dim_index(d, ndim, name) for d in ((axes,) if isinstance(axes, int)
                                                          else axes))
    for d in normalized:
        if normalized.count(d) > 1:
            raise RuntimeError(f"{name}: " * bool(name) + f"dim {d} appears multiple times "
                               f"in the list of dims")
    return normalized


def _not_an_int(value: Any) -> bool:
    """Whether ``value`` must be refused where an int goes: a float, a bool, None, a
    string, a tuple or list, or an array or tensor of another kind than integers
    (``int()`` truncated a float without a word).  Integers of any kind, and 0-d integer
    tensors, pass."""
    if isinstance(value, (int, np.integer)):
        return isinstance(value, bool)
    return value is None or isinstance(value, (float, np.floating, np.bool_, str, tuple, list)) or \
        (hasattr(value, "dtype") and getattr(value.dtype, "kind", "i") not in "iu")


def integer(value: Any, name: str, what: str) -> int:
    """``value`` as an int, for an argument that counts (``k``, ``start``, ``diagonal``,
    a kernel size): the one check of such an argument.

    Parameters
    ----------
    value : int
        The argument (a Python or NumPy integer, or a 0-d integer tensor).
    name : str
        The function, named at the start of the error.
    what : str
        The argument's name, for the error.

    Returns
    -------
    int

    Raises
    ------
    TypeError
        If ``value`` is a float, a bool, None or anything else that is no integer.

    Examples
    --------
    >>> from difflab.ops.shapes import integer
    >>> integer(3, "topk", "k")
    3
    >>> integer(2.0, "topk", "k")
    Traceback (most recent call last):
    ...
    TypeError: topk: k must be an int, got float 2.0
    """
    if _not_an_int(value):
        raise TypeError(f"{name}: {what} must be an int, got {type(value).__name__} "
                        f"{value!r:.40}")
    return int(value)


def shape_args(shape: Sequence[Any], name: str = "shape", what: str = "sizes") -> tuple:
    """Accept f(2, 3) and f((2, 3)) alike: the sizes as ints.

    A float, a bool, None or a string is refused (a TypeError naming ``name``):
    ``int()`` truncated ``ones(2.5)`` to 2 elements and ``x.repeat(2.5, 1)`` to 2 copies
    without a word, and said "int() argument must be ... not 'NoneType'" for None.
    Integers of any kind pass, as do 0-d integer tensors.
    """
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    sizes = []
    for n in shape:
        if _not_an_int(n):
            raise TypeError(f"{name}: {what} must be ints, got {type(n).__name__} {n!r:.40} "
                            f"in {tuple(shape)!r:.80}")
        sizes.append(int(n))
    return tuple(sizes)


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
