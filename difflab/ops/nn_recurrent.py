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
backward is itself differentiated correctly.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from difflab.ops.nn_ops import _recording
from difflab.ops.primitive import Primitive


def _sigmoid(xp: Any, x: Any) -> Any:
    """σ(x) = (1 + tanh(x/2))/2: never overflows (``difflab.sigmoid``'s formula)."""
    return 0.5 + 0.5 * xp.tanh(0.5 * x)


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
    xp = SimpleNamespace(tanh=lambda v: sp.elementwise(sp.tanh, v))
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
        rz = _sigmoid(xp, gi[..., :2 * hidden] + gh[..., :2 * hidden])
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
        two = 2 * hidden
        if _recording(xp):  # (computed again from the inputs: differentiated too)
            r = _sigmoid(xp, gi[..., :hidden] + gh[..., :hidden])
            z = _sigmoid(xp, gi[..., hidden:two] + gh[..., hidden:two])
            n = xp.tanh(gi[..., two:] + r * gh[..., two:])
        else:
            r, z = rz[..., :hidden], rz[..., hidden:]
        a_n = g * (1.0 - z) * (1.0 - n * n)
        a_r = a_n * gh[..., two:] * (r * (1.0 - r))
        a_z = g * (h - n) * (z * (1.0 - z))
        need = ctx.needs_input_grad
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
        return (_sigmoid(xp, gates[..., :2 * hidden]),
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
        if _recording(xp):
            s_if, t_g = LSTMCellState._gates(xp, gates, hidden)
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
        s_o, t = _sigmoid(xp, gates[..., 3 * hidden:]), xp.tanh(c)
        ctx.save(gates, c, s_o, t)
        return s_o * t

    @staticmethod
    def vjp(ctx, xp, g, gates, c, s_o, t):
        hidden = c.shape[-1]
        if _recording(xp):
            s_o, t = _sigmoid(xp, gates[..., 3 * hidden:]), xp.tanh(c)
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


PRIMITIVES = (GRUCell, LSTMCellState, LSTMHiddenState)
