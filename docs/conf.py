"""Sphinx configuration of the difflab documentation.

Build (from the repository root)::

    python -m sphinx -W --keep-going -n -j auto -b html docs docs/_build/html

The teaching notebooks live in ``notebooks/`` at the repository root; this file
writes their student versions (solutions replaced, as ``difflab assign`` releases
them) into ``docs/notebooks/`` (ignored by git) so Sphinx can render them with
MyST-NB.  They are executed during the build and cached in
``docs/_build/.jupyter_cache`` (only changed notebooks run again); pass
``-D nb_execution_mode=off`` to render them without outputs (the test suite
does, since it executes every notebook separately).
"""

from __future__ import annotations

import filecmp
import importlib
import sys
from pathlib import Path

import sphinx

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS / "_ext"))

import difflab  # noqa: E402

# -- project ---------------------------------------------------------------------------
project = "difflab"
author = "the difflab developers"
copyright = "the difflab developers"  # noqa: A001
release = difflab.__version__
version = ".".join(release.split(".")[:2])

# -- mathematics, offline too ---------------------------------------------------------
# MathJax renders the formulas in the browser.  sphinx-mathjax-offline (in the docs
# extra) copies a full MathJax 3 into _static/mathjax and points the pages at it, so
# the site shows its mathematics without a network, e.g. opened from disk.  Without
# it the pages load MathJax from a CDN: fine online, raw TeX offline.
try:
    importlib.import_module("sphinx-mathjax-offline")
    MATH_OFFLINE = ["sphinx-mathjax-offline"]
except ImportError:
    MATH_OFFLINE = []
    print("docs: sphinx-mathjax-offline is not installed (pip install -e '.[docs]'); the "
          "pages will load MathJax from the network", file=sys.stderr)

# TeX's text macros inside \text{...} (``\text{fan\_in}``): MathJax reads them only with
# its textmacros package (bundled with MathJax 3 and 4); without it the page shows the
# backslash.  (MyST adds the classes MathJax processes to this same setting, which Sphinx
# 9 names mathjax4_config, Sphinx 8 mathjax3_config; either one writes window.MathJax.)
_MATHJAX_CONFIG = {
    "loader": {"load": ["[tex]/textmacros"]},
    "tex": {"packages": {"[+]": ["textmacros"]}},
}
if sphinx.version_info >= (9,):
    mathjax4_config = _MATHJAX_CONFIG
else:
    mathjax3_config = _MATHJAX_CONFIG

# -- extensions ------------------------------------------------------------------------
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    *MATH_OFFLINE,
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_nb",
    "difflab_docs",  # docs/_ext/difflab_docs.py: the CLI reference from click's help
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints", "README.md"]

# Every cross-reference must resolve (internal link check); see nitpick_ignore below.
nitpicky = True

# -- MyST and MyST-NB ------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
nb_execution_mode = "cache"
nb_execution_cache_path = str(DOCS / "_build" / ".jupyter_cache")
nb_execution_timeout = 300
nb_execution_in_temp = True  # notebook 7 writes a state_dict file: not into the source tree
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True

# -- autodoc and numpydoc --------------------------------------------------------------
autodoc_default_options = {
    "members": True,
    "show-inheritance": True,
    "ignore-module-all": True,  # document each object once, where it is defined
    "special-members": "__call__",
    # (a primitive's numpy_function is NumPy's own function: its docstring is NumPy's)
    "exclude-members": "numpy_function",
}
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # numpydoc's Parameters sections carry the types
autodoc_preserve_defaults = True  # defaults as written (no paths of the building machine)
# Type comments (``# type: (int) -> str``) are read to annotate signatures; difflab writes
# none, and the pages show no annotations (above): reading them for every function and
# method (a parse of its source) was a twelfth of the API pages' time.  (Sphinx 8.2 on.)
autodoc_use_type_comments = False
autodoc_mock_imports = ["cupy"]
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

# Types named in docstrings that live outside these docs (no network: no intersphinx).
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|np|cupy|cp|sympy|sp|mpmath|matplotlib|click)\..*"),
    (r"py:.*", r"(typing|collections|enum|types|contextlib)\..*"),
    (r"py:.*", r"(builtins\.)?(int|float|complex|bool|str|bytes|dict|list|tuple|set|object)"),
    (r"py:.*", r"(builtins\.)?(type|callable|Callable|Any|Sequence|Iterable|Iterator)"),
    (r"py:.*", r".*Error|.*Exception|.*Warning"),
    (r"py:mod", r"tracemalloc|time|timeit|pickle|math|cmath|warnings|ast"),
    # Private base classes (shown in "Bases:") are not documented, by design.
    (r"py:class", r"difflab\..*\._\w+"),
]

# -- HTML ------------------------------------------------------------------------------
html_theme = "furo"
html_title = f"difflab {release}"
html_show_sourcelink = False


# -- the notebooks: their student versions, copied into docs/notebooks/ ---------------
def _copy_notebooks() -> None:
    """Render each notebook as students receive it: solutions replaced, hidden tests gone.

    The repository's notebooks keep their worked solutions between nbgrader markers;
    the documentation shows what ``difflab assign`` releases, so a student reading the
    site meets the exercises, not their answers.  A copy is rewritten only when its
    content changes, so Sphinx and the execution cache rebuild only what changed.
    """
    from difflab.grading.notebooks import make_student_version

    source, target = ROOT / "notebooks", DOCS / "notebooks"
    target.mkdir(exist_ok=True)
    wanted = {p.name for p in source.glob("*.ipynb")}
    for stale in target.glob("*.ipynb"):
        if stale.name not in wanted:
            stale.unlink()
    staging = target / ".staging"
    staging.mkdir(exist_ok=True)
    for notebook in sorted(source.glob("*.ipynb")):
        fresh = make_student_version(notebook, staging / notebook.name)
        copy = target / notebook.name
        if copy.exists() and filecmp.cmp(fresh, copy, shallow=False):
            fresh.unlink()
        else:
            fresh.replace(copy)
    staging.rmdir()


_copy_notebooks()


# -- the API reference: one page per public module --------------------------------------
# Written here rather than by autosummary's recursion, which skips the modules whose
# names a package re-binds (``difflab.tensor`` is also the function ``dl.tensor``).
def _write_api_pages() -> None:
    import importlib
    import pkgutil

    target = DOCS / "api" / "generated"
    target.mkdir(parents=True, exist_ok=True)
    names = ["difflab"] + [
        info.name for info in pkgutil.walk_packages(difflab.__path__, "difflab.")
        if not any(part.startswith("_") for part in info.name.split("."))
    ]
    children: dict[str, list[str]] = {name: [] for name in names}
    for name in names:
        parent = name.rpartition(".")[0]
        if parent in children:
            children[parent].append(name)
    pages = {}
    for name in names:
        importlib.import_module(name)  # fail loudly if a module does not import
        text = [name, "=" * len(name), "", f".. automodule:: {name}", ""]
        if children[name]:
            text += [".. rubric:: Modules", "", ".. toctree::", "   :maxdepth: 1", ""]
            text += [f"   {child}" for child in sorted(children[name])]
            text.append("")
        pages[f"{name}.rst"] = "\n".join(text)
    for stale in target.glob("*.rst"):
        if stale.name not in pages:
            stale.unlink()
    for filename, text in pages.items():
        path = target / filename
        if not path.exists() or path.read_text() != text:
            path.write_text(text)


_write_api_pages()


# -- one page per public namespace: every name with its one-line summary --------------
# The namespaces and their public names are the ones the docstring check walks
# (tests/docs/docstring_rules.py), so the pages list exactly what the check checks.
def _write_namespace_pages() -> None:
    # docs/_ext: the one escaper of docstring text, and where a public name is documented
    from difflab_docs import defined_at, summary_text

    from tests.docs.docstring_rules import NAMESPACES, docstring, names

    target = DOCS / "api" / "generated" / "namespaces"
    target.mkdir(parents=True, exist_ok=True)
    for namespace in NAMESPACES:
        title = f"``{namespace}``"
        text = [title, "=" * len(title), "",
                f"Every public name of ``{namespace}``, with the first line of its docstring; "
                "each name links to its full entry.", "",
                ".. list-table::", "   :header-rows: 1", "   :widths: 30 70", "",
                "   * - name", "     - summary"]
        for name, obj, _ in names(namespace):
            doc = docstring(obj)
            summary = doc.splitlines()[0].strip() if doc else "(no docstring yet)"
            where = defined_at(f"{namespace}.{name}") if doc else None
            if where is not None and any(part.startswith("_") for part in where.split(".")):
                where = None  # (defined in a private module or class: no page of its own)
            text.append(f"   * - :py:obj:`{name} <{where}>`" if where else f"   * - ``{name}``")
            text.append(f"     - {summary_text(summary)}")
        page = target / f"{namespace}.rst"
        content = "\n".join(text) + "\n"
        if not page.exists() or page.read_text() != content:
            page.write_text(content)


_write_namespace_pages()
