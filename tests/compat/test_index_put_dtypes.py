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


def test_values_of_the_same_dtype_are_written():
    x = dl.zeros(3, dtype=dl.float64)
    assert x.index_put(I, dl.tensor(2.5, dtype=dl.float64)).tolist() == [2.5, 0.0, 2.5]
    n = dl.zeros(3, dtype=dl.int64)
    assert n.index_put_(I, dl.tensor(7), accumulate=True).tolist() == [7, 0, 7]
    assert n.dtype == dl.int64


@pytest.mark.parametrize("value", [2.5, 7, [1.0, 2.0], True], ids=["float", "int", "list",
                                                                    "bool"])
@pytest.mark.parametrize("call", REFUSED.values(), ids=REFUSED.keys())
def test_values_that_are_no_tensor_are_refused_as_in_pytorch(call, value):
    # PyTorch 2.13: TypeError "index_put_(): argument 'values' (position 2) must be
    # Tensor, not float"; difflab used to take the number in input's dtype
    x = dl.zeros(3, dtype=dl.float64)
    with pytest.raises(TypeError, match=r"index_put_?\(\): argument 'values' must be a "
                       r"Tensor, not \w+; make one with difflab\.tensor"):
        call(x, value)
    assert x.tolist() == [0.0, 0.0, 0.0]


def test_the_in_place_error_names_the_in_place_method():
    with pytest.raises(TypeError, match=r"^index_put_\(\): argument 'values'"):
        dl.zeros(3).index_put_(I, 1.0)


def test_one_index_tensor_must_come_in_a_tuple_as_in_pytorch():
    # PyTorch 2.13: TypeError "index_put_(): argument 'indices' (position 1) must be tuple
    # of Tensors, not Tensor"; difflab read the tensor's rows as one index per dimension
    x = dl.zeros(2, 2)
    for call in (lambda: x.index_put_(dl.tensor([0, 1]), dl.tensor(1.0)),
                 lambda: dl.index_put(x, dl.tensor([0, 1]), dl.tensor(1.0))):
        with pytest.raises(TypeError, match=r"argument 'indices' must be a tuple of "
                           r"Tensors, not Tensor; write \(i,\)"):
            call()
    assert x.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert x.index_put_((dl.tensor([0, 1]),), dl.tensor(1.0)).tolist() == [[1.0, 1.0],
                                                                            [1.0, 1.0]]


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
