"""Dropout layers at PyTorch's path ``nn.modules.dropout``: ``Dropout`` (defined in
:mod:`.layers`), the channel-wise ``Dropout1d``/``2d``/``3d`` and SELU's ``AlphaDropout`` and
``FeatureAlphaDropout``."""

from __future__ import annotations

from difflab.nn import functional as F
from difflab.nn.modules.layers import Dropout
from difflab.nn.modules.module import Module
from difflab.tensor import Tensor

__all__ = ["AlphaDropout", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout"]


class _ChannelDropout(Module):
    function = ""
    inplace = False  # (a layer saved before inplace was kept loads as out of place)

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        F._probability(type(self).__name__, p)
        self.p, self.inplace = p, inplace

    def forward(self, x: Tensor) -> Tensor:
        return getattr(F, self.function)(x, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_ChannelDropout):
    """In training, zero whole channels of (N, C, L) with probability p (scale the rest).

    Parameters
    ----------
    p : float, default 0.5
        The probability of zeroing a channel, in :math:`[0, 1]`.
    inplace : bool, default False
        Write the result into the input and return it, as PyTorch does (the input's
        version counter goes up; while recording, a leaf that requires grad refuses).

    Shape
    -----
    - Input: :math:`(N, C, L)` or :math:`(C, L)`.
    - Output: the same shape.

    Raises
    ------
    ValueError
        If ``p`` is outside :math:`[0, 1]`; when called, on an input of the wrong dimensions.

    See Also
    --------
    Dropout, Dropout2d, difflab.nn.functional.dropout1d

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.Dropout1d(0.5).eval()(dl.ones(1, 2, 3)).sum().item()
    6.0
    """

    function = "dropout1d"


class Dropout2d(_ChannelDropout):
    """In training, zero whole feature maps of (N, C, H, W) with probability p.

    Parameters
    ----------
    p : float, default 0.5
        The probability of zeroing a feature map, in :math:`[0, 1]`.
    inplace : bool, default False
        Write the result into the input and return it, as PyTorch does (the input's
        version counter goes up; while recording, a leaf that requires grad refuses).

    Shape
    -----
    - Input: :math:`(N, C, H, W)` or :math:`(C, H, W)`.
    - Output: the same shape.

    Raises
    ------
    ValueError
        If ``p`` is outside :math:`[0, 1]`; when called, on an input of the wrong dimensions.

    See Also
    --------
    Dropout, Dropout1d, difflab.nn.functional.dropout2d

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.Dropout2d(0.2)(dl.ones(2, 3, 4, 4)).shape
    difflab.Size([2, 3, 4, 4])
    """

    function = "dropout2d"


class AlphaDropout(_ChannelDropout):
    r"""Dropout for SELU networks, keeping the activations' mean 0 and variance 1.

    In training, each element is dropped with probability ``p``: a dropped element
    becomes SELU's saturation value :math:`\alpha' = -\lambda\alpha` (not 0, which would
    shift the mean), then an affine map :math:`a x + b` restores mean 0 and variance 1
    (see :func:`difflab.nn.functional.alpha_dropout`).  In evaluation mode
    (``.eval()``) it is the identity.

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
    SELU : the activation this dropout is made for.
    Dropout : plain dropout (zeros, scaled by :math:`1/(1-p)`).
    difflab.nn.functional.alpha_dropout : the same map as a function.

    Notes
    -----
    With a Bernoulli mask :math:`m_i \sim \mathcal B(1-p)`,

    .. math::
        y_i = a\,\bigl(m_i x_i + (1 - m_i)\,\alpha'\bigr) + b, \qquad
        a = \bigl((1-p)(1 + p\,\alpha'^2)\bigr)^{-1/2}, \quad b = -a\,\alpha' p,

    so an input of mean 0 and variance 1 keeps them.  The gradient is :math:`a\,m_i`.

    Examples
    --------
    >>> import difflab as dl
    >>> _ = dl.manual_seed(0)
    >>> drop = dl.nn.AlphaDropout(0.5)
    >>> x = dl.randn(100_000)
    >>> y = drop(x)                                   # training mode: mean 0, std 1 kept
    >>> round(y.mean().item(), 1) == 0.0, round(y.std().item(), 1)
    (True, 1.0)
    >>> _ = drop.eval()
    >>> dl.equal(drop(x), x)                          # evaluation: the identity
    True
    >>> dl.nn.AlphaDropout(1.5)
    Traceback (most recent call last):
        ...
    ValueError: dropout probability has to be between 0 and 1, but got 1.5
    """

    function = "alpha_dropout"


class Dropout3d(_ChannelDropout):
    """In training, zero whole channels of (N, C, D, H, W) volumes with probability p.

    Parameters
    ----------
    p : float, default 0.5
        The probability of zeroing a channel, in :math:`[0, 1]`.
    inplace : bool, default False
        Write the result into the input and return it, as PyTorch does.

    Shape
    -----
    - Input: :math:`(N, C, D, H, W)` or :math:`(C, D, H, W)`.
    - Output: the same shape.

    Raises
    ------
    ValueError
        If ``p`` is outside :math:`[0, 1]`; when called, on an input of the wrong dimensions.

    See Also
    --------
    Dropout2d, difflab.nn.functional.dropout3d

    Examples
    --------
    >>> import difflab as dl
    >>> drop = dl.nn.Dropout3d(0.25)
    >>> drop
    Dropout3d(p=0.25, inplace=False)
    >>> drop.eval()(dl.ones(1, 2, 2, 2, 2)).sum().item()
    16.0
    """

    function = "dropout3d"


class FeatureAlphaDropout(_ChannelDropout):
    r"""In training, alpha-drop whole channels: SELU's dropout, one draw per channel.

    A dropped channel's elements all become SELU's saturation value, then the
    affine map of :class:`AlphaDropout` keeps mean 0 and variance 1 (see
    :func:`difflab.nn.functional.feature_alpha_dropout`).  In evaluation mode it
    is the identity.

    Parameters
    ----------
    p : float, default 0.5
        The probability of dropping a channel, in :math:`[0, 1]`.
    inplace : bool, default False
        Write the result into the input and return it.

    Shape
    -----
    - Input: :math:`(N, C, *)`.
    - Output: the same shape.

    Raises
    ------
    ValueError
        If ``p`` is outside :math:`[0, 1]`.

    See Also
    --------
    AlphaDropout, Dropout3d, difflab.nn.functional.feature_alpha_dropout

    Examples
    --------
    >>> import difflab as dl
    >>> _ = dl.manual_seed(0)
    >>> y = dl.nn.FeatureAlphaDropout(0.5)(dl.ones(2, 3, 2))
    >>> sorted(set(round(v, 4) for v in y.flatten().tolist()))
    [-0.7792, 1.6656]
    """

    function = "feature_alpha_dropout"
