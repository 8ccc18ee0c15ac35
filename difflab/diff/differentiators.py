"""The registry of differentiation methods: ``method="forward"`` and friends.

>>> from difflab.diff import differentiators
>>> differentiators.available()
['compiled', 'forward', 'numeric', 'reverse', 'symbolic']
>>> differentiators.get("numeric")              # the shared default instance
>>> differentiators.get(Numeric(scheme="richardson"))   # an object passes through

``Symbolic`` lives in :mod:`difflab.diff.symbolic`, which imports sympy (half a
second): it is imported the first time the ``symbolic`` method, the ``Symbolic``
class or a sympy value is used, so that ``import difflab`` stays quick.

A third party adds a method by subclassing :class:`Differentiator` (two hooks:
``_jacobian`` and ``_hessian``) and registering an instance::

    differentiators.register("mine", MyDifferentiator())
    difflab.grad(f, method="mine")(x)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from difflab.diff.compiled import Compiled
from difflab.diff.forward import Forward
from difflab.diff.interface import Differentiator
from difflab.diff.numeric import Numeric
from difflab.diff.reverse import Reverse
from difflab.functions import register_type_module

if TYPE_CHECKING:  # imported on first use, by __getattr__ below
    from difflab.diff.symbolic import Symbolic

__all__ = [
    "Compiled", "Differentiator", "Forward", "Numeric", "Reverse", "Symbolic", "available", "get",
    "register",
]

_registry: dict[str, Differentiator] = {}
#: Classes whose module is heavy to import (sympy: half a second): class -> module.
_HEAVY = {"Symbolic": "difflab.diff.symbolic"}
#: Methods registered the first time they are asked for: name -> class (in ``_HEAVY``).
_on_first_use = {"symbolic": "Symbolic"}


def __getattr__(name: str) -> Any:
    """``differentiators.Symbolic``: a class of ``_HEAVY``, imported when first asked for."""
    if name not in _HEAVY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    cls = getattr(importlib.import_module(_HEAVY[name]), name)
    globals()[name] = cls  # found directly from now on
    return cls


def register(name: str, differentiator: Differentiator | type[Differentiator]) -> None:
    """Make ``differentiator`` available as ``method=name`` (a class is instantiated)."""
    if isinstance(differentiator, type):
        differentiator = differentiator()
    if not isinstance(differentiator, Differentiator):
        raise TypeError(
            f"register() expects a Differentiator instance or subclass, got "
            f"{type(differentiator).__name__}"
        )
    if not isinstance(name, str) or not name:
        raise ValueError("register() needs a non-empty method name")
    _on_first_use.pop(name, None)
    _registry[name] = differentiator


def available() -> list[str]:
    """The registered method names, sorted."""
    return sorted({*_registry, *_on_first_use})


def get(method: str | Differentiator, **options: Any) -> Differentiator:
    """The differentiator for ``method``: a registered name or a Differentiator object.

    With ``options``, a new instance of the named method's class is made with them
    (``get("numeric", scheme="richardson")``).
    """
    if isinstance(method, Differentiator):
        if options:
            raise TypeError("options can only be given with a method name, not an object")
        return method
    if not isinstance(method, str):
        raise TypeError(
            f"method must be a name ({', '.join(available())}) or a Differentiator object, "
            f"got {type(method).__name__}"
        )
    if method in _on_first_use:
        register(method, __getattr__(_on_first_use[method]))
    if method not in _registry:
        raise ValueError(
            f"unknown differentiation method {method!r}; known methods: "
            f"{', '.join(available())}"
        )
    found = _registry[method]
    return type(found)(**options) if options else found


for _name, _cls in (("forward", Forward), ("reverse", Reverse), ("numeric", Numeric),
                    ("compiled", Compiled)):
    register(_name, _cls)
# a sympy value given to dl.sin & co. imports the symbolic module, which handles it
register_type_module("sympy", "difflab.diff.symbolic")
