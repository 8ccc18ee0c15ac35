"""Tests for notebook 4's exercises: a backward walk by hand, a training loop, detach."""

import numpy as np
import submission

import difflab as dl
from difflab.grading import GradingFailure, points
from difflab.grading.checks import assert_close


def tape_gradient(a, b):
    """(dg/da, dg/db) of g(a, b) = a e^b + b² by difflab's tape, in this process."""
    a_ = dl.tensor(a, dtype=dl.float64, requires_grad=True)
    b_ = dl.tensor(b, dtype=dl.float64, requires_grad=True)
    (a_ * dl.exp(b_) + b_**2).backward()
    return np.array([a_.grad.item(), b_.grad.item()])


def check_walk(points_):
    for a, b in points_:
        got = submission.backward_walk(a, b)
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise GradingFailure(
                f"backward_walk({a}, {b}) returned {got!r}; return the pair (a_bar, b_bar)"
            )
        assert_close(np.array(got, dtype=float), tape_gradient(a, b),
                     what=f"(a_bar, b_bar) at (a, b) = ({a}, {b})", atol=1e-12, rtol=1e-12,
                     hint="b is used twice (in u1 = e^b and in u3 = b²): its adjoint adds "
                          "both contributions.")


@points(2, tags=["reverse mode"])
def test_backward_walk():
    check_walk([(1.0, 0.5), (-2.0, 1.5)])


@points(1, hidden=True, tags=["reverse mode"])
def test_backward_walk_more_points():
    check_walk([(0.3, -1.0), (4.0, 0.0), (-0.5, 2.5)])


def reference_fit(steps, lr):
    """Gradient descent on the mean squared error of w x + c, by hand in NumPy."""
    x = np.linspace(-1, 1, 20)
    y = 2.5 * x - 0.7
    w = c = 0.0
    for _ in range(steps):
        r = w * x + c - y
        w, c = w - lr * np.mean(2 * r * x), c - lr * np.mean(2 * r)
    return np.array([w, c])


@points(2, tags=["training loop"])
def test_fit_line_converges():
    w, c = submission.fit_line()
    assert_close(np.array([w, c], dtype=float), [2.5, -0.7], what="(w, c) after 200 steps",
                 atol=1e-3, rtol=0,
                 hint="If the values oscillate or blow up, zero the gradients every step.")


@points(1, hidden=True, tags=["training loop"])
def test_fit_line_takes_exact_steps():
    for steps, lr in ((1, 0.1), (5, 0.3)):
        got = np.array(submission.fit_line(steps=steps, lr=lr), dtype=float)
        assert_close(got, reference_fit(steps, lr),
                     what=f"(w, c) after fit_line(steps={steps}, lr={lr})", atol=1e-10,
                     rtol=1e-8,
                     hint="Each step: zero the gradients, loss = mean((w x + c - y)²), "
                          "backward, then w -= lr * w.grad and c -= lr * c.grad under no_grad.")


@points(2, tags=["detach"])
def test_h_value_and_derivative():
    for value in (-1.5, 0.5, 2.0):
        x = dl.tensor(value, dtype=dl.float64, requires_grad=True)
        y = submission.h(x)
        assert_close(y, value**3, what=f"h({value})", atol=1e-12, rtol=1e-12)
        y.backward()
        assert_close(x.grad, value**2, what=f"the derivative of h at {value}", atol=1e-12,
                     rtol=1e-12,
                     hint="Exactly one factor x may stay on the tape: x * x.detach()**2.")
