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
loss whose tape is one record, not while a trace records, not under anomaly
detection, and does in one function exactly what those layers would: the seed
``ones_like(loss)``, noted as the implicit seed while the walk runs (a compiled
loss hands its gradients over at that seed), the one record's VJP into the
engine's adjoint store, the leaves' ``.grad``, the queued callbacks.  Any
other call answers False, having done nothing, and takes the plain path (so
its errors are the plain path's).  ``tests/core/test_core_engine_loss.py``
compares every gradient with ``DIFFLAB_FASTPATH=0``'s, bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from difflab import fastpath
from difflab.autograd import engine, engine_steady
from difflab.autograd.engine import AnomalyMode, GraphRecorder, Node
from difflab.autograd.functional import _implicit_seeds


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
    if not fastpath.ENABLED or AnomalyMode.enabled or GraphRecorder.active is not None:
        return False
    node = loss.grad_fn
    array = loss.array
    if node is None or type(array) is not np.ndarray or array.size != 1 \
            or not engine_steady.has_one_record(node, Node):
        return False
    seed = np.ones(array.shape, array.dtype)  # (functional._seed's ones_like, for a NumPy loss)
    token = _implicit_seeds.set((seed,))
    try:
        adjoints = engine._AdjointStore()
        engine_steady.walk_one_record(node, seed, bool(retain_graph), adjoints)
        engine._deliver_to_leaves(adjoints, False)
        engine.run_queued_callbacks()
    finally:
        _implicit_seeds.reset(token)
    return True
