"""The fused CUDA kernels on a real GPU: CuPy's own bits for every elementwise value.

Without a GPU these tests skip; the kernels' text is checked on every run by
compiling it for the CPU (``tests/jit/cuda_on_cpu.py``, the "cuda" kernel of
``test_jit_fusion.py``).  Here, on the GPU, a fused group must give the
values the same lines give one by one in CuPy, bit for bit (the kernel is
compiled with ``--fmad=false``, and uses the same C functions), and its sums
to rounding (another order of addition).
"""

import numpy as np
import pytest

import difflab as dl
from difflab import jit
from difflab.jit import fusion

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(
    not dl.cuda.is_available(), reason="needs CuPy and a CUDA device (the text is checked "
                                       "on the CPU by test_jit_fusion.py's 'cuda' kernel)")]

DTYPES = [np.float64, np.float32]
RTOL = {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 5e-5}


def rosenbrock(x):
    return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum()


def rosenbrock_products(x):
    """Rosenbrock's function with products for squares: every line CuPy's bits."""
    a, b = x[:-1], x[1:]
    return (100.0 * ((b - a * a) * (b - a * a)) + (1.0 - a) * (1.0 - a)).sum()


def chain(x):
    return (x.sin() * 2.0 + 1.0).tanh() * x.exp() - x.abs().sqrt()


def _fused_and_plain(fn, x, grad):
    traced = jit.trace(fn, dl.tensor(x).to("cuda").requires_grad_(grad))
    graph = jit.grad(traced.graph) if grad else traced.graph
    return jit.optimize(graph, ["fold", "cse", "dce", "fuse"]), graph


def _inputs(n, dtype, edges=False):
    x = np.random.default_rng(n).uniform(-1.5, 1.5, n).astype(dtype)
    if edges:
        x[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e30]
    import cupy

    return cupy.asarray(x)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 255, 257, 100_003, 3_000_001])
def test_an_elementwise_group_gives_cupys_bits(dtype, n):
    fused, plain = _fused_and_plain(chain, np.zeros(n, dtype), grad=False)
    assert "fused" in fused.op_counts()  # (float32 sin, exp, tanh stay lines: see fusion)
    x = _inputs(n, dtype, edges=n > 6)
    (got,), (want,) = fused.run(x), plain.run(x)
    assert got.dtype == want.dtype == dtype
    np.testing.assert_array_equal(got.get(), want.get())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [2, 1000, 1_000_001])
def test_the_rosenbrock_gradient_in_one_kernel(dtype, n):
    fused, plain = _fused_and_plain(rosenbrock, np.zeros(n, dtype), grad=True)
    assert fused.op_counts() == {"fused": 1}
    x = _inputs(n, dtype)
    (loss, grad), (want_loss, want_grad) = fused.run(x), plain.run(x)
    assert grad.dtype == want_grad.dtype == dtype and loss.shape == ()
    # CuPy's x ** 2 is pow(x, 2.0), within an ulp or two of the kernel's x * x: to rounding
    # of the terms (about 100 where the gradient cancels to near 0)
    tol = RTOL[np.dtype(dtype)]
    np.testing.assert_allclose(grad.get(), want_grad.get(), rtol=tol, atol=100 * tol)
    np.testing.assert_allclose(float(loss), float(want_loss), rtol=RTOL[np.dtype(dtype)])
    assert fused.run(x)[0] == loss  # (partial sums in a fixed order: the same every run)


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatters_are_gathered_in_the_cpu_kernels_order(dtype):
    """The gradient of two windows of x, added: CuPy's bits where every line is a product."""
    n = 100_003
    fused, plain = _fused_and_plain(rosenbrock_products, np.zeros(n, dtype), grad=True)
    assert fused.op_counts() == {"fused": 1}
    x = _inputs(n, dtype)
    np.testing.assert_array_equal(fused.run(x)[1].get(), plain.run(x)[1].get())


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_bias_broadcast_and_a_mean(dtype):
    w = dl.tensor(np.linspace(-1, 1, 7).astype(dtype)).to("cuda")

    def f(x):
        return ((x + w) * 3.0).relu().mean() + (x * w).sum()

    fused, plain = _fused_and_plain(f, np.zeros((513, 7), dtype), grad=True)
    x = _inputs(513 * 7, dtype).reshape(513, 7)
    for got, want in zip(fused.run(x), plain.run(x)):
        np.testing.assert_allclose(got.get(), want.get(), rtol=RTOL[np.dtype(dtype)],
                                   atol=RTOL[np.dtype(dtype)])


def test_dl_compile_trains_on_the_gpu_with_fused_kernels():
    """A compiled float32 model's step on the GPU equals eager's to rounding."""
    rng = np.random.default_rng(0)
    models = []
    for _ in range(2):
        dl.manual_seed(0)
        models.append(dl.nn.Sequential(dl.nn.Linear(5, 16), dl.nn.Tanh(),
                                       dl.nn.Linear(16, 1)).to("cuda"))
    compiled = dl.compile(models[1])
    x = dl.tensor(rng.standard_normal((64, 5)).astype(np.float32)).to("cuda")
    for model, run in ((models[0], models[0]), (models[1], compiled)):
        opt = dl.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            (run(x) ** 2).mean().backward()
            opt.step()
    for a, b in zip(models[0].parameters(), models[1].parameters()):
        np.testing.assert_allclose(a.detach().cpu().numpy(), b.detach().cpu().numpy(),
                                   rtol=1e-5, atol=1e-6)
    assert fusion.FUSED._kernels  # (kernels were made)


@pytest.mark.parametrize("dtype", DTYPES)
def test_infinite_and_nan_numbers_compile_for_the_gpu(dtype):
    """NVRTC has no <math.h>: the kernel's text defines INFINITY and NAN itself."""
    import cupy

    from difflab.jit import cuda_kernels, kernels

    body = (("maximum", ("in0", float("-inf"))), ("mul", ("t0", float("nan"))),
            ("minimum", ("t0", float("inf"))))
    layout = kernels.Layout(body, (2, 1))
    x = np.array([-np.inf, -1.0, 0.0, 2.5, np.inf, np.nan], dtype=dtype)
    ran = cuda_kernels.CudaKernel(layout).run(cupy, [cupy.asarray(x)], 6, dtype)
    assert ran is not None  # (compiled: no fallback to array code)
    _, ys = ran
    np.testing.assert_array_equal(ys[2].get(), np.minimum(np.maximum(x, -np.inf), np.inf))
    assert np.isnan(ys[1].get()).all()
