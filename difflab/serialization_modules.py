"""Whole modules in checkpoints: ``save(model)`` writes a module as data, ``load`` rebuilds it.

:mod:`difflab.serialization` writes checkpoints with the one JSON tree codec
(:mod:`difflab.jsontree`); this module adds the codec's tags for what a whole
module holds besides tensors and plain data (issue 27):

* a module as ``{"__module__": "difflab.nn.modules.layers.Linear", "id": 3,
  "state": {"__dict__": [[attribute, value], ...]}}``: its class's name and its
  attributes (the registries of parameters, buffers and children included),
  never code (its forward hooks are left out, and a file that sets them is refused);
* a module written before (shared) as ``{"__ref__": 3}``, so it stays shared;
* a dtype as ``{"__dtype__": "float64"}``;
* a function or class an attribute holds (a Transformer's activation) as
  ``{"__global__": "difflab.nn.functional.gelu"}``.

Loading looks every name up in a table of allowed classes and functions
(:func:`allowed_globals`: difflab's module classes, the functions of
``difflab.nn.functional``, and what the user allows with
:func:`add_safe_globals` or :class:`safe_globals`).  Nothing is imported and
nothing is called but ``object.__new__``; any other name is refused with an
error naming it and saying how to allow it.  The attributes are checked
before they are set: a parameter must be a Parameter, a child a Module, and
no attribute may replace a method or a dunder.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from difflab import dtypes
from difflab.jsontree import Reader, Tag, Writer
from difflab.tensor import Tensor

_SAFE_GLOBALS: list = []
_REGISTRIES = ("_parameters", "_buffers", "_modules")
#: The writer's memo key set when a module, dtype or function is written (format version 2).
OBJECTS = "objects"


def _qualified_name(obj: Any) -> str | None:
    """``module.QualName`` of a class or function, or None for lambdas and local functions."""
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
        return None
    return f"{module}.{qualname}"


def _check_safe(entries: Any) -> list:
    if not isinstance(entries, (list, tuple)):
        raise TypeError(f"safe globals must be a list of classes or functions, got "
                        f"{type(entries).__name__}")
    checked = []
    for entry in entries:
        obj, name = entry if isinstance(entry, tuple) and len(entry) == 2 else (entry, None)
        if isinstance(obj, str) or not (isinstance(obj, type) or callable(obj)):
            raise TypeError(f"safe globals must be the classes or functions themselves (e.g. "
                            f"add_safe_globals([MyNet])), not {obj!r:.60}")
        name = name if isinstance(name, str) else _qualified_name(obj)
        if name is None:
            raise TypeError(f"{obj!r:.60} has no importable name (a lambda or a local "
                            "definition): it could not be found by name when loading")
        checked.append((obj, name))
    return checked


def add_safe_globals(safe_globals: list) -> None:
    """Allow :func:`~difflab.serialization.load` to rebuild these classes (and refer to
    these functions).

    A file names the classes of the modules it holds; ``load`` rebuilds
    difflab's own modules, and any other class only once it is allowed here.
    Allowing a class means trusting its code with the file's data: allow your
    own model classes, not classes a file asks for.

    Parameters
    ----------
    safe_globals : list
        Classes or functions (or ``(object, "module.Name")`` pairs, to accept a
        name the object had when the file was written).

    Examples
    --------
    >>> import io, difflab as dl
    >>> class TinyNet(dl.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = dl.nn.Linear(2, 1)
    ...     def forward(self, x):
    ...         return self.fc(x)
    >>> buffer = io.BytesIO()
    >>> dl.save(TinyNet(), buffer)
    >>> _ = buffer.seek(0)
    >>> dl.serialization.add_safe_globals([TinyNet])
    >>> type(dl.load(buffer)).__name__
    'TinyNet'
    >>> dl.serialization.clear_safe_globals()
    """
    _SAFE_GLOBALS.extend(_check_safe(safe_globals))


def get_safe_globals() -> list:
    """The classes and functions :func:`add_safe_globals` allowed, in order.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.serialization.get_safe_globals()
    []
    """
    return [obj for obj, _ in _SAFE_GLOBALS]


def clear_safe_globals() -> None:
    """Forget every class and function :func:`add_safe_globals` allowed.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.serialization.clear_safe_globals()
    >>> dl.serialization.get_safe_globals()
    []
    """
    _SAFE_GLOBALS.clear()


class safe_globals:  # noqa: N801  (PyTorch's name)
    """Allow classes and functions inside a ``with`` block only (see :func:`add_safe_globals`).

    Examples
    --------
    >>> import io, difflab as dl
    >>> class Doubler(dl.nn.Module):
    ...     def forward(self, x):
    ...         return 2 * x
    >>> buffer = io.BytesIO()
    >>> dl.save(Doubler(), buffer)
    >>> _ = buffer.seek(0)
    >>> with dl.serialization.safe_globals([Doubler]):
    ...     model = dl.load(buffer)
    >>> model(dl.tensor([1.0, 2.0]))
    tensor([2., 4.])
    """

    def __init__(self, safe_globals: list) -> None:
        self.entries = _check_safe(safe_globals)

    def __enter__(self) -> None:
        self._before = len(_SAFE_GLOBALS)
        _SAFE_GLOBALS.extend(self.entries)

    def __exit__(self, *exc: object) -> None:
        del _SAFE_GLOBALS[self._before:]


def _difflab_module_classes() -> list:
    from difflab.nn.modules.module import Module

    found, todo = [Module], [Module]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in found:
                found.append(sub)
                todo.append(sub)
    return [c for c in found if c.__module__.split(".")[0] == "difflab"]


def allowed_globals() -> dict[str, Any]:
    """Name -> object for everything :func:`~difflab.serialization.load` may rebuild or refer to.

    difflab's module classes, the functions of :mod:`difflab.nn.functional`
    (a Transformer layer keeps its activation function; each by the name save
    writes, its module's, and by its name under ``F``), and the user's safe
    globals.  Nothing is imported to build this table.

    Examples
    --------
    >>> import difflab as dl
    >>> table = dl.serialization.allowed_globals()
    >>> table["difflab.nn.modules.layers.Linear"] is dl.nn.Linear
    True
    >>> table["difflab.nn.functional.silu"] is dl.nn.functional.silu
    True
    >>> "builtins.eval" in table
    False
    """
    from difflab.nn import functional

    table: dict[str, Any] = {}
    for cls in _difflab_module_classes():
        table[f"{cls.__module__}.{cls.__qualname__}"] = cls
    for name in dir(functional):
        obj = getattr(functional, name)
        home = getattr(obj, "__module__", None)
        if name.startswith("_") or isinstance(obj, type) or not callable(obj) or \
                not isinstance(home, str) or not home.startswith(functional.__name__):
            continue  # (F's own functions only, wherever in difflab.nn.functional* they live)
        table[_qualified_name(obj) or f"{home}.{name}"] = obj  # the name save writes
        table[f"{functional.__name__}.{name}"] = obj  # and its name under F
    for obj, name in _SAFE_GLOBALS:
        table[name] = obj
    return table


def _resolve(name: Any, r: Reader, what: str) -> Any:
    """The allowed object ``name`` names (the table built once per load)."""
    if not isinstance(name, str):
        raise r.fail(f"a {what} name must be a string, got {name!r:.60}")
    if "allowed" not in r.memo:
        r.memo["allowed"] = allowed_globals()
    found = r.memo["allowed"].get(name)
    if found is None:
        short = name.rsplit(".", 1)[-1]
        raise r.fail(
            f"the file asks for {name}, which is not an allowed {what}: load rebuilds "
            f"difflab's modules and the classes you allow. If you trust this class, allow it: "
            f"difflab.serialization.add_safe_globals([{short}]) or "
            f"`with difflab.serialization.safe_globals([{short}]): difflab.load(...)`"
        )
    return found


# ------------------------------------------------------------------------- modules


def _write_module(module: Any, w: Writer) -> dict:
    from difflab.nn.modules.module import HOOK_REGISTRIES
    from difflab.nn.utils.parametrize import is_parametrized

    w.memo[OBJECTS] = True
    seen = w.memo.setdefault("modules", {})  # id -> (its number, the module: kept alive)
    if id(module) in seen:
        return {"__ref__": seen[id(module)][0]}
    cls = type(module)
    name = _qualified_name(cls)
    where = cls.__name__ if w.where in ("", "object") else w.where
    if name is None:
        raise TypeError(f"cannot save {where}: its class {cls.__qualname__} is defined inside "
                        f"a function; define it at module level so it can be found by name")
    if is_parametrized(module):  # (its class is made at run time, as PyTorch's)
        raise RuntimeError(f"cannot save {where}: serialization of parametrized modules is only "
                           "supported through state_dict(); save module.state_dict() and load "
                           "it into a module parametrized the same way")
    ref = len(seen)
    seen[id(module)] = (ref, module)

    def registry(entries: dict, w: Writer) -> dict:  # (errors name model.body.0.weight)
        return {"__dict__": [[k, w.write(v, f"{where}.{k}")] for k, v in entries.items()]}

    def state(attributes: dict, w: Writer) -> dict:  # (hooks are code: never written)
        return {"__dict__": [[key, w.inside(value, registry) if key in _REGISTRIES
                              else w.write(value, f"{where}.{key}")]
                             for key, value in attributes.items()
                             if key not in HOOK_REGISTRIES and key != "_compiled_call"]}

    w.memo["in_module"] = w.memo.get("in_module", 0) + 1  # (functions may be written)
    try:  # (the state and the registries are entries one level down each, as read)
        return {"__module__": name, "id": ref, "state": w.inside(module.__dict__, state)}
    finally:
        w.memo["in_module"] -= 1


def _read_module(entry: dict, r: Reader, depth: int) -> Any:
    from difflab.nn.modules.module import Module

    cls = _resolve(entry["__module__"], r, "module class")
    if not (isinstance(cls, type) and issubclass(cls, Module)):
        raise r.fail(f"{entry['__module__']} is not an nn.Module class")
    modules = r.memo.setdefault("modules", {})
    ref = entry.get("id")
    if type(ref) is not int or ref in modules:
        raise r.fail(f"a module needs a new integer id, got {ref!r:.40}")
    module = cls.__new__(cls)
    modules[ref] = module  # (before its state: a child may refer back to it)
    state = r.read(entry.get("state"), depth + 1)
    module.__dict__.update(_checked_state(cls, state, r))
    return module


def _checked_state(cls: type, state: Any, r: Reader) -> dict:
    """A module's attributes as read, after checking each registry and name."""
    from difflab.nn.modules.module import HOOK_REGISTRIES, Module
    from difflab.nn.parameter import Parameter

    if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
        raise r.fail(f"the state of a {cls.__name__} must be a dict of attribute names")
    missing = {"training", "_non_persistent", *_REGISTRIES} - set(state)
    if missing:
        raise r.fail(f"the state of a {cls.__name__} lacks {sorted(missing)}")
    hooks = [key for key in HOOK_REGISTRIES if key in state]
    if hooks:
        raise r.fail(f"the file sets {cls.__name__}.{hooks[0]}: hooks are code the module runs "
                     f"on every call, which a checkpoint never holds (register them after load)")
    if not isinstance(state["training"], bool):
        raise r.fail(f"{cls.__name__}.training must be true or false")
    kinds = {"_parameters": (Parameter, "a Parameter"), "_buffers": (Tensor, "a Tensor"),
             "_modules": (Module, "a Module")}
    for registry, (kind, words) in kinds.items():
        entries = state[registry]
        if not isinstance(entries, dict) or not all(isinstance(k, str) for k in entries):
            raise r.fail(f"{cls.__name__}.{registry} must map names to values")
        for key, value in entries.items():
            if value is not None and not isinstance(value, kind):
                raise r.fail(f"{cls.__name__}.{registry}[{key!r}] must be {words} or None, "
                             f"got {type(value).__name__}")
        state[registry] = OrderedDict(entries)
    names = state["_non_persistent"]
    if not isinstance(names, set) or not all(isinstance(k, str) for k in names):
        raise r.fail(f"{cls.__name__}._non_persistent must be a set of names")
    for key in state:
        attribute = getattr(cls, key, None)
        if key.startswith("__") or callable(attribute) or isinstance(attribute, property):
            raise r.fail(f"the file sets {cls.__name__}.{key}, which would replace a method "
                         f"or a special attribute of the class")
    return state


def _read_module_ref(entry: dict, r: Reader, depth: int) -> Any:
    ref, modules = entry["__ref__"], r.memo.get("modules", {})
    if type(ref) is not int or ref not in modules:
        raise r.fail(f"a reference to module {ref!r:.40} that the file has not defined before")
    return modules[ref]


# ------------------------------------------------------------- dtypes and functions


def _write_dtype(dtype: Any, w: Writer) -> dict:
    w.memo[OBJECTS] = True
    return {"__dtype__": dtype.dtype.name}


def _read_dtype(entry: dict, r: Reader, depth: int) -> Any:
    name = entry["__dtype__"]
    try:
        found = dtypes.as_dtype(name) if isinstance(name, str) else None
    except TypeError:
        found = None
    if found is None or found.kind not in "biufc":
        raise r.fail(f"not a dtype difflab has: {name!r:.40}")
    return found


def _write_global(obj: Any, w: Writer) -> dict:
    if not w.memo.get("in_module"):  # (only a module's attributes may hold functions)
        raise w.codec.refuse(obj, w.where)
    name = _qualified_name(obj)
    if name is None:
        raise TypeError(f"cannot save {w.where}: {obj!r} has no importable name (a lambda or "
                        f"a local function); use a function defined at module level, e.g. "
                        f"difflab.nn.functional.relu")
    w.memo[OBJECTS] = True
    return {"__global__": name}


def module_tags() -> list[Tag]:
    """The checkpoint codec's tags for modules, module references and dtypes.

    They go before the generic tags (a module is no plain value); :func:`global_tag`
    goes last, as it writes any callable no other tag took.
    """
    from difflab.nn.modules.module import Module

    return [
        Tag("__module__", lambda v: isinstance(v, Module), _write_module, _read_module,
            frozenset({"id", "state"})),
        Tag("__ref__", lambda v: False, _write_module, _read_module_ref),  # (written above)
        Tag("__dtype__", lambda v: isinstance(v, dtypes.dtype), _write_dtype, _read_dtype),
    ]


def global_tag() -> Tag:
    """The tag of a function or class held by a module's attribute (written by its name)."""
    return Tag("__global__", lambda v: isinstance(v, type) or callable(v), _write_global,
               lambda e, r, d: _resolve(e["__global__"], r, "function or class"))
