"""Training-step benchmarks of difflab.nn, side by side with PyTorch (CPU) when installed.

    python benchmarks/bench_nn.py [--repeats 15] [--device cpu|cuda]
    python benchmarks/bench_nn.py --compare-with ../other-checkout --rounds 5
        (difflab here against another checkout, in interleaved rounds; see checkouts.py)

1. One SGD-with-momentum step (zero_grad, forward, cross-entropy, backward,
   step) of an MLP 784-1024-1024-10 on a batch of 512, float32.
2. One such step of a small CNN on 1x28x28 images (conv 16 3x3, max-pool,
   conv 32 3x3, max-pool, linear), batch 64.

Prints the median of ``--repeats`` timed steps (after warm-up) per library
and the ratio difflab / PyTorch.  Torch is not a dependency: without it only
difflab's numbers are printed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np


def median_ms(step, repeats: int, warmup: int = 3, sync=lambda: None) -> float:
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


def build_models(nn, make):
    """The MLP and the CNN, with ``nn`` either framework's module namespace (the same
    layer names), each handed with its batch to ``make``, which returns a training step."""
    rng = np.random.default_rng(0)
    mlp = make(nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                             nn.Linear(1024, 10)),
               rng.standard_normal((512, 784)).astype(np.float32), rng.integers(0, 10, 512))
    cnn = make(nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Flatten(), nn.Linear(32 * 7 * 7, 10)),
               rng.standard_normal((64, 1, 28, 28)).astype(np.float32), rng.integers(0, 10, 64))
    return mlp, cnn


def difflab_steps(device: str):
    import difflab as dl
    import difflab.nn as nn
    import difflab.nn.functional as F
    import difflab.optim as optim

    def make(model, x, y):
        model.to(device)
        x, y = dl.tensor(x).to(device), dl.tensor(y).to(device)
        opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

        def step():
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()

        return step

    mlp, cnn = build_models(nn, make)
    sync = lambda: None  # noqa: E731
    if device != "cpu":
        import cupy

        sync = cupy.cuda.Device().synchronize
    return mlp, cnn, sync


def torch_steps(device: str):
    try:
        import torch
    except ImportError:
        return None
    torch.manual_seed(0)
    nn = torch.nn

    def make(model, x, y):
        model.to(device)
        x = torch.tensor(x, device=device)
        y = torch.tensor(y, device=device)
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        loss_fn = nn.CrossEntropyLoss()

        def step():
            opt.zero_grad()
            loss_fn(model(x), y).backward()
            opt.step()

        return step

    mlp, cnn = build_models(nn, make)
    sync = torch.cuda.synchronize if device != "cpu" else (lambda: None)
    return mlp, cnn, sync, torch.__version__, torch.get_num_threads()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--json", action="store_true", help="print difflab's times as JSON")
    parser.add_argument("--compare-with", metavar="PATH",
                        help="another difflab checkout: time both in interleaved rounds")
    parser.add_argument("--rounds", type=int, default=5, help="rounds for --compare-with")
    args = parser.parse_args(argv)
    if args.compare_with:
        import os

        import checkouts

        checkouts.compare(
            os.path.abspath(__file__),
            ["--json", "--repeats", str(args.repeats), "--device", args.device],
            args.compare_with, args.rounds,
            {"MLP step (ms)": lambda r: r["mlp_ms"], "CNN step (ms)": lambda r: r["cnn_ms"]})
        return 0
    ours = difflab_steps(args.device)
    if args.json:
        import json

        import difflab

        print(json.dumps({"difflab_file": difflab.__file__,
                          "mlp_ms": median_ms(ours[0], args.repeats, sync=ours[2]),
                          "cnn_ms": median_ms(ours[1], args.repeats, sync=ours[2])}))
        return 0
    theirs = torch_steps(args.device)
    names = ["MLP 784-1024-1024-10, batch 512, SGD momentum step",
             "small CNN (2 conv + 2 pool + linear), batch 64, SGD momentum step"]
    targets = [1.05, 3.0]
    header = f"{'benchmark':<68} {'difflab ms':>10} {'torch ms':>9} {'ratio':>6} {'target':>7}"
    print(f"device: {args.device}; median of {args.repeats} steps")
    if theirs is not None:
        print(f"PyTorch {theirs[3]} with {theirs[4]} threads")
    else:
        print("PyTorch not installed: difflab only", file=sys.stderr)
    print(header)
    for i, name in enumerate(names):
        ms = median_ms(ours[i], args.repeats, sync=ours[2])
        if theirs is None:
            print(f"{name:<68} {ms:>10.1f} {'-':>9} {'-':>6} {'-':>7}")
            continue
        ref = median_ms(theirs[i], args.repeats, sync=theirs[2])
        print(f"{name:<68} {ms:>10.1f} {ref:>9.1f} {ms / ref:>6.2f} {'<=' + str(targets[i]):>7}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
