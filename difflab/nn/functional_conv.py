r"""Convolutions beyond ``conv2d`` in ``torch.nn.functional``: 1-D and 3-D, transposed, unfold/fold.

Each is a composite of operations that already have derivative rules (no rule
of its own), so reverse mode, forward mode and the static graphs get them by
the chain rule:

* a 1-D signal (N, C, L) is an image (N, C, 1, L) one pixel high, so
  ``conv1d`` and the 1-D pools are the 2-D ones, and so are their gradients;
* ``unfold`` (im2col) is a grouped convolution with one-hot kernels;
* a transposed convolution is a convolution of the input spread out by the
  stride (zeros in between) with the flipped kernel: the adjoint of a
  strided convolution; ``fold`` is the transposed convolution with
  ``unfold``'s kernels, i.e. its adjoint;
* ``conv3d`` is a sum of 2-D convolutions over the kernel's depth.
"""

from __future__ import annotations

from typing import Any

from difflab import backend
from difflab.autograd.engine import apply
from difflab.functions import permute
from difflab.nn.functional_core import (
    _as_image,
    _check_input,
    _max_indices,
    _single,
    _window,
    avg_pool2d,
    conv2d,
    max_pool2d,
)
from difflab.nn.functional_windows import _without_added_batch
from difflab.ops import nn_conv
from difflab.tensor import Tensor
from difflab.tensor_arguments import require_tensor

__all__ = ["avg_pool1d", "conv1d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "fold", "max_pool1d", "unfold"]


# ------------------------------------------------------------------- 1-D convolution, pooling


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
           stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    r"""1-D convolution (cross-correlation) of ``input`` (N, C, L) with ``weight`` (O, C/groups, k).

    Computed as :func:`conv2d` on the input seen as images one pixel high,
    (N, C, 1, L) with a (O, C/groups, 1, k) kernel, so it has conv2d's forward
    and reverse rules and the same speed.

    Parameters
    ----------
    input : Tensor
        (N, C, L), or (C, L) for one unbatched signal.
    weight : Tensor
        (O, C/groups, k).
    bias : Tensor, optional
        (O,).
    stride, padding, dilation : int or 1-tuple
        As in PyTorch; ``padding`` may also be ``'valid'`` or ``'same'`` (stride 1).
    groups : int
        Split the channels into groups convolved separately.

    Returns
    -------
    Tensor
        (N, O, L_out) with L_out = ⌊(L + 2·padding - dilation·(k - 1) - 1) / stride⌋ + 1.

    Raises
    ------
    TypeError
        If a window argument (stride, padding, dilation, groups) is a float or another non-int.
    ValueError
        If ``stride`` or ``dilation`` or ``groups`` is below 1, or ``padding`` is negative.

    See Also
    --------
    conv2d, conv_transpose1d, difflab.nn.Conv1d

    Notes
    -----
    .. math::
        \text{out}(n, o, l) = b_o + \sum_{c, m} W(o, c, m)\, x(n, g(o) + c, s\,l + d\,m - p)

        L_{out} = \left\lfloor \frac{L_{in} + 2p - d(k - 1) - 1}{s} \right\rfloor + 1

    Computed as :func:`conv2d` on the signal seen as an image one pixel high, so it has
    conv2d's derivative rules.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([[[1., 2., 3., 4.]]])          # (N=1, C=1, L=4)
    >>> w = dl.tensor([[[1., 0., -1.]]])             # a difference kernel
    >>> dl.nn.functional.conv1d(x, w)
    tensor([[[-2., -2.]]])
    """
    x, unbatched = _as_image("conv1d", input)
    if not hasattr(weight, "ndim") or weight.ndim != 3:  # (a dual number, symbols too)
        raise ValueError(f"conv1d: weight must be a 3-D tensor (out_channels, in_channels / "
                         f"groups, kernel), got {getattr(weight, 'shape', weight)!r}")
    weight = _check_input("conv1d", weight, "weight")
    if not isinstance(padding, str):
        padding = (0, _single("conv1d", padding, "padding"))
    out = conv2d(x, weight.unsqueeze(2), bias, (1, _single("conv1d", stride, "stride")),
                 padding, (1, _single("conv1d", dilation, "dilation")), groups).squeeze(2)
    return out.squeeze(0) if unbatched else out


def _pool1d_args(name: str, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool
                 ) -> tuple:
    if ceil_mode:
        raise NotImplementedError(f"{name}: ceil_mode=True is not supported in difflab; pad "
                                  "the input (F.pad) so the windows fit, or use ceil_mode=False")
    kernel = _single(name, kernel_size, "kernel_size")
    stride = kernel if stride is None or stride == () else _single(name, stride, "stride")
    return (1, kernel), (1, stride), (0, _single(name, padding, "padding"))


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False
               ) -> Tensor:
    r"""The maximum of each window of ``kernel_size`` along the last dimension of (N, C, L).

    :func:`max_pool2d` on the input seen as images one pixel high; the
    gradient goes to each window's arg-max.

    Parameters
    ----------
    input : Tensor
        (N, C, L) or (C, L).
    kernel_size : int
        Window length.
    stride : int, optional
        Step between windows (default: ``kernel_size``).
    padding : int
        Implicit -inf padding on both sides (at most half the window).
    dilation : int
        Spacing between the window's elements.
    ceil_mode : bool
        Only False is supported (a clear error otherwise).
    return_indices : bool, default False
        Also return where each maximum is (its position along L), as
        :func:`difflab.nn.functional.max_unpool1d` takes them.

    Returns
    -------
    Tensor or (Tensor, Tensor)
        (N, C, L_out); with ``return_indices``, also the int64 indices of the maxima.

    Raises
    ------
    TypeError
        If a window argument (kernel_size, stride, padding, dilation) is a float or another non-int.
    ValueError
        If ``kernel_size`` or ``stride`` or ``dilation`` is below 1, or ``padding`` is negative.

    See Also
    --------
    avg_pool1d, max_pool2d, difflab.nn.MaxPool1d

    Notes
    -----
    .. math::
        \text{out}(n, c, l) = \max_{m < k} x(n, c, s\,l + d\,m - p)

        L_{out} = \left\lfloor \frac{L_{in} + 2p - d(k - 1) - 1}{s} \right\rfloor + 1

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.functional.max_pool1d(dl.tensor([[[1., 5., 2., 0., 3., 4.]]]), 2)
    tensor([[[5., 2., 4.]]])
    """
    kernel, stride, padding = _pool1d_args("max_pool1d", kernel_size, stride, padding, ceil_mode)
    x, unbatched = _as_image("max_pool1d", input)
    dilation = (1, _single("max_pool1d", dilation, "dilation"))
    out = max_pool2d(x, kernel, stride, padding, dilation).squeeze(2)
    if return_indices:
        out = out, _max_indices(x.squeeze(2), kernel[1:], stride[1:], padding[1:],
                                dilation[1:])
    return _without_added_batch(out, unbatched)


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    r"""The mean of each window of ``kernel_size`` along the last dimension of (N, C, L).

    :func:`avg_pool2d` on the input seen as images one pixel high.

    Parameters
    ----------
    input : Tensor
        (N, C, L) or (C, L).
    kernel_size : int
        Window length.
    stride : int, optional
        Step between windows (default: ``kernel_size``).
    padding : int
        Zero padding on both sides, counted in the mean (``count_include_pad=True``).
    ceil_mode : bool
        Only False is supported.
    count_include_pad : bool
        Only True is supported (PyTorch's default).

    Returns
    -------
    Tensor
        (N, C, L_out).

    Raises
    ------
    TypeError
        If a window argument (kernel_size, stride, padding) is a float or another non-int.
    ValueError
        If ``kernel_size`` or ``stride`` is below 1, or ``padding`` is negative.

    See Also
    --------
    max_pool1d, avg_pool2d, difflab.nn.AvgPool1d

    Notes
    -----
    .. math::
        \text{out}(n, c, l) = \frac{1}{k} \sum_{m < k} x(n, c, s\,l + m - p)

        L_{out} = \left\lfloor \frac{L_{in} + 2p - k}{s} \right\rfloor + 1

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.functional.avg_pool1d(dl.tensor([[[1., 3., 2., 4.]]]), 2)
    tensor([[[2., 3.]]])
    """
    if not count_include_pad:
        raise NotImplementedError("avg_pool1d: count_include_pad=False is not supported in "
                                  "difflab (the padding's zeros count in each mean)")
    kernel, stride, padding = _pool1d_args("avg_pool1d", kernel_size, stride, padding, ceil_mode)
    x, unbatched = _as_image("avg_pool1d", input)
    out = avg_pool2d(x, kernel, stride, padding).squeeze(2)
    return out.squeeze(0) if unbatched else out


# -------------------------------------------------------------------- unfold and friends


def _one_hot_kernels(channels: int, kh: int, kw: int, like: Tensor) -> Tensor:
    """(C·kh·kw, 1, kh, kw): kernel c·K + k picks position k of channel c (``groups=C``)."""
    xp = backend.array_module(like.array)
    eye = xp.eye(kh * kw, dtype=like.dtype).reshape(kh * kw, 1, kh, kw)
    return Tensor._wrap(xp.tile(eye, (channels, 1, 1, 1)))


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,  # noqa: A002
           stride: Any = 1) -> Tensor:
    """im2col: every sliding (C, kh, kw) block of (N, C, H, W) as a column: (N, C·kh·kw, L).

    A grouped convolution with one-hot kernels, so it runs at convolution
    speed and its gradient is the convolution's.

    Parameters
    ----------
    input : Tensor
        :math:`(N, C, H, W)` or :math:`(C, H, W)`.
    kernel_size : int or tuple of 2 ints
        The block's size :math:`(k_h, k_w)`.
    dilation, padding, stride : int or tuple of 2 ints
        As in :func:`conv2d` (defaults 1, 0, 1).

    Returns
    -------
    Tensor
        :math:`(N, C k_h k_w, L)`, :math:`L` the number of block positions.

    Raises
    ------
    ValueError
        If the input is not 3-D or 4-D.
    TypeError
        If a window argument (kernel_size, stride, padding, dilation) is a float or another non-int.
    ValueError
        If ``kernel_size`` or ``stride`` or ``dilation`` is below 1, or ``padding`` is negative.

    See Also
    --------
    fold : the adjoint.
    difflab.nn.Unfold

    Examples
    --------
    >>> import difflab as dl
    >>> cols = dl.nn.functional.unfold(dl.arange(9.0).reshape(1, 1, 3, 3), 2)
    >>> cols.shape, cols[0, :, 0].tolist()
    (difflab.Size([1, 4, 4]), [0.0, 1.0, 3.0, 4.0])
    """
    x = _check_input("unfold", input)
    if x.ndim not in (3, 4):
        raise ValueError(f"unfold expects a 3-D or 4-D input, got shape {tuple(x.shape)}")
    unbatched = x.ndim == 3
    x = x.reshape((1,) + tuple(x.shape)) if unbatched else x
    kh, kw = _window("unfold", kernel_size, "kernel_size")
    stride, padding = _window("unfold", stride, "stride"), _window("unfold", padding, "padding")
    dilation = _window("unfold", dilation, "dilation")
    c = x.shape[1]
    if not isinstance(x, Tensor):  # dual numbers, sympy expressions: the im2col primitive
        win = apply(nn_conv.Im2Col, x, kernel=(kh, kw), stride=stride,
                    padding=padding, dilation=dilation)  # (N, C, OH, OW, kh, kw)
        cols = permute(win, (0, 1, 4, 5, 2, 3))
    else:
        cols = conv2d(x, _one_hot_kernels(c, kh, kw, x), None, stride, padding, dilation,
                      groups=c)
    # (the number of blocks spelled out: -1 cannot be inferred for an empty batch)
    blocks = cols.shape[-2] * cols.shape[-1]  # (OH · OW, the last two in both layouts)
    cols = cols.reshape((x.shape[0], c * kh * kw, blocks))
    return cols.reshape(tuple(cols.shape[1:])) if unbatched else cols


def _spread(x: Tensor, stride: tuple[int, int]) -> Tensor:
    """(N, C, H, W) with stride-1 zeros between rows and columns: ((H-1)s+1, (W-1)s+1)."""
    from difflab.nn.functional_core import pad

    n, c, h, w = x.shape
    sh, sw = stride
    if sh > 1:
        x = pad(x.unsqueeze(3), (0, 0, 0, sh - 1)).reshape(n, c, h * sh, w)
        x = x[:, :, :(h - 1) * sh + 1]
    if sw > 1:
        x = pad(x.unsqueeze(-1), (0, sw - 1)).reshape(n, c, x.shape[2], w * sw)
        x = x[..., :(w - 1) * sw + 1]
    return x


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    r"""The transposed ("fractionally strided") convolution: the adjoint of :func:`conv2d`.

    ``weight`` is (C_in, C_out/groups, kh, kw).  The output has side
    (H - 1)·stride - 2·padding + dilation·(k - 1) + output_padding + 1.
    Computed as a convolution of the input spread out by the stride with the
    flipped kernel, so it has conv2d's rules and speed.

    Parameters
    ----------
    input : Tensor
        (N, C_in, H, W) or (C_in, H, W).
    weight : Tensor
    bias : Tensor, optional
        (C_out,).
    stride, padding, output_padding, dilation : int or pair
    groups : int

    Returns
    -------
    Tensor

    Raises
    ------
    TypeError
        If a window argument (stride, padding, dilation, output_padding, groups) is a float
        or another non-int.
    ValueError
        If ``stride`` or ``dilation`` or ``groups`` is below 1, or ``padding`` or
        ``output_padding`` is negative.

    See Also
    --------
    conv2d, conv_transpose1d, difflab.nn.ConvTranspose2d

    Notes
    -----
    .. math::
        H_{out} = (H_{in} - 1)\,s_0 - 2p_0 + d_0 (k_0 - 1) + \text{output\_padding}_0 + 1

    It is the adjoint of :func:`conv2d`: for the same weight, :math:`\langle \text{conv2d}(x),
    y\rangle =
    \langle x, \text{conv\_transpose2d}(y)\rangle` (at stride 1 without padding).

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.ones(1, 1, 2, 2)
    >>> dl.nn.functional.conv_transpose2d(x, dl.ones(1, 1, 2, 2), stride=2).shape
    difflab.Size([1, 1, 4, 4])
    >>> dl.nn.functional.conv_transpose2d(x, dl.ones(1, 1, 2, 2))[0, 0].tolist()
    [[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]
    """
    from difflab.nn.functional_core import pad

    x = _check_input("conv_transpose2d", input)  # (dual numbers, symbols: pad and conv2d)
    if x.ndim not in (3, 4):
        raise ValueError(f"conv_transpose2d expects a 3-D or 4-D input, got {tuple(x.shape)}")
    unbatched = x.ndim == 3
    x = x.unsqueeze(0) if unbatched else x
    c_in, c_out_g, kh, kw = require_tensor(weight, "conv_transpose2d", "weight").shape
    groups = _window("conv_transpose2d", groups, "groups", 1)[0]
    if x.shape[1] != c_in or c_in % groups:
        raise ValueError(f"conv_transpose2d: weight {tuple(weight.shape)} expects {c_in} input "
                         f"channels (divisible by groups={groups}), got input "
                         f"{tuple(x.shape)}")
    stride = _window("conv_transpose2d", stride, "stride")
    padding = _window("conv_transpose2d", padding, "padding")
    output_padding = _window("conv_transpose2d", output_padding, "output_padding")
    dilation = _window("conv_transpose2d", dilation, "dilation")
    if any(o >= max(s, d) for o, s, d in zip(output_padding, stride, dilation)):
        raise ValueError(f"conv_transpose2d: output_padding {output_padding} must be smaller "
                         f"than stride {stride} or dilation {dilation}")
    # (C_in, C_out/g, kh, kw) -> (C_out, C_in/g, kh, kw), flipped: the adjoint's kernel
    w = weight.reshape(groups, c_in // groups, c_out_g, kh, kw).transpose(1, 2)
    w = w.reshape(groups * c_out_g, c_in // groups, kh, kw).flip((2, 3))
    spread = _spread(x, stride)
    qh, qw = (d * (k - 1) - p for d, k, p in zip(dilation, (kh, kw), padding))
    spread = pad(spread, (qw, qw + output_padding[1], qh, qh + output_padding[0]))
    out = conv2d(spread, w, bias, 1, 0, dilation, groups)
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    r"""The transposed 1-D convolution: :func:`conv_transpose2d` on signals one pixel high.

    Parameters
    ----------
    input : Tensor
        :math:`(N, C_{in}, L)` or :math:`(C_{in}, L)`.
    weight : Tensor
        :math:`(C_{in}, C_{out}/\text{groups}, k)`.
    bias : Tensor, optional
        :math:`(C_{out},)`.
    stride, padding, output_padding, dilation : int or 1-tuple
        As in :func:`conv_transpose2d`.
    groups : int, default 1
        Independent groups of channels.

    Returns
    -------
    Tensor
        :math:`(N, C_{out}, L_{out})`,
        :math:`L_{out} = (L - 1)s - 2p + d(k - 1) + \text{output\_padding} + 1`.

    Raises
    ------
    ValueError
        If the input is not 2-D or 3-D, or an option is not an int or a 1-tuple.
    TypeError
        If a window argument (stride, padding, dilation, output_padding, groups) is a float
        or another non-int.
    ValueError
        If ``stride`` or ``dilation`` or ``groups`` is below 1, or ``padding`` or
        ``output_padding`` is negative.

    See Also
    --------
    conv_transpose2d, conv1d, difflab.nn.ConvTranspose1d

    Examples
    --------
    >>> import difflab as dl
    >>> y = dl.nn.functional.conv_transpose1d(dl.ones(1, 1, 3), dl.ones(1, 1, 2), stride=2)
    >>> y.tolist()
    [[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0]]]
    """
    from difflab.nn.functional_core import _single

    x = _check_input("conv_transpose1d", input)
    if x.ndim not in (2, 3):
        raise ValueError(f"conv_transpose1d expects a 2-D or 3-D input, got {tuple(x.shape)}")

    def one(v: Any, what: str) -> tuple[int, int]:
        return (0 if what in ("padding", "output_padding") else 1), _single(
            "conv_transpose1d", v, what)

    out = conv_transpose2d(x.unsqueeze(-2), weight.unsqueeze(-2), bias, one(stride, "stride"),
                           one(padding, "padding"), one(output_padding, "output_padding"),
                           groups, one(dilation, "dilation"))
    return out.squeeze(-2)


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1,  # noqa: A002
         padding: Any = 0, stride: Any = 1) -> Tensor:
    r"""col2im, the adjoint of :func:`unfold`: add columns of blocks back into an image.

    Column :math:`l` of the :math:`(N, C k_h k_w, L)` input is written to the
    :math:`l`-th block position of an :math:`(N, C, H, W)` image (row by row), and where
    blocks overlap their values add up.

    Parameters
    ----------
    input : Tensor
        :math:`(N, C k_h k_w, L)` or :math:`(C k_h k_w, L)`.
    output_size : int or tuple of 2 ints
        :math:`(H, W)`.
    kernel_size : int or tuple of 2 ints
        :math:`(k_h, k_w)`.
    dilation, padding, stride : int or tuple of 2 ints
        As in :func:`unfold`.

    Returns
    -------
    Tensor
        :math:`(N, C, H, W)` (or without :math:`N`), overlapping blocks added up.

    Raises
    ------
    ValueError
        If the input is not 2-D or 3-D.
    RuntimeError
        If dimension 1 is not divisible by :math:`k_h k_w`, or :math:`L` is not the
        number of blocks that fit ``output_size``.
    TypeError
        If a window argument (kernel_size, stride, padding, dilation, output_size) is a
        float or another non-int.
    ValueError
        If ``kernel_size`` or ``stride`` or ``dilation`` is below 1, or ``padding`` is negative.

    See Also
    --------
    unfold : im2col, the adjoint.
    difflab.nn.Fold : the module form.

    Notes
    -----
    ``fold`` is linear, and the adjoint of ``unfold`` for the same settings:
    :math:`\langle \operatorname{fold}(c), x \rangle = \langle c, \operatorname{unfold}(x)
    \rangle`, so each is the other's gradient.  :math:`L` must be

    .. math::
        L = \prod_{i \in \{h, w\}} \left\lfloor
            \frac{\text{output\_size}_i + 2 p_i - d_i (k_i - 1) - 1}{s_i} \right\rfloor + 1 .

    Examples
    --------
    >>> import difflab as dl
    >>> F = dl.nn.functional
    >>> ones = F.unfold(dl.ones(1, 1, 3, 3), 2)
    >>> F.fold(ones, (3, 3), 2)[0, 0].tolist()      # how many blocks cover each pixel
    [[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]
    """
    x = _check_input("fold", input)
    if x.ndim not in (2, 3):
        raise ValueError(f"fold expects a 2-D or 3-D input (N, C·kh·kw, L), got "
                         f"{tuple(x.shape)}")
    unbatched = x.ndim == 2
    x = x.reshape((1,) + tuple(x.shape)) if unbatched else x
    (oh, ow), (kh, kw) = (_window("fold", output_size, "output_size"),
                          _window("fold", kernel_size, "kernel_size"))
    (dh, dw), (ph, pw), (sh, sw) = (_window("fold", dilation, "dilation"),
                                    _window("fold", padding, "padding"),
                                    _window("fold", stride, "stride"))
    if x.shape[1] % (kh * kw):
        raise RuntimeError(f"fold: expected the size of dimension 1 ({x.shape[1]}) to be "
                           f"divisible by the kernel's {kh * kw} positions")
    blocks_h = (oh + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    blocks_w = (ow + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    if blocks_h * blocks_w != x.shape[2]:
        raise RuntimeError(f"fold: expected {blocks_h * blocks_w} blocks for output_size "
                           f"{(oh, ow)}, got {x.shape[2]}")
    c = x.shape[1] // (kh * kw)
    if not isinstance(x, Tensor):  # dual numbers, sympy expressions: the col2im primitive
        win = permute(x.reshape((x.shape[0], c, kh, kw, blocks_h, blocks_w)), (0, 1, 4, 5, 2, 3))
        out = apply(nn_conv.Col2Im, win, x_shape=(x.shape[0], c, oh, ow), kernel=(kh, kw),
                    stride=(sh, sw), padding=(ph, pw), dilation=(dh, dw))
        return out.reshape(tuple(out.shape[1:])) if unbatched else out
    grid = x.reshape(x.shape[0], c * kh * kw, blocks_h, blocks_w)
    # the output side conv_transpose2d gives, and the padding that makes it output_size
    full_h = (blocks_h - 1) * sh - 2 * ph + dh * (kh - 1) + 1
    full_w = (blocks_w - 1) * sw - 2 * pw + dw * (kw - 1) + 1
    out = conv_transpose2d(grid, _one_hot_kernels(c, kh, kw, x), None, (sh, sw), (ph, pw),
                           (oh - full_h, ow - full_w), c, (dh, dw))
    return out.squeeze(0) if unbatched else out


# ----------------------------------------------------------------------------- conv3d


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
           stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    r"""3-D convolution of (N, C, D, H, W) with ``weight`` (O, C/groups, kd, kh, kw).

    One :func:`conv2d`: the kd depth slices each output depth reads are
    stacked as extra channels, and the output depths become extra batch
    entries, so the work is a single 2-D convolution (and its gradient the
    2-D one's).

    Parameters
    ----------
    input : Tensor
        (N, C, D, H, W) or unbatched (C, D, H, W).
    weight : Tensor
    bias : Tensor, optional
    stride, padding, dilation : int or triple
        ``padding`` may be ``'valid'`` or ``'same'`` (stride 1, odd effective kernel).
    groups : int

    Returns
    -------
    Tensor
        (N, O, D_out, H_out, W_out).

    Raises
    ------
    TypeError
        If a window argument (stride, padding, dilation, groups) is a float or another non-int.
    ValueError
        If ``stride`` or ``dilation`` or ``groups`` is below 1, or ``padding`` is negative.

    See Also
    --------
    conv2d, difflab.nn.Conv3d

    Notes
    -----
    .. math::
        \text{out}(n, o, i, j, l) = b_o + \sum_{c, a, b, e} W(o, c, a, b, e)\, x(n, g(o)
        + c, \ldots)

    Each output side follows :func:`conv2d`'s formula.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.ones(1, 1, 3, 3, 3)
    >>> dl.nn.functional.conv3d(x, dl.ones(1, 1, 2, 2, 2)).tolist()[0][0][0]
    [[8.0, 8.0], [8.0, 8.0]]
    """
    from difflab.functions import stack
    from difflab.nn.functional_core import pad

    x = _check_input("conv3d", input)
    if x.ndim not in (4, 5):
        raise ValueError(f"conv3d expects a 4-D (unbatched) or 5-D input (N, C, D, H, W), got "
                         f"shape {tuple(x.shape)}")
    unbatched = x.ndim == 4
    x = x.unsqueeze(0) if unbatched else x
    if not hasattr(weight, "ndim") or weight.ndim != 5:  # (a dual number, symbols too)
        raise ValueError("conv3d: weight must be a 5-D tensor (out, in/groups, kd, kh, kw)")
    weight = _check_input("conv3d", weight, "weight")
    o, cg, kd, kh, kw = weight.shape
    groups = _window("conv3d", groups, "groups", 1)[0]
    n, c, depth = x.shape[:3]
    if c != cg * groups:
        raise ValueError(f"conv3d expected input with {cg * groups} channels, got {c} (input "
                         f"shape {tuple(x.shape)})")
    (sd, sh, sw) = _window("conv3d", stride, "stride", 3)
    (dd, dh, dw) = _window("conv3d", dilation, "dilation", 3)
    if isinstance(padding, str):
        if padding == "valid":
            padding = 0
        elif padding == "same":
            totals = (dd * (kd - 1), dh * (kh - 1), dw * (kw - 1))
            if (sd, sh, sw) != (1, 1, 1) or any(t % 2 for t in totals):
                raise ValueError("conv3d: padding='same' needs stride 1 and an odd effective "
                                 "kernel size")
            padding = tuple(t // 2 for t in totals)
        else:
            raise ValueError(f"conv3d: padding must be an int, a triple, 'same' or 'valid', "
                             f"got {padding!r}")
    pd, ph, pw = _window("conv3d", padding, "padding", 3)
    if pd:
        x = pad(x, (0, 0, 0, 0, pd, pd))
    out_depth = (depth + 2 * pd - dd * (kd - 1) - 1) // sd + 1
    if out_depth < 1:
        raise ValueError(f"conv3d: the kernel's depth {kd} (dilation {dd}) is larger than the "
                         f"padded input's depth {depth + 2 * pd}")
    span = (out_depth - 1) * sd + 1
    slices = [x[:, :, a * dd:a * dd + span:sd] for a in range(kd)]  # each (N, C, D_out, H, W)
    stacked = stack(slices, 2).reshape(n, c * kd, out_depth, *x.shape[3:])
    images = stacked.permute(0, 2, 1, 3, 4).reshape(n * out_depth, c * kd, *x.shape[3:])
    kernels = weight.reshape(o, cg * kd, kh, kw)
    out = conv2d(images, kernels, bias, (sh, sw), (ph, pw), (dh, dw), groups)
    out = out.reshape(n, out_depth, o, *out.shape[2:]).permute(0, 2, 1, 3, 4)
    return out.squeeze(0) if unbatched else out


# ------------------------------------------------------------------ transposed 3-D convolution


def _spread_axis(x: Tensor, axis: int, stride: int) -> Tensor:
    """``x`` with ``stride - 1`` zeros between its entries along ``axis``: L -> (L-1)s+1."""
    from difflab.nn.functional_core import pad

    if stride == 1:
        return x
    length = x.shape[axis]
    after = x.ndim - axis  # the new axis' place counted from the end (pad's order)
    widths = [0, 0] * (after - 1) + [0, stride - 1]
    spread = pad(x.unsqueeze(axis + 1), widths)
    shape = tuple(x.shape[:axis]) + (length * stride,) + tuple(x.shape[axis + 1:])
    return spread.reshape(shape).narrow(axis, 0, (length - 1) * stride + 1)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    r"""The transposed 3-D convolution: the adjoint of :func:`conv3d`.

    Computed as :func:`conv3d` of the input spread out by the stride (zeros
    between its entries) with the flipped kernel, whose channels in and out
    swap within each group, so it has conv3d's (that is, conv2d's) rules.

    Parameters
    ----------
    input : Tensor
        :math:`(N, C_{in}, D, H, W)` or :math:`(C_{in}, D, H, W)`.
    weight : Tensor
        :math:`(C_{in}, C_{out}/\text{groups}, k_d, k_h, k_w)`, PyTorch's layout.
    bias : Tensor, optional
        :math:`(C_{out},)`.
    stride, padding, output_padding, dilation : int or tuple of 3 ints
        Defaults 1, 0, 0, 1; ``output_padding`` must be smaller than the stride or the
        dilation.
    groups : int, default 1
        Independent groups of channels.

    Returns
    -------
    Tensor
        :math:`(N, C_{out}, D_{out}, H_{out}, W_{out})` (or without :math:`N`).

    Raises
    ------
    ValueError
        If the input is not 4-D or 5-D, the weight not 5-D, the channels do not match
        the weight or ``groups``, ``output_padding`` is not smaller than the stride or
        the dilation, or a window argument is out of range.
    TypeError
        If a window argument is a float or another non-int.

    See Also
    --------
    conv3d, conv_transpose2d, difflab.nn.ConvTranspose3d

    Notes
    -----
    .. math::
        D_{out} = (D_{in} - 1)\,s_d - 2p_d + d_d (k_d - 1) + \text{output\_padding}_d + 1

    and the same for :math:`H_{out}` and :math:`W_{out}`.  For the same weight,
    :math:`\langle \text{conv3d}(x), y\rangle = \langle x, \text{conv\_transpose3d}(y)\rangle`.

    Examples
    --------
    >>> import difflab as dl
    >>> F = dl.nn.functional
    >>> F.conv_transpose3d(dl.ones(1, 1, 2, 2, 2), dl.ones(1, 1, 2, 2, 2), stride=2).shape
    difflab.Size([1, 1, 4, 4, 4])
    >>> F.conv_transpose3d(dl.ones(1, 1, 2, 2, 2), dl.ones(1, 1, 2, 2, 2))[0, 0, 1].tolist()
    [[2.0, 4.0, 2.0], [4.0, 8.0, 4.0], [2.0, 4.0, 2.0]]
    """
    from difflab.nn.functional_core import pad

    name = "conv_transpose3d"
    x = _check_input(name, input)
    if x.ndim not in (4, 5):
        raise ValueError(f"{name} expects a 4-D (unbatched) or 5-D input (N, C, D, H, W), got "
                         f"shape {tuple(x.shape)}")
    unbatched = x.ndim == 4
    x = x.unsqueeze(0) if unbatched else x
    weight = require_tensor(weight, name, "weight")
    if weight.ndim != 5:
        raise ValueError(f"{name}: weight must be a 5-D tensor (in, out/groups, kd, kh, kw), "
                         f"got shape {tuple(weight.shape)}")
    c_in, c_out_g, *kernel = weight.shape
    groups = _window(name, groups, "groups", 1)[0]
    if x.shape[1] != c_in or c_in % groups:
        raise ValueError(f"{name}: weight {tuple(weight.shape)} expects {c_in} input channels "
                         f"(divisible by groups={groups}), got input {tuple(x.shape)}")
    stride = _window(name, stride, "stride", 3)
    padding = _window(name, padding, "padding", 3)
    output_padding = _window(name, output_padding, "output_padding", 3)
    dilation = _window(name, dilation, "dilation", 3)
    if any(o >= max(s, d) for o, s, d in zip(output_padding, stride, dilation)):
        raise ValueError(f"{name}: output_padding {output_padding} must be smaller than stride "
                         f"{stride} or dilation {dilation}")
    # (C_in, C_out/g, k...) -> (C_out, C_in/g, k...), flipped: the adjoint's kernel
    w = weight.reshape(groups, c_in // groups, c_out_g, *kernel).transpose(1, 2)
    w = w.reshape(groups * c_out_g, c_in // groups, *kernel).flip((2, 3, 4))
    for axis, s in zip((2, 3, 4), stride):
        x = _spread_axis(x, axis, s)
    widths: list = []
    for k, p, d, o in reversed(list(zip(kernel, padding, dilation, output_padding))):
        q = d * (k - 1) - p
        widths += [q, q + o]
    out = conv3d(pad(x, widths), w, bias, 1, 0, dilation, groups)
    return out.squeeze(0) if unbatched else out
