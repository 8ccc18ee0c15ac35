r"""Forward mode: push dual numbers through f.

A dual number a + ȧ·ε (ε² = 0) carries a value and a tangent; pushed
through f it comes out as f(a) + f'(a)·ȧ·ε (see :mod:`difflab.diff.dual`).
So one pass of f gives a directional derivative, and n directions at once
(the tangents the rows of the identity) give a whole Jacobian of f: Rⁿ → Rᵐ.
:class:`Forward` does that in chunks of ``chunk_size`` directions, tagging
each pass so that nested derivatives never mix up their ε's (Hessians are
forward over forward).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from difflab import functions as F
from difflab.diff.dual import (  # noqa: F401  (Dual, new_tag: re-exported)
    Dual,
    _reshape,
    _shape,
    _Stats,
    _transpose,
    new_tag,
    seed,
    tangents_of,
)
from difflab.diff.interface import Cost, Differentiator, require_scalar, with_arg


class Forward(Differentiator):
    """Forward mode with dual numbers.

    Parameters
    ----------
    chunk_size : how many tangent directions to push through f per pass.
        None: all n at once (one pass for a Jacobian of Rⁿ → Rᵐ); smaller
        chunks trade passes for memory.

    Hessians are computed with nested (tagged) duals: the Jacobian of the
    Jacobian, exact to rounding.
    """

    name = "forward"

    def __init__(self, chunk_size: int | None = None) -> None:
        if chunk_size is not None and chunk_size < 1:
            raise ValueError(f"chunk_size must be a positive integer or None, got {chunk_size}")
        self.chunk_size = chunk_size

    def _jacobian(self, f: Callable, args: list, i: int, cost: Cost,
                  require_scalar: bool) -> tuple[Any, Any]:
        x = args[i]
        n = int(np.prod(_shape(x), dtype=int))
        chunk = n if self.chunk_size is None else min(self.chunk_size, max(n, 1))
        blocks, value = [], None
        ops_before = _Stats.ops
        for start in range(0, max(n, 1), max(chunk, 1)):
            stop = min(start + chunk, n)
            tag = new_tag()
            out = f(*with_arg(args, i, seed(x, tag, start, stop)))
            value, t = tangents_of(out, tag, stop - start)
            if require_scalar:
                require_scalar_output(value)
            cost.evaluations += 1
            blocks.append(t)
        cost.add("forward_ops", _Stats.ops - ops_before)
        tangents = blocks[0] if len(blocks) == 1 else np.concatenate(blocks, axis=0)
        # tangents[j] = ∂f/∂x_j; the Jacobian puts the output axes first.
        out_shape = _shape(value)
        J = _reshape(tangents, (n, int(np.prod(out_shape, dtype=int))))
        J = _transpose(J) if isinstance(J, Dual) else F.transpose(J, (1, 0))
        return value, _reshape(J, out_shape + _shape(x))

    def _hessian(self, f: Callable, args: list, i: int, cost: Cost) -> Any:
        """H = J(∇f): forward over forward, the inner pass nested in the outer's duals."""

        def gradient(*inner_args: Any) -> Any:
            value, J = self._jacobian(f, list(inner_args), i, cost, True)
            return _reshape(J, _shape(inner_args[i]))

        return self._jacobian(gradient, args, i, cost, False)[1]

    def _jvp(self, f: Callable, primals: list, tangents: list, cost: Cost) -> tuple[Any, Any]:
        """One pass: every primal carries its tangent, all with the same tag."""
        tag = new_tag()
        duals = [Dual._make(p, _reshape(t, (1,) + _shape(p)), tag)
                 for p, t in zip(primals, tangents)]
        ops_before = _Stats.ops
        value, t = tangents_of(f(*duals), tag, 1)
        cost.evaluations += 1
        cost.add("forward_ops", _Stats.ops - ops_before)
        return value, t[0]


def require_scalar_output(value: Any) -> None:
    require_scalar(value, "grad/hessian")

