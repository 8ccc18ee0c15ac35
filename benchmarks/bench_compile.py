"""dl.compile and method="compiled" against eager difflab, PyTorch and JAX where installed.

    python benchmarks/bench_compile.py [--rounds 5] [--threads both|1|default] [--quick]
                                       [--only chain,graph-break,training,products]
                                       [--models mlp,cnn,gru,attention]

Columns: difflab eager (the tape), ``method="compiled"`` (dl.grad / dl.hessian
/ dl.jacobian on a traced graph), ``dl.compile`` (torch.compile's face),
then PyTorch eager, ``torch.compile`` and JAX ``jit`` when they are installed
(otherwise the table says so).  Timing as in bench_jit.py, whose helpers this
reuses: each thread setting in its own process (``--threads 1`` alone runs
itself again with BLAS, OpenMP, numba and XLA at 1 thread, unless the
environment says so already, and pins the process to one CPU: JAX kept 1.6
cores busy with XLA's 1-thread flags), contestants in interleaved rounds,
medians and (min - max) ranges, and the cores each contestant kept busy
(CPU seconds / wall seconds: about 1.0 at 1 thread on a quiet machine).
Steady state only: compile time and the first call (trace + optimize +
kernels + run) are reported apart.

Workloads: the Rosenbrock gradient (n = 10**6, as a multiple of one NumPy f),
a chain of 200 small ops (forward + backward, µs per op), the same chain with a
graph break in the middle (an ``if`` on a value; µs per call), the Hessian and the
Jacobian at n = 100, MLP and small CNN training steps (SGD), a GRU sequence
step and a small attention block (Adam), all float64 except the CNN and MLP
(float32, as PyTorch users run them).  The training peers are the same models in
PyTorch's API and as jax.numpy functions (a jitted step with plain SGD, or Adam as
PyTorch computes it), started from the difflab model's initial parameters: the
three losses at step 0 must agree (to 1e-5 in float32, 1e-10 in float64).
Then the MLP step's two large matrix products alone, in each library's own
BLAS (NumPy's OpenBLAS for difflab), which bound that step from below.

What each contestant of a training step compiles (the rest runs eagerly):

====================================  ==============================================
row                                   compiled
====================================  ==============================================
``dl.compile``                        the model (``dl.compile(model)``; the loss, the
                                      backward walk and the optimizer eager), as
                                      ``torch.compile`` below
``dl.compile, model + loss``          the model and the loss in one function,
                                      ``dl.compile(lambda x, y: loss(model(x), y))``:
                                      one graph computes the loss and its gradients
                                      together (the walk and the optimizer eager)
``torch.compile``                     the model (``torch.compile(model)``)
``torch.compile, model + loss``       the same function as ``dl.compile``'s
``JAX jit``                           the whole step: loss, gradients and the
                                      optimizer's update in one jitted function
====================================  ==============================================

Then
peak memory of the compiled gradients (tracemalloc, x input size, first call
included), and the first call of a fresh process with a cold and then a warm kernel cache on disk.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_jit import (  # noqa: E402  (the shared timing helpers)
    THREAD_VARIABLES,
    chain,
    interleaved,
    load_jax,
    load_torch,
    pin_to_one_cpu,
    rerun_at_both_thread_settings,
    rosenbrock,
    rosenbrock_numpy,
    row,
)

COLUMNS = ("difflab eager", 'method="compiled"', "dl.compile", "dl.compile, model + loss",
           "PyTorch eager", "torch.compile", "torch.compile, model + loss", "JAX jit")
# (rows only the training steps have: the other tables leave them out, not "n/a")
TRAINING_ONLY = ("dl.compile, model + loss", "torch.compile, model + loss")


def first_call(make):
    """Seconds of the first call of a freshly compiled contestant (compile included)."""
    fn = make()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def table(title: str, times: dict, scale: float, unit: str, firsts: dict) -> None:
    print(f"\n{title}")
    for name in COLUMNS:
        if name in times:
            extra = f"   first call {firsts[name] * 1e3:8.1f} ms" if name in firsts else ""
            print(row(name, times[name], scale, unit, getattr(times, "cores", {}).get(name))
                  + extra)
        elif name in ("torch.compile", "PyTorch eager", "JAX jit") + TRAINING_ONLY:
            continue  # (said once at the top: not installed; or not this table's)
        else:
            print(f"  {name:<42} {'n/a':>10}")


def torch_compile(torch, fn):
    try:
        return torch.compile(fn)
    except Exception as exc:  # (no compiler toolchain on this machine)
        print(f"  torch.compile unavailable here: {type(exc).__name__}: {exc}")
        return None


# ------------------------------------------------------------------ workloads


def bench_rosenbrock(rounds, torch, jax, n):
    import difflab as dl

    x = np.random.default_rng(0).uniform(-1.5, 1.5, n)
    compiled_grad = dl.grad(rosenbrock, method="compiled")

    t = dl.tensor(x, requires_grad=True)  # (a parameter: made once, its .grad reset)

    def eager():
        t.grad = None
        rosenbrock(t).backward()
        return t.grad.numpy()

    def make_compiled():
        f = dl.compile(rosenbrock)

        def run():
            t.grad = None
            f(t).backward()
            return t.grad.numpy()
        return run

    firsts = {'method="compiled"': first_call(lambda: (lambda: dl.grad(
        rosenbrock, method="compiled")(x))), "dl.compile": first_call(make_compiled)}
    compiled = make_compiled()
    want = eager()
    np.testing.assert_allclose(compiled(), want, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(compiled_grad(x), want, rtol=1e-12, atol=1e-9)
    contestants = {"NumPy f": lambda: rosenbrock_numpy(x), "difflab eager": eager,
                   'method="compiled"': lambda: compiled_grad(x), "dl.compile": compiled}
    if torch is not None:
        tx = torch.tensor(x)

        def torch_eager(f=rosenbrock):
            t = tx.clone().requires_grad_()
            f(t).backward()
            return t.grad

        contestants["PyTorch eager"] = torch_eager
        tc = torch_compile(torch, rosenbrock)
        if tc is not None:
            contestants["torch.compile"] = lambda: torch_eager(tc)
    if jax is not None:
        g = jax.jit(jax.grad(rosenbrock))
        jx = jax.numpy.asarray(x)
        contestants["JAX jit"] = lambda: g(jx).block_until_ready()
    times = interleaved(contestants, rounds, budget=0.2)
    unit = statistics.median(times.pop("NumPy f"))
    table(f"Rosenbrock gradient, n = {n}: x one NumPy f ({unit * 1e3:.2f} ms)", times, unit,
          "x", firsts)
    return x, compiled, compiled_grad


def bench_chain(rounds, torch, jax):
    import difflab as dl

    x = np.random.default_rng(1).uniform(-1, 1, 16)
    ops = 201
    compiled_grad = dl.grad(chain, method="compiled")

    def eager():
        t = dl.tensor(x, requires_grad=True)
        chain(t).backward()
        return t.grad

    def make_compiled():
        f = dl.compile(chain)

        def run():
            t = dl.tensor(x, requires_grad=True)
            f(t).backward()
            return t.grad
        return run

    firsts = {"dl.compile": first_call(make_compiled)}
    compiled = make_compiled()
    np.testing.assert_allclose(compiled().numpy(), eager().numpy(), rtol=1e-12)
    contestants = {"difflab eager": eager, 'method="compiled"': lambda: compiled_grad(x),
                   "dl.compile": compiled}
    if torch is not None:
        tx = torch.tensor(x)

        def torch_eager(f=lambda v: chain(v, torch)):
            t = tx.clone().requires_grad_()
            f(t).backward()
            return t.grad

        contestants["PyTorch eager"] = torch_eager
        tc = torch_compile(torch, lambda v: chain(v, torch))
        if tc is not None:
            contestants["torch.compile"] = lambda: torch_eager(tc)
    if jax is not None:
        g = jax.jit(jax.grad(lambda v: chain(v, jax.numpy)))
        jx = jax.numpy.asarray(x)
        contestants["JAX jit"] = lambda: g(jx).block_until_ready()
    times = interleaved(contestants, rounds, budget=0.05)
    table("chain of 200 ops on 16 float64, forward + backward: µs per op", times, ops / 1e6,
          " µs", firsts)


def gated_chain(x, m=None):
    """chain's 200 ops with a data-dependent branch after the first 100: a graph break."""
    if m is None:
        import difflab as m
    for _ in range(20):
        x = m.tanh(m.sin(x * 0.999 + 0.001) * 1.01)
    x = x * 1.5 if x.sum() > 0 else x * 0.5  # (Python reads a value: the graph splits)
    for _ in range(20):
        x = m.tanh(m.sin(x * 0.999 + 0.001) * 1.01)
    return x.sum()


def bench_graph_break(rounds, torch, n):
    """A break in the middle: dl.compile replays graph 1, reads the value, replays the graph
    cached for that branch (both branches taken, in turn); before, the call ran eagerly."""
    import difflab as dl

    inputs = [np.random.default_rng(2).uniform(0, 1, n), np.random.default_rng(3).uniform(-1, 0, n)]

    def run(f, tensor, grad):
        turn = [0]

        def call():
            turn[0] ^= 1
            t = tensor(inputs[turn[0]])
            f(t).backward()
            return grad(t)
        return call

    def eager_first():
        return run(gated_chain, lambda a: dl.tensor(a, requires_grad=True), lambda t: t.grad)

    def make_compiled():
        return run(dl.compile(gated_chain), lambda a: dl.tensor(a, requires_grad=True),
                   lambda t: t.grad)

    firsts = {"dl.compile": first_call(make_compiled)}
    compiled, eager = make_compiled(), eager_first()
    for _ in range(2):
        np.testing.assert_allclose(compiled().numpy(), eager().numpy(), rtol=1e-12)
    contestants = {"difflab eager": eager, "dl.compile": compiled}
    if torch is not None:
        grad = lambda t: t.grad  # noqa: E731
        tensor = lambda a: torch.tensor(a, requires_grad=True)  # noqa: E731
        contestants["PyTorch eager"] = run(lambda v: gated_chain(v, torch), tensor, grad)
        tc = torch_compile(torch, lambda v: gated_chain(v, torch))
        if tc is not None:
            contestants["torch.compile"] = run(tc, tensor, grad)
    times = interleaved(contestants, rounds, budget=0.05)
    table(f"graph break in the middle (200 ops, an if on a value after 100), n = {n}, "
          f"forward + backward: µs per call", times, 1e-6, " µs", firsts)


def bench_hessian_jacobian(rounds, torch, jax):
    import difflab as dl

    rng = np.random.default_rng(2)
    a = rng.normal(size=(100, 100)) / 10
    x = rng.normal(size=100)
    da = dl.tensor(a)

    def scalar(v, m=dl, a=da):
        return (m.sin(v) * v).sum() + (m.tanh(a @ v) ** 2).sum()

    def tanh_wx(v, m=dl, a=da):
        return m.tanh(a @ v)

    for label, transform, fn in (("Hessian (n = 100)", "hessian", scalar),
                                 ("Jacobian of tanh(A x) (100 x 100)", "jacobian", tanh_wx)):
        bench_transform(rounds, torch, jax, label, transform, fn, x, a)


def bench_transform(rounds, torch, jax, label, transform, fn, x, a):
    import difflab as dl

    make = getattr(dl, transform)
    eager, compiled = make(fn, method="reverse"), make(fn, method="compiled")
    firsts = {'method="compiled"': first_call(lambda: lambda: make(fn, method="compiled")(x))}
    np.testing.assert_allclose(compiled(x), eager(x), rtol=1e-12, atol=1e-14)
    contestants = {"difflab eager": lambda: eager(x), 'method="compiled"': lambda: compiled(x)}
    name = "hessian" if transform == "hessian" else "jacrev"
    if torch is not None:
        import torch.func

        px, pa = torch.tensor(x), torch.tensor(a)
        contestants["PyTorch eager"] = lambda: getattr(torch.func, name)(
            lambda v: fn(v, torch, pa))(px)
    if jax is not None:
        jnp = jax.numpy
        jx, ja = jnp.asarray(x), jnp.asarray(a)
        jt = jax.jit(getattr(jax, name)(lambda v: fn(v, jnp, ja)))
        contestants["JAX jit"] = lambda: jt(jx).block_until_ready()
    times = interleaved(contestants, rounds, budget=0.1)
    table(f"{label}, ms (dl.compile: not a derivative transform, see method=)", times,
          1e-3, " ms", firsts)


# ------------------------------------------------------------------ training steps


def models(quick):
    import difflab.nn as nn

    class Recurrent(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn, self.head = nn.GRU(16, 32, batch_first=True), nn.Linear(32, 4)

        def forward(self, x):
            out, _ = self.rnn(x)
            return self.head(out[:, -1])

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention = nn.MultiheadAttention(32, 4, batch_first=True)
            self.norm, self.head = nn.LayerNorm(32), nn.Linear(32, 4)

        def forward(self, x):
            a, _ = self.attention(x, x, x, need_weights=False)
            return self.head(self.norm(x + a).mean(1))

    width = 128 if quick else 512
    return {
        f"MLP 784-{width}-10, batch 128, SGD (float32)": (
            lambda: nn.Sequential(nn.Linear(784, width), nn.ReLU(), nn.Linear(width, 10)),
            (128, 784), 10, np.float32, "SGD", "mlp"),
        "CNN 2 conv + 2 pool + linear, batch 16, SGD (float32)": (
            lambda: nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                  nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                  nn.Flatten(), nn.Linear(16 * 7 * 7, 10)),
            (16, 1, 28, 28), 10, np.float32, "SGD", "cnn"),
        "GRU 16-32, sequence 10, batch 8, Adam (float64)": (
            Recurrent, (8, 10, 16), 4, np.float64, "Adam", "gru"),
        "attention block (32 features, 4 heads), 12 tokens, batch 8, Adam (float64)": (
            Attention, (8, 12, 32), 4, np.float64, "Adam", "attention"),
    }


# The same four models in PyTorch's own API (their parameters' names are difflab's) and
# as jax.numpy functions of a dictionary of those parameters; each starts from the
# difflab model's initial parameters, so the three compute the same loss at step 0.


def torch_model(torch, kind: str, width: int):
    nn = torch.nn

    class Recurrent(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn, self.head = nn.GRU(16, 32, batch_first=True), nn.Linear(32, 4)

        def forward(self, x):
            out, _ = self.rnn(x)
            return self.head(out[:, -1])

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention = nn.MultiheadAttention(32, 4, batch_first=True)
            self.norm, self.head = nn.LayerNorm(32), nn.Linear(32, 4)

        def forward(self, x):
            a, _ = self.attention(x, x, x, need_weights=False)
            return self.head(self.norm(x + a).mean(1))

    if kind == "mlp":
        return nn.Sequential(nn.Linear(784, width), nn.ReLU(), nn.Linear(width, 10))
    if kind == "cnn":
        return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Flatten(), nn.Linear(16 * 7 * 7, 10))
    return Recurrent() if kind == "gru" else Attention()


def jax_forward(jax, kind: str):
    """``forward(p, x)``: the model's logits, ``p`` its parameters by PyTorch's names."""
    jnp, lax = jax.numpy, jax.lax

    def linear(p, name, x):
        return x @ p[f"{name}.weight"].T + p[f"{name}.bias"]

    def conv_relu_pool(p, name, x):
        y = lax.conv_general_dilated(x, p[f"{name}.weight"], (1, 1), ((1, 1), (1, 1)),
                                     dimension_numbers=("NCHW", "OIHW", "NCHW"))
        y = jax.nn.relu(y + p[f"{name}.bias"][None, :, None, None])
        return lax.reduce_window(y, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")

    def mlp(p, x):
        return linear(p, "2", jax.nn.relu(linear(p, "0", x)))

    def cnn(p, x):
        y = conv_relu_pool(p, "3", conv_relu_pool(p, "0", x))
        return linear(p, "7", y.reshape(y.shape[0], -1))

    def gru(p, x):  # PyTorch's GRU: gates r, z, n in that order
        h = jnp.zeros((x.shape[0], 32), x.dtype)
        for t in range(x.shape[1]):
            gi = x[:, t] @ p["rnn.weight_ih_l0"].T + p["rnn.bias_ih_l0"]
            gh = h @ p["rnn.weight_hh_l0"].T + p["rnn.bias_hh_l0"]
            (ir, iz, i_n), (hr, hz, hn) = jnp.split(gi, 3, 1), jnp.split(gh, 3, 1)
            r, z = jax.nn.sigmoid(ir + hr), jax.nn.sigmoid(iz + hz)
            h = (1 - z) * jnp.tanh(i_n + r * hn) + z * h
        return linear(p, "head", h)

    def attention(p, x):
        b, t, e = x.shape
        qkv = x @ p["attention.in_proj_weight"].T + p["attention.in_proj_bias"]
        q, k, v = (a.reshape(b, t, 4, e // 4).transpose(0, 2, 1, 3)
                   for a in jnp.split(qkv, 3, -1))
        weights = jax.nn.softmax(q @ k.transpose(0, 1, 3, 2) / jnp.sqrt(e // 4), -1)
        a = linear(p, "attention.out_proj", (weights @ v).transpose(0, 2, 1, 3).reshape(b, t, e))
        y = x + a
        mean, var = y.mean(-1, keepdims=True), y.var(-1, keepdims=True)
        y = (y - mean) / jnp.sqrt(var + 1e-5) * p["norm.weight"] + p["norm.bias"]
        return linear(p, "head", y.mean(1))

    return {"mlp": mlp, "cnn": cnn, "gru": gru, "attention": attention}[kind]


def jax_stepper(jax, kind: str, params: dict, x, y, optimizer: str, lr: float = 0.01):
    """A jitted training step (plain SGD, or Adam with PyTorch's defaults) and its state."""
    jnp = jax.numpy
    forward = jax_forward(jax, kind)

    def loss_fn(p):
        logits = forward(p, x)
        return -jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], 1).mean()

    if optimizer == "SGD":
        @jax.jit
        def step(p):
            loss, g = jax.value_and_grad(loss_fn)(p)
            return jax.tree_util.tree_map(lambda a, d: a - lr * d, p, g), loss
        state = [params]
    else:
        @jax.jit
        def step(p, m, v, t):
            loss, g = jax.value_and_grad(loss_fn)(p)
            t = t + 1
            m = jax.tree_util.tree_map(lambda a, d: 0.9 * a + 0.1 * d, m, g)
            v = jax.tree_util.tree_map(lambda a, d: 0.999 * a + 0.001 * d * d, v, g)

            def update(a, mi, vi):
                return a - lr * (mi / (1 - 0.9 ** t)) / (jnp.sqrt(vi / (1 - 0.999 ** t)) + 1e-8)
            return jax.tree_util.tree_map(update, p, m, v), m, v, t, loss
        zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
        state = [params, zeros, zeros, jnp.asarray(0.0, params["head.bias"].dtype)]

    def run():
        *new, loss = step(*state)
        state[:] = new
        return loss.block_until_ready()
    return run, loss_fn


MODELS = ("mlp", "cnn", "gru", "attention")


def bench_training(rounds, torch, jax, quick, kinds=MODELS):
    rng = np.random.default_rng(3)
    for label, spec in models(quick).items():
        if spec[-1] in kinds:
            bench_step(rounds, rng, label, *spec, torch=torch, jax=jax,
                       width=128 if quick else 512)
        else:  # (its data drawn all the same: the next models get the data of a full run)
            batch_data(rng, spec[1], spec[2], spec[3])


def batch_data(rng, shape, classes, dtype):
    """A batch's inputs and labels."""
    return rng.standard_normal(shape).astype(dtype), rng.integers(0, classes, shape[0])


def bench_step(rounds, rng, label, make, shape, classes, dtype, optimizer, kind, torch=None,
               jax=None, width=512):
    import difflab as dl
    import difflab.nn.functional as F

    data, labels = batch_data(rng, shape, classes, dtype)
    x, y = dl.tensor(data), dl.tensor(labels)

    def stepper(compiled: str | None):
        """compiled: None (eager), "model" (dl.compile(model)) or "loss" (model + loss)."""
        dl.manual_seed(0)
        model = make()
        if dtype == np.float64:
            model = model.double()
        net = dl.compile(model) if compiled == "model" else model
        loss_of = dl.compile(lambda inputs, targets: F.cross_entropy(net(inputs), targets)) \
            if compiled == "loss" else lambda inputs, targets: F.cross_entropy(net(inputs), targets)
        opt = getattr(dl.optim, optimizer)(net.parameters(), lr=0.01)

        def step():
            opt.zero_grad()
            loss = loss_of(x, y)
            loss.backward()
            opt.step()
            return loss
        return step, model

    firsts = {"dl.compile": first_call(lambda: stepper("model")[0]),
              "dl.compile, model + loss": first_call(lambda: stepper("loss")[0])}
    (eager, m1), (compiled, m2), (with_loss, m3) = (stepper(None), stepper("model"),
                                                    stepper("loss"))
    # (the peers start from the difflab model's initial parameters)
    initial = {k: v.detach().numpy().copy() for k, v in m1.state_dict().items()}
    losses = {"difflab": float(F.cross_entropy(m1(x), y).item())}
    for _ in range(3):
        eager(), compiled(), with_loss()
    diff = max(float(np.max(np.abs(p.detach().numpy() - q.detach().numpy())))
               for m in (m2, m3) for p, q in zip(m1.parameters(), m.parameters()))
    contestants = {"difflab eager": eager, "dl.compile": compiled,
                   "dl.compile, model + loss": with_loss}
    if torch is not None:
        tx, ty = torch.tensor(data), torch.tensor(labels)
        cross_entropy = torch.nn.functional.cross_entropy

        def torch_stepper(compiled: str | None):
            model = torch_model(torch, kind, width).to(getattr(torch, np.dtype(dtype).name))
            model.load_state_dict({k: torch.tensor(v) for k, v in initial.items()})
            net = torch_compile(torch, model) if compiled == "model" else model
            loss_of = torch_compile(torch, lambda inputs, targets: cross_entropy(
                model(inputs), targets)) if compiled == "loss" else \
                lambda inputs, targets: cross_entropy(net(inputs), targets)
            if net is None or loss_of is None:
                return None, None
            opt = getattr(torch.optim, optimizer)(model.parameters(), lr=0.01)

            def step():
                opt.zero_grad()
                loss = loss_of(tx, ty)
                loss.backward()
                opt.step()
                return loss
            return step, model

        step, model = torch_stepper(None)
        losses["PyTorch"] = float(cross_entropy(model(tx), ty).detach())
        contestants["PyTorch eager"] = step
        for name, what in (("torch.compile", "model"), ("torch.compile, model + loss", "loss")):
            made = [None]

            def make_torch_compiled(what=what, made=made):
                made[0] = torch_stepper(what)[0]
                return made[0] or (lambda: None)
            firsts[name] = first_call(make_torch_compiled)
            if made[0] is not None:
                contestants[name] = made[0]
    if jax is not None:
        jnp = jax.numpy
        params = {k: jnp.asarray(v) for k, v in initial.items()}
        jx, jy = jnp.asarray(data), jnp.asarray(labels)
        losses["JAX"] = float(jax_stepper(jax, kind, params, jx, jy, optimizer)[1](params))
        made = [None]

        def make_jax():
            made[0] = jax_stepper(jax, kind, params, jx, jy, optimizer)[0]
            return made[0]
        firsts["JAX jit"] = first_call(make_jax)
        contestants["JAX jit"] = made[0]
    tolerance = 1e-5 if dtype == np.float32 else 1e-10
    for name, loss in losses.items():
        if abs(loss - losses["difflab"]) > tolerance * max(1.0, abs(losses["difflab"])):
            raise AssertionError(f"{label}: {name}'s loss at step 0 is {loss!r}, difflab's "
                                 f"{losses['difflab']!r}: the models differ")
    times = interleaved(contestants, rounds, budget=0.2)
    spread = max(abs(v - losses["difflab"]) for v in losses.values())
    table(f"training step, ms: {label}\n  (after 3 steps each, max parameter difference "
          f"compiled (both ways) vs eager: {diff:.1e}; loss at step 0 {losses['difflab']:.6f}, "
          f"{', '.join(losses)} within {spread:.1e})", times, 1e-3, " ms", firsts)


# ------------------------------------------------------------------ memory and disk cache


def peak_memory(x, compiled, compiled_grad):
    import difflab as dl

    def peak(fn):
        tracemalloc.start()
        tracemalloc.reset_peak()
        fn()
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top / x.nbytes

    from difflab.diff.compiled import Compiled

    fresh = dl.grad(rosenbrock, method=Compiled())  # (its own cache: a true first call)
    f = dl.compile(rosenbrock)

    def first():
        t = dl.tensor(x, requires_grad=True)
        f(t).backward()

    print(f"\npeak memory of the Rosenbrock gradient (tracemalloc), x input size "
          f"({x.nbytes / 2**20:.1f} MiB)")
    for label, fn in (('method="compiled", first call', lambda: fresh(x)),
                      ('method="compiled", later calls', lambda: compiled_grad(x)),
                      ("dl.compile, first call", first), ("dl.compile, later calls", compiled)):
        print(f"  {label:<42} {peak(fn):>10.2f}x")


FRESH_PROCESS = """
import time, numpy as np
start = time.perf_counter()
import difflab as dl
imported = time.perf_counter()
x = dl.tensor(np.linspace(-1, 1, 1000), requires_grad=True)
f = dl.compile(lambda x: (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum())
f(x).backward()
print(f"{imported - start:.3f} {time.perf_counter() - imported:.3f}")
"""


def disk_cache() -> None:
    """A fresh process's first dl.compile call, with an empty and then a filled kernel cache."""
    from difflab.jit import fusion

    print(f"\nfirst dl.compile call of a fresh process (kernels: {fusion.kernel_backend()}), s")
    with tempfile.TemporaryDirectory() as folder:
        os.chmod(folder, 0o700)
        env = dict(os.environ, DIFFLAB_CACHE_DIR=folder)
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        for label in ("cold cache (compiles the kernels)", "warm cache (loads them)",
                      "warm cache, again"):
            out = subprocess.run([sys.executable, "-c", FRESH_PROCESS], env=env, cwd=here,
                                 capture_output=True, text=True, check=True).stdout.split()
            print(f"  {label:<42} {float(out[1]):>10.3f}   (import difflab {out[0]} s)")


def bench_products(rounds, torch, jax, quick):
    """The MLP step's two large matrix products alone: each library's own BLAS.

    A float32 MLP step is these two products and a few passes over (128, 512)
    arrays, so no dispatch or fusion closes a gap that is in them.
    """
    rng = np.random.default_rng(5)
    width = 128 if quick else 512
    x = rng.normal(size=(128, 784)).astype(np.float32)
    w = rng.normal(size=(width, 784)).astype(np.float32)
    g = rng.normal(size=(128, width)).astype(np.float32)
    products = {"forward  x @ W.T": (lambda a, b, c: a @ b.T, (x, w)),
                "backward g.T @ x": (lambda a, b, c: c.T @ a, (x, g))}
    for label, (product, (a, b)) in products.items():
        contestants = {"difflab eager": lambda p=product, a=a, b=b: p(a, b, b)}
        if torch is not None:
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
            contestants["PyTorch eager"] = lambda p=product, a=ta, b=tb: p(a, b, b)
        if jax is not None:
            ja, jb = jax.numpy.asarray(a), jax.numpy.asarray(b)
            jitted = jax.jit(lambda a, b, p=product: p(a, b, b))
            contestants["JAX jit"] = lambda f=jitted, a=ja, b=jb: f(a, b).block_until_ready()
        times = interleaved(contestants, rounds, budget=0.05)
        print(f"\nmatrix product of the MLP step, {label} (float32, {a.shape} and {b.shape}; "
              f"difflab: NumPy's BLAS), ms")
        for name in contestants:
            print(row(name, times[name], 1e-3, " ms", times.cores.get(name)))


# ------------------------------------------------------------------ main


WORKLOADS = ("rosenbrock", "chain", "graph-break", "hessian-jacobian", "training", "products",
             "memory", "disk-cache")


def run_setting(threads: str, rounds: int, quick: bool, only: tuple = WORKLOADS,
                kinds: tuple = MODELS) -> None:
    from difflab.jit import fusion

    pinned = f", {pin_to_one_cpu()}" if threads == "1" else ""
    torch, jax = load_torch(threads), load_jax()
    print(f"=== threads: {threads}{pinned}   (fused kernels: {fusion.kernel_backend()})")
    print("PyTorch, torch.compile: " + (torch.__version__ if torch else
                                        "not installed, skipped (pip install torch)"))
    print("JAX: " + (jax.__version__ if jax else "not installed, skipped (pip install jax)"))
    if "rosenbrock" in only or "memory" in only:
        x, compiled, compiled_grad = bench_rosenbrock(rounds, torch, jax,
                                                      10**5 if quick else 10**6)
    if "chain" in only:
        bench_chain(rounds, torch, jax)
    if "graph-break" in only:
        for n in (16, 10**4 if quick else 10**5):
            bench_graph_break(rounds, torch, n)
    if "hessian-jacobian" in only:
        bench_hessian_jacobian(rounds, torch, jax)
    if "training" in only:
        bench_training(rounds, torch, jax, quick, kinds)
    if "products" in only:
        bench_products(rounds, torch, jax, quick)
    if "memory" in only:
        peak_memory(x, compiled, compiled_grad)
    if threads != "default" and "disk-cache" in only:
        disk_cache()


def one_thread_environment() -> dict:
    """This environment with BLAS, OpenMP, numba and XLA at 1 thread (as ``--threads both``)."""
    env = dict(os.environ, **dict.fromkeys(THREAD_VARIABLES, "1"))
    flags = env.get("XLA_FLAGS", "")
    if "--xla_cpu_multi_thread_eigen=false" not in flags:
        env["XLA_FLAGS"] = (flags + " --xla_cpu_multi_thread_eigen=false"
                            " intra_op_parallelism_threads=1").strip()
    return env


def one_thread_everywhere() -> bool:
    return all(os.environ.get(k) == v for k, v in one_thread_environment().items()
               if k in THREAD_VARIABLES or k == "XLA_FLAGS")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", choices=["both", "1", "default"], default="both")
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke test")
    parser.add_argument("--only", default=",".join(WORKLOADS),
                        help=f"comma-separated workloads to run (with --threads 1 or default), "
                             f"of: {', '.join(WORKLOADS)}")
    parser.add_argument("--models", default=",".join(MODELS),
                        help=f"the training steps to run (with --threads 1 or default), of: "
                             f"{', '.join(MODELS)}")
    args = parser.parse_args(argv)
    kinds = tuple(m.strip() for m in args.models.split(",") if m.strip())
    if [m for m in kinds if m not in MODELS]:
        parser.error(f"unknown models {[m for m in kinds if m not in MODELS]}: choose among "
                     f"{', '.join(MODELS)}")
    if args.threads == "both" and set(kinds) != set(MODELS):
        parser.error("--models needs --threads 1 or --threads default")
    only = tuple(w.strip() for w in args.only.split(",") if w.strip())
    unknown = [w for w in only if w not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workloads {unknown}: choose among {', '.join(WORKLOADS)}")
    if args.threads == "both" and set(only) != set(WORKLOADS):
        parser.error("--only needs --threads 1 or --threads default")
    if args.threads == "1" and not one_thread_everywhere():
        # (thread pools are sized at import: a process of its own, every library at 1)
        command = [sys.executable, os.path.abspath(__file__), "--threads", "1",
                   "--rounds", str(args.rounds), "--only", ",".join(only),
                   "--models", ",".join(kinds)] + (["--quick"] if args.quick else [])
        return subprocess.run(command, env=one_thread_environment()).returncode
    if args.threads != "both":
        run_setting(args.threads, args.rounds, args.quick, only, kinds)
        return 0
    rerun_at_both_thread_settings(os.path.abspath(__file__), args.rounds, args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
