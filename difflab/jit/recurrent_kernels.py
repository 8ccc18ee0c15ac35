r"""A GRU step and its VJP as numba loops, for a compiled program (fastpath shortcut 14).

:class:`~difflab.ops.nn_recurrent.GRUCell`'s VJP on arrays is seventeen
NumPy calls on the step's small arrays (a GRU of 32 hidden units, batch 8:
8 x 32 numbers each), about 19 µs, nearly all of it the calls' own cost.
A compiled backward graph holds one such node per time step
(``gru_cell_vjp0``), so :func:`gru_vjp_forward` runs the same arithmetic as
one loop over the elements, written here by hand:

.. math::
    \bar a_n = (\bar h' (1 - z))(1 - n n), \quad
    \bar a_r = (\bar a_n\, g_{h,n})(r (1 - r)), \quad
    \bar a_z = (\bar h' (h - n))(z (1 - z)),

then :math:`\bar g_i = (\bar a_r, \bar a_z, \bar a_n)`,
:math:`\bar g_h = (\bar a_r, \bar a_z, r \bar a_n)` and :math:`\bar h = \bar h' z`.

Each product and difference is the one ``_gru_adjoints`` computes, in the
same order, and each is rounded once (IEEE; numba is not allowed to
contract a product and a sum into one fused multiply-add without
``fastmath``), so the loop gives the same bits as the NumPy lines; the
tests compare them on random steps.  The loop is compiled on first use and
kept in numba's disk cache.  Without numba, or for arrays it was not made
for, the rule's own VJP runs.

The step itself (:func:`gru_cell_forward`) is eleven NumPy calls; its
products and sums become three loops around NumPy's own two ``tanh`` calls
(a loop's ``tanh`` is the C library's, which need not round as NumPy's does),
about 13 µs down to 6.5 µs per step at those sizes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

_KERNEL: list = []  # the compiled loop, made on first use


def _adjoints(g, gh, h, rz, n, d_gi, d_gh, d_h, one):  # pragma: no cover (numba compiles it)
    """The loop: writes ḡ_i and ḡ_h (N, 3H) and h̄ (N, H) for a batch of N steps.

    ``one`` is 1 in the arrays' dtype: a float32 step's ``1 - z`` stays float32, as
    NumPy's ``1.0 - z`` does (a literal 1.0 would make numba compute it in float64).
    """
    rows, hidden = h.shape
    for i in range(rows):
        for j in range(hidden):
            gij, r, z, nij = g[i, j], rz[i, j], rz[i, hidden + j], n[i, j]
            a_n = gij * (one - z) * (one - nij * nij)
            a_r = a_n * gh[i, 2 * hidden + j] * (r * (one - r))
            a_z = gij * (h[i, j] - nij) * (z * (one - z))
            d_gi[i, j] = a_r
            d_gi[i, hidden + j] = a_z
            d_gi[i, 2 * hidden + j] = a_n
            d_gh[i, j] = a_r
            d_gh[i, hidden + j] = a_z
            d_gh[i, 2 * hidden + j] = r * a_n
            d_h[i, j] = gij * z


def _pre_gates(gi, gh, s, half):  # pragma: no cover (numba compiles it)
    """s = ½ (g_i + g_h) on the r and z columns: the argument of the sigmoids' tanh."""
    rows, two = s.shape
    for i in range(rows):
        for j in range(two):
            s[i, j] = half * (gi[i, j] + gh[i, j])


def _gates(gi, gh, t, rz, a, half):  # pragma: no cover (numba compiles it)
    """rz = ½ + ½ tanh(...), then a = g_{i,n} + r g_{h,n}: the argument of n's tanh."""
    rows, hidden = a.shape
    for i in range(rows):
        for j in range(2 * hidden):
            rz[i, j] = half + half * t[i, j]
        for j in range(hidden):
            a[i, j] = gi[i, 2 * hidden + j] + rz[i, j] * gh[i, 2 * hidden + j]


def _state(h, rz, n, out):  # pragma: no cover (numba compiles it)
    """h' = n + z (h - n)."""
    rows, hidden = h.shape
    for i in range(rows):
        for j in range(hidden):
            out[i, j] = n[i, j] + rz[i, hidden + j] * (h[i, j] - n[i, j])


def _kernel(which: int = 0) -> Callable:
    """The compiled loops, made on first use: 0 the VJP's, 1-3 the forward's."""
    if not _KERNEL:
        import numba

        _KERNEL.extend(numba.njit(error_model="numpy", cache=True)(f)
                       for f in (_adjoints, _pre_gates, _gates, _state))
    return _KERNEL[which]


def gru_cell_forward(dtype: np.dtype, fallback: Callable) -> Callable | None:
    """The forward of a ``gru_cell`` node as three loops around NumPy's two ``tanh`` calls,
    or None (no numba, a dtype with no loop).

    :class:`~difflab.ops.nn_recurrent.GRUCell`'s forward is eleven NumPy calls;
    here the products and sums are the loops' (the same operations in the same
    order, each rounded once) and the two ``tanh`` are NumPy's own, so the
    result and the saved gates are the forward's bits.

    Parameters
    ----------
    dtype : numpy.dtype
        The node's dtype (float64 or float32).
    fallback : callable
        The node's plain forward, ``fallback(ctx, xp, g_i, g_h, h)``.

    Returns
    -------
    callable or None
        ``forward(ctx, xp, g_i, g_h, h)``, saving ``(g_i, g_h, h, rz, n)`` as
        the primitive does.

    Examples
    --------
    >>> import numpy as np
    >>> from difflab.jit.recurrent_kernels import gru_cell_forward
    >>> from difflab.ops.nn_recurrent import GRUCell
    >>> from difflab.ops.registry import Context
    >>> rng = np.random.default_rng(0)
    >>> gi, gh, h = (rng.normal(size=s) for s in [(2, 9), (2, 9), (2, 3)])
    >>> got, want = Context(()), Context(())
    >>> forward = gru_cell_forward(np.dtype(np.float64), None)
    >>> forward(got, np, gi, gh, h).tobytes() == GRUCell.forward(want, np, gi, gh, h).tobytes()
    True
    >>> all(a.tobytes() == b.tobytes() for a, b in zip(got.saved, want.saved))
    True
    """
    from difflab.jit.fusion import USE_NUMBA

    if not USE_NUMBA or dtype not in (np.dtype(np.float64), np.dtype(np.float32)):
        return None
    pre_gates, gates, state, empty, tanh = _kernel(1), _kernel(2), _kernel(3), np.empty, np.tanh
    dtype = np.dtype(dtype)
    half = dtype.type(0.5)

    def forward(ctx: Any, xp: Any, gi: Any, gh: Any, h: Any) -> Any:
        for a in (gi, gh, h):
            if type(a) is not np.ndarray or a.dtype is not dtype or a.ndim != 2:
                return fallback(ctx, xp, gi, gh, h)
        rows, hidden = h.shape
        if gi.shape != (rows, 3 * hidden) or gh.shape != (rows, 3 * hidden):
            return fallback(ctx, xp, gi, gh, h)  # (the primitive's own error message)
        t = empty((rows, 2 * hidden), dtype)
        pre_gates(gi, gh, t, half)
        tanh(t, out=t)
        rz, n = empty((rows, 2 * hidden), dtype), empty((rows, hidden), dtype)
        gates(gi, gh, t, rz, n, half)
        tanh(n, out=n)
        out = empty((rows, hidden), dtype)
        state(h, rz, n, out)
        ctx.save(gi, gh, h, rz, n)
        return out
    return forward


def gru_vjp_forward(index: int, needs: tuple, dtype: np.dtype,
                    fallback: Callable) -> Callable | None:
    """The forward of a ``gru_cell_vjp{index}`` node as one loop, or None where it does not
    apply (another primitive's VJP, no numba, a dtype with no loop).

    Parameters
    ----------
    index : int
        The adjoint the node returns (0: ḡ_i, 1: ḡ_h, 2: h̄); the other adjoints
        ``needs`` asks for are its saved arrays, in input order.
    needs : tuple of bool
        ``needs_input_grad`` of the cell's three inputs.
    dtype : numpy.dtype
        The node's dtype (float64 or float32).
    fallback : callable
        The node's plain forward, ``fallback(ctx, xp, *arrays)``.

    Returns
    -------
    callable or None
        ``forward(ctx, xp, ḡ, g_i, g_h, h, rz, n)``.

    Examples
    --------
    >>> import numpy as np
    >>> from difflab.jit.recurrent_kernels import gru_vjp_forward
    >>> from difflab.ops.nn_recurrent import GRUCell
    >>> from difflab.ops.registry import Context
    >>> rng = np.random.default_rng(0)
    >>> gi, gh, h, g = (rng.normal(size=s) for s in [(2, 9), (2, 9), (2, 3), (2, 3)])
    >>> ctx = Context((True, True, True))
    >>> _ = GRUCell.forward(ctx, np, gi, gh, h)
    >>> forward = gru_vjp_forward(0, (True, True, True), np.dtype(np.float64), None)
    >>> out = Context(())
    >>> d_gi = forward(out, np, g, *ctx.saved)
    >>> want = GRUCell.vjp(Context((True, True, True)), np, g, *ctx.saved)
    >>> d_gi.tobytes() == want[0].tobytes(), out.saved[1].tobytes() == want[2].tobytes()
    (True, True)
    """
    from difflab.jit.fusion import USE_NUMBA

    if not USE_NUMBA or dtype not in (np.dtype(np.float64), np.dtype(np.float32)) \
            or not needs[index]:
        return None
    kernel, empty = _kernel(), np.empty
    dtype = np.dtype(dtype)
    one = dtype.type(1.0)
    others = [k for k in range(3) if needs[k] and k != index]

    def forward(ctx: Any, xp: Any, g: Any, gi: Any, gh: Any, h: Any, rz: Any, n: Any) -> Any:
        for a in (g, gh, h, rz, n):
            if type(a) is not np.ndarray or a.dtype is not dtype or a.ndim != 2:
                return fallback(ctx, xp, g, gi, gh, h, rz, n)
        rows, hidden = h.shape
        if g.shape != h.shape or n.shape != h.shape or rz.shape != (rows, 2 * hidden) \
                or gh.shape != (rows, 3 * hidden):  # (the loop reads by position)
            return fallback(ctx, xp, g, gi, gh, h, rz, n)
        d_gi, d_gh = empty((rows, 3 * hidden), dtype), empty((rows, 3 * hidden), dtype)
        d_h = empty((rows, hidden), dtype)
        kernel(g, gh, h, rz, n, d_gi, d_gh, d_h, one)
        adjoints = (d_gi, d_gh, d_h)
        if others:
            ctx.save(*[adjoints[k] for k in others])
        return adjoints[index]
    return forward
