"""The check_* helpers: right answers pass, wrong ones fail with messages that teach."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import difflab
from difflab.autograd import Function
from difflab.grading import (
    GradingFailure,
    check_dual_rule,
    check_function,
    check_gradient,
    check_module,
    check_optimizer_step,
)
from difflab.grading.checks import assert_close, numeric_gradient

# -- the comparison itself --------------------------------------------------------------


def test_assert_close_names_element_values_errors_and_tolerance():
    expected = np.zeros((2, 3))
    actual = expected.copy()
    actual[1, 2] = 0.3
    with pytest.raises(GradingFailure) as info:
        assert_close(actual, expected, what="gradient of input 0", atol=1e-5, rtol=1e-3)
    message = str(info.value)
    assert message.startswith("gradient of input 0 differs at element (1, 2): got 0.3, expected 0")
    assert "abs err 0.3" in message and "(1 of 6 elements differ)" in message
    assert "tolerance atol=1e-05 rtol=0.001" in message


def test_failure_is_an_assertion_error():
    assert issubclass(GradingFailure, AssertionError)


@pytest.mark.parametrize(
    ("actual", "hint"),
    [
        (lambda e, g: -e, "wrong sign"),
        (lambda e, g: 0 * e, "zero everywhere"),
        (lambda e, g: 2 * e, "times 2 everywhere"),
        (lambda e, g: e / g, "forget to multiply by grad_output"),
    ],
)
def test_hints_recognise_common_mistakes(actual, hint):
    expected = np.array([0.5, -1.0, 2.0, 3.0])
    upstream = np.array([1.5, 0.7, 1.9, 0.6])
    with pytest.raises(GradingFailure, match=hint):
        assert_close(actual(expected, upstream), expected, what="x", upstream=upstream)


def test_shape_mismatch_and_transpose_and_nan_are_explained():
    a = np.arange(6.0).reshape(2, 3)
    with pytest.raises(GradingFailure, match=r"shape \(3, 2\), expected \(2, 3\).*transposed"):
        assert_close(a.T, a, what="weight gradient")
    with pytest.raises(GradingFailure, match=r"is NaN at element \(1,\)"):
        assert_close(np.array([1.0, np.nan]), np.array([1.0, 2.0]), what="grad")


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-5, 5), min_size=1, max_size=6))
def test_numeric_gradient_matches_known_derivative(values):
    x = np.array(values)
    grad = numeric_gradient(lambda v: np.sum(np.sin(v) * v), [x], 0)
    np.testing.assert_allclose(grad, np.cos(x) * x + np.sin(x), atol=1e-7)


# -- dual-number rules (no tensors needed) ---------------------------------------------


def good_sin(a, da):
    return np.sin(a), np.cos(a) * da


def forgot_da(a, da):
    return np.sin(a), np.cos(a)


def good_mul(a, da, b, db):
    return a * b, a * db + b * da


def half_product_rule(a, da, b, db):
    return a * b, b * da


def test_correct_dual_rules_pass():
    check_dual_rule(good_sin, np.sin)
    check_dual_rule(good_mul, np.multiply)
    check_dual_rule(good_sin, np.sin, points=[np.linspace(-2, 2, 5)], tangents=[np.ones(5)])


def test_dual_rule_that_forgets_the_tangent_is_explained():
    with pytest.raises(GradingFailure) as info:
        check_dual_rule(forgot_da, np.sin)
    message = str(info.value)
    assert re.match(r"tangent of forgot_da at a=-?[\d.]+, da=[\d.-]+ differs: got", message)
    assert "multiply by the incoming tangent" in message


def test_product_rule_with_one_term_is_explained():
    with pytest.raises(GradingFailure, match="only input 0's contribution.*a\\*db \\+ b\\*da"):
        check_dual_rule(half_product_rule, np.multiply)


def test_wrong_value_is_reported_before_tangent():
    def shifted(a, da):
        return np.sin(a) + 1, np.cos(a) * da

    with pytest.raises(GradingFailure, match=r"value of shifted at a=-1.7, da=1 \(vs sin\)"):
        check_dual_rule(shifted, np.sin)


class Dual:
    """A student's own dual-number class."""

    def __init__(self, primal, tangent):
        self.primal, self.tangent = primal, tangent


def test_dual_object_convention():
    def dual_exp(x):
        return Dual(np.exp(x.primal), np.exp(x.primal) * x.tangent)

    check_dual_rule(dual_exp, np.exp, dual_cls=Dual)

    def bad_exp(x):
        return Dual(np.exp(x.primal), np.exp(x.primal))

    with pytest.raises(GradingFailure, match="tangent of bad_exp"):
        check_dual_rule(bad_exp, np.exp, dual_cls=Dual)


def test_dual_rule_returning_garbage_is_explained():
    with pytest.raises(GradingFailure, match=r"expected a \(value, tangent\) pair"):
        check_dual_rule(lambda a, da: 3.0, np.sin)


def test_dual_rule_on_restricted_domain_uses_given_points():
    def dual_log(a, da):
        return np.log(a), da / a

    check_dual_rule(dual_log, np.log, points=[0.5, 1.0, 4.0])


# -- tensors: gradients, Functions, modules, optimizers --------------------------------



class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 3 * x * x


class CubeNoChain(Cube):
    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 3 * x * x


class CubeWrongElement(Cube):
    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        g = (grad_output * 3 * x * x).detach().numpy().copy()
        g[1, 2] += 1.0
        return difflab.tensor(g)


X = np.array([[0.5, -1.0, 2.0], [1.5, 0.3, -0.7]])


def cube(x):
    return x**3


def test_check_function_passes_a_correct_function():
    check_function(Cube, cube, [X])


def test_check_function_names_input_and_element():
    with pytest.raises(GradingFailure) as info:
        check_function(CubeWrongElement, cube, [X])
    assert str(info.value).startswith(
        "CubeWrongElement.backward: gradient for input 0 differs at element (1, 2) "
        "(where input 0 = -0.7): got"
    )


def test_check_function_catches_missing_grad_output():
    with pytest.raises(GradingFailure, match="forget to multiply by grad_output"):
        check_function(CubeNoChain, cube, [X])


def test_check_function_forward_only():
    check_function(CubeNoChain, cube, [X], check_backward=False)
    with pytest.raises(GradingFailure, match="Cube.forward output differs"):
        check_function(Cube, lambda x: x**3 + 1, [X], check_backward=False)


def test_check_gradient_compares_analytic_and_numeric():
    check_gradient(lambda x, y: difflab.sin(x) * y, [X, X + 1.0])
    with pytest.raises(GradingFailure, match=r"gradient of input 0 .*differs at element"):
        check_gradient(lambda x: CubeWrongElement.apply(x), [X])


def test_check_gradient_explains_a_detached_input():
    with pytest.raises(GradingFailure, match="input 1 received no gradient"):
        check_gradient(lambda x, y: x * difflab.tensor(y.detach().numpy()), [X, X])


#: Student functions with stop-gradients (``detach``, ``.data``): reverse mode, gradcheck
#: and method="numeric" agree on their gradient (each stop held at its value at the
#: unperturbed point).  The grader's consistency check does not hold them: it asks whether
#: the backward is the derivative of the function as computed, which these are not.
DETACHING = {
    "detach_times_self": lambda x: x.detach() * x,
    "straight_through_round": lambda x: x + (x.round() - x).detach(),
    "data_times_square": lambda x: x.data * x * x,
    "detached_normaliser": lambda x: x / (x * x).sum().detach().sqrt(),
    "two_inputs": lambda x, y: x.detach() * y + y.detach() * x * x,
}


def _arguments(name):
    return [X, X + 1.0] if name == "two_inputs" else [X]


@pytest.mark.parametrize("name", DETACHING)
def test_a_stop_gradient_is_held_by_gradcheck_but_not_by_the_graders_consistency_check(name):
    fn = DETACHING[name]
    arrays = _arguments(name)
    w = np.linspace(0.5, 2.0, X.size).reshape(X.shape)

    def weighted(*values):
        return (fn(*values) * difflab.tensor(w)).sum()

    tensors = [difflab.tensor(a, requires_grad=True) for a in arrays]
    weighted(*tensors).backward()
    assert difflab.autograd.gradcheck(weighted, tuple(
        difflab.tensor(a, requires_grad=True) for a in arrays))
    for i, t in enumerate(tensors):
        np.testing.assert_allclose(difflab.grad(weighted, argnums=i, method="numeric")(
            *(difflab.tensor(a) for a in arrays)), t.grad.numpy(), rtol=1e-6, atol=1e-8)
    # the same in the grader's process and in the student's (nothing held in either)
    with pytest.raises(GradingFailure, match=r"gradient of input \d \(analytic vs numeric\)"):
        check_gradient(fn, arrays)


@pytest.mark.parametrize("cheat", [
    lambda x: (x ** 3).detach() + 0.0 * x,  # the right value, no gradient
    lambda x: (x ** 3).detach() + x - x.detach(),  # the right value, the gradient 1
])
def test_a_detached_right_value_with_any_gradient_fails_the_consistency_check(cheat):
    """A student who reads the source cannot pass a check without a reference by
    computing the value under detach and attaching whatever gradient: the finite
    differences are of the function as it computes (no stop is held)."""
    with pytest.raises(GradingFailure, match="gradient of input 0"):
        check_gradient(lambda x: cheat(x).sum(), [X])
    with pytest.raises(GradingFailure, match="gradient of input 0"):
        check_gradient(lambda x: cheat(x).sum(), [X], reference=lambda x: np.sum(x ** 3))


def test_check_module_compares_outputs_and_gradients():
    from difflab import nn

    reference = nn.Linear(3, 2)
    check_module(nn.Linear(3, 2), reference, [X])

    class Doubled(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = nn.Linear(3, 2)

        def forward(self, x):
            return self.inner(x) * 2.0

    with pytest.raises(GradingFailure, match="parameters are named"):
        check_module(Doubled(), reference, [X])


def test_check_optimizer_step_over_several_steps():
    from difflab import optim

    check_optimizer_step(optim.SGD, optim.SGD, lr=0.1, momentum=0.9)

    class ForgetfulSGD:
        """Momentum SGD that forgets its buffer between steps: step 1 is right."""

        def __init__(self, params, lr, momentum):
            self.params, self.lr = list(params), lr

        def zero_grad(self):
            for p in self.params:
                p.grad = None

        def step(self):
            for p in self.params:
                p.data -= self.lr * p.grad.numpy()

    with pytest.raises(GradingFailure, match="after step 2, parameter 0.*first 1 step"):
        check_optimizer_step(ForgetfulSGD, optim.SGD, lr=0.1, momentum=0.9)


def test_dual_convention_defaults_to_difflabs_dual():
    from difflab.diff.forward import Dual as DifflabDual

    def dual_sin(x):
        assert isinstance(x, DifflabDual)
        return DifflabDual(np.sin(x.primal), np.cos(x.primal) * x.tangent)

    check_dual_rule(dual_sin, np.sin)
    check_dual_rule(lambda x, y: x * y, np.multiply)  # difflab's own product rule
