"""Layers: linear, convolution, pooling, normalisation, dropout, reshaping, embedding,
activations.  Each holds its parameters and calls :mod:`difflab.nn.functional`."""

from __future__ import annotations

from typing import Any

import numpy as np

from difflab.autograd import no_grad
from difflab.dtypes import _Defaults
from difflab.nn import functional as F
from difflab.nn import init
from difflab.nn.modules.module import Module
from difflab.nn.parameter import Parameter
from difflab.tensor import Tensor
from difflab.tensor_arguments import integer


def _empty(*shape: int, dtype: Any = None, device: Any = None) -> Parameter:
    from difflab.creation import zeros

    return Parameter(zeros(*shape, dtype=dtype or _Defaults.dtype, device=device))


class Identity(Module):
    """The identity: returns its input unchanged (a placeholder where a layer is optional).

    Parameters
    ----------
    *args, **kwargs
        Accepted and ignored, so ``Identity`` can stand in for any layer's constructor.

    Shape
    -----
    - Input: :math:`(*)`, any shape.
    - Output: :math:`(*)`, the input itself (the same object).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> x = dl.ones(2, 3)
    >>> nn.Identity(54, unused="argument")(x) is x
    True
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, x: Any) -> Any:
        return x


class Linear(Module):
    r"""An affine map of the last dimension: :math:`y = x W^\top + b`.

    One fused primitive computes it, with the derivative rules
    :math:`\bar x = \bar y W`, :math:`\bar W = \bar y^\top x`, :math:`\bar b = \sum \bar y`
    (summed over the leading dimensions).

    Parameters
    ----------
    in_features : int
        Size of each input sample (the last dimension of ``x``).
    out_features : int
        Size of each output sample.
    bias : bool, default True
        ``False`` leaves out :math:`b` (``self.bias is None``).
    device : str or difflab.device, optional
        Where the parameters live (the CPU by default).
    dtype : difflab dtype, optional
        The parameters' dtype (the default dtype, float32, by default).

    Attributes
    ----------
    weight : Parameter
        Shape ``(out_features, in_features)``, drawn from :math:`\mathcal U(-k, k)`,
        :math:`k = 1/\sqrt{\text{in\_features}}`.
    bias : Parameter or None
        Shape ``(out_features,)``, drawn from the same :math:`\mathcal U(-k, k)`.

    Shape
    -----
    - Input: :math:`(*, H_{in})`, :math:`H_{in} = \text{in\_features}`, with any leading
      dimensions.
    - Output: :math:`(*, H_{out})`, :math:`H_{out} = \text{out\_features}`.

    Raises
    ------
    ValueError
        When the input's last dimension is not ``in_features`` (the message gives both).
    TypeError
        When ``in_features`` or ``out_features`` is not an int.

    See Also
    --------
    difflab.nn.functional.linear : the same map with explicit weights.
    Bilinear : :math:`y = x_1^\top A x_2 + b`.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> _ = dl.manual_seed(0)
    >>> m = nn.Linear(20, 30)
    >>> m(dl.randn(128, 20)).shape
    difflab.Size([128, 30])
    >>> m.weight.shape, m.bias.shape
    (difflab.Size([30, 20]), difflab.Size([30]))
    >>> m(dl.randn(128, 3))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: Linear expected input with 20 features ... got input of shape (128, 3)
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        # (checked before int(): a float was truncated, None was "int() argument must be ...")
        self.in_features = integer(in_features, "Linear", "in_features")
        self.out_features = integer(out_features, "Linear", "out_features")
        self.weight = _empty(out_features, in_features, dtype=dtype, device=device)
        if bias:
            self.bias = _empty(out_features, dtype=dtype, device=device)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        r"""Draw new weights and bias from PyTorch's default, :math:`\mathcal U(-k, k)`.

        Here :math:`k = 1/\sqrt{\text{fan\_in}}`.

        Returns
        -------
        None

        See Also
        --------
        difflab.nn.init.default_linear_init_ : the initialiser it calls.

        Examples
        --------
        >>> from difflab import nn
        >>> m = nn.Linear(4, 2)
        >>> _ = nn.init.zeros_(m.weight)
        >>> m.reset_parameters()
        >>> bool((m.weight != 0).all() and m.weight.abs().max() <= 0.5)
        True
        """
        init.default_linear_init_(self.weight, self.bias)

    def forward(self, x: Tensor) -> Tensor:
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")



def _channels(name: str, in_channels: Any, out_channels: Any, groups: Any) -> tuple[int, int]:
    """A convolution layer's channel counts: ints, not negative, each divisible by
    ``groups`` (a positive int; 0 was Python's bare ZeroDivisionError)."""
    groups = F._window(name, groups, "groups", 1)[0]
    counts = (integer(in_channels, name, "in_channels"),
              integer(out_channels, name, "out_channels"))
    if counts[0] % groups or counts[1] % groups:
        raise ValueError(f"in_channels ({counts[0]}) and out_channels ({counts[1]}) must both "
                         f"be divisible by groups ({groups})")
    return counts

class Conv2d(Module):
    r"""2-D convolution (a cross-correlation) over an input of shape :math:`(N, C_{in}, H, W)`.

    .. math::
        \text{out}(N_i, C_{out_j}) = \text{bias}(C_{out_j})
        + \sum_{k=0}^{C_{in}/g - 1} \text{weight}(C_{out_j}, k) \star \text{input}(N_i, k')

    where :math:`\star` is the 2-D cross-correlation (no kernel flip), :math:`g` the
    number of groups and :math:`k'` the input channel of group :math:`k` belongs to.
    Positional arguments as in PyTorch.

    Parameters
    ----------
    in_channels : int
        :math:`C_{in}`, channels of the input.
    out_channels : int
        :math:`C_{out}`, channels of the output (the number of filters).
    kernel_size : int or tuple of 2 ints
        The filters' height and width.
    stride : int or tuple, default 1
        The step between two windows.
    padding : int, tuple or {'valid', 'same'}, default 0
        Zeros added on both sides.  ``'same'`` keeps the size (stride 1 only),
        ``'valid'`` is no padding.
    dilation : int or tuple, default 1
        The spacing between the kernel's taps.
    groups : int, default 1
        Split the channels into ``groups`` independent convolutions;
        ``groups=in_channels`` is a depthwise convolution.
    bias : bool, default True
        ``False`` leaves out the bias.
    padding_mode : {'zeros'}, default 'zeros'
        Only zero padding is implemented (``nn.functional.pad`` does the others).
    device, dtype : optional
        Where the parameters live and their dtype.

    Attributes
    ----------
    weight : Parameter
        Shape :math:`(C_{out}, C_{in}/g, k_h, k_w)`, drawn from :math:`\mathcal U(-k, k)`,
        :math:`k = 1/\sqrt{C_{in}/g \cdot k_h k_w}`.
    bias : Parameter or None
        Shape :math:`(C_{out},)`, drawn from the same distribution.

    Shape
    -----
    - Input: :math:`(N, C_{in}, H_{in}, W_{in})`.
    - Output: :math:`(N, C_{out}, H_{out}, W_{out})` with

    .. math::
        H_{out} = \left\lfloor \frac{H_{in} + 2p_0 - d_0 (k_0 - 1) - 1}{s_0} + 1 \right\rfloor

    and :math:`W_{out}` the same with index 1 (p padding, d dilation, k kernel, s stride).

    Raises
    ------
    ValueError
        If the channels are not divisible by ``groups``, ``padding_mode`` is not
        ``'zeros'``, ``padding='same'`` is asked with a stride, or the input is not
        4-D or has the wrong number of channels (the message says which); or a
        ``kernel_size``, ``stride`` or ``dilation`` is below 1, ``groups`` is below 1,
        or ``padding`` is negative.
    TypeError
        If a channel count, ``kernel_size``, ``stride``, ``padding`` or ``dilation`` is
        not an int (or a tuple of ints).

    See Also
    --------
    Conv1d, Conv3d, ConvTranspose2d, difflab.nn.functional.conv2d

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> _ = dl.manual_seed(0)
    >>> conv = nn.Conv2d(3, 8, 3, stride=2, padding=1)
    >>> conv(dl.randn(2, 3, 32, 32)).shape
    difflab.Size([2, 8, 16, 16])
    >>> conv.weight.shape
    difflab.Size([8, 3, 3, 3])
    >>> depthwise = nn.Conv2d(4, 4, 3, padding="same", groups=4)
    >>> depthwise(dl.randn(1, 4, 5, 5)).shape, depthwise.weight.shape
    (difflab.Size([1, 4, 5, 5]), difflab.Size([4, 1, 3, 3]))
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        in_channels, out_channels = _channels("Conv2d", in_channels, out_channels, groups)
        if padding_mode != "zeros":
            raise ValueError(f"only padding_mode='zeros' is supported, got {padding_mode!r}")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = F._window("Conv2d", kernel_size, "kernel_size")
        self.stride = F._window("Conv2d", stride, "stride")
        self.dilation = F._window("Conv2d", dilation, "dilation")
        self.padding = padding if isinstance(padding, str) else F._window("Conv2d", padding,
                                                                         "padding")
        self.groups = int(groups)
        self.weight = _empty(out_channels, in_channels // groups, *self.kernel_size,
                             dtype=dtype, device=device)
        if bias:
            self.bias = _empty(out_channels, dtype=dtype, device=device)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        r"""Draw new weights and bias from PyTorch's default, :math:`\mathcal U(-k, k)`.

        Here :math:`k = 1/\sqrt{\text{fan\_in}}`.

        Returns
        -------
        None

        See Also
        --------
        difflab.nn.init.default_linear_init_ : the initialiser it calls.

        Examples
        --------
        >>> from difflab import nn
        >>> m = nn.Linear(4, 2)
        >>> _ = nn.init.zeros_(m.weight)
        >>> m.reset_parameters()
        >>> bool((m.weight != 0).all() and m.weight.abs().max() <= 0.5)
        True
        """
        init.default_linear_init_(self.weight, self.bias)

    def forward(self, x: Tensor) -> Tensor:
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding not in ((0, 0), "valid"):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s


class _MaxPoolNd(Module):
    """What MaxPool1d, MaxPool2d and MaxPool3d share: their settings, and the call of
    ``F.<function>`` (``max_pool1d``, ...) with them."""

    function = ""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False, ceil_mode: bool = False
                 ) -> None:
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, x: Tensor) -> Any:
        return getattr(F, self.function)(x, self.kernel_size, self.stride, self.padding,
                                         self.dilation, self.ceil_mode, self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool2d(_MaxPoolNd):
    r"""The maximum over each window of ``kernel_size`` (stride defaults to the kernel size).

    .. math::
        \text{out}(N_i, C_j, h, w) = \max_{m < k_0,\ n < k_1}
        \text{input}(N_i, C_j, s_0 h + d_0 m, s_1 w + d_1 n)

    (on the input padded with :math:`-\infty`).  The gradient flows to the arg-max
    of each window only.

    Parameters
    ----------
    kernel_size : int or tuple of 2 ints
        The window's size.
    stride : int or tuple, optional
        The step between windows; ``kernel_size`` when left out (non-overlapping windows).
    padding : int or tuple, default 0
        Implicit :math:`-\infty` padding on both sides; at most half the kernel size.
    dilation : int or tuple, default 1
        The spacing between the window's elements.
    return_indices : bool, default False
        Also return where each maximum is (for :class:`MaxUnpool2d`).
    ceil_mode : bool, default False
        Only False is supported.

    Shape
    -----
    - Input: :math:`(N, C, H_{in}, W_{in})` or :math:`(C, H_{in}, W_{in})`.
    - Output: :math:`(N, C, H_{out}, W_{out})` or :math:`(C, H_{out}, W_{out})`,
      :math:`H_{out} = \lfloor (H_{in} + 2p_0 - d_0(k_0 - 1) - 1)/s_0 \rfloor + 1`
      (with ``return_indices``, and the int64 indices of the maxima, the same shape).

    Raises
    ------
    ValueError
        If the input is not 3-D or 4-D, or the padding exceeds half the kernel.
    NotImplementedError
        When called with ``ceil_mode=True``.

    See Also
    --------
    AvgPool2d, AdaptiveMaxPool2d, MaxPool1d, difflab.nn.functional.max_pool2d

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> x = dl.arange(16.0).reshape(1, 1, 4, 4)
    >>> nn.MaxPool2d(2)(x)
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    >>> nn.MaxPool2d(2, return_indices=True)(x)[1].tolist()    # where: h·W + w
    [[[[5, 7], [13, 15]]]]
    """

    function = "max_pool2d"


class AvgPool2d(Module):
    r"""The mean over each window of ``kernel_size`` (stride defaults to the kernel size).

    .. math::
        \text{out}(N_i, C_j, h, w) = \frac{1}{k_0 k_1} \sum_{m < k_0,\ n < k_1}
        \text{input}(N_i, C_j, s_0 h + m, s_1 w + n)

    on the zero-padded input: the padding's zeros count in the mean.  An integer
    input is averaged in the default floating dtype.

    Parameters
    ----------
    kernel_size : int or tuple of 2 ints
        The window's size.
    stride : int or tuple, optional
        The step between windows; ``kernel_size`` when left out.
    padding : int or tuple, default 0
        Zeros added on both sides; at most half the kernel size.

    Shape
    -----
    - Input: :math:`(N, C, H_{in}, W_{in})` or :math:`(C, H_{in}, W_{in})`.
    - Output: :math:`(N, C, H_{out}, W_{out})` or :math:`(C, H_{out}, W_{out})`,
      :math:`H_{out} = \lfloor (H_{in} + 2p_0 - k_0)/s_0 \rfloor + 1`.

    Raises
    ------
    ValueError
        If the input is not 3-D or 4-D, or the padding exceeds half the kernel.

    See Also
    --------
    MaxPool2d, AdaptiveAvgPool2d, AvgPool1d, difflab.nn.functional.avg_pool2d

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> x = dl.arange(16.0).reshape(1, 1, 4, 4)
    >>> nn.AvgPool2d(2)(x)
    tensor([[[[ 2.5,  4.5],
              [10.5, 12.5]]]])
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding = padding

    def forward(self, x: Tensor) -> Tensor:
        return F.avg_pool2d(x, self.kernel_size, self.stride, self.padding)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    r"""Average pooling to a fixed ``output_size``, whatever the input's size (1: the global mean).

    Output cell :math:`i` along a side of length :math:`n` split into :math:`m` cells
    averages the input over :math:`[\lfloor i n/m \rfloor, \lceil (i+1) n/m \rceil)`
    (PyTorch's bins; cells may overlap when :math:`m` does not divide :math:`n`).

    Parameters
    ----------
    output_size : int or tuple of 2 (int or None)
        :math:`(H_{out}, W_{out})`; an int means a square, ``None`` for a side
        keeps the input's size there.

    Shape
    -----
    - Input: :math:`(N, C, H_{in}, W_{in})` or :math:`(C, H_{in}, W_{in})`.
    - Output: :math:`(N, C, H_{out}, W_{out})` or :math:`(C, H_{out}, W_{out})`.

    Raises
    ------
    ValueError
        If the input is not 3-D or 4-D, or ``output_size`` is not an int or a pair
        of positive ints (or None).

    See Also
    --------
    AvgPool2d, AdaptiveMaxPool2d, AdaptiveAvgPool1d

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> x = dl.arange(16.0).reshape(1, 1, 4, 4)
    >>> nn.AdaptiveAvgPool2d(1)(x)
    tensor([[[[7.5]]]])
    >>> nn.AdaptiveAvgPool2d((3, 2))(dl.randn(2, 8, 7, 5)).shape
    difflab.Size([2, 8, 3, 2])
    >>> nn.AdaptiveAvgPool2d((None, 1))(dl.randn(2, 8, 7, 5)).shape   # the rows kept
    difflab.Size([2, 8, 7, 1])
    """

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, x: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(x, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class _NormBase(Module):
    """What batch and instance normalisation share: γ and β (``affine``), the running
    mean and variance (``track_running_stats``) and how they are reset and shown."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        from difflab.creation import ones, tensor, zeros

        self.num_features, self.eps, self.momentum = int(num_features), eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        dtype = dtype or _Defaults.dtype
        if affine:
            self.weight = Parameter(ones(num_features, dtype=dtype, device=device))
            self.bias = Parameter(zeros(num_features, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, dtype=dtype, device=device))
            self.register_buffer("running_var", ones(num_features, dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=np.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        """Reset the running statistics: mean 0, variance 1, ``num_batches_tracked`` 0.

        Does nothing when the module does not track running statistics; the affine
        parameters are left alone.

        Returns
        -------
        None

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> bn = nn.BatchNorm1d(2)
        >>> _ = bn(dl.tensor([[1.0, 10.0], [3.0, 30.0]]))
        >>> bn.reset_running_stats()
        >>> bn.running_mean, bn.running_var, bn.num_batches_tracked
        (tensor([0., 0.]), tensor([1., 1.]), tensor(0))
        """
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    _expected_ndim: tuple = ()

    def forward(self, x: Tensor) -> Tensor:
        name = type(self).__name__
        if x.ndim not in self._expected_ndim:
            raise ValueError(
                f"{name} expects a {' or '.join(f'{d}-D' for d in self._expected_ndim)} input, "
                f"got shape {tuple(x.shape)}"
            )
        if x.shape[1] != self.num_features:
            raise ValueError(
                f"{name} expected {self.num_features} channels (num_features) in dimension 1, "
                f"got input of shape {tuple(x.shape)}"
            )
        use_batch = self.training or not self.track_running_stats
        factor = self.momentum
        if self.training and self.track_running_stats:
            # (in-place tensor operations: a traced graph replays them on the buffers)
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # the cumulative average: 1 / batches seen
                factor = 1.0 / self.num_batches_tracked.to(np.float64)
        return F.batch_norm(
            x,
            self.running_mean if not self.training or self.track_running_stats else None,
            self.running_var if not self.training or self.track_running_stats else None,
            self.weight, self.bias, use_batch, factor, self.eps,
        )


class BatchNorm1d(_BatchNorm):
    r"""Batch normalisation of :math:`(N, C)` or :math:`(N, C, L)` inputs, per channel :math:`C`.

    .. math::
        y = \frac{x - \mathrm E[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} \cdot \gamma + \beta

    The mean and variance are taken per channel (dimension 1) over the batch and
    every other dimension.  In training mode they are the batch's (the variance
    biased), and the running estimates are updated as
    :math:`\hat r \leftarrow (1 - \text{momentum})\,\hat r + \text{momentum} \cdot r_{batch}`
    (the variance unbiased there, as in PyTorch).  In evaluation mode the running
    estimates are used instead.

    Parameters
    ----------
    num_features : int
        :math:`C`, the number of channels.
    eps : float, default 1e-5
        Added to the variance for numerical stability.
    momentum : float or None, default 0.1
        The weight of the new batch in the running estimates; ``None`` keeps a
        cumulative average (the factor is :math:`1/\text{num\_batches\_tracked}`).
    affine : bool, default True
        Learn :math:`\gamma` and :math:`\beta` (else they are left out).
    track_running_stats : bool, default True
        Keep running estimates; ``False`` normalises with the batch's statistics in
        both modes.
    device, dtype : optional
        Where the parameters and buffers live and their dtype.

    Attributes
    ----------
    weight : Parameter or None
        :math:`\gamma`, shape :math:`(C,)`, initialised to ones.
    bias : Parameter or None
        :math:`\beta`, shape :math:`(C,)`, initialised to zeros.
    running_mean, running_var : Tensor or None
        Buffers of shape :math:`(C,)`, initialised to zeros and ones.
    num_batches_tracked : Tensor or None
        A 0-d int64 buffer, the number of training batches seen.

    Shape
    -----
    - Input: :math:`(N, C)` or :math:`(N, C, L)`.
    - Output: the same shape.

    Raises
    ------
    ValueError
        If the input is not 2-D or 3-D, its dimension 1 is not ``num_features``, or
        a training batch has a single value per channel (no variance).

    See Also
    --------
    BatchNorm2d, LayerNorm, GroupNorm, InstanceNorm1d, difflab.nn.functional.batch_norm

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> bn = nn.BatchNorm1d(2)
    >>> bn(dl.tensor([[1.0, 10.0], [3.0, 30.0]])).detach()
    tensor([[-1., -1.],
            [ 1.,  1.]])
    >>> bn.running_mean, bn.running_var
    (tensor([0.2, 2. ]), tensor([ 1.1, 20.9]))
    >>> bn.eval()(dl.tensor([[0.2, 2.0]])).detach()
    tensor([[0., 0.]])
    """

    _expected_ndim = (2, 3)


class BatchNorm2d(_BatchNorm):
    r"""Batch normalisation of :math:`(N, C, H, W)` inputs, per channel :math:`C`.

    .. math::
        y = \frac{x - \mathrm E[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} \cdot \gamma + \beta

    The mean and variance are taken per channel (dimension 1) over the batch and
    every other dimension.  In training mode they are the batch's (the variance
    biased), and the running estimates are updated as
    :math:`\hat r \leftarrow (1 - \text{momentum})\,\hat r + \text{momentum} \cdot r_{batch}`
    (the variance unbiased there, as in PyTorch).  In evaluation mode the running
    estimates are used instead.

    Parameters
    ----------
    num_features : int
        :math:`C`, the number of channels.
    eps : float, default 1e-5
        Added to the variance for numerical stability.
    momentum : float or None, default 0.1
        The weight of the new batch in the running estimates; ``None`` keeps a
        cumulative average (the factor is :math:`1/\text{num\_batches\_tracked}`).
    affine : bool, default True
        Learn :math:`\gamma` and :math:`\beta` (else they are left out).
    track_running_stats : bool, default True
        Keep running estimates; ``False`` normalises with the batch's statistics in
        both modes.
    device, dtype : optional
        Where the parameters and buffers live and their dtype.

    Attributes
    ----------
    weight : Parameter or None
        :math:`\gamma`, shape :math:`(C,)`, initialised to ones.
    bias : Parameter or None
        :math:`\beta`, shape :math:`(C,)`, initialised to zeros.
    running_mean, running_var : Tensor or None
        Buffers of shape :math:`(C,)`, initialised to zeros and ones.
    num_batches_tracked : Tensor or None
        A 0-d int64 buffer, the number of training batches seen.

    Shape
    -----
    - Input: :math:`(N, C, H, W)`.
    - Output: the same shape.

    Raises
    ------
    ValueError
        If the input is not 4-D, its dimension 1 is not ``num_features``, or a
        training batch has a single value per channel.

    See Also
    --------
    BatchNorm1d, GroupNorm, InstanceNorm2d

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> _ = dl.manual_seed(0)
    >>> bn = nn.BatchNorm2d(3)
    >>> y = bn(dl.randn(4, 3, 5, 5) * 10 + 2)
    >>> y.shape, abs(float(y.mean())) < 1e-5, round(float(y.std()), 2)
    (difflab.Size([4, 3, 5, 5]), True, 1.0)
    >>> bn.num_batches_tracked
    tensor(1)
    """

    _expected_ndim = (4,)


class LayerNorm(Module):
    r"""Normalise each sample over its last dimensions ``normalized_shape``, then scale and shift.

    .. math::
        y = \frac{x - \mathrm E[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} \cdot \gamma + \beta

    with the mean and (biased) variance over the last ``len(normalized_shape)``
    dimensions of each sample.  Unlike batch normalisation there are no running
    statistics: training and evaluation compute the same thing.

    Parameters
    ----------
    normalized_shape : int or tuple of ints
        The trailing shape to normalise over (an int: the last dimension).
    eps : float, default 1e-5
        Added to the variance for numerical stability.
    elementwise_affine : bool, default True
        Learn :math:`\gamma` and :math:`\beta`.
    bias : bool, default True
        With ``elementwise_affine``, whether to learn :math:`\beta`.
    device, dtype : optional
        Where the parameters live and their dtype.

    Attributes
    ----------
    weight : Parameter or None
        :math:`\gamma`, shape ``normalized_shape``, initialised to ones.
    bias : Parameter or None
        :math:`\beta`, shape ``normalized_shape``, initialised to zeros.

    Shape
    -----
    - Input: :math:`(N, *)`, ending in ``normalized_shape``.
    - Output: the same shape.

    Raises
    ------
    ValueError
        If the input's trailing dimensions are not ``normalized_shape``.
    TypeError
        If ``normalized_shape`` is not an int or a tuple of ints.

    See Also
    --------
    RMSNorm, BatchNorm1d, GroupNorm, difflab.nn.functional.layer_norm

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> ln = nn.LayerNorm(3)
    >>> ln(dl.tensor([[1.0, 2.0, 3.0]])).detach()
    tensor([[-1.2247,  0.    ,  1.2247]])
    >>> nn.LayerNorm((4, 5))(dl.randn(2, 3, 4, 5)).shape
    difflab.Size([2, 3, 4, 5])
    """

    def __init__(self, normalized_shape: Any, eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        from difflab.creation import ones, zeros

        shape = F._normalized_shape("LayerNorm", normalized_shape)
        self.normalized_shape, self.eps = shape, eps
        self.elementwise_affine = elementwise_affine
        dtype = dtype or _Defaults.dtype
        if elementwise_affine:
            self.weight = Parameter(ones(shape, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(zeros(shape, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, x: Tensor) -> Tensor:
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class Dropout(Module):
    r"""In training, zero each element with probability ``p``, scale the rest by :math:`1/(1-p)`.

    .. math::
        y_i = \frac{m_i}{1 - p} x_i, \qquad m_i \sim \text{Bernoulli}(1 - p)

    so that :math:`\mathrm E[y] = x`.  In evaluation mode (:meth:`Module.eval`)
    it is the identity.  A fresh mask is drawn on every call, from the global
    generator (``dl.manual_seed`` makes it repeatable).

    Parameters
    ----------
    p : float, default 0.5
        The probability of zeroing an element, in :math:`[0, 1]`.
    inplace : bool, default False
        Write the result into the input and return it, as PyTorch does (the input's
        version counter goes up; while recording, a leaf that requires grad refuses).

    Shape
    -----
    - Input: :math:`(*)`, any shape.
    - Output: the same shape.

    Raises
    ------
    ValueError
        If ``p`` is outside :math:`[0, 1]`.

    See Also
    --------
    Dropout1d, Dropout2d, AlphaDropout, difflab.nn.functional.dropout

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> drop = nn.Dropout(0.5)
    >>> y = drop(dl.ones(1000))
    >>> sorted(set(y.tolist()))
    [0.0, 2.0]
    >>> drop.eval()(dl.ones(3))
    tensor([1., 1., 1.])
    """

    inplace = False  # (a layer saved before inplace was kept loads as out of place)

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        F._probability("Dropout", p)
        self.p, self.inplace = p, inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout(x, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Flatten(Module):
    r"""Merge the dimensions ``start_dim`` to ``end_dim`` into one (by default all but the batch).

    Parameters
    ----------
    start_dim : int, default 1
        The first dimension to merge.
    end_dim : int, default -1
        The last dimension to merge (inclusive).

    Shape
    -----
    - Input: :math:`(*, S_{start}, \ldots, S_{end}, *)`.
    - Output: :math:`(*, \prod_{i=start}^{end} S_i, *)`.

    See Also
    --------
    Unflatten : the inverse.
    difflab.functions.flatten

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> nn.Flatten()(dl.ones(2, 3, 4)).shape
    difflab.Size([2, 12])
    >>> nn.Flatten(0, 1)(dl.ones(2, 3, 4)).shape
    difflab.Size([6, 4])
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Tensor) -> Tensor:
        return x.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    r"""Split dimension ``dim`` into the shape ``unflattened_size``.

    Parameters
    ----------
    dim : int
        The dimension to split (negative counts from the end).
    unflattened_size : tuple of ints
        The new dimensions; their product must be the size of ``dim``.

    Shape
    -----
    - Input: :math:`(*, S_{dim}, *)`.
    - Output: :math:`(*, U_1, \ldots, U_n, *)` with :math:`\prod U_i = S_{dim}`.

    Raises
    ------
    ValueError
        If the product of ``unflattened_size`` is not the size of ``dim`` (from reshape).

    See Also
    --------
    Flatten : the inverse.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> nn.Unflatten(1, (2, 5))(dl.ones(3, 10)).shape
    difflab.Size([3, 2, 5])
    """

    def __init__(self, dim: int, unflattened_size: Any) -> None:
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, x: Tensor) -> Tensor:
        # (Tensor.unflatten checks the dim and the sizes: a reshape's error named neither)
        return x.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Embedding(Module):
    r"""A table of ``num_embeddings`` vectors of size ``embedding_dim``: :math:`y = W[i]`.

    The gradient of the table adds up :math:`\bar y` into the rows that were looked
    up (a row looked up twice gets both); the row ``padding_idx`` gets none.

    Parameters
    ----------
    num_embeddings : int
        The number of rows (the vocabulary's size).
    embedding_dim : int
        The size of each vector.
    padding_idx : int, optional
        A row that is zero and never trained (negative counts from the end).
    max_norm : float, optional
        Rows looked up whose ``norm_type``-norm exceeds it are scaled down to it, in
        place (see :func:`difflab.nn.functional.embedding`).
    norm_type : float, default 2.0
        The :math:`p` of that norm.
    scale_grad_by_freq : bool, default False
        Only False (see :func:`difflab.nn.functional.embedding`).
    sparse : bool, default False
        Accepted: the table's gradient is dense (``optim.SparseAdam`` takes it).
    _weight : Tensor, optional
        PyTorch's way to start from a given table (``from_pretrained`` uses it).
    _freeze : bool, default False
        The table is not trained (``weight.requires_grad`` is False).
    device, dtype : optional
        Where the table lives and its dtype.

    Attributes
    ----------
    weight : Parameter
        The table, shape ``(num_embeddings, embedding_dim)``, drawn from
        :math:`\mathcal N(0, 1)` (the ``padding_idx`` row zero).

    Shape
    -----
    - Input: :math:`(*)`, integer indices in :math:`[0, \text{num\_embeddings})`.
    - Output: :math:`(*, \text{embedding\_dim})`.

    Raises
    ------
    TypeError
        If the indices are not integers (use ``.long()``).
    IndexError
        If an index is outside the table.

    See Also
    --------
    EmbeddingBag, difflab.nn.functional.embedding, difflab.nn.functional.one_hot

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> emb = nn.Embedding(10, 3, padding_idx=0)
    >>> emb(dl.tensor([[0, 2], [4, 9]])).shape
    difflab.Size([2, 2, 3])
    >>> emb.weight[0].detach()
    tensor([0., 0., 0.])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight: Tensor | None = None, _freeze: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        if padding_idx is not None and padding_idx < 0:
            padding_idx += num_embeddings
        self.padding_idx = padding_idx
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        self.weight = _empty(num_embeddings, embedding_dim, dtype=dtype, device=device)
        if _weight is None:
            self.reset_parameters()
            self.weight.requires_grad = not _freeze
        else:
            if tuple(_weight.shape) != (self.num_embeddings, self.embedding_dim):
                raise ValueError(f"Shape of _weight {tuple(_weight.shape)} does not match "
                                 f"num_embeddings and embedding_dim "
                                 f"({self.num_embeddings}, {self.embedding_dim})")
            with no_grad():
                self.weight.copy_(_weight)
            self.weight.requires_grad = not _freeze

    def reset_parameters(self) -> None:
        r"""Draw a new table from :math:`\mathcal N(0, 1)` and zero the ``padding_idx`` row.

        Returns
        -------
        None

        Examples
        --------
        >>> from difflab import nn
        >>> emb = nn.Embedding(4, 2, padding_idx=1)
        >>> emb.reset_parameters()
        >>> emb.weight[1].tolist()
        [0.0, 0.0]
        """
        init.normal_(self.weight)
        if self.padding_idx is not None:
            self.weight.array[self.padding_idx] = 0

    def forward(self, idx: Tensor) -> Tensor:
        return F.embedding(idx, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        padding_idx: int | None = None, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        """An Embedding whose table is a copy of ``embeddings`` (rows, size), frozen by default.

        Parameters
        ----------
        embeddings : Tensor
            The table, 2-D: ``(num_embeddings, embedding_dim)``.  Its dtype and device
            are kept.
        freeze : bool, default True
            ``True`` sets ``weight.requires_grad = False`` (the table is not trained).
        padding_idx : int, optional
            As in the constructor; the copied row is kept as it is.
        max_norm, norm_type, scale_grad_by_freq, sparse : optional
            As in the constructor.

        Returns
        -------
        Embedding
            A new layer.

        Raises
        ------
        ValueError
            If ``embeddings`` is not a 2-D tensor.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> emb = nn.Embedding.from_pretrained(dl.tensor([[1.0, 2.0], [3.0, 4.0]]))
        >>> emb(dl.tensor([1])), emb.weight.requires_grad
        (tensor([[3., 4.]]), False)
        """
        if not isinstance(embeddings, Tensor) or embeddings.ndim != 2:
            raise ValueError(
                f"Embeddings parameter is expected to be a 2-dimensional Tensor, got "
                f"{getattr(embeddings, 'shape', type(embeddings).__name__)}"
            )
        rows, size = embeddings.shape
        return cls(rows, size, padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse, _weight=embeddings,
                   _freeze=freeze, dtype=embeddings.dtype, device=embeddings.device)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        s += f", padding_idx={self.padding_idx}" if self.padding_idx is not None else ""
        s += f", max_norm={self.max_norm}" if self.max_norm is not None else ""
        s += f", norm_type={self.norm_type}" if self.norm_type != 2.0 else ""
        return s + (", sparse=True" if self.sparse else "")


# ------------------------------------------------------------------ activations


class ReLU(Module):
    r"""The rectified linear unit, elementwise: :math:`\text{ReLU}(x) = \max(x, 0)`.

    Its derivative is :math:`1` for :math:`x > 0` and :math:`0` otherwise (0 at
    the kink :math:`x = 0`, as in PyTorch).  The output keeps the input's dtype.

    Parameters
    ----------
    inplace : bool, default False
        Write the result into the input and return it, as PyTorch does (the input's
        version counter goes up; while recording, a leaf that requires grad refuses).

    Shape
    -----
    - Input: :math:`(*)`, any shape.
    - Output: the same shape.

    See Also
    --------
    LeakyReLU, GELU, ReLU6, difflab.nn.functional.relu

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> nn.ReLU()(dl.tensor([-1.0, 0.0, 2.0]))
    tensor([0., 0., 2.])
    """

    inplace = False  # (a layer saved before inplace was kept loads as out of place)

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(x, inplace=True) if self.inplace else x.relu()

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    r"""The leaky ReLU, elementwise: :math:`x` for :math:`x > 0`, else :math:`\text{slope} \cdot x`.

    Parameters
    ----------
    negative_slope : float, default 0.01
        The slope for negative inputs.
    inplace : bool, default False
        Write the result into the input and return it, as PyTorch does (the input's
        version counter goes up; while recording, a leaf that requires grad refuses).

    Shape
    -----
    - Input: :math:`(*)`, any shape.
    - Output: the same shape.

    See Also
    --------
    ReLU, difflab.nn.functional.leaky_relu
    PReLU : the same with a learned slope.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> nn.LeakyReLU(0.1)(dl.tensor([-1.0, 2.0]))
    tensor([-0.1,  2. ])
    """

    inplace = False  # (a layer saved before inplace was kept loads as out of place)

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.leaky_relu(x, self.negative_slope, inplace=self.inplace)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"negative_slope={self.negative_slope}{inplace}"


class GELU(Module):
    r"""The Gaussian error linear unit, elementwise: :math:`\text{GELU}(x) = x\,\Phi(x)`.

    :math:`\Phi` is the standard normal CDF,
    :math:`\Phi(x) = \tfrac12\left(1 + \operatorname{erf}(x/\sqrt2)\right)`.  With
    ``approximate='tanh'``:

    .. math::
        \text{GELU}(x) \approx \tfrac12 x \left(1 + \tanh\!\left(\sqrt{2/\pi}\,
        (x + 0.044715\,x^3)\right)\right)

    Parameters
    ----------
    approximate : {'none', 'tanh'}, default 'none'
        The exact formula or the tanh approximation.

    Shape
    -----
    - Input: :math:`(*)`, any shape.
    - Output: the same shape.

    Raises
    ------
    ValueError
        If ``approximate`` is neither ``'none'`` nor ``'tanh'`` (when called).

    See Also
    --------
    difflab.nn.functional.gelu, SiLU, Mish

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> nn.GELU()(dl.tensor([-1.0, 0.0, 1.0]))
    tensor([-0.1587,  0.    ,  0.8413])
    >>> nn.GELU("tanh")(dl.tensor([1.0]))
    tensor([0.8412])
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, x: Tensor) -> Tensor:
        return F.gelu(x, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate='{self.approximate}'"


class Sigmoid(Module):
    r"""The logistic sigmoid, elementwise: :math:`\sigma(x) = 1 / (1 + e^{-x})`.

    Its derivative is :math:`\sigma(x)(1 - \sigma(x))`.  An integer input gives a
    floating output.

    Shape
    -----
    - Input: :math:`(*)`, any shape.
    - Output: the same shape.

    See Also
    --------
    LogSigmoid, Tanh, difflab.sigmoid

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> nn.Sigmoid()(dl.tensor([0.0, 2.0]))
    tensor([0.5   , 0.8808])
    """

    def forward(self, x: Tensor) -> Tensor:
        return x.sigmoid()


class Tanh(Module):
    r"""The hyperbolic tangent, elementwise: :math:`\tanh x = (e^x - e^{-x}) / (e^x + e^{-x})`.

    Its derivative is :math:`1 - \tanh^2 x`.

    Shape
    -----
    - Input: :math:`(*)`, any shape.
    - Output: the same shape.

    See Also
    --------
    Sigmoid, Hardtanh, difflab.tanh

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> nn.Tanh()(dl.tensor([0.0, 1.0]))
    tensor([0.    , 0.7616])
    """

    def forward(self, x: Tensor) -> Tensor:
        return x.tanh()


class Softmax(Module):
    r"""Softmax along ``dim``: :math:`\text{Softmax}(x)_i = e^{x_i} / \sum_j e^{x_j}`.

    Computed stably (the maximum is subtracted first); every slice along ``dim``
    is positive and sums to 1.

    Parameters
    ----------
    dim : int, optional
        The dimension to normalise.  Left out, PyTorch's legacy choice is made
        (0 for 0-, 1- and 3-D inputs, else 1); give it explicitly.

    Shape
    -----
    - Input: :math:`(*)`, any shape.
    - Output: the same shape.

    Raises
    ------
    IndexError
        If ``dim`` is out of range for the input.

    See Also
    --------
    LogSoftmax, Softmin, difflab.nn.functional.softmax

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> nn.Softmax(dim=-1)(dl.tensor([1.0, 2.0, 3.0]))
    tensor([0.09  , 0.2447, 0.6652])
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return F.softmax(x, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    r"""Log-softmax along ``dim``: :math:`x_i - \log \sum_j e^{x_j}`.

    More accurate than ``softmax(x).log()`` for very negative values; followed
    by :class:`NLLLoss` it is the cross-entropy.

    Parameters
    ----------
    dim : int, optional
        The dimension to normalise (PyTorch's legacy choice when left out; give it).

    Shape
    -----
    - Input: :math:`(*)`, any shape.
    - Output: the same shape.

    Raises
    ------
    IndexError
        If ``dim`` is out of range for the input.

    See Also
    --------
    Softmax, NLLLoss, CrossEntropyLoss

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> nn.LogSoftmax(dim=1)(dl.tensor([[1.0, 2.0, 3.0]]))
    tensor([[-2.4076, -1.4076, -0.4076]])
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return F.log_softmax(x, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"

