"""Run the Python examples of the documentation pages, so the docs never show broken code.

The ```python blocks of each page run in order, in one namespace per page (a page's later
examples may use names from its earlier ones), in a temporary working directory.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(p for p in (ROOT / "docs").rglob("*.md")
               if not {"_build", "notebooks"} & set(p.relative_to(ROOT / "docs").parts[:-1]))
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT / "docs")) for p in PAGES])
def test_page_examples_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = BLOCK.findall(page.read_text(encoding="utf-8"))
    if not blocks:
        pytest.skip("no Python examples on this page")
    pytest.importorskip("matplotlib").use("Agg")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs_example__"}
    for i, block in enumerate(blocks):
        code = compile(block, f"{page.name}, example {i + 1}", "exec")
        exec(code, namespace)  # noqa: S102 (the docs' own examples)
