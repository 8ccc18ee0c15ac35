"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict``, ``ParameterList``."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import Any

from difflab.nn.modules.module import Module
from difflab.nn.parameter import Parameter


def _index(i: int, n: int, kind: str) -> int:
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of range for a {kind} of length {n}")
    return i % n


class Sequential(Module):
    """Modules applied one after another: ``Sequential(m0, m1, m2)(x) = m2(m1(m0(x)))``.

    The children are named ``"0"``, ``"1"``, ... (or by the keys of one
    ``OrderedDict``).  Indexable (``seq[0]``, ``seq[-1]``; ``seq[1:]`` is a
    Sequential sharing the modules), iterable, and ``len()`` gives the number of
    modules; deleting one renumbers the rest, as in PyTorch.

    Parameters
    ----------
    *modules : Module, or one OrderedDict of str to Module
        The modules, in order.

    Raises
    ------
    TypeError
        If an argument is not a Module.
    IndexError
        For an index out of range.

    See Also
    --------
    ModuleList : a list of modules without a ``forward``.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> from collections import OrderedDict
    >>> model = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
    >>> model(dl.ones(4, 2)).shape, len(model), model[-1]
    (difflab.Size([4, 1]), 3, Linear(in_features=8, out_features=1, bias=True))
    >>> nn.Sequential(OrderedDict([("fc", nn.Linear(2, 3)), ("act", nn.ReLU())]))
    Sequential(
      (fc): Linear(in_features=2, out_features=3, bias=True)
      (act): ReLU()
    )
    """

    def __init__(self, *modules: Module) -> None:
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, m in modules[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(modules):
                if not isinstance(m, Module):
                    raise TypeError(
                        f"Sequential: argument {i} is a {type(m).__name__}, not a Module"
                    )
                self.add_module(str(i), m)

    def forward(self, x: Any) -> Any:
        for m in self._modules.values():
            x = m(x)
        return x

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(idx, len(self), "Sequential")]

    def __setitem__(self, idx: int, module: Module) -> None:
        key = list(self._modules)[_index(idx, len(self), "Sequential")]
        self.add_module(key, module)

    def __delitem__(self, idx: int | slice) -> None:
        keys = list(self._modules)
        for key in (keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(self),
                                                                         "Sequential")]]):
            del self._modules[key]
        # renumber, as PyTorch does: append's key str(len(self)) must not be taken
        modules = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(modules):
            self._modules[str(i)] = m

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> Sequential:
        """Add ``module`` at the end (named ``str(len(self))``).

        Parameters
        ----------
        module : Module
            The module to add.

        Returns
        -------
        Sequential
            ``self``.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> nn.Sequential(nn.Linear(2, 3)).append(nn.ReLU())[-1]
        ReLU()
        """
        self.add_module(str(len(self)), module)
        return self


class ModuleList(Module):
    """A list of modules whose parameters the parent sees (a plain list would hide them).

    Indexable (a slice is a ModuleList), iterable, ``len()``, ``+=``; it has no
    ``forward``: the parent decides how to call its elements.

    Parameters
    ----------
    modules : iterable of Module, optional
        The initial modules.

    Raises
    ------
    IndexError
        For an index out of range.

    See Also
    --------
    Sequential, ModuleDict

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> class Tower(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
    ...     def forward(self, x):
    ...         for layer in self.layers:
    ...             x = layer(x).relu()
    ...         return x
    >>> tower = Tower()
    >>> len(list(tower.parameters())), tower(dl.ones(2, 4)).shape
    (6, difflab.Size([2, 4]))
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _renumber(self, modules: list) -> None:
        self._modules.clear()
        for i, m in enumerate(modules):
            self.add_module(str(i), m)

    def __getitem__(self, idx: int | slice) -> Any:
        values = list(self._modules.values())
        if isinstance(idx, slice):
            return ModuleList(values[idx])
        return values[_index(idx, len(values), "ModuleList")]

    def __setitem__(self, idx: int, module: Module) -> None:
        self.add_module(str(_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx: int | slice) -> None:
        values = list(self._modules.values())
        del values[idx]
        self._renumber(values)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def append(self, module: Module) -> ModuleList:
        """Add ``module`` at the end.

        Parameters
        ----------
        module : Module
            The module to add.

        Returns
        -------
        ModuleList
            ``self``.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> len(nn.ModuleList().append(nn.ReLU()))
        1
        """
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Add every module of ``modules`` at the end, in order.

        Parameters
        ----------
        modules : iterable of Module
            The modules to add.

        Returns
        -------
        ModuleList
            ``self``.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> len(nn.ModuleList([nn.ReLU()]).extend([nn.Tanh(), nn.Sigmoid()]))
        3
        """
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Insert ``module`` before position ``index`` (the modules are renumbered).

        Parameters
        ----------
        index : int
            As ``list.insert``'s.
        module : Module
            The module to insert.

        Returns
        -------
        None

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> layers = nn.ModuleList([nn.Linear(2, 2)])
        >>> layers.insert(0, nn.ReLU())
        >>> [type(m).__name__ for m in layers]
        ['ReLU', 'Linear']
        """
        values = list(self._modules.values())
        values.insert(index, module)
        self._renumber(values)


class ModuleDict(Module):
    """A dict of modules whose parameters the parent module sees; the keys are the children's names.

    Supports ``md[key]``, ``md[key] = module``, ``del md[key]``, ``in``, ``len()``
    and iteration over the keys, in insertion order.

    Parameters
    ----------
    modules : dict or iterable of (str, Module) pairs, optional
        The initial modules.

    Raises
    ------
    KeyError
        For a missing key.

    See Also
    --------
    ModuleList, ParameterDict

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> heads = nn.ModuleDict({"cls": nn.Linear(4, 3), "reg": nn.Linear(4, 1)})
    >>> heads["reg"](dl.ones(2, 4)).shape, "cls" in heads
    (difflab.Size([2, 1]), True)
    """

    def __init__(self, modules: Any = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def keys(self) -> Any:
        """The keys (the children's names), in insertion order.

        Returns
        -------
        KeysView of str
            A live view of the dict.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> list(nn.ModuleDict({'a': nn.ReLU(), 'b': nn.Tanh()}).keys())
        ['a', 'b']
        """
        return self._modules.keys()

    def values(self) -> Any:
        """The modules, in insertion order.

        Returns
        -------
        ValuesView of Module
            A live view of the dict.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> list(nn.ModuleDict({'a': nn.ReLU()}).values())
        [ReLU()]
        """
        return self._modules.values()

    def items(self) -> Any:
        """The ``(name, module)`` pairs, in insertion order.

        Returns
        -------
        ItemsView of (str, Module)
            A live view of the dict.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> list(nn.ModuleDict({'a': nn.ReLU()}).items())
        [('a', ReLU())]
        """
        return self._modules.items()

    def pop(self, key: str) -> Module:
        """Remove the module under ``key`` and return it.

        Parameters
        ----------
        key : str
            Its name.

        Returns
        -------
        Module
            The removed module.

        Raises
        ------
        KeyError
            If there is no such key.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> md = nn.ModuleDict({"a": nn.ReLU(), "b": nn.Tanh()})
        >>> md.pop("a"), list(md.keys())
        (ReLU(), ['b'])
        """
        return self._modules.pop(key)

    def clear(self) -> None:
        """Remove every module.

        Returns
        -------
        None

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> md = nn.ModuleDict({"a": nn.ReLU()})
        >>> md.clear()
        >>> len(md)
        0
        """
        self._modules.clear()

    def update(self, modules: Any) -> None:
        """Add (or replace) the modules of a dict or of an iterable of ``(key, module)`` pairs.

        Parameters
        ----------
        modules : dict or iterable of (str, Module) pairs
            The modules to add.

        Returns
        -------
        None

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> md = nn.ModuleDict({"a": nn.ReLU()})
        >>> md.update([("b", nn.Tanh())])
        >>> list(md.keys())
        ['a', 'b']
        """
        items = modules.items() if hasattr(modules, "items") else modules
        for key, m in items:
            self[key] = m


class ParameterList(Module):
    """A list of parameters whose parent module sees them (named ``"0"``, ``"1"``, ...).

    A tensor that is not a Parameter is wrapped in one.

    Parameters
    ----------
    values : iterable of Tensor, optional
        The initial parameters.

    Raises
    ------
    IndexError
        For an index out of range.

    See Also
    --------
    ParameterDict, ModuleList

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> scales = nn.ParameterList([dl.ones(2), nn.Parameter(dl.zeros(3))])
    >>> len(scales), [tuple(p.shape) for p in scales.parameters()]
    (2, [(2,), (3,)])
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        for v in values or ():
            self.append(v)

    def append(self, value: Any) -> ParameterList:
        """Add ``value`` at the end (wrapped in a Parameter if it is not one).

        Parameters
        ----------
        value : Tensor
            The parameter.

        Returns
        -------
        ParameterList
            ``self``.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> len(nn.ParameterList().append(dl.ones(2)))
        1
        """
        if not isinstance(value, Parameter):
            value = Parameter(value)
        self.register_parameter(str(len(self)), value)
        return self

    def __getitem__(self, idx: int) -> Parameter:
        return list(self._parameters.values())[_index(idx, len(self), "ParameterList")]

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self._parameters.values())

    def extra_repr(self) -> str:
        return "\n".join(f"({i}): Parameter of shape {tuple(p.shape)}"
                         for i, p in enumerate(self))


class ParameterDict(Module):
    """A dict of parameters whose parent module sees them; the keys are their names.

    A tensor that is not a Parameter is wrapped in one.  Supports ``pd[key]``,
    ``pd[key] = tensor``, ``del pd[key]``, ``in``, ``len()`` and iteration over
    the keys, in insertion order.

    Parameters
    ----------
    parameters : dict or iterable of (str, Tensor) pairs, optional
        The initial parameters.

    Raises
    ------
    TypeError
        For a key that is not a string.
    KeyError
        For a missing key, or a key that contains ``'.'``.

    See Also
    --------
    ParameterList, ModuleDict

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> params = nn.ParameterDict({"scale": nn.Parameter(dl.ones(3))})
    >>> params["shift"] = dl.zeros(3)               # wrapped in a Parameter
    >>> sorted(name for name, _ in params.named_parameters())
    ['scale', 'shift']
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __setitem__(self, key: str, value: Any) -> None:
        if not isinstance(key, str):
            raise TypeError(f"ParameterDict keys must be strings, got {type(key).__name__}")
        self.register_parameter(key, value if isinstance(value, Parameter) or value is None
                                else Parameter(value))

    def __getitem__(self, key: str) -> Parameter:
        return self._parameters[key]

    def __delitem__(self, key: str) -> None:
        del self._parameters[key]

    def __contains__(self, key: object) -> bool:
        return key in self._parameters

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[str]:
        return iter(self._parameters)

    def keys(self) -> Iterable[str]:
        """The keys (the parameters' names), in insertion order.

        Returns
        -------
        KeysView of str
            A live view of the dict.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> list(nn.ParameterDict({'a': dl.ones(1), 'b': dl.ones(1)}).keys())
        ['a', 'b']
        """
        return self._parameters.keys()

    def values(self) -> Iterable[Parameter]:
        """The parameters, in insertion order.

        Returns
        -------
        ValuesView of Parameter
            A live view of the dict.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> [tuple(p.shape) for p in nn.ParameterDict({'a': dl.ones(2)}).values()]
        [(2,)]
        """
        return self._parameters.values()

    def items(self) -> Iterable[tuple[str, Parameter]]:
        """The ``(name, parameter)`` pairs, in insertion order.

        Returns
        -------
        ItemsView of (str, Parameter)
            A live view of the dict.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> [(k, tuple(p.shape)) for k, p in nn.ParameterDict({'a': dl.ones(2)}).items()]
        [('a', (2,))]
        """
        return self._parameters.items()

    def update(self, parameters: Any) -> None:
        """Add (or replace) the parameters of a dict or of an iterable of ``(key, tensor)`` pairs.

        Parameters
        ----------
        parameters : dict or iterable of (str, Tensor) pairs
            Tensors that are not Parameters are wrapped.

        Returns
        -------
        None

        Raises
        ------
        TypeError
            For a key that is not a string.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> pd = nn.ParameterDict()
        >>> pd.update({"w": dl.ones(2)})
        >>> type(pd["w"]).__name__
        'Parameter'
        """
        pairs = parameters.items() if hasattr(parameters, "items") else parameters
        for key, value in pairs:
            self[key] = value

    def pop(self, key: str) -> Parameter:
        """Remove the parameter under ``key`` and return it.

        Parameters
        ----------
        key : str
            Its name.

        Returns
        -------
        Parameter
            The removed parameter.

        Raises
        ------
        KeyError
            If there is no such key.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> pd = nn.ParameterDict({"w": dl.ones(2)})
        >>> tuple(pd.pop("w").shape), len(pd)
        ((2,), 0)
        """
        return self._parameters.pop(key)

    def extra_repr(self) -> str:
        return "\n".join(f"({k}): Parameter of shape {tuple(p.shape)}" for k, p in self.items())
