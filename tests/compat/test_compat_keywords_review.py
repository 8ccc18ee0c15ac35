"""A stranger's review of the PyTorch names and keywords of tests/compat/
test_compat_pytorch_keywords.py: edge inputs where they did not do what PyTorch does
(values recorded from PyTorch 2.13 on the CPU)."""

import copy
import math
import pickle
import warnings

import numpy as np
import pytest

import difflab as torch  # (as the programs spell it)
from difflab import nn

INF, NAN = float("inf"), float("nan")


# ------------------------------------------------------------- Embedding(max_norm=)


@pytest.mark.parametrize("norm_type, expected", [
    (INF, [[0.75, 1.0]]),          # the largest |entry| is 4 > 1
    (1.0, [[3.0 / 7, 4.0 / 7]]),   # |3| + |4| = 7
    (0.0, [[1.5, 2.0]]),           # two entries are not zero
    (-INF, [[1.0, 4.0 / 3]]),      # the smallest |entry| is 3
])
def test_embedding_max_norm_takes_every_norm_type(norm_type, expected):
    w = torch.tensor([[3.0, 4.0], [0.3, 0.4]])
    out = nn.functional.embedding(torch.tensor([0]), w, max_norm=1.0, norm_type=norm_type)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(w.numpy()[0], expected[0], rtol=1e-6)  # (renormed in place)


def test_embedding_max_norm_renorms_on_the_gpu_too(cuda):
    w = torch.tensor([[3.0, 4.0], [0.3, 0.4]], device=cuda)
    out = nn.functional.embedding(torch.tensor([0, 1], device=cuda), w, max_norm=1.0,
                                  norm_type=INF)
    np.testing.assert_allclose(out.cpu().numpy(), [[0.75, 1.0], [0.3, 0.4]], rtol=1e-6)


def test_embedding_freeze_without_a_given_table_freezes_it_as_in_pytorch():
    assert torch.nn.Embedding(3, 2, _freeze=True).weight.requires_grad is False
    assert torch.nn.Embedding(3, 2).weight.requires_grad is True


def test_embedding_with_its_options_survives_deepcopy_pickle_and_state_dict():
    e = nn.Embedding(5, 3, padding_idx=0, max_norm=1.0, norm_type=INF)
    for other in (copy.deepcopy(e), pickle.loads(pickle.dumps(e))):
        assert (other.max_norm, other.norm_type, other.padding_idx) == (1.0, INF, 0)
    f = nn.Embedding(5, 3, max_norm=1.0, norm_type=INF)
    f.load_state_dict(e.state_dict())
    out = f(torch.tensor([1, 2, 2]))
    assert float(out.abs().max()) <= 1.0 + 1e-6


# ----------------------------------------------------------------------- ldexp


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64])
def test_ldexp_keeps_a_floating_inputs_dtype_with_integer_exponents(dtype):
    y = torch.ldexp(torch.tensor([1000.0, -0.0], dtype=dtype), torch.tensor([-20, 3]))
    assert y.dtype == dtype
    assert y.tolist() == [1000.0 * 2.0 ** -20, -0.0]
    assert math.copysign(1.0, y.tolist()[1]) == -1.0


def test_ldexp_reaches_the_smallest_numbers_of_its_dtype():
    tiny = torch.ldexp(torch.tensor([1.0], dtype=torch.float64), torch.tensor([-200]))
    assert tiny.tolist() == [2.0 ** -200]
    half = torch.ldexp(torch.tensor([60000.0], dtype=torch.float16), torch.tensor([-26]))
    assert half.tolist() == [float(np.float16(60000.0 * 2.0 ** -26))]


def test_ldexp_promotes_as_pytorch_otherwise():
    assert torch.ldexp(torch.tensor([1], dtype=torch.int8),
                       torch.tensor([3], dtype=torch.int8)).dtype == torch.float32
    assert torch.ldexp(torch.tensor([1.0], dtype=torch.float16),
                       torch.tensor([3.0])).dtype == torch.float32
    assert torch.ldexp(torch.tensor([1.0]),
                       torch.tensor([3.0], dtype=torch.float64)).dtype == torch.float64


# -------------------------------------------------------------- masked_scatter


def test_masked_scatter_refuses_a_source_of_another_dtype_as_pytorch():
    with pytest.raises(RuntimeError, match="same dtype"):
        torch.zeros(2, dtype=torch.int64).masked_scatter(torch.tensor([True, True]),
                                                        torch.tensor([1.7, 2.5]))


def test_masked_scatter_broadcasts_input_and_mask_together_as_pytorch():
    out = torch.zeros(2).masked_scatter(torch.tensor([[True, False], [True, True]]),
                                        torch.ones(4))
    assert out.tolist() == [[1.0, 0.0], [1.0, 1.0]]
    x = torch.zeros(2, requires_grad=True)
    out = x.masked_scatter(torch.tensor([[False, True], [False, False]]), torch.ones(4))
    out.sum().backward()
    assert x.grad.tolist() == [2.0, 1.0]


def test_masked_scatter_is_also_a_function_of_the_package():
    out = torch.masked_scatter(torch.zeros(3), torch.tensor([False, True, True]),
                               torch.tensor([5.0, 6.0, 7.0]))
    assert out.tolist() == [0.0, 5.0, 6.0]
    x = torch.zeros(3)
    assert x.masked_scatter_(torch.tensor([True, False, True]), torch.tensor([1.0, 2.0])) is x
    assert x.tolist() == [1.0, 0.0, 2.0]


# ---------------------------------------------------------------- torch.diff


def test_the_callable_diff_package_pickles_and_copies_as_itself():
    assert pickle.loads(pickle.dumps(torch.diff)) is torch.diff
    assert copy.deepcopy(torch.diff) is torch.diff
    import functools

    twice = pickle.loads(pickle.dumps(functools.partial(torch.diff, n=2)))
    assert twice(torch.tensor([1.0, 3.0, 6.0])).tolist() == [1.0]


def test_diff_prepend_of_another_ndim_is_refused_by_name_and_a_0d_one_is_a_number():
    with pytest.raises(RuntimeError, match="prepend and append must have input's 2"):
        torch.diff(torch.ones(2, 3), dim=1, prepend=torch.zeros(3))
    start = torch.tensor(0.5, requires_grad=True)
    out = torch.diff(torch.ones(2, 2), dim=1, prepend=start)
    assert out.tolist() == [[0.5, 0.0], [0.5, 0.0]]
    out.sum().backward()
    assert start.grad.tolist() == -2.0


@pytest.mark.parametrize("n", [1.0, True])
def test_diff_order_must_be_an_int_as_in_pytorch(n):
    with pytest.raises(TypeError, match="order n must be an int"):
        torch.diff(torch.ones(3), n=n)


# ---------------------------------------------------------- clip_grad_norm_


def _clipped(grads, norm_type):
    params = []
    for g in grads:
        p = nn.Parameter(torch.ones(len(g)))
        p.grad = torch.tensor(g)
        params.append(p)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no NumPy warnings about nan or inf)
        total = nn.utils.clip_grad_norm_(params, 1.0, norm_type=norm_type)
    return float(total), [p.grad.tolist() for p in params]


@pytest.mark.parametrize("grads", [[[1.0], [NAN]], [[NAN], [1.0]]])
def test_clip_grad_norm_inf_with_a_nan_anywhere_is_nan(grads):
    total, clipped = _clipped(grads, INF)
    assert math.isnan(total)
    assert all(math.isnan(v) for g in clipped for v in g)


def test_clip_grad_norm_inf_gradient_makes_nan_without_numpy_warnings():
    total, clipped = _clipped([[INF, 1.0]], 2.0)
    assert total == INF and math.isnan(clipped[0][0]) and clipped[0][1] == 0.0


def test_clip_grad_norm_zero_and_minus_inf_norms_as_pytorch():
    total, clipped = _clipped([[0.0, 3.0], [4.0]], 0.0)  # (the norm of the counts [1, 1])
    assert total == 2.0
    np.testing.assert_allclose(clipped[0] + clipped[1], [0.0, 1.5, 2.0], rtol=1e-6)
    total, clipped = _clipped([[2.0, 3.0], [4.0]], -INF)
    assert total == 2.0
    np.testing.assert_allclose(clipped[0] + clipped[1], [1.0, 1.5, 2.0], rtol=1e-6)


def test_clip_grad_norm_on_the_gpu_stand_in(cuda):
    p = nn.Parameter(torch.ones(2, device=cuda))
    p.grad = torch.tensor([3.0, 4.0], device=cuda)
    total = nn.utils.clip_grad_norm_([p], 1.0, norm_type=INF)
    assert float(total) == 4.0 and total.device == p.device
    np.testing.assert_allclose(p.grad.cpu().numpy(), [0.75, 1.0], rtol=1e-6)


# ----------------------------------------------------------------------- frexp


@pytest.mark.parametrize("method", ["reverse", "forward", "symbolic", "compiled"])
def test_frexp_mantissa_derivative_at_zero_is_one_and_stays_out_of_its_neighbours(method):
    # (x = 0 has exponent 0, so its mantissa is x itself: derivative 1, as PyTorch gives)
    x = torch.tensor([3.0, 0.0, -0.0, 5.0], dtype=torch.float64)
    g = torch.grad(lambda v: torch.frexp(v).mantissa.sum(), method=method)(x)
    np.testing.assert_allclose(np.asarray(g, dtype=float), [0.25, 1.0, 1.0, 0.125])


# -------------------------------------------------------- cumulative_trapezoid


@pytest.mark.parametrize("integrate", [torch.trapezoid, torch.cumulative_trapezoid])
@pytest.mark.parametrize("y, x", [((3,), (2,)), ((1,), (2,)), ((2, 3), (2, 2))])
def test_trapezoid_x_of_another_length_is_refused_by_name(integrate, y, x):
    with pytest.raises(RuntimeError, match="one x value for each sample point"):
        integrate(torch.ones(*y), torch.ones(*x))


def test_embedding_max_norm_renorms_on_every_call_of_a_compiled_function():
    w = torch.tensor([[3.0, 4.0], [6.0, 8.0], [0.3, 0.4]])
    look_up = torch.compile(lambda i: nn.functional.embedding(i, w, max_norm=1.0) * 2.0)
    np.testing.assert_allclose(look_up(torch.tensor([0])).numpy(), [[1.2, 1.6]], rtol=1e-6)
    np.testing.assert_allclose(look_up(torch.tensor([1])).numpy(), [[1.2, 1.6]], rtol=1e-6)
    np.testing.assert_allclose(w.numpy(), [[0.6, 0.8], [0.6, 0.8], [0.3, 0.4]], rtol=1e-6)


# ------------------------------------------------- autograd.grad(materialize_grads=)


@pytest.mark.parametrize("create_graph", [False, True])
def test_materialized_zeros_require_grad_with_create_graph_as_pytorch(create_graph):
    x = torch.ones(2, requires_grad=True)
    y = torch.ones(2, dtype=torch.float64, requires_grad=True)
    _, gy = torch.autograd.grad((x * 2).sum(), [x, y], materialize_grads=True,
                                create_graph=create_graph)
    assert gy.tolist() == [0.0, 0.0] and gy.dtype == torch.float64
    assert gy.requires_grad is create_graph and gy.is_leaf
