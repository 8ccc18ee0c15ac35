"""Cost of a gradient as n grows: each method's time relative to f, and its growth exponent.

Run:  python benchmarks/bench_cost.py [--n 10,100,1000,10000] [--plot cost.png]

Prints the table of :func:`difflab.compare.cost` (gradient of sum_i x_i sin(x_i))
and, per method, the ratio time(gradient) / time(f) at the largest n.  Forward
mode and finite differences grow with n; reverse mode stays a small multiple of f.
"""

from __future__ import annotations

import argparse

from difflab.compare import cost


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", default="10,100,1000,10000", help="input sizes")
    parser.add_argument("--function", default="sum-sin", help="sum-sin or logsumexp")
    parser.add_argument("--max-seconds", type=float, default=20.0)
    parser.add_argument("--plot", default=None, help="write the plot here (.png/.svg)")
    args = parser.parse_args()
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
