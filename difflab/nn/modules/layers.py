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
from difflab.ops.nn_ops import _pair
from difflab.tensor import Tensor


def _empty(*shape: int, dtype: Any = None, device: Any = None) -> Parameter:
    from difflab.creation import zeros

    return Parameter(zeros(*shape, dtype=dtype or _Defaults.dtype, device=device))


class Identity(Module):
    """Returns its input unchanged."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, x: Any) -> Any:
        return x


class Linear(Module):
    """y = x Wᵀ + b, with W (out_features, in_features) and b (out_features,).

    Initialised as in PyTorch: W and b uniform in ±1/√in_features.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in_features, self.out_features = int(in_features), int(out_features)
        self.weight = _empty(out_features, in_features, dtype=dtype, device=device)
        if bias:
            self.bias = _empty(out_features, dtype=dtype, device=device)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.default_linear_init_(self.weight, self.bias)

    def forward(self, x: Tensor) -> Tensor:
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Conv2d(Module):
    """2-D convolution over (N, C, H, W) inputs.

    Positional arguments as in PyTorch: ``Conv2d(in_channels, out_channels,
    kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True)``.
    ``groups=in_channels`` gives a depthwise convolution.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if in_channels % groups or out_channels % groups:
            raise ValueError(
                f"in_channels ({in_channels}) and out_channels ({out_channels}) must both be "
                f"divisible by groups ({groups})"
            )
        if padding_mode != "zeros":
            raise ValueError(f"only padding_mode='zeros' is supported, got {padding_mode!r}")
        self.in_channels, self.out_channels = int(in_channels), int(out_channels)
        self.kernel_size = _pair(kernel_size)
        self.stride, self.dilation = _pair(stride), _pair(dilation)
        self.padding = padding if isinstance(padding, str) else _pair(padding)
        self.groups = int(groups)
        self.weight = _empty(out_channels, in_channels // groups, *self.kernel_size,
                             dtype=dtype, device=device)
        if bias:
            self.bias = _empty(out_channels, dtype=dtype, device=device)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
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


class MaxPool2d(Module):
    """The maximum over each ``kernel_size`` window (stride defaults to the kernel size)."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1) -> None:
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation

    def forward(self, x: Tensor) -> Tensor:
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding, self.dilation)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}")


class AvgPool2d(Module):
    """The mean over each ``kernel_size`` window (stride defaults to the kernel size)."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding = padding

    def forward(self, x: Tensor) -> Tensor:
        return F.avg_pool2d(x, self.kernel_size, self.stride, self.padding)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """Average pooling to a fixed ``output_size`` whatever the input size (1: global mean)."""

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
    """Batch normalisation of (N, C) or (N, C, L) inputs, per channel C."""

    _expected_ndim = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) inputs, per channel C."""

    _expected_ndim = (4,)


class LayerNorm(Module):
    """Normalise each sample over its last dimensions ``normalized_shape``; then γ x̂ + β."""

    def __init__(self, normalized_shape: Any, eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        from difflab.creation import ones, zeros

        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(
            normalized_shape)
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
    """During training, zero each element with probability p and scale the rest by 1/(1-p)."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class Flatten(Module):
    """Merge dimensions ``start_dim`` .. ``end_dim`` (default: all but the batch)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Tensor) -> Tensor:
        return x.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dimension ``dim`` into ``unflattened_size``."""

    def __init__(self, dim: int, unflattened_size: Any) -> None:
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, x: Tensor) -> Tensor:
        dim = self.dim % x.ndim
        return x.reshape(x.shape[:dim] + self.unflattened_size + x.shape[dim + 1:])

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Embedding(Module):
    """A table of ``num_embeddings`` vectors of size ``embedding_dim``, looked up by index.

    Initialised N(0, 1) as in PyTorch; the row ``padding_idx`` is zero and untrained.
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        if padding_idx is not None and padding_idx < 0:
            padding_idx += num_embeddings
        self.padding_idx = padding_idx
        self.weight = _empty(num_embeddings, embedding_dim, dtype=dtype, device=device)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            self.weight.array[self.padding_idx] = 0

    def forward(self, idx: Tensor) -> Tensor:
        return F.embedding(idx, self.weight, self.padding_idx)

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        padding_idx: int | None = None) -> Embedding:
        """An Embedding whose table is a copy of ``embeddings`` (rows, size); with ``freeze``
        (the default) the table is not trained (``weight.requires_grad`` False)."""
        if not isinstance(embeddings, Tensor) or embeddings.ndim != 2:
            raise ValueError(
                f"Embeddings parameter is expected to be a 2-dimensional Tensor, got "
                f"{getattr(embeddings, 'shape', type(embeddings).__name__)}"
            )
        rows, size = embeddings.shape
        layer = cls(rows, size, padding_idx=padding_idx, dtype=embeddings.dtype,
                    device=embeddings.device)
        with no_grad():
            layer.weight.copy_(embeddings)
        layer.weight.requires_grad = not freeze
        return layer

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        return s + (f", padding_idx={self.padding_idx}" if self.padding_idx is not None else "")


# ------------------------------------------------------------------ activations


class ReLU(Module):
    """max(x, 0)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()

    def forward(self, x: Tensor) -> Tensor:
        return x.relu()


class LeakyReLU(Module):
    """x for x > 0, ``negative_slope``·x otherwise."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: Tensor) -> Tensor:
        return F.leaky_relu(x, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}"


class GELU(Module):
    """x·Φ(x), Φ the standard normal CDF (``approximate='tanh'`` for the tanh formula)."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, x: Tensor) -> Tensor:
        return F.gelu(x, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate='{self.approximate}'"


class Sigmoid(Module):
    """1 / (1 + e⁻ˣ)."""

    def forward(self, x: Tensor) -> Tensor:
        return x.sigmoid()


class Tanh(Module):
    """tanh x."""

    def forward(self, x: Tensor) -> Tensor:
        return x.tanh()


class Softmax(Module):
    """exp(xᵢ)/Σⱼexp(xⱼ) along ``dim``."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return F.softmax(x, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """xᵢ - log Σⱼ exp(xⱼ) along ``dim``."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return F.log_softmax(x, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"

