"""The import layers of docs/architecture.md, checked by import-linter.

backend → ops → tensor/autograd → jit → diff → (distributed) → nn/optim/data →
export → testing → compare/grading/coverage → cli: a module imports from its
own layer and the layers below, never from above; every module of difflab is
in a layer (the contract is exhaustive); inside the tensor layer, the jit and
the differentiators the modules are in order too, and no package has a cycle
among its modules.  The contracts are in pyproject.toml; these tests run them,
and show that a planted upward import or cycle breaks them (so CI would fail).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

pytest.importorskip("importlinter", reason="import-linter comes with the dev extra")

ROOT = Path(__file__).resolve().parents[1]


def lint_imports(project: Path) -> subprocess.CompletedProcess:
    """Run lint-imports on ``project`` (a folder with pyproject.toml and difflab/)."""
    code = ("import sys; from importlinter.cli import lint_imports; "
            "sys.exit(lint_imports(no_cache=True, no_logo=True))")
    return subprocess.run(
        [sys.executable, "-c", code], cwd=project, capture_output=True, text=True,
        timeout=300, env={"PATH": "", "PYTHONPATH": str(project), "HOME": str(project)},
    )


def _contracts() -> dict:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    return {c["name"]: c for c in config["contracts"]}


def test_the_contract_lists_every_layer():
    contracts = _contracts()
    contract = contracts["difflab's layers"]
    assert contract["type"] == "layers" and contract["containers"] == ["difflab"]
    assert contract["exhaustive"] is True
    engine = contracts["the engine does not import the tensor (difflab.tensor registers its type)"]
    assert engine["type"] == "forbidden" and engine["source_modules"] == [
        "difflab.autograd.engine"] and "difflab.tensor" in engine["forbidden_modules"]
    layers = " ".join(contract["layers"])
    for name in ("cli", "compare", "grading", "testing", "nn", "diff", "tensor", "autograd",
                 "ops", "backend", "distributed", "jit"):
        assert name in layers.replace("|", " ").replace(":", " ").split()
    # lowest last: the registry sits below everything that reads it
    assert contract["layers"][-2] == "ops"
    assert contract["layers"][0] == "cli"
    kinds = [c["type"] for c in contracts.values()]
    assert kinds.count("acyclic_siblings") == 1 and kinds.count("layers") == 4


def test_every_module_is_in_a_layer():
    """Each top-level module of difflab is named in the layers (exhaustive), so a new one
    must be placed; the check below sees one left out."""
    tails = set()
    for layer in _contracts()["difflab's layers"]["layers"]:
        tails |= {t.strip().split(".")[0] for t in layer.replace("|", ":").split(":")}
    found = {p.stem if p.suffix == ".py" else p.name for p in (ROOT / "difflab").iterdir()
             if (p.suffix == ".py" or (p / "__init__.py").exists()) and p.stem != "__init__"}
    assert found <= tails, found - tails


def test_the_layers_are_kept():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{len(_contracts())} kept, 0 broken" in result.stdout


def test_an_upward_import_breaks_the_contract(tmp_path):
    shutil.copytree(ROOT / "difflab", tmp_path / "difflab",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    registry = tmp_path / "difflab" / "ops" / "registry.py"
    registry.write_text(registry.read_text() + "\nfrom difflab import cli  # noqa\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    assert "difflab.ops is not allowed to import difflab.cli" in result.stdout


def test_the_engine_importing_the_tensor_breaks_its_contract(tmp_path):
    """The engine reads the tensor type it is given (register_tensor_type): importing
    difflab.tensor again, even inside a function, is refused."""
    shutil.copytree(ROOT / "difflab", tmp_path / "difflab",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    engine = tmp_path / "difflab" / "autograd" / "engine.py"
    engine.write_text(engine.read_text() + "\n\ndef _late():\n    from difflab.tensor "
                      "import Tensor  # noqa\n    return Tensor\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    assert "difflab.autograd.engine is not allowed to import difflab.tensor" in result.stdout


def _planted(tmp_path: Path, module: str, text: str) -> subprocess.CompletedProcess:
    """lint-imports on a copy of difflab in which ``module`` (a path under difflab/) ends
    with ``text``."""
    shutil.copytree(ROOT / "difflab", tmp_path / "difflab",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    path = tmp_path / "difflab" / module
    if path.exists():
        text = path.read_text() + text
    path.write_text(text)
    return lint_imports(tmp_path)


def test_a_cycle_in_the_tensor_layer_breaks_its_contract(tmp_path):
    """Tensor's methods do not import the functions (the functions attach themselves to
    Tensor): a late import of difflab.functions in tensor.py closes a cycle and is refused."""
    result = _planted(tmp_path, "tensor.py", "\n\ndef _late():\n    from difflab import "
                      "functions  # noqa\n    return functions\n")
    assert result.returncode != 0
    assert "the tensor layer, in order (no cycle inside it) BROKEN" in result.stdout
    assert "difflab.tensor is not allowed to import difflab.functions" in result.stdout


def test_a_cycle_in_the_jit_breaks_its_contract(tmp_path):
    result = _planted(tmp_path, "jit/ops.py", "\n\ndef _late():\n    from difflab.jit "
                      "import tracing  # noqa\n    return tracing\n")
    assert result.returncode != 0
    assert "the jit's modules, in order (no cycle inside it) BROKEN" in result.stdout
    assert "No cycles are allowed in difflab.jit" in result.stdout


def test_a_cycle_in_any_package_breaks_the_acyclic_contract(tmp_path):
    """nn.functional gathers its five modules; they import functional_core, never it."""
    result = _planted(tmp_path, "nn/functional_core.py", "\n\ndef _late():\n    from "
                      "difflab.nn import functional  # noqa\n    return functional\n")
    assert result.returncode != 0
    assert "No cycles are allowed in difflab.nn" in result.stdout


def test_a_module_in_no_layer_breaks_the_exhaustive_contract(tmp_path):
    result = _planted(tmp_path, "stray.py", '"""A module nobody placed."""\n')
    assert result.returncode != 0
    assert "difflab.stray" in result.stdout
