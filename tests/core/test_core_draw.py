"""autograd.draw: leaves named by their variables, laid out left to right without crossings."""

from __future__ import annotations

import itertools

import pytest

pytest.importorskip("matplotlib")

import difflab as dl  # noqa: E402
from difflab import autograd  # noqa: E402
from difflab.autograd.tape import _order_columns  # noqa: E402


def texts(drawing) -> dict[str, tuple[float, float]]:
    ax = drawing.figure.axes[0]
    return {t.get_text(): t.get_position() for t in ax.texts if t.get_text()}


def test_leaves_are_named_by_the_callers_variables():
    x1 = dl.tensor(2.0, requires_grad=True)
    x2 = dl.tensor(5.0, requires_grad=True)
    labels = texts(autograd.draw(dl.log(x1) + x1 * x2 - dl.sin(x2)))
    assert "x1\n()" in labels and "x2\n()" in labels
    assert not any(label.startswith("leaf") for label in labels)


def test_names_argument_wins_and_unknown_leaves_say_leaf():
    weight = dl.ones(3, 2, requires_grad=True)
    labels = texts(autograd.draw((weight @ dl.ones(2)).sum(), names={"W": weight}))
    assert "W\n(3, 2)" in labels

    def inner():
        # the caller's frame has no name for this leaf: it is called "leaf"
        return autograd.draw(dl.sin(dl.ones(2, requires_grad=True)).sum())

    assert "leaf\n(2,)" in texts(inner())


def test_data_flows_left_to_right():
    x = dl.tensor(0.5, requires_grad=True)
    labels = texts(autograd.draw(dl.exp(dl.sin(x))))
    assert labels["x\n()"][0] < labels["sin\n()"][0] < labels["exp\n()"][0]


def crossings(columns, edges, height) -> int:
    count = 0
    for (a, b), (c, d) in itertools.combinations(edges, 2):
        if columns[a] == columns[c] and columns[b] == columns[d]:
            if (height[a] - height[c]) * (height[b] - height[d]) < 0:
                count += 1
    return count


def test_ordering_removes_avoidable_crossings():
    # two columns wired crosswise in the order given: a-z, b-y, c-x
    left, right = ["a", "b", "c"], ["x", "y", "z"]
    edges = [("a", "z"), ("b", "y"), ("c", "x")]
    column = {**dict.fromkeys(left, 0), **dict.fromkeys(right, 1)}
    height = _order_columns([list(left), list(right)], edges)
    assert crossings(column, edges, height) == 0


def test_the_notebook_graph_has_no_crossings():
    x1 = dl.tensor(2.0, requires_grad=True)
    x2 = dl.tensor(5.0, requires_grad=True)
    y = dl.log(x1) + x1 * x2 - dl.sin(x2)
    ax = autograd.draw(y).figure.axes[0]
    # each arrow: from (x0, y0) to (x1, y1); two arrows between the same columns must
    # keep their vertical order
    arrows = [(a.xyann, a.xy) for a in ax.texts if not a.get_text()]
    for (p0, p1), (q0, q1) in itertools.combinations(arrows, 2):
        if round(p0[0]) == round(q0[0]) and round(p1[0]) == round(q1[0]):
            assert (p0[1] - q0[1]) * (p1[1] - q1[1]) >= 0
