"""Module forward hooks (torch.nn.Module.register_forward_pre_hook / register_forward_hook)."""

import copy

import pytest

import difflab as dl
import difflab.nn as nn


def test_a_forward_hook_sees_the_inputs_and_the_output_and_can_replace_it():
    lin = nn.Linear(2, 1)
    seen = []
    handle = lin.register_forward_hook(lambda m, args, out: seen.append((m, args, out)))
    x = dl.ones(3, 2)
    y = lin(x)
    assert len(seen) == 1 and seen[0][0] is lin and seen[0][1][0] is x and seen[0][2] is y
    handle.remove()
    lin(x)
    assert len(seen) == 1, "a removed hook is not called"
    with lin.register_forward_hook(lambda m, args, out: out * 0):
        assert float(lin(x).abs().sum()) == 0.0
    assert float(lin(x).abs().sum()) > 0.0, "the with block removed the hook"


def test_a_pre_hook_can_replace_the_inputs_and_hooks_run_in_order():
    order = []
    relu = nn.ReLU()
    relu.register_forward_pre_hook(lambda m, args: order.append("pre1"))
    relu.register_forward_pre_hook(lambda m, args: (args[0] + 10,))
    relu.register_forward_pre_hook(lambda m, args: order.append("first"), prepend=True)
    relu.register_forward_hook(lambda m, args, out: order.append("post"))
    out = relu(dl.tensor([-1.0]))
    assert out.tolist() == [9.0] and order == ["first", "pre1", "post"]
    single = nn.ReLU()
    single.register_forward_pre_hook(lambda m, args: args[0] - 5)  # not a tuple: one argument
    assert single(dl.tensor([1.0])).tolist() == [0.0]


def test_hooks_with_kwargs_see_and_replace_the_keyword_arguments():
    class Scale(nn.Module):
        def forward(self, x, factor=1.0):
            return x * factor

    m = Scale()
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"factor": 3.0}),
                                with_kwargs=True)
    got = []
    m.register_forward_hook(lambda mod, args, kwargs, out: got.append(kwargs), with_kwargs=True)
    assert m(dl.tensor([2.0]), factor=5.0).tolist() == [6.0]
    assert got == [{"factor": 3.0}]


def test_hooks_on_a_child_run_when_the_parent_calls_it_and_gradients_flow():
    net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    activations = {}
    net[1].register_forward_hook(lambda m, args, out: activations.__setitem__("relu", out))
    net(dl.ones(4, 2)).sum().backward()
    assert tuple(activations["relu"].shape) == (4, 3)
    assert net[0].weight.grad is not None


def test_a_hook_that_is_not_callable_is_refused_and_copies_keep_their_hooks():
    lin = nn.Linear(2, 1)
    with pytest.raises(TypeError, match="callable"):
        lin.register_forward_hook("not a function")
    calls = []
    lin.register_forward_hook(lambda m, args, out: calls.append(m))
    twin = copy.deepcopy(lin)
    twin(dl.ones(1, 2))
    assert calls and calls[0] is not lin, "the copy calls its own (copied) hook"
