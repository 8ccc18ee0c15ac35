r"""A ReLU and its backward's mask as one numba loop each (fastpath shortcut 20).  Skip it
on a first read.

``relu(x) = maximum(0, x)`` and its derivative's mask ``sign(y)`` are each one NumPy
call, but slow ones for what they compute: NumPy's ``maximum`` of a number and a
float32 array, and its float32 ``sign``, ran at about a nanosecond an element (an
MLP's 128 x 512 hidden layer: 56 and 48 µs), where a loop the compiler runs in SIMD
lanes takes a quarter of that.  In a compiled program (:mod:`~difflab.jit.prepared_steps`)
the two steps are such loops, written to give NumPy's bits exactly:

* ``maximum(0, x)``: NumPy gives its second argument on a tie and any NaN, so
  ``relu(-0.0)`` is ``-0.0`` and a NaN passes through as it is (its payload too); the
  loop writes ``0`` where ``x < 0`` and ``x`` itself everywhere else;
* ``sign(y)``: ``1`` where ``y > 0``, ``-1`` where ``y < 0``, ``+0`` where ``y`` is
  a zero of either sign, ``y`` itself where it is NaN (NumPy's ``npy_sign``).

Only C-contiguous float32 and float64 NumPy arrays of at least :data:`LARGE` elements
take the loops (a smaller array's NumPy call costs less than the loop's call);
``tests/jit/test_jit_sign_loops.py`` compares them with NumPy on values with every
edge, in every position of a SIMD block.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

#: The fewest elements the loops take: below, NumPy's call is as fast.
LARGE = 1024

_FLOATS = (np.dtype(np.float64), np.dtype(np.float32))


def _relu(x, y, zero):  # pragma: no cover (numba compiles it)
    """y = maximum(0, x) as NumPy computes it: 0 where x < 0, else x itself (-0.0, NaN).

    ``zero`` is a number of the arrays' dtype, so nothing is converted on the way (one
    select per element, which the compiler runs in SIMD lanes)."""
    for i in range(x.size):
        v = x[i]
        y[i] = zero if v < 0 else v


def _sign(x, y, one, minus_one, zero):  # pragma: no cover (numba compiles it)
    """y = sign(x) as NumPy computes it: 1, -1, +0 for either zero, x itself for NaN (the
    numbers of the arrays' dtype, as for :func:`_relu`)."""
    for i in range(x.size):
        v = x[i]
        y[i] = one if v > 0 else (minus_one if v < 0 else (zero if v == 0 else v))


_LOOPS: dict = {}  # name -> numba's dispatcher, made on first use


def _loop(name: str) -> Callable:
    if not _LOOPS:
        import numba

        jit = numba.njit(error_model="numpy", cache=True)
        _LOOPS.update(relu=jit(_relu), sign=jit(_sign))
    return _LOOPS[name]


def elementwise_loop(name: str, dtype: Any, size: int) -> Callable | None:
    """``forward(x)`` for ``relu`` or ``sign`` of arrays of this dtype and size, computed
    by one loop, NumPy's bits; None where the loop does not apply (another name or
    dtype, fewer than :data:`LARGE` elements, no numba).

    Parameters
    ----------
    name : str
        ``"relu"`` or ``"sign"``.
    dtype : dtype-like
        The arrays' dtype (float32 or float64).
    size : int
        Their number of elements.

    Returns
    -------
    callable or None
        ``forward(x)`` for a C-contiguous NumPy array ``x`` of that dtype and size (the
        caller checks), returning a new array of ``x``'s shape.

    Examples
    --------
    >>> import numpy as np
    >>> from difflab.jit.sign_loops import elementwise_loop
    >>> x = np.array([-2.0, -0.0, 0.0, 3.0, np.nan] * 300)
    >>> relu = elementwise_loop("relu", x.dtype, x.size)
    >>> (relu or (lambda a: np.maximum(0, a)))(x).tobytes() == np.maximum(0, x).tobytes()
    True
    """
    from difflab.jit.fusion import USE_NUMBA

    if not USE_NUMBA or name not in ("relu", "sign") or np.dtype(dtype) not in _FLOATS \
            or size < LARGE:
        return None
    loop, empty, number = _loop(name), np.empty, np.dtype(dtype).type
    numbers = (number(0),) if name == "relu" else (number(1), number(-1), number(0))

    def forward(x: np.ndarray) -> np.ndarray:
        y = empty(x.shape, x.dtype)
        loop(x.reshape(-1), y.reshape(-1), *numbers)
        return y
    return forward
