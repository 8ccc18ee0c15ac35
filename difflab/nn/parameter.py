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

    An ordinary :class:`~difflab.tensor.Tensor` with two differences: it requires grad
    by default, and assigning one to a module attribute
    (``self.weight = Parameter(...)``) registers it, so that ``model.parameters()``,
    ``model.state_dict()`` and the optimizers find it.  ``Parameter(t)`` shares
    ``t``'s memory, as in PyTorch.

    Parameters
    ----------
    data : Tensor or array_like, optional
        The values (an empty tensor when left out).
    requires_grad : bool, default True
        Whether backward computes its gradient.

    See Also
    --------
    Module.register_parameter, Module.parameters

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> class Scale(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.factor = nn.Parameter(dl.ones(2))
    ...     def forward(self, x):
    ...         return self.factor * x
    >>> [name for name, _ in Scale().named_parameters()]
    ['factor']
    >>> nn.Parameter(dl.tensor([1.0, 2.0]))
    Parameter containing:
    tensor([1., 2.], requires_grad=True)
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

