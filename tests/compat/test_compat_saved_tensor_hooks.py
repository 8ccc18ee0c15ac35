"""examples/pytorch/saved_tensor_hooks.py, PyTorch's tutorial "Hooks for saved tensors":
what it prints on difflab, and (with PyTorch at hand) the same lines as PyTorch's but
those the libraries choose differently (which values an operation saves, and so the
order of the packing and how many; the program's docstring says so)."""

from __future__ import annotations

import subprocess

from tests.compat.test_compat_programs import PROGRAMS, run
from tests.compat.test_compat_tutorial_programs import torch_python

NAME = "saved_tensor_hooks.py"
# (difflab's Linear keeps its weight even when its input needs no gradient, its
# cross-entropy keeps the target twice and per-row weights; PyTorch's packs 11 values,
# 147204 bytes)
COUNTS = "saved tensors packed: 12 bytes: 179072"


def test_the_saved_tensor_hooks_tutorial_runs():
    out = run(NAME)
    lines = out.splitlines()
    assert [line.split(" tensor")[0] for line in lines[:4]] == ["Packing", "Packing",
                                                                "Unpacking", "Unpacking"]
    assert "a.grad: tensor([2., 2., 2., 2., 2.])" in lines
    checks = [line for line in lines if line.endswith((": True", ": False"))]
    assert len(checks) == 10 and all(line.endswith("True") for line in checks), checks
    assert "values in storage: 2" in lines and "files left after backward: 0" in lines
    assert COUNTS in lines


def test_the_tutorial_prints_pytorchs_lines():
    python = torch_python()
    source = (PROGRAMS / NAME).read_text(encoding="utf-8")
    as_pytorch = source.replace("import difflab as torch", "import torch").replace(
        "import difflab.nn as nn", "import torch.nn as nn")
    done = subprocess.run([python, "-W", "ignore", "-"], input=as_pytorch,
                          capture_output=True, text=True, cwd=PROGRAMS, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    theirs, ours = done.stdout.splitlines(), run(NAME).splitlines()
    assert len(ours) == len(theirs)
    assert sorted(ours[:2]) == sorted(theirs[:2]) and sorted(ours[2:4]) == sorted(theirs[2:4])
    differs = [(a, b) for a, b in zip(ours[4:], theirs[4:]) if a != b]
    assert differs == [(COUNTS, "saved tensors packed: 11 bytes: 147204")]
