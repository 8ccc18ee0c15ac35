"""dl.compile's speed shortcut (difflab.jit.steady): a steady-state call checks its guard
through a quick key.  Each test compares with the plain path (the shortcut off), bit for bit,
and checks that every change of guard the plain path catches is still caught."""

import doctest

import numpy as np
import pytest

import difflab as dl
import difflab.nn as nn
from difflab import fastpath
from difflab.jit import compiler, steady

rng = np.random.default_rng(7)


def chain(x):
    for _ in range(10):
        x = dl.tanh(dl.sin(x * 0.999 + 0.001) * 1.01)
    return x.sum()


def two_outputs(x, w):
    y = (x * w).sin()
    return y, (y * y).sum()


def run_both(make, calls):
    """The results of ``calls(f)`` with the shortcut on and off, on fresh compiled functions.

    Switching it on needs the shortcuts the import hooked in: a test that calls this
    carries the ``fastpath`` marker (skipped with ``DIFFLAB_FASTPATH=0``)."""
    results = []
    for enabled in (True, False):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(fastpath, "ENABLED", enabled)
            results.append(calls(make()))
    return results


def arrays(values):
    return [v.detach().numpy() if isinstance(v, dl.Tensor) else np.asarray(v) for v in values]


def assert_bitwise(a, b):
    assert len(a) == len(b)
    for x, y in zip(arrays(a), arrays(b)):
        assert x.dtype == y.dtype and x.shape == y.shape
        assert np.array_equal(x, y, equal_nan=True)


# ------------------------------------------------------------------ same results


@pytest.mark.fastpath("8. dl.compile's later calls")
def test_a_loss_and_its_gradient_equal_the_plain_path_bit_for_bit():
    inputs = [rng.standard_normal(16) for _ in range(4)]

    def calls(f):
        out = []
        for a in inputs:
            x = dl.tensor(a, requires_grad=True)
            loss = f(x)
            loss.backward()
            out += [loss, x.grad]
        return out

    on, off = run_both(lambda: dl.compile(chain), calls)
    assert_bitwise(on, off)


@pytest.mark.fastpath("8. dl.compile's later calls")
def test_several_outputs_and_their_gradients_equal_the_plain_path_bit_for_bit():
    inputs = [(rng.standard_normal((3, 4)), rng.standard_normal(4)) for _ in range(3)]

    def calls(f):
        out = []
        for a, b in inputs:
            x, w = dl.tensor(a), dl.tensor(b, requires_grad=True)
            y, s = f(x, w)
            (y.sum() + s).backward()
            out += [y, s, w.grad]
        return out

    on, off = run_both(lambda: dl.compile(two_outputs), calls)
    assert_bitwise(on, off)


@pytest.mark.fastpath("8. dl.compile's later calls")
def test_training_a_compiled_module_equals_the_plain_path_bit_for_bit():
    data = [(rng.standard_normal((8, 3)), rng.standard_normal((8, 1))) for _ in range(4)]

    def make():
        dl.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1))
        return model, dl.compile(model), dl.optim.Adam(model.parameters(), lr=0.01)

    def calls(made):
        model, compiled, opt = made
        out = []
        for a, b in data:
            opt.zero_grad()
            loss = ((compiled(dl.tensor(a)) - dl.tensor(b)) ** 2).mean()
            loss.backward()
            opt.step()
            out.append(loss)
        return out + [p.detach() for p in model.parameters()]

    on, off = run_both(make, calls)
    assert_bitwise(on, off)


@pytest.mark.fastpath("8. dl.compile's later calls")
def test_a_graph_break_takes_both_branches_as_the_plain_path():
    def flip(x):
        y = x.sin()
        return (y * 2).sum() if y.sum() > 0 else (-y).sum()

    inputs = [rng.uniform(0, 1, 5), rng.uniform(-1, 0, 5)] * 2

    def calls(f):
        out = []
        for a in inputs:
            x = dl.tensor(a, requires_grad=True)
            y = f(x)
            y.backward()
            out += [y, x.grad]
        return out

    on, off = run_both(lambda: dl.compile(flip), calls)
    assert_bitwise(on, off)


# ------------------------------------------------------------------ the shortcut is taken


@pytest.mark.fastpath("8. dl.compile's later calls")
def test_a_steady_call_does_not_build_the_full_guard(monkeypatch):
    f = dl.compile(chain)
    f(dl.tensor(rng.standard_normal(4)))
    f(dl.tensor(rng.standard_normal(4)))
    assert len(f.cache.quick) == 1

    def refuse(*args):
        raise AssertionError("the full guard was built")

    x = dl.tensor(rng.standard_normal(4))
    want = float(f(x))
    monkeypatch.setattr(compiler, "_flatten", refuse)
    assert float(f(x)) == want
    # (eager differs from the fused kernel's sin and tanh by rounding, for some inputs)
    assert want == pytest.approx(float(chain(x)), rel=1e-13)



@pytest.mark.fastpath("8. dl.compile's later calls")
def test_a_guard_that_runs_eagerly_is_known_by_its_quick_key(monkeypatch):
    """A training step (backward() inside) runs eagerly: its later calls skip the full
    guard too, and still equal eager steps."""
    start = rng.standard_normal(3)
    w = [dl.tensor(start.copy(), requires_grad=True) for _ in range(2)]

    def step(x, w):
        w.grad = None
        loss = (w * x).sin().sum()
        loss.backward()
        return loss

    f = dl.compile(lambda x: step(x, w[0]))
    x = dl.tensor(rng.standard_normal(3))
    f(x)
    assert isinstance(next(iter(f.cache.values())), compiler._Eager)
    assert len(f.cache.quick) == 1

    def refuse(*args):
        raise AssertionError("the full guard was built")

    monkeypatch.setattr(compiler, "_flatten", refuse)
    for _ in range(2):
        assert float(f(x)) == float(step(x, w[1]))
        np.testing.assert_array_equal(w[0].grad.numpy(), w[1].grad.numpy())

def test_with_the_shortcuts_off_no_quick_key_is_kept(monkeypatch):
    monkeypatch.setattr(fastpath, "ENABLED", False)
    f = dl.compile(chain)
    f(dl.ones(3))
    f(dl.ones(3))
    assert f.cache.quick == {}


def test_calls_of_another_kind_take_the_plain_path():
    f = dl.compile(lambda x, k=1.0: (x * k).sum())
    f(dl.ones(3), 2.0)
    f(dl.ones(3), k=2.0)
    f(np.ones(3))
    assert f.cache.quick == {}
    assert steady.quick_key((dl.ones(2), [dl.ones(2)]), ((), ())) is None


# ------------------------------------------------------------------ a changed guard is caught


@pytest.mark.fastpath("8. dl.compile's later calls")
@pytest.mark.parametrize("change", ["shape", "dtype", "requires_grad", "grad_mode"])
def test_a_changed_argument_guard_is_still_caught(change):
    f = dl.compile(lambda x: (x * 3.0).exp().sum())
    x = dl.tensor(rng.standard_normal(4))
    f(x)
    f(x)
    assert f.traces == 1 and len(f.cache.quick) == 1
    if change == "shape":
        y = dl.tensor(rng.standard_normal(5))
    elif change == "dtype":
        y = dl.tensor(rng.standard_normal(4), dtype=dl.float32)
    elif change == "requires_grad":
        y = dl.tensor(rng.standard_normal(4), requires_grad=True)
    else:
        y = dl.tensor(rng.standard_normal(4), requires_grad=True)
        f(y)
        traced = f.traces
        with dl.no_grad():
            out = f(y)
        assert f.traces == traced + 1 and not out.requires_grad
        return
    out = f(y)
    assert f.traces == 2
    assert out.dtype == y.dtype and out.requires_grad == y.requires_grad
    np.testing.assert_allclose(out.detach().numpy(), (y * 3.0).exp().sum().detach().numpy(),
                               rtol=1e-6)


def test_a_module_s_training_flag_and_parameter_identity_are_still_caught():
    model = nn.Linear(3, 2)
    f = dl.compile(model)
    x = dl.tensor(rng.standard_normal((4, 3)))
    f(x)
    f(x)
    assert f._compiled.traces == 1
    model.eval()
    f(x)
    assert f._compiled.traces == 2
    model.weight = nn.Parameter(dl.tensor(rng.standard_normal((2, 3))))
    out = f(x)
    assert f._compiled.traces == 3
    np.testing.assert_array_equal(out.detach().numpy(), model(x).detach().numpy())
    model.weight = nn.Parameter(dl.tensor(rng.standard_normal((2, 4))))  # (a new shape)
    with pytest.raises(ValueError):
        f(x)


@pytest.mark.fastpath("8. dl.compile's later calls")
def test_a_change_of_the_cache_forgets_the_quick_keys():
    f = dl.compile(chain)
    f(dl.ones(3))
    f(dl.ones(3))
    assert f.cache.quick
    f.cache.clear()
    assert f.cache.quick == {}
    f(dl.ones(3))
    assert f.traces == 2
    for change in (lambda c: c.pop(next(iter(c))), lambda c: c.popitem(),
                   lambda c: c.update({}), lambda c: c.setdefault("k", None)):
        f(dl.ones(3))
        assert f.cache.quick
        change(f.cache)
        assert f.cache.quick == {}


def test_a_captured_weight_that_changes_shape_is_traced_again():
    w = dl.tensor(rng.standard_normal(3), requires_grad=True)
    f = dl.compile(lambda x: (x * w).sum())
    f(dl.ones(3))
    f(dl.ones(3))
    w.array = rng.standard_normal(1)  # (the graph read a (3,) weight: stale)
    out = f(dl.ones(3))
    assert f.traces == 2
    assert float(out) == pytest.approx(float((dl.ones(3) * w).sum()))


def test_the_quick_keys_are_bounded():
    cache = steady.GuardCache({"g": 1})
    for k in range(20):
        cache.remember(("quick", k), "g", 1)
    assert len(cache.quick) <= 4


@pytest.mark.fastpath("8. dl.compile's later calls")
def test_the_examples_in_the_docstrings_run():
    assert doctest.testmod(steady).failed == 0


# ------------------------------------------------------------------ the prepared replay


@pytest.mark.fastpath("8. dl.compile's later calls")
def test_graphs_returning_one_tensor_get_the_prepared_replay_and_others_do_not():
    loss = dl.compile(chain)
    loss(dl.ones(3))
    pairs = dl.compile(two_outputs)
    pairs(dl.ones(3), dl.ones(3))
    model = nn.BatchNorm1d(3)  # (its running statistics: in-place updates)
    norm = dl.compile(model)
    norm(dl.tensor(rng.standard_normal((4, 3))))
    replays = [next(iter(f.cache.quick.values()))[2] for f in (loss, pairs, norm._compiled)]
    assert isinstance(replays[0], steady.SingleOutput) and replays[1:] == [None, None]


@pytest.mark.fastpath("8. dl.compile's later calls")
def test_the_prepared_replay_without_grad_equals_the_plain_path_bit_for_bit():
    inputs = [rng.standard_normal((2, 3)) for _ in range(3)]

    def calls(f):
        with dl.no_grad():
            return [f(dl.tensor(a, requires_grad=True)) for a in inputs]

    on, off = run_both(lambda: dl.compile(lambda x: dl.tanh(x) * 2.0), calls)
    assert not any(o.requires_grad for o in on)
    assert_bitwise(on, off)


def test_the_prepared_replay_keeps_the_backward_graph_for_a_second_derivative():
    f = dl.compile(lambda x: (x ** 3).sum())
    for _ in range(2):
        x = dl.tensor([1.0, 2.0], requires_grad=True)
        (g,) = dl.autograd.grad(f(x), [x], create_graph=True)
        (h,) = dl.autograd.grad(g.sum(), [x])
    assert g.detach().tolist() == [3.0, 12.0] and h.tolist() == [6.0, 12.0]


# ------------------------------------------------------------ the module's state, watched


class _Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 4), nn.Tanh())
        self.norm = nn.BatchNorm1d(4)
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.norm(self.body(x)))


def _changes():
    """Every way a module's state can change between two calls, each made on `model`."""
    rng = np.random.default_rng(3)  # (the same numbers in both runs: drawn once, here)
    weights = rng.standard_normal((2, 4))

    def new_weight(m):
        m.head.weight = nn.Parameter(dl.tensor(weights, dtype=dl.float32))

    def new_child(m):
        m.body[1] = nn.Sigmoid()

    def new_buffer(m):
        m.norm.running_mean = dl.zeros(4)

    def weight_data(m):
        m.head.weight.data = dl.tensor(weights, dtype=dl.float64)

    def freeze(m):
        m.body[0].bias.requires_grad_(False)

    def renamed(m):
        m.head._parameters["weight_"] = m.head._parameters.pop("weight")
        m.head._parameters["weight"] = m.head._parameters.pop("weight_")

    def added(m):
        m.head.extra = nn.Parameter(dl.ones(2))

    def new_dict(m):
        m.head._parameters = {"weight": nn.Parameter(dl.tensor(weights, dtype=dl.float32)),
                              "bias": m.head.bias}

    def in_place(m):
        with dl.no_grad():
            m.head.weight.mul_(0.5)            # the same tensors: no new graph needed

    return {"sub-module eval": lambda m: m.norm.eval(), "new weight": new_weight,
            "new child": new_child, "new buffer": new_buffer, "weight dtype": weight_data,
            "frozen bias": freeze, "renamed and back": renamed, "parameter added": added,
            "new dict of parameters": new_dict,
            "weights changed in place": in_place, "nothing": lambda m: None}


@pytest.mark.fastpath("8. dl.compile's later calls")
@pytest.mark.parametrize("name", list(_changes()))
def test_every_change_of_a_module_s_state_is_seen_as_the_plain_path_sees_it(name):
    change = _changes()[name]

    def calls(f):
        model = f._orig_mod
        x = dl.tensor(np.linspace(-1, 1, 15).reshape(5, 3), dtype=dl.float32)
        outs = [f(x), f(x)]
        change(model)
        outs += [f(x.to(model.head.weight.dtype)), f(x.to(model.head.weight.dtype))]
        loss = outs[-1].sum()
        loss.backward()
        return outs + [p.grad for p in model.parameters() if p.grad is not None] + [
            dl.tensor(f._compiled.traces)]

    def make():
        dl.manual_seed(0)
        return dl.compile(_Block())

    on, off = run_both(make, calls)
    assert_bitwise(on, off)


@pytest.mark.fastpath("8. dl.compile's later calls")
def test_an_unchanged_module_is_not_walked_again(monkeypatch):
    model = _Block()
    f = dl.compile(model)
    x = dl.tensor(np.ones((5, 3)), dtype=dl.float32)
    f(x)
    walks = []
    original = steady._walk
    monkeypatch.setattr(steady, "_walk", lambda fn: walks.append(fn) or original(fn))
    f(x)
    f(x)
    assert walks == []
    model.train(False)
    f(x)
    f(x)
    assert len(walks) == 1


@pytest.mark.fastpath("8. dl.compile's later calls")
@pytest.mark.parametrize("make", [
    lambda: (dl.compile(chain), lambda: (dl.tensor(rng.standard_normal(8), requires_grad=True),)),
    lambda: (dl.compile(lambda x, w: (x * w).sin()),
             lambda: (dl.tensor(rng.standard_normal((3, 4))),
                      dl.tensor(rng.standard_normal(4), requires_grad=True))),
], ids=["a loss", "a tensor"])
def test_the_steady_record_is_made_directly_and_is_the_one_apply_makes(make, monkeypatch):
    from difflab.autograd import engine_quick

    f, inputs = make()
    f(*inputs())  # (the first call traces; the later ones take the prepared replay)
    made = []
    original = engine_quick.quick_record
    monkeypatch.setattr(engine_quick, "quick_record",
                        lambda *a: made.append(original(*a)) or made[-1])
    args = inputs()
    quick = f(*args)
    monkeypatch.setattr(engine_quick, "quick_record", lambda *a: None)  # (apply makes it)
    plain = f(*args)
    assert len(made) == 1 and made[0] is quick
    a, b = quick.grad_fn, plain.grad_fn
    assert type(a.op) is type(b.op) and type(a.op.call) is steady.HandingOverCall
    assert a.parents == b.parents and a.needs_input_grad == b.needs_input_grad
    assert a.output_meta == b.output_meta and a.saved == b.saved
    assert list(a.saved_versions) == list(b.saved_versions)
    grads = []
    for y in (quick, plain):
        y.sum().backward() if y.ndim else y.backward()
        grads.append([t.grad for t in args if t.requires_grad])
        for t in args:
            t.grad = None
    assert_bitwise(grads[0], grads[1])


@pytest.mark.fastpath("8. dl.compile's later calls")
def test_a_steady_loss_hands_its_gradients_over_at_the_implicit_seed_only():
    f = dl.compile(chain)
    x = dl.tensor(rng.standard_normal(8), requires_grad=True)
    f(x)
    loss = f(x)
    call = loss.grad_fn.op.call
    # (ids, not the arrays: an array the test held would not be handed over; a copy is
    # made while the saved array lives, so it has another id)
    saved = [id(a) for a in call.saved]
    loss.backward(retain_graph=True)  # (the seed 1 made by backward: handed over as is)
    assert call.saved is None and id(x.grad.array) == saved[0]
    first = x.grad.numpy().copy()
    loss.backward(dl.tensor(2.0))  # (a user's seed: computed again and scaled)
    assert np.array_equal(x.grad.numpy(), first * 3.0)
