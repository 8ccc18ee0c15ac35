r"""Forward mode: push dual numbers through f.

A dual number a + ȧ·ε (ε² = 0) carries a value and a tangent; pushed
through f it comes out as f(a) + f'(a)·ȧ·ε (see :mod:`difflab.diff.dual`).
So one pass of f gives a directional derivative, and n directions at once
(the tangents the rows of the identity) give a whole Jacobian of f: Rⁿ → Rᵐ.
:class:`Forward` does that in chunks of ``chunk_size`` directions, tagging
each pass so that nested derivatives never mix up their ε's.

Hessians
--------
``Forward(hessian="forward-over-forward")`` (the default) is the Jacobian of
the Jacobian: the inner pass runs on the outer pass's dual numbers.
``Forward(hessian="forward-over-reverse")`` takes the gradient with the tape
on tensors whose values are dual numbers: the one backward pass runs every
rule's VJP on duals, so ∇f comes out carrying n tangents, the rows of the
Hessian (the classic Hessian-vector product, n directions at once).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from difflab import functions as F
from difflab.autograd import grad as autograd_grad
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
from difflab.diff.interface import Cost, Differentiator, nested, require_scalar, with_arg
from difflab.tensor import Tensor

HESSIAN_MODES = ("forward-over-forward", "forward-over-reverse")


class Forward(Differentiator):
    """Forward mode with dual numbers.

    Parameters
    ----------
    chunk_size : how many tangent directions to push through f per pass.
        None: all n at once (one pass for a Jacobian of Rⁿ → Rᵐ); smaller
        chunks trade passes for memory.
    hessian : "forward-over-forward" (default): nested (tagged) duals, the
        Jacobian of the Jacobian; "forward-over-reverse": the tape's gradient
        on tensors holding dual numbers.  Both are exact to rounding.

    Examples
    --------
    >>> import numpy as np, difflab as dl
    >>> f = lambda z: dl.sum(dl.stack([z, z * z]) ** 2)
    >>> dl.hessian(f, method="forward", hessian="forward-over-reverse")(np.array([1.0, 2.0]))
    array([[14.,  0.],
           [ 0., 50.]])
    """

    name = "forward"
    keeps_enclosing = frozenset({"reverse", "symbolic"})

    def __init__(self, chunk_size: int | None = None,
                 hessian: str = "forward-over-forward") -> None:
        if chunk_size is not None and chunk_size < 1:
            raise ValueError(f"chunk_size must be a positive integer or None, got {chunk_size}")
        if hessian not in HESSIAN_MODES:
            raise ValueError(f"hessian must be one of {HESSIAN_MODES}, got {hessian!r}")
        self.chunk_size = chunk_size
        self.hessian_mode = hessian

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
        return _unless_nested(args, value), _unless_nested(args, _reshape(J, out_shape + _shape(x)))

    def _hessian(self, f: Callable, args: list, i: int, cost: Cost) -> Any:
        """H = J(∇f): the outer pass forward; ∇f forward too, or by the tape on duals."""

        def gradient(*inner_args: Any) -> Any:
            if self.hessian_mode == "forward-over-reverse":
                return _tape_gradient(f, list(inner_args), i, cost)
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
        return _unless_nested(primals, value), _unless_nested(primals, t[0])


def _unless_nested(args: list, result: Any) -> Any:
    """A result's plain numbers, unless an enclosing derivative differentiates an argument.

    A tensor f closes over that requires grad (a model's parameter) records the tangents'
    arithmetic on its tape; no derivative asked for that graph (nesting goes through the
    arguments), so the result leaves it, as reverse mode's does."""
    if isinstance(result, Tensor) and not nested(args):
        return result.detach().array
    return result


def _tape_gradient(f: Callable, args: list, i: int, cost: Cost) -> Any:
    """∇f by one backward pass, at a point whose values are dual numbers: the leaf is a
    tensor holding them, and every VJP on the way back computes on duals."""
    leaf = Tensor._wrap(args[i])
    leaf.requires_grad_(True)
    out = f(*with_arg(args, i, leaf))
    cost.evaluations += 1
    if not isinstance(out, Tensor):
        raise TypeError(
            f"hessian='forward-over-reverse' records f on the tape: f must compute with "
            f"difflab's functions and return a Tensor, got {type(out).__name__}"
        )
    require_scalar_output(out.array)
    if not out.requires_grad:  # f does not depend on its input
        return F.zeros_like(args[i]) if isinstance(args[i], Dual) else np.zeros(_shape(args[i]))
    (g,) = autograd_grad(out, [leaf], allow_unused=True)
    cost.add("backward_passes", 1)
    return F.zeros_like(args[i]) if g is None else g.array


def require_scalar_output(value: Any) -> None:
    require_scalar(value, "grad/hessian")

