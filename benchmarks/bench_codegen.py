"""What generating one native function for a whole training step would cost and buy.

    python benchmarks/bench_codegen.py            # about two minutes
    python benchmarks/bench_codegen.py --quick    # smaller functions, for a smoke test

JAX ``jit`` compiles a whole training step (forward, backward, optimizer) into
one native function; ``dl.compile`` replays a program of NumPy calls, one per
node, with numba loops for the fused elementwise lines.  On the small models
of ``bench_compile.py`` (a GRU over 10 steps, an attention block) every NumPy
call works on a few hundred numbers, so the ~1 µs each call costs, not the
arithmetic, is the step's time, and JAX is 4x ahead.  This benchmark measures
the two ways difflab could generate one native function per graph, on the
same machine, in one run:

1. **numba**, the project's kernel compiler: one ``@njit`` function of N array
   statements (elementwise expressions, slices, concatenations, reductions
   with broadcasting, ``np.dot``) on 8 x 32 float64 arrays: its compile time
   and one call's time, against the same function run by NumPy;
2. **C through the system compiler** (``cc -O3 -march=native``, loaded with
   ctypes), what ``torch.compile``'s CPU backend does with C++: the same N statements as
   loops, its compile time and one call's time;
3. **the GRU step of bench_compile.py**, forward and backward written out by
   hand as one function: NumPy, numba, and, for reference, ``dl.compile``'s
   forward and backward of the same model and JAX's jitted ``value_and_grad``
   (when installed), all of them computing the same loss.

Every library runs at 1 thread on one CPU (the process pins itself), medians
of 5 timed repeats.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_jit import THREAD_VARIABLES, pin_to_one_cpu  # noqa: E402

ROWS, COLS = 8, 32


def median_call(fn, repeats: int = 5, calls: int = 200) -> float:
    """Seconds per call: the median of ``repeats`` timings of ``calls`` calls."""
    fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - start) / calls)
    return statistics.median(samples)


# ------------------------------------------------------------------ N statements


def python_source(n: int) -> str:
    """A function of ``n`` array statements on (8, 32) arrays, for NumPy and numba."""
    lines, previous = ["def f(a, b, w):"], "a"
    for k in range(n):
        kind = k % 5
        if kind == 0:
            lines.append(f"    v{k} = np.tanh({previous}) * b + 1.0")
        elif kind == 1:
            lines.append(f"    v{k} = {previous}[:, :{COLS // 2}] * 2.0")
        elif kind == 2:
            lines.append(f"    v{k} = np.concatenate(({previous}, {previous}), axis=1)")
        elif kind == 3:
            lines.append(f"    v{k} = {previous}.sum(axis=0) + {previous}")
        else:
            lines.append(f"    v{k} = np.dot({previous}, w)")
        previous = f"v{k}"
    lines.append(f"    return {previous}")
    return "\n".join(lines)


def c_source(n: int) -> str:
    """The same ``n`` statements as C loops over (8, 32) arrays (row-major)."""
    r, c, h = ROWS, COLS, COLS // 2
    lines = ["#include <math.h>", "#include <string.h>",
             "void f(const double *a, const double *b, const double *w, double *out) {",
             f"  static double v[{n}][{r * c}];"]
    previous = "a"
    for k in range(n):
        kind, out = k % 5, f"v[{k}]"
        if kind == 0:
            body = f"{out}[i*{c}+j] = tanh({previous}[i*{c}+j]) * b[j] + 1.0;"
            lines.append(f"  for (int i = 0; i < {r}; i++) for (int j = 0; j < {c}; j++) {body}")
        elif kind == 1:  # the half slice, doubled: the next concatenation restores the width
            body = f"{out}[i*{c}+j] = {previous}[i*{c}+j] * 2.0;"
            lines.append(f"  for (int i = 0; i < {r}; i++) for (int j = 0; j < {h}; j++) {body}")
        elif kind == 2:
            body = (f"{{ {out}[i*{c}+j] = {previous}[i*{c}+j]; "
                    f"{out}[i*{c}+{h}+j] = {previous}[i*{c}+j]; }}")
            lines.append(f"  for (int i = 0; i < {r}; i++) for (int j = 0; j < {h}; j++) {body}")
        elif kind == 3:
            lines.append(f"  for (int j = 0; j < {c}; j++) {{ double s = 0.0;"
                         f" for (int i = 0; i < {r}; i++) s += {previous}[i*{c}+j];"
                         f" for (int i = 0; i < {r}; i++)"
                         f" {out}[i*{c}+j] = s + {previous}[i*{c}+j]; }}")
        else:
            lines.append(f"  for (int i = 0; i < {r}; i++) for (int j = 0; j < {c}; j++) {{"
                         f" double s = 0.0; for (int l = 0; l < {c}; l++)"
                         f" s += {previous}[i*{c}+l] * w[l*{c}+j]; {out}[i*{c}+j] = s; }}")
        previous = out
    lines.append(f"  memcpy(out, {previous}, sizeof(double) * {r * c});\n}}")
    return "\n".join(lines)


def statements(sizes: list[int]) -> None:
    import numba

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((ROWS, COLS)), rng.standard_normal(COLS)
    w = rng.standard_normal((COLS, COLS)) * 0.1
    numba.njit(lambda x: x + 1.0)(a)  # (numba's own start-up, not the function's compile)
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    print(f"one function of N array statements on {ROWS} x {COLS} float64 "
          f"(numba {numba.__version__}; C: {compiler or 'no compiler found'})")
    print(f"  {'N':>5} {'numba compile':>15} {'numba call':>12} {'NumPy call':>12} "
          f"{'C compile':>11} {'C call':>10}")
    for n in sizes:
        namespace = {"np": np}
        exec(python_source(n), namespace)  # (our own generated text)
        plain = namespace["f"]
        start = time.perf_counter()
        native = numba.njit(plain)
        want = native(a, b, w)
        numba_compile = time.perf_counter() - start
        numba_call = median_call(lambda native=native: native(a, b, w))
        numpy_call = median_call(lambda plain=plain: plain(a, b, w))
        c_compile = c_call = float("nan")
        if compiler is not None:
            c_compile, c_call = c_timings(compiler, n, a, b, w, want)
        print(f"  {n:>5} {numba_compile:>13.1f} s {numba_call * 1e6:>9.1f} µs "
              f"{numpy_call * 1e6:>9.1f} µs {c_compile:>9.2f} s {c_call * 1e6:>7.1f} µs")


def c_timings(compiler: str, n: int, a, b, w, want) -> tuple[float, float]:
    """Compile ``c_source(n)`` with ``compiler`` and time one call; check its result."""
    with tempfile.TemporaryDirectory() as folder:
        source, library = os.path.join(folder, "f.c"), os.path.join(folder, "f.so")
        with open(source, "w") as file:
            file.write(c_source(n))
        start = time.perf_counter()
        subprocess.run([compiler, "-O3", "-march=native", "-shared", "-fPIC", "-o", library,
                        source, "-lm"], check=True)
        compile_seconds = time.perf_counter() - start
        function = ctypes.CDLL(library).f
    out = np.empty((ROWS, COLS))
    pointer = ctypes.POINTER(ctypes.c_double)
    args = [x.ctypes.data_as(pointer) for x in (a, b, w, out)]
    function(*args)
    np.testing.assert_allclose(out, want, rtol=1e-9, atol=1e-9)
    return compile_seconds, median_call(lambda: function(*args))


# ------------------------------------------------------------------ the GRU step


def gru_loss_and_grads(x, w_ih, b_ih, w_hh, b_hh, w_out, b_out, y):
    """The GRU model of bench_compile.py: cross-entropy of the head on the last state,
    and its gradients with respect to the six parameters, written out by hand."""
    batch, steps, features = x.shape
    hidden = w_hh.shape[1]
    x_flat = np.ascontiguousarray(x.reshape(batch * steps, features))
    gi_all = (np.dot(x_flat, w_ih.T) + b_ih).reshape(batch, steps, 3 * hidden)
    h = np.zeros((batch, hidden))
    states, news = np.empty((steps, batch, hidden)), np.empty((steps, batch, hidden))
    gates, projections = np.empty((steps, batch, 2 * hidden)), np.empty((steps, batch, 3 * hidden))
    for t in range(steps):
        gi, gh = gi_all[:, t], np.dot(h, w_hh.T) + b_hh
        rz = 1.0 / (1.0 + np.exp(-(gi[:, :2 * hidden] + gh[:, :2 * hidden])))
        n = np.tanh(gi[:, 2 * hidden:] + rz[:, :hidden] * gh[:, 2 * hidden:])
        states[t], gates[t], news[t], projections[t] = h, rz, n, gh
        h = n + rz[:, hidden:] * (h - n)
    logits = np.dot(h, w_out.T) + b_out
    top = np.empty(batch)
    for i in range(batch):
        top[i] = logits[i].max()
    e = np.exp(logits - top.reshape(batch, 1))
    total = e.sum(axis=1)
    loss = 0.0
    for i in range(batch):
        loss -= logits[i, y[i]] - top[i] - np.log(total[i])
    loss /= batch
    g = e / total.reshape(batch, 1) / batch
    for i in range(batch):
        g[i, y[i]] -= 1.0 / batch
    d_w_out, d_b_out, d_h = np.dot(g.T, h), g.sum(axis=0), np.dot(g, w_out)
    d_w_hh, d_b_hh = np.zeros_like(w_hh), np.zeros(3 * hidden)
    d_gi_all = np.empty((batch, steps, 3 * hidden))
    for t in range(steps - 1, -1, -1):
        rz, n, gh, h_before = gates[t], news[t], projections[t], states[t]
        r, z = rz[:, :hidden], rz[:, hidden:]
        a_n = d_h * (1.0 - z) * (1.0 - n * n)
        a_r = a_n * gh[:, 2 * hidden:] * (r * (1.0 - r))
        a_z = d_h * (h_before - n) * (z * (1.0 - z))
        d_gi_all[:, t] = np.concatenate((a_r, a_z, a_n), axis=1)
        d_gh = np.concatenate((a_r, a_z, r * a_n), axis=1)
        d_w_hh += np.dot(d_gh.T, h_before)
        d_b_hh += d_gh.sum(axis=0)
        d_h = d_h * z + np.dot(d_gh, w_hh)
    d_flat = d_gi_all.reshape(batch * steps, 3 * hidden)
    return loss, (np.dot(d_flat.T, x_flat), d_flat.sum(axis=0), d_w_hh, d_b_hh, d_w_out, d_b_out)


def gru_step() -> None:
    import numba

    import difflab as dl
    import difflab.nn as nn
    import difflab.nn.functional as F

    class Recurrent(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn, self.head = nn.GRU(16, 32, batch_first=True), nn.Linear(32, 4)

        def forward(self, x):
            out, _ = self.rnn(x)
            return self.head(out[:, -1])

    rng = np.random.default_rng(3)
    data, labels = rng.standard_normal((8, 10, 16)), rng.integers(0, 4, 8)
    dl.manual_seed(0)
    model = Recurrent().double()
    net, x, y = dl.compile(model), dl.tensor(data), dl.tensor(labels)
    names = ("rnn.weight_ih_l0", "rnn.bias_ih_l0", "rnn.weight_hh_l0", "rnn.bias_hh_l0",
             "head.weight", "head.bias")  # (the order of gru_loss_and_grads's arguments)
    named = dict(model.named_parameters())
    params = [named[name].detach().numpy().copy() for name in names]

    def compiled_step():
        model.zero_grad()
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        return loss

    want = float(compiled_step().item())
    want_grads = [named[name].grad.numpy().copy() for name in names]
    native = numba.njit(gru_loss_and_grads)
    start = time.perf_counter()
    native(data, *params, labels)
    numba_compile = time.perf_counter() - start
    contestants = {"NumPy, written out": lambda: gru_loss_and_grads(data, *params, labels),
                   "numba, the same function": lambda: native(data, *params, labels),
                   "dl.compile forward + backward": compiled_step}
    for name in ("NumPy, written out", "numba, the same function"):
        loss, grads = contestants[name]()
        assert abs(loss - want) < 1e-12, (name, loss, want)
        for mine, theirs in zip(grads, want_grads):
            np.testing.assert_allclose(mine, theirs, rtol=1e-9, atol=1e-12)
    try:
        import jax

        jax.config.update("jax_enable_x64", True)
        contestants["JAX jit value_and_grad"] = jax_gru(jax, data, labels, params, want)
    except ImportError:
        print("  (JAX not installed: pip install jax to compare)")
    print(f"\nGRU 16-32, sequence 10, batch 8, float64: loss and gradients "
          f"(all equal to dl.compile's to 1e-12; numba compiled it in {numba_compile:.1f} s)")
    for name, fn in contestants.items():
        print(f"  {name:<34} {median_call(fn, calls=100) * 1e3:8.3f} ms")


def jax_gru(jax, data, labels, params, want):
    jnp = jax.numpy
    w_ih, b_ih, w_hh, b_hh, w_out, b_out = (jnp.asarray(p) for p in params)

    def loss_fn(p, x, y):
        w_ih, b_ih, w_hh, b_hh, w_out, b_out = p
        h = jnp.zeros((x.shape[0], w_hh.shape[1]), x.dtype)
        for t in range(x.shape[1]):
            gi, gh = x[:, t] @ w_ih.T + b_ih, h @ w_hh.T + b_hh
            (ir, iz, i_n), (hr, hz, hn) = jnp.split(gi, 3, 1), jnp.split(gh, 3, 1)
            r, z = jax.nn.sigmoid(ir + hr), jax.nn.sigmoid(iz + hz)
            h = (1 - z) * jnp.tanh(i_n + r * hn) + z * h
        logits = h @ w_out.T + b_out
        return -jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], 1).mean()

    step = jax.jit(jax.value_and_grad(loss_fn))
    p = (w_ih, b_ih, w_hh, b_hh, w_out, b_out)
    x, y = jnp.asarray(data), jnp.asarray(labels)
    loss = float(step(p, x, y)[0])
    assert abs(loss - want) < 1e-12, (loss, want)
    return lambda: jax.block_until_ready(step(p, x, y))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller functions")
    args = parser.parse_args(argv)
    if any(os.environ.get(name) != "1" for name in THREAD_VARIABLES):
        # (thread pools are sized at import: a fresh process with every library at 1)
        env = dict(os.environ, **dict.fromkeys(THREAD_VARIABLES, "1"))
        return subprocess.run([sys.executable, os.path.abspath(__file__)] + (argv or sys.argv[1:]),
                              env=env).returncode
    print(f"1 thread, {pin_to_one_cpu()}")
    statements([10, 25] if args.quick else [25, 50, 100, 200])
    gru_step()
    return 0


if __name__ == "__main__":
    sys.exit(main())
