r"""``difflab.fft``: PyTorch's ``torch.fft``, the discrete Fourier transforms, differentiable.

Every transform here is composed of three primitives (:mod:`difflab.ops.fourier`, where
the forward sits beside its derivative rule): ``fft_c2c`` (complex to complex, either
direction), ``fft_r2c`` (real to half spectrum) and ``fft_c2r`` (half spectrum to real).
``n`` (or ``s``) crops the input or pads it with zeros before the transform, by indexing
and ``cat``; an n-dimensional transform is the 1-D one along each dimension in turn; the
Hermitian ones are the real ones of the conjugate (``hfft(x) = irfft(conj(x))`` with the
normalization of the other direction).  So the gradient of each is PyTorch's, through
the tape, to every order, on NumPy and CuPy.

Types are PyTorch's: float32 (or an integer or boolean tensor, read as the default
float dtype) gives complex64, float64 complex128; ``norm`` is ``None`` or
``"backward"`` (no scaling forward, 1/n back), ``"ortho"`` (1/√n both ways) or
``"forward"`` (1/n forward).  Forward mode (dual numbers) refuses complex values with
its error; use reverse mode.

>>> import difflab as dl
>>> dl.fft.fft(dl.tensor([1.0, 2.0, 3.0, 4.0]))
tensor([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j], dtype=difflab.complex64)
>>> dl.fft.irfft(dl.fft.rfft(dl.tensor([1.0, 2.0, 3.0])), n=3)
tensor([1., 2., 3.])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from difflab import creation, dtypes, functions_shapes
from difflab import functions as F  # noqa: N812
from difflab.ops import shapes
from difflab.ops.fourier import FFTC2C, FFTC2R, FFTR2C, TRANSPOSED
from difflab.tensor import Tensor

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "hfft2", "hfftn", "ifft",
           "ifft2", "ifftn", "ifftshift", "ihfft", "ihfft2", "ihfftn", "irfft", "irfft2", "irfftn",
           "rfft", "rfft2", "rfftfreq", "rfftn"]

NORMS = ("backward", "ortho", "forward")


# ------------------------------------------------------------------ the checks, once


def _tensor(input: Any, name: str, *, real: bool = False) -> Any:  # noqa: A002
    """``input`` as a float or complex tensor (PyTorch's promotion: integers and booleans
    to the default float dtype); ``real``: a complex one is refused.  A dual number flows
    on (forward mode then refuses the complex values with its own error)."""
    dual = hasattr(input, "tangents")
    x = input if isinstance(input, Tensor) or dual else creation.as_tensor(input)
    dtype = np.dtype(getattr(x.dtype, "dtype", x.dtype))
    if dtype.kind == "O":
        raise NotImplementedError(
            f"{name}: the symbolic method does not follow the Fourier transforms (NumPy's FFT "
            f"takes no sympy expressions); use method='reverse', 'compiled' or 'numeric'")
    if dtype.kind in "biu" and not dual:
        x = x.to(dtypes.get_default_dtype())
    elif dtype not in (np.float32, np.float64, np.complex64, np.complex128):
        raise RuntimeError(f"{name}: Unsupported dtype {x.dtype} (difflab's FFTs take "
                           f"float32, float64, complex64 or complex128; convert with .float())")
    if real and dtype.kind == "c":
        raise RuntimeError(f"{name} expects a real input tensor, but got {x.dtype} (take "
                           f"fft for a complex signal, or .real if it is real)")
    return x


def _norm(norm: str | None) -> str:
    if norm is None:
        return "backward"
    if norm not in NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}" (one of None, "backward", '
                           f'"ortho", "forward")')
    return norm


def _length(n: Any, name: str) -> int:
    if n < 1:
        raise RuntimeError(f"{name}: Invalid number of data points ({n}) specified (a "
                           f"transform needs at least one)")
    return int(n)


def _resized(x: Tensor, axis: int, n: int) -> Tensor:
    """``x`` cropped to length ``n`` along ``axis``, or padded with zeros after its end."""
    have = x.shape[axis]
    if n < have:
        return x[(slice(None),) * axis + (slice(0, n),)]
    if n > have:
        shape = list(x.shape)
        shape[axis] = n - have
        zeros = creation.zeros(*shape, dtype=x.dtype, device=x.device)
        return functions_shapes.cat([x, zeros], axis)
    return x


def _plan(x: Tensor, s: Any, dim: Any, name: str) -> list[tuple[int, int]]:
    """(axis, length) for each dimension an n-dimensional transform runs along: PyTorch's
    rules for ``s`` and ``dim`` (neither: all; ``s`` alone: the last len(s) dimensions)."""
    if x.ndim == 0:
        raise IndexError(f"{name}: a 0-d tensor has no dimension to transform (reshape it "
                         f"to 1-d first)")
    if isinstance(dim, int):
        dim = (dim,)
    if dim is None:
        dim = tuple(range(x.ndim - (len(s) if s is not None else x.ndim), x.ndim))
    axes = [shapes.dim_index(d, x.ndim, name) for d in dim]
    if len(set(axes)) != len(axes):
        raise RuntimeError(f"{name}: FFT dims must be unique, got dim={tuple(dim)}")
    if s is None:
        s = [x.shape[a] for a in axes]
    elif len(s) != len(axes):
        raise RuntimeError(f"{name}: When given, dim and shape arguments must have the same "
                           f"length (s={tuple(s)}, dim={tuple(dim)})")
    return [(a, _length(x.shape[a] if k == -1 else k, name)) for a, k in zip(axes, s)]


def _c2c(x: Tensor, plan: list, norm: str, inverse: bool) -> Tensor:
    for axis, n in plan:
        x = F.bind(FFTC2C, _resized(x, axis, n), axis=axis, norm=norm, inverse=inverse)
    return x


def _r2c(x: Tensor, plan: list, norm: str) -> Tensor:
    """The half spectrum along the plan's last dimension, then the full ones along the rest."""
    axis, n = plan[-1]
    x = F.bind(FFTR2C, _resized(x, axis, n), axis=axis, norm=norm)
    return _c2c(x, plan[:-1], norm, inverse=False)


def _c2r(x: Tensor, plan: list, norm: str) -> Tensor:
    """The inverse along all but the plan's last dimension, then back to a real signal."""
    x = _c2c(x, plan[:-1], norm, inverse=True)
    axis, n = plan[-1]
    return F.bind(FFTC2R, _resized(x, axis, n // 2 + 1), axis=axis, norm=norm, n=n)


def _signal_length(x: Tensor, axis: int, n: Any, name: str) -> int:
    """A real signal's length: ``n``, else 2(m − 1) for a half spectrum of m bins."""
    return _length(2 * (x.shape[axis] - 1) if n is None else n, name)


# ------------------------------------------------------------------ one dimension


def fft(input: Any, n: int | None = None, dim: int = -1,  # noqa: A002
        norm: str | None = None) -> Tensor:
    r"""The discrete Fourier transform along one dimension.

    :math:`y_k = \frac1d \sum_{j<n} x_j e^{-2\pi i jk/n}`, with :math:`d` 1, √n or n
    for ``norm`` ``"backward"``, ``"ortho"``, ``"forward"``.  Its gradient is the
    transform in the other direction with the transposed ``norm``:
    :math:`\bar x = \frac1d \sum_k \bar y_k e^{+2\pi i jk/n}` (the real part, for a real
    ``input``).

    Parameters
    ----------
    input : Tensor
        Real or complex (integers are read as the default float dtype).
    n : int, optional
        The signal's length: ``input`` is cropped to it or padded with zeros (default:
        its length along ``dim``).
    dim : int, optional
        The dimension to transform (default -1).
    norm : {None, "backward", "ortho", "forward"}, optional
        Which direction is scaled (default ``"backward"``: none forward).

    Returns
    -------
    Tensor
        Complex (complex64 for float32 or complex64), of length ``n`` along ``dim``.

    Raises
    ------
    RuntimeError
        For ``n < 1`` or an empty ``dim``, an unknown ``norm``, an unsupported dtype.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([1.0, 2.0, 0.0, -1.0], requires_grad=True)
    >>> dl.fft.fft(x)
    tensor([2.+0.j, 1.-3.j, 0.+0.j, 1.+3.j], dtype=difflab.complex64, grad_fn=<FftC2cBackward0>)
    >>> dl.fft.fft(x).abs().sum().backward()
    >>> x.grad
    tensor([ 1.6325,  2.8974,  0.3675, -0.8974])
    """
    x = _tensor(input, "fft")
    return _c2c(x, _plan(x, None if n is None else (n,), dim, "fft"), _norm(norm), False)


def ifft(input: Any, n: int | None = None, dim: int = -1,  # noqa: A002
         norm: str | None = None) -> Tensor:
    r"""The inverse discrete Fourier transform along one dimension.

    :math:`x_j = \frac1d \sum_{k<n} y_k e^{+2\pi i jk/n}`, with :math:`d` n, √n or 1 for
    ``norm`` ``"backward"``, ``"ortho"``, ``"forward"``.  Its gradient is the forward
    transform with the transposed ``norm``.

    Parameters
    ----------
    input : Tensor
        Complex (or real).
    n : int, optional
        The length: ``input`` is cropped or padded with zeros (default: its length).
    dim : int, optional
        The dimension to transform (default -1).
    norm : {None, "backward", "ortho", "forward"}, optional
        Which direction is scaled (default ``"backward"``: 1/n here).

    Returns
    -------
    Tensor
        Complex, of length ``n`` along ``dim``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.fft.ifft(dl.fft.fft(dl.tensor([1.0, 2.0, 3.0])))
    tensor([1.+0.j, 2.+0.j, 3.+0.j], dtype=difflab.complex64)
    """
    x = _tensor(input, "ifft")
    return _c2c(x, _plan(x, None if n is None else (n,), dim, "ifft"), _norm(norm), True)


def rfft(input: Any, n: int | None = None, dim: int = -1,  # noqa: A002
         norm: str | None = None) -> Tensor:
    r"""The half spectrum of a real signal: bins 0 to n//2 of its Fourier transform.

    The other bins are their conjugates.  The gradient pads :math:`\bar y` with zeros to
    length n and transforms it back (transposed ``norm``), keeping the real part.

    Parameters
    ----------
    input : Tensor
        Real (integers are read as the default float dtype).
    n : int, optional
        The signal's length: cropped or padded with zeros (default: its length).
    dim : int, optional
        The dimension to transform (default -1).
    norm : {None, "backward", "ortho", "forward"}, optional
        Which direction is scaled (default ``"backward"``: none here).

    Returns
    -------
    Tensor
        Complex, of length ``n // 2 + 1`` along ``dim``.

    Raises
    ------
    RuntimeError
        For a complex ``input``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.fft.rfft(dl.tensor([1.0, 2.0, 0.0, -1.0]))
    tensor([2.+0.j, 1.-3.j, 0.+0.j], dtype=difflab.complex64)
    """
    x = _tensor(input, "rfft", real=True)
    return _r2c(x, _plan(x, None if n is None else (n,), dim, "rfft"), _norm(norm))


def irfft(input: Any, n: int | None = None, dim: int = -1,  # noqa: A002
          norm: str | None = None) -> Tensor:
    r"""The real signal of a half spectrum: the inverse of :func:`rfft`.

    The spectrum is completed by conjugate symmetry (the imaginary parts of bin 0, and of
    bin n/2 for even n, are not read).  The gradient is the half spectrum of
    :math:`\bar y` (transposed ``norm``) with the bins that stand for two of the full
    spectrum, 1 ≤ k ≤ n − (n//2 + 1), doubled.

    Parameters
    ----------
    input : Tensor
        Complex: the bins 0 to n//2 (or real).
    n : int, optional
        The output's length (default ``2 * (m - 1)`` for ``m`` bins); ``input`` is cropped
        or padded with zeros to ``n // 2 + 1`` bins.
    dim : int, optional
        The dimension to transform (default -1).
    norm : {None, "backward", "ortho", "forward"}, optional
        Which direction is scaled (default ``"backward"``: 1/n here).

    Returns
    -------
    Tensor
        Real (float32 for complex64), of length ``n`` along ``dim``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.fft.irfft(dl.tensor([2 + 0j, 1 - 3j, 0j]))
    tensor([ 1.,  2.,  0., -1.])
    """
    x = _tensor(input, "irfft")
    axis = shapes.dim_index(dim, x.ndim, "irfft", zero_d_has_dim=False)
    plan = _plan(x, (_signal_length(x, axis, n, "irfft"),), dim, "irfft")
    return _c2r(x, plan, _norm(norm))


def hfft(input: Any, n: int | None = None, dim: int = -1,  # noqa: A002
         norm: str | None = None) -> Tensor:
    r"""The real Fourier transform of a Hermitian-symmetric signal given by its first half.

    ``hfft(x, n, norm)`` is ``irfft(conj(x), n)`` with the normalization of the forward
    direction (none for ``"backward"``), so its gradient is irfft's through ``conj``.

    Parameters
    ----------
    input : Tensor
        Complex: the samples 0 to n//2 of the signal (or real).
    n : int, optional
        The output's length (default ``2 * (m - 1)``).
    dim : int, optional
        The dimension to transform (default -1).
    norm : {None, "backward", "ortho", "forward"}, optional
        Which direction is scaled (default ``"backward"``: none here).

    Returns
    -------
    Tensor
        Real, of length ``n`` along ``dim``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.fft.hfft(dl.tensor([1 + 0j, 2 + 1j, 3 + 0j]))
    tensor([ 8.,  0.,  0., -4.])
    """
    x = _tensor(input, "hfft")
    axis = shapes.dim_index(dim, x.ndim, "hfft", zero_d_has_dim=False)
    plan = _plan(x, (_signal_length(x, axis, n, "hfft"),), dim, "hfft")
    return _c2r(F.conj(x), plan, TRANSPOSED[_norm(norm)])


def ihfft(input: Any, n: int | None = None, dim: int = -1,  # noqa: A002
          norm: str | None = None) -> Tensor:
    r"""The inverse of :func:`hfft`: the first half of a real signal's inverse transform.

    ``ihfft(x, n, norm)`` is ``conj(rfft(x, n))`` with the normalization of the inverse
    direction (1/n for ``"backward"``).

    Parameters
    ----------
    input : Tensor
        Real.
    n : int, optional
        The signal's length: cropped or padded with zeros (default: its length).
    dim : int, optional
        The dimension to transform (default -1).
    norm : {None, "backward", "ortho", "forward"}, optional
        Which direction is scaled (default ``"backward"``: 1/n here).

    Returns
    -------
    Tensor
        Complex, of length ``n // 2 + 1`` along ``dim``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.fft.ihfft(dl.tensor([8.0, -2.0, 0.0, -2.0]))
    tensor([1.-0.j, 2.-0.j, 3.-0.j], dtype=difflab.complex64)
    """
    x = _tensor(input, "ihfft", real=True)
    plan = _plan(x, None if n is None else (n,), dim, "ihfft")
    return F.conj(_r2c(x, plan, TRANSPOSED[_norm(norm)]))


# ------------------------------------------------------------------ several dimensions


def fftn(input: Any, s: Any = None, dim: Any = None,  # noqa: A002
         norm: str | None = None) -> Tensor:
    r"""The n-dimensional discrete Fourier transform: :func:`fft` along each of ``dim``.

    The n-dimensional DFT factors into 1-D ones, one per dimension, in any order; so does
    its gradient.

    Parameters
    ----------
    input : Tensor
        Real or complex.
    s : sequence of int, optional
        The lengths along ``dim`` (-1: unchanged); cropped or padded with zeros.  Without
        ``dim``, the last ``len(s)`` dimensions.
    dim : int or sequence of int, optional
        The dimensions to transform (default: all, or the last ``len(s)``).
    norm : {None, "backward", "ortho", "forward"}, optional
        Which direction is scaled, with n the product of the lengths.

    Returns
    -------
    Tensor
        Complex.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.fft.fftn(dl.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([[10.+0.j, -2.+0.j],
            [-4.+0.j,  0.+0.j]], dtype=difflab.complex64)
    """
    x = _tensor(input, "fftn")
    return _c2c(x, _plan(x, s, dim, "fftn"), _norm(norm), False)


def ifftn(input: Any, s: Any = None, dim: Any = None,  # noqa: A002
          norm: str | None = None) -> Tensor:
    r"""The n-dimensional inverse discrete Fourier transform: :func:`ifft` along each of ``dim``.

    Parameters
    ----------
    input : Tensor
        Complex (or real).
    s : sequence of int, optional
        The lengths along ``dim`` (-1: unchanged); cropped or padded with zeros.
    dim : int or sequence of int, optional
        The dimensions to transform (default: all, or the last ``len(s)``).
    norm : {None, "backward", "ortho", "forward"}, optional
        Which direction is scaled (default ``"backward"``: 1/n here).

    Returns
    -------
    Tensor
        Complex.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.fft.ifftn(dl.fft.fftn(dl.tensor([[1.0, 2.0], [3.0, 4.0]]))).real
    tensor([[1., 2.],
            [3., 4.]])
    """
    x = _tensor(input, "ifftn")
    return _c2c(x, _plan(x, s, dim, "ifftn"), _norm(norm), True)


def fft2(input: Any, s: Any = None, dim: Any = (-2, -1),  # noqa: A002
         norm: str | None = None) -> Tensor:
    r"""The 2-dimensional discrete Fourier transform: :func:`fftn` over the last two dimensions.

    Parameters
    ----------
    input : Tensor
        Real or complex, with at least two dimensions.
    s : sequence of int, optional
        The two lengths (-1: unchanged).
    dim : sequence of int, optional
        The dimensions (default ``(-2, -1)``).
    norm : {None, "backward", "ortho", "forward"}, optional
        Which direction is scaled.

    Returns
    -------
    Tensor
        Complex.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.fft.fft2(dl.ones(2, 2))
    tensor([[4.+0.j, 0.+0.j],
            [0.+0.j, 0.+0.j]], dtype=difflab.complex64)
    """
    return fftn(input, s, dim, norm)


def ifft2(input: Any, s: Any = None, dim: Any = (-2, -1),  # noqa: A002
          norm: str | None = None) -> Tensor:
    r"""The 2-dimensional inverse discrete Fourier transform (:func:`ifftn` over two dimensions).

    Parameters
    ----------
    input : Tensor
        Complex (or real), with at least two dimensions.
    s : sequence of int, optional
        The two lengths (-1: unchanged).
    dim : sequence of int, optional
        The dimensions (default ``(-2, -1)``).
    norm : {None, "backward", "ortho", "forward"}, optional
        Which direction is scaled.

    Returns
    -------
    Tensor
        Complex.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.fft.ifft2(dl.tensor([[4.0, 0.0], [0.0, 0.0]]))
    tensor([[1.+0.j, 1.+0.j],
            [1.+0.j, 1.+0.j]], dtype=difflab.complex64)
    """
    return ifftn(input, s, dim, norm)


def rfftn(input: Any, s: Any = None, dim: Any = None,  # noqa: A002
          norm: str | None = None) -> Tensor:
    r"""The n-dimensional transform of a real signal, halved along the last of ``dim``.

    :func:`rfft` along the last dimension of ``dim``, then :func:`fft` along the others.

    Parameters
    ----------
    input : Tensor
        Real.
    s : sequence of int, optional
        The signal's lengths along ``dim`` (-1: unchanged).
    dim : int or sequence of int, optional
        The dimensions to transform (default: all, or the last ``len(s)``).
    norm : {None, "backward", "ortho", "forward"}, optional
        Which direction is scaled.

    Returns
    -------
    Tensor
        Complex, with ``s[-1] // 2 + 1`` bins along the last of ``dim``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.fft.rfftn(dl.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).shape
    difflab.Size([2, 2])
    """
    x = _tensor(input, "rfftn", real=True)
    return _r2c(x, _plan(x, s, dim, "rfftn"), _norm(norm))


def irfftn(input: Any, s: Any = None, dim: Any = None,  # noqa: A002
           norm: str | None = None) -> Tensor:
    r"""The inverse of :func:`rfftn`: a real signal from its halved n-dimensional spectrum.

    :func:`ifft` along all but the last of ``dim``, then :func:`irfft` along it.

    Parameters
    ----------
    input : Tensor
        Complex.
    s : sequence of int, optional
        The output's lengths along ``dim`` (default: the input's, and ``2 * (m - 1)``
        along the last).
    dim : int or sequence of int, optional
        The dimensions to transform (default: all, or the last ``len(s)``).
    norm : {None, "backward", "ortho", "forward"}, optional
        Which direction is scaled.

    Returns
    -------
    Tensor
        Real.

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    >>> dl.fft.irfftn(dl.fft.rfftn(x), s=x.shape)
    tensor([[1., 2., 3.],
            [4., 5., 6.]])
    """
    x = _tensor(input, "irfftn")
    plan = _plan(x, s, dim, "irfftn")
    if s is None:  # (the last length is the signal's, not the half spectrum's)
        axis = plan[-1][0]
        plan[-1] = (axis, _signal_length(x, axis, None, "irfftn"))
    return _c2r(x, plan, _norm(norm))


def rfft2(input: Any, s: Any = None, dim: Any = (-2, -1),  # noqa: A002
          norm: str | None = None) -> Tensor:
    r"""The 2-dimensional transform of a real signal (:func:`rfftn` over two dimensions).

    Parameters
    ----------
    input : Tensor
        Real, with at least two dimensions.
    s : sequence of int, optional
        The two lengths (-1: unchanged).
    dim : sequence of int, optional
        The dimensions (default ``(-2, -1)``).
    norm : {None, "backward", "ortho", "forward"}, optional
        Which direction is scaled.

    Returns
    -------
    Tensor
        Complex, halved along the last of ``dim``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.fft.rfft2(dl.ones(2, 4))
    tensor([[8.+0.j, 0.+0.j, 0.+0.j],
            [0.+0.j, 0.+0.j, 0.+0.j]], dtype=difflab.complex64)
    """
    return rfftn(input, s, dim, norm)


def irfft2(input: Any, s: Any = None, dim: Any = (-2, -1),  # noqa: A002
           norm: str | None = None) -> Tensor:
    r"""The inverse of :func:`rfft2` (:func:`irfftn` over two dimensions).

    Parameters
    ----------
    input : Tensor
        Complex, with at least two dimensions.
    s : sequence of int, optional
        The output's two lengths.
    dim : sequence of int, optional
        The dimensions (default ``(-2, -1)``).
    norm : {None, "backward", "ortho", "forward"}, optional
        Which direction is scaled.

    Returns
    -------
    Tensor
        Real.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.fft.irfft2(dl.fft.rfft2(dl.ones(2, 4)))
    tensor([[1., 1., 1., 1.],
            [1., 1., 1., 1.]])
    """
    return irfftn(input, s, dim, norm)


def hfftn(input: Any, s: Any = None, dim: Any = None,  # noqa: A002
          norm: str | None = None) -> Tensor:
    r"""The n-dimensional :func:`hfft`: the real transform of a half Hermitian signal.

    The signal is given by its half along the last of ``dim``.

    ``hfftn(x, s, dim, norm)`` is ``irfftn(conj(x), s, dim)`` with the normalization of the
    forward direction (a Hermitian signal's transform is real, so it equals the inverse
    transform of the conjugate).

    Parameters
    ----------
    input : Tensor
        Complex: the half signal (or real).
    s : sequence of int, optional
        The output's lengths along ``dim`` (default: the input's, and ``2 * (m - 1)``
        along the last).
    dim : int or sequence of int, optional
        The dimensions to transform (default: all, or the last ``len(s)``).
    norm : {None, "backward", "ortho", "forward"}, optional
        Which direction is scaled (default ``"backward"``: none here).

    Returns
    -------
    Tensor
        Real.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.fft.hfftn(dl.tensor([[1 + 0j, 0j], [0j, 0j]]))
    tensor([[1., 1.],
            [1., 1.]])
    """
    x = _tensor(input, "hfftn")
    return irfftn(F.conj(x), s, dim, TRANSPOSED[_norm(norm)])


def ihfftn(input: Any, s: Any = None, dim: Any = None,  # noqa: A002
           norm: str | None = None) -> Tensor:
    r"""The inverse of :func:`hfftn`: the half of a real signal's n-dimensional inverse transform.

    ``ihfftn(x, s, dim, norm)`` is ``conj(rfftn(x, s, dim))`` with the normalization of the
    inverse direction.

    Parameters
    ----------
    input : Tensor
        Real.
    s : sequence of int, optional
        The signal's lengths along ``dim`` (-1: unchanged).
    dim : int or sequence of int, optional
        The dimensions to transform (default: all, or the last ``len(s)``).
    norm : {None, "backward", "ortho", "forward"}, optional
        Which direction is scaled (default ``"backward"``: 1/n here).

    Returns
    -------
    Tensor
        Complex, halved along the last of ``dim``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.fft.ihfftn(dl.ones(2, 2))
    tensor([[1.-0.j, 0.-0.j],
            [0.-0.j, 0.-0.j]], dtype=difflab.complex64)
    """
    x = _tensor(input, "ihfftn", real=True)
    return F.conj(rfftn(x, s, dim, TRANSPOSED[_norm(norm)]))


def hfft2(input: Any, s: Any = None, dim: Any = (-2, -1),  # noqa: A002
          norm: str | None = None) -> Tensor:
    r"""The 2-dimensional :func:`hfftn` (over the last two dimensions).

    Parameters
    ----------
    input : Tensor
        Complex: the half signal, with at least two dimensions.
    s : sequence of int, optional
        The output's two lengths.
    dim : sequence of int, optional
        The dimensions (default ``(-2, -1)``).
    norm : {None, "backward", "ortho", "forward"}, optional
        Which direction is scaled.

    Returns
    -------
    Tensor
        Real.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.fft.hfft2(dl.tensor([[1 + 0j, 0j], [0j, 0j]]), s=(2, 3))
    tensor([[1., 1., 1.],
            [1., 1., 1.]])
    """
    return hfftn(input, s, dim, norm)


def ihfft2(input: Any, s: Any = None, dim: Any = (-2, -1),  # noqa: A002
           norm: str | None = None) -> Tensor:
    r"""The 2-dimensional :func:`ihfftn` (over the last two dimensions).

    Parameters
    ----------
    input : Tensor
        Real, with at least two dimensions.
    s : sequence of int, optional
        The signal's two lengths.
    dim : sequence of int, optional
        The dimensions (default ``(-2, -1)``).
    norm : {None, "backward", "ortho", "forward"}, optional
        Which direction is scaled.

    Returns
    -------
    Tensor
        Complex, halved along the last of ``dim``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.fft.ihfft2(dl.ones(2, 3)).shape
    difflab.Size([2, 2])
    """
    return ihfftn(input, s, dim, norm)


# ------------------------------------------------------------------ frequencies and shifts


def fftfreq(n: int, d: float = 1.0, *, dtype: Any = None, device: Any = None,
            requires_grad: bool = False) -> Tensor:
    r"""The frequency of each bin of :func:`fft`, in cycles per unit of ``d``.

    ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d n)``.

    Parameters
    ----------
    n : int
        The signal's length.
    d : float, optional
        The sample spacing (default 1).
    dtype : difflab.dtype, optional
        Default: the default float dtype.
    device : str or difflab.device, optional
        Where the tensor lives.
    requires_grad : bool, optional
        Whether the result is a leaf that records.

    Returns
    -------
    Tensor
        Of length ``n``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.fft.fftfreq(5, 0.5)
    tensor([ 0. ,  0.4,  0.8, -0.8, -0.4])
    """
    return creation.tensor(np.fft.fftfreq(_length(n, "fftfreq"), d),
                           dtype=dtype or dtypes.get_default_dtype(), device=device,
                           requires_grad=requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    r"""The frequency of each bin of :func:`rfft`: ``[0, 1, ..., n//2] / (d n)``.

    Parameters
    ----------
    n : int
        The signal's length.
    d : float, optional
        The sample spacing (default 1).
    dtype : difflab.dtype, optional
        Default: the default float dtype.
    device : str or difflab.device, optional
        Where the tensor lives.
    requires_grad : bool, optional
        Whether the result is a leaf that records.

    Returns
    -------
    Tensor
        Of length ``n // 2 + 1``.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.fft.rfftfreq(4)
    tensor([0.  , 0.25, 0.5 ])
    """
    return creation.tensor(np.fft.rfftfreq(_length(n, "rfftfreq"), d),
                           dtype=dtype or dtypes.get_default_dtype(), device=device,
                           requires_grad=requires_grad)


def _shift(input: Any, dim: Any, name: str, sign: int) -> Tensor:  # noqa: A002
    """Each of ``dim`` rolled by ``sign · (n // 2)``: two slices joined (basic slicing, whose
    transpose writes and never adds up: CuPy's ``scatter_add`` takes no complex values)."""
    x = input if isinstance(input, Tensor) else creation.as_tensor(input)
    if x.ndim == 0:
        return F.clone(x)
    axes = range(x.ndim) if dim is None else (dim,) if isinstance(dim, int) else dim
    for axis in sorted({shapes.dim_index(a, x.ndim, name) for a in axes}):
        n = x.shape[axis]
        cut = (n - n // 2) if sign > 0 else n // 2  # (the part that moves to the front)
        if 0 < cut < n:
            before = (slice(None),) * axis
            x = functions_shapes.cat([x[before + (slice(cut, n),)],
                                      x[before + (slice(0, cut),)]], axis)
    return x


def fftshift(input: Any, dim: Any = None) -> Tensor:  # noqa: A002
    r"""The zero frequency moved to the middle: each of ``dim`` rolled by ``n // 2``.

    A permutation, so its gradient rolls back.

    Parameters
    ----------
    input : Tensor
        A spectrum (any dtype).
    dim : int or sequence of int, optional
        The dimensions to shift (default: all).

    Returns
    -------
    Tensor
        Of ``input``'s shape.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.fft.fftshift(dl.fft.fftfreq(5))
    tensor([-0.4, -0.2,  0. ,  0.2,  0.4])
    """
    return _shift(input, dim, "fftshift", 1)


def ifftshift(input: Any, dim: Any = None) -> Tensor:  # noqa: A002
    r"""The inverse of :func:`fftshift`: each of ``dim`` rolled back by ``n // 2``.

    Parameters
    ----------
    input : Tensor
        A shifted spectrum (any dtype).
    dim : int or sequence of int, optional
        The dimensions to shift (default: all).

    Returns
    -------
    Tensor
        Of ``input``'s shape.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.fft.ifftshift(dl.fft.fftshift(dl.arange(5)))
    tensor([0, 1, 2, 3, 4])
    """
    return _shift(input, dim, "ifftshift", -1)
