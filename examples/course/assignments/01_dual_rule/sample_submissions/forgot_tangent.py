"""A plausible wrong submission: the sin rule returns cos(a) instead of cos(a) * da."""

import numpy as np


def dual_sin(a, da):
    return np.sin(a), np.cos(a)  # forgot the chain-rule factor da


def dual_mul(a, da, b, db):
    return a * b, a * db + b * da


def dual_exp(a, da):
    e = np.exp(a)
    return e, e * da


def f_dual(a, da):
    s, ds = dual_sin(a, da)
    e, de = dual_exp(a, da)
    return dual_mul(s, ds, e, de)
