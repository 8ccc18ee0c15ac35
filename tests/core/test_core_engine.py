"""The backward walk (difflab.autograd.engine): its named steps, one recording path
for built-in primitives and user Functions, and delivery into leaves with hooks."""

import inspect

import numpy as np
import pytest

import difflab as dl
from difflab import fastpath
from difflab.autograd import engine


def leaf(values, dtype=dl.float64):
    return dl.tensor(values, dtype=dtype, requires_grad=True)


# --------------------------------------------------------------- the walk itself


def test_the_core_loop_fits_on_a_screen():
    # run_backward's steps and its loop (_walk), each on a screen.
    steps, loop = inspect.getsource(engine.run_backward), inspect.getsource(engine._walk)
    assert len(steps.splitlines()) < 40 and len(loop.splitlines()) < 40
    # One accumulation: the loop adds into parents through the store's add only.
    assert (steps + loop).count("adjoints.add(") == 1
    assert "fastpath" not in steps + loop and "SliceAdjoint" not in steps + loop


def test_a_value_used_many_times_gets_the_sum_of_its_adjoints():
    x = leaf([1.0, 2.0])
    y = x * 3.0
    z = (y * y + y.sin() + y).sum()  # y used four times
    z.backward()
    yv = 3.0 * np.array([1.0, 2.0])
    np.testing.assert_allclose(x.grad.numpy(), 3.0 * (2 * yv + np.cos(yv) + 1.0))


def test_a_deep_chain_needs_no_recursion():
    x = leaf([0.5])
    y = x
    for _ in range(20000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.tolist() == [1.0]


def test_records_no_adjoint_reaches_are_skipped():
    class FirstOnly(dl.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * 1.0

        @staticmethod
        def backward(ctx, g):
            return g, None  # no adjoint for b

    x = leaf([1.0, 2.0])
    y = x * 2.0  # on the tape, reachable from the output, but no adjoint reaches it
    FirstOnly.apply(x, y).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_leaf_gradient_is_a_private_array_and_keeps_the_leaf_dtype_and_shape():
    seed = np.ones(3)
    x = leaf([1.0, 2.0, 3.0], dtype=dl.float32)
    x.backward(dl.tensor(seed))  # backward on a leaf: its gradient is the seed itself
    assert x.grad.dtype == dl.float32
    x.grad.zero_()
    assert seed.tolist() == [1.0, 1.0, 1.0]  # the user's seed is untouched

    b = leaf([2.0])
    (b * dl.ones(4)).sum().backward()  # a broadcast leaf
    assert b.grad.shape == (1,) and b.grad.tolist() == [4.0]


def test_shared_adjoints_are_never_changed_in_place():
    x = leaf(np.arange(5000.0))
    w = leaf(np.arange(5000.0))
    (x + w).sum().backward()  # add hands the same adjoint to both inputs
    x.grad.add_(1.0)
    assert w.grad.numpy().max() == 1.0


# ------------------------------------------------------------ one recording path


class Sigmoid(dl.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = 1 / (1 + (-x).exp())
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g * out * (1 - out)


def test_user_functions_are_recorded_by_engine_apply(monkeypatch):
    calls = []
    original = engine.apply

    def spy(op, *inputs, **params):
        calls.append(op.name)
        return original(op, *inputs, **params)

    monkeypatch.setattr(engine, "apply", spy)
    x = leaf([0.0, 1.0])
    y = Sigmoid.apply(x)
    assert calls[0] == "Sigmoid"
    assert type(y.grad_fn) is engine.Node and y.grad_fn.op.name == "Sigmoid"
    # The same numbering as every other record: after its input's, before its users'.
    z = y * 2.0
    assert z.grad_fn.seq > y.grad_fn.seq
    assert isinstance(y.grad_fn, dl.autograd.FunctionCtx)


def test_function_saved_input_modified_in_place_is_caught():
    class Square(dl.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    base = leaf([1.0, 2.0])
    x = base * 1.0
    y = Square.apply(x)
    x.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.sum().backward()


def test_function_backward_twice_needs_retain_graph():
    x = leaf([0.5])
    y = Sigmoid.apply(x)
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    s = 1 / (1 + np.exp(-0.5))
    np.testing.assert_allclose(x.grad.numpy(), [2 * s * (1 - s)])
    with pytest.raises(RuntimeError, match="second time"):
        y.sum().backward()


def test_function_without_grad_is_not_recorded_and_keeps_its_errors():
    with dl.no_grad():
        y = Sigmoid.apply(leaf([0.0]))
    assert y.grad_fn is None and not y.requires_grad

    class Fails(dl.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            raise ValueError("my own message")

    with pytest.raises(ValueError, match="^my own message$"):
        Fails.apply(leaf([1.0]))


def test_function_non_differentiable_output_needs_no_grad():
    class Sign(dl.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = x.sign()
            ctx.mark_non_differentiable(out)
            return out

    y = Sign.apply(leaf([-2.0, 3.0]))
    assert not y.requires_grad and y.tolist() == [-1.0, 1.0]


def test_function_with_constant_arguments_and_keywords():
    class Affine(dl.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, *, shift):
            ctx.save_for_backward(x, w)
            return x * w + shift

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return g * w, g * x

    x, w = leaf([1.0, 2.0]), dl.tensor([3.0, 4.0])  # w needs no grad
    Affine.apply(x, w, shift=1.0).sum().backward()
    assert x.grad.tolist() == [3.0, 4.0] and w.grad is None


def test_function_second_derivative_through_create_graph():
    x = leaf([0.3])
    (g,) = dl.autograd.grad(Sigmoid.apply(x).sum(), [x], create_graph=True)
    (h,) = dl.autograd.grad(g.sum(), [x])
    s = 1 / (1 + np.exp(-0.3))
    np.testing.assert_allclose(h.numpy(), [s * (1 - s) * (1 - 2 * s)])


def test_anomaly_mode_names_a_user_function():
    class NanBackward(dl.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            return g * float("nan")

    with dl.autograd.detect_anomaly(), pytest.raises(RuntimeError, match="NanBackward"):
        NanBackward.apply(leaf([1.0])).sum().backward()


# ------------------------------------------------- delivery into leaves, and hooks


def hooked_leaf(values):
    return dl.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)


def test_post_accumulate_hooks_see_the_final_grad_once_per_backward():
    x = hooked_leaf([1.0, 2.0])
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append((t is x, t.grad.tolist())))
    (x * x + x[0] * x + x).sum().backward()  # x reached along several paths
    expected = (2 * np.array([1.0, 2.0]) + 1.0 + 1.0 + np.array([3.0, 0.0])).tolist()
    assert seen == [(True, expected)]
    (x * 1.0).sum().backward()  # gradients add up; the hook runs again, once
    assert seen[-1] == (True, [e + 1.0 for e in expected]) and len(seen) == 2


def test_post_accumulate_hooks_run_in_order_and_not_for_autograd_grad():
    x = hooked_leaf([1.0])
    order = []
    x.register_post_accumulate_grad_hook(lambda t: order.append(1))
    x.register_post_accumulate_grad_hook(lambda t: order.append(2))
    dl.autograd.grad((x * 2.0).sum(), [x])  # touches no .grad: no hook
    assert order == [] and x.grad is None
    (x * 2.0).sum().backward(inputs=[x])
    assert order == [1, 2] and x.grad.tolist() == [2.0]


def test_a_hook_may_read_and_replace_the_grad():
    x = hooked_leaf([1.0, 2.0])

    def halve(t):
        t.grad.mul_(0.5)

    x.register_post_accumulate_grad_hook(halve)
    (x * 4.0).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


# ---------------------------------------------------------- the shortcut switch


def test_the_switch_refuses_values_it_does_not_understand(monkeypatch):
    monkeypatch.setenv("DIFFLAB_FASTPATH", "maybe")
    with pytest.raises(ValueError, match="DIFFLAB_FASTPATH='maybe'.*set it to 0"):
        fastpath._enabled_from_environment()
    for value, expected in [("0", False), ("off", False), ("1", True), ("", True)]:
        monkeypatch.setenv("DIFFLAB_FASTPATH", value)
        assert fastpath._enabled_from_environment() is expected
