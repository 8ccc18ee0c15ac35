"""Instructor tests for assignment 3 (a Linear layer as a Function and a Module)."""

import numpy as np
import submission

from difflab import nn
from difflab.grading import check_function, check_module, points

RNG = np.random.default_rng(7)
X = RNG.standard_normal((5, 4))
W = RNG.standard_normal((3, 4))
B = RNG.standard_normal(3)


def linear(x, weight, bias):
    return x @ weight.T + bias


@points(1, tags=["Function"])
def test_function_forward():
    check_function(submission.LinearFunction, linear, [X, W, B], check_backward=False)


@points(3, tags=["Function", "backward"])
def test_function_backward():
    check_function(submission.LinearFunction, linear, [X, W, B], check_forward=False)


@points(1, hidden=True, tags=["Function", "backward"])
def test_function_backward_single_example():
    check_function(submission.LinearFunction, linear, [X[:1], W, B], check_forward=False)


@points(1, tags=["Module"])
def test_module_parameter_shapes():
    layer = submission.MyLinear(4, 3)
    shapes = {name: tuple(p.shape) for name, p in layer.state_dict().items()}
    assert shapes == {"weight": (3, 4), "bias": (3,)}, (
        f"MyLinear(4, 3) should have weight (3, 4) and bias (3,), got {shapes}"
    )


@points(2, tags=["Module"])
def test_module_matches_nn_linear():
    check_module(submission.MyLinear(4, 3), nn.Linear(4, 3), [X])
