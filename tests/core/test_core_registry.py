"""The primitive registry: one place per primitive, read by every method.

The central test adds a primitive in one place (a rule class and one call)
and then differentiates it with all four methods, through ``backward``,
``gradcheck``, ``gradgradcheck``, the tape printer, expressions and
``difflab compare``.
"""

import inspect
import json
import math
import sys

import numpy as np
import pytest
import sympy
from click.testing import CliRunner

import difflab as dl
from difflab import exprparse, func, functions
from difflab.autograd import gradcheck, gradgradcheck
from difflab.cli import main
from difflab.diff import differentiators
from difflab.diff.dual import Dual
from difflab.nn import functional as F  # noqa: N812
from difflab.ops import elementwise, registry
from difflab.tensor import Tensor

METHODS = ("forward", "reverse", "symbolic", "numeric")


class Cube(elementwise.Unary):
    """y = x³, written once: its forward next to its derivative."""

    name, math = "cubed", "d x³/dx = 3x²"
    description, domain = "x to the third", (-2.0, 2.0)

    @staticmethod
    def forward(xp, x):
        return x * x * x

    @staticmethod
    def derivative(xp, x, y):
        return 3.0 * x * x


class Hypot(elementwise.Binary):
    """z = √(a² + b²)."""

    name, math = "hypot2", "∂√(a²+b²)/∂a = a/z,  ∂√(a²+b²)/∂b = b/z"
    description, domain = "length of the vector (a, b)", (0.5, 2.0)

    @staticmethod
    def forward(xp, a, b):
        return xp.sqrt(a * a + b * b)

    @staticmethod
    def d_da(xp, a, b, z):
        return a / z

    @staticmethod
    def d_db(xp, a, b, z):
        return b / z


@pytest.fixture
def new_primitives():
    """Register Cube and Hypot for one test, and take them out again afterwards."""
    cube, hypot = dl.register_primitive(Cube), dl.register_primitive(Hypot)
    yield cube, hypot
    for name in ("cubed", "hypot2"):
        registry.PRIMITIVES.pop(name, None)
        functions.ELEMENTWISE.pop(name, None)
        if name in vars(Tensor):
            delattr(Tensor, name)


def test_a_new_primitive_works_with_all_four_methods(new_primitives):
    cube, _ = new_primitives

    def f(x):
        return cube(dl.sin(x)) + x

    exact = 3 * math.sin(1.2) ** 2 * math.cos(1.2) + 1
    for method in METHODS:
        got = dl.derivative(f, method=method)(1.2)
        assert got == pytest.approx(exact, rel=1e-6 if method == "numeric" else 1e-12), method
    # second derivatives, forward over forward and symbolic
    second = 6 * math.sin(1.2) * math.cos(1.2) ** 2 - 3 * math.sin(1.2) ** 3
    for method in ("forward", "symbolic", "reverse"):
        d2 = dl.derivative(dl.derivative(f, method=method), method=method)(1.2)
        assert d2 == pytest.approx(second, rel=1e-10), method


def test_a_new_binary_primitive_with_broadcasting(new_primitives):
    _, hypot = new_primitives
    a = dl.tensor(np.linspace(0.5, 2.0, 6).reshape(2, 3), dtype=dl.float64, requires_grad=True)
    b = dl.tensor([0.7, 1.1, 1.9], dtype=dl.float64, requires_grad=True)
    assert gradcheck(hypot, (a, b))
    assert gradgradcheck(hypot, (a, b))
    out = hypot(a, b).sum()
    out.backward()
    expected_b = (b.detach().numpy() / np.hypot(a.detach().numpy(), b.detach().numpy())).sum(0)
    np.testing.assert_allclose(b.grad.numpy(), expected_b, rtol=1e-14)
    for method in METHODS:
        g = dl.grad(lambda v: hypot(v[0], v[1]), method=method)(np.array([3.0, 4.0]))
        np.testing.assert_allclose(g, [0.6, 0.8], rtol=1e-6 if method == "numeric" else 1e-14)


def test_a_new_primitive_on_the_tape(new_primitives):
    cube, _ = new_primitives
    x = dl.tensor([0.5, -1.5, 2.0], dtype=dl.float64, requires_grad=True)
    assert gradcheck(cube, (x,))
    assert gradgradcheck(cube, (x,))
    y = x.cubed()  # a Tensor method too
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * x.detach().numpy() ** 2)
    with dl.autograd.tape() as t:
        cube(x).sum()
    listing = str(t)
    assert "cubed" in listing and "3x²" in listing


def test_a_new_primitive_in_expressions_and_the_command_line(new_primitives):
    assert exprparse.FUNCTIONS["cubed"] == (1, "x to the third")
    e = exprparse.parse("cubed(x) + hypot2(x, 2)")
    assert float(e(1.5)) == pytest.approx(1.5**3 + math.hypot(1.5, 2))
    reference = e.evaluate({"x": 1.5}, namespace="mpmath")
    assert float(reference) == pytest.approx(1.5**3 + math.hypot(1.5, 2), rel=1e-15)

    result = CliRunner().invoke(main, ["compare", "cubed(x)", "--at", "x=1.5", "--json",
                                       "--dtypes", "float64"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["meta"]["reference"]["x"].startswith("6.75")
    records = report["records"]
    methods = {r["method"] for r in records}
    assert {"forward", "reverse", "symbolic"} <= {m.split(":")[0] for m in methods}
    for r in records:
        assert r["value"] == pytest.approx(3 * 1.5**2, rel=1e-6)

    listing = CliRunner().invoke(main, ["functions"])
    assert "cubed(x)" in listing.output and "3x²" in listing.output


def test_the_registry_refuses_bad_primitives():
    with pytest.raises(ValueError, match="already registered"):
        registry.register(registry.PRIMITIVES["sin"])
    with pytest.raises(ValueError, match="identifier"):
        class Bad(elementwise.Unary):
            name = "not a name"
        dl.register_primitive(Bad)
    with pytest.raises(TypeError, match="Unary or Binary"):
        dl.register_primitive(lambda x: x)

    class NoVjp:
        name = "novjp"

        @staticmethod
        def forward(ctx, xp, x):
            return x

    with pytest.raises(TypeError, match="no vjp"):
        registry.register(NoVjp)
    with pytest.raises(KeyError, match="no primitive named 'nope'"):
        registry.get("nope")


#: The built-in elementwise primitives (collected before any test registers one of its own,
#: as the primitives guide's example does with ``cube``).
BUILT_IN_ELEMENTWISE = registry.elementwise_ops()


def test_every_elementwise_primitive_is_everywhere():
    """What the registry lists, every consumer has: nothing else lists primitives."""
    for op in BUILT_IN_ELEMENTWISE:
        assert getattr(dl, op.name) is functions.ELEMENTWISE[op.name]
        assert callable(getattr(Tensor, op.name, None)) or op.name in ("neg",), op.name
        assert op.name in exprparse.FUNCTIONS
        assert op.rule.math and op.rule.description, op.name
        low, high = op.rule.domain
        assert low < high


@pytest.mark.parametrize("op", registry.elementwise_ops(), ids=lambda op: op.name)
def test_every_elementwise_primitive_same_derivative_by_every_method(op):
    """forward = reverse = symbolic to rounding, numeric close, inside the rule's domain."""
    function = functions.ELEMENTWISE[op.name]
    low, high = op.rule.domain
    if isinstance(op, registry.UnaryOp):
        point = np.array([low + 0.37 * (high - low)])

        def f(v):
            return function(v[0])
    else:
        point = np.array([low + 0.37 * (high - low), low + 0.71 * (high - low)])

        def f(v):
            return function(v[0], v[1])

    results = {m: np.asarray(dl.grad(f, method=m)(point), dtype=float) for m in METHODS}
    for method in ("reverse", "symbolic"):
        np.testing.assert_allclose(results[method], results["forward"], rtol=1e-13, atol=1e-15,
                                   err_msg=f"{op.name}: {method} vs forward")
    np.testing.assert_allclose(results["numeric"], results["forward"], rtol=1e-6, atol=1e-8,
                               err_msg=f"{op.name}: numeric vs forward")


#: The primitives without a derivative that act on real numbers elementwise (``logic.Pointwise``):
#: each one's face in a function that is differentiable at POINTS (away from every jump),
#: the piecewise-constant value a factor or a ``where`` condition.  The test above cannot
#: take them: they are no elementwise rule (no derivative, no domain), so they are listed
#: apart in the registry, and every one must be here or in NOT_REAL.
PIECEWISE_CONSTANT = {
    "floor": lambda x: dl.floor(x) * x,
    "ceil": lambda x: dl.ceil(x) * x,
    "round": lambda x: dl.round(x) * x + dl.round(x, decimals=1) * x * x,
    "sign": lambda x: dl.sign(x) * x * x,
    "signbit": lambda x: dl.where(dl.signbit(x), x * x, -x),
    "heaviside": lambda x: dl.heaviside(x, dl.tensor(0.5)) * x,
    "floor_divide": lambda x: dl.floor_divide(x, 0.5) * x,
    "trunc_divide": lambda x: dl.div(x, 0.5, rounding_mode="trunc") * x,
    "frexp_exponent": lambda x: dl.frexp(x).mantissa * x + dl.ldexp(x, dl.frexp(x).exponent),
    "isnan": lambda x: dl.where(dl.isnan(dl.log(x * x)), 0.0, x * x),
    "isinf": lambda x: dl.where(dl.isinf(x), 0.0, x * x),
    "isfinite": lambda x: dl.where(dl.isfinite(dl.exp(x)), x * x, -x),
    "eq": lambda x: dl.where(dl.eq(dl.floor(x), 0.0), x * x, -x),
    "ne": lambda x: dl.where(dl.ne(dl.floor(x), 0.0), x * x, -x),
    "lt": lambda x: dl.where(dl.lt(x, 1.0), x * x, -x),
    "le": lambda x: dl.where(dl.le(x, 1.0), x * x, -x),
    "gt": lambda x: dl.where(dl.gt(x, 1.0), x * x, -x),
    "ge": lambda x: dl.where(dl.ge(x, 1.0), x * x, -x),
    "logical_and": lambda x: dl.where(dl.logical_and(x > 0, x < 2), x * x, -x),
    "logical_or": lambda x: dl.where(dl.logical_or(x < 0, x > 2), x * x, -x),
    "logical_xor": lambda x: dl.where(dl.logical_xor(x > 0, x > 2), x * x, -x),
    "logical_not": lambda x: dl.where(dl.logical_not(x > 0), x * x, -x),
    "bitwise_and": lambda x: dl.where((x > 0) & (x < 2), x * x, -x),
    "bitwise_or": lambda x: dl.where((x < 0) | (x > 2), x * x, -x),
    "bitwise_xor": lambda x: dl.where((x > 0) ^ (x > 2), x * x, -x),
    "bitwise_not": lambda x: dl.where(~(x > 0), x * x, -x),
    "isclose": lambda x: dl.where(dl.isclose(x, dl.tensor(0.5), atol=0.2), x * x, -x),
}
#: Functions composed of those primitives (their faces are written by hand too), and the
#: truth-value reductions (the primitives any, all, count_nonzero).
PIECEWISE_CONSTANT_COMPOSITES = {
    "any": lambda x: dl.where(dl.any(x > 2), x * x, -x),
    "all": lambda x: dl.where(dl.all(x > 0), x * x, -x),
    "count_nonzero": lambda x: dl.count_nonzero(x > 0) * x,
    # x the second operand (a constant first: the face asks both for a dual or a symbol)
    "floor_divide_by_x": lambda x: dl.floor_divide(5.0, x) * x,
    "gt_constant_first": lambda x: dl.where(dl.gt(1.0, x), x * x, -x),
    "isclose_constant_first": lambda x: dl.where(dl.isclose(0.5, x, atol=0.2), x * x, -x),
    "trunc": lambda x: dl.trunc(x) * x,
    "frac": lambda x: dl.frac(x) * x,
    "sgn": lambda x: dl.sgn(x) * x,
    "signbit": lambda x: dl.where(dl.signbit(x), x * x, -x),
    "clamp": lambda x: dl.clamp(x, 0.0, 2.0) * x,
    "where": lambda x: dl.where(x > 0, x * x, -x),
    # a mask computed from x: piecewise constant, so the derivative is the chosen branch's
    # (symbolic: sympy's Piecewise, chosen by the relations; the mask in arithmetic is 1
    # or 0, as a bool tensor's)
    "masked_fill_mask_on_x": lambda x: (dl.masked_fill(x * x, x > 0, 0.5) * x
                                        + x.masked_fill(x < 1.0, dl.tensor(-2.0)) * x),
    "where_of_a_mask_combination": lambda x: dl.where((x > 0) & ~(x > 2), x * x, x * 3.0),
    "mask_in_arithmetic": lambda x: (x > 0) * x * x + (x < 1.0) - x * (x >= 2.0) / 2.0,
    # (isin: an Or of Eq relations; of floor(x), so that no point sits on a jump)
    "isin": lambda x: (dl.isin(dl.floor(x), dl.tensor([0.0, 2.0])) * x * x
                       + dl.where(dl.isin(dl.floor(x), dl.tensor([-2.0]), invert=True),
                                  x, -x * x)),
    "isin_of_x_in_x": lambda x: dl.isin(x, x[1:]) * x * x,
}
#: Faces that made their input a tensor (``tensor_of``, a Tensor check) and now take a dual
#: number or sympy expressions as they are (``tensor_or_interpreted``), and a tensor
#: constant beside a symbol.
TENSOR_ARGUMENT_FACES = {
    "var": lambda x: dl.var(x) * x,
    "std": lambda x: dl.std(x, correction=0) * x,
    "tril": lambda x: dl.tril(x.reshape(3, 1) * x.reshape(1, 3)),
    "triu": lambda x: dl.triu(x.reshape(3, 1) * x.reshape(1, 3), 1),
    "rsqrt": lambda x: dl.rsqrt(x * x + 1.0),
    "reciprocal": lambda x: dl.reciprocal(x),
    "unbind": lambda x: dl.unbind(x)[1] * x,
    "gather": lambda x: dl.gather(x, 0, dl.tensor([2, 0])) ** 2,
    "nan_to_num": lambda x: dl.nan_to_num(x) * x,
    "hardtanh": lambda x: dl.nn.functional.hardtanh(x) * x,
    "relu6": lambda x: dl.nn.functional.relu6(x * 3.0) * x,
    "maximum_tensor_constant": lambda x: (dl.maximum(x, dl.tensor(1.0))
                                          * dl.minimum(dl.tensor([0.0, 1.0, 2.0]), x)),
    "outer": lambda x: dl.outer(x, dl.tensor([0.5, -1.0, 2.0])).sum(0),
    "kron": lambda x: dl.kron(x, dl.tensor([0.5, -1.0])).reshape(3, 2).sum(1) * x,
    "narrow": lambda x: dl.narrow(x, 0, 1, 2) * x[1:],
    "take": lambda x: dl.take(x, dl.tensor([2, 0])) * x[:2],
    "index_select": lambda x: dl.index_select(x, 0, dl.tensor([2, 0])) * x[:2],
    "lerp": lambda x: dl.lerp(x, dl.tensor([0.5, -1.0, 2.0]), 0.3) * x,
    "addcmul": lambda x: dl.addcmul(x, x, dl.tensor([0.5, -1.0, 2.0]), value=0.5) * x,
    "exp2": lambda x: dl.exp2(x),
    "logit": lambda x: dl.logit(dl.sigmoid(x)) * x,
    "deg2rad": lambda x: dl.deg2rad(x) * x,
    "dist": lambda x: dl.dist(x, dl.tensor([0.5, -1.0, 2.0])) * x,
    # (zeros_like and friends read a dual number's shape, dtype and device)
    "diag": lambda x: dl.diag(x).sum(0) * x,
    "nansum": lambda x: dl.nansum(x) * x,
    # (rms_norm's default eps is the dtype's machine epsilon: float64's for symbols)
    "rms_norm": lambda x: F.rms_norm(x.reshape(1, 3), (3,)) * x,
    "rms_norm_weight_eps": lambda x: F.rms_norm((x.reshape(3, 1) * x).reshape(1, 3, 3), [3, 3],
                                                _constant(np.ones((3, 3)) * 0.5),
                                                eps=1e-3).sum((0, 1)) * x,
    "RMSNorm": lambda x: _rms_norm_module()(x.reshape(1, 3)).sum(0) * x,
    "sinc": lambda x: dl.sinc(x),
    # nn.functional's activations written with operations (an array: a constant tensor)
    **{name: (lambda x, name=name: getattr(dl.nn.functional, name)(x) * x)
       for name in ("elu", "celu", "selu", "softplus", "logsigmoid", "silu", "mish",
                    "hardsigmoid", "hardswish", "hardshrink", "softshrink", "tanhshrink",
                    "softsign")},
    "threshold": lambda x: dl.nn.functional.threshold(x, 0.5, -1.0) * x,
    "softmin": lambda x: dl.nn.functional.softmin(x, 0) * x,
    "prelu": lambda x: dl.nn.functional.prelu(x, dl.tensor([0.25])) * x,
    "normalize": lambda x: dl.nn.functional.normalize(x, dim=0) * x,
    # products and tilings (mm, mv, bmm and broadcast_tensors take them as they are)
    "dot": lambda x: dl.dot(x, dl.tensor([0.5, -1.0, 2.0])) * x,
    "dot_constant_first": lambda x: dl.dot(dl.tensor([0.5, -1.0, 2.0]), x) * x,
    "tile": lambda x: dl.tile(x, (2,)).reshape(2, 3).sum(0) * x * x,
    "cross": lambda x: dl.cross(x, x * x, dim=0) * dl.tensor([0.5, -1.0, 2.0]),
    "addmm": lambda x: dl.addmm(x.reshape(3, 1), x.reshape(3, 1), x.reshape(1, 3)).sum(1),
    "addmv": lambda x: dl.addmv(x, x.reshape(3, 1) * x, x, beta=0.5, alpha=2.0) * x,
    "addr": lambda x: dl.addr(x, x, dl.tensor([0.5, -1.0, 2.0])).sum(0) * x,
    "addbmm": lambda x: dl.addbmm(x.reshape(1, 3), x.reshape(1, 3, 1),
                                  x.reshape(1, 1, 3)).sum(0) * x,
    "chain_matmul": lambda x: dl.chain_matmul(x.reshape(3, 1), x.reshape(1, 3),
                                              x.reshape(3, 1)).sum(1) * x,
    # (roll's positions on x's device: a SymbolArray's device is Tensor's CPU)
    "roll": lambda x: dl.roll(x, 1) * x,
    "roll_dims": lambda x: dl.roll(x.reshape(3, 1) * x, (1, -1), (0, 1)).sum(0) * x,
    "trace": lambda x: dl.trace(x.reshape(3, 1) * x.reshape(1, 3)) * x,  # (movedim)
    "xlogy": lambda x: dl.xlogy(x, x * x + 1.0),
    # (a condition of symbols between two tensor constants: sympy's Piecewise)
    "xlogy_constant_argument": lambda x: dl.xlogy(x, dl.tensor([0.25, 1.0, 4.0],
                                                               dtype=dl.float64)) * x,
    "where_tensor_constants": lambda x: dl.where(x > 0, dl.tensor([0.5, -1.0, 2.0]),
                                                 dl.tensor([4.0, 1.0, 0.25])) * x,
    # (a detached shift: symbolic's detached(e), derivative 0; both arguments may be x)
    "hypot": lambda x: dl.hypot(x, dl.tensor([0.5, -1.0, 2.0])),
    "hypot_both": lambda x: dl.hypot(x, x * x),
    "logaddexp": lambda x: dl.logaddexp(x, dl.tensor([0.5, -1.0, 2.0])),
    "logaddexp_both": lambda x: dl.logaddexp(dl.tensor([0.5, -1.0, 2.0]), x * x),
    "fmax": lambda x: dl.fmax(x * x, x) * x,
    "inner": lambda x: dl.inner(dl.tensor([0.5, -1.0, 2.0]), x) * x,
    "vdot": lambda x: dl.vdot(dl.tensor([0.5, -1.0, 2.0]), x) * x,
    "tensordot": lambda x: dl.tensordot(x.reshape(3, 1) * x, x, 1) * x,
    "logcumsumexp": lambda x: dl.logcumsumexp(x.reshape(3, 1) * x, 1).sum(0),
    # (a Dual's dtype is NumPy's, symbols' object: the weights stay numbers)
    "cov": lambda x: dl.cov(dl.stack([x, x * x])).sum() * x,
    "cov_weights": lambda x: dl.cov(dl.stack([x, x * x]), fweights=dl.tensor([1, 2, 1]),
                                    aweights=dl.tensor([0.5, 2.0, 1.0],
                                                       dtype=dl.float64)).sum() * x,
    "einsum": lambda x: dl.einsum("i,j->ij", dl.tensor([0.5, -1.0, 2.0]), x).sum(0) * x,
    "einsum_both": lambda x: dl.einsum("i,i->", x, x * x) * x,
    # (the count of non-nan entries: sympy's True made the number 1, as to_dtype does)
    "nanmean": lambda x: dl.nanmean(x.reshape(3, 1) * x, 0) * x,
    "stack_tensor_constant": lambda x: dl.stack([x, dl.tensor([0.5, -1.0, 2.0])]).sum(0) * x,
    "cosine_similarity": lambda x: dl.nn.functional.cosine_similarity(
        x, dl.tensor([0.5, -1.0, 2.0]), dim=0) * x,
    "cosine_similarity_both": lambda x: dl.nn.functional.cosine_similarity(
        x.reshape(1, 3), (x * x).reshape(1, 3), dim=1) * x,
    # joining, flipping, splitting (a tensor constant beside x: its values, as stack's)
    "cat_tensor_constant": lambda x: dl.cat([x * x, dl.tensor([0.5])]).sum() * x,
    "hstack": lambda x: dl.hstack([x, x * x]).reshape(2, 3).sum(0) * x,
    "vstack": lambda x: dl.vstack([x, dl.tensor([0.5, -1.0, 2.0])]).sum(0) * x,
    "dstack": lambda x: dl.dstack([x, x * x]).sum(2).sum(0) * x,
    "column_stack": lambda x: dl.column_stack([x, x * x]).sum(1) * x,
    "fliplr": lambda x: dl.fliplr(x.reshape(1, 3) * x.reshape(3, 1)).sum(0) * x,
    "flipud": lambda x: dl.flipud(x) * x,
    "rot90": lambda x: dl.rot90(x.reshape(3, 1) * (x * x)).sum(0) * x,  # (x.transpose(0, 1))
    "swapdims": lambda x: dl.swapdims(x.reshape(3, 1) * x, 0, 1).sum(0) * x,
    "unflatten": lambda x: dl.unflatten(x, 0, (1, 3)).sum(0) * x,
    "ravel": lambda x: dl.ravel(x.reshape(3, 1) * x).reshape(3, 3).sum(0) * x,
    "atleast_2d": lambda x: dl.atleast_2d(x).sum(0) * x,
    "hsplit": lambda x: dl.hsplit(x, 3)[1] * x,
    "tensor_split": lambda x: dl.tensor_split(x, 2)[0].sum() * x,
    # writing into slices and gathering (the values written and the tensor written into
    # may be dual numbers or symbols, a tensor constant beside them its values)
    "index_add": lambda x: dl.index_add(x * x, 0, dl.tensor([2, 0]), x[:2], alpha=2.0) * x,
    "index_copy": lambda x: dl.index_copy(x * x, 0, dl.tensor([2, 0]), x[1:]) * x,
    "index_fill": lambda x: dl.index_fill(x * x, 0, dl.tensor([1]), 0.5) * x,
    "index_put": lambda x: dl.index_put(x * x, (dl.tensor([0, 2]),), x[1:]) * x,
    "scatter_reduce_sum": lambda x: dl.scatter_reduce(x * x, 0, dl.tensor([0, 0, 2]), x,
                                                      "sum") * x,
    "scatter_reduce_mean": lambda x: dl.scatter_reduce(x * x, 0, dl.tensor([1, 0, 1]), x,
                                                       "mean", include_self=False) * x,
    # (prod: a table of the groups padded with 1, written with index_put; jacfwd writes
    # dual numbers into it)
    "scatter_reduce_prod": lambda x: dl.scatter_reduce(x * x, 0, dl.tensor([0, 0, 2]), x,
                                                       "prod", include_self=False) * x,
    "scatter_reduce_prod_self": lambda x: dl.scatter_reduce(x + 1.0, 0, dl.tensor([2, 0, 2]),
                                                            x * x, "prod") * x,
    "index_reduce_prod": lambda x: dl.index_reduce(x.reshape(3, 1) * x, 0, dl.tensor([1, 1]),
                                                   (x * x)[:2].reshape(2, 1).expand(2, 3),
                                                   "prod").sum(0) * x,
    "index_put_into_constant": lambda x: dl.index_put(dl.zeros(3, dtype=dl.float64),
                                                      (dl.tensor([0, 2]),), x[:2]) * x,
    "select_scatter_into_constant": lambda x: dl.select_scatter(
        dl.ones(2, 3, dtype=dl.float64), x * x, 0, 1).sum(0) * x,
    "select_scatter": lambda x: dl.select_scatter(x.reshape(3, 1) * x, x * x, 0, 1).sum(0) * x,
    "slice_scatter": lambda x: dl.slice_scatter(x * x, x[:2], 0, 1) * x,
    "diagonal_scatter": lambda x: dl.diagonal_scatter(x.reshape(3, 1) * x, x * x).sum(0) * x,
    "renorm": lambda x: dl.renorm(x.reshape(3, 1) * x, 2, 0, 3.0).sum(0) * x,
    "repeat_interleave": lambda x: dl.repeat_interleave(x, 2).reshape(3, 2).sum(1) * x,
    "combinations": lambda x: dl.combinations(x).prod(1).sum() * x,
    "trapezoid": lambda x: dl.trapezoid(x * x, x) * x,
    "vander": lambda x: dl.vander(x, 3).sum(1) * x,
    "block_diag": lambda x: dl.block_diag(x.reshape(1, 3), dl.tensor([[0.5]])).sum(0)[:3] * x,
    "cartesian_prod": lambda x: dl.cartesian_prod(x, x * x).prod(1).reshape(3, 3).sum(0) * x,
    "meshgrid": lambda x: dl.meshgrid(x, x * x)[1].sum(0) * x,
    "cdist": lambda x: dl.cdist(x.reshape(3, 1) * x, _constant([[0.5, -1.0, 2.0]])).sum(1) * x,
    # nn.functional's convolutions, poolings, distances and losses (_check_input, as the
    # activations': a Tensor check refused them)
    **{name: (lambda x, f=f: f(x) * x) for name, f in {
        "conv1d": lambda x: F.conv1d(x.reshape(1, 1, 3) * x, _constant([[[0.5, -1.0]]])).sum(),
        "conv3d": lambda x: F.conv3d(_image(x).reshape(1, 1, 3, 3, 1),
                                     _constant(np.ones((1, 1, 2, 2, 1)))).sum(),
        "avg_pool1d": lambda x: F.avg_pool1d(x.reshape(1, 1, 3) * x, 2, 1).sum(),
        "max_pool1d": lambda x: F.max_pool1d((x * x).reshape(1, 1, 3), 2, 1).sum(),
        "avg_pool3d": lambda x: F.avg_pool3d(_image(x).reshape(1, 1, 3, 3, 1), (2, 2, 1),
                                             1).sum(),
        "lp_pool2d": lambda x: F.lp_pool2d(_image(x), 2, 2, 1).sum(),
        "adaptive_avg_pool1d": lambda x: F.adaptive_avg_pool1d(x.reshape(1, 1, 3) * x, 2).sum(),
        "adaptive_avg_pool2d": lambda x: F.adaptive_avg_pool2d(_image(x), 2).sum(),
        "adaptive_max_pool1d": lambda x: F.adaptive_max_pool1d((x * x).reshape(1, 1, 3),
                                                               2).sum(),
        "cross_entropy": lambda x: F.cross_entropy(x.reshape(1, 3) * x, dl.tensor([2])),
        "kl_div": lambda x: F.kl_div(dl.log_softmax(x, 0), _constant([0.2, 0.3, 0.5]),
                                     reduction="sum"),
        "pairwise_distance": lambda x: F.pairwise_distance(x.reshape(1, 3),
                                                           _constant([[0.5, -1.0, 2.0]])).sum(),
        "pdist": lambda x: F.pdist(x.reshape(3, 1) * x).sum(),
        "bilinear": lambda x: F.bilinear(x.reshape(1, 3), (x * x).reshape(1, 3),
                                         _constant(np.ones((1, 3, 3)))).sum(),
        "multi_margin_loss": lambda x: F.multi_margin_loss(x.reshape(3, 1) * x,
                                                           dl.tensor([0, 2, 1])),
        "triplet_margin_loss": lambda x: F.triplet_margin_loss(
            x.reshape(1, 3), (x * x).reshape(1, 3), _constant([[0.5, -1.0, 2.0]])),
        "rrelu": lambda x: F.rrelu(x).sum(),
    }.items()},
    # (angle of real numbers: 0 or pi, a constant; asarray: x itself, a copy detached as a
    # tensor's; binary_cross_entropy checks a Dual's values, symbols have none)
    "angle": lambda x: dl.angle(x) * x + dl.angle(x * x) * x,
    "asarray": lambda x: dl.asarray(x) * x,
    "asarray_copy": lambda x: dl.asarray(x, copy=True) * x,
    "binary_cross_entropy": lambda x: F.binary_cross_entropy(
        dl.sigmoid(x), dl.tensor([0.0, 1.0, 1.0], dtype=dl.float64)) * x,
    # (a mask of constants: the same entries whatever x is; a mask on x: see below)
    "masked_select_constant_mask": lambda x: dl.masked_select(
        x * x, dl.tensor([True, False, True])) * x[:2],
}
def _by_position(f):
    """f with its result weighted by a fixed pattern of its shape."""
    def weighted(x):
        y = f(x)
        pattern = np.cos(np.arange(math.prod(y.shape)) + 0.3).reshape(tuple(y.shape))
        return y * dl.tensor(pattern, dtype=y.dtype)

    return weighted


#: nn.functional's faces that take dual numbers, whose symbolic derivative is too slow
#: or has no sympy form (the maxima's indices): forward mode.
NN_FORWARD_FACES = {
    "max_pool2d_with_indices": lambda x: _with_indices(F.max_pool2d(_image(x), 2, 1,
                                                                    return_indices=True)),
    "adaptive_max_pool2d_with_indices": lambda x: _with_indices(
        F.adaptive_max_pool2d(_image(x), 2, return_indices=True)),
    "max_pool3d": lambda x: F.max_pool3d(_image(x).reshape(1, 1, 3, 3, 1), (2, 2, 1), 1),
    "instance_norm": lambda x: F.instance_norm(_image(x)) ** 2,
    # the composites that read a tensor's storage before (a Tensor check refused a dual
    # number): their index arrays now come from the values, their arithmetic is operations.
    # (Weighted by position: the sum of a normalisation's or a softmax's outputs is constant.)
    **{name: _by_position(f) for name, f in {
    "interpolate_nearest": lambda x: F.interpolate(_filled(x, 1, 2, 3), scale_factor=2),
    "interpolate_linear": lambda x: F.interpolate(_filled(x, 1, 2, 3), size=5, mode="linear"),
    "interpolate_bilinear_corners": lambda x: F.interpolate(
        _filled(x, 1, 1, 2, 3), size=(3, 4), mode="bilinear", align_corners=True),
    "interpolate_trilinear": lambda x: F.interpolate(_filled(x, 1, 1, 2, 2, 2), size=3,
                                                     mode="trilinear"),
    "interpolate_bicubic": lambda x: F.interpolate(_filled(x, 1, 1, 2, 3), size=(3, 2),
                                                   mode="bicubic"),
    "interpolate_bicubic_corners": lambda x: F.interpolate(
        _filled(x, 1, 1, 3, 2), scale_factor=(0.7, 2.5), mode="bicubic", align_corners=True),
    "interpolate_nearest_exact": lambda x: F.interpolate(_filled(x, 1, 2, 5), size=3,
                                                         mode="nearest-exact"),
    "interpolate_area": lambda x: F.interpolate(_filled(x, 1, 1, 3, 5), size=(2, 3),
                                                mode="area"),
    "interpolate_antialias": lambda x: F.interpolate(_filled(x, 1, 1, 4, 5), size=(2, 3),
                                                     mode="bicubic", antialias=True),
    "Upsample": lambda x: _MODULES["Upsample"](
        _filled(x, 1, 1, 2, 2)),
    "Upsample_bicubic": lambda x: _MODULES["Upsample_bicubic"](_filled(x, 1, 1, 2, 2)),
    "pad_constant": lambda x: F.pad(_filled(x, 2, 3), (1, 2), value=0.5),
    **{f"pad_{mode}": (lambda x, mode=mode: F.pad(_filled(x, 1, 2, 3), (2, 1), mode=mode))
       for mode in ("reflect", "replicate", "circular")},
    "batch_norm_training": lambda x: F.batch_norm(_filled(x, 4, 2), None, None, x[:2], x[1:],
                                                  training=True),
    "batch_norm_running_stats": lambda x: F.batch_norm(
        _filled(x, 3, 2, 2), dl.zeros(2, dtype=x.dtype), dl.ones(2, dtype=x.dtype),
        training=True),
    "batch_norm_eval": lambda x: F.batch_norm(_filled(x, 3, 2), _constant([0.1, -0.2]),
                                              _constant([1.5, 0.7]), x[:2], x[1:]),
    "BatchNorm2d_train": lambda x: _MODULES["BatchNorm2d"](_filled(x, 2, 2, 2, 1)),
    "BatchNorm1d_eval": lambda x: _MODULES["BatchNorm1d_eval"](_filled(x, 3, 2)),
    "group_norm": lambda x: F.group_norm(_filled(x, 2, 4, 2), 2, _filled(x, 4), _filled(x, 4)),
    "GroupNorm": lambda x: _MODULES["GroupNorm"](_filled(x, 2, 2, 3)),
    "local_response_norm": lambda x: F.local_response_norm(_filled(x, 1, 4, 3), 3),
    "affine_grid": lambda x: F.affine_grid(_filled(x, 1, 2, 3), (1, 1, 2, 3),
                                           align_corners=False),
    "grid_sample_image": lambda x: F.grid_sample(_filled(x, 1, 2, 3, 3), _GRID,
                                                 align_corners=False),
    "grid_sample_grid": lambda x: F.grid_sample(_IMAGE, _filled(x, 1, 2, 2, 2) * 0.3,
                                                align_corners=True),
    "grid_sample_image_reflection": lambda x: F.grid_sample(
        _filled(x, 1, 2, 3, 3), _GRID * 2.5, padding_mode="reflection", align_corners=False),
    "grid_sample_image_bicubic": lambda x: F.grid_sample(
        _filled(x, 1, 2, 3, 3), _GRID * 1.5, mode="bicubic", padding_mode="reflection",
        align_corners=True),
    "grid_sample_grid_reflection": lambda x: F.grid_sample(
        _IMAGE, _filled(x, 1, 2, 2, 2) * 0.6, padding_mode="reflection", align_corners=True),
    "grid_sample_grid_bicubic": lambda x: F.grid_sample(
        _IMAGE, _filled(x, 1, 2, 2, 2) * 0.4, mode="bicubic", padding_mode="border",
        align_corners=False),
    "grid_sample_nearest_border": lambda x: F.grid_sample(
        _filled(x, 1, 1, 3, 3), _filled(x, 1, 2, 2, 2) * 0.3, mode="nearest",
        padding_mode="border", align_corners=False),
    "spatial_transformer": lambda x: F.grid_sample(
        _filled(x, 1, 1, 3, 3), F.affine_grid(_filled(x, 1, 2, 3) * 0.2, (1, 1, 2, 2),
                                              align_corners=False), align_corners=False),
    "conv_transpose1d": lambda x: F.conv_transpose1d(_filled(x, 1, 2, 3), _filled(x, 2, 3, 2),
                                                     x, stride=2),
    "conv_transpose2d": lambda x: F.conv_transpose2d(
        _filled(x, 1, 2, 2, 2), _filled(x, 2, 1, 2, 2), None, stride=2, padding=1,
        output_padding=1),
    "conv_transpose3d": lambda x: F.conv_transpose3d(_filled(x, 1, 2, 2, 2, 1),
                                                     _filled(x, 2, 1, 2, 2, 1)),
    "ConvTranspose2d": lambda x: _MODULES["ConvTranspose2d"](
        _filled(x, 1, 2, 2, 2)),
    "scaled_dot_product_attention": lambda x: F.scaled_dot_product_attention(
        _filled(x, 1, 3, 2), _filled(x * x, 1, 4, 2), _filled(x, 1, 4, 2)),
    "scaled_dot_product_attention_causal": lambda x: F.scaled_dot_product_attention(
        _filled(x, 3, 2), _filled(x * x, 3, 2), _filled(x, 3, 2), is_causal=True),
    "scaled_dot_product_attention_masks": lambda x: F.scaled_dot_product_attention(
        _filled(x, 3, 2), _filled(x * x, 3, 2), _filled(x, 3, 2),
        attn_mask=dl.tensor([[True, False, True]] * 3)) + F.scaled_dot_product_attention(
        _filled(x, 3, 2), _filled(x * x, 3, 2), _filled(x, 3, 2), attn_mask=_filled(x, 3, 3),
        dropout_p=0.0),
    "MultiheadAttention": lambda x: _MODULES["MultiheadAttention"](
        _filled(x, 3, 1, 4), _filled(x * x, 3, 1, 4), _filled(x, 3, 1, 4))[0],
    "ctc_loss": lambda x: F.ctc_loss(dl.log_softmax(_filled(x, 4, 1, 3), 2), dl.tensor([[1, 2]]),
                                     [4], [2]),
    "CTCLoss": lambda x: _MODULES["CTCLoss"](
        dl.log_softmax(_filled(x, 3, 2, 3), 2), dl.tensor([1, 2, 2]), [3, 2], [2, 1]),
    **{f"max_unpool{d}d": (lambda x, d=d: _unpooled(x, d)) for d in (1, 2, 3)},
    "max_unpool2d_given_indices": lambda x: F.max_unpool2d(
        _filled(x, 1, 2, 1, 2), dl.tensor([[[[1, 6]], [[4, 11]]]]), 2, output_size=(3, 4)),
    "MaxUnpool2d": lambda x: _MODULES["MaxUnpool2d"](*F.max_pool2d(_filled(x, 1, 1, 4, 2), 2,
                                                               return_indices=True)),
    "gumbel_softmax": lambda x: _gumbel_softmax(_filled(x, 2, 4), tau=0.7),
    "gumbel_softmax_hard": lambda x: _gumbel_softmax(_filled(x, 2, 4), hard=True) * x[0],
    }.items()},
}
#: Those of NN_FORWARD_FACES that differentiate symbolically, and how the others refuse
#: (each with its reason and the methods that work).  (The entries before them, and
#: MultiheadAttention: too slow.)
NN_SYMBOLIC = [name for name in NN_FORWARD_FACES if name.startswith(
    ("interpolate", "Upsample", "pad", "batch_norm", "BatchNorm1d", "group_norm", "GroupNorm",
     "local_response", "affine", "grid_sample_image", "conv_transpose", "ConvTranspose",
     "scaled_dot", "CTCLoss", "max_unpool2d_given", "gumbel_softmax"))
    and name not in ("batch_norm_running_stats", "gumbel_softmax_hard")]
NN_SYMBOLIC_REFUSED = {
    "batch_norm_running_stats": "batch_norm: the running statistics are averages",
    "BatchNorm2d_train": "batch_norm: the running statistics are averages",
    "grid_sample_grid": "grid_sample: the pixels it reads are found from the grid's values",
    "spatial_transformer": "grid_sample: the pixels it reads are found from the grid's values",
    **dict.fromkeys(["grid_sample_grid_reflection", "grid_sample_grid_bicubic"],
                    "grid_sample: the pixels it reads are found from the grid's values"),
    "max_unpool2d": "max_pool's indices: symbols have no values",
    "MaxUnpool2d": "max_pool's indices: symbols have no values",
    "gumbel_softmax_hard": "argmax .* has no symbolic form",
}
_IMAGE = dl.tensor(np.linspace(-1.0, 2.0, 9).reshape(1, 1, 3, 3) ** 2, dtype=dl.float64)
_GRID = dl.tensor([[[[-0.7, 0.2], [0.35, -0.9]], [[0.9, 0.55], [-0.15, 0.05]]]],
                  dtype=dl.float64)


def _filled(x, *shape):
    """A (nearly) float64 tensor of ``shape`` made of x: copy k of x is x (1 + k/3) + x² k/10
    (no two entries equal, so no ties in a maximum)."""
    n = math.prod(shape)
    copies = [x * (1.0 + k / 3) + x * x * (k / 10) for k in range(-(-n // 3))]
    return dl.cat(copies)[:n].reshape(shape)


def _frozen(make, dtype):
    """A module of ``dtype`` whose parameters need no grad (constants of f), its weights
    drawn from seed 5 (the random state put back)."""
    state = dl.get_rng_state()
    dl.manual_seed(5)
    try:
        return make().to(dtype).requires_grad_(False)
    finally:
        dl.set_rng_state(state)


def _modules(dtype):
    """The modules of NN_FORWARD_FACES, their weights in ``dtype``."""
    return {
        "Upsample": dl.nn.Upsample(scale_factor=2, mode="bilinear"),
        "Upsample_bicubic": dl.nn.Upsample(size=(3, 5), mode="bicubic", align_corners=False),
        "BatchNorm2d": _frozen(lambda: dl.nn.BatchNorm2d(2), dtype),
        "BatchNorm1d_eval": _frozen(lambda: dl.nn.BatchNorm1d(2), dtype).eval(),
        "GroupNorm": _frozen(lambda: dl.nn.GroupNorm(1, 2), dtype),
        "ConvTranspose2d": _frozen(lambda: dl.nn.ConvTranspose2d(2, 1, 2, stride=2), dtype),
        "MultiheadAttention": _frozen(lambda: dl.nn.MultiheadAttention(4, 2), dtype),
        "CTCLoss": dl.nn.CTCLoss(reduction="sum"),
        "MaxUnpool2d": dl.nn.MaxUnpool2d(2),
    }


#: The modules of NN_FORWARD_FACES, made once (a draw inside f is refused by vmap).
_MODULES = _modules(dl.float64)


def _unpooled(x, dims):
    """max_unpool of max_pool (the indices read from x's values, a Dual's primal)."""
    shape = {1: (1, 2, 4), 2: (1, 2, 2, 4), 3: (1, 1, 2, 2, 4)}[dims]
    values, indices = getattr(F, f"max_pool{dims}d")(_filled(x, *shape), 2, return_indices=True)
    return getattr(F, f"max_unpool{dims}d")(values, indices, 2)


def _gumbel_softmax(logits, **options):
    """F.gumbel_softmax with the same draw at every call (the random state put back)."""
    state = dl.get_rng_state()
    dl.manual_seed(7)
    try:
        return F.gumbel_softmax(logits, **options)
    finally:
        dl.set_rng_state(state)


def _image(x):
    """A (1, 1, 3, 3) image of x (not symmetric: x_i x_j²)."""
    return (x.reshape(3, 1) * (x * x)).reshape(1, 1, 3, 3)


def _constant(values):
    """A float64 tensor constant, x's dtype (a convolution's weight must have it)."""
    return dl.tensor(values, dtype=dl.float64)


def _rms_norm_module():
    """An nn.RMSNorm(3) whose weight γ is a constant (0.5, -1, 2), in float64."""
    module = dl.nn.RMSNorm(3).double()
    module.weight.requires_grad_(False)
    module.weight.copy_(_constant([0.5, -1.0, 2.0]))
    return module


def _with_indices(pooled):
    """A pool's values, with its int64 indices as a constant factor."""
    values, indices = pooled
    return values * indices


#: Tensor's methods on the value f receives (a Dual in forward mode, a SymbolArray in
#: symbolic, a constant tensor in numeric): Tensor's own code, run on it
#: (numpy_protocol.method_face).  (Numeric handed f NumPy arrays before, which have NumPy's
#: methods only, and was left out of this table.)
TENSOR_METHODS = {
    "floor": lambda x: x.floor() * x,
    "round": lambda x: x.round() * x,
    # (decimals: ndarray has a round of its own, which a SymbolArray's must not run)
    "round_decimals": lambda x: x.round(decimals=1) * x + x.round(decimals=-1) * x * x,
    "masked_fill": lambda x: x.masked_fill(x > 0, 0.0) * x + x.masked_fill(x < 1.0, 2.0),
    "sign": lambda x: x.sign() * x * x,
    "exp": lambda x: x.exp(),
    "abs": lambda x: x.abs() * x,
    "clamp": lambda x: x.clamp(0.0, 2.0) * x,
    "pow": lambda x: x.pow(2) * x.pow(dl.tensor(3.0)),
    "reshape_T": lambda x: x.reshape(3, 1).T * x,
    "sum": lambda x: x.sum() * x,
    "rsqrt": lambda x: (x * x + 1.0).rsqrt(),
    "reciprocal": lambda x: x.reciprocal(),
    "var": lambda x: x.var() * x,
    "tril": lambda x: (x.reshape(3, 1) * x.reshape(1, 3)).tril(),
    "sigmoid": lambda x: x.sigmoid() * x,
    "square": lambda x: x.square(),
    "mul_add": lambda x: x.mul(x).add(x, alpha=2.0).sub(1.0),
    # (ndarray has methods of these names that mean something else: x.repeat(2) tiles)
    "repeat": lambda x: x.repeat(2) * dl.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
    "flatten": lambda x: (x.reshape(1, 3, 1) * x.reshape(3, 1, 1)).flatten(1).sum(0) * x,
    "std": lambda x: x.std(0, False) * x,
    # a mask made a factor: a constant (forward mode's comparison has Tensor's methods,
    # symbolic's truth value becomes 1 or 0 even in x.dtype, object)
    "mask_to_dtype": lambda x: (x > 0).to(x.dtype) * x * x,
    "mask_float": lambda x: (x < 1.0).float() * x * x,
    "mask_double": lambda x: (x > 0).double() * x * x,
    "mask_type": lambda x: (x > 0).type(dl.float64) * x * x,
    "mask_to_float64": lambda x: dl.isfinite(x).to(dl.float64) * x,
    "floor_to_dtype": lambda x: x.floor().to(x.dtype) * x,
    "fliplr": lambda x: (x.reshape(1, 3) * x.reshape(3, 1)).fliplr().sum(0) * x,
    "swapdims": lambda x: (x.reshape(3, 1) * x).swapdims(0, 1).sum(0) * x,
    "unflatten": lambda x: x.unflatten(0, (3, 1)).sum(1) * x,
    # (two dims: Tensor's swap; NumPy's transpose(0, 1) of a matrix is the identity)
    "transpose_two_dims": lambda x: ((x.reshape(3, 1) * (x * x)).transpose(0, 1).sum(0)
                                     * dl.tensor([0.5, -1.0, 2.0])),
    "transpose_3d": lambda x: (x.reshape(3, 1, 1) * (x * x).reshape(1, 1, 3)).transpose(
        0, 2).sum((1, 2)) * dl.tensor([0.5, -1.0, 2.0]),
    # (ndarray's max and min compare the expressions, which have no order: sympy's Max)
    "max": lambda x: x.max() * x + x.min() * x * x,
    "max_dim": lambda x: (x.reshape(3, 1) * x).max(0).values * x,
    "min_keepdim": lambda x: (x.reshape(3, 1) * x).min(1, keepdim=True)[0].sum(1) * x,
    # (dim 0 or -1 of a 0-d value: the value itself)
    "max_of_one_value": lambda x: x[1].max(0).values * x + dl.aminmax(x[0] * x[2], dim=-1).min,
    # (a binary primitive's method with a tensor constant: the function's handler, not
    # Tensor's promotion of the dtypes, which refuses symbols' object dtype)
    "maximum_tensor_constant": lambda x: x.maximum(dl.tensor([0.5, -1.0, 2.0])) * x,
    "atan2_tensor_constant": lambda x: x.atan2(dl.tensor([0.5, -1.0, 2.0])),
    "fmod_tensor_constant": lambda x: x.fmod(dl.tensor([0.5, -1.0, 2.0])) * x,
    "remainder_tensor_constant": lambda x: x.remainder(dl.tensor([0.5, -1.0, 2.0])) * x,
}
#: Pointwise primitives of integers: no real function to differentiate through them (angle
#: and conj have derivatives: difflab/ops/complex_numbers.py, tests/core/test_core_complex.py).
NOT_REAL = {"gcd", "lcm"}
POINTS = np.array([-1.3, 0.4, 2.7])


def test_every_piecewise_constant_primitive_is_covered_and_has_a_symbolic_form():
    from difflab.ops.logic import Pointwise

    pointwise = {name for name, op in registry.PRIMITIVES.items() if isinstance(op, Pointwise)}
    # (detach, the stop-gradient: its own table, STOP_GRADIENT_CASES)
    assert pointwise - NOT_REAL - {"detach"} == set(PIECEWISE_CONSTANT)
    for name in PIECEWISE_CONSTANT:
        op = registry.PRIMITIVES[name]
        assert op.symbolic is not None, name  # sympy's function, next to the forward
        assert op.jvp(None, np, None) is None, name  # the zero tangent


@pytest.mark.parametrize("name", [*PIECEWISE_CONSTANT, *PIECEWISE_CONSTANT_COMPOSITES])
def test_every_piecewise_constant_primitive_same_derivative_by_every_method(name):
    """The four methods (and ``compiled``) are interchangeable on a function with a
    piecewise-constant primitive: its derivative is 0 away from the jumps."""
    _same_derivative_by_every_method(name, {**PIECEWISE_CONSTANT,
                                            **PIECEWISE_CONSTANT_COMPOSITES}[name])


#: Masks on x, isin, round with decimals and rms_norm at the edges a stranger brings: -0.0
#: and 0.0 (members of the same set, ``x == 0`` of both), an exact member of the table, nan
#: in the table (a member of nothing), halves (round to even: 0.25 to 0.2), all zeros
#: (rms_norm's ε alone under the root).  f and its point; the derivative is taken at the
#: point itself, so the finite differences are left out (they would straddle the jumps).
MASK_EDGES = {
    "isin_signed_zero_and_members": (
        lambda x: dl.isin(x, dl.tensor([0.0, 0.4, np.nan], dtype=dl.float64)) * x * x
        + dl.where(dl.isin(x, dl.tensor([np.nan], dtype=dl.float64)), -x, x * 3.0),
        [-0.0, 0.4, 0.7, 0.0]),
    "isin_invert_of_x_in_x": (lambda x: dl.isin(x, x[:1], invert=True) * x * x,
                              [0.4, 0.4, -0.0, 0.0]),
    "masked_fill_at_zeros": (lambda x: x.masked_fill(x > 0, 0.0) * x
                             + dl.masked_fill(x, x == 0, 5.0) * x, [-0.0, 0.0, 0.4, -1.5]),
    "where_at_the_tie": (lambda x: dl.where(x >= x[:1], x * x, -x), [0.4, 0.4, -0.0, 1.5]),
    "round_decimals_halves": (lambda x: x.round(decimals=1) * x
                              + dl.round(x * x, decimals=2) * x, [-0.0, 0.25, 0.35, 1.45]),
    "rms_norm_zeros": (lambda x: F.rms_norm(x.reshape(2, 2), [2]) * dl.tensor([1.0, 2.0]),
                       [0.0, -0.0, 0.0, 3.0]),
}


@pytest.mark.parametrize("name", MASK_EDGES)
def test_masks_isin_round_and_rms_norm_at_edge_inputs_same_derivative_by_every_method(name):
    """At -0.0, exact members, ties, halves and zeros forward mode, symbolic, compiled and
    the function transforms give reverse mode's derivative (the branch taken at the point);
    gradcheck passes where f is smooth around the point."""
    f, point = MASK_EDGES[name]

    def g(v):
        return dl.sum(f(v))

    x = dl.tensor(point, dtype=dl.float64)
    expected = np.asarray(dl.grad(g, method="reverse")(x), dtype=float)
    assert np.isfinite(expected).all()
    results = {m: np.asarray(dl.grad(g, method=m)(x), dtype=float)
               for m in ("forward", "symbolic", "compiled")}
    results["jacfwd"], results["jacrev"] = func.jacfwd(g)(x).numpy(), func.jacrev(g)(x).numpy()
    for method, result in results.items():
        np.testing.assert_allclose(result, expected, rtol=1e-12, atol=1e-15,
                                   err_msg=f"{name}: {method} vs reverse")
    if name == "rms_norm_zeros":  # (smooth: a tiny step stays away from any jump)
        assert gradcheck(g, (dl.tensor(point, dtype=dl.float64, requires_grad=True),),
                         eps=1e-12, atol=1e-3, rtol=1e-6)


@pytest.mark.parametrize("name", TENSOR_ARGUMENT_FACES)
def test_faces_take_dual_numbers_and_symbols_same_derivative_by_every_method(name):
    """A face once written for tensors only (``tensor_of``) differentiates by every method:
    forward mode's dual number and symbolic's expressions reach it as they are."""
    _same_derivative_by_every_method(name, TENSOR_ARGUMENT_FACES[name])


@pytest.mark.parametrize("name", TENSOR_METHODS)
def test_tensor_methods_on_what_f_receives_same_derivative_by_every_method(name):
    """``x.floor()``, ``x.var()``, ``x.clamp(...)`` in f: the value f receives (a Dual, a
    SymbolArray, a Tensor) has Tensor's methods, with the same derivative."""
    _same_derivative_by_every_method(name, TENSOR_METHODS[name])


def _same_derivative_by_every_method(name: str, f, numeric: bool = True) -> None:
    def g(v):
        return dl.sum(f(v))

    methods = ("forward", "reverse", "symbolic", "compiled") + ("numeric",) * numeric
    results = {m: np.asarray(dl.grad(g, method=m)(dl.tensor(POINTS)), dtype=float)
               for m in methods}
    # (and torch.func's transforms: dual numbers inside tensors, the tape)
    results["jacfwd"] = func.jacfwd(g)(dl.tensor(POINTS)).numpy()
    results["jacrev"] = func.jacrev(g)(dl.tensor(POINTS)).numpy()
    for method in ("forward", "symbolic", "compiled", "jacfwd", "jacrev"):
        np.testing.assert_allclose(results[method], results["reverse"], rtol=1e-13,
                                   atol=1e-15, err_msg=f"{name}: {method} vs reverse")
    if numeric:
        np.testing.assert_allclose(results["numeric"], results["reverse"], rtol=1e-6,
                                   atol=1e-8, err_msg=f"{name}: numeric vs reverse")


def test_sort_of_dual_numbers_and_its_refusal_under_symbolic():
    """dl.sort and dl.argsort on a dual number pick its values and tangents (the order is
    read from the values); symbols have no order, so symbolic refuses, naming the cause."""
    def f(x):
        values, indices = dl.sort(x)
        return dl.sum(values * dl.tensor([1.0, 10.0, 100.0]) + dl.argsort(x, descending=True) * x)

    x = dl.tensor([2.7, -1.3, 0.4])
    expected = np.array([100.0, 1.0, 10.0]) + np.array([0.0, 2.0, 1.0])
    for method in ("forward", "reverse", "numeric"):  # (compiled: the order is traced in)
        np.testing.assert_allclose(np.asarray(dl.grad(f, method=method)(x), dtype=float),
                                   expected, rtol=1e-6, err_msg=method)
    np.testing.assert_allclose(func.jacfwd(f)(x).numpy(), expected)
    from difflab.diff.symbolic import SymbolicTraceError

    with pytest.raises(SymbolicTraceError, match=r"sort: symbols have no order .*"
                                                 r"method='forward', 'reverse' or 'numeric'"):
        dl.grad(f, method="symbolic")(x)


#: Functions that pick entries of x by its values (the order of the values, or a mask on
#: them): forward mode and reverse agree; symbolic refuses them with the reason.  (The
#: Tensor methods: numeric hands f NumPy arrays, which have no x.quantile.)
ORDER_STATISTICS = {
    "median": lambda x: dl.median(x) * x,
    "median_dim": lambda x: dl.median(x.reshape(3, 1) * x, 0).values * x,
    "nanmedian_dim": lambda x: dl.nanmedian(x.reshape(3, 1) * x, 1).values * x,
    "cummax": lambda x: dl.cummax(x, 0).values * x,
    "cummin": lambda x: dl.cummin(x.reshape(3, 1) * x, 1).values.sum(0) * x,
    "quantile": lambda x: dl.quantile(x, 0.3) * x,
    "quantile_dim": lambda x: dl.quantile(x.reshape(3, 1) * x, dl.tensor([0.25, 0.8]),
                                          dim=0).sum(0) * x,
    "nanquantile_midpoint": lambda x: dl.nanquantile(x * x, 0.5,
                                                     interpolation="midpoint") * x,
    "Tensor.quantile": lambda x: x.quantile(0.6) * x,
    "Tensor.nanquantile": lambda x: x.nanquantile(0.6, dim=0, keepdim=True) * x,
    "masked_select": lambda x: dl.masked_select(x * x, x > 0).sum() * x,
    "masked_select_broadcast": lambda x: dl.masked_select(x.reshape(3, 1) * x,
                                                          x < 1.0).sum(0) * x,
    "topk": lambda x: dl.topk(x * x, 2).values.sum() * x,
    # results read from the values (counts, positions, runs: a Dual's values, its tangents
    # dropped where the result has none; symbols have no values)
    "histc": lambda x: dl.histc(x * x, 3) @ dl.tensor([0.5, -1.0, 2.0]) * x,
    "histogram": lambda x: (dl.histogram(x * x, 3).hist.sum() + dl.histogram(
        x, 2, range=(-2.0, 3.0)).bin_edges.sum()) * x,
    "bucketize": lambda x: dl.bucketize(x, dl.tensor([0.0, 1.0])) * x,
    "searchsorted": lambda x: dl.searchsorted(dl.tensor([0.0, 1.0]), x * x, right=True) * x,
    "searchsorted_sorted_x": lambda x: dl.searchsorted(x, dl.tensor([0.0, 1.0])).sum() * x,
    # (the runs' values and mode's: the picked entries, with their tangents)
    "unique_consecutive": lambda x: dl.unique_consecutive(
        dl.stack([x, x, x * x]).reshape(-1), return_counts=True)[0].sum() * x,
    "unique_consecutive_counts": lambda x: dl.unique_consecutive(
        (x > 0).float(), return_counts=True, return_inverse=True)[2].sum() * x,
    "mode": lambda x: dl.mode(dl.stack([x, x * x, x]), 0).values * x,
    "mode_indices": lambda x: dl.mode(dl.stack([x * x, x, x]), 0, keepdim=True).indices * x,
}


@pytest.mark.parametrize("name", ORDER_STATISTICS)
def test_order_statistics_of_dual_numbers_same_derivative_as_reverse(name):
    """median, nanmedian, cummax, cummin, quantile pick entries of a dual number by its
    values (the order read from them; their nan test of a Dual is an array, made a
    tensor), masked_select by a condition on them: forward mode differentiates them as
    reverse mode (a quantile interpolates between the tangents of the two order
    statistics its values picked).  Under symbolic they refuse, with the reason (symbols
    have no order, or no values to select by) and the methods that work."""
    g = _forward_same_as_reverse(ORDER_STATISTICS[name], numeric=not name.startswith("Tensor."))
    from difflab.diff.symbolic import SymbolicTraceError

    with pytest.raises(SymbolicTraceError, match=r"(no order|a condition on symbols has "
                                                 r"none|no values).*method='forward', 'reverse' or "
                                                 r"'numeric'"):
        dl.grad(g, method="symbolic")(dl.tensor(POINTS))


@pytest.mark.parametrize("name", NN_FORWARD_FACES)
def test_nn_functional_faces_take_dual_numbers_same_derivative_as_reverse(name):
    """A pool with return_indices, max_pool3d, instance_norm, rms_norm, and the composites
    (interpolate, pad, the normalisations, grid_sample, the transposed convolutions,
    attention, ctc_loss, max_unpool, gumbel_softmax) and their modules, in forward mode: a
    Dual and jacfwd's dual numbers in a tensor give reverse mode's gradient (jacrev's), and
    gradcheck passes (their indices are read from a Dual's values, detached)."""
    g = _forward_same_as_reverse(NN_FORWARD_FACES[name], numeric=True, rtol=1e-10)
    x = dl.tensor(POINTS, dtype=dl.float64)
    np.testing.assert_allclose(func.jacfwd(g)(x).numpy(), func.jacrev(g)(x).numpy(),
                               rtol=1e-10, atol=1e-12)
    assert gradcheck(g, (dl.tensor(POINTS, dtype=dl.float64, requires_grad=True),))


@pytest.mark.parametrize("name", NN_FORWARD_FACES)
def test_nn_functional_faces_keep_float32_under_jacfwd_and_jacrev(name, monkeypatch):
    """With x, the constants and the modules' weights in float32, f's value and the
    Jacobians of jacfwd and jacrev are float32 (as PyTorch's): no float64 array made inside
    a rule (a tie's share of a maximum, ...) promotes the dual numbers' tangents."""
    f32 = dl.float32
    table = sys.modules[__name__]
    monkeypatch.setattr(table, "_constant", lambda values: dl.tensor(values, dtype=f32))
    monkeypatch.setattr(table, "_IMAGE", _IMAGE.to(f32))
    monkeypatch.setattr(table, "_GRID", _GRID.to(f32))
    monkeypatch.setattr(table, "_MODULES", _modules(f32))

    def g(x):
        return dl.sum(NN_FORWARD_FACES[name](x))

    x = dl.tensor(POINTS, dtype=f32)
    assert g(x).dtype == f32, "the table's entry is not all float32"
    forward, reverse = func.jacfwd(g)(x), func.jacrev(g)(x)
    assert (forward.dtype, reverse.dtype) == (f32, f32)
    np.testing.assert_allclose(forward.numpy(), reverse.numpy(), rtol=1e-4, atol=1e-4)


#: Where vmap of jacfwd refuses an entry of NN_FORWARD_FACES, and why: the values of one
#: example decide in Python (the pixels a grid reads), a buffer is written (the running
#: statistics), or f draws (gumbel_softmax: randomness='same' maps it).  (The maxima's
#: indices, which max_unpool scatters at, map: index_put's rule takes a batched index.)
NN_VMAP_REFUSED = {
    **dict.fromkeys(["batch_norm_running_stats", "BatchNorm2d_train"],
                    "reads or writes a batched tensor's values directly"),
    **dict.fromkeys(["grid_sample_grid", "grid_sample_nearest_border", "spatial_transformer",
                     "grid_sample_grid_reflection", "grid_sample_grid_bicubic"],
                    "grid_sample turning the grid into pixel indices needs the value of a "
                    "batched tensor"),
    **dict.fromkeys(["gumbel_softmax", "gumbel_softmax_hard"], "called a random operation"),
}
#: The composites added to NN_FORWARD_FACES with the transforms' composition checked.
NN_COMPOSITES = list(NN_FORWARD_FACES)[list(NN_FORWARD_FACES).index("interpolate_nearest"):]


@pytest.mark.parametrize("name", NN_COMPOSITES)
def test_nn_functional_faces_under_composed_transforms(name):
    """hessian (jacfwd over jacrev), dl.hessian by forward mode, jvp and vmap(jacfwd) of
    the composites agree with reverse mode (jacrev of jacrev, jacrev per example); where
    vmap cannot map one, its error says why."""
    f = NN_FORWARD_FACES[name]

    def g(x):
        return dl.sum(f(x))

    x, v = dl.tensor(POINTS, dtype=dl.float64), dl.tensor([1.0, -2.0, 0.5], dtype=dl.float64)
    expected = func.jacrev(func.jacrev(g))(x).numpy()
    np.testing.assert_allclose(func.hessian(g)(x).numpy(), expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(dl.hessian(g, method="forward")(x), dtype=float),
                               expected, rtol=1e-10, atol=1e-12)
    gradient = func.jacrev(g)(x).numpy()
    np.testing.assert_allclose(func.jvp(g, (x,), (v,))[1].numpy(), gradient @ v.numpy(),
                               rtol=1e-10, atol=1e-12)
    batch = dl.stack([x, x * 0.9])
    if name in NN_VMAP_REFUSED:
        with pytest.raises((RuntimeError, NotImplementedError), match=NN_VMAP_REFUSED[name]):
            func.vmap(func.jacfwd(g))(batch)
        return
    np.testing.assert_allclose(func.vmap(func.jacfwd(g))(batch).numpy(),
                               np.stack([gradient, func.jacrev(g)(x * 0.9).numpy()]),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(("f", "expected"), [
    # a row that may attend to nothing is NaN (PyTorch's), and so is its derivative
    (lambda x: F.scaled_dot_product_attention(
        x.reshape(1, 3, 1), (x * x).reshape(1, 3, 1), x.reshape(1, 3, 1),
        attn_mask=dl.tensor([[True, False, True], [False, False, False], [True] * 3])),
     [np.nan] * 3),
    # padding an empty dimension: only the fill, which is no function of x
    (lambda x: F.pad(x[:0].reshape(1, 0), (1, 2), value=1.5) * x[0], [4.5, 0.0, 0.0]),
    # -0.0 and 0.0 in a batch: normalised to ±1, whatever x is
    (lambda x: F.batch_norm(dl.stack([x * 0.0, x * -0.0 + 1.0]), None, None, training=True),
     [0.0, 0.0, 0.0]),
])
def test_nn_functional_edges_same_in_forward_mode(f, expected):
    """Edge inputs give forward mode, jacfwd and reverse mode the same derivative."""
    import warnings

    def g(x):
        return dl.sum(f(x))

    x = dl.tensor(POINTS, dtype=dl.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the DomainWarning of a NaN result)
        for got in (dl.grad(g, method="forward")(x), dl.grad(g, method="reverse")(x),
                    func.jacfwd(g)(x).numpy()):
            np.testing.assert_allclose(np.asarray(got, dtype=float), expected, atol=1e-12)


@pytest.mark.parametrize("name", NN_SYMBOLIC)
def test_nn_functional_faces_take_symbols_same_derivative_as_reverse(name):
    """The composites whose result is an expression of x differentiate symbolically."""
    g = lambda x: dl.sum(NN_FORWARD_FACES[name](x))  # noqa: E731
    x = dl.tensor(POINTS)
    np.testing.assert_allclose(np.asarray(dl.grad(g, method="symbolic")(x), dtype=float),
                               np.asarray(dl.grad(g, method="reverse")(x), dtype=float),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", NN_SYMBOLIC_REFUSED)
def test_nn_functional_faces_refuse_symbols_with_the_reason(name):
    """The others read x's values (indices, running averages): a clear refusal."""
    from difflab.diff.symbolic import SymbolicTraceError

    with pytest.raises(SymbolicTraceError, match=NN_SYMBOLIC_REFUSED[name]):
        dl.grad(lambda x: dl.sum(NN_FORWARD_FACES[name](x)), method="symbolic")(
            dl.tensor(POINTS))


def test_scatter_reduce_amax_of_dual_numbers_and_its_refusal_under_symbolic():
    """scatter_reduce's amax and amin read the order of the values: forward mode gives
    reverse mode's derivative (jacfwd too, dual numbers inside a tensor: index_put writes
    them into an array by their handler), symbolic refuses with the reason."""
    def g(x):
        return dl.sum(dl.scatter_reduce(x * x, 0, dl.tensor([0, 0, 2]), x, "amax") * x)

    x = dl.tensor(POINTS)
    np.testing.assert_allclose(dl.grad(g, method="forward")(x),
                               dl.grad(g, method="reverse")(x), rtol=1e-13)
    np.testing.assert_allclose(func.jacfwd(g)(x).numpy(), dl.grad(g, method="reverse")(x),
                               rtol=1e-13)
    from difflab.diff.symbolic import SymbolicTraceError

    with pytest.raises(SymbolicTraceError, match=r"scatter_reduce: symbols have no order "
                                                 r"\(the amax .*method='forward'"):
        dl.grad(g, method="symbolic")(x)


#: scatter_reduce's and index_reduce's reductions read from a table of the groups, at the
#: edges: ties (among the values sent, with the input's own value, three-way), zeros of a
#: product (one: the others' product; two: zero), -0.0 beside 0.0, nan (the maximum: the
#: nan entries share the gradient, as PyTorch's).  f, its point, and whether f is smooth
#: around the point (no tie: gradcheck applies).
SCATTER_REDUCE_EDGES = {
    "amax_ties_among_src": (lambda x: dl.scatter_reduce(
        x * 0.0 + 1.0, 0, dl.tensor([0, 0, 2, 0]), x, "amax", include_self=False),
        [0.4, 0.4, 2.7, -1.0], False),
    "amax_tie_with_self": (lambda x: dl.scatter_reduce(
        x, 0, dl.tensor([0, 0, 2, 0]), x * 0.0 + x[:1], "amax"), [0.4, 0.4, 2.7, -1.0], False),
    "amin_three_way_tie": (lambda x: dl.scatter_reduce(
        x * x, 0, dl.tensor([1, 1, 1, 0]), x, "amin"), [0.4, 0.4, 0.4, 0.16], False),
    "amin_signed_zeros": (lambda x: dl.scatter_reduce(
        x * 2.0, 0, dl.tensor([0, 0, 2, 0]), x, "amin", include_self=False),
        [-0.0, 0.0, 2.7, 1.0], False),
    "amax_no_tie": (lambda x: dl.scatter_reduce(
        x * x, 0, dl.tensor([0, 0, 2, 1]), x, "amax"), [-1.3, 0.4, 2.7, 0.9], True),
    "amin_no_tie_exclude_self": (lambda x: dl.scatter_reduce(
        x * x, 0, dl.tensor([3, 3, 2, 3]), x, "amin", include_self=False),
        [-1.3, 0.4, 2.7, 0.9], True),
    "prod_one_zero": (lambda x: dl.scatter_reduce(
        x * x + 1.0, 0, dl.tensor([0, 0, 2, 0]), x, "prod"), [0.0, 0.4, 2.7, -1.0], True),
    "prod_two_zeros": (lambda x: dl.scatter_reduce(
        x + 1.0, 0, dl.tensor([0, 0, 2, 0]), x, "prod", include_self=False),
        [0.0, -0.0, 2.7, -1.0], True),
    "prod_zero_self": (lambda x: dl.scatter_reduce(
        x - 0.4, 0, dl.tensor([1, 1, 2, 1]), x, "prod"), [0.0, 0.4, 2.7, -1.0], True),
    "amax_nan": (lambda x: dl.scatter_reduce(
        x * 2.0, 0, dl.tensor([0, 0, 2, 0]), x, "amax"), [np.nan, 0.4, 2.7, -1.0], False),
    "amin_nan_exclude_self": (lambda x: dl.scatter_reduce(
        x * 2.0, 0, dl.tensor([1, 1, 2, 1]), x, "amin", include_self=False),
        [0.3, np.nan, 2.7, np.nan], False),
    "index_reduce_amax_tie": (lambda x: dl.index_reduce(
        x.reshape(2, 2), 0, dl.tensor([1, 1]), (x * x).reshape(2, 2), "amax").reshape(-1),
        [0.4, -0.4, 0.4, 2.7], False),
    "index_reduce_amin_exclude_self": (lambda x: dl.index_reduce(
        x.reshape(2, 2), 0, dl.tensor([0, 0]), (x * 3.0).reshape(2, 2), "amin",
        include_self=False).reshape(-1), [-1.3, 0.4, 2.7, 0.9], True),
    "index_reduce_prod_zero": (lambda x: dl.index_reduce(
        x.reshape(2, 2), 0, dl.tensor([0, 0]), (x * x).reshape(2, 2), "prod",
        include_self=False).reshape(-1), [0.0, -0.4, 0.4, 2.7], True),
}


@pytest.mark.parametrize("name", SCATTER_REDUCE_EDGES)
def test_scatter_reduce_prod_amax_amin_by_jacfwd_same_derivative_as_reverse(name):
    """jacfwd (dual numbers inside a tensor) and forward mode differentiate scatter_reduce
    and index_reduce with "prod", "amax", "amin" (include_self or not) as reverse mode
    (backward) and jacrev: a product's rule exact at zeros, tied extremes sharing the
    gradient evenly (PyTorch's), nan extremes taking it.  gradcheck where f is smooth."""
    f, point, smooth = SCATTER_REDUCE_EDGES[name]
    weights = dl.tensor([1.0, 2.0, 3.0, 4.0], dtype=dl.float64)

    def g(v):
        return dl.sum(f(v) * weights)

    x = dl.tensor(point, dtype=dl.float64, requires_grad=True)
    g(x).backward()
    expected = x.grad.numpy()
    assert np.isfinite(expected).all()
    x = x.detach()
    results = {"jacfwd": func.jacfwd(g)(x).numpy(), "jacrev": func.jacrev(g)(x).numpy()}
    if not np.isnan(point).any():  # (dl.grad gives nan for all at a point where f is nan)
        results.update({m: np.asarray(dl.grad(g, method=m)(x), dtype=float)
                        for m in ("forward", "reverse", "compiled")})
    for method, result in results.items():
        np.testing.assert_allclose(result, expected, rtol=1e-13, atol=1e-15,
                                   err_msg=f"{name}: {method} vs backward")
    if smooth:
        assert gradcheck(g, (dl.tensor(point, dtype=dl.float64, requires_grad=True),))


@pytest.mark.parametrize("reduce", [dl.amax, dl.amin])
def test_amax_and_amin_of_nan_give_the_gradient_to_the_nan_entries(reduce):
    """A nan is the extreme of the values that hold it: its entries share the gradient
    (PyTorch's evenly_distribute_backward), by backward and by jacfwd; a row without nan
    keeps the rule of ties.  (x == nan marked none before: 0/0, nan for every entry.)"""
    point = [[1.0, np.nan, 3.0, np.nan], [5.0, -1.0, 5.0, -1.0]]
    x = dl.tensor(point, dtype=dl.float64, requires_grad=True)
    reduce(x, 1).sum().backward()
    tie = [0.5, 0.0, 0.5, 0.0] if reduce is dl.amax else [0.0, 0.5, 0.0, 0.5]
    np.testing.assert_array_equal(x.grad.numpy(), [[0.0, 0.5, 0.0, 0.5], tie])
    jacobian = func.jacfwd(lambda v: reduce(v, 1))(x.detach()).numpy()
    np.testing.assert_array_equal(jacobian.sum(0), x.grad.numpy())


def _forward_same_as_reverse(f, numeric: bool, rtol: float = 1e-13):
    """Assert that forward mode (a Dual; jacfwd, dual numbers in a tensor) and numeric
    (where f takes arrays) give reverse mode's derivative of ``sum(f(x))`` at POINTS (to
    ``rtol``); returns that function."""
    def g(x):
        return dl.sum(f(x))

    x = dl.tensor(POINTS)
    expected = np.asarray(dl.grad(g, method="reverse")(x), dtype=float)
    np.testing.assert_allclose(np.asarray(dl.grad(g, method="forward")(x), dtype=float),
                               expected, rtol=rtol, atol=rtol / 10)
    np.testing.assert_allclose(func.jacfwd(g)(x).numpy(), expected, rtol=rtol, atol=rtol / 10)
    if numeric:
        np.testing.assert_allclose(np.asarray(dl.grad(g, method="numeric")(x), dtype=float),
                                   expected, rtol=1e-6, atol=1e-8)
    return g


def test_detach_of_a_dual_number_is_a_constant_as_on_the_tape():
    """x.detach() in forward mode drops the tangent, as reverse mode's cuts the tape; the
    faces that shift by a detached value (hypot, logaddexp) differentiate in forward mode."""
    c = dl.tensor([0.5, -1.0, 2.0])
    for f in (lambda x: dl.hypot(x, c), lambda x: dl.logaddexp(x, c)):
        g = lambda x, f=f: dl.sum(f(x))  # noqa: E731
        results = {m: np.asarray(dl.grad(g, method=m)(dl.tensor(POINTS)), dtype=float)
                   for m in ("forward", "reverse", "numeric")}
        np.testing.assert_allclose(results["forward"], results["reverse"], rtol=1e-13)
        np.testing.assert_allclose(results["numeric"], results["reverse"], rtol=1e-6)
    np.testing.assert_allclose(dl.grad(lambda x: dl.sum(x.detach() * x), method="reverse")(
        dl.tensor(POINTS)), POINTS)
    np.testing.assert_allclose(dl.grad(lambda x: dl.sum(x.detach() * x), method="forward")(
        dl.tensor(POINTS)), POINTS)


def test_detach_of_symbols_is_a_constant_as_on_the_tape():
    """x.detach() under symbolic is sympy's detached(x): the value, derivative 0 (before,
    a SymbolArray had no .array to detach), printed as x in the compiled expression."""
    def f(x):
        return dl.sum(x.detach() * x + (x * x).detach() * dl.sin(x))

    expected = POINTS + POINTS**2 * np.cos(POINTS)
    for method in ("reverse", "forward", "symbolic"):
        np.testing.assert_allclose(dl.grad(f, method=method)(dl.tensor(POINTS)), expected,
                                   rtol=1e-13, err_msg=method)
    from difflab.diff.sympy_functions import detached

    x = sympy.Symbol("x")
    assert sympy.diff(detached(x) * x, x) == detached(x)
    assert detached(sympy.Integer(2)) == 2
    assert sympy.lambdify(x, detached(x) * x)(3.0) == 9.0


# ------------------------------------------------------------- stop-gradients, every method
#
# A stop-gradient (``x.detach()``, ``x.data``, ``detach_()``) keeps the values and cuts the
# derivative: every method and every transform, at every level (JAX's stop_gradient), gives
# the tape's answer; finite differences too, which hold each stop at its value at the
# unperturbed point (FrozenStops).  One exception, by design: a ``no_grad`` block is the
# tape's switch, which forward mode, sympy and finite differences do not see (PyTorch: "this
# API does not apply to forward-mode AD"), so they differentiate the values there.
# Each case: f of v (a scalar), the gradient the stop gives, the gradient of the values.

def _no_grad_block(v):
    with dl.no_grad():
        c = v * v
    return dl.sum(c * v)


def _detach_in_place(v):
    c = v * 1.0
    c.detach_()
    return dl.sum(c * v)


def _detach_intermediate(v):
    h = (v * 2.0).exp()
    return dl.sum(h.detach() * v + h)


STOP_GRADIENT_CASES = {
    "v.detach()*v": (lambda v: dl.sum(v.detach() * v), lambda x: x, lambda x: 2 * x),
    "v - v.detach()": (lambda v: dl.sum((v - v.detach()) * v.exp()), np.exp,
                       lambda x: 0 * x),
    "no_grad block": (_no_grad_block, lambda x: x**2, lambda x: 3 * x**2),
    ".data": (lambda v: dl.sum(v.data * v.sin()), lambda x: x * np.cos(x),
              lambda x: np.sin(x) + x * np.cos(x)),
    "detach of an intermediate": (_detach_intermediate, lambda x: 3 * np.exp(2 * x),
                                  lambda x: (3 + 2 * x) * np.exp(2 * x)),
    "detach_()": (_detach_in_place, lambda x: x, lambda x: 2 * x),
    # a conversion by as_tensor/asarray is cut from differentiation (compiled kept it, and
    # numeric, symbolic and forward mode saw through as_tensor's)
    "as_tensor(v, dtype)": (lambda v: dl.sum(dl.as_tensor(v, dtype=dl.float64) * v),
                            lambda x: x, lambda x: 2 * x),
    "asarray(v, dtype)": (lambda v: dl.sum(dl.asarray(v, dtype=dl.float64) * v),
                          lambda x: x, lambda x: 2 * x),
}


def _jvp_gradient(f, x):
    """∇f by forward mode, one basis direction at a time (func.jvp)."""
    eye = np.eye(x.numel())
    return np.array([float(func.jvp(f, (x,), (dl.tensor(e),))[1]) for e in eye])


def _compiled_backward(f, x):
    """``loss.backward()`` through dl.compile, on the second call (the graph's replay)."""
    compiled = dl.compile(f)
    compiled(x.clone())
    leaf = x.clone().requires_grad_()
    compiled(leaf).backward()
    return leaf.grad.numpy()


def _traced_backward(f, x):
    traced = dl.jit.trace(f, x.clone())
    leaf = x.clone().requires_grad_()
    traced(leaf).backward()
    return leaf.grad.numpy()


#: How each method or transform takes ∇f at x (a float64 tensor).
GRADIENT_RUNNERS = {
    **{m: lambda f, x, m=m: dl.grad(f, method=m)(x)
       for m in ("reverse", "forward", "symbolic", "compiled", "numeric")},
    "func.grad": lambda f, x: func.grad(f)(x).numpy(),
    "func.jacrev": lambda f, x: func.jacrev(f)(x).numpy(),
    "func.jacfwd": lambda f, x: func.jacfwd(f)(x).numpy(),
    "func.jvp": _jvp_gradient,
    "func.vjp": lambda f, x: func.vjp(f, x)[1](dl.tensor(1.0, dtype=dl.float64))[0].numpy(),
    "vmap(grad)": lambda f, x: func.vmap(func.grad(f))(dl.stack([x, x])).numpy()[1],
    "dl.compile backward": _compiled_backward,
    "jit.trace backward": _traced_backward,
}
#: The approximate method (compared to its truncation error), and those that do not see
#: the tape's no_grad switch.
APPROXIMATE = {"numeric"}
NO_GRAD_UNSEEN = {"forward", "symbolic", "func.jacfwd", "func.jvp", "numeric"}
#: A dual number or a sympy expression is not written into: detach_() is refused, clearly.
REFUSED = {("detach_()", "forward"), ("detach_()", "symbolic")}


def _expected_gradient(case: str, method: str) -> np.ndarray:
    _, stopped, values = STOP_GRADIENT_CASES[case]
    seen = case == "no_grad block" and method in NO_GRAD_UNSEEN
    return (values if seen else stopped)(POINTS)


@pytest.mark.parametrize("method", GRADIENT_RUNNERS)
@pytest.mark.parametrize("case", STOP_GRADIENT_CASES)
def test_stop_gradients_by_every_method_and_transform(case, method):
    """Each method's gradient through a stop-gradient equals the one written by hand (and
    the tape's): compiled, jacfwd and numeric were wrong or refused before (numeric gave
    the values' gradient, 2v for v.detach()*v)."""
    f = STOP_GRADIENT_CASES[case][0]
    x = dl.tensor(POINTS, dtype=dl.float64)
    if (case, method) in REFUSED:
        with pytest.raises(TypeError, match="in place"):
            GRADIENT_RUNNERS[method](f, x)
        return
    got = np.asarray(GRADIENT_RUNNERS[method](f, x), dtype=float)
    loose = method in APPROXIMATE
    np.testing.assert_allclose(got, _expected_gradient(case, method),
                               rtol=1e-6 if loose else 1e-12, atol=1e-8 if loose else 1e-14)
    if _expected_gradient(case, method) is not None and not loose and (
            case != "no_grad block" or method not in NO_GRAD_UNSEEN):
        np.testing.assert_allclose(got, np.asarray(dl.grad(f)(x), dtype=float), rtol=1e-12)


#: Second order: f, the Hessian the stop gives, the Hessian of the values.
STOP_GRADIENT_HESSIANS = {
    "v.detach()*v**2": (lambda v: dl.sum(v.detach() * v**2), lambda x: np.diag(2 * x),
                        lambda x: np.diag(6 * x)),
    "(v - v.detach())*exp(v)": (lambda v: dl.sum((v - v.detach()) * v.exp()),
                                lambda x: np.diag(2 * np.exp(x)), lambda x: 0 * np.eye(x.size)),
}
HESSIAN_RUNNERS = {
    **{m: lambda f, x, m=m: dl.hessian(f, method=m)(x)
       for m in ("reverse", "forward", "symbolic", "compiled", "numeric")},
    "forward-over-reverse": lambda f, x: dl.hessian(f, method="forward",
                                                    hessian="forward-over-reverse")(x),
    "reverse-over-forward": lambda f, x: dl.hessian(f, method="reverse",
                                                    hessian="reverse-over-forward")(x),
    "func.hessian": lambda f, x: func.hessian(f)(x).numpy(),
    "jacfwd(jacrev)": lambda f, x: func.jacfwd(func.jacrev(f))(x).numpy(),
    "jacrev(jacrev)": lambda f, x: func.jacrev(func.jacrev(f))(x).numpy(),
    "jacfwd(jacfwd)": lambda f, x: func.jacfwd(func.jacfwd(f))(x).numpy(),
    "jacfwd(grad)": lambda f, x: func.jacfwd(func.grad(f))(x).numpy(),
    "vmap(hessian)": lambda f, x: func.vmap(func.hessian(f))(dl.stack([x, x])).numpy()[0],
}


@pytest.mark.parametrize("method", HESSIAN_RUNNERS)
@pytest.mark.parametrize("case", STOP_GRADIENT_HESSIANS)
def test_stop_gradients_to_second_order_by_every_method_and_transform(case, method):
    """A stop inside f stops every level of a nested derivative (forward over reverse
    too: the transforms' own bookkeeping keeps the outer tangents, a user's detach not)."""
    f, stopped, values = STOP_GRADIENT_HESSIANS[case]
    x = dl.tensor(POINTS, dtype=dl.float64)
    got = np.asarray(HESSIAN_RUNNERS[method](f, x), dtype=float)
    loose = method in APPROXIMATE  # (second differences: the stops held at x too)
    np.testing.assert_allclose(got, stopped(POINTS), rtol=1e-4 if loose else 1e-12,
                               atol=1e-4 if loose else 1e-14)
    assert not np.allclose(stopped(POINTS), values(POINTS), atol=1e-2)  # (a case that can fail)


@pytest.mark.parametrize("scheme", ["central", "forward", "backward", "richardson",
                                    "adaptive", "complex"])
def test_finite_differences_hold_each_stop_at_the_unperturbed_point(scheme):
    """Every scheme, to first and second order (the complex step: the real base values),
    gives the stop's derivative: before, numeric differentiated the values (2v, not v)."""
    x = dl.tensor(POINTS, dtype=dl.float64)
    one_sided = scheme in ("forward", "backward")
    for case in [c for c in STOP_GRADIENT_CASES if c != "no_grad block"]:
        f, stopped, _ = STOP_GRADIENT_CASES[case]
        got = dl.grad(f, method="numeric", scheme=scheme)(x)
        np.testing.assert_allclose(got, stopped(POINTS), rtol=1e-5 if one_sided else 1e-8,
                                   atol=1e-5 if one_sided else 1e-8, err_msg=case)
    for case, (f, stopped, _) in STOP_GRADIENT_HESSIANS.items():
        got = dl.hessian(f, method="numeric", scheme=scheme)(x)
        np.testing.assert_allclose(got, stopped(POINTS), atol=1e-3 if one_sided else 1e-5,
                                   err_msg=case)


def _stops_by_path(v):
    """A stop of v, of v[1:] or none, by the value of v[0]: control flow."""
    if float(v[0]) > 0.4:
        return dl.sum(v.detach() * v)
    if float(v[0]) > 0.3:
        return dl.sum(v[1:].detach() * v[1:])
    return dl.sum(v * v)


@pytest.mark.parametrize("x0, what", [
    (0.4 + 1e-9, r"stop-gradient #1 .* shape \(2,\) at a perturbed point, but to one of "
                 r"shape \(3,\) at the unperturbed"),
    (0.3 + 1e-9, "applied 0 stop-gradients .* at a perturbed point, but 1 at the unperturbed"),
    (0.3 - 1e-9, "applied more stop-gradients .* than the 0 it applied at the unperturbed"),
])
def test_a_stop_applied_on_another_path_at_a_perturbed_point_is_a_clear_error(x0, what):
    """Held values are matched by call order, so a perturbation that changes which stops f
    applies cannot be answered: the error says so and names the methods that can."""
    x = np.array([x0, 1.0, 2.0])
    with pytest.raises(RuntimeError, match=what) as error:
        dl.grad(_stops_by_path, method="numeric")(x)
    assert "control flow" in str(error.value)
    assert "method='reverse', 'forward' or 'symbolic'" in str(error.value)
    assert np.isfinite(dl.grad(_stops_by_path, method="reverse")(x)).all()


@pytest.mark.parametrize("inner", ["reverse", "forward", "symbolic", "numeric"])
def test_finite_differences_around_another_derivative_hold_its_stops_too(inner):
    """A stop inside a nested derivative stops the outer one as well (JAX's stop_gradient at
    every level): d/dx Σ ∂/∂y[detach(y)·y·x] at y = x is x, by reverse over reverse and by
    numeric around reverse, forward, symbolic (its compiled ``detached(e)`` reads the held
    value) or numeric (whose own stops take their values from the enclosing one): all 2x
    before."""
    x = np.array([1.0, -2.0, 0.5])

    def f(v):
        return dl.sum(dl.grad(lambda y: dl.sum(y.detach() * y * v), method=inner)(v))

    if inner in ("reverse", "forward"):  # (numeric and symbolic inside reverse: not taken)
        np.testing.assert_allclose(dl.grad(f, method="reverse")(x), x, rtol=1e-12)
    np.testing.assert_allclose(dl.grad(f, method="numeric")(x), x, rtol=1e-5)
    # (and a stop of the outer function around the inner derivative is the outer one's:
    # g = f(v)·Σ detach(v)·v = (Σ x·v)², whose gradient is 2 (Σ x²) x)
    g = lambda v: dl.sum(v.detach() * f(v) * v)  # noqa: E731
    np.testing.assert_allclose(dl.grad(g, method="numeric")(x), 2 * (x @ x) * x, rtol=1e-5)
    if inner in ("reverse", "forward"):
        np.testing.assert_allclose(dl.grad(g, method="reverse")(x), 2 * (x @ x) * x,
                                   rtol=1e-12)


def test_held_stops_are_per_thread():
    """The held values live in a ContextVar: numeric derivatives in two threads at once
    each hold their own stops (a shared slot would hand one thread the other's)."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    together = threading.Barrier(2, timeout=10)
    first = threading.local()

    def f(v):  # (the base evaluations of both threads run at once, then each detaches)
        if not getattr(first, "done", False):
            first.done = True
            together.wait()
        return dl.sum(v.detach() * v)

    points = [np.array([1.0, 2.0]), np.array([-3.0, 5.0])]
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda p: dl.grad(f, method="numeric")(p), points))
    for p, got in zip(points, results):
        np.testing.assert_allclose(got, p, rtol=1e-6)


def test_the_stop_gradient_is_one_primitive_every_interpreter_reads():
    """``detach`` is the registry's primitive without a derivative: identity values (on
    the same memory), zero tangent, sympy's ``detached``; covered by the table above."""
    op = registry.PRIMITIVES["detach"]
    assert not op.differentiable and op.stops_gradient and op.symbolic is not None
    assert op.jvp(None, np, None) is None
    x = dl.tensor([1.0, 2.0], requires_grad=True)
    d = x.detach()
    assert not d.requires_grad and np.shares_memory(d.array, x.array)
    assert d._version is x._version  # (an in-place change of either is seen by autograd)
    graph = dl.jit.trace(lambda v: v.detach() * v, dl.tensor([1.0, 2.0])).graph
    assert [n.op_name for n in graph.nodes] == ["detach", "mul"]


def test_a_stop_gradient_on_each_device(device):
    """detach on CuPy arrays (or the stand-in): a view of the same memory, and the
    gradient stops there on the tape and in a compiled graph alike."""
    x = dl.tensor([1.0, 2.0, 3.0], device=device, dtype=dl.float64)
    leaf = x.clone().requires_grad_()
    d = leaf.detach()
    assert d.device == leaf.device and not d.requires_grad
    (d * leaf).sum().backward()
    np.testing.assert_allclose(leaf.grad.cpu().numpy(), [1.0, 2.0, 3.0])
    compiled = dl.compile(lambda v: (v.detach() * v).sum())
    compiled(x.clone())
    leaf = x.clone().requires_grad_()
    compiled(leaf).backward()
    np.testing.assert_allclose(leaf.grad.cpu().numpy(), [1.0, 2.0, 3.0])


def test_tensor_methods_a_dual_number_cannot_run_are_clear_errors():
    """In place (a Dual is a value) or reading a tensor's storage: a TypeError that says so."""
    with pytest.raises(TypeError, match=r"Dual.add_\(\) changes .*x = x.add\(...\)"):
        Dual(1.0, 1.0).add_(1.0)
    with pytest.raises(TypeError, match=r"Dual.tolist\(\) reads what only a tensor has"):
        Dual(np.array([1.0, 2.0]), 1.0).tolist()
    assert float(Dual(np.array([1.0, 2.0]), 1.0).exp().sum().tangent) == pytest.approx(
        math.e + math.e ** 2)


def test_a_comparison_of_dual_numbers_is_an_array_with_tensor_methods():
    """``x > 0`` of a Dual stays a NumPy array (the rules compare nested dual numbers with
    it), with a constant tensor's methods: ``.float()``, ``.to(x.dtype)``; NumPy's
    operations on it give plain arrays."""
    x = Dual(np.array([1.5, -2.0]), np.array([1.0, 1.0]))
    mask = x > 0
    assert isinstance(mask, np.ndarray) and mask.tolist() == [True, False]
    for converted in (mask.float(), mask.to(x.dtype), mask.type(dl.float64), mask.double()):
        assert isinstance(converted, Tensor) and not converted.requires_grad
        assert converted.tolist() == [1.0, 0.0]
    assert type(mask & (x < 2)) is np.ndarray and type(~mask) is np.ndarray
    y = (x > 0).to(x.dtype) * x  # (a constant factor: the tangent where the mask is 1)
    assert isinstance(y, Dual) and y.tangent.tolist() == [1.0, 0.0]
    assert float(dl.floor(Dual(2.5, 1.0)).to(dl.float64)) == 2.0


@pytest.mark.parametrize("f", [
    lambda x: (x.reshape(3, 1) * x).max(1).values * x,
    lambda x: (x.reshape(3, 1) * x).min(dim=0, keepdim=True).values.sum(0) * x,
    lambda x: x.max(x * x) * x.min(dl.tensor([0.5, -1.0, 2.0])),
    lambda x: x.max() * x.min() * x,
    lambda x: x.int() * x + x.long() * x * x + x.bool() * x,
    lambda x: (x * 10).to(dl.int64).to(x.dtype) * x,
    # (a dtype test reads the kind, the count the shape: a Dual's dtype is NumPy's)
    lambda x: x.round(decimals=1) * x,
    lambda x: dl.aminmax(x * x).max * x,
    lambda x: dl.where(dl.isreal(x), x * x, -x),
    lambda x: dl.linalg.cholesky(x.reshape(3, 1) * x + 10.0 * dl.eye(3, dtype=dl.float64)),
], ids=["max_dim", "min_dim_keepdim", "max_other", "max_all", "int_long_bool", "to_int64",
        "round_decimals", "aminmax", "isreal", "cholesky_mT"])
def test_tensor_methods_of_a_dual_number_mean_what_they_mean_on_a_tensor(f):
    """x.max(1) in f is Tensor's (values, indices), as in reverse mode (NumPy's reads 1 as
    an axis and gave the maximum of everything: a wrong derivative); x.int(), x.long(),
    x.bool() are constants (their tangent was the tangent truncated to an integer);
    x.round(decimals=1), dl.aminmax, dl.isreal, linalg.cholesky (x.mT) read a dtype's kind,
    a shape's count, the last two dims swapped of a Dual.
    (Numeric hands f NumPy arrays, which have NumPy's methods only.)"""
    _forward_same_as_reverse(f, numeric=False)


def test_piecewise_constant_primitives_in_forward_mode_and_in_sympy():
    """The issue's example, and what each interpreter makes of ``floor``: a zero tangent
    (``jvp``, ``jacfwd``), sympy's ``floor`` (whose derivative is 0, also by the chain rule)."""
    import sympy

    from difflab.diff import sympy_functions

    def f(x):
        return dl.floor(x) * x

    for method in METHODS:
        assert float(dl.grad(f, method=method)(dl.tensor(2.5))) == 2.0, method
    x = dl.tensor([1.5, 2.5])
    _, tangent = func.jvp(lambda v: dl.floor(v) * dl.sin(v), (x,), (dl.ones(2),))
    np.testing.assert_allclose(tangent.numpy(), np.floor(x.numpy()) * np.cos(x.numpy()))
    np.testing.assert_allclose(func.jacfwd(lambda v: dl.round(v, decimals=1))(x).numpy(),
                               np.zeros((2, 2)))
    rounded = dl.round(Dual(2.345, 1.0), decimals=2)  # a piecewise-constant value, no tangent
    assert not isinstance(rounded, Dual)
    assert float(rounded) == float(dl.round(dl.tensor(2.345, dtype=dl.float64), decimals=2))
    s = sympy.Symbol("s", real=True)
    assert dl.floor(s) == sympy.floor(s)
    assert dl.ceil(s) == sympy.ceiling(s)
    # a symbol stands for a value, which may be nan or ±inf (sympy's real symbol is finite):
    # the test stays, and so does the one of log(s) (nan below 0 for NumPy; finite for sympy)
    assert dl.isfinite(s).item() == sympy_functions.isfinite(s)
    assert dl.isfinite(sympy.Float(2.0)).item() is sympy.true
    g = lambda v: dl.where(dl.isfinite(dl.log(v)), v * v, -v)  # noqa: E731
    for method in (*METHODS, "compiled"):
        assert float(dl.grad(g, method=method)(dl.tensor(-1.0))) == pytest.approx(-1.0), method
        assert float(dl.grad(g, method=method)(dl.tensor(2.0))) == pytest.approx(4.0), method
    assert dl.gt(s, 1) == (s > 1)
    # d/dx ⌊x²⌋·x = ⌊x²⌋: sympy's Subs(Derivative(floor(ξ), ξ), ξ, x²) of the chain rule is 0
    found = differentiators.Symbolic().expressions(lambda v: dl.floor(v * v) * v, 1.2)
    (x_symbol,) = found.symbols
    assert list(found.derivative) == [sympy.floor(x_symbol ** 2)]


def test_every_primitive_is_a_primitive_and_declares_what_is_read():
    """The engine and the jit read plain attributes: every primitive has each, by default."""
    from difflab.ops.primitive import Primitive

    attributes = ("name", "math", "description", "differentiable", "double_backward",
                  "first_order_is_cheaper", "user_code", "traced_as", "rule", "fusion",
                  "prepare", "describe", "jvp", "forward", "vjp", "shape_read_from")
    lines = inspect.getsource(Primitive).splitlines()
    for attribute in attributes:
        assert hasattr(Primitive, attribute), attribute
        if callable(getattr(Primitive, attribute)):  # a method: its own docstring
            assert getattr(Primitive, attribute).__doc__, attribute
            continue
        at = next(i for i, line in enumerate(lines) if line.startswith(f"    {attribute}:"))
        assert lines[at - 1].startswith("    #: "), f"{attribute} has no one-line docstring"
    for name, op in registry.PRIMITIVES.items():
        is_one = isinstance(op, Primitive) or (isinstance(op, type) and issubclass(op, Primitive))
        assert is_one, name
        assert op.name == name
    fusions = {name: op.fusion for name, op in registry.PRIMITIVES.items() if op.fusion}
    assert fusions["sum"] == fusions["mean"] == "reduction"
    assert fusions["sin"] == fusions["mul"] == "elementwise"
    assert (fusions["index"], fusions["scatter_add"]) == ("window", "scatter")
    assert set(fusions.values()) <= {"elementwise", "reduction", "window", "scatter"}


def test_the_registry_refuses_an_object_that_is_not_a_primitive():
    class Duck:  # forward and vjp, but not a Primitive: the engine could not read it
        name = "duck"

        @staticmethod
        def forward(ctx, xp, x):
            return x

        @staticmethod
        def vjp(ctx, xp, g):
            return (g,)

    with pytest.raises(TypeError, match="must derive from difflab.ops.primitive.Primitive"):
        registry.register(Duck)
    assert "duck" not in registry.PRIMITIVES


def test_cumsum_is_written_once_and_its_faces_are_generated():
    """x.cumsum, dl.cumsum and np.cumsum on a Dual all come from CumSum's declaration."""
    from difflab.diff import Dual
    from difflab.ops import structural

    op = registry.get("cumsum")
    assert op is structural.CumSum and op.tensor_method == op.dl_function == "cumsum"
    assert "cumsum" not in vars(dl.tensor_methods.TensorMethods)  # generated, not written
    x = dl.tensor([[1.0, 2.0], [3.0, -4.0]], requires_grad=True)
    y = x.cumsum(1)
    np.testing.assert_array_equal(y.detach().numpy(), [[1.0, 3.0], [3.0, -1.0]])
    assert y.grad_fn.name() == "CumsumBackward0"
    np.testing.assert_array_equal(dl.cumsum(x, 0).detach().numpy(), [[1.0, 2.0], [4.0, -2.0]])
    np.testing.assert_array_equal(dl.cumsum(x).detach().numpy(), [1.0, 3.0, 6.0, 2.0])
    np.testing.assert_array_equal(dl.cumsum(np.arange(4.0), axis=0), [0.0, 1.0, 3.0, 6.0])
    d = np.cumsum(Dual(np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 2.0])))
    np.testing.assert_array_equal(d.tangent, [1.0, 1.0, 3.0])


def test_a_structural_primitive_registered_at_run_time_gets_its_faces():
    """Adding a primitive takes one place: its class, with its faces declared."""
    from difflab.diff import Dual
    from difflab.diff import dual as dual_module
    from difflab.ops.primitive import Primitive

    class SuffixSum(Primitive):
        """y_i = Σ_{j ≥ i} x_j along ``axis``: JVP the same sum, VJP a prefix sum."""

        name = tensor_method = dl_function = "suffix_sum"
        numpy_function = np.nancumsum  # (a NumPy function Dual does not map yet)

        @staticmethod
        def arguments(input, dim=-1):  # noqa: A002
            """``suffix_sum(input, dim=-1)``: sums from the end."""
            return (input,), {"axis": dim}

        @staticmethod
        def numpy_arguments(a, axis=-1):
            return (a,), {"axis": axis}

        @staticmethod
        def forward(ctx, xp, x, axis):
            ctx.axis = axis
            return xp.flip(xp.cumsum(xp.flip(x, axis), axis=axis), axis)

        @staticmethod
        def vjp(ctx, xp, g):
            return (xp.cumsum(g, axis=ctx.axis),)

        @staticmethod
        def jvp(ctx, xp, dx):
            axis = ctx.axis if ctx.axis < 0 else ctx.axis + 1
            return xp.flip(xp.cumsum(xp.flip(dx, axis), axis=axis), axis)

    assert not hasattr(dl.Tensor, "suffix_sum")
    registry.register(SuffixSum)
    try:
        x = dl.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x.suffix_sum()
        np.testing.assert_array_equal(y.detach().numpy(), [6.0, 5.0, 3.0])
        (y * dl.tensor([1.0, 10.0, 100.0])).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), [1.0, 11.0, 111.0])
        np.testing.assert_array_equal(dl.suffix_sum(np.array([1.0, 2.0])), [3.0, 2.0])
        d = np.nancumsum(Dual(np.array([1.0, 2.0]), np.array([1.0, 0.0])))
        np.testing.assert_array_equal(d.tangent, [1.0, 0.0])
        # documented once, from the registry entry: the function in full, the method links it
        assert "``suffix_sum(input, dim=-1)``" in dl.suffix_sum.__doc__
        assert "See :func:`difflab.suffix_sum`" in dl.Tensor.suffix_sum.__doc__
    finally:
        registry.PRIMITIVES.pop("suffix_sum")
        delattr(dl.Tensor, "suffix_sum")
        delattr(dl, "suffix_sum")
        delattr(dl.functions, "suffix_sum")
        dual_module._ARRAY_FUNCTIONS.pop(np.nancumsum)


FACED = {  # primitive -> (Tensor method, dl. function): generated, never written by hand
    "prod": ("prod", "prod"), "max": ("amax", "amax"), "min": ("amin", "amin"),
    "argmax": ("argmax", "argmax"), "argmin": ("argmin", "argmin"),
    "logsumexp": ("logsumexp", "logsumexp"), "softmax": ("softmax", "softmax"),
    "log_softmax": ("log_softmax", "log_softmax"), "clamp": ("clamp", "clamp"),
}


@pytest.mark.parametrize("name", sorted(FACED))
def test_structural_faces_are_generated_from_the_registry(name):
    op = registry.get(name)
    method, function = FACED[name]
    assert (op.tensor_method, op.dl_function) == (method, function)
    assert method not in vars(dl.tensor_methods.TensorMethods)  # generated, not written
    # the docstrings too come from the registry entry: the function's in full (the call,
    # the declared sections, the rule as Notes), the method's a link to it
    from difflab.ops import docstrings

    assert getattr(dl, function).__doc__ == docstrings.face_docstring(op)
    assert inspect.cleandoc(op.arguments.__doc__) in getattr(dl, function).__doc__
    assert f"See :func:`difflab.{function}`" in getattr(dl.Tensor, method).__doc__


@pytest.mark.parametrize(("call", "want"), [
    (lambda v: dl.prod(v, 0), np.prod),
    (lambda v: dl.amax(v, 0), np.max),
    (lambda v: dl.amin(v, 0), np.min),
    (lambda v: dl.logsumexp(v, 0), lambda a: np.log(np.sum(np.exp(a)))),
])
def test_faced_reductions_take_dual_numbers_arrays_and_tensors(call, want):
    a = np.array([0.5, -1.5, 2.0])
    np.testing.assert_allclose(call(a), want(a))
    np.testing.assert_allclose(call(dl.tensor(a)).numpy(), want(a))
    d = call(Dual(a, np.array([1.0, 2.0, 3.0])))  # the primitive's JVP, pushed
    h = 1e-7
    np.testing.assert_allclose(d.tangent, (want(a + h * np.array([1.0, 2.0, 3.0])) - want(a)) / h,
                               rtol=1e-5)


def test_max_and_min_with_dim_give_values_and_indices_on_every_input():
    a = np.array([[1.0, 5.0], [4.0, 2.0]])
    for x in (a, dl.tensor(a)):
        values, indices = dl.max(x, 1)
        np.testing.assert_array_equal(np.asarray(values), [5.0, 4.0])
        np.testing.assert_array_equal(np.asarray(indices), [1, 0])
        np.testing.assert_array_equal(np.asarray(dl.min(x, dim=0).values), [1.0, 2.0])
    values, indices = dl.max(Dual(a, np.ones_like(a)), 1)  # forward mode: a Dual and indices
    np.testing.assert_array_equal(values.primal, [5.0, 4.0])
    np.testing.assert_array_equal(indices, [1, 0])
    x = dl.tensor(a, requires_grad=True)
    assert x.amin(1).grad_fn.name() == "MinBackward0"  # a primitive of its own, not -max(-x)
    dl.min(x, 0).values.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[1.0, 0.0], [0.0, 1.0]])
    assert dl.max(x, dl.tensor(3.0)).shape == (2, 2)  # with a tensor: elementwise


@pytest.mark.filterwarnings("ignore:divide by zero")  # (log 0 = -inf, as NumPy says)
def test_logsumexp_does_not_overflow_and_keeps_minus_infinity():
    x = dl.tensor([1000.0, 1000.0], dtype=dl.float64, requires_grad=True)
    y = dl.logsumexp(x, 0)
    np.testing.assert_allclose(y.item(), 1000.0 + np.log(2.0))
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.5, 0.5])
    assert dl.logsumexp(dl.tensor([-np.inf, -np.inf]), 0).item() == -np.inf
    assert y.grad_fn.name() == "LogsumexpBackward0"  # one primitive, as in PyTorch
    z = dl.logsumexp(dl.tensor([[1, 2], [3, 4]]), dim=1, keepdim=True)  # integers: float32
    assert z.dtype == dl.float32 and z.shape == (2, 1)


def test_max_indices_of_symbols_refused_with_the_methods_that_work():
    """``x.max(0)`` of symbols gives sympy's Max as its values; its indices (and
    ``x.argmax()``, ndarray's method of that name) have no symbolic form: refused, naming
    the values and the methods that give the derivative."""
    from difflab.diff.symbolic import SymbolicTraceError

    for f in (lambda x: x.max(0).indices * x, lambda x: x.argmin() * x):
        with pytest.raises(SymbolicTraceError, match=r"no symbolic form.*\.values.*"
                                                     r"method='forward'/'reverse'"):
            dl.grad(lambda v, f=f: dl.sum(f(v)), method="symbolic")(dl.tensor(POINTS))
