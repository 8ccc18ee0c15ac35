"""``loss.backward()`` of a one-record tape (difflab.autograd.engine_loss, shortcut 18)
changes no result, and runs only where it should.

The main test runs one program of backward passes in two processes, shortcuts on and off
(``DIFFLAB_FASTPATH=0``), and compares every gradient bit for bit: compiled losses in
float64 and float32, a loss of shape (1,), gradients adding up, ``retain_graph``, hooks
on the leaves, a callback queued during the walk, eager one-record losses, and a compiled
module trained for a few steps; a leaf reached twice and a slice's adjoint (the
engine's adjoint store, not the direct delivery).
"""

import pytest

import difflab as dl
from difflab import fastpath
from difflab.autograd import engine_loss

_PROGRAM = r"""
import sys
import numpy as np
import difflab as dl
import difflab.nn as nn
import difflab.nn.functional as F
from difflab.autograd import engine

rng = np.random.default_rng(7)
out = {}


def leaf(*shape, dtype=dl.float64):
    return dl.tensor(rng.standard_normal(shape), dtype=dtype, requires_grad=True)


def keep(name, *tensors):
    for k, t in enumerate(tensors):
        value = t.grad if t.is_leaf and t.requires_grad else t
        out[f"{name}_{k}"] = None if value is None else np.array(value.detach().numpy())


def chain(x):
    for _ in range(8):
        x = dl.tanh(dl.sin(x * 0.999 + 0.001) * 1.01)
    return x.sum()


# a compiled loss (its gradients handed over at the implicit seed), float64 and float32,
# the first call (trace) and the steady ones, gradients adding up over calls
for dtype in (dl.float64, dl.float32):
    f = dl.compile(chain)
    x = leaf(16, dtype=dtype)
    for step in range(4):
        f(x).backward()
        keep(f"chain_{dtype}_{step}", x)

# two inputs, one used twice; a loss of shape (1,); retain_graph then a second backward
g = dl.compile(lambda x, w: ((x * w).sin() * x).sum().reshape(1))
x, w = leaf(8), leaf(8)
loss = g(x, w)
loss.backward(retain_graph=True)
keep("shape1_a", x, w)
loss.backward()
keep("shape1_b", x, w)

# a leaf with a hook, one with a post-accumulate hook, a callback queued by a hook
f = dl.compile(lambda x, w: (x * w).tanh().sum())
x, w = leaf(5), leaf(5)
x.register_hook(lambda grad: grad * 3.0)
seen = []
w.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.detach().numpy().copy()))
for step in range(2):
    f(x, w).backward()
    keep(f"hooks_{step}", x, w)
out["hooks_seen"] = seen[-1]
calls = []
x = leaf(5)
x.register_hook(lambda grad: (engine.queue_callback(lambda: calls.append(1)), grad)[1])
f(x, w).backward()
keep("callback", x, w)
out["callback_ran"] = np.array(len(calls))

# eager one-record losses: a sum, a dot product, a norm
x, w = leaf(6), leaf(6)
x.sum().backward()
dl.dot(x, w).backward()
w.norm().backward()
keep("eager", x, w)

# one record reaching a leaf twice (the store adds the two up), a slice's adjoint (the
# store writes it out), a constant among the inputs
x, w = leaf(6), leaf(6)
dl.dot(x, x).backward()
x[2].backward()
x[3].backward(retain_graph=True)
dl.dot(w, dl.tensor(rng.standard_normal(6))).backward()
keep("store", x, w)

# a compiled module trained with Adam
dl.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3)).double()
net = dl.compile(lambda data, labels: F.cross_entropy(model(data), labels))
opt = dl.optim.Adam(model.parameters(), lr=0.05)
data, labels = dl.tensor(rng.standard_normal((6, 4))), dl.tensor(rng.integers(0, 3, 6))
for step in range(4):
    opt.zero_grad()
    net(data, labels).backward()
    keep(f"train_{step}_grads", *model.parameters())
    opt.step()
    keep(f"train_{step}_params", *[p.detach() for p in model.parameters()])

np.savez(sys.argv[1], **{k: v for k, v in out.items() if v is not None})
"""


def test_shortcut_on_and_off_gives_the_same_gradients_bit_for_bit(shortcuts_on_and_off):
    shortcuts_on_and_off(_PROGRAM, at_least=40)


@pytest.mark.fastpath("18. a loss's backward")
def test_the_shortcut_takes_a_plain_loss_backward_of_one_record(monkeypatch):
    taken = []
    original = engine_loss.backward_one_record
    monkeypatch.setattr(engine_loss, "backward_one_record",
                        lambda *a: taken.append(original(*a)) or taken[-1])
    f = dl.compile(lambda v: (v * v).sum())
    x = dl.tensor([1.0, 2.0], requires_grad=True)
    f(x).backward()
    f(x).backward()
    assert taken == [True, True] and x.grad.tolist() == [4.0, 8.0]
    x.sum().backward()                                            # eager, one record
    assert taken[-1] is True and x.grad.tolist() == [5.0, 9.0]


@pytest.mark.fastpath("18. a loss's backward")
def test_every_other_call_takes_the_plain_path(monkeypatch):
    """The shortcut answers False (and the plain path runs) for a tape of two records, a
    loss that is not one number, a gradient, inputs, create_graph, anomaly detection; the
    plain path's errors are unchanged."""
    taken = []
    original = engine_loss.backward_one_record
    monkeypatch.setattr(engine_loss, "backward_one_record",
                        lambda *a: taken.append(original(*a)) or taken[-1])
    x = dl.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()                                      # two records
    f = dl.compile(lambda v: v * 2.0)
    f(x).sum().backward()                                         # two records
    assert taken == [False, False]
    with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
        f(x).backward()                                           # not one number
    assert taken[-1] is False
    before = len(taken)
    loss = dl.compile(lambda v: (v * v).sum())
    loss(x).backward(dl.tensor(1.0))                              # a gradient given
    loss(x).backward(inputs=[x])                                  # inputs given
    loss(x).backward(create_graph=True)                           # recorded
    assert len(taken) == before
    with dl.autograd.detect_anomaly():
        loss(x).backward()
    assert taken[-1] is False
    with pytest.raises(RuntimeError, match="does not require grad"):
        dl.tensor(1.0).backward()
    assert taken[-1] is False


@pytest.mark.fastpath("18. a loss's backward")
def test_a_second_backward_without_retain_graph_fails_as_on_the_plain_path():
    x = dl.tensor([1.0, 2.0], requires_grad=True)
    loss = x.sum()
    loss.backward()
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()
    loss = x.sum()
    loss.backward(retain_graph=True)
    loss.backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_the_examples_in_the_docstrings_run():
    import doctest

    if not fastpath.ENABLED:
        pytest.skip("the examples show the shortcut taking a call")
    failures, _ = doctest.testmod(engine_loss, optionflags=doctest.ELLIPSIS)
    assert failures == 0
