"""The dispatch's cost, this checkout against another one, workload by workload.

    python benchmarks/bench_dispatch.py --compare-with ../other-checkout --rounds 5
    python benchmarks/bench_dispatch.py --compare-with ../other --threads 1
    python benchmarks/bench_dispatch.py --json        # one process's numbers, as JSON

Every operation goes through one dispatch (``engine.apply``), so a change
there shows in every workload at once.  These are the ones a change of the
dispatch must not slow down (each within 5% or faster):

* per-op overhead: a chain of 200 small elementwise ops on 16 float64,
  forward + backward on the tape, in µs per op;
* the Rosenbrock gradient (n = 10^6) on the tape and compiled (traced once,
  fused), in ms;
* a training step of an MLP (784-256-256-10, batch 128) and of a small CNN
  (batch 32), plain SGD on the tape, in ms;
* ``dl.hessian`` (n = 100) and ``dl.jacobian`` (100 x 100) with
  ``method="compiled"``, in ms;
* forward mode in the cost harness (the gradient of sum-sin at n = 1000);
* tracing a function of 1,000 operations into a graph, in ms.

Each figure is the median of timed calls in one fresh process; with
``--compare-with`` the two checkouts run in alternating order, one fresh
process each per round (``checkouts.py``), and the report gives medians,
ranges and the ratio this / other.  ``--threads 1`` limits NumPy's BLAS (and
numba) to one thread in the child processes; the default leaves them alone.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numpy as np

import difflab as dl

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "NUMBA_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


def median_seconds(fn, budget: float = 0.3, repeats: int = 5) -> float:
    """The median over ``repeats`` of the seconds per call, each timed over ``budget``/repeats."""
    fn()  # warm up: compile, caches, allocator
    samples = []
    for _ in range(repeats):
        calls, start = 0, time.perf_counter()
        while True:
            fn()
            calls += 1
            elapsed = time.perf_counter() - start
            if elapsed > budget / repeats:
                break
        samples.append(elapsed / calls)
    return statistics.median(samples)


def chain(x, n_ops=200):
    for _ in range(n_ops // 5):
        x = dl.tanh(dl.sin(x * 0.999 + 0.001) * 1.01)
    return x.sum()


def rosenbrock(x):
    a, b = x[:-1], x[1:]
    return (100.0 * (b - a * a) ** 2 + (1.0 - a) ** 2).sum()


def per_op_us() -> float:
    x = np.random.default_rng(1).uniform(-1, 1, 16)

    def step():
        t = dl.tensor(x).requires_grad_()
        chain(t).backward()

    return median_seconds(step) / 201 * 1e6


def rosenbrock_ms() -> dict:
    x = np.random.default_rng(0).uniform(-1, 1, 10**6)

    def eager():
        t = dl.tensor(x).requires_grad_()
        rosenbrock(t).backward()

    compiled = dl.grad(rosenbrock, method="compiled")
    return {"eager": 1e3 * median_seconds(eager, budget=1.0),
            "compiled": 1e3 * median_seconds(lambda: compiled(x), budget=1.0)}


def training_ms() -> dict:
    from difflab import nn
    from difflab.nn import functional as F

    rng = np.random.default_rng(0)
    dl.manual_seed(0)
    models = {
        "mlp": (nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                              nn.Linear(256, 10)),
                dl.tensor(rng.standard_normal((128, 784)).astype(np.float32))),
        "cnn": (nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Flatten(), nn.Linear(16 * 7 * 7, 10)),
                dl.tensor(rng.standard_normal((32, 1, 28, 28)).astype(np.float32))),
    }
    times = {}
    for name, (model, x) in models.items():
        y = dl.tensor(rng.integers(0, 10, x.shape[0]))
        opt = dl.optim.SGD(model.parameters(), lr=0.01)

        def step(model=model, x=x, y=y, opt=opt):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()

        times[name] = 1e3 * median_seconds(step, budget=1.0)
    return times


def hessian_jacobian_ms() -> dict:
    rng = np.random.default_rng(2)
    a = dl.tensor(rng.normal(size=(100, 100)) / 10)
    x = rng.normal(size=100)
    hess = dl.hessian(lambda v: (dl.sin(v) * v).sum() + (dl.tanh(a @ v) ** 2).sum(),
                      method="compiled")
    jac = dl.jacobian(lambda v: dl.tanh(a @ v), method="compiled")
    return {"hessian": 1e3 * median_seconds(lambda: hess(x)),
            "jacobian": 1e3 * median_seconds(lambda: jac(x))}


def forward_mode_ms() -> float:
    from difflab.compare import cost

    report = cost("sum-sin", [1000], methods=["forward"], memory=False, min_time=0.2)
    return 1e3 * report.records[0]["seconds"]


def tracing_ms() -> float:
    from difflab import jit

    x = dl.tensor(np.random.default_rng(3).uniform(-1, 1, 16)).requires_grad_()
    return 1e3 * median_seconds(lambda: jit.trace(lambda v: chain(v, n_ops=1000), x),
                                budget=1.0, repeats=3)


def measure() -> dict:
    return {"per_op_us": per_op_us(), "rosenbrock_ms": rosenbrock_ms(),
            "training_ms": training_ms(), "compiled_ms": hessian_jacobian_ms(),
            "forward_mode_ms": forward_mode_ms(), "tracing_ms": tracing_ms(),
            "difflab_file": dl.__file__}


METRICS = {
    "per-op overhead (µs/op)": lambda r: r["per_op_us"],
    "Rosenbrock gradient, eager (ms)": lambda r: r["rosenbrock_ms"]["eager"],
    "Rosenbrock gradient, compiled (ms)": lambda r: r["rosenbrock_ms"]["compiled"],
    "MLP training step (ms)": lambda r: r["training_ms"]["mlp"],
    "CNN training step (ms)": lambda r: r["training_ms"]["cnn"],
    "Hessian n=100, compiled (ms)": lambda r: r["compiled_ms"]["hessian"],
    "Jacobian 100x100, compiled (ms)": lambda r: r["compiled_ms"]["jacobian"],
    "forward mode, sum-sin n=1000 (ms)": lambda r: r["forward_mode_ms"],
    "tracing 1,000 ops (ms)": lambda r: r["tracing_ms"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print this process's numbers")
    parser.add_argument("--compare-with", metavar="PATH", default=None,
                        help="another difflab checkout, timed in interleaved rounds")
    parser.add_argument("--rounds", type=int, default=5, help="rounds for --compare-with")
    parser.add_argument("--threads", choices=["1", "default"], default="default",
                        help="BLAS/numba threads in the timed processes")
    args = parser.parse_args()
    if args.threads == "1":
        os.environ.update({name: "1" for name in THREAD_VARIABLES})
    if args.compare_with:
        import checkouts

        print(f"threads: {args.threads}")
        checkouts.compare(os.path.abspath(__file__), ["--json"], args.compare_with,
                          args.rounds, METRICS)
        return
    result = measure()
    if args.json:
        print(json.dumps(result))
        return
    for name, read in METRICS.items():
        print(f"{name:<36} {read(result):10.3f}")


if __name__ == "__main__":
    main()
