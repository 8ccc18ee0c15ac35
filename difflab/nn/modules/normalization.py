"""Normalisation layers at PyTorch's path ``nn.modules.normalization``: ``LayerNorm`` (defined
in :mod:`.layers`), ``GroupNorm``, ``RMSNorm``, ``LocalResponseNorm`` and ``CrossMapLRN2d``."""

from __future__ import annotations

from typing import Any

from difflab.dtypes import _Defaults
from difflab.nn import functional as F
from difflab.nn.modules.layers import LayerNorm
from difflab.nn.modules.module import Module
from difflab.nn.parameter import Parameter
from difflab.tensor import Tensor
from difflab.tensor_arguments import integer

__all__ = ["CrossMapLRN2d", "GroupNorm", "LayerNorm", "LocalResponseNorm", "RMSNorm"]


class GroupNorm(Module):
    r"""Normalise each sample over groups of channels, then γ x + β per channel.

    Parameters
    ----------
    num_groups : int
        Must divide ``num_channels``.
    num_channels : int
    eps : float
    affine : bool
        Learn γ (ones) and β (zeros) per channel.

    Shape
    -----
    - Input: :math:`(N, C, *)`.
    - Output: the same shape.

    Notes
    -----
    .. math::
        y = \frac{x - \mathrm E_g[x]}{\sqrt{\mathrm{Var}_g[x] + \epsilon}}\,\gamma + \beta

    Examples
    --------
    >>> import difflab as dl
    >>> norm = dl.nn.GroupNorm(2, 4)
    >>> norm(dl.randn(3, 4, 5, 5)).shape
    difflab.Size([3, 4, 5, 5])
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        from difflab.creation import ones, zeros

        num_groups = integer(num_groups, "GroupNorm", "num_groups")
        num_channels = integer(num_channels, "GroupNorm", "num_channels")
        if num_groups < 1:  # (0 was Python's bare ZeroDivisionError)
            raise ValueError(f"GroupNorm: num_groups must be positive, got {num_groups}")
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by "
                             f"num_groups ({num_groups})")
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        dtype = dtype or _Defaults.dtype
        if affine:
            self.weight = Parameter(ones(num_channels, dtype=dtype, device=device))
            self.bias = Parameter(zeros(num_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, x: Tensor) -> Tensor:
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class RMSNorm(Module):
    r"""x / √(mean(x²) + ε) over the last dimensions ``normalized_shape``, times γ.

    Parameters
    ----------
    normalized_shape : int or tuple
    eps : float, optional
        The dtype's machine epsilon by default.
    elementwise_affine : bool
        Learn γ (ones).

    Shape
    -----
    - Input: :math:`(*, \text{normalized\_shape})`.
    - Output: the same shape.

    Notes
    -----
    .. math::
        y = \frac{x}{\sqrt{\operatorname{mean}(x^2) + \epsilon}}\,\gamma

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.RMSNorm(8)(dl.randn(2, 8)).pow(2).mean(-1).round().tolist()
    [1.0, 1.0]
    """

    def __init__(self, normalized_shape: Any, eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None, dtype: Any = None
                 ) -> None:
        super().__init__()
        from difflab.creation import ones

        shape = F._normalized_shape("RMSNorm", normalized_shape)
        self.normalized_shape, self.eps = shape, eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(shape, dtype=dtype or _Defaults.dtype, device=device))
        else:
            self.register_parameter("weight", None)

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(Module):
    """x / (k + α · mean of x² over ``size`` neighbouring channels)^β.

    Parameters
    ----------
    size : int
        The number of neighbouring channels.
    alpha : float, default 1e-4
    beta : float, default 0.75
    k : float, default 1.0
        The constants of :func:`~difflab.nn.functional.local_response_norm`.

    Shape
    -----
    - Input: :math:`(N, C, *)`, at least 3-D.
    - Output: the same shape.

    Raises
    ------
    ValueError
        When called on an input with fewer than 3 dimensions.

    See Also
    --------
    difflab.nn.functional.local_response_norm

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.LocalResponseNorm(2)(dl.randn(1, 4, 3, 3)).shape
    difflab.Size([1, 4, 3, 3])
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
                 ) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = int(size), alpha, beta, k

    def forward(self, x: Tensor) -> Tensor:
        return F.local_response_norm(x, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(Module):
    r"""Local response normalisation across the channels of images (Lua Torch's layer).

    Each value is divided by a power of the sum of squares of the same pixel in
    the neighbouring channels, as in AlexNet: torch7's ``SpatialCrossMapLRN``,
    which PyTorch keeps as ``nn.CrossMapLRN2d``.  The same normalisation as
    :class:`LocalResponseNorm`, for 4-D input only, over a window centred on the
    channel: ``size // 2`` channels on each side for an odd ``size``, one fewer
    on each side for an even one (the sum is still divided by ``size``).

    Parameters
    ----------
    size : int
        The number of neighbouring channels summed (the window; at least 1).
    alpha : float, default 1e-4
        :math:`\alpha`, the weight of the sum.
    beta : float, default 0.75
        :math:`\beta`, the power.
    k : float, default 1.0
        :math:`k`, added before the power (keeps the divisor positive).

    Shape
    -----
    - Input: :math:`(N, C, H, W)`.
    - Output: the same shape.

    Raises
    ------
    ValueError
        When called on an input that is not 4-D (PyTorch's message), or if
        ``size`` is not positive.
    TypeError
        If ``size`` is not an int.

    See Also
    --------
    LocalResponseNorm : the same for any :math:`(N, C, *)`, its window
        ``size`` channels for every size.
    difflab.nn.functional.local_response_norm : the function both apply.

    Notes
    -----
    With :math:`h = \lfloor (\text{size} - 1)/2 \rfloor`, zero outside the
    channels :math:`0 \ldots C-1`:

    .. math::
        y_c = x_c \Big/ \Big(k + \frac{\alpha}{\text{size}}
              \sum_{c' = c - h}^{c + h} x_{c'}^2\Big)^{\beta}

    The gradient is autograd's through that formula (PyTorch writes a backward of
    its own, for this formula).  PyTorch's forward (``torch/nn/_functions.py``, a
    port of the Lua loop) drops channel :math:`c - h - 1` from the running sum one
    channel late, so its output differs from this formula (and from its own
    backward) in the channels :math:`c \geq h + 1` once the window has slid past
    channel 0; the Lua original and this layer do not.

    Examples
    --------
    >>> import difflab as dl
    >>> lrn = dl.nn.CrossMapLRN2d(3, alpha=3.0, beta=1.0, k=1.0)
    >>> y = lrn(dl.ones(1, 4, 1, 1))      # sums of 2, 3, 3, 2 squares over a window of 3
    >>> [round(v, 4) for v in y.flatten().tolist()]
    [0.3333, 0.25, 0.25, 0.3333]
    >>> x = dl.ones(1, 4, 1, 1, requires_grad=True)
    >>> lrn(x).sum().backward()
    >>> x.grad.shape
    difflab.Size([1, 4, 1, 1])
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
                 ) -> None:
        super().__init__()
        self.size = integer(size, "CrossMapLRN2d", "size")
        if self.size < 1:
            raise ValueError(f"CrossMapLRN2d's size must be at least 1, got {self.size}")
        self.alpha, self.beta, self.k = alpha, beta, k

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {x.ndim}D instead.")
        # the window of 2h + 1 channels, the sum still divided by size
        window = 2 * ((self.size - 1) // 2) + 1
        return F.local_response_norm(x, window, self.alpha * window / self.size, self.beta,
                                     self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
