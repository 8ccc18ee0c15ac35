"""The API reference as a reader sees it: three entries opened in a headless Chromium.

The build tests (``test_docs_build.py``) read the HTML that Sphinx writes, where the
mathematics is still TeX (``\\(\\nabla f\\)``) waiting for MathJax.  Here a real browser
loads the pages from a local web server, runs their JavaScript (the site's own copy of
MathJax) and hands back the document as it then is, so the checks see what a reader
sees: for ``dl.grad``, ``nn.Linear`` and ``Tensor.gather``, the numpydoc sections are
there, with a doctest under Examples; every formula was typeset by MathJax (no TeX left
as text, no MathJax error); and the See Also names are links to entries that exist.
A screenshot of each entry is taken too: set ``DIFFLAB_DOCS_SCREENSHOTS`` to a folder to
keep them (otherwise they go to the test's temporary folder).

The browser is driven through the W3C WebDriver protocol that ``chromedriver`` serves
over HTTP, with the standard library only.  Skipped where Chromium or its driver is
missing (on Debian: ``apt-get install chromium chromium-driver``).
"""

from __future__ import annotations

import base64
import functools
import http.server
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.docs.conftest import DocsBuild

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
CHROMIUM = next(filter(None, map(shutil.which, BROWSERS)), None)
DRIVER = shutil.which("chromedriver")

# (a mark, not a fixture's skip: it is read before the session's docs build is made)
pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    CHROMIUM is None or DRIVER is None,
    reason="no Chromium and chromedriver on PATH (on Debian: apt-get install chromium "
           "chromium-driver): the rendered API pages are checked in a headless browser")]
# A browser started only to render pages: no network of its own, no profile left behind.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--window-size=1280,2000"]

# The three entries, by their page and anchor (each object is documented where it is
# defined), and the numpydoc sections each must show.
ENTRIES = {
    "dl.grad": ("api/generated/difflab.diff.html", "difflab.diff.grad"),
    "nn.Linear": ("api/generated/difflab.nn.modules.layers.html",
                  "difflab.nn.modules.layers.Linear"),
    "Tensor.gather": ("api/generated/difflab.tensor.html", "difflab.tensor.Tensor.gather"),
}
SECTIONS = {
    "dl.grad": ("Parameters", "Returns", "Raises", "See also", "Notes", "Examples"),
    "nn.Linear": ("Shape", "Parameters", "Raises", "See also", "Examples"),  # (a class)
    "Tensor.gather": ("Parameters", "Returns", "Raises", "See also", "Examples"),
}

# Resolves with the page's HTML once MathJax has typeset it (MathJax 3's startup promise).
AFTER_MATHJAX = """
const done = arguments[arguments.length - 1];
const waitFor = (started) => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    MathJax.startup.promise.then(() => done(document.documentElement.outerHTML),
                                 (error) => done("MathJax failed: " + error));
  } else if (Date.now() - started > 30000) {
    done("MathJax did not start within 30 s");
  } else {
    setTimeout(() => waitFor(started), 50);
  }
};
waitFor(Date.now());
"""


class WebDriver:
    """A headless Chromium driven by ``chromedriver`` (W3C WebDriver over HTTP)."""

    def __init__(self, driver: str, binary: str) -> None:
        self.profile = tempfile.TemporaryDirectory()
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.process = subprocess.Popen([driver, f"--port={port}"], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                if self._call("GET", "/status")["ready"]:
                    break
            except (urllib.error.URLError, ConnectionError):
                pass
            if time.monotonic() > deadline:
                self.process.kill()
                raise RuntimeError(f"{driver} did not start within 30 s")
            time.sleep(0.1)
        options = {"binary": binary, "args": [*FLAGS, f"--user-data-dir={self.profile.name}"]}
        session = self._call("POST", "/session", {"capabilities": {"alwaysMatch": {
            "browserName": "chrome", "goog:chromeOptions": options}}})
        self.session = f"/session/{session['sessionId']}"
        self._call("POST", f"{self.session}/timeouts", {"script": 60_000, "pageLoad": 60_000})

    def _call(self, method: str, path: str, body: dict | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                return json.load(response)["value"]
        except urllib.error.HTTPError as exc:  # WebDriver's errors: a JSON body saying why
            raise RuntimeError(f"WebDriver {method} {path}: {exc.read().decode()[:2000]}") \
                from None

    def open(self, url: str) -> None:
        self._call("POST", f"{self.session}/url", {"url": url})

    def run(self, script: str, *args: Any, wait: bool = False) -> Any:
        """The value of ``script`` run in the page (``wait``: it calls back when done)."""
        kind = "async" if wait else "sync"
        return self._call("POST", f"{self.session}/execute/{kind}",
                          {"script": script, "args": list(args)})

    def screenshot(self, element: dict) -> bytes:
        """A PNG of one element as the page shows it, all of it even where it is taller
        than the window (Chromium's own capture; WebDriver's stops at the window)."""
        box = self.run("const r = arguments[0].getBoundingClientRect();"
                       "return [r.left + scrollX, r.top + scrollY, r.width, r.height];",
                       element)
        clip = dict(zip(("x", "y", "width", "height"), box, strict=True), scale=1)
        shot = self._call("POST", f"{self.session}/goog/cdp/execute", {
            "cmd": "Page.captureScreenshot",
            "params": {"format": "png", "clip": clip, "captureBeyondViewport": True}})
        return base64.b64decode(shot["data"])

    def quit(self) -> None:
        try:
            self._call("DELETE", self.session)
        finally:
            self.process.terminate()
            self.process.wait(timeout=30)
            self.profile.cleanup()


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    assert CHROMIUM is not None and DRIVER is not None  # (else the module is skipped)
    session = WebDriver(DRIVER, CHROMIUM)
    try:
        yield session
    finally:
        session.quit()


@pytest.fixture(scope="module")
def site(docs_build: DocsBuild) -> Iterator[str]:
    """The built site served over HTTP on this machine (as a reader would open it)."""
    if not docs_build.ok:
        pytest.skip("the docs build failed; see test_docs_build_without_warnings")
    handler = functools.partial(_QuietHandler, directory=str(docs_build.html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


class _Entry(HTMLParser):
    """One documented object of a page's DOM, read after its JavaScript ran: the text
    outside code and typeset math, the section titles, the links under each, the math.

    numpydoc's sections render three ways: Parameters, Returns and Raises as the titles
    of a field list (``<dt class="field-odd">``), See Also as an admonition (its
    ``admonition-title``), Notes and Examples as rubrics.
    """

    def __init__(self, anchor: str) -> None:
        super().__init__()
        self.anchor = anchor
        self.depth = 0  # > 0 inside the entry's <dl>
        self.member = 0  # > 0 inside the entry of a member (a class's method): not read
        self.skip = 0  # > 0 inside code, scripts or typeset math (their text is not prose)
        self.text: list[str] = []
        self.links: dict[str, list[str]] = {"": []}  # section title -> its links' hrefs
        self.code: dict[str, list[str]] = {}  # section title -> its code's text
        self.tex = 0  # formulas as Sphinx writes them, for MathJax (<span class="math">)
        self.math = 0  # typeset formulas (mjx-container elements)
        self.math_errors = 0  # formulas MathJax could not typeset
        self.math_text: list[str] = []  # the text inside formulas (\\text{...}), as typeset
        self._mtext = False
        self._title: list[str] | None = None  # the section title being read

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if self.depth == 0:
            if tag == "dt" and attributes.get("id") == self.anchor:
                self.depth = 1  # (the entry ends with the <dl> that holds this <dt>)
            return
        classes = (attributes.get("class") or "").split()
        if tag == "dl":
            self.depth += 1
            self.member += bool(self.member) or "py" in classes
        if self.member:
            return
        if tag in _NOT_PROSE:
            self.skip += 1
        self.tex += "math" in classes and tag in ("span", "div")
        self.math += tag == "mjx-container"
        self.math_errors += tag == "mjx-merror" or "data-mjx-error" in attributes
        if tag == "mtext":  # (in the MathML MathJax writes beside its output, for readers)
            self._mtext = True
            self.math_text.append("")
        if {"rubric", "admonition-title", "field-odd", "field-even"} & set(classes) and \
                tag in ("p", "dt"):
            self._title = []
        elif tag == "a" and attributes.get("href"):
            self.links[list(self.links)[-1]].append(attributes["href"] or "")

    def handle_endtag(self, tag: str) -> None:
        if self.depth == 0:
            return
        if tag == "dl":
            self.depth -= 1
            if self.member:
                self.member -= 1
                return
        if self.member:
            return
        if tag in _NOT_PROSE:
            self.skip -= 1
        self._mtext = self._mtext and tag != "mtext"
        if self._title is not None and tag in ("p", "dt"):
            self.links.setdefault("".join(self._title).strip().rstrip(":"), [])
            self._title = None

    def handle_data(self, data: str) -> None:
        if self.depth == 0 or self.member:
            return
        if self._title is not None:
            self._title.append(data)
        if self._mtext:
            self.math_text[-1] += data
        if self.skip == 0:
            self.text.append(data)
        else:
            self.code.setdefault(list(self.links)[-1], []).append(data)

    @property
    def sections(self) -> list[str]:
        return [title for title in self.links if title]


_NOT_PROSE = ("pre", "code", "script", "style", "mjx-container")


def _entry(dom: str, anchor: str) -> _Entry:
    entry = _Entry(anchor)
    entry.feed(dom)
    entry.close()
    assert entry.depth == 0 and entry.text, f"no entry {anchor} in the page"
    return entry


@pytest.mark.parametrize("name", list(ENTRIES))
def test_the_entry_as_a_reader_sees_it(name: str, browser: WebDriver, site: str,
                                       docs_build: DocsBuild, tmp_path: Path) -> None:
    page, anchor = ENTRIES[name]
    browser.open(f"{site}{page}#{anchor}")
    dom = browser.run(AFTER_MATHJAX, wait=True)
    assert dom.startswith("<html"), dom[:2000]
    assert 'src="../../_static/mathjax/tex-chtml.js"' in dom  # the site's own MathJax
    entry = _entry(dom, anchor)
    for section in SECTIONS[name]:
        assert section in entry.sections, f"{name}: no {section} section in {entry.sections}"
    examples = "".join(entry.code.get("Examples", []))
    assert ">>> " in examples, f"{name}: no doctest under Examples"
    # every formula of the entry typeset: as many as Sphinx wrote for MathJax
    written = _entry((docs_build.html / page).read_text(encoding="utf-8"), anchor)
    assert written.tex > 0, f"{name}: the entry has no formula"
    assert entry.math == written.tex, f"{name}: {entry.math} of {written.tex} formulas typeset"
    assert entry.math_errors == 0, f"{name}: MathJax could not typeset {entry.math_errors}"
    # (\\text{fan\\_in} needs MathJax's textmacros, or the page shows the backslash)
    shown_raw = [text for text in entry.math_text if "\\" in text]
    assert not shown_raw, f"{name}: TeX shown as text inside formulas: {shown_raw}"
    prose = "".join(entry.text)
    for raw in ("\\(", "\\)", "\\[", "\\]", "$", ":math:"):
        assert raw not in prose, f"{name}: TeX left as text ({raw!r}) after MathJax ran"
    # See Also: every name a link, to an entry that exists (the page and the anchor on it)
    see_also = entry.links["See also"]
    assert see_also, f"{name}: See Also names no linked entry"
    base = (docs_build.html / page).parent
    for link in see_also:
        target, _, fragment = link.partition("#")
        assert not urlsplit(link).scheme, f"{name}: See Also leaves the site: {link}"
        file = (base / target).resolve() if target else docs_build.html / page
        assert file.is_file(), f"{name}: the link {link} leads to no page"
        assert fragment and f'id="{fragment}"' in file.read_text(encoding="utf-8"), \
            f"{name}: the link {link} leads to no entry"
    # the entry as a picture: the <dl> that holds its signature, as the page shows it
    element = browser.run("return document.getElementById(arguments[0]).parentElement;",
                          anchor)
    folder = Path(os.environ.get("DIFFLAB_DOCS_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    picture = folder / f"{name}.png"
    picture.write_bytes(browser.screenshot(element))
    _assert_not_blank(picture, name)


def _assert_not_blank(picture: Path, name: str) -> None:
    from PIL import Image  # (Pillow: matplotlib's dependency)

    with Image.open(picture) as image:
        width, height = image.size
        colours = image.convert("RGB").getcolors(maxcolors=1 << 16)
    assert width > 400 and height > 200, f"{name}: a screenshot of {width}x{height}"
    assert colours is None or len(colours) > 50, f"{name}: the screenshot is almost blank"
