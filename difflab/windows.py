"""Signal windows: ``hann_window``, ``hamming_window``, ``blackman_window``, ... (PyTorch's).

A window tapers a signal's ends before a Fourier transform.  Each is a formula in
``n = 0, 1, ..., M - 1``; a *periodic* window of length N (the default, for spectra)
is the first N values of the symmetric window of length ``M = N + 1``, a symmetric
one (``periodic=False``) has ``M = N``.  The cosine windows are computed step by
step as PyTorch computes them, in the requested dtype (float32 by default), so they
agree with PyTorch's to the cosine's last bit (one epsilon; the Bartlett window
exactly).  The Kaiser window is computed in float64 and rounded: within a rounding
of the exact values, where PyTorch's float32 Bessel function ``I0`` is up to ten
epsilons off.  No tensor goes in, so nothing is differentiated: like ``arange``,
these make constants.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from difflab.creation import _finish, _float
from difflab.dtypes import as_dtype
from difflab.tensor import Tensor

__all__ = ["bartlett_window", "blackman_window", "hamming_window", "hann_window",
           "kaiser_window"]


def _positions(name: str, window_length: int, periodic: bool, dtype: Any
               ) -> tuple[np.ndarray | None, np.dtype]:
    """``n = 0, ..., M - 1`` in ``dtype`` (M = N + 1 when periodic), or None for lengths 0
    and 1 (empty, one 1), with the result's dtype."""
    if isinstance(window_length, bool) or not isinstance(window_length, (int, np.integer)):
        raise TypeError(f"{name}: window_length must be an int, got "
                        f"{type(window_length).__name__}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    kind = _float(dtype)
    if as_dtype(kind).kind != "f":
        raise RuntimeError(f"{name} expects floating point dtypes, got: {as_dtype(kind)}")
    if window_length <= 1:
        return None, kind
    return np.arange(window_length + 1 if periodic else window_length, dtype=kind), kind


def _window(name: str, window_length: int, periodic: bool, dtype: Any, device: Any,
            requires_grad: bool, formula: Any) -> Tensor:
    """The window ``formula(n, M)`` (M the symmetric length), cut to N when periodic."""
    n, kind = _positions(name, window_length, periodic, dtype)
    if n is None:
        values = np.ones(window_length, kind)
    else:
        values = formula(n, len(n))[:window_length].astype(kind, copy=False)
    return _finish(values, device, requires_grad)


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype: Any = None, layout: Any = None,
                   device: Any = None, requires_grad: bool = False) -> Tensor:
    """The Hamming window: ``w[n] = α - β cos(2πn / (M - 1))``.

    Parameters
    ----------
    window_length : int
        N, the number of values (0 gives an empty tensor, 1 a single 1).
    periodic : bool, optional
        True (default): the first N values of the symmetric window of length N + 1.
    alpha, beta : float, optional
        The coefficients (0.54 and 0.46: Hamming's).
    dtype : dtype, optional, keyword-only
        A floating dtype (default: the default dtype).
    layout : difflab.layout, optional, keyword-only
        Accepted for PyTorch's signature (``difflab.strided``).
    device : str or Device, optional, keyword-only
        Where the tensor lives.
    requires_grad : bool, optional, keyword-only
        Record operations on the result.

    Returns
    -------
    Tensor
        The N values.

    Raises
    ------
    RuntimeError
        For a negative length or an integer dtype.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.hamming_window(5, periodic=False)
    tensor([0.08, 0.54, 1.  , 0.54, 0.08])
    """
    def formula(n: np.ndarray, m: int) -> np.ndarray:
        c = n.dtype.type  # (each step in the dtype, as PyTorch's)
        return c(alpha) + c(-beta) * np.cos(n * c(2 * np.pi / (m - 1)))

    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   formula)


def hann_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                layout: Any = None, device: Any = None, requires_grad: bool = False
                ) -> Tensor:
    """The Hann window: ``w[n] = 1/2 - 1/2 cos(2πn / (M - 1)) = sin²(πn / (M - 1))``.

    Parameters
    ----------
    window_length : int
        N, the number of values (0 gives an empty tensor, 1 a single 1).
    periodic : bool, optional
        True (default): the first N values of the symmetric window of length N + 1.
    dtype : dtype, optional, keyword-only
        A floating dtype (default: the default dtype).
    layout : difflab.layout, optional, keyword-only
        Accepted for PyTorch's signature (``difflab.strided``).
    device : str or Device, optional, keyword-only
        Where the tensor lives.
    requires_grad : bool, optional, keyword-only
        Record operations on the result.

    Returns
    -------
    Tensor
        The N values.

    Raises
    ------
    RuntimeError
        For a negative length or an integer dtype.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.hann_window(4)
    tensor([0. , 0.5, 1. , 0.5])
    """
    return hamming_window(window_length, periodic, 0.5, 0.5, dtype=dtype, device=device,
                          requires_grad=requires_grad)


def blackman_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    layout: Any = None, device: Any = None, requires_grad: bool = False
                    ) -> Tensor:
    """The Blackman window: ``0.42 - 0.5 cos(2πn / (M - 1)) + 0.08 cos(4πn / (M - 1))``.

    Parameters
    ----------
    window_length : int
        N, the number of values (0 gives an empty tensor, 1 a single 1).
    periodic : bool, optional
        True (default): the first N values of the symmetric window of length N + 1.
    dtype : dtype, optional, keyword-only
        A floating dtype (default: the default dtype).
    layout : difflab.layout, optional, keyword-only
        Accepted for PyTorch's signature (``difflab.strided``).
    device : str or Device, optional, keyword-only
        Where the tensor lives.
    requires_grad : bool, optional, keyword-only
        Record operations on the result.

    Returns
    -------
    Tensor
        The N values.

    Raises
    ------
    RuntimeError
        For a negative length or an integer dtype.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.blackman_window(5, dtype=dl.float64, periodic=False).numpy().round(4).tolist()
    [0.0, 0.34, 1.0, 0.34, 0.0]
    """
    def formula(n: np.ndarray, m: int) -> np.ndarray:
        c = n.dtype.type  # (each step in the dtype, as PyTorch's)
        t = n * c(np.pi / (m - 1))
        return np.cos(t * c(4)) * c(0.08) - np.cos(t * c(2)) * c(0.5) + c(0.42)

    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   formula)


def bartlett_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    layout: Any = None, device: Any = None, requires_grad: bool = False
                    ) -> Tensor:
    """The Bartlett (triangular) window: ``w[n] = 1 - |2n / (M - 1) - 1|``.

    Parameters
    ----------
    window_length : int
        N, the number of values (0 gives an empty tensor, 1 a single 1).
    periodic : bool, optional
        True (default): the first N values of the symmetric window of length N + 1.
    dtype : dtype, optional, keyword-only
        A floating dtype (default: the default dtype).
    layout : difflab.layout, optional, keyword-only
        Accepted for PyTorch's signature (``difflab.strided``).
    device : str or Device, optional, keyword-only
        Where the tensor lives.
    requires_grad : bool, optional, keyword-only
        Record operations on the result.

    Returns
    -------
    Tensor
        The N values.

    Raises
    ------
    RuntimeError
        For a negative length or an integer dtype.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.bartlett_window(5, periodic=False)
    tensor([0. , 0.5, 1. , 0.5, 0. ])
    """
    def formula(n: np.ndarray, m: int) -> np.ndarray:
        c = n.dtype.type  # (each step in the dtype, as PyTorch's)
        w = n * c(2.0 / (m - 1))
        half = ((m - 1) >> 1) + 1  # (the rising half; the rest falls: 2 - w)
        w[half:] = c(2) - w[half:]
        return w

    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   formula)


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *,
                  dtype: Any = None, layout: Any = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:
    """The Kaiser window: ``I0(β √(1 - ((n - a) / a)²)) / I0(β)``, ``a = (M - 1) / 2``.

    ``I0`` is the modified Bessel function of the first kind, order 0; β sets the
    trade-off between the main lobe's width and the side lobes' height.

    Parameters
    ----------
    window_length : int
        N, the number of values (0 gives an empty tensor, 1 a single 1).
    periodic : bool, optional
        True (default): the first N values of the symmetric window of length N + 1.
    beta : float, optional
        The shape parameter β (default 12).
    dtype : dtype, optional, keyword-only
        A floating dtype (default: the default dtype).
    layout : difflab.layout, optional, keyword-only
        Accepted for PyTorch's signature (``difflab.strided``).
    device : str or Device, optional, keyword-only
        Where the tensor lives.
    requires_grad : bool, optional, keyword-only
        Record operations on the result.

    Returns
    -------
    Tensor
        The N values.

    Raises
    ------
    RuntimeError
        For a negative length or an integer dtype.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.kaiser_window(3, periodic=False, beta=0.0)
    tensor([1., 1., 1.])
    """
    def formula(n: np.ndarray, m: int) -> np.ndarray:
        n, a = n.astype(np.float64), (m - 1) / 2  # (in float64, rounded once at the end)
        return np.i0(beta * np.sqrt(np.abs(1 - ((n - a) / a) ** 2))) / np.i0(beta)

    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   formula)
