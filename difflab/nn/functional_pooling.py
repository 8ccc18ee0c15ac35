r"""Pooling beyond ``max_pool2d``/``avg_pool2d`` in ``torch.nn.functional``: 3-D, power-average,
fractional, and the unpooling that takes a max pool's indices.

Composites of operations that already have derivative rules (no rule of their own):

* a 3-D pool is two 2-D pools, over (H, W) in every depth slice, then over the depth
  windows of the results: a maximum or a mean over a box is separable;
* power-average pooling is PyTorch's formula on the average pools of :math:`x^p`;
* fractional max pooling reads its pseudo-random windows by indexing, and picks each
  window's first maximum by ``argmax`` (its value by ``gather``, where the gradient goes);
* unpooling scatters the values to their indices (its gradient gathers them back).
"""

from __future__ import annotations

from typing import Any

from difflab.nn.functional_conv import avg_pool1d, max_pool1d
from difflab.nn.functional_core import (
    _check_input,
    _check_tensor,
    _constant_dtype,
    _floating,
    _max_indices,
    _window,
    avg_pool2d,
    max_pool2d,
)
from difflab.nn.functional_windows import _without_added_batch
from difflab.tensor import Tensor

__all__ = ["avg_pool3d", "fractional_max_pool2d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d", "fractional_max_pool3d_with_indices", "lp_pool1d",
           "lp_pool2d", "lp_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "max_pool3d", "max_pool3d_with_indices", "max_unpool1d", "max_unpool2d",
           "max_unpool3d"]


# ------------------------------------------------------------------------------ 3-D pooling


def _pool3d_args(name: str, input: Tensor, kernel_size: Any, stride: Any,  # noqa: A002
                 padding: Any, dilation: Any, ceil_mode: bool) -> tuple:
    """The checked window of a 3-D pool, and the input as (N, C, D, H, W) with whether a
    batch was added (PyTorch's checks, in 3-D's words)."""
    x = _check_input(name, input)
    if x.ndim not in (4, 5):
        raise ValueError(f"{name} expects a 4-D (C, D, H, W) or 5-D (N, C, D, H, W) input, "
                         f"got shape {tuple(x.shape)}")
    if ceil_mode:
        raise NotImplementedError(f"{name}: ceil_mode=True is not supported in difflab; pad "
                                  "the input (F.pad) so the windows fit, or use ceil_mode=False")
    kernel = _window(name, kernel_size, "kernel_size", 3)
    stride = kernel if stride is None or stride == () else _window(name, stride, "stride", 3)
    padding = _window(name, padding, "padding", 3)
    dilation = _window(name, dilation, "dilation", 3)
    if any(p > k // 2 for p, k in zip(padding, kernel)):
        raise ValueError(f"{name}: padding {padding} should be at most half of the kernel "
                         f"size {kernel}")
    unbatched = x.ndim == 4
    return (x.unsqueeze(0) if unbatched else x), unbatched, kernel, stride, padding, dilation


def _pool3d(pool2d: Any, x: Tensor, kernel: tuple, stride: tuple, padding: tuple,
            dilation: tuple | None) -> Tensor:
    """A 3-D pool as two 2-D ones: the (H, W) windows of every depth slice first, then the
    depth windows of those results (max and mean over a box are separable)."""
    n, c, depth, h, w = x.shape
    extra = () if dilation is None else (dilation[1:],)
    plane = pool2d(x.reshape(n, c * depth, h, w), kernel[1:], stride[1:], padding[1:], *extra)
    oh, ow = plane.shape[2:]
    columns = plane.reshape(n, c, depth, oh * ow)  # the depth windows: (kd, 1) over (D, OH·OW)
    extra = () if dilation is None else ((dilation[0], 1),)
    out = pool2d(columns, (kernel[0], 1), (stride[0], 1), (padding[0], 0), *extra)
    return out.reshape(n, c, out.shape[2], oh, ow)


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False
               ) -> Tensor:
    r"""The maximum of each (dilated) box of ``kernel_size`` in (N, C, D, H, W) volumes.

    Two :func:`max_pool2d` calls: over (H, W) in every depth slice, then over
    the depth windows of the results.  A maximum over a box is the maximum of
    the maxima of its slices, so this is one 3-D max pool, and its gradient
    goes to the first maximum of each box in (d, h, w) order, as PyTorch's.

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, D, H, W)` or :math:`(C, D, H, W)`.
    kernel_size : int or tuple of 3 ints
        The box :math:`(k_d, k_h, k_w)`.
    stride : int or tuple of 3 ints, optional
        The step; ``kernel_size`` by default.
    padding : int or tuple of 3 ints, default 0
        :math:`-\infty` padding on both sides, at most half the kernel.
    dilation : int or tuple of 3 ints, default 1
        The spacing of the box's elements.
    ceil_mode : bool, default False
        Only False is supported (a clear error otherwise).
    return_indices : bool, default False
        Also return where each maximum is (a flat index into :math:`D \cdot H \cdot W`),
        as :func:`max_unpool3d` takes them.

    Returns
    -------
    Tensor or (Tensor, Tensor)
        :math:`(N, C, D_{out}, H_{out}, W_{out})` (or without :math:`N`), the input's dtype;
        with ``return_indices``, also the int64 indices of the maxima.

    Raises
    ------
    ValueError
        If the input is not 4-D or 5-D, the padding exceeds half the kernel, or a window
        argument is below its least value (1 for the kernel, stride and dilation, 0 for
        the padding) or not 3 long.
    TypeError
        If a window argument is a float or another non-int.
    NotImplementedError
        For ``ceil_mode=True``.

    See Also
    --------
    avg_pool3d, max_pool2d, max_unpool3d, difflab.nn.MaxPool3d

    Notes
    -----
    .. math::
        \text{out}(n, c, i, j, l) = \max_{a < k_d,\, b < k_h,\, e < k_w}
        x(n, c, s_d i + d_d a - p_d,\ s_h j + d_h b - p_h,\ s_w l + d_w e - p_w)

        D_{out} = \left\lfloor \frac{D + 2p_d - d_d(k_d - 1) - 1}{s_d} \right\rfloor + 1

    and the same for :math:`H_{out}` and :math:`W_{out}`.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.arange(64.0).reshape(1, 1, 4, 4, 4).requires_grad_()
    >>> y = dl.nn.functional.max_pool3d(x, 2)
    >>> y.flatten().tolist()
    [21.0, 23.0, 29.0, 31.0, 53.0, 55.0, 61.0, 63.0]
    >>> y.sum().backward()
    >>> int(x.grad.sum()), x.grad[0, 0, 1, 1, 1].item()   # one 1 per box, at its maximum
    (8, 1.0)
    """
    x, unbatched, kernel, stride, padding, dilation = _pool3d_args(
        "max_pool3d", input, kernel_size, stride, padding, dilation, ceil_mode)
    out = _pool3d(max_pool2d, x, kernel, stride, padding, dilation)
    if return_indices:
        out = out, _max_indices(x, kernel, stride, padding, dilation)
    return _without_added_batch(out, unbatched)


def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    r"""The mean of each box of ``kernel_size`` in (N, C, D, H, W) volumes.

    Two :func:`avg_pool2d` calls: over (H, W) in every depth slice, then over
    the depth windows of the results (a mean of equal-sized means is the mean
    of the box).

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, D, H, W)` or :math:`(C, D, H, W)`; an integer input is averaged in
        the default floating dtype.
    kernel_size : int or tuple of 3 ints
        The box :math:`(k_d, k_h, k_w)`.
    stride : int or tuple of 3 ints, optional
        The step; ``kernel_size`` by default.
    padding : int or tuple of 3 ints, default 0
        Zeros on both sides, counted in the mean, at most half the kernel.
    ceil_mode : bool, default False
        Only False is supported.
    count_include_pad : bool, default True
        Only True is supported (PyTorch's default).
    divisor_override : int, optional
        Divide each box's sum by this instead of :math:`k_d k_h k_w`.

    Returns
    -------
    Tensor
        :math:`(N, C, D_{out}, H_{out}, W_{out})` (or without :math:`N`).

    Raises
    ------
    ValueError
        If the input is not 4-D or 5-D, the padding exceeds half the kernel, a window
        argument is out of range or not 3 long, or ``divisor_override`` is not positive.
    TypeError
        If a window argument is a float or another non-int.
    NotImplementedError
        For ``ceil_mode=True`` or ``count_include_pad=False``.

    See Also
    --------
    max_pool3d, avg_pool2d, difflab.nn.AvgPool3d

    Notes
    -----
    .. math::
        \text{out}(n, c, i, j, l) = \frac{1}{k_d k_h k_w} \sum_{a, b, e}
        x(n, c, s_d i + a - p_d,\ s_h j + b - p_h,\ s_w l + e - p_w)

        D_{out} = \left\lfloor \frac{D + 2p_d - k_d}{s_d} \right\rfloor + 1

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.arange(8.0).reshape(1, 1, 2, 2, 2)
    >>> dl.nn.functional.avg_pool3d(x, 2).flatten().tolist()
    [3.5]
    >>> dl.nn.functional.avg_pool3d(x, 2, divisor_override=1).flatten().tolist()   # the sum
    [28.0]
    """
    if not count_include_pad:
        raise NotImplementedError("avg_pool3d: count_include_pad=False is not supported in "
                                  "difflab (the padding's zeros count in each mean)")
    x, unbatched, kernel, stride, padding, _ = _pool3d_args(
        "avg_pool3d", input, kernel_size, stride, padding, 1, ceil_mode)
    out = _pool3d(avg_pool2d, x, kernel, stride, padding, None)
    if divisor_override is not None:
        if isinstance(divisor_override, bool) or not isinstance(divisor_override, int) \
                or divisor_override < 1:
            raise ValueError(f"avg_pool3d: divisor_override must be a positive int, got "
                             f"{divisor_override!r}")
        out = out * ((kernel[0] * kernel[1] * kernel[2]) / divisor_override)
    return out.squeeze(0) if unbatched else out




# ------------------------------------------------------------------------------ power-average


def _lp_pool(name: str, average: Any, input: Tensor, norm_type: float,  # noqa: A002
             kernel_size: Any, stride: Any, ceil_mode: bool, dims: int) -> Tensor:
    """(Σ over each window of x^p)^(1/p), from the mean of x^p over each window times the
    window's size; PyTorch's formula, sign and relu included (a negative sum gives 0)."""
    from difflab.functions import sign

    x = _check_input(name, input)
    if isinstance(norm_type, bool) or not isinstance(norm_type, (int, float)):
        raise TypeError(f"{name}: norm_type must be a number, got {norm_type!r}")
    if ceil_mode:
        raise NotImplementedError(f"{name}: ceil_mode=True is not supported in difflab; pad "
                                  "the input (F.pad) so the windows fit, or use ceil_mode=False")
    kernel = _window(name, kernel_size, "kernel_size", dims)
    size = 1
    for k in kernel:
        size *= k
    out = average(x.pow(norm_type), kernel_size, stride)
    return (sign(out) * out.abs().relu()).mul(size).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,  # noqa: A002
              ceil_mode: bool = False) -> Tensor:
    r"""The p-norm of each window along the last dimension of (N, C, L): power-average pooling.

    :math:`(\sum_{\text{window}} x^p)^{1/p}`, computed as PyTorch does from
    :func:`avg_pool1d` of :math:`x^p`: ``p = 1`` is sum pooling, ``p = inf`` would be
    max pooling (use :func:`max_pool1d`).

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, L)` or :math:`(C, L)`.
    norm_type : float
        :math:`p`.
    kernel_size : int
        The window's length.
    stride : int, optional
        The step; ``kernel_size`` by default.
    ceil_mode : bool, default False
        Only False is supported.

    Returns
    -------
    Tensor
        :math:`(N, C, L_{out})` (or without :math:`N`),
        :math:`L_{out} = \lfloor (L - k)/s \rfloor + 1`.

    Raises
    ------
    TypeError
        If ``norm_type`` is not a number, or a window argument not an int.
    NotImplementedError
        For ``ceil_mode=True``.

    See Also
    --------
    lp_pool2d, avg_pool1d, difflab.nn.LPPool1d

    Notes
    -----
    .. math::
        \text{out}(n, c, l) = \Bigl(\sum_{m < k} x(n, c, s\,l + m)^p\Bigr)^{1/p}

    (a window whose sum of powers is negative, possible for odd :math:`p`, gives 0.)
    The gradient is :math:`x^{p-1} / \text{out}^{p-1}` for each element of the window.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([[[-1.0, 2.0, -3.0, 4.0]]])
    >>> [round(v, 4) for v in dl.nn.functional.lp_pool1d(x, 2, 2).flatten().tolist()]
    [2.2361, 5.0]
    """
    return _lp_pool("lp_pool1d", lambda x, k, s: avg_pool1d(x, k, s), input, norm_type,
                    kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,  # noqa: A002
              ceil_mode: bool = False) -> Tensor:
    r"""The p-norm of each window of (N, C, H, W) images: power-average pooling.

    :math:`(\sum_{\text{window}} x^p)^{1/p}`, from :func:`avg_pool2d` of :math:`x^p`,
    as PyTorch computes it.

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, H, W)` or :math:`(C, H, W)`.
    norm_type : float
        :math:`p`.
    kernel_size : int or tuple of 2 ints
        The window.
    stride : int or tuple of 2 ints, optional
        The step; ``kernel_size`` by default.
    ceil_mode : bool, default False
        Only False is supported.

    Returns
    -------
    Tensor
        :math:`(N, C, H_{out}, W_{out})` (or without :math:`N`).

    Raises
    ------
    TypeError
        If ``norm_type`` is not a number, or a window argument not an int.
    NotImplementedError
        For ``ceil_mode=True``.

    See Also
    --------
    lp_pool1d, lp_pool3d, difflab.nn.LPPool2d

    Notes
    -----
    .. math::
        \text{out}(n, c, i, j) = \Bigl(\sum_{a < k_h,\, b < k_w}
        x(n, c, s_h i + a, s_w j + b)^p\Bigr)^{1/p}

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.arange(16.0).reshape(1, 1, 4, 4) - 5
    >>> [round(v, 4) for v in dl.nn.functional.lp_pool2d(x, 2.0, 2).flatten().tolist()]
    [6.4807, 4.2426, 11.7473, 15.5563]
    """
    return _lp_pool("lp_pool2d", lambda x, k, s: avg_pool2d(x, k, s), input, norm_type,
                    kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,  # noqa: A002
              ceil_mode: bool = False) -> Tensor:
    r"""The p-norm of each box of (N, C, D, H, W) volumes: power-average pooling.

    :math:`(\sum_{\text{box}} x^p)^{1/p}`, from :func:`avg_pool3d` of :math:`x^p`,
    as PyTorch computes it.

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, D, H, W)` or :math:`(C, D, H, W)`.
    norm_type : float
        :math:`p`.
    kernel_size : int or tuple of 3 ints
        The box.
    stride : int or tuple of 3 ints, optional
        The step; ``kernel_size`` by default.
    ceil_mode : bool, default False
        Only False is supported.

    Returns
    -------
    Tensor
        :math:`(N, C, D_{out}, H_{out}, W_{out})` (or without :math:`N`).

    Raises
    ------
    TypeError
        If ``norm_type`` is not a number, or a window argument not an int.
    NotImplementedError
        For ``ceil_mode=True``.

    See Also
    --------
    lp_pool2d, avg_pool3d, difflab.nn.LPPool3d

    Examples
    --------
    >>> import difflab as dl
    >>> y = dl.nn.functional.lp_pool3d(dl.ones(1, 1, 2, 2, 2) * 3, 2, 2)   # sqrt(8 · 9)
    >>> y.shape, round(y.item(), 4)
    (difflab.Size([1, 1, 1, 1, 1]), 8.4853)
    """
    return _lp_pool("lp_pool3d", lambda x, k, s: avg_pool3d(x, k, s), input, norm_type,
                    kernel_size, stride, ceil_mode, 3)



# ------------------------------------------------------------- where the maxima are, unpooling


def _max_unpool(name: str, input: Tensor, indices: Tensor, kernel_size: Any,  # noqa: A002
                stride: Any, padding: Any, output_size: Any, dims: int) -> Tensor:
    """Scatter each value to where its index says, zeros elsewhere: the max pools' inverse
    (up to the values that were not maxima)."""
    from difflab.creation import zeros
    from difflab.functions_indexing import checked_index

    x = _check_input(name, input)  # (dual numbers, symbols: scattered into zeros)
    idx = _check_tensor(name, indices, "indices")
    if x.ndim not in (dims + 1, dims + 2):
        raise ValueError(f"{name} expects a {dims + 1}-D (unbatched) or {dims + 2}-D input, "
                         f"got shape {tuple(x.shape)}")
    if idx.dtype.kind not in "iu" or tuple(idx.shape) != tuple(x.shape):
        raise ValueError(f"{name}: indices must be integers of the input's shape "
                         f"{tuple(x.shape)} (a max pool's return_indices=True), got "
                         f"{idx.dtype} {tuple(idx.shape)}")
    unbatched = x.ndim == dims + 1
    if unbatched:
        x, idx = x.unsqueeze(0), idx.unsqueeze(0)
    kernel = _window(name, kernel_size, "kernel_size", dims)
    stride = kernel if stride is None or stride == () else _window(name, stride, "stride", dims)
    padding = _window(name, padding, "padding", dims)
    sizes = [(n - 1) * s - 2 * p + k
             for n, k, s, p in zip(x.shape[2:], kernel, stride, padding)]
    if output_size is not None:
        given = [int(v) for v in output_size][-dims:]
        if len(given) != dims:
            raise ValueError(f"{name}: output_size must give the {dims} spatial sizes, got "
                             f"{output_size!r}")
        for n, default, s in zip(given, sizes, stride):
            if not default - s < n < default + s:
                raise ValueError(f"{name}: invalid output_size {tuple(given)}: each size must "
                                 f"lie between {tuple(d - s + 1 for d, s in zip(sizes, stride))}"
                                 f" and {tuple(d + s - 1 for d, s in zip(sizes, stride))}")
        sizes = given
    n, c = x.shape[:2]
    total = 1
    for size in sizes:
        total *= size
    flat = checked_index(idx.reshape(n, c, -1), total, f"{name}: found an invalid max index "
                         f"{{value}} (output volumes are of size {'x'.join(map(str, sizes))})",
                         error="RuntimeError")
    # one slot past the output takes the values another one overwrites: scattered there,
    # they get no gradient and no tangent (the slot is cut off), as they leave no value
    out = zeros(n, c, total + 1, dtype=_constant_dtype(x), device=x.device).scatter(
        2, _last_of_repeats(flat, total), x.reshape(n, c, -1))
    out = out[..., :total].reshape(n, c, *sizes)
    return out.squeeze(0) if unbatched else out


def _last_of_repeats(flat: Tensor, spare: int) -> Tensor:
    """``flat`` with each index that a later entry of its row repeats sent to ``spare``.

    Where windows overlap, two values can have the same index: the last one is written
    (PyTorch's CPU kernel, run in one thread, writes them in order; with several it may
    keep another, its documented nondeterminism).  A stable sort puts the repeats side
    by side, in order: an entry is written when the next one in sorted order differs."""
    from difflab.creation import ones_like, zeros_like
    from difflab.functions import cat, where
    from difflab.functions_indexing import argsort

    order = argsort(flat, -1, stable=True)
    ranked = flat.gather(-1, order)
    last = cat([ranked[..., 1:] != ranked[..., :-1],
                ones_like(ranked[..., -1:], dtype=bool)], -1)   # (the row's end: written)
    written = zeros_like(last).scatter(-1, order, last)         # (in the entries' order)
    return where(written, flat, spare)


_UNPOOL_DOC = r"""The inverse of :func:`max_pool{d}d`: each value written back where its index says.

    Zeros elsewhere: the values the pool dropped are not restored.

    Parameters
    ----------
    input : Tensor
        {shape}, the pooled values.
    indices : Tensor
        The indices :func:`max_pool{d}d` returned with ``return_indices=True`` (the
        input's shape, integers).
    kernel_size : int or tuple of {d} ints
        The pool's window.
    stride : int or tuple of {d} ints, optional
        The pool's step; ``kernel_size`` by default.
    padding : int or tuple of {d} ints, default 0
        The pool's padding.
    output_size : tuple, optional
        The unpooled spatial size (the pool's input size, to undo a pool that dropped a
        border); the default is :math:`(L_{{in}} - 1) s - 2p + k` per side.

    Returns
    -------
    Tensor
        :math:`(N, C, *_{{out}})` (or without :math:`N`), the input's dtype; its gradient
        with respect to ``input`` gathers at the indices.  Where two values share an index
        (overlapping windows) the last is written, and only it has a derivative there
        (PyTorch's backward gives each of them the gradient, its forward mode only one).

    Raises
    ------
    ValueError
        If the input has the wrong number of dimensions, the indices are not integers of
        its shape, or ``output_size`` is out of range.
    RuntimeError
        If an index is outside the output.

    See Also
    --------
    max_pool{d}d, difflab.nn.MaxUnpool{d}d

    Examples
    --------
    >>> import difflab as dl
    >>> F = dl.nn.functional
    >>> x = {example}
    >>> y, where = F.max_pool{d}d(x, 2, return_indices=True)
    >>> F.max_unpool{d}d(y, where, 2).flatten().tolist()
    {result}
    """


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Any,  # noqa: A002
                 stride: Any = None, padding: Any = 0, output_size: Any = None) -> Tensor:
    return _max_unpool("max_unpool1d", input, indices, kernel_size, stride, padding,
                       output_size, 1)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any,  # noqa: A002
                 stride: Any = None, padding: Any = 0, output_size: Any = None) -> Tensor:
    return _max_unpool("max_unpool2d", input, indices, kernel_size, stride, padding,
                       output_size, 2)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any,  # noqa: A002
                 stride: Any = None, padding: Any = 0, output_size: Any = None) -> Tensor:
    return _max_unpool("max_unpool3d", input, indices, kernel_size, stride, padding,
                       output_size, 3)


max_unpool1d.__doc__ = _UNPOOL_DOC.format(
    d=1, shape=r":math:`(N, C, L)` or :math:`(C, L)`",
    example="dl.tensor([[[1.0, 5.0, 2.0, 0.0]]])", result="[0.0, 5.0, 2.0, 0.0]")
max_unpool2d.__doc__ = _UNPOOL_DOC.format(
    d=2, shape=r":math:`(N, C, H, W)` or :math:`(C, H, W)`",
    example="dl.tensor([[[[1.0, 5.0], [3.0, 4.0]]]])", result="[0.0, 5.0, 0.0, 0.0]")
max_unpool3d.__doc__ = _UNPOOL_DOC.format(
    d=3, shape=r":math:`(N, C, D, H, W)` or :math:`(C, D, H, W)`",
    example="dl.arange(8.0).reshape(1, 1, 2, 2, 2)",
    result="[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 7.0]")


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> tuple:
    """:func:`max_pool1d` with ``return_indices=True``: (the maxima, their indices).

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, L)` or :math:`(C, L)`.
    kernel_size, stride, padding, dilation, ceil_mode
        As in :func:`max_pool1d`.
    return_indices : bool, default True
        PyTorch's argument; the indices are always returned.

    Returns
    -------
    (Tensor, Tensor)
        The pooled values and the int64 indices of the maxima.

    Raises
    ------
    ValueError
        As :func:`max_pool1d`.

    See Also
    --------
    max_pool1d, max_unpool1d

    Examples
    --------
    >>> import difflab as dl
    >>> y, i = dl.nn.functional.max_pool1d_with_indices(dl.tensor([[[1.0, 5.0, 2.0, 0.0]]]), 2)
    >>> y.tolist(), i.tolist()
    ([[[5.0, 2.0]]], [[[1, 2]]])
    """
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> tuple:
    """:func:`max_pool2d` with ``return_indices=True``: (the maxima, their indices).

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, H, W)` or :math:`(C, H, W)`.
    kernel_size, stride, padding, dilation, ceil_mode
        As in :func:`max_pool2d`.
    return_indices : bool, default True
        PyTorch's argument; the indices are always returned.

    Returns
    -------
    (Tensor, Tensor)
        The pooled values and the int64 indices of the maxima (:math:`h W + w`).

    Raises
    ------
    ValueError
        As :func:`max_pool2d`.

    See Also
    --------
    max_pool2d, max_unpool2d

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([[[[1.0, 5.0], [3.0, 4.0]]]])
    >>> y, i = dl.nn.functional.max_pool2d_with_indices(x, 2)
    >>> y.tolist(), i.tolist()
    ([[[[5.0]]]], [[[[1]]]])
    """
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> tuple:
    """:func:`max_pool3d` with ``return_indices=True``: (the maxima, their indices).

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, D, H, W)` or :math:`(C, D, H, W)`.
    kernel_size, stride, padding, dilation, ceil_mode
        As in :func:`max_pool3d`.
    return_indices : bool, default True
        PyTorch's argument; the indices are always returned.

    Returns
    -------
    (Tensor, Tensor)
        The pooled values and the int64 indices of the maxima (:math:`(d H + h) W + w`).

    Raises
    ------
    ValueError
        As :func:`max_pool3d`.

    See Also
    --------
    max_pool3d, max_unpool3d

    Examples
    --------
    >>> import difflab as dl
    >>> y, i = dl.nn.functional.max_pool3d_with_indices(dl.arange(8.0).reshape(1, 1, 2, 2, 2), 2)
    >>> y.flatten().tolist(), i.flatten().tolist()
    ([7.0], [7])
    """
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


# -------------------------------------------------------------------- fractional max pooling


def _fractional_max_pool(name: str, input: Tensor, kernel_size: Any,  # noqa: A002
                         output_size: Any, output_ratio: Any, return_indices: bool,
                         samples: Any, dims: int) -> Any:
    """Max pooling over windows placed pseudo-randomly (Graham, 2014), PyTorch's placement.

    Along each axis, window i of the n_out starts at
    ⌊(i + u)·α⌋ - ⌊u·α⌋ with α = (n_in - k) / (n_out - 1) and u ∈ [0, 1) one draw per
    (sample, channel, axis); the last window ends at the input's edge.  The windows are
    read by indexing, and each window's first maximum picked by argmax (its value by
    gather, so the gradient goes there).
    """
    from difflab.creation import arange, rand
    from difflab.functions import cat, floor

    x = _check_tensor(name, input)
    if x.ndim not in (dims + 1, dims + 2):
        raise ValueError(f"{name} expects a {dims + 1}-D (unbatched) or {dims + 2}-D input, "
                         f"got shape {tuple(x.shape)}")
    unbatched = x.ndim == dims + 1
    x = x.unsqueeze(0) if unbatched else x
    n, c, spatial = x.shape[0], x.shape[1], tuple(x.shape[2:])
    kernel = _window(name, kernel_size, "kernel_size", dims)
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an "
                         "output_ratio")
    if output_size is None:
        ratios = output_ratio if isinstance(output_ratio, (tuple, list)) else \
            (output_ratio,) * dims
        if len(ratios) != dims or not all(0 < r < 1 for r in ratios):
            raise ValueError(f"{name}: output_ratio must be {dims} numbers between 0 and 1, "
                             f"got {output_ratio!r}")
        output_size = tuple(int(size * r) for size, r in zip(spatial, ratios))
    sizes = _window(name, output_size, "output_size", dims)
    for axis, (size_in, size_out, k) in enumerate(zip(spatial, sizes, kernel)):
        # (PyTorch's bounds: the windows must fit, and in 3-D leave a place to spare)
        if size_out + k - 1 > size_in - (dims == 3):
            raise RuntimeError(f"{name}(): pool size {k} too large relative to input size "
                               f"{size_in} along spatial dimension {axis} (output {size_out})")
    x = _floating(x)
    if samples is None:
        samples = rand(n, c, dims, dtype=x.dtype, device=x.device)
    elif tuple(samples.shape) != (n, c, dims):
        raise ValueError(f"{name}: _random_samples must have shape {(n, c, dims)}, got "
                         f"{tuple(samples.shape)}")
    # PyTorch reads the samples of a 2-D pool as (W, H), of a 3-D one as (D, H, W)
    order = (1, 0) if dims == 2 else (0, 1, 2)
    reads = []  # per axis: the positions each window reads, (N, C, n_out, k)
    for axis, (size_in, size_out, k) in enumerate(zip(spatial, sizes, kernel)):
        u = samples[:, :, order[axis]].unsqueeze(-1)
        last = arange(1, dtype=x.dtype, device=x.device) + float(size_in - k)
        if size_out > 1:  # (α in the input's precision, as PyTorch computes it)
            real = x.array.dtype.type
            alpha = real(size_in - k) / real(size_out - 1)
            steps = arange(size_out - 1, dtype=x.dtype, device=x.device)
            first = floor((steps + u) * float(alpha)) - floor(u * float(alpha))
            starts = cat([first, last.expand(n, c, 1)], -1)
        else:
            starts = last.expand(n, c, 1)
        reads.append(starts.long().unsqueeze(-1) + arange(k, device=x.device))
    # index x by (n, c, window positions of every axis): (N, C, o1, .., od, k1, .., kd)
    shape_out = (n, c) + tuple(sizes) + tuple(kernel)
    grid = [_spread_read(read, axis, dims) for axis, read in enumerate(reads)]
    batch = arange(n, device=x.device).reshape(n, *([1] * (2 * dims + 1)))
    chans = arange(c, device=x.device).reshape(1, c, *([1] * (2 * dims)))
    windows = x[(batch, chans) + tuple(grid)].reshape(*shape_out[:2 + dims], -1)
    first = windows.argmax(-1, keepdim=True)
    out = windows.gather(-1, first).squeeze(-1)
    if return_indices:
        position = grid[0]
        for axis in range(1, dims):
            position = position * spatial[axis] + grid[axis]
        position = position.expand(*shape_out).reshape(*shape_out[:2 + dims], -1)
        out = out, position.gather(-1, first).squeeze(-1)
    return _without_added_batch(out, unbatched)


def _spread_read(read: Tensor, axis: int, dims: int) -> Tensor:
    """(N, C, n_out, k) positions along ``axis`` as (N, C, o1, .., od, k1, .., kd) with ones
    elsewhere, so the axes' positions broadcast into every window's position."""
    n, c, size_out, k = read.shape
    view = [n, c] + [1] * (2 * dims)
    view[2 + axis], view[2 + dims + axis] = size_out, k
    return read.reshape(*view)


_FRACTIONAL_DOC = r"""Fractional max pooling: the maximum over {what} windows placed at random.

    Graham's fractional max pooling (2014): the output may shrink the input by any
    ratio, not only by an integer stride.  Along each axis window :math:`i` of the
    :math:`n_{{out}}` starts at :math:`\lfloor (i + u)\alpha \rfloor - \lfloor u\alpha
    \rfloor`, :math:`\alpha = (n_{{in}} - k)/(n_{{out}} - 1)`, with :math:`u \in [0, 1)`
    drawn per sample, channel and axis (the last window ends at the input's edge), as
    PyTorch places them; each window's first maximum is taken, and the gradient goes there.

    Parameters
    ----------
    input : Tensor
        {shape}.
    kernel_size : int or tuple of {d} ints
        The window.
    output_size : int or tuple of {d} ints, optional
        The output's spatial size (or give ``output_ratio``).
    output_ratio : float or tuple of {d} floats, optional
        The output's size as a fraction in :math:`(0, 1)` of the input's.
    return_indices : bool, default False
        Also return where each maximum is (flat over the spatial positions).
    _random_samples : Tensor, optional
        :math:`(N, C, {d})` draws in :math:`[0, 1)` to place the windows (PyTorch's
        argument, for reproducing a pooling); drawn with :func:`difflab.rand` when left out.

    Returns
    -------
    Tensor or (Tensor, Tensor)
        The pooled input (and the int64 indices of the maxima).

    Raises
    ------
    ValueError
        If neither ``output_size`` nor ``output_ratio`` is given, a ratio is outside
        :math:`(0, 1)`, the input has the wrong number of dimensions or the samples the
        wrong shape.
    RuntimeError
        If the windows would not fit: ``output_size + kernel_size - 1`` above the input's
        size (in 3-D, not below it, PyTorch's bound).

    See Also
    --------
    max_pool{d}d, difflab.nn.FractionalMaxPool{d}d

    Examples
    --------
    >>> import difflab as dl
    >>> x = {example}
    >>> u = dl.full({samples}, 0.5)
    >>> dl.nn.functional.fractional_max_pool{d}d(x, 2, output_size={size},
    ...                                          _random_samples=u).flatten().tolist()
    {result}
    """


def fractional_max_pool2d(input: Tensor, kernel_size: Any, output_size: Any = None,  # noqa: A002
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:
    return _fractional_max_pool("fractional_max_pool2d", input, kernel_size, output_size,
                                output_ratio, return_indices, _random_samples, 2)


def fractional_max_pool3d(input: Tensor, kernel_size: Any, output_size: Any = None,  # noqa: A002
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:
    return _fractional_max_pool("fractional_max_pool3d", input, kernel_size, output_size,
                                output_ratio, return_indices, _random_samples, 3)


fractional_max_pool2d.__doc__ = _FRACTIONAL_DOC.format(
    what="2-D", d=2, shape=r":math:`(N, C, H, W)` or :math:`(C, H, W)`",
    example="dl.arange(25.0).reshape(1, 1, 5, 5)", samples="(1, 1, 2)", size="(3, 3)",
    result="[6.0, 8.0, 9.0, 16.0, 18.0, 19.0, 21.0, 23.0, 24.0]")
fractional_max_pool3d.__doc__ = _FRACTIONAL_DOC.format(
    what="3-D", d=3, shape=r":math:`(N, C, D, H, W)` or :math:`(C, D, H, W)`",
    example="dl.arange(64.0).reshape(1, 1, 4, 4, 4)", samples="(1, 1, 3)", size="(2, 2, 2)",
    result="[21.0, 23.0, 29.0, 31.0, 53.0, 55.0, 61.0, 63.0]")


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: Any,  # noqa: A002
                                       output_size: Any = None, output_ratio: Any = None,
                                       return_indices: bool = True,
                                       _random_samples: Tensor | None = None) -> tuple:
    """:func:`fractional_max_pool2d` with ``return_indices=True``: (the maxima, their indices).

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, H, W)` or :math:`(C, H, W)`.
    kernel_size, output_size, output_ratio, _random_samples
        As in :func:`fractional_max_pool2d`.
    return_indices : bool, default True
        PyTorch's argument; the indices are always returned.

    Returns
    -------
    (Tensor, Tensor)
        The maxima and their int64 indices :math:`h W + w`.

    Raises
    ------
    ValueError
        As :func:`fractional_max_pool2d`.

    See Also
    --------
    fractional_max_pool2d, max_unpool2d

    Examples
    --------
    >>> import difflab as dl
    >>> x, u = dl.arange(25.0).reshape(1, 1, 5, 5), dl.full((1, 1, 2), 0.5)
    >>> y, i = dl.nn.functional.fractional_max_pool2d_with_indices(x, 2, 2, _random_samples=u)
    >>> i.flatten().tolist()
    [6, 9, 21, 24]
    """
    return fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True,
                                 _random_samples)


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: Any,  # noqa: A002
                                       output_size: Any = None, output_ratio: Any = None,
                                       return_indices: bool = True,
                                       _random_samples: Tensor | None = None) -> tuple:
    """:func:`fractional_max_pool3d` with ``return_indices=True``: (the maxima, their indices).

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, D, H, W)` or :math:`(C, D, H, W)`.
    kernel_size, output_size, output_ratio, _random_samples
        As in :func:`fractional_max_pool3d`.
    return_indices : bool, default True
        PyTorch's argument; the indices are always returned.

    Returns
    -------
    (Tensor, Tensor)
        The maxima and their int64 indices :math:`(d H + h) W + w`.

    Raises
    ------
    ValueError
        As :func:`fractional_max_pool3d`.

    See Also
    --------
    fractional_max_pool3d, max_unpool3d

    Examples
    --------
    >>> import difflab as dl
    >>> x, u = dl.arange(27.0).reshape(1, 1, 3, 3, 3), dl.full((1, 1, 3), 0.5)
    >>> y, i = dl.nn.functional.fractional_max_pool3d_with_indices(x, 2, 1, _random_samples=u)
    >>> i.flatten().tolist()
    [26]
    """
    return fractional_max_pool3d(input, kernel_size, output_size, output_ratio, True,
                                 _random_samples)
