"""From a rule to a primitive: the two primitive classes every elementwise rule becomes.

:mod:`difflab.ops.elementwise` holds the rules, each a function beside its local
derivatives and nothing else.  This module turns a rule into a registry primitive:
:class:`UnaryOp` and :class:`BinaryOp` apply the chain rule with the rule's derivative
in both directions (the VJP multiplies an adjoint by it, the JVP a tangent), and
:class:`BinaryOp` adds NumPy's broadcasting.  The registry makes one of these per rule.
"""

from __future__ import annotations

from typing import Any

from difflab import fastpath
from difflab.ops.elementwise import Binary, Unary
from difflab.ops.primitive import Primitive
from difflab.ops.shapes import broadcast_shape, lift, shape_of, sum_to_shape

# ------------------------------------------------ from a rule to a primitive
#
# One local derivative f'(x) gives both directions of the chain rule: the VJP
# multiplies an adjoint by it, the JVP a tangent.


@fastpath.scaling  # (with the shortcuts on: the same product in fewer passes)
def _scale(xp: Any, g: Any, factor: Any, saved: tuple = ()) -> Any:
    """ȳ · f'(x): the chain rule's product of an adjoint and a local derivative.

    ``saved`` names the arrays the rule read, which the product must never
    overwrite; only the faster product in ``difflab/fastpath.py`` needs it.
    """
    return g * factor


class UnaryOp(Primitive):
    """The primitive made from a :class:`Unary` rule.

    VJP: x̄ = ȳ · f'(x).    JVP: ẏ = f'(x) · ẋ.
    """

    fusion = "elementwise"

    def __init__(self, rule: type[Unary]) -> None:
        self.rule = rule
        self.name = rule.name
        self.math = rule.math
        self.description = rule.description

    def forward(self, ctx, xp, x):
        y = self.rule.forward(xp, x)
        saves = self.rule.saves
        if saves:
            ctx.save(x if "x" in saves else None, y if "y" in saves else None)
        return y

    def vjp(self, ctx, xp, g, x=None, y=None):
        return (_scale(xp, g, self.rule.derivative(xp, x, y), (x, y)),)

    def jvp(self, ctx, xp, dx, x=None, y=None):
        return _scale(xp, dx, self.rule.derivative(xp, x, y))

    def __repr__(self) -> str:
        return f"UnaryOp({self.name})"


class BinaryOp(Primitive):
    """The primitive made from a :class:`Binary` rule, with broadcasting.

    VJP: ā = sum_to_shape(z̄ · ∂z/∂a),  b̄ = sum_to_shape(z̄ · ∂z/∂b).
    JVP: ż = ∂z/∂a · ȧ + ∂z/∂b · ḃ.
    """

    fusion = "elementwise"

    def __init__(self, rule: type[Binary]) -> None:
        self.rule = rule
        self.name = rule.name
        self.math = rule.math
        self.description = rule.description
        # Which of a, b, z to keep, for each (a needs grad, b needs grad): the rules
        # name what they read (needs_for_a = "b" for a product, say).
        self.keeps = {}
        for need_a in (False, True):
            for need_b in (False, True):
                reads = (rule.needs_for_a if need_a else "") + (rule.needs_for_b if need_b else "")
                self.keeps[need_a, need_b] = ("a" in reads, "b" in reads, "z" in reads)

    def forward(self, ctx, xp, a, b):
        z = self.rule.forward(xp, a, b)
        ctx.a_shape, ctx.b_shape = shape_of(a), shape_of(b)
        keep_a, keep_b, keep_z = self.keeps[ctx.needs_input_grad]
        if keep_a or keep_b or keep_z:
            ctx.save(a if keep_a else None, b if keep_b else None, z if keep_z else None)
        return z

    def vjp(self, ctx, xp, g, a=None, b=None, z=None):
        need_a, need_b = ctx.needs_input_grad
        grad_a = grad_b = None
        saved = (a, b, z)
        if need_a:
            grad_a = sum_to_shape(_scale(xp, g, self.rule.d_da(xp, a, b, z), saved), ctx.a_shape)
        if need_b:
            grad_b = sum_to_shape(_scale(xp, g, self.rule.d_db(xp, a, b, z), saved), ctx.b_shape)
        return grad_a, grad_b

    def jvp(self, ctx, xp, da, db, a=None, b=None, z=None):
        z_shape = broadcast_shape(ctx.a_shape, ctx.b_shape)
        out = None
        if da is not None:
            out = _scale(xp, lift(da, len(z_shape)), self.rule.d_da(xp, a, b, z))
        if db is not None:
            term = _scale(xp, lift(db, len(z_shape)), self.rule.d_db(xp, a, b, z))
            out = term if out is None else out + term
        if out.shape[1:] != z_shape:  # (a tangent times a constant partial: not yet z's shape)
            out = xp.broadcast_to(out, out.shape[:1] + z_shape)
        return out

    def __repr__(self) -> str:
        return f"BinaryOp({self.name})"
