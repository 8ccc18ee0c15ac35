r"""The discrete Fourier transforms (``difflab.fft``'s primitives): forward beside VJP and JVP.

Three primitives, PyTorch's own three (``_fft_c2c``, ``_fft_r2c``, ``_fft_c2r``), each a
1-D transform along one ``axis``; ``difflab.fft`` composes them into every public function
(an n-dimensional transform is the 1-D one along each axis in turn, ``n`` a crop or a zero
padding of the input before it).  With :math:`\omega = e^{-2\pi i/n}` the DFT of length
:math:`n` is the symmetric matrix :math:`F_{jk} = \omega^{jk}`; its inverse direction is
:math:`F^* = \bar F` (the opposite sign of the exponent), and ``norm`` divides by

==============  =====================  =======================
``norm``        forward (:math:`F`)    inverse (:math:`F^*`)
==============  =====================  =======================
``"backward"``  1                      :math:`n`
``"ortho"``     :math:`\sqrt n`        :math:`\sqrt n`
``"forward"``   :math:`n`              1
==============  =====================  =======================

**The derivative of a linear map is the map.**  Each transform :math:`y = Ax` is linear,
so its JVP is the same transform of the tangent, :math:`\dot y = A\dot x`, and its VJP
(PyTorch's convention for complex values, :mod:`difflab.ops.complex_numbers`) is the
conjugate transpose, :math:`\bar x = A^H\bar y`.  For :math:`A = F/d`,
:math:`A^H = \bar F/d`: the DFT of the cotangent *with the opposite sign and the same
divisor*, which is the other direction with the *transposed* ``norm``
(``"backward"`` ↔ ``"forward"``, ``"ortho"`` itself: :data:`TRANSPOSED`).  The real-input
and real-output transforms add the half spectrum's bookkeeping (see their classes).

The rules call the primitives themselves (``_call``, as :mod:`difflab.ops.linalg` does):
on arrays that is NumPy's or CuPy's ``xp.fft``; in a recorded backward
(``create_graph=True``) it goes through the dispatch, so second derivatives need nothing
more.  Forward mode refuses complex values (:mod:`difflab.diff.dual`), so the JVPs are
for a reader and the tests; reverse mode follows them as PyTorch does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from difflab.ops import linalg
from difflab.ops.linalg import _call, _routed
from difflab.ops.primitive import Primitive

#: ``norm`` of the adjoint: the divisor of F/d, read from the other direction's table.
TRANSPOSED = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _complex_of(dtype: Any) -> Any:
    """complex64 for float32 or complex64, complex128 for float64 or complex128."""
    return np.result_type(dtype, np.complex64)


def _real_of(dtype: Any) -> Any:
    """float32 for complex64 or float32, float64 for complex128 or float64."""
    return np.empty(0, dtype).real.dtype


def _along(axis: int, ndim: int, part: slice) -> tuple:
    """An index that takes ``part`` of dimension ``axis`` and all of the others."""
    return (slice(None),) * (axis % ndim) + (part,)


def _tangent_axis(axis: int, ndim: int) -> int:
    """``axis`` counted from the end: a JVP's tangents carry a leading axis of directions."""
    return axis % ndim - ndim


def _zero_padded(xp: Any, g: Any, axis: int, n: int) -> Any:
    """``g`` (length m ≤ n along ``axis``) with zeros after it up to length n."""
    out = g
    while out.shape[axis] < n:
        out = xp.concatenate([out, xp.zeros_like(g)], axis=axis)
    return out[_along(axis, g.ndim, slice(0, n))]


class FFTC2C(Primitive):
    r"""y = F x / d (``inverse``: :math:`\bar F x / d`), complex to complex along ``axis``.

    JVP: the same transform of :math:`\dot x`.  VJP: :math:`\bar x = A^H \bar y`, the
    transform in the other direction with the transposed ``norm`` (the DFT matrix is
    symmetric, so its conjugate transpose is its conjugate).  A real ``x`` is read as
    complex, and receives the real part of :math:`\bar x` (the engine's rule).
    """

    name = "fft_c2c"
    description = "the discrete Fourier transform of complex values along one dimension"
    math = "ẏ = F ẋ / d;  x̄ = conj(F) ȳ / d  (the other direction, transposed norm)"

    @staticmethod
    def forward(ctx, xp, x, axis, norm, inverse):
        ctx.axis, ctx.norm, ctx.inverse, ctx.ndim = axis, norm, inverse, x.ndim
        if _routed(xp, x):  # (tensors or dual numbers as values: the dispatch unwraps them)
            return linalg.BIND(FFTC2C, x, axis=axis, norm=norm, inverse=inverse)
        transform = xp.fft.ifft if inverse else xp.fft.fft
        return transform(x, axis=axis, norm=norm).astype(_complex_of(x.dtype), copy=False)

    @staticmethod
    def complex_vjp(ctx, xp, g):
        return (_call(xp, FFTC2C, g, axis=ctx.axis, norm=TRANSPOSED[ctx.norm],
                      inverse=not ctx.inverse),)

    vjp = complex_vjp  # (its output is complex: every adjoint that reaches it is too)

    @staticmethod
    def jvp(ctx, xp, dx):
        return _call(xp, FFTC2C, dx, axis=_tangent_axis(ctx.axis, ctx.ndim), norm=ctx.norm,
                     inverse=ctx.inverse)


class FFTR2C(Primitive):
    r"""y = (F x / d)[0 : n//2 + 1], the half spectrum of a real x (length n) along ``axis``.

    The other bins are the conjugates of these (:math:`y_{n-k} = y_k^*`), so they are
    left out.  As a matrix, :math:`A = P F / d` with :math:`P` keeping the first
    :math:`n/2 + 1` rows.  JVP: the same transform of :math:`\dot x`.  VJP:
    :math:`\bar x = \mathrm{Re}(A^H \bar y) = \mathrm{Re}(\bar F P^T \bar y) / d`:
    :math:`\bar y` padded with zeros to length :math:`n`, transformed in the inverse
    direction with the transposed ``norm``, its real part (PyTorch's
    ``fft_r2c_backward``).
    """

    name = "fft_r2c"
    description = "the half spectrum of real values along one dimension"
    math = "ẏ = P F ẋ / d;  x̄ = Re(conj(F) [ȳ, 0, ..., 0]) / d"

    @staticmethod
    def forward(ctx, xp, x, axis, norm):
        ctx.axis, ctx.norm, ctx.ndim, ctx.n = axis, norm, x.ndim, x.shape[axis]
        if _routed(xp, x):  # (tensors or dual numbers as values: the dispatch unwraps them)
            return linalg.BIND(FFTR2C, x, axis=axis, norm=norm)
        return xp.fft.rfft(x, axis=axis, norm=norm).astype(_complex_of(x.dtype), copy=False)

    @staticmethod
    def complex_vjp(ctx, xp, g):
        full = _call(xp, FFTC2C, _zero_padded(xp, g, ctx.axis, ctx.n), axis=ctx.axis,
                     norm=TRANSPOSED[ctx.norm], inverse=True)
        return (xp.real(full),)

    vjp = complex_vjp  # (its output is complex: every adjoint that reaches it is too)

    @staticmethod
    def jvp(ctx, xp, dx):
        return _call(xp, FFTR2C, dx, axis=_tangent_axis(ctx.axis, ctx.ndim), norm=ctx.norm)


class FFTC2R(Primitive):
    r"""y = the real signal of length ``n`` whose half spectrum is x (length n//2 + 1).

    The inverse direction of :class:`FFTR2C`: x is completed by conjugate symmetry
    (:math:`x_{n-k} = x_k^*`), transformed by :math:`\bar F / d`; the imaginary parts of
    :math:`x_0` (and of :math:`x_{n/2}` for even n) are not read.  Its output is real, so
    its ``vjp`` is the whole rule: bin k of the half spectrum stands for bin k and bin
    n − k of the full one, so its adjoint is the forward half transform of :math:`\bar y`
    (transposed ``norm``) with bins :math:`1 \le k \le n - (n/2 + 1)` *doubled*; bin 0
    (and bin n/2 for even n) is its own mirror (PyTorch's ``fft_c2r_backward``).  JVP: the
    same transform of :math:`\dot x`.
    """

    name = "fft_c2r"
    description = "the real signal of a half spectrum along one dimension"
    math = "ẏ = C2R(ẋ);  x̄ = w · R2C(ȳ), w_k = 2 for 1 ≤ k ≤ n − (n//2 + 1), else 1"

    @staticmethod
    def forward(ctx, xp, x, axis, norm, n):
        if x.shape[axis] != n // 2 + 1:
            raise ValueError(f"fft_c2r: a real signal of length {n} has a half spectrum of "
                             f"{n // 2 + 1} bins, got {x.shape[axis]} (crop or pad it first)")
        ctx.axis, ctx.norm, ctx.ndim, ctx.n = axis, norm, x.ndim, n
        if _routed(xp, x):  # (tensors or dual numbers as values: the dispatch unwraps them)
            return linalg.BIND(FFTC2R, x, axis=axis, norm=norm, n=n)
        out = xp.fft.irfft(x, n=n, axis=axis, norm=norm)
        return out.astype(_real_of(_complex_of(x.dtype)), copy=False)

    @staticmethod
    def vjp(ctx, xp, g):
        half = _call(xp, FFTR2C, g, axis=ctx.axis, norm=TRANSPOSED[ctx.norm])
        doubled = ctx.n - (ctx.n // 2 + 1)  # bins 1..doubled have a mirror n - k in the rest
        if doubled <= 0:
            return (half,)
        pieces = [half[_along(ctx.axis, half.ndim, part)]
                  for part in (slice(0, 1), slice(1, 1 + doubled), slice(1 + doubled, None))]
        return (xp.concatenate([pieces[0], pieces[1] * 2, pieces[2]], axis=ctx.axis),)

    @staticmethod
    def jvp(ctx, xp, dx):
        return _call(xp, FFTC2R, dx, axis=_tangent_axis(ctx.axis, ctx.ndim), norm=ctx.norm,
                     n=ctx.n)


PRIMITIVES = [FFTC2C, FFTR2C, FFTC2R]
