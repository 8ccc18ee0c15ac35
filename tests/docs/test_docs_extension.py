"""The docs extension's shortcuts give what Sphinx and numpydoc give, only faster.

``docs/_ext/difflab_docs.py`` builds the sidebar's titles-only navigation tree from
trimmed tables of contents, and compiles numpydoc's docstring template once.  Both are
there for the build's time alone: the pages must not change.  (The full build in
``test_docs_build.py`` checks the site; these check the shortcuts on their own, in a
small site built here, in a few seconds.)
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("sphinx", reason="the docs need the 'docs' extra: pip install -e '.[docs]'")
pytest.importorskip("numpydoc", reason="the docs need the 'docs' extra: pip install -e '.[docs]'")

from sphinx.application import Sphinx  # noqa: E402
from sphinx.environment.adapters.toctree import global_toctree_for_doc  # noqa: E402

import difflab as dl  # noqa: E402

EXT = Path(__file__).resolve().parents[2] / "docs" / "_ext"
if str(EXT) not in sys.path:
    sys.path.insert(0, str(EXT))

import difflab_docs  # noqa: E402

# A small site with what makes the navigation tree: nested toctrees (one hidden), pages
# with sections and subsections, and documented objects (which join a page's contents).
PAGES = {
    "index.rst": """Home
====

.. toctree::

   guide
   api

.. toctree::
   :hidden:

   hidden
""",
    "guide.rst": """Guide
=====

First
-----

Deeper
~~~~~~

Second
------

.. toctree::

   nested
""",
    "nested.rst": "Nested\n======\n\nA section\n---------\n",
    "hidden.rst": "Hidden\n======\n",
    "api.rst": """API
===

.. py:function:: grad(f)

   The gradient.

.. py:class:: Linear(n, m)

   .. py:method:: forward(x)

      The map.
""",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Sphinx:
    source = tmp_path_factory.mktemp("site")
    (source / "conf.py").write_text("extensions = ['sphinx.ext.autodoc', 'difflab_docs']\n")
    for name, text in PAGES.items():
        (source / name).write_text(text)
    app = Sphinx(str(source), str(source), str(source / "_build"),
                 str(source / "_doctrees"), "html", status=None, warning=None,
                 freshenv=True)
    app.build()
    return app


def _tree(app: Sphinx, docname: str, **options: object) -> str:
    tree = global_toctree_for_doc(app.env, docname, app.builder, tags=app.builder.tags,
                                  **options)
    return app.builder.render_partial(tree)["fragment"]


@pytest.mark.parametrize("options", [
    {"collapse": False, "includehidden": True, "maxdepth": -1},  # furo's sidebar
    {"collapse": True, "includehidden": False, "maxdepth": 2},
])
def test_the_trimmed_contents_give_the_same_titles_only_tree(site: Sphinx,
                                                             options: dict) -> None:
    trimmed = {name: difflab_docs._titles_only(toc) for name, toc in site.env.tocs.items()}
    assert sum(len(list(t.findall())) for t in trimmed.values()) < \
        sum(len(list(t.findall())) for t in site.env.tocs.values())  # (less to copy)
    for docname in PAGES:
        docname = docname.removesuffix(".rst")
        full = _tree(site, docname, titles_only=True, **options)
        tocs, site.env.tocs = site.env.tocs, trimmed
        try:
            cheap = _tree(site, docname, titles_only=True, **options)
        finally:
            site.env.tocs = tocs
        assert cheap == full, docname
        assert "Deeper" not in full  # (titles only)
        if not options["collapse"]:
            assert "Nested" in full  # (a page of a page's toctree)


def test_the_pages_toctree_uses_them_for_titles_only_and_puts_the_contents_back(
        site: Sphinx) -> None:
    calls = []

    def toctree(**kwargs: object) -> str:
        calls.append((kwargs, site.env.tocs))
        return "tree"

    context = {"toctree": toctree}
    difflab_docs.titles_only_toctree(site, "guide", "page.html", context, None)
    tocs = site.env.tocs
    assert context["toctree"](titles_only=True, maxdepth=-1) == "tree"
    assert calls[-1][1] is not tocs and set(calls[-1][1]) == set(tocs)
    assert context["toctree"](maxdepth=2) == "tree"  # (sections wanted: the full contents)
    assert calls[-1][1] is tocs
    assert site.env.tocs is tocs


def test_the_pages_in_no_toctree_get_their_folders_tree_built_once(site: Sphinx) -> None:
    """viewcode's pages (``_modules/...``) are in no toctree: two in one folder get the
    same tree as Sphinx builds it for each, built once; another folder's, its own links."""
    options = {"collapse": False, "titles_only": True, "maxdepth": -1, "includehidden": True}
    built = []

    def tree_of(pagename: str) -> str:
        def toctree(**kwargs: object) -> str:
            built.append(pagename)
            return site.builder._get_local_toctree(pagename, **kwargs)

        context = {"toctree": toctree}
        difflab_docs.titles_only_toctree(site, pagename, "page.html", context, None)
        return context["toctree"](**options)

    first, second = tree_of("_modules/pkg/a"), tree_of("_modules/pkg/b")
    other = tree_of("_modules/c")
    assert second == first
    assert built == ["_modules/pkg/a", "_modules/c"]  # (b: a's tree)
    for pagename, tree in (("_modules/pkg/b", second), ("_modules/c", other)):
        assert tree == site.builder._get_local_toctree(pagename, **options)
    assert 'href="../../guide.html"' in second and 'href="../guide.html"' in other
    assert "current" not in second
    tree_of("guide")
    tree_of("guide")  # (a document of the site: its tree marks it current, never shared)
    assert built[2:] == ["guide", "guide"]


@pytest.mark.filterwarnings("ignore:Unknown section Shape")  # (the extension makes it a rubric)
@pytest.mark.parametrize("obj, what", [(dl.grad, "function"), (dl.nn.Linear, "class"),
                                       (dl.Tensor.gather, "method")])
def test_numpydoc_renders_the_same_with_its_template_compiled_once(site: Sphinx, obj: object,
                                                                   what: str) -> None:
    from numpydoc.docscrape_sphinx import get_doc_object

    for builder in (None, site.builder):
        expected = str(get_doc_object(obj, what, config={}, builder=builder))
        assert str(difflab_docs.numpydoc_doc_object(obj, what, config={},
                                                    builder=builder)) == expected
    assert difflab_docs._numpydoc_template(None) is difflab_docs._numpydoc_template(None)


def test_the_site_is_read_in_parallel_with_mathjax_offline(tmp_path: Path) -> None:
    """sphinx-mathjax-offline declares nothing about parallel reading: Sphinx would warn
    (an error under -W) and read serially; the docs extension marks it safe."""
    pytest.importorskip("sphinx-mathjax-offline",
                        reason="bundling MathJax needs the docs extra: pip install -e '.[docs]'")
    (tmp_path / "conf.py").write_text(
        "extensions = ['sphinx.ext.autodoc', 'sphinx-mathjax-offline', 'difflab_docs']\n")
    pages = [f"page{i}" for i in range(8)]  # (Sphinx reads in parallel from 6 pages on)
    (tmp_path / "index.rst").write_text("Home\n====\n\n.. toctree::\n\n" + "".join(
        f"   {page}\n" for page in pages))
    for page in pages:
        (tmp_path / f"{page}.rst").write_text(f"{page}\n{'=' * len(page)}\n\n:math:`x^2`\n")
    app = Sphinx(str(tmp_path), str(tmp_path), str(tmp_path / "_build"),
                 str(tmp_path / "_doctrees"), "html", status=None, warning=None,
                 freshenv=True, warningiserror=True, parallel=2)
    assert app.is_parallel_allowed("read") and app.is_parallel_allowed("write")
    app.build()
    assert (tmp_path / "_build" / "_static" / "mathjax" / "tex-chtml.js").is_file()
