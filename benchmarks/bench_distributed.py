"""Data-parallel training of the digits MLP on 1, 2, 4 ranks: time per step, communication share.

    python benchmarks/bench_distributed.py [--ranks 1 2 4] [--rounds 3] [--steps 40]
                                           [--batch-size 256] [--hidden 128] [--dtype float32]

Each job is started with ``python -m difflab.distributed.run -n N`` (one BLAS
thread per rank) and trains the MLP 64-H-10 with DistributedDataParallel on
the same global batch (split over the ranks: strong scaling).  In each job,
steps with gradient averaging alternate with steps under ``no_sync()`` (no
communication at all), so both are timed under the same conditions:

* time per step: the median of the synchronised steps (zero_grad, forward,
  backward with the bucketed all-reduce, SGD step);
* communication share: 1 - median(no_sync step) / median(synchronised step),
  the part of a step that averaging the gradients adds.

The jobs run in interleaved rounds (1, 2, 4, 1, 2, 4, ...) so that a busy
moment of the machine hits every rank count alike; the table shows the
median over the rounds and their range.  Launch time is not counted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.abspath(__file__)


def worker(args: argparse.Namespace) -> None:
    """One rank: time synchronised and no_sync steps, alternating."""
    import difflab as dl
    import difflab.distributed as dist
    import difflab.nn as nn
    import difflab.nn.functional as F
    from difflab.data import load_digits
    from difflab.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    dtype = getattr(dl, args.dtype)
    x, y = load_digits(train=True, flatten=True)
    local = args.batch_size // world
    xb, yb = x[rank * local:(rank + 1) * local].to(dtype), y[rank * local:(rank + 1) * local]
    dl.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(64, args.hidden), nn.ReLU(),
                              nn.Linear(args.hidden, 10)).to(dtype))
    opt = dl.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def step() -> None:
        opt.zero_grad()
        F.cross_entropy(model(xb), yb).backward()
        opt.step()

    synced, alone = [], []
    for i in range(args.warmup + args.steps):
        dist.barrier()  # every rank starts the step together
        start = time.perf_counter()
        if i % 2:
            with model.no_sync():
                step()
        else:
            step()
        elapsed = time.perf_counter() - start
        if i >= args.warmup:
            (alone if i % 2 else synced).append(elapsed)
    # A step ends on all ranks when the slowest is done: take the largest median.
    medians = dl.tensor([statistics.median(synced), statistics.median(alone)],
                        dtype=dl.float64)
    dist.all_reduce(medians, op=dist.ReduceOp.MAX)
    if rank == 0:
        print(json.dumps({"ranks": world, "step": medians[0].item(),
                          "no_sync": medians[1].item()}))
    dist.destroy_process_group()


def launch(n: int, args: argparse.Namespace) -> dict:
    command = [sys.executable, "-m", "difflab.distributed.run", "-n", str(n), HERE, "--worker",
               "--steps", str(args.steps), "--warmup", str(args.warmup),
               "--batch-size", str(args.batch_size), "--hidden", str(args.hidden),
               "--dtype", args.dtype]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        raise SystemExit(f"the {n}-rank job failed:\n{result.stdout}\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=40, help="timed steps per job")
    parser.add_argument("--warmup", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=256, help="the global batch")
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    for n in args.ranks:
        if args.batch_size % n:
            raise SystemExit(f"--batch-size {args.batch_size} must be a multiple of {n} ranks")
    runs: dict = {n: [] for n in args.ranks}
    for _ in range(args.rounds):
        for n in args.ranks:
            runs[n].append(launch(n, args))
    print(f"digits MLP 64-{args.hidden}-10, global batch {args.batch_size}, {args.dtype}, "
          f"{os.cpu_count()} CPUs; median of {args.rounds} rounds (range)")
    print(f"{'ranks':>5}  {'ms/step':>22}  {'speed-up':>8}  {'communication share':>22}")
    base = statistics.median(r["step"] for r in runs[args.ranks[0]])
    for n in args.ranks:
        steps = [r["step"] * 1e3 for r in runs[n]]
        shares = [max(0.0, 1 - r["no_sync"] / r["step"]) * 100 for r in runs[n]]
        median = statistics.median(steps)
        print(f"{n:>5}  {median:8.2f} ({min(steps):6.2f}-{max(steps):6.2f})  "
              f"{base * 1e3 / median:8.2f}  {statistics.median(shares):6.0f}% "
              f"({min(shares):3.0f}-{max(shares):3.0f}%)")


if __name__ == "__main__":
    main()
