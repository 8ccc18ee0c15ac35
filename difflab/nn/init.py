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
    """The recommended gain for a nonlinearity (PyTorch's table)."""
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


def _fan(tensor: Tensor, mode: str) -> int:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    if mode == "fan_in":
        return fan_in
    if mode == "fan_out":
        return fan_out
    raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {mode!r}")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with U(a, b)."""
    return _fill(tensor, _random._rng(generator).uniform(a, b, size=tensor.shape))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None
            ) -> Tensor:
    """Fill with N(mean, std²)."""
    return _fill(tensor, _random._rng(generator).normal(mean, std, size=tensor.shape))


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``."""
    tensor.array[...] = val
    tensor._version[0] += 1
    return tensor


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with 0."""
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with 1."""
    return constant_(tensor, 1.0)


def eye_(tensor: Tensor) -> Tensor:
    """The identity matrix (2-D tensors)."""
    if tensor.ndim != 2:
        raise ValueError("eye_ needs a 2-D tensor")
    import numpy as np

    return _fill(tensor, np.eye(*tensor.shape))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """U(-a, a) with a = gain·√(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """N(0, σ²) with σ = gain·√(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    """U(-b, b) with b = gain·√(3 / fan), gain = calculate_gain(nonlinearity, a)."""
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    """N(0, σ²) with σ = gain / √fan."""
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return normal_(tensor, 0.0, std, generator)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator: Any = None) -> Tensor:
    """N(mean, std²) redrawn until inside [a, b]."""
    rng = _random._rng(generator)
    values = rng.normal(mean, std, size=tensor.shape)
    bad = (values < a) | (values > b)
    while bad.any():
        values[bad] = rng.normal(mean, std, size=int(bad.sum()))
        bad = (values < a) | (values > b)
    return _fill(tensor, values)


def default_linear_init_(weight: Tensor, bias: Tensor | None) -> None:
    """PyTorch's default for Linear and Conv: U(-1/√fan_in, 1/√fan_in) for weight and bias.

    (Written in PyTorch as kaiming_uniform_(a=√5), which gives the same bound.)
    """
    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = _calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        uniform_(bias, -bound, bound)
