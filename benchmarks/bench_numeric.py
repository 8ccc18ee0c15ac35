"""Numeric differentiation against 50-digit mpmath references, beside numdifftools.

Run:  python benchmarks/bench_numeric.py

For every function of the test suite's accuracy functions (tests/diff/diff_suite.py) and
the logistic map's 7th iterate at 0.31, prints the relative error (max-norm over the
gradient, against mpmath.diff at 50 digits) and the function evaluations of

* difflab's central differences (automatic step), Richardson and adaptive schemes,
* numdifftools' adaptive ``Derivative`` / ``Gradient`` (default settings), when installed
  (``pip install numdifftools``); otherwise the column is left out, with a message.

The last lines give each method's worst error and its total evaluations.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "diff"))

from diff_suite import CASES, Case, logistic_map, reference_gradient  # noqa: E402

from difflab.diff import grad  # noqa: E402

SCHEMES = ("central", "richardson", "adaptive")


def relative_error(value: np.ndarray, ref: np.ndarray) -> float:
    return float(np.max(np.abs(np.asarray(value) - ref)) / np.max(np.abs(ref)))


def numdifftools_or_none():
    try:
        import numdifftools
    except ImportError:
        print("numdifftools is not installed (pip install numdifftools): its column is "
              "left out.\n", file=sys.stderr)
        return None
    return numdifftools


def run_numdifftools(nd, case: Case, argnum: int) -> tuple[np.ndarray, int]:
    calls = [0]

    def g(t):
        calls[0] += 1
        args = list(case.args)
        args[argnum] = t
        return case.f(*args)

    x = case.args[argnum]
    value = (nd.Derivative(g) if np.ndim(x) == 0 else nd.Gradient(g))(x)
    return np.asarray(value), calls[0]


def main() -> None:
    nd = numdifftools_or_none()
    cases = list(CASES) + [Case("logistic_map_7 (x=0.31)", logistic_map(7), (0.31,))]
    methods = list(SCHEMES) + (["numdifftools"] if nd else [])
    header = f"{'function':<26}" + "".join(f"{m:>22}" for m in methods)
    print(header)
    print(f"{'':<26}" + "".join(f"{'rel. error   evals':>22}" for _ in methods))
    worst = dict.fromkeys(methods, 0.0)
    total = dict.fromkeys(methods, 0)
    warnings.simplefilter("ignore")
    for case in cases:
        for argnum in range(len(case.args)):
            ref = reference_gradient(case.f, case.args, argnum)
            cells = []
            for m in methods:
                with np.errstate(all="ignore"):
                    if m == "numdifftools":
                        value, evaluations = run_numdifftools(nd, case, argnum)
                    else:
                        value, cost = grad(case.f, method="numeric", scheme=m,
                                           argnums=argnum)(*case.args, return_cost=True)
                        evaluations = cost.evaluations
                error = relative_error(value, ref)
                worst[m] = max(worst[m], error)
                total[m] += evaluations
                cells.append(f"{error:>12.2e} {evaluations:>8d}")
            name = case.name + (f" [arg {argnum}]" if len(case.args) > 1 else "")
            print(f"{name:<26}" + "".join(f"{c:>22}" for c in cells))
    print()
    print(f"{'worst relative error':<26}" + "".join(f"{worst[m]:>22.2e}" for m in methods))
    print(f"{'total evaluations':<26}" + "".join(f"{total[m]:>22d}" for m in methods))


if __name__ == "__main__":
    main()
