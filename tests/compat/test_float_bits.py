"""PyTorch's functions of a float's bits and steps, pinned to PyTorch 2.13's numbers:
``nextafter``, ``copysign``'s gradients, ``signbit`` of nan and -0.0, ``frac``'s refusal of
integers, ``sub``'s ``alpha``; and ``Tensor.is_inference``."""

from __future__ import annotations

import numpy as np
import pytest

import difflab as dl
from difflab.autograd import gradcheck

NAN, INF = float("nan"), float("inf")
TINY32 = 1.401298464324817e-45  # the smallest float32 subnormal


# ------------------------------------------------------------------ nextafter


def test_nextafter_steps_one_float32_unit_towards_the_other_as_pytorch():
    a = dl.tensor([1.0, 0.0, -0.0, 2.0, INF, NAN, 3.0, INF])
    b = dl.tensor([2.0, 1.0, -1.0, 0.0, 0.0, 1.0, 3.0, INF])
    got = dl.nextafter(a, b)
    assert got.dtype == dl.float32
    # (PyTorch 2.13: torch.nextafter on these float32 tensors)
    want = [1.0000001192092896, TINY32, -TINY32, 1.9999998807907104, 3.4028234663852886e+38,
            NAN, 3.0, INF]
    np.testing.assert_array_equal(got.numpy(), np.array(want, dtype=np.float32))
    assert a.nextafter(b).tolist()[:5] == want[:5]


def test_nextafter_of_equal_operands_is_the_other_with_its_sign():
    got = dl.nextafter(dl.tensor([-0.0, 0.0]), dl.tensor([0.0, -0.0]))
    assert got.tolist() == [0.0, -0.0]
    assert dl.signbit(got).tolist() == [False, True]  # (PyTorch: b itself)


def test_nextafter_in_float64_and_mixed_dtypes_promote():
    one = dl.tensor([1.0], dtype=dl.float64)
    assert dl.nextafter(one, dl.tensor([2.0])).tolist() == [1.0000000000000002]
    assert dl.nextafter(dl.tensor([1.0]), dl.tensor([2.0], dtype=dl.float64)).dtype == \
        dl.float64
    assert dl.nextafter(dl.tensor([0.0], dtype=dl.float64), one).tolist() == [5e-324]


def test_nextafter_in_place_writes_the_steps():
    x = dl.tensor([1.0, 2.0])
    assert x.nextafter_(dl.tensor([2.0, 0.0])) is x
    assert x.tolist() == [1.0000001192092896, 1.9999998807907104]


def test_nextafter_gradient_is_pytorchs_one_where_the_operands_differ_zero_to_other():
    a = dl.tensor([1.0, 2.0, 3.0, -0.0], requires_grad=True)
    b = dl.tensor([2.0, 2.0, 0.0, 0.0], requires_grad=True)
    y = dl.nextafter(a, b)
    assert y.requires_grad  # (PyTorch: NextafterBackward0)
    (y * dl.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    # PyTorch 2.13: self: where(self != other, grad, 0); other: zeros_like(other)
    assert a.grad.tolist() == [1.0, 0.0, 3.0, 0.0]
    assert b.grad.tolist() == [0.0, 0.0, 0.0, 0.0]


def test_nextafter_tangent_and_every_method_agree():
    a, b = dl.tensor([1.0, 2.0]), dl.tensor([3.0, 2.0])
    _, tangent = dl.func.jvp(lambda x: dl.nextafter(x, b), (a,), (dl.tensor([3.0, 5.0]),))
    assert tangent.tolist() == [3.0, 0.0]
    x0 = np.array([0.7, 1.3])
    for method in ("forward", "reverse", "symbolic"):
        g = dl.grad(lambda v: dl.nextafter(v[0], v[1]) * v[1], method=method)(x0)
        np.testing.assert_allclose(np.asarray(g, dtype=float), [1.3, 0.7], rtol=1e-12)


def test_nextafter_gradcheck_away_from_ties():
    a = dl.tensor([0.5, 1.5, -2.0], dtype=dl.float64, requires_grad=True)
    b = dl.tensor([2.0, -1.0, 3.0], dtype=dl.float64, requires_grad=True)
    assert gradcheck(lambda x, y: dl.nextafter(x, y) * y, (a, b))


@pytest.mark.parametrize("operands", [
    (dl.tensor([1, 2]), dl.tensor([2, 3])),
    (dl.tensor([True]), dl.tensor([False])),
    (dl.tensor([1 + 1j]), dl.tensor([2 + 0j])),
], ids=["int64", "bool", "complex"])
def test_nextafter_refuses_what_has_no_next_float_as_pytorch(operands):
    with pytest.raises(NotImplementedError, match=r"\.float\(\)"):
        dl.nextafter(*operands)


def test_nextafter_against_pytorch():
    torch = pytest.importorskip("torch")
    a = np.array([1.0, 0.0, -0.0, 2.0, np.inf, 3.0, -1e-30], dtype=np.float32)
    b = np.array([2.0, 1.0, -1.0, 0.0, 0.0, 3.0, 1.0], dtype=np.float32)
    want = torch.nextafter(torch.tensor(a), torch.tensor(b)).numpy()
    np.testing.assert_array_equal(dl.nextafter(dl.tensor(a), dl.tensor(b)).numpy(), want)


# ------------------------------------------------------------------ is_inference


def test_is_inference_marks_the_tensors_made_inside_inference_mode_as_pytorch():
    x = dl.ones(3)
    assert not x.is_inference()
    with dl.inference_mode():
        made, result = dl.ones(2), x * 2
        x.add_(1)  # (a write into an ordinary tensor keeps it ordinary)
        view_of_ordinary = x[1:]
        with dl.inference_mode(False):
            switched_off = x * 2
    assert made.is_inference() and result.is_inference()
    assert not x.is_inference() and not view_of_ordinary.is_inference()
    assert not switched_off.is_inference()
    # (PyTorch 2.13: views and detach of an inference tensor are inference tensors; a clone
    # or a result computed outside the block is an ordinary tensor)
    assert result[1:].is_inference() and result.detach().is_inference()
    assert not result.clone().is_inference() and not (result * 1).is_inference()


def test_no_grad_makes_no_inference_tensors():
    with dl.no_grad():
        y = dl.ones(2) * 2
    assert not y.is_inference()


def test_is_inference_against_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (torch, dl):
        x = lib.ones(3)
        with lib.inference_mode():
            y = x * 2
            v = x[1:]
        got = [x.is_inference(), y.is_inference(), v.is_inference(), y[1:].is_inference(),
               y.clone().is_inference()]
        assert got == [False, True, False, True, False], lib


# ------------------------------------------------------------------ copysign and signbit


def test_copysign_gradients_are_pytorchs_zeros_to_other_and_z_over_a_to_input():
    a = dl.tensor([INF, NAN, 0.0, -0.0, 2.0, -3.0, 1.0], requires_grad=True)
    b = dl.tensor([-1.0, -1.0, -1.0, 1.0, NAN, -NAN, -0.0], requires_grad=True)
    y = dl.copysign(a, b)
    np.testing.assert_array_equal(y.detach().numpy(), [-INF, NAN, -0.0, 0.0, 2.0, -3.0, -1.0])
    assert dl.signbit(y).tolist() == [True, True, True, False, False, True, True]
    y.sum().backward()
    # PyTorch 2.13: self: z / a (0 where a == 0; nan at inf and nan), other: zeros_like
    np.testing.assert_array_equal(a.grad.numpy(), [NAN, NAN, 0.0, 0.0, 1.0, 1.0, -1.0])
    assert b.grad.tolist() == [0.0] * 7


def test_copysign_with_a_number_and_its_tangent():
    a = dl.tensor([2.0, -3.0], requires_grad=True)
    dl.copysign(a, -1.0).sum().backward()
    assert a.grad.tolist() == [-1.0, 1.0]
    _, tangent = dl.func.jvp(lambda x, y: dl.copysign(x, y),
                             (dl.tensor([2.0, -3.0, 0.0]), dl.tensor([-1.0, -1.0, -1.0])),
                             (dl.tensor([1.0, 1.0, 1.0]), dl.tensor([5.0, 5.0, 5.0])))
    assert tangent.tolist() == [-1.0, 1.0, 0.0]  # (PyTorch's forward AD)


def test_copysign_gradcheck_and_every_method():
    a = dl.tensor([0.5, -1.5, 2.0], dtype=dl.float64, requires_grad=True)
    b = dl.tensor([-2.0, -1.0, 3.0], dtype=dl.float64, requires_grad=True)
    assert gradcheck(lambda x, y: dl.copysign(x, y) * y, (a, b))
    x0 = np.array([0.7, -1.3])
    for method in ("forward", "reverse", "symbolic", "numeric"):
        g = dl.grad(lambda v: dl.copysign(v[0] * v[1], v[1]) * v[0], method=method)(x0)
        # f = -|v0 v1| v0 for v1 < 0: ∂/∂v0 = -2 v0 |v1|, ∂/∂v1 = -v0² sign(v1) = v0²
        np.testing.assert_allclose(np.asarray(g, dtype=float), [-2 * 0.7 * 1.3, 0.49],
                                   rtol=1e-6)


def test_signbit_reads_the_bit_of_nan_zeros_and_infinities_as_pytorch():
    x = dl.tensor([NAN, -NAN, -0.0, 0.0, -INF, INF, -1e-45])
    # PyTorch 2.13: tensor([False, True, True, False, True, False, True])
    assert dl.signbit(x).tolist() == [False, True, True, False, True, False, True]
    assert x.signbit().dtype == dl.bool_
    assert dl.signbit(dl.tensor([-1, 0, 1])).tolist() == [True, False, False]
    assert dl.signbit(dl.tensor([True, False])).tolist() == [False, False]
    assert dl.copysign(dl.tensor([1.0]), -dl.tensor([NAN])).tolist() == [-1.0]


def test_signbit_refuses_complex_as_pytorch():
    with pytest.raises(NotImplementedError, match="z.real"):
        dl.signbit(dl.tensor([-1 + 0j]))


def test_copysign_and_signbit_against_pytorch():
    torch = pytest.importorskip("torch")
    a = np.array([np.inf, 0.0, -0.0, 2.0, -3.0, 1.0], dtype=np.float32)
    b = np.array([-1.0, -1.0, 1.0, np.nan, -np.nan, -0.0], dtype=np.float32)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    da, db = dl.tensor(a, requires_grad=True), dl.tensor(b, requires_grad=True)
    want, got = torch.copysign(ta, tb), dl.copysign(da, db)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    assert dl.signbit(got).tolist() == torch.signbit(want).tolist()
    want.sum().backward()
    got.sum().backward()
    np.testing.assert_array_equal(da.grad.numpy(), ta.grad.numpy())
    np.testing.assert_array_equal(db.grad.numpy(), tb.grad.numpy())


# ------------------------------------------------------------------ sub's alpha


@pytest.mark.parametrize("call", [
    lambda a, b: dl.sub(a, b, alpha=2), lambda a, b: a.sub(b, alpha=2),
    lambda a, b: dl.subtract(a, b, alpha=2), lambda a, b: a.subtract(b, alpha=2),
    lambda a, b: a.clone().sub_(b, alpha=2), lambda a, b: dl.sub(a, b, alpha=2, out=a * 0),
], ids=["dl.sub", "Tensor.sub", "dl.subtract", "Tensor.subtract", "sub_", "out"])
def test_sub_scales_other_by_alpha_as_pytorch(call):
    a, b = dl.tensor([1.0, 2.0]), dl.tensor([10.0, 20.0])
    assert call(a, b).tolist() == [-19.0, -38.0]  # (PyTorch 2.13)


def test_add_and_rsub_take_alpha_too_and_integers_stay_integers():
    a, b = dl.tensor([1.0, 2.0]), dl.tensor([10.0, 20.0])
    assert dl.add(a, b, alpha=2).tolist() == [21.0, 42.0]
    assert dl.rsub(a, b, alpha=2).tolist() == [8.0, 16.0]
    assert dl.sub(a, 3, alpha=2).tolist() == [-5.0, -4.0]
    ints = dl.sub(dl.tensor([1, 2]), dl.tensor([1, 1]), alpha=2)
    assert ints.tolist() == [-1, 0] and ints.dtype == dl.int64
    assert dl.add(dl.tensor([1, 2]), 2.5, alpha=2.0).tolist() == [6.0, 7.0]  # (a float other)
    # alpha = 0 still multiplies: 0 · inf is nan, as PyTorch's [nan, inf]
    got = dl.sub(dl.tensor([NAN, INF]), dl.tensor([INF, 1.0]), alpha=0)
    np.testing.assert_array_equal(got.numpy(), [NAN, INF])


@pytest.mark.parametrize("call", [
    lambda i: dl.sub(i, i, alpha=0.5), lambda i: i.sub(i, alpha=1.0),
    lambda i: dl.add(i, i, alpha=1.5), lambda i: i.clone().sub_(i, alpha=2.0),
    lambda i: dl.rsub(i, i, alpha=0.5), lambda i: dl.sub(i.float(), i.float(), alpha=True),
], ids=["dl.sub", "Tensor.sub", "dl.add", "sub_", "rsub", "bool-alpha"])
def test_a_float_alpha_with_integers_is_refused_as_pytorch(call):
    with pytest.raises(RuntimeError, match="alpha"):
        call(dl.tensor([1, 2]))


def test_sub_alpha_gradients_by_every_method():
    a = dl.tensor([1.0, 2.0], requires_grad=True)
    b = dl.tensor([10.0, 20.0], requires_grad=True)
    dl.sub(a, b, alpha=3).sum().backward()
    assert a.grad.tolist() == [1.0, 1.0] and b.grad.tolist() == [-3.0, -3.0]  # (PyTorch)
    x0 = np.array([0.7, -1.3])
    for method in ("forward", "reverse", "symbolic", "numeric"):
        g = dl.grad(lambda v: dl.sub(v[0] * v[0], v[1], alpha=3) * v[1], method=method)(x0)
        # f = (v0² - 3 v1) v1: ∂/∂v0 = 2 v0 v1, ∂/∂v1 = v0² - 6 v1
        np.testing.assert_allclose(np.asarray(g, dtype=float), [2 * 0.7 * -1.3, 0.49 + 7.8],
                                   rtol=1e-6)
    x = dl.tensor([0.5, -1.5], dtype=dl.float64, requires_grad=True)
    y = dl.tensor([2.0, 0.25], dtype=dl.float64, requires_grad=True)
    assert gradcheck(lambda p, q: dl.sub(p * q, q, alpha=-2.5), (x, y))


# ------------------------------------------------------------------ frac


@pytest.mark.parametrize("x", [dl.tensor([1, 2]), dl.tensor([True]), dl.tensor([1 + 1.5j])],
                         ids=["int64", "bool", "complex64"])
@pytest.mark.parametrize("call", [dl.frac, lambda t: t.frac(), lambda t: t.frac_()],
                         ids=["dl.frac", "Tensor.frac", "frac_"])
def test_frac_refuses_integers_bools_and_complex_as_pytorch(x, call):
    # (PyTorch 2.13: NotImplementedError "frac_cpu" not implemented for 'Long')
    with pytest.raises(NotImplementedError, match=r"\.float\(\)"):
        call(x)


def test_frac_of_floats_at_the_edges_as_pytorch():
    x = dl.tensor([INF, -INF, NAN, -0.0, -1.5, 2.0, -2.0, 1e30])
    got = dl.frac(x)
    np.testing.assert_array_equal(got.numpy(), [NAN, NAN, NAN, 0.0, -0.5, 0.0, 0.0, 0.0])
    assert not dl.signbit(got[3:]).tolist()[0]  # (frac(-0.0) is 0.0, as PyTorch's)
    v = dl.tensor([0.7, -1.2], dtype=dl.float64, requires_grad=True)
    assert gradcheck(lambda t: dl.frac(t * 3), (v,))
