"""Per-example gradients: ``vmap(grad(loss))`` against a Python loop over the examples.

    python benchmarks/bench_vmap.py                # default threads
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_vmap.py
    python benchmarks/bench_vmap.py --json

The workload is the worked example of docs/guides/func.md: an MLP
(20-64-64-1, tanh) and the mean squared error of one example, differentiated
with respect to every parameter, for each example of a batch.

* ``loop``: one forward and one backward pass per example (``functional_call``
  and ``difflab.func.grad``), a Python loop over the batch;
* ``loop_backward``: the same loop written the classic way, ``model(x)``,
  ``loss.backward()`` and a copy of every ``.grad``;
* ``vmap``: ``vmap(grad(loss), in_dims=(None, 0, 0))``: one batched forward
  and one backward pass for the whole batch.

Rounds alternate the three; the report gives each one's median and range in
ms and the speed-up of vmap over the loop.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import difflab as dl
from difflab.func import functional_call, grad, vmap


def workload(batch: int) -> dict:
    dl.manual_seed(0)
    model = dl.nn.Sequential(dl.nn.Linear(20, 64), dl.nn.Tanh(), dl.nn.Linear(64, 64),
                             dl.nn.Tanh(), dl.nn.Linear(64, 1)).double()
    params = {k: v.detach() for k, v in model.named_parameters()}
    xs, ys = dl.randn(batch, 20, dtype=dl.float64), dl.randn(batch, 1, dtype=dl.float64)

    def loss(p, x, y):
        return dl.nn.functional.mse_loss(functional_call(model, p, (x,)), y)

    per_example = vmap(grad(loss), in_dims=(None, 0, 0))
    one = grad(loss)

    def run_vmap():
        return per_example(params, xs, ys)

    def run_loop():
        return [one(params, xs[n], ys[n]) for n in range(batch)]

    def run_backward():
        out = []
        for n in range(batch):
            model.zero_grad()
            dl.nn.functional.mse_loss(model(xs[n]), ys[n]).backward()
            out.append({k: p.grad.clone() for k, p in model.named_parameters()})
        return out

    return {"vmap": run_vmap, "loop": run_loop, "loop_backward": run_backward}


def measure(batch: int, rounds: int) -> dict:
    runs = workload(batch)
    for fn in runs.values():
        fn()  # warm up
    times: dict = {name: [] for name in runs}
    for _ in range(rounds):
        for name, fn in runs.items():
            start = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - start) * 1e3)
    return {name: {"median_ms": statistics.median(t), "min_ms": min(t), "max_ms": max(t)}
            for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, nargs="+", default=[16, 128, 512])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = {b: measure(b, args.rounds) for b in args.batches}
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f"{'batch':>6} {'method':>14} {'median ms':>10} {'range ms':>18} {'loop/vmap':>10}")
    for batch, rows in report.items():
        for name, r in rows.items():
            ratio = rows["loop"]["median_ms"] / r["median_ms"] if name == "vmap" else None
            print(f"{batch:>6} {name:>14} {r['median_ms']:>10.2f} "
                  f"{r['min_ms']:>8.2f} - {r['max_ms']:<8.2f} "
                  f"{'' if ratio is None else f'{ratio:.1f}x':>10}")


if __name__ == "__main__":
    main()
