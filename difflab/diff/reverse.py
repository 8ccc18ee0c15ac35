r"""Reverse mode: the tape.

The inputs become tensors that require grad; running f records every
operation on the tape (the Wengert list); one walk backwards from the
output multiplies adjoints by the same local derivatives that forward mode
uses, in the other direction:

    x̄ += f'(x) · ȳ        (forward mode: ẏ = f'(x) · ẋ)

One backward pass gives uᵀJ for one cotangent u: the whole gradient of a
scalar f: Rⁿ → R for the price of about one more evaluation of f, whatever
n is.  A Jacobian of f: Rⁿ → Rᵐ takes m backward passes (one per row); the
tape is recorded once and kept (``retain_graph=True``).

Hessians
--------
``Reverse(hessian="reverse-over-reverse")`` (the default) is the textbook
double backward: ``autograd.grad(y, x, create_graph=True)`` records the
backward pass itself on the tape, so the gradient can be differentiated
again (n more passes).

``Reverse(hessian="reverse-over-forward")`` runs f on dual numbers whose
values and tangents are tensors: the forward tangents give the gradient ∇f
as a tensor *on the tape*, and one backward pass from each of its n entries
gives a row of the Hessian, ∇(∂f/∂xᵢ).  Only first-order backward passes
are needed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import difflab
from difflab import backend
from difflab.autograd import grad as autograd_grad
from difflab.autograd import tape
from difflab.diff.forward import new_tag, seed, tangents_of
from difflab.diff.interface import Cost, Differentiator, check_output, require_scalar, with_arg
from difflab.tensor import Tensor

HESSIAN_MODES = ("reverse-over-forward", "reverse-over-reverse")


def leaf(x: Any) -> Tensor:
    """x as a float64 tensor that requires grad (on x's device)."""
    return difflab.tensor(x, dtype=difflab.float64, requires_grad=True)


def _output(out: Any) -> Tensor:
    check_output(out, "reverse mode")
    if isinstance(out, Tensor):
        return out
    return Tensor._wrap(backend.array_module(out).asarray(out, dtype=np.float64))


def _rows(out: Tensor, x: Tensor, cost: Cost, retain_last: bool = False) -> Any:
    """Every row of ∂out/∂x: one backward pass per output entry (m passes)."""
    xp = backend.array_module(x.array)
    m = out.array.size
    if not out.requires_grad:
        return xp.zeros((m,) + tuple(x.shape))
    rows = []
    for j in range(m):
        seed_ = xp.zeros(m)
        seed_[j] = 1.0
        (g,) = autograd_grad(out, x, grad_outputs=[seed_.reshape(out.shape)],
                             retain_graph=retain_last or j < m - 1, allow_unused=True)
        cost.evaluations += 1
        rows.append(xp.zeros(x.shape) if g is None else g.array)
    return xp.stack(rows)


class Reverse(Differentiator):
    """Reverse mode on difflab's tape.

    Parameters
    ----------
    hessian : "reverse-over-reverse" (default) or "reverse-over-forward"; see the
        module docstring.
    """

    name = "reverse"

    def __init__(self, hessian: str = "reverse-over-reverse") -> None:
        if hessian not in HESSIAN_MODES:
            raise ValueError(f"hessian must be one of {HESSIAN_MODES}, got {hessian!r}")
        self.hessian_mode = hessian

    def _record(self, f: Callable, args: list, cost: Cost) -> Tensor:
        with tape() as recorded:
            out = _output(f(*args))
        cost.evaluations += 1
        cost.add("tape_length", len(recorded))
        return out

    def _jacobian(self, f: Callable, args: list, i: int, cost: Cost,
                  require_scalar_: bool) -> tuple[Any, Any]:
        if isinstance(args[i], Tensor):
            return self._nested_jacobian(f, args, i, cost, require_scalar_)
        x = leaf(args[i])
        out = self._record(f, with_arg(args, i, x), cost)
        if require_scalar_:
            require_scalar(out.array, "grad")
        J = _rows(out, x, cost)
        return out.array, J.reshape(tuple(out.shape) + tuple(x.shape))

    def _nested_jacobian(self, f: Callable, args: list, i: int, cost: Cost,
                         require_scalar_: bool) -> tuple[Tensor, Tensor]:
        """The Jacobian at a point that an enclosing reverse derivative is recording.

        The result must stay on the tape (``create_graph=True``) so that the outer
        walk can differentiate it.  The inner variable is a recorded copy of the point,
        a node of its own: with the outer tensor itself, an inner ``x * y`` at y = x
        would give 2x instead of x (perturbation confusion, the reverse-mode way).
        """
        x = args[i].clone()
        out = _output(f(*with_arg(args, i, x)))
        cost.evaluations += 1
        if require_scalar_:
            require_scalar(out.array, "grad")
        flat = out.reshape(-1)
        rows = []
        for j in range(flat.shape[0]):
            g = None
            if flat[j].requires_grad:
                (g,) = autograd_grad(flat[j], x, create_graph=True, allow_unused=True)
                cost.evaluations += 1
            rows.append(difflab.zeros_like(x) if g is None else g)
        J = difflab.stack(rows) if rows else difflab.zeros((0,) + tuple(x.shape))
        return out, J.reshape(tuple(out.shape) + tuple(x.shape))

    def _hessian(self, f: Callable, args: list, i: int, cost: Cost) -> Any:
        x = leaf(args[i])
        n = x.array.size
        if self.hessian_mode == "reverse-over-reverse":
            out = self._record(f, with_arg(args, i, x), cost)
            require_scalar(out.array, "hessian")
            if not out.requires_grad:
                return np.zeros((n, n))
            (g,) = autograd_grad(out, x, create_graph=True, allow_unused=True)
            cost.evaluations += 1
            if g is None or not g.requires_grad:
                return np.zeros((n, n))
            return _rows(g.reshape(-1), x, cost)
        # reverse over forward: the tangents of f(x + Iε) are ∇f, computed on the tape
        tag = new_tag()
        with tape() as recorded:
            out = f(*with_arg(args, i, seed(x, tag)))
            value, gradient = tangents_of(out, tag, n)
        cost.evaluations += 1
        cost.add("tape_length", len(recorded))
        require_scalar(value, "hessian")
        if not isinstance(gradient, Tensor):
            return np.zeros((n, n))
        return _rows(gradient.reshape(-1), x, cost)

    def _vjp(self, f: Callable, primals: list, cost: Cost) -> tuple[Any, Callable]:
        """One recording; each call of vjp_fn is one backward pass (the tape is kept)."""
        leaves = [leaf(p) for p in primals]
        out = self._record(f, leaves, cost)

        def vjp_fn(u: Any) -> tuple:
            xp = backend.array_module(out.array)
            u = xp.asarray(u, dtype=np.float64)
            if tuple(u.shape) != tuple(out.shape):
                raise ValueError(
                    f"vjp_fn: the cotangent has shape {tuple(u.shape)} but f's output has "
                    f"shape {tuple(out.shape)}: they must match"
                )
            if not out.requires_grad:
                return tuple(xp.zeros(t.shape) for t in leaves)
            grads = autograd_grad(out, leaves, grad_outputs=[u], retain_graph=True,
                                  allow_unused=True)
            return tuple(
                xp.zeros(t.shape) if g is None else g.array for g, t in zip(grads, leaves)
            )

        return out.array, vjp_fn
