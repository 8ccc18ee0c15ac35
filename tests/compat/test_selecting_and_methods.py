"""Selecting by masks and writing by index lists (functions_selecting.py) against NumPy,
the Tensor-method forms of the composed functions, and the memory-layout methods."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import difflab as dl
from difflab.autograd import gradcheck

RNG = np.random.default_rng(5)
A = np.where(RNG.uniform(size=(3, 4)) > 0.5, RNG.normal(size=(3, 4)), 0.0)


def test_nonzero_argwhere_and_masked_select_equal_numpy():
    x = dl.tensor(A)
    np.testing.assert_array_equal(dl.nonzero(x).numpy(), np.argwhere(A))
    np.testing.assert_array_equal(x.argwhere().numpy(), np.argwhere(A))
    for ours, theirs in zip(x.nonzero(as_tuple=True), np.nonzero(A)):
        np.testing.assert_array_equal(ours.numpy(), theirs)
    assert dl.nonzero(dl.tensor(2.0)).shape == (1, 0) and dl.nonzero(dl.tensor(0)).shape == (0, 0)
    mask = A[0] > 0  # (broadcast against every row)
    np.testing.assert_array_equal(dl.masked_select(x, dl.tensor(mask)).numpy(),
                                  np.broadcast_to(A, A.shape)[np.broadcast_to(mask, A.shape)])


def test_index_add_put_and_fill_equal_numpy():
    index = np.array([2, 0, 2])
    source = RNG.normal(size=(3, 3))
    want = A.copy()
    np.add.at(want, (slice(None), index), 1.5 * source)
    got = dl.tensor(A).index_add(1, dl.tensor(index), dl.tensor(source), alpha=1.5)
    np.testing.assert_allclose(got.numpy(), want)
    rows, cols = np.array([0, 2, 0]), np.array([1, 3, 1])
    values = np.array([1.0, 2.0, 4.0])
    want = A.copy()
    np.add.at(want, (rows, cols), values)
    got = dl.index_put(dl.tensor(A), (dl.tensor(rows), dl.tensor(cols)), dl.tensor(values),
                       accumulate=True)
    np.testing.assert_allclose(got.numpy(), want)
    want = A.copy()
    want[[1, 2]] = -7.0
    np.testing.assert_allclose(dl.index_put(dl.tensor(A), (dl.tensor([1, 2]),),
                                            dl.tensor(-7.0, dtype=dl.float64)).numpy(), want)
    want = A.copy()
    want[:, [0, 3]] = 9.0
    np.testing.assert_allclose(dl.tensor(A).index_fill(1, dl.tensor([3, 0]), 9.0).numpy(), want)


def test_in_place_forms_write_into_the_tensor_and_keep_the_gradient():
    w = dl.tensor(A, dtype=dl.float64, requires_grad=True)
    y = w * 2.0
    y.index_add_(0, dl.tensor([1, 1]), dl.ones(2, 4, dtype=dl.float64))
    y.index_fill_(1, dl.tensor([0]), 0.0)
    y.index_put_((dl.tensor([2]), dl.tensor([3])), dl.tensor(5.0, dtype=dl.float64),
                 accumulate=True)
    y.sum().backward()
    expected = np.full(A.shape, 2.0)
    expected[:, 0] = 0.0
    np.testing.assert_allclose(w.grad.numpy(), expected)


@pytest.mark.parametrize("name, call", [
    ("index_add", lambda x, s: dl.index_add(x, 0, dl.tensor([1, 0, 1]), s)),
    ("index_put", lambda x, s: dl.index_put(x, (dl.tensor([2, 2, 0]),), s, accumulate=True)),
    ("masked_select", lambda x, s: dl.masked_select(x * s.sum(), dl.tensor(A) != 0)),
])
def test_gradients_equal_finite_differences(name, call):
    x = dl.tensor(A, dtype=dl.float64, requires_grad=True)
    s = dl.tensor(RNG.normal(size=(3, 4)), dtype=dl.float64, requires_grad=True)
    assert gradcheck(call, (x, s))


def test_a_data_dependent_shape_is_announced_when_traced():
    from difflab import jit

    with pytest.warns(jit.TracerWarning):
        jit.trace(lambda x: dl.nonzero(x).sum(), (dl.tensor(A),))


@pytest.mark.parametrize("call, error, words", [
    (lambda: dl.masked_select(dl.ones(2), dl.ones(2)), TypeError, "bool mask"),
    (lambda: dl.index_add(dl.ones(3), 0, dl.tensor([0.5]), dl.ones(1)), IndexError,
     "integer tensor"),
    (lambda: dl.index_add(dl.ones(3, 2), 0, dl.tensor([0]), dl.ones(2, 2)), RuntimeError,
     "must have shape"),
    (lambda: dl.index_put(dl.ones(3), (slice(None),), dl.tensor(1.0), accumulate=True),
     IndexError,
     "no slices"),
    (lambda: dl.unflatten(dl.ones(6), 0, (4, -1)), RuntimeError, "do not multiply"),
])
def test_bad_input_gets_a_clear_error(call, error, words):
    with pytest.raises(error, match=words):
        call()


MODULES = ["difflab.functions_joining", "difflab.functions_picking", "difflab.functions_math",
           "difflab.functions_statistics", "difflab.functions_selecting"]


@pytest.mark.parametrize("module", MODULES)
def test_the_methods_are_the_functions_themselves(module):
    table = importlib.import_module(module)._TENSOR_METHODS
    for name, function in table.items():
        assert getattr(dl.Tensor, name) is function, name


def test_method_spellings_follow_pytorch():
    x = dl.arange(6.0).reshape(2, 3)
    assert x.tile(2, 1).shape == x.tile((2, 1)).shape == (4, 3)
    assert x.median().item() == 2.0 and x.kthvalue(1, 1).values.tolist() == [0.0, 3.0]
    assert x.narrow(1, 1, 2).tolist() == [[1.0, 2.0], [4.0, 5.0]]
    assert x.addmm(dl.eye(2), x, beta=0).tolist() == x.tolist()
    assert x.fmod(4).tolist() == [[0.0, 1.0, 2.0], [3.0, 0.0, 1.0]]
    assert x.remainder(-4).tolist() == [[0.0, -3.0, -2.0], [-1.0, 0.0, -3.0]]
    assert x.count_nonzero().item() == 5 and x.trace().item() == 4.0


def test_memory_layout_methods_read_the_array():
    x = dl.zeros(3, 4, dtype=dl.float64)
    a = x.numpy()
    assert x.element_size() == a.itemsize == 8
    assert x.stride() == tuple(s // 8 for s in a.strides) and x.t().stride() == (1, 4)
    assert x.is_contiguous() and not x.t().is_contiguous()
    view = x[1:, 2:]
    assert view.storage_offset() == 6 and x.storage_offset() == 0
    assert view.data_ptr() - x.data_ptr() == 6 * 8
    assert x.short().dtype == dl.int16 and x.byte().dtype == dl.uint8 and not x.is_complex()


@pytest.mark.gpu
def test_the_layout_methods_and_composites_on_cuda(cuda):
    x = dl.zeros(2, 3, device=cuda)
    assert x.stride() == (3, 1) and x.element_size() == 4 and isinstance(x.data_ptr(), int)
    y = dl.arange(6.0, device=cuda).reshape(2, 3)
    assert dl.nonzero(y).device == y.device and dl.kron(y, y).device == y.device
    np.testing.assert_allclose(dl.median(y, 1).values.cpu().numpy(), [1.0, 4.0])
    np.testing.assert_allclose(dl.index_add(y, 0, dl.tensor([1, 1], device=cuda), y).cpu()
                               .numpy(), [[0, 1, 2], [6, 9, 12]])


def test_print_options_change_how_tensors_print_and_reset():
    try:
        dl.set_printoptions(precision=1, linewidth=30)
        assert repr(dl.tensor([1.26, 2.0])) == "tensor([1.3, 2. ])"
        dl.set_printoptions(threshold=5, edgeitems=1)
        assert "..." in repr(dl.arange(10.0))
        dl.set_printoptions(sci_mode=False)
        assert "e-0" not in repr(dl.tensor([1e-5, 1.0], dtype=dl.float64))
        with pytest.raises(ValueError, match="profile"):
            dl.set_printoptions(profile="long")
        with pytest.raises(ValueError, match="non-negative int"):
            dl.set_printoptions(precision=-1)
    finally:
        dl.set_printoptions(profile="default")
    assert repr(dl.tensor([1.23456])) == "tensor([1.2346])"


def test_conjugate_transpose_layout_and_names():
    x = dl.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    assert x.H.tolist() == x.T.tolist()
    (x.H * dl.arange(6.0).reshape(3, 2)).sum().backward()  # (real: a transpose, differentiable)
    assert x.grad.tolist() == [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]
    z = dl.tensor([[1 + 2j, 3j]])
    assert z.H.tolist() == [[1 - 2j], [-3j]] and dl.tensor(1 + 1j).H.item() == 1 - 1j
    with pytest.raises(RuntimeError, match="only supported on matrices"):
        _ = dl.ones(2, 2, 2).H
    assert x.layout is dl.strided and repr(dl.strided) == "difflab.strided"
    assert isinstance(dl.strided, dl.layout)
    assert x.names == (None, None) and dl.tensor(1.0).names == ()


def test_where_of_a_condition_alone_gives_the_indices_as_torch_where_does():
    """torch.where(condition) is nonzero(condition, as_tuple=True) (it raised TypeError:
    input and other were required); one of the two alone is a clear error."""
    condition = dl.tensor([[0.0, 1.5], [-2.0, 0.0]]) != 0
    rows, columns = dl.where(condition)
    assert rows.tolist() == [0, 1] and columns.tolist() == [1, 0]
    assert rows.dtype == dl.int64
    (empty,) = dl.where(dl.zeros(3) > 0)
    assert empty.shape == (0,)
    with pytest.raises(TypeError, match="both input and other"):
        dl.where(condition, 1.0)


def test_clamp_with_tensor_bounds_differentiates_the_bounds_as_pytorch():
    """clamp(x, min=low, max=high) with tensor bounds: the gradient goes to the value
    chosen (PyTorch's clamp.Tensor: self where low <= x <= high, low where x < low, high
    where x > high); the bounds' values were read as constants and got no gradient.
    PyTorch 2.13 gives these numbers; a (4,) bound broadcasts against a (2, 4) input."""
    x = dl.tensor([[-2.0, 0.25, 0.75, 3.0], [0.0, -0.5, 2.0, 0.1]], requires_grad=True)
    low = dl.tensor([-1.0, 0.5, 0.0, 0.0], requires_grad=True)
    high = dl.tensor([[1.0, 1.0, 0.5, 2.5], [1.0, 1.0, 1.0, 1.0]], requires_grad=True)
    y = dl.clamp(x, min=low, max=high)
    np.testing.assert_allclose(y.tolist(), [[-1.0, 0.5, 0.5, 2.5], [0.0, 0.5, 1.0, 0.1]], rtol=1e-7)
    (y * dl.tensor([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 0.0, 0.0], [5.0, 0.0, 0.0, 8.0]]
    assert low.grad.tolist() == [1.0, 8.0, 0.0, 0.0]
    assert high.grad.tolist() == [[0.0, 0.0, 3.0, 4.0], [0.0, 0.0, 7.0, 0.0]]
    # one bound, the method and the in-place form read tensor bounds alike
    x2 = dl.tensor([-2.0, 0.5], requires_grad=True)
    low2 = dl.tensor([0.0, 0.0], requires_grad=True)
    x2.clamp(min=low2).sum().backward()
    assert x2.grad.tolist() == [0.0, 1.0] and low2.grad.tolist() == [1.0, 0.0]
