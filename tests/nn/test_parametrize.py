"""nn.utils.parametrize and nn.utils.parametrizations (weight_norm, spectral_norm, orthogonal).

Behaviour as PyTorch's (the values themselves are compared with PyTorch in
test_nn_utils_match_pytorch.py): the property computes at each read and records, the
gradient reaches the original, assignment goes through right_inverse, checkpoints keep
PyTorch's keys and load into a fresh parametrized module; each parametrization's
derivative by gradcheck and forward = reverse; errors on bad input.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import difflab as dl
import difflab.nn as nn
from difflab import optim
from difflab.autograd import gradcheck
from difflab.func import jacfwd, jacrev
from difflab.nn.utils import parametrizations, parametrize

MAPS = ("matrix_exp", "cayley", "householder")
SHAPES = ((4, 4), (5, 3), (3, 5))


class Symmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).mT

    def right_inverse(self, a):
        return a.triu()


class Scale(nn.Module):
    def forward(self, x):
        return 3.0 * x


class Shrink(nn.Module):  # changes the shape: refused unless unsafe
    def forward(self, x):
        return x[:1]


def test_reading_the_tensor_computes_the_parametrization_each_time_and_records_it():
    dl.manual_seed(0)
    m = nn.Linear(3, 3)
    raw = m.weight
    parametrize.register_parametrization(m, "weight", Symmetric())
    assert type(m).__name__ == "ParametrizedLinear" and isinstance(m, nn.Linear)
    assert type(nn.Linear(3, 3)).__name__ == "Linear", "the other instances keep their class"
    original = m.parametrizations.weight.original
    assert original is raw, "the original is the same Parameter (the optimizer holds it)"
    assert [name for name, _ in m.named_parameters()] == ["bias",
                                                         "parametrizations.weight.original"]
    w = m.weight
    assert w is not m.weight and bool((w == w.mT).all())
    m(dl.ones(2, 3)).sum().backward()
    # d/dX of sum(W x) with W = triu(X) + triu(X,1)^T: each strictly-lower entry gets 0
    grad = original.grad.numpy()
    assert (np.tril(grad, -1) == 0).all() and (np.triu(grad) != 0).any()
    with dl.no_grad():
        original.fill_(1.0)
    assert m.weight.sum().item() == 9.0, "the next read sees the new original"


def test_chained_parametrizations_apply_in_registration_order():
    m = nn.Linear(2, 2)
    parametrize.register_parametrization(m, "weight", Symmetric())
    parametrize.register_parametrization(m, "weight", Scale())
    plist = m.parametrizations.weight
    assert isinstance(plist, parametrize.ParametrizationList) and len(plist) == 2
    x = plist.original.detach()
    expected = 3.0 * (x.triu() + x.triu(1).mT)
    assert bool(dl.allclose(m.weight, expected))
    with pytest.raises(RuntimeError, match="Scale does not implement right_inverse"):
        m.weight = dl.zeros(2, 2)


def test_assignment_calls_right_inverse_and_keeps_the_originals_identity():
    m = parametrize.register_parametrization(nn.Linear(2, 2), "weight", Symmetric())
    original = m.parametrizations.weight.original
    m.weight = dl.tensor([[1.0, 2.0], [2.0, 5.0]])
    assert m.parametrizations.weight.original is original
    assert original.tolist() == [[1.0, 2.0], [0.0, 5.0]]
    assert m.weight.tolist() == [[1.0, 2.0], [2.0, 5.0]]
    with pytest.raises(KeyError, match="attribute 'weight' already exists"):
        m.weight = nn.Parameter(dl.zeros(2, 2))


def test_a_buffer_can_be_parametrized_and_stays_a_buffer():
    m = nn.BatchNorm1d(3)
    parametrize.register_parametrization(m, "running_var", Scale())
    assert "parametrizations.running_var.original" in dict(m.named_buffers())
    assert m.running_var.tolist() == [3.0, 3.0, 3.0]


def test_cached_computes_once_per_block_and_empties_at_the_outermost_end():
    calls = []

    class Counting(nn.Module):
        def forward(self, x):
            calls.append(1)
            return x * 1.0

    m = parametrize.register_parametrization(nn.Linear(2, 2), "weight", Counting())
    calls.clear()
    with parametrize.cached():
        a = m.weight
        with parametrize.cached():
            assert m.weight is a
        assert m.weight is a, "the inner block's end does not empty the cache"
    assert len(calls) == 1
    assert m.weight is not a and len(calls) == 2


def test_removing_leaves_the_value_or_the_original_and_gives_the_class_back():
    dl.manual_seed(1)
    m = parametrize.register_parametrization(nn.Linear(3, 3), "weight", Scale())
    parametrize.register_parametrization(m, "bias", Scale())
    original = m.parametrizations.weight.original
    value = m.weight.detach().clone()
    parametrize.remove_parametrizations(m, "weight")
    assert m.weight is original and bool(dl.allclose(m.weight, value))
    assert type(m).__name__ == "ParametrizedLinear", "bias is still parametrized"
    bias_original = m.parametrizations.bias.original.detach().clone()
    parametrize.remove_parametrizations(m, "bias", leave_parametrized=False)
    assert type(m) is nn.Linear and not parametrize.is_parametrized(m)
    assert "parametrizations" not in dict(m.named_children())
    assert bool(dl.equal(m.bias, bias_original))
    assert list(m.state_dict()) == ["weight", "bias"]


def test_several_originals_cannot_be_left_unparametrized():
    m = parametrizations.weight_norm(nn.Linear(2, 2))
    with pytest.raises(ValueError, match="sequence of tensors"):
        parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)
    value = m.weight.detach().clone()
    parametrize.remove_parametrizations(m, "weight")
    assert isinstance(m.weight, nn.Parameter) and bool(dl.allclose(m.weight, value))


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a "
                                         "parametrized element with name 'wieght'"):
        parametrize.register_parametrization(nn.Linear(2, 2), "wieght", Scale())
    with pytest.raises(ValueError, match="registered as None"):
        parametrize.register_parametrization(nn.Linear(2, 2, bias=False), "bias", Scale())
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        parametrize.remove_parametrizations(nn.Linear(2, 2), "weight")
    m = nn.Linear(2, 2)
    with pytest.raises(ValueError, match="may not change the shape"):
        parametrize.register_parametrization(m, "weight", Shrink())
    assert type(m) is nn.Linear and "weight" in m._parameters, "a refused one changes nothing"
    parametrize.register_parametrization(m, "weight", Shrink(), unsafe=True)
    assert m.weight.shape == (1, 2)
    with pytest.raises(ValueError, match="may not change the shape"):
        parametrize.register_parametrization(parametrizations.weight_norm(nn.Linear(2, 2)),
                                             "weight", Shrink())


def test_state_dict_keys_are_pytorchs_and_load_into_a_fresh_parametrized_module():
    dl.manual_seed(2)
    cases = [
        (lambda m: parametrizations.weight_norm(m),
         ["bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]),
        (lambda m: parametrizations.spectral_norm(m),
         ["bias", "parametrizations.weight.original", "parametrizations.weight.0._u",
          "parametrizations.weight.0._v"]),
        (lambda m: parametrizations.orthogonal(m),
         ["bias", "parametrizations.weight.original", "parametrizations.weight.0.base"]),
    ]
    for make, keys in cases:
        a, b = make(nn.Linear(3, 4)), make(nn.Linear(3, 4))
        assert list(a.state_dict()) == keys
        b.load_state_dict(a.state_dict())
        a.eval(), b.eval()
        assert bool(dl.equal(a.weight, b.weight))
        with pytest.raises(RuntimeError, match="Missing key"):
            make(nn.Linear(3, 4)).load_state_dict(nn.Linear(3, 4).state_dict())


def test_a_parametrized_module_deep_copies_but_is_saved_only_by_its_state_dict(tmp_path):
    m = parametrizations.weight_norm(nn.Linear(2, 2))
    twin = copy.deepcopy(m)
    assert bool(dl.equal(twin.weight, m.weight))
    assert twin.parametrizations.weight.original0 is not m.parametrizations.weight.original0
    assert type(twin) is not type(m) and type(twin).__name__ == "ParametrizedLinear"
    parametrize.remove_parametrizations(twin, "weight")  # the original keeps its own
    assert type(twin) is nn.Linear and m.weight.shape == (2, 2)
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        m.__getstate__()
    with pytest.raises(RuntimeError, match=r"cannot save object\['model'\]\.0: serialization of "
                                           "parametrized modules is only supported through"):
        dl.save({"model": nn.Sequential(m)}, tmp_path / "model.pt")
    dl.save(m.state_dict(), tmp_path / "state.pt")
    fresh = parametrizations.weight_norm(nn.Linear(2, 2))
    fresh.load_state_dict(dl.load(tmp_path / "state.pt"))
    assert bool(dl.equal(fresh.weight, m.weight))


def test_type_before_parametrizations():
    m = parametrizations.orthogonal(nn.Linear(2, 2))
    assert parametrize.type_before_parametrizations(m) is nn.Linear
    assert parametrize.type_before_parametrizations(nn.ReLU()) is nn.ReLU


# ------------------------------------------------------------------ weight norm
@pytest.mark.parametrize("dim", [0, 1, None, -2])
def test_weight_norm_keeps_the_weight_and_its_derivative_checks(dim):
    dl.manual_seed(3)
    m = nn.Linear(3, 4).double()
    before = m.weight.detach().clone()
    parametrizations.weight_norm(m, dim=dim)
    assert bool(dl.allclose(m.weight, before))
    g = m.parametrizations.weight.original0
    expected = {0: (4, 1), 1: (1, 3), None: (), -2: (4, 1)}[dim]
    assert tuple(g.shape) == expected
    norm = m.parametrizations.weight[0]
    g0 = g.detach().clone().requires_grad_()
    v0 = dl.randn(4, 3, dtype=dl.float64, requires_grad=True)
    assert gradcheck(norm, (g0, v0))
    forward, reverse = jacfwd(norm, argnums=(0, 1))(g0, v0), jacrev(norm, argnums=(0, 1))(g0, v0)
    for a, b in zip(forward, reverse):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-12)


def test_weight_norm_of_a_zero_direction_is_nan_as_in_pytorch():
    m = parametrizations.weight_norm(nn.Linear(2, 2))
    with dl.no_grad():
        m.parametrizations.weight.original1.zero_()
    with np.errstate(all="ignore"):
        assert bool(dl.isnan(m.weight).all())


# ---------------------------------------------------------------- spectral norm
def test_spectral_norm_iterates_in_training_only_and_reaches_sigma_one():
    dl.manual_seed(4)
    m = parametrizations.spectral_norm(nn.Linear(5, 6).double())
    sn = m.parametrizations.weight[0]
    assert not sn._u.requires_grad and not sn._v.requires_grad
    for _ in range(50):
        _ = m.weight  # each read in training mode: one power-iteration step
    sigma = np.linalg.svd(m.weight.detach().numpy(), compute_uv=False)[0]
    assert sigma == pytest.approx(1.0, abs=1e-8)
    m.eval()
    u = sn._u.clone()
    m(dl.ones(2, 5, dtype=dl.float64)).sum().backward()
    assert bool(dl.equal(sn._u, u)), "eval mode does not iterate"
    m.train()
    with dl.no_grad():
        m.parametrizations.weight.original.mul_(dl.randn(6, 5, dtype=dl.float64))
    _ = m.weight
    assert not bool(dl.equal(sn._u, u)), "training mode does"


def test_spectral_norm_in_eval_mode_has_a_checked_derivative_through_sigma():
    dl.manual_seed(5)
    m = parametrizations.spectral_norm(nn.Conv2d(2, 3, 2).double()).eval()
    sn = m.parametrizations.weight[0]
    w = dl.randn(3, 2, 2, 2, dtype=dl.float64, requires_grad=True)
    assert gradcheck(sn, (w,))
    np.testing.assert_allclose(jacfwd(sn)(w).detach().numpy(), jacrev(sn)(w).detach().numpy(),
                               atol=1e-12)


def test_spectral_norm_errors():
    with pytest.raises(ValueError, match="n_power_iterations to be positive"):
        parametrizations.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        parametrizations.spectral_norm(nn.Linear(2, 2), dim=2)
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'w'"):
        parametrizations.spectral_norm(nn.Linear(2, 2), "w")
    conv = parametrizations.spectral_norm(nn.ConvTranspose1d(2, 5, 3))
    assert conv.parametrizations.weight[0]._u.shape == (5,), "ConvTranspose: dim 1"


# ------------------------------------------------------------------- orthogonal
@pytest.mark.parametrize("kind", MAPS)
@pytest.mark.parametrize("shape", SHAPES)
def test_orthogonal_weights_stay_orthogonal_through_training(kind, shape):
    dl.manual_seed(6)
    m = parametrizations.orthogonal(nn.Linear(shape[1], shape[0]).double(),
                                    orthogonal_map=kind)
    opt = optim.Adam(m.parameters(), lr=0.05)
    start = m.weight.detach().clone()
    for _ in range(10):
        opt.zero_grad()
        loss = (m(dl.randn(8, shape[1], dtype=dl.float64)) - 1.0).pow(2).sum()
        loss.backward()
        opt.step()
    w = m.weight.detach().numpy()
    gram = w.T @ w if shape[0] >= shape[1] else w @ w.T
    np.testing.assert_allclose(gram, np.eye(min(shape)), atol=1e-12)
    assert not np.allclose(w, start.numpy()), "it trained"


@pytest.mark.parametrize("kind", MAPS)
def test_orthogonal_maps_have_checked_derivatives(kind):
    dl.manual_seed(7)
    for shape in SHAPES:
        m = parametrizations.orthogonal(nn.Linear(shape[1], shape[0]).double(),
                                        orthogonal_map=kind)
        orth = m.parametrizations.weight[0]
        x = dl.randn(*shape, dtype=dl.float64) * 0.3
        if kind == "householder":  # its diagonal gives signs (int(-1.5) = -1), not trained
            k = min(shape)
            with dl.no_grad():
                x[range(k), range(k)] = -1.5
        x.requires_grad_()
        assert gradcheck(orth, (x,))
        np.testing.assert_allclose(jacfwd(orth)(x).detach().numpy(),
                                   jacrev(orth)(x).detach().numpy(), atol=1e-12)


def test_orthogonal_assignment_projects_onto_the_orthogonal_matrices():
    dl.manual_seed(8)
    m = parametrizations.orthogonal(nn.Linear(3, 3).double())
    q = dl.linalg.qr(dl.randn(3, 3, dtype=dl.float64)).Q
    m.weight = q
    assert bool(dl.allclose(m.weight, q, atol=1e-12))
    m.weight = dl.tensor([[2.0, 0, 0], [0, 3.0, 0], [0, 0, -1.0]], dtype=dl.float64)
    np.testing.assert_allclose(m.weight.detach().numpy(), np.diag([1.0, 1.0, -1.0]),
                               atol=1e-12)
    with pytest.raises(ValueError, match=r"Expected a matrix or batch of matrices of shape"):
        m.parametrizations.weight[0].right_inverse(dl.zeros(2, 2, dtype=dl.float64))
    plain = parametrizations.orthogonal(nn.Linear(3, 3), orthogonal_map="cayley",
                                        use_trivialization=False)
    assert "parametrizations.weight.0.base" not in plain.state_dict()


def test_orthogonal_errors_name_the_maps():
    with pytest.raises(ValueError, match='one of "matrix_exp", "cayley", "householder". '
                                         "Got: qr"):
        parametrizations.orthogonal(nn.Linear(2, 2), orthogonal_map="qr")
    with pytest.raises(ValueError, match="Got a tensor of 1 dimensions"):
        parametrizations.orthogonal(nn.Linear(2, 2), "bias")
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'kernel'"):
        parametrizations.orthogonal(nn.Linear(2, 2), "kernel")
    with pytest.raises(NotImplementedError, match="use_trivialization=False"):
        parametrizations.orthogonal(nn.Linear(2, 2), orthogonal_map="matrix_exp",
                                    use_trivialization=False).weight = dl.eye(2)


def test_orthogonal_on_a_batch_of_matrices():
    dl.manual_seed(9)
    m = nn.Module()
    m.register_parameter("w", nn.Parameter(dl.randn(2, 4, 3, dtype=dl.float64)))
    parametrizations.orthogonal(m, "w")
    w = m.w.detach().numpy()
    for matrix in w:
        np.testing.assert_allclose(matrix.T @ matrix, np.eye(3), atol=1e-12)
