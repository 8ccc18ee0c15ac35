"""Static graphs against eager mode, side by side with PyTorch and JAX where installed.

    python benchmarks/bench_jit.py [--rounds 7] [--threads both|1|default] [--quick]

Each library runs at 1 thread and at its default thread count (each setting
in its own process, since thread pools are fixed when a library loads).
Within a setting, the contestants of a workload are timed in interleaved
rounds (A B C, A B C, ...), so a slow moment of the machine hits all of
them; the table shows the median over rounds and the range (min-max).

1. Rosenbrock gradient, n = 10**6 float64, as a multiple of one NumPy
   evaluation of f: difflab eager (tape), difflab compiled (traced graph
   backward, passes, fused kernels, replayed), PyTorch eager, JAX ``jit``.
   The same for a gradient of transcendentals (exp, tanh, log1p), with the
   lines NumPy has SIMD loops for kept NumPy's and, beside it, every line in
   numba's loop.
2. A chain of 200 small ops (size 16), forward and backward, in µs per op:
   difflab eager, the graph replayed, the graph fused; PyTorch eager; JAX ``jit``.
3. Hessian (n = 100) and Jacobian (100 x 100) through dl.hessian /
   dl.jacobian (method "compiled": graph transforms, and the tape's "reverse"),
   against torch.autograd.functional, torch.func and JAX ``jit``.
4. MLP and CNN training steps (plain SGD), traced (with the passes fold, cse,
   dce) and replayed against eager, and the results of the two compared.
5. Peak memory of the Rosenbrock gradient (tracemalloc sees NumPy's
   allocations, so the allocator's caching cannot hide them), / x.nbytes.

PyTorch and JAX are never dependencies: without them their rows say so.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import tracemalloc

import numpy as np

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "NUMBA_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


# ------------------------------------------------------------------ timing


def per_call(fn, budget: float = 0.05) -> float:
    """Seconds per call of ``fn``, timed over enough calls to fill ``budget`` seconds."""
    fn()
    calls, start = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed > budget:
            return elapsed / calls


class Timings(dict):
    """name -> list of seconds per call (one per round), and ``cores``: name -> the median
    number of cores the contestant kept busy (process CPU seconds / wall seconds).

    ``cores`` says whether a "1 thread" figure really used one core: a library that
    ignores the thread settings shows 1.5 or 2 here, and its time is not comparable;
    below 0.9, other programs took turns on the same CPU, and every figure of that
    run is slower than the machine can do (the ratios between contestants, taken in
    interleaved rounds, still hold).
    """

    def __init__(self, names) -> None:
        super().__init__((name, []) for name in names)
        self.busy: dict = {name: [] for name in names}

    @property
    def cores(self) -> dict:
        return {name: statistics.median(v) for name, v in self.busy.items() if v}


def interleaved(contestants: dict, rounds: int, budget: float) -> Timings:
    """name -> list of seconds per call, one per round, the contestants taking turns."""
    for fn in contestants.values():  # warm up (compile, caches) before any round
        fn()
    times = Timings(contestants)
    for _ in range(rounds):
        for name, fn in contestants.items():
            cpu, wall = time.process_time(), time.perf_counter()
            times[name].append(per_call(fn, budget))
            times.busy[name].append((time.process_time() - cpu)
                                    / max(time.perf_counter() - wall, 1e-9))
    return times


def pin_to_one_cpu() -> str:
    """Keep this process (and the threads it starts from now on) on one CPU; say which.

    The thread variables are a request each library may ignore: JAX 0.10's CPU
    runtime kept 1.6 of this machine's 2 cores busy with
    ``--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1``, which
    made its "1 thread" matrix products look 1.5x faster than NumPy's.  One CPU
    for the whole process holds every library to one core.  Call it before the
    libraries start their thread pools (before importing torch and jax).
    """
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned (this system has no sched_setaffinity): check the cores column"
    cpu = max(os.sched_getaffinity(0))  # (the last one: the first is busiest with the OS)
    os.sched_setaffinity(0, {cpu})
    return f"pinned to CPU {cpu}"


def summary(seconds: list, scale: float) -> tuple[float, float, float]:
    values = [s / scale for s in seconds]
    return statistics.median(values), min(values), max(values)


def row(label: str, seconds: list, scale: float, unit: str, cores: float | None = None) -> str:
    """One line of a table: median and range, and the cores kept busy when measured."""
    m, lo, hi = summary(seconds, scale)
    busy = f"   {cores:.1f} cores" if cores is not None else ""
    return f"  {label:<42} {m:>10.3f}{unit}   ({lo:.3f} - {hi:.3f}){busy}"


# ------------------------------------------------------------------ libraries


def load_torch(threads: str):
    try:
        import torch
    except ImportError:
        return None
    if threads == "1":
        torch.set_num_threads(1)
    return torch


def load_jax():
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    return jax


# ------------------------------------------------------------------ workloads


def rosenbrock_numpy(x):
    a, b = x[:-1], x[1:]
    return (100.0 * (b - a * a) ** 2 + (1.0 - a) ** 2).sum()


def rosenbrock(x):  # the same text for difflab, PyTorch and jax.numpy
    a, b = x[:-1], x[1:]
    return (100.0 * (b - a * a) ** 2 + (1.0 - a) ** 2).sum()


def compiled_gradient(fn, example, passes=("fold", "cse", "dce", "fuse")):
    """The graph of (f, df/dx), optimized and fused, and its plain-array runner."""
    import difflab as dl
    from difflab import jit

    forward = jit.trace(fn, dl.tensor(example).requires_grad_()).graph
    return jit.optimize(jit.grad(forward), list(passes))


def add_peer_gradients(contestants: dict, torch, jax, x, fn) -> None:
    """PyTorch eager's and JAX ``jit``'s gradient of ``fn(v, namespace)`` at ``x``, where
    installed, as contestants."""
    if torch is not None:
        tx = torch.tensor(x)

        def torch_eager():
            t = tx.clone().requires_grad_()
            fn(t, torch).backward()
            return t.grad

        contestants["PyTorch eager"] = torch_eager
    if jax is not None:
        g = jax.jit(jax.grad(lambda v: fn(v, jax.numpy)))
        jx = jax.numpy.asarray(x)
        contestants["JAX jit"] = lambda: g(jx).block_until_ready()


def bench_rosenbrock(rounds, torch, jax, n=10**6):
    import difflab as dl

    x = np.random.default_rng(0).uniform(-1.5, 1.5, n)
    graph = compiled_gradient(rosenbrock, x)
    unfused = compiled_gradient(rosenbrock, x, passes=("fold", "cse", "dce"))

    def eager():
        t = dl.tensor(x).requires_grad_()
        rosenbrock(t).backward()
        return t.grad

    want = eager().numpy()
    np.testing.assert_allclose(graph.run(x)[1], want, rtol=1e-12, atol=1e-9)
    contestants = {
        "NumPy f (the unit)": lambda: rosenbrock_numpy(x),
        "difflab eager": eager,
        "difflab graph replayed": lambda: unfused.run(x),
        "difflab compiled (fused)": lambda: graph.run(x),
    }
    add_peer_gradients(contestants, torch, jax, x, lambda v, m: rosenbrock(v))
    times = interleaved(contestants, rounds, budget=0.2)
    unit = statistics.median(times.pop("NumPy f (the unit)"))
    print(f"Rosenbrock gradient, n = {n}, float64: x one NumPy f ({unit * 1e3:.2f} ms)")
    for name, seconds in times.items():
        print(row(name, seconds, unit, "x", times.cores.get(name)))
    if torch is not None:
        ratio = statistics.median(times["difflab eager"]) / statistics.median(
            times["PyTorch eager"])
        print(f"  difflab eager / PyTorch eager: {ratio:.2f}")
    return graph, x, eager


def smooth(x, m):
    """sum(exp(x/2) tanh(x) + log1p(x²)): transcendentals, in ``m``'s functions (dl, torch,
    jax.numpy)."""
    return (m.exp(x * 0.5) * m.tanh(x) + m.log1p(x * x)).sum()


def bench_transcendental(rounds, torch, jax, n=10**6):
    """A float64 gradient of transcendentals: NumPy's SIMD exp/tanh/log1p (AVX-512) against
    the same lines inside numba's loop (every line fused: jit.kernels.numpy_simd_float64)."""
    import difflab as dl
    from difflab.jit import kernels

    x = np.random.default_rng(0).uniform(-2, 2, n)
    graph = compiled_gradient(lambda v: smooth(v, dl), x)
    simd = kernels.numpy_simd_float64()
    kernels._SIMD64[:] = [False]  # (as on a CPU without NumPy's SIMD float64 loops)
    kernels._VECTORIZED.clear()
    every_line_fused = compiled_gradient(lambda v: smooth(v, dl), x)
    kernels._SIMD64[:] = [simd]
    kernels._VECTORIZED.clear()

    def eager():
        t = dl.tensor(x).requires_grad_()
        smooth(t, dl).backward()
        return t.grad

    np.testing.assert_allclose(graph.run(x)[1], eager().numpy(), rtol=1e-12, atol=1e-12)
    contestants = {
        "NumPy f (the unit)": lambda: np.sum(np.exp(x * 0.5) * np.tanh(x) + np.log1p(x * x)),
        "difflab eager": eager,
        "difflab compiled": lambda: graph.run(x),
        "difflab compiled, every line in numba": lambda: every_line_fused.run(x),
    }
    add_peer_gradients(contestants, torch, jax, x, smooth)
    times = interleaved(contestants, rounds, budget=0.2)
    unit = statistics.median(times.pop("NumPy f (the unit)"))
    print(f"Gradient of sum(exp(x/2) tanh(x) + log1p(x²)), n = {n}, float64: x one NumPy f "
          f"({unit * 1e3:.2f} ms; NumPy's AVX-512 float64 loops here: {simd})")
    for name, seconds in times.items():
        print(row(name, seconds, unit, "x", times.cores.get(name)))


def chain(x, m=None, n_ops=200):
    """200 small elementwise ops (40 times the same five), then a sum; ``m`` has sin, tanh."""
    if m is None:
        import difflab as m
    for _ in range(n_ops // 5):
        x = m.tanh(m.sin(x * 0.999 + 0.001) * 1.01)
    return x.sum()




def bench_chain(rounds, torch, jax):
    import difflab as dl
    from difflab import jit

    x = np.random.default_rng(1).uniform(-1, 1, 16)
    forward = jit.trace(chain, dl.tensor(x).requires_grad_()).graph
    ops = len(forward.nodes)
    replayed = jit.grad(forward)
    fused = jit.optimize(replayed, ["fold", "cse", "dce", "fuse"])

    def eager():
        t = dl.tensor(x).requires_grad_()
        chain(t).backward()
        return t.grad

    np.testing.assert_allclose(fused.run(x)[1], eager().numpy(), rtol=1e-12)
    contestants = {
        "difflab eager": eager,
        "difflab graph replayed": lambda: replayed.run(x),
        "difflab graph fused": lambda: fused.run(x),
    }
    add_peer_gradients(contestants, torch, jax, x, chain)
    times = interleaved(contestants, rounds, budget=0.05)
    print(f"\nchain of {ops} ops on 16 float64, forward + backward: µs per op "
          f"(replayed graph: {len(replayed.nodes)} lines, fused: {len(fused.nodes)})")
    for name, seconds in times.items():
        print(row(name, seconds, ops / 1e6, " µs", times.cores.get(name)))


def bench_hessian_jacobian(rounds, torch, jax):
    """dl.hessian / dl.jacobian against torch.func and JAX ``jit``.

    ``method="compiled"`` traces f once and replays graph transforms: the
    Hessian is forward over reverse with all 100 directions in one pass, the
    Jacobian forward mode with the 100 directions of the identity.  The
    tape-based default (``method="reverse"``: one backward pass per row) is
    shown for comparison.  Every result is checked against the tape's.
    """
    import difflab as dl

    rng = np.random.default_rng(2)
    a = rng.normal(size=(100, 100)) / 10
    x = rng.normal(size=100)

    def scalar(v, m, a):  # a 100-input scalar function
        return (m.sin(v) * v).sum() + (m.tanh(a @ v) ** 2).sum()

    def tanh_wx(v, m, a):
        return m.tanh(a @ v)

    da = dl.tensor(a)
    hess = dl.hessian(lambda v: scalar(v, dl, da), method="compiled")
    jac = dl.jacobian(lambda v: tanh_wx(v, dl, da), method="compiled")
    from difflab.diff.compiled import Compiled

    hess_fused = dl.hessian(lambda v: scalar(v, dl, da),
                            method=Compiled(("fold", "cse", "dce", "fuse")))
    hess_tape = dl.hessian(lambda v: scalar(v, dl, da))
    jac_tape = dl.jacobian(lambda v: tanh_wx(v, dl, da))
    want_h, want_j = hess_tape(x), jac_tape(x)
    np.testing.assert_allclose(hess(x), want_h, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(hess_fused(x), want_h, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(jac(x), want_j, rtol=1e-12, atol=1e-14)
    contestants = {"difflab dl.hessian, compiled": lambda: hess(x),
                   "difflab dl.hessian, compiled + fuse": lambda: hess_fused(x),
                   "difflab dl.hessian, reverse (tape)": lambda: hess_tape(x),
                   "difflab dl.jacobian, compiled": lambda: jac(x),
                   "difflab dl.jacobian, reverse (tape)": lambda: jac_tape(x)}
    if torch is not None:
        import torch.func

        px, pa = torch.tensor(x), torch.tensor(a)
        contestants["PyTorch hessian (autograd.functional)"] = \
            lambda: torch.autograd.functional.hessian(lambda v: scalar(v, torch, pa), px)
        contestants["PyTorch hessian (torch.func, vectorized)"] = \
            lambda: torch.func.hessian(lambda v: scalar(v, torch, pa))(px)
        contestants["PyTorch jacobian (autograd.functional)"] = \
            lambda: torch.autograd.functional.jacobian(lambda v: tanh_wx(v, torch, pa), px)
        contestants["PyTorch jacobian (torch.func.jacrev)"] = \
            lambda: torch.func.jacrev(lambda v: tanh_wx(v, torch, pa))(px)
        contestants["PyTorch jacobian (torch.func.jacfwd)"] = \
            lambda: torch.func.jacfwd(lambda v: tanh_wx(v, torch, pa))(px)
    if jax is not None:
        jnp = jax.numpy
        jx, ja = jnp.asarray(x), jnp.asarray(a)
        h = jax.jit(jax.hessian(lambda v: scalar(v, jnp, ja)))
        j = jax.jit(jax.jacrev(lambda v: tanh_wx(v, jnp, ja)))
        jf = jax.jit(jax.jacfwd(lambda v: tanh_wx(v, jnp, ja)))
        contestants["JAX jit hessian"] = lambda: h(jx).block_until_ready()
        contestants["JAX jit jacrev"] = lambda: j(jx).block_until_ready()
        contestants["JAX jit jacfwd"] = lambda: jf(jx).block_until_ready()
        np.testing.assert_allclose(np.asarray(h(jx)), want_h, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(np.asarray(j(jx)), want_j, rtol=1e-9, atol=1e-12)
    times = interleaved(contestants, rounds, budget=0.1)
    print("\nHessian (n = 100) and Jacobian of tanh(A x) (100 x 100), ms "
          "(compiled results equal the tape's to 1e-12)")
    for name, seconds in times.items():
        print(row(name, seconds, 1e-3, " ms", times.cores.get(name)))
    median = {name: statistics.median(t) for name, t in times.items()}
    ratios = []
    if torch is not None:
        ratios += [("hessian: compiled / torch.func", "difflab dl.hessian, compiled",
                    "PyTorch hessian (torch.func, vectorized)"),
                   ("jacobian: compiled / torch.func.jacrev", "difflab dl.jacobian, compiled",
                    "PyTorch jacobian (torch.func.jacrev)")]
    if jax is not None:
        ratios += [("hessian: compiled / JAX jit", "difflab dl.hessian, compiled",
                    "JAX jit hessian"),
                   ("hessian: compiled + fuse / JAX jit", "difflab dl.hessian, compiled + fuse",
                    "JAX jit hessian"),
                   ("jacobian: compiled / JAX jit jacrev", "difflab dl.jacobian, compiled",
                    "JAX jit jacrev")]
    for label, mine, theirs in ratios:
        print(f"  {label:<42} {median[mine] / median[theirs]:>10.2f}")


def training(rounds, torch, quick):
    import difflab as dl
    import difflab.nn as nn
    import difflab.nn.functional as F
    from difflab import jit

    rng = np.random.default_rng(0)
    width = 256 if quick else 1024
    cases = {
        f"MLP 784-{width}-{width}-10, batch 512": (
            lambda: nn.Sequential(nn.Linear(784, width), nn.ReLU(), nn.Linear(width, width),
                                  nn.ReLU(), nn.Linear(width, 10)),
            rng.standard_normal((512, 784)).astype(np.float32), rng.integers(0, 10, 512)),
        "CNN 2 conv + 2 pool + linear, batch 64": (
            lambda: nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                  nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                  nn.Flatten(), nn.Linear(32 * 7 * 7, 10)),
            rng.standard_normal((64, 1, 28, 28)).astype(np.float32), rng.integers(0, 10, 64)),
    }

    class Step(nn.Module):
        """loss and the SGD-updated parameters, as a function: what the graph holds."""

        def __init__(self, model, lr=0.01):
            super().__init__()
            self.model, self.lr = model, lr

        def forward(self, x, y):
            loss = F.cross_entropy(self.model(x), y)
            params = list(self.model.parameters())
            grads = dl.autograd.grad(loss, params)
            return (loss,) + tuple(p - self.lr * g for p, g in zip(params, grads))

    print("\ntraining step (plain SGD), ms")
    for label, (make, xa, ya) in cases.items():
        dl.manual_seed(0)
        eager_model, traced_model = make(), make()
        traced_model.load_state_dict(eager_model.state_dict())
        x, y = dl.tensor(xa), dl.tensor(ya)

        def eager_step(model=eager_model, x=x, y=y):
            loss = F.cross_entropy(model(x), y)
            model.zero_grad()
            loss.backward()
            with dl.no_grad():
                for p in model.parameters():
                    p -= 0.01 * p.grad
            return loss

        step = Step(traced_model)
        traced = jit.trace(step, (x, y), passes=("fold", "cse", "dce"))
        params = list(traced_model.parameters())

        def traced_step(traced=traced, params=params, x=x, y=y):
            with dl.no_grad():  # (the step's graph holds its backward: no tape around it)
                loss, *new = traced(x, y)
            for p, n in zip(params, new):
                p.array = n.array  # the parameters the next call reads (no copy)
            return loss

        # Equal results: three steps each from the same start.
        for _ in range(3):
            a, b = eager_step().item(), traced_step().item()
        diff = max(float(np.max(np.abs(p.detach().numpy() - q.detach().numpy())))
                   for p, q in zip(eager_model.parameters(), traced_model.parameters()))
        contestants = {"difflab eager": eager_step,
                       "difflab traced (fold, cse, dce), replayed": traced_step}
        if torch is not None:
            torch.manual_seed(0)
            tnn = torch.nn
            tmodel = (tnn.Sequential(tnn.Linear(784, width), tnn.ReLU(),
                                     tnn.Linear(width, width), tnn.ReLU(),
                                     tnn.Linear(width, 10)) if "MLP" in label else
                      tnn.Sequential(tnn.Conv2d(1, 16, 3, padding=1), tnn.ReLU(),
                                     tnn.MaxPool2d(2), tnn.Conv2d(16, 32, 3, padding=1),
                                     tnn.ReLU(), tnn.MaxPool2d(2), tnn.Flatten(),
                                     tnn.Linear(32 * 7 * 7, 10)))
            tx, ty = torch.tensor(xa), torch.tensor(ya)

            def torch_step(model=tmodel, tx=tx, ty=ty):
                loss = torch.nn.functional.cross_entropy(model(tx), ty)
                model.zero_grad()
                loss.backward()
                with torch.no_grad():
                    for p in model.parameters():
                        p -= 0.01 * p.grad

            contestants["PyTorch eager"] = torch_step
        times = interleaved(contestants, rounds, budget=0.3)
        print(f" {label}  (after 3 steps: losses {a:.6f} / {b:.6f}, "
              f"max parameter difference {diff:.1e})")
        for name, seconds in times.items():
            print(row(name, seconds, 1e-3, " ms", times.cores.get(name)))


def peak_memory(graph, x, eager):
    def peak(fn):
        fn()
        tracemalloc.start()
        tracemalloc.reset_peak()
        fn()
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top / x.nbytes

    print("\npeak memory of the Rosenbrock gradient (tracemalloc), x x.nbytes")
    print(f"  {'difflab eager':<42} {peak(eager):>10.2f}x")
    print(f"  {'difflab compiled (fused)':<42} {peak(lambda: graph.run(x)):>10.2f}x")


# ------------------------------------------------------------------ main


def run_setting(threads: str, rounds: int, quick: bool) -> None:
    from difflab.jit import fusion

    pinned = f", {pin_to_one_cpu()}" if threads == "1" else ""
    torch, jax = load_torch(threads), load_jax()
    print(f"=== threads: {threads}{pinned}   (fused kernels: {fusion.kernel_backend()})")
    print("PyTorch: " + (torch.__version__ + f", {torch.get_num_threads()} threads"
                         if torch else "not installed, skipped (pip install torch)"))
    print("JAX: " + (jax.__version__ if jax else "not installed, skipped (pip install jax)"))
    graph, x, eager = bench_rosenbrock(rounds, torch, jax, n=10**5 if quick else 10**6)
    bench_transcendental(rounds, torch, jax, n=10**5 if quick else 10**6)
    bench_chain(rounds, torch, jax)
    bench_hessian_jacobian(rounds, torch, jax)
    training(rounds, torch, quick)
    peak_memory(graph, x, eager)


def rerun_at_both_thread_settings(script: str, rounds: int, quick: bool) -> None:
    """Run ``script --threads 1`` then ``--threads default``, each in a fresh process.

    Thread pools are sized when a library is imported, so each setting needs its own
    process: every library at 1 thread (BLAS, OpenMP, numba, XLA), then at its default.
    """
    for threads in ("1", "default"):
        env = dict(os.environ)
        for name in THREAD_VARIABLES:
            if threads == "1":
                env[name] = "1"
            else:
                env.pop(name, None)
        if threads == "1":
            env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false"
                                " intra_op_parallelism_threads=1").strip()
        command = [sys.executable, script, "--threads", threads,
                   "--rounds", str(rounds)] + (["--quick"] if quick else [])
        subprocess.run(command, env=env, check=True)
        print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", choices=["both", "1", "default"], default="both")
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke test")
    args = parser.parse_args(argv)
    if args.threads != "both":
        run_setting(args.threads, args.rounds, args.quick)
        return 0
    rerun_at_both_thread_settings(os.path.abspath(__file__), args.rounds, args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
