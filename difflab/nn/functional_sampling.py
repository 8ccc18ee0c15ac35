r"""Resampling: ``interpolate`` (resizing) and the spatial transformer's ``affine_grid`` and
``grid_sample``.

Each is a composite of operations that already have derivative rules.  Which input rows
(pixels) an output reads is an index array: found from the shapes when resizing, from the
grid's values (``known_values``) when sampling.  The weights that mix them are constants
(resizing), or operations on the grid (sampling), which carry the grid's derivative.  So
every method (forward, reverse, numeric; symbolic wherever the indices do not depend on
values), ``vmap`` and the tracer differentiate them; ONNX export refuses the gathers
(``index``), naming them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from difflab.nn.functional_core import (
    _array_module,
    _check_input,
    _constant_dtype,
    _floating,
    _window,
)
from difflab.tensor import Tensor
from difflab.tensor_arguments import known_values, refuse_symbols

__all__ = ["affine_grid", "grid_sample", "interpolate"]


def _where(condition: Any, a: Any, b: Any) -> Tensor:
    from difflab.functions import where

    return where(condition, a, b)


# ------------------------------------------------------------------------------ resizing

_LINEAR_MODES = {1: "linear", 2: "bilinear", 3: "trilinear"}
_CUBIC_A = -0.75  # PyTorch's bicubic (Keys' kernel with a = -0.75, as OpenCV)


def _opmath(x: Any) -> np.dtype:
    """The dtype PyTorch computes source positions and weights in for ``x``: float64 for
    float64 (and sympy's expressions), float32 for the rest (its ``opmath_type``)."""
    return np.dtype(np.float64) if _constant_dtype(x) == np.float64 else np.dtype(np.float32)


def _step(size_in: int, size_out: int, scale: float | None, align_corners: bool | None,
          dtype: np.dtype) -> Any:
    """PyTorch's ``area_pixel_compute_scale``: the input distance between the source positions
    of neighbouring outputs (1/scale_factor when it is given, else size_in/size_out)."""
    if align_corners:
        return dtype.type(size_in - 1) / dtype.type(size_out - 1) if size_out > 1 else \
            dtype.type(0.0)
    if scale is not None:
        return dtype.type(1.0 / scale)
    return dtype.type(size_in) / dtype.type(size_out)


def _source_rows(size_in: int, size_out: int, scale: float | None, mode: str,
                 align_corners: bool | None) -> tuple:
    """(i0, i1, w): output row o mixes input rows i0 and i1 as (1 - w)·x[i0] + w·x[i1]."""
    o = np.arange(size_out, dtype=np.float64)
    step = 1.0 / scale if scale is not None else size_in / size_out
    if mode == "nearest":
        i0 = np.minimum(np.floor(o * step).astype(np.int64), size_in - 1)
        return i0, i0, None
    if align_corners:
        src = o * ((size_in - 1) / (size_out - 1)) if size_out > 1 else o * 0.0
    else:
        src = np.maximum((o + 0.5) * step - 0.5, 0.0)
    i0 = np.minimum(np.floor(src).astype(np.int64), size_in - 1)
    i1 = np.minimum(i0 + 1, size_in - 1)
    return i0, i1, src - i0


def _nearest_exact_rows(size_in: int, size_out: int, scale: float | None,
                        dtype: np.dtype) -> np.ndarray:
    """Output row o copies input row ⌊(o + ½)·step⌋ (at most size_in - 1): the pixel whose
    centre is nearest, where 'nearest' takes ⌊o·step⌋ (PyTorch's two modes)."""
    step = np.float64(_step(size_in, size_out, scale, False, dtype))
    src = ((np.arange(size_out) + 0.5) * step).astype(dtype)  # (rounded as PyTorch's)
    return np.minimum(np.floor(src).astype(np.int64), size_in - 1)


def _cubic_weights(t: Any, a: Any) -> list:
    """Keys' cubic convolution weights of the four taps around a fraction ``t`` in [0, 1]:
    W(t + 1), W(t), W(1 - t), W(2 - t) with W(s) = (a + 2)s³ - (a + 3)s² + 1 for s ≤ 1 and
    a s³ - 5a s² + 8a s - 4a for 1 < s < 2 (they sum to 1).  ``t`` is an array or a tensor."""
    def near(s: Any) -> Any:
        return ((a + 2) * s - (a + 3)) * s * s + 1

    def far(s: Any) -> Any:
        return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _cubic_taps(size_in: int, size_out: int, scale: float | None, align_corners: bool | None,
                dtype: np.dtype) -> tuple:
    """(taps, weights, None): output o mixes input rows ⌊s⌋ - 1 ... ⌊s⌋ + 2 around its source
    position s, each clamped into [0, size_in - 1] (PyTorch repeats the edge row, it does
    not pad), with Keys' weights of s - ⌊s⌋."""
    step = _step(size_in, size_out, scale, align_corners, dtype)
    o = np.arange(size_out).astype(dtype)
    src = step * o if align_corners else step * (o + dtype.type(0.5)) - dtype.type(0.5)
    i0 = np.minimum(np.floor(src).astype(np.int64), size_in - 1)
    t = np.clip(src - i0.astype(dtype), 0, 1)
    taps = np.clip(i0 + np.arange(-1, 3)[:, None], 0, size_in - 1)
    return taps, np.stack(_cubic_weights(t, dtype.type(_CUBIC_A))), None


def _antialias_filter(mode: str, s: np.ndarray) -> np.ndarray:
    """The filter an antialiased resize averages under: the triangle max(0, 1 - |s|)
    (bilinear) or Keys' cubic kernel with a = -0.5 (bicubic, as PIL and PyTorch)."""
    s = np.abs(s)
    if mode == "bilinear":
        return np.where(s < 1.0, 1.0 - s, 0.0)
    near, far = _cubic_weights(s, -0.5)[1], _cubic_weights(s - 1.0, -0.5)[0]
    return np.where(s < 1.0, near, np.where(s < 2.0, far, 0.0))


def _antialias_taps(size_in: int, size_out: int, scale: float | None,
                    align_corners: bool | None, mode: str, dtype: np.dtype) -> tuple:
    """(taps, weights, valid): PyTorch's antialiased resize (PIL's).  Downsampling by a step
    r > 1 stretches the filter r times (its support covers every input under the output),
    output o centred at c = r(o + ½); its weights are normalised to sum 1.  A tap past an
    output's window is not ``valid``: it adds nothing (not even 0 · inf)."""
    step = float(_step(size_in, size_out, scale, align_corners, np.dtype(np.float64)))
    half = (2 if mode == "bilinear" else 4) * 0.5
    support, stretch = (half * step, 1.0 / step) if step >= 1.0 else (half, 1.0)
    width = int(math.ceil(support)) * 2 + 1
    centre = step * (np.arange(size_out) + 0.5)
    first = np.maximum(np.trunc(centre - support + 0.5), 0).astype(np.int64)
    count = np.minimum(np.trunc(centre + support + 0.5).astype(np.int64), size_in) - first
    taps = first + np.arange(width)[:, None]
    valid = np.arange(width)[:, None] < np.clip(count, 0, width)
    weights = np.where(valid, _antialias_filter(mode, (taps - centre + 0.5) * stretch), 0.0)
    total = weights.sum(0)
    weights = np.where(total != 0.0, weights / np.where(total != 0.0, total, 1.0), weights)
    return np.minimum(taps, size_in - 1), weights.astype(dtype), valid


def _mix_taps(x: Tensor, dim: int, taps: np.ndarray, weights: np.ndarray,
              valid: np.ndarray | None) -> Tensor:
    """Σ_k weights[k]·x[taps[k]] along ``dim`` (an ``index_select`` and a product per tap)."""
    from difflab.functions import index_select

    xp = _array_module(x)
    shape = (-1,) + (1,) * (x.ndim - dim - 1)
    out = None
    for k in range(len(taps)):
        term = index_select(x, dim, xp.asarray(taps[k]))
        if valid is not None and not valid[k].all():
            term = _where(Tensor._wrap(xp.asarray(valid[k].reshape(shape))), term, 0.0)
        weight = Tensor._wrap(xp.asarray(weights[k].astype(_constant_dtype(x)).reshape(shape)))
        out = term * weight if out is None else out + term * weight
    return out


def _resize_along(x: Tensor, dim: int, size_out: int, scale: float | None, mode: str,
                  align_corners: bool | None, antialias: bool) -> Tensor:
    """Resize dimension ``dim`` of x to ``size_out`` (one separable pass)."""
    from difflab.functions import index_select

    size_in, xp = x.shape[dim], _array_module(x)
    if antialias:
        if size_in == size_out:  # (PyTorch's separable pass skips it: no 0 · inf)
            return x
        return _mix_taps(x, dim, *_antialias_taps(size_in, size_out, scale, align_corners,
                                                  mode, _opmath(x)))
    if mode == "bicubic":
        return _mix_taps(x, dim, *_cubic_taps(size_in, size_out, scale, align_corners,
                                              _opmath(x)))
    if mode == "nearest-exact":
        rows = _nearest_exact_rows(size_in, size_out, scale, _opmath(x))
        return index_select(x, dim, xp.asarray(rows))
    i0, i1, w = _source_rows(size_in, size_out, scale, mode, align_corners)
    lower = index_select(x, dim, xp.asarray(i0))
    if w is None:
        return lower
    weights = Tensor._wrap(xp.asarray(w.astype(_constant_dtype(x))).reshape(
        (-1,) + (1,) * (x.ndim - dim - 1)))
    return lower + (index_select(x, dim, xp.asarray(i1)) - lower) * weights


def _check_mode(x: Tensor, mode: str, align_corners: bool | None, antialias: bool) -> None:
    """PyTorch's checks of the mode against the input's dimensions and the options."""
    spatial = x.ndim - 2
    if spatial not in (1, 2, 3):
        raise ValueError(f"interpolate expects a 3-D, 4-D or 5-D input (N, C, ...), got shape "
                         f"{tuple(x.shape)}")
    needs = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}
    if mode not in ("nearest", "nearest-exact", "area", *needs):
        raise NotImplementedError(
            f"interpolate: mode {mode!r} is not supported in difflab (supported: 'nearest', "
            f"'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear', 'area')")
    if mode in needs and needs[mode] != x.ndim:
        raise NotImplementedError(
            f"interpolate: got a {x.ndim}-D input, but mode {mode!r} needs a {needs[mode]}-D "
            f"input (N, C, ...); for a {x.ndim}-D input use 'nearest', 'nearest-exact', "
            f"'area' or {_LINEAR_MODES[spatial]!r}")
    if mode in ("nearest", "nearest-exact", "area") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if antialias and not (mode in ("bilinear", "bicubic") and x.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear and bicubic modes and "
                         f"requires a 4-D tensor as input (got mode {mode!r} and a {x.ndim}-D "
                         "input)")


def _output_sizes(x: Tensor, size: Any, scale_factor: Any,
                  recompute_scale_factor: bool | None) -> tuple:
    """(sizes, scales): the output's spatial sizes and the factors the source positions use
    (None: computed from the sizes)."""
    spatial = x.ndim - 2
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: give exactly one of size and scale_factor")
    sizes_in = x.shape[2:]
    if size is not None:
        sizes = _window("interpolate", size, "size", spatial)  # (2.5 was truncated to 2)
        scales: tuple = (None,) * spatial
    else:
        scales = tuple(scale_factor) if isinstance(scale_factor, (tuple, list)) else \
            (scale_factor,) * spatial
        if len(scales) != spatial:
            raise ValueError(f"interpolate: expected {spatial} scale factors, got {scales}")
        for scale in scales:  # (0 divided by zero; nan could not become a size)
            if isinstance(scale, bool) or not isinstance(scale, (int, float, np.number)) or \
                    not 0 < scale < math.inf:
                raise ValueError(f"interpolate: scale_factor must be a positive finite "
                                 f"number (or one per spatial dimension), got {scale_factor!r}")
        sizes = tuple(int(math.floor(n * s)) for n, s in zip(sizes_in, scales))
        if recompute_scale_factor:
            scales = (None,) * spatial
    if 0 in sizes_in or 0 in sizes:
        raise ValueError(f"interpolate: input and output sizes should be greater than 0, but "
                         f"got input {tuple(sizes_in)} and output {sizes}" +
                         " (scale_factor too small)" * (scale_factor is not None))
    return tuple(int(n) for n in sizes), scales


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None,  # noqa: A002
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    r"""Resize the spatial dimensions of (N, C, L), (N, C, H, W) or (N, C, D, H, W).

    A separable resize, as PyTorch computes it: along each spatial dimension, output
    :math:`o` reads input rows at a source position :math:`s_o` (one ``index_select`` per
    row it reads) and mixes them with constant weights, so the result is linear in the
    input and every method differentiates it.  With :math:`r` = ``1/scale_factor`` when
    it is given (and ``recompute_scale_factor`` is not set), else
    :math:`n_{in}/n_{out}`:

    * ``'nearest'`` copies row :math:`\lfloor o r \rfloor`; ``'nearest-exact'`` row
      :math:`\lfloor (o + \tfrac12) r \rfloor` (the pixel whose centre is nearest, as
      PIL and OpenCV resize), both at most :math:`n_{in} - 1`.
    * ``'linear'`` (3-D), ``'bilinear'`` (4-D), ``'trilinear'`` (5-D) mix the two rows
      around :math:`s_o = (o + \tfrac12) r - \tfrac12` (at least 0), or
      :math:`s_o = o (n_{in} - 1)/(n_{out} - 1)` with ``align_corners`` (the corner
      pixels' centres map onto each other).
    * ``'bicubic'`` (4-D) mixes the four rows :math:`\lfloor s_o \rfloor - 1, \dots,
      \lfloor s_o \rfloor + 2` (not clamped to 0 first), each index clamped into
      :math:`[0, n_{in} - 1]` (the edge row repeats), with Keys' cubic convolution
      weights :math:`W(t + 1), W(t), W(1 - t), W(2 - t)` of :math:`t = s_o - \lfloor
      s_o \rfloor`, where :math:`W(s) = (a + 2)|s|^3 - (a + 3)|s|^2 + 1` for
      :math:`|s| \le 1` and :math:`a|s|^3 - 5a|s|^2 + 8a|s| - 4a` for :math:`1 < |s| < 2`,
      :math:`a = -0.75`.  It overshoots: a result can leave the input's range.
    * ``'area'`` averages over the cells of :func:`adaptive_avg_pool2d` (1-D, 3-D alike):
      PyTorch defines it so.
    * ``antialias=True`` (bilinear, bicubic; 4-D) is PyTorch's (and PIL's) resize: where
      a dimension shrinks (:math:`r > 1`), output :math:`o` averages every input row
      :math:`j` under a filter stretched :math:`r` times around :math:`c = r (o +
      \tfrac12)`, with weights :math:`f((j + \tfrac12 - c)/r)` normalised to sum 1
      (:math:`f` the triangle :math:`\max(0, 1 - |s|)`, or :math:`W` with :math:`a =
      -0.5`); where it grows, the filter is not stretched.  A dimension whose size does
      not change is left as it is.

    The derivative of each mode is the transpose of its weights: a row's gradient is the
    sum of the output gradients it was mixed into, times their weights.

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, L)`, :math:`(N, C, H, W)` or :math:`(N, C, D, H, W)`.
    size : int or tuple of ints, optional
        The output's spatial size.
    scale_factor : float or tuple of floats, optional
        Or a factor per spatial dimension (give exactly one of the two); the output's size
        is :math:`\lfloor n_{in} \cdot \text{scale\_factor} \rfloor`.
    mode : {'nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear', 'area'}
        How rows are read and mixed (default 'nearest'); 'linear', 'bilinear' and
        'trilinear' need a 3-, 4- and 5-D input, 'bicubic' a 4-D one.
    align_corners : bool, optional
        Linear and bicubic modes: map the corner pixels' centres onto each other (default
        False); not allowed with 'nearest', 'nearest-exact' and 'area'.
    recompute_scale_factor : bool, optional
        Compute the source positions from the output size instead of the factor.
    antialias : bool, default False
        Average under a stretched filter when shrinking ('bilinear', 'bicubic', 4-D only).

    Returns
    -------
    Tensor
        :math:`(N, C, *\text{size})`.

    Raises
    ------
    ValueError
        For an input that is not 3-, 4- or 5-D, both or neither of size and
        scale_factor, a wrong number of sizes, a size below 1 (an empty input or output,
        as a scale_factor so small that a size rounds down to 0), a scale_factor that is
        not a positive finite number, ``align_corners`` with 'nearest', 'nearest-exact' or
        'area', or ``antialias`` with another mode or input than bilinear or bicubic 4-D.
    TypeError
        For a size that is not an int (a float is not rounded).
    NotImplementedError
        For an unknown mode (or PyTorch's 'lanczos'), or a mode the input's dimensions do
        not fit ('bicubic' of a 3-D input).

    See Also
    --------
    difflab.nn.Upsample, adaptive_avg_pool2d, grid_sample

    Examples
    --------
    >>> import difflab as dl
    >>> F = dl.nn.functional
    >>> x = dl.tensor([[[1.0, 2.0]]])
    >>> F.interpolate(x, scale_factor=2).tolist()
    [[[1.0, 1.0, 2.0, 2.0]]]
    >>> F.interpolate(x, size=3, mode="linear", align_corners=True).tolist()
    [[[1.0, 1.5, 2.0]]]
    >>> row = dl.tensor([[[0.0, 1.0, 2.0, 3.0, 4.0]]])
    >>> F.interpolate(row, size=3, mode="nearest").tolist()        # rows 0, 1, 3
    [[[0.0, 1.0, 3.0]]]
    >>> F.interpolate(row, size=3, mode="nearest-exact").tolist()  # rows 0, 2, 4
    [[[0.0, 2.0, 4.0]]]
    >>> F.interpolate(row, size=2, mode="area").tolist()           # cells [0, 3) and [2, 5)
    [[[1.0, 3.0]]]
    >>> image = dl.tensor([[[[0.0, 1.0], [2.0, 3.0]]]])
    >>> F.interpolate(image, size=(1, 3), mode="bicubic", align_corners=True)[0, 0].tolist()
    [[0.0, 0.5, 1.0]]
    >>> step = dl.tensor([[[[0.0, 1.0]]]])
    >>> F.interpolate(step, size=(1, 4), mode="bicubic")[0, 0].tolist()  # it overshoots
    [[-0.10546875, 0.2265625, 0.7734375, 1.10546875]]
    >>> F.interpolate(image, size=(2, 1), mode="bilinear", antialias=True)[0, 0].tolist()
    [[0.5], [2.5]]
    """
    x = _check_input("interpolate", input)  # (a dual number, symbols: index_select)
    _check_mode(x, mode, align_corners, antialias)
    sizes, scales = _output_sizes(x, size, scale_factor, recompute_scale_factor)
    if mode == "area":  # (PyTorch's definition; scale_factor only sets the size)
        from difflab.nn.functional_core import adaptive_avg_pool2d
        from difflab.nn.functional_layers import adaptive_avg_pool1d, adaptive_avg_pool3d

        pool = {1: adaptive_avg_pool1d, 2: adaptive_avg_pool2d, 3: adaptive_avg_pool3d}
        return pool[len(sizes)](x, sizes[0] if len(sizes) == 1 else sizes)
    if mode not in ("nearest", "nearest-exact"):  # (fractional weights: integers were cut)
        x = _floating(x)
    dims = range(len(sizes))
    if mode == "bicubic" or antialias:  # (the last dimension first, as PyTorch sums)
        dims = reversed(dims)
    out = x
    for d in dims:
        out = _resize_along(out, 2 + d, sizes[d], scales[d], mode, align_corners, antialias)
    return out


# ----------------------------------------------------------------- spatial transformers


def _grid_coordinates(size: int, align_corners: bool, xp: Any) -> Any:
    """The normalised coordinates in [-1, 1] of ``size`` pixel centres (PyTorch's convention)."""
    if align_corners:
        return xp.linspace(-1.0, 1.0, size) if size > 1 else xp.zeros(1)
    return (2.0 * xp.arange(size) + 1.0) / size - 1.0


def affine_grid(theta: Tensor, size: Any, align_corners: bool | None = None) -> Tensor:
    r"""The sampling grid of a batch of 2-D affine maps ``theta``, for :func:`grid_sample`.

    For each output pixel :math:`(x, y)` (in :math:`[-1, 1]` coordinates, x first), the
    input position :math:`\theta\,(x, y, 1)^\top` it reads; shape (N, H, W, 2).

    With :func:`grid_sample` this is the spatial transformer (Jaderberg et al.);
    the grid is linear in θ, so θ learns through it.

    Parameters
    ----------
    theta : Tensor
        :math:`(N, 2, 3)`, one affine map per sample.
    size : tuple of 4 ints
        The output's :math:`(N, C, H, W)`.
    align_corners : bool, optional
        Whether -1 and 1 are the corner pixels' centres (True) or edges (False, the default).

    Returns
    -------
    Tensor
        :math:`(N, H, W, 2)`, the input position :math:`\theta (x, y, 1)^\top` of each output pixel.

    Raises
    ------
    ValueError
        If ``theta`` is not :math:`(N, 2, 3)` for the size.
    NotImplementedError
        For 3-D (5-element) sizes.

    See Also
    --------
    grid_sample : reads the input at the grid's positions.

    Notes
    -----
    The pixel :math:`(j, i)` (column, row) of a :math:`H \times W` output has the
    normalised coordinates

    .. math::
        x_j = \begin{cases} -1 + \frac{2j}{W - 1} & \text{align\_corners} \\
              \frac{2j + 1}{W} - 1 & \text{otherwise} \end{cases}

    (:math:`y_i` alike with :math:`H`), and ``grid[n, i, j] =``
    :math:`\theta_n (x_j, y_i, 1)^\top`.  The grid is linear in :math:`\theta`: its
    gradient with respect to :math:`\theta_n` is :math:`\sum_{i,j} \bar g_{n,i,j}
    (x_j, y_i, 1)`.

    Examples
    --------
    >>> import difflab as dl
    >>> identity = dl.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> dl.nn.functional.affine_grid(identity, (1, 1, 2, 2), align_corners=True)[0].tolist()
    [[[-1.0, -1.0], [1.0, -1.0]], [[-1.0, 1.0], [1.0, 1.0]]]
    >>> dl.nn.functional.affine_grid(identity, (1, 1, 1, 2))[0].tolist()  # pixel centres
    [[[-0.5, 0.0], [0.5, 0.0]]]
    >>> dl.nn.functional.affine_grid(identity, (2, 1, 4, 4))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: Expected a batch of 2D affine matrices ... Got (1, 2, 3).
    """
    t = _check_input("affine_grid", theta)  # (dual numbers, symbols: a product)
    if len(size) != 4:
        raise NotImplementedError("affine_grid: only 2-D grids (size (N, C, H, W)) are "
                                  "supported in difflab")
    n, _, h, w = (int(v) for v in size)
    if tuple(t.shape) != (n, 2, 3):
        raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                         f"{tuple(size)}. Got {tuple(t.shape)}.")
    xp = _array_module(t)
    xs = _grid_coordinates(w, bool(align_corners), xp)
    ys = _grid_coordinates(h, bool(align_corners), xp)
    base = xp.stack([xp.tile(xs, h), xp.repeat(ys, w), xp.ones(h * w)], 1).astype(
        _constant_dtype(t))
    grid = Tensor._wrap(base) @ t.transpose(1, 2)  # (N, H·W, 2)
    return grid.reshape(n, h, w, 2)


def _clip_pixels(u: np.ndarray, size: int) -> tuple:
    """PyTorch's clip of pixel positions into [0, size - 1] (nan becomes 0), and its slope:
    1 strictly inside, 0 at and past the edges."""
    value = np.where(np.isnan(u), 0.0, np.clip(u, 0, size - 1)).astype(u.dtype)
    return value, ((u > 0) & (u < size - 1)).astype(u.dtype)


def _reflect_pixels(u: np.ndarray, size: int, align_corners: bool | None) -> tuple:
    """PyTorch's reflect_coordinates: fold positions into the image by mirroring at its
    edges (the corner pixels' centres with ``align_corners``, else their outer edges), and
    the slope ±1 of each fold."""
    lo, span = (0.0, size - 1.0) if align_corners else (-0.5, float(size))
    if span == 0:  # (one pixel, corners aligned: every position is its centre)
        return np.zeros_like(u), np.zeros_like(u)
    twice = u.dtype.type(2 * span)
    shifted = u - u.dtype.type(lo)
    far = np.abs(shifted)
    extra = far - np.trunc(far / twice) * twice  # (the distance past whole round trips)
    back = extra > twice - extra  # (past the far edge: it comes back)
    value = np.where(back, twice - extra, extra) + u.dtype.type(lo)
    return value.astype(u.dtype), np.where(back ^ (shifted < 0), -1.0, 1.0).astype(u.dtype)


def _padded(p: Tensor, u: np.ndarray, size: int, padding_mode: str,
            align_corners: bool | None) -> tuple:
    """(pixel positions, their values) after ``padding_mode`` moved them into the image:
    'border' clips, 'reflection' mirrors then clips.  The positions are the tensor
    (p - u)·slope + value: the value computed as PyTorch computes it, the slope (±1, or 0
    where clipped or not finite) carrying the grid's derivative."""
    if padding_mode == "zeros":
        return p, u
    with np.errstate(invalid="ignore"):
        folded, slope = (u, np.ones_like(u)) if padding_mode == "border" else \
            _reflect_pixels(u, size, align_corners)
        value, inside = _clip_pixels(folded, size)
    slope = slope * inside
    xp = _array_module(p)
    moving = _where(Tensor._wrap(xp.asarray(slope != 0)), (p - Tensor._wrap(xp.asarray(u)))
                    * Tensor._wrap(xp.asarray(slope)), 0.0)  # (where: inf - inf is not read)
    return moving + Tensor._wrap(xp.asarray(value)), value


def _whole(u: np.ndarray, size: int) -> np.ndarray:
    """Pixel positions as int64 (nan and far-away positions: just outside the image)."""
    with np.errstate(invalid="ignore"):
        return np.clip(np.nan_to_num(u, nan=-3.0), -3, size + 2).astype(np.int64)


def _tap_position(u: np.ndarray, size: int, padding_mode: str,
                  align_corners: bool | None) -> np.ndarray:
    """Where a bicubic tap at the whole pixel position ``u`` (a float) reads:
    ``padding_mode`` applied to it."""
    with np.errstate(invalid="ignore"):
        if padding_mode == "reflection":
            u = _reflect_pixels(u, size, align_corners)[0]
        if padding_mode != "zeros":
            u = _clip_pixels(u, size)[0]
    return _whole(u, size)


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",  # noqa: A002
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    r"""Sample an image (N, C, H, W) at the positions a grid (N, Ho, Wo, 2) gives.

    The positions are in :math:`[-1, 1]` coordinates, x first; the output is
    (N, C, Ho, Wo).  ``mode='bilinear'`` mixes the four neighbouring pixels,
    ``'bicubic'`` the sixteen around (both differentiable in the input and in the grid);
    ``'nearest'`` copies one.  Outside the image ``padding_mode='zeros'`` reads 0,
    ``'border'`` the nearest edge pixel, ``'reflection'`` the image mirrored at its edges.

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, H, W)`.
    grid : Tensor
        :math:`(N, H_o, W_o, 2)`, positions in :math:`[-1, 1]`, x first.
    mode : {'bilinear', 'nearest', 'bicubic'}, default 'bilinear'
        Mix the four neighbours, copy one, or mix sixteen with cubic weights.
    padding_mode : {'zeros', 'border', 'reflection'}, default 'zeros'
        What is read outside the image.
    align_corners : bool, optional
        As :func:`affine_grid`'s.

    Returns
    -------
    Tensor
        :math:`(N, C, H_o, W_o)`; bilinear and bicubic sampling are differentiable in the
        input and the grid.

    Raises
    ------
    ValueError
        If the shapes do not fit.
    NotImplementedError
        For another mode or padding mode.

    See Also
    --------
    affine_grid : the grid of an affine map (the spatial transformer).

    Notes
    -----
    A coordinate :math:`x \in [-1, 1]` is the pixel position
    :math:`u = (x + 1)(W - 1)/2` with ``align_corners``, else :math:`u = ((x + 1) W - 1)/2`
    (:math:`v` alike with :math:`H`).  Bilinear sampling, with
    :math:`u_0 = \lfloor u \rfloor`, :math:`\alpha = u - u_0` (and :math:`v_0, \beta`):

    .. math::
        y = (1-\alpha)(1-\beta)\,I_{v_0,u_0} + \alpha(1-\beta)\,I_{v_0,u_0+1}
            + (1-\alpha)\beta\,I_{v_0+1,u_0} + \alpha\beta\,I_{v_0+1,u_0+1},

    linear in the image, and in the grid
    :math:`\partial y / \partial u = (1-\beta)(I_{v_0,u_0+1} - I_{v_0,u_0})
    + \beta(I_{v_0+1,u_0+1} - I_{v_0+1,u_0})` (a kink at whole pixels, where the
    gradient is the right-hand one).  Nearest sampling has a zero gradient in the grid.

    Padding moves a position into the image before it is read: 'border' clips :math:`u`
    into :math:`[0, W - 1]`; 'reflection' first folds it back at the edges (the corner
    pixels' centres :math:`0, W - 1` with ``align_corners``, else the image's edges
    :math:`-\tfrac12, W - \tfrac12`), as often as it takes, then clips.  Each fold is
    :math:`\pm u + c`, so :math:`\partial u' / \partial u = \pm 1`, and 0 where clipped
    (at the edges too, PyTorch's convention).  A position that is not finite becomes 0
    ('border', 'reflection') or reads nothing ('zeros').

    Bicubic sampling (as PyTorch's, a = -0.75) mixes the pixels :math:`u_0 - 1, \dots,
    u_0 + 2` (and rows alike) with Keys' weights :math:`W(\alpha + 1), W(\alpha),
    W(1 - \alpha), W(2 - \alpha)` (see :func:`interpolate`); it pads each of those
    whole-pixel taps, not the position.  A grid position that is not finite gives nan.

    Examples
    --------
    >>> import difflab as dl
    >>> image = dl.tensor([[[[0.0, 1.0], [2.0, 3.0]]]])
    >>> centre = dl.zeros(1, 1, 1, 2, requires_grad=True)  # (x, y) = (0, 0)
    >>> out = dl.nn.functional.grid_sample(image, centre, align_corners=True)
    >>> out.item()                                         # the mean of the 4 pixels
    1.5
    >>> out.backward()
    >>> centre.grad.tolist()                # d/dx, d/dy: the image's slopes, per unit of x
    [[[[0.5, 1.0]]]]
    >>> row = dl.tensor([[[[0.0, 1.0, 2.0]]]])
    >>> past = dl.tensor([[[[1.5, 0.0], [-1.25, 0.0]]]])  # beyond the right, left edge
    >>> F = dl.nn.functional
    >>> F.grid_sample(row, past, padding_mode="reflection", align_corners=True).tolist()
    [[[[1.5, 0.25]]]]
    >>> F.grid_sample(row, past, padding_mode="border", align_corners=True).tolist()
    [[[[2.0, 0.0]]]]
    >>> half = dl.tensor([[[[0.5, 0.0]]]])  # u = 1.5: taps 0, 1, 2 and 3 (outside: 0)
    >>> F.grid_sample(row, half, mode="bicubic", align_corners=True).item()
    1.78125
    >>> F.grid_sample(row, half, mode="bicubic", padding_mode="border",
    ...               align_corners=True).item()  # (tap 3 reads pixel 2)
    1.59375
    """
    from difflab.functions import gather

    x, g = _check_input("grid_sample", input), _check_input("grid_sample", grid, "grid")
    if x.ndim != 4 or g.ndim != 4 or g.shape[-1] != 2 or g.shape[0] != x.shape[0]:
        raise ValueError(f"grid_sample expects input (N, C, H, W) and grid (N, Ho, Wo, 2) with "
                         f"the same N, got {tuple(x.shape)} and {tuple(g.shape)}")
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise NotImplementedError(f"grid_sample: mode {mode!r} is not supported in difflab "
                                  "(bilinear, nearest, bicubic)")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise NotImplementedError(f"grid_sample: padding_mode {padding_mode!r} is not supported "
                                  "in difflab (zeros, border, reflection)")
    # (the pixels read are found from the grid's values; an image of symbols is sampled)
    refuse_symbols("grid_sample", "the pixels it reads are found from the grid's values, "
                   "which symbols do not have (a grid of numbers samples symbols)", g)
    n, c, h, w = x.shape
    ho, wo = g.shape[1:3]
    xp = _array_module(x)

    def pixels(coordinate: Tensor, size: int) -> Tensor:
        if align_corners:
            return (coordinate + 1.0) * (0.5 * (size - 1))
        return ((coordinate + 1.0) * size - 1.0) * 0.5

    px = pixels(g[..., 0].reshape(n, 1, ho * wo), w)
    py = pixels(g[..., 1].reshape(n, 1, ho * wo), h)
    flat = x.reshape(n, c, h * w)

    def read(ix: Any, iy: Any) -> Tensor:
        """The pixels at integer positions (ix, iy); 0 outside the image, even next to an
        inf (a where, not a 0/1 mask times the pixel read at a clipped index)."""
        inside = (ix >= 0) & (ix < w) & (iy >= 0) & (iy < h)
        index = xp.clip(iy, 0, h - 1) * w + xp.clip(ix, 0, w - 1)
        index = xp.broadcast_to(index, (n, c, ho * wo)).astype(np.int64)
        values = gather(flat, 2, Tensor._wrap(xp.ascontiguousarray(index)))
        return _where(Tensor._wrap(xp.asarray(inside)), values, 0.0)

    # The sampling positions become integer indices in NumPy: a traced grid_sample warns that
    # it reads the grid's values (its replays would sample the traced grid's pixels).  They
    # are read from the values (a dual number's without its tangents); the fractions
    # between them stay operations on the grid, which carry its derivative.
    if isinstance(px, Tensor):
        px._value_read("grid_sample turning the grid into pixel indices")
    ux, uy = known_values(px), known_values(py)
    if mode == "bicubic":  # (the taps are padded, not the position: PyTorch's)
        return _bicubic_sample(read, (px, ux, w), (py, uy, h), padding_mode,
                               align_corners).reshape(n, c, ho, wo)
    px, ux = _padded(px, ux, w, padding_mode, align_corners)
    py, uy = _padded(py, uy, h, padding_mode, align_corners)
    if mode == "nearest":
        with np.errstate(invalid="ignore"):
            out = read(_whole(xp.rint(ux), w), _whole(xp.rint(uy), h))
        # the grid's gradient is zero (not None, as in PyTorch): a +0.0 that reads the grid
        # (a where that never picks it: no inf * 0); out - 0.0 keeps every value, -0.0 too
        zero = _where(Tensor._wrap(xp.zeros(px.shape, dtype=bool)), px + py, 0.0)
        return (out - zero).reshape(n, c, ho, wo)
    with np.errstate(invalid="ignore"):
        x0, y0 = xp.floor(ux), xp.floor(uy)
    fx, fy = px - Tensor._wrap(x0), py - Tensor._wrap(y0)  # the fractions: grid's gradient
    x0, y0 = _whole(x0, w), _whole(y0, h)
    out = None
    for dx, dy, weight in ((0, 0, (1.0 - fx) * (1.0 - fy)), (1, 0, fx * (1.0 - fy)),
                           (0, 1, (1.0 - fx) * fy), (1, 1, fx * fy)):
        term = read(x0 + dx, y0 + dy) * weight  # (a corner outside adds nothing: PyTorch's)
        out = term if out is None else out + term
    return out.reshape(n, c, ho, wo)


def _bicubic_sample(read: Any, across: tuple, down: tuple, padding_mode: str,
                    align_corners: bool | None) -> Tensor:
    """Σ_ij W(ty)_j W(tx)_i I[y0 - 1 + j, x0 - 1 + i] over the 4 × 4 pixels around each
    position (Keys' weights, a = -0.75, of its fractions t), each tap's position padded."""
    (px, ux, w), (py, uy, h) = across, down
    with np.errstate(invalid="ignore"):
        x0, y0 = np.floor(ux), np.floor(uy)
    wx = _cubic_weights(px - Tensor._wrap(x0), _CUBIC_A)  # (inf - inf: nan, as PyTorch)
    wy = _cubic_weights(py - Tensor._wrap(y0), _CUBIC_A)
    out = None
    for j in range(4):
        iy = _tap_position(y0 - 1 + j, h, padding_mode, align_corners)
        row = None
        for i in range(4):
            ix = _tap_position(x0 - 1 + i, w, padding_mode, align_corners)
            term = read(ix, iy) * wx[i]
            row = term if row is None else row + term
        out = row * wy[j] if out is None else out + row * wy[j]
    return out
