"""The programs whose PyTorch 2.13 gradients tests/fft/test_fft_gradients.py pins.

Each is ``(input, program)``: ``program(lib, t)`` with ``lib`` difflab or torch and ``t``
the named input, a real scalar loss.  Kept apart from the test so that the numbers can be
printed again from PyTorch (``python -m tests.fft.fft_programs`` in a venv with torch).
"""

from __future__ import annotations

import numpy as np

#: complex128 z (even length 6), float64 x (odd length 5), a 3 × 4 float64 m, complex w
Z = [0.7 + 0.4j, -0.3 + 1.1j, 1.5 - 0.6j, 0.2 - 0.9j, -1.1 + 0.3j, 0.4 + 0.8j]
X = [1.5, -2.0, 0.45, 0.8, -0.3]
M = [[0.5, -0.1, 1.2, 0.4], [-0.7, 0.9, 0.3, -1.3], [0.2, 0.6, -0.8, 1.1]]
W = [[0.5 + 0.2j, -0.1 + 0.7j, 1.2 - 0.3j], [0.4 + 0.9j, -0.6 - 0.2j, 0.3 + 0.1j]]
INPUTS = {"z": (Z, "complex128"), "x": (X, "float64"), "m": (M, "float64"),
          "w": (W, "complex128")}


def _weights(lib, shape):
    """Fixed weights, so that no gradient is all ones."""
    return lib.tensor(np.linspace(0.3, 1.7, int(np.prod(shape))).reshape(shape))


def _parts(lib, y):
    """A real loss that reads both parts of a complex result, each with its own weights."""
    w = _weights(lib, tuple(y.shape))
    if y.is_complex():
        return (y.real * w + y.imag * w * w).sum()
    return (y * w).sum()


PROGRAMS = {
    # fft / ifft: every norm, n cropping and padding, both dims, real and complex inputs
    **{f"fft_{norm}": ("z", lambda lib, z, norm=norm: _parts(lib, lib.fft.fft(z, norm=norm)))
       for norm in ("backward", "ortho", "forward")},
    **{f"ifft_{norm}": ("z", lambda lib, z, norm=norm: _parts(lib, lib.fft.ifft(z, norm=norm)))
       for norm in ("backward", "ortho", "forward")},
    "fft_crop": ("z", lambda lib, z: _parts(lib, lib.fft.fft(z, n=4))),
    "fft_pad_odd": ("z", lambda lib, z: _parts(lib, lib.fft.fft(z, n=9))),
    "fft_of_real_abs": ("x", lambda lib, x: lib.fft.fft(x).abs().sum()),
    "fft_dim0": ("m", lambda lib, m: _parts(lib, lib.fft.fft(m, dim=0, norm="ortho"))),
    "ifft_crop_dim0": ("w", lambda lib, w: _parts(lib, lib.fft.ifft(w, n=1, dim=0))),
    # rfft / irfft: the half spectrum, odd and even lengths
    **{f"rfft_{norm}": ("x", lambda lib, x, norm=norm: _parts(lib, lib.fft.rfft(x, norm=norm)))
       for norm in ("backward", "ortho", "forward")},
    "rfft_even_pad": ("x", lambda lib, x: _parts(lib, lib.fft.rfft(x, n=8))),
    "rfft_crop": ("x", lambda lib, x: _parts(lib, lib.fft.rfft(x, n=3))),
    "rfft_dim0_abs": ("m", lambda lib, m: lib.fft.rfft(m * m, dim=0).abs().sum()),
    **{f"irfft_{norm}": ("z", lambda lib, z, norm=norm: _parts(lib, lib.fft.irfft(
        z, norm=norm))) for norm in ("backward", "ortho", "forward")},
    "irfft_odd": ("z", lambda lib, z: _parts(lib, lib.fft.irfft(z, n=11))),
    "irfft_crop": ("z", lambda lib, z: _parts(lib, lib.fft.irfft(z, n=4))),
    "irfft_pad": ("z", lambda lib, z: _parts(lib, lib.fft.irfft(z, n=15))),
    "irfft_n1": ("z", lambda lib, z: _parts(lib, lib.fft.irfft(z, n=1))),
    "irfft_dim0": ("w", lambda lib, w: _parts(lib, lib.fft.irfft(w, dim=0, norm="ortho"))),
    "irfft_of_rfft": ("x", lambda lib, x: (lib.fft.irfft(lib.fft.rfft(x) * _weights(
        lib, (3,)), n=5) ** 2).sum()),
    # the Hermitian pair
    **{f"hfft_{norm}": ("z", lambda lib, z, norm=norm: _parts(lib, lib.fft.hfft(z, norm=norm)))
       for norm in ("backward", "ortho", "forward")},
    "hfft_odd": ("z", lambda lib, z: _parts(lib, lib.fft.hfft(z, n=7))),
    **{f"ihfft_{norm}": ("x", lambda lib, x, norm=norm: _parts(lib, lib.fft.ihfft(
        x, norm=norm))) for norm in ("backward", "ortho", "forward")},
    "ihfft_pad": ("x", lambda lib, x: _parts(lib, lib.fft.ihfft(x, n=8))),
    # n dimensions
    "fft2": ("m", lambda lib, m: _parts(lib, lib.fft.fft2(m))),
    "fft2_s": ("w", lambda lib, w: _parts(lib, lib.fft.fft2(w, s=(3, 2), norm="ortho"))),
    "ifft2": ("w", lambda lib, w: _parts(lib, lib.fft.ifft2(w))),
    "fftn_dim": ("m", lambda lib, m: _parts(lib, lib.fft.fftn(m, dim=(1, 0), norm="forward"))),
    "ifftn_s": ("w", lambda lib, w: _parts(lib, lib.fft.ifftn(w, s=(5,)))),
    "rfft2": ("m", lambda lib, m: _parts(lib, lib.fft.rfft2(m))),
    "rfftn_s": ("m", lambda lib, m: _parts(lib, lib.fft.rfftn(m, s=(2, 7), norm="ortho"))),
    "irfft2": ("w", lambda lib, w: _parts(lib, lib.fft.irfft2(w))),
    "irfftn_s": ("w", lambda lib, w: _parts(lib, lib.fft.irfftn(w, s=(3, 5),
                                                                norm="forward"))),
    "irfftn_dim0": ("w", lambda lib, w: _parts(lib, lib.fft.irfftn(w, dim=0))),
    "hfft2": ("w", lambda lib, w: _parts(lib, lib.fft.hfft2(w))),
    "hfftn_s": ("w", lambda lib, w: _parts(lib, lib.fft.hfftn(w, s=(3, 3), norm="ortho"))),
    "ihfft2": ("m", lambda lib, m: _parts(lib, lib.fft.ihfft2(m))),
    "ihfftn_dim": ("m", lambda lib, m: _parts(lib, lib.fft.ihfftn(m, dim=(1, 0),
                                                                  norm="forward"))),
    # shifts
    "fftshift": ("w", lambda lib, w: _parts(lib, lib.fft.fftshift(lib.fft.fft2(w)))),
    "ifftshift_dim": ("m", lambda lib, m: _parts(lib, lib.fft.ifftshift(m * m, dim=1))),
}


def run(lib, name):
    """``(loss, gradient)`` of program ``name`` as NumPy values, in ``lib``."""
    key, program = PROGRAMS[name]
    values, dtype = INPUTS[key]
    t = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)
    loss = program(lib, t)
    loss.backward()
    grad = t.grad
    if hasattr(grad, "resolve_conj"):
        grad = grad.resolve_conj()
    return float(loss.detach()), grad.detach().numpy()


if __name__ == "__main__":  # print the pinned table from PyTorch
    import torch

    np.set_printoptions(precision=17)
    print("PYTORCH = {")
    for name in PROGRAMS:
        loss, grad = run(torch, name)
        print(f"    {name!r}: ({loss!r}, {grad.tolist()!r}),")
    print("}")
