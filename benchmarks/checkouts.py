"""Time two checkouts of difflab side by side: ``--compare-with PATH`` of the benchmarks.

A benchmark script runs itself in a fresh process once per checkout and per
round, with ``PYTHONPATH`` pointing at that checkout, and reads the numbers
it prints as JSON.  The rounds alternate the order (A B, B A, A B, ...), so a
slow moment of a shared machine lands on both checkouts alike; the report
gives each checkout's median and range over the rounds, and the ratio of the
medians.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

THIS_CHECKOUT = Path(__file__).resolve().parent.parent


def check_checkout(path: str) -> Path:
    """The root of another checkout (it must hold ``difflab/__init__.py``)."""
    root = Path(path).expanduser().resolve()
    if not (root / "difflab" / "__init__.py").is_file():
        raise SystemExit(f"--compare-with {path}: no difflab/__init__.py there; give the "
                         f"root of a difflab checkout (the folder that holds difflab/).")
    return root


def run_child(script: str, args: list[str], root: Path) -> dict:
    """Run ``script args`` with ``root``'s difflab first on the path; its JSON output."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(root), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, script, *args], capture_output=True, text=True,
                          env=env, cwd=root)
    if done.returncode != 0:
        raise SystemExit(f"the benchmark failed with {root}'s difflab:\n{done.stderr}")
    result = json.loads(done.stdout)
    imported = Path(result["difflab_file"]).resolve()
    if root not in imported.parents:  # an installed difflab would make the race a sham
        raise SystemExit(f"expected difflab from {root}, but the benchmark imported {imported}")
    return result


def compare(script: str, args: list[str], other: str, rounds: int,
            metrics: dict[str, Callable[[dict], float]]) -> None:
    """Print each metric's median [min, max] over ``rounds`` for both checkouts."""
    roots = {"this": THIS_CHECKOUT, "other": check_checkout(other)}
    values: dict = {label: {name: [] for name in metrics} for label in roots}
    for r in range(rounds):
        order = ["this", "other"] if r % 2 == 0 else ["other", "this"]
        for label in order:
            result = run_child(script, args, roots[label])
            for name, read in metrics.items():
                values[label][name].append(read(result))
        print(f"round {r + 1}/{rounds} done", file=sys.stderr)
    print(f"this  = {roots['this']}\nother = {roots['other']}\n"
          f"{rounds} interleaved rounds; median [min, max]; ratio = this / other (medians)")
    for name in metrics:
        cells = []
        for label in roots:
            v = values[label][name]
            cells.append(f"{label} {statistics.median(v):9.3f} [{min(v):.3f}, {max(v):.3f}]")
        ratio = statistics.median(values["this"][name]) / statistics.median(values["other"][name])
        print(f"{name:<34} " + "   ".join(cells) + f"   ratio {ratio:.3f}")
