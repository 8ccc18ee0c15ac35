"""Speed shortcuts of the backward walk, for a training loop's common call.  Skip it.

:func:`difflab.autograd.engine.run_backward` is the whole backward pass; this
module replaces two of its steps, for the cases that cover a training loop,
by code that computes the same bits with less Python around it:

* :func:`walk_one_record`: a tape of *one* record whose inputs are all leaves
  (a ``dl.compile``'d loss: its whole graph is one record on the tape).  The
  plain walk gathers the reachable records, sorts them, looks for adjoints to
  read on the way (``retain_grad``, ``autograd.grad``) and for hooks; with one
  record and nothing to read, it only calls the record's VJP and adds the
  adjoints into the store.  So this does just that.
* :func:`deliver_to_leaves`: the last step, each leaf's adjoint into its
  ``.grad``.  For a leaf with no hooks whose adjoint is a NumPy array of the
  leaf's shape and dtype, :func:`~difflab.autograd.engine.accumulate_grad`
  comes down to "the adjoint (copied unless this pass allocated it for the
  leaf alone) becomes ``.grad``, or is added into it"; that is done here on
  the raw arrays, without the tensor wrappers and property look-ups.  Every
  other leaf (hooks, another device, a broadcast adjoint, another dtype) takes
  the plain step.

Both are used only with the shortcuts on (``DIFFLAB_FASTPATH`` unset or 1, see
:mod:`difflab.fastpath`); ``tests/core/test_core_engine_steady.py`` runs the same
programs with them off and compares every gradient bit for bit.  This module
imports nothing of the engine (the engine imports it): what it needs is passed in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def has_one_record(node: Any, record_type: type) -> bool:
    """Whether the tape below ``node`` is ``node`` alone, with nothing to do on the way.

    True when every input of ``node`` is a leaf or a constant (no other record of type
    ``record_type`` among its ``parents``), and ``node`` has no module hook (``joint``),
    no tensor hook and no ``retain_grad`` reader.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.autograd import engine
    >>> from difflab.autograd.engine_steady import has_one_record
    >>> x = dl.tensor([1.0, 2.0], requires_grad=True)
    >>> has_one_record((x * x).grad_fn, engine.Node), has_one_record((x * x).sum().grad_fn,
    ...                                                                engine.Node)
    (True, False)
    """
    if node.joint is not None or node.hooks or node.retained is not None:
        return False
    for parent in node.parents:
        if isinstance(parent, record_type):
            return False
    return True


def walk_one_record(node: Any, g: Any, retain_graph: bool, store: Any) -> None:
    """The backward walk of a tape of one record (see :func:`has_one_record`).

    ``g`` is the output's adjoint (the seed); the inputs' adjoints go into ``store``
    (an empty adjoint store of the engine), as the plain walk adds them, in the
    order of ``node.parents``.  The saved values are freed unless ``retain_graph``.

    Examples
    --------
    >>> import numpy as np, difflab as dl
    >>> from difflab.autograd import engine
    >>> from difflab.autograd.engine_steady import walk_one_record
    >>> x = dl.tensor([1.0, 2.0], requires_grad=True)
    >>> store = engine._AdjointStore()
    >>> walk_one_record((x * x).grad_fn, np.ones(2), False, store)
    >>> store[x]
    array([2., 4.])
    """
    input_grads = node.vjp(g, False)
    for parent, input_grad in zip(node.parents, input_grads):
        if parent is not None and input_grad is not None:
            store.add(parent, input_grad)
    if not retain_graph:
        node.release()


def deliver_to_leaves(adjoints: Any, wrap: Callable, plain: Callable) -> None:
    """Each leaf's adjoint in ``adjoints`` into its ``.grad`` (first order, no ``create_graph``).

    The common leaf (no hook, a NumPy adjoint of its own shape and dtype) is done
    here: ``.grad`` becomes the adjoint, copied unless the pass allocated it for that
    leaf alone (``adjoints.total``'s second answer), or the adjoint is added into the
    existing ``.grad`` in place.  ``plain(leaf, g, private)`` does any other leaf (the
    engine's own step, hooks and all); ``wrap`` makes a tensor of an array.

    Examples
    --------
    >>> import numpy as np, difflab as dl
    >>> from difflab.autograd import engine
    >>> from difflab.autograd.engine_steady import deliver_to_leaves
    >>> w = dl.tensor([1.0, 2.0], dtype=dl.float64, requires_grad=True)
    >>> store = engine._AdjointStore(); store.add(w, np.array([0.5, 0.5]))
    >>> deliver_to_leaves(store, dl.Tensor._wrap, engine._deliver_to_leaf); w.grad
    tensor([0.5, 0.5], dtype=difflab.float64)
    """
    for leaf in list(adjoints):
        g, private = adjoints.total(leaf)
        deliver_to_leaf(leaf, g, private, wrap, plain)


def deliver_to_leaf(leaf: Any, g: Any, private: bool, wrap: Callable, plain: Callable) -> None:
    """One leaf's total adjoint ``g`` into its ``.grad``, as :func:`deliver_to_leaves` does.

    ``private``: whether the pass allocated ``g`` for this leaf alone (then it may
    become ``.grad`` without a copy).

    Examples
    --------
    >>> import numpy as np, difflab as dl
    >>> from difflab.autograd import engine
    >>> from difflab.autograd.engine_steady import deliver_to_leaf
    >>> w = dl.tensor([1.0, 2.0], dtype=dl.float64, requires_grad=True)
    >>> g = np.array([0.5, 0.5])
    >>> deliver_to_leaf(w, g, False, dl.Tensor._wrap, engine._deliver_to_leaf)
    >>> deliver_to_leaf(w, g, False, dl.Tensor._wrap, engine._deliver_to_leaf); w.grad
    tensor([1., 1.], dtype=difflab.float64)
    """
    array = leaf.array
    if (type(g) is np.ndarray and type(array) is np.ndarray and g.shape == array.shape
            and g.dtype == array.dtype and not getattr(leaf, "_backward_hooks", None)
            and not getattr(leaf, "_post_accumulate_grad_hooks", None)):
        grad = leaf.grad
        if grad is None:
            leaf.grad = wrap(g if private else g.copy())
        else:
            grad.array += g
    else:
        plain(leaf, g, private)
