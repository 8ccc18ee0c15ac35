"""Adam's, AdamW's and SGD's flat update over a group (difflab.optim.foreach) changes no
result: the same training runs in two processes, the shortcut on and off
(``DIFFLAB_FASTPATH=0``), and every parameter and state buffer is compared bit for bit;
then the cases that must take the plain path do, and the state stays the user's."""

import sys

import numpy as np
import pytest

import difflab as dl
from difflab.optim import foreach

_PROGRAM = r"""
import sys
import numpy as np
import difflab as dl

out = {}
shapes = [(3, 4), (4,), (2, 2, 3), (5,)]


def run(name, make, dtype=np.float64, steps=5, freeze_at=None, reload_at=None, scheduler=False,
        groups=False, big=False):
    rng = np.random.default_rng(11)
    sizes = [(300, 40)] + shapes if big else shapes
    params = [dl.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True)
              for s in sizes]
    opt = make([{"params": params[:2]}, {"params": params[2:], "lr": 0.03}] if groups
               else params)
    sched = dl.optim.lr_scheduler.StepLR(opt, 2, 0.5) if scheduler else None
    for step in range(steps):
        opt.zero_grad()
        loss = sum(((p * p).sin() * (k + 1.0)).sum() for k, p in enumerate(params))
        loss.backward()
        if freeze_at is not None and step >= freeze_at:
            params[1].grad = None                 # a parameter without a gradient
        if reload_at == step:
            state = opt.state_dict()
            opt = make([{"params": params[:2]}, {"params": params[2:], "lr": 0.03}] if groups
                       else params)
            opt.load_state_dict(state)
        opt.step()
        if sched is not None:
            sched.step()
    for k, p in enumerate(params):
        out[f"{name}_p{k}"] = p.detach().numpy().copy()
        for key, value in opt.state.get(p, {}).items():
            out[f"{name}_p{k}_{key}"] = np.asarray(value.detach().numpy() if hasattr(
                value, "detach") else value)


def run_aliased(name, make):
    # Two parameters over one array, overlapping: the plain path updates them one after
    # the other (weight decay reads the first one's new values).
    memory = np.random.default_rng(12).standard_normal(10)
    params = [dl.Tensor._wrap(memory[:6].reshape(2, 3)), dl.Tensor._wrap(memory[4:])]
    for p in params:
        p.requires_grad_(True)
    opt = make(params)
    for _ in range(3):
        opt.zero_grad()
        sum(((p * p).sin() * (k + 1.0)).sum() for k, p in enumerate(params)).backward()
        opt.step()
    out[f"{name}_memory"] = memory.copy()


def run_same_array(name, make):
    # Two parameters holding the very same array (nn.Parameter(p.detach())): neither is a
    # view, yet each step's weight decay reads what the other wrote.
    a = dl.nn.Parameter(dl.tensor([1.0, 2.0, 3.0], dtype=dl.float64))
    b = dl.nn.Parameter(a.detach())
    opt = make([a, b])
    for _ in range(2):
        opt.zero_grad()
        ((a * a).sum() + (b * 3.0).sum()).backward()
        opt.step()
    out[f"{name}_a"] = a.detach().numpy().copy()


O = dl.optim
run_same_array("same_array_adam", lambda p: O.Adam(p, lr=0.1, weight_decay=0.5))
run_same_array("same_array_sgd", lambda p: O.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.5))
run_aliased("aliased_adam", lambda p: O.Adam(p, lr=0.01, weight_decay=0.5))
run_aliased("aliased_adamw", lambda p: O.AdamW(p, lr=0.01, weight_decay=0.5))
run_aliased("aliased_adam_no_decay", lambda p: O.Adam(p, lr=0.01))
run_aliased("aliased_sgd", lambda p: O.SGD(p, lr=0.01, momentum=0.9, weight_decay=0.5))
for dtype in (np.float64, np.float32):
    d = np.dtype(dtype).name
    run(f"adam_{d}", lambda p: O.Adam(p, lr=0.01), dtype)
    run(f"adamw_{d}", lambda p: O.AdamW(p, lr=0.01, weight_decay=0.1), dtype)
    run(f"adam_all_{d}", lambda p: O.Adam(p, lr=0.02, weight_decay=0.05, amsgrad=True,
                                          maximize=True), dtype)
    run(f"sgd_{d}", lambda p: O.SGD(p, lr=0.05, momentum=0.9), dtype)
    run(f"sgd_all_{d}", lambda p: O.SGD(p, lr=0.05, momentum=0.8, nesterov=True,
                                        weight_decay=0.01, maximize=True), dtype)
    run(f"sgd_damp_{d}", lambda p: O.SGD(p, lr=1.0, momentum=0.5, dampening=0.3), dtype)
    run(f"sgd_plain_{d}", lambda p: O.SGD(p, lr=0.05), dtype)
run("adam_freeze", lambda p: O.Adam(p, lr=0.01), freeze_at=2)
run("sgd_freeze", lambda p: O.SGD(p, lr=0.01, momentum=0.9), freeze_at=2)
run("adam_reload", lambda p: O.Adam(p, lr=0.01), reload_at=2)
run("sgd_reload", lambda p: O.SGD(p, lr=0.01, momentum=0.9), reload_at=3)
run("adam_scheduler_groups", lambda p: O.Adam(p, lr=0.01), scheduler=True, groups=True)
run("adam_big", lambda p: O.Adam(p, lr=0.01), big=True)
run("adam_numpy_lr_float32", lambda p: O.Adam(p, lr=np.float64(0.01)), np.float32)
run("sgd_numpy_lr_float32", lambda p: O.SGD(p, lr=np.float64(0.01), momentum=0.9),
    np.float32)
np.savez(sys.argv[1], **out)
"""


def test_the_flat_update_equals_the_plain_path_bit_for_bit(shortcuts_on_and_off):
    shortcuts_on_and_off(_PROGRAM, at_least=100)


# numba loaded (as a compiled model loads it): Adam's flat update is one numba loop
_WITH_NUMBA = "import numba  # noqa: F401\n" + _PROGRAM.replace(
    "np.savez(sys.argv[1], **out)",
    "from difflab.optim import foreach\n"
    "assert sys.argv[2] == 'off' or foreach._KERNEL and foreach._SGD_KERNEL  # (loops ran)\n"
    "np.savez(sys.argv[1], **out)")


@pytest.mark.slow
def test_adam_s_loop_equals_the_plain_path_bit_for_bit(shortcuts_on_and_off):
    pytest.importorskip("numba")
    shortcuts_on_and_off(_WITH_NUMBA, at_least=100)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("amsgrad", [False, True])
def test_adam_s_loop_gives_the_numpy_lines_bits_nan_and_inf_included(monkeypatch, dtype,
                                                                     amsgrad):
    pytest.importorskip("numba")
    import numba  # noqa: F401  (loaded: the loop is allowed)

    def train(loop):
        if not loop:
            monkeypatch.setattr(foreach, "_adam_kernel", lambda dtype: None)
        rng = np.random.default_rng(4)
        params = [dl.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True)
                  for s in [(4, 3), (5,), (2,)]]
        opt = dl.optim.AdamW(params, lr=0.05, weight_decay=0.1, amsgrad=amsgrad)
        for step in range(4):
            opt.zero_grad()
            sum(((p * p).sin() * (k + 1.0)).sum() for k, p in enumerate(params)).backward()
            if step == 2:  # (a NaN, an infinity and a -0 in the gradients)
                params[0].grad.array[0, :3] = [np.nan, np.inf, -0.0]
            with np.errstate(invalid="ignore"):
                assert foreach.adam_step(opt, opt.param_groups[0])
        monkeypatch.undo()
        return [p.detach().numpy().copy() for p in params] + [
            opt.state[p][k].detach().numpy().copy() for p in params for k in opt.state[p]
            if k != "step"]

    looped, plain = train(True), train(False)
    assert foreach._KERNEL
    assert len(looped) == len(plain) == 3 * (4 if amsgrad else 3)
    for a, b in zip(looped, plain):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_plain_sgd_s_loop_gives_the_numpy_lines_bits_nan_and_inf_included(monkeypatch, dtype):
    pytest.importorskip("numba")
    import numba  # noqa: F401  (loaded: the loop is allowed)

    def train(loop):
        if not loop:
            monkeypatch.setattr(foreach, "_sgd_kernel", lambda dtype: None)
        rng = np.random.default_rng(5)
        params = [dl.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True)
                  for s in [(40, 30), (7,), (1,)]]
        opt = dl.optim.SGD(params, lr=0.037)
        done = []
        for step in range(4):
            opt.zero_grad()
            sum(((p * p).sin() * (k + 1.0)).sum() for k, p in enumerate(params)).backward()
            if step == 2:  # (a NaN, an infinity and a -0 in the gradients)
                params[0].grad.array[0, :3] = [np.nan, np.inf, -0.0]
            versions = [p._version[0] for p in params]
            with np.errstate(invalid="ignore", over="ignore"):
                done.append(foreach.sgd_step(opt, opt.param_groups[0]))
                if not done[-1]:
                    opt.step()
            assert [p._version[0] for p in params] == [v + 1 for v in versions]
        monkeypatch.undo()
        assert all(done) == loop and all(opt.state[p] == {} for p in params)
        return [p.detach().numpy().copy() for p in params]

    looped, plain = train(True), train(False)
    assert foreach._SGD_KERNEL
    for a, b in zip(looped, plain):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
    assert np.isnan(looped[0][0, :2]).all()


@pytest.mark.fastpath("11. flat optimizer updates")
def test_plain_sgd_takes_the_numpy_lines_where_the_loop_would_not_say_the_same():
    pytest.importorskip("numba")
    import numba  # noqa: F401

    params = _params((3, 2), (4,), dtype=dl.float32)
    _backward(params)
    for settings in ({"maximize": True}, {"weight_decay": 0.1}, {"lr": 1.0},
                     {"lr": np.float64(0.1)}):
        opt = dl.optim.SGD(params, **{"lr": 0.1, **settings})
        assert not foreach.sgd_step(opt, opt.param_groups[0]), settings
    opt = dl.optim.SGD(params, lr=0.1)
    params[0].grad = dl.tensor(np.ones((2, 3), np.float32)).T  # (not C-contiguous)
    assert not foreach.sgd_step(opt, opt.param_groups[0])
    params[0].grad = dl.Tensor._wrap(params[0].array)  # (the parameter's own memory)
    assert not foreach.sgd_step(opt, opt.param_groups[0])
    params[0].grad = dl.ones(3, 2, dtype=dl.float32)
    assert foreach.sgd_step(opt, opt.param_groups[0])


def test_without_numba_loaded_adam_takes_the_numpy_lines(monkeypatch):
    monkeypatch.delitem(sys.modules, "numba", raising=False)
    monkeypatch.setattr(foreach, "_KERNEL", [])
    assert foreach._adam_kernel(np.dtype(np.float64)) is None
    assert foreach._adam_kernel(np.dtype(np.int64)) is None


# ------------------------------------------------------------ where it runs


def _params(*shapes, dtype=dl.float64):
    rng = np.random.default_rng(2)
    return [dl.tensor(rng.standard_normal(s), dtype=dtype, requires_grad=True) for s in shapes]


def _backward(params):
    sum((p * p).sum() for p in params).backward()


@pytest.mark.fastpath("11. flat optimizer updates")
def test_adam_s_state_is_views_of_one_flat_array_and_stays_the_user_s():
    params = _params((3, 2), (4,), (2,))
    opt = dl.optim.Adam(params, lr=0.1)
    _backward(params)
    assert foreach.adam_step(opt, opt.param_groups[0])
    layout = foreach._layouts[opt][id(opt.param_groups[0])]
    for p in params:
        m = opt.state[p]["exp_avg"]
        assert m.shape == p.shape and np.shares_memory(m.array, layout.flat["exp_avg"])
        assert opt.state[p]["step"] == 1
    # a user writing into the state in place is seen by the next flat step
    opt.state[params[0]]["exp_avg"].array[...] = 0.0
    assert np.all(layout.flat["exp_avg"][:6] == 0.0)
    # a state loaded from elsewhere is not the layout's: the plain path takes the group
    opt.load_state_dict(opt.state_dict())
    _backward(params)
    assert not foreach.adam_step(opt, opt.param_groups[0])


@pytest.mark.fastpath("11. flat optimizer updates")
def test_groups_that_do_not_suit_take_the_plain_path():
    one = _params((3,))
    opt = dl.optim.Adam(one)
    _backward(one)
    assert not foreach.adam_step(opt, opt.param_groups[0])         # a single parameter
    mixed = _params((3,), (2,)) + _params((2,), dtype=dl.float32)
    opt = dl.optim.Adam(mixed)
    _backward(mixed)
    assert not foreach.adam_step(opt, opt.param_groups[0])         # two dtypes
    big = _params((200, 100), (3,))
    opt = dl.optim.Adam(big)
    _backward(big)
    assert not foreach.adam_step(opt, opt.param_groups[0])         # large parameters
    plain = _params((3,), (2,))
    opt = dl.optim.SGD(plain, lr=0.1)
    _backward(plain)
    # SGD without momentum: nothing flat; one loop per parameter where numba is loaded
    looped = foreach._sgd_kernel(np.dtype(np.float64)) is not None
    assert foreach.sgd_step(opt, opt.param_groups[0]) == looped
    frozen = _params((3,), (2,), (4,))
    opt = dl.optim.Adam(frozen)
    _backward(frozen)
    opt.step()
    frozen[1].grad = None                                          # fewer than laid out
    _backward([frozen[0], frozen[2]])
    assert not foreach.adam_step(opt, opt.param_groups[0])


def test_a_subclass_takes_the_plain_path():
    class Mine(dl.optim.Adam):
        def _update(self, xp, p, g, state, group):
            p -= 1.0

    assert "_flat_step" in vars(dl.optim.Adam) and "_flat_step" in vars(dl.optim.AdamW)
    params = _params((3,), (2,))
    opt = Mine(params, lr=0.1)
    _backward(params)
    before = [p.detach().numpy().copy() for p in params]
    opt.step()
    for p, b in zip(params, before):
        np.testing.assert_array_equal(p.detach().numpy(), b - 1.0)


def test_the_examples_in_the_docstrings_run():
    import doctest

    failures, _ = doctest.testmod(foreach, optionflags=doctest.ELLIPSIS)
    assert failures == 0
