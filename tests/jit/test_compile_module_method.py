"""``Module.compile()`` (PyTorch's: the module compiled in place) and modules with hooks
under ``dl.compile``: a hook is Python a graph does not replay, so such a call runs
eagerly, hooks included, every time."""

import copy
import io
import pickle

import numpy as np
import pytest

import difflab as dl
from difflab import nn


def _net():
    dl.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Dropout(0.3), nn.Linear(8, 2))


def test_module_compile_keeps_the_module_and_replays_its_graphs():
    net = _net().eval()
    x = dl.randn(4, 3)
    want = net(x)
    assert net.compile() is None
    assert type(net) is nn.Sequential and list(net.state_dict()) == list(_net().state_dict())
    compiled = net.__dict__["_compiled_call"]
    for _ in range(3):
        np.testing.assert_array_equal(net(x).detach().numpy(), want.detach().numpy())
    assert len(compiled.cache) == 1 and compiled.traces == 1 and compiled.python_runs == 1


def test_module_compile_trains_as_eager_does():
    def train(compiled):
        net = _net()
        if compiled:
            net.compile()
        opt = dl.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
        x, y = dl.randn(6, 3), dl.randn(6, 2)
        dl.manual_seed(1)
        for _ in range(4):
            opt.zero_grad()
            ((net(x) - y) ** 2).mean().backward()
            opt.step()
        net.eval()
        return net(x).detach().numpy()

    np.testing.assert_allclose(train(True), train(False), rtol=1e-6, atol=1e-7)


def test_module_compile_follows_train_and_eval():
    net = _net()
    net.compile()
    x = dl.randn(50, 3)
    net.eval()
    a, b = net(x), net(x)
    assert (a == b).all()  # (no dropout)
    net.train()
    net_plain = _net().train()
    dl.manual_seed(3)
    c = net(x)
    dl.manual_seed(3)
    np.testing.assert_allclose(c.detach().numpy(), net_plain(x).detach().numpy(), rtol=1e-6)
    assert not (c == a).all()  # (dropout on again)


def test_copies_and_saved_modules_are_not_compiled():
    net = _net()
    net.compile()
    net(dl.randn(2, 3))
    for other in (copy.deepcopy(net), pickle.loads(pickle.dumps(net))):
        assert "_compiled_call" not in other.__dict__
        x = dl.randn(2, 3)
        np.testing.assert_array_equal(other.eval()(x).detach().numpy(),
                                      net.eval()(x).detach().numpy())
    buffer = io.BytesIO()
    dl.save(net, buffer)
    buffer.seek(0)
    assert "_compiled_call" not in dl.load(buffer, weights_only=False).__dict__


def test_compiling_again_replaces_the_compiled_call_with_the_new_options():
    net = _net()
    net.compile()
    first = net.__dict__["_compiled_call"]
    net.compile(fullgraph=True)
    assert net.__dict__["_compiled_call"] is not first
    assert net.__dict__["_compiled_call"].fullgraph and not first.fullgraph
    net.eval()(dl.randn(2, 3))


@pytest.mark.parametrize("how", ["dl.compile", "Module.compile"])
def test_forward_hooks_run_at_every_call_of_a_compiled_module(how):
    net = _net().eval()
    seen = []
    net[1].register_forward_hook(lambda module, args, out: seen.append(out.shape))
    net.register_forward_hook(lambda module, args, out: out * 2.0)  # (changes the output)
    x = dl.randn(4, 3)
    want = net(x)
    seen.clear()
    if how == "dl.compile":
        run = dl.compile(net)
    else:
        net.compile()
        run = net
    for _ in range(3):
        np.testing.assert_array_equal(run(x).detach().numpy(), want.detach().numpy())
    assert len(seen) == 3
    explained = dl.jit.explain(net)(x)
    assert "hooks of" in str(explained)


def test_a_traced_module_records_the_operations_of_its_hooks_as_pytorchs_jit_trace():
    net = _net().eval()
    net.register_forward_hook(lambda module, args, out: out * 2.0)
    x = dl.randn(4, 3)
    traced = dl.jit.trace(net, (x,))
    np.testing.assert_array_equal(traced(x).detach().numpy(), net(x).detach().numpy())
