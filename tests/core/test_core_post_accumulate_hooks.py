"""Tensor.register_post_accumulate_grad_hook and the engine's queue_callback (PyTorch's names)."""

import numpy as np
import pytest

import difflab as dl
from difflab.autograd import engine


def leaf(values):
    return dl.tensor(values, dtype=dl.float64, requires_grad=True)


def test_hook_sees_the_final_gradient_of_a_leaf_used_many_times():
    x = leaf([1.0, 2.0])
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.array.copy()))
    (x * x + 3 * x + x * x * x).sum().backward()  # 2x + 3 + 3x²: three adjoints summed first
    assert len(seen) == 1
    np.testing.assert_array_equal(seen[0], [2 + 3 + 3, 4 + 3 + 12])


def test_hook_gets_the_tensor_and_sees_gradients_accumulated_over_calls():
    w = leaf([1.0, 2.0])
    seen = []

    def hook(t):
        assert t is w
        seen.append(t.grad.tolist())

    w.register_post_accumulate_grad_hook(hook)
    (w * 3).sum().backward()
    (w * 3).sum().backward()
    assert seen == [[3.0, 3.0], [6.0, 6.0]]  # called once per pass, after adding into .grad


def test_hook_on_a_parameter_and_backward_on_the_leaf_itself():
    p = dl.nn.Parameter(dl.tensor([1.0, 2.0], dtype=dl.float64))
    calls = []
    p.register_post_accumulate_grad_hook(lambda t: calls.append(t.grad.tolist()))
    p.backward(dl.tensor([5.0, 6.0], dtype=dl.float64))
    assert calls == [[5.0, 6.0]]


def test_removed_hook_is_not_called_and_removing_twice_is_harmless():
    w = leaf([1.0])
    calls = []
    handle = w.register_post_accumulate_grad_hook(lambda t: calls.append(1))
    (w * 2).sum().backward()
    handle.remove()
    handle.remove()
    (w * 2).sum().backward()
    assert calls == [1]
    with w.register_post_accumulate_grad_hook(lambda t: calls.append(2)):
        (w * 2).sum().backward()
    (w * 2).sum().backward()
    assert calls == [1, 2]


def test_the_same_function_registered_twice_runs_twice():
    w = leaf([1.0])
    calls = []

    def hook(t):
        calls.append(1)

    w.register_post_accumulate_grad_hook(hook)
    w.register_post_accumulate_grad_hook(hook)
    (w * 2).sum().backward()
    assert calls == [1, 1]


def test_autograd_grad_touches_no_grad_and_calls_no_hook():
    w = leaf([1.0, 2.0])
    calls = []
    w.register_post_accumulate_grad_hook(lambda t: calls.append(1))
    (g,) = dl.autograd.grad((w * w).sum(), w)
    assert calls == [] and w.grad is None
    np.testing.assert_array_equal(g.array, [2.0, 4.0])


def test_refused_on_non_leaves_and_on_tensors_without_grad():
    x = leaf([1.0])
    with pytest.raises(RuntimeError, match="non-leaf"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)
    with pytest.raises(RuntimeError, match="do not require grad"):
        dl.tensor([1.0]).register_post_accumulate_grad_hook(lambda t: None)


def test_queued_callback_runs_once_after_every_hook():
    a, b = leaf([1.0, 2.0]), leaf([3.0])
    events = []

    def hook(t):
        events.append(("hook", t is a))
        if len(events) == 1:
            engine.queue_callback(lambda: events.append(("end", a.grad.tolist(), b.grad.tolist())))

    a.register_post_accumulate_grad_hook(hook)
    b.register_post_accumulate_grad_hook(hook)
    ((a * b).sum() + (a * a).sum()).backward()
    assert sorted(events[:2]) == [("hook", False), ("hook", True)]
    assert events[2] == ("end", [3.0 + 2.0, 3.0 + 4.0], [3.0])
    assert len(events) == 3
    (a.sum() * 2).backward()  # the callback was used up: it does not run again
    assert len(events) == 4 and events[3] == ("hook", True)
