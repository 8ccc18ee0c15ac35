r"""Weight initialisation, in place, with PyTorch's names and formulas.

Why the scale matters: a layer y = Wx with n inputs of variance 1 and
weights of variance σ² gives outputs of variance n·σ².  Keeping that near 1
through many layers needs σ² ≈ 1/n:

* Xavier/Glorot (tanh, sigmoid): Var W = gain² · 2 / (fan_in + fan_out);
* Kaiming/He (ReLU, which zeroes half the signal): Var W = gain² / fan_in,
  gain = √2 for ReLU.

A uniform U(-a, a) has variance a²/3, so the uniform versions use
a = √3 · std.  For a weight of shape (out, in, k₁, k₂, ...),
fan_in = in·k₁·k₂·..., fan_out = out·k₁·k₂·...
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from difflab import random as _random
from difflab.tensor import Tensor


def _fill(tensor: Tensor, array: Any) -> Tensor:
    """Write values into ``tensor`` in place, without recording (the tape never sees it)."""
    if tensor.is_cuda:
        from difflab import backend

        array = backend.to_device(array, tensor.device)
    tensor.array[...] = array.astype(tensor.dtype, copy=False) if hasattr(array, "astype") \
        else array
    tensor._version[0] += 1
    return tensor


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    r"""The recommended gain for a nonlinearity (PyTorch's table), to scale an initialisation.

    The gain makes up for what the nonlinearity does to the variance: ReLU zeroes
    half of its input, so its weights need :math:`\sqrt 2` times the scale.

    ========================  ================================================
    nonlinearity              gain
    ========================  ================================================
    linear, conv*, sigmoid    :math:`1`
    tanh                      :math:`5/3`
    relu                      :math:`\sqrt{2}`
    leaky_relu                :math:`\sqrt{2 / (1 + \text{negative\_slope}^2)}`
    selu                      :math:`3/4`
    ========================  ================================================

    Parameters
    ----------
    nonlinearity : str
        One of the names of the table.
    param : float, optional
        The negative slope for ``'leaky_relu'`` (0.01 when left out).

    Returns
    -------
    float
        The gain.

    Raises
    ------
    ValueError
        For a name not in the table.

    Examples
    --------
    >>> from difflab import nn
    >>> nn.init.calculate_gain("tanh")
    1.6666666666666667
    >>> round(nn.init.calculate_gain("leaky_relu", 0.2), 4)
    1.3868
    """
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"unsupported nonlinearity {nonlinearity!r}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    if tensor.ndim < 2:
        raise ValueError(
            f"fan in and fan out can not be computed for a tensor with fewer than 2 "
            f"dimensions (got shape {tuple(tensor.shape)})"
        )
    receptive = 1
    for n in tensor.shape[2:]:
        receptive *= n
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _no_elements(tensor: Tensor) -> bool:
    """Whether ``tensor`` has no elements, so that there is nothing to initialise: a
    warning, as PyTorch's, instead of the division by a fan of 0 (``nn.Linear(0, 3)``
    and ``nn.Conv2d(1, 1, 0)`` were Python's bare ZeroDivisionError)."""
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", UserWarning, stacklevel=3)
        return True
    return False


def _fan(tensor: Tensor, mode: str) -> int:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    if mode == "fan_in":
        return fan_in
    if mode == "fan_out":
        return fan_out
    raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {mode!r}")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    r"""Fill ``tensor`` in place with samples of the uniform distribution :math:`\mathcal U(a, b)`.

    Parameters
    ----------
    tensor : Tensor
        The tensor to fill (any shape); the write is not recorded by autograd.
    a, b : float, default 0.0 and 1.0
        The bounds.
    generator : difflab.Generator, optional
        The random generator; the global one (``dl.manual_seed``) by default.

    Returns
    -------
    Tensor
        ``tensor`` itself.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> w = nn.init.uniform_(dl.empty(100), -1, 1)
    >>> bool(w.min() >= -1 and w.max() <= 1)
    True
    """
    return _fill(tensor, _random._rng(generator).uniform(a, b, size=tensor.shape))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None
            ) -> Tensor:
    r"""Fill ``tensor`` in place with samples of :math:`\mathcal N(\text{mean}, \text{std}^2)`.

    Parameters
    ----------
    tensor : Tensor
        The tensor to fill; the write is not recorded by autograd.
    mean : float, default 0.0
    std : float, default 1.0
        The mean and standard deviation.
    generator : difflab.Generator, optional
        The random generator; the global one by default.

    Returns
    -------
    Tensor
        ``tensor`` itself.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> _ = dl.manual_seed(0)
    >>> w = nn.init.normal_(dl.empty(10000), mean=3.0, std=0.5)
    >>> round(float(w.mean()), 1), round(float(w.std()), 1)
    (3.0, 0.5)
    """
    return _fill(tensor, _random._rng(generator).normal(mean, std, size=tensor.shape))


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill ``tensor`` in place with the value ``val``.

    Parameters
    ----------
    tensor : Tensor
        The tensor to fill; the write is not recorded by autograd.
    val : float
        The value.

    Returns
    -------
    Tensor
        ``tensor`` itself.

    See Also
    --------
    zeros_, ones_

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> nn.init.constant_(dl.empty(3), 0.5)
    tensor([0.5, 0.5, 0.5])
    """
    tensor.array[...] = val
    tensor._version[0] += 1
    return tensor


def zeros_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` in place with zeros (a bias, say).

    Parameters
    ----------
    tensor : Tensor
        The tensor to fill.

    Returns
    -------
    Tensor
        ``tensor`` itself.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> nn.init.zeros_(dl.empty(2))
    tensor([0., 0.])
    """
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` in place with ones (a normalisation's scale, say).

    Parameters
    ----------
    tensor : Tensor
        The tensor to fill.

    Returns
    -------
    Tensor
        ``tensor`` itself.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> nn.init.ones_(dl.empty(2))
    tensor([1., 1.])
    """
    return constant_(tensor, 1.0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D ``tensor`` in place with the identity matrix (ones on the diagonal).

    A linear layer initialised so passes its input through unchanged (where
    ``in_features <= out_features``).

    Parameters
    ----------
    tensor : Tensor
        A 2-D tensor (need not be square).

    Returns
    -------
    Tensor
        ``tensor`` itself.

    Raises
    ------
    ValueError
        If ``tensor`` is not 2-D.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> nn.init.eye_(dl.empty(2, 3))
    tensor([[1., 0., 0.],
            [0., 1., 0.]])
    """
    if tensor.ndim != 2:
        raise ValueError("eye_ needs a 2-D tensor")
    import numpy as np

    return _fill(tensor, np.eye(*tensor.shape))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    r"""Fill ``tensor`` with Glorot's uniform initialisation, :math:`\mathcal U(-a, a)`.

    .. math::
        a = \text{gain} \cdot \sqrt{\frac{6}{\text{fan\_in} + \text{fan\_out}}}

    so that :math:`\operatorname{Var} W = 2\,\text{gain}^2 / (\text{fan\_in} + \text{fan\_out})`
    keeps the variance of the signal about the same forwards and backwards (for
    tanh or sigmoid layers).  For a weight of shape ``(out, in, k1, k2, ...)``,
    ``fan_in = in*k1*k2*...`` and ``fan_out = out*k1*k2*...``.

    Parameters
    ----------
    tensor : Tensor
        At least 2-D.
    gain : float, default 1.0
        A scale, usually :func:`calculate_gain` of the nonlinearity.
    generator : difflab.Generator, optional
        The random generator; the global one by default.

    Returns
    -------
    Tensor
        ``tensor`` itself.

    Raises
    ------
    ValueError
        If ``tensor`` has fewer than 2 dimensions (no fan in and fan out).

    References
    ----------
    Glorot and Bengio, "Understanding the difficulty of training deep feedforward
    neural networks", AISTATS 2010.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> w = nn.init.xavier_uniform_(dl.empty(3, 5))
    >>> bool(w.abs().max() <= (6 / 8) ** 0.5)
    True
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    r"""Fill ``tensor`` with Glorot's normal initialisation, :math:`\mathcal N(0, \sigma^2)`.

    .. math::
        \sigma = \text{gain} \cdot \sqrt{\frac{2}{\text{fan\_in} + \text{fan\_out}}}

    Parameters
    ----------
    tensor : Tensor
        At least 2-D.
    gain : float, default 1.0
        A scale, usually :func:`calculate_gain` of the nonlinearity.
    generator : difflab.Generator, optional
        The random generator; the global one by default.

    Returns
    -------
    Tensor
        ``tensor`` itself.

    Raises
    ------
    ValueError
        If ``tensor`` has fewer than 2 dimensions.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> _ = dl.manual_seed(0)
    >>> w = nn.init.xavier_normal_(dl.empty(300, 500))
    >>> round(float(w.std()), 3), round((2 / 800) ** 0.5, 3)
    (0.05, 0.05)
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    r"""Fill ``tensor`` with He's uniform initialisation, :math:`\mathcal U(-b, b)`.

    .. math::
        b = \text{gain} \cdot \sqrt{\frac{3}{\text{fan}}}, \qquad
        \text{gain} = \texttt{calculate\_gain}(\text{nonlinearity}, a)

    so that :math:`\operatorname{Var} W = \text{gain}^2 / \text{fan}` (a uniform
    :math:`\mathcal U(-b, b)` has variance :math:`b^2/3`).

    Parameters
    ----------
    tensor : Tensor
        At least 2-D.
    a : float, default 0.0
        The negative slope of the leaky ReLU that follows (used by the gain).
    mode : {'fan_in', 'fan_out'}, default 'fan_in'
        ``'fan_in'`` keeps the variance of the forward signal, ``'fan_out'`` that of the gradients.
    nonlinearity : str, default 'leaky_relu'
        The name given to :func:`calculate_gain` (``'relu'`` is the usual choice).
    generator : difflab.Generator, optional
        The random generator; the global one by default.

    Returns
    -------
    Tensor
        ``tensor`` itself.

    Raises
    ------
    ValueError
        If ``tensor`` has fewer than 2 dimensions, or ``mode`` is not one of the two.

    Warns
    -----
    UserWarning
        If ``tensor`` has no elements (nothing to fill; PyTorch's "Initializing
        zero-element tensors is a no-op"), and ``tensor`` is returned as it is.

    References
    ----------
    He et al., "Delving deep into rectifiers", ICCV 2015.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> w = nn.init.kaiming_uniform_(dl.empty(4, 6), nonlinearity="relu")
    >>> bool(w.abs().max() <= (2 ** 0.5) * (3 / 6) ** 0.5)
    True
    """
    if _no_elements(tensor):
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    r"""Fill ``tensor`` with He's normal initialisation, :math:`\mathcal N(0, \sigma^2)`.

    .. math::
        \sigma = \frac{\text{gain}}{\sqrt{\text{fan}}}, \qquad
        \text{gain} = \texttt{calculate\_gain}(\text{nonlinearity}, a)

    Parameters
    ----------
    tensor : Tensor
        At least 2-D.
    a : float, default 0.0
        The negative slope of the leaky ReLU that follows (used by the gain).
    mode : {'fan_in', 'fan_out'}, default 'fan_in'
        Which fan :math:`\text{fan}` is.
    nonlinearity : str, default 'leaky_relu'
        The name given to :func:`calculate_gain`.
    generator : difflab.Generator, optional
        The random generator; the global one by default.

    Returns
    -------
    Tensor
        ``tensor`` itself.

    Raises
    ------
    ValueError
        If ``tensor`` has fewer than 2 dimensions, or ``mode`` is not one of the two.

    Warns
    -----
    UserWarning
        If ``tensor`` has no elements (nothing to fill; PyTorch's "Initializing
        zero-element tensors is a no-op"), and ``tensor`` is returned as it is.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> _ = dl.manual_seed(0)
    >>> w = nn.init.kaiming_normal_(dl.empty(256, 512), nonlinearity="relu")
    >>> round(float(w.std()), 2), round((2 / 512) ** 0.5, 2)
    (0.06, 0.06)
    """
    if _no_elements(tensor):
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return normal_(tensor, 0.0, std, generator)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator: Any = None) -> Tensor:
    r"""Fill ``tensor`` with normal samples truncated to :math:`[a, b]`.

    Each sample outside :math:`[a, b]` is drawn again until it falls inside, so the
    values follow the normal density restricted to the interval (rescaled).

    Parameters
    ----------
    tensor : Tensor
        The tensor to fill.
    mean : float, default 0.0
    std : float, default 1.0
        The mean and standard deviation of the normal before truncation.
    a, b : float, default -2.0 and 2.0
        The interval (absolute values, not in units of ``std``).
    generator : difflab.Generator, optional
        The random generator; the global one by default.

    Returns
    -------
    Tensor
        ``tensor`` itself.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> w = nn.init.trunc_normal_(dl.empty(1000), std=1.0, a=-0.5, b=0.5)
    >>> bool(w.min() >= -0.5 and w.max() <= 0.5)
    True
    """
    rng = _random._rng(generator)
    values = rng.normal(mean, std, size=tensor.shape)
    bad = (values < a) | (values > b)
    while bad.any():
        values[bad] = rng.normal(mean, std, size=int(bad.sum()))
        bad = (values < a) | (values > b)
    return _fill(tensor, values)


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    r"""Fill ``tensor`` with a (semi-)orthogonal matrix, scaled by ``gain`` (Saxe et al., 2013).

    The tensor is seen as a matrix of ``rows = shape[0]`` by ``cols = numel / rows``.
    A matrix of standard normal samples is factored :math:`A = QR`; with the signs
    of :math:`R`'s diagonal moved into :math:`Q`, :math:`Q` is a uniformly random
    orthogonal matrix.  Its rows are orthonormal when ``rows <= cols``
    (:math:`QQ^T = I`), its columns otherwise (:math:`Q^TQ = I`).  Repeated
    products with such a matrix keep a vector's length, which is why recurrent and
    reinforcement-learning networks start from it.

    Parameters
    ----------
    tensor : Tensor
        At least 2-D; the trailing dimensions are flattened into the columns.
    gain : float, default 1.0
        The factor applied to the orthogonal matrix.
    generator : difflab.Generator, optional
        The random generator; the global one by default.

    Returns
    -------
    Tensor
        ``tensor`` itself.

    Raises
    ------
    ValueError
        For a tensor of fewer than 2 dimensions.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> w = nn.init.orthogonal_(dl.empty(3, 5))
    >>> bool(dl.allclose(w @ w.T, dl.eye(3), atol=1e-6))
    True
    """
    if tensor.ndim < 2:
        raise ValueError(f"orthogonal_: only tensors with 2 or more dimensions are supported, "
                         f"got shape {tuple(tensor.shape)}")
    if _no_elements(tensor):
        return tensor
    import numpy as np

    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = _random._rng(generator).normal(0.0, 1.0, size=(rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))  # (makes Q uniformly distributed: Haar measure)
    if rows < cols:
        q = q.T
    return _fill(tensor, (gain * q).reshape(tensor.shape))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    r"""Fill a 3-, 4- or 5-D convolution weight with the Dirac delta: the identity convolution.

    For each group, output channel :math:`d` takes input channel :math:`d` at the
    kernel's centre with weight 1 and every other weight is 0, so the convolution
    passes its first ``min(out/groups, in)`` channels through unchanged (with
    padding that keeps the size).

    Parameters
    ----------
    tensor : Tensor
        A weight of shape ``(out, in, k...)`` with 1 to 3 kernel dimensions.
    groups : int, default 1
        The number of groups of the convolution (``out`` must divide by it).

    Returns
    -------
    Tensor
        ``tensor`` itself.

    Raises
    ------
    ValueError
        For a tensor of another dimension, or ``out`` not divisible by ``groups``.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> w = nn.init.dirac_(dl.empty(2, 2, 3))
    >>> w[:, :, 1]
    tensor([[1., 0.],
            [0., 1.]])
    """
    if tensor.ndim not in (3, 4, 5):
        raise ValueError(f"dirac_: only 3, 4 and 5 dimensional tensors are supported (a "
                         f"convolution's weight), got shape {tuple(tensor.shape)}")
    if groups < 1 or tensor.shape[0] % groups:
        raise ValueError(f"dirac_: dim 0 ({tensor.shape[0]}) must be divisible by groups "
                         f"({groups})")
    import numpy as np

    values = np.zeros(tensor.shape)
    out_per_group = tensor.shape[0] // groups
    centre = tuple(k // 2 for k in tensor.shape[2:])
    for g in range(groups):
        for d in range(min(out_per_group, tensor.shape[1])):
            values[(g * out_per_group + d, d) + centre] = 1.0
    return _fill(tensor, values)


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: Any = None) -> Tensor:
    r"""Fill a 2-D tensor with normal samples, a fraction ``sparsity`` of each column zero.

    Martens (2010): each entry :math:`\sim \mathcal N(0, \text{std}^2)`, then in every
    column :math:`\lceil \text{sparsity} \cdot \text{rows} \rceil` randomly chosen
    rows are set to zero.

    Parameters
    ----------
    tensor : Tensor
        A 2-D tensor.
    sparsity : float
        The fraction of each column set to zero, in ``[0, 1]``.
    std : float, default 0.01
        The standard deviation of the nonzero values.
    generator : difflab.Generator, optional
        The random generator; the global one by default.

    Returns
    -------
    Tensor
        ``tensor`` itself.

    Raises
    ------
    ValueError
        For a tensor that is not 2-D, or a sparsity outside ``[0, 1]``.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> w = nn.init.sparse_(dl.empty(4, 3), sparsity=0.5)
    >>> (w == 0).sum(dim=0)
    tensor([2, 2, 2])
    """
    if tensor.ndim != 2:
        raise ValueError(f"sparse_: only tensors with 2 dimensions are supported, got shape "
                         f"{tuple(tensor.shape)}")
    if not 0.0 <= sparsity <= 1.0:
        raise ValueError(f"sparse_: sparsity must be in [0, 1], got {sparsity}")
    rows, cols = tensor.shape
    rng = _random._rng(generator)
    values = rng.normal(0.0, std, size=(rows, cols))
    zeros = math.ceil(sparsity * rows)
    for column in range(cols):
        values[rng.permutation(rows)[:zeros], column] = 0.0
    return _fill(tensor, values)


def default_linear_init_(weight: Tensor, bias: Tensor | None) -> None:
    r"""PyTorch's default for Linear and Conv: :math:`\mathcal U(-k, k)` for weight and bias.

    Here :math:`k = 1/\sqrt{\text{fan\_in}}`.

    PyTorch writes it as ``kaiming_uniform_(weight, a=math.sqrt(5))``, which gives the
    same bound: :math:`\text{gain} = \sqrt{2/6}` and
    :math:`b = \text{gain}\sqrt{3/\text{fan\_in}} = 1/\sqrt{\text{fan\_in}}`.

    Parameters
    ----------
    weight : Tensor
        At least 2-D, ``(out, in, *kernel)``.
    bias : Tensor or None
        Filled with the same bound; skipped when None.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        If ``weight`` has fewer than 2 dimensions.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> w, b = dl.empty(3, 4), dl.empty(3)
    >>> nn.init.default_linear_init_(w, b)
    >>> bool(w.abs().max() <= 0.5 and b.abs().max() <= 0.5)
    True
    """
    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = _calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        uniform_(bias, -bound, bound)


# PyTorch's names from before the trailing underscore: each warns (a FutureWarning) and
# calls the in-place function it names.
def _deprecated(function: Any, example: str = "dl.empty(3, 3)") -> Any:
    new_name = function.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of "
                      f"`nn.init.{new_name}`.", FutureWarning, stacklevel=2)
        return function(*args, **kwargs)

    deprecated_init.__name__ = deprecated_init.__qualname__ = old_name
    deprecated_init.__doc__ = (
        f"Deprecated name of :func:`difflab.nn.init.{new_name}` (a FutureWarning, as in "
        f"PyTorch).\n\nParameters\n----------\n*args, **kwargs\n    Those of "
        f"``{new_name}``.\n\nReturns\n-------\nTensor\n    The tensor, filled in place."
        f"\n\nExamples\n--------\n>>> import warnings\n>>> import difflab as dl\n"
        f">>> with warnings.catch_warnings(record=True) as caught:\n"
        f"...     warnings.simplefilter('always')\n"
        f"...     _ = dl.nn.init.{old_name}({example})\n"
        f">>> caught[0].category.__name__\n'FutureWarning'\n")
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_, "dl.empty(3, 3), 0.5")
eye = _deprecated(eye_)
dirac = _deprecated(dirac_, "dl.empty(2, 2, 3)")
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_, "dl.empty(3, 3), 0.5")
