"""nn.utils.parametrize/parametrizations/prune, the hook-based norms and optim.swa_utils
against PyTorch itself.

tests/nn/nn_utils_shared_program.py is one program written against the library it is
given: ``run(torch)`` and ``run(difflab)``.  Where PyTorch is at hand (installed here, or
the interpreter named by DIFFLAB_TORCH_PYTHON, as the compat tests find it) it runs there
in its own process, and every one of its results must agree with difflab's to rounding:
parametrized weights and their gradients, power-iteration vectors, orthogonal maps,
pruning masks (iterative, structured, global), SWALR's rates, averaged models and the
recomputed BatchNorm statistics.  Without PyTorch, the program still runs on difflab and
its results are checked against what they must be.
"""

from __future__ import annotations

import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest

import difflab
from tests.compat.test_compat_tutorial_programs import torch_python
from tests.nn.nn_utils_shared_program import run

ROOT = Path(__file__).resolve().parents[2]
ON_PYTORCH = """
import sys, numpy as np
sys.path.insert(0, sys.argv[1])
import torch, torch.nn.utils.prune, torch.optim.swa_utils
from tests.nn.nn_utils_shared_program import run
np.savez(sys.argv[2], **run(torch))
"""


@pytest.fixture(scope="module")
def ours() -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # (the deprecated weight_norm)
        return run(difflab)


def test_the_program_gives_what_it_must_on_difflab(ours):
    eye = np.eye(4)
    for kind in ("matrix_exp", "cayley", "householder"):
        np.testing.assert_allclose(ours[f"orth_{kind}_nonorthogonal_start"], eye, atol=1e-12)
        for shape in ((4, 4), (5, 3), (3, 5)):
            w = ours[f"orth_{kind}_{shape}_w"]
            gram = w.T @ w if shape[0] >= shape[1] else w @ w.T
            np.testing.assert_allclose(gram, np.eye(min(shape)), atol=1e-12)
    assert np.linalg.norm(ours["sn3_eval_w"], 2) == pytest.approx(1.0, abs=0.05)
    np.testing.assert_array_equal(ours["sn1_eval_w"], ours["sn1_eval_w_again"])
    np.testing.assert_array_equal(ours["sn_convT_u_shape"], [3])  # ConvTranspose: dim 1
    np.testing.assert_allclose(np.linalg.norm(ours["sn_vector"]), 1.0)
    # pruning: 30% of 24 is 7 entries, 5 more of the 17 left, then whole rows and columns
    assert (ours["prune_l1"] == 0).sum() == 7 and (ours["prune_l1_again"] == 0).sum() == 12
    assert ((ours["prune_l1_again"] == 0) >= (ours["prune_l1"] == 0)).all()
    np.testing.assert_array_equal(ours["prune_grad"] == 0, ours["prune_lninf"] == 0)
    np.testing.assert_array_equal(ours["prune_removed"], ours["prune_weight"])
    np.testing.assert_allclose(ours["swalr_linear_3"], [0.05 + 0.95 * 2 / 3, 0.05 + 0.95 / 3,
                                                        0.05, 0.05, 0.05, 0.05])
    np.testing.assert_allclose(ours["swalr_cos_0"], [0.05] * 6)
    np.testing.assert_array_equal(ours["avg_swa_n_averaged"], 4)
    np.testing.assert_allclose(ours["chain_w"], ours["chain_w"].T)
    np.testing.assert_array_equal(ours["chain_w"], ours["chain_cached_w"])


def test_the_program_prints_pytorchs_numbers(ours, tmp_path):
    python = torch_python()
    path = tmp_path / "torch.npz"
    done = subprocess.run([python, "-W", "ignore", "-c", ON_PYTORCH, str(ROOT), str(path)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    theirs = dict(np.load(path))
    assert sorted(theirs) == sorted(ours) and len(ours) > 100
    for name, expected in theirs.items():
        assert ours[name].shape == expected.shape, name
        np.testing.assert_allclose(ours[name], expected, rtol=1e-9, atol=1e-11, err_msg=name)
