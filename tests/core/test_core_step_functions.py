"""Piecewise-constant primitives (``logic.StepFunction``): derivative 0, as PyTorch.

``round``, ``floor``, ``ceil``, ``trunc``, ``sign``, ``sgn`` and the rounded divisions
of a tensor that requires grad gave a result that did not require grad, so a loss
through them alone could not be backpropagated ("does not require grad") where
PyTorch gives zeros; a comparison's bool result still has no gradient at all.
"""

from __future__ import annotations

import numpy as np
import pytest

import difflab as dl
from difflab.diff import differentiators

X = [1.5, -2.5, 0.0, 2.7]
Y = [2.0, 3.0, 1.0, -0.5]

STEPS = {
    "round": lambda x, y: x.round(),
    "round(decimals=1)": lambda x, y: x.round(decimals=1),
    "floor": lambda x, y: dl.floor(x),
    "ceil": lambda x, y: x.ceil(),
    "trunc": lambda x, y: dl.trunc(x),
    "sign": lambda x, y: x.sign(),
    "sgn": lambda x, y: dl.sgn(x),
    "floor_divide": lambda x, y: dl.floor_divide(x, y),
    "div floor": lambda x, y: dl.div(x, y, rounding_mode="floor"),
    "div trunc": lambda x, y: dl.div(x, y, rounding_mode="trunc"),
    "x // y": lambda x, y: x // y,
}


@pytest.mark.parametrize("name", STEPS)
def test_a_step_function_requires_grad_and_gives_zero_gradients_as_pytorch(name):
    x = dl.tensor(X, requires_grad=True)
    y = dl.tensor(Y, requires_grad=True)
    out = STEPS[name](x, y)
    assert out.requires_grad and out.grad_fn is not None
    assert out.dtype == dl.float32
    out.sum().backward()
    assert x.grad.tolist() == [0.0] * 4
    assert x.grad.dtype == dl.float32
    if y.grad is not None:  # (the divisions: the divisor's gradient is zeros too)
        assert y.grad.tolist() == [0.0] * 4


def test_comparisons_keep_no_gradient_and_straight_through_still_works():
    x = dl.tensor(X, requires_grad=True)
    assert not (x > 0).requires_grad
    with pytest.raises(RuntimeError, match="does not require grad"):
        (x > 0).float().sum().backward()
    # the straight-through estimator: the rounding's values, the identity's gradient
    (x + (x.round() - x).detach()).sum().backward()
    assert x.grad.tolist() == [1.0] * 4


@pytest.mark.parametrize("method", differentiators.available())
def test_every_method_differentiates_through_a_step_as_zero(method):
    """d/dv Σ round(v)·v = round(v): the step contributes 0, by every method."""
    v = np.array([1.2, -2.7, 0.4])
    result = dl.grad(lambda u: (dl.round(u) * u + dl.floor(u * 3) * 0.5).sum(),
                     method=method)(v)
    np.testing.assert_allclose(result, np.round(v), atol=1e-6)


def test_double_backward_through_a_step():
    x = dl.tensor([1.2, -0.7], requires_grad=True)
    (g,) = dl.autograd.grad((dl.floor(x) * x * x).sum(), x, create_graph=True)
    (h,) = dl.autograd.grad(g.sum(), x)
    assert g.tolist() == pytest.approx([2 * 1 * 1.2, 2 * -1 * -0.7])
    assert h.tolist() == pytest.approx([2.0, -2.0])
