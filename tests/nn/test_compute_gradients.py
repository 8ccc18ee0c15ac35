"""compute_gradients: four differentiators fill the same .grad; their costs differ."""

import numpy as np
import pytest

import difflab as dl
import difflab.nn as nn
import difflab.optim as optim
from difflab.nn.utils import SYMBOLIC_MAX_PARAMETERS, compute_gradients


def small_problem(hidden=3, loss="ce", device="cpu"):
    dl.manual_seed(1)
    model = nn.Sequential(nn.Linear(2, hidden), nn.Tanh(), nn.Linear(hidden, 2)).double()
    x = dl.randn(6, 2).double()
    if loss == "ce":
        y = dl.tensor([0, 1, 1, 0, 1, 0])
        return model.to(device), nn.CrossEntropyLoss(), x.to(device), y.to(device)
    return model.to(device), nn.MSELoss(), x.to(device), dl.randn(6, 2).double().to(device)


def flat_grads(model):
    return np.concatenate([p.grad.detach().cpu().numpy().ravel() for p in model.parameters()])


@pytest.mark.parametrize("loss", ["ce", "mse"])
@pytest.mark.parametrize("method", ["forward", "numeric", "symbolic"])
def test_methods_agree_with_reverse(method, loss, device):
    model, loss_fn, x, y = small_problem(loss=loss, device=device)
    compute_gradients(model, loss_fn, x, y, method="reverse")
    reference = flat_grads(model)
    cost = compute_gradients(model, loss_fn, x, y, method=method, chunk_size=5)
    got = flat_grads(model)
    rel = np.abs(got - reference).max() / np.abs(reference).max()
    assert rel < 1e-6, (method, rel)
    assert cost.parameters == reference.size
    assert all(p.grad.device == dl.device(device) for p in model.parameters())


def test_reverse_matches_backward_and_optimizer_steps(device):
    model, loss_fn, x, y = small_problem(device=device)
    loss_fn(model(x), y).backward()
    expected = flat_grads(model)
    model.zero_grad()
    compute_gradients(model, loss_fn, x, y, method="forward")
    np.testing.assert_allclose(flat_grads(model), expected, rtol=1e-10, atol=1e-14)
    opt = optim.SGD(model.parameters(), lr=0.5)
    before = loss_fn(model(x), y).item()
    for _ in range(20):
        compute_gradients(model, loss_fn, x, y, method="forward")
        opt.step()
    assert loss_fn(model(x), y).item() < before


def test_relu_model_symbolic_and_forward():
    dl.manual_seed(3)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1)).double()
    x, y = dl.randn(5, 3).double(), dl.randn(5, 1).double()
    compute_gradients(model, nn.MSELoss(), x, y, method="reverse")
    reference = flat_grads(model)
    for method in ("symbolic", "forward"):
        compute_gradients(model, nn.MSELoss(), x, y, method=method)
        np.testing.assert_allclose(flat_grads(model), reference, rtol=1e-9, atol=1e-12)


def test_cost_grows_with_parameter_count_for_forward_and_numeric():
    costs = {}
    for hidden in (2, 8, 32):
        model, loss_fn, x, y = small_problem(hidden)
        p = sum(int(q.numel()) for q in model.parameters())
        costs[hidden] = {m: compute_gradients(model, loss_fn, x, y, method=m, chunk_size=4)
                         for m in ("reverse", "forward", "numeric")}
        assert costs[hidden]["numeric"].evaluations == 2 * p + 1
        assert costs[hidden]["forward"].evaluations == -(-p // 4)
        assert costs[hidden]["reverse"].evaluations == 1
        assert costs[hidden]["reverse"].backward_passes == 1
    for method in ("forward", "numeric"):
        assert costs[2][method].evaluations < costs[8][method].evaluations < \
            costs[32][method].evaluations
    assert costs[2]["reverse"].evaluations == costs[32]["reverse"].evaluations


def test_symbolic_refuses_big_models_and_unknown_layers():
    model = nn.Sequential(nn.Linear(20, 20), nn.Linear(20, 1))
    assert sum(p.numel() for p in model.parameters()) > SYMBOLIC_MAX_PARAMETERS
    with pytest.raises(ValueError, match="refuses a model with 441 parameters"):
        compute_gradients(model, nn.MSELoss(), dl.randn(2, 20), dl.randn(2, 1),
                          method="symbolic")
    small = nn.Sequential(nn.Linear(2, 2), nn.GELU())
    with pytest.raises(TypeError, match="GELU"):
        compute_gradients(small, nn.MSELoss(), dl.randn(2, 2), dl.randn(2, 2),
                          method="symbolic")


def test_bad_method_and_parameterless_model():
    model, loss_fn, x, y = small_problem()
    with pytest.raises(ValueError, match="method must be one of"):
        compute_gradients(model, loss_fn, x, y, method="magic")
    with pytest.raises(ValueError, match="no parameters"):
        compute_gradients(nn.ReLU(), loss_fn, x, y)
