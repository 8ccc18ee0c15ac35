"""Type promotion against PyTorch's published rules (PyTorch itself is not needed).

The table below is ``torch.promote_types`` for the dtypes difflab has, as
PyTorch's documentation and its source (c10's promotion lookup table) give
it; the three-tier rule for 0-d tensors and Python numbers is the one of
PyTorch's "Type promotion" documentation.  Hypothesis draws dtype pairs,
shapes (dimensioned or 0-d) and Python numbers, and checks both what
``difflab.result_type`` says and what the operators really return.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import difflab as dl

CODES = {"u1": "uint8", "i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64",
         "f2": "float16", "f4": "float32", "f8": "float64", "c4": "complex64",
         "c8": "complex128", "b1": "bool"}
ORDER = ["u1", "i1", "i2", "i4", "i8", "f2", "f4", "f8", "c4", "c8", "b1"]
# torch.promote_types(row, column)
TABLE = """
      u1  i1  i2  i4  i8  f2  f4  f8  c4  c8  b1
u1    u1  i2  i2  i4  i8  f2  f4  f8  c4  c8  u1
i1    i2  i1  i2  i4  i8  f2  f4  f8  c4  c8  i1
i2    i2  i2  i2  i4  i8  f2  f4  f8  c4  c8  i2
i4    i4  i4  i4  i4  i8  f2  f4  f8  c4  c8  i4
i8    i8  i8  i8  i8  i8  f2  f4  f8  c4  c8  i8
f2    f2  f2  f2  f2  f2  f2  f4  f8  c4  c8  f2
f4    f4  f4  f4  f4  f4  f4  f4  f8  c4  c8  f4
f8    f8  f8  f8  f8  f8  f8  f8  f8  c8  c8  f8
c4    c4  c4  c4  c4  c4  c4  c4  c8  c4  c8  c4
c8    c8  c8  c8  c8  c8  c8  c8  c8  c8  c8  c8
b1    u1  i1  i2  i4  i8  f2  f4  f8  c4  c8  b1
"""
PROMOTE = {}
for line in TABLE.strip().splitlines()[1:]:
    row, *cells = line.split()
    for column, cell in zip(ORDER, cells):
        PROMOTE[CODES[row], CODES[column]] = CODES[cell]

CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
COMPLEX_OF = {"float16": "complex64", "float32": "complex64", "float64": "complex128"}


def category(name):
    return CATEGORY[np.dtype(name).kind]


def scalar_dtype(value):
    """PyTorch's dtype for a Python number in promotion (default dtype float32)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float32"
    return "complex64"


def expected(dimensioned, zero_dim, scalar):
    """The documented three-tier rule, written independently of difflab's code.

    Each tier promotes within itself; a weaker tier counts only if its category
    is higher, and then contributes its own promoted dtype, except that a
    complex operand meeting a floating one keeps the floating one's precision.
    """
    def join(higher, lower):
        if higher is None:
            return lower
        if lower is None or category(lower) <= category(higher):
            return higher
        if category(higher) == 2 and category(lower) == 3:
            return COMPLEX_OF[higher]
        if category(higher) == 0:
            return PROMOTE[higher, lower]
        return PROMOTE[higher, lower] if category(lower) == 2 else lower

    return join(dimensioned, join(zero_dim, scalar))


def test_the_table_is_symmetric_and_matches_promote_types():
    for (a, b), out in PROMOTE.items():
        assert PROMOTE[b, a] == out
        assert dl.promote_types(getattr(dl, a if a != "bool" else "bool_"),
                                np.dtype(b)) == np.dtype(out), (a, b)


def test_the_documented_examples():
    f32, i64 = dl.ones(3), dl.ones(3, dtype=dl.int64)
    assert (f32 + i64).dtype == dl.float32
    assert (f32 + 2.5).dtype == dl.float32
    assert (i64 + 2.5).dtype == dl.float32
    assert (i64 / i64).dtype == dl.float32
    assert (dl.ones(3, dtype=dl.int32) + 5).dtype == dl.int32
    assert (dl.ones(3, dtype=dl.int32) + dl.tensor(1)).dtype == dl.int32
    assert (dl.ones(3, dtype=dl.int32) + dl.tensor(1.5, dtype=dl.float64)).dtype == dl.float64
    assert (dl.ones(3, dtype=dl.bool) + dl.ones(3, dtype=dl.uint8)).dtype == dl.uint8
    assert dl.result_type(dl.tensor([1, 2], dtype=dl.int32), 1.0) == dl.float32
    assert dl.result_type(dl.tensor([1, 2], dtype=dl.uint8), dl.tensor(1)) == dl.uint8


dtypes = st.sampled_from(sorted({name for pair in PROMOTE for name in pair}))
python_numbers = st.one_of(st.booleans(), st.integers(0, 100),
                           st.floats(0.5, 4.0), st.complex_numbers(max_magnitude=4.0,
                                                                   allow_nan=False))


def make(name, zero_dim):
    return dl.tensor(np.ones(() if zero_dim else (2,), dtype=name))


@given(dtypes, dtypes, st.booleans(), st.booleans())
def test_tensor_pairs(a, b, a_zero_dim, b_zero_dim):
    x, y = make(a, a_zero_dim), make(b, b_zero_dim)
    tiers = {True: [], False: []}
    tiers[a_zero_dim].append(a)
    tiers[b_zero_dim].append(b)

    def tier(names):
        out = None
        for n in names:
            out = n if out is None else PROMOTE[out, n]
        return out

    want = expected(tier(tiers[False]), tier(tiers[True]), None)
    assert dl.result_type(x, y) == np.dtype(want)
    if "bool" not in (a, b) or a == b:  # (bool + bool is logical; - is refused for bool)
        assert (x * y).dtype == np.dtype(want)
    assert (x == y).dtype == dl.bool
    if category(want) < 3:
        floating = want if category(want) >= 2 else "float32"
        assert (x / y).dtype == np.dtype(floating)


@given(dtypes, python_numbers, st.booleans())
def test_tensor_with_python_number(name, number, zero_dim):
    if name == "float16" and isinstance(number, complex):
        return  # PyTorch gives complex32, which difflab does not have
    x = make(name, zero_dim)
    want = expected(None if zero_dim else name, name if zero_dim else None,
                    scalar_dtype(number))
    assert dl.result_type(x, number) == np.dtype(want)
    assert (x * number).dtype == np.dtype(want)
    assert (number * x).dtype == np.dtype(want)


@pytest.mark.parametrize("name", ["int32", "int64", "uint8", "bool"])
def test_floating_functions_of_integers_are_float32(name):
    x = dl.tensor(np.ones(3, dtype=name))
    assert x.exp().dtype == dl.float32
    assert dl.sqrt(x).dtype == dl.float32
    assert dl.log10(x).dtype == dl.float32
    if name != "bool":
        assert (-x).dtype == x.dtype
        assert x.abs().dtype == x.dtype


def test_integer_division_and_comparisons_as_pytorch():
    a = dl.tensor([-7, 7, 5])
    assert (a // 2).tolist() == [-4, 3, 2]  # floors, as Python and PyTorch do
    assert (a % 3).tolist() == [2, 1, 2]
    assert (a // 2).dtype == dl.int64
    assert (a // 2.0).dtype == dl.float32
    assert (7 // dl.tensor([2])).tolist() == [3]
    with pytest.raises(ZeroDivisionError, match="divisor is 0"):
        a // dl.tensor([1, 0, 1])
    assert (a / 2).dtype == dl.float32
    assert (a < 2.5).tolist() == [True, False, False]
    assert (dl.tensor([0.1]) == 0.1).item()  # compared in float32, as PyTorch does
    assert (dl.ones(2) == None) is False  # noqa: E711


def test_promotion_keeps_gradients_in_each_leafs_dtype():
    w = dl.ones(3, dtype=dl.float64, requires_grad=True)
    x = dl.ones(3, requires_grad=True)  # float32
    (w * x).sum().backward()
    assert w.grad.dtype == dl.float64 and x.grad.dtype == dl.float32


def test_where_cat_matmul_promote():
    f, i = dl.ones(2), dl.tensor([1, 2])
    assert dl.where(i > 1, f, i).dtype == dl.float32
    assert dl.cat([f, i]).dtype == dl.float32
    assert (dl.ones(2, 2) @ dl.ones(2, dtype=dl.int64)).dtype == dl.float32


def test_a_float32_training_step_stays_float32():
    model = dl.nn.Sequential(dl.nn.Linear(3, 4), dl.nn.ReLU(), dl.nn.Linear(4, 1))
    x, y = dl.randn(8, 3), dl.randint(0, 2, (8, 1))
    loss = ((model(x) - y) ** 2).mean() * 0.5 + 1e-3 * sum((p ** 2).sum()
                                                              for p in model.parameters())
    assert loss.dtype == dl.float32
    loss.backward()
    assert all(p.grad.dtype == dl.float32 for p in model.parameters())


def test_default_dtype_governs_python_floats():
    dl.set_default_dtype(dl.float64)
    try:
        assert (dl.tensor([1, 2]) * 0.5).dtype == dl.float64
        assert dl.tensor([1.5]).dtype == dl.float64
    finally:
        dl.set_default_dtype(dl.float32)
    with pytest.raises(TypeError, match="float32 or float64"):
        dl.set_default_dtype(dl.int64)


@pytest.mark.parametrize(("dtype", "low", "high", "want"), [
    ("int64", -1.5, 2.5, "float32"),     # an integer tensor with a float bound: default float
    ("int64", 0, 2, "int64"),            # integer bounds keep it integer
    ("int32", None, 2, "int32"),
    ("float64", 0.0, 1.0, "float64"),    # a Python float never widens a float tensor
    ("float32", 0.5, None, "float32"),
    ("bool", 0, 1, "int64"),
])
def test_clamp_follows_the_promotion_rule(dtype, low, high, want):
    x = dl.tensor(np.array([-3, 0, 1, 5]).astype(dtype))
    out = dl.clamp(x, low, high)
    assert out.dtype == getattr(dl, want)
    assert x.clamp(low, high).dtype == out.dtype and x.clip(low, high).dtype == out.dtype
    lo = -np.inf if low is None else low
    hi = np.inf if high is None else high
    np.testing.assert_array_equal(out.numpy(), np.clip(x.numpy().astype(want), lo, hi))


def test_clamp_of_an_integer_tensor_to_float_bounds_differentiates_in_float32():
    x = dl.tensor([1, 5, -3]).float().requires_grad_()
    y = dl.clamp(x, -1.5, 2.5)
    y.sum().backward()
    assert y.dtype == dl.float32 and x.grad.dtype == dl.float32
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="at least one of min and max"):
        dl.clamp(x)


@pytest.mark.parametrize(("a", "b", "want"), [
    ("float32", "float64", "float64"),
    ("int64", "float32", "float32"),
    ("int32", "int64", "int64"),
    ("float32", "float32", "float32"),
])
def test_einsum_promotes_mixed_dtypes(a, b, want):
    x = dl.tensor(np.array([[1, 2], [3, 4]]).astype(a))
    y = dl.tensor(np.array([[1, 0], [2, 1]]).astype(b))
    out = dl.einsum("ij,jk->ik", x, y)
    assert out.dtype == getattr(dl, want)
    np.testing.assert_allclose(out.numpy(), x.numpy().astype(want) @ y.numpy().astype(want))


def test_einsum_of_mixed_dtypes_gives_each_leaf_its_own_gradient_dtype():
    x = dl.tensor([1.0, 2.0], requires_grad=True)                     # float32
    y = dl.tensor([3.0, 4.0], dtype=dl.float64, requires_grad=True)
    out = dl.einsum("i,i->", x, y)
    out.backward()
    assert out.dtype == dl.float64
    assert x.grad.dtype == dl.float32 and y.grad.dtype == dl.float64
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 4.0])
