r"""Parametrizations: a module's tensor computed from other tensors on every access.

``register_parametrization(module, "weight", P())`` moves the parameter
``module.weight`` to ``module.parametrizations.weight.original`` and makes
``module.weight`` a property that returns :math:`P(\text{original})` each time it is
read.  The computation is recorded on the tape like any other, so gradients reach
``original`` (the tensor the optimizer trains): training happens in the space of
``original``, and ``module.weight`` always satisfies the constraint ``P`` imposes
(a symmetric matrix, an orthogonal one, a unit norm...).  Assigning
``module.weight = value`` calls ``P.right_inverse(value)`` and stores the result in
``original``.

How, as in PyTorch: the first parametrization of a module gives the module a class of
its own, ``Parametrized<Class>`` (a subclass of its class), so that the property can
live on that class without touching the other instances; removing the last one gives
the module its class back.  The checkpoint keys follow:
``parametrizations.weight.original`` (or ``original0``, ``original1``, ... when
``right_inverse`` returns several tensors), and the parametrization modules' own
buffers under ``parametrizations.weight.0.``, ``.1.``, ...
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from contextlib import contextmanager
from typing import Any

from difflab.autograd.grad_mode import no_grad
from difflab.nn.modules.container import ModuleDict, ModuleList
from difflab.nn.modules.module import Module
from difflab.nn.parameter import Parameter
from difflab.tensor import Tensor

__all__ = ["ParametrizationList", "cached", "is_parametrized", "register_parametrization",
           "remove_parametrizations", "type_before_parametrizations"]

# Inside ``with cached():`` each parametrized tensor is computed once: (id(module), name)
# -> tensor.  A counter, so that nested ``cached()`` blocks empty it only at the outermost.
_cache: dict = {}
_cache_depth = 0


@contextmanager
def cached() -> Any:
    """Compute each parametrized tensor once inside the block, and reuse it.

    Outside the block, ``module.weight`` runs the parametrization at every read; a
    recurrent network that reads its weight at every time step, or a model that reads
    a parametrized weight in several places, can compute it once per forward pass
    instead.  The cache is emptied when the outermost block ends.

    Returns
    -------
    contextmanager
        Use it in a ``with`` statement.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> from difflab.nn.utils import parametrize
    >>> class Double(nn.Module):
    ...     def forward(self, x):
    ...         return 2 * x
    >>> m = parametrize.register_parametrization(nn.Linear(2, 2), "weight", Double())
    >>> m.weight is m.weight
    False
    >>> with parametrize.cached():
    ...     m.weight is m.weight
    True
    """
    global _cache_depth, _cache
    _cache_depth += 1
    try:
        yield
    finally:
        _cache_depth -= 1
        if not _cache_depth:
            _cache = {}


def _maybe_set(dest: Tensor, src: Tensor) -> None:
    """``dest`` takes ``src``'s values (and shape) and keeps its identity (PyTorch's
    ``set_``), so an optimizer that holds ``dest`` still trains it."""
    if dest is not src:
        dest.data = src
        dest._version[0] += 1


def _register_parameter_or_buffer(module: Module, name: str, value: Tensor) -> None:
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


class ParametrizationList(ModuleList):
    r"""The parametrizations of one tensor, applied in order, with the original tensor(s).

    ``register_parametrization`` builds it; it sits at
    ``module.parametrizations.<name>``.  Calling it computes
    :math:`P_k(\dots P_2(P_1(\text{original})))`.  At construction each
    parametrization's ``right_inverse`` (where it has one) runs in reverse order on the
    tensor being parametrized, and the result becomes ``original`` (the same
    Parameter object, with new values: an optimizer holding it needs no change), or
    ``original0``, ``original1``, ... when it is a sequence of tensors.

    Parameters
    ----------
    modules : sequence of Module
        The parametrizations (at least one).
    original : Tensor or Parameter
        The tensor being parametrized.
    unsafe : bool, default False
        Skip the check that the parametrized tensor keeps the original's shape and dtype.

    Raises
    ------
    ValueError
        If ``modules`` is empty, ``right_inverse`` returns something other than a tensor
        or a sequence of tensors, a single tensor of another dtype, or (without
        ``unsafe``) the parametrization changes the shape or dtype.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> from difflab.nn.utils import parametrize
    >>> class Symmetric(nn.Module):
    ...     def forward(self, x):
    ...         return x.triu() + x.triu(1).mT
    >>> m = parametrize.register_parametrization(nn.Linear(2, 2), "weight", Symmetric())
    >>> plist = m.parametrizations.weight
    >>> type(plist).__name__, len(plist), tuple(plist.original.shape)
    ('ParametrizationList', 1, (2, 2))
    >>> bool((plist() == m.weight).all())
    True
    """

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False
                 ) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = original.shape, original.dtype
        with no_grad():  # right_inverse (in reverse order) of what is being parametrized
            new = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass  # (then right_inverse is taken as the identity)
        if not isinstance(new, (Tensor, Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                    f"original.dtype: {original.dtype}\n"
                    f"right_inverse(original).dtype: {new.dtype}")
            with no_grad():  # the same object, so an optimizer holding it needs no change
                _maybe_set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, tensor in enumerate(new):
                if not isinstance(tensor, Tensor):
                    raise ValueError(
                        "'right_inverse' must return a Tensor or a Sequence of tensors "
                        f"(list, tuple...). Got element {i} of the sequence with type "
                        f"{type(tensor).__name__}.")
                if isinstance(original, Parameter):  # (the user adds these to the optimizer)
                    tensor = Parameter(tensor.detach(), original.requires_grad)
                tensor.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", tensor)
        if not self.unsafe:
            _check_same_space(self(), shape, dtype, "unparametrized", "parametrized",
                              "Registering a parametrization")

    def right_inverse(self, value: Tensor) -> None:
        """Set the original tensor(s) so that this list computes ``value``.

        The parametrizations' ``right_inverse`` run in reverse registration order; the
        result is stored in ``original`` (or ``original0``, ``original1``, ...), in place.

        Parameters
        ----------
        value : Tensor
            The new value of the parametrized tensor.

        Returns
        -------
        None

        Raises
        ------
        RuntimeError
            If a parametrization has no ``right_inverse``.
        ValueError
            If the result is not of the originals' number, kind and dtypes.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> from difflab.nn.utils import parametrizations
        >>> m = parametrizations.weight_norm(nn.Linear(2, 1))
        >>> m.weight = dl.tensor([[3.0, 4.0]])   # calls this method
        >>> m.parametrizations.weight.original0
        Parameter containing:
        tensor([[5.]], requires_grad=True)
        """
        with no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       "implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(
                        f"`right_inverse` should return a tensor. Got {type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(
                        f"The tensor returned by `right_inverse` has dtype {value.dtype} "
                        f"while `original` has dtype {self.original.dtype}")
                _maybe_set(self.original, value)
                return
            if not isinstance(value, Sequence):
                raise ValueError("'right_inverse' must return a sequence of tensors. "
                                 f"Got {type(value).__name__}.")
            if len(value) != self.ntensors:
                raise ValueError("'right_inverse' must return a sequence of tensors of length "
                                 f"{self.ntensors}. Got a sequence of length {len(value)}.")
            for i, tensor in enumerate(value):
                original_i = getattr(self, f"original{i}")
                if not isinstance(tensor, Tensor):
                    raise ValueError("`right_inverse` must return a sequence of tensors. "
                                     f"Got element {i} of type {type(tensor).__name__}")
                if original_i.dtype != tensor.dtype:
                    raise ValueError(
                        f"Tensor {i} returned by `right_inverse` has dtype {tensor.dtype} "
                        f"while `original{i}` has dtype {original_i.dtype}")
                _maybe_set(original_i, tensor)

    def forward(self) -> Tensor:
        r"""The parametrized tensor: :math:`P_k(\dots P_1(\text{original}))`, recorded.

        Returns
        -------
        Tensor
            What ``module.<name>`` reads.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn
        >>> from difflab.nn.utils import parametrizations
        >>> m = parametrizations.weight_norm(nn.Linear(2, 1))
        >>> bool((m.parametrizations.weight() == m.weight).all())
        True
        """
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _check_same_space(new: Any, shape: Any, dtype: Any, before: str, after: str,
                      what: str) -> None:
    """A parametrization (or its right inverse) must keep the tensor's shape and dtype."""
    if not isinstance(new, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(new).__name__}.")
    if new.dtype != dtype:
        raise ValueError(f"{what} may not change the dtype of the tensor, unless the `unsafe` "
                         f"flag is enabled.\n{before} dtype: {dtype}\n{after} dtype: {new.dtype}")
    if new.shape != shape:
        raise ValueError(f"{what} may not change the shape of the tensor, unless the `unsafe` "
                         f"flag is enabled.\n{before} shape: {tuple(shape)}\n"
                         f"{after} shape: {tuple(new.shape)}")


def _raise_on_save(self: Module) -> Any:
    raise RuntimeError("Serialization of parametrized modules is only supported through "
                       "state_dict(): save module.state_dict() and load it into a module "
                       "parametrized the same way.")


def _deepcopy(self: Module, memo: dict) -> Module:
    """A plain deep copy (``__getstate__`` refuses pickling, not copying), with a class of
    its own: removing a parametrization from the copy leaves the original's properties."""
    if id(self) in memo:
        return memo[id(self)]
    cls = self.__class__
    own_class = type(cls.__name__, cls.__bases__,
                     {k: v for k, v in vars(cls).items() if k not in ("__dict__", "__weakref__")})
    replica = own_class.__new__(own_class)
    memo[id(self)] = replica
    replica.__dict__ = copy.deepcopy(self.__dict__, memo)
    return replica


def _inject_new_class(module: Module) -> None:
    """Give ``module`` a class of its own, ``Parametrized<Class>``, to hold the properties."""
    cls = module.__class__
    namespace: dict = {"__getstate__": _raise_on_save}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = _deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _inject_property(module: Module, tensor_name: str) -> None:
    """``module.<tensor_name>``: read computes the parametrization, write sets the original."""

    def get_parametrized(self: Module) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if not _cache_depth:
            return parametrization()
        key = (id(self), tensor_name)
        if key not in _cache:
            _cache[key] = parametrization()
        return _cache[key]

    def set_original(self: Module, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(module: Module, tensor_name: str, parametrization: Module,
                             *, unsafe: bool = False) -> Module:
    r"""Make ``module.<tensor_name>`` the output of ``parametrization`` on a trained original.

    The parameter (or buffer) ``module.<tensor_name>`` moves to
    ``module.parametrizations.<tensor_name>.original``; from then on, reading
    ``module.<tensor_name>`` returns ``parametrization(original)``, computed at each
    access (or once per :func:`cached` block) and recorded, so the gradient of a loss
    reaches ``original``.  If ``parametrization`` has a method ``right_inverse``, it
    runs on the current value first (``original = right_inverse(weight)``) and on every
    assignment ``module.<tensor_name> = value``.  A second parametrization on the same
    name is applied after the first (a :class:`ParametrizationList`).

    ``right_inverse`` may return a sequence of tensors: they are registered as
    ``original0``, ``original1``, ... and passed to ``forward`` as separate arguments
    (weight normalization's magnitude and direction).

    Parameters
    ----------
    module : Module
        The module whose tensor is parametrized.
    tensor_name : str
        The name of a parameter or buffer of ``module`` (or one already parametrized).
    parametrization : Module
        Its ``forward`` computes the tensor; an optional ``right_inverse`` maps a value
        of the tensor back to the original(s).
    unsafe : bool, default False
        Skip the checks that ``forward`` and ``right_inverse`` keep the shape and dtype.

    Returns
    -------
    Module
        ``module`` (its class is now ``Parametrized<Class>``).

    Raises
    ------
    ValueError
        If ``module`` has no parameter, buffer or parametrized tensor ``tensor_name``, or
        the parametrization changes the shape or dtype (without ``unsafe``).

    See Also
    --------
    remove_parametrizations, is_parametrized, cached
    difflab.nn.utils.parametrizations.orthogonal : a ready-made parametrization.

    Examples
    --------
    A linear layer whose weight is always symmetric:

    >>> import difflab as dl
    >>> from difflab import nn
    >>> from difflab.nn.utils import parametrize
    >>> class Symmetric(nn.Module):
    ...     def forward(self, x):
    ...         return x.triu() + x.triu(1).mT
    >>> _ = dl.manual_seed(0)
    >>> m = parametrize.register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
    >>> type(m).__name__, bool((m.weight == m.weight.mT).all())
    ('ParametrizedLinear', True)
    >>> list(m.state_dict())
    ['bias', 'parametrizations.weight.original']
    >>> m(dl.ones(1, 3)).sum().backward()
    >>> m.parametrizations.weight.original.grad.shape
    difflab.Size([3, 3])
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:  # forward and right_inverse must map the tensor's space to itself
            current = getattr(module, tensor_name)
            new = parametrization(current)
            _check_same_space(new, current.shape, current.dtype, f"module.{tensor_name}",
                              f"parametrization(module.{tensor_name})",
                              "Registering a parametrization")
            if hasattr(parametrization, "right_inverse"):
                try:
                    back = parametrization.right_inverse(new)
                except NotImplementedError:
                    pass
                else:
                    _check_same_space(back, current.shape, current.dtype,
                                      f"module.{tensor_name}", "right_inverse's",
                                      "parametrization.right_inverse")
        plist = module.parametrizations[tensor_name]
        plist.append(parametrization)
        plist.unsafe |= unsafe
        return module
    if tensor_name not in module._buffers and tensor_name not in module._parameters:
        raise ValueError(f"Module '{module}' does not have a parameter, a "
                         f"buffer, or a parametrized element with name '{tensor_name}'")
    original = getattr(module, tensor_name)
    if original is None:
        raise ValueError(f"Module '{module}' has '{tensor_name}' registered as "
                         "None: there is no tensor to parametrize")
    plist = ParametrizationList([parametrization], original, unsafe=unsafe)  # checks first
    delattr(module, tensor_name)
    if not is_parametrized(module):
        _inject_new_class(module)
        module.parametrizations = ModuleDict()
    _inject_property(module, tensor_name)
    module.parametrizations[tensor_name] = plist
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has a parametrization (on ``tensor_name``, if given).

    Parameters
    ----------
    module : Module
        The module to ask.
    tensor_name : str, optional
        A tensor's name; by default, any tensor.

    Returns
    -------
    bool
        True if it is parametrized.

    Examples
    --------
    >>> from difflab import nn
    >>> from difflab.nn.utils import parametrizations, parametrize
    >>> m = parametrizations.weight_norm(nn.Linear(2, 2))
    >>> parametrize.is_parametrized(m), parametrize.is_parametrized(m, "bias")
    (True, False)
    """
    plists = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(plists, ModuleDict):
        return False
    return len(plists) > 0 if tensor_name is None else tensor_name in plists


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Undo the parametrizations of ``module.<tensor_name>``: a plain parameter again.

    With ``leave_parametrized=True`` the tensor keeps its current (parametrized) value;
    with ``False`` it goes back to the original.  When the parametrization had one
    original tensor, the restored parameter is that same object (an optimizer holding
    it still trains it).  When the last parametrization of the module goes, the module
    gets its class back.

    Parameters
    ----------
    module : Module
        A parametrized module.
    tensor_name : str
        The parametrized tensor.
    leave_parametrized : bool, default True
        Keep the current value (True) or the original's (False).

    Returns
    -------
    Module
        ``module``.

    Raises
    ------
    ValueError
        If ``module.<tensor_name>`` is not parametrized, or with
        ``leave_parametrized=False`` when the original is several tensors.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> from difflab.nn.utils import parametrizations, parametrize
    >>> m = parametrizations.weight_norm(nn.Linear(2, 2))
    >>> before = m.weight.detach().clone()
    >>> m = parametrize.remove_parametrizations(m, "weight")
    >>> type(m).__name__, list(m.state_dict()), bool(dl.allclose(m.weight, before))
    ('Linear', ['bias', 'weight'], True)
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on "
                         f"{tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                _maybe_set(original, getattr(module, tensor_name))
    elif leave_parametrized:
        value = getattr(module, tensor_name)
        original = (Parameter(value.detach(), True) if value.requires_grad
                    else value.detach())
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                         "that is parametrized in terms of a sequence of tensors.")
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The class of ``module`` before it was parametrized (its class if it is not).

    Parameters
    ----------
    module : Module
        Any module.

    Returns
    -------
    type
        ``Linear`` for a ``ParametrizedLinear``.

    Examples
    --------
    >>> from difflab import nn
    >>> from difflab.nn.utils import parametrizations, parametrize
    >>> m = parametrizations.weight_norm(nn.Linear(2, 2))
    >>> type(m).__name__, parametrize.type_before_parametrizations(m).__name__
    ('ParametrizedLinear', 'Linear')
    """
    return module.__class__.__bases__[0] if is_parametrized(module) else type(module)
