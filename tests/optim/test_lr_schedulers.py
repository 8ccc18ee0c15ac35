"""OneCycleLR and ReduceLROnPlateau, against the schedules PyTorch documents."""

import math

import pytest

import difflab as dl
from difflab.optim import lr_scheduler


def sgd(lr=0.1, momentum=0.9, groups=1):
    params = [{"params": [dl.zeros(2, requires_grad=True)]} for _ in range(groups)]
    return dl.optim.SGD(params, lr=lr, momentum=momentum)


def run(scheduler, optimizer, steps, key="lr"):
    """The value of ``key`` in the first group before each of ``steps`` batches."""
    seen = []
    for _ in range(steps):
        seen.append(optimizer.param_groups[0][key])
        optimizer.step()
        scheduler.step()
    return seen


def cos_anneal(start, end, pct):
    return end + (start - end) / 2 * (math.cos(math.pi * pct) + 1)


def test_one_cycle_two_phases_cosine():
    opt = sgd()
    sched = lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10)
    lrs = run(sched, opt, 10)
    initial, low = 1.0 / 25, 1.0 / 25 / 1e4
    # phase 1 ends at step pct_start·total - 1 = 2, phase 2 at total - 1 = 9
    expected = [cos_anneal(initial, 1.0, t / 2) for t in range(3)] + [
        cos_anneal(1.0, low, (t - 2) / 7) for t in range(3, 10)]
    assert lrs == pytest.approx(expected)
    assert lrs[2] == pytest.approx(1.0) and lrs[-1] == pytest.approx(low)


def test_one_cycle_cycles_momentum_and_adam_beta1():
    opt = sgd()
    sched = lr_scheduler.OneCycleLR(opt, max_lr=0.5, epochs=2, steps_per_epoch=5)
    momenta = run(sched, opt, 10, key="momentum")
    assert momenta[0] == pytest.approx(0.95) and momenta[2] == pytest.approx(0.85)
    assert momenta[-1] == pytest.approx(0.95)
    adam = dl.optim.Adam([dl.zeros(1, requires_grad=True)], lr=0.1)
    lr_scheduler.OneCycleLR(adam, max_lr=0.1, total_steps=4)
    assert adam.param_groups[0]["betas"][0] == pytest.approx(0.95)


def test_one_cycle_linear_three_phase_and_per_group_rates():
    opt = sgd(groups=2)
    sched = lr_scheduler.OneCycleLR(opt, max_lr=[1.0, 2.0], total_steps=10, pct_start=0.25,
                                    anneal_strategy="linear", three_phase=True,
                                    cycle_momentum=False)
    lrs = run(sched, opt, 10)
    initial = 1.0 / 25
    # phase ends: 1.5, 3.0, 9: up, back down to the start, then to the minimum
    assert lrs[0] == pytest.approx(initial)
    assert lrs[3] == pytest.approx(initial)
    assert max(lrs) == pytest.approx(initial + (1.0 - initial) * (1 / 1.5))
    assert lrs[-1] == pytest.approx(initial / 1e4)
    assert opt.param_groups[1]["max_lr"] == 2.0


def test_one_cycle_errors():
    with pytest.raises(ValueError, match="either total_steps OR"):
        lr_scheduler.OneCycleLR(sgd(), max_lr=1.0)
    with pytest.raises(ValueError, match="anneal_strategy"):
        lr_scheduler.OneCycleLR(sgd(), max_lr=1.0, total_steps=5, anneal_strategy="step")
    with pytest.raises(ValueError, match="momentum or beta1"):
        lr_scheduler.OneCycleLR(dl.optim.Adagrad([dl.zeros(1, requires_grad=True)]),
                                max_lr=1.0, total_steps=5)
    opt = sgd()
    sched = lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=3)
    for _ in range(3):
        sched.step()
    with pytest.raises(ValueError, match="Tried to step 4 times. The specified number of total "
                                         "steps is 3"):
        sched.step()


def test_reduce_on_plateau_waits_patience_epochs_then_cools_down():
    opt = sgd(lr=1.0)
    sched = lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=2, cooldown=1)
    rates = []
    for loss in [1.0, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.5]:
        sched.step(loss)
        rates.append(sched.get_last_lr()[0])
    # bad epochs 1, 2, 3 (> patience 2): halve; the next epoch is cooldown and does not
    # count (without it the rate would halve again at epoch 8); then 1, 2, 3 again
    assert rates == [1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25]
    assert sched.best == 0.5 and sched.last_epoch == 10


def test_reduce_on_plateau_modes_thresholds_and_min_lr():
    opt = sgd(lr=1.0)
    sched = lr_scheduler.ReduceLROnPlateau(opt, mode="max", factor=0.1, patience=0,
                                           threshold=0.1, threshold_mode="abs", min_lr=0.05)
    sched.step(dl.tensor(0.5))  # a tensor metric is read as a number
    sched.step(0.55)  # not better by more than 0.1: a bad epoch, beyond patience 0
    assert sched.get_last_lr() == [pytest.approx(0.1)]
    sched.step(0.7)  # better by 0.15
    assert sched.get_last_lr() == [pytest.approx(0.1)]
    sched.step(0.7)
    assert sched.get_last_lr() == [0.05]  # never below min_lr
    state = sched.state_dict()
    assert "optimizer" not in state and state["best"] == 0.7
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        lr_scheduler.ReduceLROnPlateau(opt, factor=1.0)
    with pytest.raises(ValueError, match="mode 'median' is unknown"):
        lr_scheduler.ReduceLROnPlateau(opt, mode="median")
