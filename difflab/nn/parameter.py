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
            # (no hooks yet: set to None, read faster than unset slots; see Tensor's slots)
            p._backward_hooks = p._post_accumulate_grad_hooks = None
        return p

    def __init__(self, data: Any = None, requires_grad: bool = True) -> None:
        pass  # everything happened in __new__

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()



# ------------------------------------------------------------------------------- buffers


class Buffer(Tensor):
    """A tensor that registers itself as a module's buffer when assigned to an attribute.

    ``self.mean = nn.Buffer(dl.zeros(3))`` in a module's ``__init__`` is
    ``self.register_buffer("mean", dl.zeros(3))``: state that moves with
    :meth:`Module.to` and is saved by ``state_dict`` (when persistent) but is not
    trained.  ``Buffer(t)`` shares ``t``'s memory, as in PyTorch.

    Parameters
    ----------
    data : Tensor or array_like, optional
        The values (an empty tensor when left out).
    persistent : bool, default True
        Whether ``state_dict`` includes it (keyword only).

    See Also
    --------
    Parameter, difflab.nn.Module.register_buffer

    Examples
    --------
    >>> import difflab as dl
    >>> class Counter(dl.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.count = dl.nn.Buffer(dl.zeros(()))
    ...         self.cache = dl.nn.Buffer(dl.ones(2), persistent=False)
    >>> m = Counter()
    >>> [name for name, _ in m.named_buffers()], list(m.state_dict())
    (['count', 'cache'], ['count'])
    >>> isinstance(m.count, dl.nn.Buffer), m.count
    (True, tensor(0.))
    """

    __slots__ = ()
    persistent = True

    def __new__(cls, data: Any = None, *, persistent: bool = True) -> Buffer:
        if data is None:
            from difflab.creation import empty

            data = empty(0)
        source = data if isinstance(data, Tensor) else Tensor(data)
        b = (cls if persistent else _NonPersistentBuffer)._wrap(source.array)
        if source.requires_grad:
            b.requires_grad = True
        return b

    def __init__(self, data: Any = None, *, persistent: bool = True) -> None:
        pass  # everything happened in __new__


class _NonPersistentBuffer(Buffer):
    """``Buffer(..., persistent=False)``: the flag as the class (a tensor has no room for
    more attributes)."""

    __slots__ = ()
    persistent = False


# ------------------------------------------------------------ lazy modules' placeholders


class UninitializedTensorMixin:
    """What a parameter or buffer whose shape is not known yet does: it holds no values
    (an empty array of the right dtype and device) until :meth:`materialize` gives it a
    shape, and then *becomes* the ordinary class in place (the same object), so an
    optimizer or a list built before the first call holds the right tensor."""

    __slots__ = ()
    cls_to_become: type = Tensor

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Give the placeholder its shape: uninitialised values, then the ordinary class.

        Parameters
        ----------
        shape : int or tuple of ints
            The shape it takes.
        device, dtype : optional
            Where and in what dtype; its own (which ``Module.to`` may have changed) when
            left out.

        Returns
        -------
        None

        Examples
        --------
        >>> import difflab as dl
        >>> w = dl.nn.UninitializedParameter()
        >>> w.materialize((2, 3))
        >>> type(w).__name__, w.shape, w.requires_grad
        ('Parameter', difflab.Size([2, 3]), True)
        """
        from difflab.creation import empty

        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        values = empty(*shape, dtype=dtype or self.dtype, device=device or self.device)
        self.array = values.array
        self.__class__ = self.cls_to_become

    @property
    def shape(self) -> Any:
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer: it is a lazy "
            "module's placeholder. Call the module once on an input (or load a state_dict) "
            "so it knows its shape.")

    def size(self, dim: int | None = None) -> Any:
        return self.shape

    def numel(self) -> Any:
        return self.shape

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A lazy module's parameter before its shape is known (it becomes a :class:`Parameter`).

    :class:`difflab.nn.LazyLinear` and the other ``Lazy*`` layers hold these until their
    first call, where they infer the input's size, :meth:`materialize` them (the same
    objects, now parameters) and initialise them.  Until then it can be handed to an
    optimizer (its values exist after the first call) but has no shape or values.

    Parameters
    ----------
    requires_grad : bool, default True
        Whether the parameter it becomes requires grad.
    device, dtype : optional
        Where and in what dtype it will live (the default dtype by default).

    Raises
    ------
    RuntimeError
        When its shape (``shape``, ``size()``, ``numel()``) is read before it is
        materialized.

    See Also
    --------
    difflab.nn.LazyLinear, UninitializedBuffer, Parameter

    Examples
    --------
    >>> import difflab as dl
    >>> layer = dl.nn.LazyLinear(2)
    >>> layer.weight
    <UninitializedParameter>
    >>> _ = layer(dl.ones(4, 3))
    >>> type(layer.weight).__name__, layer.weight.shape
    ('Parameter', difflab.Size([2, 3]))
    """

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None, dtype: Any = None
                ) -> UninitializedParameter:
        from difflab.creation import empty

        return super().__new__(cls, empty(0, dtype=dtype, device=device), requires_grad)

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None
                 ) -> None:
        pass  # everything happened in __new__


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A lazy module's buffer before its shape is known (it becomes a plain tensor).

    The running statistics of :class:`difflab.nn.LazyBatchNorm1d` and its kin are
    these until the first call gives them the number of channels.

    Parameters
    ----------
    requires_grad : bool, default False
        Whether the tensor it becomes requires grad.
    device, dtype : optional
        Where and in what dtype it will live.

    Raises
    ------
    RuntimeError
        When its shape is read before it is materialized.

    See Also
    --------
    UninitializedParameter, difflab.nn.LazyBatchNorm1d

    Examples
    --------
    >>> import difflab as dl
    >>> b = dl.nn.UninitializedBuffer()
    >>> b.materialize(3)
    >>> type(b).__name__, b.shape
    ('Tensor', difflab.Size([3]))
    """

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device: Any = None, dtype: Any = None
                ) -> UninitializedBuffer:
        from difflab.creation import empty

        t = cls._wrap(empty(0, dtype=dtype, device=device).array)
        if requires_grad:
            t.requires_grad = True
        return t

    def __init__(self, requires_grad: bool = False, device: Any = None, dtype: Any = None
                 ) -> None:
        pass  # everything happened in __new__


def is_lazy(param: Any) -> bool:
    """Whether ``param`` is a lazy module's placeholder not materialized yet.

    Parameters
    ----------
    param : Tensor
        A parameter or buffer.

    Returns
    -------
    bool
        True for an :class:`UninitializedParameter` or :class:`UninitializedBuffer`.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.nn.parameter import is_lazy
    >>> layer = dl.nn.LazyLinear(2)
    >>> is_lazy(layer.weight), is_lazy(dl.nn.Linear(3, 2).weight)
    (True, False)
    """
    return isinstance(param, UninitializedTensorMixin)
