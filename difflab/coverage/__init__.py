"""How much of PyTorch's API difflab provides: a table generated from the code itself.

``pytorch_api.json`` (next to this file) lists PyTorch's public names that
teaching programs use, grouped as PyTorch's documentation groups them, for
``torch``, ``torch.Tensor``, ``torch.nn``, ``torch.nn.functional``,
``torch.utils.data``, ``torch.optim``, ``torch.func``, ``torch.special``,
``torch.distributions``, ``torch.linalg``, ``torch.fft`` and ``torch.autograd.functional``.
:func:`table` looks each one up in difflab (``difflab``,
``difflab.Tensor``, ``difflab.nn``, ...), so the table can never claim a name
that is not there.  :func:`markdown` renders the docs page
(docs/coverage.md); a test regenerates it and fails when the page is out of
date::

    python -m difflab.coverage --write docs/coverage.md   # regenerate the page
    python -m difflab.coverage --check docs/coverage.md   # exit 1 if it is stale
    python -m difflab.coverage --dispatch   # functions that bypass engine.apply (none)
"""

from __future__ import annotations
import __future__

import argparse
import importlib
import json
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import difflab
import difflab.nn.functional as F
import difflab.utils.data
from difflab import nn, optim

REFERENCE = Path(__file__).with_name("pytorch_api.json")

#: PyTorch's namespace -> (difflab's object, how difflab spells it).
#:
#: :meta hide-value:
NAMESPACES: dict[str, tuple[Any, str]] = {
    "torch": (difflab, "difflab"),
    "Tensor": (difflab.Tensor, "difflab.Tensor"),
    "nn": (nn, "difflab.nn"),
    "nn.functional": (F, "difflab.nn.functional"),
    "utils.data": (difflab.utils.data, "difflab.utils.data"),
    "optim": (optim, "difflab.optim"),
    "func": (difflab.func, "difflab.func"),
    "autograd.functional": (difflab.autograd.functional, "difflab.autograd.functional"),
    "special": (difflab.special, "difflab.special"),
    "distributions": (difflab.distributions, "difflab.distributions"),
    "linalg": (difflab.linalg, "difflab.linalg"),
    "fft": (difflab.fft, "difflab.fft"),
}


@dataclass
class Group:
    """One group of PyTorch's docs: the names difflab has and those it lacks."""

    namespace: str
    title: str
    provided: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def load_reference(path: Path = REFERENCE) -> dict[str, dict[str, list[str]]]:
    """PyTorch's names, ``{namespace: {group: [name, ...]}}``."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return {k: v for k, v in data.items() if not k.startswith("_")}


def load_module_paths(path: Path = REFERENCE) -> list[str]:
    """PyTorch's module paths that programs import directly (``torch.nn.modules.linear``)."""
    return list(json.loads(path.read_text(encoding="utf-8"))["_module_paths"])


def load_reasons(path: Path = REFERENCE) -> dict[str, str]:
    """Why a missing name or path is missing: ``{"optim.SparseAdam": "...", ...}``."""
    return dict(json.loads(path.read_text(encoding="utf-8")).get("_reasons", {}))


def difflab_path(torch_path: str) -> str:
    """``torch.nn.modules.linear`` -> ``difflab.nn.modules.linear``."""
    return "difflab" + torch_path[len("torch"):]


def importable(module: str) -> bool:
    """Whether ``import <module>`` works (only difflab's own modules are ever imported)."""
    if not (module == "difflab" or module.startswith("difflab.")):
        raise ValueError(f"importable() only imports difflab's modules, not {module!r}")
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module == exc.name or module.startswith(exc.name + ".")):
            return False
        raise
    return True


def provides(obj: Any, dotted: str) -> bool:
    """Whether ``obj`` has the attribute path ``dotted`` (``lr_scheduler.StepLR``)."""
    for part in dotted.split("."):
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def table(reference: dict | None = None) -> list[Group]:
    """Every group of the reference, split into provided and missing names."""
    reference = load_reference() if reference is None else reference
    groups = []
    for namespace, sections in reference.items():
        obj, _ = NAMESPACES[namespace]
        for title, names in sections.items():
            group = Group(namespace, title)
            for name in names:
                (group.provided if provides(obj, name) else group.missing).append(name)
            groups.append(group)
    return groups


def public_names(obj: Any) -> list[str]:
    """The public functions, classes and values of a namespace.  Modules are left out:
    a submodule is an attribute only once something imported it, which would make the
    page depend on what ran before.  So is ``annotations`` (``from __future__ import
    annotations``): a compiler switch, not a name the module provides.  A module with
    an ``__all__`` provides only those (not what it imports for its own use)."""
    declared = getattr(obj, "__all__", None) if isinstance(obj, types.ModuleType) else None
    return sorted(name for name in dir(obj) if not name.startswith("_")
                  and (declared is None or name in declared)
                  and not isinstance(getattr(obj, name, None), (types.ModuleType,
                                                                 __future__._Feature)))


def extras(reference: dict | None = None) -> dict[str, list[str]]:
    """Per namespace, the names difflab provides beyond the reference list."""
    reference = load_reference() if reference is None else reference
    out = {}
    for namespace, sections in reference.items():
        listed = {name.split(".")[0] for names in sections.values() for name in names}
        out[namespace] = [n for n in public_names(NAMESPACES[namespace][0]) if n not in listed]
    return out


def _names(names: list[str], reasons: dict[str, str] | None = None, namespace: str = "") -> str:
    """Names in backticks; a missing one with a known reason says it in brackets."""
    if not names:
        return "–"
    reasons = reasons or {}
    return ", ".join(f"`{n}`" + (f" ({reasons[f'{namespace}.{n}']})"
                                 if f"{namespace}.{n}" in reasons else "") for n in names)


def markdown(reference: dict | None = None) -> str:
    """The coverage page (Markdown), generated from the code."""
    reference = load_reference() if reference is None else reference
    groups = table(reference)
    lines = [
        "# PyTorch coverage",
        "",
        "Which of PyTorch's names difflab provides, so that `import difflab as torch` runs a",
        "program.  The page is generated from the code (`python -m difflab.coverage --write",
        "docs/coverage.md`) against the list of PyTorch names in",
        "`difflab/coverage/pytorch_api.json`, grouped as PyTorch's documentation groups",
        "them; a test fails when it is out of date.  A name counts as provided when difflab",
        "has it under the same name; its behaviour is tested where it is defined.  A missing",
        "name says why in brackets where the reason is known.",
        "",
        "| namespace | provided | of PyTorch's listed |",
        "| --- | ---: | ---: |",
    ]
    for namespace in reference:
        mine = [g for g in groups if g.namespace == namespace]
        have = sum(len(g.provided) for g in mine)
        total = have + sum(len(g.missing) for g in mine)
        lines.append(f"| `{namespace}` | {have} | {total} |")
    paths = load_module_paths()
    present = [p for p in paths if importable(difflab_path(p))]
    lines += ["", "## Module paths", "",
              "Modules that programs import by PyTorch's path (`import torch.nn.modules.linear`,",
              "`from torch.utils.data.sampler import RandomSampler`): "
              f"{len(present)} of {len(paths)} import as `difflab...`.", "",
              "| PyTorch's path | difflab |", "| --- | --- |"]
    reasons = load_reasons()
    for p in paths:
        why = f" ({reasons[p]})" if p in reasons else ""
        lines.append(f"| `{p}` | " + (f"`{difflab_path(p)}`" if p in present else
                                      f"missing{why}") + " |")
    beyond = extras(reference)
    for namespace in reference:
        spelled = NAMESPACES[namespace][1]
        lines += ["", f"## `{namespace}` (difflab: `{spelled}`)", "",
                  "| group | provided | missing |", "| --- | --- | --- |"]
        for g in (g for g in groups if g.namespace == namespace):
            lines.append(f"| {g.title} ({len(g.provided)}/{len(g.provided) + len(g.missing)}) "
                         f"| {_names(g.provided)} | {_names(g.missing, reasons, namespace)} |")
        lines += ["", f"difflab's names in `{spelled}` beyond PyTorch's list: "
                  f"{_names(beyond[namespace])}."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m difflab.coverage",
                                     description="The PyTorch coverage table of difflab.")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", metavar="FILE", help="write the Markdown page to FILE")
    action.add_argument("--check", metavar="FILE",
                        help="exit with status 1 if FILE differs from the generated page")
    action.add_argument("--dispatch", action="store_true",
                        help="list the public functions that do not go through engine.apply "
                             "(exit with status 1 if any)")
    args = parser.parse_args(argv)
    if args.dispatch:
        from difflab.coverage.dispatch import report

        text, status = report()
        sys.stdout.write(text)
        return status
    page = markdown()
    if args.write:
        Path(args.write).write_text(page, encoding="utf-8")
    elif args.check:
        if Path(args.check).read_text(encoding="utf-8") != page:
            print(f"{args.check} is out of date: run python -m difflab.coverage --write "
                  f"{args.check}", file=sys.stderr)
            return 1
    else:
        sys.stdout.write(page)
    return 0
