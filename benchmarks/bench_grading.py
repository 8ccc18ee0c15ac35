"""Time a student's ``difflab check`` and a grading, this checkout against another's.

Run:  python benchmarks/bench_grading.py [--assignment 02_custom_function]
      python benchmarks/bench_grading.py --compare-with PATH [--rounds 5]

Takes the reference notebook of an assignment of ``examples/course`` (a correct
submission: every test runs to the end) and times the two commands a course runs most,
each as a user starts it, in a fresh process (Python's and difflab's start-up count):

* ``difflab check NOTEBOOK``: a student's self-check with the visible tests;
* ``difflab grade NOTEBOOK --tests TESTS --out results.json``: the grading with every
  test (the score is checked: full marks, or the benchmark stops).

For each, the wall-clock seconds and the processor seconds of every process of the
command (the CLI, the grader's test process, the student's process: ``RUSAGE_CHILDREN``).
On a shared, loaded machine the processor seconds are the steadier gauge; the wall time
is what the student waits on a quiet one.  With ``--compare-with`` the same notebook and
tests (this checkout's files) are run by both checkouts, each in a fresh process, in
interleaved rounds (see ``checkouts.py``): median and range per checkout, and the ratio
of the medians.

Python's bytecode caches count too: with ``PYTHONDONTWRITEBYTECODE`` set and no
``__pycache__`` (a fresh source checkout), every process compiles difflab's modules
again; an installed difflab has them compiled.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
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


def timed(command: list[str], cwd: Path) -> tuple[float, float, subprocess.CompletedProcess]:
    """``(wall seconds, processor seconds of it and its children, the finished run)``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done


def grading_seconds(assignment: str) -> dict:
    """Seconds (wall, processor) of ``difflab check`` and ``difflab grade`` of the
    assignment's reference notebook, and the grade's score."""
    folder = COURSE / assignment
    notebook = folder / NOTEBOOKS[assignment]
    cli = [sys.executable, "-m", "difflab.cli"]
    with tempfile.TemporaryDirectory() as tmp:
        check_wall, check_cpu, done = timed([*cli, "check", str(notebook)], Path(tmp))
        if done.returncode != 0:
            raise SystemExit(f"difflab check of {assignment}'s reference solution failed "
                             f"(exit {done.returncode}):\n{done.stdout}{done.stderr}")
        out = Path(tmp) / "results.json"
        grade_wall, grade_cpu, done = timed(
            [*cli, "grade", str(notebook), "--tests", str(folder / "tests"), "--out", str(out),
             "--timeout", "20", "--memory-mb", "2048"], Path(tmp))
        if done.returncode != 0 or not out.is_file():
            raise SystemExit(f"difflab grade of {assignment}'s reference solution failed "
                             f"(exit {done.returncode}):\n{done.stdout}{done.stderr}")
        results = json.loads(out.read_text(encoding="utf-8"))
    if results["score"] != sum(t["max_score"] for t in results["tests"]):
        raise SystemExit(f"the reference solution of {assignment} did not score full marks: "
                         f"{results['score']}")
    return {"check_seconds": check_wall, "check_cpu": check_cpu,
            "grade_seconds": grade_wall, "grade_cpu": grade_cpu,
            "score": results["score"], "difflab_file": difflab.__file__}


METRICS = {
    "check wall (s)": lambda r: r["check_seconds"],
    "check cpu (s)": lambda r: r["check_cpu"],
    "grade wall (s)": lambda r: r["grade_seconds"],
    "grade cpu (s)": lambda r: r["grade_cpu"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assignment", default="02_custom_function", choices=sorted(NOTEBOOKS))
    parser.add_argument("--json", action="store_true", help="print one timing as JSON")
    parser.add_argument("--compare-with", metavar="PATH", default=None,
                        help="another difflab checkout: time both, interleaved rounds")
    parser.add_argument("--rounds", type=int, default=5, help="rounds for --compare-with")
    args = parser.parse_args()
    if args.json:
        print(json.dumps(grading_seconds(args.assignment)))
        return
    if args.compare_with:
        import checkouts

        checkouts.compare(os.path.abspath(__file__), ["--json", "--assignment", args.assignment],
                          args.compare_with, args.rounds,
                          {f"{name} {args.assignment}": read for name, read in METRICS.items()})
        return
    result = grading_seconds(args.assignment)
    print(f"{args.assignment}'s reference solution (score {result['score']:g}):")
    for name, read in METRICS.items():
        print(f"  {name:<22} {read(result):7.2f}")


if __name__ == "__main__":
    main()
