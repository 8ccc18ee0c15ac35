"""The gradient of a large function on the GPU: difflab on CuPy beside PyTorch on CUDA.

    python benchmarks/bench_gpu.py [--n 10000000] [--rounds 3] [--repeats 30]

The Rosenbrock function f(x) = sum 100 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2 at
n = 10^7 float64 on the GPU: the time of f alone (difflab) and of f with its
gradient (``backward``) in difflab and in PyTorch, each the median of
``--repeats`` synchronised calls after warm-up, in ``--rounds`` interleaved
rounds (difflab, PyTorch, difflab, ...); the table gives the median over the
rounds and the range, the ratio difflab / PyTorch, and the largest difference
between the two gradients.  It needs CuPy and a CUDA device; PyTorch is used
when installed (never a dependency of difflab).  For the small training steps
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


def contestants(x0: np.ndarray) -> tuple[dict, dict]:
    """name -> (step, synchronise) for each library present, and name -> gradient reader."""
    import difflab as dl

    if not dl.cuda.is_available():
        raise SystemExit("bench_gpu needs CuPy and a CUDA device (dl.cuda.is_available() is False)")
    xd = dl.tensor(x0, device="cuda", requires_grad=True)

    def difflab_gradient():
        xd.grad = None
        rosenbrock(xd).backward()

    steps = {"difflab f": (lambda: rosenbrock(xd.detach()), dl.cuda.synchronize),
             "difflab gradient": (difflab_gradient, dl.cuda.synchronize)}
    grads = {"difflab": lambda: xd.grad.cpu().numpy()}
    try:
        import torch
        if not torch.cuda.is_available():
            raise ImportError("PyTorch sees no CUDA device")
    except ImportError:
        print("PyTorch not installed: difflab only", file=sys.stderr)
        return steps, grads
    xt = torch.tensor(x0, device="cuda", requires_grad=True)

    def torch_gradient():
        xt.grad = None
        rosenbrock(xt).backward()

    steps["PyTorch gradient"] = (torch_gradient, torch.cuda.synchronize)
    grads["PyTorch"] = lambda: xt.grad.cpu().numpy()
    return steps, grads


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10**7)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args(argv)
    x0 = np.random.default_rng(0).standard_normal(args.n)
    steps, grads = contestants(x0)
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(args.rounds):
        for name, (step, sync) in steps.items():
            times[name].append(median_ms(step, sync, args.repeats))
    print(f"Rosenbrock n = {args.n:,} float64 on the GPU; median of {args.repeats} calls, "
          f"{args.rounds} interleaved rounds")
    for name, values in times.items():
        print(f"  {name:<18} {statistics.median(values):8.3f} ms  "
              f"({min(values):.3f} - {max(values):.3f})")
    if "PyTorch gradient" in times:
        ratio = statistics.median(times["difflab gradient"]) / statistics.median(
            times["PyTorch gradient"])
        difference = float(np.abs(grads["difflab"]() - grads["PyTorch"]()).max())
        print(f"  difflab / PyTorch (gradient): {ratio:.2f}; "
              f"largest difference of the gradients: {difference:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
