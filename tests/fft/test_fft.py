"""difflab.fft (torch.fft): values against numpy.fft, gradients against PyTorch 2.13 (pinned,
and live where torch is installed), against finite differences on the real and imaginary
parts, and by gradcheck; every norm, odd and even lengths, cropping and zero padding,
dim 0 and -1, empty and one-element signals, bad input, the CuPy stand-in."""

from __future__ import annotations

import numpy as np
import pytest

import difflab as dl
from difflab.autograd import gradcheck
from difflab.ops import fourier
from difflab.ops.registry import Context
from tests.fft.fft_pinned import PYTORCH
from tests.fft.fft_programs import INPUTS, PROGRAMS, run

NORMS = (None, "backward", "ortho", "forward")
RNG = np.random.default_rng(43)


def _signal(shape, complex_=False):
    a = RNG.standard_normal(shape)
    return a + 1j * RNG.standard_normal(shape) if complex_ else a


# ------------------------------------------------------------------ values


ONE_D = {  # name -> (numpy.fft's function, whether the input is complex)
    "fft": (np.fft.fft, True), "ifft": (np.fft.ifft, True), "rfft": (np.fft.rfft, False),
    "irfft": (np.fft.irfft, True), "hfft": (np.fft.hfft, True), "ihfft": (np.fft.ihfft, False),
}


@pytest.mark.parametrize("name", sorted(ONE_D))
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 1, 4, 5, 8, 11])
@pytest.mark.parametrize("dim", [-1, 0])
def test_one_dimensional_transforms_equal_numpy(name, norm, n, dim):
    reference, complex_ = ONE_D[name]
    a = _signal((6, 3) if dim == 0 else (3, 7), complex_)
    got = getattr(dl.fft, name)(dl.tensor(a), n=n, dim=dim, norm=norm)
    np.testing.assert_allclose(got.numpy(), reference(a, n=n, axis=dim, norm=norm),
                               rtol=1e-12, atol=1e-12)
    assert got.dtype == (dl.float64 if name in ("irfft", "hfft") else dl.complex128)


SEVERAL = {  # name -> (numpy.fft's function, whether the input is complex, its kwargs)
    "fft2": (np.fft.fft2, True, [{}, {"s": (3, 6)}]),
    "ifft2": (np.fft.ifft2, True, [{}, {"s": (2, 2)}]),
    "fftn": (np.fft.fftn, True, [{}, {"s": (5,)}, {"dim": (0, 2)}, {"s": (2, 7), "dim": (2, 0)}]),
    "ifftn": (np.fft.ifftn, True, [{}, {"dim": (1,)}]),
    "rfft2": (np.fft.rfft2, False, [{}, {"s": (4, 7)}]),
    "irfft2": (np.fft.irfft2, True, [{}, {"s": (4, 7)}]),
    "rfftn": (np.fft.rfftn, False, [{}, {"dim": (2, 0)}, {"s": (3, 3)}]),
    "irfftn": (np.fft.irfftn, True, [{}, {"dim": (2, 0)}, {"s": (3, 8)}]),
}


@pytest.mark.parametrize("name", sorted(SEVERAL))
@pytest.mark.parametrize("norm", NORMS)
def test_several_dimensions_equal_numpy(name, norm):
    reference, complex_, calls = SEVERAL[name]
    a = _signal((3, 4, 5), complex_)
    for kwargs in calls:
        got = getattr(dl.fft, name)(dl.tensor(a), norm=norm, **kwargs)
        axes = kwargs.get("dim", (-2, -1) if name.endswith("2") else None)
        if axes is None and "s" in kwargs:  # (PyTorch's rule, NumPy's too: the last len(s))
            axes = tuple(range(-len(kwargs["s"]), 0))
        want = reference(a, s=kwargs.get("s"), axes=axes, norm=norm)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


def test_frequencies_and_shifts_equal_numpy():
    for n in (1, 4, 7):
        np.testing.assert_allclose(dl.fft.fftfreq(n, 0.1).numpy(), np.fft.fftfreq(n, 0.1),
                                   rtol=1e-6)
        np.testing.assert_allclose(dl.fft.rfftfreq(n).numpy(), np.fft.rfftfreq(n), rtol=1e-6)
    assert dl.fft.fftfreq(4).dtype == dl.float32
    assert dl.fft.rfftfreq(4, dtype=dl.float64).dtype == dl.float64
    a = np.arange(30).reshape(5, 6)
    for dim in (None, 0, 1, -1, (0, 1)):
        assert (dl.fft.fftshift(dl.tensor(a), dim).numpy() == np.fft.fftshift(a, dim)).all()
        assert (dl.fft.ifftshift(dl.tensor(a), dim).numpy() == np.fft.ifftshift(a, dim)).all()
    assert dl.fft.fftshift(dl.tensor(3.0)).item() == 3.0


def test_pinned_values_of_pytorch():
    # torch.fft.fft(torch.tensor([1., 2., 0., -1.])) and torch.fft.hfft(...) in 2.13
    np.testing.assert_allclose(dl.fft.fft(dl.tensor([1.0, 2.0, 0.0, -1.0])).numpy(),
                               [2, 1 - 3j, 0, 1 + 3j])
    np.testing.assert_allclose(dl.fft.hfft(dl.tensor([1 + 0j, 2 + 1j, 3 + 0j])).numpy(),
                               [8, 0, 0, -4])
    np.testing.assert_allclose(dl.fft.fftfreq(5, 0.5).numpy(), [0, 0.4, 0.8, -0.8, -0.4],
                               rtol=1e-6)


@pytest.mark.parametrize("dtype, complex_out, real_out", [
    (dl.float32, dl.complex64, dl.float32), (dl.float64, dl.complex128, dl.float64),
    (dl.int64, dl.complex64, dl.float32), (dl.bool, dl.complex64, dl.float32),
    (dl.complex64, dl.complex64, dl.float32), (dl.complex128, dl.complex128, dl.float64)])
def test_dtypes_are_pytorchs(dtype, complex_out, real_out):
    x = dl.tensor([1, 0, 1, 1]).to(dtype)
    assert dl.fft.fft(x).dtype == dl.fft.ifft(x).dtype == complex_out
    assert dl.fft.irfft(x).dtype == dl.fft.hfft(x).dtype == real_out
    if not dtype.is_complex:
        assert dl.fft.rfft(x).dtype == dl.fft.ihfft(x).dtype == complex_out


# ------------------------------------------------------------------ gradients


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_give_pytorchs_pinned_gradients(name):
    loss, grad = run(dl, name)
    want_loss, want_grad = PYTORCH[name]
    np.testing.assert_allclose(loss, want_loss, rtol=1e-10)
    np.testing.assert_allclose(grad, np.array(want_grad), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_match_pytorch(name):
    torch = pytest.importorskip("torch")
    loss, grad = run(dl, name)
    want_loss, want_grad = run(torch, name)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-10)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-10, atol=1e-12)


def _loss_of_values(name, values):
    key, program = PROGRAMS[name]
    t = dl.tensor(values, dtype=getattr(dl, INPUTS[key][1]))
    return float(program(dl, t))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_by_finite_differences(name):
    """PyTorch's convention: the gradient is ∂L/∂a + i·∂L/∂b for each z = a + ib."""
    key, _ = PROGRAMS[name]
    values = np.array(INPUTS[key][0], dtype=INPUTS[key][1])
    _, grad = run(dl, name)
    h = 1e-6
    steps = (1.0, 1j) if values.dtype.kind == "c" else (1.0,)
    want = np.zeros_like(values)
    for i in np.ndindex(values.shape):
        for step in steps:
            up, down = values.copy(), values.copy()
            up[i] += h * step
            down[i] -= h * step
            slope = (_loss_of_values(name, up) - _loss_of_values(name, down)) / (2 * h)
            want[i] += slope * step
    np.testing.assert_allclose(grad, want, rtol=1e-6, atol=1e-7)


REAL_FUNCTIONS = {
    "fft_abs": lambda x: dl.fft.fft(x, n=7).abs(),
    "ifft_real_dim0": lambda x: dl.fft.ifft(x * (1 + 2j), dim=0, norm="ortho").real,
    "rfft_abs_crop": lambda x: dl.fft.rfft(x, n=3).abs(),
    "filter": lambda x: dl.fft.irfft(dl.fft.rfft(x) * dl.tensor([1.0, 0.5, 0.25, 0.0]),
                                     n=x.shape[-1]),
    "hfft": lambda x: dl.fft.hfft(x * 1j + x * x, norm="forward"),
    "ihfft_imag": lambda x: dl.fft.ihfft(x, n=6).imag,
    "fft2_abs": lambda x: dl.fft.fft2(x, s=(3, 7)).abs(),
    "irfftn": lambda x: dl.fft.irfftn(dl.fft.rfftn(x * x), s=(2, 6)),
    "fftshift": lambda x: dl.fft.fftshift(dl.fft.fft(x).real),
}


@pytest.mark.parametrize("name", sorted(REAL_FUNCTIONS))
def test_gradcheck_and_second_order(name):
    x = dl.tensor(_signal((2, 6)) + 0.5, requires_grad=True)
    assert gradcheck(REAL_FUNCTIONS[name], (x,), eps=1e-6, atol=1e-6, rtol=1e-5)
    # second order: the recorded backward (fft of the cotangent, through the dispatch)
    weights = dl.tensor(_signal(REAL_FUNCTIONS[name](x).shape))

    def gradient_sum(x):
        y = (REAL_FUNCTIONS[name](x) * weights).sum()
        return (dl.autograd.grad(y, x, create_graph=True)[0] ** 2).sum()

    assert gradcheck(gradient_sum, (x,), eps=1e-6, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("op, params, complex_in", [
    (fourier.FFTC2C, {"norm": "ortho", "inverse": False}, True),
    (fourier.FFTC2C, {"norm": "backward", "inverse": True}, True),
    (fourier.FFTR2C, {"norm": "forward"}, False),
    (fourier.FFTC2R, {"norm": "backward", "n": 6}, True)])
def test_each_jvp_is_its_transform_of_the_tangent(op, params, complex_in):
    """A linear map's JVP is the map: ẏ = A ẋ, for each of k tangents (a leading axis)."""
    x = _signal((4, 3, 2) if op is not fourier.FFTC2R else (4, 4, 2), complex_in)
    tangents = _signal((2,) + x.shape, complex_in)
    ctx = Context()
    op.forward(ctx, np, x, axis=1, **params)
    got = op.jvp(ctx, np, tangents)
    for k in range(2):
        np.testing.assert_allclose(got[k], op.forward(Context(), np, tangents[k], axis=1,
                                                      **params), rtol=1e-12, atol=1e-12)


def test_forward_mode_refuses_complex_values_clearly():
    with pytest.raises(NotImplementedError, match="does not follow complex values"):
        dl.func.jvp(lambda x: dl.fft.fft(x).abs().sum(), (dl.ones(4),), (dl.ones(4),))


def test_the_methods_agree_or_refuse_clearly():
    def power(x):
        return (dl.fft.rfft(x, n=6).abs() ** 2).sum() + dl.fft.fftshift(x).sin().sum()

    x = np.array([0.3, -1.2, 2.0, 0.7, -0.4])
    want = np.asarray(dl.grad(power, method="reverse")(x))
    for method in ("compiled", "numeric"):
        np.testing.assert_allclose(np.asarray(dl.grad(power, method=method)(x)), want,
                                   rtol=1e-6)
    with pytest.raises(NotImplementedError, match="forward mode .* complex values"):
        dl.grad(power, method="forward")(x)
    with pytest.raises(NotImplementedError, match="symbolic method does not follow"):
        dl.grad(power, method="symbolic")(x)


# ------------------------------------------------------------------ edges and bad input


def test_empty_batches_and_one_element_signals():
    x = dl.zeros(0, 4, requires_grad=True)
    y = dl.fft.fft(x)
    assert y.shape == (0, 4)
    y.abs().sum().backward()
    assert x.grad.shape == (0, 4)
    one = dl.tensor([2.5], requires_grad=True)
    for f in (dl.fft.fft, dl.fft.ifft, dl.fft.rfft, dl.fft.ihfft):
        assert np.allclose(f(one).detach().numpy(), 2.5)
    dl.fft.rfft(one, norm="ortho").real.sum().backward()
    assert one.grad.item() == 1.0
    assert dl.fft.irfft(dl.tensor([3 + 1j]), n=1).tolist() == [3.0]


@pytest.mark.parametrize("call, error, message", [
    (lambda: dl.fft.fft(dl.ones(3), norm="bad"), RuntimeError, "Invalid normalization mode"),
    (lambda: dl.fft.fft(dl.ones(3), n=0), RuntimeError, r"Invalid number of data points \(0\)"),
    (lambda: dl.fft.fft(dl.ones(0)), RuntimeError, r"Invalid number of data points \(0\)"),
    (lambda: dl.fft.irfft(dl.ones(1)), RuntimeError, r"Invalid number of data points \(0\)"),
    (lambda: dl.fft.fft(dl.tensor(2.0)), IndexError, "0-d tensor"),
    (lambda: dl.fft.fft(dl.ones(3), dim=2), IndexError, "Dimension out of range"),
    (lambda: dl.fft.fft2(dl.ones(3)), IndexError, "Dimension out of range"),
    (lambda: dl.fft.rfft(dl.ones(3, dtype=dl.complex64)), RuntimeError, "expects a real"),
    (lambda: dl.fft.ihfft(dl.ones(3, dtype=dl.complex64)), RuntimeError, "expects a real"),
    (lambda: dl.fft.fft(dl.ones(3, dtype=dl.float16)), RuntimeError, "Unsupported dtype"),
    (lambda: dl.fft.fftn(dl.ones(3, 4), s=(2,), dim=(0, 1)), RuntimeError, "same length"),
    (lambda: dl.fft.fftn(dl.ones(3, 4), dim=(0, -2)), RuntimeError, "must be unique"),
    (lambda: dl.fft.fftfreq(0), RuntimeError, "Invalid number of data points"),
])
def test_bad_input_is_explained(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_the_half_spectrum_primitive_checks_its_length():
    with pytest.raises(ValueError, match="half spectrum of 4 bins, got 3"):
        fourier.FFTC2R.forward(Context(), np, np.ones(3, complex), axis=0, norm="backward",
                               n=7)


def test_devices_give_the_cpus_values_and_gradients(device):
    a = _signal((3, 6))
    results = []
    for dev in ("cpu", device):
        x = dl.tensor(a, device=dev, requires_grad=True)
        spectrum = dl.fft.rfft(x, n=9) * dl.fft.rfftfreq(9, device=dev)
        y = dl.fft.irfft(spectrum, n=5, norm="ortho").sum() + dl.fft.fftshift(
            dl.fft.fft2(x, s=(2, 4))).abs().sum() + dl.fft.hfft(x[:, :4] * 1j, dim=0).sum()
        y.backward()
        results.append((y.item(), x.grad.cpu().numpy()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-12)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-12, atol=1e-12)

