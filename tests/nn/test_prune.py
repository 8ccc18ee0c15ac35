"""nn.utils.prune: masks, the reparametrization (weight_orig, weight_mask, the hook),
iterative pruning through PruningContainer, removal, checkpoints, PyTorch's errors.

(The masks themselves are compared with PyTorch's in test_nn_utils_match_pytorch.py.)
"""

from __future__ import annotations

import numpy as np
import pytest

import difflab as dl
import difflab.nn as nn
from difflab import optim
from difflab.nn.utils import prune


def linear(weight):
    m = nn.Linear(len(weight[0]), len(weight))
    m.weight.data = dl.tensor(weight)
    return m


W = [[0.5, -4.0, 0.1, 2.0], [-0.3, 1.0, -6.0, 0.05], [3.0, -0.2, 0.7, -1.5]]


def test_l1_unstructured_masks_the_smallest_and_the_gradient_is_masked():
    m = prune.l1_unstructured(linear(W), "weight", amount=0.25)  # 3 of 12
    assert m.weight_mask.tolist() == [[1, 1, 0, 1], [1, 1, 1, 0], [1, 0, 1, 1]]
    assert sorted(n for n, _ in m.named_parameters()) == ["bias", "weight_orig"]
    assert list(m.state_dict()) == ["bias", "weight_orig", "weight_mask"]
    assert prune.is_pruned(m) and prune.is_pruned(nn.Sequential(m))
    x = dl.randn(5, 4)
    m(x).sum().backward()
    expected = (dl.ones(5, 3).mT @ x) * m.weight_mask
    assert bool(dl.allclose(m.weight_orig.grad, expected))
    opt = optim.SGD(m.parameters(), lr=0.5)
    opt.step()
    m(x)  # the hook recomputes weight from the trained orig
    assert bool((m.weight[m.weight_mask == 0] == 0).all())
    assert bool(dl.equal(m.weight, m.weight_orig * m.weight_mask))


def test_a_second_pruning_prunes_among_the_entries_left():
    m = prune.l1_unstructured(linear(W), "weight", amount=4)
    first = m.weight_mask.clone()
    prune.l1_unstructured(m, "weight", amount=0.5)  # half of the 8 left
    second = m.weight_mask
    assert int((first == 0).sum()) == 4 and int((second == 0).sum()) == 8
    assert bool((second <= first).all()), "what was pruned stays pruned"
    hooks = list(m._forward_pre_hooks.values())
    assert len(hooks) == 1 and isinstance(hooks[0], prune.PruningContainer)
    assert len(hooks[0]) == 2
    prune.random_unstructured(m, "weight", amount=1)
    container = next(iter(m._forward_pre_hooks.values()))
    assert int((m.weight_mask == 0).sum()) == 9 and len(container) == 3


def test_structured_pruning_removes_whole_channels():
    m = prune.ln_structured(linear(W), "weight", amount=1, n=1, dim=0)
    assert m.weight_mask.sum(dim=1).tolist() == [4.0, 4.0, 0.0]  # |row 3|_1 = 5.4 smallest
    prune.ln_structured(m, "weight", amount=0.5, n=2, dim=0)  # among the 2 rows left
    assert m.weight_mask.sum(dim=1).tolist() == [0.0, 4.0, 0.0]
    r = prune.random_structured(linear(W), "weight", amount=2, dim=1)
    assert sorted(r.weight_mask.sum(dim=0).tolist()) == [0.0, 0.0, 3.0, 3.0]
    conv = prune.ln_structured(nn.Conv2d(2, 4, 3), "weight", amount=0.5, n=2, dim=0)
    assert sorted(conv.weight_mask.sum(dim=(1, 2, 3)).tolist()) == [0.0, 0.0, 18.0, 18.0]


def test_importance_scores_rank_instead_of_the_values():
    scores = dl.tensor([[9.0, 9.0, 9.0, 0.0]] * 3)
    m = prune.l1_unstructured(linear(W), "weight", amount=3, importance_scores=scores)
    assert m.weight_mask[:, 3].tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="importance_scores should have the same shape"):
        prune.l1_unstructured(linear(W), "weight", amount=1, importance_scores=dl.ones(2))


def test_global_pruning_ranks_every_tensor_together():
    small, large = linear([[0.1, 0.2], [0.3, 0.4]]), linear([[5.0, 6.0], [7.0, 8.0]])
    prune.global_unstructured([(small, "weight"), (large, "weight")],
                              pruning_method=prune.L1Unstructured, amount=0.5)
    assert small.weight_mask.sum().item() == 0.0 and large.weight_mask.sum().item() == 4.0
    with pytest.raises(TypeError, match='Only "unstructured" PRUNING_TYPE'):
        prune.global_unstructured([(large, "bias")], prune.RandomStructured, amount=1)
    with pytest.raises(TypeError, match="importance_scores must be of type dict"):
        prune.global_unstructured([(large, "bias")], prune.L1Unstructured,
                                  importance_scores=[1], amount=1)
    with pytest.raises(TypeError, match="parameters is not an Iterable"):
        prune.global_unstructured(5, prune.L1Unstructured, amount=1)


def test_remove_makes_it_permanent_in_the_same_parameter():
    m = prune.l1_unstructured(linear(W), "weight", amount=5)
    orig = m.weight_orig
    opt = optim.SGD(m.parameters(), lr=0.1)
    prune.remove(m, "weight")
    assert m.weight is orig and isinstance(m.weight, nn.Parameter)
    assert int((m.weight == 0).sum()) == 5 and not prune.is_pruned(m)
    assert list(m.state_dict()) == ["bias", "weight"] and not m._forward_pre_hooks
    assert any(p is orig for group in opt.param_groups for p in group["params"])


def test_a_pruned_checkpoint_loads_into_a_module_pruned_the_same_way():
    a = prune.l1_unstructured(linear(W), "weight", amount=6)
    b = prune.identity(nn.Linear(4, 3), "weight")
    assert b.weight_mask.sum().item() == 12.0
    b.load_state_dict(a.state_dict())
    x = dl.randn(2, 4)
    assert bool(dl.equal(a(x), b(x))) and bool(dl.equal(b.weight_mask, a.weight_mask))


@pytest.mark.parametrize("amount, error, message", [
    (13, ValueError, "amount=13 should be smaller than the number of parameters to prune=12"),
    (-1, ValueError, "amount=-1 should either be a float in the range"),
    (1.5, ValueError, "amount=1.5 should either be a float in the range"),
    (-0.1, ValueError, "should either be a float in the range"),
    ("half", TypeError, "Invalid type for amount: half. Must be int or float."),
    (None, TypeError, "Invalid type for amount"),
])
def test_bad_amounts_are_refused_and_leave_the_module_as_it_was(amount, error, message):
    m = linear(W)
    with pytest.raises(error, match=message):
        prune.l1_unstructured(m, "weight", amount=amount)
    assert "weight" in m._parameters and not m._buffers and not prune.is_pruned(m)
    m = prune.l1_unstructured(linear(W), "weight", amount=10)
    mask = m.weight_mask.clone()
    with pytest.raises(ValueError, match="amount=3 should be smaller than the number of "
                                         "parameters to prune=2"):
        prune.l1_unstructured(m, "weight", amount=3)  # only 2 left
    assert bool(dl.equal(m.weight_mask, mask)) and len(m._forward_pre_hooks) == 1


def test_other_errors_name_the_problem():
    with pytest.raises(AttributeError, match="has no attribute 'wieght'"):
        prune.l1_unstructured(linear(W), "wieght", amount=1)
    with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
        prune.remove(linear(W), "weight")
    with pytest.raises(ValueError, match="Structured pruning can only be applied to "
                                         "multidimensional tensors"):
        prune.ln_structured(linear(W), "bias", amount=1, n=2, dim=0)
    with pytest.raises(IndexError, match="Invalid index 2 for tensor of size"):
        prune.random_structured(linear(W), "weight", amount=1, dim=2)
    with pytest.raises(ValueError, match="only parameters can be pruned"):
        prune.identity(nn.BatchNorm1d(2), "running_mean")
    container = prune.PruningContainer(prune.L1Unstructured(amount=1))
    with pytest.raises(TypeError, match="is not a BasePruningMethod subclass"):
        container.add_pruning_method("l1")


def test_prune_without_a_module_and_the_edges():
    assert prune.L1Unstructured(amount=0).prune(dl.tensor([1.0, 2.0])).tolist() == [1.0, 2.0]
    assert prune.L1Unstructured(amount=1.0).prune(dl.ones(3)).tolist() == [0.0, 0.0, 0.0]
    assert prune.RandomUnstructured(amount=0).compute_mask(
        dl.ones(2), dl.ones(2)).tolist() == [1.0, 1.0]
    # nan and inf weights: |nan| and inf rank as largest (kept), as in PyTorch's topk
    t = dl.tensor([float("nan"), float("inf"), 0.5, -0.1])
    assert prune.L1Unstructured(amount=2).compute_mask(t, dl.ones(4)).tolist() == [1, 1, 0, 0]
    assert np.isnan(prune.L1Unstructured(amount=2).prune(t).numpy()[0])


def test_a_method_without_compute_mask_says_so():
    class Nothing(prune.BasePruningMethod):
        PRUNING_TYPE = "unstructured"

    m = linear(W)
    with pytest.raises(NotImplementedError, match="Nothing must define compute_mask"):
        Nothing.apply(m, "weight")
    assert "weight" in m._parameters, "left as it was"
