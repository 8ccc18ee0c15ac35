"""Instructor tests for assignment 2 (custom autograd Functions).

The backward is checked against central differences of the mathematical function, with a
random upstream gradient, so a backward that drops ``grad_output`` fails too.
"""

import numpy as np
import submission

from difflab.grading import check_function, check_gradient, points


def p3(x):
    return (5 * x**3 - 3 * x) / 2


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


@points(1, tags=["custom Function"])
def test_legendre3_forward():
    x = np.linspace(-1.0, 1.0, 5)
    check_function(submission.Legendre3, p3, [x], check_backward=False)


@points(2, tags=["custom Function", "backward"])
def test_legendre3_backward():
    check_function(submission.Legendre3, p3, [np.array([-0.9, -0.2, 0.4, 1.3])])


@points(2, hidden=True, tags=["custom Function", "backward"])
def test_legendre3_backward_matrix():
    x = np.array([[0.5, -1.5, 2.0], [0.1, 0.7, -0.3]])
    check_function(submission.Legendre3, p3, [x])


@points(1, tags=["custom Function"])
def test_sigmoid_forward():
    check_function(submission.Sigmoid, sigmoid, [np.linspace(-4.0, 4.0, 9)], check_backward=False)


@points(2, tags=["custom Function", "backward"])
def test_sigmoid_backward():
    check_function(submission.Sigmoid, sigmoid, [np.linspace(-3.0, 3.0, 7)])


@points(1, hidden=True, tags=["chain rule"])
def test_sigmoid_inside_a_bigger_graph():
    def f(x):
        return submission.Sigmoid.apply(x * x) * 3.0

    # the reference, not the submission, says what the gradient must be
    check_gradient(f, [np.array([0.3, -1.2, 2.0])], reference=lambda x: sigmoid(x * x) * 3.0)
