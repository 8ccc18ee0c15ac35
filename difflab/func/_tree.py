"""Pytrees: nested tuples, lists and dicts of leaves, flattened and rebuilt.

The transforms take and return such trees (``vmap``'s ``in_dims``, ``grad``'s
``argnums`` over a tuple of tensors, ``functional_call``'s parameter dict).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def flatten(tree: Any) -> tuple[list, Callable[[list], Any]]:
    """(leaves, rebuild): ``rebuild(leaves)`` makes a tree of the same structure."""
    if isinstance(tree, (tuple, list)):
        parts = [flatten(t) for t in tree]
        leaves = [leaf for p in parts for leaf in p[0]]
        counts = [len(p[0]) for p in parts]
        kind = type(tree)

        def rebuild(values: list) -> Any:
            out, start = [], 0
            for (_, sub), n in zip(parts, counts):
                out.append(sub(values[start:start + n]))
                start += n
            return kind(*out) if hasattr(kind, "_fields") else kind(out)  # (a namedtuple)

        return leaves, rebuild
    if isinstance(tree, dict):
        keys = list(tree)
        leaves, rebuild_values = flatten([tree[k] for k in keys])
        return leaves, lambda values: dict(zip(keys, rebuild_values(values)))
    return [tree], lambda values: values[0]


def broadcast_prefix(prefix: Any, tree: Any, what: str) -> list:
    """One entry of ``prefix`` per leaf of ``tree``; a leaf of the prefix covers a subtree.

    ``vmap(f, in_dims=(0, None))`` on ``(xs, (a, b))`` gives ``[0, None, None]``.
    """
    if isinstance(prefix, (tuple, list)):
        if not isinstance(tree, (tuple, list)) or len(prefix) != len(tree):
            raise ValueError(
                f"{what} {prefix!r} is not compatible with the structure of the "
                f"{'inputs' if 'in' in what else 'outputs'}: it has "
                f"{len(prefix)} entries where there is {_describe(tree)}")
        return [d for p, t in zip(prefix, tree) for d in broadcast_prefix(p, t, what)]
    if isinstance(prefix, dict):
        if not isinstance(tree, dict) or set(prefix) != set(tree):
            raise ValueError(f"{what} {prefix!r} is not compatible with the structure of "
                             f"{_describe(tree)}: the keys must be the same")
        return [d for k in tree for d in broadcast_prefix(prefix[k], tree[k], what)]
    return [prefix] * len(flatten(tree)[0])


def _describe(tree: Any) -> str:
    if isinstance(tree, (tuple, list)):
        return f"a {type(tree).__name__} of {len(tree)}"
    if isinstance(tree, dict):
        return f"a dict with keys {sorted(map(str, tree))}"
    return f"one {type(tree).__name__}"
