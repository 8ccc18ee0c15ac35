r"""Recurrent-cell primitives: the pointwise part of one GRU or LSTM step as one record.

A recurrent layer's step is two matrix products and a dozen elementwise
operations.  The products are :class:`~difflab.ops.nn_ops.Linear` (and the
input's is done once for the whole sequence, outside the time loop); what is
left per step is gathered here into fused primitives, as PyTorch's
``_thnn_fused_gru_cell`` and ``_thnn_fused_lstm_cell`` do.  One record instead
of ten to twenty: the tape, a traced graph and its backward each get one line
per step, and the derivative is written by hand from the gates.

The gates are read from the projections by position along the last axis
(:math:`H` the hidden size): a GRU's ``(r, z, n)`` are the thirds of its
:math:`3H` projections, an LSTM's ``(i, f, g, o)`` the quarters of :math:`4H`.

An LSTM step has two results, :math:`c'` and :math:`h'`.  A primitive has one
output (the tape, the graph and every interpreter assume it), so the step is
two primitives: :class:`~difflab.ops.nn_recurrent.LSTMCellState` gives
:math:`c'`, and :class:`~difflab.ops.nn_recurrent.LSTMHiddenState` reads
:math:`c'` and gives :math:`h'`.  Each is one of the cell's two equations, and
neither needs an index afterwards to split a packed pair (a packed result would
cost two ``index`` records per step, two primitives cost one more record).

The rules follow :mod:`difflab.ops.nn_ops`: the forward saves its inputs and
the gate activations; the VJP on arrays reads the saved activations; recorded
(``create_graph=True``) it computes them again from the inputs, so the
backward is itself differentiated correctly.  There each cell's VJP is one
primitive too (:class:`~difflab.ops.nn_recurrent.GRUCellBackward`,
:class:`~difflab.ops.nn_recurrent.LSTMCellStateBackward`,
:class:`~difflab.ops.nn_recurrent.LSTMHiddenStateBackward`), so that a recorded
backward (a gradient penalty, ``dl.compile``'s backward graph) holds one record
per cell, not its dozen operations; their own derivatives are the step's
Hessian-vector product, written by hand as the tangent of the VJP's lines.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from difflab.ops.elementwise import Sigmoid
from difflab.ops.nn_conv import _is_array
from difflab.ops.nn_ops import _recording
from difflab.ops.primitive import Primitive


def _plus(*terms: Any) -> Any:
    """The sum of the terms that are not None (None if all are: a zero tangent)."""
    total = None
    for t in terms:
        if t is not None:
            total = t if total is None else total + t
    return total


def _part(t: Any, lo: int, hi: int) -> Any:
    """Columns ``lo:hi`` of the last axis of a tangent, or None."""
    return None if t is None else t[..., lo:hi]


def _times(a: Any, t: Any) -> Any:
    """``a * t``, or None when the tangent ``t`` is None."""
    return None if t is None else a * t


def _check(name: str, gates: Any, state: Any, k: int, what: str = "gates") -> int:
    """H from the state; a ValueError unless ``gates`` is (..., k·H) beside it."""
    hidden = state.shape[-1] if len(state.shape) else 0
    if tuple(gates.shape[:-1]) != tuple(state.shape[:-1]) or gates.shape[-1] != k * hidden:
        raise ValueError(
            f"{name}: expected {what} of shape (..., {k}·H) with the state's leading shape, "
            f"got {what} {tuple(gates.shape)} beside a state {tuple(state.shape)} (H = "
            f"{hidden}); pass the projections x W_ihᵀ + b_ih and h W_hhᵀ + b_hh")
    return hidden


def _symbolic(primitive: Any, sp: Any, *inputs: Any) -> Any:
    """The forward on sympy expressions, with sympy's tanh elementwise."""
    xp = SimpleNamespace(tanh=lambda v: sp.elementwise(sp.tanh, v),
                         concatenate=lambda parts, axis: np.concatenate(parts, axis=axis),
                         zeros_like=lambda v: np.zeros(np.shape(v), dtype=object))
    return primitive.forward(SimpleNamespace(save=lambda *saved: None), xp, *inputs)


# ---------------------------------------------------------------------------- GRU


class GRUCell(Primitive):
    r"""One GRU step from its two projections: :math:`h' = (1 - z) \odot n + z \odot h`.

    With :math:`g_i = x W_{ih}^\top + b_{ih}` and :math:`g_h = h W_{hh}^\top + b_{hh}`,
    each :math:`(N, 3H)` and cut in thirds :math:`(\cdot_r, \cdot_z, \cdot_n)`:

    .. math::
        r = \sigma(g_{i,r} + g_{h,r}), \quad z = \sigma(g_{i,z} + g_{h,z}), \quad
        n = \tanh(g_{i,n} + r \odot g_{h,n}), \quad h' = n + z \odot (h - n).

    VJP, from :math:`\bar h'`: with :math:`\bar a_n = \bar h' (1 - z)(1 - n^2)`,
    :math:`\bar a_z = \bar h' (h - n)\, z (1 - z)` and
    :math:`\bar a_r = \bar a_n\, g_{h,n}\, r (1 - r)`,

    .. math::
        \bar g_i = (\bar a_r, \bar a_z, \bar a_n), \qquad
        \bar g_h = (\bar a_r, \bar a_z, r \odot \bar a_n), \qquad
        \bar h = z \odot \bar h'.

    JVP: the same partials times the tangents,
    :math:`\dot h' = (1 - z)\dot n + z \dot h + (h - n)\dot z`.
    """

    name = "gru_cell"
    math = "h̄ = z h̄',  ḡ_i = (ā_r, ā_z, ā_n),  ḡ_h = (ā_r, ā_z, r ā_n)"
    description = "one GRU step's gates from its two projections (fused)"
    first_order_is_cheaper = True  # (a graph's first-order backward: one node per step)

    @staticmethod
    def _gates(xp: Any, gi: Any, gh: Any, hidden: int) -> tuple:
        """(r, z) side by side and n, from the projections."""
        rz = Sigmoid.forward(xp, gi[..., :2 * hidden] + gh[..., :2 * hidden])
        n = xp.tanh(gi[..., 2 * hidden:] + rz[..., :hidden] * gh[..., 2 * hidden:])
        return rz, n

    @staticmethod
    def symbolic(sp, gi, gh, h):
        return _symbolic(GRUCell, sp, gi, gh, h)

    @staticmethod
    def forward(ctx, xp, gi, gh, h):
        hidden = _check("gru_cell", gi, h, 3, "gi")
        _check("gru_cell", gh, h, 3, "gh")
        rz, n = GRUCell._gates(xp, gi, gh, hidden)
        ctx.save(gi, gh, h, rz, n)
        return n + rz[..., hidden:] * (h - n)

    @staticmethod
    def vjp(ctx, xp, g, gi, gh, h, rz, n):
        hidden = h.shape[-1]
        need = ctx.needs_input_grad
        if _recording(xp):  # one record, itself differentiable (GRUCellBackward's rules)
            packed = xp.record_primitive(GRUCellBackward, g, gi, gh, h, rz, n)
            return (packed[..., :3 * hidden] if need[0] else None,
                    packed[..., 3 * hidden:6 * hidden] if need[1] else None,
                    packed[..., 6 * hidden:] if need[2] else None)
        r, z = rz[..., :hidden], rz[..., hidden:]
        a_r, a_z, a_n = _gru_adjoints(g, gh, h, r, z, n)
        return (xp.concatenate([a_r, a_z, a_n], axis=-1) if need[0] else None,
                xp.concatenate([a_r, a_z, r * a_n], axis=-1) if need[1] else None,
                g * z if need[2] else None)

    @staticmethod
    def jvp(ctx, xp, dgi, dgh, dh, gi, gh, h, rz, n):
        hidden = h.shape[-1]
        two = 2 * hidden
        r, z = rz[..., :hidden], rz[..., hidden:]
        a_rz = _plus(_part(dgi, 0, two), _part(dgh, 0, two))
        d_rz = _times(rz * (1.0 - rz), a_rz)
        a_n = _plus(_part(dgi, two, None), _times(r, _part(dgh, two, None)),
                    _times(gh[..., two:], _part(d_rz, 0, hidden)))
        return _plus(_times((1.0 - z) * (1.0 - n * n), a_n), _times(z, dh),
                     _times(h - n, _part(d_rz, hidden, None)))


def _gru_adjoints(g: Any, gh: Any, h: Any, r: Any, z: Any, n: Any) -> tuple:
    """ā_r, ā_z, ā_n: the adjoints of the gates' pre-activations (GRUCell's VJP)."""
    a_n = g * (1.0 - z) * (1.0 - n * n)
    hidden = h.shape[-1]
    return a_n * gh[..., 2 * hidden:] * (r * (1.0 - r)), g * (h - n) * (z * (1.0 - z)), a_n


def _gru_gates(xp: Any, gi: Any, gh: Any) -> tuple:
    """r, z and n from the projections, each (..., H)."""
    hidden = gi.shape[-1] // 3
    two = 2 * hidden
    r = Sigmoid.forward(xp, gi[..., :hidden] + gh[..., :hidden])
    z = Sigmoid.forward(xp, gi[..., hidden:two] + gh[..., hidden:two])
    return r, z, xp.tanh(gi[..., two:] + r * gh[..., two:])


def _or_zeros(xp: Any, t: Any, like: Any) -> Any:
    """A tangent, or zeros shaped as ``like`` (a tangent of the same leading shape)."""
    return xp.zeros_like(like) if t is None else t


class GRUCellBackward(Primitive):
    r""":class:`~difflab.ops.nn_recurrent.GRUCell`'s VJP as one primitive, for a recorded backward.

    ``gru_cell_backward(ḡ, g_i, g_h, h)`` gives :math:`(\bar g_i, \bar g_h, \bar h)`
    packed along the last axis, :math:`(N, 7H)`: ``gru_cell``'s adjoints for the
    output adjoint :math:`\bar h' =` ``ḡ``.  ``gru_cell`` passes its saved gates
    ``rz`` and ``n`` too (two more inputs, optional): where the inputs are arrays,
    the forward reads them instead of computing them again (half of its time; on
    dual numbers the gates are computed, so that they carry tangents).  They are
    functions of :math:`g_i, g_h`, and every rule below differentiates through
    them by computing the gates from :math:`g_i, g_h`, so they themselves get no
    adjoint or tangent.  A backward that is itself recorded
    (``create_graph=True``, a compiled training step) then holds one record per
    step, not the twenty of the rule's operations.  Its own derivatives: the result
    :math:`F(\bar h', x) = J(x)^\top \bar h'` is linear in :math:`\bar h'`, and with
    :math:`\phi(x) = \langle \bar h', \text{cell}(x) \rangle`, :math:`F = \nabla\phi`, so

    .. math::
        \text{VJP}(P) = \big(J(x)\,P,\ \nabla^2\phi(x)\,P\big), \qquad
        \text{JVP}(\dot{\bar h}', \dot x) = F(\dot{\bar h}', x) + \nabla^2\phi(x)\,\dot x .

    The Hessian-vector product :math:`\nabla^2\phi(x)\,v` is the tangent of the
    VJP's lines in direction :math:`v` (``_gru_hvp``), written by hand.
    """

    name = "gru_cell_backward"
    math = "(ḡ_i, ḡ_h, h̄) = J(x)ᵀ h̄'; its VJP (J P, ∇²φ P), φ = ⟨h̄', cell(x)⟩"
    description = "the GRU step's VJP as one record (gru_cell's adjoints, packed)"

    @staticmethod
    def symbolic(sp, g, gi, gh, h, rz=None, n=None):
        return _symbolic(GRUCellBackward, sp, g, gi, gh, h)

    @staticmethod
    def forward(ctx, xp, g, gi, gh, h, rz=None, n=None):
        hidden = _check("gru_cell_backward", gi, h, 3, "gi")
        _check("gru_cell_backward", gh, h, 3, "gh")
        _check("gru_cell_backward", g, h, 1, "the output adjoint")
        if rz is None or n is None or not _is_array(gi):  # (on dual numbers, the gates
            r, z, n = _gru_gates(xp, gi, gh)          # are computed, so they carry tangents)
        else:  # (gru_cell's own gates: the same numbers, not computed again)
            r, z = rz[..., :hidden], rz[..., hidden:]
        a_r, a_z, a_n = _gru_adjoints(g, gh, h, r, z, n)
        ctx.save(g, gi, gh, h)
        ctx.with_gates = rz is not None
        return xp.concatenate([a_r, a_z, a_n, a_r, a_z, r * a_n, g * z], axis=-1)

    @staticmethod
    def vjp(ctx, xp, p, g, gi, gh, h):
        hidden = h.shape[-1]
        gates = _gru_gates(xp, gi, gh)
        v = (p[..., :3 * hidden], p[..., 3 * hidden:6 * hidden], p[..., 6 * hidden:])
        j_p, d_gi, d_gh, d_h = _gru_hvp(xp, g, gh, h, gates, v)
        # (the gates passed in get none: the lines above differentiate through them)
        return (j_p, d_gi, d_gh, d_h) + ((None, None) if ctx.with_gates else ())

    @staticmethod
    def jvp(ctx, xp, dg, dgi, dgh, dh, *rest):
        g, gi, gh, h = rest[-4:]  # (after the gates' tangents, if passed: not read)
        r, z, n = gates = _gru_gates(xp, gi, gh)
        out = None
        if dg is not None:  # F is linear in ḡ
            a_r, a_z, a_n = _gru_adjoints(dg, gh, h, r, z, n)
            out = xp.concatenate([a_r, a_z, a_n, a_r, a_z, r * a_n, dg * z], axis=-1)
        if dgi is not None or dgh is not None or dh is not None:
            # (zeros for an input without a tangent: of a tangent's leading shape, 3H wide)
            like = dgi if dgi is not None else dgh if dgh is not None else \
                xp.concatenate([dh, dh, dh], axis=-1)
            v = (_or_zeros(xp, dgi, like), _or_zeros(xp, dgh, like),
                 _or_zeros(xp, dh, like[..., :h.shape[-1]]))
            _, d_gi, d_gh, d_h = _gru_hvp(xp, g, gh, h, gates, v)
            term = xp.concatenate([d_gi, d_gh, d_h], axis=-1)
            out = term if out is None else out + term
        return out


def _gru_hvp(xp: Any, g: Any, gh: Any, h: Any, gates: tuple, v: tuple) -> tuple:
    r"""The tangents of the GRU step in direction :math:`v = (v_i, v_h, v_{state})`:
    :math:`J v` (the cell's JVP) and the tangent of its VJP's adjoints,
    :math:`\nabla^2\phi\, v` with :math:`\phi = \langle g, \text{cell} \rangle`,
    as (ḡ_i, ḡ_h, h̄) parts.  Each line is the derivative of the VJP's line."""
    r, z, n = gates
    v_gi, v_gh, v_h = v
    hidden = h.shape[-1]
    two = 2 * hidden
    gh_n, v_ghn = gh[..., two:], v_gh[..., two:]
    s_r, s_z, s_n = r * (1.0 - r), z * (1.0 - z), 1.0 - n * n
    r_dot = s_r * (v_gi[..., :hidden] + v_gh[..., :hidden])
    z_dot = s_z * (v_gi[..., hidden:two] + v_gh[..., hidden:two])
    n_dot = s_n * (v_gi[..., two:] + r_dot * gh_n + r * v_ghn)
    j_v = (1.0 - z) * n_dot + z * v_h + (h - n) * z_dot
    a_n = g * (1.0 - z) * s_n
    an_dot = g * (-1.0 * z_dot * s_n - 2.0 * (1.0 - z) * n * n_dot)
    ar_dot = an_dot * gh_n * s_r + a_n * v_ghn * s_r + a_n * gh_n * (1.0 - 2.0 * r) * r_dot
    az_dot = g * ((v_h - n_dot) * s_z + (h - n) * (1.0 - 2.0 * z) * z_dot)
    return (j_v, xp.concatenate([ar_dot, az_dot, an_dot], axis=-1),
            xp.concatenate([ar_dot, az_dot, r_dot * a_n + r * an_dot], axis=-1), g * z_dot)


# --------------------------------------------------------------------------- LSTM


class LSTMCellState(Primitive):
    r"""An LSTM step's new cell state: :math:`c' = \sigma(f) \odot c + \sigma(i) \odot \tanh(g)`.

    ``gates`` is :math:`x W_{ih}^\top + b_{ih} + h W_{hh}^\top + b_{hh}`, :math:`(N, 4H)`,
    cut in quarters :math:`(i, f, g, o)` (``o`` is read by
    :class:`~difflab.ops.nn_recurrent.LSTMHiddenState`).
    With :math:`\sigma_i = \sigma(i)`, :math:`\sigma_f = \sigma(f)`, :math:`t_g = \tanh g`:

    .. math::
        \bar i = \bar c' t_g \sigma_i (1 - \sigma_i), \quad
        \bar f = \bar c' c\, \sigma_f (1 - \sigma_f), \quad
        \bar g = \bar c' \sigma_i (1 - t_g^2), \quad \bar o = 0, \quad
        \bar c = \sigma_f \bar c'.

    JVP: :math:`\dot c' = \sigma_f \dot c + c\,\dot\sigma_f + t_g \dot\sigma_i + \sigma_i \dot t_g`.
    """

    name = "lstm_cell_state"
    math = "c̄ = σ(f) c̄',  (ī, f̄, ḡ, ō) = c̄' (t_g σ_i', c σ_f', σ_i tanh'(g), 0)"
    description = "an LSTM step's new cell state from its gates (fused)"
    first_order_is_cheaper = True

    @staticmethod
    def _gates(xp: Any, gates: Any, hidden: int) -> tuple:
        """σ(i) and σ(f) side by side, and tanh(g)."""
        return (Sigmoid.forward(xp, gates[..., :2 * hidden]),
                xp.tanh(gates[..., 2 * hidden:3 * hidden]))

    @staticmethod
    def symbolic(sp, gates, c):
        return _symbolic(LSTMCellState, sp, gates, c)

    @staticmethod
    def forward(ctx, xp, gates, c):
        hidden = _check("lstm_cell_state", gates, c, 4)
        s_if, t_g = LSTMCellState._gates(xp, gates, hidden)
        ctx.save(gates, c, s_if, t_g)
        return s_if[..., hidden:] * c + s_if[..., :hidden] * t_g

    @staticmethod
    def vjp(ctx, xp, g, gates, c, s_if, t_g):
        hidden = c.shape[-1]
        if _recording(xp):  # one record, itself differentiable
            return _unpacked(xp.record_primitive(LSTMCellStateBackward, g, gates, c), hidden,
                             ctx.needs_input_grad)
        s_i, s_f = s_if[..., :hidden], s_if[..., hidden:]
        need = ctx.needs_input_grad
        g_gates = None
        if need[0]:
            a_if = xp.concatenate([g * t_g, g * c], axis=-1) * (s_if * (1.0 - s_if))
            g_gates = xp.concatenate([a_if, g * s_i * (1.0 - t_g * t_g), xp.zeros_like(c)],
                                     axis=-1)
        return g_gates, (g * s_f if need[1] else None)

    @staticmethod
    def jvp(ctx, xp, d_gates, dc, gates, c, s_if, t_g):
        hidden = c.shape[-1]
        s_i, s_f = s_if[..., :hidden], s_if[..., hidden:]
        d_if = _times(s_if * (1.0 - s_if), _part(d_gates, 0, 2 * hidden))
        d_tg = _times(1.0 - t_g * t_g, _part(d_gates, 2 * hidden, 3 * hidden))
        return _plus(_times(s_f, dc), _times(c, _part(d_if, hidden, None)),
                     _times(t_g, _part(d_if, 0, hidden)), _times(s_i, d_tg))


class LSTMHiddenState(Primitive):
    r"""An LSTM step's new hidden state: :math:`h' = \sigma(o) \odot \tanh(c')`.

    ``gates`` as for :class:`~difflab.ops.nn_recurrent.LSTMCellState` (only its last
    quarter ``o`` is read), ``c`` the new cell state :math:`c'`.  With
    :math:`\sigma_o = \sigma(o)` and :math:`t = \tanh c'`:

    .. math::
        \bar o = \bar h' t\, \sigma_o (1 - \sigma_o), \quad \bar i = \bar f = \bar g = 0,
        \quad \bar c' = \bar h' \sigma_o (1 - t^2).

    JVP: :math:`\dot h' = t \dot\sigma_o + \sigma_o (1 - t^2)\, \dot c'`.
    """

    name = "lstm_hidden_state"
    math = "c̄' = h̄' σ(o)(1 - tanh²c'),  ō = h̄' tanh(c') σ'(o)"
    description = "an LSTM step's new hidden state from its output gate and cell state (fused)"
    first_order_is_cheaper = True

    @staticmethod
    def symbolic(sp, gates, c):
        return _symbolic(LSTMHiddenState, sp, gates, c)

    @staticmethod
    def forward(ctx, xp, gates, c):
        hidden = _check("lstm_hidden_state", gates, c, 4)
        s_o, t = Sigmoid.forward(xp, gates[..., 3 * hidden:]), xp.tanh(c)
        ctx.save(gates, c, s_o, t)
        return s_o * t

    @staticmethod
    def vjp(ctx, xp, g, gates, c, s_o, t):
        hidden = c.shape[-1]
        if _recording(xp):  # one record, itself differentiable
            return _unpacked(xp.record_primitive(LSTMHiddenStateBackward, g, gates, c), hidden,
                             ctx.needs_input_grad)
        need = ctx.needs_input_grad
        g_gates = None
        if need[0]:
            g_gates = xp.concatenate([xp.zeros_like(gates[..., :3 * hidden]),
                                      g * t * (s_o * (1.0 - s_o))], axis=-1)
        return g_gates, (g * s_o * (1.0 - t * t) if need[1] else None)

    @staticmethod
    def jvp(ctx, xp, d_gates, dc, gates, c, s_o, t):
        hidden = c.shape[-1]
        return _plus(_times(t * (s_o * (1.0 - s_o)), _part(d_gates, 3 * hidden, None)),
                     _times(s_o * (1.0 - t * t), dc))


# ------------------------------------------------------- the LSTM's recorded VJPs


def _unpacked(packed: Any, hidden: int, need: tuple) -> tuple:
    """(ḡates, c̄) out of an LSTM backward record's (..., 5H) result."""
    return (packed[..., :4 * hidden] if need[0] else None,
            packed[..., 4 * hidden:] if need[1] else None)


def _lstm_tangent(xp: Any, tangents: tuple, like_gates: Any, like_state: Any) -> tuple:
    """A direction (v_gates, v_c) with zeros for a missing part, or None if both are."""
    d_gates, dc = tangents
    if d_gates is None and dc is None:
        return None
    if d_gates is None:
        d_gates = xp.zeros_like(xp.concatenate([dc, dc, dc, dc], axis=-1))
    return d_gates, (xp.zeros_like(d_gates[..., :like_state.shape[-1]]) if dc is None
                     else dc)


class _LSTMStepBackward(Primitive):
    """What the two LSTM backward records share: their checks, and their VJP and JVP
    from the subclass's ``adjoints`` (:math:`F`, linear in the output adjoint) and ``hvp``
    (:math:`J v`, then the tangent of :math:`(\bar{\text{gates}}, \bar c)` in direction v)."""

    @classmethod
    def adjoints(cls, xp, g, gates, c):
        raise NotImplementedError

    @classmethod
    def hvp(cls, xp, g, gates, c, v):
        raise NotImplementedError

    @classmethod
    def symbolic(cls, sp, g, gates, c):
        return _symbolic(cls, sp, g, gates, c)

    @classmethod
    def forward(cls, ctx, xp, g, gates, c):
        _check(cls.name, gates, c, 4)
        _check(cls.name, g, c, 1, "the output adjoint")
        ctx.save(g, gates, c)
        return cls.adjoints(xp, g, gates, c)

    @classmethod
    def vjp(cls, ctx, xp, p, g, gates, c):
        hidden = c.shape[-1]
        return cls.hvp(xp, g, gates, c, (p[..., :4 * hidden], p[..., 4 * hidden:]))

    @classmethod
    def jvp(cls, ctx, xp, dg, d_gates, dc, g, gates, c):
        """F(ġ, x) (F is linear in g) plus ∇²φ(x) ẋ."""
        out = None
        if dg is not None:
            out = cls.adjoints(xp, dg, gates, c)
        v = _lstm_tangent(xp, (d_gates, dc), gates, c)
        if v is not None:
            term = xp.concatenate(cls.hvp(xp, g, gates, c, v)[1:], axis=-1)
            out = term if out is None else out + term
        return out


class LSTMCellStateBackward(_LSTMStepBackward):
    r""":class:`~difflab.ops.nn_recurrent.LSTMCellState`'s VJP as one primitive.

    ``lstm_cell_state_backward(c̄', gates, c)`` gives :math:`(\bar{\text{gates}}, \bar c)`
    packed along the last axis, :math:`(N, 5H)`, for a recorded backward (one record per
    step).  As for :class:`~difflab.ops.nn_recurrent.GRUCellBackward`, with
    :math:`\phi = \langle \bar c', c' \rangle`: VJP :math:`(J P, \nabla^2\phi\, P)`,
    JVP :math:`F(\dot{\bar c}', x) + \nabla^2\phi\, \dot x`; the Hessian-vector
    product is the tangent of the VJP's lines, e.g.
    :math:`\bar f = \bar c' c\, \sigma_f (1 - \sigma_f)` has the tangent
    :math:`\bar c' (\dot c\, \sigma_f (1 - \sigma_f) + c (1 - 2\sigma_f)\dot\sigma_f)`.
    """

    name = "lstm_cell_state_backward"
    math = "(ḡates, c̄) = Jᵀ c̄'; its VJP (J P, ∇²φ P), φ = ⟨c̄', c'⟩"
    description = "the LSTM cell state's VJP as one record (packed adjoints)"

    @staticmethod
    def adjoints(xp, g, gates, c):
        """The packed (ḡates, c̄) for the output adjoint g (F, linear in g)."""
        hidden = c.shape[-1]
        s_if, t_g = LSTMCellState._gates(xp, gates, hidden)
        s_i, s_f = s_if[..., :hidden], s_if[..., hidden:]
        a_f = g * c * (s_f * (1.0 - s_f))  # (g may carry tangents' k axis: zeros like it)
        return xp.concatenate([g * t_g * (s_i * (1.0 - s_i)), a_f, g * s_i * (1.0 - t_g * t_g),
                               xp.zeros_like(a_f), g * s_f], axis=-1)

    @staticmethod
    def hvp(xp, g, gates, c, v):
        """(J v, then the tangents of ḡates (its four parts) and of c̄ in direction v)."""
        hidden = c.shape[-1]
        v_gates, v_c = v
        s_if, t_g = LSTMCellState._gates(xp, gates, hidden)
        s_i, s_f = s_if[..., :hidden], s_if[..., hidden:]
        d_if = s_if * (1.0 - s_if) * v_gates[..., :2 * hidden]
        d_i, d_f = d_if[..., :hidden], d_if[..., hidden:]
        d_t = (1.0 - t_g * t_g) * v_gates[..., 2 * hidden:3 * hidden]
        j_v = s_f * v_c + c * d_f + t_g * d_i + s_i * d_t
        return (j_v,
                xp.concatenate([
                    g * (d_t * (s_i * (1.0 - s_i)) + t_g * (1.0 - 2.0 * s_i) * d_i),
                    g * (v_c * (s_f * (1.0 - s_f)) + c * (1.0 - 2.0 * s_f) * d_f),
                    g * (d_i * (1.0 - t_g * t_g) - 2.0 * s_i * t_g * d_t),
                    xp.zeros_like(d_f)], axis=-1),
                g * d_f)


class LSTMHiddenStateBackward(_LSTMStepBackward):
    r""":class:`~difflab.ops.nn_recurrent.LSTMHiddenState`'s VJP as one primitive.

    ``lstm_hidden_state_backward(h̄', gates, c)`` gives :math:`(\bar{\text{gates}}, \bar c)`
    packed, :math:`(N, 5H)`; its derivatives as
    :class:`~difflab.ops.nn_recurrent.LSTMCellStateBackward`'s, with
    :math:`\phi = \langle \bar h', \sigma(o) \tanh c \rangle`.
    """

    name = "lstm_hidden_state_backward"
    math = "(ḡates, c̄) = Jᵀ h̄'; its VJP (J P, ∇²φ P), φ = ⟨h̄', h'⟩"
    description = "the LSTM hidden state's VJP as one record (packed adjoints)"

    @staticmethod
    def adjoints(xp, g, gates, c):
        """The packed (ḡates, c̄) for the output adjoint g (F, linear in g)."""
        hidden = c.shape[-1]
        s_o, t = Sigmoid.forward(xp, gates[..., 3 * hidden:]), xp.tanh(c)
        a_o = g * t * (s_o * (1.0 - s_o))  # (g may carry tangents' k axis: zeros like it)
        zero = xp.zeros_like(a_o)
        return xp.concatenate([zero, zero, zero, a_o, g * s_o * (1.0 - t * t)], axis=-1)

    @staticmethod
    def hvp(xp, g, gates, c, v):
        """(J v, then the tangents of ḡates (its (i, f, g) and o parts) and of c̄)."""
        hidden = c.shape[-1]
        v_gates, v_c = v
        s_o, t = Sigmoid.forward(xp, gates[..., 3 * hidden:]), xp.tanh(c)
        d_o = s_o * (1.0 - s_o) * v_gates[..., 3 * hidden:]
        d_t = (1.0 - t * t) * v_c
        return (t * d_o + s_o * d_t,
                xp.concatenate([xp.zeros_like(v_gates[..., :3 * hidden]),
                                g * (d_t * (s_o * (1.0 - s_o)) + t * (1.0 - 2.0 * s_o) * d_o)],
                               axis=-1),
                g * (d_o * (1.0 - t * t) - 2.0 * s_o * t * d_t))


PRIMITIVES = (GRUCell, GRUCellBackward, LSTMCellState, LSTMHiddenState, LSTMCellStateBackward,
              LSTMHiddenStateBackward)
