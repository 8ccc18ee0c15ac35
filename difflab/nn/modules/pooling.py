"""Pooling layers at PyTorch's path ``nn.modules.pooling``: 1-D, 2-D and 3-D max/average pooling."""

from __future__ import annotations

from typing import Any

from difflab.nn import functional as F
from difflab.nn.modules.layers import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d, _MaxPoolNd
from difflab.nn.modules.module import Module
from difflab.tensor import Tensor

__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d",
           "AvgPool1d", "AvgPool2d", "AvgPool3d", "LPPool1d", "LPPool2d", "LPPool3d", "MaxPool1d",
           "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]


class MaxPool1d(_MaxPoolNd):
    r"""The maximum over each window of ``kernel_size`` along L of (N, C, L) inputs.

    Parameters
    ----------
    kernel_size : int
    stride : int, optional
        Defaults to ``kernel_size``.
    padding, dilation : int
    return_indices : bool, default False
        Also return where each maximum is (for :class:`MaxUnpool1d`).
    ceil_mode : bool, default False
        Only False (see :func:`difflab.nn.functional.max_pool1d`).

    Shape
    -----
    - Input: :math:`(N, C, L_{in})` or :math:`(C, L_{in})`.
    - Output: :math:`(N, C, L_{out})` or :math:`(C, L_{out})`.

    Notes
    -----
    .. math::
        \text{out}(N_i, C_j, l) = \max_{m < k} \text{input}(N_i, C_j, s\,l + d\,m)

        L_{out} = \left\lfloor \frac{L_{in} + 2p - d(k - 1) - 1}{s} \right\rfloor + 1

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.MaxPool1d(2)(dl.tensor([[[1., 5., 2., 0.]]]))
    tensor([[[5., 2.]]])
    """

    function = "max_pool1d"


class AvgPool1d(Module):
    r"""The mean over each window of ``kernel_size`` along L of (N, C, L) inputs.

    Parameters
    ----------
    kernel_size : int
    stride : int, optional
        Defaults to ``kernel_size``.
    padding : int
    ceil_mode, count_include_pad : bool
        Only PyTorch's defaults (see :func:`difflab.nn.functional.avg_pool1d`).

    Shape
    -----
    - Input: :math:`(N, C, L_{in})` or :math:`(C, L_{in})`.
    - Output: :math:`(N, C, L_{out})` or :math:`(C, L_{out})`.

    Notes
    -----
    .. math::
        \text{out}(N_i, C_j, l) = \frac{1}{k} \sum_{m < k} \text{input}(N_i, C_j, s\,l + m)

        L_{out} = \left\lfloor \frac{L_{in} + 2p - k}{s} \right\rfloor + 1

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.AvgPool1d(2)(dl.tensor([[[1., 3., 2., 4.]]]))
    tensor([[[2., 3.]]])
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, x: Tensor) -> Tensor:
        return F.avg_pool1d(x, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveMaxPool2d(Module):
    """The maximum over each cell of an ``output_size`` grid that tiles the input.

    Parameters
    ----------
    output_size : int or tuple of 2 (int or None)
        :math:`(H_{out}, W_{out})`; ``None`` for a side keeps the input's size there.
    return_indices : bool, default False
        Also return where each maximum is (the indices PyTorch returns).

    Shape
    -----
    - Input: :math:`(N, C, H, W)` or :math:`(C, H, W)`.
    - Output: :math:`(N, C, H_{out}, W_{out})` or :math:`(C, H_{out}, W_{out})`.

    Raises
    ------
    ValueError
        When called on an input that is not 3-D or 4-D, or with an ``output_size``
        that is not an int or a pair of positive ints (or None).

    See Also
    --------
    AdaptiveAvgPool2d, difflab.nn.functional.adaptive_max_pool2d

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.AdaptiveMaxPool2d((2, 3))(dl.randn(1, 4, 7, 8)).shape
    difflab.Size([1, 4, 2, 3])
    >>> dl.nn.AdaptiveMaxPool2d((None, 3))(dl.randn(1, 4, 7, 8)).shape
    difflab.Size([1, 4, 7, 3])
    """

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, x: Tensor) -> Tensor:
        return F.adaptive_max_pool2d(x, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(Module):
    """The mean over each of ``output_size`` cells tiling L of (N, C, L).

    Parameters
    ----------
    output_size : int
        :math:`L_{out}`, the number of cells.

    Shape
    -----
    - Input: :math:`(N, C, L)` or :math:`(C, L)`.
    - Output: :math:`(N, C, L_{out})` or :math:`(C, L_{out})`.

    Raises
    ------
    ValueError
        When called on an input that is not 2-D or 3-D.

    See Also
    --------
    AdaptiveAvgPool2d, difflab.nn.functional.adaptive_avg_pool1d

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.AdaptiveAvgPool1d(1)(dl.randn(2, 3, 10)).shape
    difflab.Size([2, 3, 1])
    """

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, x: Tensor) -> Tensor:
        return F.adaptive_avg_pool1d(x, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(Module):
    """The maximum over each of ``output_size`` cells tiling L of (N, C, L).

    Parameters
    ----------
    output_size : int
        :math:`L_{out}`, the number of cells.
    return_indices : bool, default False
        Also return where each maximum is (the indices PyTorch returns).

    Shape
    -----
    - Input: :math:`(N, C, L)` or :math:`(C, L)`.
    - Output: :math:`(N, C, L_{out})` or :math:`(C, L_{out})`.

    Raises
    ------
    ValueError
        When called on an input that is not 2-D or 3-D.

    See Also
    --------
    AdaptiveMaxPool2d, difflab.nn.functional.adaptive_max_pool1d

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.AdaptiveMaxPool1d(4)(dl.randn(2, 3, 10)).shape
    difflab.Size([2, 3, 4])
    """

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, x: Tensor) -> Tensor:
        return F.adaptive_max_pool1d(x, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool3d(Module):
    r"""Average pooling of (N, C, D, H, W) to a fixed ``output_size`` grid, whatever its size.

    Output cell :math:`i` along a side of length :math:`n` split into :math:`m` cells
    averages the input over :math:`[\lfloor i n/m \rfloor, \lceil (i+1) n/m \rceil)`,
    on each of D, H and W (PyTorch's bins).

    Parameters
    ----------
    output_size : int or tuple of 3 (int or None)
        :math:`(D_{out}, H_{out}, W_{out})`; an int means a cube, ``None`` for a
        side keeps the input's size there.

    Shape
    -----
    - Input: :math:`(N, C, D, H, W)` or :math:`(C, D, H, W)`.
    - Output: :math:`(N, C, D_{out}, H_{out}, W_{out})` or without :math:`N`.

    Raises
    ------
    ValueError
        When called on an input that is not 4-D or 5-D, or with an ``output_size``
        that is not an int or three positive ints (or None).

    See Also
    --------
    AdaptiveAvgPool2d, AdaptiveMaxPool3d, difflab.nn.functional.adaptive_avg_pool3d

    Examples
    --------
    >>> import difflab as dl
    >>> pool = dl.nn.AdaptiveAvgPool3d((1, None, 2))
    >>> pool
    AdaptiveAvgPool3d(output_size=(1, None, 2))
    >>> pool(dl.randn(2, 3, 4, 5, 6)).shape
    difflab.Size([2, 3, 1, 5, 2])
    """

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, x: Tensor) -> Tensor:
        return F.adaptive_avg_pool3d(x, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool3d(Module):
    r"""The maximum over each cell of an ``output_size`` grid that tiles (N, C, D, H, W).

    Parameters
    ----------
    output_size : int or tuple of 3 (int or None)
        :math:`(D_{out}, H_{out}, W_{out})`; ``None`` for a side keeps the input's
        size there.
    return_indices : bool, default False
        Also return where each maximum is (the indices PyTorch returns).

    Shape
    -----
    - Input: :math:`(N, C, D, H, W)` or :math:`(C, D, H, W)`.
    - Output: :math:`(N, C, D_{out}, H_{out}, W_{out})` or without :math:`N`.

    Raises
    ------
    ValueError
        When called on an input that is not 4-D or 5-D, or with an ``output_size``
        that is not an int or three positive ints (or None).

    See Also
    --------
    AdaptiveMaxPool2d, AdaptiveAvgPool3d, difflab.nn.functional.adaptive_max_pool3d

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.AdaptiveMaxPool3d(2)(dl.randn(1, 4, 5, 7, 8)).shape
    difflab.Size([1, 4, 2, 2, 2])
    """

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, x: Tensor) -> Tensor:
        return F.adaptive_max_pool3d(x, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class MaxPool3d(_MaxPoolNd):
    r"""The maximum over each box of ``kernel_size`` in (N, C, D, H, W) volumes.

    Parameters
    ----------
    kernel_size : int or tuple of 3 ints
        The box :math:`(k_d, k_h, k_w)`.
    stride : int or tuple of 3 ints, optional
        The step between boxes; ``kernel_size`` when left out.
    padding : int or tuple of 3 ints, default 0
        Implicit :math:`-\infty` padding on both sides; at most half the kernel size.
    dilation : int or tuple of 3 ints, default 1
        The spacing between the box's elements.
    return_indices : bool, default False
        Also return where each maximum is (for :class:`MaxUnpool3d`).
    ceil_mode : bool, default False
        Only False (see :func:`difflab.nn.functional.max_pool3d`).

    Shape
    -----
    - Input: :math:`(N, C, D_{in}, H_{in}, W_{in})` or :math:`(C, D_{in}, H_{in}, W_{in})`.
    - Output: :math:`(N, C, D_{out}, H_{out}, W_{out})` or without :math:`N`,
      :math:`D_{out} = \lfloor (D_{in} + 2p_d - d_d(k_d - 1) - 1)/s_d \rfloor + 1`
      (and the same for :math:`H_{out}`, :math:`W_{out}`).

    Raises
    ------
    ValueError
        When called on an input that is not 4-D or 5-D, or with a padding over half the
        kernel.
    NotImplementedError
        When called with ``ceil_mode=True``.

    See Also
    --------
    AvgPool3d, MaxPool2d, MaxUnpool3d, difflab.nn.functional.max_pool3d

    Examples
    --------
    >>> import difflab as dl
    >>> pool = dl.nn.MaxPool3d(2)
    >>> pool
    MaxPool3d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    >>> pool(dl.arange(64.0).reshape(1, 1, 4, 4, 4)).flatten().tolist()
    [21.0, 23.0, 29.0, 31.0, 53.0, 55.0, 61.0, 63.0]
    """

    function = "max_pool3d"


class AvgPool3d(Module):
    r"""The mean over each box of ``kernel_size`` in (N, C, D, H, W) volumes.

    Parameters
    ----------
    kernel_size : int or tuple of 3 ints
        The box :math:`(k_d, k_h, k_w)`.
    stride : int or tuple of 3 ints, optional
        The step between boxes; ``kernel_size`` when left out.
    padding : int or tuple of 3 ints, default 0
        Zeros on both sides, counted in the mean; at most half the kernel size.
    ceil_mode, count_include_pad : bool
        Only PyTorch's defaults (see :func:`difflab.nn.functional.avg_pool3d`).
    divisor_override : int, optional
        Divide each box's sum by this instead of its size.

    Shape
    -----
    - Input: :math:`(N, C, D_{in}, H_{in}, W_{in})` or :math:`(C, D_{in}, H_{in}, W_{in})`.
    - Output: :math:`(N, C, D_{out}, H_{out}, W_{out})` or without :math:`N`,
      :math:`D_{out} = \lfloor (D_{in} + 2p_d - k_d)/s_d \rfloor + 1`.

    Raises
    ------
    ValueError
        When called on an input that is not 4-D or 5-D, or with a padding over half the
        kernel.
    NotImplementedError
        When called with ``ceil_mode=True`` or ``count_include_pad=False``.

    See Also
    --------
    MaxPool3d, AvgPool2d, AdaptiveAvgPool3d, difflab.nn.functional.avg_pool3d

    Examples
    --------
    >>> import difflab as dl
    >>> pool = dl.nn.AvgPool3d(2, stride=1)
    >>> pool
    AvgPool3d(kernel_size=2, stride=1, padding=0)
    >>> pool(dl.arange(27.0).reshape(1, 1, 3, 3, 3)).flatten().tolist()
    [6.5, 7.5, 9.5, 10.5, 15.5, 16.5, 18.5, 19.5]
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, x: Tensor) -> Tensor:
        return F.avg_pool3d(x, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _LPPoolNd(Module):
    function = ""

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size, self.stride = norm_type, kernel_size, stride
        self.ceil_mode = ceil_mode

    def forward(self, x: Tensor) -> Tensor:
        return getattr(F, self.function)(x, self.norm_type, self.kernel_size, self.stride,
                                         self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


_LP_DOC = r"""Power-average pooling of {what}: the p-norm of each window.

    :math:`(\sum_{{\text{{window}}}} x^p)^{{1/p}}` (see
    :func:`difflab.nn.functional.{function}`): ``p = 1`` is sum pooling, a large
    ``p`` nears max pooling.

    Parameters
    ----------
    norm_type : float
        :math:`p`.
    kernel_size : int or tuple of {dims} ints
        The window.
    stride : int or tuple of {dims} ints, optional
        The step; ``kernel_size`` when left out.
    ceil_mode : bool, default False
        Only False is supported.

    Shape
    -----
    - Input: {shape} (or without :math:`N`).
    - Output: the same with each window's side :math:`\lfloor (L - k)/s \rfloor + 1`.

    Raises
    ------
    TypeError
        When called, if ``norm_type`` is not a number or a window argument not an int.
    NotImplementedError
        When called with ``ceil_mode=True``.

    See Also
    --------
    {see}, difflab.nn.functional.{function}

    Examples
    --------
    >>> import difflab as dl
    >>> pool = dl.nn.{name}(2, 2)
    >>> pool
    {name}(norm_type=2, kernel_size=2, stride=None, ceil_mode=False)
    >>> [round(v, 4) for v in pool(dl.ones({example}) * 3).flatten().tolist()]
    {result}
    """


class LPPool1d(_LPPoolNd):
    __doc__ = _LP_DOC.format(what="(N, C, L) signals", function="lp_pool1d", dims=1,
                             shape=r":math:`(N, C, L)`", see="AvgPool1d, LPPool2d",
                             name="LPPool1d", example="1, 1, 4", result="[4.2426, 4.2426]")
    function = "lp_pool1d"


class LPPool2d(_LPPoolNd):
    __doc__ = _LP_DOC.format(what="(N, C, H, W) images", function="lp_pool2d", dims=2,
                             shape=r":math:`(N, C, H, W)`", see="AvgPool2d, LPPool3d",
                             name="LPPool2d", example="1, 1, 2, 2", result="[6.0]")
    function = "lp_pool2d"


class LPPool3d(_LPPoolNd):
    __doc__ = _LP_DOC.format(what="(N, C, D, H, W) volumes", function="lp_pool3d", dims=3,
                             shape=r":math:`(N, C, D, H, W)`", see="AvgPool3d, LPPool2d",
                             name="LPPool3d", example="1, 1, 2, 2, 2", result="[8.4853]")
    function = "lp_pool3d"


class _MaxUnpoolNd(Module):
    function, _dims = "", 1

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        name, d = type(self).__name__, self._dims  # (tuples, as PyTorch stores them)
        self.kernel_size = F._window(name, kernel_size, "kernel_size", d)
        self.stride = self.kernel_size if stride is None else F._window(name, stride, "stride", d)
        self.padding = F._window(name, padding, "padding", d)

    def forward(self, x: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        return getattr(F, self.function)(x, indices, self.kernel_size, self.stride,
                                         self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


_UNPOOL_DOC = r"""The inverse of :class:`MaxPool{d}d`: each value written back where its index says.

    Zeros elsewhere: the values the pool dropped are not restored.

    Called as ``unpool(values, indices, output_size=None)`` with what a
    ``MaxPool{d}d(..., return_indices=True)`` returned (see
    :func:`difflab.nn.functional.max_unpool{d}d`); ``output_size`` picks the size
    when the pool dropped a border.

    Parameters
    ----------
    kernel_size : int or tuple of {d} ints
        The pool's window.
    stride : int or tuple of {d} ints, optional
        The pool's step; ``kernel_size`` when left out.
    padding : int or tuple of {d} ints, default 0
        The pool's padding.

    Shape
    -----
    - Input: {shape}; the indices the same.
    - Output: each spatial side :math:`(L_{{in}} - 1) s - 2p + k`, or ``output_size``.

    Raises
    ------
    ValueError
        When called with indices that are not integers of the input's shape, or an
        ``output_size`` out of range.
    RuntimeError
        When an index is outside the output.

    See Also
    --------
    MaxPool{d}d, difflab.nn.functional.max_unpool{d}d

    Examples
    --------
    >>> import difflab as dl
    >>> pool, unpool = dl.nn.MaxPool{d}d(2, return_indices=True), dl.nn.MaxUnpool{d}d(2)
    >>> unpool
    MaxUnpool{d}d({repr})
    >>> unpool(*pool({example})).flatten().tolist()
    {result}
    """


class MaxUnpool1d(_MaxUnpoolNd):
    __doc__ = _UNPOOL_DOC.format(d=1, shape=r":math:`(N, C, L)` or :math:`(C, L)`",
                                 example="dl.tensor([[[1.0, 5.0, 2.0, 0.0]]])",
                                 result="[0.0, 5.0, 2.0, 0.0]",
                                 repr="kernel_size=(2,), stride=(2,), padding=(0,)")
    function, _dims = "max_unpool1d", 1


class MaxUnpool2d(_MaxUnpoolNd):
    __doc__ = _UNPOOL_DOC.format(d=2, shape=r":math:`(N, C, H, W)` or :math:`(C, H, W)`",
                                 example="dl.tensor([[[[1.0, 5.0], [3.0, 4.0]]]])",
                                 result="[0.0, 5.0, 0.0, 0.0]",
                                 repr="kernel_size=(2, 2), stride=(2, 2), padding=(0, 0)")
    function, _dims = "max_unpool2d", 2


class MaxUnpool3d(_MaxUnpoolNd):
    __doc__ = _UNPOOL_DOC.format(d=3, shape=r":math:`(N, C, D, H, W)` or :math:`(C, D, H, W)`",
                                 example="dl.arange(8.0).reshape(1, 1, 2, 2, 2)",
                                 result="[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 7.0]",
                                 repr="kernel_size=(2, 2, 2), stride=(2, 2, 2), "
                                 "padding=(0, 0, 0)")
    function, _dims = "max_unpool3d", 3


class _FractionalMaxPoolNd(Module):
    function, _dims = "", 2

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Any = None) -> None:
        super().__init__()
        name, d = type(self).__name__, self._dims
        self.kernel_size = F._window(name, kernel_size, "kernel_size", d)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = None if output_size is None else F._window(name, output_size,
                                                                      "output_size", d)
        self.output_ratio = None
        if output_ratio is not None:
            ratios = tuple(output_ratio) if isinstance(output_ratio, (tuple, list)) else \
                (output_ratio,) * d
            if len(ratios) != d or not all(0 < r < 1 for r in ratios):
                raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")
            self.output_ratio = ratios
        if self.output_size is None and self.output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling "
                             "ratio")

    def forward(self, x: Tensor) -> Any:
        return getattr(F, self.function)(x, self.kernel_size, self.output_size,
                                         self.output_ratio, self.return_indices,
                                         _random_samples=self._random_samples)


_FRACTIONAL_DOC = r"""Fractional max pooling of {what}: windows placed at random.

    The output may shrink the input by any ratio (Graham, 2014): new window
    positions are drawn at every call (see
    :func:`difflab.nn.functional.fractional_max_pool{d}d`).

    Parameters
    ----------
    kernel_size : int or tuple of {d} ints
        The window.
    output_size : int or tuple of {d} ints, optional
        The output's spatial size.
    output_ratio : float or tuple of {d} floats, optional
        Or its fraction in :math:`(0, 1)` of the input's size.
    return_indices : bool, default False
        Also return where each maximum is (for :class:`MaxUnpool{d}d`).
    _random_samples : Tensor, optional
        Fixed draws :math:`(N, C, {d})` placing the windows (a buffer, PyTorch's).

    Shape
    -----
    - Input: {shape}.
    - Output: the same with the spatial sizes ``output_size``.

    Raises
    ------
    ValueError
        If neither ``output_size`` nor ``output_ratio`` is given, or a ratio is outside
        :math:`(0, 1)`.

    See Also
    --------
    MaxPool{d}d, difflab.nn.functional.fractional_max_pool{d}d

    Examples
    --------
    >>> import difflab as dl
    >>> _ = dl.manual_seed(0)
    >>> pool = dl.nn.FractionalMaxPool{d}d(2, output_ratio=0.5)
    >>> pool(dl.randn({example})).shape
    difflab.Size([{result}])
    """


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    __doc__ = _FRACTIONAL_DOC.format(what="(N, C, H, W) images", d=2,
                                     shape=r":math:`(N, C, H, W)` or :math:`(C, H, W)`",
                                     example="1, 3, 10, 9", result="1, 3, 5, 4")
    function, _dims = "fractional_max_pool2d", 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    __doc__ = _FRACTIONAL_DOC.format(what="(N, C, D, H, W) volumes", d=3,
                                     shape=r":math:`(N, C, D, H, W)` or :math:`(C, D, H, W)`",
                                     example="1, 2, 8, 6, 7", result="1, 2, 4, 3, 3")
    function, _dims = "fractional_max_pool3d", 3
