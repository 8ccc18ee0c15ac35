"""What the README and the guides say is what the code does (issue 31, "every claim true")."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import difflab as dl

ROOT = Path(__file__).resolve().parents[2]


def test_the_numeric_guide_counts_evaluations_as_cost_does():
    """The table of evaluations in docs/guides/numeric.md is what ``cost.evaluations`` says,
    f(x) included: for derivative (n = 1) and for a gradient of n = 4 inputs."""
    page = (ROOT / "docs" / "guides" / "numeric.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \| \$([^$]+)\$ \| (\d+) \|$", page, re.M)
    assert {scheme for scheme, _, _ in rows} == {"forward", "central", "complex"}, rows
    for scheme, formula, for_one in rows:
        count = eval(formula.replace("2n", "2*n"), {"n": 4})  # noqa: S307 (the page's own)
        _, cost = dl.derivative(dl.exp, method="numeric", scheme=scheme)(1.0, return_cost=True)
        assert cost.evaluations == int(for_one), (scheme, cost.evaluations)
        _, cost = dl.grad(lambda v: dl.exp(v).sum(), method="numeric", scheme=scheme)(
            np.ones(4), return_cost=True)
        assert cost.evaluations == count, (scheme, formula, cost.evaluations)
    assert "reports 2: that one and $f(x)$" in page  # the complex step's sentence


def test_the_readme_names_what_grad_returns_a_gradient():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    names = re.findall(r"^(\w+), cost = dl\.grad\(", readme, re.M)
    assert names and all(n in ("g", "grad", "gradient") for n in names), names


def test_an_install_line_gives_what_the_notebooks_page_runs():
    """Every ``jupyter <command>`` the notebooks page and the README show comes from the
    ``notebooks`` extra, which ``dev`` includes, and both pages install that extra."""
    tomllib = pytest.importorskip("tomllib")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    provides = {"lab": "jupyterlab", "nbconvert": "nbconvert", "notebook": "notebook"}

    def package(requirement: str) -> str:
        return re.split(r"[<>=!~; \[]", requirement, maxsplit=1)[0].lower()

    notebooks = {package(r) for r in extras["notebooks"]}
    assert notebooks <= {package(r) for r in extras["dev"]}
    for page in (ROOT / "docs" / "notebooks.md", ROOT / "README.md"):
        text = page.read_text(encoding="utf-8")
        commands = set(re.findall(r"\bjupyter (\w+)", text))
        assert commands, f"{page.name} shows no jupyter command"
        for command in commands:
            assert provides.get(command) in notebooks, (page.name, command)
        assert 'pip install -e ".[notebooks]"' in text, page.name
