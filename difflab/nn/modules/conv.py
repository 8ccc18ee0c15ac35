"""Convolution layers at PyTorch's path ``nn.modules.conv``: 1-D, 2-D and 3-D, transposed too.

``Conv1d`` holds a (out_channels, in_channels/groups, k) kernel and calls
:func:`difflab.nn.functional.conv1d`, which runs the 2-D convolution on the
signal seen as an image one pixel high.
"""

from __future__ import annotations

from typing import Any

from difflab.nn import functional as F
from difflab.nn import init
from difflab.nn.modules.layers import Conv2d, _channels, _empty
from difflab.nn.modules.module import Module
from difflab.tensor import Tensor

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]


class Conv1d(Module):
    r"""1-D convolution over (N, C, L) inputs (PyTorch's layer and parameter names).

    Parameters
    ----------
    in_channels, out_channels : int
    kernel_size : int or 1-tuple
    stride, padding, dilation : int or 1-tuple
        ``padding`` may be ``'valid'`` or ``'same'`` (stride 1, odd effective kernel).
    groups : int
        ``groups=in_channels`` gives a depthwise convolution.
    bias : bool
    padding_mode : str
        Only ``'zeros'``.

    Attributes
    ----------
    weight : Parameter
        (out_channels, in_channels/groups, kernel_size), U(±1/√(in_channels/groups·k)).
    bias : Parameter or None
        (out_channels,).

    Shape
    -----
    - Input: :math:`(N, C_{in}, L_{in})` or :math:`(C_{in}, L_{in})`.
    - Output: :math:`(N, C_{out}, L_{out})` or :math:`(C_{out}, L_{out})`.

    Notes
    -----
    .. math::
        \text{out}(N_i, C_{out_j}) = \text{bias}(C_{out_j})
        + \sum_{k} \text{weight}(C_{out_j}, k) \star \text{input}(N_i, k)

        L_{out} = \left\lfloor \frac{L_{in} + 2p - d(k - 1) - 1}{s} \right\rfloor + 1

    Examples
    --------
    >>> import difflab as dl
    >>> conv = dl.nn.Conv1d(2, 4, kernel_size=3, padding=1)
    >>> conv(dl.randn(8, 2, 10)).shape
    difflab.Size([8, 4, 10])
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        in_channels, out_channels = _channels("Conv1d", in_channels, out_channels, groups)
        if padding_mode != "zeros":
            raise ValueError(f"only padding_mode='zeros' is supported, got {padding_mode!r}")
        def one(value: Any, what: str) -> tuple[int]:
            return (F._single("Conv1d", value, what),)

        self.in_channels, self.out_channels = int(in_channels), int(out_channels)
        self.kernel_size = one(kernel_size, "kernel_size")
        self.stride, self.dilation = one(stride, "stride"), one(dilation, "dilation")
        self.padding = padding if isinstance(padding, str) else one(padding, "padding")
        self.groups = int(groups)
        self.weight = _empty(out_channels, in_channels // groups, self.kernel_size[0],
                             dtype=dtype, device=device)
        if bias:
            self.bias = _empty(out_channels, dtype=dtype, device=device)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        r"""Draw new weights and bias from PyTorch's default, :math:`\mathcal U(-k, k)`.

        Here :math:`\text{fan\_in} = C_{in}/\text{groups} \cdot k`.
        Then :math:`k = 1/\sqrt{\text{fan\_in}}`.

        Returns
        -------
        None

        Examples
        --------
        >>> from difflab import nn
        >>> layer = nn.Conv1d(2, 4, kernel_size=3)
        >>> _ = nn.init.zeros_(layer.weight)
        >>> layer.reset_parameters()
        >>> bool((layer.weight != 0).all())
        True
        """
        init.default_linear_init_(self.weight, self.bias)

    def forward(self, x: Tensor) -> Tensor:
        return F.conv1d(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding not in ((0,), "valid"):
            s += f", padding={self.padding}"
        if self.dilation != (1,):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s


class _ConvTransposeNd(Module):
    _dims = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        name = type(self).__name__
        in_channels, out_channels = _channels(name, in_channels, out_channels, groups)
        if padding_mode != "zeros":
            raise ValueError(f"only padding_mode='zeros' is supported, got {padding_mode!r}")

        def tup(value: Any, what: str) -> tuple:
            return F._window(name, value, what, self._dims)

        self.in_channels, self.out_channels = int(in_channels), int(out_channels)
        self.kernel_size, self.stride = tup(kernel_size, "kernel_size"), tup(stride, "stride")
        self.padding = tup(padding, "padding")
        self.output_padding = tup(output_padding, "output_padding")
        self.dilation = tup(dilation, "dilation")
        self.groups = int(groups)
        self.weight = _empty(in_channels, out_channels // groups, *self.kernel_size,
                             dtype=dtype, device=device)
        if bias:
            self.bias = _empty(out_channels, dtype=dtype, device=device)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        r"""Draw new weights and bias from PyTorch's default, :math:`\mathcal U(-k, k)`.

        Here :math:`\text{fan\_in}` comes from the weight's dimension 1,
        :math:`C_{out}/\text{groups}`, times the kernel size (as PyTorch does).
        Then :math:`k = 1/\sqrt{\text{fan\_in}}`.

        Returns
        -------
        None

        Examples
        --------
        >>> from difflab import nn
        >>> layer = nn.ConvTranspose2d(2, 4, kernel_size=3)
        >>> _ = nn.init.zeros_(layer.weight)
        >>> layer.reset_parameters()
        >>> bool((layer.weight != 0).all())
        True
        """
        init.default_linear_init_(self.weight, self.bias)

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if any(self.padding):
            s += f", padding={self.padding}"
        if any(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        return s + (", bias=False" if self.bias is None else "")


class ConvTranspose2d(_ConvTransposeNd):
    r"""The transposed 2-D convolution: a learned upsampling of (N, C_in, H, W) by ``stride``.

    The module form of :func:`difflab.nn.functional.conv_transpose2d`.  Each input pixel
    scatters a :math:`k_h \times k_w` patch, its channels times the weight, into the
    output, ``stride`` pixels apart; overlapping patches add up.  It is the adjoint (the
    gradient with respect to the input) of a :class:`Conv2d` with the same settings, so
    it maps that convolution's output shape back to its input shape.

    Parameters
    ----------
    in_channels, out_channels : int
        :math:`C_{in}`, :math:`C_{out}`.
    kernel_size : int or tuple of 2 ints
        :math:`(k_h, k_w)`.
    stride : int or tuple of 2 ints, default 1
        :math:`s`, the upsampling factor.
    padding : int or tuple of 2 ints, default 0
        :math:`p` rows and columns are cut from each border of the full output (the
        inverse of :class:`Conv2d`'s padding; see the formula below).
    output_padding : int or tuple of 2 ints, default 0
        Extra rows/columns added on one side, to pick among the input sizes a strided
        :class:`Conv2d` maps to the same output size (must be smaller than the stride or
        the dilation).
    groups : int, default 1
        Independent groups of channels; both channel counts must be divisible by it.
    bias : bool, default True
        Learn a bias per output channel.
    dilation : int or tuple of 2 ints, default 1
        :math:`d`, the spacing of the kernel's taps.
    padding_mode : {'zeros'}, default 'zeros'
        The only mode supported.
    device : str or difflab.device, optional
        Where the parameters live (the CPU by default).
    dtype : difflab dtype, optional
        The parameters' dtype (the default dtype by default).

    Attributes
    ----------
    weight : Parameter
        :math:`(C_{in}, C_{out}/\text{groups}, k_h, k_w)`, PyTorch's layout, drawn from
        :math:`\mathcal U(-k, k)` (see ``reset_parameters()``).
    bias : Parameter or None
        :math:`(C_{out},)`.

    Shape
    -----
    - Input: :math:`(N, C_{in}, H_{in}, W_{in})` or :math:`(C_{in}, H_{in}, W_{in})`.
    - Output: :math:`(N, C_{out}, H_{out}, W_{out})` (:math:`W_{out}` alike).

    Raises
    ------
    ValueError
        If a channel count is not divisible by ``groups``, or ``padding_mode`` is not
        ``'zeros'``; when called, on an input whose channels are not ``in_channels``,
        or with an ``output_padding`` not smaller than the stride or the dilation; or
        when a kernel size, stride, dilation or ``groups`` is below 1, or a padding
        negative.
    TypeError
        If a channel count or window argument is not an int.
    NotImplementedError
        When ``forward`` is given ``output_size`` (pass ``output_padding`` to the layer).

    See Also
    --------
    Conv2d : the convolution this one is the adjoint of.
    difflab.nn.functional.conv_transpose2d : the same map with explicit weights.

    Notes
    -----
    Each input pixel :math:`(i, j)` and kernel tap :math:`(a, b)` adds

    .. math::
        y_{n,\,o,\; s_0 i + d_0 a - p_0,\; s_1 j + d_1 b - p_1} \mathrel{+}=
            x_{n, c, i, j}\, W_{c, o, a, b}

    (for the channels :math:`c` of :math:`o`'s group), to :math:`y = b_o` at the
    start; positions outside the output are dropped.  The output size is

    .. math::
        H_{out} = (H_{in} - 1)\,s_0 - 2p_0 + d_0 (k_0 - 1) + \text{output\_padding}_0 + 1

    (:math:`W_{out}` alike).  Being the adjoint of :class:`Conv2d`'s map, its own
    gradient with respect to the input is that convolution.

    Examples
    --------
    >>> import difflab as dl
    >>> _ = dl.manual_seed(0)
    >>> up = dl.nn.ConvTranspose2d(4, 2, kernel_size=2, stride=2)
    >>> up(dl.randn(1, 4, 5, 5)).shape                # stride 2: twice the size
    difflab.Size([1, 2, 10, 10])
    >>> ones = dl.nn.ConvTranspose2d(1, 1, kernel_size=2, bias=False)
    >>> _ = dl.nn.init.ones_(ones.weight)
    >>> ones(dl.ones(1, 1, 2, 2))[0, 0].tolist()      # overlapping patches add up
    [[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]
    """

    def forward(self, x: Tensor, output_size: Any = None) -> Tensor:
        if output_size is not None:
            raise NotImplementedError("ConvTranspose2d: pass output_padding to the layer "
                                      "instead of output_size to forward")
        return F.conv_transpose2d(x, self.weight, self.bias, self.stride, self.padding,
                                  self.output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    r"""The transposed 1-D convolution (see :func:`difflab.nn.functional.conv_transpose1d`).

    Parameters
    ----------
    in_channels, out_channels : int
        :math:`C_{in}`, :math:`C_{out}`.
    kernel_size : int or 1-tuple
        :math:`k`.
    stride, padding, output_padding, dilation : int or 1-tuple
        As in :class:`ConvTranspose2d` (defaults 1, 0, 0, 1).
    groups : int, default 1
        Independent groups of channels.
    bias : bool, default True
        Learn a bias.
    padding_mode : {'zeros'}, default 'zeros'
        Only zero padding.
    device, dtype : optional
        Where the parameters live and their dtype.

    Shape
    -----
    - Input: :math:`(N, C_{in}, L_{in})` or :math:`(C_{in}, L_{in})`.
    - Output: :math:`(N, C_{out}, L_{out})`,
      :math:`L_{out} = (L_{in} - 1)s - 2p + d(k - 1) + \text{output\_padding} + 1`.

    Raises
    ------
    ValueError
        For channels not divisible by ``groups`` or another padding mode, a kernel size,
        stride, dilation or ``groups`` below 1, or a negative padding.
    TypeError
        For a channel count or window argument that is not an int.

    See Also
    --------
    ConvTranspose2d, Conv1d, difflab.nn.functional.conv_transpose1d

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.ConvTranspose1d(3, 2, kernel_size=4, stride=2)(dl.randn(2, 3, 5)).shape
    difflab.Size([2, 2, 12])
    """

    _dims = 1

    def forward(self, x: Tensor, output_size: Any = None) -> Tensor:
        if output_size is not None:
            raise NotImplementedError("ConvTranspose1d: pass output_padding to the layer "
                                      "instead of output_size to forward")
        return F.conv_transpose1d(x, self.weight, self.bias, self.stride, self.padding,
                                  self.output_padding, self.groups, self.dilation)


class Conv3d(Module):
    r"""3-D convolution over (N, C, D, H, W) inputs (see :func:`difflab.nn.functional.conv3d`).

    Parameters
    ----------
    in_channels, out_channels : int
    kernel_size, stride, padding, dilation : int or triple
    groups : int
    bias : bool

    Attributes
    ----------
    weight : Parameter
        (out_channels, in_channels/groups, kd, kh, kw).

    Shape
    -----
    - Input: :math:`(N, C_{in}, D, H, W)`.
    - Output: :math:`(N, C_{out}, D_{out}, H_{out}, W_{out})`, each side as in :class:`Conv2d`.

    Notes
    -----
    .. math::
        \text{out}(N_i, C_{out_j}) = \text{bias}(C_{out_j})
        + \sum_{k} \text{weight}(C_{out_j}, k) \star \text{input}(N_i, k)

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.Conv3d(2, 4, kernel_size=3, padding=1)(dl.randn(1, 2, 5, 6, 6)).shape
    difflab.Size([1, 4, 5, 6, 6])
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        in_channels, out_channels = _channels("Conv3d", in_channels, out_channels, groups)
        if padding_mode != "zeros":
            raise ValueError(f"only padding_mode='zeros' is supported, got {padding_mode!r}")

        def triple(value: Any, what: str) -> tuple:
            return F._window("Conv3d", value, what, 3)

        self.in_channels, self.out_channels = int(in_channels), int(out_channels)
        self.kernel_size, self.stride = triple(kernel_size, "kernel_size"), triple(stride, "stride")
        self.padding = padding if isinstance(padding, str) else triple(padding, "padding")
        self.dilation, self.groups = triple(dilation, "dilation"), int(groups)
        self.weight = _empty(out_channels, in_channels // groups, *self.kernel_size,
                             dtype=dtype, device=device)
        if bias:
            self.bias = _empty(out_channels, dtype=dtype, device=device)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        r"""Draw new weights and bias from PyTorch's default, :math:`\mathcal U(-k, k)`.

        Here :math:`\text{fan\_in} = C_{in}/\text{groups} \cdot k_d k_h k_w`.
        Then :math:`k = 1/\sqrt{\text{fan\_in}}`.

        Returns
        -------
        None

        Examples
        --------
        >>> from difflab import nn
        >>> layer = nn.Conv3d(2, 4, kernel_size=3)
        >>> _ = nn.init.zeros_(layer.weight)
        >>> layer.reset_parameters()
        >>> bool((layer.weight != 0).all())
        True
        """
        init.default_linear_init_(self.weight, self.bias)

    def forward(self, x: Tensor) -> Tensor:
        return F.conv3d(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)

    def extra_repr(self) -> str:
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")


class ConvTranspose3d(_ConvTransposeNd):
    r"""The transposed 3-D convolution: a learned upsampling of (N, C_in, D, H, W) volumes.

    The module form of :func:`difflab.nn.functional.conv_transpose3d`, the adjoint of a
    :class:`Conv3d` with the same settings (it maps that convolution's output shape back
    to its input shape).

    Parameters
    ----------
    in_channels, out_channels : int
        :math:`C_{in}`, :math:`C_{out}`.
    kernel_size : int or tuple of 3 ints
        :math:`(k_d, k_h, k_w)`.
    stride, padding, output_padding, dilation : int or tuple of 3 ints
        As in :class:`ConvTranspose2d` (defaults 1, 0, 0, 1).
    groups : int, default 1
        Independent groups of channels; both channel counts must be divisible by it.
    bias : bool, default True
        Learn a bias per output channel.
    padding_mode : {'zeros'}, default 'zeros'
        The only mode supported.
    device, dtype : optional
        Where the parameters live and their dtype.

    Attributes
    ----------
    weight : Parameter
        :math:`(C_{in}, C_{out}/\text{groups}, k_d, k_h, k_w)`, PyTorch's layout, drawn
        from :math:`\mathcal U(-k, k)` with :math:`k = 1/\sqrt{C_{out}/\text{groups}
        \cdot k_d k_h k_w}`.
    bias : Parameter or None
        :math:`(C_{out},)`.

    Shape
    -----
    - Input: :math:`(N, C_{in}, D_{in}, H_{in}, W_{in})` or without :math:`N`.
    - Output: :math:`(N, C_{out}, D_{out}, H_{out}, W_{out})`,
      :math:`D_{out} = (D_{in} - 1)s_d - 2p_d + d_d(k_d - 1) + \text{output\_padding}_d + 1`
      (:math:`H_{out}`, :math:`W_{out}` alike).

    Raises
    ------
    ValueError
        For channels not divisible by ``groups`` or another padding mode, a kernel size,
        stride, dilation or ``groups`` below 1, or a negative padding; when called, on
        an input whose channels are not ``in_channels``.
    TypeError
        For a channel count or window argument that is not an int.
    NotImplementedError
        When ``forward`` is given ``output_size`` (pass ``output_padding`` to the layer).

    See Also
    --------
    Conv3d, ConvTranspose2d, difflab.nn.functional.conv_transpose3d

    Examples
    --------
    >>> import difflab as dl
    >>> _ = dl.manual_seed(0)
    >>> up = dl.nn.ConvTranspose3d(4, 2, kernel_size=2, stride=2)
    >>> up
    ConvTranspose3d(4, 2, kernel_size=(2, 2, 2), stride=(2, 2, 2))
    >>> up.weight.shape, up(dl.randn(1, 4, 3, 3, 3)).shape
    (difflab.Size([4, 2, 2, 2, 2]), difflab.Size([1, 2, 6, 6, 6]))
    """

    _dims = 3

    def forward(self, x: Tensor, output_size: Any = None) -> Tensor:
        if output_size is not None:
            raise NotImplementedError("ConvTranspose3d: pass output_padding to the layer "
                                      "instead of output_size to forward")
        return F.conv_transpose3d(x, self.weight, self.bias, self.stride, self.padding,
                                  self.output_padding, self.groups, self.dilation)
