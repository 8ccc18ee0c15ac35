"""Speed shortcut of ``loss.backward()`` on a tape of one record.  Skip it on a first read.

``loss.backward()`` goes through :func:`difflab.autograd.functional.backward`
(outputs and seeds as lists, the seed checked against the output's shape,
the recorder asked whether it is tracing, the seeds made there noted as
implicit), then :func:`difflab.autograd.engine.run_backward`, which asks
whether the tape is one record (:mod:`difflab.autograd.engine_steady`,
shortcut 10) and, for a ``dl.compile``'d loss, finds it is.  Each layer is
a few tenths of a microsecond; on a compiled chain of 200 operations on 16
numbers, whose whole backward is handing over the gradients its forward
computed, the layers were most of the backward's 10 µs.

:func:`backward_one_record` takes the commonest call, ``loss.backward()``
(no ``gradient``, no ``inputs``, no ``create_graph``) of a scalar NumPy
loss whose tape is one record, not while a trace or a profile records, not under
anomaly detection, and does in one function exactly what those layers would: the seed
``ones_like(loss)``, noted as the implicit seed while the walk runs (a compiled
loss hands its gradients over at that seed), the one record's VJP, the leaves'
``.grad``, the queued callbacks.  The adjoints go to the leaves directly when
each leaf is reached once with a NumPy array (the engine's adjoint store would
only hold them: nothing to add up); otherwise through the store.  Any
other call answers False, having done nothing, and takes the plain path (so
its errors are the plain path's).  ``tests/core/test_core_engine_loss.py``
compares every gradient with ``DIFFLAB_FASTPATH=0``'s, bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from difflab import fastpath
from difflab.autograd import engine, engine_steady
from difflab.autograd.engine import AnomalyMode, GraphRecorder, Node, Profiling


def backward_one_record(loss: Any, retain_graph: bool | None) -> bool:
    """``loss.backward(retain_graph=retain_graph)`` for a one-record tape; False otherwise.

    Parameters
    ----------
    loss : Tensor
        The tensor ``backward()`` was called on (with no ``gradient``, ``inputs``
        or ``create_graph``).
    retain_graph : bool or None
        As ``Tensor.backward``'s (None: False, since nothing is recorded).

    Returns
    -------
    bool
        True when the backward was done here (the ``.grad`` of every leaf set as the
        plain path sets it); False, having done nothing, when the plain path must
        take the call (shortcuts off, another kind of tape or loss, a trace
        recording, anomaly detection on).

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.autograd.engine_loss import backward_one_record
    >>> x = dl.tensor([1.0, 2.0], requires_grad=True)
    >>> f = dl.compile(lambda v: (v * v).sum())
    >>> backward_one_record(f(x), None) or not dl.fastpath.ENABLED, x.grad
    (True, tensor([2., 4.]))
    >>> backward_one_record((x * x).sum(), None)    # two records: the plain path
    False
    """
    if (not fastpath.ENABLED or AnomalyMode.enabled or GraphRecorder.active is not None
            or Profiling.active is not None):
        return False
    node = loss.grad_fn
    array = loss.array
    if node is None or type(array) is not np.ndarray or array.size != 1 \
            or array.dtype.kind == "c" or not engine_steady.has_one_record(node, Node):
        return False
    # functional._seed's ones_like(array): the same array, made without NumPy's Python
    # layer for the common 0-d loss (np.array: 0.16 µs against ones_like's 0.9)
    seed = np.array(1, array.dtype) if array.ndim == 0 else np.ones_like(array)
    token = engine._implicit_seeds.set((seed,))
    try:
        input_grads = node.vjp(seed, False)
        pairs = _leaves_and_adjoints(node.parents, input_grads)
        if pairs is None:  # (a leaf twice, an adjoint to write out: the engine's store)
            adjoints = engine._AdjointStore()
            for parent, g in zip(node.parents, input_grads):
                if parent is not None and g is not None:
                    adjoints.add(parent, g)
            if not retain_graph:
                node.release()
            engine._deliver_to_leaves(adjoints, False)
        else:
            if not retain_graph:
                node.release()
            wrap, plain = engine.Tensor._wrap, engine._deliver_to_leaf
            for leaf, g, private in pairs:
                engine_steady.deliver_to_leaf(leaf, g, private, wrap, plain)
        engine.run_queued_callbacks()
    finally:
        engine._implicit_seeds.reset(token)
    return True


def _leaves_and_adjoints(parents: tuple, input_grads: tuple) -> list | None:
    """``(leaf, adjoint, private)`` per leaf reached, as the engine's adjoint store would
    hand them to the delivery (``total``: ``private`` when the VJP handed the array over,
    :class:`~difflab.fastpath.FreshAdjoint`); None when the store must add them up (a
    leaf reached twice) or write one out (any adjoint but a NumPy array)."""
    pairs: list = []
    for parent, g in zip(parents, input_grads):
        if parent is None or g is None:
            continue
        if type(g) is fastpath.FreshAdjoint:
            g, private = g.values, True
        elif type(g) is np.ndarray:
            private = False
        else:
            return None
        for other, _, _ in pairs:
            if other is parent:
                return None
        pairs.append((parent, g, private))
    return pairs
