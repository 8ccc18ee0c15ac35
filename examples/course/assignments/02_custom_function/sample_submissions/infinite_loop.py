"""Planted bug: Legendre3.backward never returns.

Expected: the Legendre3 backward tests are stopped at the time limit and score 0;
the forward tests and the Sigmoid tests still pass.
"""


import difflab
from difflab.autograd import Function


class Legendre3(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (5 * x**3 - 3 * x) / 2

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        while True:  # waits for a convergence that never comes
            x = x * 1.0


class Sigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        s = 1 / (1 + difflab.exp(-x))
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, grad_output):
        (s,) = ctx.saved_tensors
        return grad_output * s * (1 - s)
