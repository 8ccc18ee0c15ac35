r"""Weight normalization by a forward pre-hook (PyTorch's older ``nn.utils.weight_norm``).

``weight_norm(module)`` replaces the parameter ``weight`` by two, ``weight_g`` (the
magnitudes) and ``weight_v`` (the direction), and a forward pre-hook that sets the
plain attribute ``module.weight = weight_g * weight_v / ||weight_v||`` before each call.
PyTorch deprecates it in favour of :func:`difflab.nn.utils.parametrizations.weight_norm`
(which recomputes the weight at each access); both compute with the same function.
"""

from __future__ import annotations

import warnings
from typing import Any

from difflab.nn.modules.module import Module
from difflab.nn.parameter import Parameter, is_lazy
from difflab.nn.utils._pre_hooks import drop_pre_hook, pre_hooks_on
from difflab.nn.utils.parametrizations import _weight_norm, norm_except_dim

__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]


class WeightNorm:
    r"""The forward pre-hook of :func:`weight_norm`: ``module.<name> = g v / \|v\|``.

    Parameters
    ----------
    name : str
        The tensor it computes.
    dim : int or None
        The dimension whose slices have their own magnitude (None or -1: one for all).

    Examples
    --------
    >>> import warnings
    >>> from difflab import nn
    >>> from difflab.nn.utils.weight_norm import WeightNorm
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     m = nn.utils.weight_norm(nn.Linear(2, 2))
    >>> [type(hook).__name__ for hook in m._forward_pre_hooks.values()]
    ['WeightNorm']
    """

    def __init__(self, name: str, dim: int | None) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Any:
        """``g v / ||v||`` from the module's ``<name>_g`` and ``<name>_v`` (recorded)."""
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"),
                            self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        """Register the hook on ``module`` (see :func:`weight_norm`)."""
        if pre_hooks_on(module, WeightNorm, name):
            raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter "
                               f"{name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if is_lazy(weight):
            raise ValueError("The module passed to `WeightNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "weight normalization")
        if name not in module._parameters:
            raise ValueError(f"weight_norm: '{name}' is not a parameter of "
                             f"{type(module).__name__}")
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        """Put back one parameter ``<name>`` with the current weight's values."""
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    r"""Weight normalization by a hook: ``weight`` becomes ``weight_g * weight_v / ||weight_v||``.

    The parameter ``name`` is replaced by ``<name>_g`` (:math:`\|w\|` over every
    dimension but ``dim``; ``dim=None`` or -1: one number) and ``<name>_v`` (:math:`w`),
    and a forward pre-hook sets ``module.<name>`` from them before every call, so the
    gradient reaches both.  Deprecated, as in PyTorch (a ``FutureWarning``): use
    :func:`difflab.nn.utils.parametrizations.weight_norm`.

    Parameters
    ----------
    module : Module
        The module.
    name : str, default "weight"
        The parameter.
    dim : int or None, default 0
        The dimension whose slices get their own magnitude; None for one magnitude.

    Returns
    -------
    Module
        ``module``, with the hook.

    Raises
    ------
    RuntimeError
        If ``name`` already has a weight-norm hook.
    ValueError
        If ``name`` is not a parameter, or an uninitialized (lazy) one.

    See Also
    --------
    remove_weight_norm

    Examples
    --------
    >>> import warnings
    >>> import difflab as dl
    >>> from difflab import nn
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     m = nn.utils.weight_norm(nn.Linear(2, 2))
    >>> list(m.state_dict()), tuple(m.weight_g.shape)
    (['bias', 'weight_g', 'weight_v'], (2, 1))
    """
    warnings.warn("`difflab.nn.utils.weight_norm` is deprecated in favor of "
                  "`difflab.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=2)
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Remove the hook of :func:`weight_norm`: ``name`` is one parameter again.

    Parameters
    ----------
    module : Module
        A module with a weight-norm hook on ``name``.
    name : str, default "weight"
        The parameter.

    Returns
    -------
    Module
        ``module``.

    Raises
    ------
    ValueError
        If ``module`` has no weight-norm hook on ``name``.

    Examples
    --------
    >>> import warnings
    >>> from difflab import nn
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     m = nn.utils.weight_norm(nn.Linear(2, 2))
    >>> list(nn.utils.remove_weight_norm(m).state_dict())
    ['bias', 'weight']
    """
    for hook_id in pre_hooks_on(module, WeightNorm, name):
        drop_pre_hook(module, hook_id).remove(module)
        return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
