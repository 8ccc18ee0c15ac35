"""Tensor.register_hook: a hook on a tensor's gradient, which may replace it (PyTorch's)."""

import warnings

import numpy as np
import pytest

import difflab as dl


def leaf(values):
    return dl.tensor(values, dtype=dl.float64, requires_grad=True)


def test_a_hook_on_a_leaf_sees_its_complete_gradient_once_and_replaces_it():
    x = leaf([1.0, 2.0])
    seen = []

    def hook(grad):
        seen.append(grad.tolist())
        return grad * 2

    x.register_hook(hook)
    (x * x + 3 * x).sum().backward()  # d/dx = 2x + 3, three uses summed before the hook
    assert seen == [[5.0, 7.0]]
    np.testing.assert_allclose(x.grad.array, [10.0, 14.0])


def test_a_hook_on_a_result_changes_what_flows_to_the_operations_before_it():
    x = leaf([1.0, 2.0])
    y = x * x
    y.register_hook(lambda grad: grad + 1.0)
    (3 * y + x).sum().backward()  # ȳ = 3 -> 4, x̄ = 4 · 2x + 1 (the direct path untouched)
    np.testing.assert_allclose(x.grad.array, [4 * 2 * 1 + 1, 4 * 2 * 2 + 1])
    assert y.grad is None  # (not retained)


def test_several_hooks_run_in_order_each_given_what_the_last_returned():
    x = leaf([1.0])
    y = x * 5
    calls = []

    def first(grad):
        calls.append(("first", grad.item()))
        return grad + 1

    def second(grad):
        calls.append(("second", grad.item()))
        return None  # keeps it

    def third(grad):
        calls.append(("third", grad.item()))
        return grad * 10

    for hook in (first, second, third):
        y.register_hook(hook)
    y.backward()
    assert calls == [("first", 1.0), ("second", 2.0), ("third", 2.0)]
    np.testing.assert_allclose(x.grad.array, [20.0 * 5])


def test_the_handle_removes_its_hook_only():
    x = leaf([1.0, 2.0])
    keep = x.register_hook(lambda grad: grad * 3)
    handle = x.register_hook(lambda grad: grad * 100)
    handle.remove()
    handle.remove()  # (twice is harmless)
    (2 * x).sum().backward()
    np.testing.assert_allclose(x.grad.array, [6.0, 6.0])
    keep.remove()
    x.grad = None
    (2 * x).sum().backward()
    np.testing.assert_allclose(x.grad.array, [2.0, 2.0])


def test_a_tensor_that_does_not_require_grad_refuses_a_hook():
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't "
                                           "require gradient"):
        dl.tensor([1.0]).register_hook(lambda grad: grad)
    with pytest.raises(RuntimeError, match="doesn't require gradient"), dl.no_grad():
        (leaf([1.0]) * 2).register_hook(lambda grad: grad)
    with pytest.raises(TypeError, match="callable"):
        leaf([1.0]).register_hook(3)


def test_the_replaced_gradient_is_what_accumulates_into_a_leaf_grad():
    w = leaf([1.0, -1.0])
    w.register_hook(lambda grad: grad.clamp(min=0.0))  # (a gradient clipped per element)
    (w * dl.tensor([2.0, -3.0], dtype=dl.float64)).sum().backward()
    (w * dl.tensor([-1.0, 4.0], dtype=dl.float64)).sum().backward()
    np.testing.assert_allclose(w.grad.array, [2.0 + 0.0, 0.0 + 4.0])
    seen = []
    w.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    w.grad = None
    (-w).sum().backward()
    assert seen == [[0.0, 0.0]]  # (the post-accumulate hook sees the replaced gradient)


def test_retain_grad_keeps_the_gradient_the_hooks_returned_whatever_the_order():
    x = leaf([1.0, 2.0])
    y = x * 3
    y.register_hook(lambda grad: grad * 2)
    y.retain_grad()
    z = x * 4
    z.retain_grad()
    z.register_hook(lambda grad: grad - 1)
    (y * y + z).sum().backward()
    np.testing.assert_allclose(y.grad.array, 2 * 2 * np.array([3.0, 6.0]))  # 2 · 2y
    np.testing.assert_allclose(z.grad.array, [0.0, 0.0])  # 1 - 1
    np.testing.assert_allclose(x.grad.array, 3 * 2 * 2 * np.array([3.0, 6.0]))


def test_a_multiplying_hook_is_differentiated_again_with_create_graph():
    x = leaf([1.0, 2.0])
    y = x ** 3
    y.register_hook(lambda grad: grad * x)  # the hook itself depends on x
    (g,) = dl.autograd.grad(y.sum(), x, create_graph=True)
    np.testing.assert_allclose(g.array, [3.0 * 1 ** 3, 3.0 * 2 ** 3])  # x · 3x² = 3x³
    g.sum().backward()
    np.testing.assert_allclose(x.grad.array, [9.0 * 1 ** 2, 9.0 * 2 ** 2])  # d(3x³) = 9x²


def test_a_leaf_hook_with_create_graph_backward():
    x = leaf([2.0])
    handle = x.register_hook(lambda grad: grad * grad)
    (x ** 2).sum().backward(create_graph=True)  # x̄ = (2x)² = 4x²
    np.testing.assert_allclose(x.grad.array, [16.0])
    (g,) = dl.autograd.grad(x.grad.sum(), x, retain_graph=True)  # the hook runs again: (8x)²
    np.testing.assert_allclose(g.array, [16.0 ** 2])
    handle.remove()
    (g,) = dl.autograd.grad(x.grad.sum(), x)
    np.testing.assert_allclose(g.array, [16.0])  # 8x


def test_autograd_grad_returns_the_hooked_gradient_of_leaves_and_results():
    x = leaf([1.0, 2.0])
    x.register_hook(lambda grad: -grad)
    y = x * x
    y.register_hook(lambda grad: grad * 0.5)
    gy, gx = dl.autograd.grad((y * 4).sum(), (y, x))
    np.testing.assert_allclose(gy.array, [2.0, 2.0])
    np.testing.assert_allclose(gx.array, [-2.0 * 2 * 1, -2.0 * 2 * 2])
    assert x.grad is None


def test_a_hook_is_not_called_when_no_gradient_reaches_its_tensor():
    x = leaf([1.0])
    y = x * 2
    called = []
    y.register_hook(lambda grad: called.append(grad))
    (x * 3).sum().backward()
    assert called == []


def test_a_hook_on_a_tensor_changed_in_place_afterwards_sees_the_earlier_value_gradient():
    x = leaf([1.0, 2.0])
    y = x * 1.0
    seen = []
    y.register_hook(lambda grad: seen.append(grad.tolist()))
    y.mul_(3)
    y.sum().backward()
    assert seen == [[3.0, 3.0]]  # d(sum 3y)/dy before the in-place change


def test_a_hook_returning_a_wrong_shape_or_a_non_tensor_is_refused():
    x = leaf([1.0, 2.0])
    y = x * 2
    y.register_hook(lambda grad: grad.sum())
    with pytest.raises(RuntimeError, match="changed the size of value"):
        y.sum().backward()
    z = x * 2
    z.register_hook(lambda grad: 3.0)
    with pytest.raises(TypeError, match="must return a Tensor or None, got float"):
        z.sum().backward()


def test_a_hook_registered_or_run_while_tracing_warns_that_replays_will_not_call_it():
    def f(x):
        y = x * 2
        y.register_hook(lambda grad: grad)
        return y.sum()

    for run in (lambda: dl.jit.trace(f, leaf([1.0, 2.0])), lambda: dl.compile(f)(leaf([1.0]))):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            run()  # (dl.compile also traces f's gradient, which runs the hook: a second warning)
        messages = [str(w.message) for w in caught]
        assert any("will not be called when the traced graph is replayed" in m
                   for m in messages), messages


def test_an_untraced_hook_does_not_warn():
    x = leaf([1.0])
    x.register_hook(lambda grad: grad)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (x * 2).sum().backward()


def test_a_hook_changing_the_dtype_is_refused_with_and_without_create_graph():
    for create_graph in (False, True):
        x = dl.tensor([1.0, 2.0], requires_grad=True)  # float32
        y = x * 2
        y.register_hook(lambda grad: grad.double())
        with pytest.raises(RuntimeError, match="changed the type of value: it was given a "
                                               "float32 gradient and returned a float64"):
            y.sum().backward(create_graph=create_graph)


def test_backward_with_inputs_runs_the_leaf_hook_once():
    x = leaf([1.0, 2.0])
    w = leaf([3.0, 4.0])
    calls = []

    def hook(grad):
        calls.append(grad.tolist())
        return grad * 2

    x.register_hook(hook)
    (x * w).sum().backward(inputs=[x])
    assert calls == [[3.0, 4.0]]
    np.testing.assert_allclose(x.grad.array, [6.0, 8.0])
    assert w.grad is None


def test_a_hook_on_a_hooked_modules_output_sees_the_gradient_the_module_hooks_gave():
    layer = dl.nn.Linear(2, 1).double()
    layer.register_full_backward_pre_hook(lambda module, grad_output: (grad_output[0] * 3,))
    y = layer(leaf([[1.0, 2.0]]))
    seen = []
    y.register_hook(lambda grad: seen.append(grad.tolist()))
    y.sum().backward()
    assert seen == [[[1.0]]]  # (the tensor's hook runs before the module's: y's own gradient)
    np.testing.assert_allclose(layer.bias.grad.array, [3.0])


def test_a_hook_registered_before_a_traced_training_step_warns_when_it_runs_there():
    w = leaf([1.0, 2.0])
    w.register_hook(lambda grad: grad * 2)

    def step(x):
        (w * x).sum().backward()
        return w.grad

    def gradient(x):  # (jit.trace refuses backward() inside; autograd.grad it records)
        return dl.autograd.grad((w * x).sum(), w)[0]

    x = dl.tensor([1.0, 1.0], dtype=dl.float64)
    with pytest.warns(UserWarning, match="ran while difflab.jit traced: the replayed graph "
                                         "will not call it"):
        dl.jit.trace(gradient, x)
    with pytest.raises(dl.jit.GraphError, match="calls backward()"):
        dl.jit.trace(step, x)
    # dl.compile breaks at backward() before it runs: the call is eager, the hook runs there.
    w.grad = None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = dl.compile(step)
        np.testing.assert_array_equal(compiled(x).numpy(), [2.0, 2.0])
    assert compiled.breaks[0].reason.startswith("backward() inside the compiled function")


def test_a_new_leaf_s_hook_slots_read_as_none_and_take_hooks():
    # A leaf created with requires_grad=True (and a parameter) has its hook slots set to
    # None, not left unset: every backward reads them, and reading an unset slot raises
    # inside getattr.  None must mean "no hooks" everywhere, and hooks still register.
    import difflab.nn as nn

    for leaf in (dl.tensor([1.0, 2.0], requires_grad=True), nn.Parameter(dl.ones(2))):
        assert type(leaf)._backward_hooks.__get__(leaf) is None
        assert type(leaf)._post_accumulate_grad_hooks.__get__(leaf) is None
        (leaf * 3.0).sum().backward()
        assert leaf.grad.tolist() == [3.0, 3.0]
        seen = []
        leaf.register_hook(lambda g: g * 2.0)
        leaf.register_post_accumulate_grad_hook(lambda t, seen=seen: seen.append(t.grad.tolist()))
        (leaf * 3.0).sum().backward()
        assert leaf.grad.tolist() == [9.0, 9.0] and seen == [[9.0, 9.0]]
