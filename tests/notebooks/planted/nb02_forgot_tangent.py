"""Notebook 2's exercises with one classic mistake: tan's rule returns tan'(a), not tan'(a) da."""

import numpy as np

import difflab as dl
from difflab.diff import Dual


def tan_rule(a, da):
    value = np.tan(a)
    return value, 1 + value**2  # forgot the incoming tangent da


def F(x):
    return np.stack([x[0] * x[1], dl.sin(x[0]), x[1] ** 3])


def jacobian_column(x, j):
    x = np.asarray(x, dtype=float)
    return F(Dual(x, np.eye(x.size)[j])).tangent
