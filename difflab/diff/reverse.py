r"""Reverse mode: the tape.

The inputs become tensors that require grad; running f records every
operation on the tape (the Wengert list); one walk backwards from the
output multiplies adjoints by the same local derivatives that forward mode
uses, in the other direction:

    x̄ += f'(x) · ȳ        (forward mode: ẏ = f'(x) · ẋ)

One backward pass gives uᵀJ for one cotangent u, for every input at once:
the whole gradient of a scalar f: Rⁿ → R, whichever and however many
arguments are differentiated (``argnums=(0, 1, ..., k)``), costs one
recorded evaluation of f and one backward pass.  A Jacobian of f: Rⁿ → Rᵐ
takes m backward passes (one per row) over the same recording; the tape is
kept between them (``retain_graph=True``).  The :class:`Cost` counts both:
``evaluations`` (recorded calls of f) and ``backward_passes``.

Hessians
--------
``Reverse(hessian="reverse-over-reverse")`` (the default) is the textbook
double backward: ``autograd.grad(y, x, create_graph=True)`` records the
backward pass itself on the tape, so the gradient can be differentiated
again (n more passes, one per entry of ∇f).

``Reverse(hessian="reverse-over-forward")`` runs f on dual numbers whose
values and tangents are tensors: the forward tangents give the gradient ∇f
as a tensor *on the tape*, and one backward pass from each of its n entries
gives a row of the Hessian, ∇(∂f/∂xᵢ).  Only first-order backward passes
are needed.

Either way f is recorded once, however many arguments the Hessian is taken
with respect to (each gets its own block ∂²f/∂xᵢ², from the same recording).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from difflab import backend, creation, functions
from difflab.autograd import grad as autograd_grad
from difflab.autograd import tape
from difflab.diff.forward import Dual, new_tag, tangents_of
from difflab.diff.interface import Cost, Differentiator, Enclosing, check_output, require_scalar
from difflab.tensor import Tensor

HESSIAN_MODES = ("reverse-over-forward", "reverse-over-reverse")


def leaf(x: Any) -> Tensor:
    """x as a float64 tensor that requires grad (on x's device)."""
    return creation.tensor(x, dtype=np.float64, requires_grad=True)


def _output(out: Any) -> Tensor:
    check_output(out, "reverse mode")
    if isinstance(out, Tensor):
        return out
    return Tensor._wrap(backend.array_module(out).asarray(out, dtype=np.float64))


def _rows(out: Tensor, xs: list[Tensor], cost: Cost, retain_last: bool = False) -> list:
    """Every row of ∂out/∂x, for each x in ``xs``: one backward pass per output entry.

    The pass seeded with the unit cotangent e_j gives row j, eⱼᵀ ∂out/∂x, for all
    of ``xs`` at once: m passes for m outputs, however many inputs.  The tape is
    kept for the next pass (and after the last one with ``retain_last``).
    """
    xp = backend.array_module(out.array)
    m = out.array.size
    rows: list[list] = [[] for _ in xs]
    if out.requires_grad:
        for j in range(m):
            seed_ = xp.zeros(m)
            seed_[j] = 1.0
            grads = autograd_grad(out, xs, grad_outputs=[seed_.reshape(out.shape)],
                                  retain_graph=retain_last or j < m - 1, allow_unused=True)
            cost.add("backward_passes", 1)
            for row, g, x in zip(rows, grads, xs):
                row.append(xp.zeros(x.shape) if g is None else g.array)
    return [xp.stack(row) if row else xp.zeros((m,) + tuple(x.shape))
            for row, x in zip(rows, xs)]


def _recording(args: list) -> bool:
    """Whether an enclosing reverse derivative is recording (a Tensor that requires grad,
    or a tensor f closes over: see ``Enclosing``)."""
    return Enclosing.reverse > 0 or any(isinstance(a, Tensor) and a.requires_grad for a in args)


def _call(f: Callable, args: list) -> Any:
    """f(*args), counted as recorded by a reverse derivative: a derivative that f takes
    keeps its results on the tape, for this one to differentiate."""
    Enclosing.reverse += 1
    Enclosing.tracked.append([a for a in args if isinstance(a, Tensor) and a.requires_grad])
    try:
        return f(*args)
    finally:
        Enclosing.reverse -= 1
        Enclosing.tracked.pop()


class Reverse(Differentiator):
    """Reverse mode on difflab's tape.

    Parameters
    ----------
    hessian : "reverse-over-reverse" (default) or "reverse-over-forward"; see the
        module docstring.
    """

    name = "reverse"
    keeps_enclosing = frozenset({"reverse"})

    def __init__(self, hessian: str = "reverse-over-reverse") -> None:
        if hessian not in HESSIAN_MODES:
            raise ValueError(f"hessian must be one of {HESSIAN_MODES}, got {hessian!r}")
        self.hessian_mode = hessian

    def _record(self, f: Callable, args: list, cost: Cost) -> Tensor:
        with tape() as recorded:
            out = _output(_call(f, args))
        cost.evaluations += 1
        cost.add("tape_length", len(recorded))
        return out

    def _jacobian(self, f: Callable, args: list, i: int, cost: Cost,
                  require_scalar_: bool) -> tuple[Any, Any]:
        value, (J,) = self._jacobians(f, args, (i,), cost, require_scalar_)
        return value, J

    def _jacobians(self, f: Callable, args: list, nums: tuple, cost: Cost,
                   require_scalar_: bool) -> tuple[Any, list]:
        """One recording of f, then one backward pass per output entry for all ``nums``."""
        if _recording(args):
            return self._nested_jacobians(f, args, nums, cost, require_scalar_)
        leaves = {i: leaf(args[i]) for i in nums}  # an argument asked for twice: one leaf
        out = self._record(f, [leaves.get(k, a) for k, a in enumerate(args)], cost)
        if require_scalar_:
            require_scalar(out.array, "grad")
        blocks = dict(zip(leaves, _rows(out, list(leaves.values()), cost)))
        return out.array, [
            blocks[i].reshape(tuple(out.shape) + tuple(leaves[i].shape)) for i in nums
        ]

    def _nested_jacobians(self, f: Callable, args: list, nums: tuple, cost: Cost,
                          require_scalar_: bool) -> tuple[Tensor, list]:
        """The Jacobians at a point that an enclosing reverse derivative is recording.

        The results must stay on the tape (``create_graph=True``) so that the outer
        walk can differentiate them, also through the arguments that are not
        differentiated here.  Each inner variable is a recorded copy of its point, a
        node of its own: with the outer tensor itself, an inner ``x * y`` at y = x
        would give 2x instead of x (perturbation confusion, the reverse-mode way).
        """
        inner = {i: args[i].clone() if isinstance(args[i], Tensor) else leaf(args[i])
                 for i in nums}
        out = _output(_call(f, [inner.get(k, a) for k, a in enumerate(args)]))
        cost.evaluations += 1
        if require_scalar_:
            require_scalar(out.array, "grad")
        xs = list(inner.values())
        flat = out.reshape(-1)
        rows: list[list] = [[] for _ in xs]
        for j in range(flat.shape[0]):
            grads = [None] * len(xs)
            if flat[j].requires_grad:
                grads = autograd_grad(flat[j], xs, create_graph=True, allow_unused=True)
                cost.add("backward_passes", 1)
            for row, g, x in zip(rows, grads, xs):
                row.append(creation.zeros_like(x) if g is None else g)
        blocks = {
            i: (functions.stack(row) if row else creation.zeros((0,) + tuple(x.shape)))
            .reshape(tuple(out.shape) + tuple(x.shape))
            for (i, x), row in zip(inner.items(), rows)
        }
        return out, [blocks[i] for i in nums]

    def _hessian(self, f: Callable, args: list, i: int, cost: Cost) -> Any:
        return self._hessians(f, args, (i,), cost)[1][0]

    def _hessians(self, f: Callable, args: list, nums: tuple, cost: Cost) -> tuple[Any, list]:
        """One recording of f for every block ∂²f/∂xᵢ², i in ``nums``."""
        if _recording(args):
            return self._nested_hessians(f, args, nums, cost)
        leaves = {i: leaf(args[i]) for i in nums}
        xs = list(leaves.values())
        point = [leaves.get(k, a) for k, a in enumerate(args)]
        if self.hessian_mode == "reverse-over-reverse":
            out = self._record(f, point, cost)
            value = out.array
            require_scalar(value, "hessian")
            gradients = [None] * len(xs)
            if out.requires_grad:
                gradients = list(autograd_grad(out, xs, create_graph=True, allow_unused=True))
                cost.add("backward_passes", 1)
        else:
            # reverse over forward: the tangents of f(x + Iε) are ∇f, computed on the tape.
            # One pass for all arguments: the N = Σ nₖ directions are the rows of the N × N
            # identity, and argument k's entries own its columns offsets[k] .. offsets[k+1].
            tag, offsets = new_tag(), [int(o) for o in np.cumsum([0] + [x.numel() for x in xs])]
            eye = (backend.array_module(xs[0].array) if xs else np).eye(offsets[-1])
            duals = {i: Dual(x, eye[:, a:b].reshape((-1,) + tuple(x.shape)), tag, vector=True)
                     for (i, x), a, b in zip(leaves.items(), offsets, offsets[1:])}
            with tape() as recorded:
                out = _call(f, [duals.get(k, a) for k, a in enumerate(args)])
                value, tangents = tangents_of(out, tag, offsets[-1])
            cost.evaluations += 1
            cost.add("tape_length", len(recorded))
            value = value.array if isinstance(value, Tensor) else value
            require_scalar(value, "hessian")
            gradients = [tangents.reshape(-1)[a:b] if isinstance(tangents, Tensor) else None
                         for a, b in zip(offsets, offsets[1:])]
        blocks = {}
        for k, (i, x, g) in enumerate(zip(leaves, xs, gradients)):
            n = x.numel()
            if g is None or not g.requires_grad:
                blocks[i] = backend.array_module(x.array).zeros((n, n))
            else:
                (blocks[i],) = _rows(g.reshape(-1), [x], cost, retain_last=k < len(xs) - 1)
        return value, [blocks[i] for i in nums]

    def _nested_hessians(self, f: Callable, args: list, nums: tuple, cost: Cost
                         ) -> tuple[Tensor, list]:
        """The Hessians at a point that an enclosing reverse derivative is recording: each
        block the Jacobian of the gradient, both on the tape (``_nested_jacobians``), so
        that the outer walk differentiates them (they came back as plain numbers: 0)."""
        value, blocks = None, []
        for i in nums:
            def gradient(*point: Any, i: int = i) -> Tensor:
                nonlocal value
                value, (g,) = self._nested_jacobians(f, list(point), (i,), cost, True)
                return g.reshape(tuple(np.shape(args[i])))

            blocks.append(self._nested_jacobians(gradient, args, (i,), cost, False)[1][0])
        return value, blocks

    def _vjp(self, f: Callable, primals: list, cost: Cost) -> tuple[Any, Callable]:
        """One recording; each call of vjp_fn is one backward pass (the tape is kept).

        vjp_fn adds its passes to the call's ``cost.backward_passes`` as it runs.  Inside
        an enclosing reverse derivative the results stay on the tape (as
        ``_nested_jacobians``: each primal a recorded copy of its point).
        """
        nested = _recording(primals)
        leaves = [p.clone() if nested and isinstance(p, Tensor) else leaf(p) for p in primals]
        out = _output(_call(f, leaves)) if nested else self._record(f, leaves, cost)

        def vjp_fn(u: Any) -> tuple:
            xp = backend.array_module(out.array)
            u = u if isinstance(u, Tensor) else xp.asarray(u, dtype=np.float64)
            if tuple(u.shape) != tuple(out.shape):
                raise ValueError(
                    f"vjp_fn: the cotangent has shape {tuple(u.shape)} but f's output has "
                    f"shape {tuple(out.shape)}: they must match"
                )
            if not out.requires_grad:
                return tuple(xp.zeros(t.shape) for t in leaves)
            grads = autograd_grad(out, leaves, grad_outputs=[u], retain_graph=True,
                                  create_graph=nested, allow_unused=True)
            cost.add("backward_passes", 1)
            return tuple(
                xp.zeros(t.shape) if g is None else g if nested else g.array
                for g, t in zip(grads, leaves)
            )

        return (out if nested else out.array), vjp_fn
