"""Edge cases where difflab differed from PyTorch (the third wave of a stranger's sweep):
0-d examples under vmap, empty tensors, signed zeros, one wording per error.

Each test says what happened before.
"""

import numpy as np
import pytest

import difflab as dl

# ------------------------------------------------ vmap: a 0-d example's dim 0 / -1

# Per example, a 0-d tensor takes dim 0 or -1 in a reduction or a scan (PyTorch:
# torch.tensor(3.).sum(0) is 3.), so under vmap the result is each example's own value.
# Before: "Dimension out of range (... got 1)": the logical dim 0 was shifted past the
# batch onto an axis the physical (B,) tensor does not have.
ZERO_D_CALLS = {
    "sum": lambda t: t.sum(0), "sum_tuple": lambda t: t.sum((-1,)),
    "sum_keepdim": lambda t: t.sum(0, keepdim=True), "mean": lambda t: t.mean(-1),
    "amax": lambda t: t.amax(0), "amin": lambda t: t.amin(-1),
    "logsumexp": lambda t: t.logsumexp(0), "any": lambda t: t.any(0),
    "count_nonzero": lambda t: t.count_nonzero(0), "cumsum": lambda t: t.cumsum(0),
    "cumprod": lambda t: t.cumprod(-1), "flip": lambda t: t.flip((0,)),
    "argsort": lambda t: t.argsort(0), "softmax": lambda t: t.softmax(0),
    "log_softmax": lambda t: t.log_softmax(-1), "prod": lambda t: t.prod(0),
    "argmax": lambda t: t.argmax(0), "argmin": lambda t: t.argmin(-1),
}


@pytest.mark.parametrize("name", sorted(ZERO_D_CALLS))
def test_vmap_reduction_over_0d_examples_matches_per_example_calls(name):
    f = ZERO_D_CALLS[name]
    xs = dl.tensor([0.5, -2.0, 0.0, 3.0])
    batched = dl.func.vmap(f)(xs)
    expected = dl.stack([f(x) for x in xs])  # (eager: each 0-d example alone)
    assert batched.shape == (4,)
    np.testing.assert_array_equal(batched.numpy(), expected.numpy())


def test_vmap_grad_of_a_0d_reduction():
    xs = dl.tensor([1.0, -2.0, 3.0])
    g = dl.func.vmap(dl.func.grad(lambda t: (t * t).sum(0)))(xs)
    np.testing.assert_allclose(g.numpy(), 2 * xs.numpy())


@pytest.mark.parametrize("f, xs, got", [
    (lambda t: t.sum(1), dl.zeros(5), 1),  # a 0-d example takes 0 and -1 only
    # Before: silently summed over dim 0: the logical dim was wrapped modulo the rank.
    (lambda t: t.sum(3), dl.zeros(5, 4), 3),
    (lambda t: t.mean(-2), dl.zeros(5, 4), -2),
    (lambda t: t.argmax(2), dl.zeros(5, 4), 2),
])
def test_vmap_dim_out_of_range_names_the_logical_dim(f, xs, got):
    with pytest.raises(IndexError, match=rf"Dimension out of range .*but got {got}\)"):
        dl.func.vmap(f)(xs)


# ------------------------------------------- softmax's dim: one check, one wording


@pytest.mark.parametrize("call, error, words", [
    # Before: "softmax: dim 2 is out of range for a 2-D input (give one int in [-2, 1])",
    # a second wording of the project's one dim-out-of-range error.
    (lambda: dl.softmax(dl.zeros(2, 2), 2), IndexError,
     r"^softmax: Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)$"),
    (lambda: dl.zeros(3).log_softmax(-2), IndexError,
     r"^log_softmax: Dimension out of range \(expected to be in range of \[-1, 0\], but got -2\)"),
    # Before: IndexError "dim None is out of range": the type was the fault, not the range.
    (lambda: dl.softmax(dl.zeros(2, 2), None), TypeError,
     "softmax: dim must be an int, got NoneType"),
    (lambda: dl.softmax(dl.zeros(2, 2), True), TypeError, "softmax: dim must be an int, got bool"),
])
def test_softmax_dim_errors_use_the_one_wording(call, error, words):
    with pytest.raises(error, match=words):
        call()


# ----------------------------------------------------- empty tensors: median, chunk


@pytest.mark.parametrize("median", [dl.median, dl.nanmedian, lambda x: x.median()])
def test_median_of_an_empty_tensor_is_nan(median):
    # Before: RuntimeError "the median of an empty tensor is undefined" (PyTorch: nan).
    x = dl.zeros(0, 2, requires_grad=True)
    y = median(x)
    assert y.shape == () and y.dtype == dl.float32 and np.isnan(y.item())
    y.backward()  # (still on the tape: the gradient of no entries is empty)
    assert x.grad.shape == (0, 2)
    assert dl.median(dl.tensor([], dtype=dl.float64)).dtype == dl.float64


def test_median_of_an_empty_dim_and_of_empty_integers_are_errors_naming_median():
    with pytest.raises(IndexError, match="median: cannot pick .* dimension 0 of size 0"):
        dl.median(dl.zeros(0, 3), 0)  # (PyTorch too: "Expected reduction dim 0 ...")
    assert dl.median(dl.zeros(0, 3), 1).values.shape == (0,)
    with pytest.raises(RuntimeError, match="median: the median of an empty difflab.int64"):
        dl.median(dl.tensor([], dtype=dl.int64))


@pytest.mark.parametrize("shape, chunks, dim, shapes", [
    # Before: one empty piece; PyTorch gives as many as asked for.
    ((0,), 2, 0, [(0,), (0,)]),
    ((0, 3), 2, 0, [(0, 3), (0, 3)]),
    ((0, 4), 3, 0, [(0, 4)] * 3),
    ((3, 0), 2, 1, [(3, 0), (3, 0)]),
    ((0, 3), 2, 1, [(0, 2), (0, 1)]),  # (a non-empty dim of an empty tensor: as before)
])
def test_chunk_of_an_empty_dim_gives_chunks_pieces(shape, chunks, dim, shapes):
    for pieces in (dl.zeros(*shape).chunk(chunks, dim), dl.chunk(dl.zeros(*shape), chunks, dim)):
        assert [tuple(p.shape) for p in pieces] == shapes


# ----------------------------------------------------------- signed zeros at a kink


def _value_and_grad(f, value):
    x = dl.tensor(value, requires_grad=True)
    y = f(x)
    y.backward()
    return y.item(), x.grad.item()


@pytest.mark.parametrize("f, value, expected_y, expected_grad", [
    # PyTorch 2.13: relu and clamp replace only x < min (x > max), so -0.0 is kept.
    # Before: relu(-0.0) and clamp(-0.0, min=0) were 0.0 (NumPy's maximum/clip on a tie).
    (dl.relu, -0.0, -0.0, 0.0),
    (dl.relu, 0.0, 0.0, 0.0),
    (lambda x: dl.clamp(x, min=0), -0.0, -0.0, 1.0),
    (lambda x: x.clamp(0.0, 1.0), -0.0, -0.0, 1.0),
    (lambda x: dl.clamp(x, max=0), -0.0, -0.0, 1.0),
    (lambda x: dl.clamp(x, max=-0.0), 0.0, 0.0, 1.0),
    (lambda x: x.clamp(dl.tensor(0.0)), -0.0, -0.0, 1.0),
])
def test_signed_zero_at_the_kink_matches_pytorch(f, value, expected_y, expected_grad):
    y, grad = _value_and_grad(f, value)
    assert y == expected_y and np.signbit(y) == np.signbit(expected_y)
    assert grad == expected_grad and not np.signbit(grad)  # (relu's gradient: 0.0, not -0.0)


def test_clamp_and_relu_keep_their_other_edges():
    nan = float("nan")
    np.testing.assert_array_equal(dl.clamp(dl.tensor([nan, -2.0, 3.0]), 0, 1).numpy(),
                                  [nan, 0.0, 1.0])
    assert np.isnan(dl.clamp(dl.tensor([1.0]), nan).item())  # (a nan bound: nan, as PyTorch)
    assert dl.relu(dl.tensor([-3, 2])).tolist() == [0, 2]  # (integers stay integers)
    assert dl.clamp(dl.tensor([-3, 2], dtype=dl.int32), 0).dtype == dl.int32


def test_argmax_with_keepdim_of_a_0d_tensor_stays_0d():
    x = dl.tensor(3.0)
    for name in ("argmax", "argmin"):
        assert tuple(getattr(x, name)(0, keepdim=True).shape) == ()
        assert tuple(getattr(dl.tensor([[1.0, 2.0]]), name)(1, keepdim=True).shape) == (1, 1)
