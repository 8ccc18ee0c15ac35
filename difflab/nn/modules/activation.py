"""Activation layers at PyTorch's path ``nn.modules.activation`` (``MultiheadAttention`` too,
as in PyTorch): the ones defined in :mod:`.layers`, and the rest of PyTorch's (``Hardtanh``,
``ELU``, ``SiLU``, ``PReLU``, ...), each calling its function in :mod:`difflab.nn.functional`."""

from __future__ import annotations

from typing import Any

from difflab.nn import functional as F
from difflab.nn.functional_activations import RRELU_LOWER, RRELU_UPPER
from difflab.nn.modules.attention import MultiheadAttention
from difflab.nn.modules.layers import (
    GELU,
    LeakyReLU,
    LogSoftmax,
    ReLU,
    Sigmoid,
    Softmax,
    Tanh,
)
from difflab.nn.modules.module import Module
from difflab.tensor import Tensor

__all__ = ["CELU", "ELU", "GELU", "GLU", "SELU", "Hardshrink", "Hardsigmoid", "Hardswish",
           "Hardtanh", "LeakyReLU", "LogSigmoid", "LogSoftmax", "Mish", "MultiheadAttention",
           "PReLU", "RReLU", "ReLU", "ReLU6", "SiLU", "Sigmoid", "Softmax", "Softmax2d", "Softmin",
           "Softplus", "Softshrink", "Softsign", "Tanh", "Tanhshrink", "Threshold"]


class Hardtanh(Module):
    r"""x clipped to [``min_val``, ``max_val``] (see :func:`difflab.nn.functional.hardtanh`).

    Parameters
    ----------
    min_val, max_val : float
        The interval, [-1, 1] by default.
    inplace : bool, default False
        Write the result into the input and return it, as PyTorch does (the input's
        version counter goes up; while recording, a leaf that requires grad refuses).

    Shape
    -----
    - Input: :math:`(*)`, any shape.
    - Output: the same shape.

    Notes
    -----
    .. math::
        \text{Hardtanh}(x) = \min(\max(x, \text{min\_val}), \text{max\_val})

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.Hardtanh(-2.0, 2.0)(dl.tensor([-5., 1., 5.]))
    tensor([-2.,  1.,  2.])
    """

    inplace = False  # (a layer saved before inplace was kept loads as out of place)

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
                 ) -> None:
        super().__init__()
        if max_val < min_val:
            raise ValueError(f"Hardtanh: max_val ({max_val}) cannot be less than min_val "
                             f"({min_val})")
        self.min_val, self.max_val, self.inplace = float(min_val), float(max_val), inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.hardtanh(x, self.min_val, self.max_val, inplace=self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + _inplace_repr(self, True)


class ReLU6(Hardtanh):
    r"""min(max(x, 0), 6) (MobileNet's activation): :class:`Hardtanh` on [0, 6].

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
    difflab.nn.functional.relu6

    Notes
    -----
    .. math::
        \text{ReLU6}(x) = \min(\max(x, 0), 6)

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.ReLU6()(dl.tensor([-1., 3., 9.]))
    tensor([0., 3., 6.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self, False)


# ---------------------------------------------------------------------------------------
# The rest of PyTorch's activation layers: each holds its hyper-parameters and calls the
# function of the same name in difflab.nn.functional.


class _Activation(Module):
    """A layer that applies ``function(x, **hyper-parameters)``; ``extra_repr`` lists them."""

    function: str = ""
    _arguments: tuple = ()
    inplace = False  # (set by the layers whose function takes inplace=)

    def forward(self, x: Tensor) -> Tensor:
        arguments = {a: getattr(self, a) for a in self._arguments}
        if self.inplace:
            arguments["inplace"] = True
        return getattr(F, self.function)(x, **arguments)

    def extra_repr(self) -> str:
        listed = ", ".join(f"{a}={getattr(self, a)}" for a in self._arguments)
        return listed + _inplace_repr(self, bool(listed))


def _inplace_repr(layer: Module, after: bool) -> str:
    """What PyTorch's ``extra_repr`` adds for ``inplace=True`` (nothing otherwise)."""
    if not getattr(layer, "inplace", False):
        return ""
    return ", inplace=True" if after else "inplace=True"


class ELU(_Activation):
    r"""x for x > 0, α(eˣ - 1) otherwise (see :func:`difflab.nn.functional.elu`).

    Parameters
    ----------
    alpha : float
    inplace : bool, default False
        Write the result into the input and return it, as PyTorch does (the input's
        version counter goes up; while recording, a leaf that requires grad refuses).

    Shape
    -----
    - Input: :math:`(*)`, any shape.
    - Output: the same shape.

    Notes
    -----
    .. math::
        \text{ELU}(x) = \begin{cases} x & x > 0 \\ \alpha (e^x - 1) & x \le 0 \end{cases}

    Examples
    --------
    >>> import difflab as dl
    >>> [round(v, 4) for v in dl.nn.ELU()(dl.tensor([-1.0, 2.0])).tolist()]
    [-0.6321, 2.0]
    """

    function, _arguments = "elu", ("alpha",)

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace
        self.alpha = alpha


class SELU(_Activation):
    r"""Scaled ELU with the self-normalising constants (see :func:`difflab.nn.functional.selu`).

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
    difflab.nn.functional.selu

    Notes
    -----
    .. math::
        \text{SELU}(x) = \lambda \begin{cases} x & x > 0 \\
        \alpha (e^x - 1) & x \le 0 \end{cases}, \quad \lambda \approx 1.0507,\ \alpha \approx 1.6733

    Examples
    --------
    >>> import difflab as dl
    >>> round(dl.nn.SELU()(dl.tensor([1.0])).item(), 4)
    1.0507
    """

    function = "selu"

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class CELU(_Activation):
    r"""max(0, x) + min(0, α(e^{x/α} - 1)) (see :func:`difflab.nn.functional.celu`).

    Parameters
    ----------
    alpha : float, default 1.0
        :math:`\alpha`, not 0 (checked when called).
    inplace : bool, default False
        Write the result into the input and return it, as PyTorch does (the input's
        version counter goes up; while recording, a leaf that requires grad refuses).

    Shape
    -----
    - Input: :math:`(*)`, any shape.
    - Output: the same shape.

    See Also
    --------
    difflab.nn.functional.celu

    Notes
    -----
    .. math::
        \text{CELU}(x) = \max(0, x) + \min(0, \alpha (e^{x/\alpha} - 1))

    Examples
    --------
    >>> import difflab as dl
    >>> round(dl.nn.CELU(alpha=2.0)(dl.tensor([-1.0])).item(), 4)
    -0.7869
    """

    function, _arguments = "celu", ("alpha",)

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace
        self.alpha = alpha


class SiLU(_Activation):
    r"""x · σ(x) (see :func:`difflab.nn.functional.silu`).

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
    difflab.nn.functional.silu

    Notes
    -----
    .. math::
        \text{SiLU}(x) = x\,\sigma(x)

    Examples
    --------
    >>> import difflab as dl
    >>> round(dl.nn.SiLU()(dl.tensor([1.0])).item(), 4)
    0.7311
    """

    function = "silu"

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class Mish(_Activation):
    r"""x · tanh(softplus(x)) (see :func:`difflab.nn.functional.mish`).

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
    difflab.nn.functional.mish

    Notes
    -----
    .. math::
        \text{Mish}(x) = x \tanh(\operatorname{softplus}(x))

    Examples
    --------
    >>> import difflab as dl
    >>> round(dl.nn.Mish()(dl.tensor([1.0])).item(), 4)
    0.8651
    """

    function = "mish"

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class Softplus(_Activation):
    r"""log(1 + e^{βx}) / β (see :func:`difflab.nn.functional.softplus`).

    Parameters
    ----------
    beta : float
    threshold : float
        Above βx > threshold the layer is the identity.

    Shape
    -----
    - Input: :math:`(*)`, any shape.
    - Output: the same shape.

    Notes
    -----
    .. math::
        \text{Softplus}(x) = \frac{1}{\beta} \log(1 + e^{\beta x})

    Examples
    --------
    >>> import difflab as dl
    >>> round(dl.nn.Softplus()(dl.tensor([0.0])).item(), 6)
    0.693147
    """

    function, _arguments = "softplus", ("beta", "threshold")

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold


class Softsign(_Activation):
    r"""x / (1 + |x|).

    Shape
    -----
    - Input: :math:`(*)`, any shape.
    - Output: the same shape.

    See Also
    --------
    difflab.nn.functional.softsign

    Notes
    -----
    .. math::
        \text{Softsign}(x) = \frac{x}{1 + |x|}

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.Softsign()(dl.tensor([1.0])).item()
    0.5
    """

    function = "softsign"


class Tanhshrink(_Activation):
    r"""x - tanh x.

    Shape
    -----
    - Input: :math:`(*)`, any shape.
    - Output: the same shape.

    See Also
    --------
    difflab.nn.functional.tanhshrink

    Notes
    -----
    .. math::
        \text{Tanhshrink}(x) = x - \tanh x

    Examples
    --------
    >>> import difflab as dl
    >>> round(dl.nn.Tanhshrink()(dl.tensor([1.0])).item(), 4)
    0.2384
    """

    function = "tanhshrink"


class LogSigmoid(_Activation):
    r"""log σ(x), stable for large |x|.

    Shape
    -----
    - Input: :math:`(*)`, any shape.
    - Output: the same shape.

    See Also
    --------
    difflab.nn.functional.logsigmoid

    Notes
    -----
    .. math::
        \text{LogSigmoid}(x) = \log \sigma(x) = -\operatorname{softplus}(-x)

    Examples
    --------
    >>> import difflab as dl
    >>> round(dl.nn.LogSigmoid()(dl.tensor([0.0])).item(), 4)
    -0.6931
    """

    function = "logsigmoid"


class Hardsigmoid(_Activation):
    r"""clamp(x/6 + 1/2, 0, 1).

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
    difflab.nn.functional.hardsigmoid

    Notes
    -----
    .. math::
        \text{Hardsigmoid}(x) = \min(\max(x/6 + 1/2, 0), 1)

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.Hardsigmoid()(dl.tensor([1.5])).item()
    0.75
    """

    function = "hardsigmoid"

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class Hardswish(_Activation):
    r"""x · hardsigmoid(x).

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
    difflab.nn.functional.hardswish

    Notes
    -----
    .. math::
        \text{Hardswish}(x) = x \cdot \min(\max(x/6 + 1/2, 0), 1)

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.Hardswish()(dl.tensor([1.5])).item()
    1.125
    """

    function = "hardswish"

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class Hardshrink(_Activation):
    r"""x where |x| > λ, else 0.

    Parameters
    ----------
    lambd : float, default 0.5
        :math:`\lambda`.

    Shape
    -----
    - Input: :math:`(*)`, any shape.
    - Output: the same shape.

    See Also
    --------
    difflab.nn.functional.hardshrink

    Notes
    -----
    .. math::
        y = \begin{cases} x & |x| > \lambda \\ 0 & \text{otherwise} \end{cases}

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.Hardshrink(1.0)(dl.tensor([0.5, 2.0])).tolist()
    [0.0, 2.0]
    """

    function, _arguments = "hardshrink", ("lambd",)

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd


class Softshrink(_Activation):
    r"""x - λ·sign(x) where |x| > λ, else 0.

    Parameters
    ----------
    lambd : float, default 0.5
        :math:`\lambda \ge 0` (checked when called).

    Shape
    -----
    - Input: :math:`(*)`, any shape.
    - Output: the same shape.

    Raises
    ------
    ValueError
        When called with a negative ``lambd``.

    See Also
    --------
    difflab.nn.functional.softshrink

    Notes
    -----
    .. math::
        y = \begin{cases} x - \lambda & x > \lambda \\ x + \lambda & x < -\lambda \\
        0 & \text{otherwise} \end{cases}

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.Softshrink(1.0)(dl.tensor([0.5, 2.0])).tolist()
    [0.0, 1.0]
    """

    function, _arguments = "softshrink", ("lambd",)

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd


class Threshold(_Activation):
    r"""x where x > ``threshold``, else ``value``.

    Parameters
    ----------
    threshold : float
        The bound.
    value : float
        What replaces the entries at or below it.
    inplace : bool, default False
        Write the result into the input and return it, as PyTorch does (the input's
        version counter goes up; while recording, a leaf that requires grad refuses).

    Shape
    -----
    - Input: :math:`(*)`, any shape.
    - Output: the same shape.

    See Also
    --------
    difflab.nn.functional.threshold

    Notes
    -----
    .. math::
        y = \begin{cases} x & x > \text{threshold} \\ \text{value} & \text{otherwise} \end{cases}

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.Threshold(1.0, 0.0)(dl.tensor([0.5, 2.0])).tolist()
    [0.0, 2.0]
    """

    function, _arguments = "threshold", ("threshold", "value")

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace
        self.threshold, self.value = threshold, value


class Softmin(_Activation):
    r"""softmax(-x) along ``dim``.

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
        When called with ``dim`` out of range.

    See Also
    --------
    difflab.nn.functional.softmin

    Notes
    -----
    .. math::
        \text{Softmin}(x)_i = \frac{e^{-x_i}}{\sum_j e^{-x_j}}

    Examples
    --------
    >>> import difflab as dl
    >>> [round(v, 4) for v in dl.nn.Softmin(dim=0)(dl.tensor([1.0, 2.0])).tolist()]
    [0.7311, 0.2689]
    """

    function, _arguments = "softmin", ("dim",)

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim


class GLU(_Activation):
    r"""a ⊙ σ(b) for the two halves a, b of the input along ``dim``.

    Parameters
    ----------
    dim : int, default -1
        The dimension to halve; its size must be even.

    Shape
    -----
    - Input: :math:`(*_1, 2M, *_2)`, ``dim`` of size :math:`2M`.
    - Output: :math:`(*_1, M, *_2)`.

    Raises
    ------
    RuntimeError
        When called on an input whose ``dim`` has an odd size.

    See Also
    --------
    difflab.nn.functional.glu

    Notes
    -----
    .. math::
        \text{GLU}(a, b) = a \otimes \sigma(b), \quad (a, b) = \text{the halves of } x

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.GLU()(dl.randn(4, 6)).shape
    difflab.Size([4, 3])
    """

    function, _arguments = "glu", ("dim",)

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim


class PReLU(Module):
    r"""x for x ≥ 0, a·x otherwise, with the slope a learned (one, or one per channel).

    Parameters
    ----------
    num_parameters : int
        1 (one slope shared) or the number of channels (dimension 1 of the input).
    init : float
        The slopes' initial value.

    Shape
    -----
    - Input: :math:`(N, C, *)` (or any shape with one slope).
    - Output: the same shape.

    Notes
    -----
    .. math::
        \text{PReLU}(x) = \begin{cases} x & x \ge 0 \\ a\,x & x < 0 \end{cases}

    Examples
    --------
    >>> import difflab as dl
    >>> layer = dl.nn.PReLU()
    >>> layer(dl.tensor([-2.0, 3.0])).tolist()
    [-0.5, 3.0]
    >>> layer.weight.shape
    difflab.Size([1])
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        from difflab.creation import full
        from difflab.dtypes import _Defaults
        from difflab.nn.parameter import Parameter

        self.num_parameters, self.init = int(num_parameters), init
        self.weight = Parameter(full((self.num_parameters,), float(init),
                                     dtype=dtype or _Defaults.dtype, device=device))

    def forward(self, x: Tensor) -> Tensor:
        return F.prelu(x, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Softmax2d(Module):
    r"""Softmax over the channels at every pixel of (N, C, H, W) or (C, H, W) images.

    :class:`Softmax` along dimension -3, the channels: at each location the
    :math:`C` values become probabilities that sum to 1.

    Shape
    -----
    - Input: :math:`(N, C, H, W)` or :math:`(C, H, W)`.
    - Output: the same shape, values in :math:`[0, 1]`.

    Raises
    ------
    ValueError
        When called on an input that is not 3-D or 4-D (PyTorch's error).

    See Also
    --------
    Softmax, difflab.nn.functional.softmax

    Notes
    -----
    .. math::
        \text{out}(n, c, h, w) = \frac{e^{x(n, c, h, w)}}{\sum_{k} e^{x(n, k, h, w)}}

    Examples
    --------
    >>> import difflab as dl
    >>> y = dl.nn.Softmax2d()(dl.tensor([[[[0.0]], [[0.0]]]]))   # two channels, one pixel
    >>> y.flatten().tolist()
    [0.5, 0.5]
    """

    def forward(self, x: Tensor) -> Tensor:
        if not isinstance(x, Tensor) or x.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got "
                             f"{getattr(x, 'ndim', '?')}D instead")
        return F.softmax(x, -3)


class RReLU(Module):
    r"""The randomized leaky ReLU: a random slope for negative inputs in training.

    In training each negative element gets its own slope drawn from
    :math:`\mathcal U(\text{lower}, \text{upper})`; in evaluation the mean slope
    :math:`(\text{lower} + \text{upper})/2` (see :func:`difflab.nn.functional.rrelu`).

    Parameters
    ----------
    lower, upper : float, default 1/8 and 1/3
        The slopes' range.
    inplace : bool, default False
        Write the result into the input and return it.

    Shape
    -----
    - Input: :math:`(*)`, any shape.
    - Output: the same shape.

    Raises
    ------
    RuntimeError
        When called, if ``lower`` is greater than ``upper``.

    See Also
    --------
    LeakyReLU, PReLU, difflab.nn.functional.rrelu

    Examples
    --------
    >>> import difflab as dl
    >>> act = dl.nn.RReLU(0.1, 0.3)
    >>> act
    RReLU(lower=0.1, upper=0.3)
    >>> act.eval()(dl.tensor([-1.0, 2.0]))
    tensor([-0.2,  2. ])
    """

    def __init__(self, lower: float = RRELU_LOWER, upper: float = RRELU_UPPER,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.rrelu(x, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace
                                                            else "")
