"""The backward walk's speed shortcuts (difflab.autograd.engine_steady, and the handing over
of a compiled backward's gradients in difflab.jit.steady) change no result.

The main test runs one program of backward passes in two processes, shortcuts on and off
(``DIFFLAB_FASTPATH=0``), and compares every gradient bit for bit: one-record tapes and
longer ones, slices' and embeddings' adjoints, hooks, ``retain_grad``, ``retain_graph``,
``create_graph``, gradients adding up over two backward calls, leaves that need no
gradient, ``autograd.grad``, and training a compiled module.  The others check that the
shortcuts run where they should and only there, and that a gradient handed over is
nobody else's memory.
"""

import numpy as np
import pytest

import difflab as dl
import difflab.nn as nn
from difflab import fastpath
from difflab.autograd import engine, engine_steady
from difflab.jit import joint, steady

_PROGRAM = r"""
import sys
import numpy as np
import difflab as dl
import difflab.nn as nn
import difflab.nn.functional as F

rng = np.random.default_rng(5)
out = {}


def leaf(*shape, dtype=dl.float64):
    return dl.tensor(rng.standard_normal(shape), dtype=dtype, requires_grad=True)


def keep(name, *tensors):
    for k, t in enumerate(tensors):
        value = t.grad if isinstance(t, dl.Tensor) and t.is_leaf and t.requires_grad else t
        out[f"{name}_{k}"] = None if value is None else np.array(value.detach().numpy())


# one record: a product of two leaves, the same leaf twice, a sum (a broadcast adjoint)
x, w = leaf(5), leaf(5)
(x * w).backward(dl.tensor(rng.standard_normal(5)))
keep("mul", x, w)
x = leaf(4)
(x * x).backward(dl.tensor(rng.standard_normal(4)))
keep("square", x)
x = leaf(3, 2)
x.sum().backward()
keep("sum", x)

# a slice's adjoint (left unwritten by the shortcuts until it reaches the leaf), and an
# embedding's rows (a scatter into zeros): the "sparse" adjoints of dense tensors
x = leaf(6)
x[1:4].backward(dl.tensor(rng.standard_normal(3)))
x[2:5].sum().backward()
keep("slices", x)
emb = nn.Embedding(5, 3).double()
emb(dl.tensor([1, 3, 1])).sum().backward()
keep("embedding", emb.weight)

# gradients adding up over two backward calls; retain_graph; a float32 leaf
x, w = leaf(6, dtype=dl.float32), leaf(6, dtype=dl.float32)
y = x * w
y.backward(dl.ones(6), retain_graph=True)
y.backward(dl.full((6,), 0.5))
keep("twice", x, w)

# a leaf that needs no gradient, a constant
x, c = leaf(4), dl.tensor(rng.standard_normal(4))
(x * c).sum().backward()
(c * x).backward(dl.ones(4))
keep("constant", x)

# hooks: a leaf's tensor hook, a post-accumulate hook, a hook on the output's record
x, w = leaf(3), leaf(3)
x.register_hook(lambda g: g * 3.0)
seen = []
w.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.detach().numpy().copy()))
y = x * w
y.register_hook(lambda g: g + 1.0)
y.backward(dl.ones(3))
keep("hooks", x, w)
out["hooks_seen"] = seen[0]

# retain_grad on a one-record output, and on a longer tape
x = leaf(3)
y = x * 2.0
y.retain_grad()
y.backward(dl.ones(3))
keep("retain_grad", x, y.grad)
x = leaf(3)
y = x.sin()
z = (y * y).sum()
y.retain_grad()
z.backward()
keep("retain_grad_long", x, y.grad)

# create_graph: a second derivative through a one-record tape
x = leaf(4)
y = x ** 3
(g,) = dl.autograd.grad(y, x, dl.ones(4), create_graph=True)
g.sum().backward()
keep("second", x, g)
x = leaf(4)
y = x * x
y.backward(dl.ones(4), create_graph=True)
keep("create_graph", x)

# autograd.grad (no .grad written)
x, w = leaf(5), leaf(5)
gx, gw = dl.autograd.grad(x * w, [x, w], dl.ones(5))
keep("autograd_grad", gx, gw)

# a compiled loss (one record on the tape), twice, and with retain_graph
f = dl.compile(lambda x, w: ((x * w).sin() * 1.5).sum())
for step in range(3):
    x, w = leaf(8), leaf(8)
    loss = f(x, w)
    loss.backward(retain_graph=step == 2)
    if step == 2:
        loss.backward()
    keep(f"compiled_loss_{step}", x, w)

# a compiled module's output (its backward graph's gradients handed over), then a loss:
# training, gradients adding up without zero_grad, a parameter frozen, Adam and SGD
for name, make, optimizer in [
        ("mlp", lambda: nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3)), "SGD"),
        ("attention", lambda: AttentionBlock(), "Adam")]:
    class AttentionBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention = nn.MultiheadAttention(8, 2, batch_first=True)
            self.norm, self.head = nn.LayerNorm(8), nn.Linear(8, 3)

        def forward(self, x):
            a, _ = self.attention(x, x, x, need_weights=False)
            return self.head(self.norm(x + a).mean(1))

    dl.manual_seed(0)
    model = make().double()
    net = dl.compile(model)
    opt = getattr(dl.optim, optimizer)(net.parameters(), lr=0.05, **(
        {"momentum": 0.9} if optimizer == "SGD" else {}))
    shape = (4, 6) if name == "mlp" else (2, 5, 8)
    data = dl.tensor(rng.standard_normal(shape))
    labels = dl.tensor(rng.integers(0, 3, shape[0]))
    params = list(model.parameters())
    for step in range(4):
        if step != 1:
            opt.zero_grad()
        if step == 3:
            params[-1].requires_grad_(False)
            params[-1].grad = None
        loss = F.cross_entropy(net(data), labels)
        loss.backward()
        keep(f"{name}_{step}_grads", *[p for p in params if p.grad is not None])
        opt.step()
        keep(f"{name}_{step}_params", *[p.detach() for p in params])

np.savez(sys.argv[1], **{k: v for k, v in out.items() if v is not None})
"""


def test_shortcuts_on_and_off_give_the_same_gradients_bit_for_bit(shortcuts_on_and_off):
    shortcuts_on_and_off(_PROGRAM, at_least=40)


# ------------------------------------------------------------ where they run


def _spy(monkeypatch, module, name):
    calls = []
    original = getattr(module, name)

    def spy(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return calls


@pytest.mark.fastpath("10. one-record backward walk")
def test_the_one_record_walk_runs_for_one_record_only(monkeypatch):
    walks = _spy(monkeypatch, engine_steady, "walk_one_record")
    x, w = dl.tensor([1.0, 2.0], requires_grad=True), dl.tensor([3.0, 4.0], requires_grad=True)
    (x * w).backward(dl.ones(2))
    assert len(walks) == 1 and x.grad.tolist() == [3.0, 4.0]
    for longer in [lambda: (x * w).sum(),                       # two records
                   lambda: (x * w).sin()]:
        longer().backward(dl.ones(()) if longer().ndim == 0 else dl.ones(2))
    y = x * w
    y.retain_grad()                                               # a reader on the way
    y.backward(dl.ones(2))
    y = x * w
    y.register_hook(lambda g: g)                                  # a hook on the record
    y.backward(dl.ones(2))
    y = x * w
    y.backward(dl.ones(2), create_graph=True)                     # a recorded backward
    dl.autograd.grad(x * w, [x], dl.ones(2))                      # autograd.grad
    with dl.autograd.detect_anomaly():
        (x * w).backward(dl.ones(2))
    assert len(walks) == 1


@pytest.mark.fastpath("10. one-record backward walk")
def test_leaves_with_hooks_or_another_dtype_take_the_plain_step(monkeypatch):
    plain = _spy(monkeypatch, engine, "_deliver_to_leaf")
    x = dl.tensor([1.0, 2.0], requires_grad=True)
    (x * 2.0).sum().backward()
    assert plain == []
    x.register_hook(lambda g: g * 2.0)
    (x * 2.0).sum().backward()
    assert len(plain) == 1 and x.grad.tolist() == [6.0, 6.0]
    w = dl.tensor([1.0, 2.0], requires_grad=True)
    w.register_post_accumulate_grad_hook(lambda p: None)
    (w * 2.0).sum().backward()
    assert len(plain) == 2 and w.grad.tolist() == [2.0, 2.0]


# ------------------------------------------------------------ handing over


@pytest.mark.fastpath("6. fresh adjoints kept")
def test_hand_over_marks_only_arrays_that_nothing_else_holds():
    assert joint.HANDS_OVER == fastpath.ENABLED
    if not joint.HANDS_OVER:
        pytest.skip("this interpreter counts references in another way: nothing is handed over")
    shared, base = np.ones(3), np.ones(6)
    twice = np.ones(2)
    results = [np.zeros(3), shared, shared[:2] * 1.0, base.reshape(2, 3), np.ones(6)[::2],
               np.broadcast_to(np.ones(1), (4,)), twice, twice, np.ones(6).reshape(2, 3),
               np.ones(4).T, np.asfortranarray(np.ones((2, 3)))]
    marked = [type(r) is fastpath.FreshAdjoint for r in joint.hand_over(results)]
    assert marked == [True, False, True, False, False, False, False, False, True, True, False]


@pytest.mark.fastpath("6. fresh adjoints kept")
def test_a_handed_over_gradient_is_nobody_else_s_memory():
    """The gradients of a compiled module become .grad without a copy: writing into one
    in place must not change anything a later backward reads (retain_graph), nor another
    gradient."""
    dl.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double()
    net = dl.compile(model)
    x = dl.tensor(np.linspace(-1, 1, 6).reshape(2, 3))
    net(x)
    y = net(x)                                                    # the steady replay
    assert type(y.grad_fn.op.call) is steady.HandingOverCall
    y.backward(dl.ones(2, 2), retain_graph=True)
    first = [p.grad.detach().numpy().copy() for p in model.parameters()]
    call = y.grad_fn.op.call
    held = [a for a in call.arrays + call.saved if isinstance(a, np.ndarray)]
    for p in model.parameters():
        assert not any(np.shares_memory(p.grad.array, a) for a in held)
        p.grad.array[...] = 1e9                                    # in place, as zero_ would
        p.grad = None
    y.backward(dl.ones(2, 2))
    for p, g in zip(model.parameters(), first):
        assert p.grad.detach().numpy().tobytes() == g.tobytes()
    grads = [p.grad.array for p in model.parameters()]
    assert not any(np.shares_memory(a, b) for i, a in enumerate(grads) for b in grads[:i])


def test_the_examples_in_the_docstrings_run():
    import doctest

    for module in (engine_steady, steady) if fastpath.ENABLED else (engine_steady,):
        failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert failures == 0
