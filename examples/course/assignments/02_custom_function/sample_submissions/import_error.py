"""Planted bug: the file does not import (a misspelt package name).

Expected: a clear message that the submission could not be loaded; every test scores 0.
"""

import difflabb  # noqa: F401  (typo: the package is difflab)

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
        return grad_output * (15 * x**2 - 3) / 2


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
