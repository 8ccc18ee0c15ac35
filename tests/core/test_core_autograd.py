"""Behaviour of the tape engine: accumulation, retain_graph, no_grad, higher order, ..."""

import sys

import numpy as np
import pytest

import difflab as dl


def leaf(values, **kw):
    return dl.tensor(values, dtype=dl.float64, requires_grad=True, **kw)


def test_gradients_accumulate_until_zeroed():
    w = leaf([1.0, 2.0])
    (w * 3).sum().backward()
    (w * 3).sum().backward()
    assert w.grad.tolist() == [6.0, 6.0]  # summed over the two calls: why zero_grad exists
    w.grad.zero_()
    (w * 3).sum().backward()
    assert w.grad.tolist() == [3.0, 3.0]


def test_value_used_many_times_sums_its_adjoints():
    x = leaf(3.0)
    y = x * x + x * x * x + x  # x is reused: 2x + 3x² + 1
    y.backward()
    assert x.grad.item() == pytest.approx(2 * 3 + 3 * 9 + 1)


def test_deep_graph_needs_no_recursion():
    x = leaf(0.5)
    y = x
    depth = 3 * sys.getrecursionlimit()
    for _ in range(depth):
        y = y * 1.0 + 0.0
    y.backward()
    assert x.grad.item() == 1.0


def test_backward_only_walks_what_the_output_depends_on():
    a, b = leaf(1.0), leaf(2.0)
    unrelated = b.exp()
    (a * 2).backward()
    assert a.grad.item() == 2.0 and b.grad is None
    unrelated.backward()  # its graph was not freed by the first backward
    assert b.grad.item() == pytest.approx(np.exp(2.0))


def test_retain_graph_allows_a_second_backward():
    x = leaf(2.0)
    y = x.sin() * x
    y.backward(retain_graph=True)
    first = x.grad.item()
    y.backward()
    assert x.grad.item() == pytest.approx(2 * first)


def test_non_scalar_backward_with_gradient_is_a_vjp():
    x = leaf([1.0, 2.0, 3.0])
    y = x * x
    y.backward(gradient=dl.tensor([1.0, 0.0, 2.0], dtype=dl.float64))
    assert x.grad.tolist() == [2.0, 0.0, 12.0]


def test_no_grad_enable_grad_set_grad_enabled():
    x = leaf(1.0)
    with dl.no_grad():
        y = x * 2
        with dl.enable_grad():
            z = x * 2
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad
    with dl.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert dl.is_grad_enabled()

    @dl.no_grad()
    def f(t):
        return t * 2

    @dl.set_grad_enabled(False)
    def g(t):
        return t * 2

    assert not f(x).requires_grad and not g(x).requires_grad
    assert (x * 2).requires_grad
    dl.set_grad_enabled(False)
    assert not (x * 2).requires_grad
    dl.set_grad_enabled(True)


def test_detach_and_retain_grad():
    x = leaf([1.0, 2.0])
    h = x * 3
    h.retain_grad()
    y = (h * h.detach()).sum()  # the detached factor is a constant
    y.backward()
    assert h.grad.tolist() == [3.0, 6.0]
    assert x.grad.tolist() == [9.0, 18.0]
    assert x.is_leaf and not h.is_leaf and h.retains_grad


def test_autograd_grad_does_not_touch_dot_grad():
    x = leaf([1.0, 2.0])
    (g,) = dl.autograd.grad((x**3).sum(), x)
    assert g.tolist() == [3.0, 12.0] and x.grad is None


def test_autograd_grad_allow_unused():
    x, y = leaf(1.0), leaf(2.0)
    with pytest.raises(RuntimeError, match="allow_unused"):
        dl.autograd.grad(x * 2, [x, y])
    gx, gy = dl.autograd.grad(x * 2, [x, y], allow_unused=True)
    assert gx.item() == 2.0 and gy is None


def test_higher_order_derivatives_with_create_graph():
    x = leaf(0.7)
    y = x.sin() * x.exp()
    (d1,) = dl.autograd.grad(y, x, create_graph=True)
    (d2,) = dl.autograd.grad(d1, x, create_graph=True)
    (d3,) = dl.autograd.grad(d2, x)
    v = 0.7
    assert d1.item() == pytest.approx(np.exp(v) * (np.sin(v) + np.cos(v)))
    assert d2.item() == pytest.approx(2 * np.exp(v) * np.cos(v))
    assert d3.item() == pytest.approx(2 * np.exp(v) * (np.cos(v) - np.sin(v)))


def test_hessian_vector_product():
    x = leaf([1.0, 2.0, 3.0])
    f = (x**2).sum() * x.sum()  # H = 2·sum·I + 2(x 1ᵀ + 1 xᵀ)
    (g,) = dl.autograd.grad(f, x, create_graph=True)
    v = dl.tensor([1.0, 0.0, 0.0], dtype=dl.float64)
    (hv,) = dl.autograd.grad((g * v).sum(), x)
    xs = np.array([1.0, 2.0, 3.0])
    hessian = 2 * xs.sum() * np.eye(3) + 2 * (np.outer(xs, np.ones(3)) + np.outer(np.ones(3), xs))
    assert np.allclose(hv.numpy(), hessian @ [1.0, 0.0, 0.0])


def test_backward_with_inputs_restricts_accumulation():
    a, b = leaf(1.0), leaf(2.0)
    (a * b).backward(inputs=[a])
    assert a.grad.item() == 2.0 and b.grad is None


def test_custom_function_seed_sigmoid_runs_unchanged():
    # The seeds' example, with only the import changed.
    import difflab as torch

    class Sigmoid(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            output = 1 / (1 + torch.exp(-input))
            ctx.save_for_backward(output)
            return output

        @staticmethod
        def backward(ctx, grad_output):
            output, = ctx.saved_tensors
            grad_input = grad_output * output * (1 - output)
            return grad_input

    def sigmoid(x):
        return Sigmoid.apply(x)

    x = leaf([-1.0, 0.0, 2.0])
    with torch.autograd.tape() as t:
        y = sigmoid(x)
    assert len(t) == 1  # "only adds one node to the graph"
    y.sum().backward()
    s = 1 / (1 + np.exp(-np.array([-1.0, 0.0, 2.0])))
    assert np.allclose(x.grad.numpy(), s * (1 - s))
    assert torch.autograd.gradcheck(sigmoid, (leaf([0.3, -0.2]),))


def test_custom_function_needs_input_grad_and_none_gradients():
    class Scale(dl.autograd.Function):
        @staticmethod
        def forward(ctx, x, factor):
            ctx.factor = factor
            assert ctx.needs_input_grad == (True, False)
            return x * factor

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * ctx.factor, None

    x = leaf([1.0, 2.0])
    Scale.apply(x, 3.0).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_two_layer_net_training_loop_from_the_seeds():
    import difflab as torch

    torch.manual_seed(0)
    n, d_in, h, d_out = 64, 10, 32, 1
    x = torch.randn(n, d_in)
    y = (x[:, :1] * 2 - x[:, 1:2]).tanh()
    w1 = torch.randn(d_in, h, requires_grad=True)
    w2 = torch.randn(h, d_out, requires_grad=True)
    learning_rate = 1e-4
    losses = []
    for _ in range(200):
        y_pred = x.mm(w1).clamp(min=0).mm(w2)
        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            w1 -= learning_rate * w1.grad
            w2 -= learning_rate * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()
    assert losses[-1] < 0.1 * losses[0]


def test_detect_anomaly_names_the_operation():
    x = leaf([0.0, 1.0])
    y = (x.sqrt() * 0.0).sum()  # d sqrt/dx at 0 is inf; inf * 0 = nan
    with dl.autograd.detect_anomaly():
        with pytest.raises(RuntimeError, match="SqrtBackward0.*nan|MulBackward0.*nan"):
            y.backward()


def test_tape_prints_the_wengert_list_and_backward_order():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    with dl.autograd.tape() as t:
        y = (x * w).sin().sum()
    text = str(t)
    assert "v3 = mul(v1, v2)" in text and "v4 = sin(v3)" in text and "v5 = sum(v4)" in text
    backward_part = text.split("backward pass")[1]
    assert backward_part.index("v4̄") < backward_part.index("v3̄") < backward_part.index("v1̄")
    assert "cos" in backward_part  # the rule is shown
    assert len(t) == 3
    assert y.requires_grad


def test_draw_writes_svg_and_png(tmp_path):
    x = leaf([1.0, 2.0])
    y = (x.exp() * x).sum()
    drawing = dl.autograd.draw(y)
    svg = drawing._repr_svg_()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    drawing.save(str(tmp_path / "graph.png"))
    assert (tmp_path / "graph.png").stat().st_size > 1000
    with pytest.raises(ValueError, match="leaf"):
        dl.autograd.draw(x)


def test_saved_memory_is_freed_after_backward():
    x = leaf(np.ones(10))
    y = (x.exp() * x).sum()
    node = y.grad_fn
    y.backward()
    assert node.saved is None


def test_float32_leaf_gets_float32_grad_even_through_float64_constants():
    w = dl.ones(3, requires_grad=True)
    (w * np.arange(3.0)).sum().backward()
    assert w.grad.dtype == dl.float32 and w.grad.tolist() == [0.0, 1.0, 2.0]


def test_create_graph_mixes_raw_and_recorded_adjoints():
    # x[1] + atan(x[0]) + 0·x[0]: three adjoints reach x, raw arrays and tensors mixed;
    # in this order two raw ones arrive first, then a recorded one.
    x = leaf([0.3, -0.2])
    v0, v1 = x[0], x[1]
    y = v1 + v0.atan() + 0.0 * x[0]
    (g,) = dl.autograd.grad(y, x, create_graph=True)
    (h,) = dl.autograd.grad(g[0], x)
    assert np.allclose(h.numpy(), [-2 * 0.3 / (1 + 0.09) ** 2, 0.0])


def test_gradcheck_holds_stop_gradients_as_the_backward_pass_does():
    # A straight-through estimator: round in the forward, identity in the backward.  The
    # differences saw through the detach (the round's jumps, or 2v for v.detach() * v), so
    # a correct function failed gradcheck; now each stop is held at the unperturbed point.
    from difflab.autograd import gradcheck, gradgradcheck

    x = dl.tensor([0.2, 1.3, -2.6], dtype=dl.float64, requires_grad=True)
    assert gradcheck(lambda v: v + (v.round() - v).detach(), (x,))
    assert gradcheck(lambda v: v.detach() * v, (x,))
    assert gradgradcheck(lambda v: v.detach() * v ** 2, (x,))

    class WrongBackward(dl.autograd.Function):  # (a wrong gradient is still caught)
        @staticmethod
        def forward(ctx, v):
            return v.detach() * v

        @staticmethod
        def backward(ctx, g):
            return 2 * g

    with pytest.raises(Exception, match="mismatch"):
        gradcheck(WrongBackward.apply, (x,))


def test_a_custom_functions_own_detach_is_not_held_by_finite_differences():
    # forward detaches its input (its tape is off there; PyTorch code does this often):
    # that computes values, it stops nothing, so the differences must see them move (they
    # saw a constant, and the numeric method gave 0 where the backward gives 2v)
    from difflab.autograd import gradcheck

    class Square(dl.autograd.Function):
        @staticmethod
        def forward(ctx, v):
            ctx.save_for_backward(v)
            return v.detach() ** 2

        @staticmethod
        def backward(ctx, g):
            (v,) = ctx.saved_tensors
            return 2 * v * g

    x = dl.tensor([1.0, 2.0, -3.0], dtype=dl.float64)
    np.testing.assert_allclose(dl.grad(lambda v: Square.apply(v).sum(), method="numeric")(x),
                               [2.0, 4.0, -6.0], rtol=1e-8)
    assert gradcheck(Square.apply, (x.clone().requires_grad_(),))
