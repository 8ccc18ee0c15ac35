"""``skip_init``: build a module without spending time on its initial values."""

from __future__ import annotations

from typing import Any


def skip_init(module_cls: type, *args: Any, **kwargs: Any) -> Any:
    """An instance of ``module_cls(*args, **kwargs)`` whose parameters are to be overwritten.

    PyTorch builds the module on its "meta" device and then allocates the memory
    uninitialised, to save the cost of an initialisation that a loaded checkpoint or a
    custom ``nn.init`` call replaces anyway.  difflab has no meta device: it builds the
    module as usual (its parameters hold the default initial values), so the result is
    the same module, only not faster.  ``device=`` is passed on, as PyTorch requires
    the class to accept it.

    Parameters
    ----------
    module_cls : type
        A subclass of ``nn.Module``.
    *args, **kwargs
        Its constructor's arguments.

    Returns
    -------
    nn.Module
        The module.

    Raises
    ------
    RuntimeError
        When ``module_cls`` is not a class of module.

    Examples
    --------
    >>> from difflab import nn
    >>> layer = nn.utils.skip_init(nn.Linear, 3, 2)
    >>> layer.weight.shape
    difflab.Size([2, 3])
    """
    from difflab.nn.modules.module import Module

    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"skip_init: expected a subclass of nn.Module, got {module_cls!r}")
    return module_cls(*args, **kwargs)
