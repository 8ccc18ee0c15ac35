"""Sample inputs of the complex-number primitives and of the Fourier transforms (the
primitives and ``difflab.fft``'s functions), for :mod:`difflab.testing.samples`.

Each is built from real inputs (``dl.complex``) and read back as real numbers, so every
method's derivative, and finite differences, are of real numbers.  Forward mode refuses
them all (it does not follow complex values).
"""

from __future__ import annotations

from typing import Any


def complex_table(dl: Any, F34: tuple) -> dict[str, tuple]:  # noqa: N803
    """name -> (function of the sample arrays, the arrays' (shape, range) specs).

    Parameters
    ----------
    dl : module
        difflab.
    F34 : tuple
        The table's usual (3, 4) input spec.

    Returns
    -------
    dict
        One entry per complex-number primitive and per Fourier transform primitive.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.testing.samples_complex import complex_table
    >>> sorted(complex_table(dl, ((3, 4), (-2, 2))))[:3]
    ['angle', 'conj', 'fft_c2c']
    """
    return {
        "real": (lambda x, y: dl.real(dl.complex(x, y) * dl.complex(y, x)) + dl.real(x),
                 [F34, F34]),
        "imag": (lambda x, y: dl.imag(dl.complex(x, y).exp()), [F34, F34]),
        "conj": (lambda x, y: dl.real(dl.conj(dl.complex(x, y)) * dl.complex(y, x * y))
                 + dl.conj(x), [F34, F34]),
        "angle": (lambda x, y: dl.angle(dl.complex(x, y) * dl.complex(y, x)) + dl.angle(x),
                  [F34, F34]),
        "view_as_real": (lambda x, y: dl.view_as_real(dl.complex(x, y) ** 2), [F34, F34]),
        "view_as_complex": (lambda x: dl.view_as_complex(x * x).sin().abs(), [((3, 2), (-2, 2))]),
        # the Fourier transforms' primitives (difflab.ops.fourier): padded, along dim 0
        "fft_c2c": (lambda x, y: dl.view_as_real(dl.fft.ifft(dl.complex(x, y), n=5, dim=0,
                                                            norm="ortho")), [F34, F34]),
        "fft_r2c": (lambda x: dl.view_as_real(dl.fft.rfft(x * x, dim=0)), [F34]),
        "fft_c2r": (lambda x, y: dl.fft.irfft(dl.complex(x, y), n=7), [F34, F34]),
    }


def fourier_function_table(dl: Any) -> dict[str, tuple]:
    """``dl.fft.<name>`` -> (function of the sample arrays, their specs): each public transform.

    Parameters
    ----------
    dl : module
        difflab.

    Returns
    -------
    dict
        One entry per function of ``difflab.fft`` that computes from tensor values.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.testing.samples_complex import fourier_function_table
    >>> sorted(fourier_function_table(dl))[:3]
    ['dl.fft.fft', 'dl.fft.fft2', 'dl.fft.fftn']
    """
    fft, real = dl.fft, dl.view_as_real
    V6, M34 = ((6,), (-2, 2)), ((3, 4), (-2, 2))  # noqa: N806

    def z(x, y):
        return dl.complex(x, y)

    return {
        "dl.fft.fft": (lambda x: real(fft.fft(x, n=8)), [V6]),
        "dl.fft.ifft": (lambda x, y: real(fft.ifft(z(x, y), n=4, norm="forward")), [V6, V6]),
        "dl.fft.rfft": (lambda x: real(fft.rfft(x, dim=0, norm="ortho")), [M34]),
        "dl.fft.irfft": (lambda x, y: fft.irfft(z(x, y), n=9), [M34, M34]),
        "dl.fft.hfft": (lambda x, y: fft.hfft(z(x, y), dim=0), [M34, M34]),
        "dl.fft.ihfft": (lambda x: real(fft.ihfft(x, n=5)), [M34]),
        "dl.fft.fft2": (lambda x: real(fft.fft2(x, s=(2, 5))), [M34]),
        "dl.fft.ifft2": (lambda x, y: real(fft.ifft2(z(x, y))), [M34, M34]),
        "dl.fft.fftn": (lambda x: real(fft.fftn(x, dim=(1, 0), norm="ortho")), [M34]),
        "dl.fft.ifftn": (lambda x, y: real(fft.ifftn(z(x, y), s=(5,))), [M34, M34]),
        "dl.fft.rfft2": (lambda x: real(fft.rfft2(x)), [M34]),
        "dl.fft.irfft2": (lambda x, y: fft.irfft2(z(x, y), s=(3, 5)), [M34, M34]),
        "dl.fft.rfftn": (lambda x: real(fft.rfftn(x, s=(4, 3))), [M34]),
        "dl.fft.irfftn": (lambda x, y: fft.irfftn(z(x, y), dim=0), [M34, M34]),
        "dl.fft.hfft2": (lambda x, y: fft.hfft2(z(x, y), s=(2, 5)), [M34, M34]),
        "dl.fft.hfftn": (lambda x, y: fft.hfftn(z(x, y), dim=0, norm="ortho"), [M34, M34]),
        "dl.fft.ihfft2": (lambda x: real(fft.ihfft2(x)), [M34]),
        "dl.fft.ihfftn": (lambda x: real(fft.ihfftn(x, s=(5,))), [M34]),
        "dl.fft.fftshift": (lambda x: fft.fftshift(x), [M34]),
        "dl.fft.ifftshift": (lambda x: fft.ifftshift(x, dim=-1), [M34]),
    }
