"""``div``'s ``rounding_mode`` (None, "trunc", "floor") and the rounded divisions beside it
(``//``, ``floor_divide``, ``remainder``, ``fmod``), against PyTorch's values.

The expected numbers were computed with PyTorch 2.13 on the CPU (``torch.div(a, b,
rounding_mode=...)`` and friends) and written in here: PyTorch is not imported.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy

import difflab as dl
from difflab.autograd import gradcheck

INF, NAN = math.inf, math.nan
# Dividends and divisors with the edges: signs, -0.0, inf, nan, division by 0 and by inf.
A = [7.0, -7.0, 7.5, -7.5, -0.0, 0.0, INF, -INF, NAN, 1.0, -1.0, 0.0, 5.0, -5.0]
B = [2.0, 2.0, -2.0, -2.0, 3.0, -3.0, 2.0, 2.0, 1.0, 0.0, 0.0, 0.0, INF, INF]
# torch.div(torch.tensor(A), torch.tensor(B), rounding_mode=...).tolist()
PYTORCH = {
    None: [3.5, -3.5, -3.75, 3.75, -0.0, -0.0, INF, -INF, NAN, INF, -INF, NAN, 0.0, -0.0],
    "trunc": [3.0, -3.0, -3.0, 3.0, -0.0, -0.0, INF, -INF, NAN, INF, -INF, NAN, 0.0, -0.0],
    "floor": [3.0, -4.0, -4.0, 3.0, -0.0, -0.0, NAN, NAN, NAN, INF, -INF, NAN, 0.0, -1.0],
}


def _same(got, expected):
    """Equal values, nan where nan, and the sign of every zero (-0.0 is not 0.0)."""
    got = np.asarray(got, dtype=float)
    expected = np.asarray(expected, dtype=float)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    assert (np.signbit(got) == np.signbit(expected))[expected == 0].all(), (got, expected)


@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (NumPy's words on 1 / 0)
def test_float_division_by_each_mode_is_pytorchs(mode):
    a, b = dl.tensor(A), dl.tensor(B)
    for result in (dl.div(a, b, rounding_mode=mode), a.div(b, rounding_mode=mode),
                   dl.divide(a, b, rounding_mode=mode), a.divide(b, rounding_mode=mode)):
        assert result.dtype == dl.float32
        _same(result.tolist(), PYTORCH[mode])
    written = dl.tensor(A)
    assert written.div_(b, rounding_mode=mode) is written
    _same(written.tolist(), PYTORCH[mode])


def test_integer_division_keeps_integers_with_a_rounding_mode():
    a, b = dl.tensor([7, -7, 7, -7, 0, 6]), dl.tensor([2, 2, -2, -2, 3, -4])
    trunc, floor = a.div(b, rounding_mode="trunc"), a.div(b, rounding_mode="floor")
    assert trunc.tolist() == [3, -3, -3, 3, 0, -1]  # (C's integer /: towards zero)
    assert floor.tolist() == [3, -4, -4, 3, 0, -2]  # (Python's //)
    assert trunc.dtype == floor.dtype == dl.int64
    assert floor.tolist() == dl.floor_divide(a, b).tolist() == (a // b).tolist()
    assert a.div(b).dtype == dl.float32  # (true division: floats)
    # each integer dtype is kept; a float divisor makes the quotient float32, as in PyTorch
    for dtype in (dl.int8, dl.int16, dl.int32, dl.uint8):
        x = dl.tensor([7, 100], dtype=dtype)
        assert x.div(3, rounding_mode="trunc").dtype == dtype
        assert x.div(dl.tensor(3), rounding_mode="floor").dtype == dtype
        assert x.div(3.0, rounding_mode="floor").dtype == dl.float32
    assert dl.tensor([7, -7]).div(2.5, rounding_mode="floor").tolist() == [2.0, -3.0]
    mixed = dl.tensor([7, -7], dtype=dl.int8).div(dl.tensor([2, 2], dtype=dl.int32),
                                                  rounding_mode="trunc")
    assert mixed.dtype == dl.int32 and mixed.tolist() == [3, -3]
    # exact beyond float64's 2**53 (no round trip through floats)
    assert dl.tensor([2**62 + 1, -(2**62) - 1]).div(3, rounding_mode="trunc").tolist() == [
        1537228672809129301, -1537228672809129301]
    assert dl.tensor([7, -7], dtype=dl.uint8).div(2, rounding_mode="trunc").tolist() == [3, 124]


def test_numbers_arrays_and_dual_numbers_take_the_rounding_mode_too():
    assert dl.div(-7, 2, rounding_mode="trunc") == -3
    assert dl.div(-7, 2, rounding_mode="floor") == -4
    assert dl.div(-7.5, 2.0, rounding_mode="trunc") == -3.0
    assert dl.div(np.array([7.0, -7.0]), 2, rounding_mode="trunc").tolist() == [3.0, -3.0]
    assert dl.div(dl.tensor([7, -7]), dl.tensor(2), rounding_mode="floor").tolist() == [3, -4]
    assert dl.div(dl.Dual(7.5, 1.0), 2.0, rounding_mode="floor") == 3.0  # (no tangent)
    assert str(dl.div(sympy.Symbol("s"), 2, rounding_mode="floor")) == "floor(s/2)"


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (NumPy's words on 1.0 / 0)
def test_integer_division_by_zero_raises_pytorchs_runtime_error():
    a = dl.tensor([1, 2])
    for call in (lambda: a.div(dl.tensor([0, 1]), rounding_mode="trunc"),
                 lambda: dl.div(a, 0, rounding_mode="floor"),
                 lambda: a // 0, lambda: a % dl.tensor([1, 0]),
                 lambda: dl.tensor([1, 2]).div_(0, rounding_mode="trunc")):
        with pytest.raises(RuntimeError, match="divisor is 0") as error:
            call()
        assert isinstance(error.value, ZeroDivisionError)  # (Python's error too)
    # an empty result divides nothing: no error, as in PyTorch
    empty = dl.empty(0, dtype=dl.int64)
    assert empty.div(0, rounding_mode="trunc").shape == (0,)
    assert (empty // 0).dtype == dl.int64
    # floats give inf and nan, as without a rounding mode
    assert dl.tensor([1.0, -1.0]).div(0, rounding_mode="trunc").tolist() == [INF, -INF]


def test_an_unknown_rounding_mode_is_refused_with_the_modes():
    x = dl.tensor([7, -7])
    with pytest.raises(RuntimeError, match="one of None, 'trunc', or 'floor' but found 'round'"):
        x.div(2, rounding_mode="round")
    with pytest.raises(RuntimeError, match="found 'Floor'"):
        dl.div(x, 2, rounding_mode="Floor")
    with pytest.raises(TypeError, match="rounding_mode must be None, 'trunc' or 'floor'"):
        x.div_(2, rounding_mode=3)


def test_in_place_rounded_division_keeps_the_dtype_or_refuses():
    x = dl.tensor([7, -7])
    assert x.div_(2, rounding_mode="floor") is x and x.tolist() == [3, -4]
    assert x.dtype == dl.int64 and x._version[0] == 1
    y = dl.tensor([7, -7])
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        y.div_(2.5, rounding_mode="floor")  # (PyTorch: Float can't be cast to Long)
    assert y.tolist() == [7, -7]  # (untouched)
    with pytest.raises(RuntimeError, match="cannot write the result"):
        dl.tensor([7, -7]).div_(2)  # true division of integers: floats, refused


def test_a_rounded_quotient_has_derivative_zero():
    x = dl.tensor([1.5, -2.5], requires_grad=True)
    rounded = x.div(2, rounding_mode="floor")
    assert rounded.requires_grad  # (a step function, as floor: PyTorch's zero gradient)
    rounded.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]
    x.grad = None
    # inside an expression it contributes 0, as PyTorch's zero gradient does
    (x * x + x.div(0.5, rounding_mode="trunc")).sum().backward()
    assert x.grad.tolist() == [3.0, -5.0]  # (PyTorch 2.13: tensor([ 3., -5.]))
    # written in place into a tensor of a graph: the old values get no gradient
    x.grad = None
    y = x * 1.0
    y.div_(2, rounding_mode="trunc")
    assert y.tolist() == [0.0, -1.0]
    (y + x).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_gradcheck_through_a_rounded_quotient(mode):
    # f = a / b + a · round(a / b): ∂f/∂a = 1/b + round(a/b), ∂f/∂b = -a/b², the rounded
    # quotient a constant; at points away from its jumps, central differences agree
    a = dl.tensor([1.3, -2.5, 4.1], dtype=dl.float64, requires_grad=True)
    b = dl.tensor([0.7, 0.9, -1.1], dtype=dl.float64, requires_grad=True)
    assert gradcheck(lambda a, b: a / b + a * a.div(b, rounding_mode=mode), (a, b))
    # forward mode agrees: the rounded quotient carries a zero tangent
    slope = dl.derivative(lambda t: t / 0.7 + t * dl.div(t, 0.7, rounding_mode=mode))(1.3)
    rounded = math.trunc(1.3 / 0.7) if mode == "trunc" else math.floor(1.3 / 0.7)
    assert slope == pytest.approx(1 / 0.7 + rounded)


def test_a_traced_function_replays_the_rounding_mode():
    def f(a, b):
        return a.div(b, rounding_mode="trunc") + a.div(b, rounding_mode="floor")

    graph = dl.jit.trace(f, (dl.tensor([7.0, -7.0]), dl.tensor([2.0, 2.0])))
    assert graph(dl.tensor([9.0, -9.0]), dl.tensor([4.0, 4.0])).tolist() == [4.0, -5.0]


# torch.fmod / torch.remainder(torch.tensor(A), torch.tensor(B)).tolist()
FMOD = [1.0, -1.0, 1.5, -1.5, -0.0, 0.0, NAN, NAN, NAN, NAN, NAN, NAN, 5.0, -5.0]
REMAINDER = [1.0, 1.0, -0.5, -1.5, -0.0, 0.0, NAN, NAN, NAN, NAN, NAN, NAN, 5.0, INF]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (NumPy's words on x % 0.0)
def test_fmod_and_remainder_of_floats_are_pytorchs():
    a, b = dl.tensor(A), dl.tensor(B)
    _same(dl.fmod(a, b).tolist(), FMOD)  # (the zeros' signs too: the dividend's)
    _same(a.fmod(b).tolist(), FMOD)
    # remainder: the same values; a zero result takes the divisor's sign, as NumPy's
    # (PyTorch's takes the dividend's: -0.0 % 3 is -0.0 there, 0.0 here)
    for result in (dl.remainder(a, b), a.remainder(b), a % b):
        np.testing.assert_array_equal(result.tolist(), REMAINDER)
    # exact where a - b·q in floating point loses every digit (PyTorch 2.13's values)
    assert dl.fmod(dl.tensor([1e10]), 3.3).item() == pytest.approx(0.2961106300354004)
    assert dl.remainder(dl.tensor([-1e10]), 3.3).item() == pytest.approx(3.003889322280884)
    assert dl.fmod(dl.tensor([5.5]), INF).item() == 5.5  # (was nan: 5.5 - inf·0)


def test_fmod_and_remainder_of_integers_are_exact_and_keep_the_common_dtype():
    a, b = dl.tensor([7, -7, 7, -7]), dl.tensor([3, 3, -3, -3])
    assert dl.fmod(a, b).tolist() == [1, -1, 1, -1]
    assert dl.remainder(a, b).tolist() == [1, 2, -2, -1] == (a % b).tolist()
    assert dl.fmod(a, b).dtype == dl.remainder(a, b).dtype == dl.int64
    assert dl.fmod(a, 2.5).tolist() == [2.0, -2.0, 2.0, -2.0]
    assert dl.fmod(a, 2.5).dtype == dl.float32
    assert dl.fmod(dl.tensor([2**62 + 1]), 3).tolist() == [2]  # (was 0, through floats)
    assert dl.remainder(dl.tensor([-(2**62) - 1]), 3).tolist() == [1]
    mixed = dl.fmod(dl.tensor([5], dtype=dl.int8), dl.tensor([2], dtype=dl.int32))
    assert mixed.dtype == dl.int32  # (was int8: the input's dtype, not the common one)
    assert dl.remainder(7, dl.tensor([2, -2])).tolist() == [1, -1]
    with pytest.raises(RuntimeError, match="divisor is 0") as error:
        dl.fmod(dl.tensor([1, 2]), 0)  # (was -9223372036854775808, with NumPy's warning)
    assert isinstance(error.value, ZeroDivisionError)
    with pytest.raises(ZeroDivisionError):
        dl.remainder(dl.tensor([1]), dl.tensor([0]))
    assert dl.fmod(dl.empty(0, dtype=dl.int64), 0).shape == (0,)


def test_fmod_and_remainder_have_pytorchs_gradient():
    # PyTorch 2.13: ∂/∂a = 1, ∂/∂b = -trunc(a/b) (fmod) or -floor(a/b) (remainder)
    a = dl.tensor([5.5, -5.5, 7.0], requires_grad=True)
    b = dl.tensor([2.0, 2.0, -3.0], requires_grad=True)
    dl.remainder(a, b).sum().backward()
    assert a.grad.tolist() == [1.0, 1.0, 1.0] and b.grad.tolist() == [-2.0, 3.0, 3.0]
    a.grad = b.grad = None
    dl.fmod(a, b).sum().backward()
    assert a.grad.tolist() == [1.0, 1.0, 1.0] and b.grad.tolist() == [-2.0, 2.0, 2.0]
    x = dl.tensor([1.3, -2.5, 4.1], dtype=dl.float64, requires_grad=True)
    y = dl.tensor([0.7, 0.9, -1.1], dtype=dl.float64, requires_grad=True)
    assert gradcheck(lambda x, y: dl.fmod(x * x, y) + dl.remainder(x, y * y), (x, y))


@pytest.mark.parametrize("method", ["forward", "reverse", "symbolic", "numeric"])
def test_every_method_differentiates_the_remainders_alike(method):
    # d/dx [fmod(x², 0.7) + remainder(3.1, x)] = 2x - floor(3.1 / x): 0.6 at 1.3
    def f(x):
        return dl.fmod(x * x, 0.7) + dl.remainder(3.1, x)

    assert dl.derivative(f, method=method)(1.3) == pytest.approx(0.6, abs=1e-6)


def test_the_symbolic_remainders_print_and_differentiate():
    s, t = sympy.symbols("s t")
    assert str(dl.fmod(s, t)) == "fmod(s, t)"
    assert str(sympy.diff(dl.remainder(s, t), t)) == "(-s + remainder(s, t))/t"
    assert float(dl.remainder(sympy.Float(-7.0), 3)) == 2.0  # (numbers evaluate)


def test_the_in_place_and_method_forms_of_the_divisions():
    assert dl.tensor([7, -7]).floor_divide(2).tolist() == [3, -4]
    assert dl.tensor([7, -7]).true_divide(2).tolist() == [3.5, -3.5]
    x = dl.tensor([7, -7])
    assert x.floor_divide_(2) is x and x.tolist() == [3, -4] and x.dtype == dl.int64
    assert dl.tensor([7, -7]).remainder_(3).tolist() == [1, 2]
    assert dl.tensor([7.5, -7.5]).fmod_(2).tolist() == [1.5, -1.5]
    y = dl.tensor([7.0, -7.0])
    assert y.true_divide_(2) is y and y.tolist() == [3.5, -3.5]
    for call in (lambda: dl.tensor([7]).remainder_(2.5), lambda: dl.tensor([7]).fmod_(2.5),
                 lambda: dl.tensor([7]).floor_divide_(2.5)):
        # PyTorch 2.13: "result type Float can't be cast to the desired output type Long"
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
            call()
    with pytest.raises(ZeroDivisionError):
        dl.tensor([7]).remainder_(0)
    # a tensor of a graph: the gradient goes through the in-place remainder, as PyTorch's
    a = dl.tensor([5.5, -5.5], requires_grad=True)
    b = a * 1
    b.remainder_(2)
    (b * b).sum().backward()
    assert b.tolist() == [1.5, 0.5] and a.grad.tolist() == [3.0, 1.0]


@pytest.mark.parametrize("method", ["forward", "reverse", "numeric"])
def test_the_operators_differentiate_alike_in_every_mode(method):
    # x % 2 has slope 1 in x, 7 % x slope -floor(7 / x); x // 1 is a constant factor
    # (forward mode had neither % nor // on dual numbers: a TypeError)
    assert dl.derivative(lambda x: x % 2.0, method=method)(5.5) == pytest.approx(1.0)
    assert dl.derivative(lambda x: 7.0 % x, method=method)(5.5) == pytest.approx(-1.0)
    assert dl.derivative(lambda x: x * (x // 1.0), method=method)(5.5) == pytest.approx(5.0)
    assert dl.derivative(lambda x: x * (9.0 // x), method=method)(2.5) == pytest.approx(3.0)


# The edges, every pair: signed zeros, inf, nan, a subnormal, a huge value.
EDGES = [-0.0, 0.0, -4.0, 4.0, -3.5, 3.5, INF, -INF, NAN, 2.0, -2.0, 1e300, 5e-324]
PAIRS = [(a, b) for a in EDGES for b in EDGES]


def _bits_equal(actual, expected):
    """Equal values with equal signs (a zero's included), nan where nan."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    same = (actual == expected) & (np.signbit(actual) == np.signbit(expected))
    bad = ~(same | (np.isnan(actual) & np.isnan(expected)))
    assert not bad.any(), list(zip(np.broadcast_to(actual, bad.shape)[bad],
                                   np.broadcast_to(expected, bad.shape)[bad]))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (NumPy's words on x % 0.0)
@pytest.mark.parametrize("name", ["fmod", "remainder"])
@pytest.mark.parametrize("how", ["eager", "method", "compiled", "traced", "float32"])
def test_the_remainders_are_numpys_on_every_edge_with_the_zeros_sign(name, how):
    # np.fmod(-4.0, 2.0) is -0.0 (the dividend's sign), np.remainder(-4.0, 2.0) is 0.0
    a, b = (np.array(column) for column in zip(*PAIRS))
    dtype = dl.float32 if how == "float32" else dl.float64
    x, y = dl.tensor(a, dtype=dtype), dl.tensor(b, dtype=dtype)
    function = getattr(dl, name)
    if how == "method":
        result = x % y if name == "remainder" else x.fmod(y)
    elif how == "compiled":
        result = dl.compile(lambda x, y: function(x, y) * 1.0)(x, y)
    elif how == "traced":
        result = dl.jit.trace(lambda x, y: function(x, y) * 1.0, (x, y))(x, y)
    else:
        result = function(x, y)
    numpy_dtype = np.float32 if how == "float32" else np.float64
    _bits_equal(result.numpy(), getattr(np, name)(a.astype(numpy_dtype), b.astype(numpy_dtype)))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_the_operator_with_a_number_on_either_side_keeps_numpys_zero():
    _bits_equal((dl.tensor([-4.0, 4.0, -0.0]) % 2.0).numpy(), [0.0, 0.0, 0.0])
    _bits_equal((dl.tensor([-4.0, 4.0, -0.0]) % -2.0).numpy(), [-0.0, -0.0, -0.0])
    _bits_equal((-4.0 % dl.tensor([2.0, -2.0])).numpy(), [0.0, -0.0])
    _bits_equal(dl.fmod(dl.tensor([-4.0, 4.0]), -2.0).numpy(), [-0.0, 0.0])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name, quotient", [
    ("fmod", lambda a, b: np.trunc(a / b)), ("remainder", np.floor_divide)])
def test_the_remainders_gradient_on_every_edge(name, quotient):
    # PyTorch's -trunc(a/b), -floor(a/b) wherever the result is finite; where it is
    # not (b = 0, an infinite a, -4 % inf = inf) the gradient is nan (PyTorch's: ±inf, 1)
    a, b = (np.array(column) for column in zip(*PAIRS))
    x = dl.tensor(a, dtype=dl.float64, requires_grad=True)
    y = dl.tensor(b, dtype=dl.float64, requires_grad=True)
    z = getattr(dl, name)(x, y)
    z.sum().backward()
    finite = np.isfinite(z.detach().numpy())
    got, expected = y.grad.numpy(), -quotient(a, b)
    assert got[finite] == pytest.approx(expected[finite], rel=1e-12)
    assert np.isnan(got[~finite]).all()
    assert x.grad.tolist() == [1.0] * len(PAIRS)
