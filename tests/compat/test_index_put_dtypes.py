"""``index_put`` refuses values of another dtype, as PyTorch does; ``x[i] = v`` casts.

PyTorch 2.13: ``x.index_put((i,), v)`` / ``x.index_put_(...)`` / ``torch.index_put`` raise
"Index put requires the source and destination dtypes match" for a ``values`` tensor
of another dtype (a 0-d one too, with ``accumulate=True`` too).  difflab used to cast
it into the tensor's dtype without a word (float64 values rounded into float32).  The
assignment ``x[1:] = v`` casts in PyTorch and keeps casting here.
"""

import numpy as np
import pytest

import difflab as dl
from difflab.autograd import gradcheck

I = (dl.tensor([0, 2]),)

REFUSED = {
    "dl.index_put": lambda x, v: dl.index_put(x, I, v),
    "dl.index_put accumulate": lambda x, v: dl.index_put(x, I, v, accumulate=True),
    "dl.index_put slice": lambda x, v: dl.index_put(x, (slice(0, 2),), v),
    "Tensor.index_put": lambda x, v: x.index_put(I, v),
    "Tensor.index_put_": lambda x, v: x.index_put_(I, v),
    "Tensor.index_put_ accumulate": lambda x, v: x.index_put_(I, v, accumulate=True),
}
VALUES = {
    "float32 1-d": dl.ones(2, dtype=dl.float32),
    "float32 0-d": dl.tensor(1.0, dtype=dl.float32),
    "int64 0-d": dl.tensor(1),
}


@pytest.mark.parametrize("value", VALUES.values(), ids=VALUES.keys())
@pytest.mark.parametrize("call", REFUSED.values(), ids=REFUSED.keys())
def test_a_values_tensor_of_another_dtype_is_refused(call, value):
    x = dl.zeros(3, dtype=dl.float64)
    with pytest.raises(RuntimeError, match=r"index_put\(\): expected values's dtype "
                       r"\(difflab\.\w+\) to equal input's \(difflab\.float64\); "
                       r"convert with values\.to\(input\.dtype\)"):
        call(x, value)
    assert x.tolist() == [0.0, 0.0, 0.0]  # (the in-place form wrote nothing)


def test_float64_values_are_not_rounded_into_a_float32_tensor():
    with pytest.raises(RuntimeError, match="expected values's dtype"):
        dl.index_put(dl.zeros(3), I, dl.tensor([0.1, 0.2], dtype=dl.float64))


def test_values_of_the_same_dtype_and_python_numbers_are_written():
    x = dl.zeros(3, dtype=dl.float64)
    assert x.index_put(I, dl.tensor(2.5, dtype=dl.float64)).tolist() == [2.5, 0.0, 2.5]
    out = dl.index_put(x, I, 2.5)  # (a number takes the input's dtype)
    assert out.dtype == dl.float64 and out.tolist() == [2.5, 0.0, 2.5]
    n = dl.zeros(3, dtype=dl.int64)
    assert n.index_put_(I, 7, accumulate=True).tolist() == [7, 0, 7]
    assert n.dtype == dl.int64


F = float(np.float32(0.1))  # (0.1 rounded to float32, then written as float64)
SETITEM = {"tensor": (dl.tensor([0, 2]), [F, 0.0, F]), "slice": (slice(0, 2), [F, F, 0.0]),
           "int": (1, [0.0, F, 0.0]), "mask": (dl.tensor([True, False, True]), [F, 0.0, F])}


@pytest.mark.parametrize("requires_grad", [False, True], ids=["plain", "recorded"])
@pytest.mark.parametrize("index, want", SETITEM.values(), ids=SETITEM.keys())
def test_assignment_still_casts_the_value_into_the_tensors_dtype(index, want, requires_grad):
    w = dl.zeros(3, dtype=dl.float64, requires_grad=requires_grad)
    x = w * 1.0
    x[index] = dl.tensor(0.1, dtype=dl.float32)
    assert x.dtype == dl.float64 and x.tolist() == want


def test_the_gradient_through_index_put_is_unchanged():
    x = dl.tensor([1.0, 2.0, 3.0], dtype=dl.float64, requires_grad=True)
    v = dl.tensor([5.0, 7.0], dtype=dl.float64, requires_grad=True)
    out = dl.index_put(x, I, v)
    (out * dl.tensor([1.0, 2.0, 3.0], dtype=dl.float64)).sum().backward()
    assert x.grad.tolist() == [0.0, 2.0, 0.0] and v.grad.tolist() == [1.0, 3.0]
    assert gradcheck(lambda a, b: dl.index_put(a, (dl.tensor([2, 2, 0]),), b, accumulate=True),
                     (dl.tensor([1.0, 2.0, 3.0], dtype=dl.float64, requires_grad=True),
                      dl.tensor([0.5, -1.0, 2.0], dtype=dl.float64, requires_grad=True)))


def test_converting_the_values_as_the_error_says_keeps_their_gradient():
    x = dl.zeros(3, dtype=dl.float64)
    v = dl.tensor([5.0, 7.0], requires_grad=True)  # (float32)
    x.index_put(I, v.to(x.dtype)).sum().backward()
    assert v.grad.dtype == dl.float32 and v.grad.tolist() == [1.0, 1.0]
