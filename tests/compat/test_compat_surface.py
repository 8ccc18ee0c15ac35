"""PyTorch's small behaviours that teaching programs rely on."""

import pickle
import warnings

import numpy as np
import pytest

import difflab as dl
import difflab.nn.functional as F
from difflab.autograd import gradcheck


def test_size_is_a_tuple_that_prints_as_pytorchs():
    x = dl.zeros(5, 3)
    assert isinstance(x.shape, tuple) and isinstance(x.shape, dl.Size)
    assert repr(x.shape) == str(x.size()) == "difflab.Size([5, 3])"
    assert x.shape == (5, 3) and x.shape[0] == 5 and x.size(1) == 3
    assert isinstance(x.shape[1:], dl.Size) and x.shape.numel() == 15
    assert repr(dl.tensor(1.0).shape) == "difflab.Size([])"


def test_dtypes_print_and_compare_as_pytorchs():
    assert repr(dl.float32) == str(dl.float32) == "difflab.float32"
    assert str(dl.bool) == "difflab.bool" and str(dl.long) == "difflab.int64"
    assert dl.ones(2).dtype == dl.float32 == np.float32 == np.dtype("float32")
    assert dl.float32 != dl.float64 and dl.float32 != "not a dtype"
    assert np.zeros(2, dtype=dl.float64).dtype == np.float64
    assert dl.float32.is_floating_point and not dl.int64.is_floating_point
    assert pickle.loads(pickle.dumps(dl.float16)) == dl.float16
    assert "dtype=difflab.float64" in repr(dl.ones(2, dtype=dl.float64))
    assert dl.ones(1).type() == "difflab.FloatTensor"
    assert dl.tensor([1]).type() == "difflab.LongTensor"


def test_grad_fn_names_next_functions():
    x = dl.randn(3, requires_grad=True)
    y = dl.randn(3)
    loss = F.mse_loss(x * 2, y)
    assert "grad_fn=<MseLossBackward0>" in repr(loss)
    assert loss.grad_fn.name() == "MseLossBackward0"
    assert x.mean().grad_fn.name() == "MeanBackward0"
    assert (x * 2).grad_fn.name() == "MulBackward0"
    assert dl.log_softmax(x, 0).grad_fn.name() == "LogSoftmaxBackward0"
    assert x.sum().grad_fn.name() == "SumBackward0"
    assert len((x * y).grad_fn.next_functions) == 2  # one per input, as in PyTorch
    z = x * y + x
    first, second = z.grad_fn.next_functions
    assert first[0].name() == "MulBackward0" and first[1] == 0
    assert second[0].name() == "AccumulateGrad" and second[0].variable is x
    assert first[0].next_functions[1] == (None, 0)  # y needs no gradient


def test_mean_is_a_primitive_with_its_own_rule(device):
    x = dl.randn(2, 3, 4, dtype=dl.float64, device=device, requires_grad=True)
    for f in (lambda t: t.mean(), lambda t: t.mean(1), lambda t: t.mean((0, 2), keepdim=True)):
        assert gradcheck(f, (x,))
    assert dl.tensor([1, 2]).float().mean().item() == 1.5
    with pytest.raises(RuntimeError, match="floating point"):
        dl.tensor([1, 2]).mean()


def test_nelement_and_format():
    loss = dl.tensor(0.123456)
    assert dl.ones(2, 3).nelement() == 6
    assert f"{loss:.4f}" == "0.1235"
    assert f"{loss}" == format(loss.item())  # what PyTorch prints for a 0-d tensor
    assert f"{dl.ones(2)}" == repr(dl.ones(2))
    with pytest.raises(TypeError, match="only 0-d tensors"):
        f"{dl.ones(2):.3f}"


def test_tril_triu(device):
    x = dl.arange(1.0, 10.0, device=device).reshape(3, 3)
    assert dl.tril(x).tolist() == [[1, 0, 0], [4, 5, 0], [7, 8, 9]]
    assert x.triu(1).tolist() == [[0, 2, 3], [0, 0, 6], [0, 0, 0]]
    assert x.tril(-1).tolist() == [[0, 0, 0], [4, 0, 0], [7, 8, 0]]
    assert dl.ones(2, 2, 3).tril().shape == (2, 2, 3)  # batched: the last two dims
    assert dl.tril(dl.ones(2, 2, dtype=dl.int64)).dtype == dl.int64
    w = dl.randn(4, 4, dtype=dl.float64, device=device, requires_grad=True)
    assert gradcheck(lambda t: t.tril(), (w,)) and gradcheck(lambda t: t.triu(1), (w,))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        dl.tril(dl.ones(3))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        dl.ones(3).triu()


def test_all_any_allclose_isclose_on_tensors_that_require_grad():
    x = dl.randn(3, requires_grad=True)
    assert dl.allclose(x, x.detach() + 1e-9) and x.allclose(x)
    assert dl.isclose(x, x).all().item() and dl.isclose(x, x + 1).any().item() is False
    assert dl.all(dl.tensor([1, 1])).item() and not dl.any(dl.tensor([0, 0])).item()
    assert dl.all(dl.tensor([[1, 0], [1, 1]]), dim=1).tolist() == [False, True]
    assert dl.isclose(dl.tensor([float("nan")]), dl.tensor([float("nan")]),
                      equal_nan=True).item()


def test_new_constructors_keep_dtype_and_device(device):
    x = dl.ones(2, dtype=dl.float64, device=device)
    for t in (x.new_zeros(3), x.new_ones((2, 2)), x.new_full((2,), 7), x.new_empty(4),
              x.new_tensor([1, 2])):
        assert t.dtype == dl.float64 and t.device == x.device
    assert x.new_full((2,), 7).tolist() == [7.0, 7.0]
    assert x.new_zeros(2, dtype=dl.int64).dtype == dl.int64
    assert x.new_ones(2, requires_grad=True).requires_grad


def test_out_keyword():
    out = dl.empty(3)
    assert dl.exp(dl.zeros(3), out=out) is out and out.tolist() == [1, 1, 1]
    assert dl.add(dl.ones(2), dl.ones(2), out=out).tolist() == [2, 2]  # resized
    dl.cat([dl.ones(1), dl.zeros(1)], out=out)
    dl.matmul(dl.ones(2, 2), dl.ones(2), out=out)
    assert out.tolist() == [2, 2]
    dl.tril(dl.ones(2, 2), out=out)
    assert out.shape == (2, 2)
    with pytest.raises(RuntimeError, match="can't be cast"):
        dl.exp(dl.zeros(2), out=dl.zeros(2, dtype=dl.int64))
    with pytest.raises(RuntimeError, match="automatic differentiation"):
        dl.exp(dl.zeros(2, requires_grad=True), out=dl.zeros(2))


def test_pytorch_keyword_names():
    x = dl.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert dl.sum(input=x, dim=1).tolist() == [3, 7]
    assert dl.mean(input=x, dim=0).tolist() == [2, 3]
    assert dl.add(input=x, other=1).sum().item() == 14
    assert dl.maximum(input=x, other=dl.full((2, 2), 2.5)).tolist() == [[2.5, 2.5], [3, 4]]
    assert dl.softmax(input=x, dim=1).shape == (2, 2)
    assert dl.where(condition=x > 2, input=x, other=0.0).tolist() == [[0, 0], [3, 4]]
    assert dl.max(input=x, dim=1).values.tolist() == [2, 4]


def test_set_default_device(cuda):
    dl.set_default_device("cuda")
    try:
        assert dl.zeros(2).device == cuda and dl.randn(2).device == cuda
        assert dl.get_default_device() == cuda
    finally:
        dl.set_default_device(None)
    assert dl.zeros(2).device == dl.device("cpu")


def test_histc_and_histogram():
    x = dl.tensor([1.0, 2.0, 1.0, 4.0, 9.0])
    assert dl.histc(x, bins=4, min=0, max=4).tolist() == [0, 2, 1, 1]  # 9 is outside
    assert x.histc(bins=2).tolist() == [4, 1]  # over the data's range [1, 9]
    hist, edges = dl.histogram(x, bins=2, range=(0.0, 10.0))
    assert hist.tolist() == [4, 1] and edges.tolist() == [0, 5, 10]
    assert dl.histogram(x, bins=dl.tensor([0.0, 1.5, 10.0])).hist.tolist() == [2, 3]
    with pytest.raises(RuntimeError, match="floating"):
        dl.histc(dl.tensor([1, 2]))
    with pytest.raises(ValueError, match="min .* must not be larger"):
        dl.histc(x, min=3, max=1)


def test_inference_mode():
    w = dl.ones(2, requires_grad=True)
    with dl.inference_mode():
        assert not (w * 2).requires_grad
    with dl.inference_mode(False):
        assert (w * 2).requires_grad

    @dl.inference_mode()
    def predict(t):
        return t * 2

    assert not predict(w).requires_grad and dl.is_grad_enabled()


def test_typed_constructors():
    assert dl.FloatTensor([1, 2]).dtype == dl.float32
    assert dl.LongTensor([1.7]).tolist() == [1]
    assert dl.FloatTensor(2, 3).shape == (2, 3)
    assert isinstance(dl.ones(2), dl.FloatTensor) and not isinstance(dl.ones(2), dl.LongTensor)
    assert dl.DoubleTensor().shape == (0,)
    with pytest.raises(TypeError, match="sizes"):
        dl.FloatTensor([1], [2])


def test_variable_is_a_deprecated_alias():
    with pytest.warns(DeprecationWarning, match="Variable is deprecated"):
        v = dl.autograd.Variable(dl.ones(2), requires_grad=True)
    assert isinstance(v, dl.Tensor) and v.requires_grad
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (v * 3).sum().backward()
    assert v.grad.tolist() == [3, 3]


def test_log10_log2_values_and_gradients(device):
    x = dl.tensor([1.0, 8.0, 100.0], dtype=dl.float64, device=device, requires_grad=True)
    # (CuPy's log2 and log10 may be one rounding off where NumPy's are exact: 3 - 4e-16)
    assert dl.log2(x).tolist()[:2] == pytest.approx([0.0, 3.0], rel=1e-15, abs=1e-15)
    assert dl.log10(x).tolist()[2] == pytest.approx(2.0, rel=1e-15)
    assert gradcheck(dl.log10, (x,)) and gradcheck(lambda t: t.log2(), (x,))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_is_a_primitive_named_as_pytorchs(reduction, device):
    from difflab.autograd import gradgradcheck

    x = dl.randn(3, 4, dtype=dl.float64, device=device, requires_grad=True)
    y = dl.randn(3, 4, dtype=dl.float64, device=device, requires_grad=True)
    f = lambda a, b: F.mse_loss(a, b, reduction=reduction)  # noqa: E731
    assert gradcheck(f, (x, y)) and gradgradcheck(f, (x, y))
    expected = ((x - y) ** 2).detach()
    expected = {"mean": expected.mean(), "sum": expected.sum(), "none": expected}[reduction]
    assert dl.allclose(f(x, y), expected)
    assert f(x, y).grad_fn.name() == "MseLossBackward0"
    with pytest.raises(ValueError, match="reduction must be one of"):
        F.mse_loss(x, y, reduction="avg")


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_mse_loss_in_forward_mode(reduction):
    # Forward mode (the primitive's JVP on dual numbers) gives the gradients reverse mode does.
    from difflab.nn.utils import compute_gradients

    model = dl.nn.Linear(4, 3).double()
    x, y = dl.randn(6, 4, dtype=dl.float64), dl.randn(6, 3, dtype=dl.float64)
    loss = lambda out, t: F.mse_loss(out, t, reduction=reduction)  # noqa: E731
    grads = {}
    for method in ("reverse", "forward"):
        compute_gradients(model, loss, x, y, method=method)
        grads[method] = [p.grad.numpy().copy() for p in model.parameters()]
    for a, b in zip(grads["reverse"], grads["forward"]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
