"""The eager shortcuts (difflab.autograd.engine_quick: the common call of apply, the walk
with no readers) change no result and no record.

The main test runs one program in two processes, shortcuts on and off
(``DIFFLAB_FASTPATH=0``), and compares every value, gradient and error message bit for
bit.  Another builds each kind of record both ways in one process and compares the
records field by field (parents, what is saved and where it came from, versions, shapes).
The others check that every case the shortcuts leave to the plain path gets there.
"""

import numpy as np
import pytest

import difflab as dl
from difflab.autograd import engine, engine_quick

_PROGRAM = r"""
import sys
import numpy as np
import difflab as dl
import difflab.nn.functional as F

rng = np.random.default_rng(7)
out = {}


def leaf(*shape, dtype=dl.float64):
    return dl.tensor(rng.standard_normal(shape), dtype=dtype, requires_grad=True)


def keep(name, *values):
    for k, v in enumerate(values):
        if isinstance(v, dl.Tensor):
            v = v.grad if v.is_leaf and v.requires_grad else v
            v = None if v is None else v.detach().numpy()
        if isinstance(v, str):
            v = np.frombuffer(v.encode(), dtype=np.uint8)
        out[f"{name}_{k}"] = None if v is None else np.array(v)


def error(name, f):
    try:
        f()
    except Exception as exc:
        keep(name, f"{type(exc).__name__}: {exc}")
    else:
        keep(name, "no error")


# the benchmark's chains: numbers on either side, a value used twice
x = leaf(16)
y = x
for _ in range(10):
    y = dl.tanh(dl.sin(y * 0.999 + 0.001) * 1.01)
y.sum().backward()
keep("chain", x, y)
x = leaf(16)
y = x
for _ in range(10):
    y = ((y * 1.01).sin() + y).tanh()
y.sum().backward()
keep("chain_shared", x, y)

# unary rules saving x (sin), y (exp), both or nothing (neg); numbers on the left
x = leaf(5)
y = dl.sin(x) + dl.exp(x) * 2 - (-x) + 3.0 / (x * x + 1) - 2 ** x + (x.abs() + 1.0).sqrt()
y.backward(dl.ones(5))
keep("unary", x, y)

# the same tensor twice, a detached alias of it, a constant tensor, broadcasting
x, c = leaf(3, 1), dl.tensor(rng.standard_normal(4))
y = x * x + x * x.detach() + c * x + x / c + dl.maximum(x, c) + dl.atan2(x, c)
y.sum().backward()
keep("binary", x, y)
x, w = leaf(4), leaf(4)
(x * w + w * x).backward(dl.ones(4))
keep("two_leaves", x, w)

# 0-d tensors (NumPy returns scalars), float32, integer tensors (no gradient), bool
x = leaf()
y = (x.sin() * x + 1.0).exp()
y.backward()
keep("zero_d", x, y)
x = leaf(6, dtype=dl.float32)
y = (x * 2.5 + x.cos()).tanh()
y.sum().backward()
keep("float32", x, y)
i = dl.tensor([1, 2, 3])
keep("integers", i * 2, i + i, -i, abs(i), i * 1.5, (i > 1) * 1)

# other primitives of one or two inputs (settings, a reduction, matmul), and three
x, w = leaf(3, 4), leaf(4, 2)
y = (x @ w).sum(dim=1).reshape(3, 1) * x.mean()
y.sum().backward()
keep("others", x, w, y)
x = leaf(5)
dl.where(x > 0, x, x * 2).sum().backward()
keep("three_inputs", x)

# no_grad, inference_mode, requires_grad switched on later
x = leaf(3)
with dl.no_grad():
    a = x * 2 + dl.sin(x)
with dl.inference_mode():
    b = dl.exp(x) * x
keep("no_grad", a, b, a.requires_grad, b.requires_grad)

# retain_grad, hooks on a record and a leaf, retain_graph, create_graph (second order)
x = leaf(4)
h = dl.sin(x) * 3.0
h.retain_grad()
h.register_hook(lambda g: g * 2.0)
x.register_hook(lambda g: g + 1.0)
(h * h).sum().backward(retain_graph=True)
keep("hooks", x, h.grad)
(h * h).sum().backward()
keep("hooks_again", x)
x = leaf(4)
(g,) = dl.autograd.grad((x.sin() * x * 0.5).sum(), x, create_graph=True)
g.sum().backward()
keep("second_order", x, g)
x = leaf(3)
gx = dl.autograd.grad((x.tanh() * x).sum(), x)[0]
keep("autograd_grad", gx)

# a module's layers, a loss, an optimizer's steps
dl.manual_seed(0)
model = dl.nn.Sequential(dl.nn.Linear(5, 8), dl.nn.Tanh(), dl.nn.Linear(8, 2)).double()
opt = dl.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
data = dl.tensor(rng.standard_normal((6, 5)))
for step in range(3):
    opt.zero_grad()
    loss = F.mse_loss(model(data), dl.zeros(6, 2, dtype=dl.float64))
    loss.backward()
    opt.step()
    keep(f"training_{step}", loss, *[p.detach() for p in model.parameters()])

# errors: shapes, a saved tensor changed in place, a second backward, the names on the tape
x = leaf(3)
error("shapes", lambda: x * dl.ones(4))
y = x.sin()
with dl.no_grad():
    x.add_(1.0)
error("in_place", lambda: y.sum().backward())
z = x.exp() * 2
z.sum().backward()
error("twice", lambda: z.sum().backward())
keep("names", f"{z.grad_fn!r} {z.grad_fn.next_functions!r} {z.grad_fn.needs_input_grad}")

np.savez(sys.argv[1], **{k: v for k, v in out.items() if v is not None})
"""


def test_shortcuts_on_and_off_give_the_same_results_bit_for_bit(shortcuts_on_and_off):
    shortcuts_on_and_off(_PROGRAM, at_least=45)


# ----------------------------------------------------- the records, field by field


def _record(make, quick: bool, monkeypatch):
    """The record ``make()`` leaves, with the quick path on or off (fresh inputs each)."""
    monkeypatch.setattr(engine, "_quick_apply", engine_quick.quick_apply if quick else None)
    rng = np.random.default_rng(3)
    x = dl.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    y = x * 1.0  # (a result: its record is the parent)
    c = dl.tensor(rng.standard_normal(4))
    z = make(x, y, c)
    inputs = {id(x): "x", id(y): "y", id(c): "c", id(x.array): "x.array",
              id(y.array): "y.array", id(c.array): "c.array", id(z.array): "out",
              id(y.grad_fn): "y.grad_fn", id(x._version): "x._version",
              id(y._version): "y._version", id(c._version): "c._version",
              id(z._version): "z._version"}
    node = z.grad_fn
    if node is None:
        return ("not recorded", z.array.tolist(), z.dtype)

    def name(v):
        if v is engine.OUTPUT:
            return "OUTPUT"
        return inputs.get(id(v), v if v is None or isinstance(v, float) else type(v).__name__)

    sources = getattr(node, "saved_sources", None) or ()  # (unset when nothing is saved)
    return (node.op.name, tuple(map(name, node.parents)), node.needs_input_grad,
            tuple(map(name, node.saved)), tuple(map(name, sources)),
            [(name(box), v) for box, v in node.saved_versions], node.output_meta,
            dict(vars(node)), z.array.tobytes(), name(z._version))


@pytest.mark.fastpath("12. eager recording")
@pytest.mark.parametrize("make", [
    lambda x, y, c: y.sin(), lambda x, y, c: y.exp(), lambda x, y, c: y.tanh(),
    lambda x, y, c: -y, lambda x, y, c: y.abs().sqrt(), lambda x, y, c: x.sin(),
    lambda x, y, c: y * 2.0, lambda x, y, c: 2.0 * y, lambda x, y, c: y * y,
    lambda x, y, c: y * y.detach(), lambda x, y, c: y.detach() * y, lambda x, y, c: y / c,
    lambda x, y, c: c / y, lambda x, y, c: y + x, lambda x, y, c: y ** 2,
    lambda x, y, c: 3 ** y, lambda x, y, c: dl.maximum(y, c), lambda x, y, c: c * 2,
    lambda x, y, c: y.sum(dim=0), lambda x, y, c: y.reshape(4, 3), lambda x, y, c: y @ y.T,
    lambda x, y, c: y.sum(), lambda x, y, c: y[0, 1] * y[1, 0], lambda x, y, c: y > 0,
    lambda x, y, c: (y * 3).long(),
], ids=lambda f: "")
def test_the_quick_record_is_the_plain_record(make, monkeypatch):
    assert _record(make, True, monkeypatch) == _record(make, False, monkeypatch)


# ------------------------------------------------------------------ where they run


def _spy(monkeypatch, name):
    calls = []
    original = getattr(engine_quick, name)

    def spy(*args):
        result = original(*args)
        calls.append(result)
        return result

    monkeypatch.setattr(engine_quick, name, spy)
    monkeypatch.setattr(engine, "_quick_apply", engine_quick.quick_apply)
    return calls


@pytest.mark.fastpath("12. eager recording")
def test_the_quick_apply_takes_the_common_call_only(monkeypatch):
    calls = _spy(monkeypatch, "quick_apply")
    x = dl.tensor([0.5, 1.5], requires_grad=True)
    x.sin() * 2.0
    x.sum(dim=0)
    assert all(r is not None for r in calls) and len(calls) == 3
    calls.clear()
    dl.where(x > 0, x, x)                                 # three inputs
    if engine.BFLOAT16 is not None:
        x.to(dl.bfloat16) * 2.0                            # bfloat16 (computed in float32)
    with dl.autograd.detect_anomaly():                     # anomaly mode
        x.sin()
    dl.func.vmap(dl.sin)(dl.ones(3, 2))                    # vmap (its batched call)
    traced = dl.jit.trace(lambda t: t.sin() * 2.0, (x,))  # the graph tracer
    assert calls.count(None) >= 3 and traced(x).tolist() == (x.sin() * 2.0).tolist()


@pytest.mark.fastpath("12. eager recording")
def test_a_gpu_array_goes_the_plain_way(monkeypatch, device):
    calls = _spy(monkeypatch, "quick_apply")
    x = dl.tensor([0.5, 1.5], device=device, requires_grad=True)
    (x.sin() * 2.0).sum().backward()
    assert x.grad.tolist() == pytest.approx((2 * np.cos([0.5, 1.5])).tolist())
    expected = None if device == "cuda" else "a tensor"
    assert all((r is None) == (expected is None) for r in calls)


@pytest.mark.fastpath("13. eager walk")
def test_the_quick_walk_leaves_readers_and_hooks_to_the_plain_walk(monkeypatch):
    calls = _spy(monkeypatch, "quick_walk")
    x = dl.tensor([0.5, 1.5], requires_grad=True)
    (x.sin() * 2.0).sum().backward()
    assert calls == [True]
    y = x.sin()
    y.retain_grad()
    (y * 2.0).sum().backward()                                  # a reader: not asked
    y = x.sin()
    y.register_hook(lambda g: g)
    (y * 2.0).sum().backward()                                  # a hook: declined
    dl.autograd.grad((x.sin() * 2.0).sum(), x)                   # autograd.grad: not asked
    (x.sin() * 2.0).sum().backward(create_graph=True)           # recorded: not asked
    assert calls == [True, False]
    x.grad = None


def _computed_output_op():
    """A primitive whose forward hands back an array computed before (as dl.compile's
    replayed output does) and saves nothing."""
    from difflab.ops.primitive import Primitive

    class Handed(Primitive):
        name = "handed"

        def __init__(self, out):
            self.out = out

        def forward(self, ctx, xp, *arrays):
            return self.out

        def vjp(self, ctx, xp, g):
            return tuple(g * (k + 1.0) for k in range(len(ctx.parents)))

    return Handed


@pytest.mark.fastpath("8. dl.compile's later calls")
def test_quick_record_makes_the_record_apply_makes():
    handed = _computed_output_op()
    rng = np.random.default_rng(5)
    x = dl.tensor(rng.standard_normal(3), requires_grad=True)
    y = x * 1.0  # (a result: its record is the parent)
    c = dl.tensor(rng.standard_normal(3))
    for inputs in [(x,), (y, c), (c, x, y)]:
        out = rng.standard_normal(3)
        quick = engine_quick.quick_record(handed(out), inputs, out)
        plain = engine.apply(handed(out), *inputs)
        a, b = quick.grad_fn, plain.grad_fn
        assert quick.array is out and plain.array is out
        assert a.parents == b.parents and a.needs_input_grad == b.needs_input_grad
        assert a.output_meta == b.output_meta and a.saved == b.saved == ()
        assert list(a.saved_versions) == list(b.saved_versions) == []
        assert quick._version == plain._version == [0] and quick.requires_grad
        assert a.seq == b.seq - 1  # (numbered in the order made)
        quick.backward(dl.ones(3), retain_graph=True)
        first = x.grad.clone()
        x.grad = None
        plain.backward(dl.ones(3), retain_graph=True)
        assert np.array_equal(first.numpy(), x.grad.numpy())
        x.grad = None


@pytest.mark.fastpath("8. dl.compile's later calls")
def test_quick_record_leaves_every_other_call_to_apply():
    handed = _computed_output_op()
    x = dl.tensor([1.0, 2.0], requires_grad=True)
    c = dl.tensor([1.0, 2.0])
    out = np.array([3.0, 4.0])
    assert engine_quick.quick_record(handed(out), (c,), out) is None          # no grad needed
    assert engine_quick.quick_record(handed(out), (x, 2.0), out) is None      # a number
    assert engine_quick.quick_record(handed(out.astype(int)), (x,), out.astype(int)) is None
    with dl.no_grad():
        assert engine_quick.quick_record(handed(out), (x,), out) is None
    with dl.autograd.detect_anomaly():
        assert engine_quick.quick_record(handed(out), (x,), out) is None
    with dl.autograd.tape():
        assert engine_quick.quick_record(handed(out), (x,), out) is None
    assert engine_quick.quick_record(handed(out), (x,), out) is not None


def test_the_shortcuts_name_their_table_entries():
    from difflab import fastpath

    assert "12. eager recording" in fastpath.__doc__ and "13. eager walk" in fastpath.__doc__
