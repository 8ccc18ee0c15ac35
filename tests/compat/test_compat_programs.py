"""PyTorch teaching programs, written for PyTorch, run on difflab with only the import changed.

Each program in examples/pytorch/ starts with ``import difflab as torch`` and is
otherwise what a PyTorch tutorial or course would write (the tutorials' cubic fits of
sin(x), the 60-minute blitz, a character-level MLP language model).  They run in
their own process, as a student would run them; the checks read what they print.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "examples" / "pytorch"
pytestmark = pytest.mark.slow


def run(name: str, source: str | None = None) -> str:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    path = PROGRAMS / name
    text = path.read_text(encoding="utf-8")
    assert re.search(r"^import difflab as torch$", text, re.M), "programs import difflab as torch"
    assert "import torch" not in text.replace("import difflab as torch", "")
    command = [sys.executable, str(path)] if source is None else [sys.executable, "-"]
    done = subprocess.run(command, input=source, capture_output=True, text=True, env=env,
                          cwd=PROGRAMS, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def final_loss(output: str) -> float:
    return float(re.search(r"^final loss: (\S+)$", output, re.M).group(1))


def least_squares_loss() -> float:
    """The smallest Σ (p(x) - sin x)² over cubics p on the programs' 2000 points: what
    every correct fit converges to (PyTorch's tutorials end near it too)."""
    x = np.linspace(-math.pi, math.pi, 2000).astype(np.float32).astype(np.float64)
    features = np.stack([x ** 0, x, x ** 2, x ** 3], axis=1)
    _, residual, *_ = np.linalg.lstsq(features, np.sin(x), rcond=None)
    return float(residual[0])


@pytest.mark.parametrize("name", ["fit_tensors.py", "fit_autograd.py",
                                  "fit_custom_function.py", "fit_nn.py", "fit_optim.py",
                                  "fit_module.py"])
def test_the_cubic_fits_reach_the_optimum_within_ten_percent(name):
    output = run(name)
    best = least_squares_loss()
    assert best <= final_loss(output) * 1.0001 <= 1.10 * best * 1.0001, output[-500:]
    assert "Result: y = " in output
    if "dtype:" in output:  # float32 data stays float32 (no silent float64)
        assert "dtype: difflab.float32" in output


def test_the_legendre_fit_finds_the_tutorials_coefficients():
    output = run("fit_custom_function.py")
    b, c, d = (float(v) for v in re.search(
        r"\+ (\S+) \* P3\((\S+) \+ (\S+) x\)", output).groups())
    assert b == pytest.approx(-2.2085, abs=2e-3) and d == pytest.approx(0.2555, abs=1e-3)
    assert abs(c) < 1e-6


def test_the_dynamic_net_learns():
    # The tutorial trains 30000 steps; a tenth shows the same thing in the suite's time.
    source = (PROGRAMS / "fit_dynamic.py").read_text(encoding="utf-8")
    assert "range(30000)" in source
    output = run("fit_dynamic.py", source.replace("range(30000)", "range(3000)"))
    losses = [float(line.split()[1]) for line in output.splitlines() if line[:1].isdigit()]
    assert math.isfinite(final_loss(output)) and final_loss(output) < losses[0]


def test_blitz_tensors():
    output = run("blitz_tensors.py")
    assert "Shape of tensor: difflab.Size([4, 3])" not in output
    assert "Shape of tensor: difflab.Size([3, 4])" in output
    assert "Datatype of tensor: difflab.float32" in output
    assert "12.0 <class 'float'>" in output


def test_blitz_autograd():
    output = run("blitz_autograd.py")
    assert "tensor([True, True])" in output
    assert "Does `a` require gradients?: False" in output
    assert "Does `b` require gradients?: True" in output
    assert "AddBackward0" in output


def test_blitz_neural_networks():
    output = run("blitz_neural_networks.py")
    assert "difflab.Size([6, 1, 5, 5])" in output
    assert "MseLossBackward0" in output
    first = float(re.search(r"^first loss: (\S+)$", output, re.M).group(1))
    assert final_loss(output) < first


def test_char_mlp_language_model():
    output = run("char_mlp.py")
    assert final_loss(output) < 2.0 < math.log(27)  # far below guessing (log 27 = 3.30)
    assert "dtype: difflab.float32" in output
    names = re.search(r"^samples: (.*)$", output, re.M).group(1).split()
    assert len(names) == 10 and all(re.fullmatch(r"[a-z]+", n) for n in names)
