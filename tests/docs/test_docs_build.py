"""Build the documentation site with Sphinx and fail on any warning.

The build is nitpicky (``-n``: every cross-reference must resolve, which is the
check of internal links; no network is needed) and treats warnings as errors
(``-W --keep-going``: all of them are reported, then the build fails).  The
notebooks are rendered without running them (``nb_execution_mode=off``): the
notebook tests in ``tests/notebooks`` execute every one of them already.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docs.conftest import DocsBuild

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

pytest.importorskip("sphinx", reason="the docs need the 'docs' extra: pip install -e '.[docs]'")
pytest.importorskip("myst_nb", reason="the docs need the 'docs' extra: pip install -e '.[docs]'")
pytest.importorskip("numpydoc", reason="the docs need the 'docs' extra: pip install -e '.[docs]'")
pytest.importorskip("furo", reason="the docs need the 'docs' extra: pip install -e '.[docs]'")

pytestmark = pytest.mark.slow


def _built(docs_build: DocsBuild) -> Path:
    """The build's folder (html/, doctrees/); the test is skipped if the build failed."""
    if not docs_build.ok:
        pytest.skip("the build failed; see test_docs_build_without_warnings")
    return docs_build.out


def test_docs_build_without_warnings(docs_build: DocsBuild) -> None:
    messages = "\n".join(line for line in docs_build.output.splitlines() if line.strip())
    assert docs_build.ok, f"sphinx-build failed (warnings are errors):\n{messages}"
    assert "WARNING" not in messages and "ERROR" not in messages, messages


def test_every_page_and_notebook_is_rendered(
        docs_build: DocsBuild) -> None:
    out = _built(docs_build)
    html = out / "html"
    for page in ["index", "getting-started", "cli", "notebooks", "api/index",
                 "guides/forward", "guides/reverse", "guides/symbolic", "guides/numeric",
                 "guides/tensors-nn-optim"]:
        assert (html / f"{page}.html").is_file(), f"{page}.html was not built"
    notebooks = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks, "no notebooks found in notebooks/"
    for name in notebooks:
        assert (html / "notebooks" / f"{name}.html").is_file(), f"notebook {name} not rendered"


def test_no_api_page_shows_the_build_machines_paths(docs_build: DocsBuild) -> None:
    """Defaults and module values are shown as written in the source, never as the
    absolute paths of the machine that built the site."""
    out = _built(docs_build)
    leaked = [page.name for page in sorted((out / "html" / "api").rglob("*.html"))
              if str(ROOT) in page.read_text(encoding="utf-8")]
    assert not leaked, f"pages showing {ROOT}: {leaked}"


def test_api_reference_covers_the_public_packages(
        docs_build: DocsBuild) -> None:
    out = _built(docs_build)
    generated = out / "html" / "api" / "generated"
    for package in ["difflab", "difflab.autograd", "difflab.diff", "difflab.nn",
                    "difflab.optim", "difflab.data", "difflab.compare", "difflab.grading"]:
        assert (generated / f"{package}.html").is_file(), f"no API page for {package}"


def test_mathematics_shows_offline(docs_build: DocsBuild) -> None:
    """Pages with formulas load MathJax from the site itself, never from a network."""
    out = _built(docs_build)
    pytest.importorskip("sphinx-mathjax-offline",
                        reason="bundling MathJax needs the docs extra: pip install -e '.[docs]'")
    html = out / "html"
    page = (html / "guides" / "numeric.html").read_text(encoding="utf-8")
    assert "\\epsilon" in page or "\\(" in page  # the page does hold mathematics
    scripts = re.findall(r'<script[^>]*src="([^"]*)"', page)
    mathjax = [s for s in scripts if "mathjax" in s.lower() or "tex-" in s]
    assert mathjax, f"no MathJax script on the page: {scripts}"
    for src in mathjax:
        assert not src.startswith(("http:", "https:", "//")), f"MathJax from the network: {src}"
        assert (html / "guides" / src.split("?")[0]).resolve().is_file(), src
    # the fonts MathJax draws with are bundled too
    assert list((html / "_static" / "mathjax").rglob("*.woff"))


def test_notebooks_are_rendered_as_students_receive_them(docs_build: DocsBuild) -> None:
    """The site shows the released notebooks: every worked solution replaced by a stub."""
    out = _built(docs_build)
    from difflab.grading.notebooks import read_notebook

    for source in sorted((ROOT / "notebooks").glob("*.ipynb")):
        solution_lines, other_lines = set(), set()  # (a line found elsewhere proves nothing)
        for cell in read_notebook(source).cells:
            inside = False
            for line in cell.source.splitlines():
                marker = line.strip() if cell.cell_type == "code" else ""
                if marker.startswith("### BEGIN SOLUTION"):
                    inside = True
                elif marker.startswith("### END SOLUTION"):
                    inside = False
                elif len(line.strip()) > 12:
                    (solution_lines if inside else other_lines).add(line.strip())
        solution_lines -= other_lines
        copy = DOCS / "notebooks" / source.name
        rendered = copy.read_text(encoding="utf-8")
        rendered_lines = {line.strip() for cell in read_notebook(copy).cells
                          for line in cell.source.splitlines()}
        page = (out / "html" / "notebooks" / f"{source.stem}.html").read_text(encoding="utf-8")
        assert solution_lines, f"{source.name} has no worked solution to hide"
        assert "raise NotImplementedError()" in rendered and "NotImplementedError" in page
        shown = sorted(solution_lines & rendered_lines)
        assert not shown, f"{source.name}: the docs show solution lines {shown[:3]}"


def _entry(page: str, anchor: str) -> str:
    """The HTML of one documented object: from its anchor to the next object's."""
    start = page.index(f'id="{anchor}"')
    ends = [page.find(marker, start + 1) for marker in ('<dl class="py ', "</section>")]
    return page[start:min(e for e in ends if e != -1)]


def test_the_api_pages_render_numpydoc_sections_math_and_links(docs_build: DocsBuild) -> None:
    """dl.grad and Tensor.gather render as numpydoc: sections, LaTeX math, See Also links."""
    out = _built(docs_build)
    generated = out / "html" / "api" / "generated"
    grad = _entry((generated / "difflab.diff.html").read_text(encoding="utf-8"),
                  "difflab.diff.grad")
    gather = _entry((generated / "difflab.functions_indexing.html").read_text(
        encoding="utf-8"), "difflab.functions_indexing.gather")
    for entry in (grad, gather):
        for section in ("Parameters", "Returns", "Raises", "See also", "Examples"):
            assert section in entry, section
        assert "\\[" in entry or "\\(" in entry  # the math, as LaTeX for MathJax
    assert 'href="#difflab.diff.jacobian"' in grad  # See Also: a link, not text
    assert "\\nabla f" in grad and "return_cost" in grad
    tensor = (generated / "difflab.tensor.html").read_text(encoding="utf-8")
    assert 'id="difflab.tensor.Tensor.gather"' in tensor


def test_one_page_per_namespace_lists_every_name_with_its_summary(
        docs_build: DocsBuild) -> None:
    out = _built(docs_build)
    from tests.docs.docstring_rules import NAMESPACES, names

    pages = out / "html" / "api" / "generated" / "namespaces"
    for namespace in NAMESPACES:
        page = (pages / f"{namespace}.html").read_text(encoding="utf-8")
        for name, _, _ in names(namespace):
            assert f">{name}<" in page, f"{namespace}: {name} is not listed"
    nn = (pages / "difflab.nn.html").read_text(encoding="utf-8")
    assert 'href="../difflab.nn.modules.layers.html#difflab.nn.modules.layers.Linear"' in nn
    assert "An affine map of the last dimension" in nn  # the summary beside the name
