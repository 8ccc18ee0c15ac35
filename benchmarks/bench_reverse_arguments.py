"""Reverse mode with many arguments: one recording for all of them, or one per argument.

    python benchmarks/bench_reverse_arguments.py            # k = 1, 3, 10, 30 arguments
    python benchmarks/bench_reverse_arguments.py --quick    # k = 1, 10

f(x_1, ..., x_k) = x_1 sin(x_1) + ... + x_k sin(x_k) (the cost harness's sum-sin
of k scalar arguments) and tanh-layer's Jacobian (m = 5 outputs) are
differentiated with respect to every argument three ways, side by side:

* ``one pass``: ``Reverse().grad(f, argnums=range(k))``: one recorded
  evaluation, one backward pass per output;
* ``per argument``: ``Reverse().grad(f, argnums=i)`` for each i in turn, what
  reverse mode used to do for ``argnums=range(k)`` (k recordings, k times the
  backward passes);
* ``forward``: ``Forward().grad(f, argnums=range(k))``, k passes.

Timed in interleaved rounds (each round times all three back to back, best of
three calls each); printed: the median over rounds, the range (min-max), and
the evaluations and backward passes of one call.  Results are checked equal
before timing.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time

import numpy as np

from difflab.compare.problems import problem
from difflab.diff.differentiators import Forward, Reverse


def _seconds(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def interleaved(calls: dict, rounds: int) -> dict:
    """Per name: the best-of-three time of each round, over ``rounds`` rounds."""
    times: dict = {name: [] for name in calls}
    for call in calls.values():
        call()  # warm up
    for _ in range(rounds):
        for name, call in calls.items():
            times[name].append(min(_seconds(call) for _ in range(3)))
    return times


def ways(transform: str, f, k: int) -> dict:
    """The three ways of differentiating f with respect to all k arguments."""
    reverse, forward = Reverse(), Forward()
    every = tuple(range(k))

    def one_pass(*xs):
        return getattr(reverse, transform)(f, argnums=every)(*xs, return_cost=True)

    def per_argument(*xs):
        results, evaluations, backward = [], 0, 0
        for i in every:
            r, c = getattr(reverse, transform)(f, argnums=i)(*xs, return_cost=True)
            results.append(r)
            evaluations, backward = evaluations + c.evaluations, backward + c.backward_passes
        return tuple(results), (evaluations, backward)

    def forward_mode(*xs):
        return getattr(forward, transform)(f, argnums=every)(*xs, return_cost=True)

    return {"one pass": one_pass, "per argument": per_argument, "forward": forward_mode}


def counts(cost) -> str:
    if isinstance(cost, tuple):
        return f"{cost[0]:>3} evals, {cost[1]:>3} backward"
    return f"{cost.evaluations:>3} evals, {cost.backward_passes or 0:>3} backward"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer sizes and rounds")
    parser.add_argument("--rounds", type=int, default=None)
    args = parser.parse_args()
    ks = (1, 10) if args.quick else (1, 3, 10, 30)
    rounds = args.rounds or (5 if args.quick else 11)
    print(f"median over {rounds} interleaved rounds (best of 3 calls each), range in brackets")
    for name, transform in (("sum-sin", "grad"), ("tanh-layer", "jacobian")):
        print(f"\n{transform} of {name} with respect to all k scalar arguments"
              + (" (m = 5 outputs)" if transform == "jacobian" else ""))
        print(f"{'k':>3}  {'way':<13} {'median':>9}  {'range':<21} {'counts':<22} "
              f"{'/ one pass':>10}")
        for k in ks:
            f, x0 = problem(name).make_scalars(k, 5)
            point = tuple(float(v) for v in x0)
            calls = ways(transform, f, k)
            results = {way: call(*point) for way, call in calls.items()}
            reference = np.asarray(results["forward"][0], dtype=float)
            for way, (value, _) in results.items():
                np.testing.assert_allclose(np.asarray(value, dtype=float), reference,
                                           rtol=1e-12, atol=1e-14, err_msg=way)
            times = interleaved({w: functools.partial(c, *point) for w, c in calls.items()},
                                rounds)
            base = statistics.median(times["one pass"])
            for way, t in times.items():
                median = statistics.median(t)
                span = f"[{min(t) * 1e3:.3f}-{max(t) * 1e3:.3f} ms]"
                print(f"{k:>3}  {way:<13} {median * 1e3:>6.3f} ms  {span:<21} "
                      f"{counts(results[way][1]):<22} {median / base:>9.2f}x")


if __name__ == "__main__":
    main()
