"""Tests for notebook 8's exercises: the numeric method's cost; an optimizer step by hand."""

import numpy as np
import submission

import difflab.nn as nn
from difflab.grading import GradingFailure, points
from difflab.grading.checks import assert_close
from difflab.nn.utils import compute_gradients


def tiny(hidden):
    return nn.Sequential(nn.Linear(2, hidden), nn.Tanh(), nn.Linear(hidden, 1))


@points(1, tags=["cost"])
def test_numeric_evaluations():
    x, y = submission.x, submission.y
    for hidden in (2, 5):
        model = tiny(hidden)
        P = sum(p.numel() for p in model.parameters())
        measured = compute_gradients(model, nn.MSELoss(), x, y, method="numeric").evaluations
        got = submission.numeric_evaluations(P)
        if got != measured:
            raise GradingFailure(
                f"numeric_evaluations({P}) returned {got!r}, but compute_gradients used "
                f"{measured} evaluations of the loss for a model of {P} parameters: two "
                "per parameter (central differences) plus the loss itself."
            )


@points(2, tags=["optimizer step"])
def test_sgd_step_lowers_the_loss():
    for method in ("reverse", "forward"):
        model = submission.tiny_model(4)
        first = submission.sgd_step(model, method, 0.5)
        second = submission.sgd_step(model, method, 0.5)
        if not isinstance(first, float):
            raise GradingFailure(f"sgd_step returned a {type(first).__name__}; return the "
                                 "loss before the step as a float (float(cost.loss))")
        if not second < first:
            raise GradingFailure(
                f"with method={method!r} the loss did not go down after a step ({first:.6g} "
                f"then {second:.6g}): update each parameter with p -= lr * p.grad, in place."
            )


@points(2, hidden=True, tags=["optimizer step"])
def test_sgd_step_updates_like_gradient_descent():
    x, y = submission.x, submission.y
    model = submission.tiny_model(3)
    before = model.state_dict()
    loss = submission.sgd_step(model, "forward", 0.25)
    after = model.state_dict()
    reference = tiny(3)
    reference.load_state_dict(before)
    cost = compute_gradients(reference, nn.MSELoss(), x, y, method="reverse")
    assert_close(loss, cost.loss, what="the loss sgd_step returned (before the step)",
                 atol=1e-6, rtol=1e-5)
    for name, p in reference.named_parameters():
        expected = before[name].numpy() - 0.25 * p.grad.numpy()
        assert_close(after[name], expected, what=f"parameter '{name}' after one step",
                     atol=1e-5, rtol=1e-4, point=("the parameter before", before[name].numpy()),
                     hint="The update is p <- p - lr * p.grad, with the gradient of this "
                          "step's loss (computed before the update).")
    if np.allclose(after["0.weight"].numpy(), before["0.weight"].numpy()):
        raise GradingFailure("the parameters did not change")
