"""Lazy layers at PyTorch's path ``nn.modules.lazy``: ``LazyLinear``, ``LazyConv2d``, ...

A lazy layer is told its output size only (``LazyLinear(10)``); it learns its input
size from the first input it is called on.  Until then its parameters are
:class:`~difflab.nn.parameter.UninitializedParameter` placeholders (its running
statistics :class:`~difflab.nn.parameter.UninitializedBuffer`).  At the first call a
forward pre-hook reads the input's size, materializes the placeholders *in place* (the
same objects, so an optimizer built before the call updates them), initialises them as
the ordinary layer does, and turns the layer into that layer's class (``LazyLinear``
becomes ``Linear``), as PyTorch does.  Loading a ``state_dict`` into a lazy layer gives
its placeholders the checkpoint's shapes (:meth:`Module.load_state_dict`).
"""

from __future__ import annotations

import warnings
from typing import Any

from difflab.creation import tensor
from difflab.dtypes import int64
from difflab.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from difflab.nn.modules.conv import (
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from difflab.nn.modules.instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from difflab.nn.modules.layers import Linear
from difflab.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from difflab.tensor import Tensor
from difflab.tensor_arguments import integer

__all__ = ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyConv1d", "LazyConv2d",
           "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d", "LazyLinear",
           "LazyModuleMixin"]


def _infer_parameters(module: Any, args: tuple) -> None:
    """The forward pre-hook of a lazy layer: size it from its first input, once."""
    module.initialize_parameters(*args)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {type(module).__name__} has not been fully initialized")
    module._initialize_hook.remove()
    del module._initialize_hook
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


class LazyModuleMixin:
    """What every lazy layer shares: the hook that sizes it at its first call.

    A subclass puts this class first among its bases, before the layer it becomes
    (``class LazyLinear(LazyModuleMixin, Linear)``), sets ``cls_to_become`` to that
    layer and writes :meth:`initialize_parameters`.

    Attributes
    ----------
    cls_to_become : type or None
        The class the layer takes once sized (None: it keeps its own).

    See Also
    --------
    LazyLinear, difflab.nn.UninitializedParameter

    Examples
    --------
    >>> import difflab as dl
    >>> layer = dl.nn.LazyLinear(3)
    >>> isinstance(layer, dl.nn.modules.lazy.LazyModuleMixin), layer.has_uninitialized_params()
    (True, True)
    >>> _ = layer(dl.ones(2, 5))
    >>> type(layer).__name__, layer.in_features
    ('Linear', 5)
    """

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        with warnings.catch_warnings():  # (the placeholder sizes are 0: nothing to draw)
            warnings.filterwarnings("ignore", "Initializing zero-element tensors")
            super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters)

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer of this layer is still a placeholder.

        Returns
        -------
        bool
            True until the first call (or a loaded ``state_dict``) sizes them.

        Examples
        --------
        >>> import difflab as dl
        >>> layer = dl.nn.LazyConv2d(4, 3)
        >>> layer.has_uninitialized_params()
        True
        >>> layer.initialize_parameters(dl.ones(1, 2, 5, 5))   # what the first call does
        >>> layer.has_uninitialized_params()
        False
        """
        tensors = list(self._parameters.values()) + list(self._buffers.values())
        return any(is_lazy(t) for t in tensors)

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Size and initialise the placeholders from the first call's inputs.

        Parameters
        ----------
        *args, **kwargs
            The inputs of the first call.

        Returns
        -------
        None

        Raises
        ------
        NotImplementedError
            In this mixin: each lazy layer writes its own.

        Examples
        --------
        >>> import difflab as dl
        >>> layer = dl.nn.LazyLinear(2)
        >>> layer.initialize_parameters(dl.ones(1, 4))
        >>> layer.weight.shape
        difflab.Size([2, 4])
        """
        raise NotImplementedError(f"{type(self).__name__} must say how its first input "
                                  "sizes its parameters (initialize_parameters)")


# ---------------------------------------------------------------------------------- linear


class LazyLinear(LazyModuleMixin, Linear):
    r"""A :class:`Linear` layer whose ``in_features`` is read from its first input.

    Parameters
    ----------
    out_features : int
        The size of each output.
    bias : bool, default True
        Learn an additive bias.
    device, dtype : optional
        Where the parameters will live and their dtype.

    Attributes
    ----------
    weight : UninitializedParameter, then Parameter
        :math:`(\text{out\_features}, \text{in\_features})` after the first call, drawn
        as :class:`Linear` draws it.
    bias : UninitializedParameter, then Parameter, or None
        :math:`(\text{out\_features},)`.

    Shape
    -----
    - Input: :math:`(*, H_{in})`; the first call sets :math:`H_{in}`.
    - Output: :math:`(*, \text{out\_features})`.

    Raises
    ------
    TypeError
        If ``out_features`` is not an int.

    See Also
    --------
    Linear : the layer it becomes at its first call.
    difflab.nn.UninitializedParameter : its parameters until then.

    Examples
    --------
    >>> import difflab as dl
    >>> _ = dl.manual_seed(0)
    >>> layer = dl.nn.LazyLinear(2)
    >>> layer
    LazyLinear(in_features=0, out_features=2, bias=True)
    >>> opt = dl.optim.SGD(layer.parameters(), lr=0.1)   # before the first call
    >>> layer(dl.ones(4, 3)).shape
    difflab.Size([4, 2])
    >>> layer
    Linear(in_features=3, out_features=2, bias=True)
    """

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(0, 0, False, device, dtype)
        self.out_features = integer(out_features, "LazyLinear", "out_features")
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def initialize_parameters(self, input: Tensor) -> None:  # noqa: A002
        """Size the weight from ``input.shape[-1]`` and initialise it as :class:`Linear` does.

        Parameters
        ----------
        input : Tensor
            The first input, :math:`(*, H_{in})`.

        Returns
        -------
        None

        Examples
        --------
        >>> import difflab as dl
        >>> layer = dl.nn.LazyLinear(2, bias=False)
        >>> layer.initialize_parameters(dl.ones(7))
        >>> layer.in_features, layer.weight.shape
        (7, difflab.Size([2, 7]))
        """
        if self.has_uninitialized_params():
            self.in_features = int(input.shape[-1])
            self.weight.materialize((self.out_features, self.in_features))
            if self.bias is not None:
                self.bias.materialize((self.out_features,))
            self.reset_parameters()
        else:  # (sized by a loaded state_dict)
            self.in_features = int(self.weight.shape[1])


# ------------------------------------------------------------------------------ convolution


class _LazyConvMixin(LazyModuleMixin):
    _dims = 2
    _transposed = False

    def __init__(self, out_channels: int, kernel_size: Any, *args: Any, bias: bool = True,
                 device: Any = None, dtype: Any = None, **kwargs: Any) -> None:
        super().__init__(0, 0, kernel_size, *args, bias=False, device=device, dtype=dtype,
                         **kwargs)
        name = type(self).__name__
        self.out_channels = integer(out_channels, name, "out_channels")
        if self.out_channels % self.groups:
            raise ValueError(f"{name}: out_channels ({self.out_channels}) must be divisible "
                             f"by groups ({self.groups})")
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def initialize_parameters(self, input: Tensor, *args: Any) -> None:  # noqa: A002
        """Size the weight from the input's channels (dimension 1, or 0 unbatched) and
        initialise it as the convolution does.

        Parameters
        ----------
        input : Tensor
            The first input, :math:`(N, C_{in}, \\ldots)` or :math:`(C_{in}, \\ldots)`.
        *args
            The call's other arguments (a transposed convolution's ``output_size``).

        Returns
        -------
        None

        Raises
        ------
        ValueError
            If the input has the wrong number of dimensions, or its channels are not
            divisible by ``groups``.

        Examples
        --------
        >>> import difflab as dl
        >>> layer = dl.nn.LazyConv1d(4, 3)
        >>> layer.initialize_parameters(dl.ones(2, 6, 10))
        >>> layer.in_channels, layer.weight.shape
        (6, difflab.Size([4, 6, 3]))
        """
        name = type(self).__name__
        if not self.has_uninitialized_params():  # (sized by a loaded state_dict)
            shape = self.weight.shape
            self.in_channels = int(shape[0] if self._transposed else shape[1] * self.groups)
            return
        if not isinstance(input, Tensor) or input.ndim not in (self._dims + 1, self._dims + 2):
            raise ValueError(f"{name} expects a {self._dims + 1}-D (unbatched) or "
                             f"{self._dims + 2}-D input, got shape "
                             f"{tuple(getattr(input, 'shape', ()))}")
        channels = int(input.shape[1 if input.ndim == self._dims + 2 else 0])
        if channels % self.groups:
            raise ValueError(f"{name}: the input's {channels} channels must be divisible by "
                             f"groups ({self.groups})")
        self.in_channels = channels
        if self._transposed:
            shape = (channels, self.out_channels // self.groups)
        else:
            shape = (self.out_channels, channels // self.groups)
        self.weight.materialize(shape + tuple(self.kernel_size))
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))
        self.reset_parameters()


_CONV_DOC = r"""A :class:`{become}` whose ``in_channels`` is read from its first input.

    Parameters
    ----------
    out_channels : int
        :math:`C_{{out}}`.
    kernel_size : int or tuple of {dims} ints
        The kernel's size.
    stride, padding, {extra}dilation : int or tuple of {dims} ints
        As in :class:`{become}`.
    groups : int, default 1
        Independent groups of channels (``out_channels`` and the input's channels must
        be divisible by it).
    bias : bool, default True
        Learn a bias per output channel.
    padding_mode : {{'zeros'}}, default 'zeros'
        As in :class:`{become}`.
    device, dtype : optional
        Where the parameters will live and their dtype.

    Attributes
    ----------
    weight : UninitializedParameter, then Parameter
        {weight} after the first call.
    bias : UninitializedParameter, then Parameter, or None
        :math:`(C_{{out}},)`.

    Shape
    -----
    - Input: :math:`(N, C_{{in}}, *)` or :math:`(C_{{in}}, *)` with {dims} spatial sizes;
      the first call sets :math:`C_{{in}}`.
    - Output: as :class:`{become}`'s.

    Raises
    ------
    ValueError
        If ``out_channels`` is not divisible by ``groups``; at the first call, if the
        input has the wrong number of dimensions or channels not divisible by ``groups``.
    TypeError
        If ``out_channels`` or a window argument is not an int.

    See Also
    --------
    {become} : the layer it becomes at its first call.
    LazyLinear : the same for a linear layer.

    Examples
    --------
    >>> import difflab as dl
    >>> layer = dl.nn.{name}(4, 3)
    >>> layer(dl.ones({example})).shape
    difflab.Size([{out}])
    >>> type(layer).__name__, layer.in_channels, tuple(layer.weight.shape)
    ('{become}', 2, {wshape})
    """


def _conv_doc(name: str, become: str, dims: int, transposed: bool, example: str, out: str,
              wshape: str) -> str:
    weight = (r":math:`(C_{in}, C_{out}/\text{groups}, *\text{kernel\_size})`" if transposed
              else r":math:`(C_{out}, C_{in}/\text{groups}, *\text{kernel\_size})`")
    return _CONV_DOC.format(name=name, become=become, dims=dims, weight=weight,
                            extra="output_padding, " if transposed else "",
                            example=example, out=out, wshape=wshape)


class LazyConv1d(_LazyConvMixin, Conv1d):
    __doc__ = _conv_doc("LazyConv1d", "Conv1d", 1, False, "1, 2, 8", "1, 4, 6", "(4, 2, 3)")
    cls_to_become, _dims = Conv1d, 1

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(out_channels, kernel_size, stride, padding, dilation, groups,
                         bias=bias, padding_mode=padding_mode, device=device, dtype=dtype)


class LazyConv2d(_LazyConvMixin, Conv2d):
    __doc__ = _conv_doc("LazyConv2d", "Conv2d", 2, False, "1, 2, 5, 5", "1, 4, 3, 3",
                        "(4, 2, 3, 3)")
    cls_to_become, _dims = Conv2d, 2

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(out_channels, kernel_size, stride, padding, dilation, groups,
                         bias=bias, padding_mode=padding_mode, device=device, dtype=dtype)


class LazyConv3d(_LazyConvMixin, Conv3d):
    __doc__ = _conv_doc("LazyConv3d", "Conv3d", 3, False, "1, 2, 4, 4, 4", "1, 4, 2, 2, 2",
                        "(4, 2, 3, 3, 3)")
    cls_to_become, _dims = Conv3d, 3

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(out_channels, kernel_size, stride, padding, dilation, groups,
                         bias=bias, padding_mode=padding_mode, device=device, dtype=dtype)


class _LazyConvTransposeMixin(_LazyConvMixin):
    _transposed = True

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(out_channels, kernel_size, stride, padding, output_padding, groups,
                         bias=bias, dilation=dilation, padding_mode=padding_mode,
                         device=device, dtype=dtype)


class LazyConvTranspose1d(_LazyConvTransposeMixin, ConvTranspose1d):
    __doc__ = _conv_doc("LazyConvTranspose1d", "ConvTranspose1d", 1, True, "1, 2, 4",
                        "1, 4, 6", "(2, 4, 3)")
    cls_to_become, _dims = ConvTranspose1d, 1


class LazyConvTranspose2d(_LazyConvTransposeMixin, ConvTranspose2d):
    __doc__ = _conv_doc("LazyConvTranspose2d", "ConvTranspose2d", 2, True, "1, 2, 2, 2",
                        "1, 4, 4, 4", "(2, 4, 3, 3)")
    cls_to_become, _dims = ConvTranspose2d, 2


class LazyConvTranspose3d(_LazyConvTransposeMixin, ConvTranspose3d):
    __doc__ = _conv_doc("LazyConvTranspose3d", "ConvTranspose3d", 3, True, "1, 2, 1, 1, 1",
                        "1, 4, 3, 3, 3", "(2, 4, 3, 3, 3)")
    cls_to_become, _dims = ConvTranspose3d, 3


# --------------------------------------------------------------------------- normalisation


class _LazyNormMixin(LazyModuleMixin):
    _spatial = 1  # (where the channels are: dimension 1, or 0 for an unbatched input)
    _unbatched_ok = False

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None
                 ) -> None:
        super().__init__(0, eps, momentum, False, False, device, dtype)
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.register_buffer("running_mean", UninitializedBuffer(device=device,
                                                                     dtype=dtype))
            self.register_buffer("running_var", UninitializedBuffer(device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=int64, device=device))

    def initialize_parameters(self, input: Tensor) -> None:  # noqa: A002
        r"""Size γ, β and the running statistics from the input's channels, and set them
        as the layer does (ones, zeros; mean 0, variance 1).

        Parameters
        ----------
        input : Tensor
            The first input, :math:`(N, C, *)` (or :math:`(C, *)` for instance norm).

        Returns
        -------
        None

        Examples
        --------
        >>> import difflab as dl
        >>> bn = dl.nn.LazyBatchNorm1d()
        >>> bn.initialize_parameters(dl.ones(4, 3))
        >>> bn.num_features, bn.weight.tolist(), bn.running_var.tolist()
        (3, [1.0, 1.0, 1.0], [1.0, 1.0, 1.0])
        """
        if not isinstance(input, Tensor) or input.ndim < 1:
            raise ValueError(f"{type(self).__name__} expects an input with channels, got "
                             f"{getattr(input, 'shape', input)!r}")
        unbatched = self._unbatched_ok and input.ndim == self._spatial + 1
        self.num_features = int(input.shape[0 if unbatched or input.ndim == 1 else 1])
        if not self.has_uninitialized_params():
            return
        for t in (self.weight, self.bias, self.running_mean, self.running_var):
            if is_lazy(t):
                t.materialize((self.num_features,))
        if self.affine:
            self.weight.data.fill_(1.0)
            self.bias.data.zero_()
        self.reset_running_stats()


_NORM_DOC = r"""A :class:`{become}` whose ``num_features`` is read from its first input.

    Parameters
    ----------
    eps : float, default 1e-5
        Added to the variance for numerical stability.
    momentum : float or None, default 0.1
        The weight of a new batch in the running estimates.
    affine : bool, default {affine}
        Learn :math:`\gamma` and :math:`\beta` (True by default for the lazy instance
        norms too, as in PyTorch).
    track_running_stats : bool, default {track}
        Keep running estimates of the mean and variance (True by default here too).
    device, dtype : optional
        Where the parameters and buffers will live and their dtype.

    Attributes
    ----------
    weight, bias : UninitializedParameter, then Parameter, or None
        :math:`(C,)` after the first call (ones and zeros).
    running_mean, running_var : UninitializedBuffer, then Tensor, or None
        :math:`(C,)` after the first call (zeros and ones).

    Shape
    -----
    - Input: as :class:`{become}`'s; the first call sets :math:`C` from dimension 1
      {unbatched}.
    - Output: the same shape.

    See Also
    --------
    {become} : the layer it becomes at its first call.
    LazyLinear : the same for a linear layer.

    Examples
    --------
    >>> import difflab as dl
    >>> layer = dl.nn.{name}({args})
    >>> layer(dl.ones({example}) * dl.arange(2.0).reshape({channels})).shape
    difflab.Size([{example}])
    >>> type(layer).__name__, layer.num_features
    ('{become}', 2)
    """


def _norm_doc(name: str, become: str, instance: bool, example: str, channels: str) -> str:
    return _NORM_DOC.format(
        name=name, become=become, affine=True, track=True, example=example,
        channels=channels, args="",
        unbatched="(dimension 0 for an unbatched input)" if instance else "")


class LazyBatchNorm1d(_LazyNormMixin, BatchNorm1d):
    __doc__ = _norm_doc("LazyBatchNorm1d", "BatchNorm1d", False, "3, 2, 4", "1, 2, 1")
    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormMixin, BatchNorm2d):
    __doc__ = _norm_doc("LazyBatchNorm2d", "BatchNorm2d", False, "3, 2, 2, 2", "1, 2, 1, 1")
    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormMixin, BatchNorm3d):
    __doc__ = _norm_doc("LazyBatchNorm3d", "BatchNorm3d", False, "3, 2, 2, 2, 2",
                        "1, 2, 1, 1, 1")
    cls_to_become = BatchNorm3d


class _LazyInstanceNormMixin(_LazyNormMixin):
    _unbatched_ok = True  # (PyTorch's lazy instance norms default to affine and tracking)


class LazyInstanceNorm1d(_LazyInstanceNormMixin, InstanceNorm1d):
    __doc__ = _norm_doc("LazyInstanceNorm1d", "InstanceNorm1d", True, "3, 2, 4", "1, 2, 1")
    cls_to_become, _spatial = InstanceNorm1d, 1


class LazyInstanceNorm2d(_LazyInstanceNormMixin, InstanceNorm2d):
    __doc__ = _norm_doc("LazyInstanceNorm2d", "InstanceNorm2d", True, "3, 2, 2, 2",
                        "1, 2, 1, 1")
    cls_to_become, _spatial = InstanceNorm2d, 2


class LazyInstanceNorm3d(_LazyInstanceNormMixin, InstanceNorm3d):
    __doc__ = _norm_doc("LazyInstanceNorm3d", "InstanceNorm3d", True, "3, 2, 2, 2, 2",
                        "1, 2, 1, 1, 1")
    cls_to_become, _spatial = InstanceNorm3d, 3
