"""The names PyTorch programs reach first that difflab lacked: constants and memory formats,
the in-place math (one table), method aliases, copysign, float_power, x.unfold,
sum_to_size, the top-level nn functions with ATen's signatures, the signal windows, and
the settings.  Values pinned from PyTorch 2.13 (CPU), so they run without it; derivatives
from every method; the in-place rules; clear errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import difflab as dl
from difflab import nn
from difflab.autograd import gradcheck
from difflab.tensor_inplace import _IN_PLACE_ALIASES, _MATH_IN_PLACE

METHODS = ("reverse", "forward", "symbolic", "numeric", "compiled")
F64 = dl.float64


# ---------------------------------------------------------------- constants and formats

def test_the_constants_are_pythons_floats():
    assert (dl.pi, dl.e, dl.inf) == (math.pi, math.e, math.inf) and math.isnan(dl.nan)
    assert type(dl.pi) is float


def test_memory_formats_are_accepted_where_pytorch_takes_them_and_change_nothing():
    x = dl.arange(8.0).reshape(1, 2, 2, 2)
    assert repr(dl.channels_last) == "difflab.channels_last"
    assert isinstance(dl.preserve_format, dl.memory_format)
    for fmt in (dl.channels_last, dl.contiguous_format, dl.preserve_format,
                dl.channels_last_3d):
        assert x.contiguous(memory_format=fmt) is x
        assert x.to(memory_format=fmt) is x
        assert dl.equal(x.to(dl.float64, memory_format=fmt), x.double())
        for like in (dl.zeros_like, dl.ones_like, dl.empty_like, dl.rand_like, dl.randn_like):
            assert like(x, memory_format=fmt).shape == x.shape
        assert dl.full_like(x, 2.0, memory_format=fmt).sum().item() == 16.0
        assert dl.randint_like(x, 3, memory_format=fmt).shape == x.shape


def test_a_memory_format_of_another_type_is_refused_by_name():
    with pytest.raises(TypeError, match="memory_format must be a difflab.memory_format"):
        dl.zeros(2).contiguous(memory_format="channels_last")
    with pytest.raises(TypeError, match="memory_format"):
        dl.zeros_like(dl.zeros(2), memory_format=1)
    with pytest.raises(TypeError, match="memory_format"):
        dl.zeros(2).to(memory_format="x")


def test_the_unsigned_dtypes_exist_and_convert():
    x = dl.tensor([1, 2, 60000]).to(dl.uint16)
    assert x.dtype == dl.uint16 and x.tolist() == [1, 2, 60000]
    assert dl.tensor([2**32 - 1]).to(dl.uint32).tolist() == [2**32 - 1]
    assert dl.zeros(1, dtype=dl.uint64).dtype.itemsize == 8


# ------------------------------------------------------------- the in-place math table

def _start(name):
    """The example's own inputs (the table's), as a fresh float64 tensor or as given."""
    function, _, start, arguments = _MATH_IN_PLACE[name]
    env = {"dl": dl, "float": float}
    x = eval(f"dl.tensor({start})", env)  # noqa: S307  (the table's own text)
    args = eval(f"(lambda *a, **k: (a, k))({arguments})", env)  # noqa: S307
    return function, x, args


@pytest.mark.parametrize("name", sorted(_MATH_IN_PLACE))
def test_each_in_place_method_writes_the_out_of_place_value_into_self(name):
    function, x, (args, kwargs) = _start(name)
    want = getattr(x, function)(*args, **kwargs)
    version = x._version[0]
    assert getattr(x, name)(*args, **kwargs) is x
    assert x._version[0] == version + 1
    np.testing.assert_array_equal(x.numpy(), want.numpy().astype(x.numpy().dtype))


DIFFERENTIABLE_IN_PLACE = sorted(
    n for n in _MATH_IN_PLACE if n[:-1] not in {
        "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
        "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "gcd",
        "lcm", "sign", "sgn", "trunc", "ceil", "heaviside", "ldexp"})


@pytest.mark.parametrize("name", DIFFERENTIABLE_IN_PLACE)
def test_the_gradient_through_an_in_place_method_is_the_out_of_place_ones(name):
    function, x, (args, kwargs) = _start(name)
    a = x.double().requires_grad_()
    b = x.double().requires_grad_()
    work = a * 1.0  # (a non-leaf: a leaf that requires grad may not change in place)
    getattr(work, name)(*args, **kwargs)
    weights = dl.arange(1.0, 1.0 + a.numel(), dtype=F64).reshape(a.shape)
    (work * weights).sum().backward()
    (getattr(b, function)(*args, **kwargs) * weights).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy())


@pytest.mark.parametrize("name", ["cos_", "addcdiv_", "clamp_min_", "lerp_"])
def test_an_in_place_method_refuses_a_leaf_that_requires_grad(name):
    _, x, (args, kwargs) = _start(name)
    leaf = x.requires_grad_()
    with pytest.raises(RuntimeError, match="leaf tensor"):
        getattr(leaf, name)(*args, **kwargs)
    with dl.no_grad():
        getattr(leaf, name)(*args, **kwargs)  # (the optimizer's way)


def test_a_float_result_is_refused_in_an_integer_tensor_as_by_pytorch():
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        dl.tensor([1, 2]).cos_()
    x = dl.tensor([1.0, 0.0])
    assert x.eq_(dl.tensor([1.0, 1.0])).tolist() == [1.0, 0.0]  # (a bool into floats: ok)


def test_the_in_place_aliases_are_the_same_methods():
    for alias, name in _IN_PLACE_ALIASES.items():
        assert getattr(dl.Tensor, alias) is getattr(dl.Tensor, name), alias


def test_an_optimizers_update_with_addcdiv_and_addcmul_matches_pytorch():
    # (Adam's moments by hand, as custom optimizers write them; PyTorch's numbers)
    p, g = dl.tensor([0.3, 0.7]), dl.tensor([0.5, -1.0])
    m, v = dl.zeros(2), dl.zeros(2)
    m.mul_(0.9).add_(g, alpha=0.1)
    v.mul_(0.999).addcmul_(g, g, value=0.001)
    p.addcdiv_(m, v.sqrt().add_(1e-8), value=-0.01)
    assert p.tolist() == [0.26837724447250366, 0.7316227555274963]  # (bit for bit)
    assert dl.tensor([0.3, 0.7]).addcdiv_(dl.tensor([1.0, 1.0]), dl.tensor([2.0, 4.0]),
                                          value=2).tolist() == pytest.approx([1.3, 1.2])


# --------------------------------------------------------------------- method aliases

def test_the_method_aliases_are_the_same_functions():
    T = dl.Tensor  # noqa: N806
    pairs = {"arccos": T.acos, "arcsin": T.asin, "arctan": T.atan, "arctan2": T.atan2,
             "arccosh": T.acosh, "arcsinh": T.asinh, "arctanh": T.atanh, "greater": T.gt,
             "greater_equal": T.ge, "less": T.lt, "less_equal": T.le, "not_equal": T.ne,
             "multiply": T.mul, "subtract": T.sub, "negative": T.neg, "absolute": T.abs,
             "fix": T.trunc, "cov": dl.cov, "corrcoef": dl.corrcoef, "diagflat": dl.diagflat,
             "vdot": dl.vdot, "logical_and": dl.logical_and, "clamp_min": dl.clamp_min}
    for name, function in pairs.items():
        assert getattr(T, name) is function, name
    x = dl.tensor([0.5, -1.0, 0.0])
    assert x.logical_not().tolist() == [False, False, True]
    assert x.logical_xor(dl.tensor([1.0, 0.0, 0.0])).tolist() == [False, True, False]


def test_clamp_min_and_max_and_their_gradient_at_the_bound():
    x = dl.tensor([-1.0, 0.0, 2.0], dtype=F64, requires_grad=True)
    y = x.clamp_min(0.0) + dl.clamp_max(x, 0.0)
    assert y.tolist() == [-1.0, 0.0, 2.0]
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 2.0, 1.0]  # (PyTorch's: both pass at x == bound)


def test_where_as_a_method_takes_self_where_the_condition_holds():
    x = dl.tensor([1.0, -2.0, 3.0])
    assert x.where(x > 0, dl.tensor(0.0)).tolist() == [1.0, 0.0, 3.0]
    assert x.where(x > 0, -1.0).tolist() == [1.0, -1.0, 3.0]


# ------------------------------------------------------------------ the new compositions

def test_copysign_matches_pytorch_at_zeros_and_in_its_gradients():
    x = dl.tensor([1.0, -2.0, 0.0, -0.0, 3.0], requires_grad=True)
    y = dl.tensor([-1.0, -1.0, -1.0, 1.0, 0.0], requires_grad=True)
    c = dl.copysign(x, y)
    np.testing.assert_array_equal(c.detach().numpy(), [-1.0, -2.0, -0.0, 0.0, 3.0])
    assert np.signbit(c.detach().numpy()).tolist() == [True, True, True, False, False]
    c.sum().backward()
    assert x.grad.tolist() == [-1.0, 1.0, 0.0, 0.0, 1.0]  # (PyTorch's)
    assert y.grad.tolist() == [0.0] * 5  # (PyTorch's: zeros_like(other))
    assert dl.copysign(dl.tensor([1, -2]), -1).tolist() == [-1.0, -2.0]  # ints: float
    assert dl.copysign(dl.tensor([1, 2]), -1).dtype == dl.float32


def test_float_power_computes_in_double_precision_as_pytorch():
    x = dl.tensor([2.0, 3.0], requires_grad=True)
    e = dl.tensor([0.5, -1.0], requires_grad=True)
    p = dl.float_power(x, e)
    assert p.dtype == dl.float64
    np.testing.assert_allclose(p.detach().numpy(), [1.4142135623730951, 1 / 3], rtol=1e-15)
    p.sum().backward()
    assert x.grad.dtype == dl.float32
    np.testing.assert_allclose(x.grad.numpy(), [0.35355338, -0.11111111], rtol=1e-6)
    np.testing.assert_allclose(e.grad.numpy(), [0.98025817, 0.36620408], rtol=1e-6)
    assert dl.float_power(dl.tensor([2, 3]), 2).tolist() == [4.0, 9.0]
    assert dl.float_power(dl.tensor([1j]), 2).dtype == dl.complex128


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", ["copysign", "float_power", "unfold", "sum_to_size",
                                  "where", "clamp_min", "rsub"])
def test_every_method_gives_the_compositions_derivative(name, method):
    other = dl.tensor([-1.0, -1.0, 1.0, 1.0, -0.0], dtype=F64)
    weights = dl.arange(6.0, dtype=F64).reshape(2, 3)
    functions = {
        "copysign": (lambda v: (dl.copysign(v, other) * v).sum(),
                     lambda v: 2 * np.abs(v) * np.copysign(1, other.numpy())),
        "float_power": (lambda v: dl.float_power(v, v).sum(),
                        lambda v: v ** v * (np.log(v) + 1)),
        "unfold": (lambda v: (v.unfold(0, 3, 2) * weights).sum(),
                   lambda v: np.array([0.0, 1.0, 5.0, 4.0, 5.0])),  # (PyTorch's)
        "sum_to_size": (lambda v: (v.reshape(1, 5).expand(2, 5).sum_to_size(1, 5) ** 2).sum(),
                        lambda v: 8 * v),
        "where": (lambda v: (v.where(v > 1.5, v * 3) ** 2).sum(),
                  lambda v: np.where(v > 1.5, 2 * v, 18 * v)),
        "clamp_min": (lambda v: (dl.clamp_min(v, 2.5) ** 2).sum(),
                      lambda v: np.where(v >= 2.5, 2 * v, 0.0)),
        "rsub": (lambda v: (dl.rsub(v, 5, alpha=2) ** 2).sum(), lambda v: -4 * (5 - 2 * v)),
    }
    f, want = functions[name]
    x = np.array([1.0, 2.0, 0.5, 3.0, 4.0])
    g = dl.grad(f, method=method)(dl.tensor(x, dtype=F64))
    np.testing.assert_allclose(np.asarray(g), want(x), rtol=1e-6)


@pytest.mark.parametrize("f", [lambda v: dl.copysign(v, -v.detach() + 0.25),
                               lambda v: dl.float_power(v, 1.5),
                               lambda v: v.unfold(1, 2, 1),
                               lambda v: v.sum_to_size(1, 4)])
def test_the_compositions_pass_gradcheck(f):
    x = dl.tensor(np.linspace(0.3, 2.0, 12).reshape(3, 4), dtype=F64, requires_grad=True)
    assert gradcheck(f, (x,))


def test_unfold_gives_pytorchs_windows_shapes_and_errors():
    u = dl.arange(10.0).reshape(2, 5)
    assert u.unfold(1, 3, 2).tolist() == [[[0.0, 1.0, 2.0], [2.0, 3.0, 4.0]],
                                          [[5.0, 6.0, 7.0], [7.0, 8.0, 9.0]]]
    assert dl.arange(24.0).reshape(2, 3, 4).unfold(0, 2, 1).shape == (1, 3, 4, 2)
    assert dl.arange(24.0).reshape(2, 3, 4).unfold(-1, 1, 3).shape == (2, 3, 2, 1)
    assert dl.arange(6.0).unfold(0, 0, 1).shape == (7, 0)
    assert dl.tensor(5.0).unfold(0, 1, 1).tolist() == [5.0]
    with pytest.raises(RuntimeError, match="maximum size for tensor at dimension 0 is 5 but "
                                           "size is 6"):
        dl.arange(5.0).unfold(0, 6, 1)
    with pytest.raises(RuntimeError, match="step is 0 but must be > 0"):
        dl.arange(5.0).unfold(0, 2, 0)


def test_sum_to_size_reverses_broadcasting_and_refuses_other_sizes():
    assert dl.ones(2, 3, 4).sum_to_size(3, 1).tolist() == [[8.0]] * 3
    assert dl.ones(2, 3).sum_to_size((1, 3)).tolist() == [[2.0, 2.0, 2.0]]
    assert dl.ones(2, 3).sum_to_size(2, 3).shape == (2, 3)
    with pytest.raises(RuntimeError, match="is not expandable to size"):
        dl.ones(2, 3).sum_to_size(2, 2)


# --------------------------------------------------------------- top-level functions

def test_the_nn_functions_at_the_top_are_nn_functionals_own():
    F = nn.functional  # noqa: N806
    for name in ("conv1d", "conv2d", "conv3d", "conv_transpose2d", "layer_norm", "group_norm",
                 "pixel_shuffle", "cosine_similarity", "pdist", "prelu", "selu", "celu",
                 "threshold", "hardshrink", "max_pool1d", "max_pool2d", "avg_pool1d",
                 "adaptive_avg_pool1d", "bilinear", "relu_"):
        assert getattr(dl, name) is getattr(F, name), name


def test_the_aten_signatures_take_their_arguments_in_atens_order():
    x = dl.tensor([[1.0], [3.0]])
    assert dl.batch_norm(x, dl.tensor([2.0]), dl.tensor([1.0]), None, None, True, 0.1,
                         0.0).tolist() == [[-1.0], [3.0]]
    mean, var = dl.zeros(1), dl.ones(1)
    dl.batch_norm(x, None, None, mean, var, True, 0.5, 0.0)
    assert mean.tolist() == [1.0] and var.tolist() == [1.5]  # (unbiased 2, halfway)
    assert dl.embedding(dl.tensor([[0.0, 1.0], [2.0, 3.0]]),
                        dl.tensor([1, 0])).tolist() == [[2.0, 3.0], [0.0, 1.0]]
    assert dl.dropout(dl.ones(3), 0.5, False).tolist() == [1.0, 1.0, 1.0]
    assert dl.instance_norm(dl.tensor([[[1.0, 3.0]]]), None, None, None, None, True, 0.1,
                            0.0).tolist() == [[[-1.0, 1.0]]]


def test_the_losses_take_atens_integer_reduction_with_pytorchs_values():
    x, t = dl.tensor([-1.0, -2.0]), dl.tensor([0.3, 0.7])
    assert dl.kl_div(x, t, 1).item() == pytest.approx(0.5445678234100342, rel=1e-6)
    assert dl.kl_div(x, t, 2).item() == pytest.approx(1.0891356468200684, rel=1e-6)
    assert dl.kl_div(x, t, 0).shape == (2,)
    loss = dl.binary_cross_entropy_with_logits(dl.tensor([0.5, -1.0]), dl.tensor([1.0, 0.0]),
                                               dl.tensor([2.0, 1.0]), dl.tensor([3.0]), 0)
    np.testing.assert_allclose(loss.numpy(), [2.8444619, 0.31326175], rtol=1e-6)
    far = dl.binary_cross_entropy_with_logits(dl.tensor([50.0, -60.0]), dl.tensor([1.0, 0.3]),
                                              None, dl.tensor([3.0]), 0)
    np.testing.assert_allclose(far.numpy(), [5.786249553843471e-22, 54.0], rtol=1e-5)
    with pytest.raises(TypeError, match="reduction"):
        dl.kl_div(x, t, "mean")
    with pytest.raises(TypeError, match="reduction"):
        dl.margin_ranking_loss(x, t, dl.tensor([1.0, -1.0]), 0.0, 3)


def test_the_small_top_level_functions():
    assert dl.rsub(dl.tensor([1.0, 2.0]), 5).tolist() == [4.0, 3.0]
    assert dl.rsub(dl.tensor([1, 2]), 2.5).tolist() == [1.5, 0.5]
    assert dl.fill(dl.tensor([1, 2]), 2.7).tolist() == [2, 2]
    with pytest.raises(RuntimeError):
        dl.fill(dl.tensor([1.0, 2.0]), dl.tensor([3.0, 4.0]))
    assert dl.trapz(dl.tensor([1.0, 2.0, 3.0]), dl.tensor([0.0, 1.0, 3.0])).item() == 6.5
    assert dl.trapz(dl.tensor([1.0, 2.0, 3.0]), dx=2.0).item() == 8.0
    assert repr(dl.scalar_tensor(3)) == "tensor(3.)"
    assert dl.scalar_tensor(3, dtype=dl.int64).dtype == dl.int64
    x = dl.tensor([-2.0, 0.5, 2.0])
    assert dl.clip_(x, -1, 1) is x and x.tolist() == [-1.0, 0.5, 1.0]
    assert dl.zero_(x) is x and x.tolist() == [0.0] * 3
    assert dl.detach(dl.ones(1, requires_grad=True)).requires_grad is False
    assert dl.typename(dl.ones(1)) == "difflab.FloatTensor" and dl.typename(3) == "int"


def test_the_settings_record_and_read_back():
    before = dl.get_num_interop_threads()
    dl.set_num_interop_threads(3)
    assert dl.get_num_interop_threads() == 3
    dl.set_num_interop_threads(before)
    with pytest.raises(ValueError, match="positive int"):
        dl.set_num_interop_threads(0)
    assert dl.set_flush_denormal(True) is False  # (NumPy keeps subnormals: not supported)
    dl.set_warn_always(True)
    assert dl.is_warn_always_enabled()
    dl.set_warn_always(False)
    assert not dl.is_warn_always_enabled()


def test_dlpack_and_buffers_share_memory():
    a = np.array([1.0, 2.0])
    x = dl.from_dlpack(a)
    a[0] = 7.0
    assert x.tolist() == [7.0, 2.0]
    assert np.from_dlpack(x) is not None and np.from_dlpack(x)[0] == 7.0
    assert type(dl.to_dlpack(x)).__name__ == "PyCapsule"
    with pytest.raises(TypeError, match="__dlpack__"):
        dl.from_dlpack([1, 2])
    data = bytearray(b"\x01\x00\x02\x00\x03\x00")
    y = dl.frombuffer(data, dtype=dl.int16, count=2, offset=2)
    assert y.tolist() == [2, 3]
    y[0] = 9
    assert data[2] == 9
    assert dl.empty_strided((2, 3), (1, 2)).shape == (2, 3)
    with pytest.raises(RuntimeError, match="mismatch in length of strides and shape"):
        dl.empty_strided((2, 3), (1,))


# --------------------------------------------------------------------- signal windows

def test_the_windows_are_pytorchs():
    np.testing.assert_allclose(dl.hann_window(5).numpy(),
                               [0.0, 0.3454915285, 0.9045084715, 0.9045084715, 0.3454914391],
                               atol=1.2e-7)
    assert dl.hann_window(5, periodic=False).tolist() == [0.0, 0.5, 1.0, 0.5, 0.0]
    np.testing.assert_allclose(dl.hamming_window(6, True, 0.6, 0.3, dtype=F64).numpy(),
                               [0.3, 0.45, 0.75, 0.9, 0.75, 0.45], atol=1e-15)
    np.testing.assert_allclose(dl.blackman_window(6, dtype=F64).numpy(),
                               [0.0, 0.13, 0.63, 1.0, 0.63, 0.13], atol=1e-15)
    assert dl.bartlett_window(6).tolist() == [0.0, 0.3333333432674408, 0.6666666865348816, 1.0,
                                              0.6666666269302368, 0.33333325386047363]
    np.testing.assert_allclose(dl.kaiser_window(5, False, 5.0, dtype=F64).numpy(),
                               [0.036710892271286676, 0.5528517696991324, 1.0,
                                0.5528517696991324, 0.036710892271286676], rtol=1e-14)
    np.testing.assert_allclose(dl.kaiser_window(6, dtype=F64).numpy(),
                               [5.2773441320097665e-05, 0.054759364131249516, 0.5188447216723606,
                                1.0, 0.5188447216723606, 0.054759364131249516], rtol=1e-14)
    for window in (dl.hann_window, dl.hamming_window, dl.blackman_window, dl.bartlett_window,
                   dl.kaiser_window):
        assert window(0).shape == (0,) and window(1).tolist() == [1.0]
        assert window(4).dtype == dl.float32 and window(4, dtype=F64).dtype == F64
        with pytest.raises(RuntimeError, match="non-negative window_length"):
            window(-1)
        with pytest.raises(RuntimeError, match="floating point dtypes"):
            window(3, dtype=dl.int64)


# ------------------------------------------------------------------ Tensor's questions

def test_the_tensor_questions_answer_as_pytorch_for_real_tensors():
    x = dl.tensor([1.0, 2.0])
    assert x.is_cpu and x.get_device() == -1
    assert x.is_signed() and not dl.tensor([1], dtype=dl.uint8).is_signed()
    assert not dl.tensor([True]).is_signed()
    assert x.is_same_size(dl.zeros(2)) and not x.is_same_size(dl.zeros(1, 2))
    assert x.real is x and x.conj() is x and x.resolve_conj() is x and x.resolve_neg() is x
    assert not x.is_conj() and not x.is_neg()
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with "
                                           "non-complex dtypes"):
        _ = x.imag
    assert x.share_memory_() is x and not x.is_shared()
    assert x.new(2, 3).shape == (2, 3) and x.new().shape == (0,)
    assert x.new([1, 2]).dtype == dl.float32
    assert dl.tensor([0.0, 1.0, 1.0]).bernoulli().tolist() == [0.0, 1.0, 1.0]
    assert dl.tensor([0.5]).is_nonzero()


# ---------------------------------------------------------------- nn.init and nn.utils

@pytest.mark.parametrize("name", ["uniform", "normal", "constant", "eye", "dirac",
                                  "xavier_uniform", "xavier_normal", "kaiming_uniform",
                                  "kaiming_normal", "orthogonal", "sparse"])
def test_the_old_init_names_warn_and_call_the_new_ones(name):
    shape = (2, 2, 3) if name == "dirac" else (3, 3)
    extra = (0.5,) if name in ("constant", "sparse") else ()
    dl.manual_seed(0)
    with pytest.warns(FutureWarning, match=f"nn.init.{name}` is now deprecated in favor of "
                                           f"`nn.init.{name}_"):
        old = getattr(nn.init, name)(dl.empty(*shape), *extra)
    dl.manual_seed(0)
    new = getattr(nn.init, name + "_")(dl.empty(*shape), *extra)
    np.testing.assert_array_equal(old.numpy(), new.numpy())


def test_the_clipping_in_two_steps_equals_clip_grad_norm_():
    def params():
        ps = [nn.Parameter(dl.zeros(2)), nn.Parameter(dl.zeros(3)), nn.Parameter(dl.zeros(1))]
        ps[0].grad, ps[1].grad = dl.tensor([3.0, 4.0]), dl.tensor([12.0, 0.0, 0.0])
        return ps

    a, b = params(), params()
    total = nn.utils.get_total_norm([p.grad for p in a])
    assert total.item() == pytest.approx(13.0)
    nn.utils.clip_grads_with_norm_(a, 1.0, total)
    assert nn.utils.clip_grad_norm_(b, 1.0).item() == pytest.approx(13.0)
    for p, q in zip(a[:2], b[:2]):
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
    assert nn.utils.get_total_norm([dl.tensor([3.0, -4.0])], float("inf")).item() == 4.0
    assert nn.utils.get_total_norm([]).item() == 0.0
    with pytest.warns(FutureWarning, match="clip_grad_norm` is now deprecated"):
        nn.utils.clip_grad_norm(params(), 1.0)
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.get_total_norm([dl.tensor([float("inf")])], error_if_nonfinite=True)


def test_skip_init_builds_the_module():
    layer = nn.utils.skip_init(nn.Linear, 3, 2, bias=False)
    assert layer.weight.shape == (2, 3) and layer.bias is None
    with pytest.raises(RuntimeError, match="subclass of nn.Module"):
        nn.utils.skip_init(dict)


# ----------------------------------------------------------------- against PyTorch itself

def test_the_names_agree_with_pytorch_where_it_is_installed():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x, y = rng.uniform(-0.9, 0.9, 5).astype(np.float32), rng.uniform(-2, 2, 5).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in _MATH_IN_PLACE:
            _, _, start, arguments = _MATH_IN_PLACE[name]
            if start != "[0.25, 0.5]" or arguments not in ("", "dl.tensor([0.5, 0.5])"):
                continue
            args_t = (torch.tensor(y),) if arguments else ()
            args_d = (dl.tensor(y),) if arguments else ()
            want = getattr(torch.tensor(x), name)(*args_t).numpy()
            got = getattr(dl.tensor(x), name)(*args_d).numpy()
            np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7, err_msg=name)
        for window in ("hann", "hamming", "blackman", "bartlett", "kaiser"):
            for n, periodic in ((7, True), (8, False), (33, True)):
                want = getattr(torch, window + "_window")(n, periodic).numpy()
                got = getattr(dl, window + "_window")(n, periodic).numpy()
                np.testing.assert_allclose(got, want, atol=1e-6, err_msg=window)
        a = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
        for dim, size, step in ((0, 2, 1), (1, 2, 1), (2, 3, 1), (-1, 2, 2)):
            np.testing.assert_array_equal(dl.tensor(a).unfold(dim, size, step).numpy(),
                                          torch.tensor(a).unfold(dim, size, step).numpy())
        np.testing.assert_array_equal(dl.copysign(dl.tensor(x), dl.tensor(y)).numpy(),
                                      torch.copysign(torch.tensor(x), torch.tensor(y)).numpy())


# ------------------------------------------- in place: shapes, diagonals, double powers

def test_the_shape_changing_in_place_methods_keep_the_memory_and_the_history():
    x = dl.ones(2, 3, dtype=F64, requires_grad=True)
    y = x * 2
    assert y.unsqueeze_(0) is y and y.shape == (1, 2, 3)
    (y * dl.arange(6.0, dtype=F64).reshape(1, 2, 3)).sum().backward()
    assert x.grad.tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]  # (PyTorch's)
    a = dl.arange(6.0).reshape(2, 3)
    version = a._version[0]
    a.t_()
    assert a.shape == (3, 2) and a._version[0] == version + 1
    assert a.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    a.transpose_(0, 1).swapaxes_(0, 1).swapdims_(0, 1)
    assert a.shape == (2, 3)
    assert dl.zeros(1, 3, 1).squeeze_().shape == (3,)
    assert dl.zeros(1, 3, 1).squeeze_(0).shape == (3, 1)
    with pytest.raises(RuntimeError, match="leaf tensor"):
        dl.ones(2, requires_grad=True).unsqueeze_(0)
    with pytest.raises(RuntimeError, match="shape in place"):
        dl.jit.trace(lambda v: v.clone().unsqueeze_(0), (dl.ones(2),))
    compiled = dl.compile(lambda v: v.clone().unsqueeze_(0) * 2)  # (run around the graph)
    assert compiled(dl.ones(2)).tolist() == [[2.0, 2.0]]
    assert compiled(dl.ones(2) * 3).tolist() == [[6.0, 6.0]]


def test_resize_keeps_the_first_elements_and_refuses_grad():
    r = dl.arange(6.0)
    assert r.resize_(2, 2).tolist() == [[0.0, 1.0], [2.0, 3.0]]
    assert r.resize_((3, 3)).shape == (3, 3) and r.flatten().tolist()[:4] == [0.0, 1.0, 2.0, 3.0]
    assert dl.arange(4.0).resize_as_(dl.zeros(2, 2)).shape == (2, 2)
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        dl.ones(2, requires_grad=True).resize_(3)


def test_fill_diagonal_is_pytorchs_with_wrap_and_cuts_the_diagonals_gradient():
    assert dl.zeros(2, 4).fill_diagonal_(1).tolist() == [[1.0, 0.0, 0.0, 0.0],
                                                         [0.0, 1.0, 0.0, 0.0]]
    assert dl.zeros(7, 3).fill_diagonal_(1, wrap=True).tolist() == [
        [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    assert dl.zeros(2, 2, 2).fill_diagonal_(1).tolist() == [[[1.0, 0.0], [0.0, 0.0]],
                                                            [[0.0, 0.0], [0.0, 1.0]]]
    x = dl.ones(3, 3, requires_grad=True)
    y = x * 1
    y.fill_diagonal_(0.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 1 - np.eye(3))
    with pytest.raises(RuntimeError, match="all dimensions of input must be of equal length"):
        dl.zeros(2, 3, 2).fill_diagonal_(1)
    with pytest.raises(RuntimeError, match="dimensions must larger than 1"):
        dl.zeros(3).fill_diagonal_(1)


def test_float_power_in_place_needs_a_double_tensor_as_in_pytorch():
    assert dl.tensor([2.0, 3.0], dtype=F64).float_power_(2).tolist() == [4.0, 9.0]
    with pytest.raises(RuntimeError, match="float_power_ has dtype difflab.float32"):
        dl.tensor([2.0, 3.0]).float_power_(2)


def test_a_pytorch_program_with_the_new_names_runs_unchanged_with_pytorchs_result():
    """Framing a signal (unfold, a Hann window, clamp_min) and a hand-written Adam step
    (addcmul_, addcdiv_, clamp_max_, float_power): PyTorch 2.13's weights after 3 steps."""
    torch = dl  # (the program as written for PyTorch)
    signal = torch.tensor(np.sin(np.linspace(0, 20, 64)).astype(np.float32))
    frames = signal.unfold(0, 16, 8) * torch.hann_window(16)
    energy = frames.pow(2).sum(-1).clamp_min(1e-3).log()
    w = torch.tensor(np.linspace(-1, 1, 7).astype(np.float32), requires_grad=True)
    exp_avg, exp_avg_sq = torch.zeros(7), torch.zeros(7)
    for _ in range(3):
        loss = ((torch.tanh(w * energy.mean()) - 0.3).pow(2).sum()
                + torch.float_power(w, 2).sum().float() * 1e-2)
        loss.backward()
        with torch.no_grad():
            g = w.grad
            exp_avg.mul_(0.9).add_(g, alpha=0.1)
            exp_avg_sq.mul_(0.999).addcmul_(g, g, value=0.001)
            w.addcdiv_(exp_avg, exp_avg_sq.sqrt().add_(1e-8), value=-0.05)
            w.clamp_max_(0.8)
        w.grad = None
    np.testing.assert_allclose(w.detach().numpy(), [
        -0.38124871253967285, -0.04882293939590454, 0.2665470838546753, 0.4936942756175995,
        0.37029099464416504, 0.10237254202365875, 0.3404925763607025], rtol=2e-6, atol=2e-7)


def test_torch_level_losses_do_not_reduce_when_reduction_is_left_out():
    """PyTorch 2.13's torch.kl_div(a, b) & co. return the unreduced losses when
    ``reduction`` is left out (their nn.functional twins take the mean): measured
    shapes (3, 4), (3, 4), (3, 4), (3,), (3,), (3, 4)."""
    a, b = dl.ones(3, 4) * 0.5, dl.ones(3, 4) * 0.25
    assert dl.kl_div(a, b).shape == (3, 4)
    assert dl.hinge_embedding_loss(a, b).shape == (3, 4)
    assert dl.margin_ranking_loss(a, b, a).shape == (3, 4)
    assert dl.triplet_margin_loss(a, b, a).shape == (3,)
    assert dl.cosine_embedding_loss(a, b, dl.ones(3)).shape == (3,)
    assert dl.binary_cross_entropy_with_logits(a, b).shape == (3, 4)
    assert dl.kl_div(a, b, 1).shape == ()  # (1: the mean, given explicitly)
