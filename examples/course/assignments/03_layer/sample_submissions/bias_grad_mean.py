"""Planted bug: the bias gradient averages over the batch instead of summing.

Expected: the backward tests and the module test lose their points; the message names
input 2 (the bias) and the element, and recognises the constant factor 1/n.
"""

import numpy as np

import difflab
from difflab import nn
from difflab.autograd import Function


class LinearFunction(Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        return x @ weight.T + bias

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        return grad_output @ weight, grad_output.T @ x, grad_output.mean(axis=0)


class MyLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        scale = np.sqrt(1.0 / in_features)
        self.weight = nn.Parameter(
            difflab.tensor(np.random.randn(out_features, in_features) * scale)
        )
        self.bias = nn.Parameter(difflab.tensor(np.zeros(out_features)))

    def forward(self, x):
        return LinearFunction.apply(x, self.weight, self.bias)
