"""The CuPy stand-in refuses what CuPy refuses, so the GPU paths are tested without a GPU."""

import os
import subprocess
import sys

import numpy as np
import pytest

import difflab as dl
from difflab import backend
from difflab.testing import fake_cupy as cp

IMPLICIT = "Implicit conversion to a NumPy array is not allowed"


@pytest.fixture
def on_stand_in():
    with cp.installed():
        yield


def test_implicit_conversion_to_numpy_is_refused():
    x = cp.asarray([1.0, 2.0])
    for convert in (np.asarray, np.array, lambda a: np.ones(2) + a.__array__(),
                    lambda a: np.testing.assert_allclose(a, [1.0, 2.0])):
        with pytest.raises(TypeError, match=IMPLICIT):
            convert(x)


@pytest.mark.parametrize("mix", [
    lambda x, a: x + a, lambda x, a: a * x, lambda x, a: x @ a, lambda x, a: np.add(x, a),
    lambda x, a: cp.maximum(x, a), lambda x, a: np.concatenate([x, a]),
    lambda x, a: cp.where(x > 0, x, a), lambda x, a: cp.stack([x, a]),
], ids=["add", "rmul", "matmul", "np.add", "cp.maximum", "np.concatenate", "cp.where", "cp.stack"])
def test_mixing_a_device_array_with_a_numpy_array_is_refused(mix):
    with pytest.raises(TypeError, match="numpy.ndarray"):
        mix(cp.asarray([1.0, 2.0]), np.array([3.0, 4.0]))


def test_numbers_mix_freely_and_lists_do_not():
    x = cp.asarray([1.0, 2.0])
    assert (x + 1).tolist() == [2.0, 3.0] and (np.float32(2) * x).tolist() == [2.0, 4.0]
    assert (x < np.array(2.0)).tolist() == [True, False]  # a 0-d host array in a comparison
    with pytest.raises(TypeError, match="list"):
        cp.maximum(x, [0.0, 3.0])
    with pytest.raises(TypeError):
        x + [1.0, 2.0]


def test_only_explicit_transfers_cross_and_results_stay_on_the_device():
    host = np.array([[1.0, 2.0], [3.0, 4.0]])
    x = cp.asarray(host)
    assert isinstance(x, cp.ndarray) and not isinstance(x, np.ndarray)
    assert isinstance(x.get(), np.ndarray) and isinstance(cp.asnumpy(x), np.ndarray)
    np.testing.assert_array_equal(x.get(), host)
    total, first = x.sum(), x[0, 0]  # 0-d device arrays, as CuPy gives, not NumPy scalars
    assert isinstance(total, cp.ndarray) and total.shape == () and float(total) == 10.0
    assert isinstance(first, cp.ndarray) and first.item() == 1.0
    assert isinstance(np.sin(x), cp.ndarray)  # NumPy's functions dispatch to the device
    x[np.array([0, 1]), 0] = np.array([5.0, 6.0])  # index and values of an advanced assignment
    assert x.get()[:, 0].tolist() == [5.0, 6.0]
    with pytest.raises(ValueError, match="non-scalar numpy.ndarray"):
        x[0] = np.array([7.0, 8.0])


def test_dtypes_cupy_lacks_and_scatter_add_of_int64_are_refused():
    with pytest.raises(ValueError, match="Unsupported dtype object"):
        cp.asarray([1.0]).astype(object)
    out = cp.zeros(3, dtype=np.float32)
    cp.cupyx.scatter_add(out, cp.asarray([0, 0, 2]), cp.ones(3, dtype=np.float32))
    assert out.tolist() == [2.0, 0.0, 1.0]
    with pytest.raises(TypeError, match="scatter_add only supports"):
        cp.cupyx.scatter_add(cp.zeros(3, dtype=np.int64), cp.asarray([0, 0]), 1)


def test_difflab_sees_a_cuda_device(on_stand_in):
    assert dl.cuda.is_available() and dl.cuda.device_count() == 1
    assert "stand-in" in dl.cuda.get_device_name(0)
    x = dl.ones(3).cuda()
    assert x.is_cuda and x.device == "cuda:0" and str(x.device) == "cuda:0"
    assert isinstance(x.array, cp.ndarray) and backend.array_module(x.array).ndarray is cp.ndarray
    model = dl.nn.Linear(3, 2).to("cuda")
    assert all(p.device == "cuda:0" for p in model.parameters())
    assert model(x).cpu().shape == (2,)
    with pytest.raises(RuntimeError, match="does not exist"):
        dl.device("cuda:1")
    with pytest.raises(TypeError, match="can't convert a CUDA tensor to numpy"):
        x.numpy()


def test_the_stand_in_is_put_back():
    before = backend._cupy
    with cp.installed():
        assert backend._cupy is cp
    assert backend._cupy is before


def leaky_double(t):
    """A planted bug: np.asarray works on the CPU and silently assumes NumPy."""
    return dl.tensor(np.asarray(t.detach().array) * 2, device=t.device)


class LeakyBackward(dl.autograd.Function):
    """Another: a backward rule that builds its gradient with NumPy."""

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad_output):
        return dl.tensor(np.full(grad_output.shape, 2.0) * np.asarray(grad_output.array))


def test_a_planted_implicit_conversion_passes_on_the_cpu_and_fails_on_the_stand_in(on_stand_in):
    x = dl.tensor([1.0, 2.0], requires_grad=True)
    assert leaky_double(x).tolist() == [2.0, 4.0]
    LeakyBackward.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    y = dl.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    with pytest.raises(TypeError, match=IMPLICIT):
        leaky_double(y)
    with pytest.raises(TypeError, match=IMPLICIT):
        LeakyBackward.apply(y).sum().backward()


def test_the_environment_variable_switches_it_on():
    code = ("import difflab as dl; x = dl.ones(2).cuda(); m = dl.nn.Linear(2, 1).to('cuda'); "
            "print(dl.device('cuda'), type(x.array).__module__, m.weight.device)")
    env = dict(os.environ, DIFFLAB_FAKE_CUDA="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["cuda:0", "difflab.testing.fake_cupy", "cuda:0"]


def test_flags_tell_the_layout_only_and_where_wants_a_device_condition():
    # Both were found by the first run on a real GPU: code read x.flags.writeable,
    # and 2 ** x's derivative called where() with a Python bool.
    x = cp.arange(6.0).reshape(2, 3)
    assert x.flags.c_contiguous and not x.T.flags.c_contiguous and x.flags["F_CONTIGUOUS"] is False
    with pytest.raises(AttributeError):
        x.flags.writeable  # noqa: B018
    with pytest.raises(AttributeError, match="'bool' object has no attribute 'astype'"):
        cp.where(True, x, 1.0)
    assert cp.where(x > 2, x, 0.0).tolist() == [[0.0, 0.0, 0.0], [3.0, 4.0, 5.0]]


def test_the_shortcuts_write_only_into_arrays_without_zero_strides():
    from difflab.fastpath import may_write_into

    assert may_write_into(np.zeros(3)) and not may_write_into(np.broadcast_to(1.0, (3,)))
    assert not may_write_into(np.float64(1.0)) and not may_write_into(1.0)
    assert may_write_into(cp.zeros(3)) and may_write_into(cp.zeros((3, 2)).T)
    assert not may_write_into(cp.broadcast_to(cp.asarray(1.0), (3,)))  # one write, three places


def test_an_integer_index_out_of_range_wraps_around_as_in_cupy():
    """CuPy's documented difference: NumPy raises, CuPy wraps (mod the axis's size)."""
    x = cp.asarray([0.0, 1.0, 2.0])
    assert x[np.array([1, 3])].get().tolist() == [1.0, 0.0]
    assert x[cp.asarray([-4, 2])].get().tolist() == [2.0, 2.0]
    m = cp.asarray(np.arange(6.0).reshape(2, 3))
    assert m[:, np.array([4])].get().tolist() == [[1.0], [4.0]]
    x[np.array([5])] = 9.0
    assert x.get().tolist() == [0.0, 1.0, 9.0]
    cp.cupyx.scatter_add(x, np.array([3, 3]), cp.asarray([1.0, 1.0]))
    assert x.get().tolist() == [2.0, 1.0, 9.0]
    with pytest.raises(IndexError):  # (NumPy itself)
        np.arange(3.0)[np.array([3])]
