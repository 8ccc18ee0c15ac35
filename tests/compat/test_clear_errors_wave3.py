"""Bad input gets a clear error in PyTorch's terms, and input PyTorch accepts works as there
(the third wave, found by calling difflab as a stranger would).

Each test says what happened before: a bare NumPy or Python error, or a silent result.
"""

import numpy as np
import pytest

import difflab as dl
from difflab.autograd import gradcheck, gradgradcheck

X = dl.arange(12.0).reshape(3, 4)

# ------------------------------------------------------------- var / std / norm


@pytest.mark.parametrize("call, expected", [
    # Before: the third positional argument was keepdim (PyTorch's is unbiased): the
    # unbiased variance, silently, where PyTorch gives the biased one.
    (lambda: dl.var(X, 1, False), np.var(X.numpy(), 1)),
    (lambda: X.var(1, False), np.var(X.numpy(), 1)),
    (lambda: dl.var(X, 1, False, True), np.var(X.numpy(), 1, keepdims=True)),
    (lambda: dl.std(X, None, False), np.std(X.numpy())),
    (lambda: X.std(None, True), np.std(X.numpy(), ddof=1)),
    # Before: "dim must be an int or a tuple of ints, got bool": PyTorch's var(input, unbiased)
    (lambda: dl.var(X, False), np.var(X.numpy())),
    (lambda: X.var(True), np.var(X.numpy(), ddof=1)),
    # Before: TypeError "var() got an unexpected keyword argument 'correction'"
    (lambda: dl.var(X, 1, correction=0), np.var(X.numpy(), 1)),
    (lambda: dl.var(X, dim=None, correction=0), np.var(X.numpy())),
    (lambda: dl.std(X, (0, 1), correction=2), np.std(X.numpy(), ddof=2)),
    (lambda: dl.var(X, 1, correction=2.5), np.var(X.numpy(), 1) * 4 / 1.5),
    (lambda: dl.var(X, 1, correction=None), np.var(X.numpy(), 1, ddof=1)),
    (lambda: dl.var(X, 1, correction=4), np.full(3, np.inf)),  # n - c = 0, as PyTorch
    (lambda: dl.var_mean(X, 1, False)[0], np.var(X.numpy(), 1)),
    (lambda: dl.std_mean(X, 1, False, True)[0], np.std(X.numpy(), 1, keepdims=True)),
], ids=["var-unbiased-positional", "method-unbiased-positional", "var-keepdim-fourth",
        "std-unbiased-positional", "method-std", "var-of-a-bool", "method-var-of-a-bool",
        "correction-0", "correction-all-dims", "std-correction-2", "correction-float",
        "correction-None", "correction-n", "var_mean", "std_mean"])
def test_var_and_std_take_pytorchs_arguments(call, expected):
    result = call()
    assert result.shape == np.shape(expected)
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-6)


@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("correction", [0, 1, 2.5])
def test_the_gradient_of_var_and_std_with_a_correction(name, correction):
    dl.manual_seed(0)
    x = dl.randn(3, 5, dtype=dl.float64, requires_grad=True)
    function = lambda x: getattr(dl, name)(x, 1, correction=correction)  # noqa: E731
    assert gradcheck(function, (x,))
    assert gradgradcheck(function, (x,))
    # and the rule itself: ∂var/∂xᵢ = 2 (xᵢ - mean) / (n - c)
    if name == "var":
        dl.var(x, correction=correction).backward()
        values = x.detach().numpy()
        np.testing.assert_allclose(x.grad.numpy(),
                                   2 * (values - values.mean()) / (values.size - correction))


def test_var_refuses_unbiased_and_correction_together():
    # Before: correction won without a word (PyTorch refuses the combination)
    with pytest.raises(TypeError, match="give correction or unbiased, not both"):
        dl.var(X, 1, True, correction=0)
    with pytest.raises(TypeError, match="give correction or unbiased, not both"):
        dl.var_mean(X, 1, False, correction=1)


def test_var_of_integers_names_var():
    # Before: "mean() needs a floating point tensor" (var never called mean by name)
    with pytest.raises(RuntimeError, match=r"^var\(\) and std\(\) need a floating point"):
        dl.var(dl.tensor([1, 2, 3]))


def test_var_and_std_take_a_list():
    # Before: AttributeError "'list' object has no attribute 'var'"
    assert dl.var([1.0, 2.0, 3.0]).item() == pytest.approx(1.0)
    assert dl.std([1.0, 3.0], correction=0).item() == pytest.approx(1.0)


@pytest.mark.parametrize("call", [
    lambda: dl.norm(X, p=None), lambda: dl.norm(X, None, 1), lambda: X.norm(None),
], ids=["keyword", "with-dim", "method"])
def test_norm_of_p_none_is_the_2_norm(call):
    # Before: TypeError "unsupported operand type(s) for ** or pow(): 'Tensor' and 'NoneType'"
    result = call()
    dims = 1 if result.ndim else None
    np.testing.assert_allclose(result.numpy(), np.sqrt((X.numpy() ** 2).sum(dims)), rtol=1e-6)


# ------------------------------------------------------------- dims: float, None, repeated


@pytest.mark.parametrize("call, words", [
    (lambda: dl.amax(X, 1.0), "dim must be an int or a tuple of ints, got float 1.0"),
    (lambda: X.amin(1.0), "dim must be an int or a tuple of ints, got float 1.0"),
    (lambda: dl.logsumexp(X, 1.0), "logsumexp: dim must be an int or a tuple of ints"),
    (lambda: dl.aminmax(X, dim=1.0), "dim must be an int or a tuple of ints, got float"),
    (lambda: dl.all(X, 1.0), "all: dim must be an int or a tuple of ints, got float"),
    (lambda: dl.any(X, 0.0), "any: dim must be an int or a tuple of ints, got float"),
    (lambda: dl.count_nonzero(X, 1.0), "count_nonzero: dim must be an int or a tuple"),
    (lambda: dl.argmax(X, 1.0), "argmax: dim must be an int, got float 1.0"),
    (lambda: X.argmin((0, 1)), "argmin: dim must be an int, got tuple"),
    (lambda: dl.cumsum(X, 1.0), "cumsum: dim must be an int, got float 1.0"),
    (lambda: X.max(1.0), "dim must be an int or a tuple of ints, got float 1.0"),
    (lambda: dl.flip(X, None), "flip: dims must be an int or a tuple of ints, got None"),
    (lambda: X.flip(), r"flip\(\) missing the dims to reverse"),
], ids=["amax", "amin", "logsumexp", "aminmax", "all", "any", "count_nonzero", "argmax",
        "argmin-tuple", "cumsum", "max-method", "flip-None", "flip-nothing"])
def test_a_dim_that_is_no_int_is_named_as_pytorch_names_it(call, words):
    # Before: NumPy's "'float' object is not iterable" / "cannot be interpreted as an
    # integer", or "'NoneType' object is not iterable"
    with pytest.raises(TypeError, match=words):
        call()


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_of_a_float_dim_is_refused_not_an_elementwise_max(name):
    # Before: dl.max(x, 1.0) was the elementwise maximum with 1.0, silently (PyTorch refuses)
    with pytest.raises(TypeError, match=rf"{name}: dim must be an int, got float 1.0; for "
                                        rf"the elementwise {name}imum"):
        getattr(dl, name)(X, 1.0)
    assert getattr(dl, name)(X, dl.tensor(1.0)).shape == X.shape  # (a tensor still is)
    assert getattr(dl, name)(X, 1).values.shape == (3,)


@pytest.mark.parametrize("call", [
    lambda: dl.sum(X, (0, 0)), lambda: dl.mean(X, (1, -1)), lambda: dl.var(X, (0, 0)),
    lambda: dl.amax(X, (0, -2)), lambda: dl.logsumexp(X, (1, 1)),
    lambda: dl.sum(dl.tensor(1.0), (0, -1)), lambda: dl.any(X, (0, 0)),
    lambda: dl.count_nonzero(X, (1, 1)), lambda: dl.squeeze(dl.zeros(1, 3, 1), [0, 0]),
    lambda: dl.flip(X, (0, 0)), lambda: X.flip(1, -1), lambda: dl.flip(dl.tensor(1.0), (0, 0)),
], ids=["sum", "mean", "var", "amax", "logsumexp", "sum-0d", "any", "count_nonzero",
        "squeeze", "flip", "flip-method", "flip-0d"])
def test_a_repeated_dim_is_pytorchs_runtime_error(call):
    # Before: NumPy's ValueError "duplicate value in 'axis'", naming no dim; squeeze and
    # flip took it silently (a flip along (0, 0) flipped twice: x unchanged)
    with pytest.raises(RuntimeError, match=r"dim \d appears multiple times in the list of dims"):
        call()


def test_the_dims_still_work():
    assert dl.sum(X, (0, 1)).item() == 66
    assert dl.amax(X, -1).tolist() == [3, 7, 11]
    assert dl.all(X, (0, 1)).item() is False
    assert dl.count_nonzero(X, np.int64(1)).tolist() == [3, 4, 4]
    assert dl.argmax(X, -1, keepdim=True).shape == (3, 1)
    assert dl.cumsum(X, -1)[:, -1].tolist() == [6, 22, 38]
    assert dl.squeeze(dl.zeros(1, 3, 1), (0, -1)).shape == (3,)


# ------------------------------------------------------------- flip


@pytest.mark.parametrize("dims", [0, -1, (0,), [-1], (), []])
def test_flip_of_a_0d_tensor_is_the_tensor(dims):
    # Before: IndexError "flip: Dimension specified as 0 but the tensor has no dimensions"
    # (PyTorch returns the 0-d tensor unchanged for dims 0 and -1)
    x = dl.tensor(2.0, requires_grad=True)
    y = dl.flip(x, dims)
    assert y.shape == () and y.item() == 2.0
    y.backward()
    assert x.grad.item() == 1.0
    assert x.flip(dims).item() == 2.0
    with pytest.raises(IndexError, match=r"flip: Dimension out of range \(expected to be in "
                                         r"range of \[-1, 0\], but got 1\)"):
        dl.flip(x, 1)


def test_flip_takes_dims_as_separate_arguments_and_copies():
    # Before: TypeError "flip() takes 2 positional arguments but 3 were given"
    assert X.flip(0, 1).tolist() == X.numpy()[::-1, ::-1].tolist()
    # Before: flip(x, []) was x itself, so writing into it wrote into x
    x = dl.zeros(3)
    y = x.flip([])
    y.add_(1.0)
    assert x.tolist() == [0.0, 0.0, 0.0]


# ------------------------------------------------------------- scatter


INDEX = dl.tensor([[0, 1, 2, 0]])


@pytest.mark.parametrize("call, name", [
    (lambda src: dl.scatter(X, 0, INDEX, src), "scatter"),
    (lambda src: X.scatter(0, INDEX, src), "scatter"),
    (lambda src: X.clone().scatter_(0, INDEX, src), "scatter"),
    (lambda src: dl.scatter(X, 0, INDEX, src, reduce="add"), "scatter"),
    (lambda src: dl.scatter_add(X, 0, INDEX, src), "scatter_add"),
    (lambda src: X.clone().scatter_add_(0, INDEX, src), "scatter_add"),
], ids=["scatter", "method", "in-place", "reduce-add", "scatter_add", "scatter_add_"])
@pytest.mark.parametrize("dtype", [dl.float64, dl.int64])
def test_scatter_refuses_a_src_of_another_dtype(call, name, dtype):
    # Before: src was cast to the input's dtype without a word (float64 values rounded to
    # float32, or integers written into floats); PyTorch raises "scatter(): Expected
    # self.dtype to be equal to src.dtype"
    with pytest.raises(RuntimeError, match=rf"^{name}\(\): expected src's dtype "
                                           rf"\({dtype}\) to equal input's \(difflab.float32\); "
                                           rf"convert with src.to\(input.dtype\)"):
        call(dl.ones(1, 4, dtype=dtype))


def test_scatter_of_the_same_dtype_or_a_number_still_works():
    out = dl.scatter(X, 0, INDEX, dl.full((1, 4), -1.0))
    assert out[0, 0].item() == -1 and out[1, 1].item() == -1 and out[2, 2].item() == -1
    assert dl.scatter(X, 0, INDEX, 5).dtype == dl.float32  # (a number takes the input's)
    assert dl.scatter(X, 0, INDEX, value=5.0)[0, 3].item() == 5.0
    assert dl.scatter_add(X, 0, INDEX, dl.ones(1, 4))[0, 0].item() == 1.0
