"""All parameters as one flat vector, and back."""

from __future__ import annotations

from collections.abc import Iterable

from difflab.tensor import Tensor


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """Concatenate the parameters, flattened, into one vector (recorded on the tape)."""
    from difflab.functions import cat

    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive pieces of ``vec`` into the parameters (in place, not recorded)."""
    if not isinstance(vec, Tensor) or vec.ndim != 1:
        raise TypeError("expected a 1-D Tensor")
    params = list(parameters)
    total = sum(int(p.numel()) for p in params)
    if vec.numel() != total:
        raise ValueError(f"the vector has {vec.numel()} elements, the parameters {total}")
    start = 0
    for p in params:
        n = int(p.numel())
        p.array[...] = vec.array[start:start + n].reshape(p.shape).astype(p.dtype)
        p._version[0] += 1
        start += n
