"""What a complete docstring is, and how its examples run: one mechanism for every test.

A public name's docstring is complete (numpydoc) when it has

* a one-line **summary** (the first line, then a blank line or nothing);
* a **Parameters** section, when the callable takes any parameters (a class: its
  constructor's);
* a **Returns** (or **Yields**) section, for a function or method (not a class or a
  property);
* an **Examples** section with ``>>>`` lines, whose doctest passes.

A Tensor method that only forwards to a function may instead say so, ``See
:func:`difflab.name```, when that function's docstring is complete: the math is
written once, where the function is.

``tests/docs/test_docstrings.py`` applies these rules to every public namespace;
``tests/compat/test_breadth_docstrings.py`` to the PyTorch-breadth modules.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import re
import sys
import types
from typing import Any

#: The numpydoc section headers, as ``inspect.getdoc`` leaves them.
SECTION = {name: f"{name}\n{'-' * len(name)}"
           for name in ("Parameters", "Returns", "Yields", "Raises", "See Also", "Notes",
                        "Examples")}

#: ``See :func:`difflab.x``` (or ``See ``difflab.x````): a method that forwards to x.
FORWARDS_TO = re.compile(r"See (?::\w+:`~?|``)(difflab(?:\.\w+)+)")

OPTIONS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS

#: The public namespaces (and ``difflab.Tensor``'s methods): checked by
#: ``tests/docs/test_docstrings.py``, each listed on a page of the API reference.
NAMESPACES = [
    "difflab", "difflab.nn", "difflab.nn.functional", "difflab.optim",
    "difflab.optim.lr_scheduler", "difflab.utils.data", "difflab.autograd",
    "difflab.autograd.functional", "difflab.autograd.forward_ad", "difflab.autograd.graph",
    "difflab.func", "difflab.special", "difflab.fft",
    "difflab.jit", "difflab.export", "difflab.onnx", "difflab.distributed",
    "difflab.compare", "difflab.grading", "difflab.Tensor",
    "difflab.linalg", "difflab.distributions", "difflab.amp",
    "difflab.utils.checkpoint", "difflab.testing", "difflab.nn.utils",
    "difflab.nn.utils.parametrize", "difflab.nn.utils.parametrizations", "difflab.nn.utils.prune",
    "difflab.nn.utils.fusion",
    "difflab.optim.swa_utils", "difflab.profiler", "difflab.autograd.profiler",
    "difflab.utils.benchmark", "difflab.compiler", "difflab._dynamo",
]


def docstring(obj: Any) -> str:
    """The cleaned docstring of ``obj`` (a property's from its getter), or ``""``."""
    if isinstance(obj, property):
        obj = obj.fget
    return inspect.getdoc(obj) or ""


def takes_parameters(obj: Any) -> bool:
    """Whether calling ``obj`` takes any argument (``self``/``cls`` left out)."""
    if isinstance(obj, property) or not callable(obj):
        return False
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):  # (a builtin without a signature)
        return False
    params = [p for p in signature.parameters.values() if p.name not in ("self", "cls")]
    return bool(params)


def is_function(obj: Any) -> bool:
    """Functions and methods need a Returns section; classes and properties do not."""
    return callable(obj) and not isinstance(obj, (type, property))


def resolve(dotted: str) -> Any:
    """``difflab.nn.functional.relu`` -> the object (``None`` if there is none)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            obj = getattr(obj, part, None)
        return obj
    return None


def problems(obj: Any, *, method: bool = False) -> list[str]:
    """What the docstring of ``obj`` lacks: a list of ``summary``, ``parameters``,
    ``returns``, ``examples`` (empty when it is complete).  ``method=True``: a Tensor
    method, which may forward to a complete function instead (``See :func:`...```)."""
    doc = docstring(obj)
    lines = doc.splitlines()
    missing = []
    if not lines or len(lines[0].strip()) < 8 or (len(lines) > 1 and lines[1].strip()):
        missing.append("summary")
    target = FORWARDS_TO.search(doc) if method else None
    if target is not None:
        forwarded = resolve(target.group(1))
        if forwarded is None or forwarded is obj or problems(forwarded):
            missing.append(f"a complete {target.group(1)}")
        return missing
    if takes_parameters(obj) and SECTION["Parameters"] not in doc:
        missing.append("parameters")
    if is_function(obj) and SECTION["Returns"] not in doc and SECTION["Yields"] not in doc:
        missing.append("returns")
    if SECTION["Examples"] not in doc or ">>>" not in doc:
        missing.append("examples")
    return missing


def run_examples(obj: Any, name: str) -> doctest.TestResults:
    """Run the examples of ``obj``'s own docstring (not its members'), as doctest would:
    in a copy of the namespace of the module that defines ``obj``."""
    doc = docstring(obj)
    target = obj.fget if isinstance(obj, property) else obj
    module = sys.modules.get(getattr(target, "__module__", None) or "")
    globs = dict(vars(module)) if module is not None else {}
    test = doctest.DocTestParser().get_doctest(doc, globs, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    runner.run(test)
    return runner.summarize(verbose=False)


def run_module_examples(module: str) -> doctest.TestResults:
    """Run every example in ``module`` (its docstrings and its members'), in its namespace."""
    mod = importlib.import_module(module)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    tests = [t for t in finder.find(mod, module) if t.examples]
    assert tests, f"{module} has no examples"
    for test in tests:
        runner.run(test)
    return runner.summarize(verbose=False)


def public_names(module: str) -> list[str]:
    """The public callables of ``module``: the difflab classes and functions its ``__all__``
    names, and every other name not starting with ``_`` that it defines (a package: one
    of its modules; ``nn.functional``: the ``nn.functional_*`` modules it gathers); not
    submodules, not what it merely imports for its own use."""
    mod = importlib.import_module(module)
    declared = set(getattr(mod, "__all__", ()))
    public = []
    for name in {*declared, *(n for n in dir(mod) if not n.startswith("_"))}:
        obj = getattr(mod, name, None)
        if isinstance(obj, types.ModuleType) or not callable(obj):
            continue
        home = getattr(obj, "__module__", None) or ""
        if not home.startswith("difflab"):
            continue
        if name in declared or home.startswith(module):  # (nn.functional_layers too)
            public.append(name)
    return sorted(public)


def names(namespace: str) -> list[tuple[str, Any, bool]]:
    """``(name, object, is a Tensor method)`` for each public name of ``namespace``
    (a property of Tensor is given as the property, whose getter has the docstring);
    only those it had when the tests were collected (:data:`AT_COLLECTION`)."""
    known = AT_COLLECTION.get(namespace)
    return [entry for entry in _names(namespace) if known is None or entry[0] in known]


def _names(namespace: str) -> list[tuple[str, Any, bool]]:
    if namespace == "difflab.Tensor":
        import difflab as dl

        found = []
        for name in tensor_methods():
            static = inspect.getattr_static(dl.Tensor, name)
            obj = static if isinstance(static, property) else getattr(dl.Tensor, name)
            found.append((name, obj, True))
        return found
    module = resolve(namespace)
    return [(name, getattr(module, name), False) for name in public_names(namespace)]


def tensor_methods() -> list[str]:
    """The public methods and properties of ``difflab.Tensor``."""
    import difflab as dl

    return sorted(n for n in dir(dl.Tensor) if not n.startswith("_"))


#: Each namespace's names when this module is imported (pytest imports it while collecting,
#: before any test runs): a test that registers a primitive of its own (``dl.cube``, with
#: its Tensor method) adds names later, which are not the package's.
AT_COLLECTION: dict[str, set[str]] = {}
AT_COLLECTION.update({ns: {name for name, _, _ in _names(ns)} for ns in NAMESPACES})
