"""Benchmarks of the core tape against its peers, side by side in one run.

    python benchmarks/bench_core.py            # full sizes (about a minute)
    python benchmarks/bench_core.py --quick    # smaller, for a smoke test
    python benchmarks/bench_core.py --compare-with ../other-checkout --rounds 5
                                               # difflab here against another checkout

Three measurements, each the median of several repeats:

1. Gradient of the n-dimensional Rosenbrock function (n = 10^6, float64),
   as a multiple of one plain-NumPy evaluation of f in the same process,
   timed in interleaved rounds (f, then each framework) and reported as the
   median ratio over the rounds.
   Target: <= 3.0x (PyTorch measured 3.0x on a machine like ours, HIPS
   autograd 7.2x).
2. Per-operation overhead: a chain of small ops on size-16 tensors, forward
   plus backward, in microseconds per op.  Target: <= 5 us (PyTorch 4.8 us,
   HIPS autograd 10.0 us).
3. Peak memory of a forward + backward (the Rosenbrock gradient), measured as
   the growth of the process's peak resident memory in a fresh process per
   framework.  Target: <= 1.3x PyTorch's.

PyTorch and HIPS autograd are used only when installed; neither is a
dependency of difflab.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

PEERS = [name for name in ("torch", "autograd") if importlib.util.find_spec(name)]


def median_seconds(function, repeats: int) -> float:
    function()  # warm up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def interleaved_ratios(baseline, candidates: dict, rounds: int) -> dict:
    """Median over rounds of (time of each candidate / time of the baseline).

    Each round times the baseline and every candidate back to back (best of
    three each), so a slow moment of a shared machine slows them all alike
    instead of landing on one of them.
    """
    ratios: dict = {name: [] for name in candidates}
    for function in (baseline, *candidates.values()):
        function()  # warm up
    for _ in range(rounds):
        base = min(_seconds(baseline) for _ in range(3))
        for name, function in candidates.items():
            ratios[name].append(min(_seconds(function) for _ in range(3)) / base)
    return {name: statistics.median(values) for name, values in ratios.items()}


def _seconds(function) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


# ------------------------------------------------------------------ Rosenbrock


def rosenbrock_numpy(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosenbrock_value_and_gradient_by_hand(x):
    """f and its gradient written out in NumPy, with as few passes as we could:
    the floor for any tape that runs NumPy kernels one at a time."""
    a, b = x[:-1], x[1:]
    u = b - a**2
    v = 1.0 - a
    value = np.sum(100.0 * u**2 + v**2)
    g = np.empty_like(x)
    np.multiply(u, 200.0, out=g[1:])
    g[0] = 0.0
    t = a * u
    t *= -400.0
    t -= v
    t -= v  # t = -400·a·u - 2·v
    g[:-1] += t
    return value, g


def rosenbrock_gradient(framework: str, x0: np.ndarray):
    """A zero-argument function computing the gradient with ``framework``."""
    if framework == "by hand":
        return lambda: rosenbrock_value_and_gradient_by_hand(x0)
    if framework == "difflab":
        import difflab as dl

        def run():
            x = dl.from_numpy(x0).requires_grad_()
            (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum().backward()
            return x.grad

        return run
    if framework == "torch":
        import torch

        def run():
            x = torch.from_numpy(x0).requires_grad_()
            (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum().backward()
            return x.grad

        return run
    if framework == "autograd":
        import autograd
        import autograd.numpy as anp

        def f(x):
            return anp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

        gradient = autograd.grad(f)
        return lambda: gradient(x0)
    raise ValueError(framework)


# ------------------------------------------------------------------ small ops


def op_chain(framework: str, length: int):
    """Forward + backward through ``length`` small ops on size-16 tensors."""
    steps = length // 4  # each step below is 4 ops: mul, sin, add, tanh
    start = np.random.default_rng(0).standard_normal(16)
    if framework == "difflab":
        import difflab as dl

        def run():
            x = dl.tensor(start, requires_grad=True)
            y = x
            for _ in range(steps):
                y = ((y * 1.01).sin() + y).tanh()
            y.sum().backward()

        return run
    if framework == "torch":
        import torch

        def run():
            x = torch.tensor(start, requires_grad=True)
            y = x
            for _ in range(steps):
                y = ((y * 1.01).sin() + y).tanh()
            y.sum().backward()

        return run
    if framework == "autograd":
        import autograd
        import autograd.numpy as anp

        def f(x):
            y = x
            for _ in range(steps):
                y = anp.tanh(anp.sin(y * 1.01) + y)
            return anp.sum(y)

        gradient = autograd.grad(f)
        return lambda: gradient(start)
    raise ValueError(framework)


# ---------------------------------------------------------------------- memory

_MEMORY_CHILD = """
import sys, numpy as np
sys.path.insert(0, {bench_dir!r})
import bench_core
framework, n = sys.argv[1], int(sys.argv[2])
# Imports and first-call costs happen on a small problem, before the measurement.
bench_core.rosenbrock_gradient(framework, np.ones(1000))()
x0 = np.random.default_rng(0).standard_normal(n)
run = bench_core.rosenbrock_gradient(framework, x0)

def rss_kib(field):
    for line in open('/proc/self/status'):
        if line.startswith(field):
            return int(line.split()[1])

open('/proc/self/clear_refs', 'w').write('5')  # reset the peak (Linux >= 4.0)
before = rss_kib('VmRSS:')
run()
print(rss_kib('VmHWM:') - before)
"""


def peak_memory_kib(framework: str, n: int) -> int | None:
    """Growth of peak resident memory during one gradient, in a fresh process."""
    if not sys.platform.startswith("linux"):
        return None
    code = _MEMORY_CHILD.format(bench_dir=os.path.dirname(os.path.abspath(__file__)))
    # glibc's default allocator returns freed blocks at once, so resident memory
    # follows live memory; difflab's keep-for-reuse setting would hide the peak.
    env = {**os.environ, "DIFFLAB_DEFAULT_MALLOC": "1"}
    done = subprocess.run([sys.executable, "-c", code, framework, str(n)],
                          capture_output=True, text=True, check=True, env=env)
    return int(done.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------ main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--difflab-only", action="store_true", help="leave the peers out")
    parser.add_argument("--compare-with", metavar="PATH",
                        help="another difflab checkout: time both in interleaved rounds, "
                             "each round in fresh processes (see checkouts.py)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds for --compare-with")
    args = parser.parse_args()
    if args.compare_with:
        import checkouts

        checkouts.compare(
            os.path.abspath(__file__), ["--json", "--difflab-only"] + ["--quick"] * args.quick,
            args.compare_with, args.rounds,
            {"Rosenbrock gradient / NumPy f": lambda r: r["rosenbrock_gradient_ratio"]["difflab"],
             "per op, size-16 chain (us)": lambda r: r["per_op_us"]["difflab"],
             "peak memory of a gradient (MiB)": lambda r: r["peak_memory_mib"]["difflab"]})
        return
    n = 10**5 if args.quick else 10**6
    repeats = 5 if args.quick else 15
    peers = [] if args.difflab_only else PEERS
    frameworks = ["difflab", *peers]
    results: dict = {"n": n, "peers": peers}

    x0 = np.random.default_rng(0).standard_normal(n)
    import difflab  # (its allocator setting applies to the NumPy baseline too)

    results["difflab_file"] = difflab.__file__

    # Every column computes the same gradient (checked here, so the race is fair).
    reference = rosenbrock_value_and_gradient_by_hand(x0)[1]
    for fw in frameworks:
        gradient = np.asarray(rosenbrock_gradient(fw, x0)())
        np.testing.assert_allclose(gradient, reference, rtol=1e-12, atol=1e-9, err_msg=fw)

    f_time = median_seconds(lambda: rosenbrock_numpy(x0), repeats * 2)
    results["rosenbrock_f_ms"] = f_time * 1e3
    results["rosenbrock_gradient_ratio"] = interleaved_ratios(
        lambda: rosenbrock_numpy(x0),
        {fw: rosenbrock_gradient(fw, x0) for fw in [*frameworks, "by hand"]},
        rounds=repeats,
    )
    length = 400
    results["per_op_us"] = {
        fw: median_seconds(op_chain(fw, length), repeats * 2) / (length + 1) * 1e6
        for fw in frameworks
    }
    results["peak_memory_mib"] = {
        fw: (kib / 1024 if (kib := peak_memory_kib(fw, n)) is not None else None)
        for fw in frameworks
    }
    if args.json:
        print(json.dumps(results, indent=2))
        return

    columns = [*frameworks, "by hand"]

    def row(label, values, fmt, target=None, reference=None):
        cells = [fmt.format(values[fw]) if values.get(fw) is not None else "-"
                 for fw in columns]
        extra = ""
        if reference in values and values.get(reference) and values.get("difflab"):
            extra = f"  difflab/{reference} = {values['difflab'] / values[reference]:.2f}"
        print(f"{label:<38}" + "".join(f"{c:>12}" for c in cells) + extra
              + (f"  (target {target})" if target else ""))

    print(f"Rosenbrock n = {n:,}, float64; plain NumPy f = {f_time * 1e3:.2f} ms (median)")
    print(f"{'':<38}" + "".join(f"{fw:>12}" for fw in columns))
    row("gradient / NumPy f", results["rosenbrock_gradient_ratio"], "{:.2f}x",
        "<= 3.0x", "torch")
    row("per op, size-16 chain (us)", results["per_op_us"], "{:.2f}", "<= 5 us", "torch")
    row("peak memory of a gradient (MiB)", results["peak_memory_mib"], "{:.1f}",
        "<= 1.3x torch", "torch")
    print("by hand: f and its gradient written out in NumPy, no tape: the floor for any "
          "framework that runs NumPy's one-threaded kernels one at a time.")


if __name__ == "__main__":
    main()
