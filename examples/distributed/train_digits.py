"""Train the digits MLP data-parallel on N ranks; the weights do not depend on N.

    python -m difflab.distributed.run -n 4 examples/distributed/train_digits.py --save w4.dl
    python examples/distributed/train_digits.py --save w1.dl          # alone: a world of one
    python examples/distributed/train_digits.py --compare w1.dl w4.dl

Every rank holds the whole model and sees 1/N of every batch.  The global
batch (``--batch-size``, split evenly over the ranks) is the same for every
N: the DistributedSampler hands rank r the samples perm[r], perm[r + N], ...
of one seeded permutation, so the k-th batches of the N ranks together are
perm[kB : (k+1)B], exactly the k-th batch of a single process.  DDP averages
the ranks' gradients, hence every N takes the same steps, to rounding.

Rank 0 prints the time of each epoch and, at the end, the largest difference
between its weights and every other rank's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import difflab as dl
import difflab.distributed as dist
import difflab.nn as nn
import difflab.nn.functional as F
from difflab.data import DataLoader, DistributedSampler, TensorDataset, load_digits
from difflab.nn.parallel import DistributedDataParallel as DDP


def build_model(dtype) -> nn.Module:
    dl.manual_seed(0)
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)).to(dtype)


def train(args: argparse.Namespace) -> None:
    dist.init_process_group()  # "mpi" when mpi4py is installed, else "single"
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.batch_size % world:
        raise SystemExit(f"--batch-size {args.batch_size} must be a multiple of the "
                         f"{world} ranks")
    dtype = getattr(dl, args.dtype)
    x, y = load_digits(train=True, flatten=True)
    dataset = TensorDataset(x.to(dtype), y)
    sampler = DistributedSampler(dataset, shuffle=True, seed=0)
    # drop_last: every N then runs the same full global batches
    loader = DataLoader(dataset, batch_size=args.batch_size // world, sampler=sampler,
                        drop_last=True)
    model = DDP(build_model(dtype))
    opt = dl.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)

    epoch_times = []
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        dist.barrier()
        start = time.perf_counter()
        for xb, yb in loader:
            opt.zero_grad()
            F.cross_entropy(model(xb), yb).backward()
            opt.step()
        dist.barrier()
        epoch_times.append(time.perf_counter() - start)
        if rank == 0:
            print(f"epoch {epoch + 1}: {epoch_times[-1] * 1e3:.0f} ms", file=sys.stderr)

    spread = weights_spread(model.module)
    if rank == 0:
        x_test, y_test = load_digits(train=False, flatten=True)
        with dl.no_grad():
            accuracy = (model(x_test.to(dtype)).argmax(1) == y_test).float().mean().item()
        print(f"ranks: {world}  time per epoch: median {statistics.median(epoch_times) * 1e3:.0f}"
              f" ms (range {min(epoch_times) * 1e3:.0f}-{max(epoch_times) * 1e3:.0f})  "
              f"test accuracy: {accuracy:.4f}  "
              f"largest weight difference between ranks: {spread:.1e}")
        if args.save:
            dl.save(model.module.state_dict(), args.save)
    dist.destroy_process_group()


def weights_spread(model: nn.Module) -> float:
    """The largest |w_rank - w_rank0| over all weights and ranks (0 on one rank)."""
    spread = dl.zeros(1, dtype=dl.float64)
    for p in model.parameters():
        theirs = p.detach().clone()
        dist.broadcast(theirs, src=0)
        gap = (p.detach() - theirs).abs().max().to(dl.float64).reshape(1)
        spread = dl.maximum(spread, gap)
    dist.all_reduce(spread, op=dist.ReduceOp.MAX)
    return spread.item()


def compare(paths: list[str]) -> None:
    """Print the largest weight difference of each saved run from the first one."""
    first = dl.load(paths[0])
    for path in paths[1:]:
        other = dl.load(path)
        gap = max((first[k] - other[k]).abs().max().item() for k in first)
        print(f"{paths[0]} vs {path}: largest weight difference {gap:.1e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=64, help="the global batch")
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--dtype", default="float64", choices=["float32", "float64"])
    parser.add_argument("--save", help="write the final weights here (rank 0)")
    parser.add_argument("--compare", nargs="+", metavar="WEIGHTS",
                        help="compare saved weights instead of training")
    args = parser.parse_args()
    if args.compare:
        compare(args.compare)
    else:
        train(args)


if __name__ == "__main__":
    main()
