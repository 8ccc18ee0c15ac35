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
    (lambda: dl.aminmax(X, dim=1.0), "aminmax: dim must be an int, got float"),  # (one dim)
    (lambda: dl.all(X, 1.0), "all: dim must be an int or a tuple of ints, got float"),
    (lambda: dl.any(X, 0.0), "any: dim must be an int or a tuple of ints, got float"),
    (lambda: dl.count_nonzero(X, 1.0), "count_nonzero: dim must be an int or a tuple"),
    (lambda: dl.argmax(X, 1.0), "argmax: dim must be an int, got float 1.0"),
    (lambda: X.argmin((0, 1)), "argmin: dim must be an int, got tuple"),
    (lambda: dl.cumsum(X, 1.0), "cumsum: dim must be an int, got float 1.0"),
    (lambda: X.max(1.0), "max: dim must be an int, got float 1.0"),  # (dl.max's)
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


# ------------------------------------------------------------- nn.functional

F = dl.nn.functional
SIGNAL, IMAGE = dl.zeros(1, 1, 4), dl.zeros(1, 1, 4, 4)


@pytest.mark.parametrize("call, error, words", [
    # Before: ZeroDivisionError "integer division or modulo by zero"
    (lambda: F.avg_pool1d(SIGNAL, 0), ValueError, "avg_pool1d: kernel_size must be positive"),
    (lambda: F.avg_pool1d(SIGNAL, 2, 0), ValueError, "avg_pool1d: stride must be positive"),
    (lambda: F.max_pool1d(SIGNAL, 2, 0), ValueError, "max_pool1d: stride must be positive"),
    (lambda: F.max_pool2d(IMAGE, 2, (1, 0)), ValueError, "max_pool2d: stride must be positive"),
    (lambda: F.conv1d(SIGNAL, dl.zeros(1, 1, 2), stride=0), ValueError,
     "conv1d: stride must be positive"),
    (lambda: F.conv2d(IMAGE, dl.zeros(1, 1, 2, 2), stride=(0, 1)), ValueError,
     "conv2d: stride must be positive"),
    (lambda: F.conv3d(dl.zeros(1, 1, 3, 3, 3), dl.zeros(1, 1, 2, 2, 2), stride=0), ValueError,
     "conv3d: stride must be positive"),
    (lambda: F.conv_transpose2d(IMAGE, dl.zeros(1, 1, 2, 2), groups=0), ValueError,
     "conv_transpose2d: groups must be positive"),
    # Before: "padding (0, 0) should be at most half of the kernel size (1, -2)"
    (lambda: F.max_pool1d(SIGNAL, -2), ValueError, "max_pool1d: kernel_size must be positive"),
    # Before: a dilation of 0 gave an output, silently; a negative padding NumPy's
    # "index can't contain negative values"; groups=0 "expected input with 0 channels"
    (lambda: F.conv1d(SIGNAL, dl.zeros(1, 1, 2), dilation=0), ValueError,
     "conv1d: dilation must be positive"),
    (lambda: F.conv1d(SIGNAL, dl.zeros(1, 1, 2), padding=-1), ValueError,
     "conv1d: padding must be non-negative"),
    (lambda: F.conv2d(IMAGE, dl.zeros(1, 1, 2, 2), groups=0), ValueError,
     "conv2d: groups must be positive"),
    # Before: a reshape error naming a shape (1, 0, -1) the user never wrote
    (lambda: F.unfold(IMAGE, 0), ValueError, "unfold: kernel_size must be positive"),
    (lambda: F.fold(dl.zeros(1, 4, 9), (4, 4), 2, stride=0), ValueError,
     "fold: stride must be positive"),
    # Before: a float was truncated (kernel_size=2.5 pooled 2x2 windows), silently
    (lambda: F.max_pool2d(IMAGE, 2.5), TypeError,
     r"max_pool2d: kernel_size must be an int or a tuple of 2 ints, got float 2.5"),
    (lambda: F.avg_pool2d(IMAGE, (2, 2.0)), TypeError, "avg_pool2d: kernel_size must be an int"),
    (lambda: F.conv1d(SIGNAL, dl.zeros(1, 1, 2), stride=1.5), TypeError,
     "conv1d: stride must be an int or a 1-tuple, got float 1.5"),
    (lambda: F.adaptive_avg_pool1d(SIGNAL, 2.0), TypeError,
     "adaptive_avg_pool1d: output_size must be an int"),
    # Before: ZeroDivisionError; and a 2-D adaptive average of an empty side was nan
    (lambda: F.adaptive_avg_pool1d(dl.zeros(1, 1, 0), 2), RuntimeError,
     r"adaptive_avg_pool2d: expected the input to have a non-zero size in the dimensions it "
     r"pools, but they are \(1, 0\)"),
    (lambda: F.adaptive_max_pool1d(dl.zeros(1, 1, 0), 2), RuntimeError,
     "adaptive_max_pool2d: expected the input to have a non-zero size"),
    (lambda: F.adaptive_avg_pool2d(dl.zeros(1, 1, 0, 3), 2), RuntimeError,
     "adaptive_avg_pool2d: expected the input to have a non-zero size"),
    (lambda: F.adaptive_max_pool3d(dl.zeros(1, 1, 2, 0, 2), 1), RuntimeError,
     "adaptive_max_pool3d: expected the input to have a non-zero size"),
    # Before: avg_pool2d's "kernel_size must be positive", naming a call never made
    (lambda: F.local_response_norm(dl.zeros(1, 3, 4), 0), ValueError,
     "local_response_norm: size must be positive"),
], ids=["avg_pool1d-kernel-0", "avg_pool1d-stride-0", "max_pool1d-stride-0",
        "max_pool2d-stride-0", "conv1d-stride-0", "conv2d-stride-0", "conv3d-stride-0",
        "conv_transpose2d-groups-0", "max_pool1d-negative-kernel", "conv1d-dilation-0",
        "conv1d-negative-padding", "conv2d-groups-0", "unfold-kernel-0", "fold-stride-0",
        "max_pool2d-float-kernel", "avg_pool2d-float-in-tuple", "conv1d-float-stride",
        "adaptive-float-size", "adaptive_avg_pool1d-empty", "adaptive_max_pool1d-empty",
        "adaptive_avg_pool2d-empty-side", "adaptive_max_pool3d-empty", "lrn-size-0"])
def test_window_arguments_are_checked_in_pytorchs_terms(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_window_arguments_still_work():
    assert F.max_pool2d(IMAGE, (2, 1), stride=(np.int64(2), 1)).shape == (1, 1, 2, 4)
    assert F.avg_pool1d(SIGNAL, 2, None, 1).shape == (1, 1, 3)
    assert F.conv1d(SIGNAL, dl.zeros(1, 1, 3), padding="same").shape == (1, 1, 4)
    assert F.conv2d(IMAGE, dl.zeros(2, 1, 3, 3), padding=(1, 0), dilation=(1, 1)).shape == \
        (1, 2, 4, 2)
    assert F.adaptive_avg_pool1d(dl.zeros(0, 1, 4), 2).shape == (0, 1, 2)  # (an empty batch)
    assert F.unfold(IMAGE, (2, 2), stride=2).shape == (1, 4, 4)


@pytest.mark.parametrize("call, error, words", [
    # Before: ZeroDivisionError "integer modulo by zero"
    (lambda: F.group_norm(dl.zeros(2, 4, 3), 0), ValueError,
     "group_norm: num_groups must be positive, got 0"),
    # Before: a reshape error naming the shape (2, -2, -1)
    (lambda: F.group_norm(dl.zeros(2, 4, 3), -2), ValueError,
     "group_norm: num_groups must be positive, got -2"),
    # Before: num_groups=2.0 was taken, silently
    (lambda: F.group_norm(dl.zeros(2, 4, 3), 2.0), TypeError,
     "group_norm: num_groups must be an int, got float 2.0"),
    # Before: "the 0 channels must divide into num_groups=2 groups" of a 1-D input
    (lambda: F.group_norm(dl.zeros(4), 2), ValueError,
     "group_norm: expected an input of at least 2 dimensions"),
    # Before: a reshape error about the shape (1, 4, 1)
    (lambda: F.group_norm(dl.zeros(2, 4, 3), 2, dl.ones(3)), ValueError,
     r"group_norm: weight must have one entry per channel, shape \(4,\), got \(3,\)"),
    (lambda: F.group_norm(dl.zeros(2, 4, 3), 2, None, 0.5), TypeError,
     "group_norm: expected a Tensor for bias, got float"),
], ids=["zero-groups", "negative-groups", "float-groups", "1-d", "weight-shape", "bias-number"])
def test_group_norm_arguments(call, error, words):
    with pytest.raises(error, match=words):
        call()


@pytest.mark.filterwarnings("error")  # (no NumPy "Mean of empty slice" either)
def test_group_norm_of_an_empty_batch_is_empty():
    # Before: ValueError "reshape: shape (0, 2, -1) is invalid for input of size 0"
    assert F.group_norm(dl.zeros(0, 4, 3), 2).shape == (0, 4, 3)
    assert F.group_norm(dl.zeros(2, 4, 0), 2).shape == (2, 4, 0)
    dl.manual_seed(0)
    x = dl.randn(2, 4, 3, dtype=dl.float64, requires_grad=True)
    assert gradcheck(lambda x: F.group_norm(x, 2, dl.ones(4, dtype=dl.float64)), (x,))


@pytest.mark.parametrize("call, words", [
    # Before: AttributeError "'float' object has no attribute 'shape'" (or 'dtype', 'ndim')
    (lambda: F.linear(X, 2.0), r"linear\(\): argument 'weight' must be a Tensor, not float"),
    (lambda: F.linear(X, [[1.0, 2.0, 3.0, 4.0]]), r"argument 'weight' must be a Tensor, not list"),
    (lambda: F.linear(X, None), r"argument 'weight' must be a Tensor, not NoneType"),
    (lambda: F.linear(X, dl.ones(2, 4), 1.0), r"linear\(\): argument 'bias' must be a Tensor"),
    (lambda: F.bilinear(X, X, 2.0), "bilinear: expected a Tensor for weight, got float"),
    (lambda: F.cosine_similarity(X, 2.0), "cosine_similarity: expected a Tensor for x2, got float"),
    (lambda: F.cosine_similarity(X, [1.0, 2.0, 3.0, 4.0]), "expected a Tensor for x2, got list"),
    (lambda: F.conv_transpose2d(IMAGE, 2.0), r"conv_transpose2d\(\): argument 'weight' must be"),
], ids=["linear-number", "linear-list", "linear-None", "linear-bias", "bilinear",
        "cosine-number", "cosine-list", "conv_transpose2d"])
def test_a_number_where_nn_functional_takes_a_tensor(call, words):
    with pytest.raises(TypeError, match=words):
        call()


@pytest.mark.parametrize("call, error, words", [
    # Before: IndexError "tuple index out of range"
    (lambda: F.glu(X, dim=5), IndexError, r"glu: Dimension out of range \(expected to be in "
                                          r"range of \[-2, 1\], but got 5\)"),
    # Before: "tuple indices must be integers or slices, not float"
    (lambda: F.glu(X, dim=1.0), TypeError, "glu: dim must be an int, got float 1.0"),
    (lambda: F.glu(X, dim=None), TypeError, "glu: dim must be an int, got NoneType"),
    # Before: "Halving dimension must be even, but dimension -1 is size 0"
    (lambda: F.glu(dl.tensor(1.0)), RuntimeError, "glu does not support scalars"),
    # Before: "sum: ..." (naming a step of it, not the function)
    (lambda: F.cosine_similarity(X, X, dim=5), IndexError, "cosine_similarity: Dimension out"),
    (lambda: F.cosine_similarity(X, X, dim=1.0), TypeError, "cosine_similarity: dim must be"),
    # Before: "softmax: dim 1.0 is out of range for a 2-D input" (the float was the fault)
    (lambda: F.softmax(X, 1.0), TypeError, "softmax: dim must be an int, got float 1.0"),
    (lambda: F.log_softmax(X, 5), IndexError, r"log_softmax: Dimension out of range \(expected "
                                              r"to be in range of \[-2, 1\], but got 5\)"),
], ids=["glu-dim-5", "glu-float", "glu-None", "glu-0d", "cosine-dim-5", "cosine-float",
        "softmax-float", "log_softmax-5"])
def test_an_nn_dim_is_checked_by_the_one_dim_check(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_glu_halves_an_empty_dimension_and_names_the_dim():
    # Before: ValueError "not enough values to unpack (expected 2, got 1)"
    assert F.glu(dl.zeros(3, 0)).shape == (3, 0)
    assert F.glu(X, 0 - 1).shape == (3, 2)
    # Before: "dimension -1 is size 3" (PyTorch names the dim counted from the start)
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 "
                                           "is size 3"):
        F.glu(dl.zeros(2, 3))


@pytest.mark.parametrize("call, error, words", [
    # Before: ZeroDivisionError "float division by zero" / "division by zero"
    (lambda: F.interpolate(SIGNAL, scale_factor=0), ValueError,
     "interpolate: scale_factor must be a positive finite number"),
    (lambda: F.interpolate(SIGNAL, size=0), ValueError, "interpolate: size must be positive"),
    # Before: ValueError "cannot convert float NaN to integer"
    (lambda: F.interpolate(SIGNAL, scale_factor=float("nan")), ValueError,
     "scale_factor must be a positive finite number"),
    (lambda: F.interpolate(SIGNAL, scale_factor=float("inf")), ValueError,
     "scale_factor must be a positive finite number"),
    # Before: an empty output, silently
    (lambda: F.interpolate(SIGNAL, scale_factor=-2), ValueError,
     "scale_factor must be a positive finite number"),
    (lambda: F.interpolate(SIGNAL, scale_factor=0.1), ValueError,
     r"input and output sizes should be greater than 0, but got input \(4,\) and output "
     r"\(0,\) \(scale_factor too small\)"),
    # Before: size=2.5 was truncated to 2, silently
    (lambda: F.interpolate(SIGNAL, size=2.5), TypeError,
     "interpolate: size must be an int or a 1-tuple, got float 2.5"),
], ids=["scale-0", "size-0", "scale-nan", "scale-inf", "scale-negative", "scale-too-small",
        "float-size"])
def test_interpolate_sizes_and_scales(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_interpolate_still_scales():
    assert F.interpolate(SIGNAL, scale_factor=2).shape == (1, 1, 8)
    assert F.interpolate(IMAGE, size=(2, 3)).shape == (1, 1, 2, 3)
    assert F.interpolate(IMAGE, scale_factor=(0.5, 1.5)).shape == (1, 1, 2, 6)


# ------------------------------------------------------------- sizes: floats, None, negatives


@pytest.mark.parametrize("call, words", [
    # Before: int() truncated the float, silently (ones(2.5) had 2 elements)
    (lambda: dl.ones(2.5), r"ones: sizes must be ints, got float 2.5"),
    (lambda: dl.randn(3, 2.5), r"randn: sizes must be ints, got float 2.5"),
    (lambda: dl.randperm(2.5), r"randperm: n must be an int, got float 2.5"),
    (lambda: X.repeat(2.5, 1), r"repeat: the counts must be ints, got float 2.5"),
    (lambda: X.expand(3, 4.0), r"expand: sizes must be ints, got float 4.0"),
    (lambda: X.permute(0, 1.0), r"permute: dims must be ints, got float 1.0"),
    (lambda: dl.permute(X, (1.0, 0)), r"permute: dims must be ints, got float 1.0"),
    (lambda: X.reshape(dl.tensor(4.0), 3), r"reshape: sizes must be ints, got Tensor"),
    (lambda: dl.eye(2.5), r"eye: sizes must be ints, got float 2.5"),
    # Before: "int() argument must be a string, a bytes-like object or a real number, not
    # 'NoneType'"
    (lambda: dl.zeros(None), r"zeros: sizes must be ints, got NoneType None"),
    (lambda: X.reshape(3, None), r"reshape: sizes must be ints, got NoneType None"),
    (lambda: dl.zeros(True), r"zeros: sizes must be ints, got bool True"),
    # Before: "'float' object cannot be interpreted as an integer"
    (lambda: dl.linspace(0, 1, 2.5), r"linspace: steps must be an int, got float 2.5"),
    (lambda: dl.logspace(0, 1, None), r"logspace: steps must be an int, got NoneType None"),
], ids=["ones", "randn", "randperm", "repeat", "expand", "permute", "dl.permute",
        "reshape-float-tensor", "eye", "zeros-None", "reshape-None", "zeros-bool", "linspace",
        "logspace"])
def test_a_size_that_is_no_int_is_refused(call, words):
    with pytest.raises(TypeError, match=words):
        call()


def test_sizes_of_every_integer_kind_still_work():
    assert dl.zeros(np.int64(2), 3).shape == (2, 3)
    assert X.reshape(dl.tensor(4), -1).shape == (4, 3)  # (a 0-d integer tensor)
    assert X.reshape(X.shape).shape == (3, 4)
    assert dl.eye(2, 3).shape == (2, 3)
    assert X.repeat(np.int32(2), 1).shape == (6, 4)


@pytest.mark.parametrize("call, error, words", [
    # Before: NumPy took -2 as -1, silently: a (2, 6) tensor
    (lambda: X.view(-2, 6), ValueError,
     r"reshape: invalid shape dimension -2 at index 0 of shape \(-2, 6\)"),
    (lambda: X.reshape(-1, -1), ValueError, r"reshape: only one dimension can be inferred"),
    # Before: NumPy's "negative dimensions are not allowed", naming no call
    (lambda: dl.eye(-1), ValueError, r"eye: Trying to create tensor with negative dimension"),
    (lambda: dl.eye(2, -1), ValueError, r"eye: Trying to create tensor with negative dimension"),
    # Before: NumPy's "Number of samples, -1, must be non-negative."
    (lambda: dl.linspace(0, 1, -1), ValueError, r"linspace: number of steps must be non-neg"),
    # Before: an empty tensor, silently (PyTorch refuses the step's sign)
    (lambda: dl.arange(0, 10, -1), ValueError,
     r"arange: upper bound and lower bound inconsistent with step sign: from 0 to 10 in "
     r"steps of -1; use a positive step"),
    (lambda: dl.arange(5.0, 0.0, 0.5), ValueError, r"use a negative step"),
], ids=["view-minus-2", "two-inferred", "eye-negative", "eye-negative-m", "linspace-negative",
        "arange-step-sign", "arange-step-sign-float"])
def test_a_negative_size_or_step_is_refused(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_ranges_still_count():
    assert dl.arange(10, 0, -3).tolist() == [10, 7, 4, 1]
    assert dl.arange(0, 0, -1).shape == (0,)
    assert dl.linspace(0, 1, 0).shape == (0,)
    assert dl.linspace(0, 1, np.int64(3)).tolist() == [0.0, 0.5, 1.0]


@pytest.mark.parametrize("call, name", [
    # Before: full((2,), None) made a tensor of Python objects; new_full and fill_ nan
    (lambda: dl.full((2,), None), "full"),
    (lambda: dl.full((2,), "a"), "full"),
    (lambda: dl.full_like(X, None), "full"),
    (lambda: X.new_full((2,), None), "new_full"),
    (lambda: X.clone().fill_(None), "fill_"),
], ids=["full", "full-str", "full_like", "new_full", "fill_"])
def test_a_fill_value_that_is_no_number_is_refused(call, name):
    with pytest.raises(TypeError, match=rf"^{name}: the fill value must be a number \(or a "
                                        rf"0-d tensor\), got"):
        call()


def test_fill_values_still_fill():
    assert dl.full((2,), True).dtype == dl.bool
    assert dl.full((2,), dl.tensor(3.0)).tolist() == [3.0, 3.0]
    assert X.clone().fill_(dl.tensor(2.0)).sum().item() == 24.0
    assert X.new_full((2,), 7).tolist() == [7.0, 7.0]
    with pytest.raises(RuntimeError, match="fill_: the value must be a number or a 0-d tensor"):
        X.clone().fill_(dl.ones(2))


# ------------------------------------------------------------- counts: k, start, diagonal, shifts


@pytest.mark.parametrize("call, words", [
    # Before: "topk(): selected index k=2.0 is out of range" (the float was the fault)
    (lambda: dl.topk(X, 2.0), r"topk\(\): k must be an int, got float 2.0"),
    # Before: kthvalue(x, 2.0) and narrow(x, 0, 0.5, 1) and tril(x, 1.5) were taken, silently
    (lambda: dl.kthvalue(X, 2.0), "kthvalue: k must be an int, got float 2.0"),
    (lambda: dl.narrow(X, 0, 0.5, 1), "narrow: start must be an int, got float 0.5"),
    (lambda: X.narrow(0, 0, 1.5), "narrow: length must be an int, got float 1.5"),
    (lambda: dl.tril(X, 1.5), "tril: diagonal must be an int, got float 1.5"),
    (lambda: X.triu(None), "triu: diagonal must be an int, got NoneType None"),
    # Before: "'float' object is not iterable"; with dims, 1.5 was a shift of 1
    (lambda: dl.roll(X, 1.5), r"roll: shifts must be ints, got float 1.5"),
    (lambda: dl.roll(X, 1.5, 0), r"roll: shifts must be ints, got float 1.5"),
    (lambda: dl.roll(X, None), r"roll: shifts must be ints, got NoneType None"),
    # Before: "float() argument must be a string or a real number, not 'NoneType'"
    (lambda: dl.linalg.vector_norm(X, ord=None), "linalg.vector_norm: ord must be a number"),
    # Before: "'float' object is not iterable"
    (lambda: dl.linalg.vector_norm(X, dim=1.0), "linalg.vector_norm: dim must be an int or"),
], ids=["topk", "kthvalue", "narrow-start", "narrow-length", "tril", "triu-None", "roll",
        "roll-with-dims", "roll-None", "vector_norm-ord-None", "vector_norm-dim-float"])
def test_a_count_that_is_no_int_is_refused(call, words):
    with pytest.raises(TypeError, match=words):
        call()


def test_the_counts_still_count():
    assert dl.topk(X, np.int64(2)).values.tolist() == [[3, 2], [7, 6], [11, 10]]
    assert dl.kthvalue(X, 2).values.tolist() == [1, 5, 9]
    assert dl.narrow(X, 0, -1, 1).tolist() == [[8, 9, 10, 11]]
    assert dl.tril(X, -1).sum().item() == 21
    assert dl.roll(X, 1).reshape(-1)[0].item() == 11
    assert dl.roll(X, (1, -1), (0, 1))[0, 0].item() == 9


def test_vector_norm_refuses_a_repeated_dim():
    # Before: the repeated dim reached NumPy ("duplicate value in 'axis'")
    with pytest.raises(RuntimeError, match="linalg.vector_norm: dim 0 appears multiple times"):
        dl.linalg.vector_norm(X, dim=(0, 0))
    # Before: ValueError "dim must name two different dimensions": now PyTorch's class
    with pytest.raises(RuntimeError, match="linalg.matrix_norm: dim 1 appears multiple times"):
        dl.linalg.matrix_norm(X, dim=(1, -1))


def test_cumsum_of_a_0d_tensor_is_0d():
    # Before: a tensor of shape (1,) (NumPy's flattening), where PyTorch keeps the 0-d shape
    x = dl.tensor(2.0, dtype=dl.float64, requires_grad=True)
    y = dl.cumsum(x, 0)
    assert y.shape == () and y.item() == 2.0
    assert dl.cumsum(dl.tensor(float("inf")), -1).item() == float("inf")
    assert gradcheck(lambda x: dl.cumsum(x, 0) * x, (x,))
    assert gradgradcheck(lambda x: dl.cumsum(x, 0) * x, (x,))
    _, tangent = dl.func.jvp(lambda x: dl.cumsum(x, 0), (dl.tensor(2.0),), (dl.tensor(3.0),))
    assert tangent.item() == 3.0


# ------------------------------------------------------------- layers' constructors


@pytest.mark.parametrize("make, error, words", [
    # Before: the float was truncated (a 2x2 kernel), silently
    (lambda: dl.nn.Conv2d(1, 1, 2.5), TypeError,
     "Conv2d: kernel_size must be an int or a tuple of 2 ints, got float 2.5"),
    (lambda: dl.nn.Conv3d(1, 1, 2.5), TypeError, "Conv3d: kernel_size must be an int"),
    (lambda: dl.nn.ConvTranspose2d(1, 1, 2.5), TypeError, "ConvTranspose2d: kernel_size must"),
    (lambda: dl.nn.Linear(2.5, 3), TypeError, "Linear: in_features must be an int, got float"),
    # Before: "int() argument must be a string, a bytes-like object or a real number"
    (lambda: dl.nn.Linear(None, 3), TypeError, "Linear: in_features must be an int, got None"),
    # Before: ZeroDivisionError "integer division or modulo by zero"
    (lambda: dl.nn.Conv2d(2, 4, 3, groups=0), ValueError, "Conv2d: groups must be positive"),
    (lambda: dl.nn.Conv1d(2, 4, 3, groups=0), ValueError, "Conv1d: groups must be positive"),
    (lambda: dl.nn.ConvTranspose2d(2, 2, 2, groups=0), ValueError,
     "ConvTranspose2d: groups must be positive"),
    (lambda: dl.nn.GroupNorm(0, 4), ValueError, "GroupNorm: num_groups must be positive, got 0"),
    # Before: ZeroDivisionError "float division by zero" (the initialisation's 1 / √fan)
    (lambda: dl.nn.Conv2d(1, 1, 0), ValueError, "Conv2d: kernel_size must be positive"),
    # Before: a layer with stride 0, which failed only when called
    (lambda: dl.nn.Conv1d(1, 1, 3, stride=0), ValueError, "Conv1d: stride must be positive"),
], ids=["conv2d-float-kernel", "conv3d-float-kernel", "convtranspose-float-kernel",
        "linear-float", "linear-None", "conv2d-groups-0", "conv1d-groups-0",
        "convtranspose-groups-0", "groupnorm-0", "conv2d-kernel-0", "conv1d-stride-0"])
def test_layer_constructors_check_their_sizes(make, error, words):
    with pytest.raises(error, match=words):
        make()


def test_a_layer_with_no_inputs_is_made_as_in_pytorch():
    # Before: ZeroDivisionError "float division by zero" in the initialisation
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        layer = dl.nn.Linear(0, 3)
    assert layer(dl.zeros(2, 0)).shape == (2, 3)
    with pytest.warns(UserWarning, match="zero-element"):
        assert dl.nn.Conv2d(0, 1, 3).weight.shape == (1, 0, 3, 3)
    assert dl.nn.GroupNorm(2, 4).num_groups == 2
    assert dl.nn.Conv2d(1, 2, (3, 1), padding="same").kernel_size == (3, 1)


# ------------------------------------------------------------- empty tensors and nan


def test_empty_inputs_give_empty_results():
    # Before: NumPy's ValueError "need at least one array to stack"
    assert dl.multinomial(dl.zeros(0, 2), 1).shape == (0, 1)
    # Before: IndexError "select: index 0 is out of range for dimension 0 of size 0"
    values, indices = dl.cummax(dl.zeros(0), 0)
    assert values.shape == (0,) and indices.dtype == dl.int64
    assert dl.cummin(dl.zeros(2, 0), 1).values.shape == (2, 0)
    # Before: ValueError "reshape: shape (0, 4, -1) is invalid for input of size 0"
    assert F.unfold(dl.zeros(0, 1, 4, 4), 2).shape == (0, 4, 9)


def test_reshape_of_no_elements_says_why_minus_one_is_ambiguous():
    # Before: "shape (-1, 0) is invalid for input of size 0", not why
    with pytest.raises(ValueError, match=r"cannot reshape a tensor of 0 elements into shape "
                                         r"\(-1, 0\): the size given as -1 could be any value"):
        dl.zeros(0).reshape(-1, 0)
    assert dl.zeros(0).reshape(-1, 5).shape == (0, 5)


def test_searchsorted_puts_nan_last():
    # Before: a nan value went before every entry (0), where PyTorch sorts nan last
    values = dl.tensor([float("nan"), 0.5, 5.0])
    assert dl.searchsorted(dl.tensor([0.0, 1.0]), values).tolist() == [2, 1, 2]
    assert dl.searchsorted(dl.tensor([0.0, 1.0]), values, right=True).tolist() == [2, 1, 2]
    assert dl.bucketize(dl.tensor([float("nan"), 0.0]), dl.tensor([0.0, 1.0])).tolist() == [2, 0]


# ------------------------------------------------------------- None where a number goes


@pytest.mark.parametrize("call, words", [
    # Before: "unsupported operand type(s) for *: 'NoneType' and 'Tensor'" and the like
    (lambda: F.elu(X, None), "elu: alpha must be a number, got NoneType None"),
    (lambda: F.celu(X, None), "celu: alpha must be a number"),
    (lambda: F.leaky_relu(X, None), "leaky_relu: negative_slope must be a number"),
    (lambda: F.threshold(X, None, 0.0), "threshold: threshold must be a number"),
    (lambda: F.threshold(X, 0.5, None), "threshold: value must be a number"),
    (lambda: F.hardtanh(X, None, 1.0), "hardtanh: min_val must be a number"),
    (lambda: F.softplus(X, beta=None), "softplus: beta must be a number"),
    (lambda: F.normalize(X, p=None), "normalize: p must be a number"),
    (lambda: F.pairwise_distance(X, X, p=None), "pairwise_distance: p must be a number"),
    # Before: "'<=' not supported between instances of 'float' and 'NoneType'"
    (lambda: F.dropout(X, None), "dropout: p must be a number, got NoneType None"),
    (lambda: F.dropout(X, "0.5"), "dropout: p must be a number, got str '0.5'"),
    (lambda: F.dropout2d(dl.zeros(1, 2, 3, 3), None), "dropout2d: p must be a number"),
    (lambda: F.alpha_dropout(X, None), "alpha_dropout: p must be a number"),
    (lambda: dl.nn.Dropout(None), "Dropout: p must be a number"),
    (lambda: dl.nn.Dropout2d(None), "Dropout2d: p must be a number"),
    (lambda: dl.nn.MultiheadAttention(4, 2, dropout=None),
     "MultiheadAttention: dropout must be a number"),
], ids=["elu", "celu", "leaky_relu", "threshold", "threshold-value", "hardtanh", "softplus",
        "normalize", "pairwise_distance", "dropout", "dropout-str", "dropout2d",
        "alpha_dropout", "Dropout", "Dropout2d", "MultiheadAttention"])
def test_none_where_a_number_goes_is_named(call, words):
    with pytest.raises(TypeError, match=words):
        call()


def test_numbers_still_go_there():
    assert F.elu(X, 0.5).shape == X.shape
    assert F.dropout(X, 0.0).tolist() == X.tolist()
    assert F.leaky_relu(-X, np.float32(0.5))[0, 1].item() == -0.5
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but "
                                         "got 1.5"):
        dl.nn.Dropout2d(1.5)


@pytest.mark.parametrize("call, words", [
    # Before: "'NoneType' object is not iterable"
    (lambda: F.pad(X, None), r"pad: pad must be a tuple of ints \(left, right, ...\), got None"),
    # Before: the float was truncated, silently (a padding of 1)
    (lambda: F.pad(X, (1.5, 1)), r"pad: the amounts must be ints, got float 1.5"),
    (lambda: dl.nn.ZeroPad2d(1.5), r"ZeroPad2d: the padding amounts must be ints, got float"),
    (lambda: dl.nn.ReflectionPad2d((1, 1.5, 0, 0)), r"ReflectionPad2d: the padding amounts"),
], ids=["pad-None", "pad-float", "ZeroPad2d-float", "ReflectionPad2d-float"])
def test_padding_amounts_are_ints(call, words):
    with pytest.raises(TypeError, match=words):
        call()
    assert F.pad(X, [1, 1]).shape == (3, 6)
    assert dl.nn.ZeroPad2d((1, 2, 3, 4)).padding == (1, 2, 3, 4)


@pytest.mark.parametrize("call, name", [
    # Before: "'NoneType' object is not iterable"
    (lambda: F.layer_norm(X, None), "layer_norm"),
    (lambda: F.rms_norm(X, None), "rms_norm"),
    (lambda: dl.nn.LayerNorm(None), "LayerNorm"),
    # Before: the float was truncated, silently
    (lambda: dl.nn.RMSNorm(2.5), "RMSNorm"),
    (lambda: F.layer_norm(X, 4.0), "layer_norm"),
], ids=["layer_norm", "rms_norm", "LayerNorm", "RMSNorm-float", "layer_norm-float"])
def test_normalized_shape_is_ints(call, name):
    with pytest.raises(TypeError, match=rf"{name}: normalized_shape must be ints, got"):
        call()
    assert F.layer_norm(X, 4).shape == X.shape
    assert dl.nn.LayerNorm(X.shape[1:]).normalized_shape == (4,)


def test_repeat_interleave_counts_are_integers():
    # Before: repeats=1.5 made 1 copy of each, silently; a float tensor of counts too
    x = dl.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match="repeat_interleave: repeats must be an int, got float"):
        dl.repeat_interleave(x, 1.5)
    with pytest.raises(TypeError, match="repeats must be integers, got a difflab.float32"):
        dl.repeat_interleave(x, dl.tensor([1.5, 2.0]))
    assert dl.repeat_interleave(x, dl.tensor([1, 2])).tolist() == [1.0, 2.0, 2.0]
    assert dl.repeat_interleave(x, np.int64(2)).tolist() == [1.0, 1.0, 2.0, 2.0]


@pytest.mark.parametrize("call, words", [
    # Before: NumPy's "scale < 0"; and a nan std drew nans, silently
    (lambda: dl.normal(0.0, -1.0, (3,)), r"normal: expects std >= 0.0, but found std -1.0"),
    (lambda: dl.normal(0.0, float("nan"), (3,)), r"normal: expects std >= 0.0, but found std nan"),
    (lambda: dl.zeros(3).normal_(0, -1), r"normal: expects std >= 0.0"),
    # Before: NumPy's "high - low < 0" and OverflowError "high - low range exceeds valid bounds"
    (lambda: dl.zeros(3).uniform_(2, 1), r"uniform: expects a \[from, to\) range, but found "
                                         r"from=2 > to=1"),
    (lambda: dl.zeros(3).uniform_(float("nan"), 1), r"uniform: expects finite bounds"),
    # Before: NumPy's "low >= high"
    (lambda: dl.randint(3, 3, (2,)), r"randint expects low to be less than high, but got "
                                     r"low=3 >= high=3"),
], ids=["normal-negative", "normal-nan", "normal_", "uniform_-reversed", "uniform_-nan",
        "randint-empty-range"])
def test_draws_name_a_bad_parameter(call, words):
    with pytest.raises(ValueError, match=words):
        call()
    assert dl.zeros(2).uniform_(1, 1).tolist() == [1.0, 1.0]
    assert dl.normal(dl.zeros(2), dl.ones(2)).shape == (2,)


def test_unflatten_layer_names_the_sizes():
    # Before: "reshape: shape (3, 3, 2) is invalid for input of size 12", naming a shape
    # the user never wrote
    with pytest.raises(RuntimeError, match=r"unflatten: sizes \(3, 2\) do not multiply to "
                                           r"dimension 1's size 4"):
        dl.nn.Unflatten(1, (3, 2))(X)
    with pytest.raises(TypeError, match=r"unflatten: sizes must be ints, got float 2.0"):
        X.unflatten(1, (2.0, 2))
    assert dl.nn.Unflatten(-1, (2, -1))(X).shape == (3, 2, 2)
    assert dl.func.vmap(dl.nn.Unflatten(1, (2, 2)))(dl.zeros(5, 3, 4)).shape == (5, 3, 2, 2)
