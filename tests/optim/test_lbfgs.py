"""optim.LBFGS with a closure (issue 27): the first step is scaled steepest descent, the
method minimises quadratics and the Rosenbrock function, a linear model reaches the
least-squares solution, and its state round-trips through save/load."""

from __future__ import annotations

import io

import numpy as np
import pytest

import difflab as dl

rng = np.random.default_rng(0)


def quadratic(n=8):
    m = rng.standard_normal((n, n))
    a = m @ m.T + n * np.eye(n)  # symmetric positive definite
    return a, rng.standard_normal(n)


def closure_for(opt, x, a, b, calls=None):
    a_t, b_t = dl.tensor(a), dl.tensor(b)

    def closure():
        if calls is not None:
            calls.append(1)
        opt.zero_grad()
        loss = 0.5 * (x @ (a_t @ x)) - b_t @ x
        loss.backward()
        return loss

    return closure


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_minimises_a_quadratic(line_search_fn):
    a, b = quadratic()
    x = dl.zeros(8, dtype=dl.float64, requires_grad=True)
    opt = dl.optim.LBFGS([x], lr=1.0, max_iter=200, line_search_fn=line_search_fn,
                         tolerance_grad=1e-10, tolerance_change=1e-14)
    calls: list = []
    first = opt.step(closure_for(opt, x, a, b, calls))
    assert first.item() == 0.0  # the loss before the step is what step returns
    assert np.allclose(x.array, np.linalg.solve(a, b), atol=1e-7)
    assert len(calls) <= 200 * 5 // 4 == opt.param_groups[0]["max_eval"]


def test_the_first_iteration_is_scaled_steepest_descent():
    a, b = quadratic()
    x = dl.tensor(rng.standard_normal(8), dtype=dl.float64, requires_grad=True)
    x0 = x.array.copy()
    g = a @ x0 - b
    opt = dl.optim.LBFGS([x], lr=0.5, max_iter=1)
    opt.step(closure_for(opt, x, a, b))
    step = min(1.0, 1.0 / np.abs(g).sum()) * 0.5
    assert np.allclose(x.array, x0 - step * g)
    assert opt.state[x]["n_iter"] == 1 and opt.state[x]["func_evals"] == 1


def test_lbfgs_with_strong_wolfe_solves_rosenbrock():
    xy = dl.tensor([-1.2, 1.0], dtype=dl.float64, requires_grad=True)
    opt = dl.optim.LBFGS([xy], max_iter=200, line_search_fn="strong_wolfe",
                         tolerance_change=1e-15)

    def closure():
        opt.zero_grad()
        loss = (1 - xy[0]) ** 2 + 100 * (xy[1] - xy[0] ** 2) ** 2
        loss.backward()
        return loss

    opt.step(closure)
    assert np.allclose(xy.array, [1.0, 1.0], atol=1e-5)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lbfgs_fits_a_linear_model_to_the_least_squares_solution(seed):
    # Its own data (the module's rng would make them depend on which tests ran before),
    # and stopping rules tight enough for 1e-6: with the defaults (PyTorch's: a loss
    # change under 1e-9 stops) the weights stop about 1e-5 from the solution.
    data = np.random.default_rng(seed)
    dl.manual_seed(0)
    x = dl.tensor(data.standard_normal((50, 3)), dtype=dl.float64)
    y = x @ dl.tensor([[1.0], [-2.0], [0.5]], dtype=dl.float64) + 0.1 * dl.tensor(
        data.standard_normal((50, 1)), dtype=dl.float64)
    model = dl.nn.Linear(3, 1).double()
    opt = dl.optim.LBFGS(model.parameters(), line_search_fn="strong_wolfe",
                         tolerance_grad=1e-12, tolerance_change=1e-14)

    def closure():
        opt.zero_grad()
        loss = dl.nn.functional.mse_loss(model(x), y)
        loss.backward()
        return loss

    for _ in range(3):
        opt.step(closure)
    design = np.hstack([x.array, np.ones((50, 1))])
    solution = np.linalg.lstsq(design, y.array, rcond=None)[0].ravel()
    assert np.allclose(np.append(model.weight.array.ravel(), model.bias.array), solution,
                       atol=1e-6)


def test_lbfgs_state_round_trips_through_save_and_load():
    a, b = quadratic()
    runs = []
    for resume in (False, True):
        x = dl.zeros(8, dtype=dl.float64, requires_grad=True)
        opt = dl.optim.LBFGS([x], max_iter=3, history_size=3)
        opt.step(closure_for(opt, x, a, b))
        if resume:
            buffer = io.BytesIO()
            dl.save(opt.state_dict(), buffer)
            buffer.seek(0)
            opt = dl.optim.LBFGS([x], max_iter=3, history_size=3)
            opt.load_state_dict(dl.load(buffer))
            assert len(opt.state[x]["old_dirs"]) >= 1
        opt.step(closure_for(opt, x, a, b))
        runs.append(x.array.copy())
    assert np.array_equal(runs[0], runs[1])


def test_lbfgs_errors_name_the_fix():
    x = dl.zeros(2, requires_grad=True)
    opt = dl.optim.LBFGS([x])
    with pytest.raises(RuntimeError, match="needs a closure"):
        opt.step(None)
    with pytest.raises(RuntimeError, match="needs a closure"):  # not Python's TypeError
        opt.step()
    with pytest.raises(ValueError, match="line_search_fn must be None or 'strong_wolfe'"):
        dl.optim.LBFGS([x], line_search_fn="backtracking")
    with pytest.raises(ValueError, match="per-parameter options"):
        dl.optim.LBFGS([{"params": [x]}, {"params": [dl.zeros(1, requires_grad=True)]}])
    with pytest.raises(ValueError, match="Invalid learning rate"):
        dl.optim.LBFGS([x], lr=0.0)
