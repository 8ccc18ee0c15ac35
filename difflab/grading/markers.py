"""Points and visibility for instructor tests.

Instructors already know two conventions: MiniTorch tags each test with a pytest marker
(``@pytest.mark.task1_1``) and the Gradescope pytest helpers attach a weight
(``@weight(2)``) and a visibility (``@visibility("after_due_date")``).  difflab uses one
pytest marker, ``points``, that carries all three::

    from difflab.grading import points

    @points(2)
    def test_sin_rule():
        ...

    @points(1, hidden=True)            # shown to the student only after the due date
    def test_sin_rule_many_points():
        ...

    @pytest.mark.points(1, tags=["dual"])   # the plain pytest spelling works too
    def test_mul_rule():
        ...

A test without the marker is worth :data:`DEFAULT_POINTS` point.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported by points(), in the test process: the grader's parent and
    import pytest  # the student's process do not need pytest

__all__ = ["points", "TestMeta", "read_marker", "hidden_blocks", "DEFAULT_POINTS",
           "VISIBILITIES", "OUTPUT_FORMATS", "BEGIN_HIDDEN", "END_HIDDEN"]

#: Points of a test that carries no ``points`` marker.
DEFAULT_POINTS = 1.0

#: The visibility values Gradescope understands, from most to least private.
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")

MARKER_HELP = (
    "points(value, hidden=False, visibility=None, name=None, tags=(), partial=False, "
    "number=None, output_format=None, extra_credit=False): "
    "the points a test is worth when graded by `difflab grade`"
)
#: The lines that fence tests only the grader sees (nbgrader's markers).
BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
#: Formats Gradescope renders a test's output in.
OUTPUT_FORMATS = ("text", "html", "simple_format", "md", "ansi")


def points(
    value: float,
    *,
    hidden: bool = False,
    visibility: str | None = None,
    name: str | None = None,
    tags: Iterable[str] = (),
    partial: bool = False,
    number: str | None = None,
    output_format: str | None = None,
    extra_credit: bool = False,
) -> pytest.MarkDecorator:
    """Mark a test as worth ``value`` points.

    Parameters
    ----------
    value : float
        Points awarded when the test passes (zero when it fails). Must be >= 0.
    hidden : bool, optional
        Hide the test's result and output from the student until after the due date
        (Gradescope visibility ``"after_due_date"``), like nbgrader's hidden tests.
    visibility : str, optional
        An explicit Gradescope visibility (one of :data:`VISIBILITIES`); overrides
        ``hidden``.
    name : str, optional
        The name shown to the student; defaults to the test function's name.
    tags : iterable of str, optional
        Gradescope tags, e.g. the concept the test checks.
    partial : bool, optional
        A failing test may earn part of ``value``: the fraction of elements its checks
        found right, or the weights of its named sub-checks that passed
        (:mod:`difflab.grading.credit`).
    number : str, optional
        The test's number as Gradescope shows it (``"1.2"``); by default file.test.
    output_format : str, optional
        How Gradescope renders the test's output (one of :data:`OUTPUT_FORMATS`, e.g.
        ``"md"``).
    extra_credit : bool, optional
        The test adds ``value`` to the score when it passes but not to the maximum
        (Gradescope's ``max_score`` 0).

    Returns
    -------
    pytest.MarkDecorator
        Use it as a decorator on a test function or class.

    Examples
    --------
    >>> @points(2, tags=["chain rule"])
    ... def test_backward():
    ...     pass
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError(f"points(...) needs a number >= 0, got {value!r}")
    if visibility is not None and visibility not in VISIBILITIES:
        raise ValueError(f"visibility must be one of {VISIBILITIES}, got {visibility!r}")
    if output_format is not None and output_format not in OUTPUT_FORMATS:
        raise ValueError(f"output_format must be one of {OUTPUT_FORMATS}, got {output_format!r}")
    if number is not None and not isinstance(number, str):
        raise ValueError(f"number is a string such as '1.2', got {number!r}")
    import pytest

    return pytest.mark.points(
        float(value), hidden=hidden, visibility=visibility, name=name, tags=tuple(tags),
        partial=bool(partial), number=number, output_format=output_format,
        extra_credit=bool(extra_credit),
    )


@dataclass
class TestMeta:
    """What the grader needs to know about one collected test."""

    __test__ = False  # not a test class, despite the name

    nodeid: str
    name: str
    max_score: float = DEFAULT_POINTS
    visibility: str = "visible"
    tags: list[str] = field(default_factory=list)
    partial: bool = False
    number: str | None = None
    output_format: str | None = None
    extra_credit: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "nodeid": self.nodeid,
            "name": self.name,
            "max_score": self.max_score,
            "visibility": self.visibility,
            "tags": list(self.tags),
            "partial": self.partial,
            "number": self.number,
            "output_format": self.output_format,
            "extra_credit": self.extra_credit,
        }


def hidden_blocks(source: str) -> list[tuple[int, int]]:
    r"""The ``(first, last)`` lines (1-based) of each hidden-tests block of ``source``.

    A block runs from a ``### BEGIN HIDDEN TESTS`` line to the next ``### END HIDDEN
    TESTS`` line; an unclosed block runs to the end of the file (the release refuses it).

    Examples
    --------
    >>> hidden_blocks("a = 1\n### BEGIN HIDDEN TESTS\nb = 2\n### END HIDDEN TESTS\n")
    [(2, 4)]
    """
    blocks, start = [], None
    lines = source.splitlines()
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if text.startswith(BEGIN_HIDDEN) and start is None:
            start = number
        elif text.startswith(END_HIDDEN) and start is not None:
            blocks.append((start, number))
            start = None
    if start is not None:
        blocks.append((start, len(lines)))
    return blocks


_BLOCKS: dict[str, list[tuple[int, int]]] = {}


def _in_hidden_block(item: Any) -> bool:
    """Whether a test's definition lies in a hidden-tests block of its file."""
    try:
        path, lineno, _ = item.reportinfo()
        path = str(path)
        if path not in _BLOCKS:
            with open(path, encoding="utf-8") as fh:
                _BLOCKS[path] = hidden_blocks(fh.read())
    except (OSError, ValueError, TypeError, AttributeError):
        return False
    line = (lineno or 0) + 1  # pytest's line numbers are 0-based
    return any(first <= line <= last for first, last in _BLOCKS[path])


def read_marker(item: Any) -> TestMeta:
    """Read the ``points`` marker of a collected pytest item into a :class:`TestMeta`.

    A test defined in a hidden-tests block is left out of the student release, so it is
    hidden as ``hidden=True`` hides it (its result shown after the due date) even when
    its marker says ``"visible"``; a more private visibility is kept.
    """
    meta = _read_points(item)
    if meta.visibility == "visible" and _in_hidden_block(item):
        meta.visibility = "after_due_date"
    return meta


def _read_points(item: Any) -> TestMeta:
    marker = item.get_closest_marker("points")
    meta = TestMeta(nodeid=item.nodeid, name=item.name)
    if marker is None:
        return meta
    args, kwargs = marker.args, dict(marker.kwargs)
    if args:
        meta.max_score = float(args[0])
    elif "value" in kwargs:
        meta.max_score = float(kwargs["value"])
    if kwargs.get("hidden"):
        meta.visibility = "after_due_date"
    if kwargs.get("visibility"):
        meta.visibility = str(kwargs["visibility"])
    if kwargs.get("name"):
        meta.name = str(kwargs["name"])
    meta.tags = [str(t) for t in kwargs.get("tags", ())]
    meta.partial = bool(kwargs.get("partial"))
    meta.extra_credit = bool(kwargs.get("extra_credit"))
    if isinstance(kwargs.get("number"), str):
        meta.number = kwargs["number"]
    if kwargs.get("output_format") in OUTPUT_FORMATS:
        meta.output_format = kwargs["output_format"]
    return meta
