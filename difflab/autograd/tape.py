"""Watching the tape: print the Wengert list, draw the graph.

>>> with difflab.autograd.tape() as t:
...     y = (x * w).sin().sum()
>>> print(t)
forward pass (the Wengert list):
  v1 = x              shape (3,)  leaf, requires grad
  v2 = w              shape (3,)  leaf, requires grad
  v3 = mul(v1, v2)    shape (3,)
  v4 = sin(v3)        shape (3,)
  v5 = sum(v4)        shape ()
backward pass (what v5.backward() does, in this order):
  v̄5 = 1
  v̄4 += broadcast(v̄5)            sum: VJP broadcasts back
  v̄3 += v̄4 · sin'(v3)            d sin(x)/dx = cos(x)
  v̄1 += v̄3 · ∂mul/∂a             ∂(a·b)/∂a = b,  ∂(a·b)/∂b = a
  v̄2 += v̄3 · ∂mul/∂b
  ...

:func:`draw` renders the graph of a tensor with matplotlib (SVG or PNG,
shown inline in Jupyter); it needs no Graphviz or other system program.
"""

from __future__ import annotations

import inspect
import io
from collections.abc import Mapping
from typing import Any

from difflab.autograd.engine import Node, TapeRecorder, reachable
from difflab.ops.elementwise_primitives import BinaryOp, UnaryOp
from difflab.tensor import Tensor


class Tape:
    """The records made inside a ``with tape():`` block, printable as a Wengert list.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([1.0, 2.0], requires_grad=True)
    >>> with dl.autograd.tape() as t:
    ...     y = dl.exp(x).sum()
    >>> len(t)                   # two records: exp and sum
    2
    """

    def __init__(self) -> None:
        self.records: list[tuple[Node, Tensor, tuple]] = []
        self._previous: list | None = None

    def __enter__(self) -> Tape:
        self._previous = TapeRecorder.active
        TapeRecorder.active = self.records
        return self

    def __exit__(self, *exc: object) -> None:
        TapeRecorder.active = self._previous

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self):
        return iter(self.records)

    def _names(self) -> tuple[dict, list[str]]:
        """Name every tensor v1, v2, ... in order of appearance; lines of the forward list."""
        names: dict[int, str] = {}
        lines: list[str] = []

        def name_of(t: Any) -> str:
            if not isinstance(t, Tensor):
                return repr(t) if isinstance(t, (int, float)) else "const"
            if id(t) not in names:
                names[id(t)] = f"v{len(names) + 1}"
                kind = "leaf, requires grad" if t.requires_grad else "constant"
                if t.array.size == 1:
                    kind += f", value {t.array.reshape(-1)[0].item():.4g}"
                lines.append(f"{names[id(t)] + ' = input':<28}shape {tuple(t.shape)}  {kind}")
            return names[id(t)]

        for node, output, inputs in self.records:
            args = ", ".join(name_of(t) for t in inputs)
            names[id(output)] = f"v{len(names) + 1}"
            lines.append(
                f"{names[id(output)] + ' = ' + node.op.name + '(' + args + ')':<28}"
                f"shape {tuple(output.shape)}"
            )
        return names, lines

    def __str__(self) -> str:
        if not self.records:
            return "the tape is empty: no operation on a tensor that requires grad was recorded"
        names, forward_lines = self._names()
        out = ["forward pass (the Wengert list):"]
        out += ["  " + line for line in forward_lines]
        last = names[id(self.records[-1][1])]
        out.append(f"backward pass (what {last}.backward() does, in this order):")
        out.append(f"  {last}\u0304 = 1")
        for node, output, inputs in reversed(self.records):
            bar = names[id(output)] + "\u0304"
            targets = [
                (k, names.get(id(t))) for k, t in enumerate(inputs)
                if isinstance(t, Tensor) and t.requires_grad
            ]
            for position, (k, target) in enumerate(targets):
                rule = _rule_text(node, k, names.get(id(inputs[0]), "?"))
                note = _rule_note(node) if position == 0 else ""
                out.append(f"  {f'{target}̄ += {rule.format(g=bar)}':<34}{note}")
        return "\n".join(out)

    def __repr__(self) -> str:
        return f"<Tape with {len(self.records)} records>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))


def _rule_text(node: Node, k: int, first_input: str) -> str:
    op = node.op
    if isinstance(op, UnaryOp):
        return "{g} · " + f"{op.name}'({first_input})"
    if isinstance(op, BinaryOp):
        return "{g} · " + f"∂{op.name}/∂{'ab'[k]}"
    return "vjp_" + op.name + "({g})" + (f"[{k}]" if len(node.parents) > 1 else "")


def _rule_note(node: Node) -> str:
    op = node.op
    if op.math:
        return op.math
    doc = (getattr(op, "__doc__", "") or "").strip().splitlines()
    return doc[0].replace("``", "") if doc else ""


def tape() -> Tape:
    """Record the operations of a block so they can be printed (see :class:`Tape`).

    Returns
    -------
    Tape
        A context manager; inside it every recorded operation is kept, and ``print``
        shows them as a numbered Wengert list with the backward pass that would follow.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([1.0, 2.0], requires_grad=True)
    >>> with dl.autograd.tape() as t:
    ...     y = (x * x).sin().sum()
    >>> print(t)
    forward pass (the Wengert list):
      v1 = ...                    shape (2,)  leaf, requires grad
      v2 = mul(v1, v1)            shape (2,)
      v3 = sin(v2)                shape (2,)
      v4 = sum(v3)                shape ()
    backward pass (what v4.backward() does, in this order):
    ...
    """
    return Tape()


# ------------------------------------------------------------------------- drawing


class GraphDrawing:
    """A drawing of the graph behind a tensor; shows itself in Jupyter, saves to SVG or PNG."""

    def __init__(self, figure: Any) -> None:
        self.figure = figure

    def _repr_svg_(self) -> str:
        buffer = io.StringIO()
        self.figure.savefig(buffer, format="svg", bbox_inches="tight")
        return buffer.getvalue()

    def save(self, path: str) -> None:
        """Write the drawing; the format follows the file's extension (.svg, .png, .pdf)."""
        self.figure.savefig(path, bbox_inches="tight", dpi=150)


def draw(tensor: Tensor, title: str | None = None,
         names: Mapping[str, Tensor] | None = None) -> GraphDrawing:
    """Draw the graph that produced ``tensor``, left to right: inputs, operations, ``tensor``.

    Boxes are operations (the primitive's name and the output's shape); ellipses are
    leaves, labelled with their variable names.  ``names`` maps names to tensors (as
    ``dict(model.named_parameters())``, the convention of PyTorch's graph drawers);
    a leaf it does not name is looked up among the caller's variables, and is
    called ``leaf`` if none refers to it.  Uses matplotlib only.

    Layout (a small Sugiyama layout): an operation sits one column right of its
    rightmost input, a leaf just left of its first use, so every edge points right
    and few edges skip a column; within a column
    the items are ordered by the mean height of their neighbours, sweeping right and
    left a few times, which removes the crossings that can be removed.

    Parameters
    ----------
    tensor : Tensor
        The output whose graph is drawn.
    title : str, optional
        A title above the drawing.
    names : mapping of str to Tensor, optional
        Names for leaves (``dict(model.named_parameters())``).

    Returns
    -------
    GraphDrawing
        Shown inline in Jupyter (SVG); ``.save(path)`` writes SVG or PNG, ``.figure`` is
        the matplotlib figure.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([1.0, 2.0], requires_grad=True)
    >>> drawing = dl.autograd.draw((x * x).sin().sum(), names={"x": x})
    >>> drawing._repr_svg_().lstrip().startswith("<?xml")
    True
    """
    from matplotlib.figure import Figure  # no pyplot: works with any (or no) display

    if tensor.grad_fn is None:
        raise ValueError("this tensor has no graph (it is a leaf): there is nothing to draw")
    labels = _leaf_names(names, inspect.currentframe().f_back)
    # Columns: leaves 0, an operation 1 + the largest column of its inputs.
    column: dict[Any, int] = {}
    edges = []
    for node in sorted(reachable([tensor.grad_fn]), key=lambda n: n.seq):  # inputs first
        inputs = [p for p in node.parents if p is not None]
        for parent in inputs:
            column.setdefault(parent, 0)  # a leaf (a Node already has its column)
            edges.append((parent, node))
        column[node] = 1 + max((column[p] for p in inputs), default=0)
    for leaf in [item for item in column if not isinstance(item, Node)]:
        # a leaf moves right, next to its first use: no edge from a leaf skips a column
        column[leaf] = min(column[node] for parent, node in edges if parent is leaf) - 1
    last = max(column.values())
    columns: list[list] = [[] for _ in range(last + 1)]
    for item in column:  # dicts keep insertion order: first use first
        columns[column[item]].append(item)
    height = _order_columns(columns, edges)
    fig = Figure(figsize=(max(4.0, 1.9 * (last + 1)),
                          max(2.0, 0.9 * max(len(c) for c in columns) + 1)))
    ax = fig.subplots()
    for parent, node in edges:
        (x0, y0), (x1, y1) = (column[parent], height[parent]), (column[node], height[node])
        ax.annotate("", xy=(x1 - 0.34, y1), xytext=(x0 + 0.34, y0),
                    arrowprops={"arrowstyle": "->", "color": "#555555"})
    for item in column:
        shape = tuple(item.output_meta[0]) if isinstance(item, Node) else tuple(item.shape)
        if isinstance(item, Node):
            label, style, color = f"{item.op.name}\n{shape}", "round,pad=0.3", "#dbe9f6"
        else:
            label = f"{labels.get(id(item), 'leaf')}\n{shape}"
            style, color = "round4,pad=0.35", "#e6f4d7"
        ax.text(column[item], height[item], label, ha="center", va="center", fontsize=8,
                bbox={"boxstyle": style, "facecolor": color, "edgecolor": "#333333"})
    spread = max(len(c) for c in columns)
    ax.set_xlim(-0.7, last + 0.7)
    ax.set_ylim(-spread / 2 - 0.3, spread / 2 + 0.3)
    ax.axis("off")
    ax.set_title(
        title or "computation graph (data flows left to right; backward runs right to left)",
        fontsize=9,
    )
    return GraphDrawing(fig)


def _leaf_names(names: Mapping[str, Tensor] | None, frame: Any) -> dict[int, str]:
    """id(tensor) -> name: from ``names`` first, then the caller's local and global variables."""
    found: dict[int, str] = {}
    scopes = [dict(names or {})]
    if frame is not None:
        scopes += [frame.f_locals, frame.f_globals]
    for scope in scopes:
        for name, value in scope.items():
            if isinstance(value, Tensor) and not name.startswith("_"):
                found.setdefault(id(value), name)
    return found


def _order_columns(columns: list[list], edges: list) -> dict[Any, float]:
    """Heights for the items of each column, ordered to avoid crossing edges.

    The barycentre heuristic: sort a column by the mean height of the items it is
    linked to in the columns already placed; sweep right, then left, a few times.
    """
    neighbours: dict[Any, list] = {}
    for a, b in edges:
        neighbours.setdefault(a, []).append(b)
        neighbours.setdefault(b, []).append(a)
    height: dict[Any, float] = {}

    def place(items: list) -> None:
        for i, item in enumerate(items):
            height[item] = (len(items) - 1) / 2 - i  # first item on top

    for items in columns:
        place(items)
    for sweep in range(4):
        for items in (columns[1:] if sweep % 2 == 0 else reversed(columns[:-1])):
            def barycentre(item: Any) -> float:
                linked = [height[n] for n in neighbours.get(item, ())]
                return -sum(linked) / len(linked) if linked else 0.0

            items.sort(key=barycentre)
            place(items)
    return height
