"""Time to grade a normal submission: this grader against another checkout's.

Run:  python benchmarks/bench_grading.py [--assignment 02_custom_function]
      python benchmarks/bench_grading.py --compare-with PATH [--rounds 5]

Grades the reference notebook of an assignment of ``examples/course`` (a correct
submission: every test runs to the end) with its tests, and prints the seconds
``grade()`` took, from the call to the results.  With ``--compare-with`` the same
submission and tests (this checkout's files) are graded by both checkouts' graders,
each in a fresh process, in interleaved rounds (see ``checkouts.py``): median and range
per checkout, and the ratio of the medians.

The sandboxed grader pays for a third process (the student's) and for the data-only
calls into it; compare with the grader that imported student code into the test
process to see what that costs.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import difflab

COURSE = Path(__file__).resolve().parent.parent / "examples" / "course" / "assignments"
NOTEBOOKS = {
    "01_dual_rule": "dual_rules.ipynb",
    "02_custom_function": "custom_function.ipynb",
    "03_layer": "linear_layer.ipynb",
}


def grading_seconds(assignment: str) -> dict:
    """Seconds of one ``grade()`` of the assignment's reference notebook, and its score."""
    from difflab.grading import grade

    folder = COURSE / assignment
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        results = grade(folder / NOTEBOOKS[assignment], folder / "tests",
                        Path(tmp) / "results.json", timeout=20, memory_mb=2048)
        seconds = time.perf_counter() - start
    if results["score"] != sum(t["max_score"] for t in results["tests"]):
        raise SystemExit(f"the reference solution of {assignment} did not score full marks: "
                         f"{results['score']}")
    return {"seconds": seconds, "score": results["score"], "difflab_file": difflab.__file__}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assignment", default="02_custom_function", choices=sorted(NOTEBOOKS))
    parser.add_argument("--json", action="store_true", help="print one timing as JSON")
    parser.add_argument("--compare-with", metavar="PATH", default=None,
                        help="another difflab checkout: grade with both, interleaved rounds")
    parser.add_argument("--rounds", type=int, default=5, help="rounds for --compare-with")
    args = parser.parse_args()
    if args.json:
        print(json.dumps(grading_seconds(args.assignment)))
        return
    if args.compare_with:
        import checkouts

        checkouts.compare(os.path.abspath(__file__), ["--json", "--assignment", args.assignment],
                          args.compare_with, args.rounds,
                          {f"grade {args.assignment} reference (s)": lambda r: r["seconds"]})
        return
    result = grading_seconds(args.assignment)
    print(f"graded {args.assignment}'s reference solution in {result['seconds']:.2f} s "
          f"(score {result['score']:g})")


if __name__ == "__main__":
    main()
