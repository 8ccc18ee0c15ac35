"""The gradient of a large function on the GPU: difflab on CuPy beside PyTorch on CUDA.

    python benchmarks/bench_gpu.py [--n 10000000] [--rounds 3] [--repeats 30]
                                   [--dtype float64|float32] [--torch-compile]

The Rosenbrock function f(x) = sum 100 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2 at
n = 10^7 float64 (or float32) on the GPU: the time of f alone (difflab) and of f with its
gradient in difflab eager (``backward``), ``dl.compile`` (traced, fused CuPy
kernels; and with ``mode="reduce-overhead"``, replayed as a CUDA graph), PyTorch
eager and JAX ``jit(grad(f))``, each the median of
``--repeats`` synchronised calls after warm-up, in ``--rounds`` interleaved
rounds (difflab, PyTorch, difflab, ...); the table gives the median over the
rounds and the range, the ratios to PyTorch eager, the first call of each
(tracing and compiling included) and the largest difference of each gradient
from difflab eager's.  It needs CuPy and a CUDA device; PyTorch and JAX are
used when installed (never dependencies of difflab); ``--torch-compile`` adds
``torch.compile`` (its first call compiles for tens of seconds), also in its
``"reduce-overhead"`` mode (CUDA graphs).  For the small training steps
on the GPU, see ``bench_nn.py --device cuda``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np


def rosenbrock(x):
    """Rosenbrock's function, written once for both libraries (slices and operators only)."""
    return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum()


def median_ms(step, sync, repeats: int, warmup: int = 5) -> float:
    for _ in range(warmup):
        step()
    sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        sync()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def timed_first_call(step, sync) -> float:
    """Seconds of one call of ``step`` (its first: tracing and compiling included)."""
    start = time.perf_counter()
    step()
    sync()
    return time.perf_counter() - start


def difflab_contestants(x0: np.ndarray, steps: dict, grads: dict) -> None:
    import difflab as dl

    if not dl.cuda.is_available():
        raise SystemExit("bench_gpu needs CuPy and a CUDA device (dl.cuda.is_available() is False)")
    xd = dl.tensor(x0, device="cuda", requires_grad=True)
    compiled = dl.compile(rosenbrock)
    graphed = dl.compile(rosenbrock, mode="reduce-overhead")  # (CUDA graphs)
    xc = dl.tensor(x0, device="cuda", requires_grad=True)
    xg = dl.tensor(x0, device="cuda", requires_grad=True)

    def difflab_gradient():
        xd.grad = None
        rosenbrock(xd).backward()

    def difflab_compiled_gradient():
        xc.grad = None
        compiled(xc).backward()

    def difflab_graphed_gradient():
        xg.grad = None
        graphed(xg).backward()

    steps["difflab f"] = (lambda: rosenbrock(xd.detach()), dl.cuda.synchronize)
    steps["difflab gradient"] = (difflab_gradient, dl.cuda.synchronize)
    steps["dl.compile gradient"] = (difflab_compiled_gradient, dl.cuda.synchronize)
    grads["difflab gradient"] = lambda: xd.grad.cpu().numpy()
    grads["dl.compile gradient"] = lambda: xc.grad.cpu().numpy()
    steps["dl.compile reduce-overhead"] = (difflab_graphed_gradient, dl.cuda.synchronize)
    grads["dl.compile reduce-overhead"] = lambda: xg.grad.cpu().numpy()


def torch_contestants(x0: np.ndarray, steps: dict, grads: dict, with_compile: bool) -> None:
    try:
        import torch
        if not torch.cuda.is_available():
            raise ImportError("PyTorch sees no CUDA device")
    except ImportError as error:
        print(f"PyTorch left out: {error}", file=sys.stderr)
        return
    xt = torch.tensor(x0, device="cuda", requires_grad=True)

    def torch_gradient(function=rosenbrock):
        xt.grad = None
        function(xt).backward()

    steps["PyTorch gradient"] = (torch_gradient, torch.cuda.synchronize)
    grads["PyTorch gradient"] = lambda: xt.grad.cpu().numpy()
    if with_compile:
        compiled = torch.compile(rosenbrock)
        steps["torch.compile gradient"] = (lambda: torch_gradient(compiled),
                                           torch.cuda.synchronize)
        grads["torch.compile gradient"] = lambda: xt.grad.cpu().numpy()
        graphed = torch.compile(rosenbrock, mode="reduce-overhead")
        steps["torch.compile reduce-overhead"] = (lambda: torch_gradient(graphed),
                                                  torch.cuda.synchronize)
        grads["torch.compile reduce-overhead"] = lambda: xt.grad.cpu().numpy()


def jax_contestants(x0: np.ndarray, steps: dict, grads: dict) -> None:
    try:
        import jax
        if jax.default_backend() != "gpu":
            raise ImportError(f"JAX's backend is {jax.default_backend()}, not gpu")
    except ImportError as error:
        print(f"JAX left out: {error}", file=sys.stderr)
        return
    jax.config.update("jax_enable_x64", x0.dtype == np.float64)
    xj = jax.device_put(jax.numpy.asarray(x0))
    gradient = jax.jit(jax.grad(rosenbrock))
    result = {}

    def jax_gradient():
        result["g"] = gradient(xj)

    steps["JAX jit gradient"] = (jax_gradient, lambda: result["g"].block_until_ready())
    grads["JAX jit gradient"] = lambda: np.asarray(result["g"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10**7)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    parser.add_argument("--torch-compile", action="store_true",
                        help="also time torch.compile (compiles for tens of seconds)")
    args = parser.parse_args(argv)
    x0 = np.random.default_rng(0).standard_normal(args.n).astype(args.dtype)
    steps: dict = {}
    grads: dict = {}
    difflab_contestants(x0, steps, grads)
    torch_contestants(x0, steps, grads, args.torch_compile)
    jax_contestants(x0, steps, grads)
    first = {name: timed_first_call(step, sync) for name, (step, sync) in steps.items()}
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(args.rounds):
        for name, (step, sync) in steps.items():
            times[name].append(median_ms(step, sync, args.repeats))
    print(f"Rosenbrock n = {args.n:,} {args.dtype} on the GPU; median of {args.repeats} calls, "
          f"{args.rounds} interleaved rounds")
    reference = grads["difflab gradient"]()
    baseline = statistics.median(times.get("PyTorch gradient", [float("nan")]))
    print(f"  {'':<24} {'median ms':>10} {'range':>17} {'/ PyTorch':>10} "
          f"{'first call s':>13} {'max |g - eager|':>16}")
    for name, values in times.items():
        median = statistics.median(values)
        difference = (float(np.abs(grads[name]() - reference).max())
                      if name in grads else float("nan"))
        print(f"  {name:<24} {median:10.3f} {min(values):8.3f}-{max(values):<8.3f} "
              f"{median / baseline:10.2f} {first[name]:13.3f} {difference:16.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
