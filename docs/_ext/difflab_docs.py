"""Sphinx helpers for the difflab docs: the CLI reference, plain-text docstrings, short names.

1. A directive that documents a click command from its own ``--help``.

::

    ```{click-help} difflab.cli:main
    ```

renders, for the command and then for each of its subcommands (recursively), a
section titled with the command line (``difflab compare``) holding the text that
``--help`` prints.  The reference is therefore always the help the installed
command gives; nothing is written twice.  (``sphinx-click`` does the same with
more markup; this keeps the docs to the packages in the ``docs`` extra.)

2. difflab's docstrings are written to be read with ``help()`` first, so they write
   math and code as plain text: ``|x|`` is an absolute value, not a reStructuredText
   substitution, and ``f(*args)`` has no emphasis in it.  ``autodoc-process-docstring``
   escapes such bars and lone stars (outside literals, literal blocks, doctests and
   tables) so they render as written.

3. Docstrings name objects as users import them (``difflab.nn.Module``,
   ``:func:`grad``` inside :mod:`difflab.autograd`), while the API reference documents
   each object once, in the module that defines it (``difflab.nn.modules.module.Module``).
   A ``missing-reference`` handler resolves such a name when exactly one documented
   object fits it best (same name, nearest module); anything else still warns, so the
   nitpicky build remains a check of internal links.

4. The layers of :mod:`difflab.nn` have a ``Shape`` section, as PyTorch's do.  numpydoc
   knows no such section and would drop it, so ``autodoc-process-docstring`` turns it
   into a rubric placed before the first numpydoc section (after the formula).

5. A layer's ``forward`` (or a scheduler's ``lr_at``) without a docstring of its own is left
   out of the page: autodoc would show the base class's "override it" text there.

6. The sidebar for less: furo puts the whole navigation tree (every page's title) on every
   page, which Sphinx builds by copying each page's full table of contents, every section
   and every documented object of the API pages, only to throw all but the titles away.
   That was half of the build's time.  ``html-page-context`` gives the theme a
   ``toctree()`` that, when only titles are asked for, reads the tables of contents with
   the titles kept alone: the same tree, the same HTML, from a fraction of the copying.
   The pages viewcode writes (``_modules/...``, the source of each module: 217 of the
   site's 516 pages) are in no toctree, so none of their trees marks an entry current:
   two of them in one folder get the same tree, links and all, which is built once per
   folder (and furo, which caches its work by that HTML, reworks it once too).  The other
   pages' trees differ from that one only where Sphinx marks the page itself: its entry
   and that entry's ancestors get the class ``current`` and its link points to the page
   itself (``href="#"``).  So each folder's tree is resolved once, and a page's is that
   tree with the page's marks put on while it is rendered and taken off after: Sphinx's
   resolution of the whole tree for every page was a fifth of the build's time.

7. numpydoc compiles its docstring template anew for every object it renders (twice: the
   docstring and the signature), a tenth of the build; the same template, compiled once
   per builder, goes through numpydoc's own hook for its ``get_doc_object``.

8. The site is read in parallel (``sphinx-build -j auto``), which Sphinx allows only when
   every extension says it may.  sphinx-mathjax-offline says nothing (Sphinx would warn,
   an error under ``-W``, and read serially); what it does is safe, so it is marked so.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import re
import types
import warnings
from pathlib import Path
from typing import Any

import click
from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)


def _load(spec: str) -> click.Command:
    module_name, _, attribute = spec.partition(":")
    module = importlib.import_module(module_name)
    command = getattr(module, attribute or "main")
    if not isinstance(command, click.Command):
        raise TypeError(f"{spec} is a {type(command).__name__}, not a click command")
    return command


def _help_text(command: click.Command, path: list[str], parent: Any) -> tuple[str, Any]:
    context = click.Context(command, info_name=path[-1], parent=parent, terminal_width=88,
                            max_content_width=88)
    return command.get_help(context), context


class ClickHelp(SphinxDirective):
    """Render ``--help`` of a click command (``module:attribute``) and of its subcommands."""

    required_arguments = 1
    option_spec = {"prog": directives.unchanged, "depth": directives.nonnegative_int}

    def run(self) -> list[nodes.Node]:
        spec = self.arguments[0]
        try:
            command = _load(spec)
        except Exception as exc:  # the warning names what is missing; -W makes it an error
            logger.warning("click-help: cannot load %s: %s", spec, exc,
                           location=self.get_location())
            return [nodes.paragraph(text=f"(The command {spec} could not be loaded: {exc}.)")]
        prog = self.options.get("prog", "difflab")
        depth = self.options.get("depth", 2)
        return self._sections(command, [prog], None, depth)

    def _sections(self, command: click.Command, path: list[str], parent: Any, depth: int
                  ) -> list[nodes.Node]:
        text, context = _help_text(command, path, parent)
        title = " ".join(path)
        section = nodes.section(ids=[nodes.make_id("cli " + title)],
                                names=[nodes.fully_normalize_name(title)])
        section += nodes.title("", "", nodes.literal(text=title))
        section += nodes.literal_block(text, text, language="text")
        self.state.document.note_implicit_target(section, section)
        result: list[nodes.Node] = [section]
        if depth > 0 and isinstance(command, click.Group):
            for name in command.list_commands(context):
                sub = command.get_command(context, name)
                if sub is None or sub.hidden:
                    continue
                result.extend(self._sections(sub, [*path, name], context, depth - 1))
        return result


# ------------------------------------------------------------- plain-text absolute values

# A star that opens no emphasis: ``f(*args)``, ``(k, *shape)`` written as plain Python.
_LONE_STAR = re.compile(r"(?<![\\*\w])\*(?=\w)(?![^*]*\w\*(?!\w))")
_BARS = re.compile(r"(?<![\\|])\|(?=[^\s|])([^|`]*?[^\s|\\])\|(?![|_])")


def _escape_bars(text: str) -> str:
    """Escape ``|...|`` outside inline literals (````...````) and roles (`` `...` ``)."""
    pieces = re.split(r"(``.+?``|`[^`]+`)", text)
    return "".join(p if i % 2 else _LONE_STAR.sub(r"\\*", _BARS.sub(r"\\|\1\\|", p))
                   for i, p in enumerate(pieces))


def escape_docstring_bars(app: Any, what: str, name: str, obj: Any, options: Any,
                          lines: list[str]) -> None:
    literal_indent: int | None = None
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if literal_indent is not None:
            if not stripped or indent > literal_indent:
                continue
            literal_indent = None
        if stripped.startswith((">>>", "...", "| ", "+-", "+=")) or stripped == "|":
            continue  # doctests, line blocks, grid tables
        lines[i] = _escape_bars(line)
        if stripped.endswith("::") or stripped.startswith(".. code"):
            literal_indent = indent


# ------------------------------------------------------------ short names of re-exports


def resolve_short_names(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    if node.get("refdomain") != "py":
        return None
    from sphinx.util.nodes import make_refnode

    domain = env.get_domain("py")
    where = defined_at(node["reftarget"].lstrip(".~"), node.get("py:module"))
    if where is not None and where in domain.objects:  # the name, followed in Python
        entry = domain.objects[where]
        return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id,
                            contnode, where)
    objtypes = set(domain.objtypes_for_role(node["reftype"]) or ())
    typed = {name: entry for name, entry in domain.objects.items()
             if not objtypes or entry.objtype in objtypes}
    for objects in (typed, domain.objects):  # a :func: may name a class used as a function
        found = _best_match(node["reftarget"].lstrip(".~"), objects, node.get("py:module"))
        if found is not None:
            entry = objects[found]
            return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id,
                                contnode, found)
    return None


def defined_at(target: str, context: str | None = None) -> str | None:
    """Where the object a public name reaches is documented: ``difflab.derivative`` ->
    ``difflab.diff.derivative``, ``difflab.Tensor.sin`` -> ``difflab.tensor.Tensor.sin``.

    The name is followed in Python (attributes first, then submodules), as written or,
    for a relative name, inside the module the reference is made from and its packages.
    """
    candidates = [target]
    if context:
        parts = context.split(".")
        candidates += [".".join([*parts[:k], target]) for k in range(len(parts), 0, -1)]
    for dotted in candidates:
        found = _follow(dotted)
        if found is not None:
            return found
    return None


def _follow(dotted: str) -> str | None:
    parts = dotted.split(".")
    if parts[0] != "difflab":
        return None
    obj: Any = importlib.import_module("difflab")
    parent: Any = None
    for i, part in enumerate(parts[1:], 1):
        step = getattr(obj, part, None)
        if step is None:
            try:
                step = importlib.import_module(".".join(parts[:i + 1]))
            except ImportError:
                return None
        parent, obj = obj, step
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    if isinstance(parent, type):  # a method or property: where its class defines it
        for klass in parent.__mro__:
            if parts[-1] in vars(klass):
                return f"{klass.__module__}.{klass.__qualname__}.{parts[-1]}"
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str) and "<" not in qualname:
        return f"{module}.{qualname}"
    return None


def summary_text(line: str) -> str:
    """A docstring's first line as text for a table: roles become literals (they are
    relative to the docstring's module, not the table's page), bars and stars escaped."""
    return _escape_bars(re.sub(r":[\w:]+:`~?([^`<]+?)(?:\s*<[^>]*>)?`", r"``\1``", line))


def _shared(name: str, near: list[str]) -> int:
    """How many leading components ``name`` shares with the module path ``near``."""
    parts, n = name.split("."), 0
    while n < min(len(parts), len(near)) and parts[n] == near[n]:
        n += 1
    return n


def _best_match(target: str, objects: dict, context: str | None) -> str | None:
    """The one documented name that ends with ``target`` (or its shortest tail) and sits
    nearest to the module the reference is made from; None when there is no single one."""
    context = context or ""
    parts = target.split(".")
    for k in range(len(parts)):
        suffix = ".".join(parts[k:])
        package = ".".join(parts[:k])
        if not package.startswith("difflab"):
            package = ""
        matches = [n for n in objects
                   if (n == suffix or n.endswith("." + suffix)) and n.startswith(package)]
        if not matches:
            continue

        near = (context or package).split(".")
        best = max(_shared(n, near) for n in matches)
        matches = [n for n in matches if _shared(n, near) == best]
        return matches[0] if len(matches) == 1 else None
    return None


def skip_numpy_copies(app: Any, what: str, name: str, obj: Any, skip: bool,
                      options: Any) -> bool | None:
    """Leave out the NumPy functions the CuPy stand-in copies in: its page lists only its
    own names (its ``__all__``); the copies are NumPy's, documented by NumPy."""
    from difflab.testing import fake_cupy

    if getattr(fake_cupy, name, None) is obj and name not in fake_cupy.__all__:
        return True
    return None


def skip_inherited_overrides(app: Any, what: str, name: str, obj: Any, skip: bool,
                             options: Any) -> bool | None:
    """Leave out the overrides without a docstring of their own in nn, optim and data (a
    layer's ``forward``, ``extra_repr``; a scheduler's ``lr_at``): autodoc would show the
    base class's text ("override it in every subclass") on the layer's page, where the
    class docstring already says what the call computes, with its Shape section."""
    if what == "class" and inspect.isfunction(obj) and obj.__doc__ is None and \
            getattr(obj, "__module__", "").startswith(_OVERRIDES_LEFT_OUT_IN):
        return True
    return None


_OVERRIDES_LEFT_OUT_IN = ("difflab.nn", "difflab.optim", "difflab.data")


def _is_header(lines: list[str], i: int) -> bool:
    """Whether ``lines[i]`` is a numpydoc section title (underlined by dashes)."""
    return (i + 1 < len(lines) and bool(lines[i].strip())
            and re.fullmatch(r"-{3,}", lines[i + 1].strip()) is not None
            and len(lines[i + 1].strip()) == len(lines[i].strip()))


def shape_section_to_rubric(app: Any, what: str, name: str, obj: Any, options: Any,
                            lines: list[str]) -> None:
    """Move a ``Shape`` section (which numpydoc would drop) before the first section,
    as a rubric, so the rendered page shows the input and output shapes."""
    start = next((i for i in range(len(lines)) if lines[i].strip() == "Shape"
                  and _is_header(lines, i)), None)
    if start is None:
        return
    end = next((i for i in range(start + 2, len(lines)) if _is_header(lines, i)), len(lines))
    body = lines[start + 2:end]
    del lines[start:end]
    first = next((i for i in range(len(lines)) if _is_header(lines, i)), len(lines))
    lines[first:first] = [".. rubric:: Shape", "", *body, ""]


# -------------------------------------------------------- the navigation tree, cheaply


def _titles_only(toc: nodes.Node) -> nodes.Node:
    """A copy of one page's table of contents with what ``titles_only`` keeps: the
    top-level title(s) and the toctrees below them (Sphinx's own rule, in
    ``sphinx.environment.adapters.toctree._entries_from_toctree``)."""
    toc = toc.deepcopy()
    for top_level in toc.children:
        if len(top_level) > 1:
            if subtrees := list(top_level.findall(addnodes.toctree)):
                top_level[1][:] = subtrees
            else:
                top_level.pop(1)
    return toc


_TITLES_ONLY: dict[int, dict[str, nodes.Node]] = {}  # id(env.tocs) -> the trimmed tocs


#: The titles-only tree of the pages in no toctree: by id(env.tocs), folder and options.
_TREE_OF_FOLDER: dict[tuple[int, str, tuple], str] = {}


def _forget_trimmed_tocs(app: Any, env: Any) -> None:
    _TITLES_ONLY.clear()  # (the pages were read again: their tables of contents changed)
    _TREE_OF_FOLDER.clear()
    _TREE_TO_MARK.clear()
    _NAVIGATION.clear()


def _in_no_toctree(env: Any, pagename: str) -> bool:
    """Whether ``pagename`` is a page viewcode writes (a module's source), which is no
    document of the site: no toctree names it, so its tree marks nothing current and
    differs from another such page's only by the folder its links are relative to."""
    return pagename.startswith("_modules/") and pagename not in env.all_docs


#: What furo asks every page for (``furo._compute_navigation_tree``): the whole tree, titles
#: only, nothing collapsed.  A tree asked for otherwise is Sphinx's own, page by page.
_FURO_TREE = {"collapse": False, "titles_only": True, "maxdepth": -1, "includehidden": True}

#: Per folder (and id(env.tocs)): its resolved tree, and that tree's internal links by target.
_TREE_TO_MARK: dict[tuple[int, str], tuple[nodes.Element, dict[str, list[nodes.reference]]]] = {}


def _unmarked_tree(builder: Any, folder: str) -> tuple[nodes.Element, dict] | None:
    """The folder's titles-only tree as Sphinx resolves it for a page of the folder that is
    in no toctree (nothing marked current, links relative to the folder), and its internal
    links by the URI they point to (without their anchor)."""
    from sphinx.environment.adapters.toctree import global_toctree_for_doc

    nowhere = f"{folder}/ no page" if folder else " no page"  # (no docname has a space)
    tree = global_toctree_for_doc(builder.env, nowhere, builder, tags=builder.tags,
                                  **_FURO_TREE)
    if tree is None:
        return None
    links: dict[str, list[nodes.reference]] = {}
    for link in tree.findall(nodes.reference):
        if link.get("internal"):
            uri = link["refuri"][:len(link["refuri"]) - len(link["anchorname"])]
            links.setdefault(uri, []).append(link)
    return tree, links


def _marked_toctree(builder: Any, pagename: str) -> str:
    """The page's titles-only tree, rendered: the folder's tree with the marks Sphinx's
    ``_toctree_add_classes`` and ``_resolve_toctree`` give the page (every entry of the
    page, and its ancestors, get ``current``; a link to the page itself is ``''``, the
    relative URI of a page to itself), put on for the rendering and taken off after."""
    folder = pagename.rpartition("/")[0]
    key = (id(builder.env.tocs), folder)
    if key not in _TREE_TO_MARK:
        _TREE_TO_MARK[key] = _unmarked_tree(builder, folder)
    if _TREE_TO_MARK[key] is None:
        return ""
    tree, links = _TREE_TO_MARK[key]
    nowhere = f"{folder}/ no page" if folder else " no page"
    own = links.get(builder.get_relative_uri(nowhere, pagename), [])
    marked: list[nodes.Element] = []
    for link in own:
        link["refuri"] = link["anchorname"]
        if not link["anchorname"]:
            node = link
            while node is not None:  # (up to the tree; not into the partial document)
                node["classes"].append("current")
                marked.append(node)
                node = node.parent if node is not tree else None
    try:
        return builder.render_partial(tree)["fragment"]
    finally:
        tree.parent = None  # (render_partial put it into a document of its own)
        for node in reversed(marked):
            node["classes"].pop()
        target = builder.get_relative_uri(nowhere, pagename)
        for link in own:
            link["refuri"] = target + link["anchorname"]


# furo turns the tree into its sidebar (``furo.navigation.get_navigation_tree``: a checkbox
# and a label in each entry with children, the checkbox checked in a ``current`` entry, and
# ``current-page`` on the last ``current`` entry) by parsing the HTML with BeautifulSoup,
# page by page: another fifth of the build.  Both texts are written once per folder, with
# a marker class on each node of the tree; a page's are those texts with its marks written
# in.  The first page with marks in each folder is also done the long way: if either text
# differs (another Sphinx, another furo), the folder's pages are all done the long way.

_MARKER = "difflab-nav-"
_START_TAG = re.compile(r"<(\w+)([^>]*)>")
_CLASS_ATTRIBUTE = re.compile(r' class="([^"]*)"')
_HREF_ATTRIBUTE = re.compile(r' href="[^"]*"')

#: furo's own get_navigation_tree, and the sidebars already written for a page's tree.
_FURO_NAVIGATION: list[Any] = []
_SIDEBAR_OF: dict[str, str] = {}


class _FolderNavigation:
    """A folder's navigation tree as Sphinx renders it and as furo's sidebar, with a marker
    class on every node (``difflab-nav-<n>``, in place of the ``current`` it may get)."""

    def __init__(self, builder: Any, folder: str, tree: nodes.Element,
                 links: dict[str, list[nodes.reference]]) -> None:
        self.nowhere = f"{folder}/ no page" if folder else " no page"
        numbers = {id(node): n for n, node in enumerate(tree.findall(nodes.Element))}
        for node in tree.findall(nodes.Element):
            node["classes"].append(f"{_MARKER}{numbers[id(node)]}")
        try:
            self.html = builder.render_partial(tree)["fragment"]
        finally:
            tree.parent = None
            for node in tree.findall(nodes.Element):
                node["classes"].pop()
        furo = _FURO_NAVIGATION and builder.config.html_theme == "furo"
        self.sidebar = _FURO_NAVIGATION[0](self.html) if furo else None
        # per target: (its link's number, the link's anchor, the numbers of its branch)
        self.links: dict[str, list[tuple[int, str, list[int]]]] = {}
        for uri, found in links.items():
            for link in found:
                branch, node = [], link
                while node is not None:
                    branch.append(numbers[id(node)])
                    node = node.parent
                self.links.setdefault(uri, []).append(
                    (numbers[id(link)], link["anchorname"], branch))
        self.entry_order = {int(number): order for order, number in enumerate(
            re.findall(rf'<li class="[^"]*{_MARKER}(\d+)', self.sidebar or ""))}
        self.checked = False  # (whether a page's texts were compared with the long way's)
        self.trusted = True

    def texts(self, builder: Any, pagename: str) -> tuple[str, str | None]:
        """The page's tree (Sphinx's HTML) and its sidebar (furo's; None without furo)."""
        counts: dict[int, int] = {}
        hrefs: dict[int, str] = {}
        for number, anchor, branch in self.links.get(
                builder.get_relative_uri(self.nowhere, pagename), ()):
            hrefs[number] = anchor or "#"  # (a link to the page itself: its anchor alone)
            if not anchor:
                for node in branch:
                    counts[node] = counts.get(node, 0) + 1
        last = max((n for n in counts if n in self.entry_order),
                   key=self.entry_order.__getitem__, default=None)
        html = _write_marks(self.html, counts, hrefs, None)
        return html, None if self.sidebar is None else _write_marks(self.sidebar, counts,
                                                                     hrefs, last)


def _write_marks(text: str, counts: dict[int, int], hrefs: dict[int, str],
                 current_page: int | None) -> str:
    """``text`` with each marker replaced by its node's ``current`` classes (none: the
    marker goes; a class attribute left empty goes too), the page's own links pointing
    at the page, and furo's marks: ``current-page`` on entry ``current_page``, and the
    checkbox of every ``current`` entry checked."""
    entry = [None]

    def tag(match: re.Match) -> str:
        name, attributes = match.groups()
        number = None

        def classes(found: re.Match) -> str:
            nonlocal number
            words = []
            for word in found.group(1).split():
                if word.startswith(_MARKER):
                    number = int(word[len(_MARKER):])
                    words += ["current"] * counts.get(number, 0)
                else:
                    words.append(word)
            if name == "li" and number is not None and number == current_page:
                words.append("current-page")
            return f' class="{" ".join(words)}"' if words else ""

        attributes = _CLASS_ATTRIBUTE.sub(classes, attributes, count=1)
        if number in hrefs:
            attributes = _HREF_ATTRIBUTE.sub(lambda _: f' href="{hrefs[number]}"', attributes,
                                             count=1)
        if name == "li":
            entry[0] = number
        elif name == "input" and counts.get(entry[0]) and "toctree-checkbox" in attributes:
            attributes = attributes.replace(' class="', ' checked="" class="', 1)
        return f"<{name}{attributes}>"

    return _START_TAG.sub(tag, text)


_NAVIGATION: dict[tuple[int, str], _FolderNavigation | None] = {}


def _page_navigation(builder: Any, pagename: str) -> str:
    """The page's titles-only tree (and, for furo, its sidebar, kept for furo to take)."""
    folder = pagename.rpartition("/")[0]
    key = (id(builder.env.tocs), folder)
    if key not in _NAVIGATION:
        found = _unmarked_tree(builder, folder)
        _NAVIGATION[key] = None if found is None else _FolderNavigation(builder, folder,
                                                                         *found)
    navigation = _NAVIGATION[key]
    if navigation is None:
        return ""
    if not navigation.trusted:
        return _marked_toctree(builder, pagename)
    html, sidebar = navigation.texts(builder, pagename)
    if not navigation.checked and html != navigation.html:  # (the first page with marks)
        navigation.checked = True
        long_way = _marked_toctree(builder, pagename)
        navigation.trusted = long_way == html and (
            sidebar is None or _FURO_NAVIGATION[0](long_way) == sidebar)
        if not navigation.trusted:
            logger.info("difflab_docs: the sidebars of %s/ are built page by page", folder)
            return long_way
    if sidebar is not None:
        _SIDEBAR_OF[html] = sidebar
    return html


def furo_sidebar(toctree_html: str) -> str:
    """furo's ``get_navigation_tree``: the sidebar written for this tree, if there is one
    (taken: it is asked for once), else furo's own."""
    sidebar = _SIDEBAR_OF.pop(toctree_html, None)
    return sidebar if sidebar is not None else _FURO_NAVIGATION[0](toctree_html)


def use_written_sidebars() -> None:
    """Put :func:`furo_sidebar` where furo calls its ``get_navigation_tree``."""
    try:
        import furo
    except ImportError:  # (another theme: only the trees are written once per folder)
        return
    if callable(getattr(furo, "get_navigation_tree", None)) and not _FURO_NAVIGATION:
        _FURO_NAVIGATION.append(furo.get_navigation_tree)
        furo.get_navigation_tree = furo_sidebar


def titles_only_toctree(app: Any, pagename: str, templatename: str, context: dict,
                        doctree: Any) -> None:
    """Give the page's templates a ``toctree()`` that builds a titles-only tree from the
    trimmed tables of contents (runs before the theme, which calls it)."""
    toctree = context.get("toctree")
    if toctree is None:
        return
    env = app.builder.env

    def toctree_of_titles(**kwargs: Any) -> str:
        if not kwargs.get("titles_only"):
            return toctree(**kwargs)
        full = env.tocs
        folder = None
        if _in_no_toctree(env, pagename):
            folder = (id(full), pagename.rpartition("/")[0], tuple(sorted(kwargs.items())))
            if folder in _TREE_OF_FOLDER:
                return _TREE_OF_FOLDER[folder]
        if id(full) not in _TITLES_ONLY:
            _TITLES_ONLY.clear()
            _TREE_OF_FOLDER.clear()
            _TREE_TO_MARK.clear()
            _NAVIGATION.clear()
            _TITLES_ONLY[id(full)] = {name: _titles_only(toc) for name, toc in full.items()}
        env.tocs = _TITLES_ONLY[id(full)]
        try:
            if kwargs == _FURO_TREE and not any("tocdepth" in m for m in env.metadata.values()):
                tree = _page_navigation(app.builder, pagename)
            else:  # (a page's tocdepth would cut the tree differently in each folder)
                tree = toctree(**kwargs)
        finally:
            env.tocs = full
        if folder is not None:
            _TREE_OF_FOLDER[folder] = tree
        return tree

    context["toctree"] = toctree_of_titles


# ----------------------------------------------------------- numpydoc's template, once


@functools.cache
def _numpydoc_template(builder: Any) -> Any:
    """numpydoc's docstring template, loaded as its ``get_doc_object`` loads it (the
    builder's template path first, then numpydoc's own), compiled once."""
    from jinja2 import FileSystemLoader
    from jinja2.sandbox import SandboxedEnvironment
    from numpydoc import docscrape_sphinx
    from sphinx.jinja2glue import BuiltinTemplateLoader

    template_dirs = [str(Path(docscrape_sphinx.__file__).parent / "templates")]
    if builder is not None:
        loader: Any = BuiltinTemplateLoader()
        loader.init(builder, dirs=template_dirs)
    else:
        loader = FileSystemLoader(template_dirs)
    return SandboxedEnvironment(loader=loader).get_template("numpydoc_docstring.rst")


def numpydoc_doc_object(obj: Any, what: str | None = None, doc: str | None = None,
                        config: dict | None = None, builder: Any = None) -> Any:
    """``numpydoc.docscrape_sphinx.get_doc_object`` with the template compiled once."""
    from numpydoc.docscrape import get_doc_object
    from numpydoc.docscrape_sphinx import SphinxClassDoc, SphinxFunctionDoc, SphinxObjDoc

    config = {} if config is None else config
    config["template"] = _numpydoc_template(builder)
    return get_doc_object(obj, what=what, doc=doc, config=config, class_doc=SphinxClassDoc,
                          func_doc=SphinxFunctionDoc, obj_doc=SphinxObjDoc)


def compile_numpydoc_template_once() -> None:
    """numpydoc's module-level ``get_doc_object`` is its hook for a replacement (its
    ``setup(app, get_doc_object_=...)`` sets it); numpydoc calls it for every docstring
    and every signature."""
    try:
        import numpydoc.numpydoc
    except ImportError:  # (a site without numpydoc: nothing to speed up)
        return
    numpydoc.numpydoc.get_doc_object = numpydoc_doc_object


# ------------------------------------------------------------------- parallel reading


def mark_mathjax_offline_parallel_safe(app: Any) -> None:
    """sphinx-mathjax-offline's setup sets ``mathjax_path`` and, when the build has
    finished, copies MathJax into ``_static`` (once, in the main process): it keeps no
    state while documents are read or written, so it is safe in parallel; it only does
    not say so.  (Its setup returns no metadata; Sphinx then assumes the worst.)"""
    offline = app.extensions.get("sphinx-mathjax-offline")
    if offline is not None and offline.parallel_read_safe is None:
        offline.parallel_read_safe = True


def setup(app: Any) -> dict[str, Any]:
    # (conf.py lists this extension after sphinx-mathjax-offline, so that one is loaded)
    mark_mathjax_offline_parallel_safe(app)
    compile_numpydoc_template_once()
    use_written_sidebars()
    app.add_directive("click-help", ClickHelp)
    app.connect("autodoc-process-docstring", escape_docstring_bars, priority=400)
    app.connect("autodoc-process-docstring", shape_section_to_rubric, priority=400)
    # (numpydoc also parses the raw docstrings, for signatures and member lists, where Shape
    # is still a section it does not know; the page gets it from shape_section_to_rubric)
    warnings.filterwarnings("ignore", message="Unknown section Shape", category=UserWarning)
    app.connect("missing-reference", resolve_short_names)
    app.connect("autodoc-skip-member", skip_numpy_copies)
    app.connect("autodoc-skip-member", skip_inherited_overrides)
    app.connect("html-page-context", titles_only_toctree, priority=400)  # (furo: 500)
    app.connect("env-updated", _forget_trimmed_tocs)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
