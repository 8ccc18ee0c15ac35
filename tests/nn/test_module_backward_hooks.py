"""Module backward hooks (torch.nn.Module.register_full_backward_hook and friends), the
forward hooks' always_call, and the hooks of every module (register_module_*_hook).

PyTorch's documented behaviour, checked against what the tape computes without hooks:
``grad_input`` holds the gradients of the positional arguments (None for a non-tensor or a
tensor that does not require grad), ``grad_output`` those of the outputs, and what a hook
returns replaces them on their way back.
"""

import warnings

import numpy as np
import pytest

import difflab as dl
import difflab.nn as nn
from difflab.nn.modules import module as module_mod


def _net():
    dl.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))


def test_the_hook_sees_the_gradients_the_tape_computes():
    net = _net()
    x = dl.randn(5, 3, requires_grad=True)
    hidden = net[1](net[0](x))
    (grad_hidden,) = dl.autograd.grad(net[2](hidden).pow(2).sum(), hidden)
    grad_out = 2 * net(x).detach()  # d(sum y²)/dy
    seen = []
    net[2].register_full_backward_hook(lambda m, gi, go: seen.append((m, gi, go)))
    net(x).pow(2).sum().backward()
    assert len(seen) == 1
    module, grad_input, grad_output = seen[0]
    assert module is net[2] and len(grad_input) == 1 and len(grad_output) == 1
    np.testing.assert_allclose(grad_input[0].numpy(), grad_hidden.numpy(), rtol=1e-6)
    np.testing.assert_allclose(grad_output[0].numpy(), grad_out.numpy(), rtol=1e-6)
    assert not grad_input[0].requires_grad and not grad_output[0].requires_grad


def test_a_returned_grad_input_is_what_the_layers_before_receive():
    net, reference = _net(), _net()
    x = dl.randn(5, 3)
    reference(x).sum().backward()
    net[2].register_full_backward_hook(lambda m, gi, go: (3 * gi[0],))
    net(x).sum().backward()
    # the hooked layer's own parameters: unchanged; the layers before: three times
    np.testing.assert_allclose(net[2].weight.grad.numpy(), reference[2].weight.grad.numpy(),
                               rtol=1e-6)
    np.testing.assert_allclose(net[0].weight.grad.numpy(),
                               3 * reference[0].weight.grad.numpy(), rtol=1e-5)
    np.testing.assert_allclose(net[0].bias.grad.numpy(), 3 * reference[0].bias.grad.numpy(),
                               rtol=1e-5)


def test_a_pre_hook_replaces_grad_output_for_the_module_and_what_follows():
    net, reference = _net(), _net()
    x = dl.randn(5, 3)
    reference(x).sum().backward()
    seen = []
    net[2].register_full_backward_pre_hook(lambda m, go: (go[0] * 0.5,))
    net[2].register_full_backward_hook(lambda m, gi, go: seen.append(go[0]))
    net(x).sum().backward()
    assert seen[0].tolist() == [[0.5, 0.5]] * 5, "the full hook sees the replaced grad_output"
    for layer in (0, 2):
        np.testing.assert_allclose(net[layer].weight.grad.numpy(),
                                   0.5 * reference[layer].weight.grad.numpy(), rtol=1e-5)


def test_hooks_run_in_order_and_a_handle_removes_its_hook():
    lin = nn.Linear(2, 2)
    calls = []
    first = lin.register_full_backward_hook(lambda m, gi, go: calls.append("first"))
    lin.register_full_backward_hook(lambda m, gi, go: calls.append("prepended"), prepend=True)
    x = dl.ones(1, 2, requires_grad=True)
    lin(x).sum().backward()
    assert calls == ["prepended", "first"]
    first.remove()
    lin(x).sum().backward()
    assert calls == ["prepended", "first", "prepended"]
    with lin.register_full_backward_pre_hook(lambda m, go: calls.append("pre")):
        lin(x).sum().backward()
    lin(x).sum().backward()
    assert calls[3:] == ["pre", "prepended", "prepended"]


class _Mixer(nn.Module):
    """Two tensor inputs and a number; three outputs, one of them not a tensor."""

    def forward(self, a, b, scale):
        return a * b, scale * (a + b), "a label"


def test_several_inputs_and_outputs_match_position_for_position():
    a = dl.tensor([1.0, 2.0], requires_grad=True)
    b = dl.tensor([3.0, 5.0], requires_grad=True)
    mixer = _Mixer()
    seen = []

    def hook(module, grad_input, grad_output):
        seen.append((grad_input, grad_output))
        return grad_input[0], grad_input[1] * 0, None  # b gets no gradient

    mixer.register_full_backward_hook(hook)
    product, total, label = mixer(a, b, 2.0)
    assert label == "a label"
    (product.sum() + 10 * total.sum()).backward()
    grad_input, grad_output = seen[0]
    assert len(grad_input) == 3 and grad_input[2] is None
    assert len(grad_output) == 3 and grad_output[2] is None
    assert grad_output[0].tolist() == [1.0, 1.0] and grad_output[1].tolist() == [10.0, 10.0]
    assert grad_input[0].tolist() == [3.0 + 20.0, 5.0 + 20.0]  # b + 10·scale
    assert grad_input[1].tolist() == [1.0 + 20.0, 2.0 + 20.0]  # a + 10·scale
    assert a.grad.tolist() == [23.0, 25.0] and b.grad.tolist() == [0.0, 0.0]


def test_an_output_that_is_not_used_gets_none_in_grad_output():
    mixer = _Mixer()
    seen = []
    mixer.register_full_backward_pre_hook(lambda m, go: seen.append(go))
    a = dl.tensor([1.0], requires_grad=True)
    product, _, _ = mixer(a, dl.tensor([2.0]), 1.0)
    product.sum().backward()
    assert seen[0][0].tolist() == [1.0] and seen[0][1] is None and seen[0][2] is None
    assert a.grad.tolist() == [2.0]


def test_no_input_requiring_grad_gives_none_and_the_hook_still_runs():
    lin = nn.Linear(2, 1)
    seen = []
    lin.register_full_backward_hook(lambda m, gi, go: seen.append((gi, go)))
    lin(dl.ones(4, 2)).sum().backward()  # only the parameters require grad
    assert seen[0][0] == (None,) and seen[0][1][0].shape == (4, 1)
    assert lin.weight.grad.tolist() == [[4.0, 4.0]]
    lin.register_full_backward_hook(lambda m, gi, go: (dl.ones(4, 2),))
    with pytest.raises(RuntimeError, match="no input requires gradient"):
        lin(dl.ones(4, 2)).sum().backward()


def test_a_tensor_input_that_does_not_require_grad_gets_none():
    mixer = _Mixer()
    seen = []
    mixer.register_full_backward_hook(lambda m, gi, go: seen.append(gi))
    a = dl.tensor([1.0], requires_grad=True)
    product, _, _ = mixer(a, dl.tensor([2.0]), 1.0)
    product.sum().backward()
    assert seen[0][0].tolist() == [2.0] and seen[0][1] is None and seen[0][2] is None


def test_wrong_returns_are_refused_with_what_was_expected():
    lin = nn.Linear(2, 1)
    x = dl.ones(1, 2, requires_grad=True)
    with lin.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0])):
        with pytest.raises(RuntimeError, match="got 2, but expected 1"):
            lin(x).sum().backward()
    with lin.register_full_backward_hook(lambda m, gi, go: (dl.ones(3),)):
        with pytest.raises(RuntimeError, match=r"shape \(3,\) for a tensor of shape \(1, 2\)"):
            lin(x).sum().backward()
    with lin.register_full_backward_pre_hook(lambda m, go: ()):
        with pytest.raises(RuntimeError, match="invalid number of grad_output"):
            lin(x).sum().backward()
    with pytest.raises(TypeError, match="callable"):
        lin.register_full_backward_hook("not a function")


def test_the_tape_shows_the_identity_records_and_no_grad_skips_them():
    lin = nn.Linear(2, 1)
    lin.register_full_backward_hook(lambda m, gi, go: None)
    x = dl.ones(1, 2, requires_grad=True)
    y = lin(x)
    assert y.grad_fn.name() == "BackwardHookFunctionBackward"
    inner = y.grad_fn.next_functions[0][0]
    assert inner.name() != "BackwardHookFunctionBackward"
    with dl.no_grad():
        assert lin(x).grad_fn is None


def test_hooks_run_again_on_a_second_backward_and_with_create_graph():
    lin = nn.Linear(1, 1, bias=False)
    with dl.no_grad():
        lin.weight.fill_(3.0)
    calls = []
    lin.register_full_backward_hook(lambda m, gi, go: calls.append(gi[0]))
    x = dl.tensor([[2.0]], requires_grad=True)
    y = lin(x) ** 2  # 9x² → dy/dx = 18x = 36, d²y/dx² = 18
    (g,) = dl.autograd.grad(y.sum(), x, create_graph=True)
    assert g.tolist() == [[36.0]] and calls[0].tolist() == [[36.0]]
    assert g.requires_grad
    g.sum().backward()
    assert x.grad.tolist() == [[18.0]]


def test_a_hook_on_a_model_sees_its_input_and_its_children_hooks_run_inside():
    net = _net()
    order = []
    net.register_full_backward_hook(lambda m, gi, go: order.append("net"))
    net[0].register_full_backward_hook(lambda m, gi, go: order.append("first layer"))
    net[2].register_full_backward_hook(lambda m, gi, go: order.append("last layer"))
    x = dl.randn(2, 3, requires_grad=True)
    net(x).sum().backward()
    assert order == ["last layer", "first layer", "net"]


def test_the_deprecated_register_backward_hook_warns_and_runs_as_a_full_hook():
    lin = nn.Linear(2, 1)
    seen = []
    with pytest.warns(FutureWarning, match="register_full_backward_hook"):
        lin.register_backward_hook(lambda m, gi, go: seen.append(gi))
    x = dl.ones(1, 2, requires_grad=True)
    lin(x).sum().backward()
    np.testing.assert_allclose(seen[0][0].numpy(), lin.weight.detach().numpy())
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full"):
        lin.register_full_backward_hook(lambda m, gi, go: None)
    other = nn.Linear(2, 1)
    other.register_full_backward_hook(lambda m, gi, go: None)
    with pytest.raises(RuntimeError, match="Cannot use both"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        other.register_backward_hook(lambda m, gi, go: None)


def test_an_output_that_is_not_a_tensor_or_tuple_warns():
    class Dict(nn.Module):
        def forward(self, x):
            return {"y": x * 2}

    module = Dict()
    module.register_full_backward_hook(lambda m, gi, go: None)
    with pytest.warns(UserWarning, match="module output should be a Tensor or a tuple"):
        out = module(dl.ones(2, requires_grad=True))
    assert out["y"].tolist() == [2.0, 2.0]


def test_backward_hooks_are_not_saved_with_the_module(tmp_path):
    lin = nn.Linear(2, 1)
    lin.register_full_backward_hook(lambda m, gi, go: None)
    lin.register_full_backward_pre_hook(lambda m, go: None)
    path = tmp_path / "lin.pt"
    dl.save(lin, path)
    loaded = dl.load(path, weights_only=False)
    assert not loaded.__dict__.get("_backward_hooks")
    loaded(dl.ones(1, 2, requires_grad=True)).sum().backward()  # (no registry: still runs)


# ------------------------------------------------------------------- always_call


def test_an_always_call_hook_runs_when_forward_raises_and_the_error_stays():
    class Failing(nn.Module):
        def forward(self, x):
            raise ValueError("forward failed")

    module = Failing()
    calls = []
    module.register_forward_hook(lambda m, args, out: calls.append(("plain", out)))
    module.register_forward_hook(lambda m, args, out: calls.append(("always", out)),
                                 always_call=True)
    with pytest.raises(ValueError, match="forward failed"):
        module(dl.ones(1))
    assert calls == [("always", None)]


def test_an_always_call_hook_runs_once_and_its_own_error_becomes_a_warning():
    relu = nn.ReLU()
    calls = []

    def always(m, args, out):
        calls.append(out)
        raise KeyError("hook failed")

    relu.register_forward_hook(always, always_call=True)

    def failing(m, args, out):
        raise ValueError("later hook failed")

    relu.register_forward_hook(failing)
    with pytest.raises(KeyError):  # it ran (and raised) in the normal order: not again
        relu(dl.ones(1))
    assert len(calls) == 1
    lone = nn.ReLU()
    lone.register_forward_pre_hook(lambda m, args: 1 / 0)
    lone.register_forward_hook(always, always_call=True)
    with pytest.raises(ZeroDivisionError), pytest.warns(UserWarning, match="hook failed"):
        lone(dl.ones(1))
    assert calls[-1] is None


def test_a_with_kwargs_pre_hook_must_return_a_pair():
    relu = nn.ReLU()
    relu.register_forward_pre_hook(lambda m, args, kwargs: args, with_kwargs=True)
    with pytest.raises(RuntimeError, match=r"tuple of \(new_args, new_kwargs\)"):
        relu(dl.ones(1))


# ------------------------------------------------------------- every module's hooks


def test_global_hooks_run_for_every_module_before_its_own_and_are_removed():
    net = _net()
    order = []
    net[0].register_forward_hook(lambda m, args, out: order.append("own"))
    handles = [
        module_mod.register_module_forward_pre_hook(
            lambda m, args: order.append(f"pre {type(m).__name__}")),
        module_mod.register_module_forward_hook(
            lambda m, args, out: order.append(f"post {type(m).__name__}")),
        module_mod.register_module_full_backward_pre_hook(
            lambda m, go: order.append(f"bpre {type(m).__name__}")),
        module_mod.register_module_full_backward_hook(
            lambda m, gi, go: order.append(f"bwd {type(m).__name__}")),
    ]
    try:
        net(dl.ones(1, 3, requires_grad=True)).sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    assert order[:4] == ["pre Sequential", "pre Linear", "post Linear", "own"]
    assert order[-2:] == ["bwd Linear", "bwd Sequential"]
    assert "bpre Tanh" in order and "bwd Tanh" in order
    count = len(order)
    net(dl.ones(1, 3, requires_grad=True)).sum().backward()
    assert order[count:] == ["own"], "removed global hooks do not run"


def test_the_deprecated_global_backward_hook_warns():
    with pytest.warns(FutureWarning):
        handle = module_mod.register_module_backward_hook(lambda m, gi, go: None)
    handle.remove()
    assert not module_mod._global_backward_hooks


def test_an_in_place_change_of_a_hooked_modules_input_or_output_is_refused():
    # PyTorch forbids it too: the identity records' tensors share the memory of the
    # tensors they stand for, so a silent in-place change would make wrong gradients.
    class Triple(nn.Module):
        def forward(self, x):
            return x.mul_(3)

    a = dl.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1.0
    squared = b ** 2  # (saves b)
    module = Triple()
    module.register_full_backward_hook(lambda m, gi, go: None)
    with pytest.raises(RuntimeError, match="in-place operation mul_ on a view"):
        module(b)
    squared.sum().backward()
    assert a.grad.tolist() == [2.0, 4.0], "b was left as it was"
    layer = nn.Linear(2, 2)
    layer.register_full_backward_hook(lambda m, gi, go: None)
    out = layer(dl.ones(1, 2))
    with pytest.raises(RuntimeError, match="clone"):
        out += 1
    out.clone().add_(1).sum().backward()  # (a clone may be changed)


def test_tracing_a_module_with_backward_hooks_warns_that_replays_skip_them():
    net = nn.Sequential(nn.Linear(2, 3), nn.Tanh())
    net[1].register_full_backward_hook(lambda m, gi, go: None)
    with pytest.warns(UserWarning, match="Tanh has backward hooks, which the traced graph"):
        dl.jit.trace(net, dl.ones(4, 2))
