"""Indexing along a dimension and sorting, as PyTorch documents them.

gather, scatter, scatter_add, index_select, masked_fill, sort, argsort, topk
and roll: the documented examples, gradients against central differences
(first and second order) on the CPU and on CUDA (or its stand-in), and the
errors for bad input.
"""

import numpy as np
import pytest

import difflab as dl
from difflab.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(7)


def make(shape, device="cpu"):
    return dl.tensor(RNG.uniform(-2, 2, size=shape), dtype=dl.float64, device=device,
                     requires_grad=True)


def values(t):
    return dl.tensor(t).tolist() if not isinstance(t, dl.Tensor) else t.tolist()


# ------------------------------------------------------------------------- gather


def test_gather_documented_example():
    t = dl.tensor([[1, 2], [3, 4]])
    assert dl.gather(t, 1, dl.tensor([[0, 0], [1, 0]])).tolist() == [[1, 1], [4, 3]]
    assert t.gather(0, dl.tensor([[1, 0]])).tolist() == [[3, 2]]
    assert dl.gather(input=t, dim=-1, index=dl.tensor([[1], [0]])).tolist() == [[2], [3]]


def test_gather_picks_along_the_dimension_like_take_along_axis(device):
    x = make((3, 4, 5), device)
    index = dl.tensor(RNG.integers(0, 4, size=(3, 2, 5)), device=device)
    out = x.gather(1, index)
    assert out.shape == (3, 2, 5) and out.device == x.device
    expected = np.take_along_axis(x.detach().cpu().numpy(), index.cpu().numpy(), axis=1)
    np.testing.assert_array_equal(out.detach().cpu().numpy(), expected)


def test_gather_gradient_adds_where_the_index_repeats(device):
    x = make((2, 3), device)
    index = dl.tensor([[0, 0, 2, 0], [1, 1, 1, 2]], device=device)
    x.gather(1, index).sum().backward()
    assert x.grad.tolist() == [[3.0, 0.0, 1.0], [0.0, 3.0, 1.0]]
    assert gradcheck(lambda a: a.gather(1, index), (x,))
    assert gradgradcheck(lambda a: a.gather(1, index), (x,))


def test_gather_errors_name_the_problem():
    x = dl.randn(3, 4)
    with pytest.raises(RuntimeError, match="index has 1 dimension but the input has 2"):
        x.gather(1, dl.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="index 4 is out of bounds for dimension 1 with size 4"):
        x.gather(1, dl.tensor([[0, 4]]))
    with pytest.raises(RuntimeError, match="index -1 is out of bounds"):
        x.gather(0, dl.tensor([[-1]]))
    with pytest.raises(TypeError, match="integer dtype"):
        x.gather(0, dl.tensor([[0.0]]))
    with pytest.raises(RuntimeError, match="Size does not match at dimension 0"):
        x.gather(1, dl.zeros(4, 1, dtype=dl.int64))
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.gather(2, dl.zeros(1, 1, dtype=dl.int64))


# ------------------------------------------------------------------------ scatter


def test_scatter_documented_examples():
    src = dl.arange(1, 11).reshape(2, 5)
    index = dl.tensor([[0, 1, 2, 0]])
    out = dl.zeros(3, 5, dtype=src.dtype).scatter_(0, index, src)
    assert out.tolist() == [[1, 0, 0, 4, 0], [0, 2, 0, 0, 0], [0, 0, 3, 0, 0]]
    index = dl.tensor([[0, 1, 2], [0, 1, 4]])
    out = dl.zeros(3, 5, dtype=src.dtype).scatter(1, index, src)
    assert out.tolist() == [[1, 2, 3, 0, 0], [6, 7, 0, 0, 8], [0, 0, 0, 0, 0]]
    out = dl.full((2, 4), 2.0).scatter(1, dl.tensor([[2], [3]]), value=1.23)
    np.testing.assert_allclose(out.numpy(), [[2, 2, 1.23, 2], [2, 2, 2, 1.23]], rtol=1e-6)


def test_scatter_add_documented_examples():
    src = dl.ones(2, 5)
    index = dl.tensor([[0, 1, 2, 0, 0]])
    out = dl.zeros(3, 5).scatter_add_(0, index, src)
    assert out.tolist() == [[1, 0, 0, 1, 1], [0, 1, 0, 0, 0], [0, 0, 1, 0, 0]]
    index = dl.tensor([[0, 1, 2, 0, 0], [0, 1, 2, 2, 2]])
    out = dl.scatter_add(dl.zeros(3, 5), 0, index, src)
    assert out.tolist() == [[2, 0, 0, 1, 1], [0, 2, 0, 0, 0], [0, 0, 2, 1, 1]]
    assert dl.zeros(3, 5).scatter(0, index, src, reduce="add").tolist() == out.tolist()


def test_scatter_and_scatter_add_gradients(device):
    x, src = make((3, 4), device), make((2, 4), device)
    index = dl.tensor([[0, 1, 2, 0], [2, 0, 1, 1]], device=device)  # no repeats per column
    assert gradcheck(lambda a, s: a.scatter(0, index, s), (x, src))
    assert gradgradcheck(lambda a, s: a.scatter(0, index, s), (x, src))
    repeats = dl.tensor([[0, 0, 2, 0], [0, 0, 0, 2]], device=device)
    assert gradcheck(lambda a, s: a.scatter_add(0, repeats, s), (x, src))
    assert gradgradcheck(lambda a, s: a.scatter_add(0, repeats, s), (x, src))
    # the overwritten entries of the input get no gradient
    x.scatter(0, index, src).sum().backward()
    assert x.grad.tolist() == [[0, 0, 1, 0], [1, 0, 0, 0], [0, 1, 0, 1]]
    assert src.grad.tolist() == [[1.0] * 4, [1.0] * 4]


def test_scatter_reads_only_the_leading_block_of_a_larger_src():
    src = dl.arange(12.0).reshape(3, 4).requires_grad_()
    out = dl.zeros(2, 4).scatter(0, dl.tensor([[1, 0]]), src)
    assert out.tolist() == [[0, 1, 0, 0], [0, 0, 0, 0]]
    out.sum().backward()
    assert src.grad.tolist() == [[1, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]


def test_scatter_errors():
    x = dl.zeros(3, 4)
    with pytest.raises(RuntimeError, match="no larger than src"):
        x.scatter(0, dl.tensor([[0, 1, 2]]), dl.ones(1, 2))
    with pytest.raises(RuntimeError, match="out of bounds for dimension 0 with size 3"):
        x.scatter_add(0, dl.tensor([[3]]), dl.ones(1, 1))
    with pytest.raises(TypeError, match="src .* or value"):
        x.scatter(0, dl.tensor([[0]]))
    with pytest.raises(ValueError, match="reduce"):
        x.scatter(0, dl.tensor([[0]]), dl.ones(1, 1), reduce="mean")


# -------------------------------------------------------------- index_select, masks


def test_index_select_documented_example_and_gradient(device):
    x = dl.tensor([[0.1427, 0.0231, -0.5414, -1.0009], [-0.4664, 0.2647, -0.1228, -1.1068],
                   [-1.1734, -0.6571, 0.7230, -0.6004]], device=device)
    indices = dl.tensor([0, 2], device=device)
    np.testing.assert_array_equal(dl.index_select(x, 0, indices).cpu().numpy(),
                                  x.cpu().numpy()[[0, 2]])
    np.testing.assert_array_equal(x.index_select(1, indices).cpu().numpy(),
                                  x.cpu().numpy()[:, [0, 2]])
    y = make((4, 3), device)
    repeated = dl.tensor([3, 0, 3], device=device)
    assert gradcheck(lambda a: a.index_select(0, repeated), (y,))
    assert gradgradcheck(lambda a: a.index_select(1, dl.tensor([2, 2, 0], device=device)), (y,))
    with pytest.raises(RuntimeError, match="index 3 is out of bounds for dimension 1 with size 3"):
        y.index_select(1, dl.tensor([3]))
    with pytest.raises(RuntimeError, match="must be a vector"):
        y.index_select(0, dl.tensor([[0]]))


def test_masked_fill_needs_a_boolean_mask_and_passes_gradients(device):
    x = make((2, 3), device)
    mask = dl.tensor([[True, False, True], [False, False, True]], device=device)
    out = dl.masked_fill(x, mask, -1.0)
    expected = np.where(mask.cpu().numpy(), -1.0, x.detach().cpu().numpy())
    np.testing.assert_array_equal(out.detach().cpu().numpy(), expected)
    assert gradcheck(lambda a: a.masked_fill(mask, 0.5), (x,))
    fill = dl.tensor(2.0, dtype=dl.float64, device=device, requires_grad=True)
    x.masked_fill(mask[0], fill).sum().backward()  # the mask broadcasts over rows
    assert fill.grad.item() == 4.0
    with pytest.raises(RuntimeError, match="only supports boolean masks"):
        x.masked_fill(dl.ones(2, 3, device=device), 0.0)
    with pytest.raises(RuntimeError, match="0-dimensional value tensor"):
        x.masked_fill(mask, dl.ones(3, device=device))
    y = dl.zeros(2, 3, device=device)
    y.masked_fill_(mask, 7.0)
    assert y.sum().item() == 21.0


# ------------------------------------------------------------------------ sorting


def test_sort_and_argsort_as_documented():
    x = dl.tensor([[3.0, 1.0, 2.0], [0.5, -1.0, 0.5]])
    values, indices = dl.sort(x)
    assert values.tolist() == [[1, 2, 3], [-1, 0.5, 0.5]]
    assert indices.tolist() == [[1, 2, 0], [1, 0, 2]]  # ties keep their order (stable)
    result = x.sort(dim=0, descending=True)
    assert result.values.tolist() == [[3, 1, 2], [0.5, -1, 0.5]]
    assert result.indices.dtype == dl.int64
    assert dl.argsort(x, dim=1, descending=True).tolist() == [[0, 2, 1], [0, 2, 1]]
    # NaN is the largest value, as in PyTorch
    nan = float("nan")
    assert dl.argsort(dl.tensor([2.0, nan, -1.0])).tolist() == [2, 0, 1]
    assert dl.argsort(dl.tensor([2.0, nan, -1.0]), descending=True).tolist() == [1, 0, 2]
    assert dl.sort(dl.tensor([3, 1, 2], dtype=dl.uint8), descending=True)[0].tolist() == [3, 2, 1]


def test_sort_and_topk_gradients_go_to_the_chosen_entries(device):
    x = make((3, 5), device)
    assert gradcheck(lambda a: a.sort(1)[0], (x,))
    assert gradgradcheck(lambda a: a.sort(0, descending=True).values, (x,))
    assert gradcheck(lambda a: a.topk(2, dim=1).values, (x,))
    y = dl.tensor([1.0, 5.0, 3.0, 4.0], device=device, requires_grad=True)
    top = dl.topk(y, 2)
    assert top.values.tolist() == [5.0, 4.0] and top.indices.tolist() == [1, 3]
    top.values.sum().backward()
    assert y.grad.tolist() == [0.0, 1.0, 0.0, 1.0]
    assert dl.topk(y, 3, largest=False).indices.tolist() == [0, 2, 3]


def test_topk_errors():
    with pytest.raises(RuntimeError, match="k=6 is out of range"):
        dl.topk(dl.randn(2, 5), 6)
    with pytest.raises(RuntimeError, match="out of range"):
        dl.topk(dl.randn(5), -1)


# --------------------------------------------------------------------------- roll


def test_roll_documented_examples():
    x = dl.tensor([1, 2, 3, 4, 5, 6, 7, 8]).view(4, 2)
    assert dl.roll(x, 1).tolist() == [[8, 1], [2, 3], [4, 5], [6, 7]]
    assert dl.roll(x, 1, 0).tolist() == [[7, 8], [1, 2], [3, 4], [5, 6]]
    assert dl.roll(x, -1, 0).tolist() == [[3, 4], [5, 6], [7, 8], [1, 2]]
    assert x.roll(shifts=(2, 1), dims=(0, 1)).tolist() == [[6, 5], [8, 7], [2, 1], [4, 3]]
    with pytest.raises(RuntimeError, match="same length"):
        dl.roll(x, (1, 2), 0)


def test_roll_gradient(device):
    x = make((3, 4), device)
    assert gradcheck(lambda a: a.roll((1, -5), (0, 1)), (x,))
    assert gradgradcheck(lambda a: dl.roll(a, 7), (x,))


def test_zero_dimensional_inputs_and_keywords_as_pytorch():
    scalar = dl.tensor(3.0)
    assert dl.gather(scalar, 0, dl.tensor(0)).item() == 3.0
    values, indices = dl.sort(scalar)
    assert values.item() == 3.0 and indices.item() == 0
    assert dl.index_select(scalar, 0, dl.tensor([0])).item() == 3.0
    with pytest.raises(RuntimeError, match="Index to scalar can have only 1 value, got 2"):
        dl.index_select(scalar, 0, dl.tensor([0, 0]))
    assert dl.topk(dl.tensor([1.0, 2.0]), 0).values.shape == (0,)
    assert dl.roll(dl.zeros(0), 1).shape == (0,)
    x = dl.arange(4).reshape(2, 2)
    assert dl.flip(input=x, dims=(0,)).tolist() == [[2, 3], [0, 1]]
    assert dl.gather(input=x, dim=1, index=dl.tensor([[1], [0]])).tolist() == [[1], [2]]
