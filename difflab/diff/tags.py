"""Tags: which derivative a dual number belongs to, and how long that derivative lasts.

Each derivative call makes a fresh tag (:func:`new_tag`); an operation on dual
numbers works on the newest tag among its operands (see :mod:`difflab.diff.dual`,
"Perturbation confusion and tags").  A ``torch.autograd.forward_ad`` level is a tag
too, with PyTorch's rules: inside it a dual tensor gives its values to ``item()``,
``float()`` and NumPy (:func:`readable_values`); when the level ends its tag ends
(:func:`end_tag`), and its dual numbers are only their values.
"""

from __future__ import annotations

import itertools
from typing import Any

_tags = itertools.count(1)

#: Tags whose derivative is over (an exited ``forward_ad`` level).
ENDED: set[int] = set()
#: Tags whose dual numbers give their values where a plain number is asked: the forward_ad
#: levels', and the ended ones.  Elsewhere (jacfwd, ``dl.diff``) that raises: it would
#: drop the tangent.
VALUES_READABLE: set[int] = set()


def new_tag() -> int:
    """A fresh tag: newer than every dual number made so far."""
    return next(_tags)


def readable_values(tag: int) -> None:
    """Let dual numbers of ``tag`` give their values to ``item()``, ``float()``, NumPy."""
    VALUES_READABLE.add(tag)


def end_tag(tag: int) -> None:
    """Mark ``tag``'s derivative as over: its dual numbers become plain values."""
    ENDED.add(tag)
    VALUES_READABLE.add(tag)


def readable_values_of(x: Any) -> Any:
    """``x`` with every dual layer of a readable tag peeled off (another stops the peel)."""
    while getattr(x, "tag", None) in VALUES_READABLE:
        x = x.primal
    return x
