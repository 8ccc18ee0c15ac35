"""The import layers of docs/architecture.md, checked by import-linter.

backend → ops → tensor/autograd → diff → (distributed) → nn/optim/data →
compare/grading → cli: a module imports from its own layer and the layers
below, never from above.  The contract is in pyproject.toml; this test runs
it, and shows that a planted upward import breaks it (so the check is live).
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


def test_the_contract_lists_every_layer():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    contract, engine = config["contracts"]
    assert contract["type"] == "layers"
    assert engine["type"] == "forbidden" and engine["source_modules"] == [
        "difflab.autograd.engine"] and "difflab.tensor" in engine["forbidden_modules"]
    layers = " ".join(contract["layers"])
    for name in ("difflab.cli", "difflab.compare", "difflab.grading", "difflab.nn",
                 "difflab.diff", "difflab.tensor", "difflab.autograd", "difflab.ops",
                 "difflab.backend", "difflab.distributed"):
        assert name in layers
    # lowest last: the registry sits below everything that reads it
    assert contract["layers"][-2] == "difflab.ops"
    assert contract["layers"][0] == "difflab.cli"


def test_the_layers_are_kept():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 kept, 0 broken" in result.stdout


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

