"""Adadelta, Adamax, NAdam, RAdam, Rprop and ASGD (issue 27): five steps against NumPy
transcriptions of PyTorch's documented algorithms, and each minimises a quadratic."""

from __future__ import annotations

import math

import numpy as np
import pytest

import difflab as dl

A = np.diag([1.0, 4.0, 9.0])
START = np.array([1.0, -2.0, 0.5])


def gradient(theta):
    return A @ theta  # of ½ θᵀAθ


def run(cls, steps=5, **kwargs):
    theta = dl.tensor(START.copy(), dtype=dl.float64, requires_grad=True)
    opt = cls([theta], **kwargs)
    target = dl.tensor(A)
    for _ in range(steps):
        opt.zero_grad()
        (0.5 * theta @ (target @ theta)).backward()
        opt.step()
    return theta.array, opt


def adadelta(theta, lr=1.0, rho=0.9, eps=1e-6, steps=5):
    v = u = np.zeros_like(theta)
    for _ in range(steps):
        g = gradient(theta)
        v = rho * v + (1 - rho) * g**2
        delta = np.sqrt(u + eps) / np.sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta**2
        theta = theta - lr * delta
    return theta


def adamax(theta, lr=2e-3, b1=0.9, b2=0.999, eps=1e-8, steps=5):
    m = u = np.zeros_like(theta)
    for t in range(1, steps + 1):
        g = gradient(theta)
        m = b1 * m + (1 - b1) * g
        u = np.maximum(b2 * u, np.abs(g) + eps)
        theta = theta - lr / (1 - b1**t) * m / u
    return theta


def nadam(theta, lr=2e-3, b1=0.9, b2=0.999, eps=1e-8, psi=4e-3, steps=5):
    m = v = np.zeros_like(theta)
    product = 1.0
    for t in range(1, steps + 1):
        g = gradient(theta)
        mu, mu_next = (b1 * (1 - 0.5 * 0.96 ** (k * psi)) for k in (t, t + 1))
        product *= mu
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g**2
        denom = np.sqrt(v / (1 - b2**t)) + eps
        theta = theta - lr * (1 - mu) / (1 - product) * g / denom \
            - lr * mu_next / (1 - product * mu_next) * m / denom
    return theta


def radam(theta, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8, steps=5):
    m = v = np.zeros_like(theta)
    rho_inf = 2 / (1 - b2) - 1
    for t in range(1, steps + 1):
        g = gradient(theta)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g**2
        m_hat = m / (1 - b1**t)
        rho = rho_inf - 2 * t * b2**t / (1 - b2**t)
        if rho > 5:
            r = math.sqrt((rho - 4) * (rho - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho))
            theta = theta - lr * m_hat * r * math.sqrt(1 - b2**t) / (np.sqrt(v) + eps)
        else:
            theta = theta - lr * m_hat
    return theta


def rprop(theta, lr=1e-2, etas=(0.5, 1.2), sizes=(1e-6, 50), steps=5):
    prev, size = np.zeros_like(theta), np.full_like(theta, lr)
    for _ in range(steps):
        g = gradient(theta)
        s = g * prev
        size = np.clip(np.where(s > 0, size * etas[1], np.where(s < 0, size * etas[0], size)),
                       *sizes)
        g = np.where(s < 0, 0, g)
        theta = theta - np.sign(g) * size
        prev = g
    return theta


def asgd(theta, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, steps=5):
    eta, mu, ax = lr, 1.0, np.zeros_like(theta)
    for t in range(1, steps + 1):
        g = gradient(theta)
        theta = theta * (1 - lambd * eta) - eta * g
        ax = ax + (theta - ax) * mu if mu != 1 else theta.copy()
        eta = lr / (1 + lambd * lr * t) ** alpha
        mu = 1 / max(1, t - t0)
    return theta, ax


@pytest.mark.parametrize("cls,reference,kwargs", [
    (dl.optim.Adadelta, adadelta, {}),
    (dl.optim.Adadelta, adadelta, {"lr": 0.5, "rho": 0.8}),
    (dl.optim.Adamax, adamax, {}),
    (dl.optim.Adamax, adamax, {"lr": 0.1, "betas": (0.8, 0.9)}),
    (dl.optim.NAdam, nadam, {}),
    (dl.optim.NAdam, nadam, {"lr": 0.05}),
    (dl.optim.RAdam, radam, {}),
    (dl.optim.Rprop, rprop, {}),
    (dl.optim.Rprop, rprop, {"lr": 0.3}),
])
def test_matches_the_documented_algorithm(cls, reference, kwargs):
    names = {"betas": ("b1", "b2")}
    ref_kwargs = {}
    for key, value in kwargs.items():
        if key in names:
            ref_kwargs.update(zip(names[key], value))
        else:
            ref_kwargs[key] = value
    theta, _ = run(cls, **kwargs)
    assert np.allclose(theta, reference(START.copy(), **ref_kwargs), rtol=1e-12, atol=1e-14)


def test_radam_switches_to_the_rectified_step_after_five_steps():
    theta, _ = run(dl.optim.RAdam, steps=12, lr=0.01)
    assert np.allclose(theta, radam(START.copy(), lr=0.01, steps=12), rtol=1e-12)


def test_asgd_iterates_and_their_average():
    theta, opt = run(dl.optim.ASGD, steps=8, lr=0.05, t0=3)
    expected, average = asgd(START.copy(), lr=0.05, t0=3, steps=8)
    param = opt.param_groups[0]["params"][0]
    assert np.allclose(theta, expected) and np.allclose(opt.state[param]["ax"].array, average)


@pytest.mark.parametrize("cls,kwargs,steps", [
    (dl.optim.Adadelta, {"lr": 1.0}, 3000), (dl.optim.Adamax, {"lr": 0.1}, 500),
    (dl.optim.NAdam, {"lr": 0.05}, 500), (dl.optim.RAdam, {"lr": 0.05}, 500),
    (dl.optim.Rprop, {}, 200), (dl.optim.ASGD, {"lr": 0.1}, 300),
])
def test_each_minimises_a_quadratic(cls, kwargs, steps):
    theta, _ = run(cls, steps=steps, **kwargs)
    assert np.abs(theta).max() < 0.05, theta


def test_weight_decay_maximize_and_errors():
    decayed, _ = run(dl.optim.NAdam, weight_decay=0.1, decoupled_weight_decay=True)
    plain, _ = run(dl.optim.NAdam)
    assert not np.allclose(decayed, plain)
    up, _ = run(dl.optim.Adamax, maximize=True, lr=0.1)
    assert np.abs(up).sum() > np.abs(START).sum()  # ascends the quadratic
    with pytest.raises(ValueError, match="Invalid beta parameters"):
        dl.optim.RAdam([dl.zeros(1, requires_grad=True)], betas=(1.0, 0.9))
    with pytest.raises(ValueError, match="Invalid eta values"):
        dl.optim.Rprop([dl.zeros(1, requires_grad=True)], etas=(1.5, 1.2))
    with pytest.raises(ValueError, match="Invalid rho value"):
        dl.optim.Adadelta([dl.zeros(1, requires_grad=True)], rho=2.0)


def test_sparse_adam_updates_only_the_rows_a_gradient_touches():
    """PyTorch's lazy Adam, step by step: rows looked up move, the others keep their
    values and their moments (Adam would decay every moment)."""
    rng = np.random.default_rng(4)
    table = dl.nn.Embedding(5, 3)
    start = table.weight.detach().numpy().copy()
    optimizer = dl.optim.SparseAdam(table.parameters(), lr=0.05, betas=(0.8, 0.9), eps=1e-6)
    p, m, v = start.copy(), np.zeros_like(start), np.zeros_like(start)
    for step, rows in enumerate(([0, 2], [2, 2, 4], [1]), start=1):
        target = rng.normal(size=(len(rows), 3))
        optimizer.zero_grad()
        loss = ((table(dl.tensor(rows)) - dl.tensor(target, dtype=dl.float32)) ** 2).sum()
        loss.backward()
        g = table.weight.grad.numpy()
        hit = np.unique(rows)
        m[hit] = 0.8 * m[hit] + 0.2 * g[hit]
        v[hit] = 0.9 * v[hit] + 0.1 * g[hit] ** 2
        size = 0.05 * np.sqrt(1 - 0.9**step) / (1 - 0.8**step)
        p[hit] -= size * m[hit] / (np.sqrt(v[hit]) + 1e-6)
        optimizer.step()
        np.testing.assert_allclose(table.weight.detach().numpy(), p, rtol=1e-5, atol=1e-6)
    assert (table.weight.detach().numpy()[3] == start[3]).all()  # never looked up
    with pytest.raises(ValueError, match="epsilon"):
        dl.optim.SparseAdam(table.parameters(), eps=0.0)
