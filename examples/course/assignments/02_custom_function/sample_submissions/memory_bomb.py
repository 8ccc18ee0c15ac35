"""Planted bug: Legendre3.backward allocates without bound.

Expected: the memory limit stops the Legendre3 backward tests (score 0); other tests pass.
"""

import numpy as np

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
        cache = []
        while True:  # keeps every intermediate forever
            cache.append(np.ones(10_000_000))


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
