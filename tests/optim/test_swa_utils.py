"""optim.swa_utils: AveragedModel (SWA's running mean, EMA), update_bn, SWALR.

(The numbers are compared with PyTorch's in tests/nn/test_nn_utils_match_pytorch.py.)
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import difflab as dl
import difflab.nn as nn
from difflab import optim
from difflab.nn.utils import parametrizations
from difflab.optim import swa_utils
from difflab.optim.swa_utils import SWALR, AveragedModel, update_bn


def set_weights(model, value):
    with dl.no_grad():
        for p in model.parameters():
            p.fill_(value)


def test_the_average_is_the_running_mean_of_the_visited_weights():
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    swa = AveragedModel(model)
    assert swa.n_averaged.dtype == dl.int64 and swa.n_averaged.item() == 0
    assert swa.module is not model and swa.module[0].weight is not model[0].weight
    for value in (1.0, 2.0, 3.0, 10.0):
        set_weights(model, value)
        swa.update_parameters(model)
    assert swa.n_averaged.item() == 4
    for p in swa.parameters():
        np.testing.assert_allclose(p.detach().numpy(), 4.0)
    assert not any(p.requires_grad and p.grad_fn is not None for p in swa.parameters())
    x = dl.ones(2, 2)
    set_weights(model, 4.0)
    assert bool(dl.allclose(swa(x), model(x)))
    assert list(swa.state_dict())[0] == "n_averaged"
    assert "module.0.weight" in swa.state_dict()


def test_ema_by_avg_fn_and_by_multi_avg_fn_agree():
    model = nn.Linear(2, 2)
    by_one = AveragedModel(model, avg_fn=swa_utils.get_ema_avg_fn(0.75))
    by_all = AveragedModel(model, multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.75))
    expected = None
    for value in (8.0, 0.0, 4.0):
        set_weights(model, value)
        by_one.update_parameters(model)
        by_all.update_parameters(model)
        expected = value if expected is None else 0.75 * expected + 0.25 * value
    for a, b in zip(by_one.parameters(), by_all.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), expected)
        np.testing.assert_allclose(b.detach().numpy(), expected)


def test_buffers_follow_the_model_or_are_averaged():
    model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    copied, averaged = AveragedModel(model), AveragedModel(model, use_buffers=True)
    means = []
    for _ in range(3):
        model(dl.randn(8, 2) * 3 + 1)
        means.append(model[1].running_mean.clone())
        copied.update_parameters(model)
        averaged.update_parameters(model)
    assert bool(dl.equal(copied.module[1].running_mean, means[-1]))
    assert bool(dl.allclose(averaged.module[1].running_mean, sum(means) / 3))
    # an integer buffer: each mean step is cut to an integer, as PyTorch's copy_ does
    # (1, then 1 + (2 - 1) / 2 -> 1, then 1 + (3 - 1) / 3 -> 1)
    assert averaged.module[1].num_batches_tracked.item() == 1


def test_a_checkpoint_round_trips_and_a_parametrized_model_can_be_averaged():
    dl.manual_seed(0)
    model = parametrizations.weight_norm(nn.Linear(3, 2))
    swa = AveragedModel(model)
    for _ in range(2):
        with dl.no_grad():
            for p in model.parameters():
                p.add_(dl.randn(*p.shape))
        swa.update_parameters(model)
    fresh = AveragedModel(parametrizations.weight_norm(nn.Linear(3, 2)))
    fresh.load_state_dict(swa.state_dict())
    assert fresh.n_averaged.item() == 2
    x = dl.randn(4, 3)
    assert bool(dl.equal(fresh(x), swa(x)))


def test_averaged_model_errors():
    with pytest.raises(ValueError, match="Only one of avg_fn and multi_avg_fn"):
        AveragedModel(nn.Linear(1, 1), avg_fn=swa_utils.get_ema_avg_fn(),
                      multi_avg_fn=swa_utils.get_ema_multi_avg_fn())


def test_update_bn_recomputes_the_statistics_over_the_whole_loader():
    dl.manual_seed(1)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4, momentum=0.3))
    model.eval()
    batches = [dl.randn(5, 3) * 2 + 1 for _ in range(4)]
    update_bn([(b, dl.zeros(5)) for b in batches], model)
    bn = model[1]
    with dl.no_grad():
        features = [model[0](b) for b in batches]
    mean = sum(f.mean(dim=0) for f in features) / 4  # the cumulative average of the batches'
    var = sum(f.var(dim=0) for f in features) / 4
    assert bool(dl.allclose(bn.running_mean, mean, atol=1e-6))
    assert bool(dl.allclose(bn.running_var, var, atol=1e-5))
    assert bn.momentum == 0.3 and not model.training and bn.num_batches_tracked.item() == 4
    plain = nn.Linear(2, 2)
    update_bn([dl.ones(1, 2)], plain)  # no BatchNorm: nothing to do


def test_swalr_anneals_to_swa_lr_and_holds_it():
    opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=1.0)
    sched = SWALR(opt, swa_lr=0.2, anneal_epochs=4)
    rates = []
    for _ in range(6):
        opt.step()
        sched.step()
        rates.append(opt.param_groups[0]["lr"])
    expected = [0.2 + 0.8 * (1 + math.cos(math.pi * t / 4)) / 2 for t in (1, 2, 3, 4, 4, 4)]
    np.testing.assert_allclose(rates, expected)
    assert sched.get_last_lr() == [rates[-1]]


def test_swalr_errors():
    opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=1.0)
    with pytest.raises(ValueError, match="anneal_strategy must by one of 'cos' or 'linear'"):
        SWALR(opt, swa_lr=0.1, anneal_strategy="exp")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0"):
        SWALR(opt, swa_lr=0.1, anneal_epochs=-1)
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0"):
        SWALR(opt, swa_lr=0.1, anneal_epochs=2.5)
    with pytest.raises(ValueError, match="expected 1 values for swa_lr, got 2"):
        SWALR(opt, swa_lr=[0.1, 0.2])
    with pytest.raises(TypeError, match="is not an Optimizer"):
        SWALR("sgd", swa_lr=0.1)
