"""``Parameter``: a tensor that a :class:`~difflab.nn.Module` owns and trains.

It is an ordinary :class:`~difflab.tensor.Tensor` with two differences: it
requires grad by default, and assigning one to a module attribute
(``self.weight = Parameter(...)``) registers it, so that
``model.parameters()`` and ``model.state_dict()`` find it.
"""

from __future__ import annotations

from typing import Any

from difflab.tensor import Tensor


class Parameter(Tensor):
    """A tensor registered as a module's parameter (``requires_grad=True`` by default).

    ``Parameter(t)`` shares ``t``'s memory, as in PyTorch.
    """

    __slots__ = ()

    def __new__(cls, data: Any = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            from difflab.creation import empty

            data = empty(0)
        array = data.array if isinstance(data, Tensor) else Tensor(data).array
        p = cls._wrap(array)
        if requires_grad:
            p.requires_grad = True
        return p

    def __init__(self, data: Any = None, requires_grad: bool = True) -> None:
        pass  # everything happened in __new__

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

