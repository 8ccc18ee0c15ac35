"""The rest of PyTorch's schedulers (issue 27), against the closed forms of PyTorch's docs."""

from __future__ import annotations

import math

import pytest

import difflab as dl
from difflab.optim import lr_scheduler as S


def optimizer(lr=1.0, cls=dl.optim.SGD, **kwargs):
    return cls([dl.zeros(2, requires_grad=True)], lr=lr, **kwargs)


def rates(scheduler, n, opt=None):
    out = []
    for _ in range(n):
        out.append(scheduler.get_last_lr()[0])
        (opt or scheduler.optimizer).step()
        scheduler.step()
    return out


def test_factor_schedules():
    assert rates(S.MultiplicativeLR(optimizer(2.0), lambda t: 0.9 ** t), 4) == pytest.approx(
        [2.0, 2.0 * 0.9, 2.0 * 0.9 * 0.81, 2.0 * 0.9 * 0.81 * 0.729])
    assert rates(S.ConstantLR(optimizer(0.3)), 7) == pytest.approx([0.1] * 5 + [0.3] * 2)
    linear = rates(S.LinearLR(optimizer(0.6), start_factor=0.5, end_factor=1.0,
                              total_iters=4), 6)
    assert linear == pytest.approx([0.6 * (0.5 + 0.5 * min(t, 4) / 4) for t in range(6)])
    poly = rates(S.PolynomialLR(optimizer(0.2), total_iters=3, power=0.5), 5)
    assert poly == pytest.approx([0.2 * (1 - min(t, 3) / 3) ** 0.5 for t in range(5)])
    with pytest.raises(ValueError, match="between 0 and 1"):
        S.ConstantLR(optimizer(), factor=2.0)


@pytest.mark.parametrize("t_mult", [1, 2])
def test_cosine_warm_restarts(t_mult):
    sched = S.CosineAnnealingWarmRestarts(optimizer(0.5), T_0=3, T_mult=t_mult, eta_min=0.1)
    expected, start, length = [], 0, 3
    for t in range(15):
        if t - start >= length:
            start, length = start + length, length * t_mult
        expected.append(0.1 + 0.4 * (1 + math.cos(math.pi * (t - start) / length)) / 2)
    assert rates(sched, 15) == pytest.approx(expected)
    sched.step(4.5)  # a fractional epoch, as when stepping every batch
    t_cur = 1.5 if t_mult == 1 else 1.5
    assert sched.get_last_lr()[0] == pytest.approx(
        0.1 + 0.4 * (1 + math.cos(math.pi * t_cur / (3 * t_mult))) / 2)


@pytest.mark.parametrize("mode", ["triangular", "triangular2", "exp_range"])
def test_cyclic_lr_and_its_momentum(mode):
    opt = optimizer(0.05, momentum=0.9)
    sched = S.CyclicLR(opt, base_lr=0.1, max_lr=1.0, step_size_up=3, step_size_down=2,
                       mode=mode, gamma=0.9)
    got, momenta = [], []
    for _ in range(12):
        got.append(sched.get_last_lr()[0])
        momenta.append(opt.param_groups[0]["momentum"])
        opt.step()
        sched.step()
    expected, expected_m = [], []
    for t in range(12):
        cycle = math.floor(1 + t / 5)
        x = 1 + t / 5 - cycle
        f = x / 0.6 if x <= 0.6 else (x - 1) / (0.6 - 1)
        scale = {"triangular": 1.0, "triangular2": 1 / 2 ** (cycle - 1),
                 "exp_range": 0.9 ** t}[mode]
        expected.append(0.1 + 0.9 * f * scale)
        expected_m.append(0.9 - 0.1 * f * scale)
    assert got == pytest.approx(expected) and momenta == pytest.approx(expected_m)


def test_cyclic_lr_cycles_adams_beta1_and_needs_momentum():
    opt = optimizer(cls=dl.optim.Adam)
    S.CyclicLR(opt, 0.01, 0.1, step_size_up=2)
    assert opt.param_groups[0]["betas"][0] == pytest.approx(0.9)
    with pytest.raises(ValueError, match="optimizer must support momentum"):
        S.CyclicLR(optimizer(cls=dl.optim.Adagrad), 0.01, 0.1)


def test_chained_and_sequential():
    opt = optimizer(1.0)
    chained = S.ChainedScheduler([S.LinearLR(opt, start_factor=0.25, total_iters=3),
                                  S.ExponentialLR(opt, gamma=0.9)])
    assert rates(chained, 6) == pytest.approx(
        [(0.25 + 0.75 * min(t, 3) / 3) * 0.9**t for t in range(6)])
    opt = optimizer(1.0)
    first, second = S.ConstantLR(opt, factor=0.1, total_iters=10), S.StepLR(opt, 2, 0.5)
    sequential = S.SequentialLR(opt, [first, second], milestones=[3])
    assert rates(sequential, 8) == pytest.approx([0.1, 0.1, 0.1, 1.0, 1.0, 0.5, 0.5, 0.25])
    with pytest.raises(ValueError, match="one more than the number of milestone"):
        S.SequentialLR(opt, [first, second], milestones=[])
    with pytest.raises(ValueError, match="same optimizer"):
        S.ChainedScheduler([first, S.StepLR(optimizer(), 2)])


def test_state_dict_round_trip():
    opt = optimizer(1.0)
    sched = S.LinearLR(opt, start_factor=0.5, total_iters=4)
    rates(sched, 2)
    other = S.LinearLR(optimizer(1.0), start_factor=0.1, total_iters=9)
    other.load_state_dict(sched.state_dict())
    assert other.last_epoch == 2 and other.start_factor == 0.5
    cyclic = S.CyclicLR(optimizer(momentum=0.9), 0.1, 1.0, step_size_up=2)
    assert "_scale_fn" not in cyclic.state_dict()
