"""Names and keywords PyTorch programs use that difflab lacked (found by running such
programs): each does what PyTorch does (values recorded from PyTorch 2.13 on the CPU),
or refuses by name what difflab cannot do."""

import numpy as np
import pytest

import difflab as torch  # (as the programs spell it)
from difflab import nn

METHODS = ("reverse", "forward", "symbolic", "numeric", "compiled")


# ----------------------------------------------------------------------- torch.diff


def test_diff_is_pytorchs_and_the_package_of_the_differentiators_too():
    assert torch.diff(torch.tensor([1.0, 3.0, 6.0, 10.0])).tolist() == [2.0, 3.0, 4.0]
    assert torch.tensor([[1, 2], [4, 8]]).diff(dim=0).tolist() == [[3, 6]]
    assert torch.diff(torch.tensor([True, False, False])).tolist() == [True, False]
    assert torch.diff(torch.tensor([1.0, 2.0]), append=torch.tensor([5.0])).tolist() == [1.0, 3.0]
    assert torch.diff(torch.tensor([1.0, 2.0]), append=5.0).tolist() == [1.0, 3.0]
    assert torch.diff(torch.tensor([1.0, 3.0, 6.0]), n=2,
                      prepend=torch.tensor([0.0])).tolist() == [1.0, 1.0]
    assert torch.diff(torch.tensor([1.0, 2.0]), n=5).shape == (0,)
    from difflab.diff import differentiators  # (the package is still the package)

    assert torch.diff.differentiators is differentiators
    assert torch.diff.Dual is torch.Dual


@pytest.mark.parametrize("method", METHODS)
def test_diff_derivative_agrees_across_methods(method):
    x = torch.tensor([0.3, -1.2, 2.5, 0.7], dtype=torch.float64)
    weights = torch.tensor([1.0, -2.0], dtype=torch.float64)
    g = torch.grad(lambda v: (torch.diff(v, n=2) * weights).sum(), method=method)(x)
    np.testing.assert_allclose(np.asarray(g), [1.0, -4.0, 5.0, -2.0], rtol=1e-7, atol=1e-9)


def test_diff_bad_arguments():
    with pytest.raises(ValueError, match="non-negative"):
        torch.diff(torch.tensor([1.0, 2.0]), n=-1)
    with pytest.raises(IndexError, match="no dimensions"):
        torch.diff(torch.tensor(1.0))


# ------------------------------------------------------------------ masked_scatter


def test_masked_scatter_matches_pytorch():
    x = torch.zeros(2, 3)
    got = x.masked_scatter(torch.tensor([[True, False, True], [False, True, True]]),
                           torch.arange(10.0))
    assert got.tolist() == [[0.0, 0.0, 1.0], [0.0, 2.0, 3.0]]
    got = x.masked_scatter(torch.tensor([True, False, True]), torch.arange(10.0))  # broadcast
    assert got.tolist() == [[0.0, 0.0, 1.0], [2.0, 0.0, 3.0]]


@pytest.mark.parametrize("method", ("reverse", "forward", "numeric", "compiled"))
def test_masked_scatter_gradients_reach_input_and_source_as_in_pytorch(method):
    mask = torch.tensor([False, True, True])
    weights = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    s = torch.tensor([5.0, 6.0, 7.0], dtype=torch.float64)
    gx = torch.grad(lambda v: (v.masked_scatter(mask, s) * weights).sum(), method=method)(x)
    gs = torch.grad(lambda v: (x.masked_scatter(mask, v) * weights).sum(), method=method)(s)
    np.testing.assert_allclose(np.asarray(gx), [1.0, 0.0, 0.0], atol=1e-9)  # (PyTorch's)
    np.testing.assert_allclose(np.asarray(gs), [2.0, 3.0, 0.0], atol=1e-9)


def test_masked_scatter_bad_arguments():
    with pytest.raises(ValueError, match="2 True places but source has only 1"):
        torch.zeros(3).masked_scatter(torch.tensor([True, False, True]), torch.ones(1))
    with pytest.raises(TypeError, match="bool"):
        torch.zeros(3).masked_scatter(torch.tensor([1, 0, 1]), torch.ones(3))


# ---------------------------------------------------------------- tensor's memory


def test_nbytes_itemsize_and_pin_memory():
    x = torch.zeros(2, 3, dtype=torch.float64)
    assert (x.nbytes, x.itemsize, x[:, 1].nbytes) == (48, 8, 16)
    pinned = x.pin_memory()
    pinned.add_(1.0)
    assert float(x.sum()) == 0.0 and not x.is_pinned()  # (a copy, as PyTorch's)
    w = torch.ones(2, requires_grad=True)
    (w.pin_memory() * 3.0).sum().backward()
    assert w.grad.tolist() == [3.0, 3.0]


# -------------------------------------------------------------- autograd.grad flags


def test_autograd_grad_materialize_grads_gives_zeros_for_unused_inputs():
    x, y = torch.randn(3, requires_grad=True), torch.randn(2, requires_grad=True)
    gx, gy = torch.autograd.grad((x * 2).sum(), [x, y], materialize_grads=True)
    assert gx.tolist() == [2.0, 2.0, 2.0] and gy.tolist() == [0.0, 0.0]
    assert torch.autograd.grad((x * 2).sum(), [x, y], allow_unused=True)[1] is None
    with pytest.raises(ValueError, match="materialize_grads=True"):
        torch.autograd.grad((x * 2).sum(), [x, y], materialize_grads=True, allow_unused=False)
    with pytest.raises(ValueError, match="is_grads_batched"):
        torch.autograd.grad((x * 2).sum(), [x], is_grads_batched=True)
    assert torch.autograd.grad((x * 2).sum(), [x], only_inputs=True)[0].tolist() == [2.0] * 3


# ------------------------------------------------------------------ clip_grad foreach


def test_clip_grad_takes_foreach_and_a_nan_norm_spreads_as_in_pytorch():
    p = nn.Parameter(torch.zeros(2))
    p.grad = torch.tensor([3.0, 4.0])
    assert float(nn.utils.clip_grad_norm_([p], 1.0, foreach=True)) == 5.0
    nn.utils.clip_grad_value_([p], 0.7, foreach=False)
    np.testing.assert_allclose(p.grad.numpy(), [0.6, 0.7], rtol=1e-6)
    p.grad = torch.tensor([float("nan"), 4.0])
    nn.utils.clip_grad_norm_([p], 1.0)
    assert np.isnan(p.grad.numpy()).all()  # (PyTorch: tensor([nan, nan]))


# ---------------------------------------------------------- the optimizers' switches

OPTIMIZERS = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam",
              "RAdam", "Rprop", "ASGD", "SparseAdam"]


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizers_take_pytorchs_implementation_switches_and_step_the_same(name):
    def trained(**switches):
        torch.manual_seed(0)
        p = nn.Parameter(torch.randn(4))
        opt = getattr(torch.optim, name)([p], lr=0.1, **switches)
        for _ in range(3):
            opt.zero_grad()
            (p ** 2).sum().backward()
            opt.step()
        return p.detach().numpy()

    plain = trained()
    np.testing.assert_array_equal(trained(foreach=True, fused=True, capturable=True), plain)
    np.testing.assert_array_equal(trained(foreach=False, fused=None), plain)
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        getattr(torch.optim, name)([nn.Parameter(torch.randn(2))], differentiable=True)
    with pytest.raises(TypeError, match="foreach must be True or False"):
        getattr(torch.optim, name)([nn.Parameter(torch.randn(2))], foreach="yes")


def test_nanogpt_looks_for_fused_in_the_signature():
    import inspect

    assert "fused" in inspect.signature(torch.optim.AdamW).parameters


# ------------------------------------------------------------------------- Embedding


def test_embedding_max_norm_rescales_the_rows_looked_up_as_pytorch():
    w = torch.tensor([[3.0, 4.0], [0.3, 0.4], [1.0, 1.0]])
    e = nn.Embedding.from_pretrained(w.clone(), max_norm=1.0, freeze=False)
    out = e(torch.tensor([0, 2, 2]))
    want = [[0.6, 0.8], [0.7071068, 0.7071068], [0.7071068, 0.7071068]]
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(e.weight.detach().numpy(),  # (the table itself changed)
                               [[0.6, 0.8], [0.3, 0.4], [0.7071068, 0.7071068]], rtol=1e-6)
    out.sum().backward()
    assert e.weight.grad.tolist() == [[1.0, 1.0], [0.0, 0.0], [2.0, 2.0]]


def test_embedding_max_norm_with_norm_type_one_and_a_saved_table_refuses_backward():
    e = nn.Embedding(4, 3, max_norm=0.5, norm_type=1.0)
    with torch.no_grad():
        e.weight.fill_(1.0)  # (every row's 1-norm is 3)
    rows = e(torch.tensor([1, 3]))
    np.testing.assert_allclose(rows.detach().abs().sum(1).numpy(), [0.5, 0.5], rtol=1e-6)
    assert e.weight[0].tolist() == [1.0, 1.0, 1.0]  # (a row not looked up is left alone)
    saving = (e.weight * e.weight).sum()  # (the product saves the table)...
    e(torch.tensor([0]))  # ...which the lookup then rescales in place
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        saving.backward()


def test_embedding_constructor_options():
    table = torch.arange(6.0).reshape(3, 2)
    e = nn.Embedding(3, 2, _weight=table, _freeze=True, sparse=True)
    assert e.weight.tolist() == table.tolist() and not e.weight.requires_grad
    assert "sparse=True" in repr(e)
    with pytest.raises(ValueError, match="does not match"):
        nn.Embedding(4, 2, _weight=table)
    with pytest.raises(NotImplementedError, match="scale_grad_by_freq"):
        nn.Embedding(3, 2, scale_grad_by_freq=True)(torch.tensor([0]))


# ------------------------------------------------------------------------ torch.vmap


def test_vmap_at_the_top_level_is_torch_func_vmap():
    assert torch.vmap is torch.func.vmap
    assert torch.vmap(lambda v: v * 2)(torch.ones(3, 2)).tolist() == [[2.0, 2.0]] * 3
