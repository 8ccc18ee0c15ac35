"""Optimizers against their formulas (and PyTorch's numbers when it is installed)."""

import math

import numpy as np
import pytest

import difflab as dl
import difflab.nn as nn
import difflab.optim as optim
from difflab.optim import lr_scheduler


def quadratic_problem():
    """f(w) = ½‖Aw - b‖², minimum at the least-squares solution."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((10, 4))
    b = rng.standard_normal(10)
    w = nn.Parameter(dl.zeros(4, dtype=dl.float64))
    solution = np.linalg.lstsq(a, b, rcond=None)[0]
    at, bt = dl.tensor(a, dtype=dl.float64), dl.tensor(b, dtype=dl.float64)
    return w, (lambda: 0.5 * ((at @ w - bt) ** 2).sum()), solution


@pytest.mark.parametrize("make,steps", [
    (lambda p: optim.SGD(p, lr=0.02), 2000),
    (lambda p: optim.SGD(p, lr=0.02, momentum=0.9), 400),
    (lambda p: optim.SGD(p, lr=0.02, momentum=0.9, nesterov=True), 400),
    (lambda p: optim.Adam(p, lr=0.05), 1500),
    (lambda p: optim.Adam(p, lr=0.05, amsgrad=True), 1500),
    (lambda p: optim.AdamW(p, lr=0.05, weight_decay=0.0), 1500),
    (lambda p: optim.RMSprop(p, lr=1e-3), 3000),
    (lambda p: optim.RMSprop(p, lr=5e-4, momentum=0.5, centered=True), 3000),
    (lambda p: optim.Adagrad(p, lr=0.5), 2000),
])
def test_optimizers_converge_on_least_squares(make, steps):
    w, loss, solution = quadratic_problem()
    opt = make([w])
    for _ in range(steps):
        opt.zero_grad()
        loss().backward()
        opt.step()
    np.testing.assert_allclose(w.detach().numpy(), solution, atol=2e-3)


def test_sgd_momentum_dampening_weight_decay_formula():
    w = nn.Parameter(dl.tensor([1.0, -2.0], dtype=dl.float64))
    opt = optim.SGD([w], lr=0.1, momentum=0.9, dampening=0.5, weight_decay=0.01)
    grads = [np.array([0.5, 1.0]), np.array([-1.0, 2.0])]
    theta, buf = np.array([1.0, -2.0]), None
    for g in grads:
        w.grad = dl.tensor(g, dtype=dl.float64)
        opt.step()
        d = g + 0.01 * theta
        buf = d if buf is None else 0.9 * buf + 0.5 * d
        theta = theta - 0.1 * buf
    np.testing.assert_allclose(w.detach().numpy(), theta, rtol=1e-12)


def test_adam_first_step_is_lr_times_sign():
    w = nn.Parameter(dl.tensor([1.0, 1.0, 1.0], dtype=dl.float64))
    opt = optim.Adam([w], lr=0.1)
    w.grad = dl.tensor([3.0, -0.2, 1e-2], dtype=dl.float64)
    opt.step()
    np.testing.assert_allclose(w.detach().numpy(), [0.9, 1.1, 0.9], rtol=1e-6)  # up to eps = 1e-8


def test_adamw_decays_weights_directly():
    w = nn.Parameter(dl.tensor([2.0], dtype=dl.float64))
    opt = optim.AdamW([w], lr=0.1, weight_decay=0.5)
    w.grad = dl.tensor([0.0], dtype=dl.float64)
    opt.step()
    assert w.item() == pytest.approx(2.0 * (1 - 0.05))


def test_param_groups_and_zero_grad():
    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
    opt = optim.SGD([{"params": model[0].parameters()},
                     {"params": model[1].parameters(), "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["momentum"] == 0.9
    model(dl.randn(3, 2)).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.numpy().any() for p in model.parameters())
    opt.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": model[0].weight})


def test_optimizer_state_dict_round_trip_continues_identically():
    dl.manual_seed(0)
    a = nn.Linear(3, 2)
    b = nn.Linear(3, 2)
    b.load_state_dict(a.state_dict())
    opt_a = optim.RMSprop(a.parameters(), lr=0.01, momentum=0.9)
    x = dl.randn(5, 3)
    for _ in range(3):
        opt_a.zero_grad()
        a(x).pow(2).sum().backward()
        opt_a.step()
    b.load_state_dict(a.state_dict())
    opt_b = optim.RMSprop(b.parameters(), lr=0.01, momentum=0.9)
    opt_b.load_state_dict(opt_a.state_dict())
    for m, o in ((a, opt_a), (b, opt_b)):
        o.zero_grad()
        m(x).pow(2).sum().backward()
        o.step()
    assert np.array_equal(a.weight.detach().numpy(), b.weight.detach().numpy())
    with pytest.raises(ValueError, match="parameter groups"):
        optim.SGD([{"params": [nn.Parameter(dl.zeros(1))]},
                   {"params": [nn.Parameter(dl.zeros(1))]}], lr=1).load_state_dict(
            opt_a.state_dict())


STEP_RULES = {
    "SGD": dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
    "Adam": dict(lr=0.01, weight_decay=0.1, amsgrad=True),
    "AdamW": dict(lr=0.01, weight_decay=0.1),
    "RMSprop": dict(lr=0.01, momentum=0.5, centered=True),
    "Adagrad": dict(lr=0.1, lr_decay=0.01),
}


@pytest.mark.parametrize("name", sorted(STEP_RULES))
def test_each_optimizer_steps_on_the_parameters_device_as_on_the_cpu(name, device):
    """The update rules and their state run where the parameters live, with the CPU's numbers."""
    rng = np.random.default_rng(0)
    w0, grads = rng.standard_normal((2, 3)), [rng.standard_normal((2, 3)) for _ in range(4)]

    def run(on):
        w = nn.Parameter(dl.tensor(w0, dtype=dl.float64, device=on))
        opt = getattr(optim, name)([w], **STEP_RULES[name])
        for g in grads[:2]:
            w.grad = dl.tensor(g, dtype=dl.float64, device=on)
            opt.step()
        restarted = getattr(optim, name)([w], **STEP_RULES[name])
        restarted.load_state_dict(opt.state_dict())  # the state comes back to the device
        for g in grads[2:]:
            w.grad = dl.tensor(g, dtype=dl.float64, device=on)
            restarted.step()
        assert w.device == dl.device(on)
        return w.detach().cpu().numpy()

    np.testing.assert_allclose(run(device), run("cpu"), rtol=1e-12)


def test_schedulers():
    def lrs(make, n=6):
        opt = optim.SGD([nn.Parameter(dl.zeros(1))], lr=1.0)
        sched = make(opt)
        out = []
        for _ in range(n):
            out.append(opt.param_groups[0]["lr"])
            opt.step()
            sched.step()
        return out

    assert lrs(lambda o: lr_scheduler.StepLR(o, 2, gamma=0.5)) == [1, 1, .5, .5, .25, .25]
    assert lrs(lambda o: lr_scheduler.ExponentialLR(o, 0.5)) == [0.5**k for k in range(6)]
    cos = lrs(lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=4, eta_min=0.1), 5)
    expected = [0.1 + 0.9 * (1 + math.cos(math.pi * t / 4)) / 2 for t in range(5)]
    np.testing.assert_allclose(cos, expected)
    assert lrs(lambda o: lr_scheduler.MultiStepLR(o, [1, 3], 0.1), 4) == pytest.approx(
        [1, 0.1, 0.1, 0.01])
    assert lrs(lambda o: lr_scheduler.LambdaLR(o, lambda e: 1 / (e + 1)), 3) == pytest.approx(
        [1, 1 / 2, 1 / 3])


def test_matches_pytorch_when_installed():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal(5)
    grads = [rng.standard_normal(5) for _ in range(5)]
    cases = [
        ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
        ("Adam", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
        ("AdamW", dict(lr=0.01, weight_decay=0.1)),
        ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True)),
        ("Adagrad", dict(lr=0.1, lr_decay=0.01)),
    ]
    for name, kwargs in cases:
        ours = nn.Parameter(dl.tensor(w0, dtype=dl.float64))
        theirs = torch.tensor(w0, dtype=torch.float64, requires_grad=True)
        opt_ours = getattr(optim, name)([ours], **kwargs)
        opt_theirs = getattr(torch.optim, name)([theirs], **kwargs)
        for g in grads:
            ours.grad = dl.tensor(g, dtype=dl.float64)
            theirs.grad = torch.tensor(g, dtype=torch.float64)
            opt_ours.step()
            opt_theirs.step()
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10,
                                   err_msg=name)
