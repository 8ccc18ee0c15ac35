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
    "nested.rst": "Nested\n======\n\nA section\n---------\n\n.. toctree::\n\n   sub/deep\n",
    "sub/deep.rst": "Deep\n====\n\nIn a folder\n-----------\n",
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
        (source / name).parent.mkdir(exist_ok=True)
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


def test_every_page_gets_sphinxs_tree_and_furos_sidebar_from_its_folders_written_once(
        site: Sphinx, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each page's titles-only tree is Sphinx's own for it, and its sidebar furo's own for
    that tree, though each folder's tree is resolved once (twice: once more for the first
    page compared the long way): pages of the site, in folders or not, and viewcode's pages
    (``_modules/...``), which no toctree names and whose trees differ only by folder."""
    furo_navigation = pytest.importorskip("furo.navigation")
    options = dict(difflab_docs._FURO_TREE)
    monkeypatch.setattr(site.config, "html_theme", "furo")
    difflab_docs._forget_trimmed_tocs(site, site.env)
    resolved = []
    unmarked = difflab_docs._unmarked_tree
    monkeypatch.setattr(difflab_docs, "_unmarked_tree",
                        lambda builder, folder: resolved.append(folder) or unmarked(builder,
                                                                                  folder))

    def tree_of(pagename: str) -> str:
        context = {"toctree": lambda **kwargs: pytest.fail("resolved page by page")}
        difflab_docs.titles_only_toctree(site, pagename, "page.html", context, None)
        return context["toctree"](**options)

    pages = [name.removesuffix(".rst") for name in PAGES]
    pages += ["_modules/pkg/a", "_modules/pkg/b", "_modules/c", "genindex", "sub/deep"]
    trees = {}
    for pagename in pages:
        trees[pagename] = tree = tree_of(pagename)
        want = site.builder._get_local_toctree(pagename, **options)
        assert tree == want, pagename
        sidebar = difflab_docs.furo_sidebar(tree)
        assert sidebar == furo_navigation.get_navigation_tree.__wrapped__(want), pagename
    assert ('<li class="toctree-l1 current has-children current-page"><a class="current '
            'reference internal" href="#">Guide</a><input aria-label="Toggle navigation of '
            'Guide" checked=""') in difflab_docs.furo_sidebar(trees["guide"])
    assert 'href="#">Deep' in trees["sub/deep"] and 'href="../guide.html"' in trees["sub/deep"]
    folders = ["", "_modules/pkg", "_modules", "sub"]
    assert sorted(set(resolved)) == sorted(folders) and len(resolved) <= 2 * len(folders)
    assert trees["_modules/pkg/b"] == trees["_modules/pkg/a"]
    assert 'href="../../guide.html"' in trees["_modules/pkg/a"]
    assert 'href="../guide.html"' in trees["_modules/c"]
    assert "current" not in trees["_modules/c"] and "current" in trees["nested"]


def test_a_folder_whose_marks_differ_from_the_long_way_goes_the_long_way(
        site: Sphinx, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another Sphinx or furo could mark a page otherwise: the first page with marks in each
    folder is also built the long way, and a difference sends the folder that way."""
    options = dict(difflab_docs._FURO_TREE)
    difflab_docs._forget_trimmed_tocs(site, site.env)
    written = difflab_docs._write_marks
    monkeypatch.setattr(difflab_docs, "_write_marks",
                        lambda *args: written(*args).replace("current", "now"))
    for pagename in ("guide", "nested", "index"):
        context = {"toctree": lambda **kwargs: pytest.fail("resolved page by page")}
        difflab_docs.titles_only_toctree(site, pagename, "page.html", context, None)
        assert context["toctree"](**options) == site.builder._get_local_toctree(pagename,
                                                                                **options)


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
