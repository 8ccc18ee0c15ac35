"""Cost of a gradient as n grows: each method's time relative to f, and its growth exponent.

Run:  python benchmarks/bench_cost.py [--n 10,100,1000,10000] [--plot cost.png]

Prints the table of :func:`difflab.compare.cost` (gradient of sum_i x_i sin(x_i))
and, per method, the ratio time(gradient) / time(f) at the largest n.  Forward
mode and finite differences grow with n; reverse mode stays a small multiple of f.

``--compare-with PATH`` times forward mode on the two problems of the cost
harness (the gradient of ``sum-sin`` at n = 1000 and the Jacobian of
``tanh-layer`` at n = m = 100) with this checkout and another one, in
interleaved rounds of fresh processes (see ``checkouts.py``).
"""

from __future__ import annotations

import argparse
import json
import os

import difflab
from difflab.compare import cost

# What --compare-with times: forward mode on both problems of `difflab cost`.
FORWARD_CASES = {"sum-sin": {"ns": [1000]}, "tanh-layer": {"ns": [100], "ms": [100]}}


def forward_times() -> dict:
    """Seconds of one forward-mode gradient/Jacobian for each of FORWARD_CASES."""
    times = {}
    for function, sizes in FORWARD_CASES.items():
        report = cost(function, methods=["forward"], memory=False, min_time=0.2, **sizes)
        times[function] = report.records[0]["seconds"]
    return {"forward_seconds": times, "difflab_file": difflab.__file__}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", default="10,100,1000,10000", help="input sizes")
    parser.add_argument("--function", default="sum-sin", help="sum-sin or logsumexp")
    parser.add_argument("--max-seconds", type=float, default=20.0)
    parser.add_argument("--plot", default=None, help="write the plot here (.png/.svg)")
    parser.add_argument("--forward-json", action="store_true",
                        help="print only forward mode's times on both problems, as JSON")
    parser.add_argument("--compare-with", metavar="PATH", default=None,
                        help="another difflab checkout: time forward mode with both, in "
                             "interleaved rounds")
    parser.add_argument("--rounds", type=int, default=5, help="rounds for --compare-with")
    args = parser.parse_args()
    if args.forward_json:
        print(json.dumps(forward_times()))
        return
    if args.compare_with:
        import checkouts

        checkouts.compare(
            os.path.abspath(__file__), ["--forward-json"], args.compare_with, args.rounds,
            {f"forward mode, {name} (ms)": (lambda r, name=name: 1e3 * r["forward_seconds"][name])
             for name in FORWARD_CASES})
        return
    ns = [int(n) for n in args.n.split(",")]
    report = cost(args.function, ns, max_seconds=args.max_seconds)
    print(report)
    print()
    for method in dict.fromkeys(r["method"] for r in report.records):
        rows = [r for r in report.records if r["method"] == method]
        last = rows[-1]
        print(f"{method:>9}: time / time(f) = {last['ratio']:10.1f} at n = {last['n']:>6}; "
              f"time ~ n^{report.meta['exponents'][method]:.2f}")
    if args.plot:
        report.save_plot(args.plot)


if __name__ == "__main__":
    main()
