"""torch.autograd.forward_ad (difflab.autograd.forward_ad): dual tensors on forward mode's
dual numbers, against difflab.func.jvp and central differences for the registry's
primitives, with custom Functions (jvp, setup_context, save_for_forward), modules,
forward over reverse, levels and bad input.  The expected numbers are pinned (PyTorch
2.13's, printed by the same calls), so the tests run without torch."""

from __future__ import annotations

import functools

import difflab.autograd.forward_ad as fwAD
import numpy as np
import pytest

import difflab as dl
from difflab.func import functional_call, jvp
from difflab.ops import registry
from difflab.testing import samples
from difflab.testing.samples_complex import complex_table

CASES = samples.primitive_cases()
#: Primitives with no tangent to compare: piecewise constant (a comparison, a rounding,
#: an index, a count: zero tangent, checked by test_a_primitive_without_a_derivative_...)
#: or a random draw.
NO_TANGENT = {name for name, p in registry.PRIMITIVES.items()
              if p.zero_derivative or p.random}
#: to_dtype's sample rounds through float32, whose steps central differences at h = 1e-6
#: see: its tangent is checked against func.jvp only.
NOT_BY_DIFFERENCES = {"to_dtype"}
#: The complex-number primitives: forward mode refuses complex values (abs's JVP is not
#: written for them; tests/core/test_core_complex.py checks the refusal).
COMPLEX = set(complex_table(dl, ((3, 4), (-2, 2))))
DIFFERENTIABLE = sorted(set(CASES) - NO_TANGENT - COMPLEX)


@pytest.fixture(autouse=True)
def _no_level_left_running():
    yield
    assert fwAD._Level.tag is None, "a test left a dual_level running"


def _inputs(case: samples.Case) -> tuple[list, list]:
    """The case's example as tensors (float64), and a tangent for each float input
    (None for integer and boolean inputs, which stay constants)."""
    rng = np.random.default_rng(1)
    primals, tangents = [], []
    for array, (shape, kind) in zip(samples.variants(case)[0], case.specs):
        floating = kind != samples.BOOL and kind[0] != samples.INT
        primals.append(dl.tensor(array, dtype=dl.float64) if floating else dl.tensor(array))
        tangents.append(dl.tensor(rng.standard_normal(shape)) if floating else None)
    return primals, tangents


def _by_dual_tensors(call, primals, tangents):
    with fwAD.dual_level():
        args = [x if t is None else fwAD.make_dual(x, t) for x, t in zip(primals, tangents)]
        out = fwAD.unpack_dual(call(*args))
    return out.primal, out.tangent


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_dual_tensors_give_func_jvps_tangent(name):
    case = CASES[name]
    primals, tangents = _inputs(case)
    value, tangent = _by_dual_tensors(case.call, primals, tangents)
    wanted = [i for i, t in enumerate(tangents) if t is not None]

    def of_floats(*floats):
        args = list(primals)
        for i, x in zip(wanted, floats):
            args[i] = x
        return case.call(*args)

    want_value, want_tangent = jvp(of_floats, tuple(primals[i] for i in wanted),
                                   tuple(tangents[i] for i in wanted))
    np.testing.assert_array_equal(value.numpy(), want_value.numpy())
    assert tangent is not None, f"{name}: the output carries no tangent"
    np.testing.assert_allclose(tangent.numpy(), want_tangent.numpy(), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("name", sorted(set(DIFFERENTIABLE) - NOT_BY_DIFFERENCES))
def test_dual_tensors_give_central_differences(name):
    """The directional derivative (f(x + h t) - f(x - h t)) / 2h, as gradcheck's."""
    case = CASES[name]
    primals, tangents = _inputs(case)
    _, tangent = _by_dual_tensors(case.call, primals, tangents)
    h = 1e-6

    def at(step):
        return case.call(*[x if t is None else x + step * t
                           for x, t in zip(primals, tangents)]).numpy().astype(np.float64)

    difference = (at(h) - at(-h)) / (2 * h)
    np.testing.assert_allclose(tangent.numpy(), difference, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["floor", "sign", "gt", "argmax", "isnan"])
def test_a_primitive_without_a_derivative_gives_a_constant(name):
    primals, tangents = _inputs(CASES[name])
    with fwAD.dual_level():
        args = [x if t is None else fwAD.make_dual(x, t) for x, t in zip(primals, tangents)]
        out = CASES[name].call(*args)
        unpacked = fwAD.unpack_dual(out)
        plain = CASES[name].call(*primals)
    assert unpacked.tangent is None or not unpacked.tangent.numpy().any()
    np.testing.assert_array_equal(np.asarray(unpacked.primal), np.asarray(plain))


# ------------------------------------------------------------- the tutorial's numbers


def fixed(*shape, phase=0.0, dtype=dl.float32):
    """examples/pytorch/forward_ad.py's stand-in for randn: sin(0.7 k + phase)."""
    n = int(np.prod(shape))
    return dl.sin(dl.arange(n, dtype=dtype) * 0.7 + phase).reshape(*shape)


def test_basic_usage_pins_pytorchs_numbers():
    primal, tangent = fixed(10, 10), fixed(10, 10, phase=1.0)
    with fwAD.dual_level():
        dual = fwAD.make_dual(primal, tangent)
        assert fwAD.unpack_dual(dual).tangent is tangent
        assert fwAD.unpack_dual(fwAD.make_dual(primal, tangent.T)).tangent is not tangent
        out = dual ** 2 + fixed(10, 10, phase=2.0) ** 2
        t = fwAD.unpack_dual(out).tangent
        # PyTorch 2.13: 0.00000 1.27770 1.33127 0.07179 | sum 53.57813
        np.testing.assert_allclose(t.numpy().reshape(-1)[:4], [0.0, 1.27770, 1.33127, 0.07179],
                                   atol=5e-6)
        assert t.sum().item() == pytest.approx(53.57813, abs=5e-5)
        assert t.dtype == dl.float32
    assert fwAD.unpack_dual(out).tangent is None
    assert out.sum().item() == pytest.approx(99.71193, abs=5e-5)  # the values stay
    assert repr(out).startswith("tensor([[") and "tangent" not in repr(out)


def test_transposed_tangent_is_copied_into_the_primals_layout():
    primal, tangent = fixed(3, 4), fixed(4, 3, phase=1.0)
    with fwAD.dual_level():
        t = fwAD.unpack_dual(fwAD.make_dual(primal, tangent.T)).tangent
    np.testing.assert_array_equal(t.numpy(), tangent.T.numpy())


def _linear():
    model = dl.nn.Linear(5, 5)
    with dl.no_grad():
        model.weight.copy_(fixed(5, 5, phase=0.3) * 0.4)
        model.bias.copy_(fixed(5, phase=0.9) * 0.1)
    return model


def test_module_parameters_as_dual_tensors_and_functional_call_agree():
    model, x = _linear(), fixed(16, 5, phase=1.7)
    params = dict(model.named_parameters())
    tangents = {name: fixed(*p.shape, phase=2.5) for name, p in params.items()}
    with fwAD.dual_level():
        for name, p in params.items():
            delattr(model, name)
            setattr(model, name, fwAD.make_dual(p, tangents[name]))
        by_attributes = fwAD.unpack_dual(model(x)).tangent
    with fwAD.dual_level():
        duals = {name: fwAD.make_dual(p, tangents[name]) for name, p in params.items()}
        by_call = fwAD.unpack_dual(functional_call(_linear(), duals, x)).tangent
    # PyTorch 2.13: 2.54549 -1.18984 -0.51565 -0.18458 | sum -31.21498
    np.testing.assert_allclose(by_attributes.detach().numpy().reshape(-1)[:4],
                               [2.54549, -1.18984, -0.51565, -0.18458], atol=5e-6)
    assert by_attributes.sum().item() == pytest.approx(-31.21498, abs=5e-5)
    np.testing.assert_allclose(by_call.detach().numpy(), by_attributes.detach().numpy(), rtol=1e-6)
    # the same JVP as the tangent's closed form: x t_W^T + t_b
    want = x.numpy() @ tangents["weight"].numpy().T + tangents["bias"].numpy()
    np.testing.assert_allclose(by_attributes.detach().numpy(), want, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ custom Functions


class Exp(dl.autograd.Function):
    @staticmethod
    def forward(ctx, foo):
        result = dl.exp(foo)
        ctx.result = result
        return result

    @staticmethod
    def jvp(ctx, g):
        out = g * ctx.result
        del ctx.result
        return out


class Cube(dl.autograd.Function):
    @staticmethod
    def forward(x):
        return x ** 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_forward(inputs[0])
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def jvp(ctx, gx):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * gx

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * g


def test_function_jvp_is_used_and_gradchecked():
    primal = fixed(10, 10, dtype=dl.float64).requires_grad_()
    with fwAD.dual_level():
        t = fwAD.unpack_dual(Exp.apply(fwAD.make_dual(primal, fixed(10, 10, phase=1.0)))).tangent
    # PyTorch 2.13: 0.84147 1.88862 1.80958 0.09858 | sum 31.39535
    np.testing.assert_allclose(t.detach().numpy().reshape(-1)[:4],
                               [0.84147, 1.88862, 1.80958, 0.09858], atol=5e-6)
    assert t.sum().item() == pytest.approx(31.39535, abs=5e-5)
    assert dl.autograd.gradcheck(Exp.apply, (primal,), check_forward_ad=True,
                                 check_backward_ad=False, check_undefined_grad=False,
                                 check_batched_grad=False)


def test_setup_context_and_save_for_forward():
    x = dl.tensor([0.5, -1.0, 2.0], dtype=dl.float64, requires_grad=True)
    with fwAD.dual_level():
        out = Cube.apply(fwAD.make_dual(x, dl.tensor([1.0, 2.0, -1.0], dtype=dl.float64)))
        tangent = fwAD.unpack_dual(out).tangent  # (on the tape: x requires grad)
        np.testing.assert_allclose(tangent.detach().numpy(), [0.75, 6.0, -12.0])
    assert dl.autograd.gradcheck(Cube.apply, (x,), check_forward_ad=True)
    y = Cube.apply(x)  # (reverse mode still: setup_context saved for backward too)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.75, 3.0, 12.0])
    # func.jvp and jacfwd reach the same jvp
    _, t = jvp(Cube.apply, (x.detach(),), (dl.ones(3, dtype=dl.float64),))
    np.testing.assert_allclose(t.numpy(), [0.75, 3.0, 12.0])


def test_inputs_without_tangent_get_zeros_and_numbers_none():
    seen = {}

    class Scale(dl.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            return x * y * k

        @staticmethod
        def jvp(ctx, gx, gy, gk):
            seen.update(gy=gy, gk=gk)
            return gx * 2

    with fwAD.dual_level():
        Scale.apply(fwAD.make_dual(dl.ones(2), dl.ones(2)), dl.ones(2), 3.0)
    assert seen["gk"] is None and seen["gy"].tolist() == [0.0, 0.0]


def test_a_wrong_jvp_fails_gradcheck_forward():
    class Wrong(dl.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x ** 2

        @staticmethod
        def jvp(ctx, g):
            return g  # should be 2x·g

    x = dl.tensor([0.5, 1.5], dtype=dl.float64, requires_grad=True)
    with pytest.raises(dl.autograd.GradcheckError, match="forward mode gives"):
        dl.autograd.gradcheck(Wrong.apply, (x,), check_forward_ad=True,
                              check_backward_ad=False)
    with pytest.raises(NotImplementedError, match="check_batched_grad"):
        dl.autograd.gradcheck(Wrong.apply, (x,), check_batched_grad=True)


def test_function_without_jvp_and_bad_jvps_raise_clearly():
    class NoJvp(dl.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    def returning(value):
        class Bad(dl.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def jvp(ctx, g):
                return value(g)
        return Bad

    x, t = dl.tensor([1.0, 2.0, 3.0]), dl.ones(3)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        with pytest.raises(NotImplementedError, match="must implement the jvp function"):
            NoJvp.apply(d)
        with pytest.raises(RuntimeError, match=r"is of size \[3\] while the given forward "
                                               r"gradient is of size \[2\]"):
            returning(lambda g: g[:2]).apply(d)
        with pytest.raises(RuntimeError, match="expected 1 but got 2"):
            returning(lambda g: (g, g)).apply(d)
        with pytest.raises(TypeError, match="must return a Tensor"):
            returning(lambda g: None).apply(d)
    # reverse mode and jacfwd still run a Function without jvp as before
    assert NoJvp.apply(x).tolist() == [2.0, 4.0, 6.0]


# ---------------------------------------------------------------- forward over reverse


def test_forward_over_reverse_gives_the_hessian_vector_product():
    x = fixed(6, dtype=dl.float64).requires_grad_()
    v = fixed(6, phase=1.0, dtype=dl.float64)

    def f(x):
        return (x.sin() * x.exp()).sum()

    with fwAD.dual_level():
        dual = fwAD.make_dual(x, v)
        assert dual.requires_grad and dual.grad_fn is not None
        (g,) = dl.autograd.grad(f(dual), x)
        hvp = fwAD.unpack_dual(g).tangent
    # PyTorch 2.13: 1.68294 3.02017 1.99954 0.12815 | sum 3.92243
    np.testing.assert_allclose(hvp.numpy()[:4], [1.68294, 3.02017, 1.99954, 0.12815],
                               atol=5e-6)
    want = dl.autograd.functional.hvp(f, x.detach(), v)[1]
    np.testing.assert_allclose(hvp.numpy(), want.numpy(), rtol=1e-12)
    # the closed form: H = diag(2 cos(x) e^x)
    np.testing.assert_allclose(hvp.numpy(), 2 * np.cos(x.detach().numpy())
                               * np.exp(x.detach().numpy()) * v.numpy(), rtol=1e-12)


def test_functional_jvp_of_a_partial_and_of_module_parameters():
    def fn(x, y):
        return x ** 2 + y ** 2

    _, t = jvp(functools.partial(fn, y=fixed(10, 10, phase=4.0)), (fixed(10, 10, phase=3.0),),
               (fixed(10, 10, phase=3.5),))
    assert t.sum().item() == pytest.approx(86.65262, abs=5e-5)  # PyTorch 2.13's
    model, x = _linear(), fixed(16, 5, phase=1.7)
    names = [name for name, _ in model.named_parameters()]
    _, t = jvp(lambda *p: functional_call(model, dict(zip(names, p)), (x,)),
               tuple(model.parameters()), tuple(fixed(*p.shape, phase=2.5)
                                                for p in model.parameters()))
    assert t.sum().item() == pytest.approx(-31.21498, abs=5e-5)


# ------------------------------------------------------------------ levels, bad input


def test_levels_do_not_nest_and_end_cleanly():
    assert fwAD.enter_dual_level() == 0
    try:
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            fwAD.enter_dual_level()
        with pytest.raises(RuntimeError, match="invalid level 1"):
            fwAD.exit_dual_level(level=1)
    finally:
        fwAD.exit_dual_level()
    with pytest.raises(RuntimeError, match="no forward AD level is running"):
        fwAD.exit_dual_level()
    with fwAD.dual_level() as level:  # a new level after the last one ended
        assert level == 0
    with pytest.raises(ValueError, match="boom"), fwAD.dual_level():
        raise ValueError("boom")  # (the level ends on an error too)


def test_make_dual_refuses_bad_input_with_pytorchs_messages():
    x = dl.tensor([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="no level exists"):
        fwAD.make_dual(x, x)
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match=r"Tensor is of size \[3\] while the given "
                                               r"forward gradient is of size \[1\]"):
            fwAD.make_dual(x, dl.ones(1))  # (no broadcasting)
        with pytest.raises(ValueError, match="Expected tangent to be floating point"):
            fwAD.make_dual(x, dl.tensor([1, 2, 3]))
        with pytest.raises(ValueError, match="Expected primal to be floating point"):
            fwAD.make_dual(dl.tensor([1, 2]), dl.ones(2))
        with pytest.raises(TypeError, match="the tangent must be a Tensor"):
            fwAD.make_dual(x, [1.0, 1.0, 1.0])
        d = fwAD.make_dual(x, dl.ones(3))
        with pytest.raises(RuntimeError, match="already has a forward gradient"):
            fwAD.make_dual(d, dl.ones(3))
        with pytest.raises(RuntimeError, match="invalid level 5"):
            fwAD.make_dual(x, x, level=5)
        assert fwAD.unpack_dual(x) == (x, None)  # a tensor without a tangent


@pytest.mark.parametrize("values", [[np.inf, -np.inf, 0.0], [np.nan, -0.0, 1.0], []])
def test_edge_values_follow_the_rules(values):
    x = dl.tensor(values, dtype=dl.float64)
    t = dl.ones(len(values), dtype=dl.float64)
    with fwAD.dual_level():
        out = fwAD.unpack_dual(dl.exp(fwAD.make_dual(x, t)))
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(out.tangent.numpy(), np.exp(np.array(values)) * 1.0)
    np.testing.assert_array_equal(out.primal.numpy(), np.exp(np.array(values)))
    assert out.tangent.shape == x.shape


def test_dual_tensor_reads_its_values_and_prints_its_tangent():
    with fwAD.dual_level():
        d = fwAD.make_dual(dl.tensor([1.0, 2.0]), dl.tensor([3.0, 4.0]))
        y = d * 2
        assert repr(y) == "tensor([2., 4.], tangent=tensor([6., 8.]))"
        assert y[1].item() == 4.0 and float(y[0]) == 2.0
        assert y.detach().requires_grad is False
    assert repr(y) == "tensor([2., 4.])" and y.numpy().tolist() == [2.0, 4.0]
    assert (y + 1).tolist() == [3.0, 5.0]


def test_jacfwd_duals_still_refuse_to_drop_their_tangent():
    def f(x):
        return x * x.sum().item()  # item() would drop the tangent: an error, not a wrong 0

    with pytest.raises(TypeError, match="drop its derivative"):
        dl.func.jacfwd(f)(dl.tensor([1.0, 2.0]))


def test_jvp_inside_a_level_nests_by_tags():
    x, v = dl.tensor([0.5, 1.0], dtype=dl.float64), dl.tensor([1.0, 0.0], dtype=dl.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        # d/dx of x·sin(x) along e_0 inside a jvp along v: the level's tangent rides along
        _, inner = jvp(lambda y: y * dl.sin(d), (x,), (dl.ones(2, dtype=dl.float64),))
        t = fwAD.unpack_dual(inner).tangent
    np.testing.assert_allclose(t.numpy(), [np.cos(0.5), 0.0], rtol=1e-12)


def test_grad_of_leaves_inside_a_level_is_pytorchs():
    """A new .grad is a detached copy (no tangent); one accumulated into an existing .grad
    keeps the tangent (PyTorch 2.13 does both); after the level both are plain values."""
    x = dl.tensor([1.0, 2.0, 3.0], dtype=dl.float64, requires_grad=True)
    v = dl.tensor([1.0, 0.0, 1.0], dtype=dl.float64)

    def f(x):
        return (x.sin() * x).sum()

    grad = np.cos([1.0, 2.0, 3.0]) * [1.0, 2.0, 3.0] + np.sin([1.0, 2.0, 3.0])
    hvp = (2 * np.cos([1.0, 2.0, 3.0]) - np.sin([1.0, 2.0, 3.0]) * [1.0, 2.0, 3.0]) * v.numpy()
    with fwAD.dual_level():
        f(fwAD.make_dual(x, v)).backward()
        assert fwAD.unpack_dual(x.grad).tangent is None
        np.testing.assert_allclose(x.grad.numpy(), grad, rtol=1e-12)
        f(fwAD.make_dual(x, v)).backward()  # (was: ndarray += Dual, a TypeError)
        unpacked = fwAD.unpack_dual(x.grad)
        np.testing.assert_allclose(unpacked.primal.numpy(), 2 * grad, rtol=1e-12)
        np.testing.assert_allclose(unpacked.tangent.numpy(), hvp, rtol=1e-12, atol=1e-15)
    f(x).backward()  # after the level: plain accumulation on
    np.testing.assert_allclose(x.grad.numpy(), 3 * grad, rtol=1e-12)
    assert fwAD.unpack_dual(x.grad).tangent is None


def test_unpacked_values_on_the_tape_and_reverse_over_forward_refused():
    x = dl.tensor([1.0, 2.0], dtype=dl.float64, requires_grad=True)
    with fwAD.dual_level():
        y = dl.sin(fwAD.make_dual(x, dl.ones(2, dtype=dl.float64))).sum()
        primal, tangent = fwAD.unpack_dual(y)
        (g,) = dl.autograd.grad(primal, x)  # PyTorch 2.13: cos(x), tangent -sin(x)
        np.testing.assert_allclose(fwAD.unpack_dual(g).primal.numpy(), np.cos([1.0, 2.0]))
        np.testing.assert_allclose(fwAD.unpack_dual(g).tangent.numpy(), -np.sin([1.0, 2.0]))
        assert tangent.item() == pytest.approx(np.cos(1.0) + np.cos(2.0))
        with pytest.raises(RuntimeError, match="reverse over forward"):
            dl.autograd.grad(tangent, x)


def test_jacfwd_and_hessian_use_a_functions_jvp_for_every_direction():
    x = dl.tensor([0.5, -1.0, 2.0], dtype=dl.float64)
    np.testing.assert_allclose(dl.func.jacfwd(Cube.apply)(x).numpy(), np.diag([0.75, 3.0, 12.0]))
    # forward over forward: the jvp's own operations carry the outer tangent
    hessian = dl.func.jacfwd(dl.func.jacfwd(lambda x: Cube.apply(x).sum()))(x)
    np.testing.assert_allclose(hessian.numpy(), np.diag([3.0, -6.0, 12.0]))
    np.testing.assert_allclose(dl.func.hessian(lambda x: Cube.apply(x).sum())(x).numpy(),
                               np.diag([3.0, -6.0, 12.0]))
