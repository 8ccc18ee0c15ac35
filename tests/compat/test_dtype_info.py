"""difflab.finfo and difflab.iinfo answer PyTorch's questions about a dtype's numbers."""

import numpy as np
import pytest

import difflab as dl

FLOATS = {"float16": (16, 2.0**-10, 65504.0, 2.0**-14),
          "float32": (32, 2.0**-23, float(np.finfo(np.float32).max), 2.0**-126),
          "float64": (64, 2.0**-52, float(np.finfo(np.float64).max), 2.0**-1022)}


@pytest.mark.parametrize("name", FLOATS)
def test_finfo_gives_the_ieee_limits(name):
    bits, eps, largest, tiny = FLOATS[name]
    info = dl.finfo(getattr(dl, name))
    assert (info.bits, info.eps, info.max, info.min, info.tiny, info.smallest_normal) == (
        bits, eps, largest, -largest, tiny, tiny)
    assert info.dtype == name
    # eps is the gap from 1 to the next number of the dtype
    one = np.ones((), dtype=name)
    assert float(np.nextafter(one, np.inf, dtype=name) - one) == info.eps


def test_finfo_defaults_to_the_default_dtype_and_reads_complex_as_its_parts():
    assert dl.finfo().eps == dl.finfo(dl.float32).eps
    dl.set_default_dtype(dl.float64)
    try:
        assert dl.finfo().eps == 2.0**-52
    finally:
        dl.set_default_dtype(dl.float32)
    assert dl.finfo(dl.complex64).eps == dl.finfo(dl.float32).eps
    assert dl.finfo(dl.complex128).max == dl.finfo(dl.float64).max


def test_finfo_of_bfloat16_and_rms_norm_in_bfloat16():
    pytest.importorskip("ml_dtypes")
    info = dl.finfo(dl.bfloat16)
    assert (info.bits, info.eps) == (16, 2.0**-7)
    assert info.max == dl.finfo(dl.float32).max * (1 - 2.0**-8) / (1 - 2.0**-24)
    # rms_norm's default epsilon is the dtype's (np.finfo knows no bfloat16: it failed)
    y = dl.nn.functional.rms_norm(dl.full((2, 4), 3.0, dtype=dl.bfloat16), (4,))
    assert y.dtype == dl.bfloat16
    np.testing.assert_allclose(y.float().numpy(), 1.0, rtol=2.0**-7)


@pytest.mark.parametrize(("name", "low", "high"), [
    ("int8", -128, 127), ("uint8", 0, 255), ("int16", -2**15, 2**15 - 1),
    ("int32", -2**31, 2**31 - 1), ("int64", -2**63, 2**63 - 1)])
def test_iinfo_gives_the_range(name, low, high):
    info = dl.iinfo(getattr(dl, name))
    assert (info.min, info.max, info.bits, info.dtype) == (low, high, np.dtype(name).itemsize * 8,
                                                          name)


@pytest.mark.parametrize(("which", "dtype", "message"), [
    (dl.finfo, dl.int32, "finfo takes a floating dtype, got difflab.int32; use difflab.iinfo"),
    (dl.finfo, dl.bool_, "finfo takes a floating dtype"),
    (dl.iinfo, dl.float32, "iinfo takes an integer dtype, got difflab.float32; use difflab.finfo"),
    (dl.iinfo, dl.bool_, "iinfo takes an integer dtype"),
    (dl.iinfo, dl.complex64, "iinfo takes an integer dtype"),
])
def test_the_wrong_kind_of_dtype_is_a_clear_error(which, dtype, message):
    with pytest.raises(TypeError, match=message):
        which(dtype)


def test_a_program_reads_the_limits_as_pytorch_programs_do():
    x = dl.tensor([[3.0, 4.0], [0.0, 0.0]])
    unit = x / (x.norm(dim=1, keepdim=True) + dl.finfo(x.dtype).eps)
    np.testing.assert_allclose(unit.numpy(), [[0.6, 0.8], [0.0, 0.0]], rtol=1e-6)
    scores = dl.tensor([1.0, 2.0, 3.0]).masked_fill(dl.tensor([False, True, False]),
                                                    dl.finfo(dl.float32).min)
    np.testing.assert_allclose(dl.softmax(scores, 0).numpy()[1], 0.0)
    assert "eps=1.19209e-07" in repr(dl.finfo(dl.float32))
    assert repr(dl.iinfo(dl.int8)) == "iinfo(min=-128, max=127, dtype=int8)"
