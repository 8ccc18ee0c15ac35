"""Tests for notebook 7's exercises: a layer whose parameters learn; restoring a model."""

import numpy as np
import submission

import difflab as dl
import difflab.nn as nn
from difflab.data import load_digits
from difflab.grading import GradingFailure, check_module, points
from difflab.grading.checks import assert_close


class Reference(nn.Module):
    def __init__(self, input_size, output_size):
        super().__init__()
        self.weight = nn.Parameter(dl.randn(input_size, output_size))
        self.bias = nn.Parameter(dl.randn(output_size))

    def forward(self, X):
        return X @ self.weight + self.bias


@points(2, tags=["nn.Module"])
def test_fixed_layer():
    dl.manual_seed(7)
    check_module(submission.FixedLayer(4, 3), Reference(4, 3),
                 [np.random.default_rng(0).standard_normal((5, 4))])


@points(1, hidden=True, tags=["nn.Module"])
def test_fixed_layer_other_sizes():
    dl.manual_seed(8)
    check_module(submission.FixedLayer(7, 2), Reference(7, 2),
                 [np.random.default_rng(1).standard_normal((3, 7))], seed=1)


def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))


@points(2, tags=["state_dict"])
def test_restore():
    dl.manual_seed(70)
    model = mlp()
    # The file has to be written where the student's code runs, by that process.
    submission.dl.save(model.state_dict(), "exercise2.pth")
    restored = submission.restore("exercise2.pth")
    images = load_digits(train=False)[0][:40]
    model.eval()
    with dl.no_grad():
        expected = model(images)
    assert_close(restored(images), expected, what="the restored model's outputs on 40 test digits",
                 atol=1e-5, rtol=1e-5,
                 hint="Build the architecture of section 7.2 and load the state dict saved "
                      "at `path` into it (dl.load, then load_state_dict).")
    if restored.training is not False:
        raise GradingFailure("the restored model is in training mode: call model.eval() "
                             "before returning it")
