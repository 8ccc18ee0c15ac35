"""Hooks and dl.compile: a hook added or removed after a graph was cached is seen (the
guard holds whether each module has hooks), and a compiled loss's gradients never alias
an input, a constant or each other in ``.grad``."""


import numpy as np
import pytest

import difflab as dl
from difflab import nn

# ------------------------------------------------- gradients handed to .grad


def test_compiled_loss_gradient_is_not_the_parameter_array():
    # d/da sum(a * W) = W: the graph's saved gradient is W's own array; kept as a.grad,
    # a.grad.add_ (or the next backward's +=) wrote into W
    a = dl.ones(3, requires_grad=True)
    w = dl.tensor([1.0, 2.0, 3.0], requires_grad=True)
    f = dl.compile(lambda a, w: (a * w).sum())
    f(a, w).backward()
    f(a, w).backward()  # (accumulates into a.grad)
    assert a.grad.tolist() == [2.0, 4.0, 6.0] and w.tolist() == [1.0, 2.0, 3.0]
    a.grad.add_(1.0)
    assert w.tolist() == [1.0, 2.0, 3.0]


def test_compiled_loss_gradient_is_not_a_captured_constant():
    c = dl.tensor([1.0, 2.0, 3.0])
    f = dl.compile(lambda a: (a * c).sum())
    a = dl.ones(3, requires_grad=True)
    f(a).backward()
    a.grad.mul_(0.0)
    assert c.tolist() == [1.0, 2.0, 3.0]


def test_compiled_loss_gradients_accumulate_as_eager():
    # the gradients of a + b are one broadcast (read-only) array: accumulating into a
    # .grad that was that view failed with "output array is read-only"
    f = dl.compile(lambda a, b: (a + b).sum())
    a, b = dl.ones(3, requires_grad=True), dl.ones(3, requires_grad=True)
    for _ in range(3):
        f(a, b).backward()
    assert a.grad.tolist() == b.grad.tolist() == [3.0, 3.0, 3.0]
    a.grad.add_(1.0)
    assert b.grad.tolist() == [3.0, 3.0, 3.0]


def test_compiled_linear_bias_grad_accumulates():
    lin = nn.Linear(3, 2)
    c = dl.compile(lin)
    x = dl.ones(2, 3)
    c(x).sum().backward()
    c(x).sum().backward()
    lin(x).sum().backward()
    assert lin.bias.grad.tolist() == [6.0, 6.0]


# ------------------------------------------- hooks registered after the graphs are cached


def _net() -> nn.Module:
    dl.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))


def _x() -> dl.Tensor:
    return dl.tensor(np.linspace(-1.0, 1.0, 6).reshape(2, 3), requires_grad=True)


def _compiled(net: nn.Module, how: str):
    """The compiled call of ``net``, three ways: dl.compile(net), net.compile() in place,
    and a plain function calling it (its modules' hooks guarded as those it called)."""
    if how == "dl.compile":
        return dl.compile(net)
    if how == "Module.compile":
        net.compile()
        return net
    return dl.compile(lambda x: net(x) * 1.0)


def _eager(net: nn.Module, x: dl.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """The eager output and x's gradient (the sum's), on a fresh copy of x."""
    x = x.detach().requires_grad_(True)
    saved = net.__dict__.pop("_compiled_call", None)  # (net.compile(): run uncompiled)
    try:
        y = net(x)
    finally:
        if saved is not None:
            net.__dict__["_compiled_call"] = saved
    y.sum().backward()
    return y.detach().numpy(), x.grad.numpy()


def _run(call, x: dl.Tensor) -> tuple[np.ndarray, np.ndarray]:
    x = x.detach().requires_grad_(True)
    y = call(x)
    y.sum().backward()
    return y.detach().numpy(), x.grad.numpy()


HOWS = ["dl.compile", "Module.compile", "a function calling the module"]

# (where, how to register): each changes the output or x's gradient
HOOKS = {
    "forward hook": lambda net: net.register_forward_hook(lambda m, args, out: out * 10.0),
    "forward pre-hook on a submodule":
        lambda net: net[1].register_forward_pre_hook(lambda m, args: (args[0] * 0.5,)),
    "forward hook with kwargs, prepended": lambda net: net[2].register_forward_hook(
        lambda m, args, kwargs, out: out + 1.0, with_kwargs=True, prepend=True),
    "full backward hook": lambda net: net[0].register_full_backward_hook(
        lambda m, grad_in, grad_out: (grad_in[0] * 3.0,)),
    "full backward pre-hook": lambda net: net[2].register_full_backward_pre_hook(
        lambda m, grad_out: (grad_out[0] * -2.0,)),
}


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("hook", sorted(HOOKS))
def test_a_hook_registered_after_caching_is_run_as_eagerly(how, hook):
    net, x = _net(), _x()
    call = _compiled(net, how)
    plain = _run(call, x)
    _run(call, x)  # (the steady replay too)
    handle = HOOKS[hook](net)
    hooked = _run(call, x)
    expected = _eager(net, x)
    np.testing.assert_allclose(hooked[0], expected[0], rtol=1e-6)
    np.testing.assert_allclose(hooked[1], expected[1], rtol=1e-6)
    assert not np.allclose(hooked[0], plain[0]) or not np.allclose(hooked[1], plain[1])
    handle.remove()
    again = _run(call, x)  # removed: as without it
    np.testing.assert_allclose(again[0], plain[0], rtol=1e-6)
    np.testing.assert_allclose(again[1], plain[1], rtol=1e-6)
    np.testing.assert_allclose(again[0], _eager(net, x)[0], rtol=1e-6)


@pytest.mark.parametrize("how", ["dl.compile", "Module.compile"])
def test_after_the_hook_is_removed_the_cached_graphs_replay_again(how):
    net, x = _net(), _x()
    call = _compiled(net, how)
    compiled = call._compiled if how == "dl.compile" else net.__dict__["_compiled_call"]
    _run(call, x)
    with net[1].register_forward_hook(lambda m, args, out: out * 2.0):
        _run(call, x)
    runs = compiled.python_runs
    _run(call, x)
    _run(call, x)
    assert compiled.python_runs == runs  # (replayed: no Python of the model ran)


def test_a_global_module_hook_registered_after_caching_is_run_as_eagerly():
    from difflab.nn.modules.module import (
        register_module_forward_hook,
        register_module_forward_pre_hook,
    )

    net, x = _net(), _x()
    net.compile()  # (in place: no wrapper module for the global hooks to fire on too)
    plain = _run(net, x)
    with register_module_forward_hook(lambda m, args, out: out + 1.0):
        hooked = _run(net, x)
        expected = _eager(net, x)
    np.testing.assert_allclose(hooked[0], expected[0], rtol=1e-6)
    assert not np.allclose(hooked[0], plain[0])
    with register_module_forward_pre_hook(lambda m, args: (args[0] * 2.0,)):
        hooked = _run(net, x)
        expected = _eager(net, x)
    np.testing.assert_allclose(hooked[0], expected[0], rtol=1e-6)
    np.testing.assert_allclose(_run(net, x)[0], plain[0], rtol=1e-6)


def test_dl_compile_of_a_module_warns_that_global_hooks_fire_for_the_wrapper_too():
    from difflab.nn.modules.module import register_module_forward_hook

    net, x = _net(), _x()
    fast = dl.compile(net)
    calls = []
    with register_module_forward_hook(lambda m, args, out: calls.append(type(m).__name__)):
        with pytest.warns(UserWarning, match="fire an extra time for the `OptimizedModule`"):
            fast(x)
    assert calls == ["Linear", "Tanh", "Linear", "Sequential", "OptimizedModule"]


@pytest.mark.parametrize("how", HOWS)
def test_hooks_cleared_through_the_dict_give_the_plain_result(how):
    net, x = _net(), _x()
    call = _compiled(net, how)
    plain = _run(call, x)
    net.register_forward_hook(lambda m, args, out: out * 10.0)
    _run(call, x)
    net._forward_hooks.clear()  # (PyTorch programs do this)
    np.testing.assert_allclose(_run(call, x)[0], plain[0], rtol=1e-6)


@pytest.mark.parametrize("how", HOWS)
def test_a_tensor_hook_on_a_parameter_after_caching_changes_its_grad_as_eagerly(how):
    net, x = _net(), _x()
    call = _compiled(net, how)
    _run(call, x)
    handle = net[0].weight.register_hook(lambda g: g * 0.0 + 1.0)
    net.zero_grad()
    _run(call, x)
    assert net[0].weight.grad.tolist() == [[1.0] * 3] * 4
    handle.remove()


def test_the_graph_break_of_a_late_hook_says_why():
    net, x = _net(), _x()
    fast = dl.compile(net)
    fast(x)
    net[1].register_forward_hook(lambda m, args, out: None)
    fast(x)
    reasons = [b.reason for b in fast._compiled.breaks]
    assert any("the forward hooks of Tanh" in r and "registered after" in r for r in reasons)
    out = dl.jit.explain(fast)(x)
    assert out.graph_count == 0 and "the forward hooks of Tanh" in str(out)
    from difflab.nn.modules.module import register_module_forward_pre_hook
    with register_module_forward_pre_hook(lambda m, args: None):
        out = dl.jit.explain(net)(x)
    assert "forward pre-hooks registered on every module" in str(out)
