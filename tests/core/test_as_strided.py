"""dl.as_strided / Tensor.as_strided: a view of the storage in element strides, pinned to
PyTorch 2.13's values, gradients (as_strided_backward: overlapping windows add up, what lies
outside the input gets nothing), writes through it, and refusals."""

from __future__ import annotations

import numpy as np
import pytest

import difflab as dl
from difflab import jit
from difflab.autograd import gradcheck


def test_windows_of_a_vector_and_their_gradient_add_up_as_pytorch():
    x = dl.arange(5.0, requires_grad=True)
    windows = dl.as_strided(x, (3, 3), (1, 1))
    assert windows.tolist() == [[0.0, 1.0, 2.0], [1.0, 2.0, 3.0], [2.0, 3.0, 4.0]]
    (windows * dl.arange(9.0).reshape(3, 3)).sum().backward()
    assert x.grad.tolist() == [0.0, 4.0, 12.0, 12.0, 8.0]  # (PyTorch 2.13)


def test_the_offset_counts_in_the_storage_of_a_view_as_pytorch():
    x = dl.arange(6.0)
    y = x[1:]
    assert dl.as_strided(y, (2,), (1,)).tolist() == [1.0, 2.0]  # (y's own offset, 1)
    assert dl.as_strided(y, (2,), (1,), 0).tolist() == [0.0, 1.0]  # (the storage's start)
    assert y.as_strided((2, 2), (1, 1)).tolist() == [[1.0, 2.0], [2.0, 3.0]]
    assert x.as_strided((3,), (2,), 1).tolist() == [1.0, 3.0, 5.0]
    t = dl.arange(4.0).reshape(2, 2).t()
    assert t.as_strided((2,), (1,)).tolist() == [0.0, 1.0]  # (storage order, not t's)
    assert dl.as_strided(dl.tensor(3.0), (), ()).item() == 3.0
    assert x.as_strided((0,), (5,), 100).shape == (0,)  # (empty: reads nothing)


def test_what_lies_outside_the_input_gets_no_gradient_as_pytorch():
    x = dl.arange(6.0, requires_grad=True)
    v = (x * 1)[2:]
    w = v.as_strided((2,), (1,), 0)  # (storage elements 0 and 1: not v's)
    assert w.tolist() == [0.0, 1.0]
    w.sum().backward()
    assert x.grad.tolist() == [0.0] * 6  # (PyTorch 2.13)


def test_a_write_through_the_view_reaches_the_base_and_its_gradient():
    b = dl.zeros(5)
    b.as_strided((2,), (2,), 1).add_(1)
    assert b.tolist() == [0.0, 1.0, 0.0, 1.0, 0.0]
    v = b.as_strided((2, 2), (1, 1))
    v[0, 1] = 7.0
    assert b.tolist() == [0.0, 7.0, 0.0, 1.0, 0.0]
    assert v.tolist() == [[0.0, 7.0], [7.0, 0.0]]  # (the two entries are one element)
    a = dl.zeros(5, requires_grad=True)
    c = a * 1
    c.as_strided((2,), (2,), 1).mul_(3)
    c.sum().backward()
    assert a.grad.tolist() == [1.0, 3.0, 1.0, 3.0, 1.0]  # (PyTorch's CopySlices)


def test_gradcheck_and_every_method():
    x = dl.tensor([0.5, -1.0, 2.0, 1.5], dtype=dl.float64, requires_grad=True)
    assert gradcheck(lambda t: dl.as_strided(t, (3, 2), (1, 1)) ** 2, (x,))
    assert gradcheck(lambda t: dl.as_strided(t, (2, 2), (0, 2), 1), (x,))  # (stride 0)
    weights = dl.arange(6.0, dtype=dl.float64).reshape(3, 2)

    def f(v):
        return (dl.as_strided(v, (3, 2), (1, 1)) ** 2 * weights).sum()

    x0 = np.array([0.5, -1.0, 2.0, 1.5])
    want = 2 * x0 * np.array([0.0, 1.0 + 2.0, 3.0 + 4.0, 5.0])
    for method in ("forward", "reverse", "symbolic", "numeric"):
        np.testing.assert_allclose(dl.grad(f, method=method)(x0), want, rtol=1e-6)


def test_a_traced_view_replays_on_new_values_also_outside_the_input():
    def f(t):
        return t[1:].as_strided((2, 2), (2, 1), 0) * 2

    example = dl.arange(6.0)
    traced = jit.trace(f, example)
    new = dl.tensor([9.0, 8.0, 7.0, 6.0, 5.0, 4.0])
    assert traced(new).tolist() == f(new).tolist() == [[18.0, 16.0], [14.0, 12.0]]


@pytest.mark.parametrize(("args", "match"), [
    (((7,), (1,), 0), "past its end"),
    (((2,), (1,), 5), "past its end"),
    (((2,), (-1,), 2), "negative strides"),
    (((2, 2), (1,)), "mismatch in length"),
    (((2,), (1,), -1), "past its end|non-negative"),
    (((2.5,), (1,)), "size"),
])
def test_what_cannot_be_viewed_is_refused_with_the_reason(args, match):
    with pytest.raises((RuntimeError, TypeError), match=match):
        dl.as_strided(dl.arange(6.0), *args)


def _overlapping_windows_of_a_view(lib):
    x = lib.arange(7.0).requires_grad_()
    w = (x * 1)[1:].as_strided((3, 3), (2, 1), 0)
    (w * lib.arange(9.0).reshape(3, 3)).sum().backward()
    return w.tolist(), x.grad.tolist()


#: PyTorch 2.13's values and gradient (element 0 is outside the view, yet read)
WINDOWS = ([[0.0, 1.0, 2.0], [2.0, 3.0, 4.0], [4.0, 5.0, 6.0]],
           [0.0, 1.0, 5.0, 4.0, 11.0, 7.0, 8.0])


def test_overlapping_windows_of_a_view_as_pytorch():
    assert _overlapping_windows_of_a_view(dl) == WINDOWS


def test_against_pytorch():
    torch = pytest.importorskip("torch")
    assert _overlapping_windows_of_a_view(torch) == WINDOWS
