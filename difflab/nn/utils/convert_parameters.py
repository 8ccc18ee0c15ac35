"""All parameters as one flat vector, and back."""

from __future__ import annotations

from collections.abc import Iterable

from difflab.tensor import Tensor


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """Concatenate the parameters, flattened, into one vector (recorded on the tape).

    The order is the iteration order of ``parameters``; :func:`vector_to_parameters`
    is the inverse.  Useful to treat a model as a function of one vector
    (a Hessian-vector product, a line search).

    Parameters
    ----------
    parameters : iterable of Tensor
        Usually ``model.parameters()``.

    Returns
    -------
    Tensor
        1-D, with ``sum(p.numel())`` entries.

    Examples
    --------
    >>> from difflab import nn
    >>> nn.utils.parameters_to_vector(nn.Linear(3, 2).parameters()).shape
    difflab.Size([8])
    """
    from difflab.functions import cat

    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive pieces of ``vec`` into the parameters, in place (not recorded).

    Parameters
    ----------
    vec : Tensor
        1-D, with exactly as many entries as the parameters together.
    parameters : iterable of Tensor
        The parameters, in the order :func:`parameters_to_vector` used.

    Returns
    -------
    None

    Raises
    ------
    TypeError
        If ``vec`` is not a 1-D tensor.
    ValueError
        If its length differs from the parameters' total size.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> lin = nn.Linear(2, 1)
    >>> nn.utils.vector_to_parameters(dl.tensor([1.0, 2.0, 3.0]), lin.parameters())
    >>> lin.weight.tolist(), lin.bias.tolist()
    ([[1.0, 2.0]], [3.0])
    """
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
