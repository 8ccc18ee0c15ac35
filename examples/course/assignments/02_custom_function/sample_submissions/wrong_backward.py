"""Planted bug: Legendre3.backward uses 15x^2 - 3 without the 1/2 (P3' = (15x^2 - 3)/2).

Expected: the Legendre3 backward tests lose their points, everything else passes.
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
        return grad_output * (15 * x**2 - 3)  # forgot the / 2


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
