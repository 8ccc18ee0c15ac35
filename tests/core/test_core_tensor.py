"""Creating tensors and the operations the seeds list, with PyTorch's semantics."""

import numpy as np
import pytest

import difflab as dl


def test_creation_functions_and_dtypes():
    assert dl.tensor([1.0, 2.0]).dtype == dl.float32  # the default float dtype
    assert dl.tensor([1, 2]).dtype == dl.int64
    assert dl.tensor([True]).dtype == dl.bool
    assert dl.tensor(np.zeros(2)).dtype == dl.float64  # NumPy arrays keep theirs
    assert dl.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert dl.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert dl.range(1, 4).tolist() == [1.0, 2.0, 3.0, 4.0]  # includes the end
    assert dl.linspace(0, 1, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert dl.zeros(2, 3).shape == (2, 3) and dl.ones((2, 3)).sum().item() == 6
    assert dl.full((2,), 7).tolist() == [7, 7]
    assert dl.eye(3).numpy().trace() == 3
    assert dl.empty(4).shape == (4,)
    assert dl.zeros_like(dl.ones(2, dtype=dl.float64)).dtype == dl.float64
    assert dl.ones_like(dl.ones(3)).tolist() == [1.0, 1.0, 1.0]


def test_random_functions_are_seeded():
    dl.manual_seed(7)
    a = dl.randn(4)
    dl.manual_seed(7)
    b = dl.randn(4)
    assert a.equal(b)
    r = dl.rand(1000)
    assert 0 <= r.min().item() and r.max().item() < 1
    ints = dl.randint(0, 5, (200,))
    assert ints.dtype == dl.int64 and set(ints.tolist()) <= set(range(5))
    n = dl.normal(10.0, 0.1, (1000,))
    assert abs(n.mean().item() - 10) < 0.05
    assert sorted(dl.randperm(5).tolist()) == [0, 1, 2, 3, 4]
    g = dl.Generator().manual_seed(3)
    assert dl.rand(3, generator=g).equal(dl.rand(3, generator=dl.Generator().manual_seed(3)))


def test_from_numpy_shares_memory_both_ways():
    array = np.zeros(3)
    t = dl.from_numpy(array)
    array[0] = 5.0
    assert t[0].item() == 5.0
    t.add_(1.0)
    assert array.tolist() == [6.0, 1.0, 1.0]
    assert t.numpy() is array


def test_tensor_copies_but_as_tensor_shares():
    array = np.zeros(2, dtype=np.float32)
    assert dl.as_tensor(array).numpy() is array
    t = dl.tensor(array)
    array[0] = 1
    assert t[0].item() == 0


def test_attributes():
    x = dl.ones(2, 3, 4)
    assert x.shape == (2, 3, 4) and x.size() == (2, 3, 4) and x.size(1) == 3
    assert x.numel() == 24 and dl.numel(x) == 24 and x.dim() == 3
    assert str(x.device) == "cpu" and x.T.shape == (4, 3, 2)
    assert x.requires_grad is False and x.grad is None and x.grad_fn is None and x.is_leaf
    assert dl.tensor(3.5).item() == 3.5 and isinstance(dl.tensor(3.5).item(), float)
    assert dl.ones(2, 2).tolist() == [[1.0, 1.0], [1.0, 1.0]]
    c = x.clone()
    c[0] = 0
    assert x.sum().item() == 24
    assert "tensor(" in repr(x) and "requires_grad=True" in repr(dl.ones(1, requires_grad=True))


def test_math_and_broadcasting_match_numpy():
    a = np.arange(6.0).reshape(2, 3)
    b = np.array([1.0, 2.0, 3.0])
    ta, tb = dl.tensor(a), dl.tensor(b)
    assert np.allclose((ta + tb).numpy(), a + b)
    assert np.allclose((ta * tb - tb / 2).numpy(), a * b - b / 2)
    assert np.allclose((ta**2).numpy(), a**2)
    assert np.allclose((ta @ tb).numpy(), a @ b)
    assert np.allclose((-ta).abs().numpy(), np.abs(a))
    for name in ["exp", "sin", "cos", "tanh", "sigmoid", "relu", "log1p", "sqrt"]:
        special = {"sigmoid": lambda v: 1 / (1 + np.exp(-v)), "relu": lambda v: np.maximum(v, 0)}
        reference = special[name] if name in special else getattr(np, name)
        assert np.allclose(getattr(ta, name)().numpy(), reference(a), atol=1e-6), name
    assert np.allclose(dl.where(ta > 2, ta, tb).numpy(), np.where(a > 2, a, b))
    assert np.allclose(ta.clamp(1, 4).numpy(), np.clip(a, 1, 4))
    assert np.allclose(dl.maximum(ta, tb).numpy(), np.maximum(a, b))
    assert np.allclose(dl.pow(ta, 2).numpy(), a**2)


def test_reductions_with_dim_and_keepdim():
    a = np.arange(24.0).reshape(2, 3, 4)
    t = dl.tensor(a)
    assert np.allclose(t.sum(1).numpy(), a.sum(1))
    assert t.sum(dim=(0, 2), keepdim=True).shape == (1, 3, 1)
    assert np.allclose(t.mean(2).numpy(), a.mean(2))
    assert np.allclose(t.var(0).numpy(), a.var(0, ddof=1))
    assert np.allclose(t.std(1, unbiased=False).numpy(), a.std(1))
    assert np.allclose(t.prod(2).numpy(), a.prod(2))
    values, indices = t.max(1)
    assert np.allclose(values.numpy(), a.max(1)) and np.array_equal(indices.numpy(), a.argmax(1))
    assert t.min().item() == 0 and t.argmax().item() == 23 and t.argmin(2).shape == (2, 3)
    assert np.allclose(t.cumsum(2).numpy(), a.cumsum(2))
    assert np.isclose(t.norm().item(), np.linalg.norm(a))
    assert np.allclose(t.logsumexp(2).numpy(), np.log(np.exp(a).sum(2)))


def test_shape_operations():
    t = dl.arange(12).reshape(3, 4)
    assert t.view(-1).shape == (12,) and t.flatten().shape == (12,)
    assert t.unsqueeze(0).shape == (1, 3, 4) and t.unsqueeze(0).squeeze().shape == (3, 4)
    assert t.transpose(0, 1).shape == (4, 3) and t.permute(1, 0).shape == (4, 3)
    assert t.t().tolist() == np.arange(12).reshape(3, 4).T.tolist()
    assert t[:1].expand(3, 4).tolist() == [[0, 1, 2, 3]] * 3
    assert t.repeat(2, 1).shape == (6, 4)
    assert dl.cat([t, t], 0).shape == (6, 4) and dl.cat((t, t), dim=1).shape == (3, 8)
    assert dl.stack([t, t]).shape == (2, 3, 4)
    assert [p.shape for p in t.split(3, dim=1)] == [(3, 3), (3, 1)]
    assert [p.shape for p in t.chunk(2, dim=0)] == [(2, 4), (1, 4)]


def test_flip_is_a_copy_not_a_view():
    """NumPy's flip is a view; PyTorch's flip copies.  A write into the flipped tensor
    must not change the input behind autograd's back (it did before the copy)."""
    x = dl.tensor([1.0, 2.0, 3.0])
    y = x.flip(0)
    y[0] = 100.0
    assert x.tolist() == [1.0, 2.0, 3.0] and y.tolist() == [100.0, 2.0, 1.0]
    m = dl.arange(4.0).reshape(2, 2)
    dl.flip(m, (0, 1))[0, 0] = -1.0
    assert m.tolist() == [[0.0, 1.0], [2.0, 3.0]]


def test_repeat_with_fewer_sizes_than_dimensions_says_so():
    with pytest.raises(RuntimeError, match=r"one count per dimension, e.g. x.repeat\(1, 2\)"):
        dl.ones(2, 3).repeat(2)
    assert dl.ones(2, 3).repeat(1, 2).shape == (2, 6)


def test_tensor_allclose_takes_equal_nan_as_the_function_does():
    a = dl.tensor([1.0, float("nan")])
    assert not a.allclose(a) and a.allclose(a, equal_nan=True)
    assert a.allclose(a, equal_nan=True) == dl.allclose(a, a, equal_nan=True)


def test_indexing_and_assignment():
    t = dl.arange(12.0).reshape(3, 4)
    assert t[1, 2].item() == 6 and t[-1].tolist() == [8, 9, 10, 11]
    assert t[:, [0, 3]].tolist() == [[0, 3], [4, 7], [8, 11]]
    assert t[t > 9].tolist() == [10, 11]
    t[0] = 1.0
    t[t > 10] = -1.0
    t[:, 1] = dl.tensor([7.0, 8.0, 9.0])
    assert t.tolist() == [[1, 7, 1, 1], [4, 8, 6, 7], [8, 9, 10, -1]]


def test_in_place_operations_and_versions():
    t = dl.zeros(3)
    t.add_(2).mul_(3).sub_(1).div_(5)
    assert t.tolist() == [1.0, 1.0, 1.0]
    t += 1
    t -= dl.ones(3)
    t *= 2
    t /= 4
    assert t.tolist() == [0.5, 0.5, 0.5]
    t.fill_(9)
    t.copy_(dl.tensor([1.0, 2.0, 3.0]))
    assert t.tolist() == [1, 2, 3]
    t.zero_()
    assert t.tolist() == [0, 0, 0]
    assert t._version[0] > 5


def test_views_share_memory_and_versions():
    base = dl.zeros(2, 3)
    view = base.view(6)
    view[0] = 4.0
    assert base[0, 0].item() == 4.0
    assert view._version is base._version


def test_dtype_conversions():
    t = dl.tensor([1.7, -2.2])
    assert t.long().tolist() == [1, -2] and t.double().dtype == dl.float64
    assert t.int().dtype == dl.int32 and t.bool().tolist() == [True, True]
    assert t.to(dl.float64).dtype == dl.float64
    assert t.type_as(dl.ones(1, dtype=dl.float64)).dtype == dl.float64
    assert t.half().dtype == dl.float16


@pytest.mark.parametrize("convert", [
    lambda t: t.long(), lambda t: t.int(), lambda t: t.short(), lambda t: t.byte(),
    lambda t: t.bool(), lambda t: t.to(dl.int64), lambda t: t.type(dl.int32),
    lambda t: t.type_as(dl.tensor([1])), lambda t: t.astype("int64"),
], ids=["long", "int", "short", "byte", "bool", "to", "type", "type_as", "astype"])
def test_an_integer_or_bool_conversion_does_not_require_grad(convert):
    # As in PyTorch: rounding (or comparing with zero) has no gradient, and only floating
    # tensors may require grad.  The result was recorded, and the gradient went straight
    # through the rounding: d(x.long() * 2)/dx gave 2.
    x = dl.tensor([1.7, 2.2], requires_grad=True)
    y = convert(x)
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf
    (x * 2 + y).sum().backward()  # no gradient through y
    assert x.grad.tolist() == [2.0, 2.0]
    assert x.to(dl.float64).requires_grad  # floating conversions keep theirs


def test_type_takes_the_legacy_names_it_gives():
    x = dl.tensor([1.5, -2.5])
    assert x.type() == "difflab.FloatTensor" and x.double().type() == "difflab.DoubleTensor"
    assert dl.tensor([1j]).type() == "difflab.ComplexFloatTensor"
    assert x.bfloat16().type() == "difflab.BFloat16Tensor"
    for name in ("difflab.DoubleTensor", "torch.DoubleTensor", dl.DoubleTensor):
        assert x.type(name).dtype == dl.float64  # (a name, and the class, failed before)
    assert x.type("difflab.LongTensor").tolist() == [1, -2]
    with pytest.raises(ValueError, match="not a tensor type name"):
        x.type("float64")


def test_type_and_cuda_on_the_gpu(cuda):
    x = dl.tensor([1.0, 2.0])
    assert x.cuda("cuda:0").device == "cuda:0" and x.cuda(0).device == "cuda:0"
    assert x.cuda(dl.device("cuda")).type() == "difflab.cuda.FloatTensor"
    y = x.type("difflab.cuda.DoubleTensor")
    assert y.is_cuda and y.dtype == dl.float64
    with pytest.raises(ValueError, match="not a CUDA device"):
        x.cuda("cpu")


def test_mT_needs_a_matrix():  # noqa: N802
    assert dl.zeros(4, 2, 3).mT.shape == (4, 3, 2)
    with pytest.raises(RuntimeError, match="matrices or batches of matrices, got a 1-D"):
        _ = dl.zeros(3).mT


def test_comparisons_give_bool_tensors_without_grad():
    x = dl.tensor([1.0, 2.0], requires_grad=True)
    mask = x > 1.5
    assert mask.dtype == dl.bool and not mask.requires_grad
    assert (x == 1.0).tolist() == [True, False]


def test_numpy_array_on_the_left_gives_a_tensor():
    x = dl.ones(2, requires_grad=True)
    y = np.array([2.0, 3.0]) * x
    assert isinstance(y, dl.Tensor) and y.requires_grad


def test_seeds_tensor_function_list():
    # The functions named in the seeds' notes, called the way the notes call them.
    x = dl.arange(12).reshape(3, 4)
    assert dl.numel(x) == x.numel() == 12
    assert dl.reshape(x, (4, 3)).shape == (4, 3) and x.reshape(-1, 4).shape == (3, 4)
    assert dl.zeros((2, 3)).shape == dl.ones(2, 3).shape == dl.randn(2, 3).shape
    assert dl.normal(0.0, 1.0, size=(2,)).shape == (2,) and dl.rand(2).shape == (2,)
    assert dl.randint(0, 10, (3,)).shape == (3,)
    assert dl.exp(dl.zeros(2)).tolist() == [1.0, 1.0]
    assert dl.cat((x, x), dim=0).shape == (6, 4) and dl.sum(x).item() == 66 == x.sum().item()
    assert dl.t(x).shape == (4, 3) and dl.clone(x).equal(x) and x.clone().equal(x)
    f = x.float()
    assert dl.mean(f).item() == f.mean().item() == 5.5
    assert dl.cumsum(x, 1)[:, -1].tolist() == x.cumsum(1)[:, -1].tolist() == [6, 22, 38]
    v = dl.tensor([1.0, 2.0])
    assert dl.dot(v, v).item() == 5 and dl.mv(dl.eye(2), v).tolist() == [1, 2]
    assert dl.mul(v, v).tolist() == [1, 4] and dl.matmul(v, v).item() == 5
    assert (f @ f.T).shape == (3, 3) and dl.mm(f, f.T).shape == (3, 3)
    assert np.isclose(dl.norm(v).item(), 5**0.5) and dl.abs(-v).sum().item() == 3
    assert dl.squeeze(dl.zeros(1, 2, 1)).shape == (2,)
    # "saving memory": Y[:] = <expression> writes into the existing array
    y = dl.zeros(3)
    before = y.array
    y[:] = dl.ones(3) * 2
    assert y.array is before and y.tolist() == [2, 2, 2]


@pytest.mark.parametrize("index", [0, 1])
def test_iteration_and_len(index):
    t = dl.arange(6).reshape(2, 3)
    assert len(t) == 2 and list(t)[index].tolist() == t[index].tolist()


def test_the_function_astype_to_an_integer_carries_no_gradient():
    """``dl.astype(x, int)`` as ``x.long()``: the engine records no integer or bool result,
    so no gradient passes through the rounding (PyTorch's rule)."""
    x = dl.tensor([1.5, 2.5], requires_grad=True)
    assert not dl.astype(x, dl.int64).requires_grad
    assert not (x > 2.0).requires_grad
    assert dl.astype(x, dl.float64).requires_grad
