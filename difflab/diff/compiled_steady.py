"""Speed shortcut of ``method="compiled"``: later calls of grad, jacobian, hessian.  Skip it.

``dl.grad(f, method="compiled")(x)`` (and ``dl.jacobian``, ``dl.hessian``) goes
through the checks every method shares
(:meth:`difflab.diff.interface.Differentiator.grad`): f's signature bound to
the arguments, each argument converted to a float64 array, the
graph looked up by the arguments' signature, the value checked for NaN
(then the gradient is NaN), each result converted and checked for NaN or
inf (then a :class:`~difflab.diff.DomainWarning`).  On a chain of 200 ops
on 16 numbers the replay itself takes a third of that call; for the
100 x 100 Jacobian of ``tanh(A @ x)``, a sixth.

After a first call has done all of it, a later call with arguments of the
same kind (float64 NumPy arrays of the same shapes, as many, no
``return_cost``) can only take the same path to the same graph.  So
:class:`SteadyGradient` replays that graph directly and makes the checks
that can still fail, in their cheap form:

* the value is finite (else the plain path: it poisons the gradient);
* each result's sum is finite, which holds only if every element is
  (a NaN or an inf makes the sum NaN or inf); a sum that overflows or is
  not finite sends the call through the plain path, which checks element by
  element and warns.

Any other call is the plain path, unchanged.  The results are the same
arrays, bit for bit (``tests/jit/test_jit_replay.py`` compares the two);
``DIFFLAB_FASTPATH=0`` switches this off with the other shortcuts
(:mod:`difflab.fastpath`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from difflab.jit.tracing import _module_state, _signature

FLOAT64 = np.dtype(np.float64)


class SteadyGradient:
    """``grad(f)`` (or ``jacobian(f)``, ``hessian(f)``) of method="compiled": replays its graph.

    Parameters
    ----------
    method : the :class:`~difflab.diff.compiled.Compiled` differentiator (its cache of graphs).
    f : the function differentiated.
    argnums : int or tuple, as given to ``grad``.
    plain : the gradient function of the shared path, called for everything else.
    what : ``"grad"``, ``"jacobian"`` or ``"hessian"``: which graph (the method's cache
        key) it replays.

    Returns
    -------
    Called as the gradient (Jacobian, Hessian) function: ``g(*args, return_cost=False)``,
    the same results as the plain path's.

    Examples
    --------
    >>> import numpy as np, difflab as dl
    >>> g = dl.grad(lambda v: (v ** 2).sum(), method="compiled")
    >>> g(np.array([1.0, 2.0]))          # first call: the plain path, which traces
    array([2., 4.])
    >>> g(np.array([3.0, -1.0]))         # same kind of call: the graph replayed directly
    array([ 6., -2.])
    >>> g.entry is not None
    True
    >>> J = dl.jacobian(lambda v: v ** 2, method="compiled")
    >>> J(np.array([1.0, 2.0])), J(np.array([3.0, 0.5]))
    (array([[2., 0.],
           [0., 4.]]), array([[6., 0.],
           [0., 1.]]))
    """

    def __init__(self, method: Any, f: Callable, argnums: Any, plain: Callable,
                 what: str = "grad") -> None:
        self.method, self.f, self.argnums, self.plain = method, f, argnums, plain
        self.what = what
        self.single = isinstance(argnums, int)
        # (the arguments' shapes, the positions differentiated, the graph's _Compiled)
        self.entry: tuple | None = None

    def __call__(self, *args: Any, return_cost: bool = False) -> Any:
        entry = self.entry
        if entry is not None and not return_cost and len(args) == len(entry[0]):
            for a, shape in zip(args, entry[0]):
                if type(a) is not np.ndarray or a.dtype is not FLOAT64 or a.shape != shape:
                    break
            else:
                results = self._replay(args, entry)
                if results is not None:
                    return results[0] if self.single else results
        result = self.plain(*args, return_cost=return_cost)
        self.entry = self._entry(args)
        return result

    def _replay(self, args: tuple, entry: tuple) -> tuple | None:
        """The results from the graph; None where a check needs the plain path."""
        shapes, nums, compiled = entry
        if self.what == "jacobian":
            return self._replay_jacobian(args, shapes, nums, compiled)
        with np.errstate(all="ignore"):
            value, *outputs = compiled.run(args)
        if not math.isfinite(value):  # (a 0-d array: the graph's output is a scalar)
            return None
        results, start = [], 0
        for g, i in zip(outputs, nums):
            shape = shapes[i]
            if self.what == "hessian" and type(g) is np.ndarray:
                # (rows d of ∇ᵢf's tangents: argument i's own block)
                size = math.prod(shape)
                g, start, shape = g[start:start + size], start + size, shape + shape
            if not _all_finite(g):
                return None
            g = g.reshape(shape)
            results.append(g[()] if g.ndim == 0 else g)
        return tuple(results)

    @staticmethod
    def _replay_jacobian(args: tuple, shapes: tuple, nums: tuple, compiled: Any) -> tuple | None:
        """The Jacobians from the graph, as ``Compiled._jacobians`` lays them out."""
        with np.errstate(all="ignore"):
            value, blocks = compiled.jacobian_blocks(list(args), [shapes[i] for i in nums])
        if not _all_finite(value):
            return None  # (the plain path: NaN in the rows where f(x) is not finite)
        results = []
        for J in blocks:
            if not _all_finite(J):
                return None
            results.append(J[()] if J.ndim == 0 else J)
        return tuple(results)

    def _entry(self, args: tuple) -> tuple | None:
        """What a later call of the same kind replays, found in the method's cache."""
        if not all(type(a) is np.ndarray and a.dtype is FLOAT64 for a in args) \
                or _module_state(self.f):
            return None
        nargs = len(args)
        nums = (self.argnums,) if self.single else tuple(self.argnums)
        nums = tuple(i % nargs for i in nums)
        try:
            found = self.method._cache.get(self.f, {}).get((self.what, nums, _signature(args)))
        except TypeError:  # (f cannot be weakly referenced: nothing cached)
            return None
        if found is None or isinstance(found, str):
            return None
        out = found.graph.outputs[0]
        if self.what != "jacobian" and (
                not hasattr(out, "name") or tuple(found.graph.meta()[out.name][0]) != ()):
            return None  # (a (1,)-shaped value: the plain path reads it)
        return tuple(a.shape for a in args), nums, found


def _all_finite(a: Any) -> bool:
    """Whether every element of a float64 NumPy array is finite, from one sum: a NaN or an
    inf makes the sum NaN or inf (a finite sum that overflows answers False, to be safe)."""
    if type(a) is not np.ndarray or a.dtype is not FLOAT64:
        return False
    with np.errstate(over="ignore"):  # (an overflowing sum is an answer here, not an error)
        return math.isfinite(np.add.reduce(a, axis=None))
